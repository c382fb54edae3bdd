/*
 * backend/ - what a scenario runs on: the model (libptebatch) and this
 * machine's kernel (real processes), each implementing the runner's
 * interface, scenario/backend.h.
 */
#ifndef BACKEND_H
#define BACKEND_H

#include "ptebatch.h"
#include "scenario/backend.h"

struct model_options {
	unsigned long memory_bytes;	/* 0 = default */
	/* The variant the machine runs (set right after pb_init), and its
	 * name in the record header, e.g. "upstream+wp_reuse_max=512"; the
	 * name must outlive the backend.  A NULL name selects the preset
	 * PB_DEFAULT_VARIANT, whatever @variant holds. */
	struct pb_variant variant;
	const char *variant_name;
	/*
	 * If set, called by finish() after the last statement, while the
	 * machine still holds the run's final state, with @teardown_arg:
	 * for a caller that reads that state (explore's digest) before the
	 * machine goes down.
	 */
	void (*before_teardown)(void *arg);
	void *teardown_arg;
};

struct backend *model_backend_create(const struct model_options *opt);

/* The kernel backend: the same statements on real processes of this machine. */
struct kernel_options {
	int verbose;			/* progress and probes on stderr */
};

struct backend *kernel_backend_create(const struct kernel_options *opt);

#endif /* BACKEND_H */
