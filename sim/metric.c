/* The metric table's rows and lookups (the table itself is METRIC_MAP in
 * metric.h). */
#include "metric.h"

#include <stddef.h>
#include <string.h>

#define METRIC_ROW_(e, field, word, shorthand, key, unit, desc) \
    [SCN_M_##e] = {word, shorthand, key, METRIC_UNIT_##unit, desc},
static const struct metric_info rows[SCN_M_COUNT] = {METRIC_MAP(METRIC_ROW_)};
#undef METRIC_ROW_

const struct metric_info *metric_info(enum scn_metric m) { return (unsigned)m < SCN_M_COUNT ? &rows[m] : NULL; }

/* A shorthand also reads in the plural: `expect no stale-writes`. */
static int is_shorthand_of(const char *w, const char *sh) {
    size_t n = strlen(sh);
    return strncmp(w, sh, n) == 0 && (w[n] == '\0' || (w[n] == 's' && w[n + 1] == '\0'));
}

int metric_find(const char *w, int *is_shorthand) {
    for (int m = 0; m < SCN_M_COUNT; m++) {
        int sh = rows[m].shorthand && is_shorthand_of(w, rows[m].shorthand);
        if (sh || strcmp(w, rows[m].word) == 0) {
            if (is_shorthand) *is_shorthand = rows[m].shorthand != NULL;
            return m;
        }
    }
    return -1;
}
