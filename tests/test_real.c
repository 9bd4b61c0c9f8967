/* locksim real against a real redis-server (issue 23): one short scenario
 * played for real gives the simulated verdict, and a run that ends, or is
 * interrupted at any point, leaves no server, no client and no file behind.
 * Skipped, saying so, when redis-server is not installed (CI installs it). */
#include "cli_util.h"

#include <dirent.h>
#include <sys/stat.h>
#include <signal.h>
#include <time.h>

#include <cmocka.h>

static int have_redis(void) { return system("command -v redis-server >/dev/null 2>&1") == 0; }

/* 1 when some process's command line mentions needle. */
static int process_mentions(const char *needle) {
    DIR *d = opendir("/proc");
    int found = 0;
    struct dirent *e;
    while (d && !found && (e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        char p[300], buf[4096];
        snprintf(p, sizeof p, "/proc/%s/cmdline", e->d_name);
        FILE *f = fopen(p, "r");
        if (!f) continue;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        for (size_t i = 0; i < n; i++)
            if (!buf[i]) buf[i] = ' ';
        buf[n] = 0;
        if (strstr(buf, needle)) found = 1;
    }
    if (d) closedir(d);
    return found;
}

/* Entries in dir, "." and ".." aside. */
static int entries(const char *dir) {
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
    if (d) closedir(d);
    return n;
}

static void ms_sleep(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The seed's timeline for real: A's lease (300 ms at scale 0.01) runs out
 * while A is stopped, B takes the lock, A's late write is accepted:
 * UNSAFE, as simulated. Afterwards: no server, no client, no folder. */
static void test_real_gc_pause_unsafe_and_clean(void **state) {
    (void)state;
    if (!have_redis()) {
        printf("test_real: SKIP: redis-server is not installed (apt-get install redis-server; CI installs it)\n");
        skip();
    }
    char tmp[] = "/tmp/locksim-test-real-XXXXXX";
    assert_non_null(mkdtemp(tmp));
    char args[600];
    snprintf(args, sizeof args, "real scenarios/gc-pause-outlives-lease.lsim --scale 0.01 --trace %s/t.jsonl", tmp);
    char prefix[300];
    snprintf(prefix, sizeof prefix, "LOCKSIM_REAL_TMP=%s", tmp);
    struct result *r = run_in(prefix, args);
    if (r->code != 0) printf("%s%s", r->out, r->err);
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "run 1: simulated UNSAFE, real UNSAFE"));
    assert_non_null(strstr(r->out, "scale 0.01"));
    /* The recorded trace is read and judged by check-trace: UNSAFE. */
    snprintf(args, sizeof args, "check-trace %s/t.jsonl", tmp);
    r = run_in("", args);
    assert_non_null(strstr(r->out, "Verdict: UNSAFE"));
    char path[400];
    snprintf(path, sizeof path, "%s/t.jsonl", tmp);
    unlink(path);
    /* Nothing is left: no folder of the server's, no process naming it. */
    assert_int_equal(entries(tmp), 0);
    assert_false(process_mentions(tmp));
    rmdir(tmp);
}

/* A refused scenario says why and exits 69 (the exit table's row). */
static void test_real_refuses_what_it_cannot_make_real(void **state) {
    (void)state;
    struct result *r = run_in("", "real scenarios/server-clock-jump-expires-early.lsim");
    assert_int_equal(r->code, 69);
    assert_non_null(strstr(r->err, "cannot be run for real"));
}

/* A server that answers the driver but refuses the clients (a stand-in
 * redis-server on PATH: it answers its first two connections, the readiness
 * PING and the set-up, then closes its port): the run stops at once with
 * exit 69 saying how many clients could not connect, where it used to wait
 * forever for them. No real Redis is needed. */
static void test_real_clients_that_cannot_connect(void **state) {
    (void)state;
    char dir[] = "/tmp/locksim-test-fake-redis-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[300];
    snprintf(path, sizeof path, "%s/redis-server", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("#!/usr/bin/env python3\n"
          "import socket, sys\n"
          "port = int(sys.argv[sys.argv.index('--port') + 1])\n"
          "ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
          "ls.bind(('127.0.0.1', port)); ls.listen(8)\n"
          "for k in range(2):\n"
          "    c, _ = ls.accept(); f = c.makefile('rb')\n"
          "    while True:\n"
          "        line = f.readline()\n"
          "        if not line: break\n"
          "        if line.startswith(b'*'):\n"
          "            for i in range(int(line[1:])): f.readline(); f.readline()\n"
          "            c.sendall(b'+PONG\\r\\n' if k == 0 else b'+OK\\r\\n')\n"
          "            if k == 0: break\n"
          "    c.close()\n"
          "ls.close()\n"
          "import time; time.sleep(60)\n",
          f);
    fclose(f);
    chmod(path, 0755);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    struct result *r = run_in(fmt("PATH=%s:$PATH", dir), "real scenarios/gc-pause-outlives-lease.lsim");
    clock_gettime(CLOCK_MONOTONIC, &b);
    assert_int_equal(r->code, 69);
    assert_non_null(strstr(r->err, "2 of 2 client processes could not connect to redis-server on 127.0.0.1:"));
    assert_true(b.tv_sec - a.tv_sec < 20); /* it stopped; it did not wait on the clients */
    assert_false(process_mentions(dir)); /* the stand-in server was stopped by PID */
    remove(path);
    rmdir(dir);
}

/* Interrupted at several points (while the server starts, mid-run, late),
 * by SIGINT and SIGTERM: exit 130, no server, no client, no folder. */
static void test_real_interrupted_leaves_nothing(void **state) {
    (void)state;
    if (!have_redis()) {
        printf("test_real: SKIP: redis-server is not installed\n");
        skip();
    }
    const long at_ms[] = {5, 60, 400, 900};
    const int sigs[] = {SIGINT, SIGTERM, SIGINT, SIGTERM};
    for (int k = 0; k < 4; k++) {
        char tmp[] = "/tmp/locksim-test-real-XXXXXX";
        assert_non_null(mkdtemp(tmp));
        char abs[4096];
        if (!realpath(bin(), abs)) snprintf(abs, sizeof abs, "%s", bin());
        pid_t pid = fork();
        if (pid == 0) {
            setenv("LOCKSIM_REAL_TMP", tmp, 1);
            freopen("/dev/null", "w", stdout);
            execl(abs, abs, "real", "scenarios/gc-pause-outlives-lease.lsim", "--scale", "0.01", "--repeat", "3",
                  "--store", "redis", (char *)NULL);
            _exit(127);
        }
        ms_sleep(at_ms[k]);
        kill(pid, sigs[k]);
        int st;
        waitpid(pid, &st, 0);
        /* 130 after the cleanup; or, for a signal that came before locksim
         * had started anything (a loaded machine), death by that signal. */
        if (WIFSIGNALED(st)) assert_int_equal(WTERMSIG(st), sigs[k]);
        else assert_int_equal(WEXITSTATUS(st), 130);
        ms_sleep(20);
        assert_int_equal(entries(tmp), 0);
        assert_false(process_mentions(tmp));
        rmdir(tmp);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_gc_pause_unsafe_and_clean),
        cmocka_unit_test(test_real_refuses_what_it_cannot_make_real),
        cmocka_unit_test(test_real_clients_that_cannot_connect),
        cmocka_unit_test(test_real_interrupted_leaves_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
