/* `locksim merge`: shards of one batch or sweep (cli/shard.h), checked
 * complete and disjoint, put back in run-list order and written by the
 * command's own output code (batch_output, sweep_output) as preloaded
 * results, so every output is the one the unsharded run prints, byte for
 * byte. The run list comes from the shards' headers as data: merge opens no
 * scenario, loads no algorithm and takes no option from a shard. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "shard.h"

/* Every K of 1..N exactly once, each holding the slice --shard K/N gives. */
static int check_slices(struct shard *sh, int n, const char *const *paths) {
    long total = sh[0].n;
    int *seen = calloc((size_t)total + 1, sizeof *seen);
    if (!seen) return cli_fail(LSIM_ENOMEM, "");
    int st = 0;
    for (int i = 0; i < n && !st; i++) {
        const struct shard *s = &sh[i];
        size_t lo = s->runs * (size_t)(s->k - 1) / (size_t)total, hi = s->runs * (size_t)s->k / (size_t)total;
        if (seen[s->k]) {
            fprintf(stderr, "locksim: merge: shard %ld/%ld is given twice: '%s' and '%s'\n", s->k, total,
                    paths[seen[s->k] - 1], paths[i]);
            st = cli_exit(LSIM_EUSAGE);
        } else if (s->first != lo || s->end != hi) {
            fprintf(stderr,
                    "%s:1:1: shard %ld/%ld of %zu runs holds runs %zu..%zu, not %zu..%zu: not a slice "
                    "`--shard K/N` writes\n",
                    paths[i], s->k, total, s->runs, s->first, s->end, lo, hi);
            st = cli_exit(LSIM_EPARSE);
        }
        seen[s->k] = i + 1;
    }
    for (long k = 1; k <= total && !st; k++)
        if (!seen[k]) {
            fprintf(stderr, "locksim: merge: shard %ld/%ld is missing (got", k, total);
            for (long j = 1; j <= total; j++)
                if (seen[j]) fprintf(stderr, " %ld/%ld", j, total);
            fputs("): every shard 1..N is needed\n", stderr);
            st = cli_exit(LSIM_EUSAGE);
        }
    free(seen);
    return st;
}

const struct option *const cli_tables_merge[] = {fanout_output_options, fanout_heatmap_options, NULL};

/* Read the command line: the shard paths into paths (argc + 1 entries),
 * the outputs into d. 0, -1 after --help, or the exit status. */
static int parse_merge_args(const char **paths, int *npaths, struct fanout_dest *d, int argc, char **argv) {
    struct cli_getopt g;
    int st = cli_getopt_init_tables(&g, "merge", cli_usage_merge, NULL, cli_tables_merge, argc, argv);
    for (int c; st == 0 && (c = cli_getopt_next(&g)) != CLI_OPT_END;) {
        if (c == CLI_OPT_STOP) st = g.status;
        else if (c == CLI_OPT_ARG) paths[(*npaths)++] = g.arg;
        else fanout_take_opt(NULL, d, c, g.arg, &st); /* the table holds only these */
    }
    cli_getopt_close(&g);
    if (st) return st;
    if (*npaths == 0) return cli_usage("merge needs the shard files (FILE.jsonl...) of one `--shard K/N` run");
    return 0;
}

/* Read every shard into sh[0..npaths), each of the same run as the first,
 * and check that the slices tile the list. 0 or the exit status. */
static int read_shards(struct shard *sh, const char **paths, int npaths) {
    int st = 0;
    for (int i = 0; i < npaths && !st; i++) {
        st = shard_read(paths[i], &sh[i]);
        const char *what = st || i == 0 ? NULL : shard_differs(&sh[0], &sh[i]);
        if (what) {
            fprintf(stderr, "locksim: merge: '%s' and '%s' are shards of different runs (their %s differ)\n", paths[0],
                    paths[i], what);
            st = cli_exit(LSIM_EUSAGE);
        }
    }
    return st ? st : check_slices(sh, npaths, paths);
}

/* The merged list: every shard's summaries moved into sums (the slices
 * tile the list and each was read whole, so it has no more runs than the
 * files hold records), written by its command's output code. */
static int write_merged(struct shard *sh, int npaths, const char **paths, struct fanout_dest *d) {
    size_t runs = sh[0].runs;
    struct report_summary *sums = calloc(runs ? runs : 1, sizeof *sums);
    char **cells = NULL;
    struct fanout f;
    int st;
    if (!sums || shard_list(&sh[0], &f, &cells) != 0) st = cli_fail(LSIM_ENOMEM, "");
    else {
        for (int i = 0; i < npaths; i++) {
            memcpy(sums + sh[i].first, sh[i].sums, sh[i].nsums * sizeof *sums);
            free(sh[i].sums); /* moved: the shard's array is not held beside the merged one */
            sh[i].sums = NULL;
            sh[i].nsums = 0;
        }
        f.preloaded = sums;
        d->inputs = paths;
        d->ninputs = npaths;
        st = strcmp(sh[0].cmd, "sweep") == 0 ? sweep_output(&f, sh[0].files[0], sh[0].axes, sh[0].naxes, d)
                                             : batch_output(&f, d);
    }
    /* the summaries are ours: delivered or not (an output that failed to
     * open delivered nothing), closed here; closing twice is harmless */
    for (size_t i = 0; sums && i < runs; i++) report_summary_close(&sums[i]);
    free(sums);
    for (size_t c = 0; cells && c < (size_t)f.ncells * (size_t)f.cell_nsets; c++) free(cells[c]);
    free(cells);
    return st;
}

int cmd_merge(int argc, char **argv) {
    struct fanout_dest d = {.out = "-"};
    const char **paths = calloc((size_t)argc + 1, sizeof *paths);
    struct shard *sh = calloc((size_t)argc + 1, sizeof *sh);
    int npaths = 0, st = !paths || !sh ? cli_fail(LSIM_ENOMEM, "") : parse_merge_args(paths, &npaths, &d, argc, argv);
    if (st == 0) st = read_shards(sh, paths, npaths);
    if (st == 0 && (d.svg || d.png) && strcmp(sh[0].cmd, "sweep") != 0)
        st = cli_usage("%s draws a sweep's heatmap; these are shards of a %s", d.svg ? "--svg" : "--png", sh[0].cmd);
    if (st == 0) st = write_merged(sh, npaths, paths, &d);
    for (int i = 0; sh && i < npaths; i++) shard_free(&sh[i]);
    free(sh);
    free(paths);
    return st < 0 ? 0 : st;
}
