/* Tests of render/scene: the draw commands for a known trace, in the
 * terminal's units and in pixels; the lane order, the annotation policy, the
 * winning mark of a shared cell, the legend, and a zoomed window.
 * The story: A holds token 7 (a 10 s lease), pauses at 2 s, its lease
 * expires on S1 at 10 s, B acquires token 8 at 11 s and writes at 11.5 s, A
 * resumes at 12 s and writes with token 7, B releases at 14 s, the run ends
 * at 15 s. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "error.h"
#include "layout.h"
#include "scene.h"
#include "svg.h"
#include "term.h"
#include "trace.h"
#include "viewstate.h"

#include "fixture_trace.h"

#define S SIM_NS_PER_S
#define MS SIM_NS_PER_MS

static void story(struct trace *tr, int fenced) {
    seed_nodes(tr);
    ev(tr, 0, TRACE_RUN_START, NO, NO, 0, 0, 1, 15 * S, NULL);
    ev(tr, 0, TRACE_RESOURCE_INIT, R, NO, 0, 0, 5, fenced, NULL);
    /* t=0: A acquires token 7 for 10 s. */
    ev(tr, 0, TRACE_ACQUIRE_START, A, NO, 0, 0, 0, 0, NULL);
    ev(tr, 0, TRACE_SRV_GRANT, S1, A, 7, 1, 10 * S, 10 * S, NULL);
    ev(tr, 0, TRACE_ACQUIRED, A, NO, 7, 1, 10 * S, 0, NULL);
    /* t=2: A pauses; t=10: its lease expires. */
    ev(tr, 2 * S, TRACE_PAUSE, A, NO, 0, 0, 0, 0, NULL);
    ev(tr, 10 * S, TRACE_SRV_EXPIRE, S1, A, 0, 1, 0, 0, NULL);
    /* t=11: B acquires token 8; two in the critical section. */
    ev(tr, 11 * S, TRACE_ACQUIRE_START, B, NO, 0, 0, 0, 0, NULL);
    ev(tr, 11 * S, TRACE_SRV_GRANT, S1, B, 8, 2, 10 * S, 21 * S, NULL);
    ev(tr, 11 * S, TRACE_ACQUIRED, B, NO, 8, 2, 10 * S, 0, NULL);
    ev(tr, 11 * S, TRACE_DOUBLE_ENTRY_BEGIN, B, A, 0, 0, 0, 0, NULL);
    ev(tr, 11 * S + 500 * MS, TRACE_WRITE, R, B, 8, 2, 4, TRACE_WRITE_ACCEPTED, NULL);
    /* t=12: A resumes and writes with token 7. */
    ev(tr, 12 * S, TRACE_RESUME, A, NO, 0, 0, 10 * S, 0, NULL);
    ev(tr, 12 * S, TRACE_WRITE, R, A, 7, 1, 4, fenced ? TRACE_WRITE_REJECTED_STALE : TRACE_WRITE_ACCEPTED, NULL);
    ev(tr, 12 * S, TRACE_STALE_WRITE, A, NO, 7, 1, !fenced, 0, NULL);
    ev(tr, 12 * S, TRACE_CS_EXIT, A, NO, 0, 0, TRACE_EXIT_RELEASE, 0, NULL);
    ev(tr, 12 * S, TRACE_DOUBLE_ENTRY_END, B, A, 0, 0, 1 * S, 0, NULL);
    /* t=14: B releases. t=15: the end. */
    ev(tr, 14 * S, TRACE_CS_EXIT, B, NO, 0, 0, TRACE_EXIT_RELEASE, 0, NULL);
    ev(tr, 14 * S, TRACE_SRV_DELETE, S1, B, 0, 2, B, 0, NULL);
    ev(tr, 15 * S, TRACE_RUN_END, NO, NO, 0, 0, 20, 0, NULL);
}

/* The nth (from 1) command of a type (and style, -1 = any) in a lane (-2 = any). */
static const struct scene_cmd *cmd(const struct scene *sc, int type, int style, int lane, int nth) {
    for (size_t i = 0; i < sc->ncmd; i++) {
        const struct scene_cmd *k = &sc->cmd[i];
        if (k->type == type && (style < 0 || k->style == style) && (lane == -2 || k->lane == lane) && --nth == 0)
            return k;
    }
    return NULL;
}

/* The text command whose text is s, or NULL. */
static const struct scene_cmd *text(const struct scene *sc, const char *s) {
    for (size_t i = 0; i < sc->ncmd; i++)
        if (sc->cmd[i].type == SCENE_CMD_TEXT && strcmp(sc->cmd[i].text, s) == 0) return &sc->cmd[i];
    return NULL;
}

/* The symbol command for sym in a lane, or NULL. */
static const struct scene_cmd *sym(const struct scene *sc, int s, int lane) {
    for (size_t i = 0; i < sc->ncmd; i++)
        if (sc->cmd[i].type == SCENE_CMD_SYM && sc->cmd[i].sym == s && sc->cmd[i].lane == lane) return &sc->cmd[i];
    return NULL;
}

/* The story laid out, in the terminal's view at 100 columns (adjust f->v
 * before fx_build). */
struct fx {
    struct trace tr;
    struct layout ly;
    struct scene sc;
    struct scene_view v;
};

static void fx_open(struct fx *f, int fenced) {
    memset(f, 0, sizeof *f);
    story(&f->tr, fenced);
    assert_int_equal(layout_build(&f->ly, &f->tr), 0);
    scene_view_term(&f->v, 100, 1);
}

static void fx_build(struct fx *f) { assert_int_equal(scene_build(&f->sc, &f->ly, &f->v, NULL, 0), 0); }

static void fx_close(struct fx *f) {
    scene_close(&f->sc);
    layout_close(&f->ly);
    trace_close(&f->tr);
}

/* The terminal's grid: one unit per character, the whole run. */
static void test_scene_term_positions(void **state) {
    (void)state;
    struct fx f;
    fx_open(&f, 1);
    fx_build(&f);

    /* The axis: labels "DOUBLE ENTRY" wide plus a space; 87 columns for
     * 15 s give 200 ms a cell (76 cells) and a tick every 2 s. */
    assert_int_equal(f.sc.plot_x, 13);
    assert_int_equal(f.sc.axis.cell_ns, 200 * MS);
    assert_int_equal(f.sc.axis.ncells, 76);
    assert_int_equal(f.sc.axis.tick_ns, 2 * S);
    const struct scene_cmd *k = text(&f.sc, "time");
    assert_non_null(k);
    assert_int_equal(k->x, 0);
    assert_int_equal(k->y, 0);
    k = text(&f.sc, "10s");
    assert_non_null(k);
    assert_int_equal(k->x, 13 + 50);
    assert_int_equal(k->style, SCENE_ST_AXIS);

    /* Lanes in order: A, B at rows 2, 3, the double-entry row, then S1, R. */
    assert_int_equal(text(&f.sc, "A")->y, 2);
    assert_int_equal(text(&f.sc, "B")->y, 3);
    assert_int_equal(text(&f.sc, "DOUBLE ENTRY")->y, 4);
    assert_int_equal(text(&f.sc, "DOUBLE ENTRY")->style, SCENE_ST_ALERT);
    assert_int_equal(text(&f.sc, "S1")->y, 6); /* after one line about the double entry */
    assert_int_equal(text(&f.sc, "R")->y, 7);
    assert_int_equal(text(&f.sc, "A")->style, SCENE_ST_LABEL);

    /* A: holding 0..2 s (10 cells, the first one under its '+'), paused
     * holding 2..12 s. */
    k = cmd(&f.sc, SCENE_CMD_RECT, SCENE_ST_HOLDING, A, 1);
    assert_non_null(k);
    assert_int_equal(k->x, 13);
    assert_int_equal(k->w, 10);
    assert_int_equal(k->sym, SCENE_SYM_HOLDING);
    k = cmd(&f.sc, SCENE_CMD_RECT, SCENE_ST_PAUSED_HOLDING, A, 1);
    assert_non_null(k);
    assert_int_equal(k->x, 13 + 10);
    assert_int_equal(k->w, 50);
    k = sym(&f.sc, SCENE_SYM_ACQUIRED, A);
    assert_non_null(k);
    assert_int_equal(k->x, 13);
    assert_int_equal(k->style, SCENE_ST_MARK_OK);

    /* The double entry 11..12 s: five cells at 55. */
    k = cmd(&f.sc, SCENE_CMD_RECT, SCENE_ST_DOUBLE, -1, 1);
    assert_non_null(k);
    assert_int_equal(k->x, 13 + 55);
    assert_int_equal(k->w, 5);
    assert_int_equal(k->y, 4);
    assert_non_null(text(&f.sc, "^ 11s..12s  A and B both in the critical section (1s)"));

    /* The resource: both writes drawn and listed (few writes: all get a
     * line); the stale one is the save, in its own style. */
    k = sym(&f.sc, SCENE_SYM_WRITE_REJECTED, R);
    assert_non_null(k);
    assert_int_equal(k->x, 13 + 60);
    assert_int_equal(k->style, SCENE_ST_WRITE_REJECTED);
    assert_int_equal(k->t0, 12 * S);
    k = text(&f.sc, "w t=12s  A write tok 7 value 4 REJECTED: stale, 8 already seen");
    assert_non_null(k);
    assert_int_equal(k->style, SCENE_ST_WRITE_REJECTED);
    assert_int_equal(k->y, 9);
    assert_non_null(text(&f.sc, "W t=11.5s  B write tok 8 value 4 accepted"));

    /* S1 at 11 s: the expiry at 10 s and B's grant at 11 s are apart; the
     * lease is drawn as '-' runs. */
    assert_non_null(sym(&f.sc, SCENE_SYM_EXPIRE, S1));
    assert_int_equal(sym(&f.sc, SCENE_SYM_GRANT, S1)->x, 13);

    /* The legend lists the symbols drawn, fills first; no pixel detail and
     * no tooltips in the terminal. */
    assert_non_null(text(&f.sc, "legend: 1 column = 200ms of true time"));
    assert_non_null(text(&f.sc, "two in the critical section at once"));
    assert_null(text(&f.sc, "acquiring: waiting for the lock")); /* hidden under '+' marks */
    for (size_t i = 0; i < f.sc.ncmd; i++) {
        assert_int_equal(f.sc.cmd[i].layer, SCENE_LAYER_MAIN);
        if (f.sc.cmd[i].type == SCENE_CMD_SYM) assert_null(f.sc.cmd[i].text);
    }
    fx_close(&f);
}

/* Without fencing, the stale write is the damage: its own style on the
 * symbol and on its line. A shared cell goes to the higher priority: the
 * release 'r' and the write 'W' at 12 s on different lanes, but on R the
 * write (82) beats nothing, and on A the release (60) is drawn. */
static void test_scene_stale_write_and_priority(void **state) {
    (void)state;
    struct fx f;
    fx_open(&f, 0);
    fx_build(&f);
    const struct scene_cmd *k = sym(&f.sc, SCENE_SYM_WRITE_OK, R);
    assert_non_null(k);
    assert_int_equal(k->t0, 11 * S + 500 * MS); /* B's, first */
    assert_int_equal(k->style, SCENE_ST_MARK_NOTE);
    k = cmd(&f.sc, SCENE_CMD_SYM, SCENE_ST_STALE_WRITE, R, 1);
    assert_non_null(k);
    assert_int_equal(k->t0, 12 * S);
    k = text(&f.sc, "W t=12s  A write tok 7 value 4 ACCEPTED though stale: B holds the lock");
    assert_non_null(k);
    assert_int_equal(k->style, SCENE_ST_STALE_WRITE);
    assert_int_equal(sym(&f.sc, SCENE_SYM_RELEASE, A)->x, 13 + 60);
    /* B's '+' at 11 s wins its cell over the acquiring fill under it. */
    assert_int_equal(sym(&f.sc, SCENE_SYM_ACQUIRED, B)->x, 13 + 55);
    fx_close(&f);
}

/* Zoom: 10.5 s .. 12.5 s. The axis is fitted to the window, marks outside it
 * are gone, intervals are cut at its edges, ticks start inside it. */
static void test_scene_window(void **state) {
    (void)state;
    struct fx f;
    fx_open(&f, 1);
    f.v.t0 = 10 * S + 500 * MS;
    f.v.t1 = 12 * S + 500 * MS;
    fx_build(&f);
    assert_int_equal(f.sc.t0, f.v.t0);
    assert_int_equal(f.sc.axis.cell_ns, 50 * MS); /* 2 s in 87 columns: 41 cells */
    assert_int_equal(f.sc.axis.ncells, 41);
    /* Ticks every 500 ms from the window's left edge: 11 s is ten cells in. */
    const struct scene_cmd *k = text(&f.sc, "11s");
    assert_non_null(k);
    assert_int_equal(k->x, 13 + 10);
    assert_int_equal(f.sc.axis.tick_ns, 500 * MS);
    assert_int_equal(text(&f.sc, "10.5s")->x, 13);
    assert_null(text(&f.sc, "10s"));
    /* A's acquire at 0 is outside; A's paused holding runs from the left
     * edge to 12 s; B acquires at 11 s (cell 10). */
    assert_null(sym(&f.sc, SCENE_SYM_ACQUIRED, A));
    k = cmd(&f.sc, SCENE_CMD_RECT, SCENE_ST_PAUSED_HOLDING, A, 1);
    assert_non_null(k);
    assert_int_equal(k->x, 13);
    assert_int_equal(k->w, 30);
    assert_int_equal(sym(&f.sc, SCENE_SYM_ACQUIRED, B)->x, 13 + 10);
    /* The double entry 11..12 s: cells 10..29. */
    k = cmd(&f.sc, SCENE_CMD_RECT, SCENE_ST_DOUBLE, -1, 1);
    assert_int_equal(k->x, 13 + 10);
    assert_int_equal(k->w, 20);
    /* The expiry at 10 s is left of the window. */
    assert_null(sym(&f.sc, SCENE_SYM_EXPIRE, S1));
    assert_non_null(text(&f.sc, "legend: 1 column = 50ms of true time"));

    /* The terminal draws the same window: B's '+' ten columns in. */
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    struct term_opts o = {.width = 100, .color = 0, .legend = 0, .t0 = f.v.t0, .t1 = f.v.t1};
    assert_int_equal(term_render(out, &f.tr, &o), 0);
    fclose(out);
    assert_non_null(strstr(buf, "\nB                      +==================="));
    assert_non_null(strstr(buf, "\nA            ##############################r"));
    free(buf);
    fx_close(&f);
}

/* A compressed axis in the terminal: nothing happens from 2 s to 10 s, so
 * that stretch less 15 s / 40 at each end becomes a gap of five columns
 * marked with its length; the rest gets 100 ms a column, and the 1 s double
 * entry is ten columns wide instead of five. */
static void test_scene_compressed(void **state) {
    (void)state;
    struct fx f;
    fx_open(&f, 1);
    f.v.compressed = 1;
    fx_build(&f);
    assert_int_equal(f.sc.ngaps, 1);
    assert_int_equal(f.sc.axis.cell_ns, 100 * MS);
    /* cut to whole cells (7.25 s to 7.2 s), so later cells stay round */
    assert_int_equal(f.sc.gaps[0].t0, 2 * S + 375 * MS);
    assert_int_equal(f.sc.gaps[0].t1, 9 * S + 575 * MS);
    assert_int_equal(f.sc.gaps[0].ncells, 5);
    const struct scene_cmd *k = text(&f.sc, "<7.2s>");
    assert_non_null(k);
    assert_int_equal(k->style, SCENE_ST_GAP);
    assert_int_equal(k->y, 1); /* in the tick row */
    /* After the gap, the time it took out is taken off and its cells (and
     * the one its end starts) put in: 10 s - 7.2 s = 2.8 s, cell 28 + 6. */
    assert_int_equal(scene_cell_of(&f.sc, 10 * S), 28 + 6);
    assert_int_equal(text(&f.sc, "10s")->x, 13 + 34);
    k = cmd(&f.sc, SCENE_CMD_RECT, SCENE_ST_DOUBLE, -1, 1);
    assert_int_equal(k->w, 10);
    /* A's paused critical section runs through the gap. */
    k = cmd(&f.sc, SCENE_CMD_RECT, SCENE_ST_PAUSED_HOLDING, A, 1);
    assert_true(k->x < 13 + f.sc.gaps[0].c0 && k->x + k->w > 13 + f.sc.gaps[0].c0 + 5);
    assert_non_null(text(&f.sc, "<~N> on the axis: a stretch of about N with no event, drawn short"));
    fx_close(&f);
}

/* Pixels: every unit a pixel; bands behind the lanes, TTL bars, token
 * labels and tooltips in the extra layer; the banner on top. */
static void test_scene_pixels(void **state) {
    (void)state;
    struct fx f;
    fx_open(&f, 1);
    scene_view_pixels(&f.v, 1280, 720);
    struct checker_report rep;
    memset(&rep, 0, sizeof rep);
    rep.verdict = SCN_VERDICT_SAFE;
    struct scene_banner b = {.title = "Story",
                             .algo = "fenced-lease",
                             .seed = "1",
                             .replay = "locksim run story.lsim --seed 1",
                             .report = &rep};
    assert_int_equal(scene_build(&f.sc, &f.ly, &f.v, &b, 0), 0);
    /* Layers in order. */
    for (size_t i = 1; i < f.sc.ncmd; i++) assert_true(f.sc.cmd[i - 1].layer <= f.sc.cmd[i].layer);
    /* The banner: the title at the top left, the verdict in its style. */
    const struct scene_cmd *k = text(&f.sc, "Story");
    assert_int_equal(k->x, 16);
    assert_int_equal(k->y, 16);
    assert_int_equal(k->style, SCENE_ST_TITLE);
    assert_int_equal(text(&f.sc, "SAFE")->style, SCENE_ST_SAFE);
    assert_non_null(text(&f.sc, "replay: locksim run story.lsim --seed 1"));
    /* The band: behind, from A's lane top to the end of the double row. */
    k = cmd(&f.sc, SCENE_CMD_RECT, SCENE_ST_BAND, -1, 1);
    assert_int_equal(k->layer, SCENE_LAYER_BACK);
    assert_int_equal(k->y, text(&f.sc, "A")->y - (f.v.lane_h - f.v.line_h) / 2);
    assert_int_equal(k->h, 3 * f.v.lane_h); /* not over the lines that list the double entries */
    assert_int_equal(k->x, scene_x_of(&f.sc, 11 * S));
    /* Token labels: A's critical section, whose lease S1 holds; the writes'
     * badges carry their tokens, the rejected one in the save's style. */
    assert_int_equal(text(&f.sc, "tok 7")->layer, SCENE_LAYER_EXTRA);
    assert_non_null(text(&f.sc, "held by A, tok 7"));
    k = sym(&f.sc, SCENE_SYM_WRITE_REJECTED, R);
    assert_string_equal(k->label, "7");
    assert_int_equal(k->style, SCENE_ST_WRITE_REJECTED);
    assert_int_equal(k->x2, scene_x_of(&f.sc, 12 * S));
    assert_string_equal(sym(&f.sc, SCENE_SYM_WRITE_OK, R)->label, "8");
    /* The axis fills the width: 1280 - 2 x 16 margin - 13 label chars x 11. */
    assert_int_equal(f.sc.plot_x, 16 + 13 * 11);
    assert_true(f.sc.plot_w > 1080 && f.sc.plot_w <= 1280 - 16 - f.sc.plot_x);
    /* The axis is compressed: nothing happens from 2 s to 10 s, so that
     * stretch (less a fortieth of the window, 14.7 s, at each side) is a gap
     * labelled with its length, and ticks every second fit the rest. */
    assert_int_equal(f.sc.ngaps, 1);
    const struct scene_gap *g = &f.sc.gaps[0];
    assert_int_equal(g->t0, 2 * S + 14700 * MS / 40);
    assert_true(g->t1 <= 10 * S - 14700 * MS / 40 && g->t1 > 10 * S - 14700 * MS / 40 - f.sc.axis.cell_ns);
    assert_int_equal((g->t1 - g->t0) % f.sc.axis.cell_ns, 0);
    assert_non_null(text(&f.sc, "<~7.3s>"));
    assert_int_equal(f.sc.axis.tick_ns, 1 * S);
    assert_true(scene_x_of(&f.sc, 10 * S) - scene_x_of(&f.sc, 2 * S) < 6 * 11 + 11 * 2 * f.v.char_w);
    /* The TTL bar of A's lease: full at 0, empty at 10 s. */
    k = NULL;
    for (size_t i = 0; i < f.sc.ncmd; i++)
        if (f.sc.cmd[i].type == SCENE_CMD_RECT && f.sc.cmd[i].lane == S1 && f.sc.cmd[i].frac1 < 1000) {
            k = &f.sc.cmd[i];
            break;
        }
    assert_non_null(k);
    assert_int_equal(k->frac0, 1000);
    assert_int_equal(k->frac1, 0);
    assert_int_equal(k->t1, 10 * S);
    /* A tooltip. */
    assert_string_equal(sym(&f.sc, SCENE_SYM_ACQUIRED, B)->text, "B acquires, token 8, t=11s");
    assert_string_equal(sym(&f.sc, SCENE_SYM_WRITE_REJECTED, R)->text, "R rejects A's write, token 7, t=12s");
    fx_close(&f);
}

/* Hidden lanes, a view too narrow, and failing allocations. */
static void test_scene_hide_and_errors(void **state) {
    (void)state;
    struct fx f;
    fx_open(&f, 1);
    f.v.flags = 0;
    f.v.hide = 1u << S1;
    fx_build(&f);
    assert_null(text(&f.sc, "S1"));
    assert_int_equal(text(&f.sc, "R")->y, 6);
    scene_close(&f.sc);
    f.v.width = 10;
    assert_int_equal(scene_build(&f.sc, &f.ly, &f.v, NULL, 0), LSIM_EBAD_VALUE);
    scene_close(&f.sc);
#if FAULTS
    if (faults_work()) {
        scene_view_pixels(&f.v, 1280, 720);
        int ok = 0;
        for (long n = 0; n < 40 && !ok; n++) {
            long before = live;
            fail_after = n;
            int rc = scene_build(&f.sc, &f.ly, &f.v, NULL, 0);
            fail_after = -1;
            assert_true(rc == 0 || rc == LSIM_ENOMEM);
            ok = rc == 0;
            scene_close(&f.sc);
            assert_int_equal(live, before);
        }
        assert_true(ok);
    }
#endif
    fx_close(&f);
}

/* SVG from the same scene: every allocation failing in turn gives
 * LSIM_ENOMEM and leaks nothing; a write error gives LSIM_EOUTPUT. */
static void test_svg_faults(void **state) {
    (void)state;
    struct fx f;
    fx_open(&f, 1);
    scene_view_pixels(&f.v, 1280, 720);
    const struct trace *trs[2] = {&f.tr, &f.tr};
    static char iobuf[1 << 16];
    FILE *devnull = fopen("/dev/null", "w");
    assert_non_null(devnull);
    setvbuf(devnull, iobuf, _IOFBF, sizeof iobuf);
    fputc('x', devnull);
    assert_int_equal(svg_render_panels(devnull, trs, 2, NULL, &f.v), 0);
#if FAULTS
    if (faults_work()) {
        int ok = 0;
        for (long n = 0; n < 400 && !ok; n++) { /* up to three builds: a picture fitted to its height */
            long before = live;
            fail_after = n;
            int rc = svg_render_panels(devnull, trs, 2, NULL, &f.v);
            fail_after = -1;
            assert_true(rc == 0 || rc == LSIM_ENOMEM);
            ok = rc == 0;
            assert_int_equal(live, before);
        }
        assert_true(ok);
    }
#endif
    fclose(devnull);
    FILE *full = fopen("/dev/full", "w");
    if (full) {
        setvbuf(full, NULL, _IONBF, 0);
        assert_int_equal(svg_render(full, &f.tr, NULL, &f.v), LSIM_EOUTPUT);
        fclose(full);
    }
    fx_close(&f);
}

/* The pictures' newer detail: a server's clock that steps +25 s at 5 s and
 * drifts 200 ppm from 8 s, drawn in a lane of its own under S1; a replica
 * S2 that copies A's grant 1 s after S1 made it; B's request to S1 dropped
 * by a partition; the value read and the token acquired on their badges;
 * and a banner too wide for a narrow picture, wrapped. */
static void clock_story(struct trace *tr) {
    seed_nodes(tr);
    assert_int_equal(trace_add_node(tr, "S2", TRACE_NODE_SERVER), 4);
    ev(tr, 0, TRACE_RUN_START, NO, NO, 0, 0, 1, 20 * S, NULL);
    /* t=0: A takes token 41 from S1 and reads 3. */
    ev(tr, 0, TRACE_ACQUIRE_START, A, NO, 0, 0, 0, 0, NULL);
    ev(tr, 0, TRACE_SRV_GRANT, S1, A, 41, 1, 30 * S, 30 * S, NULL);
    ev(tr, 0, TRACE_ACQUIRED, A, NO, 41, 1, 30 * S, 0, NULL);
    ev(tr, 0, TRACE_READ, R, A, 0, 1, 3, 0, NULL);
    /* t=1: the replica copies the grant (a = owner, b = token). */
    ev(tr, 1 * S, TRACE_SRV_NOTE, 4, NO, 0, 0, A, 41, "replica: copies a grant from the primary");
    /* t=2: B's request to S1 is lost to a partition. */
    ev(tr, 2 * S, TRACE_MSG_SEND, B, S1, 0, 0, 1, 1, NULL);
    ev(tr, 2 * S, TRACE_MSG_DROP, S1, B, 0, 0, 1, TRACE_DROP_PARTITION, NULL);
    ev(tr, 2 * S, TRACE_MSG_SEND, B, 4, 0, 0, 2, 1, NULL); /* and to S2: one arrow for both */
    ev(tr, 2 * S, TRACE_MSG_DROP, 4, B, 0, 0, 2, TRACE_DROP_PARTITION, NULL);
    /* t=5: S1's wall clock steps 25 s ahead; t=8: it drifts 200 ppm fast. */
    ev(tr, 5 * S, TRACE_CLOCK_STEP, S1, NO, 0, 0, 25 * S, 1, NULL);
    ev(tr, 8 * S, TRACE_CLOCK_DRIFT, S1, NO, 0, 0, 200, 0, NULL);
    ev(tr, 20 * S, TRACE_RUN_END, NO, NO, 0, 0, 12, 0, NULL);
}

/* Leadership of a replicated lock service, from the servers' notes
 * (lock.h, LOCK_NOTE_LEADER / LOCK_NOTE_STEPS_DOWN): S1 leads term 1 from
 * 1s and steps down at 4s; S2 leads term 2 from 5s until it crashes at 8s;
 * S1 leads term 3 from 9s to the end (S2's note at 15s, as it restarts, is
 * neither and changes nothing). A band along the top of the leader's
 * lane, its term at its right end, a legend line; nothing in the terminal. */
static void test_scene_leader_bands(void **state) {
    (void)state;
    struct trace tr;
    struct layout ly;
    struct scene sc;
    struct scene_view v;
    seed_nodes(&tr);
    assert_int_equal(trace_add_node(&tr, "S2", TRACE_NODE_SERVER), 4);
    ev(&tr, 0, TRACE_RUN_START, NO, NO, 0, 0, 1, 20 * S, NULL);
    ev(&tr, 1 * S, TRACE_SRV_NOTE, S1, NO, 0, 0, 1, 3, LOCK_NOTE_LEADER ", term 1");
    ev(&tr, 4 * S, TRACE_SRV_NOTE, S1, NO, 0, 0, 1, 2, LOCK_NOTE_STEPS_DOWN ": a newer term exists");
    ev(&tr, 5 * S, TRACE_SRV_NOTE, 4, NO, 0, 0, 2, 3, LOCK_NOTE_LEADER ", term 2");
    ev(&tr, 8 * S, TRACE_CRASH, 4, NO, 0, 0, 0, 0, NULL);
    ev(&tr, 9 * S, TRACE_SRV_NOTE, S1, NO, 0, 0, 3, 2, LOCK_NOTE_LEADER ", term 3");
    ev(&tr, 15 * S, TRACE_SRV_NOTE, 4, NO, 0, 0, 0, 0, "restarts"); /* a note that is neither */
    ev(&tr, 15 * S, TRACE_RESTART, 4, NO, 0, 0, 0, 0, NULL);
    ev(&tr, 20 * S, TRACE_RUN_END, NO, NO, 0, 0, 9, 0, NULL);
    assert_int_equal(layout_build(&ly, &tr), 0);
    const struct layout_lane *s1 = &ly.lanes[S1], *s2 = &ly.lanes[4];
    assert_int_equal(s1->nspans, 2);
    assert_int_equal(s1->spans[0].kind, LAYOUT_SPAN_LEADER);
    assert_int_equal(s1->spans[0].t0, 1 * S);
    assert_int_equal(s1->spans[0].t1, 4 * S);
    assert_int_equal(s1->spans[0].token, 1);
    assert_int_equal(s1->spans[1].t0, 9 * S);
    assert_int_equal(s1->spans[1].t1, 20 * S);
    assert_int_equal(s1->spans[1].end, LAYOUT_END_OPEN);
    assert_int_equal(s1->spans[1].token, 3);
    const struct layout_span *led = NULL;
    for (size_t i = 0; i < s2->nspans; i++)
        if (s2->spans[i].kind == LAYOUT_SPAN_LEADER) led = &s2->spans[i];
    assert_non_null(led);
    assert_int_equal(led->t0, 5 * S);
    assert_int_equal(led->t1, 8 * S);
    assert_int_equal(led->end, LAYOUT_END_CRASH);

    scene_view_pixels(&v, 1280, 0);
    v.compressed = 0;
    assert_int_equal(scene_build(&sc, &ly, &v, NULL, 0), 0);
    int bands = 0;
    for (size_t i = 0; i < sc.ncmd; i++) {
        const struct scene_cmd *k = &sc.cmd[i];
        if (k->type != SCENE_CMD_RECT || k->style != SCENE_ST_LEADER || k->lane < 0) continue;
        bands++;
        if (k->lane == 4) { /* S2's: 5s to its crash at 8s, at the lane's top */
            assert_int_equal(k->x, scene_x_of(&sc, 5 * S));
            assert_true(k->x + k->w >= scene_x_of(&sc, 8 * S) && k->x + k->w <= scene_x_of(&sc, 8 * S) + v.cell_w);
        }
    }
    assert_int_equal(bands, 3);
    const struct scene_cmd *k = text(&sc, "leader, term 3");
    assert_non_null(k);
    assert_int_equal(k->style, SCENE_ST_LEADER);
    assert_int_equal(k->lane, S1);
    assert_non_null(text(&sc, "leader, term 2"));
    assert_non_null(text(&sc, "leader of the lock service, and its term"));
    scene_close(&sc);
    /* The terminal draws no band: its cells are the lanes' symbols. */
    scene_view_term(&v, 100, 1);
    assert_int_equal(scene_build(&sc, &ly, &v, NULL, 0), 0);
    for (size_t i = 0; i < sc.ncmd; i++) assert_int_not_equal(sc.cmd[i].style, SCENE_ST_LEADER);
    scene_close(&sc);
    layout_close(&ly);
    trace_close(&tr);
}

/* A lock-delay (Chubby's), from the server's notes (lock.h,
 * LOCK_NOTE_LOCK_DELAY / _OVER): S1 withholds A's lock from 2s to 17s, a
 * hatched band through the lane with its length; an "over" note is not
 * read as a new lock-delay although it starts alike. */
static void test_scene_lock_delay_band(void **state) {
    (void)state;
    struct trace tr;
    struct layout ly;
    struct scene sc;
    struct scene_view v;
    seed_nodes(&tr);
    ev(&tr, 0, TRACE_RUN_START, NO, NO, 0, 0, 1, 30 * S, NULL);
    ev(&tr, 2 * S, TRACE_SRV_NOTE, S1, NO, 0, 0, 15 * S, 1, LOCK_NOTE_LOCK_DELAY " withheld");
    ev(&tr, 17 * S, TRACE_SRV_NOTE, S1, NO, 0, 0, 1, 0, LOCK_NOTE_LOCK_DELAY_OVER ": granted again");
    ev(&tr, 20 * S, TRACE_CRASH, A, NO, 0, 0, 0, 0, NULL);
    ev(&tr, 30 * S, TRACE_RUN_END, NO, NO, 0, 0, 4, 0, NULL);
    assert_int_equal(layout_build(&ly, &tr), 0);
    const struct layout_lane *s1 = &ly.lanes[S1];
    assert_int_equal(s1->nspans, 1);
    assert_int_equal(s1->spans[0].kind, LAYOUT_SPAN_LOCK_DELAY);
    assert_int_equal(s1->spans[0].t0, 2 * S);
    assert_int_equal(s1->spans[0].t1, 17 * S);
    assert_int_equal(s1->spans[0].end, LAYOUT_END_EXPIRED);
    assert_int_equal(s1->spans[0].validity_ns, 15 * S);
    scene_view_pixels(&v, 1280, 0);
    v.compressed = 0;
    assert_int_equal(scene_build(&sc, &ly, &v, NULL, 0), 0);
    int bands = 0;
    for (size_t i = 0; i < sc.ncmd; i++) {
        const struct scene_cmd *k = &sc.cmd[i];
        if (k->type != SCENE_CMD_RECT || k->style != SCENE_ST_LOCK_DELAY || k->lane != S1) continue;
        bands++;
        assert_int_equal(k->x, scene_x_of(&sc, 2 * S));
    }
    assert_int_equal(bands, 1);
    assert_int_equal(text(&sc, "lock-delay 15s")->lane, S1);
    assert_non_null(text(&sc, "lock-delay: the lock withheld after its holder failed"));
    scene_close(&sc);
    layout_close(&ly);
    trace_close(&tr);
}

/* A replica promoted while the old primary's grant never reached it: the
 * promotion's mark names the lock it lacks, and a line under its lane says
 * so in words; a grant the replica copied, or one whose TTL had run out at
 * the crash, is not lacked. */
static int promotion_lacks(sim_ns copy_at, sim_ns ttl, int *peer, uint64_t *token) {
    struct trace tr;
    struct layout ly;
    seed_nodes(&tr);
    assert_int_equal(trace_add_node(&tr, "S2", TRACE_NODE_SERVER), 4);
    ev(&tr, 0, TRACE_RUN_START, NO, NO, 0, 0, 1, 20 * S, NULL);
    ev(&tr, 0, TRACE_SRV_GRANT, S1, A, 41, 1, ttl, ttl, NULL);
    if (copy_at >= 0) ev(&tr, copy_at, TRACE_SRV_NOTE, 4, NO, 0, 0, A, 41, "replica: copies a grant from the primary");
    ev(&tr, 1 * S, TRACE_CRASH, S1, NO, 0, 0, 0, 0, NULL);
    ev(&tr, 2 * S, TRACE_CONTROL, 4, NO, 0, 0, LOCK_CONTROL_PROMOTE, 0, NULL);
    ev(&tr, 20 * S, TRACE_RUN_END, NO, NO, 0, 0, 5, 0, NULL);
    assert_int_equal(layout_build(&ly, &tr), 0);
    const struct layout_mark *m = NULL;
    for (size_t i = 0; i < ly.lanes[4].nmarks; i++)
        if (ly.lanes[4].marks[i].kind == LAYOUT_MARK_CONTROL) m = &ly.lanes[4].marks[i];
    assert_non_null(m);
    int lacks = m->value == 1;
    *peer = m->peer;
    *token = m->token;
    if (lacks) { /* the words, under S2's lane, in the terminal */
        struct scene sc;
        struct scene_view v;
        scene_view_term(&v, 100, 0);
        assert_int_equal(scene_build(&sc, &ly, &v, NULL, 0), 0);
        assert_non_null(text(&sc, "@ t=2s  S2 promoted to primary without A's lock (token 41): the grant never "
                                  "reached it"));
        scene_close(&sc);
    }
    layout_close(&ly);
    trace_close(&tr);
    return lacks;
}

static void test_scene_promotion_without_lock(void **state) {
    (void)state;
    int peer;
    uint64_t token;
    assert_true(promotion_lacks(-1, 30 * S, &peer, &token));
    assert_int_equal(peer, A);
    assert_int_equal(token, 41);
    assert_false(promotion_lacks(500 * MS, 30 * S, &peer, &token)); /* copied at 0.5s */
    assert_false(promotion_lacks(-1, 500 * MS, &peer, &token));     /* ran out at 0.5s, before the crash */
}

/* The first LINE command of a style with a tooltip (not the legend's swatch), or NULL. */
static const struct scene_cmd *arrow(const struct scene *sc, int style) {
    for (size_t i = 0; i < sc->ncmd; i++)
        if (sc->cmd[i].type == SCENE_CMD_LINE && sc->cmd[i].style == style && sc->cmd[i].text) return &sc->cmd[i];
    return NULL;
}

/* The first LINE command of a style in a lane going up or down (x == x2), or NULL. */
static const struct scene_cmd *vline(const struct scene *sc, int style, int lane) {
    for (size_t i = 0; i < sc->ncmd; i++) {
        const struct scene_cmd *k = &sc->cmd[i];
        if (k->type == SCENE_CMD_LINE && k->style == style && k->lane == lane && k->x == k->x2 && k->y != k->y2)
            return k;
    }
    return NULL;
}

static void test_scene_clock_replica_drop(void **state) {
    (void)state;
    struct trace tr;
    struct layout ly;
    struct scene sc;
    struct scene_view v;
    clock_story(&tr);
    assert_int_equal(layout_build(&ly, &tr), 0);
    /* The layout: S1's clock in three pieces, S2's copy of A's lock. */
    const struct layout_lane *s1 = &ly.lanes[S1], *s2 = &ly.lanes[4];
    assert_int_equal(s1->nclock, 3);
    assert_int_equal(ly.lanes[A].nclock, 0);
    assert_int_equal(layout_clock_offset(s1, 5 * S - 1), 0);
    assert_int_equal(layout_clock_offset(s1, 5 * S), 25 * S);
    assert_int_equal(layout_clock_offset(s1, 10 * S), 25 * S + 400000); /* + 2 s x 200 ppm */
    assert_int_equal(s2->nspans, 1);
    assert_int_equal(s2->spans[0].kind, LAYOUT_SPAN_REPLICA);
    assert_int_equal(s2->spans[0].t0, 1 * S);
    assert_int_equal(s2->spans[0].peer, A);
    assert_int_equal(s2->spans[0].token, 41);
    assert_int_equal(s2->marks[0].kind, LAYOUT_MARK_REPL_COPY);

    /* Pixels, a plain (uncompressed) axis. */
    scene_view_pixels(&v, 1280, 0);
    v.compressed = 0;
    assert_int_equal(scene_build(&sc, &ly, &v, NULL, 0), 0);
    /* The clock lane: right under S1's, labelled "clock"; the step a
     * vertical jump upwards at 5 s labelled "+25s", the drift labelled at 8 s. */
    const struct scene_cmd *lab = text(&sc, "clock"), *s1lab = text(&sc, "S1");
    assert_non_null(lab);
    assert_int_equal(lab->style, SCENE_ST_CLOCK);
    assert_int_equal(lab->lane, S1);
    assert_int_equal(lab->layer, SCENE_LAYER_EXTRA);
    assert_int_equal(lab->y - (v.lane_h * 3 / 4 - v.line_h) / 2, s1lab->y - (v.lane_h - v.line_h) / 2 + v.lane_h);
    const struct scene_cmd *jump = vline(&sc, SCENE_ST_CLOCK, S1);
    assert_non_null(jump);
    assert_int_equal(jump->x, scene_x_of(&sc, 5 * S));
    assert_int_equal(jump->t0, 5 * S);
    assert_true(jump->y2 < jump->y); /* ahead: up */
    /* from 0 (the middle) up to +25 s: 12 px (half the 30 px lane less 3)
     * scaled by 25 s / 25.0024 s, the largest offset, at the end after the
     * drift: 11 px */
    assert_int_equal(jump->y - jump->y2, 11);
    const struct scene_cmd *k = text(&sc, "+25s");
    assert_non_null(k);
    assert_int_equal(k->x, scene_x_of(&sc, 5 * S) + 4);
    assert_int_equal(k->style, SCENE_ST_CLOCK);
    /* the drift is the last event, near the right edge (the window ends a
     * twentieth after it): its label goes on the left of it */
    assert_int_equal(text(&sc, "drift +200ppm")->x, scene_x_of(&sc, 8 * S) - 4 - 13 * v.char_w);
    /* R's lane is one clock lane lower than without it. */
    assert_int_equal(text(&sc, "R")->y, s1lab->y + v.lane_h + v.lane_h * 3 / 4 + v.lane_h);
    /* Badges: the value read, the token acquired. */
    assert_string_equal(sym(&sc, SCENE_SYM_READ, R)->label, "=3");
    assert_string_equal(sym(&sc, SCENE_SYM_ACQUIRED, A)->label, "+41");
    assert_non_null(sym(&sc, SCENE_SYM_REPL_COPY, 4));
    assert_string_equal(sym(&sc, SCENE_SYM_REPL_COPY, 4)->text,
                        "replica S2 copies A's lock from its primary, token 41, t=1s");
    /* The dropped request: from B at 2 s, two characters long, halfway to S1. */
    k = arrow(&sc, SCENE_ST_DROP);
    assert_non_null(k);
    assert_int_equal(k->x, scene_x_of(&sc, 2 * S));
    assert_int_equal(k->x2, k->x + 2 * v.char_w);
    assert_true(k->y2 > k->y);
    assert_string_equal(k->text, "message B -> S1 sent t=2s, dropped t=2s (partition)");
    size_t drops = 0;
    for (size_t i = 0; i < sc.ncmd; i++) drops += sc.cmd[i].style == SCENE_ST_DROP && sc.cmd[i].text != NULL;
    assert_int_equal(drops, 1); /* the fan of two drops at once is one arrow */
    /* The copy to the replica: from S1's grant at 0 to S2's copy at 1 s. */
    k = arrow(&sc, SCENE_ST_REPLICATION);
    assert_non_null(k);
    assert_int_equal(k->x, scene_x_of(&sc, 0));
    assert_int_equal(k->x2, scene_x_of(&sc, 1 * S));
    assert_true(k->y2 > k->y); /* S2 is drawn under S1 */
    assert_string_equal(k->text, "S1 replicates A's grant (token 41) to S2: lag 1s");
    /* The legend names the three. */
    assert_non_null(text(&sc, "clock lane: the node's clock minus true time"));
    assert_non_null(text(&sc, "message dropped on its way (partition, loss)"));
    assert_non_null(text(&sc, "replication: primary to replica, with the lag"));
    scene_close(&sc);

    /* The terminal keeps its rows: no clock lane, no drops drawn. */
    scene_view_term(&v, 100, 1);
    assert_int_equal(scene_build(&sc, &ly, &v, NULL, 0), 0);
    assert_null(text(&sc, "clock"));
    assert_null(cmd(&sc, SCENE_CMD_LINE, SCENE_ST_DROP, -2, 1));
    scene_close(&sc);

    /* A narrow picture: the title wraps at a space, and the verdict badge
     * moves to the next line instead of leaving the picture. */
    struct checker_report rep;
    memset(&rep, 0, sizeof rep);
    rep.verdict = SCN_VERDICT_UNSAFE;
    struct scene_banner b = {.title = "A lock server's wall-clock jump expires a lease early",
                             .algo = "fenced-lease",
                             .seed = "1",
                             .report = &rep};
    scene_view_pixels(&v, 360, 0);
    assert_int_equal(scene_build(&sc, &ly, &v, &b, 0), 0);
    int lines = 0;
    for (size_t i = 0; i < sc.ncmd; i++) {
        const struct scene_cmd *t = &sc.cmd[i];
        if (t->type != SCENE_CMD_TEXT || t->style != SCENE_ST_TITLE) continue;
        assert_true(t->x + t->w <= 360 - 16);
        lines++;
    }
    assert_true(lines >= 2);
    k = text(&sc, "UNSAFE");
    assert_int_equal(k->x, 16);
    assert_int_equal(k->y, text(&sc, "algorithm: fenced-lease")->y + v.line_h);
    assert_true(k->x + k->w <= 360 - 16);
    scene_close(&sc);
    layout_close(&ly);
    trace_close(&tr);
}

/* Level of detail, zoomed out over 25 s (about 23 ms a pixel): A takes
 * 5000 turns (an acquire every 5 ms), S1 grants each a 20 ms lease and
 * deletes it 4 ms later, R accepts a write in each turn but rejects one
 * stale write at 12.3 s (the save) and accepts B's stale write at 15.001 s
 * (the damage) 1 ms before A's, in the same pixel column; B acquires five
 * times 50 ms apart at 20 s; A pauses 120 ms at 17.001 s. The rejected
 * write keeps its tick among 5000 accepted ones, the stale one wins its
 * column (with or without the index: a later routine write does not hide
 * it), no tick of A covers its pause; S1's
 * TTL bars, 5000 leases shorter than a pixel, are at most one per pixel
 * column; B's five instants (a cluster of only five) all stay. */
static void test_scene_lod_thinning(void **state) {
    (void)state;
    struct trace tr;
    struct layout ly;
    struct scene b;
    struct scene_view v;
    struct scene_lod *lod = NULL;
    seed_nodes(&tr);
    ev(&tr, 0, TRACE_RUN_START, NO, NO, 0, 0, 1, 25 * S, NULL);
    ev(&tr, 0, TRACE_RESOURCE_INIT, R, NO, 0, 0, 5, 1, NULL);
    for (int i = 0; i < 5000; i++) {
        sim_ns t = (sim_ns)i * 5 * MS;
        uint64_t tok = (uint64_t)i + 10;
        ev(&tr, t, TRACE_ACQUIRE_START, A, NO, 0, 0, 0, 0, NULL);
        ev(&tr, t, TRACE_SRV_GRANT, S1, A, tok, (uint32_t)i + 1, 20 * MS, t + 20 * MS, NULL);
        ev(&tr, t, TRACE_ACQUIRED, A, NO, tok, (uint32_t)i + 1, 20 * MS, 0, NULL);
        if (i == 3400) /* 17.001 s: A pauses for 120 ms (5 or 6 pixels: wider than the gap between ticks) */
            ev(&tr, t + 1 * MS, TRACE_PAUSE, A, NO, 0, 0, 0, 0, NULL);
        if (i == 3424) ev(&tr, t + 1 * MS, TRACE_RESUME, A, NO, 0, 0, 120 * MS, 0, NULL);
        if (i == 3000) { /* 15.001 s: B's stale write, accepted (the damage), 1 ms before A's */
            ev(&tr, t + 1 * MS, TRACE_WRITE, R, B, 5, 0, 4, TRACE_WRITE_ACCEPTED, NULL);
            ev(&tr, t + 1 * MS, TRACE_STALE_WRITE, B, NO, 5, 0, 1, 0, NULL);
        }
        if (i == 2460) /* 12.3 s: a stale token, refused */
            ev(&tr, t + 2 * MS, TRACE_WRITE, R, A, 3, (uint32_t)i + 1, 4, TRACE_WRITE_REJECTED_STALE, NULL);
        else ev(&tr, t + 2 * MS, TRACE_WRITE, R, A, tok, (uint32_t)i + 1, 4, TRACE_WRITE_ACCEPTED, NULL);
        ev(&tr, t + 4 * MS, TRACE_CS_EXIT, A, NO, 0, 0, TRACE_EXIT_RELEASE, 0, NULL);
        ev(&tr, t + 4 * MS, TRACE_SRV_DELETE, S1, A, 0, (uint32_t)i + 1, A, 0, NULL);
        if (i >= 4000 && i < 4050 && i % 10 == 0) { /* 20 s .. 20.2 s: B, five times */
            ev(&tr, t + 1 * MS, TRACE_ACQUIRE_START, B, NO, 0, 0, 0, 0, NULL);
            ev(&tr, t + 1 * MS, TRACE_ACQUIRED, B, NO, 0, 0, 0, 0, NULL);
            ev(&tr, t + 2 * MS, TRACE_CS_EXIT, B, NO, 0, 0, TRACE_EXIT_RELEASE, 0, NULL);
        }
    }
    ev(&tr, 25 * S, TRACE_RUN_END, NO, NO, 0, 0, 30000, 0, NULL);
    assert_int_equal(layout_build(&ly, &tr), 0);
    assert_int_equal(scene_lod_build(&lod, &ly), 0);
    scene_view_pixels(&v, 1280, 0);
    v.compressed = 0;
    v.flags &= ~(unsigned)SCENE_F_LEGEND;
    v.t0 = 0;
    v.t1 = 25 * S;
    v.lod = lod;
    assert_int_equal(scene_build(&b, &ly, &v, NULL, 0), 0);
    /* R: the one rejected write is there, at its time, in its style */
    size_t rejected = 0, writes = 0;
    for (size_t i = 0; i < b.ncmd; i++) {
        const struct scene_cmd *k = &b.cmd[i];
        if (k->type != SCENE_CMD_SYM || k->lane != R) continue;
        writes++;
        if (k->sym != SCENE_SYM_WRITE_REJECTED) continue;
        rejected++;
        assert_int_equal(k->style, SCENE_ST_WRITE_REJECTED);
        assert_int_equal(k->t0, 12 * S + 300 * MS + 2 * MS);
    }
    assert_int_equal(rejected, 1);
    /* R: the damage, in the column it shares with A's write */
    assert_int_equal(scene_cell_of(&b, 15 * S + 1 * MS), scene_cell_of(&b, 15 * S + 2 * MS));
    for (int with_index = 1; with_index >= 0; with_index--) {
        struct scene sc;
        v.lod = with_index ? lod : NULL;
        assert_int_equal(scene_build(&sc, &ly, &v, NULL, 0), 0);
        size_t stale = 0;
        for (size_t i = 0; i < sc.ncmd; i++) {
            const struct scene_cmd *k = &sc.cmd[i];
            if (k->type != SCENE_CMD_SYM || k->lane != R || k->style != SCENE_ST_STALE_WRITE) continue;
            stale++;
            assert_int_equal(k->t0, 15 * S + 1 * MS);
            assert_int_equal(k->minor, 0); /* a badge: not a routine instant */
        }
        assert_int_equal(stale, 1);
        scene_close(&sc);
    }
    v.lod = lod;
    assert_true(writes <= (size_t)b.axis.ncells / 8 + 2); /* one per 8 pixels, not one per write */
    /* S1: its TTL bars (the tapering boxes), never two in one column */
    int last_x = -1;
    size_t bars = 0;
    for (size_t i = 0; i < b.ncmd; i++) {
        const struct scene_cmd *k = &b.cmd[i];
        if (k->type != SCENE_CMD_RECT || k->lane != S1 || k->style != SCENE_ST_LEASE) continue;
        if (k->frac0 == 1000 && k->frac1 == 1000) continue; /* the lease's own fill */
        bars++;
        assert_true(k->x > last_x);
        last_x = k->x;
    }
    assert_true(bars > 100);
    assert_true(bars <= (size_t)b.axis.ncells);
    /* A: the pause's few columns, and no tick's 4 px frame over them */
    const struct scene_cmd *pause = NULL;
    for (size_t i = 0; i < b.ncmd && !pause; i++)
        if (b.cmd[i].type == SCENE_CMD_RECT && b.cmd[i].lane == A &&
            (b.cmd[i].style == SCENE_ST_PAUSED_HOLDING || b.cmd[i].style == SCENE_ST_PAUSED))
            pause = &b.cmd[i];
    assert_non_null(pause);
    assert_true(pause->w >= 5 && pause->w <= 7);
    for (size_t i = 0; i < b.ncmd; i++) {
        const struct scene_cmd *k = &b.cmd[i];
        if (k->type != SCENE_CMD_SYM || k->lane != A) continue;
        assert_true(k->x2 + 1 < pause->x || k->x2 - 2 > pause->x + pause->w - 1);
    }
    /* B: five instants of a sparse lane, none thinned (acquires and releases
     * at 1 and 2 ms share a column: the release, equal or higher, wins it) */
    size_t nb = 0;
    for (size_t i = 0; i < b.ncmd; i++) nb += b.cmd[i].type == SCENE_CMD_SYM && b.cmd[i].lane == B;
    assert_int_equal(nb, 5);
    scene_close(&b);
    scene_lod_free(lod);
    layout_close(&ly);
    trace_close(&tr);
}

/* The level-of-detail index: 5000 turns of A (acquire, 4 ms inside, release,
 * 1 ms out) over 25 s. Zoomed in, the scene with the index is the scene
 * without it, command for command (binary search to the window); zoomed
 * out, every cell comes from the buckets and shows what the events show: A
 * in the critical section throughout, an acquire winning every column, and
 * of those one tick every 8 pixels, with or without the index. */
static void test_scene_lod(void **state) {
    (void)state;
    struct trace tr;
    struct layout ly;
    struct scene a, b;
    struct scene_view v;
    struct scene_lod *lod = NULL;
    seed_nodes(&tr);
    ev(&tr, 0, TRACE_RUN_START, NO, NO, 0, 0, 1, 25 * S, NULL);
    for (int i = 0; i < 5000; i++) {
        sim_ns t = (sim_ns)i * 5 * MS;
        ev(&tr, t, TRACE_ACQUIRE_START, A, NO, 0, 0, 0, 0, NULL);
        ev(&tr, t, TRACE_ACQUIRED, A, NO, (uint64_t)i + 1, (uint32_t)i + 1, 0, 0, NULL);
        ev(&tr, t + 4 * MS, TRACE_CS_EXIT, A, NO, 0, 0, TRACE_EXIT_RELEASE, 0, NULL);
    }
    ev(&tr, 25 * S, TRACE_RUN_END, NO, NO, 0, 0, 15000, 0, NULL);
    assert_int_equal(layout_build(&ly, &tr), 0);
    assert_int_equal(scene_lod_build(&lod, &ly), 0);
    assert_true(scene_lod_bytes(lod) >= SCENE_LOD_BUCKETS * 5); /* A's lane has buckets */
    scene_view_pixels(&v, 1280, 0);
    v.compressed = 0;
    v.flags &= ~(unsigned)SCENE_F_LEGEND;
    /* Zoomed in: 100 ms from 10 s, the same commands either way. */
    v.t0 = 10 * S;
    v.t1 = 10 * S + 100 * MS;
    assert_int_equal(scene_build(&a, &ly, &v, NULL, 0), 0);
    v.lod = lod;
    assert_int_equal(scene_build(&b, &ly, &v, NULL, 0), 0);
    assert_int_equal(a.ncmd, b.ncmd);
    for (size_t i = 0; i < a.ncmd; i++) {
        assert_int_equal(a.cmd[i].type, b.cmd[i].type);
        assert_int_equal(a.cmd[i].x, b.cmd[i].x);
        assert_int_equal(a.cmd[i].w, b.cmd[i].w);
        assert_int_equal(a.cmd[i].sym, b.cmd[i].sym);
        assert_int_equal(a.cmd[i].seq, b.cmd[i].seq);
    }
    assert_non_null(sym(&b, SCENE_SYM_ACQUIRED, A));
    scene_close(&a);
    scene_close(&b);
    /* Zoomed out: the whole run; 25 s / 1100 columns is about 60 buckets a column. */
    v.t0 = 0;
    v.t1 = 25 * S;
    v.lod = NULL;
    assert_int_equal(scene_build(&a, &ly, &v, NULL, 0), 0);
    v.lod = lod;
    assert_int_equal(scene_build(&b, &ly, &v, NULL, 0), 0);
    assert_true(b.axis.cell_ns >= 4 * (25 * S / SCENE_LOD_BUCKETS));
    size_t na = 0, nb = 0;
    for (size_t i = 0; i < a.ncmd; i++) na += a.cmd[i].type == SCENE_CMD_SYM && a.cmd[i].lane == A;
    for (size_t i = 0; i < b.ncmd; i++) {
        const struct scene_cmd *k = &b.cmd[i];
        if (k->type != SCENE_CMD_SYM || k->lane != A) continue;
        nb++;
        assert_int_equal(k->sym, SCENE_SYM_ACQUIRED);
    }
    assert_int_equal(na, nb);
    /* an acquire in each of the ncells columns: one cluster, thinned to the
     * first of every 8 (all alike: the earliest of each bin stays) */
    assert_int_equal(nb, (size_t)(b.axis.ncells - 1) / 8 + 1);
    for (size_t i = 0; i < b.ncmd; i++)
        if (b.cmd[i].type == SCENE_CMD_SYM && b.cmd[i].lane == A) assert_int_equal((b.cmd[i].x2 - b.plot_x) % 8, 0);
    const struct scene_cmd *ra = cmd(&a, SCENE_CMD_RECT, SCENE_ST_HOLDING, A, 1),
                           *rb = cmd(&b, SCENE_CMD_RECT, SCENE_ST_HOLDING, A, 1);
    assert_int_equal(ra->x, rb->x);
    assert_int_equal(ra->w, rb->w);
    assert_null(cmd(&b, SCENE_CMD_RECT, SCENE_ST_HOLDING, A, 2)); /* one run of cells */
    scene_close(&a);
    scene_close(&b);
    scene_lod_free(lod);
    scene_lod_free(NULL);
    layout_close(&ly);
    trace_close(&tr);
}

/* A clock that starts 3 s behind and drifts 250 ppm (a scenario's `clock`
 * line, at t = 0 in the trace): the lane shows it from the start, labelled
 * once, and no clock-step badge claims that it jumped. */
static void test_scene_clock_at_start(void **state) {
    (void)state;
    struct trace tr;
    struct layout ly;
    struct scene sc;
    struct scene_view v;
    seed_nodes(&tr);
    ev(&tr, 0, TRACE_RUN_START, NO, NO, 0, 0, 1, 10 * S, NULL);
    ev(&tr, 0, TRACE_CLOCK_STEP, A, NO, 0, 0, -3 * S, 1 | TRACE_CLOCK_AT_START, NULL);
    ev(&tr, 0, TRACE_CLOCK_DRIFT, A, NO, 0, 0, 250, 0, NULL);
    ev(&tr, 1 * S, TRACE_ACQUIRE_START, A, NO, 0, 0, 0, 0, NULL);
    ev(&tr, 10 * S, TRACE_RUN_END, NO, NO, 0, 0, 5, 0, NULL);
    assert_int_equal(layout_build(&ly, &tr), 0);
    assert_int_equal(ly.lanes[A].nclock, 3);
    assert_int_equal(layout_clock_offset(&ly.lanes[A], 0), -3 * S);
    assert_int_equal(layout_clock_offset(&ly.lanes[A], 4 * S), -3 * S + 1 * MS); /* 4 s x 250 ppm */
    assert_int_equal(ly.lanes[A].nmarks, 0);                                     /* no clock-step mark */
    scene_view_pixels(&v, 1280, 0);
    assert_int_equal(scene_build(&sc, &ly, &v, NULL, 0), 0);
    const struct scene_cmd *k = text(&sc, "starts -3s, drift +250ppm");
    assert_non_null(k);
    assert_int_equal(k->lane, A);
    assert_int_equal(k->x, sc.plot_x + 4);
    assert_null(sym(&sc, SCENE_SYM_CLOCK, A));
    const struct scene_cmd *jump = vline(&sc, SCENE_ST_CLOCK, A);
    assert_non_null(jump);
    assert_true(jump->y2 > jump->y); /* behind: down from true time */
    scene_close(&sc);
    layout_close(&ly);
    trace_close(&tr);
}

/* A fan of replies that lands on one receiver at one instant (three
 * servers' grants held back by A's pause) is three arrows with one "in
 * flight" label, not three stacked over the lanes. */
static void test_scene_fan_labelled_once(void **state) {
    (void)state;
    struct trace tr;
    struct layout ly;
    struct scene sc;
    struct scene_view v;
    seed_nodes(&tr);
    assert_int_equal(trace_add_node(&tr, "S2", TRACE_NODE_SERVER), 4);
    assert_int_equal(trace_add_node(&tr, "S3", TRACE_NODE_SERVER), 5);
    ev(&tr, 0, TRACE_RUN_START, NO, NO, 0, 0, 1, 20 * S, NULL);
    const int srv[3] = {S1, 4, 5};
    for (int i = 0; i < 3; i++) ev(&tr, 1 * S, TRACE_MSG_SEND, srv[i], A, 0, 0, 10 + i, 2, NULL);
    for (int i = 0; i < 3; i++) ev(&tr, 9 * S, TRACE_MSG_RECV, A, srv[i], 0, 0, 10 + i, 2, NULL);
    ev(&tr, 20 * S, TRACE_RUN_END, NO, NO, 0, 0, 9, 0, NULL);
    assert_int_equal(layout_build(&ly, &tr), 0);
    scene_view_pixels(&v, 1280, 0);
    v.compressed = 0;
    assert_int_equal(scene_build(&sc, &ly, &v, NULL, 0), 0);
    int arrows = 0, labels = 0;
    for (size_t i = 0; i < sc.ncmd; i++) {
        const struct scene_cmd *k = &sc.cmd[i];
        if (k->type == SCENE_CMD_LINE && k->style == SCENE_ST_MESSAGE && k->layer == SCENE_LAYER_EXTRA) arrows++;
        if (k->type == SCENE_CMD_TEXT && k->text && strcmp(k->text, "8s in flight") == 0) labels++;
    }
    assert_int_equal(arrows, 3);
    assert_int_equal(labels, 1);
    scene_close(&sc);
    layout_close(&ly);
    trace_close(&tr);
}

/* The message arrows of a scene, in order: count and each one's geometry
 * and times, compared between two scenes. */
static size_t same_arrows(const struct scene *a, const struct scene *b) {
    size_t na = 0, nb = 0;
    for (size_t i = 0, j = 0;; i++, j++) {
        while (i < a->ncmd && a->cmd[i].type != SCENE_CMD_LINE) i++;
        while (j < b->ncmd && b->cmd[j].type != SCENE_CMD_LINE) j++;
        if (i >= a->ncmd || j >= b->ncmd) {
            assert_true(i >= a->ncmd && j >= b->ncmd);
            break;
        }
        const struct scene_cmd *x = &a->cmd[i], *y = &b->cmd[j];
        assert_int_equal(x->style, y->style);
        assert_int_equal(x->x, y->x);
        assert_int_equal(x->y, y->y);
        assert_int_equal(x->x2, y->x2);
        assert_int_equal(x->y2, y->y2);
        assert_int_equal(x->t0, y->t0);
        assert_int_equal(x->t1, y->t1);
        na += x->style == SCENE_ST_MESSAGE && x->text;
        nb += y->style == SCENE_ST_MESSAGE && y->text;
    }
    assert_int_equal(na, nb);
    return na;
}

/* The index also finds a window's messages (binary search on the running
 * latest arrival) and the scene leaves out flights too short for an arrow
 * without placing them: 4000 requests of 1 ms from A to S1 every 5 ms, and
 * two slow ones, sent at 9.9 s (arriving at 10.05 s, inside a window that
 * starts at 10 s) and at 10.02 s (arriving at 10.07 s). Zoomed in and
 * zoomed out, the arrows with the index are those without it. */
static void test_scene_lod_messages(void **state) {
    (void)state;
    struct trace tr;
    struct layout ly;
    struct scene a, b;
    struct scene_view v;
    struct scene_lod *lod = NULL;
    seed_nodes(&tr);
    ev(&tr, 0, TRACE_RUN_START, NO, NO, 0, 0, 1, 20 * S, NULL);
    uint32_t id = 1;
    for (int i = 0; i < 4000; i++) {
        sim_ns t = (sim_ns)i * 5 * MS;
        if (t == 9900 * MS || t == 10020 * MS) { /* the slow ones */
            ev(&tr, t, TRACE_MSG_SEND, A, S1, 0, 0, id, 1, NULL);
            ev(&tr, t + (t == 9900 * MS ? 150 : 50) * MS, TRACE_MSG_RECV, S1, A, 0, 0, id, 1, NULL);
            id++;
        }
        ev(&tr, t, TRACE_MSG_SEND, A, S1, 0, 0, id, 1, NULL);
        ev(&tr, t + 1 * MS, TRACE_MSG_RECV, S1, A, 0, 0, id, 1, NULL);
        id++;
    }
    ev(&tr, 20 * S, TRACE_RUN_END, NO, NO, 0, 0, 16004, 0, NULL);
    assert_int_equal(layout_build(&ly, &tr), 0);
    assert_int_equal(scene_lod_build(&lod, &ly), 0);
    scene_view_pixels(&v, 1280, 0);
    v.compressed = 0;
    v.flags &= ~(unsigned)SCENE_F_LEGEND;
    /* Zoomed in: 100 ms from 10 s. 1 ms is about 11 px there, short of the
     * two characters (22 px) an arrow needs; the slow two are drawn. */
    v.t0 = 10 * S;
    v.t1 = 10 * S + 100 * MS;
    assert_int_equal(scene_build(&a, &ly, &v, NULL, 0), 0);
    v.lod = lod;
    assert_int_equal(scene_build(&b, &ly, &v, NULL, 0), 0);
    assert_int_equal(same_arrows(&a, &b), 2);
    const struct scene_cmd *k = arrow(&b, SCENE_ST_MESSAGE);
    assert_non_null(k);
    assert_int_equal(k->t0, 9900 * MS);
    assert_int_equal(k->t1, 10050 * MS);
    assert_int_equal(k->x, b.plot_x); /* sent before the window: from its edge */
    scene_close(&a);
    scene_close(&b);
    /* Zoomed out to the whole run: 150 ms is about 8 px, no arrow at all. */
    v.t0 = 0;
    v.t1 = 20 * S;
    v.lod = NULL;
    assert_int_equal(scene_build(&a, &ly, &v, NULL, 0), 0);
    v.lod = lod;
    assert_int_equal(scene_build(&b, &ly, &v, NULL, 0), 0);
    assert_int_equal(same_arrows(&a, &b), 0);
    scene_close(&a);
    scene_close(&b);
    scene_lod_free(lod);
    layout_close(&ly);
    trace_close(&tr);
}

/* A window builds its scenes without tooltips and makes the one under the
 * mouse on demand: for every symbol of a lane in the clock story,
 * scene_sym_tooltip gives the text the scene with SCENE_F_TIPS carries
 * ("A acquires, token 41, t=0s"), and nothing for a command that is not a
 * lane's symbol. */
static void test_scene_tooltip_on_demand(void **state) {
    (void)state;
    struct trace tr;
    struct layout ly;
    struct scene a, b;
    struct scene_view v;
    clock_story(&tr);
    assert_int_equal(layout_build(&ly, &tr), 0);
    scene_view_pixels(&v, 1280, 0);
    assert_int_equal(scene_build(&a, &ly, &v, NULL, 0), 0);
    v.flags &= ~(unsigned)SCENE_F_TIPS;
    assert_int_equal(scene_build(&b, &ly, &v, NULL, 0), 0);
    assert_int_equal(a.ncmd, b.ncmd);
    char buf[256];
    int lane_syms = 0, acquire = 0;
    for (size_t i = 0; i < a.ncmd; i++) {
        const struct scene_cmd *x = &a.cmd[i], *y = &b.cmd[i];
        assert_int_equal(x->type, y->type);
        assert_int_equal(x->x, y->x);
        if (y->type != SCENE_CMD_SYM || y->lane < 0) {
            if (y->type != SCENE_CMD_SYM) {
                assert_int_equal(scene_sym_tooltip(buf, sizeof buf, &ly, y), -1);
                assert_string_equal(buf, "");
            }
            continue;
        }
        assert_null(y->text);
        assert_non_null(x->text);
        assert_int_equal(scene_sym_tooltip(buf, sizeof buf, &ly, y), 0);
        assert_string_equal(buf, x->text);
        acquire += strcmp(buf, "A acquires, token 41, t=0s") == 0;
        lane_syms++;
    }
    assert_true(lane_syms >= 4);
    assert_int_equal(acquire, 1);
    /* the window finds a symbol under the mouse without a tooltip */
    const struct scene_cmd *k = sym(&b, SCENE_SYM_ACQUIRED, A);
    assert_non_null(k);
    assert_int_equal(viewstate_hit(&b, k->x + k->w / 2, k->y + k->h / 2), (long)(k - b.cmd));
    scene_close(&a);
    scene_close(&b);
    layout_close(&ly);
    trace_close(&tr);
}

/* Whether two commands' rectangles meet (x, y, w, h; half-open). */
static int rects_meet(const struct scene_cmd *a, const struct scene_cmd *b) {
    return a->x < b->x + b->w && b->x < a->x + a->w && a->y < b->y + b->h && b->y < a->y + a->h;
}

/* In a picture, no two badges of a lane overlap, and no pixel-only label
 * (EXTRA text) covers a badge or another label. Returns the badges. */
static int assert_no_overlap(const struct scene *sc) {
    int badges = 0;
    for (size_t i = 0; i < sc->ncmd; i++) {
        const struct scene_cmd *a = &sc->cmd[i];
        int badge = a->type == SCENE_CMD_SYM && a->lane >= 0 && !a->minor;
        int label = a->type == SCENE_CMD_TEXT && a->layer == SCENE_LAYER_EXTRA;
        badges += badge;
        if (!badge && !label) continue;
        for (size_t j = i + 1; j < sc->ncmd; j++) {
            const struct scene_cmd *b = &sc->cmd[j];
            int b_badge = b->type == SCENE_CMD_SYM && b->lane >= 0 && !b->minor;
            int b_label = b->type == SCENE_CMD_TEXT && b->layer == SCENE_LAYER_EXTRA;
            if (badge && b_badge && a->lane == b->lane) assert_false(rects_meet(a, b));
            if ((badge && b_label) || (label && b_badge) || (label && b_label)) assert_false(rects_meet(a, b));
        }
    }
    return badges;
}

/* Events a few ms apart and a long flight whose label would sit on them.
 * S1: A's lease expires at 10 s and B is granted token 2 at 10.004 s (one
 * pixel column of the whole run); R: B's write with token 2 at 10.09 s and
 * A's stale one with token 1 at 10.093 s (one column too); S1 -> A, a
 * message in flight from 1 s to 19 s, its "18s in flight" label due at the
 * middle, right over the badges at 10 s. In pictures the more important
 * instant keeps the shared column (the grant over the expiry, the damage
 * over the write), no badges overlap, and the label goes where it covers
 * none; the terminal keeps its own priorities (the expiry's 'e'). */
static void test_scene_labels_clear_of_badges(void **state) {
    (void)state;
    struct trace tr;
    struct layout ly;
    struct scene sc;
    struct scene_view v;
    seed_nodes(&tr);
    ev(&tr, 0, TRACE_RUN_START, NO, NO, 0, 0, 1, 20 * S, NULL);
    ev(&tr, 0, TRACE_RESOURCE_INIT, R, NO, 0, 0, 5, 0, NULL);
    ev(&tr, 0, TRACE_ACQUIRE_START, A, NO, 0, 0, 0, 0, NULL);
    ev(&tr, 0, TRACE_SRV_GRANT, S1, A, 1, 1, 10 * S, 10 * S, NULL);
    ev(&tr, 0, TRACE_ACQUIRED, A, NO, 1, 1, 10 * S, 0, NULL);
    ev(&tr, 1 * S, TRACE_MSG_SEND, S1, A, 0, 0, 77, 2, NULL);
    ev(&tr, 2 * S, TRACE_PAUSE, A, NO, 0, 0, 0, 0, NULL);
    ev(&tr, 9 * S, TRACE_ACQUIRE_START, B, NO, 0, 0, 0, 0, NULL);
    ev(&tr, 10 * S, TRACE_SRV_EXPIRE, S1, A, 0, 1, 0, 0, NULL);
    ev(&tr, 10 * S + 4 * MS, TRACE_SRV_GRANT, S1, B, 2, 2, 10 * S, 20 * S, NULL);
    ev(&tr, 10 * S + 6 * MS, TRACE_ACQUIRED, B, NO, 2, 2, 10 * S, 0, NULL);
    ev(&tr, 10 * S + 6 * MS, TRACE_DOUBLE_ENTRY_BEGIN, B, A, 0, 0, 0, 0, NULL);
    ev(&tr, 10 * S + 50 * MS, TRACE_RESUME, A, NO, 0, 0, 8 * S, 0, NULL);
    ev(&tr, 10 * S + 90 * MS, TRACE_WRITE, R, B, 2, 2, 4, TRACE_WRITE_ACCEPTED, NULL);
    ev(&tr, 10 * S + 93 * MS, TRACE_WRITE, R, A, 1, 1, 4, TRACE_WRITE_ACCEPTED, NULL);
    ev(&tr, 10 * S + 93 * MS, TRACE_STALE_WRITE, A, NO, 1, 1, 1, 0, NULL);
    ev(&tr, 10 * S + 110 * MS, TRACE_CS_EXIT, A, NO, 0, 0, TRACE_EXIT_RELEASE, 0, NULL);
    ev(&tr, 10 * S + 110 * MS, TRACE_DOUBLE_ENTRY_END, B, A, 0, 0, 104 * MS, 0, NULL);
    ev(&tr, 10 * S + 200 * MS, TRACE_CS_EXIT, B, NO, 0, 0, TRACE_EXIT_RELEASE, 0, NULL);
    ev(&tr, 10 * S + 200 * MS, TRACE_SRV_DELETE, S1, B, 0, 2, B, 0, NULL);
    ev(&tr, 19 * S, TRACE_MSG_RECV, A, S1, 0, 0, 77, 2, NULL);
    ev(&tr, 20 * S, TRACE_RUN_END, NO, NO, 0, 0, 20, 0, NULL);
    assert_int_equal(layout_build(&ly, &tr), 0);

    /* Step 1: the whole run at 1280 px, a plain axis (18 ms a pixel). */
    scene_view_pixels(&v, 1280, 0);
    v.compressed = 0;
    assert_int_equal(scene_build(&sc, &ly, &v, NULL, 0), 0);
    assert_int_equal(scene_cell_of(&sc, 10 * S), scene_cell_of(&sc, 10 * S + 4 * MS));
    assert_int_equal(scene_cell_of(&sc, 10 * S + 90 * MS), scene_cell_of(&sc, 10 * S + 93 * MS));
    /* the grant wins S1's column, the expiry is not drawn */
    const struct scene_cmd *g = cmd(&sc, SCENE_CMD_SYM, -1, S1, 2);
    assert_non_null(g);
    assert_int_equal(g->sym, SCENE_SYM_GRANT);
    assert_int_equal(g->t0, 10 * S + 4 * MS);
    assert_int_equal(g->minor, 0);
    assert_null(sym(&sc, SCENE_SYM_EXPIRE, S1));
    /* the damage wins R's column, as a badge with A's token */
    const struct scene_cmd *w = cmd(&sc, SCENE_CMD_SYM, -1, R, 1);
    assert_non_null(w);
    assert_int_equal(w->style, SCENE_ST_STALE_WRITE);
    assert_int_equal(w->t0, 10 * S + 93 * MS);
    assert_string_equal(w->label, "1");
    assert_int_equal(w->minor, 0);
    assert_null(cmd(&sc, SCENE_CMD_SYM, -1, R, 2));
    /* the label is drawn, moved off the middle of its arrow (over B's
     * badges), and covers no badge */
    const struct scene_cmd *lab = text(&sc, "18s in flight");
    assert_non_null(lab);
    int mid_x = (scene_x_of(&sc, 1 * S) + scene_x_of(&sc, 19 * S)) / 2;
    assert_int_not_equal(lab->x, mid_x - lab->w / 2);
    assert_true(assert_no_overlap(&sc) >= 6);
    scene_close(&sc);

    /* Step 2: zoomed to 9.9 s .. 10.4 s, every badge apart, the label too. */
    v.t0 = 9 * S + 900 * MS;
    v.t1 = 10 * S + 400 * MS;
    assert_int_equal(scene_build(&sc, &ly, &v, NULL, 0), 0);
    assert_non_null(sym(&sc, SCENE_SYM_EXPIRE, S1));
    assert_true(sym(&sc, SCENE_SYM_EXPIRE, S1)->x < sym(&sc, SCENE_SYM_GRANT, S1)->x);
    assert_true(sym(&sc, SCENE_SYM_GRANT, S1)->x < sym(&sc, SCENE_SYM_DELETE, S1)->x);
    assert_true(assert_no_overlap(&sc) >= 8);
    scene_close(&sc);

    /* Step 3: the terminal's column of 200 ms shows the expiry, as before. */
    scene_view_term(&v, 100, 0);
    assert_int_equal(scene_build(&sc, &ly, &v, NULL, 0), 0);
    assert_non_null(sym(&sc, SCENE_SYM_EXPIRE, S1));
    assert_null(sym(&sc, SCENE_SYM_GRANT, S1) && sym(&sc, SCENE_SYM_GRANT, S1)->t0 == 10 * S + 4 * MS
                        ? sym(&sc, SCENE_SYM_GRANT, S1)
                        : NULL);
    scene_close(&sc);
    layout_close(&ly);
    trace_close(&tr);
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_scene_term_positions),
            cmocka_unit_test(test_scene_stale_write_and_priority),
            cmocka_unit_test(test_scene_window),
            cmocka_unit_test(test_scene_compressed),
            cmocka_unit_test(test_scene_pixels),
            cmocka_unit_test(test_scene_hide_and_errors),
            cmocka_unit_test(test_svg_faults),
            cmocka_unit_test(test_scene_clock_replica_drop),
            cmocka_unit_test(test_scene_lod),
            cmocka_unit_test(test_scene_lod_thinning),
            cmocka_unit_test(test_scene_lod_messages),
            cmocka_unit_test(test_scene_tooltip_on_demand),
            cmocka_unit_test(test_scene_clock_at_start),
            cmocka_unit_test(test_scene_fan_labelled_once),
            cmocka_unit_test(test_scene_labels_clear_of_badges),
            cmocka_unit_test(test_scene_leader_bands),
            cmocka_unit_test(test_scene_lock_delay_band),
            cmocka_unit_test(test_scene_promotion_without_lock),
    };
    return cmocka_run_group_tests_name("scene", tests, NULL, NULL);
}
