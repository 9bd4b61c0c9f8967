/* The registry of built-in lock algorithms: one line per algorithm. */
#include <string.h>

#include "lock.h"

extern const struct lock_algo algo_setnx, algo_lease, algo_fenced_lease;

static const struct lock_algo *const registry[] = {
    &algo_setnx,
    &algo_lease,
    &algo_fenced_lease,
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
