/* A recorded trace drawn as a panel under the simulated run (render
 * --trace, view --trace, real --picture): read, its nodes matched to the
 * scenario's, judged afresh by the checker as check-trace judges it, and
 * its banner: what it was recorded against, at what scale, and its verdict. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "input.h"

static const char *node_kind(int kind) {
    static const char *const names[] = {"client", "server", "resource"};
    return kind >= 0 && kind < 3 ? names[kind] : "?";
}

int cli_recorded_match(const struct trace *sim, const char *scn_file, const struct trace *rec, const char *rec_file,
                       char *err, size_t errlen) {
    char what[300];
    int n = sim->nnodes > rec->nnodes ? sim->nnodes : rec->nnodes;
    for (int i = 0; i < n; i++) {
        const struct trace_node *a = i < sim->nnodes ? &sim->nodes[i] : NULL;
        const struct trace_node *b = i < rec->nnodes ? &rec->nodes[i] : NULL;
        if (a && b && a->kind == b->kind && strcmp(a->name, b->name) == 0) continue;
        if (a && b)
            snprintf(what, sizeof what, "its node %d is %s (%s), the scenario's %s (%s)", i + 1, b->name,
                     node_kind(b->kind), a->name, node_kind(a->kind));
        else if (a)
            snprintf(what, sizeof what, "it has %d nodes and lacks the scenario's %s (%s)", rec->nnodes, a->name,
                     node_kind(a->kind));
        else
            snprintf(what, sizeof what, "it has %d nodes, the scenario %d: %s (%s) is not the scenario's", rec->nnodes,
                     sim->nnodes, b->name, node_kind(b->kind));
        snprintf(err, errlen,
                 "%.1500s: not a run of %.1500s: %s; expected a trace with the scenario's nodes, in its order "
                 "(as `locksim real %.1500s --trace OUT.jsonl` records)",
                 rec_file, scn_file, what, scn_file);
        return LSIM_EPARSE;
    }
    return 0;
}

/* The recording's own words on what it was recorded against, from its
 * srv-note at t = 0 (real/record.c), up to the ": t_ns is ..." that
 * explains the file's times: into buf, or "" when it has none. */
static void recorded_against(char *buf, size_t n, const struct trace *tr) {
    buf[0] = '\0';
    for (size_t i = 0; i < tr->len && tr->ev[i].t == 0; i++) {
        const char *t = tr->ev[i].text;
        if (tr->ev[i].kind != TRACE_SRV_NOTE || !t || strncmp(t, "recorded against ", 17) != 0) continue;
        const char *end = strstr(t, ": t_ns");
        int len = end ? (int)(end - t) : (int)strlen(t);
        snprintf(buf, n, "%.*s", len, t);
        return;
    }
}

/* rc's banner from rc->dst and rc->rep: a recording's title and what it
 * says it was recorded against (against, "" when it does not say), and
 * which run it is (source). */
static void banner(struct cli_recorded *rc, const char *against, const char *source) {
    const char *title = rc->dst.title[0] ? rc->dst.title : "(untitled)";
    if (against[0]) {
        snprintf(rc->title, sizeof rc->title, "Real run: %s", title);
        snprintf(rc->note, sizeof rc->note, "%s; %s (its times to the microsecond), judged by the checker", against,
                 source);
    } else {
        snprintf(rc->title, sizeof rc->title, "Trace: %s", title);
        snprintf(rc->note, sizeof rc->note, "%s (seed %llu), judged by the checker again", source,
                 (unsigned long long)rc->dst.seed);
    }
    rc->b = (struct scene_banner){.title = rc->title, .algo = rc->dst.algo, .report = &rc->rep, .note = rc->note};
}

int cli_recorded_judge(struct cli_recorded *rc, const struct scenario *s, const char *source) {
    char against[300];
    recorded_against(against, sizeof against, &rc->src);
    /* A recording's times are real elapsed time / S, to the nanosecond of
     * the arithmetic: drawn to the microsecond of scenario time (a few tens
     * of ns of real time at the default scales), finer than what loopback
     * and the scheduler let a run measure, and as the narration shows
     * times. Rounding keeps their order. */
    for (size_t i = 0; against[0] && i < rc->src.len; i++)
        rc->src.ev[i].t = (rc->src.ev[i].t + SIM_NS_PER_US / 2) / SIM_NS_PER_US * SIM_NS_PER_US;
    struct scenario def;
    scenario_init(&def);
    int code = run_recheck(&rc->src, s ? s->purpose : def.purpose, s ? s->stuck_after_ns : def.stuck_after_ns, NULL,
                           &rc->dst, &rc->rep);
    scenario_close(&def);
    if (!code) banner(rc, against, source);
    return code;
}

int cli_recorded_load(struct cli_recorded *rc, const char *path, const struct scenario *s) {
    char err[1400];
    trace_init(&rc->src, 1);
    trace_init(&rc->dst, 1);
    rc->loaded = 1;
    int code = input_load_trace(&rc->src, path, stderr, err, sizeof err);
    if (code) return cli_fail(code, err);
    char source[300];
    snprintf(source, sizeof source, "the trace %.280s", strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
    code = cli_recorded_judge(rc, s, source);
    return code ? cli_fail(code, "") : 0;
}

void cli_recorded_close(struct cli_recorded *rc) {
    if (!rc->loaded) return;
    trace_close(&rc->dst); /* before src: its event text points into src */
    trace_close(&rc->src);
    rc->loaded = 0;
}
