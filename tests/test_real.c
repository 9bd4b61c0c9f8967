/* locksim real against a real redis-server (issue 23): one short scenario
 * played for real gives the simulated verdict, and a run that ends, or is
 * interrupted at any point, leaves no server, no client and no file behind.
 * Skipped, saying so, when redis-server is not installed (CI installs it). */
#include "cli_util.h"
#include "clockshim.h"
#include "lock.h"
#include "real_int.h"
#include "redis_nodes.h"
#include "redis_srv.h"
#include "resp.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include <cmocka.h>

/* 1 when redis-server is installed; in CI (CI=true) its absence fails the
 * test instead of skipping it (.ci/run installs it before make test). */
static int have_redis(void) {
    int have = system("command -v redis-server >/dev/null 2>&1") == 0;
    const char *ci = getenv("CI");
    if (!have && ci && strcmp(ci, "true") == 0) fail_msg("test_real: redis-server is not installed, and CI=true");
    return have;
}

/* 1 when ZooKeeper (java and the Debian package's jar) is installed; in CI
 * its absence fails the test. */
static int have_zookeeper(void) {
    int have = system("command -v java >/dev/null 2>&1 && test -r /usr/share/java/zookeeper.jar") == 0;
    const char *ci = getenv("CI");
    if (!have && ci && strcmp(ci, "true") == 0) fail_msg("test_real: zookeeper is not installed, and CI=true");
    if (!have) printf("test_real: skipped: zookeeper not installed (apt-get install zookeeper; CI installs it)\n");
    return have;
}

/* 1 when etcd is installed; in CI its absence fails the test. */
static int have_etcd(void) {
    int have = system("command -v etcd >/dev/null 2>&1") == 0;
    const char *ci = getenv("CI");
    if (!have && ci && strcmp(ci, "true") == 0) fail_msg("test_real: etcd is not installed, and CI=true");
    if (!have) printf("test_real: skipped: etcd-server not installed (apt-get install etcd-server; CI installs it)\n");
    return have;
}

/* The pid of a process whose command line mentions needle, or 0. */
static pid_t process_with(const char *needle) {
    DIR *d = opendir("/proc");
    pid_t found = 0;
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
        if (strstr(buf, needle)) found = (pid_t)atoi(e->d_name);
    }
    if (d) closedir(d);
    return found;
}

static int process_mentions(const char *needle) { return process_with(needle) != 0; }

/* 1 when a process of the run whose $LOCKSIM_REAL_TMP is tmp is still
 * there: every process locksim starts (its clients, proxy, redis-servers,
 * etcd members, ZooKeeper's JVM) inherits its environment, so this finds
 * them however they renamed themselves, and never another run's (other
 * runs of locksim real on the machine use other folders). */
static int process_of_run(const char *tmp) {
    char want[300];
    snprintf(want, sizeof want, "LOCKSIM_REAL_TMP=%s", tmp);
    DIR *d = opendir("/proc");
    int found = 0;
    struct dirent *e;
    while (d && !found && (e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        char p[300], buf[65536];
        snprintf(p, sizeof p, "/proc/%s/environ", e->d_name);
        FILE *f = fopen(p, "r");
        if (!f) continue;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0; /* the variables are NUL-separated */
        for (size_t i = 0; i < n && !found; i += strlen(buf + i) + 1) found = strcmp(buf + i, want) == 0;
    }
    if (d) closedir(d);
    return found || process_mentions(tmp);
}

/* The pid of a child of parent whose command line starts with name (redis-server
 * rewrites its own title, so its folder is not in it), or 0. */
static pid_t child_named(pid_t parent, const char *name) {
    DIR *d = opendir("/proc");
    pid_t found = 0;
    struct dirent *e;
    while (d && !found && (e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        char p[300], buf[512];
        snprintf(p, sizeof p, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(p, "r");
        if (!f) continue;
        int ppid = 0;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        char *rp = strrchr(buf, ')');
        if (!rp || sscanf(rp + 2, "%*c %d", &ppid) != 1 || ppid != parent) continue;
        snprintf(p, sizeof p, "/proc/%s/cmdline", e->d_name);
        f = fopen(p, "r");
        if (!f) continue;
        n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        if (strncmp(buf, name, strlen(name)) == 0) found = (pid_t)atoi(e->d_name);
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

/* After a run: nothing in tmp, no process whose command line mentions
 * needle, and tmp removed. */
static void nothing_left(const char *tmp, const char *needle) {
    assert_int_equal(entries(tmp), 0);
    assert_false(process_mentions(needle));
    rmdir(tmp);
}

static void ms_sleep(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The seed's timeline for real: A's lease (1.5 s at scale 0.05) runs out
 * while A is stopped, B takes the lock, A's late write is accepted:
 * UNSAFE, as simulated. Afterwards: no server, no client, no folder.
 * (At scale 0.01 B's takeover and A's resume were 10 ms of real time apart,
 * and a loaded machine, load 12 beside seven builds, once ran B 66 ms late:
 * A wrote first, SAFE. 0.05 gives 50 ms, for 3 s of real time.) */
static void test_real_gc_pause_unsafe_and_clean(void **state) {
    (void)state;
    if (!have_redis()) {
        printf("test_real: SKIP: redis-server is not installed (apt-get install redis-server; CI installs it)\n");
        skip();
    }
    char tmp[] = "/tmp/locksim-test-real-XXXXXX";
    assert_non_null(mkdtemp(tmp));
    char args[600];
    snprintf(args, sizeof args,
             "real scenarios/gc-pause-outlives-lease.lsim --scale 0.05 --trace %s/t.jsonl --picture %s/p.svg", tmp,
             tmp);
    char prefix[300];
    snprintf(prefix, sizeof prefix, "LOCKSIM_REAL_TMP=%s", tmp);
    struct result *r = run_in(prefix, args);
    if (r->code != 0) printf("%s%s", r->out, r->err);
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "run 1: simulated UNSAFE, real UNSAFE"));
    assert_non_null(strstr(r->out, "scale 0.05"));
    /* The recorded trace is read and judged by check-trace: UNSAFE. */
    snprintf(args, sizeof args, "check-trace %s/t.jsonl", tmp);
    r = run_in("", args);
    assert_non_null(strstr(r->out, "Verdict: UNSAFE"));
    char path[400];
    snprintf(path, sizeof path, "%s/t.jsonl", tmp);
    unlink(path);
    /* --picture: the real run drawn under the simulated one, its banner
     * saying what it ran against and its verdict, its double entry drawn. */
    snprintf(path, sizeof path, "%s/p.svg", tmp);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char svg[1 << 20];
    size_t n = fread(svg, 1, sizeof svg - 1, f);
    svg[n] = '\0';
    fclose(f);
    unlink(path);
    const char *real = strstr(svg, ">Real run: GC pause outlives the lease<");
    assert_non_null(real);
    assert_non_null(strstr(real, "recorded against redis-server on 127.0.0.1:"));
    assert_non_null(strstr(real, "time scale 0.05; run 1 of 1"));
    assert_non_null(strstr(real, ">UNSAFE<"));
    assert_non_null(strstr(real, ">DOUBLE ENTRY<"));
    /* Nothing is left: no folder of the server's, no process naming it. */
    nothing_left(tmp, tmp);
}

/* A run ends once nothing more can happen: in gc-pause-outlives-lease both
 * clients are done at 36 s of the scenario's 60 s, so at scale 0.1 the run
 * takes about 3.6 s of real time, not the 6 s of its whole duration (which
 * it took before); its recording still runs to 60 s, and still judges UNSAFE. */
static void test_real_run_ends_when_its_clients_have(void **state) {
    (void)state;
    if (!have_redis()) skip();
    char tmp[] = "/tmp/locksim-test-real-XXXXXX";
    assert_non_null(mkdtemp(tmp));
    char args[600];
    snprintf(args, sizeof args, "real scenarios/gc-pause-outlives-lease.lsim --scale 0.1 --trace %s/t.jsonl", tmp);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    struct result *r = run_in("", args);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double took = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    if (r->code != 0) printf("%s%s", r->out, r->err);
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "run 1: simulated UNSAFE, real UNSAFE"));
    printf("test_real: the run took %.2f s of real time (its clients end at 3.6 s, its duration is 6 s)\n", took);
    assert_true(took >= 3.6);
    assert_true(took < 5.5);
    char path[400];
    snprintf(path, sizeof path, "%s/t.jsonl", tmp);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[600], last[600] = "";
    while (fgets(line, sizeof line, f)) snprintf(last, sizeof last, "%s", line);
    fclose(f);
    unlink(path);
    rmdir(tmp);
    assert_non_null(strstr(last, "\"t_ns\":60000000000,\"kind\":\"run-end\""));
}

/* Three runs started at once (make reality runs several side by side) each
 * get a redis-server of their own, on three different ports, and each
 * judges its own run: UNSAFE, as simulated. Before ports were claimed, the
 * three probed the same free port together, two of their servers could not
 * bind it, and their clients met in one Redis: SAFE x2, "1 run differs". */
static void test_real_runs_side_by_side_get_their_own_ports(void **state) {
    (void)state;
    if (!have_redis()) {
        printf("test_real: SKIP: redis-server is not installed (apt-get install redis-server; CI installs it)\n");
        skip();
    }
    char tmp[] = "/tmp/locksim-test-real-XXXXXX";
    assert_non_null(mkdtemp(tmp));
    char cmd[1200];
    snprintf(cmd, sizeof cmd,
             "for i in 1 2 3; do LOCKSIM_REAL_TMP=%s %s real scenarios/gc-pause-outlives-lease.lsim --scale 0.05 "
             "> %s/out$i 2>&1 & done; wait",
             tmp, bin(), tmp);
    assert_int_equal(system(cmd), 0);
    int ports[3];
    for (int i = 0; i < 3; i++) {
        char path[400], out[8192];
        snprintf(path, sizeof path, "%s/out%d", tmp, i + 1);
        slurp(path, out, sizeof out);
        unlink(path);
        if (!strstr(out, "run 1: simulated UNSAFE, real UNSAFE")) printf("%s", out);
        assert_non_null(strstr(out, "run 1: simulated UNSAFE, real UNSAFE"));
        const char *at = strstr(out, "redis-server on 127.0.0.1:");
        assert_non_null(at);
        ports[i] = atoi(at + strlen("redis-server on 127.0.0.1:"));
    }
    assert_true(ports[0] != ports[1] && ports[1] != ports[2] && ports[0] != ports[2]);
    nothing_left(tmp, tmp);
}

/* The scenario file the output refusals below must leave as it was. */
static void assert_scenario_untouched(void) {
    FILE *f = fopen("build/real_pic/scn.svg", "r");
    assert_non_null(f);
    char line[40];
    assert_non_null(fgets(line, sizeof line, f));
    assert_string_equal(line, "clients A\n");
    fclose(f);
}

/* --picture is refused before any server starts: more runs than panels,
 * an output that is the scenario itself, a format that is not a picture.
 * --trace follows the same rules: never over the scenario, and a folder
 * that takes no file is said at once, before anything runs. */
static void test_real_picture_refusals(void **state) {
    (void)state;
    mkdir("build/real_pic", 0777);
    FILE *f = fopen("build/real_pic/scn.svg", "w"); /* a scenario file named like a picture */
    assert_non_null(f);
    fputs("clients A\nduration 10s\nA: acquire, release\n", f);
    fclose(f);
    struct result *r = run("real build/real_pic/scn.svg --picture build/real_pic/scn.svg");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "scn.svg"));
    assert_scenario_untouched();
    r = run("real scenarios/gc-pause-outlives-lease.lsim --repeat 8 --picture build/real_pic/p.png");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "--picture draws at most 7 real runs under the simulated one; --repeat 8"));
    r = run("real scenarios/gc-pause-outlives-lease.lsim --picture build/real_pic/p.gif");
    assert_int_equal(r->code, 64);
    r = run("real build/real_pic/scn.svg --trace build/real_pic/scn.svg");
    assert_int_equal(r->code, 64);
    assert_non_null(strstr(r->err, "refusing to write 'build/real_pic/scn.svg': it is the input file"));
    assert_scenario_untouched();
    r = run("real scenarios/gc-pause-outlives-lease.lsim --repeat 2 --trace build/real_pic/none/t.jsonl");
    assert_int_equal(r->code, 73);
    assert_non_null(strstr(r->err, "cannot write 'build/real_pic/none/t-1.jsonl': No such file or directory"));
    assert_null(strstr(r->out, "run 1"));
}

/* A refused scenario says why and exits 69 (the exit table's row). */
static void test_real_refuses_what_it_cannot_make_real(void **state) {
    (void)state;
    struct result *r = run_in("", "real scenarios/setnx-timestamp-skew-server-expiry.lsim");
    assert_int_equal(r->code, 69);
    assert_non_null(strstr(r->err, "cannot be run for real"));
    /* the clock shim is preloaded into redis-server only, not into the clients */
    assert_non_null(strstr(r->err, "the clock of B, a client"));
    /* Redis's rule at a key's deadline is fixed (now > when, in whole ms) */
    r = run_in("", "real scenarios/shedlock-lock-until-inclusive.lsim");
    assert_int_equal(r->code, 69);
    assert_non_null(strstr(r->err, "lock option deadline=inclusive: Redis 7.0 keeps a key through its PX deadline's "
                                   "millisecond and drops it after"));
    /* the options built in the redis backend only */
    r = run_in("", "real scenarios/get-then-del-race.lsim --store redis-replicated");
    assert_int_equal(r->code, 69);
    assert_non_null(strstr(r->err, "release=get-then-del is built in the redis backend only"));
}

/* The lock's PTTL, or -3 when Redis did not answer. */
static long long pttl(struct resp_conn *c, const char *key) {
    struct resp_reply r;
    const char *a[] = {"PTTL", key};
    if (resp_command(c, &r, 2, a) != 0 || r.type != RESP_INT) return -3;
    return r.integer;
}

static int64_t wall_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A redis-server started as `locksim real` starts one, its files in tmp
 * (a mkdtemp template, filled in); the test is skipped, saying so, when
 * redis-server is not installed. */
static void start_redis(struct redis_srv *srv, char *tmp) {
    if (!have_redis()) {
        printf("test_real: SKIP: redis-server is not installed\n");
        skip();
    }
    assert_non_null(mkdtemp(tmp));
    setenv("LOCKSIM_REAL_TMP", tmp, 1);
    char err[300];
    int rc = redis_srv_start(srv, err, sizeof err);
    unsetenv("LOCKSIM_REAL_TMP");
    if (rc) printf("%s\n", err);
    assert_int_equal(rc, 0);
}

/* The clock shim moves Redis's expiry, and only Redis's: a key set with PX
 * 1000 has its PTTL cut by a +600 ms jump of the server's wall clock, and
 * is gone after a further +2 s; at twice the speed (a rate of +10^9 ppb)
 * 300 ms of real time take 600 ms off a fresh key. The test's own clock
 * (and the machine's) never moves. */
static void test_real_clock_shim_moves_redis_expiry(void **state) {
    (void)state;
    char tmp[] = "/tmp/locksim-test-real-XXXXXX";
    struct redis_srv srv;
    start_redis(&srv, tmp);
    assert_non_null(srv.clock); /* the shim is preloaded, its page mapped */
    int64_t before = wall_now_ns();
    struct resp_conn c;
    struct resp_reply r;
    assert_int_equal(resp_connect(&c, srv.port), 0);
    const char *set[] = {"SET", "k", "v", "PX", "1000"};
    assert_int_equal(resp_command(&c, &r, 5, set), 0);
    long long t0 = pttl(&c, "k");
    assert_in_range(t0, 900, 1000); /* the real clock: nothing moved yet */
    /* +600 ms on the server's wall clock: 600 ms of the lease gone at once */
    clockshim_set(srv.clock, 600 * 1000000LL, wall_now_ns(), 0);
    long long t1 = pttl(&c, "k");
    printf("test_real: PTTL %lld ms, after a +600 ms jump %lld ms\n", t0, t1);
    assert_in_range(t1, 250, 400);
    /* +2 s more: expired early, 1 s before PX's promise */
    clockshim_set(srv.clock, 2600 * 1000000LL, wall_now_ns(), 0);
    assert_int_equal(pttl(&c, "k"), -2);
    /* a rate: the server's clock runs twice as fast from now on */
    const char *set2[] = {"SET", "k2", "v", "PX", "1000"};
    assert_int_equal(resp_command(&c, &r, 5, set2), 0);
    clockshim_set(srv.clock, 2600 * 1000000LL, wall_now_ns(), 1000000000LL);
    ms_sleep(300);
    long long t2 = pttl(&c, "k2");
    printf("test_real: PTTL after 300 ms real at twice the speed: %lld ms\n", t2);
    assert_in_range(t2, 250, 420);
    resp_close(&c);
    /* the machine's clock did not move: 300 ms slept, not 3 s */
    assert_true(wall_now_ns() - before < 2000 * 1000000LL);
    redis_srv_stop(&srv);
    assert_int_equal(entries(tmp), 0); /* the page's file was unlinked at once */
    rmdir(tmp);
}

/* The Redis client over hiredis (real/resp.c), against a real
 * redis-server: every reply type converted as the stores read it (a
 * string cut at RESP_STR_MAX - 1, an array's first RESP_ARR_MAX elements
 * as integers), a second pipelined reply seen as pending (poll on the fd
 * cannot see it), a stopped server timing out with ETIMEDOUT after
 * RESP_TIMEOUT_MS, a dead one refusing the connect. */
static void test_real_resp_over_hiredis(void **state) {
    (void)state;
    char tmp[] = "/tmp/locksim-test-real-XXXXXX";
    struct redis_srv srv;
    start_redis(&srv, tmp);
    struct resp_conn c;
    struct resp_reply r;
    assert_int_equal(resp_connect(&c, srv.port), 0);
    assert_true(c.fd >= 0);
    /* status */
    const char *ping[] = {"PING"};
    assert_int_equal(resp_command(&c, &r, 1, ping), 0);
    assert_int_equal(r.type, RESP_STATUS);
    assert_string_equal(r.str, "PONG");
    /* a bulk string of 300 bytes comes back cut to 255 */
    char big[301];
    for (int i = 0; i < 300; i++) big[i] = (char)('a' + i % 26);
    big[300] = 0;
    const char *set[] = {"SET", "big", big};
    assert_int_equal(resp_command(&c, &r, 3, set), 0);
    assert_int_equal(r.type, RESP_STATUS);
    assert_string_equal(r.str, "OK");
    const char *get[] = {"GET", "big"};
    assert_int_equal(resp_command(&c, &r, 2, get), 0);
    assert_int_equal(r.type, RESP_BULK);
    assert_int_equal(strlen(r.str), RESP_STR_MAX - 1);
    assert_memory_equal(r.str, big, RESP_STR_MAX - 1);
    /* nil, integer, error */
    const char *none[] = {"GET", "none"};
    assert_int_equal(resp_command(&c, &r, 2, none), 0);
    assert_int_equal(r.type, RESP_NIL);
    const char *incr[] = {"INCRBY", "n", "41"};
    assert_int_equal(resp_command(&c, &r, 3, incr), 0);
    assert_int_equal(r.type, RESP_INT);
    assert_int_equal(r.integer, 41);
    const char *bad[] = {"INCR", "big"};
    assert_int_equal(resp_command(&c, &r, 2, bad), 0);
    assert_int_equal(r.type, RESP_ERROR);
    assert_string_equal(r.str, "ERR value is not an integer or out of range");
    /* arrays: TIME's two bulk strings as integers; a list's first four */
    const char *time_[] = {"TIME"};
    assert_int_equal(resp_command(&c, &r, 1, time_), 0);
    assert_int_equal(r.type, RESP_ARRAY);
    assert_int_equal(r.nelem, 2);
    assert_true(r.elem[0] > 1700000000LL); /* seconds since 1970: after 2023 */
    assert_in_range(r.elem[1], 0, 999999);
    const char *push[] = {"RPUSH", "l", "5", "6", "7", "8", "9"};
    assert_int_equal(resp_command(&c, &r, 7, push), 0);
    assert_int_equal(r.integer, 5);
    const char *range[] = {"LRANGE", "l", "0", "-1"};
    assert_int_equal(resp_command(&c, &r, 4, range), 0);
    assert_int_equal(r.type, RESP_ARRAY);
    assert_int_equal(r.nelem, 5);
    for (int i = 0; i < RESP_ARR_MAX; i++) assert_int_equal(r.elem[i], 5 + i);
    /* two requests sent before reading: after the first reply the second
     * is already read from the socket, and resp_pending says so */
    assert_int_equal(resp_pending(&c), 0);
    assert_int_equal(resp_send(&c, 1, ping), 0);
    assert_int_equal(resp_send(&c, 2, get), 0);
    ms_sleep(50); /* both replies are in the socket's buffer */
    assert_int_equal(resp_recv(&c, &r), 0);
    assert_string_equal(r.str, "PONG");
    assert_int_equal(resp_pending(&c), 1);
    assert_int_equal(resp_recv(&c, &r), 0);
    assert_int_equal(r.type, RESP_BULK);
    assert_int_equal(resp_pending(&c), 0);
    /* a stopped server: no reply, ETIMEDOUT after RESP_TIMEOUT_MS */
    kill(srv.pid, SIGSTOP);
    int64_t t0 = wall_now_ns();
    errno = 0;
    assert_int_equal(resp_command(&c, &r, 1, ping), -1);
    int e = errno;
    int64_t waited_ms = (wall_now_ns() - t0) / 1000000;
    kill(srv.pid, SIGCONT);
    printf("test_real: a stopped redis-server: %s after %lld ms\n", strerror(e), (long long)waited_ms);
    assert_int_equal(e, ETIMEDOUT);
    assert_in_range(waited_ms, RESP_TIMEOUT_MS - 10, RESP_TIMEOUT_MS + 1000);
    /* the connection is dead after that, until closed and opened again */
    assert_int_equal(resp_command(&c, &r, 1, ping), -1);
    resp_close(&c);
    assert_int_equal(c.fd, -1);
    resp_close(&c); /* closing twice is harmless */
    assert_int_equal(resp_connect(&c, srv.port), 0);
    assert_int_equal(resp_command(&c, &r, 1, ping), 0);
    assert_string_equal(r.str, "PONG");
    resp_close(&c);
    /* a server gone: its port refuses the connect at once */
    int port = srv.port;
    redis_srv_stop(&srv);
    errno = 0;
    assert_int_equal(resp_connect(&c, port), -1);
    assert_int_equal(errno, ECONNREFUSED);
    assert_int_equal(c.fd, -1);
    assert_int_equal(entries(tmp), 0);
    rmdir(tmp);
}

/* A clock jump made real: S1's wall clock jumps +25 s (1.04 s real at the
 * default scale) while A holds a 30 s lease; Redis expires it at once, B
 * takes the lock at 6 s while A works: UNSAFE, as simulated, in both runs.
 * The recording has the step and the expiry Redis reported right after it
 * (PTTL -2). Nothing is left behind. */
static void test_real_server_clock_jump_unsafe(void **state) {
    (void)state;
    if (!have_redis()) {
        printf("test_real: SKIP: redis-server is not installed\n");
        skip();
    }
    char tmp[] = "/tmp/locksim-test-real-XXXXXX";
    assert_non_null(mkdtemp(tmp));
    char args[600], prefix[300];
    snprintf(args, sizeof args, "real scenarios/server-clock-jump-expires-early.lsim --repeat 2 --trace %s/t.jsonl",
             tmp);
    snprintf(prefix, sizeof prefix, "LOCKSIM_REAL_TMP=%s", tmp);
    struct result *r = run_in(prefix, args);
    if (r->code != 0) printf("%s%s", r->out, r->err);
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "run 1: simulated UNSAFE, real UNSAFE"));
    assert_non_null(strstr(r->out, "real verdicts over 2 runs: UNSAFE x2 (simulated UNSAFE)"));
    char path[400], text[1 << 16];
    snprintf(path, sizeof path, "%s/t-1.jsonl", tmp);
    slurp(path, text, sizeof text);
    /* the step at 5 s of scenario time, then A's lease expired at that instant */
    char *step = strstr(text, "\"clock-step\"");
    assert_non_null(step);
    assert_non_null(strstr(step, "\"srv-expire\""));
    snprintf(args, sizeof args, "check-trace %s", path);
    r = run_in("", args);
    assert_non_null(strstr(r->out, "Verdict: UNSAFE"));
    unlink(path);
    snprintf(path, sizeof path, "%s/t-2.jsonl", tmp);
    unlink(path);
    nothing_left(tmp, tmp);
}

/* A pause exactly as long as the TTL: the simulated SAFE rests on A's
 * resume and its lease's deadline at one instant, a tie a real run cannot
 * make; refused, saying so and where. A resume 1 ms past the deadline is
 * 0.083 ms of real time at the default scale, under Redis's millisecond
 * expiry clock (make reality once had it SAFE in 1 of 5 where UNSAFE is
 * simulated): refused at that scale, saying which scale can tell them
 * apart; at 2, a resume 2 ms real past the deadline, it is not refused. */
static void test_real_refuses_a_tie_on_the_deadline(void **state) {
    (void)state;
    struct result *r = run_in("", "real scenarios/redis-expiry-kept-at-deadline.lsim");
    assert_int_equal(r->code, 69);
    assert_non_null(strstr(r->err, "two events at one instant: at 10s a paused client resumes"));
    r = run_in("", "real scenarios/redis-expiry-ms-after-deadline.lsim");
    assert_int_equal(r->code, 69);
    assert_non_null(strstr(r->err, "a paused client resuming 1 ms from the lease's deadline (10s), which at scale "
                                   "0.0833333 is 0.0833 ms of real time"));
    assert_non_null(strstr(r->err, "--scale 2 or more puts them 2 ms of real time apart"));
    r = run_in("", "real scenarios/redis-expiry-ms-after-deadline.lsim --scale 1");
    assert_int_equal(r->code, 69);
    assert_non_null(strstr(r->err, "which at scale 1 is 1 ms of real time"));
}

/* Retry jitter replays the simulated run's seeded draws: B retries into
 * the window as simulated (its waits are read from the simulated trace),
 * so every real run is UNSAFE like the simulated one. The window is 0.5s of
 * scenario time and B lands 0.107s into it: at the default scale (60s in
 * 2.5s) that is 4 ms of real slack, less than a loaded 2-core machine's
 * scheduling delay (a retry 90 ms late was seen while a build ran beside
 * it). At --scale 0.4 the slack is 157 ms (one run, 24 s): the test is of
 * the replay, not of the machine's load. */
static void test_real_replays_the_simulated_jitter(void **state) {
    (void)state;
    if (!have_redis()) {
        printf("test_real: SKIP: redis-server is not installed\n");
        skip();
    }
    struct result *r = run_in("", "real scenarios/gc-pause-near-ttl-retry-jitter.lsim --scale 0.4");
    if (r->code != 0) printf("%s%s", r->out, r->err);
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "run 1: simulated UNSAFE, real UNSAFE"));
    assert_non_null(strstr(r->out, "real verdicts over 1 run: UNSAFE x1 (simulated UNSAFE)"));
}

/* Timed faults are applied when they are due, and a driver with nothing
 * due sleeps. Three pauses of A (at 2, 7 and 11 s, for 3, 2 and 1.5 s)
 * at S = 0.05: each pause and each resume is recorded within 0.5 ms of
 * real time (10 ms of scenario time) of its scaled instant. The driver
 * used to look every 1 ms (up to 1 ms late, more with the stop counted
 * from its confirmation) and, two busy loops beside it at the normal
 * priority, came up to 12 ms late; it now sleeps until the next due
 * instant at a real-time priority (docs/reality.md, finding 24). After
 * A's program is done (12.6 s) the run waits for the last fault's end (a
 * pause of the finished A at 30 s, which does nothing, for 1 s: 31 s,
 * 1.55 s real) with no client left: the run's processes together use
 * under 0.1 s of CPU (the test allows 0.4 s, for a sanitizer build's
 * start-up). The driver once spun there (its records' pipe at
 * end of file woke every wait): 1.4 s of CPU, a whole core. */
static void test_real_timed_faults_applied_when_due(void **state) {
    (void)state;
    if (!have_redis()) {
        printf("test_real: SKIP: redis-server is not installed\n");
        skip();
    }
    const char *scn = fmt("%s/ontime.lsim", scratch());
    FILE *f = fopen(scn, "w");
    assert_non_null(f);
    fputs("title \"Timed pauses, applied when due\"\n"
          "lock lease ttl=30s release=compare-and-delete\n"
          "resource stock=5\n"
          "network latency=0ms\n"
          "duration 40s\n"
          "client A: acquire; read; work 12s; write; release\n"
          "@2s pause A 3s\n"
          "@7s pause A 2s\n"
          "@11s pause A 1500ms\n"
          "@30s pause A 1s\n",
          f);
    fclose(f);
    const char *out = fmt("%s/ontime.jsonl", scratch());
    struct rusage before, after;
    getrusage(RUSAGE_CHILDREN, &before);
    struct result *r = run_in("", fmt("real %s --scale 0.05 --trace %s", scn, out));
    getrusage(RUSAGE_CHILDREN, &after);
    if (r->code != 0) printf("%s%s", r->out, r->err);
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "run 1: simulated SAFE, real SAFE"));
    /* the pauses and resumes, in scenario ns, against their scaled instants */
    const long long due[] = {2000000000LL, 5000000000LL, 7000000000LL, 9000000000LL, 11000000000LL, 12500000000LL};
    const char *kind[] = {"pause", "resume"};
    int n = 0;
    char line[1024];
    f = fopen(out, "r");
    assert_non_null(f);
    while (fgets(line, sizeof line, f)) {
        long long t;
        char k[32];
        if (sscanf(line, "{\"seq\":%*d,\"t_ns\":%lld,\"kind\":\"%31[a-z-]\"", &t, k) != 2) continue;
        if (strcmp(k, "pause") != 0 && strcmp(k, "resume") != 0) continue;
        assert_true(n < 6);
        printf("test_real: %s at %lld ns, due %lld: %.3f ms real late\n", k, t, due[n],
               (double)(t - due[n]) * 0.05 / 1e6);
        assert_string_equal(k, kind[n % 2]);
        assert_true(t >= due[n]);
        assert_true(t - due[n] <= 10000000LL); /* 0.5 ms real at S = 0.05 */
        n++;
    }
    fclose(f);
    assert_int_equal(n, 6);
    double cpu = (double)(after.ru_utime.tv_sec - before.ru_utime.tv_sec + after.ru_stime.tv_sec -
                          before.ru_stime.tv_sec) +
                 (double)(after.ru_utime.tv_usec - before.ru_utime.tv_usec + after.ru_stime.tv_usec -
                          before.ru_stime.tv_usec) /
                         1e6;
    printf("test_real: the run's processes used %.3f s of CPU in 2 s\n", cpu);
    assert_true(cpu < 0.4); /* a spinning driver: 0.9 s and more; the sanitize build's start-up counts too */
}

/* The real verdict is not the simulated one: exit 1. B's critical section
 * takes no time in the simulation (latency 0), so it does not overlap the
 * paused A's and the run is SAFE; a real one always lasts, so B enters
 * while A is still inside: UNSAFE, in every run. */
static void test_real_exits_1_when_verdicts_differ(void **state) {
    (void)state;
    if (!have_redis()) {
        printf("test_real: SKIP: redis-server is not installed\n");
        skip();
    }
    char path[] = "/tmp/locksim-test-real-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *text = "title \"B's critical section takes no time\"\npurpose correctness\n"
                       "lock lease ttl=10s release=compare-and-delete\nresource stock=5\nnetwork latency=0ms\n"
                       "duration 30s\nclient A: acquire; work 20s; release\n"
                       "client B @1s: acquire retry=1s; read; write; release\n@2s pause A 15s\n";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    char args[300];
    snprintf(args, sizeof args, "real %s --scale 0.01", path);
    struct result *r = run_in("", args);
    unlink(path);
    if (r->code != 1) printf("%s%s", r->out, r->err);
    assert_int_equal(r->code, 1);
    assert_non_null(strstr(r->out, "run 1: simulated SAFE, real UNSAFE"));
    assert_non_null(strstr(r->out, "differs: double entries: simulated 0, real 1"));
}

/* A server that stops answering (SIGSTOP: it still completes TCP
 * handshakes, research pitfall 13) does not make the driver wait forever:
 * every connect and reply is bounded (RESP_TIMEOUT_MS, 2 s), and locksim
 * exits 69 (a service that will not answer) saying so, leaving nothing. */
static void test_real_server_that_does_not_answer(void **state) {
    (void)state;
    if (!have_redis()) {
        printf("test_real: SKIP: redis-server is not installed\n");
        skip();
    }
    char tmp[] = "/tmp/locksim-test-real-XXXXXX";
    assert_non_null(mkdtemp(tmp));
    char abs[4096], errf[300];
    if (!realpath(bin(), abs)) snprintf(abs, sizeof abs, "%s", bin());
    snprintf(errf, sizeof errf, "%s.err", tmp);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("LOCKSIM_REAL_TMP", tmp, 1);
        freopen("/dev/null", "w", stdout);
        freopen(errf, "w", stderr);
        execl(abs, abs, "real", "scenarios/gc-pause-outlives-lease.lsim", "--scale", "0.01", "--repeat", "20",
              (char *)NULL);
        _exit(127);
    }
    pid_t srv = 0;
    for (int k = 0; k < 500 && !srv; k++) {
        ms_sleep(10);
        srv = child_named(pid, "redis-server");
    }
    assert_true(srv > 0);
    ms_sleep(50);
    kill(srv, SIGSTOP);
    int st = 0;
    pid_t w = 0;
    for (int k = 0; k < 300 && w == 0; k++) { /* at most 30 s */
        ms_sleep(100);
        w = waitpid(pid, &st, WNOHANG);
    }
    if (w == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        fail_msg("locksim real still waits 30 s after its redis-server stopped answering");
    }
    char err[2000];
    slurp(errf, err, sizeof err);
    unlink(errf);
    assert_true(WIFEXITED(st));
    if (WEXITSTATUS(st) != 69) printf("%s", err);
    assert_int_equal(WEXITSTATUS(st), 69);
    assert_true(strstr(err, "did not take the set-up commands") || strstr(err, "did not answer"));
    ms_sleep(20);
    nothing_left(tmp, tmp);
}

/* Runs `locksim real ARGS...` (args NULL-ended) with $LOCKSIM_REAL_TMP
 * set to tmp, sends sig after at_ms and checks exit 130 after the cleanup
 * (or death by sig when it came before anything was started). With child
 * ("redis-server"), the process of that name that was locksim's child just
 * before the signal is gone too; with child_runs, there must have been one.
 * What is left in tmp is the caller's to check. */
static void interrupt_in(const char *tmp, const char *const *args, long at_ms, int sig, const char *child,
                         int child_runs) {
    char abs[4096];
    if (!realpath(bin(), abs)) snprintf(abs, sizeof abs, "%s", bin());
    const char *argv[16] = {abs, "real"};
    for (int i = 0; args[i] && i < 13; i++) argv[i + 2] = args[i];
    fflush(stdout); /* the child's freopen would print what is buffered again */
    pid_t pid = fork();
    if (pid == 0) {
        setenv("LOCKSIM_REAL_TMP", tmp, 1);
        freopen("/dev/null", "w", stdout);
        execv(abs, (char *const *)argv);
        _exit(127);
    }
    ms_sleep(at_ms);
    pid_t srv = child ? child_named(pid, child) : 0;
    if (child_runs) assert_true(srv > 0); /* by then the servers run */
    kill(pid, sig);
    int st;
    waitpid(pid, &st, 0);
    if (WIFSIGNALED(st)) assert_int_equal(WTERMSIG(st), sig);
    else assert_int_equal(WEXITSTATUS(st), 130);
    ms_sleep(20);
    if (srv > 0) assert_true(kill(srv, 0) != 0);
}

/* interrupt_in with a fresh folder, which must be left empty, and no
 * process of the run left (process_of_run). */
static void interrupt_run(const char *const *args, long at_ms, int sig, const char *child, int child_runs) {
    char tmp[] = "/tmp/locksim-test-real-XXXXXX";
    assert_non_null(mkdtemp(tmp));
    interrupt_in(tmp, args, at_ms, sig, child, child_runs);
    assert_int_equal(entries(tmp), 0);
    assert_false(process_of_run(tmp));
    rmdir(tmp);
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
    const char *args[] = {
            "scenarios/gc-pause-outlives-lease.lsim", "--scale", "0.01", "--repeat", "3", "--store", "redis", NULL};
    for (int k = 0; k < 4; k++) interrupt_run(args, at_ms[k], sigs[k], NULL, 0);
}

/* A delayed write made real by the loopback proxy: A's write to the
 * resource spends 20 s on the link A -> R (the scenario's `on A.before-write
 * link A R latency=20s`), lands after B acquired but before B's first
 * write, and is accepted; B's write then sells the same unit again:
 * UNSAFE, as simulated. The proxy gives each message the simulated run's
 * delay for its link. (At scale 0.1: 6 s a run, 1 s of request timeout is
 * 100 ms real.) */
static void test_real_delayed_write_through_the_proxy(void **state) {
    (void)state;
    if (!have_redis()) {
        printf("test_real: SKIP: redis-server is not installed\n");
        skip();
    }
    struct result *r = run_in("", "real scenarios/delayed-write-before-new-holder.lsim --repeat 2 --scale 0.1");
    if (r->code != 0) printf("%s%s", r->out, r->err);
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "real verdicts over 2 runs: UNSAFE x2 (simulated UNSAFE)"));
    /* the other order (the write lands after B's): fenced out, SAFE */
    r = run_in("", "real scenarios/delayed-write-after-new-holder.lsim --scale 0.1");
    if (r->code != 0) printf("%s%s", r->out, r->err);
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "run 1: simulated SAFE, real SAFE"));
}

/* Skips the test, saying so, when redis-server is not installed. */
static void need_redis(void) {
    if (have_redis()) return;
    printf("test_real: SKIP: redis-server is not installed\n");
    skip();
}

/* One run of scenario X for real, its recording judged by check-trace:
 * the real run gives want (the simulated verdict), and the recording's
 * check-trace output contains each of the NULL-ended lines in its. */
static void real_run_judged(const char *scenario, const char *want, ...) {
    char tmp[] = "/tmp/locksim-test-real-XXXXXX";
    assert_non_null(mkdtemp(tmp));
    char args[700], line[200];
    snprintf(args, sizeof args, "real scenarios/%s.lsim --trace %s/t.jsonl", scenario, tmp);
    struct result *r = run_in("", args);
    if (r->code != 0) printf("%s%s", r->out, r->err);
    assert_int_equal(r->code, 0);
    snprintf(line, sizeof line, "run 1: simulated %s, real %s", want, want);
    assert_non_null(strstr(r->out, line));
    static char trace[1 << 20];
    snprintf(args, sizeof args, "%s/t.jsonl", tmp);
    slurp(args, trace, sizeof trace);
    snprintf(args, sizeof args, "check-trace %s/t.jsonl", tmp);
    r = run_in("", args);
    va_list ap;
    va_start(ap, want);
    for (const char *s; (s = va_arg(ap, const char *)) != NULL;) {
        /* "trace:TEXT": TEXT in the recorded trace itself */
        const char *in = strncmp(s, "trace:", 6) == 0 ? trace : r->out;
        const char *what = in == trace ? s + 6 : s;
        if (!strstr(in, what)) printf("%s: not in the recording (or its check-trace): %s\n%s", scenario, what, in);
        assert_non_null(strstr(in, what));
    }
    va_end(ap);
    snprintf(args, sizeof args, "%s/t.jsonl", tmp);
    unlink(args);
    rmdir(tmp);
}

/* The redis backend's release and client-side options played for real:
 * get-then-del's two round trips (A's GET comes back "mine" 2 s late,
 * after its key expired and B took it, and its DEL removes B's lock: a
 * wrong release, C enters beside B), a token checked by the client
 * (its check on old news passes: UNSAFE) against the same token checked by
 * the resource (SAFE, the stale write rejected), and an absolute write
 * (write set=V) done twice: repeated, harmless, SAFE. */
static void test_real_redis_release_and_write_options(void **state) {
    (void)state;
    need_redis();
    real_run_judged("get-then-del-race", "UNSAFE", "wrong releases   1", NULL);
    real_run_judged("fencing-trusted-from-client", "UNSAFE", "stale writes     1 accepted", NULL);
    real_run_judged("fencing-validated-by-resource", "SAFE", "stale writes     0 accepted, 1 rejected", NULL);
    real_run_judged("efficiency-lock-idempotent-write", "SAFE", "trace:\"text\":\"set\"", NULL);
}

/* The resource's token rules played for real in Lua: compare=!= lets the
 * older token in after the newer one (UNSAFE); compare=first fences out
 * every later holder (STUCK, C fenced out); check=reads+writes refuses A's
 * stale read, so its write is never sent (SAFE, the recording carries the
 * simulator's note); takeover=on hands the key to B at once and A's late
 * write lands (UNSAFE) unless the resource is guarded by ownership
 * (guard=owner: refused, SAFE). */
static void test_real_redis_token_rules(void **state) {
    (void)state;
    need_redis();
    real_run_judged("fencing-equality-check", "UNSAFE", "stale writes     1 accepted", NULL);
    real_run_judged("etcd-contrib-lock-fenced-out", "STUCK", "fenced out       1", NULL);
    real_run_judged("chubby-sequencer-checked-on-reads", "SAFE", "lost updates     0",
                    "trace:read refused by the resource: its token is lower than one already seen", NULL);
    real_run_judged("takeover-zombie-write-lands", "UNSAFE", "double entry     1 interval",
                    "trace:takes the lock over from its holder at once", NULL);
    real_run_judged("kafka-producer-epoch-fences-zombie", "SAFE", "lost updates     0", NULL);
}

/* The lease's own rules played for real: renew-expired=on renews A's
 * lapsed lease at its resume (a Lua renewal that finds the key gone and
 * lock:last still A's), A finishes before B comes: SAFE, with the
 * simulator's note; uncertainty=500ms makes A leave its critical section
 * 500 ms before its lease's end by its own clock, so the server's clock
 * 400 ms ahead cannot put B beside it: SAFE. */
static void test_real_redis_lease_options(void **state) {
    (void)state;
    need_redis();
    real_run_judged("azure-lease-renew-after-expiry", "SAFE",
                    "trace:renews a lapsed lease: nobody leased it since it expired", NULL);
    real_run_judged("cockroach-lease-stasis-period", "SAFE", "double entry     0 intervals", NULL);
}

/* A partition made real: from 1.5 s to 5.5 s B and S1 are cut apart, and
 * A (in the implicit third group, with R) from S1 too. B's attempts in the
 * partition are dropped and time out (the simulator's 1 s request
 * timeout); A's release is dropped, so its 9.5 s lease stays until it runs
 * out, and B takes the lock at its first attempt after that (10.01 s
 * simulated), not after A's release at 2 s nor at the heal. SAFE in both.
 * Then the same run interrupted mid-way: no proxy, server or client left,
 * no file. */
static void test_real_partition_through_the_proxy(void **state) {
    (void)state;
    if (!have_redis()) {
        printf("test_real: SKIP: redis-server is not installed\n");
        skip();
    }
    char tmp[] = "/tmp/locksim-test-real-XXXXXX";
    assert_non_null(mkdtemp(tmp));
    char file[300];
    snprintf(file, sizeof file, "%s/partition.lsim", tmp);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fputs("title \"B is cut off from the lock server until the heal\"\npurpose correctness\n"
          "lock lease ttl=9500ms release=compare-and-delete\nresource stock=5\nnetwork latency=1ms\n"
          "duration 20s\nclient A: acquire; read; work 2s; write; release\n"
          "client B @1s: acquire retry=1s; read; write; release\n@1500ms partition B | S1\n@5500ms heal\n",
          f);
    fclose(f);
    char args[600], prefix[300];
    snprintf(args, sizeof args, "real %s --scale 0.25", file);
    snprintf(prefix, sizeof prefix, "LOCKSIM_REAL_TMP=%s", tmp);
    struct result *r = run_in(prefix, args);
    if (r->code != 0) printf("%s%s", r->out, r->err);
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "run 1: simulated SAFE, real SAFE"));
    const char *b = strstr(r->out, "real B   at ");
    assert_non_null(b);
    double at = 0;
    assert_int_equal(sscanf(b + strlen("real B   at "), "%lf", &at), 1);
    printf("test_real: B took the lock at %.2fs of scenario time (simulated 10.01s)\n", at);
    assert_true(at > 9.4 && at < 11.5); /* after A's lease ran out, not at A's (dropped) release */
    /* interrupted while the proxy holds messages: nothing is left */
    const char *again[] = {file, "--repeat", "3", NULL};
    interrupt_in(tmp, again, 700, SIGINT, NULL, 0);
    assert_false(process_mentions(tmp)); /* the proxy and the clients are forks: their command line names file */
    unlink(file);
    assert_int_equal(entries(tmp), 0);
    rmdir(tmp);
}

/* The seed's pause against a real etcd (issue 23): A holds the consensus
 * lock (TTL 10 s: 1 s of real time at scale 0.1) and is stopped for 20 s;
 * etcd revokes its lease, B takes the lock; A's late write lands on a
 * resource that does not check the revision: UNSAFE, as simulated. With
 * the lock key's create_revision fencing the write (a txn comparing the
 * fence key), the late write is rejected: SAFE, as simulated. */
static void test_real_etcd_pause_unsafe_then_fenced_safe(void **state) {
    (void)state;
    if (!have_etcd()) skip();
    char tmp[] = "/tmp/locksim-test-real-XXXXXX";
    assert_non_null(mkdtemp(tmp));
    char args[600], prefix[300], path[400];
    snprintf(prefix, sizeof prefix, "LOCKSIM_REAL_TMP=%s", tmp);
    snprintf(path, sizeof path, "%s/t.jsonl", tmp);
    /* chosen for consensus without --store: etcd */
    snprintf(args, sizeof args, "real scenarios/consensus-revision-as-fencing-token.lsim --trace %s", path);
    struct result *r = run_in(prefix, args);
    if (r->code != 0) printf("%s%s", r->out, r->err);
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "backend etcd"));
    assert_non_null(strstr(r->out, "scale 0.1:"));
    assert_non_null(strstr(r->out, "run 1: simulated UNSAFE, real UNSAFE"));
    snprintf(args, sizeof args, "check-trace %s", path);
    r = run_in("", args);
    assert_non_null(strstr(r->out, "Verdict: UNSAFE"));
    static char text[1 << 16];
    slurp(path, text, sizeof text);
    assert_non_null(strstr(text, "recorded against etcd on 127.0.0.1:"));
    snprintf(args, sizeof args, "real scenarios/consensus-revision-fenced.lsim --store etcd --trace %s", path);
    r = run_in(prefix, args);
    if (r->code != 0) printf("%s%s", r->out, r->err);
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "run 1: simulated SAFE, real SAFE"));
    snprintf(args, sizeof args, "check-trace %s", path);
    r = run_in("", args);
    assert_non_null(strstr(r->out, "Verdict: SAFE"));
    assert_non_null(strstr(r->out, "rejected"));
    unlink(path);
    nothing_left(tmp, tmp);
}

/* etcd's queued lock (v3lock Lock, queue=on) for real: B waits in line
 * behind A and is paused; its lease is revoked while it waits, so when A
 * releases, etcd 3.4.23 (with the #11456 fix) fails B's Lock call ("session
 * expired") and C, next in line, takes the lock; B opens a new session and
 * takes it after C: SAFE, in that order, as simulated. */
static void test_real_etcd_queued_waiter_session_expired(void **state) {
    (void)state;
    if (!have_etcd()) skip();
    struct result *r = run_in("", "real scenarios/etcd-11456-fixed-session-expired.lsim");
    if (r->code != 0) printf("%s%s", r->out, r->err);
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "scale 0.2:"));
    assert_non_null(strstr(r->out, "run 1: simulated SAFE, real SAFE"));
    assert_non_null(strstr(r->out, "acquisition 2: simulated C   at 14.01s    real C"));
    assert_non_null(strstr(r->out, "acquisition 3: simulated B   at 16.02s    real B"));
}

/* A client cut off from every etcd member through the loopback proxy (brief
 * h6-etcdnet): A holds the lock (TTL 2 s: 1 s of real time at scale 0.5)
 * when the partition A | S1 S2 S3 B R cuts its links at 2 s; its
 * keep-alives go unanswered, the leader lets its lease run out (3.7 s:
 * its last renewal at 1.7 s), B, on the members' side, takes the lock
 * (simulated 4.02 s) while A, told nothing, is still in its critical
 * section: UNSAFE, as simulated. After the heal at 6 s A's next keep-alive
 * is answered "lease gone", and A skips its write at 8 s (simulated: it
 * learns at 6.68 s). */
static void test_real_etcd_client_partitioned_loses_lease(void **state) {
    (void)state;
    if (!have_etcd()) skip();
    write_file(sp("cut-off.lsim"), "title \"etcd: a client cut off from the members loses its lease\"\n"
                                   "purpose correctness\n"
                                   "lock consensus servers=3 ttl=2s first-candidate=S1\n"
                                   "resource stock=2\n"
                                   "network latency=1ms\n"
                                   "duration 12s\n"
                                   "client A @1s: acquire; read; work 7s; write; release\n"
                                   "client B @2s: acquire retry=500ms timeout=8s; read; write; release\n"
                                   "@2s partition A | S1 S2 S3 B R\n"
                                   "@6s heal\n");
    const char *trace = sp("cut-off.jsonl");
    struct result *r = run_in("", fmt("real %s --trace %s", sp("cut-off.lsim"), trace));
    if (r->code != 0) printf("%s%s", r->out, r->err);
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "scale 0.5:"));
    assert_non_null(strstr(r->out, "run 1: simulated UNSAFE, real UNSAFE"));
    assert_non_null(strstr(r->out, "two clients were in the critical section at once"));
    /* B takes over after A's lease ran out on the members' side, before the heal */
    const char *b = strstr(r->out, "acquisition 2: simulated B   at 4.02s     real B   at ");
    assert_non_null(b);
    double at = 0;
    assert_int_equal(sscanf(b + strlen("acquisition 2: simulated B   at 4.02s     real B   at "), "%lf", &at), 1);
    printf("test_real: B took the lock at %.2fs of scenario time (simulated 4.02s)\n", at);
    assert_true(at > 3.6 && at < 6.0);
    /* A learns of its loss only after the heal, and does not write */
    static char text[1 << 17];
    slurp(trace, text, sizeof text);
    const char *lost = strstr(text, "\"kind\":\"cs-exit\",\"node\":\"A\"");
    assert_non_null(lost);
    const char *t = lost;
    while (t > text && strncmp(t, "\"t_ns\":", 7) != 0) t--;
    long long lost_ns = atoll(t + 7);
    printf("test_real: A learnt of its loss at %.2fs (simulated 6.68s)\n", (double)lost_ns / 1e9);
    assert_true(lost_ns > 6000000000LL && lost_ns < 8000000000LL);
    assert_non_null(strstr(lost, "\"a\":3")); /* TRACE_EXIT_LOST */
    assert_non_null(strstr(text, "\"kind\":\"write-skipped\",\"node\":\"A\""));
    r = run_in("", fmt("check-trace %s", trace));
    assert_non_null(strstr(r->out, "Verdict: UNSAFE"));
}

/* What the etcd cluster cannot play is refused, saying why, exit 69: a
 * partition at a client's point, one between the members and the resource, latency
 * that varies, a TTL that is not whole seconds of real time, a Redis lock,
 * more than 5 servers. */
static void test_real_etcd_refusals(void **state) {
    (void)state;
    write_file(sp("at-point.lsim"),
               "lock consensus ttl=2s\nduration 10s\n"
               "client A @1s: acquire; read; write; release\non A.after-acquire partition A | S1\n");
    struct result *r = run_in("", fmt("real %s", sp("at-point.lsim")));
    assert_int_equal(r->code, 69);
    assert_non_null(strstr(r->err, "line 4: a partition or heal at a client's point: the driver, which cuts the "
                                   "proxy's links, cannot see a point of another process in time; not built"));
    write_file(sp("res-cut.lsim"), "lock consensus ttl=2s\nduration 10s\n"
                                   "client A @1s: acquire; read; write; release\n@2s partition R | S1 S2 S3 A\n");
    r = run_in("", fmt("real %s", sp("res-cut.lsim")));
    assert_int_equal(r->code, 69);
    assert_non_null(strstr(r->err, "line 4: a partition that cuts the resource R off from every lock server: the "
                                   "etcd backend's resource is a key in the same etcd members; not built"));
    write_file(sp("jitter.lsim"), "lock consensus ttl=2s\nnetwork latency=1ms..5ms\nduration 10s\n"
                                  "client A @1s: acquire; read; write; release\n");
    r = run_in("", fmt("real %s", sp("jitter.lsim")));
    assert_int_equal(r->code, 69);
    assert_non_null(strstr(r->err, "the etcd client's HTTP requests are not the model's messages one for one"));
    r = run_in("", "real scenarios/consensus-revision-fenced.lsim --scale 0.15");
    assert_int_equal(r->code, 69);
    assert_non_null(strstr(r->err, "etcd grants leases in whole seconds"));
    r = run_in("", "real scenarios/gc-pause-outlives-lease.lsim --store etcd");
    assert_int_equal(r->code, 69);
    assert_non_null(strstr(r->err, "does not run on the etcd backend"));
    r = run_in("", "real scenarios/consensus-revision-fenced.lsim --store zookeeper");
    assert_int_equal(r->code, 69);
    assert_non_null(strstr(r->err, "does not run on the zookeeper backend"));
    r = run_in("", "real scenarios/consensus-revision-fenced.lsim --store redlock");
    assert_int_equal(r->code, 69);
    assert_non_null(strstr(r->err, "does not run on the redlock backend"));
    r = run_in("", "real scenarios/consensus-revision-fenced.lsim --store memcached");
    assert_int_equal(r->code, 64);
    assert_non_null(
            strstr(r->err, "--store memcached: redis, etcd, redis-replicated, redlock and zookeeper are built"));
    /* a cluster of 5 members at most */
    write_file(sp("seven.lsim"), "lock consensus servers=7\n"
                                 "duration 20s\n"
                                 "client A @1s: acquire; read; write; release\n");
    r = run_in("", fmt("real %s", sp("seven.lsim")));
    assert_int_equal(r->code, 69);
    assert_non_null(strstr(r->err, "7 lock servers: the etcd backend runs a cluster of 5 members at most"));
}

/* `real FILE --repeat N` interrupted: as interrupt_run (etcd's data dir is
 * in the folder, which every member's command line names). */
static void interrupt_etcd_run(const char *file, const char *repeat, long at_ms, int sig) {
    const char *args[] = {file, "--repeat", repeat, NULL};
    interrupt_run(args, at_ms, sig, NULL, 0);
}

/* Interrupted while etcd starts, mid-run and late, by SIGINT and SIGTERM:
 * exit 130, no etcd, no client, no data dir. */
static void test_real_etcd_interrupted_leaves_nothing(void **state) {
    (void)state;
    if (!have_etcd()) skip();
    const long at_ms[] = {30, 700, 2500};
    const int sigs[] = {SIGINT, SIGTERM, SIGINT};
    for (int k = 0; k < 3; k++) interrupt_etcd_run("scenarios/consensus-revision-fenced.lsim", "3", at_ms[k], sigs[k]);
}

/* A three-member etcd whose leader is paused (SIGSTOP) while A, bound to
 * the follower S2, holds the lock: S2 and S3 elect a new leader, which takes
 * over A's lease (etcd's Promote) and renews it on A's keep-alives, so B,
 * bound to S3, is denied until A releases: SAFE, B at 16 s, as simulated.
 * The pause goes to the member that leads for real (asked with
 * /v3/maintenance/status), as the simulated S1 leads. It lasts 8 s (1.6 s
 * real), so that S2 and S3 surely elect (etcd draws its election timeout in
 * [500, 1000) ms real); B asks only after the election: a request a
 * follower forwarded to the paused leader is answered only at etcd's
 * request timeout (docs/reality.md). */
static void test_real_etcd_three_members_leader_paused(void **state) {
    (void)state;
    if (!have_etcd()) skip();
    write_file(sp("leader-paused.lsim"), "title \"Consensus: the leader paused while A holds the lock\"\n"
                                         "purpose correctness\n"
                                         "lock consensus ttl=5s first-candidate=S1 bind=S2,S3\n"
                                         "resource stock=5\n"
                                         "network latency=1ms\n"
                                         "duration 30s\n"
                                         "client A @1s: acquire; read; work 14s; write; release\n"
                                         "client B @12s: acquire retry=1s; read; write; release\n"
                                         "@4s pause S1 8s\n");
    const char *trace = sp("leader-paused.jsonl");
    struct result *r = run_in("", fmt("real %s --trace %s", sp("leader-paused.lsim"), trace));
    if (r->code != 0) printf("%s%s", r->out, r->err);
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "backend etcd: 3 etcd members on 127.0.0.1:"));
    assert_non_null(strstr(r->out, "run 1: simulated SAFE, real SAFE"));
    /* B takes over for real too; when is a finding, not a failure (a fresh
     * clone's CI once saw B a retry later than 16 s: the verdict agreed). */
    assert_non_null(strstr(r->out, "acquisition 2: simulated B   at 16.02s    real B   at "));
    /* the recording has the pause and the resume, on the leader's lane */
    static char text[1 << 16];
    slurp(trace, text, sizeof text);
    assert_non_null(strstr(text, "\"kind\":\"pause\",\"node\":\"S"));
    assert_non_null(strstr(text, "\"kind\":\"resume\",\"node\":\"S"));
    r = run_in("", fmt("check-trace %s", trace));
    assert_non_null(strstr(r->out, "Verdict: SAFE"));
}

/* A three-member run interrupted while its members start, while one of
 * them is paused (SIGSTOPped: S2 from 0.8 s of real time into the run) and
 * later: exit 130, no etcd member, no client, no data dir. */
static void test_real_etcd_cluster_interrupted_leaves_nothing(void **state) {
    (void)state;
    if (!have_etcd()) skip();
    const long at_ms[] = {300, 2600, 4000};
    const int sigs[] = {SIGTERM, SIGINT, SIGINT};
    for (int k = 0; k < 3; k++)
        interrupt_etcd_run("scenarios/etcd-client-bound-to-paused-server.lsim", "2", at_ms[k], sigs[k]);
}

/* The seed's split brain against five real etcd members (brief
 * h6-etcdnet): S1, leading, is cut off with A from S2..S5 and B at 3 s, the
 * members' Raft traffic held by the peer proxy (etcd_peer.c) and the
 * clients' links by the loopback proxy. S1 cannot commit A's lease and
 * steps down (etcd's check-quorum); S2..S5 elect a leader, which grants B:
 * SAFE, A never acquires, as simulated. B's grant comes later than the
 * simulated 6.01 s: etcd's election timeout (500 ms to 1 s of real time) is
 * 5 to 10 s of scenario time at scale 0.1 (docs/reality.md). Interrupted
 * mid-run, nothing is left: no member, no proxy, no client. */
static void test_real_etcd_leader_partitioned(void **state) {
    (void)state;
    if (!have_etcd()) skip();
    const char *trace = sp("leader-partitioned.jsonl");
    struct result *r = run_in("", fmt("real scenarios/consensus-leader-partitioned.lsim --trace %s", trace));
    if (r->code != 0) printf("%s%s", r->out, r->err);
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "backend etcd: 5 etcd members on 127.0.0.1:"));
    assert_non_null(strstr(r->out, "run 1: simulated SAFE, real SAFE"));
    assert_non_null(strstr(r->out, "real: SAFE, but A never acquired"));
    const char *b = strstr(r->out, "acquisition 1: simulated B   at 6.01s     real B   at ");
    assert_non_null(b);
    double at = 0;
    assert_int_equal(sscanf(b + strlen("acquisition 1: simulated B   at 6.01s     real B   at "), "%lf", &at), 1);
    printf("test_real: B took the lock at %.2fs of scenario time (simulated 6.01s)\n", at);
    assert_true(at > 5.0 && at < 20.0); /* B's acquire times out at 20 s */
    static char text[1 << 17];
    slurp(trace, text, sizeof text);
    assert_null(strstr(text, "\"kind\":\"acquired\",\"node\":\"A\""));
    assert_non_null(strstr(text, "\"kind\":\"acquire-failed\",\"node\":\"A\""));
    /* interrupted while S1 is cut off: the peer proxy goes with the rest */
    char scn[4096];
    slurp("scenarios/consensus-leader-partitioned.lsim", scn, sizeof scn);
    write_file(sp("split.lsim"), scn);
    fflush(stdout); /* the child's freopen would print what is buffered again */
    /* the members start in about 4 s; with three runs, 6 s is mid-run however fast they start (one run alone
     * was once over before it, exit 0) */
    interrupt_etcd_run(sp("split.lsim"), "3", 6000, SIGINT);
    /* the proxies and the clients are forks of locksim: their command line names the file */
    assert_false(process_mentions(sp("split.lsim")));
}

/* Redlock for real (issue 23): five redis-servers and one for the resource.
 * S3 is SIGKILLed at 1 s and started again empty at 2 s (persistence off):
 * it has forgotten A's key, B takes S3, S4 and S5 (S1 and S2 out of its
 * reach: its requests never sent) while A works: UNSAFE, as simulated. Its
 * fix, antirez's delayed restart (S3 kept down until 12 s), is SAFE. At
 * --scale 0.5 a second is 500 ms of real time, against the 20 to 130 ms a
 * redis-server takes to restart on a loaded machine, and the request
 * timeout (50 ms) is 25 ms real: at 0.2 (10 ms) A's first round once missed
 * a reply on a machine at load 12, and B took the lock first: SAFE. */
static void test_real_redlock_restart_unsafe_delayed_safe(void **state) {
    (void)state;
    if (!have_redis()) skip();
    char tmp[] = "/tmp/locksim-test-real-XXXXXX";
    assert_non_null(mkdtemp(tmp));
    char args[600], prefix[300];
    snprintf(prefix, sizeof prefix, "LOCKSIM_REAL_TMP=%s", tmp);
    snprintf(args, sizeof args,
             "real scenarios/redlock-restart-without-persistence.lsim --scale 0.5 --trace %s/t.jsonl", tmp);
    struct result *r = run_in(prefix, args);
    if (r->code != 0) printf("%s%s", r->out, r->err);
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "backend redlock: a redis-server per lock server"));
    assert_non_null(strstr(r->out, "run 1: simulated UNSAFE, real UNSAFE"));
    /* The recording has S3's crash and restart and the grants of five
 * servers; check-trace judges it UNSAFE on its own. */
    snprintf(args, sizeof args, "check-trace %s/t.jsonl", tmp);
    r = run_in("", args);
    assert_non_null(strstr(r->out, "Verdict: UNSAFE"));
    char path[400];
    snprintf(path, sizeof path, "%s/t.jsonl", tmp);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[2048];
    int crash = 0, restart = 0, s3_grants = 0;
    while (fgets(line, sizeof line, f)) {
        crash += strstr(line, "\"kind\":\"crash\",\"node\":\"S3\"") != NULL;
        restart += strstr(line, "\"kind\":\"restart\",\"node\":\"S3\"") != NULL;
        s3_grants += strstr(line, "\"kind\":\"srv-grant\",\"node\":\"S3\"") != NULL;
    }
    fclose(f);
    unlink(path);
    assert_int_equal(crash, 1);
    assert_int_equal(restart, 1);
    assert_int_equal(s3_grants, 2); /* A's before the crash, B's after the restart */
    /* The fix: S3 stays down until every lock it granted has expired. */
    r = run_in(prefix, "real scenarios/redlock-delayed-restart.lsim --scale 0.5");
    if (r->code != 0) printf("%s%s", r->out, r->err);
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "run 1: simulated SAFE, real SAFE"));
    assert_int_equal(entries(tmp), 0);
    assert_false(process_of_run(tmp));
    rmdir(tmp);
}

/* A fresh folder for LOCKSIM_REAL_TMP in tmp (a "...XXXXXX" buffer) and
 * the run_in prefix that sets it. */
static void real_tmp(char *tmp, char *prefix, size_t n) {
    assert_non_null(mkdtemp(tmp));
    snprintf(prefix, n, "LOCKSIM_REAL_TMP=%s", tmp);
}

/* The clock shim reaches each of the redlock backend's servers, one page
 * each: a +600 ms jump of server 0's wall clock cuts its key's PTTL (PX
 * 1000) to about 400 ms while server 1's key keeps its 1000 ms; a restarted
 * server 0 keeps its page (and its shifted clock: a fresh key's PTTL is cut
 * by a further +2 s at once to nothing). */
static void test_real_clock_shim_reaches_each_redlock_server(void **state) {
    (void)state;
    if (!have_redis()) skip();
    char tmp[] = "/tmp/locksim-test-real-XXXXXX";
    assert_non_null(mkdtemp(tmp));
    setenv("LOCKSIM_REAL_TMP", tmp, 1);
    struct redis_srv srv;
    char err[300];
    int rc = redis_nodes_open(&srv, err, sizeof err);
    unsetenv("LOCKSIM_REAL_TMP");
    if (rc) printf("%s\n", err);
    assert_int_equal(rc, 0);
    assert_int_equal(redis_nodes_start(&srv, 0, NULL), 0);
    assert_int_equal(redis_nodes_start(&srv, 1, NULL), 0);
    struct redis_nodes *nd = srv.nodes;
    assert_non_null(nd->clock[0]); /* the shim is preloaded into each, its own page mapped */
    assert_non_null(nd->clock[1]);
    assert_ptr_not_equal(nd->clock[0], nd->clock[1]);
    struct resp_conn c0, c1;
    struct resp_reply r;
    assert_int_equal(resp_connect(&c0, nd->port[0]), 0);
    assert_int_equal(resp_connect(&c1, nd->port[1]), 0);
    const char *set[] = {"SET", "lock", "A#1", "PX", "1000"};
    assert_int_equal(resp_command(&c0, &r, 5, set), 0);
    assert_int_equal(resp_command(&c1, &r, 5, set), 0);
    /* server 0's wall clock jumps +600 ms; server 1's does not move */
    clockshim_set(nd->clock[0], 600 * 1000000LL, wall_now_ns(), 0);
    long long p0 = pttl(&c0, "lock"), p1 = pttl(&c1, "lock");
    printf("test_real: after +600 ms on server 0: PTTL %lld ms there, %lld ms on server 1\n", p0, p1);
    assert_in_range(p0, 250, 400);
    assert_in_range(p1, 900, 1000);
    resp_close(&c0);
    /* a crash and a restart: the same page, the shift still in force */
    struct clockshim_page *page = nd->clock[0];
    redis_nodes_kill(&srv, 0);
    assert_int_equal(redis_nodes_start(&srv, 0, NULL), 0);
    assert_ptr_equal(nd->clock[0], page);
    assert_int_equal(resp_connect(&c0, nd->port[0]), 0);
    assert_int_equal(resp_command(&c0, &r, 5, set), 0);
    assert_in_range(pttl(&c0, "lock"), 900, 1000); /* the key is fresh: PX from the shifted now */
    clockshim_set(nd->clock[0], 2600 * 1000000LL, wall_now_ns(), 0);
    assert_int_equal(pttl(&c0, "lock"), -2); /* +2 s more: gone */
    assert_in_range(pttl(&c1, "lock"), 0, 1000);
    /* server 1's clock 5 s ahead and running 50% fast since a second ago:
     * its TIME, with the shift taken off (clockshim_unshift, as the redlock
     * client does for a grant), is the real wall time */
    int64_t now = wall_now_ns();
    clockshim_set(nd->clock[1], 5000 * 1000000LL, now - 1000 * 1000000LL, 500000000LL);
    const char *time_cmd[] = {"TIME"};
    assert_int_equal(resp_command(&c1, &r, 1, time_cmd), 0);
    assert_int_equal(r.type, RESP_ARRAY);
    int64_t shifted = r.elem[0] * 1000000000LL + r.elem[1] * 1000LL;
    struct clockshim_page copy;
    clockshim_read(nd->clock[1], &copy);
    int64_t back = clockshim_unshift(&copy, shifted);
    printf("test_real: server 1's TIME %+.3f s off the real clock, %+.3f ms once unshifted\n",
           (double)(shifted - now) / 1e9, (double)(back - now) / 1e6);
    assert_in_range(shifted - now, 5400 * 1000000LL, 5600 * 1000000LL); /* 5 s + 1 s at +50% */
    assert_in_range(back - now, 0, 50 * 1000000LL);
    resp_close(&c0);
    resp_close(&c1);
    pid_t pids[2] = {nd->pid[0], nd->pid[1]};
    redis_nodes_close(&srv);
    assert_true(kill(pids[0], 0) != 0 && kill(pids[1], 0) != 0); /* both stopped and reaped */
    nothing_left(tmp, tmp);
}

/* Kleppmann's Redlock counter-example for real: A locks S1, S2, S3 (S4 and
 * S5 unreachable), S3's wall clock jumps +10 s at 1 s and Redis expires A's
 * key there at once (PTTL -2 right after the step); B locks S3, S4, S5 at
 * 2.05 s while A works until 5 s: UNSAFE, as simulated, B's takeover at
 * the simulated time, and about 2 s in the critical section together
 * (simulated 2.004 s). At --scale 0.5 (15 s real) the request timeout is
 * 25 ms of real time (see the restart test above). */
static void test_real_redlock_clock_jump_unsafe(void **state) {
    (void)state;
    if (!have_redis()) skip();
    char tmp[] = "/tmp/locksim-test-real-XXXXXX", args[600], prefix[300];
    real_tmp(tmp, prefix, sizeof prefix);
    snprintf(args, sizeof args, "real scenarios/redlock-clock-jump.lsim --scale 0.5 --trace %s/t.jsonl", tmp);
    struct result *r = run_in(prefix, args);
    if (r->code != 0 || !strstr(r->out, "(no difference)")) printf("%s%s", r->out, r->err);
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "run 1: simulated UNSAFE, real UNSAFE (no difference)"));
    assert_non_null(strstr(r->out, "acquisition 2: simulated B   at 2.05s     real B   at 2.0"));
    char path[400], text[1 << 16];
    snprintf(path, sizeof path, "%s/t.jsonl", tmp);
    slurp(path, text, sizeof text);
    /* S3's step, then A's key expired on S3 at that instant (Redis said so) */
    char *step = strstr(text, "\"kind\":\"clock-step\",\"node\":\"S3\"");
    assert_non_null(step);
    assert_non_null(strstr(step, "\"kind\":\"srv-expire\",\"node\":\"S3\",\"peer\":\"A\""));
    /* B's grant on S3 at its own time, not at S3's shifted clock (12 s) */
    char *b3 = strstr(step, "\"kind\":\"srv-grant\",\"node\":\"S3\",\"peer\":\"B\"");
    assert_non_null(b3);
    char *tn = b3;
    while (tn > text && strncmp(tn, "\"t_ns\":", 7) != 0) tn--;
    long long t_b3 = atoll(tn + 7);
    assert_in_range(t_b3, 2000000000LL, 2100000000LL);
    snprintf(args, sizeof args, "check-trace %s", path);
    r = run_in("", args);
    assert_non_null(strstr(r->out, "Verdict: UNSAFE"));
    char *de = strstr(r->out, "double entry     1 interval, ");
    assert_non_null(de);
    double both = atof(de + strlen("double entry     1 interval, "));
    printf("test_real: A and B in the critical section together %.3f s (simulated 2.004 s)\n", both);
    assert_true(both > 1.9 && both < 2.1);
    unlink(path);
    nothing_left(tmp, tmp); /* locksim and its clients (their command line names tmp); the servers die with it */
}

/* A partition for real on the redlock backend, through the per-link proxy
 * (proxy.c, a link per client and server, the resource's too): A holds the
 * lock on all five servers (TTL 3 s) when A, S1, S2 are cut off from B,
 * S3, S4, S5 and R at 200 ms; A's release at 1 s reaches S1 and S2 only,
 * so its keys on S3, S4, S5 stay until they expire at 3 s, and B, retrying
 * every 500 ms, takes S3, S4, S5 at 3.55 s: SAFE, as simulated, at the
 * simulated time. At --scale 0.5 (4 s real). */
static void test_real_redlock_partition_through_the_proxy(void **state) {
    (void)state;
    if (!have_redis()) skip();
    char tmp[] = "/tmp/locksim-test-real-XXXXXX", args[600], prefix[300], file[300];
    real_tmp(tmp, prefix, sizeof prefix);
    snprintf(file, sizeof file, "%s/partition.lsim", tmp);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fputs("title \"A's release cannot cross a partition\"\npurpose correctness\n"
          "lock redlock servers=5 ttl=3s\nresource stock=5\nnetwork latency=1ms\nduration 8s\n"
          "client A: acquire; read; write; work 1s; release\n"
          "client B @500ms: acquire retry=500ms; read; write; release\n"
          "@200ms partition A S1 S2 | B S3 S4 S5 R\n@6s heal\n",
          f);
    fclose(f);
    snprintf(args, sizeof args, "real %s --scale 0.5 --trace %s/t.jsonl", file, tmp);
    struct result *r = run_in(prefix, args);
    if (r->code != 0) printf("%s%s", r->out, r->err);
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "run 1: simulated SAFE, real SAFE"));
    const char *b = strstr(r->out, "real B   at ");
    assert_non_null(b);
    double at = 0;
    assert_int_equal(sscanf(b + strlen("real B   at "), "%lf", &at), 1);
    printf("test_real: B took the lock at %.2fs of scenario time (simulated 3.55s)\n", at);
    assert_true(at > 3.4 && at < 3.7); /* after A's keys on S3..S5 expired, not at A's release (1 s) */
    /* A's release deleted its key on S1 and S2 only; on S3, S4, S5 it expired at 3 s */
    char path[400], line[2048];
    snprintf(path, sizeof path, "%s/t.jsonl", tmp);
    FILE *t = fopen(path, "r");
    assert_non_null(t);
    int deleted = 0, expired = 0;
    while (fgets(line, sizeof line, t)) {
        const char *tn = strstr(line, "\"t_ns\":");
        long long ns = tn ? atoll(tn + 7) : 0;
        if (strstr(line, "\"kind\":\"srv-delete\"") && strstr(line, "\"peer\":\"A\"")) {
            assert_true(strstr(line, "\"node\":\"S1\"") || strstr(line, "\"node\":\"S2\""));
            deleted++;
        }
        if (strstr(line, "\"kind\":\"srv-expire\"") && strstr(line, "\"peer\":\"A\"")) {
            assert_null(strstr(line, "\"node\":\"S1\""));
            assert_in_range(ns, 2950000000LL, 3100000000LL);
            expired++;
        }
    }
    fclose(t);
    unlink(path);
    assert_int_equal(deleted, 2);
    assert_int_equal(expired, 3);
    unlink(file);
    nothing_left(tmp, tmp);
}

/* The backends a user can name: every store `real --help` lists resolves,
 * and it lists as many as the --store error does; every algorithm in the
 * catalog either runs on the store chosen for it (one of those) or is
 * refused with the sentence naming what each backend runs. */
static void test_real_backends_table(void **state) {
    (void)state;
    struct result *r = run_in("", "real --help");
    assert_int_equal(r->code, 0);
    const char *line = strstr(r->out, "--store NAME");
    assert_non_null(line);
    char names[200];
    snprintf(names, sizeof names, "%s", line + strlen("--store NAME"));
    *strstr(names, " (default") = '\0';
    char help[200] = ""; /* " NAME," for each */
    int listed = 0;
    for (char *w = strtok(names, " ,"); w; w = strtok(NULL, " ,"))
        if (strcmp(w, "or") != 0) {
            assert_non_null(real_store(w));
            snprintf(help + strlen(help), sizeof help - strlen(help), " %s,", w);
            listed++;
        }
    char built[200];
    real_store_names(built, sizeof built);
    int nbuilt = 1;
    for (const char *p = built; (p = strchr(p, ',')) != NULL; p++) nbuilt++;
    nbuilt += strstr(built, " and ") != NULL;
    assert_int_equal(listed, 5);
    assert_int_equal(nbuilt, listed);
    /* every catalog algorithm: its lock line read (a bare `lock NAME`), or
     * the refusal that says which backend runs what */
    static struct scenario s;
    int runs = 0, nreality = 1;
    char reality[300] = "|"; /* make reality's algorithms, "|a|b|" */
    FILE *f = fopen("mk/reality.sh", "r");
    assert_non_null(f);
    char text[300];
    while (fgets(text, sizeof text, f))
        if (strstr(text, "'^lock (")) snprintf(reality + 1, sizeof reality - 1, "%s", strstr(text, "'^lock (") + 8);
    fclose(f);
    assert_non_null(strchr(reality, ')'));
    strcpy(strchr(reality, ')'), "|");
    for (const char *p = reality + 1; (p = strchr(p, '|')) != NULL && p[1]; p++) nreality++;
    for (int i = 0; lock_algo_at(i); i++) {
        const char *name = lock_algo_at(i)->name;
        snprintf(s.algo, sizeof s.algo, "%s", name);
        s.nservers = 1;
        struct real_cfg c;
        char why[600], want[640];
        if (real_parse_cfg(&s, &c, why, sizeof why) == 0) {
            const char *store = real_store_for(&s);
            assert_non_null(real_store(store));
            char named[80];
            snprintf(named, sizeof named, " %s,", store);
            assert_non_null(strstr(help, named));
            /* make reality (mk/reality.sh) plays it */
            char word[80];
            snprintf(word, sizeof word, "|%s|", name);
            assert_non_null(strstr(reality, word));
            runs++;
        } else {
            snprintf(want, sizeof want,
                     "algorithm %s needs a backend that is not built (redis runs lease, fenced-lease, setnx, "
                     "setnx-expire, lease-renew; etcd runs consensus; redlock runs redlock; zookeeper runs "
                     "zookeeper, zookeeper-multi)",
                     name);
            assert_string_equal(why, want);
        }
    }
    assert_int_equal(runs, nreality);
    assert_int_equal(runs, 9);
    /* lease on three servers runs on a primary and its replicas */
    snprintf(s.algo, sizeof s.algo, "lease");
    s.nservers = 3;
    assert_string_equal(real_store_for(&s), "redis-replicated");
}

/* What the redlock backend cannot make real is refused with its reason. */
static void test_real_redlock_refusals(void **state) {
    (void)state;
    /* antirez's fix (expiry by a monotonic clock) is not what Redis 7.0 does */
    struct result *r = run_in("", "real scenarios/redlock-clock-jump-monotonic.lsim");
    assert_int_equal(r->code, 69);
    assert_non_null(strstr(r->err, "expiry-clock=monotonic with a clock fault: Redis 7.0 expires keys by its wall "
                                   "clock (mstime, from gettimeofday)"));
    r = run_in("", "real scenarios/redlock-gc-pause-after-acquire.lsim --store redis");
    assert_int_equal(r->code, 69);
    assert_non_null(strstr(r->err, "redlock runs on redlock only"));
    /* a client's clock: the shim is in the redis-servers only */
    const char *head = "lock redlock servers=5 ttl=3s\nduration 8s\nclient A: acquire; read; write; release\n";
    write_file(sp("rl-client-clock.lsim"), fmt("%s@1s clock A step +1s wall\n", head));
    r = run_in("", fmt("real %s", sp("rl-client-clock.lsim")));
    assert_int_equal(r->code, 69);
    assert_non_null(strstr(r->err, "line 4: the clock of A, a client"));
    /* a partition at a client's point: the driver cannot see it in time */
    write_file(sp("rl-point-partition.lsim"), fmt("%son A.after-acquire partition A | S1 S2 S3\n", head));
    r = run_in("", fmt("real %s", sp("rl-point-partition.lsim")));
    assert_int_equal(r->code, 69);
    assert_non_null(strstr(r->err, "line 4: a partition or heal at a client's point"));
}

/* Runs locksim real FILE [ARGS] --repeat 3 and signals it after each of at_ms
 * (a fresh run each), with sigs: exit 130 after the cleanup (or death by the
 * signal when it came before anything was started), every redis-server it
 * had started gone (each seen as its child before the signal; from the
 * second point on there must be one), and its folder removed. */
static void interrupted_redis_servers_gone(const char *file, const char *scale, const long *at_ms, const int *sigs,
                                           int n) {
    const char *args[] = {file, "--scale", scale, "--repeat", "3", NULL};
    for (int k = 0; k < n; k++) interrupt_run(args, at_ms[k], sigs[k], "redis-server", k > 0);
}

/* Interrupted while the six servers start, mid-run and late, by SIGINT and
 * SIGTERM: nothing is left. At scale 0.2 the first run's clients are done
 * at about 1.3 s of real time (S3 crashes at 0.2 s, restarts at 0.4 s, B
 * asks from 0.6 s): 900 ms is late in it. (At 0.05 the three runs, which
 * end once their clients have, were over in 0.94 s.) */
static void test_real_redlock_interrupted_leaves_nothing(void **state) {
    (void)state;
    if (!have_redis()) skip();
    const long at_ms[] = {10, 300, 900};
    const int sigs[] = {SIGINT, SIGTERM, SIGINT};
    interrupted_redis_servers_gone("scenarios/redlock-restart-without-persistence.lsim", "0.2", at_ms, sigs, 3);
}

/* A replicated Redis for real (issue 23): S1 the primary, S2 its replica.
 * The model's repl-lag=1s holds A's grant back on S1, which crashes at
 * 0.5 s: made real by cutting the replica off (SIGSTOP, CLIENT KILL TYPE
 * replica) before the run. S2, promoted (REPLICAOF NO ONE), grants B the
 * same lock and the same token: UNSAFE, as simulated. Its fix: replication
 * that reaches the replica before the failover (no lag, WAIT 1): S2 has
 * A's key, nobody takes A's lock: SAFE. At --scale 0.25 the crash comes
 * 125 ms of real time after the start. */
static void test_real_replicated_failover_loses_lock_then_wait_safe(void **state) {
    (void)state;
    if (!have_redis()) skip();
    char tmp[] = "/tmp/locksim-test-real-XXXXXX";
    assert_non_null(mkdtemp(tmp));
    char args[600], prefix[300], path[400];
    snprintf(prefix, sizeof prefix, "LOCKSIM_REAL_TMP=%s", tmp);
    struct result *r = run_in(prefix, "real scenarios/failover-async-replication-loses-lock.lsim --scale 0.25");
    if (r->code != 0) printf("%s%s", r->out, r->err);
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "backend redis-replicated: a redis-server per lock server (S1 the primary"));
    assert_non_null(strstr(r->out, "run 1: simulated UNSAFE, real UNSAFE"));
    snprintf(path, sizeof path, "%s/wait.lsim", tmp);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("title \"WAIT 1 without lag: the promoted replica has the lock\"\n"
          "lock fenced-lease servers=2 ttl=30s first-token=41 repl-lag=0s wait=1\n"
          "resource stock=1\nnetwork latency=1ms\nduration 20s\n"
          "client A: acquire; read; work 10s; write; release\n"
          "client B @3s: acquire retry=1s; read; work 2s; write; release\n"
          "@500ms crash S1\n@2s promote S2\n",
          f);
    fclose(f);
    snprintf(args, sizeof args, "real %s --scale 0.25", path);
    r = run_in(prefix, args);
    if (r->code != 0) printf("%s%s", r->out, r->err);
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "run 1: simulated SAFE, real SAFE"));
    unlink(path);
    assert_int_equal(entries(tmp), 0);
    assert_false(process_of_run(tmp));
    rmdir(tmp);
}

/* What the redis-replicated backend cannot make real is refused with its reason. */
static void test_real_replicated_refusals(void **state) {
    (void)state;
    struct result *r = run_in("", "real scenarios/failover-with-wait.lsim");
    assert_int_equal(r->code, 69);
    assert_non_null(strstr(r->err, "repl-lag=0.5 s: the simulated replicas receive the primary's writes that late"));
    r = run_in("", "real scenarios/failover-min-replicas.lsim");
    assert_int_equal(r->code, 69);
    assert_non_null(strstr(r->err, "min-replicas-to-write=1: not built in the redis-replicated backend"));
}

/* Interrupted while the primary and its replica start, mid-run and late:
 * nothing is left. */
static void test_real_replicated_interrupted_leaves_nothing(void **state) {
    (void)state;
    if (!have_redis()) skip();
    const long at_ms[] = {10, 400, 1500};
    const int sigs[] = {SIGTERM, SIGINT, SIGTERM};
    interrupted_redis_servers_gone("scenarios/failover-async-replication-loses-lock.lsim", "0.125", at_ms, sigs, 3);
}

/* The ZooKeeper lock recipe for real (tickTime 2 s: 200 ms of real time at
 * scale 0.1; at the default 0.05, B arriving 1 s after A is 50 ms of real
 * time, and on a machine at load 15 B once came first): A holds its ephemeral znode and is stopped for
 * 8 s; ZooKeeper expires its 4 s session at its tick bucket (6 s), B's
 * watch fires and B takes the lock; A's late write, with the lower czxid,
 * reaches a separate fenced resource first and is accepted: UNSAFE, as
 * simulated. With the write a multi-op (check the lock znode, set the data)
 * in A's own session, ZooKeeper refuses it whole: SAFE, as simulated. */
static void test_real_zookeeper_expired_unsafe_then_multi_safe(void **state) {
    (void)state;
    if (!have_zookeeper()) skip();
    char tmp[] = "/tmp/locksim-test-real-XXXXXX";
    assert_non_null(mkdtemp(tmp));
    char args[600], prefix[300], path[400];
    snprintf(prefix, sizeof prefix, "LOCKSIM_REAL_TMP=%s", tmp);
    snprintf(path, sizeof path, "%s/t.jsonl", tmp);
    /* chosen for zookeeper without --store */
    snprintf(args, sizeof args, "real scenarios/zookeeper-expired-session-write-separate.lsim --scale 0.1 --trace %s",
             path);
    struct result *r = run_in(prefix, args);
    if (r->code != 0) printf("%s%s", r->out, r->err);
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "backend zookeeper"));
    assert_non_null(strstr(r->out, "scale 0.1:"));
    assert_non_null(strstr(r->out, "run 1: simulated UNSAFE, real UNSAFE"));
    assert_non_null(strstr(r->out, "acquisition 2: simulated B   at 6s        real B"));
    snprintf(args, sizeof args, "check-trace %s", path);
    r = run_in("", args);
    assert_non_null(strstr(r->out, "Verdict: UNSAFE"));
    static char text[1 << 16];
    slurp(path, text, sizeof text);
    assert_non_null(strstr(text, "recorded against zookeeper on 127.0.0.1:"));
    snprintf(args, sizeof args, "real scenarios/zookeeper-multi-refuses-expired-session.lsim --scale 0.1 --trace %s",
             path);
    r = run_in(prefix, args);
    if (r->code != 0) printf("%s%s", r->out, r->err);
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "run 1: simulated SAFE, real SAFE"));
    snprintf(args, sizeof args, "check-trace %s", path);
    r = run_in("", args);
    assert_non_null(strstr(r->out, "Verdict: SAFE"));
    assert_non_null(strstr(r->out, "rejected"));
    unlink(path);
    nothing_left(tmp, tmp);
}

/* What the zookeeper backend cannot play is refused, saying why, exit 69:
 * Curator's connection states, a tickTime that is not whole milliseconds
 * of real time, a Redis lock. */
static void test_real_zookeeper_refusals(void **state) {
    (void)state;
    struct result *r = run_in("", "real scenarios/curator-holder-waits-for-lost.lsim");
    assert_int_equal(r->code, 69);
    assert_non_null(strstr(r->err, "lock option curator=lost: Curator's connection states"));
    r = run_in("", "real scenarios/zookeeper-session-tick-bucket.lsim --scale 0.0001");
    assert_int_equal(r->code, 69);
    assert_non_null(strstr(r->err, "ZooKeeper takes whole milliseconds"));
    r = run_in("", "real scenarios/gc-pause-outlives-lease.lsim --store zookeeper");
    assert_int_equal(r->code, 69);
    assert_non_null(strstr(r->err, "does not run on the zookeeper backend"));
}

/* Interrupted while the JVM starts, as it answers and mid-run, by SIGINT
 * and SIGTERM: exit 130, no java, no client, no data dir. */
static void test_real_zookeeper_interrupted_leaves_nothing(void **state) {
    (void)state;
    if (!have_zookeeper()) skip();
    const long at_ms[] = {30, 400, 3000};
    const int sigs[] = {SIGTERM, SIGINT, SIGTERM};
    const char *args[] = {"scenarios/zookeeper-release-checks-czxid.lsim", "--repeat", "3", NULL};
    for (int k = 0; k < 3; k++) interrupt_run(args, at_ms[k], sigs[k], NULL, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_real_gc_pause_unsafe_and_clean),
            cmocka_unit_test(test_real_run_ends_when_its_clients_have),
            cmocka_unit_test(test_real_runs_side_by_side_get_their_own_ports),
            cmocka_unit_test(test_real_refuses_what_it_cannot_make_real),
            cmocka_unit_test(test_real_backends_table),
            cmocka_unit_test(test_real_picture_refusals),
            cmocka_unit_test(test_real_clock_shim_moves_redis_expiry),
            cmocka_unit_test(test_real_resp_over_hiredis),
            cmocka_unit_test(test_real_server_clock_jump_unsafe),
            cmocka_unit_test(test_real_delayed_write_through_the_proxy),
            cmocka_unit_test(test_real_redis_release_and_write_options),
            cmocka_unit_test(test_real_redis_token_rules),
            cmocka_unit_test(test_real_redis_lease_options),
            cmocka_unit_test(test_real_partition_through_the_proxy),
            cmocka_unit_test(test_real_interrupted_leaves_nothing),
            cmocka_unit_test(test_real_refuses_a_tie_on_the_deadline),
            cmocka_unit_test(test_real_replays_the_simulated_jitter),
            cmocka_unit_test(test_real_timed_faults_applied_when_due),
            cmocka_unit_test(test_real_exits_1_when_verdicts_differ),
            cmocka_unit_test(test_real_server_that_does_not_answer),
            cmocka_unit_test(test_real_etcd_pause_unsafe_then_fenced_safe),
            cmocka_unit_test(test_real_etcd_queued_waiter_session_expired),
            cmocka_unit_test(test_real_etcd_client_partitioned_loses_lease),
            cmocka_unit_test(test_real_etcd_leader_partitioned),
            cmocka_unit_test(test_real_etcd_refusals),
            cmocka_unit_test(test_real_zookeeper_expired_unsafe_then_multi_safe),
            cmocka_unit_test(test_real_zookeeper_refusals),
            cmocka_unit_test(test_real_zookeeper_interrupted_leaves_nothing),
            cmocka_unit_test(test_real_etcd_interrupted_leaves_nothing),
            cmocka_unit_test(test_real_etcd_three_members_leader_paused),
            cmocka_unit_test(test_real_etcd_cluster_interrupted_leaves_nothing),
            cmocka_unit_test(test_real_redlock_restart_unsafe_delayed_safe),
            cmocka_unit_test(test_real_clock_shim_reaches_each_redlock_server),
            cmocka_unit_test(test_real_redlock_clock_jump_unsafe),
            cmocka_unit_test(test_real_redlock_partition_through_the_proxy),
            cmocka_unit_test(test_real_redlock_refusals),
            cmocka_unit_test(test_real_redlock_interrupted_leaves_nothing),
            cmocka_unit_test(test_real_replicated_failover_loses_lock_then_wait_safe),
            cmocka_unit_test(test_real_replicated_refusals),
            cmocka_unit_test(test_real_replicated_interrupted_leaves_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
