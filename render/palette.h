/* Palette: the colour, pattern and weight of each scene style, shared by the
 * pixel backends (SVG here, PNG in gfx/), so a style looks the same in both.
 * Okabe-Ito colours, chosen to stay apart for colour-blind viewers. */
#ifndef LOCKSIM_PALETTE_H
#define LOCKSIM_PALETTE_H

#include <stdint.h>

struct palette_rgb {
    uint8_t r, g, b;
};

enum palette_pattern {
    PALETTE_SOLID, /* filled with fill */
    PALETTE_HATCH, /* fill, then diagonal stripes in ink (paused spans) */
    PALETTE_THIN,  /* a thin bar in the middle of the box (acquiring) */
    PALETTE_NONE,  /* no fill (text styles) */
};

struct palette_look {
    struct palette_rgb fill; /* boxes, badges, bands */
    struct palette_rgb ink;  /* text, lines, hatching, badge symbol */
    uint8_t pattern;         /* enum palette_pattern */
    uint8_t bold;            /* 1 = bold text */
};

/* The look of a scene style (enum scene_style); an unknown style gets the
 * plain text look. Static storage. */
const struct palette_look *palette_look(int style);

/* Background and the badge outline. */
extern const struct palette_rgb palette_background, palette_outline;

/* Text size of pictures at 1280x720, in pixels (DejaVu Sans Mono): no text
 * is drawn smaller. The title is PALETTE_TITLE_PX. */
#define PALETTE_TEXT_PX 18
#define PALETTE_TITLE_PX 26

#endif
