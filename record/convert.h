/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * convert.h - an event stream (events.h) turned into a scenario.
 */
#ifndef RECORD_CONVERT_H
#define RECORD_CONVERT_H

#include <stdio.h>

#include "record/events.h"
#include "scenario/scenario.h"

struct rec_convert_opts {
	const char *command;	/* the recorded command line, for the header */
	const char *machine;	/* uname: where it was recorded */
	/* The THP settings CMD ran under; written as mthp lines. */
	enum scn_policy mthp[SCN_MAX_MTHP_SIZES];
	unsigned long page_size;	/* the recording machine's: 4K */
};

/* What the scenario holds and what it leaves out, for the summary. */
struct rec_summary {
	unsigned long faults;		/* accesses written as touch items */
	unsigned long faults_kernel;	/* of which the kernel took */
	unsigned long statements, touch_statements, processes, regions;
	unsigned long file_faults, file_mappings;	/* file-backed private */
	unsigned long shared_faults, shared_mappings;	/* MAP_SHARED */
	unsigned long other_faults;	/* image, main stack, vdso: mapped by execve */
	unsigned long refused_faults;	/* the protection forbade it: SIGSEGV */
	unsigned long early_faults;	/* before the first execve (the recorder's) */
	unsigned long huge_mappings;	/* anonymous, longer than a region may be */
	unsigned long ignored_advice;	/* madvise advice with no statement */
	unsigned long approximations;	/* a grow written as a separate region */
	unsigned long dio;		/* O_DIRECT reads and writes written */
};

/*
 * Write the scenario for @s to @out: the header comments, the summary as
 * comments, the mthp lines, then the statements.  Returns 0, or -errno
 * with a message on @err (a limit of the language exceeded, out of
 * memory).  @sum (may be NULL) gets the counts.
 */
int rec_convert(const struct rec_stream *s, const struct rec_convert_opts *o,
		FILE *out, struct rec_summary *sum, FILE *err);

/* The summary as "# ..." lines (also what record prints on stderr). */
void rec_summary_print(FILE *f, const struct rec_summary *sum,
		       const char *prefix);

#endif
