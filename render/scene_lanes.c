/* Scene lanes: one row per node (interval fills, the instant that wins each
 * cell, badges kept apart) and the pixel detail over it (tokens, whose lease,
 * the TTL running out), with the level-of-detail index that serves them
 * zoomed out. Arrows are in scene_arrows.c, the lists under the lanes in
 * scene_lists.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fmt.h"
#include "scene_int.h"

_Static_assert(SCENE_LOD_BUCKETS == 1 << SCENE_LOD_LEVELS, "the pyramid's levels halve the buckets down to one");

enum { B_ACQ = 1, B_HOLD = 2, B_PAUSE = 4, B_DOWN = 8, B_LEASE = 16 };

static int mark_sym(const struct layout_mark *m) {
    switch (m->kind) {
    case LAYOUT_MARK_ACQUIRED: return SCENE_SYM_ACQUIRED;
    case LAYOUT_MARK_ACQUIRE_FAILED: return SCENE_SYM_FAILED;
    case LAYOUT_MARK_RELEASE: return SCENE_SYM_RELEASE;
    case LAYOUT_MARK_LOST: return SCENE_SYM_LOST;
    case LAYOUT_MARK_WRONG_RELEASE: return SCENE_SYM_WRONG_RELEASE;
    case LAYOUT_MARK_GRANT: return SCENE_SYM_GRANT;
    case LAYOUT_MARK_RENEW: return SCENE_SYM_RENEW;
    case LAYOUT_MARK_EXPIRE: return SCENE_SYM_EXPIRE;
    case LAYOUT_MARK_DELETE: return m->detail ? SCENE_SYM_WRONG_RELEASE : SCENE_SYM_DELETE;
    case LAYOUT_MARK_KEEP: return SCENE_SYM_KEEP;
    case LAYOUT_MARK_READ: return SCENE_SYM_READ;
    case LAYOUT_MARK_WRITE_OK: return SCENE_SYM_WRITE_OK;
    case LAYOUT_MARK_WRITE_REJECTED: return SCENE_SYM_WRITE_REJECTED;
    case LAYOUT_MARK_CLOCK_STEP: return SCENE_SYM_CLOCK;
    case LAYOUT_MARK_CRASH: return SCENE_SYM_CRASH;
    case LAYOUT_MARK_RESTART: return SCENE_SYM_RESTART;
    case LAYOUT_MARK_WRITE_SKIPPED: return SCENE_SYM_SKIP;
    case LAYOUT_MARK_CONTROL: return SCENE_SYM_CONTROL;
    case LAYOUT_MARK_REPL_COPY: return SCENE_SYM_REPL_COPY;
    case LAYOUT_MARK_REPL_DROP: return SCENE_SYM_REPL_DROP;
    default: return SCENE_SYM_NONE;
    }
}

/* Which instant wins a cell shared with others: the higher (mark_rank),
 * the later on a tie. */
static int mark_rank(int sym, int style, int pictures);

/* A pyramid node's winner (its symbol | SCENE_LOD_STALE), ranked as in
 * pictures: the index serves the window only. */
static int win_prio(int sym, int stale) {
    return mark_rank(sym, stale ? SCENE_ST_STALE_WRITE : scene_syms[sym].style, 1);
}

static int mark_stale(const struct layout_mark *m) { return m->kind == LAYOUT_MARK_WRITE_OK && m->stale; }

#define NODE_PRIO(v) win_prio((v) & ~SCENE_LOD_STALE, ((v)&SCENE_LOD_STALE) != 0)

/* A tooltip for a mark: "B acquires, token 42, t=31s", in buf[200]. */
static void tooltip_text(char *buf, const struct layout *ly, const struct layout_lane *lane,
                         const struct layout_mark *m) {
    enum { n_buf = 200 };
    char t[32], tok[40] = "";
    const char *who = lane->name, *peer = scene_node_name(ly, m->peer);
    format_time_ns(t, sizeof t, m->t);
    if (m->token) snprintf(tok, sizeof tok, ", token %llu", (unsigned long long)m->token);
    switch (m->kind) {
    case LAYOUT_MARK_ACQUIRED: snprintf(buf, n_buf, "%s acquires%s", who, tok); break;
    case LAYOUT_MARK_ACQUIRE_FAILED: snprintf(buf, n_buf, "%s gives up acquiring", who); break;
    case LAYOUT_MARK_RELEASE: snprintf(buf, n_buf, "%s releases the lock", who); break;
    case LAYOUT_MARK_LOST: snprintf(buf, n_buf, "%s learns it lost the lock", who); break;
    case LAYOUT_MARK_WRONG_RELEASE: snprintf(buf, n_buf, "%s's release removes %s's lock", who, peer); break;
    case LAYOUT_MARK_GRANT: snprintf(buf, n_buf, "%s grants the lock to %s%s", who, peer, tok); break;
    case LAYOUT_MARK_RENEW: snprintf(buf, n_buf, "%s renews %s's lease", who, peer); break;
    case LAYOUT_MARK_EXPIRE: snprintf(buf, n_buf, "%s: %s's lease expires", who, peer); break;
    case LAYOUT_MARK_DELETE: snprintf(buf, n_buf, "%s deletes the lease on %s's release", who, peer); break;
    case LAYOUT_MARK_KEEP: snprintf(buf, n_buf, "%s refuses %s's release", who, peer); break;
    case LAYOUT_MARK_READ: snprintf(buf, n_buf, "%s reads %lld", peer, (long long)m->value); break;
    case LAYOUT_MARK_WRITE_OK:
        snprintf(buf, n_buf, "%s accepts %s's write%s%s", who, peer, tok,
                 m->stale  ? " though it is STALE"
                 : m->late ? " (late, but before any operation of the newer grant)"
                           : "");
        break;
    case LAYOUT_MARK_WRITE_REJECTED: snprintf(buf, n_buf, "%s rejects %s's write%s", who, peer, tok); break;
    case LAYOUT_MARK_CLOCK_STEP: {
        char d[32];
        format_time_ns(d, sizeof d, m->value);
        snprintf(buf, n_buf, "%s's clock steps by %s", who, d);
        break;
    }
    case LAYOUT_MARK_CRASH: snprintf(buf, n_buf, "%s crashes", who); break;
    case LAYOUT_MARK_RESTART: snprintf(buf, n_buf, "%s restarts", who); break;
    case LAYOUT_MARK_WRITE_SKIPPED: snprintf(buf, n_buf, "%s does not send its write%s", who, tok); break;
    case LAYOUT_MARK_CONTROL:
        if (m->value == 1)
            snprintf(buf, n_buf, "%s promoted to primary without %s's lock%s: the grant never reached it", who, peer,
                     tok);
        else snprintf(buf, n_buf, "operator action on %s", who);
        break;
    case LAYOUT_MARK_REPL_COPY:
        snprintf(buf, n_buf, "replica %s copies %s's lock from its primary%s", who, peer, tok);
        break;
    case LAYOUT_MARK_REPL_DROP:
        snprintf(buf, n_buf,
                 m->detail ? "replica %s drops %s's lock (its new primary never had it)"
                           : "replica %s copies the end of %s's lock",
                 who, peer);
        break;
    default: snprintf(buf, n_buf, "%s", who); break;
    }
    size_t len = strlen(buf);
    snprintf(buf + len, n_buf - len, ", t=%s", t);
}

static void tooltip(struct scene_ctx *c, struct scene_cmd *k, const struct layout_lane *lane,
                    const struct layout_mark *m) {
    char buf[200];
    tooltip_text(buf, c->ly, lane, m);
    scene_set_text(c, k, buf, strlen(buf));
}

static void mark_range(const struct layout_lane *lane, sim_ns t0, sim_ns t1, size_t *lo, size_t *hi);

int scene_sym_tooltip(char *buf, size_t n, const struct layout *ly, const struct scene_cmd *k) {
    if (n == 0) return -1;
    buf[0] = '\0';
    if (k->type != SCENE_CMD_SYM || k->lane < 0 || k->lane >= ly->nlanes || k->seq < 0) return -1;
    const struct layout_lane *lane = &ly->lanes[k->lane];
    size_t lo, hi;
    mark_range(lane, k->t0, k->t0, &lo, &hi);
    for (size_t i = lo; i < hi; i++)
        if (lane->marks[i].seq == (uint32_t)k->seq) {
            char tip[200];
            tooltip_text(tip, ly, lane, &lane->marks[i]);
            snprintf(buf, n, "%s", tip);
            return 0;
        }
    return -1;
}

static void place_badges(struct scene_ctx *c, struct scene_cmd *k, size_t n);

static const uint8_t span_bit[LAYOUT_SPAN_KIND_COUNT] = {
        [LAYOUT_SPAN_ACQUIRING] = B_ACQ, [LAYOUT_SPAN_HOLDING] = B_HOLD, [LAYOUT_SPAN_PAUSED] = B_PAUSE,
        [LAYOUT_SPAN_CRASHED] = B_DOWN,  [LAYOUT_SPAN_LEASE] = B_LEASE,  [LAYOUT_SPAN_REPLICA] = B_LEASE,
};

/* Marks [*lo, *hi) of a lane with t in [t0, t1] (marks are ordered by t). */
static void mark_range(const struct layout_lane *lane, sim_ns t0, sim_ns t1, size_t *lo, size_t *hi) {
    size_t a = 0, b = lane->nmarks;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (lane->marks[m].t < t0) a = m + 1;
        else b = m;
    }
    *lo = a;
    b = lane->nmarks;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (lane->marks[m].t <= t1) a = m + 1;
        else b = m;
    }
    *hi = a;
}

/* Spans [*lo, *hi) of a lane that may meet the window: with an index, from
 * the first whose running largest end reaches t0 to the last that starts by
 * t1 (spans are ordered by t0); without, all. */
static void span_range(const struct scene_ctx *c, const struct layout_lane *lane, int lane_idx, size_t *lo,
                       size_t *hi) {
    const struct scene_lod *lod = c->v->lod;
    *lo = 0;
    *hi = lane->nspans;
    if (!lod || lod->ly != c->ly || !lod->lanes[lane_idx].span_max_t1) return;
    const sim_ns *mx = lod->lanes[lane_idx].span_max_t1;
    size_t a = 0, b = lane->nspans;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (mx[m] < c->sc->t0) a = m + 1;
        else b = m;
    }
    *lo = a;
    b = lane->nspans;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (lane->spans[m].t0 <= c->sc->t1) a = m + 1;
        else b = m;
    }
    *hi = a;
}

void scene_lod_free(struct scene_lod *lod) {
    if (!lod) return;
    for (int l = 0; lod->lanes && l < lod->ly->nlanes; l++) {
        free(lod->lanes[l].span_max_t1);
        free(lod->lanes[l].bits);
        free(lod->lanes[l].win);
        free(lod->lanes[l].sym);
    }
    free(lod->lanes);
    free(lod->msg_max_t1);
    free(lod->msg_block_dur);
    free(lod);
}

size_t scene_lod_bytes(const struct scene_lod *lod) { return lod ? lod->bytes : 0; }

int scene_lod_build(struct scene_lod **out, const struct layout *ly) {
    *out = NULL;
    struct scene_lod *lod = calloc(1, sizeof *lod);
    if (!lod) return LSIM_ENOMEM;
    lod->ly = ly;
    lod->bucket_ns = ly->t_end / SCENE_LOD_BUCKETS + 1;
    lod->lanes = calloc(ly->nlanes > 0 ? (size_t)ly->nlanes : 1, sizeof *lod->lanes);
    lod->bytes = sizeof *lod + (size_t)ly->nlanes * sizeof *lod->lanes;
    if (!lod->lanes) {
        free(lod);
        return LSIM_ENOMEM;
    }
    if (ly->nmsgs) { /* so that a window finds its first message by binary search */
        lod->msg_max_t1 = malloc(ly->nmsgs * sizeof *lod->msg_max_t1);
        if (!lod->msg_max_t1) goto oom;
        lod->bytes += ly->nmsgs * sizeof *lod->msg_max_t1;
        sim_ns mx = 0;
        for (size_t i = 0; i < ly->nmsgs; i++) {
            if (ly->msgs[i].t1 > mx) mx = ly->msgs[i].t1;
            lod->msg_max_t1[i] = mx;
        }
        size_t nb = (ly->nmsgs + SCENE_LOD_MSG_BLOCK - 1) / SCENE_LOD_MSG_BLOCK;
        lod->msg_block_dur = calloc(nb, sizeof *lod->msg_block_dur);
        if (!lod->msg_block_dur) goto oom;
        lod->bytes += nb * sizeof *lod->msg_block_dur;
        for (size_t i = 0; i < ly->nmsgs; i++) {
            const struct layout_msg *m = &ly->msgs[i];
            sim_ns d = m->fate == 1 ? INT64_MAX : m->t1 - m->t0, *b = &lod->msg_block_dur[i / SCENE_LOD_MSG_BLOCK];
            if (d > *b) *b = d;
        }
    }
    for (int l = 0; l < ly->nlanes; l++) {
        const struct layout_lane *lane = &ly->lanes[l];
        struct scene_lod_lane *ll = &lod->lanes[l];
        if (lane->nspans) {
            ll->span_max_t1 = malloc(lane->nspans * sizeof *ll->span_max_t1);
            if (!ll->span_max_t1) goto oom;
            lod->bytes += lane->nspans * sizeof *ll->span_max_t1;
            sim_ns mx = 0;
            for (size_t i = 0; i < lane->nspans; i++) {
                if (lane->spans[i].t1 > mx) mx = lane->spans[i].t1;
                ll->span_max_t1[i] = mx;
            }
        }
        for (size_t i = 0; i < lane->nmarks; i++) ll->ncopies += lane->marks[i].kind == LAYOUT_MARK_REPL_COPY;
        if (lane->nspans + lane->nmarks <= 4096) continue;
        ll->bits = calloc(SCENE_LOD_NODES, 1);
        ll->win = calloc(SCENE_LOD_NODES, sizeof *ll->win);
        ll->sym = calloc(SCENE_LOD_NODES, 1);
        if (!ll->bits || !ll->win || !ll->sym) goto oom;
        lod->bytes += SCENE_LOD_NODES * (2 + sizeof *ll->win);
        for (size_t i = 0; i < lane->nspans; i++) {
            const struct layout_span *sp = &lane->spans[i];
            uint8_t flag = sp->kind < LAYOUT_SPAN_KIND_COUNT ? span_bit[sp->kind] : 0;
            size_t b0 = (size_t)(sp->t0 / lod->bucket_ns), b1 = (size_t)(sp->t1 / lod->bucket_ns);
            if (b1 > b0 && sp->t1 % lod->bucket_ns == 0) b1--; /* to the bucket before the end's */
            for (size_t b = b0; b <= b1 && b < SCENE_LOD_BUCKETS; b++) ll->bits[b] |= flag;
        }
        for (size_t i = 0; i < lane->nmarks; i++) {
            const struct layout_mark *m = &lane->marks[i];
            int g = mark_sym(m);
            size_t b = (size_t)(m->t / lod->bucket_ns);
            if (g == SCENE_SYM_NONE || b >= SCENE_LOD_BUCKETS) continue;
            uint32_t cur = ll->win[b];
            if (!cur || win_prio(g, mark_stale(m)) >= NODE_PRIO(ll->sym[b])) {
                ll->win[b] = (uint32_t)i + 1;
                ll->sym[b] = (uint8_t)(g | (mark_stale(m) ? SCENE_LOD_STALE : 0));
            }
        }
        /* the levels above, each node from its two children, left then right */
        for (int lv = 1; (SCENE_LOD_BUCKETS >> lv) > 0; lv++)
            for (size_t j = 0; j < (size_t)(SCENE_LOD_BUCKETS >> lv); j++) {
                size_t n = scene_lod_node(lv, j), a = scene_lod_node(lv - 1, 2 * j), b = a + 1;
                ll->bits[n] = ll->bits[a] | ll->bits[b];
                size_t w = ll->win[a] ? a : b;
                if (ll->win[a] && ll->win[b] && NODE_PRIO(ll->sym[b]) >= NODE_PRIO(ll->sym[a])) w = b;
                ll->win[n] = ll->win[w];
                ll->sym[n] = ll->sym[w];
            }
    }
    *out = lod;
    return 0;
oom:
    scene_lod_free(lod);
    return LSIM_ENOMEM;
}

/* How much an instant matters when two would share a cell or their badges
 * would overlap. Everywhere, a stale write accepted (the damage) and then a
 * write refused (the save) come first, so that zoomed out, where one cell
 * holds many writes, neither is hidden by a routine write after it. In
 * pictures (badges wider than a cell) a release that removed another's lock
 * ranks between them, then grants (a server's grant, a client's acquire);
 * the rest, and the terminal's other cells, by the symbol table. */
static int mark_rank(int sym, int style, int pictures) {
    int prio = scene_syms[sym].prio;
    if (style == SCENE_ST_STALE_WRITE) return 300;
    if (sym == SCENE_SYM_WRITE_REJECTED) return 280;
    if (!pictures) return prio;
    if (sym == SCENE_SYM_WRONG_RELEASE) return 290;
    if (sym == SCENE_SYM_GRANT || sym == SCENE_SYM_ACQUIRED) return 200 + prio;
    return prio;
}

static int mark_style(const struct layout_mark *m, int sym) {
    return m->kind == LAYOUT_MARK_WRITE_OK && m->stale ? SCENE_ST_STALE_WRITE : scene_syms[sym].style;
}

/* Whether the scene is built from the index's buckets: a window whose
 * cells span at least 4 of them, on a linear axis. */
static int zoomed_far_out(const struct scene_ctx *c) {
    const struct scene_lod *lod = c->v->lod;
    return lod && lod->ly == c->ly && !c->sc->ngaps && c->sc->axis.cell_ns >= 4 * lod->bucket_ns;
}

/* The cells from the buckets: each bucket in the cell where it begins,
 * the buckets of a cell summed by the largest pyramid nodes that tile them
 * (left to right, so the winner is the one the buckets one by one give). */
static void fill_lane_lod(struct scene_ctx *c, const struct scene_lod_lane *ll, sim_ns bucket_ns) {
    const struct scene *sc = c->sc;
    int n = sc->axis.ncells;
    for (int k = 0; k < n; k++) {
        sim_ns ta = sc->t0 + (sim_ns)k * sc->axis.cell_ns, tb = ta + sc->axis.cell_ns;
        if (tb > sc->t1 + 1) tb = sc->t1 + 1;
        size_t b0 = (size_t)((ta + bucket_ns - 1) / bucket_ns), b1 = (size_t)((tb + bucket_ns - 1) / bucket_ns);
        if (b1 > SCENE_LOD_BUCKETS) b1 = SCENE_LOD_BUCKETS;
        for (size_t b = b0; b < b1;) {
            int lv = 0;
            while (lv < SCENE_LOD_LEVELS && (b & (((size_t)1 << (lv + 1)) - 1)) == 0 &&
                   b + ((size_t)1 << (lv + 1)) <= b1)
                lv++;
            size_t node = scene_lod_node(lv, b >> lv);
            b += (size_t)1 << lv;
            c->bits[k] |= ll->bits[node];
            uint32_t w = ll->win[node];
            if (!w) continue;
            int g = ll->sym[node] & ~SCENE_LOD_STALE, cur = c->win[k];
            if (cur == SCENE_SYM_NONE || NODE_PRIO(ll->sym[node]) >= mark_rank(cur, c->winst[k], 1)) {
                c->win[k] = (uint8_t)g;
                c->winst[k] = (uint8_t)((ll->sym[node] & SCENE_LOD_STALE) ? SCENE_ST_STALE_WRITE : scene_syms[g].style);
                c->winm[k] = w - 1;
            }
        }
    }
}

/* The lane's cells: interval fills, then the instant that wins each cell
 * (a later instant of equal or higher priority, win_prio, replaces an earlier one). */
static void fill_lane(struct scene_ctx *c, const struct layout_lane *lane, int lane_idx) {
    const struct scene *sc = c->sc;
    const struct scene_lod *lod = c->v->lod && c->v->lod->ly == c->ly ? c->v->lod : NULL;
    const struct scene_lod_lane *ll = lod ? &lod->lanes[lane_idx] : NULL;
    int n = sc->axis.ncells;
    memset(c->bits, 0, (size_t)n);
    memset(c->win, SCENE_SYM_NONE, (size_t)n);
    /* zoomed far out on a linear axis: cells from the buckets */
    int by_buckets = ll && ll->bits && zoomed_far_out(c);
    if (by_buckets) fill_lane_lod(c, ll, lod->bucket_ns);
    size_t s0, s1, m0, m1;
    span_range(c, lane, lane_idx, &s0, &s1);
    mark_range(lane, sc->t0, sc->t1, &m0, &m1);
    if (by_buckets) s1 = s0, m1 = m0;
    for (size_t i = s0; i < s1; i++) {
        const struct layout_span *s = &lane->spans[i];
        int c0, c1;
        if (!scene_span_cells(sc, s->t0, s->t1, s->end == LAYOUT_END_OPEN, &c0, &c1)) continue;
        uint8_t flag = s->kind < LAYOUT_SPAN_KIND_COUNT ? span_bit[s->kind] : 0;
        for (int k = c0; k <= c1; k++) c->bits[k] |= flag;
    }
    for (int k = 0; k < n; k++) {
        uint8_t b = c->bits[k];
        c->fill[k] = (uint8_t)((b & B_DOWN)                    ? SCENE_SYM_CRASHED
                               : (b & B_PAUSE) && (b & B_HOLD) ? SCENE_SYM_PAUSED_HOLDING
                               : (b & B_PAUSE)                 ? SCENE_SYM_PAUSED
                               : (b & B_HOLD)                  ? SCENE_SYM_HOLDING
                               : (b & B_LEASE)                 ? SCENE_SYM_LEASE
                               : (b & B_ACQ)                   ? SCENE_SYM_ACQUIRING
                                                               : SCENE_SYM_NONE);
    }
    for (size_t i = m0; i < m1; i++) {
        const struct layout_mark *m = &lane->marks[i];
        int g = mark_sym(m);
        int cell = scene_mark_cell(sc, m->t);
        if (g == SCENE_SYM_NONE || cell < 0) continue;
        int cur = c->win[cell], st = mark_style(m, g), pics = c->v->char_w > c->v->cell_w;
        if (cur == SCENE_SYM_NONE || mark_rank(g, st, pics) >= mark_rank(cur, c->winst[cell], pics)) {
            c->win[cell] = (uint8_t)g;
            c->winst[cell] = (uint8_t)st;
            c->winm[cell] = i;
        }
    }
}

static int place_prio_of(int sym, int style);

/* Level of detail for badges: zoomed far out, a lane's instants stand closer
 * than their ticks are wide (a million events: one in every pixel column of
 * a client's lane, 8,000 ticks drawn over each other into a black comb, the
 * badges under them cut to pieces). A cluster of more than THIN_MIN
 * instants, each within THIN_PX pixels of the one before, keeps one instant
 * in every THIN_PX pixels of it (counted from the cluster's first): the
 * most important by placement order (a stale write, a rejected write, then
 * by priority; the earliest on a tie), so that violations never vanish;
 * dense[k] = 1 marks the cells of such clusters, whose routine instants
 * are drawn as ticks only (see routine()), and not over a pause or a crash
 * (over_fault), so that the lane's fill shows between them and only what
 * matters gets a badge. Sparser instants, every
 * picture of a short run, are left alone (dense[k] = 0). */
enum { THIN_PX = 8, THIN_MIN = 8 };
static void thin_instants(struct scene_ctx *c, int n, int cell_w, uint8_t *dense) {
    if (n <= 0) return;
    memset(dense, 0, (size_t)n);
    if (cell_w < 1) cell_w = 1;
    int gap = THIN_PX / cell_w; /* cells: THIN_PX pixels or less apart */
    if (gap < 1) return;
    for (int k = 0; k < n;) {
        if (c->win[k] == SCENE_SYM_NONE) {
            k++;
            continue;
        }
        int last = k, count = 1;
        for (int j = k + 1; j < n && j - last <= gap; j++)
            if (c->win[j] != SCENE_SYM_NONE) last = j, count++;
        if (count > THIN_MIN) {
            int best = -1, bin = -1;
            memset(dense + k, 1, (size_t)(last - k + 1));
            for (int j = k; j <= last; j++) {
                if (c->win[j] == SCENE_SYM_NONE) continue;
                int b = (j - k) * cell_w / THIN_PX;
                if (b != bin) { /* a new bin: its first instant is the best so far */
                    bin = b;
                    best = j;
                    continue;
                }
                if (place_prio_of(c->win[j], c->winst[j]) > place_prio_of(c->win[best], c->winst[best])) {
                    c->win[best] = SCENE_SYM_NONE;
                    best = j;
                } else {
                    c->win[j] = SCENE_SYM_NONE;
                }
            }
        }
        k = last + 1;
    }
}

/* The instants of every turn of a healthy run (acquire, release, grant,
 * renew, delete, read, a write accepted in time): in a dense cluster, a
 * tick. The rest (a crash, a lost lock, an expiry, a wrong release, a
 * stale or rejected write ...) keep their badges. */
static int routine(int style) {
    return style == SCENE_ST_MARK_OK || style == SCENE_ST_MARK_SERVER || style == SCENE_ST_MARK_NOTE;
}

/* Whether the tick of cell k (4 px wide, framed: paint.c) would cover a
 * cell paused or down: zoomed out a pause or a crash is a column or two of
 * its fill, and a routine tick of a dense cluster over it is left out, so
 * that the fault shows. */
static int over_fault(const struct scene_ctx *c, int n, int k, int cell_w) {
    int x = k * cell_w + cell_w / 2, a = (x - 2) / cell_w, b = (x + 1) / cell_w;
    for (int j = a < 0 ? 0 : a; j <= b && j < n; j++) {
        int f = c->fill[j];
        if (f == SCENE_SYM_PAUSED || f == SCENE_SYM_PAUSED_HOLDING || f == SCENE_SYM_CRASHED) return 1;
    }
    return 0;
}

/* Runs of equal cells as rectangles, then the winning instants over them. */
static void emit_cells(struct scene_ctx *c, const struct layout_lane *lane, int lane_idx, int y) {
    const struct scene_view *v = c->v;
    struct scene *sc = c->sc;
    int n = sc->axis.ncells;
    int pad = v->lane_h > 2 ? v->lane_h / 6 : 0;
    for (int k = 0; k < n;) {
        int g = c->fill[k], e = k;
        while (e + 1 < n && c->fill[e + 1] == g) e++;
        if (g != SCENE_SYM_NONE) {
            struct scene_cmd *r = scene_add(c, SCENE_CMD_RECT, scene_syms[g].style, sc->plot_x + k * v->cell_w, y + pad,
                                            (e - k + 1) * v->cell_w, v->lane_h - 2 * pad);
            if (r) {
                r->sym = (uint8_t)g;
                r->lane = lane_idx;
                r->t0 = sc->t0 + (sim_ns)k * sc->axis.cell_ns;
                r->t1 = sc->t0 + (sim_ns)(e + 1) * sc->axis.cell_ns;
            }
        }
        k = e + 1;
    }
    for (int k = 0; k < n; k++) {
        int g = c->win[k] != SCENE_SYM_NONE ? c->win[k] : c->fill[k];
        if (g != SCENE_SYM_NONE) c->used[g] = 1;
    }
    /* Pictures: a write's badge shows its token; a badge that would cover a
     * more important one (higher priority, then earlier) shrinks to a tick. */
    int badges = v->char_w > v->cell_w;
    uint8_t *dense = c->bits; /* free now: the fills are made */
    if (badges) thin_instants(c, n, v->cell_w, dense);
    size_t nwin = 0;
    for (int k = 0; k < n; k++) {
        if (c->win[k] == SCENE_SYM_NONE) continue;
        if (badges && dense[k] && routine(c->winst[k]) && over_fault(c, n, k, v->cell_w)) continue;
        const struct layout_mark *m = &lane->marks[c->winm[k]];
        char label[24] = "";
        int sym_k = c->win[k];
        if (badges && (sym_k == SCENE_SYM_WRITE_OK || sym_k == SCENE_SYM_WRITE_REJECTED) && m->token)
            snprintf(label, sizeof label, "%llu", (unsigned long long)m->token);
        else if (badges && sym_k == SCENE_SYM_READ) /* the value read */
            snprintf(label, sizeof label, "=%lld", (long long)m->value);
        else if (badges && sym_k == SCENE_SYM_ACQUIRED && m->token) /* the token it got */
            snprintf(label, sizeof label, "+%llu", (unsigned long long)m->token);
        int chars = label[0] ? (int)strlen(label) : 1;
        int w = badges ? chars * v->char_w + 8 : v->cell_w;
        int x = badges ? sc->plot_x + k * v->cell_w + v->cell_w / 2 - w / 2 : sc->plot_x + k * v->cell_w;
        struct scene_cmd *s = scene_add(c, SCENE_CMD_SYM, c->winst[k], x, y + pad, w, v->lane_h - 2 * pad);
        if (!s) return;
        s->x2 = sc->plot_x + k * v->cell_w + v->cell_w / 2; /* the event's own x */
        s->sym = (uint8_t)sym_k;
        if (c->winst[k] == SCENE_ST_STALE_WRITE) c->used_stale = 1;
        s->lane = lane_idx;
        s->seq = (int32_t)m->seq;
        s->t0 = s->t1 = m->t;
        if (label[0]) s->label_at = scene_store(c, label, strlen(label));
        if (badges && dense[k] && routine(c->winst[k])) s->minor = 1;
        if (v->flags & SCENE_F_TIPS) tooltip(c, s, lane, m);
        nwin++;
    }
    if (badges && nwin > 1 && !sc->err) place_badges(c, &sc->cmd[sc->ncmd - nwin], nwin);
}

/* Placement order: by importance in pictures (mark_rank). */
static int place_prio_of(int sym, int style) { return mark_rank(sym, style, 1); }

static int place_prio(const struct scene_cmd *k) { return place_prio_of(k->sym, k->style); }

/* Placed badges by pixel column: occ[x - base] = 1 + the placement rank of
 * the badge covering column x (badges placed do not overlap), 0 = free. */
struct occupancy {
    int *occ;
    int base, n;
};

/* Whether a badge at [x, x + w) keeps 3 px clear of every placed one: no
 * placed column in [x - 3, x + w + 2]. */
static int clear_of(const struct occupancy *o, int x, int w) {
    for (int p = x - 3; p <= x + w + 2; p++) {
        int i = p - o->base;
        if (i >= 0 && i < o->n && o->occ[i]) return 0;
    }
    return 1;
}

static void occupy(struct occupancy *o, int x, int w, int rank) {
    for (int p = x; p < x + w; p++) {
        int i = p - o->base;
        if (i >= 0 && i < o->n) o->occ[i] = rank + 1;
    }
}

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return x < y ? -1 : x > y;
}

/* Greedy placement: in order of importance (then time), a badge stays at its
 * time if it clears the badges placed so far, else it moves just left or
 * right of one in its way (at most two badges' widths; its tick stays at its
 * time; the nearest such place, the earlier placed neighbour on a tie), else
 * it is minor: a tick only. The badges placed are found by pixel column, so
 * a lane of a thousand badges costs their widths, not their pairs. */
static void place_badges(struct scene_ctx *c, struct scene_cmd *k, size_t n) {
    size_t *order = malloc(n * sizeof *order);
    int lo = c->sc->plot_x - c->v->char_w, hi = c->sc->plot_x + c->sc->plot_w + c->v->char_w;
    int maxw = 0;
    for (size_t i = 0; i < n; i++)
        if (k[i].w > maxw) maxw = k[i].w;
    struct occupancy o = {NULL, 0, 0};
    int xmin = lo, xmax = hi;
    for (size_t i = 0; i < n; i++) {
        if (k[i].x < xmin) xmin = k[i].x;
        if (k[i].x + k[i].w > xmax) xmax = k[i].x + k[i].w;
    }
    o.base = xmin - 8 * maxw - 8;
    o.n = xmax - o.base + 8 * maxw + 8;
    o.occ = calloc((size_t)o.n, sizeof *o.occ);
    int *near = malloc((size_t)(7 * maxw + 16) * sizeof *near);
    if (!order || !o.occ || !near) {
        free(order);
        free(o.occ);
        free(near);
        c->sc->err = LSIM_ENOMEM;
        return;
    }
    /* by placement priority, highest first, in time order within one (a
     * stable counting sort: priorities are small numbers) */
    int pmin = 0, pmax = 0;
    for (size_t i = 0; i < n; i++) {
        int p = place_prio(&k[i]);
        if (i == 0 || p < pmin) pmin = p;
        if (i == 0 || p > pmax) pmax = p;
    }
    size_t *start = calloc((size_t)(pmax - pmin + 2), sizeof *start);
    if (!start) {
        free(order);
        free(o.occ);
        free(near);
        c->sc->err = LSIM_ENOMEM;
        return;
    }
    for (size_t i = 0; i < n; i++) start[pmax - place_prio(&k[i]) + 1]++;
    for (int p = 1; p <= pmax - pmin + 1; p++) start[p] += start[p - 1];
    for (size_t i = 0; i < n; i++) order[start[pmax - place_prio(&k[i])]++] = i;
    free(start);
    for (size_t i = 0; i < n; i++) {
        struct scene_cmd *a = &k[order[i]];
        if (a->minor) continue; /* a tick already (a routine instant of a dense cluster) */
        if (clear_of(&o, a->x, a->w)) {
            occupy(&o, a->x, a->w, (int)i);
            continue;
        }
        /* the placed badges that could offer a place within 2 widths */
        int nn = 0;
        for (int p = a->x - 3 * a->w - 3; p <= a->x + 3 * a->w + 3; p++) {
            int q = p - o.base, r = q >= 0 && q < o.n ? o.occ[q] : 0;
            if (r && (nn == 0 || near[nn - 1] != r - 1)) near[nn++] = r - 1;
        }
        qsort(near, (size_t)nn, sizeof *near, cmp_int);
        int best = 0, found = 0;
        for (int t = 0; t < nn; t++) {
            if (t > 0 && near[t] == near[t - 1]) continue;
            const struct scene_cmd *b = &k[order[near[t]]];
            int cand[2] = {b->x + b->w + 3, b->x - a->w - 3};
            for (int q = 0; q < 2; q++) {
                int d = cand[q] - a->x;
                if (abs(d) > 2 * a->w || cand[q] < lo || cand[q] + a->w > hi) continue;
                if (!clear_of(&o, cand[q], a->w)) continue;
                if (!found || abs(d) < abs(best)) best = d, found = 1;
            }
        }
        if (found) {
            a->x += best;
            occupy(&o, a->x, a->w, (int)i);
        } else {
            a->minor = 1;
        }
    }
    free(order);
    free(o.occ);
    free(near);
}

/* Whether [x0, x1] meets a badge of the lane or a label already put on it
 * (a server holding two leases at once labels both): the right edge of the
 * rightmost met, or 0. The lane's symbols and labels are the last commands
 * added. */
static int covers_badge(const struct scene *sc, int lane_idx, int x0, int x1) {
    int edge = 0;
    for (size_t i = sc->ncmd; i-- > 0;) {
        const struct scene_cmd *k = &sc->cmd[i];
        if (k->lane != lane_idx) break;
        int pad = k->type == SCENE_CMD_TEXT ? 4 : 0; /* a label's box on a solid style */
        if (((k->type == SCENE_CMD_SYM && !k->minor) || k->type == SCENE_CMD_TEXT) && k->x - pad < x1 &&
            x0 < k->x + k->w + pad && k->x + k->w + pad > edge)
            edge = k->x + k->w + pad;
    }
    return edge;
}

/* Where a label of width tw fits in [x0, x1) from tx on, moved past the
 * badges and labels in its way (at most four): its x, or -1. */
static int label_x(const struct scene *sc, int lane_idx, int tx, int tw, int x1) {
    int edge, tries = 0;
    while ((edge = covers_badge(sc, lane_idx, tx - 4, tx + tw + 4)) != 0 && tries++ < 4) tx = edge + 8;
    return edge || tx + tw > x1 ? -1 : tx;
}

/* One piece of a lease's TTL bar, [from, to], counting down ttl from from. */
static void ttl_piece(struct scene_ctx *c, int lane_idx, int y, int h, sim_ns from, sim_ns to, sim_ns ttl) {
    struct scene *sc = c->sc;
    int a0, a1;
    if (!scene_span_cells(sc, from, to, 0, &a0, &a1)) return;
    /* zoomed far out with an index: shorter than a cell, in the one it starts in */
    if (zoomed_far_out(c) && to - from < sc->axis.cell_ns) a1 = a0;
    sim_ns a = from < sc->t0 ? sc->t0 : from, b = to > sc->t1 ? sc->t1 : to;
    sim_ns left0 = from + ttl - a, left1 = from + ttl - b;
    uint16_t f0 = (uint16_t)(left0 <= 0 ? 0 : left0 >= ttl ? 1000 : left0 * 1000 / ttl);
    uint16_t f1 = (uint16_t)(left1 <= 0 ? 0 : left1 >= ttl ? 1000 : left1 * 1000 / ttl);
    int x = sc->plot_x + a0 * c->v->cell_w, w = (a1 - a0 + 1) * c->v->cell_w;
    /* Level of detail: a piece within one cell, after another of the lane
     * in that same cell (leases shorter than a pixel, zoomed out), joins
     * it: one bar as high at each end as the higher of the two there,
     * which covers both (the same colour, bottom-aligned). Zoomed out over
     * a million events, 5,000 bars become one per pixel column. */
    struct scene_cmd *prev = sc->ncmd ? &sc->cmd[sc->ncmd - 1] : NULL;
    if (a0 == a1 && prev && prev->type == SCENE_CMD_RECT && prev->style == SCENE_ST_LEASE && prev->lane == lane_idx &&
        prev->x == x && prev->w == w && prev->y == y && prev->h == h) {
        if (f0 > prev->frac0) prev->frac0 = f0;
        if (f1 > prev->frac1) prev->frac1 = f1;
        if (to > prev->t1) prev->t1 = to;
        return;
    }
    struct scene_cmd *r = scene_add(c, SCENE_CMD_RECT, SCENE_ST_LEASE, x, y, w, h);
    if (!r) return;
    r->sym = SCENE_SYM_LEASE;
    r->frac0 = f0;
    r->frac1 = f1;
    r->lane = lane_idx;
    r->t0 = from;
    r->t1 = to;
}

/* Pixel detail over a lane: tokens on critical sections and leases, whose
 * lease it is, the TTL running out, token numbers over writes. */
static void emit_detail(struct scene_ctx *c, const struct layout_lane *lane, int lane_idx, int y) {
    const struct scene_view *v = c->v;
    struct scene *sc = c->sc;
    int pad = v->lane_h > 2 ? v->lane_h / 6 : 0;
    char buf[64];
    uint8_t saved = c->layer;
    c->layer = SCENE_LAYER_EXTRA;
    size_t s0, s1;
    span_range(c, lane, lane_idx, &s0, &s1);
    for (size_t i = s0; i < s1; i++) {
        const struct layout_span *s = &lane->spans[i];
        int c0, c1;
        if (!scene_span_cells(sc, s->t0, s->t1, s->end == LAYOUT_END_OPEN, &c0, &c1)) continue;
        int x = sc->plot_x + c0 * v->cell_w, w = (c1 - c0 + 1) * v->cell_w;
        if (s->kind == LAYOUT_SPAN_LEASE && s->validity_ns > 0) {
            /* the TTL as this server counts it: full at the grant and at each
             * renewal, shrinking to nothing at the expiry */
            sim_ns from = s->t0, ttl = s->validity_ns;
            size_t j0, j1; /* the lane's marks within the lease */
            mark_range(lane, s->t0, s->t1, &j0, &j1);
            for (size_t j = j0; j <= j1; j++) {
                const struct layout_mark *m = j < j1 ? &lane->marks[j] : NULL;
                if (m && (m->kind != LAYOUT_MARK_RENEW || m->peer != s->peer || m->t <= from || m->t >= s->t1))
                    continue;
                sim_ns to = m ? m->t : s->t1;
                ttl_piece(c, lane_idx, y + v->lane_h - pad - v->lane_h / 5, v->lane_h / 5, from, to, ttl);
                if (!m) break;
                from = m->t;
            }
        }
        if (s->kind == LAYOUT_SPAN_LEADER || s->kind == LAYOUT_SPAN_LOCK_DELAY) {
            /* A leader: a band along the lane's top, its term at its right
             * end. A lock-delay: a hatched band through the lane's middle,
             * its length. */
            int leader = s->kind == LAYOUT_SPAN_LEADER, style = leader ? SCENE_ST_LEADER : SCENE_ST_LOCK_DELAY;
            int bh = v->lane_h / 5 > 3 ? v->lane_h / 5 : 3, by = leader ? y + 1 : y + v->lane_h / 2 - bh;
            struct scene_cmd *r = scene_add(c, SCENE_CMD_RECT, style, x, by, w, leader ? bh : 2 * bh);
            if (r) {
                r->lane = lane_idx;
                r->t0 = s->t0;
                r->t1 = s->t1;
            }
            c->used_extra[(leader ? SCENE_USED_LEADER : SCENE_USED_LOCK_DELAY) - SCENE_USED_CLOCK] = 1;
            char d[32];
            format_time_ns(d, sizeof d, s->validity_ns);
            if (!leader) snprintf(buf, sizeof buf, "lock-delay %s", d);
            else if (s->token) snprintf(buf, sizeof buf, "leader, term %llu", (unsigned long long)s->token);
            else snprintf(buf, sizeof buf, "leader");
            /* at its right end, clear of badges; else from its left end,
             * after the badges in its way, if it still fits in the band */
            int len = (int)strlen(buf), tw = len * v->char_w, tx = x + w - tw - v->char_w;
            if (tx < x + v->char_w) continue; /* the band is too short for it */
            if (covers_badge(sc, lane_idx, tx - 4, tx + tw + 4) &&
                (tx = label_x(sc, lane_idx, x + v->char_w, tw, x + w - v->char_w)) < 0)
                continue;
            struct scene_cmd *k = scene_text_n(c, tx, y + pad + (v->lane_h - 2 * pad - v->line_h) / 2, buf, (size_t)len,
                                               leader ? SCENE_ST_LEADER : SCENE_ST_MESSAGE);
            if (k) k->lane = lane_idx;
            continue;
        }
        if (s->kind != LAYOUT_SPAN_LEASE && s->kind != LAYOUT_SPAN_HOLDING && s->kind != LAYOUT_SPAN_REPLICA) continue;
        /* every label is 5 characters or more ("tok 7"): a span too narrow
         * for that is passed over before one is made (zoomed out, thousands) */
        if (5 * v->char_w + 2 * (v->char_w + 12) > w) continue;
        if (s->kind == LAYOUT_SPAN_REPLICA)
            snprintf(buf, sizeof buf, s->token ? "copy: %s, tok %llu" : "copy: %s", scene_node_name(c->ly, s->peer),
                     (unsigned long long)s->token);
        else if (s->kind == LAYOUT_SPAN_LEASE)
            snprintf(buf, sizeof buf, s->token ? "held by %s, tok %llu" : "held by %s", scene_node_name(c->ly, s->peer),
                     (unsigned long long)s->token);
        else if (s->token) snprintf(buf, sizeof buf, "tok %llu", (unsigned long long)s->token);
        else continue;
        /* after the badge that opens the span */
        int len = (int)strlen(buf), skip = v->char_w + 12;
        if (len * v->char_w + 2 * skip > w) continue; /* clear of the badges at both ends */
        /* after the badges in its way (a promotion, a refused release), if
         * it still fits in the span */
        int tw = len * v->char_w, tx = label_x(sc, lane_idx, x + skip, tw, x + w - skip);
        if (tx < 0) continue;
        struct scene_cmd *k = scene_text_n(c, tx, y + pad + (v->lane_h - 2 * pad - v->line_h) / 2, buf, (size_t)len,
                                           s->kind == LAYOUT_SPAN_HOLDING ? SCENE_ST_HOLDING : SCENE_ST_LABEL);
        if (k) k->lane = lane_idx;
    }
    c->layer = saved;
}

/* A clock's offset at t on the piece that starts at p. */
static sim_ns seg_off(const struct layout_clock *p, sim_ns t) {
    sim_ns dt = t - p->t;
    return p->offset_ns + dt / 1000000 * p->ppm + dt % 1000000 * p->ppm / 1000000;
}

/* "+25s", "-300ms". */
static void signed_time(char *buf, size_t n, sim_ns d) {
    if (n < 2) return;
    buf[0] = d < 0 ? '-' : '+';
    format_time_ns(buf + 1, n - 1, d < 0 ? -d : d);
}

/* Pictures: a thin lane under a node whose clock changed, its wall clock
 * minus true time against a faint line at 0 (true time), scaled to the
 * largest distance in the window; a step is a vertical jump labelled with
 * its size, a drift or a slew labelled where it starts. */
static void emit_clock(struct scene_ctx *c, const struct layout_lane *lane, int lane_idx) {
    const struct scene_view *v = c->v;
    struct scene *sc = c->sc;
    int h = v->lane_h * 3 / 4, y = c->y, mid = y + h / 2, half = h / 2 - 3;
    size_t n = lane->nclock;
    uint8_t saved = c->layer;
    c->layer = SCENE_LAYER_EXTRA;
    struct scene_cmd *k = scene_text_n(c, c->x0, y + (h - v->line_h) / 2, "clock", 5, SCENE_ST_CLOCK);
    if (k) k->lane = lane_idx;
    sim_ns maxabs = 0;
    for (size_t i = 0; i < n; i++) {
        const struct layout_clock *p = &lane->clock[i];
        sim_ns a = p->t < sc->t0 ? sc->t0 : p->t, b = i + 1 < n ? lane->clock[i + 1].t : sc->t1;
        if (b > sc->t1) b = sc->t1;
        if (b < a) continue;
        sim_ns o[2] = {seg_off(p, a), seg_off(p, b)};
        for (int q = 0; q < 2; q++) {
            sim_ns m = o[q] < 0 ? -o[q] : o[q];
            if (m > maxabs) maxabs = m;
        }
    }
    if (maxabs == 0) maxabs = 1;
#define CLOCK_Y(o) (mid - (int)((o)*half / maxabs))
    struct scene_cmd *g = scene_add(c, SCENE_CMD_LINE, SCENE_ST_GRID, sc->plot_x, mid, sc->plot_w, 1);
    if (g) {
        g->x2 = sc->plot_x + sc->plot_w - 1;
        g->y2 = mid;
        g->lane = lane_idx;
    }
    g = scene_add(c, SCENE_CMD_LINE, SCENE_ST_GRID, sc->plot_x, y + h - 1, sc->plot_w, 1);
    if (g) {
        g->x2 = sc->plot_x + sc->plot_w - 1;
        g->y2 = y + h - 1;
        g->lane = lane_idx;
    }
    int last_end = -1, right = sc->plot_x + sc->plot_w;
    for (size_t i = 0; i < n && !sc->err; i++) {
        const struct layout_clock *p = &lane->clock[i];
        sim_ns a = p->t < sc->t0 ? sc->t0 : p->t, b = i + 1 < n ? lane->clock[i + 1].t : sc->t1;
        if (b > sc->t1) b = sc->t1;
        if (b < a) continue;
        int x0 = scene_x_of(sc, a), x1 = scene_x_of(sc, b);
        struct scene_cmd *l = scene_add(c, SCENE_CMD_LINE, SCENE_ST_CLOCK, x0, CLOCK_Y(seg_off(p, a)), 0, 0);
        if (!l) break;
        l->x2 = x1;
        l->y2 = CLOCK_Y(seg_off(p, b));
        l->lane = lane_idx;
        l->t0 = a;
        l->t1 = b;
        if (i == 0 || p->t < sc->t0 || p->kind == LAYOUT_CLOCK_SLEW_END) continue;
        sim_ns before = seg_off(&lane->clock[i - 1], p->t);
        if (before != p->offset_ns) { /* the jump, as a jump */
            l = scene_add(c, SCENE_CMD_LINE, SCENE_ST_CLOCK, x0, CLOCK_Y(before), 0, 0);
            if (!l) break;
            l->x2 = x0;
            l->y2 = CLOCK_Y(p->offset_ns);
            l->lane = lane_idx;
            l->t0 = l->t1 = p->t;
            l->seq = (int32_t)p->seq;
        }
        char buf[96], d[32], over[32];
        if (p->kind == LAYOUT_CLOCK_STEP && (p->which & TRACE_CLOCK_AT_START)) {
            signed_time(d, sizeof d, p->step_ns);
            const struct layout_clock *q = i + 1 < n ? &lane->clock[i + 1] : NULL;
            if (q && q->t == p->t && q->kind == LAYOUT_CLOCK_DRIFT) /* the same `clock` line */
                snprintf(buf, sizeof buf, "starts %s, drift %+lldppm", d, (long long)q->value);
            else snprintf(buf, sizeof buf, "starts %s", d);
        } else if (p->kind == LAYOUT_CLOCK_STEP) {
            signed_time(d, sizeof d, p->step_ns);
            snprintf(buf, sizeof buf, "%s%s", d, p->which == 2 ? " mono" : p->which == 3 ? " both" : "");
        } else if (p->kind == LAYOUT_CLOCK_DRIFT) {
            snprintf(buf, sizeof buf, "drift %+lldppm", (long long)p->value);
        } else {
            signed_time(d, sizeof d, p->value);
            format_time_ns(over, sizeof over, p->over_ns);
            snprintf(buf, sizeof buf, "slew %s/%s", d, over);
        }
        int w = (int)strlen(buf) * v->char_w, tx = x0 + 4;
        if (tx + w > right) tx = x0 - 4 - w; /* at the right edge: on the left of it */
        if (tx <= last_end || tx < sc->plot_x) continue;
        k = scene_text_n(c, tx, y + (h - v->line_h) / 2, buf, strlen(buf), SCENE_ST_CLOCK);
        if (k) {
            k->lane = lane_idx;
            k->t0 = k->t1 = p->t;
        }
        last_end = tx + w + v->char_w;
    }
#undef CLOCK_Y
    c->used_extra[SCENE_USED_CLOCK - SCENE_USED_CLOCK] = 1;
    c->y += h;
    c->layer = saved;
}

void scene_emit_lane(struct scene_ctx *c, const struct layout_lane *lane, int lane_idx) {
    const struct scene_view *v = c->v;
    int y = c->y;
    fill_lane(c, lane, lane_idx);
    scene_text_n(c, c->x0, y + (v->lane_h - v->line_h) / 2, lane->name, strnlen(lane->name, sizeof lane->name),
                 SCENE_ST_LABEL);
    if (v->lane_h > 1) {
        struct scene_cmd *g = scene_add(c, SCENE_CMD_LINE, SCENE_ST_GRID, c->sc->plot_x, y + v->lane_h - 1,
                                        c->sc->plot_w, 1);
        if (g) {
            g->x2 = c->sc->plot_x + c->sc->plot_w - 1;
            g->y2 = y + v->lane_h - 1;
            g->lane = lane_idx;
        }
    }
    emit_cells(c, lane, lane_idx, y);
    if (v->flags & SCENE_F_DETAIL) emit_detail(c, lane, lane_idx, y);
    if (c->lane_y) c->lane_y[lane_idx] = y + v->lane_h / 2;
    c->y += v->lane_h;
    if ((v->flags & SCENE_F_DETAIL) && lane->nclock) emit_clock(c, lane, lane_idx);
    c->lanes_end = c->y;
}
