/* Shared parts of the database alternatives to a lock (see db.h): the
 * lockless client, the request-with-timeout client, and option helpers. */
#include "db.h"

#include <stdio.h>


void db_client_acquire_now(struct lock_ctx *ctx, void *state) {
    (void)state;
    lock_granted(ctx, 0, 0);
}

void db_client_release_now(struct lock_ctx *ctx, void *state) {
    (void)state;
    lock_release_done(ctx);
}

void db_rpc_send(struct lock_ctx *ctx, struct db_rpc *r, int what, struct lock_msg *m, sim_ns timeout_ns) {
    if (r->timer) lock_cancel(ctx, r->timer);
    m->req = ++r->req;
    r->waiting = 1;
    r->what = what;
    lock_send(ctx, lock_server(ctx, 0), m);
    r->timer = timeout_ns > 0 ? lock_timer(ctx, LOCK_CLOCK_MONO, timeout_ns, DB_TIMER_RPC, r->req) : 0;
}

static void close_rpc(struct lock_ctx *ctx, struct db_rpc *r) {
    r->waiting = 0;
    if (r->timer) lock_cancel(ctx, r->timer);
    r->timer = 0;
}

int db_rpc_reply(struct lock_ctx *ctx, struct db_rpc *r, const struct lock_msg *m) {
    if (!r->waiting || m->req != r->req) return 0;
    close_rpc(ctx, r);
    return 1;
}

int db_rpc_expired(struct lock_ctx *ctx, struct db_rpc *r, int timer, uint64_t arg) {
    if (timer != DB_TIMER_RPC || !r->waiting || arg != r->req) return 0;
    r->timer = 0; /* it has fired */
    close_rpc(ctx, r);
    lock_note(ctx, "request timed out", (int64_t)arg, 0);
    return 1;
}

int db_opt_unknown(char *err, size_t errlen, const char *key, const char *algo, const char *expected) {
    snprintf(err, errlen, "unknown option '%s' for %s; expected %s", key, algo, expected);
    return LSIM_EUNKNOWN_OPTION;
}

int db_opt_duration(const char *key, const char *val, sim_ns *out, int allow_zero, char *err, size_t errlen) {
    sim_ns v;
    if (lock_parse_duration(val, &v) != 0 || v < 0 || (v == 0 && !allow_zero)) {
        snprintf(err, errlen, "%s '%s' is not %s", key, val,
                 allow_zero ? "a duration such as 20s (0 = off)" : "a positive duration such as 30s");
        return LSIM_EBAD_VALUE;
    }
    *out = v;
    return 0;
}
