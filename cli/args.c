/* The command line's conventions, applied once for every command before its
 * own options are read (cli.h, cli_args_normalize): `--name=value` is
 * `--name value`; `-h`/`--help` anywhere before `--` prints the command's
 * help; `-q`/`--quiet` and `-v`/`--verbose` set cli_verbosity; `--` ends the
 * options, and a later argument that starts with '-' (a file named so) is
 * passed on as the path ./ARG so no command reads it as an option; -o,
 * --out and --output name the file a command writes, in every command. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The long options that take a value, every command's (the one list the
 * `--name=value` form is checked against). */
static const char *const with_value[] = {
        "algo",     "algos",      "at",    "bench-frames", "budget",       "context", "format", "from",        "golden",
        "height",   "jobs",       "out",   "output",       "png",          "purpose", "render", "repeat",      "scale",
        "scenario", "seed",       "seeds", "set",          "shard",        "shots",   "store",  "stuck-after", "svg",
        "time",     "time-limit", "to",    "trace",        "trace-format", "vary",    "width",
};

/* One name for the file a command writes: -o, --out and --output are the
 * same option everywhere, spelled as each command's own loop reads it. */
static const struct {
    const char *cmd, *spelling;
} output_option[] = {
        {"batch", "--out"}, {"sweep", "--out"}, {"merge", "--out"}, {"render", "-o"}, {"explore", "-o"},
};

static const char *output_spelling(const char *cmd, const char *a) {
    if (strcmp(a, "-o") != 0 && strcmp(a, "--out") != 0 && strcmp(a, "--output") != 0) return a;
    for (size_t i = 0; i < sizeof output_option / sizeof output_option[0]; i++)
        if (strcmp(output_option[i].cmd, cmd) == 0) return output_option[i].spelling;
    return a;
}

static int takes_value(const char *name, size_t len) {
    for (size_t i = 0; i < sizeof with_value / sizeof with_value[0]; i++)
        if (strlen(with_value[i]) == len && strncmp(with_value[i], name, len) == 0) return 1;
    return 0;
}

static char **kept; /* the normalized vector, freed at exit */
static char **owned;
static int nowned;

static void release(void) {
    for (int i = 0; i < nowned; i++) free(owned[i]);
    free(owned);
    free(kept);
}

static char *own(char *s) {
    if (s) owned[nowned++] = s;
    return s;
}

int cli_args_normalize(const char *cmd, const char *usage, int *argc, char ***argv, int *status) {
    int n = *argc;
    char **in = *argv;
    /* at most two out for one in, one string made per argument */
    kept = malloc(((size_t)2 * (size_t)n + 1) * sizeof *kept);
    owned = malloc(((size_t)n + 1) * sizeof *owned);
    if (!kept || !owned) {
        free(kept), free(owned), kept = NULL, owned = NULL;
        *status = cli_fail(LSIM_ENOMEM, "");
        return -1;
    }
    atexit(release);
    int m = 0, options = 1;
    for (int i = 0; i < n; i++) {
        char *a = in[i];
        if (!options) {
            if (a[0] == '-' && a[1]) { /* a file named -x.lsim: ./-x.lsim */
                char *p = own(malloc(strlen(a) + 3));
                if (!p) {
                    *status = cli_fail(LSIM_ENOMEM, "");
                    return -1;
                }
                strcpy(p, "./");
                strcpy(p + 2, a);
                a = p;
            }
            kept[m++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            options = 0;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage, stdout);
            *status = 0;
            return -1;
        }
        if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            cli_verbosity = -1;
            if (strcmp(cmd, "check") == 0) kept[m++] = "--quiet"; /* check's own --quiet as well */
            continue;
        }
        if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            cli_verbosity = 1;
            continue;
        }
        const char *eq = a[0] == '-' && a[1] == '-' ? strchr(a, '=') : NULL;
        if (eq && eq > a + 2) {
            size_t len = (size_t)(eq - a - 2);
            if (!takes_value(a + 2, len)) {
                *status = cli_usage("%.*s takes no value (found '%s')", (int)(len + 2), a, a);
                return -1;
            }
            char *name = own(malloc(len + 3));
            if (!name) {
                *status = cli_fail(LSIM_ENOMEM, "");
                return -1;
            }
            memcpy(name, a, len + 2);
            name[len + 2] = 0;
            kept[m++] = (char *)output_spelling(cmd, name);
            kept[m++] = (char *)eq + 1;
            continue;
        }
        kept[m++] = (char *)output_spelling(cmd, a);
    }
    kept[m] = NULL;
    *argc = m;
    *argv = kept;
    return 0;
}
