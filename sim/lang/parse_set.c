/* `--set KEY=VALUE` (scenario_set): one override applied to a parsed
 * scenario, checked by the header table's own setters (parse_header.c), a
 * lock option put aside for the algorithm, or a param, for which the text is
 * parsed again with the new value (parse.c) and the other overrides applied
 * again in their order. It sits above the parser: nothing in it is called
 * while a file is read. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "parse_int.h"

int scnp_set_fail(struct scn_error *err, int code, int col, const char *fmt, ...) {
    va_list ap;

    err->pos.line = 1;
    err->pos.col = col;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return code;
}


/* "unknown key 'K'; expected ..." listing the keys --set takes (those of
 * one line when K names it), likely typos first. */
static int unknown_key(const struct scenario *s, const char *key, struct scn_error *err) {
    const char *names[SCNP_NHDR + SCN_MAX_PARAMS];
    char full[SCNP_NHDR][SCN_OPT_MAX + 16], list[200] = "";
    const char *dot = strchr(key, '.');
    int n = 0, r, k, lines = 0;

    for (r = 0; r < SCNP_NHDR; r++) {
        const struct hdr_key *h = &scnp_hdr_keys[r];
        if (dot && h->key && strncmp(key, h->line, (size_t)(dot - key)) == 0 &&
            strlen(h->line) == (size_t)(dot - key)) {
            snprintf(full[lines], sizeof full[lines], "%s.%s", h->line, h->key);
            names[n++] = full[lines++];
        }
    }
    if (n > 0) {
        scnp_list_closest(list, sizeof list, key, names, n, n);
        return scnp_set_fail(err, LSIM_EUNKNOWN_OPTION, 1, "unknown key '%.40s'; expected %s", key, list);
    }
    for (r = 0; r < SCNP_NHDR; r++)
        if (scnp_hdr_keys[r].key == NULL || (scnp_hdr_keys[r].flags & HK_BARE))
            names[n++] = scnp_hdr_keys[r].key ? scnp_hdr_keys[r].key : scnp_hdr_keys[r].line;
    for (k = 0; k < s->nparams; k++) names[n++] = s->params[k].name;
    scnp_list_closest(list, sizeof list, dot ? dot + 1 : key, names, n, 8);
    return scnp_set_fail(err, LSIM_EUNKNOWN_OPTION, 1,
                         "unknown key '%.40s'; expected %s, or "
                         "an option of the lock (lock.KEY=VALUE)",
                         key, list);
}

/* A bare key one edit from a param's name (two for names of five
 * characters or more) is taken for a typo of it rather than for a new lock
 * option; lock.KEY=... still reaches the option. */
static int near_param(const struct scenario *s, const char *key) {
    int k;

    for (k = 0; k < s->nparams; k++) {
        const char *name = s->params[k].name;
        if (scnp_word_distance(key, name) <= (strlen(name) < 5 ? 1 : 2)) return 1;
    }
    return 0;
}


/* Apply one --set after its KEY and VALUE are split; vcol is VALUE's column. */
static int set_one(struct scenario *s, const char *key, char *val, int vcol, struct scn_error *err) {
    char why[WHY_MAX];
    int lock_opt, off = 0, rc, r = scnp_set_row(key, &lock_opt);
    struct scn_pos pos = {0, 0};
    const char *k = lock_opt ? key + 5 : key;

    if (r >= 0) {
        sim_ns old_duration = s->duration_ns;
        int f, old_fencing = s->fencing, old_check = s->check_reads;
        if (scnp_hdr_keys[r].set(s, val, why, &off) < 0)
            return scnp_set_fail(err, LSIM_EBAD_VALUE, vcol + off, "%s", why);
        /* As on the resource line: reads are checked by the fence. */
        if (s->check_reads && !s->fencing) {
            s->fencing = old_fencing;
            s->check_reads = old_check;
            return scnp_set_fail(err, LSIM_EBAD_VALUE, vcol,
                                 "check=reads+writes checks the fencing "
                                 "token of reads; it needs fencing=on (--set resource.fencing=on "
                                 "before it)");
        }
        if ((scnp_hdr_keys[r].flags & HK_ALGO)) s->algo_pos = pos;
        /* A shorter run must still reach every timed fault. */
        if (s->duration_ns != old_duration && (f = scnp_fault_never_acts(s, why)) >= 0) {
            s->duration_ns = old_duration;
            return scnp_set_fail(err, LSIM_EBAD_VALUE, vcol, "%s:%d: %s", s->file, s->faults[f].pos.line, why);
        }
        return 0;
    }
    if (!lock_opt && strchr(key, '.') != NULL) return unknown_key(s, key, err);
    if (!lock_opt && scenario_param(s, key) != NULL) return scnp_param_set(s, key, val, vcol, err);
    if (!lock_opt && near_param(s, key)) return unknown_key(s, key, err);
    if (!scnp_is_opt_key(k)) return unknown_key(s, key, err);
    /* Anything else is a lock option, validated later by the algorithm. */
    rc = scnp_opt_put(s, k, val, pos, why);
    if (rc == LSIM_ENOMEM) return scnp_set_fail(err, LSIM_ENOMEM, 1, "out of memory");
    if (rc < 0) return scnp_set_fail(err, LSIM_EBAD_VALUE, lock_opt ? 6 : 1, "%s", why);
    return 0;
}

int scenario_set(struct scenario *s, const char *kv, struct scn_error *err) {
    char key[SCN_OPT_MAX + 16], val[LINE_MAX_BYTES + 1];
    const char *eq;
    int vcol, rc;
    size_t i;

    memset(err, 0, sizeof *err);
    scn_copy_str(err->file, sizeof err->file, "--set");
    if (kv == NULL) kv = "";
    for (i = 0; kv[i]; i++)
        if ((unsigned char)kv[i] < 0x20 || kv[i] == 0x7f)
            return scnp_set_fail(err, LSIM_EBAD_VALUE, (int)i + 1, "unexpected byte 0x%02x", (unsigned char)kv[i]);
    eq = strchr(kv, '=');
    if (eq == NULL || eq == kv)
        return scnp_set_fail(err, LSIM_EUSAGE, 1,
                             "expected KEY=VALUE, such as ttl=10s, found "
                             "'%.40s'",
                             kv);
    if ((size_t)(eq - kv) >= sizeof key)
        return scnp_set_fail(err, LSIM_EUNKNOWN_OPTION, 1, "key '%.40s...' is too long", kv);
    memcpy(key, kv, (size_t)(eq - kv));
    key[eq - kv] = '\0';
    vcol = (int)(eq - kv) + 2;
    if (strlen(eq + 1) >= sizeof val)
        return scnp_set_fail(err, LSIM_EBAD_VALUE, vcol, "the value is longer than %d bytes", LINE_MAX_BYTES);
    strcpy(val, eq + 1);
    if (val[0] == '\0') return scnp_set_fail(err, LSIM_EBAD_VALUE, vcol, "missing value after '%s='", key);
    rc = set_one(s, key, val, vcol, err);
    if (rc == 0 && scenario_param(s, key) == NULL) rc = scnp_param_note_set(s, kv, err);
    return rc;
}

/* ---- --set NAME=VALUE for a param ---- */

int scnp_param_set(struct scenario *s, const char *name, const char *val, int vcol, struct scn_error *err) {
    struct param_override over[SCN_MAX_PARAMS];
    struct scenario tmp;
    struct scn_error perr;
    int n = 0, k, rc;
    size_t off;

    if (strlen(val) >= SCN_OPT_MAX)
        return scnp_set_fail(err, LSIM_EBAD_VALUE, vcol,
                             "the value of param '%.40s' is longer "
                             "than %d characters",
                             name, SCN_OPT_MAX - 1);
    if (s->source == NULL)
        return scnp_set_fail(err, LSIM_EBAD_VALUE, 1,
                             "param '%.40s' cannot be set: the "
                             "scenario's text was not kept",
                             name);
    for (k = 0; k < s->nparams; k++) {
        const struct scn_param *q = &s->params[k];
        if (strcmp(q->name, name) == 0) over[n++] = (struct param_override){q->name, val};
        else if (q->overridden) over[n++] = (struct param_override){q->name, q->val};
    }
    rc = scnp_parse_text(&tmp, s->file, s->source, s->source_len, over, n, &perr);
    if (rc == LSIM_ENOMEM) {
        scenario_close(&tmp);
        return scnp_set_fail(err, LSIM_ENOMEM, 1, "out of memory");
    }
    if (rc != 0) {
        scenario_close(&tmp);
        return scnp_set_fail(err, LSIM_EBAD_VALUE, vcol, "%s:%d:%d: %s", perr.file, perr.pos.line, perr.pos.col,
                             perr.msg);
    }
    /* The other overrides, in the order they were given. */
    for (off = 0; off < s->sets_len; off += strlen(s->sets + off) + 1) {
        rc = scenario_set(&tmp, s->sets + off, &perr);
        if (rc != 0) {
            scenario_close(&tmp);
            return scnp_set_fail(err, rc, vcol, "with %s=%s, the earlier --set %.40s fails: %s", name, val,
                                 s->sets + off, perr.msg);
        }
    }
    scenario_close(s);
    *s = tmp;
    return 0;
}

int scnp_param_note_set(struct scenario *s, const char *kv, struct scn_error *err) {
    size_t n = strlen(kv) + 1;
    char *grown;

    if (s->nparams == 0) return 0; /* nothing will be re-parsed */
    if ((grown = realloc(s->sets, s->sets_len + n)) == NULL) return scnp_set_fail(err, LSIM_ENOMEM, 1, "out of memory");
    memcpy(grown + s->sets_len, kv, n);
    s->sets = grown;
    s->sets_len += n;
    return 0;
}
