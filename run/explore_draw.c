/* Drawing one run of the explorer (explore_int.h): its params, shared by
 * the 64 runs of an epoch, and its faults, each a node of the budget's
 * targets, a size in its range and a place (a true time or a named point),
 * from a PRNG seeded by the explorer seed and the run's index. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "explore_int.h"
#include "rng.h"

unsigned explore_program_points(const struct scn_program *pr) {
    unsigned m = 0;
    int i;

    for (i = 0; i < pr->nsteps; i++) {
        switch (pr->steps[i].kind) {
        case SCN_STEP_ACQUIRE: m |= 1u << SCN_POINT_DURING_ACQUIRE | 1u << SCN_POINT_AFTER_ACQUIRE; break;
        case SCN_STEP_READ:
            m |= 1u << SCN_POINT_BEFORE_READ;
            if (i + 1 < pr->nsteps && pr->steps[i + 1].kind == SCN_STEP_WRITE)
                m |= 1u << SCN_POINT_BETWEEN_READ_AND_WRITE;
            break;
        case SCN_STEP_WRITE: m |= 1u << SCN_POINT_BEFORE_WRITE | 1u << SCN_POINT_AFTER_WRITE; break;
        case SCN_STEP_RELEASE: m |= 1u << SCN_POINT_BEFORE_RELEASE | 1u << SCN_POINT_AFTER_RELEASE; break;
        default: break;
        }
    }
    return m;
}

/* The i-th node of a target set: clients, then servers, then R. */
int explore_target_count(const struct ctx *c, const struct scn_budget *b) {
    if (b->node[0]) return 1;
    return ((b->targets & SCN_TARGET_CLIENTS) ? c->own.nclients : 0) +
           ((b->targets & SCN_TARGET_SERVERS) ? c->nservers : 0) + ((b->targets & SCN_TARGET_RESOURCE) ? 1 : 0);
}

static void target_name(const struct ctx *c, const struct scn_budget *b, int i, char *out) {
    if (b->node[0]) {
        snprintf(out, SCN_NAME_MAX, "%s", b->node);
        return;
    }
    if (b->targets & SCN_TARGET_CLIENTS) {
        if (i < c->own.nclients) {
            snprintf(out, SCN_NAME_MAX, "%s", c->own.clients[i].name);
            return;
        }
        i -= c->own.nclients;
    }
    if ((b->targets & SCN_TARGET_SERVERS) && i < c->nservers) {
        snprintf(out, SCN_NAME_MAX, "S%d", i + 1);
        return;
    }
    snprintf(out, SCN_NAME_MAX, "R");
}

/* ---- What a draw placed --------------------------------------------------------- */

/* A draw logs what it places, an entry of 32 bits each: what (COVER_*, top
 * 4 bits), the fault kind (next 4) and a value (a named point, or a
 * placement's hash). The search counts the log of each run it takes, in
 * index order, so the coverage is that of the runs searched whatever
 * process drew them. */
enum { COVER_TIMED, COVER_POINT, COVER_KEPT };

static void cover_log(struct ctx *c, unsigned what, int kind, uint32_t value) {
    if (c->nlog < COVER_LOG_MAX) /* never full: a run draws at most MAX_DRAWN faults */
        c->log[c->nlog++] = (uint32_t)what << 28 | (uint32_t)kind << 24 | value;
}

void explore_cover_apply(struct ctx *c, const void *log, int n) {
    const unsigned char *p = log;
    int i;

    for (i = 0; i < n; i++) {
        uint32_t e, v;
        int kind;
        memcpy(&e, p + 4 * (size_t)i, sizeof e);
        kind = (int)(e >> 24 & 0xf) % SCN_NEM_COUNT;
        v = e & 0xffffff;
        switch (e >> 28) {
        case COVER_TIMED: c->cover.kind_timed[kind]++; break;
        case COVER_POINT: c->cover.point[kind][v % SCN_POINT_COUNT]++; break;
        default: /* COVER_KEPT */
            c->cover.kind[kind]++;
            v &= BITMAP_BITS - 1;
            c->bitmap[v >> 3] |= (unsigned char)(1u << (v & 7));
            break;
        }
    }
}

/* ---- Drawing one run ------------------------------------------------------------- */

/* The param values of an epoch, as --set NAME=VALUE texts. */
void explore_draw_params(const struct ctx *c, uint64_t epoch, char sets[][SET_MAX]) {
    struct rng g;
    int k;

    rng_seed(&g, explore_mix64(c->o->seed ^ 0x70617261ull) ^ explore_mix64(epoch));
    for (k = 0; k < c->nranged; k++) {
        const struct scn_param *q = &c->own.params[c->ranged[k]];
        int64_t v = rng_range(&g, q->min, q->max);
        if (q->range == SCN_RANGE_DURATION) snprintf(sets[k], SET_MAX, "%s=%lldns", q->name, (long long)v);
        else snprintf(sets[k], SET_MAX, "%s=%lld", q->name, (long long)v);
    }
}

/* The scenario for param values sets (nranged of them): a copy of own,
 * re-parsed with each. 0, or an LSIM code (a value that does not fit). */
int explore_apply_params(const struct ctx *c, char sets[][SET_MAX], struct scenario *out) {
    struct scn_error err;
    int k, rc;

    if (scenario_copy(out, &c->own) != 0) return LSIM_ENOMEM;
    for (k = 0; k < c->nranged; k++)
        if ((rc = scenario_set(out, sets[k], &err)) != 0) {
            scenario_close(out);
            return rc;
        }
    return 0;
}

/* Where a drawn fault happens: a named point of a client, or a true time in
 * the budget's window. Returns the time (or -1 for a point). */
static sim_ns place(struct ctx *c, const struct scenario *s, const struct scn_budget *b, struct rng *g,
                    struct scn_fault *f, int kind) {
    sim_ns lo = b->at_lo_ns, hi = b->at_hi_ns ? b->at_hi_ns : s->duration_ns - 1;

    if (hi >= s->duration_ns) hi = s->duration_ns - 1;
    if (b->points && s->nclients > 0 && rng_range(g, 0, 1) == 0) {
        int cl = (int)rng_range(g, 0, s->nclients - 1), n = 0, pick, p;
        unsigned m = c->points[cl];
        for (p = 0; p < SCN_POINT_COUNT; p++) n += (m >> p) & 1;
        if (n > 0) {
            pick = (int)rng_range(g, 0, n - 1);
            for (p = 0; p < SCN_POINT_COUNT; p++)
                if (((m >> p) & 1) && pick-- == 0) break;
            snprintf(f->trigger, sizeof f->trigger, "%s", s->clients[cl].name);
            f->point = (enum scn_point)p;
            f->occurrence = 1;
            cover_log(c, COVER_POINT, kind, (uint32_t)p);
            return -1;
        }
    }
    f->point = SCN_POINT_NONE;
    f->at_ns = lo <= hi ? rng_range(g, lo, hi) : lo;
    cover_log(c, COVER_TIMED, kind, 0);
    return f->at_ns;
}

static void note_placement(struct ctx *c, int kind, const struct scn_fault *f) {
    uint64_t h = explore_mix64((uint64_t)kind * 1000003u);
    const char *p;

    for (p = f->node; *p; p++) h = explore_mix64(h ^ (unsigned char)*p);
    if (f->point != SCN_POINT_NONE) {
        for (p = f->trigger; *p; p++) h = explore_mix64(h ^ (unsigned char)*p);
        h = explore_mix64(h ^ (0x100u + f->point));
    } else {
        h = explore_mix64(h ^ (uint64_t)(f->at_ns / SIM_NS_PER_S));
    }
    cover_log(c, COVER_KEPT, kind, (uint32_t)(h & (BITMAP_BITS - 1)));
}

/* A fault with only what a drawn fault uses cleared (a whole struct
 * scn_fault is 2 KiB, most of it partition groups, which stay unused). */
static void fault_init(struct scn_fault *f, enum scn_fault_kind kind, const char *node) {
    memset(f, 0, offsetof(struct scn_fault, groups));
    memset(f->group_len, 0, sizeof *f - offsetof(struct scn_fault, group_len));
    f->kind = kind;
    f->occurrence = 1;
    f->which = SCN_CLOCK_WALL;
    memcpy(f->node, node, strlen(node) + 1);
}

/* The faults of run `index` on scenario s, into u[] (at most max); returns
 * how many units. Crashes of one node never overlap (so each restart has a
 * crash before it). */
int explore_draw_faults(struct ctx *c, const struct scenario *s, uint64_t index, struct unit *u, int max) {
    const struct scn_explore *x = &c->own.explore;
    struct rng g;
    unsigned enabled = (1u << SCN_NEM_COUNT) - 1;
    int k, n = 0, i;

    c->nlog = 0;
    rng_seed(&g, explore_mix64(c->o->seed) ^ explore_mix64(index ^ 0x72756eull));
    if (c->o->swarm) {
        unsigned budgeted = 0;
        for (k = 0; k < SCN_NEM_COUNT; k++) budgeted |= (unsigned)(x->k[k].max > 0) << k;
        do /* a random non-empty subset of the kinds budgeted */
            enabled = (unsigned)rng_next(&g) & budgeted;
        while (enabled == 0 && budgeted != 0);
    }
    for (k = 0; k < SCN_NEM_COUNT; k++) {
        const struct scn_budget *b = &x->k[k];
        int count, ntarget;
        if (b->max == 0 || !((enabled >> k) & 1) || (ntarget = explore_target_count(c, b)) == 0) continue;
        count = (int)rng_range(&g, 0, b->max);
        for (i = 0; i < count && n < max; i++) {
            struct unit *v = &u[n];
            char node[SCN_NAME_MAX];
            sim_ns at, size = rng_range(&g, b->lo_ns, b->hi_ns);
            target_name(c, b, (int)rng_range(&g, 0, ntarget - 1), node);
            v->kind = k;
            v->n = 1;
            switch (k) {
            case SCN_NEM_PAUSE:
                fault_init(&v->f[0], SCN_FAULT_PAUSE, node);
                v->f[0].dur_ns = size > 0 ? size : 1;
                place(c, s, b, &g, &v->f[0], k);
                break;
            case SCN_NEM_CLOCK_STEP:
                fault_init(&v->f[0], SCN_FAULT_CLOCK_STEP, node);
                v->f[0].delta_ns = size;
                v->f[0].which = b->which;
                place(c, s, b, &g, &v->f[0], k);
                if (size == 0) continue;
                break;
            case SCN_NEM_LATENCY: {
                sim_ns len = rng_range(&g, b->len_lo_ns, b->len_hi_ns);
                struct scn_budget timed = *b;
                timed.points = 0;
                fault_init(&v->f[0], SCN_FAULT_LINK, node);
                v->f[0].node[0] = '\0';
                snprintf(v->f[0].link.from, sizeof v->f[0].link.from, "%s", node);
                snprintf(v->f[0].link.to, sizeof v->f[0].link.to, "*");
                v->f[0].link.lat.min_ns = v->f[0].link.lat.max_ns = size;
                v->f[0].link.loss_ppm = UINT32_MAX; /* unchanged */
                at = place(c, s, &timed, &g, &v->f[0], k);
                if (len > 0 && at + len < s->duration_ns) {
                    v->f[1] = v->f[0];
                    v->f[1].at_ns = at + len;
                    v->f[1].link.lat = s->latency;
                    v->n = 2;
                }
                break;
            }
            default: { /* SCN_NEM_CRASH */
                int j, overlap = 0;
                fault_init(&v->f[0], SCN_FAULT_CRASH, node);
                at = place(c, s, b, &g, &v->f[0], k);
                if (at >= 0 && at + size < s->duration_ns) {
                    fault_init(&v->f[1], SCN_FAULT_RESTART, node);
                    v->f[1].at_ns = at + size;
                    v->n = 2;
                }
                /* One crash of a node at a time: drop one that overlaps. */
                for (j = 0; j < n && !overlap; j++)
                    if (u[j].kind == SCN_NEM_CRASH && strcmp(u[j].f[0].node, node) == 0) overlap = 1;
                for (j = 0; j < s->nfaults && !overlap; j++)
                    if ((s->faults[j].kind == SCN_FAULT_CRASH || s->faults[j].kind == SCN_FAULT_RESTART) &&
                        strcmp(s->faults[j].node, node) == 0)
                        overlap = 1;
                if (overlap) continue;
                break;
            }
            }
            note_placement(c, k, &v->f[0]);
            n++;
        }
    }
    return n;
}
