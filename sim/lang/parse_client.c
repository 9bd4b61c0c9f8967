/* Client lines of the scenario language: `client NAME ...: STEPS` and
 * `clients N ...: STEPS`, their options, and the step programs (identical
 * programs are stored once). */
#include <stdio.h>
#include <string.h>

#include "parse_int.h"

static int same_program(const struct scn_program *a, const struct scn_program *b) {
    int i;

    if (a->nsteps != b->nsteps) return 0;
    for (i = 0; i < a->nsteps; i++) {
        const struct scn_step *x = &a->steps[i], *y = &b->steps[i];
        if (x->kind != y->kind || x->dur_ns != y->dur_ns || x->retry_ns != y->retry_ns ||
            x->jitter_ns != y->jitter_ns || x->tries != y->tries || x->timeout_ns != y->timeout_ns)
            return 0;
    }
    return 1;
}

/* acquire [retry=DUR] [jitter=DUR] [tries=N] [timeout=DUR] */
static int acquire_args(struct parser *p, int *ip, struct scn_step *st) {
    struct keyset ks = {"acquire", "retry=, jitter=, tries= or timeout=", {"retry", "jitter", "tries", "timeout"}, {0}};
    char why[WHY_MAX];
    int i;

    for (i = *ip; i < p->ntoks && p->toks[i].kind != T_SEMI; i++) {
        struct tok *t = &p->toks[i];
        char *key, *val;
        int vcol, k, rc = scnp_kv_split(p, t, &key, &val, &vcol);
        int64_t n;
        if (rc < 0) return -1;
        if (rc == 0)
            return scnp_fail(p, t->col,
                             "expected ';' or retry=, jitter=, tries=, timeout= after "
                             "'acquire', found %s",
                             scnp_show(p, t));
        k = scnp_key_find(p, &ks, t, key);
        if (k < 0) return -1;
        if (k == 2) {
            if (scnp_int_parse(val, 0, COUNT_MAX, "tries", &n, why) < 0) return scnp_fail_why(p, vcol, why);
            st->tries = (int)n;
            continue;
        }
        if (k == 2) {
            if (scnp_int_parse(val, 0, COUNT_MAX, "set", &n, why) < 0) return scnp_fail_why(p, vcol, why);
            st->absolute = 1;
            st->set_value = n;
            continue;
        }
        if (scnp_dur_parse(val, 0, k == 0 ? &st->retry_ns : k == 1 ? &st->jitter_ns : &st->timeout_ns, why) < 0)
            return scnp_fail_why(p, vcol, why);
        if (k == 0 && st->retry_ns == 0) return scnp_fail(p, vcol, "retry must be more than 0");
    }
    *ip = i;
    return 0;
}

/* write [set=V] [tries=N] [backoff=DUR]. set=V: an absolute write of V
 * (a cache entry rebuilt, a status set), which needs no read and which a
 * second writer repeats harmlessly. tries=N: a compare-and-set loop. A write
 * the resource refuses because the data moved under it (a conditional UPDATE
 * that matched 0 rows, a UNIQUE violation) is retried after a back-off that
 * doubles each time, re-reading first, up to N attempts in all. */
static int write_args(struct parser *p, int *ip, struct scn_step *st) {
    struct keyset ks = {"write", "set=, tries= or backoff=", {"tries", "backoff", "set"}, {0}};
    char why[WHY_MAX];
    int i, backoff_col = 0;

    for (i = *ip; i < p->ntoks && p->toks[i].kind != T_SEMI; i++) {
        struct tok *t = &p->toks[i];
        char *key, *val;
        int vcol, k, rc = scnp_kv_split(p, t, &key, &val, &vcol);
        int64_t n;
        if (rc < 0) return -1;
        if (rc == 0)
            return scnp_fail(p, t->col, "expected ';' or set=, tries=, backoff= after 'write', found %s",
                             scnp_show(p, t));
        k = scnp_key_find(p, &ks, t, key);
        if (k < 0) return -1;
        if (k == 0) {
            if (scnp_int_parse(val, 1, SCN_WRITE_TRIES_MAX, "tries", &n, why) < 0) return scnp_fail_why(p, vcol, why);
            st->tries = (int)n;
            continue;
        }
        if (k == 2) {
            if (scnp_int_parse(val, 0, COUNT_MAX, "set", &n, why) < 0) return scnp_fail_why(p, vcol, why);
            st->absolute = 1;
            st->set_value = n;
            continue;
        }
        if (scnp_dur_parse(val, 0, &st->retry_ns, why) < 0) return scnp_fail_why(p, vcol, why);
        if (st->retry_ns == 0) return scnp_fail(p, vcol, "backoff must be more than 0, as in backoff=100ms");
        backoff_col = t->col;
    }
    if (backoff_col && st->tries < 2)
        return scnp_fail(p, backoff_col,
                         "backoff= needs tries=N with N of 2 or more (attempts in all), "
                         "as in write tries=3 backoff=100ms");
    if (st->tries >= 2 && st->retry_ns == 0) st->retry_ns = SCN_WRITE_BACKOFF_DEFAULT_NS;
    *ip = i;
    return 0;
}

/* STEP; STEP; ... from token i to the end of the line. */
static int parse_program(struct parser *p, int i, const char *owner, int *prog) {
    static const char *const kinds[SCN_STEP_COUNT] = {"acquire", "read", "write", "work", "release"};
    struct scenario *s = p->s;
    struct scn_program pr, *dst;
    int colon_end = scnp_col_after(p, i), k;
    char why[WHY_MAX];

    memset(&pr, 0, sizeof pr);
    while (i < p->ntoks) {
        struct tok *t = &p->toks[i];
        struct scn_step *st;
        if (t->kind == T_SEMI)
            return scnp_fail(p, t->col,
                             "empty step before ';'; expected acquire, read, write, "
                             "work or release");
        if (t->kind != T_WORD)
            return scnp_fail(p, t->col,
                             "expected a step (acquire, read, write, work or release), "
                             "found %s",
                             scnp_show(p, t));
        for (k = 0; k < SCN_STEP_COUNT; k++)
            if (strcmp(t->s, kinds[k]) == 0) break;
        if (k == SCN_STEP_COUNT)
            return scnp_fail(p, t->col,
                             "unknown step '%.40s'; expected acquire, read, write, work "
                             "or release",
                             t->s);
        if (pr.nsteps == SCN_MAX_STEPS)
            return scnp_fail(p, t->col, "client '%s' has more than %d steps (SCN_MAX_STEPS)", owner, SCN_MAX_STEPS);
        st = &pr.steps[pr.nsteps++];
        st->kind = (enum scn_step_kind)k;
        st->pos.line = p->line;
        st->pos.col = t->col;
        i++;
        if (k == SCN_STEP_ACQUIRE) {
            if (acquire_args(p, &i, st) < 0) return -1;
        } else if (k == SCN_STEP_WRITE) {
            if (write_args(p, &i, st) < 0) return -1;
        } else if (k == SCN_STEP_WORK) {
            if (i >= p->ntoks || p->toks[i].kind != T_WORD)
                return scnp_fail(p, i < p->ntoks ? p->toks[i].col : scnp_col_after(p, i),
                                 "expected a duration after 'work', as in work 10s");
            if (scnp_dur_parse(p->toks[i].s, 0, &st->dur_ns, why) < 0) return scnp_fail_why(p, p->toks[i].col, why);
            i++;
        }
        if (i < p->ntoks && p->toks[i].kind != T_SEMI)
            return scnp_fail(p, p->toks[i].col,
                             "unexpected %s after '%s'; expected ';' or the end "
                             "of the line",
                             scnp_show(p, &p->toks[i]), kinds[k]);
        if (i < p->ntoks) i++; /* the ';' */
    }
    if (pr.nsteps == 0)
        return scnp_fail(p, colon_end,
                         "client '%s' has no steps; expected steps after ':', as in "
                         "acquire; write; release",
                         owner);
    for (k = 0; k < s->nprograms; k++) {
        if (same_program(&s->programs[k], &pr)) {
            *prog = k;
            return 0;
        }
    }
    if (s->nprograms == SCN_MAX_PROGRAMS)
        return scnp_fail(p, colon_end, "more than %d different client programs (SCN_MAX_PROGRAMS)", SCN_MAX_PROGRAMS);
    if ((dst = scenario_add_program(s)) == NULL) return scnp_fail_nomem(p, colon_end);
    *dst = pr;
    *prog = s->nprograms - 1;
    return 0;
}

/* The options between the name (or count) and the ':' of client and clients
 * lines. Returns the index of the token after the ':'. */
struct client_opts {
    sim_ns start_ns, every_ns, think_ns;
    int64_t repeat;
    int checks_loss;
    char prefix[SCN_NAME_MAX];
    int prefix_col;
};

static int client_opts(struct parser *p, int i, int many, const char *owner, struct client_opts *o) {
    struct keyset ks = {many ? "clients" : "client",
                        many ? "@TIME, prefix=, every=, repeat=, think= or checks-loss="
                             : "@TIME, repeat=, think= or checks-loss=",
                        {"repeat", "think", "checks-loss", "prefix", "every"},
                        {0}};
    char why[WHY_MAX];
    int at_col = 0;

    if (!many) ks.names[3] = NULL;
    for (; i < p->ntoks && p->toks[i].kind != T_COLON; i++) {
        struct tok *t = &p->toks[i];
        char *key, *val;
        int vcol, rc;
        if (t->kind == T_WORD && t->s[0] == '@') {
            if (at_col)
                return scnp_fail(p, t->col,
                                 "the start time is given twice (first at col "
                                 "%d)",
                                 at_col);
            at_col = t->col;
            if (scnp_dur_parse(t->s + 1, 0, &o->start_ns, why) < 0) return scnp_fail_why(p, t->col + 1, why);
            continue;
        }
        rc = scnp_kv_split(p, t, &key, &val, &vcol);
        if (rc < 0) return -1;
        if (rc == 0)
            return scnp_fail(p, t->col, "expected ':' before the steps of %s, found %s", owner, scnp_show(p, t));
        switch (scnp_key_find(p, &ks, t, key)) {
        case 0:
            if (scnp_int_parse(val, 0, COUNT_MAX, "repeat", &o->repeat, why) < 0) return scnp_fail_why(p, vcol, why);
            break;
        case 1:
            if (scnp_dur_parse(val, 0, &o->think_ns, why) < 0) return scnp_fail_why(p, vcol, why);
            break;
        case 2:
            if (scnp_bool_parse(val, &o->checks_loss, why) < 0) return scnp_fail_why(p, vcol, why);
            break;
        case 3:
            if (!scnp_is_name_syntax(val))
                return scnp_fail(p, vcol,
                                 "'%.40s' is not a name prefix; use a letter, then "
                                 "letters, digits, '-' or '_'",
                                 val);
            if (strlen(val) >= SCN_NAME_MAX - 1)
                return scnp_fail(p, vcol,
                                 "prefix '%.40s' is too long; client names have at most "
                                 "%d characters",
                                 val, SCN_NAME_MAX - 1);
            if (val[0] == 'S' && (val[1] == '\0' || scnp_all_digits(val + 1)))
                return scnp_fail(p, vcol,
                                 "prefix '%s' would make names like %s1, which are "
                                 "reserved for lock servers",
                                 val, val);
            scn_copy_str(o->prefix, sizeof o->prefix, val);
            o->prefix_col = vcol;
            break;
        case 4:
            if (scnp_dur_parse(val, 0, &o->every_ns, why) < 0) return scnp_fail_why(p, vcol, why);
            break;
        default: return -1;
        }
    }
    if (i >= p->ntoks)
        return scnp_fail(p, scnp_col_after(p, i),
                         "expected ':' and the steps of %s, as in "
                         "client A: acquire; write; release",
                         owner);
    return i + 1;
}

static struct scn_client *new_client(struct parser *p, const char *name, int col, const struct client_opts *o,
                                     sim_ns start, int prog) {
    struct scn_client *c = scenario_add_client(p->s);

    if (c == NULL) return scnp_fail_nomem(p, col), NULL;
    scn_copy_str(c->name, sizeof c->name, name);
    if (scnp_client_index(p, p->s->nclients - 1) < 0) {
        p->s->nclients--;
        return scnp_fail_nomem(p, col), NULL;
    }
    c->start_ns = start;
    c->program = prog;
    c->repeat = (int)o->repeat;
    c->think_ns = o->think_ns;
    c->ignores_loss = !o->checks_loss;
    c->pos.line = p->line;
    c->pos.col = col;
    return c;
}

/* client NAME [@DUR] [repeat=N] [think=DUR] [checks-loss=yes|no]: STEPS */
int scnp_kw_client(struct parser *p) {
    struct client_opts o = {0, 0, 0, 1, 1, "", 0};
    struct tok *t;
    char owner[64];
    int i, prog;

    if (p->ntoks < 2)
        return scnp_fail(p, scnp_col_after(p, 1),
                         "expected a name after 'client', as in "
                         "client A: acquire; write; release");
    t = &p->toks[1];
    if (scnp_check_new_client(p, t, t->s) < 0) return -1;
    if (p->s->nclients >= SCN_MAX_CLIENTS)
        return scnp_fail(p, t->col, "more than %d clients (SCN_MAX_CLIENTS)", SCN_MAX_CLIENTS);
    snprintf(owner, sizeof owner, "client '%s'", t->s);
    if ((i = client_opts(p, 2, 0, owner, &o)) < 0 || parse_program(p, i, t->s, &prog) < 0) return -1;
    return new_client(p, t->s, t->col, &o, o.start_ns, prog) ? 0 : -1;
}

/* clients N [prefix=P] [@DUR] [every=DUR] [repeat=N] [think=DUR] [checks-loss=yes|no]: STEPS */
int scnp_kw_clients(struct parser *p) {
    struct client_opts o = {0, 0, 0, 1, 1, "C", 0};
    struct scenario *s = p->s;
    char why[WHY_MAX], name[SCN_NAME_MAX + 24], last[SCN_NAME_MAX + 24];
    int64_t n, k;
    int i, prog, ncol;

    if (p->ntoks < 2 || p->toks[1].kind != T_WORD)
        return scnp_fail(p, p->ntoks < 2 ? scnp_col_after(p, 1) : p->toks[1].col,
                         "expected a count after 'clients', as in clients 3: acquire; write; "
                         "release");
    ncol = p->toks[1].col;
    if (scnp_int_parse(p->toks[1].s, 1, SCN_MAX_CLIENTS, "the client count", &n, why) < 0)
        return scnp_fail_why(p, ncol, why);
    if (n > SCN_MAX_CLIENTS - s->nclients)
        return scnp_fail(p, ncol,
                         "%lld more clients would make %lld in all; the limit is %d "
                         "(SCN_MAX_CLIENTS)",
                         (long long)n, (long long)n + s->nclients, SCN_MAX_CLIENTS);
    if ((i = client_opts(p, 2, 1, "the clients", &o)) < 0) return -1;
    snprintf(last, sizeof last, "%s%lld", o.prefix, (long long)n);
    if (strlen(last) >= SCN_NAME_MAX)
        return scnp_fail(p, o.prefix_col ? o.prefix_col : ncol,
                         "client names such as '%s' would "
                         "be longer than %d characters",
                         last, SCN_NAME_MAX - 1);
    if (o.every_ns > 0 && n - 1 > (SIM_TIME_MAX - o.start_ns) / o.every_ns) {
        char lim[48];
        scn_format_duration(lim, sizeof lim, SIM_TIME_MAX);
        return scnp_fail(p, ncol,
                         "the last of %lld clients would start beyond the limit of %s "
                         "(SIM_TIME_MAX)",
                         (long long)n, lim);
    }
    if (parse_program(p, i, "the clients", &prog) < 0) return -1;
    for (k = 0; k < n; k++) {
        int prev;
        snprintf(name, sizeof name, "%s%lld", o.prefix, (long long)(k + 1));
        prev = scnp_client_find(p, name);
        if (prev >= 0)
            return scnp_fail(p, ncol, "client '%s' is declared twice (first on line %d)", name,
                             s->clients[prev].pos.line);
        if (new_client(p, name, ncol, &o, o.start_ns + k * o.every_ns, prog) == NULL) return -1;
    }
    return 0;
}
