/* Parameters in scenarios: `param NAME=VALUE [range=MIN..MAX]` lines, the
 * `$NAME` values that stand for them (expanded in a line's tokens before
 * the line is parsed, so each value is checked by the code that checks the
 * value it stands for), the check that every param is used, and --set of a
 * param, which re-parses the kept source text with the override. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "parse_int.h"

static int is_param_char(int c) { return scnp_is_alpha(c) || scnp_is_digit(c) || c == '-' || c == '_'; }

static int param_find(const struct scenario *s, const char *name) {
    const struct scn_param *q = scenario_param(s, name);

    return q ? (int)(q - s->params) : -1;
}

/* "pause, b_start" for a message: the params declared, near name first. */
static const char *param_list(const struct scenario *s, const char *name, char *buf, size_t n) {
    const char *names[SCN_MAX_PARAMS];
    int k;

    for (k = 0; k < s->nparams; k++) names[k] = s->params[k].name;
    buf[0] = '\0';
    scnp_list_closest(buf, n, name, names, s->nparams, 8);
    return buf;
}

/* ---- range=MIN..MAX ---- */

/* v read as kind: ns for a duration, else an integer. */
static int range_value(enum scn_range_kind kind, const char *v, int64_t *out, char *why) {
    if (kind == SCN_RANGE_DURATION) return scnp_dur_parse(v, 1, out, why);
    return scnp_int_parse(v, INT64_MIN, INT64_MAX, "a value in an integer range", out, why);
}

/* MIN..MAX: both durations or both integers; MIN <= MAX. */
static int range_parse(struct parser *p, char *t, int col, struct scn_param *q) {
    char why[WHY_MAX];
    char *dots = strstr(t, "..");
    sim_ns probe;

    if (dots == NULL) return scnp_fail(p, col, "expected range=MIN..MAX, as in range=0s..60s, found '%.40s'", t);
    *dots = '\0';
    q->range = scnp_dur_parse(t, 1, &probe, why) == 0 ? SCN_RANGE_DURATION : SCN_RANGE_INT;
    if (range_value(q->range, t, &q->min, why) < 0) return scnp_fail(p, col, "range bound '%.40s': %s", t, why);
    if (range_value(q->range, dots + 2, &q->max, why) < 0)
        return scnp_fail(p, col + (int)(dots - t) + 2, "range bound '%.40s': %s", dots + 2, why);
    if (q->max < q->min) return scnp_fail(p, col, "range '%s..%s' runs backwards; write MIN..MAX", t, dots + 2);
    *dots = '.';
    return 0;
}

/* The value (default or override) inside the declared range. */
static int range_check(struct parser *p, const struct scn_param *q, const char *what, int col) {
    char why[WHY_MAX];
    int64_t v;

    if (q->range == SCN_RANGE_NONE) return 0;
    if (range_value(q->range, q->val, &v, why) < 0)
        return scnp_fail(p, col, "the %s of param '%s' does not fit its range: %s", what, q->name, why);
    if (v < q->min || v > q->max) {
        char lo[48], hi[48];
        if (q->range == SCN_RANGE_DURATION) {
            scn_format_duration(lo, sizeof lo, q->min);
            scn_format_duration(hi, sizeof hi, q->max);
        } else {
            snprintf(lo, sizeof lo, "%lld", (long long)q->min);
            snprintf(hi, sizeof hi, "%lld", (long long)q->max);
        }
        return scnp_fail(p, col, "the %s of param '%s' is %s, outside its range %s..%s", what, q->name, q->val, lo, hi);
    }
    return 0;
}

/* ---- param lines ---- */

/* NAME=VALUE: a name, not a header key, not declared before; a plain value. */
static int param_decl(struct parser *p, struct tok *t, struct scn_param *q, int *vcol) {
    char *name, *val, list[200];
    int rc = scnp_kv_split(p, t, &name, &val, vcol);

    if (rc < 0) return -1;
    if (rc == 0)
        return scnp_fail(p, t->col,
                         "expected NAME=VALUE after 'param', as in param pause=27s, "
                         "found %s",
                         scnp_show(p, t));
    if (!scnp_is_name_syntax(name) || strlen(name) >= SCN_OPT_MAX)
        return scnp_fail(p, t->col,
                         "'%.40s' is not a param name; use a letter, then letters, "
                         "digits, '-' or '_' (at most %d)",
                         name, SCN_OPT_MAX - 1);
    if (scnp_is_set_key(name))
        return scnp_fail(p, t->col,
                         "'%s' is a header key (--set %s=... sets it); choose "
                         "another param name",
                         name, name);
    if (param_find(p->s, name) >= 0)
        return scnp_fail(p, t->col, "param '%s' is declared twice (first on line %d)", name,
                         p->s->params[param_find(p->s, name)].pos.line);
    if (strchr(val, '$') != NULL)
        return scnp_fail(p, *vcol + (int)(strchr(val, '$') - val),
                         "a param's value cannot "
                         "use another param; write the value itself, as in param pause=27s");
    if (strlen(val) >= SCN_OPT_MAX)
        return scnp_fail(p, *vcol, "the value of param '%.40s' is longer than %d characters", name, SCN_OPT_MAX - 1);
    if (p->s->nparams == SCN_MAX_PARAMS)
        return scnp_fail(p, t->col,
                         "more than %d param lines (SCN_MAX_PARAMS); the params "
                         "so far are %s",
                         SCN_MAX_PARAMS, param_list(p->s, name, list, sizeof list));
    memset(q, 0, sizeof *q);
    scn_copy_str(q->name, sizeof q->name, name);
    scn_copy_str(q->def, sizeof q->def, val);
    scn_copy_str(q->val, sizeof q->val, val);
    q->pos.line = p->line;
    q->pos.col = t->col;
    return 0;
}

int scnp_kw_param(struct parser *p) {
    struct scn_param q, *dst;
    int vcol, i;

    if (p->ntoks < 2)
        return scnp_fail(p, scnp_col_after(p, 1),
                         "expected NAME=VALUE after 'param', as in "
                         "param pause=27s");
    if (param_decl(p, &p->toks[1], &q, &vcol) < 0) return -1;
    if (p->ntoks > 2) {
        struct tok *t = &p->toks[2];
        char *key, *val;
        int rcol, rc = scnp_kv_split(p, t, &key, &val, &rcol);
        if (rc < 0) return -1;
        if (rc == 0 || strcmp(key, "range") != 0)
            return scnp_fail(p, t->col,
                             "expected range=MIN..MAX or the end of the line after "
                             "the param, found %s",
                             scnp_show(p, t));
        if (range_parse(p, val, rcol, &q) < 0 || scnp_need_end(p, 3, "the range") < 0) return -1;
    }
    if (range_check(p, &q, "default", vcol) < 0) return -1;
    for (i = 0; i < p->nover; i++) {
        if (strcmp(p->over[i].name, q.name) != 0) continue;
        scn_copy_str(q.val, sizeof q.val, p->over[i].val);
        q.overridden = 1;
        if (range_check(p, &q, "value from --set", vcol) < 0) return -1;
    }
    if ((dst = scenario_add_param(p->s)) == NULL) return scnp_fail_nomem(p, p->toks[0].col);
    *dst = q;
    return 0;
}

/* ---- $NAME ---- */

/* Where a '$' may start in word t: the whole word, after @ or +, or after
 * the first '='. Returns its offset, -1 when t has none, -2 (error set)
 * when it is elsewhere. */
static int dollar_at(struct parser *p, const struct tok *t, int first) {
    const char *d = strchr(t->s, '$'), *eq = strchr(t->s, '=');
    int off;

    if (d == NULL) return -1;
    off = (int)(d - t->s);
    if (off == 0 && first)
        return scnp_fail(p, t->col,
                         "a line cannot start with a param; $NAME stands for a "
                         "value"),
               -2;
    if (off == 0 || (off == 1 && (t->s[0] == '@' || t->s[0] == '+')) || (eq != NULL && d == eq + 1)) return off;
    return scnp_fail(p, t->col + off,
                     "'$' starts a param only at the start of a value, as "
                     "in $pause, @$start or ttl=$ttl"),
           -2;
}

/* Expand the $NAME of token t (at offset off) into the arena. */
static int expand_one(struct parser *p, struct tok *t, int off) {
    const char *name = t->s + off + 1, *end = name;
    char list[200], nm[SCN_OPT_MAX];
    const struct scn_param *q;
    size_t vlen;
    int k;

    while (is_param_char((unsigned char)*end)) end++;
    if (end == name) return scnp_fail(p, t->col + off + 1, "expected a param name after '$', as in $pause");
    if (*end != '\0')
        return scnp_fail(p, t->col + (int)(end - t->s),
                         "unexpected '%.20s' after '$%.*s'; a "
                         "param stands for a whole value",
                         end, (int)(end - name), name);
    scn_copy_str(nm, sizeof nm, name);
    k = param_find(p->s, nm);
    if (k < 0 && p->s->nparams == 0)
        return scnp_fail(p, t->col + off,
                         "unknown param '$%.40s'; no param is declared above "
                         "(declare it first, as in param %.40s=27s)",
                         nm, nm);
    if (k < 0)
        return scnp_fail(p, t->col + off,
                         "unknown param '$%.40s'; the params declared above "
                         "are %s",
                         nm, param_list(p->s, nm, list, sizeof list));
    q = &p->s->params[k];
    vlen = strlen(q->val);
    /* scnp_lex_line() reserved room: each expansion needs at most the
     * token's own length plus SCN_OPT_MAX bytes. */
    memcpy(p->arena + p->arena_used, t->s, (size_t)off);
    memcpy(p->arena + p->arena_used + off, q->val, vlen + 1);
    t->s = p->arena + p->arena_used;
    t->len = (size_t)off + vlen;
    t->pcol = t->col + off;
    t->param = k;
    p->arena_used += t->len + 1;
    p->param_used[k] = 1;
    return 0;
}

int scnp_expand_params(struct parser *p) {
    int i;

    if (p->ntoks > 0 && p->toks[0].kind == T_WORD && strcmp(p->toks[0].s, "param") == 0)
        return 0; /* a param line checks its own '$' */
    for (i = 0; i < p->ntoks; i++) {
        struct tok *t = &p->toks[i];
        int off;
        if (t->kind != T_WORD) continue;
        off = dollar_at(p, t, i == 0);
        if (off == -2 || (off >= 0 && expand_one(p, t, off) < 0)) return -1;
    }
    return 0;
}

int scnp_check_params_used(struct parser *p) {
    int k;

    for (k = 0; k < p->s->nparams; k++) {
        const struct scn_param *q = &p->s->params[k];
        if (p->param_used[k]) continue;
        p->line = q->pos.line;
        return scnp_fail(p, q->pos.col,
                         "param '%s' is declared but never used; use it as $%s "
                         "in a value, or remove the line",
                         q->name, q->name);
    }
    return 0;
}
