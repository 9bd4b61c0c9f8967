/* A client process of the redis backend (real/real_int.h): it plays its
 * program from the scenario against redis-server over RESP, stops or kills
 * itself at the scenario's named points, and writes what it saw to the
 * driver's pipe as records. */
#include "real_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "resp.h"

/* The lock, as the research's Redis demos (docs/reality.md) run it. */
#define LUA_FENCED_ACQUIRE \
    "if redis.call('SET',KEYS[1],ARGV[1],'NX','PX',ARGV[2]) then return redis.call('INCR',KEYS[2]) " \
    "else return false end"
/* lease-renew's heartbeat: extend the key only while it holds this client's
 * value (Redisson's watchdog does the same compare-and-pexpire). */
#define LUA_RENEW \
    "if redis.call('GET',KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE',KEYS[1],ARGV[2]) else return 0 end"
#define LUA_CAD "if redis.call('GET',KEYS[1]) == ARGV[1] then return redis.call('DEL',KEYS[1]) else return 0 end"
/* A plain DEL that also says whose entry it removed (the same effect as DEL). */
#define LUA_DEL "local v = redis.call('GET',KEYS[1]) redis.call('DEL',KEYS[1]) return v"
/* The resource: stock and version, read together. */
#define LUA_READ "return {tonumber(redis.call('GET',KEYS[1]) or '0'), tonumber(redis.call('GET',KEYS[2]) or '0')}"
#define LUA_WRITE "redis.call('SET',KEYS[1],ARGV[1]) redis.call('INCR',KEYS[2]) return 1"
/* A fenced resource, the scenario's rule (resource fencing=on): a write
 * with no token is refused (3), one lower than the highest accepted is
 * refused (2); equal is let in, as the simulator's resource does. */
#define LUA_FENCED_WRITE \
    "local tok = tonumber(ARGV[2]) if tok == 0 then return 3 end " \
    "local last = tonumber(redis.call('GET',KEYS[3]) or '0') if tok < last then return 2 end " \
    "redis.call('SET',KEYS[3],ARGV[2]) redis.call('SET',KEYS[1],ARGV[1]) redis.call('INCR',KEYS[2]) return 1"

static void emit(struct client *cl, int kind, int node, int peer, uint64_t token, int64_t a, int64_t b) {
    struct rec r = {now_ns() - cl->t0, kind, node, peer, 0, token, a, b};
    ssize_t w;
    do w = write(cl->evfd, &r, sizeof r);
    while (w < 0 && errno == EINTR);
}

static int64_t real_of(const struct client *cl, sim_ns scn) { return (int64_t)((double)scn * cl->scale); }

/* A named point: the faults the scenario attaches there, done for real by
 * the process itself (a SIGSTOP the driver resumes; SIGKILL). */
static void point(struct client *cl, enum scn_point p) {
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
static void hop(const struct client *cl) {
    if (cl->s->latency.min_ns) sleep_until(now_ns() + real_of(cl, cl->s->latency.min_ns));
}

static int send_req(struct client *cl, int argc, const char *const *argv) {
    hop(cl);
    return resp_send(&cl->c, argc, argv);
}

static int recv_reply(struct client *cl, struct resp_reply *r) {
    int rc = resp_recv(&cl->c, r);
    hop(cl);
    return rc;
}

static int cmd(struct client *cl, struct resp_reply *r, int argc, const char *const *argv) {
    if (send_req(cl, argc, argv) != 0 || recv_reply(cl, r) != 0) _exit(3);
    if (r->type == RESP_ERROR) _exit(4);
    return 0;
}

static int owner_of(const struct client *cl, const char *value) {
    size_t k = strcspn(value, "#");
    for (int i = 0; i < cl->s->nclients; i++)
        if (strlen(cl->s->clients[i].name) == k && strncmp(cl->s->clients[i].name, value, k) == 0) return i;
    return TRACE_NO_NODE;
}

/* One attempt: 1 granted (token set), 0 refused. */
static int try_acquire(struct client *cl) {
    const struct real_cfg *g = cl->cfg;
    char ttl[32], gap[32];
    snprintf(cl->value, sizeof cl->value, "%s#%d", cl->s->clients[cl->idx].name, ++cl->acquires);
    long long ttl_ms = (long long)((double)g->ttl_ns * cl->scale / 1e6 + 0.5);
    if (ttl_ms < 1) ttl_ms = 1;
    snprintf(ttl, sizeof ttl, "%lld", ttl_ms);
    struct resp_reply r;
    int crash_at_send = 0;
    switch (g->algo) {
    case RA_LEASE: {
        const char *a[] = {"SET", "lock", cl->value, "NX", "PX", ttl};
        if (send_req(cl, 6, a) != 0) _exit(3);
        crash_at_send = 1;
        break;
    }
    case RA_RENEW:
    case RA_FENCED: {
        /* lease-renew without tokens=on is a plain SET NX PX */
        const char *set[] = {"SET", "lock", cl->value, "NX", "PX", ttl};
        const char *a[] = {"EVAL", LUA_FENCED_ACQUIRE, "2", "lock", "fence:counter", cl->value, ttl};
        int plain = g->algo == RA_RENEW && !g->tokens;
        if (send_req(cl, plain ? 6 : 7, plain ? set : a) != 0) _exit(3);
        crash_at_send = 1;
        break;
    }
    case RA_SETNX:
    case RA_SETNX_EXPIRE: {
        const char *a[] = {"SETNX", "lock", cl->value};
        if (send_req(cl, 3, a) != 0) _exit(3);
        crash_at_send = 1;
        break;
    }
    }
    if (crash_at_send) point(cl, SCN_POINT_DURING_ACQUIRE);
    if (recv_reply(cl, &r) != 0 || r.type == RESP_ERROR) _exit(3);
    int got = 0;
    cl->token = 0;
    switch (g->algo) {
    case RA_LEASE:
        got = r.type == RESP_STATUS;
        if (got) emit(cl, TRACE_SRV_GRANT, cl->srv, cl->idx, 0, g->ttl_ns, 0);
        break;
    case RA_RENEW:
        got = r.type == RESP_STATUS || r.type == RESP_INT;
        if (got) {
            cl->token = r.type == RESP_INT ? (uint64_t)r.integer : 0;
            emit(cl, TRACE_SRV_GRANT, cl->srv, cl->idx, cl->token, g->ttl_ns, 0);
            sim_ns every = g->renew_interval_ns ? g->renew_interval_ns : g->ttl_ns / g->renew_every;
            cl->renew_at = now_ns() + real_of(cl, every);
            cl->lost = 0;
        }
        break;
    case RA_FENCED:
        got = r.type == RESP_INT;
        if (got) {
            cl->token = (uint64_t)r.integer;
            emit(cl, TRACE_SRV_GRANT, cl->srv, cl->idx, cl->token, g->ttl_ns, 0);
        }
        break;
    case RA_SETNX:
        got = r.type == RESP_INT && r.integer == 1;
        if (got) emit(cl, TRACE_SRV_GRANT, cl->srv, cl->idx, 0, 0, 0);
        break;
    case RA_SETNX_EXPIRE:
        got = r.type == RESP_INT && r.integer == 1;
        if (got) {
            emit(cl, TRACE_SRV_GRANT, cl->srv, cl->idx, 0, 0, 0);
            if (g->gap_ns) sleep_until(now_ns() + real_of(cl, g->gap_ns));
            snprintf(gap, sizeof gap, "%s", ttl);
            const char *a[] = {"PEXPIRE", "lock", gap};
            cmd(cl, &r, 3, a); /* as naive code does, its answer is not looked at */
            emit(cl, TRACE_SRV_RENEW, cl->srv, cl->idx, 0, g->ttl_ns, 0);
        }
        break;
    }
    if (!got) emit(cl, TRACE_SRV_DENY, cl->srv, cl->idx, 0, TRACE_NO_NODE, 0);
    return got;
}

/* lease-renew's heartbeat, in the same process as the work (a pause
 * freezes both): extend the lease; a refusal means it is gone: renewing
 * stops, and with on-lost=abort the program is told (lock_lost: it leaves
 * its critical section and skips its writes) unless it ignores the loss
 * (checks-loss=no); with on-lost=continue, the default, it goes on. */
static void renew(struct client *cl) {
    const struct real_cfg *g = cl->cfg;
    char ttl[32];
    long long ttl_ms = (long long)((double)g->ttl_ns * cl->scale / 1e6 + 0.5);
    snprintf(ttl, sizeof ttl, "%lld", ttl_ms < 1 ? 1 : ttl_ms);
    struct resp_reply r;
    const char *a[] = {"EVAL", LUA_RENEW, "1", "lock", cl->value, ttl};
    cmd(cl, &r, 6, a);
    if (r.type == RESP_INT && r.integer == 1) {
        emit(cl, TRACE_SRV_RENEW, cl->srv, cl->idx, 0, g->ttl_ns, 0);
        sim_ns every = g->renew_interval_ns ? g->renew_interval_ns : g->ttl_ns / g->renew_every;
        cl->renew_at = now_ns() + real_of(cl, every);
        return;
    }
    cl->renew_at = 0;
    if (g->on_lost_abort && cl->holding && !cl->s->clients[cl->idx].ignores_loss) {
        emit(cl, TRACE_CS_EXIT, cl->idx, TRACE_NO_NODE, cl->token, TRACE_EXIT_LOST, 0);
        cl->holding = 0;
        cl->lost = 1;
    }
}

/* Wait until abs (real ns), renewing the lease on the way when it is due. */
static void wait_until(struct client *cl, int64_t abs) {
    while (cl->renew_at && cl->renew_at < abs) {
        sleep_until(cl->renew_at);
        renew(cl);
    }
    sleep_until(abs);
}

static void do_release(struct client *cl) {
    cl->renew_at = 0;
    struct resp_reply r;
    if (cl->holding) emit(cl, TRACE_CS_EXIT, cl->idx, TRACE_NO_NODE, cl->token, TRACE_EXIT_RELEASE, 0);
    cl->holding = 0;
    emit(cl, TRACE_RELEASE_SENT, cl->idx, TRACE_NO_NODE, 0, 0, 0);
    if (cl->cfg->release_del) {
        const char *a[] = {"EVAL", LUA_DEL, "1", "lock"};
        cmd(cl, &r, 4, a);
        if (r.type == RESP_BULK) {
            int owner = owner_of(cl, r.str);
            emit(cl, TRACE_SRV_DELETE, cl->srv, cl->idx, 0, owner, owner != cl->idx);
        }
    } else {
        const char *a[] = {"EVAL", LUA_CAD, "1", "lock", cl->value};
        cmd(cl, &r, 5, a);
        if (r.type == RESP_INT && r.integer == 1) emit(cl, TRACE_SRV_DELETE, cl->srv, cl->idx, 0, cl->idx, 0);
        else emit(cl, TRACE_SRV_KEEP, cl->srv, cl->idx, 0, -1, 0);
    }
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
        if (reps && me->think_ns) wait_until(cl, now_ns() + real_of(cl, me->think_ns));
        for (int pc = 0; pc < p->nsteps; pc++) {
            const struct scn_step *st = &p->steps[pc];
            struct resp_reply r;
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
                    emit(cl, TRACE_ACQUIRE_TRY, cl->idx, TRACE_NO_NODE, 0, attempts, 0);
                    if (try_acquire(cl)) {
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
                    due += real_of(cl, retry + 2 * s->latency.min_ns);
                    int64_t now = now_ns();
                    wait_until(cl, due > now ? due : now);
                }
                break;
            }
            case SCN_STEP_READ: {
                point(cl, SCN_POINT_BEFORE_READ);
                const char *a[] = {"EVAL", LUA_READ, "2", "stock", "stock:version"};
                cmd(cl, &r, 5, a);
                read_value = r.elem[0];
                has_read = 1;
                emit(cl, TRACE_READ, cl->res, cl->idx, 0, r.elem[0], r.elem[1]);
                point(cl, SCN_POINT_BETWEEN_READ_AND_WRITE);
                break;
            }
            case SCN_STEP_WRITE: {
                point(cl, SCN_POINT_BEFORE_WRITE);
                if (cl->lost) { /* it knows it no longer holds the lock */
                    emit(cl, TRACE_WRITE_SKIPPED, cl->idx, TRACE_NO_NODE, cl->token, TRACE_SKIP_LOST, 0);
                    has_read = 0;
                    break;
                }
                if (!has_read || read_value <= 0) {
                    emit(cl, TRACE_WRITE_SKIPPED, cl->idx, TRACE_NO_NODE, cl->token, TRACE_SKIP_SOLD_OUT, 0);
                    has_read = 0;
                    break;
                }
                char v[32], tok[32];
                snprintf(v, sizeof v, "%lld", (long long)(read_value - 1));
                snprintf(tok, sizeof tok, "%llu", (unsigned long long)cl->token);
                int64_t result;
                if (cl->cfg->fenced_resource) {
                    const char *a[] = {"EVAL", LUA_FENCED_WRITE, "3", "stock", "stock:version", "fence:last", v, tok};
                    cmd(cl, &r, 8, a);
                } else {
                    const char *a[] = {"EVAL", LUA_WRITE, "2", "stock", "stock:version", v};
                    cmd(cl, &r, 6, a);
                }
                result = r.integer;
                emit(cl, TRACE_WRITE, cl->res, cl->idx, cl->token, read_value - 1, result);
                has_read = 0;
                point(cl, SCN_POINT_AFTER_WRITE);
                break;
            }
            case SCN_STEP_WORK:
                emit(cl, TRACE_WORK_START, cl->idx, TRACE_NO_NODE, 0, st->dur_ns, 0);
                wait_until(cl, now_ns() + real_of(cl, st->dur_ns));
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
