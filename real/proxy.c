/* The per-link loopback proxy of `locksim real` (real/real_int.h): a child
 * process between each client and the servers it reaches, one listening
 * port per link (client -> target, for each target the driver names: the
 * redis backend's S1 and R, the redlock backend's S1..SN and R). It forwards each message (one read: a client
 * has one request out at a time, and Redis writes each reply at once) after
 * the delay the simulated run gave the same message of that link, in order,
 * scaled; a message the simulation dropped, or one sent across a partition
 * the driver says is in force, is dropped. Past the simulated run's
 * messages of a link (a real run that has diverged), delays are drawn fresh
 * from the scenario's latency. Bytes keep their order (TCP's): a message is
 * never delivered before the one sent ahead of it on the same link.
 * REAL_PROXY_HTTP (the etcd backend's links) takes a connection's request,
 * and its answer, as one message each way however many reads they come in
 * (HTTP with Connection: close: one request a connection; the gateway's
 * answers, a keep-alive's chunked stream, come in several), each delayed by
 * a fresh draw from the scenario's latency: the client's HTTP requests are
 * not the model's messages one for one, so nothing is replayed on them. */
#include "real_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"

/* What the driver tells the proxy through its control pipe. */
struct proxy_ctl {
    int32_t link; /* link index, or -1 = every link */
    int32_t cut;  /* 1: messages on it are dropped from now on; 0: they flow */
};

/* One message held on its way. */
struct held {
    int64_t due; /* real ns (CLOCK_MONOTONIC) when it is delivered */
    size_t len;
    char *data;
};

/* One direction of one connection. */
struct dir {
    int from, to;  /* fds */
    int from_node; /* the sender's node, to_node the receiver's */
    int to_node;
    struct held *q; /* FIFO [head, n) */
    size_t head, n, cap;
    int64_t last_due;
    int begun;         /* REAL_PROXY_HTTP: 1 once its message's first bytes came */
    int64_t msg_delay; /* and that message's delay, real ns (-1 = dropped) */
};

struct conn {
    int link;
    struct dir d[2]; /* 0: client -> server, 1: server -> client */
    int eof;         /* a side closed (a client killed): nothing more is read, what is held still goes */
    int closed;      /* both fds closed */
};

int real_needs_proxy(const struct scenario *s) {
    if (s->latency.min_ns != s->latency.max_ns || s->loss_ppm || s->nlinks) return 1;
    for (int i = 0; i < s->nfaults; i++) {
        enum scn_fault_kind k = s->faults[i].kind;
        if (k == SCN_FAULT_PARTITION || k == SCN_FAULT_HEAL || k == SCN_FAULT_LINK) return 1;
    }
    return 0;
}

/* The simulated run's delay of every message of each directed link, in
 * send order: from * nnodes + to -> a list; -1 = dropped or never arrived. */
struct delays {
    sim_ns **v;
    size_t *n, *cap;
    int nnodes;
};

static int delays_build(struct delays *d, const struct trace *sim) {
    int nn = sim->nnodes;
    size_t pairs = (size_t)nn * (size_t)nn;
    d->nnodes = nn;
    d->v = calloc(pairs, sizeof *d->v);
    d->n = calloc(pairs, sizeof *d->n);
    d->cap = calloc(pairs, sizeof *d->cap);
    int64_t maxid = 0;
    for (size_t i = 0; i < sim->len; i++)
        if (sim->ev[i].kind == TRACE_MSG_SEND && sim->ev[i].a > maxid) maxid = sim->ev[i].a;
    /* message id -> (pair, index in its list), and its send time */
    size_t *where = calloc((size_t)maxid + 1, sizeof *where);
    size_t *pair_of = calloc((size_t)maxid + 1, sizeof *pair_of);
    sim_ns *sent = calloc((size_t)maxid + 1, sizeof *sent);
    int ok = d->v && d->n && d->cap && where && pair_of && sent;
    for (size_t i = 0; ok && i < sim->len; i++) {
        const struct trace_event *e = &sim->ev[i];
        if (e->kind == TRACE_MSG_SEND && e->node >= 0 && e->peer >= 0 && e->a >= 0) {
            size_t p = (size_t)e->node * (size_t)nn + (size_t)e->peer;
            if (d->n[p] == d->cap[p]) {
                size_t cap = d->cap[p] ? d->cap[p] * 2 : 16;
                sim_ns *w = realloc(d->v[p], cap * sizeof *w);
                if (!w) {
                    ok = 0;
                    break;
                }
                d->v[p] = w;
                d->cap[p] = cap;
            }
            where[e->a] = d->n[p];
            pair_of[e->a] = p;
            sent[e->a] = e->t;
            d->v[p][d->n[p]++] = -1; /* until it arrives */
        } else if (e->kind == TRACE_MSG_RECV && e->a >= 0 && e->a <= maxid && d->n[pair_of[e->a]]) {
            d->v[pair_of[e->a]][where[e->a]] = e->t - sent[e->a];
        }
    }
    free(where);
    free(pair_of);
    free(sent);
    return ok ? 0 : -1;
}

static void delays_free(struct delays *d) {
    size_t pairs = (size_t)d->nnodes * (size_t)d->nnodes;
    for (size_t p = 0; d->v && p < pairs; p++) free(d->v[p]);
    free(d->v);
    free(d->n);
    free(d->cap);
    memset(d, 0, sizeof *d);
}

/* A TCP socket and 127.0.0.1:port in a; the socket or -1. */
static int loopback(struct sockaddr_in *a, int port) {
    memset(a, 0, sizeof *a);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a->sin_port = htons((uint16_t)port);
    return socket(AF_INET, SOCK_STREAM, 0);
}

static int listen_any(int *port) {
    struct sockaddr_in a;
    int fd = loopback(&a, 0);
    if (fd < 0) return -1;
    socklen_t al = sizeof a;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 64) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &al) != 0) {
        close(fd);
        return -1;
    }
    *port = ntohs(a.sin_port);
    return fd;
}

static int connect_to(int port) {
    struct sockaddr_in a;
    int fd = loopback(&a, port);
    if (fd < 0) return -1;
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

int real_listen_loopback(int *port) { return listen_any(port); }
int real_connect_loopback(int port) { return connect_to(port); }

/* The proxy process's state. */
struct pstate {
    const struct scenario *s;
    struct delays dl;
    double scale;
    int nlinks;
    int *lfd;       /* per link: its listening socket */
    int *link_from; /* per link: the client's node, link_to the target's */
    int *link_to;
    int *link_port; /* per link: the target's port on 127.0.0.1 */
    char *cut;      /* per link: 1 while a partition separates its ends */
    size_t *used;   /* per directed node pair: messages so far (the replay position) */
    struct conn *c;
    int nc;
    uint64_t rng;
    int mode; /* REAL_PROXY_REPLAY or REAL_PROXY_HTTP */
};

/* The delay of the next message on d, real ns; -1 = drop it. */
static int64_t next_delay(struct pstate *p, struct dir *d, int link) {
    size_t pair = (size_t)d->from_node * (size_t)p->dl.nnodes + (size_t)d->to_node;
    size_t k = p->used[pair]++; /* per link, over its connections (a client reconnects after a timeout) */
    sim_ns scn;
    if (p->mode == REAL_PROXY_REPLAY && k < p->dl.n[pair]) {
        scn = p->dl.v[pair][k];
    } else { /* past the simulated run: a fresh draw from the scenario's network */
        p->rng ^= p->rng << 13;
        p->rng ^= p->rng >> 7;
        p->rng ^= p->rng << 17;
        sim_ns span = p->s->latency.max_ns - p->s->latency.min_ns;
        scn = p->s->latency.min_ns + (span > 0 ? (sim_ns)(p->rng % (uint64_t)(span + 1)) : 0);
        if (p->s->loss_ppm && (p->rng >> 20) % 1000000 < p->s->loss_ppm) scn = -1;
    }
    if (p->cut[link]) scn = -1;
    return scn < 0 ? -1 : (int64_t)((double)scn * p->scale);
}

static void hold(struct dir *d, int64_t due, const char *buf, size_t len) {
    if (d->n == d->cap) {
        if (d->head > 0) { /* reuse the delivered front */
            memmove(d->q, d->q + d->head, (d->n - d->head) * sizeof *d->q);
            d->n -= d->head;
            d->head = 0;
        }
        if (d->n == d->cap) {
            size_t cap = d->cap ? d->cap * 2 : 8;
            struct held *w = realloc(d->q, cap * sizeof *w);
            if (!w) _exit(5);
            d->q = w;
            d->cap = cap;
        }
    }
    char *copy = malloc(len);
    if (!copy) _exit(5);
    memcpy(copy, buf, len);
    if (due < d->last_due) due = d->last_due; /* TCP keeps the order */
    d->last_due = due;
    d->q[d->n++] = (struct held){due, len, copy};
}

/* Deliver what is due on d; the earliest still held into *next. */
static void deliver(struct dir *d, int64_t now, int64_t *next) {
    while (d->head < d->n && d->q[d->head].due <= now) {
        struct held *h = &d->q[d->head++];
        size_t off = 0;
        while (off < h->len) {
            ssize_t w = write(d->to, h->data + off, h->len - off);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) break;
            off += (size_t)w;
        }
        free(h->data);
    }
    if (d->head < d->n && (*next == 0 || d->q[d->head].due < *next)) *next = d->q[d->head].due;
}

static void drain_ctl(struct pstate *p, int ctl) {
    struct proxy_ctl m;
    while (read(ctl, &m, sizeof m) == (ssize_t)sizeof m) {
        for (int i = 0; i < p->nlinks; i++)
            if (m.link < 0 || m.link == i) p->cut[i] = (char)m.cut;
    }
}

static void proxy_main(struct pstate *p, int ctl) {
    struct pollfd *pf = calloc((size_t)p->nlinks * 3 + 1, sizeof *pf);
    int cap = p->nlinks;
    p->c = calloc((size_t)cap, sizeof *p->c);
    if (!pf || !p->c) _exit(5);
    char buf[65536];
    for (;;) {
        int np = 0;
        pf[np++] = (struct pollfd){ctl, POLLIN, 0};
        for (int i = 0; i < p->nlinks; i++) pf[np++] = (struct pollfd){p->lfd[i], POLLIN, 0};
        for (int i = 0; i < p->nc; i++) {
            int off = p->c[i].eof || p->c[i].closed;
            pf[np++] = (struct pollfd){off ? -1 : p->c[i].d[0].from, POLLIN, 0};
            pf[np++] = (struct pollfd){off ? -1 : p->c[i].d[1].from, POLLIN, 0};
        }
        int64_t now = now_ns(), next = 0;
        for (int i = 0; i < p->nc; i++) {
            struct conn *c = &p->c[i];
            if (c->closed) continue;
            for (int k = 0; k < 2; k++) deliver(&c->d[k], now, &next);
            if (c->eof && c->d[0].head == c->d[0].n && c->d[1].head == c->d[1].n) {
                close(c->d[0].from);
                close(c->d[1].from);
                c->closed = 1;
            }
        }
        if (next && next - now < 1000000) { /* under a millisecond: sleep to it exactly */
            sleep_until(next);
            continue;
        }
        int timeout = next ? (int)((next - now) / 1000000) : 100;
        int r = poll(pf, (nfds_t)np, timeout);
        if (r < 0 && errno != EINTR) _exit(5);
        if (r <= 0) continue;
        if (pf[0].revents & (POLLIN | POLLHUP)) {
            if (pf[0].revents & POLLHUP && !(pf[0].revents & POLLIN)) _exit(0); /* the driver is gone */
            drain_ctl(p, ctl);
        }
        int polled = p->nc; /* the connections pf has entries for; those accepted now wait for the next round */
        for (int i = 0; i < p->nlinks; i++) {
            if (!(pf[1 + i].revents & POLLIN)) continue;
            int cfd = accept(p->lfd[i], NULL, NULL);
            if (cfd < 0) continue;
            int sfd = connect_to(p->link_port[i]);
            if (sfd < 0) {
                close(cfd);
                continue;
            }
            if (p->nc == cap) { /* a client opened its link again (after a request timeout) */
                struct conn *w = realloc(p->c, (size_t)cap * 2 * sizeof *w);
                struct pollfd *q = realloc(pf, ((size_t)cap * 4 + p->nlinks + 1) * sizeof *q);
                if (!w || !q) _exit(5);
                p->c = w;
                pf = q;
                cap *= 2;
            }
            int one = 1;
            setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            struct conn *c = &p->c[p->nc++];
            memset(c, 0, sizeof *c);
            c->link = i;
            c->d[0] = (struct dir){cfd, sfd, p->link_from[i], p->link_to[i], NULL, 0, 0, 0, 0, 0, 0};
            c->d[1] = (struct dir){sfd, cfd, p->link_to[i], p->link_from[i], NULL, 0, 0, 0, 0, 0, 0};
        }
        int base = 1 + p->nlinks;
        for (int i = 0; i < polled; i++) {
            struct conn *c = &p->c[i];
            for (int k = 0; k < 2 && !c->eof && !c->closed; k++) {
                if (!(pf[base + 2 * i + k].revents & (POLLIN | POLLHUP))) continue;
                /* A partition the driver set before this message was sent
                 * is in the pipe already: read it first. */
                drain_ctl(p, ctl);
                ssize_t got = read(c->d[k].from, buf, sizeof buf);
                if (got <= 0) { /* one side closed: the other is closed once what is held has gone */
                    c->eof = 1;
                    break;
                }
                struct dir *d = &c->d[k];
                /* HTTP: the rest of a message shares the fate of its start */
                int64_t delay = p->mode == REAL_PROXY_HTTP && d->begun ? d->msg_delay : next_delay(p, d, c->link);
                d->begun = 1;
                d->msg_delay = delay;
                if (delay >= 0) hold(&c->d[k], now_ns() + delay, buf, (size_t)got);
            }
        }
    }
}

int real_proxy_start(struct real_proxy *px, const struct scenario *s, const struct trace *sim,
                     const struct real_proxy_target *tg, int ntargets, int mode, double scale, char *err, size_t n) {
    memset(px, 0, sizeof *px);
    px->pid = 0;
    px->ctl = -1;
    struct pstate p;
    memset(&p, 0, sizeof p);
    p.s = s;
    p.scale = scale;
    p.mode = mode;
    p.nlinks = ntargets * s->nclients;
    p.lfd = calloc((size_t)p.nlinks, sizeof *p.lfd);
    p.link_from = calloc((size_t)p.nlinks, sizeof *p.link_from);
    p.link_to = calloc((size_t)p.nlinks, sizeof *p.link_to);
    p.link_port = calloc((size_t)p.nlinks, sizeof *p.link_port);
    p.cut = calloc((size_t)p.nlinks, 1);
    px->port = calloc((size_t)p.nlinks, sizeof *px->port);
    px->target_node = calloc((size_t)ntargets + 1, sizeof *px->target_node);
    px->nlinks = p.nlinks;
    px->ntargets = ntargets;
    int rc = 0;
    if (!p.lfd || !p.link_from || !p.link_to || !p.link_port || !p.cut || !px->port || !px->target_node ||
        delays_build(&p.dl, sim) != 0)
        rc = LSIM_ENOMEM;
    for (int k = 0; rc == 0 && k < ntargets; k++) px->target_node[k] = tg[k].node;
    p.used = calloc((size_t)sim->nnodes * (size_t)sim->nnodes + 1, sizeof *p.used);
    if (!p.used) rc = LSIM_ENOMEM;
    for (int i = 0; rc == 0 && i < p.nlinks; i++) p.lfd[i] = -1;
    for (int i = 0; rc == 0 && i < p.nlinks; i++) {
        p.link_from[i] = i / ntargets;
        p.link_to[i] = tg[i % ntargets].node;
        p.link_port[i] = tg[i % ntargets].port;
        p.lfd[i] = listen_any(&px->port[i]);
        if (p.lfd[i] < 0) {
            snprintf(err, n, "the loopback proxy could not listen on 127.0.0.1: %s", strerror(errno));
            rc = LSIM_EINTERNAL;
        }
    }
    int ctl[2] = {-1, -1};
    if (rc == 0 && pipe(ctl) != 0) {
        snprintf(err, n, "pipe: %s", strerror(errno));
        rc = LSIM_EINTERNAL;
    }
    if (rc == 0) {
        sigset_t all, old;
        sigfillset(&all);
        sigprocmask(SIG_BLOCK, &all, &old);
        pid_t pid = fork();
        if (pid == 0) {
            real_child_init(&old);
            close(ctl[1]);
            signal(SIGPIPE, SIG_IGN); /* a killed client's socket: the write fails, the proxy goes on */
            fcntl(ctl[0], F_SETFL, O_NONBLOCK);
            p.rng = ((uint64_t)now_ns() ^ (uint64_t)getpid() << 32) * 0x9E3779B97F4A7C15ull | 1;
            proxy_main(&p, ctl[0]);
            _exit(0);
        }
        if (pid > 0) redis_srv_guard_child(pid);
        sigprocmask(SIG_SETMASK, &old, NULL);
        if (pid < 0) {
            snprintf(err, n, "fork: %s", strerror(errno));
            rc = LSIM_EINTERNAL;
        }
        px->pid = pid > 0 ? pid : 0;
        close(ctl[0]);
        px->ctl = ctl[1];
    }
    /* The listening sockets are the proxy's now; the driver keeps the ports. */
    for (int i = 0; p.lfd && i < p.nlinks; i++)
        if (p.lfd[i] >= 0) close(p.lfd[i]);
    free(p.lfd);
    free(p.link_from);
    free(p.link_to);
    free(p.link_port);
    free(p.cut);
    free(p.used);
    delays_free(&p.dl);
    if (rc) real_proxy_stop(px);
    return rc;
}

void real_proxy_cut(struct real_proxy *px, int link, int cut) {
    if (px->ctl < 0) return;
    struct proxy_ctl m = {link, cut};
    ssize_t w;
    do w = write(px->ctl, &m, sizeof m);
    while (w < 0 && errno == EINTR);
}

/* The partition in force after fault f: each link whose client and target
 * are in different groups is cut, the others flow (nodes not named form one
 * more group, as in the simulator). */
void real_proxy_partition(struct real_proxy *px, const struct trace *sim, const struct scn_fault *f) {
    if (f->kind == SCN_FAULT_HEAL) {
        real_proxy_cut(px, -1, 0);
        return;
    }
    for (int i = 0; i < px->nlinks; i++) {
        int ends[2] = {i / px->ntargets, px->target_node[i % px->ntargets]}, grp[2];
        for (int e = 0; e < 2; e++) {
            grp[e] = f->ngroups; /* the implicit group */
            const char *name = ends[e] >= 0 ? sim->nodes[ends[e]].name : "";
            for (int g = 0; g < f->ngroups; g++)
                for (int k = 0; k < f->group_len[g]; k++)
                    if (strcmp(f->groups[g][k], name) == 0) grp[e] = g;
        }
        real_proxy_cut(px, i, grp[0] != grp[1]);
    }
}

void real_proxy_stop(struct real_proxy *px) {
    if (px->pid > 0) {
        kill(px->pid, SIGKILL);
        waitpid(px->pid, NULL, 0);
        redis_srv_guard_forget(px->pid);
    }
    if (px->ctl >= 0) close(px->ctl);
    free(px->port);
    free(px->target_node);
    memset(px, 0, sizeof *px);
    px->ctl = -1;
}
