/* What the files of the Redis-like lock store share and no algorithm needs
 * (kv.h is the algorithms' view): the timers, the small helpers every part
 * of the server uses, and the functions one part calls in another. The store
 * is four files along its jobs: kv_config.c (its options and their
 * defaults), kv.c (the key, its deadline rule and the requests at a server),
 * kv_repl.c (replication, failover and replication links) and kv_client.c
 * (the client side). */
#ifndef LOCKSIM_KV_INT_H
#define LOCKSIM_KV_INT_H

#include "kv.h"

/* The server's and the client's timers (one list: a node is either). */
enum { T_EXPIRY = 1, T_TIMEOUT, T_REPL, T_PING, T_WAIT, T_CRON, T_STASIS };

static inline const struct kv_config *cfg(struct lock_ctx *ctx) { return lock_config(ctx); }

/* Replication applies: on, and more than one server in this run. */
static inline int replicating(struct lock_ctx *ctx) {
    return cfg(ctx)->replication != KV_REPL_OFF && lock_nservers(ctx) > 1;
}

static inline int self_index(struct lock_ctx *ctx) { return lock_server_index(ctx, lock_self(ctx)); }

static inline sim_ns mono(struct lock_ctx *ctx) { return lock_now(ctx, LOCK_CLOCK_MONO); }

static inline void cancel(struct lock_ctx *ctx, uint64_t *handle) {
    if (*handle) lock_cancel(ctx, *handle);
    *handle = 0;
}

/* A reply to a request: a = what it answers, err in b. */
static inline void kv_reply_err(struct lock_ctx *ctx, int to, uint32_t req, int64_t a, uint64_t value, uint64_t token,
                                int64_t err) {
    struct lock_msg r = {0};
    r.type = KV_REPLY;
    r.req = req;
    r.a = a;
    r.b = err;
    r.value = value;
    r.token = token;
    lock_send(ctx, to, &r);
}

/* The store's server, shared by its files (kv.c: requests and expiry;
 * kv_repl.c: replication). Each is defined once, in the file named. */
/* kv.c */
void kv_arm_expiry(struct lock_ctx *ctx, struct kv_server *s);
void kv_expire_if_due(struct lock_ctx *ctx, struct kv_server *s);
/* kv_repl.c */
void kv_reset_acks(struct kv_server *s);
int kv_min_replicas_here(struct lock_ctx *ctx);
void kv_arm_ping(struct lock_ctx *ctx, struct kv_server *s, sim_ns delay);
int kv_promote(struct lock_ctx *ctx, struct kv_server *s);
void kv_announce(struct lock_ctx *ctx, struct kv_server *s);
void kv_kill_replicas(struct lock_ctx *ctx, struct kv_server *s);
struct kv_snap kv_take_snapshot(const struct kv_server *s);
void kv_send_snapshot(struct lock_ctx *ctx, const struct kv_server *s, const struct kv_snap *p);
void kv_stream(struct lock_ctx *ctx, struct kv_server *s);
void kv_replicate(struct lock_ctx *ctx, struct kv_server *s);
void kv_backlog_due(struct lock_ctx *ctx, struct kv_server *s);
int kv_good_replicas(struct lock_ctx *ctx, const struct kv_server *s);
void kv_wait_begin(struct lock_ctx *ctx, struct kv_server *s, const struct lock_msg *m);
void kv_wait_timeout(struct lock_ctx *ctx, struct kv_server *s, uint64_t slot);
void kv_upstream_close(struct lock_ctx *ctx, struct kv_server *s, const struct lock_msg *m);
void kv_cron(struct lock_ctx *ctx, struct kv_server *s);
void kv_sync_recv(struct lock_ctx *ctx, struct kv_server *s, const struct lock_msg *m);
void kv_check_links(struct lock_ctx *ctx, struct kv_server *s);
void kv_repl_recv(struct lock_ctx *ctx, struct kv_server *s, const struct lock_msg *m);
void kv_ack_recv(struct lock_ctx *ctx, struct kv_server *s, const struct lock_msg *m);

#endif
