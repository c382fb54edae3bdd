// SPDX-License-Identifier: GPL-2.0-only
/*
 * cow.c: the WP_REUSE_MAX_NR_PTES table of "mm/memory: reuse 16 PTEs of
 * an exclusive large folio on a write fault" (seed 003) - the write
 * faults that follow fork() and the child's exit, when the parent stores
 * into its own (again exclusive) PTE-mapped large folios, and how many of
 * them a reuse that makes wp_reuse_max PTEs writable saves.
 *
 * Model: preset "upstream" with wp_reuse_max 1 (today's kernel), 16, 32,
 * 64, 128 and 512, each on a fresh machine.  Kernel: the same passes on the
 * running kernel, whose reuse makes one PTE writable per fault.  Every rep
 * builds a fresh region (map, fault in, split, fork, child exit) outside
 * the timing; only the pass of stores is timed, and its faults counted.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/thp_sysfs.h"
#include "bench/bench.h"

/* The passes: one store each, sequential at a stride or in random order. */
enum cow_pass { PASS_SEQ, PASS_RAND, PASS_64K, PASS_2M, NR_PASSES };

static const struct {
	const char *op;		/* JSON op */
	const char *label;	/* table row heading */
	unsigned long stride;	/* 0: the page size */
	bool random;		/* every page once, in a fixed random order */
} passes[NR_PASSES] = {
	[PASS_SEQ]  = { "store_page_seq",  "one byte per page (seq)",    0,         false },
	[PASS_RAND] = { "store_page_rand", "one byte per page, random",  0,         true  },
	[PASS_64K]  = { "store_64k",       "one store per 64K",          64UL << 10, false },
	[PASS_2M]   = { "store_2m",        "one store per 2M",           2UL << 20, false },
};

/* The seed's columns, plus today's kernel (1). */
static const unsigned int reuse_max[] = { 1, 16, 32, 64, 128, 512 };
#define NR_MODEL_COLS (int)(sizeof(reuse_max) / sizeof(reuse_max[0]))
#define KERNEL_COL NR_MODEL_COLS
#define NR_COLS (NR_MODEL_COLS + 1)

/* The 64K-folio pass: wp_reuse_max 1 against 16, and the kernel. */
static const unsigned int reuse_max_64k[] = { 1, 16 };
#define NR_64K_MODEL_COLS (int)(sizeof(reuse_max_64k) / sizeof(reuse_max_64k[0]))
#define NR_64K_COLS (NR_64K_MODEL_COLS + 1)

#define COW_DEFAULT_SIZE (256UL << 20)
#define COW_DEFAULT_REPS 5
#define COW_QUICK_SIZE (8UL << 20)
#define COW_QUICK_REPS 3
#define COW_PERM_SEED 0x003a39fcc13446e6ULL

struct cow_plan {
	unsigned long size, page, pmd;
	unsigned long nr_pages;
	unsigned int *perm;	/* PASS_RAND: page indices, computed untimed */
	int reps;
};

struct cow_cell {
	bool have;
	struct bench_stat t;	/* of the pass */
	long long faults;	/* of the first rep */
	long long converts;	/* contpte_convert of the first rep (arm64) */
	bool faults_vary;	/* some rep took a different number */
	unsigned int wp;	/* wp_reuse_max, 0 for the kernel */
	struct bench_pred pred;	/* of one pass (model) */
};

static unsigned long pass_stride(const struct cow_plan *pl, enum cow_pass k)
{
	return passes[k].stride ? passes[k].stride : pl->page;
}

static unsigned long pass_nr(const struct cow_plan *pl, enum cow_pass k)
{
	return pl->size / pass_stride(pl, k);
}

static inline unsigned long pass_offset(const struct cow_plan *pl,
					enum cow_pass k, unsigned long i)
{
	if (passes[k].random)
		return (unsigned long)pl->perm[i] * pl->page;
	return i * pass_stride(pl, k);
}

/*
 * The faults a pass must take on the model: the reuse window is the
 * wp_reuse_max-aligned block cut to the folio, so each such block the
 * pass touches faults exactly once.
 */
static long long expected_faults(const struct cow_plan *pl, enum cow_pass k,
				 unsigned int wp, unsigned long folio_size)
{
	unsigned long block = (unsigned long)wp * pl->page;
	unsigned long stride = pass_stride(pl, k);

	if (block > folio_size)
		block = folio_size;
	return (long long)(pl->size / (stride > block ? stride : block));
}

/* xorshift64*: a fixed permutation, the same in every run. */
static uint64_t cow_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static int plan_init(struct cow_plan *pl, const struct bench_opts *o)
{
	uint64_t seed = COW_PERM_SEED;
	unsigned long i;

	pl->page = pb_page_size();
	pl->pmd = pb_pmd_size();
	pl->size = o->size ? o->size : o->quick ? COW_QUICK_SIZE : COW_DEFAULT_SIZE;
	pl->reps = o->reps > 0 ? o->reps : o->quick ? COW_QUICK_REPS : COW_DEFAULT_REPS;
	if (pl->size < pl->pmd || pl->size % pl->pmd)
		return -EINVAL;
	pl->nr_pages = pl->size / pl->page;
	pl->perm = malloc(pl->nr_pages * sizeof(*pl->perm));
	if (!pl->perm)
		return -ENOMEM;
	for (i = 0; i < pl->nr_pages; i++)
		pl->perm[i] = (unsigned int)i;
	for (i = pl->nr_pages - 1; i > 0; i--) {
		unsigned long j = cow_rand(&seed) % (i + 1);
		unsigned int t = pl->perm[i];

		pl->perm[i] = pl->perm[j];
		pl->perm[j] = t;
	}
	return 0;
}

/* Fold one rep's faults into @c. */
static void cell_faults(struct cow_cell *c, int rep, long long faults)
{
	if (rep == 0)
		c->faults = faults;
	else if (faults != c->faults)
		c->faults_vary = true;
}

/* ---- the model ---- */

static int model_pass(struct pb_proc *p, const struct cow_plan *pl,
		      enum cow_pass k, double *us, long long *faults,
		      long long *converts, uint64_t delta[PB_NR_STATS])
{
	unsigned long n = pass_nr(pl, k), i, f0 = pb_proc_faults(p);
	uint64_t s0[PB_NR_STATS], s1[PB_NR_STATS];
	double t0;
	int err;

	bench_stats_snapshot(s0);
	t0 = bench_now_us();
	for (i = 0; i < n; i++) {
		err = pb_store(p, 0, BENCH_MODEL_ADDR + pass_offset(pl, k, i), 2);
		if (err)
			return err;
	}
	*us = bench_now_us() - t0;
	bench_stats_snapshot(s1);
	*faults = (long long)(pb_proc_faults(p) - f0);
	*converts = (long long)(s1[PB_STAT_contpte_convert] -
				s0[PB_STAT_contpte_convert]);
	for (i = 0; delta && i < PB_NR_STATS; i++)
		delta[i] = s1[i] - s0[i];
	return 0;
}

/*
 * One rep of the cell: a region of folio mode @m, fork(), the child's
 * exit, then the pass.  @delta: its counters, or NULL.
 */
static int model_rep(const struct cow_plan *pl, enum folio_mode m,
		     enum cow_pass k, double *us, long long *faults,
		     long long *converts, uint64_t delta[PB_NR_STATS])
{
	struct pb_proc *p, *child;
	int err = bench_model_region(&p, BENCH_MODEL_ADDR, pl->size, m);

	if (err)
		return err;
	err = pb_fork(p, &child);
	if (!err) {
		pb_exit(child);
		err = model_pass(p, pl, k, us, faults, converts, delta);
	}
	pb_exit(p);
	return err;
}

/*
 * One cell: a machine with wp_reuse_max @wp, and per rep a region of folio
 * mode @m, fork(), the child's exit, then the timed pass.
 */
static int model_cell(const struct bench_opts *o, const struct cow_plan *pl,
		      enum folio_mode m, enum cow_pass k, unsigned int wp,
		      struct cow_cell *c)
{
	double samples[pl->reps];
	struct pb_variant v;
	char val[16];
	int rep, err;

	err = pb_variant_preset("upstream", &v);
	snprintf(val, sizeof(val), "%u", wp);
	if (!err)
		err = pb_variant_set(&v, "wp_reuse_max", val);
	if (err)
		return err;
	/* The parent's folios, the child's page tables, and slack. */
	err = bench_model_start(2 * pl->size + (pl->size >> 3) + (32UL << 20), &v);
	if (err)
		return err;
	for (rep = 0; rep < pl->reps; rep++) {
		long long faults, converts = 0;

		bench_progress(o, "cow: model %s wp_reuse_max=%u %s rep %d/%d",
			       folio_mode_name(m), wp, passes[k].op, rep + 1,
			       pl->reps);
		err = model_rep(pl, m, k, &samples[rep], &faults, &converts,
				NULL);
		if (err)
			break;
		cell_faults(c, rep, faults);
		if (!rep)
			c->converts = converts;
	}
	/* The prediction's counters: one more rep, untimed. */
	if (!err) {
		long long faults, converts;
		uint64_t delta[PB_NR_STATS];
		double us;

		bench_count_for_prediction(true);
		err = model_rep(pl, m, k, &us, &faults, &converts, delta);
		bench_count_for_prediction(false);
		if (!err)
			bench_predict(o, NULL, delta, &c->pred);
	}
	pb_fini();
	if (err)
		return err;
	c->t = bench_stats(samples, pl->reps);
	c->wp = wp;
	c->have = true;
	return 0;
}

/* ---- the kernel ---- */

static long minflt_now(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

static void kernel_pass(char *base, const struct cow_plan *pl, enum cow_pass k,
			double *us, long long *faults)
{
	volatile char *b = base;
	unsigned long n = pass_nr(pl, k), i;
	long f0 = minflt_now();
	double t0 = bench_now_us();

	for (i = 0; i < n; i++)
		b[pass_offset(pl, k, i)] = 2;
	*us = bench_now_us() - t0;
	*faults = minflt_now() - f0;
}

/* fork(), a child that exits at once, and the wait for it. */
static int fork_and_reap(char *why, size_t whylen)
{
	pid_t pid = fork();
	int status;

	if (pid < 0) {
		snprintf(why, whylen, "fork: %s", strerror(errno));
		return -errno;
	}
	if (pid == 0)
		_exit(0);
	if (waitpid(pid, &status, 0) != pid) {
		snprintf(why, whylen, "waitpid: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

/*
 * The kernel's cells for folios of mode @m: every pass in @which, reps
 * times, a fresh region each.  THP settings are this size "always", every
 * other "never", and are put back before returning.  A nonzero return is
 * a SKIP whose reason is in @why.
 */
static int kernel_cells(const struct bench_opts *o, const struct cow_plan *pl,
			enum folio_mode m, const bool which[NR_PASSES],
			struct cow_cell cells[NR_PASSES], char *why, size_t whylen)
{
	double samples[pl->reps];
	int rep, err = 0;
	enum cow_pass k;

	err = bench_thp_apply(m, why, whylen);
	if (err)
		return err;
	for (k = 0; k < NR_PASSES && !err; k++) {
		if (!which[k])
			continue;
		for (rep = 0; rep < pl->reps; rep++) {
			long long faults;
			void *base = NULL;

			bench_progress(o, "cow: kernel %lukB %s rep %d/%d",
				       folio_mode_bytes(m) >> 10, passes[k].op,
				       rep + 1, pl->reps);
			err = bench_kernel_map(m, pl->size, &base, why, whylen);
			if (err)
				break;
			err = fork_and_reap(why, whylen);
			if (!err)
				kernel_pass(base, pl, k, &samples[rep], &faults);
			bench_kernel_unmap(base, pl->size);
			if (err)
				break;
			cell_faults(&cells[k], rep, faults);
		}
		if (err)
			break;
		cells[k].t = bench_stats(samples, pl->reps);
		cells[k].have = true;
	}
	thp_settings_restore();
	if (err)
		for (k = 0; k < NR_PASSES; k++)
			cells[k].have = false;
	return err;
}

/* ---- output ---- */

static void print_method(FILE *out, const struct bench_opts *o,
			 const struct cow_plan *pl, const char *folios,
			 const char *variants)
{
	const char *arch = o->arch ? o->arch : pb_arch_name();

	fprintf(out, "# method: %lu MiB of %s folios after fork() + child exit;"
		" page %lu, arch %s\n", pl->size >> 20, folios, pl->page, arch);
	fprintf(out, "#   %d reps per cell, a fresh region each rep (map, fault in,"
		" fork, exit: untimed); statistic: median pass time,"
		" min..max below it\n", pl->reps);
	fprintf(out, "#   variants: %s\n", variants);
	fprintf(out, "#   faults: pb_proc_faults delta (model), ru_minflt delta"
		" (kernel), of the first rep ('*': reps differed)\n");
	fprintf(out, "#   random order: one fixed permutation of the pages"
		" (seed %#llx), computed before timing\n",
		(unsigned long long)COW_PERM_SEED);
	bench_print_calibration(o, out, "#   ");
}

static void print_header(FILE *out, const struct cow_cell *cells, int nr_cols,
			 int kcol, const char *kskip)
{
	int c;

	fprintf(out, "  %-30s", "wp_reuse_max");
	for (c = 0; c < nr_cols; c++) {
		if (c == kcol)
			fprintf(out, " %12s", "kernel");
		else
			fprintf(out, " %12u", cells[c].wp);
	}
	fputc('\n', out);
	if (kskip)
		fprintf(out, "  (kernel column SKIP: %s)\n", kskip);
}

static void print_faults(FILE *out, const struct cow_cell *cells, int nr_cols)
{
	int c;

	fprintf(out, "    %-28s", "faults");
	for (c = 0; c < nr_cols; c++) {
		if (cells[c].have)
			fprintf(out, " %11lld%c", cells[c].faults,
				cells[c].faults_vary ? '*' : ' ');
		else
			fprintf(out, " %12s", "-");
	}
	fputc('\n', out);
}

/*
 * arm64's contiguous blocks: how many a pass unfolded (the seed measured
 * 512 per pass before, 0 after, on 64K folios under QEMU).
 */
static void print_converts(FILE *out, const struct cow_cell *cells, int nr_cols)
{
	int c;

	if (strncmp(pb_arch_name(), "arm64", 5))
		return;
	fprintf(out, "    %-28s", "contpte_convert");
	for (c = 0; c < nr_cols; c++) {
		if (cells[c].have && cells[c].wp)
			fprintf(out, " %11lld ", cells[c].converts);
		else
			fprintf(out, " %12s", "-");
	}
	fputc('\n', out);
}

static void print_ms(FILE *out, const struct cow_cell *cells, int nr_cols)
{
	char buf[32];
	int c;

	fprintf(out, "    %-28s", "ms (median)");
	for (c = 0; c < nr_cols; c++) {
		if (cells[c].have)
			fprintf(out, " %12.3f", cells[c].t.median_us / 1e3);
		else
			fprintf(out, " %12s", "-");
	}
	fprintf(out, "\n    %-28s", "   (min..max)");
	for (c = 0; c < nr_cols; c++) {
		if (cells[c].have)
			snprintf(buf, sizeof(buf), "%.2f..%.2f",
				 cells[c].t.min_us / 1e3, cells[c].t.max_us / 1e3);
		else
			snprintf(buf, sizeof(buf), "-");
		fprintf(out, " %12s", buf);
	}
	fputc('\n', out);
}

/* The kernel time predicted for one pass of each model column. */
static void print_pred(FILE *out, const struct bench_opts *o,
		       const struct cow_cell *cells, int nr_cols)
{
	char buf[32];
	int c;

	if (!o->calib)
		return;
	fprintf(out, "    %-28s", "predicted kernel ms");
	for (c = 0; c < nr_cols; c++) {
		bench_pred_text(buf, sizeof(buf), &cells[c].pred, 1e-3, 3);
		fprintf(out, " %12s", buf);
	}
	fputc('\n', out);
}

/* The note under a table when one of its predictions is a lower bound. */
static void print_pred_notes(FILE *out, const struct bench_opts *o,
			     struct cow_cell *const rows[], int nr_rows,
			     int nr_cols)
{
	struct bench_pred preds[NR_PASSES * NR_COLS];
	size_t n = 0;
	int r, c;

	for (r = 0; r < nr_rows; r++)
		for (c = 0; c < nr_cols; c++)
			preds[n++] = rows[r][c].pred;
	bench_print_pred_notes(o, out, "  ", preds, n);
}

static double us_per_fault(const struct cow_cell *c)
{
	return c->have && c->faults > 0 ? c->t.median_us / (double)c->faults : 0;
}

static void json_cell(const struct bench_opts *o, const struct cow_plan *pl,
		      enum folio_mode m, enum cow_pass k, const struct cow_cell *c,
		      bool kernel)
{
	char variant[48];
	struct bench_row r;

	if (!c->have)
		return;
	bench_row_init(&r);
	r.bench = "cow";
	r.folio = folio_mode_name(m);
	r.op = passes[k].op;
	if (kernel)
		snprintf(variant, sizeof(variant), "kernel");
	else
		snprintf(variant, sizeof(variant), "upstream,wp_reuse_max=%u", c->wp);
	r.variant = variant;
	r.backend = kernel ? "kernel" : "model";
	r.t = c->t;
	r.faults = c->faults;
	r.pred = kernel ? NULL : &c->pred;
	r.extra = json_pack("{s:I, s:I, s:I, s:o, s:b, s:I}",
			    "wp_reuse_max", (json_int_t)(kernel ? 1 : c->wp),
			    "size", (json_int_t)pl->size,
			    "stores", (json_int_t)pass_nr(pl, k),
			    "us_per_fault", bench_json_real(us_per_fault(c), 4),
			    "faults_vary", c->faults_vary,
			    "contpte_convert",
			    (json_int_t)(kernel ? -1 : c->converts));
	bench_json_row(o, &r);
	json_decref(r.extra);
}

/* Ratios against wp_reuse_max = 1 (column 0), measured in this run. */
static void print_ratios(FILE *out, const struct bench_opts *o,
			 struct cow_cell *const rows[], int nr_rows,
			 const char *const labels[], int nr_model_cols)
{
	char buf[32];

	int r, c;

	fprintf(out, "  ratios vs wp_reuse_max=1, same run"
		" (faults: 1/N fewer; time: N/1)\n");
	for (r = 0; r < nr_rows; r++) {
		const struct cow_cell *row = rows[r];

		fprintf(out, "    %-28s", labels[r]);
		for (c = 0; c < nr_model_cols; c++) {
			if (row[c].have && row[0].have && row[c].faults > 0)
				fprintf(out, " %11.1fx", (double)row[0].faults / (double)row[c].faults);
			else
				fprintf(out, " %12s", "-");
		}
		fprintf(out, "   faults\n    %-28s", "");
		for (c = 0; c < nr_model_cols; c++) {
			if (row[c].have && row[0].have && row[0].t.median_us > 0)
				fprintf(out, " %12.3f", row[c].t.median_us / row[0].t.median_us);
			else
				fprintf(out, " %12s", "-");
		}
		fprintf(out, "   time\n");
		if (!o->calib)
			continue;
		fprintf(out, "    %-28s", "");
		for (c = 0; c < nr_model_cols; c++) {
			bench_pred_ratio_text(buf, sizeof(buf), &row[c].pred,
					      &row[0].pred, 3);
			fprintf(out, " %12s", buf);
		}
		fprintf(out, "   predicted kernel time\n");
	}
}

/* Least squares a + b * N over the model's µs per block fault. */
static void print_block_fit(FILE *out, struct cow_cell *row, int nr)
{
	double sx = 0, sy = 0, sxx = 0, sxy = 0, n = 0, a, b;
	int c;

	for (c = 0; c < nr; c++) {
		if (!row[c].have || !row[c].faults)
			continue;
		sx += row[c].wp;
		sy += us_per_fault(&row[c]);
		sxx += (double)row[c].wp * row[c].wp;
		sxy += row[c].wp * us_per_fault(&row[c]);
		n++;
	}
	if (n < 2 || n * sxx == sx * sx)
		return;
	b = (n * sxy - sx * sy) / (n * sxx - sx * sx);
	a = (sy - b * sx) / n;
	fprintf(out, "  fit of the block fault: %.3f us + %.1f ns per PTE"
		" (least squares over the model columns)\n", a, b * 1e3);
}

/* Every model cell against expected_faults(); returns the mismatches. */
static int check_faults(FILE *out, const struct cow_plan *pl,
			struct cow_cell *const rows[], const enum cow_pass ks[],
			int nr_rows, int nr_model_cols, unsigned long folio_size)
{
	int r, c, bad = 0, checked = 0;

	for (r = 0; r < nr_rows; r++) {
		for (c = 0; c < nr_model_cols; c++) {
			const struct cow_cell *cell = &rows[r][c];
			long long want;

			if (!cell->have)
				continue;
			want = expected_faults(pl, ks[r], cell->wp, folio_size);
			checked++;
			if (cell->faults == want && !cell->faults_vary)
				continue;
			bad++;
			fprintf(out, "  FAIL: %s, wp_reuse_max=%u: %lld faults%s,"
				" expected %lld\n", passes[ks[r]].label, cell->wp,
				cell->faults, cell->faults_vary ? " (varying)" : "", want);
		}
	}
	fprintf(out, "  check: model faults == size / max(stride, min(N pages, folio))"
		": %d of %d cells%s\n", checked - bad, checked, bad ? "" : ", exact");
	return bad;
}

/* Run the model cells of one folio mode; a column the arch rejects is left out. */
static int model_cols(const struct bench_opts *o, const struct cow_plan *pl,
		      enum folio_mode m, const unsigned int *wps, int nr_cols,
		      const enum cow_pass *ks, int nr_rows, struct cow_cell *rows[])
{
	int r, c, err;

	for (c = 0; c < nr_cols; c++) {
		for (r = 0; r < nr_rows; r++) {
			err = model_cell(o, pl, m, ks[r], wps[c], &rows[r][c]);
			if (err == -EINVAL)
				break;	/* wp_reuse_max not valid here */
			if (err)
				return err;
		}
	}
	return 0;
}

int bench_cow(const struct bench_opts *o)
{
	static const enum cow_pass all[NR_PASSES] = { PASS_SEQ, PASS_RAND, PASS_64K, PASS_2M };
	static const enum cow_pass seq_only[1] = { PASS_SEQ };
	const char *labels[NR_PASSES];
	struct cow_cell grid[NR_PASSES][NR_COLS], grid64[1][NR_64K_COLS];
	struct cow_cell kcells[NR_PASSES];
	struct cow_cell *rows[NR_PASSES], *rows64[1] = { grid64[0] };
	FILE *out = o->out ? o->out : stdout;
	char kwhy[256] = "", k64why[256] = "", variants[160];
	bool kskip = true, k64skip = true, which[NR_PASSES];
	struct cow_plan pl;
	struct utsname uts;
	int err, r, c, bad = 0;

	memset(grid, 0, sizeof(grid));
	memset(grid64, 0, sizeof(grid64));
	for (r = 0; r < NR_PASSES; r++) {
		rows[r] = grid[r];
		labels[r] = passes[r].label;
		for (c = 0; c < NR_MODEL_COLS; c++)
			grid[r][c].wp = reuse_max[c];
	}
	for (c = 0; c < NR_64K_MODEL_COLS; c++)
		grid64[0][c].wp = reuse_max_64k[c];
	err = plan_init(&pl, o);
	if (err)
		return err;

	if (o->backend & BENCH_MODEL) {
		err = model_cols(o, &pl, FOLIO_2M_PTE, reuse_max, NR_MODEL_COLS,
				 all, NR_PASSES, rows);
		if (!err)
			err = model_cols(o, &pl, FOLIO_64K, reuse_max_64k,
					 NR_64K_MODEL_COLS, seq_only, 1, rows64);
		if (err)
			goto out;
	}
	if (uname(&uts))
		snprintf(uts.release, sizeof(uts.release), "?");
	if (bench_kernel_unavailable(o)) {
		snprintf(kwhy, sizeof(kwhy), "%s", bench_kernel_unavailable(o));
		snprintf(k64why, sizeof(k64why), "%s", kwhy);
	} else {
		memset(kcells, 0, sizeof(kcells));
		for (r = 0; r < NR_PASSES; r++)
			which[r] = true;
		kskip = kernel_cells(o, &pl, FOLIO_2M_PTE, which, kcells, kwhy, sizeof(kwhy)) != 0;
		for (r = 0; r < NR_PASSES; r++)
			grid[r][KERNEL_COL] = kcells[r];
		memset(kcells, 0, sizeof(kcells));
		for (r = 0; r < NR_PASSES; r++)
			which[r] = r == PASS_SEQ;
		k64skip = kernel_cells(o, &pl, FOLIO_64K, which, kcells, k64why,
				       sizeof(k64why)) != 0;
		grid64[0][NR_64K_MODEL_COLS] = kcells[PASS_SEQ];
	}
	bench_progress(o, "%s", "");

	/* The seed's table. */
	fprintf(out, "cow: write faults after fork() + child exit on PTE-mapped"
		" 2M folios (seed 003, WP_REUSE_MAX_NR_PTES)\n");
	snprintf(variants, sizeof(variants), "model preset upstream with"
		 " wp_reuse_max=N; kernel %s (%s)", uts.release,
		 /* a guest of ours may run a series that reuses more */
		 getenv("PTEBATCH_VM") ? "a kernel of ours" :
		 "reuses one PTE per fault");
	print_method(out, o, &pl, "PTE-mapped 2M (PMD THP split by mprotect)", variants);
	fprintf(out, "#   us per block fault: median time of the one-store-per-2M"
		" pass / its faults\n");
	print_header(out, grid[0], NR_COLS, KERNEL_COL, kskip ? kwhy : NULL);
	for (r = 0; r < NR_PASSES; r++) {
		fprintf(out, "  %s\n", passes[r].label);
		print_faults(out, grid[r], NR_COLS);
		print_converts(out, grid[r], NR_COLS);
		print_ms(out, grid[r], NR_COLS);
		print_pred(out, o, grid[r], NR_COLS);
	}
	fprintf(out, "    %-28s", "us per fault (walks a block)");
	for (c = 0; c < NR_COLS; c++) {
		if (grid[PASS_2M][c].have)
			fprintf(out, " %12.3f", us_per_fault(&grid[PASS_2M][c]));
		else
			fprintf(out, " %12s", "-");
	}
	fputc('\n', out);
	print_ratios(out, o, rows, NR_PASSES, labels, NR_MODEL_COLS);
	print_pred_notes(out, o, rows, NR_PASSES, NR_MODEL_COLS);
	print_block_fit(out, grid[PASS_2M], NR_MODEL_COLS);
	bad += check_faults(out, &pl, rows, all, NR_PASSES, NR_MODEL_COLS, pl.pmd);
	fputc('\n', out);

	/* The 64K-folio pass. */
	fprintf(out, "cow: 64K mTHP folios after fork() + child exit, one byte"
		" per page (seq): faults per pass before/after\n");
	print_method(out, o, &pl, "64K mTHP", variants);
	print_header(out, grid64[0], NR_64K_COLS, NR_64K_MODEL_COLS,
		     k64skip ? k64why : NULL);
	print_faults(out, grid64[0], NR_64K_COLS);
	print_converts(out, grid64[0], NR_64K_COLS);
	print_ms(out, grid64[0], NR_64K_COLS);
	print_pred(out, o, grid64[0], NR_64K_COLS);
	labels[0] = passes[PASS_SEQ].label;
	print_ratios(out, o, rows64, 1, labels, NR_64K_MODEL_COLS);
	print_pred_notes(out, o, rows64, 1, NR_64K_MODEL_COLS);
	bad += check_faults(out, &pl, rows64, seq_only, 1, NR_64K_MODEL_COLS, 64UL << 10);
	fputc('\n', out);

	for (r = 0; r < NR_PASSES; r++)
		for (c = 0; c < NR_COLS; c++)
			json_cell(o, &pl, FOLIO_2M_PTE, r, &grid[r][c], c == KERNEL_COL);
	for (c = 0; c < NR_64K_COLS; c++)
		json_cell(o, &pl, FOLIO_64K, PASS_SEQ, &grid64[0][c],
			  c == NR_64K_MODEL_COLS);
	err = bad ? -EPROTO : bench_json_error();
out:
	free(pl.perm);
	return err;
}
