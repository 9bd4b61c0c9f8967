/* Exact time formatting: integer division and remainder, decimals trimmed. */
#include "fmt.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

static int decimal_digits(sim_ns unit_ns) {
    int d = 0;
    for (sim_ns u = unit_ns; u > 1; u /= 10) {
        if (u % 10) return -1; /* not a power of ten */
        d++;
    }
    return d;
}

int format_time_in(char *buf, size_t n, sim_ns t, sim_ns unit_ns, const char *suffix) {
    if (unit_ns <= 0) unit_ns = 1;
    /* |t| as unsigned, so that INT64_MIN is handled too. */
    uint64_t mag = t < 0 ? (uint64_t)0 - (uint64_t)t : (uint64_t)t;
    uint64_t unit = (uint64_t)unit_ns;
    uint64_t ip = mag / unit, fp = mag % unit;
    int digits = decimal_digits(unit_ns);
    if (fp && digits < 0) return format_time_ns(buf, n, t);
    const char *sign = t < 0 ? "-" : "";
    if (!fp) return snprintf(buf, n, "%s%" PRIu64 "%s", sign, ip, suffix);
    char frac[24]; /* digits <= 18: unit_ns fits in int64 */
    for (int i = digits - 1; i >= 0; i--) {
        frac[i] = (char)('0' + fp % 10);
        fp /= 10;
    }
    int len = digits;
    while (len > 0 && frac[len - 1] == '0') len--;
    frac[len] = '\0';
    return snprintf(buf, n, "%s%" PRIu64 ".%s%s", sign, ip, frac, suffix);
}

int format_time_ns(char *buf, size_t n, sim_ns t) {
    uint64_t mag = t < 0 ? (uint64_t)0 - (uint64_t)t : (uint64_t)t;
    if (mag == 0) return snprintf(buf, n, "0s");
    if (mag >= (uint64_t)SIM_NS_PER_S) return format_time_in(buf, n, t, SIM_NS_PER_S, "s");
    if (mag >= (uint64_t)SIM_NS_PER_MS) return format_time_in(buf, n, t, SIM_NS_PER_MS, "ms");
    if (mag >= (uint64_t)SIM_NS_PER_US) return format_time_in(buf, n, t, SIM_NS_PER_US, "us");
    return format_time_in(buf, n, t, 1, "ns");
}

int metric_format(char *buf, size_t n, enum scn_metric m, int64_t v) {
    const struct metric_info *mi = metric_info(m);
    if (!mi) return snprintf(buf, n, "%" PRId64, v);
    switch (mi->unit) {
    case METRIC_UNIT_VERDICT:
        return snprintf(buf, n, "%s", v == 0 ? "SAFE" : v == 1 ? "UNSAFE" : v == 2 ? "STUCK" : "?");
    case METRIC_UNIT_NS: return format_time_ns(buf, n, v);
    default: return snprintf(buf, n, "%" PRId64, v);
    }
}
