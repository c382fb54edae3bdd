// SPDX-License-Identifier: GPL-2.0-only
/*
 * resignal.c - a signal sent again after its handler cleaned up.
 */
#include <signal.h>

#include "lib/resignal.h"

void resignal(int sig, const struct sigaction *old)
{
	sigset_t set;

	if (old)
		sigaction(sig, old, NULL);
	else
		signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
}
