/* `expect` lines: a metric or the verdict compared with a value, or the
 * shorthand `expect [no] EVENT`, checked after the run by the checker; and
 * what the sources state about one client or one interval (`expect B token
 * = 34`, `expect B acquires at 31s`, `expect double-entry from 31s to 32s`,
 * `expect A write rejected`, `expect stale-write by A`). The metric words
 * come from the metric table (sim/metric.h). */
#include <stdint.h>
#include <string.h>

#include "parse_int.h"

static int cmp_find(const char *w, enum scn_cmp *out) {
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

/* The client name at token i of a per-client expect line: syntax here, that
 * it is a declared client once the whole file is read (scnp_expect_clients). */
static int expect_client_name(struct parser *p, struct scn_expect *e, int i) {
    const struct tok *t = &p->toks[i];

    if (t->kind != T_WORD || !scnp_is_name_syntax(t->s) || strlen(t->s) >= SCN_NAME_MAX)
        return scnp_fail(p, t->col, "expected a client name, found %s", scnp_show(p, t));
    if (strcmp(t->s, "R") == 0 || scnp_server_number(t->s) > 0)
        return scnp_fail(p, t->col,
                         "'%s' is not a client; an expect line names a client here, as in "
                         "expect B token = 34",
                         t->s);
    scn_copy_str(e->client, sizeof e->client, t->s);
    e->client_pos.line = p->line;
    e->client_pos.col = t->col;
    return 0;
}

/* A time at token i into *v ("after WHAT" names the missing word). */
static int expect_time(struct parser *p, int i, const char *after, sim_ns *v) {
    char why[WHY_MAX];

    if (i >= p->ntoks) return scnp_fail(p, scnp_col_after(p, i), "expected a time such as 31s after '%s'", after);
    if (p->toks[i].kind != T_WORD)
        return scnp_fail(p, p->toks[i].col, "expected a time such as 31s, found %s", scnp_show(p, &p->toks[i]));
    if (scnp_dur_parse(p->toks[i].s, 0, v, why) < 0) return scnp_fail_why(p, p->toks[i].col, why);
    return 0;
}

/* Token i is a client name followed by one of these words. */
static int is_client_form(const struct parser *p, int i) {
    if (i + 1 >= p->ntoks || p->toks[i].kind != T_WORD) return 0;
    const char *w = p->toks[i + 1].s;
    return strcmp(w, "token") == 0 || strcmp(w, "acquires") == 0 || strcmp(w, "write") == 0 ||
           strcmp(w, "fenced-out") == 0;
}

/* expect [no] CLIENT write accepted|rejected, [no] CLIENT fenced-out, CLIENT token OP N,
 * CLIENT acquires at T; token i is the client. */
static int expect_client_form(struct parser *p, struct scn_expect *e, int i, int no) {
    if (expect_client_name(p, e, i) < 0) return -1;
    const char *w = p->toks[i + 1].s;
    i += 2;
    if (strcmp(w, "write") == 0) {
        if (i >= p->ntoks || (strcmp(p->toks[i].s, "accepted") != 0 && strcmp(p->toks[i].s, "rejected") != 0))
            return scnp_fail(p, i < p->ntoks ? p->toks[i].col : scnp_col_after(p, i),
                             "expected accepted or rejected after 'write', as in expect A write rejected");
        e->kind = p->toks[i].s[0] == 'a' ? SCN_EXPECT_WRITE_ACCEPTED : SCN_EXPECT_WRITE_REJECTED;
        e->cmp = no ? SCN_CMP_EQ : SCN_CMP_GE;
        e->value = no ? 0 : 1;
        return scnp_need_end(p, i + 1, p->toks[i].s);
    }
    if (strcmp(w, "fenced-out") == 0) { /* expect [no] C fenced-out */
        e->kind = SCN_EXPECT_FENCED_OUT;
        e->cmp = no ? SCN_CMP_EQ : SCN_CMP_GE;
        e->value = no ? 0 : 1;
        return scnp_need_end(p, i, "fenced-out");
    }
    if (no)
        return scnp_fail(p, p->toks[i - 1].col,
                         "'no' goes only with write, fenced-out, stale-write or an "
                         "event; write expect %s %s = 0 or != VALUE instead",
                         e->client, w);
    if (strcmp(w, "acquires") == 0) {
        if (i >= p->ntoks || strcmp(p->toks[i].s, "at") != 0)
            return scnp_fail(p, i < p->ntoks ? p->toks[i].col : scnp_col_after(p, i),
                             "expected 'at' after 'acquires', as in expect B acquires at 31s");
        e->kind = SCN_EXPECT_ACQUIRES_AT;
        e->cmp = SCN_CMP_EQ;
        if (expect_time(p, i + 1, "at", &e->value) < 0) return -1;
        return scnp_need_end(p, i + 2, "the time");
    }
    /* token OP N */
    char why[WHY_MAX];
    e->kind = SCN_EXPECT_TOKEN;
    if (i >= p->ntoks || cmp_find(p->toks[i].s, &e->cmp) < 0)
        return scnp_fail(p, i < p->ntoks ? p->toks[i].col : scnp_col_after(p, i),
                         "expected a comparison after 'token', as in expect B token = 34");
    if (++i >= p->ntoks)
        return scnp_fail(p, scnp_col_after(p, i), "expected a token number after '%s'", p->toks[i - 1].s);
    if (p->toks[i].kind != T_WORD || scnp_int_parse(p->toks[i].s, 0, INT64_MAX, "the token", &e->value, why) < 0)
        return p->toks[i].kind != T_WORD
                       ? scnp_fail(p, p->toks[i].col, "expected a token number, found %s", scnp_show(p, &p->toks[i]))
                       : scnp_fail_why(p, p->toks[i].col, why);
    return scnp_need_end(p, i + 1, "the token number");
}

/* After `expect [no] double-entry` (token i-1) or `stale-write [accepted|
 * rejected]`: `from T1 to T2`, or `by CLIENT`. 1 when the form was one of
 * them (and e is filled or the parser failed: rc in *rc), else 0. */
static int expect_event_tail(struct parser *p, struct scn_expect *e, int i, int no, int *rc) {
    if (i >= p->ntoks || p->toks[i].kind != T_WORD) return 0;
    if (strcmp(p->toks[i].s, "from") == 0 && e->metric == SCN_M_DOUBLE_ENTRIES) {
        if (no)
            *rc = scnp_fail(p, p->toks[i].col,
                            "'no double-entry' takes no interval; write "
                            "expect double-entry from T1 to T2, or expect no double-entry");
        else if (expect_time(p, i + 1, "from", &e->value) < 0) *rc = -1;
        else if (i + 2 >= p->ntoks || strcmp(p->toks[i + 2].s, "to") != 0)
            *rc = scnp_fail(p, i + 2 < p->ntoks ? p->toks[i + 2].col : scnp_col_after(p, i + 2),
                            "expected 'to' and the interval's end, as in expect double-entry from 31s to 32s");
        else if (expect_time(p, i + 3, "to", &e->to_ns) < 0) *rc = -1;
        else if (e->to_ns <= e->value)
            *rc = scnp_fail(p, p->toks[i + 3].col,
                            "a double entry ends after it begins; expected "
                            "a time after %s",
                            p->toks[i + 1].s);
        else {
            e->kind = SCN_EXPECT_DE_SPAN;
            e->cmp = SCN_CMP_EQ;
            *rc = scnp_need_end(p, i + 4, "the interval's end");
        }
        return 1;
    }
    if (strcmp(p->toks[i].s, "by") == 0 && (e->metric == SCN_M_STALE_ACCEPTED || e->metric == SCN_M_STALE_REJECTED)) {
        if (i + 1 >= p->ntoks)
            *rc = scnp_fail(p, scnp_col_after(p, i + 1),
                            "expected a client after 'by', as in "
                            "expect stale-write by A");
        else if (expect_client_name(p, e, i + 1) < 0) *rc = -1;
        else {
            e->kind = e->metric == SCN_M_STALE_ACCEPTED ? SCN_EXPECT_STALE_BY : SCN_EXPECT_STALE_REJECTED_BY;
            *rc = scnp_need_end(p, i + 2, e->client);
        }
        return 1;
    }
    return 0;
}

/* Fill e from tokens 1.. of an expect line. */
static int expect_body(struct parser *p, struct scn_expect *e) {
    char why[WHY_MAX];
    struct tok *t = &p->toks[1];
    int i = 1, k, no = 0;

    if (t->kind != T_WORD)
        return scnp_fail(p, t->col, "expected a metric or verdict after 'expect', found %s", scnp_show(p, t));
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
            return scnp_fail(p, scnp_col_after(p, i),
                             "expected SAFE, UNSAFE or STUCK after "
                             "'verdict'");
        t = &p->toks[i];
        for (k = 0; k < 3; k++)
            if (scnp_same_word_ci(t->s, scn_verdict_name((enum scn_verdict)k))) break;
        if (k == 3 || t->kind != T_WORD)
            return scnp_fail(p, t->col, "unknown verdict %s; expected SAFE, UNSAFE or STUCK", scnp_show(p, t));
        e->value = k;
        return scnp_need_end(p, i + 1, "the verdict");
    }
    if (strcmp(t->s, "no") == 0) {
        no = 1;
        if (++i >= p->ntoks)
            return scnp_fail(p, scnp_col_after(p, i),
                             "expected what should not happen after 'no', "
                             "such as expect no double-entry");
        t = &p->toks[i];
    }
    int sh = 0; /* the word may be used as `expect [no] WORD` */
    k = t->kind == T_WORD ? metric_find(t->s, &sh) : -1;
    if (k < 0 && is_client_form(p, i)) return expect_client_form(p, e, i, no);
    /* Shorthand: expect [no] NAME [accepted|rejected] */
    if (no || (k >= 0 && sh && (i + 1 >= p->ntoks || cmp_find(p->toks[i + 1].s, &e->cmp) < 0))) {
        if (k < 0 || !sh)
            return scnp_fail(p, t->col,
                             "unknown event %s after 'no'; expected double-entry, "
                             "stale-write, lost-update, wrong-release, stuck, failed-acquire or fenced-out",
                             scnp_show(p, t));
        e->metric = (enum scn_metric)k;
        if (i + 1 < p->ntoks && e->metric == SCN_M_STALE_ACCEPTED) {
            const char *q = p->toks[i + 1].s;
            if (strcmp(q, "accepted") == 0) i++;
            else if (strcmp(q, "rejected") == 0) e->metric = SCN_M_STALE_REJECTED, i++;
        }
        e->cmp = no ? SCN_CMP_EQ : SCN_CMP_GE;
        e->value = no ? 0 : 1;
        int rc = 0;
        if (expect_event_tail(p, e, i + 1, no, &rc)) return rc;
        return scnp_need_end(p, i + 1, t->s);
    }
    /* General: expect METRIC OP VALUE */
    if (k < 0)
        return scnp_fail(p, t->col,
                         "unknown metric '%.20s'; expected verdict or a metric of "
                         "docs/metrics.md such as double-entries, double-entry-time, "
                         "stale-writes-accepted, lost-updates, wrong-releases, stuck or "
                         "final-stock",
                         t->s);
    e->metric = (enum scn_metric)k;
    if (++i >= p->ntoks)
        return scnp_fail(p, scnp_col_after(p, i), "expected a comparison after '%s', as in %s >= 1", t->s, t->s);
    t = &p->toks[i];
    if (t->kind != T_WORD || cmp_find(t->s, &e->cmp) < 0)
        return scnp_fail(p, t->col, "unknown comparison %s; expected =, ==, !=, <, <=, > or >=", scnp_show(p, t));
    if (++i >= p->ntoks) return scnp_fail(p, scnp_col_after(p, i), "expected a value after '%s'", t->s);
    t = &p->toks[i];
    if (t->kind != T_WORD) return scnp_fail(p, t->col, "expected a value, found %s", scnp_show(p, t));
    if (metric_info(e->metric)->unit == METRIC_UNIT_NS) {
        sim_ns v;
        if (scnp_dur_parse(t->s, 0, &v, why) < 0) return scnp_fail_why(p, t->col, why);
        e->value = v;
    } else if (scnp_int_parse(t->s, INT64_MIN, INT64_MAX, "the value", &e->value, why) < 0) {
        return scnp_fail_why(p, t->col, why);
    }
    return scnp_need_end(p, i + 1, "the value");
}

int scnp_kw_expect(struct parser *p) {
    struct scenario *s = p->s;
    struct scn_expect e, *dst;
    size_t from, to, n;

    if (p->ntoks < 2)
        return scnp_fail(p, scnp_col_after(p, 1),
                         "expected what to expect after 'expect', as in "
                         "expect verdict SAFE");
    if (s->nexpects == SCN_MAX_EXPECTS)
        return scnp_fail(p, p->toks[0].col, "more than %d expect lines (SCN_MAX_EXPECTS)", SCN_MAX_EXPECTS);
    memset(&e, 0, sizeof e);
    e.client_index = -1;
    e.pos.line = p->line;
    e.pos.col = p->toks[0].col;
    /* The text as written, from the first word after `expect` to the last token. */
    from = (size_t)p->toks[1].col - 1;
    to = (size_t)p->toks[p->ntoks - 1].end - 1;
    n = to - from < sizeof e.text - 1 ? to - from : sizeof e.text - 1;
    memcpy(e.text, p->raw + from, n);
    e.text[n] = '\0';
    if (expect_body(p, &e) < 0) return -1;
    if ((dst = scenario_add_expect(s)) == NULL) return scnp_fail_nomem(p, p->toks[0].col);
    *dst = e;
    return 0;
}

/* Every client an expect line names is declared (anywhere in the file), and
 * they are at most SCN_MAX_EXPECT_CLIENTS: the checker records facts for
 * those only. */
int scnp_expect_clients(struct parser *p) {
    struct scenario *s = p->s;
    char seen[SCN_MAX_EXPECT_CLIENTS][SCN_NAME_MAX];
    int nseen = 0;

    for (int i = 0; i < s->nexpects; i++) {
        struct scn_expect *e = &s->expects[i];
        if (!scn_expect_names_client(e)) continue;
        p->line = e->client_pos.line;
        e->client_index = scnp_client_find(p, e->client);
        if (e->client_index < 0)
            return scnp_fail(p, e->client_pos.col,
                             "unknown client '%s' in an expect line; expected "
                             "a client the scenario declares",
                             e->client);
        int k = 0;
        while (k < nseen && strcmp(seen[k], e->client) != 0) k++;
        if (k == nseen) {
            if (nseen == SCN_MAX_EXPECT_CLIENTS)
                return scnp_fail(p, e->client_pos.col,
                                 "expect lines name more than %d clients "
                                 "(SCN_MAX_EXPECT_CLIENTS); state the others by metrics",
                                 SCN_MAX_EXPECT_CLIENTS);
            scn_copy_str(seen[nseen++], SCN_NAME_MAX, e->client);
        }
    }
    return 0;
}
