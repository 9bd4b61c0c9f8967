/* The ZooKeeper of `locksim real --store zookeeper` (real/zk_srv.h). */
#include "zk_srv.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "spawn.h"
#include "zk.h"

int zk_srv_available(void) { return redis_srv_on_path("java") && access(ZK_SRV_JAR, R_OK) == 0; }

/* 1 when the server on *(const int *)port is ready and opens a session. */
static int ready(const void *port) { return zk_ruok(*(const int *)port) && zk_session_ok(*(const int *)port); }

int zk_srv_start(struct redis_srv *s, int tick_ms, char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    if (!zk_srv_available()) {
        snprintf(err, errlen,
                 "zookeeper is not installed: the zookeeper backend starts its own (as root: apt-get install -y "
                 "--no-install-recommends zookeeper, or make reality, which installs it)");
        return LSIM_EUNAVAILABLE;
    }
    for (int p = ZK_SRV_PORT; p < ZK_SRV_PORT + 16; p++)
        if (!redis_srv_port_taken(p)) {
            s->port = p;
            break;
        }
    if (!s->port) {
        snprintf(err, errlen, "ports %d to %d on 127.0.0.1 are all taken: no room for locksim's zookeeper", ZK_SRV_PORT,
                 ZK_SRV_PORT + 15);
        return LSIM_EUNAVAILABLE;
    }
    sigset_t old;
    int rc = spawn_tmpdir(s->dir, sizeof s->dir, "locksim-zk", &old, err, errlen);
    if (rc) return rc;
    redis_srv_guard_server(0, s->dir, 1);
    char cfg[200], log[200];
    snprintf(cfg, sizeof cfg, "%s/zoo.cfg", s->dir);
    snprintf(log, sizeof log, "%s/zookeeper.log", s->dir);
    FILE *f = fopen(cfg, "w");
    if (f) {
        fprintf(f,
                "tickTime=%d\ndataDir=%s/data\nclientPort=%d\nclientPortAddress=127.0.0.1\n"
                "admin.enableServer=false\n4lw.commands.whitelist=ruok\nforceSync=no\n"
                "minSessionTimeout=%d\nmaxSessionTimeout=%d\n",
                tick_ms, s->dir, s->port, 2 * tick_ms, 20 * tick_ms);
        if (fclose(f) != 0) f = NULL;
    }
    if (!f) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        snprintf(err, errlen, "cannot write %s: %s", cfg, strerror(errno));
        zk_srv_stop(s);
        return LSIM_EINTERNAL;
    }
    pid_t pid = fork();
    if (pid == 0) {
        spawn_child(&old, log);
        /* A small heap, the serial collector and the C1 compiler only: a
         * quicker start and less CPU on a shared machine. */
        execlp("java", "java", "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
               "-Dzookeeper.admin.enableServer=false", "-cp", "/etc/zookeeper/conf:" ZK_SRV_JAR,
               "org.apache.zookeeper.server.ZooKeeperServerMain", cfg, (char *)NULL);
        _exit(127);
    }
    if (pid > 0) redis_srv_guard_server(pid, s->dir, 1);
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (pid < 0) {
        snprintf(err, errlen, "cannot start zookeeper: fork: %s", strerror(errno));
        zk_srv_stop(s);
        return LSIM_EINTERNAL;
    }
    s->pid = pid;
    int up = spawn_wait(pid, ZK_SRV_READY_MS, 10, ready, &s->port);
    if (up > 0) return 0;
    if (up < 0) {
        s->pid = 0;
        redis_srv_guard_server(0, s->dir, 1);
    }
    snprintf(err, errlen, "zookeeper did not open a session on 127.0.0.1:%d within %d s", s->port,
             ZK_SRV_READY_MS / 1000);
    zk_srv_stop(s);
    return LSIM_EUNAVAILABLE;
}

void zk_srv_stop(struct redis_srv *s) { redis_srv_kill(s, spawn_remove_tree); /* dataDir/version-2/...: a tree */ }
