// SPDX-License-Identifier: GPL-2.0-only
/*
 * vm.c - ptebatch vm: kernels of our own (vm/).  `vm build` runs
 * scripts/kernel-build; `vm list` shows the cache; `vm shell` boots one
 * for a person; `vm facts` and `vm init` run inside a guest.
 */
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/host.h"
#include "cli/cli.h"
#include "vm/vm.h"

extern char **environ;

static void vm_usage(FILE *f)
{
	fputs("usage: ptebatch vm build [--arch x86_64|arm64] [--granule"
	      " 4k|16k|64k]\n"
	      "                         [--patches DIR] [--source TARBALL]"
	      " [--jobs N]\n"
	      "       ptebatch vm list\n"
	      "       ptebatch vm shell [NAME]\n"
	      "\n"
	      "vm        kernels of our own, booted under QEMU for"
	      " --backend vm[:NAME]\n"
	      "  build   fetch Debian's linux-source-7.3 (or take --source),"
	      " apply the\n"
	      "          *.patch files of --patches DIR in name order,"
	      " configure from\n"
	      "          kernel/config/ and build into"
	      " ~/.cache/ptebatch/kernels/NAME\n"
	      "          (NAME = VERSION[+SERIES]-ARCH-GRANULE-HASH; ccache;"
	      " about 23 min\n"
	      "          the first time on 2 cores); the same as"
	      " scripts/kernel-build\n"
	      "  list    the built kernels, newest first\n"
	      "  shell   boot NAME (the newest x86_64 kernel by default)"
	      " with a shell\n"
	      "          on this terminal; exit the shell to power off\n"
	      "NAME is a cache name or short: 7.3, 7.3+seeds, 7.3-arm64-4k"
	      " (newest match).\n"
	      "The cache is $PTEBATCH_CACHE if set.\n", f);
}

/* scripts/kernel-build of the tree this binary was built in. */
static int kernel_build_script(char *buf, size_t size)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct stat st;
	int up;

	if (n < 0)
		return -1;
	exe[n] = '\0';
	/* build/ptebatch, or build/ARCH/ptebatch: up to two levels. */
	for (up = 0; up < 3; up++) {
		char *slash = strrchr(exe, '/');

		if (!slash)
			return -1;
		*slash = '\0';
		if (snprintf(buf, size, "%s/scripts/kernel-build", exe) <
			    (int)size &&
		    !stat(buf, &st) && S_ISREG(st.st_mode))
			return 0;
	}
	return -1;
}

static int vm_build(int argc, char **argv)
{
	char script[PATH_MAX + 32];
	char **args = calloc((size_t)argc + 2, sizeof(*args));
	int i, status;
	pid_t pid;

	if (!args)
		return out_of_memory();
	if (kernel_build_script(script, sizeof(script))) {
		free(args);
		fprintf(stderr, "ptebatch: vm build: cannot find "
			"scripts/kernel-build beside this binary's tree\n");
		return 1;
	}
	/* Its options are its own (it says what it refuses, exit 2). */
	args[0] = script;
	for (i = 1; i < argc; i++)
		args[i] = argv[i];
	args[argc] = NULL;
	if (posix_spawn(&pid, script, NULL, NULL, args, environ)) {
		free(args);
		fprintf(stderr, "ptebatch: vm build: cannot run %s\n", script);
		return 1;
	}
	free(args);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static int vm_list(int argc, char **argv)
{
	struct vm_kernel *v;
	char cache[PATH_MAX];
	int n, i;

	(void)argv;
	if (argc > 1)
		return usage_error("list takes no arguments");
	n = vm_kernels_list(&v);
	if (n < 0) {
		fprintf(stderr, "ptebatch: vm list: %s\n", strerror(errno));
		return 1;
	}
	if (vm_cache_dir(cache, sizeof(cache)))
		cache[0] = '\0';
	if (!n) {
		printf("no kernel is built in %s/kernels (ptebatch vm build)\n",
		       cache);
		return 0;
	}
	printf("%-40s %-8s %-7s %-7s %-20s %8s  %s\n", "NAME", "VERSION",
	       "ARCH", "GRANULE", "BUILT", "BUILD_S", "PATCHES");
	for (i = 0; i < n; i++)
		printf("%-40s %-8s %-7s %-7s %-20s %8ld  %s\n", v[i].name,
		       v[i].version, v[i].arch, v[i].granule, v[i].built,
		       v[i].build_seconds,
		       v[i].patches[0] ? v[i].patches : "-");
	free(v);
	return 0;
}

static int vm_shell_main(int argc, char **argv)
{
	struct vm_boot_options o = { 0 };
	struct vm_kernel k;
	char why[1024];

	if (argc > 2)
		return usage_error("shell takes one NAME at most");
	if (vm_kernel_find(argc > 1 ? argv[1] : NULL, &k, why, sizeof(why))) {
		fprintf(stderr, "ptebatch: vm shell: %s\n", why);
		return 1;
	}
	return vm_shell(&k, &o);
}

/* Inside a guest: the facts diff configures the model with (host.h). */
static int vm_facts(void)
{
	struct host_facts h;
	char line[1024];

	host_probe(&h);
	host_facts_line(&h, line, sizeof(line));
	printf("zero_page %d\nline %s\n", h.zero_page, line);
	return 0;
}

static int vm_main(int argc, char **argv)
{
	command = "vm";
	if (argc < 1)
		return usage_error("which: build, list or shell?");
	if (!strcmp(argv[0], "build"))
		return vm_build(argc, argv);
	if (!strcmp(argv[0], "list"))
		return vm_list(argc, argv);
	if (!strcmp(argv[0], "shell"))
		return vm_shell_main(argc, argv);
	if (!strcmp(argv[0], "facts"))
		return vm_facts();
	if (!strcmp(argv[0], "init"))
		return vm_guest_init(argc, argv);
	if (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help")) {
		vm_usage(stdout);
		return 0;
	}
	return usage_error("unknown vm command '%s' (build, list, shell)",
			   argv[0]);
}

const struct cli_command vm_command = {
	.name = "vm",
	.main = vm_main,
	.usage = vm_usage,
};
