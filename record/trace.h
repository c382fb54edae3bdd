/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * trace.h - run a command under the kernel's tracepoints and collect what
 * it and every process it forks did to memory (root only).
 */
#ifndef RECORD_TRACE_H
#define RECORD_TRACE_H

#include <stdbool.h>
#include <stdio.h>

#include "record/events.h"
#include "scenario/scenario.h"

struct rec_trace_opts {
	char **argv;			/* the command, NULL-terminated */
	unsigned long buffer_kb;	/* per CPU; 0: the default */
	bool no_aslr;			/* run it with ADDR_NO_RANDOMIZE */
	/* THP settings the command runs under (every size never: 4K). */
	enum scn_policy mthp[SCN_MAX_MTHP_SIZES];
	FILE *err;
};

struct rec_trace_result {
	int status;			/* the command's, as waitpid says */
	unsigned long lost;		/* overrun + dropped events, all CPUs */
	unsigned long buffer_kb;	/* what the buffers were */
	bool interrupted;		/* SIGINT/SIGTERM/SIGHUP stopped it */
};

/*
 * Trace @o->argv to its end into @s (sorted by time).  The THP settings,
 * the tracefs instance it creates (and the tracefs mount, when it had to
 * mount it) are put back before it returns, also when a signal stops it.
 * Returns 0, or -errno with a message on @o->err.  Lost events are not an
 * error here: @res->lost says how many (the caller decides).
 */
int rec_trace(const struct rec_trace_opts *o, struct rec_stream *s,
	      struct rec_trace_result *res);

#endif
