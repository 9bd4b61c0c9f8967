/* Reading scenario files for every front end: the file (or standard input)
 * into one buffer, bounded at 16 MiB, then scenario_parse(). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "input.h"
#include "scenario_file.h"

#define FILE_MAX_BYTES ((size_t)16 << 20) /* the parser's own limit */

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int
load_fail(struct scn_error *err, int code, const char *fmt, ...) {
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return code;
}

int scenario_load(struct scenario *s, const char *path, struct scn_error *err) {
    int use_stdin = path != NULL && strcmp(path, "-") == 0;
    const char *name = use_stdin ? "<stdin>" : path ? path : "";
    FILE *f;
    char *buf;
    size_t n;
    int rc;

    scenario_init(s);
    snprintf(s->file, sizeof s->file, "%s", name);
    memset(err, 0, sizeof *err);
    snprintf(err->file, sizeof err->file, "%s", name);
    f = input_open(use_stdin ? "-" : name, stderr);
    if (f == NULL)
        return load_fail(err, lsim_errno_code(errno, LSIM_ENOINPUT), "cannot %s '%.200s': %s",
                         errno == EISDIR ? "read" : "open", name, strerror(errno));
    rc = input_read_all(f, FILE_MAX_BYTES, &buf, &n);
    if (rc == LSIM_ENOINPUT)
        rc = load_fail(err, lsim_errno_code(errno, rc), "cannot read '%.200s': %s", name, strerror(errno));
    else if (rc == LSIM_ENOMEM) rc = load_fail(err, rc, "cannot read '%.200s': out of memory", name);
    else if (rc == LSIM_EPARSE) rc = load_fail(err, LSIM_ENOINPUT, "'%.200s' is larger than 16 MiB", name);
    input_close(f);
    if (rc == 0) rc = scenario_parse(s, name, buf, n, err);
    free(buf);
    return rc;
}

size_t scenario_text_fault_place(const char *text, size_t len, sim_ns at) {
    struct scenario s;
    struct scn_error e;
    int rc = scenario_parse(&s, "edit", text, len, &e);
    int line = 0;
    for (int i = 0; !rc && i < s.nfaults && !line; i++)
        if (s.faults[i].point == SCN_POINT_NONE && s.faults[i].at_ns > at) line = s.faults[i].pos.line;
    scenario_close(&s);
    if (!line) return len;
    size_t off = 0; /* the start of that line */
    for (int l = 1; l < line && off < len; off++)
        if (text[off] == '\n') l++;
    size_t first = off;
    while (first < len && (text[first] == ' ' || text[first] == '\t')) first++;
    return first < len && text[first] == '@' ? off : len;
}
