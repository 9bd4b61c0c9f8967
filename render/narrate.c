/* Narration: per-node knowledge (in the critical section, paused, crashed,
 * highest accepted token) replayed from the trace, and one sentence per
 * event kind that a teacher would say aloud. */
#include "narrate.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "lock.h"
#include "scenario.h" /* scn_fault_name, for the notes of ignored faults */

/* What one node knows or is, just before the event being narrated. */
struct nstat {
    uint8_t in_cs;      /* client: between ACQUIRED and CS_EXIT */
    uint8_t paused;     /* between PAUSE and RESUME */
    uint8_t crashed;    /* between CRASH and RESTART */
    uint64_t token;     /* client: token of its current grant */
    uint32_t grant;     /* client: its current grant id */
    uint64_t max_tok;   /* resource: highest token of an accepted write */
    uint8_t last_write; /* resource: result (trace write b) of its latest write */
};

/* Node states just before the event being narrated, one per node. */
struct view {
    const struct trace *tr;
    const struct nstat *all;
};

static void stat_apply(struct nstat *s, const struct trace_event *e) {
    switch ((enum trace_kind)e->kind) {
    case TRACE_ACQUIRED:
        s->in_cs = 1;
        s->token = e->token;
        s->grant = e->grant;
        break;
    case TRACE_CS_EXIT: s->in_cs = 0; break;
    case TRACE_PAUSE: s->paused = 1; break;
    case TRACE_RESUME: s->paused = 0; break;
    case TRACE_CRASH:
        s->crashed = 1;
        s->paused = 0;
        s->in_cs = 0;
        break;
    case TRACE_RESTART: s->crashed = 0; break;
    case TRACE_WRITE:
        if (e->b == TRACE_WRITE_ACCEPTED && e->token > s->max_tok) s->max_tok = e->token;
        s->last_write = (uint8_t)e->b;
        break;
    /* no change to what the node knows or is */
    case TRACE_RUN_START:
    case TRACE_RUN_END:
    case TRACE_CLOCK_STEP:
    case TRACE_CLOCK_DRIFT:
    case TRACE_CLOCK_SLEW:
    case TRACE_PARTITION:
    case TRACE_HEAL:
    case TRACE_LINK:
    case TRACE_MSG_SEND:
    case TRACE_MSG_RECV:
    case TRACE_MSG_DROP:
    case TRACE_ACQUIRE_START:
    case TRACE_ACQUIRE_TRY:
    case TRACE_ACQUIRE_DENIED:
    case TRACE_ACQUIRE_FAILED:
    case TRACE_RELEASE_SENT:
    case TRACE_WORK_START:
    case TRACE_WORK_END:
    case TRACE_POINT:
    case TRACE_PROGRAM_DONE:
    case TRACE_SRV_GRANT:
    case TRACE_SRV_DENY:
    case TRACE_SRV_RENEW:
    case TRACE_SRV_EXPIRE:
    case TRACE_SRV_DELETE:
    case TRACE_SRV_KEEP:
    case TRACE_SRV_NOTE:
    case TRACE_READ:
    case TRACE_DOUBLE_ENTRY_BEGIN:
    case TRACE_DOUBLE_ENTRY_END:
    case TRACE_STALE_WRITE:
    case TRACE_WRONG_RELEASE:
    case TRACE_RESOURCE_INIT:
    case TRACE_WRITE_SKIPPED:
    case TRACE_CONTROL:
    case TRACE_LATE_WRITE: break;
    }
}

static struct nstat view_stat(const struct view *v, int node) {
    struct nstat s;
    memset(&s, 0, sizeof s);
    if (node < 0 || node >= v->tr->nnodes) return s;
    return v->all[node];
}

/* The client in the critical section under the newest grant newer than
 * grant, other than writer: who holds the lock when a stale write lands. */
static int newer_holder(const struct view *v, int writer, uint32_t grant) {
    int best = -1;
    for (int i = 0; i < v->tr->nnodes; i++) {
        const struct nstat *s = &v->all[i];
        if (i == writer || !s->in_cs || s->grant <= grant) continue;
        if (best < 0 || s->grant > v->all[best].grant) best = i;
    }
    return best;
}

/* 1 when the resource's latest write was refused by `resource guard=owner`. */
static int guard_refused(const struct view *v) {
    for (int i = 0; i < v->tr->nnodes; i++)
        if (v->tr->nodes[i].kind == TRACE_NODE_RESOURCE && v->all[i].last_write == TRACE_WRITE_REJECTED_NOT_OWNER)
            return 1;
    return 0;
}

static const char *nm(const struct trace *tr, int64_t node) {
    if (node < 0 || node >= tr->nnodes) return "?";
    return tr->nodes[node].name;
}

static int is_client(const struct trace *tr, int node) {
    return node >= 0 && node < tr->nnodes && tr->nodes[node].kind == TRACE_NODE_CLIENT;
}

/* " (token 41)" or "" */
static void tok_paren(char *b, size_t n, uint64_t token) {
    if (token) snprintf(b, n, " (token %llu)", (unsigned long long)token);
    else b[0] = '\0';
}

/* What a resource with rule b (TRACE_RESOURCE_INIT's) starting at stock does
 * with writes. A value no rule has is some check, as for the checker (b not 0:
 * protected), and is told as fencing. */
static void rule_sentence(char *buf, size_t n, const char *me, int64_t stock, int64_t b) {
    enum trace_rule rule = trace_rule_known(b) ? (enum trace_rule)b : TRACE_RULE_TOKENS;
    const char *does = "";
    switch (rule) {
    case TRACE_RULE_PLAIN: does = "it does not check tokens (not fenced)"; break;
    case TRACE_RULE_TOKENS: does = "it is fenced: it rejects a write whose token is lower than one it has seen"; break;
    case TRACE_RULE_ALGORITHM: does = "the lock algorithm's own rule decides which writes it accepts"; break;
    case TRACE_RULE_NO_LOCK: /* ... judged by <me>'s history */
        does = "no lock is taken: the algorithm's own rule decides which writes it accepts, and the run"
               " is judged by ";
        break;
    case TRACE_RULE_OWNER:
        does = "it lives in the lock service: a write is applied only while the service records its"
               " writer as the holder";
        break;
    }
    int whose = rule == TRACE_RULE_NO_LOCK;
    snprintf(buf, n, "%s starts at %lld; %s%s%s", me, (long long)stock, does, whose ? me : "",
             whose ? "'s history" : "");
}

/* A link's new delay (one value or a range) and loss, in words. */
static void link_sentence(char *buf, size_t n, const char *me, const char *peer, const struct trace_event *e) {
    char d1[48], d2[32];
    format_time_ns(d1, sizeof d1, e->a);
    format_time_ns(d2, sizeof d2, e->b);
    char loss[48] = "";
    if (e->grant >= 1000000u) {
        snprintf(buf, n, "link %s -> %s now loses every message", me, peer);
        return;
    }
    if (e->grant) { /* parts per million as a percentage, with the decimals it needs */
        char frac[8];
        snprintf(frac, sizeof frac, "%04u", e->grant % 10000u);
        for (int k = 3; k >= 0 && frac[k] == '0'; k--) frac[k] = '\0';
        snprintf(loss, sizeof loss, ", and loses %u%s%s%% of messages", e->grant / 10000u, frac[0] ? "." : "", frac);
    }
    if (e->a == e->b) snprintf(buf, n, "link %s -> %s now takes %s%s", me, peer, d1, loss);
    else snprintf(buf, n, "link %s -> %s now takes %s..%s%s", me, peer, d1, d2, loss);
}

/* What the resource did with a write, and for a rejected one, why. */
static void write_sentence(char *buf, size_t n, const struct view *v, const struct trace_event *e) {
    const char *me = nm(v->tr, e->node), *peer = nm(v->tr, e->peer);
    char tk[48];
    struct nstat st;
    if (e->b == TRACE_WRITE_ACCEPTED) {
        tok_paren(tk, sizeof tk, e->token);
        if (trace_write_is_set(e->text))
            snprintf(buf, n, "%s accepts %s's absolute write of %lld%s: writing it again changes nothing", me, peer,
                     (long long)e->a, e->token ? tk : " (no token)");
        else
            snprintf(buf, n, "%s accepts %s's write of %lld%s", me, peer, (long long)e->a,
                     e->token ? tk : " (no token)");
        return;
    }
    if (e->b == TRACE_WRITE_REJECTED_STALE) {
        st = view_stat(v, e->node);
        if (st.max_tok > e->token)
            snprintf(buf, n,
                     "%s rejects %s's write: token %llu is lower than %llu already"
                     " seen",
                     me, peer, (unsigned long long)e->token, (unsigned long long)st.max_tok);
        else if (st.max_tok && st.max_tok == e->token) /* compare=<= or != */
            snprintf(buf, n,
                     "%s rejects %s's write: token %llu was already used by an accepted"
                     " write",
                     me, peer, (unsigned long long)e->token);
        else if (st.max_tok) /* compare=first: a higher token, but not the stored one */
            snprintf(buf, n,
                     "%s rejects %s's write: token %llu is not the token %llu stored"
                     " with the data",
                     me, peer, (unsigned long long)e->token, (unsigned long long)st.max_tok);
        else snprintf(buf, n, "%s rejects %s's write: token %llu is stale", me, peer, (unsigned long long)e->token);
    } else if (e->b == TRACE_WRITE_REJECTED_NOTOKEN) {
        snprintf(buf, n, "%s rejects %s's write: it carries no fencing token", me, peer);
    } else if (e->b == TRACE_WRITE_REJECTED_COND) {
        snprintf(buf, n, "%s rejects %s's write: the value changed since %s read it", me, peer, peer);
    } else if (e->b == TRACE_WRITE_REJECTED_UNIQUE) {
        snprintf(buf, n, "%s rejects %s's insert: a UNIQUE constraint already holds that row", me, peer);
    } else if (e->b == TRACE_WRITE_REJECTED_NOT_OWNER) {
        snprintf(buf, n,
                 "%s rejects %s's write: the lock service does not record %s as the"
                 " lock's holder",
                 me, peer, peer);
    } else if (e->b == TRACE_WRITE_REJECTED_DUPLICATE) {
        snprintf(buf, n, "%s ignores %s's write: its idempotency key was already applied", me, peer);
    } else {
        snprintf(buf, n, "%s rejects %s's write", me, peer);
    }
}

/* A write under a lost lock: accepted (the damage, and who holds the lock
 * now) or refused (which guard worked). */
static void stale_write_sentence(char *buf, size_t n, const struct view *v, const struct trace_event *e) {
    const struct trace *tr = v->tr;
    const char *me = nm(tr, e->node);
    char tk[48];
    int lo;
    tok_paren(tk, sizeof tk, e->token);
    lo = e->peer != TRACE_NO_NODE ? e->peer : newer_holder(v, e->node, e->grant);
    if (e->a && lo >= 0)
        snprintf(buf, n,
                 "%s's write under its lost lock%s was ACCEPTED while %s holds"
                 " the lock: the data may now be wrong",
                 me, tk, nm(tr, lo));
    else if (e->a)
        snprintf(buf, n,
                 "%s's write under its lost lock%s was ACCEPTED: the data may"
                 " now be wrong",
                 me, tk);
    else if (guard_refused(v))
        snprintf(buf, n,
                 "the ownership guard works: %s's stale write%s was refused (the lock"
                 " service no longer records %s as the holder)",
                 me, tk, me);
    else if (e->token) snprintf(buf, n, "fencing works: %s's stale write%s was rejected", me, tk);
    else /* a database rule (version, constraint, key), not a token */
        snprintf(buf, n, "the resource's own rule refused %s's stale write", me);
}

/* How a client left the critical section (how: TRACE_CS_EXIT's a). */
static void exit_sentence(char *buf, size_t n, const char *me, int64_t how) {
    switch (how) {
    case TRACE_EXIT_RELEASE: snprintf(buf, n, "%s leaves the critical section and releases the lock", me); break;
    case TRACE_EXIT_CRASH: snprintf(buf, n, "%s leaves the critical section: it crashed", me); break;
    case TRACE_EXIT_LOST: snprintf(buf, n, "%s learns it lost the lock and leaves the critical section", me); break;
    case TRACE_EXIT_END:
        snprintf(buf, n,
                 "%s's program ends inside the critical section, without"
                 " releasing",
                 me);
        break;
    default: snprintf(buf, n, "%s leaves the critical section", me);
    }
}

/* A write under a lost lock accepted before the new holder touched the
 * resource: first in grant order, no harm. */
static void late_write_sentence(char *buf, size_t n, const struct view *v, const struct trace_event *e) {
    const struct trace *tr = v->tr;
    const char *me = nm(tr, e->node);
    char tk[48];
    int lo;
    tok_paren(tk, sizeof tk, e->token);
    lo = newer_holder(v, e->node, e->grant);
    if (lo >= 0)
        snprintf(buf, n,
                 "%s's write under its lost lock%s was accepted, but %s, the new holder,"
                 " has not touched the resource yet: the write still comes first in grant order,"
                 " no harm",
                 me, tk, nm(tr, lo));
    else
        snprintf(buf, n,
                 "%s's write under its lost lock%s was accepted before any operation of"
                 " the newer grant: it still comes first in grant order, no harm",
                 me, tk);
}

/* Why a client did not send its write. */
static void skip_sentence(char *buf, size_t n, const char *me, const struct trace_event *e) {
    char tk[48];
    tok_paren(tk, sizeof tk, e->token);
    if (e->a == TRACE_SKIP_SOLD_OUT) snprintf(buf, n, "%s does not write: it read 0 units, nothing to reserve", me);
    else if (e->a == TRACE_SKIP_CLIENT_CHECK)
        snprintf(buf, n,
                 "%s does not send its write%s: its own check says it may no"
                 " longer hold the lock",
                 me, tk);
    else if (e->a == TRACE_SKIP_LOST)
        snprintf(buf, n, "%s does not send its write: it has learnt that it lost the lock", me);
    else if (e->a == TRACE_SKIP_READ_REFUSED)
        snprintf(buf, n, "%s does not send its write%s: the resource refused its read", me, tk);
    else snprintf(buf, n, "%s does not send its write", me);
}

/* No sentence: buf empty, and 1. */
static int empty(char *buf, size_t n) {
    if (n) buf[0] = '\0';
    return 1;
}

/* TRACE_PAUSE */
static int pause_sentence(char *buf, size_t n, const struct view *v, const struct trace_event *e) {
    const char *me = nm(v->tr, e->node);
    char d1[48], d2[32];
    struct nstat st = view_stat(v, e->node);
    d1[0] = '\0';
    if (e->a > 0) {
        format_time_ns(d2, sizeof d2, e->a);
        snprintf(d1, sizeof d1, " for %s", d2);
    }
    if (st.in_cs)
        snprintf(buf, n,
                 "%s pauses%s (GC pause, stall) inside the critical section;"
                 " it cannot notice",
                 me, d1);
    else snprintf(buf, n, "%s pauses%s (GC pause, stall)", me, d1);
    return 0;
}

/* TRACE_RESUME */
static int resume_sentence(char *buf, size_t n, const struct view *v, const struct trace_event *e) {
    const char *me = nm(v->tr, e->node);
    char d1[48], tk[48];
    struct nstat st = view_stat(v, e->node);
    format_time_ns(d1, sizeof d1, e->a);
    tok_paren(tk, sizeof tk, st.token);
    if (st.in_cs) snprintf(buf, n, "%s resumes after %s, still believing it holds the lock%s", me, d1, tk);
    else snprintf(buf, n, "%s resumes after %s", me, d1);
    return 0;
}

/* TRACE_CRASH */
static int crash_sentence(char *buf, size_t n, const struct view *v, const struct trace_event *e) {
    const char *me = nm(v->tr, e->node);
    struct nstat st = view_stat(v, e->node);
    if (st.in_cs)
        snprintf(buf, n,
                 "%s crashes inside the critical section; it cannot release"
                 " the lock",
                 me);
    else snprintf(buf, n, "%s crashes", me);
    return 0;
}

/* TRACE_CLOCK_STEP */
static int clock_step_sentence(char *buf, size_t n, const struct view *v, const struct trace_event *e) {
    const char *me = nm(v->tr, e->node);
    char d1[48];
    format_time_ns(d1, sizeof d1, e->a < 0 ? -e->a : e->a);
    if (e->b & TRACE_CLOCK_AT_START) {
        snprintf(buf, n, "%s's wall clock starts %s %s of true time", me, d1, e->a < 0 ? "behind" : "ahead");
        return 0;
    }
    snprintf(buf, n, "%s's %s %s %s by %s", me,
             e->b == 1   ? "wall clock"
             : e->b == 2 ? "monotonic clock"
                         : "wall and monotonic clocks",
             e->b == 3 ? "jump" : "jumps", e->a < 0 ? "back" : "forward", d1);
    return 0;
}

/* TRACE_ACQUIRED */
static int acquired_sentence(char *buf, size_t n, const struct view *v, const struct trace_event *e) {
    const char *me = nm(v->tr, e->node);
    char d1[48], tk[48];
    if (e->token) snprintf(tk, sizeof tk, "token %llu", (unsigned long long)e->token);
    else snprintf(tk, sizeof tk, "no fencing token");
    if (e->a > 0) {
        format_time_ns(d1, sizeof d1, e->a);
        snprintf(buf, n, "%s acquires the lock (%s), valid for %s by its own clock", me, tk, d1);
    } else {
        snprintf(buf, n, "%s acquires the lock (%s)", me, tk);
    }
    return 0;
}

/* TRACE_SRV_GRANT */
static int grant_sentence(char *buf, size_t n, const struct view *v, const struct trace_event *e) {
    const char *me = nm(v->tr, e->node), *peer = nm(v->tr, e->peer);
    char d1[48];
    if (e->a > 0) format_time_ns(d1, sizeof d1, e->a);
    else snprintf(d1, sizeof d1, "no expiry");
    if (e->token)
        snprintf(buf, n, "%s grants the lock to %s (token %llu, lease %s)", me, peer, (unsigned long long)e->token, d1);
    else snprintf(buf, n, "%s grants the lock to %s (lease %s)", me, peer, d1);
    return 0;
}

/* TRACE_SRV_EXPIRE */
static int expire_sentence(char *buf, size_t n, const struct view *v, const struct trace_event *e) {
    const char *me = nm(v->tr, e->node), *peer = nm(v->tr, e->peer);
    struct nstat st = view_stat(v, e->peer);
    if (st.in_cs && st.paused)
        snprintf(buf, n, "%s: lease of %s expired; %s does not know (it is paused)", me, peer, peer);
    else if (st.in_cs)
        snprintf(buf, n,
                 "%s: lease of %s expired; %s does not know (it is still in the"
                 " critical section)",
                 me, peer, peer);
    else if (st.crashed) snprintf(buf, n, "%s: lease of %s expired (%s had crashed)", me, peer, peer);
    else snprintf(buf, n, "%s: lease of %s expired", me, peer);
    return 0;
}

/* TRACE_SRV_DELETE */
static int delete_sentence(char *buf, size_t n, const struct view *v, const struct trace_event *e) {
    const struct trace *tr = v->tr;
    const char *me = nm(v->tr, e->node), *peer = nm(v->tr, e->peer);
    if (e->b)
        snprintf(buf, n,
                 "%s deletes %s's lock on %s's release: %s released a lock that"
                 " was no longer its own",
                 me, nm(tr, e->a), peer, peer);
    else snprintf(buf, n, "%s deletes %s's lock (%s released it)", me, nm(tr, e->a), peer);
    return 0;
}

/* TRACE_SRV_KEEP */
static int keep_sentence(char *buf, size_t n, const struct view *v, const struct trace_event *e) {
    const struct trace *tr = v->tr;
    const char *me = nm(v->tr, e->node), *peer = nm(v->tr, e->peer);
    if (e->a < 0) /* nothing held: e.g. Redlock unlocking every server */
        snprintf(buf, n, "%s has no lock of %s's to delete", me, peer);
    else if (e->a == e->peer) snprintf(buf, n, "%s refuses %s's release: the value does not match", me, peer);
    else
        snprintf(buf, n, "%s refuses %s's release and keeps %s's lock: the lock is no longer %s's", me, peer,
                 nm(tr, e->a), peer);
    return 0;
}

/* TRACE_SRV_NOTE */
static int note_sentence(char *buf, size_t n, const struct view *v, const struct trace_event *e) {
    const char *me = nm(v->tr, e->node);
    if (!e->text) return empty(buf, n);
    if (strncmp(e->text, "ignored: ", 9) == 0) { /* a fault with nothing to do (engine_fault.c) */
        snprintf(buf, n, "%s %s (line %lld) does nothing: %s", scn_fault_name((enum scn_fault_kind)e->a), me,
                 (long long)e->b, e->text + 9);
        return 0;
    }
    snprintf(buf, n, "%s: %s", me, e->text);
    return 0;
}

/* TRACE_CONTROL */
static int control_sentence(char *buf, size_t n, const struct view *v, const struct trace_event *e) {
    const char *me = nm(v->tr, e->node);
    if (e->a == LOCK_CONTROL_PROMOTE) snprintf(buf, n, "operator: %s is promoted to primary (failover)", me);
    else if (e->a == LOCK_CONTROL_KILL_REPLICAS)
        snprintf(buf, n, "operator: CLIENT KILL TYPE replica on %s closes its replication links", me);
    else if (e->text) snprintf(buf, n, "operator action on %s: %s", me, e->text);
    else snprintf(buf, n, "operator action on %s", me);
    return 0;
}

/* TRACE_DOUBLE_ENTRY_BEGIN and _END */
static int double_entry_sentence(char *buf, size_t n, const struct view *v, const struct trace_event *e) {
    const struct trace *tr = v->tr;
    int lo = e->node < e->peer ? e->node : e->peer, hi = e->node < e->peer ? e->peer : e->node;
    if (e->kind == TRACE_DOUBLE_ENTRY_BEGIN) {
        snprintf(buf, n, "%s and %s are both in the critical section: mutual exclusion is broken", nm(tr, lo),
                 nm(tr, hi));
    } else {
        char d1[48];
        format_time_ns(d1, sizeof d1, e->a);
        snprintf(buf, n, "%s and %s are no longer both in the critical section (for %s)", nm(tr, lo), nm(tr, hi), d1);
    }
    return 0;
}

/* The sentence that says what e means, in buf, and 0; 1 (buf empty) for an
 * event too fine for a sentence. v: the nodes' state before e. */
static int sentence(char *buf, size_t n, const struct view *v, const struct trace_event *e) {
    const struct trace *tr = v->tr;
    const char *me = nm(tr, e->node), *peer = nm(tr, e->peer);
    char d1[48], d2[32];
    switch ((enum trace_kind)e->kind) {
    case TRACE_RUN_START:
        format_time_ns(d1, sizeof d1, e->b);
        snprintf(buf, n, "the run starts (seed %llu, %s of true time)", (unsigned long long)(uint64_t)e->a, d1);
        return 0;
    case TRACE_RUN_END: snprintf(buf, n, "the run ends"); return 0;
    case TRACE_RESOURCE_INIT: rule_sentence(buf, n, me, e->a, e->b); return 0;
    case TRACE_PAUSE: return pause_sentence(buf, n, v, e);
    case TRACE_RESUME: return resume_sentence(buf, n, v, e);
    case TRACE_CRASH: return crash_sentence(buf, n, v, e);
    case TRACE_RESTART:
        if (is_client(tr, e->node)) snprintf(buf, n, "%s restarts with fresh state", me);
        else snprintf(buf, n, "%s restarts", me);
        return 0;
    case TRACE_CLOCK_STEP: return clock_step_sentence(buf, n, v, e);
    case TRACE_CLOCK_DRIFT:
        if (e->a == 0) snprintf(buf, n, "%s's clock no longer drifts", me);
        else
            snprintf(buf, n, "%s's clock now drifts %+lld ppm (runs %s)", me, (long long)e->a,
                     e->a > 0 ? "fast" : "slow");
        return 0;
    case TRACE_CLOCK_SLEW:
        format_time_ns(d1, sizeof d1, e->a);
        format_time_ns(d2, sizeof d2, e->b);
        snprintf(buf, n, "%s's wall clock is slewed by %s%s over %s", me, e->a > 0 ? "+" : "", d1, d2);
        return 0;
    case TRACE_PARTITION:
        if (e->text) snprintf(buf, n, "the network splits: %s", e->text);
        else snprintf(buf, n, "the network splits into %lld groups", (long long)e->a);
        return 0;
    case TRACE_HEAL: snprintf(buf, n, "the network heals"); return 0;
    case TRACE_LINK: link_sentence(buf, n, me, peer, e); return 0;
    case TRACE_ACQUIRE_START: snprintf(buf, n, "%s tries to acquire the lock", me); return 0;
    case TRACE_ACQUIRED: return acquired_sentence(buf, n, v, e);
    case TRACE_ACQUIRE_FAILED:
        if (e->a > 0)
            snprintf(buf, n, "%s gives up acquiring the lock after %lld attempt%s", me, (long long)e->a,
                     e->a == 1 ? "" : "s");
        else snprintf(buf, n, "%s gives up acquiring the lock", me);
        return 0;
    case TRACE_CS_EXIT: exit_sentence(buf, n, me, e->a); return 0;
    case TRACE_SRV_GRANT: return grant_sentence(buf, n, v, e);
    case TRACE_SRV_RENEW:
        format_time_ns(d1, sizeof d1, e->a);
        snprintf(buf, n, "%s renews %s's lease for %s", me, peer, d1);
        return 0;
    case TRACE_SRV_EXPIRE: return expire_sentence(buf, n, v, e);
    case TRACE_SRV_DELETE: return delete_sentence(buf, n, v, e);
    case TRACE_SRV_KEEP: return keep_sentence(buf, n, v, e);
    case TRACE_SRV_NOTE: return note_sentence(buf, n, v, e);
    case TRACE_READ: snprintf(buf, n, "%s reads %lld from %s", peer, (long long)e->a, me); return 0;
    case TRACE_WRITE: write_sentence(buf, n, v, e); return 0;
    case TRACE_DOUBLE_ENTRY_BEGIN:
    case TRACE_DOUBLE_ENTRY_END: return double_entry_sentence(buf, n, v, e);
    case TRACE_STALE_WRITE: stale_write_sentence(buf, n, v, e); return 0;
    case TRACE_LATE_WRITE: late_write_sentence(buf, n, v, e); return 0;
    case TRACE_WRITE_SKIPPED: skip_sentence(buf, n, me, e); return 0;
    case TRACE_CONTROL: return control_sentence(buf, n, v, e);
    case TRACE_WRONG_RELEASE:
        snprintf(buf, n, "%s's release removed %s's lock: %s is no longer protected", me, peer, peer);
        return 0;
    /* not narrated: too fine for a sentence (messages, tries, program steps) */
    case TRACE_MSG_SEND:
    case TRACE_MSG_RECV:
    case TRACE_MSG_DROP:
    case TRACE_ACQUIRE_TRY:
    case TRACE_ACQUIRE_DENIED:
    case TRACE_RELEASE_SENT:
    case TRACE_WORK_START:
    case TRACE_WORK_END:
    case TRACE_POINT:
    case TRACE_PROGRAM_DONE:
    case TRACE_SRV_DENY: break;
    }
    return empty(buf, n);
}

int narrate_event(char *buf, size_t n, const struct trace *tr, const struct trace_event *ev) {
    if (n) buf[0] = '\0';
    struct nstat *all = calloc(tr->nnodes > 0 ? (size_t)tr->nnodes : 1, sizeof *all);
    if (!all) return -1;
    for (size_t i = 0; i < tr->len && tr->ev[i].seq < ev->seq; i++)
        if (tr->ev[i].node >= 0 && tr->ev[i].node < tr->nnodes) stat_apply(&all[tr->ev[i].node], &tr->ev[i]);
    struct view v = {tr, all};
    int rc = sentence(buf, n, &v, ev);
    free(all);
    return rc;
}

int narrate_trace(FILE *out, const struct trace *tr) {
    struct nstat *all = calloc(tr->nnodes > 0 ? (size_t)tr->nnodes : 1, sizeof *all);
    if (!all) return -1;
    struct view v = {tr, all};
    char text[512], t[32], tt[40];
    /* The time column is as wide as its widest entry (at least 12), so a
     * time such as t=1.000000001s keeps the sentences in one column. */
    int w = 12;
    for (size_t i = 0; i < tr->len; i++) {
        int l = 2 + format_time_ns(t, sizeof t, tr->ev[i].t);
        if (l > w) w = l;
    }
    for (size_t i = 0; i < tr->len; i++) {
        const struct trace_event *e = &tr->ev[i];
        if (sentence(text, sizeof text, &v, e) == 0) {
            format_time_ns(t, sizeof t, e->t);
            snprintf(tt, sizeof tt, "t=%s", t);
            fprintf(out, "  %-*s %s\n", w, tt, text);
        }
        if (e->node >= 0 && e->node < tr->nnodes) stat_apply(&all[e->node], e);
    }
    free(all);
    return ferror(out) ? -1 : 0;
}
