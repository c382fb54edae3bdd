/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * calibrate/samples.h - the timed statements a calibration is fitted on:
 * each a statement of a calibration scenario, its kernel time and the
 * model's counters for it, kept in a text file so that a fit (and every
 * held-out check of it) can be redone without the kernel or root.
 *
 *	# ptebatch calibration samples 1
 *	# machine arch=x86_64 kernel=6.18.0 cores=2 date=2026-12-02T03:10:00Z
 *	# machine cpu=AMD EPYC ...
 *	scenario stmt family size us COUNTER...
 *	4k-2m.scn 3 fault 4k 812.4 512 512 0 ...
 *
 * The fifth column names the times' unit (calib.h): "us", this machine's
 * kernel timed, or "insns", a guest's instructions under -icount, written
 * as whole instructions.
 * One line per sample, fields separated by one space; the header line
 * names the counters, in any order, so a file stays readable when the
 * model gains a counter (a counter the file lacks reads 0; one the
 * model lacks is an error).
 *
 * Bounds: a samples file is at most CALIB_SAMPLES_MAX_BYTES (the shipped
 * one is 64K for 510 samples: 16M is some 130,000 of them); a sample's
 * time is from CALIB_SAMPLE_MIN_US (what "%.3f" writes of anything
 * timed) to CALIB_SAMPLE_MAX_US (one statement of the suite taking a
 * second is no measurement of it; the shipped samples' longest is 43 ms).
 */
#ifndef CALIBRATE_SAMPLES_H
#define CALIBRATE_SAMPLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ptebatch.h"
#include "calibrate/calib.h"

#define CALIB_SAMPLES_MAX_BYTES	(16UL << 20)
#define CALIB_SAMPLE_MIN_US	0.001
#define CALIB_SAMPLE_MAX_US	1e6

struct calib_sample {
	char scenario[64];		/* the scenario file's base name */
	int stmt;			/* its statement number */
	char family[16];		/* calib_family() */
	char size[16];			/* calib_size_label() */
	double us;			/* the kernel's median time */
	uint64_t count[PB_NR_STATS];	/* the model's counters (upstream) */
};

struct calib_samples {
	struct calib_machine machine;
	struct calib_sample *v;
	size_t nr, cap;
};

/*
 * The family a statement belongs to, from its keyword (the word after
 * the process) and, for accesses, what the model counted: "cow" (a
 * write fault that copied or reused a page), "fault" (other faults),
 * "access" (stores or loads that faulted nowhere), else the keyword
 * ("mmap" also for mmap-fixed, "dio" for dio-read and dio-write).
 */
const char *calib_family(const char *stmt_text,
			 const uint64_t count[PB_NR_STATS], char *buf,
			 size_t len);

/* The families a sample can have (NULL-terminated): what --without takes. */
extern const char *const calib_families[];

/*
 * The folio size a calibration scenario is about, from its file name:
 * the base name without ".scn" and its last "-LENGTH" part
 * ("calibrate/2m-pte-8m.scn" -> "2m-pte").
 */
void calib_size_label(const char *path, char *buf, size_t len);

/* Append @s.  0 or -ENOMEM. */
int calib_samples_add(struct calib_samples *ss, const struct calib_sample *s);
void calib_samples_free(struct calib_samples *ss);

/* Write @ss to @f.  0, or -EIO. */
int calib_samples_write(FILE *f, const struct calib_samples *ss);

/*
 * Read the samples file @path into @ss (zeroed).  0, or -errno
 * (-EINVAL for a malformed file, -EFBIG for one larger than
 * CALIB_SAMPLES_MAX_BYTES) with "PATH:LINE: what is wrong" in @why.
 */
int calib_samples_read(const char *path, struct calib_samples *ss,
		       char *why, size_t whylen);

/* The same from the stream @f (the caller's), called @name in @why. */
int calib_samples_read_stream(FILE *f, const char *name,
			      struct calib_samples *ss, char *why,
			      size_t whylen);

/*
 * Which samples a fit or a prediction takes: those whose family is in
 * @families (NULL: any) and not in @not_families, and whose size is in
 * @sizes (NULL: any).  Each list is NULL-terminated.
 */
struct calib_select {
	const char *const *families, *const *not_families, *const *sizes;
};
bool calib_selected(const struct calib_sample *s,
		    const struct calib_select *sel);

/*
 * Fit a calibration on the samples of @ss that @sel selects, weighting
 * each by 1/us^2 (so that the fit minimises relative errors, which is
 * what a prediction is judged by).  Every counter is a column; one that
 * no selected sample moves is "unidentifiable" at cost 0.  0 (free
 * @c with calib_free()), -EINVAL (fewer samples selected than there are
 * counters, or a cost above CALIB_MAX_COST_US that no calibration may
 * hold; @why says so),
 * -ENOMEM or -EDOM (the solver failed).
 */
int calib_fit(const struct calib_samples *ss, const struct calib_select *sel,
	      struct calibration *c, char *why, size_t whylen);

/*
 * The median of |predicted - measured| / measured over the samples of
 * @ss that @sel selects, with @c.  NAN when none is selected; *@nr
 * (may be NULL) gets how many were.
 */
double calib_median_error(const struct calib_samples *ss,
			  const struct calib_select *sel,
			  const struct calibration *c, size_t *nr);

#endif /* CALIBRATE_SAMPLES_H */
