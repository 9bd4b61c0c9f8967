/* The server processes' common steps (real/spawn.h). */
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "error.h"

void spawn_block_signals(sigset_t *old) {
    sigset_t all;
    sigemptyset(&all);
    sigaddset(&all, SIGINT);
    sigaddset(&all, SIGTERM);
    sigaddset(&all, SIGHUP);
    sigprocmask(SIG_BLOCK, &all, old);
}

int spawn_tmpdir(char *dir, size_t n, const char *prefix, sigset_t *old, char *err, size_t errlen) {
    const char *base = getenv("LOCKSIM_REAL_TMP");
    if (!base || !base[0] || strlen(base) > 80) base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(dir, n, "%s/%s-XXXXXX", base, prefix);
    spawn_block_signals(old);
    if (!mkdtemp(dir)) {
        sigprocmask(SIG_SETMASK, old, NULL);
        snprintf(err, errlen, "cannot make a temporary folder in %s: %s", base, strerror(errno));
        dir[0] = 0;
        return LSIM_EINTERNAL;
    }
    return 0;
}

void spawn_child(const sigset_t *old, const char *log) {
    setsid();
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    sigprocmask(SIG_SETMASK, old, NULL);
    int nul = open("/dev/null", log ? O_RDONLY : O_RDWR);
    int out = log ? open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644) : nul;
    if (nul >= 0) dup2(nul, 0);
    if (out >= 0) {
        dup2(out, 1);
        dup2(out, 2);
    }
}

void spawn_remove_tree(const char *dir) {
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/rm", "rm", "-rf", dir, (char *)NULL);
        _exit(127);
    }
    if (pid > 0) waitpid(pid, NULL, 0);
}

void spawn_sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

int spawn_wait(pid_t pid, long ms, long step_ms, int (*ready)(const void *arg), const void *arg) {
    struct timespec t0, tn;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (tn = t0; (tn.tv_sec - t0.tv_sec) * 1000 + (tn.tv_nsec - t0.tv_nsec) / 1000000 < ms;
         clock_gettime(CLOCK_MONOTONIC, &tn)) {
        if (ready(arg)) return 1;
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) return -1;
        spawn_sleep_ms(step_ms);
    }
    return 0;
}
