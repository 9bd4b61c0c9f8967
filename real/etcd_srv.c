/* The etcd of `locksim real --store etcd` (real/etcd_srv.h). */
#include "etcd_srv.h"

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
#include "http.h"

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

int etcd_srv_available(void) { return redis_srv_on_path(ETCD_SRV_BIN); }

/* Remove the folder (etcd's data dir is a tree) by running rm -rf, as the
 * signal guard does. */
static void remove_tree(const char *dir) {
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/rm", "rm", "-rf", dir, (char *)NULL);
        _exit(127);
    }
    if (pid > 0) waitpid(pid, NULL, 0);
}

int etcd_srv_start(struct redis_srv *s, char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    if (!etcd_srv_available()) {
        snprintf(err, errlen,
                 "etcd is not installed: the etcd backend starts its own (as root: apt-get install -y "
                 "etcd-server etcd-client, or make reality, which installs them)");
        return LSIM_EUNAVAILABLE;
    }
    for (int p = ETCD_SRV_PORT; p < ETCD_SRV_PORT + 16; p += 2)
        if (!redis_srv_port_taken(p) && !redis_srv_port_taken(p + 1)) {
            s->port = p;
            break;
        }
    if (!s->port) {
        snprintf(err, errlen, "ports %d to %d on 127.0.0.1 are all taken: no room for locksim's etcd", ETCD_SRV_PORT,
                 ETCD_SRV_PORT + 15);
        return LSIM_EUNAVAILABLE;
    }
    const char *base = getenv("LOCKSIM_REAL_TMP");
    if (!base || !base[0] || strlen(base) > 80) base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(s->dir, sizeof s->dir, "%s/locksim-etcd-XXXXXX", base);
    sigset_t old;
    redis_srv_block_signals(&old);
    if (!mkdtemp(s->dir)) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        snprintf(err, errlen, "cannot make a temporary folder in %s: %s", base, strerror(errno));
        s->dir[0] = 0;
        return LSIM_EINTERNAL;
    }
    redis_srv_guard_server(0, s->dir, 1);
    char data[200], log[200], client[64], peer[64], cluster[96], hb[16], el[16];
    snprintf(data, sizeof data, "%s/data", s->dir);
    snprintf(log, sizeof log, "%s/etcd.log", s->dir);
    snprintf(client, sizeof client, "http://127.0.0.1:%d", s->port);
    snprintf(peer, sizeof peer, "http://127.0.0.1:%d", s->port + 1);
    snprintf(cluster, sizeof cluster, "locksim=%s", peer);
    snprintf(hb, sizeof hb, "%d", ETCD_SRV_HEARTBEAT_MS);
    snprintf(el, sizeof el, "%d", ETCD_SRV_ELECTION_MS);
    pid_t pid = fork();
    if (pid == 0) {
        setsid(); /* its own session and process group: a Ctrl-C reaches locksim only */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        sigprocmask(SIG_SETMASK, &old, NULL);
        int nul = open("/dev/null", O_RDWR);
        if (nul >= 0) {
            dup2(nul, 0);
            dup2(nul, 1);
            dup2(nul, 2);
        }
        execlp(ETCD_SRV_BIN, ETCD_SRV_BIN, "--name", "locksim", "--data-dir", data, "--listen-client-urls", client,
               "--advertise-client-urls", client, "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
               "--initial-cluster", cluster, "--initial-cluster-state", "new", "--heartbeat-interval", hb,
               "--election-timeout", el, "--logger", "zap", "--log-outputs", log, (char *)NULL);
        _exit(127);
    }
    if (pid > 0) redis_srv_guard_server(pid, s->dir, 1);
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (pid < 0) {
        snprintf(err, errlen, "cannot start etcd: fork: %s", strerror(errno));
        etcd_srv_stop(s);
        return LSIM_EINTERNAL;
    }
    s->pid = pid;
    /* Ready when it answers a status request as an elected member does. */
    for (int i = 0; i < 1000; i++) {
        struct http_req q;
        if (http_call(&q, s->port, "/v3/maintenance/status", "{}") == 0 && http_status(&q) == 200 &&
            json_field_int(q.buf, "leader", 0) != 0)
            return 0;
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            s->pid = 0;
            redis_srv_guard_server(0, s->dir, 1);
            break;
        }
        sleep_ms(10);
    }
    snprintf(err, errlen, "etcd did not answer on 127.0.0.1:%d within 10 s (its log: %s)", s->port, log);
    etcd_srv_stop(s);
    return LSIM_EUNAVAILABLE;
}

void etcd_srv_stop(struct redis_srv *s) { redis_srv_kill(s, remove_tree); }
