/* The explorer's own header (explore.h is the public one), shared by its
 * files, each with one job: explore_draw.c draws a run's params and faults,
 * explore_judge.c runs a scenario with extra faults and judges it,
 * explore_search.c runs the search on the worker pool, explore_candidate.c
 * builds and judges a shrink candidate, explore_shrink.c and
 * explore_params.c shrink the first failure with it, explore_write.c writes it as a
 * scenario file, explore.c ties them together. Nothing here is used outside
 * run/explore*.c. */
#ifndef LOCKSIM_EXPLORE_INT_H
#define LOCKSIM_EXPLORE_INT_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "engine.h"
#include "explore.h"
#include "fmt.h"
#include "scenario.h"

#define BITMAP_BITS (1u << 20)        /* distinct placements, by hash */
#define MAX_DRAWN 256                 /* faults one run may add (4 kinds x the parser's 64) */
#define SHRINK_MAX_RUNS 20000         /* the shrinker gives up after this many runs */
#define SET_MAX (2 * SCN_OPT_MAX + 8) /* one NAME=VALUE for a param */
#define COVER_LOG_MAX \
    (2 * MAX_DRAWN) /* coverage entries of one run: a place and a
                                         kept fault per fault drawn */

static inline double explore_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline uint64_t explore_mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* v as a duration into buf (48 bytes), returned. */
static inline const char *explore_dur(char *buf, sim_ns v) {
    format_time_ns(buf, 48, v);
    return buf;
}

/* ---- The search's fixed inputs ---------------------------------------------------- */

/* One drawn fault: one line, or two that belong together (a crash and its
 * restart, a latency spike and its end). Shrinking keeps them together. */
struct unit {
    struct scn_fault f[2];
    int n;
    int kind;  /* enum scn_nemesis, or -1 for a fault of the file itself */
    int idx;   /* kind -1: the fault's index in the file (its values come from the
                  params in use, so they are taken afresh at each build) */
    int moved; /* kind -1: 1 = at_ns of f[0] replaces the file's time */
};

struct ctx {
    struct scenario own; /* the file's scenario, the algorithm swapped in */
    const struct explore_opts *o;
    struct engine_opts eo;
    int nservers;
    int ranged[SCN_MAX_PARAMS]; /* indexes of params with a range */
    int nranged;
    unsigned *points; /* owned: per client, a bit per named point its program has */
    /* Per process: the scenario for the current epoch's param values. */
    struct scenario epoch_scn;
    uint64_t epoch;
    int epoch_ok;
    struct explore_cover cover;  /* of the runs searched, in the parent */
    unsigned char *bitmap;       /* owned: BITMAP_BITS bits, in the parent */
    uint32_t log[COVER_LOG_MAX]; /* what the last draw placed (explore_cover_apply) */
    int nlog;
    char unparsed[400]; /* why the last candidate's text did not parse back */
    int unparsed_first; /* 1: the first failure's own text did not */
};

/* 1 when the caller asked to stop (explore_opts.stop). */
static inline int explore_stopped(const struct ctx *c) { return c->o->stop && *c->o->stop; }

/* ---- explore_draw.c: a run's params and faults -------------------------------------- */

/* The named points a program reaches (a bit per enum scn_point). */
unsigned explore_program_points(const struct scn_program *pr);
/* How many nodes a budget's target set has: clients, then servers, then R. */
int explore_target_count(const struct ctx *c, const struct scn_budget *b);
/* The param values of an epoch, as --set NAME=VALUE texts. */
void explore_draw_params(const struct ctx *c, uint64_t epoch, char sets[][SET_MAX]);
/* The scenario for param values sets (nranged of them): a copy of own,
 * re-parsed with each. 0, or an LSIM code (a value that does not fit). */
int explore_apply_params(const struct ctx *c, char sets[][SET_MAX], struct scenario *out);
/* The faults of run `index` on scenario s, into u[] (at most max); returns
 * how many units. What it placed is logged in c->log (c->nlog entries). */
int explore_draw_faults(struct ctx *c, const struct scenario *s, uint64_t index, struct unit *u, int max);
/* Count n entries of a draw's log (4 bytes each, any alignment) into
 * c->cover and c->bitmap. */
void explore_cover_apply(struct ctx *c, const void *log, int n);

/* ---- explore_judge.c: running and judging ------------------------------------------- */

/* Faults in the order the parser keeps them: those at named points first,
 * then the timed ones by time (stable). */
int explore_fault_before(const struct scn_fault *a, const struct scn_fault *b);
void explore_sort_faults(struct scn_fault *f, int n);
/* The violation kinds of a report, as bits, for "fails the same way". */
unsigned explore_violations(const struct checker_report *r);
/* Run s with extra faults (s and extra borrowed for the call): 1 fails, 0
 * holds, 2 cut short, or < 0 (an LSIM code). rep and states (either may be
 * NULL) receive the report and the states reached. */
int explore_try(struct ctx *c, const struct scenario *s, struct scn_fault *extra, int nextra,
                struct checker_report *rep, uint64_t *states);

/* ---- explore_search.c: the search on the worker pool -------------------------------- */

/* One run of the search: 1 fails, 0 holds, 2 cut short, or < 0; *states
 * receives the states it reached. */
int explore_search_run(struct ctx *c, uint64_t index, uint64_t *states);
/* Runs in index order until the first failure, the budget is spent or the
 * time is up: r's runs, first_fail, found and seconds, c's coverage. 0, an
 * LSIM code, or LSIM_EINTERRUPTED when c->o->stop stopped it first. */
int explore_search(struct ctx *c, struct explore_result *r);

/* ---- explore_shrink.c, explore_params.c: shrinking ---------------------------------- */

struct shrink {
    struct ctx *c;
    char sets[SCN_MAX_PARAMS][SET_MAX]; /* the param values */
    struct unit *u;                     /* owned: nu units, the file's faults first */
    int nu;
    unsigned char *dropped;   /* owned: per client of own, 1 = removed */
    enum scn_verdict verdict; /* the failure to keep: its verdict ... */
    unsigned kinds;           /* ... and its kinds of violation */
    struct explore_result *r;
    struct checker_report rep;  /* of the last run that still failed */
    struct checker_report last; /* of the last run made (when last_valid) */
    int last_valid;
    int last_held;          /* 1 when that run kept the file's expect lines */
    struct {                /* params bisected to a tick */
        int k;              /* index into ranged */
        int64_t fail, pass; /* the failing value kept, and the tick next to it */
    } param_boundary[SCN_MAX_PARAMS];
    int nparam_boundary;
};

/* Round values, coarsest first. */
#define EXPLORE_NLADDER 9
extern const sim_ns explore_ladder[EXPLORE_NLADDER];

/* Re-draw the first failing run as units, shrink it and write the file
 * (r->text). 0, an LSIM code, or LSIM_EINTERRUPTED when c->o->stop was set. */
int explore_shrink(struct ctx *c, struct explore_result *r, const char *algo);

/* ---- explore_candidate.c: a candidate, below the passes and the writer ---------------- */

/* How a run ended, in a few words: "SAFE", "UNSAFE with a stale write". */
void explore_outcome(const struct checker_report *r, char *buf, size_t n);
/* The outcome of the last run made, for the passing side of a boundary. */
void explore_outcome_last(const struct shrink *sh, char *buf, size_t n);
/* The candidate as a parsed scenario: 0, 1 (not a valid scenario), < 0. */
int explore_build(struct shrink *sh, struct scenario *out);
/* 1 when the candidate still fails the same way, 0 when not (or invalid),
 * < 0 an LSIM code. */
int explore_still_fails(struct shrink *sh);
/* Record a shrink step (printf-like). */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void explore_step(struct shrink *sh, const char *fmt, ...);
/* The passes on params: back to defaults or rounded; bisected to the tick;
 * their boundaries checked again at the end. 1 changed, 0 not, < 0. */
int explore_pass_params(struct shrink *sh);
int explore_pass_param_bisect(struct shrink *sh);
int explore_recheck_param_boundaries(struct shrink *sh);

/* ---- explore_write.c: the counterexample file --------------------------------------- */

/* The shrunk candidate with expect lines pinning its failure and a comment
 * saying how it was found, into sh->r->text. 0 or an LSIM code. */
int explore_write_file(struct shrink *sh, const char *algo);

#endif
