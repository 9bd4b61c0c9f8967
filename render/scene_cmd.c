/* The scene's vocabulary and storage: the symbol table (character, style,
 * priority, legend text of every mark), the views (terminal cells or
 * pixels), and the draw commands with their text, which the builder
 * (scene.c) and the emitters (scene_axis.c, scene_lanes.c, scene_arrows.c,
 * scene_lists.c) append. */
#include "scene.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fmt.h"
#include "palette.h"
#include "scene_int.h"

/* Symbols: the terminal's character, the style, the priority of an instant
 * (higher wins a shared cell; 0 = an interval fill) and the legend text. */
const struct scene_sym_info scene_syms[SCENE_SYM_COUNT] = {
        [SCENE_SYM_NONE] = {' ', SCENE_ST_TEXT, 0, ""},
        [SCENE_SYM_ACQUIRING] = {'.', SCENE_ST_ACQUIRING, 0, "acquiring: waiting for the lock"},
        [SCENE_SYM_HOLDING] = {'=', SCENE_ST_HOLDING, 0, "in the critical section (has lock)"},
        [SCENE_SYM_PAUSED_HOLDING] = {'#', SCENE_ST_PAUSED_HOLDING, 0, "in the critical section but PAUSED"},
        [SCENE_SYM_PAUSED] = {'~', SCENE_ST_PAUSED, 0, "paused (GC pause, stall)"},
        [SCENE_SYM_CRASHED] = {'x', SCENE_ST_CRASHED, 0, "down (crashed)"},
        [SCENE_SYM_LEASE] = {'-', SCENE_ST_LEASE, 0, "lease valid as the server sees it"},
        [SCENE_SYM_ACQUIRED] = {'+', SCENE_ST_MARK_OK, 70, "acquires the lock, enters section"},
        [SCENE_SYM_RELEASE] = {'r', SCENE_ST_MARK_OK, 60, "releases the lock, leaves section"},
        [SCENE_SYM_LOST] = {'L', SCENE_ST_MARK_WARN, 65, "learns it lost the lock, leaves"},
        [SCENE_SYM_FAILED] = {'f', SCENE_ST_MARK_WARN, 55, "gives up acquiring"},
        [SCENE_SYM_WRONG_RELEASE] = {'!', SCENE_ST_MARK_BAD, 75, "release removed ANOTHER's lock"},
        [SCENE_SYM_GRANT] = {'[', SCENE_ST_MARK_SERVER, 40, "server grants a lease"},
        [SCENE_SYM_RENEW] = {'>', SCENE_ST_MARK_SERVER, 30, "server renews a lease"},
        [SCENE_SYM_EXPIRE] = {'e', SCENE_ST_MARK_WARN, 50, "lease expires on server (TTL out)"},
        [SCENE_SYM_DELETE] = {']', SCENE_ST_MARK_SERVER, 45, "server deletes lease on release"},
        [SCENE_SYM_KEEP] = {'k', SCENE_ST_MARK_SERVER, 35, "server refuses release (not owner)"},
        [SCENE_SYM_REPL_COPY] = {'{', SCENE_ST_MARK_SERVER, 38, "replica copies a grant from its primary"},
        [SCENE_SYM_REPL_DROP] = {'}', SCENE_ST_MARK_SERVER, 36, "replica copies a release, or drops a lock"},
        [SCENE_SYM_READ] = {'o', SCENE_ST_MARK_NOTE, 20, "read at the resource"},
        [SCENE_SYM_WRITE_OK] = {'W', SCENE_ST_MARK_NOTE, 80, "write accepted by the resource"},
        [SCENE_SYM_WRITE_REJECTED] = {'w', SCENE_ST_WRITE_REJECTED, 82, "write REJECTED by resource (fencing)"},
        [SCENE_SYM_SKIP] = {'s', SCENE_ST_MARK_WARN, 78, "write not sent (lock lost, own check, sold out)"},
        [SCENE_SYM_CLOCK] = {'c', SCENE_ST_MARK_WARN, 88, "clock step: the node's clock jumps"},
        [SCENE_SYM_CONTROL] = {'@', SCENE_ST_MARK_WARN, 85, "operator action (failover: promote; kill-replicas)"},
        [SCENE_SYM_CRASH] = {'X', SCENE_ST_MARK_BAD, 100, "crash"},
        [SCENE_SYM_RESTART] = {'*', SCENE_ST_MARK_NOTE, 90, "restart"},
        [SCENE_SYM_DOUBLE] = {'^', SCENE_ST_DOUBLE, 0, "two in the critical section at once"},
        [SCENE_SYM_PARTITION] = {'/', SCENE_ST_PARTITION, 0, "network partitioned: links cut"},
};

static const char *const style_names[SCENE_ST_COUNT] = {
        [SCENE_ST_TEXT] = "text",
        [SCENE_ST_AXIS] = "axis",
        [SCENE_ST_LABEL] = "label",
        [SCENE_ST_LEGEND] = "legend",
        [SCENE_ST_ACQUIRING] = "acquiring",
        [SCENE_ST_HOLDING] = "holding",
        [SCENE_ST_PAUSED_HOLDING] = "paused-holding",
        [SCENE_ST_PAUSED] = "paused",
        [SCENE_ST_CRASHED] = "crashed",
        [SCENE_ST_LEASE] = "lease",
        [SCENE_ST_DOUBLE] = "double-entry",
        [SCENE_ST_ALERT] = "alert",
        [SCENE_ST_MARK_OK] = "mark-ok",
        [SCENE_ST_MARK_WARN] = "mark-warn",
        [SCENE_ST_MARK_BAD] = "mark-bad",
        [SCENE_ST_MARK_SERVER] = "mark-server",
        [SCENE_ST_MARK_NOTE] = "mark-note",
        [SCENE_ST_STALE_WRITE] = "stale-write",
        [SCENE_ST_WRITE_REJECTED] = "write-rejected",
        [SCENE_ST_BANNER] = "banner",
        [SCENE_ST_SAFE] = "safe",
        [SCENE_ST_UNSAFE] = "unsafe",
        [SCENE_ST_STUCK] = "stuck",
        [SCENE_ST_GRID] = "grid",
        [SCENE_ST_TITLE] = "title",
        [SCENE_ST_BAND] = "band",
        [SCENE_ST_MESSAGE] = "message",
        [SCENE_ST_GAP] = "gap",
        [SCENE_ST_CLOCK] = "clock",
        [SCENE_ST_DROP] = "drop",
        [SCENE_ST_REPLICATION] = "replication",
        [SCENE_ST_PARTITION] = "partition",
        [SCENE_ST_LEADER] = "leader",
        [SCENE_ST_LOCK_DELAY] = "lock-delay",
};

char scene_sym_char(int sym) { return sym > 0 && sym < SCENE_SYM_COUNT ? scene_syms[sym].ch : ' '; }
const char *scene_sym_text(int sym) { return sym > 0 && sym < SCENE_SYM_COUNT ? scene_syms[sym].text : ""; }
int scene_sym_style(int sym) { return sym > 0 && sym < SCENE_SYM_COUNT ? scene_syms[sym].style : SCENE_ST_TEXT; }
const char *scene_style_name(int style) {
    return style >= 0 && style < SCENE_ST_COUNT ? style_names[style] : "unknown";
}

void scene_view_term(struct scene_view *v, int width, int legend) {
    memset(v, 0, sizeof *v);
    v->width = width;
    v->char_w = v->line_h = v->lane_h = v->cell_w = 1;
    v->min_tick_chars = 8;
    v->cell_name = "column";
    v->flags = legend ? SCENE_F_LEGEND : 0;
}

void scene_view_pixels(struct scene_view *v, int width, int height) {
    memset(v, 0, sizeof *v);
    v->width = width;
    v->height = height;
    v->char_w = 11; /* DejaVu Sans Mono at 18 px advances 10.8 px */
    v->line_h = 26;
    v->lane_h = 40;
    v->cell_w = 1;
    v->margin = 16;
    v->min_tick_chars = 10;
    v->cell_name = NULL;
    v->label_chars = 6; /* the first tick's label, centred on it, clears "time" */
    v->compressed = 1;  /* a 27 s pause and a 1 s double entry in one picture */
    v->flags = SCENE_F_LEGEND | SCENE_F_BANDS | SCENE_F_DETAIL | SCENE_F_TIPS | SCENE_F_STRETCH | SCENE_F_FIT |
               SCENE_F_ARROWS;
}

/* ---- storage and text --------------------------------------------------------------- */


struct scene_cmd *scene_add(struct scene_ctx *c, int type, int style, int x, int y, int w, int h) {
    struct scene *sc = c->sc;
    if (sc->err) return NULL;
    if (sc->ncmd == sc->capcmd) {
        size_t cap = sc->capcmd ? sc->capcmd * 2 : 256;
        struct scene_cmd *p = realloc(sc->cmd, cap * sizeof *p);
        if (!p) {
            sc->err = LSIM_ENOMEM;
            return NULL;
        }
        sc->cmd = p;
        sc->capcmd = cap;
    }
    struct scene_cmd *k = &sc->cmd[sc->ncmd++];
    memset(k, 0, sizeof *k);
    k->type = (uint8_t)type;
    k->style = (uint8_t)style;
    k->layer = c->layer;
    k->x = x;
    k->y = y;
    k->w = w;
    k->h = h;
    k->frac0 = k->frac1 = 1000;
    k->lane = -1;
    k->seq = -1;
    return k;
}

/* Copy s into the scene's storage; returns its offset + 1, or 0 on failure
 * (pointers are fixed up at the end). */
size_t scene_store(struct scene_ctx *c, const char *s, size_t len) {
    struct scene *sc = c->sc;
    if (sc->err) return 0;
    if (sc->ntext + len + 1 > sc->captext) {
        size_t cap = sc->captext ? sc->captext : 4096;
        while (cap < sc->ntext + len + 1) cap *= 2;
        char *p = realloc(sc->text, cap);
        if (!p) {
            sc->err = LSIM_ENOMEM;
            return 0;
        }
        sc->text = p;
        sc->captext = cap;
    }
    memcpy(sc->text + sc->ntext, s, len);
    sc->text[sc->ntext + len] = '\0';
    sc->ntext += len + 1;
    return sc->ntext - len;
}

void scene_set_text(struct scene_ctx *c, struct scene_cmd *k, const char *s, size_t len) {
    if (k) k->text_at = scene_store(c, s, len);
}

struct scene_cmd *scene_text_n(struct scene_ctx *c, int x, int y, const char *s, size_t len, int style) {
    struct scene_cmd *k = scene_add(c, SCENE_CMD_TEXT, style, x, y, (int)len * c->v->char_w, c->v->line_h);
    scene_set_text(c, k, s, len);
    return k;
}

struct scene_cmd *scene_text_at(struct scene_ctx *c, int col, int y, const char *s, int style) {
    return scene_text_n(c, c->x0 + col * c->v->char_w, y, s, strlen(s), style);
}

/* Text from column col, wrapped at spaces to the line; continuation lines
 * start indent columns further right (the terminal's rule, kept exactly). */
void scene_wrapped(struct scene_ctx *c, int col, int indent, const char *text, int style) {
    const char *s = text;
    int start = col;
    do {
        int avail = c->cols - start;
        if (avail < 8) { /* no room left on the right: use the whole line */
            start = 0;
            avail = c->cols;
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
        scene_text_n(c, c->x0 + start * c->v->char_w, c->y, s, take, style);
        c->y += c->v->line_h;
        s += take;
        while (*s == ' ') s++;
        start = col + indent;
    } while (*s);
}

const char *scene_node_name(const struct layout *ly, int n) {
    return n >= 0 && n < ly->nlanes ? ly->lanes[n].name : "?";
}

int scene_lane_shown(const struct scene_view *v, int l) { return l >= 64 || !(v->hide >> l & 1); }
