/* The driver of `locksim real` (real/real.h), for every store: it sets up the store, forks
 * one process per client (client.c), does the scenario's timed faults for
 * real (SIGSTOP, SIGCONT, SIGKILL), gathers the records and hands them to
 * the recording (record.c). What is refused is decided in refuse.c. */
#include "real_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "redis_nodes.h"
#include "resp.h"

/* Read the records waiting in fd: 1 when every writer has closed it (end
 * of file: no client is left to write), 0 when it is empty for now, -1
 * when out of memory. */
static int drain(int fd, struct recs *l) {
    struct rec r;
    for (;;) {
        ssize_t got = read(fd, &r, sizeof r);
        if (got == (ssize_t)sizeof r) {
            if (real_recs_add(l, &r) != 0) return -1;
            continue;
        }
        if (got < 0 && errno == EINTR) continue;
        return got == 0 ? 1 : 0;
    }
}

/* SIGCHLD's handler: it only ends the driver's pselect (a client stopped
 * itself at a point, or died), and the loop reaps. */
static void on_child(int sig) { (void)sig; }

/* Append x to v (n used of cap); -1 when out of memory (v freed). */
static int push_ns(sim_ns **v, size_t *n, size_t *cap, sim_ns x) {
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 16;
        sim_ns *w = realloc(*v, c * sizeof *w);
        if (!w) {
            free(*v);
            *v = NULL;
            return -1;
        }
        *v = w;
        *cap = c;
    }
    (*v)[(*n)++] = x;
    return 0;
}

long real_sim_waits(const struct trace *sim, int node, sim_ns **out) {
    size_t n = 0, cap = 0;
    sim_ns *v = NULL, denied = -1;
    for (size_t i = 0; i < sim->len; i++) {
        const struct trace_event *e = &sim->ev[i];
        if (e->node != node) continue;
        if (e->kind == TRACE_ACQUIRE_DENIED) {
            denied = e->t;
        } else if (e->kind == TRACE_ACQUIRE_TRY && e->a > 1 && denied >= 0) {
            if (push_ns(&v, &n, &cap, e->t - denied) != 0) return -1;
            denied = -1;
        } else if (e->kind == TRACE_ACQUIRE_FAILED) {
            denied = -1;
        }
    }
    *out = v;
    return (long)n;
}

long real_sim_tries(const struct trace *sim, int node, sim_ns **out) {
    size_t n = 0, cap = 0;
    sim_ns *v = NULL;
    for (size_t i = 0; i < sim->len; i++) {
        const struct trace_event *e = &sim->ev[i];
        if (e->node != node || e->kind != TRACE_ACQUIRE_TRY) continue;
        if (push_ns(&v, &n, &cap, e->t) != 0) return -1;
    }
    *out = v;
    return (long)n;
}

void real_child_init(const sigset_t *old) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* Sleeps end on time: the default 50 us of timer slack per sleep
     * would add up over a client's many short scaled waits. */
    prctl(PR_SET_TIMERSLACK, 1UL);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    sigprocmask(SIG_SETMASK, old, NULL);
}

/* Per-client process state the driver follows. */
struct proc {
    pid_t pid;
    int stopped; /* 1 while SIGSTOPped */
    int dead;
    int64_t resume_at; /* real ns of the planned SIGCONT, 0 = none */
    int64_t stopped_at;
};

static void driver_event(struct recs *l, int64_t t, int kind, int node, int64_t a) {
    struct rec r = {t, kind, node, TRACE_NO_NODE, 0, 0, a, 0};
    real_recs_add(l, &r);
}

static void resume(struct proc *p, int idx, int64_t t, double scale, struct recs *l) {
    kill(p->pid, SIGCONT);
    p->stopped = 0;
    p->resume_at = 0;
    driver_event(l, t, TRACE_RESUME, idx, (int64_t)((double)(t - p->stopped_at) / scale));
}

/* The lock servers' processes (etcd's members), by their order among the
 * simulated run's server nodes: the node each is, what the driver stopped
 * and until when, and which member a named server's faults go to (a pause
 * or crash of the simulated leader went to the real one). */
#define REAL_MAX_SERVERS 16
struct servers {
    int n, node[REAL_MAX_SERVERS], map[REAL_MAX_SERVERS];
    struct proc p[REAL_MAX_SERVERS];
};

/* A timed fault on a lock server's process, done by the store
 * (ops->member_fault: etcd's members). */
static void member_fault(const struct real_ops *ops, const struct trace *sim, struct servers *sv,
                         const struct scn_fault *f, int64_t t0, double scale, struct recs *l) {
    int named = -1;
    for (int k = 0; k < sv->n; k++)
        if (strcmp(sim->nodes[sv->node[k]].name, f->node) == 0) named = k;
    if (named < 0 || !ops->member_fault) return;
    int k = sv->map[named];
    struct proc *p = &sv->p[k];
    int64_t t = now_ns() - t0; /* when it was asked for: a SIGKILL's reaping takes a while */
    if (f->kind == SCN_FAULT_PAUSE || f->kind == SCN_FAULT_CRASH) {
        int m = ops->member_fault(sim, k, f->kind, f->at_ns);
        if (m < 0 || m >= sv->n) return;
        if (m != k) { /* the real leader stands for the simulated one from now on */
            int other = -1;
            for (int j = 0; j < sv->n; j++)
                if (sv->map[j] == m) other = j;
            sv->map[named] = m;
            if (other >= 0) sv->map[other] = k;
            p = &sv->p[m];
        }
        if (f->kind == SCN_FAULT_PAUSE) {
            p->stopped = 1;
            p->stopped_at = t;
            p->resume_at = f->dur_ns ? t + (int64_t)((double)f->dur_ns * scale) : -1;
            driver_event(l, t, TRACE_PAUSE, sv->node[m], f->dur_ns);
        } else {
            p->stopped = 0;
            p->dead = 1;
            driver_event(l, t, TRACE_CRASH, sv->node[m], 0);
        }
    } else if (f->kind == SCN_FAULT_RESUME && p->stopped && ops->member_fault(sim, k, f->kind, f->at_ns) >= 0) {
        p->stopped = 0;
        p->resume_at = 0;
        driver_event(l, t, TRACE_RESUME, sv->node[k], (int64_t)((double)(t - p->stopped_at) / scale));
    } else if (f->kind == SCN_FAULT_RESTART && p->dead && ops->member_fault(sim, k, f->kind, f->at_ns) >= 0) {
        p->dead = 0;
        driver_event(l, t, TRACE_RESTART, sv->node[k], 0);
    }
}

/* The driver's next due instant after real time t, in real ns since the
 * start: the run's end, a planned resume of a client or a server, the
 * next fault due by time or a timed fault's end (settled), the end of a
 * server clock's slew (clk: one per server of sv). */
static int64_t next_due(const struct scenario *s, const char *done, const struct proc *ps, const struct servers *sv,
                        const struct real_clock *clk, double scale, int64_t t, int64_t end) {
    int64_t due = end;
    for (int k = 0; k < s->nfaults; k++) {
        int64_t over = (int64_t)((double)(s->faults[k].at_ns + s->faults[k].dur_ns) * scale);
        if (s->faults[k].point == SCN_POINT_NONE && over > t && over < due) due = over;
    }
    for (int i = 0; i < s->nclients; i++)
        if (!ps[i].dead && ps[i].stopped && ps[i].resume_at > 0 && ps[i].resume_at < due) due = ps[i].resume_at;
    for (int k = 0; k < sv->n; k++)
        if (sv->p[k].stopped && sv->p[k].resume_at > 0 && sv->p[k].resume_at < due) due = sv->p[k].resume_at;
    for (int k = 0; k < s->nfaults; k++) {
        int64_t at = (int64_t)((double)s->faults[k].at_ns * scale);
        if (!done[k] && s->faults[k].point == SCN_POINT_NONE && at < due) due = at;
    }
    for (int k = 0; k < sv->n; k++)
        if (clk[k].slew_end && clk[k].slew_end < due) due = clk[k].slew_end;
    return due;
}

static void reap(struct proc *ps, int n, int64_t t0) {
    int st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, WNOHANG | WUNTRACED)) > 0) {
        for (int i = 0; i < n; i++) {
            if (ps[i].pid != pid) continue;
            if (WIFSTOPPED(st) && !ps[i].stopped) { /* it stopped itself at a point */
                ps[i].stopped = 1;
                ps[i].stopped_at = now_ns() - t0;
            } else if (WIFEXITED(st) || WIFSIGNALED(st)) {
                ps[i].dead = 1;
                redis_srv_guard_forget(pid);
            }
        }
    }
}

/* A run plays at a real-time priority when it may (as root): SCHED_RR at
 * REAL_RT_PRIORITY for the driver and, inherited through fork, its clients
 * and the proxy, so other work on a busy machine does not delay a due fault
 * or a client's next step (with two busy loops beside it, a timed pause or
 * resume came up to 12 ms of real time late at the normal priority, at
 * most 0.09 ms at this one: docs/reality.md, finding 24). This is a way of
 * measuring a real system on a shared machine, not a change to what the
 * run plays. The kernel's RT throttling (sched_rt_runtime_us, 95% of each
 * second by default) leaves the machine its share should one of them
 * spin. The lock servers join them for the run (sched_servers: redis's
 * and ZooKeeper's; etcd's members keep the normal priority). LOCKSIM_REAL_RT=0 turns
 * it off. The previous policy (old_param its parameters), or -1 when
 * nothing was changed. */
#define REAL_RT_PRIORITY 10
static int rt_begin(struct sched_param *old_param) {
    const char *env = getenv("LOCKSIM_REAL_RT");
    if (env && strcmp(env, "0") == 0) return -1;
    int old = sched_getscheduler(0);
    if (old < 0 || sched_getparam(0, old_param) != 0) return -1;
    struct sched_param p;
    memset(&p, 0, sizeof p);
    p.sched_priority = REAL_RT_PRIORITY;
    return sched_setscheduler(0, SCHED_RR, &p) == 0 ? old : -1;
}

/* Every thread of process pid (/proc/PID/task) to policy at param: the
 * lock servers' during a run (a JVM's, etcd's and redis-server's threads
 * each have their own policy). */
static void sched_threads(pid_t pid, int policy, const struct sched_param *param) {
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
    DIR *d = pid > 0 ? opendir(dir) : NULL;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        if (e->d_name[0] >= '0' && e->d_name[0] <= '9') sched_setscheduler((pid_t)atoi(e->d_name), policy, param);
    if (d) closedir(d);
}

/* The lock servers locksim started (srv's process, or its nodes') to the
 * run's real-time priority (on = 1) or back to the normal one (on = 0):
 * a client's request waits for its server as much as for itself; redis
 * at the normal priority answered A's first SET up to 3.4 ms real late
 * beside two busy loops (80 ms of scenario time at S = 0.0417). */
static void sched_servers(const struct redis_srv *srv, int on) {
    struct sched_param p;
    memset(&p, 0, sizeof p);
    p.sched_priority = on ? REAL_RT_PRIORITY : 0;
    int policy = on ? SCHED_RR : SCHED_OTHER;
    sched_threads(srv->pid, policy, &p);
    for (int i = 0; srv->nodes && i < srv->nodes->n; i++) sched_threads(srv->nodes->pid[i], policy, &p);
}

/* 1 when nothing more can happen in the run at real time t: every client
 * process has ended (a client's restart is refused, real_supported) and every
 * fault due by time is over, its pause's planned resume too. The recorder
 * takes the rest of the scenario's duration from the store's promise (a
 * key's expiry), as it does for a run played to its end; playing on would
 * record nothing more. A redlock run at S = 0.5 lasts half its scenario's
 * minute however early its clients are done, which is the longest stage of
 * `make reality`. */
static int settled(const struct scenario *s, const struct proc *ps, const struct servers *sv, int64_t t, double scale) {
    for (int i = 0; i < s->nclients; i++)
        if (!ps[i].dead) return 0;
    for (int k = 0; k < sv->n; k++)
        if (sv->p[k].stopped && sv->p[k].resume_at > 0) return 0;
    for (int k = 0; k < s->nfaults; k++) {
        const struct scn_fault *f = &s->faults[k];
        if (f->point == SCN_POINT_NONE && t < (int64_t)((double)(f->at_ns + f->dur_ns) * scale)) return 0;
    }
    return 1;
}

int real_play(const struct real_ops *ops, const struct scenario *s, const struct trace *sim,
              const struct redis_srv *srv, double scale, struct trace *out, char *err, size_t n) {
    struct real_cfg cfg;
    char why[400];
    trace_init(out, 1);
    if (real_parse_cfg(s, &cfg, why, sizeof why) != 0) {
        snprintf(err, n, "%s", why);
        return LSIM_ENOTREAL;
    }
    /* A resource with a rule checks tokens: the scenario's fencing=on, or
     * fenced-lease's own rule (compare=<, the same check), which a stated
     * fencing=off turns off, as in the simulator (tokens issued, unchecked). */
    int64_t rule = real_sim_rule(sim);
    cfg.fenced_resource = rule == TRACE_RULE_TOKENS ||
                          (rule == TRACE_RULE_ALGORITHM &&
                           !(s->fencing_stated && !s->fencing)); /* fencing=off: unchecked */
    int srv_node = -1, res_node = -1;
    struct servers sv;
    memset(&sv, 0, sizeof sv);
    for (int i = 0; i < sim->nnodes; i++) {
        if (trace_add_node(out, sim->nodes[i].name, sim->nodes[i].kind) < 0) return LSIM_ENOMEM;
        if (sim->nodes[i].kind == TRACE_NODE_SERVER && sv.n < REAL_MAX_SERVERS) {
            sv.map[sv.n] = sv.n;
            sv.node[sv.n++] = i;
        }
        if (sim->nodes[i].kind == TRACE_NODE_SERVER && srv_node < 0) srv_node = i;
        if (sim->nodes[i].kind == TRACE_NODE_RESOURCE) res_node = i;
    }
    snprintf(out->title, sizeof out->title, "%s", sim->title);
    snprintf(out->algo, sizeof out->algo, "%s", sim->algo);
    out->seed = sim->seed;
    struct recs l = {0};
    if (ops->setup(srv, s, &cfg) != 0) {
        free(l.v);
        snprintf(err, n, "%s on 127.0.0.1:%d did not take the set-up commands (%s; each has %d ms)", ops->server,
                 srv->port, strerror(errno), RESP_TIMEOUT_MS);
        return LSIM_EUNAVAILABLE;
    }
    /* Each lock server's wall clock (the set-up has started them): the
     * real one, then the scenario's clock line for it; a clock page for
     * the redis backend's server and for each of the redlock backend's. */
    struct real_clock clk[REAL_MAX_SERVERS];
    for (int k = 0; k < sv.n; k++) {
        const struct redis_nodes *nd = srv->nodes;
        struct clockshim_page *page = nd ? (k < nd->n ? nd->clock[k] : NULL) : k == 0 ? srv->clock : NULL;
        int port = nd ? nd->port[k] : srv->port;
        real_clock_start(&clk[k], page, port, s, sim->nodes[sv.node[k]].name, sv.node[k], scale, &l);
    }
    int pfd[2];
    if (pipe(pfd) != 0) {
        snprintf(err, n, "pipe: %s", strerror(errno));
        free(l.v);
        return LSIM_EINTERNAL;
    }
    struct proc *ps = calloc((size_t)s->nclients, sizeof *ps);
    if (!ps) {
        close(pfd[0]);
        close(pfd[1]);
        free(l.v);
        return LSIM_ENOMEM;
    }
    fflush(NULL);
    /* The start instant is chosen once every client is connected (each
     * says so on ready, then reads it from go): no client starts late
     * because a fork or a connect was slow. */
    int ready[2], go[2];
    if (pipe(ready) != 0 || pipe(go) != 0) {
        snprintf(err, n, "pipe: %s", strerror(errno));
        free(ps);
        free(l.v);
        return LSIM_EINTERNAL;
    }
    int64_t t0 = 0;
    int rc = 0;
    struct sched_param old_param;
    int old_policy = rt_begin(&old_param);
    if (old_policy >= 0) sched_servers(srv, 1);
    /* Latency that varies, loss, links and partitions: a loopback proxy
     * between each client and each server it reaches (proxy.c): the redis
     * backend's one server (S1 and R on the same port), the redlock
     * backend's lock servers and the resource's, replaying the simulated
     * run's delays; etcd's members, and the resource through each
     * (ops->proxy_targets), carrying HTTP. */
    struct real_proxy px = {0, -1, NULL, 0, 0, NULL};
    if (ops == &real_store_redis && real_needs_proxy(s)) {
        struct real_proxy_target tg[2] = {{srv_node, srv->port}, {res_node, srv->port}};
        rc = real_proxy_start(&px, s, sim, tg, 2, REAL_PROXY_REPLAY, scale, err, n);
    } else if (ops == &real_store_redlock && real_redlock_needs_proxy(s)) {
        struct real_proxy_target tg[REAL_MAX_SERVERS + 1];
        const struct redis_nodes *nd = srv->nodes;
        int nt = 0;
        for (int k = 0; k < sv.n && k < nd->n - 1; k++) tg[nt++] = (struct real_proxy_target){sv.node[k], nd->port[k]};
        tg[nt++] = (struct real_proxy_target){res_node, nd->port[nd->n - 1]};
        rc = real_proxy_start(&px, s, sim, tg, nt, REAL_PROXY_REPLAY, scale, err, n);
    } else if (ops->proxy_targets && real_needs_proxy(s)) {
        struct real_proxy_target tg[2 * REAL_MAX_SERVERS];
        int nt = ops->proxy_targets(sim, res_node, tg, 2 * REAL_MAX_SERVERS);
        rc = nt > 0 ? real_proxy_start(&px, s, sim, tg, nt, REAL_PROXY_HTTP, scale, err, n) : LSIM_EINTERNAL;
        if (nt <= 0) snprintf(err, n, "the %s backend gave the loopback proxy no targets", ops->name);
    }
    for (int i = 0; i < s->nclients && rc == 0; i++) {
        sigset_t all, old;
        sigfillset(&all);
        sigprocmask(SIG_BLOCK, &all, &old);
        pid_t pid = fork();
        if (pid == 0) {
            real_child_init(&old);
            close(pfd[0]);
            if (px.ctl >= 0) close(px.ctl);
            struct client cl;
            memset(&cl, 0, sizeof cl);
            cl.ops = ops;
            cl.port = srv->port;
            cl.server = srv;
            if (px.port) { /* its links: to each server, the resource's last */
                cl.link_ports = &px.port[i * px.ntargets];
                cl.lock_port = cl.link_ports[0];
                cl.res_port = cl.link_ports[px.ntargets - 1];
                sim_ns *tries = NULL;
                long nt = real_sim_tries(sim, i, &tries);
                cl.tries = tries;
                cl.ntries = nt > 0 ? (size_t)nt : 0;
            }
            cl.s = s;
            cl.cfg = &cfg;
            cl.idx = i;
            cl.srv = srv_node;
            cl.res = res_node;
            cl.evfd = pfd[1];
            cl.scale = scale;
            sim_ns *waits = NULL;
            long nw = real_sim_waits(sim, i, &waits);
            cl.waits = waits;
            cl.nwaits = nw > 0 ? (size_t)nw : 0;
            if (ops->connect(&cl) != 0) _exit(2);
            close(ready[0]);
            close(go[1]);
            char one = 1;
            if (write(ready[1], &one, 1) != 1 || read(go[0], &cl.t0, sizeof cl.t0) != (ssize_t)sizeof cl.t0) _exit(2);
            real_client_main(&cl);
            ops->disconnect(&cl);
            _exit(0);
        }
        if (pid > 0) redis_srv_guard_child(pid);
        sigprocmask(SIG_SETMASK, &old, NULL);
        if (pid < 0) {
            snprintf(err, n, "fork: %s", strerror(errno));
            rc = LSIM_EINTERNAL;
            break;
        }
        ps[i].pid = pid;
    }
    close(pfd[1]);
    close(ready[1]);
    close(go[0]);
    /* Each client says it is connected, or gives up within
     * RESP_TIMEOUT_MS (resp_connect's bound) and exits: the wait is bounded
     * by that and a second of slack, and ends early when a client has died. */
    int nready = 0;
    int64_t ready_by = now_ns() + (RESP_TIMEOUT_MS + 1000) * 1000000LL;
    while (rc == 0 && nready < s->nclients && now_ns() < ready_by) {
        struct pollfd rp = {ready[0], POLLIN, 0};
        if (poll(&rp, 1, 50) > 0) {
            char b;
            if (read(ready[0], &b, 1) == 1) nready++;
            continue;
        }
        int gone = 0;
        for (int i = 0; i < s->nclients; i++)
            if (ps[i].pid > 0 && waitpid(ps[i].pid, NULL, WNOHANG) == ps[i].pid) {
                redis_srv_guard_forget(ps[i].pid);
                ps[i].dead = gone = 1;
            }
        if (gone) break;
    }
    if (rc == 0 && nready < s->nclients) {
        snprintf(err, n,
                 "a client process could not connect to %s on 127.0.0.1:%d, or it did not answer, "
                 "within %d ms",
                 ops->server, srv->port, RESP_TIMEOUT_MS);
        rc = LSIM_EUNAVAILABLE;
    }
    t0 = now_ns() + 5 * 1000000LL;
    if (ops->align_start) t0 = ops->align_start(s, scale, t0);
    for (int i = 0; rc == 0 && i < s->nclients; i++)
        if (write(go[1], &t0, sizeof t0) != (ssize_t)sizeof t0) rc = LSIM_EINTERNAL;
    close(ready[0]);
    close(go[1]);
    fcntl(pfd[0], F_SETFL, O_NONBLOCK);
    int64_t end = (int64_t)((double)s->duration_ns * scale);
    int nf = s->nfaults;
    char *done = calloc((size_t)nf + 1, 1);
    if (!done) rc = LSIM_ENOMEM;
    /* The driver sleeps until its next due instant (next_due) or until a
     * client writes a record, stops itself or dies (SIGCHLD, let through
     * only inside pselect, so none is missed between a reap and the wait):
     * a fault is applied when it is due, not at the next 1 ms tick, and an
     * idle driver costs no CPU. Its timer slack is 1 ns while it plays, as
     * the clients' is (real_child_init). */
    sigset_t chld, before, waitmask;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, &before);
    waitmask = before;
    sigdelset(&waitmask, SIGCHLD);
    struct sigaction on_chld, old_chld;
    memset(&on_chld, 0, sizeof on_chld);
    on_chld.sa_handler = on_child;
    sigemptyset(&on_chld.sa_mask);
    sigaction(SIGCHLD, &on_chld, &old_chld);
    int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    prctl(PR_SET_TIMERSLACK, 1UL);
    int eof = 0; /* every client has closed its end of the records' pipe */
    for (;;) {
        if (rc) break;
        int64_t t = now_ns() - t0;
        if (t >= end) break;
        if (!eof && drain(pfd[0], &l) == 1) eof = 1;
        reap(ps, s->nclients, t0);
        if (settled(s, ps, &sv, t, scale)) {
            drain(pfd[0], &l); /* what the last client wrote before it ended */
            break;
        }
        if (ops->server_tick) ops->server_tick(srv, srv_node, t, &l);
        for (int k = 0; k < sv.n; k++) real_clock_tick(&clk[k], t, &l);
        /* planned resumes, and stops that need one */
        for (int i = 0; i < s->nclients; i++) {
            if (ps[i].dead) continue;
            if (ps[i].stopped && ps[i].resume_at == 0) {
                /* stopped itself at a point: its pause fault says how long */
                for (int k = 0; k < nf; k++) {
                    const struct scn_fault *f = &s->faults[k];
                    if (!done[k] && f->point != SCN_POINT_NONE && f->kind == SCN_FAULT_PAUSE &&
                        strcmp(f->node, s->clients[i].name) == 0) {
                        done[k] = 1;
                        ps[i].resume_at = f->dur_ns ? ps[i].stopped_at + (int64_t)((double)f->dur_ns * scale) : -1;
                        break;
                    }
                }
                if (ps[i].resume_at == 0) ps[i].resume_at = -1;
            }
            if (ps[i].stopped && ps[i].resume_at > 0 && t >= ps[i].resume_at) resume(&ps[i], i, t, scale, &l);
        }
        for (int k = 0; k < sv.n; k++) /* a paused server's planned resume */
            if (sv.p[k].stopped && sv.p[k].resume_at > 0 && t >= sv.p[k].resume_at && ops->member_fault &&
                ops->member_fault(sim, k, SCN_FAULT_RESUME, (sim_ns)((double)t / scale)) >= 0) {
                sv.p[k].stopped = 0;
                sv.p[k].resume_at = 0;
                driver_event(&l, t, TRACE_RESUME, sv.node[k], (int64_t)((double)(t - sv.p[k].stopped_at) / scale));
            }
        /* faults due by time */
        for (int k = 0; k < nf; k++) {
            const struct scn_fault *f = &s->faults[k];
            if (done[k] || f->point != SCN_POINT_NONE || t < (int64_t)((double)f->at_ns * scale)) continue;
            done[k] = 1;
            int clocked = 0;
            for (int m = 0; m < sv.n && !clocked; m++) clocked = real_clock_fault(&clk[m], f, t, &l);
            if (clocked) continue;
            if (f->kind == SCN_FAULT_PARTITION || f->kind == SCN_FAULT_HEAL) {
                real_proxy_partition(&px, sim, f);
                if (ops->member_partition) ops->member_partition(sim, f);
                continue;
            }
            if (f->kind == SCN_FAULT_LINK) continue; /* its delays are the simulated run's, which the proxy replays */
            int i = 0;
            while (i < s->nclients && strcmp(s->clients[i].name, f->node) != 0) i++;
            if (i == s->nclients && ops->server_fault) { /* a lock server's: the store does it */
                for (int k2 = srv_node; k2 >= 0 && k2 < sim->nnodes; k2++)
                    if (strcmp(sim->nodes[k2].name, f->node) == 0)
                        ops->server_fault(srv, &cfg, f, k2 - srv_node, k2, scale, now_ns() - t0, &l);
                continue;
            }
            if (i == s->nclients) member_fault(ops, sim, &sv, f, t0, scale, &l);
            if (i == s->nclients || ps[i].dead) continue;
            if (f->kind == SCN_FAULT_PAUSE && !ps[i].stopped) {
                /* The pause starts with the signal: from then on the client
                 * runs none of its program (a stop is taken before it next
                 * returns to user space), though the kernel confirms the
                 * stop only once the process has been scheduled, which on
                 * a loaded machine is a millisecond or more later. Counted
                 * from the confirmation, each pause lasted that much longer
                 * than the scenario's. */
                int64_t ts = now_ns() - t0;
                kill(ps[i].pid, SIGSTOP);
                int st;
                waitpid(ps[i].pid, &st, WUNTRACED); /* a real stop, confirmed */
                ps[i].stopped = 1;
                ps[i].stopped_at = ts;
                ps[i].resume_at = f->dur_ns ? ts + (int64_t)((double)f->dur_ns * scale) : -1;
                driver_event(&l, ts, TRACE_PAUSE, i, f->dur_ns);
            } else if (f->kind == SCN_FAULT_RESUME && ps[i].stopped) {
                resume(&ps[i], i, t, scale, &l);
            } else if (f->kind == SCN_FAULT_CRASH) {
                kill(ps[i].pid, SIGKILL);
                waitpid(ps[i].pid, NULL, 0);
                redis_srv_guard_forget(ps[i].pid);
                ps[i].dead = 1;
                int64_t tc = now_ns() - t0;
                driver_event(&l, tc, TRACE_CRASH, i, 0);
                ops->observe_hold(srv, s, &l, tc);
            }
        }
        /* Wait for the next due instant, at most 10 ms at a time: the
         * kernel lets a wait of d end up to d/1000 late (its select slack),
         * 10 us here. A store with timed server events of its own
         * (server_tick: restarts, resumes) is asked every 1 ms. */
        int64_t wake = next_due(s, done, ps, &sv, clk, scale, now_ns() - t0, end);
        int64_t cap = ops->server_tick ? 1000000 : 10000000;
        int64_t left = wake - (now_ns() - t0);
        if (left > cap) left = cap;
        if (left < 0) left = 0;
        struct timespec ts = {(time_t)(left / 1000000000), (long)(left % 1000000000)};
        fd_set rd;
        FD_ZERO(&rd);
        if (!eof) FD_SET(pfd[0], &rd);
        pselect(eof ? 0 : pfd[0] + 1, &rd, NULL, NULL, &ts, &waitmask);
    }
    prctl(PR_SET_TIMERSLACK, slack > 0 ? (unsigned long)slack : 50000UL);
    sigaction(SIGCHLD, &old_chld, NULL);
    sigprocmask(SIG_SETMASK, &before, NULL);
    /* The end: every process still there is killed (its program had not
     * finished by the scenario's duration), and what it wrote is read. */
    for (int i = 0; i < s->nclients; i++)
        if (ps[i].pid > 0 && !ps[i].dead) {
            kill(ps[i].pid, SIGKILL);
            waitpid(ps[i].pid, NULL, 0);
            redis_srv_guard_forget(ps[i].pid);
        }
    real_proxy_stop(&px);
    if (old_policy >= 0) {
        sched_setscheduler(0, old_policy, &old_param);
        sched_servers(srv, 0);
    }
    fcntl(pfd[0], F_SETFL, 0);
    drain(pfd[0], &l);
    close(pfd[0]);
    free(done);
    free(ps);
    if (rc) {
        free(l.v);
        return rc;
    }
    rc = real_record(s, sim, &l, scale, ops->server, srv->port, srv_node, out);
    free(l.v);
    return rc;
}
