/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * svg.h - the drawing of `ptebatch run --svg`: every observe of a run as
 * one figure of page cells coloured by folio, stacked in one SVG file.
 */
#ifndef SCENARIO_SVG_H
#define SCENARIO_SVG_H

#include <stdio.h>

#include "scenario/backend.h"
#include "scenario/run.h"
#include "scenario/scenario.h"

struct svg_drawing;

/*
 * A drawing of a run of @s on @b (named in the captions): NULL when out
 * of memory.  It follows the run through the hooks svg_drawing_watch()
 * fills, for scenario_run_watched().
 */
struct svg_drawing *svg_drawing_create(const struct scenario *s,
				       const struct backend *b);
void svg_drawing_watch(struct svg_drawing *d, struct scn_watch *watch);

/* How many observes it has drawn. */
int svg_drawing_figures(const struct svg_drawing *d);

/*
 * The whole SVG document on @f; a run with no observe gets a note saying
 * so.  Returns 0, or -errno when the drawing ran out of memory or @f
 * could not be written.
 */
int svg_drawing_write(struct svg_drawing *d, FILE *f);
void svg_drawing_free(struct svg_drawing *d);

#endif /* SCENARIO_SVG_H */
