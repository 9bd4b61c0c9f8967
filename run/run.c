/* The run API (run.h): load, override, resolve the algorithm, build, run,
 * judge the expectations. Every front end runs scenarios through here. */
#include "run.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "checker.h"
#include "plugin.h"
#include "scenario.h"
#include "scenario_file.h"

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static int
fail(struct run_result *r, int rc, enum run_stage stage, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    r->rc = rc;
    r->stage = stage;
    vsnprintf(r->error, sizeof r->error, fmt, ap);
    va_end(ap);
    return rc;
}

/* ---- Algorithms: built in, or a user-written shared object ---------------- */

static int name_ok(const char *s) {
    size_t n = 0;
    for (; s[n]; n++) {
        char c = s[n];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
              c == '.'))
            return 0;
    }
    return n > 0 && n < 48;
}

int run_validate_algo(const struct lock_algo *a, const char *where, char *err, size_t errlen) {
    const char *why = NULL;
    enum { MAX_STATE = 1 << 20 }; /* per config, client, server or resource */
    if (!a) why = "its locksim_algo() returned NULL";
    else if (a->abi != LOCK_ABI_VERSION) {
        snprintf(err, errlen,
                 "'%s' was built against lock interface version %u; this locksim has version %u: "
                 "rebuild it against this sim/lock.h",
                 where, a->abi, LOCK_ABI_VERSION);
        return LSIM_EPLUGIN;
    } else if (!a->name) why = "its .name is NULL; give it a name such as \"my-lock\"";
    else if (!name_ok(a->name)) why = "its .name must be 1 to 47 letters, digits, '-', '_' or '.'";
    else if (!a->client_acquire) why = "it has no client_acquire callback, which the engine calls";
    else if (!a->client_release) why = "it has no client_release callback, which the engine calls";
    else if (a->config_size > MAX_STATE || a->client_size > MAX_STATE || a->server_size > MAX_STATE ||
             a->resource_size > MAX_STATE)
        why = "a state size (config_size, client_size, server_size, resource_size) is above 1 MiB";
    else if (a->default_servers < 0 || a->default_servers > LOCK_MAX_SERVERS)
        why = "its default_servers must be 0 (meaning one) to LOCK_MAX_SERVERS (15)";
    else if (a->max_servers < 0 || a->max_servers > LOCK_MAX_SERVERS)
        why = "its max_servers must be 0 (meaning no limit) to LOCK_MAX_SERVERS (15)";
    else if (a->max_servers && a->default_servers > a->max_servers)
        why = "its default_servers is larger than its max_servers";
    else if (a->nstates < 0 || a->nstates > LOCK_MAX_STATES) why = "its nstates must be 0 to LOCK_MAX_STATES (64)";
    else if (a->nstates > 0 && !a->state_names) why = "it has nstates but no state_names";
    else if (a->server_zero_size > a->server_size) why = "its server_zero_size is larger than its server_size";
    else if (a->resource_write == NULL && a->resource_size) why = "it has resource_size but no resource_write callback";
    _Static_assert(LOCK_MAX_SERVERS == 15 && LOCK_MAX_STATES == 64, "the messages above name the limits");
    if (!why) return LSIM_OK;
    snprintf(err, errlen, "cannot use algorithm '%s': %s (see docs/lock-interface.md)", where, why);
    return LSIM_EPLUGIN;
}

int run_resolve_algo(const char *name, const struct lock_algo **out, char *err, size_t errlen) {
    *out = NULL;
    size_t n = strlen(name);
    if (strchr(name, '/')) return plugin_load(name, out, err, errlen);
    if (n > 3 && strcmp(name + n - 3, ".so") == 0) {
        /* dlopen would search the library path for a bare name: look here. */
        char local[4096];
        struct stat st;
        snprintf(local, sizeof local, "./%s", name);
        if (stat(local, &st) != 0) {
            snprintf(err, errlen,
                     "no algorithm file '%s' in the current directory; give its path, "
                     "such as ./%s or build/%s",
                     name, name, name);
            return LSIM_EPLUGIN;
        }
        return plugin_load(local, out, err, errlen);
    }
    *out = lock_algo_find(name);
    if (*out) return LSIM_OK;
    snprintf(err, errlen, "unknown algorithm '%s'; `locksim list` shows them", name);
    return LSIM_EUSAGE;
}

/* ---- One run ------------------------------------------------------------- */

/* The file's own seed and algorithm, as load() found them before any override. */
struct as_written {
    uint64_t seed;
    char algo[SCN_OPT_MAX];
};

static int load(const struct run_spec *spec, struct scenario *s, struct run_result *r, struct as_written *w) {
    struct scn_error err;
    memset(&err, 0, sizeof err);
    if (spec->parsed) {
        if (scenario_copy(s, spec->parsed) != 0) {
            scenario_init(s);
            return fail(r, LSIM_ENOMEM, RUN_STAGE_LOAD, "out of memory copying the scenario");
        }
    }
    int rc = spec->parsed ? 0
             : spec->text ? scenario_parse(s, spec->file ? spec->file : "<text>", spec->text, spec->len, &err)
                          : scenario_load(s, spec->file, &err); /* "-" reads standard input */
    if (rc) {
        scn_error_place(r->error, sizeof r->error, &err);
        r->rc = rc;
        r->stage = RUN_STAGE_LOAD;
        return rc;
    }
    w->seed = s->seed; /* a sweep cell's parsed scenario has its sets applied, never its seed */
    scn_copy_str(w->algo, sizeof w->algo, s->algo);
    if (spec->seed) {
        char kv[96];
        snprintf(kv, sizeof kv, "seed=%s", spec->seed);
        rc = scenario_set(s, kv, &err);
        if (rc != 0) /* a bad seed is a usage error; memory is memory */
            return fail(r, rc == LSIM_ENOMEM ? rc : LSIM_EUSAGE, RUN_STAGE_SET, "--seed %s: %s", spec->seed, err.msg);
    }
    for (int i = 0; i < spec->nsets && !spec->sets_applied; i++) {
        memset(&err, 0, sizeof err);
        rc = scenario_set(s, spec->sets[i], &err);
        if (rc == LSIM_ENOMEM) return fail(r, rc, RUN_STAGE_SET, "out of memory applying --set %s", spec->sets[i]);
        if (rc != 0) return fail(r, rc, RUN_STAGE_SET, "--set %s: %s", spec->sets[i], err.msg);
    }
    return LSIM_OK;
}

int run_word_in_list(const char *list, const char *word, size_t len) {
    for (const char *p = list; *p;) {
        size_t l = strcspn(p, " ");
        if (l == len && strncmp(p, word, len) == 0) return 1;
        p += l;
        while (*p == ' ') p++;
    }
    return 0;
}

/* With --algo, options the new algorithm does not know are dropped from the
 * file (the fault script is kept); one given by --set is an error. The
 * algorithm's own message names the options it has. */
static int check_dropped_sets(const struct run_spec *spec, struct run_result *r) {
    const char *dropped = engine_dropped_options(r->engine);
    if (!dropped[0]) return 0;
    for (int i = 0; i < spec->nsets; i++) {
        const char *kv = spec->sets[i];
        if (strncmp(kv, "lock.", 5) == 0) kv += 5;
        size_t klen = strcspn(kv, "=");
        if (!run_word_in_list(dropped, kv, klen)) continue;
        const struct lock_algo *a = engine_algo(r->engine);
        char msg[300] = "", key[64];
        snprintf(key, sizeof key, "%.*s", (int)(klen < 63 ? klen : 63), kv);
        if (a->option && a->config_size < (1u << 20)) {
            unsigned char scratch[1u << 12];
            void *cfg = a->config_size <= sizeof scratch ? scratch : malloc(a->config_size);
            if (cfg) {
                memset(cfg, 0, a->config_size ? a->config_size : 1);
                if (a->config_default) a->config_default(cfg);
                a->option(cfg, key, kv[klen] ? kv + klen + 1 : "", msg, sizeof msg);
                if (cfg != scratch) free(cfg);
            }
        }
        if (!msg[0]) snprintf(msg, sizeof msg, "%s takes no option '%s'", a->name, key);
        return fail(r, LSIM_EUNKNOWN_OPTION, RUN_STAGE_SET, "--set %s: %s", spec->sets[i], msg);
    }
    return 0;
}

/* `lock ./my_lock.so` in a scenario: a plugin path, relative to the
 * scenario file's folder (then to the current one). 0 when the scenario
 * names a built-in algorithm or its plugin loaded; else the error, placed
 * at the lock line. */
static int scenario_plugin(const struct run_spec *spec, const struct scenario *s, const struct lock_algo **out,
                           struct run_result *r) {
    size_t n = strlen(s->algo);
    if (!(strchr(s->algo, '/') || (n > 3 && strcmp(s->algo + n - 3, ".so") == 0))) return 0;
    char path[4200], err[600];
    const char *file = spec->file && strcmp(spec->file, "-") != 0 && !spec->text ? spec->file : NULL;
    const char *slash = file ? strrchr(file, '/') : NULL;
    const char *rel = strncmp(s->algo, "./", 2) == 0 ? s->algo + 2 : s->algo;
    if (s->algo[0] != '/' && slash) snprintf(path, sizeof path, "%.*s/%s", (int)(slash - file), file, rel);
    else snprintf(path, sizeof path, "%s%s", s->algo[0] == '/' || strchr(s->algo, '/') ? "" : "./", s->algo);
    struct stat st;
    if (stat(path, &st) != 0 && stat(s->algo, &st) == 0) snprintf(path, sizeof path, "%s", s->algo);
    int rc = run_resolve_algo(strchr(path, '/') ? path : s->algo, out, err, sizeof err);
    if (rc == 0) return 0;
    /* A plugin the file names and cannot be used is the file's fault: 65. */
    return fail(r, rc == LSIM_ENOMEM ? rc : LSIM_EPARSE, RUN_STAGE_LOAD, "%s:%d:%d: %s", s->file, s->algo_pos.line,
                s->algo_pos.col, err);
}

/* What makes the run (scenario s, as loaded and overridden, run by algo)
 * another than the file's own (seed and algorithm before any override), in
 * r->not_applicable; "" when it is the scenario as written. */
static void note_changes(const struct run_spec *spec, const struct as_written *w, struct run_result *r) {
    char *b = r->not_applicable;
    size_t n = sizeof r->not_applicable, l = 0;
    b[0] = '\0';
    if (r->scn->seed != w->seed)
        l += (size_t)snprintf(b + l, n - l, "seed %llu (the file's: %llu)", (unsigned long long)r->scn->seed,
                              (unsigned long long)w->seed);
    for (int i = 0; i < spec->nsets && l < n; i++) {
        if (strncmp(spec->sets[i], "seed=", 5) == 0) continue; /* said as the seed */
        l += (size_t)snprintf(b + l, n - l, "%sset %s", l ? ", " : "", spec->sets[i]);
    }
    if (l < n && strcmp(r->algo->name, w->algo) != 0)
        l += (size_t)snprintf(b + l, n - l, "%salgorithm %s (the file's: %s)", l ? ", " : "", r->algo->name, w->algo);
    if (l >= n) memcpy(b + n - 4, "...", 4); /* cut, and says so */
}

int run_scenario(const struct run_spec *spec, struct run_result *r) {
    memset(r, 0, sizeof *r);
    const struct lock_algo *algo = spec->algo_resolved;
    if (!algo && spec->algo) {
        int rc = run_resolve_algo(spec->algo, &algo, r->error, sizeof r->error);
        if (rc) {
            r->rc = rc;
            r->stage = RUN_STAGE_ALGO;
            return rc;
        }
    }
    struct scenario s;
    struct as_written w;
    scenario_init(&s);
    int rc = load(spec, &s, r, &w);
    if (rc) {
        scenario_close(&s);
        return rc;
    }
    int swapped = algo != NULL; /* --algo: options the new algorithm lacks are dropped */

    if (!algo && (rc = scenario_plugin(spec, &s, &algo, r)) != 0) {
        scenario_close(&s);
        return rc;
    }
    struct engine_opts eo = {
            .algo = algo, .keep_trace = spec->keep_trace, .hash_trace = !spec->keep_trace, .lenient_options = swapped};
    struct scn_error err;
    memset(&err, 0, sizeof err);
    rc = engine_new_take(&r->engine, &s, &eo, &err); /* s is this run's own copy */
    scenario_close(&s);
    if (rc == LSIM_ENOMEM) return fail(r, LSIM_ENOMEM, RUN_STAGE_BUILD, "out of memory building the run");
    if (rc != 0) {
        if (err.pos.line <= 0) {
            /* No place in the file: the offending option came from --set. */
            return fail(r, LSIM_EUSAGE, RUN_STAGE_BUILD, "--set: %s", err.msg);
        }
        scn_error_place(r->error, sizeof r->error, &err);
        r->rc = LSIM_EPARSE;
        r->stage = RUN_STAGE_BUILD;
        return r->rc;
    }
    if (!spec->lenient_sets && (rc = check_dropped_sets(spec, r)) != 0) {
        engine_free(r->engine);
        r->engine = NULL;
        return rc;
    }
    engine_run(r->engine);
    const struct trace *tr = engine_trace(r->engine);
    if (tr->oom) {
        engine_free(r->engine);
        r->engine = NULL;
        return fail(r, LSIM_ENOMEM, RUN_STAGE_RUN, "out of memory during the run");
    }
    r->scn = engine_scenario(r->engine);
    r->report = engine_report(r->engine);
    r->algo = engine_algo(r->engine);
    r->trace_hash = trace_hash(tr);
    r->truncated = engine_truncated(r->engine);
    r->nexpects = r->scn->nexpects;
    if (r->nexpects && !spec->hold_expects) note_changes(spec, &w, r);
    if (!r->truncated && !r->not_applicable[0])
        for (int i = 0; i < r->nexpects; i++)
            if (!run_expect(r, i, NULL)) r->failed++;
    return LSIM_OK;
}

void run_result_close(struct run_result *r) {
    engine_free(r->engine);
    r->engine = NULL;
}

int run_expect(const struct run_result *r, int i, int64_t *measured) {
    return checker_expect_holds(r->report, &r->scn->expects[i], measured);
}

int run_cannot_run(const struct run_result *r, int swapped) {
    return swapped && r->stage == RUN_STAGE_BUILD && (r->rc == LSIM_EPARSE || r->rc == LSIM_EBAD_VALUE);
}

int run_outcome(const struct run_result *r, int require_expects) {
    if (r->rc) return r->rc;
    if (r->truncated) return LSIM_ETRUNCATED;
    if (r->failed || (require_expects && r->nexpects == 0)) return LSIM_EEXPECT;
    return LSIM_OK;
}

/* Check src afresh: its events, without the findings a checker appended
 * when it was recorded, go into dst (same header and nodes) with a checker
 * attached (docs/trace-format.md, "Checking a recorded trace"). Returns 0 or
 * LSIM_ENOMEM; dst must be closed by the caller, and before src (its event
 * text points into src). */
int run_recheck(const struct trace *src, enum scn_purpose purpose, sim_ns stuck_after_ns, const struct scenario *watch,
                struct trace *dst, struct checker_report *rep) {
    struct checker ck;
    trace_init(dst, 1);
    snprintf(dst->title, sizeof dst->title, "%s", src->title);
    snprintf(dst->algo, sizeof dst->algo, "%s", src->algo);
    dst->seed = src->seed;
    for (int i = 0; i < src->nnodes; i++)
        if (trace_add_node(dst, src->nodes[i].name, src->nodes[i].kind) < 0) return LSIM_ENOMEM;
    if (checker_init(&ck, dst, purpose, stuck_after_ns) != 0) return LSIM_ENOMEM;
    /* The clients the scenario's expect lines name (bound to the trace's nodes). */
    for (int i = 0; watch && i < watch->nexpects; i++)
        if (scn_expect_names_client(&watch->expects[i]) && checker_watch(&ck, watch->expects[i].client_index) != 0) {
            checker_close(&ck);
            return LSIM_ENOMEM;
        }
    dst->observe = checker_observe;
    dst->advance = checker_advance;
    dst->observe_arg = &ck;
    dst->observe_kinds = CHECKER_KINDS;
    sim_ns end = 0;
    for (size_t i = 0; i < src->len; i++) {
        if (trace_kind_is_finding(src->ev[i].kind)) continue;
        trace_append(dst, &src->ev[i]);
        end = src->ev[i].t;
    }
    checker_finish(&ck, end, rep);
    checker_close(&ck);
    dst->observe = NULL;
    dst->advance = NULL;
    return dst->oom ? LSIM_ENOMEM : 0;
}
