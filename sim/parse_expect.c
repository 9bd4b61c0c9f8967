/* `expect` lines: a metric or the verdict compared with a value, or the
 * shorthand `expect [no] EVENT`, checked after the run by the checker. The
 * metric words come from the metric table (sim/metric.h). */
#include <stdint.h>
#include <string.h>

#include "parse_int.h"

static int cmp_find(const char *w, enum scn_cmp *out)
{
    static const struct {
        const char *op;
        enum scn_cmp c;
    } ops[] = {{"=", SCN_CMP_EQ},  {"==", SCN_CMP_EQ}, {"!=", SCN_CMP_NE}, {"<", SCN_CMP_LT},
               {"<=", SCN_CMP_LE}, {">", SCN_CMP_GT},  {">=", SCN_CMP_GE}};
    size_t k;

    for (k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        if (strcmp(ops[k].op, w) == 0) {
            *out = ops[k].c;
            return 0;
        }
    }
    return -1;
}

/* Fill e from tokens 1.. of an expect line. */
static int expect_body(struct parser *p, struct scn_expect *e)
{
    char why[WHY_MAX];
    struct tok *t = &p->toks[1];
    int i = 1, k, no = 0;

    if (t->kind != T_WORD)
        return scnp_fail(p, t->col, "expected a metric or verdict after 'expect', found %s",
                         scnp_show(p, t));
    if (strcmp(t->s, "verdict") == 0) {
        e->metric = SCN_M_VERDICT;
        e->cmp = SCN_CMP_EQ;
        i = 2;
        if (i < p->ntoks && cmp_find(p->toks[i].s, &e->cmp) == 0) {
            if (e->cmp != SCN_CMP_EQ && e->cmp != SCN_CMP_NE)
                return scnp_fail(p, p->toks[i].col, "a verdict compares only with = or !=");
            i++;
        }
        if (i >= p->ntoks)
            return scnp_fail(p, scnp_col_after(p, i), "expected SAFE, UNSAFE or STUCK after "
                             "'verdict'");
        t = &p->toks[i];
        for (k = 0; k < 3; k++)
            if (scnp_same_word_ci(t->s, scn_verdict_name((enum scn_verdict)k)))
                break;
        if (k == 3 || t->kind != T_WORD)
            return scnp_fail(p, t->col, "unknown verdict %s; expected SAFE, UNSAFE or STUCK",
                             scnp_show(p, t));
        e->value = k;
        return scnp_need_end(p, i + 1, "the verdict");
    }
    if (strcmp(t->s, "no") == 0) {
        no = 1;
        if (++i >= p->ntoks)
            return scnp_fail(p, scnp_col_after(p, i), "expected what should not happen after 'no', "
                             "such as expect no double-entry");
        t = &p->toks[i];
    }
    int sh = 0; /* the word may be used as `expect [no] WORD` */
    k = t->kind == T_WORD ? metric_find(t->s, &sh) : -1;
    /* Shorthand: expect [no] NAME [accepted|rejected] */
    if (no || (k >= 0 && sh &&
               (i + 1 >= p->ntoks || cmp_find(p->toks[i + 1].s, &e->cmp) < 0))) {
        if (k < 0 || !sh)
            return scnp_fail(p, t->col, "unknown event %s after 'no'; expected double-entry, "
                             "stale-write, lost-update, wrong-release, stuck or failed-acquire",
                             scnp_show(p, t));
        e->metric = (enum scn_metric)k;
        if (i + 1 < p->ntoks && e->metric == SCN_M_STALE_ACCEPTED) {
            const char *q = p->toks[i + 1].s;
            if (strcmp(q, "accepted") == 0)
                i++;
            else if (strcmp(q, "rejected") == 0)
                e->metric = SCN_M_STALE_REJECTED, i++;
        }
        e->cmp = no ? SCN_CMP_EQ : SCN_CMP_GE;
        e->value = no ? 0 : 1;
        return scnp_need_end(p, i + 1, t->s);
    }
    /* General: expect METRIC OP VALUE */
    if (k < 0)
        return scnp_fail(p, t->col, "unknown metric '%.20s'; expected verdict or a metric of "
                         "docs/metrics.md such as double-entries, double-entry-time, "
                         "stale-writes-accepted, lost-updates, wrong-releases, stuck or "
                         "final-stock", t->s);
    e->metric = (enum scn_metric)k;
    if (++i >= p->ntoks)
        return scnp_fail(p, scnp_col_after(p, i), "expected a comparison after '%s', as in %s >= 1",
                         t->s, t->s);
    t = &p->toks[i];
    if (t->kind != T_WORD || cmp_find(t->s, &e->cmp) < 0)
        return scnp_fail(p, t->col, "unknown comparison %s; expected =, ==, !=, <, <=, > or >=",
                         scnp_show(p, t));
    if (++i >= p->ntoks)
        return scnp_fail(p, scnp_col_after(p, i), "expected a value after '%s'", t->s);
    t = &p->toks[i];
    if (t->kind != T_WORD)
        return scnp_fail(p, t->col, "expected a value, found %s", scnp_show(p, t));
    if (metric_info(e->metric)->unit == METRIC_UNIT_NS) {
        sim_ns v;
        if (scnp_dur_parse(t->s, 0, &v, why) < 0)
            return scnp_fail_why(p, t->col, why);
        e->value = v;
    } else if (scnp_int_parse(t->s, INT64_MIN, INT64_MAX, "the value", &e->value, why) < 0) {
        return scnp_fail_why(p, t->col, why);
    }
    return scnp_need_end(p, i + 1, "the value");
}

int scnp_kw_expect(struct parser *p)
{
    struct scenario *s = p->s;
    struct scn_expect e, *dst;
    size_t from, to, n;

    if (p->ntoks < 2)
        return scnp_fail(p, scnp_col_after(p, 1), "expected what to expect after 'expect', as in "
                         "expect verdict SAFE");
    if (s->nexpects == SCN_MAX_EXPECTS)
        return scnp_fail(p, p->toks[0].col, "more than %d expect lines (SCN_MAX_EXPECTS)",
                         SCN_MAX_EXPECTS);
    memset(&e, 0, sizeof e);
    e.pos.line = p->line;
    e.pos.col = p->toks[0].col;
    /* The text as written, from the first word after `expect` to the last token. */
    from = (size_t)p->toks[1].col - 1;
    to = (size_t)p->toks[p->ntoks - 1].end - 1;
    n = to - from < sizeof e.text - 1 ? to - from : sizeof e.text - 1;
    memcpy(e.text, p->raw + from, n);
    e.text[n] = '\0';
    if (expect_body(p, &e) < 0)
        return -1;
    if ((dst = scenario_add_expect(s)) == NULL)
        return scnp_fail_nomem(p, p->toks[0].col);
    *dst = e;
    return 0;
}
