/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * resignal.h - the end of a handler that cleaned up on a signal: the
 * signal sent again, so that it does what it would have done without the
 * handler (end the process, dump core, or run the handler before ours).
 */
#ifndef PTEBATCH_LIB_RESIGNAL_H
#define PTEBATCH_LIB_RESIGNAL_H

#include <signal.h>

/*
 * Put back @old as @sig's action (SIG_DFL if @old is NULL), unblock @sig
 * (it is blocked while its handler runs) and raise it.  Async-signal-safe.
 */
void resignal(int sig, const struct sigaction *old);

#endif
