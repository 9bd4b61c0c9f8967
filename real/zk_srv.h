/* A ZooKeeper of locksim's own for `locksim real --store zookeeper`: one
 * standalone server (Debian package zookeeper, 3.8) started as the research
 * does (../shared/research/real-services.md, section 7 and pitfall 12):
 * `java ... org.apache.zookeeper.server.ZooKeeperServerMain zoo.cfg`, not
 * zkServer.sh (it wants /etc/zookeeper and /var/log/zookeeper), with
 * clientPortAddress=127.0.0.1, the AdminServer off (it would take :8080),
 * forceSync=no and its dataDir in a temporary folder on tmpfs (in
 * $LOCKSIM_REAL_TMP when set, else /dev/shm, else /tmp), the scenario's
 * tickTime at the run's scale, min/maxSessionTimeout 2 and 20 ticks (the
 * server's defaults, said out loud). Ready when it answers "ruok" with
 * "imok" and a session can be opened (it says imok before it runs);
 * stopped by PID, the folder removed, on every exit path, as
 * redis_srv.h's server is (its signal guard covers this one too). */
#ifndef LOCKSIM_ZK_SRV_H
#define LOCKSIM_ZK_SRV_H

#include <stddef.h>

#include "redis_srv.h"

#define ZK_SRV_PORT 32181 /* the first port tried; the next 15 if it is taken */
#define ZK_SRV_JAR "/usr/share/java/zookeeper.jar"
#define ZK_SRV_READY_MS 30000 /* a JVM start took 0.5 to 2.6 s here */

/* 1 when java and the zookeeper jar are installed. */
int zk_srv_available(void);
/* Start a server with tickTime tick_ms and wait until it is ready (at most
 * ZK_SRV_READY_MS). 0, or an LSIM code with a sentence in err;
 * nothing is left running or on disk after a failure. */
int zk_srv_start(struct redis_srv *s, int tick_ms, char *err, size_t errlen);
/* Stop it (SIGTERM, then SIGKILL after 2 s), reap it, remove its folder. */
void zk_srv_stop(struct redis_srv *s);

#endif
