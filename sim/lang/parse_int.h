/* Private to the scenario parser (sim/lang/parse*.c; its printer, scenario_print.c,
 * uses the value formats): the parser state, the tokens of one line, and the
 * helpers each part of the grammar shares. Its functions carry the prefix
 * scnp_ and are called only by sim/lang/parse*.c and sim/lang/scenario_print.c (they
 * are not part of scenario.h's interface). Conventions: a helper that fails
 * returns -1 after filling the parser's error (scnp_fail()); out of memory
 * also sets parser.nomem so that scenario_parse() returns LSIM_ENOMEM rather
 * than LSIM_EPARSE. Value parsers (parse_value.c) return -1 with one
 * sentence in why[WHY_MAX] and know nothing of lines or columns. */
#ifndef LOCKSIM_PARSE_INT_H
#define LOCKSIM_PARSE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "scenario.h"

#define LINE_MAX_BYTES 4096               /* longest line accepted */
#define TEXT_MAX_BYTES ((size_t)16 << 20) /* largest scenario accepted (16 MiB) */
#define WHY_MAX 200                       /* messages from the value parsers */
#define COUNT_MAX 1000000000              /* repeat=, tries=, stock=, #N ... */
#define LINE_KW_MAX 24                    /* rows of the line-keyword table (parse.c) */

/* Link fields left out in a `link` line: "not given". In a header link this
 * means "the network default"; in a timed link, "unchanged". */
#define LAT_UNSET ((sim_ns)-1)
#define LOSS_UNSET UINT32_MAX

#if defined(__GNUC__)
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define PRINTF_LIKE(f, a)
#endif

/* ---- Text helpers and value syntaxes (parse_value.c) ---- */

int scnp_is_digit(int c);
int scnp_is_alpha(int c);
int scnp_all_digits(const char *s);
int scnp_same_word_ci(const char *a, const char *b);
PRINTF_LIKE(3, 4) int scnp_why_set(char *why, size_t n, const char *fmt, ...);
#define WHY(...) scnp_why_set(why, WHY_MAX, __VA_ARGS__)
/* Levenshtein distance of two short words (capped at 99), for suggestions. */
int scnp_word_distance(const char *a, const char *b);
/* Append to list[size] the n words of names[] as "a, b or c" (at most max
 * of them, then ", ..."): those within two edits of word first, closest
 * first, then the others in their order. */
void scnp_list_closest(char *list, size_t size, const char *word, const char *const *names, int n, int max);

/* Each returns 0, or -1 with one sentence in why[WHY_MAX]. */
int scnp_int_parse(const char *t, int64_t lo, int64_t hi, const char *what, int64_t *out, char *why);
int scnp_u64_parse(const char *t, uint64_t lo, const char *what, uint64_t *out, char *why);
/* A sign is accepted only when signed_ok (clock steps and slews). */
int scnp_dur_parse(const char *t, int signed_ok, sim_ns *out, char *why);
int scnp_bool_parse(const char *t, int *out, char *why);
int scnp_loss_parse(const char *t, uint32_t *out, char *why);
/* DUR or DUR..DUR; on failure *errcol is the offset within t at fault. */
int scnp_latency_parse(char *t, struct scn_latency *out, char *why, int *errcol);
int scnp_drift_parse(const char *t, int64_t *out, char *why);
/* wall, monotonic (or mono), both. */
int scnp_clock_which_parse(const char *t, enum scn_clock_which *out, char *why);
int scnp_purpose_parse(const char *t, enum scn_purpose *out, char *why);
/* A letter, then letters, digits or bytes of extra (not NUL). */
int scnp_is_word(const char *s, const char *extra);
/* Option keys and algorithm names: a letter, then letters, digits, - _ . */
int scnp_is_opt_key(const char *s);
/* Store or replace a lock option: 0, -1 with why, or LSIM_ENOMEM. */
int scnp_opt_put(struct scenario *s, const char *key, const char *val, struct scn_pos pos, char *why);

/* ---- Tokens and the parser (parse_lex.c) ---- */

enum tok_kind { T_WORD, T_STRING, T_COLON, T_SEMI, T_BAR };

struct tok {
    enum tok_kind kind;
    char *s;    /* NUL-terminated text in the arena (strings decoded, $NAME expanded) */
    size_t len; /* bytes in s */
    int col;    /* 1-based byte column of the first byte (the quote for strings) */
    int end;    /* column just after the token, in the source */
    int pcol;   /* column of the `$NAME` this token's value came from; 0 = none */
    int param;  /* that param's index in scenario.params (when pcol) */
};

/* A node named by a header line (link, clock), checked once every client is known. */
struct later_node {
    char name[SCN_NAME_MAX];
    struct scn_pos pos;
};

/* A parameter override handed to a parse (from scenario_set): NAME=VALUE. */
struct param_override {
    const char *name;
    const char *val;
};

struct parser {
    struct scenario *s;
    struct scn_error *err;
    int nomem; /* an allocation failed: the parse ends with LSIM_ENOMEM */
    int line;
    const char *raw; /* the current line (not NUL-terminated) */
    size_t rawlen;
    struct tok *toks; /* owned: the current line's tokens, toks_cap of room */
    int ntoks, toks_cap;
    char *arena;                  /* owned: their text, arena_cap bytes */
    size_t arena_cap, arena_used; /* room: 2 * line + 8, and line + 49 a '$' */
    char show[64];                /* one token rendered for a message */
    int once_line[LINE_KW_MAX];   /* line of each once-only line keyword, 0 = not yet */
    sim_ns prev_at_ns;            /* time of the previous @ or + line */
    int prev_at_set;
    int *fault_col; /* owned: column of each fault's time (or `on`), per fault */
    int fault_col_cap;
    int *hash;                /* client names: index + 1, 0 = empty slot */
    size_t hash_cap;          /* power of two */
    struct later_node *later; /* owned: nlater used of later_cap, at most LATER_MAX */
    int nlater, later_cap;
    const struct param_override *over; /* borrowed: overrides for param lines */
    int nover;
    int tok_line;                             /* the line toks belong to */
    unsigned char param_used[SCN_MAX_PARAMS]; /* 1 once a $NAME used the param */
};

/* Node names that header lines may give before the clients are declared. */
#define LATER_MAX (2 * SCN_MAX_LINKS + SCN_MAX_CLOCKS)

/* Room for one more element in a parser array; 0, or -1 on OOM. */
int scnp_room_for(void **arr, int *cap, int n, size_t size, int first);
/* Fill the error at (current line, col); returns -1. A column inside a
 * value that came from $NAME is reported at the '$', and the message says
 * which param gave the value. */
PRINTF_LIKE(3, 4) int scnp_fail(struct parser *p, int col, const char *fmt, ...);
int scnp_fail_why(struct parser *p, int col, const char *why);
/* "out of memory" at col, and the parse will return LSIM_ENOMEM; -1. */
int scnp_fail_nomem(struct parser *p, int col);
/* A token as it reads in a message: 'word', ':' or "string". */
const char *scnp_show(struct parser *p, const struct tok *t);
/* The column just after token i-1: where something missing was expected. */
int scnp_col_after(const struct parser *p, int i);
/* Fail unless token i is past the end of the line. */
int scnp_need_end(struct parser *p, int i, const char *after);
/* Split a key=value word in place: 1 with key and val, 0 for no '=', -1. */
int scnp_kv_split(struct parser *p, struct tok *t, char **key, char **val, int *vcol);
/* The single word after the keyword; NULL (error set) when missing or followed by more. */
struct tok *scnp_one_value(struct parser *p, const char *example);
/* Check the bytes of a line (UTF-8, no control characters but tab) and
 * split it into p->toks, with room for the $NAME values that
 * scnp_expand_params (parse_param.c) puts in next. */
int scnp_lex_line(struct parser *p);

/* The fixed keys of one line, each allowed once. */
struct keyset {
    const char *what;     /* "acquire" */
    const char *expected; /* "retry=, jitter=, tries= or timeout=" */
    const char *names[6];
    int col[6]; /* where each was first given, 0 = not yet */
};
/* The index of key in ks, or -1 (error set) when unknown or repeated. */
int scnp_key_find(struct parser *p, struct keyset *ks, const struct tok *t, const char *key);

/* ---- Node names (parse_names.c) ---- */

int scnp_client_find(const struct parser *p, const char *name);
int scnp_client_index(struct parser *p, int idx);
/* Node and param names: a letter, then letters, digits, - _ */
int scnp_is_name_syntax(const char *s);
int scnp_server_number(const char *s);
int scnp_check_new_client(struct parser *p, const struct tok *t, const char *name);
/* R, S1..S15, a client, or "*" when star_ok; header lines (later) are
 * checked at the end of the file by scnp_check_later(). */
int scnp_check_node(struct parser *p, const struct tok *t, int star_ok, int later);
int scnp_check_later(struct parser *p);

/* ---- Lines, one file per part of the language ---- */

/* parse_header.c: the settable header keys (one table, read by --set too)
 * and the header lines title ... lock, resource, network. */
/* Each setter checks one value and stores it in s only when it is good:
 * 0, or -1 with one sentence in why and *off the byte of val at fault. */
typedef int (*hdr_setter)(struct scenario *s, char *val, char *why, int *off);

enum {
    HK_QUOTED = 1,     /* a file gives the value as a quoted string */
    HK_BARE = 2,       /* --set takes KEY alone, without "LINE." */
    HK_POSITIONAL = 4, /* the line's first word, not KEY=VALUE (the algorithm) */
    HK_ALGO = 8,       /* the algorithm's row (--set algo= also moves its position) */
};

struct hdr_key {
    const char *line; /* the line's keyword in a file */
    const char *key;  /* KEY of KEY=VALUE, or NULL for the line's one value */
    const char *form; /* how it is written, for messages */
    unsigned flags;
    hdr_setter set;
};
#define SCNP_NHDR 17 /* rows of scnp_hdr_keys (a static assert checks it) */
extern const struct hdr_key scnp_hdr_keys[SCNP_NHDR];
int scnp_kw_header(struct parser *p, const char *word); /* 1 = not a header keyword */
/* The row --set KEY names: "line" for a one-value line, "line.key", or a
 * bare key; -1 when none. *lock_opt is set when KEY is lock.NAME for a
 * NAME not in the table (an algorithm option). */
int scnp_set_row(const char *key, int *lock_opt);
/* 1 when --set KEY names a header key (a param may not take its name). */
int scnp_is_set_key(const char *key);
/* parse_set.c: --set KEY=VALUE (scenario_set, scenario.h). The --set error:
 * file "--set", line 1, col; returns code. */
PRINTF_LIKE(4, 5) int scnp_set_fail(struct scn_error *err, int code, int col, const char *fmt, ...);
/* parse_link.c: link lines (header and timed) and header clock lines. */
int scnp_kw_link(struct parser *p);
int scnp_kw_clock(struct parser *p);
/* FROM TO [latency=..] [loss=..] from token i (header: later = 1). */
int scnp_parse_link(struct parser *p, int i, struct scn_link *l, int later);
/* parse_client.c */
int scnp_kw_client(struct parser *p);
int scnp_kw_clients(struct parser *p);
/* parse_fault.c: @TIME / +TIME / on CLIENT.POINT lines, and the checks
 * of faults that could never do anything, once the file is read. */
int scnp_timed_line(struct parser *p);
int scnp_check_faults(struct parser *p);
/* With the faults of s, the first that can never act (a time at or after
 * the duration, a restart of a node not crashed, a resume of a node not
 * paused): its index with one sentence in why, or -1 when none. */
int scnp_fault_never_acts(const struct scenario *s, char *why);
/* parse_expect.c */
int scnp_kw_expect(struct parser *p);
/* parse_explore.c: the explore line (a fault budget for `locksim explore`),
 * and the check, once the file is read, that its windows fall in the run. */
int scnp_kw_explore(struct parser *p);
int scnp_check_explore(struct parser *p);
/* After the whole file: the clients expect lines name exist (sets their index). */
int scnp_expect_clients(struct parser *p);
/* parse_param.c: param lines, $NAME expansion in a line's tokens, and the
 * check that every param was used. */
int scnp_kw_param(struct parser *p);
int scnp_expand_params(struct parser *p);
int scnp_check_params_used(struct parser *p);
/* parse_set.c: --set NAME=VALUE for a declared param: re-parse s->source with every
 * override so far and this one, replay the other --set arguments (s->sets),
 * and replace *s with the result; on error *s is unchanged and the message
 * gives the file:line:col where the value did not fit. */
int scnp_param_set(struct scenario *s, const char *name, const char *val, int vcol, struct scn_error *err);
/* Remember a --set argument that is not a param, for replay (only when s
 * has params). 0 or LSIM_ENOMEM. */
int scnp_param_note_set(struct scenario *s, const char *kv, struct scn_error *err);

/* parse.c: the whole text into s (s is initialised first), with param
 * overrides (borrowed for the call); 0, LSIM_EPARSE or LSIM_ENOMEM. When
 * the text declares params, s keeps a copy of it (s->source) so that
 * scenario_set() can re-parse it with an override. */
int scnp_parse_text(struct scenario *s, const char *fname, const char *text, size_t len,
                    const struct param_override *over, int nover, struct scn_error *err);

#endif
