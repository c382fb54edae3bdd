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
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "calibrate/calib.h"

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
	fprintf(f, "%spredicted kernel: calibration %s\n"
		"%s  (measured on %s, %d cores, kernel %s, %s, %s): the kernel"
		" time it predicts\n%s  from the model's counters of one more,"
		" untimed repetition (memmap_line counted)\n",
		prefix, o->calib_path, prefix, c->machine.cpu,
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

static void json_counter(FILE *f, const char *name, long long v)
{
	if (v >= 0)
		fprintf(f, ",\"%s\":%lld", name, v);
}

/* The rows kept for --plot: bench, folio, series label, median. */
struct plot_row {
	char *bench, *folio, *series;
	double median_us;
};
static struct plot_row *plot_rows;
static size_t nr_plot_rows, cap_plot_rows;

static void plot_keep(const struct bench_row *r)
{
	struct plot_row *pr;
	char series[256];

	if (nr_plot_rows == cap_plot_rows) {
		size_t cap = cap_plot_rows ? 2 * cap_plot_rows : 64;
		struct plot_row *n = realloc(plot_rows, cap * sizeof(*n));

		if (!n)
			return;		/* the plot misses a row, no more */
		plot_rows = n;
		cap_plot_rows = cap;
	}
	snprintf(series, sizeof(series), "%s %s (%s)", r->op, r->variant,
		 r->backend);
	pr = &plot_rows[nr_plot_rows];
	pr->bench = strdup(r->bench);
	pr->folio = strdup(r->folio);
	pr->series = strdup(series);
	pr->median_us = r->t.median_us;
	if (!pr->bench || !pr->folio || !pr->series) {
		free(pr->bench);
		free(pr->folio);
		free(pr->series);
		return;
	}
	nr_plot_rows++;
}

void bench_json_row(const struct bench_opts *o, const struct bench_row *r)
{
	FILE *f = o->json;

	if (o->plot)
		plot_keep(r);
	if (!f)
		return;
	fprintf(f, "{\"bench\":\"%s\",\"folio\":\"%s\",\"op\":\"%s\","
		"\"variant\":\"%s\",\"backend\":\"%s\",\"arch\":\"%s\","
		"\"median_us\":%.3f,\"min_us\":%.3f,\"max_us\":%.3f,\"reps\":%d",
		r->bench, r->folio, r->op, r->variant, r->backend,
		o->arch ? o->arch : pb_arch_name(), r->t.median_us, r->t.min_us,
		r->t.max_us, r->t.reps);
	json_counter(f, "faults", r->faults);
	json_counter(f, "folio_ref_atomic", r->folio_ref_atomic);
	json_counter(f, "pincount_atomic", r->pincount_atomic);
	json_counter(f, "tlb_flush", r->tlb_flush);
	if (r->pred && r->pred->have)
		fprintf(f, ",\"predicted_us\":%.3f%s", r->pred->us,
			r->pred->lower_bound ? ",\"predicted_lower_bound\":true"
					     : "");
	if (r->extra_json)
		fputs(r->extra_json, f);
	fputs("}\n", f);
	fflush(f);
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

unsigned long bench_host_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);

	if (pages <= 0 || page <= 0 ||
	    (unsigned long)pages > ~0UL / (unsigned long)page)
		return 0;
	return (unsigned long)pages * (unsigned long)page;
}

int bench_check_size(unsigned long size, char *why, size_t whylen)
{
	unsigned long pmd = pb_pmd_size(), host = bench_host_memory();

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

int bench_plot_check(const char *path, char *why, size_t whylen)
{
	struct stat sb;
	int fd, err;

	if (system("command -v gnuplot >/dev/null 2>&1")) {
		snprintf(why, whylen, "needs gnuplot, which is not installed"
			 " (Debian: apt-get install gnuplot-nox)");
		return -ENOENT;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd >= 0) {
		close(fd);
		unlink(path);
		return 0;
	}
	/* It exists: it must be a file we may write (no FIFO to block on). */
	if (errno == EEXIST)
		fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		snprintf(why, whylen, "%s: %s", path, strerror(err));
		return -err;
	}
	err = fstat(fd, &sb) ? errno : S_ISREG(sb.st_mode) ? 0 : EINVAL;
	close(fd);
	if (err == EINVAL)
		snprintf(why, whylen, "%s: not a regular file", path);
	else if (err)
		snprintf(why, whylen, "%s: %s", path, strerror(err));
	return -err;
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

static bool in_strs(char **list, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(list[i], s))
			return true;
	return false;
}

/* Distinct values of one field of the rows of @bench, in first-seen order. */
static size_t distinct(const char *bench, size_t field, char **out)
{
	size_t i, n = 0;

	for (i = 0; i < nr_plot_rows; i++) {
		const struct plot_row *r = &plot_rows[i];
		char *v = field == 0 ? r->bench : field == 1 ? r->folio : r->series;

		if (bench && strcmp(r->bench, bench))
			continue;
		if (!in_strs(out, n, v))
			out[n++] = v;
	}
	return n;
}

static const struct plot_row *find_plot_row(const char *bench,
					    const char *folio,
					    const char *series)
{
	size_t i;

	for (i = 0; i < nr_plot_rows; i++) {
		const struct plot_row *r = &plot_rows[i];

		if (!strcmp(r->bench, bench) && !strcmp(r->folio, folio) &&
		    !strcmp(r->series, series))
			return r;
	}
	return NULL;
}

/* gnuplot takes '...' strings; the labels here hold no quote of that kind. */
static void plot_panel(FILE *f, const char *bench, char **scratch1,
		       char **scratch2)
{
	size_t nf = distinct(bench, 1, scratch1);
	size_t ns = distinct(bench, 2, scratch2);
	size_t i, j;

	fprintf(f, "set title '%s: median time per folio size'\n", bench);
	fputs("plot ", f);
	for (j = 0; j < ns; j++)
		fprintf(f, "%s'-' using 2:xtic(1) title '%s'",
			j ? ", " : "", scratch2[j]);
	fputc('\n', f);
	for (j = 0; j < ns; j++) {
		for (i = 0; i < nf; i++) {
			const struct plot_row *r =
				find_plot_row(bench, scratch1[i], scratch2[j]);

			/* A missing cell (a skipped kernel column) is NaN. */
			if (r && r->median_us > 0)
				fprintf(f, "%s %.3f\n", scratch1[i], r->median_us);
			else
				fprintf(f, "%s NaN\n", scratch1[i]);
		}
		fputs("e\n", f);
	}
}

FILE *bench_plot_script_open(char *script)
{
	int fd;
	FILE *f;

	strcpy(script, "/tmp/ptebatch-plot-XXXXXX");
	fd = mkstemp(script);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		fprintf(stderr, "ptebatch: --plot: %s\n", strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(script);
		}
	}
	return f;
}

int bench_plot_script_run(FILE *f, const char *script, const char *plot)
{
	char cmd[4200];
	int status, err = 0;

	if (fclose(f)) {
		err = -errno;
		fprintf(stderr, "ptebatch: --plot: %s: %s\n", script,
			strerror(errno));
		unlink(script);
		return err;
	}
	snprintf(cmd, sizeof(cmd), "gnuplot '%s'", script);
	status = system(cmd);
	if (status) {
		fprintf(stderr, "ptebatch: --plot: gnuplot failed (status %d)"
			" on %s\n", status, plot);
		err = -EIO;
	}
	unlink(script);
	return err;
}

int bench_plot(const struct bench_opts *o)
{
	char script[BENCH_PLOT_SCRIPT_LEN];
	char **benches, **s1, **s2;
	size_t nb, i;
	int err = 0;
	FILE *f = NULL;

	if (!o->plot)
		return 0;
	if (system("command -v gnuplot >/dev/null 2>&1")) {
		fprintf(stderr, "ptebatch: --plot needs gnuplot, which is not"
			" installed (Debian: apt-get install gnuplot-nox)\n");
		return -ENOENT;
	}
	if (!nr_plot_rows) {
		fprintf(stderr, "ptebatch: --plot: no rows to draw\n");
		return -ENODATA;
	}
	benches = calloc(nr_plot_rows, sizeof(*benches));
	s1 = calloc(nr_plot_rows, sizeof(*s1));
	s2 = calloc(nr_plot_rows, sizeof(*s2));
	if (!benches || !s1 || !s2) {
		err = -ENOMEM;
		fprintf(stderr, "ptebatch: --plot: %s\n", strerror(-err));
		goto out;
	}
	f = bench_plot_script_open(script);
	if (!f) {
		err = -EIO;
		goto out;
	}
	nb = distinct(NULL, 0, benches);
	fprintf(f, "set terminal svg size 1000,%zu dynamic background '#ffffff'\n"
		"set output '%s'\n"
		"set style data histograms\n"
		"set style histogram clustered gap 1\n"
		"set style fill solid 0.8 border -1\n"
		"set logscale y\n"
		"set ylabel 'median time (us, log scale)'\n"
		"set xlabel 'folio size'\n"
		"set key outside right top\n"
		"set grid ytics\n"
		"set datafile missing 'NaN'\n"
		"set multiplot layout %zu,1\n",
		420 * nb, o->plot, nb);
	for (i = 0; i < nb; i++)
		plot_panel(f, benches[i], s1, s2);
	fputs("unset multiplot\n", f);
	err = bench_plot_script_run(f, script, o->plot);
out:
	free(benches);
	free(s1);
	free(s2);
	return err;
}
