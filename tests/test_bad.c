/* Bad inputs through the CLI: each tests/bad/ file (format in its README.md)
 * runs in a child bounded in CPU, wall clock and memory, and must end with the
 * exit code and message its first line announces, never with a signal. */
#define _DEFAULT_SOURCE /* wait4, struct rusage */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

#define BAD_DIR "tests/bad"
#define BAD_MIN_FILES 50
#define BAD_TIME_LIMIT_S 10                      /* CPU seconds per run (RLIMIT_CPU) */
#define BAD_WALL_FACTOR 3                        /* wall clock: 3x that, for a loaded machine */
#define BAD_MEM_LIMIT_BYTES (512L * 1024 * 1024) /* address space, per run */
#define BAD_MAX_ARGS 32

/* Under AddressSanitizer (make sanitize) the shadow memory needs terabytes
 * of address space, so no RLIMIT_AS can be set, runs are several times
 * slower, and inputs whose outcome is the memory limit itself are skipped. */
#if defined(__SANITIZE_ADDRESS__)
#define BAD_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BAD_SANITIZED 1
#endif
#endif
#ifndef BAD_SANITIZED
#define BAD_SANITIZED 0
#endif

static const char *bin(void) {
    const char *b = getenv("LOCKSIM_BIN");
    return b && b[0] ? b : "build/locksim";
}

/* ---- One bounded run of the binary --------------------------------------------- */

struct outcome {
    int signaled; /* killed by a signal (crash, abort, or our timeout) */
    int sig;
    int timed_out;
    int code;          /* exit code when !signaled */
    double seconds;    /* wall clock */
    long maxrss_kib;   /* peak resident set */
    char out[1 << 21]; /* start of stdout (2 MiB) */
    char err[4096];    /* start of stderr */
};

static void slurp(const char *path, char *buf, size_t n) {
    FILE *f = fopen(path, "rb");
    size_t len = f ? fread(buf, 1, n - 1, f) : 0;
    buf[len] = '\0';
    if (f) fclose(f);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Run bin() with argv[1..] = args, stdout and stderr to files, under the
 * limits; *o receives what happened. */
static void run_bounded(char *const *args, int nargs, struct outcome *o) {
    char outp[64], errp[64];
    snprintf(outp, sizeof outp, "/tmp/locksim_bad_out.%d", (int)getpid());
    snprintf(errp, sizeof errp, "/tmp/locksim_bad_err.%d", (int)getpid());
    char *argv[BAD_MAX_ARGS + 2];
    argv[0] = (char *)bin();
    for (int i = 0; i < nargs; i++) argv[i + 1] = args[i];
    argv[nargs + 1] = NULL;
    memset(o, 0, sizeof *o);
    fflush(NULL);
    double t0 = now_s();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rlimit cpu = {BAD_TIME_LIMIT_S * (BAD_SANITIZED ? 6 : 1),
                             BAD_TIME_LIMIT_S * (BAD_SANITIZED ? 6 : 1) + 1};
        struct rlimit fsz = {64L * 1024 * 1024, 64L * 1024 * 1024}; /* no runaway output */
        setrlimit(RLIMIT_CPU, &cpu);
        setrlimit(RLIMIT_FSIZE, &fsz);
        if (!BAD_SANITIZED) {
            struct rlimit as = {BAD_MEM_LIMIT_BYTES, BAD_MEM_LIMIT_BYTES};
            setrlimit(RLIMIT_AS, &as);
        }
        int fo = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int fe = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int fi = open("/dev/null", O_RDONLY);
        if (fo < 0 || fe < 0 || fi < 0) _exit(125);
        dup2(fi, 0);
        dup2(fo, 1);
        dup2(fe, 2);
        setenv("NO_COLOR", "1", 1);
        /* A sanitizer report must not pass for locksim's own exit 1. */
        setenv("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1:exitcode=86", 0);
        setenv("ASAN_OPTIONS", "exitcode=86", 0);
        execv(argv[0], argv);
        _exit(127);
    }
    double limit = BAD_TIME_LIMIT_S * BAD_WALL_FACTOR * (BAD_SANITIZED ? 6.0 : 1.0);
    int st = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    for (;;) {
        pid_t w = wait4(pid, &st, WNOHANG, &ru);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) fail_msg("wait4: %s", strerror(errno));
        if (now_s() - t0 > limit && !o->timed_out) {
            o->timed_out = 1;
            kill(pid, SIGKILL);
        }
        struct timespec pause = {0, 2000000}; /* 2 ms */
        nanosleep(&pause, NULL);
    }
    o->seconds = now_s() - t0;
    o->maxrss_kib = ru.ru_maxrss;
    o->signaled = WIFSIGNALED(st);
    o->sig = o->signaled ? WTERMSIG(st) : 0;
    o->code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    slurp(outp, o->out, sizeof o->out);
    slurp(errp, o->err, sizeof o->err);
    remove(outp);
    remove(errp);
}

/* ---- What a file expects -------------------------------------------------------- */

struct expectation {
    int code;           /* exit code */
    char text[512];     /* message: see matches() */
    char argline[1024]; /* "# args:" line, {} = the file's path; "" = default */
    int heavy;          /* "# tags: heavy" (valgrind skips it) */
    int memory_limit;   /* "# tags: memory-limit": outcome is the 512 MiB limit */
    int known_bug;      /* "# tags: known-bug": the expectation is the fixed behaviour;
                           skipped unless LOCKSIM_BAD_KNOWN=1 (see tests/bad/README.md) */
};

/* Read the header comment lines of path. Returns 0, or -1 with a message. */
static int read_expectation(const char *path, struct expectation *x, char *why, size_t n) {
    memset(x, 0, sizeof *x);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(why, n, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    char line[2048];
    int got = 0;
    for (int i = 0; i < 3 && fgets(line, sizeof line, f); i++) {
        char *p = line;
        if (i == 0 && (unsigned char)p[0] == 0xef && (unsigned char)p[1] == 0xbb && (unsigned char)p[2] == 0xbf)
            p += 3; /* a byte-order mark before the first line */
        p[strcspn(p, "\r\n")] = '\0';
        if (i == 0) {
            int used = 0;
            if (sscanf(p, "# expect: %d %n", &x->code, &used) != 1 || used == 0) break;
            snprintf(x->text, sizeof x->text, "%.500s", p + used);
            got = 1;
        } else if (strncmp(p, "# args: ", 8) == 0) {
            snprintf(x->argline, sizeof x->argline, "%.1000s", p + 8);
        } else if (strncmp(p, "# tags: ", 8) == 0) {
            x->heavy = strstr(p, "heavy") != NULL;
            x->memory_limit = strstr(p, "memory-limit") != NULL;
            x->known_bug = strstr(p, "known-bug") != NULL;
        }
    }
    fclose(f);
    if (!got) {
        snprintf(why, n, "%s: the first line must be '# expect: CODE MESSAGE'", path);
        return -1;
    }
    return 0;
}

/* Split the args line at spaces, {} becoming path (storage in buf). */
static int split_args(const struct expectation *x, const char *path, char *buf, size_t n, char **args) {
    if (!x->argline[0]) snprintf(buf, n, "run %s --narrate --width 100", path);
    else {
        size_t at = 0;
        for (const char *p = x->argline; *p && at + 1 < n; p++) {
            if (p[0] == '{' && p[1] == '}') {
                at += (size_t)snprintf(buf + at, n - at, "%s", path);
                p++;
            } else buf[at++] = *p;
            if (at >= n) at = n - 1;
        }
        buf[at] = '\0';
    }
    int k = 0;
    for (char *tok = strtok(buf, " "); tok && k < BAD_MAX_ARGS; tok = strtok(NULL, " ")) args[k++] = tok;
    return k;
}

/* 1 when "FILE:LINE:COL: " starts s, with LINE and COL >= 1. */
static int has_position(const char *s, const char *file) {
    size_t fl = strlen(file);
    if (strncmp(s, file, fl) != 0 || s[fl] != ':') return 0;
    char *end;
    long line = strtol(s + fl + 1, &end, 10);
    if (line < 1 || *end != ':') return 0;
    long col = strtol(end + 1, &end, 10);
    return col >= 1 && end[0] == ':' && end[1] == ' ';
}

/* Check one outcome against x. For the refusal codes (64, 65, 66, 70, 73)
 * the message is matched on stderr: when it starts with the file's own
 * name it must be the start of stderr's first line (with the directory
 * before it, so the exact file:line:col), otherwise stderr must contain it.
 * For codes 0 and 1 (the run completed) it must appear on stdout. */
static void check_outcome(const char *path, const struct expectation *x, const struct outcome *o, int is_run) {
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    if (o->timed_out)
        fail_msg("%s: still running after %d s of wall clock: killed", path,
                 BAD_TIME_LIMIT_S * BAD_WALL_FACTOR * (BAD_SANITIZED ? 6 : 1));
    if (o->signaled && o->sig == SIGXCPU)
        fail_msg("%s: more than %d s of CPU time (%.1f s of wall clock): stopped", path,
                 BAD_TIME_LIMIT_S * (BAD_SANITIZED ? 6 : 1), o->seconds);
    if (o->signaled) fail_msg("%s: killed by signal %d (%s); stderr: %.600s", path, o->sig, strsignal(o->sig), o->err);
    if (!o->signaled && o->code == 127 && !o->err[0])
        fail_msg("cannot run %s (LOCKSIM_BIN names the locksim binary)", bin());
    if (strstr(o->err, "runtime error:") || strstr(o->err, "AddressSanitizer") || strstr(o->err, "LeakSanitizer"))
        fail_msg("%s: sanitizer report (exit %d): %.800s", path, o->code, o->err);
    if (o->code != x->code) fail_msg("%s: exit code %d, expected %d; stderr: %.600s", path, o->code, x->code, o->err);
    if (!BAD_SANITIZED && o->maxrss_kib > BAD_MEM_LIMIT_BYTES / 1024)
        fail_msg("%s: used %ld KiB of memory, more than the limit", path, o->maxrss_kib);
    if (x->code == 0 || x->code == 1) {
        if (!strstr(o->out, x->text)) fail_msg("%s: stdout lacks '%s'; stdout starts: %.400s", path, x->text, o->out);
        return;
    }
    /* Refused input: one message on stderr (a usage error, 64, adds a
     * second line pointing at `locksim help`). */
    const char *nl = strchr(o->err, '\n');
    if (!nl || (x->code != 64 && nl[1] != '\0'))
        fail_msg("%s: stderr must be exactly one line, found: %.600s", path, o->err);
    /* Nothing is reported before the input is refused (exit 73 comes after
     * the report, when the --trace file cannot be written). */
    if (is_run && x->code != 73 && o->out[0]) fail_msg("%s: stdout must be empty, found: %.200s", path, o->out);
    if (strncmp(x->text, base, strlen(base)) == 0) {
        size_t dl = (size_t)(base - path);
        if (strncmp(o->err, path, dl) != 0 || strncmp(o->err + dl, x->text, strlen(x->text)) != 0)
            fail_msg("%s: stderr is '%.600s', expected it to start with '%.*s%s'", path, o->err, (int)dl, path,
                     x->text);
    } else if (!strstr(o->err, x->text)) {
        fail_msg("%s: stderr lacks '%s'; stderr: %.600s", path, x->text, o->err);
    }
    if (x->code == 65 && !has_position(o->err, path))
        fail_msg("%s: a malformed scenario must be reported as %s:LINE:COL: message; found: %.400s", path, path,
                 o->err);
}

/* One file of tests/bad/: run it as its header says. */
static void test_bad_file(void **state) {
    const char *path = *state;
    struct expectation x;
    char why[512], buf[4096];
    char *args[BAD_MAX_ARGS] = {0};
    if (read_expectation(path, &x, why, sizeof why) != 0) fail_msg("%s", why);
    const char *known = getenv("LOCKSIM_BAD_KNOWN");
    if (x.known_bug && !(known && strcmp(known, "1") == 0)) {
        print_message("%s: known bug, not fixed yet (tests/bad/README.md); "
                      "LOCKSIM_BAD_KNOWN=1 runs it\n",
                      path);
        skip();
    }
    if (BAD_SANITIZED && x.memory_limit) {
        print_message("%s: its outcome is the 512 MiB limit, which sanitizers cannot set\n", path);
        skip();
    }
    int n = split_args(&x, path, buf, sizeof buf, args);
    static struct outcome o;
    run_bounded(args, n, &o);
    check_outcome(path, &x, &o, n > 0 && strcmp(args[0], "run") == 0);
}

/* ---- Inputs that cannot be checked-in files ------------------------------------------------ */

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* Run `locksim run PATH` and check code and message like a corpus file. */
static void expect_run(const char *path, int code, const char *text) {
    struct expectation x;
    memset(&x, 0, sizeof x);
    x.code = code;
    snprintf(x.text, sizeof x.text, "%s", text);
    char *args[] = {"run", (char *)path, "--no-timeline"};
    static struct outcome o;
    run_bounded(args, 3, &o);
    check_outcome(path, &x, &o, 1);
}

/* A file one byte over the 16 MiB limit is refused before it is parsed;
 * reading stops at the limit, so endless input (/dev/zero) is refused too. */
static void test_file_too_large(void **state) {
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "/tmp/locksim_bad_big.%d.lsim", (int)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    static char comment[4096];
    memset(comment, 'x', sizeof comment - 1);
    comment[0] = '#';
    comment[sizeof comment - 2] = '\n';
    long total = 0, limit = 16L * 1024 * 1024 + 1;
    while (total + (long)strlen(comment) <= limit) total += fputs(comment, f) >= 0 ? (long)strlen(comment) : 0;
    while (total < limit) total += fputc('\n', f) != EOF;
    assert_int_equal(fclose(f), 0);
    expect_run(path, 66, "is larger than 16 MiB");
    remove(path);
    expect_run("/dev/zero", 66, "'/dev/zero' is larger than 16 MiB");
}

/* A directory, and a file that does not exist. */
static void test_directory_and_missing(void **state) {
    (void)state;
    expect_run(BAD_DIR, 66, "cannot read 'tests/bad': Is a directory");
    expect_run(BAD_DIR "/no-such-file.lsim", 66, "cannot open 'tests/bad/no-such-file.lsim'");
}

/* 200001 clients declared one per line: the 200001st line is refused. */
static void test_client_lines_over_limit(void **state) {
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "/tmp/locksim_bad_clients.%d.lsim", (int)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 1; i <= 200001; i++) fprintf(f, "client c%d: acquire; write; release\n", i);
    assert_int_equal(fclose(f), 0);
    const char *base = strrchr(path, '/') + 1;
    char text[128];
    snprintf(text, sizeof text, "%s:200001:8: more than 200000 clients", base);
    expect_run(path, 65, text);
    remove(path);
}

/* `check` over good, malformed and missing files: every file is reported,
 * and the exit code is the worst (66 > 65 > 1 > 0). */
static void test_check_mixed(void **state) {
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "/tmp/locksim_bad_mixed.%d.lsim", (int)getpid());
    write_file(path, "client A: acquire; wrte\n");
    char *args[] = {"check", "scenarios/gc-pause-outlives-lease.lsim", path, BAD_DIR "/absent.lsim"};
    static struct outcome o;
    run_bounded(args, 4, &o);
    assert_false(o.signaled);
    assert_int_equal(o.code, 66);
    assert_non_null(strstr(o.err, ":1:20: unknown step 'wrte'"));
    assert_non_null(strstr(o.err, "cannot open 'tests/bad/absent.lsim'"));
    assert_non_null(strstr(o.out, "scenarios: 1 passed, 2 failed"));
    remove(path);
}

/* The corpus is there and big enough to mean something. */
static void test_corpus_size(void **state) {
    (void)state;
    DIR *d = opendir(BAD_DIR);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *de; (de = readdir(d)) != NULL;) {
        size_t l = strlen(de->d_name);
        if (l > 5 && strcmp(de->d_name + l - 5, ".lsim") == 0) n++;
    }
    closedir(d);
    if (n < BAD_MIN_FILES) fail_msg("%d files in %s, expected at least %d", n, BAD_DIR, BAD_MIN_FILES);
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(void) {
    /* One test per corpus file, named after it, in name order. */
    char *paths[1024];
    int n = 0;
    DIR *d = opendir(BAD_DIR);
    if (!d) {
        fprintf(stderr, "test_bad: cannot open %s (run from the repository root): %s\n", BAD_DIR, strerror(errno));
        return 1;
    }
    for (struct dirent *de; (de = readdir(d)) != NULL && n < 1024;) {
        size_t l = strlen(de->d_name);
        if (l <= 5 || strcmp(de->d_name + l - 5, ".lsim") != 0) continue;
        size_t need = strlen(BAD_DIR) + 1 + l + 1;
        paths[n] = malloc(need);
        if (!paths[n]) return 1;
        snprintf(paths[n], need, "%s/%s", BAD_DIR, de->d_name);
        n++;
    }
    closedir(d);
    qsort(paths, (size_t)n, sizeof paths[0], by_name);

    static const struct CMUnitTest fixed[] = {
            cmocka_unit_test(test_corpus_size),           cmocka_unit_test(test_file_too_large),
            cmocka_unit_test(test_directory_and_missing), cmocka_unit_test(test_client_lines_over_limit),
            cmocka_unit_test(test_check_mixed),
    };
    size_t nfixed = sizeof fixed / sizeof fixed[0];
    struct CMUnitTest *tests = calloc(nfixed + (size_t)n, sizeof *tests);
    if (!tests) return 1;
    memcpy(tests, fixed, sizeof fixed);
    for (int i = 0; i < n; i++) {
        tests[nfixed + (size_t)i].name = paths[i] + strlen(BAD_DIR) + 1;
        tests[nfixed + (size_t)i].test_func = test_bad_file;
        tests[nfixed + (size_t)i].initial_state = paths[i];
    }
    int rc = _cmocka_run_group_tests("bad_inputs", tests, nfixed + (size_t)n, NULL, NULL);
    free(tests);
    for (int i = 0; i < n; i++) free(paths[i]);
    return rc;
}
