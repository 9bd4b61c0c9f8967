/* The registry of built-in lock algorithms: one line per algorithm. */
#include <string.h>

#include "lock.h"

extern const struct lock_algo algo_setnx, algo_lease, algo_fenced_lease;
extern const struct lock_algo algo_local_mutex, algo_setnx_expire, algo_setnx_timestamp, algo_lease_renew;
extern const struct lock_algo algo_redlock;
extern const struct lock_algo algo_consensus;
extern const struct lock_algo algo_zookeeper, algo_zookeeper_multi, algo_chubby;
extern const struct lock_algo algo_k8s_lease, algo_pg_advisory, algo_pg_advisory_xact;
extern const struct lock_algo algo_db_conditional_update, algo_db_unique_constraint, algo_db_skip_locked,
        algo_db_idempotency_key;

static const struct lock_algo *const registry[] = {
        &algo_setnx,
        &algo_lease,
        &algo_fenced_lease,
        &algo_local_mutex,
        &algo_setnx_expire,
        &algo_setnx_timestamp,
        &algo_lease_renew,
        &algo_redlock,
        &algo_consensus,
        &algo_db_conditional_update,
        &algo_db_unique_constraint,
        &algo_db_skip_locked,
        &algo_db_idempotency_key,
        &algo_zookeeper,
        &algo_zookeeper_multi,
        &algo_chubby,
        &algo_k8s_lease,
        &algo_pg_advisory,
        &algo_pg_advisory_xact,
};

const struct lock_algo *lock_algo_at(int i) {
    if (i < 0 || i >= (int)(sizeof registry / sizeof registry[0])) return NULL;
    return registry[i];
}

const struct lock_algo *lock_algo_find(const char *name) {
    for (int i = 0; lock_algo_at(i); i++)
        if (strcmp(lock_algo_at(i)->name, name) == 0) return lock_algo_at(i);
    return NULL;
}
