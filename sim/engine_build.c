/* Building an engine from a scenario (engine_new): the algorithm and its
 * options, the node array, node names resolved to indices, time zero; and
 * engine_free. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_int.h"

static int fail(struct scn_error *err, const struct scenario *s, struct scn_pos pos, const char *msg) {
    snprintf(err->file, sizeof err->file, "%s", s->file);
    err->pos = pos;
    snprintf(err->msg, sizeof err->msg, "%s", msg);
    return LSIM_EPARSE;
}

static int configure(struct engine *e, const struct engine_opts *o, struct scn_error *err) {
    char msg[256];
    e->config = calloc(1, e->algo->config_size ? e->algo->config_size : 1);
    if (!e->config) return LSIM_ENOMEM;
    algo_config_default(e);
    for (int i = 0; i < e->s.nopts; i++) {
        const struct scn_opt *op = &e->s.opts[i];
        msg[0] = 0;
        int rc = algo_option(e, op->key, op->val, msg, sizeof msg);
        if (rc == 0) continue;
        /* Lenient mode drops what the algorithm says it does not know; an
         * algorithm without an option callback refuses every key, as ever. */
        if (o->lenient_options && rc == LSIM_EUNKNOWN_OPTION && e->algo->option) {
            size_t l = strlen(e->dropped);
            snprintf(e->dropped + l, sizeof e->dropped - l, "%s%s", l ? " " : "", op->key);
            continue;
        }
        if (!msg[0]) snprintf(msg, sizeof msg, "%s takes no options; found '%s'", e->algo->name, op->key);
        fail(err, &e->s, op->pos, msg);
        return rc == LSIM_EUNKNOWN_OPTION ? rc : LSIM_EBAD_VALUE;
    }
    return 0;
}

/* ---- Names, while building ----------------------------------------------------------- */

/* Node names to indices: an open-addressing table over the trace's node
 * names, used only while the engine is built (faults, links and clock lines
 * are resolved to indices once; nothing looks a name up during the run). */
struct name_index {
    const struct trace *tr;
    int32_t *slot; /* node + 1, 0 = empty; cap is a power of two */
    size_t cap;
};

static uint32_t name_hash(const char *s) {
    uint32_t h = 2166136261u; /* FNV-1a 32 */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static int names_build(struct name_index *ix, const struct trace *tr) {
    ix->tr = tr;
    ix->cap = 16;
    while (ix->cap < (size_t)tr->nnodes * 2) ix->cap *= 2;
    ix->slot = calloc(ix->cap, sizeof *ix->slot);
    if (!ix->slot) return -1;
    for (int i = 0; i < tr->nnodes; i++) {
        size_t j = name_hash(tr->nodes[i].name) & (ix->cap - 1);
        for (; ix->slot[j]; j = (j + 1) & (ix->cap - 1))
            if (strcmp(tr->nodes[ix->slot[j] - 1].name, tr->nodes[i].name) == 0) break;
        if (!ix->slot[j]) ix->slot[j] = i + 1; /* the first node of a name wins */
    }
    return 0;
}

/* Index of the node called name, -1 when none (and for "*"). */
static int names_find(const struct name_index *ix, const char *name) {
    for (size_t j = name_hash(name) & (ix->cap - 1); ix->slot[j]; j = (j + 1) & (ix->cap - 1))
        if (strcmp(ix->tr->nodes[ix->slot[j] - 1].name, name) == 0) return ix->slot[j] - 1;
    return -1;
}

static int check_node_name(struct engine *e, const struct name_index *ix, const char *name, struct scn_pos pos,
                           struct scn_error *err) {
    if (strcmp(name, "*") == 0 || names_find(ix, name) >= 0) return 0;
    char msg[256];
    snprintf(msg, sizeof msg, "no node named '%s' in this run (clients, S1..S%d, R)", name, e->nservers);
    return fail(err, &e->s, pos, msg);
}

/* Give node i its struct node_ext (clocks reading true time until told
 * otherwise), once. 0, or -1 on OOM. */
static int give_ext(struct engine *e, int i) {
    struct node *n = nd(e, i);
    if (n->ext) return 0;
    struct node_ext *x = realloc(e->ext, (size_t)(e->n_ext + 1) * sizeof *x);
    if (!x) return -1;
    e->ext = x;
    x = &e->ext[e->n_ext++];
    memset(x, 0, sizeof *x);
    clock_init(&x->clk[LOCK_CLOCK_MONO], 0, 0);
    clock_init(&x->clk[LOCK_CLOCK_WALL], 0, 0);
    n->ext = e->n_ext;
    return 0;
}

/* Check and resolve every node name the scenario uses, in the order lines
 * are reported: clock lines, links, then faults. */
static int resolve_names(struct engine *e, const struct name_index *ix, struct scn_error *err) {
    int rc;
    for (int i = 0; i < e->s.nclocks; i++) {
        const struct scn_clock_init *ci = &e->s.clocks[i];
        if ((rc = check_node_name(e, ix, ci->node, ci->pos, err)) != 0) return rc;
        int n = names_find(ix, ci->node);
        if (n < 0) continue; /* "*" names no one */
        if (give_ext(e, n) != 0) return LSIM_ENOMEM;
        struct node_ext *x = ext_of(e, nd(e, n));
        x->base_ppm = ci->drift_ppm;
        clock_init(&x->clk[LOCK_CLOCK_MONO], 0, ci->drift_ppm);
        clock_init(&x->clk[LOCK_CLOCK_WALL], ci->wall_offset_ns, ci->drift_ppm);
    }
    for (int i = 0; i < e->s.nlinks; i++) {
        const struct scn_link *l = &e->s.links[i];
        if ((rc = check_node_name(e, ix, l->from, l->pos, err)) != 0) return rc;
        if ((rc = check_node_name(e, ix, l->to, l->pos, err)) != 0) return rc;
        if (eng_set_link(e, names_find(ix, l->from), names_find(ix, l->to), l) != 0) return LSIM_ENOMEM;
    }
    size_t members = 0;
    for (int i = 0; i < e->s.nfaults; i++)
        for (int g = 0; g < e->s.faults[i].ngroups; g++) members += (size_t)e->s.faults[i].group_len[g];
    e->fref = calloc((size_t)(e->s.nfaults ? e->s.nfaults : 1), sizeof *e->fref);
    e->group_nodes = calloc(members ? members : 1, sizeof *e->group_nodes);
    if (!e->fref || !e->group_nodes) return LSIM_ENOMEM;
    members = 0;
    for (int i = 0; i < e->s.nfaults; i++) {
        const struct scn_fault *f = &e->s.faults[i];
        struct fault_ref *r = &e->fref[i];
        if (f->node[0] && (rc = check_node_name(e, ix, f->node, f->pos, err)) != 0) return rc;
        if (f->kind == SCN_FAULT_LINK && ((rc = check_node_name(e, ix, f->link.from, f->pos, err)) != 0 ||
                                          (rc = check_node_name(e, ix, f->link.to, f->pos, err)) != 0))
            return rc;
        r->node = f->node[0] ? names_find(ix, f->node) : -1;
        r->from = f->kind == SCN_FAULT_LINK ? names_find(ix, f->link.from) : -1;
        r->to = f->kind == SCN_FAULT_LINK ? names_find(ix, f->link.to) : -1;
        r->groups = (int32_t)members;
        for (int g = 0; g < f->ngroups; g++)
            for (int k = 0; k < f->group_len[g]; k++) {
                if ((rc = check_node_name(e, ix, f->groups[g][k], f->pos, err)) != 0) return rc;
                e->group_nodes[members++] = names_find(ix, f->groups[g][k]);
            }
        r->trigger = -1;
        if (f->point != SCN_POINT_NONE) {
            int t = names_find(ix, f->trigger);
            if (t >= 0 && t < e->nclients) { /* only a client reaches points */
                r->trigger = t;
                nd(e, t)->point_faults = 1;
            }
        }
        if (r->node >= 0 && give_ext(e, r->node) != 0) return LSIM_ENOMEM;
    }
    return 0;
}

/* The algorithm, its options and its server count: 0, or engine_new's codes. */
static int choose_algo(struct engine *e, const struct engine_opts *o, struct scn_error *err) {
    char msg[256];
    e->algo = o->algo ? o->algo : lock_algo_find(e->s.algo);
    /* A file's `resource fencing=` describes the resource for the algorithm
     * it names; one swapped in (--algo, matrix, sweep --algos) keeps its
     * own rule, so `--algo fenced-lease` on a plain-lease file still fences. */
    e->fencing_stated = !e->s.fencing_stated || (o->algo && o->algo != lock_algo_find(e->s.algo)) ? -1
                                                                                                  : e->s.fencing != 0;
    if (!e->algo) {
        snprintf(msg, sizeof msg, "unknown lock algorithm '%s'; `locksim list` shows them", e->s.algo);
        return fail(err, &e->s, e->s.algo_pos, msg);
    }
    if (e->algo->abi != LOCK_ABI_VERSION) {
        snprintf(msg, sizeof msg, "algorithm '%s' was built for lock interface %u, this locksim has %u", e->algo->name,
                 e->algo->abi, LOCK_ABI_VERSION);
        fail(err, &e->s, e->s.algo_pos, msg);
        return LSIM_EPLUGIN;
    }
    if (e->algo->nstates < 0 || e->algo->nstates > LOCK_MAX_STATES ||
        (e->algo->nstates > 0 && e->algo->state_names == NULL)) {
        snprintf(msg, sizeof msg,
                 "algorithm '%s' names %d states; lock.h allows 0 to %d, with "
                 "state_names for each",
                 e->algo->name, e->algo->nstates, LOCK_MAX_STATES);
        fail(err, &e->s, e->s.algo_pos, msg);
        return LSIM_EPLUGIN;
    }
    scn_copy_str(e->tr.algo, sizeof e->tr.algo, e->algo->name);
    int rc = configure(e, o, err);
    if (rc != 0) return rc;
    e->nservers = e->s.nservers ? e->s.nservers : (e->algo->default_servers ? e->algo->default_servers : 1);
    int maxs = e->algo->max_servers ? e->algo->max_servers : SCN_MAX_SERVERS;
    if (e->nservers > maxs) {
        snprintf(msg, sizeof msg, "%s runs on at most %d lock server%s; the scenario asks for %d", e->algo->name, maxs,
                 maxs == 1 ? "" : "s", e->nservers);
        return fail(err, &e->s, e->s.algo_pos, msg);
    }
    msg[0] = 0;
    if (algo_validate(e, msg, sizeof msg) != 0) {
        fail(err, &e->s, e->s.algo_pos, msg[0] ? msg : "the lock configuration is not valid");
        return LSIM_EBAD_VALUE;
    }
    return 0;
}

/* The node array and what only some runs need. 0, or -1 on OOM. */
static int alloc_nodes(struct engine *e) {
    e->nnodes = e->nclients + e->nservers + 1;
    e->resource = e->nnodes - 1;
    e->node_stride = sizeof(struct node) + (((e->algo->client_size ? e->algo->client_size : 1) + 15) & ~(size_t)15);
    if (posix_memalign((void **)&e->node_mem, 64, (size_t)e->nnodes * e->node_stride) != 0) {
        e->node_mem = NULL;
        return -1;
    }
    memset(e->node_mem, 0, (size_t)e->nnodes * e->node_stride);
    e->prefetch = (size_t)e->nnodes * e->node_stride > ((size_t)1 << 20); /* beyond a core's L2 share */
    e->other_state = calloc((size_t)(e->nservers + 1), sizeof *e->other_state);
    if (!e->other_state) return -1;
    int rw = 0, timeout = 0; /* does any program read or write; give up after a time? */
    for (int p = 0; p < e->s.nprograms; p++)
        for (int k = 0; k < e->s.programs[p].nsteps; k++) {
            const struct scn_step *st = &e->s.programs[p].steps[k];
            rw |= st->kind == SCN_STEP_READ || st->kind == SCN_STEP_WRITE;
            timeout |= st->kind == SCN_STEP_ACQUIRE && st->timeout_ns > 0;
        }
    if (rw && !(e->rw = calloc((size_t)e->nclients, sizeof *e->rw))) return -1;
    if (timeout && !(e->acquire_mono = calloc((size_t)e->nclients, sizeof *e->acquire_mono))) return -1;
    if (!(e->profiles = malloc(sizeof *e->profiles))) return -1;
    return trace_reserve_nodes(&e->tr, e->nnodes);
}

/* Client i's profile: the last one when its values are equal, else a new one. */
static int give_profile(struct engine *e, struct node *n, const struct scn_client *def) {
    struct profile *pf = e->nprofiles ? &e->profiles[e->nprofiles - 1] : NULL;
    if (!pf || pf->think_ns != def->think_ns || pf->repeat != def->repeat || pf->ignores_loss != def->ignores_loss) {
        if ((e->nprofiles & (e->nprofiles - 1)) == 0 && e->nprofiles) { /* grow at powers of two */
            pf = realloc(e->profiles, (size_t)e->nprofiles * 2 * sizeof *pf);
            if (!pf) return -1;
            e->profiles = pf;
        }
        pf = &e->profiles[e->nprofiles++];
        pf->think_ns = def->think_ns;
        pf->repeat = def->repeat;
        pf->ignores_loss = def->ignores_loss;
    }
    n->profile = (uint32_t)(e->nprofiles - 1);
    return 0;
}

/* Clients (from the scenario's list), servers S1.., the resource R, each
 * named in the trace. 0, or -1 on OOM. */
/* "S" and the server's number (1 to SCN_MAX_SERVERS), as snprintf's "S%d" gives it. */
static void server_name(char *buf, int k) {
    char digits[12];
    int n = 0;
    do digits[n++] = (char)('0' + k % 10);
    while ((k /= 10) > 0);
    *buf++ = 'S';
    while (n) *buf++ = digits[--n];
    *buf = 0;
}

static int add_nodes(struct engine *e, const struct scenario *s) {
    for (int i = 0; i < e->nnodes; i++) {
        struct node *n = nd(e, i);
        char sname[16];
        const char *name = sname;
        if (i < e->nclients) {
            const struct scn_client *def = &s->clients[i];
            name = def->name;
            n->kind = TRACE_NODE_CLIENT;
            n->program = (uint8_t)def->program;
            if (give_profile(e, n, def) != 0) return -1;
        } else if (i < e->nclients + e->nservers) {
            server_name(sname, i - e->nclients + 1);
            n->kind = TRACE_NODE_SERVER;
            size_t sz = e->algo->server_size ? e->algo->server_size : 1, zero = e->algo->server_zero_size;
            if (zero == 0 || zero > sz) zero = sz; /* 0 = all (a plugin's value is checked in run.c) */
            void *st = zero == sz ? calloc(1, sz) : malloc(sz);
            if (st && zero < sz) memset(st, 0, zero);
            e->other_state[i - e->nclients] = st;
        } else {
            name = "R";
            n->kind = TRACE_NODE_RESOURCE;
            e->other_state[i - e->nclients] = calloc(1, e->algo->resource_size ? e->algo->resource_size : 1);
        }
        if (i >= e->nclients && !e->other_state[i - e->nclients]) return -1;
        if (trace_add_node(&e->tr, name, n->kind) < 0) return -1;
    }
    return 0;
}

/* The checker observes the trace; the point counters if anyone reads them.
 * 0, or -1 on OOM. */
static int observe(struct engine *e) {
    if (checker_init(&e->ck, &e->tr, e->s.purpose, e->s.stuck_after_ns) != 0) return -1;
    /* Per-client facts only for the clients expect lines name (client i is
     * node i); the parser keeps them to SCN_MAX_EXPECT_CLIENTS. */
    for (int i = 0; i < e->s.nexpects; i++) {
        const struct scn_expect *x = &e->s.expects[i];
        if (scn_expect_names_client(x) && x->client_index >= 0 && x->client_index < e->nclients)
            (void)checker_watch(&e->ck, x->client_index);
    }
    e->tr.observe = checker_observe;
    e->tr.advance = checker_advance;
    e->tr.observe_arg = &e->ck;
    e->tr.observe_kinds = CHECKER_KINDS;
    for (int k = 0; k < TRACE_KIND_COUNT; k++)
        if (trace_wants(&e->tr, k)) e->wants |= 1ull << k;
    e->wants_event = e->tr.keep || !e->tr.observe_kinds ? e->wants : e->wants & e->tr.observe_kinds;
    int point_faults = 0;
    for (int i = 0; i < e->s.nfaults; i++) point_faults |= e->s.faults[i].point != SCN_POINT_NONE;
    if ((trace_wants(&e->tr, TRACE_POINT) || point_faults) &&
        !(e->points = calloc((size_t)e->nclients * SCN_POINT_COUNT, sizeof *e->points)))
        return -1;
    return 0;
}

/* Time zero: the resource, the algorithm's nodes, scheduled faults, clients. */
static void time_zero(struct engine *e, const struct scenario *s) {
    e->stock = e->s.stock;
    emit(e, TRACE_RUN_START, TRACE_NO_NODE, TRACE_NO_NODE, 0, 0, (int64_t)e->s.seed, e->s.duration_ns, NULL);
    /* b: what decides the resource's writes (enum trace_rule). grant: the
     * server grants that make one grant of the service (0 = 1). */
    int quorum = e->algo->grant_quorum ? e->algo->grant_quorum(e->config, e->nservers) : 1;
    enum trace_rule rule = e->s.guard_owner          ? TRACE_RULE_OWNER
                           : e->algo->resource_write ? (e->algo->lock_free ? TRACE_RULE_NO_LOCK : TRACE_RULE_ALGORITHM)
                           : e->s.fencing            ? TRACE_RULE_TOKENS
                                                     : TRACE_RULE_PLAIN;
    emit(e, TRACE_RESOURCE_INIT, e->resource, TRACE_NO_NODE, 0, quorum > 1 ? (uint32_t)quorum : 0, e->stock, rule,
         NULL);
    /* The scenario's `clock` lines, in the trace so that what reads it (the
     * pictures' clock lanes) sees a skewed or drifting clock from the start:
     * the wall clock's offset as a step at 0 flagged TRACE_CLOCK_AT_START,
     * the drift as a drift at 0. */
    for (int i = 0; i < e->nnodes; i++) {
        const struct node_ext *x = ext_of(e, nd(e, i));
        if (!x) continue;
        if (x->clk[LOCK_CLOCK_WALL].base_local != 0)
            emit(e, TRACE_CLOCK_STEP, i, TRACE_NO_NODE, 0, 0, x->clk[LOCK_CLOCK_WALL].base_local,
                 SCN_CLOCK_WALL | TRACE_CLOCK_AT_START, NULL);
        if (x->base_ppm != 0) emit(e, TRACE_CLOCK_DRIFT, i, TRACE_NO_NODE, 0, 0, x->base_ppm, 0, NULL);
    }
    for (int i = 0; i < e->nnodes; i++) {
        if (nd(e, i)->kind == TRACE_NODE_CLIENT) algo_client_init(e, i);
        else if (nd(e, i)->kind == TRACE_NODE_SERVER) algo_server_init(e, i);
    }
    push(e, e->s.duration_ns, EV_END, -1, 0);
    for (int i = 0; i < e->s.nfaults; i++)
        if (e->s.faults[i].point == SCN_POINT_NONE) push(e, e->s.faults[i].at_ns, EV_FAULT, -1, (uint64_t)i);
    for (int i = 0; i < e->nclients; i++) push(e, s->clients[i].start_ns, EV_START, i, 0);
}

/* engine_new, and engine_new_take when take is s: then the engine takes
 * s's arrays instead of copying them, and s is left initialised. */
static int build(struct engine **out, const struct scenario *s, struct scenario *take, const struct engine_opts *opts,
                 struct scn_error *err) {
    static const struct engine_opts defaults = {0};
    const struct engine_opts *o = opts ? opts : &defaults;
    *out = NULL;
    /* Zeroed except the checker's sample arrays (16 KiB that checker_init
     * leaves as they are: most of the struct, and most of a short run's
     * set-up cost when cleared). */
    struct engine *e = malloc(sizeof *e);
    if (!e) return LSIM_ENOMEM;
    size_t ck_keep = offsetof(struct engine, ck) + CHECKER_CLEARED, ck_end = offsetof(struct engine, ck) + sizeof e->ck;
    memset(e, 0, ck_keep);
    memset((char *)e + ck_end, 0, sizeof *e - ck_end);
    /* The engine keeps the scenario but not its client list: what the run
     * needs of each client goes into its node below, and the trace keeps
     * the names. engine_scenario() shows nclients and clients == NULL. */
    struct scenario view = *s;
    view.clients = NULL;
    view.nclients = view.cap_clients = 0;
    struct scenario taken; /* the client list of a taken scenario, until it is built */
    if (take) {
        e->s = view;
        taken = *take;
        scenario_init(take);
        s = &taken;
    } else if (scenario_copy(&e->s, &view) != 0) {
        free(e);
        return LSIM_ENOMEM;
    }
    e->s.nclients = s->nclients;
    queue_init(&e->q);
    trace_init(&e->tr, o->keep_trace);
    if (o->hash_trace) trace_hash_on(&e->tr);
    scn_copy_str(e->tr.title, sizeof e->tr.title, e->s.title);
    e->tr.seed = e->s.seed;
    rng_seed(&e->rng, e->s.seed);
    e->nclients = s->nclients;
    e->kept_max = o->keep_trace ? ENGINE_TRACE_BUDGET_BYTES / sizeof(struct trace_event) - ENGINE_TRACE_HEADROOM
                                : SIZE_MAX;

    int rc = choose_algo(e, o, err);
    if (rc != 0) goto out;
    if (e->nclients == 0) {
        struct scn_pos p = {1, 1};
        rc = fail(err, &e->s, p, "the scenario has no clients; add a line such as `client A: acquire; write; release`");
        goto out;
    }
    rc = LSIM_ENOMEM;
    if (alloc_nodes(e) != 0 || add_nodes(e, s) != 0) goto out;
    e->check_t = -1;
    e->livelock_events = ENGINE_LIVELOCK_EVENTS;
    if ((uint64_t)e->nnodes * ENGINE_LIVELOCK_PER_NODE > e->livelock_events)
        e->livelock_events = (uint64_t)e->nnodes * ENGINE_LIVELOCK_PER_NODE;
    /* Names used by the scenario must exist now that servers are counted. */
    if (e->s.nclocks || e->s.nlinks || e->s.nfaults) {
        struct name_index ix;
        if (names_build(&ix, &e->tr) != 0) goto out;
        rc = resolve_names(e, &ix, err);
        free(ix.slot);
        if (rc != 0) goto out;
        rc = LSIM_ENOMEM;
    }
    if (observe(e) != 0) goto out;
    time_zero(e, s);
    if (e->tr.oom) goto out;
    if (take) free(taken.clients);
    *out = e;
    return 0;
out:
    if (take) free(taken.clients);
    engine_free(e);
    return rc;
}

int engine_new(struct engine **out, const struct scenario *s, const struct engine_opts *opts, struct scn_error *err) {
    return build(out, s, NULL, opts, err);
}

int engine_new_take(struct engine **out, struct scenario *s, const struct engine_opts *opts, struct scn_error *err) {
    return build(out, s, s, opts, err);
}

void engine_free(struct engine *e) {
    if (!e) return;
    if (e->other_state)
        for (int i = 0; i <= e->nservers; i++) free(e->other_state[i]);
    for (uint32_t i = 0; i < e->n_ext; i++) free(e->ext[i].deferred);
    free(e->other_state);
    free(e->node_mem);
    free(e->rw);
    free(e->profiles);
    free(e->acquire_mono);
    free(e->points);
    free(e->ext);
    free(e->fref);
    free(e->group_nodes);
    free(e->timers);
    free(e->tside);
    free(e->slots);
    free(e->links);
    free(e->config);
    checker_close(&e->ck);
    queue_close(&e->q);
    trace_close(&e->tr);
    scenario_close(&e->s);
    free(e);
}
