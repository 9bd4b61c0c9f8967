/* `locksim matrix`'s writers (report.h): one row per algorithm, as a text
 * table with its replay line, or as one JSON object; its CSV is report.c's
 * run rows. */
#include "report.h"

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
               m->truncated ? "TRUNCATED" : scn_verdict_name(m->rep.verdict), (long long)m->rep.double_entries,
               t, sw, (long long)m->rep.lost_updates, (long long)m->rep.wrong_releases, (long long)m->rep.stuck,
               (long long)m->rep.fenced_out, (long long)m->rep.duplicated_work, (long long)m->rep.starved, un,
               note);
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
