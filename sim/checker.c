/* The checker: safety and liveness findings from the global view of a run.
 *
 * Ground truth, not any node's belief: a client is in the critical section
 * from TRACE_ACQUIRED until TRACE_CS_EXIT, paused or not (a paused process
 * still believes it holds the lock, which is the whole problem). A write is
 * stale when another client holds a grant that the lock service made after
 * the writer's: grants are ordered as the service made them (for a quorum,
 * by the grant that completed it), not as the clients learnt of them. An
 * algorithm that takes no lock is judged by the resource's history alone. */
#include "checker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void note(struct checker *c, int kind, int node, int peer, uint32_t grant, uint64_t token, int64_t a, sim_ns t) {
    struct trace_event ev = {0};
    ev.t = t;
    ev.kind = (uint16_t)kind;
    ev.node = node;
    ev.peer = peer;
    ev.grant = grant;
    ev.token = token;
    ev.a = a;
    trace_append_own(c->tr, &ev);
}

int checker_init(struct checker *c, struct trace *tr, enum scn_purpose purpose, sim_ns stuck_after_ns) {
    memset(c, 0, CHECKER_CLEARED);
    c->tr = tr;
    c->purpose = purpose;
    c->stuck_after_ns = stuck_after_ns;
    c->nnodes = tr->nnodes;
    c->cl = malloc((size_t)(c->nnodes ? c->nnodes : 1) * sizeof *c->cl);
    c->flags = calloc((size_t)(c->nnodes ? c->nnodes : 1), sizeof *c->flags);
    if (!c->cl || !c->flags) {
        checker_close(c);
        return -1;
    }
    /* Lock holders: one entry per node from the first lock server to the last. */
    int first = -1, last = -2;
    for (int i = 0; i < c->nnodes; i++) {
        c->cl[i].cs_since = c->cl[i].wait_since = c->cl[i].waited_ns = -1;
        if (tr->nodes[i].kind == TRACE_NODE_CLIENT) c->flags[i] = CHECKER_CLIENT;
        if (tr->nodes[i].kind == TRACE_NODE_SERVER) {
            if (first < 0) first = i;
            last = i;
        }
    }
    c->hold_first = first < 0 ? 0 : first;
    c->nhold = last - first + 1 > 0 ? last - first + 1 : 0;
    if (c->nhold && !(c->hold = malloc((size_t)c->nhold * sizeof *c->hold))) {
        checker_close(c);
        return -1;
    }
    for (int i = 0; i < c->nhold; i++) c->hold[i].owner = -1;
    c->de_since = -1;
    c->unavail_since = -1;
    c->de_first = c->de_second = -1;
    c->c1 = c->rc1 = -1;
    c->quorum = 1;
    c->r.purpose = purpose;
    c->r.de_first_from_ns = c->r.de_first_to_ns = -1;
    return 0;
}

int checker_watch(struct checker *c, int node) {
    if (node < 0 || node >= c->nnodes || !(c->flags[node] & CHECKER_CLIENT)) return -1;
    if (c->flags[node] & CHECKER_WATCHED) return 0;
    if (c->r.nfacts == SCN_MAX_EXPECT_CLIENTS) return -1;
    struct checker_fact *f = &c->r.facts[c->r.nfacts++];
    memset(f, 0, sizeof *f);
    f->node = node;
    f->first_acquired = -1;
    c->flags[node] |= CHECKER_WATCHED;
    return 0;
}

const struct checker_fact *checker_fact_of(const struct checker_report *r, int node) {
    for (int i = 0; i < r->nfacts; i++)
        if (r->facts[i].node == node) return &r->facts[i];
    return NULL;
}

/* The facts of a node whose CHECKER_WATCHED bit is set. */
static struct checker_fact *fact(struct checker *c, int node) {
    return (struct checker_fact *)checker_fact_of(&c->r, node);
}

void checker_close(struct checker *c) {
    free(c->cl);
    free(c->flags);
    free(c->crash);
    free(c->hold);
    free(c->read_version);
    c->read_version = NULL;
    c->cl = NULL;
    c->flags = NULL;
    c->crash = NULL;
    c->hold = NULL;
    c->ncrash = c->capcrash = c->nhold = 0;
}

/* The crash entry of node n, or NULL when it has none. */
static struct checker_crash *crash_of(const struct checker *c, int n) {
    if (!(c->flags[n] & CHECKER_CRASHED)) return NULL;
    for (int i = 0; i < c->ncrash; i++)
        if (c->crash[i].node == n) return &c->crash[i];
    return NULL;
}

/* The crash entry of node n, made on first use; NULL on OOM (then the
 * crash is not counted and the trace is marked as short of memory). */
static struct checker_crash *crash_entry(struct checker *c, int n) {
    struct checker_crash *k = crash_of(c, n);
    if (k) return k;
    if (c->ncrash == c->capcrash) {
        int cap = c->capcrash ? c->capcrash * 2 : 8;
        struct checker_crash *a = realloc(c->crash, (size_t)cap * sizeof *a);
        if (!a) {
            c->tr->oom = 1;
            return NULL;
        }
        c->crash = a;
        c->capcrash = cap;
    }
    k = &c->crash[c->ncrash++];
    k->node = n;
    k->crashed_at = k->restarted_at = -1;
    c->flags[n] |= CHECKER_CRASHED;
    return k;
}

/* The hold entry of node n; NULL when n has none (it never recorded a
 * grant and is not a lock server). */
static struct checker_hold *hold_of(const struct checker *c, int n) {
    int i = n - c->hold_first;
    return i >= 0 && i < c->nhold ? &c->hold[i] : NULL;
}

/* The hold entry of node n, widening the range for a node outside it (a
 * trace in which something else than a lock server records grants); NULL on OOM. */
static struct checker_hold *hold_entry(struct checker *c, int n) {
    struct checker_hold *h = hold_of(c, n);
    if (h) return h;
    int first = c->nhold && c->hold_first < n ? c->hold_first : n;
    int last = c->nhold && c->hold_first + c->nhold - 1 > n ? c->hold_first + c->nhold - 1 : n;
    struct checker_hold *a = malloc((size_t)(last - first + 1) * sizeof *a);
    if (!a) {
        c->tr->oom = 1;
        return NULL;
    }
    for (int i = 0; i < last - first + 1; i++) a[i].owner = -1;
    if (c->nhold) memcpy(&a[c->hold_first - first], c->hold, (size_t)c->nhold * sizeof *a);
    free(c->hold);
    c->hold = a;
    c->hold_first = first;
    c->nhold = last - first + 1;
    return &c->hold[n - first];
}

/* Log-linear histogram: 32 sub-buckets per power of two (about 3% wide). */
static int bucket_of(sim_ns v) {
    if (v < 32) return (int)(v < 0 ? 0 : v);
    int msb = 63 - __builtin_clzll((unsigned long long)v);
    int sub = (int)((v >> (msb - 5)) & 31);
    int b = (msb - 4) * 32 + sub;
    return b < CHECKER_HIST_BUCKETS ? b : CHECKER_HIST_BUCKETS - 1;
}

static sim_ns bucket_floor(int b) {
    if (b < 32) return b;
    int msb = b / 32 + 4;
    return ((sim_ns)(32 + b % 32)) << (msb - 5);
}

static void record_latency(struct checker *c, sim_ns v) {
    if (c->nlat < CHECKER_EXACT_SAMPLES) {
        c->exact[c->nlat] = v;
    } else {
        if (c->nlat == CHECKER_EXACT_SAMPLES) { /* the first overflow: the histogram starts */
            memset(c->hist, 0, sizeof c->hist);
            for (int k = 0; k < CHECKER_EXACT_SAMPLES; k++) c->hist[bucket_of(c->exact[k])]++;
        }
        c->hist[bucket_of(v)]++;
    }
    c->nlat++;
    if (v > c->r.acquire_max_ns) c->r.acquire_max_ns = v;
}

static int cmp_ns(const void *a, const void *b) {
    sim_ns x = *(const sim_ns *)a, y = *(const sim_ns *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile: exact while every sample is kept, else the floor
 * of the histogram bucket that holds it. */
static sim_ns percentile(struct checker *c, int pct) {
    if (c->nlat == 0) return 0;
    int64_t rank = (c->nlat * pct + 99) / 100;
    if (rank < 1) rank = 1;
    if (c->nlat <= CHECKER_EXACT_SAMPLES) {
        sim_ns sorted[CHECKER_EXACT_SAMPLES];
        memcpy(sorted, c->exact, (size_t)c->nlat * sizeof *sorted);
        qsort(sorted, (size_t)c->nlat, sizeof *sorted, cmp_ns);
        return sorted[rank - 1];
    }
    int64_t seen = 0;
    for (int b = 0; b < CHECKER_HIST_BUCKETS; b++) {
        seen += c->hist[b];
        if (seen >= rank) return bucket_floor(b);
    }
    return c->r.acquire_max_ns;
}

_Static_assert(sizeof(struct checker_client) == 32, "the checker's per-node memory stays 32 bytes");

/* Fenced out: a client whose grant had not been superseded when it wrote
 * (so no stale write), and whose every write under that grant the fence
 * refused (stale token or no token: a token rule, not a database's
 * condition, constraint or key, whose refusals are the algorithm working).
 * etcd's contrib/lock storage does it to every holder after the first
 * writer (fenced-lease compare=first). fence_note records one write of the
 * current grant; fence_settle decides a grant once it is over (a new grant
 * of the client, or the end of the run). */
static int is_down(const struct checker *c, int n);

/* Whether the lock service still records n as a holder: some lock server's
 * key is n's. 1 also when no server has recorded any grant (the trace
 * cannot tell). */
static int service_holds(const struct checker *c, int n) {
    if (!c->srv_grants) return 1;
    for (int i = 0; i < c->nhold; i++)
        if (c->hold[i].owner == n) return 1;
    return 0;
}

static void fence_note(struct checker *c, int writer, int stale, int64_t result) {
    /* A refusal shuts no one out when its writer is gone (crashed since, and
     * not back) or no longer holds the lock as the service records it (its
     * lease or session ended, and nobody took the lock since): the fence is
     * right, and the client can ask for the lock again. */
    if (result != TRACE_WRITE_ACCEPTED && (is_down(c, writer) || !service_holds(c, writer))) return;
    if (result == TRACE_WRITE_ACCEPTED) c->flags[writer] |= CHECKER_FENCE_ACCEPTED;
    else if (!stale && (result == TRACE_WRITE_REJECTED_STALE || result == TRACE_WRITE_REJECTED_NOTOKEN))
        c->flags[writer] |= CHECKER_FENCE_REFUSED;
}

static void fence_settle(struct checker *c, int n) {
    unsigned char f = c->flags[n];
    if ((f & CHECKER_FENCE_REFUSED) && !(f & CHECKER_FENCE_ACCEPTED) && !(f & CHECKER_FENCED_OUT)) {
        c->flags[n] |= CHECKER_FENCED_OUT;
        c->r.fenced_out++;
        if (c->flags[n] & CHECKER_WATCHED) fact(c, n)->fenced_out = 1;
    }
    c->flags[n] &= (uint16_t) ~(CHECKER_FENCE_REFUSED | CHECKER_FENCE_ACCEPTED);
}

static int is_client(const struct checker *c, int node) {
    return node >= 0 && node < c->nnodes && (c->flags[node] & CHECKER_CLIENT); /* no miss into the trace */
}

/* ---- The lock service's own grant order --------------------------------
 * A grant of the service is a server grant (srv-grant) to a client, or, for
 * a quorum service (resource-init's grant: Redlock), the server grant that
 * makes the quorum'th server holding for that client: the instant a
 * majority had granted. Consensus servers record a grant when the leader
 * applies the committed entry, so their order is the commit order. Each
 * grant of the service gets the next rank; the client carries it into the
 * critical section when it learns of the grant (acquired). An acquisition
 * without any server grant before it (algorithms whose servers record
 * none) is ranked when the client learns of it. Equal times keep the
 * trace's order. */
static void service_grant(struct checker *c, int owner, int previous_owner) {
    if (!is_client(c, owner) || previous_owner == owner) return; /* a re-grant is no new grant */
    if (c->quorum > 1) {
        int n = 0;
        for (int i = 0; i < c->nhold; i++) n += c->hold[i].owner == owner;
        if (n != c->quorum) return; /* short of a quorum, or past the grant that completed it */
    }
    c->cl[owner].rank = ++c->next_rank;
    c->cl[owner].grant = 0;
    c->flags[owner] |= CHECKER_PENDING;
}

/* The client learnt of its grant: its rank (from the service, or now). */
static void rank_acquired(struct checker *c, int n, uint32_t grant) {
    struct checker_client *me = &c->cl[n];
    if (c->flags[n] & CHECKER_PENDING) c->flags[n] &= (uint16_t)~CHECKER_PENDING;
    else me->rank = ++c->next_rank;
    me->grant = grant;
    if (me->rank > c->r1) {
        if (n != c->rc1) c->r2 = c->r1;
        c->r1 = me->rank;
        c->rc1 = n;
    } else if (n != c->rc1 && me->rank > c->r2) {
        c->r2 = me->rank;
    }
}

/* A write under grant by writer is stale: another client has acquired a
 * grant the service made after the writer's. A write under an earlier grant
 * of the writer's than its latest (a write delayed past its own next
 * acquisition) is judged by the order clients learnt of grants, the one
 * order the checker keeps for old grants. */
static int write_is_stale(const struct checker *c, int writer, uint32_t grant) {
    if (!grant || !is_client(c, writer)) return 0;
    const struct checker_client *w = &c->cl[writer];
    if (grant == w->grant && !(c->flags[writer] & CHECKER_PENDING)) return (writer == c->rc1 ? c->r2 : c->r1) > w->rank;
    return (writer == c->c1 ? c->g2 : c->g1) > grant;
}

/* The rank of an operation under grant by node: its grant's place in the
 * service's order, or 0 when the checker does not know it (no grant, a grant
 * the client has not learnt yet, or an earlier grant than its latest). */
static uint32_t op_rank(const struct checker *c, int node, uint32_t grant) {
    if (!grant || !is_client(c, node)) return 0;
    const struct checker_client *w = &c->cl[node];
    return grant == w->grant && !(c->flags[node] & CHECKER_PENDING) ? w->rank : 0;
}

/* A resource with a rule that orders writers (fencing tokens, sequencers,
 * the algorithm's own check, the lock service's owner) is judged by the
 * order its operations reached it in, which is what the rule can enforce:
 * a write under a superseded grant that lands before any operation under a
 * newer grant (a read or an accepted write) is ordered before the new
 * holder's whole critical section, as if it had landed in time. It is a
 * late write, not a stale one: the resource's history is in grant order and
 * nothing the new holder did was computed without it. A plain resource has
 * nothing that orders writers, so there a write under a superseded grant is
 * stale wherever it lands, unless it is absolute (write set=V): it read
 * nothing a newer holder wrote, so landing first harms nothing on any
 * resource. A write whose grant the checker cannot rank (an earlier grant
 * of the writer's own) stays stale. */
static int write_is_late(const struct checker *c, uint32_t rank, int absolute) {
    return (c->r.fenced || absolute) && !c->r.lock_free && rank && c->seen_rank <= rank;
}

static void enter_cs(struct checker *c, const struct trace_event *ev) {
    struct checker_client *me = &c->cl[ev->node];
    if (me->cs_since >= 0) return;
    me->cs_since = ev->t;
    c->in_cs++;
    rank_acquired(c, ev->node, ev->grant);
    /* The newest grant and the newest grant of any other client, as learnt. */
    if (ev->node != c->c1) c->g2 = c->g1;
    c->g1 = ev->grant;
    c->c1 = ev->node;
    if (c->in_cs == 2) {
        int other = -1;
        for (int i = 0; i < c->nnodes; i++)
            if (i != ev->node && c->cl[i].cs_since >= 0 && is_client(c, i)) {
                other = i;
                break;
            }
        /* Announced once true time moves on with both still inside (see
         * flush_double_entry): an overlap of zero length, one leaving at the
         * instant the other enters, is not a double entry. */
        c->de_since = ev->t;
        c->de_first = ev->node;
        c->de_second = other;
        c->de_announced = 0;
    }
}

static void leave_cs(struct checker *c, int node, sim_ns t) {
    struct checker_client *me = &c->cl[node];
    if (me->cs_since < 0) return;
    me->cs_since = -1;
    c->in_cs--;
    if (c->in_cs == 1 && c->de_since >= 0) {
        sim_ns len = t - c->de_since;
        if (c->de_announced) {
            c->r.double_entry_ns += len;
            if (c->r.de_first_from_ns < 0) {
                c->r.de_first_from_ns = c->de_since;
                c->r.de_first_to_ns = t;
            }
            note(c, TRACE_DOUBLE_ENTRY_END, c->de_first, c->de_second, 0, 0, len, t);
        }
        c->de_since = -1;
    }
}

/* Two or more have been inside since de_since and time has moved past it:
 * now it is a double entry (announced at the instant it began). */
static void flush_double_entry(struct checker *c, sim_ns now) {
    if (c->de_since < 0 || c->de_announced || now <= c->de_since) return;
    c->de_announced = 1;
    c->r.double_entries++;
    note(c, TRACE_DOUBLE_ENTRY_BEGIN, c->de_first, c->de_second, 0, 0, 0, c->de_since);
}

void checker_advance(void *arg, sim_ns t) { flush_double_entry(arg, t); }

/* ---- Algorithms that take no lock ---------------------------------------
 * No grant to be stale under: a run is judged by the resource's history,
 * whether it equals a serial order of the clients' read-modify-writes (no
 * accepted write computed from an overtaken read; each accepted write sold
 * one unit that the stock shows: no lost update, no double sale). Two
 * clients in the critical section at once is no violation but duplicated
 * work: a write the algorithm's rule refused (an UPDATE ... WHERE version
 * that matched 0 rows, an INSERT that violated UNIQUE, a key already
 * applied) was work done for nothing. */
static void lock_free_refused(struct checker *c, int64_t result) {
    if (result == TRACE_WRITE_REJECTED_COND || result == TRACE_WRITE_REJECTED_UNIQUE ||
        result == TRACE_WRITE_REJECTED_DUPLICATE)
        c->r.duplicated_work++;
}

/* The serial-order test, exactly: the resource's version counts its accepted
 * writes (from 0); an accepted write is in a serial order of read-modify-
 * writes only if no accepted write came between its read and it, that is,
 * if the version its writer last read is the version it replaces. Called
 * before the write is counted. */
static void lock_free_accepted(struct checker *c, int writer) {
    if (!c->read_version || !is_client(c, writer)) return;
    if (c->read_version[writer] != c->r.writes_accepted) c->r.non_serial_writes++;
}

static void lock_free_begin(struct checker *c) {
    if (c->read_version) return;
    c->read_version = calloc((size_t)(c->nnodes ? c->nnodes : 1), sizeof *c->read_version);
    if (!c->read_version) c->tr->oom = 1; /* then the exact test is off; lost updates still count */
}

/* Progress beside safety: a client acquiring (wait_begin .. wait_end),
 * and the time in which someone is acquiring and no one is in the critical
 * section, which is when the lock is unavailable to those who want it (a
 * holder that crashed, a store that refuses, a cluster with no leader). */
static void wait_begin(struct checker *c, int n, sim_ns t) {
    if (c->cl[n].wait_since < 0) c->nwait++;
    c->cl[n].wait_since = t;
    c->flags[n] |= CHECKER_TRIED;
}

static void wait_end(struct checker *c, int n) {
    if (c->cl[n].wait_since >= 0) c->nwait--;
    c->cl[n].wait_since = -1;
}

static void unavailable_note(struct checker *c, sim_ns t) {
    int unavailable = c->nwait > 0 && c->in_cs == 0;
    if (unavailable && c->unavail_since < 0) {
        c->unavail_since = t;
    } else if (!unavailable && c->unavail_since >= 0) {
        c->r.unavailable_ns += t - c->unavail_since;
        c->unavail_since = -1;
    }
}

/* The headline's progress clause for a run that is SAFE but where clients
 * wanted the lock and never got it: ", but B never acquired (18 attempts
 * refused)". Empty when every client that tried acquired. */
static void starved_clause(const struct checker *c, char *out, size_t n) {
    const struct checker_report *r = &c->r;
    out[0] = 0;
    if (!r->starved) return;
    int first = -1, second = -1;
    for (int i = 0; i < c->nnodes && second < 0; i++)
        if ((c->flags[i] & (CHECKER_TRIED | CHECKER_GOT)) == CHECKER_TRIED) {
            if (first < 0) first = i;
            else second = i;
        }
    char who[64];
    if (!r->acquires) snprintf(who, sizeof who, "no client ever acquired the lock");
    else if (r->starved == 1) snprintf(who, sizeof who, "%s never acquired", c->tr->nodes[first].name);
    else if (r->starved == 2)
        snprintf(who, sizeof who, "%s and %s never acquired", c->tr->nodes[first].name, c->tr->nodes[second].name);
    else snprintf(who, sizeof who, "%lld clients never acquired", (long long)r->starved);
    if (r->denied_attempts)
        snprintf(out, n, ", but %s (%lld attempt%s refused)", who, (long long)r->denied_attempts,
                 r->denied_attempts == 1 ? "" : "s");
    else snprintf(out, n, ", but %s", who);
}

/* The case labels of the kinds the map marks unchecked (not in
 * CHECKER_KINDS), for checker_observe's switch (see checker.h). */
#define UNCHECKED_CASE_0_(name) case TRACE_##name:
#define UNCHECKED_CASE_1_(name)
#define UNCHECKED_CASE_(name, word, finding, checked) UNCHECKED_CASE_##checked##_(name)

/* A client got the lock: its wait ends, its facts, its critical section. */
static void observe_acquired(struct checker *c, const struct trace_event *ev) {
    int n = ev->node;
    c->r.acquires++;
    fence_settle(c, n);
    if (c->cl[n].wait_since >= 0) record_latency(c, ev->t - c->cl[n].wait_since);
    wait_end(c, n);
    c->flags[n] |= CHECKER_GOT;
    if (c->flags[n] & CHECKER_WATCHED) {
        struct checker_fact *f = fact(c, n);
        if (f->first_acquired < 0) {
            f->first_acquired = ev->t;
            f->first_token = ev->token;
        }
    }
    enter_cs(c, ev);
}

/* A server granted the lock to ev->peer (n is a node of the trace). */
static void observe_grant(struct checker *c, const struct trace_event *ev) {
    struct checker_hold *h = hold_entry(c, ev->node);
    if (!h) return;
    int previous = h->owner;
    c->srv_grants = 1;
    h->owner = ev->peer;
    h->since = ev->t;
    service_grant(c, ev->peer, previous);
}

/* A write reached the resource, accepted or not: the stock, the writer's
 * facts, and whether it was stale (or late, and harmless). */
static void observe_write(struct checker *c, const struct trace_event *ev) {
    int writer = ev->peer;
    int accepted = ev->b == TRACE_WRITE_ACCEPTED;
    /* An absolute write (set=V) reads nothing that another write could
     * overtake, sells nothing, and starts the stock account again at V;
     * one that leaves the value as it was is work repeated, not harm. */
    int absolute = trace_write_is_set(ev->text);
    int repeated = accepted && absolute && ev->a == c->r.final_stock;
    if (accepted && c->r.lock_free && !absolute) lock_free_accepted(c, writer);
    if (accepted) {
        c->r.writes_accepted++;
        c->r.final_stock = ev->a;
        if (absolute) {
            c->base_stock = ev->a;
            c->base_writes = c->r.writes_accepted;
        }
        if (repeated) c->r.repeated_writes++;
    } else {
        c->r.writes_rejected++;
    }
    struct checker_fact *f = is_client(c, writer) && (c->flags[writer] & CHECKER_WATCHED) ? fact(c, writer) : NULL;
    if (f) {
        if (accepted) f->writes_accepted++;
        else f->writes_rejected++;
    }
    if (c->r.lock_free) {
        if (!accepted) lock_free_refused(c, ev->b);
    } else {
        int stale = !repeated && write_is_stale(c, writer, ev->grant);
        uint32_t rank = op_rank(c, writer, ev->grant);
        if (stale && accepted && write_is_late(c, rank, absolute)) {
            stale = 0;
            c->r.late_writes++;
            note(c, TRACE_LATE_WRITE, writer, TRACE_NO_NODE, ev->grant, ev->token, 1, ev->t);
        }
        if (accepted && rank > c->seen_rank) c->seen_rank = rank;
        if (is_client(c, writer) && ev->grant) fence_note(c, writer, stale, ev->b);
        if (stale) {
            if (accepted) c->r.stale_accepted++;
            else c->r.stale_rejected++;
            if (f && accepted) f->stale_accepted++;
            else if (f) f->stale_rejected++;
            note(c, TRACE_STALE_WRITE, writer, TRACE_NO_NODE, ev->grant, ev->token, accepted, ev->t);
        }
    }
}

void checker_observe(void *arg, const struct trace_event *ev) {
    struct checker *c = arg;
    int n = ev->node;
    switch ((enum trace_kind)ev->kind) {
    case TRACE_RESOURCE_INIT:
        c->r.initial_stock = c->r.final_stock = c->base_stock = ev->a;
        c->r.resource_rule = (enum trace_rule)ev->b;
        c->r.fenced = ev->b != TRACE_RULE_PLAIN;
        c->r.lock_free = ev->b == TRACE_RULE_NO_LOCK;
        c->quorum = ev->grant > 1 ? (int)ev->grant : 1;
        if (c->r.lock_free) lock_free_begin(c);
        break;
    case TRACE_READ: {
        uint32_t rank = op_rank(c, ev->peer, ev->grant);
        if (rank > c->seen_rank) c->seen_rank = rank;
        if (c->read_version && is_client(c, ev->peer)) c->read_version[ev->peer] = ev->b;
        break;
    }
    case TRACE_ACQUIRE_START:
        if (is_client(c, n)) {
            wait_begin(c, n, ev->t);
            c->cl[n].waited_ns = -1;
        }
        break;
    case TRACE_ACQUIRED:
        if (is_client(c, n)) observe_acquired(c, ev);
        break;
    case TRACE_ACQUIRE_DENIED: c->r.denied_attempts++; break;
    case TRACE_ACQUIRE_FAILED:
        if (!is_client(c, n)) break;
        c->r.failed_acquires++;
        if (c->cl[n].wait_since >= 0) c->cl[n].waited_ns = ev->t - c->cl[n].wait_since;
        wait_end(c, n);
        break;
    case TRACE_CS_EXIT:
        if (is_client(c, n)) leave_cs(c, n, ev->t);
        break;
    case TRACE_CRASH:
        if (n >= 0 && n < c->nnodes) {
            struct checker_crash *k = crash_entry(c, n);
            struct checker_hold *h = hold_of(c, n);
            if (k) k->crashed_at = ev->t;
            wait_end(c, n);
            if (h && c->tr->nodes[n].kind == TRACE_NODE_SERVER) h->owner = -1;
        }
        break;
    case TRACE_RESTART:
        if (n >= 0 && n < c->nnodes) {
            struct checker_crash *k = crash_entry(c, n);
            if (k) k->restarted_at = ev->t;
        }
        break;
    case TRACE_SRV_GRANT:
        if (n >= 0 && n < c->nnodes) observe_grant(c, ev);
        break;
    case TRACE_SRV_EXPIRE:
        if (n >= 0 && n < c->nnodes) {
            struct checker_hold *h = hold_of(c, n);
            if (h && h->owner == ev->peer) h->owner = -1;
        }
        break;
    case TRACE_SRV_DELETE:
        if (n >= 0 && n < c->nnodes) {
            struct checker_hold *h = hold_of(c, n);
            if (h) h->owner = -1;
            if (ev->b) {
                c->r.wrong_releases++;
                note(c, TRACE_WRONG_RELEASE, ev->peer, (int)ev->a, 0, 0, 0, ev->t);
            }
        }
        break;
    case TRACE_WRITE:
        observe_write(c, ev);
        break;
        TRACE_KIND_MAP(UNCHECKED_CASE_)
        break;
    }
    unavailable_note(c, ev->t);
}

/* Whether the process that a grant was made for is gone: it crashed after
 * the grant, or it was already down when the grant (a request still in
 * flight) arrived and has not come back. A restarted process is a new
 * incarnation that does not know the old one's lock either way. */
static int owner_dead(const struct checker *c, int o, sim_ns since) {
    const struct checker_crash *k = crash_of(c, o);
    if (!k || k->crashed_at < 0) return 0;
    return k->crashed_at >= since || k->restarted_at < k->crashed_at;
}

/* A node that crashed and has not restarted since. */
static int is_down(const struct checker *c, int n) {
    const struct checker_crash *k = crash_of(c, n);
    return k && k->crashed_at >= 0 && k->restarted_at < k->crashed_at;
}

/* A lock server still holds the lock for a dead owner. */
static int dead_owner_holds(const struct checker *c) {
    for (int s = 0; s < c->nhold; s++) {
        int o = c->hold[s].owner;
        if (o >= 0 && o < c->nnodes && owner_dead(c, o, c->hold[s].since)) return 1;
    }
    return 0;
}

void checker_finish(struct checker *c, sim_ns end_ns, struct checker_report *out) {
    struct checker_report *r = &c->r;
    flush_double_entry(c, end_ns);
    for (int i = 0; i < c->nnodes; i++)
        if (c->cl[i].cs_since >= 0) leave_cs(c, i, end_ns);
    r->end_ns = end_ns;
    unavailable_note(c, end_ns);
    if (c->unavail_since >= 0) r->unavailable_ns += end_ns - c->unavail_since;
    c->unavail_since = -1;
    for (int i = 0; i < c->nnodes; i++) {
        if (!is_client(c, i)) continue;
        fence_settle(c, i);
        if ((c->flags[i] & (CHECKER_TRIED | CHECKER_GOT)) == CHECKER_TRIED) r->starved++;
    }
    int dead = dead_owner_holds(c);
    for (int i = 0; i < c->nnodes; i++) {
        if (!is_client(c, i) || is_down(c, i)) continue; /* a client that is down is not waiting */
        sim_ns waited = c->cl[i].wait_since >= 0  ? end_ns - c->cl[i].wait_since
                        : c->cl[i].waited_ns >= 0 ? c->cl[i].waited_ns
                                                  : 0;
        if (dead && waited >= c->stuck_after_ns && c->stuck_after_ns > 0) r->stuck++;
    }
    int64_t sold = r->writes_accepted - c->base_writes; /* each read-modify-write since reserves one unit */
    int64_t lost = sold - (c->base_stock - r->final_stock);
    r->lost_updates = lost > 0 ? lost : 0;
    r->acquire_p50_ns = percentile(c, 50);
    r->acquire_p99_ns = percentile(c, 99);

    int correctness = r->purpose == SCN_PURPOSE_CORRECTNESS;
    int unprotected_overlap = correctness && !r->fenced && (r->double_entries || r->wrong_releases);
    if (r->stale_accepted || r->lost_updates || r->non_serial_writes || unprotected_overlap) {
        r->verdict = SCN_VERDICT_UNSAFE;
        if (r->non_serial_writes && !r->lost_updates)
            snprintf(r->headline, sizeof r->headline,
                     "UNSAFE: %lld accepted write%s computed from a read another write had overtaken: "
                     "no serial order gives this history",
                     (long long)r->non_serial_writes, r->non_serial_writes == 1 ? " was" : "s were");
        else if (r->lost_updates)
            snprintf(r->headline, sizeof r->headline,
                     "UNSAFE: %lld unit%s sold that the stock does not show (lost update)", (long long)r->lost_updates,
                     r->lost_updates == 1 ? "" : "s");
        else if (r->stale_accepted)
            snprintf(r->headline, sizeof r->headline,
                     "UNSAFE: the resource accepted %lld write%s from a holder whose lock had passed to another",
                     (long long)r->stale_accepted, r->stale_accepted == 1 ? "" : "s");
        else if (r->double_entries)
            snprintf(r->headline, sizeof r->headline,
                     "UNSAFE: two clients were in the critical section at once and nothing fenced them");
        else snprintf(r->headline, sizeof r->headline, "UNSAFE: a release deleted another client's lock");
    } else if (r->stuck) {
        r->verdict = SCN_VERDICT_STUCK;
        snprintf(r->headline, sizeof r->headline,
                 "STUCK: %lld client%s waited past %llds on a lock held by a crashed owner", (long long)r->stuck,
                 r->stuck == 1 ? "" : "s", (long long)(c->stuck_after_ns / 1000000000));
    } else if (r->fenced_out) {
        r->verdict = SCN_VERDICT_STUCK;
        snprintf(r->headline, sizeof r->headline,
                 "STUCK: %lld client%s fenced out: the resource refused every write made under a "
                 "grant no one had superseded",
                 (long long)r->fenced_out, r->fenced_out == 1 ? "" : "s");
    } else {
        r->verdict = SCN_VERDICT_SAFE;
        if (r->lock_free)
            snprintf(r->headline, sizeof r->headline,
                     "SAFE: no lock taken, and the %lld accepted write%s a serial order (no lost update); "
                     "%lld refused write%s of duplicated work",
                     (long long)r->writes_accepted, r->writes_accepted == 1 ? " is" : "s are",
                     (long long)r->duplicated_work, r->duplicated_work == 1 ? "" : "s");
        else if (r->double_entries && !correctness && r->repeated_writes)
            snprintf(r->headline, sizeof r->headline,
                     "SAFE: double execution happened (%lld time%s) and %lld write%s repeated a value already "
                     "written: wasted work, no harm (the lock is for efficiency)",
                     (long long)r->double_entries, r->double_entries == 1 ? "" : "s", (long long)r->repeated_writes,
                     r->repeated_writes == 1 ? "" : "s");
        else if (r->double_entries && !correctness)
            snprintf(r->headline, sizeof r->headline,
                     "SAFE: double execution happened (%lld time%s) but the lock is for efficiency: wasted work, no "
                     "harm",
                     (long long)r->double_entries, r->double_entries == 1 ? "" : "s");
        else if (r->double_entries && r->late_writes && !r->stale_rejected)
            snprintf(r->headline, sizeof r->headline,
                     "SAFE: two clients overlapped; %lld late write%s reached the resource before any "
                     "operation of the newer grant, so its history stays in grant order",
                     (long long)r->late_writes, r->late_writes == 1 ? "" : "s");
        else if (r->double_entries && r->stale_rejected)
            snprintf(r->headline, sizeof r->headline,
                     "SAFE: two clients overlapped, and the resource rejected every stale write (%lld)",
                     (long long)r->stale_rejected);
        else if (r->double_entries)
            snprintf(r->headline, sizeof r->headline,
                     "SAFE: two clients overlapped, but no stale write reached the resource");
        else snprintf(r->headline, sizeof r->headline, "SAFE: never more than one client in the critical section");
        char but[120];
        starved_clause(c, but, sizeof but);
        if (but[0] && !r->lock_free && !r->acquires) {
            snprintf(r->headline, sizeof r->headline, "SAFE%s: nothing ran, so nothing could go wrong", but);
        } else if (but[0] && !r->lock_free) {
            char both[sizeof r->headline + sizeof but + 8];
            snprintf(both, sizeof both, "SAFE%s: %s", but, r->headline + strlen("SAFE: "));
            snprintf(r->headline, sizeof r->headline, "%.*s", (int)sizeof r->headline - 1, both);
        }
    }
    *out = *r;
}

int64_t checker_metric(const struct checker_report *r, enum scn_metric m) {
    switch (m) {
#define METRIC_CASE_(e, field, word, shorthand, key, unit, desc) \
    case SCN_M_##e: return (int64_t)r->field;
        METRIC_MAP(METRIC_CASE_)
#undef METRIC_CASE_
    default: return 0;
    }
}

/* The measured value of a per-client or span expectation. */
static int64_t expect_fact(const struct checker_report *r, const struct scn_expect *x) {
    if (x->kind == SCN_EXPECT_DE_SPAN) return r->de_first_from_ns;
    const struct checker_fact *f = checker_fact_of(r, x->client_index);
    switch (x->kind) {
    case SCN_EXPECT_TOKEN: return f ? (int64_t)f->first_token : 0;
    case SCN_EXPECT_ACQUIRES_AT: return f ? f->first_acquired : -1;
    case SCN_EXPECT_WRITE_ACCEPTED: return f ? f->writes_accepted : 0;
    case SCN_EXPECT_WRITE_REJECTED: return f ? f->writes_rejected : 0;
    case SCN_EXPECT_STALE_BY: return f ? f->stale_accepted : 0;
    case SCN_EXPECT_STALE_REJECTED_BY: return f ? f->stale_rejected : 0;
    case SCN_EXPECT_FENCED_OUT: return f ? f->fenced_out : 0;
    default: return 0;
    }
}

int checker_expect_holds(const struct checker_report *r, const struct scn_expect *x, int64_t *actual) {
    int64_t v = x->kind == SCN_EXPECT_METRIC ? checker_metric(r, x->metric) : expect_fact(r, x);
    if (actual) *actual = v;
    if (x->kind == SCN_EXPECT_DE_SPAN) return v == x->value && r->de_first_to_ns == x->to_ns;
    switch (x->cmp) {
    case SCN_CMP_EQ: return v == x->value;
    case SCN_CMP_NE: return v != x->value;
    case SCN_CMP_LT: return v < x->value;
    case SCN_CMP_LE: return v <= x->value;
    case SCN_CMP_GT: return v > x->value;
    case SCN_CMP_GE: return v >= x->value;
    }
    return 0;
}
