/* db-conditional-update: no lock at all. The seed's "Guarding a counter or
 * balance update -> Atomic conditional UPDATE ... WHERE": every write is
 *     UPDATE stock SET n = :value, version = version + 1 WHERE version = :read_version
 * so a write computed from a read that is no longer current matches no row.
 * condition=off drops the WHERE (the pathology: a plain read-then-write). */
#include <stdio.h>
#include <string.h>

#include "db.h"

struct cu_config {
    int condition; /* 1 = WHERE version = the version read (default); 0 = plain UPDATE */
};

static void defaults(void *config) { ((struct cu_config *)config)->condition = 1; }

/* Acquire and release complete at once, with no server round trip: there is
 * nothing to take (db_client_acquire_now). S1 exists because every run has a
 * lock server; it receives nothing. */
static int option(void *config, const char *k, const char *v, char *err, size_t n) {
    struct cu_config *c = config;
    if (strcmp(k, "condition") == 0) {
        if (lock_parse_bool(v, &c->condition) == 0) return 0;
        snprintf(err, n, "condition '%s' is not on or off", v);
        return LSIM_EBAD_VALUE;
    }
    return db_opt_unknown(err, n, k, "db-conditional-update", "condition");
}

/* Optimistic concurrency control with a version column: Kung and Robinson,
 * "On Optimistic Methods for Concurrency Control" (ACM TODS, 1981), in the form
 * Fowler calls Optimistic Offline Lock (Patterns of Enterprise Application
 * Architecture, 2002). The read returned (n, version); the update succeeds only
 * if no other update happened in between, which the database decides
 * atomically where the data lives. A paused client cannot notice its pause,
 * and does not have to: its late write names a version that has moved on.
 *
 * After "0 rows updated" real code re-reads and tries again (and then finds
 * what is left to sell): the client program's `write tries=N backoff=D`. */
enum { CU_ST_APPLIED, CU_ST_MATCHED_NO_ROW, CU_ST_COUNT }; /* states (lock_state) */
static const char *const state_names[CU_ST_COUNT] = {"update-applied", "update-matched-no-row"};

static int resource_write(struct lock_ctx *ctx, void *state, const struct lock_write *w) {
    (void)state;
    if (w->read_version == w->version) {
        lock_state(ctx, CU_ST_APPLIED);
        return LOCK_WRITE_ACCEPTED;
    }
    if (!((const struct cu_config *)lock_config(ctx))->condition) { /* plain UPDATE: last write wins */
        lock_note(ctx, "UPDATE without WHERE version: overwrites a row that changed since the read", w->read_version,
                  w->version);
        return LOCK_WRITE_ACCEPTED;
    }
    lock_state(ctx, CU_ST_MATCHED_NO_ROW);
    lock_note(ctx, "UPDATE ... WHERE version = (the version it read) matched 0 rows: the row changed", w->read_version,
              w->version);
    return LOCK_WRITE_REJECTED_COND;
}

const struct lock_algo algo_db_conditional_update = {
        .abi = LOCK_ABI_VERSION,
        .name = "db-conditional-update",
        .summary = "no lock: each write is UPDATE ... WHERE version = the version read; a stale write matches no row",
        .default_servers = 1,
        .max_servers = 1,
        .config_size = sizeof(struct cu_config),
        .config_default = defaults,
        .option = option,
        .client_acquire = db_client_acquire_now,
        .client_release = db_client_release_now,
        .resource_write = resource_write,
        .lock_free = 1,
        .state_names = state_names,
        .nstates = CU_ST_COUNT,
};
