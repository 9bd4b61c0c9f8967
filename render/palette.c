/* Palette: Okabe & Ito's colour-blind-safe set (black, orange #E69F00, sky
 * blue #56B4E9, bluish green #009E73, yellow #F0E442, blue #0072B2,
 * vermillion #D55E00, reddish purple #CC79A7) given to the scene's styles.
 *
 * Checked for deuteranopia with the Machado, Oliveira & Fernandes (2009)
 * simulation at severity 1.0 (their 3x3 matrix on linear sRGB), comparing
 * CIE76 Lab distances of the pairs that must differ, normal / simulated:
 *   holding blue vs double-entry vermillion     115 / 108
 *   lease sky blue vs double-entry vermillion   114 / 101
 *   write rejected (save) green vs stale write
 *     accepted (damage) vermillion              102 /  53
 *   holding blue vs save green                   70 /  56
 *   double-entry band (pale vermillion) vs white 23 /  21, vs lease tint 30 / 28
 *   paused-holding hatch yellow vs holding blue 125 / 126
 * A first try gave the damage reddish purple: 18 from the save's green under
 * deuteranopia, too close, so the damage took the double entry's vermillion
 * (both are the harm; the shapes tell them apart). Orange marks (warnings) and
 * vermillion are 18 apart simulated: they never carry the same meaning, and a
 * paused span is hatched, never solid. */
#include "palette.h"

#include "scene.h"

#define RGB(h) \
    { (uint8_t)((h) >> 16), (uint8_t)((h) >> 8 & 0xff), (uint8_t)((h)&0xff) }

enum {
    BLACK = 0x000000,
    INK = 0x1a1a1a,
    ORANGE = 0xE69F00,
    SKY = 0x56B4E9,
    GREEN = 0x009E73,
    YELLOW = 0xF0E442,
    BLUE = 0x0072B2,
    VERMILLION = 0xD55E00,
    WHITE = 0xFFFFFF,
    GREY = 0x9a9a9a,
    PURPLE = 0xCC79A7,
    LIGHT = 0xdddddd,
    GAP_GREY = 0xececec,
    LEASE_TINT = 0xCFE8F7,
    BAND = 0xF6D2BC,
};

const struct palette_rgb palette_background = RGB(WHITE), palette_outline = RGB(BLACK);

static const struct palette_look looks[SCENE_ST_COUNT] = {
        [SCENE_ST_TEXT] = {RGB(WHITE), RGB(INK), PALETTE_NONE, 0},
        [SCENE_ST_AXIS] = {RGB(WHITE), RGB(INK), PALETTE_NONE, 0},
        [SCENE_ST_LABEL] = {RGB(WHITE), RGB(INK), PALETTE_NONE, 1},
        [SCENE_ST_LEGEND] = {RGB(WHITE), RGB(INK), PALETTE_NONE, 0},
        [SCENE_ST_ACQUIRING] = {RGB(GREY), RGB(INK), PALETTE_THIN, 0},
        [SCENE_ST_HOLDING] = {RGB(BLUE), RGB(WHITE), PALETTE_SOLID, 1},
        [SCENE_ST_PAUSED_HOLDING] = {RGB(BLUE), RGB(YELLOW), PALETTE_HATCH, 1},
        [SCENE_ST_PAUSED] = {RGB(WHITE), RGB(ORANGE), PALETTE_HATCH, 0},
        [SCENE_ST_CRASHED] = {RGB(BLACK), RGB(WHITE), PALETTE_SOLID, 1},
        [SCENE_ST_LEASE] = {RGB(LEASE_TINT), RGB(SKY), PALETTE_SOLID, 0},
        [SCENE_ST_DOUBLE] = {RGB(VERMILLION), RGB(WHITE), PALETTE_SOLID, 1},
        [SCENE_ST_ALERT] = {RGB(WHITE), RGB(VERMILLION), PALETTE_NONE, 1},
        [SCENE_ST_MARK_OK] = {RGB(GREEN), RGB(WHITE), PALETTE_SOLID, 1},
        [SCENE_ST_MARK_WARN] = {RGB(ORANGE), RGB(BLACK), PALETTE_SOLID, 1},
        [SCENE_ST_MARK_BAD] = {RGB(BLACK), RGB(WHITE), PALETTE_SOLID, 1},
        [SCENE_ST_MARK_SERVER] = {RGB(SKY), RGB(BLACK), PALETTE_SOLID, 1},
        [SCENE_ST_MARK_NOTE] = {RGB(WHITE), RGB(BLACK), PALETTE_SOLID, 1},
        [SCENE_ST_STALE_WRITE] = {RGB(VERMILLION), RGB(WHITE), PALETTE_SOLID, 1},
        [SCENE_ST_WRITE_REJECTED] = {RGB(GREEN), RGB(WHITE), PALETTE_SOLID, 1},
        [SCENE_ST_BANNER] = {RGB(WHITE), RGB(INK), PALETTE_NONE, 0},
        [SCENE_ST_TITLE] = {RGB(WHITE), RGB(INK), PALETTE_NONE, 1},
        [SCENE_ST_SAFE] = {RGB(GREEN), RGB(WHITE), PALETTE_SOLID, 1},
        [SCENE_ST_UNSAFE] = {RGB(VERMILLION), RGB(WHITE), PALETTE_SOLID, 1},
        [SCENE_ST_STUCK] = {RGB(ORANGE), RGB(BLACK), PALETTE_SOLID, 1},
        [SCENE_ST_GRID] = {RGB(LIGHT), RGB(LIGHT), PALETTE_NONE, 0},
        [SCENE_ST_BAND] = {RGB(BAND), RGB(VERMILLION), PALETTE_SOLID, 0},
        [SCENE_ST_MESSAGE] = {RGB(WHITE), RGB(BLACK), PALETTE_SOLID, 0}, /* its label on white */
        [SCENE_ST_GAP] = {RGB(GAP_GREY), RGB(INK), PALETTE_SOLID, 1},
        [SCENE_ST_CLOCK] = {RGB(WHITE), RGB(PURPLE), PALETTE_NONE, 1}, /* used by nothing else */
        [SCENE_ST_DROP] = {RGB(WHITE), RGB(BLACK), PALETTE_NONE, 0},
        [SCENE_ST_REPLICATION] = {RGB(WHITE), RGB(BLUE), PALETTE_SOLID, 0}, /* its label on white */
        [SCENE_ST_PARTITION] = {RGB(GAP_GREY), RGB(INK), PALETTE_SOLID, 1}, /* the links cut */
        [SCENE_ST_LEADER] = {RGB(YELLOW), RGB(INK), PALETTE_SOLID, 1},      /* a band, its term in ink */
        [SCENE_ST_LOCK_DELAY] = {RGB(GREY), RGB(INK), PALETTE_HATCH, 1},    /* withheld: hatched grey */
};

const struct palette_look *palette_look(int style) {
    return &looks[style >= 0 && style < SCENE_ST_COUNT ? style : SCENE_ST_TEXT];
}
