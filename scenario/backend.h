/* SPDX-License-Identifier: GPL-2.0-only */
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

/*
 * The kernel's own accounting of events the model also does (issue 16):
 * counters of /proc/vmstat and, per folio order, of the mTHP stats files
 * /sys/kernel/mm/transparent_hugepage/hugepages-<size>kB/stats/.  The
 * kernel backend reads them around a statement; the model counts the
 * same events where it does them.  Each is printed "  kstat NAME VALUE"
 * under its kernel name (kstat_name()), the per-size ones as
 * "hugepages-64kB/anon_fault_alloc".
 */
enum kstat_item {
	KSTAT_PGFAULT,			/* pgfault: handle_mm_fault() calls */
	KSTAT_THP_FAULT_ALLOC,		/* thp_fault_alloc: PMD THP faulted in */
	KSTAT_THP_FAULT_FALLBACK,	/* thp_fault_fallback */
	KSTAT_THP_SPLIT_PMD,		/* thp_split_pmd: PMD mappings split */
	KSTAT_PIN_ACQUIRED,		/* nr_foll_pin_acquired */
	KSTAT_PIN_RELEASED,		/* nr_foll_pin_released */
	NR_KSTAT_GLOBAL,
};

enum kstat_mthp_item {
	KSTAT_MTHP_ANON_FAULT_ALLOC,	/* anon_fault_alloc */
	KSTAT_MTHP_ANON_FAULT_FALLBACK,	/* anon_fault_fallback */
	KSTAT_MTHP_SPLIT,		/* split: large folios split */
	NR_KSTAT_MTHP,
};

/* Folio orders 0..KSTAT_MAX_ORDER (a PMD of 64K pages is order 13). */
#define KSTAT_MAX_ORDER	15
#define KSTAT_ORDERS	(KSTAT_MAX_ORDER + 1)

struct kstats {
	uint64_t global[NR_KSTAT_GLOBAL];
	uint64_t mthp[KSTAT_ORDERS][NR_KSTAT_MTHP];
};

/* The kernel's name of a counter: "pgfault", "nr_foll_pin_acquired". */
const char *kstat_name(enum kstat_item item);
/* "hugepages-64kB/anon_fault_alloc" for @order of @page_size pages. */
void kstat_mthp_name(char *buf, size_t size, enum kstat_mthp_item item,
		     int order, unsigned long page_size);

/* Kernel functions `run --count` counts at most (backend/fcount.h). */
#define FCOUNT_MAX	24

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
	 * The kernel's accounting of this statement (want_kstats): the
	 * kernel backend's deltas of the system-wide counters around it,
	 * the model's own counts of the same events.
	 */
	struct kstats kstats;
	int has_kstats;
	/*
	 * --count: how many times each kernel function of @fcount_names ran
	 * in the statement's window, counted by the kernel; printed as
	 * "  count NAME N" lines.
	 */
	uint64_t fcounts[FCOUNT_MAX];
	const char *const *fcount_names;
	int nr_fcounts;
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
	/*
	 * Non-empty when the backend saw something in the statement that is
	 * not the kernel's answer to it (faults of a process's own pages,
	 * left out of @faults): what.  Printed as a "# note: " line after
	 * the statement's, which the record reader skips.
	 */
	char note[256];
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
	/*
	 * The shared zero page (or the huge one): the record cannot tell it
	 * from a private page of zeroes, the drawing (svg.c) does.
	 */
	bool zero;
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
	/*
	 * Read faults allocate instead of mapping the zero page (the model
	 * configured as a kernel that maps none: pb_config); the header
	 * says "zero-page no".
	 */
	bool no_zero_page;
	int want_stats;
	int want_kstats;	/* fill stmt_result.kstats, print kstat lines */
	/*
	 * The clock time_ns is read from counts guest instructions (a QEMU
	 * guest with -icount shift=0: one a nanosecond): timed records say
	 * "insns N" instead of "time US".
	 */
	bool time_insns;
	/*
	 * The run is timed (run --time, calibrate): the kernel backend leaves
	 * its fault sampler off.  That perf event writes a sample per fault
	 * (743 instructions a fault in seed 003's pass on 7.3, a third of an
	 * anonymous fault's), which would be in every fault's time; faults
	 * are then getrusage's, and one of the process's own shows as a
	 * fault more than the model's.
	 */
	bool timed;
	/* --count: the kernel functions to count ("default" or a list). */
	const char *count_list;
};

#endif /* SCENARIO_BACKEND_H */
