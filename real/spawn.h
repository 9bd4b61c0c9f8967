/* What every server of `locksim real` does alike (redis_srv.c,
 * redis_nodes.c, etcd_srv.c, zk_srv.c): its temporary folder, the child's
 * side of its fork, the removal of its folder, a short sleep. */
#ifndef LOCKSIM_SPAWN_H
#define LOCKSIM_SPAWN_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

/* Block SIGINT, SIGTERM and SIGHUP, the signal guard's (redis_srv.h), the
 * old mask in *old. */
void spawn_block_signals(sigset_t *old);

/* Make a temporary folder prefix-XXXXXX (e.g. "locksim-etcd") into dir (n
 * bytes) in $LOCKSIM_REAL_TMP when set (a test looks there for leftovers),
 * else /dev/shm, else /tmp, with the signal guard's signals blocked (the
 * old mask in *old) so that the caller registers the folder before a
 * signal can come. 0, signals still blocked; or LSIM_EINTERNAL with a
 * sentence in err, dir "", the old mask back. */
int spawn_tmpdir(char *dir, size_t n, const char *prefix, sigset_t *old, char *err, size_t errlen);

/* In a server's child right after fork (signals blocked, the old mask in
 * old): its own session (a Ctrl-C reaches locksim, which stops it), killed
 * if locksim dies without cleaning up, the old mask back, stdin from
 * /dev/null and stdout and stderr to the file log (created, emptied) or to
 * /dev/null when log is NULL. */
void spawn_child(const sigset_t *old, const char *log);

/* Remove the folder dir and all below it by running rm -rf, as the signal
 * guard does (a walk is not async-signal-safe; etcd's and zookeeper's data
 * dirs are trees). */
void spawn_remove_tree(const char *dir);

/* Wait up to ms for ready(arg) to say 1, asking every step_ms: 1 when it
 * did, -1 when the process pid ended first (reaped here), 0 when the time
 * ran out. */
int spawn_wait(pid_t pid, long ms, long step_ms, int (*ready)(const void *arg), const void *arg);

/* Sleep ms milliseconds, through signals. */
void spawn_sleep_ms(long ms);

#endif
