/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * calibrate/calib.h - a calibration: one cost per cost counter
 * (include/ptebatch_stats.h), fitted on one kernel, kept as a JSON file,
 * and the cost it predicts for a statement.
 *
 *	{"version": 2, "unit": "us",
 *	 "machine": {"arch": "x86_64", "kernel": "6.1.0-18-amd64", "cpu": "...", "cores": 2,
 *	             "date": "2026-12-03"},
 *	 "costs": [{"counter": "fault_anon", "us": 0.81, "stderr": 0.02,
 *	            "state": "fitted"}, ...],
 *	 "residuals": [0.1, -0.3, ...],
 *	 "fit": {"r2": 0.98, "median_abs_rel_err": 0.05}}
 *
 * The unit is the kernel's: "us", this machine's time (`--backend
 * kernel`), or "insns", the instructions a guest of a kernel of our own
 * ran under QEMU's -icount (`--backend vm:NAME`, whose "kernel" is
 * "vm:NAME"); an "insns" file's costs are keyed "insns" and its
 * residuals are instructions too.  Version 1 files (no "unit") are "us".
 * In memory a cost is in the file's unit; a prediction is in us: a guest
 * under -icount shift=0 counts one instruction a nanosecond, so an
 * instruction is 0.001 guest us (calib_unit_scale()).
 *
 * "state" is nnls_cost_state_name(): "fitted", "at_zero" (held at 0 by
 * the constraint) or "unidentifiable" (the counter never moved); the two
 * last have "us" 0.  A counter may be absent from "costs" (it was not
 * fitted); a statement that moves it cannot be predicted in full.
 */
#ifndef CALIBRATE_CALIB_H
#define CALIBRATE_CALIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ptebatch.h"
#include "calibrate/nnls.h"

#define CALIB_VERSION	2
/*
 * The largest calibration file: the shipped one is 16K, most of it a
 * residual per sample; 16M holds those of the largest samples file
 * (CALIB_SAMPLES_MAX_BYTES) with room.
 */
#define CALIB_MAX_FILE_BYTES	(16UL << 20)
/*
 * The highest cost a calibration may give one counter, in us: a second
 * per event is no cost of memory management (the shipped calibration's
 * highest is 426 us, a fork's fixed cost), and refusing more keeps every
 * prediction finite.
 */
#define CALIB_MAX_COST_US	1e6

/* What a calibration's costs and a samples file's times count. */
enum calib_unit {
	CALIB_UNIT_US,		/* microseconds of this machine's kernel */
	CALIB_UNIT_INSNS,	/* instructions of a guest under -icount */
};

/* "us" or "insns": the file's word, and what predict prints. */
const char *calib_unit_name(enum calib_unit u);
/* The unit @name names into *@u: 0, or -1 for no unit. */
int calib_unit_parse(const char *name, enum calib_unit *u);
/* How many of @u an in-memory us is: 1, or 1000 instructions. */
double calib_unit_scale(enum calib_unit u);

struct calib_machine {
	enum calib_unit unit;
	char arch[80];		/* uname -m */
	char kernel[256];	/* uname -r */
	char cpu[256];		/* the model name of /proc/cpuinfo */
	int cores;
	char date[64];		/* when it was measured, ISO 8601 */
};

struct calib_cost {
	bool present;		/* in the file's "costs" */
	/*
	 * In the calibration's unit (machine.unit), as the file has it, so
	 * that a file reads and writes back exactly; calib_predict() turns
	 * it into us.
	 */
	double value;		/* >= 0 */
	double error;		/* its standard error, >= 0 */
	enum nnls_cost_state state;
};

struct calibration {
	struct calib_machine machine;
	struct calib_cost cost[PB_NR_STATS];	/* by enum pb_stat */
	double *residual;			/* in the unit, one per fitted statement */
	size_t nr_residuals;
	double r2, median_abs_rel_err;
};

/* The counter called @name, or -1. */
int calib_counter(const char *name);

/*
 * @c from @fit, whose column j was the counter @cols[j], measured on
 * @machine.  0 or -ENOMEM; free with calib_free().
 */
int calib_from_fit(struct calibration *c, const struct calib_machine *machine,
		   const enum pb_stat *cols, const struct nnls_fit *fit);
void calib_free(struct calibration *c);

/*
 * Write @c to @f, JSON; @name (the file's) for messages.  0, or -errno
 * with "NAME: what went wrong" in @why.
 */
int calib_write(FILE *f, const char *name, const struct calibration *c,
		char *why, size_t whylen);

/*
 * Write @c to @path by lib/outfile.h's rule (a file replaced only once
 * the calibration is whole).  0, or -errno with "PATH: what went wrong"
 * in @why.
 */
int calib_write_file(const char *path, const struct calibration *c,
		     char *why, size_t whylen);

/*
 * Read and validate the calibration file @path into @c.  0, or -errno
 * (-EINVAL for a file that is not a valid calibration) with "PATH: what
 * is wrong" in @why: not JSON (with line and column), a missing or
 * unknown field, a value of the wrong type or out of range (a cost
 * negative, not finite or above CALIB_MAX_COST_US), an unknown or
 * repeated counter; -EFBIG for a file larger than CALIB_MAX_FILE_BYTES.
 */
int calib_read_file(const char *path, struct calibration *c, char *why,
		    size_t whylen);

/*
 * The time @c predicts for a statement whose counter deltas are @count,
 * in *@us.  0, or -ENOENT when a counter the statement moved has no cost
 * in @c, or one the calibration never saw move (unidentifiable): the
 * first such is *@missing, and *@us is what the others cost, a lower
 * bound.
 */
int calib_predict(const struct calibration *c,
		  const uint64_t count[PB_NR_STATS], double *us,
		  enum pb_stat *missing);

/*
 * One line on @f, "WHO: warning: PATH was measured on another CPU (...)",
 * when @c was measured on another CPU model than this
 * machine's (a cost in us is the CPU's); whether it said so.  Nothing
 * when this machine's model is unknown, or @c counts instructions.
 */
bool calib_warn_other_cpu(FILE *f, const char *who, const char *path,
			  const struct calibration *c);

/*
 * Where `ptebatch calibrate` writes by default: build/calibration.json in
 * the source tree the tool was built from.
 */
const char *calib_default_output(void);

/*
 * The calibration a prediction uses when none is named: this machine's
 * own (calib_default_output()) when it exists, else the one shipped in
 * calibrate/ for this machine's architecture (calibrate/x86_64.json).
 * Returns the path; it may not exist (the reader says so).
 */
const char *calib_default_input(void);

#endif /* CALIBRATE_CALIB_H */
