/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fcount.h - how many times kernel functions ran in the process a
 * statement runs in, counted by the kernel (ftrace's function tracer in
 * an instance of our own): `run --count`.
 *
 * Function tracing is the machine's: it is turned on for the listed
 * functions only inside a guest of our own (--backend vm), where the
 * machine is ours and goes away with the run; on another machine the
 * profiler and filter would have to be put back, and this host's kernel
 * locks tracing down anyway.
 */
#ifndef BACKEND_FCOUNT_H
#define BACKEND_FCOUNT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "scenario/backend.h"

struct fcount {
	int nr;				/* functions counted */
	const char *names[FCOUNT_MAX];
	pid_t pid;			/* the window's process */
	char *buf;			/* the buffer's text */
	size_t cap;
};

/*
 * The functions of @list (comma-separated; "default" is the default set:
 * those of it this kernel can trace), checked against what this kernel
 * can trace (an inlined function cannot be: named in @why), the
 * profiler started.  0, or -1 with @why.
 */
int fcount_open(struct fcount *fc, const char *list, char *why,
		size_t whylen);
/* Start a statement's window: count the calls of process @pid only. */
int fcount_begin(struct fcount *fc, pid_t pid);
/*
 * End it: each function's calls in the window into @hits.  0, or -errno
 * (-EOVERFLOW: the buffer lost calls, the counts would be short).
 */
int fcount_end(struct fcount *fc, uint64_t *hits);
/* Stop the profiler, clear the filter. */
void fcount_close(struct fcount *fc);

#endif /* BACKEND_FCOUNT_H */
