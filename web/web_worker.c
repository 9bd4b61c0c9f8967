/* The web page's long computations, run in its Web Worker (web/page.js
 * starts one from the page's own inlined engine): the matrix, one
 * algorithm per call, and a sweep over one or two of the scenario's params,
 * one run per call, so the worker can say how far it is between calls and
 * the page stays responsive. A sweep's cells are tallied and drawn by the
 * same code as `locksim sweep --svg` (run/sweep_tally.h), so the same
 * params, values and seed give the same SVG, byte for byte. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <emscripten/emscripten.h>

#include "error.h"
#include "heatmap_svg.h"
#include "lock.h"
#include "report.h"
#include "run.h"
#include "sweep_tally.h"

#define API EMSCRIPTEN_KEEPALIVE
#define SWEEP_MAX_ALGOS 64
#define SWEEP_MAX_VALS 64

static char row[2048];
static char sw_error[700];

/* Matrix row i (lock_algo_at order): "NAME<TAB>VERDICT<TAB>headline<TAB>DIGEST",
 * "NAME<TAB>-<TAB>cannot run this script: why<TAB>" or "NAME<TAB>ERROR<TAB>why<TAB>";
 * "" past the last algorithm. The text runs as `locksim matrix` runs it. */
API const char *web_matrix_row(const char *text, int i) {
    const struct lock_algo *a = lock_algo_at(i);
    row[0] = '\0';
    if (!a) return row;
    struct run_spec spec = {
            .file = "scenario", .text = text, .len = strlen(text), .algo_resolved = a, .lenient_sets = 1};
    struct run_result r;
    int rc = run_scenario(&spec, &r);
    if (rc && run_cannot_run(&r, 1)) snprintf(row, sizeof row, "%s\t-\tcannot run this script: %s\t", a->name, r.error);
    else if (rc) snprintf(row, sizeof row, "%s\tERROR\t%s\t", a->name, r.error);
    else
        snprintf(row, sizeof row, "%s\t%s%s\t%s\t%016llx", a->name, scn_verdict_name(r.report->verdict),
                 r.truncated ? " (cut short)" : "", r.report->headline, (unsigned long long)r.trace_hash);
    run_result_close(&r);
    return row;
}

/* ---- a sweep ---- */

/* One axis: a param's name and its values, split from page.js's lines. */
struct axis {
    char *buf; /* owned: the values' text, NULs between them */
    const char *vals[SWEEP_MAX_VALS];
    int n;
    char key[128];
    char set[SWEEP_MAX_VALS][200]; /* KEY=VALUE, as --set takes it */
};

#define SWEEP_MAX_SETS 32

static struct {
    char file[200], *text, seed[32];
    char *set_buf;                        /* owned: the fixed sets' text */
    const char *sets[SWEEP_MAX_SETS + 2]; /* the fixed sets, then the cell's */
    int nsets;
    const struct lock_algo *algo[SWEEP_MAX_ALGOS];
    const char *algo_reg[SWEEP_MAX_ALGOS];
    int nalgos; /* 0: the scenario's own */
    struct axis ax[2];
    int naxes, ncells;
    struct sweep_tally t;
    char *svg; /* owned: the last picture */
} sw;

static void sweep_free(void) {
    free(sw.text);
    free(sw.set_buf);
    sw.text = sw.set_buf = NULL;
    sw.nsets = 0;
    for (int k = 0; k < 2; k++) {
        free(sw.ax[k].buf);
        memset(&sw.ax[k], 0, sizeof sw.ax[k]);
    }
    sweep_tally_close(&sw.t);
}

static int fail(int rc, const char *what) {
    snprintf(sw_error, sizeof sw_error, "%s", what);
    sweep_free();
    return -rc;
}

static int take_axis(struct axis *a, const char *key, const char *vals) {
    snprintf(a->key, sizeof a->key, "%s", key);
    if (!(a->buf = strdup(vals))) return LSIM_ENOMEM;
    for (char *p = a->buf; *p;) {
        size_t l = strcspn(p, "\n");
        if (l && a->n == SWEEP_MAX_VALS) return LSIM_EUSAGE;
        if (l) {
            a->vals[a->n] = p;
            snprintf(a->set[a->n], sizeof a->set[a->n], "%s=%.*s", key, (int)l, p);
            a->n++;
        }
        if (!p[l]) break;
        p[l] = '\0';
        p += l + 1;
    }
    return a->n ? 0 : LSIM_EUSAGE;
}

/* Start a sweep of text (file: its name, as the heatmap's subtitle) with
 * seed ("" = the scenario's) and sets (KEY=VALUE lines, as --set takes them,
 * for every run, before the cell's) over algos (names, one a line; "" = the
 * scenario's own) and one axis (ykey "") or two: each a param's name and
 * its values, one a line, as `locksim sweep --vary KEY=V1,V2,...` takes
 * them. Returns the number of runs, or a negative LSIM code with
 * web_sweep_error()'s sentence. */
API int web_sweep_begin(const char *file, const char *text, const char *seed, const char *sets, const char *algos,
                        const char *xkey, const char *xvals, const char *ykey, const char *yvals) {
    sweep_free();
    snprintf(sw.file, sizeof sw.file, "%s", file);
    snprintf(sw.seed, sizeof sw.seed, "%s", seed);
    if (!(sw.text = strdup(text)) || !(sw.set_buf = strdup(sets))) return fail(LSIM_ENOMEM, "out of memory");
    for (char *p = sw.set_buf; *p;) {
        size_t l = strcspn(p, "\n");
        if (l && sw.nsets == SWEEP_MAX_SETS) return fail(LSIM_EUSAGE, "too many knobs set");
        if (l) sw.sets[sw.nsets++] = p;
        if (!p[l]) break;
        p[l] = '\0';
        p += l + 1;
    }
    sw.nalgos = 0;
    for (const char *p = algos; *p;) {
        size_t l = strcspn(p, "\n");
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(l < sizeof name ? l : sizeof name - 1), p);
        if (l && sw.nalgos == SWEEP_MAX_ALGOS) return fail(LSIM_EUSAGE, "too many algorithms");
        if (l && !(sw.algo[sw.nalgos] = lock_algo_find(name))) {
            snprintf(row, sizeof row, "no algorithm '%s'", name);
            return fail(LSIM_EUSAGE, row);
        }
        if (l) sw.algo_reg[sw.nalgos] = sw.algo[sw.nalgos]->name, sw.nalgos++;
        p += l + (p[l] != '\0');
    }
    sw.naxes = ykey && ykey[0] ? 2 : 1;
    if (take_axis(&sw.ax[0], xkey, xvals) != 0 || (sw.naxes > 1 && take_axis(&sw.ax[1], ykey, yvals) != 0))
        return fail(LSIM_EUSAGE, "an axis needs a param and 1 to 64 values");
    sw.ncells = sw.ax[0].n * (sw.naxes > 1 ? sw.ax[1].n : 1);
    int na = sw.nalgos ? sw.nalgos : 1;
    if (sweep_tally_init(&sw.t, na, sw.ncells) != 0) return fail(LSIM_ENOMEM, "out of memory");
    sw_error[0] = '\0';
    return sw.ncells * na;
}

/* Run i of the sweep begun (cells outermost, then algorithms, as `locksim
 * sweep` lists them) and count it. 0, or a negative LSIM code. */
API int web_sweep_step(int i) {
    int na = sw.nalgos ? sw.nalgos : 1;
    if (!sw.text || i < 0 || i >= sw.ncells * na) return -LSIM_EUSAGE;
    int cell = i / na, a = sw.nalgos ? i % na : -1, nx = sw.ax[0].n;
    sw.sets[sw.nsets] = sw.ax[0].set[cell % nx];
    sw.sets[sw.nsets + 1] = sw.naxes > 1 ? sw.ax[1].set[cell / nx] : NULL;
    struct run_spec spec = {.file = sw.file,
                            .text = sw.text,
                            .len = strlen(sw.text),
                            .seed = sw.seed[0] ? sw.seed : NULL,
                            .sets = sw.sets,
                            .nsets = sw.nsets + sw.naxes,
                            .algo_resolved = a < 0 ? NULL : sw.algo[a],
                            .lenient_sets = sw.nalgos > 1};
    struct report_summary sum;
    memset(&sum, 0, sizeof sum);
    sweep_run_one(&spec, &sum);
    sweep_tally_add(&sw.t, (size_t)i, a, cell, &sum);
    report_summary_close(&sum);
    return 0;
}

/* The heatmap of the sweep so far, as `locksim sweep --svg` writes it. */
API const char *web_sweep_svg(void) {
    const char *panels[SWEEP_MAX_ALGOS];
    struct heatmap h;
    char *buf = NULL;
    size_t len = 0;
    if (!sw.t.cells) return "";
    FILE *m = open_memstream(&buf, &len);
    if (!m) return "";
    sweep_tally_heatmap(&sw.t, sw.nalgos ? sw.algo_reg : NULL, panels, sw.file, sw.ax[0].key, sw.ax[0].vals, sw.ax[0].n,
                        sw.naxes > 1 ? sw.ax[1].key : NULL, sw.ax[1].vals, sw.ax[1].n, &h);
    heatmap_svg_write(m, &h);
    fclose(m);
    free(sw.svg);
    sw.svg = buf;
    return sw.svg ? sw.svg : "";
}

API const char *web_sweep_error(void) { return sw_error; }
