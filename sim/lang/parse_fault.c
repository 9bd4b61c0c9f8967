/* Timed lines of the scenario language: `@TIME`, `+TIME` or
 * `on CLIENT.POINT[#N]` followed by a fault (pause, resume, crash, restart,
 * clock changes, partition, heal, link, promote, kill-replicas), and the check, once the
 * file is read, of faults that could never act. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse_int.h"

static int point_find(const char *w) {
    int k;

    for (k = SCN_POINT_NONE + 1; k < SCN_POINT_COUNT; k++)
        if (strcmp(scn_point_name((enum scn_point)k), w) == 0) return k;
    return -1;
}

/* on CLIENT.POINT[#N] */
static int parse_trigger(struct parser *p, struct tok *t, struct scn_fault *f) {
    char why[WHY_MAX];
    char *dot, *hash;
    int pt;
    int64_t n;

    if (t->kind != T_WORD || (dot = strchr(t->s, '.')) == NULL)
        return scnp_fail(p, t->col,
                         "expected CLIENT.POINT after 'on', as in on A.after-acquire, "
                         "found %s",
                         scnp_show(p, t));
    *dot = '\0';
    if (scnp_client_find(p, t->s) < 0)
        return scnp_fail(p, t->col,
                         "'%.40s' is not a client declared above; 'on' needs one, as in "
                         "on A.after-acquire",
                         t->s);
    scn_copy_str(f->trigger, sizeof f->trigger, t->s);
    hash = strchr(dot + 1, '#');
    if (hash) {
        *hash = '\0';
        if (scnp_int_parse(hash + 1, 1, COUNT_MAX, "the occurrence after '#'", &n, why) < 0)
            return scnp_fail_why(p, t->col + (int)(hash - t->s) + 1, why);
        f->occurrence = (int)n;
    }
    pt = point_find(dot + 1);
    if (pt < 0)
        return scnp_fail(p, t->col + (int)(dot - t->s) + 1,
                         "unknown point '%.40s'; expected "
                         "during-acquire, after-acquire, before-read, between-read-and-write, "
                         "before-write, after-write, before-release or after-release",
                         dot + 1);
    f->point = (enum scn_point)pt;
    return 0;
}

/* One-node actions: pause NODE [DUR], resume/crash/restart NODE, promote SERVER,
 * kill-replicas SERVER. 0, 1 for a pause of a $NAME that is 0 (no fault), or -1. */
static int act_node(struct parser *p, int i, struct scn_fault *f) {
    char why[WHY_MAX];
    struct tok *t;

    if (i >= p->ntoks)
        return scnp_fail(p, scnp_col_after(p, i), "expected a node after '%s', as in %s %s", p->toks[i - 1].s,
                         p->toks[i - 1].s,
                         f->kind == SCN_FAULT_PROMOTE         ? "S2"
                         : f->kind == SCN_FAULT_KILL_REPLICAS ? "S1"
                                                              : "A");
    t = &p->toks[i];
    if (scnp_check_node(p, t, 0, 0) < 0) return -1;
    if (f->kind == SCN_FAULT_PROMOTE && scnp_server_number(t->s) == 0)
        return scnp_fail(p, t->col,
                         "only a lock server can be promoted; expected "
                         "S1..S%d, found %s",
                         SCN_MAX_SERVERS, scnp_show(p, t));
    if (f->kind == SCN_FAULT_KILL_REPLICAS && scnp_server_number(t->s) == 0)
        return scnp_fail(p, t->col,
                         "only a lock server has replication links to kill; expected "
                         "S1..S%d, found %s",
                         SCN_MAX_SERVERS, scnp_show(p, t));
    scn_copy_str(f->node, sizeof f->node, t->s);
    f->pos.col = t->col;
    i++;
    if (f->kind == SCN_FAULT_PAUSE && i < p->ntoks && p->toks[i].kind == T_WORD) {
        if (scnp_dur_parse(p->toks[i].s, 0, &f->dur_ns, why) < 0) return scnp_fail_why(p, p->toks[i].col, why);
        /* A param turned to 0 (a knob at the low end of range=0s..: a
         * sweep's first column, a slider at its left) is no pause: the
         * line is dropped. A 0 written as such is refused as a slip. */
        if (f->dur_ns == 0 && p->toks[i].pcol) return scnp_need_end(p, i + 1, "the pause") < 0 ? -1 : 1;
        if (f->dur_ns == 0)
            return scnp_fail(p, p->toks[i].col,
                             "a pause of 0 does nothing; give a duration, or "
                             "none to pause until 'resume' (a $param's 0s is no pause)");
        i++;
    }
    return scnp_need_end(p, i, f->kind == SCN_FAULT_PAUSE ? "the pause" : "the node");
}

/* clock NODE step ±DUR [wall|monotonic|both] | drift ±Nppm | slew ±DUR over DUR */
static int act_clock(struct parser *p, int i, struct scn_fault *f) {
    char why[WHY_MAX];
    struct tok *t;
    const char *what;

    if (i >= p->ntoks)
        return scnp_fail(p, scnp_col_after(p, i),
                         "expected a node after 'clock', as in clock S1 "
                         "step +1s");
    t = &p->toks[i];
    if (scnp_check_node(p, t, 0, 0) < 0) return -1;
    scn_copy_str(f->node, sizeof f->node, t->s);
    f->pos.col = t->col;
    if (++i >= p->ntoks)
        return scnp_fail(p, scnp_col_after(p, i),
                         "expected step, drift or slew after 'clock "
                         "%s'",
                         f->node);
    t = &p->toks[i++];
    what = t->s;
    if (strcmp(what, "step") != 0 && strcmp(what, "drift") != 0 && strcmp(what, "slew") != 0)
        return scnp_fail(p, t->col, "unknown clock change %s; expected step, drift or slew", scnp_show(p, t));
    if (i >= p->ntoks || p->toks[i].kind != T_WORD)
        return scnp_fail(p, i < p->ntoks ? p->toks[i].col : scnp_col_after(p, i),
                         "expected a value after '%s', as in %s", what,
                         what[0] == 'd'   ? "drift 200ppm"
                         : what[1] == 't' ? "step +1s"
                                          : "slew -2s over 10s");
    t = &p->toks[i++];
    if (what[0] == 'd') {
        f->kind = SCN_FAULT_CLOCK_DRIFT;
        if (scnp_drift_parse(t->s, &f->ppm, why) < 0) return scnp_fail_why(p, t->col, why);
        return scnp_need_end(p, i, "the drift");
    }
    if (scnp_dur_parse(t->s, 1, &f->delta_ns, why) < 0) return scnp_fail_why(p, t->col, why);
    if (what[1] == 't') {
        f->kind = SCN_FAULT_CLOCK_STEP;
        f->which = SCN_CLOCK_WALL;
        if (i < p->ntoks && p->toks[i].kind == T_WORD) {
            if (scnp_clock_which_parse(p->toks[i].s, &f->which, why) < 0) return scnp_fail_why(p, p->toks[i].col, why);
            i++;
        }
        return scnp_need_end(p, i, "the step");
    }
    f->kind = SCN_FAULT_CLOCK_SLEW;
    if (i >= p->ntoks || strcmp(p->toks[i].s, "over") != 0)
        return scnp_fail(p, i < p->ntoks ? p->toks[i].col : scnp_col_after(p, i),
                         "expected 'over DUR' after the slew, as in slew -2s over 10s");
    if (++i >= p->ntoks || p->toks[i].kind != T_WORD)
        return scnp_fail(p, i < p->ntoks ? p->toks[i].col : scnp_col_after(p, i), "expected a duration after 'over'");
    t = &p->toks[i++];
    if (scnp_dur_parse(t->s, 0, &f->dur_ns, why) < 0) return scnp_fail_why(p, t->col, why);
    if (f->dur_ns == 0)
        return scnp_fail(p, t->col,
                         "a slew needs a time to spread over, more than 0 "
                         "(use step for a jump)");
    return scnp_need_end(p, i, "the slew");
}

/* partition A B | C D | E */
static int act_partition(struct parser *p, int i, struct scn_fault *f) {
    int g = 0, h, k;

    if (i >= p->ntoks)
        return scnp_fail(p, scnp_col_after(p, i),
                         "expected groups of nodes after 'partition', as "
                         "in partition A | S1 S2");
    for (; i < p->ntoks; i++) {
        struct tok *t = &p->toks[i];
        if (t->kind == T_BAR) {
            if (f->group_len[g] == 0) return scnp_fail(p, t->col, "empty group before '|'; expected node names");
            if (++g == 4) return scnp_fail(p, t->col, "more than 4 groups in one partition");
            continue;
        }
        if (scnp_check_node(p, t, 0, 0) < 0) return -1;
        for (h = 0; h <= g; h++)
            for (k = 0; k < f->group_len[h]; k++)
                if (strcmp(f->groups[h][k], t->s) == 0)
                    return scnp_fail(p, t->col,
                                     h == g ? "node '%s' is named twice in one group"
                                            : "node '%s' is in two groups of this partition",
                                     t->s);
        if (f->group_len[g] == SCN_MAX_GROUP)
            return scnp_fail(p, t->col, "more than %d nodes in one partition group (SCN_MAX_GROUP)", SCN_MAX_GROUP);
        scn_copy_str(f->groups[g][f->group_len[g]++], SCN_NAME_MAX, t->s);
    }
    if (f->group_len[g] == 0) return scnp_fail(p, scnp_col_after(p, p->ntoks), "expected node names after '|'");
    if (g == 0)
        return scnp_fail(p, scnp_col_after(p, p->ntoks),
                         "a partition needs two to four groups "
                         "separated by '|', as in partition A | S1 S2");
    f->ngroups = g + 1;
    return 0;
}

/* When: @TIME, +TIME (after the previous @ or + line) or on CLIENT.POINT.
 * Returns the index of the token after it, or -1. */
static int parse_when(struct parser *p, struct scn_fault *f) {
    struct tok *t = &p->toks[0];
    char why[WHY_MAX];
    int i;

    if (t->s[0] == '@' || t->s[0] == '+') {
        sim_ns d;
        char a[48], b[48];
        if (scnp_dur_parse(t->s + 1, 0, &d, why) < 0) return scnp_fail_why(p, t->col + 1, why);
        if (t->s[0] == '@' && p->prev_at_set && d < p->prev_at_ns) {
            scn_format_duration(a, sizeof a, d);
            scn_format_duration(b, sizeof b, p->prev_at_ns);
            return scnp_fail(p, t->col,
                             "time %s is before the previous timed line (%s); timed "
                             "lines must be in time order",
                             a, b);
        }
        if (t->s[0] == '+') {
            if (d > SIM_TIME_MAX - p->prev_at_ns) {
                scn_format_duration(a, sizeof a, p->prev_at_ns);
                scn_format_duration(b, sizeof b, SIM_TIME_MAX);
                return scnp_fail(p, t->col + 1,
                                 "%s after %s is beyond the limit of %s "
                                 "(SIM_TIME_MAX)",
                                 t->s + 1, a, b);
            }
            d += p->prev_at_ns;
        }
        f->at_ns = d;
        p->prev_at_ns = d;
        p->prev_at_set = 1;
        i = 1;
    } else {
        if (p->ntoks < 2)
            return scnp_fail(p, scnp_col_after(p, 1),
                             "expected CLIENT.POINT after 'on', as in "
                             "on A.after-acquire");
        if (parse_trigger(p, &p->toks[1], f) < 0) return -1;
        i = 2;
    }
    return i;
}

int scnp_timed_line(struct parser *p) {
    static const struct {
        const char *name;
        enum scn_fault_kind kind;
    } actions[] = {{"pause", SCN_FAULT_PAUSE},      {"resume", SCN_FAULT_RESUME},
                   {"crash", SCN_FAULT_CRASH},      {"restart", SCN_FAULT_RESTART},
                   {"clock", SCN_FAULT_CLOCK_STEP}, {"partition", SCN_FAULT_PARTITION},
                   {"heal", SCN_FAULT_HEAL},        {"link", SCN_FAULT_LINK},
                   {"promote", SCN_FAULT_PROMOTE},  {"kill-replicas", SCN_FAULT_KILL_REPLICAS}};
    struct scenario *s = p->s;
    struct tok *t = &p->toks[0];
    struct scn_fault *f;
    void *cols = p->fault_col;
    size_t k;
    int i, rc;

    /* The fault is built in place; nfaults only counts it once it is whole. */
    if (scnp_room_for(&cols, &p->fault_col_cap, s->nfaults, sizeof *p->fault_col, 16) < 0)
        return scnp_fail_nomem(p, t->col);
    p->fault_col = cols;
    p->fault_col[s->nfaults] = t->col;
    if (s->nfaults == SCN_MAX_FAULTS)
        return scnp_fail(p, t->col, "more than %d timed lines (SCN_MAX_FAULTS)", SCN_MAX_FAULTS);
    if ((f = scenario_add_fault(s)) == NULL) return scnp_fail_nomem(p, t->col);
    s->nfaults--;
    f->pos.line = p->line;
    if ((i = parse_when(p, f)) < 0) return -1;
    if (i >= p->ntoks)
        return scnp_fail(p, scnp_col_after(p, i),
                         "expected an action after the time: pause, "
                         "resume, crash, restart, clock, partition, heal, link, promote or kill-replicas");
    t = &p->toks[i];
    for (k = 0; k < sizeof actions / sizeof actions[0]; k++)
        if (t->kind == T_WORD && strcmp(t->s, actions[k].name) == 0) break;
    if (k == sizeof actions / sizeof actions[0])
        return scnp_fail(p, t->col,
                         "unknown action %s; expected pause, resume, crash, restart, "
                         "clock, partition, heal, link, promote or kill-replicas",
                         scnp_show(p, t));
    f->kind = actions[k].kind;
    f->pos.col = t->col;
    i++;
    switch (f->kind) {
    case SCN_FAULT_CLOCK_STEP: rc = act_clock(p, i, f); break;
    case SCN_FAULT_PARTITION: rc = act_partition(p, i, f); break;
    case SCN_FAULT_HEAL: rc = scnp_need_end(p, i, "'heal'"); break;
    case SCN_FAULT_LINK: rc = scnp_parse_link(p, i, &f->link, 0); break;
    default: rc = act_node(p, i, f); break;
    }
    if (rc < 0) return -1;
    if (rc == 0) s->nfaults++; /* rc 1: a line that is no fault (a pause of $NAME=0s) */
    return 0;
}

/* ---- Faults that could never act ---- */

/* What a timed line can know of a node: running, paused until a time, or
 * crashed. Faults at named points (on A.after-acquire) happen at times the
 * parser cannot know: a node any of them pauses, resumes, crashes or
 * restarts is not judged here (the run narrates what it ignores). */
enum node_state { NODE_RUNNING, NODE_PAUSED, NODE_CRASHED, NODE_UNKNOWN };

struct node_track {
    const char *name;
    enum node_state state;
    sim_ns paused_until; /* NODE_PAUSED: the pause's end (SIM_TIME_MAX: until resume) */
};

static int is_process_fault(enum scn_fault_kind k) {
    return k == SCN_FAULT_PAUSE || k == SCN_FAULT_RESUME || k == SCN_FAULT_CRASH || k == SCN_FAULT_RESTART;
}

/* The node's entry in tr[*n], added when new. */
static struct node_track *track(struct node_track *tr, int *n, const char *name) {
    int i;

    for (i = 0; i < *n; i++)
        if (strcmp(tr[i].name, name) == 0) return &tr[i];
    tr[*n].name = name;
    tr[*n].state = NODE_RUNNING;
    tr[*n].paused_until = 0;
    return &tr[(*n)++];
}

/* One timed fault f against the node's state; 0, or -1 with why. */
static int step_node(struct node_track *x, const struct scn_fault *f, char *why) {
    char at[48], end[48];

    scn_format_duration(at, sizeof at, f->at_ns);
    if (x->state == NODE_PAUSED && x->paused_until < f->at_ns) x->state = NODE_RUNNING; /* the pause ran out */
    switch (f->kind) {
    case SCN_FAULT_CRASH: x->state = NODE_CRASHED; break;
    case SCN_FAULT_RESTART:
        if (x->state != NODE_CRASHED)
            return WHY("restart %s at %s would do nothing: %s has not crashed before it; "
                       "expected a crash of %s earlier in time",
                       f->node, at, f->node, f->node);
        x->state = NODE_RUNNING;
        break;
    case SCN_FAULT_PAUSE:
        if (x->state == NODE_RUNNING) x->state = NODE_PAUSED, x->paused_until = 0;
        if (x->state == NODE_PAUSED) {
            sim_ns until = f->dur_ns ? f->at_ns + f->dur_ns : SIM_TIME_MAX;
            if (until > x->paused_until) x->paused_until = until;
        }
        break;
    default: /* SCN_FAULT_RESUME */
        if (x->state == NODE_PAUSED) {
            x->state = NODE_RUNNING;
            break;
        }
        if (x->state == NODE_CRASHED)
            return WHY("resume %s at %s would do nothing: %s has crashed; a crashed node "
                       "comes back with restart",
                       f->node, at, f->node);
        if (x->paused_until > 0) {
            scn_format_duration(end, sizeof end, x->paused_until);
            return WHY("resume %s at %s would do nothing: %s's pause ended at %s", f->node, at, f->node, end);
        }
        return WHY("resume %s at %s would do nothing: %s is not paused; expected a pause of "
                   "%s earlier in time, without a duration or still running",
                   f->node, at, f->node, f->node);
    }
    return 0;
}

int scnp_fault_never_acts(const struct scenario *s, char *why) {
    struct node_track *tr;
    int n = 0, i, bad = -1;
    char at[48], dur[48];

    for (i = 0; i < s->nfaults; i++) {
        const struct scn_fault *f = &s->faults[i];
        if (f->point == SCN_POINT_NONE && f->at_ns >= s->duration_ns) {
            scn_format_duration(at, sizeof at, f->at_ns);
            scn_format_duration(dur, sizeof dur, s->duration_ns);
            WHY("this %s at %s would never happen: the run ends at %s (duration); expected a "
                "time before it, or a longer duration",
                scn_fault_name(f->kind), at, dur);
            return i;
        }
    }
    if (s->nfaults <= 0 || (tr = calloc((size_t)(unsigned)s->nfaults, sizeof *tr)) == NULL)
        return -1; /* without memory, leave it to the run */
    for (i = 0; i < s->nfaults; i++)
        if (s->faults[i].point != SCN_POINT_NONE && is_process_fault(s->faults[i].kind))
            track(tr, &n, s->faults[i].node)->state = NODE_UNKNOWN;
    for (i = 0; i < s->nfaults && bad < 0; i++) {
        const struct scn_fault *f = &s->faults[i];
        struct node_track *x;
        if (f->point != SCN_POINT_NONE || !is_process_fault(f->kind)) continue;
        x = track(tr, &n, f->node);
        if (x->state != NODE_UNKNOWN && step_node(x, f, why) < 0) bad = i;
    }
    free(tr);
    return bad;
}

int scnp_check_faults(struct parser *p) {
    char why[WHY_MAX];
    int i = scnp_fault_never_acts(p->s, why);
    const struct scn_fault *f;

    if (i < 0) return 0;
    f = &p->s->faults[i];
    p->line = f->pos.line;
    return scnp_fail_why(p, f->at_ns >= p->s->duration_ns ? p->fault_col[i] : f->pos.col, why);
}
