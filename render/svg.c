/* SVG backend: the painted scene (paint.h) as SVG elements written with
 * fprintf, integers only, so a scene always gives the same bytes. Text stays
 * text (DejaVu Sans Mono, the font the PNG uses); events are groups whose
 * <title> is the tooltip. */
#include "svg.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "layout.h"
#include "paint.h"

struct svg {
    FILE *out;
};

/* Printable ASCII with XML's five escapes; any other byte becomes '?'. */
static void esc(FILE *f, const char *s) {
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default: fputc(c < 0x20 || c > 0x7e ? '?' : (int)c, f); break;
        }
    }
}

static int box(void *ctx, int x, int y, int w, int h, struct palette_rgb c) {
    struct svg *s = ctx;
    fprintf(s->out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#%02x%02x%02x\"/>\n", x, y, w, h, c.r,
            c.g, c.b);
    return 0;
}

static int poly(void *ctx, const int *xs, const int *ys, int n, struct palette_rgb c) {
    struct svg *s = ctx;
    fputs("<polygon points=\"", s->out);
    for (int i = 0; i < n; i++) fprintf(s->out, "%s%d,%d", i ? " " : "", xs[i], ys[i]);
    fprintf(s->out, "\" fill=\"#%02x%02x%02x\"/>\n", c.r, c.g, c.b);
    return 0;
}

static int line(void *ctx, int x0, int y0, int x1, int y1, int width, struct palette_rgb c) {
    struct svg *s = ctx;
    /* pixel centres, as the PNG's lines cover whole pixels */
    if (x0 == x1)
        fprintf(s->out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#%02x%02x%02x\"/>\n", x0 - width / 2,
                y0 < y1 ? y0 : y1, width, (y0 < y1 ? y1 - y0 : y0 - y1) + 1, c.r, c.g, c.b);
    else if (y0 == y1)
        fprintf(s->out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#%02x%02x%02x\"/>\n",
                x0 < x1 ? x0 : x1, y0 - width / 2, (x0 < x1 ? x1 - x0 : x0 - x1) + 1, width, c.r, c.g, c.b);
    else
        fprintf(s->out,
                "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#%02x%02x%02x\" "
                "stroke-width=\"%d\"/>\n",
                x0, y0, x1, y1, c.r, c.g, c.b, width);
    return 0;
}

static int text(void *ctx, int x, int y, int h, const char *str, int px, int bold, struct palette_rgb c) {
    struct svg *s = ctx;
    /* baseline: the line's middle plus about a third of the size (DejaVu's
     * ascent is 0.76 em, its descent 0.24 em) */
    fprintf(s->out, "<text x=\"%d\" y=\"%d\"", x, y + h / 2 + px * 36 / 100);
    if (px != PALETTE_TEXT_PX) fprintf(s->out, " font-size=\"%d\"", px);
    if (bold) fputs(" font-weight=\"bold\"", s->out);
    fprintf(s->out, " fill=\"#%02x%02x%02x\">", c.r, c.g, c.b);
    esc(s->out, str);
    fputs("</text>\n", s->out);
    return 0;
}

static int group_begin(void *ctx, const char *tip) {
    struct svg *s = ctx;
    fputs("<g class=\"event\"><title>", s->out);
    esc(s->out, tip);
    fputs("</title>\n", s->out);
    return 0;
}

static int group_end(void *ctx) {
    struct svg *s = ctx;
    fputs("</g>\n", s->out);
    return 0;
}

int svg_write_scene(FILE *out, const struct scene *sc, const struct scene_view *v, int height) {
    struct svg s = {out};
    static const struct paint_ops ops = {box, poly, line, text, group_begin, group_end};
    int w = sc->width, h = height > 0 ? height : sc->height; /* --height: exactly, the rest cut */
    fprintf(out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" xml:space=\"preserve\" width=\"%d\" "
            "height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans Mono, monospace\" font-size=\"%d\">\n",
            w, h, w, h, PALETTE_TEXT_PX);
    fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#%02x%02x%02x\"/>\n", w, h,
            palette_background.r, palette_background.g, palette_background.b);
    int rc = paint_scene(sc, v, &ops, &s);
    fputs("</svg>\n", out);
    if (rc) return rc;
    return ferror(out) ? LSIM_EOUTPUT : 0;
}

int svg_render_panels(FILE *out, const struct trace *const *trs, size_t n, const struct scene_banner *banners,
                      const struct scene_view *v) {
    struct scene_view def;
    if (!v) {
        scene_view_pixels(&def, 1280, 720);
        v = &def;
    }
    struct scene sc;
    int rc = scene_build_traces(&sc, trs, n, v, banners);
    if (!rc) rc = svg_write_scene(out, &sc, v, v->height);
    scene_close(&sc);
    return rc;
}

int svg_render(FILE *out, const struct trace *tr, const struct scene_banner *b, const struct scene_view *v) {
    return svg_render_panels(out, &tr, 1, b, v);
}
