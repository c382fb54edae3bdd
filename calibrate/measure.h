/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * calibrate/measure.h - taking samples: a calibration scenario run on
 * this machine's kernel with each statement timed, and on the model
 * (the upstream variant: what this kernel does) with each statement
 * counted; and the machine the samples come from.
 */
#ifndef CALIBRATE_MEASURE_H
#define CALIBRATE_MEASURE_H

#include <stdbool.h>
#include <stdio.h>

#include "calibrate/samples.h"

/* This machine: uname, /proc/cpuinfo's model name, cores, now. */
void calib_this_machine(struct calib_machine *m);

/* What calib_measure() did with a scenario's statements. */
struct calib_measure_stats {
	unsigned long taken;		/* samples added */
	unsigned long untimed;		/* not timed where it ran (exit), or 0 us */
	unsigned long unfitted;		/* a family the fit leaves out (split, dio, drain) */
	unsigned long failed;		/* an error on either side */
	unsigned long differ;		/* the model's faults were not the kernel's */
	unsigned long vary;		/* the kernel's result varied between runs */
};

/*
 * Run the scenario @path on the kernel (@reps timed runs, median; with
 * @insns, a guest's clock counting instructions, the least) and
 * on the model, and add a sample to @ss for every statement both ran
 * alike (no error, the same faults, the same result in every kernel
 * run) and the kernel timed.  @st (may be NULL) counts what was left
 * out and why.  0; -EOPNOTSUPP when the kernel backend cannot run it
 * here (not root, a folio size the kernel lacks: the reason in @why);
 * -EINVAL when it does not parse or a run failed (said in @why, a line
 * for each thing wrong); -ENOMEM.
 */
int calib_measure(const char *path, int reps, bool insns,
		  struct calib_samples *ss, struct calib_measure_stats *st,
		  char *why, size_t whylen);

/*
 * Count @ss's samples again on the model as it is now, keeping the
 * kernel's times: each scenario a sample names is read from @suite
 * (DIR/NAME), run once on the model (upstream) with counters, and every
 * sample of it takes the new counts and the family they imply.  A model
 * change moves counters, not the kernel's time, so it is refitted
 * without root and without the noise of timing the kernel again.  A
 * sample whose statement now fails on the model, or faults another
 * number of times than it did when the kernel was timed (the samples
 * kept only statements whose faults were the kernel's), is dropped and
 * counted in *@dropped.  0; -EINVAL when a scenario is missing, does not
 * parse or the run failed (said in @why); -ENOMEM.
 */
int calib_recount(struct calib_samples *ss, const char *suite,
		  unsigned long *dropped, char *why, size_t whylen);

#endif /* CALIBRATE_MEASURE_H */
