/* The scenario parser's driver: the text split into lines, each line
 * handed to the part of the grammar its first word names (one table), and
 * the checks that need the whole file. The language is described in
 * docs/scenario-format.md; every error names a line, a column and a fix.
 * The parts: parse_lex.c (bytes, tokens), parse_value.c (value syntaxes),
 * parse_header.c (header lines and --set), parse_link.c (link, clock),
 * parse_client.c, parse_fault.c, parse_expect.c, parse_param.c (param and
 * $NAME), parse_explore.c (the explore line's fault budget), parse_names.c
 * (node names); shared: parse_int.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "parse_int.h"

/* Lines that are not header keys, by their first word. */
static const struct {
    const char *word;
    int (*parse)(struct parser *p);
} line_kws[] = {
        {"link", scnp_kw_link},       {"clock", scnp_kw_clock},   {"client", scnp_kw_client},
        {"clients", scnp_kw_clients}, {"expect", scnp_kw_expect}, {"param", scnp_kw_param},
        {"explore", scnp_kw_explore},
};

static int do_line(struct parser *p) {
    struct tok *t;
    const char *w;
    size_t k;
    int rc;

    if (scnp_lex_line(p) < 0 || scnp_expand_params(p) < 0) /* tokens, then $NAME values */
        return -1;
    if (p->ntoks == 0) return 0;
    t = &p->toks[0];
    if (t->kind != T_WORD)
        return scnp_fail(p, t->col,
                         "unexpected %s at the start of a line; expected a keyword such "
                         "as client, lock or expect",
                         scnp_show(p, t));
    w = t->s;
    if (w[0] == '@' || w[0] == '+' || strcmp(w, "on") == 0) return scnp_timed_line(p);
    if ((rc = scnp_kw_header(p, w)) <= 0) return rc;
    for (k = 0; k < sizeof line_kws / sizeof line_kws[0]; k++)
        if (strcmp(w, line_kws[k].word) == 0) return line_kws[k].parse(p);
    return scnp_fail(p, t->col,
                     "unknown keyword '%.30s'; expected title, description, purpose, "
                     "seed, duration, stuck-after, max-events, retry, lock, resource, network, "
                     "link, clock, client, clients, expect, param, explore, or a time (@5s, +1s, "
                     "on A.point)",
                     w);
}

static void err_begin(struct scn_error *err, const char *file) {
    memset(err, 0, sizeof *err);
    scn_copy_str(err->file, sizeof err->file, file);
}

/* The error for a failure before any line is read. */
static int early_fail(struct scn_error *err, int code, const char *msg) {
    err->pos.line = 1;
    err->pos.col = 1;
    snprintf(err->msg, sizeof err->msg, "%s", msg);
    return code;
}

int scnp_parse_text(struct scenario *s, const char *fname, const char *text, size_t len,
                    const struct param_override *over, int nover, struct scn_error *err) {
    struct parser *p;
    size_t off = 0;
    int rc = 0;

    if (fname == NULL) fname = "<scenario>";
    scenario_init(s);
    scn_copy_str(s->file, sizeof s->file, fname);
    err_begin(err, fname);
    if (text == NULL && len > 0) len = 0;
    if (len > TEXT_MAX_BYTES) return early_fail(err, LSIM_EPARSE, "the scenario is larger than 16 MiB");
    p = calloc(1, sizeof *p);
    if (p == NULL) return early_fail(err, LSIM_ENOMEM, "out of memory");
    p->s = s;
    p->err = err;
    p->over = over;
    p->nover = nover;
    while (off < len && rc == 0) {
        const char *nl = memchr(text + off, '\n', len - off);
        size_t end = nl ? (size_t)(nl - text) : len;
        p->line++;
        p->raw = text + off;
        p->rawlen = end - off;
        if (p->rawlen > 0 && p->raw[p->rawlen - 1] == '\r') p->rawlen--;
        if (p->rawlen > LINE_MAX_BYTES)
            rc = scnp_fail(p, LINE_MAX_BYTES + 1, "line is longer than %d bytes", LINE_MAX_BYTES);
        else rc = do_line(p);
        off = end + 1;
    }
    if (rc == 0) rc = scnp_check_later(p);
    if (rc == 0) rc = scnp_expect_clients(p);
    if (rc == 0) rc = scnp_check_params_used(p);
    if (rc == 0) rc = scnp_check_faults(p);
    if (rc == 0) rc = scnp_check_explore(p);
    if (rc == 0 && s->nparams > 0 && len > 0) {
        if ((s->source = malloc(len)) == NULL) rc = scnp_fail_nomem(p, 1);
        else memcpy(s->source, text, len), s->source_len = len;
    }
    if (rc < 0) rc = p->nomem ? LSIM_ENOMEM : LSIM_EPARSE;
    free(p->hash);
    free(p->toks);
    free(p->arena);
    free(p->later);
    free(p->fault_col);
    free(p);
    return rc;
}

int scenario_parse(struct scenario *s, const char *fname, const char *text, size_t len, struct scn_error *err) {
    return scnp_parse_text(s, fname, text, len, NULL, 0, err);
}
