/* Node names in scenario lines: client names (an open-addressing index of
 * the clients declared so far), the reserved names R and S1..S15, and the
 * header lines' names checked once every client is known. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse_int.h"

static uint32_t name_hash(const char *s) {
    uint32_t h = 2166136261u;

    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

int scnp_client_find(const struct parser *p, const char *name) {
    size_t i;

    if (p->hash_cap == 0) return -1;
    for (i = name_hash(name) & (p->hash_cap - 1); p->hash[i]; i = (i + 1) & (p->hash_cap - 1))
        if (strcmp(p->s->clients[p->hash[i] - 1].name, name) == 0) return p->hash[i] - 1;
    return -1;
}

/* Index client idx (already in s->clients); 0 or -1 on OOM. */
int scnp_client_index(struct parser *p, int idx) {
    size_t i;

    if ((size_t)(idx + 1) * 2 > p->hash_cap) {
        size_t ncap = p->hash_cap ? p->hash_cap * 2 : 64;
        int *h = calloc(ncap, sizeof *h), j;
        if (h == NULL) return -1;
        free(p->hash);
        p->hash = h;
        p->hash_cap = ncap;
        for (j = 0; j < idx; j++) {
            for (i = name_hash(p->s->clients[j].name) & (ncap - 1); h[i]; i = (i + 1) & (ncap - 1))
                ;
            h[i] = j + 1;
        }
    }
    for (i = name_hash(p->s->clients[idx].name) & (p->hash_cap - 1); p->hash[i]; i = (i + 1) & (p->hash_cap - 1))
        ;
    p->hash[i] = idx + 1;
    return 0;
}

int scnp_is_name_syntax(const char *s) { return scnp_is_word(s, "-_"); }

/* R is the resource; S followed by digits is a lock server. */
static int is_reserved(const char *s) { return strcmp(s, "R") == 0 || (s[0] == 'S' && scnp_all_digits(s + 1)); }

/* 1..SCN_MAX_SERVERS for S1..S15 (no leading zero), else 0. */
int scnp_server_number(const char *s) {
    int64_t n;
    char why[WHY_MAX];

    if (s[0] != 'S' || s[1] == '0' || !scnp_all_digits(s + 1) || strlen(s) > 3) return 0;
    if (scnp_int_parse(s + 1, 1, SCN_MAX_SERVERS, "server", &n, why) < 0) return 0;
    return (int)n;
}

/* Check a new client's name: syntax, length, not reserved, not taken. */
int scnp_check_new_client(struct parser *p, const struct tok *t, const char *name) {
    int prev;

    if (t->kind != T_WORD) return scnp_fail(p, t->col, "expected a client name, found %s", scnp_show(p, t));
    if (!scnp_is_name_syntax(name))
        return scnp_fail(p, t->col,
                         "'%.40s' is not a client name; names start with a letter, then "
                         "letters, digits, '-' or '_'",
                         name);
    if (strlen(name) >= SCN_NAME_MAX)
        return scnp_fail(p, t->col, "client name '%.40s' is longer than %d characters", name, SCN_NAME_MAX - 1);
    if (is_reserved(name))
        return scnp_fail(p, t->col,
                         "'%s' is a reserved name (R is the resource, S1..S15 are the "
                         "lock servers); choose another client name",
                         name);
    prev = scnp_client_find(p, name);
    if (prev >= 0)
        return scnp_fail(p, t->col, "client '%s' is declared twice (first on line %d)", name,
                         p->s->clients[prev].pos.line);
    return 0;
}

/* Check a node named by a line: R, S1..S15, a client, or "*" when star_ok.
 * Timed lines need the client declared above; header lines (later != 0)
 * are checked at the end of the file. */
int scnp_check_node(struct parser *p, const struct tok *t, int star_ok, int later) {
    const char *s = t->s;

    if (t->kind != T_WORD) return scnp_fail(p, t->col, "expected a node name, found %s", scnp_show(p, t));
    if (star_ok && strcmp(s, "*") == 0) return 0;
    if (strcmp(s, "R") == 0) return 0;
    if (s[0] == 'S' && scnp_all_digits(s + 1)) {
        if (scnp_server_number(s) == 0)
            return scnp_fail(p, t->col, "no lock server '%.40s'; lock servers are S1 to S%d", s, SCN_MAX_SERVERS);
        return 0;
    }
    if (!scnp_is_name_syntax(s) || strlen(s) >= SCN_NAME_MAX)
        return scnp_fail(p, t->col,
                         "'%.40s' is not a node name; expected a client, R, or a lock "
                         "server S1..S%d%s",
                         s, SCN_MAX_SERVERS, star_ok ? " (or * for all)" : "");
    if (later) {
        struct later_node *l;
        void *arr = p->later;
        if (p->nlater == LATER_MAX) return scnp_fail(p, t->col, "too many node names in header lines");
        if (scnp_room_for(&arr, &p->later_cap, p->nlater, sizeof *p->later, 8) < 0) return scnp_fail_nomem(p, t->col);
        p->later = arr;
        l = &p->later[p->nlater++];
        scn_copy_str(l->name, sizeof l->name, s);
        l->pos.line = p->line;
        l->pos.col = t->col;
        return 0;
    }
    if (scnp_client_find(p, s) < 0)
        return scnp_fail(p, t->col,
                         "unknown node '%.40s'; expected a client declared above, R, or "
                         "a lock server S1..S%d",
                         s, SCN_MAX_SERVERS);
    return 0;
}

/* Header lines may name clients declared further down; check them now. */
int scnp_check_later(struct parser *p) {
    int i;

    for (i = 0; i < p->nlater; i++) {
        if (scnp_client_find(p, p->later[i].name) < 0) {
            p->line = p->later[i].pos.line;
            return scnp_fail(p, p->later[i].pos.col,
                             "unknown node '%s'; expected a client, R, or "
                             "a lock server S1..S%d",
                             p->later[i].name, SCN_MAX_SERVERS);
        }
    }
    return 0;
}
