/* Exit codes come from one table (sim/error.h): every error code's status
 * is a row of LSIM_EXIT_MAP, `locksim help` prints that table, and
 * README.md's table says the same, row for row. Adding a status in one
 * place and not the others fails here. */
#include "cli_util.h"

#include "error.h"

static void test_every_error_status_has_a_meaning(void **state) {
    (void)state;
    for (int code = LSIM_ERR_FIRST_ + 1; code < LSIM_ERR_LAST_; code++) {
        if (!lsim_exit_meaning(lsim_exit_status(code)))
            fprintf(stderr, "%s: status %d has no row in LSIM_EXIT_MAP\n", lsim_errname(code), lsim_exit_status(code));
        assert_non_null(lsim_exit_meaning(lsim_exit_status(code)));
    }
    assert_int_equal(lsim_exit_status(LSIM_EINTERRUPTED), 130);
    assert_int_equal(lsim_errcode("INTERRUPTED"), LSIM_EINTERRUPTED);
    assert_int_equal(lsim_errcode("NO_SUCH"), LSIM_OK);
    assert_null(lsim_exit_meaning(2));
}

static void test_help_and_readme_tables(void **state) {
    (void)state;
    struct result *r = run("help");
    assert_int_equal(r->code, 0);
    static char readme[1 << 20];
    slurp("README.md", readme, sizeof readme);
    static const struct {
        int status;
        const char *meaning;
    } rows[] = {
#define ROW_(status, meaning) {status, meaning},
            LSIM_EXIT_MAP(ROW_)
#undef ROW_
    };
    const char *at = strstr(readme, "| exit code | meaning |\n|---|---|\n");
    assert_non_null(at);
    at += strlen("| exit code | meaning |\n|---|---|\n");
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        char line[400], head[16];
        snprintf(line, sizeof line, "| %d | %s |\n", rows[i].status, rows[i].meaning);
        if (strncmp(at, line, strlen(line)) != 0) fprintf(stderr, "README.md: expected the row %s", line);
        assert_int_equal(strncmp(at, line, strlen(line)), 0);
        at += strlen(line);
        snprintf(head, sizeof head, "\n  %-3d ", rows[i].status);
        assert_non_null(strstr(r->out, head));
    }
    assert_true(*at == '\n'); /* no row beyond the table's */
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_every_error_status_has_a_meaning),
            cmocka_unit_test(test_help_and_readme_tables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
