/* Safety-region heatmap as SVG (heatmap_svg.h): panels side by side, x
 * along the first varied key, y down the second, a legend below. */
#include "heatmap_svg.h"

#include <string.h>

static const struct {
    const char *name;
    unsigned rgb;
} classes[HEATMAP_NCLASS] = {
        [HEATMAP_SAFE] = {"safe", 0xa6dcf0},     [HEATMAP_OVERLAP] = {"double-entry", 0xf0e442},
        [HEATMAP_DAMAGE] = {"damage", 0xc0392b}, [HEATMAP_STUCK] = {"stuck", 0x762a83},
        [HEATMAP_ERROR] = {"error", 0x212121},
};

enum heatmap_class heatmap_classify(const struct checker_report *r, int failed) {
    if (failed) return HEATMAP_ERROR;
    if (r->stale_accepted > 0 || r->lost_updates > 0) return HEATMAP_DAMAGE;
    if (r->stuck > 0) return HEATMAP_STUCK;
    if (r->double_entries > 0) return HEATMAP_OVERLAP;
    return HEATMAP_SAFE;
}

unsigned heatmap_class_rgb(enum heatmap_class c) { return c < HEATMAP_NCLASS ? classes[c].rgb : 0x212121; }

/* Whether the x values are a list with a word in it (each is labelled). */
static int has_words(const struct heatmap *h) {
    for (int i = 0; i < h->nx; i++) {
        const char *v = h->x_vals[i] + (h->x_vals[i][0] == '-');
        if (*v < '0' || *v > '9') return 1;
    }
    return 0;
}

void heatmap_geom(const struct heatmap *h, struct heatmap_geom *g) {
    g->nx = h->nx;
    g->ny = h->ny > 0 ? h->ny : 1;
    g->faceted = h->z_key != NULL;
    g->nz = g->faceted && h->nz > 0 ? h->nz : 1;
    g->nw = g->faceted && h->w_key && h->nw > 0 ? h->nw : 1;
    g->nalgos = h->npanels > 0 ? h->npanels : 1;
    g->sectioned = g->faceted && h->w_key != NULL;
    g->npanels = (h->npanels > 0 ? h->npanels : 0) * g->nz * g->nw;
    g->per_band = g->faceted ? g->nz : g->nalgos;
    g->pw = g->nx * HEATMAP_CELL_W;
    g->ph = g->ny * HEATMAP_CELL_H;
    g->cols = g->per_band;
    /* From a panel's left edge to the next's: its cells and a gap, or
     * faceted, at least its "KEY3=V" title and 12 px (at
     * HEATMAP_LABEL_CHAR_PX a character), so titles do not run together. */
    g->stride = g->pw + HEATMAP_GAP;
    for (int z = 0; g->faceted && z < g->nz; z++) {
        int w = (int)(strlen(h->z_key) + 1 + strlen(h->z_vals[z])) * HEATMAP_LABEL_CHAR_PX + 12;
        if (g->stride < w) g->stride = w;
    }
    if (HEATMAP_LEFT + g->cols * g->stride > HEATMAP_MAX_WIDTH)
        g->cols = (HEATMAP_MAX_WIDTH - HEATMAP_LEFT) / g->stride;
    if (g->cols < 1) g->cols = 1;
    g->band_rows = (g->per_band + g->cols - 1) / g->cols;
    /* Facets that wrap are spread evenly over their rows (6 in rows of 3
     * and 3, not 5 and 1), so the last row is not a lone facet. */
    if (g->faceted) g->cols = (g->per_band + g->band_rows - 1) / g->band_rows;
    g->rows = g->band_rows * (g->nalgos * g->nz * g->nw / g->per_band);
    g->drop = 0;
    for (int i = 0; i < h->nx && h->nx > 1 && has_words(h); i++)
        if ((int)strlen(h->x_vals[i]) * HEATMAP_LABEL_CHAR_PX > HEATMAP_CELL_W - 4) g->drop = HEATMAP_LABEL_DROP;
    g->foot = heatmap_panel_y(g, g->nalgos * g->nz * g->nw - 1) + g->ph + g->drop;
    g->width = HEATMAP_LEFT + g->cols * g->stride;
    /* Wide enough for the legend and (at about 8 px a character) the title
     * when the grid is narrower than them. */
    int legend = HEATMAP_LEFT + HEATMAP_NCLASS * HEATMAP_LEGEND_STEP;
    int title = HEATMAP_LEFT + 8 * (int)(h->title ? strlen(h->title) : 0) + 10;
    if (g->width < legend) g->width = legend;
    if (g->width < title) g->width = title;
    g->height = g->foot + HEATMAP_BOTTOM;
    g->every = HEATMAP_CELL_W >= HEATMAP_LABEL_EVERY_PX
                       ? 1
                       : (HEATMAP_LABEL_EVERY_PX + HEATMAP_CELL_W - 1) / HEATMAP_CELL_W;
}

/* Panel p's band, and its place in the band. */
static int band_of(const struct heatmap_geom *g, int p) { return p / g->per_band; }
static int in_band(const struct heatmap_geom *g, int p) { return p % g->per_band; }

int heatmap_panel_x(const struct heatmap_geom *g, int p) { return HEATMAP_LEFT + in_band(g, p) % g->cols * g->stride; }

int heatmap_panel_y(const struct heatmap_geom *g, int p) {
    int b = band_of(g, p), row = b * g->band_rows + in_band(g, p) / g->cols;
    int y = HEATMAP_TOP + row * (g->ph + HEATMAP_ROW_GAP + g->drop);
    if (g->faceted) y += (b + 1) * HEATMAP_BAND_HEAD;
    if (g->sectioned) y += (b / g->nalgos + 1) * HEATMAP_SECTION_HEAD;
    return y;
}

int heatmap_panel_starts_row(const struct heatmap_geom *g, int p) { return in_band(g, p) % g->cols == 0; }
int heatmap_panel_starts_band(const struct heatmap_geom *g, int p) { return g->faceted && in_band(g, p) == 0; }
int heatmap_panel_starts_section(const struct heatmap_geom *g, int p) {
    return g->sectioned && p % (g->nalgos * g->nz) == 0;
}

void heatmap_panel_of(const struct heatmap *h, const struct heatmap_geom *g, int p, int *algo, int *z, int *w) {
    (void)h;
    if (!g->faceted) {
        *algo = p, *z = 0, *w = 0;
        return;
    }
    *z = p % g->nz;
    *algo = p / g->nz % g->nalgos;
    *w = p / g->nz / g->nalgos;
}

const struct heatmap_cell *heatmap_panel_cells(const struct heatmap *h, const struct heatmap_geom *g, int p) {
    int a, z, w;
    heatmap_panel_of(h, g, p, &a, &z, &w);
    size_t facet = ((size_t)a * (size_t)g->nw + (size_t)w) * (size_t)g->nz + (size_t)z;
    return h->cells + facet * (size_t)g->ny * (size_t)g->nx;
}

void heatmap_panel_title(const struct heatmap *h, const struct heatmap_geom *g, int p, char *buf, size_t n) {
    int a, z, w;
    heatmap_panel_of(h, g, p, &a, &z, &w);
    if (g->faceted) snprintf(buf, n, "%s=%s", h->z_key, h->z_vals[z]);
    else snprintf(buf, n, "%s", h->panels[a]);
}

int heatmap_x_labelled(const struct heatmap *h, const struct heatmap_geom *g, int x) {
    if (has_words(h)) return 1;
    int last = g->nx - 1;
    return x == 0 || x == last || (x % g->every == 0 && last - x >= g->every);
}

const char *heatmap_class_name(enum heatmap_class c) { return c < HEATMAP_NCLASS ? classes[c].name : "error"; }

void heatmap_cell_color(const struct heatmap_cell *c, char out[8]) {
    long n = 0, r = 0, g = 0, b = 0;
    for (int k = 0; k < HEATMAP_NCLASS; k++) {
        n += c->count[k];
        r += (long)c->count[k] * (classes[k].rgb >> 16);
        g += (long)c->count[k] * ((classes[k].rgb >> 8) & 0xff);
        b += (long)c->count[k] * (classes[k].rgb & 0xff);
    }
    if (n == 0) {
        snprintf(out, 8, "#ffffff");
        return;
    }
    /* Rounded to the nearest; a cell of one class keeps its colour exactly. */
    snprintf(out, 8, "#%02lx%02lx%02lx", (r + n / 2) / n, (g + n / 2) / n, (b + n / 2) / n);
}

/* The share of a cell's seeds that ran and are in class k. */
static double fraction(const struct heatmap_cell *c, enum heatmap_class k) {
    int ran = 0;
    for (int j = 0; j < HEATMAP_ERROR; j++) ran += c->count[j];
    return ran ? (double)c->count[k] / ran : 0.0;
}

double heatmap_damage_fraction(const struct heatmap_cell *c) { return fraction(c, HEATMAP_DAMAGE); }
double heatmap_overlap_fraction(const struct heatmap_cell *c) { return fraction(c, HEATMAP_OVERLAP); }

static void xml_text(FILE *f, const char *s) {
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

/* Geometry (heatmap_geom), in SVG user units. */
enum { CELL_W = HEATMAP_CELL_W, CELL_H = HEATMAP_CELL_H, LEFT = HEATMAP_LEFT, TOP = HEATMAP_TOP };

int heatmap_svg_write(FILE *f, const struct heatmap *h) {
    struct heatmap_geom g;
    heatmap_geom(h, &g);
    int nx = g.nx, ny = g.ny, pw = g.pw, ph = g.ph, width = g.width, height = g.height;
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
            "font-family=\"sans-serif\" font-size=\"11\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n<text x=\"%d\" y=\"20\" font-size=\"14\">",
            width, height, width, height, LEFT);
    xml_text(f, h->title);
    fputs("</text>\n", f);
    if (h->subtitle) {
        fprintf(f, "<text class=\"subtitle\" x=\"%d\" y=\"%d\" font-size=\"%d\" fill=\"#555555\">", LEFT,
                HEATMAP_SUBTITLE_Y, HEATMAP_NOTE_PX);
        xml_text(f, h->subtitle);
        fputs("</text>\n", f);
    }
    for (int p = 0; p < g.npanels; p++) {
        int x0 = heatmap_panel_x(&g, p), y0 = heatmap_panel_y(&g, p), a, z, w;
        heatmap_panel_of(h, &g, p, &a, &z, &w);
        if (heatmap_panel_starts_section(&g, p)) {
            int sy = heatmap_section_head_y(&g, p);
            if (p)
                fprintf(f, "<rect x=\"0\" y=\"%d\" width=\"%d\" height=\"1\" fill=\"#%06x\"/>\n",
                        sy - HEATMAP_SECTION_PX - 6, width, (unsigned)HEATMAP_RULE_RGB);
            fprintf(f, "<text class=\"section\" x=\"%d\" y=\"%d\" font-size=\"%d\" font-weight=\"bold\">", LEFT, sy,
                    HEATMAP_SECTION_PX);
            xml_text(f, h->w_key);
            fputc('=', f);
            xml_text(f, h->w_vals[w]);
            fputs("</text>\n", f);
        }
        if (heatmap_panel_starts_band(&g, p)) {
            fprintf(f, "<text class=\"band\" x=\"%d\" y=\"%d\" font-size=\"%d\" font-weight=\"bold\">", LEFT,
                    heatmap_band_head_y(&g, p), HEATMAP_BAND_PX);
            xml_text(f, h->panels[a]);
            fputs("</text>\n", f);
        }
        char title[400];
        heatmap_panel_title(h, &g, p, title, sizeof title);
        fprintf(f, "<g class=\"panel\" data-algo=\"");
        xml_text(f, h->panels[a]);
        if (g.faceted) {
            fputs("\" data-z=\"", f);
            xml_text(f, h->z_vals[z]);
        }
        if (g.sectioned) {
            fputs("\" data-w=\"", f);
            xml_text(f, h->w_vals[w]);
        }
        fprintf(f, "\">\n<text x=\"%d\" y=\"%d\" %s>", x0, y0 - 10,
                g.faceted ? "class=\"facet\"" : "font-weight=\"bold\"");
        xml_text(f, title);
        fputs("</text>\n", f);
        const struct heatmap_cell *cells = heatmap_panel_cells(h, &g, p);
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++) {
                const struct heatmap_cell *c = &cells[(size_t)y * (size_t)nx + (size_t)x];
                char col[8];
                heatmap_cell_color(c, col);
                int cx = x0 + x * CELL_W, cy = y0 + y * CELL_H, n = 0, top = 0;
                for (int k = 0; k < HEATMAP_NCLASS; k++) {
                    n += c->count[k];
                    if (c->count[k] > c->count[top]) top = k;
                }
                fprintf(f, "<rect class=\"cell\" data-x=\"");
                xml_text(f, h->x_vals[x]);
                fputs("\" data-y=\"", f);
                xml_text(f, h->y_vals ? h->y_vals[y] : "");
                fprintf(f,
                        "\" data-class=\"%s\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" "
                        "stroke=\"#ffffff\"><title>",
                        n && c->count[top] == n ? classes[top].name : "mixed", cx, cy, CELL_W, CELL_H, col);
                xml_text(f, h->x_key);
                fputc('=', f);
                xml_text(f, h->x_vals[x]);
                if (h->y_key) {
                    fputc(' ', f);
                    xml_text(f, h->y_key);
                    fputc('=', f);
                    xml_text(f, h->y_vals[y]);
                }
                if (g.faceted) {
                    fputc(' ', f);
                    xml_text(f, h->z_key);
                    fputc('=', f);
                    xml_text(f, h->z_vals[z]);
                }
                if (g.sectioned) {
                    fputc(' ', f);
                    xml_text(f, h->w_key);
                    fputc('=', f);
                    xml_text(f, h->w_vals[w]);
                }
                if (g.faceted) {
                    fputs(" algo ", f);
                    xml_text(f, h->panels[a]);
                }
                for (int k = 0; k < HEATMAP_NCLASS; k++)
                    if (c->count[k]) fprintf(f, ", %s %d", classes[k].name, c->count[k]);
                fputs("</title></rect>\n", f);
                if (n && c->count[top] != n)
                    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"8\" text-anchor=\"middle\">%.0f%%</text>\n",
                            cx + CELL_W / 2, cy + CELL_H / 2 + 3, 100.0 * heatmap_damage_fraction(c));
            }
        /* The x axis: every few values, then the key. */
        for (int x = 0; x < nx; x++) {
            if (!heatmap_x_labelled(h, &g, x)) continue;
            fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", x0 + x * CELL_W + CELL_W / 2,
                    heatmap_x_label_y(&g, y0, x));
            xml_text(f, h->x_vals[x]);
            fputs("</text>\n", f);
        }
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", x0 + pw / 2, heatmap_x_key_y(&g, y0));
        xml_text(f, h->x_key);
        fputs("</text>\n</g>\n", f);
    }
    /* The y axis, on the left of the first panel of each row. */
    for (int p = 0; p < g.npanels; p++) {
        if (!heatmap_panel_starts_row(&g, p)) continue;
        int y0 = heatmap_panel_y(&g, p);
        for (int y = 0; h->y_key && y < ny; y++) {
            fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", LEFT - 6, y0 + y * CELL_H + CELL_H / 2 + 4);
            xml_text(f, h->y_vals[y]);
            fputs("</text>\n", f);
        }
        if (h->y_key) {
            fprintf(f, "<text x=\"12\" y=\"%d\" transform=\"rotate(-90 12 %d)\" text-anchor=\"middle\">", y0 + ph / 2,
                    y0 + ph / 2);
            xml_text(f, h->y_key);
            fputs("</text>\n", f);
        }
    }
    /* The legend. */
    for (int k = 0; k < HEATMAP_NCLASS; k++) {
        int lx = LEFT + k * 110, ly = g.foot + 48;
        fprintf(f,
                "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"#%06x\"/>"
                "<text x=\"%d\" y=\"%d\">%s</text>\n",
                lx, ly, classes[k].rgb, lx + 16, ly + 10, classes[k].name);
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"9\">" HEATMAP_NOTE "</text>\n</svg>\n", LEFT, g.foot + 76);
    return ferror(f) ? -1 : 0;
}
