/* A Redis-like key-value lock store (the server side) and the client that
 * speaks to it, shared by the lease-family algorithms (setnx, lease,
 * fenced-lease). Each algorithm keeps its own file for its defaults, its
 * options and its struct lock_algo; the protocol lives here once. */
#ifndef LOCKSIM_KV_H
#define LOCKSIM_KV_H

#include <stddef.h>
#include <stdint.h>

#include "lock.h"

/* Requests and replies (struct lock_msg.type). */
enum {
    KV_SET_NX = 1, /* value, ttl_ns (0 = no expiry) -> KV_REPLY a=1 set, token */
    KV_GET,        /* -> KV_REPLY a=1 exists, value */
    KV_DEL,        /* -> KV_REPLY a=keys deleted */
    KV_CAD,        /* value: compare-and-delete (the Lua script) -> a=1 deleted */
    KV_EXPIRE,     /* ttl_ns -> a=1 when the key existed */
    KV_CAE,        /* value, ttl_ns: compare-and-pexpire (renewal script) -> a=1 extended */
    KV_REPLY
};

enum kv_release {
    KV_RELEASE_CAD,     /* atomic compare-and-delete */
    KV_RELEASE_DEL,     /* plain DEL: may delete someone else's lock */
    KV_RELEASE_GET_DEL  /* GET, compare in the client, then DEL: check-then-act race */
};

enum kv_persist { KV_PERSIST_NONE, KV_PERSIST_ALWAYS };

struct kv_config {
    sim_ns ttl_ns;            /* lease length; 0 = no TTL */
    int release;              /* enum kv_release */
    int unique_value;         /* 1 = random token as value, 0 = the constant 1 */
    int fenced;               /* 1 = the client attaches the grant's token to writes */
    uint64_t first_token;     /* first fencing token the store issues */
    int expiry_clock;         /* enum lock_clock the store expires keys by */
    int persistence;          /* enum kv_persist: what survives a server restart */
    sim_ns request_timeout_ns;/* a client gives up on a reply after this */
    unsigned allowed;         /* KV_OPT_* bits this algorithm accepts */
    const char *algo_name;
};

#define KV_OPT_TTL (1u << 0)
#define KV_OPT_RELEASE (1u << 1)
#define KV_OPT_VALUE (1u << 2)
#define KV_OPT_FIRST_TOKEN (1u << 3)
#define KV_OPT_EXPIRY_CLOCK (1u << 4)
#define KV_OPT_PERSISTENCE (1u << 5)
#define KV_OPT_TIMEOUT (1u << 6)

struct kv_server {
    int held;
    uint64_t value;
    int owner;             /* client node whose SET created the entry */
    sim_ns expires_local;  /* by cfg->expiry_clock; SIM_NEVER = no expiry */
    uint64_t token;        /* token issued with this entry */
    uint64_t next_token;
    uint64_t expiry_timer;
};

struct kv_client {
    uint32_t req;          /* id of the outstanding request */
    int phase;             /* what the outstanding request is for */
    uint64_t value;        /* the value this client set */
    uint64_t token;
    uint64_t timeout;      /* timer handle */
};

void kv_config_default(struct kv_config *c, const char *algo_name, unsigned allowed);
int kv_option(struct kv_config *c, const char *key, const char *val, char *err, size_t errlen);

void kv_server_init(struct lock_ctx *ctx, void *state);
void kv_server_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m);
void kv_server_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg);
void kv_server_restart(struct lock_ctx *ctx, void *state);

void kv_client_acquire(struct lock_ctx *ctx, void *state);
void kv_client_release(struct lock_ctx *ctx, void *state);
void kv_client_recv(struct lock_ctx *ctx, void *state, const struct lock_msg *m);
void kv_client_timer(struct lock_ctx *ctx, void *state, int timer, uint64_t arg);

#endif
