/* Plugins loaded with dlopen (run/plugin.h). The handle of an algorithm in
 * use stays open for the life of the process. */
#include "plugin.h"

#include <dlfcn.h>
#include <stdio.h>

#include "error.h"
#include "run.h"

int plugin_load(const char *path, const struct lock_algo **out, char *err, size_t errlen) {
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(err, errlen, "cannot load algorithm '%s': %s", path, dlerror());
        return LSIM_EPLUGIN;
    }
    const struct lock_algo *(*get)(void);
    *(void **)(&get) = dlsym(h, "locksim_algo");
    if (!get) {
        snprintf(err, errlen, "'%s' does not export locksim_algo(); see docs/lock-interface.md", path);
        dlclose(h);
        return LSIM_EPLUGIN;
    }
    const struct lock_algo *a = get();
    int rc = run_validate_algo(a, path, err, errlen);
    if (rc) {
        dlclose(h);
        return rc;
    }
    *out = a;
    return LSIM_OK;
}
