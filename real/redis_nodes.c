/* The redis-servers of the redlock and redis-replicated backends
 * (real/redis_nodes.h): start, readiness, SIGKILL, restart on the same
 * port, and the folder they share. */
#include "redis_nodes.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clockshim.h"
#include "error.h"
#include "resp.h"
#include "spawn.h"

int redis_nodes_open(struct redis_srv *srv, char *err, size_t n) {
    memset(srv, 0, sizeof *srv);
    if (!redis_srv_available()) {
        snprintf(err, n,
                 "redis-server is not installed: the backend starts its own (as root: apt-get install -y "
                 "redis-server, or make reality, which installs it)");
        return LSIM_EUNAVAILABLE;
    }
    srv->nodes = calloc(1, sizeof *srv->nodes);
    if (!srv->nodes) return LSIM_ENOMEM;
    sigset_t old;
    int rc = spawn_tmpdir(srv->dir, sizeof srv->dir, "locksim-real", &old, err, n);
    if (rc) {
        free(srv->nodes);
        srv->nodes = NULL;
        return rc;
    }
    redis_srv_guard_server(0, srv->dir, 1); /* the signal guard removes the folder as a tree */
    sigprocmask(SIG_SETMASK, &old, NULL);
    return 0;
}

int redis_nodes_start(struct redis_srv *srv, int i, const char *const *args) {
    struct redis_nodes *nd = srv->nodes;
    if (!nd || i < 0 || i >= REDIS_NODES_MAX) return -1;
    if (!nd->port[i]) { /* a free port not used by another of ours */
        for (int p = REDIS_NODES_PORT; p < REDIS_NODES_PORT + 60 && !nd->port[i]; p++) {
            int ours = 0;
            for (int k = 0; k < REDIS_NODES_MAX; k++) ours |= nd->port[k] == p;
            if (!ours && !redis_srv_port_taken(p)) nd->port[i] = p;
        }
        if (!nd->port[i]) {
            errno = EADDRINUSE;
            return -1;
        }
    }
    if (i >= nd->n) nd->n = i + 1;
    char port[16], log[200];
    snprintf(port, sizeof port, "%d", nd->port[i]);
    snprintf(log, sizeof log, "%s/redis-%d.log", srv->dir, nd->port[i]);
    const char *argv[40] = {
            REDIS_SRV_BIN, "--bind", "127.0.0.1", "--port",    port, "--save",      "",   "--appendonly",
            "no",          "--dir",  srv->dir,    "--logfile", log,  "--daemonize", "no", "--protected-mode",
            "yes"};
    int argc = 17;
    for (int k = 0; args && args[k] && argc < 39; k++) argv[argc++] = args[k];
    argv[argc] = NULL;
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    /* its clock page, made once (a restarted server keeps its clock) */
    char shim[PATH_MAX], shim_fd[16] = "";
    int has_shim = redis_srv_clockshim(shim, sizeof shim) == 0;
    if (has_shim && !nd->clock[i]) {
        int fd = redis_srv_clock_page(srv->dir, i, &nd->clock[i]);
        if (fd >= 0) nd->clock_fd[i] = fd;
    }
    snprintf(shim_fd, sizeof shim_fd, "%d", nd->clock[i] ? nd->clock_fd[i] : -1);
    pid_t pid = fork();
    if (pid == 0) {
        if (has_shim && nd->clock[i]) { /* the clock shim on this process only (real/clockshim.h) */
            setenv("LD_PRELOAD", shim, 1);
            setenv(CLOCKSHIM_FD_ENV, shim_fd, 1);
        }
        spawn_child(&old, NULL);
        execvp(REDIS_SRV_BIN, (char *const *)argv);
        _exit(127);
    }
    if (pid > 0) redis_srv_guard_child(pid);
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (pid < 0) return -1;
    nd->pid[i] = pid;
    nd->stopped[i] = 0;
    int up = spawn_wait(pid, 5000, 2, redis_srv_ready, &nd->port[i]);
    if (up > 0) return 0;
    if (up < 0) {
        redis_srv_guard_forget(pid);
        nd->pid[i] = 0;
    }
    redis_nodes_kill(srv, i);
    errno = ETIMEDOUT;
    return -1;
}

void redis_nodes_kill(struct redis_srv *srv, int i) {
    struct redis_nodes *nd = srv->nodes;
    if (!nd || i < 0 || i >= REDIS_NODES_MAX || nd->pid[i] <= 0) return;
    kill(nd->pid[i], SIGKILL);
    waitpid(nd->pid[i], NULL, 0);
    redis_srv_guard_forget(nd->pid[i]);
    nd->pid[i] = 0;
    nd->stopped[i] = 0;
}

void redis_nodes_close(struct redis_srv *srv) {
    if (srv->nodes) {
        for (int i = 0; i < REDIS_NODES_MAX; i++) {
            redis_nodes_kill(srv, i);
            if (srv->nodes->clock[i]) {
                munmap(srv->nodes->clock[i], CLOCKSHIM_PAGE_BYTES);
                close(srv->nodes->clock_fd[i]);
            }
        }
        free(srv->nodes);
        srv->nodes = NULL;
    }
    if (srv->dir[0]) spawn_remove_tree(srv->dir); /* its logs: a tree removed as the signal guard would */
    redis_srv_guard_server(0, NULL, 0);
    srv->dir[0] = 0;
}
