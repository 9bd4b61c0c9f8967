/* Viewmodel: the text scale's arithmetic and the scenario's knobs (its
 * ranged params) for every front end (viewmodel.h): the window turns them
 * with keys, the web page with sliders, through these same functions. */
#include "viewmodel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "palette.h"

/* ---- text scale ------------------------------------------------------------------- */

static int scaled(int px, int pct) { return (px * pct + 50) / 100; }

void viewmodel_sizes(int scale_pct, struct viewmodel_sizes *out) {
    int p = viewmodel_scale_clamp(scale_pct);
    out->scale_pct = p;
    out->text_px = scaled(PALETTE_TEXT_PX, p);
    out->title_px = scaled(PALETTE_TITLE_PX, p);
    /* DejaVu Sans Mono advances 0.602 em: 10.8 px at 18 px, counted as 11
     * as scene_view_pixels does; rounded up, so that text fits its room */
    out->char_w = (out->text_px * 602 + 999) / 1000;
    out->line_h = scaled(26, p);
    out->lane_h = scaled(40, p);
    out->margin = scaled(16, p);
    out->pad = scaled(12, p);
    out->narr_h = out->line_h * (VIEWMODEL_NARR_LINES + 2) + scaled(14, p); /* the knobs, the history, the status */
}

int viewmodel_scale_clamp(int pct) {
    if (pct < VIEWMODEL_SCALE_MIN) return VIEWMODEL_SCALE_MIN;
    if (pct > VIEWMODEL_SCALE_MAX) return VIEWMODEL_SCALE_MAX;
    return pct;
}

int viewmodel_scale_step(int pct, int dir) {
    if (dir == 0) return 100;
    /* to the next multiple of the step in that direction */
    int s = VIEWMODEL_SCALE_STEP, down = pct / s * s;
    return viewmodel_scale_clamp(dir > 0 ? down + s : (down == pct ? pct - s : down));
}

int viewmodel_scale_for_screen(int screen_h, double vdpi) {
    int s = VIEWMODEL_SCALE_STEP;
    int by_h = screen_h > 0 ? screen_h * 100 / 720 / s * s : 100; /* 720 lines: 1.0, 1080: 1.5 */
    int by_dpi = vdpi > 0 ? (int)(vdpi * 100 / 96) / s * s : 100; /* 96 dpi: 1.0 */
    int pct = by_h > by_dpi ? by_h : by_dpi;
    return viewmodel_scale_clamp(pct < 100 ? 100 : pct);
}

int viewmodel_scale_fit(int pct, int win_h) {
    struct viewmodel_sizes z;
    for (pct = viewmodel_scale_clamp(pct); pct > VIEWMODEL_SCALE_MIN; pct = viewmodel_scale_step(pct, -1)) {
        viewmodel_sizes(pct, &z);
        if (z.narr_h * 3 <= win_h) break;
    }
    return pct;
}

void viewmodel_scene_view(const struct viewmodel_sizes *sz, struct scene_view *v, int width) {
    scene_view_pixels(v, width, 0);
    v->char_w = sz->char_w;
    v->line_h = sz->line_h;
    v->lane_h = sz->lane_h;
    v->margin = sz->margin;
}

/* ---- knobs --------------------------------------------------------------------------- */

/* Round x (> 0) to the nearest of 1, 2, 5 x 10^k (on a log scale: 3.2 and
 * 7.1 are the borders), at least 1. */
static int64_t nice(int64_t x) {
    int64_t unit = 1;
    if (x < 1) return 1;
    while (unit <= x / 10) unit *= 10;
    /* x / unit is in 1 .. 9.99 */
    if (x * 10 < unit * 15) return unit;     /* < 1.5 */
    if (x * 10 < unit * 32) return 2 * unit; /* < 3.2 */
    if (x * 10 < unit * 71) return 5 * unit; /* < 7.1 */
    return 10 * unit;
}

static void knob_text(struct viewmodel_knob *k) {
    char *t = k->value;
    size_t room = sizeof k->value;
    int64_t v = k->cur;
    if (k->kind == VIEWMODEL_KNOB_DURATION && (k->sign || v < 0)) { /* "+6s", "-2s": a signed duration */
        t[0] = v < 0 ? '-' : '+';
        t++, room--;
        v = v < 0 ? -v : v;
    }
    if (k->kind == VIEWMODEL_KNOB_DURATION && v == 0) snprintf(t, room, "0s"); /* not "0ns" */
    else if (k->kind == VIEWMODEL_KNOB_DURATION) scn_format_duration(t, room, (sim_ns)v);
    else snprintf(k->value, sizeof k->value, "%lld", (long long)k->cur);
}

int viewmodel_knobs_of(const struct scenario *scn, struct viewmodel_knob *out, int max) {
    int n = 0;
    for (int i = 0; scn && i < scn->nparams && n < max; i++) {
        const struct scn_param *p = &scn->params[i];
        struct viewmodel_knob k;
        memset(&k, 0, sizeof k);
        if (p->range == SCN_RANGE_DURATION) {
            sim_ns v;
            k.sign = p->val[0] == '+' || p->val[0] == '-'; /* a clock step's +10s */
            if (scn_parse_duration(p->val + k.sign, &v) != 0) continue;
            k.kind = VIEWMODEL_KNOB_DURATION;
            k.cur = p->val[0] == '-' ? -v : v;
        } else if (p->range == SCN_RANGE_INT) {
            int64_t v;
            if (scn_parse_int(p->val, &v) != 0) continue;
            k.kind = VIEWMODEL_KNOB_INT;
            k.cur = v;
        } else continue; /* no range: nothing to turn it along */
        snprintf(k.name, sizeof k.name, "%s", p->name);
        k.min = p->min;
        k.max = p->max;
        k.step = nice((p->max - p->min) / VIEWMODEL_KNOB_STEPS);
        snprintf(k.value, sizeof k.value, "%s", p->val); /* as written, until turned */
        snprintf(k.orig, sizeof k.orig, "%s", p->val);
        out[n++] = k;
    }
    return n;
}

int viewmodel_knob_set(struct viewmodel_knob *k, int64_t v) {
    if (v < k->min) v = k->min;
    if (v > k->max) v = k->max;
    if (v == k->cur) return 0;
    k->cur = v;
    knob_text(k);
    return 1;
}

int viewmodel_knob_turn(struct viewmodel_knob *k, int dir) {
    return viewmodel_knob_set(k, k->cur + (dir > 0 ? k->step : -k->step));
}

int viewmodel_param_edit(const char *text, size_t len, const char *name, const char *value, char **out,
                         size_t *outlen) {
    size_t nl = strlen(name), vl = strlen(value);
    *out = NULL;
    *outlen = 0;
    for (size_t at = 0; at < len;) {
        size_t end = at;
        while (end < len && text[end] != '\n') end++;
        /* a line "param NAME=VALUE ...": VALUE runs to a blank or the line's end */
        size_t i = at;
        while (i < end && (text[i] == ' ' || text[i] == '\t')) i++;
        if (end - i > 6 && strncmp(text + i, "param", 5) == 0 && (text[i + 5] == ' ' || text[i + 5] == '\t')) {
            i += 5;
            while (i < end && (text[i] == ' ' || text[i] == '\t')) i++;
            if (end - i > nl && strncmp(text + i, name, nl) == 0 && text[i + nl] == '=') {
                size_t v0 = i + nl + 1, v1 = v0;
                while (v1 < end && text[v1] != ' ' && text[v1] != '\t' && text[v1] != '\r' && text[v1] != '#') v1++;
                char *s = malloc(len - (v1 - v0) + vl + 1);
                if (!s) return LSIM_ENOMEM;
                memcpy(s, text, v0);
                memcpy(s + v0, value, vl);
                memcpy(s + v0 + vl, text + v1, len - v1);
                *outlen = len - (v1 - v0) + vl;
                s[*outlen] = '\0';
                *out = s;
                return 0;
            }
        }
        at = end + 1;
    }
    return -1;
}

void viewmodel_set_knobs(struct viewmodel *vm, const struct scenario *scn) {
    struct viewmodel_knob was[VIEWMODEL_KNOBS_MAX];
    int nwas = vm->nknobs;
    memcpy(was, vm->knobs, sizeof was);
    vm->nknobs = viewmodel_knobs_of(scn, vm->knobs, VIEWMODEL_KNOBS_MAX);
    for (int i = 0; i < vm->nknobs; i++)
        for (int j = 0; j < nwas; j++)
            if (strcmp(vm->knobs[i].name, was[j].name) == 0) memcpy(vm->knobs[i].orig, was[j].orig, sizeof was[j].orig);
    if (vm->knob_sel >= vm->nknobs) vm->knob_sel = 0;
    vm->knob_turned = -1;
}

int viewmodel_knob_taken(struct viewmodel *vm) {
    int k = vm->knob_turned;
    vm->knob_turned = -1;
    return k;
}

void viewmodel_knobs_line(const struct viewmodel *vm, char *out, size_t n) {
    size_t w = 0;
    if (n) out[0] = '\0';
    if (!vm->nknobs) return;
    w = (size_t)snprintf(out, n, "knobs (k next, < > turn):");
    for (int i = 0; i < vm->nknobs && w < n; i++) {
        const struct viewmodel_knob *k = &vm->knobs[i];
        char was[SCN_OPT_MAX + 8] = "";
        if (strcmp(k->orig, k->value) != 0) snprintf(was, sizeof was, " (was %s)", k->orig);
        w += (size_t)snprintf(out + w, n - w, i == vm->knob_sel ? "  [%s=%s%s]" : "  %s=%s%s", k->name, k->value, was);
    }
}
