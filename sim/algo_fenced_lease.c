/* fenced-lease: the lease plus a fencing token. The lock service issues a
 * strictly increasing token with each grant; the client attaches it to every
 * write and the protected resource rejects a token lower than the highest it
 * has seen (Kleppmann, "How to do distributed locking", 2016). The guarantee
 * moves from the lock to the resource, which sees the writes. */
#include "kv.h"

#define ALLOWED (KV_OPT_TTL | KV_OPT_RELEASE | KV_OPT_VALUE | KV_OPT_EXPIRY_CLOCK | \
                 KV_OPT_PERSISTENCE | KV_OPT_TIMEOUT | KV_OPT_FIRST_TOKEN)

static void defaults(void *config) {
    struct kv_config *c = config;
    kv_config_default(c, "fenced-lease", ALLOWED);
    c->fenced = 1;
    c->persistence = KV_PERSIST_ALWAYS; /* a token counter that resets is no fence */
}
static int option(void *config, const char *k, const char *v, char *err, size_t n) {
    return kv_option(config, k, v, err, n);
}

const struct lock_algo algo_fenced_lease = {
    .abi = LOCK_ABI_VERSION,
    .name = "fenced-lease",
    .summary = "lease plus a monotonically increasing token per grant, checked by the resource",
    .default_servers = 1,
    .max_servers = 1,
    .config_size = sizeof(struct kv_config),
    .client_size = sizeof(struct kv_client),
    .server_size = sizeof(struct kv_server),
    .config_default = defaults,
    .option = option,
    .client_acquire = kv_client_acquire,
    .client_release = kv_client_release,
    .client_recv = kv_client_recv,
    .client_timer = kv_client_timer,
    .server_init = kv_server_init,
    .server_recv = kv_server_recv,
    .server_timer = kv_server_timer,
    .server_restart = kv_server_restart,
};
