/* Layout: one pass over the trace turns events into per-lane spans and marks
 * (after a counting pass that sizes the storage), the clock lanes, messages
 * and partitions. The time axis is layout_axis.c. No drawing and no output
 * here. */
#include "layout.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"

#define NONE SIZE_MAX

/* Open spans of one lane while the layout is built (indices into its spans). */
struct open_state {
    size_t acq, hold, pause, crash, leader, delay;
    size_t lease_head; /* list of open leases through lease_next[] */
};

struct builder {
    struct layout *ly;
    struct open_state *open; /* per lane */
    size_t *lease_next;      /* per span in span_mem: next open lease */
};

static const char *const span_names[LAYOUT_SPAN_KIND_COUNT] = {
        [LAYOUT_SPAN_ACQUIRING] = "acquiring", [LAYOUT_SPAN_HOLDING] = "holding",
        [LAYOUT_SPAN_PAUSED] = "paused",       [LAYOUT_SPAN_CRASHED] = "crashed",
        [LAYOUT_SPAN_LEASE] = "lease",         [LAYOUT_SPAN_REPLICA] = "replica",
        [LAYOUT_SPAN_LEADER] = "leader",       [LAYOUT_SPAN_LOCK_DELAY] = "lock-delay",
};

static const char *const mark_names[LAYOUT_MARK_KIND_COUNT] = {
        [LAYOUT_MARK_ACQUIRED] = "acquired",
        [LAYOUT_MARK_ACQUIRE_FAILED] = "acquire-failed",
        [LAYOUT_MARK_RELEASE] = "release",
        [LAYOUT_MARK_LOST] = "lost",
        [LAYOUT_MARK_WRONG_RELEASE] = "wrong-release",
        [LAYOUT_MARK_GRANT] = "grant",
        [LAYOUT_MARK_RENEW] = "renew",
        [LAYOUT_MARK_EXPIRE] = "expire",
        [LAYOUT_MARK_DELETE] = "delete",
        [LAYOUT_MARK_KEEP] = "keep",
        [LAYOUT_MARK_READ] = "read",
        [LAYOUT_MARK_WRITE_OK] = "write-accepted",
        [LAYOUT_MARK_WRITE_REJECTED] = "write-rejected",
        [LAYOUT_MARK_CLOCK_STEP] = "clock-step",
        [LAYOUT_MARK_CRASH] = "crash",
        [LAYOUT_MARK_RESTART] = "restart",
        [LAYOUT_MARK_WRITE_SKIPPED] = "write-skipped",
        [LAYOUT_MARK_CONTROL] = "control",
        [LAYOUT_MARK_REPL_COPY] = "replica-copy",
        [LAYOUT_MARK_REPL_DROP] = "replica-drop",
};

const char *layout_span_name(int kind) {
    if (kind < 0 || kind >= LAYOUT_SPAN_KIND_COUNT) return "unknown";
    return span_names[kind];
}

const char *layout_mark_name(int kind) {
    if (kind < 0 || kind >= LAYOUT_MARK_KIND_COUNT) return "unknown";
    return mark_names[kind];
}

/* Upper bounds on the spans and marks an event adds to its node's lane;
 * must cover every span_open / mark_add of apply() below. */
static void count_event(const struct trace_event *e, size_t *spans, size_t *marks) {
    switch ((enum trace_kind)e->kind) {
    case TRACE_ACQUIRE_START:
    case TRACE_PAUSE:
    case TRACE_SRV_RENEW:
        *spans += 1;
        *marks += e->kind == TRACE_SRV_RENEW;
        break;
    case TRACE_ACQUIRED:
    case TRACE_CRASH:
    case TRACE_SRV_GRANT:
        *spans += 1;
        *marks += 1;
        break;
    case TRACE_ACQUIRE_FAILED:
    case TRACE_CS_EXIT:
    case TRACE_WRONG_RELEASE:
    case TRACE_SRV_EXPIRE:
    case TRACE_SRV_DELETE:
    case TRACE_SRV_KEEP:
    case TRACE_READ:
    case TRACE_WRITE:
    case TRACE_CLOCK_STEP:
    case TRACE_RESTART:
    case TRACE_WRITE_SKIPPED:
    case TRACE_CONTROL: *marks += 1; break;
    case TRACE_SRV_NOTE: /* a replica's copy, or a leadership: a span and a mark */
        *spans += 1;
        *marks += 1;
        break;
    /* none: a double entry has a row of its own, a stale or late write flags its write's mark */
    case TRACE_RUN_START:
    case TRACE_RUN_END:
    case TRACE_RESUME:
    case TRACE_CLOCK_DRIFT:
    case TRACE_CLOCK_SLEW:
    case TRACE_PARTITION:
    case TRACE_HEAL:
    case TRACE_LINK:
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
    case TRACE_SRV_DENY:
    case TRACE_DOUBLE_ENTRY_BEGIN:
    case TRACE_DOUBLE_ENTRY_END:
    case TRACE_STALE_WRITE:
    case TRACE_RESOURCE_INIT:
    case TRACE_LATE_WRITE: break;
    }
}

/* What a server's note says about replication, from the notes of
 * sim/algo/kv_repl.c (a = owner, b = token): 1 a grant copied, 2 a release or
 * expiry copied, 3 a lock dropped on promotion; 0 none of these. */
static int repl_note(const struct trace_event *e) {
    static const char *const says[3] = {"replica: copies a grant", "replica: copies a release",
                                        "replica: drops a lock"};
    if (e->kind != TRACE_SRV_NOTE || !e->text) return 0;
    for (int k = 0; k < 3; k++)
        if (strncmp(e->text, says[k], strlen(says[k])) == 0) return k + 1;
    return 0;
}

static sim_ns clamp_t(const struct layout *ly, sim_ns t) {
    if (t < 0) return 0;
    return t > ly->t_end ? ly->t_end : t;
}

static size_t span_open(struct builder *b, int lane, int kind, sim_ns t) {
    struct layout_lane *ln = &b->ly->lanes[lane];
    size_t i = ln->nspans++;
    struct layout_span *s = &ln->spans[i];
    memset(s, 0, sizeof *s);
    s->t0 = s->t1 = clamp_t(b->ly, t);
    s->kind = (uint8_t)kind;
    s->end = LAYOUT_END_OPEN;
    s->peer = -1;
    return i;
}

/* Close the span at *slot (if open) at time t with the given end. */
static void span_close(struct builder *b, int lane, size_t *slot, sim_ns t, int end) {
    if (*slot == NONE) return;
    struct layout_span *s = &b->ly->lanes[lane].spans[*slot];
    s->t1 = clamp_t(b->ly, t);
    if (s->t1 < s->t0) s->t1 = s->t0;
    s->end = (uint8_t)end;
    *slot = NONE;
}

static struct layout_mark *mark_add(struct builder *b, int lane, int kind, const struct trace_event *e) {
    struct layout_lane *ln = &b->ly->lanes[lane];
    struct layout_mark *m = &ln->marks[ln->nmarks++];
    memset(m, 0, sizeof *m);
    m->t = clamp_t(b->ly, e->t);
    m->seq = e->seq;
    m->kind = (uint8_t)kind;
    m->peer = e->peer;
    m->other = -1;
    m->token = e->token;
    m->grant = e->grant;
    return m;
}

/* Leases: a list of open lease spans per server lane. */
static size_t lease_global(struct builder *b, int lane, size_t i) {
    return (size_t)(b->ly->lanes[lane].spans - b->ly->span_mem) + i;
}

static void lease_push(struct builder *b, int lane, size_t i) {
    b->lease_next[lease_global(b, lane, i)] = b->open[lane].lease_head;
    b->open[lane].lease_head = i;
}

/* Find the open lease matching grant (when non-zero), else owner; unlink it
 * from the open list and return its index, or NONE. */
static size_t lease_take(struct builder *b, int lane, uint32_t grant, int owner) {
    struct layout_span *sp = b->ly->lanes[lane].spans;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 0 && grant == 0) continue;
        size_t *link = &b->open[lane].lease_head;
        while (*link != NONE) {
            size_t i = *link;
            int hit = pass == 0 ? sp[i].grant == grant : sp[i].peer == owner;
            if (hit) {
                *link = b->lease_next[lease_global(b, lane, i)];
                return i;
            }
            link = &b->lease_next[lease_global(b, lane, i)];
        }
    }
    return NONE;
}

static void lease_close_all(struct builder *b, int lane, sim_ns t, int end) {
    while (b->open[lane].lease_head != NONE) {
        size_t i = b->open[lane].lease_head;
        b->open[lane].lease_head = b->lease_next[lease_global(b, lane, i)];
        span_close(b, lane, &i, t, end);
    }
}

/* The write at a resource that a TRACE_STALE_WRITE (same time, node = writer)
 * refers to: the latest such write mark. */
static struct layout_mark *find_write(struct builder *b, const struct trace_event *e) {
    struct layout_mark *best = NULL;
    for (int l = 0; l < b->ly->nlanes; l++) {
        struct layout_lane *ln = &b->ly->lanes[l];
        if (ln->kind != TRACE_NODE_RESOURCE) continue;
        for (size_t i = ln->nmarks; i-- > 0;) {
            struct layout_mark *m = &ln->marks[i];
            if (m->t != e->t) break;
            if ((m->kind == LAYOUT_MARK_WRITE_OK || m->kind == LAYOUT_MARK_WRITE_REJECTED) && m->peer == e->node &&
                (!best || m->seq > best->seq)) {
                best = m;
                break;
            }
        }
    }
    return best;
}

/* The client in the critical section under the newest grant newer than
 * grant, other than writer (the checker's TRACE_STALE_WRITE may not name
 * it), or -1. */
static int32_t newer_holder(struct builder *b, int writer, uint32_t grant) {
    int32_t best = -1;
    uint32_t best_grant = grant;
    for (int l = 0; l < b->ly->nlanes; l++) {
        if (l == writer || b->open[l].hold == NONE) continue;
        uint32_t g = b->ly->lanes[l].spans[b->open[l].hold].grant;
        if (g > best_grant) {
            best = l;
            best_grant = g;
        }
    }
    return best;
}

static int exit_end(int64_t reason) {
    switch (reason) {
    case TRACE_EXIT_RELEASE: return LAYOUT_END_RELEASE;
    case TRACE_EXIT_CRASH: return LAYOUT_END_CRASH;
    case TRACE_EXIT_LOST: return LAYOUT_END_LOST;
    case TRACE_EXIT_END: return LAYOUT_END_PROGRAM_END;
    default: return LAYOUT_END_REPLACED;
    }
}

/* A double entry begins (a row of its own) or the open one of the same
 * pair ends. */
static void apply_double(struct layout *ly, const struct trace_event *e) {
    if (e->kind == TRACE_DOUBLE_ENTRY_BEGIN) {
        struct layout_double *d = &ly->doubles[ly->ndoubles++];
        d->t0 = d->t1 = clamp_t(ly, e->t);
        d->a = e->node;
        d->b = e->peer;
        d->open = 1;
        return;
    }
    for (size_t i = ly->ndoubles; i-- > 0;) {
        struct layout_double *d = &ly->doubles[i];
        if (d->open && ((d->a == e->node && d->b == e->peer) || (d->a == e->peer && d->b == e->node))) {
            d->t1 = clamp_t(ly, e->t);
            d->open = 0;
            break;
        }
    }
}

/* A lease span on server n's lane for the grant or renewal e, valid for
 * validity_ns; returns its index (not yet pushed on the lane's leases). */
static size_t lease_open(struct builder *b, int n, const struct trace_event *e, sim_ns validity_ns) {
    size_t i = span_open(b, n, LAYOUT_SPAN_LEASE, e->t);
    struct layout_span *sp = &b->ly->lanes[n].spans[i];
    sp->peer = e->peer;
    sp->token = e->token;
    sp->grant = e->grant;
    sp->validity_ns = validity_ns;
    return i;
}

/* A replica's note of a copy (its replica span begins) or of a dropped copy
 * (the span ends), with its mark; other notes show nothing. */
static void apply_repl_note(struct builder *b, const struct trace_event *e) {
    struct layout *ly = b->ly;
    int n = e->node;
    int what = repl_note(e);
    int owner = e->a >= 0 && e->a < ly->nlanes ? (int)e->a : -1;
    if (!what) return;
    size_t i = lease_take(b, n, 0, owner);
    span_close(b, n, &i, e->t,
               what == 1   ? LAYOUT_END_REPLACED
               : what == 2 ? LAYOUT_END_RELEASE
                           : LAYOUT_END_DELETED_BY_OTHER);
    if (what == 1) {
        i = span_open(b, n, LAYOUT_SPAN_REPLICA, e->t);
        ly->lanes[n].spans[i].peer = owner;
        ly->lanes[n].spans[i].token = (uint64_t)e->b;
        lease_push(b, n, i);
    }
    struct layout_mark *m = mark_add(b, n, what == 1 ? LAYOUT_MARK_REPL_COPY : LAYOUT_MARK_REPL_DROP, e);
    m->peer = owner;
    m->token = (uint64_t)e->b;
    m->detail = what == 3;
}

/* A replica promoted at m->t: the latest lock another server still held
 * for its owner there (its lease open, or ended by that server's crash
 * within its TTL) that this replica never copied (no replica span of the
 * same owner and token begun by then) is the grant that never reached it:
 * m->peer and m->token name it, m->value = 1. */
static void promoted_without(struct builder *b, int n, struct layout_mark *m) {
    const struct layout *ly = b->ly;
    const struct layout_span *lacking = NULL;
    for (int l = 0; l < ly->nlanes; l++) {
        if (l == n || ly->lanes[l].kind != TRACE_NODE_SERVER) continue;
        for (size_t j = 0; j < ly->lanes[l].nspans; j++) {
            const struct layout_span *s = &ly->lanes[l].spans[j];
            int open = s->end == LAYOUT_END_OPEN, crashed = s->end == LAYOUT_END_CRASH;
            if (s->kind != LAYOUT_SPAN_LEASE || s->peer < 0 || s->t0 > m->t || !(open || crashed)) continue;
            if (crashed && s->validity_ns > 0 && m->t > s->t1 + s->validity_ns) continue; /* it had run out */
            int copied = 0;
            for (size_t k = 0; k < ly->lanes[n].nspans && !copied; k++) {
                const struct layout_span *r = &ly->lanes[n].spans[k];
                copied = r->kind == LAYOUT_SPAN_REPLICA && r->peer == s->peer && r->token == s->token && r->t0 <= m->t;
            }
            if (!copied && (!lacking || s->t0 >= lacking->t0)) lacking = s;
        }
    }
    if (!lacking) return;
    m->peer = lacking->peer;
    m->token = lacking->token;
    m->value = 1;
}

static int note_is(const struct trace_event *e, const char *prefix) {
    return strncmp(e->text, prefix, strlen(prefix)) == 0;
}

/* A server's note of its leadership or of a lock-delay (lock.h,
 * LOCK_NOTE_*): a leader or lock-delay span opens or closes. Returns 1 when
 * the note was one of them. */
static int apply_leader_note(struct builder *b, const struct trace_event *e) {
    struct open_state *os = &b->open[e->node];
    if (!e->text) return 0;
    if (note_is(e, LOCK_NOTE_LOCK_DELAY_OVER)) { /* first: it starts like the next */
        span_close(b, e->node, &os->delay, e->t, LAYOUT_END_EXPIRED);
        return 1;
    }
    if (note_is(e, LOCK_NOTE_LOCK_DELAY)) {
        span_close(b, e->node, &os->delay, e->t, LAYOUT_END_REPLACED);
        os->delay = span_open(b, e->node, LAYOUT_SPAN_LOCK_DELAY, e->t);
        b->ly->lanes[e->node].spans[os->delay].validity_ns = e->a;
        return 1;
    }
    if (strncmp(e->text, LOCK_NOTE_LEADER, strlen(LOCK_NOTE_LEADER)) == 0) {
        span_close(b, e->node, &os->leader, e->t, LAYOUT_END_REPLACED);
        os->leader = span_open(b, e->node, LAYOUT_SPAN_LEADER, e->t);
        b->ly->lanes[e->node].spans[os->leader].token = e->a > 0 ? (uint64_t)e->a : 0;
        return 1;
    }
    if (strncmp(e->text, LOCK_NOTE_STEPS_DOWN, strlen(LOCK_NOTE_STEPS_DOWN)) == 0) {
        span_close(b, e->node, &os->leader, e->t, LAYOUT_END_REPLACED);
        return 1;
    }
    return 0;
}

/* A client got the lock: its wait ends, its holding span opens. */
static void apply_acquired(struct builder *b, const struct trace_event *e) {
    struct layout *ly = b->ly;
    int n = e->node;
    struct open_state *os = &b->open[n];
    struct layout_mark *m;
    span_close(b, n, &os->acq, e->t, LAYOUT_END_ACQUIRED);
    span_close(b, n, &os->hold, e->t, LAYOUT_END_REPLACED);
    os->hold = span_open(b, n, LAYOUT_SPAN_HOLDING, e->t);
    ly->lanes[n].spans[os->hold].token = e->token;
    ly->lanes[n].spans[os->hold].grant = e->grant;
    ly->lanes[n].spans[os->hold].validity_ns = e->a;
    m = mark_add(b, n, LAYOUT_MARK_ACQUIRED, e);
    m->value = e->a;
}

/* A crash ends whatever the node was doing or showing. */
static void apply_crash(struct builder *b, const struct trace_event *e) {
    int n = e->node;
    struct open_state *os = &b->open[n];
    span_close(b, n, &os->acq, e->t, LAYOUT_END_CRASH);
    span_close(b, n, &os->hold, e->t, LAYOUT_END_CRASH);
    span_close(b, n, &os->pause, e->t, LAYOUT_END_CRASH);
    span_close(b, n, &os->leader, e->t, LAYOUT_END_CRASH);
    span_close(b, n, &os->delay, e->t, LAYOUT_END_CRASH);
    lease_close_all(b, n, e->t, LAYOUT_END_CRASH);
    if (os->crash == NONE) os->crash = span_open(b, n, LAYOUT_SPAN_CRASHED, e->t);
    mark_add(b, n, LAYOUT_MARK_CRASH, e);
}

/* A server grants a lease: the one it replaces ends. */
static void apply_grant(struct builder *b, const struct trace_event *e) {
    int n = e->node;
    size_t i;
    i = lease_take(b, n, 0, e->peer);
    span_close(b, n, &i, e->t, LAYOUT_END_REPLACED);
    lease_push(b, n, lease_open(b, n, e, e->a));
    mark_add(b, n, LAYOUT_MARK_GRANT, e)->value = e->a;
}

/* A server renews a lease. */
static void apply_renew(struct builder *b, const struct trace_event *e) {
    struct layout *ly = b->ly;
    int n = e->node;
    size_t i;
    i = lease_take(b, n, e->grant, e->peer);
    if (i == NONE) i = lease_open(b, n, e, 0); /* a renewal the trace did not show granted */
    ly->lanes[n].spans[i].validity_ns = e->a;
    lease_push(b, n, i);
    mark_add(b, n, LAYOUT_MARK_RENEW, e)->value = e->a;
}

/* A server's lease expires. */
static void apply_expire(struct builder *b, const struct trace_event *e) {
    int n = e->node;
    size_t i;
    i = lease_take(b, n, e->grant, e->peer);
    span_close(b, n, &i, e->t, LAYOUT_END_EXPIRED);
    mark_add(b, n, LAYOUT_MARK_EXPIRE, e);
}

/* A server deletes a lock, on its holder's release or another's. */
static void apply_delete(struct builder *b, const struct trace_event *e) {
    int n = e->node;
    struct layout_mark *m;
    size_t i;
    i = lease_take(b, n, e->grant, (int)e->a);
    span_close(b, n, &i, e->t, e->b ? LAYOUT_END_DELETED_BY_OTHER : LAYOUT_END_RELEASE);
    m = mark_add(b, n, LAYOUT_MARK_DELETE, e);
    m->value = e->a;
    m->detail = e->b;
}

/* A write at the resource, accepted or not. */
static void apply_write(struct builder *b, const struct trace_event *e) {
    int n = e->node;
    struct layout_mark *m;
    m = mark_add(b, n, e->b == TRACE_WRITE_ACCEPTED ? LAYOUT_MARK_WRITE_OK : LAYOUT_MARK_WRITE_REJECTED, e);
    m->value = e->a;
    m->detail = e->b;
    m->set = (uint8_t)trace_write_is_set(e->text);
}

/* The checker found a write late but harmless: mark the write. */
static void apply_late(struct builder *b, const struct trace_event *e) {
    struct layout_mark *m;
    m = find_write(b, e);
    if (m) {
        m->late = 1;
        m->other = newer_holder(b, e->node, e->grant);
    }
}

/* The checker found a write stale: mark the write and whose lock it broke. */
static void apply_stale(struct builder *b, const struct trace_event *e) {
    struct layout_mark *m;
    m = find_write(b, e);
    if (m) {
        m->stale = 1;
        m->other = e->peer != TRACE_NO_NODE ? e->peer : newer_holder(b, e->node, e->grant);
    }
}

static void apply(struct builder *b, const struct trace_event *e) {
    struct layout *ly = b->ly;
    int n = e->node;
    if (e->kind == TRACE_DOUBLE_ENTRY_BEGIN || e->kind == TRACE_DOUBLE_ENTRY_END) {
        apply_double(ly, e);
        return;
    }
    if (n < 0 || n >= ly->nlanes) return;
    struct open_state *os = &b->open[n];
    struct layout_mark *m;
    switch ((enum trace_kind)e->kind) {
    case TRACE_ACQUIRE_START:
        span_close(b, n, &os->acq, e->t, LAYOUT_END_REPLACED);
        os->acq = span_open(b, n, LAYOUT_SPAN_ACQUIRING, e->t);
        break;
    case TRACE_ACQUIRED: apply_acquired(b, e); break;
    case TRACE_ACQUIRE_FAILED:
        span_close(b, n, &os->acq, e->t, LAYOUT_END_FAILED);
        mark_add(b, n, LAYOUT_MARK_ACQUIRE_FAILED, e)->value = e->a;
        break;
    case TRACE_CS_EXIT:
        span_close(b, n, &os->hold, e->t, exit_end(e->a));
        if (e->a == TRACE_EXIT_RELEASE) mark_add(b, n, LAYOUT_MARK_RELEASE, e);
        else if (e->a == TRACE_EXIT_LOST) mark_add(b, n, LAYOUT_MARK_LOST, e);
        break;
    case TRACE_WRONG_RELEASE: mark_add(b, n, LAYOUT_MARK_WRONG_RELEASE, e); break;
    case TRACE_PAUSE:
        if (os->pause == NONE) os->pause = span_open(b, n, LAYOUT_SPAN_PAUSED, e->t);
        break;
    case TRACE_RESUME: span_close(b, n, &os->pause, e->t, LAYOUT_END_RESUME); break;
    case TRACE_CRASH: apply_crash(b, e); break;
    case TRACE_RESTART:
        span_close(b, n, &os->crash, e->t, LAYOUT_END_RESTART);
        mark_add(b, n, LAYOUT_MARK_RESTART, e);
        break;
    case TRACE_CLOCK_STEP:
        if (e->b & TRACE_CLOCK_AT_START) break; /* how the clock starts: the clock lane shows it */
        m = mark_add(b, n, LAYOUT_MARK_CLOCK_STEP, e);
        m->value = e->a;
        m->detail = e->b;
        break;
    case TRACE_SRV_GRANT: apply_grant(b, e); break;
    case TRACE_SRV_RENEW: apply_renew(b, e); break;
    case TRACE_SRV_EXPIRE: apply_expire(b, e); break;
    case TRACE_SRV_DELETE: apply_delete(b, e); break;
    case TRACE_SRV_KEEP: mark_add(b, n, LAYOUT_MARK_KEEP, e); break;
    case TRACE_WRITE_SKIPPED: mark_add(b, n, LAYOUT_MARK_WRITE_SKIPPED, e)->detail = e->a; break;
    case TRACE_CONTROL:
        m = mark_add(b, n, LAYOUT_MARK_CONTROL, e);
        m->detail = e->a;
        if (e->a == LOCK_CONTROL_PROMOTE) promoted_without(b, n, m);
        break;
    case TRACE_SRV_NOTE:
        if (!apply_leader_note(b, e)) apply_repl_note(b, e);
        break;
    case TRACE_READ: mark_add(b, n, LAYOUT_MARK_READ, e)->value = e->a; break;
    case TRACE_WRITE: apply_write(b, e); break;
    case TRACE_LATE_WRITE: apply_late(b, e); break;
    case TRACE_STALE_WRITE: apply_stale(b, e); break;
    /* nothing on the node's lane (a double entry is drawn on its own row, above) */
    case TRACE_RUN_START:
    case TRACE_RUN_END:
    case TRACE_CLOCK_DRIFT:
    case TRACE_CLOCK_SLEW:
    case TRACE_PARTITION:
    case TRACE_HEAL:
    case TRACE_LINK:
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
    case TRACE_SRV_DENY:
    case TRACE_DOUBLE_ENTRY_BEGIN:
    case TRACE_DOUBLE_ENTRY_END:
    case TRACE_RESOURCE_INIT: break;
    }
}

void layout_close(struct layout *ly) {
    free(ly->parts);
    free(ly->msgs);
    free(ly->lanes);
    free(ly->doubles);
    free(ly->span_mem);
    free(ly->mark_mem);
    free(ly->clock_mem);
    memset(ly, 0, sizeof *ly);
}

/* Messages: sends in order, matched to their receipt or drop by id (ids
 * are handed out 1, 2, 3 ... but nothing here relies on it beyond the
 * index from id to message). Returns 0 or -1 when out of memory. */
static int build_messages(struct layout *ly, const struct trace *tr) {
    size_t n = 0;
    uint32_t max_id = 0;
    for (size_t i = 0; i < tr->len; i++)
        if (tr->ev[i].kind == TRACE_MSG_SEND) {
            n++;
            if (tr->ev[i].a > 0 && tr->ev[i].a <= UINT32_MAX && (uint32_t)tr->ev[i].a > max_id)
                max_id = (uint32_t)tr->ev[i].a;
        }
    if (!n) return 0;
    uint32_t *idx = calloc((size_t)max_id + 1, sizeof *idx); /* id -> message index + 1 */
    ly->msgs = malloc(n * sizeof *ly->msgs);
    if (!idx || !ly->msgs) {
        free(idx);
        return -1;
    }
    for (size_t i = 0; i < tr->len; i++) {
        const struct trace_event *e = &tr->ev[i];
        uint32_t id = e->a > 0 && e->a <= max_id ? (uint32_t)e->a : 0;
        if (e->kind == TRACE_MSG_SEND) {
            struct layout_msg *m = &ly->msgs[ly->nmsgs];
            *m = (struct layout_msg){e->t, ly->t_end, e->node, e->peer, id, (int32_t)e->b, 2, 0};
            if (id) idx[id] = (uint32_t)++ly->nmsgs;
            else ly->nmsgs++;
        } else if ((e->kind == TRACE_MSG_RECV || e->kind == TRACE_MSG_DROP) && id && idx[id]) {
            struct layout_msg *m = &ly->msgs[idx[id] - 1];
            if (m->fate != 2) continue;
            m->t1 = e->t;
            m->fate = e->kind == TRACE_MSG_RECV ? 0 : 1;
            if (e->kind == TRACE_MSG_DROP) m->drop = (uint8_t)e->b;
        }
    }
    free(idx);
    return 0;
}

/* (dt * ppm) / 10^6 without overflow for any run length and rate. */
static sim_ns ppm_of(sim_ns dt, int64_t ppm) { return dt / 1000000 * ppm + dt % 1000000 * ppm / 1000000; }

sim_ns layout_clock_offset(const struct layout_lane *ln, sim_ns t) {
    const struct layout_clock *p = NULL;
    size_t lo = 0, hi = ln->nclock; /* the last point at or before t */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ln->clock[mid].t <= t) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return 0;
    p = &ln->clock[lo - 1];
    return p->offset_ns + ppm_of(t - p->t, p->ppm);
}

/* The slew's rate, as the engine computes it (sim/engine_fault.c): delta /
 * dur in ppm, capped at twice CLOCK_PPM_MAX; the wall clock's whole rate is
 * then capped at CLOCK_PPM_MAX (500000). */
static int64_t slew_rate(sim_ns delta, sim_ns dur) {
    if (dur <= 0) return 0;
    if (delta / dur != 0) return delta > 0 ? 1000000 : -1000000;
    int64_t r = delta < 0 ? -delta : delta, q = 0;
    for (int digit = 0; digit < 6; digit++) {
        r *= 10;
        q = q * 10 + r / dur;
        r %= dur;
    }
    return delta < 0 ? -q : q;
}

static int64_t cap_ppm(int64_t ppm) { return ppm > 500000 ? 500000 : ppm < -500000 ? -500000 : ppm; }

/* Per node while the clocks are built. */
struct clock_state {
    int64_t base, slew; /* drift and slew ppm */
    sim_ns slew_end;    /* when the slew ends, or -1 */
};

static struct layout_clock *clock_point(struct layout_lane *ln, struct clock_state *cs, sim_ns t, int kind) {
    struct layout_clock *p = &ln->clock[ln->nclock];
    sim_ns off = layout_clock_offset(ln, t);
    memset(p, 0, sizeof *p);
    p->t = t;
    p->kind = (uint8_t)kind;
    p->offset_ns = off;
    p->ppm = cap_ppm(cs->base + cs->slew);
    ln->nclock++;
    return p;
}

/* Each node's clock from its clock events: a START point, then one point per
 * step, drift and slew, and one where each slew ends. */
static int build_clocks(struct layout *ly, const struct trace *tr) {
    size_t *cnt = calloc(ly->nlanes > 0 ? (size_t)ly->nlanes : 1, sizeof *cnt), total = 0;
    if (!cnt) return -1;
    for (size_t i = 0; i < tr->len; i++) {
        const struct trace_event *e = &tr->ev[i];
        if (e->node < 0 || e->node >= ly->nlanes) continue;
        if (e->kind == TRACE_CLOCK_STEP || e->kind == TRACE_CLOCK_DRIFT) cnt[e->node] += 1;
        if (e->kind == TRACE_CLOCK_SLEW) cnt[e->node] += 2;
    }
    for (int l = 0; l < ly->nlanes; l++) total += cnt[l] ? cnt[l] + 1 : 0;
    if (!total) {
        free(cnt);
        return 0;
    }
    struct clock_state *cs = calloc((size_t)ly->nlanes, sizeof *cs);
    ly->clock_mem = malloc(total * sizeof *ly->clock_mem);
    if (!cs || !ly->clock_mem) {
        free(cnt);
        free(cs);
        return -1;
    }
    size_t at = 0;
    for (int l = 0; l < ly->nlanes; l++) {
        struct layout_lane *ln = &ly->lanes[l];
        cs[l].slew_end = -1;
        if (!cnt[l]) continue;
        ln->clock = ly->clock_mem + at;
        at += cnt[l] + 1;
        clock_point(ln, &cs[l], 0, LAYOUT_CLOCK_START);
    }
    for (size_t i = 0; i <= tr->len; i++) {
        const struct trace_event *e = i < tr->len ? &tr->ev[i] : NULL;
        sim_ns t = e ? clamp_t(ly, e->t) : ly->t_end;
        int l0 = e ? e->node : 0, l1 = e ? e->node + 1 : ly->nlanes;
        if (l0 < 0 || l1 > ly->nlanes) l0 = l1 = 0;
        for (int l = l0; l < l1; l++) { /* the node's slew, if it ended by now */
            if (cs[l].slew_end < 0 || cs[l].slew_end > t || !cnt[l]) continue;
            sim_ns end = cs[l].slew_end;
            cs[l].slew = 0;
            cs[l].slew_end = -1;
            clock_point(&ly->lanes[l], &cs[l], end, LAYOUT_CLOCK_SLEW_END);
        }
        if (!e || e->node < 0 || e->node >= ly->nlanes || !cnt[e->node]) continue;
        struct layout_lane *ln = &ly->lanes[e->node];
        struct clock_state *c = &cs[e->node];
        struct layout_clock *p;
        switch ((enum trace_kind)e->kind) {
        case TRACE_CLOCK_STEP:
            p = clock_point(ln, c, t, LAYOUT_CLOCK_STEP);
            p->step_ns = e->a;
            p->which = (uint8_t)e->b;           /* with TRACE_CLOCK_AT_START: how it starts */
            if (e->b & 1) p->offset_ns += e->a; /* the wall clock jumps */
            p->seq = e->seq;
            break;
        case TRACE_CLOCK_DRIFT:
            c->base = e->a;
            p = clock_point(ln, c, t, LAYOUT_CLOCK_DRIFT);
            p->value = e->a;
            p->seq = e->seq;
            break;
        case TRACE_CLOCK_SLEW:
            c->slew = slew_rate(e->a, e->b);
            c->slew_end = e->b > 0 && t + e->b <= ly->t_end ? t + e->b : -1;
            p = clock_point(ln, c, t, LAYOUT_CLOCK_SLEW);
            p->value = e->a;
            p->over_ns = e->b;
            p->seq = e->seq;
            break;
        /* not the clock's */
        case TRACE_RUN_START:
        case TRACE_RUN_END:
        case TRACE_PAUSE:
        case TRACE_RESUME:
        case TRACE_CRASH:
        case TRACE_RESTART:
        case TRACE_PARTITION:
        case TRACE_HEAL:
        case TRACE_LINK:
        case TRACE_MSG_SEND:
        case TRACE_MSG_RECV:
        case TRACE_MSG_DROP:
        case TRACE_ACQUIRE_START:
        case TRACE_ACQUIRE_TRY:
        case TRACE_ACQUIRED:
        case TRACE_ACQUIRE_DENIED:
        case TRACE_ACQUIRE_FAILED:
        case TRACE_CS_EXIT:
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
        case TRACE_WRITE:
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
    free(cnt);
    free(cs);
    return 0;
}

/* Partitions: each `partition` event opens one (ending the one before),
 * `heal` ends it; one still in force ends with the trace (open, unless the
 * trace is a prefix cut there). Returns 0 or -1 when out of memory. */
static int build_partitions(struct layout *ly, const struct trace *tr, int cut) {
    size_t n = 0;
    for (size_t i = 0; i < tr->len; i++) n += tr->ev[i].kind == TRACE_PARTITION;
    if (!n) return 0;
    ly->parts = calloc(n, sizeof *ly->parts);
    if (!ly->parts) return -1;
    struct layout_partition *open = NULL;
    for (size_t i = 0; i < tr->len; i++) {
        const struct trace_event *e = &tr->ev[i];
        if (e->kind != TRACE_PARTITION && e->kind != TRACE_HEAL) continue;
        if (open) {
            open->t1 = e->t;
            open->healed = e->kind == TRACE_HEAL;
            open = NULL;
        }
        if (e->kind == TRACE_HEAL) continue;
        open = &ly->parts[ly->nparts++];
        open->t0 = e->t;
        snprintf(open->groups, sizeof open->groups, "%s", e->text ? e->text : "");
    }
    if (open) {
        open->t1 = ly->t_end;
        open->open = !cut;
    }
    return 0;
}

int layout_build(struct layout *out, const struct trace *tr) { return layout_build_prefix(out, tr, tr->len, -1); }

size_t layout_events_until(const struct trace *tr, sim_ns until) {
    size_t lo = 0, hi = tr->len; /* events are in time order: the first later than until */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (tr->ev[mid].t <= until) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

int layout_build_prefix(struct layout *out, const struct trace *whole, size_t nev, sim_ns until) {
    struct layout *ly = out;
    memset(ly, 0, sizeof *ly);
    struct trace view = *whole; /* the first nev events only: nothing after them is read */
    if (nev < view.len) view.len = nev;
    const struct trace *tr = &view;
    int nl = tr->nnodes > 0 ? tr->nnodes : 0;
    size_t *nspan = NULL, *nmark = NULL;
    struct builder b = {ly, NULL, NULL};

    /* The end of the timeline: the run's end, or the instant revealed. */
    for (size_t i = 0; i < tr->len; i++) {
        if (tr->ev[i].t > ly->t_end) ly->t_end = tr->ev[i].t;
        if (tr->ev[i].kind == TRACE_RUN_END) {
            ly->t_end = tr->ev[i].t < 0 ? 0 : tr->ev[i].t;
            break;
        }
    }
    if (until >= 0 && until > ly->t_end) ly->t_end = until;

    /* Counting pass: sizes of every lane's span and mark storage. */
    size_t cells = nl ? (size_t)nl : 1;
    nspan = calloc(cells, sizeof *nspan);
    nmark = calloc(cells, sizeof *nmark);
    if (!nspan || !nmark) goto oom;
    size_t tspan = 0, tmark = 0, tdouble = 0;
    for (size_t i = 0; i < tr->len; i++) {
        const struct trace_event *e = &tr->ev[i];
        if (e->kind == TRACE_DOUBLE_ENTRY_BEGIN) tdouble++;
        if (e->node < 0 || e->node >= nl) continue;
        size_t s = 0, m = 0;
        count_event(e, &s, &m);
        nspan[e->node] += s;
        nmark[e->node] += m;
        tspan += s;
        tmark += m;
    }

    ly->lanes = calloc(cells, sizeof *ly->lanes);
    ly->span_mem = malloc((tspan ? tspan : 1) * sizeof *ly->span_mem);
    ly->mark_mem = malloc((tmark ? tmark : 1) * sizeof *ly->mark_mem);
    ly->doubles = malloc((tdouble ? tdouble : 1) * sizeof *ly->doubles);
    b.open = malloc(cells * sizeof *b.open);
    b.lease_next = malloc((tspan ? tspan : 1) * sizeof *b.lease_next);
    if (!ly->lanes || !ly->span_mem || !ly->mark_mem || !ly->doubles || !b.open || !b.lease_next) goto oom;
    ly->nlanes = nl;
    size_t so = 0, mo = 0;
    for (int l = 0; l < nl; l++) {
        struct layout_lane *ln = &ly->lanes[l];
        ln->node = l;
        ln->kind = tr->nodes[l].kind;
        memcpy(ln->name, tr->nodes[l].name, sizeof ln->name);
        ln->name[sizeof ln->name - 1] = '\0';
        ln->spans = ly->span_mem + so;
        ln->marks = ly->mark_mem + mo;
        so += nspan[l];
        mo += nmark[l];
        b.open[l] = (struct open_state){.acq = NONE,
                                        .hold = NONE,
                                        .pause = NONE,
                                        .crash = NONE,
                                        .leader = NONE,
                                        .delay = NONE,
                                        .lease_head = NONE};
    }

    /* Building pass. */
    for (size_t i = 0; i < tr->len; i++) apply(&b, &tr->ev[i]);

    /* Whatever is still open ends with the trace, or where a prefix is cut. */
    int end = until >= 0 ? LAYOUT_END_CUT : LAYOUT_END_OPEN;
    for (int l = 0; l < nl; l++) {
        struct open_state *os = &b.open[l];
        span_close(&b, l, &os->acq, ly->t_end, end);
        span_close(&b, l, &os->hold, ly->t_end, end);
        span_close(&b, l, &os->pause, ly->t_end, end);
        span_close(&b, l, &os->crash, ly->t_end, end);
        span_close(&b, l, &os->leader, ly->t_end, end);
        span_close(&b, l, &os->delay, ly->t_end, end);
        lease_close_all(&b, l, ly->t_end, end);
    }
    for (size_t i = 0; i < ly->ndoubles; i++)
        if (ly->doubles[i].open) {
            ly->doubles[i].t1 = ly->t_end;
            if (until >= 0) ly->doubles[i].open = 0; /* drawn up to the cut, not to the axis' end */
        }
    if (build_messages(ly, tr) != 0) goto oom;
    if (build_clocks(ly, tr) != 0) goto oom;
    if (build_partitions(ly, tr, until >= 0) != 0) goto oom;

    free(nspan);
    free(nmark);
    free(b.open);
    free(b.lease_next);
    return 0;
oom:
    free(nspan);
    free(nmark);
    free(b.open);
    free(b.lease_next);
    layout_close(ly);
    return -1;
}
