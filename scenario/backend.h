/*
 * backend.h - what the runner (run.c) needs of whatever runs a scenario:
 * the operations a backend implements, the result of one statement and
 * the snapshot an `observe` fills.  The runner owns this interface; the
 * model and the kernel (backend/) implement it, and nothing here knows
 * which one it talks to.
 */
#ifndef SCENARIO_BACKEND_H
#define SCENARIO_BACKEND_H

#include <stdint.h>
#include <stdio.h>

#include "ptebatch.h"
#include "scenario/scenario.h"

/* The result of one process statement. */
struct stmt_result {
	int err;			/* 0 or a positive errno (EFAULT, ...) */
	unsigned long faults;		/* minor faults of the acting process */
	unsigned long child_faults;	/* fork: the child's */
	uint8_t *data;			/* drain: bytes read (malloc'd) */
	unsigned long data_len;
	uint64_t stats[PB_NR_STATS];	/* cost counters of this statement */
	int has_stats;
	/*
	 * The wall time of the statement's own work where it ran (the kernel
	 * backend: its system calls, stores and loads, in the process that
	 * made them), nanoseconds.  A backend that cannot tell leaves
	 * has_time 0.
	 */
	uint64_t time_ns;
	int has_time;
	/*
	 * Non-empty when the statement ran out of the backend's own memory
	 * (the model's frames): what ran out and what gives more.  Linux
	 * would have reclaimed or OOM-killed instead, so from here on the
	 * record is the backend's, not Linux's; the runner says so on
	 * stderr and the run fails, but it goes on to its end.
	 */
	char exhausted[160];
	/*
	 * Non-empty when the backend can no longer run the scenario (a
	 * process of it was killed): why.  The runner says so on stderr,
	 * "FILE:LINE: WHY", and the run stops there and fails: what follows
	 * would be no record of the scenario.
	 */
	char fatal[160];
};

/* One base page of one region of one live process. */
struct snap_page {
	int proc;			/* process id */
	int region;			/* region id */
	unsigned long off;		/* offset in the region */
	int present;
	unsigned long folio_size;	/* bytes */
	unsigned long index;		/* page index in its folio */
	uint64_t frame;			/* backend's raw frame id */
	uint8_t data;
};

struct snapshot {
	struct snap_page *pages;
	unsigned long nr, cap;
};

/* Append one page to @snap, growing it.  Returns 0 or -ENOMEM. */
int snapshot_add(struct snapshot *snap, const struct snap_page *page);
/* Forget the pages but keep the memory, for the next observe. */
void snapshot_clear(struct snapshot *snap);
void snapshot_free(struct snapshot *snap);

/* Free what @res owns (drain data) and zero it for the next statement. */
void stmt_result_reset(struct stmt_result *res);

struct backend;

struct backend_ops {
	const char *name;
	/* Prepare a run of @s: apply its settings, create P0. */
	int (*start)(struct backend *b, const struct scenario *s);
	/* Run one process statement (never ST_MTHP or ST_OBSERVE). */
	void (*exec)(struct backend *b, const struct stmt *st,
		     struct stmt_result *res);
	/* Snapshot every live process's regions, processes and regions in
	 * id order, pages in address order. */
	int (*observe)(struct backend *b, struct snapshot *snap);
	/* End the run: release everything. Returns 0 or -errno. */
	int (*finish)(struct backend *b);
	/* Check internal invariants (model only; may be NULL). */
	unsigned long (*check)(struct backend *b, FILE *report);
	void (*destroy)(struct backend *b);
};

struct backend {
	const struct backend_ops *ops;
	/*
	 * Set by start() when it returns -EOPNOTSUPP: why this backend cannot
	 * run the scenario here (not root, a folio size the kernel lacks, a
	 * folio that did not materialize).  The run is then SKIP, never PASS.
	 * A backend may also set it and return -EOPNOTSUPP from finish().
	 */
	char skip_reason[256];
	const char *variant;	/* printed in the record header */
	const char *arch;
	int want_stats;
};

#endif /* SCENARIO_BACKEND_H */
