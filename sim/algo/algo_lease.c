/* lease: SET key token NX PX ttl, the single-instance Redis lock. Release by
 * compare-and-delete (default), plain DEL, or GET-then-DEL. The value is a
 * unique token unless value=constant. No fencing: writes carry no token. */
#include "kv.h"

#define ALLOWED \
    (KV_OPT_TTL | KV_OPT_RELEASE | KV_OPT_VALUE | KV_OPT_EXPIRY_CLOCK | KV_OPT_DEADLINE | KV_OPT_PERSISTENCE | \
     KV_OPT_TIMEOUT | KV_OPT_TAKEOVER | KV_OPT_UNCERTAINTY)

static void defaults(void *config) {
    kv_config_default(config, "lease", ALLOWED);
    kv_config_replicated(config);
}
static int option(void *config, const char *k, const char *v, char *err, size_t n) {
    return kv_option(config, k, v, err, n);
}

const struct lock_algo algo_lease = {
        .abi = LOCK_ABI_VERSION,
        .name = "lease",
        .summary = "SET NX PX lease with a TTL; release by compare-and-delete, DEL or GET-then-DEL; no fencing",
        .default_servers = 1,
        .max_servers = KV_MAX_SERVERS,
        .config_size = sizeof(struct kv_config),
        .config_default = defaults,
        .option = option,
        KV_ALGO_CALLBACKS,
        KV_STATES,
};
