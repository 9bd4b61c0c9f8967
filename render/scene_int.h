/* Scene internals, private to render/scene*.c: the symbol table, the
 * building context, and the helpers the emitters share (scene.c: storage,
 * text, legend, banner, panels; scene_axis.c: time to cells and the axis;
 * scene_lanes.c: lanes, badges, pixel detail; scene_arrows.c: messages and
 * replication; scene_lists.c: the double-entry row, the writes).
 * No backend includes this. */
#ifndef LOCKSIM_SCENE_INT_H
#define LOCKSIM_SCENE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "layout.h"
#include "scene.h"

/* A symbol: the terminal's character, its style, the priority of an instant
 * (higher wins a shared cell; 0 = an interval fill) and the legend text. */
struct scene_sym_info {
    char ch;
    uint8_t style;
    uint8_t prio;
    const char *text;
};
extern const struct scene_sym_info scene_syms[SCENE_SYM_COUNT];

/* What one scene_build call carries; the per-cell arrays are owned by it. */
struct scene_ctx {
    struct scene *sc;
    const struct layout *ly;
    const struct scene_view *v;
    int x0;                                          /* left edge (margin) */
    int cols;                                        /* characters per line */
    int lw;                                          /* label column, characters, including one space */
    int y;                                           /* next free y */
    uint8_t layer;                                   /* layer of commands being added */
    uint8_t *fill;                                   /* per cell: interval symbol */
    uint8_t *bits;                                   /* per cell: interval flags */
    uint8_t *win;                                    /* per cell: winning instant symbol (NONE = none) */
    uint8_t *winst;                                  /* per cell: its style */
    size_t *winm;                                    /* per cell: its mark index */
    int used[SCENE_SYM_COUNT];                       /* symbols that reached a lane row */
    int used_stale;                                  /* a stale write accepted was drawn */
    int used_extra[SCENE_USED_N - SCENE_USED_CLOCK]; /* SCENE_USED_CLOCK ...: drawn */
    int lanes_end;                                   /* y under the last lane drawn */
    int *lane_y;                                     /* per lane: the y of its middle, or -1 when not drawn */
};

/* The level-of-detail index (scene_lanes.c). */
#define SCENE_LOD_MSG_BLOCK 64
/* A lane's buckets are the leaves of a pyramid: node j of level L (0 =
 * the buckets, 16 = the whole run) sums buckets j 2^L .. (j + 1) 2^L - 1,
 * at index scene_lod_node(L, j) of bits, win and sym: the flags ORed and
 * the mark that wins them all (the highest priority, the latest on a
 * tie, as a cell's winner is chosen), so that a window's cell costs the
 * O(log) nodes that tile its buckets instead of every bucket. */
#define SCENE_LOD_LEVELS 16 /* SCENE_LOD_BUCKETS = 2^16 */
#define SCENE_LOD_NODES (2 * SCENE_LOD_BUCKETS - 1)
#define SCENE_LOD_STALE 0x80 /* in sym[]: the winner is a stale write accepted */
struct scene_lod_lane {
    sim_ns *span_max_t1; /* per span: the largest t1 of spans 0 .. i; NULL = no spans */
    uint8_t *bits;       /* per node: interval flags; NULL = the lane is small */
    uint32_t *win;       /* per node: the winning mark's index + 1, 0 = none */
    uint8_t *sym;        /* per node: the winner's symbol, | SCENE_LOD_STALE */
    size_t ncopies;      /* marks that are copies to a replica (LAYOUT_MARK_REPL_COPY) */
};
/* Index of node j of level lv: the levels one after another, the buckets first. */
static inline size_t scene_lod_node(int lv, size_t j) {
    return 2 * (size_t)SCENE_LOD_BUCKETS - (2 * (size_t)SCENE_LOD_BUCKETS >> lv) + j;
}
struct scene_lod {
    const struct layout *ly;      /* the layout it indexes (borrowed) */
    sim_ns bucket_ns;             /* true time per bucket (t_end / buckets, rounded up) */
    struct scene_lod_lane *lanes; /* owned, ly->nlanes */
    sim_ns *msg_max_t1;           /* per message (ly->msgs order): the largest t1 of
                                     messages 0 .. i; NULL = no messages */
    sim_ns *msg_block_dur;        /* per block of SCENE_LOD_MSG_BLOCK messages: the longest
                                     flight (t1 - t0) in it, or INT64_MAX when one of
                                     them is dropped (always drawn); NULL = no messages */
    size_t bytes;
};

/* Storage and text (scene.c). scene_add returns NULL once sc->err is set. */
struct scene_cmd *scene_add(struct scene_ctx *c, int type, int style, int x, int y, int w, int h);
size_t scene_store(struct scene_ctx *c, const char *s, size_t len);
void scene_set_text(struct scene_ctx *c, struct scene_cmd *k, const char *s, size_t len);
struct scene_cmd *scene_text_n(struct scene_ctx *c, int x, int y, const char *s, size_t len, int style);
struct scene_cmd *scene_text_at(struct scene_ctx *c, int col, int y, const char *s, int style);
void scene_wrapped(struct scene_ctx *c, int col, int indent, const char *text, int style);
const char *scene_node_name(const struct layout *ly, int n);
int scene_lane_shown(const struct scene_view *v, int l);

/* Time to cells and the axis (scene_axis.c). */
int scene_span_cells(const struct scene *sc, sim_ns t0, sim_ns t1, int open, int *c0, int *c1);
void scene_min_cells(const struct scene_ctx *c, int *c0, int *c1);
int scene_mark_cell(const struct scene *sc, sim_ns t);
int scene_in_gap(const struct scene *sc, sim_ns t);
sim_ns scene_fit_end(const struct layout *ly);
int scene_find_gaps(struct scene *sc, const struct layout *lys, size_t nly, int max);
int scene_fit_axis(struct scene_ctx *c, int max_cells, const struct layout *gap_src, size_t ngap_src);
void scene_emit_axis(struct scene_ctx *c);

/* Lanes (scene_lanes.c), the arrows between them (scene_arrows.c) and the
 * lists under them (scene_lists.c). */
void scene_emit_lane(struct scene_ctx *c, const struct layout_lane *lane, int lane_idx);
void scene_emit_arrows(struct scene_ctx *c);
void scene_emit_doubles(struct scene_ctx *c);
void scene_emit_promotions(struct scene_ctx *c, const struct layout_lane *lane);
void scene_emit_writes(struct scene_ctx *c, const struct layout_lane *lane);

/* Label placement in pictures (scene_labels.c): the rectangles a label
 * must not cover (badges, texts, double entries, labels placed), taken
 * from a scene. */
struct scene_rect {
    int x0, y0, x1, y1; /* [x0, x1) x [y0, y1), units */
};
struct scene_labels {
    struct scene_rect *narrow; /* owned: sorted by x0, each at most 256 wide */
    size_t nnarrow, capnarrow;
    struct scene_rect *wide; /* owned: wider ones and the labels placed */
    size_t nwide, capwide;
    int ready; /* gathered */
};
/* The obstacles of every command of sc so far (ready set). Returns 0 or LSIM_ENOMEM;
 * close with scene_labels_close in either case (also safe on a zeroed one). */
int scene_labels_init(struct scene_labels *L, const struct scene *sc);
void scene_labels_close(struct scene_labels *L);
/* 1 when r, with a few pixels around it, meets no obstacle. */
int scene_labels_free(const struct scene_labels *L, struct scene_rect r);
/* A place for a w x h label beside the arrow (ax, ay) -> (bx, by) inside the
 * plot's width: above the arrow at its middle, else further along it either
 * way, else below it. On success *x, *y is its top-left corner, it becomes
 * an obstacle, and the result is 1; 0 = no free place (leave the label
 * out); LSIM_ENOMEM. */
int scene_labels_place(struct scene_labels *L, const struct scene *sc, int ax, int ay, int bx, int by, int w, int h,
                       int *x, int *y);

#endif
