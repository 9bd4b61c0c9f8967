/* The web page's front end (built by emcc only, `make web`): the functions
 * web/page.js calls. It runs a scenario's text with run/ (the same engine,
 * byte for byte, as the command line), keeps the run's trace, and drives
 * the same view model as the SDL2 window (render/viewmodel.c): what is
 * revealed, the scenes, the narration, the overlays and the keys. A frame
 * is painted into a flat list of paint.h's primitives (int32 words and a
 * string table) that page.js draws on a canvas. One page has one run at a
 * time, so the state lives here, in the front end, as cli/ keeps its own. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <emscripten/emscripten.h>

#include "error.h"
#include "lock.h"
#include "paint.h"
#include "report.h"
#include "run.h"
#include "scenario.h"
#include "scenario_file.h"
#include "svg.h"
#include "viewmodel.h"

#define API EMSCRIPTEN_KEEPALIVE

/* The run shown, and the view model over it: zeroed until the first good
 * run, which the view's calls take as an empty view (no stop, no question). */
static struct run_result run;
static int have_run;
static const struct trace *trs[1];
static char seed_text[32];
static struct scene_banner banner;
static struct viewmodel vm;
static char error[700];
static char text_buf[8192]; /* the last string handed to page.js */
static char *big;           /* owned: the last long string (report, SVG, JSON) */

/* ---- the command list of a frame ---- */
enum { OP_BOX = 1, OP_POLY, OP_LINE, OP_TEXT, OP_GROUP, OP_GROUP_END };
static int32_t *words;
static size_t nwords, capwords;
static char *strs;
static size_t nstrs, capstrs;

static int put(const int32_t *w, size_t n) {
    if (nwords + n > capwords) {
        size_t c = capwords ? capwords * 2 : 4096;
        while (c < nwords + n) c *= 2;
        int32_t *p = realloc(words, c * sizeof *p);
        if (!p) return LSIM_ENOMEM;
        words = p;
        capwords = c;
    }
    memcpy(words + nwords, w, n * sizeof *w);
    nwords += n;
    return 0;
}

/* s into the string table: its offset (length follows in the words). */
static int put_str(const char *s, int32_t *off, int32_t *len) {
    size_t l = strlen(s);
    if (nstrs + l + 1 > capstrs) {
        size_t c = capstrs ? capstrs * 2 : 16384;
        while (c < nstrs + l + 1) c *= 2;
        char *p = realloc(strs, c);
        if (!p) return LSIM_ENOMEM;
        strs = p;
        capstrs = c;
    }
    memcpy(strs + nstrs, s, l + 1);
    *off = (int32_t)nstrs;
    *len = (int32_t)l;
    nstrs += l + 1;
    return 0;
}

static int32_t rgb(struct palette_rgb c) { return (int32_t)c.r << 16 | (int32_t)c.g << 8 | c.b; }

static int w_box(void *ctx, int x, int y, int w, int h, struct palette_rgb c) {
    (void)ctx;
    int32_t v[] = {OP_BOX, x, y, w, h, rgb(c)};
    return put(v, 6);
}
static int w_poly(void *ctx, const int *xs, const int *ys, int n, struct palette_rgb c) {
    (void)ctx;
    int32_t v[3 + 16] = {OP_POLY, n, rgb(c)};
    for (int i = 0; i < n && i < 8; i++) {
        v[3 + 2 * i] = xs[i];
        v[4 + 2 * i] = ys[i];
    }
    return put(v, 3 + 2 * (size_t)(n < 8 ? n : 8));
}
static int w_line(void *ctx, int x0, int y0, int x1, int y1, int width, struct palette_rgb c) {
    (void)ctx;
    int32_t v[] = {OP_LINE, x0, y0, x1, y1, width, rgb(c)};
    return put(v, 7);
}
static int w_text(void *ctx, int x, int y, int h, const char *s, int px, int bold, struct palette_rgb c) {
    (void)ctx;
    int32_t v[] = {OP_TEXT, x, y, h, px, bold, rgb(c), 0, 0};
    if (put_str(s, &v[7], &v[8])) return LSIM_ENOMEM;
    return put(v, 9);
}
static int w_group(void *ctx, const char *tip) {
    (void)ctx;
    int32_t v[] = {OP_GROUP, 0, 0};
    if (put_str(tip ? tip : "", &v[1], &v[2])) return LSIM_ENOMEM;
    return put(v, 3);
}
static int w_group_end(void *ctx) {
    (void)ctx;
    int32_t v[] = {OP_GROUP_END};
    return put(v, 1);
}
static const struct paint_ops ops = {w_box, w_poly, w_line, w_text, w_group, w_group_end};

/* ---- runs ---- */

/* Close the memory stream m and keep its buffer (*bufp, which fclose
 * sets: read it only after) as the last long string. */
static const char *keep_big(FILE *m, char **bufp) {
    fclose(m);
    free(big);
    big = *bufp;
    return big ? big : "";
}

/* Run text (file: the name shown in messages) with algo and seed ("" = the
 * file's own); quiz: stop before decisive events. 0, or the LSIM code with
 * web_error()'s "file:line:col: ..." (the last good run is kept). */
/* sets: the knobs, "KEY=VALUE" lines (as --set takes them), "" for none. */
API int web_run(const char *file, const char *text, const char *algo, const char *seed, const char *sets, int quiz) {
    static char set_buf[2048];
    static const char *set_v[32];
    struct run_spec spec = {.file = file, .text = text, .len = strlen(text), .keep_trace = 1};
    spec.algo = algo && algo[0] ? algo : NULL;
    spec.seed = seed && seed[0] ? seed : NULL;
    snprintf(set_buf, sizeof set_buf, "%s", sets ? sets : "");
    for (char *p = set_buf; *p && spec.nsets < 32;) {
        size_t l = strcspn(p, "\n");
        if (l) set_v[spec.nsets++] = p;
        if (!p[l]) break;
        p[l] = '\0';
        p += l + 1;
    }
    spec.sets = set_v;
    struct run_result r;
    int rc = run_scenario(&spec, &r);
    if (rc) {
        snprintf(error, sizeof error, "%s", r.error[0] ? r.error : lsim_strerror(rc));
        run_result_close(&r);
        return rc;
    }
    const struct trace *tr = engine_trace(r.engine);
    const struct trace *next[1] = {tr};
    struct scene_banner b = {.title = tr->title[0] ? tr->title : "(untitled scenario)",
                             .algo = r.algo ? r.algo->name : tr->algo,
                             .seed = seed_text,
                             .report = r.report};
    /* the view model borrows trs and the banner: swap them in together */
    struct viewmodel nvm;
    memset(&nvm, 0, sizeof nvm);
    trs[0] = next[0];
    rc = viewmodel_load(&nvm, trs, &banner, 1, 1, quiz);
    if (rc) {
        trs[0] = have_run ? engine_trace(run.engine) : NULL;
        snprintf(error, sizeof error, "out of memory");
        run_result_close(&r);
        return rc;
    }
    nvm.knob_sel = vm.knob_sel; /* the knob k picked stays picked (viewmodel_set_knobs keeps it in range) */
    viewmodel_set_knobs(&nvm, r.scn);
    viewmodel_close(&vm);
    vm = nvm;
    if (have_run) run_result_close(&run);
    run = r;
    have_run = 1;
    snprintf(seed_text, sizeof seed_text, "%llu", (unsigned long long)r.scn->seed);
    banner = b;
    error[0] = '\0';
    return 0;
}

API const char *web_error(void) { return error; }

/* The verdict word ("UNSAFE") and the trace digest as `run --format json`
 * prints it (16 hex digits). */
API const char *web_verdict(void) { return have_run ? scn_verdict_name(run.report->verdict) : ""; }
API const char *web_headline(void) { return have_run ? run.report->headline : ""; }
API const char *web_trace_hash(void) {
    snprintf(text_buf, sizeof text_buf, "%016llx", have_run ? (unsigned long long)run.trace_hash : 0ull);
    return text_buf;
}

/* The report as `locksim run` prints it: verdict, figures, expectations. */
API const char *web_report(void) {
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) return "";
    if (have_run) {
        struct report_ctx c = {.file = run.scn ? "scenario" : ""};
        report_text_verdict(m, &run, &c);
        report_text_expects(m, &run, &c);
    }
    return keep_big(m, &buf);
}

/* The run as `run --format json` prints it (one object). */
API const char *web_json(void) {
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) return "";
    struct report_ctx c = {.file = "scenario"};
    if (have_run) report_json(m, &run, &c, NULL);
    return keep_big(m, &buf);
}

/* ---- the view ---- */

/* Bring the scenes up to date for a width x avail_h area and paint them and
 * the overlays into the command list. Returns its number of words, or a
 * negative LSIM code. */
API int web_frame(int width, int avail_h) {
    nwords = nstrs = 0;
    if (!have_run) return 0;
    int rc = viewmodel_update(&vm, width, avail_h);
    if (rc < 0) return rc;
    rc = viewmodel_paint(&vm, &ops, NULL, 0);
    if (!rc) rc = viewmodel_paint_overlays(&vm, &ops, NULL, 0);
    return rc ? rc : (int)nwords;
}
API const int32_t *web_words(void) { return words; }
API const char *web_strings(void) { return strs; }
API int web_content_h(void) { return vm.content_h; }

API int web_key(const char *name) { return viewmodel_do(&vm, viewmodel_key(name)); }
API int web_command(int cmd) { return viewmodel_do(&vm, cmd); }
API int web_play(double wall_s) { return viewstate_play(&vm.vs, wall_s); }
API int web_playing(void) { return vm.vs.playing; }
API void web_seek_x(int x) {
    vm.vs.playing = 0;
    viewstate_seek(&vm.vs, viewmodel_t_at(&vm, x));
}
API int web_on_axis(int x, int y) { return viewmodel_on_axis(&vm, x, y); }
/* Pan by dx pixels of the first panel's plot (a drag). */
API void web_pan_px(int dx) {
    if (!vm.nsc) return;
    double ns_per_px = (double)(vm.vs.t1 - vm.vs.t0) / (vm.scs[0].plot_w > 0 ? vm.scs[0].plot_w : 1);
    viewstate_pan(&vm.vs, (sim_ns)(-dx * ns_per_px));
}
API void web_zoom_at(double factor, int x) { viewstate_zoom(&vm.vs, factor, viewmodel_t_at(&vm, x)); }
/* The window [t0, t1] in ns (a shared link's view: win=T0..T1), as doubles
 * (exact up to 2^53 ns). */
API void web_window(double t0, double t1) { viewstate_window(&vm.vs, (sim_ns)t0, (sim_ns)t1); }

/* What is under (x, y): its tooltip, "" for nothing. */
API const char *web_hit(int x, int y) {
    text_buf[0] = '\0';
    viewmodel_hit(&vm, x, y, text_buf, sizeof text_buf);
    return text_buf;
}

/* Narration line i (0 .. VIEWMODEL_NARR_LINES - 1, oldest first), "" when
 * empty; web_narration_current() is the bright one (-1: none). */
API const char *web_narration(int i) {
    long ks[VIEWMODEL_NARR_LINES];
    int cur;
    text_buf[0] = '\0';
    viewmodel_history(&vm, ks, &cur);
    if (i >= 0 && i < VIEWMODEL_NARR_LINES && ks[i] != -2) viewmodel_narrate(&vm, ks[i], text_buf, sizeof text_buf);
    return text_buf;
}
API int web_narration_current(void) {
    long ks[VIEWMODEL_NARR_LINES];
    int cur;
    viewmodel_history(&vm, ks, &cur);
    return cur;
}
API const char *web_status(const char *hint) {
    text_buf[0] = '\0';
    viewmodel_status(&vm, text_buf, sizeof text_buf, hint);
    return text_buf;
}
API const char *web_help_line(int i) {
    const char *s = viewmodel_help_line(i);
    return s ? s : "";
}

/* The quiz: the open question (or the one just answered) with its choices
 * as lines, the first "?" or "=" (answered), the right one marked "*". */
API const char *web_question(void) {
    long at = viewstate_asking(&vm.vs);
    int answered = 0;
    text_buf[0] = '\0';
    if (at < 0 && vm.vs.quiz && viewstate_cur(&vm.vs) >= 0 &&
        (vm.vs.ev[viewstate_cur(&vm.vs)].flags & VIEWSTATE_REVEALED)) {
        at = viewstate_cur(&vm.vs);
        answered = 1;
    }
    if (at < 0) return text_buf;
    const struct viewstate_event *e = &vm.vs.ev[at];
    char q[300], ch[3][96];
    int answer = 0, n = viewstate_question(e, trs[e->panel], q, sizeof q, ch, &answer);
    size_t l = (size_t)snprintf(text_buf, sizeof text_buf, "%c%s\n", answered ? '=' : '?', q);
    for (int i = 0; i < n && l < sizeof text_buf; i++)
        l += (size_t)snprintf(text_buf + l, sizeof text_buf - l, "%s%c) %s\n", answered && i == answer ? "*" : " ",
                              'A' + i, ch[i]);
    return text_buf;
}

/* The state in one line, as the window's --script-log says it (tests). */
API const char *web_state(void) {
    const char *kind = "-";
    if (!have_run) return "";
    if (viewstate_cur(&vm.vs) >= 0) kind = trace_kind_name(trs[0]->ev[vm.vs.ev[viewstate_cur(&vm.vs)].seq].kind);
    snprintf(text_buf, sizeof text_buf,
             "cur=%ld kind=%s cursor=%lld t0=%lld t1=%lld playing=%d speed=%d question=%ld show_all=%d "
             "revealed=%zu decided=%d",
             viewstate_cur(&vm.vs), kind, (long long)vm.vs.cursor, (long long)vm.vs.t0, (long long)vm.vs.t1,
             vm.vs.playing, vm.vs.speed, viewstate_asking(&vm.vs), vm.vs.show_all, viewmodel_revealed(&vm),
             vm.decided_all);
    return text_buf;
}
/* Jump to stop k (a shared link's place), or the start for k < 0. */
API void web_goto(long k) {
    viewstate_home(&vm.vs);
    while (viewstate_cur(&vm.vs) < k && viewstate_step(&vm.vs, 1)) {}
}
API long web_cur(void) { return viewstate_cur(&vm.vs); }

/* The current view as an SVG picture, width pixels wide: the run as it
 * stands at the cursor (the whole run with show_all), its window. */
API const char *web_svg(int width) {
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m || !have_run) return m ? keep_big(m, &buf) : "";
    struct scene_view v;
    scene_view_pixels(&v, width, 0);
    v.t0 = vm.vs.t0;
    v.t1 = vm.vs.t1;
    v.compressed = 0;
    if (!vm.vs.show_all && vm.rev_nev && vm.rev_nev[0] != trs[0]->len) {
        v.reveal = 1;
        v.reveal_ns = vm.vs.cursor;
    }
    svg_render(m, trs[0], &banner, &v);
    return keep_big(m, &buf);
}

/* The scenarios built into the page (emcc --embed-file scenarios): the
 * text of /scenarios/NAME.lsim, "" when there is none. */
API const char *web_scenario_text(const char *name) {
    char path[300];
    snprintf(path, sizeof path, "/scenarios/%s.lsim", name);
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (f && m) {
        char chunk[4096];
        size_t k;
        while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) fwrite(chunk, 1, k, m);
    }
    if (f) fclose(f);
    return m ? keep_big(m, &buf) : "";
}

/* The built-in algorithms' names, one per line, in `locksim list` order. */
API const char *web_algos(void) {
    size_t l = 0;
    const struct lock_algo *a;
    text_buf[0] = '\0';
    for (int i = 0; (a = lock_algo_at(i)) != NULL && l < sizeof text_buf; i++)
        l += (size_t)snprintf(text_buf + l, sizeof text_buf - l, "%s\n", a->name);
    return text_buf;
}

/* Break it by clicking: the fault line a right click at (x, y) makes (fault:
 * 0 a pause, 1 a crash; "" off the lanes), and where it goes in text (a byte
 * offset: see scenario_text_fault_place). */
static sim_ns fault_at;
API const char *web_fault_line(int x, int y, int fault) {
    text_buf[0] = '\0';
    if (have_run)
        viewmodel_fault_line(&vm, x, y, fault ? VIEWMODEL_FAULT_CRASH : VIEWMODEL_FAULT_PAUSE, text_buf,
                             sizeof text_buf, &fault_at);
    return text_buf;
}
/* A right drag along a lane from x to x_to: a pause as long as the stretch
 * dragged over (viewmodel_fault_drag; a few pixels are a click). */
API const char *web_fault_drag(int x, int x_to, int y, int fault) {
    text_buf[0] = '\0';
    if (have_run)
        viewmodel_fault_drag(&vm, x, x_to, y, fault ? VIEWMODEL_FAULT_CRASH : VIEWMODEL_FAULT_PAUSE, text_buf,
                             sizeof text_buf, &fault_at);
    return text_buf;
}
API int web_fault_place(const char *text) { return (int)scenario_text_fault_place(text, strlen(text), fault_at); }

/* A duration as the binary prints it (scn_format_duration): the sweep tab's
 * axis values, so its --set values read as `locksim sweep --vary` takes
 * them; ns as a double (exact up to 2^53 ns, 104 days). 0 is "0s", as the
 * knobs show it (viewmodel_knob.c) and a range= writes it, not "0ns". */
API const char *web_format_duration(double ns) {
    if ((sim_ns)ns == 0) snprintf(text_buf, sizeof text_buf, "0s");
    else scn_format_duration(text_buf, sizeof text_buf, (sim_ns)ns);
    return text_buf;
}

/* The scenario's knobs (the view model's: viewmodel_knobs_of), one per line:
 * "NAME<TAB>VALUE<TAB>KIND<TAB>MIN<TAB>MAX<TAB>STEP<TAB>CUR", KIND d (a
 * duration: MIN, MAX, STEP and CUR in ns) or i (a count); STEP is what a
 * key press turns it by. Params without a range are not knobs. */
API const char *web_params(void) {
    size_t l = 0;
    text_buf[0] = '\0';
    for (int i = 0; have_run && i < vm.nknobs && l < sizeof text_buf; i++) {
        const struct viewmodel_knob *k = &vm.knobs[i];
        l += (size_t)snprintf(text_buf + l, sizeof text_buf - l, "%s\t%s\t%c\t%lld\t%lld\t%lld\t%lld\n", k->name,
                              k->value, (char)k->kind, (long long)k->min, (long long)k->max, (long long)k->step,
                              (long long)k->cur);
    }
    return text_buf;
}

/* Knob i set to v (a slider: ns for a duration), clamped to its range:
 * "NAME=VALUE" as --set takes it, VALUE as the scenario language writes it
 * (1.5s, not 1500ms); "" for no such knob. The page runs again with it. */
API const char *web_knob_set(int i, double v) {
    text_buf[0] = '\0';
    if (i < 0 || i >= vm.nknobs) return text_buf;
    viewmodel_knob_set(&vm.knobs[i], (int64_t)llround(v));
    snprintf(text_buf, sizeof text_buf, "%s=%s", vm.knobs[i].name, vm.knobs[i].value);
    return text_buf;
}

/* The knob k picked (its line in web_params), -1 for none. */
API int web_knob_picked(void) { return vm.knob_sel < vm.nknobs ? vm.knob_sel : -1; }

/* The knob a key turned (k picks, < > turn; web_key), as web_knob_set
 * says it, once; "" when none was. */
API const char *web_knob_taken(void) {
    int i = viewmodel_knob_taken(&vm);
    text_buf[0] = '\0';
    if (i >= 0) snprintf(text_buf, sizeof text_buf, "%s=%s", vm.knobs[i].name, vm.knobs[i].value);
    return text_buf;
}
