/* Safety-region heatmaps for `locksim sweep`: one panel per algorithm on
 * shared axes (one varied key, or two; a third makes one facet per value of
 * it, a fourth a section of facets per value), one cell per grid point, coloured by
 * the outcomes of its runs: safe, double entry without damage, damage (a
 * stale write accepted or a lost update), stuck. When the seeds of a cell
 * disagree, its colour is the mix of their colours weighted by count and it
 * is labelled with the share of seeds with damage (the verdict's UNSAFE). Plain data in, SVG text
 * out; the caller owns every pointer. */
#ifndef LOCKSIM_HEATMAP_SVG_H
#define LOCKSIM_HEATMAP_SVG_H

#include <stdio.h>

#include "checker.h"

enum heatmap_class {
    HEATMAP_SAFE,    /* never two clients in the critical section */
    HEATMAP_OVERLAP, /* double entry, but no stale write accepted and no lost update */
    HEATMAP_DAMAGE,  /* a stale write accepted or an update lost */
    HEATMAP_STUCK,   /* a client stuck on a lock whose owner crashed */
    HEATMAP_ERROR,   /* the run could not be made */
    HEATMAP_NCLASS
};

/* The class of one finished run from its report (damage first, then stuck,
 * then overlap); HEATMAP_ERROR when failed is non-zero. */
enum heatmap_class heatmap_classify(const struct checker_report *r, int failed);
/* "safe", "double-entry", "damage", "stuck", "error". */
const char *heatmap_class_name(enum heatmap_class c);

struct heatmap_cell {
    int count[HEATMAP_NCLASS]; /* runs (seeds) of each class */
};

struct heatmap {
    const char *title;         /* the scenario's title (its `title` line) */
    const char *subtitle;      /* the scenario's file name, small under the title, or NULL */
    const char *x_key;         /* the first varied key */
    const char *y_key;         /* the second, or NULL for one axis */
    const char *const *x_vals; /* nx labels */
    int nx;
    const char *const *y_vals; /* ny labels (ny = 1 and y_vals NULL for one axis) */
    int ny;
    const char *z_key;         /* the third varied key (one facet per value), or NULL */
    const char *const *z_vals; /* nz labels (nz = 1 and z_vals NULL without it) */
    int nz;
    const char *w_key;         /* the fourth (a section of facets per value), or NULL; needs z_key */
    const char *const *w_vals; /* nw labels (nw = 1 and w_vals NULL without it) */
    int nw;
    const char *const *panels; /* npanels algorithm names */
    int npanels;
    const struct heatmap_cell *cells; /* [panel][w][z][y][x], npanels * nw * nz * ny * nx */
};

/* The cell's fill as "#rrggbb" (8 bytes with the NUL): the class colour
 * when every run agrees, else the count-weighted mix. */
void heatmap_cell_color(const struct heatmap_cell *c, char out[8]);
/* Over the runs that ran, in [0, 1]: the share with damage (a stale write
 * accepted, an update lost: what the verdict calls UNSAFE), and the share
 * with two clients inside and no damage (double entry, e.g. fenced: the
 * verdict says SAFE). Never one number for both: a fenced run is not unsafe. */
double heatmap_damage_fraction(const struct heatmap_cell *c);
double heatmap_overlap_fraction(const struct heatmap_cell *c);

/* The class colour as 0xRRGGBB. */
unsigned heatmap_class_rgb(enum heatmap_class c);

/* The picture's geometry, in pixels (SVG user units), one for both the SVG
 * and the PNG (gfx/heatmap_png.c): a title, panels side by side (cells
 * HEATMAP_CELL_W x HEATMAP_CELL_H, x along the first key, y down the
 * second), the x axis under each panel, the y axis left of the first of each
 * row, and one legend under them all. The panels come in bands: without a
 * third key one band, a panel per algorithm; with one (faceted), a band per
 * algorithm (its name above it), a panel per value of the third key
 * ("KEY3=V" above it), and with a fourth key a section of such bands per
 * value of it ("KEY4=V" above). A band wraps into rows when it would make the
 * picture wider than HEATMAP_MAX_WIDTH, and each band starts a row. Text
 * positions are baselines. */
enum {
    HEATMAP_CELL_W = 28,
    HEATMAP_CELL_H = 22,
    HEATMAP_LEFT = 90,
    HEATMAP_TOP = 56,
    HEATMAP_GAP = 40,
    HEATMAP_MAX_WIDTH = 1600,  /* wider, and the panels wrap into rows */
    HEATMAP_ROW_GAP = 64,      /* from a row's cells to the next row's */
    HEATMAP_LABEL_DROP = 12,   /* staggered x labels: every other one this much lower */
    HEATMAP_LABEL_CHAR_PX = 7, /* a label character's width, about, at HEATMAP_TEXT_PX */
    HEATMAP_BAND_HEAD = 28,    /* faceted: room for a band's algorithm name, above its first row */
    HEATMAP_SECTION_HEAD = 34, /* four keys: room for a section's "KEY4=V", above its first band */
    HEATMAP_BOTTOM = 84,
    HEATMAP_LABEL_EVERY_PX = 40,
    HEATMAP_TITLE_Y = 20,
    HEATMAP_SUBTITLE_Y = 34,
    HEATMAP_LEGEND_STEP = 110,
    HEATMAP_SWATCH = 12,
    /* font sizes in px: title, other text, the mixed cells' percentages, the footnote */
    HEATMAP_TITLE_PX = 14,
    HEATMAP_TEXT_PX = 11,
    HEATMAP_CELL_PX = 8,
    HEATMAP_NOTE_PX = 9,
    HEATMAP_BAND_PX = 12,    /* faceted: a band's algorithm name, bold */
    HEATMAP_SECTION_PX = 14, /* four keys: a section's "KEY4=V", bold, under a grey rule */
    HEATMAP_RULE_RGB = 0xbbbbbb
};
struct heatmap_geom {
    int nx, ny;        /* cells across and down a panel */
    int nz, nw;        /* values of the third and fourth keys (1 without them) */
    int faceted;       /* 1 with a third key */
    int sectioned;     /* 1 with a fourth */
    int pw, ph;        /* a panel's cells, in pixels */
    int stride;        /* from a panel's left edge to the next one's in a row */
    int width, height; /* the whole picture */
    int every;         /* an x label every this many cells */
    int nalgos;        /* the algorithms (h->npanels, at least 1) */
    int npanels;       /* panels drawn: h->npanels x nz x nw */
    int per_band;      /* panels in a band: nz when faceted, else the algorithms */
    int band_rows;     /* rows a band takes */
    int cols, rows;    /* panels per row, and rows of panels */
    int drop;          /* 0, or HEATMAP_LABEL_DROP when the x labels are staggered */
    int foot;          /* the bottom of the last row's cells (and dropped labels) */
};
void heatmap_geom(const struct heatmap *h, struct heatmap_geom *g);
/* Whether the x axis labels value x: every value of a list with a word in
 * it (--vary mode=a,b,c), and of numbers every g->every-th, always the
 * first and the last (a thinned label too close to the last is left out). */
int heatmap_x_labelled(const struct heatmap *h, const struct heatmap_geom *g, int x);
/* Panel p (0 <= p < g->npanels, in drawing order: sections, then the bands
 * of algorithms, then facets): its algorithm, and its values of the third
 * and fourth keys (0 without them). */
void heatmap_panel_of(const struct heatmap *h, const struct heatmap_geom *g, int p, int *algo, int *z, int *w);
/* Panel p's cells, [y][x] (borrowed from h->cells). */
const struct heatmap_cell *heatmap_panel_cells(const struct heatmap *h, const struct heatmap_geom *g, int p);
/* Baselines, under a panel whose cells start at y0, of x label x and of
 * the x key. Every value of a list of words is labelled; when one of them
 * is wider than a cell (at HEATMAP_LABEL_CHAR_PX a character), the labels
 * are staggered, every other one HEATMAP_LABEL_DROP lower, so that
 * neighbours do not run together ("+10s+15s"). */
static inline int heatmap_x_label_y(const struct heatmap_geom *g, int y0, int x) {
    return y0 + g->ph + 14 + (x % 2 ? g->drop : 0);
}
static inline int heatmap_x_key_y(const struct heatmap_geom *g, int y0) { return y0 + g->ph + 30 + g->drop; }
/* Left edge of panel p's cells. */
int heatmap_panel_x(const struct heatmap_geom *g, int p);
/* Top edge of panel p's cells. */
int heatmap_panel_y(const struct heatmap_geom *g, int p);
/* Whether panel p starts a row (its y axis is drawn on its left), a band
 * (faceted: the algorithm's name above), a section (four keys: "KEY4=V" above). */
int heatmap_panel_starts_row(const struct heatmap_geom *g, int p);
int heatmap_panel_starts_band(const struct heatmap_geom *g, int p);
int heatmap_panel_starts_section(const struct heatmap_geom *g, int p);
/* Baselines, above panel p's cells, of its band's and its section's
 * headings; a section after the first has a 1-pixel rule across the
 * picture HEATMAP_SECTION_PX + 6 above its heading's baseline. */
static inline int heatmap_band_head_y(const struct heatmap_geom *g, int p) { return heatmap_panel_y(g, p) - 32; }
static inline int heatmap_section_head_y(const struct heatmap_geom *g, int p) { return heatmap_panel_y(g, p) - 60; }
/* Panel p's title: the algorithm, or faceted "KEY3=V" (cut to n bytes). */
void heatmap_panel_title(const struct heatmap *h, const struct heatmap_geom *g, int p, char *buf, size_t n);
/* The footnote under the legend. */
#define HEATMAP_NOTE "a mixed cell is the seeds' colours mixed, labelled with the share of seeds with damage (UNSAFE)"

/* Write the whole SVG document. Returns 0, or -1 on a write error. */
int heatmap_svg_write(FILE *f, const struct heatmap *h);

#endif
