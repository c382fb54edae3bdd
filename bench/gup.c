// SPDX-License-Identifier: GPL-2.0-only
/*
 * gup.c: the GUP-fast batching seed's first table - get_user_pages_fast()
 * and pin_user_pages_fast() over an anonymous region, FOLL_WRITE, per
 * folio size, per-PTE (before) against batched (after) on the model in
 * one run, beside a memory floor, the unpin time, and this machine's
 * kernel pinning the same region through IORING_REGISTER_BUFFERS.
 *
 * before is "upstream" and after is "upstream" with gup_batch=1: nothing
 * but GUP-fast batching differs between the two columns.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "backend/thp_sysfs.h"
#include "bench/bench.h"

#define GUP_DEFAULT_SIZE	(256UL << 20)
#define GUP_QUICK_SIZE		(16UL << 20)
#define GUP_DEFAULT_REPS	15
#define GUP_QUICK_REPS		3
#define GUP_PAGES_PER_CALL	65536UL	/* gup_test's nr_pages_per_call */
/*
 * The seed's io_uring registration, in iovecs of 16M: one large iovec
 * costs io_uring time quadratic in its head pages (headpage_already_acct()
 * scans the earlier ones), which would swamp the pinning it measures.
 */
#define GUP_IOVEC_SIZE		(16UL << 20)

enum { BEFORE, AFTER, NR_SIDES };
enum { OP_GET, OP_PIN, NR_OPS };

static const char *const op_names[NR_OPS] = {
	"get_user_pages_fast", "pin_user_pages_fast",
};
static const char *const release_names[NR_OPS] = {
	"put_page", "unpin_user_pages",
};
static const unsigned int op_flags[NR_OPS] = {
	PB_FOLL_GET | PB_FOLL_WRITE, PB_FOLL_PIN | PB_FOLL_WRITE,
};
static const char *const side_variant[NR_SIDES] = {
	"upstream", "upstream+gup_batch=1",
};

struct gup_cell {
	struct bench_stat take, release;
	long long ref_atomic, pin_atomic;	/* of one take, -1 if unknown */
	/* after/before of each rep's pair, their median (the after side). */
	struct bench_stat paired;
	struct bench_pred pred;		/* of one take */
	bool have;
};

struct gup_mode_result {
	struct gup_cell cell[NR_SIDES][NR_OPS];
	struct bench_stat floor;
	bool have_kernel;
	struct bench_stat reg, unreg;
	char kernel_why[256];		/* why the kernel column is empty */
	/* gup_test's PIN_FAST_BENCHMARK, where the kernel has it */
	bool have_gup_test;
	struct bench_stat gt_pin, gt_unpin;
};

struct gup_run {
	const struct bench_opts *o;
	unsigned long size, page_size, nr_pages, pages_per_call;
	int reps;
};

/* ---- the model ------------------------------------------------------- */

/*
 * One take of the whole region in calls of pages_per_call pages, then the
 * release of all of them, each timed.  The sets in held[] are allocated
 * and touched before the clock starts, as gup_test allocates its pages[]
 * before it reads the time: what is timed is the walk and the grabs.
 */
static int gup_take(const struct gup_run *run, struct pb_proc *p,
		    unsigned int flags, struct pb_pages **held, double *take_us,
		    double *release_us, uint64_t delta[PB_NR_STATS])
{
	unsigned long nr_calls = (run->nr_pages + run->pages_per_call - 1) /
				 run->pages_per_call;
	uint64_t before[PB_NR_STATS], after[PB_NR_STATS];
	unsigned long i, done = 0;
	double t0, t1, t2;
	int err = 0, s;

	bench_stats_snapshot(before);
	t0 = bench_now_us();
	for (i = 0; i < nr_calls; i++) {
		unsigned long nr = run->nr_pages - done < run->pages_per_call ?
				   run->nr_pages - done : run->pages_per_call;

		err = pb_gup_fast_into(p, BENCH_MODEL_ADDR + done * run->page_size,
				       nr, flags, held[i]);
		if (err)
			break;
		done += nr;
	}
	t1 = bench_now_us();
	bench_stats_snapshot(after);
	for (i = 0; i < nr_calls; i++)
		pb_pages_put(held[i], false);
	t2 = bench_now_us();
	*take_us = t1 - t0;
	*release_us = t2 - t1;
	if (delta)
		for (s = 0; s < PB_NR_STATS; s++)
			delta[s] = after[s] - before[s];
	return err;
}

/*
 * Both sides of one operation on the same region, the same frames and the
 * same pages[]: the variant is switched between takes, and the two sides
 * alternate which goes first, so the VM's drift and the order of the two
 * land on both alike (a ratio within a few percent needs that here).
 */
static int gup_model_op(const struct gup_run *run, struct pb_proc *p, int op,
			struct gup_mode_result *res)
{
	unsigned long nr_calls = (run->nr_pages + run->pages_per_call - 1) /
				 run->pages_per_call, i;
	double *take[NR_SIDES], *release[NR_SIDES];
	struct pb_pages **held = calloc(nr_calls, sizeof(*held));
	uint64_t delta[NR_SIDES][PB_NR_STATS], pdelta[PB_NR_STATS];
	struct pb_variant v[NR_SIDES];
	double w1, w2;
	int r, k, side, err = 0;

	for (side = 0; side < NR_SIDES; side++) {
		pb_variant_preset("upstream", &v[side]);
		v[side].gup_batch = side == AFTER;
		take[side] = calloc(run->reps, sizeof(double));
		release[side] = calloc(run->reps, sizeof(double));
		if (!take[side] || !release[side])
			err = -ENOMEM;
	}
	if (!held)
		err = -ENOMEM;
	for (i = 0; !err && i < nr_calls; i++)
		if (!(held[i] = pb_pages_alloc(run->pages_per_call)))
			err = -ENOMEM;
	/*
	 * The warm-up: the host's caches and the allocator settle, and
	 * every pages[] has been written once.
	 */
	for (side = 0; !err && side < NR_SIDES; side++) {
		pb_set_variant(&v[side]);
		err = gup_take(run, p, op_flags[op], held, &w1, &w2, NULL);
	}
	for (r = 0; !err && r < run->reps; r++) {
		for (k = 0; !err && k < NR_SIDES; k++) {
			side = (r & 1) ? NR_SIDES - 1 - k : k;
			pb_set_variant(&v[side]);
			err = gup_take(run, p, op_flags[op], held, &take[side][r],
				       &release[side][r], r ? NULL : delta[side]);
		}
	}
	/* The prediction's counters: one more take of each side, untimed. */
	for (side = 0; !err && side < NR_SIDES; side++) {
		pb_set_variant(&v[side]);
		bench_count_for_prediction(true);
		err = gup_take(run, p, op_flags[op], held, &w1, &w2, pdelta);
		bench_count_for_prediction(false);
		bench_predict(run->o, NULL, pdelta, &res->cell[side][op].pred);
	}
	/*
	 * The median of the per-rep ratios, before bench_stats() sorts the
	 * samples: each pair ran back to back, so a slow stretch of the VM
	 * lands on both of its takes.
	 */
	if (!err) {
		double *pr = calloc(run->reps, sizeof(*pr));

		for (r = 0; pr && r < run->reps; r++)
			pr[r] = take[AFTER][r] / take[BEFORE][r];
		if (pr)
			res->cell[AFTER][op].paired = bench_stats(pr, run->reps);
		free(pr);
	}
	for (side = 0; !err && side < NR_SIDES; side++) {
		struct gup_cell *c = &res->cell[side][op];

		c->take = bench_stats(take[side], run->reps);
		c->release = bench_stats(release[side], run->reps);
		c->ref_atomic = (long long)delta[side][PB_STAT_folio_ref_atomic];
		c->pin_atomic = (long long)delta[side][PB_STAT_pincount_atomic];
		c->have = true;
	}
	for (i = 0; held && i < nr_calls; i++)
		pb_pages_free(held[i]);
	for (side = 0; side < NR_SIDES; side++) {
		free(take[side]);
		free(release[side]);
	}
	free(held);
	return err;
}

static int gup_model_mode(const struct gup_run *run, enum folio_mode m,
			  struct gup_mode_result *res)
{
	/* The region, its page tables and slack: twice the region. */
	unsigned long memory = 2 * run->size < (64UL << 20) ? 64UL << 20
							    : 2 * run->size;
	struct pb_proc *p = NULL;
	struct pb_variant v;
	int op, err;

	pb_variant_preset("upstream", &v);
	err = bench_model_start(memory, &v);
	if (err)
		return err;
	err = bench_model_region(&p, BENCH_MODEL_ADDR, run->size, m);
	for (op = 0; !err && op < NR_OPS; op++) {
		bench_progress(run->o, "gup: model %s %s", folio_mode_name(m),
			       op_names[op]);
		err = gup_model_op(run, p, op, res);
	}
	if (p)
		pb_exit(p);
	pb_fini();
	return err;
}

/*
 * The floor: what any GUP-fast must at least do for nr pages - read one
 * 8-byte PTE and write one pages[] entry each - as a plain loop over
 * arrays of the same sizes.
 */
static double gup_floor_once(const uint64_t *ptes, void **pages,
			     unsigned long nr)
{
	char *vmemmap = (char *)pages;	/* any base: never dereferenced */
	double t0 = bench_now_us();
	unsigned long i;

	for (i = 0; i < nr; i++)
		pages[i] = vmemmap + ((ptes[i] >> 12) & 0xffffffffffUL) * 64;
	/* The stores are the point: keep the compiler from dropping them. */
	__asm__ __volatile__("" : : "r"(pages) : "memory");
	return bench_now_us() - t0;
}

static int gup_floor(const struct gup_run *run, struct bench_stat *out)
{
	unsigned long nr = run->pages_per_call < run->nr_pages ?
			   run->pages_per_call : run->nr_pages;
	unsigned long calls = run->nr_pages / nr, i, c;
	uint64_t *ptes = malloc(nr * sizeof(*ptes));
	void **pages = malloc(nr * sizeof(*pages));
	double *t = calloc(run->reps, sizeof(*t));
	int r;

	if (!ptes || !pages || !t) {
		free(ptes);
		free(pages);
		free(t);
		return -ENOMEM;
	}
	for (i = 0; i < nr; i++)
		ptes[i] = ((0x100000UL + i) << 12) | 0x67;	/* present, rw, ... */
	gup_floor_once(ptes, pages, nr);
	for (r = 0; r < run->reps; r++)
		for (c = 0, t[r] = 0; c < calls; c++)
			t[r] += gup_floor_once(ptes, pages, nr);
	*out = bench_stats(t, run->reps);
	free(ptes);
	free(pages);
	free(t);
	return 0;
}

/* ---- the kernel ------------------------------------------------------ */

static int kernel_register(const struct gup_run *run, char *base,
			   struct gup_mode_result *res)
{
	unsigned long chunk = run->size < GUP_IOVEC_SIZE ? run->size : GUP_IOVEC_SIZE;
	unsigned int nvec = (unsigned int)(run->size / chunk), i;
	double *reg = calloc(run->reps, sizeof(*reg));
	double *unreg = calloc(run->reps, sizeof(*unreg));
	struct iovec *iov = calloc(nvec, sizeof(*iov));
	struct io_uring ring;
	int r, err;

	if (!reg || !unreg || !iov) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nvec; i++) {
		iov[i].iov_base = base + i * chunk;
		iov[i].iov_len = chunk;
	}
	err = io_uring_queue_init(8, &ring, 0);
	if (err) {
		snprintf(res->kernel_why, sizeof(res->kernel_why),
			 "io_uring_queue_init: %s", strerror(-err));
		goto out;
	}
	for (r = -1; r < run->reps; r++) {
		double t0 = bench_now_us(), t1, t2;

		err = io_uring_register_buffers(&ring, iov, nvec);
		t1 = bench_now_us();
		if (err) {
			snprintf(res->kernel_why, sizeof(res->kernel_why),
				 "io_uring_register_buffers: %s", strerror(-err));
			break;
		}
		err = io_uring_unregister_buffers(&ring);
		t2 = bench_now_us();
		if (err) {
			snprintf(res->kernel_why, sizeof(res->kernel_why),
				 "io_uring_unregister_buffers: %s", strerror(-err));
			break;
		}
		if (r >= 0) {
			reg[r] = t1 - t0;
			unreg[r] = t2 - t1;
		}
	}
	io_uring_queue_exit(&ring);
	if (!err) {
		res->reg = bench_stats(reg, run->reps);
		res->unreg = bench_stats(unreg, run->reps);
		res->have_kernel = true;
	}
out:
	free(reg);
	free(unreg);
	free(iov);
	return err;
}

/*
 * gup_test (CONFIG_GUP_TEST, our kernels have it): the seed's own
 * measurement, pin_user_pages_fast() over the region in calls of 65536
 * pages and the unpin of them all, timed by the kernel around the calls
 * (ktime, in us; a guest under -icount counts 1000 instructions per us).
 * The layout is mm/gup_test.h's, a debugfs ABI of its own.
 */
#define GUP_TEST_PATH "/sys/kernel/debug/gup_test"
struct gup_test_args {
	uint64_t get_delta_usec;
	uint64_t put_delta_usec;
	uint64_t addr;
	uint64_t size;
	uint32_t nr_pages_per_call;
	uint32_t gup_flags;
	uint32_t test_flags;
	uint32_t which_pages[8];
};
#define GUP_TEST_PIN_FAST_BENCHMARK _IOWR('g', 2, struct gup_test_args)
#define GUP_TEST_FOLL_WRITE 0x01

static void kernel_gup_test(const struct gup_run *run, char *base,
			    struct gup_mode_result *res)
{
	double *pin = calloc(run->reps, sizeof(*pin));
	double *unpin = calloc(run->reps, sizeof(*unpin));
	int fd = open(GUP_TEST_PATH, O_RDWR | O_CLOEXEC), r;

	if (fd < 0 || !pin || !unpin)
		goto out;	/* not this kernel's: no column */
	for (r = -1; r < run->reps; r++) {
		struct gup_test_args g = {
			.addr = (uintptr_t)base,
			.size = run->size,
			.nr_pages_per_call = (uint32_t)run->pages_per_call,
			.gup_flags = GUP_TEST_FOLL_WRITE,
		};

		if (ioctl(fd, GUP_TEST_PIN_FAST_BENCHMARK, &g))
			goto out;
		if (r >= 0) {
			pin[r] = (double)g.get_delta_usec;
			unpin[r] = (double)g.put_delta_usec;
		}
	}
	res->gt_pin = bench_stats(pin, run->reps);
	res->gt_unpin = bench_stats(unpin, run->reps);
	res->have_gup_test = true;
out:
	if (fd >= 0)
		close(fd);
	free(pin);
	free(unpin);
}

/* The kernel column of mode @m; a reason in res->kernel_why if none. */
static void gup_kernel_mode(const struct gup_run *run, enum folio_mode m,
			    struct gup_mode_result *res)
{
	char why[160];
	void *base;
	int err;

	bench_progress(run->o, "gup: kernel %s io_uring register",
		       folio_mode_name(m));
	err = bench_thp_apply(m, why, sizeof(why));
	if (err) {
		snprintf(res->kernel_why, sizeof(res->kernel_why),
			 "THP settings: %s", why);
		return;
	}
	err = bench_kernel_map(m, run->size, &base, why, sizeof(why));
	if (err == -EOPNOTSUPP)
		snprintf(res->kernel_why, sizeof(res->kernel_why),
			 "folios did not materialize: %s", why);
	else if (err)
		snprintf(res->kernel_why, sizeof(res->kernel_why), "%s", why);
	else if (!kernel_register(run, base, res))
		kernel_gup_test(run, base, res);
	if (!err)
		bench_kernel_unmap(base, run->size);
	thp_settings_restore();
}

/* ---- output ---------------------------------------------------------- */

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

/* A kernel row pair: the take and the release, @row's other fields set. */
static void kernel_rows(const struct gup_run *run, struct bench_row *row,
			const char *take_op, const struct bench_stat *take,
			const char *release_op, const struct bench_stat *release)
{
	row->op = take_op;
	row->t = *take;
	bench_json_row(run->o, row);
	row->op = release_op;
	row->t = *release;
	bench_json_row(run->o, row);
}

static void gup_json(const struct gup_run *run, enum folio_mode m,
		     const struct gup_mode_result *res)
{
	int side, op;

	for (side = 0; side < NR_SIDES; side++) {
		for (op = 0; op < NR_OPS; op++) {
			const struct gup_cell *c = &res->cell[side][op];
			struct bench_row row;

			if (!c->have)
				continue;
			bench_row_init(&row);
			row.bench = "gup";
			row.folio = folio_mode_name(m);
			row.variant = side_variant[side];
			row.backend = "model";
			row.op = op_names[op];
			row.t = c->take;
			row.folio_ref_atomic = c->ref_atomic;
			row.pincount_atomic = c->pin_atomic;
			row.pred = &c->pred;
			row.extra = json_pack("{s:I, s:I, s:I, s:i, s:o}",
				"size_bytes", (json_int_t)run->size,
				"pages", (json_int_t)run->nr_pages,
				"pages_per_call", (json_int_t)run->pages_per_call,
				"gup_batch", side == AFTER,
				"floor_us", bench_json_real(res->floor.median_us, 3));
			bench_json_row(run->o, &row);
			row.op = release_names[op];
			row.t = c->release;
			row.folio_ref_atomic = row.pincount_atomic = -1;
			row.pred = NULL;
			bench_json_row(run->o, &row);
			json_decref(row.extra);
		}
	}
	{
		struct bench_row row;

		bench_row_init(&row);
		row.bench = "gup";
		row.folio = folio_mode_name(m);
		row.op = "floor";
		row.variant = "none";
		row.backend = "model";
		row.t = res->floor;
		row.extra = json_pack("{s:I}", "pages",
				      (json_int_t)run->nr_pages);
		if (res->floor.reps)
			bench_json_row(run->o, &row);
		json_decref(row.extra);
		row.variant = "kernel";
		row.backend = "kernel";
		if (res->have_kernel) {
			row.extra = json_pack("{s:I, s:I}",
				"size_bytes", (json_int_t)run->size,
				"iovecs", (json_int_t)(run->size /
					(run->size < GUP_IOVEC_SIZE ? run->size
								    : GUP_IOVEC_SIZE)));
			kernel_rows(run, &row, "io_uring_register_buffers",
				    &res->reg, "io_uring_unregister_buffers",
				    &res->unreg);
			json_decref(row.extra);
		}
		if (res->have_gup_test) {
			row.extra = json_pack("{s:I, s:I}",
				"size_bytes", (json_int_t)run->size,
				"pages_per_call", (json_int_t)run->pages_per_call);
			kernel_rows(run, &row, "gup_test_pin_user_pages_fast",
				    &res->gt_pin, "gup_test_unpin_user_pages",
				    &res->gt_unpin);
			json_decref(row.extra);
		}
	}
}

static void size_text(char *buf, size_t len, unsigned long bytes)
{
	if (bytes >= (1UL << 30) && !(bytes & ((1UL << 30) - 1)))
		snprintf(buf, len, "%luG", bytes >> 30);
	else if (bytes >= (1UL << 20) && !(bytes & ((1UL << 20) - 1)))
		snprintf(buf, len, "%luM", bytes >> 20);
	else
		snprintf(buf, len, "%luK", bytes >> 10);
}

static void gup_method(const struct gup_run *run, const char *kernel_note)
{
	FILE *f = run->o->out;
	char sz[32];

	size_text(sz, sizeof(sz), run->size);
	fprintf(f, "gup: get_user_pages_fast() and pin_user_pages_fast(),"
		" FOLL_WRITE, over a %s anonymous region (%lu pages),\n"
		"     %lu pages per call; time of all calls, then of releasing"
		" every page (unpin)\n", sz, run->nr_pages,
		run->pages_per_call < run->nr_pages ? run->pages_per_call
						    : run->nr_pages);
	fprintf(f, "  method: %d reps after 1 warm-up, median in us"
		" (min and max in --json); arch %s\n", run->reps, run->o->arch);
	fprintf(f, "  model:  before = %s (gup_batch=0, per-PTE), after = %s"
		" (nothing else differs);\n          both on the same region and"
		" pages[], switched between takes, alternating which goes"
		" first\n", side_variant[BEFORE], side_variant[AFTER]);
	fprintf(f, "  floor:  a plain loop reading %lu 8-byte PTE words and"
		" writing %lu pages[] entries, same run\n",
		run->nr_pages, run->nr_pages);
	fprintf(f, "          (every pages[] is allocated and written before"
		" the clock starts, as in gup_test)\n");
	fprintf(f, "  kernel: %s\n", kernel_note);
	bench_print_calibration(run->o, f, "  ");
	fprintf(f, "  ratio = after/before, same run; after/floor = batched"
		" pin over the floor\n\n");
	fprintf(f, "%-7s %27s %27s %8s %6s %17s %21s\n", "", "get_user_pages_fast",
		"pin_user_pages_fast", "floor", "pin", "unpin (pin)",
		"kernel io_uring");
	fprintf(f, "%-7s %9s %9s %7s %9s %9s %7s %8s %6s %8s %8s %10s %10s\n",
		"folio", "before", "after", "ratio", "before", "after", "ratio",
		"us", "/floor", "before", "after", "register", "unregister");
}

static void gup_table_row(const struct gup_run *run, enum folio_mode m,
			  const struct gup_mode_result *res)
{
	const struct gup_cell (*c)[NR_OPS] = res->cell;
	FILE *f = run->o->out;

	fprintf(f, "%-7s %9.1f %9.1f %7.3f %9.1f %9.1f %7.3f %8.1f %6.2f"
		" %8.1f %8.1f", folio_mode_name(m),
		c[BEFORE][OP_GET].take.median_us, c[AFTER][OP_GET].take.median_us,
		ratio(c[AFTER][OP_GET].take.median_us, c[BEFORE][OP_GET].take.median_us),
		c[BEFORE][OP_PIN].take.median_us, c[AFTER][OP_PIN].take.median_us,
		ratio(c[AFTER][OP_PIN].take.median_us, c[BEFORE][OP_PIN].take.median_us),
		res->floor.median_us,
		ratio(c[AFTER][OP_PIN].take.median_us, res->floor.median_us),
		c[BEFORE][OP_PIN].release.median_us,
		c[AFTER][OP_PIN].release.median_us);
	if (res->have_kernel)
		fprintf(f, " %10.1f %10.1f\n", res->reg.median_us,
			res->unreg.median_us);
	else
		fprintf(f, " %10s %10s\n", "-", "-");
	fflush(f);
}

/*
 * The kernel's gup_test pinning, below the table, where the kernel has
 * it: the seed's own numbers are of this (its ratios need two kernels,
 * per-PTE and batched: bench the two and divide).
 */
static void gup_test_table(const struct gup_run *run,
			   const struct gup_mode_result *res)
{
	FILE *f = run->o->out;
	int m;

	for (m = 0; m < NR_FOLIO_MODES; m++)
		if (res[m].have_gup_test)
			break;
	if (m == NR_FOLIO_MODES)
		return;
	fprintf(f, "\n  kernel gup_test: PIN_FAST_BENCHMARK (pin_user_pages_fast,"
		" FOLL_WRITE, %lu pages per call),\n  median us as the kernel"
		" times it\n  %-7s %10s %10s\n", run->pages_per_call, "folio",
		"pin", "unpin");
	for (m = 0; m < NR_FOLIO_MODES; m++)
		if (res[m].have_gup_test)
			fprintf(f, "  %-7s %10.0f %10.0f\n", folio_mode_name(m),
				res[m].gt_pin.median_us,
				res[m].gt_unpin.median_us);
}

/*
 * The predicted kernel time of one take per side, below the table (its
 * rows are already wide), each ratio beside the model's own.
 */
static void gup_pred_table(const struct gup_run *run,
			   const struct gup_mode_result *res)
{
	struct bench_pred preds[NR_FOLIO_MODES * NR_SIDES * NR_OPS];
	FILE *f = run->o->out;
	size_t n = 0;
	int m, op;

	if (!run->o->calib)
		return;
	fprintf(f, "\n  predicted kernel, us of one take; ratio = after/before"
		" predicted, model = the model's ratio above\n");
	fprintf(f, "  %-7s %33s %33s\n", "", "get_user_pages_fast",
		"pin_user_pages_fast");
	fprintf(f, "  %-7s %9s %9s %7s %6s %9s %9s %7s %6s\n", "folio",
		"before", "after", "ratio", "model", "before", "after", "ratio",
		"model");
	for (m = 0; m < NR_FOLIO_MODES; m++) {
		const struct gup_cell (*c)[NR_OPS] = res[m].cell;

		if (!c[BEFORE][OP_GET].have)
			continue;
		fprintf(f, "  %-7s", folio_mode_name(m));
		for (op = 0; op < NR_OPS; op++) {
			char b[32], a[32], q[32];

			bench_pred_text(b, sizeof(b), &c[BEFORE][op].pred, 1, 1);
			bench_pred_text(a, sizeof(a), &c[AFTER][op].pred, 1, 1);
			bench_pred_ratio_text(q, sizeof(q), &c[AFTER][op].pred,
					      &c[BEFORE][op].pred, 3);
			fprintf(f, " %9s %9s %7s %6.3f", b, a, q,
				ratio(c[AFTER][op].take.median_us,
				      c[BEFORE][op].take.median_us));
		}
		fputc('\n', f);
		for (op = 0; op < NR_OPS; op++) {
			preds[n++] = c[BEFORE][op].pred;
			preds[n++] = c[AFTER][op].pred;
		}
	}
	bench_print_pred_notes(run->o, f, "  ", preds, n);
}

/* The targets, as outputs of this run (never assertions). */
static void gup_targets(const struct gup_run *run,
			const struct gup_mode_result *res)
{
	const struct gup_mode_result *k4 = &res[FOLIO_4K], *k64 = &res[FOLIO_64K],
				     *k2 = &res[FOLIO_2M_PTE];
	FILE *f = run->o->out;
	double s64 = ratio(k64->cell[BEFORE][OP_PIN].take.median_us,
			   k64->cell[AFTER][OP_PIN].take.median_us);
	double s2 = ratio(k2->cell[BEFORE][OP_PIN].take.median_us,
			  k2->cell[AFTER][OP_PIN].take.median_us);
	/* The order-0 question is a few percent: judged on paired ratios. */
	double d4 = k4->cell[AFTER][OP_PIN].paired.median_us - 1;
	double fl = ratio(k2->cell[AFTER][OP_PIN].take.median_us,
			  k2->floor.median_us);
	int m;

	fprintf(f, "\n  targets (pin, batched vs per-PTE, this run):\n");
	fprintf(f, "    64K     %6.1fx faster   (target >= 6x)    %s\n", s64,
		s64 >= 6 ? "met" : "NOT met");
	fprintf(f, "    2M-PTE  %6.1fx faster   (target >= 15x)   %s\n", s2,
		s2 >= 15 ? "met" : "NOT met");
	fprintf(f, "    4K      %+6.1f%% vs per-PTE (paired median; target <= +3%%) %s\n",
		d4 * 100, d4 <= 0.03 ? "met" : "NOT met");
	fprintf(f, "    2M-PTE  %6.2fx the floor  (target within 2x)  %s\n", fl,
		fl <= 2 ? "met" : "NOT met");
	for (m = 0; m < NR_FOLIO_MODES; m++)
		if (!res[m].have_kernel && res[m].kernel_why[0])
			fprintf(f, "  kernel %s: SKIP %s\n", folio_mode_name(m),
				res[m].kernel_why);
}

/* ---- the benchmark --------------------------------------------------- */

int bench_gup(const struct bench_opts *o)
{
	struct gup_mode_result res[NR_FOLIO_MODES];
	struct gup_run run = { .o = o };
	const char *kernel_note;
	char knote[200];
	bool kernel = false;
	int m, err = 0;

	memset(res, 0, sizeof(res));
	run.size = o->size ? o->size : o->quick ? GUP_QUICK_SIZE : GUP_DEFAULT_SIZE;
	run.reps = o->reps ? o->reps : o->quick ? GUP_QUICK_REPS : GUP_DEFAULT_REPS;
	/*
	 * The folio modes (4K, 64K, 1M, 2M PTE- and PMD-mapped) are the
	 * seed's, on 4K pages; a 16K or 64K granule has other sizes.
	 */
	if (pb_page_size() != 4096) {
		fprintf(o->out, "gup: SKIP the seed's folio modes are 4K-page"
			" sizes; this build (%s) has %luK pages\n",
			pb_arch_name(), pb_page_size() >> 10);
		return 0;
	}
	run.page_size = 4096;
	if (run.size % (2UL << 20)) {
		fprintf(stderr, "ptebatch: bench gup: --size must be a multiple"
			" of 2M (a whole PMD of every folio mode)\n");
		return -EINVAL;
	}
	run.nr_pages = run.size / run.page_size;
	run.pages_per_call = GUP_PAGES_PER_CALL < run.nr_pages ? GUP_PAGES_PER_CALL
							       : run.nr_pages;

	if (!(o->backend & BENCH_KERNEL))
		kernel_note = "not run (--backend model)";
	else if (bench_kernel_unavailable(o)) {
		snprintf(knote, sizeof(knote), "SKIP: %s",
			 bench_kernel_unavailable(o));
		kernel_note = knote;
	} else {
		kernel = true;
	}
	if (kernel)
		kernel_note = "io_uring_register_buffers() of the same region,"
			      " iovecs of 16M, same reps; THP sysfs restored"
			      " after each size";
	if (!(o->backend & BENCH_MODEL))
		fprintf(o->out, "(--backend kernel: the model columns are 0)\n");
	gup_method(&run, kernel_note);
	for (m = 0; m < NR_FOLIO_MODES; m++) {
		if (o->backend & BENCH_MODEL) {
			err = gup_floor(&run, &res[m].floor);
			if (!err)
				err = gup_model_mode(&run, m, &res[m]);
			if (err) {
				fprintf(stderr, "\nptebatch: bench gup: model %s: %s\n",
					folio_mode_name(m), strerror(-err));
				break;
			}
		}
		if (kernel)
			gup_kernel_mode(&run, m, &res[m]);
		gup_json(&run, m, &res[m]);
		bench_progress(o, "%s", "");
		gup_table_row(&run, m, &res[m]);
	}
	if (!err && kernel)
		gup_test_table(&run, res);
	if (!err && (o->backend & BENCH_MODEL)) {
		gup_pred_table(&run, res);
		gup_targets(&run, res);
	}
	return err ? err : bench_json_error();
}
