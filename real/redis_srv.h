/* A redis-server of locksim's own for `locksim real`: started from the
 * Debian package's binary on a fixed high loopback port, persistence off,
 * its files in a temporary folder (in $LOCKSIM_REAL_TMP when set, else
 * /dev/shm, else /tmp); stopped by PID, and the folder removed,
 * on every exit path (a normal end, an error, SIGINT, SIGTERM, SIGHUP). */
#ifndef LOCKSIM_REDIS_SRV_H
#define LOCKSIM_REDIS_SRV_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#define REDIS_SRV_PORT 16379 /* the first port tried; the next 15 if it is taken */
#define REDIS_SRV_BIN "redis-server"

/* A server process locksim started: redis-server here, etcd in
 * real/etcd_srv.h (the same three facts). */
struct redis_nodes;
struct clockshim_page;
struct redis_srv {
    pid_t pid;                 /* the server process, 0 = not running */
    int port;                  /* the port it listens on (127.0.0.1) */
    char dir[128];             /* its temporary folder, "" = none */
    struct redis_nodes *nodes; /* redlock, redis-replicated: their servers (real/redis_nodes.h;
                                  owned, freed by redis_nodes_close), NULL = one server */
    /* redis-server's wall clock shift (real/clockshim.h), mapped here and
     * in the server, whose shim reads it; owned, unmapped by the stop.
     * NULL = the shim was not found: the server runs on the real clock. */
    struct clockshim_page *clock;
};

/* The clock shim's path (build/real/locksim-clockshim.so beside the
 * running binary, or ../lib/locksim/ of an installed one, or ../real/ of a
 * test binary in build/tests/) into buf; 0 when it exists, -1 when not. */
int redis_srv_clockshim(char *buf, size_t n);
/* A clock page (real/clockshim.h) at zero: a file dir/clock-k, mapped
 * into *page (owned by the caller: munmap CLOCKSHIM_PAGE_BYTES), then
 * unlinked at once (signals are blocked), so only the descriptor, which a
 * redis-server inherits, and the mappings hold it. The descriptor (the
 * caller closes it), or -1 with *page untouched. */
int redis_srv_clock_page(const char *dir, int k, struct clockshim_page **page);

/* 1 when the redis-server on 127.0.0.1 at *(const int *)port answers PING
 * with PONG (spawn_wait's readiness, real/spawn.h). */
int redis_srv_ready(const void *port);
/* 1 when redis-server is on PATH. */
int redis_srv_available(void);
/* 1 when the program bin is on PATH (or in /usr/bin). */
int redis_srv_on_path(const char *bin);
/* Start a server and wait until it answers PING (at most 5 s), with the
 * clock shim preloaded and its page at zero (the real clock) when the shim
 * is found (redis_srv_clockshim). 0, or an
 * LSIM code (LSIM_EUNAVAILABLE when the binary is missing, LSIM_EINTERNAL
 * when it would not start) with a sentence in err; nothing is left running
 * or on disk after a failure. */
int redis_srv_start(struct redis_srv *s, char *err, size_t errlen);
/* Stop it (SIGTERM, then SIGKILL after 2 s), reap it, remove its folder.
 * Safe on a stopped or never started server. */
void redis_srv_stop(struct redis_srv *s);
/* What every server's stop does: SIGTERM by PID, SIGKILL after 2 s, then
 * its folder removed with rm (redis's holds files; etcd's data dir is a
 * tree) and the signal guard cleared. */
void redis_srv_kill(struct redis_srv *s, void (*rm)(const char *dir));

/* The cleanup on a signal: SIGINT, SIGTERM and SIGHUP kill every process
 * registered here and the server by PID, remove the server's folder and
 * end the process with status 130. The registry holds at most
 * REDIS_SRV_MAX_CHILDREN client processes. */
#define REDIS_SRV_MAX_CHILDREN 64
void redis_srv_guard_on(void);
void redis_srv_guard_child(pid_t pid);  /* register a client process */
void redis_srv_guard_forget(pid_t pid); /* it has been reaped */
/* Another backend's server (etcd): the handler kills pid and removes dir,
 * as a whole tree when tree is 1 (by running rm -rf). pid 0 and dir NULL
 * forget it. */
void redis_srv_guard_server(pid_t pid, const char *dir, int tree);
/* Block SIGINT, SIGTERM and SIGHUP (the guard's), the old mask in *old. */
void redis_srv_block_signals(sigset_t *old);
/* 1 when something answers TCP connections on 127.0.0.1:port, or another
 * locksim process has claimed it; otherwise this process claims it (for its
 * whole life), so that runs side by side never share a port. */
int redis_srv_port_taken(int port);

#endif
