/*
 * explore.c - ptebatch explore: bounded exhaustive equivalence of variants
 * (not written yet).
 */
#include "cli/cli.h"

void explore_usage_text(FILE *f)
{
	fputs("usage: ptebatch explore (not implemented yet)\n", f);
}

int cmd_explore(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	explore_usage_text(stderr);
	return 2;
}
