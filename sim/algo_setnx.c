/* setnx: SETNX key 1 with no TTL, DEL on release. Works until a holder dies:
 * then the key is held forever and every later acquirer waits (the seed's
 * OOM-killed pod). */
#include "kv.h"

#define ALLOWED (KV_OPT_RELEASE | KV_OPT_VALUE | KV_OPT_PERSISTENCE | KV_OPT_TIMEOUT)

static void defaults(void *config) {
    struct kv_config *c = config;
    kv_config_default(c, "setnx", ALLOWED);
    c->ttl_ns = 0;
    c->unique_value = 0;
    c->release = KV_RELEASE_DEL;
    c->persistence = KV_PERSIST_ALWAYS;
}
static int option(void *config, const char *k, const char *v, char *err, size_t n) {
    return kv_option(config, k, v, err, n);
}

const struct lock_algo algo_setnx = {
    .abi = LOCK_ABI_VERSION,
    .name = "setnx",
    .summary = "SETNX without a TTL and DEL on release: a crashed holder blocks everyone forever",
    .default_servers = 1,
    .max_servers = KV_MAX_SERVERS,
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
    .server_control = kv_server_control,
};
