// SPDX-License-Identifier: GPL-2.0-only
/*
 * resignal.c - a signal sent again after its handler cleaned up, and what
 * must go when it ends the process.
 */
#include <errno.h>
#include <signal.h>

#include "lib/resignal.h"

#define RESIGNAL_MAX_HOOKS 8

static void (*volatile death_hooks[RESIGNAL_MAX_HOOKS])(void);

int resignal_at_death(void (*fn)(void))
{
	int i;

	for (i = 0; i < RESIGNAL_MAX_HOOKS && death_hooks[i]; i++)
		if (death_hooks[i] == fn)
			return 0;
	if (i == RESIGNAL_MAX_HOOKS)
		return -ENOSPC;
	death_hooks[i] = fn;
	return 0;
}

/* Every signal a handler of ours takes ends the process by default. */
static int ends_process(const struct sigaction *old)
{
	return !old || (!(old->sa_flags & SA_SIGINFO) &&
			old->sa_handler == SIG_DFL);
}

void resignal(int sig, const struct sigaction *old)
{
	sigset_t set;
	int i;

	if (ends_process(old))
		for (i = 0; i < RESIGNAL_MAX_HOOKS && death_hooks[i]; i++)
			death_hooks[i]();
	if (old)
		sigaction(sig, old, NULL);
	else
		signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
}
