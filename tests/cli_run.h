/* Running the locksim binary as a user does, for the CLI test binaries:
 * `run("ARGS")` with stdout and stderr captured, and small file helpers.
 * LOCKSIM_BIN names the binary (default build/locksim). Every helper is
 * static and may go unused in a given binary. */
#ifndef LOCKSIM_CLI_RUN_H
#define LOCKSIM_CLI_RUN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

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

/* Run `locksim ARGS` with stdout and stderr captured. The result is static:
 * the next call overwrites it. */
static TESTUTIL_UNUSED struct result *run(const char *args) {
    static struct result r;
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "NO_COLOR=1 %s %s >/tmp/locksim_cli_out.$PPID 2>/tmp/locksim_cli_err.$PPID",
             bin(), args);
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

static TESTUTIL_UNUSED void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

#endif
