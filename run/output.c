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

int out_open(struct out_file *o, const char *path, const char *const *inputs, int ninputs,
             char *err, size_t errlen) {
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
    struct stat st;
    int exists = stat(path, &st) == 0; /* follows a symlink to its target */
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
    if (exists && !S_ISREG(st.st_mode)) {
        /* A terminal, FIFO, socket or device: stream into it as it is. */
        o->mode = OUT_INPLACE;
        snprintf(o->final, sizeof o->final, "%s", path);
        o->f = fopen(path, "w");
        if (!o->f) {
            snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
            return LSIM_EOUTPUT;
        }
        if (!isatty(fileno(o->f))) big_buffer(o); /* a terminal sees each line as it comes */
        return LSIM_OK;
    }
    /* A regular file, or a new one: resolve symlinks so the link stays a
     * link and its target is what gets replaced. */
    char *real = exists ? realpath(path, NULL) : NULL;
    snprintf(o->final, sizeof o->final, "%s", real ? real : path);
    free(real);
    const char *slash = strrchr(o->final, '/');
    int dirlen = slash ? (int)(slash - o->final + 1) : 0;
    snprintf(o->tmp, sizeof o->tmp, "%.*s.%s.tmp.%ld", dirlen, o->final, o->final + dirlen, (long)getpid());
    int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL, exists ? (st.st_mode & 07777) : 0666);
    if (fd < 0) {
        snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
        o->tmp[0] = '\0';
        return LSIM_EOUTPUT;
    }
    if (exists) (void)fchmod(fd, st.st_mode & 07777); /* keep the old file's mode, umask aside */
    o->f = fdopen(fd, "w");
    if (!o->f) {
        snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
        close(fd);
        unlink(o->tmp);
        o->tmp[0] = '\0';
        return LSIM_EOUTPUT;
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
        return LSIM_EOUTPUT;
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
