/* Shared pieces of the locksim command line: exit statuses come from the
 * error table (sim/error.h) through cli_exit(); option parsing helpers;
 * terminal facts (colour, width). Each command lives in its own cmd_*.c. */
#ifndef LOCKSIM_CLI_H
#define LOCKSIM_CLI_H

#include <getopt.h>
#include <signal.h>
#include <stdio.h>

#include "checker.h"
#include "error.h"
#include "output.h"
#include "report.h"
#include "run.h"
#include "scene.h"

#define LOCKSIM_VERSION "0.2.0"
#define CLI_MAX_SETS 64

extern const char *const cli_prog;

/* Print "locksim: MESSAGE" and a hint to stderr; return exit status 64. */
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
int cli_usage(const char *fmt, ...);
/* Print "locksim: MESSAGE" (or "MESSAGE" when it starts with a file place)
 * to stderr and return the exit status of code. */
int cli_fail(int code, const char *msg);
/* The exit status of an LSIM code (the one table). */
static inline int cli_exit(int code) { return lsim_exit_status(code); }

/* Options shared by the commands that run scenarios. */
/* A run's wall-clock limit when --time-limit does not set one: no catalog
 * run comes near it (the longest takes well under a second); it stops an
 * algorithm plugin whose callback never returns. */
#define CLI_TIME_LIMIT_S 600
struct cli_runopts {
    const char *seed;
    const char *sets[CLI_MAX_SETS];
    int nsets;
    const char *algo;
    long time_limit_s; /* --time-limit: 0 = CLI_TIME_LIMIT_S, -1 = none */
};
/* Arm the wall-clock limit of one run (o may be NULL: the default), and
 * disarm it when the run is over. When it expires the process ends: with a
 * message and exit 70, or (die: a batch worker, a matrix probe) killed by
 * SIGALRM, which fails that run alone. */
void cli_time_limit_arm(const struct cli_runopts *o, int die);
void cli_time_limit_disarm(void);
/* cli_time_limit_arm in two halves, for a process that makes many runs (a
 * batch worker): what an expiry does, set once; the alarm, set per run. */
void cli_time_limit_catch(int die);
void cli_time_limit_start(const struct cli_runopts *o);
/* Catch the stop signals (pool.h: SIGINT, SIGTERM, SIGHUP) until
 * cli_stop_release: instead of ending the process they set the flag
 * returned (cleared here), which a pool or the explorer polls. */
volatile sig_atomic_t *cli_stop_catch(void);
void cli_stop_release(void);
/* One command's options read with getopt_long: the command's own table
 * (struct option[], ended by a zero entry; val codes from CLI_OPT_OWN up,
 * or a letter, which is the short option too: {"output", ..., 'o'} is -o)
 * joined to the shared one declared once in cli.c (--seed --set --algo
 * --time-limit when ro is not NULL, -h/--help, --no-color). A value may
 * begin with '-' (`--set -x`, `--out -`); `-` alone is an argument. */
#define CLI_OPT_OWN 0x200
enum { CLI_OPT_ARG = 1, CLI_OPT_END = -1, CLI_OPT_STOP = -2 };
#define CLI_MAX_OPTIONS 48
struct cli_getopt {
    const char *cmd, *usage;
    struct cli_runopts *ro; /* NULL: the command runs no scenario */
    int no_color;           /* --no-color was given */
    const char *arg;        /* the value of the option returned, or the argument */
    int status;             /* after CLI_OPT_STOP: the exit status (-1 after --help) */
    /* private */
    int argc;
    char **argv;
    struct option table[CLI_MAX_OPTIONS];
    char shorts[CLI_MAX_OPTIONS * 2 + 4]; /* "-:h" and the table's one-letter vals (-o) */
};
/* Start reading argv (the command's arguments, without its name). 0, or
 * the exit status (out of memory). */
int cli_getopt_init(struct cli_getopt *g, const char *cmd, const char *usage, struct cli_runopts *ro,
                    const struct option *own, int argc, char **argv);
/* The same for a command whose options come in several tables (its own
 * and fragments it shares with other commands, fanout.h): tables is a
 * NULL-ended list of them (may be NULL: none), the list the command
 * exposes as cli_tables_CMD for cli_args_normalize. */
int cli_getopt_init_tables(struct cli_getopt *g, const char *cmd, const char *usage, struct cli_runopts *ro,
                           const struct option *const *tables, int argc, char **argv);
/* The option named by the len bytes of name (no leading --) in a command
 * with these tables (NULL-ended, may be NULL) and the shared options (the
 * run options counted in): the entry of that exact name, else the one
 * option it abbreviates, as getopt_long takes abbreviations; NULL when
 * none or several. */
const struct option *cli_option_find(const struct option *const *tables, const char *name, size_t len);

/* Each command's option tables (NULL-ended), beside each table in its
 * cmd_*.c: the one list the command line's conventions (cli_args_normalize)
 * ask what an option is. */
extern const struct option *const cli_tables_run[],
        *const cli_tables_check[],
                *const cli_tables_matrix[],
                        *const cli_tables_render[],
                                *const cli_tables_view[],
                                        *const cli_tables_explore[],
                                                *const cli_tables_real[],
                                                        *const cli_tables_check_trace[],
                                                                *const cli_tables_diff[],
                                                                        *const cli_tables_batch[],
                                                                                *const cli_tables_sweep[],
                                                                                        *const cli_tables_merge[];
/* The commands main dispatches: name, entry point, help text, option tables
 * (NULL: the shared ones only). Ended by a zero entry. */
struct cli_command {
    const char *name;
    int (*fn)(int, char **);
    const char *usage;
    const struct option *const *tables;
};
extern const struct cli_command cli_commands[];
/* The next one, in command-line order: an own option's val (g->arg its
 * value), CLI_OPT_ARG (g->arg the argument), CLI_OPT_END, or CLI_OPT_STOP
 * after --help or a usage error (`locksim: --jobs needs a value`, 'unknown
 * option' naming it), with g->status. Shared options are taken here. */
int cli_getopt_next(struct cli_getopt *g);
void cli_getopt_close(struct cli_getopt *g);
/* --width/--height in pixels, a strict integer in [lo, hi]: 0, or exit
 * status 64 after a usage error naming opt. */
int cli_parse_pixels(const char *opt, const char *v, long lo, long hi, long *out);
/* A strict integer in [lo, hi]: "40.5", "40x" and "" are refused. */
int cli_parse_int(const char *s, long lo, long hi, long *out);

/* The output formats command cmd offers (a mask of REPORT_FMT_BIT, from the
 * one table of commands and formats in cli.c; 0 for a command that has no
 * --format). */
unsigned cli_formats(const char *cmd);
/* --format NAME for command cmd: 0 with *out, or the usage exit status after
 * saying what cmd takes. */
int cli_format(const char *cmd, const char *name, enum report_format *out);
/* `locksim help formats`: every format, its alias, what it is, who offers it. */
int cli_print_formats(void);

/* -1 after -q/--quiet (no progress, no summary on stderr; errors still
 * print), 1 after -v/--verbose (every failed run with its replay command),
 * else 0. Set by cli_args_normalize. */
extern int cli_verbosity;
/* The conventions every command shares, applied to its arguments before its
 * own options are read (cli/args.c): a long option's unique abbreviation
 * written out, `--name=value` for `--name value` when cmd's tables say the
 * option takes a value (and refused when it takes none),
 * -h/--help anywhere (prints usage: *status = 0), -q/-v, and `--` ending
 * the options. Returns 0 with *argc and *argv replaced, or -1 with *status the
 * exit status. */
int cli_args_normalize(const struct cli_command *cmd, int *argc, char ***argv, int *status);
/* Colour on standard output: not with --no-color, NO_COLOR set, TERM=dumb,
 * or a standard output that is not a terminal. */
int cli_want_color(int no_color_flag);
/* COLUMNS if set, else the terminal's width, else 100. */
int cli_term_width(void);
/* The folder of the catalog for `demo` and `list`: ./scenarios when it
 * exists, else the one beside the binary (BINDIR/../scenarios). */
const char *cli_scenario_dir(char *buf, size_t n);
/* Every *.lsim below dir, sorted; *out (free each and the array) and *n.
 * Returns 0 or an LSIM code with err. */
int cli_find_scenarios(const char *dir, char ***out, int *n, char *err, size_t errlen);

/* Scenario files named on a command line, folders expanded (sorted *.lsim
 * below them). Strings owned; cli_paths_free frees them. */
struct cli_paths {
    char **v;
    int n, cap;
};
/* Add arg (a file, "-", or a folder). Returns 0, or an LSIM code with err
 * (a folder with no scenario is LSIM_ENOINPUT). */
int cli_paths_add(struct cli_paths *l, const char *arg, char *err, size_t errlen);
void cli_paths_free(struct cli_paths *l);
/* The algorithms named by --algos: "all" (the built-in ones), or
 * NAME,NAME,... (paths to plugins allowed), at most max. names (may be NULL)
 * receives each name as written, strdup'd (the caller frees them). Returns
 * 0, or the exit status after printing the error. */
int cli_parse_algos(const char *algos, const struct lock_algo **list, char **names, int max, int *n);

/* The seeds of --seeds (batch, sweep): a list of items in the order
 * written, each one seed N or a range A..B (A <= B): "1..3,7,10..12". No
 * seed is listed twice. At most CLI_MAX_SEED_ITEMS items (a shard file's
 * "seeds" too: its reader refuses more). */
#define CLI_MAX_SEED_ITEMS 1000
struct cli_seeds {
    int n;                                     /* items */
    unsigned long long count;                  /* seeds in all, the sum of hi - lo + 1 */
    unsigned long long lo[CLI_MAX_SEED_ITEMS]; /* item k: lo[k]..hi[k] */
    unsigned long long hi[CLI_MAX_SEED_ITEMS];
};
/* --seeds TEXT, each seed in 0..2^31-1, into *out. Returns 0, or -1 with
 * err saying what is wrong ("seed 5 is listed twice"). */
int cli_parse_seeds(const char *text, struct cli_seeds *out, char *err, size_t errlen);
/* The items lo[0..n) and hi[0..n) of *s checked (lo <= hi, no seed twice)
 * and s->count set (ULLONG_MAX when there are more): 0, or -1 with err. */
int cli_seeds_check(struct cli_seeds *s, char *err, size_t errlen);
/* The k-th seed of the list (k < s->count). */
unsigned long long cli_seeds_at(const struct cli_seeds *s, unsigned long long k);
/* The list as a user reads it: "A..B" for one item (as `--seeds A..B`),
 * else "1..3,7,10..12"; cut with "..." when longer than n. */
void cli_seeds_format(char *buf, size_t n, const struct cli_seeds *s);
/* The verdict banner of a finished run r (borrowed while cb is used): title,
 * algorithm, verdict, seed and the replay command of c. */
struct cli_banner {
    char seed[32];
    char replay[1024];
    struct scene_banner b; /* points into this struct and into r */
};
/* 0, or LSIM_ENOMEM when the replay line could not be written. */
int cli_banner_fill(struct cli_banner *cb, const struct run_result *r, const struct report_ctx *c);
/* The picture format of an output: --format png|svg when given (format not
 * NULL), else the file's extension (.png, .svg; "-" = PNG). *svg = 1 for
 * SVG. Returns 0, or exit status 64 after a usage error naming the formats. */
int cli_picture_format(const char *path, const char *format, int *svg);
/* The same in two steps: open the output (refusing any of the ninputs
 * inputs as one) before a run, then draw and commit (or abort on error).
 * Return as above. */
int cli_picture_open(struct out_file *out, const char *path, const char *const *inputs, int ninputs);
int cli_picture_finish(struct out_file *out, int svg, const struct trace *const *trs, size_t n,
                       const struct scene_banner *banners, const struct scene_view *v);
/* Write n stacked panels (trs and banners borrowed) in view v to path
 * through out_open/out_commit (input is refused as an output; may be NULL).
 * Returns 0 or the exit status after printing the error. */
int cli_write_picture(const char *path, int svg, const char *input, const struct trace *const *trs, size_t n,
                      const struct scene_banner *banners, const struct scene_view *v);
/* A recorded trace (locksim real --trace, or any trace file) as a panel
 * under the simulated run, on its time axis (cli/recorded.c). */
#define CLI_MAX_RECORDED 7 /* --trace files, each a panel under the simulated one */
struct cli_recorded {
    struct trace src;          /* as read */
    struct trace dst;          /* as the checker saw it again: the panel drawn */
    struct checker_report rep; /* dst's verdict */
    char title[300], note[420];
    struct scene_banner b; /* points into this struct */
    int loaded;            /* src and dst to be closed */
};
/* Read the trace at path into rc and judge it afresh (run_recheck) as a
 * run of s would be judged (its purpose and stuck-after; s NULL: the
 * defaults, as diff judges); its banner filled. Returns 0, or the exit
 * status after printing why ("PATH:N: ..." for a malformed line). Close rc
 * with cli_recorded_close either way. */
int cli_recorded_load(struct cli_recorded *rc, const char *path, const struct scenario *s);
/* rc->src (a trace filled by the caller; rc->loaded set) judged afresh
 * into rc->dst and rc->rep as a run of s (NULL: the defaults), and its
 * banner filled: "Real run: TITLE", and what its srv-note at t = 0 says it
 * was recorded against, at what scale, with source ("the trace
 * rec.jsonl", "run 2 of 5"; copied). A recording's event times are
 * rounded to the microsecond first (rc->src changed). 0 or LSIM_ENOMEM. */
int cli_recorded_judge(struct cli_recorded *rc, const struct scenario *s, const char *source);
void cli_recorded_close(struct cli_recorded *rc);
/* 0 when rec (read from rec_file) has the nodes of sim (scenario scn_file)
 * in the same order; else LSIM_EPARSE with err naming the first difference. */
int cli_recorded_match(const struct trace *sim, const char *scn_file, const struct trace *rec, const char *rec_file,
                       char *err, size_t errlen);
/* --from/--to: a duration ("31.5s"); 0 or exit status 64 after a usage error. */
int cli_parse_window(const char *opt, const char *text, sim_ns *out);

int cmd_run(int argc, char **argv);
int cmd_render(int argc, char **argv);
int cmd_view(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_matrix(int argc, char **argv);
int cmd_hash(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_batch(int argc, char **argv);
int cmd_check_trace(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_explore(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_real(int argc, char **argv);

extern const char cli_usage_main[], cli_usage_run[], cli_usage_check[], cli_usage_matrix[], cli_usage_hash[],
        cli_usage_demo[], cli_usage_batch[], cli_usage_check_trace[], cli_usage_diff[], cli_usage_sweep[],
        cli_usage_render[], cli_usage_view[], cli_usage_explore[], cli_usage_merge[], cli_usage_real[];

#endif
