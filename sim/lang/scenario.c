/* The scenario as data: defaults (the one place for them), lifetime, deep
 * copy, the arrays grown on demand, and the name tables shared by the
 * parser, the engine and the reports. Text parsing lives in parse.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"

void scn_copy_str(char *dst, size_t size, const char *src) {
    size_t n = strlen(src);
    if (n >= size) n = size - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

void scenario_init(struct scenario *s) {
    memset(s, 0, sizeof *s);
    s->purpose = SCN_PURPOSE_CORRECTNESS;
    s->seed = 1;
    s->duration_ns = 120 * SIM_NS_PER_S;
    s->stuck_after_ns = 60 * SIM_NS_PER_S;
    s->max_events = 10000000;
    memcpy(s->algo, "lease", sizeof "lease");
    s->nservers = 0; /* the algorithm's default */
    s->stock = 1;
    s->fencing = 0;
    s->latency.min_ns = SIM_NS_PER_MS;
    s->latency.max_ns = SIM_NS_PER_MS;
    s->loss_ppm = 0;
    s->retry_ns = SIM_NS_PER_S;
}

/* Free one owned array and zero its count and capacity. */
#define FREE_ARRAY(arr, n, cap) (free(arr), (arr) = NULL, (n) = 0, (cap) = 0)

void scenario_close(struct scenario *s) {
    FREE_ARRAY(s->opts, s->nopts, s->cap_opts);
    FREE_ARRAY(s->links, s->nlinks, s->cap_links);
    FREE_ARRAY(s->programs, s->nprograms, s->cap_programs);
    FREE_ARRAY(s->clients, s->nclients, s->cap_clients);
    FREE_ARRAY(s->clocks, s->nclocks, s->cap_clocks);
    FREE_ARRAY(s->faults, s->nfaults, s->cap_faults);
    FREE_ARRAY(s->expects, s->nexpects, s->cap_expects);
    FREE_ARRAY(s->params, s->nparams, s->cap_params);
    free(s->source);
    s->source = NULL;
    s->source_len = 0;
    free(s->sets);
    s->sets = NULL;
    s->sets_len = 0;
}

/* A heap copy of n bytes, or NULL when n is 0. */
static char *dup_bytes(const char *src, size_t n, int *failed) {
    char *p;

    if (n == 0 || src == NULL) return NULL;
    if ((p = malloc(n)) == NULL) {
        *failed = 1;
        return NULL;
    }
    memcpy(p, src, n);
    return p;
}

/* A heap copy of n elements of size bytes, or NULL (also when n is 0). */
static void *dup_array(const void *src, int n, size_t size, int *failed) {
    void *p;

    if (n <= 0 || src == NULL) return NULL;
    p = malloc((size_t)n * size);
    if (p == NULL) {
        *failed = 1;
        return NULL;
    }
    memcpy(p, src, (size_t)n * size);
    return p;
}

/* dst->arr = a copy of src->arr's n used elements, with capacity n. */
#define DUP_ARRAY(arr, n, cap) \
    do { \
        dst->arr = dup_array(src->arr, src->n, sizeof *src->arr, &failed); \
        dst->cap = dst->arr ? src->n : 0; \
        if (!dst->arr) dst->n = 0; \
    } while (0)

int scenario_copy(struct scenario *dst, const struct scenario *src) {
    int failed = 0;

    *dst = *src;
    DUP_ARRAY(opts, nopts, cap_opts);
    DUP_ARRAY(links, nlinks, cap_links);
    DUP_ARRAY(programs, nprograms, cap_programs);
    DUP_ARRAY(clients, nclients, cap_clients);
    DUP_ARRAY(clocks, nclocks, cap_clocks);
    DUP_ARRAY(faults, nfaults, cap_faults);
    DUP_ARRAY(expects, nexpects, cap_expects);
    DUP_ARRAY(params, nparams, cap_params);
    dst->source = dup_bytes(src->source, src->source_len, &failed);
    dst->source_len = dst->source ? src->source_len : 0;
    dst->sets = dup_bytes(src->sets, src->sets_len, &failed);
    dst->sets_len = dst->sets ? src->sets_len : 0;
    if (failed) {
        scenario_close(dst);
        return -1;
    }
    return 0;
}

/* Make room for one more element in a doubling array of at most max
 * elements; 0, or -1 on OOM or at the limit. */
static int grow(void **arr, int *cap, int n, size_t size, int max) {
    void *p;
    int ncap;

    if (n < *cap) return 0;
    if (n >= max || *cap > (int)(0x3fffffff / size)) return -1;
    ncap = *cap ? *cap * 2 : 4;
    if (ncap > max) ncap = max;
    p = realloc(*arr, (size_t)ncap * size);
    if (p == NULL) return -1;
    *arr = p;
    *cap = ncap;
    return 0;
}

/* The new zeroed last element of s->arr, or NULL. */
#define ADD_ELEMENT(arr, n, cap, max) \
    do { \
        void *a = s->arr; \
        if (grow(&a, &s->cap, s->n, sizeof *s->arr, (max)) < 0) return NULL; \
        s->arr = a; \
        memset(&s->arr[s->n], 0, sizeof *s->arr); \
        return &s->arr[s->n++]; \
    } while (0)

static struct scn_client *add_client(struct scenario *s) {
    ADD_ELEMENT(clients, nclients, cap_clients, SCN_MAX_CLIENTS);
}

struct scn_client *scenario_add_client(struct scenario *s) {
    struct scn_client *c = add_client(s);

    if (c != NULL) c->repeat = 1;
    return c;
}

static struct scn_fault *add_fault(struct scenario *s) { ADD_ELEMENT(faults, nfaults, cap_faults, SCN_MAX_FAULTS); }

struct scn_fault *scenario_add_fault(struct scenario *s) {
    struct scn_fault *f = add_fault(s);

    if (f != NULL) {
        f->occurrence = 1;
        f->which = SCN_CLOCK_WALL;
    }
    return f;
}

struct scn_program *scenario_add_program(struct scenario *s) {
    ADD_ELEMENT(programs, nprograms, cap_programs, SCN_MAX_PROGRAMS);
}

struct scn_opt *scenario_add_opt(struct scenario *s) {
    ADD_ELEMENT(opts, nopts, cap_opts, SCN_MAX_OPTS);
}

struct scn_link *scenario_add_link(struct scenario *s) {
    ADD_ELEMENT(links, nlinks, cap_links, SCN_MAX_LINKS);
}

struct scn_clock_init *scenario_add_clock(struct scenario *s) {
    ADD_ELEMENT(clocks, nclocks, cap_clocks, SCN_MAX_CLOCKS);
}

struct scn_expect *scenario_add_expect(struct scenario *s) {
    ADD_ELEMENT(expects, nexpects, cap_expects, SCN_MAX_EXPECTS);
}

struct scn_param *scenario_add_param(struct scenario *s) {
    ADD_ELEMENT(params, nparams, cap_params, SCN_MAX_PARAMS);
}

const struct scn_opt *scenario_opt(const struct scenario *s, const char *key) {
    int i;

    for (i = 0; i < s->nopts; i++)
        if (strcmp(s->opts[i].key, key) == 0) return &s->opts[i];
    return NULL;
}

const struct scn_param *scenario_param(const struct scenario *s, const char *name) {
    int i;

    for (i = 0; i < s->nparams; i++)
        if (strcmp(s->params[i].name, name) == 0) return &s->params[i];
    return NULL;
}

/* ---- Name tables (the spellings the scenario language uses) ---- */

static const char *const point_names[SCN_POINT_COUNT] = {
        [SCN_POINT_NONE] = "none",
        [SCN_POINT_DURING_ACQUIRE] = "during-acquire",
        [SCN_POINT_AFTER_ACQUIRE] = "after-acquire",
        [SCN_POINT_BEFORE_READ] = "before-read",
        [SCN_POINT_BETWEEN_READ_AND_WRITE] = "between-read-and-write",
        [SCN_POINT_BEFORE_WRITE] = "before-write",
        [SCN_POINT_AFTER_WRITE] = "after-write",
        [SCN_POINT_BEFORE_RELEASE] = "before-release",
        [SCN_POINT_AFTER_RELEASE] = "after-release",
};


static const char *const verdict_names[] = {
        [SCN_VERDICT_SAFE] = "SAFE",
        [SCN_VERDICT_UNSAFE] = "UNSAFE",
        [SCN_VERDICT_STUCK] = "STUCK",
};

static const char *const step_names[SCN_STEP_COUNT] = {
        [SCN_STEP_ACQUIRE] = "acquire", [SCN_STEP_READ] = "read",       [SCN_STEP_WRITE] = "write",
        [SCN_STEP_WORK] = "work",       [SCN_STEP_RELEASE] = "release",
};

static const char *const fault_names[SCN_FAULT_COUNT] = {
        [SCN_FAULT_PAUSE] = "pause",
        [SCN_FAULT_RESUME] = "resume",
        [SCN_FAULT_CRASH] = "crash",
        [SCN_FAULT_RESTART] = "restart",
        [SCN_FAULT_CLOCK_STEP] = "clock-step",
        [SCN_FAULT_CLOCK_DRIFT] = "clock-drift",
        [SCN_FAULT_CLOCK_SLEW] = "clock-slew",
        [SCN_FAULT_PARTITION] = "partition",
        [SCN_FAULT_HEAL] = "heal",
        [SCN_FAULT_LINK] = "link",
        [SCN_FAULT_PROMOTE] = "promote",
        [SCN_FAULT_KILL_REPLICAS] = "kill-replicas",
};

static const char *const nemesis_names[SCN_NEM_COUNT] = {
        [SCN_NEM_PAUSE] = "pauses",
        [SCN_NEM_CLOCK_STEP] = "clock-steps",
        [SCN_NEM_LATENCY] = "latency-spikes",
        [SCN_NEM_CRASH] = "crashes",
};

/* The name of value i, or "?" for a value the table does not know. */
#define NAME_OF(table, i) \
    ((unsigned)(i) < sizeof table / sizeof table[0] && table[(unsigned)(i)] != NULL ? table[(unsigned)(i)] : "?")

const char *scn_point_name(enum scn_point p) { return NAME_OF(point_names, p); }
const char *scn_metric_name(enum scn_metric m) { return metric_info(m) ? metric_info(m)->word : "unknown"; }
const char *scn_verdict_name(enum scn_verdict v) { return NAME_OF(verdict_names, v); }
const char *scn_step_name(enum scn_step_kind k) { return NAME_OF(step_names, k); }
const char *scn_fault_name(enum scn_fault_kind k) { return NAME_OF(fault_names, k); }
const char *scn_nemesis_name(enum scn_nemesis k) { return NAME_OF(nemesis_names, k); }

void scn_error_place(char *buf, size_t n, const struct scn_error *err) {
    if (err->pos.line > 0) snprintf(buf, n, "%s:%d:%d: %s", err->file, err->pos.line, err->pos.col, err->msg);
    else snprintf(buf, n, "%s", err->msg);
}
