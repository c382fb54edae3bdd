/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kstats.h - the kernel's own accounting read around a statement: the
 * /proc/vmstat counters and the per-size mTHP stats of
 * scenario/backend.h's struct kstats, for the kernel backend.
 */
#ifndef BACKEND_KSTATS_H
#define BACKEND_KSTATS_H

#include "scenario/backend.h"

struct kstats_reader {
	int vmstat_fd;			/* /proc/vmstat */
	int refresh_fd;			/* /proc/sys/vm/stat_refresh, or -1 */
	int mthp_fd[KSTAT_ORDERS][NR_KSTAT_MTHP];	/* -1: no such size */
	char buf[16384];		/* /proc/vmstat's text */
};

/*
 * Open the files (the sizes this kernel has, of @page_size pages).
 * Returns 0 or -errno; on error nothing stays open.
 */
int kstats_open(struct kstats_reader *r, unsigned long page_size);
/* Read every counter now.  Returns 0 or -errno. */
int kstats_read(struct kstats_reader *r, struct kstats *out);
void kstats_close(struct kstats_reader *r);
/* @out = @after - @before, counter by counter. */
void kstats_sub(struct kstats *out, const struct kstats *after,
		const struct kstats *before);

#endif /* BACKEND_KSTATS_H */
