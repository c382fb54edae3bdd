// SPDX-License-Identifier: GPL-2.0-only
/*
 * replay.c: `ptebatch bench replay FILE...` - what batching buys a real
 * program.  A scenario (a recorded trace, examples/traces/) is run whole
 * under every folio configuration - its own mthp lines replaced by the
 * configuration's - times every preset, on the model, and once per
 * configuration on this machine's kernel; the table says, per
 * configuration, the faults, copies, reuses, atomics, PTE accesses and
 * TLB flushes each preset spends on it and how long the model took.
 *
 * The counting is a thin backend around the real one: it passes every
 * call through and adds up each statement's result (faults, the child's
 * too, and the cost counters) and the wall time of its exec.  Start and
 * finish (machine bring-up, teardown) are outside the timing: a short
 * trace would otherwise measure pb_init().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "backend/backend.h"
#include "bench/bench.h"
#include "lib/outfile.h"
#include "scenario/run.h"
#include "scenario/scenario.h"

#define REPLAY_DEFAULT_REPS 5
#define REPLAY_QUICK_REPS 1

/* The model's presets, in the order of the table: least batched first. */
static const char *const presets[] = {
	"baseline", "upstream", "seeds", "seeds+wp_reuse_max=512",
};
#define NR_PRESETS (int)(sizeof(presets) / sizeof(presets[0]))
/* The column kept for the kernel in a configuration's cells. */
#define KERNEL_CELL NR_PRESETS
#define NR_CELLS (NR_PRESETS + 1)

/* The folio configurations, by size; those of no mTHP slot are left out. */
static const unsigned long config_sizes[] = {
	0,			/* the base page: every size never */
	16UL << 10, 64UL << 10, 1UL << 20,
	~0UL,			/* the PMD size: PMD THP always */
};
#define MAX_CONFIGS (int)(sizeof(config_sizes) / sizeof(config_sizes[0]))

struct replay_config {
	char name[24];		/* "4K", "64K", "2M" */
	int slot;		/* the mthp slot set always; -1: none */
};

/* What one run of the trace added up. */
struct replay_totals {
	unsigned long long faults;
	uint64_t stats[PB_NR_STATS];
	double exec_us;
};

struct replay_cell {
	bool have;		/* ran (else skip or failed says why) */
	bool skipped;
	char why[256];		/* the skip or failure reason */
	struct replay_totals tot;	/* of the first run */
	bool faults_vary;	/* a later rep took other faults (kernel) */
	struct bench_stat t;	/* the statements' wall time */
	struct bench_pred pred;	/* model: of the first run's counters */
};

/* ---- the counting backend ------------------------------------------- */

struct counting {
	struct backend base;
	struct backend_ops ops;		/* the inner's name, our calls */
	struct backend *inner;
	struct replay_totals tot;
};

static struct counting *to_counting(struct backend *b)
{
	return (struct counting *)b;
}

/* The inner backend's header fields, as the runner reads them from us. */
static void counting_sync(struct counting *c)
{
	memcpy(c->base.skip_reason, c->inner->skip_reason,
	       sizeof(c->base.skip_reason));
	c->base.variant = c->inner->variant;
	c->base.arch = c->inner->arch;
}

static int counting_start(struct backend *b, const struct scenario *s)
{
	struct counting *c = to_counting(b);
	int ret;

	memset(&c->tot, 0, sizeof(c->tot));
	ret = c->inner->ops->start(c->inner, s);
	counting_sync(c);
	return ret;
}

static void counting_exec(struct backend *b, const struct stmt *st,
			  struct stmt_result *res)
{
	struct counting *c = to_counting(b);
	double t0 = bench_now_us();
	int i;

	c->inner->ops->exec(c->inner, st, res);
	c->tot.exec_us += bench_now_us() - t0;
	/* The record's faults: a failed statement prints none. */
	if (!res->err)
		c->tot.faults += res->faults + res->child_faults;
	if (res->has_stats)
		for (i = 0; i < PB_NR_STATS; i++)
			c->tot.stats[i] += res->stats[i];
}

static int counting_observe(struct backend *b, struct snapshot *snap)
{
	struct counting *c = to_counting(b);

	return c->inner->ops->observe(c->inner, snap);
}

static int counting_finish(struct backend *b)
{
	struct counting *c = to_counting(b);
	int ret = c->inner->ops->finish(c->inner);

	counting_sync(c);
	return ret;
}

static void counting_destroy(struct backend *b)
{
	/* The inner backend is the caller's. */
}

static void counting_init(struct counting *c, struct backend *inner)
{
	memset(c, 0, sizeof(*c));
	c->inner = inner;
	c->ops = (struct backend_ops){
		.name = inner->ops->name,
		.start = counting_start,
		.exec = counting_exec,
		.observe = counting_observe,
		.finish = counting_finish,
		.check = NULL,		/* off: the runs are timed */
		.destroy = counting_destroy,
	};
	c->base.ops = &c->ops;
	counting_sync(c);
}

/* ---- configurations -------------------------------------------------- */

static void size_text(char *buf, size_t len, unsigned long bytes)
{
	if (bytes >= (1UL << 30) && !(bytes % (1UL << 30)))
		snprintf(buf, len, "%luG", bytes >> 30);
	else if (bytes >= (1UL << 20) && !(bytes % (1UL << 20)))
		snprintf(buf, len, "%luM", bytes >> 20);
	else
		snprintf(buf, len, "%luK", bytes >> 10);
}

/*
 * The configurations of a scenario parsed for @page_size: the base page,
 * the mTHP sizes of config_sizes[] that are a slot of that granule, and
 * the PMD size.  Returns how many.
 */
static int replay_configs(unsigned long page_size, struct replay_config *cfg)
{
	int nr_slots = scenario_nr_mthp_sizes(page_size), n = 0, i, j;

	for (i = 0; i < MAX_CONFIGS; i++) {
		unsigned long want = config_sizes[i];
		int slot = -1;

		if (want == ~0UL)
			slot = nr_slots - 1;
		for (j = 0; want && want != ~0UL && j < nr_slots - 1; j++)
			if (scenario_mthp_size_of(page_size, j) == want)
				slot = j;
		if (want && slot < 0)
			continue;
		size_text(cfg[n].name, sizeof(cfg[n].name),
			  slot < 0 ? page_size
				   : scenario_mthp_size_of(page_size, slot));
		cfg[n++].slot = slot;
	}
	return n;
}

/* Replace the scenario's mthp settings by configuration @cfg's. */
static void apply_config(struct scenario *s, const struct replay_config *cfg)
{
	int i;

	for (i = 0; i < SCN_MAX_MTHP_SIZES; i++)
		s->mthp[i] = i == cfg->slot ? SCN_POL_ALWAYS : SCN_POL_NEVER;
}

/* ---- running -------------------------------------------------------- */

/*
 * One run of @s on @inner through the counting backend, the record
 * thrown away.  0, 1 for a SKIP (@why says why) or -errno for a failure
 * (@why holds what the runner said).
 */
static int replay_once(const struct scenario *s, struct backend *inner,
		       FILE *devnull, struct replay_totals *tot, char *why,
		       size_t whylen)
{
	struct counting c;
	char *msg = NULL;
	size_t msglen = 0;
	FILE *err;
	int ret;

	counting_init(&c, inner);
	err = open_memstream(&msg, &msglen);
	if (!err)
		return -ENOMEM;
	ret = scenario_run(s, &c.base, devnull, err, 0);
	fclose(err);
	*tot = c.tot;
	if (ret == SCN_RUN_SKIPPED) {
		snprintf(why, whylen, "%s", c.base.skip_reason);
		ret = 1;
	} else if (ret) {
		/* The runner's first line says where; keep it. */
		snprintf(why, whylen, "%.*s", (int)strcspn(msg ? msg : "", "\n"),
			 msg ? msg : "");
		ret = -EIO;
	}
	free(msg);
	return ret;
}

/*
 * The first run gives the counters, memmap_line's too when @count (the
 * model: it is the prediction's untimed run); each of @reps more is
 * timed, memmap_line not counted.
 */
static void replay_cell_run(const struct scenario *s, struct backend *inner,
			    FILE *devnull, int reps, bool count,
			    struct replay_cell *cell)
{
	double *samples = calloc((size_t)reps, sizeof(*samples));
	struct replay_totals tot;
	int r, ret;

	memset(cell, 0, sizeof(*cell));
	if (!samples) {
		snprintf(cell->why, sizeof(cell->why), "out of memory");
		return;
	}
	/* The model backend counts memmap_line in a run that wants its
	 * counters (model_start()), and only then. */
	inner->want_stats = count;
	ret = replay_once(s, inner, devnull, &cell->tot, cell->why,
			  sizeof(cell->why));
	inner->want_stats = 0;
	for (r = 0; !ret && r < reps; r++) {
		ret = replay_once(s, inner, devnull, &tot, cell->why,
				  sizeof(cell->why));
		samples[r] = tot.exec_us;
		if (tot.faults != cell->tot.faults)
			cell->faults_vary = true;
	}
	cell->skipped = ret == 1;
	cell->have = !ret;
	if (cell->have)
		cell->t = bench_stats(samples, reps);
	free(samples);
}

static int model_cell(const struct bench_opts *o, const struct scenario *s,
		      const char *preset, FILE *devnull, int reps,
		      struct replay_cell *cell)
{
	struct model_options mopt = { .variant_name = preset };
	struct backend *b;
	int ret = pb_variant_from_name(preset, &mopt.variant);

	if (ret)
		return ret;
	b = model_backend_create(&mopt);
	if (!b)
		return -ENOMEM;
	/*
	 * No want_stats but for the first run (replay_cell_run()): the
	 * model reports its counters all the same, and with it the model
	 * counts memmap lines, which the timing would include.
	 */
	replay_cell_run(s, b, devnull, reps, true, cell);
	b->ops->destroy(b);
	if (cell->have)
		bench_predict(o, NULL, cell->tot.stats, &cell->pred);
	return 0;
}

static void kernel_cell(const struct scenario *s, FILE *devnull, int reps,
			struct replay_cell *cell)
{
	struct kernel_options kopt = { 0 };
	struct backend *b = kernel_backend_create(&kopt);

	if (!b) {
		memset(cell, 0, sizeof(*cell));
		snprintf(cell->why, sizeof(cell->why), "out of memory");
		return;
	}
	replay_cell_run(s, b, devnull, reps, false, cell);
	b->ops->destroy(b);
}

/* ---- output --------------------------------------------------------- */

static long long stat_of(const struct replay_cell *c, enum pb_stat id)
{
	return (long long)c->tot.stats[id];
}

static void replay_json(const struct bench_opts *o, const char *trace,
			const struct scenario *s, const char *folio,
			const char *variant, const char *backend,
			const struct replay_cell *c)
{
	struct bench_row r;

	if (!c->have)
		return;
	bench_row_init(&r);
	r.bench = "replay";
	r.folio = folio;
	r.op = "replay";
	r.variant = variant;
	r.backend = backend;
	r.t = c->t;
	r.faults = (long long)c->tot.faults;
	r.extra = json_pack("{s:o, s:i, s:b}", "trace", bench_json_text(trace),
			    "statements", s->nr_stmts,
			    "faults_vary", c->faults_vary);
	if (!strcmp(backend, "model")) {
		r.pred = &c->pred;
		r.folio_ref_atomic = stat_of(c, PB_STAT_folio_ref_atomic);
		r.pincount_atomic = stat_of(c, PB_STAT_pincount_atomic);
		r.tlb_flush = stat_of(c, PB_STAT_tlb_flush);
		if (r.extra && json_object_update_new(r.extra, json_pack(
				"{s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
				"cow_copies", stat_of(c, PB_STAT_fault_wp_copy),
				"wp_reuse_ptes", stat_of(c, PB_STAT_wp_reuse_ptes),
				"wp_reuse_faults",
				stat_of(c, PB_STAT_fault_wp_reuse),
				"mapcount_atomic",
				stat_of(c, PB_STAT_mapcount_atomic),
				"pte_read", stat_of(c, PB_STAT_pte_read),
				"pte_write", stat_of(c, PB_STAT_pte_write),
				"pages_copied", stat_of(c, PB_STAT_folio_copy)))) {
			json_decref(r.extra);
			r.extra = NULL;
		}
	}
	bench_json_row(o, &r);
	json_decref(r.extra);
}

static void print_method(const struct bench_opts *o, const char *trace,
			 const struct scenario *s, int reps, const char *knote)
{
	FILE *out = o->out;

	fprintf(out, "== replay %s: %d statements, %d processes, %d regions\n",
		trace, s->nr_stmts, s->nr_procs, s->nr_regions);
	fprintf(out, "  method: the whole trace on a fresh machine per run, its"
		" mthp lines replaced by the\n"
		"          folio size's: 4K every size never, 16K/64K/1M that"
		" size always and the\n"
		"          rest never, 2M PMD THP always (its hugepage/nohugepage"
		" and madvise kept);\n"
		"          counters of the first run; time: the statements'"
		" wall time (machine\n"
		"          bring-up and teardown excluded), median of %d"
		" rep%s after it, checker off\n", reps, reps == 1 ? "" : "s");
	fprintf(out, "  columns: faults (children's included); cow ="
		" fault_wp_copy, write faults that\n"
		"          copied; reused = wp_reuse_ptes, PTEs made writable"
		" by reusing an exclusive\n"
		"          folio; ref/map/pin = folio refcount, mapcount,"
		" pincount atomics; pte_rd,\n"
		"          pte_wr = page-table loads, stores; tlb = TLB flush"
		" operations; arch %s\n", pb_arch_name());
	fprintf(out, "  kernel: %s\n", knote);
	bench_print_calibration(o, out, "  ");
	if (o->calib)
		fprintf(out, "  pred_ms = the predicted kernel time of the"
			" statements, from the first run's counters\n");
}

static void print_header(FILE *out, bool pred)
{
	fprintf(out, "%-5s %-23s %9s %7s %7s %9s %9s %7s %9s %9s %7s %10s",
		"folio", "variant", "faults", "cow", "reused", "ref", "map",
		"pin", "pte_rd", "pte_wr", "tlb", "time_ms");
	if (pred)
		fprintf(out, " %10s", "pred_ms");
	fputc('\n', out);
}

static void print_row(FILE *out, const struct bench_opts *o,
		      const char *folio, const char *variant,
		      const struct replay_cell *c, bool kernel)
{
	char pred[32];

	fprintf(out, "%-5s %-23s ", folio, variant);
	if (!c->have) {
		fprintf(out, "%s: %s\n", c->skipped ? "SKIP" : "FAILED", c->why);
		return;
	}
	fprintf(out, "%8llu%s ", c->tot.faults, c->faults_vary ? "~" : " ");
	if (kernel)
		fprintf(out, "%7s %7s %9s %9s %7s %9s %9s %7s ", "-", "-", "-",
			"-", "-", "-", "-", "-");
	else
		fprintf(out, "%7lld %7lld %9lld %9lld %7lld %9lld %9lld %7lld ",
			stat_of(c, PB_STAT_fault_wp_copy),
			stat_of(c, PB_STAT_wp_reuse_ptes),
			stat_of(c, PB_STAT_folio_ref_atomic),
			stat_of(c, PB_STAT_mapcount_atomic),
			stat_of(c, PB_STAT_pincount_atomic),
			stat_of(c, PB_STAT_pte_read),
			stat_of(c, PB_STAT_pte_write),
			stat_of(c, PB_STAT_tlb_flush));
	fprintf(out, "%10.3f", c->t.median_us / 1e3);
	if (o->calib) {
		bench_pred_text(pred, sizeof(pred), &c->pred, 1e-3, 3);
		fprintf(out, " %10s", pred);
	}
	fputc('\n', out);
}

static unsigned long long atomics(const struct replay_cell *c)
{
	return c->tot.stats[PB_STAT_folio_ref_atomic] +
	       c->tot.stats[PB_STAT_mapcount_atomic] +
	       c->tot.stats[PB_STAT_pincount_atomic];
}

static double ratio(double x, double base)
{
	return base > 0 ? x / base : 1.0;
}

/* What the most batched preset buys over baseline, in one line. */
static void print_ratio(FILE *out, const char *folio,
			const struct replay_cell *cells)
{
	const struct replay_cell *b = &cells[0], *x = &cells[NR_PRESETS - 1];
	char pred[32];

	if (!b->have || !x->have)
		return;
	bench_pred_ratio_text(pred, sizeof(pred), &x->pred, &b->pred, 2);
	fprintf(out, "  %-4s faults %.2fx, atomics %.2fx, PTE reads %.2fx,"
		" time %.2fx%s%s%s\n", folio,
		ratio((double)x->tot.faults, (double)b->tot.faults),
		ratio((double)atomics(x), (double)atomics(b)),
		ratio((double)x->tot.stats[PB_STAT_pte_read],
		      (double)b->tot.stats[PB_STAT_pte_read]),
		ratio(x->t.median_us, b->t.median_us),
		x->pred.have ? ", predicted kernel time " : "",
		x->pred.have ? pred : "", x->pred.have ? "x" : "");
}

/* ---- the benchmark -------------------------------------------------- */

static int replay_trace(const struct bench_opts *o, const char *trace,
			struct scenario *s, FILE *devnull)
{
	struct replay_cell (*cells)[NR_CELLS] = calloc(MAX_CONFIGS,
						       sizeof(*cells));
	struct replay_config cfg[MAX_CONFIGS];
	int reps = o->reps > 0 ? o->reps : o->quick ? REPLAY_QUICK_REPS
						    : REPLAY_DEFAULT_REPS;
	const char *knot = bench_kernel_unavailable(o);
	int nr_configs, i, j, err = 0;
	struct bench_pred preds[MAX_CONFIGS * NR_PRESETS];
	bool failed = false;
	char knote[300];
	size_t n = 0;

	if (!cells)
		return -ENOMEM;
	nr_configs = replay_configs(s->page_size, cfg);
	if (knot)
		snprintf(knote, sizeof(knote), "not run: %s", knot);
	else
		snprintf(knote, sizeof(knote), "the same trace and THP settings"
			 " on real processes, one row per folio size\n"
			 "          (the kernel has no preset); faults = their"
			 " ru_minflt (~: not the same in every rep); same reps");
	print_method(o, trace, s, reps, knote);
	print_header(o->out, o->calib);
	for (i = 0; i < nr_configs && !err; i++) {
		apply_config(s, &cfg[i]);
		for (j = 0; j < NR_PRESETS && (o->backend & BENCH_MODEL); j++) {
			bench_progress(o, "replay %s: %s %s", trace, cfg[i].name,
				       presets[j]);
			err = model_cell(o, s, presets[j], devnull, reps,
					 &cells[i][j]);
			if (err)
				break;
			/* The model runs every trace: a row it fails is a
			 * failed benchmark, after the others are measured. */
			if (!cells[i][j].have)
				failed = true;
			bench_progress(o, "%s", "");
			print_row(o->out, o, cfg[i].name, presets[j],
				  &cells[i][j], false);
			replay_json(o, trace, s, cfg[i].name, presets[j],
				    "model", &cells[i][j]);
		}
		if (err || knot)
			continue;
		bench_progress(o, "replay %s: %s kernel", trace, cfg[i].name);
		kernel_cell(s, devnull, reps, &cells[i][KERNEL_CELL]);
		bench_progress(o, "%s", "");
		print_row(o->out, o, cfg[i].name, "kernel",
			  &cells[i][KERNEL_CELL], true);
		replay_json(o, trace, s, cfg[i].name, "kernel", "kernel",
			    &cells[i][KERNEL_CELL]);
	}
	if (!err && (o->backend & BENCH_MODEL)) {
		fprintf(o->out, "  what batching buys: %s / baseline, in the"
			" same run (atomics: ref + map + pin)\n",
			presets[NR_PRESETS - 1]);
		for (i = 0; i < nr_configs; i++) {
			print_ratio(o->out, cfg[i].name, cells[i]);
			for (j = 0; j < NR_PRESETS; j++)
				preds[n++] = cells[i][j].pred;
		}
		bench_print_pred_notes(o, o->out, "  ", preds, n);
	}
	free(cells);
	return err ? err : failed ? -EIO : 0;
}

int bench_replay(const struct bench_opts *o)
{
	FILE *devnull = outfile_sink();
	int i, err = 0;

	if (!devnull)
		return -errno;
	for (i = 0; i < o->nr_traces && !err; i++) {
		if (i)
			fputc('\n', o->out);
		err = replay_trace(o, o->trace_names[i], o->traces[i], devnull);
		fflush(o->out);
	}
	fclose(devnull);
	return err ? err : bench_json_error();
}
