/*
 * backend/ - the things a scenario can run on, behind one interface.
 *
 * A backend owns the processes, regions and handles of one run.  The runner
 * (scenario/run.c) feeds it statements in order and prints what it returns;
 * it never looks inside.  The model backend drives libptebatch; a kernel
 * backend would drive real processes.
 */
#ifndef BACKEND_H
#define BACKEND_H

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

struct model_options {
	unsigned long memory_bytes;	/* 0 = default */
	/* The variant the machine runs (set right after pb_init), and its
	 * name in the record header, e.g. "upstream+wp_reuse_max=512"; the
	 * name must outlive the backend.  A NULL name selects the preset
	 * PB_DEFAULT_VARIANT, whatever @variant holds. */
	struct pb_variant variant;
	const char *variant_name;
};

struct backend *model_backend_create(const struct model_options *opt);

/* The kernel backend: the same statements on real processes of this machine. */
struct kernel_options {
	int verbose;			/* progress and probes on stderr */
};

struct backend *kernel_backend_create(const struct kernel_options *opt);

#endif /* BACKEND_H */
