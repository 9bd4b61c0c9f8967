/* The etcd cluster of `locksim real --store etcd` (real/etcd_srv.h):
 * start, readiness, the server faults, healing between runs, stop by PID. */
#include "etcd_srv.h"

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
#include "http.h"
#include "spawn.h"

/* One member: its process and what starts it again. */
struct member {
    pid_t pid;      /* 0 = not running (crashed, or never started) */
    int stopped;    /* 1 while SIGSTOPped */
    int port;       /* client port; the peer port is port + 1 */
    int advertised; /* the peer port the others dial: port + 1, or the peer proxy's */
    char id[32];    /* its member ID as etcd writes it (a uint64, in decimal) */
};

/* The cluster of this process (a client process inherits its ports). */
static struct {
    int n;
    struct member m[ETCD_SRV_MAX_MEMBERS];
    char dir[128];     /* the folder of every member's data dir and log */
    char initial[600]; /* --initial-cluster */
    char token[48];    /* --initial-cluster-token: this process's own */
    long start_ms;
} cl;

static long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int etcd_srv_available(void) { return redis_srv_on_path(ETCD_SRV_BIN); }
int etcd_srv_members(void) { return cl.n; }
int etcd_srv_port(int k) { return k >= 0 && k < cl.n ? cl.m[k].port : 0; }
long etcd_srv_start_ms(void) { return cl.start_ms; }

/* Fork and exec member k (state "new" or "existing"); its pid registered
 * with the signal guard before signals are let in again. 0 or -1. */
static int spawn(int k, const char *state) {
    char name[16], data[200], log[200], client[64], peer[64], hb[16], el[16];
    snprintf(name, sizeof name, "s%d", k + 1);
    snprintf(data, sizeof data, "%s/%s", cl.dir, name);
    snprintf(log, sizeof log, "%s/%s.log", cl.dir, name);
    snprintf(client, sizeof client, "http://127.0.0.1:%d", cl.m[k].port);
    char adv[64];
    snprintf(peer, sizeof peer, "http://127.0.0.1:%d", cl.m[k].port + 1);
    snprintf(adv, sizeof adv, "http://127.0.0.1:%d", cl.m[k].advertised);
    snprintf(hb, sizeof hb, "%d", ETCD_SRV_HEARTBEAT_MS);
    snprintf(el, sizeof el, "%d", ETCD_SRV_ELECTION_MS);
    sigset_t old;
    redis_srv_block_signals(&old);
    pid_t pid = fork();
    if (pid == 0) {
        spawn_child(&old, NULL);
        execlp(ETCD_SRV_BIN, ETCD_SRV_BIN, "--name", name, "--data-dir", data, "--listen-client-urls", client,
               "--advertise-client-urls", client, "--listen-peer-urls", peer, "--initial-advertise-peer-urls", adv,
               "--initial-cluster", cl.initial, "--initial-cluster-token", cl.token, "--initial-cluster-state", state,
               "--heartbeat-interval", hb, "--election-timeout", el, "--logger", "zap", "--log-outputs", log,
               (char *)NULL);
        _exit(127);
    }
    if (pid > 0) redis_srv_guard_child(pid);
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (pid < 0) return -1;
    etcd_peer_member(k, pid);
    cl.m[k].pid = pid;
    cl.m[k].stopped = 0;
    return 0;
}

/* Member k's status: its ID into id and its leader's into leader. 0 when
 * it answered naming a leader. */
static int status(int k, char *id, size_t idn, char *leader, size_t ln) {
    struct http_req q;
    if (!cl.m[k].pid || cl.m[k].stopped) return -1;
    if (http_call(&q, cl.m[k].port, "/v3/maintenance/status", "{}") != 0 || http_status(&q) != 200) return -1;
    if (json_field(q.buf, "member_id", id, idn) != 0 || json_field(q.buf, "leader", leader, ln) != 0) return -1;
    return strcmp(leader, "0") == 0 ? -1 : 0;
}

int etcd_srv_leader(void) {
    char id[32], leader[32];
    for (int k = 0; k < cl.n; k++) {
        if (status(k, id, sizeof id, leader, sizeof leader) != 0) continue;
        for (int j = 0; j < cl.n; j++)
            if (strcmp(cl.m[j].id, leader) == 0) return j;
    }
    return -1;
}

/* 1 when every member answers, naming the same leader (IDs learnt). */
static int all_ready(void) {
    char first[32] = "";
    for (int k = 0; k < cl.n; k++) {
        char id[32], leader[32];
        if (status(k, id, sizeof id, leader, sizeof leader) != 0) return 0;
        snprintf(cl.m[k].id, sizeof cl.m[k].id, "%s", id);
        if (k == 0) snprintf(first, sizeof first, "%s", leader);
        else if (strcmp(first, leader) != 0) return 0;
    }
    return 1;
}

/* Wait up to ms for all_ready; 0 when it came. Ends early (-1) when a
 * member process has died by itself. */
static int wait_ready(long ms) {
    long end = now_ms() + ms;
    while (now_ms() < end) {
        if (all_ready()) return 0;
        for (int k = 0; k < cl.n; k++) {
            int st;
            if (cl.m[k].pid && waitpid(cl.m[k].pid, &st, WNOHANG) == cl.m[k].pid) {
                redis_srv_guard_forget(cl.m[k].pid);
                cl.m[k].pid = 0;
                return -1;
            }
        }
        spawn_sleep_ms(10);
    }
    return -1;
}

int etcd_srv_start(struct redis_srv *s, int members, char *err, size_t errlen) {
    return etcd_srv_start_cut(s, members, 0, err, errlen);
}

void etcd_srv_cut(int a, int b, int cut) {
    if (a >= 0 && a < cl.n && b >= 0 && b < cl.n) etcd_peer_cut(a, b, cut);
}

int etcd_srv_start_cut(struct redis_srv *s, int members, int peer_proxy, char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    memset(&cl, 0, sizeof cl);
    if (!etcd_srv_available()) {
        snprintf(err, errlen,
                 "etcd is not installed: the etcd backend starts its own (as root: apt-get install -y "
                 "etcd-server etcd-client, or make reality, which installs them)");
        return LSIM_EUNAVAILABLE;
    }
    if (members < 1 || members > ETCD_SRV_MAX_MEMBERS) members = members < 1 ? 1 : ETCD_SRV_MAX_MEMBERS;
    for (int p = ETCD_SRV_PORT; p < ETCD_SRV_PORT + ETCD_SRV_PORTS && cl.n < members; p += 2)
        if (!redis_srv_port_taken(p) && !redis_srv_port_taken(p + 1)) cl.m[cl.n++].port = p;
    if (cl.n < members) {
        snprintf(err, errlen, "ports %d to %d on 127.0.0.1 have no room for %d etcd members", ETCD_SRV_PORT,
                 ETCD_SRV_PORT + ETCD_SRV_PORTS - 1, members);
        cl.n = 0;
        return LSIM_EUNAVAILABLE;
    }
    int real_peer[ETCD_SRV_MAX_MEMBERS], adv[ETCD_SRV_MAX_MEMBERS];
    for (int k = 0; k < cl.n; k++) real_peer[k] = adv[k] = cl.m[k].port + 1;
    if (peer_proxy && etcd_peer_start(cl.n, real_peer, adv, err, errlen) != 0) {
        cl.n = 0;
        return LSIM_EINTERNAL;
    }
    size_t len = 0;
    for (int k = 0; k < cl.n; k++) {
        cl.m[k].advertised = adv[k];
        len += (size_t)snprintf(cl.initial + len, sizeof cl.initial - len, "%ss%d=http://127.0.0.1:%d", k ? "," : "",
                                k + 1, adv[k]);
    }
    snprintf(cl.token, sizeof cl.token, "locksim-%ld-%d", (long)getpid(), cl.m[0].port);
    sigset_t old;
    int rc = spawn_tmpdir(s->dir, sizeof s->dir, "locksim-etcd", &old, err, errlen);
    if (rc) {
        cl.n = 0;
        etcd_peer_stop();
        return rc;
    }
    redis_srv_guard_server(0, s->dir, 1);
    sigprocmask(SIG_SETMASK, &old, NULL);
    snprintf(cl.dir, sizeof cl.dir, "%s", s->dir);
    long t0 = now_ms();
    for (int k = 0; k < cl.n; k++)
        if (spawn(k, "new") != 0) {
            snprintf(err, errlen, "cannot start etcd: fork: %s", strerror(errno));
            etcd_srv_stop(s);
            return LSIM_EINTERNAL;
        }
    s->pid = cl.m[0].pid;
    s->port = cl.m[0].port;
    if (wait_ready(ETCD_SRV_READY_MS) == 0) {
        cl.start_ms = now_ms() - t0;
        return 0;
    }
    snprintf(err, errlen, "etcd's %d member%s did not answer with a leader on 127.0.0.1:%d.. within %d s (logs: %s)",
             cl.n, cl.n == 1 ? "" : "s", cl.m[0].port, ETCD_SRV_READY_MS / 1000, cl.dir);
    etcd_srv_stop(s);
    return LSIM_EUNAVAILABLE;
}

void etcd_srv_stop(struct redis_srv *s) {
    /* every member told at once (a stopped one resumed first, or its
     * SIGTERM would wait), then each reaped by the one kill helper */
    for (int k = 0; k < cl.n; k++)
        if (cl.m[k].pid) {
            kill(cl.m[k].pid, SIGCONT);
            kill(cl.m[k].pid, SIGTERM);
        }
    for (int k = 0; k < cl.n; k++)
        if (cl.m[k].pid) {
            struct redis_srv one = {.pid = cl.m[k].pid, .port = cl.m[k].port};
            redis_srv_kill(&one, spawn_remove_tree);
            redis_srv_guard_forget(cl.m[k].pid);
            cl.m[k].pid = 0;
        }
    s->pid = 0;
    etcd_peer_stop();
    redis_srv_kill(s, spawn_remove_tree); /* the folder (a tree), and the guard cleared */
    cl.n = 0;
}

int etcd_srv_pause(int k) {
    if (k < 0 || k >= cl.n || !cl.m[k].pid || cl.m[k].stopped) return -1;
    kill(cl.m[k].pid, SIGSTOP);
    int st;
    waitpid(cl.m[k].pid, &st, WUNTRACED); /* a real stop, confirmed */
    cl.m[k].stopped = 1;
    return 0;
}

int etcd_srv_resume(int k) {
    if (k < 0 || k >= cl.n || !cl.m[k].pid || !cl.m[k].stopped) return -1;
    kill(cl.m[k].pid, SIGCONT);
    cl.m[k].stopped = 0;
    return 0;
}

int etcd_srv_crash(int k) {
    if (k < 0 || k >= cl.n || !cl.m[k].pid) return -1;
    kill(cl.m[k].pid, SIGKILL);
    waitpid(cl.m[k].pid, NULL, 0);
    redis_srv_guard_forget(cl.m[k].pid);
    cl.m[k].pid = 0;
    cl.m[k].stopped = 0;
    return 0;
}

int etcd_srv_restart(int k) {
    if (k < 0 || k >= cl.n || cl.m[k].pid) return -1;
    return spawn(k, "existing");
}

/* MoveLeader (etcd 3.4's /v3/maintenance/transfer-leadership), asked of
 * the leader now. 0 when it was taken. */
static int move_leader(int from, int to) {
    char body[80];
    struct http_req q;
    snprintf(body, sizeof body, "{\"targetID\":\"%s\"}", cl.m[to].id);
    return http_call(&q, cl.m[from].port, "/v3/maintenance/transfer-leadership", body) == 0 && http_status(&q) == 200
                   ? 0
                   : -1;
}

int etcd_srv_heal(int lead, char *err, size_t errlen) {
    for (int a = 0; a < cl.n; a++) /* no partition left between members */
        for (int b = a + 1; b < cl.n; b++) etcd_peer_cut(a, b, 0);
    for (int k = 0; k < cl.n; k++) {
        int st;
        if (cl.m[k].pid && waitpid(cl.m[k].pid, &st, WNOHANG) == cl.m[k].pid) { /* died by itself */
            redis_srv_guard_forget(cl.m[k].pid);
            cl.m[k].pid = 0;
        }
        if (cl.m[k].stopped) etcd_srv_resume(k);
        if (!cl.m[k].pid && etcd_srv_restart(k) != 0) {
            snprintf(err, errlen, "cannot start etcd member s%d again: %s", k + 1, strerror(errno));
            return -1;
        }
    }
    for (int tries = 0; tries < 5; tries++) {
        if (wait_ready(ETCD_SRV_READY_MS) != 0) break;
        int now = etcd_srv_leader();
        if (lead < 0 || lead >= cl.n || now == lead) return 0;
        if (now >= 0) move_leader(now, lead);
        spawn_sleep_ms(ETCD_SRV_ELECTION_MS / 5);
    }
    snprintf(err, errlen, "etcd's %d members did not agree on a leader%s within %d s (logs: %s)", cl.n,
             lead >= 0 && lead < cl.n ? " (or would not hand it over)" : "", ETCD_SRV_READY_MS / 1000, cl.dir);
    return -1;
}
