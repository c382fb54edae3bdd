// SPDX-License-Identifier: GPL-2.0-only
/*
 * mprotect.c: the benchmark of "Optimize mprotect for large folios"
 * (seed 004) - a region made read-only then read-write 40 times,
 * per folio mode, on the model per-PTE (mprotect_batch=0) against batched
 * (mprotect_batch=1) in one run, and with real mprotect() on this kernel.
 *
 * One sample is the whole loop: iters x (mprotect(PROT_READ) +
 * mprotect(PROT_READ|PROT_WRITE)) over the region, every page already
 * faulted in.  After the loop every page is written once more: the final
 * RW must have left the PTEs writable (can_change_pte_writable), so that
 * rewrite must take no fault.
 *
 * The kernel column maps the region in the mode's folios (THP sysfs set
 * for the mode and restored on every path), checks a sample of them
 * through /proc/self/pagemap, /proc/kpageflags and smaps, and SKIPs the
 * column with the reason when the kernel did not give those folios.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bench/bench.h"

#define MP_DEFAULT_SIZE		(256UL << 20)
#define MP_DEFAULT_REPS		5
#define MP_DEFAULT_ITERS	40
#define MP_QUICK_SIZE		(8UL << 20)
#define MP_QUICK_REPS		2
#define MP_QUICK_ITERS		4

static const enum folio_mode mp_modes[] = {
	FOLIO_4K, FOLIO_64K, FOLIO_2M_PTE, FOLIO_2M_PMD,
};
#define MP_NR_MODES (sizeof(mp_modes) / sizeof(mp_modes[0]))

struct mp_plan {
	unsigned long size;
	int reps, iters;
};

/* One column of one row. */
struct mp_result {
	bool ran;			/* false: skipped, see why */
	bool failed;			/* a check failed, see why */
	char why[160];
	struct bench_stat t;
	/* Batched only: median of batched/per-PTE over the ABBA pairs. */
	double paired;
	/* Model counters of one sample (the first timed one). */
	uint64_t pte_read, pte_write, tlb_flush, contpte_convert;
	long long rewrite_faults;	/* faults of the rewrite after the loop */
	struct bench_pred pred;		/* model: of one sample */
};

/* ---- model -------------------------------------------------------------- */

static int model_loop(struct pb_proc *p, unsigned long addr,
		      unsigned long size, int iters)
{
	int i, err = 0;

	for (i = 0; !err && i < iters; i++) {
		err = pb_mprotect(p, addr, size, PB_PROT_READ);
		if (!err)
			err = pb_mprotect(p, addr, size,
					  PB_PROT_READ | PB_PROT_WRITE);
	}
	return err;
}

/* Write every page; *@faults = the faults that took. */
static int model_rewrite(struct pb_proc *p, unsigned long addr,
			 unsigned long size, long long *faults)
{
	unsigned long page = pb_page_size(), before = pb_proc_faults(p), a;
	int err = 0;

	for (a = addr; !err && a < addr + size; a += page)
		err = pb_store(p, 0, a, 2);
	*faults = (long long)(pb_proc_faults(p) - before);
	return err;
}

/*
 * Both model columns of mode @m on one region: the per-PTE and batched
 * samples interleave (ABBA...), switching only mprotect_batch between them,
 * so that warm-up and drift fall on both alike.  res[0] per-PTE, res[1]
 * batched.
 */
static void model_run(const struct bench_opts *o, const struct mp_plan *pl,
		      enum folio_mode m, struct mp_result res[2])
{
	struct bench_pred pred[2] = { 0 };
	/* Room for the region, its page tables and the allocator's slack. */
	unsigned long memory = (pl->size + pl->size / 4 + (64UL << 20)) &
			       ~((2UL << 20) - 1);
	unsigned long addr = BENCH_MODEL_ADDR;
	uint64_t s0[PB_NR_STATS], s1[PB_NR_STATS];
	struct pb_variant v[2];
	long long faults = -1;
	struct pb_proc *p;
	double *samples;
	int err, r, b;

	memset(res, 0, 2 * sizeof(*res));
	samples = calloc(2 * (size_t)pl->reps, sizeof(*samples));
	if (!samples) {
		err = -ENOMEM;
		goto out;
	}
	err = pb_variant_preset("upstream", &v[0]);
	if (err)
		goto out;
	v[1] = v[0];
	v[0].mprotect_batch = false;
	v[1].mprotect_batch = true;
	err = bench_model_start(memory, &v[0]);
	if (err)
		goto out;
	err = bench_model_region(&p, addr, pl->size, m);
	if (err)
		goto out_fini;

	/* One untimed round trip each, so that no first sample is colder. */
	for (b = 0; !err && b < 2; b++) {
		pb_set_variant(&v[b]);
		err = model_loop(p, addr, pl->size, 1);
	}
	for (r = 0; !err && r < 2 * pl->reps; r++) {
		/* ABBA ABBA ...: per-PTE and batched each go first half the time. */
		double t0;

		b = (r ^ (r >> 1)) & 1;
		pb_set_variant(&v[b]);
		bench_stats_snapshot(s0);
		t0 = bench_now_us();
		err = model_loop(p, addr, pl->size, pl->iters);
		samples[b * pl->reps + r / 2] = bench_now_us() - t0;
		if (r < 2) {
			bench_stats_snapshot(s1);
			res[b].pte_read = s1[PB_STAT_pte_read] - s0[PB_STAT_pte_read];
			res[b].pte_write = s1[PB_STAT_pte_write] - s0[PB_STAT_pte_write];
			res[b].tlb_flush = s1[PB_STAT_tlb_flush] - s0[PB_STAT_tlb_flush];
			res[b].contpte_convert = s1[PB_STAT_contpte_convert] -
						 s0[PB_STAT_contpte_convert];
		}
	}
	/* The prediction's counters: one more sample of each, untimed. */
	for (b = 0; !err && b < 2; b++) {
		pb_set_variant(&v[b]);
		bench_count_for_prediction(true);
		bench_stats_snapshot(s0);
		err = model_loop(p, addr, pl->size, pl->iters);
		bench_stats_snapshot(s1);
		bench_count_for_prediction(false);
		bench_predict(o, s0, s1, &pred[b]);
	}
	/* Each variant's last loop ended RW; the very last one is checked. */
	if (!err)
		err = model_rewrite(p, addr, pl->size, &faults);
	pb_exit(p);
out_fini:
	pb_fini();
out:
	/* Pair i is the i-th sample of each: adjacent in the ABBA order. */
	if (!err) {
		double *pr = calloc(pl->reps, sizeof(*pr));

		for (r = 0; pr && r < pl->reps; r++)
			pr[r] = samples[pl->reps + r] / samples[r];
		if (pr)
			res[1].paired = bench_stats(pr, pl->reps).median_us;
		free(pr);
	}
	for (b = 0; b < 2; b++) {
		res[b].rewrite_faults = faults;
		if (err) {
			res[b].failed = true;
			snprintf(res[b].why, sizeof(res[b].why), "model: %s",
				 strerror(-err));
			continue;
		}
		res[b].ran = true;
		res[b].t = bench_stats(samples + b * pl->reps, pl->reps);
		res[b].pred = pred[b];
		if (faults) {
			res[b].failed = true;
			snprintf(res[b].why, sizeof(res[b].why),
				 "rewrite after the loop took %lld faults, want 0",
				 faults);
		}
	}
	free(samples);
}

/* ---- kernel ------------------------------------------------------------- */

static int kernel_loop(char *base, size_t size, int iters)
{
	int i;

	for (i = 0; i < iters; i++) {
		if (mprotect(base, size, PROT_READ) ||
		    mprotect(base, size, PROT_READ | PROT_WRITE))
			return -errno;
	}
	return 0;
}

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

static void kernel_run(const struct mp_plan *pl, enum folio_mode m,
		       struct mp_result *res)
{
	unsigned long page = (unsigned long)sysconf(_SC_PAGESIZE);
	void *addr = NULL;
	double *samples;
	char *base;
	long f0;
	int err, r;

	memset(res, 0, sizeof(*res));
	res->rewrite_faults = -1;
	samples = calloc((size_t)pl->reps, sizeof(*samples));
	if (!samples) {
		res->failed = true;
		snprintf(res->why, sizeof(res->why), "out of memory");
		return;
	}
	/*
	 * Not root, no such size, no THP, or folios that are not the mode's:
	 * the column cannot run here (SKIP, with the reason in res->why).
	 */
	err = bench_kernel_region(m, pl->size, &addr, res->why, sizeof(res->why));
	if (err == -EOPNOTSUPP) {
		free(samples);
		return;
	}
	base = addr;
	if (!err)
		err = kernel_loop(base, pl->size, 1);
	for (r = 0; !err && r < pl->reps; r++) {
		double t0 = bench_now_us();

		err = kernel_loop(base, pl->size, pl->iters);
		samples[r] = bench_now_us() - t0;
	}
	if (err) {
		res->failed = true;
		snprintf(res->why, sizeof(res->why), "kernel: %s",
			 strerror(-err));
		goto out;
	}
	f0 = minflt();
	for (unsigned long a = 0; a < pl->size; a += page)
		base[a] = 2;
	res->rewrite_faults = minflt() - f0;
	res->ran = true;
	res->t = bench_stats(samples, pl->reps);
	if (res->rewrite_faults) {
		res->failed = true;
		snprintf(res->why, sizeof(res->why),
			 "rewrite after the loop took %lld faults, want 0",
			 res->rewrite_faults);
	}
out:
	if (addr)
		bench_kernel_region_free(addr, pl->size);
	free(samples);
}

/* ---- report ------------------------------------------------------------- */

static const char *mp_variant_name(int col)
{
	return col == 0 ? "upstream,mprotect_batch=0" :
	       col == 1 ? "upstream,mprotect_batch=1" : "kernel";
}

static void mp_json(const struct bench_opts *o, const struct mp_plan *pl,
		    enum folio_mode m, int col, const struct mp_result *res)
{
	struct bench_row row;

	if (!res->ran)
		return;
	bench_row_init(&row);
	row.bench = "mprotect";
	row.folio = folio_mode_name(m);
	row.op = "mprotect_ro_rw";
	row.variant = mp_variant_name(col);
	row.backend = col < 2 ? "model" : "kernel";
	row.t = res->t;
	if (col < 2) {
		row.pred = &res->pred;
		row.tlb_flush = (long long)res->tlb_flush;
		row.extra = json_pack("{s:I, s:i, s:I, s:I, s:I}",
				      "size", (json_int_t)pl->size,
				      "iters", pl->iters,
				      "pte_read", (json_int_t)res->pte_read,
				      "pte_write", (json_int_t)res->pte_write,
				      "rewrite_faults",
				      (json_int_t)res->rewrite_faults);
	} else {
		row.extra = json_pack("{s:I, s:i, s:I}",
				      "size", (json_int_t)pl->size,
				      "iters", pl->iters,
				      "rewrite_faults",
				      (json_int_t)res->rewrite_faults);
	}
	bench_json_row(o, &row);
	json_decref(row.extra);
}

/* ns per PTE per mprotect call; "n/a" when the mode maps no PTEs. */
static void fmt_ns(char *buf, size_t len, const struct mp_plan *pl,
		   enum folio_mode m, const struct mp_result *res)
{
	unsigned long ptes = pl->size / pb_page_size();

	if (!res->ran)
		snprintf(buf, len, "-");
	else if (m == FOLIO_2M_PMD)
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%.1f", res->t.median_us * 1e3 /
			 (2.0 * pl->iters) / (double)ptes);
}

static void fmt_ms(char *buf, size_t len, const struct mp_result *res)
{
	if (res->ran)
		snprintf(buf, len, "%.2f", res->t.median_us / 1e3);
	else
		snprintf(buf, len, res->why[0] ? "SKIP" : "-");
}

int bench_mprotect(const struct bench_opts *o)
{
	struct mp_result res[MP_NR_MODES][3];
	struct bench_pred preds[2 * MP_NR_MODES];
	size_t n = 0;
	struct mp_plan pl = {
		.size = o->size ? o->size : o->quick ? MP_QUICK_SIZE
						     : MP_DEFAULT_SIZE,
		.reps = o->reps > 0 ? o->reps : o->quick ? MP_QUICK_REPS
							 : MP_DEFAULT_REPS,
		.iters = o->quick ? MP_QUICK_ITERS : MP_DEFAULT_ITERS,
	};
	const char *knot = bench_kernel_unavailable(o);
	bool kernel = !knot;
	bool model = o->backend & BENCH_MODEL;
	unsigned long pmd = 2UL << 20;
	struct utsname un;
	FILE *out = o->out;
	bool failed = false;
	size_t i;
	int col;

	if (pl.size < pmd || pl.size % pmd) {
		fprintf(out, "mprotect: --size must be a multiple of 2M (got %lu)\n",
			pl.size);
		return -EINVAL;
	}
	if (uname(&un))
		snprintf(un.release, sizeof(un.release), "?");

	memset(res, 0, sizeof(res));
	for (i = 0; i < MP_NR_MODES; i++) {
		enum folio_mode m = mp_modes[i];

		if (model) {
			bench_progress(o, "mprotect: model %s",
				       folio_mode_name(m));
			model_run(o, &pl, m, res[i]);
		}
		if (kernel) {
			bench_progress(o, "mprotect: kernel %s",
				       folio_mode_name(m));
			kernel_run(&pl, m, &res[i][2]);
		} else {
			snprintf(res[i][2].why, sizeof(res[i][2].why), "%s",
				 !(o->backend & BENCH_KERNEL) ? "" : knot);
		}
		for (col = 0; col < 3; col++)
			mp_json(o, &pl, m, col, &res[i][col]);
	}
	bench_progress(o, "%s", "");

	fprintf(out, "\nmprotect (seed 004): %luM region, %d x (mprotect PROT_READ, "
		"PROT_READ|PROT_WRITE) = %d calls per sample, every page faulted in\n",
		pl.size >> 20, pl.iters, 2 * pl.iters);
	fprintf(out, "  statistic: median of %d samples (min..max in JSON), "
		"1 untimed round trip before them; arch %s, kernel %s\n",
		pl.reps, o->arch ? o->arch : pb_arch_name(), un.release);
	fprintf(out, "  model: variant \"upstream\" with mprotect_batch=0 (per-PTE) "
		"and =1 (batched), nothing else different: one region per mode,\n"
		"         the two variants' samples interleaved ABBA on it\n");
	fprintf(out, "  kernel: real mprotect(), THP sysfs set per mode "
		"(64K: hugepages-64kB; 2M: hugepages-2048kB; 4K: never + "
		"MADV_NOHUGEPAGE), folios checked via pagemap/kpageflags/smaps\n");
	bench_print_calibration(o, out, "  ");
	fprintf(out, "  ratio = per-PTE / batched (>1: batched faster); ns/PTE = "
		"median / calls / PTEs (n/a: PMD-mapped, no PTEs)\n");
	if (o->calib)
		fprintf(out, "  predicted kernel: ms of one sample for each model"
			" column, its ratio per-PTE / batched beside the"
			" model's\n");
	fputc('\n', out);
	fprintf(out, "  %-7s %11s %11s %7s %11s   %9s %9s %9s", "", "", "",
		"", "", "ns/PTE", "ns/PTE", "ns/PTE");
	if (o->calib)
		fprintf(out, "   %31s", "predicted kernel");
	fprintf(out, "\n  %-7s %11s %11s %7s %11s   %9s %9s %9s", "folio",
		"per-PTE ms", "batched ms", "ratio", "kernel ms",
		"per-PTE", "batched", "kernel");
	if (o->calib)
		fprintf(out, "   %11s %11s %7s", "per-PTE ms", "batched ms",
			"ratio");
	fputc('\n', out);
	for (i = 0; i < MP_NR_MODES; i++) {
		enum folio_mode m = mp_modes[i];
		char ms[3][32], ns[3][32], ratio[16] = "-";

		for (col = 0; col < 3; col++) {
			fmt_ms(ms[col], sizeof(ms[col]), &res[i][col]);
			fmt_ns(ns[col], sizeof(ns[col]), &pl, m, &res[i][col]);
		}
		if (res[i][0].ran && res[i][1].ran && res[i][1].t.median_us > 0)
			snprintf(ratio, sizeof(ratio), "%.2f",
				 res[i][0].t.median_us / res[i][1].t.median_us);
		fprintf(out, "  %-7s %11s %11s %7s %11s   %9s %9s %9s",
			folio_mode_name(m), ms[0], ms[1], ratio, ms[2],
			ns[0], ns[1], ns[2]);
		if (o->calib) {
			char pm[2][32], pr[16];

			for (col = 0; col < 2; col++)
				bench_pred_text(pm[col], sizeof(pm[col]),
						&res[i][col].pred, 1e-3, 2);
			bench_pred_ratio_text(pr, sizeof(pr), &res[i][0].pred,
					      &res[i][1].pred, 2);
			fprintf(out, "   %11s %11s %7s", pm[0], pm[1], pr);
		}
		fputc('\n', out);
		preds[n++] = res[i][0].pred;
		preds[n++] = res[i][1].pred;
	}
	bench_print_pred_notes(o, out, "  ", preds, n);

	if (model) {
		fprintf(out, "\n  model counters of one sample (%d calls): "
			"pte_read / pte_write / tlb_flush / contpte_convert\n",
			2 * pl.iters);
		for (i = 0; i < MP_NR_MODES; i++) {
			const struct mp_result *a = &res[i][0], *b = &res[i][1];

			fprintf(out, "  %-7s per-PTE %10" PRIu64 " %10" PRIu64
				" %6" PRIu64 " %6" PRIu64 "   batched %10" PRIu64
				" %10" PRIu64 " %6" PRIu64 " %6" PRIu64 "\n",
				folio_mode_name(mp_modes[i]), a->pte_read,
				a->pte_write, a->tlb_flush, a->contpte_convert,
				b->pte_read, b->pte_write, b->tlb_flush,
				b->contpte_convert);
		}
	}

	/* The targets of the issue, judged on this run's numbers. */
	fprintf(out, "\n");
	for (i = 0; model && i < MP_NR_MODES; i++) {
		const struct mp_result *a = &res[i][0], *b = &res[i][1];
		double q;

		if (!a->ran || !b->ran)
			continue;
		q = b->t.median_us / a->t.median_us;
		if (mp_modes[i] == FOLIO_2M_PMD)
			fprintf(out, "  2M-PMD: batched/per-PTE = %.3f, not judged: "
				"no PTEs, both take the same PMD path\n", q);
		else if (mp_modes[i] == FOLIO_4K)
			fprintf(out, "  target 4K: batched/per-PTE = %.3f (median of"
				" the %d ABBA pairs' ratios), want <= 1.03: %s\n",
				b->paired, b->t.reps, b->paired <= 1.03 ? "met" : "MISSED");
		else
			fprintf(out, "  target %s: batched/per-PTE = %.3f, want < 1: %s\n",
				folio_mode_name(mp_modes[i]), q,
				q < 1 ? "met" : "MISSED");
	}
	for (i = 0; i < MP_NR_MODES; i++) {
		for (col = 0; col < 3; col++) {
			const struct mp_result *r = &res[i][col];

			if (r->failed) {
				failed = true;
				fprintf(out, "  FAIL %s %s: %s\n",
					folio_mode_name(mp_modes[i]),
					mp_variant_name(col), r->why);
			} else if (!r->ran && r->why[0]) {
				fprintf(out, "  SKIP %s %s: %s\n",
					folio_mode_name(mp_modes[i]),
					mp_variant_name(col), r->why);
			}
		}
	}
	fprintf(out, "  rewrite of every page after the loop: %s\n",
		failed ? "see FAIL above" : "0 faults everywhere it ran");
	return failed ? -EIO : bench_json_error();
}
