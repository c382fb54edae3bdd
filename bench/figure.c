// SPDX-License-Identifier: GPL-2.0-only
/*
 * figure.c: the benchmark figures (figure.h), from JSON rows to the panels
 * that gnuplot.c draws.
 *
 * Every figure follows the same rules: labels are literal text (the
 * terminal's enhanced text is off, so "pin_user_pages_fast" is not read
 * as subscripts), every axis says its unit, the title names the machine,
 * the statistic and the repetitions, the legend sits outside the plot
 * area, and the canvas is sized for what it holds.
 */
#include <errno.h>
#include <gsl/gsl_fit.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "bench/figure.h"
#include "bench/gnuplot.h"
#include "lib/outfile.h"
#include "lib/readfile.h"
#include "scenario/vocab.h"

struct fig_row {
	json_t *obj;
	const char *bench, *folio, *op, *variant, *backend, *arch, *machine;
	const char *trace;
	const char *kernel;		/* a guest's rows: the kernel's name */
	const char *where;		/* the file it was read from */
	int lineno;			/* its line there */
	double median, min, max;
	int reps;
};

/* ---- rows -------------------------------------------------------------- */

static const char *str_field(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* A number field of @r, NaN when the row has none. */
static double num(const struct fig_row *r, const char *key)
{
	json_t *v = json_object_get(r->obj, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static bool arch_name_ok(const char *arch)
{
	size_t n = strspn(arch, "abcdefghijklmnopqrstuvwxyz"
			  "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_");

	return n && n <= 32 && !arch[n];
}

int fig_rows_add_line(struct fig_rows *rows, const char *line,
		      const char *where, int lineno, char *why, size_t whylen)
{
	static const char *const need[] = { "bench", "folio", "op", "variant",
					    "backend" };
	json_error_t jerr;
	struct fig_row *r;
	json_t *o;
	size_t i;

	if (!line[strspn(line, " \t\r\n")])
		return 0;
	o = json_loads(line, JSON_REJECT_DUPLICATES, &jerr);
	if (!o) {
		snprintf(why, whylen, "%s:%d: not JSON: %s", where, lineno,
			 jerr.text);
		return -EINVAL;
	}
	if (!json_is_object(o)) {
		snprintf(why, whylen, "%s:%d: not a JSON object (a benchmark"
			 " row is one object per line)", where, lineno);
		json_decref(o);
		return -EINVAL;
	}
	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!str_field(o, need[i])) {
			snprintf(why, whylen, "%s:%d: no string \"%s\" (not a"
				 " row of ptebatch bench --json)", where,
				 lineno, need[i]);
			json_decref(o);
			return -EINVAL;
		}
	/* An arch names files (OUT-gup-ARCH.svg): a plain name only. */
	if (str_field(o, "arch") && !arch_name_ok(str_field(o, "arch"))) {
		snprintf(why, whylen, "%s:%d: \"arch\" is not an"
			 " architecture's name (1 to 32 letters, digits, - and"
			 " _)", where, lineno);
		json_decref(o);
		return -EINVAL;
	}
	if (!json_is_number(json_object_get(o, "median_us"))) {
		snprintf(why, whylen, "%s:%d: no number \"median_us\"", where,
			 lineno);
		json_decref(o);
		return -EINVAL;
	}
	if (rows->nr == rows->cap) {
		size_t cap = rows->cap ? 2 * rows->cap : 64;
		struct fig_row *n = realloc(rows->row, cap * sizeof(*n));

		if (!n) {
			json_decref(o);
			snprintf(why, whylen, "%s", strerror(ENOMEM));
			return -ENOMEM;
		}
		rows->row = n;
		rows->cap = cap;
	}
	r = &rows->row[rows->nr++];
	memset(r, 0, sizeof(*r));
	r->obj = o;
	r->bench = str_field(o, "bench");
	r->folio = str_field(o, "folio");
	r->op = str_field(o, "op");
	r->variant = str_field(o, "variant");
	r->backend = str_field(o, "backend");
	r->arch = str_field(o, "arch");
	r->machine = str_field(o, "machine");
	r->trace = str_field(o, "trace");
	r->kernel = str_field(o, "kernel");
	r->where = where;
	r->lineno = lineno;
	r->median = num(r, "median_us");
	r->min = num(r, "min_us");
	r->max = num(r, "max_us");
	r->reps = isnan(num(r, "reps")) ? 0 : (int)num(r, "reps");
	return 0;
}

int fig_rows_read_text(struct fig_rows *rows, const char *buf, size_t len,
		       const char *where, char *why, size_t whylen)
{
	const char *c = buf, *end = buf + len;
	int lineno = 0, err = 0;

	while (c < end && !err) {
		const char *nl = memchr(c, '\n', (size_t)(end - c));
		size_t n = nl ? (size_t)(nl - c) : (size_t)(end - c);
		char *line = strndup(c, n);

		lineno++;
		if (!line) {
			snprintf(why, whylen, "%s", strerror(ENOMEM));
			return -ENOMEM;
		}
		err = fig_rows_add_line(rows, line, where, lineno, why, whylen);
		free(line);
		c += n + 1;
	}
	return err;
}

int fig_rows_read_file(struct fig_rows *rows, const char *path, char *why,
		       size_t whylen)
{
	struct readfile_lines lines;
	char *line;
	size_t len;
	int lineno = 0, err;

	err = readfile_lines_open(&lines, path, FIG_ROWS_MAX_BYTES, 0,
				  "a rows file", why, whylen);
	while (!err && (err = readfile_lines_next(&lines, &line, &len, why,
						  whylen)) > 0) {
		/* json_loads() would end the line at the NUL, unsaid. */
		if (strlen(line) != len) {
			snprintf(why, whylen, "%s:%d: a NUL byte in the line",
				 path, lineno + 1);
			err = -EINVAL;
			break;
		}
		err = fig_rows_add_line(rows, line, path, ++lineno, why, whylen);
	}
	readfile_lines_close(&lines);
	return err;
}

void fig_rows_free(struct fig_rows *rows)
{
	size_t i;

	for (i = 0; i < rows->nr; i++)
		json_decref(rows->row[i].obj);
	free(rows->row);
	memset(rows, 0, sizeof(*rows));
}

/*
 * A row of @rows matching every given field (NULL: any).  @variant is
 * "=NAME" (exactly), "+PART" (contains) or "-PART" (does not contain).
 * A row without "arch" (kernel rows of older runs) matches any arch.
 */
static const struct fig_row *find_row(const struct fig_rows *rows,
				      const char *arch, const char *bench,
				      const char *folio, const char *op,
				      const char *variant, const char *backend)
{
	size_t i;

	for (i = 0; i < rows->nr; i++) {
		const struct fig_row *r = &rows->row[i];

		if (arch && r->arch && strcmp(r->arch, arch))
			continue;
		if ((bench && strcmp(r->bench, bench)) ||
		    (folio && strcmp(r->folio, folio)) ||
		    (op && strcmp(r->op, op)) ||
		    (backend && strcmp(r->backend, backend)))
			continue;
		if (variant && variant[0] == '=' && strcmp(r->variant, variant + 1))
			continue;
		if (variant && variant[0] == '+' && !strstr(r->variant, variant + 1))
			continue;
		if (variant && variant[0] == '-' && strstr(r->variant, variant + 1))
			continue;
		return r;
	}
	return NULL;
}

/* Distinct values of a string field of @bench's rows (of @arch), in order. */
static int distinct(const struct fig_rows *rows, const char *bench,
		    const char *arch, size_t offset, const char **out, int max)
{
	int n = 0, j;
	size_t i;

	for (i = 0; i < rows->nr && n < max; i++) {
		const struct fig_row *r = &rows->row[i];
		const char *v = *(const char *const *)((const char *)r + offset);

		if (!v || (bench && strcmp(r->bench, bench)) ||
		    (arch && r->arch && strcmp(r->arch, arch)))
			continue;
		for (j = 0; j < n && strcmp(out[j], v); j++)
			;
		if (j == n)
			out[n++] = v;
	}
	return n;
}

#define F_ARCH offsetof(struct fig_row, arch)
#define F_FOLIO offsetof(struct fig_row, folio)
#define F_OP offsetof(struct fig_row, op)
#define F_TRACE offsetof(struct fig_row, trace)
#define F_KERNEL offsetof(struct fig_row, kernel)

/* "median of 15 reps" or "median of 5-15 reps", over @bench's rows
 * (NULL: every row's). */
static void reps_text(const struct fig_rows *rows, const char *bench,
		      char *buf, size_t len)
{
	int lo = 0, hi = 0;
	size_t i;

	for (i = 0; i < rows->nr; i++) {
		const struct fig_row *r = &rows->row[i];

		if ((bench && strcmp(r->bench, bench)) || r->reps <= 0)
			continue;
		if (!lo || r->reps < lo)
			lo = r->reps;
		if (r->reps > hi)
			hi = r->reps;
	}
	if (lo == hi)
		snprintf(buf, len, "median of %d reps", lo);
	else
		snprintf(buf, len, "median of %d-%d reps", lo, hi);
}

/* The machine of @bench's rows (NULL: any row's), @override, or a note
 * that none is known. */
static const char *machine_of(const struct fig_rows *rows, const char *bench,
			      const char *override)
{
	size_t i;

	if (override)
		return override;
	for (i = 0; i < rows->nr; i++)
		if ((!bench || !strcmp(rows->row[i].bench, bench)) &&
		    rows->row[i].machine)
			return rows->row[i].machine;
	return "machine not recorded in the rows";
}


/* A colour-blind-safe palette (Okabe and Ito), by meaning. */
#define C_PER_PTE	"#E69F00"	/* orange */
#define C_BATCHED	"#0072B2"	/* blue */
#define C_FLOOR		"#999999"	/* grey */
#define C_KERNEL	"#009E73"	/* green */
#define C_SEED		"#000000"
static const char *const palette[] = {
	"#E69F00", "#0072B2", "#009E73", "#CC79A7", "#56B4E9", "#D55E00",
	"#F0E442", "#000000",
};
#define NR_PALETTE (int)(sizeof(palette) / sizeof(palette[0]))

/* Field @field of row @r (NULL: none) @scale as a point of @s at @x. */
static void point_field(struct series *s, double x, const struct fig_row *r,
			const char *field, double scale)
{
	point_add(s, x, r ? num(r, field) * scale : NAN, NAN, NAN);
	if (s->n && r) {
		s->row[s->n - 1] = r;
		s->field[s->n - 1] = field;
	}
}

/* A row's median, min and max times @scale as a point of @s at @x. */
static void point_row(struct series *s, double x, const struct fig_row *r,
		      double scale)
{
	if (r)
		point_add(s, x, r->median * scale, r->min * scale,
			  r->max * scale);
	else
		point_add(s, x, NAN, NAN, NAN);
	if (s->n && r) {
		s->row[s->n - 1] = r;
		s->field[s->n - 1] = "median_us";
	}
}

/*
 * The least-squares line y = a + b x through the drawn points of @s
 * (gsl_fit_linear): false when fewer than two points, or all at one x.
 */
static bool fit_line(const struct series *s, double *a, double *b)
{
	double x[MAX_POINTS], y[MAX_POINTS], c00, c01, c11, sumsq;
	size_t n = 0;
	int i;

	for (i = 0; i < s->n; i++) {
		if (isnan(s->y[i]))
			continue;
		x[n] = s->x[i];
		y[n++] = s->y[i];
	}
	for (i = 1; i < (int)n && x[i] == x[0]; i++)
		;
	if (n < 2 || i == (int)n)
		return false;
	return !gsl_fit_linear(x, 1, y, 1, n, a, b, &c00, &c01, &c11, &sumsq);
}

/*
 * @s's least-squares line from N = 1 to 512, a grey series of @p
 * labelled by @fmt with the intercept and the slope times 1000 (none
 * when @s has no line).
 */
static void __attribute__((format(printf, 3, 0)))
panel_fit_line(struct panel *p, const struct series *s, const char *fmt)
{
	struct series *line;
	char label[200];
	double a, b;

	if (!fit_line(s, &a, &b))
		return;
	snprintf(label, sizeof(label), fmt, a, b * 1e3);
	line = series_add(p, SER_LINES, "#555555", "%s", label);
	line->pt = -1;
	point_add(line, 1, a + b, NAN, NAN);
	point_add(line, 512, a + b * 512, NAN, NAN);
}

/*
 * A value of a row that @p would draw on a log axis but cannot (0 or
 * less): "FILE:LINE: ..." in @fig->why, -EINVAL in @fig->err.  gnuplot
 * would leave such a bar or point out without a word, or stop half-way
 * through the figure when a series has nothing else.
 */
static void panel_check_log(struct figure *fig, const struct panel *p)
{
	int i, j, k;

	for (j = 0; j < p->ns && !fig->err; j++) {
		const struct series *s = &p->s[j];

		for (i = 0; i < s->n && !fig->err; i++) {
			const struct fig_row *r = s->row[i];
			bool times = s->field[i] &&
				     !strcmp(s->field[i], "median_us");
			const char *field[3] = {
				s->field[i], times ? "min_us" : NULL,
				times ? "max_us" : NULL,
			};
			double v[3] = { s->y[i], s->lo[i], s->hi[i] };
			const char *axis = "y";

			if (!r || s->key_only)
				continue;
			for (k = 0; k < 3; k++)
				if (field[k] && p->logy && (k == 0 || s->err) &&
				    !isnan(v[k]) && v[k] <= 0)
					break;
			if (k == 3 && p->logx2 && s->kind != SER_HLINE &&
			    !isnan(s->y[i]) && s->x[i] <= 0 &&
			    !isnan(num(r, "wp_reuse_max"))) {
				field[k = 0] = "wp_reuse_max";
				v[0] = num(r, "wp_reuse_max");
				axis = "x";
			}
			if (k == 3)
				continue;
			fig->err = -EINVAL;
			snprintf(fig->why, sizeof(fig->why), "%s:%d: \"%s\" is"
				 " %g, but %s draws it on a log %s axis (\"%s\"),"
				 " which has no place for 0 or less", r->where,
				 r->lineno, field[k], num(r, field[k]),
				 fig->path, axis,
				 *axis == 'y' ? p->ylabel : p->xlabel);
		}
	}
}

/* @p checked against its rows (above), then plotted. */
static void panel_draw(struct figure *fig, const struct panel *p)
{
	panel_check_log(fig, p);
	panel_plot(fig, p);
}

/*
 * The file of figure @name: @out itself when it is the only one, or when
 * @out is named after it (replay.svg: replay.svg and replay-predicted.svg).
 */
static void figure_path(char *buf, size_t len, const char *out,
			const char *name, bool several)
{
	const char *base = strrchr(out, '/') ? strrchr(out, '/') + 1 : out;
	size_t n = strlen(out);

	if (!several || (strlen(base) == strlen(name) + 4 &&
			 !strncmp(base, name, strlen(name))))
		snprintf(buf, len, "%s", out);
	else
		snprintf(buf, len, "%.*s-%s.svg", (int)(n - 4), out, name);
}

/* ---- gup ----------------------------------------------------------------- */

/*
 * Seed 000's published gup_test times (µs, x86-64 VM, 256M, 65536 pages
 * per call): before on its two baseline boots, after on the patched one.
 */
static const struct seed_gup {
	const char *folio;
	double gup_before[2], gup_after, pin_before[2], pin_after;
} seed_gup[] = {
	{ "4K", { 849, 789 }, 783, { 1174, 1138 }, 1094 },
	{ "64K", { 812, 811 }, 126, { 1215, 1113 }, 188 },
	{ "1M", { 799, 774 }, 59, { 1185, 1077 }, 64 },
	{ "2M-PTE", { 803, 786 }, 57, { 1159, 1120 }, 58 },
	{ "2M-PMD", { 42, 40 }, 40, { 46, 41 }, 42 },
};

static const struct seed_gup *seed_of(const char *folio)
{
	size_t i;

	for (i = 0; i < sizeof(seed_gup) / sizeof(seed_gup[0]); i++)
		if (!strcmp(seed_gup[i].folio, folio))
			return &seed_gup[i];
	return NULL;
}

static double ratio_of(const struct fig_row *a, const struct fig_row *b)
{
	return a && b && b->median > 0 ? a->median / b->median : NAN;
}

static int fig_gup(const struct fig_rows *rows, const char *arch,
		   const char *path, const char *machine, struct fig_svg *out)
{
	static const char *const ops[] = {
		"get_user_pages_fast", "pin_user_pages_fast", "put_page",
		"unpin_user_pages",
	};
	static const char *const kops[] = {
		"io_uring_register_buffers", "io_uring_unregister_buffers",
	};
	struct series s1[12], s2[8];
	struct panel p1, p2;
	const char *folios[MAX_POINTS];
	const struct fig_row *any;
	char title[1200], reps[64], per[120], bat[120];
	struct figure fig;
	struct series *sg, *sp;
	int nf, i, k, err;
	double size, pages, ppc;

	nf = distinct(rows, "gup", arch, F_FOLIO, folios, MAX_POINTS);
	any = find_row(rows, arch, "gup", NULL, "pin_user_pages_fast", NULL,
		       "model");
	if (!nf || !any)
		return -ENODATA;
	size = num(any, "size_bytes");
	pages = num(any, "pages");
	ppc = num(any, "pages_per_call");
	any = find_row(rows, arch, "gup", NULL, "pin_user_pages_fast",
		       "-gup_batch=1", "model");
	snprintf(per, sizeof(per), "%s", any ? any->variant : "?");
	any = find_row(rows, arch, "gup", NULL, "pin_user_pages_fast",
		       "+gup_batch=1", "model");
	snprintf(bat, sizeof(bat), "%s", any ? any->variant : "?");
	reps_text(rows, "gup", reps, sizeof(reps));

	/* The speed-up of batching, and what bounds it. */
	panel_init(&p1, s1);
	snprintf(p1.title, sizeof(p1.title), "speed-up of batching, same run:"
		 " time of %.100s (per-PTE) / time of %.100s (batched)", per,
		 bat);
	snprintf(p1.xlabel, sizeof(p1.xlabel), "folio size");
	snprintf(p1.ylabel, sizeof(p1.ylabel), "speed-up (x)");
	p1.ymin = 0;
	p1.one_line = true;
	for (i = 0; i < nf; i++)
		p1.cats[p1.nr_cats++] = folios[i];
	for (k = 0; k < 4; k++) {
		static const char *const colors[] = {
			"#56B4E9", "#0072B2", "#CC79A7", "#F0A8D8",
		};
		struct series *s = series_add(&p1, SER_BARS, colors[k], "%s",
					      ops[k]);

		for (i = 0; i < nf; i++)
			point_add(s, i, ratio_of(
				find_row(rows, arch, "gup", folios[i], ops[k],
					 "-gup_batch=1", "model"),
				find_row(rows, arch, "gup", folios[i], ops[k],
					 "+gup_batch=1", "model")), NAN, NAN);
	}
	sp = series_add(&p1, SER_BARS, C_FLOOR, "floor bound: pin per-PTE /"
			" floor (the most batching could gain)");
	for (i = 0; i < nf; i++)
		point_add(sp, i, ratio_of(
			find_row(rows, arch, "gup", folios[i],
				 "pin_user_pages_fast", "-gup_batch=1", "model"),
			find_row(rows, arch, "gup", folios[i], "floor", NULL,
				 "model")), NAN, NAN);
	sg = series_add(&p1, SER_MARKS, C_SEED, "seed 000 published:"
			" get_user_pages_fast (bar: 2 baseline boots)");
	sg->slot = 0;
	sg->pt = 9;
	sp = series_add(&p1, SER_MARKS, "#D55E00", "seed 000 published:"
			" pin_user_pages_fast (bar: 2 baseline boots)");
	sp->slot = 1;
	sp->pt = 5;
	for (i = 0; i < nf; i++) {
		const struct seed_gup *sd = seed_of(folios[i]);

		if (!sd) {
			point_add(sg, i, NAN, NAN, NAN);
			point_add(sp, i, NAN, NAN, NAN);
			continue;
		}
		point_add(sg, i, sd->gup_before[0] / sd->gup_after,
			  fmin(sd->gup_before[0], sd->gup_before[1]) / sd->gup_after,
			  fmax(sd->gup_before[0], sd->gup_before[1]) / sd->gup_after);
		point_add(sp, i, sd->pin_before[0] / sd->pin_after,
			  fmin(sd->pin_before[0], sd->pin_before[1]) / sd->pin_after,
			  fmax(sd->pin_before[0], sd->pin_before[1]) / sd->pin_after);
	}

	/* The times behind them, beside the floor and the kernel. */
	panel_init(&p2, s2);
	snprintf(p2.title, sizeof(p2.title), "time of one call over the"
		 " region (release: of every page), min..max as bars");
	snprintf(p2.xlabel, sizeof(p2.xlabel), "folio size");
	snprintf(p2.ylabel, sizeof(p2.ylabel), "time (us, log scale)");
	p2.logy = true;
	for (i = 0; i < nf; i++)
		p2.cats[p2.nr_cats++] = folios[i];
	sp = series_add(&p2, SER_BARS, C_PER_PTE, "pin_user_pages_fast, %s"
			" (per-PTE)", per);
	sp->err = true;
	for (i = 0; i < nf; i++)
		point_row(sp, i, find_row(rows, arch, "gup", folios[i],
			  "pin_user_pages_fast", "-gup_batch=1", "model"), 1);
	sp = series_add(&p2, SER_BARS, C_BATCHED, "pin_user_pages_fast, %s"
			" (batched)", bat);
	sp->err = true;
	for (i = 0; i < nf; i++)
		point_row(sp, i, find_row(rows, arch, "gup", folios[i],
			  "pin_user_pages_fast", "+gup_batch=1", "model"), 1);
	sp = series_add(&p2, SER_BARS, C_FLOOR, "floor: read the PTEs, write"
			" pages[]");
	sp->err = true;
	for (i = 0; i < nf; i++)
		point_row(sp, i, find_row(rows, arch, "gup", folios[i], "floor",
					  NULL, "model"), 1);
	for (k = 0; k < 2; k++) {
		if (!find_row(rows, arch, "gup", NULL, kops[k], NULL, "kernel"))
			continue;
		sp = series_add(&p2, SER_BARS, k ? "#8FD3BF" : C_KERNEL,
				"kernel: %s%s", kops[k],
				k ? "" : " (pins them)");
		sp->err = true;
		for (i = 0; i < nf; i++)
			point_row(sp, i, find_row(rows, arch, "gup", folios[i],
						  kops[k], NULL, "kernel"), 1);
	}

	snprintf(title, sizeof(title), "GUP-fast, FOLL_WRITE, over %.0fM"
		 " (%.0f pages, %.0f per call): batched against per-PTE on the"
		 " model (arch %s)\n%s, min..max bars; %s", size / (1 << 20),
		 pages, ppc, arch ? arch : "not in the rows", reps, machine);
	panels_align(&p1, 1);
	p2.rmargin = p1.rmargin = p1.rmargin > panel_legend_chars(&p2) ?
				  p1.rmargin : panel_legend_chars(&p2);
	err = figure_open(&fig, path, 1400, 900, 2, 1, title);
	if (err)
		return err;
	panel_draw(&fig, &p1);
	panel_draw(&fig, &p2);
	return figure_close(&fig, out);
}

/* ---- cow ------------------------------------------------------------------ */

static const struct cow_pass {
	const char *op, *what;
} cow_passes[] = {
	{ "store_page_seq", "one byte per page, in order" },
	{ "store_page_rand", "one byte per page, random order" },
	{ "store_64k", "one store per 64K" },
	{ "store_2m", "one store per 2M" },
};
#define NR_COW_PASSES (int)(sizeof(cow_passes) / sizeof(cow_passes[0]))

/* The model's wp_reuse_max values of @folio's rows, ascending. */
static int cow_ns(const struct fig_rows *rows, const char *arch,
		  const char *folio, double *ns)
{
	int n = 0, i, j;
	size_t r;

	for (r = 0; r < rows->nr; r++) {
		const struct fig_row *row = &rows->row[r];
		double v = num(row, "wp_reuse_max");

		if (strcmp(row->bench, "cow") || strcmp(row->backend, "model") ||
		    strcmp(row->folio, folio) || isnan(v) ||
		    (arch && row->arch && strcmp(row->arch, arch)))
			continue;
		for (i = 0; i < n && ns[i] != v; i++)
			;
		if (i < n || n == MAX_POINTS)
			continue;
		for (j = n++; j > 0 && ns[j - 1] > v; j--)
			ns[j] = ns[j - 1];
		ns[j] = v;
	}
	return n;
}

static const struct fig_row *cow_row(const struct fig_rows *rows,
				     const char *arch, const char *folio,
				     const char *op, double n)
{
	size_t i;

	for (i = 0; i < rows->nr; i++) {
		const struct fig_row *r = &rows->row[i];

		if (!strcmp(r->bench, "cow") && !strcmp(r->backend, "model") &&
		    !strcmp(r->folio, folio) && !strcmp(r->op, op) &&
		    num(r, "wp_reuse_max") == n &&
		    (!arch || !r->arch || !strcmp(r->arch, arch)))
			return r;
	}
	return NULL;
}

/*
 * The cow figures' three panels in one column, their legends in one
 * margin: faults, time or instructions, and the block fault.
 */
static int cow_figure_draw(const char *path, const char *title,
			   struct panel *p1, struct panel *p2,
			   struct panel *p3, struct fig_svg *out)
{
	struct panel *all[] = { p1, p2, p3 };
	struct figure fig;
	int i, m = 0, err;

	for (i = 0; i < 3; i++)
		if (panel_legend_chars(all[i]) > m)
			m = panel_legend_chars(all[i]);
	err = figure_open(&fig, path, 1300, 1250, 3, 1, title);
	if (err)
		return err;
	for (i = 0; i < 3; i++) {
		all[i]->rmargin = m;
		panel_draw(&fig, all[i]);
	}
	return figure_close(&fig, out);
}

static int fig_cow(const struct fig_rows *rows, const char *arch,
		   const char *path, const char *machine, struct fig_svg *out)
{
	struct series s1[12], s2[12], s3[6];
	struct panel p1, p2, p3;
	double ns[MAX_POINTS], ns64[MAX_POINTS];
	char title[1200], reps[64], size_text[64] = "?";
	struct series *s;
	const struct fig_row *r;
	int nn, nn64, i, k;

	nn = cow_ns(rows, arch, "2M-PTE", ns);
	nn64 = cow_ns(rows, arch, "64K", ns64);
	if (!nn && !nn64)
		return -ENODATA;
	r = find_row(rows, arch, "cow", NULL, NULL, NULL, "model");
	if (r && !isnan(num(r, "size")))
		snprintf(size_text, sizeof(size_text), "%.0fM",
			 num(r, "size") / (1 << 20));
	reps_text(rows, "cow", reps, sizeof(reps));

	panel_init(&p1, s1);
	panel_init(&p2, s2);
	snprintf(p1.title, sizeof(p1.title), "write faults of one pass");
	snprintf(p2.title, sizeof(p2.title), "time of one pass, min..max"
		 " as bars");
	snprintf(p1.ylabel, sizeof(p1.ylabel), "faults (log scale)");
	snprintf(p2.ylabel, sizeof(p2.ylabel), "time (ms, log scale)");
	for (k = 0; k < 2; k++) {
		struct panel *p = k ? &p2 : &p1;

		snprintf(p->xlabel, sizeof(p->xlabel), "wp_reuse_max: PTEs"
			 " one write fault may make writable (log2 scale)");
		p->logy = p->logx2 = true;
		p->xtics = "(1, 2, 4, 8, 16, 32, 64, 128, 256, 512)";
		p->xmin = 0.8;
		p->xmax = 640;
	}
	for (k = 0; k < NR_COW_PASSES; k++) {
		const char *op = cow_passes[k].op;
		struct series *f, *t;
		const struct fig_row *kr;

		if (!cow_row(rows, arch, "2M-PTE", op, ns[0]))
			continue;
		f = series_add(&p1, SER_LINES, palette[k], "%s: %s", op,
			       cow_passes[k].what);
		t = series_add(&p2, SER_LINES, palette[k], "%s: %s", op,
			       cow_passes[k].what);
		t->err = true;
		f->pt = t->pt = 5 + 2 * k;
		/* seq and random take the same faults: seq's open
		 * marks stay visible around random's. */
		if (k == 0)
			f->pt = t->pt = 4;
		for (i = 0; i < nn; i++) {
			r = cow_row(rows, arch, "2M-PTE", op, ns[i]);
			point_field(f, ns[i], r, "faults", 1);
			point_row(t, ns[i], r, 1e-3);
		}
		kr = find_row(rows, arch, "cow", "2M-PTE", op, NULL, "kernel");
		if (kr) {
			f = series_add(&p1, SER_HLINE, palette[k], "%s",
				       k ? "" : "dashed: the kernel, same pass"
					   " (reuses one PTE per fault)");
			point_field(f, 0, kr, "faults", 1);
			t = series_add(&p2, SER_HLINE, palette[k], "%s",
				       k ? "" : "dashed: the kernel, same pass");
			point_field(t, 0, kr, "median_us", 1e-3);
		}
	}
	if (nn64) {
		struct series *f = series_add(&p1, SER_LINES, "#D55E00",
					      "store_page_seq on 64K mTHP"
					      " folios");
		struct series *t = series_add(&p2, SER_LINES, "#D55E00",
					      "store_page_seq on 64K mTHP"
					      " folios");

		t->err = true;
		f->pt = t->pt = 12;
		for (i = 0; i < nn64; i++) {
			r = cow_row(rows, arch, "64K", "store_page_seq",
				    ns64[i]);
			point_field(f, ns64[i], r, "faults", 1);
			point_row(t, ns64[i], r, 1e-3);
		}
	}

	/* The block fault: its µs against N, and the line through them. */
	panel_init(&p3, s3);
	snprintf(p3.title, sizeof(p3.title), "one store per 2M: the fault"
		 " that walks a block of N PTEs (time of the pass / its"
		 " faults)");
	snprintf(p3.xlabel, sizeof(p3.xlabel), "N = wp_reuse_max (PTEs per"
		 " block)");
	snprintf(p3.ylabel, sizeof(p3.ylabel), "time per fault (us)");
	p3.xtics = "(1, 64, 128, 192, 256, 320, 384, 448, 512)";
	p3.xmin = 0;
	p3.xmax = 530;
	p3.ymin = 0;
	s = series_add(&p3, SER_LINES, palette[3], "store_2m: model,"
		       " median pass / faults");
	for (i = 0; i < nn; i++)
		point_field(s, ns[i], cow_row(rows, arch, "2M-PTE", "store_2m",
					      ns[i]), "us_per_fault", 1);
	panel_fit_line(&p3, s, "least-squares fit: %.3f us + %.2f ns x N");
	r = find_row(rows, arch, "cow", "2M-PTE", "store_2m", NULL, "kernel");
	if (r && !isnan(num(r, "us_per_fault"))) {
		s = series_add(&p3, SER_HLINE, C_KERNEL, "the kernel: %.3f us"
			       " per fault (one PTE)", num(r, "us_per_fault"));
		point_field(s, 0, r, "us_per_fault", 1);
	}

	snprintf(title, sizeof(title), "Write faults after fork() + child"
		 " exit, %s of PTE-mapped 2M folios: reuse of up to"
		 " wp_reuse_max PTEs per fault\nmodel upstream,wp_reuse_max=N"
		 " (arch %s)%s; %s, a fresh region each; %s", size_text,
		 arch ? arch : "not in the rows",
		 find_row(rows, arch, "cow", NULL, NULL, NULL, "kernel") ?
		 " against the kernel" : ", no kernel rows", reps, machine);
	return cow_figure_draw(path, title, &p1, &p2, &p3, out);
}

/* ---- cow on the series' kernels ---------------------------------------- */

/* @kernel's row of a 2M-PTE @op (a guest's, stamped with its kernel). */
static const struct fig_row *kernel_cow_row(const struct fig_rows *rows,
					    const char *kernel, const char *op)
{
	size_t i;

	for (i = 0; i < rows->nr; i++) {
		const struct fig_row *r = &rows->row[i];

		if (r->kernel && !strcmp(r->kernel, kernel) &&
		    !strcmp(r->bench, "cow") && !strcmp(r->folio, "2M-PTE") &&
		    !strcmp(r->op, op))
			return r;
	}
	return NULL;
}

/*
 * The window a kernel reuses, as it measured it: the stores of its
 * one-byte-per-page pass over the faults they took (65536 / 4096 = 16).
 */
static double kernel_window(const struct fig_rows *rows, const char *kernel)
{
	const struct fig_row *r = kernel_cow_row(rows, kernel,
						 "store_page_seq");
	double faults = r ? num(r, "faults") : NAN;

	return faults > 0 ? round(num(r, "stores") / faults) : NAN;
}

/*
 * Seed 003's table on our kernels (`bench cow --backend vm:KERNEL` on the
 * series built with each window, scripts/wp-reuse-kernels): faults and
 * guest instructions of each pass against the window each kernel
 * measured, the model's faults beside them (model rows of the same
 * arch, if given), and the fault that walks the window.
 */
static int fig_kernels_cow(const struct fig_rows *rows, const char *arch,
			   const char *path, const char *machine,
			   struct fig_svg *out)
{
	const char *kernels[MAX_POINTS];
	double ns[MAX_POINTS];
	struct series s1[12], s2[6], s3[4];
	struct panel p1, p2, p3;
	char title[1400];
	struct series *f, *t;
	const struct fig_row *r;
	int nk, k, i, j;

	nk = distinct(rows, "cow", arch, F_KERNEL, kernels, MAX_POINTS);
	/* By window, ascending; a kernel without its seq pass is left out. */
	for (i = j = 0; i < nk; i++) {
		double n = kernel_window(rows, kernels[i]);
		const char *name = kernels[i];
		int m;

		if (isnan(n))
			continue;
		for (m = j++; m > 0 && ns[m - 1] > n; m--) {
			ns[m] = ns[m - 1];
			kernels[m] = kernels[m - 1];
		}
		ns[m] = n;
		kernels[m] = name;
	}
	nk = j;
	if (!nk)
		return -ENODATA;

	panel_init(&p1, s1);
	panel_init(&p2, s2);
	panel_init(&p3, s3);
	snprintf(p1.title, sizeof(p1.title), "write faults of one pass:"
		 " the kernels (marks), the model (lines alone)");
	snprintf(p2.title, sizeof(p2.title), "guest instructions of one pass"
		 " (QEMU -icount)");
	snprintf(p3.title, sizeof(p3.title), "one store per 2M: guest"
		 " instructions of the fault that walks the window");
	snprintf(p1.ylabel, sizeof(p1.ylabel), "faults (log scale)");
	snprintf(p2.ylabel, sizeof(p2.ylabel), "millions (log scale)");
	snprintf(p3.ylabel, sizeof(p3.ylabel), "thousands per fault");
	for (k = 0; k < 3; k++) {
		struct panel *p = k == 0 ? &p1 : k == 1 ? &p2 : &p3;

		snprintf(p->xlabel, sizeof(p->xlabel), "the kernel's window:"
			 " PTEs one write fault makes writable (log2 scale)");
		p->logx2 = true;
		p->logy = k < 2;
		p->xtics = "(1, 2, 4, 8, 16, 32, 64, 128, 256, 512)";
		p->xmin = 0.8;
		p->xmax = 640;
	}
	/* The fault's cost is linear in N: a linear axis shows the line. */
	snprintf(p3.xlabel, sizeof(p3.xlabel), "the kernel's window N");
	p3.logx2 = false;
	p3.xtics = "(1, 64, 128, 192, 256, 320, 384, 448, 512)";
	p3.xmin = 0;
	p3.xmax = 530;
	p3.ymin = 0;
	for (k = 0; k < NR_COW_PASSES; k++) {
		const char *op = cow_passes[k].op;
		double mn[MAX_POINTS];
		int nm = cow_ns(rows, arch, "2M-PTE", mn);

		f = series_add(&p1, SER_LINES, palette[k], "%s: %s", op,
			       cow_passes[k].what);
		f->pt = k ? 5 + 2 * k : 4;
		t = series_add(&p2, SER_LINES, palette[k], "%s", op);
		t->pt = f->pt;
		for (i = 0; i < nk; i++) {
			r = kernel_cow_row(rows, kernels[i], op);
			point_field(f, ns[i], r, "faults", 1);
			point_field(t, ns[i], r, "median_us", 1e-3);
		}
		if (!nm || !cow_row(rows, arch, "2M-PTE", op, mn[0]))
			continue;
		f = series_add(&p1, SER_LINES, palette[k], "%s",
			       k ? "" : "lines alone: the model, upstream"
				   " with wp_reuse_max = N");
		f->pt = -1;
		for (i = 0; i < nm; i++)
			point_field(f, mn[i], cow_row(rows, arch, "2M-PTE", op,
						      mn[i]), "faults", 1);
	}
	f = series_add(&p3, SER_LINES, palette[3], "store_2m: the pass's"
		       " instructions / its faults");
	for (i = 0; i < nk; i++)
		point_field(f, ns[i], kernel_cow_row(rows, kernels[i],
						     "store_2m"),
			    "us_per_fault", 1);
	panel_fit_line(&p3, f, "least-squares fit: %.2f k + %.0f x N"
		       " instructions");
	snprintf(title, sizeof(title), "Seed 003's table on our kernels:"
		 " 256M of PTE-mapped 2M folios after fork() + child exit,"
		 " one pass each\n%d kernels (%s ... %s, arch %s); %s",
		 nk, kernels[0], kernels[nk - 1], arch ? arch : "not in the"
		 " rows", machine);
	return cow_figure_draw(path, title, &p1, &p2, &p3, out);
}

/* ---- mprotect ------------------------------------------------------------ */

/* The base page of a model arch ("arm64-16k": 16K); 4K if rows name none. */
static double arch_page_size(const char *arch)
{
	unsigned long page = scn_arch_page_size(arch);

	return page ? page : 4096;
}

/* One mprotect row's time per PTE in ns: median / calls / PTEs. */
static void point_ns_per_pte(struct series *s, double x,
			     const struct fig_row *r, double page)
{
	double calls, ptes, k;

	if (!r) {
		point_add(s, x, NAN, NAN, NAN);
		return;
	}
	calls = 2 * num(r, "iters");
	ptes = num(r, "size") / page;
	k = 1e3 / calls / ptes;
	point_add(s, x, r->median * k, r->min * k, r->max * k);
}

/* Every arch's rows, a panel each (@arch is not used). */
static int fig_mprotect(const struct fig_rows *rows, const char *arch,
			const char *path, const char *machine, struct fig_svg *out)
{
	const char *archs[8], *folios[MAX_POINTS];
	struct series s[8][4];
	struct panel p[8];
	char title[1200], reps[64], size_text[64] = "?";
	const struct fig_row *r;
	struct figure fig;
	int na, nf, a, i, err;
	double iters = NAN;

	na = distinct(rows, "mprotect", NULL, F_ARCH, archs, 8);
	if (!find_row(rows, NULL, "mprotect", NULL, NULL, NULL, NULL))
		return -ENODATA;
	if (!na)
		archs[na++] = NULL;
	reps_text(rows, "mprotect", reps, sizeof(reps));
	r = find_row(rows, NULL, "mprotect", NULL, NULL, NULL, "model");
	if (r) {
		snprintf(size_text, sizeof(size_text), "%.0fM",
			 num(r, "size") / (1 << 20));
		iters = num(r, "iters");
	}
	for (a = 0; a < na; a++) {
		struct series *x;
		double page = arch_page_size(archs[a]);
		bool kernel = false;

		panel_init(&p[a], s[a]);
		p[a].key = a == na - 1;
		nf = 0;
		/* PMD-mapped folios have no PTEs to count. */
		{
			const char *all[MAX_POINTS];
			int n = distinct(rows, "mprotect", archs[a], F_FOLIO,
					 all, MAX_POINTS);

			for (i = 0; i < n; i++)
				if (!strstr(all[i], "PMD"))
					folios[nf++] = all[i];
		}
		for (i = 0; i < nf; i++)
			p[a].cats[p[a].nr_cats++] = folios[i];
		x = series_add(&p[a], SER_BARS, C_PER_PTE, "per-PTE:"
			       " upstream,mprotect_batch=0");
		x->err = true;
		for (i = 0; i < nf; i++)
			point_ns_per_pte(x, i, find_row(rows, archs[a],
				"mprotect", folios[i], NULL,
				"+mprotect_batch=0", "model"), page);
		x = series_add(&p[a], SER_BARS, C_BATCHED, "batched:"
			       " upstream,mprotect_batch=1");
		x->err = true;
		for (i = 0; i < nf; i++)
			point_ns_per_pte(x, i, find_row(rows, archs[a],
				"mprotect", folios[i], NULL,
				"+mprotect_batch=1", "model"), page);
		if (find_row(rows, archs[a], "mprotect", NULL, NULL, NULL,
			     "kernel")) {
			kernel = true;
			x = series_add(&p[a], SER_BARS, C_KERNEL, "kernel:"
				       " mprotect() on this machine");
			x->err = true;
			for (i = 0; i < nf; i++)
				point_ns_per_pte(x, i, find_row(rows, archs[a],
					"mprotect", folios[i], NULL, NULL,
					"kernel"), page);
		}
		snprintf(p[a].title, sizeof(p[a].title), "arch %s (%s)",
			 archs[a] ? archs[a] : "not in the rows",
			 kernel ? "model, and this machine's kernel"
				: "model only: no kernel rows");
		snprintf(p[a].xlabel, sizeof(p[a].xlabel), "folio size"
			 " (2M-PMD left out: no PTEs)");
		snprintf(p[a].ylabel, sizeof(p[a].ylabel), "time per PTE per"
			 " call (ns)");
		p[a].ymin = 0;
	}
	/* The legend, on the last panel, names the kernel's bars too. */
	if (na > 1 && find_row(rows, NULL, "mprotect", NULL, NULL, NULL,
			       "kernel") && p[na - 1].ns < 3) {
		struct series *x = series_add(&p[na - 1], SER_BARS, C_KERNEL,
					      "kernel: mprotect() on this"
					      " machine");

		x->key_only = true;
	}
	/* One y scale for every arch, so the panels compare by eye. */
	{
		double top = 0;
		int j, k;

		for (a = 0; a < na; a++)
			for (j = 0; j < p[a].ns; j++)
				for (k = 0; k < p[a].s[j].n; k++) {
					double v = fmax(p[a].s[j].y[k],
							p[a].s[j].hi[k]);

					if (!isnan(v) && v > top)
						top = v;
				}
		for (a = 0; a < na && top > 0; a++)
			p[a].ymax = top * 1.08;
	}
	snprintf(title, sizeof(title), "%s: mprotect(PROT_READ) then"
		 " mprotect(PROT_READ|PROT_WRITE), %.0f rounds over %s, every"
		 " page faulted in: per-PTE against batched\n%s (min..max"
		 " bars) of all %.0f calls, divided by calls and PTEs; %s",
		 r ? r->op : "mprotect", iters, size_text, reps, 2 * iters,
		 machine);
	err = figure_open(&fig, path, na > 1 ? 700 * na + 200 : 1100, 620, 1,
			  na, title);
	if (err)
		return err;
	for (a = 0; a < na; a++)
		panel_draw(&fig, &p[a]);
	return figure_close(&fig, out);
}

/* ---- replay ---------------------------------------------------------------- */

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Every trace's rows (@arch is not used: replay runs one arch). */
static int fig_replay(const struct fig_rows *rows, const char *arch,
		      const char *path, const char *machine, struct fig_svg *out)
{
	const char *traces[32], *folios[MAX_POINTS], *variants[16];
	struct series (*s)[12];
	struct panel *p;
	char title[1200], reps[64];
	struct figure fig;
	int nt, nf, nv, t, i, v, err = 0;

	nt = distinct(rows, "replay", NULL, F_TRACE, traces, 32);
	if (!nt)
		return -ENODATA;
	nv = distinct(rows, "replay", NULL, offsetof(struct fig_row, variant),
		      variants, 16);
	s = calloc((size_t)nt * 2, sizeof(*s));
	p = calloc((size_t)nt * 2, sizeof(*p));
	if (!s || !p) {
		free(s);
		free(p);
		return -ENOMEM;
	}
	for (t = 0; t < nt; t++) {
		for (i = 0; i < 2; i++) {
			struct panel *q = &p[2 * t + i];

			panel_init(q, s[2 * t + i]);
			q->key = i == 1;
			q->logy = true;
			q->lmargin = i ? 10 : 12;
			snprintf(q->xlabel, sizeof(q->xlabel), "folio size (every"
				 " mthp line set to it)");
			snprintf(q->title, sizeof(q->title), "%s: %s",
				 base_name(traces[t]), i ? "wall time of its"
				 " statements, min..max as bars" : "faults");
			snprintf(q->ylabel, sizeof(q->ylabel), "%s", i ?
				 "time (ms, log scale)" : "faults (log scale)");
		}
		nf = 0;
		{
			size_t r;

			for (r = 0; r < rows->nr; r++) {
				const struct fig_row *x = &rows->row[r];
				int j;

				if (strcmp(x->bench, "replay") || !x->trace ||
				    strcmp(x->trace, traces[t]))
					continue;
				for (j = 0; j < nf && strcmp(folios[j], x->folio); j++)
					;
				if (j == nf && nf < MAX_POINTS)
					folios[nf++] = x->folio;
			}
		}
		for (i = 0; i < nf; i++) {
			p[2 * t].cats[p[2 * t].nr_cats++] = folios[i];
			p[2 * t + 1].cats[p[2 * t + 1].nr_cats++] = folios[i];
		}
		for (v = 0; v < nv; v++) {
			bool kern = !strcmp(variants[v], "kernel");
			const char *color = kern ? C_KERNEL :
					    palette[(v + (v >= 2)) % NR_PALETTE];
			struct series *f = series_add(&p[2 * t], SER_BARS, color,
						      "%s%s", kern ? "the kernel"
						      : variants[v], "");
			struct series *x = series_add(&p[2 * t + 1], SER_BARS,
						      color, "%s%s", kern ?
						      "kernel: this machine" :
						      "model: ", kern ? "" :
						      variants[v]);

			x->err = true;
			for (i = 0; i < nf; i++) {
				const struct fig_row *r = NULL;
				size_t k;

				for (k = 0; k < rows->nr && !r; k++) {
					const struct fig_row *y = &rows->row[k];

					if (!strcmp(y->bench, "replay") && y->trace &&
					    !strcmp(y->trace, traces[t]) &&
					    !strcmp(y->folio, folios[i]) &&
					    !strcmp(y->variant, variants[v]))
						r = y;
				}
				point_field(f, i, r, "faults", 1);
				point_row(x, i, r, 1e-3);
			}
		}
	}
	reps_text(rows, "replay", reps, sizeof(reps));
	snprintf(title, sizeof(title), "Recorded programs replayed under each"
		 " folio size: the model's presets and the kernel\n%s of each"
		 " (min..max bars); %s", reps, machine);
	err = figure_open(&fig, path, 1300, 330 * nt + 90, nt, 2, title);
	if (!err) {
		for (i = 0; i < 2 * nt; i++)
			panel_draw(&fig, &p[i]);
		err = figure_close(&fig, out);
	}
	free(s);
	free(p);
	return err;
}

/* ---- predicted ---------------------------------------------------------- */

/* One panel of the predicted figure: @cats categories, the kernel's
 * measured row and the prediction of two model rows for each. */
struct pred_cat {
	const char *name;
	const struct fig_row *kernel, *before, *after;
};

static void pred_panel(struct panel *p, struct series *s,
		       const struct pred_cat *c, int n, double scale,
		       const char *before, const char *after,
		       const char *title, const char *xlabel)
{
	struct series *k, *b, *a;
	int i;

	panel_init(p, s);
	snprintf(p->title, sizeof(p->title), "%s", title);
	snprintf(p->xlabel, sizeof(p->xlabel), "%s", xlabel);
	snprintf(p->ylabel, sizeof(p->ylabel), "time (%s, log scale)",
		 scale == 1 ? "us" : "ms");
	p->logy = true;

	k = series_add(p, SER_BARS, C_KERNEL, "kernel: measured on this"
		       " machine");
	k->err = true;
	b = series_add(p, SER_BARS, C_PER_PTE, "predicted kernel: %s", before);
	a = series_add(p, SER_BARS, C_BATCHED, "predicted kernel: %s", after);
	for (i = 0; i < n; i++) {
		p->cats[p->nr_cats++] = c[i].name;
		point_row(k, i, c[i].kernel, scale);
		point_field(b, i, c[i].before, "predicted_us", scale);
		point_field(a, i, c[i].after, "predicted_us", scale);
	}
}

/* Rows with a prediction, and kernel rows to set it beside. */
static bool has_prediction(const struct fig_rows *rows)
{
	bool pred = false, kernel = false;
	size_t i;

	for (i = 0; i < rows->nr; i++) {
		pred |= !isnan(num(&rows->row[i], "predicted_us"));
		kernel |= !strcmp(rows->row[i].backend, "kernel");
	}
	return pred && kernel;
}

static int fig_predicted(const struct fig_rows *rows, const char *arch,
			 const char *path, const char *machine, struct fig_svg *out)
{
	struct series s[4][4];
	struct panel p[4];
	struct pred_cat c[MAX_POINTS];
	const char *folios[MAX_POINTS], *traces[32];
	char title[1200], names[MAX_POINTS][80], reps[64];
	struct figure fig;
	int np = 0, n, nf, i, t, err;

	if (!has_prediction(rows))
		return -ENODATA;
	/* gup: a pin of the region, against io_uring registering it. */
	nf = distinct(rows, "gup", arch, F_FOLIO, folios, MAX_POINTS);
	if (nf && find_row(rows, arch, "gup", NULL, NULL, NULL, "kernel")) {
		for (i = 0; i < nf; i++) {
			c[i].name = folios[i];
			c[i].kernel = find_row(rows, arch, "gup", folios[i],
					       "io_uring_register_buffers", NULL,
					       "kernel");
			c[i].before = find_row(rows, arch, "gup", folios[i],
					       "pin_user_pages_fast",
					       "-gup_batch=1", "model");
			c[i].after = find_row(rows, arch, "gup", folios[i],
					      "pin_user_pages_fast",
					      "+gup_batch=1", "model");
		}
		pred_panel(&p[np], s[np], c, nf, 1,
			   "pin_user_pages_fast per-PTE",
			   "pin_user_pages_fast batched", "gup: pin the region"
			   " (kernel: io_uring_register_buffers)",
			   "folio size");
		np++;
	}
	nf = distinct(rows, "mprotect", arch, F_FOLIO, folios, MAX_POINTS);
	if (nf && find_row(rows, arch, "mprotect", NULL, NULL, NULL, "kernel")) {
		for (i = 0; i < nf; i++) {
			c[i].name = folios[i];
			c[i].kernel = find_row(rows, arch, "mprotect", folios[i],
					       NULL, NULL, "kernel");
			c[i].before = find_row(rows, arch, "mprotect", folios[i],
					       NULL, "+mprotect_batch=0", "model");
			c[i].after = find_row(rows, arch, "mprotect", folios[i],
					      NULL, "+mprotect_batch=1", "model");
		}
		pred_panel(&p[np], s[np], c, nf, 1e-3,
			   "mprotect_batch=0 (per-PTE)",
			   "mprotect_batch=1 (batched)",
			   "mprotect: all calls of one sample", "folio size");
		np++;
	}
	if (find_row(rows, arch, "cow", "2M-PTE", NULL, NULL, "kernel")) {
		for (n = 0; n < NR_COW_PASSES; n++) {
			c[n].name = cow_passes[n].op;
			c[n].kernel = find_row(rows, arch, "cow", "2M-PTE",
					       cow_passes[n].op, NULL, "kernel");
			c[n].before = cow_row(rows, arch, "2M-PTE",
					      cow_passes[n].op, 1);
			c[n].after = cow_row(rows, arch, "2M-PTE",
					     cow_passes[n].op, 16);
		}
		pred_panel(&p[np], s[np], c, n, 1e-3, "wp_reuse_max=1 (today)",
			   "wp_reuse_max=16 (seed 003)", "cow: one pass over the"
			   " region, 2M-PTE folios", "pass");
		np++;
	}
	t = distinct(rows, "replay", NULL, F_TRACE, traces, 32);
	if (t && find_row(rows, NULL, "replay", NULL, NULL, "=kernel", NULL)) {
		const char *rf[MAX_POINTS];
		int nr = distinct(rows, "replay", NULL, F_FOLIO, rf, MAX_POINTS);
		int j;

		n = 0;
		for (i = 0; i < t; i++)
			for (j = 0; j < nr && n < MAX_POINTS; j++) {
				size_t k;

				snprintf(names[n], sizeof(names[n]), "%.20s %s",
					 base_name(traces[i]), rf[j]);
				names[n][strcspn(names[n], ".")] = '\0';
				snprintf(names[n] + strlen(names[n]),
					 sizeof(names[n]) - strlen(names[n]),
					 " %s", rf[j]);
				c[n].name = names[n];
				c[n].kernel = c[n].before = c[n].after = NULL;
				for (k = 0; k < rows->nr; k++) {
					const struct fig_row *y = &rows->row[k];

					if (strcmp(y->bench, "replay") || !y->trace ||
					    strcmp(y->trace, traces[i]) ||
					    strcmp(y->folio, rf[j]))
						continue;
					/* The first row of each: the file
					 * with the predictions comes first. */
					if (!strcmp(y->variant, "kernel") &&
					    !c[n].kernel)
						c[n].kernel = y;
					else if (!strcmp(y->variant, "upstream") &&
						 !c[n].before)
						c[n].before = y;
					else if (!strcmp(y->variant,
							 "seeds+wp_reuse_max=512") &&
						 !c[n].after)
						c[n].after = y;
				}
				n++;
			}
		pred_panel(&p[np], s[np], c, n, 1e-3, "upstream",
			   "seeds+wp_reuse_max=512", "replay: the statements"
			   " of each recorded program", "program and folio size");
		np++;
	}
	if (!np)
		return -ENODATA;
	reps_text(rows, NULL, reps, sizeof(reps));
	snprintf(title, sizeof(title), "Predicted kernel time (the"
		 " calibration's costs of the model's counters) beside the"
		 " kernel's measured time\nmeasured: %s, min..max bars;"
		 " predicted: one untimed model repetition; %s", reps, machine);
	panels_align(p, np);
	err = figure_open(&fig, path, 1300, 330 * np + 90, np, 1, title);
	if (err)
		return err;
	for (i = 0; i < np; i++)
		panel_draw(&fig, &p[i]);
	return figure_close(&fig, out);
}

/* ---- all of them --------------------------------------------------------- */

/* Is @name in the comma-separated @list (NULL: every name is)? */
static bool in_only(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *c = list;

	if (!list)
		return true;
	while (c && *c) {
		if (!strncmp(c, name, n) && (c[n] == ',' || !c[n]))
			return true;
		c = strchr(c, ',');
		c = c ? c + 1 : NULL;
	}
	return false;
}

/* A figure to draw: its name, the bench whose rows name its machine
 * (NULL: any), the arch it draws (NULL: every one) and how. */
struct fig_plan {
	char name[64];
	const char *bench, *arch;
	int (*draw)(const struct fig_rows *rows, const char *arch,
		    const char *path, const char *machine,
		    struct fig_svg *out);
};

static void plan_add(struct fig_plan *plan, int *nr, const char *name,
		     const char *bench, const char *arch,
		     int (*draw)(const struct fig_rows *, const char *,
				 const char *, const char *, struct fig_svg *))
{
	struct fig_plan *f = &plan[(*nr)++];

	snprintf(f->name, sizeof(f->name), "%s", name);
	f->bench = bench;
	f->arch = arch;
	f->draw = draw;
}


/* The flag the figures' files came from, for messages: --plot, or --out. */
static const char *out_flag = "--plot";

void fig_out_flag(const char *flag)
{
	out_flag = flag;
}

/*
 * Write the figures drawn, each to its file, and name each on @log: by
 * lib/outfile.h's rule, every file opened (and checked) first, each
 * replaced only once all are written whole (a device or a FIFO gets its
 * SVG in place).
 */
static int figures_write(const struct fig_svg *svg, int nr, FILE *log)
{
	struct outfile *of = calloc((size_t)nr + 1, sizeof(*of));
	char why[1200];
	int i, err = 0;

	if (!of) {
		fprintf(stderr, "ptebatch: plot: %s\n", strerror(ENOMEM));
		return -ENOMEM;
	}
	for (i = 0; i < nr && !err; i++) {
		err = outfile_open(&of[i], out_flag, svg[i].path, 0,
				   why, sizeof(why));
		/* A short write leaves the error flag: the commit refuses it. */
		if (!err)
			fwrite(svg[i].svg, 1, svg[i].len, of[i].f);
	}
	for (i = 0; i < nr && !err; i++) {
		err = outfile_commit(&of[i], why, sizeof(why));
		if (!err && log)
			fprintf(log, "plot: wrote %s\n", svg[i].path);
	}
	if (err)
		fprintf(stderr, "ptebatch: plot: %s\n", why);
	for (i = 0; i < nr; i++)
		outfile_discard(&of[i]);
	free(of);
	return err ? -EIO : 0;
}

int fig_draw_all(const struct fig_rows *rows, const char *out,
		 const char *machine, const char *only, FILE *log)
{
	static const char *const per_arch[] = { "gup", "cow" };
	const char *archs[8], *c;
	struct fig_plan plan[32];
	struct fig_svg *svg;
	char name[64], path[4200];
	int nr = 0, na, a, i, j, err = 0, ret, drawn = 0;

	if (!gnuplot_installed()) {
		fprintf(stderr, "ptebatch: plot: needs gnuplot, which is not"
			" installed (Debian: apt-get install gnuplot-nox)\n");
		return -ENOENT;
	}
	na = distinct(rows, NULL, NULL, F_ARCH, archs, 8);
	if (!na)
		archs[na++] = NULL;
	/* gup and cow per arch (the first plain, the others -ARCH). */
	for (a = 0; a < na; a++)
		for (i = 0; i < 2; i++) {
			if (!find_row(rows, archs[a], per_arch[i], NULL, NULL,
				      NULL, "model"))
				continue;
			snprintf(name, sizeof(name), "%s%s%s", per_arch[i],
				 a ? "-" : "", a ? archs[a] : "");
			plan_add(plan, &nr, name, per_arch[i], archs[a],
				 i ? fig_cow : fig_gup);
		}
	if (find_row(rows, NULL, "mprotect", NULL, NULL, NULL, NULL))
		plan_add(plan, &nr, "mprotect", "mprotect", NULL, fig_mprotect);
	if (find_row(rows, NULL, "replay", NULL, NULL, NULL, NULL))
		plan_add(plan, &nr, "replay", "replay", NULL, fig_replay);
	/* Rows of several kernels of ours: seed 003's table across them. */
	for (a = 0; a < na; a++) {
		const char *ks[2];

		if (distinct(rows, "cow", archs[a], F_KERNEL, ks, 2) < 2)
			continue;
		snprintf(name, sizeof(name), "kernels-cow%s%s", a ? "-" : "",
			 a ? archs[a] : "");
		plan_add(plan, &nr, name, "cow", archs[a], fig_kernels_cow);
	}
	if (has_prediction(rows) && nr)
		plan_add(plan, &nr, "predicted", NULL, archs[0],
			 fig_predicted);
	/* --only: the figures named, each of which must be there. */
	for (i = 0, j = 0; i < nr; i++)
		if (in_only(only, plan[i].name))
			plan[j++] = plan[i];
	for (c = only; c && *c; c = strchr(c, ',') ? strchr(c, ',') + 1 : NULL) {
		size_t n = strcspn(c, ",");

		for (i = 0; i < j && (strlen(plan[i].name) != n ||
				      strncmp(plan[i].name, c, n)); i++)
			;
		if (i == j) {
			fprintf(stderr, "ptebatch: plot: no rows for the"
				" figure '%.*s'\n", (int)n, c);
			return -ENODATA;
		}
	}
	nr = j;
	if (!nr) {
		fprintf(stderr, "ptebatch: plot: no row of gup, cow, mprotect"
			" or replay to draw\n");
		return -ENODATA;
	}
	/* Every figure drawn before any is written: a row that cannot be
	 * drawn, or gnuplot failing, leaves no file. */
	svg = calloc((size_t)nr, sizeof(*svg));
	if (!svg) {
		fprintf(stderr, "ptebatch: plot: %s\n", strerror(ENOMEM));
		return -ENOMEM;
	}
	for (i = 0; i < nr && !err; i++) {
		figure_path(path, sizeof(path), out, plan[i].name, nr > 1);
		ret = plan[i].draw(rows, plan[i].arch, path,
				   machine_of(rows, plan[i].bench, machine),
				   &svg[drawn]);
		/* A figure with nothing in it (a predicted figure with no
		 * kernel rows) is left out, not an error. */
		if (!ret)
			drawn++;
		else if (ret != -ENODATA)
			err = ret;
	}
	if (!err)
		err = figures_write(svg, drawn, log);
	for (i = 0; i < nr; i++)
		free(svg[i].svg);
	free(svg);
	return err;
}
