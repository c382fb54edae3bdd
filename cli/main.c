/*
 * main.c - the ptebatch command: which command runs, and the help.
 * Each command lives in a file of its own (cli.h); this table is the
 * whole list, in the order `ptebatch help` prints them.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const struct cli_command *const commands[] = {
	&run_command, &diff_command, &bench_command, &explore_command, NULL,
};

static const struct cli_command *find_command(const char *name)
{
	const struct cli_command *const *c;

	for (c = commands; *c; c++)
		if (!strcmp((*c)->name, name))
			return *c;
	return NULL;
}

/* Every command's usage, one after another. */
static void help(FILE *f)
{
	const struct cli_command *const *c;

	for (c = commands; *c; c++) {
		if (c != commands)
			fputc('\n', f);
		(*c)->usage(f);
	}
}

int main(int argc, char **argv)
{
	const struct cli_command *cmd = argc >= 2 ? find_command(argv[1]) : NULL;
	int ret;

	if (cmd && cmd->takes_arch) {
		command = cmd->name;
		ret = arch_redirect(&argc, argv);
		command = NULL;
		if (ret)
			return ret;
	}
	if (argc < 2) {
		help(stderr);
		return EXIT_USAGE;
	}
	if (cmd)
		return cmd->main(argc - 2, argv + 2);
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "-h")) {
		if (argc > 2) {
			command = argv[1];
			return usage_error("unexpected argument '%s' (help"
					   " takes none)", argv[2]);
		}
		help(stdout);
		return 0;
	}
	return usage_error("unknown command '%s'", argv[1]);
}
