/* PNG encoding with libpng (pngio.h) and the module's error text (gfx.h). */
#include "pngio.h"

#include <stdint.h>
#include <stdio.h>

#include <png.h>

#include "error.h"
#include "gfx.h"

/* Not _Thread_local: a module with thread-local storage makes dlopen allocate
 * it, and the dynamic loader aborts the process (exit 127) when that fails.
 * The modules draw on the main thread only. */
static char last_error[256];

const char *gfx_error(void) { return last_error; }

void gfx_clear_error(void) { last_error[0] = '\0'; }

int gfx_fail(int code, const char *what, const char *detail) {
    snprintf(last_error, sizeof last_error, "%s%s%s", what, detail && detail[0] ? ": " : "", detail ? detail : "");
    return code;
}

/* libpng's errors come back through setjmp below, its warnings are
 * dropped: nothing is printed to stderr from a library. */
static void png_fail(png_structp p, png_const_charp msg) {
    char *why = png_get_error_ptr(p);
    snprintf(why, 128, "%s", msg ? msg : "");
    png_longjmp(p, 1);
}

static void png_warn(png_structp p, png_const_charp msg) {
    (void)p;
    (void)msg;
}

/* libpng rather than IMG_SavePNG for speed: IMG_SavePNG gives libpng its
 * defaults (zlib level 6, adaptive filters), 55 to 90 ms for 1280x720 here;
 * zlib level 1 with no filter takes about 20 ms for a file a third larger. */
/* rgb: the rows are R, G, B bytes already, else 32-bit words to convert. */
static int write_png(const void *pixels, int w, int h, size_t pitch, int rgb, FILE *f, const char *name) {
    char why[128] = ""; /* libpng's error message (png_fail) */
    png_structp p = png_create_write_struct(PNG_LIBPNG_VER_STRING, why, png_fail, png_warn);
    png_infop info = p ? png_create_info_struct(p) : NULL;
    if (!info) {
        png_destroy_write_struct(&p, NULL);
        return gfx_fail(LSIM_ENOMEM, "libpng", "out of memory");
    }
    png_bytep volatile row = NULL; /* volatile: read after a longjmp */
    if (setjmp(png_jmpbuf(p))) {   /* libpng reports every error here, e.g. a short write */
        if (row) png_free(p, row);
        png_destroy_write_struct(&p, &info);
        /* A short write stays on f (the caller's out_commit names it); any
         * other error of libpng or zlib here is want of memory ("insufficient
         * memory", "Out of Memory"), never a picture left short. */
        if (ferror(f)) return gfx_fail(LSIM_EOUTPUT, name, "cannot write the PNG");
        return gfx_fail(LSIM_ENOMEM, "libpng: out of memory", why);
    }
    /* each row converted to R, G, B bytes here, in one pass: libpng's own
     * transforms (png_set_bgr, png_set_filler) took two passes over every
     * row, a sixth of the instructions of a render */
    if (!rgb) row = png_malloc(p, (png_alloc_size_t)w * 3);
    png_init_io(p, f);
    png_set_compression_level(p, 1);
    png_set_filter(p, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
    png_set_IHDR(p, info, (png_uint_32)w, (png_uint_32)h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_BASE, PNG_FILTER_TYPE_BASE);
    png_write_info(p, info);
    for (int y = 0; y < h; y++) {
        if (rgb) {
            png_write_row(p, (png_const_bytep)pixels + (size_t)y * pitch);
            continue;
        }
        const uint32_t *src = (const uint32_t *)(const void *)((const uint8_t *)pixels + (size_t)y * pitch);
        for (int x = 0; x < w; x++) {
            uint32_t v = src[x];
            row[3 * x] = (png_byte)(v >> 16);
            row[3 * x + 1] = (png_byte)(v >> 8);
            row[3 * x + 2] = (png_byte)v;
        }
        png_write_row(p, row);
    }
    if (row) png_free(p, row);
    row = NULL;
    png_write_end(p, info);
    png_destroy_write_struct(&p, &info);
    if (fflush(f) != 0 || ferror(f)) return gfx_fail(LSIM_EOUTPUT, name, "cannot write the PNG");
    return 0;
}

int gfx_png_write(const void *pixels, int w, int h, size_t pitch, FILE *f, const char *name) {
    return write_png(pixels, w, h, pitch, 0, f, name);
}

int gfx_png_write_rgb(const void *rows, int w, int h, size_t pitch, FILE *f, const char *name) {
    return write_png(rows, w, h, pitch, 1, f, name);
}
