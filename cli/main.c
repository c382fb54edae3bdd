// SPDX-License-Identifier: GPL-2.0-only
/*
 * main.c - the ptebatch command: which command runs, and the help.
 * Each command lives in a file of its own (cli.h); this table is the
 * whole list, in the order `ptebatch help` prints them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "vm/vm.h"

static const struct cli_command *const commands[] = {
	&run_command, &diff_command, &bench_command, &explore_command,
	&record_command, &calibrate_command, &predict_command, &plot_command,
	&vm_command,
	NULL,
};

static const struct cli_command *find_command(const char *name)
{
	const struct cli_command *const *c;

	for (c = commands; *c; c++)
		if (!strcmp((*c)->name, name))
			return *c;
	return NULL;
}

/* Every command's usage, one after another (or only its rows, cli.h). */
static void help(FILE *f)
{
	const struct cli_command *const *c;

	for (c = commands; *c; c++) {
		if (c != commands && !cli_usage_rows)
			fputc('\n', f);
		(*c)->usage(f);
	}
}

/* "--help" or "-h" among a command's arguments (before a "--"). */
static bool wants_help(int argc, char **argv)
{
	int i;

	for (i = 2; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return true;
	return false;
}

/*
 * What a command printed must reach its reader: a stdout that cannot be
 * written (a full disk, /dev/full) fails a command that otherwise
 * succeeded.  One that failed has said why already.
 */
static int flush_output(int ret)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return ret;
	if (!ret)
		fprintf(stderr, "ptebatch: error writing standard output: %s\n",
			strerror(errno ? errno : EIO));
	return ret ? ret : 1;
}

static int dispatch(int argc, char **argv)
{
	const struct cli_command *cmd = argc >= 2 ? find_command(argv[1]) : NULL;
	int ret;

	if (cmd && wants_help(argc, argv)) {
		cmd->usage(stdout);
		return 0;
	}
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
		/* Each option row, for tests/cli-errors.sh: not in the help. */
		if (argc == 3 && !strcmp(argv[2], "--list-options")) {
			cli_usage_rows = true;
		} else if (argc > 2) {
			command = argv[1];
			return usage_error("unexpected argument '%s' (help"
					   " takes none)", argv[2]);
		}
		help(stdout);
		return 0;
	}
	return usage_error("unknown command '%s'", argv[1]);
}

int main(int argc, char **argv)
{
	/*
	 * A guest's PID 1 (vm/guest.c): the kernel starts us with what it
	 * did not understand on its command line as arguments (no5lvl, say),
	 * so the guest is told by PTEBATCH_VM=agent|shell in the
	 * environment, which the kernel sets from its command line.
	 */
	if (getpid() == 1 && getenv("PTEBATCH_VM"))
		return vm_guest_init(getenv("PTEBATCH_VM"));
	return flush_output(dispatch(argc, argv));
}
