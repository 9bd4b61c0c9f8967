/* Tests of the trace as data: JSON Lines written and read back byte for
 * byte, the reader's strictness and messages, the trace hash, kind names
 * (and that the docs and the fuzz dictionary name every kind) and the
 * trace's owned strings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "checker.h" /* CHECKER_KINDS */
#include "trace.h"
#include "trace_jsonl.h"

#include "fixture_trace.h"

#define S SIM_NS_PER_S

/* ---- Fixtures ------------------------------------------------------------ */

/* The seed story with fencing: A (token 41) pauses past its lease, B gets
 * token 42, A's late write is rejected. */
static void seed_trace(struct trace *tr) {
    seed_nodes(tr);
    snprintf(tr->title, sizeof tr->title, "GC pause outlives the lease");
    snprintf(tr->algo, sizeof tr->algo, "fenced-lease");
    tr->seed = 7;
    ev(tr, 0, TRACE_RUN_START, NO, NO, 0, 0, 7, 40 * S, NULL);
    ev(tr, 0, TRACE_ACQUIRE_START, A, NO, 0, 0, 0, 0, NULL);
    ev(tr, 0, TRACE_SRV_GRANT, S1, A, 41, 1, 30 * S, 30 * S, NULL);
    ev(tr, 0, TRACE_ACQUIRED, A, NO, 41, 1, 30 * S, 0, NULL);
    ev(tr, 0, TRACE_READ, R, A, 0, 0, 10, 0, NULL);
    ev(tr, 5 * S, TRACE_PAUSE, A, NO, 0, 0, 0, 0, NULL);
    ev(tr, 30 * S, TRACE_SRV_EXPIRE, S1, A, 0, 1, 0, 0, NULL);
    ev(tr, 31 * S, TRACE_ACQUIRE_START, B, NO, 0, 0, 0, 0, NULL);
    ev(tr, 31 * S, TRACE_SRV_GRANT, S1, B, 42, 2, 30 * S, 61 * S, NULL);
    ev(tr, 31 * S, TRACE_ACQUIRED, B, NO, 42, 2, 30 * S, 0, NULL);
    ev(tr, 31 * S, TRACE_DOUBLE_ENTRY_BEGIN, B, A, 0, 0, 0, 0, NULL);
    ev(tr, 31 * S, TRACE_READ, R, B, 0, 0, 10, 0, NULL);
    ev(tr, 31 * S, TRACE_WRITE, R, B, 42, 2, 9, TRACE_WRITE_ACCEPTED, NULL);
    ev(tr, 32 * S, TRACE_RESUME, A, NO, 0, 0, 27 * S, 0, NULL);
    ev(tr, 32 * S, TRACE_WRITE, R, A, 41, 1, 9, TRACE_WRITE_REJECTED_STALE, NULL);
    ev(tr, 32 * S, TRACE_STALE_WRITE, A, NO, 41, 1, 0, 0, NULL);
    ev(tr, 32 * S, TRACE_CS_EXIT, A, NO, 0, 0, TRACE_EXIT_RELEASE, 0, NULL);
    ev(tr, 32 * S, TRACE_DOUBLE_ENTRY_END, B, A, 0, 0, 1 * S, 0, NULL);
    ev(tr, 40 * S, TRACE_RUN_END, NO, NO, 0, 0, 18, 0, NULL);
}

/* Every kind once, extreme values, awkward names and text. */
static void odd_trace(struct trace *tr) {
    trace_init(tr, 1);
    assert_int_equal(trace_add_node(tr, "c\"1\\", TRACE_NODE_CLIENT), 0);
    assert_int_equal(trace_add_node(tr, "\xc3\xa9t\xc3\xa9", TRACE_NODE_CLIENT), 1);
    assert_int_equal(trace_add_node(tr, "S 1", TRACE_NODE_SERVER), 2);
    assert_int_equal(trace_add_node(tr, "123456789012345", TRACE_NODE_RESOURCE), 3);
    snprintf(tr->title, sizeof tr->title, "quotes \" back\\slash\ttab\nnewline \x7f del");
    snprintf(tr->algo, sizeof tr->algo, "lease");
    tr->seed = UINT64_MAX;
    static const char *const texts[] = {
            NULL,
            "",
            "plain",
            "ctrl \x01\x1f end",
            "emoji \xf0\x9f\x98\x80 and \xe2\x82\xac",
            "json {\"a\":[1,2]}",
            "slash / and \\",
    };
    for (int k = 0; k < TRACE_KIND_COUNT; k++) {
        int node = k % 5 == 4 ? NO : k % 4;
        int peer = k % 3 == 0 ? NO : (k + 1) % 4;
        ev(tr, (sim_ns)k * 1000 + (k == TRACE_KIND_COUNT - 1 ? SIM_TIME_MAX - 100000 : 0), k, node, peer,
           k == 3 ? UINT64_MAX : (uint64_t)k, k == 4 ? UINT32_MAX : (uint32_t)k, k == 5 ? INT64_MIN : -(int64_t)k,
           k == 6 ? INT64_MAX : (int64_t)k * 1000000007, texts[k % 7]);
    }
}

static char *write_str(const struct trace *tr, size_t *len) {
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    assert_non_null(f);
    assert_int_equal(trace_write_jsonl(f, tr), 0);
    fclose(f);
    return buf;
}

/* Read text; returns the reader's result, message in err. */
static int read_str(struct trace *tr, const char *text, char *err, size_t errlen) {
    trace_init(tr, 1);
    return trace_read_jsonl(tr, text, strlen(text), err, errlen);
}

static void assert_same_trace(const struct trace *x, const struct trace *y) {
    assert_int_equal(x->nnodes, y->nnodes);
    for (int i = 0; i < x->nnodes; i++) {
        assert_string_equal(x->nodes[i].name, y->nodes[i].name);
        assert_int_equal(x->nodes[i].kind, y->nodes[i].kind);
    }
    assert_string_equal(x->title, y->title);
    assert_string_equal(x->algo, y->algo);
    assert_int_equal(x->seed, y->seed);
    assert_int_equal(x->len, y->len);
    assert_int_equal(x->count, y->count);
    for (size_t i = 0; i < x->len; i++) {
        const struct trace_event *a = &x->ev[i], *b = &y->ev[i];
        assert_int_equal(a->t, b->t);
        assert_int_equal(a->seq, b->seq);
        assert_int_equal(a->kind, b->kind);
        assert_int_equal(a->node, b->node);
        assert_int_equal(a->peer, b->peer);
        assert_int_equal(a->token, b->token);
        assert_int_equal(a->grant, b->grant);
        assert_int_equal(a->a, b->a);
        assert_int_equal(a->b, b->b);
        assert_int_equal(a->text == NULL, b->text == NULL);
        if (a->text) assert_string_equal(a->text, b->text);
    }
    assert_int_equal(trace_hash(x), trace_hash(y));
}

/* ---- Round trips ---------------------------------------------------------- */

static void test_roundtrip_seed(void **state) {
    (void)state;
    struct trace tr, back;
    seed_trace(&tr);
    size_t n1, n2;
    char *one = write_str(&tr, &n1);
    /* The header, then one object per event, in the documented field order. */
    const char *head = "{\"format\":\"locksim-trace\",\"version\":5,\"title\":\"GC pause outlives the lease\","
                       "\"algo\":\"fenced-lease\",\"seed\":7,\"nodes\":[{\"name\":\"A\",\"kind\":\"client\"},"
                       "{\"name\":\"B\",\"kind\":\"client\"},{\"name\":\"S1\",\"kind\":\"server\"},"
                       "{\"name\":\"R\",\"kind\":\"resource\"}]}\n"
                       "{\"seq\":0,\"t_ns\":0,\"kind\":\"run-start\",\"node\":null,\"peer\":null,\"token\":0,"
                       "\"grant\":0,\"a\":7,\"b\":40000000000}\n";
    assert_memory_equal(one, head, strlen(head));
    assert_non_null(strstr(one, "{\"seq\":14,\"t_ns\":32000000000,\"kind\":\"write\",\"node\":\"R\","
                                "\"peer\":\"A\",\"token\":41,\"grant\":1,\"a\":9,\"b\":2}\n"));
    char err[128];
    assert_int_equal(trace_read_jsonl((trace_init(&back, 1), &back), one, n1, err, sizeof err), 0);
    assert_string_equal(err, "");
    assert_same_trace(&tr, &back);
    char *two = write_str(&back, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(one, two, n1);
    free(one);
    free(two);
    trace_close(&back);
    trace_close(&tr);
}

static void test_roundtrip_odd_values(void **state) {
    (void)state;
    struct trace tr, back, again;
    odd_trace(&tr);
    size_t n1, n2, n3;
    char *one = write_str(&tr, &n1);
    /* Escapes: quotes, backslashes, control characters; UTF-8 kept as is. */
    assert_non_null(strstr(one, "\"title\":\"quotes \\\" back\\\\slash\\ttab\\nnewline \x7f del\""));
    assert_non_null(strstr(one, "{\"name\":\"c\\\"1\\\\\",\"kind\":\"client\"}"));
    assert_non_null(strstr(one, "\"text\":\"ctrl \\u0001\\u001f end\""));
    assert_non_null(strstr(one, "\"text\":\"emoji \xf0\x9f\x98\x80 and \xe2\x82\xac\""));
    assert_non_null(strstr(one, "\"seed\":18446744073709551615"));
    assert_non_null(strstr(one, "\"token\":18446744073709551615"));
    assert_non_null(strstr(one, "\"grant\":4294967295"));
    assert_non_null(strstr(one, "\"a\":-9223372036854775808"));
    assert_non_null(strstr(one, "\"b\":9223372036854775807"));
    assert_non_null(strstr(one, "\"text\":\"\"}")); /* empty text is kept, NULL omitted */
    char err[128];
    trace_init(&back, 1);
    assert_int_equal(trace_read_jsonl(&back, one, n1, err, sizeof err), 0);
    assert_same_trace(&tr, &back);
    char *two = write_str(&back, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(one, two, n1);
    /* And once more from the copy: still the same bytes. */
    trace_init(&again, 1);
    assert_int_equal(trace_read_jsonl(&again, two, n2, err, sizeof err), 0);
    char *three = write_str(&again, &n3);
    assert_int_equal(n1, n3);
    assert_memory_equal(one, three, n1);
    free(one);
    free(two);
    free(three);
    trace_close(&again);
    trace_close(&back);
    trace_close(&tr);
}

/* Bytes that are not UTF-8 become U+FFFD; from then on the text is stable. */
static void test_roundtrip_invalid_utf8(void **state) {
    (void)state;
    struct trace tr, back;
    trace_init(&tr, 1);
    trace_add_node(&tr, "S1", TRACE_NODE_SERVER);
    ev(&tr, 0, TRACE_SRV_NOTE, 0, NO, 0, 0, 0, 0, "bad \xff\xc3 byte \xed\xa0\x80");
    size_t n1, n2;
    char *one = write_str(&tr, &n1);
    assert_non_null(strstr(one, "\"text\":\"bad \xef\xbf\xbd\xef\xbf\xbd byte "
                                "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"}"));
    char err[128];
    trace_init(&back, 1);
    assert_int_equal(trace_read_jsonl(&back, one, n1, err, sizeof err), 0);
    char *two = write_str(&back, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(one, two, n1);
    free(one);
    free(two);
    trace_close(&back);
    trace_close(&tr);
}

/* The reader takes what any JSON writer might do within the format: spaces,
 * keys in another order, \r\n, escapes, no final newline. */
static void test_reader_lenient_json(void **state) {
    (void)state;
    const char *text = "{ \"version\" : 1 , \"format\":\"locksim-trace\", \"nodes\" : [ {\"kind\":\"client\","
                       " \"name\":\"A\"} , {\"name\":\"S\\u00e9\",\"kind\":\"server\"} ], \"seed\":3,"
                       " \"algo\":\"lease\", \"title\":\"t\\/\\ud83d\\ude00\" }\r\n"
                       "{\"b\":-2,\"a\":-1,\"grant\":0,\"token\":5,\"peer\":\"S\xc3\xa9\",\"node\":\"A\","
                       "\"kind\":\"acquired\",\"t_ns\":10,\"seq\":0,\"text\":\"x\\n\\\"y\\\"\"}\r\n"
                       "{\"seq\":1,\"t_ns\":10,\"kind\":\"run-end\",\"node\":null,\"peer\":null,\"token\":0,"
                       "\"grant\":0,\"a\":0,\"b\":0}";
    struct trace tr;
    char err[128];
    assert_int_equal(read_str(&tr, text, err, sizeof err), 0);
    assert_int_equal(tr.nnodes, 2);
    assert_string_equal(tr.nodes[1].name, "S\xc3\xa9");
    assert_int_equal(tr.nodes[1].kind, TRACE_NODE_SERVER);
    assert_string_equal(tr.title, "t/\xf0\x9f\x98\x80");
    assert_int_equal(tr.seed, 3);
    assert_int_equal(tr.len, 2);
    assert_int_equal(tr.ev[0].kind, TRACE_ACQUIRED);
    assert_int_equal(tr.ev[0].node, 0);
    assert_int_equal(tr.ev[0].peer, 1);
    assert_int_equal(tr.ev[0].token, 5);
    assert_int_equal(tr.ev[0].a, -1);
    assert_int_equal(tr.ev[0].b, -2);
    assert_string_equal(tr.ev[0].text, "x\n\"y\"");
    assert_null(tr.ev[1].text);
    trace_close(&tr);
}

/* An observer set before reading sees every event, as the checker would. */
static int observed;
static void count_events(void *arg, const struct trace_event *e) {
    (void)arg;
    (void)e;
    observed++;
}

static void test_reader_feeds_observer(void **state) {
    (void)state;
    struct trace tr, back;
    seed_trace(&tr);
    size_t n;
    char *text = write_str(&tr, &n);
    trace_init(&back, 1);
    back.observe = count_events;
    observed = 0;
    assert_int_equal(trace_read_jsonl(&back, text, n, NULL, 0), 0);
    assert_int_equal(observed, (int)tr.len);
    free(text);
    trace_close(&back);
    trace_close(&tr);
}

/* ---- Reader errors ------------------------------------------------------- */

#define HEAD \
    "{\"format\":\"locksim-trace\",\"version\":1,\"title\":\"\",\"algo\":\"\",\"seed\":0," \
    "\"nodes\":[{\"name\":\"A\",\"kind\":\"client\"},{\"name\":\"S1\",\"kind\":\"server\"}]}\n"
#define EV(body) "{\"seq\":0,\"t_ns\":5,\"kind\":\"acquired\",\"node\":\"A\",\"peer\":null," body "}\n"
#define FIELDS "\"token\":1,\"grant\":1,\"a\":0,\"b\":0"

static void test_reader_errors(void **state) {
    (void)state;
    static const struct {
        const char *text;
        const char *err;
    } cases[] = {
            {"", "line 1: empty input; expected the header"},
            {"\n", "line 1: empty line; expected the header"},
            {"hello\n", "line 1: expected the header object"},
            {"{\"format\":\"otel\",\"version\":1}\n",
             "line 1: not a locksim trace (format \"otel\", expected \"locksim-trace\")"},
            {"{\"version\":1}\n", "line 1: not a locksim trace (no \"format\" key in the header)"},
            {"{\"format\":\"locksim-trace\",\"version\":6}\n",
             "line 1: trace format version 6 is not supported (this build reads versions 1 to 5)"},
            {"{\"format\":\"locksim-trace\",\"version\":0}\n",
             "line 1: trace format version 0 is not supported (this build reads versions 1 to 5)"},
            {"{\"format\":\"locksim-trace\",\"version\":1,\"title\":\"\",\"algo\":\"\",\"seed\":0}\n",
             "line 1: header: missing key \"nodes\""},
            {"{\"format\":\"locksim-trace\",\"colour\":1}\n", "line 1: unknown key \"colour\""},
            {"{\"format\":\"locksim-trace\",\"version\":5,\"title\":\"\",\"algo\":\"\",\"seed\":0,"
             "\"digest\":\"0123456789abcdef\",\"nodes\":[]}\n",
             "line 1: header: \"digest\" and \"omitted\" come together (a golden trace), found only \"digest\""},
            {"{\"format\":\"locksim-trace\",\"digest\":\"0x23456789abcdef\"}\n",
             "line 1: \"digest\": expected 16 hexadecimal digits, found \"0x23456789abcdef\""},
            {"{\"format\":\"locksim-trace\",\"digest\":\"abc\"}\n",
             "line 1: \"digest\": expected 16 hexadecimal digits, found \"abc\""},
            {"{\"format\":\"locksim-trace\",\"format\":\"locksim-trace\"}\n", "line 1: duplicate key \"format\""},
            {"{\"format\":\"locksim-trace\",\"version\":1,\"title\":\"\",\"algo\":\"\",\"seed\":0,"
             "\"nodes\":[{\"name\":\"A\",\"kind\":\"client\"},{\"name\":\"A\",\"kind\":\"server\"}]}\n",
             "line 1: duplicate node name \"A\""},
            {"{\"format\":\"locksim-trace\",\"nodes\":[{\"name\":\"A\",\"kind\":\"robot\"}]}\n",
             "line 1: unknown node kind \"robot\" (client, server or resource)"},
            {"{\"format\":\"locksim-trace\",\"nodes\":[{\"name\":\"ABCDEFGHIJKLMNOP\"}]}\n",
             "line 1: node name \"ABCDEFGHIJKLMNOP\" is longer than 15 bytes"},
            {"{\"format\":\"locksim-trace\",\"nodes\":[{\"name\":\"\"}]}\n", "line 1: node name is empty"},
            {"{\"format\":\"locksim-trace\",\"nodes\":[{\"name\":\"A\"}]}\n", "line 1: node: missing key \"kind\""},
            {"{\"format\":\"locksim-trace\",\"nodes\":[{\"name\":\"A\",\"kind\":\"client\"}}\n",
             "line 1: nodes: expected ',' or ']'"},
            {"{\"format\":\"locksim-trace\",\"seed\":-1}\n", "line 1: \"seed\": out of range"},
            {"{\"format\":\"locksim-trace\",\"version\":1,\"title\":\"\",\"algo\":\"\",\"seed\":0,"
             "\"nodes\":[]} x\n",
             "line 1: unexpected text after the object"},
            {HEAD "{\"seq\":0,\"t_ns\":0,\"kind\":\"teleport\"}\n", "line 2: unknown kind \"teleport\""},
            {HEAD "{\"seq\":0,\"node\":\"Z\"}\n", "line 2: \"node\": unknown node \"Z\""},
            {HEAD "{\"seq\":0,\"node\":7}\n", "line 2: \"node\": expected a node name or null"},
            {HEAD "{\"seq\":1}\n", "line 2: \"seq\" is 1, expected 0"},
            {HEAD EV(FIELDS) "{\"seq\":1,\"t_ns\":4}\n", "line 3: \"t_ns\" goes back in time (4 after 5)"},
            {HEAD "{\"seq\":0,\"t_ns\":-1}\n", "line 2: \"t_ns\": out of range"},
            {HEAD "{\"seq\":0,\"t_ns\":1000000000000000001}\n", "line 2: \"t_ns\": out of range"},
            {HEAD EV("\"token\":1,\"grant\":1,\"a\":1.5,\"b\":0"), "line 2: \"a\": expected an integer"},
            {HEAD EV("\"token\":1,\"grant\":1,\"a\":1e3,\"b\":0"), "line 2: \"a\": expected an integer"},
            {HEAD EV("\"token\":1,\"grant\":1,\"a\":01,\"b\":0"), "line 2: \"a\": leading zero"},
            {HEAD EV("\"token\":1,\"grant\":1,\"a\":\"1\",\"b\":0"), "line 2: \"a\": expected an integer"},
            {HEAD EV("\"token\":1,\"grant\":4294967296,\"a\":0,\"b\":0"), "line 2: \"grant\": out of range"},
            {HEAD EV("\"token\":18446744073709551616,\"grant\":1,\"a\":0,\"b\":0"), "line 2: \"token\": out of range"},
            {HEAD EV("\"token\":1,\"grant\":1,\"a\":9223372036854775808,\"b\":0"), "line 2: \"a\": out of range"},
            {HEAD EV("\"token\":1,\"grant\":1,\"a\":0"), "line 2: event: missing key \"b\""},
            {HEAD EV(FIELDS ",\"a\":1"), "line 2: duplicate key \"a\""},
            {HEAD EV(FIELDS ",\"colour\":1"), "line 2: unknown key \"colour\""},
            {HEAD EV(FIELDS ",\"text\":\"\\q\""), "line 2: \"text\": bad escape '\\q'"},
            {HEAD EV(FIELDS ",\"text\":\"\\u12\""), "line 2: \"text\": bad \\u escape"},
            {HEAD EV(FIELDS ",\"text\":\"\\u0000\""), "line 2: \"text\": \\u0000 is not allowed"},
            {HEAD EV(FIELDS ",\"text\":\"\\udc00\""), "line 2: \"text\": lone UTF-16 surrogate"},
            {HEAD EV(FIELDS ",\"text\":\"\\ud800x\""), "line 2: \"text\": lone UTF-16 surrogate"},
            {HEAD EV(FIELDS ",\"text\":\"\xff\""), "line 2: \"text\": invalid UTF-8"},
            {HEAD EV(FIELDS ",\"text\":\"tab\there\""), "line 2: \"text\": control character in a string (escape it)"},
            {HEAD EV(FIELDS ",\"text\":\"open"), "line 2: \"text\": unterminated string"},
            {HEAD EV(FIELDS ",\"text\":null"), "line 2: \"text\": expected a string"},
            {HEAD EV(FIELDS) "\n" EV(FIELDS), "line 3: empty line"},
            {HEAD "{\"seq\":0 \"t_ns\":0}\n", "line 2: expected ',' or '}' in an event"},
            {HEAD "{seq:0}\n", "line 2: expected a key string"},
            {HEAD "{\"seq\" 0}\n", "line 2: expected ':' after key \"seq\""},
            {HEAD "[1]\n", "line 2: expected an event object"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct trace tr;
        char err[160];
        int rc = read_str(&tr, cases[i].text, err, sizeof err);
        if (rc != -1 || strcmp(err, cases[i].err) != 0) fprintf(stderr, "case %zu: got %d \"%s\"\n", i, rc, err);
        assert_int_equal(rc, -1);
        assert_string_equal(err, cases[i].err);
        trace_close(&tr);
    }
}

/* A NUL byte, a trace that is not empty or does not keep events, a short
 * error buffer and no error buffer at all. */
static void test_reader_misuse(void **state) {
    (void)state;
    struct trace tr;
    char err[160];
    static const char nul[] = HEAD "{\"seq\":0\0}\n";
    trace_init(&tr, 1);
    assert_int_equal(trace_read_jsonl(&tr, nul, sizeof nul - 1, err, sizeof err), -1);
    assert_string_equal(err, "line 2: NUL byte in the input");
    trace_close(&tr);

    assert_int_equal(read_str(&tr, HEAD, err, sizeof err), 0);
    assert_int_equal(trace_read_jsonl(&tr, HEAD, strlen(HEAD), err, sizeof err), -1);
    assert_string_equal(err, "line 1: the trace to read into is not empty");
    trace_close(&tr);

    trace_init(&tr, 0);
    assert_int_equal(trace_read_jsonl(&tr, HEAD, strlen(HEAD), err, sizeof err), -1);
    assert_non_null(strstr(err, "must keep its events"));
    trace_close(&tr);

    char small[12];
    assert_int_equal(read_str(&tr, "hello\n", small, sizeof small), -1);
    assert_string_equal(small, "line 1: exp");
    trace_close(&tr);
    assert_int_equal(read_str(&tr, "hello\n", NULL, 0), -1);
    trace_close(&tr);
}

/* ---- The writer refuses what it could not write faithfully ---------------- */

static void test_writer_refuses(void **state) {
    (void)state;
    struct trace tr;
    char *buf = NULL;
    size_t len = 0;
    FILE *f;

    trace_init(&tr, 1);
    trace_add_node(&tr, "A", TRACE_NODE_CLIENT);
    trace_add_node(&tr, "A", TRACE_NODE_SERVER); /* duplicate name */
    f = open_memstream(&buf, &len);
    assert_int_equal(trace_write_jsonl(f, &tr), -1);
    fclose(f);
    assert_int_equal(len, 0); /* nothing written */
    free(buf);
    trace_close(&tr);

    trace_init(&tr, 1);
    trace_add_node(&tr, "A", TRACE_NODE_CLIENT);
    ev(&tr, 0, TRACE_ACQUIRED, 9, NO, 0, 0, 0, 0, NULL); /* node out of range */
    f = open_memstream(&buf, &len);
    assert_int_equal(trace_write_jsonl(f, &tr), -1);
    fclose(f);
    free(buf);
    tr.ev[0].node = 0;
    tr.ev[0].kind = TRACE_KIND_COUNT; /* no such kind */
    f = open_memstream(&buf, &len);
    assert_int_equal(trace_write_jsonl(f, &tr), -1);
    fclose(f);
    free(buf);
    tr.ev[0].kind = TRACE_ACQUIRED;
    tr.nodes[0].kind = 9; /* no such node kind */
    f = open_memstream(&buf, &len);
    assert_int_equal(trace_write_jsonl(f, &tr), -1);
    fclose(f);
    free(buf);
    tr.nodes[0].kind = TRACE_NODE_CLIENT;

    /* A write error is reported. */
    f = fopen("/dev/full", "w");
    if (f) {
        setvbuf(f, NULL, _IONBF, 0);
        assert_int_equal(trace_write_jsonl(f, &tr), -1);
        fclose(f);
    }
    trace_close(&tr);
}

/* ---- The hash, kind names, owned strings --------------------------------- */

static void test_trace_hash_stability(void **state) {
    (void)state;
    struct trace tr;
    seed_trace(&tr);
    /* Recorded once (six 64-bit words per event and the text, folded with
     * xxHash64's round, then its avalanche; docs/trace-format.md): it changes
     * only if the hash, the fixture or the numbering of enum trace_kind
     * changes. */
    uint64_t h = trace_hash(&tr);
    assert_int_equal(h, 0xb5e905180861e303ull);
    /* Order counts: two events swapped give another digest. */
    struct trace_event e3 = tr.ev[3];
    tr.ev[3] = tr.ev[4];
    tr.ev[4] = e3;
    assert_int_not_equal(trace_hash(&tr), h);
    tr.ev[4] = tr.ev[3];
    tr.ev[3] = e3;
    assert_int_equal(trace_hash(&tr), h);
    /* A field's bits do not leak into a neighbour: node and peer exchanged. */
    int32_t nd = tr.ev[5].node;
    assert_int_not_equal(nd, tr.ev[5].peer);
    tr.ev[5].node = tr.ev[5].peer;
    tr.ev[5].peer = nd;
    assert_int_not_equal(trace_hash(&tr), h);
    tr.ev[5].peer = tr.ev[5].node;
    tr.ev[5].node = nd;
    assert_int_equal(trace_hash(&tr), h);
    /* Any field of any event moves it. */
    tr.ev[14].b = TRACE_WRITE_ACCEPTED;
    assert_int_not_equal(trace_hash(&tr), h);
    tr.ev[14].b = TRACE_WRITE_REJECTED_STALE;
    assert_int_equal(trace_hash(&tr), h);
    tr.ev[3].token = 40;
    assert_int_not_equal(trace_hash(&tr), h);
    tr.ev[3].token = 41;
    /* Text counts, by content, not by pointer. */
    char a[] = "note", b[] = "note";
    tr.ev[0].text = a;
    uint64_t ha = trace_hash(&tr);
    assert_int_not_equal(ha, h);
    tr.ev[0].text = b;
    assert_int_equal(trace_hash(&tr), ha);
    tr.ev[0].text = NULL;
    /* Equal traces built twice hash equal. */
    struct trace again;
    seed_trace(&again);
    assert_int_equal(trace_hash(&again), h);
    trace_close(&again);
    trace_close(&tr);
}

/* The engine's hash-only path (trace_append_hash_only, for kinds no one
 * keeps or observes) gives the digest, the count and the advance calls that
 * appending each event would: over the fixture, with a text longer than a
 * word, every other event through each path. */
static int hash_only_advances;
static void hash_only_advance(void *arg, sim_ns t) {
    (void)arg;
    (void)t;
    hash_only_advances++;
}
static void test_trace_hash_only_path(void **state) {
    (void)state;
    struct trace ref, tr, mixed;
    seed_trace(&ref);
    ref.ev[2].text = "a note of more than eight bytes";
    trace_init(&tr, 0);
    trace_init(&mixed, 0);
    trace_hash_on(&tr);
    trace_hash_on(&mixed);
    tr.advance = mixed.advance = hash_only_advance;
    hash_only_advances = 0;
    for (size_t i = 0; i < ref.len; i++) {
        const struct trace_event *e = &ref.ev[i];
        trace_append_hash_only(&tr, e->t, e->kind, e->node, e->peer, e->token, e->grant, e->a, e->b, e->text);
        if (i % 2) trace_append(&mixed, e);
        else trace_append_hash_only(&mixed, e->t, e->kind, e->node, e->peer, e->token, e->grant, e->a, e->b, e->text);
    }
    assert_int_equal(trace_hash(&tr), trace_hash(&ref));
    assert_int_equal(trace_hash(&mixed), trace_hash(&ref));
    assert_int_equal(tr.count, ref.len);
    assert_int_equal(mixed.count, ref.len);
    int distinct = 0; /* an advance per later instant, in each trace */
    for (size_t i = 0; i < ref.len; i++) distinct += i == 0 ? ref.ev[i].t > 0 : ref.ev[i].t > ref.ev[i - 1].t;
    assert_true(distinct > 3);
    assert_int_equal(hash_only_advances, 2 * distinct);
    ref.ev[2].text = NULL;
    trace_close(&mixed);
    trace_close(&tr);
    trace_close(&ref);
}

static void test_kind_names(void **state) {
    (void)state;
    for (int k = 0; k < TRACE_KIND_COUNT; k++) {
        const char *name = trace_kind_name(k);
        assert_string_not_equal(name, "unknown");
        assert_int_equal(trace_kind_from_name(name), k);
        for (int j = 0; j < k; j++) assert_string_not_equal(trace_kind_name(j), name);
    }
    assert_int_equal(trace_kind_from_name("acquired"), TRACE_ACQUIRED);
    assert_int_equal(trace_kind_from_name("srv-expire"), TRACE_SRV_EXPIRE);
    assert_int_equal(trace_kind_from_name("ACQUIRED"), -1);
    assert_int_equal(trace_kind_from_name("unknown"), -1);
    assert_int_equal(trace_kind_from_name(""), -1);
    assert_string_equal(trace_kind_name(-1), "unknown");
    assert_string_equal(trace_kind_name(TRACE_KIND_COUNT), "unknown");
}

/* The resource rules' words, as the JSON record spells them; a value no
 * rule has reads as plain. */
static void test_rule_words(void **state) {
    (void)state;
    static const char *const words[] = {"plain", "tokens", "algorithm", "no-lock", "owner"};
    for (int64_t b = 0; b < 5; b++) { /* the trace's values, 0 to 4 */
        assert_true(trace_rule_known(b));
        assert_string_equal(trace_rule_word(b), words[b]);
    }
    assert_false(trace_rule_known(-1));
    assert_false(trace_rule_known(99));
    assert_string_equal(trace_rule_word(99), "plain");
    assert_string_equal(trace_rule_says(-1), "");
    assert_string_equal(trace_rule_says(TRACE_RULE_TOKENS), " (resource checks fencing tokens)");
}

/* The whole of a text file of the repository (the tests run from its root). */
static void read_text(const char *path, char *buf, size_t n) {
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("cannot open %s", path);
    size_t len = fread(buf, 1, n - 1, f);
    fclose(f);
    assert_true(len < n - 1); /* all of it */
    buf[len] = '\0';
}

/* Every kind of TRACE_KIND_MAP is documented and fuzzed: docs/trace-format.md
 * has a table row for it, its paragraph on what the checker reads names the
 * kinds of CHECKER_KINDS, and fuzz/trace.dict has its word. A kind added to
 * the map and forgotten in one of them fails here. */
static void test_kinds_documented(void **state) {
    (void)state;
    static char doc[1 << 17], dict[1 << 14];
    read_text("docs/trace-format.md", doc, sizeof doc);
    read_text("fuzz/trace.dict", dict, sizeof dict);
    const char *reads = strstr(doc, "checker reads:");
    const char *reads_end = reads ? strstr(reads, "; and end with") : NULL;
    assert_non_null(reads_end);
    for (int k = 0; k < TRACE_KIND_COUNT; k++) {
        const char *word = trace_kind_name(k);
        char row[64], entry[64], quoted[64];
        snprintf(row, sizeof row, "\n| `%s` |", word);
        snprintf(entry, sizeof entry, "=\"\\\"%s\\\"\"\n", word);
        snprintf(quoted, sizeof quoted, "`%s`", word);
        if (!strstr(doc, row)) fail_msg("docs/trace-format.md has no table row for kind %s", word);
        if (!strstr(dict, entry)) fail_msg("fuzz/trace.dict has no entry for kind %s", word);
        const char *at = strstr(reads, quoted);
        int named = at && at < reads_end;
        if (named != (int)((CHECKER_KINDS >> k) & 1))
            fail_msg("docs/trace-format.md: what the checker reads %s kind %s", named ? "names" : "lacks", word);
    }
}

static void test_intern(void **state) {
    (void)state;
    struct trace tr;
    trace_init(&tr, 1);
    const char *x = trace_intern(&tr, "hello world", 5);
    assert_string_equal(x, "hello");
    /* Equal strings share one copy; it survives the table's growth. */
    char buf[32];
    for (int i = 0; i < 1000; i++) {
        snprintf(buf, sizeof buf, "s%d", i);
        assert_non_null(trace_intern(&tr, buf, strlen(buf)));
    }
    assert_ptr_equal(trace_intern(&tr, "hello", 5), x);
    assert_ptr_not_equal(trace_intern(&tr, "hell", 4), x);
    assert_string_equal(trace_intern(&tr, "", 0), "");
    /* Longer than a block. */
    char *big = malloc(10000);
    assert_non_null(big);
    memset(big, 'z', 10000);
    const char *y = trace_intern(&tr, big, 10000);
    assert_int_equal(strlen(y), 10000);
    free(big);
    assert_string_equal(x, "hello");
    trace_close(&tr);
    assert_null(tr.strings);
}

/* ---- Out of memory -------------------------------------------------------- */

static void test_out_of_memory(void **state) {
    (void)state;
#if FAULTS
    if (!faults_work()) {
        skip();
        return;
    }
    struct trace tr, back;
    odd_trace(&tr);
    size_t n;
    char *text = write_str(&tr, &n);
    int ok = 0;
    for (long k = 0; k < 200 && !ok; k++) {
        char err[128];
        trace_init(&back, 1);
        long before = live;
        fail_after = k;
        int rc = trace_read_jsonl(&back, text, n, err, sizeof err);
        fail_after = -1;
        if (rc == 0) {
            ok = 1;
            assert_same_trace(&tr, &back);
        } else {
            assert_int_equal(rc, -1);
            assert_non_null(strstr(err, "out of memory"));
        }
        trace_close(&back);
        assert_int_equal(live, before); /* nothing leaked, failed or not */
    }
    assert_true(ok);
    trace_init(&back, 1);
    fail_after = 0;
    const char *s = trace_intern(&back, "x", 1);
    fail_after = -1;
    assert_null(s);
    trace_close(&back);
    free(text);
    trace_close(&tr);
#else
    skip();
#endif
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_roundtrip_seed),
            cmocka_unit_test(test_roundtrip_odd_values),
            cmocka_unit_test(test_roundtrip_invalid_utf8),
            cmocka_unit_test(test_reader_lenient_json),
            cmocka_unit_test(test_reader_feeds_observer),
            cmocka_unit_test(test_reader_errors),
            cmocka_unit_test(test_reader_misuse),
            cmocka_unit_test(test_writer_refuses),
            cmocka_unit_test(test_trace_hash_stability),
            cmocka_unit_test(test_trace_hash_only_path),
            cmocka_unit_test(test_kind_names),
            cmocka_unit_test(test_kinds_documented),
            cmocka_unit_test(test_rule_words),
            cmocka_unit_test(test_intern),
            cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests_name("trace", tests, NULL, NULL);
}
