/* The command line's one list of options: every command's getopt_long
 * tables (cli_tables_CMD, listed in cli_commands) are what the conventions
 * of cli/args.c ask, so an option added to a table needs no second edit.
 * This binary links the front end itself (its objects, main renamed), so it
 * reads the tables the program reads. */
#include <fcntl.h>
#include <getopt.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "testutil.h"

/* cli_args_normalize on one argument of cmd: 0 with *out (its words,
 * space-separated), or the exit status it returns. */
static int normalize1(const struct cli_command *cmd, const char *arg, char *out, size_t n) {
    char a[256];
    snprintf(a, sizeof a, "%s", arg);
    char *argv[] = {a, NULL};
    char **v = argv;
    int argc = 1, st = 0;
    int saved = dup(2), quiet = open("/dev/null", O_WRONLY); /* its usage messages are not this test's output */
    dup2(quiet, 2);
    int rc = cli_args_normalize(cmd, &argc, &v, &st);
    dup2(saved, 2);
    close(saved), close(quiet);
    if (rc != 0) return st;
    out[0] = '\0';
    for (int i = 0; i < argc; i++) snprintf(out + strlen(out), n - strlen(out), "%s%s", i ? " " : "", v[i]);
    return 0;
}

/* Every option of every command's tables, as the normalizer sees it:
 * --name=V is `--name V` when the option takes a value, refused (64,
 * naming it) when it takes none; and what the normalizer finds under that
 * name is that table entry's kind. */
static void test_every_table_option_known(void **state) {
    (void)state;
    int checked = 0;
    for (const struct cli_command *c = cli_commands; c->name; c++)
        for (int t = 0; c->tables && c->tables[t]; t++)
            for (const struct option *o = c->tables[t]; o->name; o++) {
                const struct option *f = cli_option_find(c->tables, o->name, strlen(o->name));
                assert_non_null(f);
                assert_int_equal(f->has_arg, o->has_arg);
                char arg[128], want[160], got[300];
                snprintf(arg, sizeof arg, "--%s=V", o->name);
                int st = normalize1(c, arg, got, sizeof got);
                if (o->has_arg == required_argument) {
                    snprintf(want, sizeof want, "--%s V", o->name);
                    assert_int_equal(st, 0);
                    assert_string_equal(got, want);
                } else assert_int_equal(st, 64);
                checked++;
            }
    assert_true(checked > 60);
}

/* And the other way: a name no table of the command has is not the
 * normalizer's to split (getopt_long refuses it, naming it); a unique
 * abbreviation is written out, an ambiguous one is left for getopt. */
static void test_normalizer_knows_only_tables(void **state) {
    (void)state;
    const struct cli_command *batch = NULL, *merge = NULL, *render = NULL;
    for (const struct cli_command *c = cli_commands; c->name; c++) {
        if (strcmp(c->name, "batch") == 0) batch = c;
        if (strcmp(c->name, "merge") == 0) merge = c;
        if (strcmp(c->name, "render") == 0) render = c;
    }
    assert_non_null(batch), assert_non_null(merge), assert_non_null(render);
    char got[300];
    assert_int_equal(normalize1(batch, "--bogus=1", got, sizeof got), 0);
    assert_string_equal(got, "--bogus=1");
    assert_int_equal(normalize1(batch, "--vary=x=1", got, sizeof got), 0); /* sweep's, not batch's */
    assert_string_equal(got, "--vary=x=1");
    assert_int_equal(normalize1(batch, "--form=csv", got, sizeof got), 0);
    assert_string_equal(got, "--format csv");
    assert_int_equal(normalize1(batch, "--see=1", got, sizeof got), 0); /* --seed or --seeds */
    assert_string_equal(got, "--see=1");
    assert_int_equal(normalize1(render, "--out=x.svg", got, sizeof got), 0); /* render's --output */
    assert_string_equal(got, "--output x.svg");
    assert_int_equal(normalize1(merge, "--svg=m.svg", got, sizeof got), 0);
    assert_string_equal(got, "--svg m.svg");
    /* The shared fragments are one declaration: batch and sweep take the
     * same entry for --seeds, merge none. */
    const struct cli_command *sweep = NULL;
    for (const struct cli_command *c = cli_commands; c->name; c++)
        if (strcmp(c->name, "sweep") == 0) sweep = c;
    assert_non_null(sweep);
    const struct option *a = cli_option_find(batch->tables, "seeds", 5),
                        *b = cli_option_find(sweep->tables, "seeds", 5);
    assert_non_null(a);
    assert_ptr_equal(a, b);
    assert_ptr_equal(cli_option_find(merge->tables, "seeds", 5), NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_every_table_option_known),
            cmocka_unit_test(test_normalizer_knows_only_tables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
