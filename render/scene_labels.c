/* Scene labels: where a label beside an arrow ("19.998s in flight", "lag
 * 2ms") goes in a picture so that it covers no badge, no text, no double
 * entry and no other label. The scene knows every rectangle it drew; a label takes the first
 * free place of a few along its arrow, or is left out. */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "scene_int.h"

/* Obstacles narrower than this are kept sorted by x and found by binary
 * search; wider ones (lines of text) are few and scanned. */
enum { NARROW_PX = 256, PAD_PX = 3 };

static int cmp_x0(const void *a, const void *b) {
    const struct scene_rect *p = a, *q = b;
    return p->x0 < q->x0 ? -1 : p->x0 > q->x0;
}

static int push(struct scene_rect **v, size_t *n, size_t *cap, struct scene_rect r) {
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 64;
        struct scene_rect *p = realloc(*v, nc * sizeof *p);
        if (!p) return LSIM_ENOMEM;
        *v = p;
        *cap = nc;
    }
    (*v)[(*n)++] = r;
    return 0;
}

/* The rectangle a command covers when painted, or 0 when it is no
 * obstacle: a lane's badge (not a minor tick), a text (with the box a
 * solid style paints around it, 4 px either side), or a double entry on
 * its row (the one colour nothing may hide). */
static int cmd_rect(const struct scene_cmd *k, struct scene_rect *r) {
    if (k->type == SCENE_CMD_RECT && k->style == SCENE_ST_DOUBLE) {
        *r = (struct scene_rect){k->x, k->y, k->x + k->w, k->y + k->h};
        return 1;
    }
    if (k->type == SCENE_CMD_SYM && k->lane >= 0 && !k->minor) {
        *r = (struct scene_rect){k->x - 1, k->y - 1, k->x + k->w + 1, k->y + k->h + 1};
        return 1;
    }
    if (k->type == SCENE_CMD_TEXT && k->w > 0) {
        *r = (struct scene_rect){k->x - 4, k->y, k->x + k->w + 4, k->y + k->h};
        return 1;
    }
    return 0;
}

int scene_labels_init(struct scene_labels *L, const struct scene *sc) {
    memset(L, 0, sizeof *L);
    for (size_t i = 0; i < sc->ncmd; i++) {
        struct scene_rect r;
        if (!cmd_rect(&sc->cmd[i], &r)) continue;
        int rc = r.x1 - r.x0 <= NARROW_PX ? push(&L->narrow, &L->nnarrow, &L->capnarrow, r)
                                          : push(&L->wide, &L->nwide, &L->capwide, r);
        if (rc) return rc;
    }
    qsort(L->narrow, L->nnarrow, sizeof *L->narrow, cmp_x0);
    L->ready = 1;
    return 0;
}

void scene_labels_close(struct scene_labels *L) {
    free(L->narrow);
    free(L->wide);
    memset(L, 0, sizeof *L);
}

static int meets(const struct scene_rect *a, const struct scene_rect *b) {
    return a->x0 < b->x1 && b->x0 < a->x1 && a->y0 < b->y1 && b->y0 < a->y1;
}

int scene_labels_free(const struct scene_labels *L, struct scene_rect r) {
    struct scene_rect p = {r.x0 - PAD_PX, r.y0 - 1, r.x1 + PAD_PX, r.y1 + 1};
    for (size_t i = 0; i < L->nwide; i++)
        if (meets(&p, &L->wide[i])) return 0;
    /* the first narrow one that could reach p: x0 >= p.x0 - NARROW_PX */
    size_t a = 0, b = L->nnarrow;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (L->narrow[m].x0 < p.x0 - NARROW_PX) a = m + 1;
        else b = m;
    }
    for (size_t i = a; i < L->nnarrow && L->narrow[i].x0 < p.x1; i++)
        if (meets(&p, &L->narrow[i])) return 0;
    return 1;
}

int scene_labels_place(struct scene_labels *L, const struct scene *sc, int ax, int ay, int bx, int by, int w, int h,
                       int *x, int *y) {
    /* along the arrow from its middle outwards, above it, then below it */
    static const int per_mille[] = {500, 400, 600, 300, 700, 200, 800};
    int lo = sc->plot_x, hi = sc->plot_x + sc->plot_w - w;
    if (hi < lo) return 0;
    for (int side = 0; side < 2; side++)
        for (size_t i = 0; i < sizeof per_mille / sizeof per_mille[0]; i++) {
            int px = ax + (bx - ax) * per_mille[i] / 1000, py = ay + (by - ay) * per_mille[i] / 1000;
            int cx = px - w / 2, cy = side == 0 ? py - h - 2 : py + 2;
            if (cx < lo) cx = lo;
            if (cx > hi) cx = hi;
            struct scene_rect r = {cx, cy, cx + w, cy + h};
            if (!scene_labels_free(L, r)) continue;
            if (push(&L->wide, &L->nwide, &L->capwide, (struct scene_rect){r.x0 - 4, r.y0, r.x1 + 4, r.y1}))
                return LSIM_ENOMEM;
            *x = cx;
            *y = cy;
            return 1;
        }
    return 0;
}
