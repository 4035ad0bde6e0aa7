/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The pieces of inflight's SVG charts, shared by `report --format svg` and `compare -o
 * X.svg`: a time axis and a byte axis, stacked areas of tracked bytes by stage or by class
 * from model/columns.h, the RSS line, the peak marked with its composition, and lanes of
 * owners per stage. Every string from a recording goes out escaped for XML.
 */
#ifndef INFLIGHT_SVG_PLOT_H
#define INFLIGHT_SVG_PLOT_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include "contract/names.h"
#include "model/columns.h"
#include "model/timeline.h"

#define SVG_W 1200
#define SVG_X0 90   /* plot area, left */
#define SVG_X1 960  /* plot area, right; the legend goes beyond */
#define SVG_NCOLS (SVG_X1 - SVG_X0)

/* One plot area: where it is and the scales it shares with the others of its chart. */
struct svg_panel {
	int y0, y1;	 /* top and bottom */
	__u64 t0, t1;	 /* time range, CLOCK_MONOTONIC */
	__u64 origin;	 /* time 0 of the axis labels */
	double ymax;	 /* bytes at the top */
};

/* Text into XML: markup escaped, control bytes replaced, so it always parses. */
void svg_plot__text(FILE *f, const char *s, size_t max);

/* Color of class c / stage slot s (INFL_SLOT_NONE is grey). */
const char *svg_plot__class_color(unsigned c);
const char *svg_plot__stage_color(unsigned s);

/* The top of a byte axis giving round ticks above `top`. */
double svg_plot__ymax(__u64 top);

/* Grid, tick labels and a title above the panel. */
void svg_plot__axes(FILE *f, const struct svg_panel *pn, const char *title, bool time_labels);
/* The x-axis caption under `y`. */
void svg_plot__time_caption(FILE *f, int y, const char *what);
/* A stacked area of the columns: by stage (`by_stage`) or by class, one path per series
 * in `mask`, each with its name as a tooltip; `id` names the group (element id). */
void svg_plot__stack(FILE *f, const struct svg_panel *pn, const struct column *col, int n,
	       bool by_stage, __u32 mask, const struct infl_names *nm, const char *id);
/* The RSS line (the highest RSS of each column). */
void svg_plot__rss(FILE *f, const struct svg_panel *pn, const struct column *col, int n);
/* The peak: a dashed line, a dot, "peak SIZE at T s" and a box with its composition by
 * stage (bytes, owners and the largest classes of each). */
void svg_plot__peak(FILE *f, const struct svg_panel *pn, const struct tl_proc *p,
	      const struct infl_names *nm, const char *id);
/* The OOM kill: a purple line and "OOM kill at T s" (element g.oom), when there was one. */
void svg_plot__oom(FILE *f, const struct svg_panel *pn, const struct tl_proc *p);
/* One lane per stage in `slots` below y0 with the owners in it; returns the y under them. */
int svg_plot__lanes(FILE *f, const struct svg_panel *pn, const struct column *col, int n,
	      __u32 slots, const struct infl_names *nm, int y0);
/* A legend of the series in `mask` at (x, y); returns the y under it. */
int svg_plot__legend(FILE *f, int x, int y, bool by_stage, __u32 mask, const struct infl_names *nm,
	       bool rss);
/* The slots with bytes in any column / the classes with bytes in any column. */
__u32 svg_plot__slots_used(const struct column *col, int n);
__u32 svg_plot__classes_used(const struct column *col, int n);

#endif /* INFLIGHT_SVG_PLOT_H */
