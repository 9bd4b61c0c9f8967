/* Terminal timeline: one backend of the scene. Builds the scene for a view of
 * width columns (every unit one character), paints its main layer into a grid
 * of (character, style) cells, and prints the grid with or without ANSI colour. */
#include "term.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "scene.h"

/* Terminal styles (ANSI SGR parameters in colour mode; ignored in plain mode). */
enum style {
    ST_PLAIN,
    ST_DIM,
    ST_HOLD,
    ST_PAUSE_HOLD,
    ST_PAUSE,
    ST_DOWN,
    ST_LEASE,
    ST_GOOD,
    ST_BAD,
    ST_WARN,
    ST_SERVER,
    ST_NOTE,
    ST_DOUBLE,
    ST_ALERT,
    ST_COUNT
};

static const char *const sgr[ST_COUNT] = {
        [ST_PLAIN] = "0",     [ST_DIM] = "2",    [ST_HOLD] = "32",        [ST_PAUSE_HOLD] = "1;33", [ST_PAUSE] = "33",
        [ST_DOWN] = "31",     [ST_LEASE] = "36", [ST_GOOD] = "1;32",      [ST_BAD] = "1;31",        [ST_WARN] = "1;33",
        [ST_SERVER] = "1;36", [ST_NOTE] = "1",   [ST_DOUBLE] = "1;37;41", [ST_ALERT] = "1;31",
};

/* The terminal's look of each scene style. */
static const uint8_t term_style[SCENE_ST_COUNT] = {
        [SCENE_ST_TEXT] = ST_PLAIN,
        [SCENE_ST_AXIS] = ST_PLAIN,
        [SCENE_ST_LABEL] = ST_NOTE,
        [SCENE_ST_LEGEND] = ST_PLAIN,
        [SCENE_ST_ACQUIRING] = ST_DIM,
        [SCENE_ST_HOLDING] = ST_HOLD,
        [SCENE_ST_PAUSED_HOLDING] = ST_PAUSE_HOLD,
        [SCENE_ST_PAUSED] = ST_PAUSE,
        [SCENE_ST_CRASHED] = ST_DOWN,
        [SCENE_ST_LEASE] = ST_LEASE,
        [SCENE_ST_DOUBLE] = ST_DOUBLE,
        [SCENE_ST_ALERT] = ST_ALERT,
        [SCENE_ST_MARK_OK] = ST_GOOD,
        [SCENE_ST_MARK_WARN] = ST_WARN,
        [SCENE_ST_MARK_BAD] = ST_BAD,
        [SCENE_ST_MARK_SERVER] = ST_SERVER,
        [SCENE_ST_MARK_NOTE] = ST_NOTE,
        [SCENE_ST_STALE_WRITE] = ST_BAD,
        [SCENE_ST_WRITE_REJECTED] = ST_GOOD,
        [SCENE_ST_BANNER] = ST_NOTE,
        [SCENE_ST_SAFE] = ST_GOOD,
        [SCENE_ST_UNSAFE] = ST_BAD,
        [SCENE_ST_STUCK] = ST_WARN,
        [SCENE_ST_GRID] = ST_DIM,
        [SCENE_ST_TITLE] = ST_NOTE,
        [SCENE_ST_BAND] = ST_DOUBLE,
        [SCENE_ST_MESSAGE] = ST_PLAIN,
        [SCENE_ST_GAP] = ST_DIM,
        [SCENE_ST_CLOCK] = ST_WARN,
        [SCENE_ST_DROP] = ST_PLAIN,
        [SCENE_ST_REPLICATION] = ST_SERVER,
        [SCENE_ST_LEADER] = ST_SERVER,
        [SCENE_ST_LOCK_DELAY] = ST_WARN,
};

struct grid {
    char *ch;
    uint8_t *st;
    int width, height;
};

static void put(struct grid *g, int x, int y, char ch, int scene_st) {
    if (x < 0 || y < 0 || x >= g->width || y >= g->height) return;
    size_t i = (size_t)y * (size_t)g->width + (size_t)x;
    g->ch[i] = ch;
    g->st[i] = scene_st >= 0 && scene_st < SCENE_ST_COUNT ? term_style[scene_st] : ST_PLAIN;
}

static void paint(struct grid *g, const struct scene_cmd *k) {
    switch (k->type) {
    case SCENE_CMD_RECT:
        for (int y = k->y; y < k->y + k->h; y++)
            for (int x = k->x; x < k->x + k->w; x++) put(g, x, y, scene_sym_char(k->sym), k->style);
        break;
    case SCENE_CMD_SYM: put(g, k->x, k->y, scene_sym_char(k->sym), k->style); break;
    case SCENE_CMD_LINE:
        if (k->style == SCENE_ST_AXIS && k->x == k->x2)
            for (int y = k->y; y <= k->y2; y++) put(g, k->x, y, '|', k->style);
        break;
    case SCENE_CMD_TEXT: {
        /* printable ASCII only: any other byte shows as '?' */
        int x = k->x;
        for (const char *s = k->text; s && *s; s++, x++) {
            unsigned char c = (unsigned char)*s;
            put(g, x, k->y, (c < 0x20 || c > 0x7e) ? '?' : (char)c, k->style);
        }
        break;
    }
    default: break;
    }
}

/* One row, without trailing blanks, colour changes as SGR escapes. */
static void emit_row(FILE *out, const struct grid *g, int y, int color) {
    const char *ch = g->ch + (size_t)y * (size_t)g->width;
    const uint8_t *st = g->st + (size_t)y * (size_t)g->width;
    int end = g->width;
    while (end > 0 && ch[end - 1] == ' ' && st[end - 1] == ST_PLAIN) end--;
    int cur = ST_PLAIN;
    for (int i = 0; i < end; i++) {
        if (color && st[i] != cur) {
            if (cur != ST_PLAIN) fputs("\x1b[0m", out);
            if (st[i] != ST_PLAIN) fprintf(out, "\x1b[%sm", sgr[st[i]]);
            cur = st[i];
        }
        fputc(ch[i], out);
    }
    if (color && cur != ST_PLAIN) fputs("\x1b[0m", out);
    fputc('\n', out);
}

void term_opts_default(struct term_opts *o) {
    o->width = 100;
    o->color = 0;
    o->legend = 1;
    o->t0 = o->t1 = 0;
    o->compressed = 0;
}

int term_render_layout(FILE *out, const struct layout *ly, const struct term_opts *o) {
    struct term_opts def;
    if (!o) {
        term_opts_default(&def);
        o = &def;
    }
    struct scene_view v;
    scene_view_term(&v, o->width < TERM_MIN_WIDTH ? TERM_MIN_WIDTH : o->width, o->legend);
    v.t0 = o->t0;
    v.t1 = o->t1;
    v.compressed = o->compressed;
    struct scene sc;
    int rc = scene_build(&sc, ly, &v, NULL, 0);
    struct grid g = {NULL, NULL, sc.width, sc.height};
    if (rc == 0) {
        size_t n = (size_t)g.width * (size_t)g.height;
        g.ch = malloc(n ? n : 1);
        g.st = malloc(n ? n : 1);
        if (!g.ch || !g.st) rc = LSIM_ENOMEM;
        else {
            memset(g.ch, ' ', n);
            memset(g.st, ST_PLAIN, n);
        }
    }
    if (rc == 0) {
        for (size_t i = 0; i < sc.ncmd; i++)
            if (sc.cmd[i].layer == SCENE_LAYER_MAIN) paint(&g, &sc.cmd[i]);
        for (int y = 0; y < g.height; y++) emit_row(out, &g, y, o->color != 0);
    }
    free(g.ch);
    free(g.st);
    scene_close(&sc);
    if (rc) return -1;
    return ferror(out) ? -1 : 0;
}

int term_render(FILE *out, const struct trace *tr, const struct term_opts *o) {
    struct layout ly;
    if (layout_build(&ly, tr) != 0) return -1;
    int rc = term_render_layout(out, &ly, o);
    layout_close(&ly);
    return rc;
}
