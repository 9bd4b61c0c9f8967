/* Output files at their edges (issue 19, item 4), through the binary: a
 * FIFO nobody reads, dangling symlinks and symlink loops, a read-only file,
 * another user's file written by root, a writable file in a folder that
 * takes no new file, a FIFO named *.lsim in a folder given to batch. Each
 * test failed before its fix: the FIFO blocked forever without a word, the links were
 * replaced by regular files, the 0444 file was replaced, the 0600 file
 * became root's, the folder's file was refused. */
#include "cli_util.h"

#include <fcntl.h>
#include <sys/stat.h>

#define GC "scenarios/gc-pause-outlives-lease.lsim"

static void test_fifo_without_reader(void **state) {
    (void)state;
    unlink(sp("fifo"));
    assert_int_equal(mkfifo(sp("fifo"), 0600), 0);
    /* Before the fix, open(2) waited for a reader for ever, silently: now it
     * says what it waits for (and a reader that comes gets the trace). */
    struct result *r = run_in("timeout 2 env", fmt("run " GC " --no-timeline --trace %s", sp("fifo")));
    assert_int_equal(r->code, 124); /* still waiting when timeout stopped it */
    assert_non_null(
            strstr(r->err, fmt("locksim: waiting for a reader on FIFO '%s' (nothing reads it yet)", sp("fifo"))));
    assert_int_equal(system(fmt("%2$s batch " GC " --seeds 1..2 --format jsonl --out %1$s 2>/dev/null & sleep 0.5; "
                                "cat %1$s > %1$s.out; wait",
                                sp("fifo"), bin())),
                     0);
    static char got[1 << 16];
    slurp(fmt("%s.out", sp("fifo")), got, sizeof got);
    assert_non_null(strstr(got, "\"seed\":2"));
    /* A FIFO named *.lsim in a folder is not a scenario: skipped, not read. */
    assert_int_equal(system(fmt("mkdir -p %1$s/cat && cp " GC " %1$s/cat/ && mkfifo %1$s/cat/blocker.lsim", scratch())),
                     0);
    r = run_in("timeout 10 env", fmt("batch %s/cat --format jsonl", scratch()));
    assert_int_equal(r->code, 0);
    assert_non_null(strstr(r->out, "gc-pause-outlives-lease.lsim"));
    assert_null(strstr(r->out, "blocker"));
    r = run_in("timeout 10 env", fmt("check %s/cat", scratch()));
    assert_null(strstr(r->out, "blocker"));
    unlink(sp("fifo"));
}

static void test_symlinks_written_through(void **state) {
    (void)state;
    struct stat st;
    char buf[256];
    /* A dangling link: its target is made, the link stays a link. */
    unlink(sp("dangling"));
    unlink(sp("made.jsonl"));
    assert_int_equal(symlink("made.jsonl", sp("dangling")), 0);
    struct result *r = run(fmt("run " GC " --no-timeline --trace %s", sp("dangling")));
    assert_int_equal(r->code, 0);
    assert_int_equal(lstat(sp("dangling"), &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    slurp(sp("made.jsonl"), buf, sizeof buf);
    assert_non_null(strstr(buf, "\"format\":\"locksim-trace\""));
    /* A chain of links, the last dangling. */
    unlink(sp("chain"));
    unlink(sp("made.jsonl"));
    assert_int_equal(symlink("dangling", sp("chain")), 0);
    r = run(fmt("run " GC " --no-timeline --trace %s", sp("chain")));
    assert_int_equal(r->code, 0);
    assert_int_equal(lstat(sp("chain"), &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(stat(sp("made.jsonl"), &st), 0);
    /* A loop: refused with the reason, both links left. */
    unlink(sp("loop1"));
    unlink(sp("loop2"));
    assert_int_equal(symlink("loop2", sp("loop1")), 0);
    assert_int_equal(symlink("loop1", sp("loop2")), 0);
    r = run(fmt("run " GC " --no-timeline --trace %s", sp("loop1")));
    assert_int_equal(r->code, 73);
    assert_non_null(strstr(r->err, "Too many levels of symbolic links"));
    assert_int_equal(lstat(sp("loop1"), &st), 0);
    assert_true(S_ISLNK(st.st_mode));
}

static void test_read_only_and_owners(void **state) {
    (void)state;
    struct stat st;
    char buf[64];
    /* A read-only file is not replaced, even by root. */
    write_file(sp("ro.txt"), "mine\n");
    assert_int_equal(chmod(sp("ro.txt"), 0444), 0);
    struct result *r = run(fmt("run " GC " --no-timeline --trace %s", sp("ro.txt")));
    assert_int_equal(r->code, 73);
    assert_non_null(strstr(r->err, "it is read-only (mode 0444)"));
    slurp(sp("ro.txt"), buf, sizeof buf);
    assert_string_equal(buf, "mine\n");
    if (getuid() != 0) return; /* what follows needs root */
    /* Root writing over a user's 0600 file: still the user's, still 0600. */
    write_file(sp("theirs.txt"), "theirs\n");
    assert_int_equal(chown(sp("theirs.txt"), 65534, 65534), 0);
    assert_int_equal(chmod(sp("theirs.txt"), 0600), 0);
    assert_int_equal(run(fmt("run " GC " --no-timeline --trace %s", sp("theirs.txt")))->code, 0);
    assert_int_equal(stat(sp("theirs.txt"), &st), 0);
    assert_int_equal(st.st_uid, 65534);
    assert_int_equal(st.st_gid, 65534);
    assert_int_equal(st.st_mode & 07777, 0600);
    /* A user's writable file in a folder they cannot add to: written in
     * place (as that user: setpriv from util-linux drops root). */
    assert_int_equal(system(fmt("mkdir -p %1$s/rodir && echo old > %1$s/rodir/f.txt && chown -R 65534:65534 "
                                "%1$s/rodir && chmod 555 %1$s/rodir && chmod 755 %1$s",
                                scratch())),
                     0);
    /* The binary and the scenario are copied where that user can read them
     * (the checkout may be in root's home). */
    assert_int_equal(system(fmt("cp %1$s %2$s/lsbin && cp " GC " %2$s/gc.lsim && chmod 755 %2$s/lsbin && "
                                "chmod 644 %2$s/gc.lsim",
                                bin(), scratch())),
                     0);
    int st2 = system(fmt("cd %1$s && setpriv --reuid=65534 --regid=65534 --clear-groups ./lsbin run gc.lsim "
                         "--no-timeline --trace rodir/f.txt >/dev/null 2>rodir.err",
                         scratch()));
    char err[1024];
    slurp(sp("rodir.err"), err, sizeof err);
    if (st2 != 0) fprintf(stderr, "setpriv run: status %d: %s\n", st2, err);
    assert_int_equal(st2, 0);
    static char text[65536];
    slurp(sp("rodir/f.txt"), text, sizeof text);
    assert_non_null(strstr(text, "\"format\":\"locksim-trace\""));
    assert_int_equal(system(fmt("chmod 755 %1$s/rodir", scratch())), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_fifo_without_reader),
            cmocka_unit_test(test_symlinks_written_through),
            cmocka_unit_test(test_read_only_and_owners),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
