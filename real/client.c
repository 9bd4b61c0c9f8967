/* A client process of `locksim real` (real/real_int.h): it plays its
 * program from the scenario against the store (cl->ops: store_redis.c,
 * store_etcd.c), stops or kills itself at the scenario's named points, and
 * writes what it saw to the driver's pipe as records. */
#include "real_int.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "error.h"

void real_emit(struct client *cl, int kind, int node, int peer, uint64_t token, int64_t a, int64_t b) {
    struct rec r = {now_ns() - cl->t0, kind, node, peer, 0, token, a, b};
    ssize_t w;
    do w = write(cl->evfd, &r, sizeof r);
    while (w < 0 && errno == EINTR);
}

#define emit real_emit

int64_t real_of(const struct client *cl, sim_ns scn) { return (int64_t)((double)scn * cl->scale); }

/* A named point: the faults the scenario attaches there, done for real by
 * the process itself (a SIGSTOP the driver resumes; SIGKILL). */
void real_point(struct client *cl, enum scn_point p) {
    int n = ++cl->occ[p];
    const struct scenario *s = cl->s;
    for (int i = 0; i < s->nfaults; i++) {
        const struct scn_fault *f = &s->faults[i];
        if (f->point != p || f->occurrence != n || strcmp(f->trigger, s->clients[cl->idx].name) != 0) continue;
        if (f->kind == SCN_FAULT_PAUSE) {
            emit(cl, TRACE_PAUSE, cl->idx, TRACE_NO_NODE, 0, f->dur_ns, 0);
            raise(SIGSTOP);
        } else if (f->kind == SCN_FAULT_CRASH) {
            emit(cl, TRACE_CRASH, cl->idx, TRACE_NO_NODE, 0, 0, 0);
            raise(SIGKILL);
        }
    }
}

/* The scenario's constant network latency, one way, made real: the client
 * holds each request that long before sending it, and each reply that long
 * after receiving it (loopback's own tens of microseconds come on top). */
void real_hop(const struct client *cl) {
    if (cl->lock_port) return; /* the proxy delays each message (proxy.c) */
    if (cl->s->latency.min_ns) sleep_until(now_ns() + real_of(cl, cl->s->latency.min_ns));
}

void real_stasis(struct client *cl) {
    if (!cl->stasis_at || now_ns() < cl->stasis_at) return;
    cl->stasis_at = 0;
    if (!cl->holding || cl->s->clients[cl->idx].ignores_loss) return;
    emit(cl, TRACE_CS_EXIT, cl->idx, TRACE_NO_NODE, cl->token, TRACE_EXIT_LOST, 0);
    cl->holding = 0;
    cl->lost = 1;
}

int real_owner_of(const struct scenario *s, const char *value) {
    size_t k = strcspn(value, "#");
    for (int i = 0; i < s->nclients; i++)
        if (strlen(s->clients[i].name) == k && strncmp(s->clients[i].name, value, k) == 0) return i;
    return TRACE_NO_NODE;
}

#define point real_point

/* fenced-lease check=client (sim/algo/algo_fenced_lease.c,
 * client_write_ok): the client compares its own token with the highest
 * its read reported (none without a read) by the compare= rule, and drops
 * its write when the rule refuses it. 1: dropped. */
static int client_check_refuses(const struct client *cl, int has_read) {
    if (!cl->cfg->check_client) return 0;
    uint64_t seen = has_read ? cl->read_token : 0, tok = cl->token;
    switch (cl->cfg->compare) {
    case RC_LE: return tok <= seen;
    case RC_NE: return seen != 0 && tok == seen;
    case RC_FIRST: return seen != 0 && tok != seen;
    default: return tok < seen;
    }
}

static void do_release(struct client *cl) {
    if (!cl->holding && cl->lost && cl->ops->skip_lost_release) return; /* as the simulator's programs do */
    cl->renew_at = cl->stasis_at = 0;
    if (cl->holding) emit(cl, TRACE_CS_EXIT, cl->idx, TRACE_NO_NODE, cl->token, TRACE_EXIT_RELEASE, 0);
    cl->holding = 0;
    emit(cl, TRACE_RELEASE_SENT, cl->idx, TRACE_NO_NODE, 0, 0, 0);
    cl->ops->release(cl);
    point(cl, SCN_POINT_AFTER_RELEASE);
}

void real_client_main(struct client *cl) {
    const struct scenario *s = cl->s;
    const struct scn_client *me = &s->clients[cl->idx];
    const struct scn_program *p = &s->programs[me->program];
    /* Retry jitter replays the simulated run's seeded draws (its trace has
     * each wait between a denied attempt and the next, cl->waits), so the
     * real run retries at the simulated instants. Past the simulated run's
     * retries (the real run has diverged), draws are fresh. */
    uint64_t rng = ((uint64_t)now_ns() ^ (uint64_t)getpid() << 32) * 0x9E3779B97F4A7C15ull | 1;
    sleep_until(cl->t0 + real_of(cl, me->start_ns));
    int64_t read_value = 0, has_read = 0;
    int reps = 0;
    for (; me->repeat == 0 || reps < me->repeat; reps++) {
        if (reps && me->think_ns) cl->ops->wait_until(cl, now_ns() + real_of(cl, me->think_ns));
        for (int pc = 0; pc < p->nsteps; pc++) {
            const struct scn_step *st = &p->steps[pc];
            switch (st->kind) {
            case SCN_STEP_ACQUIRE: {
                emit(cl, TRACE_ACQUIRE_START, cl->idx, TRACE_NO_NODE, 0, 0, 0);
                int64_t began = now_ns();
                /* When each attempt is due: the simulated schedule (an attempt,
                 * its round trip, the retry wait), not now + the wait. Each
                 * real cycle costs a few hundred microseconds of round trip,
                 * wake-ups and recording, which the scale multiplies into
                 * scenario time (at S = 0.0417, ~10 ms per retry) and which
                 * would add up over the retries: a scaling artifact, not
                 * part of the scenario. A late attempt is made at once. */
                int64_t due = began;
                int attempts = 0;
                for (;;) {
                    attempts++;
                    cl->tried++;
                    emit(cl, TRACE_ACQUIRE_TRY, cl->idx, TRACE_NO_NODE, 0, attempts, 0);
                    if (cl->ops->try_acquire(cl)) {
                        cl->holding = 1;
                        emit(cl, TRACE_ACQUIRED, cl->idx, TRACE_NO_NODE, cl->token, cl->cfg->ttl_ns, attempts);
                        point(cl, SCN_POINT_AFTER_ACQUIRE);
                        break;
                    }
                    emit(cl, TRACE_ACQUIRE_DENIED, cl->idx, TRACE_NO_NODE, 0, attempts, 0);
                    sim_ns retry = st->retry_ns ? st->retry_ns : s->retry_ns;
                    if ((st->tries && attempts >= st->tries) ||
                        (st->timeout_ns && now_ns() - began + real_of(cl, retry) > real_of(cl, st->timeout_ns))) {
                        emit(cl, TRACE_ACQUIRE_FAILED, cl->idx, TRACE_NO_NODE, 0, attempts, 0);
                        /* skip to the step after the next release */
                        int k = pc + 1;
                        while (k < p->nsteps && p->steps[k].kind != SCN_STEP_RELEASE) k++;
                        pc = k < p->nsteps ? k : pc;
                        break;
                    }
                    sim_ns simulated = cl->used < cl->nwaits ? cl->waits[cl->used] : -1;
                    cl->used++;
                    if (st->jitter_ns && simulated >= retry && simulated <= retry + st->jitter_ns) {
                        retry = simulated;
                    } else if (st->jitter_ns) {
                        rng ^= rng << 13;
                        rng ^= rng >> 7;
                        rng ^= rng << 17;
                        retry += (sim_ns)(rng % (uint64_t)(st->jitter_ns + 1));
                    }
                    due += real_of(cl, retry + (cl->attempt_ns ? cl->attempt_ns : 2 * s->latency.min_ns));
                    int64_t now = now_ns();
                    /* Through the proxy a round trip takes what the simulated
                     * run's messages took (or the request timeout), not 2 x the
                     * latency: the next attempt is due when the simulated run
                     * made it, and past its attempts, a retry after the denial. */
                    if (cl->lock_port && cl->tried < cl->ntries) {
                        int64_t at = cl->t0 + real_of(cl, cl->tries[cl->tried]);
                        due = at > now ? at : now;
                    } else if (cl->lock_port) {
                        due = now + real_of(cl, retry);
                    }
                    cl->ops->wait_until(cl, due > now ? due : now);
                }
                break;
            }
            case SCN_STEP_READ: {
                point(cl, SCN_POINT_BEFORE_READ);
                int64_t version;
                cl->read_refused = 0;
                cl->ops->read(cl, &read_value, &version);
                has_read = 1;
                if (cl->read_refused) /* resource check=reads+writes: a = the highest token seen */
                    emit(cl, REC_READ_REFUSED, cl->idx, cl->res, cl->token, (int64_t)cl->read_token,
                         cl->read_refused == 3 ? TRACE_WRITE_REJECTED_NOTOKEN : TRACE_WRITE_REJECTED_STALE);
                else emit(cl, TRACE_READ, cl->res, cl->idx, 0, read_value, version);
                point(cl, SCN_POINT_BETWEEN_READ_AND_WRITE);
                break;
            }
            case SCN_STEP_WRITE: {
                point(cl, SCN_POINT_BEFORE_WRITE);
                real_stasis(cl);
                /* the simulator's order (sim/engine_program.c, CS_WRITING) */
                int skip = !st->absolute && has_read && cl->read_refused     ? TRACE_SKIP_READ_REFUSED
                           : !st->absolute && (!has_read || read_value <= 0) ? TRACE_SKIP_SOLD_OUT
                           : cl->lost                                        ? TRACE_SKIP_LOST
                           : client_check_refuses(cl, has_read)              ? TRACE_SKIP_CLIENT_CHECK
                                                                             : 0;
                if (skip) {
                    emit(cl, TRACE_WRITE_SKIPPED, cl->idx, TRACE_NO_NODE, cl->token, skip, 0);
                    has_read = 0;
                    break;
                }
                /* an absolute write (set=V) is recorded marked "set" (record.c) */
                int64_t value = st->absolute ? st->set_value : read_value - 1;
                int64_t result = cl->ops->write(cl, value);
                emit(cl, st->absolute ? REC_WRITE_SET : TRACE_WRITE, cl->res, cl->idx, cl->token, value, result);
                has_read = 0;
                point(cl, SCN_POINT_AFTER_WRITE);
                break;
            }
            case SCN_STEP_WORK:
                emit(cl, TRACE_WORK_START, cl->idx, TRACE_NO_NODE, 0, st->dur_ns, 0);
                cl->ops->wait_until(cl, now_ns() + real_of(cl, st->dur_ns));
                emit(cl, TRACE_WORK_END, cl->idx, TRACE_NO_NODE, 0, 0, 0);
                break;
            case SCN_STEP_RELEASE:
                point(cl, SCN_POINT_BEFORE_RELEASE);
                do_release(cl);
                break;
            case SCN_STEP_COUNT: break;
            }
        }
        if (cl->holding) {
            emit(cl, TRACE_CS_EXIT, cl->idx, TRACE_NO_NODE, cl->token, TRACE_EXIT_END, 0);
            cl->holding = 0;
        }
    }
    emit(cl, TRACE_PROGRAM_DONE, cl->idx, TRACE_NO_NODE, 0, reps, 0);
}
