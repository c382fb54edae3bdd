/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * calibrate/ - the model's cost counters turned into a prediction of the
 * kernel's time: one cost per counter fitted by non-negative least
 * squares over timed statements (nnls.c), kept in a calibration file
 * (calib.c) and applied to a statement's counters.
 *
 * nnls.h: the fit.  Lawson and Hanson's active-set algorithm ("Solving
 * Least Squares Problems", 1974, ch. 23), with every least-squares solve
 * on the passive set done by GSL's SVD-based gsl_multifit_wlinear_tsvd.
 */
#ifndef CALIBRATE_NNLS_H
#define CALIBRATE_NNLS_H

#include <stdbool.h>
#include <stddef.h>

/* What the fit could say about one cost. */
enum nnls_cost_state {
	NNLS_FITTED,		/* in the final passive set: estimated, with a standard error */
	NNLS_AT_ZERO,		/* held at 0 by the constraint: no standard error */
	NNLS_UNIDENTIFIABLE,	/* its column is all zero (or weighted to zero): cost 0 */
};

struct nnls_fit {
	size_t m, n;			/* rows (statements), columns (counters) */
	double *cost;			/* [n], every one >= 0 */
	double *stderr_cost;		/* [n], 0 unless NNLS_FITTED */
	enum nnls_cost_state *state;	/* [n] */
	/*
	 * [n]: the column is in a linear dependency among the non-zero
	 * columns (two counters that always move together, or in the same
	 * ratio): the fit splits their cost one way among many equally good
	 * ones - the active set usually gives it all to one - and only their
	 * combination is identified.
	 */
	bool *collinear;
	size_t rank_all;		/* the rank of all the non-zero columns */
	double *residual;		/* [m]: measured - predicted */
	double r2;			/* 1 - SS_res / SS_tot about the mean time */
	double median_abs_rel_err;	/* median of |residual| / time, over times != 0 */
	size_t passive;			/* columns in the final passive set */
	size_t rank;			/* their numerical rank (GSL's truncated SVD) */
	bool rank_deficient;		/* rank < passive: GSL's minimum-norm split */
	bool converged;			/* false: stopped at the iteration limit */
	unsigned iterations;		/* columns entered into the passive set */
};

/*
 * Fit @a (@m rows by @n columns, row-major: a[i * n + j] is counter j of
 * statement i) to @t (@m times) minimising sum_i w_i (t_i - (a x)_i)^2
 * over x >= 0; @w may be NULL (every weight 1), else @m weights >= 0
 * (relative error: w_i = 1 / t_i^2).  Needs m >= 1, n >= 1, and every
 * value finite.  0, with @fit filled (free it with nnls_fit_free()), or
 * -EINVAL (bad input) or -ENOMEM; a GSL failure is -EDOM.
 */
int nnls_solve(const double *a, size_t m, size_t n, const double *t,
	       const double *w, struct nnls_fit *fit);
void nnls_fit_free(struct nnls_fit *fit);

const char *nnls_cost_state_name(enum nnls_cost_state s);

#endif /* CALIBRATE_NNLS_H */
