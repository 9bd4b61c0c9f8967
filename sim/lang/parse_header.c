/* Header lines of the scenario language, driven by one table of settable
 * keys (scnp_hdr_keys) that `--set KEY=VALUE` (parse_set.c) reads too, so a
 * key given on the command line is checked by exactly the code that checks
 * it in a file.
 * (The header lines --set cannot reach, link and clock, are in parse_link.c.) */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "parse_int.h"

/* ---- The settable keys ---- */


static int set_text(char *dst, const char *what, const char *val, char *why) {
    size_t n = strlen(val);

    if (n >= SCN_TEXT_MAX)
        return WHY("the %s is %zu bytes long; the limit is %d (SCN_TEXT_MAX - 1)", what, n, SCN_TEXT_MAX - 1);
    memcpy(dst, val, n + 1);
    return 0;
}

static int set_positive_dur(sim_ns *dst, const char *what, const char *val, char *why) {
    sim_ns v;

    if (scnp_dur_parse(val, 0, &v, why) < 0) return -1;
    if (v == 0) return WHY("%s must be more than 0", what);
    *dst = v;
    return 0;
}

static int set_count(int64_t *dst, const char *what, int64_t lo, int64_t hi, const char *val, char *why) {
    int64_t v;

    if (scnp_int_parse(val, lo, hi, what, &v, why) < 0) return -1;
    *dst = v;
    return 0;
}

#define SETTER(name) static int name(struct scenario *s, char *val, char *why, int *off)
SETTER(set_title) {
    (void)off;
    return set_text(s->title, "title", val, why);
}
SETTER(set_description) {
    (void)off;
    return set_text(s->description, "description", val, why);
}
SETTER(set_purpose) {
    (void)off;
    return scnp_purpose_parse(val, &s->purpose, why);
}
SETTER(set_seed) {
    (void)off;
    return scnp_u64_parse(val, 0, "the seed", &s->seed, why);
}
SETTER(set_max_events) {
    (void)off;
    return scnp_u64_parse(val, 1, "max-events", &s->max_events, why);
}
SETTER(set_duration) {
    (void)off;
    return set_positive_dur(&s->duration_ns, "duration", val, why);
}
SETTER(set_stuck_after) {
    (void)off;
    return set_positive_dur(&s->stuck_after_ns, "stuck-after", val, why);
}
SETTER(set_retry) {
    (void)off;
    return set_positive_dur(&s->retry_ns, "retry", val, why);
}
SETTER(set_stock) {
    (void)off;
    return set_count(&s->stock, "stock", 0, COUNT_MAX, val, why);
}
SETTER(set_fencing) {
    (void)off;
    /* Stated only once the value is good: a refused --set changes nothing. */
    int rc = scnp_bool_parse(val, &s->fencing, why);
    if (rc == 0) s->fencing_stated = 1;
    return rc;
}
SETTER(set_check) {
    (void)off;
    if (strcmp(val, "writes") == 0) s->check_reads = 0;
    else if (strcmp(val, "reads+writes") == 0) s->check_reads = 1;
    else
        return WHY("check '%.40s' is not writes or reads+writes: which operations the resource "
                   "checks the token of",
                   val);
    return 0;
}
SETTER(set_guard) {
    (void)off;
    if (strcmp(val, "none") == 0) s->guard_owner = 0;
    else if (strcmp(val, "owner") == 0) s->guard_owner = 1;
    else
        return WHY("guard '%.40s' is not none or owner: whether a write needs the lock service "
                   "to record its writer as the holder",
                   val);
    return 0;
}
SETTER(set_res_timeout) {
    (void)off;
    return scnp_dur_parse(val, 0, &s->resource_timeout_ns, why);
}
SETTER(set_latency) { return scnp_latency_parse(val, &s->latency, why, off); }
SETTER(set_loss) {
    (void)off;
    return scnp_loss_parse(val, &s->loss_ppm, why);
}
SETTER(set_servers) {
    int64_t n;

    (void)off;
    if (set_count(&n, "servers", 1, SCN_MAX_SERVERS, val, why) < 0) return -1;
    s->nservers = (int)n;
    return 0;
}
/* A user-written algorithm's shared object: a path with a '/' or ending in
 * ".so" (the front end loads it, relative to the scenario's folder). */
static int is_plugin_path(const char *v) {
    size_t n = strlen(v);
    if (!(strchr(v, '/') || (n > 3 && strcmp(v + n - 3, ".so") == 0))) return 0;
    for (; *v; v++)
        if ((unsigned char)*v <= ' ' || *v == '"' || *v == '\\' || *v == '$') return 0;
    return 1;
}

SETTER(set_algo) {
    (void)off;
    if (is_plugin_path(val) && strlen(val) < SCN_OPT_MAX) {
        scn_copy_str(s->algo, sizeof s->algo, val);
        return 0;
    }
    if (!scnp_is_opt_key(val) || strlen(val) >= SCN_OPT_MAX)
        return WHY("'%.40s' is not an algorithm name; expected a letter, then letters, digits, "
                   "'-' or '_', or a path to a plugin such as ./my_lock.so (at most %d)",
                   val, SCN_OPT_MAX - 1);
    scn_copy_str(s->algo, sizeof s->algo, val);
    return 0;
}
#undef SETTER


/* The table. A row with key NULL is a line of one value (`seed 42`,
 * `--set seed=42`); the others are KEY=VALUE within a line
 * (`resource stock=3`, `--set resource.stock=3`, or `--set stock=3` when
 * bare). The algorithm is the lock line's first word (positional). */
const struct hdr_key scnp_hdr_keys[SCNP_NHDR] = {
        {"title", NULL, "title \"...\"", HK_QUOTED, set_title},
        {"description", NULL, "description \"...\"", HK_QUOTED, set_description},
        {"purpose", NULL, "purpose correctness", 0, set_purpose},
        {"seed", NULL, "seed 42", 0, set_seed},
        {"duration", NULL, "duration 120s", 0, set_duration},
        {"stuck-after", NULL, "stuck-after 60s", 0, set_stuck_after},
        {"max-events", NULL, "max-events 1000000", 0, set_max_events},
        {"retry", NULL, "retry 1s", 0, set_retry},
        {"lock", "algo", "lock NAME", HK_BARE | HK_POSITIONAL | HK_ALGO, set_algo},
        {"lock", "servers", "servers=N", HK_BARE, set_servers},
        {"resource", "stock", "stock=N", HK_BARE, set_stock},
        {"resource", "fencing", "fencing=on|off", HK_BARE, set_fencing},
        {"resource", "timeout", "timeout=DUR", 0, set_res_timeout},
        {"resource", "check", "check=writes|reads+writes", 0, set_check},
        {"resource", "guard", "guard=none|owner", 0, set_guard},
        {"network", "latency", "latency=DUR", HK_BARE, set_latency},
        {"network", "loss", "loss=P", HK_BARE, set_loss},
};

enum { NHDR = SCNP_NHDR };
_Static_assert(NHDR <= LINE_KW_MAX, "once_line has a slot per row");
_Static_assert(sizeof scnp_hdr_keys / sizeof scnp_hdr_keys[0] == SCNP_NHDR, "SCNP_NHDR counts the rows");

/* The row for KEY within line (key NULL: the line's own value), or -1. */
static int hdr_row(const char *line, const char *key) {
    int r;

    for (r = 0; r < NHDR; r++)
        if (strcmp(scnp_hdr_keys[r].line, line) == 0 &&
            (key == NULL ? scnp_hdr_keys[r].key == NULL
                         : scnp_hdr_keys[r].key && strcmp(scnp_hdr_keys[r].key, key) == 0))
            return r;
    return -1;
}

/* The first row of a line keyword, or -1. */
static int hdr_line(const char *word) {
    int r;

    for (r = 0; r < NHDR; r++)
        if (strcmp(scnp_hdr_keys[r].line, word) == 0) return r;
    return -1;
}

/* "stock=N, fencing=on|off or timeout=DUR" (forms) or "stock=, fencing= or
 * timeout=" (keys only) for the KEY=VALUE rows of a line. */
static const char *line_keys(const char *line, int forms, char *buf, size_t n) {
    int r, k = 0, total = 0;
    size_t len = 0;

    for (r = 0; r < NHDR; r++)
        total += strcmp(scnp_hdr_keys[r].line, line) == 0 && !(scnp_hdr_keys[r].flags & HK_POSITIONAL);
    buf[0] = '\0';
    for (r = 0; r < NHDR; r++) {
        const struct hdr_key *h = &scnp_hdr_keys[r];
        if (strcmp(h->line, line) != 0 || (h->flags & HK_POSITIONAL)) continue;
        snprintf(buf + len, n - len, "%s%s%s",
                 k == 0           ? ""
                 : k == total - 1 ? " or "
                                  : ", ",
                 forms ? h->form : h->key, forms ? "" : "=");
        len = strlen(buf);
        k++;
    }
    return buf;
}

/* ---- Header lines in a file ---- */

static int once(struct parser *p, int row) {
    const struct tok *t = &p->toks[0];

    if (p->once_line[row])
        return scnp_fail(p, t->col,
                         "duplicate '%s' line; %s was already set on line "
                         "%d",
                         t->s, t->s, p->once_line[row]);
    p->once_line[row] = p->line;
    return 0;
}

/* Apply row r to val, reporting a bad value at vcol. */
static int apply_row(struct parser *p, int r, char *val, int vcol) {
    char why[WHY_MAX];
    int off = 0;

    if (scnp_hdr_keys[r].set(p->s, val, why, &off) < 0) return scnp_fail_why(p, vcol + off, why);
    return 0;
}

/* title "..." | seed N | duration DUR ...: one value. */
static int value_line(struct parser *p, int r) {
    const char *what = p->toks[0].s;
    struct tok *t;

    if (!(scnp_hdr_keys[r].flags & HK_QUOTED)) {
        if ((t = scnp_one_value(p, scnp_hdr_keys[r].form)) == NULL) return -1;
        return apply_row(p, r, t->s, t->col);
    }
    if (p->ntoks < 2)
        return scnp_fail(p, scnp_col_after(p, 1),
                         "expected a quoted string after '%s', as "
                         "in %s \"...\"",
                         what, what);
    t = &p->toks[1];
    if (t->kind != T_STRING)
        return scnp_fail(p, t->col,
                         "expected a quoted string after '%s', found "
                         "%s; write %s \"...\"",
                         what, scnp_show(p, t), what);
    if (scnp_need_end(p, 2, "the string") < 0) return -1;
    return apply_row(p, r, t->s, t->col);
}

/* resource KEY=VALUE..., network KEY=VALUE...: each key of the table once. */
static int section_line(struct parser *p) {
    const char *line = p->toks[0].s;
    int seen[NHDR] = {0}, i;
    char keys[160];

    for (i = 1; i < p->ntoks; i++) {
        struct tok *t = &p->toks[i];
        char *key, *val;
        int vcol, r, rc = scnp_kv_split(p, t, &key, &val, &vcol);
        if (rc < 0) return -1;
        if (rc == 0)
            return scnp_fail(p, t->col, "expected %s after '%s', found %s", line_keys(line, 1, keys, sizeof keys), line,
                             scnp_show(p, t));
        r = hdr_row(line, key);
        if (r < 0)
            return scnp_fail(p, t->col, "unknown key '%.40s' for %s; expected %s", key, line,
                             line_keys(line, 0, keys, sizeof keys));
        if (seen[r]) return scnp_fail(p, t->col, "'%s' is given twice (first at col %d)", key, seen[r]);
        seen[r] = t->col;
        if (apply_row(p, r, val, vcol) < 0) return -1;
    }
    /* Reads are checked by the fence: a check without one would do nothing. */
    i = hdr_row("resource", "check");
    if (strcmp(line, "resource") == 0 && seen[i] && p->s->check_reads && !p->s->fencing)
        return scnp_fail(p, seen[i],
                         "check=reads+writes checks the fencing token of reads; it "
                         "needs fencing=on on this line");
    return 0;
}

/* lock NAME [servers=N] [KEY=VALUE...]: keys not in the table are the
 * algorithm's options, checked by it when the engine is built. */
static int lock_line(struct parser *p) {
    struct scenario *s = p->s;
    int servers_col = 0, i, r = hdr_row("lock", "algo");
    struct tok *t;

    if (p->ntoks < 2)
        return scnp_fail(p, scnp_col_after(p, 1),
                         "expected an algorithm name after 'lock', as in "
                         "lock lease ttl=30s");
    t = &p->toks[1];
    if (t->kind != T_WORD || strchr(t->s, '=') != NULL)
        return scnp_fail(p, t->col, "expected an algorithm name after 'lock', found %s", scnp_show(p, t));
    if (apply_row(p, r, t->s, t->col) < 0) return -1;
    s->algo_pos.line = p->line;
    s->algo_pos.col = t->col;
    for (i = 2; i < p->ntoks; i++) {
        char *key, *val, why[WHY_MAX];
        int vcol, rc;
        struct scn_pos pos;
        t = &p->toks[i];
        rc = scnp_kv_split(p, t, &key, &val, &vcol);
        if (rc < 0) return -1;
        if (rc == 0)
            return scnp_fail(p, t->col, "expected key=value options after the algorithm, found %s", scnp_show(p, t));
        r = hdr_row("lock", key);
        if (r >= 0 && !(scnp_hdr_keys[r].flags & HK_POSITIONAL)) {
            if (servers_col)
                return scnp_fail(p, t->col, "option '%s' is given twice (first at col %d)", key, servers_col);
            servers_col = t->col;
            if (apply_row(p, r, val, vcol) < 0) return -1;
            continue;
        }
        if (scenario_opt(s, key) != NULL)
            return scnp_fail(p, t->col, "option '%.40s' is given twice (first at col %d)", key,
                             scenario_opt(s, key)->pos.col);
        pos.line = p->line;
        pos.col = t->col;
        rc = scnp_opt_put(s, key, val, pos, why);
        if (rc == LSIM_ENOMEM) return scnp_fail_nomem(p, t->col);
        if (rc < 0) return scnp_fail_why(p, t->col, why);
    }
    return 0;
}

int scnp_kw_header(struct parser *p, const char *word) {
    int r = hdr_line(word);

    if (r < 0) return 1;
    if (once(p, r) < 0) return -1;
    if (scnp_hdr_keys[r].key == NULL) return value_line(p, r);
    if (strcmp(word, "lock") == 0) return lock_line(p);
    return section_line(p);
}

/* ---- --set KEY=VALUE ---- */

/* ---- What --set can name (parse_set.c applies it) ---- */

int scnp_set_row(const char *key, int *lock_opt) {
    const char *dot = strchr(key, '.');
    int r;

    *lock_opt = 0;
    if (dot != NULL) {
        for (r = 0; r < SCNP_NHDR; r++) {
            const struct hdr_key *h = &scnp_hdr_keys[r];
            size_t n = strlen(h->line);
            if (h->key && strncmp(key, h->line, n) == 0 && key + n == dot && strcmp(dot + 1, h->key) == 0) return r;
        }
        *lock_opt = strncmp(key, "lock.", 5) == 0;
        return -1;
    }
    for (r = 0; r < SCNP_NHDR; r++) {
        const struct hdr_key *h = &scnp_hdr_keys[r];
        if (h->key == NULL ? strcmp(h->line, key) == 0 : (h->flags & HK_BARE) && strcmp(h->key, key) == 0) return r;
    }
    return -1;
}

int scnp_is_set_key(const char *key) {
    int lock_opt;

    return scnp_set_row(key, &lock_opt) >= 0;
}
