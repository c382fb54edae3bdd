// SPDX-License-Identifier: GPL-2.0-only
/*
 * common.c: what the benchmarks share - statistics, rows, JSON, progress,
 * and regions of a folio mode on the model.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend/host.h"
#include "bench/bench.h"
#include "bench/figure.h"
#include "bench/gnuplot.h"
#include "calibrate/calib.h"
#include "lib/outfile.h"

static const char *const mode_names[NR_FOLIO_MODES] = {
	"4K", "64K", "1M", "2M-PTE", "2M-PMD",
};

const char *folio_mode_name(enum folio_mode m)
{
	return (unsigned)m < NR_FOLIO_MODES ? mode_names[m] : "?";
}

double bench_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct bench_stat bench_stats(double *samples, int n)
{
	struct bench_stat s = { 0, 0, 0, n };

	if (n <= 0)
		return s;
	qsort(samples, (size_t)n, sizeof(*samples), cmp_double);
	s.min_us = samples[0];
	s.max_us = samples[n - 1];
	s.median_us = n % 2 ? samples[n / 2]
			    : (samples[n / 2 - 1] + samples[n / 2]) / 2;
	return s;
}

void bench_row_init(struct bench_row *r)
{
	memset(r, 0, sizeof(*r));
	r->faults = r->folio_ref_atomic = r->pincount_atomic = r->tlb_flush = -1;
}

/* ---- the predicted kernel column ------------------------------------- */

/* The one place the model is told to count memmap_line (cnt15). */
void bench_count_for_prediction(bool on)
{
	pb_stats_count_memmap_lines(on);
}

void bench_predict(const struct bench_opts *o,
		   const uint64_t before[PB_NR_STATS],
		   const uint64_t after[PB_NR_STATS], struct bench_pred *p)
{
	uint64_t delta[PB_NR_STATS];
	int i;

	memset(p, 0, sizeof(*p));
	if (!o->calib)
		return;
	for (i = 0; i < PB_NR_STATS; i++)
		delta[i] = after[i] - (before ? before[i] : 0);
	p->lower_bound = calib_predict(o->calib, delta, &p->us,
				       &p->missing) == -ENOENT;
	p->have = true;
}

void bench_pred_text(char *buf, size_t len, const struct bench_pred *p,
		     double scale, int prec)
{
	if (!p->have)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%s%.*f", p->lower_bound ? ">" : "", prec,
			 p->us * scale);
}

void bench_pred_ratio_text(char *buf, size_t len, const struct bench_pred *a,
			   const struct bench_pred *b, int prec)
{
	if (a->have && b->have && b->us > 0)
		snprintf(buf, len, "%.*f", prec, a->us / b->us);
	else
		snprintf(buf, len, "-");
}

void bench_print_calibration(const struct bench_opts *o, FILE *f,
			     const char *prefix)
{
	const struct calibration *c = o->calib;

	if (!c) {
		/* The prefix's indent, then one line that greps alike in
		 * every table. */
		fprintf(f, "%.*s# predicted kernel: none (%s)\n",
			(int)strspn(prefix, " "), prefix,
			o->calib_none ? o->calib_none : "no calibration");
		return;
	}
	fprintf(f, "%spredicted kernel: calibration %s, unit %s%s\n"
		"%s  (measured on %s, %d cores, kernel %s, %s, %s): the kernel"
		" time it predicts\n%s  from the model's counters of one more,"
		" untimed repetition (memmap_line counted)\n",
		prefix, o->calib_path, calib_unit_name(c->machine.unit),
		c->machine.unit == CALIB_UNIT_INSNS ?
		" (a us below is 1000 guest instructions)" : "",
		prefix, c->machine.cpu,
		c->machine.cores, c->machine.kernel, c->machine.date,
		c->machine.arch, prefix);
}

void bench_print_pred_notes(const struct bench_opts *o, FILE *f,
			    const char *prefix, const struct bench_pred *preds,
			    size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		if (!preds[i].have || !preds[i].lower_bound)
			continue;
		fprintf(f, "%s'>': a lower bound: %s has no cost for '%s' (the first"
			" counter without one)\n",
			prefix, o->calib_path, pb_stat_name(preds[i].missing));
		return;
	}
}

/*
 * The rows kept for --plot: the JSON lines themselves, drawn at the end
 * by bench/figure.c as `ptebatch plot` draws a saved --json file.
 */
static FILE *plot_mem;
static char *plot_text;
static size_t plot_len;

/* A row that could not be made since bench_json_error() last said so. */
static int rows_err;

/* The bytes of the character @s starts that jansson takes (1-4), or 0. */
static size_t json_char_len(const char *s, size_t left)
{
	size_t n;

	for (n = 1; n <= 4 && n <= left; n++) {
		json_t *c = json_stringn(s, n);

		if (c) {
			json_decref(c);
			return n;
		}
	}
	return 0;
}

json_t *bench_json_text(const char *s)
{
	size_t len = strlen(s), i, n;
	json_t *j = json_string(s);
	char *clean, *o;

	if (j)
		return j;
	/* Not UTF-8: one U+FFFD for each byte that starts no character. */
	clean = o = malloc(3 * len + 1);
	if (!clean)
		return NULL;
	for (i = 0; i < len; i += n) {
		n = json_char_len(s + i, len - i);
		if (n) {
			memcpy(o, s + i, n);
			o += n;
		} else {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			n = 1;
		}
	}
	*o = '\0';
	j = json_string(clean);
	free(clean);
	return j;
}

json_t *bench_json_real(double v, int decimals)
{
	char text[400];

	/* The value "%.Nf" prints, as the rows always carried it. */
	snprintf(text, sizeof(text), "%.*f", decimals, v);
	return json_real(strtod(text, NULL));
}

/* A counter where it was measured (-1: not). */
static int json_counter(json_t *row, const char *name, long long v)
{
	return v >= 0 && json_object_set_new(row, name, json_integer(v));
}

/* @r as the object of its line, or NULL: out of memory. */
static json_t *json_row(const struct bench_opts *o, const struct bench_row *r)
{
	json_t *row = json_object();
	const struct bench_pred *p = r->pred && r->pred->have ? r->pred : NULL;

	if (!row || !r->extra ||
	    json_object_set_new(row, "bench", bench_json_text(r->bench)) ||
	    json_object_set_new(row, "folio", bench_json_text(r->folio)) ||
	    json_object_set_new(row, "op", bench_json_text(r->op)) ||
	    json_object_set_new(row, "variant", bench_json_text(r->variant)) ||
	    json_object_set_new(row, "backend", bench_json_text(r->backend)) ||
	    json_object_set_new(row, "arch", bench_json_text(o->arch ? o->arch :
							pb_arch_name())) ||
	    json_object_set_new(row, "median_us",
				bench_json_real(r->t.median_us, 3)) ||
	    json_object_set_new(row, "min_us", bench_json_real(r->t.min_us, 3)) ||
	    json_object_set_new(row, "max_us", bench_json_real(r->t.max_us, 3)) ||
	    json_object_set_new(row, "reps", json_integer(r->t.reps)) ||
	    json_counter(row, "faults", r->faults) ||
	    json_counter(row, "folio_ref_atomic", r->folio_ref_atomic) ||
	    json_counter(row, "pincount_atomic", r->pincount_atomic) ||
	    json_counter(row, "tlb_flush", r->tlb_flush) ||
	    (p && json_object_set_new(row, "predicted_us",
				      bench_json_real(p->us, 3))) ||
	    (p && p->lower_bound &&
	     json_object_set_new(row, "predicted_lower_bound", json_true())) ||
	    json_object_update(row, r->extra) ||
	    json_object_set_new(row, "machine",
				bench_json_text(host_machine_name()))) {
		json_decref(row);
		return NULL;
	}
	return row;
}

void bench_json_row(const struct bench_opts *o, const struct bench_row *r)
{
	json_t *row;
	char *line;

	if (!o->plot && !o->json)
		return;
	row = json_row(o, r);
	line = row ? json_dumps(row, BENCH_JSON_FLAGS) : NULL;
	json_decref(row);
	if (!line) {
		rows_err = -ENOMEM;
		return;
	}
	if (o->plot && !plot_mem)
		plot_mem = open_memstream(&plot_text, &plot_len);
	if (o->plot && plot_mem) {
		fprintf(plot_mem, "%s\n", line);
		fflush(plot_mem);
	}
	if (o->json) {
		fprintf(o->json, "%s\n", line);
		fflush(o->json);
	}
	free(line);
}

int bench_json_error(void)
{
	int err = rows_err;

	rows_err = 0;
	return err;
}

void bench_progress(const struct bench_opts *o, const char *fmt, ...)
{
	va_list ap;

	if (!o->progress)
		return;
	fputs("\r\033[K", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fflush(stderr);
}

/* ---- option limits --------------------------------------------------- */

int bench_check_size(unsigned long size, char *why, size_t whylen)
{
	unsigned long pmd = pb_pmd_size(), host = host_memory();

	if (size % pmd)
		snprintf(why, whylen, "is not a multiple of %luM (every folio"
			 " mode maps whole PMDs)", pmd >> 20);
	else if (size > BENCH_MAX_SIZE)
		snprintf(why, whylen, "is above the maximum %luG (a benchmark"
			 " holds about twice its region; the model has at most"
			 " %luG)", BENCH_MAX_SIZE >> 30, PB_MAX_MEMORY >> 30);
	else if (host && size > host / 4)
		snprintf(why, whylen, "is more than a quarter of this machine's"
			 " %.1fG of memory (a benchmark holds about twice its"
			 " region)", (double)host / (1UL << 30));
	else
		return 0;
	return -EINVAL;
}

int bench_plot_check(const char *flag, const char *path, char *why,
		     size_t whylen)
{
	fig_out_flag(flag);
	if (!gnuplot_installed()) {
		snprintf(why, whylen, "%s: needs gnuplot, which is not"
			 " installed (Debian: apt-get install gnuplot-nox)",
			 flag);
		return -ENOENT;
	}
	/* The figures' own names are made from it when they are drawn:
	 * each of them is opened then, by the same rule. */
	return outfile_check(flag, path, why, whylen);
}

/*
 * Whether this build models the machine it runs on, by uname(2)'s name
 * for it: the kernel columns hold the model to the kernel it runs on
 * (x86_64 on an x86-64 machine, an arm64 build in an arm64 guest).
 */
static bool model_is_machine(const char *machine)
{
	if (!strcmp(machine, "x86_64"))
		return !strcmp(pb_arch_name(), "x86_64");
	if (!strcmp(machine, "aarch64"))
		return !strncmp(pb_arch_name(), "arm64-", 6);
	return false;
}

const char *bench_kernel_unavailable(const struct bench_opts *o)
{
	struct utsname uts;

	if (!(o->backend & BENCH_KERNEL))
		return "not asked for (--backend model)";
	if (uname(&uts) || !model_is_machine(uts.machine))
		return "the model's architecture is not this machine's";
	/* An arm64 kernel has one granule: the build must be of it. */
	if (pb_page_size() != (unsigned long)sysconf(_SC_PAGESIZE))
		return "the model's page size is not this kernel's";
	if (geteuid())
		return "not root (THP sysfs, /proc/kpageflags)";
	return NULL;
}

int bench_model_start(unsigned long memory, const struct pb_variant *v)
{
	struct pb_config cfg = { .memory_bytes = memory };
	int err = pb_init(&cfg);

	if (err)
		return err;
	pb_set_variant(v);
	return 0;
}

/* The THP policy of mode @m: only that size enabled, "always". */
static void set_mode_policy(enum folio_mode m)
{
	static const unsigned long sizes[] = {
		16UL << 10, 32UL << 10, 64UL << 10, 128UL << 10,
		256UL << 10, 512UL << 10, 1UL << 20, 2UL << 20,
	};
	unsigned long want = m == FOLIO_64K ? 64UL << 10 :
			     m == FOLIO_1M ? 1UL << 20 :
			     (m == FOLIO_2M_PTE || m == FOLIO_2M_PMD) ? 2UL << 20 : 0;
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		pb_set_thp_policy(sizes[i], sizes[i] == want ? PB_THP_ALWAYS
							     : PB_THP_NEVER);
}

int bench_model_region(struct pb_proc **procp, unsigned long addr,
		       unsigned long size, enum folio_mode m)
{
	unsigned long page = pb_page_size(), a;
	struct pb_proc *p;
	int err;

	set_mode_policy(m);
	err = pb_proc_create(&p);
	if (err)
		return err;
	err = pb_mmap(p, addr, size, PB_PROT_READ | PB_PROT_WRITE);
	if (!err && m == FOLIO_4K)
		err = pb_madvise(p, addr, size, MADV_NOHUGEPAGE);
	for (a = addr; !err && a < addr + size; a += page)
		err = pb_store(p, 0, a, 1);
	if (!err && m == FOLIO_2M_PTE)
		err = pb_split_pmd(p, addr, size);
	if (err) {
		pb_exit(p);
		return err;
	}
	*procp = p;
	return 0;
}

void bench_stats_snapshot(uint64_t out[PB_NR_STATS])
{
	pb_stats_read(out);
}

/* ---- --plot ---------------------------------------------------------- */

int bench_plot(const struct bench_opts *o)
{
	struct fig_rows rows = { 0 };
	char why[600];
	int err;

	if (!o->plot)
		return 0;
	if (!plot_mem || fflush(plot_mem) || !plot_len) {
		fprintf(stderr, "ptebatch: --plot: no rows to draw\n");
		return -ENODATA;
	}
	err = fig_rows_read_text(&rows, plot_text, plot_len, "--plot", why,
				 sizeof(why));
	if (err)
		fprintf(stderr, "ptebatch: %s\n", why);
	else
		err = fig_draw_all(&rows, o->plot, NULL, NULL, stderr);
	fig_rows_free(&rows);
	fclose(plot_mem);
	free(plot_text);
	plot_mem = NULL;
	plot_text = NULL;
	plot_len = 0;
	return err;
}
