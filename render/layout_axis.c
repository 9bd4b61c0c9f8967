/* The timeline's time axis: a nice-number tick step for the run's length
 * and the columns available, and the mapping from true time to a column
 * and a label (layout.h declares them; layout.c builds the lanes). */
#include "layout.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fmt.h"

#define S SIM_NS_PER_S
static const sim_ns nice_steps[] = {
        1,         2,         5,          10,         20,         50,          100,         200,       500,
        1000,      2000,      5000,       10000,      20000,      50000,       100000,      200000,    500000,
        1000000,   2000000,   5000000,    10000000,   20000000,   50000000,    100000000,   200000000, 500000000,
        S,         2 * S,     5 * S,      10 * S,     15 * S,     20 * S,      30 * S,      60 * S,    120 * S,
        300 * S,   600 * S,   900 * S,    1200 * S,   1800 * S,   3600 * S,    7200 * S,    10800 * S, 21600 * S,
        43200 * S, 86400 * S, 172800 * S, 432000 * S, 864000 * S, 1728000 * S, 4320000 * S,
};
#undef S
#define NNICE (sizeof nice_steps / sizeof nice_steps[0])

int layout_axis_fit(struct layout_axis *ax, sim_ns t_end, int max_cells, int min_tick_cells) {
    memset(ax, 0, sizeof *ax);
    if (max_cells < 1) return -1;
    if (min_tick_cells < 1) min_tick_cells = 1;
    if (t_end < 0) t_end = 0;
    if (t_end > SIM_TIME_MAX) t_end = SIM_TIME_MAX; /* no run is longer */
    ax->t_end = t_end;
    if (t_end == 0) {
        ax->cell_ns = SIM_NS_PER_S;
    } else {
        for (size_t i = 0; i < NNICE && !ax->cell_ns; i++)
            if (t_end / nice_steps[i] + 1 <= max_cells) ax->cell_ns = nice_steps[i];
        if (!ax->cell_ns) /* beyond the table: a step that fits */
            ax->cell_ns = max_cells > 1 ? t_end / (max_cells - 1) + 1 : t_end + 1;
    }
    ax->ncells = (int)(t_end / ax->cell_ns) + 1;
    for (size_t i = 0; i < NNICE && !ax->tick_ns; i++)
        if (nice_steps[i] % ax->cell_ns == 0 && nice_steps[i] / ax->cell_ns >= min_tick_cells)
            ax->tick_ns = nice_steps[i];
    if (!ax->tick_ns) ax->tick_ns = ax->cell_ns > INT64_MAX / min_tick_cells ? INT64_MAX : ax->cell_ns * min_tick_cells;

    sim_ns span = t_end > ax->tick_ns ? t_end : ax->tick_ns;
    if (span >= 2 * SIM_NS_PER_MIN && ax->tick_ns % SIM_NS_PER_MIN == 0) {
        ax->unit_ns = SIM_NS_PER_MIN;
        ax->unit = "m";
    } else if (span >= SIM_NS_PER_S) {
        ax->unit_ns = SIM_NS_PER_S;
        ax->unit = "s";
    } else if (span >= SIM_NS_PER_MS) {
        ax->unit_ns = SIM_NS_PER_MS;
        ax->unit = "ms";
    } else if (span >= SIM_NS_PER_US) {
        ax->unit_ns = SIM_NS_PER_US;
        ax->unit = "us";
    } else {
        ax->unit_ns = 1;
        ax->unit = "ns";
    }
    return 0;
}

int layout_axis_cell(const struct layout_axis *ax, sim_ns t) {
    if (t <= 0 || ax->cell_ns <= 0) return 0;
    sim_ns c = t / ax->cell_ns;
    return c >= ax->ncells ? ax->ncells - 1 : (int)c;
}

void layout_axis_span(const struct layout_axis *ax, sim_ns t0, sim_ns t1, int *c0, int *c1) {
    *c0 = layout_axis_cell(ax, t0);
    /* the cell before the one where t1 begins a new cell; t1 itself when it
     * falls inside a cell */
    int e = layout_axis_cell(ax, t1);
    if (t1 > 0 && ax->cell_ns > 0 && t1 % ax->cell_ns == 0 && t1 / ax->cell_ns < ax->ncells) e--;
    *c1 = e < *c0 ? *c0 : e;
}

int layout_axis_label(const struct layout_axis *ax, sim_ns t, char *buf, size_t n) {
    return format_time_in(buf, n, t, ax->unit_ns ? ax->unit_ns : 1, ax->unit ? ax->unit : "ns");
}
