/* SVG: a scene written as SVG 1.1 text by hand (no library): shapes for
 * intervals and events, text kept as text, a <title> tooltip on every event.
 * The same scene gives the same bytes. */
#ifndef LOCKSIM_SVG_H
#define LOCKSIM_SVG_H

#include <stddef.h>
#include <stdio.h>

#include "scene.h"
#include "trace.h"

/* Write the picture of tr (borrowed, read only) to out: the scene of its
 * layout in view v (NULL = scene_view_pixels 1280 x 720), headed by banner b
 * (NULL = none). The image is as tall as v->height, or as the content when
 * that is taller or v->height is 0. Returns 0, LSIM_ENOMEM, LSIM_EBAD_VALUE
 * (a view too small) or LSIM_EOUTPUT (a write failed). */
int svg_render(FILE *out, const struct trace *tr, const struct scene_banner *b, const struct scene_view *v);

/* n traces stacked, one panel each, on one time axis (scene_build_panels);
 * banners is NULL or n banners. Returns as svg_render does. */
int svg_render_panels(FILE *out, const struct trace *const *trs, size_t n, const struct scene_banner *banners,
                      const struct scene_view *v);

/* Write an already built scene (borrowed), built in view v, at least height
 * pixels tall. Returns 0 or LSIM_EOUTPUT. */
int svg_write_scene(FILE *out, const struct scene *sc, const struct scene_view *v, int height);

#endif
