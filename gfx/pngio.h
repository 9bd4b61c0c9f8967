/* The PNG encoder of every picture (the PNG module's timeline, the window's
 * screenshots, the heatmap): 32-bit rows to an 8-bit RGB PNG with libpng,
 * no SDL, no time stamp or text chunk, so the bytes depend on the pixels
 * only. */
#ifndef LOCKSIM_PNGIO_H
#define LOCKSIM_PNGIO_H

#include <stddef.h>
#include <stdio.h>

/* h rows of w 32-bit pixels, pitch bytes apart, each 0x??RRGGBB as a
 * native-endian word (SDL's XRGB8888 and ARGB8888; the top byte dropped),
 * to f. name is for messages. Returns 0, LSIM_ENOMEM or LSIM_EOUTPUT
 * (gfx_error() says why). */
int gfx_png_write(const void *pixels, int w, int h, size_t pitch, FILE *f, const char *name);
/* The same from rows of R, G, B bytes (gfx/raster.h), written as they are:
 * no conversion pass. */
int gfx_png_write_rgb(const void *rows, int w, int h, size_t pitch, FILE *f, const char *name);

/* Record why a call failed, for gfx_error() (gfx.h); returns code.
 * gfx_clear_error() empties it. */
int gfx_fail(int code, const char *what, const char *detail);
void gfx_clear_error(void);

#endif
