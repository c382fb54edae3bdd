/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * record.h - printing the record of a run, the text both backends produce
 * and `ptebatch diff` compares.  The format is docs/SCENARIO.md's; the
 * choices it leaves open are written down in record.c.
 */
#ifndef SCENARIO_RECORD_H
#define SCENARIO_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "scenario/backend.h"
#include "scenario/scenario.h"

/* "# backend NAME variant VARIANT arch ARCH", then " zero-page no" for a
 * model whose read faults allocate (struct backend). */
void record_header(FILE *out, const struct backend *b);

/* A settings line: "N TEXT". */
void record_setting(FILE *out, const struct stmt *st);

/* What a timed run (scenario_run_timed()) adds to a statement's line. */
struct record_time {
	double us;		/* the median of the runs, microseconds */
	bool faults_vary;	/* the result was not the same in every run */
	const char *label;	/* the word before it: NULL for "time" */
};

/* "# time: ..." - how the times of a timed run were measured. */
void record_time_method(FILE *out, const struct backend *b, int reps);

/*
 * A process statement: "N TEXT: faults F", with the child's count for
 * fork, the bytes read for drain, or "N TEXT: error ENAME".  With @time,
 * "time US" follows the counts (before any data), and "~" marks the
 * counts that were not the same in every run.  With @with_stats, each
 * nonzero counter follows as "  stat NAME VALUE"; with @with_kstats
 * (and a result that has them), each nonzero kernel accounting counter
 * as "  kstat NAME VALUE" (scenario/backend.h).
 */
void record_result(FILE *out, const struct scenario *s, const struct stmt *st,
		   const struct stmt_result *res, bool with_stats,
		   bool with_kstats, const struct record_time *time);

/*
 * Replace the backend's raw frame ids of the present pages in @snap by
 * canonical numbers: 1, 2, ... in order of first appearance.  Returns 0 or
 * -ENOMEM.
 */
int snapshot_canonicalize(struct snapshot *snap);

/*
 * How many pages from @pg (of @nr left in a canonical snapshot) the record
 * prints as one line: the drawing (svg.c) folds the same runs.
 */
unsigned long record_run_length(const struct snap_page *pg, unsigned long nr,
				unsigned long page_size);

/* The page lines of a canonical snapshot, runs compressed. */
void record_snapshot(FILE *out, const struct scenario *s,
		     const struct snapshot *snap);

/* "N observe" and the snapshot, canonicalized in place first. */
int record_observe(FILE *out, const struct scenario *s, const struct stmt *st,
		   struct snapshot *snap);

/* "EFAULT" for EFAULT; "E<number>" (written to @buf) for unnamed ones. */
const char *record_errno_name(int err, char *buf, size_t size);
const char *record_size_text(char *buf, size_t size, unsigned long bytes);

/* Run-length encoded bytes: "0x03*4096 0x09", or "-" when there are none. */
void record_data(FILE *out, const uint8_t *data, unsigned long len);

#endif /* SCENARIO_RECORD_H */
