/* The metric table: every figure of the checker's report, declared once.
 * Each row gives the enum name, the field of struct checker_report, the word
 * an `expect` line uses, its shorthand (`expect no NAME`, or NULL), the key
 * in JSON and the CSV column (one spelling: the same string), the unit and a
 * one-line description. The expect parser, checker_metric(), every report
 * format (text, JSON, CSV, TAP, JUnit) and docs/metrics.md come from it (a
 * test checks the doc against it). To add a metric: a field in
 * struct checker_report (sim/checker.h), a row here, and the checker code
 * that fills it. */
#ifndef LOCKSIM_METRIC_H
#define LOCKSIM_METRIC_H

#include <stdint.h>

enum metric_unit {
    METRIC_UNIT_VERDICT, /* enum scn_verdict, shown as SAFE / UNSAFE / STUCK */
    METRIC_UNIT_COUNT,   /* a number of things */
    METRIC_UNIT_NS,      /* a duration in true-time nanoseconds, shown as 1.5s */
    METRIC_UNIT_UNITS    /* units of the protected resource's stock */
};

/* XX(ENUM, field, expect word, shorthand, json/csv key, unit, description) */
/* clang-format off */
#define METRIC_MAP(XX)                                                                            \
    XX(VERDICT, verdict, "verdict", NULL, "verdict", VERDICT,                                     \
       "headline verdict: SAFE, UNSAFE (mutual exclusion broken with harm) or STUCK")             \
    XX(DOUBLE_ENTRIES, double_entries, "double-entries", "double-entry", "double_entries", COUNT, \
       "intervals of true time with two or more clients in the critical section")                 \
    XX(DOUBLE_ENTRY_NS, double_entry_ns, "double-entry-time", NULL, "double_entry_ns", NS,        \
       "total true time with two or more clients in the critical section")                        \
    XX(STALE_ACCEPTED, stale_accepted, "stale-writes-accepted", "stale-write",                    \
       "stale_writes_accepted", COUNT,                                                            \
       "writes by a client whose grant had been superseded, accepted by the resource (damage); "  \
       "at a resource with a rule, only those landing after an operation of a newer grant")       \
    XX(STALE_REJECTED, stale_rejected, "stale-writes-rejected", NULL, "stale_writes_rejected",    \
       COUNT, "writes by a client whose grant had been superseded, rejected (the save)")          \
    XX(LATE_WRITES, late_writes, "late-writes", "late-write", "late_writes", COUNT,              \
       "writes under a superseded grant that a fencing resource accepted before any operation "   \
       "of a newer grant: in grant order, no harm")                                               \
    XX(LOST_UPDATES, lost_updates, "lost-updates", "lost-update", "lost_updates", UNITS,          \
       "units sold beyond what the stock shows: sold - (initial - final stock), when positive")   \
    XX(WRONG_RELEASES, wrong_releases, "wrong-releases", "wrong-release", "wrong_releases", COUNT,\
       "releases that removed another client's grant")                                            \
    XX(STUCK, stuck, "stuck", "stuck", "stuck", COUNT,                                            \
       "clients waiting past stuck-after on a lock held by a crashed owner")                      \
    XX(FENCED_OUT, fenced_out, "fenced-out", "fenced-out", "fenced_out", COUNT,                   \
       "clients fenced out: every write under a grant not yet superseded was refused")            \
    XX(ACQUIRES, acquires, "acquires", NULL, "acquires", COUNT, "successful acquisitions")         \
    XX(FAILED_ACQUIRES, failed_acquires, "failed-acquires", "failed-acquire", "failed_acquires",  \
       COUNT, "acquisitions that gave up (tries or timeout exhausted)")                           \
    XX(STARVED, starved, "starved-clients", "starved", "starved_clients", COUNT,                 \
       "clients that began to acquire the lock and never got it (progress, not safety)")          \
    XX(UNAVAILABLE_NS, unavailable_ns, "unavailable-time", NULL, "unavailable_ns", NS,             \
       "true time in which a client was acquiring and no client was in the critical section "  \
       "(acquisition round trips included)")     \
    XX(REFUSED_ATTEMPTS, denied_attempts, "refused-attempts", NULL, "refused_attempts", COUNT,    \
       "single acquisition attempts the lock service refused")                                    \
    XX(WRITES_ACCEPTED, writes_accepted, "writes-accepted", NULL, "writes_accepted", COUNT,       \
       "writes the resource accepted")                                                            \
    XX(WRITES_REJECTED, writes_rejected, "writes-rejected", NULL, "writes_rejected", COUNT,       \
       "writes the resource rejected (stale token, no token, condition failed, duplicate)")       \
    XX(REPEATED_WRITES, repeated_writes, "repeated-writes", NULL, "repeated_writes", COUNT,       \
       "absolute writes (write set=V) of the value the resource already held: done twice, no harm") \
    XX(DUPLICATED_WORK, duplicated_work, "duplicated-work", NULL, "duplicated_work", COUNT,       \
       "algorithms that take no lock: writes their rule refused (work done twice, once for nothing)") \
    XX(NON_SERIAL_WRITES, non_serial_writes, "non-serial-writes", "non-serial-write",             \
       "non_serial_writes", COUNT,                                                                \
       "algorithms that take no lock: accepted writes computed from a read another write had overtaken") \
    XX(INITIAL_STOCK, initial_stock, "initial-stock", NULL, "initial_stock", UNITS,               \
       "units in stock when the run began")                                                       \
    XX(FINAL_STOCK, final_stock, "final-stock", NULL, "final_stock", UNITS,                       \
       "units in stock when the run ended")                                                       \
    XX(ACQUIRE_P50_NS, acquire_p50_ns, "acquire-p50", NULL, "acquire_p50_ns", NS,                 \
       "median acquisition latency, from the start of an acquisition to the grant")               \
    XX(ACQUIRE_P99_NS, acquire_p99_ns, "acquire-p99", NULL, "acquire_p99_ns", NS,                 \
       "99th-percentile acquisition latency")                                                     \
    XX(ACQUIRE_MAX_NS, acquire_max_ns, "acquire-max", NULL, "acquire_max_ns", NS,                 \
       "longest acquisition latency")                                                             \
    XX(END_NS, end_ns, "end-time", NULL, "end_ns", NS, "true time at which the run ended")
/* clang-format on */

/* Metrics an `expect` line can compare (the rows of METRIC_MAP, in order). */
enum scn_metric {
#define METRIC_ENUM_(e, field, word, shorthand, key, unit, desc) SCN_M_##e,
    METRIC_MAP(METRIC_ENUM_)
#undef METRIC_ENUM_
            SCN_M_COUNT
};

struct metric_info {
    const char *word;      /* in `expect WORD OP VALUE` */
    const char *shorthand; /* in `expect [no] WORD`, or NULL */
    const char *key;       /* JSON key and CSV column */
    enum metric_unit unit;
    const char *desc; /* one line, for docs and --help */
};

/* The row of metric m (m < SCN_M_COUNT). */
const struct metric_info *metric_info(enum scn_metric m);
/* The metric whose expect word or shorthand is w; -1 when none.
 * *is_shorthand (may be NULL) says which matched. */
int metric_find(const char *w, int *is_shorthand);
/* (render/fmt.h's metric_format writes a value in its unit for people.) */

#endif
