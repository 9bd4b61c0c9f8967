/* Terminal timeline: cells of (glyph, style) per lane row, filled from the
 * layout (intervals first, then instants over them), then printed with or
 * without ANSI colour. */
#include "term.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"

/* Styles (ANSI SGR parameters in colour mode; ignored in plain mode). */
enum style {
    ST_PLAIN, ST_DIM, ST_HOLD, ST_PAUSE_HOLD, ST_PAUSE, ST_DOWN, ST_LEASE,
    ST_GOOD, ST_BAD, ST_WARN, ST_SERVER, ST_NOTE, ST_DOUBLE, ST_ALERT, ST_COUNT
};

static const char *const sgr[ST_COUNT] = {
    [ST_PLAIN] = "0",       [ST_DIM] = "2",       [ST_HOLD] = "32",
    [ST_PAUSE_HOLD] = "1;33", [ST_PAUSE] = "33",  [ST_DOWN] = "31",
    [ST_LEASE] = "36",      [ST_GOOD] = "1;32",   [ST_BAD] = "1;31",
    [ST_WARN] = "1;33",     [ST_SERVER] = "1;36", [ST_NOTE] = "1",
    [ST_DOUBLE] = "1;37;41", [ST_ALERT] = "1;31",
};

/* Glyphs, in legend order. */
enum glyph {
    G_NONE, G_ACQ, G_HOLD, G_PAUSE_HOLD, G_PAUSE, G_DOWN, G_LEASE,
    G_ACQUIRED, G_RELEASE, G_LOST, G_FAILED, G_WRONG,
    G_GRANT, G_RENEW, G_EXPIRE, G_DELETE, G_KEEP,
    G_READ, G_WRITE_OK, G_WRITE_REJ, G_SKIP, G_CLOCK, G_CONTROL, G_CRASH, G_RESTART,
    G_DOUBLE, G_COUNT
};

static const struct {
    char ch;
    uint8_t style;
    uint8_t prio; /* instants: higher wins a shared cell */
    const char *text;
} glyphs[G_COUNT] = {
    [G_NONE] = {' ', ST_PLAIN, 0, ""},
    [G_ACQ] = {'.', ST_DIM, 0, "acquiring: waiting for the lock"},
    [G_HOLD] = {'=', ST_HOLD, 0, "in the critical section (has lock)"},
    [G_PAUSE_HOLD] = {'#', ST_PAUSE_HOLD, 0, "in the critical section but PAUSED"},
    [G_PAUSE] = {'~', ST_PAUSE, 0, "paused (GC pause, stall)"},
    [G_DOWN] = {'x', ST_DOWN, 0, "down (crashed)"},
    [G_LEASE] = {'-', ST_LEASE, 0, "lease valid as the server sees it"},
    [G_ACQUIRED] = {'+', ST_GOOD, 70, "acquires the lock, enters section"},
    [G_RELEASE] = {'r', ST_GOOD, 60, "releases the lock, leaves section"},
    [G_LOST] = {'L', ST_WARN, 65, "learns it lost the lock, leaves"},
    [G_FAILED] = {'f', ST_WARN, 55, "gives up acquiring"},
    [G_WRONG] = {'!', ST_BAD, 75, "release removed ANOTHER's lock"},
    [G_GRANT] = {'[', ST_SERVER, 40, "server grants a lease"},
    [G_RENEW] = {'>', ST_SERVER, 30, "server renews a lease"},
    [G_EXPIRE] = {'e', ST_WARN, 50, "lease expires on server (TTL out)"},
    [G_DELETE] = {']', ST_SERVER, 45, "server deletes lease on release"},
    [G_KEEP] = {'k', ST_SERVER, 35, "server refuses release (not owner)"},
    [G_READ] = {'o', ST_NOTE, 20, "read at the resource"},
    [G_WRITE_OK] = {'W', ST_NOTE, 80, "write accepted by the resource"},
    [G_WRITE_REJ] = {'w', ST_GOOD, 82, "write REJECTED by resource (fencing)"},
    [G_SKIP] = {'s', ST_WARN, 78, "write not sent (lock lost, own check, sold out)"},
    [G_CLOCK] = {'c', ST_WARN, 88, "clock step: the node's clock jumps"},
    [G_CONTROL] = {'@', ST_WARN, 85, "operator action (failover: promote)"},
    [G_CRASH] = {'X', ST_BAD, 100, "crash"},
    [G_RESTART] = {'*', ST_NOTE, 90, "restart"},
    [G_DOUBLE] = {'^', ST_DOUBLE, 0, "two in the critical section at once"},
};

struct cell {
    uint8_t g;     /* enum glyph */
    uint8_t style; /* enum style */
};

/* One output line under construction: characters and their styles. */
struct line {
    char *ch;
    uint8_t *st;
    int width;
};

struct ctx {
    FILE *out;
    const struct layout *ly;
    int color;
    int width;   /* whole output */
    int lw;      /* label column width, including one space */
    struct layout_axis ax;
    struct line ln;
    struct cell *row;          /* ncells */
    uint8_t *bits;             /* ncells: interval flags */
    int used[G_COUNT];         /* glyphs that reached the output */
};

enum { B_ACQ = 1, B_HOLD = 2, B_PAUSE = 4, B_DOWN = 8, B_LEASE = 16 };

static void line_clear(struct line *l) {
    memset(l->ch, ' ', (size_t)l->width);
    memset(l->st, ST_PLAIN, (size_t)l->width);
}

/* Put text at column col with one style, cut at the line width; plain mode
 * replaces any byte outside printable ASCII with '?'. */
static int line_put(struct line *l, int col, const char *s, int style) {
    for (; *s && col < l->width; s++, col++) {
        unsigned char c = (unsigned char)*s;
        l->ch[col] = (c < 0x20 || c > 0x7e) ? '?' : (char)c;
        l->st[col] = (uint8_t)style;
    }
    return col;
}

static void line_emit(struct ctx *c) {
    struct line *l = &c->ln;
    int end = l->width;
    while (end > 0 && l->ch[end - 1] == ' ' && l->st[end - 1] == ST_PLAIN) end--;
    int cur = ST_PLAIN;
    for (int i = 0; i < end; i++) {
        if (c->color && l->st[i] != cur) {
            if (cur != ST_PLAIN) fputs("\x1b[0m", c->out);
            if (l->st[i] != ST_PLAIN) fprintf(c->out, "\x1b[%sm", sgr[l->st[i]]);
            cur = l->st[i];
        }
        fputc(l->ch[i], c->out);
    }
    if (c->color && cur != ST_PLAIN) fputs("\x1b[0m", c->out);
    fputc('\n', c->out);
    line_clear(l);
}

static void cell_mark(struct ctx *c, int col, int g, int style) {
    struct cell *x = &c->row[col];
    int cur = x->g;
    int cur_prio = cur ? glyphs[cur].prio : 0;
    int is_instant = glyphs[cur].prio > 0;
    if (!is_instant || glyphs[g].prio >= cur_prio) {
        x->g = (uint8_t)g;
        x->style = (uint8_t)style;
    }
}

static const char *node_name(const struct layout *ly, int n) {
    return n >= 0 && n < ly->nlanes ? ly->lanes[n].name : "?";
}

/* Interval cells of [t0, t1]; an interval still open at the end of the
 * trace runs to the last cell. */
static void span_cells(struct ctx *c, sim_ns t0, sim_ns t1, int open, int *c0, int *c1) {
    layout_axis_span(&c->ax, t0, t1, c0, c1);
    if (open) *c1 = c->ax.ncells - 1;
}

static void fill_lane(struct ctx *c, const struct layout_lane *lane) {
    int n = c->ax.ncells;
    memset(c->bits, 0, (size_t)n);
    for (size_t i = 0; i < lane->nspans; i++) {
        const struct layout_span *s = &lane->spans[i];
        static const uint8_t bit[LAYOUT_SPAN_KIND_COUNT] = {
            [LAYOUT_SPAN_ACQUIRING] = B_ACQ, [LAYOUT_SPAN_HOLDING] = B_HOLD,
            [LAYOUT_SPAN_PAUSED] = B_PAUSE,  [LAYOUT_SPAN_CRASHED] = B_DOWN,
            [LAYOUT_SPAN_LEASE] = B_LEASE,
        };
        int c0, c1;
        span_cells(c, s->t0, s->t1, s->end == LAYOUT_END_OPEN, &c0, &c1);
        uint8_t flag = s->kind < LAYOUT_SPAN_KIND_COUNT ? bit[s->kind] : 0;
        for (int k = c0; k <= c1; k++) c->bits[k] |= flag;
    }
    for (int k = 0; k < n; k++) {
        uint8_t b = c->bits[k];
        int g = (b & B_DOWN) ? G_DOWN
              : (b & B_PAUSE) && (b & B_HOLD) ? G_PAUSE_HOLD
              : (b & B_PAUSE) ? G_PAUSE
              : (b & B_HOLD) ? G_HOLD
              : (b & B_LEASE) ? G_LEASE
              : (b & B_ACQ) ? G_ACQ : G_NONE;
        c->row[k].g = (uint8_t)g;
        c->row[k].style = glyphs[g].style;
    }
    for (size_t i = 0; i < lane->nmarks; i++) {
        const struct layout_mark *m = &lane->marks[i];
        int g = G_NONE, style;
        switch (m->kind) {
        case LAYOUT_MARK_ACQUIRED: g = G_ACQUIRED; break;
        case LAYOUT_MARK_ACQUIRE_FAILED: g = G_FAILED; break;
        case LAYOUT_MARK_RELEASE: g = G_RELEASE; break;
        case LAYOUT_MARK_LOST: g = G_LOST; break;
        case LAYOUT_MARK_WRONG_RELEASE: g = G_WRONG; break;
        case LAYOUT_MARK_GRANT: g = G_GRANT; break;
        case LAYOUT_MARK_RENEW: g = G_RENEW; break;
        case LAYOUT_MARK_EXPIRE: g = G_EXPIRE; break;
        case LAYOUT_MARK_DELETE: g = m->detail ? G_WRONG : G_DELETE; break;
        case LAYOUT_MARK_KEEP: g = G_KEEP; break;
        case LAYOUT_MARK_READ: g = G_READ; break;
        case LAYOUT_MARK_WRITE_OK: g = G_WRITE_OK; break;
        case LAYOUT_MARK_WRITE_REJECTED: g = G_WRITE_REJ; break;
        case LAYOUT_MARK_CLOCK_STEP: g = G_CLOCK; break;
        case LAYOUT_MARK_CRASH: g = G_CRASH; break;
        case LAYOUT_MARK_RESTART: g = G_RESTART; break;
        case LAYOUT_MARK_WRITE_SKIPPED: g = G_SKIP; break;
        case LAYOUT_MARK_CONTROL: g = G_CONTROL; break;
        default: continue;
        }
        style = glyphs[g].style;
        if (m->kind == LAYOUT_MARK_WRITE_OK && m->stale) style = ST_BAD;
        cell_mark(c, layout_axis_cell(&c->ax, m->t), g, style);
    }
}

/* Label column then the cells of c->row. */
static void emit_row(struct ctx *c, const char *label, int label_style) {
    line_put(&c->ln, 0, label, label_style);
    for (int k = 0; k < c->ax.ncells && c->lw + k < c->width; k++) {
        struct cell *x = &c->row[k];
        c->ln.ch[c->lw + k] = glyphs[x->g].ch;
        c->ln.st[c->lw + k] = x->style;
        if (x->g != G_NONE) c->used[x->g] = 1;
    }
    line_emit(c);
}

static void emit_axis(struct ctx *c) {
    char lab[32];
    int last_end = -1;
    line_put(&c->ln, 0, "time", ST_PLAIN);
    /* Labels first, remembering the ticks that got one. */
    for (sim_ns t = 0; t <= c->ax.t_end; t += c->ax.tick_ns) {
        int col = c->lw + layout_axis_cell(&c->ax, t);
        int len = layout_axis_label(&c->ax, t, lab, sizeof lab);
        if (col > last_end && col + len <= c->width) {
            line_put(&c->ln, col, lab, ST_PLAIN);
            last_end = col + len;
        }
        if (c->ax.tick_ns <= 0 || t > c->ax.t_end - c->ax.tick_ns) break;
    }
    line_emit(c);
    for (sim_ns t = 0; t <= c->ax.t_end; t += c->ax.tick_ns) {
        int col = c->lw + layout_axis_cell(&c->ax, t);
        if (col < c->width) c->ln.ch[col] = '|';
        if (c->ax.tick_ns <= 0 || t > c->ax.t_end - c->ax.tick_ns) break;
    }
    line_emit(c);
}

/* Text from column col, wrapped at spaces to the width; continuation lines
 * start indent columns further right. */
static void emit_text(struct ctx *c, int col, int indent, const char *text, int style) {
    const char *s = text;
    int start = col;
    do {
        int avail = c->width - start;
        if (avail < 8) { /* no room left on the right: use the whole line */
            start = 0;
            avail = c->width;
        }
        size_t len = strlen(s), take = len;
        if (len > (size_t)avail) {
            take = 0;
            for (int i = avail; i > 0; i--)
                if (s[i] == ' ') {
                    take = (size_t)i;
                    break;
                }
            if (take == 0) take = (size_t)avail;
        }
        for (size_t i = 0; i < take; i++) {
            unsigned char ch = (unsigned char)s[i];
            c->ln.ch[start + (int)i] = (ch < 0x20 || ch > 0x7e) ? '?' : (char)ch;
            c->ln.st[start + (int)i] = (uint8_t)style;
        }
        line_emit(c);
        s += take;
        while (*s == ' ') s++;
        start = col + indent;
    } while (*s);
}

static void emit_doubles(struct ctx *c) {
    const struct layout *ly = c->ly;
    char t0[32], t1[32], len[32], buf[256];
    for (int k = 0; k < c->ax.ncells; k++) c->row[k] = (struct cell){G_NONE, ST_PLAIN};
    for (size_t i = 0; i < ly->ndoubles; i++) {
        const struct layout_double *d = &ly->doubles[i];
        int c0, c1;
        span_cells(c, d->t0, d->t1, d->open, &c0, &c1);
        for (int k = c0; k <= c1; k++) c->row[k] = (struct cell){G_DOUBLE, ST_DOUBLE};
    }
    emit_row(c, "DOUBLE ENTRY", ST_ALERT);
    size_t shown = ly->ndoubles < 6 ? ly->ndoubles : 6;
    for (size_t i = 0; i < shown; i++) {
        const struct layout_double *d = &ly->doubles[i];
        int lo = d->a < d->b ? d->a : d->b, hi = d->a < d->b ? d->b : d->a;
        format_time_ns(t0, sizeof t0, d->t0);
        format_time_ns(t1, sizeof t1, d->t1);
        format_time_ns(len, sizeof len, d->t1 - d->t0);
        if (d->open)
            snprintf(buf, sizeof buf, "^ %s..%s  %s and %s both in the critical section"
                     " (still at the end)", t0, t1, node_name(ly, lo), node_name(ly, hi));
        else
            snprintf(buf, sizeof buf, "^ %s..%s  %s and %s both in the critical section (%s)",
                     t0, t1, node_name(ly, lo), node_name(ly, hi), len);
        emit_text(c, c->lw, 2, buf, ST_ALERT);
    }
    if (ly->ndoubles > shown) {
        snprintf(buf, sizeof buf, "(%zu more double entries)", ly->ndoubles - shown);
        emit_text(c, c->lw, 2, buf, ST_ALERT);
    }
}

static int write_interesting(const struct layout_mark *m) {
    return m->kind == LAYOUT_MARK_WRITE_REJECTED || m->stale;
}

/* One line per write under a resource lane, e.g.
 *   "w t=32s  A write tok 41 value 9 REJECTED: stale, 42 already seen".
 * All writes when there are few, else the rejected and stale ones. */
static void emit_writes(struct ctx *c, const struct layout_lane *lane) {
    enum { MAX_LINES = 8 };
    size_t nwrites = 0, ninteresting = 0;
    for (size_t i = 0; i < lane->nmarks; i++) {
        const struct layout_mark *m = &lane->marks[i];
        if (m->kind != LAYOUT_MARK_WRITE_OK && m->kind != LAYOUT_MARK_WRITE_REJECTED) continue;
        nwrites++;
        ninteresting += (size_t)write_interesting(m);
    }
    int all = nwrites <= MAX_LINES;
    size_t shown = 0, listed = all ? nwrites : ninteresting;
    uint64_t max_tok = 0;
    char t[32], tok[32], why[96], buf[256];
    for (size_t i = 0; i < lane->nmarks; i++) {
        const struct layout_mark *m = &lane->marks[i];
        if (m->kind != LAYOUT_MARK_WRITE_OK && m->kind != LAYOUT_MARK_WRITE_REJECTED) continue;
        uint64_t seen = max_tok;
        if (m->kind == LAYOUT_MARK_WRITE_OK && m->token > max_tok) max_tok = m->token;
        if ((!all && !write_interesting(m)) || shown >= MAX_LINES) continue;
        shown++;
        int ok = m->kind == LAYOUT_MARK_WRITE_OK;
        int style = ok ? (m->stale ? ST_BAD : ST_PLAIN) : ST_GOOD;
        format_time_ns(t, sizeof t, m->t);
        if (m->token) snprintf(tok, sizeof tok, "tok %llu", (unsigned long long)m->token);
        else snprintf(tok, sizeof tok, "no token");
        if (ok && m->stale && m->other >= 0)
            snprintf(why, sizeof why, "ACCEPTED though stale: %s holds the lock",
                     node_name(c->ly, m->other));
        else if (ok && m->stale)
            snprintf(why, sizeof why, "ACCEPTED though stale");
        else if (ok)
            snprintf(why, sizeof why, "accepted");
        else if (m->detail == TRACE_WRITE_REJECTED_STALE && seen > m->token)
            snprintf(why, sizeof why, "REJECTED: stale, %llu already seen",
                     (unsigned long long)seen);
        else if (m->detail == TRACE_WRITE_REJECTED_STALE)
            snprintf(why, sizeof why, "REJECTED: stale token");
        else if (m->detail == TRACE_WRITE_REJECTED_NOTOKEN)
            snprintf(why, sizeof why, "REJECTED: no fencing token");
        else if (m->detail == TRACE_WRITE_REJECTED_COND)
            snprintf(why, sizeof why, "REJECTED: value changed since read");
        else if (m->detail == TRACE_WRITE_REJECTED_UNIQUE)
            snprintf(why, sizeof why, "REJECTED: unique constraint");
        else if (m->detail == TRACE_WRITE_REJECTED_DUPLICATE)
            snprintf(why, sizeof why, "REJECTED: idempotency key already applied");
        else
            snprintf(why, sizeof why, "REJECTED");
        snprintf(buf, sizeof buf, "%c t=%s  %s write %s value %lld %s",
                 ok ? glyphs[G_WRITE_OK].ch : glyphs[G_WRITE_REJ].ch, t,
                 node_name(c->ly, m->peer), tok, (long long)m->value, why);
        emit_text(c, c->lw, 2, buf, style);
    }
    if (listed > shown || (!all && nwrites > shown)) {
        snprintf(buf, sizeof buf, "(%zu more writes not listed)", nwrites - shown);
        emit_text(c, c->lw, 2, buf, ST_PLAIN);
    }
}

/* "clients A B; lock server S1; resource R", cut to the width. */
static void emit_lanes_legend(struct ctx *c) {
    static const char *const what[3][2] = {
        {"client", "clients"}, {"lock server", "lock servers"}, {"resource", "resources"}};
    char buf[512];
    size_t len = 0;
    len += (size_t)snprintf(buf, sizeof buf, "lanes:");
    for (int k = 0; k < 3; k++) {
        int n = 0;
        for (int l = 0; l < c->ly->nlanes; l++) n += c->ly->lanes[l].kind == k;
        if (!n) continue;
        if (len < sizeof buf)
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s %s", len > 6 ? ";" : "",
                                    what[k][n > 1]);
        int shown = 0;
        for (int l = 0; l < c->ly->nlanes && len < sizeof buf; l++) {
            if (c->ly->lanes[l].kind != k) continue;
            if (shown == 8) {
                len += (size_t)snprintf(buf + len, sizeof buf - len, " ... (%d)", n);
                break;
            }
            len += (size_t)snprintf(buf + len, sizeof buf - len, " %s", c->ly->lanes[l].name);
            shown++;
        }
    }
    emit_text(c, 0, 2, buf, ST_PLAIN);
}

static void emit_legend(struct ctx *c) {
    char step[32], buf[256];
    format_time_ns(step, sizeof step, c->ax.cell_ns);
    snprintf(buf, sizeof buf, "legend: 1 column = %s of true time", step);
    emit_text(c, 0, 2, buf, ST_PLAIN);
    emit_lanes_legend(c);
    int entries[G_COUNT], n = 0, colw = 0;
    for (int g = 1; g < G_COUNT; g++) {
        if (!c->used[g]) continue;
        entries[n++] = g;
        int w = 4 + (int)strlen(glyphs[g].text) + 2;
        if (w > colw) colw = w;
    }
    int ncol = colw && c->width / colw >= 2 ? 2 : 1;
    int rows = (n + ncol - 1) / ncol;
    for (int r = 0; r < rows; r++) {
        for (int k = 0; k < ncol; k++) {
            int i = k * rows + r; /* column-major: read down, then across */
            if (i >= n) continue;
            int g = entries[i], col = k * colw;
            char gl[2] = {glyphs[g].ch, '\0'};
            line_put(&c->ln, col + 2, gl, glyphs[g].style);
            line_put(&c->ln, col + 4, glyphs[g].text, ST_PLAIN);
        }
        line_emit(c);
    }
    emit_text(c, 0, 2, "(a marker hides the interval under it)", ST_PLAIN);
}

void term_opts_default(struct term_opts *o) {
    o->width = 100;
    o->color = 0;
    o->legend = 1;
}

int term_render_layout(FILE *out, const struct layout *ly, const struct term_opts *o) {
    struct term_opts def;
    if (!o) {
        term_opts_default(&def);
        o = &def;
    }
    struct ctx c;
    memset(&c, 0, sizeof c);
    c.out = out;
    c.ly = ly;
    c.color = o->color != 0;
    c.width = o->width < TERM_MIN_WIDTH ? TERM_MIN_WIDTH : o->width;

    /* Label column: lane names, "time", "DOUBLE ENTRY". */
    int lw = 4;
    for (int l = 0; l < ly->nlanes; l++) {
        int w = (int)strnlen(ly->lanes[l].name, sizeof ly->lanes[l].name);
        if (w > lw) lw = w;
    }
    if (ly->ndoubles && lw < 12) lw = 12;
    c.lw = lw + 1;
    if (layout_axis_fit(&c.ax, ly->t_end, c.width - c.lw, 8) != 0) return -1;

    c.ln.width = c.width;
    c.ln.ch = malloc((size_t)c.width);
    c.ln.st = malloc((size_t)c.width);
    c.row = malloc((size_t)c.ax.ncells * sizeof *c.row);
    c.bits = malloc((size_t)c.ax.ncells);
    if (!c.ln.ch || !c.ln.st || !c.row || !c.bits) {
        free(c.ln.ch);
        free(c.ln.st);
        free(c.row);
        free(c.bits);
        return -1;
    }
    line_clear(&c.ln);

    emit_axis(&c);
    /* Clients, the double-entry row under them, servers, the resource. */
    static const int order[] = {TRACE_NODE_CLIENT, -1, TRACE_NODE_SERVER, TRACE_NODE_RESOURCE};
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        if (order[k] < 0) {
            if (ly->ndoubles) emit_doubles(&c);
            continue;
        }
        for (int l = 0; l < ly->nlanes; l++) {
            const struct layout_lane *lane = &ly->lanes[l];
            if (lane->kind != order[k]) continue;
            fill_lane(&c, lane);
            emit_row(&c, lane->name, ST_NOTE);
            if (lane->kind == TRACE_NODE_RESOURCE) emit_writes(&c, lane);
        }
    }
    /* Nodes of a kind this renderer does not know still get their row. */
    for (int l = 0; l < ly->nlanes; l++) {
        const struct layout_lane *lane = &ly->lanes[l];
        if (lane->kind >= TRACE_NODE_CLIENT && lane->kind <= TRACE_NODE_RESOURCE) continue;
        fill_lane(&c, lane);
        emit_row(&c, lane->name, ST_NOTE);
    }
    if (o->legend) {
        line_emit(&c);
        emit_legend(&c);
    }
    free(c.ln.ch);
    free(c.ln.st);
    free(c.row);
    free(c.bits);
    return ferror(out) ? -1 : 0;
}

int term_render(FILE *out, const struct trace *tr, const struct term_opts *o) {
    struct layout ly;
    if (layout_build(&ly, tr) != 0) return -1;
    int rc = term_render_layout(out, &ly, o);
    layout_close(&ly);
    return rc;
}
