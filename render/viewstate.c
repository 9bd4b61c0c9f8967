/* Viewstate: the window's pure state (render/viewstate.h). The stops are the
 * trace events the narration speaks about; violations and quiz stops are
 * found by replaying each trace once. */
#include "viewstate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fmt.h"
#include "layout.h"
#include "narrate.h"

/* The kinds a cursor stops at: what a teacher would point to. */
static int is_stop(int kind) {
    switch ((enum trace_kind)kind) {
    case TRACE_PAUSE:
    case TRACE_RESUME:
    case TRACE_CRASH:
    case TRACE_RESTART:
    case TRACE_CLOCK_STEP:
    case TRACE_PARTITION:
    case TRACE_HEAL:
    case TRACE_ACQUIRE_START:
    case TRACE_ACQUIRED:
    case TRACE_ACQUIRE_FAILED:
    case TRACE_CS_EXIT:
    case TRACE_SRV_GRANT:
    case TRACE_SRV_RENEW:
    case TRACE_SRV_EXPIRE:
    case TRACE_SRV_DELETE:
    case TRACE_SRV_KEEP:
    case TRACE_READ:
    case TRACE_WRITE:
    case TRACE_DOUBLE_ENTRY_BEGIN:
    case TRACE_DOUBLE_ENTRY_END:
    case TRACE_STALE_WRITE:
    case TRACE_WRONG_RELEASE:
    case TRACE_WRITE_SKIPPED:
    case TRACE_CONTROL:
    case TRACE_LATE_WRITE: return 1;
    /* too fine, or said elsewhere, to stop at */
    case TRACE_RUN_START:
    case TRACE_RUN_END:
    case TRACE_CLOCK_DRIFT:
    case TRACE_CLOCK_SLEW:
    case TRACE_LINK:
    case TRACE_MSG_SEND:
    case TRACE_MSG_RECV:
    case TRACE_MSG_DROP:
    case TRACE_ACQUIRE_TRY:
    case TRACE_ACQUIRE_DENIED:
    case TRACE_RELEASE_SENT:
    case TRACE_WORK_START:
    case TRACE_WORK_END:
    case TRACE_POINT:
    case TRACE_PROGRAM_DONE:
    case TRACE_SRV_DENY:
    case TRACE_SRV_NOTE:
    case TRACE_RESOURCE_INIT: return 0;
    }
    return 0;
}

static int cmp_ev(const void *pa, const void *pb) {
    const struct viewstate_event *a = pa, *b = pb;
    if (a->t != b->t) return a->t < b->t ? -1 : 1;
    if (a->panel != b->panel) return a->panel < b->panel ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static sim_ns trace_end(const struct trace *tr) {
    for (size_t i = tr->len; i-- > 0;)
        if (tr->ev[i].kind == TRACE_RUN_END) return tr->ev[i].t;
    return tr->len ? tr->ev[tr->len - 1].t : 0;
}

/* The stops of one trace appended to *out (room for tr->len more). */
static int collect(struct viewstate_event *out, size_t *n, const struct trace *tr, int panel) {
    int nn = tr->nnodes > 0 ? tr->nnodes : 1;
    uint8_t *in_cs = calloc((size_t)nn, 1);
    int32_t *expired_owner = malloc((size_t)nn * sizeof *expired_owner); /* per server */
    size_t *where = malloc((tr->len ? tr->len : 1) * sizeof *where);     /* trace ev -> stop */
    if (!in_cs || !expired_owner || !where) {
        free(in_cs);
        free(expired_owner);
        free(where);
        return LSIM_ENOMEM;
    }
    for (int i = 0; i < nn; i++) expired_owner[i] = -1;
    for (size_t i = 0; i < tr->len; i++) {
        const struct trace_event *e = &tr->ev[i];
        int node_ok = e->node >= 0 && e->node < nn;
        where[i] = (size_t)-1;
        if (!is_stop(e->kind)) continue;
        struct viewstate_event *s = &out[(*n)++];
        memset(s, 0, sizeof *s);
        s->t = e->t;
        s->seq = (uint32_t)i;
        s->panel = (uint16_t)panel;
        where[i] = *n - 1;
        switch ((enum trace_kind)e->kind) {
        case TRACE_ACQUIRED:
            if (node_ok) in_cs[e->node] = 1;
            break;
        case TRACE_CS_EXIT:
            if (node_ok) in_cs[e->node] = 0;
            break;
        case TRACE_SRV_EXPIRE:
            if (node_ok) expired_owner[e->node] = e->peer;
            break;
        case TRACE_SRV_GRANT:
            /* the Kleppmann moment: the lease ran out while its holder
             * still believes it holds the lock, and another gets it */
            if (node_ok && expired_owner[e->node] >= 0 && expired_owner[e->node] < nn &&
                expired_owner[e->node] != e->peer && in_cs[expired_owner[e->node]]) {
                s->flags |= VIEWSTATE_DECISIVE;
                s->quiz = VIEWSTATE_QUIZ_GRANT;
            }
            if (node_ok) expired_owner[e->node] = -1;
            break;
        case TRACE_DOUBLE_ENTRY_BEGIN:
            s->flags |= VIEWSTATE_VIOLATION;
            s->span_ns = 0;
            for (size_t k = i + 1; k < tr->len; k++) {
                const struct trace_event *f = &tr->ev[k];
                if (f->kind == TRACE_DOUBLE_ENTRY_END &&
                    ((f->node == e->node && f->peer == e->peer) || (f->node == e->peer && f->peer == e->node))) {
                    s->span_ns = f->t - e->t;
                    break;
                }
            }
            break;
        case TRACE_WRONG_RELEASE: s->flags |= VIEWSTATE_VIOLATION; break;
        case TRACE_STALE_WRITE:
        case TRACE_LATE_WRITE:
            if (e->kind == TRACE_STALE_WRITE && e->a) s->flags |= VIEWSTATE_VIOLATION;
            /* the write it judges (same time, at a resource, from this
             * writer) is the late write the quiz stops before */
            for (size_t k = i; k-- > 0 && tr->ev[k].t == e->t;) {
                const struct trace_event *w = &tr->ev[k];
                if (w->kind == TRACE_WRITE && w->peer == e->node && where[k] != (size_t)-1) {
                    out[where[k]].flags |= VIEWSTATE_DECISIVE;
                    out[where[k]].quiz = VIEWSTATE_QUIZ_LATE_WRITE;
                    break;
                }
            }
            break;
        /* no state, violation or quiz of its own (a kind that is no stop never gets here) */
        case TRACE_RUN_START:
        case TRACE_RUN_END:
        case TRACE_PAUSE:
        case TRACE_RESUME:
        case TRACE_CRASH:
        case TRACE_RESTART:
        case TRACE_CLOCK_STEP:
        case TRACE_CLOCK_DRIFT:
        case TRACE_CLOCK_SLEW:
        case TRACE_PARTITION:
        case TRACE_HEAL:
        case TRACE_LINK:
        case TRACE_MSG_SEND:
        case TRACE_MSG_RECV:
        case TRACE_MSG_DROP:
        case TRACE_ACQUIRE_START:
        case TRACE_ACQUIRE_TRY:
        case TRACE_ACQUIRE_DENIED:
        case TRACE_ACQUIRE_FAILED:
        case TRACE_RELEASE_SENT:
        case TRACE_WORK_START:
        case TRACE_WORK_END:
        case TRACE_POINT:
        case TRACE_PROGRAM_DONE:
        case TRACE_SRV_DENY:
        case TRACE_SRV_RENEW:
        case TRACE_SRV_DELETE:
        case TRACE_SRV_KEEP:
        case TRACE_SRV_NOTE:
        case TRACE_READ:
        case TRACE_WRITE:
        case TRACE_DOUBLE_ENTRY_END:
        case TRACE_RESOURCE_INIT:
        case TRACE_WRITE_SKIPPED:
        case TRACE_CONTROL: break;
        }
    }
    free(in_cs);
    free(expired_owner);
    free(where);
    return 0;
}

static int build(struct viewstate_event **out, size_t *nout, sim_ns *t_end, const struct trace *const *trs, size_t n) {
    size_t cap = 1;
    for (size_t p = 0; p < n; p++) cap += trs[p]->len;
    struct viewstate_event *ev = malloc(cap * sizeof *ev);
    if (!ev) return LSIM_ENOMEM;
    size_t nev = 0;
    *t_end = 0;
    for (size_t p = 0; p < n; p++) {
        if (collect(ev, &nev, trs[p], (int)p) != 0) {
            free(ev);
            return LSIM_ENOMEM;
        }
        sim_ns e = trace_end(trs[p]);
        if (e > *t_end) *t_end = e;
    }
    qsort(ev, nev, sizeof *ev, cmp_ev);
    *out = ev;
    *nout = nev;
    return 0;
}

static void clamp_window(struct viewstate *vs) {
    sim_ns end = vs->t_end > 0 ? vs->t_end : 1;
    sim_ns w = vs->t1 - vs->t0;
    if (w > end) w = end;
    if (w < VIEWSTATE_MIN_WINDOW_NS) w = VIEWSTATE_MIN_WINDOW_NS;
    if (vs->t0 < 0) vs->t0 = 0;
    if (vs->t0 + w > end && end >= w) vs->t0 = end - w;
    if (vs->t0 < 0) vs->t0 = 0;
    vs->t1 = vs->t0 + w;
}

/* The last stop at or before t, or -1. */
static long stop_at(const struct viewstate *vs, sim_ns t) {
    long lo = 0, hi = (long)vs->nev; /* first stop later than t */
    while (lo < hi) {
        long mid = lo + (hi - lo) / 2;
        if (vs->ev[mid].t <= t) lo = mid + 1;
        else hi = mid;
    }
    return lo - 1;
}

/* Keep the cursor on screen: shift the window when it left. */
static void follow(struct viewstate *vs) {
    sim_ns w = vs->t1 - vs->t0;
    if (vs->cursor < vs->t0 || vs->cursor > vs->t1) {
        vs->t0 = vs->cursor - w / 4;
        vs->t1 = vs->t0 + w;
        clamp_window(vs);
    }
}

/* The tick that times not exact to the millisecond are rounded to: a
 * tenth of the smallest gap between two distinct stop times, as a power of
 * ten, at most 10 ms (two decimals) and at least 1 ns. */
static sim_ns resolution(const struct viewstate_event *ev, size_t nev) {
    sim_ns gap = 0;
    for (size_t i = 1; i < nev; i++) {
        sim_ns d = ev[i].t - ev[i - 1].t;
        if (d > 0 && (gap == 0 || d < gap)) gap = d;
    }
    sim_ns tick = 10 * SIM_NS_PER_MS;
    while (gap > 0 && tick > 1 && tick * 10 > gap) tick /= 10;
    return tick;
}

int viewstate_init(struct viewstate *vs, const struct trace *const *trs, size_t n, int quiz) {
    memset(vs, 0, sizeof *vs); /* no stop current, no question open */
    vs->quiz = quiz;
    vs->npanels = (int)n;
    int rc = build(&vs->ev, &vs->nev, &vs->t_end, trs, n);
    if (rc) return rc;
    vs->tick_ns = resolution(vs->ev, vs->nev);
    viewstate_fit(vs);
    return 0;
}

void viewstate_close(struct viewstate *vs) {
    free(vs->ev);
    memset(vs, 0, sizeof *vs);
}

int viewstate_reload(struct viewstate *vs, const struct trace *const *trs, size_t n) {
    struct viewstate_event *ev;
    size_t nev;
    sim_ns t_end;
    int rc = build(&ev, &nev, &t_end, trs, n);
    if (rc) return rc;
    /* answered questions stay answered when the same stop is still there */
    for (size_t i = 0; i < nev; i++)
        for (long k = stop_at(vs, ev[i].t); k >= 0 && vs->ev[k].t == ev[i].t; k--)
            if (vs->ev[k].seq == ev[i].seq && vs->ev[k].panel == ev[i].panel)
                ev[i].flags |= vs->ev[k].flags & VIEWSTATE_REVEALED;
    int was_whole = vs->t0 == 0 && vs->t1 >= vs->t_end;
    free(vs->ev);
    vs->ev = ev;
    vs->nev = nev;
    vs->t_end = t_end;
    vs->tick_ns = resolution(ev, nev);
    vs->npanels = (int)n;
    vs->question1 = 0;
    if (was_whole) viewstate_fit(vs);
    else clamp_window(vs);
    if (vs->cursor > t_end) vs->cursor = t_end;
    vs->cur1 = stop_at(vs, vs->cursor) + 1;
    return 0;
}

/* An unrevealed quiz stop at index i? */
static int asks(const struct viewstate *vs, long i) {
    return vs->quiz && (vs->ev[i].flags & VIEWSTATE_DECISIVE) && !(vs->ev[i].flags & VIEWSTATE_REVEALED);
}

int viewstate_step(struct viewstate *vs, int dir) {
    if (viewstate_asking(vs) >= 0) return 0; /* answer first */
    long next = viewstate_cur(vs) + (dir > 0 ? 1 : -1);
    if (next < -1 || next >= (long)vs->nev) return 0;
    if (dir > 0 && asks(vs, next)) {
        vs->question1 = next + 1;
        vs->playing = 0;
        return 1;
    }
    vs->cur1 = next + 1;
    vs->cursor = next >= 0 ? vs->ev[next].t : 0;
    follow(vs);
    return 1;
}

void viewstate_home(struct viewstate *vs) {
    vs->question1 = 0;
    vs->cur1 = 0;
    vs->cursor = 0;
    follow(vs);
}

void viewstate_end(struct viewstate *vs) {
    vs->question1 = 0;
    vs->cur1 = (long)vs->nev;
    vs->cursor = vs->t_end;
    follow(vs);
}

void viewstate_seek(struct viewstate *vs, sim_ns t) {
    if (t < 0) t = 0;
    if (t > vs->t_end) t = vs->t_end;
    vs->question1 = 0;
    vs->cursor = t;
    vs->cur1 = stop_at(vs, t) + 1;
}

double viewstate_rate(const struct viewstate *vs) {
    double r = (double)(vs->t_end > 0 ? vs->t_end : 1) / 20.0;
    for (int i = 0; i < vs->speed; i++) r *= 2;
    for (int i = 0; i > vs->speed; i--) r /= 2;
    return r;
}

int viewstate_play(struct viewstate *vs, double wall_s) {
    if (!vs->playing || viewstate_asking(vs) >= 0) return 0;
    double adv = wall_s * viewstate_rate(vs);
    sim_ns to = adv >= (double)(vs->t_end - vs->cursor) ? vs->t_end : vs->cursor + (sim_ns)adv;
    for (long i = viewstate_cur(vs) + 1; i < (long)vs->nev && vs->ev[i].t <= to; i++) {
        if (asks(vs, i)) { /* stop just before it */
            vs->cur1 = i;  /* the stop before it */
            vs->cursor = vs->ev[i].t > 0 ? vs->ev[i].t - 1 : 0;
            if (viewstate_cur(vs) >= 0 && vs->cursor < vs->ev[viewstate_cur(vs)].t)
                vs->cursor = vs->ev[viewstate_cur(vs)].t;
            vs->question1 = i + 1;
            vs->playing = 0;
            follow(vs);
            return 1;
        }
    }
    vs->cursor = to;
    vs->cur1 = stop_at(vs, to) + 1;
    if (to >= vs->t_end) vs->playing = 0;
    follow(vs);
    return 0;
}

int viewstate_reveal(struct viewstate *vs) {
    if (viewstate_asking(vs) < 0) return -1;
    long q = viewstate_asking(vs);
    vs->ev[q].flags |= VIEWSTATE_REVEALED;
    vs->question1 = 0;
    vs->cur1 = q + 1;
    vs->cursor = vs->ev[q].t;
    follow(vs);
    return 0;
}

void viewstate_zoom(struct viewstate *vs, double factor, sim_ns anchor) {
    if (factor <= 0) return;
    sim_ns w = vs->t1 - vs->t0;
    double nw = (double)w / factor;
    if (nw < VIEWSTATE_MIN_WINDOW_NS) nw = VIEWSTATE_MIN_WINDOW_NS;
    if (nw > (double)vs->t_end) nw = (double)vs->t_end;
    if (anchor < vs->t0) anchor = vs->t0;
    if (anchor > vs->t1) anchor = vs->t1;
    double frac = w > 0 ? (double)(anchor - vs->t0) / (double)w : 0.5;
    vs->t0 = anchor - (sim_ns)(frac * nw);
    vs->t1 = vs->t0 + (sim_ns)nw;
    clamp_window(vs);
}

void viewstate_pan(struct viewstate *vs, sim_ns dt) {
    vs->t0 += dt;
    vs->t1 += dt;
    sim_ns w = vs->t1 - vs->t0;
    if (vs->t0 < 0) {
        vs->t0 = 0;
        vs->t1 = w;
    }
    clamp_window(vs);
}

void viewstate_window(struct viewstate *vs, sim_ns t0, sim_ns t1) {
    vs->t0 = t0;
    vs->t1 = t1 > t0 ? t1 : t0;
    clamp_window(vs);
}

void viewstate_fit(struct viewstate *vs) {
    vs->t0 = 0;
    vs->t1 = vs->t_end > VIEWSTATE_MIN_WINDOW_NS ? vs->t_end : VIEWSTATE_MIN_WINDOW_NS;
}

int viewstate_next_violation(struct viewstate *vs) {
    long n = (long)vs->nev;
    for (long k = 1; k <= n; k++) {
        long i = (viewstate_cur(vs) + k) % n;
        if (i < 0) i += n;
        if (!(vs->ev[i].flags & VIEWSTATE_VIOLATION)) continue;
        const struct viewstate_event *e = &vs->ev[i];
        vs->question1 = 0;
        vs->cur1 = i + 1;
        vs->cursor = e->t;
        /* a double entry fills an eighth of the window; an instant gets a
         * window of a fiftieth of the run around it */
        sim_ns w = e->span_ns > 0 ? e->span_ns * 8 : vs->t_end / 50;
        if (w < VIEWSTATE_MIN_WINDOW_NS) w = VIEWSTATE_MIN_WINDOW_NS;
        vs->t0 = e->t + e->span_ns / 2 - w / 2;
        vs->t1 = vs->t0 + w;
        clamp_window(vs);
        return 0;
    }
    return -1;
}

int viewstate_question(const struct viewstate_event *e, const struct trace *tr, char *q, size_t qn, char choices[3][96],
                       int *answer) {
    const struct trace_event *ev = &tr->ev[e->seq];
    int nn = tr->nnodes;
#define NAME(i) ((i) >= 0 && (i) < nn ? tr->nodes[i].name : "?")
    if (e->quiz == VIEWSTATE_QUIZ_GRANT) {
        int holder = -1; /* whose lease ran out on this server */
        for (size_t k = e->seq; k-- > 0 && holder < 0;)
            if (tr->ev[k].kind == TRACE_SRV_EXPIRE && tr->ev[k].node == ev->node) holder = tr->ev[k].peer;
        snprintf(q, qn,
                 "%s's lease on %s ran out, but %s has not left the critical section. %s asks "
                 "%s for the lock.",
                 NAME(holder), NAME(ev->node), NAME(holder), NAME(ev->peer), NAME(ev->node));
        snprintf(choices[0], 96, "%s refuses: the lock is still held", NAME(ev->node));
        snprintf(choices[1], 96, "%s grants it: two clients believe they hold the lock", NAME(ev->node));
        snprintf(choices[2], 96, "%s first tells the old holder it lost the lock", NAME(ev->node));
        *answer = 1;
        return 3;
    }
    if (e->quiz == VIEWSTATE_QUIZ_LATE_WRITE) {
        char tok[40] = "";
        if (ev->token) snprintf(tok, sizeof tok, " with token %llu", (unsigned long long)ev->token);
        snprintf(q, qn, "%s's write%s arrives at %s after %s lost the lock. What does %s do?", NAME(ev->peer), tok,
                 NAME(ev->node), NAME(ev->peer), NAME(ev->node));
        snprintf(choices[0], 96, "accepts it: the data is now wrong");
        snprintf(choices[1], 96, "rejects it: a newer token (or its own rule) says it is stale");
        /* A resource with a rule (fencing, a guard) has a third outcome: the
         * write lands before any operation of the new holder (late-write). */
        int ruled = 0, late = 0;
        for (size_t k = 0; k < tr->len && tr->ev[k].t == 0 && !ruled; k++)
            if (tr->ev[k].kind == TRACE_RESOURCE_INIT && tr->ev[k].node == ev->node)
                ruled = tr->ev[k].b != TRACE_RULE_PLAIN;
        for (size_t k = e->seq + 1; k < tr->len && tr->ev[k].t == ev->t; k++)
            if (tr->ev[k].kind == TRACE_LATE_WRITE && tr->ev[k].node == ev->peer) late = 1;
        *answer = late ? 2 : ev->b == TRACE_WRITE_ACCEPTED ? 0 : 1;
        if (!ruled && !late) return 2;
        snprintf(choices[2], 96, "accepts it: the new holder has not touched %s yet, so it comes first",
                 NAME(ev->node));
        return 3;
    }
#undef NAME
    q[0] = '\0';
    return 0;
}

int viewstate_cell_w(sim_ns window_ns, int plot_px) {
    if (plot_px < 1 || window_ns + 1 >= plot_px) return 1;
    return (int)(plot_px / (window_ns + 1));
}

sim_ns viewstate_t_of_x(const struct scene *sc, int x) {
    if (sc->plot_w <= 0 || sc->axis.ncells <= 0) return sc->t0;
    int cw = sc->plot_w / sc->axis.ncells;
    if (cw < 1) cw = 1;
    long c = (long)(x - sc->plot_x) / cw;
    if (c < 0) c = 0;
    if (c >= sc->axis.ncells) c = sc->axis.ncells - 1;
    sim_ns t = sc->t0 + (sim_ns)c * sc->axis.cell_ns;
    return t > sc->t1 ? sc->t1 : t;
}

long viewstate_hit(const struct scene *sc, int x, int y) {
    long best = -1;
    long bestd = 0;
    for (size_t i = 0; i < sc->ncmd; i++) {
        const struct scene_cmd *k = &sc->cmd[i];
        if (k->type != SCENE_CMD_SYM || (!k->text && (k->lane < 0 || k->seq < 0))) continue;
        if (x < k->x - 2 || x > k->x + k->w + 2 || y < k->y || y > k->y + k->h) continue;
        long d = labs((long)(k->x + k->w / 2 - x));
        if (best < 0 || d < bestd) {
            best = (long)i;
            bestd = d;
        }
    }
    return best;
}

int viewstate_axis_rows(const struct scene *sc, int *y0, int *y1) {
    int found = 0;
    for (size_t i = 0; i < sc->ncmd; i++) {
        const struct scene_cmd *k = &sc->cmd[i];
        if (k->style != SCENE_ST_AXIS) continue;
        int a = k->y, b = k->type == SCENE_CMD_LINE ? (k->y2 > k->y ? k->y2 : k->y) : k->y + k->h;
        if (!found || a < *y0) *y0 = a;
        if (!found || b > *y1) *y1 = b;
        found = 1;
        if (b > a + 200) break;
    }
    return found ? 0 : -1;
}

/* ---- Reveal as it plays ---- */

void viewstate_revealed(const struct viewstate *vs, int panel, const struct trace *tr, size_t *nev, sim_ns *until) {
    if (vs->show_all) {
        *nev = tr->len;
        *until = -1;
        return;
    }
    const struct viewstate_event *at = NULL;
    int with_it = 1; /* the stop's own event is shown (not while its question is open) */
    if (viewstate_asking(vs) >= 0 && (size_t)viewstate_asking(vs) < vs->nev) {
        at = &vs->ev[viewstate_asking(vs)];
        with_it = 0;
    } else if (viewstate_cur(vs) >= 0 && (size_t)viewstate_cur(vs) < vs->nev &&
               vs->ev[viewstate_cur(vs)].t == vs->cursor) {
        at = &vs->ev[viewstate_cur(vs)];
    }
    if (!at) { /* between stops, or before the first: up to the cursor */
        *until = vs->cursor;
        *nev = viewstate_cur(vs) < 0 ? layout_events_until(tr, vs->cursor - 1) : layout_events_until(tr, vs->cursor);
        if (viewstate_cur(vs) < 0 && vs->cursor == 0) *nev = 0;
        return;
    }
    *until = at->t;
    if (panel == at->panel) *nev = (size_t)at->seq + (size_t)with_it;
    else if (panel < at->panel && with_it) *nev = layout_events_until(tr, at->t);
    else *nev = at->t > 0 ? layout_events_until(tr, at->t - 1) : 0;
    if (*nev > tr->len) *nev = tr->len;
}

long viewstate_deciding_event(const struct trace *tr, const struct checker_report *r, size_t nev) {
    if (!r || r->verdict != SCN_VERDICT_UNSAFE) return -1;
    int overlap_decides = !r->fenced && r->purpose == SCN_PURPOSE_CORRECTNESS;
    for (size_t i = 0; i < nev && i < tr->len; i++) {
        const struct trace_event *e = &tr->ev[i];
        if ((e->kind == TRACE_STALE_WRITE && e->a) || e->kind == TRACE_WRONG_RELEASE ||
            (e->kind == TRACE_DOUBLE_ENTRY_BEGIN && overlap_decides))
            return (long)i;
    }
    return -1;
}

int viewstate_decided(const struct trace *tr, const struct checker_report *r, size_t nev) {
    return nev >= tr->len || viewstate_deciding_event(tr, r, nev) >= 0;
}

void viewstate_banner(struct scene_banner *b, char *buf, size_t n, const struct trace *tr, size_t nev) {
    b->status = NULL;
    b->decided_by = NULL;
    if (nev >= tr->len || !b->report) return;
    long k = viewstate_deciding_event(tr, b->report, nev);
    if (k < 0) {
        b->status = "running";
        return;
    }
    char what[400], t[32];
    if (narrate_event(what, sizeof what, tr, &tr->ev[k]) != 0 || !what[0])
        snprintf(what, sizeof what, "%s", trace_kind_name(tr->ev[k].kind));
    format_time_ns(t, sizeof t, tr->ev[k].t);
    snprintf(buf, n, "%s at %s: %s", scn_verdict_name(b->report->verdict), t, what);
    b->decided_by = buf;
}

/* ---- Narration history ---- */

void viewstate_history(const struct viewstate *vs, int max, long *from, long *to) {
    long last = viewstate_cur(vs) - vs->narr_back;
    if (last < 0) last = viewstate_cur(vs) < 0 ? -1 : 0;
    *to = last;
    *from = last - (max > 0 ? max : 1) + 1;
    if (*from < 0) *from = 0;
}

void viewstate_history_scroll(struct viewstate *vs, long dir) {
    vs->narr_back += dir;
    if (vs->narr_back > viewstate_cur(vs)) vs->narr_back = viewstate_cur(vs) > 0 ? viewstate_cur(vs) : 0;
    if (vs->narr_back < 0) vs->narr_back = 0;
}

/* ---- Human times ---- */

void viewstate_time_text(char *buf, size_t n, const struct viewstate *vs, sim_ns t) {
    if (t < 0) {
        format_time_ns(buf, n, t);
        return;
    }
    sim_ns whole = t / SIM_NS_PER_S, frac = t % SIM_NS_PER_S;
    sim_ns tick = SIM_NS_PER_S;
    while (tick > 1 && frac % tick != 0) tick /= 10; /* the digits that print t exactly */
    if (tick < SIM_NS_PER_MS) {                      /* finer than the ms: the run's own tick */
        tick = vs->tick_ns > 0 ? vs->tick_ns : 1;
        frac = (frac + tick / 2) / tick * tick;
        if (frac >= SIM_NS_PER_S) {
            whole++;
            frac -= SIM_NS_PER_S;
        }
    }
    int digits = 0;
    for (sim_ns k = tick; k < SIM_NS_PER_S; k *= 10) digits++;
    if (digits == 0) {
        snprintf(buf, n, "%llds", (long long)whole);
        return;
    }
    char f[24];
    snprintf(f, sizeof f, "%09lld", (long long)frac); /* nine digits, the kept ones first */
    f[digits > 9 ? 9 : digits] = '\0';
    snprintf(buf, n, "%lld.%ss", (long long)whole, f);
}

void viewstate_speed_text(char *buf, size_t n, const struct viewstate *vs) {
    double r = viewstate_rate(vs); /* true ns per wall second */
    if (r >= 60e9) snprintf(buf, n, "%.3g min/s", r / 60e9);
    else if (r >= 1e9) snprintf(buf, n, "%.3g s/s", r / 1e9);
    else if (r >= 1e6) snprintf(buf, n, "%.3g ms/s", r / 1e6);
    else if (r >= 1e3) snprintf(buf, n, "%.3g us/s", r / 1e3);
    else snprintf(buf, n, "%.3g ns/s", r);
}
