/* fenced-lease: the lease plus a fencing token. The lock service issues a
 * strictly increasing token with each grant; the client attaches it to every
 * write and the protected resource rejects a stale one (Kleppmann, "How to do
 * distributed locking", 2016). The guarantee moves from the lock to the
 * resource, which sees the writes. Options choose how the token is checked,
 * to show which checks are fencing and which only look like it. */
#include <stdio.h>
#include <string.h>

#include "kv.h"

#define ALLOWED \
    (KV_OPT_TTL | KV_OPT_RELEASE | KV_OPT_VALUE | KV_OPT_EXPIRY_CLOCK | KV_OPT_DEADLINE | KV_OPT_PERSISTENCE | \
     KV_OPT_TIMEOUT | KV_OPT_FIRST_TOKEN | KV_OPT_TAKEOVER)

/* compare=: the rule that refuses a write, given the tokens the resource has
 * accepted before.
 *   <   (default) refuse a token lower than the highest accepted: the seed's
 *       and Kleppmann's rule. The current holder may write again with the
 *       same token; an older holder can never write after a newer one.
 *   <=  refuse a token lower than OR EQUAL to the highest accepted: strictly
 *       increasing tokens per write. Just as safe, but the holder's own second
 *       write is refused, so one grant buys one write.
 *   !=  refuse only the token of the last accepted write: the resource treats
 *       tokens as opaque IDs ("is this a different holder?") instead of an
 *       order. An older token coming back after a newer one is "different"
 *       and is let in, which is exactly the stale write fencing exists to stop:
 *       equality can tell two holders apart, never which one is newer. (It
 *       refuses the current holder's second write, too.)
 *   first  etcd's contrib/lock storage (contrib/lock/storage/storage.go; etcd
 *       issues #11788 and #14224): the first write stores its token (the
 *       session's lease ID) with the data unconditionally, and every later
 *       write whose token differs from the stored one is refused. The first
 *       writer may write again; nobody else ever can. A paused holder whose
 *       late write comes second is refused, but so is every write of every
 *       later holder: the newest, rightful holder is fenced out for good
 *       (the checker's finding `fenced-out`, verdict STUCK). And if the
 *       stale write comes first, it is the one stored.
 *
 * check=: who applies the rule.
 *   resource (default) the protected resource, at the moment the write
 *       arrives: the seed's checklist, "Fencing tokens are validated by the
 *       protected resource, not trusted from the client".
 *   client  the resource accepts whatever it is sent; the client compares its
 *       own token with the highest token the resource reported when the client
 *       read, and then writes. A check-then-act race: anything between the read
 *       and the write (a GC pause, a slow network) lets a newer holder write in
 *       between, and the client's check, made on old news, still passes.
 *
 * When fenced-lease runs, these options decide every write, unless the
 * scenario states `resource fencing=off`: then the lock service still issues
 * tokens and clients still attach them, but the resource checks nothing, a
 * resource that was never taught to fence (issue 11, item 11; Kleppmann's
 * point that the token protects only where the resource checks it).
 * `fencing=on` or no word changes nothing. */
enum fence_compare { FENCE_LT, FENCE_LE, FENCE_NE, FENCE_FIRST };
enum fence_check { FENCE_AT_RESOURCE, FENCE_AT_CLIENT };

struct fenced_config {
    struct kv_config kv; /* first: kv_server_* and kv_client_* read lock_config() as this */
    int compare;         /* enum fence_compare */
    int check;           /* enum fence_check */
};

/* Kept at the resource node (resource_size bytes, zeroed at the start). */
struct fenced_resource {
    uint64_t highest; /* highest token accepted so far; 0 = none */
    uint64_t last;    /* token of the last accepted write; 0 = none (with
                            compare=first: the stored token, the first write's) */
};

/* States (lock_state): the store's, then the fence's. */
enum {
    FL_ST_FENCE_ACCEPTED = KV_ST_COUNT, /* the resource accepted a token */
    FL_ST_FENCE_REJECTED,               /* the resource refused a stale token */
    FL_ST_FENCE_NO_TOKEN,               /* the resource refused a write without one */
    FL_ST_CLIENT_ABANDONED,             /* check=client: the client dropped its own write */
    FL_ST_COUNT
};
static const char *const state_names[FL_ST_COUNT] = {KV_STATE_NAMES "token-accepted", "stale-token-rejected",
                                                     "no-token-rejected", "client-abandoned-write"};

/* 1 when `rule` refuses `token`, given the highest and the last accepted
 * (with compare=first only the first write's token is ever accepted, so the
 * last accepted is the stored one). */
static int refuses(int rule, uint64_t token, uint64_t highest, uint64_t last) {
    switch (rule) {
    case FENCE_LE: return token <= highest;
    case FENCE_NE: return last != 0 && token == last;
    case FENCE_FIRST: return last != 0 && token != last;
    default: return token < highest;
    }
}

static void defaults(void *config) {
    struct fenced_config *c = config;
    memset(c, 0, sizeof *c);
    kv_config_default(&c->kv, "fenced-lease", ALLOWED);
    kv_config_replicated(&c->kv);
    c->kv.fenced = 1;
    c->kv.persistence = KV_PERSIST_ALWAYS; /* a token counter that resets is no fence */
    /* The rule at the deadline stays Redis's (redis/src/db.c, keyIsExpired:
     * `return now > when;` in milliseconds), decided for issue 25: this is
     * the Redis-like store of kv.c (SET NX PX, compare-and-delete) with a
     * counter, the shape of Kleppmann's example, and the catalog, the labs'
     * key and the figures built on it state Redis's timings. A lock service
     * that drops a lease at its deadline itself (etcd's lessor, `Remaining()
     * <= 0`; ShedLock's `lock_until <= now`) is one word away:
     * deadline=inclusive (shedlock-lock-until-fenced.lsim). */
    c->kv.deadline = KV_DEADLINE_REDIS;
    c->kv.extra_options = "compare, check";
    c->compare = FENCE_LT;
    c->check = FENCE_AT_RESOURCE;
}

static int option(void *config, const char *k, const char *v, char *err, size_t n) {
    struct fenced_config *c = config;
    if (strcmp(k, "compare") == 0) {
        if (strcmp(v, "<") == 0 || strcmp(v, "lt") == 0) c->compare = FENCE_LT;
        else if (strcmp(v, "<=") == 0 || strcmp(v, "le") == 0) c->compare = FENCE_LE;
        else if (strcmp(v, "!=") == 0 || strcmp(v, "ne") == 0) c->compare = FENCE_NE;
        else if (strcmp(v, "first") == 0) c->compare = FENCE_FIRST;
        else {
            snprintf(err, n,
                     "compare '%s' is not one of <, <=, != (or lt, le, ne) or first: the "
                     "rule that refuses a token",
                     v);
            return LSIM_EBAD_VALUE;
        }
        return 0;
    }
    if (strcmp(k, "check") == 0) {
        if (strcmp(v, "resource") == 0) c->check = FENCE_AT_RESOURCE;
        else if (strcmp(v, "client") == 0) c->check = FENCE_AT_CLIENT;
        else {
            snprintf(err, n, "check '%s' is not resource or client: who compares the token", v);
            return LSIM_EBAD_VALUE;
        }
        return 0;
    }
    return kv_option(&c->kv, k, v, err, n);
}

/* The resource's rule (engine: resource_write). With check=client the
 * resource trusts every write; it only remembers what it accepted. */
static int resource_write(struct lock_ctx *ctx, void *state, const struct lock_write *w) {
    const struct fenced_config *c = lock_config(ctx);
    struct fenced_resource *r = state;
    if (c->check == FENCE_AT_RESOURCE && lock_fencing_stated(ctx) != 0) {
        if (w->token == 0) {
            lock_state(ctx, FL_ST_FENCE_NO_TOKEN);
            return LOCK_WRITE_REJECTED_NOTOKEN;
        }
        if (refuses(c->compare, w->token, r->highest, r->last)) {
            lock_state(ctx, FL_ST_FENCE_REJECTED);
            return LOCK_WRITE_REJECTED_STALE;
        }
    }
    lock_state(ctx, FL_ST_FENCE_ACCEPTED);
    r->last = w->token;
    if (w->token > r->highest) r->highest = w->token;
    return LOCK_WRITE_ACCEPTED;
}

/* The client's own check just before its write leaves (engine:
 * client_write_ok): only with check=client, on what its read reported. */
static int client_write_ok(struct lock_ctx *ctx, void *state) {
    const struct fenced_config *c = lock_config(ctx);
    const struct kv_client *k = state;
    if (c->check != FENCE_AT_CLIENT) return 1;
    uint64_t seen = lock_read_token(ctx);
    if (!refuses(c->compare, k->token, seen, seen)) return 1;
    lock_state(ctx, FL_ST_CLIENT_ABANDONED);
    return 0;
}

const struct lock_algo algo_fenced_lease = {
        .abi = LOCK_ABI_VERSION,
        .name = "fenced-lease",
        .summary = "lease plus a monotonically increasing token per grant, checked by the resource "
                   "(compare=< <= != first, check=resource|client)",
        .default_servers = 1,
        .max_servers = KV_MAX_SERVERS,
        .config_size = sizeof(struct fenced_config),
        .config_default = defaults,
        .option = option,
        KV_ALGO_CALLBACKS,
        .resource_size = sizeof(struct fenced_resource),
        .resource_write = resource_write,
        .client_write_ok = client_write_ok,
        .state_names = state_names,
        .nstates = FL_ST_COUNT,
};
