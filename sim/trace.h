/* The trace: the append-only log of what happened in a run, in true time.
 * It is the one door between sim/ and everything that shows results
 * (checker reports, terminal and image timelines, JSON Lines files).
 * A trace recorded from real lock services can use the same events. */
#ifndef LOCKSIM_TRACE_H
#define LOCKSIM_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lock.h" /* LOCK_WRITE_RESULT_MAP, the outcomes of a write */
#include "vtime.h"

/* 2: a link event carries its loss (grant = parts per million). Version 1
 * files are still read (their links say no loss).
 * 3: resource-init carries the lock service's grant quorum (grant) and
 * b = 3 (TRACE_RULE_NO_LOCK) for an algorithm that takes no lock. Versions
 * 1 and 2 are still read (quorum 1; no algorithm known to take no lock).
 * 4: the checker's late-write finding (a write under a superseded grant
 * that a resource with a rule took before any operation of a newer grant,
 * no longer a stale-write). Older files still read (they have none). */
#define TRACE_FORMAT_VERSION 5
#define TRACE_NO_NODE (-1)

/* Event kinds, declared once: XX(NAME, word, finding, checked) gives
 * enum trace_kind (TRACE_NAME, numbered in this order: the numbers are in
 * every trace hash, so a new kind goes last), the word of the JSON Lines
 * files (trace_kind_name), 1 for the checker's findings, which it appends
 * itself (trace_kind_is_finding), and 1 for the kinds checker_observe acts
 * on (CHECKER_KINDS in checker.h). The short form of each kind's fields is
 * after its row (node = where it happened); docs/trace-format.md has them in
 * full and fuzz/trace.dict has every word (tests/test_trace.c checks both).
 * The switches on a kind in sim/ and render/ name every kind and have no
 * default, so -Wswitch lists the places a new kind must be handled. */
/* clang-format off */
#define TRACE_KIND_MAP(XX)                                                                                   \
    XX(RUN_START, "run-start", 0, 0)                    /* a = seed (as int64), b = duration_ns */           \
    XX(RUN_END, "run-end", 0, 0)                        /* a = events processed */                           \
    /* Process and clock faults (node = the node). */                                                        \
    XX(PAUSE, "pause", 0, 0)                            /* a = planned duration (0 = until resume) */        \
    XX(RESUME, "resume", 0, 0)                          /* a = how long it was paused */                     \
    XX(CRASH, "crash", 0, 1)                                                                                 \
    XX(RESTART, "restart", 0, 1)                                                                             \
    XX(CLOCK_STEP, "clock-step", 0, 0)                  /* a = delta_ns, b = which (1 wall, 2 mono, 3        \
                                                           both), plus TRACE_CLOCK_AT_START at t = 0 for     \
                                                           a scenario's `clock NODE offset=` line: the       \
                                                           wall clock starts a from true time */             \
    XX(CLOCK_DRIFT, "clock-drift", 0, 0)                /* a = ppm */                                        \
    XX(CLOCK_SLEW, "clock-slew", 0, 0)                  /* a = delta_ns, b = over_ns */                      \
    XX(PARTITION, "partition", 0, 0)                    /* a = number of groups; text = groups */            \
    XX(HEAL, "heal", 0, 0)                                                                                   \
    XX(LINK, "link", 0, 0)                              /* node -> peer, a = min latency, b = max            \
                                                           latency, grant = loss in parts per million (0     \
                                                           = none) */                                        \
    /* Messages (node = receiver for RECV/DROP, sender for SEND). */                                         \
    XX(MSG_SEND, "msg-send", 0, 0)                      /* peer = receiver, a = message id, b = type */      \
    XX(MSG_RECV, "msg-recv", 0, 0)                      /* peer = sender, a = message id, b = type */        \
    XX(MSG_DROP, "msg-drop", 0, 0)                      /* peer = sender, a = message id, b = reason         \
                                                           (enum trace_drop) */                              \
    /* Client program (node = client). */                                                                    \
    XX(ACQUIRE_START, "acquire-start", 0, 1)            /* acquisition begins */                             \
    XX(ACQUIRE_TRY, "acquire-try", 0, 0)                /* a = attempt number */                             \
    XX(ACQUIRED, "acquired", 0, 1)                      /* token = fencing token (0 none), grant =           \
                                                           ground-truth id, a = validity the client          \
                                                           believes, ns (0 = unbounded) */                   \
    XX(ACQUIRE_DENIED, "acquire-denied", 0, 1)          /* one attempt refused; a = attempt number */        \
    XX(ACQUIRE_FAILED, "acquire-failed", 0, 1)          /* gave up; a = attempts made */                     \
    XX(CS_EXIT, "cs-exit", 0, 1)                        /* leaves the critical section; a = reason (enum     \
                                                           trace_exit) */                                    \
    XX(RELEASE_SENT, "release-sent", 0, 0)                                                                   \
    XX(WORK_START, "work-start", 0, 0)                  /* a = duration */                                   \
    XX(WORK_END, "work-end", 0, 0)                                                                           \
    XX(POINT, "point", 0, 0)                            /* a named point of the program is reached; a =      \
                                                           enum scn_point */                                 \
    XX(PROGRAM_DONE, "program-done", 0, 0)                                                                   \
    /* Lock service (node = server, peer = client concerned). Server events carry no ground-truth            \
     * grant (grant = 0): servers see requests, not what a client concluded from their answers. */           \
    XX(SRV_GRANT, "srv-grant", 0, 1)                    /* peer = owner, token (0 = the store hands out      \
                                                           none), a = ttl_ns (0 none), b = expiry by the     \
                                                           server's clock */                                 \
    XX(SRV_DENY, "srv-deny", 0, 0)                      /* peer = requester, a = current owner */            \
    XX(SRV_RENEW, "srv-renew", 0, 0)                    /* peer = owner, a = new ttl */                      \
    XX(SRV_EXPIRE, "srv-expire", 0, 1)                  /* peer = owner */                                   \
    XX(SRV_DELETE, "srv-delete", 0, 1)                  /* peer = requester, a = owner of the deleted        \
                                                           entry, b = 1 if it was not the requester's */     \
    XX(SRV_KEEP, "srv-keep", 0, 0)                      /* release refused (compare failed); peer =          \
                                                           requester, a = owner (-1 none) */                 \
    XX(SRV_NOTE, "srv-note", 0, 0)                      /* algorithm-specific, a/b free, text says what;     \
                                                           the engine's "ignored: A is not paused" (a        \
                                                           fault with nothing to do): node = the fault's     \
                                                           node, a = enum scn_fault_kind, b = its line */    \
    /* Protected resource (node = resource, peer = client). */                                               \
    XX(READ, "read", 0, 1)                              /* a = value read */                                 \
    XX(WRITE, "write", 0, 1)                            /* a = value written, token, grant = writer's        \
                                                           grant, b = enum trace_write; text "set" for an    \
                                                           absolute write (write set=V), else none */        \
    /* Checker findings (node = client concerned, peer = the other client). */                               \
    XX(DOUBLE_ENTRY_BEGIN, "double-entry-begin", 1, 0)  /* node and peer both in the critical section */     \
    XX(DOUBLE_ENTRY_END, "double-entry-end", 1, 0)      /* a = length of the interval */                     \
    XX(STALE_WRITE, "stale-write", 1, 0)                /* a = 1 accepted, 0 rejected; grant = stale         \
                                                           grant */                                          \
    XX(WRONG_RELEASE, "wrong-release", 1, 0)            /* node = requester, peer = owner whose grant was    \
                                                           removed */                                        \
    /* Later additions, in the groups above by meaning, last by value. */                                    \
    XX(RESOURCE_INIT, "resource-init", 0, 1)            /* node = resource, a = initial stock, b = enum      \
                                                           trace_rule (what decides its writes), grant =     \
                                                           lock-server grants that make one grant of the     \
                                                           service (its quorum), 0 = one */                  \
    XX(WRITE_SKIPPED, "write-skipped", 0, 0)            /* node = client: a write not sent; a = enum         \
                                                           trace_skip */                                     \
    XX(CONTROL, "control", 0, 0)                        /* node = server: operator action; a = enum          \
                                                           lock_control */                                   \
    XX(LATE_WRITE, "late-write", 1, 0)                  /* checker: node = writer, a write under a           \
                                                           superseded grant that a resource with a rule      \
                                                           accepted before any operation of a newer grant    \
                                                           (in grant order); grant = its grant */
/* clang-format on */

enum trace_kind {
#define TRACE_KIND_ENUM_(name, word, finding, checked) TRACE_##name,
    TRACE_KIND_MAP(TRACE_KIND_ENUM_)
#undef TRACE_KIND_ENUM_
};

/* How many kinds there are (kept out of enum trace_kind, so a switch on
 * the kind need not name it). */
#define TRACE_KIND_ONE_(name, word, finding, checked) +1
enum { TRACE_KIND_COUNT = 0 TRACE_KIND_MAP(TRACE_KIND_ONE_) };
#undef TRACE_KIND_ONE_
_Static_assert(TRACE_KIND_COUNT <= 64, "masks of trace kinds (observe_kinds, CHECKER_KINDS) are 64-bit");

/* The kinds the checker appends (its findings), not the simulation's:
 * re-checking a recorded trace drops them and computes them again. */
#define TRACE_KIND_FINDING_BIT_(name, word, finding, checked) | (uint64_t)(finding) << TRACE_##name
#define TRACE_FINDING_KINDS (0 TRACE_KIND_MAP(TRACE_KIND_FINDING_BIT_))
static inline int trace_kind_is_finding(int kind) {
    return kind >= 0 && kind < TRACE_KIND_COUNT && ((TRACE_FINDING_KINDS >> kind) & 1);
}

/* TRACE_CLOCK_STEP's b: not a jump during the run but the offset the clock
 * starts with (the scenario's `clock` header line). */
#define TRACE_CLOCK_AT_START 4

/* A write's outcome (TRACE_WRITE's b): TRACE_WRITE_ACCEPTED = 1,
 * TRACE_WRITE_REJECTED_STALE, _NOTOKEN, _COND, _UNIQUE, _DUPLICATE, from the
 * list that also makes lock.h's enum lock_write_result (one meaning per value
 * there). */
enum trace_write {
#define TRACE_WRITE_ENUM_(name, value) TRACE_WRITE_##name = value,
    LOCK_WRITE_RESULT_MAP(TRACE_WRITE_ENUM_)
#undef TRACE_WRITE_ENUM_
};

/* TRACE_WRITE's text for an absolute write (`write set=V`): the value was
 * written as given, not computed from a read, so writing it twice changes
 * nothing. A read-modify-write has no text. */
#define TRACE_WRITE_SET_TEXT "set"
static inline int trace_write_is_set(const char *text) { return text && strcmp(text, TRACE_WRITE_SET_TEXT) == 0; }

/* TRACE_RESOURCE_INIT's b: the rule that decides which writes the resource
 * accepts. One list for the trace (the engine writes it), the checker
 * (checker_report.resource_rule is b as it is) and the reports:
 * XX(NAME, value, word, says) gives TRACE_RULE_NAME = value (in the trace
 * and its hash: a new rule takes a new value), the word of the JSON record's
 * "resource_rule" (trace_rule_word) and what the text report adds to its
 * stale-writes line (trace_rule_says). A value no rule has reads as some
 * check: a resource whose b is not 0 counts as protected. */
/* clang-format off */
#define TRACE_RULE_MAP(XX)                                                                           \
    /* it checks nothing */                                                                          \
    XX(PLAIN, 0, "plain", "")                                                                        \
    /* it rejects a token lower than the highest seen, and a write with none */                      \
    XX(TOKENS, 1, "tokens", " (resource checks fencing tokens)")                                     \
    /* the lock algorithm's own rule decides (a skip-locked claim, a fencing rule) */                \
    XX(ALGORITHM, 2, "algorithm", " (the algorithm's own rule decides writes)")                      \
    /* that rule decides and the algorithm takes no lock (lock_algo.lock_free): the run is           \
     * judged by the resource's history, and the report says duplicated work, not stale writes */    \
    XX(NO_LOCK, 3, "no-lock", "")                                                                    \
    /* the resource lives in the lock service (resource guard=owner), whatever else decides */       \
    XX(OWNER, 4, "owner", " (writes guarded by ownership in the lock service)")
/* clang-format on */

enum trace_rule {
#define TRACE_RULE_ENUM_(name, value, word, says) TRACE_RULE_##name = value,
    TRACE_RULE_MAP(TRACE_RULE_ENUM_)
#undef TRACE_RULE_ENUM_
};

/* 1 when rule is a value of the list. */
int trace_rule_known(int64_t rule);
/* The word and the report's words of a rule; a value no rule has gives
 * TRACE_RULE_PLAIN's. Static strings. */
const char *trace_rule_word(int64_t rule);
const char *trace_rule_says(int64_t rule);

enum trace_skip {
    TRACE_SKIP_SOLD_OUT = 1,     /* it read 0 units: nothing to reserve */
    TRACE_SKIP_CLIENT_CHECK = 2, /* the algorithm's client-side check said no */
    TRACE_SKIP_LOST = 3,         /* the algorithm had said the lock was lost (lock_lost) */
    TRACE_SKIP_READ_REFUSED = 4  /* the resource refused its read (check=reads+writes) */
};

enum trace_exit {
    TRACE_EXIT_RELEASE = 1, /* program reached its release */
    TRACE_EXIT_CRASH = 2,   /* the client crashed */
    TRACE_EXIT_LOST = 3,    /* the algorithm learnt it lost the lock */
    TRACE_EXIT_END = 4      /* the program ended without releasing */
};

enum trace_drop {
    TRACE_DROP_PARTITION = 1,
    TRACE_DROP_LOSS = 2,
    TRACE_DROP_CRASHED = 3 /* the receiver was down when it arrived */
};

struct trace_event {
    sim_ns t;         /* true time */
    uint32_t seq;     /* position in the trace, from 0 */
    uint16_t kind;    /* enum trace_kind */
    int32_t node;     /* node index, or TRACE_NO_NODE */
    int32_t peer;     /* other node, or TRACE_NO_NODE */
    uint64_t token;   /* fencing token (0 = none) */
    uint32_t grant;   /* ground-truth grant id (0 = none) */
    int64_t a, b;     /* kind-specific, see enum trace_kind */
    const char *text; /* static or interned string, or NULL; never owned */
};

enum trace_node_kind { TRACE_NODE_CLIENT, TRACE_NODE_SERVER, TRACE_NODE_RESOURCE };

struct trace_node {
    char name[16];
    int kind; /* enum trace_node_kind */
};

/* Receives each event as it is appended (the online checker). */
typedef void (*trace_observer)(void *arg, const struct trace_event *ev);

struct trace {
    struct trace_node *nodes; /* owned */
    int nnodes;
    int cap_nodes;          /* room in nodes[] */
    struct trace_event *ev; /* owned; kept only when keep != 0 */
    size_t len, cap;
    uint32_t count; /* events appended, kept or not */
    int keep;       /* 1 = store events in ev[] */
    int hashing;    /* 1 = fold every event into hash as it is appended,
                                 so trace_hash works without keeping the events */
    uint64_t hash;  /* the digest's running accumulator when hashing */
    int oom;        /* 1 = an append could not be stored */
    trace_observer observe;
    void *observe_arg;
    uint64_t observe_kinds; /* bit k: the observer wants kind k; 0 = every kind */
    /* Called with observe_arg before an event later than every event so far
     * is stored, so an observer can append what it concluded about the
     * instant that just ended, in time order. */
    void (*advance)(void *arg, sim_ns t);
    sim_ns last_t; /* time of the latest event appended */
    char title[160];
    char algo[48];
    uint64_t seed;
    struct trace_strings *strings; /* owned: event text copied by trace_intern */
    /* A golden trace (check's golden/ files, trace_copy_golden): its events
     * leave out the message traffic (trace_is_traffic), omitted events in
     * all, and golden_digest is the trace hash of the whole run. */
    int golden;
    uint64_t golden_digest;
    uint64_t omitted;
};

/* Message traffic: the kinds a golden trace leaves out (thousands of
 * msg-send/msg-recv pairs in a consensus run, read by no checker rule;
 * a lost message stays, as msg-drop). */
static inline int trace_is_traffic(int kind) { return kind == TRACE_MSG_SEND || kind == TRACE_MSG_RECV; }

void trace_init(struct trace *tr, int keep);
void trace_close(struct trace *tr);
/* Register node names (copied). Returns its index or -1 on OOM. */
int trace_add_node(struct trace *tr, const char *name, int kind);
/* Make room for n nodes in all, so that adding that many allocates exactly
 * once (a run with 10^5 clients). Returns 0 or -1 on OOM. */
int trace_reserve_nodes(struct trace *tr, int n);
/* Make room for n kept events in all, so that appending that many allocates
 * once (a reader that has counted its lines). Returns 0 or -1 on OOM (the
 * trace is unchanged and appends go on growing it). */
int trace_reserve_events(struct trace *tr, size_t n);
/* Append a copy of *ev (seq is filled in). Observers see it even when not kept. */
void trace_append(struct trace *tr, const struct trace_event *ev);
/* The same for a producer that builds each event anew: ev->seq is filled in
 * place and observers see *ev itself, which saves a copy per event. */
void trace_append_own(struct trace *tr, struct trace_event *ev);
/* The digest's fold of one event (docs/trace-format.md, "Trace hash"):
 * six 64-bit words, then its text 8 bytes a word, each through xxHash64's
 * round. Inline, for the engine's hash-only path below; the words are
 * defined arithmetically, so the digest is the same on any machine. */
#define TRACE_H_P1 0x9E3779B185EBCA87ull
#define TRACE_H_P2 0xC2B2AE3D27D4EB4Full
static inline uint64_t trace_h_round(uint64_t acc, uint64_t w) {
    acc += w * TRACE_H_P2;
    acc = (acc << 31) | (acc >> 33);
    return acc * TRACE_H_P1;
}
uint64_t trace_hash_text(uint64_t h, const char *text, size_t len); /* the text's words */
static inline uint64_t trace_hash_fields(uint64_t h, sim_ns t, int kind, int node, int peer, uint64_t token,
                                         uint32_t grant, int64_t a, int64_t b, const char *text) {
    size_t len = text ? strlen(text) : 0;
    h = trace_h_round(h, (uint64_t)t);
    h = trace_h_round(h, (uint64_t)(uint16_t)kind | (uint64_t)(len & 0xffff) << 16 | (uint64_t)grant << 32);
    h = trace_h_round(h, (uint64_t)(uint32_t)node | (uint64_t)(uint32_t)peer << 32);
    h = trace_h_round(h, token);
    h = trace_h_round(h, (uint64_t)a);
    h = trace_h_round(h, (uint64_t)b);
    return len ? trace_hash_text(h, text, len) : h;
}
/* For a producer that knows an event is neither kept nor observed (keep 0,
 * and the observer does not want its kind) but hashing is on: what
 * trace_append_own would do with the event of these fields (count it,
 * move time on for the advance hook, fold it into the digest), without
 * building it. */
static inline void trace_append_hash_only(struct trace *tr, sim_ns t, int kind, int node, int peer, uint64_t token,
                                          uint32_t grant, int64_t a, int64_t b, const char *text) {
    if (t > tr->last_t) {
        if (tr->advance) tr->advance(tr->observe_arg, t);
        tr->last_t = t;
    }
    tr->count++;
    tr->hash = trace_hash_fields(tr->hash, t, kind, node, peer, token, grant, a, b, text);
}
/* 1 when an event of this kind would be stored or observed. When it would
 * not, a producer may call trace_skip (which counts it and moves time on for the advance hook, as trace_append would) instead
 * of building the event and appending it. */
static inline int trace_wants(const struct trace *tr, int kind) {
    return tr->keep || tr->hashing || (tr->observe && (!tr->observe_kinds || ((tr->observe_kinds >> kind) & 1)));
}
static inline void trace_skip(struct trace *tr, sim_ns t) {
    if (t > tr->last_t) {
        if (tr->advance) tr->advance(tr->observe_arg, t);
        tr->last_t = t;
    }
    tr->count++;
}
const char *trace_kind_name(int kind);
/* Inverse of trace_kind_name; -1 when unknown. */
int trace_kind_from_name(const char *name);
/* Copy the len bytes at s (no NUL among them), plus a NUL, into storage
 * owned by the trace and shared by equal strings: for event text that is not
 * static (a trace read back from a file, partition groups). The copy stays
 * valid until trace_close. Returns it, or NULL when out of memory (and then
 * sets tr->oom, which fails the run). */
const char *trace_intern(struct trace *tr, const char *s, size_t len);
/* dst (trace_init'd, keeping events, empty) becomes the golden form of src
 * (whose events are kept): its nodes, title, algorithm and seed, every event
 * but the message traffic (numbered afresh), golden set, golden_digest =
 * trace_hash(src) and omitted = the events left out. Returns 0 or -1 on OOM. */
int trace_copy_golden(struct trace *dst, const struct trace *src);
/* The trace digest: every event's fields as 64-bit words, folded word by
 * word (xxHash64's round, then its avalanche; docs/trace-format.md, "Trace
 * hash"): equal hashes mean identical traces on any machine. Over the stored
 * events, or, when hashing is on, over every event appended (the same value
 * when both are on). */
uint64_t trace_hash(const struct trace *tr);
/* Turn on the running hash; call before the first append. */
void trace_hash_on(struct trace *tr);

#endif
