/* Reading input files whole and bounded (input.h): the one reader behind
 * scenario files and trace files. */
#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "trace_jsonl.h"

FILE *input_open(const char *path, FILE *note) {
    if (strcmp(path, "-") == 0) return stdin;
    /* Without O_NONBLOCK, opening a FIFO waits for a writer in open(),
     * before anything could be said; a regular file is unaffected. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st, lst;
    if (fd < 0) return NULL;
    int bad = fstat(fd, &st) != 0 ? errno : S_ISDIR(st.st_mode) ? EISDIR : 0;
    if (bad) {
        close(fd);
        errno = bad;
        return NULL;
    }
    if (S_ISFIFO(st.st_mode) && lstat(path, &lst) == 0 && S_ISFIFO(lst.st_mode)) {
        /* A named FIFO (not a shell's pipe, /dev/fd/N). Linux: with no
         * writer yet, poll reports nothing (not even a hang-up) until one
         * opens the FIFO and writes or closes it. */
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 100) == 0) {
            if (note) fprintf(note, "locksim: waiting for a writer on FIFO '%s' to send its data\n", path);
            while (poll(&p, 1, -1) < 0 && errno == EINTR) {}
        }
    }
    int fl = fcntl(fd, F_GETFL);
    FILE *f = fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0 ? NULL : fdopen(fd, "rb");
    if (!f) {
        int e = errno;
        close(fd);
        errno = e;
    }
    return f;
}

void input_close(FILE *f) {
    if (f && f != stdin) fclose(f);
}

int input_read_all(FILE *f, size_t max_bytes, char **buf, size_t *n) {
    size_t cap = 0;
    struct stat st;
    *buf = NULL;
    *n = 0;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && (uintmax_t)st.st_size > max_bytes)
        return LSIM_EPARSE; /* known without reading it */
    for (;;) {
        if (*n == cap) {
            if (cap > max_bytes) break; /* one byte past the limit is enough to know */
            size_t ncap = cap ? cap * 2 : 65536;
            if (ncap > max_bytes + 1) ncap = max_bytes + 1;
            char *nb = realloc(*buf, ncap);
            if (!nb) return LSIM_ENOMEM;
            *buf = nb;
            cap = ncap;
        }
        size_t got = fread(*buf + *n, 1, cap - *n, f);
        *n += got;
        if (got == 0) break;
    }
    if (ferror(f)) return LSIM_ENOINPUT;
    if (*n > max_bytes) {
        free(*buf);
        *buf = NULL;
        return LSIM_EPARSE;
    }
    return 0;
}

int input_load_trace(struct trace *tr, const char *path, FILE *note, char *err, size_t errlen) {
    const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
    FILE *f = input_open(path, note);
    if (!f) {
        snprintf(err, errlen, "%s: %s", name, strerror(errno));
        return lsim_errno_code(errno, LSIM_ENOINPUT);
    }
    char *buf;
    size_t len;
    errno = 0;
    int rc = input_read_all(f, INPUT_TRACE_MAX_BYTES, &buf, &len);
    int saved = errno;
    input_close(f);
    if (rc == LSIM_ENOINPUT)
        rc = lsim_errno_code(saved, rc), snprintf(err, errlen, "%s: %s", name, strerror(saved ? saved : EIO));
    else if (rc == LSIM_ENOMEM) snprintf(err, errlen, "%s: out of memory", name);
    else if (rc == LSIM_EPARSE)
        snprintf(err, errlen, "%s: larger than %zu MiB, the limit of a trace file (docs/trace-format.md)", name,
                 INPUT_TRACE_MAX_BYTES >> 20);
    if (rc) {
        free(buf);
        return rc;
    }
    char msg[400];
    if (trace_read_jsonl(tr, buf, len, msg, sizeof msg) != 0) {
        /* the reader's "line N: what" becomes "PATH:N: what", the place as
         * a compiler (and every other locksim reader) gives it */
        unsigned long line = 0;
        int used = 0;
        if (sscanf(msg, "line %lu: %n", &line, &used) == 1 && used > 0)
            snprintf(err, errlen, "%s:%lu: %s", name, line, msg + used);
        else snprintf(err, errlen, "%s: %s", name, msg);
        rc = strstr(msg, "out of memory") ? LSIM_ENOMEM : LSIM_EPARSE;
    }
    free(buf);
    return rc;
}
