/* The scenario language: line-oriented text into struct scenario (plain data),
 * the --set overrides, and the value syntaxes (durations, integers, booleans)
 * shared with lock algorithms. The language is described in
 * docs/scenario-format.md; every error names a line, a column and a fix. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"

#define LINE_MAX_BYTES 4096               /* longest line accepted */
#define TEXT_MAX_BYTES ((size_t)16 << 20) /* largest scenario accepted (16 MiB) */
#define WHY_MAX 200                       /* messages from the value parsers */
#define COUNT_MAX 1000000000              /* repeat=, tries=, stock=, #N ... */

/* Link fields left out in a `link` line: "not given". In a header link this
 * means "the network default"; in a timed link, "unchanged". */
#define LAT_UNSET ((sim_ns)-1)
#define LOSS_UNSET UINT32_MAX

#if defined(__GNUC__)
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define PRINTF_LIKE(f, a)
#endif

/* ======================================================================
 * Small text helpers
 * ====================================================================== */

static void copy_str(char *dst, size_t size, const char *src)
{
    size_t n = strlen(src);

    if (n >= size)
        n = size - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

static int all_digits(const char *s)
{
    if (*s == '\0')
        return 0;
    for (; *s; s++)
        if (!is_digit((unsigned char)*s))
            return 0;
    return 1;
}

/* ASCII case-insensitive equality (no locale). */
static int same_word_ci(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        int x = (unsigned char)*a, y = (unsigned char)*b;
        if (x >= 'A' && x <= 'Z')
            x += 'a' - 'A';
        if (y >= 'A' && y <= 'Z')
            y += 'a' - 'A';
        if (x != y)
            return 0;
    }
    return *a == *b;
}

PRINTF_LIKE(3, 4)
static int why_set(char *why, size_t n, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
    return -1;
}
#define WHY(...) why_set(why, WHY_MAX, __VA_ARGS__)

/* A duration as the shortest exact text: 5s, 1.5s, 500ms, 250us, 7ns. */
static void fmt_dur(char *buf, size_t n, sim_ns v)
{
    uint64_t a = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    uint64_t u;
    const char *unit;
    int digits;
    char frac[10];
    uint64_t ip, fr;
    int k;

    if (a >= (uint64_t)SIM_NS_PER_S) {
        u = SIM_NS_PER_S, unit = "s", digits = 9;
    } else if (a >= (uint64_t)SIM_NS_PER_MS) {
        u = SIM_NS_PER_MS, unit = "ms", digits = 6;
    } else if (a >= (uint64_t)SIM_NS_PER_US) {
        u = SIM_NS_PER_US, unit = "us", digits = 3;
    } else {
        u = 1, unit = "ns", digits = 0;
    }
    ip = a / u;
    fr = a % u;
    if (fr == 0) {
        snprintf(buf, n, "%s%llu%s", v < 0 ? "-" : "", (unsigned long long)ip, unit);
        return;
    }
    for (k = digits - 1; k >= 0; k--) {
        frac[k] = (char)('0' + fr % 10);
        fr /= 10;
    }
    frac[digits] = '\0';
    for (k = digits - 1; k > 0 && frac[k] == '0'; k--)
        frac[k] = '\0';
    snprintf(buf, n, "%s%llu.%s%s", v < 0 ? "-" : "", (unsigned long long)ip, frac, unit);
}

/* ======================================================================
 * Value syntaxes. Each takes a NUL-terminated word and, on failure,
 * returns -1 with one sentence in why[WHY_MAX].
 * ====================================================================== */

/* Decimal digits into *out; 0, -1 when not all digits, -2 on overflow. */
static int digits_u64(const char *s, uint64_t *out)
{
    uint64_t v = 0;

    if (!all_digits(s))
        return -1;
    for (; *s; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -2;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/* An integer in [lo, hi]; a sign is accepted only when lo < 0. */
static int int_parse(const char *t, int64_t lo, int64_t hi, const char *what, int64_t *out,
                     char *why)
{
    const char *p = t;
    int neg = 0;
    uint64_t mag;
    int64_t v;
    int rc;

    if (lo < 0 && (*p == '-' || *p == '+')) {
        neg = *p == '-';
        p++;
    }
    rc = digits_u64(p, &mag);
    if (rc == -1 && *t == '-' && lo >= 0 && all_digits(t + 1))
        return WHY("%s must be between %lld and %lld, found '%.40s'", what, (long long)lo,
                   (long long)hi, t);
    if (rc == -1)
        return WHY("expected a whole number for %s, found '%.40s'", what, t);
    if (rc == -2 || (!neg && mag > (uint64_t)hi) ||
        (neg && mag > (uint64_t)0 - (uint64_t)lo))
        return WHY("%s must be between %lld and %lld, found '%.40s'", what, (long long)lo,
                   (long long)hi, t);
    v = neg ? (int64_t)((uint64_t)0 - mag) : (int64_t)mag;
    if (v < lo)
        return WHY("%s must be between %lld and %lld, found '%.40s'", what, (long long)lo,
                   (long long)hi, t);
    *out = v;
    return 0;
}

/* An unsigned 64-bit integer in [lo, UINT64_MAX] (seeds, event counts). */
static int u64_parse(const char *t, uint64_t lo, const char *what, uint64_t *out, char *why)
{
    uint64_t v;
    int rc = digits_u64(t, &v);

    if (rc == -1)
        return WHY("expected a whole number for %s, found '%.40s'", what, t);
    if (rc == -2)
        return WHY("'%.40s' is too large; %s must be at most %llu", t, what,
                   (unsigned long long)UINT64_MAX);
    if (v < lo)
        return WHY("%s must be at least %llu, found '%.40s'", what, (unsigned long long)lo, t);
    *out = v;
    return 0;
}

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* A duration: [sign] digits [. digits] unit, converted exactly to ns with
 * integer arithmetic. A sign is accepted only when signed_ok. */
static int dur_parse(const char *t, int signed_ok, sim_ns *out, char *why)
{
    static const struct {
        const char *name;
        uint64_t ns;
    } units[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000},
                 {"m", 60000000000ull}};
    const char *p = t;
    int neg = 0, big = 0, fd = 0;
    uint64_t ip = 0, fp = 0, pow = 1, u = 0, g, v;
    size_t k;
    char lim[48];

    fmt_dur(lim, sizeof lim, SIM_TIME_MAX);
    if (*p == '+' || *p == '-') {
        if (!signed_ok && *p == '-')
            return WHY("negative duration '%.40s'; expected 0 or more", t);
        if (!signed_ok)
            return WHY("unexpected sign in '%.40s'; only clock steps and slews take a signed "
                       "duration", t);
        neg = *p == '-';
        p++;
    }
    if (!is_digit((unsigned char)*p)) {
        if (*t == '\0')
            return WHY("expected a duration such as 30s or 500ms");
        return WHY("expected a duration such as 30s or 500ms, found '%.40s'", t);
    }
    for (; is_digit((unsigned char)*p); p++) {
        if (ip > 1000000000000000000ull)
            big = 1;
        else
            ip = ip * 10 + (uint64_t)(*p - '0');
    }
    if (*p == '.') {
        p++;
        if (!is_digit((unsigned char)*p))
            return WHY("expected digits after '.' in '%.40s'", t);
        for (; is_digit((unsigned char)*p); p++) {
            if (fd == 9)
                return WHY("too many decimals in '%.40s'; at most 9", t);
            fp = fp * 10 + (uint64_t)(*p - '0');
            pow *= 10;
            fd++;
        }
    }
    if (*p == '\0')
        return WHY("expected a unit (ns, us, ms, s, m) after '%.40s'", t);
    for (k = 0; k < sizeof units / sizeof units[0]; k++)
        if (strcmp(p, units[k].name) == 0)
            u = units[k].ns;
    if (u == 0)
        return WHY("unknown unit '%.20s' in '%.40s'; expected ns, us, ms, s or m", p, t);
    if (big || ip > (uint64_t)SIM_TIME_MAX / u)
        return WHY("duration '%.40s' is beyond the limit of %s (SIM_TIME_MAX)", t, lim);
    v = ip * u;
    /* fp/pow of a unit is exact iff pow/g divides fp, with g = gcd(u, pow);
     * the quotient then stays below u, so nothing overflows. */
    g = gcd_u64(u, pow);
    if (fp % (pow / g) != 0)
        return WHY("'%.40s' is not a whole number of nanoseconds", t);
    v += fp / (pow / g) * (u / g);
    if (v > (uint64_t)SIM_TIME_MAX)
        return WHY("duration '%.40s' is beyond the limit of %s (SIM_TIME_MAX)", t, lim);
    *out = neg ? -(sim_ns)v : (sim_ns)v;
    return 0;
}

static int bool_parse(const char *t, int *out, char *why)
{
    static const char *const yes[] = {"on", "yes", "true"}, *const no[] = {"off", "no", "false"};
    size_t k;

    for (k = 0; k < 3; k++) {
        if (same_word_ci(t, yes[k])) {
            *out = 1;
            return 0;
        }
        if (same_word_ci(t, no[k])) {
            *out = 0;
            return 0;
        }
    }
    return WHY("expected on or off (or yes/no, true/false), found '%.40s'", t);
}

/* A loss probability: 0.5% or 0.005 or 5000ppm, kept exactly in ppm. */
static int loss_parse(const char *t, uint32_t *out, char *why)
{
    const char *p = t;
    size_t n = strlen(t);
    uint64_t ip = 0, f9 = 0, ppm;
    int fd = 0, pct = 0;

    if (n > 3 && strcmp(t + n - 3, "ppm") == 0) {
        char num[WHY_MAX];
        int64_t v;
        if (n - 3 >= sizeof num)
            return WHY("expected a loss such as 0.5%%, 0.005 or 5000ppm, found '%.40s'", t);
        memcpy(num, t, n - 3);
        num[n - 3] = '\0';
        if (int_parse(num, 0, 1000000, "loss in ppm", &v, why) < 0)
            return -1;
        *out = (uint32_t)v;
        return 0;
    }
    if (!is_digit((unsigned char)*p))
        return WHY("expected a loss such as 0.5%%, 0.005 or 5000ppm, found '%.40s'", t);
    for (; is_digit((unsigned char)*p); p++) {
        ip = ip * 10 + (uint64_t)(*p - '0');
        if (ip > 1000)
            return WHY("loss '%.40s' is more than 100%%", t);
    }
    if (*p == '.') {
        p++;
        if (!is_digit((unsigned char)*p))
            return WHY("expected digits after '.' in '%.40s'", t);
        for (; is_digit((unsigned char)*p); p++) {
            if (fd == 9) {
                if (*p != '0')
                    return WHY("loss '%.40s' is finer than one part per million", t);
                continue;
            }
            f9 = f9 * 10 + (uint64_t)(*p - '0');
            fd++;
        }
    }
    for (; fd < 9; fd++)
        f9 *= 10;
    if (*p == '%' && p[1] == '\0')
        pct = 1;
    else if (*p != '\0')
        return WHY("expected a loss such as 0.5%%, 0.005 or 5000ppm, found '%.40s'", t);
    if (pct) {
        if (f9 % 100000 != 0)
            return WHY("loss '%.40s' is finer than one part per million", t);
        ppm = ip * 10000 + f9 / 100000;
        if (ppm > 1000000)
            return WHY("loss '%.40s' is more than 100%%", t);
    } else {
        if (f9 % 1000 != 0)
            return WHY("loss '%.40s' is finer than one part per million", t);
        ppm = ip * 1000000 + f9 / 1000;
        if (ppm > 1000000)
            return WHY("loss '%.40s' is more than 1 (100%%)", t);
    }
    *out = (uint32_t)ppm;
    return 0;
}

/* A latency: DUR (fixed) or DUR..DUR (uniform). On failure *errcol is the
 * offset within t of the part at fault. */
static int latency_parse(char *t, struct scn_latency *out, char *why, int *errcol)
{
    char *dots = strstr(t, "..");
    sim_ns lo, hi;

    *errcol = 0;
    if (dots == NULL) {
        if (dur_parse(t, 0, &lo, why) < 0)
            return -1;
        out->min_ns = out->max_ns = lo;
        return 0;
    }
    *dots = '\0';
    if (dur_parse(t, 0, &lo, why) < 0) {
        *dots = '.';
        return -1;
    }
    *errcol = (int)(dots - t) + 2;
    if (dur_parse(dots + 2, 0, &hi, why) < 0) {
        *dots = '.';
        return -1;
    }
    *dots = '.';
    if (hi < lo) {
        *errcol = 0;
        return WHY("latency range '%.40s' runs backwards; write MIN..MAX", t);
    }
    out->min_ns = lo;
    out->max_ns = hi;
    return 0;
}

/* A clock drift: a signed integer followed by ppm, |drift| <= 500000. */
static int drift_parse(const char *t, int64_t *out, char *why)
{
    size_t n = strlen(t);
    char num[WHY_MAX];

    if (n <= 3 || n - 3 >= sizeof num || strcmp(t + n - 3, "ppm") != 0)
        return WHY("expected a drift in ppm, such as 200ppm or -50ppm, found '%.40s'", t);
    memcpy(num, t, n - 3);
    num[n - 3] = '\0';
    return int_parse(num, -500000, 500000, "drift in ppm", out, why);
}

/* Option keys and algorithm names: a letter, then letters, digits, - _ . */
static int is_opt_key(const char *s)
{
    if (!is_alpha((unsigned char)*s))
        return 0;
    for (s++; *s; s++)
        if (!is_alpha((unsigned char)*s) && !is_digit((unsigned char)*s) && *s != '-' &&
            *s != '_' && *s != '.')
            return 0;
    return 1;
}

/* Store or replace a lock option. */
static int opt_put(struct scenario *s, const char *key, const char *val, struct scn_pos pos,
                   char *why)
{
    struct scn_opt *o = (struct scn_opt *)scenario_opt(s, key);

    if (!is_opt_key(key))
        return WHY("'%.40s' is not an option name; use a letter, then letters, digits, '-' "
                   "or '_'", key);
    if (strlen(key) >= SCN_OPT_MAX)
        return WHY("option name '%.40s' is longer than %d characters", key, SCN_OPT_MAX - 1);
    if (strlen(val) >= SCN_OPT_MAX)
        return WHY("the value of '%.40s' is longer than %d characters", key, SCN_OPT_MAX - 1);
    if (o == NULL) {
        if (s->nopts == SCN_MAX_OPTS)
            return WHY("more than %d lock options (SCN_MAX_OPTS)", SCN_MAX_OPTS);
        if ((o = scenario_add_opt(s)) == NULL)
            return WHY("out of memory");
        copy_str(o->key, sizeof o->key, key);
    }
    copy_str(o->val, sizeof o->val, val);
    o->pos = pos;
    return 0;
}

static int purpose_parse(const char *t, enum scn_purpose *out, char *why)
{
    if (strcmp(t, "correctness") == 0)
        *out = SCN_PURPOSE_CORRECTNESS;
    else if (strcmp(t, "efficiency") == 0)
        *out = SCN_PURPOSE_EFFICIENCY;
    else
        return WHY("unknown purpose '%.40s'; expected correctness or efficiency", t);
    return 0;
}

/* ---- The public helpers for lock algorithms ---- */

int scn_parse_duration(const char *text, sim_ns *out)
{
    char why[WHY_MAX];

    return text ? dur_parse(text, 0, out, why) : -1;
}

int scn_parse_int(const char *text, int64_t *out)
{
    char why[WHY_MAX];

    return text ? int_parse(text, INT64_MIN, INT64_MAX, "the value", out, why) : -1;
}

int scn_parse_bool(const char *text, int *out)
{
    char why[WHY_MAX];

    return text ? bool_parse(text, out, why) : -1;
}

/* ======================================================================
 * The line parser
 * ====================================================================== */

enum tok_kind { T_WORD, T_STRING, T_COLON, T_SEMI, T_BAR };

struct tok {
    enum tok_kind kind;
    char *s;    /* NUL-terminated text in the arena (strings decoded) */
    size_t len; /* bytes in s */
    int col;    /* 1-based byte column of the first byte (the quote for strings) */
    int end;    /* column just after the token */
};

/* Header lines that may appear once. */
enum { KW_TITLE, KW_DESCRIPTION, KW_PURPOSE, KW_SEED, KW_DURATION, KW_STUCK_AFTER,
       KW_MAX_EVENTS, KW_RETRY, KW_LOCK, KW_RESOURCE, KW_NETWORK, KW_ONCE_COUNT };

/* A node named by a header line (link, clock), checked once every client is known. */
struct later_node {
    char name[SCN_NAME_MAX];
    struct scn_pos pos;
};

struct parser {
    struct scenario *s;
    struct scn_error *err;
    int line;
    const char *raw; /* the current line (not NUL-terminated) */
    size_t rawlen;
    struct tok *toks;           /* owned: the current line's tokens, toks_cap of room */
    int ntoks, toks_cap;
    char *arena;                /* owned: their text, arena_cap bytes (2 * line + 8) */
    size_t arena_cap;
    char show[64];              /* one token rendered for a message */
    int once_line[KW_ONCE_COUNT]; /* line of each once-only header line, 0 = not yet */
    sim_ns prev_at_ns;          /* time of the previous @ or + line */
    int prev_at_set;
    int *hash;                  /* client names: index + 1, 0 = empty slot */
    size_t hash_cap;            /* power of two */
    struct later_node *later;   /* owned: nlater used of later_cap, at most LATER_MAX */
    int nlater, later_cap;
};

/* Node names that header lines may give before the clients are declared. */
#define LATER_MAX (2 * SCN_MAX_LINKS + SCN_MAX_CLOCKS)

/* Room for one more element in a parser array (nothing is preallocated, so
 * a parse touches memory in proportion to the text). 0, or -1 on OOM. */
static int room_for(void **arr, int *cap, int n, size_t size, int first)
{
    void *a;
    int ncap;

    if (n < *cap)
        return 0;
    ncap = *cap ? *cap * 2 : first;
    a = realloc(*arr, (size_t)ncap * size);
    if (a == NULL)
        return -1;
    *arr = a;
    *cap = ncap;
    return 0;
}

PRINTF_LIKE(3, 4)
static int fail(struct parser *p, int col, const char *fmt, ...)
{
    va_list ap;

    p->err->pos.line = p->line;
    p->err->pos.col = col;
    va_start(ap, fmt);
    vsnprintf(p->err->msg, sizeof p->err->msg, fmt, ap);
    va_end(ap);
    return -1;
}

static int fail_why(struct parser *p, int col, const char *why)
{
    return fail(p, col, "%s", why);
}

/* A token as it reads in a message: 'word', ':' or "string". */
static const char *show(struct parser *p, const struct tok *t)
{
    if (t->kind == T_STRING)
        snprintf(p->show, sizeof p->show, "\"%.40s\"", t->s);
    else
        snprintf(p->show, sizeof p->show, "'%.40s'", t->s);
    return p->show;
}

/* The column just after token i-1: where something missing was expected. */
static int col_after(const struct parser *p, int i)
{
    return i > 0 ? p->toks[i - 1].end : 1;
}

/* Fail unless token i is past the end of the line. */
static int need_end(struct parser *p, int i, const char *after)
{
    if (i < p->ntoks)
        return fail(p, p->toks[i].col, "unexpected %s after %s; expected the end of the line",
                    show(p, &p->toks[i]), after);
    return 0;
}

/* Split a key=value word in place. Returns 1 with key and val set, 0 when
 * the word has no '=', -1 (error set) when the key or the value is empty. */
static int kv_split(struct parser *p, struct tok *t, char **key, char **val, int *vcol)
{
    char *eq;

    *key = *val = NULL;
    *vcol = t->col;
    if (t->kind != T_WORD || (eq = strchr(t->s, '=')) == NULL)
        return 0;
    if (eq == t->s)
        return fail(p, t->col, "expected a key before '=' in '%.40s'", t->s);
    *eq = '\0';
    *key = t->s;
    *val = eq + 1;
    *vcol = t->col + (int)(eq - t->s) + 1;
    if (**val == '\0')
        return fail(p, *vcol, "missing value after '%.40s='", t->s);
    return 1;
}

/* The fixed keys of one line, each allowed once. */
struct keyset {
    const char *what;     /* "resource" */
    const char *expected; /* "stock= or fencing=" */
    const char *names[6];
    int col[6];           /* where each was first given, 0 = not yet */
};

static int key_find(struct parser *p, struct keyset *ks, const struct tok *t, const char *key)
{
    int k;

    for (k = 0; k < 6 && ks->names[k]; k++) {
        if (strcmp(ks->names[k], key) != 0)
            continue;
        if (ks->col[k])
            return fail(p, t->col, "'%s' is given twice (first at col %d)", key, ks->col[k]);
        ks->col[k] = t->col;
        return k;
    }
    return fail(p, t->col, "unknown key '%.40s' for %s; expected %s", key, ks->what,
                ks->expected);
}

/* ---- Client names ---- */

static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static int client_find(const struct parser *p, const char *name)
{
    size_t i;

    if (p->hash_cap == 0)
        return -1;
    for (i = name_hash(name) & (p->hash_cap - 1); p->hash[i]; i = (i + 1) & (p->hash_cap - 1))
        if (strcmp(p->s->clients[p->hash[i] - 1].name, name) == 0)
            return p->hash[i] - 1;
    return -1;
}

/* Index client idx (already in s->clients); 0 or -1 on OOM. */
static int client_index(struct parser *p, int idx)
{
    size_t i;

    if ((size_t)(idx + 1) * 2 > p->hash_cap) {
        size_t ncap = p->hash_cap ? p->hash_cap * 2 : 64;
        int *h = calloc(ncap, sizeof *h), j;
        if (h == NULL)
            return -1;
        free(p->hash);
        p->hash = h;
        p->hash_cap = ncap;
        for (j = 0; j < idx; j++) {
            for (i = name_hash(p->s->clients[j].name) & (ncap - 1); h[i]; i = (i + 1) & (ncap - 1))
                ;
            h[i] = j + 1;
        }
    }
    for (i = name_hash(p->s->clients[idx].name) & (p->hash_cap - 1); p->hash[i];
         i = (i + 1) & (p->hash_cap - 1))
        ;
    p->hash[i] = idx + 1;
    return 0;
}

static int is_name_syntax(const char *s)
{
    if (!is_alpha((unsigned char)*s))
        return 0;
    for (s++; *s; s++)
        if (!is_alpha((unsigned char)*s) && !is_digit((unsigned char)*s) && *s != '-' && *s != '_')
            return 0;
    return 1;
}

/* R is the resource; S followed by digits is a lock server. */
static int is_reserved(const char *s)
{
    return strcmp(s, "R") == 0 || (s[0] == 'S' && all_digits(s + 1));
}

/* 1..SCN_MAX_SERVERS for S1..S15 (no leading zero), else 0. */
static int server_number(const char *s)
{
    int64_t n;
    char why[WHY_MAX];

    if (s[0] != 'S' || s[1] == '0' || !all_digits(s + 1) || strlen(s) > 3)
        return 0;
    if (int_parse(s + 1, 1, SCN_MAX_SERVERS, "server", &n, why) < 0)
        return 0;
    return (int)n;
}

/* Check a new client's name: syntax, length, not reserved, not taken. */
static int check_new_client(struct parser *p, const struct tok *t, const char *name)
{
    int prev;

    if (t->kind != T_WORD)
        return fail(p, t->col, "expected a client name, found %s", show(p, t));
    if (!is_name_syntax(name))
        return fail(p, t->col, "'%.40s' is not a client name; names start with a letter, then "
                    "letters, digits, '-' or '_'", name);
    if (strlen(name) >= SCN_NAME_MAX)
        return fail(p, t->col, "client name '%.40s' is longer than %d characters", name,
                    SCN_NAME_MAX - 1);
    if (is_reserved(name))
        return fail(p, t->col, "'%s' is a reserved name (R is the resource, S1..S15 are the lock "
                    "servers); choose another client name", name);
    prev = client_find(p, name);
    if (prev >= 0)
        return fail(p, t->col, "client '%s' is declared twice (first on line %d)", name,
                    p->s->clients[prev].pos.line);
    return 0;
}

/* Check a node named by a line: R, S1..S15, a client, or "*" when star_ok.
 * Timed lines need the client declared above; header lines (later != 0)
 * are checked at the end of the file. */
static int check_node(struct parser *p, const struct tok *t, int star_ok, int later)
{
    const char *s = t->s;

    if (t->kind != T_WORD)
        return fail(p, t->col, "expected a node name, found %s", show(p, t));
    if (star_ok && strcmp(s, "*") == 0)
        return 0;
    if (strcmp(s, "R") == 0)
        return 0;
    if (s[0] == 'S' && all_digits(s + 1)) {
        if (server_number(s) == 0)
            return fail(p, t->col, "no lock server '%.40s'; lock servers are S1 to S%d", s,
                        SCN_MAX_SERVERS);
        return 0;
    }
    if (!is_name_syntax(s) || strlen(s) >= SCN_NAME_MAX)
        return fail(p, t->col, "'%.40s' is not a node name; expected a client, R, or a lock "
                    "server S1..S%d%s", s, SCN_MAX_SERVERS, star_ok ? " (or * for all)" : "");
    if (later) {
        struct later_node *l;
        void *arr = p->later;
        if (p->nlater == LATER_MAX)
            return fail(p, t->col, "too many node names in header lines");
        if (room_for(&arr, &p->later_cap, p->nlater, sizeof *p->later, 8) < 0)
            return fail(p, t->col, "out of memory");
        p->later = arr;
        l = &p->later[p->nlater++];
        copy_str(l->name, sizeof l->name, s);
        l->pos.line = p->line;
        l->pos.col = t->col;
        return 0;
    }
    if (client_find(p, s) < 0)
        return fail(p, t->col, "unknown node '%.40s'; expected a client declared above, R, or a "
                    "lock server S1..S%d", s, SCN_MAX_SERVERS);
    return 0;
}

/* ---- Header lines ---- */

static int once(struct parser *p, int kw)
{
    const struct tok *t = &p->toks[0];

    if (p->once_line[kw])
        return fail(p, t->col, "duplicate '%s' line; %s was already set on line %d", t->s, t->s,
                    p->once_line[kw]);
    p->once_line[kw] = p->line;
    return 0;
}

/* The single word after the keyword; NULL (error set) when missing or followed by more. */
static struct tok *one_value(struct parser *p, const char *example)
{
    struct tok *t;

    if (p->ntoks < 2)
        return fail(p, col_after(p, 1), "expected a value after '%s', as in %s", p->toks[0].s,
                    example), NULL;
    t = &p->toks[1];
    if (t->kind != T_WORD)
        return fail(p, t->col, "expected a value after '%s', found %s", p->toks[0].s,
                    show(p, t)), NULL;
    if (need_end(p, 2, "the value") < 0)
        return NULL;
    return t;
}

static int kw_text(struct parser *p, int kw, char *dst)
{
    const char *what = p->toks[0].s;
    const struct tok *t;

    if (once(p, kw) < 0)
        return -1;
    if (p->ntoks < 2)
        return fail(p, col_after(p, 1), "expected a quoted string after '%s', as in %s \"...\"",
                    what, what);
    t = &p->toks[1];
    if (t->kind != T_STRING)
        return fail(p, t->col, "expected a quoted string after '%s', found %s; write %s \"...\"",
                    what, show(p, t), what);
    if (t->len >= SCN_TEXT_MAX)
        return fail(p, t->col, "the %s is %zu bytes long; the limit is %d (SCN_TEXT_MAX - 1)",
                    what, t->len, SCN_TEXT_MAX - 1);
    if (need_end(p, 2, "the string") < 0)
        return -1;
    memcpy(dst, t->s, t->len + 1);
    return 0;
}

static int kw_purpose(struct parser *p)
{
    char why[WHY_MAX];
    struct tok *t;

    if (once(p, KW_PURPOSE) < 0 || (t = one_value(p, "purpose correctness")) == NULL)
        return -1;
    if (purpose_parse(t->s, &p->s->purpose, why) < 0)
        return fail_why(p, t->col, why);
    return 0;
}

static int kw_seed(struct parser *p)
{
    char why[WHY_MAX];
    struct tok *t;

    if (once(p, KW_SEED) < 0 || (t = one_value(p, "seed 42")) == NULL)
        return -1;
    if (u64_parse(t->s, 0, "the seed", &p->s->seed, why) < 0)
        return fail_why(p, t->col, why);
    return 0;
}

static int kw_max_events(struct parser *p)
{
    char why[WHY_MAX];
    struct tok *t;

    if (once(p, KW_MAX_EVENTS) < 0 || (t = one_value(p, "max-events 1000000")) == NULL)
        return -1;
    if (u64_parse(t->s, 1, "max-events", &p->s->max_events, why) < 0)
        return fail_why(p, t->col, why);
    return 0;
}

/* duration, stuck-after, retry: one positive duration. */
static int kw_positive_dur(struct parser *p, int kw, const char *example, sim_ns *dst)
{
    char why[WHY_MAX];
    struct tok *t;
    sim_ns v;

    if (once(p, kw) < 0 || (t = one_value(p, example)) == NULL)
        return -1;
    if (dur_parse(t->s, 0, &v, why) < 0)
        return fail_why(p, t->col, why);
    if (v == 0)
        return fail(p, t->col, "%s must be more than 0", p->toks[0].s);
    *dst = v;
    return 0;
}

static int kw_lock(struct parser *p)
{
    struct scenario *s = p->s;
    char why[WHY_MAX];
    int servers_col = 0, i;
    struct tok *t;

    if (once(p, KW_LOCK) < 0)
        return -1;
    if (p->ntoks < 2)
        return fail(p, col_after(p, 1), "expected an algorithm name after 'lock', as in "
                    "lock lease ttl=30s");
    t = &p->toks[1];
    if (t->kind != T_WORD || strchr(t->s, '=') != NULL)
        return fail(p, t->col, "expected an algorithm name after 'lock', found %s",
                    show(p, t));
    if (!is_opt_key(t->s) || t->len >= SCN_OPT_MAX)
        return fail(p, t->col, "'%.40s' is not an algorithm name; expected a letter, then "
                    "letters, digits, '-' or '_' (at most %d)", t->s, SCN_OPT_MAX - 1);
    memcpy(s->algo, t->s, t->len + 1);
    s->algo_pos.line = p->line;
    s->algo_pos.col = t->col;
    for (i = 2; i < p->ntoks; i++) {
        char *key, *val;
        int vcol, rc;
        struct scn_pos pos;
        t = &p->toks[i];
        rc = kv_split(p, t, &key, &val, &vcol);
        if (rc < 0)
            return -1;
        if (rc == 0)
            return fail(p, t->col, "expected key=value options after the algorithm, found %s",
                        show(p, t));
        if (strcmp(key, "servers") == 0) {
            int64_t n;
            if (servers_col)
                return fail(p, t->col, "option 'servers' is given twice (first at col %d)",
                            servers_col);
            servers_col = t->col;
            if (int_parse(val, 1, SCN_MAX_SERVERS, "servers", &n, why) < 0)
                return fail_why(p, vcol, why);
            s->nservers = (int)n;
            continue;
        }
        if (scenario_opt(s, key) != NULL)
            return fail(p, t->col, "option '%.40s' is given twice (first at col %d)", key,
                        scenario_opt(s, key)->pos.col);
        pos.line = p->line;
        pos.col = t->col;
        if (opt_put(s, key, val, pos, why) < 0)
            return fail_why(p, t->col, why);
    }
    return 0;
}

static int kw_resource(struct parser *p)
{
    struct keyset ks = {"resource", "stock=, fencing= or timeout=", {"stock", "fencing", "timeout"}, {0}};
    char why[WHY_MAX];
    int i;

    if (once(p, KW_RESOURCE) < 0)
        return -1;
    for (i = 1; i < p->ntoks; i++) {
        struct tok *t = &p->toks[i];
        char *key, *val;
        int vcol, rc = kv_split(p, t, &key, &val, &vcol);
        if (rc < 0)
            return -1;
        if (rc == 0)
            return fail(p, t->col, "expected stock=N, fencing=on|off or timeout=DUR after 'resource', "
                        "found %s", show(p, t));
        switch (key_find(p, &ks, t, key)) {
        case 0: {
            int64_t v;
            if (int_parse(val, 0, COUNT_MAX, "stock", &v, why) < 0)
                return fail_why(p, vcol, why);
            p->s->stock = v;
            break;
        }
        case 1:
            if (bool_parse(val, &p->s->fencing, why) < 0)
                return fail_why(p, vcol, why);
            break;
        case 2:
            if (dur_parse(val, 0, &p->s->resource_timeout_ns, why) < 0)
                return fail_why(p, vcol, why);
            break;
        default:
            return -1;
        }
    }
    return 0;
}

/* latency= and loss= for network and link lines. */
static int net_value(struct parser *p, int which, char *val, int vcol, struct scn_latency *lat,
                     uint32_t *loss)
{
    char why[WHY_MAX];
    int off;

    if (which == 0) {
        if (latency_parse(val, lat, why, &off) < 0)
            return fail_why(p, vcol + off, why);
    } else if (loss_parse(val, loss, why) < 0) {
        return fail_why(p, vcol, why);
    }
    return 0;
}

static int kw_network(struct parser *p)
{
    struct keyset ks = {"network", "latency= or loss=", {"latency", "loss"}, {0}};
    int i;

    if (once(p, KW_NETWORK) < 0)
        return -1;
    for (i = 1; i < p->ntoks; i++) {
        struct tok *t = &p->toks[i];
        char *key, *val;
        int vcol, k, rc = kv_split(p, t, &key, &val, &vcol);
        if (rc < 0)
            return -1;
        if (rc == 0)
            return fail(p, t->col, "expected latency=DUR or loss=P after 'network', found %s",
                        show(p, t));
        if ((k = key_find(p, &ks, t, key)) < 0 ||
            net_value(p, k, val, vcol, &p->s->latency, &p->s->loss_ppm) < 0)
            return -1;
    }
    return 0;
}

/* FROM TO [latency=..] [loss=..] starting at token i; shared by the header
 * and the timed form. Fields not given are left LAT_UNSET / LOSS_UNSET. */
static int parse_link(struct parser *p, int i, struct scn_link *l, int later)
{
    struct keyset ks = {"link", "latency= or loss=", {"latency", "loss"}, {0}};
    int kw = i - 1;

    if (p->ntoks < i + 2)
        return fail(p, col_after(p, p->ntoks), "expected two nodes after 'link', as in "
                    "link A S1 latency=50ms (use * for any node)");
    if (check_node(p, &p->toks[i], 1, later) < 0 || check_node(p, &p->toks[i + 1], 1, later) < 0)
        return -1;
    memset(l, 0, sizeof *l);
    copy_str(l->from, sizeof l->from, p->toks[i].s);
    copy_str(l->to, sizeof l->to, p->toks[i + 1].s);
    l->pos.line = p->line;
    l->pos.col = p->toks[i].col;
    l->lat.min_ns = l->lat.max_ns = LAT_UNSET;
    l->loss_ppm = LOSS_UNSET;
    for (i += 2; i < p->ntoks; i++) {
        struct tok *t = &p->toks[i];
        char *key, *val;
        int vcol, k, rc = kv_split(p, t, &key, &val, &vcol);
        if (rc < 0)
            return -1;
        if (rc == 0)
            return fail(p, t->col, "expected latency=DUR or loss=P after the two nodes, "
                        "found %s", show(p, t));
        if ((k = key_find(p, &ks, t, key)) < 0 ||
            net_value(p, k, val, vcol, &l->lat, &l->loss_ppm) < 0)
            return -1;
    }
    if (!ks.col[0] && !ks.col[1])
        return fail(p, col_after(p, p->ntoks), "expected latency= or loss= after "
                    "'%s %s %s'", p->toks[kw].s, l->from, l->to);
    return 0;
}

static int kw_link(struct parser *p)
{
    struct scenario *s = p->s;
    struct scn_link l, *dst;
    int i;

    if (s->nlinks == SCN_MAX_LINKS)
        return fail(p, p->toks[0].col, "more than %d link lines (SCN_MAX_LINKS)", SCN_MAX_LINKS);
    if (parse_link(p, 1, &l, 1) < 0)
        return -1;
    for (i = 0; i < s->nlinks; i++)
        if (strcmp(s->links[i].from, l.from) == 0 && strcmp(s->links[i].to, l.to) == 0)
            return fail(p, l.pos.col, "link %s -> %s is given twice (first on line %d)",
                        l.from, l.to, s->links[i].pos.line);
    if ((dst = scenario_add_link(s)) == NULL)
        return fail(p, p->toks[0].col, "out of memory");
    *dst = l;
    return 0;
}

static int kw_clock(struct parser *p)
{
    struct keyset ks = {"clock", "drift=Nppm or offset=DUR", {"drift", "offset"}, {0}};
    struct scenario *s = p->s;
    struct scn_clock_init c, *dst;
    char why[WHY_MAX];
    struct tok *t;
    int i;

    if (p->ntoks < 2)
        return fail(p, col_after(p, 1), "expected a node after 'clock', as in "
                    "clock S1 drift=200ppm");
    t = &p->toks[1];
    if (check_node(p, t, 0, 1) < 0)
        return -1;
    for (i = 0; i < s->nclocks; i++)
        if (strcmp(s->clocks[i].node, t->s) == 0)
            return fail(p, t->col, "clock '%s' is given twice (first on line %d)", t->s,
                        s->clocks[i].pos.line);
    if (s->nclocks == SCN_MAX_CLOCKS)
        return fail(p, t->col, "more than %d clock lines", SCN_MAX_CLOCKS);
    memset(&c, 0, sizeof c);
    copy_str(c.node, sizeof c.node, t->s);
    c.pos.line = p->line;
    c.pos.col = t->col;
    for (i = 2; i < p->ntoks; i++) {
        char *key, *val;
        int vcol, rc;
        t = &p->toks[i];
        rc = kv_split(p, t, &key, &val, &vcol);
        if (rc < 0)
            return -1;
        if (rc == 0)
            return fail(p, t->col, "expected drift=Nppm or offset=DUR, found %s (a clock change "
                        "at a time is written '@5s clock S1 step +1s')", show(p, t));
        switch (key_find(p, &ks, t, key)) {
        case 0:
            if (drift_parse(val, &c.drift_ppm, why) < 0)
                return fail_why(p, vcol, why);
            break;
        case 1:
            if (dur_parse(val, 1, &c.wall_offset_ns, why) < 0)
                return fail_why(p, vcol, why);
            break;
        default:
            return -1;
        }
    }
    if (!ks.col[0] && !ks.col[1])
        return fail(p, col_after(p, p->ntoks), "expected drift=Nppm or offset=DUR after "
                    "'clock %s'", c.node);
    if ((dst = scenario_add_clock(s)) == NULL)
        return fail(p, p->toks[0].col, "out of memory");
    *dst = c;
    return 0;
}

/* ---- Client programs ---- */

static int same_program(const struct scn_program *a, const struct scn_program *b)
{
    int i;

    if (a->nsteps != b->nsteps)
        return 0;
    for (i = 0; i < a->nsteps; i++) {
        const struct scn_step *x = &a->steps[i], *y = &b->steps[i];
        if (x->kind != y->kind || x->dur_ns != y->dur_ns || x->retry_ns != y->retry_ns ||
            x->jitter_ns != y->jitter_ns || x->tries != y->tries || x->timeout_ns != y->timeout_ns)
            return 0;
    }
    return 1;
}

/* acquire [retry=DUR] [jitter=DUR] [tries=N] [timeout=DUR] */
static int acquire_args(struct parser *p, int *ip, struct scn_step *st)
{
    struct keyset ks = {"acquire", "retry=, jitter=, tries= or timeout=",
                        {"retry", "jitter", "tries", "timeout"}, {0}};
    char why[WHY_MAX];
    int i;

    for (i = *ip; i < p->ntoks && p->toks[i].kind != T_SEMI; i++) {
        struct tok *t = &p->toks[i];
        char *key, *val;
        int vcol, k, rc = kv_split(p, t, &key, &val, &vcol);
        int64_t n;
        if (rc < 0)
            return -1;
        if (rc == 0)
            return fail(p, t->col, "expected ';' or retry=, jitter=, tries=, timeout= after "
                        "'acquire', found %s", show(p, t));
        k = key_find(p, &ks, t, key);
        if (k < 0)
            return -1;
        if (k == 2) {
            if (int_parse(val, 0, COUNT_MAX, "tries", &n, why) < 0)
                return fail_why(p, vcol, why);
            st->tries = (int)n;
            continue;
        }
        if (dur_parse(val, 0, k == 0 ? &st->retry_ns : k == 1 ? &st->jitter_ns : &st->timeout_ns,
                      why) < 0)
            return fail_why(p, vcol, why);
        if (k == 0 && st->retry_ns == 0)
            return fail(p, vcol, "retry must be more than 0");
    }
    *ip = i;
    return 0;
}

/* STEP; STEP; ... from token i to the end of the line. */
static int parse_program(struct parser *p, int i, const char *owner, int *prog)
{
    static const char *const kinds[SCN_STEP_COUNT] = {"acquire", "read", "write", "work",
                                                      "release"};
    struct scenario *s = p->s;
    struct scn_program pr, *dst;
    int colon_end = col_after(p, i), k;
    char why[WHY_MAX];

    memset(&pr, 0, sizeof pr);
    while (i < p->ntoks) {
        struct tok *t = &p->toks[i];
        struct scn_step *st;
        if (t->kind == T_SEMI)
            return fail(p, t->col, "empty step before ';'; expected acquire, read, write, work "
                        "or release");
        if (t->kind != T_WORD)
            return fail(p, t->col, "expected a step (acquire, read, write, work or release), "
                        "found %s", show(p, t));
        for (k = 0; k < SCN_STEP_COUNT; k++)
            if (strcmp(t->s, kinds[k]) == 0)
                break;
        if (k == SCN_STEP_COUNT)
            return fail(p, t->col, "unknown step '%.40s'; expected acquire, read, write, work or "
                        "release", t->s);
        if (pr.nsteps == SCN_MAX_STEPS)
            return fail(p, t->col, "client '%s' has more than %d steps (SCN_MAX_STEPS)", owner,
                        SCN_MAX_STEPS);
        st = &pr.steps[pr.nsteps++];
        st->kind = (enum scn_step_kind)k;
        st->pos.line = p->line;
        st->pos.col = t->col;
        i++;
        if (k == SCN_STEP_ACQUIRE) {
            if (acquire_args(p, &i, st) < 0)
                return -1;
        } else if (k == SCN_STEP_WORK) {
            if (i >= p->ntoks || p->toks[i].kind != T_WORD)
                return fail(p, i < p->ntoks ? p->toks[i].col : col_after(p, i),
                            "expected a duration after 'work', as in work 10s");
            if (dur_parse(p->toks[i].s, 0, &st->dur_ns, why) < 0)
                return fail_why(p, p->toks[i].col, why);
            i++;
        }
        if (i < p->ntoks && p->toks[i].kind != T_SEMI)
            return fail(p, p->toks[i].col, "unexpected %s after '%s'; expected ';' or the end "
                        "of the line", show(p, &p->toks[i]), kinds[k]);
        if (i < p->ntoks)
            i++; /* the ';' */
    }
    if (pr.nsteps == 0)
        return fail(p, colon_end, "client '%s' has no steps; expected steps after ':', as in "
                    "acquire; write; release", owner);
    for (k = 0; k < s->nprograms; k++) {
        if (same_program(&s->programs[k], &pr)) {
            *prog = k;
            return 0;
        }
    }
    if (s->nprograms == SCN_MAX_PROGRAMS)
        return fail(p, colon_end, "more than %d different client programs (SCN_MAX_PROGRAMS)",
                    SCN_MAX_PROGRAMS);
    if ((dst = scenario_add_program(s)) == NULL)
        return fail(p, colon_end, "out of memory");
    *dst = pr;
    *prog = s->nprograms - 1;
    return 0;
}

/* The options between the name (or count) and the ':' of client and clients
 * lines. Returns the index of the token after the ':'. */
struct client_opts {
    sim_ns start_ns, every_ns, think_ns;
    int64_t repeat;
    char prefix[SCN_NAME_MAX];
    int prefix_col;
};

static int client_opts(struct parser *p, int i, int many, const char *owner,
                       struct client_opts *o)
{
    struct keyset ks = {many ? "clients" : "client",
                        many ? "@TIME, prefix=, every=, repeat= or think="
                             : "@TIME, repeat= or think=",
                        {"repeat", "think", "prefix", "every"}, {0}};
    char why[WHY_MAX];
    int at_col = 0;

    if (!many)
        ks.names[2] = NULL;
    for (; i < p->ntoks && p->toks[i].kind != T_COLON; i++) {
        struct tok *t = &p->toks[i];
        char *key, *val;
        int vcol, rc;
        if (t->kind == T_WORD && t->s[0] == '@') {
            if (at_col)
                return fail(p, t->col, "the start time is given twice (first at col %d)", at_col);
            at_col = t->col;
            if (dur_parse(t->s + 1, 0, &o->start_ns, why) < 0)
                return fail_why(p, t->col + 1, why);
            continue;
        }
        rc = kv_split(p, t, &key, &val, &vcol);
        if (rc < 0)
            return -1;
        if (rc == 0)
            return fail(p, t->col, "expected ':' before the steps of %s, found %s", owner,
                        show(p, t));
        switch (key_find(p, &ks, t, key)) {
        case 0:
            if (int_parse(val, 0, COUNT_MAX, "repeat", &o->repeat, why) < 0)
                return fail_why(p, vcol, why);
            break;
        case 1:
            if (dur_parse(val, 0, &o->think_ns, why) < 0)
                return fail_why(p, vcol, why);
            break;
        case 2:
            if (!is_name_syntax(val))
                return fail(p, vcol, "'%.40s' is not a name prefix; use a letter, then letters, "
                            "digits, '-' or '_'", val);
            if (strlen(val) >= SCN_NAME_MAX - 1)
                return fail(p, vcol, "prefix '%.40s' is too long; client names have at most %d "
                            "characters", val, SCN_NAME_MAX - 1);
            if (val[0] == 'S' && (val[1] == '\0' || all_digits(val + 1)))
                return fail(p, vcol, "prefix '%s' would make names like %s1, which are reserved "
                            "for lock servers", val, val);
            copy_str(o->prefix, sizeof o->prefix, val);
            o->prefix_col = vcol;
            break;
        case 3:
            if (dur_parse(val, 0, &o->every_ns, why) < 0)
                return fail_why(p, vcol, why);
            break;
        default:
            return -1;
        }
    }
    if (i >= p->ntoks)
        return fail(p, col_after(p, i), "expected ':' and the steps of %s, as in "
                    "client A: acquire; write; release", owner);
    return i + 1;
}

static struct scn_client *new_client(struct parser *p, const char *name, int col,
                                     const struct client_opts *o, sim_ns start, int prog)
{
    struct scn_client *c = scenario_add_client(p->s);

    if (c == NULL)
        return fail(p, col, "out of memory"), NULL;
    copy_str(c->name, sizeof c->name, name);
    if (client_index(p, p->s->nclients - 1) < 0) {
        p->s->nclients--;
        return fail(p, col, "out of memory"), NULL;
    }
    c->start_ns = start;
    c->program = prog;
    c->repeat = (int)o->repeat;
    c->think_ns = o->think_ns;
    c->pos.line = p->line;
    c->pos.col = col;
    return c;
}

/* client NAME [@DUR] [repeat=N] [think=DUR]: STEPS */
static int kw_client(struct parser *p)
{
    struct client_opts o = {0, 0, 0, 1, "", 0};
    struct tok *t;
    char owner[64];
    int i, prog;

    if (p->ntoks < 2)
        return fail(p, col_after(p, 1), "expected a name after 'client', as in "
                    "client A: acquire; write; release");
    t = &p->toks[1];
    if (check_new_client(p, t, t->s) < 0)
        return -1;
    if (p->s->nclients >= SCN_MAX_CLIENTS)
        return fail(p, t->col, "more than %d clients (SCN_MAX_CLIENTS)", SCN_MAX_CLIENTS);
    snprintf(owner, sizeof owner, "client '%s'", t->s);
    if ((i = client_opts(p, 2, 0, owner, &o)) < 0 || parse_program(p, i, t->s, &prog) < 0)
        return -1;
    return new_client(p, t->s, t->col, &o, o.start_ns, prog) ? 0 : -1;
}

/* clients N [prefix=P] [@DUR] [every=DUR] [repeat=N] [think=DUR]: STEPS */
static int kw_clients(struct parser *p)
{
    struct client_opts o = {0, 0, 0, 1, "C", 0};
    struct scenario *s = p->s;
    char why[WHY_MAX], name[SCN_NAME_MAX + 24], last[SCN_NAME_MAX + 24];
    int64_t n, k;
    int i, prog, ncol;

    if (p->ntoks < 2 || p->toks[1].kind != T_WORD)
        return fail(p, p->ntoks < 2 ? col_after(p, 1) : p->toks[1].col,
                    "expected a count after 'clients', as in clients 3: acquire; write; release");
    ncol = p->toks[1].col;
    if (int_parse(p->toks[1].s, 1, SCN_MAX_CLIENTS, "the client count", &n, why) < 0)
        return fail_why(p, ncol, why);
    if (n > SCN_MAX_CLIENTS - s->nclients)
        return fail(p, ncol, "%lld more clients would make %lld in all; the limit is %d "
                    "(SCN_MAX_CLIENTS)", (long long)n, (long long)n + s->nclients,
                    SCN_MAX_CLIENTS);
    if ((i = client_opts(p, 2, 1, "the clients", &o)) < 0)
        return -1;
    snprintf(last, sizeof last, "%s%lld", o.prefix, (long long)n);
    if (strlen(last) >= SCN_NAME_MAX)
        return fail(p, o.prefix_col ? o.prefix_col : ncol, "client names such as '%s' would be "
                    "longer than %d characters", last, SCN_NAME_MAX - 1);
    if (o.every_ns > 0 && n - 1 > (SIM_TIME_MAX - o.start_ns) / o.every_ns) {
        char lim[48];
        fmt_dur(lim, sizeof lim, SIM_TIME_MAX);
        return fail(p, ncol, "the last of %lld clients would start beyond the limit of %s "
                    "(SIM_TIME_MAX)", (long long)n, lim);
    }
    if (parse_program(p, i, "the clients", &prog) < 0)
        return -1;
    for (k = 0; k < n; k++) {
        int prev;
        snprintf(name, sizeof name, "%s%lld", o.prefix, (long long)(k + 1));
        prev = client_find(p, name);
        if (prev >= 0)
            return fail(p, ncol, "client '%s' is declared twice (first on line %d)", name,
                        s->clients[prev].pos.line);
        if (new_client(p, name, ncol, &o, o.start_ns + k * o.every_ns, prog) == NULL)
            return -1;
    }
    return 0;
}

/* ---- Expectations ---- */

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
        return fail(p, t->col, "expected a metric or verdict after 'expect', found %s",
                    show(p, t));
    if (strcmp(t->s, "verdict") == 0) {
        e->metric = SCN_M_VERDICT;
        e->cmp = SCN_CMP_EQ;
        i = 2;
        if (i < p->ntoks && cmp_find(p->toks[i].s, &e->cmp) == 0) {
            if (e->cmp != SCN_CMP_EQ && e->cmp != SCN_CMP_NE)
                return fail(p, p->toks[i].col, "a verdict compares only with = or !=");
            i++;
        }
        if (i >= p->ntoks)
            return fail(p, col_after(p, i), "expected SAFE, UNSAFE or STUCK after 'verdict'");
        t = &p->toks[i];
        for (k = 0; k < 3; k++)
            if (same_word_ci(t->s, scn_verdict_name((enum scn_verdict)k)))
                break;
        if (k == 3 || t->kind != T_WORD)
            return fail(p, t->col, "unknown verdict %s; expected SAFE, UNSAFE or STUCK",
                        show(p, t));
        e->value = k;
        return need_end(p, i + 1, "the verdict");
    }
    if (strcmp(t->s, "no") == 0) {
        no = 1;
        if (++i >= p->ntoks)
            return fail(p, col_after(p, i), "expected what should not happen after 'no', such "
                        "as expect no double-entry");
        t = &p->toks[i];
    }
    int sh = 0; /* the word may be used as `expect [no] WORD` (sim/metric.h) */
    k = t->kind == T_WORD ? metric_find(t->s, &sh) : -1;
    /* Shorthand: expect [no] NAME [accepted|rejected] */
    if (no || (k >= 0 && sh &&
               (i + 1 >= p->ntoks || cmp_find(p->toks[i + 1].s, &e->cmp) < 0))) {
        if (k < 0 || !sh)
            return fail(p, t->col, "unknown event %s after 'no'; expected double-entry, "
                        "stale-write, lost-update, wrong-release, stuck or failed-acquire",
                        show(p, t));
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
        return need_end(p, i + 1, t->s);
    }
    /* General: expect METRIC OP VALUE */
    if (k < 0)
        return fail(p, t->col, "unknown metric '%.20s'; expected verdict or a metric of "
                    "docs/metrics.md such as double-entries, double-entry-time, "
                    "stale-writes-accepted, lost-updates, wrong-releases, stuck or final-stock",
                    t->s);
    e->metric = (enum scn_metric)k;
    if (++i >= p->ntoks)
        return fail(p, col_after(p, i), "expected a comparison after '%s', as in %s >= 1",
                    t->s, t->s);
    t = &p->toks[i];
    if (t->kind != T_WORD || cmp_find(t->s, &e->cmp) < 0)
        return fail(p, t->col, "unknown comparison %s; expected =, ==, !=, <, <=, > or >=",
                    show(p, t));
    if (++i >= p->ntoks)
        return fail(p, col_after(p, i), "expected a value after '%s'", t->s);
    t = &p->toks[i];
    if (t->kind != T_WORD)
        return fail(p, t->col, "expected a value, found %s", show(p, t));
    if (metric_info(e->metric)->unit == METRIC_UNIT_NS) {
        sim_ns v;
        if (dur_parse(t->s, 0, &v, why) < 0)
            return fail_why(p, t->col, why);
        e->value = v;
    } else if (int_parse(t->s, INT64_MIN, INT64_MAX, "the value", &e->value, why) < 0) {
        return fail_why(p, t->col, why);
    }
    return need_end(p, i + 1, "the value");
}

static int kw_expect(struct parser *p)
{
    struct scenario *s = p->s;
    struct scn_expect e, *dst;
    size_t from, to, n;

    if (p->ntoks < 2)
        return fail(p, col_after(p, 1), "expected what to expect after 'expect', as in "
                    "expect verdict SAFE");
    if (s->nexpects == SCN_MAX_EXPECTS)
        return fail(p, p->toks[0].col, "more than %d expect lines (SCN_MAX_EXPECTS)",
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
        return fail(p, p->toks[0].col, "out of memory");
    *dst = e;
    return 0;
}

/* ---- Timed lines ---- */

static int point_find(const char *w)
{
    int k;

    for (k = SCN_POINT_NONE + 1; k < SCN_POINT_COUNT; k++)
        if (strcmp(scn_point_name((enum scn_point)k), w) == 0)
            return k;
    return -1;
}

/* on CLIENT.POINT[#N] */
static int parse_trigger(struct parser *p, struct tok *t, struct scn_fault *f)
{
    char why[WHY_MAX];
    char *dot, *hash;
    int pt;
    int64_t n;

    if (t->kind != T_WORD || (dot = strchr(t->s, '.')) == NULL)
        return fail(p, t->col, "expected CLIENT.POINT after 'on', as in on A.after-acquire, "
                    "found %s", show(p, t));
    *dot = '\0';
    if (client_find(p, t->s) < 0)
        return fail(p, t->col, "'%.40s' is not a client declared above; 'on' needs one, as in "
                    "on A.after-acquire", t->s);
    copy_str(f->trigger, sizeof f->trigger, t->s);
    hash = strchr(dot + 1, '#');
    if (hash) {
        *hash = '\0';
        if (int_parse(hash + 1, 1, COUNT_MAX, "the occurrence after '#'", &n, why) < 0)
            return fail_why(p, t->col + (int)(hash - t->s) + 1, why);
        f->occurrence = (int)n;
    }
    pt = point_find(dot + 1);
    if (pt < 0)
        return fail(p, t->col + (int)(dot - t->s) + 1, "unknown point '%.40s'; expected "
                    "during-acquire, after-acquire, before-read, between-read-and-write, "
                    "before-write, after-write, before-release or after-release", dot + 1);
    f->point = (enum scn_point)pt;
    return 0;
}

/* One-node actions: pause NODE [DUR], resume/crash/restart NODE, promote SERVER. */
static int act_node(struct parser *p, int i, struct scn_fault *f)
{
    char why[WHY_MAX];
    struct tok *t;

    if (i >= p->ntoks)
        return fail(p, col_after(p, i), "expected a node after '%s', as in %s %s",
                    p->toks[i - 1].s, p->toks[i - 1].s,
                    f->kind == SCN_FAULT_PROMOTE ? "S2" : "A");
    t = &p->toks[i];
    if (check_node(p, t, 0, 0) < 0)
        return -1;
    if (f->kind == SCN_FAULT_PROMOTE && server_number(t->s) == 0)
        return fail(p, t->col, "only a lock server can be promoted; expected S1..S%d, found %s",
                    SCN_MAX_SERVERS, show(p, t));
    copy_str(f->node, sizeof f->node, t->s);
    f->pos.col = t->col;
    i++;
    if (f->kind == SCN_FAULT_PAUSE && i < p->ntoks && p->toks[i].kind == T_WORD) {
        if (dur_parse(p->toks[i].s, 0, &f->dur_ns, why) < 0)
            return fail_why(p, p->toks[i].col, why);
        if (f->dur_ns == 0)
            return fail(p, p->toks[i].col, "a pause of 0 does nothing; give a duration, or none "
                        "to pause until 'resume'");
        i++;
    }
    return need_end(p, i, f->kind == SCN_FAULT_PAUSE ? "the pause" : "the node");
}

/* clock NODE step ±DUR [wall|monotonic|both] | drift ±Nppm | slew ±DUR over DUR */
static int act_clock(struct parser *p, int i, struct scn_fault *f)
{
    char why[WHY_MAX];
    struct tok *t;
    const char *what;

    if (i >= p->ntoks)
        return fail(p, col_after(p, i), "expected a node after 'clock', as in clock S1 step +1s");
    t = &p->toks[i];
    if (check_node(p, t, 0, 0) < 0)
        return -1;
    copy_str(f->node, sizeof f->node, t->s);
    f->pos.col = t->col;
    if (++i >= p->ntoks)
        return fail(p, col_after(p, i), "expected step, drift or slew after 'clock %s'", f->node);
    t = &p->toks[i++];
    what = t->s;
    if (strcmp(what, "step") != 0 && strcmp(what, "drift") != 0 && strcmp(what, "slew") != 0)
        return fail(p, t->col, "unknown clock change %s; expected step, drift or slew",
                    show(p, t));
    if (i >= p->ntoks || p->toks[i].kind != T_WORD)
        return fail(p, i < p->ntoks ? p->toks[i].col : col_after(p, i),
                    "expected a value after '%s', as in %s", what,
                    what[0] == 'd'   ? "drift 200ppm"
                    : what[1] == 't' ? "step +1s"
                                     : "slew -2s over 10s");
    t = &p->toks[i++];
    if (what[0] == 'd') {
        f->kind = SCN_FAULT_CLOCK_DRIFT;
        if (drift_parse(t->s, &f->ppm, why) < 0)
            return fail_why(p, t->col, why);
        return need_end(p, i, "the drift");
    }
    if (dur_parse(t->s, 1, &f->delta_ns, why) < 0)
        return fail_why(p, t->col, why);
    if (what[1] == 't') {
        f->kind = SCN_FAULT_CLOCK_STEP;
        f->which = SCN_CLOCK_WALL;
        if (i < p->ntoks && p->toks[i].kind == T_WORD) {
            const char *w = p->toks[i].s;
            if (strcmp(w, "wall") == 0)
                f->which = SCN_CLOCK_WALL;
            else if (strcmp(w, "monotonic") == 0 || strcmp(w, "mono") == 0)
                f->which = SCN_CLOCK_MONO;
            else if (strcmp(w, "both") == 0)
                f->which = SCN_CLOCK_BOTH;
            else
                return fail(p, p->toks[i].col, "unknown clock '%.40s'; expected wall, monotonic "
                            "or both", w);
            i++;
        }
        return need_end(p, i, "the step");
    }
    f->kind = SCN_FAULT_CLOCK_SLEW;
    if (i >= p->ntoks || strcmp(p->toks[i].s, "over") != 0)
        return fail(p, i < p->ntoks ? p->toks[i].col : col_after(p, i),
                    "expected 'over DUR' after the slew, as in slew -2s over 10s");
    if (++i >= p->ntoks || p->toks[i].kind != T_WORD)
        return fail(p, i < p->ntoks ? p->toks[i].col : col_after(p, i),
                    "expected a duration after 'over'");
    t = &p->toks[i++];
    if (dur_parse(t->s, 0, &f->dur_ns, why) < 0)
        return fail_why(p, t->col, why);
    if (f->dur_ns == 0)
        return fail(p, t->col, "a slew needs a time to spread over, more than 0 "
                    "(use step for a jump)");
    return need_end(p, i, "the slew");
}

/* partition A B | C D | E */
static int act_partition(struct parser *p, int i, struct scn_fault *f)
{
    int g = 0, h, k;

    if (i >= p->ntoks)
        return fail(p, col_after(p, i), "expected groups of nodes after 'partition', as in "
                    "partition A | S1 S2");
    for (; i < p->ntoks; i++) {
        struct tok *t = &p->toks[i];
        if (t->kind == T_BAR) {
            if (f->group_len[g] == 0)
                return fail(p, t->col, "empty group before '|'; expected node names");
            if (++g == 4)
                return fail(p, t->col, "more than 4 groups in one partition");
            continue;
        }
        if (check_node(p, t, 0, 0) < 0)
            return -1;
        for (h = 0; h <= g; h++)
            for (k = 0; k < f->group_len[h]; k++)
                if (strcmp(f->groups[h][k], t->s) == 0)
                    return fail(p, t->col, h == g ? "node '%s' is named twice in one group"
                                : "node '%s' is in two groups of this partition", t->s);
        if (f->group_len[g] == SCN_MAX_GROUP)
            return fail(p, t->col, "more than %d nodes in one partition group (SCN_MAX_GROUP)",
                        SCN_MAX_GROUP);
        copy_str(f->groups[g][f->group_len[g]++], SCN_NAME_MAX, t->s);
    }
    if (f->group_len[g] == 0)
        return fail(p, col_after(p, p->ntoks), "expected node names after '|'");
    if (g == 0)
        return fail(p, col_after(p, p->ntoks), "a partition needs two to four groups separated "
                    "by '|', as in partition A | S1 S2");
    f->ngroups = g + 1;
    return 0;
}

static int timed_line(struct parser *p)
{
    static const struct {
        const char *name;
        enum scn_fault_kind kind;
    } actions[] = {{"pause", SCN_FAULT_PAUSE},     {"resume", SCN_FAULT_RESUME},
                   {"crash", SCN_FAULT_CRASH},     {"restart", SCN_FAULT_RESTART},
                   {"clock", SCN_FAULT_CLOCK_STEP}, {"partition", SCN_FAULT_PARTITION},
                   {"heal", SCN_FAULT_HEAL},       {"link", SCN_FAULT_LINK},
                   {"promote", SCN_FAULT_PROMOTE}};
    struct scenario *s = p->s;
    struct tok *t = &p->toks[0];
    struct scn_fault *f;
    char why[WHY_MAX];
    size_t k;
    int i, rc;

    /* The fault is built in place; nfaults only counts it once it is whole. */
    if (s->nfaults == SCN_MAX_FAULTS)
        return fail(p, t->col, "more than %d timed lines (SCN_MAX_FAULTS)", SCN_MAX_FAULTS);
    if ((f = scenario_add_fault(s)) == NULL)
        return fail(p, t->col, "out of memory");
    s->nfaults--;
    f->pos.line = p->line;
    if (t->s[0] == '@' || t->s[0] == '+') {
        sim_ns d;
        char a[48], b[48];
        if (dur_parse(t->s + 1, 0, &d, why) < 0)
            return fail_why(p, t->col + 1, why);
        if (t->s[0] == '@' && p->prev_at_set && d < p->prev_at_ns) {
            fmt_dur(a, sizeof a, d);
            fmt_dur(b, sizeof b, p->prev_at_ns);
            return fail(p, t->col, "time %s is before the previous timed line (%s); timed lines "
                        "must be in time order", a, b);
        }
        if (t->s[0] == '+') {
            if (d > SIM_TIME_MAX - p->prev_at_ns) {
                fmt_dur(a, sizeof a, p->prev_at_ns);
                fmt_dur(b, sizeof b, SIM_TIME_MAX);
                return fail(p, t->col + 1, "%s after %s is beyond the limit of %s (SIM_TIME_MAX)",
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
            return fail(p, col_after(p, 1), "expected CLIENT.POINT after 'on', as in "
                        "on A.after-acquire");
        if (parse_trigger(p, &p->toks[1], f) < 0)
            return -1;
        i = 2;
    }
    if (i >= p->ntoks)
        return fail(p, col_after(p, i), "expected an action after the time: pause, resume, "
                    "crash, restart, clock, partition, heal, link or promote");
    t = &p->toks[i];
    for (k = 0; k < sizeof actions / sizeof actions[0]; k++)
        if (t->kind == T_WORD && strcmp(t->s, actions[k].name) == 0)
            break;
    if (k == sizeof actions / sizeof actions[0])
        return fail(p, t->col, "unknown action %s; expected pause, resume, crash, restart, "
                    "clock, partition, heal, link or promote", show(p, t));
    f->kind = actions[k].kind;
    f->pos.col = t->col;
    i++;
    switch (f->kind) {
    case SCN_FAULT_CLOCK_STEP:
        rc = act_clock(p, i, f);
        break;
    case SCN_FAULT_PARTITION:
        rc = act_partition(p, i, f);
        break;
    case SCN_FAULT_HEAL:
        rc = need_end(p, i, "'heal'");
        break;
    case SCN_FAULT_LINK:
        rc = parse_link(p, i, &f->link, 0);
        break;
    default:
        rc = act_node(p, i, f);
        break;
    }
    if (rc < 0)
        return -1;
    s->nfaults++;
    return 0;
}

/* ---- Lines ---- */

/* Check the bytes of a line: UTF-8, no control characters but tab. */
static int check_bytes(struct parser *p, const unsigned char *b, size_t n)
{
    size_t i = 0;

    while (i < n) {
        unsigned c = b[i];
        size_t len, k;
        uint32_t cp;
        if (c < 0x80) {
            if ((c < 0x20 && c != '\t') || c == 0x7f)
                return fail(p, (int)i + 1, "unexpected byte 0x%02x; expected text", c);
            i++;
            continue;
        }
        if (c >= 0xc2 && c <= 0xdf)
            len = 2, cp = c & 0x1f;
        else if (c >= 0xe0 && c <= 0xef)
            len = 3, cp = c & 0x0f;
        else if (c >= 0xf0 && c <= 0xf4)
            len = 4, cp = c & 0x07;
        else
            return fail(p, (int)i + 1, "unexpected byte 0x%02x; expected UTF-8 text", c);
        for (k = 1; k < len; k++) {
            if (i + k >= n || (b[i + k] & 0xc0) != 0x80)
                return fail(p, (int)i + 1, "unexpected byte 0x%02x; expected UTF-8 text", c);
            cp = (cp << 6) | (b[i + k] & 0x3f);
        }
        if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff))
            return fail(p, (int)i + 1, "unexpected byte 0x%02x; expected UTF-8 text", c);
        i += len;
    }
    return 0;
}

static int tokenize(struct parser *p)
{
    const char *raw = p->raw;
    size_t n = p->rawlen, i = 0;
    char *a;

    p->ntoks = 0;
    if (p->arena_cap < 2 * n + 8) { /* each token's text plus a NUL: at most 2 bytes a byte */
        size_t cap = p->arena_cap * 2 > 2 * n + 8 ? p->arena_cap * 2 : 2 * n + 8;
        char *na = realloc(p->arena, cap < 256 ? 256 : cap);
        if (na == NULL)
            return fail(p, 1, "out of memory");
        p->arena = na;
        p->arena_cap = cap < 256 ? 256 : cap;
    }
    a = p->arena;
    if (p->line == 1 && n >= 3 && memcmp(raw, "\xef\xbb\xbf", 3) == 0)
        i = 3; /* a UTF-8 byte-order mark */
    while (i < n) {
        char c = raw[i];
        struct tok *t;
        if (c == ' ' || c == '\t') {
            i++;
            continue;
        }
        if (c == '#')
            break;
        {
            void *arr = p->toks;
            if (room_for(&arr, &p->toks_cap, p->ntoks, sizeof *p->toks, 32) < 0)
                return fail(p, (int)i + 1, "out of memory");
            p->toks = arr;
        }
        t = &p->toks[p->ntoks++];
        t->col = (int)i + 1;
        t->s = a;
        if (c == ':' || c == ';' || c == '|') {
            t->kind = c == ':' ? T_COLON : c == ';' ? T_SEMI : T_BAR;
            *a++ = c;
            i++;
        } else if (c == '"') {
            size_t j = i + 1;
            t->kind = T_STRING;
            for (;;) {
                if (j >= n)
                    return fail(p, t->col, "unterminated string; expected a closing '\"' on "
                                "the same line");
                if (raw[j] == '"')
                    break;
                if (raw[j] == '\\' && j + 1 < n && (raw[j + 1] == '"' || raw[j + 1] == '\\')) {
                    *a++ = raw[j + 1];
                    j += 2;
                    continue;
                }
                if (raw[j] == '\\')
                    return fail(p, (int)j + 1, "unknown escape in a string; only \\\" and \\\\ "
                                "are allowed");
                *a++ = raw[j++];
            }
            i = j + 1;
        } else {
            t->kind = T_WORD;
            while (i < n && raw[i] != ' ' && raw[i] != '\t' && raw[i] != '"' && raw[i] != ':' &&
                   raw[i] != ';' && raw[i] != '|')
                *a++ = raw[i++];
        }
        t->len = (size_t)(a - t->s);
        *a++ = '\0';
        t->end = (int)i + 1;
    }
    return 0;
}

static int do_line(struct parser *p)
{
    struct scenario *s = p->s;
    struct tok *t;
    const char *w;

    if (tokenize(p) < 0)
        return -1;
    if (p->ntoks == 0)
        return 0;
    t = &p->toks[0];
    if (t->kind != T_WORD)
        return fail(p, t->col, "unexpected %s at the start of a line; expected a keyword such as "
                    "client, lock or expect", show(p, t));
    w = t->s;
    if (w[0] == '@' || w[0] == '+' || strcmp(w, "on") == 0)
        return timed_line(p);
    if (strcmp(w, "title") == 0)
        return kw_text(p, KW_TITLE, s->title);
    if (strcmp(w, "description") == 0)
        return kw_text(p, KW_DESCRIPTION, s->description);
    if (strcmp(w, "purpose") == 0)
        return kw_purpose(p);
    if (strcmp(w, "seed") == 0)
        return kw_seed(p);
    if (strcmp(w, "duration") == 0)
        return kw_positive_dur(p, KW_DURATION, "duration 120s", &s->duration_ns);
    if (strcmp(w, "stuck-after") == 0)
        return kw_positive_dur(p, KW_STUCK_AFTER, "stuck-after 60s", &s->stuck_after_ns);
    if (strcmp(w, "max-events") == 0)
        return kw_max_events(p);
    if (strcmp(w, "retry") == 0)
        return kw_positive_dur(p, KW_RETRY, "retry 1s", &s->retry_ns);
    if (strcmp(w, "lock") == 0)
        return kw_lock(p);
    if (strcmp(w, "resource") == 0)
        return kw_resource(p);
    if (strcmp(w, "network") == 0)
        return kw_network(p);
    if (strcmp(w, "link") == 0)
        return kw_link(p);
    if (strcmp(w, "clock") == 0)
        return kw_clock(p);
    if (strcmp(w, "client") == 0)
        return kw_client(p);
    if (strcmp(w, "clients") == 0)
        return kw_clients(p);
    if (strcmp(w, "expect") == 0)
        return kw_expect(p);
    return fail(p, t->col, "unknown keyword '%.30s'; expected title, description, purpose, seed, "
                "duration, stuck-after, max-events, retry, lock, resource, network, link, clock, "
                "client, clients, expect, or a time (@5s, +1s, on A.point)", w);
}

/* Header lines may name clients declared further down; check them now. */
static int check_later(struct parser *p)
{
    int i;

    for (i = 0; i < p->nlater; i++) {
        if (client_find(p, p->later[i].name) < 0) {
            p->line = p->later[i].pos.line;
            return fail(p, p->later[i].pos.col, "unknown node '%s'; expected a client, R, or a "
                        "lock server S1..S%d", p->later[i].name, SCN_MAX_SERVERS);
        }
    }
    return 0;
}

static void err_begin(struct scn_error *err, const char *file)
{
    memset(err, 0, sizeof *err);
    copy_str(err->file, sizeof err->file, file);
}

int scenario_parse(struct scenario *s, const char *fname, const char *text, size_t len,
                   struct scn_error *err)
{
    struct parser *p;
    size_t off = 0;
    int rc = 0;

    if (fname == NULL)
        fname = "<scenario>";
    scenario_init(s);
    copy_str(s->file, sizeof s->file, fname);
    err_begin(err, fname);
    if (text == NULL && len > 0)
        len = 0;
    if (len > TEXT_MAX_BYTES) {
        err->pos.line = 1;
        err->pos.col = 1;
        snprintf(err->msg, sizeof err->msg, "the scenario is larger than 16 MiB");
        return -1;
    }
    p = calloc(1, sizeof *p);
    if (p == NULL) {
        err->pos.line = 1;
        err->pos.col = 1;
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return -1;
    }
    p->s = s;
    p->err = err;
    while (off < len && rc == 0) {
        const char *nl = memchr(text + off, '\n', len - off);
        size_t end = nl ? (size_t)(nl - text) : len;
        p->line++;
        p->raw = text + off;
        p->rawlen = end - off;
        if (p->rawlen > 0 && p->raw[p->rawlen - 1] == '\r')
            p->rawlen--;
        if (p->rawlen > LINE_MAX_BYTES)
            rc = fail(p, LINE_MAX_BYTES + 1, "line is longer than %d bytes", LINE_MAX_BYTES);
        else if ((rc = check_bytes(p, (const unsigned char *)p->raw, p->rawlen)) == 0)
            rc = do_line(p);
        off = end + 1;
    }
    if (rc == 0)
        rc = check_later(p);
    free(p->hash);
    free(p->toks);
    free(p->arena);
    free(p->later);
    free(p);
    return rc;
}

int scenario_load(struct scenario *s, const char *path, struct scn_error *err)
{
    FILE *f;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    int rc;

    if (path == NULL)
        path = "";
    scenario_init(s);
    copy_str(s->file, sizeof s->file, path);
    err_begin(err, path);
    f = fopen(path, "rb");
    if (f == NULL) {
        snprintf(err->msg, sizeof err->msg, "cannot open '%.200s': %s", path, strerror(errno));
        return -2;
    }
    for (;;) {
        size_t got;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 65536;
            char *nb;
            if (cap > TEXT_MAX_BYTES) {
                fclose(f);
                free(buf);
                snprintf(err->msg, sizeof err->msg, "'%.200s' is larger than 16 MiB", path);
                return -2;
            }
            nb = realloc(buf, ncap);
            if (nb == NULL) {
                fclose(f);
                free(buf);
                snprintf(err->msg, sizeof err->msg, "cannot read '%.200s': out of memory", path);
                return -2;
            }
            buf = nb;
            cap = ncap;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        int e = errno;
        fclose(f);
        free(buf);
        snprintf(err->msg, sizeof err->msg, "cannot read '%.200s': %s", path, strerror(e));
        return -2;
    }
    fclose(f);
    if (n > TEXT_MAX_BYTES) {
        free(buf);
        snprintf(err->msg, sizeof err->msg, "'%.200s' is larger than 16 MiB", path);
        return -2;
    }
    rc = scenario_parse(s, path, buf, n, err);
    free(buf);
    return rc;
}

/* ======================================================================
 * --set KEY=VALUE
 * ====================================================================== */

PRINTF_LIKE(3, 4)
static int set_fail(struct scn_error *err, int col, const char *fmt, ...)
{
    va_list ap;

    err->pos.line = 1;
    err->pos.col = col;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return -1;
}

int scenario_set(struct scenario *s, const char *kv, struct scn_error *err)
{
    enum { ANY, LOCK, RES, NET } dom = ANY;
    char why[WHY_MAX], key[SCN_OPT_MAX + 16], val[LINE_MAX_BYTES + 1];
    const char *eq, *k;
    int vcol, off;
    size_t i;

    err_begin(err, "--set");
    if (kv == NULL)
        kv = "";
    for (i = 0; kv[i]; i++)
        if ((unsigned char)kv[i] < 0x20 || kv[i] == 0x7f)
            return set_fail(err, (int)i + 1, "unexpected byte 0x%02x", (unsigned char)kv[i]);
    eq = strchr(kv, '=');
    if (eq == NULL || eq == kv)
        return set_fail(err, 1, "expected KEY=VALUE, such as ttl=10s, found '%.40s'", kv);
    if ((size_t)(eq - kv) >= sizeof key)
        return set_fail(err, 1, "key '%.40s...' is too long", kv);
    memcpy(key, kv, (size_t)(eq - kv));
    key[eq - kv] = '\0';
    vcol = (int)(eq - kv) + 2;
    if (strlen(eq + 1) >= sizeof val)
        return set_fail(err, vcol, "the value is longer than %d bytes", LINE_MAX_BYTES);
    strcpy(val, eq + 1);
    if (val[0] == '\0')
        return set_fail(err, vcol, "missing value after '%s='", key);
    k = key;
    if (strncmp(key, "lock.", 5) == 0)
        dom = LOCK, k = key + 5;
    else if (strncmp(key, "resource.", 9) == 0)
        dom = RES, k = key + 9;
    else if (strncmp(key, "network.", 8) == 0)
        dom = NET, k = key + 8;
    if (dom == RES && strcmp(k, "stock") != 0 && strcmp(k, "fencing") != 0 && strcmp(k, "timeout") != 0)
        return set_fail(err, 1, "unknown key '%s'; expected resource.stock, resource.fencing or "
                        "resource.timeout", key);
    if (dom == NET && strcmp(k, "latency") != 0 && strcmp(k, "loss") != 0)
        return set_fail(err, 1, "unknown key '%s'; expected network.latency or network.loss",
                        key);

    if (dom == ANY || dom == RES) {
        if (strcmp(k, "stock") == 0) {
            int64_t v;
            if (int_parse(val, 0, COUNT_MAX, "stock", &v, why) < 0)
                return set_fail(err, vcol, "%s", why);
            s->stock = v;
            return 0;
        }
        if (strcmp(k, "fencing") == 0)
            return bool_parse(val, &s->fencing, why) < 0 ? set_fail(err, vcol, "%s", why) : 0;
        if (dom == RES && strcmp(k, "timeout") == 0)
            return dur_parse(val, 0, &s->resource_timeout_ns, why) < 0 ? set_fail(err, vcol, "%s", why) : 0;
    }
    if (dom == ANY || dom == NET) {
        if (strcmp(k, "latency") == 0)
            return latency_parse(val, &s->latency, why, &off) < 0
                       ? set_fail(err, vcol + off, "%s", why) : 0;
        if (strcmp(k, "loss") == 0)
            return loss_parse(val, &s->loss_ppm, why) < 0 ? set_fail(err, vcol, "%s", why) : 0;
    }
    if (dom == ANY || dom == LOCK) {
        if (strcmp(k, "servers") == 0) {
            int64_t v;
            if (int_parse(val, 1, SCN_MAX_SERVERS, "servers", &v, why) < 0)
                return set_fail(err, vcol, "%s", why);
            s->nservers = (int)v;
            return 0;
        }
    }
    if (dom == ANY) {
        sim_ns d;
        if (strcmp(k, "seed") == 0)
            return u64_parse(val, 0, "the seed", &s->seed, why) < 0
                       ? set_fail(err, vcol, "%s", why) : 0;
        if (strcmp(k, "max-events") == 0)
            return u64_parse(val, 1, "max-events", &s->max_events, why) < 0
                       ? set_fail(err, vcol, "%s", why) : 0;
        if (strcmp(k, "purpose") == 0)
            return purpose_parse(val, &s->purpose, why) < 0 ? set_fail(err, vcol, "%s", why) : 0;
        if (strcmp(k, "duration") == 0 || strcmp(k, "stuck-after") == 0 ||
            strcmp(k, "retry") == 0) {
            if (dur_parse(val, 0, &d, why) < 0)
                return set_fail(err, vcol, "%s", why);
            if (d == 0)
                return set_fail(err, vcol, "%s must be more than 0", k);
            *(k[0] == 'd' ? &s->duration_ns : k[0] == 's' ? &s->stuck_after_ns : &s->retry_ns) = d;
            return 0;
        }
        if (strcmp(k, "title") == 0 || strcmp(k, "description") == 0) {
            if (strlen(val) >= SCN_TEXT_MAX)
                return set_fail(err, vcol, "the %s is %zu bytes long; the limit is %d", k,
                                strlen(val), SCN_TEXT_MAX - 1);
            copy_str(k[0] == 't' ? s->title : s->description, SCN_TEXT_MAX, val);
            return 0;
        }
        if (strcmp(k, "algo") == 0) {
            if (!is_opt_key(val) || strlen(val) >= SCN_OPT_MAX)
                return set_fail(err, vcol, "'%.40s' is not an algorithm name", val);
            copy_str(s->algo, sizeof s->algo, val);
            s->algo_pos.line = 0;
            s->algo_pos.col = 0;
            return 0;
        }
    }
    /* Anything else is a lock option, validated later by the algorithm. */
    {
        struct scn_pos pos = {0, 0};
        if (opt_put(s, k, val, pos, why) < 0)
            return set_fail(err, dom == LOCK ? 6 : 1, "%s", why);
    }
    return 0;
}
