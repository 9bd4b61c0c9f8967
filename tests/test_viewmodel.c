/* Tests of the live demo's behaviour as every front end shares it
 * (render/viewmodel.c): the window and the web page call the same
 * functions, so what is asserted here is what a teacher sees in both:
 * nothing drawn at the start, the banner "running" until the double entry
 * decides the run, the narration's last lines, the status line, the keys
 * by the names SDL and a browser give them, and the overlays painted. */
#include "testutil.h"

#include <stdlib.h>

#include "scenario_file.h"
#include "viewmodel.h"

#define S (1000000000LL)


/* Whether any scene command of vm shows style st. */
static int shows(const struct viewmodel *vm, int st) {
    for (size_t p = 0; p < vm->nsc; p++)
        for (size_t i = 0; i < vm->scs[p].ncmd; i++)
            if (vm->scs[p].cmd[i].style == st) return 1;
    return 0;
}

/* A paint_ops that counts boxes and lines and where the yellow frame is. */
struct tally {
    int boxes, lines, yellow;
};
static int t_box(void *c, int x, int y, int w, int h, struct palette_rgb k) {
    (void)x, (void)y, (void)w, (void)h, (void)k;
    ((struct tally *)c)->boxes++;
    return 0;
}
static int t_line(void *c, int x0, int y0, int x1, int y1, int w, struct palette_rgb k) {
    (void)x0, (void)y0, (void)x1, (void)y1, (void)w;
    struct tally *t = c;
    t->lines++;
    t->yellow += k.r == 240 && k.g == 228 && k.b == 66;
    return 0;
}

/* Stepping through the seed's story: nothing at the start, "running" until
 * the double entry at 31s, then UNSAFE; the same sentences for every front end. */
static void test_reveal_and_words(void **state) {
    (void)state;
    struct engine *e = run_text(testutil_gc_story);
    const struct trace *tr = engine_trace(e);
    struct scene_banner b = {
            .title = "GC pause outlives the lease", .algo = "lease", .seed = "1", .report = engine_report(e)};
    struct viewmodel vm;
    memset(&vm, 0, sizeof vm);
    assert_int_equal(viewmodel_load(&vm, &tr, &b, 1, 1, 0), 0);
    /* Step 1: at the start nothing is drawn and the verdict is not shown. */
    assert_int_equal(viewmodel_update(&vm, 1280, 600), 1);
    assert_int_equal(viewmodel_update(&vm, 1280, 600), 0); /* nothing changed: nothing built */
    assert_int_equal(viewmodel_revealed(&vm), 0);
    assert_int_equal(vm.decided_all, 0);
    assert_false(shows(&vm, SCENE_ST_UNSAFE));
    assert_false(shows(&vm, SCENE_ST_BAND));
    long ks[VIEWMODEL_NARR_LINES];
    int cur;
    viewmodel_history(&vm, ks, &cur);
    assert_int_equal(ks[0], -2);
    assert_int_equal(ks[2], -1);
    assert_int_equal(cur, 2);
    char s[600];
    viewmodel_narrate(&vm, ks[2], s, sizeof s);
    assert_string_equal(s, "The start of the run: press Right to step, space to play.");
    /* Step 2: "n" (the next violation) lands on the double entry at 31s:
     * decided, the verdict and the band shown. */
    assert_int_equal(viewmodel_do(&vm, viewmodel_key("N")), 1);
    assert_int_equal(vm.vs.cursor, 31 * S);
    assert_int_equal(viewmodel_update(&vm, 1280, 600), 1);
    assert_int_equal(vm.decided_all, 1);
    assert_true(shows(&vm, SCENE_ST_UNSAFE));
    assert_true(shows(&vm, SCENE_ST_BAND));
    viewmodel_history(&vm, ks, &cur);
    assert_int_equal(cur, 2);
    viewmodel_narrate(&vm, ks[cur], s, sizeof s);
    assert_non_null(strstr(s, "t=31s  "));
    /* the sentence before it is told too */
    viewmodel_narrate(&vm, ks[1], s, sizeof s);
    assert_string_equal(s, "t=31s  R accepts B's write of 0 (no token)");
    viewmodel_status(&vm, s, sizeof s, NULL);
    assert_non_null(strstr(s, "paused 3 s/s  t=31s  window "));
    assert_non_null(strstr(s, "? help"));
    /* Step 3: the overlays: the cursor's marker; the double entry has no
     * symbol to frame, the write before it (one step back) has. */
    struct paint_ops ops = {t_box, NULL, t_line, NULL, NULL, NULL};
    struct tally t = {0, 0, 0};
    assert_int_equal(viewmodel_paint_overlays(&vm, &ops, &t, 0), 0);
    assert_int_equal(t.boxes, 8); /* the marker over the lanes; no veil (no quiz) */
    assert_int_equal(t.yellow, 0);
    viewmodel_do(&vm, viewmodel_key("ArrowLeft"));
    viewmodel_update(&vm, 1280, 600);
    memset(&t, 0, sizeof t);
    assert_int_equal(viewmodel_paint_overlays(&vm, &ops, &t, 0), 0);
    assert_int_equal(t.yellow, 8); /* the frame's 2 yellow rings, 4 sides each */
    /* Step 4: Home hides everything again. */
    viewmodel_do(&vm, viewmodel_key("Home"));
    viewmodel_update(&vm, 1280, 600);
    assert_int_equal(viewmodel_revealed(&vm), 0);
    assert_false(shows(&vm, SCENE_ST_UNSAFE));
    viewmodel_close(&vm);
    engine_free(e);
}

/* One key table for SDL's names and a browser's. */
static void test_keys(void **state) {
    (void)state;
    assert_int_equal(viewmodel_key("Right"), VIEWMODEL_NEXT);      /* SDL_GetKeyName */
    assert_int_equal(viewmodel_key("ArrowRight"), VIEWMODEL_NEXT); /* KeyboardEvent.key */
    assert_int_equal(viewmodel_key("Space"), VIEWMODEL_PLAY);
    assert_int_equal(viewmodel_key(" "), VIEWMODEL_PLAY);
    assert_int_equal(viewmodel_key("Keypad +"), VIEWMODEL_ZOOM_IN);
    assert_int_equal(viewmodel_key("="), VIEWMODEL_ZOOM_IN);
    assert_int_equal(viewmodel_key("Return"), VIEWMODEL_REVEAL);
    assert_int_equal(viewmodel_key("Enter"), VIEWMODEL_REVEAL);
    assert_int_equal(viewmodel_key("a"), VIEWMODEL_SHOW_ALL);
    assert_int_equal(viewmodel_key("A"), VIEWMODEL_SHOW_ALL);
    assert_int_equal(viewmodel_key("q"), VIEWMODEL_NONE); /* a front end's own */
    assert_int_equal(viewmodel_key(""), VIEWMODEL_NONE);
    assert_int_equal(viewmodel_key("Rightx"), VIEWMODEL_NONE);
    /* every command has a key, and the help lists them */
    for (int c = VIEWMODEL_NONE + 1; c < VIEWMODEL_CMD_COUNT; c++) {
        int found = 0;
        const char *names[] = {"space", "[", "]", "right", "left", "home", "end", "+", "-",
                               "0",     "n", "a", "up",    "down", "r",    "k",   "<", ">"};
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) found |= viewmodel_key(names[i]) == c;
        assert_true(found);
    }
    assert_string_equal(viewmodel_help_line(0), "space        play / pause");
    int n = 0;
    while (viewmodel_help_line(n)) n++;
    assert_int_equal(n, 10);
}

/* The row of lane NAME's label in vm's first scene (its middle), or -1. */
static int lane_y(const struct viewmodel *vm, const char *name) {
    for (size_t i = 0; i < vm->scs[0].ncmd; i++) {
        const struct scene_cmd *k = &vm->scs[0].cmd[i];
        if (k->type == SCENE_CMD_TEXT && k->style == SCENE_ST_LABEL && k->text && strcmp(k->text, name) == 0)
            return k->y + vm->sv.line_h / 2;
    }
    return -1;
}

/* Break it by clicking: a click on A's lane at 5s is a pause of half the
 * run there, on S1 with shift a crash; the line, added to the story, runs;
 * off the lanes or the axis, nothing. */
static void test_break_by_clicking(void **state) {
    (void)state;
    static char text_drag[2048];
    struct engine *e = run_text(testutil_gc_story);
    const struct trace *tr = engine_trace(e);
    struct viewmodel vm;
    memset(&vm, 0, sizeof vm);
    assert_int_equal(viewmodel_load(&vm, &tr, NULL, 1, 1, 0), 0);
    viewmodel_update(&vm, 1280, 600); /* nothing revealed yet: the lanes are there to click */
    const struct scene *sc = &vm.scs[0];
    int ya = lane_y(&vm, "A"), ys = lane_y(&vm, "S1");
    assert_true(ya > 0 && ys > ya);
    char line[160];
    sim_ns at = 0;
    assert_int_equal(
            viewmodel_fault_line(&vm, scene_x_of(sc, 5 * S), ya, VIEWMODEL_FAULT_PAUSE, line, sizeof line, &at), 0);
    assert_string_equal(line, "@5s pause A 30s");
    assert_int_equal(at, 5 * S); /* half of 60 s */
    assert_int_equal(viewmodel_fault_line(&vm, scene_x_of(sc, 12 * S + 340000000LL), ys, VIEWMODEL_FAULT_CRASH, line,
                                          sizeof line, NULL),
                     0);
    assert_string_equal(line, "@12.3s crash S1"); /* 12.34s, to the 100 ms */
    assert_int_equal(viewmodel_fault_line(&vm, 2, ya, VIEWMODEL_FAULT_PAUSE, line, sizeof line, NULL),
                     -1); /* the labels */
    assert_string_equal(line, "");
    assert_int_equal(
            viewmodel_fault_line(&vm, scene_x_of(sc, 5 * S), 3, VIEWMODEL_FAULT_PAUSE, line, sizeof line, NULL), -1);
    /* A right drag along A's lane from 30s back to 28s: a pause from the
     * earlier end, as long as the stretch (to the 100 ms); a drag of a few
     * pixels is a click (half the run); a crash ignores the drag's length;
     * alt's clock step is as long as the drag. The dragged story runs. */
    int x28 = scene_x_of(sc, 28 * S), x30 = scene_x_of(sc, 30 * S);
    assert_true(x30 - x28 >= VIEWMODEL_DRAG_MIN_PX);
    sim_ns t28, t30; /* the columns' times as a click reads them (to the 100 ms) */
    assert_int_equal(viewmodel_fault_line(&vm, x28, ya, VIEWMODEL_FAULT_PAUSE, line, sizeof line, &t28), 0);
    assert_int_equal(viewmodel_fault_line(&vm, x30, ya, VIEWMODEL_FAULT_PAUSE, line, sizeof line, &t30), 0);
    assert_true(t28 > 27 * S && t28 < 29 * S && t30 > 29 * S && t30 < 31 * S);
    char t[32], d[32], want[160];
    scn_format_duration(t, sizeof t, t28);
    scn_format_duration(d, sizeof d, t30 - t28);
    assert_int_equal(viewmodel_fault_drag(&vm, x30, x28, ya, VIEWMODEL_FAULT_PAUSE, line, sizeof line, &at), 0);
    snprintf(want, sizeof want, "@%s pause A %s", t, d); /* about "@28s pause A 2s" */
    assert_string_equal(line, want);
    assert_int_equal(at, t28);
    assert_int_equal(viewmodel_fault_drag(&vm, x28, x28 + VIEWMODEL_DRAG_MIN_PX - 1, ya, VIEWMODEL_FAULT_PAUSE, line,
                                          sizeof line, NULL),
                     0);
    snprintf(want, sizeof want, "@%s pause A 30s", t);
    assert_string_equal(line, want);
    assert_int_equal(viewmodel_fault_drag(&vm, x28, x30, ys, VIEWMODEL_FAULT_CRASH, line, sizeof line, NULL), 0);
    snprintf(want, sizeof want, "@%s crash S1", t);
    assert_string_equal(line, want);
    assert_int_equal(viewmodel_fault_drag(&vm, x28, x30, ys, VIEWMODEL_FAULT_CLOCK_BACK, line, sizeof line, NULL), 0);
    snprintf(want, sizeof want, "@%s clock S1 step -%s", t, d);
    assert_string_equal(line, want);
    snprintf(text_drag, sizeof text_drag, "%s@%s pause B %s\n", testutil_gc_story, t, d);
    struct engine *e3 = run_text(text_drag);
    assert_int_equal(engine_report(e3)->verdict, SCN_VERDICT_UNSAFE); /* B paused before it tries: still UNSAFE */
    engine_free(e3);
    assert_int_equal(viewmodel_fault_drag(&vm, 2, x30, ya, VIEWMODEL_FAULT_PAUSE, line, sizeof line, NULL), -1);
    /* The line goes where timed lines stay in time order: "@1s" before the
     * story's "@5s pause A $pause", and the story so edited runs. */
    char text[2048];
    size_t len = strlen(testutil_gc_story), at_off = scenario_text_fault_place(testutil_gc_story, len, 1 * S);
    assert_string_equal(testutil_gc_story + at_off, "@5s pause A 27s\n");
    snprintf(text, sizeof text, "%.*s@1s crash S1\n%s", (int)at_off, testutil_gc_story, testutil_gc_story + at_off);
    struct engine *e2 = run_text(text);
    assert_non_null(e2);
    engine_free(e2);
    /* later than every timed line: at the end */
    assert_int_equal(scenario_text_fault_place(testutil_gc_story, len, 40 * S), len);
    viewmodel_close(&vm);
    engine_free(e);
}

/* More faults by clicking: ctrl on S1's lane restarts it, alt steps its
 * clock. The lines, added to the story, run and decide the verdict: A paused
 * at 5s for 27s outlives its 30 s lease, so the story is UNSAFE; a crash of
 * S1 at 1s then a restart at 2s still lets B in (UNSAFE); S1's clock
 * stepped forward 30s at 4s ends the lease sooner (still UNSAFE); stepped
 * back 30s at 4s keeps the server's lease alive past A's resume at 32s,
 * so B is not let in while A writes: SAFE. */
static void test_more_faults(void **state) {
    (void)state;
    struct engine *e = run_text(testutil_gc_story);
    const struct trace *tr = engine_trace(e);
    assert_int_equal(engine_report(e)->verdict, SCN_VERDICT_UNSAFE); /* the story as it is */
    struct viewmodel vm;
    memset(&vm, 0, sizeof vm);
    assert_int_equal(viewmodel_load(&vm, &tr, NULL, 1, 1, 0), 0);
    viewmodel_update(&vm, 1280, 600);
    const struct scene *sc = &vm.scs[0];
    int ys = lane_y(&vm, "S1");
    char line[160];
    assert_int_equal(viewmodel_fault_line(&vm, scene_x_of(sc, 2 * S + 40000000LL), ys, VIEWMODEL_FAULT_RESTART, line,
                                          sizeof line, NULL),
                     0);
    assert_string_equal(line, "@2s restart S1");
    char fwd[160], back[160];
    assert_int_equal(viewmodel_fault_line(&vm, scene_x_of(sc, 4 * S + 40000000LL), ys, VIEWMODEL_FAULT_CLOCK_FWD, fwd,
                                          sizeof fwd, NULL),
                     0);
    assert_string_equal(fwd, "@4s clock S1 step +30s");
    assert_int_equal(viewmodel_fault_line(&vm, scene_x_of(sc, 4 * S + 40000000LL), ys, VIEWMODEL_FAULT_CLOCK_BACK, back,
                                          sizeof back, NULL),
                     0);
    assert_string_equal(back, "@4s clock S1 step -30s");
    /* Each line, put where scenario_text_fault_place says, parses and runs. */
    const char *edits[] = {"@1s crash S1\n@2s restart S1\n", fwd, back};
    enum scn_verdict want[] = {SCN_VERDICT_UNSAFE, SCN_VERDICT_UNSAFE, SCN_VERDICT_SAFE};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char text[2048];
        size_t len = strlen(testutil_gc_story), off = scenario_text_fault_place(testutil_gc_story, len, 1 * S);
        snprintf(text, sizeof text, "%.*s%s%s%s", (int)off, testutil_gc_story, edits[i],
                 edits[i][strlen(edits[i]) - 1] == '\n' ? "" : "\n", testutil_gc_story + off);
        struct engine *e2 = run_text(text);
        assert_non_null(e2);
        assert_int_equal(engine_report(e2)->verdict, want[i]);
        engine_free(e2);
    }
    /* A drag from A's lane to S1's cuts their link; a click on one lane heals. */
    int ya = lane_y(&vm, "A");
    char cut[160], heal[160];
    sim_ns at = 0;
    assert_int_equal(viewmodel_link_line(&vm, scene_x_of(sc, 4 * S + 40000000LL), ya, ys, cut, sizeof cut, &at), 0);
    /* A is cut off from S1's side: B and R stay with S1, not in a third group */
    assert_string_equal(cut, "@4s partition A | B S1 R");
    assert_int_equal(at, 4 * S);
    assert_int_equal(viewmodel_link_line(&vm, scene_x_of(sc, 40 * S + 40000000LL), ys, ys, heal, sizeof heal, NULL), 0);
    assert_string_equal(heal, "@40s heal");
    assert_int_equal(viewmodel_link_line(&vm, scene_x_of(sc, 4 * S), 3, ys, cut + 100, 60, NULL),
                     -1); /* off the lanes */
    assert_int_equal(viewmodel_link_line(&vm, scene_x_of(sc, 4 * S), ya, 3, cut + 100, 60, NULL), -1);
    assert_string_equal(cut + 100, "");
    char text[2048];
    snprintf(text, sizeof text, "%.*s%s\n%s",
             (int)scenario_text_fault_place(testutil_gc_story, strlen(testutil_gc_story), 4 * S), testutil_gc_story,
             cut, testutil_gc_story + scenario_text_fault_place(testutil_gc_story, strlen(testutil_gc_story), 4 * S));
    snprintf(text + strlen(text), sizeof text - strlen(text), "%s\n", heal);
    struct engine *e3 = run_text(text);
    assert_non_null(e3);
    /* the cut at 4s and the heal at 40s are in the run, which stays UNSAFE
     * (A held its lease before the cut; the pause still outlives it) */
    const struct trace *t3 = engine_trace(e3);
    sim_ns cut_t = -1, heal_t = -1, b_acq_t = -1;
    for (size_t i = 0; i < t3->len; i++) {
        if (t3->ev[i].kind == TRACE_PARTITION) cut_t = t3->ev[i].t;
        if (t3->ev[i].kind == TRACE_HEAL) heal_t = t3->ev[i].t;
        if (t3->ev[i].kind == TRACE_ACQUIRED && t3->ev[i].node >= 0 &&
            strcmp(t3->nodes[t3->ev[i].node].name, "B") == 0 && b_acq_t < 0)
            b_acq_t = t3->ev[i].t;
    }
    assert_int_equal(cut_t, 4 * S);
    assert_int_equal(heal_t, 40 * S);
    /* B, on S1's side of the cut, gets the lock while the cut is on (in a
     * third group, cut from S1 too, it would wait for the heal) */
    assert_true(b_acq_t >= 31 * S && b_acq_t < 40 * S);
    assert_int_equal(engine_report(e3)->verdict, SCN_VERDICT_UNSAFE);
    engine_free(e3);
    viewmodel_close(&vm);
    engine_free(e);
}

/* At t=0 a click anywhere on a painted lane's row (from the grid line above
 * it to its own, as the window paints them) is a fault on that lane, never
 * on the one above or below. */
static void test_click_hits_painted_lane(void **state) {
    (void)state;
    struct engine *e = run_text(testutil_gc_story);
    const struct trace *tr = engine_trace(e);
    struct viewmodel vm;
    memset(&vm, 0, sizeof vm);
    assert_int_equal(viewmodel_load(&vm, &tr, NULL, 1, 1, 0), 0);
    viewmodel_update(&vm, 1280, 600);
    const struct scene *sc = &vm.scs[0];
    int x = scene_x_of(sc, 5 * S), rows = 0;
    for (size_t i = 0; i < sc->ncmd; i++) {
        const struct scene_cmd *g = &sc->cmd[i];
        if (g->type != SCENE_CMD_LINE || g->style != SCENE_ST_GRID || g->lane < 0) continue;
        const struct layout_lane *ln = &vm.lys[0].lanes[g->lane];
        if (ln->kind != TRACE_NODE_CLIENT && ln->kind != TRACE_NODE_SERVER) continue;
        char want[64];
        snprintf(want, sizeof want, "@5s pause %s 30s", ln->name);
        /* the row painted for the lane: lane_h pixels ending on its grid line */
        for (int y = g->y - vm.sv.lane_h + 1; y <= g->y; y++) {
            char line[160];
            int rc = viewmodel_fault_line(&vm, x, y, VIEWMODEL_FAULT_PAUSE, line, sizeof line, NULL);
            if (rc != 0 || strcmp(line, want) != 0) fail_msg("y=%d on %s's painted row: got '%s'", y, ln->name, line);
        }
        rows++;
    }
    assert_int_equal(rows, 3); /* A, B, S1 */
    viewmodel_close(&vm);
    engine_free(e);
}


/* The text scale: every size from one number, 100 the PNG's 18 px. */
static void test_scale_sizes(void **state) {
    (void)state;
    struct viewmodel_sizes z;
    /* Step 1: at 1.0 the sizes are scene_view_pixels' own. */
    viewmodel_sizes(100, &z);
    struct scene_view v;
    scene_view_pixels(&v, 1280, 0);
    assert_int_equal(z.text_px, 18);
    assert_int_equal(z.title_px, 26);
    assert_int_equal(z.char_w, v.char_w);
    assert_int_equal(z.line_h, v.line_h);
    assert_int_equal(z.lane_h, v.lane_h);
    assert_int_equal(z.margin, v.margin);
    assert_int_equal(z.narr_h, 26 * (VIEWMODEL_NARR_LINES + 2) + 14);
    /* Step 2: at 1.5 (a 1920x1080 projector) the text is 27 px, a line 39. */
    viewmodel_sizes(150, &z);
    assert_int_equal(z.text_px, 27);
    assert_int_equal(z.title_px, 39);
    assert_int_equal(z.char_w, 17); /* 0.602 x 27 = 16.3, rounded up */
    assert_int_equal(z.line_h, 39);
    assert_int_equal(z.lane_h, 60);
    /* Step 3: out of the limits, clamped. */
    viewmodel_sizes(1000, &z);
    assert_int_equal(z.scale_pct, VIEWMODEL_SCALE_MAX);
    assert_int_equal(z.text_px, 54);
    /* Step 4: Ctrl+= and Ctrl+- step by a quarter, to the next quarter from
     * between, and stop at the ends. */
    assert_int_equal(viewmodel_scale_step(100, 1), 125);
    assert_int_equal(viewmodel_scale_step(100, -1), 75);
    assert_int_equal(viewmodel_scale_step(130, -1), 125);
    assert_int_equal(viewmodel_scale_step(130, 1), 150);
    assert_int_equal(viewmodel_scale_step(75, -1), 75);
    assert_int_equal(viewmodel_scale_step(300, 1), 300);
    assert_int_equal(viewmodel_scale_step(250, 0), 100);
    /* Step 5: the scale a window opens with, from the screen. */
    assert_int_equal(viewmodel_scale_for_screen(720, 96), 100);
    assert_int_equal(viewmodel_scale_for_screen(800, 0), 100);
    assert_int_equal(viewmodel_scale_for_screen(1080, 96), 150);
    assert_int_equal(viewmodel_scale_for_screen(1440, 0), 200);
    assert_int_equal(viewmodel_scale_for_screen(2160, 96), 300);
    assert_int_equal(viewmodel_scale_for_screen(768, 144), 150); /* a small high-dpi screen */
    assert_int_equal(viewmodel_scale_for_screen(4320, 0), 300);
    /* Step 6: the bar under the scenes takes a third of the window at most:
     * 2.25 on 1080 lines (its 327 px), 1.5 on 720, and never below the least. */
    assert_int_equal(viewmodel_scale_fit(300, 1048), 225);
    assert_int_equal(viewmodel_scale_fit(150, 1048), 150);
    assert_int_equal(viewmodel_scale_fit(300, 720), 150);
    assert_int_equal(viewmodel_scale_fit(300, 100), VIEWMODEL_SCALE_MIN);
    viewmodel_sizes(225, &z);
    assert_true(z.narr_h * 3 <= 1048);
    viewmodel_sizes(250, &z);
    assert_true(z.narr_h * 3 > 1048);
    /* Step 7: the scenes built at 1.5 have its lanes and text. */
    struct engine *e = run_text(testutil_gc_story);
    const struct trace *tr = engine_trace(e);
    struct viewmodel vm;
    memset(&vm, 0, sizeof vm);
    assert_int_equal(viewmodel_load(&vm, &tr, NULL, 1, 1, 0), 0);
    viewmodel_update(&vm, 1920, 2000);
    int h100 = vm.content_h;
    assert_int_equal(vm.sv.lane_h, 40);
    viewmodel_set_scale(&vm, 150);
    assert_int_equal(viewmodel_update(&vm, 1920, 2000), 1);
    assert_int_equal(vm.sv.lane_h, 60);
    assert_int_equal(vm.sv.line_h, 39);
    assert_true(vm.content_h > h100 * 5 / 4);
    viewmodel_close(&vm);
    engine_free(e);
}

static const char knob_text[] = "title \"knobs\"\n"
                                "param pause=27s range=0s..55s   # A's GC pause\n"
                                "param  ttl=30s range=1s..60s\n"
                                "param jump=+10s\n"
                                "param n=3 range=1..5\n"
                                "lock lease ttl=$ttl\n"
                                "resource stock=$n fencing=off\n"
                                "duration 60s\n"
                                "client A: acquire; read; work 10s; write; release\n"
                                "client B @31s: acquire retry=1s; read; write; work 5s; release\n"
                                "@5s pause A $pause\n"
                                "@50s clock A step $jump\n";

/* A knob of a signed duration (a clock step's jump=+10s, as handout C turns
 * it): a slider too, its values written with their sign as the clock line
 * reads them, and the run at each end parses. */
static void test_signed_knob(void **state) {
    (void)state;
    static const char text[] = "param jump=+10s range=-5s..30s\n"
                               "lock lease ttl=10s\n"
                               "client A: acquire; work 5s; release\n"
                               "@1s clock S1 step $jump\n";
    struct scenario scn;
    struct scn_error err;
    scenario_init(&scn);
    assert_int_equal(scenario_parse(&scn, "j.lsim", text, strlen(text), &err), 0);
    /* Step 1: jump is a knob, at +10s */
    struct viewmodel_knob k[VIEWMODEL_KNOBS_MAX];
    assert_int_equal(viewmodel_knobs_of(&scn, k, VIEWMODEL_KNOBS_MAX), 1);
    assert_string_equal(k[0].name, "jump");
    assert_string_equal(k[0].value, "+10s");
    assert_int_equal(k[0].cur, 10 * S);
    assert_int_equal(k[0].min, -5 * S);
    /* Step 2: turned down, up and to either end, it keeps its sign */
    assert_int_equal(viewmodel_knob_set(&k[0], 6 * S), 1);
    assert_string_equal(k[0].value, "+6s");
    assert_int_equal(viewmodel_knob_set(&k[0], 0), 1);
    assert_string_equal(k[0].value, "+0s");
    assert_int_equal(viewmodel_knob_set(&k[0], -99 * S), 1);
    assert_string_equal(k[0].value, "-5s");
    /* Step 3: what the slider writes is what --set takes */
    assert_int_equal(scenario_set(&scn, "jump=-5s", &err), 0);
    assert_int_equal(scn.faults[0].delta_ns, -5 * S);
    assert_int_equal(viewmodel_knob_set(&k[0], 30 * S), 1);
    assert_int_equal(scenario_set(&scn, "jump=+30s", &err), 0);
    assert_string_equal(k[0].value, "+30s");
    assert_int_equal(scn.faults[0].delta_ns, 30 * S);
    scenario_close(&scn);
}

/* Knobs: the params with a range, a step of about a 50th of it, turned
 * within it, and the value written back into the text, the rest unchanged. */
static void test_knobs(void **state) {
    (void)state;
    struct scenario scn;
    struct scn_error err;
    scenario_init(&scn);
    assert_int_equal(scenario_parse(&scn, "k.lsim", knob_text, strlen(knob_text), &err), 0);
    /* Step 1: three knobs, jump (no range) is none. */
    struct viewmodel_knob k[VIEWMODEL_KNOBS_MAX];
    assert_int_equal(viewmodel_knobs_of(&scn, k, VIEWMODEL_KNOBS_MAX), 3);
    assert_string_equal(k[0].name, "pause");
    assert_string_equal(k[0].value, "27s");
    assert_int_equal(k[0].kind, VIEWMODEL_KNOB_DURATION);
    assert_int_equal(k[0].cur, 27 * S);
    assert_int_equal(k[0].min, 0);
    assert_int_equal(k[0].max, 55 * S);
    assert_int_equal(k[0].step, 1 * S); /* 55s / 50 = 1.1s: 1s */
    assert_string_equal(k[1].name, "ttl");
    assert_int_equal(k[1].step, 1 * S);
    assert_string_equal(k[2].name, "n");
    assert_int_equal(k[2].kind, VIEWMODEL_KNOB_INT);
    assert_int_equal(k[2].step, 1); /* 4 / 50: at least 1 */
    /* Step 2: turned down twice, pause is 25s; written as the language reads it. */
    assert_int_equal(viewmodel_knob_turn(&k[0], -1), 1);
    assert_int_equal(viewmodel_knob_turn(&k[0], -1), 1);
    assert_string_equal(k[0].value, "25s");
    /* Step 3: at the ends of the range it stops, and says so. */
    assert_int_equal(viewmodel_knob_set(&k[0], 999 * S), 1);
    assert_string_equal(k[0].value, "55s");
    assert_int_equal(viewmodel_knob_turn(&k[0], 1), 0);
    assert_int_equal(k[0].cur, 55 * S);
    assert_int_equal(viewmodel_knob_set(&k[0], 500 * 1000000LL), 1);
    assert_string_equal(k[0].value, "500ms");
    assert_int_equal(viewmodel_knob_turn(&k[0], -1), 1);
    assert_string_equal(k[0].value, "0s");
    assert_int_equal(viewmodel_knob_turn(&k[0], -1), 0);
    assert_int_equal(viewmodel_knob_turn(&k[2], 1), 1);
    assert_int_equal(viewmodel_knob_turn(&k[2], 1), 1);
    assert_int_equal(viewmodel_knob_turn(&k[2], 1), 0);
    assert_string_equal(k[2].value, "5");
    /* Step 4: the text with ttl's value replaced, every other byte kept,
     * and it parses to ttl=12s. */
    char *out = NULL;
    size_t olen = 0;
    assert_int_equal(viewmodel_param_edit(knob_text, strlen(knob_text), "ttl", "12s", &out, &olen), 0);
    assert_int_equal(olen, strlen(out));
    assert_non_null(strstr(out, "param  ttl=12s range=1s..60s\n"));
    assert_int_equal(olen, strlen(knob_text));
    assert_memory_equal(out, knob_text, strstr(knob_text, "30s range=1s") - knob_text);
    struct scenario s2;
    scenario_init(&s2);
    assert_int_equal(scenario_parse(&s2, "k2.lsim", out, olen, &err), 0);
    assert_string_equal(scenario_param(&s2, "ttl")->val, "12s");
    scenario_close(&s2);
    free(out);
    /* a value before a comment; a name that is only a prefix is not it */
    assert_int_equal(viewmodel_param_edit(knob_text, strlen(knob_text), "pause", "25s", &out, &olen), 0);
    assert_non_null(strstr(out, "param pause=25s range=0s..55s   # A's GC pause\n"));
    free(out);
    assert_int_equal(viewmodel_param_edit(knob_text, strlen(knob_text), "paus", "1s", &out, &olen), -1);
    assert_null(out);
    /* Step 5: in the view model: k picks the next knob, > turns it; the
     * front end takes what was turned once; the line lists the change. */
    struct viewmodel vm;
    memset(&vm, 0, sizeof vm);
    vm.knob_turned = -1;
    viewmodel_set_knobs(&vm, &scn);
    char line[400];
    viewmodel_knobs_line(&vm, line, sizeof line);
    assert_string_equal(line, "knobs (k next, < > turn):  [pause=27s]  ttl=30s  n=3");
    assert_int_equal(viewmodel_key("k"), VIEWMODEL_KNOB_NEXT);
    assert_int_equal(viewmodel_key("<"), VIEWMODEL_KNOB_DOWN);
    assert_int_equal(viewmodel_key(">"), VIEWMODEL_KNOB_UP);
    assert_int_equal(viewmodel_do(&vm, VIEWMODEL_KNOB_NEXT), 1);
    assert_int_equal(viewmodel_knob_taken(&vm), -1);
    assert_int_equal(viewmodel_do(&vm, viewmodel_key(">")), 1);
    assert_int_equal(viewmodel_knob_taken(&vm), 1);
    assert_int_equal(viewmodel_knob_taken(&vm), -1);
    assert_string_equal(vm.knobs[1].value, "31s");
    viewmodel_knobs_line(&vm, line, sizeof line);
    assert_string_equal(line, "knobs (k next, < > turn):  pause=27s  [ttl=31s (was 30s)]  n=3");
    /* the run again from the file so edited: the knob keeps its first value to show */
    struct scenario s3;
    scenario_init(&s3);
    assert_int_equal(viewmodel_param_edit(knob_text, strlen(knob_text), "ttl", "31s", &out, &olen), 0);
    assert_int_equal(scenario_parse(&s3, "k3.lsim", out, olen, &err), 0);
    viewmodel_set_knobs(&vm, &s3);
    viewmodel_knobs_line(&vm, line, sizeof line);
    assert_string_equal(line, "knobs (k next, < > turn):  pause=27s  [ttl=31s (was 30s)]  n=3");
    free(out);
    scenario_close(&s3);
    viewmodel_set_knobs(&vm, NULL);
    viewmodel_knobs_line(&vm, line, sizeof line);
    assert_string_equal(line, "");
    assert_int_equal(viewmodel_do(&vm, VIEWMODEL_KNOB_UP), 0);
    scenario_close(&scn);
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_reveal_and_words),
            cmocka_unit_test(test_keys),
            cmocka_unit_test(test_break_by_clicking),
            cmocka_unit_test(test_more_faults),
            cmocka_unit_test(test_click_hits_painted_lane),
            cmocka_unit_test(test_scale_sizes),
            cmocka_unit_test(test_knobs),
            cmocka_unit_test(test_signed_knob),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
