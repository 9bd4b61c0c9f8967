/* The worker pool (pool.h): forked workers, one pipe each carrying records
 * (a header, then the caller's bytes), and a reorder window in the parent
 * that hands them out in item order. */
#define _GNU_SOURCE /* F_SETPIPE_SZ (Linux): without it the pipe keeps its size */
#include "pool.h"

#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h> /* mallopt */
#endif
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "error.h"

const int pool_stop_signals[POOL_NSTOP] = {SIGINT, SIGTERM, SIGHUP};

/* One record on a pipe: this header, then len bytes. */
struct wire {
    uint64_t idx;
    uint64_t len;
};

/* The record being written: the worker's output buffer, whose records
 * [0, rec) are complete; the one being written starts at rec with room
 * left for its header. */
struct pool_rec {
    char *buf;
    size_t len, cap; /* bytes held, and room */
    size_t rec;      /* where the current record's header is */
};

int pool_put(struct pool_rec *r, const void *p, size_t n) {
    if (r->cap - r->len < n) {
        size_t cap = r->cap;
        char *b;
        while (cap - r->len < n) cap *= 2;
        if ((b = realloc(r->buf, cap)) == NULL) return -1;
        r->buf = b;
        r->cap = cap;
    }
    memcpy(r->buf + r->len, p, n);
    r->len += n;
    return 0;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

const char *pool_signal_name(int sig) {
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGABRT: return "SIGABRT";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGALRM: return "SIGALRM: the run passed its --time-limit";
    default: return "a signal";
    }
}

/* ---- Workers ---------------------------------------------------------------- */

/* Write all n bytes (the parent may read them in pieces). */
static int write_all(int fd, const char *p, size_t n) {
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Close every descriptor from fd up. */
static void closefrom_(int fd) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    if (close_range((unsigned)fd, ~0u, 0) == 0) return;
#endif
    long max = sysconf(_SC_OPEN_MAX);
    for (long k = fd; k < (max > 0 ? max : 1024); k++) close((int)k);
}

static size_t flush_bytes(const struct pool *p) { return p->flush_bytes ? p->flush_bytes : (size_t)1 << 18; }

/* Compute item i as a record at the end of out's buffer. 0, 1 (send now),
 * or -1. */
static int compute_one(const struct pool *p, size_t i, struct pool_rec *out) {
    struct wire w = {.idx = i};
    int rc;

    out->rec = out->len;
    if (pool_put(out, &w, sizeof w) != 0) return -1;
    if ((rc = p->compute(p->arg, i, out)) < 0) return -1;
    w.len = out->len - out->rec - sizeof w;
    memcpy(out->buf + out->rec, &w, sizeof w);
    return rc;
}

/* Worker: the items first, first + jobs, ... of the list, one record each.
 * Records are gathered in a buffer and written whole, so the parent never
 * waits in the middle of a record while the worker computes the next item,
 * and reads many records a call. careful = write after every record, so a
 * crash is pinned on its item. */
static void worker_main(const struct pool *p, int fd, size_t first, int careful) {
    struct pool_rec out = {0};

    for (int k = 0; k < POOL_NSTOP; k++) signal(pool_stop_signals[k], SIG_DFL);
#ifdef M_TRIM_THRESHOLD
    /* Give nothing back to the system between items: a run that frees more
     * than glibc's 128 KiB at the heap's top had it shrink the heap, and the
     * next run grow it again (97 scenarios x 1,000 seeds at --jobs 2: 2,824
     * brk calls, each shrink a TLB flush, each growth page faults). A fixed
     * trim threshold also fixes the mmap threshold at 128 KiB, which sends
     * those blocks to mmap and munmap each run instead (1,005 pairs): both
     * are raised. The heap stays at its largest item's size, as flat in the
     * number of items as before. */
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
#endif
    out.cap = flush_bytes(p) + 4096;
    if ((out.buf = malloc(out.cap)) == NULL) _exit(70);
    if (p->worker_start) p->worker_start(p->arg);
    for (size_t i = first; i < p->hi; i += (size_t)p->jobs) {
        int now = compute_one(p, i, &out);
        if (now < 0) _exit(70);
        if (now || careful || out.len >= flush_bytes(p)) {
            if (write_all(fd, out.buf, out.len) != 0) _exit(73);
            out.len = 0;
        }
    }
    _exit(write_all(fd, out.buf, out.len) == 0 && close(fd) == 0 ? 0 : 73);
}

/* A worker as the parent sees it. Its pipe is read in large pieces into buf
 * (one read call brings a hundred records or more), and records are taken
 * from there in order, while they fit in the window. */
struct worker {
    pid_t pid;   /* 0 = not running, or reaped */
    int fd;      /* -1 = its pipe has been read to the end (or was never open) */
    int status;  /* its wait status, once reaped */
    size_t next; /* the next item of its slice it has not reported */
    int careful;
    char *buf; /* owned, kept across respawns: bytes read, [start, end) not yet taken */
    size_t start, end, cap;
};

static int spawn(const struct pool *p, struct worker *w, size_t first, int careful) {
    int fds[2];
    w->pid = 0;
    w->fd = -1;
    w->next = first;
    w->careful = careful;
    w->start = w->end = 0;
    if (first >= p->hi) return 0;
    if (pipe(fds) != 0) return -1;
#ifdef F_SETPIPE_SZ
    /* Room for the worker's whole 256 KiB buffer and more: a write then
     * seldom waits for the parent, and there are a quarter as many of them
     * (on a virtual machine each write and its wake-up cost tens of us). */
    (void)fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);
#endif
    fflush(NULL); /* nothing buffered in the parent is written twice */
    pid_t parent = getpid();
    (void)parent;
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
#ifdef __linux__
        /* Die with the parent, even one killed with SIGKILL (and if it died
         * before this line, now). */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(70);
#endif
        /* Hold no descriptor but the standard ones and this pipe: a sibling's
         * pipe held open here would keep that sibling writing to a parent
         * that is gone. */
        close(fds[0]);
        int keep = fds[1] > 3 ? 3 : fds[1];
        if (keep != fds[1] && (dup2(fds[1], keep) < 0 || close(fds[1]) != 0)) _exit(70);
        closefrom_(keep + 1);
        worker_main(p, keep, first, careful);
    }
    close(fds[1]);
    w->pid = pid;
    w->fd = fds[0];
    return 0;
}

/* The whole record at the head of w's buffer: its size, with its header in
 * *h, or 0 when not all of it has been read (*need: the bytes it takes,
 * once its header is in). *broken = 1 when the header is one no worker
 * writes (then 0, and no more is needed). */
static size_t head_record(const struct pool *p, const struct worker *w, struct wire *h, size_t *need, int *broken) {
    size_t have = w->end - w->start;
    *need = sizeof *h;
    *broken = 0;
    if (have < sizeof *h) return 0;
    memcpy(h, w->buf + w->start, sizeof *h);
    if (h->len > p->rec_max) {
        *broken = 1;
        return 0;
    }
    *need = sizeof *h + (size_t)h->len;
    return have >= *need ? *need : 0;
}

/* Close w's pipe and wait for the worker (kill it first when it may still
 * run); its wait status is kept. */
static void reap(struct worker *w, int kill_it) {
    if (kill_it) kill(w->pid, SIGKILL);
    close(w->fd);
    w->fd = -1;
    w->status = 0;
    waitpid(w->pid, &w->status, 0);
    w->pid = 0;
}

/* w's pipe is readable: one read into its buffer, or its end of file (the
 * worker is reaped then). Returns 0, or -1 when out of memory. */
static int fill(const struct pool *p, struct worker *w) {
    struct wire h;
    size_t need;
    int broken;
    head_record(p, w, &h, &need, &broken);
    if (w->start > 0 && w->end - w->start < need) { /* keep the unread bytes at the front */
        memmove(w->buf, w->buf + w->start, w->end - w->start);
        w->end -= w->start;
        w->start = 0;
    }
    size_t want = w->cap ? w->cap : (size_t)1 << 18;
    while (want < need || want - w->end < 4096) want *= 2;
    if (want != w->cap) {
        char *b = realloc(w->buf, want);
        if (!b) return -1;
        w->buf = b;
        w->cap = want;
    }
    ssize_t k;
    do k = read(w->fd, w->buf + w->end, w->cap - w->end);
    while (k < 0 && errno == EINTR);
    if (k > 0) {
        w->end += (size_t)k;
        return 0;
    }
    reap(w, 0); /* the end (or a broken pipe): the worker has finished or died */
    return 0;
}

/* ---- The parent ---------------------------------------------------------------- */

/* The reorder window: items are taken in list order, and those that arrive
 * ahead of the next one wait in a ring of WINDOW_MIN (or more, with many
 * jobs) slots. A worker is read only while its next item fits in the
 * window, so one that runs ahead blocks on its pipe instead of the parent
 * holding its results: memory stays flat in the number of items. The slots
 * and their buffers are reused: no allocation per item. */
#define WINDOW_MIN 256

struct slot {
    int full;   /* 1 = a record, 2 = the worker died in this item */
    int status; /* when 2: its wait status */
    char *rec;  /* owned: the record's bytes, reused */
    size_t len, cap;
};

struct order {
    const struct pool *p;
    struct slot *ring; /* window slots, item i at (i - lo) & (window - 1) */
    size_t window;     /* a power of two, at least the jobs */
    size_t next;       /* next item to take */
    size_t top;        /* 1 + the highest item stored */
    size_t done;
    int stopped; /* take said stop */
};

static struct slot *slot_of(struct order *o, size_t i) { return &o->ring[(i - o->p->lo) & (o->window - 1)]; }
static int in_window(const struct order *o, size_t i) { return i < o->next + o->window; }

/* Take every item that is next in order. all = also those after a gap
 * (the list was interrupted and the gap will not be filled). */
static void take_ready(struct order *o, int all) {
    for (; o->next < (all ? o->top : o->p->hi); o->next++) {
        struct slot *sl = slot_of(o, o->next);
        if (!sl->full) {
            if (all) continue;
            break;
        }
        if (!o->stopped) {
            o->stopped = o->p->take(o->p->arg, o->next, sl->full == 1 ? sl->rec : NULL, sl->full == 1 ? sl->len : 0,
                                    sl->status) != 0;
            o->done++;
        }
        sl->full = 0;
    }
}

/* Take w's whole records that fit in the window into their slots; when its
 * pipe has ended before its slice did, see it as dead: a worker that held
 * records in its buffer is started again careful from its next item, and a
 * careful one fails that item and a new one takes the rest. Returns the
 * records taken, or -1 when out of memory or a new worker cannot be started. */
static int drain(struct order *o, struct worker *w, int stopping) {
    const struct pool *p = o->p;
    int took = 0, broken = 0;
    struct wire h;
    size_t n, need;
    while (in_window(o, w->next) && ((n = head_record(p, w, &h, &need, &broken)) != 0 || broken)) {
        struct slot *sl = slot_of(o, w->next); /* free: w->next is in the window, not yet stored */
        if (broken || h.idx != w->next) {
            /* Not a record of this worker's: stop it and see it as dead. */
            if (w->fd >= 0) reap(w, 1);
            w->start = w->end = 0;
            break;
        }
        if (sl->cap < h.len || !sl->rec) {
            size_t cap = sl->cap ? sl->cap : 64;
            while (cap < h.len) cap *= 2;
            char *b = realloc(sl->rec, cap);
            if (!b) return -1;
            sl->rec = b;
            sl->cap = cap;
        }
        memcpy(sl->rec, w->buf + w->start + sizeof h, h.len);
        sl->len = h.len;
        sl->full = 1;
        if (o->top <= w->next) o->top = w->next + 1;
        w->start += n;
        w->next += (size_t)p->jobs;
        took++;
    }
    if (w->fd >= 0 || head_record(p, w, &h, &need, &broken) != 0 || w->next >= p->hi || stopping) return took;
    if (!w->careful) /* it held records in its buffer: replay them one by one */
        return spawn(p, w, w->next, 1) != 0 ? -1 : took;
    struct slot *sl = slot_of(o, w->next);
    sl->full = 2;
    sl->status = w->status;
    if (o->top <= w->next) o->top = w->next + 1;
    return spawn(p, w, w->next + (size_t)p->jobs, 1) != 0 ? -1 : took + 1;
}

static int stop_asked(const struct pool *p) { return p->stop && *p->stop; }

/* jobs 1 in this process: compute and take each item in turn. */
static int run_here(const struct pool *p, size_t *done) {
    struct pool_rec out = {.cap = 4096};
    double t0 = now_s(), shown = t0;
    int rc = 0;

    *done = 0;
    if ((out.buf = malloc(out.cap)) == NULL) return -1;
    for (size_t i = p->lo; i < p->hi && !rc; i++) {
        if (stop_asked(p)) {
            rc = 1;
            break;
        }
        out.len = 0;
        if (compute_one(p, i, &out) < 0) {
            rc = -1;
            break;
        }
        ++*done;
        if (p->take(p->arg, i, out.buf + sizeof(struct wire), out.len - sizeof(struct wire), 0) != 0) rc = 2;
        if (p->progress && now_s() - shown > 0.1) {
            p->progress(p->arg, *done, p->hi - p->lo, now_s() - t0);
            shown = now_s();
        }
    }
    free(out.buf);
    return rc;
}

static int pool_run_list(const struct pool *p0, size_t *done);

int pool_run(const struct pool *p0, size_t *done) {
    errno = 0;
    int rc = pool_run_list(p0, done);
    /* Every failure path returns -1 right after the call that failed
     * (malloc, pipe, fork, poll), with its errno. */
    return rc == -1 ? lsim_errno_code(errno, LSIM_EINTERNAL) : rc;
}

static int pool_run_list(const struct pool *p0, size_t *done) {
    struct pool pj = *p0;
    const struct pool *p = &pj;
    size_t total = p0->hi > p0->lo ? p0->hi - p0->lo : 0;

    *done = 0;
    if (p0->hi < p0->lo) pj.hi = pj.lo;
    pj.jobs = p0->jobs < 1 ? 1 : p0->jobs > POOL_MAX_JOBS ? POOL_MAX_JOBS : p0->jobs;
    if ((size_t)pj.jobs > total) pj.jobs = (int)(total ? total : 1);
    if (p->in_process && p->jobs == 1) return run_here(p, done);
    struct order o = {.p = p, .next = p->lo};
    o.window = WINDOW_MIN;
    while (o.window < 4 * (size_t)p->jobs) o.window *= 2;
    o.ring = calloc(o.window, sizeof *o.ring);
    if (!o.ring) return -1;
    struct worker w[POOL_MAX_JOBS];
    memset(w, 0, sizeof w);
    int failed = 0;
    double t0 = now_s(), shown = 0;
    for (int k = 0; k < p->jobs && !failed; k++) failed = spawn(p, &w[k], p->lo + (size_t)k, 0) != 0;
    while (!failed && !stop_asked(p) && !o.stopped) {
        /* Take what the buffers hold, as the window moves on, before waiting. */
        int took;
        do {
            took = 0;
            for (int k = 0; k < p->jobs && !failed; k++) {
                int n = drain(&o, &w[k], stop_asked(p));
                if (n < 0) failed = 1;
                else took += n;
            }
            take_ready(&o, 0);
        } while (took && !failed && !o.stopped);
        if (p->progress && now_s() - shown > 0.1) {
            p->progress(p->arg, o.done, total, now_s() - t0);
            shown = now_s();
        }
        struct pollfd pf[POOL_MAX_JOBS];
        int who[POOL_MAX_JOBS], np = 0;
        for (int k = 0; k < p->jobs; k++)
            if (w[k].fd >= 0 && in_window(&o, w[k].next)) { /* else it waits, blocked on its full pipe */
                pf[np].fd = w[k].fd;
                pf[np].events = POLLIN;
                who[np++] = k;
            }
        if (np == 0 || failed || o.stopped) break;
        if (poll(pf, (nfds_t)np, -1) < 0) {
            if (errno == EINTR) continue;
            failed = 1;
            break;
        }
        for (int k = 0; k < np && !failed; k++)
            if (pf[k].revents) failed = fill(p, &w[who[k]]) != 0;
    }
    /* Stop what still runs (stopped, or a worker could not be started). */
    for (int k = 0; k < p->jobs; k++) {
        if (w[k].pid) {
            kill(w[k].pid, SIGTERM);
            if (w[k].fd >= 0) close(w[k].fd);
            waitpid(w[k].pid, NULL, 0);
        }
        free(w[k].buf);
    }
    int interrupted = stop_asked(p);
    take_ready(&o, 1); /* what finished after a gap (stopped: only cleared) */
    for (size_t k = 0; k < o.window; k++) free(o.ring[k].rec);
    free(o.ring);
    *done = o.done;
    return failed ? -1 : interrupted ? 1 : o.stopped ? 2 : 0;
}
