/* The redis-server of `locksim real` (real/redis_srv.h): start, readiness,
 * stop by PID, and the signal-time cleanup. The registry below is the one
 * mutable global of real/: a signal handler can reach nothing else. */
#include "redis_srv.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clockshim.h"
#include "error.h"
#include "resp.h"
#include "spawn.h"

/* What a signal handler must undo: written only with signals blocked. */
static struct {
    volatile pid_t children[REDIS_SRV_MAX_CHILDREN];
    volatile pid_t server;
    volatile int tree; /* 1: dir holds a tree (etcd's data dir): rm -rf it */
    char dir[128];
    char log[160];
} guard;

int redis_srv_on_path(const char *bin) {
    const char *path = getenv("PATH");
    if (!path) path = "/usr/bin:/bin";
    char buf[512];
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, ":");
        snprintf(buf, sizeof buf, "%.*s/%s", (int)n, p, bin);
        if (access(buf, X_OK) == 0) return 1;
        p += n;
        if (*p == ':') p++;
    }
    snprintf(buf, sizeof buf, "/usr/bin/%s", bin);
    return access(buf, X_OK) == 0;
}

int redis_srv_available(void) { return redis_srv_on_path(REDIS_SRV_BIN); }

/* Async-signal-safe: kill and reap everything, remove the folder. */
static void cleanup_now(void) {
    for (int i = 0; i < REDIS_SRV_MAX_CHILDREN; i++)
        if (guard.children[i] > 0) {
            kill(guard.children[i], SIGKILL);
            waitpid(guard.children[i], NULL, 0);
            guard.children[i] = 0;
        }
    if (guard.server > 0) {
        kill(guard.server, SIGKILL);
        waitpid(guard.server, NULL, 0);
        guard.server = 0;
    }
    if (guard.dir[0] && guard.tree) {
        spawn_remove_tree(guard.dir); /* fork, execve and waitpid are async-signal-safe; a walk is not */
        guard.dir[0] = 0;
    }
    if (guard.dir[0]) {
        unlink(guard.log);
        char f[200];
        /* the only other file redis-server could write with --save '' */
        size_t n = strlen(guard.dir);
        memcpy(f, guard.dir, n);
        memcpy(f + n, "/dump.rdb", 10);
        unlink(f);
        rmdir(guard.dir);
        guard.dir[0] = 0;
    }
}

static void on_signal(int sig) {
    (void)sig;
    cleanup_now();
    _exit(130);
}

void redis_srv_guard_on(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigfillset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

void redis_srv_block_signals(sigset_t *old) { spawn_block_signals(old); }

void redis_srv_guard_child(pid_t pid) {
    sigset_t old;
    redis_srv_block_signals(&old);
    for (int i = 0; i < REDIS_SRV_MAX_CHILDREN; i++)
        if (guard.children[i] == 0) {
            guard.children[i] = pid;
            break;
        }
    sigprocmask(SIG_SETMASK, &old, NULL);
}

void redis_srv_guard_forget(pid_t pid) {
    sigset_t old;
    redis_srv_block_signals(&old);
    for (int i = 0; i < REDIS_SRV_MAX_CHILDREN; i++)
        if (guard.children[i] == pid) guard.children[i] = 0;
    sigprocmask(SIG_SETMASK, &old, NULL);
}

void redis_srv_guard_server(pid_t pid, const char *dir, int tree) {
    sigset_t old;
    redis_srv_block_signals(&old);
    guard.server = pid;
    guard.tree = tree;
    snprintf(guard.dir, sizeof guard.dir, "%s", dir ? dir : "");
    guard.log[0] = 0;
    sigprocmask(SIG_SETMASK, &old, NULL);
}

/* Ports claimed by this process: an abstract Unix socket named after the
 * port, bound for the life of the process, so that two locksim processes
 * looking for a free port at once (make reality runs several) never pick
 * the same one. The kernel frees the names when the process ends, however
 * it ends; nothing is on disk. */
#define PORT_CLAIMS 128
static int claimed[PORT_CLAIMS];
static int nclaimed;

static int port_claim(int port) {
    for (int i = 0; i < nclaimed; i++)
        if (claimed[i] == port) return 1;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return 1; /* no claim possible: the connect test alone decides */
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    int n = snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "locksim-real-port-%d", port);
    if (bind(fd, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n)) != 0) {
        close(fd);
        return 0; /* another locksim process holds it */
    }
    if (nclaimed < PORT_CLAIMS) claimed[nclaimed++] = port;
    else close(fd);
    return 1;
}

int redis_srv_port_taken(int port) {
    if (!port_claim(port)) return 1;
    struct resp_conn c;
    if (resp_connect(&c, port) != 0) return 0;
    resp_close(&c);
    return 1;
}

static void remove_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char f[400];
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            snprintf(f, sizeof f, "%s/%s", dir, e->d_name);
            unlink(f);
        }
        closedir(d);
    }
    rmdir(dir);
}

int redis_srv_ready(const void *port) {
    struct resp_conn c;
    if (resp_connect(&c, *(const int *)port) != 0) return 0;
    struct resp_reply r;
    const char *ping[] = {"PING"};
    int ok = resp_command(&c, &r, 1, ping) == 0 && r.type == RESP_STATUS && strcmp(r.str, "PONG") == 0;
    resp_close(&c);
    return ok;
}

int redis_srv_clockshim(char *buf, size_t n) {
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) return -1;
    exe[len] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return -1;
    *slash = '\0';
    /* build/locksim, an installed PREFIX/bin/locksim, a test in build/tests/ */
    const char *const where[] = {"real/", "../lib/locksim/", "../real/"};
    for (int i = 0; i < 3; i++) {
        int w = snprintf(buf, n, "%s/%s%s", exe, where[i], CLOCKSHIM_SO);
        if (w > 0 && (size_t)w < n && access(buf, R_OK) == 0) return 0;
    }
    return -1;
}

int redis_srv_clock_page(const char *dir, int k, struct clockshim_page **page) {
    char f[200];
    snprintf(f, sizeof f, "%s/clock-%d", dir, k);
    int fd = open(f, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0) return -1;
    unlink(f);
    void *p = MAP_FAILED;
    if (ftruncate(fd, CLOCKSHIM_PAGE_BYTES) == 0)
        p = mmap(NULL, CLOCKSHIM_PAGE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        close(fd);
        return -1;
    }
    *page = p;
    return fd;
}

int redis_srv_start(struct redis_srv *s, char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    if (!redis_srv_available()) {
        snprintf(err, errlen,
                 "redis-server is not installed: the redis backend starts its own (as root: apt-get install -y "
                 "redis-server, or make reality, which installs it)");
        return LSIM_EUNAVAILABLE;
    }
    s->port = 0;
    for (int p = REDIS_SRV_PORT; p < REDIS_SRV_PORT + 16; p++)
        if (!redis_srv_port_taken(p)) {
            s->port = p;
            break;
        }
    if (!s->port) {
        snprintf(err, errlen, "ports %d to %d on 127.0.0.1 are all taken: no room for locksim's redis-server",
                 REDIS_SRV_PORT, REDIS_SRV_PORT + 15);
        return LSIM_EUNAVAILABLE;
    }
    sigset_t old;
    int rc = spawn_tmpdir(s->dir, sizeof s->dir, "locksim-real", &old, err, errlen);
    if (rc) return rc;
    snprintf(guard.dir, sizeof guard.dir, "%s", s->dir);
    guard.tree = 0;
    snprintf(guard.log, sizeof guard.log, "%s/redis.log", s->dir);
    char port[16];
    snprintf(port, sizeof port, "%d", s->port);
    char shim[PATH_MAX], shim_fd[16] = "";
    int cfd = redis_srv_clockshim(shim, sizeof shim) == 0 ? redis_srv_clock_page(s->dir, 0, &s->clock) : -1;
    snprintf(shim_fd, sizeof shim_fd, "%d", cfd);
    pid_t pid = fork();
    if (pid == 0) {
        if (cfd >= 0) { /* the clock shim on this process only (real/clockshim.h) */
            setenv("LD_PRELOAD", shim, 1);
            setenv(CLOCKSHIM_FD_ENV, shim_fd, 1);
        }
        spawn_child(&old, NULL);
        execlp(REDIS_SRV_BIN, REDIS_SRV_BIN, "--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no",
               "--dir", guard.dir, "--logfile", guard.log, "--daemonize", "no", "--protected-mode", "yes",
               (char *)NULL);
        _exit(127);
    }
    if (pid > 0) guard.server = pid;
    if (cfd >= 0) close(cfd); /* the server has its own; the mapping stays */
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (pid < 0) {
        snprintf(err, errlen, "cannot start redis-server: fork: %s", strerror(errno));
        redis_srv_stop(s);
        return LSIM_EINTERNAL;
    }
    s->pid = pid;
    /* 5 s in all, not 500 tries: a stopped server completes the connect and
     * then holds each PING for RESP_TIMEOUT_MS (research pitfall 13). */
    int up = spawn_wait(pid, 5000, 10, redis_srv_ready, &s->port);
    if (up > 0) return 0;
    if (up < 0) {
        s->pid = 0;
        guard.server = 0;
    }
    /* A server that started and will not answer is unavailable (69), as a
     * stopped one is once set up: not a fault of ours (70). */
    snprintf(err, errlen, "redis-server did not answer PING on 127.0.0.1:%d within 5 s", s->port);
    redis_srv_stop(s);
    return LSIM_EUNAVAILABLE;
}

void redis_srv_kill(struct redis_srv *s, void (*rm)(const char *dir)) {
    if (s->pid > 0) {
        kill(s->pid, SIGTERM);
        int st, gone = 0;
        for (int i = 0; i < 200 && !gone; i++) {
            pid_t w = waitpid(s->pid, &st, WNOHANG);
            if (w == s->pid || (w < 0 && errno == ECHILD)) gone = 1; /* ECHILD: reaped already */
            else spawn_sleep_ms(10);
        }
        if (!gone) {
            kill(s->pid, SIGKILL);
            waitpid(s->pid, &st, 0);
        }
    }
    sigset_t old;
    redis_srv_block_signals(&old);
    if (guard.server == s->pid) guard.server = 0;
    s->pid = 0;
    if (s->clock) munmap(s->clock, CLOCKSHIM_PAGE_BYTES);
    s->clock = NULL;
    if (s->dir[0]) { /* one server of several (etcd's members) leaves the folder to the last */
        rm(s->dir);
        guard.dir[0] = 0;
        guard.tree = 0;
        guard.log[0] = 0;
    }
    s->dir[0] = 0;
    sigprocmask(SIG_SETMASK, &old, NULL);
}

void redis_srv_stop(struct redis_srv *s) { redis_srv_kill(s, remove_dir); }
