/* Several redis-servers of locksim's own for one run (the redlock and
 * redis-replicated backends of `locksim real`): each started from the Debian
 * package's binary on a free loopback port from REDIS_NODES_PORT up,
 * persistence off, all their files in one temporary folder; each can be
 * paused (SIGSTOP/SIGCONT), crashed (SIGKILL) and restarted empty on its
 * port. Every process is registered with redis_srv.h's signal guard, which
 * kills them and removes the folder on SIGINT, SIGTERM or SIGHUP. */
#ifndef LOCKSIM_REDIS_NODES_H
#define LOCKSIM_REDIS_NODES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "redis_srv.h"

#define REDIS_NODES_PORT 16401 /* the first port tried; free ones up to REDIS_NODES_PORT + 59 */
#define REDIS_NODES_MAX 16     /* servers of one run, the resource's included */

/* The servers of a run; owned by struct redis_srv (its nodes), freed by
 * redis_nodes_stop. */
struct redis_nodes {
    int n;                               /* servers started */
    int port[REDIS_NODES_MAX];           /* each one's port on 127.0.0.1 */
    pid_t pid[REDIS_NODES_MAX];          /* 0 = down (crashed, not restarted) */
    int stopped[REDIS_NODES_MAX];        /* 1 while SIGSTOPped */
    int64_t resume_at[REDIS_NODES_MAX];  /* driver's real ns of a planned SIGCONT, 0 = none */
    int64_t restart_at[REDIS_NODES_MAX]; /* real ns of a planned (delayed) restart, 0 = none */
    char extra[REDIS_NODES_MAX][64];     /* one more option pair per server ("" = none), e.g.
                                            "--repl-diskless-sync-delay 0" */
    /* each server's wall clock shift (real/clockshim.h), made at its first
     * start and kept over restarts: mapped here, read by the clock shim
     * preloaded into that server; owned, unmapped by redis_nodes_close.
     * NULL = the shim was not found: the server runs on the real clock. */
    struct clockshim_page *clock[REDIS_NODES_MAX];
    int clock_fd[REDIS_NODES_MAX]; /* its descriptor, inherited by the server (valid when clock is set) */
};

/* Make srv's folder (on /dev/shm, or $LOCKSIM_REAL_TMP) and an empty node
 * table, under the signal guard; no server runs yet. 0, or an LSIM code
 * with a sentence in err (LSIM_EUNAVAILABLE: redis-server not installed). */
int redis_nodes_open(struct redis_srv *srv, char *err, size_t n);
/* Start server i (0 <= i < REDIS_NODES_MAX; its port found free the first
 * time, the same one afterwards) with args (NULL-terminated, may be NULL),
 * the clock shim preloaded on its own clock page (clock[i]) when the shim
 * is found, and wait until it answers PING (at most 5 s). 0 or -1. */
int redis_nodes_start(struct redis_srv *srv, int i, const char *const *args);
/* SIGKILL server i and reap it. */
void redis_nodes_kill(struct redis_srv *srv, int i);
/* Every server killed, the folder removed, the table freed. */
void redis_nodes_close(struct redis_srv *srv);

#endif
