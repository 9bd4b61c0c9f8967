/* The lexer of the scenario language: the bytes of a line checked (UTF-8,
 * no control characters), the line split into tokens, and the helpers every
 * part of the grammar uses to read tokens and report errors at line:col. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse_int.h"

/* Room for one more element in a parser array (nothing is preallocated, so
 * a parse touches memory in proportion to the text). 0, or -1 on OOM. */
int scnp_room_for(void **arr, int *cap, int n, size_t size, int first) {
    void *a;
    int ncap;

    if (n < *cap) return 0;
    ncap = *cap ? *cap * 2 : first;
    a = realloc(*arr, (size_t)ncap * size);
    if (a == NULL) return -1;
    *arr = a;
    *cap = ncap;
    return 0;
}

PRINTF_LIKE(3, 4)
int scnp_fail(struct parser *p, int col, const char *fmt, ...) {
    const struct tok *from = NULL;
    va_list ap;
    int i;

    /* A column inside a $NAME's value is reported at the '$' (the value's
     * text is longer or shorter than the name: a column past the '$' is
     * one of the value's, unless it is another token's own edge). */
    for (i = 0; p->tok_line == p->line && i < p->ntoks && from == NULL; i++)
        if (p->toks[i].pcol && col >= p->toks[i].pcol && col <= p->toks[i].col + (int)p->toks[i].len)
            from = &p->toks[i];
    for (i = 0; from && col != from->pcol && i < p->ntoks; i++)
        if (&p->toks[i] != from && (col == p->toks[i].col || col == p->toks[i].end)) from = NULL;
    p->err->pos.line = p->line;
    p->err->pos.col = from ? from->pcol : col;
    va_start(ap, fmt);
    vsnprintf(p->err->msg, sizeof p->err->msg, fmt, ap);
    va_end(ap);
    if (from) {
        size_t n = strlen(p->err->msg);
        snprintf(p->err->msg + n, sizeof p->err->msg - n, " (the value of $%s)", p->s->params[from->param].name);
    }
    return -1;
}

int scnp_fail_why(struct parser *p, int col, const char *why) { return scnp_fail(p, col, "%s", why); }

int scnp_fail_nomem(struct parser *p, int col) {
    p->nomem = 1;
    return scnp_fail(p, col, "out of memory");
}

/* A token as it reads in a message: 'word', ':' or "string". */
const char *scnp_show(struct parser *p, const struct tok *t) {
    if (t->kind == T_STRING) snprintf(p->show, sizeof p->show, "\"%.40s\"", t->s);
    else snprintf(p->show, sizeof p->show, "'%.40s'", t->s);
    return p->show;
}

/* The column just after token i-1: where something missing was expected. */
int scnp_col_after(const struct parser *p, int i) { return i > 0 ? p->toks[i - 1].end : 1; }

/* Fail unless token i is past the end of the line. */
int scnp_need_end(struct parser *p, int i, const char *after) {
    if (i < p->ntoks)
        return scnp_fail(p, p->toks[i].col, "unexpected %s after %s; expected the end of the line",
                         scnp_show(p, &p->toks[i]), after);
    return 0;
}

/* Split a key=value word in place. Returns 1 with key and val set, 0 when
 * the word has no '=', -1 (error set) when the key or the value is empty. */
int scnp_kv_split(struct parser *p, struct tok *t, char **key, char **val, int *vcol) {
    char *eq;

    *key = *val = NULL;
    *vcol = t->col;
    if (t->kind != T_WORD || (eq = strchr(t->s, '=')) == NULL) return 0;
    if (eq == t->s) return scnp_fail(p, t->col, "expected a key before '=' in '%.40s'", t->s);
    *eq = '\0';
    *key = t->s;
    *val = eq + 1;
    *vcol = t->col + (int)(eq - t->s) + 1;
    if (**val == '\0') return scnp_fail(p, *vcol, "missing value after '%.40s='", t->s);
    return 1;
}

int scnp_key_find(struct parser *p, struct keyset *ks, const struct tok *t, const char *key) {
    int k;

    for (k = 0; k < 6 && ks->names[k]; k++) {
        if (strcmp(ks->names[k], key) != 0) continue;
        if (ks->col[k]) return scnp_fail(p, t->col, "'%s' is given twice (first at col %d)", key, ks->col[k]);
        ks->col[k] = t->col;
        return k;
    }
    return scnp_fail(p, t->col, "unknown key '%.40s' for %s; expected %s", key, ks->what, ks->expected);
}

/* The single word after the keyword; NULL (error set) when missing or followed by more. */
struct tok *scnp_one_value(struct parser *p, const char *example) {
    struct tok *t;

    if (p->ntoks < 2)
        return scnp_fail(p, scnp_col_after(p, 1),
                         "expected a value after '%s', as in "
                         "%s",
                         p->toks[0].s, example),
               NULL;
    t = &p->toks[1];
    if (t->kind != T_WORD)
        return scnp_fail(p, t->col, "expected a value after '%s', found %s", p->toks[0].s, scnp_show(p, t)), NULL;
    if (scnp_need_end(p, 2, "the value") < 0) return NULL;
    return t;
}

/* Check the bytes of a line: UTF-8, no control characters but tab. */
static int check_bytes(struct parser *p, const unsigned char *b, size_t n) {
    size_t i = 0;

    while (i < n) {
        unsigned c = b[i];
        size_t len, k;
        uint32_t cp;
        if (c < 0x80) {
            if ((c < 0x20 && c != '\t') || c == 0x7f)
                return scnp_fail(p, (int)i + 1, "unexpected byte 0x%02x; expected text", c);
            i++;
            continue;
        }
        if (c >= 0xc2 && c <= 0xdf) len = 2, cp = c & 0x1f;
        else if (c >= 0xe0 && c <= 0xef) len = 3, cp = c & 0x0f;
        else if (c >= 0xf0 && c <= 0xf4) len = 4, cp = c & 0x07;
        else return scnp_fail(p, (int)i + 1, "unexpected byte 0x%02x; expected UTF-8 text", c);
        for (k = 1; k < len; k++) {
            if (i + k >= n || (b[i + k] & 0xc0) != 0x80)
                return scnp_fail(p, (int)i + 1, "unexpected byte 0x%02x; expected UTF-8 text", c);
            cp = (cp << 6) | (b[i + k] & 0x3f);
        }
        if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))
            return scnp_fail(p, (int)i + 1, "unexpected byte 0x%02x; expected UTF-8 text", c);
        i += len;
    }
    return 0;
}

/* The quoted string starting at raw[*ip] (the quote), decoded into *ap;
 * *ip moves past the closing quote. */
static int lex_string(struct parser *p, const struct tok *t, size_t *ip, char **ap) {
    const char *raw = p->raw;
    size_t n = p->rawlen, j = *ip + 1;
    char *a = *ap;

    for (;;) {
        if (j >= n)
            return scnp_fail(p, t->col,
                             "unterminated string; expected a closing '\"' on the "
                             "same line");
        if (raw[j] == '"') break;
        if (raw[j] == '\\' && j + 1 < n && (raw[j + 1] == '"' || raw[j + 1] == '\\')) {
            *a++ = raw[j + 1];
            j += 2;
            continue;
        }
        if (raw[j] == '\\')
            return scnp_fail(p, (int)j + 1,
                             "unknown escape in a string; only \\\" and \\\\ "
                             "are allowed");
        *a++ = raw[j++];
    }
    *ip = j + 1;
    *ap = a;
    return 0;
}

static int tokenize(struct parser *p) {
    const char *raw = p->raw;
    size_t n = p->rawlen, i = 0, need = 2 * n + 8, dollars = 0, k;
    char *a;

    /* Each token's text plus a NUL: at most 2 bytes a byte; then room for
     * the $NAME values expanded at the end (scnp_expand_params): each takes
     * its token's prefix and a value, so all take at most n + 49 a '$'. */
    for (k = 0; k < n; k++) dollars += raw[k] == '$';
    if (dollars > 0) need += n + dollars * (SCN_OPT_MAX + 1);
    p->ntoks = 0;
    p->tok_line = p->line;
    if (p->arena_cap < need) {
        size_t cap = p->arena_cap * 2 > need ? p->arena_cap * 2 : need;
        char *na = realloc(p->arena, cap < 256 ? 256 : cap);
        if (na == NULL) return scnp_fail_nomem(p, 1);
        p->arena = na;
        p->arena_cap = cap < 256 ? 256 : cap;
    }
    a = p->arena;
    if (p->line == 1 && n >= 3 && memcmp(raw, "\xef\xbb\xbf", 3) == 0) i = 3; /* a UTF-8 byte-order mark */
    while (i < n) {
        char c = raw[i];
        struct tok *t;
        if (c == ' ' || c == '\t') {
            i++;
            continue;
        }
        if (c == '#') break;
        {
            void *arr = p->toks;
            if (scnp_room_for(&arr, &p->toks_cap, p->ntoks, sizeof *p->toks, 32) < 0)
                return scnp_fail_nomem(p, (int)i + 1);
            p->toks = arr;
        }
        t = &p->toks[p->ntoks++];
        t->col = (int)i + 1;
        t->s = a;
        t->pcol = t->param = 0;
        if (c == ':' || c == ';' || c == '|') {
            t->kind = c == ':' ? T_COLON : c == ';' ? T_SEMI : T_BAR;
            *a++ = c;
            i++;
        } else if (c == '"') {
            t->kind = T_STRING;
            if (lex_string(p, t, &i, &a) < 0) return -1;
        } else {
            t->kind = T_WORD;
            while (i < n && raw[i] != ' ' && raw[i] != '\t' && raw[i] != '"' && raw[i] != ':' && raw[i] != ';' &&
                   raw[i] != '|')
                *a++ = raw[i++];
        }
        t->len = (size_t)(a - t->s);
        *a++ = '\0';
        t->end = (int)i + 1;
    }
    p->arena_used = (size_t)(a - p->arena);
    return 0;
}

int scnp_lex_line(struct parser *p) {
    if (check_bytes(p, (const unsigned char *)p->raw, p->rawlen) < 0 || tokenize(p) < 0) return -1;
    return 0;
}
