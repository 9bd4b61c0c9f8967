/* Child processes with timing and peak memory, medians, report fields. */
#define _DEFAULT_SOURCE /* wait4 */
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double sp_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int sp_run(char *const argv[], int capture, struct sp_result *r) {
    memset(r, 0, sizeof *r);
    int fds[2] = {-1, -1};
    if (capture && pipe(fds) != 0) return -1;
    double t0 = sp_now_s();
    pid_t pid = fork();
    if (pid < 0) {
        if (capture) {
            close(fds[0]);
            close(fds[1]);
        }
        return -1;
    }
    if (pid == 0) {
        int fd = capture ? fds[1] : open("/dev/null", O_WRONLY);
        if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0) _exit(127);
        if (capture) close(fds[0]);
        if (fd != STDOUT_FILENO) close(fd);
        execv(argv[0], argv);
        fprintf(stderr, "bench: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    if (capture) {
        close(fds[1]);
        size_t len = 0;
        char buf[4096];
        for (;;) {
            ssize_t n = read(fds[0], buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            size_t keep = (size_t)n;
            if (len + keep > sizeof r->out - 1) keep = sizeof r->out - 1 - len;
            memcpy(r->out + len, buf, keep);
            len += keep;
        }
        r->out[len] = 0;
        close(fds[0]);
    }
    int status;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0)
        if (errno != EINTR) return -1;
    r->wall_s = sp_now_s() - t0;
    r->maxrss_kib = ru.ru_maxrss; /* Linux: kilobytes */
    r->minflt = ru.ru_minflt;
    r->exited = WIFEXITED(status);
    r->status = r->exited ? WEXITSTATUS(status) : -1;
    return 0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void sp_sort(double *v, size_t n) { qsort(v, n, sizeof *v, cmp_double); }

double sp_median(double *v, size_t n) {
    sp_sort(v, n);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double sp_quantile_sorted(const double *v, size_t n, double q) {
    size_t rank = (size_t)(q * (double)n + 0.999999);
    if (rank < 1) rank = 1;
    if (rank > n) rank = n;
    return v[rank - 1];
}

/* Start of the value of `key=` as a whole field, or NULL. */
static const char *field(const char *line, const char *key) {
    size_t k = strlen(key);
    for (const char *p = line; (p = strstr(p, key)) != NULL; p += k)
        if ((p == line || p[-1] == ' ' || p[-1] == '\n') && p[k] == '=') return p + k + 1;
    return NULL;
}

int sp_field_u64(const char *line, const char *key, uint64_t *out) {
    const char *v = field(line, key);
    if (!v) return -1;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || end == v) return -1;
    *out = x;
    return 0;
}

int sp_field_f64(const char *line, const char *key, double *out) {
    const char *v = field(line, key);
    if (!v) return -1;
    char *end;
    double x = strtod(v, &end);
    if (end == v) return -1;
    *out = x;
    return 0;
}
