/* `locksim view`: the window (gfx/view.c) over the run API. This file is its
 * host: it runs the scenario once per panel (--algos), re-runs it when the
 * window sees the file change, and writes screenshots through the output
 * rules (run/output.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_gfx.h"
#include "input.h"
#include "scenario_file.h"
#include "view.h"
#include "viewmodel.h"

#define VIEW_MAX 8
_Static_assert(VIEW_MAX <= VIEW_WATCH_MAX, "every file given to view is watched");

struct view_cmd {
    struct cli_runopts ro;
    const char *file, *algos, *log, *shots;
    const char *files[VIEW_MAX]; /* view A.lsim B.lsim: one panel per file (and algorithm) */
    int nfiles;
    const char *traces[VIEW_MAX]; /* --trace: recorded runs, a panel each under the simulated ones */
    int ntraces;
    int quiz, bench_frames, show_all;
    int scale_pct; /* --scale, percent; 0: from the screen */
    long width, height;
};

/* The host: the runs of the current load and of the one before it (the
 * window may still hold the older until it has taken the new). */
struct host {
    const struct view_cmd *o;
    const char *names[VIEW_MAX];       /* per panel: its algorithm (NULL: the file's), in algos */
    char algos[1024];                  /* --algos, cut at its commas: the names point here */
    int file_of[VIEW_MAX];             /* per panel: its file, an index of o->files */
    int n;                             /* simulated panels; the recorded ones come after them */
    struct cli_recorded rec[VIEW_MAX]; /* --trace, read once: a re-run leaves them as loaded */
    int nrec;
    struct run_result runs[2][VIEW_MAX];
    struct cli_banner cbs[2][VIEW_MAX];
    struct scene_banner bs[2][VIEW_MAX];
    const struct trace *trs[2][VIEW_MAX];
    int cur; /* which of the two sets is the current load, -1 none */
    struct out_file shot;
    /* the file loaded and watched: the one given, or the last edit (a fault
     * clicked in the window, saved as a new file); the ones before it */
    char path[4096];
    char prev[16][4096];
    int nprev;
    /* the command line's --set KEY=VALUE in force: a knob turned in the
     * window drops its own (the file then says the value) */
    const char *sets[CLI_MAX_SETS];
    int nsets;
};

static void close_set(struct host *h, int k) {
    for (int i = 0; i < h->n; i++)
        if (h->runs[k][i].engine || h->runs[k][i].rc) run_result_close(&h->runs[k][i]);
    memset(h->runs[k], 0, sizeof h->runs[k]);
}

static int load(void *ctx, struct view_load *out) {
    struct host *h = ctx;
    int k = h->cur == 0 ? 1 : 0; /* the set the window does not hold */
    close_set(h, k);
    for (int i = 0; i < h->n; i++) {
        /* the first file is the one edits make anew (h->path) */
        const char *file = h->file_of[i] ? h->o->files[h->file_of[i]] : h->path;
        struct run_spec spec = {.file = file,
                                .seed = h->o->ro.seed,
                                .sets = h->sets,
                                .nsets = h->nsets,
                                .algo = h->names[i],
                                .keep_trace = 1,
                                .lenient_sets = h->n > 1 && h->o->nfiles == 1};
        struct run_result *r = &h->runs[k][i];
        int rc = run_scenario(&spec, r);
        if (rc) {
            snprintf(out->error, sizeof out->error, "%s", r->error);
            close_set(h, k);
            return rc;
        }
        struct report_ctx c = {.file = file, .algo = h->names[i], .sets = h->sets, .nsets = h->nsets};
        cli_banner_fill(&h->cbs[k][i], r, &c);
        h->bs[k][i] = h->cbs[k][i].b;
        /* (quiz: the window keeps the verdict hidden, "running", until the
         * run has decided it; shown all at once, it would give answers away) */
        if (h->o->quiz && h->o->show_all) h->bs[k][i].report = NULL;
        h->trs[k][i] = engine_trace(r->engine);
    }
    /* the recorded runs under them, on the same time axis: a run of this
     * scenario, or refused (an edit that changed the nodes, too) */
    for (int i = 0; i < h->nrec; i++) {
        int rc = cli_recorded_match(h->trs[k][0], h->path, &h->rec[i].dst, h->o->traces[i], out->error,
                                    sizeof out->error);
        if (rc) {
            close_set(h, k);
            return rc;
        }
        h->trs[k][h->n + i] = &h->rec[i].dst;
        h->bs[k][h->n + i] = h->rec[i].b;
    }
    /* the set the window held stays until the next load replaces it */
    out->n = (size_t)(h->n + h->nrec);
    out->trs = h->trs[k];
    out->banners = h->bs[k];
    out->scn = h->runs[k][0].scn;
    h->cur = k;
    return 0;
}

static int shot_open(void *ctx, const char *path, FILE **f, char *err, size_t errlen) {
    struct host *h = ctx;
    int rc = out_open(&h->shot, path, h->o->files, h->o->nfiles, err, errlen);
    *f = rc ? NULL : h->shot.f;
    return rc;
}

static int shot_close(void *ctx, int ok, char *err, size_t errlen) {
    struct host *h = ctx;
    if (!ok) {
        out_abort(&h->shot);
        return 0;
    }
    return out_commit(&h->shot, err, errlen);
}

/* The scenario file as it is now: *text (freed by the caller), *len. */
static int read_scenario(const struct host *h, char **text, size_t *len, char *err, size_t errlen) {
    FILE *in = fopen(h->path, "rb");
    int rc = in ? input_read_all(in, 1 << 20, text, len) : LSIM_ENOINPUT;
    if (in) fclose(in);
    if (rc) snprintf(err, errlen, "cannot read %s to edit it", h->path);
    return rc;
}

/* Save the edited scenario (the parts a, then b) as dir/locksim-edit-N.lsim
 * (the first N free: created exclusively, nothing overwritten); that file
 * is loaded and watched from now on, the one before it kept for undo. */
static int save_edit(struct host *h, const char *a, size_t alen, const char *b, size_t blen, const char *dir,
                     char *saved, size_t savedlen, char *err, size_t errlen) {
    if (h->nprev == (int)(sizeof h->prev / sizeof h->prev[0])) { /* the oldest edits cannot be undone any more */
        memmove(h->prev[0], h->prev[1], sizeof h->prev - sizeof h->prev[0]);
        h->nprev--;
    }
    FILE *f = NULL;
    for (int k = 1; k < 100000 && !f; k++) {
        snprintf(saved, savedlen, "%s/locksim-edit-%d.lsim", dir && dir[0] ? dir : ".", k);
        int fd = open(saved, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd >= 0 && !(f = fdopen(fd, "w"))) close(fd);
        else if (fd < 0 && errno != EEXIST) break;
    }
    if (!f) {
        snprintf(err, errlen, "cannot create a file for the edited scenario in %s", dir && dir[0] ? dir : ".");
        return LSIM_EOUTPUT;
    }
    int ok = fwrite(a, 1, alen, f) == alen && fwrite(b, 1, blen, f) == blen;
    ok = (fclose(f) == 0) && ok;
    if (!ok) {
        unlink(saved);
        snprintf(err, errlen, "cannot write %s", saved);
        return LSIM_EOUTPUT;
    }
    snprintf(h->prev[h->nprev++], sizeof h->prev[0], "%s", h->path);
    snprintf(h->path, sizeof h->path, "%s", saved);
    return 0;
}

/* The scenario as it is now, with line added among its timed lines, saved
 * by save_edit. */
static int edit(void *ctx, const char *line, sim_ns at, const char *dir, char *saved, size_t savedlen, char *err,
                size_t errlen) {
    struct host *h = ctx;
    char *text = NULL, *head = NULL;
    size_t len = 0, hlen = 0;
    int rc = read_scenario(h, &text, &len, err, errlen);
    if (rc) return rc;
    size_t at_off = scenario_text_fault_place(text, len, at);
    FILE *m = open_memstream(&head, &hlen);
    if (!m) {
        free(text);
        snprintf(err, errlen, "out of memory");
        return LSIM_ENOMEM;
    }
    fwrite(text, 1, at_off, m);
    if (at_off && text[at_off - 1] != '\n') fputc('\n', m);
    fprintf(m, "%s   # added in the window by a click\n", line);
    rc = fclose(m) == 0 && head ? 0 : LSIM_ENOMEM;
    if (rc) snprintf(err, errlen, "out of memory");
    else rc = save_edit(h, head, hlen, text + at_off, len - at_off, dir, saved, savedlen, err, errlen);
    free(head);
    free(text);
    return rc;
}

/* A knob turned: the scenario with param name's value replaced, saved by
 * save_edit; the command line's --set of that name dropped. */
static int set_param(void *ctx, const char *name, const char *value, const char *dir, char *saved, size_t savedlen,
                     char *err, size_t errlen) {
    struct host *h = ctx;
    char *text = NULL, *out = NULL;
    size_t len = 0, olen = 0;
    int rc = read_scenario(h, &text, &len, err, errlen);
    if (rc) return rc;
    rc = viewmodel_param_edit(text, len, name, value, &out, &olen);
    free(text);
    if (rc) {
        snprintf(err, errlen, rc == LSIM_ENOMEM ? "out of memory" : "%s has no line `param %s=...`", h->path, name);
        return rc == LSIM_ENOMEM ? rc : LSIM_EBAD_VALUE;
    }
    rc = save_edit(h, out, olen, "", 0, dir, saved, savedlen, err, errlen);
    free(out);
    size_t nl = strlen(name);
    for (int i = 0; !rc && i < h->nsets;)
        if (strncmp(h->sets[i], name, nl) == 0 && h->sets[i][nl] == '=') {
            memmove(&h->sets[i], &h->sets[i + 1], (size_t)(h->nsets - i - 1) * sizeof h->sets[0]);
            h->nsets--;
        } else i++;
    return rc;
}

static int undo(void *ctx) {
    struct host *h = ctx;
    if (h->nprev == 0) return 0;
    snprintf(h->path, sizeof h->path, "%s", h->prev[--h->nprev]);
    return 1;
}

enum {
    OPT_ALGOS = CLI_OPT_OWN,
    OPT_QUIZ,
    OPT_SHOW_ALL,
    OPT_SHOTS,
    OPT_SCRIPT_LOG,
    OPT_BENCH,
    OPT_WIDTH,
    OPT_HEIGHT,
    OPT_SCALE,
    OPT_TRACE
};
static const struct option view_options[] = {
        {"algos", required_argument, NULL, OPT_ALGOS},
        {"quiz", no_argument, NULL, OPT_QUIZ},
        {"show-all", no_argument, NULL, OPT_SHOW_ALL},
        {"shots", required_argument, NULL, OPT_SHOTS},
        {"script-log", no_argument, NULL, OPT_SCRIPT_LOG},
        {"bench-frames", required_argument, NULL, OPT_BENCH},
        {"width", required_argument, NULL, OPT_WIDTH},
        {"height", required_argument, NULL, OPT_HEIGHT},
        {"scale", required_argument, NULL, OPT_SCALE},
        {"trace", required_argument, NULL, OPT_TRACE},
        {NULL, 0, NULL, 0},
};
const struct option *const cli_tables_view[] = {view_options, NULL};

/* One option of view, or a file: 0, or the exit status. */
static int take_view_option(struct view_cmd *o, int c, const char *a) {
    long n;
    switch (c) {
    case OPT_ALGOS: o->algos = a; return 0;
    case OPT_QUIZ: o->quiz = 1; return 0;
    case OPT_SHOW_ALL: o->show_all = 1; return 0;
    case OPT_SHOTS: o->shots = a; return 0;
    case OPT_SCRIPT_LOG: o->log = "-"; return 0;
    case OPT_TRACE:
        if (o->ntraces == VIEW_MAX)
            return cli_usage("view shows at most %d --trace files; '%s' is one more", VIEW_MAX, a);
        o->traces[o->ntraces++] = a;
        return 0;
    case OPT_BENCH:
        if (cli_parse_int(a, 1, 100000, &n) != 0)
            return cli_usage("--bench-frames takes a count from 1 to 100000, not '%s'", a);
        o->bench_frames = (int)n;
        return 0;
    case OPT_WIDTH: return cli_parse_pixels("--width", a, 320, 8192, &o->width);
    case OPT_HEIGHT: return cli_parse_pixels("--height", a, 240, 8192, &o->height);
    case OPT_SCALE: {
        char *end = NULL;
        double s = strtod(a, &end);
        if (end == a || *end || !(s * 100 >= VIEWMODEL_SCALE_MIN - 0.5 && s * 100 <= VIEWMODEL_SCALE_MAX + 0.5))
            return cli_usage("--scale takes a text scale from %.2g to %.2g (1.5: text half as big again), not '%s'",
                             VIEWMODEL_SCALE_MIN / 100.0, VIEWMODEL_SCALE_MAX / 100.0, a);
        o->scale_pct = (int)(s * 100 + 0.5);
        return 0;
    }
    default: /* CLI_OPT_ARG */
        if (o->nfiles == VIEW_MAX)
            return cli_usage("view shows at most %d scenario files; '%s' is one more", VIEW_MAX, a);
        o->files[o->nfiles++] = a;
        return 0;
    }
}

static int parse_view_args(struct view_cmd *o, int argc, char **argv) {
    struct cli_getopt g;
    int st = cli_getopt_init_tables(&g, "view", cli_usage_view, &o->ro, cli_tables_view, argc, argv);
    for (int c; st == 0 && (c = cli_getopt_next(&g)) != CLI_OPT_END;)
        st = c == CLI_OPT_STOP ? g.status : take_view_option(o, c, g.arg);
    cli_getopt_close(&g);
    if (st) return st;
    if (!o->nfiles) return cli_usage("view needs a scenario file: locksim view FILE [FILE...]");
    o->file = o->files[0];
    for (int i = 1; i < o->nfiles; i++)
        if (strcmp(o->files[i], "-") == 0)
            return cli_usage("view reads files it can watch for changes, not standard input");
    if (strcmp(o->file, "-") == 0) return cli_usage("view reads a file it can watch for changes, not standard input");
    if (o->algos && o->ro.algo) return cli_usage("view takes --algo A or --algos A,B,..., not both");
    return 0;
}

/* The panels: each file with each algorithm of --algos (files outer), into
 * h; 0 or the exit status. */
static int view_panels(struct host *h, const struct view_cmd *o) {
    h->n = 0;
    if (o->algos) {
        snprintf(h->algos, sizeof h->algos, "%s", o->algos);
        for (char *p = h->algos; *p && h->n < VIEW_MAX;) {
            size_t l = strcspn(p, ",");
            if (l == 0) return cli_usage("--algos has an empty name in '%s'; write NAME,NAME,...", o->algos);
            h->names[h->n++] = p;
            if (!p[l]) break;
            p[l] = '\0';
            p += l + 1;
        }
    } else {
        h->names[h->n++] = o->ro.algo;
    }
    int nalgos = h->n;
    const char *algo_names[VIEW_MAX];
    memcpy(algo_names, h->names, sizeof algo_names);
    if (o->nfiles * nalgos + o->ntraces > VIEW_MAX)
        return cli_usage("view shows at most %d panels: %d files x %d algorithms and %d --trace files is more",
                         VIEW_MAX, o->nfiles, nalgos, o->ntraces);
    h->n = 0;
    for (int f = 0; f < o->nfiles; f++)
        for (int a = 0; a < nalgos; a++) {
            h->names[h->n] = algo_names[a];
            h->file_of[h->n++] = f;
        }
    return 0;
}

/* The --trace files, read once and judged as runs of the first file's
 * scenario would be, into h: 0 or the exit status (a malformed line:
 * "FILE:N: ..."). */
static int view_recorded(struct host *h, const struct view_cmd *o) {
    struct scenario s;
    struct scn_error e;
    scenario_init(&s);
    int st = o->ntraces ? scenario_load(&s, o->file, &e) : 0;
    if (st) {
        char msg[700];
        scn_error_place(msg, sizeof msg, &e);
        st = cli_fail(st, msg);
    }
    for (int i = 0; !st && i < o->ntraces; i++) {
        h->nrec++;
        st = cli_recorded_load(&h->rec[i], o->traces[i], &s);
    }
    scenario_close(&s);
    return st;
}

/* What the window's end means for the exit status: 0, or why it could not
 * open (no display: the picture to draw instead). */
static int view_status(int rc, const struct view_cmd *o) {
    if (rc == LSIM_ENODISPLAY) {
        fprintf(stderr,
                "%s: %s: view needs a display (X11 or Wayland) to open its window.\n"
                "  Draw the same timeline as a picture instead: %s render %s -o out.png\n",
                cli_prog, cli_gfx_error(), cli_prog, o->file);
        return cli_exit(rc);
    }
    if (rc) {
        const char *why = cli_gfx_error();
        return cli_fail(rc, why && why[0] ? why : lsim_strerror(rc));
    }
    return 0;
}

int cmd_view(int argc, char **argv) {
    struct view_cmd o;
    memset(&o, 0, sizeof o);
    int st = parse_view_args(&o, argc, argv);
    if (st) return st < 0 ? 0 : st;
    struct host *h = calloc(1, sizeof *h);
    if (!h) return cli_fail(LSIM_ENOMEM, "");
    h->o = &o;
    h->cur = -1;
    for (int i = 0; i < o.ro.nsets && i < CLI_MAX_SETS; i++) h->sets[h->nsets++] = o.ro.sets[i];
    if ((st = view_panels(h, &o)) != 0 || (st = view_recorded(h, &o)) != 0) {
        for (int i = 0; i < h->nrec; i++) cli_recorded_close(&h->rec[i]);
        free(h);
        return st;
    }
    snprintf(h->path, sizeof h->path, "%s", o.file);
    /* Clicked faults edit one file: with several, the window offers none
     * (which file a click meant is the panel's, but undo would mix them). */
    struct view_host vh = {.ctx = h,
                           .path = h->path,
                           .also = o.files + 1, /* every file is watched */
                           .nalso = o.nfiles - 1,
                           .load = load,
                           .shot_open = shot_open,
                           .shot_close = shot_close,
                           .edit = o.nfiles == 1 ? edit : NULL,
                           .undo = o.nfiles == 1 ? undo : NULL,
                           .set_param = o.nfiles == 1 ? set_param : NULL};
    struct view_opts vo = {.quiz = o.quiz,
                           .show_all = o.show_all,
                           .shots_dir = o.shots,
                           .width = (int)o.width,
                           .height = (int)o.height,
                           .scale_pct = o.scale_pct,
                           .log = o.log ? stdout : NULL,
                           .bench_frames = o.bench_frames};
    int rc = cli_gfx_view_run(&vh, &vo);
    close_set(h, 0);
    close_set(h, 1);
    for (int i = 0; i < h->nrec; i++) cli_recorded_close(&h->rec[i]);
    free(h);
    return view_status(rc, &o);
}
