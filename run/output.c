/* Output files (output.h): atomic for regular files, streaming in place for
 * everything else, written through symlinks, never over an input. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"

static int same_file(const struct stat *a, const char *path) {
    struct stat b;
    return stat(path, &b) == 0 && a->st_dev == b.st_dev && a->st_ino == b.st_ino;
}

/* Batch results are written a line a run, tens of thousands of lines a
 * second: in 256 KiB pieces rather than stdio's 4 KiB, a system call per
 * few hundred runs instead of one per five. */
static void big_buffer(struct out_file *o) {
    size_t n = (size_t)1 << 18;
    o->buf = malloc(n); /* glibc's setvbuf ignores the size unless given the buffer */
    if (o->buf && setvbuf(o->f, o->buf, _IOFBF, n) != 0) {
        free(o->buf);
        o->buf = NULL;
    }
}

/* The file a path writes to: itself, or the end of its chain of symlinks
 * (each relative target read from its link's folder); the chain may end at
 * a path that does not exist yet. 0, or LSIM_EOUTPUT for a loop. */
static int follow_links(const char *path, char *out, size_t n, char *err, size_t errlen) {
    char cur[4096], link[4096];
    snprintf(cur, sizeof cur, "%s", path);
    for (int hops = 0;; hops++) {
        struct stat ls;
        if (lstat(cur, &ls) != 0 || !S_ISLNK(ls.st_mode)) break;
        if (hops == 40) {
            snprintf(err, errlen, "cannot write '%s': %s", path, strerror(ELOOP));
            return LSIM_EOUTPUT;
        }
        ssize_t l = readlink(cur, link, sizeof link - 1);
        if (l < 0) break;
        link[l] = '\0';
        const char *slash = strrchr(cur, '/');
        size_t dir = link[0] == '/' || !slash ? 0 : (size_t)(slash - cur + 1);
        if (dir + (size_t)l >= sizeof cur) {
            snprintf(err, errlen, "cannot write '%s': %s", path, strerror(ENAMETOOLONG));
            return LSIM_EOUTPUT;
        }
        memcpy(cur + dir, link, (size_t)l + 1); /* the link's folder stays in front */
    }
    snprintf(out, n, "%s", cur);
    return LSIM_OK;
}

/* Open o->final in place with flags (O_NONBLOCK only for the open: it is
 * cleared after). */
static int open_in_place(struct out_file *o, const char *path, int flags, char *err, size_t errlen) {
    int fd = open(o->final, flags);
    if (fd < 0 && errno == ENXIO) {
        /* A FIFO nobody reads yet: say so, then wait for its reader (the
         * usual `locksim ... --trace fifo & reader fifo` starts both at once). */
        fprintf(stderr, "locksim: waiting for a reader on FIFO '%s' (nothing reads it yet)\n", path);
        fd = open(o->final, flags & ~O_NONBLOCK);
    }
    if (fd < 0) {
        snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
        return lsim_errno_code(errno, LSIM_EOUTPUT);
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0 && (fl & O_NONBLOCK)) (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    o->f = fdopen(fd, "w");
    if (!o->f) {
        int e = errno;
        snprintf(err, errlen, "cannot write '%s': %s", path, strerror(e));
        close(fd);
        return lsim_errno_code(e, LSIM_EOUTPUT);
    }
    if (!isatty(fd)) big_buffer(o); /* a terminal sees each line as it comes */
    return LSIM_OK;
}

int out_open(struct out_file *o, const char *path, const char *const *inputs, int ninputs, char *err, size_t errlen) {
    memset(o, 0, sizeof *o);
    snprintf(o->path, sizeof o->path, "%s", path);
    if (strcmp(path, "-") == 0) {
        o->mode = OUT_STDOUT;
        o->f = stdout;
        return LSIM_OK;
    }
    if (!path[0]) {
        snprintf(err, errlen, "an empty output path; give a file name, or - for standard output");
        return LSIM_EUSAGE;
    }
    /* A symlink is written through, also a dangling one (its target is
     * made): follow the chain of links to the path that receives the bytes. */
    char target[4096];
    int rc = follow_links(path, target, sizeof target, err, errlen);
    if (rc) return rc;
    struct stat st;
    int exists = stat(target, &st) == 0;
    if (exists)
        for (int i = 0; i < ninputs; i++)
            if (inputs[i] && strcmp(inputs[i], "-") != 0 && same_file(&st, inputs[i])) {
                snprintf(err, errlen, "refusing to write '%s': it is the input file '%s'", path, inputs[i]);
                return LSIM_EUSAGE;
            }
    if (exists && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "cannot write '%s': it is a directory", path);
        return LSIM_EOUTPUT;
    }
    snprintf(o->final, sizeof o->final, "%s", target);
    if (exists && !S_ISREG(st.st_mode)) {
        /* A terminal, FIFO, socket or device: stream into it as it is, but
         * never wait to open it (a FIFO nobody reads would block forever). */
        o->mode = OUT_INPLACE;
        return open_in_place(o, path, O_WRONLY | O_NONBLOCK, err, errlen);
    }
    if (exists && !(st.st_mode & 0222)) {
        snprintf(err, errlen,
                 "refusing to replace '%s': it is read-only (mode %04o); make it writable or "
                 "remove it first",
                 path, (unsigned)(st.st_mode & 07777));
        return LSIM_EOUTPUT;
    }
    const char *slash = strrchr(o->final, '/');
    int dirlen = slash ? (int)(slash - o->final + 1) : 0;
    snprintf(o->tmp, sizeof o->tmp, "%.*s.%s.tmp.%ld", dirlen, o->final, o->final + dirlen, (long)getpid());
    int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL, exists ? (st.st_mode & 07777) : 0666);
    if (fd < 0 && errno == EACCES && exists && access(o->final, W_OK) == 0) {
        /* The folder takes no new file, but the file itself may be written:
         * in place then, not atomically. */
        o->tmp[0] = '\0';
        o->mode = OUT_INPLACE;
        return open_in_place(o, path, O_WRONLY | O_TRUNC, err, errlen);
    }
    if (fd < 0) {
        snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
        o->tmp[0] = '\0';
        return lsim_errno_code(errno, LSIM_EOUTPUT);
    }
    if (exists) {
        /* Keep the old file's owner and mode (root writing a user's file
         * leaves it the user's; the umask does not narrow the mode). */
        if (fchown(fd, st.st_uid, st.st_gid) != 0 && errno != EPERM) (void)0;
        (void)fchmod(fd, st.st_mode & 07777);
    }
    o->f = fdopen(fd, "w");
    if (!o->f) {
        int e = errno;
        snprintf(err, errlen, "cannot write '%s': %s", path, strerror(e));
        close(fd);
        unlink(o->tmp);
        o->tmp[0] = '\0';
        return lsim_errno_code(e, LSIM_EOUTPUT);
    }
    big_buffer(o);
    o->mode = OUT_ATOMIC;
    return LSIM_OK;
}

int out_commit(struct out_file *o, char *err, size_t errlen) {
    int bad = ferror(o->f);
    int saved = errno;
    if (fflush(o->f) != 0 && !bad) bad = 1, saved = errno;
    if (o->mode == OUT_STDOUT) {
        o->f = NULL;
        if (!bad) return LSIM_OK;
        snprintf(err, errlen, "cannot write to standard output: %s", strerror(saved));
        return LSIM_EOUTPUT;
    }
    if (o->mode == OUT_ATOMIC && !bad && fsync(fileno(o->f)) != 0 && errno != EINVAL) bad = 1, saved = errno;
    if (fclose(o->f) != 0 && !bad) bad = 1, saved = errno;
    o->f = NULL;
    free(o->buf);
    o->buf = NULL;
    if (!bad && o->mode == OUT_ATOMIC && rename(o->tmp, o->final) != 0) bad = 1, saved = errno;
    if (bad) {
        if (o->tmp[0]) unlink(o->tmp);
        o->tmp[0] = '\0';
        snprintf(err, errlen, "cannot write '%s': %s", o->path, strerror(saved ? saved : EIO));
        return lsim_errno_code(saved, LSIM_EOUTPUT);
    }
    o->tmp[0] = '\0';
    return LSIM_OK;
}

void out_abort(struct out_file *o) {
    if (o->f && o->mode != OUT_STDOUT) fclose(o->f);
    o->f = NULL;
    free(o->buf);
    o->buf = NULL;
    if (o->tmp[0]) unlink(o->tmp);
    o->tmp[0] = '\0';
}
