// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_calibrate.c - calibrate/: the non-negative least-squares fit on
 * synthetic statements with known costs, and the calibration file
 * written, read back, and refused when it is wrong.  Every data set is
 * made from a fixed seed; nothing is timed.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "calibrate/calib.h"
#include "calibrate/nnls.h"
#include "tests/unit/fixture.h"

/* A data set: m statements of n counters, their times and weights. */
struct dataset {
	size_t m, n;
	double *a, *t, *w;
};

static void dataset_free(struct dataset *d)
{
	free(d->a);
	free(d->t);
	free(d->w);
}

/* How a synthetic statement's time is disturbed. */
enum noise { NOISE_ADD, NOISE_REL };

/*
 * @m statements: counter j uniform in [0, @scale[j]], times the exact
 * sum of counts x @cost plus Gaussian noise - absolute (@sigma us) or
 * relative (@sigma of the time) - and weights 1/t^2 for the relative.
 */
static void dataset_make(struct dataset *d, unsigned long seed, size_t m,
			 size_t n, const double *scale, const double *cost,
			 enum noise noise, double sigma)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	size_t i, j;
	double exact;

	gsl_rng_set(rng, seed);
	d->m = m;
	d->n = n;
	d->a = calloc(m * n, sizeof(*d->a));
	d->t = calloc(m, sizeof(*d->t));
	d->w = calloc(m, sizeof(*d->w));
	for (i = 0; i < m; i++) {
		exact = 0;
		for (j = 0; j < n; j++) {
			d->a[i * n + j] =
				gsl_rng_uniform_int(rng, (unsigned long)scale[j] + 1);
			exact += d->a[i * n + j] * cost[j];
		}
		if (noise == NOISE_ADD)
			d->t[i] = exact + gsl_ran_gaussian(rng, sigma);
		else
			d->t[i] = exact * (1 + gsl_ran_gaussian(rng, sigma));
		d->w[i] = d->t[i] != 0 ? 1 / (d->t[i] * d->t[i]) : 0;
	}
	gsl_rng_free(rng);
}

/*
 * The Karush-Kuhn-Tucker conditions of the fit, which say it is the
 * minimum: no cost below 0, the weighted gradient a_j^T W r zero on the
 * fitted costs and not positive on those held at 0 (each scaled by its
 * column's and the times' norms), and the residuals t - a x.
 */
static bool fit_is_optimal(const struct dataset *d, const double *w,
			   const struct nnls_fit *f)
{
	double tnorm = 0, g, cn, pred;
	size_t i, j;
	bool ok = true;

	for (i = 0; i < d->m; i++)
		tnorm += (w ? w[i] : 1) * d->t[i] * d->t[i];
	tnorm = sqrt(tnorm);
	for (i = 0; i < d->m; i++) {
		pred = 0;
		for (j = 0; j < d->n; j++)
			pred += d->a[i * d->n + j] * f->cost[j];
		if (fabs(d->t[i] - pred - f->residual[i]) >
		    1e-9 * (1 + fabs(d->t[i]))) {
			tap_diag("residual %zu is %g, not %g", i,
				 f->residual[i], d->t[i] - pred);
			ok = false;
		}
	}
	for (j = 0; j < d->n; j++) {
		g = cn = 0;
		for (i = 0; i < d->m; i++) {
			g += (w ? w[i] : 1) * d->a[i * d->n + j] * f->residual[i];
			cn += (w ? w[i] : 1) * d->a[i * d->n + j] * d->a[i * d->n + j];
		}
		if (cn == 0)
			continue;
		g /= sqrt(cn) * tnorm;
		if (f->cost[j] < 0 ||
		    (f->state[j] == NNLS_FITTED && fabs(g) > 1e-8) ||
		    (f->state[j] == NNLS_AT_ZERO && g > 1e-8)) {
			tap_diag("cost %zu = %g (%s): scaled gradient %g", j,
				 f->cost[j], nnls_cost_state_name(f->state[j]), g);
			ok = false;
		}
	}
	return ok;
}

/* ---- small exact problems ----------------------------------------------- */

/*
 *	| 1 0 |       | 2 |
 *	| 1 0 | x  ~  | 1 |   x = (1.5, 1): the textbook answer (the two
 *	| 0 1 |       | 1 |   first rows disagree, the mean wins)
 */
static void test_textbook(void)
{
	double a[] = { 1, 0, 1, 0, 0, 1 }, t[] = { 2, 1, 1 };
	double neg[] = { -1, -1, -1 };
	struct dataset d = { .m = 3, .n = 2, .a = a, .t = t };
	struct nnls_fit f;

	tap_ok(nnls_solve(a, 3, 2, t, NULL, &f) == 0 &&
	       fabs(f.cost[0] - 1.5) < 1e-12 && fabs(f.cost[1] - 1) < 1e-12 &&
	       f.state[0] == NNLS_FITTED && f.state[1] == NNLS_FITTED &&
	       f.converged && fit_is_optimal(&d, NULL, &f),
	       "textbook 3x2: costs (1.5, 1)");
	nnls_fit_free(&f);

	/* Every time negative: the best non-negative costs are both 0. */
	d.t = neg;
	tap_ok(nnls_solve(a, 3, 2, neg, NULL, &f) == 0 &&
	       f.cost[0] == 0 && f.cost[1] == 0 &&
	       f.state[0] == NNLS_AT_ZERO && f.state[1] == NNLS_AT_ZERO &&
	       f.stderr_cost[0] == 0 && f.passive == 0 &&
	       fit_is_optimal(&d, NULL, &f),
	       "negative times: both costs held at 0, no standard error");
	nnls_fit_free(&f);
}

static void test_bad_input(void)
{
	double a[] = { 1, 0, 1, 0, 0, 1 }, t[] = { 2, 1, 1 };
	double w[] = { 1, -1, 1 }, nan_t[] = { 2, NAN, 1 };
	struct nnls_fit f;

	tap_ok(nnls_solve(a, 2, 3, t, NULL, &f) == -EINVAL,
	       "fewer statements than counters: -EINVAL");
	tap_ok(nnls_solve(a, 3, 2, nan_t, NULL, &f) == -EINVAL,
	       "a time that is NaN: -EINVAL");
	tap_ok(nnls_solve(a, 3, 2, t, w, &f) == -EINVAL,
	       "a negative weight: -EINVAL");
}

/* ---- synthetic statements with known costs ------------------------------ */

/*
 * Six counters of very different ranges (a page count in thousands, a
 * flush count of a few), one whose true cost is 0.
 */
static const double syn_scale[6] = { 50, 2000, 10, 500, 5, 100 };
static const double syn_cost[6] = { 0.8, 0.02, 3.0, 0.0, 12.0, 0.4 };
#define SYN_ZERO	3
#define SYN_REL_TOL	0.05	/* each nonzero cost within 5% */
#define SYN_ZERO_TOL	0.005	/* the zero cost within 0.005 us (a 500-count
				   statement: 2.5 us of ~100) */

static bool costs_recovered(const struct nnls_fit *f, const double *cost,
			    size_t n)
{
	bool ok = true;
	size_t j;

	for (j = 0; j < n; j++) {
		double tol = cost[j] ? SYN_REL_TOL * cost[j] : SYN_ZERO_TOL;

		if (f->cost[j] < 0 || fabs(f->cost[j] - cost[j]) > tol) {
			tap_diag("cost %zu: %g, true %g (tolerance %g)", j,
				 f->cost[j], cost[j], tol);
			ok = false;
		}
	}
	return ok;
}

static void test_synthetic(void)
{
	struct dataset d;
	struct nnls_fit f;
	size_t j;
	bool se_ok = true;

	/* ~100 us statements, 1 us of absolute noise */
	dataset_make(&d, 15, 200, 6, syn_scale, syn_cost, NOISE_ADD, 1.0);
	if (!tap_ok(nnls_solve(d.a, d.m, d.n, d.t, NULL, &f) == 0,
		    "synthetic 200x6, additive noise: fitted"))
		return;
	tap_ok(costs_recovered(&f, syn_cost, 6),
	       "every cost within 5%%, the zero one within %g us", SYN_ZERO_TOL);
	tap_ok(f.cost[SYN_ZERO] >= 0, "the true-zero cost is not negative "
	       "(%g, %s)", f.cost[SYN_ZERO],
	       nnls_cost_state_name(f.state[SYN_ZERO]));
	for (j = 0; j < 6; j++) {
		if (f.state[j] != NNLS_FITTED)
			continue;
		/* the error must be honest: the truth within 4 of them */
		if (!(f.stderr_cost[j] > 0) ||
		    fabs(f.cost[j] - syn_cost[j]) > 4 * f.stderr_cost[j])
			se_ok = false;
		tap_diag("cost %zu: %.5f +- %.5f (true %.5f)", j, f.cost[j],
			 f.stderr_cost[j], syn_cost[j]);
	}
	tap_ok(se_ok, "fitted costs have standard errors, the truth within 4");
	tap_ok(f.r2 > 0.99 && f.median_abs_rel_err < 0.05 &&
	       f.median_abs_rel_err > 0,
	       "R^2 %.4f > 0.99, median relative error %.4f < 0.05", f.r2,
	       f.median_abs_rel_err);
	tap_ok(fit_is_optimal(&d, NULL, &f) && f.converged &&
	       !f.rank_deficient && f.rank_all == 6,
	       "the fit satisfies the optimality conditions, full rank");
	nnls_fit_free(&f);
	dataset_free(&d);

	/* 2% relative noise, weighted 1/t^2 */
	dataset_make(&d, 1515, 200, 6, syn_scale, syn_cost, NOISE_REL, 0.02);
	tap_ok(nnls_solve(d.a, d.m, d.n, d.t, d.w, &f) == 0 &&
	       costs_recovered(&f, syn_cost, 6) &&
	       fit_is_optimal(&d, d.w, &f),
	       "weighted 1/t^2, relative noise: every cost recovered, optimal");
	nnls_fit_free(&f);
	dataset_free(&d);
}

/*
 * A counter whose unconstrained cost would be negative (times made with
 * -0.5 us per count of counter 1): held at exactly 0, not fitted below.
 */
static void test_negative_truth(void)
{
	static const double cost[3] = { 1.0, -0.5, 2.0 };
	static const double scale[3] = { 100, 100, 20 };
	struct dataset d;
	struct nnls_fit f;

	dataset_make(&d, 7, 100, 3, scale, cost, NOISE_ADD, 0.1);
	if (!tap_ok(nnls_solve(d.a, d.m, d.n, d.t, NULL, &f) == 0,
		    "negative true cost: fitted")) {
		dataset_free(&d);
		return;
	}
	tap_ok(f.cost[1] == 0 && f.state[1] == NNLS_AT_ZERO &&
	       f.stderr_cost[1] == 0 && f.cost[0] > 0 && f.cost[2] > 0 &&
	       fit_is_optimal(&d, NULL, &f),
	       "a negative true cost is held at exactly 0 (others %g, %g)",
	       f.cost[0], f.cost[2]);
	nnls_fit_free(&f);
	dataset_free(&d);
}

/* A counter that never moved: cost 0, reported unidentifiable. */
static void test_zero_column(void)
{
	static const double scale[4] = { 50, 0, 10, 100 };
	static const double cost[4] = { 0.8, 5.0, 3.0, 0.4 };
	static const double want[4] = { 0.8, 0.0, 3.0, 0.4 };
	struct dataset d;
	struct nnls_fit f;

	dataset_make(&d, 99, 150, 4, scale, cost, NOISE_ADD, 0.5);
	tap_ok(nnls_solve(d.a, d.m, d.n, d.t, NULL, &f) == 0 &&
	       f.state[1] == NNLS_UNIDENTIFIABLE && f.cost[1] == 0 &&
	       f.stderr_cost[1] == 0 && costs_recovered(&f, want, 4) &&
	       f.state[0] == NNLS_FITTED,
	       "an all-zero column is unidentifiable, cost 0; the others "
	       "recovered");
	nnls_fit_free(&f);
	dataset_free(&d);
}

/*
 * Two counters that always move together (a copy, then a double): no
 * crash, both reported collinear, every cost finite and >= 0, and the
 * pair's combined cost right.  The active set takes in one of the two
 * and then sees no gradient on the other, so its passive set stays of
 * full rank; GSL's truncated SVD is the guard should rounding let both
 * in (rank_deficient).
 */
static void test_collinear(void)
{
	static const double scale[3] = { 50, 0, 10 };
	static const double cost[3] = { 0.8, 0, 3.0 };
	double factor[] = { 1, 2 }, pair;
	struct dataset d;
	struct nnls_fit f;
	size_t i, k;

	for (k = 0; k < 2; k++) {
		dataset_make(&d, 42, 120, 3, scale, cost, NOISE_ADD, 0.2);
		for (i = 0; i < d.m; i++)
			d.a[i * 3 + 1] = factor[k] * d.a[i * 3 + 0];
		if (!tap_ok(nnls_solve(d.a, d.m, d.n, d.t, NULL, &f) == 0,
			    "collinear pair (x%g): fitted", factor[k])) {
			dataset_free(&d);
			continue;
		}
		pair = f.cost[0] + factor[k] * f.cost[1];
		tap_ok(f.collinear[0] && f.collinear[1] && !f.collinear[2] &&
		       f.rank_all == 2 && !f.rank_deficient &&
		       isfinite(f.stderr_cost[0]) && isfinite(f.stderr_cost[1]) &&
		       f.cost[0] >= 0 && f.cost[1] >= 0 &&
		       fabs(pair - 0.8) < 0.8 * SYN_REL_TOL &&
		       fabs(f.cost[2] - 3.0) < 3.0 * SYN_REL_TOL &&
		       fit_is_optimal(&d, NULL, &f),
		       "collinear pair (x%g): reported (rank %zu of 3), the "
		       "pair's cost %g + %g x %g right", factor[k], f.rank_all,
		       f.cost[0], factor[k], f.cost[1]);
		nnls_fit_free(&f);
		dataset_free(&d);
	}
}

/* ---- the calibration file ----------------------------------------------- */

static const struct calib_machine test_machine = {
	.arch = "x86_64", .kernel = "6.1.0-test",
	.cpu = "Model \"CPU\" \\ 2.0GHz", .cores = 2,
	.date = "2026-12-03T10:00:00Z",
};

/* Columns of the synthetic data, as counters. */
static const enum pb_stat syn_cols[6] = {
	PB_STAT_fault_anon, PB_STAT_pte_write, PB_STAT_tlb_flush,
	PB_STAT_pte_read, PB_STAT_folio_copy, PB_STAT_mapcount_atomic,
};

static bool calib_equal(const struct calibration *x,
			const struct calibration *y)
{
	size_t i;

	if (memcmp(&x->machine, &y->machine, sizeof(x->machine)) ||
	    x->nr_residuals != y->nr_residuals || x->r2 != y->r2 ||
	    x->median_abs_rel_err != y->median_abs_rel_err)
		return false;
	for (i = 0; i < PB_NR_STATS; i++) {
		if (x->cost[i].present != y->cost[i].present ||
		    (x->cost[i].present &&
		     (x->cost[i].value != y->cost[i].value ||
		      x->cost[i].error != y->cost[i].error ||
		      x->cost[i].state != y->cost[i].state)))
			return false;
	}
	for (i = 0; i < x->nr_residuals; i++)
		if (x->residual[i] != y->residual[i])
			return false;
	return true;
}

/*
 * @c as a guest's calibration: its file says "insns", keys its costs by
 * it and reads back to the very same values; what they predict is in us,
 * a thousandth of the same numbers in us.
 */
static void test_insns_round_trip(struct t_tmpdir *dir, struct calibration *c,
				  const uint64_t count[PB_NR_STATS])
{
	struct calibration back;
	char path[512], err[512], *text;
	enum pb_stat missing;
	double us, insns_us;
	size_t len;
	int fd;

	calib_predict(c, count, &us, &missing);
	c->machine.unit = CALIB_UNIT_INSNS;
	t_tmpdir_path(dir, "insns.json", path, sizeof(path));
	err[0] = '\0';
	tap_ok(calib_write_file(path, c, err, sizeof(err)) == 0 &&
	       calib_read_file(path, &back, err, sizeof(err)) == 0,
	       "insns: written and read back %s", err);
	fd = open(path, O_RDONLY);
	text = fd < 0 ? NULL : t_read_all(fd, &len);
	if (fd >= 0)
		close(fd);
	tap_ok(text && strstr(text, "\"unit\": \"insns\"") &&
	       strstr(text, "\"insns\": ") && !strstr(text, "\"us\": "),
	       "insns: the file names its unit and keys its costs by it");
	free(text);
	tap_ok(back.machine.unit == CALIB_UNIT_INSNS && calib_equal(c, &back),
	       "insns: write then read: every value exactly");
	calib_predict(&back, count, &insns_us, &missing);
	tap_ok(fabs(insns_us * 1000 - us) <= 1e-9 * fmax(1, us),
	       "insns: predicts in us, 1000 instructions each (%g, %g)",
	       insns_us, us);
	calib_free(&back);
	c->machine.unit = CALIB_UNIT_US;
}

static void test_round_trip(struct t_tmpdir *dir)
{
	struct calibration c, back;
	uint64_t count[PB_NR_STATS] = { 0 };
	char path[512], err[512];
	struct dataset d;
	struct nnls_fit f;
	enum pb_stat missing;
	double us, want;
	size_t j;
	int ret;

	dataset_make(&d, 15, 200, 6, syn_scale, syn_cost, NOISE_ADD, 1.0);
	if (nnls_solve(d.a, d.m, d.n, d.t, NULL, &f) ||
	    calib_from_fit(&c, &test_machine, syn_cols, &f)) {
		tap_ok(false, "calibration from a fit");
		dataset_free(&d);
		return;
	}
	t_tmpdir_path(dir, "good.json", path, sizeof(path));
	err[0] = '\0';
	tap_ok(calib_write_file(path, &c, err, sizeof(err)) == 0,
	       "written %s", err);
	tap_ok(calib_read_file(path, &back, err, sizeof(err)) == 0,
	       "read back %s", err);
	tap_ok(calib_equal(&c, &back),
	       "write then read: every field, every double exactly");

	/* the first statement's counters predict its time less its residual */
	want = 0;
	for (j = 0; j < 6; j++) {
		count[syn_cols[j]] = d.a[j];
		want += d.a[j] * f.cost[j];
	}
	ret = calib_predict(&back, count, &us, &missing);
	tap_ok(ret == 0 && fabs(us - want) < 1e-9 && fabs(us - (d.t[0] - f.residual[0])) < 1e-9,
	       "prediction %g us = counters x costs (%g)", us, want);
	count[PB_STAT_pmd_split] = 1;
	ret = calib_predict(&back, count, &us, &missing);
	tap_ok(ret == -ENOENT &&
	       missing == PB_STAT_pmd_split && fabs(us - want) < 1e-9,
	       "a counter with no cost: -ENOENT naming it, the rest a bound");
	/* one the fit never saw move has a cost of 0 that means "unknown" */
	count[PB_STAT_pmd_split] = 0;
	back.cost[PB_STAT_contpte_convert] = (struct calib_cost){
		.present = true, .state = NNLS_UNIDENTIFIABLE,
	};
	count[PB_STAT_contpte_convert] = 3;
	ret = calib_predict(&back, count, &us, &missing);
	tap_ok(ret == -ENOENT && missing == PB_STAT_contpte_convert &&
	       fabs(us - want) < 1e-9,
	       "an unidentifiable counter that moved: -ENOENT naming it too");
	calib_free(&back);
	test_insns_round_trip(dir, &c, count);
	calib_free(&c);
	nnls_fit_free(&f);
	dataset_free(&d);
}

#define GOOD_MACHINE \
	"\"machine\": {\"arch\": \"x86_64\", \"kernel\": \"6.1\", \"cpu\": \"x\", \"cores\": 2, " \
	"\"date\": \"2026-12-03\"}"
#define GOOD_FIT "\"fit\": {\"r2\": 0.9, \"median_abs_rel_err\": 0.1}"
#define COST(name, us) \
	"{\"counter\": \"" name "\", \"us\": " us ", \"stderr\": 0.01, " \
	"\"state\": \"fitted\"}"
#define CALIB(costs) \
	"{\"version\": 1, " GOOD_MACHINE ", \"costs\": [" costs "], " \
	"\"residuals\": [0.5, -0.25], " GOOD_FIT "}\n"

/* One malformed calibration file each, and what its error must say. */
static const struct {
	const char *name;
	const char *text;	/* NULL: the good file cut in half */
	const char *want;	/* in the error, after "PATH" (truncated: "PATH:L:C") */
} bad_files[] = {
	{ "not JSON", "stat fault_anon 3\n", ":1:4: not JSON: '[' or '{' expected" },
	{ "truncated", NULL, ": not JSON: " },
	{ "empty", "", ":1:0: not JSON" },
	{ "top level an array", "[1, 2]\n", ": the top level is not an object" },
	{ "missing costs",
	  "{\"version\": 1, " GOOD_MACHINE ", \"residuals\": [], " GOOD_FIT "}",
	  ": missing field 'costs'" },
	{ "missing machine.cores",
	  "{\"version\": 1, \"machine\": {\"arch\": \"x86_64\", \"kernel\": \"6.1\", \"cpu\": \"x\", "
	  "\"date\": \"d\"}, \"costs\": [" COST("fault", "1") "], "
	  "\"residuals\": [], " GOOD_FIT "}",
	  ": missing field 'machine.cores'" },
	{ "negative cost", CALIB(COST("fault", "1") ", " COST("fault_anon", "-0.5")),
	  ": costs[1]: negative cost -0.5 us for 'fault_anon'" },
	{ "unknown counter", CALIB(COST("fault_bogus", "1")),
	  ": costs[0]: unknown counter 'fault_bogus'" },
	{ "counter twice", CALIB(COST("fault", "1") ", " COST("fault", "2")),
	  ": costs[1]: counter 'fault' given twice" },
	{ "no costs", CALIB(""), ": 'costs' is empty" },
	{ "cost a string", CALIB(COST("fault", "\"1\"")),
	  ": 'costs[0].us' is not a number" },
	{ "unknown field",
	  "{\"version\": 1, \"extra\": 0, " GOOD_MACHINE ", \"costs\": ["
	  COST("fault", "1") "], \"residuals\": [], " GOOD_FIT "}",
	  ": unknown field 'extra'" },
	{ "version 3",
	  "{\"version\": 3, " GOOD_MACHINE ", \"costs\": [" COST("fault", "1")
	  "], \"residuals\": [], " GOOD_FIT "}",
	  ": version 3, but this ptebatch reads versions 1 and 2" },
	{ "version 2 without a unit",
	  "{\"version\": 2, " GOOD_MACHINE ", \"costs\": [" COST("fault", "1")
	  "], \"residuals\": [], " GOOD_FIT "}",
	  ": missing field 'unit'" },
	{ "an unknown unit",
	  "{\"version\": 2, \"unit\": \"ms\", " GOOD_MACHINE ", \"costs\": ["
	  COST("fault", "1") "], \"residuals\": [], " GOOD_FIT "}",
	  ": unknown unit 'ms' (us or insns)" },
	{ "insns costs keyed us",
	  "{\"version\": 2, \"unit\": \"insns\", " GOOD_MACHINE ", \"costs\": ["
	  COST("fault", "1") "], \"residuals\": [], " GOOD_FIT "}",
	  ": missing field 'costs[0].insns'" },
	{ "held at zero with a cost",
	  CALIB("{\"counter\": \"fault\", \"us\": 1, \"stderr\": 0, "
		"\"state\": \"at_zero\"}"),
	  ": costs[0]: 'fault' is at_zero but its cost is 1, not 0" },
	{ "duplicate key",
	  "{\"version\": 1, \"version\": 1}", ":1:24: not JSON: duplicate object key" },
};

static void test_bad_files(struct t_tmpdir *dir)
{
	char path[512], good[512], err[512], want[600], *text = NULL;
	struct calibration c;
	size_t i, len;
	FILE *f;
	int ret;

	/* the whole good file, to cut in half */
	t_tmpdir_path(dir, "good.json", good, sizeof(good));
	f = fopen(good, "r");
	if (f) {
		text = t_read_all(fileno(f), &len);
		fclose(f);
	}
	if (!text) {
		tap_ok(false, "read %s back", good);
		return;
	}

	for (i = 0; i < sizeof(bad_files) / sizeof(bad_files[0]); i++) {
		char rel[32];

		snprintf(rel, sizeof(rel), "bad%zu.json", i);
		t_tmpdir_path(dir, rel, path, sizeof(path));
		if (bad_files[i].text)
			t_tmpdir_put(dir, rel, bad_files[i].text);
		else
			t_tmpdir_write(dir, rel, text, len / 2);
		err[0] = '\0';
		ret = calib_read_file(path, &c, err, sizeof(err));
		if (bad_files[i].text)
			snprintf(want, sizeof(want), "%s%s", path,
				 bad_files[i].want);
		else
			snprintf(want, sizeof(want), "%s", bad_files[i].want);
		tap_ok(ret == -EINVAL && !strncmp(err, path, strlen(path)) &&
		       strstr(err, want),
		       "%s: refused: %s", bad_files[i].name, err);
		if (!strstr(err, want))
			tap_diag("wanted: %s", want);
	}
	free(text);

	t_tmpdir_path(dir, "absent.json", path, sizeof(path));
	ret = calib_read_file(path, &c, err, sizeof(err));
	snprintf(want, sizeof(want), "%s: cannot open: ", path);
	tap_ok(ret == -ENOENT && !strncmp(err, want, strlen(want)),
	       "a missing file: -ENOENT, %s", err);
}

int main(void)
{
	struct t_tmpdir dir;

	test_textbook();
	test_bad_input();
	test_synthetic();
	test_negative_truth();
	test_zero_column();
	test_collinear();
	if (t_tmpdir_make(&dir, "test_calibrate")) {
		test_round_trip(&dir);
		test_bad_files(&dir);
		t_tmpdir_remove(&dir);
	} else {
		tap_ok(false, "a temporary directory");
	}
	return tap_done();
}
