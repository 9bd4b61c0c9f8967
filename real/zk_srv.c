/* The ZooKeeper of `locksim real --store zookeeper` (real/zk_srv.h). */
#include "zk_srv.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "zk.h"

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

int zk_srv_available(void) { return redis_srv_on_path("java") && access(ZK_SRV_JAR, R_OK) == 0; }

/* The folder holds a tree (dataDir/version-2/...): rm -rf, as the signal
 * guard does. */
static void remove_tree(const char *dir) {
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/rm", "rm", "-rf", dir, (char *)NULL);
        _exit(127);
    }
    if (pid > 0) waitpid(pid, NULL, 0);
}

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
    const char *base = getenv("LOCKSIM_REAL_TMP");
    if (!base || !base[0] || strlen(base) > 80) base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(s->dir, sizeof s->dir, "%s/locksim-zk-XXXXXX", base);
    sigset_t old;
    redis_srv_block_signals(&old);
    if (!mkdtemp(s->dir)) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        snprintf(err, errlen, "cannot make a temporary folder in %s: %s", base, strerror(errno));
        s->dir[0] = 0;
        return LSIM_EINTERNAL;
    }
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
        setsid(); /* its own session and process group: a Ctrl-C reaches locksim only */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        sigprocmask(SIG_SETMASK, &old, NULL);
        int nul = open("/dev/null", O_RDONLY), out = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (nul >= 0) dup2(nul, 0);
        if (out >= 0) {
            dup2(out, 1);
            dup2(out, 2);
        }
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
    for (int i = 0; i < ZK_SRV_READY_MS / 10; i++) {
        if (zk_ruok(s->port) && zk_session_ok(s->port)) return 0;
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            s->pid = 0;
            redis_srv_guard_server(0, s->dir, 1);
            break;
        }
        sleep_ms(10);
    }
    snprintf(err, errlen, "zookeeper did not open a session on 127.0.0.1:%d within %d s", s->port,
             ZK_SRV_READY_MS / 1000);
    zk_srv_stop(s);
    return LSIM_EUNAVAILABLE;
}

void zk_srv_stop(struct redis_srv *s) { redis_srv_kill(s, remove_tree); }
