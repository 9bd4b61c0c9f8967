/* The tables a set of runs makes (report.h), beside report.c's per-run
 * writers: check's line per file and its summary, batch's line per scenario
 * and algorithm over the seeds, and matrix's row per algorithm (text, or one
 * JSON object; matrix's CSV is report.c's run rows). */
#include "report.h"

#include <string.h>

#include "fmt.h"
#include "scenario.h"

void report_matrix_text(FILE *f, const struct report_matrix_row *rows, int n, const char *file,
                        const struct scenario *s, const char *const *sets, int nsets) {
    char t[32];
    fprintf(f, "%s  (%s), seed %llu\n", s->title[0] ? s->title : "(untitled scenario)", file,
            (unsigned long long)s->seed);
    fprintf(f, "resource: stock %lld, %s; purpose %s\n\n", (long long)s->stock,
            s->fencing ? "checks fencing tokens" : "does not check tokens",
            s->purpose == SCN_PURPOSE_EFFICIENCY ? "efficiency" : "correctness");
    fprintf(f, "%-22s %-9s %7s %10s %13s %6s %8s %6s %7s %6s %6s %8s\n", "algorithm", "verdict", "double", "double",
            "stale writes", "lost", "wrong", "stuck", "fenced", "dup.", "never", "unavail.");
    fprintf(f, "%-22s %-9s %7s %10s %13s %6s %8s %6s %7s %6s %6s %8s\n", "", "", "entries", "time", "acc / rej", "upd.",
            "releases", "", "out", "work", "got", "time");
    for (int i = 0; i < n; i++) {
        const struct report_summary *m = &rows[i].sum;
        if (m->rc) {
            fprintf(f, "%-22s cannot run this script: %s\n", rows[i].algo->name, m->error);
            continue;
        }
        char sw[32];
        snprintf(sw, sizeof sw, "%lld / %lld", (long long)m->rep.stale_accepted, (long long)m->rep.stale_rejected);
        format_time_ns(t, sizeof t, m->rep.double_entry_ns);
        char un[32];
        format_time_ns(un, sizeof un, m->rep.unavailable_ns);
        char note[300] = "";
        if (rows[i].dropped[0]) snprintf(note, sizeof note, "  (does not use --set %s)", rows[i].dropped);
        fprintf(f, "%-22s %-9s %7lld %10s %13s %6lld %8lld %6lld %7lld %6lld %6lld %8s%s\n", rows[i].algo->name,
                m->truncated ? "TRUNCATED" : scn_verdict_name(m->rep.verdict), (long long)m->rep.double_entries, t, sw,
                (long long)m->rep.lost_updates, (long long)m->rep.wrong_releases, (long long)m->rep.stuck,
                (long long)m->rep.fenced_out, (long long)m->rep.duplicated_work, (long long)m->rep.starved, un, note);
    }
    fprintf(f, "\nReplay one row: locksim run ");
    report_shell_word(f, file);
    fprintf(f, " --algo NAME");
    for (int i = 0; i < nsets; i++) {
        fprintf(f, " --set ");
        report_shell_word(f, sets[i]);
    }
    fprintf(f, "\n");
}

void report_matrix_json(FILE *f, const struct report_matrix_row *rows, int n, const char *file,
                        const struct scenario *s) {
    fprintf(f, "{\"file\":");
    report_json_str(f, file);
    fprintf(f, ",\"title\":");
    report_json_str(f, s->title);
    fprintf(f, ",\"seed\":%llu,\"rows\":[", (unsigned long long)s->seed);
    for (int i = 0; i < n; i++) {
        const struct report_summary *m = &rows[i].sum;
        fprintf(f, "%s{\"algorithm\":", i ? "," : "");
        report_json_str(f, rows[i].algo->name);
        if (m->rc) {
            fprintf(f, ",\"outcome\":\"ERROR\",\"error\":");
            report_json_str(f, m->error);
        } else {
            fprintf(f, ",\"outcome\":\"%s\"", m->truncated ? "TRUNCATED" : "RAN");
            for (int k = 0; k < SCN_M_COUNT; k++) {
                const struct metric_info *mi = metric_info((enum scn_metric)k);
                int64_t v = checker_metric(&m->rep, (enum scn_metric)k);
                fprintf(f, ",\"%s\":", mi->key);
                if (mi->unit == METRIC_UNIT_VERDICT) fprintf(f, "\"%s\"", scn_verdict_name((enum scn_verdict)v));
                else fprintf(f, "%lld", (long long)v);
            }
            fprintf(f, ",\"trace_hash\":\"%016llx\",\"headline\":", m->trace_hash);
            report_json_str(f, m->rep.headline);
            if (rows[i].dropped[0]) {
                fprintf(f, ",\"unused_sets\":");
                report_json_str(f, rows[i].dropped);
            }
        }
        fputc('}', f);
    }
    fprintf(f, "]}\n");
}

void report_check_text(FILE *f, const struct report_summary *sum, int n, int quiet, int gold_same, int gold_written) {
    int passed = 0, failed = 0, na = 0, expects = 0;
    for (int i = 0; i < n; i++) {
        const struct report_summary *s = &sum[i];
        int not_app = s->outcome == LSIM_OK && s->not_applicable[0];
        expects += s->nexpects;
        if (not_app) na++;
        else if (s->outcome == LSIM_OK) passed++;
        else failed++;
        if (s->rc) continue; /* the front end said why on stderr as it ran */
        fputs(s->failures, f);
        if (!quiet || s->outcome != LSIM_OK) {
            const char *word = not_app ? "n/a" : s->outcome == LSIM_OK ? "ok" : s->truncated ? "TRUNCATED" : "FAIL";
            fprintf(f, "%-4s %s  (%s, %d expectation%s%s%s)\n", word, s->file,
                    s->truncated ? "not decided" : scn_verdict_name(s->rep.verdict), s->nexpects,
                    s->nexpects == 1 ? "" : "s", not_app ? " not applicable: " : "", not_app ? s->not_applicable : "");
        }
    }
    fprintf(f, "scenarios: %d passed, %d failed", passed, failed);
    if (na) fprintf(f, ", %d not applicable", na);
    fprintf(f, " (%d expectations", expects);
    if (na) fprintf(f, ", not judged under --seed, --set or --algo without --expect");
    if (gold_same || gold_written) fprintf(f, ", %d golden traces matched", gold_same);
    if (gold_written) fprintf(f, ", %d written", gold_written);
    fprintf(f, ")\n");
}

void report_group_add(struct report_group *g, const struct report_summary *s) {
    g->runs++;
    if (!g->algo_ran[0]) snprintf(g->algo_ran, sizeof g->algo_ran, "%s", s->algo);
    if (s->outcome == LSIM_OK && s->not_applicable[0]) g->na++;
    else if (s->outcome == LSIM_OK) g->passed++;
    if (s->outcome == LSIM_ESKIPPED) {
        g->skipped++;
        if (!g->first_skip[0])
            snprintf(g->first_skip, sizeof g->first_skip, "%.*s", (int)strcspn(s->error, "\n"), s->error);
        return;
    }
    if (!s->rc && (int)s->rep.verdict >= 0 && (int)s->rep.verdict < 3) g->verdicts[s->rep.verdict]++;
    if (s->outcome != LSIM_OK && !g->first_failure[0]) {
        const char *why = s->rc ? s->error : s->failures ? s->failures : "";
        size_t l = strcspn(why, "\n");
        snprintf(g->first_failure, sizeof g->first_failure, "seed %llu: %.*s", s->seed, (int)l, why);
    }
}

void report_group_write(FILE *f, const struct report_group *g, const char *file, const char *algo, const char *seeds) {
    if (!g->runs) return;
    if (!algo) algo = g->algo_ran[0] ? g->algo_ran : "-";
    size_t failed = g->runs - g->passed - g->skipped - g->na;
    if (g->skipped == g->runs) { /* the algorithm cannot run this scenario at all */
        fprintf(f, "%-4s %s  %s  %s: %zu run%s skipped: %s\n", "skip", file, algo, seeds, g->runs,
                g->runs == 1 ? "" : "s", g->first_skip);
        return;
    }
    fprintf(f, "%-4s %s  %s  %s: %zu run%s, %zu passed, %zu failed",
            failed      ? "FAIL"
            : g->passed ? "ok"
                        : "n/a",
            file, algo, seeds, g->runs, g->runs == 1 ? "" : "s", g->passed, failed);
    if (g->na) fprintf(f, ", %zu not applicable", g->na);
    if (g->skipped) fprintf(f, ", %zu skipped", g->skipped);
    fprintf(f, "; SAFE %lld, UNSAFE %lld, STUCK %lld\n", g->verdicts[0], g->verdicts[1], g->verdicts[2]);
    if (g->first_failure[0]) fprintf(f, "     first failure: %s\n", g->first_failure);
}
