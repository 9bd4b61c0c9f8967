/* Tests of the window's pure state (render/viewstate.c), told as a teacher
 * uses the window: step through the seed's GC-pause story and back, play
 * until the quiz stops before the grant after the expiry, jump to a 1 ns
 * double entry in a 60 s run and see it wide enough, zoom and pan within
 * the run, and find what is under the mouse in a built scene. */
#include "testutil.h"

#include <stdlib.h>

#include "layout.h"
#include "narrate.h"
#include "scene.h"
#include "viewstate.h"

#define S (1000000000LL)


static const struct trace_event *cur_event(const struct viewstate *vs, const struct trace *tr) {
    return viewstate_cur(vs) >= 0 ? &tr->ev[vs->ev[viewstate_cur(vs)].seq] : NULL;
}

/* Stepping moves over the stops in time order, and back again exactly. */
static void test_step_forward_and_back(void **state) {
    (void)state;
    struct engine *e = run_text(testutil_gc_story);
    const struct trace *tr = engine_trace(e);
    struct viewstate vs;
    assert_int_equal(viewstate_init(&vs, &tr, 1, 0), 0);
    /* Step 0: the window is the whole run, the cursor before the first stop. */
    assert_int_equal(vs.t0, 0);
    assert_int_equal(vs.t1, 60 * S);
    assert_int_equal(viewstate_cur(&vs), -1);
    /* Step 1: the first step lands on A starting to acquire at t=0. */
    assert_int_equal(viewstate_step(&vs, 1), 1);
    assert_int_equal(cur_event(&vs, tr)->kind, TRACE_ACQUIRE_START);
    assert_int_equal(vs.cursor, 0);
    /* Step 2: step until A pauses: t=5s. */
    while (cur_event(&vs, tr)->kind != TRACE_PAUSE) assert_int_equal(viewstate_step(&vs, 1), 1);
    assert_int_equal(vs.cursor, 5 * S);
    long at_pause = viewstate_cur(&vs);
    /* Step 3: the next stop is the lease expiring on the server: the store
     * keeps a key through its deadline's millisecond (Redis keyIsExpired is
     * now > when), so at 30.001s. */
    viewstate_step(&vs, 1);
    assert_int_equal(cur_event(&vs, tr)->kind, TRACE_SRV_EXPIRE);
    assert_int_equal(vs.cursor, 30 * S + 1000000);
    /* Step 4: one step back is the pause again, exactly. */
    viewstate_step(&vs, -1);
    assert_int_equal(viewstate_cur(&vs), at_pause);
    assert_int_equal(vs.cursor, 5 * S);
    /* Step 5: Home and End. */
    viewstate_home(&vs);
    assert_int_equal(viewstate_cur(&vs), -1);
    assert_int_equal(viewstate_step(&vs, -1), 0);
    viewstate_end(&vs);
    assert_int_equal(viewstate_cur(&vs), (long)vs.nev - 1);
    assert_int_equal(viewstate_step(&vs, 1), 0);
    /* Step 6: seeking to 31.5s makes the last stop at or before it current. */
    viewstate_seek(&vs, 31 * S + S / 2);
    assert_true(vs.ev[viewstate_cur(&vs)].t <= 31 * S + S / 2);
    assert_true(viewstate_cur(&vs) + 1 == (long)vs.nev || vs.ev[viewstate_cur(&vs) + 1].t > 31 * S + S / 2);
    viewstate_close(&vs);
    engine_free(e);
}

/* The quiz stops before the grant after the expiry and before the late
 * write, and a reveal moves onto it. */
static void test_quiz_stops(void **state) {
    (void)state;
    struct engine *e = run_text(testutil_gc_story);
    const struct trace *tr = engine_trace(e);
    struct viewstate vs;
    assert_int_equal(viewstate_init(&vs, &tr, 1, 1), 0);
    /* Step 1: play; at the rate of the whole run in 20 s, 10 wall seconds
     * reach 30s, but the quiz stops before S1 grants B the lock at 31s. */
    vs.playing = 1;
    assert_int_equal(viewstate_play(&vs, 19.0), 1);
    assert_false(vs.playing);
    assert_true(viewstate_asking(&vs) >= 0);
    const struct trace_event *q = &tr->ev[vs.ev[viewstate_asking(&vs)].seq];
    assert_int_equal(q->kind, TRACE_SRV_GRANT);
    assert_int_equal(q->t, 31 * S);
    assert_true(vs.cursor <= 31 * S); /* B's attempt also starts at 31s */
    assert_int_equal(viewstate_cur(&vs), viewstate_asking(&vs) - 1);
    /* Step 2: the question has three choices; the right one is the grant. */
    char text[256], ch[3][96];
    int answer = -1;
    assert_int_equal(viewstate_question(&vs.ev[viewstate_asking(&vs)], tr, text, sizeof text, ch, &answer), 3);
    assert_non_null(strstr(ch[answer], "grants"));
    /* Step 3: stepping is refused until the answer is revealed. */
    assert_int_equal(viewstate_step(&vs, 1), 0);
    assert_int_equal(viewstate_reveal(&vs), 0);
    assert_int_equal(cur_event(&vs, tr)->kind, TRACE_SRV_GRANT);
    assert_int_equal(vs.cursor, 31 * S);
    /* Step 4: stepping on reaches the next question: A's late write at 32s. */
    while (viewstate_asking(&vs) < 0) assert_int_equal(viewstate_step(&vs, 1), 1);
    q = &tr->ev[vs.ev[viewstate_asking(&vs)].seq];
    assert_int_equal(q->kind, TRACE_WRITE);
    assert_int_equal(q->t, 32 * S);
    assert_int_equal(viewstate_question(&vs.ev[viewstate_asking(&vs)], tr, text, sizeof text, ch, &answer), 2);
    assert_int_equal(answer, 0); /* a plain lease: accepted */
    viewstate_close(&vs);
    engine_free(e);
}

/* At a resource with a rule the late-write question has a third outcome:
 * A's write lands before any operation of B (fencing-late-write-ordered's
 * timing), accepted and harmless: the answer is the third choice. */
static void test_quiz_late_write_ordered(void **state) {
    (void)state;
    struct engine *e = run_text("lock fenced-lease ttl=10s\nresource stock=2 fencing=on check=reads+writes\n"
                                "network latency=0ms\nduration 30s\n"
                                "client A: acquire; read; write; release\n"
                                "client B @1s: acquire retry=1s; work 1s; read; write; release\n"
                                "on A.between-read-and-write pause A 11.5s\n");
    const struct trace *tr = engine_trace(e);
    struct viewstate vs;
    char text[256], ch[3][96];
    int answer = -1;
    assert_int_equal(viewstate_init(&vs, &tr, 1, 1), 0);
    while (viewstate_asking(&vs) < 0 || tr->ev[vs.ev[viewstate_asking(&vs)].seq].kind != TRACE_WRITE) {
        if (viewstate_asking(&vs) >= 0) assert_int_equal(viewstate_reveal(&vs), 0);
        assert_int_equal(viewstate_step(&vs, 1), 1);
    }
    const struct trace_event *q = &tr->ev[vs.ev[viewstate_asking(&vs)].seq];
    assert_int_equal(q->t, 11 * S + S / 2);
    assert_int_equal(viewstate_question(&vs.ev[viewstate_asking(&vs)], tr, text, sizeof text, ch, &answer), 3);
    assert_int_equal(answer, 2);
    assert_string_equal(ch[2], "accepts it: the new holder has not touched R yet, so it comes first");
    viewstate_close(&vs);
    engine_free(e);
}

/* A hand-made trace: A and B both in the critical section for 1 ns at 30s
 * of a 60 s run. */
static void one_ns_trace(struct trace *tr) {
    trace_init(tr, 1);
    trace_add_node(tr, "A", TRACE_NODE_CLIENT);
    trace_add_node(tr, "B", TRACE_NODE_CLIENT);
    struct trace_event evs[] = {
            {.t = 0, .kind = TRACE_RUN_START, .node = -1, .peer = -1, .b = 60 * S},
            {.t = 0, .kind = TRACE_ACQUIRED, .node = 0, .peer = -1, .grant = 1},
            {.t = 30 * S, .kind = TRACE_ACQUIRED, .node = 1, .peer = -1, .grant = 2},
            {.t = 30 * S, .kind = TRACE_DOUBLE_ENTRY_BEGIN, .node = 1, .peer = 0},
            {.t = 30 * S + 1, .kind = TRACE_CS_EXIT, .node = 0, .peer = -1, .a = TRACE_EXIT_RELEASE},
            {.t = 30 * S + 1, .kind = TRACE_DOUBLE_ENTRY_END, .node = 1, .peer = 0, .a = 1},
            {.t = 40 * S, .kind = TRACE_CS_EXIT, .node = 1, .peer = -1, .a = TRACE_EXIT_RELEASE},
            {.t = 60 * S, .kind = TRACE_RUN_END, .node = -1, .peer = -1},
    };
    for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++) trace_append(tr, &evs[i]);
}

/* n jumps to a 1 ns double entry in a 60 s run and zooms until it is tens
 * of pixels wide. */
static void test_next_violation_one_ns(void **state) {
    (void)state;
    struct trace tr;
    one_ns_trace(&tr);
    const struct trace *trp = &tr;
    struct viewstate vs;
    assert_int_equal(viewstate_init(&vs, &trp, 1, 0), 0);
    /* Step 1: n puts the cursor on the double entry and zooms to a window
     * of at least VIEWSTATE_MIN_WINDOW_NS around it. */
    assert_int_equal(viewstate_next_violation(&vs), 0);
    assert_int_equal(vs.cursor, 30 * S);
    assert_true(vs.t0 <= 30 * S && vs.t1 >= 30 * S + 1);
    assert_true(vs.t1 - vs.t0 <= 100);
    /* Step 2: a 1280-pixel picture of that window shows the band wide. */
    struct layout ly;
    assert_int_equal(layout_build(&ly, &tr), 0);
    struct scene_view v;
    scene_view_pixels(&v, 1280, 720);
    v.t0 = vs.t0;
    v.t1 = vs.t1;
    v.cell_w = viewstate_cell_w(vs.t1 - vs.t0, 1280 - 2 * v.margin - 13 * v.char_w);
    assert_true(v.cell_w > 10);
    struct scene sc;
    assert_int_equal(scene_build(&sc, &ly, &v, NULL, 0), 0);
    int widest = 0;
    for (size_t i = 0; i < sc.ncmd; i++)
        if (sc.cmd[i].style == SCENE_ST_DOUBLE && sc.cmd[i].type == SCENE_CMD_RECT && sc.cmd[i].w > widest)
            widest = sc.cmd[i].w;
    assert_true(widest >= 20);
    /* Step 3: the time under the band's middle is within the double entry's window. */
    int x = scene_x_of(&sc, 30 * S);
    sim_ns t = viewstate_t_of_x(&sc, x);
    assert_true(t >= vs.t0 && t <= 30 * S + 1);
    scene_close(&sc);
    layout_close(&ly);
    /* Step 4: n again wraps to the same, only violation; a run without one says so. */
    assert_int_equal(viewstate_next_violation(&vs), 0);
    assert_int_equal(vs.cursor, 30 * S);
    viewstate_close(&vs);
    trace_close(&tr);

    struct engine *e = run_text("lock lease ttl=30s\nduration 10s\nclient A: acquire; work 1s; release\n");
    const struct trace *ok = engine_trace(e);
    assert_int_equal(viewstate_init(&vs, &ok, 1, 0), 0);
    assert_int_equal(viewstate_next_violation(&vs), -1);
    viewstate_close(&vs);
    engine_free(e);
}

/* Zoom keeps the anchor in place and stays inside the run; pan is clamped;
 * fit shows the whole run. */
static void test_zoom_pan_fit(void **state) {
    (void)state;
    struct engine *e = run_text(testutil_gc_story);
    const struct trace *tr = engine_trace(e);
    struct viewstate vs;
    assert_int_equal(viewstate_init(&vs, &tr, 1, 0), 0);
    /* Step 1: zoom in 4x around 30s: a 15 s window, 30s at the same fraction (1/2). */
    viewstate_zoom(&vs, 4.0, 30 * S);
    assert_int_equal(vs.t1 - vs.t0, 15 * S);
    assert_int_equal(vs.t0, 30 * S - 15 * S / 2);
    /* Step 2: pan right by 100 s: clamped at the end of the run. */
    viewstate_pan(&vs, 100 * S);
    assert_int_equal(vs.t1, 60 * S);
    assert_int_equal(vs.t1 - vs.t0, 15 * S);
    /* Step 3: pan left past 0: clamped at 0. */
    viewstate_pan(&vs, -100 * S);
    assert_int_equal(vs.t0, 0);
    /* Step 4: zoom in a lot: never narrower than the minimum. */
    for (int i = 0; i < 80; i++) viewstate_zoom(&vs, 2.0, 5 * S);
    assert_int_equal(vs.t1 - vs.t0, VIEWSTATE_MIN_WINDOW_NS);
    assert_true(vs.t0 <= 5 * S && vs.t1 >= 5 * S);
    /* Step 5: zoom out a lot: never wider than the run. */
    for (int i = 0; i < 80; i++) viewstate_zoom(&vs, 0.5, 5 * S);
    assert_int_equal(vs.t0, 0);
    assert_int_equal(vs.t1, 60 * S);
    viewstate_zoom(&vs, 3.0, 40 * S);
    viewstate_fit(&vs);
    assert_int_equal(vs.t0, 0);
    assert_int_equal(vs.t1, 60 * S);
    /* Step 6: the cursor pulls the window along when it leaves it. */
    viewstate_zoom(&vs, 6.0, 0);
    assert_true(vs.t1 < 31 * S);
    viewstate_seek(&vs, 31 * S);
    viewstate_step(&vs, 1);
    assert_true(vs.cursor >= vs.t0 && vs.cursor <= vs.t1);
    viewstate_close(&vs);
    engine_free(e);
}

/* Play advances at the rate and doubles with speed; a reload keeps the view. */
static void test_play_and_reload(void **state) {
    (void)state;
    struct engine *e = run_text(testutil_gc_story);
    const struct trace *tr = engine_trace(e);
    struct viewstate vs;
    assert_int_equal(viewstate_init(&vs, &tr, 1, 0), 0);
    /* Step 1: the whole 60 s run plays in 20 wall seconds: 1 s of wall is 3 s. */
    vs.playing = 1;
    viewstate_play(&vs, 1.0);
    assert_int_equal(vs.cursor, 3 * S);
    /* Step 2: twice as fast. */
    vs.speed = 1;
    viewstate_play(&vs, 1.0);
    assert_int_equal(vs.cursor, 9 * S);
    /* Step 3: play to the end and stop there. */
    viewstate_play(&vs, 100.0);
    assert_int_equal(vs.cursor, 60 * S);
    assert_false(vs.playing);
    /* Step 4: reload the same run zoomed at 30s: window and cursor stay. */
    viewstate_zoom(&vs, 4.0, 30 * S);
    viewstate_seek(&vs, 31 * S);
    sim_ns t0 = vs.t0, t1 = vs.t1;
    long cur = viewstate_cur(&vs);
    struct engine *e2 = run_text(testutil_gc_story);
    const struct trace *tr2 = engine_trace(e2);
    assert_int_equal(viewstate_reload(&vs, &tr2, 1), 0);
    assert_int_equal(vs.t0, t0);
    assert_int_equal(vs.t1, t1);
    assert_int_equal(vs.cursor, 31 * S);
    assert_int_equal(viewstate_cur(&vs), cur);
    viewstate_close(&vs);
    engine_free(e);
    engine_free(e2);
}

/* Hover: the symbol under the mouse and its tooltip; the axis rows. */
static void test_hit(void **state) {
    (void)state;
    struct engine *e = run_text(testutil_gc_story);
    const struct trace *tr = engine_trace(e);
    struct layout ly;
    assert_int_equal(layout_build(&ly, tr), 0);
    struct scene_view v;
    scene_view_pixels(&v, 1280, 720);
    struct scene sc;
    assert_int_equal(scene_build(&sc, &ly, &v, NULL, 0), 0);
    /* Step 1: the middle of each tooltip symbol hits itself (or a neighbour
     * at the same x); empty space hits nothing. */
    int tips = 0;
    for (size_t i = 0; i < sc.ncmd; i++) {
        const struct scene_cmd *k = &sc.cmd[i];
        if (k->type != SCENE_CMD_SYM || !k->text) continue;
        long h = viewstate_hit(&sc, k->x + k->w / 2, k->y + k->h / 2);
        assert_true(h >= 0);
        assert_int_equal(sc.cmd[h].type, SCENE_CMD_SYM);
        tips++;
    }
    assert_true(tips > 5);
    assert_int_equal(viewstate_hit(&sc, 1270, 2), -1);
    /* Step 2: the axis rows lie above the first lane. */
    int y0 = -1, y1 = -1;
    assert_int_equal(viewstate_axis_rows(&sc, &y0, &y1), 0);
    assert_true(y0 >= 0 && y1 > y0 && y1 - y0 < 100);
    scene_close(&sc);
    layout_close(&ly);
    engine_free(e);
}

/* The layout drawn for the panel now (viewstate_revealed), and what it shows. */
static void revealed_layout(const struct viewstate *vs, const struct trace *tr, struct layout *ly) {
    size_t nev;
    sim_ns until;
    viewstate_revealed(vs, 0, tr, &nev, &until);
    assert_int_equal(layout_build_prefix(ly, tr, nev, until), 0);
}

static int marks_of(const struct layout *ly, const char *lane, int kind) {
    int n = 0;
    for (int l = 0; l < ly->nlanes; l++)
        if (strcmp(ly->lanes[l].name, lane) == 0)
            for (size_t k = 0; k < ly->lanes[l].nmarks; k++) n += ly->lanes[l].marks[k].kind == kind;
    return n;
}

/* A scene's commands as one number: two scenes that draw the same thing
 * give the same digest. */
static uint64_t scene_digest(const struct layout *ly) {
    struct scene_view v;
    scene_view_pixels(&v, 1280, 720);
    v.compressed = 0;
    v.t0 = 0;
    v.t1 = 60 * S;
    struct scene sc;
    assert_int_equal(scene_build(&sc, ly, &v, NULL, 0), 0);
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < sc.ncmd; i++) {
        const struct scene_cmd *k = &sc.cmd[i];
        int64_t f[9] = {k->type, k->style, k->sym, k->x, k->y, k->w, k->h, k->x2, k->y2};
        for (int j = 0; j < 9; j++) h = (h ^ (uint64_t)f[j]) * 1099511628211ULL;
        for (const char *t = k->text; t && *t; t++) h = (h ^ (unsigned char)*t) * 1099511628211ULL;
    }
    scene_close(&sc);
    return h;
}

/* Reveal as it plays (issue 21): at the start nothing of the run is drawn;
 * on a stop, the run up to and with that stop; stepping back hides again,
 * exactly (the same scene, command for command); show_all is the whole run. */
/* A zeroed viewstate (a page before its first good run) is the empty view:
 * over a real trace it reveals nothing, no stop is current, no question is
 * open, and every key is a harmless no-op. (Issue 22: cur and question used
 * to read 0 there, the first stop of no stops.) */
static void test_zeroed_reveals_nothing(void **state) {
    (void)state;
    struct engine *e = run_text(testutil_gc_story);
    const struct trace *tr = engine_trace(e);
    struct viewstate vs;
    memset(&vs, 0, sizeof vs);
    size_t nev = 99;
    sim_ns until = -5;
    viewstate_revealed(&vs, 0, tr, &nev, &until);
    assert_int_equal(nev, 0);
    assert_int_equal(until, 0);
    assert_int_equal(viewstate_cur(&vs), -1);
    assert_int_equal(viewstate_asking(&vs), -1);
    long from, to;
    viewstate_history(&vs, 4, &from, &to);
    assert_int_equal(to, -1);
    assert_int_equal(viewstate_step(&vs, 1), 0);
    assert_int_equal(viewstate_step(&vs, -1), 0);
    assert_int_equal(viewstate_reveal(&vs), -1);
    assert_int_equal(viewstate_next_violation(&vs), -1);
    viewstate_end(&vs);
    assert_int_equal(viewstate_cur(&vs), -1);
    vs.playing = 1;
    assert_int_equal(viewstate_play(&vs, 1.0), 0);
    viewstate_revealed(&vs, 0, tr, &nev, &until);
    assert_int_equal(nev, 0);
    viewstate_close(&vs);
    engine_free(e);
}

static void test_reveal_as_it_plays(void **state) {
    (void)state;
    struct engine *e = run_text(testutil_gc_story);
    const struct trace *tr = engine_trace(e);
    struct viewstate vs;
    assert_int_equal(viewstate_init(&vs, &tr, 1, 0), 0);
    size_t nev;
    sim_ns until;
    /* Step 0: before the first stop, no event is drawn, the timeline cut at 0. */
    viewstate_revealed(&vs, 0, tr, &nev, &until);
    assert_int_equal(nev, 0);
    assert_int_equal(until, 0);
    /* Step 1: on the pause at 5s: A holds (acquired at 0), nobody else; the
     * pause's own event is the last one drawn. */
    while (!cur_event(&vs, tr) || cur_event(&vs, tr)->kind != TRACE_PAUSE) viewstate_step(&vs, 1);
    viewstate_revealed(&vs, 0, tr, &nev, &until);
    assert_int_equal(until, 5 * S);
    assert_int_equal(nev, (size_t)vs.ev[viewstate_cur(&vs)].seq + 1);
    struct layout at_pause;
    revealed_layout(&vs, tr, &at_pause);
    assert_int_equal(marks_of(&at_pause, "A", LAYOUT_MARK_ACQUIRED), 1);
    assert_int_equal(marks_of(&at_pause, "B", LAYOUT_MARK_ACQUIRED), 0);
    assert_int_equal(at_pause.ndoubles, 0);
    uint64_t d_pause = scene_digest(&at_pause);
    /* Step 2: on A's late write at 32s: B's grant at 31s and the double
     * entry are drawn, and the double entry ends at the cursor, not later. */
    while (cur_event(&vs, tr)->kind != TRACE_STALE_WRITE) viewstate_step(&vs, 1);
    struct layout at_write;
    revealed_layout(&vs, tr, &at_write);
    assert_int_equal(marks_of(&at_write, "B", LAYOUT_MARK_ACQUIRED), 1);
    assert_int_equal(at_write.ndoubles, 1);
    assert_int_equal(at_write.doubles[0].t0, 31 * S);
    assert_int_equal(at_write.doubles[0].t1, 32 * S);
    assert_int_equal(at_write.t_end, 32 * S);
    /* Step 3: back to the pause: the same scene as before, exactly. */
    while (cur_event(&vs, tr)->kind != TRACE_PAUSE) viewstate_step(&vs, -1);
    struct layout again;
    revealed_layout(&vs, tr, &again);
    assert_true(scene_digest(&again) == d_pause);
    /* Step 4: show_all draws the whole run whatever the cursor. */
    vs.show_all = 1;
    viewstate_revealed(&vs, 0, tr, &nev, &until);
    assert_int_equal(nev, tr->len);
    assert_int_equal(until, -1);
    layout_close(&at_pause);
    layout_close(&at_write);
    layout_close(&again);
    viewstate_close(&vs);
    engine_free(e);
}

/* The quiz's veil: while the question before S1's grant at 31s is open,
 * the grant, B's acquisition and the double entry are not drawn (not a
 * sliver: no command of them is in the layout), and the banner says
 * "running"; revealed, they are. */
static void test_quiz_veil(void **state) {
    (void)state;
    struct engine *e = run_text(testutil_gc_story);
    const struct trace *tr = engine_trace(e);
    struct viewstate vs;
    assert_int_equal(viewstate_init(&vs, &tr, 1, 1), 0);
    vs.playing = 1;
    assert_int_equal(viewstate_play(&vs, 19.0), 1);
    const struct viewstate_event *q = &vs.ev[viewstate_asking(&vs)];
    assert_int_equal(tr->ev[q->seq].kind, TRACE_SRV_GRANT);
    struct layout veiled;
    revealed_layout(&vs, tr, &veiled);
    assert_int_equal(marks_of(&veiled, "S1", LAYOUT_MARK_GRANT), 1); /* A's at 0s only */
    assert_int_equal(marks_of(&veiled, "B", LAYOUT_MARK_ACQUIRED), 0);
    assert_int_equal(veiled.ndoubles, 0);
    assert_true(veiled.t_end <= 31 * S);
    struct scene_banner b = {.report = engine_report(e)};
    char why[400];
    size_t nev;
    sim_ns until;
    viewstate_revealed(&vs, 0, tr, &nev, &until);
    viewstate_banner(&b, why, sizeof why, tr, nev);
    assert_string_equal(b.status, "running");
    /* Revealed: the grant is drawn. */
    assert_int_equal(viewstate_reveal(&vs), 0);
    struct layout shown;
    revealed_layout(&vs, tr, &shown);
    assert_int_equal(marks_of(&shown, "S1", LAYOUT_MARK_GRANT), 2);
    layout_close(&veiled);
    layout_close(&shown);
    viewstate_close(&vs);
    engine_free(e);
}

/* Every event narrated, none skipped: three stops share 32s (A resumes, its
 * write is accepted, the checker calls it stale); stepping onto the last,
 * the history holds all three, in order, and the sentences the issue found
 * missing are there. */
static void test_narration_history(void **state) {
    (void)state;
    struct engine *e = run_text(testutil_gc_story);
    const struct trace *tr = engine_trace(e);
    struct viewstate vs;
    assert_int_equal(viewstate_init(&vs, &tr, 1, 0), 0);
    while (!cur_event(&vs, tr) || cur_event(&vs, tr)->kind != TRACE_STALE_WRITE) viewstate_step(&vs, 1);
    long from, to;
    viewstate_history(&vs, 3, &from, &to);
    assert_int_equal(to, viewstate_cur(&vs));
    assert_int_equal(from, viewstate_cur(&vs) - 2);
    char said[3][500];
    for (long k = from; k <= to; k++) {
        const struct trace_event *ev = &tr->ev[vs.ev[k].seq];
        assert_int_equal(ev->t, 32 * S);
        assert_int_equal(narrate_event(said[k - from], sizeof said[0], tr, ev), 0);
    }
    assert_non_null(strstr(said[0], "A resumes"));
    assert_non_null(strstr(said[2], "ACCEPTED"));
    /* Scrolled back one stop, the history ends one earlier; it cannot go
     * before the first stop, nor past the present. */
    viewstate_history_scroll(&vs, 1);
    viewstate_history(&vs, 3, &from, &to);
    assert_int_equal(to, viewstate_cur(&vs) - 1);
    viewstate_history_scroll(&vs, 1000);
    viewstate_history(&vs, 3, &from, &to);
    assert_int_equal(to, 0);
    viewstate_history_scroll(&vs, -1000);
    assert_int_equal(vs.narr_back, 0);
    viewstate_close(&vs);
    engine_free(e);
}

/* Times as the run's own resolution shows them, and the speed in words. */
static void test_human_times(void **state) {
    (void)state;
    struct viewstate vs;
    memset(&vs, 0, sizeof vs);
    char b[32];
    vs.tick_ns = 10 * 1000000LL; /* nothing finer than 10 ms matters */
    viewstate_time_text(b, sizeof b, &vs, 26648146015LL);
    assert_string_equal(b, "26.65s");
    viewstate_time_text(b, sizeof b, &vs, 30001000000LL); /* exact to the ms: exactly */
    assert_string_equal(b, "30.001s");
    viewstate_time_text(b, sizeof b, &vs, 31 * S);
    assert_string_equal(b, "31s");
    viewstate_time_text(b, sizeof b, &vs, 29999999999LL); /* rounds up into the next second */
    assert_string_equal(b, "30.00s");
    vs.tick_ns = 1000; /* a run whose events are 10 us apart */
    viewstate_time_text(b, sizeof b, &vs, 1000012345LL);
    assert_string_equal(b, "1.000012s");
    /* The seed's story: its stops are whole seconds and 30.001s, at least
     * 999 ms apart: times finer than the ms would round to 10 ms. */
    struct engine *e = run_text(testutil_gc_story);
    const struct trace *tr = engine_trace(e);
    assert_int_equal(viewstate_init(&vs, &tr, 1, 0), 0);
    assert_int_equal(vs.tick_ns, 10000000);
    /* 60 s in 20 s of wall time: 3 s of the run per second. */
    viewstate_speed_text(b, sizeof b, &vs);
    assert_string_equal(b, "3 s/s");
    vs.speed = -5;
    viewstate_speed_text(b, sizeof b, &vs);
    assert_string_equal(b, "93.8 ms/s");
    viewstate_close(&vs);
    engine_free(e);
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_step_forward_and_back),
            cmocka_unit_test(test_quiz_stops),
            cmocka_unit_test(test_quiz_late_write_ordered),
            cmocka_unit_test(test_next_violation_one_ns),
            cmocka_unit_test(test_zoom_pan_fit),
            cmocka_unit_test(test_play_and_reload),
            cmocka_unit_test(test_hit),
            cmocka_unit_test(test_zeroed_reveals_nothing),
            cmocka_unit_test(test_reveal_as_it_plays),
            cmocka_unit_test(test_quiz_veil),
            cmocka_unit_test(test_narration_history),
            cmocka_unit_test(test_human_times),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
