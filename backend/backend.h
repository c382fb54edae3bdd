/* SPDX-License-Identifier: GPL-2.0-only */
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
	/* pb_config.read_faults_allocate: as this machine's kernel (host.h). */
	bool read_faults_allocate;
	/*
	 * If set, called by finish() after the last statement, while the
	 * machine still holds the run's final state, with @teardown_arg:
	 * for a caller that reads that state (explore's digest) before the
	 * machine goes down.
	 */
	void (*before_teardown)(void *arg);
	void *teardown_arg;
	/*
	 * Every backend created with this set shares one machine, brought up
	 * once (pb_config.checkpoints) and taken down when the last of them
	 * is destroyed: start() restores the machine as it was just after
	 * pb_init(), finish() exits the processes but leaves the machine up,
	 * and model_backend_save()/_restore() move a started backend between
	 * states without a system call.  All of them use the same
	 * memory_bytes.
	 */
	bool checkpoints;
};

struct backend *model_backend_create(const struct model_options *opt);

/*
 * A started backend's whole state - the machine's (pb_checkpoint_save())
 * and the backend's own: its processes, handles and region placement.
 * Restoring it starts the backend in that state, to go on with @s: a
 * scenario with the same regions, whose statements up to where the saved
 * run stopped are the ones that ran (explore's child of a saved parent).
 */
struct model_checkpoint;
struct model_checkpoint *model_checkpoint_alloc(void);
void model_checkpoint_free(struct model_checkpoint *ck);
int model_backend_save(struct backend *b, struct model_checkpoint *ck);
int model_backend_restore(struct backend *b, const struct model_checkpoint *ck,
			  const struct scenario *s);

/* The kernel backend: the same statements on real processes of this machine. */
struct kernel_options {
	int verbose;			/* progress and probes on stderr */
};

struct backend *kernel_backend_create(const struct kernel_options *opt);

#endif /* BACKEND_H */
