/* The shard file format (cli/shard.h, docs/regression.md "Past one
 * machine"): its writer, used by batch and sweep under --shard K/N, and its
 * strict reader, used by `locksim merge` (cli/cmd_merge.c). */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json_read.h"
#include "shard.h"

#define SHARD_MAX_PATH 4096 /* a file name, an --algos name, a --set */

/* ---- Writing ------------------------------------------------------------------ */

/* Options whose value merge gives itself (or that do not change the list). */
static int dropped_opt(const char *a) {
    static const char *const dropped[] = {"--shard", "--jobs", "--format", "-o", "--out", "--output", "--svg", "--png"};
    for (size_t k = 0; k < sizeof dropped / sizeof *dropped; k++)
        if (strcmp(a, dropped[k]) == 0) return 1;
    return 0;
}

static void str_array(FILE *out, const char *key, const char *const *v, int n) {
    fprintf(out, ",\"%s\":[", key);
    for (int i = 0; i < n; i++) {
        if (i) fputc(',', out);
        report_json_str(out, v[i]);
    }
    fputc(']', out);
}

static void str_or_null(FILE *out, const char *key, const char *v) {
    fprintf(out, ",\"%s\":", key);
    if (v) report_json_str(out, v);
    else fputs("null", out);
}

void shard_write_header(FILE *out, const char *cmd, int argc, char **argv, const struct fanout *f,
                        const struct fanout_axis *ax, int naxes) {
    size_t lo, hi;
    fanout_range(f, &lo, &hi);
    fprintf(out,
            "{\"locksim_shard\":%d,\"command\":\"%s\",\"shard\":%d,\"of\":%d,\"runs\":%zu,\"first\":%zu,\"end\":%zu",
            SHARD_FORMAT, cmd, f->shard_k, f->shard_n, fanout_total(f), lo, hi);
    str_or_null(out, "build", "locksim " LOCKSIM_VERSION);
    str_array(out, "files", (const char *const *)f->files, f->nfiles);
    str_array(out, "algos", (const char *const *)f->algo_name, f->nalgos);
    str_array(out, "algo_names", f->algo_reg, f->nalgos);
    if (!f->has_seeds) fputs(",\"seeds\":null", out);
    else if (f->seeds->n == 1) fprintf(out, ",\"seeds\":[%llu,%llu]", f->seeds->lo[0], f->seeds->hi[0]);
    else
        for (int k = 0; k < f->seeds->n; k++)
            fprintf(out, "%s%llu,%llu]%s", k ? ",[" : ",\"seeds\":[[", f->seeds->lo[k], f->seeds->hi[k],
                    k + 1 == f->seeds->n ? "]" : "");
    str_or_null(out, "seed", f->seed);
    str_or_null(out, "algo", f->algo_default);
    str_array(out, "sets", f->sets, f->nsets);
    fputs(",\"vary\":[", out);
    for (int k = 0; k < naxes; k++) {
        fputs(k ? ",{\"key\":" : "{\"key\":", out);
        report_json_str(out, ax[k].key);
        str_array(out, "values", (const char *const *)ax[k].vals, ax[k].n);
        fputc('}', out);
    }
    fputs("],\"args\":[", out);
    int n = 0;
    for (int i = 0; i < argc; i++) {
        if (dropped_opt(argv[i]) && i + 1 < argc) {
            i++;
            continue;
        }
        if (n++) fputc(',', out);
        report_json_str(out, argv[i]);
    }
    fputs("]}\n", out);
}

void shard_write_record(FILE *out, size_t i, const struct report_summary *s, const char *const *sets, int nsets) {
    char *obj = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&obj, &len);
    if (m) {
        report_json_summary(m, s, sets, nsets);
        fclose(m);
    }
    /* {"run":I, then the summary's fields without their braces. A failed
     * memory stream leaves the record without them: the reader refuses it. */
    fprintf(out, "{\"run\":%zu", i);
    if (obj && len > 3) fprintf(out, ",%.*s", (int)(len - 3), obj + 1);
    free(obj);
    if (s->failures && s->failures[0]) {
        fputs(",\"failures\":", out);
        report_json_str(out, s->failures);
    }
    fputs("}\n", out);
}

/* ---- Reading ------------------------------------------------------------------ */

struct rdr {
    struct json_rd j;
    const char *path;
    size_t line;
    char err[600];
};

/* file:line:col: message, and the exit status of a malformed input. */
static int bad(struct rdr *r) {
    fprintf(stderr, "%s:%zu:%ld: %s\n", r->path, r->line, json_col(&r->j), r->err);
    return cli_exit(LSIM_EPARSE);
}

static void free_strs(char **v, int n) {
    for (int i = 0; i < n; i++) free(v[i]);
    free(v);
}

void shard_free(struct shard *s) {
    free_strs(s->files, s->nfiles);
    free_strs(s->algos, s->nalgos);
    free_strs(s->algo_names, s->nalgo_names);
    free(s->seed);
    free(s->algo);
    free_strs(s->sets, s->nsets);
    for (int k = 0; k < FANOUT_MAX_AXES; k++) fanout_axis_free(&s->axes[k]);
    free_strs(s->args, s->nargs);
    for (size_t i = 0; i < s->nsums; i++) report_summary_close(&s->sums[i]);
    free(s->sums);
    memset(s, 0, sizeof *s);
}

/* A string of at most SHARD_MAX_PATH bytes, owned by *out. */
static int owned_str(struct json_rd *j, const char *what, char **out) {
    size_t len;
    if (json_str(j, what, &len) != 0) return -1;
    if (len > SHARD_MAX_PATH) return json_fail(j, "\"%s\" is longer than %d bytes", what, SHARD_MAX_PATH);
    if (!(*out = strdup(j->sbuf))) return json_fail(j, "out of memory");
    return 0;
}

/* ["...", ...] of at most max strings; *n counts them (each owned). */
static int str_list(struct json_rd *j, const char *what, int max, char ***v, int *n) {
    if (!json_take(j, '[')) return json_fail(j, "\"%s\": expected an array of strings", what);
    if (json_take(j, ']')) return 0;
    for (;;) {
        if (*n == max) return json_fail(j, "\"%s\": more than %d entries", what, max);
        char **nv = realloc(*v, (size_t)(*n + 1) * sizeof *nv);
        if (!nv) return json_fail(j, "out of memory");
        *v = nv;
        if (owned_str(j, what, &(*v)[*n]) != 0) return -1;
        (*n)++;
        int more = json_next(j, ']', what);
        if (more <= 0) return more;
    }
}

static int str_or_null_in(struct json_rd *j, const char *what, char **out) {
    return json_null(j) ? 0 : owned_str(j, what, out);
}

/* "vary":[{"key":K,"values":[...]}...] */
static int vary_list(struct json_rd *j, struct shard *s) {
    if (!json_take(j, '[')) return json_fail(j, "\"vary\": expected an array");
    if (json_take(j, ']')) return 0;
    for (;;) {
        if (s->naxes == FANOUT_MAX_AXES) return json_fail(j, "\"vary\": more than %d axes", FANOUT_MAX_AXES);
        struct fanout_axis *a = &s->axes[s->naxes++];
        static const char *const keys[] = {"key", "values"};
        uint64_t seen = 0;
        if (!json_take(j, '{')) return json_fail(j, "\"vary\": expected an object");
        for (int more = 1; more > 0;) {
            if (json_key(j) != 0) return -1;
            int k = json_key_index(j, keys, 2, &seen);
            if (k < 0) return -1;
            if (k == 0 && json_str_into(j, "key", a->key, sizeof a->key) != 0) return -1;
            if (k == 1 && str_list(j, "values", 1000, &a->vals, &a->n) != 0) return -1;
            if ((more = json_next(j, '}', "an axis")) < 0) return -1;
        }
        if (json_missing(j, keys, 2, seen, 0, "an axis") != 0) return -1;
        if (!a->key[0] || a->n == 0) return json_fail(j, "\"vary\": an axis needs a key and at least one value");
        int more = json_next(j, ']', "\"vary\"");
        if (more <= 0) return more;
    }
}

/* One [FIRST,LAST] of "seeds" as item k of s->seeds. */
static int seed_pair(struct json_rd *j, struct shard *s, int k) {
    uint64_t lo, hi;
    if (!json_take(j, '[') || json_uint(j, "seeds", UINT64_MAX, &lo) != 0 || !json_take(j, ',') ||
        json_uint(j, "seeds", UINT64_MAX, &hi) != 0 || !json_take(j, ']'))
        return json_fail(j, "\"seeds\": expected [FIRST,LAST], a list of them, or null");
    s->seeds.lo[k] = lo;
    s->seeds.hi[k] = hi;
    s->seeds.n = k + 1;
    return 0;
}

/* "seeds": null, [FIRST,LAST] (one range, as --seeds A..B writes it) or
 * [[FIRST,LAST],...] (a list, at most CLI_MAX_SEED_ITEMS items, no seed
 * twice), as cli_parse_seeds would read them. */
static int seeds_in(struct json_rd *j, struct shard *s) {
    char why[100];
    if (json_null(j)) return 0;
    s->has_seeds = 1;
    const char *at = j->p;
    if (!json_take(j, '[')) return json_fail(j, "\"seeds\": expected [FIRST,LAST], a list of them, or null");
    if (json_peek(j) != '[') {
        j->p = at; /* one pair */
        if (seed_pair(j, s, 0) != 0) return -1;
    } else
        for (int k = 0;; k++) {
            if (k == CLI_MAX_SEED_ITEMS) return json_fail(j, "\"seeds\": more than %d items", CLI_MAX_SEED_ITEMS);
            if (seed_pair(j, s, k) != 0) return -1;
            int more = json_next(j, ']', "\"seeds\"");
            if (more < 0) return -1;
            if (more == 0) break;
        }
    if (cli_seeds_check(&s->seeds, why, sizeof why) != 0) return json_fail(j, "\"seeds\": %s", why);
    return 0;
}

static const char *const header_keys[] = {"locksim_shard", "command", "shard", "of",    "runs",       "first",
                                          "end",           "build",   "files", "algos", "algo_names", "seeds",
                                          "seed",          "algo",    "sets",  "vary",  "args"};
enum {
    H_FORMAT,
    H_COMMAND,
    H_SHARD,
    H_OF,
    H_RUNS,
    H_FIRST,
    H_END,
    H_BUILD,
    H_FILES,
    H_ALGOS,
    H_ALGO_NAMES,
    H_SEEDS,
    H_SEED,
    H_ALGO,
    H_SETS,
    H_VARY,
    H_ARGS,
    H_COUNT
};

static int header(struct json_rd *j, struct shard *s) {
    uint64_t seen = 0, u = 0;
    int64_t v = 0;
    if (!json_take(j, '{') || json_peek(j) != '"' || json_key(j) != 0 || strcmp(j->sbuf, "locksim_shard") != 0) {
        j->p = j->start;
        return json_fail(j, "not a shard file: its first line is not a locksim shard header "
                            "(make shards with `locksim batch ... --shard K/N --out FILE`)");
    }
    seen = 1;
    json_peek(j);
    const char *at = j->p;
    if (json_int(j, "locksim_shard", INT64_MIN, INT64_MAX, &v) != 0) return -1;
    if (v != SHARD_FORMAT && (j->p = at))
        return json_fail(j, "shard format %lld: this build reads format %d (make the shards again with it)",
                         (long long)v, SHARD_FORMAT);
    while (json_next(j, '}', "the header") > 0) {
        if (json_key(j) != 0) return -1;
        int k = json_key_index(j, header_keys, H_COUNT, &seen);
        int rc = 0;
        json_peek(j);
        const char *val = j->p; /* a value's errors point at its start */
        switch (k) {
        case H_COMMAND:
            rc = json_str_into(j, "command", s->cmd, sizeof s->cmd);
            if (!rc && strcmp(s->cmd, "batch") != 0 && strcmp(s->cmd, "sweep") != 0)
                rc = json_fail(j, "\"command\" is \"%s\", expected \"batch\" or \"sweep\"", s->cmd);
            break;
        case H_SHARD:
        case H_OF:
            rc = json_int(j, header_keys[k], 1, 1000000, &v);
            if (k == H_SHARD) s->k = (long)v;
            else s->n = (long)v;
            break;
        case H_RUNS:
        case H_FIRST:
        case H_END:
            rc = json_uint(j, header_keys[k], SIZE_MAX / 2, &u);
            *(k == H_RUNS ? &s->runs : k == H_FIRST ? &s->first : &s->end) = (size_t)u;
            break;
        case H_BUILD: rc = json_str_into(j, "build", s->build, sizeof s->build); break;
        case H_FILES: rc = str_list(j, "files", INT32_MAX / 2, &s->files, &s->nfiles); break;
        case H_ALGOS: rc = str_list(j, "algos", FANOUT_MAX_ALGOS, &s->algos, &s->nalgos); break;
        case H_ALGO_NAMES: rc = str_list(j, "algo_names", FANOUT_MAX_ALGOS, &s->algo_names, &s->nalgo_names); break;
        case H_SEEDS: rc = seeds_in(j, s); break;
        case H_SEED: rc = str_or_null_in(j, "seed", &s->seed); break;
        case H_ALGO: rc = str_or_null_in(j, "algo", &s->algo); break;
        case H_SETS: rc = str_list(j, "sets", 1024, &s->sets, &s->nsets); break;
        case H_VARY: rc = vary_list(j, s); break;
        case H_ARGS: rc = str_list(j, "args", 4096, &s->args, &s->nargs); break;
        default: return -1; /* unknown or repeated: the message is set */
        }
        if (rc) {
            j->p = val;
            return -1;
        }
    }
    if (json_missing(j, header_keys, H_COUNT, seen, 0, "the shard header") != 0 || json_eol(j) != 0) return -1;
    if (s->nalgo_names != s->nalgos) return json_fail(j, "\"algos\" and \"algo_names\" differ in length");
    for (int i = 0; i < s->nsets; i++)
        if (!strchr(s->sets[i], '=')) return json_fail(j, "\"sets\": '%.100s' is not KEY=VALUE", s->sets[i]);
    if (s->nfiles == 0) return json_fail(j, "\"files\": a run list needs at least one file");
    if (strcmp(s->cmd, "sweep") == 0 ? s->naxes == 0 || s->nfiles != 1 : s->naxes != 0)
        return json_fail(j, "a sweep varies one to %d keys over one file; a batch varies none", FANOUT_MAX_AXES);
    if (fanout_axes_cells(s->axes, s->naxes) < 0)
        return json_fail(j, "\"vary\": a grid of more than %d cells", FANOUT_MAX_CELLS);
    if (s->k > s->n || s->first > s->end || s->end > s->runs)
        return json_fail(j, "the shard header is inconsistent (shard %ld of %ld, runs %zu..%zu of %zu)", s->k, s->n,
                         s->first, s->end, s->runs);
    /* The list the header states must have the runs it claims. */
    size_t total = (size_t)s->nfiles, f = s->nalgos ? (size_t)s->nalgos : 1;
    int over = __builtin_mul_overflow(total, f, &total);
    if (s->has_seeds)
        over |= s->seeds.count >= SIZE_MAX || __builtin_mul_overflow(total, (size_t)s->seeds.count, &total);
    for (int k = 0; k < s->naxes; k++) over |= __builtin_mul_overflow(total, (size_t)s->axes[k].n, &total);
    if (over || total != s->runs)
        return json_fail(j, "\"runs\" is %zu, but the run list it states has %s%zu runs", s->runs,
                         over ? "more than " : "", over ? SIZE_MAX : total);
    return 0;
}

static const char *const record_fixed[] = {
        "run",        "scenario",   "title",       "algorithm", "seed",           "set",
        "outcome",    "events",     "truncated",   "expects",   "failed_expects", "headline",
        "trace_hash", "error_code", "exit_status", "error",     "failures",       "not_applicable"};
enum {
    R_RUN,
    R_SCENARIO,
    R_TITLE,
    R_ALGORITHM,
    R_SEED,
    R_SET,
    R_OUTCOME,
    R_EVENTS,
    R_TRUNCATED,
    R_EXPECTS,
    R_FAILED,
    R_HEADLINE,
    R_HASH,
    R_ERROR_CODE,
    R_EXIT,
    R_ERROR,
    R_FAILURES,
    R_NA,
    R_FIXED
};
_Static_assert(R_FIXED + SCN_M_COUNT <= 64, "a record's keys fit json_key_index's 64");

/* Set metric m of a report (the inverse of checker_metric, from the same map). */
static void metric_set(struct checker_report *r, enum scn_metric m, int64_t v) {
    switch (m) {
#define METRIC_SET_(e, field, word, shorthand, key, unit, desc) \
    case SCN_M_##e: r->field = v; break;
        METRIC_MAP(METRIC_SET_)
#undef METRIC_SET_
    case SCN_M_COUNT: break;
    }
}

/* "set":{KEY:VALUE,...}: must be the sets the list gives this run. */
static int record_sets(struct json_rd *j, const char *const *sets, int nsets) {
    if (!json_take(j, '{')) return json_fail(j, "\"set\": expected an object");
    int i = 0;
    if (json_take(j, '}')) goto done;
    for (int more = 1; more > 0; i++) {
        if (json_key(j) != 0) return -1;
        size_t kl = strlen(j->sbuf);
        int ok = i < nsets && strncmp(sets[i], j->sbuf, kl) == 0 && sets[i][kl] == '=';
        size_t len;
        if (json_str(j, "set", &len) != 0) return -1;
        if (!ok || strcmp(sets[i] + kl + 1, j->sbuf) != 0)
            return json_fail(j, "\"set\" differs from the --set values the header gives this run");
        if ((more = json_next(j, '}', "\"set\"")) < 0) return -1;
    }
done:
    return i == nsets ? 0 : json_fail(j, "\"set\" differs from the --set values the header gives this run");
}

/* One record line for run `want` of the list f. */
static int record(struct json_rd *j, const struct fanout *f, size_t want, struct report_summary *sum) {
    const char *keys[R_FIXED + SCN_M_COUNT];
    for (int k = 0; k < R_FIXED; k++) keys[k] = record_fixed[k];
    for (int m = 0; m < SCN_M_COUNT; m++) keys[R_FIXED + m] = metric_info((enum scn_metric)m)->key;
    int nkeys = R_FIXED + SCN_M_COUNT;
    uint64_t seen = 0, u = 0;
    int64_t v = 0;
    char word[16] = "";
    memset(sum, 0, sizeof *sum);
    if (!json_take(j, '{')) return json_fail(j, "expected a shard record object");
    for (int more = 1; more > 0;) {
        if (json_key(j) != 0) return -1;
        int k = json_key_index(j, keys, nkeys, &seen);
        int rc = 0;
        if (k < 0) return -1;
        json_peek(j);
        const char *val = j->p; /* a value's errors point at its start */
        if (k >= R_FIXED) {
            enum scn_metric m = (enum scn_metric)(k - R_FIXED);
            size_t len;
            if (metric_info(m)->unit != METRIC_UNIT_VERDICT) rc = json_int(j, keys[k], INT64_MIN, INT64_MAX, &v);
            else if (!(rc = json_str(j, keys[k], &len))) {
                v = -1;
                for (int x = SCN_VERDICT_SAFE; x <= SCN_VERDICT_STUCK; x++)
                    if (strcmp(j->sbuf, scn_verdict_name((enum scn_verdict)x)) == 0) v = x;
                if (v < 0) rc = json_fail(j, "\"%s\": unknown verdict \"%.40s\"", keys[k], j->sbuf);
            }
            if (!rc) metric_set(&sum->rep, m, v);
        } else switch (k) {
            case R_RUN:
                rc = json_uint(j, "run", SIZE_MAX / 2, &u);
                if (!rc && u != want)
                    rc = json_fail(j, "run %llu where run %zu comes next", (unsigned long long)u, want);
                break;
            case R_SCENARIO: {
                size_t len;
                rc = json_str(j, "scenario", &len);
                if (!rc && strcmp(j->sbuf, f->files[fanout_file(f, want)]) != 0)
                    rc = json_fail(j, "\"scenario\" is not the file the header's list gives run %zu", want);
                break;
            }
            case R_TITLE: rc = json_str_into(j, "title", sum->title, sizeof sum->title); break;
            case R_ALGORITHM: rc = json_str_into(j, "algorithm", sum->algo, sizeof sum->algo); break;
            case R_SEED: rc = json_uint(j, "seed", UINT64_MAX, &u), sum->seed = u; break;
            case R_SET: {
                const char *const *sets = f->sets;
                int nsets = f->nsets;
                if (f->cell_sets) {
                    sets = f->cell_sets + (size_t)fanout_cell(f, want) * (size_t)f->cell_nsets;
                    nsets = f->cell_nsets;
                }
                rc = record_sets(j, sets, nsets);
                break;
            }
            case R_OUTCOME: rc = json_str_into(j, "outcome", word, sizeof word); break;
            case R_EVENTS: rc = json_uint(j, "events", UINT64_MAX, &u), sum->events = u; break;
            case R_TRUNCATED: rc = json_bool(j, "truncated", &sum->truncated); break;
            case R_EXPECTS:
            case R_FAILED:
                rc = json_int(j, keys[k], 0, SCN_MAX_EXPECTS, &v);
                *(k == R_EXPECTS ? &sum->nexpects : &sum->failed) = (int)v;
                break;
            case R_HEADLINE: rc = json_str_into(j, "headline", sum->rep.headline, sizeof sum->rep.headline); break;
            case R_HASH: {
                char hex[17];
                char *end;
                rc = json_str_into(j, "trace_hash", hex, sizeof hex);
                if (!rc) sum->trace_hash = strtoull(hex, &end, 16);
                if (!rc && (strlen(hex) != 16 || *end || strspn(hex, "0123456789abcdef") != 16))
                    rc = json_fail(j, "\"trace_hash\": expected 16 lower-case hex digits");
                break;
            }
            case R_ERROR_CODE: {
                char name[32];
                rc = json_str_into(j, "error_code", name, sizeof name);
                if (!rc && ((sum->rc = lsim_errcode(name)) == LSIM_OK))
                    rc = json_fail(j, "\"error_code\": unknown code \"%s\"", name);
                break;
            }
            case R_EXIT: rc = json_int(j, "exit_status", 0, 255, &v), sum->outcome = (int)v; break;
            case R_ERROR: rc = json_str_into(j, "error", sum->error, sizeof sum->error); break;
            case R_NA:
                rc = json_str_into(j, "not_applicable", sum->not_applicable, sizeof sum->not_applicable);
                if (!rc && !sum->not_applicable[0])
                    rc = json_fail(j, "\"not_applicable\": expected what changes the scenario");
                break;
            case R_FAILURES: {
                size_t len;
                rc = json_str(j, "failures", &len);
                if (!rc && !(sum->failures = strdup(j->sbuf))) rc = json_fail(j, "out of memory");
                break;
            }
            }
        if (rc) {
            j->p = val;
            return -1;
        }
        if ((more = json_next(j, '}', "a record")) < 0) return -1;
    }
    if (json_eol(j) != 0) return -1;
    /* The keys of a run that ran, or of one that could not be made. */
    uint64_t base = (1u << R_RUN) | (1u << R_SCENARIO) | (1u << R_TITLE) | (1u << R_ALGORITHM) | (1u << R_SEED) |
                    (1u << R_SET) | (1u << R_OUTCOME),
             ran = (1u << R_EVENTS) | (1u << R_TRUNCATED) | (1u << R_EXPECTS) | (1u << R_FAILED) | (1u << R_HEADLINE) |
                   (1u << R_HASH) | ((((uint64_t)1 << SCN_M_COUNT) - 1) << R_FIXED),
             failed = (1u << R_ERROR_CODE) | (1u << R_EXIT) | (1u << R_ERROR);
    uint64_t want_keys = base | (seen & (1u << R_ERROR_CODE) ? failed : ran);
    if (json_missing(j, keys, nkeys, seen, ~want_keys, "a record") != 0) return -1;
    if ((seen & ~want_keys & ~((uint64_t)1 << R_FAILURES) & ~((uint64_t)1 << R_NA)) != 0)
        return json_fail(j, "a record has the fields of both a run that ran and one that could not be made");
    /* The outcome: its word, and the code behind it. */
    if (sum->rc) {
        if (strcmp(word, sum->rc == LSIM_ESKIPPED ? "SKIP" : "ERROR") != 0 || sum->outcome != lsim_exit_status(sum->rc))
            return json_fail(j, "\"outcome\" and \"exit_status\" do not match \"error_code\"");
        sum->outcome = sum->rc;
        sum->judged = 1;
    } else {
        static const struct {
            const char *word;
            int outcome, judged;
        } words[] = {{"PASS", LSIM_OK, 1},
                     {"RAN", LSIM_OK, 0},
                     {"FAIL", LSIM_EEXPECT, 1},
                     {"TRUNCATED", LSIM_ETRUNCATED, 1},
                     {REPORT_NOT_APPLICABLE, LSIM_OK, 1}};
        int w = -1;
        if (strcmp(word, "ERROR") == 0)
            return json_fail(j, "\"outcome\" is \"ERROR\" in a record without \"error_code\"");
        for (int x = 0; x < (int)(sizeof words / sizeof *words); x++)
            if (strcmp(word, words[x].word) == 0) w = x;
        if (w < 0)
            return json_fail(j,
                             "\"outcome\" is \"%s\", expected PASS, FAIL, TRUNCATED, " REPORT_NOT_APPLICABLE
                             ", RAN, SKIP or ERROR",
                             word);
        sum->outcome = words[w].outcome;
        sum->judged = words[w].judged;
        if ((strcmp(word, REPORT_NOT_APPLICABLE) == 0) != ((seen >> R_NA) & 1))
            return json_fail(j,
                             "\"not_applicable\" is given exactly when \"outcome\" is \"" REPORT_NOT_APPLICABLE "\"");
        if (sum->not_applicable[0] && sum->failed)
            return json_fail(j, "\"failed_expects\" is not 0 in a run whose expectations are not applicable");
        if ((sum->outcome == LSIM_ETRUNCATED) != (sum->truncated != 0) || sum->failed > sum->nexpects)
            return json_fail(j, "\"outcome\", \"truncated\" and the expectation counts disagree");
    }
    if (!sum->failures && !(sum->failures = strdup(""))) return json_fail(j, "out of memory");
    return 0;
}

int shard_list(const struct shard *s, struct fanout *f, char ***cells) {
    memset(f, 0, sizeof *f);
    *cells = NULL;
    f->files = s->files;
    f->nfiles = s->nfiles;
    f->algo_name = s->algos;
    f->algo_reg = (const char *const *)s->algo_names;
    f->nalgos = s->nalgos;
    f->has_seeds = s->has_seeds;
    f->seeds = &s->seeds;
    f->seed = s->seed;
    f->algo_default = s->algo;
    f->sets = (const char *const *)s->sets;
    f->nsets = s->nsets;
    f->jobs = 1;
    return s->naxes ? fanout_set_axes(f, s->axes, s->naxes, cells) : 0;
}

/* One line of at most SHARD_MAX_LINE bytes into *buf (without its newline):
 * 1, 0 at the end of the file, -1 when longer (errno-free: a message is set). */
static int read_line(FILE *in, char **buf, size_t *cap, size_t *len) {
    *len = 0;
    for (;;) {
        if (*cap - *len < 2) {
            size_t nc = *cap ? *cap * 2 : 4096;
            if (nc > SHARD_MAX_LINE + 2) nc = SHARD_MAX_LINE + 2;
            if (nc <= *cap) return -1;
            char *nb = realloc(*buf, nc);
            if (!nb) return -2;
            *buf = nb;
            *cap = nc;
        }
        if (!fgets(*buf + *len, (int)(*cap - *len), in)) return *len ? 1 : 0;
        *len += strlen(*buf + *len);
        if (*len && (*buf)[*len - 1] == '\n') {
            (*buf)[--*len] = '\0';
            return 1;
        }
        if (feof(in)) return 1;
    }
}

int shard_read(const char *path, struct shard *s) {
    memset(s, 0, sizeof *s);
    s->path = path;
    FILE *in = fopen(path, "r");
    if (!in) {
        fprintf(stderr, "locksim: merge: cannot read '%s': %s\n", path, strerror(errno));
        return cli_exit(lsim_errno_code(errno, LSIM_ENOINPUT));
    }
    int st = shard_read_stream(in, path, s);
    fclose(in);
    return st;
}

int shard_read_stream(FILE *in, const char *path, struct shard *s) {
    memset(s, 0, sizeof *s);
    s->path = path;
    struct rdr r = {.path = path};
    r.j.err = r.err;
    r.j.errlen = sizeof r.err;
    char *line = NULL, *sbuf = NULL;
    size_t cap = 0, len, nsums_cap = 0, scap = 0;
    struct fanout f;
    char **cells = NULL;
    memset(&f, 0, sizeof f);
    int st = 0, got = 0;
    while ((got = read_line(in, &line, &cap, &len)) > 0) {
        r.line++;
        json_rd_line(&r.j, line, len);
        if (scap < len + 1) { /* strings decode into a buffer as long as the line */
            char *nb = realloc(sbuf, len + 1);
            if (!nb) {
                st = cli_fail(LSIM_ENOMEM, "");
                break;
            }
            sbuf = nb;
            scap = len + 1;
        }
        r.j.sbuf = sbuf;
        r.j.scap = scap;
        int rc;
        if (memchr(line, '\0', len)) rc = json_fail(&r.j, "a NUL byte in the line");
        else if (r.line == 1) {
            rc = header(&r.j, s);
            if (!rc && shard_list(s, &f, &cells) != 0) rc = json_fail(&r.j, "out of memory");
        } else {
            size_t want = s->first + s->nsums;
            if (want >= s->end)
                rc = json_fail(&r.j, "a record past the shard's last run (%zu)", s->end ? s->end - 1 : 0);
            else if (s->nsums == nsums_cap) {
                size_t nc = nsums_cap ? nsums_cap * 2 : 64;
                struct report_summary *ns = realloc(s->sums, nc * sizeof *ns);
                if (!ns) rc = json_fail(&r.j, "out of memory");
                else s->sums = ns, nsums_cap = nc, rc = 0;
            } else rc = 0;
            if (!rc) {
                rc = record(&r.j, &f, want, &s->sums[s->nsums]);
                if (rc) report_summary_close(&s->sums[s->nsums]);
                else s->sums[s->nsums++].file = NULL;
            }
        }
        if (rc) {
            st = strcmp(r.err, "out of memory") == 0 ? cli_fail(LSIM_ENOMEM, "") : bad(&r);
            break;
        }
    }
    if (!st && got < 0) {
        if (got == -2) st = cli_fail(LSIM_ENOMEM, "");
        else {
            fprintf(stderr, "%s:%zu:1: a line longer than %zu bytes: not a shard file\n", path, r.line + 1,
                    (size_t)SHARD_MAX_LINE);
            st = cli_exit(LSIM_EPARSE);
        }
    } else if (!st && ferror(in)) {
        fprintf(stderr, "locksim: merge: cannot read '%s'\n", path);
        st = cli_exit(LSIM_ENOINPUT);
    } else if (!st && r.line == 0) {
        fprintf(stderr,
                "%s:1:1: an empty file: not a shard file (make shards with `locksim batch ... --shard K/N "
                "--out FILE`)\n",
                path);
        st = cli_exit(LSIM_EPARSE);
    } else if (!st && s->first + s->nsums != s->end) {
        fprintf(stderr, "%s: shard %ld/%ld is incomplete: %zu of its %zu runs (was it interrupted?)\n", path, s->k,
                s->n, s->nsums, s->end - s->first);
        st = cli_exit(LSIM_EPARSE);
    }
    for (size_t c = 0; cells && c < (size_t)f.ncells * (size_t)f.cell_nsets; c++) free(cells[c]);
    free(cells);
    free(line);
    free(sbuf);
    return st;
}

static int same_strs(char *const *a, int na, char *const *b, int nb) {
    if (na != nb) return 0;
    for (int i = 0; i < na; i++)
        if (strcmp(a[i], b[i]) != 0) return 0;
    return 1;
}

static int same_opt(const char *a, const char *b) { return a && b ? strcmp(a, b) == 0 : a == b; }

const char *shard_differs(const struct shard *a, const struct shard *b) {
    if (strcmp(a->cmd, b->cmd) != 0) return "command";
    if (a->n != b->n) return "number of shards";
    if (strcmp(a->build, b->build) != 0) return "build";
    if (!same_strs(a->files, a->nfiles, b->files, b->nfiles)) return "files";
    if (!same_strs(a->algos, a->nalgos, b->algos, b->nalgos) ||
        !same_strs(a->algo_names, a->nalgos, b->algo_names, b->nalgos) || !same_opt(a->algo, b->algo))
        return "algorithms";
    if (a->has_seeds != b->has_seeds || a->seeds.n != b->seeds.n || !same_opt(a->seed, b->seed)) return "seeds";
    for (int k = 0; k < a->seeds.n; k++)
        if (a->seeds.lo[k] != b->seeds.lo[k] || a->seeds.hi[k] != b->seeds.hi[k]) return "seeds";
    if (!same_strs(a->sets, a->nsets, b->sets, b->nsets)) return "--set values";
    if (a->naxes != b->naxes) return "--vary keys";
    for (int k = 0; k < a->naxes; k++)
        if (strcmp(a->axes[k].key, b->axes[k].key) != 0 ||
            !same_strs(a->axes[k].vals, a->axes[k].n, b->axes[k].vals, b->axes[k].n))
            return "--vary keys";
    if (a->runs != b->runs) return "runs";
    if (!same_strs(a->args, a->nargs, b->args, b->nargs)) return "command lines";
    return NULL;
}
