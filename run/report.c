/* Report writers (report.h): text, JSON, CSV, TAP and JUnit, with the
 * metrics taken from the metric table and every string escaped. */
#include "report.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "memtext.h"
#include "scenario.h"
#include "text.h"

/* ---- Escaping --------------------------------------------------------------- */

/* Where s (n bytes left) holds a byte >= 0x80: write its UTF-8 sequence,
 * or U+FFFD for a byte that starts none; returns the bytes taken. xml: a
 * character XML 1.0 forbids (U+FFFE, U+FFFF) is written as '?'. */
static size_t put_utf8(FILE *f, const char *s, size_t n, int xml) {
    const unsigned char *p = (const unsigned char *)s;
    size_t l = text_utf8_len(p, n);
    if (l == 0) {
        fputs(TEXT_REPLACEMENT, f);
        return 1;
    }
    if (xml && l == 3 && p[0] == 0xef && p[1] == 0xbf && p[2] >= 0xbe) fputc('?', f);
    else fwrite(s, 1, l, f);
    return l;
}

void report_json_str(FILE *f, const char *s) {
    size_t n = s ? strlen(s) : 0;
    fputc('"', f);
    for (size_t i = 0; i < n;) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x80) {
            i += put_utf8(f, s + i, n - i, 0);
            continue;
        }
        switch (ch) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\t': fputs("\\t", f); break;
        case '\r': fputs("\\r", f); break;
        default:
            if (ch < 0x20 || ch == 0x7f) fprintf(f, "\\u%04x", ch);
            else fputc(ch, f);
        }
        i++;
    }
    fputc('"', f);
}

void report_xml_str(FILE *f, const char *s) {
    size_t n = s ? strlen(s) : 0;
    for (size_t i = 0; i < n;) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x80) {
            i += put_utf8(f, s + i, n - i, 1);
            continue;
        }
        switch (ch) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        case '\r': fputs("&#13;", f); break;
        default:
            /* XML 1.0 allows no control characters but tab, newline and CR. */
            if (ch >= 0x20 || ch == '\n' || ch == '\t') fputc(ch, f);
            else fputc('?', f);
        }
        i++;
    }
}

void report_csv_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; s && *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void report_shell_word(FILE *f, const char *s) {
    int safe = *s != '\0';
    for (const char *p = s; *p; p++) {
        char c = *p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("-_./=:,+%@", c)))
            safe = 0;
    }
    if (safe) {
        fputs(s, f);
        return;
    }
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'') fputs("'\\''", f);
        else fputc(*s, f);
    }
    fputc('\'', f);
}

/* ---- Shared pieces ------------------------------------------------------------ */

static const struct {
    const char *name, *alias, *what;
} formats[] = {
#define REPORT_FMT_ROW_(id, name, alias, what) {name, alias, what},
        REPORT_FORMAT_MAP(REPORT_FMT_ROW_)
#undef REPORT_FMT_ROW_
};

const char *report_format_name(enum report_format f) { return f < REPORT_FMT_COUNT ? formats[f].name : "?"; }
const char *report_format_alias(enum report_format f) { return f < REPORT_FMT_COUNT ? formats[f].alias : NULL; }
const char *report_format_what(enum report_format f) { return f < REPORT_FMT_COUNT ? formats[f].what : ""; }

int report_format_parse(const char *name, unsigned offered, enum report_format *out, char *err, size_t errlen) {
    for (int f = 0; f < REPORT_FMT_COUNT; f++)
        if ((offered & (1u << f)) &&
            (strcmp(name, formats[f].name) == 0 || (formats[f].alias && strcmp(name, formats[f].alias) == 0))) {
            *out = (enum report_format)f;
            return LSIM_OK;
        }
    /* "--format takes text, jsonl or csv (json is jsonl, table is text), not 'x'" */
    size_t l = (size_t)snprintf(err, errlen, "--format takes ");
    int n = 0, k = 0;
    for (int f = 0; f < REPORT_FMT_COUNT; f++) n += (offered >> f) & 1;
    for (int f = 0; f < REPORT_FMT_COUNT && l < errlen; f++)
        if (offered & (1u << f))
            l += (size_t)snprintf(err + l, errlen - l, "%s%s", k++ == 0 ? "" : k == n ? " or " : ", ", formats[f].name);
    int aliases = 0;
    for (int f = 0; f < REPORT_FMT_COUNT && l < errlen; f++)
        if ((offered & (1u << f)) && formats[f].alias)
            l += (size_t)snprintf(err + l, errlen - l, "%s%s is %s", aliases++ ? ", " : " (", formats[f].alias,
                                  formats[f].name);
    if (aliases && l < errlen) l += (size_t)snprintf(err + l, errlen - l, ")");
    if (l < errlen) snprintf(err + l, errlen - l, ", not '%.100s'", name);
    return LSIM_EUSAGE;
}

const char *report_outcome_word(int outcome) {
    switch (outcome) {
    case LSIM_OK: return "PASS";
    case LSIM_ESKIPPED: return "SKIP";
    case LSIM_EEXPECT: return "FAIL";
    case LSIM_ETRUNCATED: return "TRUNCATED";
    default: return "ERROR";
    }
}

const char *report_run_word(const struct run_result *r) {
    int outcome = run_outcome(r, 0);
    return outcome == LSIM_OK && r->not_applicable[0] ? REPORT_NOT_APPLICABLE : report_outcome_word(outcome);
}

void report_not_applicable(char *buf, size_t n, const char *na) {
    snprintf(buf, n, "not applicable: %s changes the scenario they were written for (--expect judges them)", na);
}

static const char *verdict_word(const struct checker_report *rep) { return scn_verdict_name(rep->verdict); }

void report_replay(FILE *f, const struct run_result *r, const struct report_ctx *c) {
    fputs("locksim run ", f);
    report_shell_word(f, c->file);
    fprintf(f, " --seed %llu", r->scn ? (unsigned long long)r->scn->seed : 0ull);
    for (int i = 0; i < c->nsets; i++) {
        if (strncmp(c->sets[i], "seed=", 5) == 0) continue; /* --seed says it */
        fputs(" --set ", f);
        report_shell_word(f, c->sets[i]);
    }
    if (c->algo) {
        fputs(" --algo ", f);
        report_shell_word(f, c->algo);
    }
    if (c->width) fprintf(f, " --width %d", c->width);
}

void report_truncation(char *buf, size_t n, const struct run_result *r) {
    char t[32];
    buf[0] = '\0';
    if (!r->truncated || !r->engine) return;
    format_time_ns(t, sizeof t, engine_stop_time(r->engine));
    unsigned long long ev = (unsigned long long)engine_events(r->engine);
    switch (engine_stop_reason(r->engine)) {
    case ENGINE_STOP_LIVELOCK:
        snprintf(buf, n,
                 "livelock: true time stopped advancing at t=%s (%llu events, %u or more in a row at one "
                 "instant), so the run was stopped: no expectation is decided; look for a retry or "
                 "repeat with no delay and zero latency",
                 t, ev, ENGINE_LIVELOCK_EVENTS);
        break;
    case ENGINE_STOP_MEMORY:
        snprintf(buf, n,
                 "the kept trace reached its memory budget (%u MiB) at t=%s after %llu events, so the run "
                 "was stopped: no expectation is decided; `locksim check` keeps no trace and has no such "
                 "limit, or shorten the scenario's duration",
                 (unsigned)(ENGINE_TRACE_BUDGET_BYTES >> 20), t, ev);
        break;
    default:
        snprintf(buf, n,
                 "the run was cut short at t=%s after %llu events (max-events %llu), before its duration: no "
                 "expectation is decided; raise the limit with --set max-events=N or `max-events N` in the file",
                 t, ev, (unsigned long long)r->scn->max_events);
    }
}

/* ---- Text ------------------------------------------------------------------------ */

void report_text_verdict(FILE *f, const struct run_result *r, const struct report_ctx *c) {
    const struct checker_report *rep = r->report;
    char b1[32], b2[32], b3[32];
    const char *off = c->color ? "\033[0m" : "";
    const char *vcol = !c->color                           ? ""
                       : r->truncated                      ? "\033[1;33m"
                       : rep->verdict == SCN_VERDICT_SAFE  ? "\033[1;32m"
                       : rep->verdict == SCN_VERDICT_STUCK ? "\033[1;33m"
                                                           : "\033[1;31m";
    if (r->truncated) {
        char why[480];
        report_truncation(why, sizeof why, r);
        if (!why[0] && c->truncation) snprintf(why, sizeof why, "%s", c->truncation);
        fprintf(f, "\nVerdict: %sTRUNCATED%s: %s\n", vcol, off, why);
        fprintf(f, "  (figures so far, not a verdict: %s)\n", rep->headline);
    } else {
        fprintf(f, "\nVerdict: %s%s%s\n", vcol, rep->headline, off);
        if (rep->verdict == SCN_VERDICT_SAFE && rep->writes_accepted == 0 && rep->writes_rejected > 0)
            fprintf(f,
                    "  note: SAFE, but no write was accepted: every one of the %lld writes was "
                    "rejected\n",
                    (long long)rep->writes_rejected);
    }
    format_time_ns(b1, sizeof b1, rep->double_entry_ns);
    fprintf(f, "  double entry     %lld interval%s, %s in total%s\n", (long long)rep->double_entries,
            rep->double_entries == 1 ? "" : "s", b1,
            (rep->purpose == SCN_PURPOSE_EFFICIENCY || rep->lock_free) && rep->double_entries ? " (duplicated work)"
                                                                                              : "");
    if (rep->lock_free)
        fprintf(f,
                "  duplicated work  %lld write%s refused by the algorithm's own rule (it takes no lock: "
                "no write is stale); %lld accepted write%s out of serial order\n",
                (long long)rep->duplicated_work, rep->duplicated_work == 1 ? "" : "s",
                (long long)rep->non_serial_writes, rep->non_serial_writes == 1 ? "" : "s");
    else
        fprintf(f, "  stale writes     %lld accepted, %lld rejected%s\n", (long long)rep->stale_accepted,
                (long long)rep->stale_rejected, trace_rule_says(rep->resource_rule));
    if (rep->late_writes)
        fprintf(f,
                "  late writes      %lld accepted before any operation of a newer grant (in grant order: "
                "no harm)\n",
                (long long)rep->late_writes);
    fprintf(f, "  lost updates     %lld (%lld write%s accepted; stock %lld -> %lld)\n", (long long)rep->lost_updates,
            (long long)rep->writes_accepted, rep->writes_accepted == 1 ? "" : "s", (long long)rep->initial_stock,
            (long long)rep->final_stock);
    if (rep->repeated_writes)
        fprintf(f, "  repeated writes  %lld (absolute writes of the value already held: done again, no change)\n",
                (long long)rep->repeated_writes);
    fprintf(f, "  wrong releases   %lld\n", (long long)rep->wrong_releases);
    fprintf(f, "  stuck clients    %lld\n", (long long)rep->stuck);
    if (rep->fenced_out)
        fprintf(f, "  fenced out       %lld (every write under a grant still current was refused)\n",
                (long long)rep->fenced_out);
    format_time_ns(b1, sizeof b1, rep->acquire_p50_ns);
    format_time_ns(b2, sizeof b2, rep->acquire_p99_ns);
    format_time_ns(b3, sizeof b3, rep->acquire_max_ns);
    fprintf(f,
            "  acquisitions     %lld ok, %lld gave up, %lld refused attempt%s; latency p50 %s, "
            "p99 %s, max %s\n",
            (long long)rep->acquires, (long long)rep->failed_acquires, (long long)rep->denied_attempts,
            rep->denied_attempts == 1 ? "" : "s", b1, b2, b3);
    format_time_ns(b1, sizeof b1, rep->unavailable_ns);
    format_time_ns(b2, sizeof b2, rep->end_ns);
    fprintf(f,
            "  progress         %lld client%s never acquired; lock unavailable %s of %s (a client "
            "acquiring, none in the critical section)\n",
            (long long)rep->starved, rep->starved == 1 ? "" : "s", b1, b2);
}

/* Expectation i judged, and its measured value for people in b: a metric in
 * its unit; a token; a time or "never"; an interval or "none"; a count of
 * writes. Returns 1 when it holds. */
static int expect_measured(const struct run_result *r, int i, char *b, size_t n) {
    const struct scn_expect *x = &r->scn->expects[i];
    int64_t actual;
    int ok = run_expect(r, i, &actual);
    char t1[24], t2[24];
    switch (x->kind) {
    case SCN_EXPECT_METRIC: metric_format(b, n, x->metric, actual); break;
    case SCN_EXPECT_TOKEN:
        if (checker_fact_of(r->report, x->client_index) && actual == 0 &&
            checker_fact_of(r->report, x->client_index)->first_acquired >= 0)
            snprintf(b, n, "no token");
        else if (actual == 0) snprintf(b, n, "no grant");
        else snprintf(b, n, "%" PRId64, actual);
        break;
    case SCN_EXPECT_ACQUIRES_AT:
        if (actual < 0) snprintf(b, n, "never");
        else metric_format(b, n, SCN_M_END_NS, actual);
        break;
    case SCN_EXPECT_DE_SPAN:
        if (actual < 0) {
            snprintf(b, n, "none");
        } else {
            metric_format(t1, sizeof t1, SCN_M_END_NS, actual);
            metric_format(t2, sizeof t2, SCN_M_END_NS, r->report->de_first_to_ns);
            snprintf(b, n, "from %s to %s", t1, t2);
        }
        break;
    case SCN_EXPECT_WRITE_ACCEPTED:
    case SCN_EXPECT_WRITE_REJECTED:
        snprintf(b, n, "%" PRId64 " %s", actual, x->kind == SCN_EXPECT_WRITE_ACCEPTED ? "accepted" : "rejected");
        break;
    case SCN_EXPECT_STALE_BY:
    case SCN_EXPECT_STALE_REJECTED_BY:
        snprintf(b, n, "%" PRId64 " stale %s", actual, x->kind == SCN_EXPECT_STALE_BY ? "accepted" : "rejected");
        break;
    case SCN_EXPECT_FENCED_OUT: snprintf(b, n, "%s", actual ? "fenced out" : "not fenced out"); break;
    }
    return ok;
}

int report_expect_failure(char *buf, size_t n, const char *file, const struct run_result *r, int k) {
    const struct scn_expect *x = &r->scn->expects[k];
    char b[96];
    if (expect_measured(r, k, b, sizeof b)) return 0; /* holds: no line */
    snprintf(buf, n, "%s:%d:%d: expect %s: measured %s", file, x->pos.line, x->pos.col, x->text, b);
    return 1;
}

void report_text_expects(FILE *f, const struct run_result *r, const struct report_ctx *c) {
    const struct scenario *s = r->scn;
    const char *off = c->color ? "\033[0m" : "";
    if (!s->nexpects) return;
    int na = r->not_applicable[0] != '\0';
    char why[400] = "";
    if (na && !r->truncated) {
        why[0] = ' ';
        report_not_applicable(why + 1, sizeof why - 1, r->not_applicable);
    }
    fprintf(f, "\nExpectations:%s\n", r->truncated ? " (not decided: the run was cut short)" : why);
    for (int i = 0; i < s->nexpects; i++) {
        char b[96];
        int ok = expect_measured(r, i, b, sizeof b);
        const char *word = r->truncated ? "----" : na ? "n/a " : ok ? "ok  " : "FAIL";
        const char *col = !c->color || na ? "" : r->truncated ? "\033[33m" : ok ? "\033[32m" : "\033[1;31m";
        fprintf(f, "  %s%s%s  line %-3d expect %-32s (measured %s)\n", col, word, off, s->expects[i].pos.line,
                s->expects[i].text, b);
    }
}

/* ---- JSON ------------------------------------------------------------------------ */

static void json_metrics(FILE *f, const struct checker_report *rep) {
    for (int m = 0; m < SCN_M_COUNT; m++) {
        const struct metric_info *mi = metric_info((enum scn_metric)m);
        int64_t v = checker_metric(rep, (enum scn_metric)m);
        fprintf(f, ",\"%s\":", mi->key);
        if (mi->unit == METRIC_UNIT_VERDICT) fprintf(f, "\"%s\"", scn_verdict_name((enum scn_verdict)v));
        else fprintf(f, "%" PRId64, v);
    }
}

int report_json(FILE *f, const struct run_result *r, const struct report_ctx *c, const char *narration) {
    const struct scenario *s = r->scn;
    const struct checker_report *rep = r->report;
    /* What needs memory is made before the first byte is written: an object
     * is then written whole or not at all. */
    struct memtext replay;
    if (memtext_open(&replay) == 0) report_replay(replay.f, r, c);
    char *line = narration ? malloc(strlen(narration) + 1) : NULL;
    if (memtext_close(&replay) != 0 || (narration && !line)) {
        free(replay.buf);
        free(line);
        return LSIM_ENOMEM;
    }
    char why[480];
    fputs("{\"file\":", f);
    report_json_str(f, c->file);
    fputs(",\"title\":", f);
    report_json_str(f, s->title);
    fputs(",\"algo\":", f);
    report_json_str(f, r->algo->name);
    fprintf(f, ",\"seed\":%llu,\"events\":%llu,\"outcome\":\"%s\",\"truncated\":%s", (unsigned long long)s->seed,
            (unsigned long long)engine_events(r->engine), report_run_word(r), r->truncated ? "true" : "false");
    if (r->not_applicable[0]) {
        fputs(",\"not_applicable\":", f);
        report_json_str(f, r->not_applicable);
    }
    report_truncation(why, sizeof why, r);
    if (why[0]) {
        static const char *const reasons[] = {"end", "max-events", "livelock", "memory"};
        unsigned k = (unsigned)engine_stop_reason(r->engine);
        fprintf(f, ",\"stop_reason\":\"%s\",\"stop_ns\":%lld,\"truncation\":", k < 4 ? reasons[k] : "other",
                (long long)engine_stop_time(r->engine));
        report_json_str(f, why);
    }
    fprintf(f, ",\"purpose\":\"%s\",\"fenced\":%s,\"resource_rule\":\"%s\",\"headline\":",
            rep->purpose == SCN_PURPOSE_EFFICIENCY ? "efficiency" : "correctness",
            rep->resource_rule == TRACE_RULE_TOKENS ? "true" : "false", trace_rule_word(rep->resource_rule));
    report_json_str(f, rep->headline);
    json_metrics(f, rep);
    fprintf(f, ",\"trace_hash\":\"%016llx\",\"expects\":[", (unsigned long long)r->trace_hash);
    for (int i = 0; i < s->nexpects; i++) {
        char b[96];
        int ok = expect_measured(r, i, b, sizeof b);
        fprintf(f, "%s{\"line\":%d,\"expect\":", i ? "," : "", s->expects[i].pos.line);
        report_json_str(f, s->expects[i].text);
        if (r->truncated || r->not_applicable[0]) fputs(",\"ok\":null,\"measured\":", f);
        else fprintf(f, ",\"ok\":%s,\"measured\":", ok ? "true" : "false");
        report_json_str(f, b);
        fputc('}', f);
    }
    fputs("]", f);
    if (narration) {
        fputs(",\"narration\":[", f);
        int first = 1;
        for (const char *p = narration; *p;) {
            const char *nl = strchr(p, '\n');
            size_t l = nl ? (size_t)(nl - p) : strlen(p);
            memcpy(line, p, l);
            line[l] = '\0';
            const char *q = line;
            while (*q == ' ') q++;
            fputs(first ? "" : ",", f);
            report_json_str(f, q);
            first = 0;
            p += l + (nl ? 1 : 0);
        }
        fputs("]", f);
    }
    fputs(",\"replay\":", f);
    /* The replay line, escaped as a JSON string. */
    report_json_str(f, replay.buf);
    free(replay.buf);
    free(line);
    fputs("}\n", f);
    return 0;
}

void report_json_error(FILE *f, const char *file, const struct run_result *r) {
    fputs("{\"file\":", f);
    report_json_str(f, file);
    fprintf(f, ",\"outcome\":\"ERROR\",\"error_code\":\"%s\",\"exit_status\":%d,\"error\":", lsim_errname(r->rc),
            lsim_exit_status(r->rc));
    report_json_str(f, r->error);
    fputs("}\n", f);
}

/* ---- Summaries for sets of runs ---------------------------------------------- */

const char *report_summary_word(const struct report_summary *s) {
    if (s->outcome != LSIM_OK) return report_outcome_word(s->outcome);
    return !s->judged ? "RAN" : s->not_applicable[0] ? REPORT_NOT_APPLICABLE : "PASS";
}

/* A growing string for the failure lines (no memory stream: batch makes one
 * summary per run, and most runs have no failure to write). */
struct sbuf {
    char *p;
    size_t len, cap;
    int oom;
};

static void sb_printf(struct sbuf *sb, const char *fmt, ...) {
    for (int pass = 0; pass < 2 && !sb->oom; pass++) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(sb->p ? sb->p + sb->len : NULL, sb->p ? sb->cap - sb->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            sb->oom = 1;
            return;
        }
        if (sb->p && sb->len + (size_t)n < sb->cap) {
            sb->len += (size_t)n;
            return;
        }
        size_t cap = sb->cap ? sb->cap : 256;
        while (cap <= sb->len + (size_t)n) cap *= 2;
        char *q = realloc(sb->p, cap);
        if (!q) {
            sb->oom = 1;
            return;
        }
        sb->p = q;
        sb->cap = cap;
    }
}

int report_summarize(struct report_summary *sum, const char *file, const struct run_result *r, int judge) {
    int require_expects = judge == 2;
    memset(sum, 0, sizeof *sum);
    sum->file = file;
    sum->rc = r->rc;
    sum->judged = judge > 0;
    sum->outcome = run_outcome(r, require_expects);
    if (!judge && sum->outcome == LSIM_EEXPECT) sum->outcome = LSIM_OK;
    scn_copy_str(sum->error, sizeof sum->error, r->error);
    struct sbuf sb = {0};
    if (r->rc == LSIM_OK) {
        const struct scenario *s = r->scn;
        scn_copy_str(sum->title, sizeof sum->title, s->title);
        scn_copy_str(sum->algo, sizeof sum->algo, r->algo->name);
        sum->seed = s->seed;
        sum->events = engine_events(r->engine);
        sum->trace_hash = r->trace_hash;
        sum->nexpects = r->nexpects;
        sum->failed = r->failed;
        sum->truncated = r->truncated;
        sum->rep = *r->report;
        scn_copy_str(sum->not_applicable, sizeof sum->not_applicable, r->not_applicable);
        if (r->truncated) {
            char why[480];
            report_truncation(why, sizeof why, r);
            sb_printf(&sb, "%s: TRUNCATED: %s\n", file, why);
        } else if (judge && !r->not_applicable[0]) {
            for (int k = 0; k < s->nexpects; k++) {
                char line[300];
                if (report_expect_failure(line, sizeof line, file, r, k)) sb_printf(&sb, "%s\n", line);
            }
            if (require_expects && s->nexpects == 0)
                sb_printf(&sb, "%s: no expect lines: a scenario must state its outcome\n", file);
        }
    }
    if (!sb.p && !sb.oom) { /* no failure: the empty string */
        sb.p = malloc(1);
        if (sb.p) sb.p[0] = '\0';
    }
    if (sb.oom || !sb.p) {
        free(sb.p);
        return LSIM_ENOMEM;
    }
    sum->failures = sb.p;
    return LSIM_OK;
}

void report_summary_close(struct report_summary *sum) {
    free(sum->failures);
    sum->failures = NULL;
}

/* ---- CSV ----------------------------------------------------------------------- */

/* The key of a --set KEY=VALUE (len bytes), and its value. */
static size_t set_key_len(const char *kv) { return strcspn(kv, "="); }
static const char *set_value(const char *kv) {
    const char *eq = strchr(kv, '=');
    return eq ? eq + 1 : "";
}

void report_csv_header(FILE *f) { report_csv_header_sets(f, NULL, 0); }

void report_csv_header_sets(FILE *f, const char *const *sets, int nsets) {
    fputs("file,algorithm,seed", f);
    for (int i = 0; i < nsets; i++) {
        char col[300];
        snprintf(col, sizeof col, "set.%.*s", (int)set_key_len(sets[i]), sets[i]);
        fputc(',', f);
        report_csv_str(f, col);
    }
    fputs(",outcome", f);
    for (int m = 0; m < SCN_M_COUNT; m++) fprintf(f, ",%s", metric_info((enum scn_metric)m)->key);
    fputs(",trace_hash,note\n", f);
}

void report_csv_row(FILE *f, const struct report_summary *s) { report_csv_row_sets(f, s, NULL, 0); }

void report_csv_row_sets(FILE *f, const struct report_summary *s, const char *const *sets, int nsets) {
    report_csv_str(f, s->file);
    fputc(',', f);
    report_csv_str(f, s->algo);
    fprintf(f, ",%llu", s->seed);
    for (int i = 0; i < nsets; i++) {
        fputc(',', f);
        report_csv_str(f, set_value(sets[i]));
    }
    fprintf(f, ",%s", report_summary_word(s));
    for (int m = 0; m < SCN_M_COUNT; m++) {
        if (s->rc) {
            fputc(',', f);
            continue;
        }
        const struct metric_info *mi = metric_info((enum scn_metric)m);
        int64_t v = checker_metric(&s->rep, (enum scn_metric)m);
        if (mi->unit == METRIC_UNIT_VERDICT) fprintf(f, ",%s", scn_verdict_name((enum scn_verdict)v));
        else fprintf(f, ",%" PRId64, v);
    }
    if (s->rc) fputc(',', f);
    else fprintf(f, ",%016llx", s->trace_hash);
    fputc(',', f);
    report_csv_str(f, s->rc ? s->error : s->rep.headline);
    fputc('\n', f);
}

/* ---- JSON Lines of summaries (batch, check-trace) ---------------------------- */

/* The record is built in a stack buffer and written with one fwrite (batch
 * writes one per run, so no fprintf, no allocation, no per-character stdio
 * call); the buffer is written out whenever an append might not fit, so any
 * length works. The bytes are those fprintf would give: %llu, %d, %016llx,
 * PRId64 and report_json_str's escapes. */
struct jbuf {
    FILE *f;
    size_t len;
    char b[4096];
};

/* Room for n more bytes (n <= sizeof b). */
static inline void jb_room(struct jbuf *j, size_t n) {
    if (j->len + n > sizeof j->b) {
        fwrite(j->b, 1, j->len, j->f);
        j->len = 0;
    }
}

static void jb_put_long(struct jbuf *j, const char *s, size_t n) {
    while (n) {
        jb_room(j, 1);
        size_t k = sizeof j->b - j->len;
        if (k > n) k = n;
        memcpy(j->b + j->len, s, k);
        j->len += k;
        s += k;
        n -= k;
    }
}

static inline void jb_put(struct jbuf *j, const char *s, size_t n) {
    if (j->len + n <= sizeof j->b) {
        memcpy(j->b + j->len, s, n);
        j->len += n;
    } else jb_put_long(j, s, n);
}

static void jb_lit(struct jbuf *j, const char *s) { jb_put(j, s, strlen(s)); }
/* A string literal, its length known where it is written. */
#define JB_LIT(j, lit) jb_put((j), "" lit, sizeof(lit) - 1)

static void jb_u64(struct jbuf *j, unsigned long long v) {
    char t[24];
    size_t n = 0;
    do t[sizeof t - ++n] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    jb_put(j, t + sizeof t - n, n);
}

static void jb_i64(struct jbuf *j, int64_t v) {
    if (v < 0) {
        jb_put(j, "-", 1);
        jb_u64(j, 0ull - (unsigned long long)v);
    } else jb_u64(j, (unsigned long long)v);
}

static void jb_hex16(struct jbuf *j, unsigned long long v) {
    static const char hex[] = "0123456789abcdef";
    jb_room(j, 16);
    for (int k = 15; k >= 0; k--, v >>= 4) j->b[j->len + (size_t)k] = hex[v & 15];
    j->len += 16;
}

/* report_json_str into the buffer: n bytes of s (quotes included), in
 * pieces that start within 256 bytes, each with room for its worst case (6
 * bytes out for each unit taken: an escape, a UTF-8 sequence of up to 4, or
 * U+FFFD for a byte that is not UTF-8). */
static void jb_str_n(struct jbuf *j, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    jb_room(j, 1);
    j->b[j->len++] = '"';
    while (n) {
        size_t piece = n < 256 ? n : 256, i = 0;
        jb_room(j, piece * 6);
        char *o = j->b + j->len;
        while (i < piece) {
            unsigned char ch = (unsigned char)s[i];
            if (ch >= 0x80) {
                size_t l = text_utf8_len((const unsigned char *)s + i, n - i);
                if (l == 0) {
                    memcpy(o, TEXT_REPLACEMENT, 3);
                    o += 3;
                    i++;
                } else {
                    memcpy(o, s + i, l);
                    o += l;
                    i += l;
                }
                continue;
            }
            i++;
            if (ch >= 0x20 && ch != 0x7f && ch != '"' && ch != '\\') {
                *o++ = (char)ch;
                continue;
            }
            char esc = ch == '"' ? '"' : ch == '\\' ? '\\' : ch == '\n' ? 'n' : ch == '\t' ? 't' : ch == '\r' ? 'r' : 0;
            *o++ = '\\';
            if (esc) *o++ = esc;
            else {
                *o++ = 'u';
                *o++ = '0';
                *o++ = '0';
                *o++ = hex[ch >> 4];
                *o++ = hex[ch & 15];
            }
        }
        j->len = (size_t)(o - j->b);
        s += i; /* a UTF-8 sequence may end up to 3 bytes past the piece */
        n -= i;
    }
    jb_room(j, 1);
    j->b[j->len++] = '"';
}

static void jb_str(struct jbuf *j, const char *s) { jb_str_n(j, s ? s : "", s ? strlen(s) : 0); }

/* Each metric's `,"key":`, made from the metric table, with its length. */
#define JSON_KEY_(e, field, word, shorthand, key, unit, desc) \
    [SCN_M_##e] = {",\"" key "\":", sizeof(",\"" key "\":") - 1},
static const struct {
    const char *text;
    size_t len;
} json_key[SCN_M_COUNT] = {METRIC_MAP(JSON_KEY_)};
#undef JSON_KEY_

void report_json_summary(FILE *f, const struct report_summary *s, const char *const *sets, int nsets) {
    struct jbuf j;
    j.f = f;
    j.len = 0;
    JB_LIT(&j, "{\"scenario\":");
    jb_str(&j, s->file);
    JB_LIT(&j, ",\"title\":");
    jb_str(&j, s->title);
    JB_LIT(&j, ",\"algorithm\":");
    jb_str(&j, s->algo);
    JB_LIT(&j, ",\"seed\":");
    jb_u64(&j, s->seed);
    JB_LIT(&j, ",\"set\":{");
    for (int i = 0; i < nsets; i++) {
        if (i) jb_put(&j, ",", 1);
        size_t kl = set_key_len(sets[i]);
        jb_str_n(&j, sets[i], kl < 299 ? kl : 299); /* as the 300-byte key buffer cut it */
        jb_put(&j, ":", 1);
        jb_str(&j, set_value(sets[i]));
    }
    JB_LIT(&j, "},\"outcome\":\"");
    jb_lit(&j, report_summary_word(s));
    jb_put(&j, "\"", 1);
    if (!s->rc && s->not_applicable[0]) {
        JB_LIT(&j, ",\"not_applicable\":");
        jb_str(&j, s->not_applicable);
    }
    if (s->rc) {
        JB_LIT(&j, ",\"error_code\":\"");
        jb_lit(&j, lsim_errname(s->rc));
        JB_LIT(&j, "\",\"exit_status\":");
        jb_i64(&j, lsim_exit_status(s->rc));
        JB_LIT(&j, ",\"error\":");
        jb_str(&j, s->error);
        JB_LIT(&j, "}\n");
    } else {
        JB_LIT(&j, ",\"events\":");
        jb_u64(&j, s->events);
        if (s->truncated) JB_LIT(&j, ",\"truncated\":true");
        else JB_LIT(&j, ",\"truncated\":false");
        JB_LIT(&j, ",\"expects\":");
        jb_i64(&j, s->nexpects);
        JB_LIT(&j, ",\"failed_expects\":");
        jb_i64(&j, s->failed);
        JB_LIT(&j, ",\"headline\":");
        jb_str(&j, s->rep.headline);
        for (int m = 0; m < SCN_M_COUNT; m++) {
            const struct metric_info *mi = metric_info((enum scn_metric)m);
            int64_t v = checker_metric(&s->rep, (enum scn_metric)m);
            jb_put(&j, json_key[m].text, json_key[m].len);
            if (mi->unit == METRIC_UNIT_VERDICT) {
                jb_put(&j, "\"", 1);
                jb_lit(&j, scn_verdict_name((enum scn_verdict)v));
                jb_put(&j, "\"", 1);
            } else jb_i64(&j, v);
        }
        JB_LIT(&j, ",\"trace_hash\":\"");
        jb_hex16(&j, s->trace_hash);
        JB_LIT(&j, "\"}\n");
    }
    fwrite(j.b, 1, j.len, f);
}

/* ---- TAP and JUnit -------------------------------------------------------------- */

static const char *summary_message(const struct report_summary *s) {
    return s->rc ? s->error : s->failures ? s->failures : "";
}

/* A run whose expect lines were not judged: another than the scenario as written. */
static int summary_na(const struct report_summary *s) {
    return !s->rc && s->outcome == LSIM_OK && s->judged && s->not_applicable[0];
}

void report_tap(FILE *f, const struct report_summary *s, int n) {
    fprintf(f, "TAP version 13\n1..%d\n", n);
    for (int i = 0; i < n; i++) {
        int ok = s[i].outcome == LSIM_OK || s[i].outcome == LSIM_ESKIPPED;
        fprintf(f, "%s %d - %s", ok ? "ok" : "not ok", i + 1, s[i].label ? s[i].label : s[i].file);
        if (s[i].outcome == LSIM_ESKIPPED) fprintf(f, " # SKIP %s", s[i].error);
        else if (!s[i].rc) fprintf(f, " (%s)", s[i].truncated ? "TRUNCATED" : verdict_word(&s[i].rep));
        else fputs(" (ERROR)", f);
        if (summary_na(&s[i])) {
            char why[400];
            report_not_applicable(why, sizeof why, s[i].not_applicable);
            fprintf(f, " # SKIP expectations %s", why);
        }
        fputc('\n', f);
        if (ok) continue;
        fprintf(f, "  ---\n  outcome: %s\n  message: |\n", report_outcome_word(s[i].outcome));
        const char *m = summary_message(&s[i]);
        for (const char *p = m; *p;) {
            const char *nl = strchr(p, '\n');
            int l = nl ? (int)(nl - p) : (int)strlen(p);
            fprintf(f, "    %.*s\n", l, p);
            p += l + (nl ? 1 : 0);
        }
        fputs("  ...\n", f);
    }
}

void report_junit_class(char *buf, size_t n, const char *file) {
    size_t l = 0, len = strlen(file);
    if (len > 5 && strcmp(file + len - 5, ".lsim") == 0) len -= 5;
    if (strcmp(file, "-") == 0) file = "stdin", len = 5;
    buf[0] = '\0';
    for (size_t i = 0; i < len && l + 1 < n;) {
        size_t c = strcspn(file + i, "/");
        if (c > len - i) c = len - i;
        int here = c == 1 && file[i] == '.'; /* "./": nothing */
        if (c && !here) {
            if (l && l + 1 < n) buf[l++] = '.';
            for (size_t k = 0; k < c && l + 1 < n; k++) buf[l++] = file[i + k] == '.' ? '_' : file[i + k];
        }
        i += c + 1;
    }
    buf[l] = '\0';
    if (!l) snprintf(buf, n, "scenario");
}

/* A test case's class and name, and the case it repeats (-1: none). */
struct jcase {
    char *cls, *name;
    int nth; /* 1 = the first with this class and name; 2, 3, ... repeats */
};

static int jcase_cmp(const void *a, const void *b) {
    const struct jcase *x = *(const struct jcase *const *)a, *y = *(const struct jcase *const *)b;
    int c = strcmp(x->cls, y->cls);
    if (!c) c = strcmp(x->name, y->name);
    return c ? c : (x < y ? -1 : x > y);
}

static char *jcase_name(const struct report_summary *s, const char *const *sets, int nsets) {
    struct sbuf sb = {0};
    if (s->rc && s->rc != LSIM_ESKIPPED && !s->algo[0]) sb_printf(&sb, "not run");
    else sb_printf(&sb, "%s seed=%llu", s->algo[0] ? s->algo : "(the scenario's algorithm)", s->seed);
    for (int k = 0; k < nsets; k++) sb_printf(&sb, " %s", sets[k]);
    if (sb.oom) {
        free(sb.p);
        return NULL;
    }
    return sb.p;
}

/* Its outcome's counts in a <testsuite> or <testsuites> over s[0..n). */
static void junit_counts(FILE *f, const struct report_summary *s, int n) {
    int failures = 0, errors = 0, skipped = 0;
    double total = 0;
    for (int i = 0; i < n; i++) {
        if (s[i].rc == LSIM_ESKIPPED || summary_na(&s[i])) skipped++;
        else if (s[i].rc) errors++;
        else if (s[i].outcome != LSIM_OK) failures++;
        total += s[i].seconds;
    }
    fprintf(f, " tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" time=\"%.6f\"", n, failures, errors, skipped,
            total);
}

static void junit_case(FILE *f, const struct report_summary *s, const struct jcase *c) {
    fputs("    <testcase classname=\"", f);
    report_xml_str(f, c->cls);
    fputs("\" name=\"", f);
    report_xml_str(f, c->name);
    if (c->nth > 1) fprintf(f, " #%d", c->nth);
    fputs("\" file=\"", f);
    report_xml_str(f, s->file);
    fprintf(f, "\" time=\"%.6f\">", s->seconds);
    if (s->rc == LSIM_ESKIPPED) {
        fputs("<skipped message=\"", f);
        report_xml_str(f, s->error);
        fputs("\"/>", f);
    } else if (s->rc) {
        fputs("<error message=\"", f);
        report_xml_str(f, lsim_strerror(s->rc));
        fputs("\">", f);
        report_xml_str(f, s->error);
        fputs("</error>", f);
    } else if (s->outcome != LSIM_OK) {
        fputs("<failure message=\"", f);
        report_xml_str(f, s->truncated ? "run cut short (TRUNCATED)" : "expectation failed");
        fputs("\">", f);
        report_xml_str(f, summary_message(s));
        fputs("</failure>", f);
    } else {
        if (summary_na(s)) {
            char why[400];
            report_not_applicable(why, sizeof why, s->not_applicable);
            fputs("<skipped message=\"expectations ", f);
            report_xml_str(f, why);
            fputs("\"/>", f);
        }
        fprintf(f, "<system-out>verdict %s</system-out>", verdict_word(&s->rep));
    }
    fputs("</testcase>\n", f);
}

int report_junit(FILE *f, const char *suite, const struct report_summary *s, int n, const char *const *sets,
                 int nsets) {
    struct jcase *c = calloc(n > 0 ? (size_t)n : 1, sizeof *c);
    struct jcase **order = calloc(n > 0 ? (size_t)n : 1, sizeof *order);
    int rc = c && order ? 0 : LSIM_ENOMEM;
    for (int i = 0; i < n && !rc; i++) {
        char cls[1024];
        report_junit_class(cls, sizeof cls, s[i].file);
        c[i].cls = strdup(cls);
        c[i].name = jcase_name(&s[i], sets, nsets);
        if (!c[i].cls || !c[i].name) rc = LSIM_ENOMEM;
        order[i] = &c[i];
    }
    if (!rc) {
        /* Repeats of a class and name, numbered in list order. */
        qsort(order, (size_t)n, sizeof *order, jcase_cmp);
        for (int i = 0; i < n; i++)
            order[i]->nth = i && strcmp(order[i]->cls, order[i - 1]->cls) == 0 &&
                                            strcmp(order[i]->name, order[i - 1]->name) == 0
                                    ? order[i - 1]->nth + 1
                                    : 1;
        fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"", f);
        report_xml_str(f, suite);
        fputc('"', f);
        junit_counts(f, s, n);
        fputs(">\n", f);
        for (int i = 0, j; i < n; i = j) {
            for (j = i + 1; j < n && strcmp(c[j].cls, c[i].cls) == 0;) j++;
            fputs("  <testsuite name=\"", f);
            report_xml_str(f, c[i].cls);
            fputc('"', f);
            junit_counts(f, s + i, j - i);
            fputs(">\n", f);
            for (int k = i; k < j; k++) junit_case(f, &s[k], &c[k]);
            fputs("  </testsuite>\n", f);
        }
        fputs("</testsuites>\n", f);
    }
    for (int i = 0; c && i < n; i++) {
        free(c[i].cls);
        free(c[i].name);
    }
    free(c);
    free(order);
    return rc;
}
