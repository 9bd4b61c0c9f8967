/* The recording of a real run (real/real_int.h): the records the client
 * processes and the driver wrote, in real time, become a locksim trace in
 * scenario time (docs/trace-format.md), with grants numbered in the order
 * clients learnt them and each lease's expiry where PX promises it. */
#include "real_int.h"

#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "error.h"

int real_recs_add(struct recs *l, const struct rec *r) {
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

/* Every lease of the n server nodes that ran out by t, in time order. */
static void expire_until(struct trace *out, int n, int *owner, const sim_ns *expiry, sim_ns t) {
    for (;;) {
        int first = -1;
        for (int k = 0; k < n; k++)
            if (owner[k] >= 0 && expiry[k] && expiry[k] <= t && (first < 0 || expiry[k] < expiry[first])) first = k;
        if (first < 0) return;
        append_expire(out, expiry[first], first, owner[first]);
        owner[first] = -1;
    }
}

/* A span of the server's wall clock (ttl, ns), running at 1 + ppm/1e6,
 * in true time. */
static sim_ns by_true_time(sim_ns span, int64_t ppm) {
    return ppm ? (sim_ns)((double)span / (1.0 + (double)ppm / 1e6)) : span;
}

int real_record(const struct scenario *s, const struct trace *sim, const struct recs *l_, double scale,
                const char *server, int port, int srv_node, struct trace *out) {
    struct recs l = *l_; /* a copy of the handle: l_->v is sorted in place */
    int rc = 0;
    /* The recording, in scenario time. */
    qsort(l.v, l.n, sizeof *l.v, rec_cmp);
    struct trace_event ev;
    memset(&ev, 0, sizeof ev);
    ev.node = ev.peer = TRACE_NO_NODE;
    ev.kind = TRACE_RUN_START;
    ev.a = (int64_t)s->seed;
    ev.b = s->duration_ns;
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
             "recorded against %s on 127.0.0.1:%d, one process per client; time scale %g: t_ns is real "
             "elapsed time / %g",
             server, port, scale, scale);
    memset(&ev, 0, sizeof ev);
    ev.kind = TRACE_SRV_NOTE;
    ev.node = srv_node;
    ev.peer = TRACE_NO_NODE;
    ev.text = trace_intern(out, note, strlen(note));
    trace_append(out, &ev);
    /* Grants are numbered in the order the clients learnt them; the server's
     * expiry is PX's promise (grant or PEXPIRE time + TTL), not observed. */
    uint32_t grants = 0;
    uint32_t *grant = calloc((size_t)sim->nnodes, sizeof *grant);
    uint64_t *token = calloc((size_t)sim->nnodes, sizeof *token);
    int *in_cs = calloc((size_t)sim->nnodes, sizeof *in_cs);
    if (!grant || !token || !in_cs) rc = LSIM_ENOMEM;
    /* per server node (several for redlock): who holds its key, and until when */
    int *owner = malloc((size_t)sim->nnodes * sizeof *owner);
    sim_ns *expiry = calloc((size_t)sim->nnodes, sizeof *expiry);
    if (!owner || !expiry) rc = LSIM_ENOMEM;
    for (int k = 0; owner && k < sim->nnodes; k++) owner[k] = -1;
    /* per server node: its wall clock's rate error (clockctl.c), ppm */
    int64_t *rate_ppm = calloc((size_t)sim->nnodes, sizeof *rate_ppm);
    if (!rate_ppm) rc = LSIM_ENOMEM;
    sim_ns endt = s->duration_ns;
    for (size_t i = 0; i < l.n && rc == 0; i++) {
        const struct rec *r = &l.v[i];
        sim_ns t = (sim_ns)((double)r->t / scale);
        if (t > endt) break;
        expire_until(out, sim->nnodes, owner, expiry, t);
        int on_node = r->node >= 0 && r->node < sim->nnodes; /* a record about that node */
        if (r->kind == REC_CLOCK_RATE) {
            if (on_node) rate_ppm[r->node] = r->a; /* its wall clock runs at 1 + a/1e6 from now on */
            continue;
        }
        if (r->kind == REC_OBSERVED_TTL) {
            /* After a clock fault on server r->node Redis said what it keeps: gone,
             * or PTTL more by its clock (b, real ns), which is PTTL / rate by true time. */
            int k = r->node;
            if (on_node && owner[k] >= 0 && !r->a) {
                append_expire(out, t, k, owner[k]);
                owner[k] = -1;
            } else if (on_node && owner[k] >= 0) {
                expiry[k] = t + by_true_time((sim_ns)((double)r->b / scale), rate_ppm[k]);
            }
            continue;
        }
        if (r->kind == REC_OBSERVED_HOLD) {
            /* Redis says r->a holds the lock, which the recording had not
             * seen granted: its grant, as the server made it, now. */
            if (owner[srv_node] != r->a) {
                memset(&ev, 0, sizeof ev);
                ev.t = t;
                ev.kind = TRACE_SRV_GRANT;
                ev.node = srv_node;
                ev.peer = (int32_t)r->a;
                ev.a = (int64_t)((double)r->b / scale);
                trace_append(out, &ev);
                owner[srv_node] = (int)r->a;
                expiry[srv_node] = ev.a ? t + ev.a : 0;
            }
            continue;
        }
        if (r->kind == REC_READ_REFUSED) { /* the simulator's note, as engine_resource.c words it */
            memset(&ev, 0, sizeof ev);
            ev.t = t;
            ev.kind = TRACE_SRV_NOTE;
            ev.node = r->node;
            ev.peer = r->peer;
            ev.token = r->token;
            ev.grant = grant[r->node];
            ev.a = (int64_t)r->token;
            ev.b = r->a;
            const char *why = r->b == TRACE_WRITE_REJECTED_NOTOKEN
                                      ? "read refused by the resource: it carries no fencing token"
                                      : "read refused by the resource: its token is lower than one already seen";
            ev.text = trace_intern(out, why, strlen(why));
            trace_append(out, &ev);
            continue;
        }
        if (r->kind == REC_TAKEOVER || r->kind == REC_RENEW_LAPSED) { /* the simulator's notes (sim/algo/kv.c) */
            static const char took[] = "takes the lock over from its holder at once: a new epoch (takeover=on)";
            static const char lapsed[] = "renews a lapsed lease: nobody leased it since it expired (renew-expired=on)";
            const char *text = r->kind == REC_TAKEOVER ? took : lapsed;
            memset(&ev, 0, sizeof ev);
            ev.t = t;
            ev.kind = TRACE_SRV_NOTE;
            ev.node = r->node;
            ev.peer = TRACE_NO_NODE;
            ev.a = r->a;
            ev.b = r->b;
            ev.text = trace_intern(out, text, strlen(text));
            trace_append(out, &ev);
            continue;
        }
        int set = r->kind == REC_WRITE_SET; /* an absolute write, marked as the simulator marks it */
        memset(&ev, 0, sizeof ev);
        ev.t = t;
        ev.kind = (uint16_t)(set ? TRACE_WRITE : r->kind);
        if (set) ev.text = trace_intern(out, TRACE_WRITE_SET_TEXT, strlen(TRACE_WRITE_SET_TEXT));
        ev.node = r->node;
        ev.peer = r->peer;
        ev.token = r->token;
        ev.a = r->a;
        ev.b = r->b;
        int c = (ev.kind == TRACE_READ || ev.kind == TRACE_WRITE) ? r->peer : r->node;
        switch (ev.kind) {
        case TRACE_ACQUIRED:
            grant[c] = ++grants;
            token[c] = r->token;
            in_cs[c] = 1;
            ev.grant = grant[c];
            break;
        case TRACE_READ:
        case TRACE_WRITE:
        case TRACE_WRITE_SKIPPED: ev.grant = grant[c]; break;
        case TRACE_CS_EXIT:
            ev.grant = grant[c];
            in_cs[c] = 0;
            grant[c] = 0;
            break;
        case TRACE_SRV_GRANT:
        case TRACE_SRV_RENEW:
            owner[r->node] = r->peer;
            expiry[r->node] = r->a ? t + by_true_time(r->a, rate_ppm[r->node]) : 0;
            break;
        case TRACE_SRV_DELETE: owner[r->node] = -1; break;
        default: break;
        }
        trace_append(out, &ev);
        if (r->kind == TRACE_CRASH && sim->nodes[c].kind == TRACE_NODE_SERVER) owner[c] = -1; /* its keys died */
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
    if (rc == 0) expire_until(out, sim->nnodes, owner, expiry, endt);
    memset(&ev, 0, sizeof ev);
    ev.t = endt;
    ev.kind = TRACE_RUN_END;
    ev.node = ev.peer = TRACE_NO_NODE;
    ev.a = (int64_t)out->len;
    if (rc == 0) trace_append(out, &ev);
    free(grant);
    free(token);
    free(in_cs);
    free(owner);
    free(expiry);
    free(rate_ppm);
    if (rc == 0 && out->oom) rc = LSIM_ENOMEM;
    return rc;
}
