/* `locksim merge`: shards of one batch or sweep (cli/shard.h), checked
 * complete and disjoint, put back in run-list order and handed to the same
 * command as preloaded results, so every output is the one the unsharded run
 * prints, byte for byte. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "shard.h"

int cmd_merge(int argc, char **argv) {
    const char *format = NULL, *out = NULL, *svg = NULL, *png = NULL;
    const char *paths[1024];
    int npaths = 0, st = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (strcmp(a, "--help") == 0) {
            fputs(cli_usage_merge, stdout);
            return 0;
        } else if (strcmp(a, "--format") == 0 && has) format = argv[++i];
        else if (strcmp(a, "--out") == 0 && has) out = argv[++i];
        else if (strcmp(a, "--svg") == 0 && has) svg = argv[++i];
        else if (strcmp(a, "--png") == 0 && has) png = argv[++i];
        else if (a[0] == '-') return cli_usage("unknown or incomplete option '%s' for merge", a);
        else if (npaths == (int)(sizeof paths / sizeof *paths)) return cli_usage("merge takes at most %d shard files", npaths);
        else paths[npaths++] = a;
    }
    if (npaths == 0) return cli_usage("merge needs the shard files (FILE.jsonl...) of one `--shard K/N` run");
    struct shard *sh = calloc((size_t)npaths, sizeof *sh);
    struct report_summary *sums = NULL;
    size_t nsums = 0;
    char **args = NULL;
    if (!sh) return cli_fail(LSIM_ENOMEM, "");
    for (int i = 0; i < npaths && !st; i++) st = shard_read(paths[i], &sh[i], &sums, &nsums, i ? &sh[0] : NULL);
    if (st) goto out;
    /* Every K of 1..N exactly once. */
    long n = sh[0].n;
    int *seen = calloc((size_t)n + 1, sizeof *seen);
    if (!seen) {
        st = cli_fail(LSIM_ENOMEM, "");
        goto out;
    }
    for (int i = 0; i < npaths && !st; i++) {
        if (seen[sh[i].k]) {
            fprintf(stderr, "locksim: merge: shard %ld/%ld is given twice: '%s' and '%s'\n", sh[i].k, n,
                    paths[seen[sh[i].k] - 1], paths[i]);
            st = cli_exit(LSIM_EUSAGE);
        }
        seen[sh[i].k] = i + 1;
    }
    for (long k = 1; k <= n && !st; k++)
        if (!seen[k]) {
            fprintf(stderr, "locksim: merge: shard %ld/%ld is missing (got", k, n);
            for (long j = 1; j <= n; j++)
                if (seen[j]) fprintf(stderr, " %ld/%ld", j, n);
            fputs("): every shard 1..N is needed\n", stderr);
            st = cli_exit(LSIM_EUSAGE);
        }
    free(seen);
    if (st) goto out;
    if ((svg || png) && strcmp(sh[0].cmd, "sweep") != 0) {
        st = cli_usage("%s draws a sweep's heatmap; these are shards of a %s", svg ? "--svg" : "--png", sh[0].cmd);
        goto out;
    }
    /* The same command, with merge's own outputs, over the preloaded runs. */
    args = calloc((size_t)sh[0].nargs + 8, sizeof *args);
    if (!args) {
        st = cli_fail(LSIM_ENOMEM, "");
        goto out;
    }
    int na = 0;
    for (int i = 0; i < sh[0].nargs; i++) args[na++] = sh[0].args[i];
    if (format) args[na++] = "--format", args[na++] = (char *)format;
    if (out) args[na++] = "--out", args[na++] = (char *)out;
    if (svg) args[na++] = "--svg", args[na++] = (char *)svg;
    if (png) args[na++] = "--png", args[na++] = (char *)png;
    fanout_preload(sums, nsums);
    st = strcmp(sh[0].cmd, "sweep") == 0 ? cmd_sweep(na, args) : cmd_batch(na, args);
    fanout_preload(NULL, 0);
out:
    for (size_t i = 0; sums && i < nsums; i++) report_summary_close(&sums[i]);
    free(sums);
    free(args);
    for (int i = 0; i < npaths; i++) shard_free(&sh[i]);
    free(sh);
    return st;
}
