/* setnx: SETNX key 1 with no TTL, DEL on release. Works until a holder dies:
 * then the key is held forever and every later acquirer waits (the seed's
 * OOM-killed pod). */
#include "kv.h"

#define ALLOWED (KV_OPT_RELEASE | KV_OPT_VALUE | KV_OPT_PERSISTENCE | KV_OPT_TIMEOUT)

static void defaults(void *config) {
    struct kv_config *c = config;
    kv_config_default(c, "setnx", ALLOWED);
    kv_config_replicated(c);
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
        .config_default = defaults,
        .option = option,
        KV_ALGO_CALLBACKS,
        KV_STATES,
};
