/* The picture modules, built beside the binary and loaded with dlopen by the
 * commands that draw, the first time they need one, so every other command
 * starts without their libraries: locksim-png.so (gfx/png.c, gif.c, raster.c,
 * heatmap_png.c, pngio.c: the PNG timeline of render and matrix --render,
 * the animated GIF of render -o x.gif and the heatmap of sweep and merge
 * --png, on libpng, giflib and FreeType) and
 * locksim-gfx.so (the window of view, on SDL2 and SDL2_ttf). A module finds scene,
 * layout and palette code in the binary, which exports its symbols
 * (-rdynamic). */
#include "cli_gfx.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"

struct module {
    const char *file;         /* CLI_GFX_MODULE or CLI_PNG_MODULE */
    const char *const *names; /* the symbols it must have, NULL-terminated */
    void **fns;               /* where they go, as many */
    void *h;                  /* once loaded */
};

static char mod_err[PATH_MAX + 400];    /* why a module could not be loaded */
static const char *(*last_error)(void); /* gfx_error of the module called last, or NULL */

static int (*p_render)(const char *, FILE *, const struct trace *const *, size_t, const struct scene_banner *,
                       const struct scene_view *);
static const char *(*p_png_error)(void);
static int (*p_gif)(FILE *, const char *, const struct trace *const *, size_t, size_t, gfx_gif_frame_fn, void *);
static int (*p_view)(const struct view_host *, const struct view_opts *);
static int (*p_heatmap)(const char *, FILE *, const struct heatmap *);
static const char *(*p_gfx_error)(void);

static const char *const png_names[] = {"gfx_render_png_panels", "gfx_heatmap_png", "gfx_error", "gfx_render_gif",
                                        NULL};
static void *png_fns[4];
static struct module png_mod = {CLI_PNG_MODULE, png_names, png_fns, NULL};
static const char *const gfx_names[] = {"gfx_view_run", "gfx_error", NULL};
static void *gfx_fns[2];
static struct module gfx_mod = {CLI_GFX_MODULE, gfx_names, gfx_fns, NULL};

/* The module's path, found from the running binary (/proc/self/exe): beside
 * it (the build tree, build/locksim) or in ../lib/locksim/ (an installed
 * tree, PREFIX/bin/locksim and PREFIX/lib/locksim/: `make install`),
 * whichever exists, in that order; beside the binary when neither does, so
 * the error names that path. */
static int module_path(char *buf, size_t n, const char *file) {
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) return -1;
    exe[len] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return -1;
    *slash = '\0';
    struct stat st;
    int w = snprintf(buf, n, "%s/%s", exe, file);
    if (w < 0 || (size_t)w >= n) return -1;
    if (stat(buf, &st) == 0) return 0;
    char inst[PATH_MAX];
    w = snprintf(inst, sizeof inst, "%s/../lib/locksim/%s", exe, file);
    if (w > 0 && (size_t)w < sizeof inst && stat(inst, &st) == 0 && strlen(inst) < n)
        memcpy(buf, inst, strlen(inst) + 1);
    return 0;
}

static int load(struct module *m) {
    if (m->h) return 0;
    last_error = NULL;
    char path[PATH_MAX];
    if (module_path(path, sizeof path, m->file) != 0) {
        snprintf(mod_err, sizeof mod_err, "cannot find the directory of the locksim binary for %s", m->file);
        return LSIM_EINTERNAL;
    }
    errno = 0;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        int e = errno;
        const char *why = dlerror();
        /* The dynamic loader says "cannot create shared object descriptor"
         * (or the like) and leaves errno ENOMEM when its malloc failed; the
         * module is there, so that is out of memory, not a missing build. */
        struct stat st;
        if (lsim_errno_code(e, 0) || (stat(path, &st) == 0 && why &&
                                      (strstr(why, "cannot create shared object descriptor") ||
                                       strstr(why, "cannot allocate") || strstr(why, "out of memory")))) {
            snprintf(mod_err, sizeof mod_err, "out of memory loading the picture module %s (%s)", path,
                     why ? why : "dlopen failed");
            return LSIM_ENOMEM;
        }
        snprintf(mod_err, sizeof mod_err,
                 "the picture module %s cannot be loaded (%s); it is built beside the binary by "
                 "make (make build/%s), and installed in PREFIX/lib/locksim by make install: a "
                 "binary copied alone cannot draw pictures",
                 path, why ? why : "unknown reason", m->file);
        return LSIM_EINTERNAL;
    }
    size_t i = 0;
    for (; m->names[i]; i++)
        if (!(m->fns[i] = dlsym(h, m->names[i]))) break;
    if (m->names[i]) {
        snprintf(mod_err, sizeof mod_err, "the picture module %s lacks %s; rebuild it with make", path, m->names[i]);
        dlclose(h);
        memset(m->fns, 0, i * sizeof *m->fns);
        return LSIM_EINTERNAL;
    }
    m->h = h;
    return 0;
}

static int load_png(void) {
    int rc = load(&png_mod);
    if (rc) return rc;
    *(void **)&p_render = png_fns[0];
    *(void **)&p_heatmap = png_fns[1];
    *(void **)&p_png_error = png_fns[2];
    *(void **)&p_gif = png_fns[3];
    last_error = p_png_error;
    return 0;
}

static int load_gfx(void) {
    int rc = load(&gfx_mod);
    if (rc) return rc;
    *(void **)&p_view = gfx_fns[0];
    *(void **)&p_gfx_error = gfx_fns[1];
    last_error = p_gfx_error;
    return 0;
}

int cli_gfx_render_png_panels(const char *path, FILE *stream, const struct trace *const *trs, size_t n,
                              const struct scene_banner *banners, const struct scene_view *v) {
    int rc = load_png();
    return rc ? rc : p_render(path, stream, trs, n, banners, v);
}

int cli_gfx_render_gif(FILE *f, const char *name, const struct trace *const *trs, size_t n, size_t nframes,
                       gfx_gif_frame_fn frame, void *ctx) {
    int rc = load_png();
    return rc ? rc : p_gif(f, name, trs, n, nframes, frame, ctx);
}

int cli_gfx_view_run(const struct view_host *h, const struct view_opts *o) {
    int rc = load_gfx();
    return rc ? rc : p_view(h, o);
}

int cli_gfx_heatmap_png(const char *path, FILE *stream, const struct heatmap *h) {
    int rc = load_png();
    return rc ? rc : p_heatmap(path, stream, h);
}

const char *cli_gfx_error(void) { return last_error ? last_error() : mod_err; }
