/* The heatmap's class colours stay apart for colour-blind readers (issue 24):
 * each colour is simulated under deuteranopia, protanopia and tritanopia
 * (Machado, Oliveira and Fernandes 2009, severity 1.0, on linear sRGB), put
 * in CIELAB (D65), and every pair of classes must be at least MIN_DE apart
 * (CIE76). The old red/green palette was 14.8 apart under deuteranopia.
 * Damage must stay the alarming one: the reddest class to normal vision. */
#include <math.h>
#include <stdio.h>

#include "testutil.h"

#include "heatmap_svg.h"

enum { VISION_NORMAL, VISION_DEUTAN, VISION_PROTAN, VISION_TRITAN, VISION_COUNT };
static const char *const vision_name[VISION_COUNT] = {"normal", "deuteranopia", "protanopia", "tritanopia"};
static const double machado[VISION_COUNT][3][3] = {
        {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}},
        {{0.367322, 0.860646, -0.227968}, {0.280085, 0.672501, 0.047413}, {-0.011820, 0.042940, 0.968881}},
        {{0.152286, 1.052583, -0.204868}, {0.114503, 0.786281, 0.099216}, {-0.003882, -0.048116, 1.051998}},
        {{1.255528, -0.076749, -0.178779}, {-0.078411, 0.930809, 0.147602}, {0.004733, 0.691367, 0.303900}},
};
#define MIN_DE 30.0

static double lin(unsigned c) {
    double v = c / 255.0;
    return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4);
}

static double lab_f(double t) { return t > 216.0 / 24389.0 ? cbrt(t) : (24389.0 / 27.0 * t + 16.0) / 116.0; }

/* The colour as seen with vision v, in CIELAB. */
static void seen(unsigned rgb, int v, double lab[3]) {
    double c[3] = {lin(rgb >> 16), lin((rgb >> 8) & 0xff), lin(rgb & 0xff)}, s[3];
    for (int i = 0; i < 3; i++) {
        s[i] = machado[v][i][0] * c[0] + machado[v][i][1] * c[1] + machado[v][i][2] * c[2];
        s[i] = s[i] < 0 ? 0 : s[i] > 1 ? 1 : s[i];
    }
    double x = 0.4124 * s[0] + 0.3576 * s[1] + 0.1805 * s[2], y = 0.2126 * s[0] + 0.7152 * s[1] + 0.0722 * s[2],
           z = 0.0193 * s[0] + 0.1192 * s[1] + 0.9505 * s[2];
    double fx = lab_f(x / 0.95047), fy = lab_f(y), fz = lab_f(z / 1.08883);
    lab[0] = 116 * fy - 16, lab[1] = 500 * (fx - fy), lab[2] = 200 * (fy - fz);
}

/* The smallest CIE76 distance between two classes' colours under vision v. */
static double min_distance(const unsigned *rgb, int n, int v) {
    double best = 1e9;
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++) {
            double la[3], lb[3];
            seen(rgb[a], v, la);
            seen(rgb[b], v, lb);
            double d = sqrt((la[0] - lb[0]) * (la[0] - lb[0]) + (la[1] - lb[1]) * (la[1] - lb[1]) +
                            (la[2] - lb[2]) * (la[2] - lb[2]));
            if (d < best) best = d;
        }
    return best;
}

static void test_old_palette_fails(void **state) {
    (void)state;
    /* The palette before issue 24: safe green, damage red. */
    static const unsigned old[HEATMAP_NCLASS] = {0x4caf50, 0xffc107, 0xd32f2f, 0x7e57c2, 0x212121};
    double d = min_distance(old, HEATMAP_NCLASS, VISION_DEUTAN);
    printf("old palette: min dE76 under deuteranopia %.1f\n", d);
    assert_true(d < MIN_DE);
}

static void test_palette_apart_for_every_vision(void **state) {
    (void)state;
    unsigned rgb[HEATMAP_NCLASS];
    for (int k = 0; k < HEATMAP_NCLASS; k++) rgb[k] = heatmap_class_rgb((enum heatmap_class)k);
    for (int v = 0; v < VISION_COUNT; v++) {
        double d = min_distance(rgb, HEATMAP_NCLASS, v);
        printf("palette: min dE76 under %s %.1f\n", vision_name[v], d);
        assert_true(d >= MIN_DE);
    }
    /* Damage reads as the alarm: the largest a* (red) of all classes. */
    double dmg[3];
    seen(rgb[HEATMAP_DAMAGE], VISION_NORMAL, dmg);
    for (int k = 0; k < HEATMAP_NCLASS; k++) {
        double o[3];
        seen(rgb[k], VISION_NORMAL, o);
        if (k != HEATMAP_DAMAGE) assert_true(o[1] < dmg[1]);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_old_palette_fails),
            cmocka_unit_test(test_palette_apart_for_every_vision),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
