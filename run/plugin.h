/* Plugins: a user's lock algorithm in a shared object (docs/lock-interface.md),
 * loaded for run_resolve_algo. The one seam between run/ and the platform's
 * dynamic loader: run/plugin.c loads with dlopen; a build without one (the
 * web page, web/plugin_none.c) refuses with a sentence saying why. */
#ifndef LOCKSIM_PLUGIN_H
#define LOCKSIM_PLUGIN_H

#include <stddef.h>

#include "lock.h"

/* Load the algorithm that the shared object at path exports
 * (locksim_algo()), validated with run_validate_algo. Returns 0, or
 * LSIM_EPLUGIN with a sentence in err. */
int plugin_load(const char *path, const struct lock_algo **out, char *err, size_t errlen);

#endif
