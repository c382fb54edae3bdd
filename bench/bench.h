/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * bench/ - the benchmarks of the seed documents' tables, measured on the
 * model (per-PTE against batched, in one run) and on this machine's
 * kernel, with their method printed beside the numbers.
 *
 * bench.h: what the benchmarks (gup.c, cow.c, mprotect.c, replay.c) share:
 * options, folio modes, timing statistics, rows (printed, JSON), and
 * setting up a region of a given folio mode on the model and on this
 * machine's kernel (kernel_region.c).
 */
#ifndef BENCH_BENCH_H
#define BENCH_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "ptebatch.h"

struct scenario;
struct calibration;

enum bench_backend { BENCH_MODEL = 1, BENCH_KERNEL = 2, BENCH_BOTH = 3 };

struct bench_opts {
	enum bench_backend backend;
	const char *arch;		/* the model's, pb_arch_name() */
	unsigned long size;		/* region bytes; 0 = the bench's default */
	int reps;			/* 0 = the bench's default */
	bool quick;			/* tiny sizes, few reps: a smoke test */
	FILE *json;			/* NULL or an open JSON-lines stream */
	const char *plot;		/* NULL or an .svg path */
	bool progress;			/* stderr is a terminal */
	FILE *out;			/* where tables go */
	/*
	 * The calibration of the "predicted kernel" columns (calibrate/),
	 * read before anything runs, and the file it came from; NULL when
	 * there is none, and calib_none says why ("no such file", ...).
	 */
	const struct calibration *calib;
	const char *calib_path;
	const char *calib_none;
	/* replay: the scenarios, parsed, and the names they were given by */
	struct scenario **traces;
	const char **trace_names;
	int nr_traces;
};

/*
 * Option limits, checked before anything runs.  --reps: a few thousand
 * repetitions of a seed-size region already take hours.
 */
#define BENCH_MAX_REPS 1000
/* The largest --size: a quarter of the model's largest memory. */
#define BENCH_MAX_SIZE (PB_MAX_MEMORY / 4)

/*
 * Can the benchmarks run regions of @size bytes?  A multiple of the PMD
 * size (every folio mode maps whole PMDs), at most BENCH_MAX_SIZE, and at
 * most a quarter of this machine's memory (a benchmark holds about twice
 * its region, on the model and on the kernel alike).  0, or -EINVAL with
 * the reason in @why ("is not a multiple of 2M ...").
 */
int bench_check_size(unsigned long size, char *why, size_t whylen);
/*
 * --plot (or plot's --out: @flag), before anything runs: gnuplot is
 * installed and @path is an output lib/outfile.h takes (outfile_check():
 * nothing is written there).  0, or -errno with "FLAG: ..." in @why.
 */
int bench_plot_check(const char *flag, const char *path, char *why,
		     size_t whylen);

/*
 * Where the kernel columns can run: asked for, root, and a model of this
 * machine's architecture (an arm64 run beside an x86 kernel would measure
 * the same x86 kernel again under another name).  NULL, or why not.
 */
const char *bench_kernel_unavailable(const struct bench_opts *o);

/* The folio modes of the seed tables. */
enum folio_mode {
	FOLIO_4K,		/* MADV_NOHUGEPAGE, order 0 */
	FOLIO_64K,		/* mTHP 64K */
	FOLIO_1M,		/* mTHP 1M */
	FOLIO_2M_PTE,		/* PMD THP split to PTEs (folio stays whole) */
	FOLIO_2M_PMD,		/* PMD-mapped THP */
	NR_FOLIO_MODES,
};

const char *folio_mode_name(enum folio_mode m);	/* "4K", "64K", "1M", "2M-PTE", "2M-PMD" */

/* Timing: microseconds of CLOCK_MONOTONIC. */
double bench_now_us(void);

struct bench_stat {
	double median_us, min_us, max_us;
	int reps;
};
/* Median/min/max of @n samples (sorts @samples). */
struct bench_stat bench_stats(double *samples, int n);

/*
 * The kernel time o->calib predicts for one repetition of a model row's
 * timed operation, from its counter deltas: have is false without a
 * calibration; lower_bound when a counter that moved has no cost in it
 * (missing), us then being what the others cost.
 */
struct bench_pred {
	bool have, lower_bound;
	double us;
	enum pb_stat missing;
};

/*
 * The counters a prediction is made from come from one extra, untimed
 * repetition of the operation, between bench_count_for_prediction(true)
 * and (false): memmap_line (struct page cache lines first touched) is
 * counted only then, because counting it costs model time.  The timed
 * repetitions run with it off.
 */
void bench_count_for_prediction(bool on);
/* *@p from the counters @before and @after one repetition (@before NULL:
 * @after is already the delta). */
void bench_predict(const struct bench_opts *o,
		   const uint64_t before[PB_NR_STATS],
		   const uint64_t after[PB_NR_STATS], struct bench_pred *p);
/* @p's microseconds scaled by @scale in %*.*f, '>' before a lower bound,
 * "-" without a prediction. */
void bench_pred_text(char *buf, size_t len, const struct bench_pred *p,
		     double scale, int prec);
/* a/b of two predictions into @buf ("-" unless both are there). */
void bench_pred_ratio_text(char *buf, size_t len, const struct bench_pred *a,
			   const struct bench_pred *b, int prec);
/*
 * The method line of the predicted column, after @prefix: the file and
 * its machine (cpu, kernel, date), or "predicted kernel: none (REASON)"
 * when there is no calibration.
 */
void bench_print_calibration(const struct bench_opts *o, FILE *f,
			     const char *prefix);
/* If one of the @nr @preds is a lower bound, a line that says so. */
void bench_print_pred_notes(const struct bench_opts *o, FILE *f,
			    const char *prefix, const struct bench_pred *preds,
			    size_t nr);

/* One row of a table, as JSON carries it. */
struct bench_row {
	const char *bench;		/* "gup", "cow", "mprotect" */
	const char *folio;		/* folio_mode_name() */
	const char *op;			/* e.g. "pin_user_pages_fast" */
	const char *variant;		/* "baseline", "seeds", "kernel", ... */
	const char *backend;		/* "model" or "kernel" */
	struct bench_stat t;
	/* Counters where they exist; -1 = not measured. */
	long long faults, folio_ref_atomic, pincount_atomic, tlb_flush;
	/* Model rows: the kernel time the calibration predicts (struct
	 * bench_pred), JSON "predicted_us" (and "predicted_lower_bound"). */
	const struct bench_pred *pred;
	/*
	 * The bench's own fields, after the others in their order: a
	 * json_pack() object the caller keeps (NULL: it could not be made).
	 */
	json_t *extra;
};
void bench_row_init(struct bench_row *r);

/*
 * How a row is spelled: one object per line, no space; 15 digits give
 * back every number a row carries as it was rounded (bench_json_real()),
 * 87541.405 and not 87541.404999999999.
 */
#define BENCH_JSON_FLAGS \
	(JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15))
/*
 * @s as a JSON string; a byte that is not UTF-8 (a file name may hold
 * any) as U+FFFD.  NULL: out of memory.
 */
json_t *bench_json_text(const char *s);
/*
 * @v rounded to @decimals, the precision a row carries it to (a time in
 * us: 3, to the nanosecond).  NULL: not finite, or out of memory.
 */
json_t *bench_json_real(double v, int decimals);
/*
 * Append @r to opts->json (one JSON object per line, with the machine it
 * ran on) if JSON is on, and keep the same line for bench_plot() if
 * --plot is on.  A row that cannot be made (out of memory) is in neither,
 * and bench_json_error() says so.
 */
void bench_json_row(const struct bench_opts *o, const struct bench_row *r);
/*
 * 0, or -ENOMEM when a row could not be made since the last call: each
 * benchmark returns it, so that no --json file is kept without it.
 */
int bench_json_error(void);

/*
 * --plot: draw the figures of every row kept so far (bench/figure.h) to
 * o->plot, or o->plot's name with -NAME for each of several figures; the
 * files written are named on stderr.  Returns 0, or -errno with the
 * reason on stderr (-ENOENT: no gnuplot).
 */
int bench_plot(const struct bench_opts *o);

/* Progress on stderr when it is a terminal. */
void bench_progress(const struct bench_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * The model: bring up a machine of @memory bytes with variant @v, and map
 * @size bytes at @addr in a new process in folio mode @m, every page
 * written (so every folio is there).  Returns 0 or -errno; *@procp is the
 * process (pb_exit it, then pb_fini).
 */
int bench_model_start(unsigned long memory, const struct pb_variant *v);
int bench_model_region(struct pb_proc **procp, unsigned long addr,
		       unsigned long size, enum folio_mode m);
/* Counter deltas of the calling thread. */
void bench_stats_snapshot(uint64_t out[PB_NR_STATS]);

#define BENCH_MODEL_ADDR (1UL << 32)

/*
 * The kernel (kernel_region.c, root only).  Folio bytes of mode @m; 0 for
 * 4K, meaning "the base page".
 */
unsigned long folio_mode_bytes(enum folio_mode m);
/*
 * THP sysfs for mode @m: its size "always", every other size "never"
 * (thp_settings_apply(); put back with thp_settings_restore()).  0 or
 * -errno with the reason in @why.
 */
int bench_thp_apply(enum folio_mode m, char *why, size_t whylen);
/*
 * Under the THP settings of mode @m: map @size bytes (a multiple of 2M)
 * 2M-aligned at *@addrp, every page written; 4K MADV_NOHUGEPAGE, 2M
 * MADV_HUGEPAGE; 2M-PTE split to PTEs (the folios stay whole); then check
 * that the folios materialized (pagemap, kpageflags, for 2M smaps
 * AnonHugePages, no THP fallback during the faults), trying up to 3 fresh
 * regions.  0; -EOPNOTSUPP with the reason in @why for a SKIP (the folios
 * are not the mode's, or cannot be checked); another -errno with @why when
 * mmap, madvise or mprotect failed.  Nothing stays mapped on an error.
 */
int bench_kernel_map(enum folio_mode m, unsigned long size, void **addrp,
		     char *why, size_t whylen);
void bench_kernel_unmap(void *addr, unsigned long size);
/*
 * bench_thp_apply() + bench_kernel_map(): -EOPNOTSUPP with @why also when
 * the THP settings cannot be applied; the settings are put back on every
 * error.  bench_kernel_region_free() unmaps and puts them back.
 */
int bench_kernel_region(enum folio_mode m, unsigned long size, void **addrp,
			char *why, size_t whylen);
void bench_kernel_region_free(void *addr, unsigned long size);

/* The benchmarks.  Each prints its tables to o->out; 0 or -errno. */
int bench_gup(const struct bench_opts *o);
int bench_cow(const struct bench_opts *o);
int bench_mprotect(const struct bench_opts *o);
/*
 * replay.c: every scenario of o->traces under each folio configuration
 * (its mthp settings replaced: o->traces[i] is changed) and preset, and on
 * the kernel.  Its rows are drawn by bench_plot() like the others.
 */
int bench_replay(const struct bench_opts *o);

#endif /* BENCH_BENCH_H */
