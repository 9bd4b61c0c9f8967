/* An etcd of locksim's own for `locksim real --store etcd`: one member
 * started from the Debian package's binary (etcd-server, etcd 3.4) on fixed
 * high loopback ports, its data dir in a temporary folder on tmpfs (etcd
 * 3.4 has no --unsafe-no-fsync; in $LOCKSIM_REAL_TMP when set, else
 * /dev/shm, else /tmp), a 50 ms heartbeat and a 500 ms election timeout so
 * that a lease of 1 s is granted as asked (etcd's minimum lease TTL is
 * 1.5 election timeouts, rounded up to whole seconds: 2 s with the
 * defaults). Stopped by PID, the folder removed, on every exit path, as
 * redis_srv.h's server is (its signal guard covers this one too). */
#ifndef LOCKSIM_ETCD_SRV_H
#define LOCKSIM_ETCD_SRV_H

#include <stddef.h>

#include "redis_srv.h"

#define ETCD_SRV_PORT 22379 /* client port; peer port + 1; the next 7 pairs if taken */
#define ETCD_SRV_BIN "etcd"
#define ETCD_SRV_HEARTBEAT_MS 50
#define ETCD_SRV_ELECTION_MS 500

/* 1 when etcd is on PATH. */
int etcd_srv_available(void);
/* Start a member and wait until it answers (at most 10 s). 0, or an LSIM
 * code with a sentence in err; nothing is left running or on disk after a
 * failure. */
int etcd_srv_start(struct redis_srv *s, char *err, size_t errlen);
/* Stop it (SIGTERM, then SIGKILL after 2 s), reap it, remove its folder. */
void etcd_srv_stop(struct redis_srv *s);

#endif
