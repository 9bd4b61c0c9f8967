/* Layout: what goes where on a timeline, computed from the trace alone.
 * A pure step with no drawing, shared by every renderer (terminal now; SVG,
 * PNG and the SDL window later): one lane per node holding typed intervals
 * ("spans") and typed instants ("marks"), the double-entry intervals, the
 * time span [0, t_end], and a helper that fits a round-numbered time axis to
 * a number of cells (terminal columns or pixels). */
#ifndef LOCKSIM_LAYOUT_H
#define LOCKSIM_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"
#include "vtime.h"

/* Intervals. All times are true time, t0 <= t1, clamped to [0, t_end]. */
enum layout_span_kind {
    LAYOUT_SPAN_ACQUIRING,  /* client: ACQUIRE_START .. ACQUIRED / ACQUIRE_FAILED */
    LAYOUT_SPAN_HOLDING,    /* client: in the critical section, ACQUIRED .. CS_EXIT
                              (paused or not); token = its fencing token */
    LAYOUT_SPAN_PAUSED,     /* any node: PAUSE .. RESUME */
    LAYOUT_SPAN_CRASHED,    /* any node: CRASH .. RESTART */
    LAYOUT_SPAN_LEASE,      /* server: a lease valid as this server sees it,
                              SRV_GRANT .. SRV_EXPIRE / SRV_DELETE / server crash;
                              peer = owner client, token = the grant's token */
    LAYOUT_SPAN_REPLICA,    /* server: a lock a replica copied from its primary,
                              copy .. copied release / drop / crash; peer = owner,
                              token = the copy's token (SRV_NOTE "replica: ...") */
    LAYOUT_SPAN_LEADER,     /* server: leads a replicated lock service, from its
                              LOCK_NOTE_LEADER note to a LOCK_NOTE_STEPS_DOWN note
                              or its crash; token = the term */
    LAYOUT_SPAN_LOCK_DELAY, /* server: withholds a failed holder's lock (Chubby's
                              lock-delay), LOCK_NOTE_LOCK_DELAY .. _OVER or its
                              crash; validity_ns = the delay */
    LAYOUT_SPAN_KIND_COUNT
};

/* How a span ended. */
enum layout_end {
    LAYOUT_END_OPEN = 0,         /* still open when the trace ended; t1 = t_end */
    LAYOUT_END_ACQUIRED,         /* acquiring: got the lock */
    LAYOUT_END_FAILED,           /* acquiring: gave up */
    LAYOUT_END_RELEASE,          /* holding: released; lease: deleted on its owner's release */
    LAYOUT_END_CRASH,            /* the node crashed (client, or the server for a lease) */
    LAYOUT_END_LOST,             /* holding: the algorithm learnt it lost the lock */
    LAYOUT_END_PROGRAM_END,      /* holding: the program ended without releasing */
    LAYOUT_END_EXPIRED,          /* lease: its TTL ran out on the server */
    LAYOUT_END_DELETED_BY_OTHER, /* lease: removed by another client's release */
    LAYOUT_END_RESUME,           /* paused: resumed */
    LAYOUT_END_RESTART,          /* crashed: restarted */
    LAYOUT_END_REPLACED,         /* a new span of the same kind began before an end event */
    LAYOUT_END_CUT               /* still open at the instant a prefix layout shows
                              (layout_build_prefix); t1 = that instant, drawn up to it */
};

struct layout_span {
    sim_ns t0, t1;      /* true time, ns */
    uint8_t kind;       /* enum layout_span_kind */
    uint8_t end;        /* enum layout_end */
    int32_t peer;       /* LEASE: owner client node; else -1 */
    uint64_t token;     /* HOLDING, LEASE: fencing token (0 = none) */
    uint32_t grant;     /* HOLDING, LEASE: ground-truth grant id (0 = none) */
    sim_ns validity_ns; /* LEASE: ttl (last renewal's); HOLDING: validity the
                              client believes (0 = unbounded / unknown) */
};

/* Instants. */
enum layout_mark_kind {
    LAYOUT_MARK_ACQUIRED,       /* client got the lock: token, grant, value = believed validity */
    LAYOUT_MARK_ACQUIRE_FAILED, /* client gave up: value = attempts */
    LAYOUT_MARK_RELEASE,        /* client left the critical section by releasing */
    LAYOUT_MARK_LOST,           /* client learnt it lost the lock and left */
    LAYOUT_MARK_WRONG_RELEASE,  /* client's release removed peer's lock */
    LAYOUT_MARK_GRANT,          /* server granted: peer = owner, token, grant, value = ttl */
    LAYOUT_MARK_RENEW,          /* server renewed: peer = owner, value = new ttl */
    LAYOUT_MARK_EXPIRE,         /* server: peer's lease expired */
    LAYOUT_MARK_DELETE,         /* server deleted a lease on peer's release:
                                  value = owner node, detail = 1 if not peer's own */
    LAYOUT_MARK_KEEP,           /* server refused peer's release (lock is not peer's) */
    LAYOUT_MARK_READ,           /* resource: peer read value */
    LAYOUT_MARK_WRITE_OK,       /* resource: peer wrote value with token; accepted */
    LAYOUT_MARK_WRITE_REJECTED, /* resource: refused; detail = enum trace_write */
    LAYOUT_MARK_CLOCK_STEP,     /* value = delta ns, detail = 1 wall, 2 mono, 3 both */
    LAYOUT_MARK_CRASH,
    LAYOUT_MARK_RESTART,
    LAYOUT_MARK_WRITE_SKIPPED, /* client did not send a write: detail = enum trace_skip,
                                  token = its token */
    LAYOUT_MARK_CONTROL,       /* operator action on a server: detail = enum lock_control;
                                  a promotion with value 1 lacked peer's lock (token): the
                                  old primary granted it and it never reached this replica */
    LAYOUT_MARK_REPL_COPY,     /* replica copied a grant: peer = owner, token */
    LAYOUT_MARK_REPL_DROP,     /* replica copied a release or expiry (detail 0), or
                                  dropped a lock its new primary never had (detail 1):
                                  peer = owner, token */
    LAYOUT_MARK_KIND_COUNT
};

struct layout_mark {
    sim_ns t;       /* true time, ns */
    uint32_t seq;   /* the trace event it comes from */
    uint8_t kind;   /* enum layout_mark_kind */
    uint8_t stale;  /* WRITE_*: the checker flagged it a stale write */
    uint8_t late;   /* WRITE_OK: a late write (TRACE_LATE_WRITE): under a superseded
                              grant, but before any operation of the newer one */
    uint8_t set;    /* WRITE_*: an absolute write (write set=V): value is V as given */
    int32_t peer;   /* other node (see the kind), or -1 */
    int32_t other;  /* WRITE_* when stale: the client holding the newer
                              grant (TRACE_STALE_WRITE's peer, else the client
                              in the critical section under the newest grant),
                              or -1 */
    uint64_t token; /* fencing token (0 = none) */
    uint32_t grant; /* ground-truth grant id (0 = none) */
    int64_t value;  /* see the kind */
    int64_t detail; /* see the kind */
};

/* A node's wall clock against true time, piecewise linear: from t on (to
 * the next point) it reads true time + offset_ns + (t' - t) * ppm / 10^6.
 * A lane's first point is at 0 with offset 0; a scenario's `clock` header
 * line follows at 0, as a STEP with which & TRACE_CLOCK_AT_START (the
 * offset it starts with) and a DRIFT. */
enum layout_clock_kind {
    LAYOUT_CLOCK_START,    /* t = 0: offset 0, rate 0 */
    LAYOUT_CLOCK_STEP,     /* the clock jumped by step_ns (TRACE_CLOCK_STEP) */
    LAYOUT_CLOCK_DRIFT,    /* a new drift: value = its ppm (TRACE_CLOCK_DRIFT) */
    LAYOUT_CLOCK_SLEW,     /* a slew began: value = its delta ns over over_ns */
    LAYOUT_CLOCK_SLEW_END, /* the slew is done (over_ns after it began) */
};

struct layout_clock {
    sim_ns t;         /* true time, ns */
    sim_ns offset_ns; /* wall clock minus true time just after t */
    sim_ns step_ns;   /* STEP: the jump (wall or monotonic, see which) */
    int64_t ppm;      /* the wall clock's rate error from t on (drift + slew) */
    int64_t value;    /* DRIFT: ppm; SLEW: delta ns */
    sim_ns over_ns;   /* SLEW: over how long */
    uint32_t seq;     /* the trace event (0 for START) */
    uint8_t kind;     /* enum layout_clock_kind */
    uint8_t which;    /* STEP: 1 wall, 2 monotonic, 3 both */
};

/* One lane per trace node; lane i shows node i, in registration order
 * (clients, lock servers, then the resource). Spans are ordered by t0 and
 * marks by t (then trace order). */
struct layout_lane {
    int node;                  /* trace node index (== lane index) */
    int kind;                  /* enum trace_node_kind */
    char name[16];             /* copied from the trace */
    struct layout_span *spans; /* borrowed from the layout's storage */
    size_t nspans;
    struct layout_mark *marks; /* borrowed from the layout's storage */
    size_t nmarks;
    struct layout_clock *clock; /* borrowed from the layout's storage; NULL and 0
                                  when the node's clock never changed */
    size_t nclock;
};

/* Two clients in the critical section at once (checker findings). */
struct layout_double {
    sim_ns t0, t1; /* true time, ns; t1 = t_end when still open */
    int32_t a, b;  /* the two client nodes, as the BEGIN event gives
                              them (node, peer) */
    uint8_t open;  /* 1 = no END before the trace ended */
};

/* A message between two nodes: sent, then received, dropped, or still in
 * flight when the trace ended. */
struct layout_msg {
    sim_ns t0, t1;    /* true time sent, received (or dropped; t_end when in flight) */
    int32_t from, to; /* sender and receiver nodes */
    uint32_t id;      /* the trace's message id */
    int32_t type;     /* the message type (the trace's b) */
    uint8_t fate;     /* 0 received, 1 dropped, 2 still in flight */
    uint8_t drop;     /* when dropped: enum trace_drop */
};

/* A network partition from `partition` to `heal` (or the next partition,
 * or the end): its groups as the scenario wrote them ("S1 S2 B | S3 S4 S5 A R",
 * cut to fit). */
struct layout_partition {
    sim_ns t0, t1;
    int open;   /* still in force at the end of the trace */
    int healed; /* a heal ended it (else it is in force where the trace, or its prefix, ends) */
    char groups[128];
};

struct layout {
    sim_ns t_end;                   /* the timeline spans [0, t_end] */
    struct layout_partition *parts; /* owned, in time order */
    size_t nparts;
    struct layout_msg *msgs; /* owned, in order of sending */
    size_t nmsgs;
    struct layout_lane *lanes; /* owned; nlanes == trace nnodes */
    int nlanes;
    struct layout_double *doubles; /* owned, ordered by t0 */
    size_t ndoubles;
    struct layout_span *span_mem;   /* owned storage behind lanes[].spans */
    struct layout_mark *mark_mem;   /* owned storage behind lanes[].marks */
    struct layout_clock *clock_mem; /* owned storage behind lanes[].clock */
};

/* Build the layout of a trace (reads tr only; the layout keeps no pointer
 * into it). t_end is the time of TRACE_RUN_END, else of the last event, else
 * 0; intervals still open then are closed at t_end (end = LAYOUT_END_OPEN).
 * Returns 0, or -1 when out of memory, with *out zeroed. Free with
 * layout_close, which is also safe on a zeroed or failed layout. */
int layout_build(struct layout *out, const struct trace *tr);
/* The layout of what had happened by a point of the run: the first nev
 * events of tr only, and (until >= 0) the timeline going on to until, where
 * whatever is still open ends (a lock held, a lease, a message in flight, a
 * double entry), as if the trace stopped there. nev = tr->len with until
 * -1 is layout_build. Same returns. */
int layout_build_prefix(struct layout *out, const struct trace *tr, size_t nev, sim_ns until);
/* How many of tr's events (in time order) happen at or before until. */
size_t layout_events_until(const struct trace *tr, sim_ns until);
void layout_close(struct layout *ly);

/* The wall clock's offset from true time (reading minus true time) of a
 * lane at true time t: just after a step at t, the stepped value. */
sim_ns layout_clock_offset(const struct layout_lane *ln, sim_ns t);

/* Short stable names ("holding", "write-rejected") for tests and debugging. */
const char *layout_span_name(int kind);
const char *layout_mark_name(int kind);

/* A round-numbered time axis fitted to cells (terminal columns, pixels):
 * cell c shows true time [c * cell_ns, (c + 1) * cell_ns); the last cell
 * holds t_end. cell_ns and tick_ns are "nice" (1, 2, 5 x 10^k ns up to 5 s,
 * then 10 s, 15 s, 20 s, 30 s, 1 min, 2 min, 5 min ...), tick_ns a multiple
 * of cell_ns. */
struct layout_axis {
    sim_ns t_end;     /* the span shown is [0, t_end] */
    sim_ns cell_ns;   /* true time per cell */
    int ncells;       /* cells used: t_end / cell_ns + 1 */
    sim_ns tick_ns;   /* distance between labelled ticks */
    sim_ns unit_ns;   /* unit of tick labels (1 ns, 1 us, 1 ms, 1 s or 1 min) */
    const char *unit; /* its suffix, static: "ns", "us", "ms", "s", "m" */
};

/* Pick the smallest nice cell_ns that fits [0, t_end] in max_cells cells,
 * and the smallest nice tick at least min_tick_cells cells apart. t_end is
 * clamped to [0, SIM_TIME_MAX].
 * Returns 0, or -1 when max_cells < 1. */
int layout_axis_fit(struct layout_axis *ax, sim_ns t_end, int max_cells, int min_tick_cells);
/* The cell showing time t (clamped to [0, ncells - 1]). */
int layout_axis_cell(const struct layout_axis *ax, sim_ns t);
/* Cells [*c0, *c1] covered by the interval [t0, t1]: from the cell of t0 up
 * to the cell before the one of t1 (so back-to-back intervals do not
 * overlap), and always at least one cell, so short intervals stay visible. */
void layout_axis_span(const struct layout_axis *ax, sim_ns t0, sim_ns t1, int *c0, int *c1);
/* Tick label for time t in the axis unit, e.g. "10s", "2m", "250ms".
 * Returns as format_time_in does. */
int layout_axis_label(const struct layout_axis *ax, sim_ns t, char *buf, size_t n);

#endif
