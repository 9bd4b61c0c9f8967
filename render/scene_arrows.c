/* Scene arrows: the lines drawn between lanes. Each message whose flight
 * shows (sender's lane at sending to receiver's at arrival, or a cross where
 * it was dropped) and each copy from a primary's grant to a replica, with
 * the labels that say how long they took, placed clear of the badges. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fmt.h"
#include "scene_int.h"

/* A place for an arrow's label of w units beside the arrow, clear of the
 * badges, texts and labels drawn so far (the obstacles are gathered at the
 * first label). Returns 1 with its top-left corner in *x, *y, or 0: no free
 * place, the label is left out (also on LSIM_ENOMEM, which goes to sc->err). */
static int arrow_label(struct scene_ctx *c, struct scene_labels *L, int ax, int ay, int bx, int by, int w, int *x,
                       int *y) {
    if (!L->ready) {
        int rc = scene_labels_init(L, c->sc);
        if (rc) {
            c->sc->err = rc;
            return 0;
        }
    }
    int rc = scene_labels_place(L, c->sc, ax, ay, bx, by, w, c->v->line_h, x, y);
    if (rc < 0) c->sc->err = rc;
    return rc == 1;
}

/* With an index, the first message whose running largest arrival reaches
 * the window at t0 (the ones before all end before it); else 0. */
static size_t first_msg(const struct scene_lod *lod, const struct layout *ly, sim_ns t0) {
    if (!lod || !lod->msg_max_t1) return 0;
    size_t a = 0, b = ly->nmsgs;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (lod->msg_max_t1[mid] < t0) a = mid + 1;
        else b = mid;
    }
    return a;
}

/* On a linear axis a flight shorter than this spans at most a few cell
 * edges, too few for the two characters an arrow needs: such a message is
 * left out without placing it. 0 where the axis has gaps. */
static sim_ns short_flight_ns(const struct scene *sc, const struct scene_view *v) {
    int pxc = sc->axis.ncells > 0 ? sc->plot_w / sc->axis.ncells : 0;
    if (sc->ngaps || sc->axis.cell_ns <= 0 || pxc <= 0) return 0;
    /* x1 - x0 <= pxc * (dt / cell_ns + 1) < 2 * char_w when dt < cells * cell_ns */
    sim_ns cells = (2 * v->char_w - 1) / pxc;
    return cells * sc->axis.cell_ns;
}

/* The arrow's text: who sent it to whom, when, and how it ended (len: its
 * time in flight, formatted). */
static void describe_msg(char *buf, size_t n, const struct layout *ly, const struct layout_msg *m, const char *len) {
    static const char *const why[] = {"", " (partition)", " (lost on the link)", " (receiver down)"};
    char t0[32], t1[32];
    format_time_ns(t0, sizeof t0, m->t0);
    format_time_ns(t1, sizeof t1, m->t1);
    if (m->fate == 1)
        snprintf(buf, n, "message %s -> %s sent t=%s, dropped t=%s%s", scene_node_name(ly, m->from),
                 scene_node_name(ly, m->to), t0, t1, m->drop < 4 ? why[m->drop] : "");
    else
        snprintf(buf, n, "message %s -> %s sent t=%s, %s t=%s (%s in flight)", scene_node_name(ly, m->from),
                 scene_node_name(ly, m->to), t0, m->fate == 2 ? "still in flight at" : "arrives", t1, len);
}

/* Copies to replicas: from the primary's grant of the same owner and
 * token (the latest before the copy) to the replica's copy, with the
 * replication lag written beside it when there is room. */
static void emit_copies(struct scene_ctx *c, struct scene_labels *labels, const struct scene_lod *lod) {
    const struct layout *ly = c->ly;
    struct scene *sc = c->sc;
    const struct scene_view *v = c->v;
    char len[32], buf[256];
    for (int r = 0; r < ly->nlanes && !sc->err; r++) {
        const struct layout_lane *rl = &ly->lanes[r];
        if (c->lane_y[r] < 0 || (lod && !lod->lanes[r].ncopies)) continue; /* the index knows it has none */
        for (size_t i = 0; i < rl->nmarks; i++) {
            const struct layout_mark *cp = &rl->marks[i];
            if (cp->kind != LAYOUT_MARK_REPL_COPY || cp->t < sc->t0 || cp->t > sc->t1) continue;
            const struct layout_mark *src = NULL;
            int src_lane = -1;
            for (int p = 0; p < ly->nlanes; p++) {
                const struct layout_lane *pl = &ly->lanes[p];
                if (p == r || c->lane_y[p] < 0) continue;
                for (size_t j = 0; j < pl->nmarks && pl->marks[j].t <= cp->t; j++) {
                    const struct layout_mark *gm = &pl->marks[j];
                    if (gm->kind == LAYOUT_MARK_GRANT && gm->peer == cp->peer && gm->token == cp->token &&
                        (!src || gm->t >= src->t))
                        src = gm, src_lane = p;
                }
            }
            if (!src) continue;
            int x0 = scene_x_of(sc, src->t), x1 = scene_x_of(sc, cp->t);
            int ya = c->lane_y[src_lane], yb = c->lane_y[r], e = v->line_h / 2 + 1;
            ya += yb > ya ? e : -e;
            yb += yb > ya ? -e : e;
            struct scene_cmd *k = scene_add(c, SCENE_CMD_LINE, SCENE_ST_REPLICATION, x0, ya, 0, 0);
            if (!k) break;
            k->x2 = x1;
            k->y2 = yb;
            k->t0 = src->t;
            k->t1 = cp->t;
            format_time_ns(len, sizeof len, cp->t - src->t);
            snprintf(buf, sizeof buf, "%s replicates %s's grant (token %llu) to %s: lag %s",
                     rl == &ly->lanes[src_lane] ? "?" : ly->lanes[src_lane].name, scene_node_name(ly, cp->peer),
                     (unsigned long long)cp->token, rl->name, len);
            scene_set_text(c, k, buf, strlen(buf));
            c->used_extra[SCENE_USED_REPL - SCENE_USED_CLOCK] = 1;
            snprintf(buf, sizeof buf, "lag %s", len);
            int w = (int)strlen(buf) * v->char_w, label_x, label_y;
            if (x1 - x0 >= w + 2 * v->char_w && arrow_label(c, labels, x0, ya, x1, yb, w, &label_x, &label_y)) {
                struct scene_cmd *t = scene_text_n(c, label_x, label_y, buf, strlen(buf), SCENE_ST_REPLICATION);
                if (t) t->t0 = src->t, t->t1 = cp->t;
            }
        }
    }
}

/* Arrows for the messages whose flight shows: sender's lane at the sending
 * time to the receiver's at the arrival (or to the edge, still in flight).
 * Dropped messages and the instantaneous ones are left out; at most 64.
 * Then the copies to replicas (emit_copies). */
void scene_emit_arrows(struct scene_ctx *c) {
    const struct layout *ly = c->ly;
    struct scene *sc = c->sc;
    const struct scene_view *v = c->v;
    char len[32], buf[256];
    int shown = 0;
    uint8_t saved = c->layer;
    c->layer = SCENE_LAYER_EXTRA;
    /* per sender: the x just after its last dropped arrow, so that a fan of
     * drops at once (a request to five servers, all lost) is one arrow */
    int *drop_end = calloc(ly->nlanes > 0 ? (size_t)ly->nlanes : 1, sizeof *drop_end);
    /* per receiver: the arrival of its last labelled arrow, so that a fan of
     * replies landing at once (five servers' grants after a pause) carries
     * one "in flight" label, not five stacked over the lanes */
    sim_ns *label_t1 = malloc((ly->nlanes > 0 ? (size_t)ly->nlanes : 1) * sizeof *label_t1);
    if (!drop_end || !label_t1) {
        free(drop_end);
        free(label_t1);
        sc->err = LSIM_ENOMEM;
        return;
    }
    for (int i = 0; i < ly->nlanes; i++) label_t1[i] = -1;
    struct scene_labels labels; /* gathered at the first label */
    memset(&labels, 0, sizeof labels);
    const struct scene_lod *lod = v->lod && v->lod->ly == ly ? v->lod : NULL;
    size_t first = first_msg(lod, ly, sc->t0);
    sim_ns short_ns = short_flight_ns(sc, v);
    for (size_t i = first; i < ly->nmsgs && shown < 64; i++) {
        const struct layout_msg *m = &ly->msgs[i];
        if (m->t0 > sc->t1) break; /* in order of sending: the rest start later */
        /* With an index, zoomed out: a whole block of flights too short to
         * show (none dropped, all sent within the window) is passed over. */
        if (lod && lod->msg_block_dur && i % SCENE_LOD_MSG_BLOCK == 0 && i + SCENE_LOD_MSG_BLOCK <= ly->nmsgs &&
            lod->msg_block_dur[i / SCENE_LOD_MSG_BLOCK] < short_ns &&
            ly->msgs[i + SCENE_LOD_MSG_BLOCK - 1].t0 <= sc->t1) {
            i += SCENE_LOD_MSG_BLOCK - 1;
            continue;
        }
        if (m->fate != 1 && m->t1 - m->t0 < short_ns) continue;
        if (m->from < 0 || m->to < 0 || m->from >= ly->nlanes || m->to >= ly->nlanes) continue;
        if (c->lane_y[m->from] < 0 || c->lane_y[m->to] < 0 || m->t1 < sc->t0 || m->t0 > sc->t1) continue;
        int x0 = scene_x_of(sc, m->t0), x1 = scene_x_of(sc, m->t1), drop = m->fate == 1;
        /* drops between servers (a replication stream to a primary that is
         * down) are chatter; those to and from clients tell the story */
        if (drop && ly->lanes[m->from].kind == TRACE_NODE_SERVER && ly->lanes[m->to].kind == TRACE_NODE_SERVER)
            continue;
        if (!drop && x1 - x0 < 2 * v->char_w) continue;
        if (drop && drop_end[m->from] && x0 < drop_end[m->from]) continue;
        if (drop && x1 - x0 < 2 * v->char_w) { /* lost at once: drawn two characters long, still with its cross */
            x1 = x0 + 2 * v->char_w;
            if (x1 > sc->plot_x + sc->plot_w) x1 = sc->plot_x + sc->plot_w;
        }
        /* from the edge of the sender's bar to the edge of the receiver's
         * badge; a dropped one too, crossed there: it points at the node it
         * never reached (halfway, it read as a message to the lane between) */
        int ya = c->lane_y[m->from], yb = c->lane_y[m->to], e = v->line_h / 2 + 1;
        if (ya != yb) {
            ya += yb > ya ? e : -e;
            yb += yb > ya ? -e : e;
        }
        struct scene_cmd *k = scene_add(c, SCENE_CMD_LINE, drop ? SCENE_ST_DROP : SCENE_ST_MESSAGE, x0, ya, 0, 0);
        if (!k) break;
        k->x2 = x1;
        k->y2 = yb;
        k->t0 = m->t0;
        k->t1 = m->t1;
        k->seq = -1;
        format_time_ns(len, sizeof len, m->t1 - m->t0);
        describe_msg(buf, sizeof buf, ly, m, len);
        scene_set_text(c, k, buf, strlen(buf));
        shown++;
        if (drop) {
            c->used_extra[SCENE_USED_DROP - SCENE_USED_CLOCK] = 1;
            drop_end[m->from] = x0 + 2 * v->char_w;
            continue;
        }
        /* a long flight gets its length written beside the middle of the arrow
         * (once for a fan that lands on one receiver at one instant) */
        snprintf(buf, sizeof buf, "%s in flight", len);
        int w = (int)strlen(buf) * v->char_w, label_x, label_y;
        if (x1 - x0 >= w + 4 * v->char_w && label_t1[m->to] != m->t1 &&
            arrow_label(c, &labels, x0, ya, x1, yb, w, &label_x, &label_y)) {
            label_t1[m->to] = m->t1;
            struct scene_cmd *t = scene_text_n(c, label_x, label_y, buf, strlen(buf), SCENE_ST_MESSAGE);
            if (t) t->t0 = m->t0, t->t1 = m->t1;
        }
    }
    emit_copies(c, &labels, lod);
    free(drop_end);
    free(label_t1);
    scene_labels_close(&labels);
    c->layer = saved;
}
