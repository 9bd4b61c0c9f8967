/* The redis backend of `locksim real` (real/real.h): the driver, which starts
 * the client processes (real_client.c), applies the faults for real and
 * records the run as a locksim trace; what it refuses is in real_refuse.c. */
#include "real_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "resp.h"

/* ---- the driver ----------------------------------------------------------- */

struct recs {
    struct rec *v;
    size_t n, cap;
    uint32_t order;
};

static int recs_add(struct recs *l, const struct rec *r) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        struct rec *v = realloc(l->v, cap * sizeof *v);
        if (!v) return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n] = *r;
    l->v[l->n++].order = l->order++;
    return 0;
}

static int rec_cmp(const void *x, const void *y) {
    const struct rec *a = x, *b = y;
    if (a->t != b->t) return a->t < b->t ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

static int drain(int fd, struct recs *l) {
    struct rec r;
    for (;;) {
        ssize_t got = read(fd, &r, sizeof r);
        if (got == (ssize_t)sizeof r) {
            if (recs_add(l, &r) != 0) return -1;
            continue;
        }
        if (got < 0 && errno == EINTR) continue;
        return 0;
    }
}

static int setup_store(const struct redis_srv *srv, const struct scenario *s, const struct real_cfg *g) {
    struct resp_conn c;
    struct resp_reply r;
    if (resp_connect(&c, srv->port) != 0) return -1;
    char stock[32], first[32];
    snprintf(stock, sizeof stock, "%lld", (long long)s->stock);
    snprintf(first, sizeof first, "%lld", g->first_token - 1);
    const char *flush[] = {"FLUSHALL"};
    const char *set1[] = {"SET", "stock", stock};
    const char *set2[] = {"SET", "fence:counter", first};
    int rc = resp_command(&c, &r, 1, flush) || resp_command(&c, &r, 3, set1) || resp_command(&c, &r, 3, set2);
    resp_close(&c);
    return rc ? -1 : 0;
}

/* Per-client process state the driver follows. */
struct proc {
    pid_t pid;
    int stopped;          /* 1 while SIGSTOPped */
    int dead;
    int64_t resume_at;    /* real ns of the planned SIGCONT, 0 = none */
    int64_t stopped_at;
};

static void driver_event(struct recs *l, int64_t t, int kind, int node, int64_t a) {
    struct rec r = {t, kind, node, TRACE_NO_NODE, 0, 0, a, 0};
    recs_add(l, &r);
}

/* Ask Redis who holds the lock now (a crashed client may hold it though it
 * never saw the reply that granted it): recorded for the build below. */
static void observe_hold(const struct redis_srv *srv, const struct scenario *s, struct recs *l, int64_t t) {
    struct resp_conn c;
    struct resp_reply v, ttl;
    if (resp_connect(&c, srv->port) != 0) return;
    const char *get[] = {"GET", "lock"}, *pttl[] = {"PTTL", "lock"};
    int ok = resp_command(&c, &v, 2, get) == 0 && resp_command(&c, &ttl, 2, pttl) == 0;
    resp_close(&c);
    if (!ok || v.type != RESP_BULK || ttl.type != RESP_INT) return;
    size_t k = strcspn(v.str, "#");
    for (int i = 0; i < s->nclients; i++)
        if (strlen(s->clients[i].name) == k && strncmp(s->clients[i].name, v.str, k) == 0) {
            struct rec r = {t, REC_OBSERVED_HOLD, i, TRACE_NO_NODE, 0, 0, i,
                            ttl.integer > 0 ? ttl.integer * 1000000LL : 0};
            recs_add(l, &r);
        }
}

static void resume(struct proc *p, int idx, int64_t t, double scale, struct recs *l) {
    kill(p->pid, SIGCONT);
    p->stopped = 0;
    p->resume_at = 0;
    driver_event(l, t, TRACE_RESUME, idx, (int64_t)((double)(t - p->stopped_at) / scale));
}

static void reap(struct proc *ps, int n, int64_t t0) {
    int st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, WNOHANG | WUNTRACED)) > 0) {
        for (int i = 0; i < n; i++) {
            if (ps[i].pid != pid) continue;
            if (WIFSTOPPED(st) && !ps[i].stopped) { /* it stopped itself at a point */
                ps[i].stopped = 1;
                ps[i].stopped_at = real_now_ns() - t0;
            } else if (WIFEXITED(st) || WIFSIGNALED(st)) {
                ps[i].dead = 1;
                redis_srv_guard_forget(pid);
            }
        }
    }
}

/* The lease of owner ran out at t, as PX promises (not observed). */
static void append_expire(struct trace *out, sim_ns t, int srv_node, int owner) {
    struct trace_event ev;
    memset(&ev, 0, sizeof ev);
    ev.t = t;
    ev.kind = TRACE_SRV_EXPIRE;
    ev.node = srv_node;
    ev.peer = owner;
    trace_append(out, &ev);
}

/* One run's driver state: the scenario, the server, the client processes,
 * the pipe their records come on, and the records so far. */
struct drive {
    const struct scenario *s;
    const struct redis_srv *srv;
    const struct real_cfg *cfg;
    double scale;
    int srv_node, res_node;
    struct proc *ps;   /* one per client */
    int evfd;          /* the records' pipe, read end */
    int64_t t0;        /* the run's start, CLOCK_MONOTONIC ns */
    struct recs l;
};

/* The child's side of start_clients: connect, say ready, wait for the start
 * instant, play the program. Never returns. */
static void client_process(const struct drive *d, int idx, int evfd, int ready, int go) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* Sleeps end on time: the default 50 us of timer slack per sleep would
     * add up over a client's many short scaled waits. */
    prctl(PR_SET_TIMERSLACK, 1UL);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    struct real_client cl;
    memset(&cl, 0, sizeof cl);
    cl.s = d->s;
    cl.cfg = d->cfg;
    cl.idx = idx;
    cl.srv = d->srv_node;
    cl.res = d->res_node;
    cl.evfd = evfd;
    cl.scale = d->scale;
    if (resp_connect(&cl.c, d->srv->port) != 0) _exit(2);
    char one = 1;
    int ok = write(ready, &one, 1) == 1;
    close(ready); /* so that the driver sees the end of ready when every client has spoken or died */
    if (!ok || read(go, &cl.t0, sizeof cl.t0) != (ssize_t)sizeof cl.t0) _exit(2);
    real_client_main(&cl);
    resp_close(&cl.c);
    _exit(0);
}

/* Fork a process per client; once every one is connected, hand them all
 * the same start instant (d->t0), so no client starts late because a fork or
 * a connect was slow. A client that cannot connect ends the handshake (each
 * closes its end of `ready` once it has spoken): an error, not a wait. */
static int start_clients(struct drive *d, int evw, char *err, size_t n) {
    const struct scenario *s = d->s;
    int ready[2], go[2];
    if (pipe(ready) != 0) {
        snprintf(err, n, "pipe: %s", strerror(errno));
        return LSIM_EINTERNAL;
    }
    if (pipe(go) != 0) {
        snprintf(err, n, "pipe: %s", strerror(errno));
        close(ready[0]);
        close(ready[1]);
        return LSIM_EINTERNAL;
    }
    fflush(NULL);
    int rc = 0;
    for (int i = 0; i < s->nclients && rc == 0; i++) {
        sigset_t all, old;
        sigfillset(&all);
        sigprocmask(SIG_BLOCK, &all, &old);
        pid_t pid = fork();
        if (pid == 0) {
            sigprocmask(SIG_SETMASK, &old, NULL);
            close(d->evfd);
            close(ready[0]);
            close(go[1]);
            client_process(d, i, evw, ready[1], go[0]);
        }
        if (pid > 0) redis_srv_guard_child(pid);
        sigprocmask(SIG_SETMASK, &old, NULL);
        if (pid < 0) {
            snprintf(err, n, "fork: %s", strerror(errno));
            rc = LSIM_EINTERNAL;
        }
        d->ps[i].pid = pid > 0 ? pid : 0;
    }
    close(ready[1]);
    close(go[0]);
    int nready = 0;
    for (char b; rc == 0 && nready < s->nclients && read(ready[0], &b, 1) == 1;) nready++;
    if (rc == 0 && nready < s->nclients) {
        snprintf(err, n, "%d of %d client processes could not connect to redis-server on 127.0.0.1:%d",
                 s->nclients - nready, s->nclients, d->srv->port);
        rc = LSIM_EUNAVAILABLE;
    }
    d->t0 = real_now_ns() + 5 * 1000000LL;
    for (int i = 0; rc == 0 && i < s->nclients; i++)
        if (write(go[1], &d->t0, sizeof d->t0) != (ssize_t)sizeof d->t0) rc = LSIM_EINTERNAL;
    close(ready[0]);
    close(go[1]);
    return rc;
}

/* A client that stopped itself at a point: its pause fault (the first not
 * yet done for it) says how long; -1 = until a resume. */
static void plan_point_resume(struct drive *d, int i, char *done) {
    const struct scenario *s = d->s;
    struct proc *p = &d->ps[i];
    for (int k = 0; k < s->nfaults; k++) {
        const struct scn_fault *f = &s->faults[k];
        if (!done[k] && f->point != SCN_POINT_NONE && f->kind == SCN_FAULT_PAUSE &&
            strcmp(f->node, s->clients[i].name) == 0) {
            done[k] = 1;
            p->resume_at = f->dur_ns ? p->stopped_at + (int64_t)((double)f->dur_ns * d->scale) : -1;
            return;
        }
    }
    p->resume_at = -1;
}

/* A timed fault on client i, done for real at real time t. */
static void apply_fault(struct drive *d, const struct scn_fault *f, int i, int64_t t) {
    struct proc *p = &d->ps[i];
    if (f->kind == SCN_FAULT_PAUSE && !p->stopped) {
        kill(p->pid, SIGSTOP);
        int st;
        waitpid(p->pid, &st, WUNTRACED); /* a real stop, confirmed */
        int64_t ts = real_now_ns() - d->t0;
        p->stopped = 1;
        p->stopped_at = ts;
        p->resume_at = f->dur_ns ? ts + (int64_t)((double)f->dur_ns * d->scale) : -1;
        driver_event(&d->l, ts, TRACE_PAUSE, i, f->dur_ns);
    } else if (f->kind == SCN_FAULT_RESUME && p->stopped) {
        resume(p, i, t, d->scale, &d->l);
    } else if (f->kind == SCN_FAULT_CRASH) {
        kill(p->pid, SIGKILL);
        waitpid(p->pid, NULL, 0);
        redis_srv_guard_forget(p->pid);
        p->dead = 1;
        int64_t tc = real_now_ns() - d->t0;
        driver_event(&d->l, tc, TRACE_CRASH, i, 0);
        observe_hold(d->srv, d->s, &d->l, tc);
    }
}

/* The run, until the scenario's duration (scaled) has passed: records read
 * as they come, processes reaped, resumes and timed faults done on time. */
static int drive_faults(struct drive *d) {
    const struct scenario *s = d->s;
    int64_t end = (int64_t)((double)s->duration_ns * d->scale);
    char *done = calloc((size_t)s->nfaults + 1, 1);
    if (!done) return LSIM_ENOMEM;
    fcntl(d->evfd, F_SETFL, O_NONBLOCK);
    for (;;) {
        int64_t t = real_now_ns() - d->t0;
        if (t >= end) break;
        drain(d->evfd, &d->l);
        reap(d->ps, s->nclients, d->t0);
        for (int i = 0; i < s->nclients; i++) {
            struct proc *p = &d->ps[i];
            if (p->dead) continue;
            if (p->stopped && p->resume_at == 0) plan_point_resume(d, i, done);
            if (p->stopped && p->resume_at > 0 && t >= p->resume_at) resume(p, i, t, d->scale, &d->l);
        }
        for (int k = 0; k < s->nfaults; k++) {
            const struct scn_fault *f = &s->faults[k];
            if (done[k] || f->point != SCN_POINT_NONE || t < (int64_t)((double)f->at_ns * d->scale)) continue;
            done[k] = 1;
            int i = 0;
            while (i < s->nclients && strcmp(s->clients[i].name, f->node) != 0) i++;
            if (i < s->nclients && !d->ps[i].dead) apply_fault(d, f, i, t);
        }
        struct pollfd pf = {d->evfd, POLLIN, 0};
        poll(&pf, 1, 1); /* wait for a record, at most 1 ms */
    }
    free(done);
    return 0;
}

/* The end: every process still there is killed (its program had not
 * finished by the scenario's duration), and what it wrote is read. */
static void stop_clients(struct drive *d) {
    for (int i = 0; i < d->s->nclients; i++)
        if (d->ps[i].pid > 0 && !d->ps[i].dead) {
            kill(d->ps[i].pid, SIGKILL);
            waitpid(d->ps[i].pid, NULL, 0);
            redis_srv_guard_forget(d->ps[i].pid);
        }
    fcntl(d->evfd, F_SETFL, 0);
    drain(d->evfd, &d->l);
}

/* The recording's opening: run-start, the simulated run's resource-init and
 * a note on how it was recorded. */
static void record_opening(const struct drive *d, const struct trace *sim, struct trace *out) {
    struct trace_event ev;
    memset(&ev, 0, sizeof ev);
    ev.node = ev.peer = TRACE_NO_NODE;
    ev.kind = TRACE_RUN_START;
    ev.a = (int64_t)d->s->seed;
    ev.b = d->s->duration_ns;
    trace_append(out, &ev);
    for (size_t i = 0; i < sim->len; i++)
        if (sim->ev[i].kind == TRACE_RESOURCE_INIT) {
            ev = sim->ev[i];
            ev.t = 0;
            trace_append(out, &ev);
            break;
        }
    char note[300];
    snprintf(note, sizeof note,
             "recorded against redis-server on 127.0.0.1:%d, one process per client; time scale %g: t_ns is real "
             "elapsed time / %g",
             d->srv->port, d->scale, d->scale);
    memset(&ev, 0, sizeof ev);
    ev.kind = TRACE_SRV_NOTE;
    ev.node = d->srv_node;
    ev.peer = TRACE_NO_NODE;
    ev.text = trace_intern(out, note, strlen(note));
    trace_append(out, &ev);
}

/* The records, sorted, become the trace's events in scenario time. Grants
 * are numbered in the order the clients learnt them; the server's expiry is
 * PX's promise (grant or PEXPIRE time + TTL), not observed. */
static int record(struct drive *d, const struct trace *sim, struct trace *out) {
    const struct recs *l = &d->l;
    qsort(l->v, l->n, sizeof *l->v, rec_cmp);
    record_opening(d, sim, out);
    uint32_t grants = 0;
    uint32_t *grant = calloc((size_t)sim->nnodes, sizeof *grant);
    uint64_t *token = calloc((size_t)sim->nnodes, sizeof *token);
    int *in_cs = calloc((size_t)sim->nnodes, sizeof *in_cs);
    int rc = (!grant || !token || !in_cs) ? LSIM_ENOMEM : 0;
    int owner = -1, srv_node = d->srv_node;
    sim_ns expiry = 0, endt = d->s->duration_ns;
    struct trace_event ev;
    for (size_t i = 0; i < l->n && rc == 0; i++) {
        const struct rec *r = &l->v[i];
        sim_ns t = (sim_ns)((double)r->t / d->scale);
        if (t > endt) break;
        if (owner >= 0 && expiry && expiry <= t) {
            append_expire(out, expiry, srv_node, owner);
            owner = -1;
        }
        if (r->kind == REC_OBSERVED_HOLD) {
            /* Redis says r->a holds the lock, which the recording had not
             * seen granted: its grant, as the server made it, now. */
            if (owner != r->a) {
                memset(&ev, 0, sizeof ev);
                ev.t = t;
                ev.kind = TRACE_SRV_GRANT;
                ev.node = srv_node;
                ev.peer = (int32_t)r->a;
                ev.a = (int64_t)((double)r->b / d->scale);
                trace_append(out, &ev);
                owner = (int)r->a;
                expiry = ev.a ? t + ev.a : 0;
            }
            continue;
        }
        memset(&ev, 0, sizeof ev);
        ev.t = t;
        ev.kind = (uint16_t)r->kind;
        ev.node = r->node;
        ev.peer = r->peer;
        ev.token = r->token;
        ev.a = r->a;
        ev.b = r->b;
        int c = (r->kind == TRACE_READ || r->kind == TRACE_WRITE) ? r->peer : r->node;
        switch (r->kind) {
        case TRACE_ACQUIRED:
            grant[c] = ++grants;
            token[c] = r->token;
            in_cs[c] = 1;
            ev.grant = grant[c];
            break;
        case TRACE_READ:
        case TRACE_WRITE:
        case TRACE_WRITE_SKIPPED:
            ev.grant = grant[c];
            break;
        case TRACE_CS_EXIT:
            ev.grant = grant[c];
            in_cs[c] = 0;
            grant[c] = 0;
            break;
        case TRACE_SRV_GRANT:
        case TRACE_SRV_RENEW:
            owner = r->peer;
            expiry = r->a ? t + r->a : 0;
            break;
        case TRACE_SRV_DELETE:
            owner = -1;
            break;
        default:
            break;
        }
        trace_append(out, &ev);
        if (r->kind == TRACE_CRASH && in_cs[c]) { /* a crashed client leaves its critical section */
            memset(&ev, 0, sizeof ev);
            ev.t = t;
            ev.kind = TRACE_CS_EXIT;
            ev.node = c;
            ev.peer = TRACE_NO_NODE;
            ev.token = token[c];
            ev.grant = grant[c];
            ev.a = TRACE_EXIT_CRASH;
            trace_append(out, &ev);
            in_cs[c] = 0;
            grant[c] = 0;
        }
    }
    if (rc == 0 && owner >= 0 && expiry && expiry <= endt) append_expire(out, expiry, srv_node, owner);
    memset(&ev, 0, sizeof ev);
    ev.t = endt;
    ev.kind = TRACE_RUN_END;
    ev.node = ev.peer = TRACE_NO_NODE;
    ev.a = (int64_t)out->len;
    if (rc == 0) trace_append(out, &ev);
    free(grant);
    free(token);
    free(in_cs);
    return rc;
}

int real_play(const struct scenario *s, const struct trace *sim, const struct redis_srv *srv, double scale,
              struct trace *out, char *err, size_t n) {
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
                          (rule == TRACE_RULE_ALGORITHM && !(s->fencing_stated && !s->fencing)); /* fencing=off: unchecked */
    struct drive d = {.s = s, .srv = srv, .cfg = &cfg, .scale = scale, .srv_node = -1, .res_node = -1};
    for (int i = 0; i < sim->nnodes; i++) {
        if (trace_add_node(out, sim->nodes[i].name, sim->nodes[i].kind) < 0) return LSIM_ENOMEM;
        if (sim->nodes[i].kind == TRACE_NODE_SERVER && d.srv_node < 0) d.srv_node = i;
        if (sim->nodes[i].kind == TRACE_NODE_RESOURCE) d.res_node = i;
    }
    snprintf(out->title, sizeof out->title, "%s", sim->title);
    snprintf(out->algo, sizeof out->algo, "%s", sim->algo);
    out->seed = sim->seed;
    if (setup_store(srv, s, &cfg) != 0) {
        snprintf(err, n, "redis-server on 127.0.0.1:%d did not take the set-up commands", srv->port);
        return LSIM_EUNAVAILABLE;
    }
    int pfd[2];
    if (pipe(pfd) != 0) {
        snprintf(err, n, "pipe: %s", strerror(errno));
        return LSIM_EINTERNAL;
    }
    d.evfd = pfd[0];
    d.ps = calloc((size_t)s->nclients, sizeof *d.ps);
    int rc = d.ps ? start_clients(&d, pfd[1], err, n) : LSIM_ENOMEM;
    close(pfd[1]);
    if (rc == 0) rc = drive_faults(&d);
    if (d.ps) stop_clients(&d);
    close(pfd[0]);
    free(d.ps);
    if (rc == 0) rc = record(&d, sim, out);
    free(d.l.v);
    if (rc == 0 && out->oom) rc = LSIM_ENOMEM;
    return rc;
}
