/* Header lines of the scenario language, driven by one table of settable
 * keys that `--set KEY=VALUE` (scenario_set) reads too, so a key given on
 * the command line is checked by exactly the code that checks it in a file.
 * (The header lines --set cannot reach, link and clock, are in parse_link.c.) */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "parse_int.h"

/* ---- The settable keys ---- */

/* Each setter checks one value and stores it in s only when it is good:
 * 0, or -1 with one sentence in why and *off the byte of val at fault. */
typedef int (*hdr_setter)(struct scenario *s, char *val, char *why, int *off);

static int set_text(char *dst, const char *what, const char *val, char *why)
{
    size_t n = strlen(val);

    if (n >= SCN_TEXT_MAX)
        return WHY("the %s is %zu bytes long; the limit is %d (SCN_TEXT_MAX - 1)", what, n,
                   SCN_TEXT_MAX - 1);
    memcpy(dst, val, n + 1);
    return 0;
}

static int set_positive_dur(sim_ns *dst, const char *what, const char *val, char *why)
{
    sim_ns v;

    if (scnp_dur_parse(val, 0, &v, why) < 0)
        return -1;
    if (v == 0)
        return WHY("%s must be more than 0", what);
    *dst = v;
    return 0;
}

static int set_count(int64_t *dst, const char *what, int64_t lo, int64_t hi, const char *val,
                     char *why)
{
    int64_t v;

    if (scnp_int_parse(val, lo, hi, what, &v, why) < 0)
        return -1;
    *dst = v;
    return 0;
}

#define SETTER(name) static int name(struct scenario *s, char *val, char *why, int *off)
SETTER(set_title) { (void)off; return set_text(s->title, "title", val, why); }
SETTER(set_description) { (void)off; return set_text(s->description, "description", val, why); }
SETTER(set_purpose) { (void)off; return scnp_purpose_parse(val, &s->purpose, why); }
SETTER(set_seed) { (void)off; return scnp_u64_parse(val, 0, "the seed", &s->seed, why); }
SETTER(set_max_events)
{
    (void)off;
    return scnp_u64_parse(val, 1, "max-events", &s->max_events, why);
}
SETTER(set_duration) { (void)off; return set_positive_dur(&s->duration_ns, "duration", val, why); }
SETTER(set_stuck_after)
{
    (void)off;
    return set_positive_dur(&s->stuck_after_ns, "stuck-after", val, why);
}
SETTER(set_retry) { (void)off; return set_positive_dur(&s->retry_ns, "retry", val, why); }
SETTER(set_stock) { (void)off; return set_count(&s->stock, "stock", 0, COUNT_MAX, val, why); }
SETTER(set_fencing)
{
    (void)off;
    /* Stated only once the value is good: a refused --set changes nothing. */
    int rc = scnp_bool_parse(val, &s->fencing, why);
    if (rc == 0)
        s->fencing_stated = 1;
    return rc;
}
SETTER(set_check)
{
    (void)off;
    if (strcmp(val, "writes") == 0)
        s->check_reads = 0;
    else if (strcmp(val, "reads+writes") == 0)
        s->check_reads = 1;
    else
        return WHY("check '%.40s' is not writes or reads+writes: which operations the resource "
                   "checks the token of", val);
    return 0;
}
SETTER(set_guard)
{
    (void)off;
    if (strcmp(val, "none") == 0)
        s->guard_owner = 0;
    else if (strcmp(val, "owner") == 0)
        s->guard_owner = 1;
    else
        return WHY("guard '%.40s' is not none or owner: whether a write needs the lock service "
                   "to record its writer as the holder", val);
    return 0;
}
SETTER(set_res_timeout) { (void)off; return scnp_dur_parse(val, 0, &s->resource_timeout_ns, why); }
SETTER(set_latency) { return scnp_latency_parse(val, &s->latency, why, off); }
SETTER(set_loss) { (void)off; return scnp_loss_parse(val, &s->loss_ppm, why); }
SETTER(set_servers)
{
    int64_t n;

    (void)off;
    if (set_count(&n, "servers", 1, SCN_MAX_SERVERS, val, why) < 0)
        return -1;
    s->nservers = (int)n;
    return 0;
}
/* A user-written algorithm's shared object: a path with a '/' or ending in
 * ".so" (the front end loads it, relative to the scenario's folder). */
static int is_plugin_path(const char *v)
{
    size_t n = strlen(v);
    if (!(strchr(v, '/') || (n > 3 && strcmp(v + n - 3, ".so") == 0)))
        return 0;
    for (; *v; v++)
        if ((unsigned char)*v <= ' ' || *v == '"' || *v == '\\' || *v == '$')
            return 0;
    return 1;
}

SETTER(set_algo)
{
    (void)off;
    if (is_plugin_path(val) && strlen(val) < SCN_OPT_MAX) {
        scnp_copy_str(s->algo, sizeof s->algo, val);
        return 0;
    }
    if (!scnp_is_opt_key(val) || strlen(val) >= SCN_OPT_MAX)
        return WHY("'%.40s' is not an algorithm name; expected a letter, then letters, digits, "
                   "'-' or '_', or a path to a plugin such as ./my_lock.so (at most %d)", val,
                   SCN_OPT_MAX - 1);
    scnp_copy_str(s->algo, sizeof s->algo, val);
    return 0;
}
#undef SETTER

enum {
    HK_QUOTED = 1,     /* a file gives the value as a quoted string */
    HK_BARE = 2,       /* --set takes KEY alone, without "LINE." */
    HK_POSITIONAL = 4, /* the line's first word, not KEY=VALUE (the algorithm) */
};

/* The table. A row with key NULL is a line of one value (`seed 42`,
 * `--set seed=42`); the others are KEY=VALUE within a line
 * (`resource stock=3`, `--set resource.stock=3`, or `--set stock=3` when
 * bare). The algorithm is the lock line's first word (positional). */
static const struct hdr_key {
    const char *line;  /* the line's keyword in a file */
    const char *key;   /* KEY of KEY=VALUE, or NULL for the line's one value */
    const char *form;  /* how it is written, for messages */
    unsigned flags;
    hdr_setter set;
} hdr_keys[] = {
    {"title", NULL, "title \"...\"", HK_QUOTED, set_title},
    {"description", NULL, "description \"...\"", HK_QUOTED, set_description},
    {"purpose", NULL, "purpose correctness", 0, set_purpose},
    {"seed", NULL, "seed 42", 0, set_seed},
    {"duration", NULL, "duration 120s", 0, set_duration},
    {"stuck-after", NULL, "stuck-after 60s", 0, set_stuck_after},
    {"max-events", NULL, "max-events 1000000", 0, set_max_events},
    {"retry", NULL, "retry 1s", 0, set_retry},
    {"lock", "algo", "lock NAME", HK_BARE | HK_POSITIONAL, set_algo},
    {"lock", "servers", "servers=N", HK_BARE, set_servers},
    {"resource", "stock", "stock=N", HK_BARE, set_stock},
    {"resource", "fencing", "fencing=on|off", HK_BARE, set_fencing},
    {"resource", "timeout", "timeout=DUR", 0, set_res_timeout},
    {"resource", "check", "check=writes|reads+writes", 0, set_check},
    {"resource", "guard", "guard=none|owner", 0, set_guard},
    {"network", "latency", "latency=DUR", HK_BARE, set_latency},
    {"network", "loss", "loss=P", HK_BARE, set_loss},
};

enum { NHDR = (int)(sizeof hdr_keys / sizeof hdr_keys[0]) };
_Static_assert(NHDR <= LINE_KW_MAX, "once_line has a slot per row");

/* The row for KEY within line (key NULL: the line's own value), or -1. */
static int hdr_row(const char *line, const char *key)
{
    int r;

    for (r = 0; r < NHDR; r++)
        if (strcmp(hdr_keys[r].line, line) == 0 &&
            (key == NULL ? hdr_keys[r].key == NULL
                         : hdr_keys[r].key && strcmp(hdr_keys[r].key, key) == 0))
            return r;
    return -1;
}

/* The first row of a line keyword, or -1. */
static int hdr_line(const char *word)
{
    int r;

    for (r = 0; r < NHDR; r++)
        if (strcmp(hdr_keys[r].line, word) == 0)
            return r;
    return -1;
}

/* "stock=N, fencing=on|off or timeout=DUR" (forms) or "stock=, fencing= or
 * timeout=" (keys only) for the KEY=VALUE rows of a line. */
static const char *line_keys(const char *line, int forms, char *buf, size_t n)
{
    int r, k = 0, total = 0;
    size_t len = 0;

    for (r = 0; r < NHDR; r++)
        total += strcmp(hdr_keys[r].line, line) == 0 && !(hdr_keys[r].flags & HK_POSITIONAL);
    buf[0] = '\0';
    for (r = 0; r < NHDR; r++) {
        const struct hdr_key *h = &hdr_keys[r];
        if (strcmp(h->line, line) != 0 || (h->flags & HK_POSITIONAL))
            continue;
        snprintf(buf + len, n - len, "%s%s%s", k == 0 ? "" : k == total - 1 ? " or " : ", ",
                 forms ? h->form : h->key, forms ? "" : "=");
        len = strlen(buf);
        k++;
    }
    return buf;
}

/* ---- Header lines in a file ---- */

static int once(struct parser *p, int row)
{
    const struct tok *t = &p->toks[0];

    if (p->once_line[row])
        return scnp_fail(p, t->col, "duplicate '%s' line; %s was already set on line "
                         "%d", t->s, t->s,
                         p->once_line[row]);
    p->once_line[row] = p->line;
    return 0;
}

/* Apply row r to val, reporting a bad value at vcol. */
static int apply_row(struct parser *p, int r, char *val, int vcol)
{
    char why[WHY_MAX];
    int off = 0;

    if (hdr_keys[r].set(p->s, val, why, &off) < 0)
        return scnp_fail_why(p, vcol + off, why);
    return 0;
}

/* title "..." | seed N | duration DUR ...: one value. */
static int value_line(struct parser *p, int r)
{
    const char *what = p->toks[0].s;
    struct tok *t;

    if (!(hdr_keys[r].flags & HK_QUOTED)) {
        if ((t = scnp_one_value(p, hdr_keys[r].form)) == NULL)
            return -1;
        return apply_row(p, r, t->s, t->col);
    }
    if (p->ntoks < 2)
        return scnp_fail(p, scnp_col_after(p, 1), "expected a quoted string after '%s', as "
                         "in %s \"...\"", what, what);
    t = &p->toks[1];
    if (t->kind != T_STRING)
        return scnp_fail(p, t->col, "expected a quoted string after '%s', found "
                         "%s; write %s \"...\"", what, scnp_show(p, t), what);
    if (scnp_need_end(p, 2, "the string") < 0)
        return -1;
    return apply_row(p, r, t->s, t->col);
}

/* resource KEY=VALUE..., network KEY=VALUE...: each key of the table once. */
static int section_line(struct parser *p)
{
    const char *line = p->toks[0].s;
    int seen[NHDR] = {0}, i;
    char keys[160];

    for (i = 1; i < p->ntoks; i++) {
        struct tok *t = &p->toks[i];
        char *key, *val;
        int vcol, r, rc = scnp_kv_split(p, t, &key, &val, &vcol);
        if (rc < 0)
            return -1;
        if (rc == 0)
            return scnp_fail(p, t->col, "expected %s after '%s', found %s",
                             line_keys(line, 1, keys, sizeof keys), line, scnp_show(p, t));
        r = hdr_row(line, key);
        if (r < 0)
            return scnp_fail(p, t->col, "unknown key '%.40s' for %s; expected %s", key, line,
                             line_keys(line, 0, keys, sizeof keys));
        if (seen[r])
            return scnp_fail(p, t->col, "'%s' is given twice (first at col %d)", key, seen[r]);
        seen[r] = t->col;
        if (apply_row(p, r, val, vcol) < 0)
            return -1;
    }
    /* Reads are checked by the fence: a check without one would do nothing. */
    i = hdr_row("resource", "check");
    if (strcmp(line, "resource") == 0 && seen[i] && p->s->check_reads && !p->s->fencing)
        return scnp_fail(p, seen[i], "check=reads+writes checks the fencing token of reads; it "
                         "needs fencing=on on this line");
    return 0;
}

/* lock NAME [servers=N] [KEY=VALUE...]: keys not in the table are the
 * algorithm's options, checked by it when the engine is built. */
static int lock_line(struct parser *p)
{
    struct scenario *s = p->s;
    int servers_col = 0, i, r = hdr_row("lock", "algo");
    struct tok *t;

    if (p->ntoks < 2)
        return scnp_fail(p, scnp_col_after(p, 1), "expected an algorithm name after 'lock', as in "
                         "lock lease ttl=30s");
    t = &p->toks[1];
    if (t->kind != T_WORD || strchr(t->s, '=') != NULL)
        return scnp_fail(p, t->col, "expected an algorithm name after 'lock', found %s",
                         scnp_show(p, t));
    if (apply_row(p, r, t->s, t->col) < 0)
        return -1;
    s->algo_pos.line = p->line;
    s->algo_pos.col = t->col;
    for (i = 2; i < p->ntoks; i++) {
        char *key, *val, why[WHY_MAX];
        int vcol, rc;
        struct scn_pos pos;
        t = &p->toks[i];
        rc = scnp_kv_split(p, t, &key, &val, &vcol);
        if (rc < 0)
            return -1;
        if (rc == 0)
            return scnp_fail(p, t->col, "expected key=value options after the algorithm, found %s",
                             scnp_show(p, t));
        r = hdr_row("lock", key);
        if (r >= 0 && !(hdr_keys[r].flags & HK_POSITIONAL)) {
            if (servers_col)
                return scnp_fail(p, t->col, "option '%s' is given twice (first at col %d)", key,
                                 servers_col);
            servers_col = t->col;
            if (apply_row(p, r, val, vcol) < 0)
                return -1;
            continue;
        }
        if (scenario_opt(s, key) != NULL)
            return scnp_fail(p, t->col, "option '%.40s' is given twice (first at col %d)", key,
                             scenario_opt(s, key)->pos.col);
        pos.line = p->line;
        pos.col = t->col;
        rc = scnp_opt_put(s, key, val, pos, why);
        if (rc == LSIM_ENOMEM)
            return scnp_fail_nomem(p, t->col);
        if (rc < 0)
            return scnp_fail_why(p, t->col, why);
    }
    return 0;
}

int scnp_kw_header(struct parser *p, const char *word)
{
    int r = hdr_line(word);

    if (r < 0)
        return 1;
    if (once(p, r) < 0)
        return -1;
    if (hdr_keys[r].key == NULL)
        return value_line(p, r);
    if (strcmp(word, "lock") == 0)
        return lock_line(p);
    return section_line(p);
}

/* ---- --set KEY=VALUE ---- */

int scnp_set_fail(struct scn_error *err, int code, int col, const char *fmt, ...)
{
    va_list ap;

    err->pos.line = 1;
    err->pos.col = col;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return code;
}

/* The row --set KEY names: "line" for a one-value line, "line.key", or a
 * bare key; -1 when none. *lock_opt is set when KEY is lock.NAME for a
 * NAME not in the table (an algorithm option). */
static int set_row(const char *key, int *lock_opt)
{
    const char *dot = strchr(key, '.');
    int r;

    *lock_opt = 0;
    if (dot != NULL) {
        for (r = 0; r < NHDR; r++) {
            const struct hdr_key *h = &hdr_keys[r];
            size_t n = strlen(h->line);
            if (h->key && strncmp(key, h->line, n) == 0 && key + n == dot &&
                strcmp(dot + 1, h->key) == 0)
                return r;
        }
        *lock_opt = strncmp(key, "lock.", 5) == 0;
        return -1;
    }
    for (r = 0; r < NHDR; r++) {
        const struct hdr_key *h = &hdr_keys[r];
        if (h->key == NULL ? strcmp(h->line, key) == 0
                           : (h->flags & HK_BARE) && strcmp(h->key, key) == 0)
            return r;
    }
    return -1;
}

/* "unknown key 'K'; expected ..." listing the keys --set takes (those of
 * one line when K names it), likely typos first. */
static int unknown_key(const struct scenario *s, const char *key, struct scn_error *err)
{
    const char *names[NHDR + SCN_MAX_PARAMS];
    char full[NHDR][SCN_OPT_MAX + 16], list[200] = "";
    const char *dot = strchr(key, '.');
    int n = 0, r, k, lines = 0;

    for (r = 0; r < NHDR; r++) {
        const struct hdr_key *h = &hdr_keys[r];
        if (dot && h->key && strncmp(key, h->line, (size_t)(dot - key)) == 0 &&
            strlen(h->line) == (size_t)(dot - key)) {
            snprintf(full[lines], sizeof full[lines], "%s.%s", h->line, h->key);
            names[n++] = full[lines++];
        }
    }
    if (n > 0) {
        scnp_list_closest(list, sizeof list, key, names, n, n);
        return scnp_set_fail(err, LSIM_EUNKNOWN_OPTION, 1, "unknown key '%.40s'; expected %s", key,
                             list);
    }
    for (r = 0; r < NHDR; r++)
        if (hdr_keys[r].key == NULL || (hdr_keys[r].flags & HK_BARE))
            names[n++] = hdr_keys[r].key ? hdr_keys[r].key : hdr_keys[r].line;
    for (k = 0; k < s->nparams; k++)
        names[n++] = s->params[k].name;
    scnp_list_closest(list, sizeof list, dot ? dot + 1 : key, names, n, 8);
    return scnp_set_fail(err, LSIM_EUNKNOWN_OPTION, 1, "unknown key '%.40s'; expected %s, or "
                         "an option of the lock (lock.KEY=VALUE)", key, list);
}

/* A bare key one edit from a param's name (two for names of five
 * characters or more) is taken for a typo of it rather than for a new lock
 * option; lock.KEY=... still reaches the option. */
static int near_param(const struct scenario *s, const char *key)
{
    int k;

    for (k = 0; k < s->nparams; k++) {
        const char *name = s->params[k].name;
        if (scnp_word_distance(key, name) <= (strlen(name) < 5 ? 1 : 2))
            return 1;
    }
    return 0;
}

int scnp_is_set_key(const char *key)
{
    int lock_opt;

    return set_row(key, &lock_opt) >= 0;
}

/* Apply one --set after its KEY and VALUE are split; vcol is VALUE's column. */
static int set_one(struct scenario *s, const char *key, char *val, int vcol,
                   struct scn_error *err)
{
    char why[WHY_MAX];
    int lock_opt, off = 0, rc, r = set_row(key, &lock_opt);
    struct scn_pos pos = {0, 0};
    const char *k = lock_opt ? key + 5 : key;

    if (r >= 0) {
        sim_ns old_duration = s->duration_ns;
        int f, old_fencing = s->fencing, old_check = s->check_reads;
        if (hdr_keys[r].set(s, val, why, &off) < 0)
            return scnp_set_fail(err, LSIM_EBAD_VALUE, vcol + off, "%s", why);
        /* As on the resource line: reads are checked by the fence. */
        if (s->check_reads && !s->fencing) {
            s->fencing = old_fencing;
            s->check_reads = old_check;
            return scnp_set_fail(err, LSIM_EBAD_VALUE, vcol, "check=reads+writes checks the fencing "
                                 "token of reads; it needs fencing=on (--set resource.fencing=on "
                                 "before it)");
        }
        if (hdr_keys[r].set == set_algo)
            s->algo_pos = pos;
        /* A shorter run must still reach every timed fault. */
        if (s->duration_ns != old_duration && (f = scnp_fault_never_acts(s, why)) >= 0) {
            s->duration_ns = old_duration;
            return scnp_set_fail(err, LSIM_EBAD_VALUE, vcol, "%s:%d: %s", s->file,
                                 s->faults[f].pos.line, why);
        }
        return 0;
    }
    if (!lock_opt && strchr(key, '.') != NULL)
        return unknown_key(s, key, err);
    if (!lock_opt && scenario_param(s, key) != NULL)
        return scnp_param_set(s, key, val, vcol, err);
    if (!lock_opt && near_param(s, key))
        return unknown_key(s, key, err);
    if (!scnp_is_opt_key(k))
        return unknown_key(s, key, err);
    /* Anything else is a lock option, validated later by the algorithm. */
    rc = scnp_opt_put(s, k, val, pos, why);
    if (rc == LSIM_ENOMEM)
        return scnp_set_fail(err, LSIM_ENOMEM, 1, "out of memory");
    if (rc < 0)
        return scnp_set_fail(err, LSIM_EBAD_VALUE, lock_opt ? 6 : 1, "%s", why);
    return 0;
}

int scenario_set(struct scenario *s, const char *kv, struct scn_error *err)
{
    char key[SCN_OPT_MAX + 16], val[LINE_MAX_BYTES + 1];
    const char *eq;
    int vcol, rc;
    size_t i;

    memset(err, 0, sizeof *err);
    scnp_copy_str(err->file, sizeof err->file, "--set");
    if (kv == NULL)
        kv = "";
    for (i = 0; kv[i]; i++)
        if ((unsigned char)kv[i] < 0x20 || kv[i] == 0x7f)
            return scnp_set_fail(err, LSIM_EBAD_VALUE, (int)i + 1, "unexpected byte 0x%02x",
                                 (unsigned char)kv[i]);
    eq = strchr(kv, '=');
    if (eq == NULL || eq == kv)
        return scnp_set_fail(err, LSIM_EUSAGE, 1, "expected KEY=VALUE, such as ttl=10s, found "
                             "'%.40s'", kv);
    if ((size_t)(eq - kv) >= sizeof key)
        return scnp_set_fail(err, LSIM_EUNKNOWN_OPTION, 1, "key '%.40s...' is too long", kv);
    memcpy(key, kv, (size_t)(eq - kv));
    key[eq - kv] = '\0';
    vcol = (int)(eq - kv) + 2;
    if (strlen(eq + 1) >= sizeof val)
        return scnp_set_fail(err, LSIM_EBAD_VALUE, vcol, "the value is longer than %d bytes",
                             LINE_MAX_BYTES);
    strcpy(val, eq + 1);
    if (val[0] == '\0')
        return scnp_set_fail(err, LSIM_EBAD_VALUE, vcol, "missing value after '%s='", key);
    rc = set_one(s, key, val, vcol, err);
    if (rc == 0 && scenario_param(s, key) == NULL)
        rc = scnp_param_note_set(s, kv, err);
    return rc;
}
