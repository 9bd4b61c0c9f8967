/* The scenario as data: defaults (the one place for them), lifetime, deep
 * copy, growth of the client and fault arrays, and the name tables shared by
 * the parser, the engine and the reports. Text parsing lives in parse.c. */
#include <stdlib.h>
#include <string.h>

#include "scenario.h"

void scenario_init(struct scenario *s)
{
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

void scenario_close(struct scenario *s)
{
    free(s->clients);
    s->clients = NULL;
    s->nclients = 0;
    s->cap_clients = 0;
    free(s->faults);
    s->faults = NULL;
    s->nfaults = 0;
    s->cap_faults = 0;
}

/* A heap copy of n elements of size bytes, or NULL (also when n is 0). */
static void *dup_array(const void *src, int n, size_t size, int *failed)
{
    void *p;

    if (n <= 0 || src == NULL)
        return NULL;
    p = malloc((size_t)n * size);
    if (p == NULL) {
        *failed = 1;
        return NULL;
    }
    memcpy(p, src, (size_t)n * size);
    return p;
}

int scenario_copy(struct scenario *dst, const struct scenario *src)
{
    int failed = 0;

    *dst = *src;
    dst->clients = dup_array(src->clients, src->nclients, sizeof *src->clients, &failed);
    dst->cap_clients = dst->clients ? src->nclients : 0;
    dst->faults = dup_array(src->faults, src->nfaults, sizeof *src->faults, &failed);
    dst->cap_faults = dst->faults ? src->nfaults : 0;
    if (failed) {
        scenario_close(dst);
        return -1;
    }
    return 0;
}

/* Make room for one more element in a doubling array; 0 or -1 on OOM. */
static int grow(void **arr, int *cap, int n, size_t size)
{
    void *p;
    int ncap;

    if (n < *cap)
        return 0;
    if (*cap > (int)(0x3fffffff / size))
        return -1;
    ncap = *cap ? *cap * 2 : 8;
    p = realloc(*arr, (size_t)ncap * size);
    if (p == NULL)
        return -1;
    *arr = p;
    *cap = ncap;
    return 0;
}

struct scn_client *scenario_add_client(struct scenario *s)
{
    void *arr = s->clients;
    struct scn_client *c;

    if (grow(&arr, &s->cap_clients, s->nclients, sizeof *s->clients) < 0)
        return NULL;
    s->clients = arr;
    c = &s->clients[s->nclients++];
    memset(c, 0, sizeof *c);
    c->repeat = 1;
    return c;
}

struct scn_fault *scenario_add_fault(struct scenario *s)
{
    void *arr = s->faults;
    struct scn_fault *f;

    if (grow(&arr, &s->cap_faults, s->nfaults, sizeof *s->faults) < 0)
        return NULL;
    s->faults = arr;
    f = &s->faults[s->nfaults++];
    memset(f, 0, sizeof *f);
    f->occurrence = 1;
    f->which = SCN_CLOCK_WALL;
    return f;
}

const struct scn_opt *scenario_opt(const struct scenario *s, const char *key)
{
    int i;

    for (i = 0; i < s->nopts; i++)
        if (strcmp(s->opts[i].key, key) == 0)
            return &s->opts[i];
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

static const char *const metric_names[SCN_M_COUNT] = {
    [SCN_M_VERDICT] = "verdict",
    [SCN_M_DOUBLE_ENTRIES] = "double-entries",
    [SCN_M_DOUBLE_ENTRY_NS] = "double-entry-time",
    [SCN_M_STALE_ACCEPTED] = "stale-writes-accepted",
    [SCN_M_STALE_REJECTED] = "stale-writes-rejected",
    [SCN_M_LOST_UPDATES] = "lost-updates",
    [SCN_M_WRONG_RELEASES] = "wrong-releases",
    [SCN_M_STUCK] = "stuck",
    [SCN_M_FAILED_ACQUIRES] = "failed-acquires",
    [SCN_M_ACQUIRES] = "acquires",
    [SCN_M_WRITES_ACCEPTED] = "writes-accepted",
    [SCN_M_WRITES_REJECTED] = "writes-rejected",
    [SCN_M_FINAL_STOCK] = "final-stock",
};

static const char *const verdict_names[] = {
    [SCN_VERDICT_SAFE] = "SAFE",
    [SCN_VERDICT_UNSAFE] = "UNSAFE",
    [SCN_VERDICT_STUCK] = "STUCK",
};

static const char *const step_names[SCN_STEP_COUNT] = {
    [SCN_STEP_ACQUIRE] = "acquire",
    [SCN_STEP_READ] = "read",
    [SCN_STEP_WRITE] = "write",
    [SCN_STEP_WORK] = "work",
    [SCN_STEP_RELEASE] = "release",
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
};

/* The name of value i, or "?" for a value the table does not know. */
#define NAME_OF(table, i)                                                          \
    ((unsigned)(i) < sizeof table / sizeof table[0] && table[(unsigned)(i)] != NULL \
         ? table[(unsigned)(i)]                                                    \
         : "?")

const char *scn_point_name(enum scn_point p) { return NAME_OF(point_names, p); }
const char *scn_metric_name(enum scn_metric m) { return NAME_OF(metric_names, m); }
const char *scn_verdict_name(enum scn_verdict v) { return NAME_OF(verdict_names, v); }
const char *scn_step_name(enum scn_step_kind k) { return NAME_OF(step_names, k); }
const char *scn_fault_name(enum scn_fault_kind k) { return NAME_OF(fault_names, k); }
