/* The run API: one run of one scenario, for every front end (the command
 * line, tests, benchmarks, the batch runner, sweeps and the window). Load or
 * parse a scenario, apply --seed and --set overrides, choose the algorithm
 * (built in, or a user plugin), build and run the engine, and hand back one
 * result: the report, the expectations judged, truncation, and an error
 * with its place. No globals: two runs never share state. */
#ifndef LOCKSIM_RUN_H
#define LOCKSIM_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "error.h"

struct run_spec {
    const char *file; /* path, or "-" for standard input; shown in messages */
    const char *text; /* optional: parse these len bytes instead of reading file */
    size_t len;
    const struct scenario *parsed; /* optional, wins over text: a copy of this scenario, as
                                     parsed from file (a batch worker parses each file once) */
    const char *seed;              /* --seed as text, or NULL for the scenario's */
    const char *const *sets;       /* --set KEY=VALUE, nsets of them, in order */
    int nsets;
    int sets_applied;                      /* 1 = parsed has sets[] applied already (a sweep cell's
                                     scenario, shared by its runs): only the seed is set;
                                     sets[] is still what the run reports and checks */
    const char *algo;                      /* --algo: a name, a path to a .so, or NULL */
    const struct lock_algo *algo_resolved; /* or the algorithm itself (wins over algo) */
    int keep_trace;                        /* 1 = keep every event (timelines, --trace) */
    int lenient_sets;                      /* 1 = a --set lock option this algorithm does not
                                     know is dropped (matrix rows), not an error */
    int hold_expects;                      /* --expect: judge the expect lines also when the run is
                                     not the scenario as written (see not_applicable) */
};

/* Where a run failed. */
enum run_stage {
    RUN_STAGE_NONE,  /* it ran */
    RUN_STAGE_ALGO,  /* --algo could not be resolved or loaded */
    RUN_STAGE_LOAD,  /* the file could not be read or parsed */
    RUN_STAGE_SET,   /* a --seed or --set override was refused */
    RUN_STAGE_BUILD, /* the engine could not be built from the scenario */
    RUN_STAGE_RUN    /* the run itself failed (out of memory) */
};

struct run_result {
    int rc; /* LSIM_OK, or the LSIM_E code of the failure */
    enum run_stage stage;
    char error[640];                     /* when rc != 0: "file:line:col: message", or
                                     "--set KEY=VALUE: message", one line */
    struct engine *engine;               /* owned: the finished run, or NULL on failure */
    const struct scenario *scn;          /* the engine's scenario (borrowed from engine) */
    const struct checker_report *report; /* borrowed from engine */
    const struct lock_algo *algo;        /* the algorithm that ran */
    uint64_t trace_hash;                 /* digest of the whole trace (kept or not) */
    int nexpects;                        /* the scenario's expect lines */
    int failed;                          /* of them, how many do not hold (0 when truncated:
                                     nothing is decided on a run cut short) */
    int truncated;                       /* the run stopped before its duration */
    char not_applicable[200];            /* "" when the expect lines are judged; else what makes
                                     this run another than the scenario as written, for
                                     which they were written ("seed 5 (the file's: 1)",
                                     "set pause=20s", "algorithm fenced-lease (the file's:
                                     lease)"): then failed is 0 and nothing is decided by
                                     them, unless spec.hold_expects. Empty when the
                                     scenario has no expect lines. */
};

/* Expectations are written for the scenario as it is in its file: its
 * params, its seed, its algorithm. A run with another seed (--seed,
 * --seeds), any --set (even to the value the file has) or another
 * algorithm (--algo, --algos) is another experiment, and its expect lines
 * are reported as not applicable (run_result.not_applicable) rather than
 * failed, unless the caller asks to hold them (run_spec.hold_expects). */

/* Run one scenario as spec says. Always fills *out (close it with
 * run_result_close). Returns out->rc. */
int run_scenario(const struct run_spec *spec, struct run_result *out);
void run_result_close(struct run_result *r);

/* The outcome as one code: out->rc when it failed, else LSIM_ETRUNCATED when
 * cut short, LSIM_EEXPECT when an expectation (or the rule that a scenario
 * states its outcome, with require_expects) fails, else LSIM_OK. */
/* 1 when r failed only because the algorithm swapped in (--algo, --algos)
 * cannot run the scenario's script: more lock servers than it runs on, a
 * configuration it refuses. matrix shows such a row as "cannot run this
 * script", batch as a skipped run (LSIM_ESKIPPED), never as an error. */
int run_cannot_run(const struct run_result *r, int swapped);
int run_outcome(const struct run_result *r, int require_expects);

/* Expectation i of a finished run: 1 holds, 0 fails; *measured (may be NULL)
 * receives the measured value. */
int run_expect(const struct run_result *r, int i, int64_t *measured);

/* Resolve an algorithm name (built in) or path (a user-written .so; a bare
 * name ending in .so is looked for in the current directory). Returns 0, or
 * LSIM_EUSAGE (unknown name) / LSIM_EPLUGIN (cannot be loaded, or refused by
 * validation) with a full sentence in err. */
int run_resolve_algo(const char *name, const struct lock_algo **out, char *err, size_t errlen);
/* Check that a plugin's struct can be used: ABI, name, the callbacks the
 * engine calls unconditionally, sizes. 0, or LSIM_EPLUGIN with err. */
int run_validate_algo(const struct lock_algo *a, const char *where, char *err, size_t errlen);
/* 1 when word (len bytes) is one of the space-separated words of list (the
 * form of engine_dropped_options), else 0. */
int run_word_in_list(const char *list, const char *word, size_t len);

struct checker_report;
/* Check a recorded trace afresh: src's events, without the findings a
 * checker appended when it was recorded, go into dst (same header and
 * nodes) with a checker attached (docs/trace-format.md, "Checking a
 * recorded trace"), judged as a scenario of that purpose and stuck-after
 * would be; the clients watch's expect lines name (NULL: none) are
 * watched as a run watches them. Returns 0 or LSIM_ENOMEM; dst must be closed by the caller, and
 * before src (its event text points into src). */
int run_recheck(const struct trace *src, enum scn_purpose purpose, sim_ns stuck_after_ns, const struct scenario *watch,
                struct trace *dst, struct checker_report *rep);

#endif
