/* Helpers for tests that drive the locksim binary as a user does: run a
 * command line with stdout and stderr captured, write and read files, and
 * check that text is valid JSON. LOCKSIM_BIN names the binary. */
#ifndef LOCKSIM_CLI_UTIL_H
#define LOCKSIM_CLI_UTIL_H

#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700 /* realpath; include this header first */
#endif

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

/* An address-space limit (`ulimit -v`) cannot be put on a binary built with
 * AddressSanitizer (its shadow memory alone reserves terabytes); tests
 * built by `make sanitize` are, and their binary too: the limit's check is
 * the plain build's. */
#if defined(__SANITIZE_ADDRESS__)
#define TEST_ADDRESS_LIMIT_OK 0
#else
#define TEST_ADDRESS_LIMIT_OK 1
#endif

static TESTUTIL_UNUSED const char *bin(void) {
    const char *b = getenv("LOCKSIM_BIN");
    return b && b[0] ? b : "build/locksim";
}

struct result {
    int code;
    char out[1 << 21];
    char err[65536];
};

static TESTUTIL_UNUSED void slurp(const char *path, char *buf, size_t n) {
    FILE *f = fopen(path, "r");
    size_t len = f ? fread(buf, 1, n - 1, f) : 0;
    buf[len] = 0;
    if (f) fclose(f);
}

/* Run `PREFIX locksim ARGS` (PREFIX: e.g. "cd /tmp &&", may be "") with
 * stdout and stderr captured; the binary is called by its absolute path. */
static TESTUTIL_UNUSED struct result *run_in(const char *prefix, const char *args) {
    static struct result r;
    char cmd[8192], abs[4096];
    if (!realpath(bin(), abs)) snprintf(abs, sizeof abs, "%s", bin());
    snprintf(cmd, sizeof cmd, "%s NO_COLOR=1 %s %s >/tmp/locksim_cli_out.%d 2>/tmp/locksim_cli_err.%d", prefix, abs,
             args, (int)getpid(), (int)getpid());
    int st = system(cmd);
    r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    char p[64];
    snprintf(p, sizeof p, "/tmp/locksim_cli_out.%d", (int)getpid());
    slurp(p, r.out, sizeof r.out);
    remove(p);
    snprintf(p, sizeof p, "/tmp/locksim_cli_err.%d", (int)getpid());
    slurp(p, r.err, sizeof r.err);
    remove(p);
    return &r;
}

static TESTUTIL_UNUSED struct result *run(const char *args) { return run_in("", args); }

/* A scratch folder of this test process's own, made on first use under
 * /tmp (mkdtemp) and removed at exit: a test never writes a fixed path
 * that another run, or another user's file, could share. */
static char scratch_path[] = "/tmp/locksim-test.XXXXXX"; /* mkdtemp's template, made unique in place */
static int scratch_made;
static TESTUTIL_UNUSED void scratch_remove(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch_path);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", scratch_path);
}
static TESTUTIL_UNUSED const char *scratch(void) {
    char *dir = scratch_path;
    if (!scratch_made) {
        scratch_made = 1;
        if (!mkdtemp(dir)) {
            perror("mkdtemp");
            abort();
        }
        atexit(scratch_remove);
    }
    return dir;
}

/* printf into one of eight rotating buffers: fmt("%1$s/x.lsim", scratch()). */
static TESTUTIL_UNUSED __attribute__((format(printf, 1, 2))) const char *fmt(const char *f, ...) {
    static char bufs[8][8192];
    static int next;
    char *b = bufs[next++ & 7];
    va_list ap;
    va_start(ap, f);
    vsnprintf(b, sizeof bufs[0], f, ap);
    va_end(ap);
    return b;
}

/* A path in the scratch folder: sp("x.lsim"). */
static TESTUTIL_UNUSED const char *sp(const char *name) { return fmt("%s/%s", scratch(), name); }

static TESTUTIL_UNUSED void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A strict JSON (RFC 8259) recogniser: returns the end of one value at s,
 * or NULL when s does not start with a valid value. */
static const char *json_value(const char *s);
static TESTUTIL_UNUSED const char *json_ws(const char *s) {
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    return s;
}
static TESTUTIL_UNUSED const char *json_string(const char *s) {
    if (*s++ != '"') return NULL;
    for (; *s != '"'; s++) {
        if ((unsigned char)*s < 0x20) return NULL; /* control characters must be escaped */
        if (*s == '\\') {
            s++;
            if (*s == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!strchr("0123456789abcdefABCDEF", s[i]) || !s[i]) return NULL;
                s += 4;
            } else if (!*s || !strchr("\"\\/bfnrt", *s)) {
                return NULL;
            }
        }
    }
    return s + 1;
}
static TESTUTIL_UNUSED const char *json_value(const char *s) {
    s = json_ws(s);
    if (*s == '"') return json_string(s);
    if (*s == '{' || *s == '[') {
        char close = *s == '{' ? '}' : ']';
        s = json_ws(s + 1);
        if (*s == close) return s + 1;
        for (;;) {
            if (close == '}') {
                if (!(s = json_string(json_ws(s)))) return NULL;
                s = json_ws(s);
                if (*s++ != ':') return NULL;
            }
            if (!(s = json_value(s))) return NULL;
            s = json_ws(s);
            if (*s == close) return s + 1;
            if (*s++ != ',') return NULL;
        }
    }
    if (!strncmp(s, "true", 4)) return s + 4;
    if (!strncmp(s, "false", 5)) return s + 5;
    if (!strncmp(s, "null", 4)) return s + 4;
    const char *p = s;
    if (*p == '-') p++;
    if (*p < '0' || *p > '9') return NULL;
    while (*p >= '0' && *p <= '9') p++;
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++) {}
    return p;
}
/* 1 when every non-empty line of text is one valid JSON value (JSON Lines). */
static TESTUTIL_UNUSED int json_lines_valid(const char *text) {
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t l = nl ? (size_t)(nl - p) : strlen(p);
        if (l) {
            char *line = strndup(p, l);
            const char *end = line ? json_value(line) : NULL;
            int ok = end && *json_ws(end) == '\0';
            free(line);
            if (!ok) return 0;
        }
        p += l + (nl ? 1 : 0);
    }
    return 1;
}

#endif
