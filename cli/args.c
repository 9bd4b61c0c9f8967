/* The command line's conventions, applied once for every command before its
 * own options are read (cli.h, cli_args_normalize), with what an option is
 * taken from the command's own tables (cli_tables_CMD; no second list here):
 * `--name=value` is `--name value`; an abbreviation (--form) is written out;
 * `-h`/`--help` anywhere before `--` prints the command's help;
 * `-q`/`--quiet` and `-v`/`--verbose` set cli_verbosity; `--` ends the
 * options, and a later argument that starts with '-' (a file named so) is
 * passed on as the path ./ARG so no command reads it as an option. -o,
 * --out and --output name the file a command writes, in every command that
 * writes one (a table with only --output takes --out as its abbreviation). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The short option -X of these tables (its val is the letter), or NULL. */
static const struct option *short_option(const struct option *const *tables, char x) {
    for (int t = 0; tables && tables[t]; t++)
        for (const struct option *o = tables[t]; o->name; o++)
            if (o->val == x) return o;
    return NULL;
}

static char **kept; /* the normalized vector, freed at exit */
static char **owned;
static int nowned;

static void release(void) {
    for (int i = 0; i < nowned; i++) free(owned[i]);
    free(owned);
    free(kept);
    owned = NULL, kept = NULL, nowned = 0;
}

static char *own(char *s) {
    if (s) owned[nowned++] = s;
    return s;
}

int cli_args_normalize(const struct cli_command *cmd, int *argc, char ***argv, int *status) {
    int n = *argc;
    char **in = *argv;
    const char *usage = cmd->usage == cli_usage_main ? "" : cmd->usage;
    static int registered;
    if (!registered) atexit(release), registered = 1;
    release(); /* a second call (a test's) replaces the first's vector */
    /* at most two out for one in, one string made per argument */
    kept = malloc(((size_t)2 * (size_t)n + 1) * sizeof *kept);
    owned = malloc(((size_t)n + 1) * sizeof *owned);
    if (!kept || !owned) {
        free(kept), free(owned), kept = NULL, owned = NULL;
        *status = cli_fail(LSIM_ENOMEM, "");
        return -1;
    }
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
        const struct option *o = NULL;
        const char *eq = NULL;
        if (a[0] == '-' && a[1] == '-' && a[2]) { /* --name or --name=value: the option of the tables */
            eq = strchr(a, '=');
            size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
            if ((o = cli_option_find(cmd->tables, a + 2, len)) != NULL && (strlen(o->name) != len || eq)) {
                char *name = own(malloc(strlen(o->name) + 3)); /* written out: --out for --ou */
                if (!name) {
                    *status = cli_fail(LSIM_ENOMEM, "");
                    return -1;
                }
                strcpy(name, "--");
                strcpy(name + 2, o->name);
                a = name;
            }
        } else if (a[0] == '-' && a[1] && !a[2]) o = short_option(cmd->tables, a[1]);
        if (eq && o && o->has_arg == no_argument) {
            *status = cli_usage("%s takes no value (found '%s')", a, in[i]);
            return -1;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage, stdout);
            *status = 0;
            return -1;
        }
        if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            cli_verbosity = -1;
            if (strcmp(cmd->name, "check") == 0) kept[m++] = "--quiet"; /* check's own --quiet as well */
            continue;
        }
        if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            cli_verbosity = 1;
            continue;
        }
        kept[m++] = a;
        if (eq && o) kept[m++] = (char *)eq + 1;
        else if (o && o->has_arg == required_argument && i + 1 < n)
            kept[m++] = in[++i]; /* its value, whatever it looks like (`--out -x`) */
    }
    kept[m] = NULL;
    *argc = m;
    *argv = kept;
    return 0;
}
