/* Reading scenario files for every front end: the file (or standard input)
 * into one buffer, bounded at 16 MiB, then scenario_parse(). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "error.h"
#include "scenario_file.h"

#define FILE_MAX_BYTES ((size_t)16 << 20) /* the parser's own limit */

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int load_fail(struct scn_error *err, int code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return code;
}

/* All of f into *buf (*n bytes, owned by the caller). Reading stops one
 * chunk past the limit, so endless input is refused too. */
static int read_all(FILE *f, const char *name, char **buf, size_t *n, struct scn_error *err)
{
    size_t cap = 0;

    *buf = NULL;
    *n = 0;
    for (;;) {
        size_t got;
        if (*n == cap) {
            size_t ncap = cap ? cap * 2 : 65536;
            char *nb;
            if (cap > FILE_MAX_BYTES)
                break;
            if ((nb = realloc(*buf, ncap)) == NULL)
                return load_fail(err, LSIM_ENOMEM, "cannot read '%.200s': out of memory",
                                 name);
            *buf = nb;
            cap = ncap;
        }
        got = fread(*buf + *n, 1, cap - *n, f);
        *n += got;
        if (got == 0)
            break;
    }
    if (ferror(f))
        return load_fail(err, LSIM_ENOINPUT, "cannot read '%.200s': %s", name, strerror(errno));
    if (*n > FILE_MAX_BYTES)
        return load_fail(err, LSIM_ENOINPUT, "'%.200s' is larger than 16 MiB", name);
    return 0;
}

int scenario_load(struct scenario *s, const char *path, struct scn_error *err)
{
    int use_stdin = path != NULL && strcmp(path, "-") == 0;
    const char *name = use_stdin ? "<stdin>" : path ? path : "";
    struct stat st;
    FILE *f;
    char *buf;
    size_t n;
    int rc;

    scenario_init(s);
    snprintf(s->file, sizeof s->file, "%s", name);
    memset(err, 0, sizeof *err);
    snprintf(err->file, sizeof err->file, "%s", name);
    f = use_stdin ? stdin : fopen(name, "rb");
    if (f == NULL)
        return load_fail(err, LSIM_ENOINPUT, "cannot open '%.200s': %s", name, strerror(errno));
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        if (!use_stdin)
            fclose(f);
        return load_fail(err, LSIM_ENOINPUT, "cannot read '%.200s': %s", name, strerror(EISDIR));
    }
    rc = read_all(f, name, &buf, &n, err);
    if (!use_stdin)
        fclose(f);
    if (rc == 0)
        rc = scenario_parse(s, name, buf, n, err);
    free(buf);
    return rc;
}
