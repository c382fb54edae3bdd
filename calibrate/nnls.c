// SPDX-License-Identifier: GPL-2.0-only
/*
 * calibrate/ - the model's cost counters turned into a prediction of the
 * kernel's time (nnls.h says how the pieces fit).
 *
 * nnls.c: Lawson-Hanson non-negative least squares on GSL.  GSL fits
 * linear least squares but knows no bounds; the active-set loop is here,
 * and every solve on the passive set, every product and every norm is
 * GSL's.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_vector.h>

#include "calibrate/nnls.h"

/*
 * Singular values below this fraction of the largest (after GSL balances
 * the columns) are truncated: two columns that are the same counter in
 * all but rounding are one direction, and get the minimum-norm split.
 */
#define NNLS_RCOND	1e-10

/*
 * A column enters the passive set only while its gradient, scaled by its
 * own norm and the times' norm, is above this: the test is then the same
 * for a counter that counts pages and one that counts flushes.
 */
#define NNLS_GRAD_TOL	1e-10

/* Lawson-Hanson converges in about n entries; far more is a cycle. */
#define NNLS_MAX_ITER(n)	(30 * (n) + 10)

struct nnls_ws {
	size_t m, n;
	gsl_matrix *a;		/* m x n, the counters */
	gsl_vector *t, *w;	/* m: times, weights */
	gsl_matrix *xp;		/* m x n: the passive columns, packed left */
	gsl_vector *c;		/* n: the passive solve's coefficients */
	gsl_matrix *cov;	/* n x n: their covariance (packed) */
	gsl_vector *r, *wr, *g;	/* m, m, n: residual, weighted, gradient */
	gsl_multifit_linear_workspace *lin;
	size_t *idx;		/* n: passive position -> column */
	double *colnorm;	/* n: weighted column norms */
};

static void nnls_ws_free(struct nnls_ws *ws)
{
	gsl_matrix_free(ws->a);
	gsl_vector_free(ws->t);
	gsl_vector_free(ws->w);
	gsl_matrix_free(ws->xp);
	gsl_vector_free(ws->c);
	gsl_matrix_free(ws->cov);
	gsl_vector_free(ws->r);
	gsl_vector_free(ws->wr);
	gsl_vector_free(ws->g);
	if (ws->lin)
		gsl_multifit_linear_free(ws->lin);
	free(ws->idx);
	free(ws->colnorm);
}

static int nnls_ws_alloc(struct nnls_ws *ws, const double *a, size_t m,
			 size_t n, const double *t, const double *w)
{
	size_t i, j;

	memset(ws, 0, sizeof(*ws));
	ws->m = m;
	ws->n = n;
	ws->a = gsl_matrix_alloc(m, n);
	ws->t = gsl_vector_alloc(m);
	ws->w = gsl_vector_alloc(m);
	ws->xp = gsl_matrix_alloc(m, n);
	ws->c = gsl_vector_alloc(n);
	ws->cov = gsl_matrix_alloc(n, n);
	ws->r = gsl_vector_alloc(m);
	ws->wr = gsl_vector_alloc(m);
	ws->g = gsl_vector_alloc(n);
	ws->lin = gsl_multifit_linear_alloc(m, n);
	ws->idx = calloc(n, sizeof(*ws->idx));
	ws->colnorm = calloc(n, sizeof(*ws->colnorm));
	if (!ws->a || !ws->t || !ws->w || !ws->xp || !ws->c || !ws->cov ||
	    !ws->r || !ws->wr || !ws->g || !ws->lin || !ws->idx ||
	    !ws->colnorm) {
		nnls_ws_free(ws);
		return -ENOMEM;
	}
	for (i = 0; i < m; i++) {
		for (j = 0; j < n; j++)
			gsl_matrix_set(ws->a, i, j, a[i * n + j]);
		gsl_vector_set(ws->t, i, t[i]);
		gsl_vector_set(ws->w, i, w ? w[i] : 1.0);
	}
	for (j = 0; j < n; j++) {
		gsl_vector_const_view col = gsl_matrix_const_column(ws->a, j);
		double s = 0;

		for (i = 0; i < m; i++)
			s += gsl_vector_get(ws->w, i) *
			     gsl_pow_2(gsl_vector_get(&col.vector, i));
		ws->colnorm[j] = sqrt(s);
	}
	return 0;
}

/* r = t - a x, wr = w .* r, g = a^T wr: the negative half-gradient. */
static void nnls_gradient(struct nnls_ws *ws, const gsl_vector *x)
{
	gsl_vector_memcpy(ws->r, ws->t);
	gsl_blas_dgemv(CblasNoTrans, -1.0, ws->a, x, 1.0, ws->r);
	gsl_vector_memcpy(ws->wr, ws->r);
	gsl_vector_mul(ws->wr, ws->w);
	gsl_blas_dgemv(CblasTrans, 1.0, ws->a, ws->wr, 0.0, ws->g);
}

/*
 * The unconstrained weighted fit on the columns in @in_p, into @s (0
 * outside them); its covariance (X^T W X)^-1 stays packed in ws->cov,
 * in the order of ws->idx.  *@k is the number of passive columns.
 */
static int nnls_solve_passive(struct nnls_ws *ws, const bool *in_p,
			      gsl_vector *s, size_t *k, size_t *rank,
			      double *chisq)
{
	size_t j, p = 0;
	int err;

	for (j = 0; j < ws->n; j++) {
		if (!in_p[j])
			continue;
		gsl_vector_const_view src = gsl_matrix_const_column(ws->a, j);
		gsl_vector_view dst = gsl_matrix_column(ws->xp, p);

		gsl_vector_memcpy(&dst.vector, &src.vector);
		ws->idx[p++] = j;
	}
	gsl_vector_set_zero(s);
	*k = p;
	*rank = 0;
	*chisq = 0;
	if (!p)
		return 0;

	gsl_matrix_view x = gsl_matrix_submatrix(ws->xp, 0, 0, ws->m, p);
	gsl_vector_view c = gsl_vector_subvector(ws->c, 0, p);
	gsl_matrix_view cov = gsl_matrix_submatrix(ws->cov, 0, 0, p, p);

	err = gsl_multifit_wlinear_tsvd(&x.matrix, ws->w, ws->t, NNLS_RCOND,
					&c.vector, &cov.matrix, chisq, rank,
					ws->lin);
	if (err)
		return -EDOM;
	for (j = 0; j < p; j++)
		gsl_vector_set(s, ws->idx[j], gsl_vector_get(&c.vector, j));
	return 0;
}

/*
 * The column outside the passive set whose scaled gradient is largest
 * and above NNLS_GRAD_TOL, or -1: none would lower the residual.
 */
static long nnls_pick(const struct nnls_ws *ws, const bool *in_p,
		      const bool *skip, double tnorm)
{
	double best = NNLS_GRAD_TOL, scaled;
	long pick = -1;
	size_t j;

	for (j = 0; j < ws->n; j++) {
		if (in_p[j] || skip[j] || ws->colnorm[j] == 0)
			continue;
		scaled = gsl_vector_get(ws->g, j) / (ws->colnorm[j] * tnorm);
		if (scaled > best) {
			best = scaled;
			pick = j;
		}
	}
	return pick;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* R^2, the median relative error and the residuals, from ws->r. */
static int nnls_summary(const struct nnls_ws *ws, struct nnls_fit *fit)
{
	double mean = 0, ss_tot = 0, ss_res = 0, *rel;
	size_t i, nrel = 0;

	for (i = 0; i < ws->m; i++)
		mean += gsl_vector_get(ws->t, i);
	mean /= ws->m;
	rel = malloc(ws->m * sizeof(*rel));
	if (!rel)
		return -ENOMEM;
	for (i = 0; i < ws->m; i++) {
		double ti = gsl_vector_get(ws->t, i);
		double ri = gsl_vector_get(ws->r, i);

		fit->residual[i] = ri;
		ss_res += ri * ri;
		ss_tot += (ti - mean) * (ti - mean);
		if (ti != 0)
			rel[nrel++] = fabs(ri / ti);
	}
	if (ss_tot > 0)
		fit->r2 = 1 - ss_res / ss_tot;
	else
		fit->r2 = ss_res == 0 ? 1 : 0;
	fit->median_abs_rel_err = 0;
	if (nrel) {
		qsort(rel, nrel, sizeof(*rel), cmp_double);
		fit->median_abs_rel_err = nrel % 2 ? rel[nrel / 2] :
			(rel[nrel / 2 - 1] + rel[nrel / 2]) / 2;
	}
	free(rel);
	return 0;
}

/*
 * Standard errors of the final passive set: GSL's (X^T W X)^-1 scaled by
 * the residual variance chisq / (rows - rank), since the weights give
 * relative, not absolute, variances.  With no degree of freedom left the
 * fit is exact and the error is reported as 0.
 */
static void nnls_stderr(const struct nnls_ws *ws, struct nnls_fit *fit,
			size_t k, size_t rank, double chisq)
{
	size_t p, i, rows = 0;
	double s2;

	for (i = 0; i < ws->m; i++)
		rows += gsl_vector_get(ws->w, i) > 0;
	s2 = rows > rank ? chisq / (rows - rank) : 0;
	for (p = 0; p < k; p++) {
		double v = gsl_matrix_get(ws->cov, p, p) * s2;

		fit->stderr_cost[ws->idx[p]] = v > 0 ? sqrt(v) : 0;
	}
}

static bool nnls_input_ok(const double *a, size_t m, size_t n,
			  const double *t, const double *w)
{
	size_t i;

	if (!a || !t || !m || !n || m < n)
		return false;
	for (i = 0; i < m * n; i++)
		if (!isfinite(a[i]))
			return false;
	for (i = 0; i < m; i++)
		if (!isfinite(t[i]) || (w && (!isfinite(w[i]) || w[i] < 0)))
			return false;
	return true;
}

static int nnls_fit_alloc(struct nnls_fit *fit, size_t m, size_t n)
{
	memset(fit, 0, sizeof(*fit));
	fit->m = m;
	fit->n = n;
	fit->cost = calloc(n, sizeof(*fit->cost));
	fit->stderr_cost = calloc(n, sizeof(*fit->stderr_cost));
	fit->state = calloc(n, sizeof(*fit->state));
	fit->collinear = calloc(n, sizeof(*fit->collinear));
	fit->residual = calloc(m, sizeof(*fit->residual));
	if (!fit->cost || !fit->stderr_cost || !fit->state ||
	    !fit->collinear || !fit->residual) {
		nnls_fit_free(fit);
		return -ENOMEM;
	}
	return 0;
}

void nnls_fit_free(struct nnls_fit *fit)
{
	free(fit->cost);
	free(fit->stderr_cost);
	free(fit->state);
	free(fit->collinear);
	free(fit->residual);
	memset(fit, 0, sizeof(*fit));
}

const char *nnls_cost_state_name(enum nnls_cost_state s)
{
	switch (s) {
	case NNLS_FITTED:
		return "fitted";
	case NNLS_AT_ZERO:
		return "at_zero";
	case NNLS_UNIDENTIFIABLE:
		return "unidentifiable";
	}
	return "?";
}

/*
 * Which non-zero columns are linearly dependent: one solve on them all,
 * and the columns each truncated singular direction (a right singular
 * vector of GSL's SVD, ws->lin->Q, with singular values in decreasing
 * order) has a part in.  GSL scales the columns before the SVD, which
 * changes a null vector's entries but not which are non-zero.
 */
static int nnls_collinear(struct nnls_ws *ws, struct nnls_fit *fit,
			  bool *in_p, gsl_vector *s)
{
	size_t j, q, k, rank;
	double chisq;
	int err;

	for (j = 0; j < ws->n; j++)
		in_p[j] = ws->colnorm[j] > 0;
	err = nnls_solve_passive(ws, in_p, s, &k, &rank, &chisq);
	memset(in_p, 0, ws->n * sizeof(*in_p));
	if (err)
		return err;
	fit->rank_all = rank;
	for (q = rank; q < k; q++)
		for (j = 0; j < k; j++)
			if (fabs(gsl_matrix_get(ws->lin->Q, j, q)) > 1e-6)
				fit->collinear[ws->idx[j]] = true;
	return 0;
}

/*
 * The active-set loop.  x is feasible throughout; a column enters the
 * passive set P when the residual pulls it upward, and the solve on P
 * replaces x unless it sends some cost below zero, in which case x moves
 * toward it only as far as the first cost reaching zero, which leaves P.
 */
static int nnls_loop(struct nnls_ws *ws, struct nnls_fit *fit, bool *in_p,
		     bool *skip, gsl_vector *x, gsl_vector *s, size_t *k,
		     size_t *rank, double *chisq)
{
	double tnorm = 0, alpha, xi, si;
	size_t i, n = ws->n;
	long j, limit;
	int err;

	for (i = 0; i < ws->m; i++)
		tnorm += gsl_vector_get(ws->w, i) *
			 gsl_pow_2(gsl_vector_get(ws->t, i));
	tnorm = sqrt(tnorm);
	if (tnorm == 0)
		tnorm = 1;	/* all times 0: x = 0 is the answer */

	fit->converged = true;
	nnls_gradient(ws, x);
	while ((j = nnls_pick(ws, in_p, skip, tnorm)) >= 0) {
		if (fit->iterations++ >= NNLS_MAX_ITER(n)) {
			fit->converged = false;
			break;
		}
		in_p[j] = true;
		err = nnls_solve_passive(ws, in_p, s, k, rank, chisq);
		if (err)
			return err;
		/*
		 * In exact arithmetic the entering cost comes out positive,
		 * since its gradient was; when rounding says otherwise the
		 * column is set aside until x next changes, or the loop
		 * would pick it again forever (Lawson-Hanson's own guard).
		 */
		if (gsl_vector_get(s, j) <= 0) {
			in_p[j] = false;
			skip[j] = true;
			continue;
		}
		for (;;) {
			limit = -1;
			alpha = 2;
			for (i = 0; i < n; i++) {
				if (!in_p[i] || gsl_vector_get(s, i) > 0)
					continue;
				xi = gsl_vector_get(x, i);
				si = gsl_vector_get(s, i);
				if (xi / (xi - si) < alpha) {
					alpha = xi / (xi - si);
					limit = i;
				}
			}
			if (limit < 0)
				break;
			/* x += alpha (s - x): as far as the first zero */
			gsl_vector_scale(x, 1 - alpha);
			gsl_blas_daxpy(alpha, s, x);
			for (i = 0; i < n; i++) {
				if (in_p[i] && ((long)i == limit ||
						gsl_vector_get(x, i) <= 0)) {
					in_p[i] = false;
					gsl_vector_set(x, i, 0);
				}
			}
			err = nnls_solve_passive(ws, in_p, s, k, rank, chisq);
			if (err)
				return err;
		}
		gsl_vector_memcpy(x, s);
		memset(skip, 0, n * sizeof(*skip));
		nnls_gradient(ws, x);
	}
	/* the covariance of the final passive set, for the errors */
	err = nnls_solve_passive(ws, in_p, s, k, rank, chisq);
	if (err)
		return err;
	gsl_vector_memcpy(x, s);
	nnls_gradient(ws, x);
	return 0;
}

int nnls_solve(const double *a, size_t m, size_t n, const double *t,
	       const double *w, struct nnls_fit *fit)
{
	gsl_error_handler_t *old_handler;
	gsl_vector *x = NULL, *s = NULL;
	bool *in_p = NULL, *skip = NULL;
	size_t j, k = 0, rank = 0;
	struct nnls_ws ws;
	double chisq = 0;
	int err;

	if (!nnls_input_ok(a, m, n, t, w))
		return -EINVAL;
	err = nnls_fit_alloc(fit, m, n);
	if (err)
		return err;
	err = nnls_ws_alloc(&ws, a, m, n, t, w);
	if (err) {
		nnls_fit_free(fit);
		return err;
	}
	x = gsl_vector_calloc(n);
	s = gsl_vector_calloc(n);
	in_p = calloc(n, sizeof(*in_p));
	skip = calloc(n, sizeof(*skip));
	if (!x || !s || !in_p || !skip) {
		err = -ENOMEM;
		goto out;
	}

	/* GSL's default handler aborts: a library returns errors instead. */
	old_handler = gsl_set_error_handler_off();
	err = nnls_collinear(&ws, fit, in_p, s);
	if (!err)
		err = nnls_loop(&ws, fit, in_p, skip, x, s, &k, &rank, &chisq);
	gsl_set_error_handler(old_handler);
	if (err)
		goto out;

	for (j = 0; j < n; j++) {
		if (ws.colnorm[j] == 0)
			fit->state[j] = NNLS_UNIDENTIFIABLE;
		else
			fit->state[j] = in_p[j] ? NNLS_FITTED : NNLS_AT_ZERO;
		/* the minimum-norm split of a collinear set may dip below 0 */
		fit->cost[j] = in_p[j] ? fmax(gsl_vector_get(x, j), 0) : 0;
	}
	fit->passive = k;
	fit->rank = rank;
	fit->rank_deficient = rank < k;
	nnls_stderr(&ws, fit, k, rank, chisq);
	err = nnls_summary(&ws, fit);
out:
	gsl_vector_free(x);
	gsl_vector_free(s);
	free(in_p);
	free(skip);
	nnls_ws_free(&ws);
	if (err)
		nnls_fit_free(fit);
	return err;
}
