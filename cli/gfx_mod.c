/* The picture module: gfx/ (SDL2, SDL2_ttf, SDL2_image, libpng) is built as
 * locksim-gfx.so beside the binary and loaded with dlopen by the commands
 * that draw (render to PNG, matrix --render to PNG, sweep/merge --png, view) the first time
 * they need it, so every other command starts without loading SDL and its
 * libraries. The module finds scene, layout and palette code in the binary,
 * which exports its symbols (-rdynamic). */
#include "cli_gfx.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "error.h"

static void *mod;                 /* the module, once loaded */
static char mod_err[PATH_MAX + 400]; /* why it could not be loaded */
static int (*p_render)(const char *, FILE *, const struct trace *const *, size_t,
                       const struct scene_banner *, const struct scene_view *);
static int (*p_view)(const struct view_host *, const struct view_opts *);
static const char *(*p_error)(void);
static int (*p_heatmap)(const char *, FILE *, const struct heatmap *);

/* The module's path: beside the running binary (/proc/self/exe). */
static int module_path(char *buf, size_t n) {
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) return -1;
    exe[len] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return -1;
    *slash = '\0';
    int w = snprintf(buf, n, "%s/%s", exe, CLI_GFX_MODULE);
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

static int load(void) {
    if (mod) return 0;
    char path[PATH_MAX];
    if (module_path(path, sizeof path) != 0) {
        snprintf(mod_err, sizeof mod_err, "cannot find the directory of the locksim binary for %s",
                 CLI_GFX_MODULE);
        return LSIM_EINTERNAL;
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        snprintf(mod_err, sizeof mod_err,
                 "the picture module %s cannot be loaded (%s); it is built beside the binary by "
                 "make (make build/%s)",
                 path, why ? why : "unknown reason", CLI_GFX_MODULE);
        return LSIM_EINTERNAL;
    }
    *(void **)&p_render = dlsym(h, "gfx_render_png_panels");
    *(void **)&p_view = dlsym(h, "gfx_view_run");
    *(void **)&p_error = dlsym(h, "gfx_error");
    *(void **)&p_heatmap = dlsym(h, "gfx_heatmap_png");
    if (!p_render || !p_view || !p_error || !p_heatmap) {
        snprintf(mod_err, sizeof mod_err, "the picture module %s lacks gfx_render_png_panels, "
                 "gfx_view_run, gfx_heatmap_png or gfx_error; rebuild it with make", path);
        dlclose(h);
        p_render = NULL;
        p_view = NULL;
        p_error = NULL;
        p_heatmap = NULL;
        return LSIM_EINTERNAL;
    }
    mod = h;
    return 0;
}

int cli_gfx_render_png_panels(const char *path, FILE *stream, const struct trace *const *trs,
                              size_t n, const struct scene_banner *banners,
                              const struct scene_view *v) {
    int rc = load();
    return rc ? rc : p_render(path, stream, trs, n, banners, v);
}

int cli_gfx_view_run(const struct view_host *h, const struct view_opts *o) {
    int rc = load();
    return rc ? rc : p_view(h, o);
}

int cli_gfx_heatmap_png(const char *path, FILE *stream, const struct heatmap *h) {
    int rc = load();
    return rc ? rc : p_heatmap(path, stream, h);
}

const char *cli_gfx_error(void) { return mod ? p_error() : mod_err; }
