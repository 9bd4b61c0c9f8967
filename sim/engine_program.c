/* The client program: acquire (with retries and timeouts), read, write,
 * work and release steps, repetitions and think time, the named points
 * where faults wait, and what the algorithm's outcomes do to the program. */
#include <string.h>

#include "engine_int.h"

/* The client reached a named point: trace it and fire faults attached to it.
 * The program goes on through an EV_CONT event, so a pause applied here takes
 * effect before the client's next action. */
static void reach_point(struct engine *e, int node, enum scn_point p) {
    /* Counted only where someone reads the count: the kept trace, or a fault
     * on one of this run's points (e->points is NULL otherwise, and then the
     * event below is not kept either). */
    uint32_t n = e->points ? ++e->points[(size_t)node * SCN_POINT_COUNT + p] : 0;
    emit(e, TRACE_POINT, node, TRACE_NO_NODE, 0, 0, p, n, (e->wants >> TRACE_POINT) & 1 ? scn_point_name(p) : NULL);
    if (!nd(e, node)->point_faults) return;
    for (int i = 0; i < e->s.nfaults; i++) {
        const struct scn_fault *f = &e->s.faults[i];
        if (f->point == p && (uint32_t)f->occurrence == n && e->fref[i].trigger == node)
            eng_program_after_fault(e, e->fref[i].node, eng_fault_apply(e, i));
    }
}

static const struct scn_step *cur_step(struct engine *e, const struct node *n) {
    const struct scn_program *p = &e->s.programs[n->program];
    return n->pc < p->nsteps ? &p->steps[n->pc] : NULL;
}

static void cs_exit_held(struct engine *e, int node, int reason) {
    struct node *c = nd(e, node);
    c->holding = 0;
    emit(e, TRACE_CS_EXIT, node, TRACE_NO_NODE, c->token, c->grant, reason, 0, NULL);
    c->grant = 0;
    c->token = 0;
}

/* Most calls find the client not holding: that test without the frame
 * that the emit needs. */
static inline void cs_exit(struct engine *e, int node, int reason) {
    if (nd(e, node)->holding) cs_exit_held(e, node, reason);
}

static void attempt_acquire(struct engine *e, int node) {
    struct node *n = nd(e, node);
    struct node *c = n;
    c->attempts++;
    c->state = CS_ACQUIRING;
    emit(e, TRACE_ACQUIRE_TRY, node, TRACE_NO_NODE, 0, 0, c->attempts, 0, NULL);
    uint32_t epoch = n->epoch;
    algo_client_acquire(e, node);
    if (n->epoch == epoch && c->state == CS_ACQUIRING) reach_point(e, node, SCN_POINT_DURING_ACQUIRE);
}

/* Skip to the step after the next release: the critical section is not entered. */
static void skip_critical_section(struct engine *e, struct node *n) {
    const struct scn_program *p = &e->s.programs[n->program];
    int i = n->pc + 1;
    while (i < p->nsteps && p->steps[i].kind != SCN_STEP_RELEASE) i++;
    n->pc = (uint8_t)(i < p->nsteps ? i + 1 : p->nsteps);
}

/* A resource message: a read, or a write of value (absolute: `write set=V`,
 * marked by m.value = 1 so that the resource and the checker can tell it
 * from a read-modify-write). */
static void send_resource(struct engine *e, int node, int type, int64_t value, int absolute) {
    struct node *c = nd(e, node);
    struct client_rw *rw = &e->rw[node];
    struct lock_msg m = {0};
    m.type = type;
    m.req = ++rw->req;
    m.a = value;
    m.value = absolute ? 1 : 0;
    m.token = c->token;
    m.b = rw->read_version;
    eng_net_send(e, node, e->resource, CHAN_RES, &m, c->grant);
    if (e->s.resource_timeout_ns > 0)
        rw->res_timer = eng_timer_add(e, node, LOCK_CLOCK_MONO, e->s.resource_timeout_ns, TIMER_PROGRAM, PT_RESOURCE,
                                      m.req);
}

static void program_next(struct engine *e, int node) {
    struct node *c = nd(e, node);
    c->pc++;
    c->state = CS_IDLE;
    continue_later(e, node);
}

/* Run the current step of a client's program. */
/* The program has run its last step: the next repetition, after the think
 * time, or done. */
static void repetition_end(struct engine *e, int node) {
    struct node *c = nd(e, node);
    cs_exit(e, node, TRACE_EXIT_END);
    c->reps++;
    const struct profile *pf = &e->profiles[c->profile];
    if (pf->repeat == 0 || c->reps < pf->repeat) {
        c->pc = 0;
        if (pf->think_ns == 0) { /* no think time: the next repetition starts now, without a timer */
            c->state = CS_IDLE;
            continue_later(e, node);
        } else {
            c->state = CS_THINKING;
            eng_timer_add(e, node, LOCK_CLOCK_MONO, pf->think_ns, TIMER_PROGRAM, PT_THINK, 0);
        }
    } else {
        c->state = CS_DONE;
        emit(e, TRACE_PROGRAM_DONE, node, TRACE_NO_NODE, 0, 0, c->reps, 0, NULL);
    }
}

void eng_program_step(struct engine *e, int node) {
    struct node *c = nd(e, node);
    const struct scn_step *st = cur_step(e, c);
    if (!st) {
        repetition_end(e, node);
        return;
    }
    switch (st->kind) {
    case SCN_STEP_ACQUIRE:
        c->attempts = 0;
        c->has_read = 0;
        c->lost = 0;
        if (e->acquire_mono) e->acquire_mono[node] = local_now(e, node, LOCK_CLOCK_MONO);
        emit(e, TRACE_ACQUIRE_START, node, TRACE_NO_NODE, 0, 0, 0, 0, NULL);
        attempt_acquire(e, node);
        break;
    case SCN_STEP_READ:
        reach_point(e, node, SCN_POINT_BEFORE_READ);
        c->state = CS_READING;
        c->write_after_read = 0;
        continue_later(e, node);
        break;
    case SCN_STEP_WRITE:
        if (!c->has_read && !st->absolute) { /* a write alone reads first: read-modify-write */
            c->state = CS_READING;
            c->write_after_read = 1;
            send_resource(e, node, RES_READ, 0, 0);
            break;
        }
        reach_point(e, node, SCN_POINT_BEFORE_WRITE);
        c->state = CS_WRITING;
        continue_later(e, node);
        break;
    case SCN_STEP_WORK:
        c->state = CS_WORKING;
        emit(e, TRACE_WORK_START, node, TRACE_NO_NODE, 0, 0, st->dur_ns, 0, NULL);
        eng_timer_add(e, node, LOCK_CLOCK_MONO, st->dur_ns, TIMER_PROGRAM, PT_WORK, 0);
        break;
    case SCN_STEP_RELEASE:
        if (!c->holding) {
            program_next(e, node);
            break;
        }
        reach_point(e, node, SCN_POINT_BEFORE_RELEASE);
        c->state = CS_RELEASING;
        continue_later(e, node);
        break;
    default: program_next(e, node); break;
    }
}

/* An EV_CONT: the second half of steps that pass through a named point. */
void eng_program_cont(struct engine *e, int node) {
    struct node *c = nd(e, node);
    switch (c->state) {
    case CS_IDLE: eng_program_step(e, node); break;
    case CS_READING:
        if (!c->write_after_read) send_resource(e, node, RES_READ, 0, 0);
        else eng_program_step(e, node);
        break;
    case CS_WRITING: {
        const struct scn_step *st = cur_step(e, c);
        int absolute = st && st->kind == SCN_STEP_WRITE && st->absolute;
        if (e->rw[node].read_refused && !absolute) { /* its read was refused: it has nothing to write from */
            emit(e, TRACE_WRITE_SKIPPED, node, TRACE_NO_NODE, c->token, c->grant, TRACE_SKIP_READ_REFUSED, 0, NULL);
            c->has_read = 0;
            program_next(e, node);
        } else if (e->rw[node].read_value <= 0 && !absolute) { /* sold out: nothing to reserve */
            emit(e, TRACE_WRITE_SKIPPED, node, TRACE_NO_NODE, c->token, c->grant, TRACE_SKIP_SOLD_OUT, 0, NULL);
            c->has_read = 0;
            program_next(e, node);
        } else if (c->lost) { /* it knows it no longer holds the lock */
            emit(e, TRACE_WRITE_SKIPPED, node, TRACE_NO_NODE, c->token, c->grant, TRACE_SKIP_LOST, 0, NULL);
            c->has_read = 0;
            program_next(e, node);
        } else if (!algo_client_write_ok(e, node)) {
            emit(e, TRACE_WRITE_SKIPPED, node, TRACE_NO_NODE, c->token, c->grant, TRACE_SKIP_CLIENT_CHECK, 0, NULL);
            c->has_read = 0;
            program_next(e, node);
        } else if (absolute) {
            send_resource(e, node, RES_WRITE, st->set_value, 1);
        } else {
            send_resource(e, node, RES_WRITE, e->rw[node].read_value - 1, 0);
        }
        break;
    }
    case CS_RELEASING: {
        cs_exit(e, node, TRACE_EXIT_RELEASE);
        emit(e, TRACE_RELEASE_SENT, node, TRACE_NO_NODE, 0, 0, 0, 0, NULL);
        algo_client_release(e, node);
        break;
    }
    default: break; /* waiting for a reply or a timer */
    }
}

void eng_program_timer(struct engine *e, int node, int id, uint64_t arg) {
    struct node *c = nd(e, node);
    switch (id) {
    case PT_RESOURCE: {
        /* No answer from the resource in time: the client stops waiting and
         * goes on to its next step (a write that read implicitly is dropped
         * with its read); a write's fate stays unknown to it. */
        struct client_rw *rw = &e->rw[node];
        rw->res_timer = 0;
        if (arg != rw->req || (c->state != CS_READING && c->state != CS_WRITING)) break;
        emit(e, TRACE_SRV_NOTE, node, e->resource, 0, 0, (int64_t)arg, c->state == CS_WRITING,
             c->state == CS_WRITING ? "resource write timed out: outcome unknown" : "resource read timed out");
        rw->req++; /* a late reply now answers nothing */
        c->has_read = 0;
        program_next(e, node);
        break;
    }
    case PT_WORK:
        emit(e, TRACE_WORK_END, node, TRACE_NO_NODE, 0, 0, 0, 0, NULL);
        program_next(e, node);
        break;
    case PT_RETRY: attempt_acquire(e, node); break;
    case PT_THINK:
        c->state = CS_IDLE;
        eng_program_step(e, node);
        break;
    case PT_WRITE_RETRY: /* the same write step again: it reads first */
        if (c->state != CS_WRITE_BACKOFF) break;
        c->state = CS_IDLE;
        c->has_read = 0;
        eng_program_step(e, node);
        break;
    }
}

/* A restarted client starts its program afresh; what it was given (program,
 * repeat, think time) stays. */
static void program_restart(struct engine *e, int node) {
    struct node *n = nd(e, node);
    memset(&n->state, 0, sizeof *n - offsetof(struct node, state));
    n->state = CS_IDLE;
    if (e->rw) memset(&e->rw[node], 0, sizeof e->rw[node]);
    if (e->acquire_mono) e->acquire_mono[node] = 0;
    if (e->points) memset(&e->points[(size_t)node * SCN_POINT_COUNT], 0, SCN_POINT_COUNT * sizeof *e->points);
}

/* The compare-and-set loop of `write tries=N backoff=D`: a write refused
 * because the data moved under it (0 rows matched, a UNIQUE violation) waits
 * D, 2D, 4D ... and then re-reads and writes again, as real code retries an
 * optimistic update; a refusal on the N-th attempt ends the loop. Returns 1
 * when a retry is scheduled. */
static int write_retry(struct engine *e, int node, int64_t result) {
    struct node *c = nd(e, node);
    const struct scn_step *st = cur_step(e, c);
    int moved = result == TRACE_WRITE_REJECTED_COND || result == TRACE_WRITE_REJECTED_UNIQUE;
    if (!st || st->kind != SCN_STEP_WRITE || st->tries < 2 || !moved) {
        c->write_tries = 0;
        return 0;
    }
    int attempt = c->write_tries + 1; /* the attempt just refused */
    if (attempt >= st->tries) {
        emit(e, TRACE_SRV_NOTE, node, e->resource, 0, 0, attempt, 0,
             "write refused on its last try: the compare-and-set loop gives up");
        c->write_tries = 0;
        return 0;
    }
    int shift = attempt - 1 < 30 ? attempt - 1 : 30;
    sim_ns wait = st->retry_ns > SIM_TIME_MAX >> shift ? SIM_TIME_MAX : st->retry_ns << shift;
    c->write_tries = (uint8_t)attempt;
    emit(e, TRACE_SRV_NOTE, node, e->resource, 0, 0, attempt, wait,
         "write refused: back off, then re-read and write again");
    c->state = CS_WRITE_BACKOFF;
    eng_timer_add(e, node, LOCK_CLOCK_MONO, wait, TIMER_PROGRAM, PT_WRITE_RETRY, 0);
    return 1;
}

void eng_program_resource_reply(struct engine *e, int node, const struct slot *s) {
    struct node *c = nd(e, node);
    struct client_rw *rw = &e->rw[node];
    if (s->u.m.req != rw->req) return; /* an answer to an earlier incarnation, or too late */
    if (rw->res_timer) {
        struct timer *t = eng_timer_from_handle(e, rw->res_timer);
        if (t) eng_timer_free(e, t);
        rw->res_timer = 0;
    }
    if (s->u.m.type == RES_READ_REPLY && c->state == CS_READING) {
        c->has_read = 1;
        rw->read_value = s->u.m.a;
        rw->read_version = s->u.m.b;
        rw->read_token = s->u.m.token;
        rw->read_refused = (int32_t)s->u.m.value; /* 0, or why the resource refused the read */
        if (c->write_after_read) {
            reach_point(e, node, SCN_POINT_BEFORE_WRITE);
            c->state = CS_WRITING;
            continue_later(e, node);
        } else {
            reach_point(e, node, SCN_POINT_BETWEEN_READ_AND_WRITE);
            program_next(e, node);
        }
    } else if (s->u.m.type == RES_WRITE_REPLY && c->state == CS_WRITING) {
        c->has_read = 0;
        if (write_retry(e, node, s->u.m.a)) return;
        reach_point(e, node, SCN_POINT_AFTER_WRITE);
        program_next(e, node);
    }
}

/* ---- What the algorithm's outcomes do to the program ---------------------- */

void eng_program_granted(struct engine *e, int node, uint64_t token, sim_ns validity_ns) {
    struct node *c = nd(e, node);
    if (c->state != CS_ACQUIRING) return;
    c->holding = 1;
    c->token = token;
    c->grant = ++e->next_grant;
    emit(e, TRACE_ACQUIRED, node, TRACE_NO_NODE, token, c->grant, validity_ns, c->attempts, NULL);
    reach_point(e, node, SCN_POINT_AFTER_ACQUIRE);
    program_next(e, node);
}

void eng_program_refused(struct engine *e, int node) {
    struct node *c = nd(e, node);
    if (c->state != CS_ACQUIRING) return;
    const struct scn_step *st = cur_step(e, nd(e, node));
    emit(e, TRACE_ACQUIRE_DENIED, node, TRACE_NO_NODE, 0, 0, c->attempts, 0, NULL);
    sim_ns retry = st->retry_ns ? st->retry_ns : e->s.retry_ns;
    if ((st->tries && c->attempts >= st->tries) ||
        (st->timeout_ns && local_now(e, node, LOCK_CLOCK_MONO) - e->acquire_mono[node] + retry > st->timeout_ns)) {
        emit(e, TRACE_ACQUIRE_FAILED, node, TRACE_NO_NODE, 0, 0, c->attempts, 0, NULL);
        skip_critical_section(e, nd(e, node));
        c->state = CS_IDLE;
        continue_later(e, node);
        return;
    }
    if (st->jitter_ns) retry += rng_range(&e->rng, 0, st->jitter_ns);
    c->state = CS_RETRY_WAIT;
    eng_timer_add(e, node, LOCK_CLOCK_MONO, retry, TIMER_PROGRAM, PT_RETRY, 0);
}

void eng_program_release_done(struct engine *e, int node) {
    struct node *c = nd(e, node);
    if (c->state != CS_RELEASING) return;
    reach_point(e, node, SCN_POINT_AFTER_RELEASE);
    program_next(e, node);
}

/* The algorithm learnt that the lock is lost. A program with checks-loss=no
 * is never told (a worker under `etcdctl lock`, code that ignores etcd's
 * session.Done() or Redisson's failed renewal): it stays in its critical
 * section, as it believes, and writes on. */
void eng_program_lost(struct engine *e, int node) {
    struct node *c = nd(e, node);
    if (c->holding && e->profiles[c->profile].ignores_loss) {
        emit(e, TRACE_SRV_NOTE, node, TRACE_NO_NODE, c->token, c->grant, 0, 0,
             "lock lost, but the program is not told (checks-loss=no): it goes on");
        return;
    }
    if (c->holding) {
        c->lost = 1;
        cs_exit(e, node, TRACE_EXIT_LOST);
    }
}

void eng_program_after_fault(struct engine *e, int node, enum fault_action act) {
    if (act == FAULT_ACT_CLIENT_CRASHED) {
        cs_exit(e, node, TRACE_EXIT_CRASH);
    } else if (act == FAULT_ACT_CLIENT_RESTARTED) {
        memset(state_of(e, node), 0, e->algo->client_size);
        algo_client_init(e, node);
        program_restart(e, node);
        continue_later(e, node);
    }
}
