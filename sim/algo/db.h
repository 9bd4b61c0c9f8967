/* Shared parts of the database alternatives to a distributed lock (the seed's
 * "Prefer not to need one"): the lockless client of db-conditional-update and
 * db-unique-constraint, the one-request-at-a-time client that db-skip-locked
 * and db-idempotency-key use to talk to S1, option helpers, and the write
 * results those algorithms add. Each algorithm keeps its own file
 * (sim/algo_db_*.c) with its resource rule, its server and its struct lock_algo. */
#ifndef LOCKSIM_DB_H
#define LOCKSIM_DB_H

#include <stddef.h>
#include <stdint.h>

#include "lock.h"

/* Write results of the database rules (enum lock_write_result in lock.h). */
#define DB_WRITE_REJECTED_UNIQUE LOCK_WRITE_REJECTED_UNIQUE
#define DB_WRITE_REJECTED_DUPLICATE LOCK_WRITE_REJECTED_DUPLICATE

/* ---- Lockless client ------------------------------------------------------------
 * There is no lock to take: acquire is granted at once, inside the call, with no
 * message to any server, no token and no validity bound; release completes at
 * once. A program's `acquire` therefore marks only where the lock used to be,
 * and the fault point during-acquire is never reached. */
void db_client_acquire_now(struct lock_ctx *ctx, void *state);
void db_client_release_now(struct lock_ctx *ctx, void *state);

/* ---- One outstanding request to S1, with a timeout --------------------------------
 * Embedded by value in a client's state (zeroed by the engine). */
struct db_rpc {
    uint32_t req;   /* id of the latest request sent; replies carry it back */
    int waiting;    /* 1 while its reply is awaited */
    int what;       /* the caller's tag for that request (claim, commit ...) */
    uint64_t timer; /* handle of its timeout timer, 0 = none */
};

#define DB_TIMER_RPC 1 /* timer id used by db_rpc; algorithms use other ids */

/* Send *m (its req is filled in) to lock server 0 and arm a monotonic-clock
 * timeout of timeout_ns (0: none, the reply is awaited as long as it takes).
 * Any earlier outstanding request is forgotten. */
void db_rpc_send(struct lock_ctx *ctx, struct db_rpc *r, int what, struct lock_msg *m, sim_ns timeout_ns);
/* 1 when m answers the outstanding request: the request is then closed and
 * its timer cancelled. 0 for a late or foreign reply. */
int db_rpc_reply(struct lock_ctx *ctx, struct db_rpc *r, const struct lock_msg *m);
/* 1 when this client timer is the outstanding request's timeout: the request
 * is then closed (a trace note says so). */
int db_rpc_expired(struct lock_ctx *ctx, struct db_rpc *r, int timer, uint64_t arg);

/* ---- Options ------------------------------------------------------------------------
 * Each returns 0, or a negative LSIM_E code with a full sentence in err. */
/* "unknown option 'KEY' for ALGO; expected EXPECTED"; returns LSIM_EUNKNOWN_OPTION
 * (the engine's lenient mode drops such options when --algo swaps algorithms). */
int db_opt_unknown(char *err, size_t errlen, const char *key, const char *algo, const char *expected);
/* A duration option; zero allowed only when allow_zero. */
int db_opt_duration(const char *key, const char *val, sim_ns *out, int allow_zero, char *err, size_t errlen);

#endif
