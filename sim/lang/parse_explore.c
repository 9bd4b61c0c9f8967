/* The `explore` line: the fault budget `locksim explore` may spend, as
 * items separated by ';' (`explore pauses<=2 length=1s..60s; clock-steps<=1
 * on servers delta=-30s..30s; latency-spikes<=3 max=5s; crashes<=1`). Parsed
 * into plain data (struct scn_explore); the engine never reads it. */
#include <stdio.h>
#include <string.h>

#include "parse_int.h"

#define BUDGET_MAX 64 /* faults of one kind per run */

/* Keys each kind takes, in the order of the keyset's slots. */
enum { K_LENGTH, K_DELTA, K_MAX, K_DOWN, K_AT, K_POINTS };

static const char *const kind_keys[SCN_NEM_COUNT] = {
        [SCN_NEM_PAUSE] = "length=, at= or points=",
        [SCN_NEM_CLOCK_STEP] = "delta=, at= or clock=",
        [SCN_NEM_LATENCY] = "max=, length= or at=",
        [SCN_NEM_CRASH] = "down=, at= or points=",
};

/* The defaults of one kind (docs/scenario-format.md, "Exploring"). */
static void budget_default(enum scn_nemesis k, struct scn_budget *b) {
    memset(b, 0, sizeof *b);
    b->which = SCN_CLOCK_WALL;
    switch (k) {
    case SCN_NEM_PAUSE:
        b->targets = SCN_TARGET_CLIENTS;
        b->lo_ns = 1;
        b->hi_ns = 60 * SIM_NS_PER_S;
        b->points = 1;
        break;
    case SCN_NEM_CLOCK_STEP:
        b->targets = SCN_TARGET_SERVERS;
        b->lo_ns = -30 * SIM_NS_PER_S;
        b->hi_ns = 30 * SIM_NS_PER_S;
        break;
    case SCN_NEM_LATENCY:
        b->targets = SCN_TARGET_CLIENTS;
        b->lo_ns = 0;
        b->hi_ns = 5 * SIM_NS_PER_S;
        b->len_lo_ns = SIM_NS_PER_S;
        b->len_hi_ns = 10 * SIM_NS_PER_S;
        break;
    default: /* SCN_NEM_CRASH */
        b->targets = SCN_TARGET_CLIENTS;
        b->lo_ns = SIM_NS_PER_S;
        b->hi_ns = 30 * SIM_NS_PER_S;
        b->points = 1;
        break;
    }
}

/* DUR..DUR (signed when signed_ok) at val, reported at vcol. */
static int dur_range(struct parser *p, char *val, int vcol, int signed_ok, const char *example, sim_ns *lo,
                     sim_ns *hi) {
    char why[WHY_MAX];
    char *dots = strstr(val, "..");

    if (dots == NULL) return scnp_fail(p, vcol, "expected a range MIN..MAX, as in %s, found '%.40s'", example, val);
    *dots = '\0';
    if (scnp_dur_parse(val, signed_ok, lo, why) < 0) return scnp_fail_why(p, vcol, why);
    if (scnp_dur_parse(dots + 2, signed_ok, hi, why) < 0) return scnp_fail_why(p, vcol + (int)(dots - val) + 2, why);
    if (*hi < *lo) return scnp_fail(p, vcol, "range '%s..%s' runs backwards; write MIN..MAX", val, dots + 2);
    *dots = '.';
    return 0;
}

/* DUR..DUR that must reach above 0 (zero_msg otherwise). */
static int nonzero_range(struct parser *p, char *val, int vcol, const char *example, sim_ns *lo, sim_ns *hi,
                         const char *zero_msg) {
    if (dur_range(p, val, vcol, 0, example, lo, hi) < 0) return -1;
    if (*hi == 0) return scnp_fail(p, vcol, "%s", zero_msg);
    return 0;
}

/* on clients|servers|nodes|resource|NAME */
static int target(struct parser *p, struct tok *t, struct scn_budget *b) {
    static const struct {
        const char *word;
        unsigned bits;
    } classes[] = {{"clients", SCN_TARGET_CLIENTS},
                   {"servers", SCN_TARGET_SERVERS},
                   {"nodes", SCN_TARGET_CLIENTS | SCN_TARGET_SERVERS},
                   {"resource", SCN_TARGET_RESOURCE}};
    size_t k;

    if (t->kind != T_WORD)
        return scnp_fail(p, t->col,
                         "expected clients, servers, nodes, resource or a node name "
                         "after 'on', found %s",
                         scnp_show(p, t));
    for (k = 0; k < sizeof classes / sizeof classes[0]; k++) {
        if (strcmp(t->s, classes[k].word) == 0) {
            b->targets = classes[k].bits;
            b->node[0] = '\0';
            return 0;
        }
    }
    if (strchr(t->s, '=') != NULL || scnp_check_node(p, t, 0, 1) < 0)
        return t->kind == T_WORD && strchr(t->s, '=') != NULL
                       ? scnp_fail(p, t->col,
                                   "expected clients, servers, nodes, resource or a node "
                                   "name after 'on', found %s",
                                   scnp_show(p, t))
                       : -1;
    scn_copy_str(b->node, sizeof b->node, t->s);
    b->targets = 0;
    return 0;
}

/* One KEY=VALUE of an item of kind k. */
static int item_key(struct parser *p, enum scn_nemesis k, struct tok *t, struct scn_budget *b, int seen[6]) {
    static const char *const names[6] = {"length", "delta", "max", "down", "at", "points"};
    char *key, *val, why[WHY_MAX];
    int vcol, slot = -1, rc = scnp_kv_split(p, t, &key, &val, &vcol), i;

    if (rc < 0) return -1;
    if (rc == 0)
        return scnp_fail(p, t->col, "expected %s after '%s', found %s", kind_keys[k], scn_nemesis_name(k),
                         scnp_show(p, t));
    for (i = 0; i < 6; i++)
        if (strcmp(key, names[i]) == 0) slot = i;
    if (k == SCN_NEM_CLOCK_STEP && strcmp(key, "clock") == 0)
        slot = K_POINTS; /* the clock= key of a step shares the slot */
    if (slot < 0 || (slot == K_LENGTH && k != SCN_NEM_PAUSE && k != SCN_NEM_LATENCY) ||
        (slot == K_DELTA && k != SCN_NEM_CLOCK_STEP) || (slot == K_MAX && k != SCN_NEM_LATENCY) ||
        (slot == K_DOWN && k != SCN_NEM_CRASH) || (slot == K_POINTS && k == SCN_NEM_LATENCY))
        return scnp_fail(p, t->col, "unknown key '%.40s' for %s; expected %s", key, scn_nemesis_name(k), kind_keys[k]);
    if (seen[slot]) return scnp_fail(p, t->col, "'%s' is given twice (first at col %d)", key, seen[slot]);
    seen[slot] = t->col;
    switch (slot) {
    case K_LENGTH:
        if (k == SCN_NEM_LATENCY)
            return nonzero_range(p, val, vcol, "length=1s..10s", &b->len_lo_ns, &b->len_hi_ns,
                                 "a spike of length 0 does nothing; give a length above 0, as "
                                 "in length=1s..10s");
        if (nonzero_range(p, val, vcol, "length=1s..60s", &b->lo_ns, &b->hi_ns,
                          "a pause of length 0 does nothing; give a length above 0, as in "
                          "length=1s..60s") < 0)
            return -1;
        if (b->lo_ns == 0) b->lo_ns = 1; /* 0s..X means any pause up to X */
        return 0;
    case K_DELTA: return dur_range(p, val, vcol, 1, "delta=-30s..30s", &b->lo_ns, &b->hi_ns);
    case K_DOWN:
        if (dur_range(p, val, vcol, 0, "down=1s..30s", &b->lo_ns, &b->hi_ns) < 0) return -1;
        if (b->lo_ns == 0) b->lo_ns = 1; /* a restart comes after the crash */
        return 0;
    case K_MAX:
        b->lo_ns = 0;
        if (scnp_dur_parse(val, 0, &b->hi_ns, why) < 0) return scnp_fail_why(p, vcol, why);
        if (b->hi_ns == 0)
            return scnp_fail(p, vcol,
                             "a latency spike of at most 0 does nothing; give max= "
                             "above 0, as in max=5s");
        return 0;
    case K_AT:
        return nonzero_range(p, val, vcol, "at=0s..30s", &b->at_lo_ns, &b->at_hi_ns,
                             "at=0s..0s leaves no time to place a fault in; give a window, as "
                             "in at=0s..30s");
    default:
        if (k == SCN_NEM_CLOCK_STEP) {
            if (scnp_clock_which_parse(val, &b->which, why) < 0) return scnp_fail_why(p, vcol, why);
            return 0;
        }
        if (scnp_bool_parse(val, &b->points, why) < 0) return scnp_fail_why(p, vcol, why);
        return 0;
    }
}

/* KIND<=N [on WHO] [KEY=VALUE]... from token *ip to the next ';'. */
static int item(struct parser *p, int *ip) {
    static const char *const kinds[SCN_NEM_COUNT] = {"pauses", "clock-steps", "latency-spikes", "crashes"};
    struct scn_explore *x = &p->s->explore;
    struct tok *t = &p->toks[*ip];
    char why[WHY_MAX], list[160], *le;
    int i = *ip, k, seen[6] = {0};
    int64_t n;
    struct scn_budget b;

    if (t->kind == T_SEMI)
        return scnp_fail(p, t->col,
                         "empty item before ';'; expected pauses<=N, clock-steps<=N, "
                         "latency-spikes<=N or crashes<=N");
    if (t->kind != T_WORD)
        return scnp_fail(p, t->col, "expected a fault kind such as pauses<=2, found %s", scnp_show(p, t));
    le = strstr(t->s, "<=");
    if (le != NULL) *le = '\0';
    for (k = 0; k < SCN_NEM_COUNT; k++)
        if (strcmp(t->s, kinds[k]) == 0) break;
    if (k == SCN_NEM_COUNT) {
        list[0] = '\0';
        scnp_list_closest(list, sizeof list, t->s, kinds, SCN_NEM_COUNT, SCN_NEM_COUNT);
        return scnp_fail(p, t->col, "unknown fault kind '%.40s'; expected %s", t->s, list);
    }
    if (le == NULL)
        return scnp_fail(p, t->col + (int)t->len,
                         "expected '<=N' after '%s', as in %s<=2 (the "
                         "most faults of the kind in one run)",
                         t->s, t->s);
    if (x->k[k].max > 0)
        return scnp_fail(p, t->col,
                         "%s is budgeted twice in this explore line (first at col "
                         "%d)",
                         kinds[k], x->k[k].pos.col);
    if (le[2] == '\0')
        return scnp_fail(p, t->col + (int)(le - t->s) + 2,
                         "expected a count after '<=', as in "
                         "%s<=2",
                         kinds[k]);
    if (scnp_int_parse(le + 2, 1, BUDGET_MAX, "the budget", &n, why) < 0)
        return scnp_fail_why(p, t->col + (int)(le - t->s) + 2, why);
    budget_default((enum scn_nemesis)k, &b);
    b.max = (int)n;
    b.pos.line = p->line;
    b.pos.col = t->col;
    for (i++; i < p->ntoks && p->toks[i].kind != T_SEMI; i++) {
        t = &p->toks[i];
        if (t->kind == T_WORD && strcmp(t->s, "on") == 0) {
            if (i + 1 >= p->ntoks || p->toks[i + 1].kind == T_SEMI)
                return scnp_fail(p, scnp_col_after(p, i + 1),
                                 "expected clients, servers, nodes, "
                                 "resource or a node name after 'on'");
            if (target(p, &p->toks[++i], &b) < 0) return -1;
            continue;
        }
        if (item_key(p, (enum scn_nemesis)k, t, &b, seen) < 0) return -1;
    }
    x->k[k] = b;
    *ip = i;
    return 0;
}

int scnp_kw_explore(struct parser *p) {
    struct scn_explore *x = &p->s->explore;
    int i = 1;

    if (x->given)
        return scnp_fail(p, p->toks[0].col,
                         "duplicate 'explore' line (first on line %d); put "
                         "every fault kind on one line, separated by ';'",
                         x->pos.line);
    if (p->ntoks < 2)
        return scnp_fail(p, scnp_col_after(p, 1),
                         "expected a fault budget after 'explore', as "
                         "in explore pauses<=2 length=1s..60s; crashes<=1");
    x->given = 1;
    x->pos.line = p->line;
    x->pos.col = p->toks[0].col;
    while (i < p->ntoks) {
        if (item(p, &i) < 0) return -1;
        if (i < p->ntoks) { /* at a ';' */
            if (i + 1 >= p->ntoks)
                return scnp_fail(p, scnp_col_after(p, i + 1),
                                 "expected another fault kind after "
                                 "';', or remove the ';'");
            i++;
        }
    }
    return 0;
}

int scnp_check_explore(struct parser *p) {
    const struct scn_explore *x = &p->s->explore;
    int k;

    if (!x->given) return 0;
    for (k = 0; k < SCN_NEM_COUNT; k++) {
        const struct scn_budget *b = &x->k[k];
        char a[48], d[48];
        if (b->max == 0 || b->at_hi_ns == 0 || b->at_lo_ns < p->s->duration_ns) continue;
        scn_format_duration(a, sizeof a, b->at_lo_ns);
        scn_format_duration(d, sizeof d, p->s->duration_ns);
        p->line = b->pos.line;
        return scnp_fail(p, b->pos.col,
                         "the window of %s starts at %s, but the run ends at %s "
                         "(duration); expected at= inside the run",
                         scn_nemesis_name(k), a, d);
    }
    return 0;
}
