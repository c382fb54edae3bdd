// SPDX-License-Identifier: GPL-2.0-only
/*
 * samples.c - the timed statements of a calibration, their file, and the
 * fit over a chosen part of them (samples.h).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/samples.h"
#include "lib/readfile.h"

#define SAMPLES_MAGIC "# ptebatch calibration samples 1"

static bool any_moved(const uint64_t count[PB_NR_STATS], const char *const *names)
{
	for (; *names; names++) {
		int i = calib_counter(*names);

		if (i >= 0 && count[i])
			return true;
	}
	return false;
}

const char *calib_family(const char *stmt_text,
			 const uint64_t count[PB_NR_STATS], char *buf,
			 size_t len)
{
	static const char *const cow[] = {
		"fault_wp_copy", "fault_wp_reuse", "fault_huge_wp",
		"fault_unshare", NULL
	};
	static const char *const fault[] = { "fault", NULL };
	const char *w = strchr(stmt_text, ' ');
	size_t n;

	w = w ? w + 1 : stmt_text;
	n = strcspn(w, " ");
	if ((n == 5 && !strncmp(w, "write", 5)) ||
	    (n == 4 && !strncmp(w, "read", 4)) ||
	    (n == 5 && !strncmp(w, "touch", 5))) {
		snprintf(buf, len, "%s", any_moved(count, cow) ? "cow" :
			 any_moved(count, fault) ? "fault" : "access");
	} else if (n == 10 && !strncmp(w, "mmap-fixed", 10)) {
		snprintf(buf, len, "mmap");
	} else if (n > 4 && !strncmp(w, "dio-", 4)) {
		snprintf(buf, len, "dio");
	} else {
		snprintf(buf, len, "%.*s", (int)n, w);
	}
	return buf;
}

/*
 * Every family calib_family() names that a sample can have: measure.c
 * leaves "split", "dio" and "drain" out of the fit.
 */
const char *const calib_families[] = {
	"access", "cow", "fault", "mmap", "munmap", "mprotect", "madvise",
	"mremap", "resize", "fork", "exit", "spawn", "exec", "register",
	"unregister", "vmsplice", NULL
};

void calib_size_label(const char *path, char *buf, size_t len)
{
	const char *base = strrchr(path, '/');
	size_t n;
	char *dash;

	base = base ? base + 1 : path;
	snprintf(buf, len, "%s", base);
	n = strlen(buf);
	if (n > 4 && !strcmp(buf + n - 4, ".scn"))
		buf[n - 4] = '\0';
	dash = strrchr(buf, '-');
	if (dash && dash != buf)
		*dash = '\0';
}

int calib_samples_add(struct calib_samples *ss, const struct calib_sample *s)
{
	if (ss->nr == ss->cap) {
		size_t cap = ss->cap ? 2 * ss->cap : 256;
		struct calib_sample *v = realloc(ss->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		ss->v = v;
		ss->cap = cap;
	}
	ss->v[ss->nr++] = *s;
	return 0;
}

void calib_samples_free(struct calib_samples *ss)
{
	free(ss->v);
	memset(ss, 0, sizeof(*ss));
}

/* Spaces would split a field: the CPU's name keeps its own line. */
int calib_samples_write(FILE *f, const struct calib_samples *ss)
{
	const struct calib_machine *m = &ss->machine;
	double scale = calib_unit_scale(m->unit);
	size_t i;
	int j;

	fprintf(f, SAMPLES_MAGIC "\n# machine arch=%s kernel=%s cores=%d"
		" date=%s\n# machine cpu=%s\nscenario stmt family size %s",
		m->arch, m->kernel, m->cores, m->date, m->cpu,
		calib_unit_name(m->unit));
	for (j = 0; j < PB_NR_STATS; j++)
		fprintf(f, " %s", pb_stat_name(j));
	fputc('\n', f);
	for (i = 0; i < ss->nr; i++) {
		const struct calib_sample *s = &ss->v[i];

		fprintf(f, m->unit == CALIB_UNIT_INSNS ? "%s %d %s %s %.0f" :
			"%s %d %s %s %.3f", s->scenario, s->stmt, s->family,
			s->size, s->us * scale);
		for (j = 0; j < PB_NR_STATS; j++)
			fprintf(f, " %llu", (unsigned long long)s->count[j]);
		fputc('\n', f);
	}
	return fflush(f) || ferror(f) ? -EIO : 0;
}

/* ---- reading ------------------------------------------------------------ */

struct samples_reader {
	const char *path;
	unsigned long line;
	char *why;
	size_t whylen;
};

static int __attribute__((format(printf, 2, 3)))
sr_fail(struct samples_reader *rd, const char *fmt, ...)
{
	size_t n;
	va_list ap;

	n = (size_t)snprintf(rd->why, rd->whylen, "%s:%lu: ", rd->path,
			     rd->line);
	if (n < rd->whylen) {
		va_start(ap, fmt);
		vsnprintf(rd->why + n, rd->whylen - n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* A number's first byte: strtol() and the like would skip spaces and take a sign. */
static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* "key=value" words of a "# machine" line into @m. */
static int read_machine(struct samples_reader *rd, char *rest,
			struct calib_machine *m)
{
	char *save = NULL, *w;

	if (!strncmp(rest, "cpu=", 4)) {
		snprintf(m->cpu, sizeof(m->cpu), "%s", rest + 4);
		return 0;
	}
	for (w = strtok_r(rest, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		char *end;
		long v;

		if (!strncmp(w, "arch=", 5)) {
			snprintf(m->arch, sizeof(m->arch), "%s", w + 5);
		} else if (!strncmp(w, "kernel=", 7)) {
			snprintf(m->kernel, sizeof(m->kernel), "%s", w + 7);
		} else if (!strncmp(w, "date=", 5)) {
			snprintf(m->date, sizeof(m->date), "%s", w + 5);
		} else if (!strncmp(w, "cores=", 6)) {
			errno = 0;
			v = strtol(w + 6, &end, 10);
			if (!is_digit(w[6]) || errno || *end || v < 1 || v > 1 << 20)
				return sr_fail(rd, "bad core count '%s'", w + 6);
			m->cores = (int)v;
		} else {
			return sr_fail(rd, "unknown machine field '%s'", w);
		}
	}
	return 0;
}

/*
 * The header line: which counter each column after the time is (-1:
 * none); the time's column, "us" or "insns", is the samples' unit.
 */
static int read_columns(struct samples_reader *rd, char *line, int **col,
			int *nr_cols, enum calib_unit *unit)
{
	static const char *const fixed[] = {
		"scenario", "stmt", "family", "size", "us or insns"
	};
	char *save = NULL, *w;
	int i = 0, *c;

	c = malloc(PB_NR_STATS * sizeof(*c));
	if (!c)
		return -ENOMEM;
	*col = c;
	*nr_cols = 0;
	for (w = strtok_r(line, " ", &save); w; w = strtok_r(NULL, " ", &save), i++) {
		int k;

		if (i == 4) {
			if (calib_unit_parse(w, unit))
				return sr_fail(rd, "column 5 is '%s', not 'us'"
					       " or 'insns'", w);
			continue;
		}
		if (i < 4) {
			if (strcmp(w, fixed[i]))
				return sr_fail(rd, "column %d is '%s', not '%s'",
					       i + 1, w, fixed[i]);
			continue;
		}
		k = calib_counter(w);
		if (k < 0)
			return sr_fail(rd, "unknown counter '%s'", w);
		for (int j = 0; j < *nr_cols; j++)
			if (c[j] == k)
				return sr_fail(rd, "counter '%s' twice", w);
		if (*nr_cols == PB_NR_STATS)
			return sr_fail(rd, "too many columns");
		c[(*nr_cols)++] = k;
	}
	if (i < 5)
		return sr_fail(rd, "the column line has %d columns, not at"
			       " least 5", i);
	return 0;
}

static int read_sample(struct samples_reader *rd, char *line, const int *col,
		       int nr_cols, enum calib_unit unit,
		       struct calib_sample *s)
{
	double scale = calib_unit_scale(unit);
	char *save = NULL, *w, *end;
	int i = 0;

	memset(s, 0, sizeof(*s));
	for (w = strtok_r(line, " ", &save); w; w = strtok_r(NULL, " ", &save), i++) {
		errno = 0;
		switch (i) {
		case 0:
			if (strlen(w) >= sizeof(s->scenario))
				return sr_fail(rd, "scenario name too long");
			strcpy(s->scenario, w);
			break;
		case 1: {
			long v = strtol(w, &end, 10);

			if (!is_digit(*w) || errno || *end || v < 1 || v > 1 << 30)
				return sr_fail(rd, "bad statement number '%s'", w);
			s->stmt = (int)v;
			break;
		}
		case 2:
		case 3:
			if (strlen(w) >= sizeof(s->family))
				return sr_fail(rd, "'%s' is too long", w);
			strcpy(i == 2 ? s->family : s->size, w);
			break;
		case 4:
			/* Digits first: strtod() would take "inf" and "nan". */
			s->us = strtod(w, &end) / scale;
			if (!is_digit(*w) || errno || *end || !isfinite(s->us) ||
			    s->us < CALIB_SAMPLE_MIN_US ||
			    s->us > CALIB_SAMPLE_MAX_US)
				return sr_fail(rd, "bad time '%s' (%s, %g to"
					       " %g)", w, unit == CALIB_UNIT_US ?
					       "microseconds" : "instructions",
					       CALIB_SAMPLE_MIN_US * scale,
					       CALIB_SAMPLE_MAX_US * scale);
			break;
		default: {
			unsigned long long v;

			if (i - 5 >= nr_cols)
				return sr_fail(rd, "more fields than columns");
			if (!is_digit(*w))
				return sr_fail(rd, "bad count '%s'", w);
			v = strtoull(w, &end, 10);
			if (errno || *end)
				return sr_fail(rd, "bad count '%s'", w);
			s->count[col[i - 5]] = v;
		}
		}
	}
	if (i != 5 + nr_cols)
		return sr_fail(rd, "%d fields, the column line has %d", i,
			       5 + nr_cols);
	return 0;
}

/* The lines of @lines (named @path) into @ss. */
static int read_lines(struct readfile_lines *lines, const char *path,
		      struct calib_samples *ss, char *why, size_t whylen)
{
	struct samples_reader rd = { path, 0, why, whylen };
	char *line;
	size_t n;
	int *col = NULL, nr_cols = -1, ret = 0;

	while (!ret && (ret = readfile_lines_next(lines, &line, &n, why,
						  whylen)) > 0) {
		struct calib_sample s;

		ret = 0;
		rd.line++;
		if (n && line[n - 1] == '\n')
			line[--n] = '\0';
		if (rd.line == 1) {
			if (strcmp(line, SAMPLES_MAGIC))
				ret = sr_fail(&rd, "not a samples file (the first"
					      " line is not '" SAMPLES_MAGIC "')");
		} else if (!strncmp(line, "# machine ", 10)) {
			ret = read_machine(&rd, line + 10, &ss->machine);
		} else if (line[0] == '#' || !line[0]) {
			continue;
		} else if (nr_cols < 0) {
			ret = read_columns(&rd, line, &col, &nr_cols,
					   &ss->machine.unit);
		} else {
			ret = read_sample(&rd, line, col, nr_cols,
					  ss->machine.unit, &s);
			if (!ret)
				ret = calib_samples_add(ss, &s);
		}
	}
	/* readfile_lines_next() said why it stopped, but for -ENOMEM here. */
	if (!ret && rd.line == 0)
		ret = sr_fail(&rd, "empty file");
	if (!ret && !ss->nr)
		ret = sr_fail(&rd, "no samples");
	if (ret == -ENOMEM)
		snprintf(why, whylen, "%s: out of memory", path);
	free(col);
	if (ret)
		calib_samples_free(ss);
	return ret;
}

int calib_samples_read(const char *path, struct calib_samples *ss,
		       char *why, size_t whylen)
{
	struct readfile_lines lines;
	int ret;

	memset(ss, 0, sizeof(*ss));
	ret = readfile_lines_open(&lines, path, CALIB_SAMPLES_MAX_BYTES, 0,
				  "a samples file", why, whylen);
	if (ret)
		return ret;
	ret = read_lines(&lines, path, ss, why, whylen);
	readfile_lines_close(&lines);
	return ret;
}

int calib_samples_read_stream(FILE *f, const char *name,
			      struct calib_samples *ss, char *why,
			      size_t whylen)
{
	struct readfile_lines lines;
	int ret;

	memset(ss, 0, sizeof(*ss));
	readfile_lines_init(&lines, f, name, CALIB_SAMPLES_MAX_BYTES, 0,
			    "a samples file");
	ret = read_lines(&lines, name, ss, why, whylen);
	readfile_lines_close(&lines);
	return ret;
}

/* ---- fitting --------------------------------------------------------- */

static bool in(const char *const *list, const char *word)
{
	for (; *list; list++)
		if (!strcmp(*list, word))
			return true;
	return false;
}

bool calib_selected(const struct calib_sample *s,
		    const struct calib_select *sel)
{
	if (!sel)
		return true;
	if (sel->families && !in(sel->families, s->family))
		return false;
	if (sel->not_families && in(sel->not_families, s->family))
		return false;
	return !sel->sizes || in(sel->sizes, s->size);
}

int calib_fit(const struct calib_samples *ss, const struct calib_select *sel,
	      struct calibration *c, char *why, size_t whylen)
{
	enum pb_stat cols[PB_NR_STATS];
	struct nnls_fit fit;
	double *a, *t, *w;
	size_t i, m = 0;
	int j, ret;

	for (i = 0; i < ss->nr; i++)
		m += calib_selected(&ss->v[i], sel);
	if (!m) {
		snprintf(why, whylen, "no sample to fit");
		return -EINVAL;
	}
	if (m < PB_NR_STATS) {
		snprintf(why, whylen, "%zu samples to fit, fewer than the %d"
			 " counters: one cost per counter needs at least as"
			 " many timed statements", m, PB_NR_STATS);
		return -EINVAL;
	}
	a = malloc(m * PB_NR_STATS * sizeof(*a));
	t = malloc(m * sizeof(*t));
	w = malloc(m * sizeof(*w));
	ret = a && t && w ? 0 : -ENOMEM;
	for (j = 0; j < PB_NR_STATS; j++)
		cols[j] = (enum pb_stat)j;
	for (i = 0, m = 0; !ret && i < ss->nr; i++) {
		const struct calib_sample *s = &ss->v[i];

		if (!calib_selected(s, sel))
			continue;
		for (j = 0; j < PB_NR_STATS; j++)
			a[m * PB_NR_STATS + j] = (double)s->count[j];
		t[m] = s->us;
		w[m] = 1 / (s->us * s->us);
		m++;
	}
	if (!ret)
		ret = nnls_solve(a, m, PB_NR_STATS, t, w, &fit);
	if (!ret) {
		ret = calib_from_fit(c, &ss->machine, cols, &fit);
		nnls_fit_free(&fit);
	}
	if (ret)
		snprintf(why, whylen, "the fit failed: %s", strerror(-ret));
	/* What calib_read_file() would refuse is not written either. */
	for (j = 0; !ret && j < PB_NR_STATS; j++) {
		double scale = calib_unit_scale(ss->machine.unit);

		if (c->cost[j].value <= CALIB_MAX_COST_US * scale)
			continue;
		snprintf(why, whylen, "the fit gives '%s' a cost of %g us, above"
			 " the %g us a calibration may hold", pb_stat_name(j),
			 c->cost[j].value / scale, CALIB_MAX_COST_US);
		calib_free(c);
		ret = -EINVAL;
	}
	free(a);
	free(t);
	free(w);
	return ret;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

double calib_median_error(const struct calib_samples *ss,
			  const struct calib_select *sel,
			  const struct calibration *c, size_t *nr)
{
	double *e, med = NAN;
	size_t i, n = 0;

	e = malloc((ss->nr + 1) * sizeof(*e));
	if (!e)
		return NAN;
	for (i = 0; i < ss->nr; i++) {
		const struct calib_sample *s = &ss->v[i];
		enum pb_stat missing;
		double us;

		if (!calib_selected(s, sel))
			continue;
		/* A counter without a cost costs nothing: the fit saw it never move. */
		calib_predict(c, s->count, &us, &missing);
		e[n++] = fabs(us - s->us) / s->us;
	}
	if (n) {
		qsort(e, n, sizeof(*e), cmp_double);
		med = n % 2 ? e[n / 2] : (e[n / 2 - 1] + e[n / 2]) / 2;
	}
	free(e);
	if (nr)
		*nr = n;
	return med;
}
