/* libFuzzer target: the scenario parser (scenario_parse) and the --set
 * overrides (scenario_set) on arbitrary bytes. Beyond "no crash, no leak, no
 * UB" it checks what the parser promises: an error has a position inside the
 * text and a message; an accepted scenario satisfies every limit
 * (fuzz_common.h); a deep copy is equal; a failed --set changes nothing. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "error.h"
#include "scenario.h"

#define FUZZ_MAX_SETS 8   /* lines of the input also tried as --set KEY=VALUE */
#define FUZZ_SET_MAX 8192 /* longest --set argument tried */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Lines in the text, counting a last line without "\n". */
static int count_lines(const uint8_t *data, size_t size) {
    int n = 1;
    for (size_t i = 0; i < size; i++)
        if (data[i] == '\n') n++;
    return n;
}

static void check_error(const struct scn_error *err, int max_line) {
    FUZZ_REQUIRE(FUZZ_TERMINATED(err->msg) && err->msg[0] != '\0');
    FUZZ_REQUIRE(FUZZ_TERMINATED(err->file));
    /* Every malformed input is reported at file:line:col (STYLE.md rule 9). */
    FUZZ_REQUIRE(err->pos.line >= 1 && err->pos.line <= max_line);
    FUZZ_REQUIRE(err->pos.col >= 1);
}

/* The parts of a scenario that a deep copy must reproduce. */
static void check_copy(const struct scenario *a, const struct scenario *b) {
    FUZZ_REQUIRE(a->nclients == b->nclients && a->nfaults == b->nfaults);
    FUZZ_REQUIRE(a->nprograms == b->nprograms && a->nexpects == b->nexpects);
    FUZZ_REQUIRE(a->nclients == 0 || memcmp(a->clients, b->clients, (size_t)a->nclients * sizeof *a->clients) == 0);
    FUZZ_REQUIRE(a->nfaults == 0 || memcmp(a->faults, b->faults, (size_t)a->nfaults * sizeof *a->faults) == 0);
    FUZZ_REQUIRE(a->nprograms == 0 ||
                 memcmp(a->programs, b->programs, (size_t)a->nprograms * sizeof *a->programs) == 0);
    FUZZ_REQUIRE(strcmp(a->algo, b->algo) == 0 && a->duration_ns == b->duration_ns);
}

/* Try one line of the input as a --set argument on s. */
static void try_set(struct scenario *s, const char *kv) {
    static struct scenario before; /* large: not on the stack */
    struct scn_error err;
    memset(&err, 0, sizeof err);
    memcpy(&before, s, sizeof before);
    int rc = scenario_set(s, kv, &err);
    FUZZ_REQUIRE(rc == 0 || rc == LSIM_EPARSE || rc == LSIM_ENOMEM || rc == LSIM_EBAD_VALUE ||
                 rc == LSIM_EUNKNOWN_OPTION || rc == LSIM_EUSAGE);
    if (rc == 0) {
        fuzz_check_scenario(s);
        return;
    }
    /* "A failed --set changes nothing; its error reads --set:1:COL". */
    FUZZ_REQUIRE(memcmp(&before, s, sizeof before) == 0);
    FUZZ_REQUIRE(FUZZ_TERMINATED(err.msg) && err.msg[0] != '\0');
    FUZZ_REQUIRE(err.pos.line == 1 && err.pos.col >= 1);
    FUZZ_REQUIRE((size_t)err.pos.col <= strlen(kv) + 2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct scenario s, copy;
    struct scn_error err;
    memset(&err, 0, sizeof err);
    scenario_init(&s);
    int rc = scenario_parse(&s, "fuzz.lsim", (const char *)data, size, &err);
    FUZZ_REQUIRE(rc == 0 || rc == LSIM_EPARSE || rc == LSIM_ENOMEM || rc == LSIM_EBAD_VALUE ||
                 rc == LSIM_EUNKNOWN_OPTION || rc == LSIM_EUSAGE);
    if (rc == 0) {
        fuzz_check_scenario(&s);
        FUZZ_REQUIRE(scenario_copy(&copy, &s) == 0);
        check_copy(&s, &copy);
        scenario_close(&copy);
    } else {
        check_error(&err, count_lines(data, size));
        /* A failed parse leaves s initialised but partial; start --set
         * from the defaults instead. */
        scenario_close(&s);
        scenario_init(&s);
    }

    /* The first lines of the input, each as a NUL-terminated --set argument. */
    char *kv = malloc(FUZZ_SET_MAX + 1);
    FUZZ_REQUIRE(kv != NULL);
    size_t at = 0;
    for (int n = 0; n < FUZZ_MAX_SETS && at < size; n++) {
        const uint8_t *nl = memchr(data + at, '\n', size - at);
        size_t len = nl ? (size_t)(nl - (data + at)) : size - at;
        size_t take = len < FUZZ_SET_MAX ? len : FUZZ_SET_MAX;
        memcpy(kv, data + at, take);
        kv[take] = '\0'; /* a NUL inside the line ends the argument, as in argv */
        try_set(&s, kv);
        at += len + 1;
    }
    free(kv);
    scenario_close(&s);
    return 0;
}
