/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * gnuplot.h: the figures' engine - panels of series drawn by gnuplot as
 * SVG text: gnuplot found on $PATH and run from an argument vector on a
 * script of our own, in which no text is code (gnuplot.c says how),
 * what it says when it fails, and a figure's panels stacked in a grid.
 * It knows no benchmark and no row: the figures themselves are
 * figure.c's.
 */
#ifndef BENCH_GNUPLOT_H
#define BENCH_GNUPLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* figure.c's row a point comes from, for its messages; opaque here. */
struct fig_row;

/* A drawn figure, kept until all are drawn: its file and its SVG. */
struct fig_svg {
	char path[4200];
	char *svg;
	size_t len;
};

struct figure {
	FILE *f;			/* the commands */
	char *cmd;
	size_t cmd_len;
	FILE *lab;			/* the lines of $L */
	char *lab_text;
	size_t lab_len;
	int nr_labels;
	char path[4200];
	int blk;
	int err;			/* -EINVAL: a row that cannot be drawn */
	char why[9000];			/* then what is wrong with it */
};

#define MAX_POINTS 64

enum ser_kind {
	SER_BARS,	/* a bar per category, grouped with the other bars */
	SER_MARKS,	/* points on the bar slot @slot, with lo..hi */
	SER_LINES,	/* lines and points at numeric x */
	SER_HLINE,	/* a dashed horizontal line at y[0] */
};

struct series {
	enum ser_kind kind;
	char title[200];		/* "" = not in the legend */
	const char *color;
	int slot;			/* SER_MARKS: the bar series it marks */
	int pt;				/* point type */
	bool err;			/* lo..hi as error bars */
	bool key_only;			/* bars: a legend entry alone */
	int n;
	double x[MAX_POINTS], y[MAX_POINTS], lo[MAX_POINTS], hi[MAX_POINTS];
	/* Where a point's y comes from, to name a row that cannot be
	 * drawn: the row (NULL: the code's own numbers) and its field. */
	const struct fig_row *row[MAX_POINTS];
	const char *field[MAX_POINTS];
};

/*
 * Every text of a panel is drawn as it is, never read as gnuplot code,
 * but for xtics: the code's own tics, which gnuplot reads.
 */
struct panel {
	char title[300], xlabel[200], ylabel[200];
	bool logy, logx2;
	double ymin, ymax;		/* NaN: gnuplot's */
	double xmin, xmax;		/* NaN: gnuplot's */
	const char *cats[MAX_POINTS];	/* category axis, or nr_cats 0 */
	int nr_cats;
	const char *xtics;		/* a numeric axis's tics, or NULL */
	bool key;			/* a legend, outside on the right */
	int lmargin;			/* characters; 0: the panel before's */
	int rmargin;			/* characters; 0: room for its legend */
	bool one_line;			/* a y = 1 reference line */
	struct series *s;
	int ns;
};

/* @p empty, its series to be kept in @s: NaN ranges, a legend. */
void panel_init(struct panel *p, struct series *s);
/* A new series of @p, titled by @fmt ("" or none: not in the legend). */
struct series *series_add(struct panel *p, enum ser_kind kind,
			  const char *color, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A point of @s at @x: @y, and @lo..@hi for error bars (NaN: none). */
void point_add(struct series *s, double x, double y, double lo, double hi);
/* The right margin, in characters, that holds @p's legend. */
int panel_legend_chars(const struct panel *p);
/* One right margin for @n panels stacked in a column, so they align. */
void panels_align(struct panel *p, int n);

/*
 * A figure of @path (named in messages) @width x @height pixels, its
 * @rows x @cols panels under @title: 0 or -ENOMEM.  Then panel_plot()
 * for each panel, row by row, and figure_close().
 */
int figure_open(struct figure *fig, const char *path, int width,
		int height, int rows, int cols, const char *title);
/* One panel: its axes, its data as datablocks, its plot command. */
void panel_plot(struct figure *fig, const struct panel *p);
/*
 * Draw @fig: run gnuplot (unless fig->err: then fig->why is said), keep
 * the SVG in @out (free its svg) to be written with the others.  0, or
 * -errno; each failure, and each warning of gnuplot's, is one line on
 * stderr.
 */
int figure_close(struct figure *fig, struct fig_svg *out);

/* Is gnuplot on $PATH (where figure_close() runs it from)? */
bool gnuplot_installed(void);

#endif /* BENCH_GNUPLOT_H */
