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
 * (it is blocked while its handler runs) and raise it.  When that action
 * is the default one the process ends, and the death hooks run first;
 * when it is a handler (the program's own, a fuzzer's timer) it decides,
 * and if it returns, so does resignal().  Async-signal-safe.
 */
void resignal(int sig, const struct sigaction *old);

/*
 * Run @fn (async-signal-safe) whenever resignal() is about to end the
 * process, whichever handler called it: what must not outlive the process
 * (its temporary files) goes then, and only then.  Registering a function
 * twice runs it once.  0, or -ENOSPC when the few slots are taken.
 */
int resignal_at_death(void (*fn)(void));

#endif
