/* Link and clock lines: `link FROM TO [latency=] [loss=]` (a header line,
 * and the action of a timed `link` line) and the header `clock NODE
 * [drift=] [offset=]`, which --set cannot reach. */
#include <string.h>

#include "parse_int.h"

/* latency= and loss= for network and link lines. */
static int net_value(struct parser *p, int which, char *val, int vcol, struct scn_latency *lat, uint32_t *loss) {
    char why[WHY_MAX];
    int off;

    if (which == 0) {
        if (scnp_latency_parse(val, lat, why, &off) < 0) return scnp_fail_why(p, vcol + off, why);
    } else if (scnp_loss_parse(val, loss, why) < 0) {
        return scnp_fail_why(p, vcol, why);
    }
    return 0;
}

/* FROM TO [latency=..] [loss=..] starting at token i; shared by the header
 * and the timed form. Fields not given are left LAT_UNSET / LOSS_UNSET. */
int scnp_parse_link(struct parser *p, int i, struct scn_link *l, int later) {
    struct keyset ks = {"link", "latency= or loss=", {"latency", "loss"}, {0}};
    int kw = i - 1;

    if (p->ntoks < i + 2)
        return scnp_fail(p, scnp_col_after(p, p->ntoks),
                         "expected two nodes after 'link', as in "
                         "link A S1 latency=50ms (use * for any node)");
    if (scnp_check_node(p, &p->toks[i], 1, later) < 0 || scnp_check_node(p, &p->toks[i + 1], 1, later) < 0) return -1;
    memset(l, 0, sizeof *l);
    scn_copy_str(l->from, sizeof l->from, p->toks[i].s);
    scn_copy_str(l->to, sizeof l->to, p->toks[i + 1].s);
    l->pos.line = p->line;
    l->pos.col = p->toks[i].col;
    l->lat.min_ns = l->lat.max_ns = LAT_UNSET;
    l->loss_ppm = LOSS_UNSET;
    for (i += 2; i < p->ntoks; i++) {
        struct tok *t = &p->toks[i];
        char *key, *val;
        int vcol, k, rc = scnp_kv_split(p, t, &key, &val, &vcol);
        if (rc < 0) return -1;
        if (rc == 0)
            return scnp_fail(p, t->col,
                             "expected latency=DUR or loss=P after the two nodes, "
                             "found %s",
                             scnp_show(p, t));
        if ((k = scnp_key_find(p, &ks, t, key)) < 0 || net_value(p, k, val, vcol, &l->lat, &l->loss_ppm) < 0) return -1;
    }
    if (!ks.col[0] && !ks.col[1])
        return scnp_fail(p, scnp_col_after(p, p->ntoks),
                         "expected latency= or loss= after "
                         "'%s %s %s'",
                         p->toks[kw].s, l->from, l->to);
    return 0;
}

int scnp_kw_link(struct parser *p) {
    struct scenario *s = p->s;
    struct scn_link l, *dst;
    int i;

    if (s->nlinks == SCN_MAX_LINKS)
        return scnp_fail(p, p->toks[0].col,
                         "more than %d link lines "
                         "(SCN_MAX_LINKS)",
                         SCN_MAX_LINKS);
    if (scnp_parse_link(p, 1, &l, 1) < 0) return -1;
    for (i = 0; i < s->nlinks; i++)
        if (strcmp(s->links[i].from, l.from) == 0 && strcmp(s->links[i].to, l.to) == 0)
            return scnp_fail(p, l.pos.col, "link %s -> %s is given twice (first on line %d)", l.from, l.to,
                             s->links[i].pos.line);
    if ((dst = scenario_add_link(s)) == NULL) return scnp_fail_nomem(p, p->toks[0].col);
    *dst = l;
    return 0;
}

int scnp_kw_clock(struct parser *p) {
    struct keyset ks = {"clock", "drift=Nppm or offset=DUR", {"drift", "offset"}, {0}};
    struct scenario *s = p->s;
    struct scn_clock_init c, *dst;
    char why[WHY_MAX];
    struct tok *t;
    int i;

    if (p->ntoks < 2)
        return scnp_fail(p, scnp_col_after(p, 1),
                         "expected a node after 'clock', as in "
                         "clock S1 drift=200ppm");
    t = &p->toks[1];
    if (scnp_check_node(p, t, 0, 1) < 0) return -1;
    for (i = 0; i < s->nclocks; i++)
        if (strcmp(s->clocks[i].node, t->s) == 0)
            return scnp_fail(p, t->col, "clock '%s' is given twice (first on line %d)", t->s, s->clocks[i].pos.line);
    if (s->nclocks == SCN_MAX_CLOCKS) return scnp_fail(p, t->col, "more than %d clock lines", SCN_MAX_CLOCKS);
    memset(&c, 0, sizeof c);
    scn_copy_str(c.node, sizeof c.node, t->s);
    c.pos.line = p->line;
    c.pos.col = t->col;
    for (i = 2; i < p->ntoks; i++) {
        char *key, *val;
        int vcol, rc;
        t = &p->toks[i];
        rc = scnp_kv_split(p, t, &key, &val, &vcol);
        if (rc < 0) return -1;
        if (rc == 0)
            return scnp_fail(p, t->col,
                             "expected drift=Nppm or offset=DUR, found %s (a clock "
                             "change at a time is written '@5s clock S1 step +1s')",
                             scnp_show(p, t));
        switch (scnp_key_find(p, &ks, t, key)) {
        case 0:
            if (scnp_drift_parse(val, &c.drift_ppm, why) < 0) return scnp_fail_why(p, vcol, why);
            break;
        case 1:
            if (scnp_dur_parse(val, 1, &c.wall_offset_ns, why) < 0) return scnp_fail_why(p, vcol, why);
            break;
        default: return -1;
        }
    }
    if (!ks.col[0] && !ks.col[1])
        return scnp_fail(p, scnp_col_after(p, p->ntoks),
                         "expected drift=Nppm or offset=DUR after "
                         "'clock %s'",
                         c.node);
    if ((dst = scenario_add_clock(s)) == NULL) return scnp_fail_nomem(p, p->toks[0].col);
    *dst = c;
    return 0;
}
