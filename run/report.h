/* Reports of finished runs in every format a front end prints: the text
 * verdict block and expectations, one JSON object per run, CSV rows, TAP and
 * JUnit XML for a set of runs. The metric rows all come from the metric
 * table (sim/metric.h), so each figure has one spelling everywhere. Strings
 * are escaped for their format (JSON, XML, CSV, POSIX shell). */
#ifndef LOCKSIM_REPORT_H
#define LOCKSIM_REPORT_H

#include <stdio.h>

#include "run.h"

/* How a run was asked for: what its replay line must repeat. */
struct report_ctx {
    const char *file;        /* as given on the command line */
    const char *algo;        /* --algo as given, or NULL */
    const char *const *sets; /* --set as given */
    int nsets;
    int width;              /* timeline width when the output shows one, else 0 */
    int color;              /* ANSI colours in text */
    const char *truncation; /* why the run was cut short when there is no engine to
                                    ask (check-trace of a trace with no run-end); borrowed,
                                    may be NULL */
};

/* A finished run kept after its engine is freed (check, batch). */
struct report_summary {
    const char *file;  /* borrowed */
    const char *label; /* borrowed, or NULL (= file): the run's name in TAP
                                    ("FILE seed 3 algo lease", batch) */
    int rc;            /* run_result.rc */
    int outcome;       /* run_outcome() */
    char error[640];
    char title[160];
    char algo[48];
    unsigned long long seed, events, trace_hash;
    int nexpects, failed, truncated;
    struct checker_report rep;
    char *failures;           /* owned (free with report_summary_close): one line
                                    per failed expectation, "" when none */
    double seconds;           /* wall time of the run, for JUnit; 0 = unknown */
    int judged;               /* 1 = expectations were judged (check, batch); 0 = the
                                    run is only reported (matrix): outcome RAN */
    char not_applicable[200]; /* run_result.not_applicable: "" or what makes the run
                                    another than the scenario as written (its expect
                                    lines are then not judged: outcome NOT-APPLICABLE) */
};

/* ---- Output formats: one table --------------------------------------------------
 * XX(ID, name, alias or NULL, what it is). Every command's --format goes
 * through report_format_parse with the set it offers (cli/cli.c's command
 * table), and `locksim help formats` prints this table; the writers are
 * below (text, JSON Lines, CSV, TAP, JUnit) and in render/ (PNG, SVG). */
/* clang-format off */
#define REPORT_FORMAT_MAP(XX)                                                                          \
    XX(TEXT, "text", "table", "for people: the verdict block, or one line per run or group")          \
    XX(JSONL, "jsonl", "json", "JSON Lines: one JSON object per line (a run, a cell; run and matrix "   \
                               "write one line)")                                                      \
    XX(CSV, "csv", NULL, "comma-separated values, a header row first")                                 \
    XX(JUNIT, "junit", NULL, "JUnit XML: one test case per run")                                       \
    XX(TAP, "tap", NULL, "Test Anything Protocol 13: one test point per run")                          \
    XX(PNG, "png", NULL, "a picture, PNG")                                                            \
    XX(SVG, "svg", NULL, "a picture, SVG")
/* clang-format on */

enum report_format {
#define REPORT_FMT_ENUM_(id, name, alias, what) REPORT_FMT_##id,
    REPORT_FORMAT_MAP(REPORT_FMT_ENUM_)
#undef REPORT_FMT_ENUM_
            REPORT_FMT_COUNT
};
#define REPORT_FMT_BIT(id) (1u << REPORT_FMT_##id)

/* The format named name (or its alias) among those of the set offered (a
 * mask of REPORT_FMT_BIT), into *out: 0, or LSIM_EUSAGE with a sentence in
 * err naming what the command takes ("--format takes text, jsonl or csv
 * (json is jsonl), not 'xml'"). */
int report_format_parse(const char *name, unsigned offered, enum report_format *out, char *err, size_t errlen);
const char *report_format_name(enum report_format f);
const char *report_format_alias(enum report_format f); /* or NULL */
const char *report_format_what(enum report_format f);

/* Word for an outcome code: PASS, FAIL, TRUNCATED or ERROR. */
const char *report_outcome_word(int outcome);
/* The outcome of a run whose expect lines were not judged because it is
 * not the scenario as written (run.h, run_result.not_applicable): it ran to
 * its end, its exit status is 0, and no expectation passed or failed. */
#define REPORT_NOT_APPLICABLE "NOT-APPLICABLE"
/* The outcome word of a finished run: report_outcome_word(run_outcome(r, 0)),
 * or REPORT_NOT_APPLICABLE. */
const char *report_run_word(const struct run_result *r);
/* The words that say why the expectations of a run are not judged (na:
 * its not_applicable), no newline: "not applicable: NA changes the
 * scenario they were written for (--expect judges them)". */
void report_not_applicable(char *buf, size_t n, const char *na);

/* Fill *sum from a result (r may have failed). judge: 0 = report only (no
 * expectation decides the outcome), 1 = judge the expect lines, 2 = judge
 * them and fail a scenario that has none. Returns 0 or LSIM_ENOMEM. */
int report_summarize(struct report_summary *sum, const char *file, const struct run_result *r, int judge);
/* The outcome word of a summary: PASS, FAIL, TRUNCATED, ERROR, SKIP,
 * NOT-APPLICABLE, or RAN. */
const char *report_summary_word(const struct report_summary *s);
void report_summary_close(struct report_summary *sum);

/* Escaped strings, quotes included (JSON, CSV) or not (XML text). */
void report_json_str(FILE *f, const char *s);
void report_xml_str(FILE *f, const char *s);
void report_csv_str(FILE *f, const char *s);
/* A word for a POSIX shell: as it is when safe, else in single quotes. */
void report_shell_word(FILE *f, const char *s);

/* `locksim run FILE --seed N [--set K=V]... [--algo A] [--width W]`, each word
 * shell-quoted, no newline. */
void report_replay(FILE *f, const struct run_result *r, const struct report_ctx *c);
/* Why the run stopped early, and how to let it finish (one sentence, no
 * newline); "" when it was not cut short. */
void report_truncation(char *buf, size_t n, const struct run_result *r);

/* Text: the verdict block ("Verdict: ..." and one line per group of
 * figures), then the expectations, each with its measured value. */
void report_text_verdict(FILE *f, const struct run_result *r, const struct report_ctx *c);
void report_text_expects(FILE *f, const struct run_result *r, const struct report_ctx *c);
/* When expectation k of r fails: its line "FILE:LINE:COL: expect TEXT:
 * measured VALUE" (no newline) in buf, and 1; 0 when it holds. r needs
 * only scn and report (check-trace judges a trace read back, no engine). */
int report_expect_failure(char *buf, size_t n, const char *file, const struct run_result *r, int k);
/* One JSON object, one line: run facts, every metric of the table, the
 * trace digest, the expectations and the replay line. narration (may be
 * NULL) is added as an array of lines. 0, or LSIM_ENOMEM with nothing
 * written. */
int report_json(FILE *f, const struct run_result *r, const struct report_ctx *c, const char *narration);
/* The JSON object of a run that could not be made (an error record). */
void report_json_error(FILE *f, const char *file, const struct run_result *r);

/* CSV: header, then one row per run. Columns: file, algorithm, seed,
 * outcome, every metric key of the table, trace_hash, note. */
void report_csv_header(FILE *f);
void report_csv_row(FILE *f, const struct report_summary *s);
/* The same with one column per --set override (nsets of KEY=VALUE), named
 * set.KEY in the header, after seed; a row gives each VALUE. */
void report_csv_header_sets(FILE *f, const char *const *sets, int nsets);
void report_csv_row_sets(FILE *f, const struct report_summary *s, const char *const *sets, int nsets);
/* One JSON object, one line, from a summary (batch, check-trace): scenario,
 * title, algorithm, seed, "set" (every override, KEY: VALUE), outcome,
 * events, truncated, expects and failed_expects, headline, every metric of
 * the table, trace_hash; for a run that failed, error_code, exit_status and
 * error instead of the figures. */
void report_json_summary(FILE *f, const struct report_summary *s, const char *const *sets, int nsets);

/* Sets of runs. TAP: one test point per run, named by its label (or file). */
void report_tap(FILE *f, const struct report_summary *s, int n);
/* JUnit XML of n runs, shaped for CI dashboards (Jenkins, GitLab): one
 * <testsuites> named suite; a <testsuite> per scenario file (its runs in a
 * row); a <testcase> per run whose classname is the file's path without
 * .lsim, its folders and stem joined by dots (scenarios/gc-pause.lsim ->
 * scenarios.gc-pause, so a dashboard groups by folder, then scenario; a dot
 * inside a name becomes _) and whose name is the algorithm, the seed and the
 * params: "lease seed=3 lock.ttl=10s" (sets: the --set of every run, nsets
 * of them; a run that could not be made and names no algorithm is "not
 * run"). A name repeated within its class gets " #2", " #3": every testcase
 * is unique. Strings are XML-escaped. Returns 0, or LSIM_ENOMEM with
 * nothing written. */
int report_junit(FILE *f, const char *suite, const struct report_summary *s, int n, const char *const *sets, int nsets);
/* The JUnit classname of a scenario file, as above, into buf. */
void report_junit_class(char *buf, size_t n, const char *file);

/* One row of `locksim matrix`: one algorithm's run of the file's faults. */
struct report_matrix_row {
    const struct lock_algo *algo; /* borrowed: the registry's */
    struct report_summary sum;
    char dropped[256]; /* --set keys this algorithm does not use */
};
/* The matrix as a text table (file, title, seed, resource, a row per
 * algorithm, a replay line repeating sets), or as one JSON object of rows. */
void report_matrix_text(FILE *f, const struct report_matrix_row *rows, int n, const char *file,
                        const struct scenario *s, const char *const *sets, int nsets);
void report_matrix_json(FILE *f, const struct report_matrix_row *rows, int n, const char *file,
                        const struct scenario *s);

/* check's text report: each file's failures and its line (ok, FAIL, n/a,
 * TRUNCATED; quiet leaves out the passing ones), then the summary line with
 * the golden traces matched and written. Runs with rc set are counted but
 * not described (the front end said why on stderr). */
void report_check_text(FILE *f, const struct report_summary *sum, int n, int quiet, int gold_same, int gold_written);

/* batch's table: a line per scenario and algorithm over its seeds. */
struct report_group {
    size_t runs, passed, skipped, na; /* na: passed with expectations not applicable */
    long long verdicts[3];            /* SAFE, UNSAFE, STUCK */
    char algo_ran[48];                /* the algorithm of its first run that ran */
    char first_failure[800];
    char first_skip[700];
};
/* Count one finished run into g (zeroed for a new group). */
void report_group_add(struct report_group *g, const struct report_summary *s);
/* g's line: file, algo (NULL: the one its runs ran) and seeds as shown. */
void report_group_write(FILE *f, const struct report_group *g, const char *file, const char *algo, const char *seeds);

#endif
