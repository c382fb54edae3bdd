/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * run.h - running a parsed scenario on a backend and printing its record.
 */
#ifndef SCENARIO_RUN_H
#define SCENARIO_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "scenario/backend.h"
#include "scenario/record.h"
#include "scenario/scenario.h"

/* What scenario_run() returns; the CLI exits with the same numbers. */
#define SCN_RUN_OK		0
#define SCN_RUN_FAILED		1	/* the backend could not run it */
#define SCN_RUN_VIOLATION	3	/* an invariant check failed */
#define SCN_RUN_SKIPPED		4	/* the backend cannot run it here */

/*
 * Run @s on @b: start, every statement in order (its record line on @out),
 * finish.  With @check_from N > 0, the backend's invariant check (if it
 * has one) runs after every statement numbered N or later (1: all of
 * them; a caller that replays a prefix it checked before may skip it);
 * violations go to @err as "FILE: after statement N: ..." and the run
 * goes on.  Problems running the scenario go to @err too, and so does a
 * statement that ran out of the backend's memory ("FILE:LINE: TEXT: out
 * of memory: ..."): the run goes on, but fails.  A statement the backend
 * can no longer run at all (a process of it was killed) stops the run
 * there, "FILE:LINE: why", and fails it.
 *
 * Returns SCN_RUN_OK, SCN_RUN_FAILED, or SCN_RUN_VIOLATION when any check
 * failed (even if the run failed later: a broken invariant is the more
 * useful thing to know).  When start() or finish() returns -EOPNOTSUPP
 * with the backend's skip_reason set, the run is SCN_RUN_SKIPPED, and @err
 * gets "FILE: skipped on backend NAME: REASON" (`ptebatch diff` reads that
 * line); a record printed before finish() refused is then no result.
 */
int scenario_run(const struct scenario *s, struct backend *b, FILE *out,
		 FILE *err, int check_from);

/*
 * scenario_run() in pieces, for a caller that keeps a started backend
 * and moves it between states itself (explore's checkpoints):
 * scenario_run_start() starts @b on @s and prints the record's first
 * lines; scenario_run_part() runs statements [@from, @to) of @s on the
 * started backend, their record lines on @out, checked as scenario_run()
 * checks.  No finish().  The record lines are those scenario_run() would
 * print for the same statements in the same state.  Both return what
 * scenario_run() does (a part: of its statements alone).
 */
int scenario_run_start(const struct scenario *s, struct backend *b,
		       FILE *out, FILE *err);
int scenario_run_part(const struct scenario *s, struct backend *b, int from,
		      int to, FILE *out, FILE *err, int check_from);

/*
 * scenario_run() @reps times (at least 1), each a fresh run of @s on @b
 * from start() to finish(), and the record of the last one printed on
 * @out, with "time US" on every process statement the backend timed
 * (stmt_result.has_time): the median of its time_ns over the runs, in
 * microseconds.  A statement whose result (error, faults, the child's)
 * was not the same in every run gets "~" after its counts.  The records
 * of the runs before are thrown away; the first run that does not end
 * SCN_RUN_OK ends the timing, its status returned.
 */
int scenario_run_timed(const struct scenario *s, struct backend *b, int reps,
		       FILE *out, FILE *err, int check_from);

/* One statement of a sampled run (scenario_run_sampled()). */
struct stmt_sample {
	bool ran;			/* a process statement that ran */
	int err;
	unsigned long faults;
	bool has_time;			/* the backend timed it */
	double us;			/* the median time, microseconds */
	bool vary;			/* its result was not the same in every run */
	bool has_stats;			/* the backend counted it */
	uint64_t stats[PB_NR_STATS];	/* its cost counters (the last run's) */
};

/*
 * scenario_run_timed(), and also each statement's result in @samples
 * (NULL: none; else zeroed, one per statement of @s, by index): what a
 * caller that fits or predicts times (calibrate/) reads instead of the
 * record.  A statement that did not run keeps ran false.
 */
int scenario_run_sampled(const struct scenario *s, struct backend *b,
			 int reps, FILE *out, FILE *err, int check_from,
			 struct stmt_sample *samples);

/*
 * What a caller adds to a statement's record line: fill @time (its us
 * and label; "LABEL US" follows the counts) and return true, or return
 * false for nothing.  @res is the statement's result, counters too when
 * the backend's want_stats is set.
 */
typedef bool (*scn_annotate_fn)(void *arg, const struct stmt *st,
				const struct stmt_result *res,
				struct record_time *time);

/*
 * scenario_run() once, with @annotate called on every process
 * statement's result before its line is printed; the counters (if the
 * backend's want_stats is set) follow the line only @with_stats.
 */
int scenario_run_annotated(const struct scenario *s, struct backend *b,
			   FILE *out, FILE *err, int check_from,
			   bool with_stats, scn_annotate_fn annotate, void *arg);

/*
 * Someone who follows a run besides its record: the drawing of
 * `run --svg` (scenario/svg.c).  Each hook returns 0 or -errno; an error
 * stops the run there ("FILE:LINE: statement N: ...") and fails it.
 */
struct scn_watch {
	/*
	 * After every process statement that ran: its result, and a raw
	 * snapshot (the backend's frame ids) taken right after it, which
	 * the record never sees.  A snapshot costs as much as an observe.
	 */
	int (*stmt_done)(void *arg, const struct stmt *st,
			 const struct stmt_result *res,
			 const struct snapshot *raw);
	/* At each observe: its snapshot, raw, before the record prints it. */
	int (*observed)(void *arg, const struct stmt *st,
			const struct snapshot *raw);
	void *arg;
};

/* scenario_run(), with @watch told of every statement and observe. */
int scenario_run_watched(const struct scenario *s, struct backend *b,
			 FILE *out, FILE *err, int check_from,
			 const struct scn_watch *watch);

#endif /* SCENARIO_RUN_H */
