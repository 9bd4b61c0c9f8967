/* Shared command-line helpers (cli.h): messages and exit statuses, the
 * run options, strict numbers, terminal facts, finding scenario files. */
#define _XOPEN_SOURCE 700 /* nftw */
#include "cli.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pool.h"

const char *const cli_prog = "locksim";

int cli_verbosity; /* set by cli_args_normalize (cli/args.c); here, where fanout.c and the fuzz targets find it */

int cli_usage(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", cli_prog);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(see `locksim help`)\n");
    va_end(ap);
    return cli_exit(LSIM_EUSAGE);
}

int cli_fail(int code, const char *msg) {
    /* Messages with a place (file:line:col: ...) stand alone, as compilers print them. */
    if (!msg[0]) msg = lsim_strerror(code);
    size_t colon = strcspn(msg, ":"), space = strcspn(msg, " ");
    int placed = msg[colon] == ':' && colon < space && msg[0] != '-';
    if (placed) fprintf(stderr, "%s\n", msg);
    else fprintf(stderr, "%s: %s\n", cli_prog, msg);
    return cli_exit(code);
}

static long armed_s; /* the limit cli_time_limit_arm set, for its message */

static void on_time_limit(int sig) {
    (void)sig;
    char msg[200];
    int n = snprintf(msg, sizeof msg,
                     "locksim: the run did not finish within its time limit of %ld s (a plugin "
                     "callback that never returns?); nothing was decided (--time-limit SECONDS changes it)\n",
                     armed_s);
    if (n > 0 && write(2, msg, (size_t)n) < 0) _exit(70);
    _exit(70);
}

void cli_time_limit_catch(int die) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = die ? SIG_DFL : on_time_limit;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
}

void cli_time_limit_start(const struct cli_runopts *o) {
    long s = o && o->time_limit_s ? o->time_limit_s : CLI_TIME_LIMIT_S;
    if (s < 0) return;
    armed_s = s;
    alarm((unsigned)s);
}

void cli_time_limit_arm(const struct cli_runopts *o, int die) {
    cli_time_limit_catch(die);
    cli_time_limit_start(o);
}

void cli_time_limit_disarm(void) { alarm(0); }

static volatile sig_atomic_t stop_flag;
static struct sigaction stop_old[POOL_NSTOP];

static void on_stop_signal(int sig) {
    (void)sig;
    stop_flag = 1;
}

volatile sig_atomic_t *cli_stop_catch(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal; /* no SA_RESTART: a pool's poll returns at once */
    sigemptyset(&sa.sa_mask);
    stop_flag = 0;
    for (int k = 0; k < POOL_NSTOP; k++) sigaction(pool_stop_signals[k], &sa, &stop_old[k]);
    return &stop_flag;
}

void cli_stop_release(void) {
    for (int k = 0; k < POOL_NSTOP; k++) sigaction(pool_stop_signals[k], &stop_old[k], NULL);
}

enum { OPT_SEED = 0x100, OPT_SET, OPT_ALGO, OPT_TIME_LIMIT, OPT_NO_COLOR };

/* The options every command shares; the run options only where ro is set. */
static const struct option common_options[] = {
        {"help", no_argument, NULL, 'h'},
        {"no-color", no_argument, NULL, OPT_NO_COLOR},
        {"seed", required_argument, NULL, OPT_SEED},
        {"set", required_argument, NULL, OPT_SET},
        {"algo", required_argument, NULL, OPT_ALGO},
        {"time-limit", required_argument, NULL, OPT_TIME_LIMIT},
        {NULL, 0, NULL, 0},
};
#define COMMON_NO_RUN 2 /* the entries before the run options */

/* The tables (NULL-ended) and the shared options (the run options when
 * runs) joined into out (CLI_MAX_OPTIONS entries, ended by a zero entry);
 * shorts (may be NULL) receives "-:h" and the one-letter vals (-o).
 * Returns the entries, or -1 when they do not fit. */
static int join_tables(struct option *out, char *shorts, const struct option *const *tables, int runs) {
    int n = 0, ns = shorts ? snprintf(shorts, CLI_MAX_OPTIONS * 2 + 4, "-:h") : 0;
    for (int t = 0; tables && tables[t]; t++)
        for (const struct option *o = tables[t]; o->name; o++) {
            if (n + 1 >= CLI_MAX_OPTIONS) return -1;
            out[n++] = *o;
            if (shorts && o->val < 0x80 && o->val > ' ' && !strchr(shorts + 3, o->val)) { /* a letter: -o */
                shorts[ns++] = (char)o->val;
                if (o->has_arg == required_argument) shorts[ns++] = ':';
                shorts[ns] = '\0';
            }
        }
    int ncommon = runs ? (int)(sizeof common_options / sizeof *common_options) - 1 : COMMON_NO_RUN;
    if (n + ncommon >= CLI_MAX_OPTIONS) return -1;
    for (int k = 0; k < ncommon; k++) out[n++] = common_options[k];
    memset(&out[n], 0, sizeof out[n]);
    return n;
}

int cli_getopt_init_tables(struct cli_getopt *g, const char *cmd, const char *usage, struct cli_runopts *ro,
                           const struct option *const *tables, int argc, char **argv) {
    memset(g, 0, sizeof *g);
    g->cmd = cmd, g->usage = usage, g->ro = ro;
    if (join_tables(g->table, g->shorts, tables, ro != NULL) < 0)
        return cli_fail(LSIM_EINTERNAL, "too many options in one table");
    /* getopt_long reads argv[1..] and permutes: a copy with the command as argv[0]. */
    g->argv = malloc(((size_t)argc + 2) * sizeof *g->argv);
    if (!g->argv) return cli_fail(LSIM_ENOMEM, "");
    g->argv[0] = (char *)cmd;
    for (int i = 0; i < argc; i++) g->argv[i + 1] = argv[i];
    g->argv[argc + 1] = NULL;
    g->argc = argc + 1;
    optind = 0; /* GNU: a full reinitialisation, as main dispatches commands */
    opterr = 0;
    return 0;
}

int cli_getopt_init(struct cli_getopt *g, const char *cmd, const char *usage, struct cli_runopts *ro,
                    const struct option *own, int argc, char **argv) {
    const struct option *const tables[] = {own, NULL};
    return cli_getopt_init_tables(g, cmd, usage, ro, tables, argc, argv);
}

const struct option *cli_option_find(const struct option *const *tables, const char *name, size_t len) {
    const struct option *exact = NULL, *found = NULL;
    int nfound = 0;
    /* the tables, then the shared options (all of them: a command without
     * the run options refuses those when it reads its arguments) */
    int ntables = 0;
    while (tables && tables[ntables]) ntables++;
    for (int t = 0; t <= ntables; t++)
        for (const struct option *o = t < ntables ? tables[t] : common_options; o->name; o++) {
            if (strncmp(o->name, name, len) != 0) continue;
            if (strlen(o->name) == len && !exact) exact = o;
            /* spellings of one option (--out, --output) are one match, as getopt_long counts */
            if (!found || found->val != o->val || found->has_arg != o->has_arg) nfound++;
            found = o;
        }
    return exact ? exact : nfound == 1 ? found : NULL;
}

void cli_getopt_close(struct cli_getopt *g) {
    free(g->argv);
    g->argv = NULL;
}

static int take_runopt(struct cli_runopts *o, int c, const char *v) {
    if (c == OPT_TIME_LIMIT) {
        long s;
        if (cli_parse_int(v, 0, 86400 * 365, &s) != 0)
            return cli_usage("--time-limit takes whole seconds (0 = no limit), not '%s'", v);
        o->time_limit_s = s ? s : -1;
    } else if (c == OPT_SEED) o->seed = v;
    else if (c == OPT_ALGO) o->algo = v;
    else {
        if (o->nsets == CLI_MAX_SETS) return cli_usage("too many --set options (at most %d)", CLI_MAX_SETS);
        o->sets[o->nsets++] = v;
    }
    return 0;
}

int cli_getopt_next(struct cli_getopt *g) {
    for (;;) {
        /* "-": arguments come back in order (code 1); ":": a missing value is ':' */
        int c = getopt_long(g->argc, g->argv, g->shorts, g->table, NULL);
        g->arg = optarg;
        const char *seen = optind > 0 && optind <= g->argc ? g->argv[optind - 1] : "";
        switch (c) {
        case -1: return CLI_OPT_END;
        case 1: return CLI_OPT_ARG;
        case 'h':
            fputs(g->usage, stdout);
            g->status = -1;
            return CLI_OPT_STOP;
        case ':': g->status = cli_usage("%s needs a value", seen); return CLI_OPT_STOP;
        case '?':
            if (optopt > 0 && optopt < 0x100) /* a short one; a file named -x.lsim comes after -- */
                g->status = cli_usage("unknown option '-%c' for %s (a file whose name starts with '-' goes after --)",
                                      optopt, g->cmd);
            else g->status = cli_usage("unknown or incomplete option '%s' for %s", seen, g->cmd);
            return CLI_OPT_STOP;
        case OPT_NO_COLOR: g->no_color = 1; continue;
        case OPT_SEED:
        case OPT_SET:
        case OPT_ALGO:
        case OPT_TIME_LIMIT:
            if ((g->status = take_runopt(g->ro, c, optarg)) != 0) return CLI_OPT_STOP;
            continue;
        default: return c;
        }
    }
}

int cli_parse_pixels(const char *opt, const char *v, long lo, long hi, long *out) {
    if (cli_parse_int(v, lo, hi, out) == 0) return 0;
    return cli_usage("%s takes a whole number of pixels from %ld to %ld, not '%s'", opt, lo, hi, v);
}

int cli_parse_int(const char *s, long lo, long hi, long *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

#define F_(id) REPORT_FMT_BIT(id)
static const struct {
    const char *cmd;
    unsigned formats;
} cmd_formats[] = {
        {"run", F_(TEXT) | F_(JSONL)},
        {"check", F_(TEXT) | F_(JSONL) | F_(TAP) | F_(JUNIT)},
        {"check-trace", F_(TEXT) | F_(JSONL)},
        {"matrix", F_(TEXT) | F_(JSONL) | F_(CSV)},
        {"batch", F_(TEXT) | F_(JSONL) | F_(CSV) | F_(JUNIT) | F_(TAP)},
        {"sweep", F_(CSV) | F_(JSONL)},
        {"merge", F_(TEXT) | F_(JSONL) | F_(CSV) | F_(JUNIT) | F_(TAP)}, /* as the shards' command offers */
        {"render", F_(PNG) | F_(SVG)},
};
#undef F_

unsigned cli_formats(const char *cmd) {
    for (size_t i = 0; i < sizeof cmd_formats / sizeof *cmd_formats; i++)
        if (strcmp(cmd, cmd_formats[i].cmd) == 0) return cmd_formats[i].formats;
    return 0;
}

int cli_format(const char *cmd, const char *name, enum report_format *out) {
    char err[300];
    if (report_format_parse(name, cli_formats(cmd), out, err, sizeof err) != 0) return cli_usage("%s", err);
    return 0;
}

int cli_print_formats(void) {
    printf("Output formats (--format NAME; the alias is the same format):\n\n");
    for (int f = 0; f < REPORT_FMT_COUNT; f++) {
        const char *alias = report_format_alias((enum report_format)f);
        printf("  %-6s %-7s %s\n         offered by:", report_format_name((enum report_format)f), alias ? alias : "",
               report_format_what((enum report_format)f));
        for (size_t i = 0; i < sizeof cmd_formats / sizeof *cmd_formats; i++)
            if (cmd_formats[i].formats & (1u << f)) printf(" %s", cmd_formats[i].cmd);
        putchar('\n');
    }
    return 0;
}

int cli_want_color(int no_color_flag) {
    if (no_color_flag) return 0;
    const char *nc = getenv("NO_COLOR"), *term = getenv("TERM");
    if (nc && nc[0]) return 0;
    if (term && strcmp(term, "dumb") == 0) return 0;
    return isatty(STDOUT_FILENO);
}

int cli_term_width(void) {
    const char *c = getenv("COLUMNS");
    long w = 0;
    if (!c || cli_parse_int(c, 40, 1000, &w) != 0) {
        struct winsize ws;
        w = isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 ? ws.ws_col : 0;
    }
    return w >= 40 && w <= 1000 ? (int)w : 100;
}

const char *cli_scenario_dir(char *buf, size_t n) {
    struct stat st;
    if (stat("scenarios", &st) == 0 && S_ISDIR(st.st_mode)) return "scenarios";
    char exe[4096];
    ssize_t l = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (l > 0) {
        exe[l] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            snprintf(buf, n, "%s/../scenarios", exe);
            if (stat(buf, &st) == 0 && S_ISDIR(st.st_mode)) return buf;
        }
    }
    return "scenarios";
}

/* nftw has no user argument: the walk's state lives here for its duration. */
static struct {
    char **v;
    int n, cap, oom;
    size_t strip; /* > 0: names start DIR/./ and lose the "/." after DIR's strip bytes */
} found;

static int on_file(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)ftw;
    size_t l = strlen(path);
    /* Regular files only: a FIFO named x.lsim would block its reader. */
    if (flag != FTW_F || !S_ISREG(st->st_mode) || l < 6 || strcmp(path + l - 5, ".lsim") != 0) return 0;
    if (found.n == found.cap) {
        int cap = found.cap ? found.cap * 2 : 64;
        char **v = realloc(found.v, (size_t)cap * sizeof *v);
        if (!v) return found.oom = 1;
        found.v = v;
        found.cap = cap;
    }
    if (!(found.v[found.n] = strdup(path))) return found.oom = 1;
    if (found.strip && strncmp(path + found.strip, "/./", 3) == 0)
        memmove(found.v[found.n] + found.strip, found.v[found.n] + found.strip + 2, l - found.strip - 1);
    found.n++;
    return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int cli_find_scenarios(const char *dir, char ***out, int *n, char *err, size_t errlen) {
    memset(&found, 0, sizeof found);
    /* FTW_PHYS: links below are not followed (no cycles), but the folder
     * named may itself be a symlink: walk "DIR/." then, and drop the "/."
     * from the names found. */
    struct stat st;
    char base[4096], top[4100];
    snprintf(base, sizeof base, "%s", dir);
    for (size_t l = strlen(base); l > 1 && base[l - 1] == '/'; l--) base[l - 1] = '\0';
    int is_link = lstat(base, &st) == 0 && S_ISLNK(st.st_mode);
    snprintf(top, sizeof top, is_link ? "%s/." : "%s", base);
    found.strip = is_link ? strlen(base) : 0;
    int rc = nftw(top, on_file, 16, FTW_PHYS);
    if (found.oom) rc = LSIM_ENOMEM, snprintf(err, errlen, "out of memory listing '%s'", dir);
    else if (rc != 0)
        rc = lsim_errno_code(errno, LSIM_ENOINPUT),
        snprintf(err, errlen, "cannot read directory '%s': %s", dir, strerror(errno));
    if (rc) {
        for (int i = 0; i < found.n; i++) free(found.v[i]);
        free(found.v);
        return rc;
    }
    if (found.n) qsort(found.v, (size_t)found.n, sizeof *found.v, by_name);
    *out = found.v;
    *n = found.n;
    return LSIM_OK;
}

int cli_seeds_check(struct cli_seeds *s, char *err, size_t errlen) {
    s->count = 0;
    for (int j = 0; j < s->n; j++) {
        if (s->hi[j] < s->lo[j]) {
            snprintf(err, errlen, "%llu..%llu: the last seed is below the first", s->lo[j], s->hi[j]);
            return -1;
        }
        for (int i = 0; i < j; i++) /* quadratic, at most CLI_MAX_SEED_ITEMS items */
            if (s->lo[i] <= s->hi[j] && s->lo[j] <= s->hi[i]) {
                snprintf(err, errlen, "seed %llu is listed twice", s->lo[i] > s->lo[j] ? s->lo[i] : s->lo[j]);
                return -1;
            }
        unsigned long long span = s->hi[j] - s->lo[j];
        if (span == ULLONG_MAX || __builtin_add_overflow(s->count, span + 1, &s->count))
            s->count = ULLONG_MAX; /* more than any run list holds: its reader says so */
    }
    return 0;
}

int cli_parse_seeds(const char *text, struct cli_seeds *out, char *err, size_t errlen) {
    out->n = 0;
    for (const char *p = text;;) {
        size_t l = strcspn(p, ",");
        char item[64], *dots;
        long a, z;
        if (l == 0) {
            snprintf(err, errlen, "--seeds has an empty item in '%s'; write N, A..B or a list: 1..3,7,10..12", text);
            return -1;
        }
        if (out->n == CLI_MAX_SEED_ITEMS) {
            snprintf(err, errlen, "--seeds lists more than %d items; a range A..B is one item", CLI_MAX_SEED_ITEMS);
            return -1;
        }
        snprintf(item, sizeof item, "%.*s", (int)l, p);
        if ((dots = strstr(item, "..")) != NULL) *dots = '\0';
        if (l >= sizeof item || cli_parse_int(item, 0, 0x7fffffffL, &a) != 0 ||
            cli_parse_int(dots ? dots + 2 : item, 0, 0x7fffffffL, &z) != 0 || z < a) {
            snprintf(err, errlen,
                     "--seeds takes seeds N or ranges A..B (A <= B, from 0 to 2147483647), alone or in a list "
                     "(1..3,7,10..12); '%.*s' is neither",
                     (int)(l < 40 ? l : 40), p);
            return -1;
        }
        out->lo[out->n] = (unsigned long long)a;
        out->hi[out->n++] = (unsigned long long)z;
        if (!p[l]) break;
        p += l + 1;
    }
    char why[100];
    if (cli_seeds_check(out, why, sizeof why) != 0) {
        snprintf(err, errlen, "--seeds %.200s: %s", text, why);
        return -1;
    }
    return 0;
}

unsigned long long cli_seeds_at(const struct cli_seeds *s, unsigned long long k) {
    for (int i = 0; i < s->n; i++) {
        unsigned long long len = s->hi[i] - s->lo[i] + 1;
        if (k < len) return s->lo[i] + k;
        k -= len;
    }
    return 0; /* k past the list: a programmer's error */
}

void cli_seeds_format(char *buf, size_t n, const struct cli_seeds *s) {
    size_t l = 0;
    buf[0] = '\0';
    if (s->n == 1) {
        snprintf(buf, n, "%llu..%llu", s->lo[0], s->hi[0]);
        return;
    }
    for (int i = 0; i < s->n && l < n; i++) {
        char item[48];
        if (s->lo[i] == s->hi[i]) snprintf(item, sizeof item, "%s%llu", i ? "," : "", s->lo[i]);
        else snprintf(item, sizeof item, "%s%llu..%llu", i ? "," : "", s->lo[i], s->hi[i]);
        if (l + strlen(item) + 4 > n) { /* room for "..." and its NUL */
            snprintf(buf + l, n - l, "...");
            return;
        }
        l += (size_t)snprintf(buf + l, n - l, "%s", item);
    }
}

/* ---- Paths and algorithm lists shared by check, batch and matrix ------------- */

static int paths_push(struct cli_paths *l, const char *path) {
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 64;
        char **v = realloc(l->v, (size_t)cap * sizeof *v);
        if (!v) return LSIM_ENOMEM;
        l->v = v;
        l->cap = cap;
    }
    if (!(l->v[l->n] = strdup(path))) return LSIM_ENOMEM;
    l->n++;
    return 0;
}

int cli_paths_add(struct cli_paths *l, const char *arg, char *err, size_t errlen) {
    struct stat st;
    int rc;
    if (strcmp(arg, "-") != 0 && stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) {
        char **v;
        int n;
        rc = cli_find_scenarios(arg, &v, &n, err, errlen);
        if (rc) return rc;
        if (n == 0) {
            free(v);
            snprintf(err, errlen, "no *.lsim scenario files below '%s'", arg);
            return LSIM_ENOINPUT;
        }
        for (int i = 0; i < n && rc == 0; i++) rc = paths_push(l, v[i]);
        for (int i = 0; i < n; i++) free(v[i]);
        free(v);
    } else rc = paths_push(l, arg);
    if (rc) snprintf(err, errlen, "%s", lsim_strerror(rc));
    return rc;
}

void cli_paths_free(struct cli_paths *l) {
    for (int i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

int cli_parse_algos(const char *algos, const struct lock_algo **list, char **names, int max, int *n) {
    *n = 0;
    if (strcmp(algos, "all") == 0) {
        for (int i = 0; lock_algo_at(i) && *n < max; i++) {
            list[*n] = lock_algo_at(i);
            if (names && !(names[*n] = strdup(list[*n]->name))) return cli_fail(LSIM_ENOMEM, "");
            (*n)++;
        }
        return 0;
    }
    const char *p = algos;
    for (;;) {
        size_t l = strcspn(p, ",");
        if (l == 0) return cli_usage("--algos has an empty name in '%s'; write NAME,NAME,... or all", algos);
        if (*n == max) return cli_usage("too many algorithms (at most %d)", max);
        char name[4096], err[700];
        snprintf(name, sizeof name, "%.*s", (int)l, p);
        int rc = run_resolve_algo(name, &list[*n], err, sizeof err);
        if (rc) return cli_fail(rc, err);
        if (names && !(names[*n] = strdup(name))) return cli_fail(LSIM_ENOMEM, "");
        (*n)++;
        if (!p[l]) return 0;
        p += l + 1;
    }
}
