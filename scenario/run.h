/*
 * run.h - running a parsed scenario on a backend and printing its record.
 */
#ifndef SCENARIO_RUN_H
#define SCENARIO_RUN_H

#include <stdio.h>

#include "scenario/backend.h"
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

#endif /* SCENARIO_RUN_H */
