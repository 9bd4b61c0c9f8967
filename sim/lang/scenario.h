/* The scenario: plain data produced by the parser (or by code, in tests and
 * benchmarks) and consumed by engine_new(). Nothing here drives the engine.
 * Defaults come from one function, scenario_init(). */
#ifndef LOCKSIM_SCENARIO_H
#define LOCKSIM_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#include "metric.h" /* enum scn_metric: the rows of the metric table */
#include "vtime.h"

/* Limits, enforced by the parser and by engine_new() with a clear message. */
#define SCN_MAX_CLIENTS 200000                             /* clients, including those made by `clients N` */
#define SCN_MAX_SERVERS 15                                 /* lock servers */
#define SCN_MAX_PROGRAMS 64                                /* distinct client programs */
#define SCN_MAX_STEPS 32                                   /* steps in one client program */
#define SCN_MAX_FAULTS 4096                                /* fault lines */
#define SCN_MAX_EXPECTS 64                                 /* expect lines */
#define SCN_MAX_EXPECT_CLIENTS 16                          /* distinct clients that expect lines name */
#define SCN_MAX_OPTS 32                                    /* key=value options on the lock line */
#define SCN_MAX_GROUP 32                                   /* nodes named in one partition group */
#define SCN_MAX_LINKS 256                                  /* per-link overrides */
#define SCN_MAX_CLOCKS (SCN_MAX_SERVERS + 64)              /* header `clock` lines */
#define SCN_NAME_MAX 16                                    /* node names, including the NUL */
#define SCN_TEXT_MAX 160                                   /* title and description */
#define SCN_OPT_MAX 48                                     /* option keys and values, including the NUL */
#define SCN_MAX_PARAMS 64                                  /* param lines */
#define SCN_WRITE_TRIES_MAX 100                            /* `write tries=N`: attempts in all */
#define SCN_WRITE_BACKOFF_DEFAULT_NS (100 * SIM_NS_PER_MS) /* `write tries=N` without backoff= */

/* A place in the scenario text, for error messages (1-based; 0 = synthetic). */
struct scn_pos {
    int line;
    int col;
};

/* A key=value option kept as text until the lock algorithm reads it. */
struct scn_opt {
    char key[SCN_OPT_MAX];
    char val[SCN_OPT_MAX];
    struct scn_pos pos; /* of the key, for "unknown option" errors */
};

/* Named points of a client program where a fault can be attached. */
enum scn_point {
    SCN_POINT_NONE = 0,
    SCN_POINT_DURING_ACQUIRE, /* request sent, replies in flight */
    SCN_POINT_AFTER_ACQUIRE,  /* the client has just learnt it holds the lock */
    SCN_POINT_BEFORE_READ,
    SCN_POINT_BETWEEN_READ_AND_WRITE, /* read reply received, write not yet sent */
    SCN_POINT_BEFORE_WRITE,           /* just before the write is sent */
    SCN_POINT_AFTER_WRITE,            /* write acknowledged */
    SCN_POINT_BEFORE_RELEASE,
    SCN_POINT_AFTER_RELEASE,
    SCN_POINT_COUNT
};

enum scn_step_kind {
    SCN_STEP_ACQUIRE, /* acquire the lock (with a retry policy) */
    SCN_STEP_READ,    /* read the protected resource */
    SCN_STEP_WRITE,   /* write what was read minus one (reserve one unit), or,
                         with set=V, the value V without reading (absolute) */
    SCN_STEP_WORK,    /* compute for a duration (inside or outside the lock) */
    SCN_STEP_RELEASE, /* release the lock */
    SCN_STEP_COUNT
};

struct scn_step {
    enum scn_step_kind kind;
    sim_ns dur_ns;     /* WORK: how long, by the client's monotonic clock */
    sim_ns retry_ns;   /* ACQUIRE: wait between attempts (0 = scenario default) */
    sim_ns jitter_ns;  /* ACQUIRE: extra random wait in [0, jitter] per retry */
    int tries;         /* ACQUIRE: attempts before giving up; 0 = unlimited.
                           WRITE: attempts in all of a compare-and-set loop; 0 or 1 =
                           no retry (then retry_ns is its first back-off, doubling) */
    sim_ns timeout_ns; /* ACQUIRE: give up after this long; 0 = never */
    int absolute;      /* WRITE: `set=V`, an absolute write of set_value: no read,
                          and writing it again changes nothing (idempotent) */
    int64_t set_value; /* WRITE with absolute: the value written */
    struct scn_pos pos;
};

struct scn_program {
    struct scn_step steps[SCN_MAX_STEPS];
    int nsteps;
};

struct scn_client {
    char name[SCN_NAME_MAX];
    sim_ns start_ns; /* true time at which the program starts */
    int program;     /* index into scenario.programs */
    int repeat;      /* times the program runs; 0 = until the run ends */
    sim_ns think_ns; /* pause between repetitions, by the client's clock */
    struct scn_pos pos;
    int ignores_loss; /* checks-loss=no: the program is never told that the lock
                          was lost (lock_lost) and writes on; 0 = it checks */
};

/* A network latency: fixed when min == max, else uniform in [min, max]
 * drawn from the engine's PRNG. */
struct scn_latency {
    sim_ns min_ns;
    sim_ns max_ns;
};

struct scn_link {
    char from[SCN_NAME_MAX]; /* node name or "*" */
    char to[SCN_NAME_MAX];   /* node name or "*" */
    struct scn_latency lat;
    uint32_t loss_ppm; /* loss probability in parts per million */
    struct scn_pos pos;
};

enum scn_clock_which { SCN_CLOCK_WALL = 1, SCN_CLOCK_MONO = 2, SCN_CLOCK_BOTH = 3 };

struct scn_clock_init {
    char node[SCN_NAME_MAX];
    int64_t drift_ppm;     /* rate error, parts per million, both clocks */
    sim_ns wall_offset_ns; /* initial wall-clock offset from true time */
    struct scn_pos pos;
};

enum scn_fault_kind {
    SCN_FAULT_PAUSE,         /* node; dur_ns (0 = until resume) */
    SCN_FAULT_RESUME,        /* node */
    SCN_FAULT_CRASH,         /* node */
    SCN_FAULT_RESTART,       /* node */
    SCN_FAULT_CLOCK_STEP,    /* node; delta_ns; which */
    SCN_FAULT_CLOCK_DRIFT,   /* node; ppm: new rate error from now on */
    SCN_FAULT_CLOCK_SLEW,    /* node; delta_ns spread over dur_ns (wall clock) */
    SCN_FAULT_PARTITION,     /* groups */
    SCN_FAULT_HEAL,          /* all partitions end */
    SCN_FAULT_LINK,          /* link: new latency/loss for from->to from now on */
    SCN_FAULT_PROMOTE,       /* node: an operator promotes this lock server (failover) */
    SCN_FAULT_KILL_REPLICAS, /* node: an operator closes this lock server's replication
                                links (Redis: CLIENT KILL TYPE replica) */
    SCN_FAULT_COUNT
};

struct scn_fault {
    enum scn_fault_kind kind;
    /* When: at a true time, or at the n-th time a client reaches a point. */
    sim_ns at_ns;               /* used when point == SCN_POINT_NONE */
    char trigger[SCN_NAME_MAX]; /* client whose point triggers the fault */
    enum scn_point point;
    int occurrence; /* 1 = first time the point is reached */
    /* What. */
    char node[SCN_NAME_MAX];
    sim_ns dur_ns;
    sim_ns delta_ns;
    int64_t ppm;
    enum scn_clock_which which;
    /* PARTITION: groups of node names; nodes not named stay together in
     * one more implicit group. */
    char groups[4][SCN_MAX_GROUP][SCN_NAME_MAX];
    int group_len[4];
    int ngroups;
    struct scn_link link; /* LINK */
    struct scn_pos pos;
};

enum scn_cmp { SCN_CMP_EQ, SCN_CMP_NE, SCN_CMP_LT, SCN_CMP_LE, SCN_CMP_GT, SCN_CMP_GE };

enum scn_verdict { SCN_VERDICT_SAFE, SCN_VERDICT_UNSAFE, SCN_VERDICT_STUCK };

/* What an expect line states. SCN_EXPECT_METRIC compares a metric of the
 * report (sim/metric.h); the others state what the sources state, about one
 * client or one interval, from facts the checker records for the clients
 * that expect lines name (docs/scenario-format.md, "Expectations"). */
enum scn_expect_kind {
    SCN_EXPECT_METRIC,            /* expect METRIC OP VALUE, expect [no] EVENT */
    SCN_EXPECT_TOKEN,             /* expect B token OP N: token of B's first grant */
    SCN_EXPECT_ACQUIRES_AT,       /* expect B acquires at T: time of B's first grant */
    SCN_EXPECT_DE_SPAN,           /* expect double-entry from T1 to T2: the first double entry */
    SCN_EXPECT_WRITE_ACCEPTED,    /* expect [no] A write accepted: A's writes the resource accepted */
    SCN_EXPECT_WRITE_REJECTED,    /* expect [no] A write rejected */
    SCN_EXPECT_STALE_BY,          /* expect [no] stale-write [accepted] by A */
    SCN_EXPECT_STALE_REJECTED_BY, /* expect [no] stale-write rejected by A */
    SCN_EXPECT_FENCED_OUT         /* expect [no] C fenced-out: C was fenced out (checker.h) */
};

struct scn_expect {
    enum scn_metric metric;
    enum scn_cmp cmp;
    int64_t value; /* count, nanoseconds, token, or enum scn_verdict */
    char text[80]; /* the line as written, for reports */
    struct scn_pos pos;
    enum scn_expect_kind kind; /* SCN_EXPECT_METRIC unless the line names a client or a span */
    char client[SCN_NAME_MAX]; /* the client a per-client kind names, "" otherwise */
    int client_index;          /* its index in scenario.clients (= its node), -1 = none */
    struct scn_pos client_pos; /* where the name is written, for errors */
    sim_ns to_ns;              /* SCN_EXPECT_DE_SPAN: the interval's end */
};
/* A per-client kind: the checker records facts for its client. */
static inline int scn_expect_names_client(const struct scn_expect *x) {
    return x->kind != SCN_EXPECT_METRIC && x->kind != SCN_EXPECT_DE_SPAN;
}

enum scn_purpose { SCN_PURPOSE_CORRECTNESS, SCN_PURPOSE_EFFICIENCY };

/* The kind of a param's declared range, which decides how its bounds and
 * values compare. */
enum scn_range_kind { SCN_RANGE_NONE, SCN_RANGE_DURATION, SCN_RANGE_INT };

/* A `param NAME=VALUE [range=MIN..MAX]` line. Its value is text, put in
 * place of each `$NAME` at parse time and checked there by the code that
 * checks the value it stands for (docs/scenario-format.md). */
struct scn_param {
    char name[SCN_OPT_MAX];
    char def[SCN_OPT_MAX];     /* the default, as written */
    char val[SCN_OPT_MAX];     /* the value in use: the default or a --set override */
    int overridden;            /* 1 when val came from --set */
    enum scn_range_kind range; /* NONE, or how min and max read */
    int64_t min, max;          /* the range's bounds: ns for durations, else units */
    struct scn_pos pos;        /* of NAME */
};

/* The kinds of fault an `explore` line may budget (docs/scenario-format.md,
 * "Exploring"). The explorer (run/explore.h) draws faults of these kinds and
 * writes them as ordinary timed lines; the engine never reads this. */
enum scn_nemesis {
    SCN_NEM_PAUSE,      /* pauses<=N: pause NODE for a length */
    SCN_NEM_CLOCK_STEP, /* clock-steps<=N: step a node's clock by a delta */
    SCN_NEM_LATENCY,    /* latency-spikes<=N: a node's outgoing latency, for a length */
    SCN_NEM_CRASH,      /* crashes<=N: crash a node, restart it after a down time */
    SCN_NEM_COUNT
};

/* Which nodes a budgeted fault may hit (bits), or one named node. */
enum scn_targets { SCN_TARGET_CLIENTS = 1, SCN_TARGET_SERVERS = 2, SCN_TARGET_RESOURCE = 4 };

/* One item of an explore line: `KIND<=N [on WHO] [KEY=VALUE]...`. */
struct scn_budget {
    int max;                     /* at most this many faults of the kind per run; 0 = none */
    unsigned targets;            /* SCN_TARGET_* bits, when node is "" */
    char node[SCN_NAME_MAX];     /* `on NAME`: only this node; "" = by targets */
    sim_ns lo_ns, hi_ns;         /* the size: pause length, step delta (signed), spike
                                latency, crash down time; uniform in [lo, hi] */
    sim_ns len_lo_ns, len_hi_ns; /* latency spikes: how long one lasts */
    sim_ns at_lo_ns, at_hi_ns;   /* when (true time); at_hi_ns 0 = the whole run */
    int points;                  /* 1 = may also fire at a named point of a client's program */
    enum scn_clock_which which;  /* clock steps: which clock */
    struct scn_pos pos;          /* of the kind's word */
};

struct scn_explore {
    int given;                          /* 1 = the scenario has an explore line */
    struct scn_budget k[SCN_NEM_COUNT]; /* indexed by enum scn_nemesis */
    struct scn_pos pos;                 /* of the keyword */
};

struct scenario {
    char file[256]; /* name used in messages */
    char title[SCN_TEXT_MAX];
    char description[SCN_TEXT_MAX];
    enum scn_purpose purpose;
    uint64_t seed;
    sim_ns duration_ns;    /* the run ends at this true time */
    sim_ns stuck_after_ns; /* waiting this long on a dead owner = stuck */
    uint64_t max_events;   /* the run ends after this many events */

    /* Lock. */
    char algo[SCN_OPT_MAX];
    struct scn_pos algo_pos;
    struct scn_opt *opts; /* owned, nopts used of cap_opts (see below) */
    int nopts;
    int cap_opts;
    int nservers; /* 0 = the algorithm's default */

    /* Protected resource. */
    int64_t stock;              /* initial units */
    int fencing;                /* 1 = reject writes with a token below the highest seen */
    sim_ns resource_timeout_ns; /* a client gives up waiting for the resource's
                                       reply after this, by its clock; 0 = never */

    /* Network. */
    struct scn_latency latency; /* default for every link */
    uint32_t loss_ppm;          /* default loss */
    struct scn_link *links;     /* owned, nlinks used of cap_links */
    int nlinks;
    int cap_links;

    /* Clients and their programs. */
    struct scn_program *programs; /* owned, nprograms used of cap_programs */
    int nprograms;
    int cap_programs;
    struct scn_client *clients; /* owned, nclients used of cap_clients */
    int nclients;
    int cap_clients;
    sim_ns retry_ns; /* default acquire retry interval */

    struct scn_clock_init *clocks; /* owned, nclocks used of cap_clocks */
    int nclocks;
    int cap_clocks;

    struct scn_fault *faults; /* owned, nfaults used of cap_faults */
    int nfaults;
    int cap_faults;

    struct scn_expect *expects; /* owned, nexpects used of cap_expects */
    int nexpects;
    int cap_expects;

    /* Params, and what scenario_set() needs to re-parse with an override. */
    struct scn_param *params; /* owned, nparams used of cap_params */
    int nparams;
    int cap_params;
    char *source; /* owned: the text parsed, kept only when it
                                       declares params; NULL otherwise */
    size_t source_len;
    char *sets; /* owned: the --set arguments other than params
                                       applied since the parse, each NUL-terminated,
                                       replayed after a re-parse; NULL when none */
    size_t sets_len;

    struct scn_explore explore; /* the explore line's fault budget (plain data) */
    int fencing_stated;         /* 1 when a resource line (or --set) gave fencing=, so
                                       an algorithm's own fencing rule can honour fencing=off */
    int check_reads;            /* resource check=reads+writes: with fencing on, a read's
                                       token is checked too and raises the highest seen
                                       (Chubby's sequencer, checked on every operation) */
    int guard_owner;            /* resource guard=owner: the resource lives in the lock
                                       service; a write is applied only while the service
                                       records its writer, with its token, as the holder */
};
/* Every array above is heap-allocated, grown on demand by the scenario_add_*
 * functions (never beyond its SCN_MAX_* limit), read as s->arr[i] for
 * i < s->narr, and freed by scenario_close(). A scenario is therefore small
 * (under 1 KiB plus what it uses); copy one with scenario_copy(), never by
 * assignment, which would share the arrays. */

/* Error from parsing or building: where, and a full sentence. */
struct scn_error {
    char file[256];
    struct scn_pos pos;
    char msg[256];
};

/* Fill *s with every default (one place for defaults). */
void scenario_init(struct scenario *s);
/* Copy src into dst[size] (size >= 1), cut to fit, always NUL-terminated:
 * snprintf's "%s" without its format parsing (a run copies a few names). */
void scn_copy_str(char *dst, size_t size, const char *src);
/* Free what scenario_init/parse allocated; s may be reused after init. */
void scenario_close(struct scenario *s);
/* Deep copy: dst must not be initialised; returns 0 or -1 on OOM (dst is
 * then closed). Arrays are copied at their used length, and the kept
 * source text and --set list too. */
int scenario_copy(struct scenario *dst, const struct scenario *src);

/* Parse scenario text of len bytes (the text is borrowed for the call).
 * fname is used in messages. Returns 0, LSIM_EPARSE (a malformed scenario:
 * *err says where, file:line:col, and what was expected) or LSIM_ENOMEM
 * (error.h). On error *s is left initialised but partial, and must still
 * be closed. Reading files is not sim/'s job: see run/scenario_file.h. */
int scenario_parse(struct scenario *s, const char *fname, const char *text, size_t len, struct scn_error *err);

/* Apply a --set KEY=VALUE override (e.g. "ttl=10s", "lock.ttl=10s",
 * "stock=2", "fencing=on", "latency=5ms", "seed=7", "duration=60s").
 * KEY is a header key (title, description, purpose, seed, duration,
 * stuck-after, max-events, retry, algo, servers, stock, fencing, latency,
 * loss), or LINE.KEY for a key of the lock, resource or network line; its
 * value is checked by the same code as in a file. Other keys that are
 * option names become lock options, which the algorithm validates when the
 * engine is built. KEY may name a param (`param NAME=VALUE` lines): values
 * are put in place of $NAME at parse time, so the scenario keeps its source
 * text (s->source) and this re-parses it with every param override so far,
 * then re-applies the other --set arguments (s->sets) in order, and
 * replaces *s only when all of that succeeds. Returns 0, or with *err (file "--set", line 1, col in
 * kv): LSIM_EUSAGE (not KEY=VALUE), LSIM_EUNKNOWN_OPTION (the message lists
 * the keys it could be, likely typos first), LSIM_EBAD_VALUE, LSIM_ENOMEM.
 * A failed --set changes nothing. */
int scenario_set(struct scenario *s, const char *kv, struct scn_error *err);

/* Write s as scenario text (sim/lang/scenario_print.c): every field the parser
 * reads, so that scenario_parse() of the text gives back s, the same runs
 * and the same trace hashes. Params are written as the values they gave
 * (the text has no param lines); timed faults must be in time order, as
 * the parser keeps them. *out is heap-allocated and NUL-terminated, *len
 * bytes; the caller frees it with free(). Returns 0 or LSIM_ENOMEM. */
int scenario_print(const struct scenario *s, char **out, size_t *len);

/* Helpers shared with lock algorithms for option values. Return 0 or -1. */
int scn_parse_duration(const char *text, sim_ns *out); /* "30s", "500ms", "1m" */
int scn_parse_int(const char *text, int64_t *out);
int scn_parse_bool(const char *text, int *out); /* on/off, yes/no, true/false */
/* A duration as the shortest text the parser reads back exactly: 5s, 1.5s,
 * 500ms, 250us, 7ns (negative with a '-'). The one duration printer of the
 * scenario language: explore's written faults, the window's clicked faults. */
void scn_format_duration(char *buf, size_t n, sim_ns v);
/* err as every command prints it: "FILE:LINE:COL: message", or the message
 * alone when it has no place (it names the file itself). */
void scn_error_place(char *buf, size_t n, const struct scn_error *err);
/* Find an option; NULL when absent. */
const struct scn_opt *scenario_opt(const struct scenario *s, const char *key);
/* Find a param by name; NULL when absent. */
const struct scn_param *scenario_param(const struct scenario *s, const char *name);

/* Add one element, growing its array: a client (repeat = 1), a fault
 * (occurrence = 1, which = wall), or a zeroed program, lock option, link,
 * clock line or expect line. Return the new element, owned by s and valid
 * until the next add to the same array or scenario_close(); NULL on OOM or
 * when the array already holds its SCN_MAX_* limit (callers that report
 * limits check the count first). */
struct scn_client *scenario_add_client(struct scenario *s);
struct scn_fault *scenario_add_fault(struct scenario *s);
struct scn_program *scenario_add_program(struct scenario *s);
struct scn_opt *scenario_add_opt(struct scenario *s);
struct scn_link *scenario_add_link(struct scenario *s);
struct scn_clock_init *scenario_add_clock(struct scenario *s);
struct scn_expect *scenario_add_expect(struct scenario *s);
struct scn_param *scenario_add_param(struct scenario *s);

const char *scn_point_name(enum scn_point p);
const char *scn_metric_name(enum scn_metric m);
const char *scn_verdict_name(enum scn_verdict v);
const char *scn_step_name(enum scn_step_kind k);
const char *scn_fault_name(enum scn_fault_kind k);
/* The word of an explore item: pauses, clock-steps, latency-spikes, crashes. */
const char *scn_nemesis_name(enum scn_nemesis k);

#endif
