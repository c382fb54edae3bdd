/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * figure.h: the benchmark figures, drawn with gnuplot (gnuplot.h) from
 * the rows the benchmarks write as JSON (one object per line), so a saved
 * --json file draws the same figures later (`ptebatch plot`) as --plot
 * draws at the end of a run.
 *
 * One figure per question, each an SVG of its own: "gup" (the speed-up of
 * batching per folio size beside the floor's bound and the seed's
 * published ratios; the times with min..max bars), "cow" (faults and time
 * against wp_reuse_max, the block fault against N with its fitted line),
 * "kernels-cow" (the same passes on kernels of ours built with each window,
 * rows of `bench cow --backend vm:NAME` stamped with "kernel"), "mprotect" (ns per PTE, one panel per architecture), "replay" (faults
 * and time of each recorded program) and "predicted" (the kernel time the
 * calibration predicts beside the kernel's measured time).
 */
#ifndef BENCH_FIGURE_H
#define BENCH_FIGURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct fig_row;

/* The rows of one or more runs, in the order they were read. */
struct fig_rows {
	struct fig_row *row;
	size_t nr, cap;
};

/*
 * Add one JSON line of @where (a file name, for messages; kept by the
 * row, so it must outlive @rows) numbered @lineno: 0, or -EINVAL with
 * "WHERE:LINE: why" in @why (not an object, a field missing or of the
 * wrong type, an "arch" that is not a plain name), or -ENOMEM.  Blank
 * lines are skipped.
 */
int fig_rows_add_line(struct fig_rows *rows, const char *line,
		      const char *where, int lineno, char *why, size_t whylen);
/*
 * The largest rows file: the biggest shipped one,
 * docs/predicted-replay-results.json (a bench replay of four traces), is
 * 43K; 16M is some 400 times that.
 */
#define FIG_ROWS_MAX_BYTES (16UL << 20)

/*
 * Every line of @path, as fig_rows_add_line() takes them; a file larger
 * than FIG_ROWS_MAX_BYTES is -EFBIG, "PATH: larger than the 16M ...".
 */
int fig_rows_read_file(struct fig_rows *rows, const char *path, char *why,
		       size_t whylen);
/* Every line of the text @buf of @len bytes (what --plot kept). */
int fig_rows_read_text(struct fig_rows *rows, const char *buf, size_t len,
		       const char *where, char *why, size_t whylen);
void fig_rows_free(struct fig_rows *rows);

/*
 * Draw every figure @rows hold rows for.  @out is a path ending in .svg:
 * one figure is written there, several as OUT-NAME.svg each (bench.svg:
 * bench-gup.svg, bench-cow.svg, ...), but the one whose NAME is OUT's
 * (replay.svg: replay.svg, replay-predicted.svg).  @machine names the machine in
 * every title when the rows do not (rows written before they carried
 * "machine"); NULL: the rows' own.  @only, a comma-separated list of
 * figure names, draws those alone (each must have rows; NULL: all).  Each
 * file written is named on @log.
 *
 * Every text of the rows, @machine and @out is drawn as it is and never
 * read by gnuplot as code (bench/gnuplot.c says how); what XML cannot carry is
 * drawn as U+FFFD (lib/xmltext.h).  Every figure is drawn before any
 * file is written, so a failure writes nothing.
 * 0, -ENODATA (no row of a known benchmark), -EINVAL (a row's value that
 * a log axis cannot show, 0 or less: "FILE:LINE: ..." names the row and
 * the field), -ENOENT (no gnuplot) or -EIO (gnuplot failed, or a file
 * could not be written); the reason is one line on stderr.
 */
int fig_draw_all(const struct fig_rows *rows, const char *out,
		 const char *machine, const char *only, FILE *log);

/*
 * The flag that named fig_draw_all()'s @out, for its messages: "--plot"
 * unless told (plot's "--out"; bench_plot_check() tells it).
 */
void fig_out_flag(const char *flag);

#endif /* BENCH_FIGURE_H */
