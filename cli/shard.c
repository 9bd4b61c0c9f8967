/* The shard file format (cli/shard.h, docs/regression.md "Past one
 * machine"): its writer, used by batch and sweep under --shard K/N, and its
 * reader, used by `locksim merge` (cli/cmd_merge.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "shard.h"

#define SHARD_MAX_ARGS 512

/* The build stamp: a shard's records are only readable by the same layout. */
static void build_stamp(char *buf, size_t n) {
    snprintf(buf, n, "locksim %s summary %zu", LOCKSIM_VERSION, sizeof(struct report_summary));
}

/* Options whose value merge gives itself (or that do not change the list). */
static int dropped_opt(const char *a) {
    return strcmp(a, "--shard") == 0 || strcmp(a, "--jobs") == 0 || strcmp(a, "--format") == 0 ||
           strcmp(a, "--out") == 0 || strcmp(a, "--svg") == 0 || strcmp(a, "--png") == 0;
}

void shard_write_header(FILE *out, const char *cmd, int argc, char **argv, const struct fanout *f) {
    size_t lo, hi;
    char stamp[100];
    fanout_range(f, &lo, &hi);
    build_stamp(stamp, sizeof stamp);
    fprintf(out, "{\"locksim_shard\":1,\"command\":\"%s\",\"shard\":%d,\"of\":%d,\"runs\":%zu,\"first\":%zu,\"end\":%zu,\"build\":",
            cmd, f->shard_k, f->shard_n, fanout_total(f), lo, hi);
    report_json_str(out, stamp);
    fputs(",\"args\":[", out);
    int n = 0;
    for (int i = 0; i < argc; i++) {
        if (dropped_opt(argv[i]) && i + 1 < argc) {
            i++;
            continue;
        }
        if (n++) fputc(',', out);
        report_json_str(out, argv[i]);
    }
    fputs("]}\n", out);
}

void shard_write_record(FILE *out, size_t i, const struct report_summary *s, const char *const *sets, int nsets) {
    char *obj = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&obj, &len);
    if (m) {
        report_json_summary(m, s, sets, nsets);
        fclose(m);
    }
    /* {"run":I, then the summary's fields without its braces. */
    fprintf(out, "{\"run\":%zu", i);
    if (obj && len > 3) fprintf(out, ",%.*s", (int)(len - 3), obj + 1);
    free(obj);
    struct report_summary w = *s;
    w.file = NULL;
    w.failures = NULL;
    w.seconds = 0;
    fputs(",\"wire\":\"", out);
    const unsigned char *p = (const unsigned char *)&w;
    for (size_t k = 0; k < sizeof w; k++) fprintf(out, "%02x", p[k]);
    for (const char *q = s->failures ? s->failures : ""; *q; q++) fprintf(out, "%02x", (unsigned char)*q);
    fputs("\"}\n", out);
}

/* ---- Reading shards -------------------------------------------------------------- */


void shard_free(struct shard *s) {
    for (int i = 0; i < s->nargs; i++) free(s->args[i]);
    free(s->args);
    memset(s, 0, sizeof *s);
}

/* A JSON string at *p (after its opening quote) into buf; *p moves past the
 * closing quote. Returns 0 or -1. Escapes as report_json_str writes them. */
static int json_string(const char **p, char *buf, size_t n) {
    const char *q = *p;
    size_t l = 0;
    while (*q && *q != '"') {
        int c = (unsigned char)*q++;
        if (c == '\\') {
            c = (unsigned char)*q++;
            switch (c) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'u': {
                unsigned v = 0;
                for (int k = 0; k < 4; k++) {
                    int h = *q++;
                    v = v * 16 + (unsigned)(h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : 0);
                    if (!h) return -1;
                }
                if (v > 0xff) return -1;
                c = (int)v;
                break;
            }
            case '"': case '\\': case '/': break;
            default: return -1;
            }
        }
        if (l + 1 >= n) return -1;
        buf[l++] = (char)c;
    }
    if (*q != '"') return -1;
    buf[l] = '\0';
    *p = q + 1;
    return 0;
}

static int field_num(const char *line, const char *key, size_t *out) {
    char pat[40];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(line, pat);
    if (!p) return -1;
    char *end;
    unsigned long long v = strtoull(p + strlen(pat), &end, 10);
    if (end == p + strlen(pat)) return -1;
    *out = (size_t)v;
    return 0;
}

static int field_str(const char *line, const char *key, char *buf, size_t n) {
    char pat[40];
    snprintf(pat, sizeof pat, "\"%s\":\"", key);
    const char *p = strstr(line, pat);
    if (!p) return -1;
    p += strlen(pat);
    return json_string(&p, buf, n);
}

static int parse_header(const char *line, struct shard *s) {
    size_t k, n;
    if (strncmp(line, "{\"locksim_shard\":1,", 19) != 0 || field_str(line, "command", s->cmd, sizeof s->cmd) ||
        field_num(line, "shard", &k) || field_num(line, "of", &n) || field_num(line, "runs", &s->runs) ||
        field_num(line, "first", &s->first) || field_num(line, "end", &s->end) ||
        field_str(line, "build", s->build, sizeof s->build))
        return -1;
    s->k = (long)k;
    s->n = (long)n;
    const char *p = strstr(line, "\"args\":[");
    if (!p) return -1;
    p += 8;
    char buf[4200];
    while (*p == '"') {
        p++;
        if (json_string(&p, buf, sizeof buf) != 0 || s->nargs == SHARD_MAX_ARGS) return -1;
        char **v = realloc(s->args, (size_t)(s->nargs + 1) * sizeof *v);
        if (!v) return -1;
        s->args = v;
        if (!(s->args[s->nargs] = strdup(buf))) return -1;
        s->nargs++;
        if (*p == ',') p++;
    }
    return *p == ']' ? 0 : -1;
}

static int hexval(int c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* A record line into *sum (its failure text owned). Returns 0 or -1. */
static int parse_record(const char *line, size_t *run, struct report_summary *sum) {
    if (strncmp(line, "{\"run\":", 7) != 0 || field_num(line, "run", run) != 0) return -1;
    const char *w = NULL;
    for (const char *p = line; (p = strstr(p, ",\"wire\":\"")); p++) w = p;
    if (!w) return -1;
    w += 9;
    size_t hex = strcspn(w, "\"");
    if (w[hex] != '"' || hex % 2 || hex / 2 < sizeof *sum) return -1;
    size_t flen = hex / 2 - sizeof *sum;
    unsigned char *bytes = malloc(hex / 2 + 1);
    if (!bytes) return -1;
    for (size_t k = 0; k < hex / 2; k++) {
        int h = hexval(w[2 * k]), l = hexval(w[2 * k + 1]);
        if (h < 0 || l < 0) {
            free(bytes);
            return -1;
        }
        bytes[k] = (unsigned char)(h * 16 + l);
    }
    memcpy(sum, bytes, sizeof *sum);
    char *fail = malloc(flen + 1);
    if (!fail) {
        free(bytes);
        return -1;
    }
    memcpy(fail, bytes + sizeof *sum, flen);
    fail[flen] = '\0';
    free(bytes);
    sum->file = NULL;
    sum->failures = fail;
    return 0;
}

/* Read one shard file: its header into *s, its records into sums (indexed by
 * run, sums[i] must be empty). Returns 0 or the exit status after a message. */
int shard_read(const char *path, struct shard *s, struct report_summary **sums, size_t *nsums,
               const struct shard *first) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "locksim: merge: cannot read '%s'\n", path);
        return cli_exit(LSIM_ENOINPUT);
    }
    char *line = NULL;
    size_t cap = 0, lineno = 0, expect = 0;
    int st = 0;
    s->path = path;
    if (getline(&line, &cap, f) < 0 || parse_header(line, s) != 0) {
        fprintf(stderr, "%s:1:1: not a shard file: its first line is not a locksim shard header "
                "(make shards with `locksim batch ... --shard K/N --out FILE`)\n", path);
        st = cli_exit(LSIM_EPARSE);
        goto out;
    }
    lineno = 1;
    if (s->n < 1 || s->k < 1 || s->k > s->n || s->first > s->end || s->end > s->runs) {
        fprintf(stderr, "%s:1:1: the shard header is inconsistent (shard %ld of %ld, runs %zu..%zu of %zu)\n", path,
                s->k, s->n, s->first, s->end, s->runs);
        st = cli_exit(LSIM_EPARSE);
        goto out;
    }
    char stamp[100];
    build_stamp(stamp, sizeof stamp);
    if (strcmp(s->build, stamp) != 0) {
        fprintf(stderr, "%s:1:1: this shard was written by '%s', this is '%s': merge with the binary that made the shards\n",
                path, s->build, stamp);
        st = cli_exit(LSIM_EPARSE);
        goto out;
    }
    if (first) {
        int same = strcmp(s->cmd, first->cmd) == 0 && s->n == first->n && s->runs == first->runs &&
                   s->nargs == first->nargs;
        for (int i = 0; same && i < s->nargs; i++) same = strcmp(s->args[i], first->args[i]) == 0;
        if (!same) {
            fprintf(stderr, "locksim: merge: '%s' and '%s' are shards of different runs (command, arguments or N differ)\n",
                    first->path, path);
            st = cli_exit(LSIM_EUSAGE);
            goto out;
        }
    } else {
        *sums = calloc(s->runs ? s->runs : 1, sizeof **sums);
        *nsums = s->runs;
        if (!*sums) {
            st = cli_fail(LSIM_ENOMEM, "");
            goto out;
        }
    }
    expect = s->first;
    ssize_t got;
    while ((got = getline(&line, &cap, f)) > 0) {
        lineno++;
        size_t run;
        struct report_summary sum;
        if (parse_record(line, &run, &sum) != 0) {
            fprintf(stderr, "%s:%zu:1: not a shard record (a line of `--shard` output was changed or cut)\n", path, lineno);
            st = cli_exit(LSIM_EPARSE);
            goto out;
        }
        if (run != expect || run >= s->end) {
            report_summary_close(&sum);
            fprintf(stderr, "%s:%zu:1: run %zu where shard %ld/%ld holds runs %zu..%zu in order (run %zu expected)\n", path,
                    lineno, run, s->k, s->n, s->first, s->end ? s->end - 1 : 0, expect);
            st = cli_exit(LSIM_EPARSE);
            goto out;
        }
        report_summary_close(&(*sums)[run]); /* a repeated shard: merge refuses it after reading */
        (*sums)[run] = sum;
        expect++;
    }
    if (expect != s->end) {
        fprintf(stderr, "%s: shard %ld/%ld is incomplete: %zu of its %zu runs (was it interrupted?)\n", path, s->k, s->n,
                expect - s->first, s->end - s->first);
        st = cli_exit(LSIM_EPARSE);
    }
out:
    free(line);
    fclose(f);
    return st;
}
