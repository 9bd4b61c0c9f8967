/* db-unique-constraint: no lock; the seed's "Preventing duplicate creation ->
 * UNIQUE constraint". Reserving a unit creates a row keyed by the unit's number,
 *     INSERT INTO reservations (unit) VALUES (:k)      -- UNIQUE (unit)
 * and a second insert of the same key is refused by the constraint. */
#include "db.h"

/* The reservations table: one bit per unit number, units 1..DB_UNIQUE_MAX_UNITS
 * (a 128 KiB bitmap kept at the resource). A scenario whose stock exceeds the
 * bound cannot reserve the units above it: such inserts are refused with a
 * trace note rather than silently wrapped onto other units. */
#define DB_UNIQUE_MAX_UNITS (1 << 20)

struct unique_table {
    uint8_t taken[DB_UNIQUE_MAX_UNITS / 8]; /* bit k-1 set = unit k is reserved */
};

static int option(void *config, const char *k, const char *v, char *err, size_t n) {
    (void)config;
    (void)v;
    return db_opt_unknown(err, n, k, "db-unique-constraint", "no options (it takes no lock)");
}

/* A UNIQUE constraint is checked by the database at INSERT, atomically with
 * the insert (SQL standard; PostgreSQL documentation, "Constraints", "Unique
 * Constraints"), so no two transactions can both create the same key.
 *
 * The client read n units left and writes n - 1: it is taking unit n, the
 * highest one still free when it read (so the unit is w->value + 1). The
 * insert and the stock update are one transaction: when the insert violates
 * the constraint the stock is not touched. Two clients that read the same n
 * both try to insert unit n and only the first succeeds, in whichever order
 * they arrive: the database, not a lock, decides. */
enum { UC_ST_INSERTED, UC_ST_UNIQUE_VIOLATION, UC_ST_OUT_OF_TABLE, UC_ST_COUNT }; /* lock_state */
static const char *const state_names[UC_ST_COUNT] = {"insert-applied", "unique-violation", "unit-outside-table"};

static int resource_write(struct lock_ctx *ctx, void *state, const struct lock_write *w) {
    struct unique_table *t = state;
    int64_t unit = w->value + 1;
    if (unit < 1 || unit > DB_UNIQUE_MAX_UNITS) {
        lock_note(ctx, "INSERT refused: unit number outside the modelled table (1..1048576)", unit, 0);
        lock_state(ctx, UC_ST_OUT_OF_TABLE);
        return DB_WRITE_REJECTED_UNIQUE;
    }
    size_t i = (size_t)(unit - 1);
    uint8_t bit = (uint8_t)(1u << (i % 8));
    if (t->taken[i / 8] & bit) {
        lock_note(ctx, "INSERT violates UNIQUE (unit): this unit is already reserved", unit, 0);
        lock_state(ctx, UC_ST_UNIQUE_VIOLATION);
        return DB_WRITE_REJECTED_UNIQUE;
    }
    t->taken[i / 8] |= bit;
    lock_state(ctx, UC_ST_INSERTED);
    return LOCK_WRITE_ACCEPTED;
}

const struct lock_algo algo_db_unique_constraint = {
        .abi = LOCK_ABI_VERSION,
        .name = "db-unique-constraint",
        .summary = "no lock: reserving unit k inserts a row with UNIQUE(unit); a second insert of k is refused",
        .default_servers = 1,
        .max_servers = 1,
        .option = option,
        .client_acquire = db_client_acquire_now,
        .client_release = db_client_release_now,
        .resource_size = sizeof(struct unique_table),
        .resource_write = resource_write,
        .lock_free = 1,
        .state_names = state_names,
        .nstates = UC_ST_COUNT,
};
