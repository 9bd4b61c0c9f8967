/* Plugins in the web page (run/plugin.h): a page cannot load a shared
 * object, so an algorithm is one of the built-in ones. */
#include "plugin.h"

#include <stdio.h>

#include "error.h"

int plugin_load(const char *path, const struct lock_algo **out, char *err, size_t errlen) {
    *out = NULL;
    snprintf(err, errlen,
             "cannot load algorithm '%s': a web page cannot load plugins (.so); use a built-in algorithm, or "
             "the locksim command line for plugins",
             path);
    return LSIM_EPLUGIN;
}
