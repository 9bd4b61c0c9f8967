/* The value syntaxes of the scenario language (durations, integers,
 * booleans, loss, latency, drift, purpose, option keys), the small text
 * helpers every part of the parser uses, and the public scn_parse_* helpers
 * that lock algorithms use for option values. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "parse_int.h"

/* ======================================================================
 * Small text helpers
 * ====================================================================== */

int scnp_is_digit(int c) { return c >= '0' && c <= '9'; }
int scnp_is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

int scnp_all_digits(const char *s) {
    if (*s == '\0') return 0;
    for (; *s; s++)
        if (!scnp_is_digit((unsigned char)*s)) return 0;
    return 1;
}

/* ASCII case-insensitive equality (no locale). */
int scnp_same_word_ci(const char *a, const char *b) {
    for (; *a && *b; a++, b++) {
        int x = (unsigned char)*a, y = (unsigned char)*b;
        if (x >= 'A' && x <= 'Z') x += 'a' - 'A';
        if (y >= 'A' && y <= 'Z') y += 'a' - 'A';
        if (x != y) return 0;
    }
    return *a == *b;
}

PRINTF_LIKE(3, 4)
int scnp_why_set(char *why, size_t n, const char *fmt, ...) {
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
    return -1;
}

int scnp_word_distance(const char *a, const char *b) {
    int row[33], i, j, n = (int)strlen(b);

    if (n > 32 || strlen(a) > 32) return 99;
    for (j = 0; j <= n; j++) row[j] = j;
    for (i = 1; a[i - 1]; i++) {
        int diag = row[0];
        row[0] = i;
        for (j = 1; j <= n; j++) {
            int up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[n];
}

void scnp_list_closest(char *list, size_t size, const char *word, const char *const *names, int n, int max) {
    int order[64], dist[64], k, shown;
    size_t len = strlen(list);

    if (n > 64) n = 64;
    for (k = 0; k < n; k++) { /* likely typos (2 edits or fewer) first, stable */
        int j = k;
        dist[k] = scnp_word_distance(word, names[k]);
        if (dist[k] > 2) dist[k] = 3;
        for (; j > 0 && dist[order[j - 1]] > dist[k]; j--) order[j] = order[j - 1];
        order[j] = k;
    }
    shown = n < max ? n : max;
    for (k = 0; k < shown; k++) {
        const char *sep = k == 0 ? "" : k == shown - 1 && shown == n ? " or " : ", ";
        snprintf(list + len, size - len, "%s%s", sep, names[order[k]]);
        len = strlen(list);
    }
    if (shown < n) snprintf(list + len, size - len, ", ...");
}

/* A duration as the shortest exact text: 5s, 1.5s, 500ms, 250us, 7ns. */
void scn_format_duration(char *buf, size_t n, sim_ns v) {
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
    for (k = digits - 1; k > 0 && frac[k] == '0'; k--) frac[k] = '\0';
    snprintf(buf, n, "%s%llu.%s%s", v < 0 ? "-" : "", (unsigned long long)ip, frac, unit);
}

/* ======================================================================
 * Value syntaxes. Each takes a NUL-terminated word and, on failure,
 * returns -1 with one sentence in why[WHY_MAX].
 * ====================================================================== */

/* Decimal digits into *out; 0, -1 when not all digits, -2 on overflow. */
static int digits_u64(const char *s, uint64_t *out) {
    uint64_t v = 0;

    if (!scnp_all_digits(s)) return -1;
    for (; *s; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10) return -2;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/* An integer in [lo, hi]; a sign is accepted only when lo < 0. */
int scnp_int_parse(const char *t, int64_t lo, int64_t hi, const char *what, int64_t *out, char *why) {
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
    if (rc == -1 && *t == '-' && lo >= 0 && scnp_all_digits(t + 1))
        return WHY("%s must be between %lld and %lld, found '%.40s'", what, (long long)lo, (long long)hi, t);
    if (rc == -1) return WHY("expected a whole number for %s, found '%.40s'", what, t);
    if (rc == -2 || (!neg && mag > (uint64_t)hi) || (neg && mag > (uint64_t)0 - (uint64_t)lo))
        return WHY("%s must be between %lld and %lld, found '%.40s'", what, (long long)lo, (long long)hi, t);
    v = neg ? (int64_t)((uint64_t)0 - mag) : (int64_t)mag;
    if (v < lo) return WHY("%s must be between %lld and %lld, found '%.40s'", what, (long long)lo, (long long)hi, t);
    *out = v;
    return 0;
}

/* An unsigned 64-bit integer in [lo, UINT64_MAX] (seeds, event counts). */
int scnp_u64_parse(const char *t, uint64_t lo, const char *what, uint64_t *out, char *why) {
    uint64_t v;
    int rc = digits_u64(t, &v);

    if (rc == -1) return WHY("expected a whole number for %s, found '%.40s'", what, t);
    if (rc == -2) return WHY("'%.40s' is too large; %s must be at most %llu", t, what, (unsigned long long)UINT64_MAX);
    if (v < lo) return WHY("%s must be at least %llu, found '%.40s'", what, (unsigned long long)lo, t);
    *out = v;
    return 0;
}

static uint64_t gcd_u64(uint64_t a, uint64_t b) {
    while (b) {
        uint64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* A duration: [sign] digits [. digits] unit, converted exactly to ns with
 * integer arithmetic. A sign is accepted only when signed_ok. */
int scnp_dur_parse(const char *t, int signed_ok, sim_ns *out, char *why) {
    static const struct {
        const char *name;
        uint64_t ns;
    } units[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}, {"m", 60000000000ull}};
    const char *p = t;
    int neg = 0, big = 0, fd = 0;
    uint64_t ip = 0, fp = 0, pow = 1, u = 0, g, v;
    size_t k;
    char lim[48];

    scn_format_duration(lim, sizeof lim, SIM_TIME_MAX);
    if (*p == '+' || *p == '-') {
        if (!signed_ok && *p == '-') return WHY("negative duration '%.40s'; expected 0 or more", t);
        if (!signed_ok)
            return WHY("unexpected sign in '%.40s'; only clock steps and slews take a signed "
                       "duration",
                       t);
        neg = *p == '-';
        p++;
    }
    if (!scnp_is_digit((unsigned char)*p)) {
        if (*t == '\0') return WHY("expected a duration such as 30s or 500ms");
        return WHY("expected a duration such as 30s or 500ms, found '%.40s'", t);
    }
    for (; scnp_is_digit((unsigned char)*p); p++) {
        if (ip > 1000000000000000000ull) big = 1;
        else ip = ip * 10 + (uint64_t)(*p - '0');
    }
    if (*p == '.') {
        p++;
        if (!scnp_is_digit((unsigned char)*p)) return WHY("expected digits after '.' in '%.40s'", t);
        for (; scnp_is_digit((unsigned char)*p); p++) {
            if (fd == 9) return WHY("too many decimals in '%.40s'; at most 9", t);
            fp = fp * 10 + (uint64_t)(*p - '0');
            pow *= 10;
            fd++;
        }
    }
    if (*p == '\0') return WHY("expected a unit (ns, us, ms, s, m) after '%.40s'", t);
    for (k = 0; k < sizeof units / sizeof units[0]; k++)
        if (strcmp(p, units[k].name) == 0) u = units[k].ns;
    if (u == 0) return WHY("unknown unit '%.20s' in '%.40s'; expected ns, us, ms, s or m", p, t);
    if (big || ip > (uint64_t)SIM_TIME_MAX / u)
        return WHY("duration '%.40s' is beyond the limit of %s (SIM_TIME_MAX)", t, lim);
    v = ip * u;
    /* fp/pow of a unit is exact iff pow/g divides fp, with g = gcd(u, pow);
     * the quotient then stays below u, so nothing overflows. */
    g = gcd_u64(u, pow);
    if (fp % (pow / g) != 0) return WHY("'%.40s' is not a whole number of nanoseconds", t);
    v += fp / (pow / g) * (u / g);
    if (v > (uint64_t)SIM_TIME_MAX) return WHY("duration '%.40s' is beyond the limit of %s (SIM_TIME_MAX)", t, lim);
    *out = neg ? -(sim_ns)v : (sim_ns)v;
    return 0;
}

int scnp_bool_parse(const char *t, int *out, char *why) {
    static const char *const yes[] = {"on", "yes", "true"}, *const no[] = {"off", "no", "false"};
    size_t k;

    for (k = 0; k < 3; k++) {
        if (scnp_same_word_ci(t, yes[k])) {
            *out = 1;
            return 0;
        }
        if (scnp_same_word_ci(t, no[k])) {
            *out = 0;
            return 0;
        }
    }
    return WHY("expected on or off (or yes/no, true/false), found '%.40s'", t);
}

/* A loss probability: 0.5% or 0.005 or 5000ppm, kept exactly in ppm. */
int scnp_loss_parse(const char *t, uint32_t *out, char *why) {
    const char *p = t;
    size_t n = strlen(t);
    uint64_t ip = 0, f9 = 0, ppm;
    int fd = 0, pct = 0;

    if (n > 3 && strcmp(t + n - 3, "ppm") == 0) {
        char num[WHY_MAX];
        int64_t v;
        if (n - 3 >= sizeof num) return WHY("expected a loss such as 0.5%%, 0.005 or 5000ppm, found '%.40s'", t);
        memcpy(num, t, n - 3);
        num[n - 3] = '\0';
        if (scnp_int_parse(num, 0, 1000000, "loss in ppm", &v, why) < 0) return -1;
        *out = (uint32_t)v;
        return 0;
    }
    if (!scnp_is_digit((unsigned char)*p))
        return WHY("expected a loss such as 0.5%%, 0.005 or 5000ppm, found '%.40s'", t);
    for (; scnp_is_digit((unsigned char)*p); p++) {
        ip = ip * 10 + (uint64_t)(*p - '0');
        if (ip > 1000) return WHY("loss '%.40s' is more than 100%%", t);
    }
    if (*p == '.') {
        p++;
        if (!scnp_is_digit((unsigned char)*p)) return WHY("expected digits after '.' in '%.40s'", t);
        for (; scnp_is_digit((unsigned char)*p); p++) {
            if (fd == 9) {
                if (*p != '0') return WHY("loss '%.40s' is finer than one part per million", t);
                continue;
            }
            f9 = f9 * 10 + (uint64_t)(*p - '0');
            fd++;
        }
    }
    for (; fd < 9; fd++) f9 *= 10;
    if (*p == '%' && p[1] == '\0') pct = 1;
    else if (*p != '\0') return WHY("expected a loss such as 0.5%%, 0.005 or 5000ppm, found '%.40s'", t);
    if (pct) {
        if (f9 % 100000 != 0) return WHY("loss '%.40s' is finer than one part per million", t);
        ppm = ip * 10000 + f9 / 100000;
        if (ppm > 1000000) return WHY("loss '%.40s' is more than 100%%", t);
    } else {
        if (f9 % 1000 != 0) return WHY("loss '%.40s' is finer than one part per million", t);
        ppm = ip * 1000000 + f9 / 1000;
        if (ppm > 1000000) return WHY("loss '%.40s' is more than 1 (100%%)", t);
    }
    *out = (uint32_t)ppm;
    return 0;
}

/* A latency: DUR (fixed) or DUR..DUR (uniform). On failure *errcol is the
 * offset within t of the part at fault. */
int scnp_latency_parse(char *t, struct scn_latency *out, char *why, int *errcol) {
    char *dots = strstr(t, "..");
    sim_ns lo, hi;

    *errcol = 0;
    if (dots == NULL) {
        if (scnp_dur_parse(t, 0, &lo, why) < 0) return -1;
        out->min_ns = out->max_ns = lo;
        return 0;
    }
    *dots = '\0';
    if (scnp_dur_parse(t, 0, &lo, why) < 0) {
        *dots = '.';
        return -1;
    }
    *errcol = (int)(dots - t) + 2;
    if (scnp_dur_parse(dots + 2, 0, &hi, why) < 0) {
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
int scnp_clock_which_parse(const char *t, enum scn_clock_which *out, char *why) {
    if (strcmp(t, "wall") == 0) *out = SCN_CLOCK_WALL;
    else if (strcmp(t, "monotonic") == 0 || strcmp(t, "mono") == 0) *out = SCN_CLOCK_MONO;
    else if (strcmp(t, "both") == 0) *out = SCN_CLOCK_BOTH;
    else return WHY("unknown clock '%.40s'; expected wall, monotonic or both", t);
    return 0;
}

int scnp_drift_parse(const char *t, int64_t *out, char *why) {
    size_t n = strlen(t);
    char num[WHY_MAX];

    if (n <= 3 || n - 3 >= sizeof num || strcmp(t + n - 3, "ppm") != 0)
        return WHY("expected a drift in ppm, such as 200ppm or -50ppm, found '%.40s'", t);
    memcpy(num, t, n - 3);
    num[n - 3] = '\0';
    return scnp_int_parse(num, -500000, 500000, "drift in ppm", out, why);
}

int scnp_is_word(const char *s, const char *extra) {
    if (!scnp_is_alpha((unsigned char)*s)) return 0;
    for (s++; *s; s++)
        if (!scnp_is_alpha((unsigned char)*s) && !scnp_is_digit((unsigned char)*s) && strchr(extra, *s) == NULL)
            return 0;
    return 1;
}

int scnp_is_opt_key(const char *s) { return scnp_is_word(s, "-_."); }

/* Store or replace a lock option. */
int scnp_opt_put(struct scenario *s, const char *key, const char *val, struct scn_pos pos, char *why) {
    struct scn_opt *o = (struct scn_opt *)scenario_opt(s, key);

    if (!scnp_is_opt_key(key))
        return WHY("'%.40s' is not an option name; use a letter, then letters, digits, '-' "
                   "or '_'",
                   key);
    if (strlen(key) >= SCN_OPT_MAX)
        return WHY("option name '%.40s' is longer than %d characters", key, SCN_OPT_MAX - 1);
    if (strlen(val) >= SCN_OPT_MAX)
        return WHY("the value of '%.40s' is longer than %d characters", key, SCN_OPT_MAX - 1);
    if (o == NULL) {
        if (s->nopts == SCN_MAX_OPTS) return WHY("more than %d lock options (SCN_MAX_OPTS)", SCN_MAX_OPTS);
        if ((o = scenario_add_opt(s)) == NULL) return WHY("out of memory"), LSIM_ENOMEM;
        scn_copy_str(o->key, sizeof o->key, key);
    }
    scn_copy_str(o->val, sizeof o->val, val);
    o->pos = pos;
    return 0;
}

int scnp_purpose_parse(const char *t, enum scn_purpose *out, char *why) {
    if (strcmp(t, "correctness") == 0) *out = SCN_PURPOSE_CORRECTNESS;
    else if (strcmp(t, "efficiency") == 0) *out = SCN_PURPOSE_EFFICIENCY;
    else return WHY("unknown purpose '%.40s'; expected correctness or efficiency", t);
    return 0;
}

/* ---- The public helpers for lock algorithms ---- */

int scn_parse_duration(const char *text, sim_ns *out) {
    char why[WHY_MAX];

    return text ? scnp_dur_parse(text, 0, out, why) : -1;
}

int scn_parse_int(const char *text, int64_t *out) {
    char why[WHY_MAX];

    return text ? scnp_int_parse(text, INT64_MIN, INT64_MAX, "the value", out, why) : -1;
}

int scn_parse_bool(const char *text, int *out) {
    char why[WHY_MAX];

    return text ? scnp_bool_parse(text, out, why) : -1;
}
