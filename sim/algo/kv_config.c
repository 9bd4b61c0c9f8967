/* The options of the Redis-like lock store (see kv.h) and their defaults:
 * kv_config_default sets what every kv algorithm starts from, kv_option reads
 * the lock line's `key=value` options an algorithm allows, kv_validate checks
 * them against the run's servers. The store itself is kv.c. */
#include "kv_int.h"

#include <stdio.h>
#include <string.h>

_Static_assert(KV_MAX_SERVERS == LOCK_MAX_SERVERS, "kv.h's KV_MAX_SERVERS must match LOCK_MAX_SERVERS");

void kv_config_default(struct kv_config *c, const char *algo_name, unsigned allowed) {
    memset(c, 0, sizeof *c);
    c->ttl_ns = 30 * SIM_NS_PER_S;
    c->release = KV_RELEASE_CAD;
    c->unique_value = 1;
    c->first_token = 1;
    c->expiry_clock = LOCK_CLOCK_WALL;
    /* Redis's own rule at the deadline (redis/src/db.c, keyIsExpired: `return
     * now > when;`, both in milliseconds): the store is Redis, so setnx, lease,
     * lease-renew, setnx-expire, setnx-timestamp and redlock keep it. An
     * algorithm that models another store says so in its defaults
     * (fenced-lease). */
    c->deadline = KV_DEADLINE_REDIS;
    c->persistence = KV_PERSIST_NONE;
    c->request_timeout_ns = SIM_NS_PER_S;
    c->allowed = allowed;
    c->algo_name = algo_name;
    c->replication = KV_REPL_OFF;
    c->wait_timeout_ns = SIM_NS_PER_S;
    c->min_replicas_max_lag_ns = 10 * SIM_NS_PER_S; /* Redis's default */
    c->repl_timeout_ns = 60 * SIM_NS_PER_S;         /* Redis's default */
    for (int i = 0; i < KV_MAX_SERVERS; i++) {
        c->srv_min_replicas[i] = -1;
        c->srv_max_lag_ns[i] = -1;
    }
}

void kv_config_replicated(struct kv_config *c) {
    c->replication = KV_REPL_ASYNC;
    c->allowed |= KV_OPT_REPLICATION;
}

static const struct {
    const char *key;
    unsigned bit;
} kv_keys[] = {
        {"ttl", KV_OPT_TTL},
        {"release", KV_OPT_RELEASE},
        {"value", KV_OPT_VALUE},
        {"first-token", KV_OPT_FIRST_TOKEN},
        {"expiry-clock", KV_OPT_EXPIRY_CLOCK},
        {"deadline", KV_OPT_DEADLINE},
        {"renew-expired", KV_OPT_RENEW_EXPIRED},
        {"takeover", KV_OPT_TAKEOVER},
        {"uncertainty", KV_OPT_UNCERTAINTY},
        {"persistence", KV_OPT_PERSISTENCE},
        {"request-timeout", KV_OPT_TIMEOUT},
        {"repl-lag", KV_OPT_REPLICATION},
        {"wait", KV_OPT_REPLICATION},
        {"wait-timeout", KV_OPT_REPLICATION},
        {"min-replicas-to-write", KV_OPT_REPLICATION},
        {"min-replicas-max-lag", KV_OPT_REPLICATION},
        {"repl-timeout", KV_OPT_REPLICATION},
};

static int bad(char *err, size_t n, const char *key, const char *val, const char *expected) {
    snprintf(err, n, "%s '%s' is not %s", key, val, expected);
    return LSIM_EBAD_VALUE;
}

static int replication_option(struct kv_config *c, const char *key, const char *val, char *err, size_t n) {
    int64_t v;
    if (strcmp(key, "repl-lag") == 0) {
        if (lock_parse_duration(val, &c->repl_lag_ns) != 0)
            return bad(err, n, key, val, "a duration such as 500ms (0 = no lag beyond the network)");
        return 0;
    }
    if (strcmp(key, "wait") == 0 || strcmp(key, "min-replicas-to-write") == 0) {
        if (lock_parse_int(val, &v) != 0 || v < 0 || v >= KV_MAX_SERVERS)
            return bad(err, n, key, val, "a number of replicas from 0 to 14");
        if (key[0] == 'w') c->wait_replicas = (int)v;
        else c->min_replicas = (int)v;
        return 0;
    }
    if (strcmp(key, "repl-timeout") == 0) {
        if (lock_parse_duration(val, &c->repl_timeout_ns) != 0 || c->repl_timeout_ns <= 0)
            return bad(err, n, key, val, "a positive duration such as 60s");
        return 0;
    }
    if (strcmp(key, "wait-timeout") == 0) {
        if (lock_parse_duration(val, &c->wait_timeout_ns) != 0 || c->wait_timeout_ns <= 0)
            return bad(err, n, key, val,
                       "a positive duration (Redis's WAIT 0 blocks forever, which a lock client cannot afford)");
        return 0;
    }
    /* min-replicas-max-lag */
    if (lock_parse_duration(val, &c->min_replicas_max_lag_ns) != 0 || c->min_replicas_max_lag_ns <= 0)
        return bad(err, n, key, val, "a positive duration such as 10s");
    return 0;
}

/* `S<n>.KEY=VALUE`: one server's own min-replicas-to-write or
 * min-replicas-max-lag, as each Redis server reads its own configuration (a
 * replica promoted by Sentinel keeps what it was configured with). Returns 1
 * when key has no `S<n>.` prefix or the store is not replicated (the key is
 * then unknown like any other). */
static int server_option(struct kv_config *c, const char *key, const char *val, char *err, size_t n) {
    const char *dot = strchr(key, '.');
    if (key[0] != 'S' || !dot || dot == key + 1 || !(c->allowed & KV_OPT_REPLICATION)) return 1;
    int num = 0;
    for (const char *d = key + 1; d < dot; d++) {
        if (*d < '0' || *d > '9' || num > KV_MAX_SERVERS) return 1;
        num = num * 10 + (*d - '0');
    }
    const char *sub = dot + 1;
    int lag = strcmp(sub, "min-replicas-max-lag") == 0;
    if (!lag && strcmp(sub, "min-replicas-to-write") != 0) {
        snprintf(err, n,
                 "unknown option '%s' for %s; expected a server's own min-replicas-to-write or "
                 "min-replicas-max-lag (as in S2.min-replicas-to-write=0)",
                 key, c->algo_name);
        return LSIM_EUNKNOWN_OPTION;
    }
    if (num < 1 || num > KV_MAX_SERVERS) {
        snprintf(err, n, "option '%s' names no lock server; expected S1..S%d before the '.'", key, KV_MAX_SERVERS);
        return LSIM_EBAD_VALUE;
    }
    struct kv_config tmp = *c; /* the shared rules check the value */
    int rc = replication_option(&tmp, sub, val, err, n);
    if (rc != 0) return rc;
    if (lag) c->srv_max_lag_ns[num - 1] = tmp.min_replicas_max_lag_ns;
    else c->srv_min_replicas[num - 1] = tmp.min_replicas;
    return 0;
}

int kv_validate(const void *config, int nservers, char *err, size_t n) {
    const struct kv_config *c = config;
    for (int i = nservers; i < KV_MAX_SERVERS; i++)
        if (c->srv_min_replicas[i] >= 0 || c->srv_max_lag_ns[i] >= 0) {
            snprintf(err, n, "a per-server option names S%d, but this run has %d lock server%s (S1..S%d)", i + 1,
                     nservers, nservers == 1 ? "" : "s", nservers);
            return LSIM_EBAD_VALUE;
        }
    return 0;
}

int kv_option(struct kv_config *c, const char *key, const char *val, char *err, size_t n) {
    int per_server = server_option(c, key, val, err, n);
    if (per_server != 1) return per_server;
    unsigned bit = 0;
    for (size_t i = 0; i < sizeof kv_keys / sizeof kv_keys[0]; i++)
        if (strcmp(kv_keys[i].key, key) == 0) bit = kv_keys[i].bit;
    if (!(bit & c->allowed)) {
        char list[512] = "";
        for (size_t i = 0; i < sizeof kv_keys / sizeof kv_keys[0]; i++)
            if (kv_keys[i].bit & c->allowed) {
                size_t l = strlen(list);
                snprintf(list + l, sizeof list - l, "%s%s", l ? ", " : "", kv_keys[i].key);
            }
        if (c->extra_options && c->extra_options[0]) {
            size_t l = strlen(list);
            snprintf(list + l, sizeof list - l, "%s%s", l ? ", " : "", c->extra_options);
        }
        snprintf(err, n, "unknown option '%s' for %s; expected %s", key, c->algo_name, list[0] ? list : "no options");
        return LSIM_EUNKNOWN_OPTION;
    }
    int64_t v;
    switch (bit) {
    case KV_OPT_TTL:
        if (lock_parse_duration(val, &c->ttl_ns) != 0 || c->ttl_ns <= 0)
            return bad(err, n, "ttl", val, "a positive duration such as 30s");
        return 0;
    case KV_OPT_RELEASE:
        if (strcmp(val, "compare-and-delete") == 0) c->release = KV_RELEASE_CAD;
        else if (strcmp(val, "del") == 0) c->release = KV_RELEASE_DEL;
        else if (strcmp(val, "get-then-del") == 0) c->release = KV_RELEASE_GET_DEL;
        else return bad(err, n, "release", val, "one of compare-and-delete, del, get-then-del");
        return 0;
    case KV_OPT_VALUE:
        if (strcmp(val, "unique") == 0) c->unique_value = 1;
        else if (strcmp(val, "constant") == 0) c->unique_value = 0;
        else return bad(err, n, "value", val, "unique or constant");
        return 0;
    case KV_OPT_FIRST_TOKEN:
        if (lock_parse_int(val, &v) != 0 || v < 1) return bad(err, n, "first-token", val, "a positive integer");
        c->first_token = (uint64_t)v;
        return 0;
    case KV_OPT_EXPIRY_CLOCK:
        if (strcmp(val, "wall") == 0) c->expiry_clock = LOCK_CLOCK_WALL;
        else if (strcmp(val, "monotonic") == 0) c->expiry_clock = LOCK_CLOCK_MONO;
        else return bad(err, n, "expiry-clock", val, "wall or monotonic");
        return 0;
    case KV_OPT_DEADLINE:
        if (strcmp(val, "redis") == 0) c->deadline = KV_DEADLINE_REDIS;
        else if (strcmp(val, "inclusive") == 0) c->deadline = KV_DEADLINE_INCLUSIVE;
        else if (strcmp(val, "exclusive") == 0) c->deadline = KV_DEADLINE_EXCLUSIVE;
        else
            return bad(err, n, "deadline", val,
                       "redis (kept through the deadline's millisecond), inclusive (gone at now >= "
                       "deadline) or exclusive (gone at now > deadline)");
        return 0;
    case KV_OPT_RENEW_EXPIRED:
        if (strcmp(val, "on") == 0) c->renew_expired = 1;
        else if (strcmp(val, "off") == 0) c->renew_expired = 0;
        else
            return bad(err, n, "renew-expired", val,
                       "on (a lapsed lease is renewed while nobody took it, as Azure blob leases do) or "
                       "off (an expired key is gone, as in Redis)");
        return 0;
    case KV_OPT_TAKEOVER:
        if (strcmp(val, "on") == 0) c->takeover = 1;
        else if (strcmp(val, "off") == 0) c->takeover = 0;
        else
            return bad(err, n, "takeover", val,
                       "on (an acquire on a held key takes it over at once with a new epoch, as Kafka's "
                       "InitProducerId) or off (a held key refuses it, SET NX)");
        return 0;
    case KV_OPT_UNCERTAINTY:
        if (lock_parse_duration(val, &c->uncertainty_ns) != 0 || c->uncertainty_ns < 0)
            return bad(err, n, "uncertainty", val, "a duration such as 500ms (0 = no check)");
        return 0;
    case KV_OPT_PERSISTENCE:
        if (strcmp(val, "none") == 0) c->persistence = KV_PERSIST_NONE;
        else if (strcmp(val, "always") == 0) c->persistence = KV_PERSIST_ALWAYS;
        else return bad(err, n, "persistence", val, "none or always");
        return 0;
    case KV_OPT_TIMEOUT:
        if (lock_parse_duration(val, &c->request_timeout_ns) != 0 || c->request_timeout_ns <= 0)
            return bad(err, n, "request-timeout", val, "a positive duration");
        return 0;
    case KV_OPT_REPLICATION: return replication_option(c, key, val, err, n);
    }
    return LSIM_EBAD_VALUE;
}
