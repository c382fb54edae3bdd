// SPDX-License-Identifier: GPL-2.0-only
/*
 * arch.c - --arch ARCH: the model is compiled once per architecture (as
 * the kernel is), so another architecture is another binary -
 * $(BUILD)/ptebatch for x86_64, $(BUILD)/ARCH/ptebatch for the others.
 * A command that takes --arch is re-run in that binary; bench takes a
 * list and runs each in turn.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/figure.h"
#include "cli/cli.h"
#include "lib/outfile.h"
#include "scenario/vocab.h"

static int bench_each_arch(int argc, char **argv, const char *list);

/*
 * Take the option out of argv (the commands never see it) and, if it
 * names another architecture than this binary's, run that binary with
 * the same arguments.  Returns 0 to go on here.
 */
int arch_redirect(int *argcp, char **argv)
{
	const char *arch = NULL, *self = pb_arch_name();
	char exe[4096], target[4200], *slash;
	int i, j, argc = *argcp;
	ssize_t n;

	for (i = 2; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--arch")) {
			if (i + 1 >= argc)
				return usage_error("--arch needs a value");
			arch = argv[i + 1];
			for (j = i; j + 2 <= argc; j++)
				argv[j] = argv[j + 2];
			argc -= 2;
			i--;
		} else if (!strncmp(argv[i], "--arch=", 7)) {
			arch = argv[i] + 7;
			for (j = i; j + 1 <= argc; j++)
				argv[j] = argv[j + 1];
			argc -= 1;
			i--;
		}
	}
	*argcp = argc;
	if (arch && strchr(arch, ',')) {
		if (strcmp(argv[1], "bench"))
			return usage_error("--arch: one architecture at a time"
					   " (a list is for bench)");
		/* strtok() would skip an empty word: refuse it instead. */
		if (arch[0] == ',' || arch[strlen(arch) - 1] == ',' ||
		    strstr(arch, ",,"))
			return usage_error("--arch: an empty name in '%s'", arch);
		exit(bench_each_arch(argc, argv, arch));
	}
	if (!arch || !strcmp(arch, self))
		return 0;
	if (!in_list(scn_arch_names, arch))
		return unknown_in_list("--arch", "architecture", arch,
				       scn_arch_names);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return usage_error("--arch %s: cannot find this program: %s",
				   arch, strerror(errno));
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	*slash = '\0';
	/* An arm64 binary lives one directory below the x86_64 one. */
	if (strcmp(self, "x86_64") && (slash = strrchr(exe, '/')))
		*slash = '\0';
	if (!strcmp(arch, "x86_64"))
		snprintf(target, sizeof(target), "%s/ptebatch", exe);
	else
		snprintf(target, sizeof(target), "%s/%s/ptebatch", exe, arch);
	if (access(target, X_OK))
		return usage_error("--arch %s: %s is not built (make ARCH=%s)",
				   arch, target, arch);
	argv[argc] = NULL;
	execv(target, argv);
	fprintf(stderr, "ptebatch: --arch %s: %s: %s\n", arch, target,
		strerror(errno));
	return 1;
}

/*
 * bench --arch A,B,...: each architecture's build runs the benchmark in
 * turn, under an "== ARCH" line, so its tables (whose method lines name
 * the arch) stand one after another; --json FILE gets every row of every
 * run (each row carries its "arch").  argv no longer holds --arch.  Each
 * run writes its rows to a temporary file of this one (lib/outfile.h),
 * never to a name beside FILE; FILE is replaced only when every run
 * succeeded.
 */
/* The figures of every arch's rows, gathered in @rows_path. */
static int bench_each_arch_plot(const char *rows_path, const char *plot)
{
	struct fig_rows rows = { 0 };
	char why[800];
	int err;

	err = fig_rows_read_file(&rows, rows_path, why, sizeof(why));
	if (err)
		fprintf(stderr, "ptebatch: --plot: %s\n", why);
	else
		err = fig_draw_all(&rows, plot, NULL, NULL, stderr);
	fig_rows_free(&rows);
	return err ? 1 : 0;
}

/* Append the file @path to @out (each open, either may be NULL). */
static int append_rows(const char *path, FILE *out, FILE *rows)
{
	FILE *in = fopen(path, "r");
	char buf[8192];
	size_t n;

	if (!in)
		return -errno;
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0) {
		if (out && fwrite(buf, 1, n, out) != n)
			break;
		if (rows && fwrite(buf, 1, n, rows) != n)
			break;
	}
	fclose(in);
	return 0;
}

/* One arch's run of @cargv: its exit status (1 when it did not end). */
static int run_one_arch(char **cargv)
{
	int status = 0;
	pid_t parent = getpid(), pid = fork();

	if (pid == 0) {
		/* A run whose parent is gone has no one to take its rows. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(1);
		execv("/proc/self/exe", cargv);
		_exit(127);
	}
	if (pid < 0)
		return 1;
	while (waitpid(pid, &status, 0) != pid)
		if (errno != EINTR)
			return 1;
	if (!WIFEXITED(status))
		return 1;
	return WEXITSTATUS(status);
}

static int bench_each_arch(int argc, char **argv, const char *list)
{
	struct outfile json_out = { 0 }, rows = { 0 }, part = { 0 };
	char *copy = strdup(list), *arch, *save = NULL, why[1200];
	const char *json = NULL, *plot = NULL;
	int i, json_at = -1, worst = 0, extra;

	if (!copy)
		return 1;
	for (i = 2; i < argc; i++) {
		/* --plot is drawn here, from every arch's rows: taken out
		 * of the runs' arguments, which keep their --json. */
		if (!strcmp(argv[i], "--plot") && i + 1 < argc) {
			plot = argv[i + 1];
			memmove(&argv[i], &argv[i + 2],
				(size_t)(argc - i - 1) * sizeof(*argv));
			argc -= 2;
			i--;
			continue;
		}
		if (!strncmp(argv[i], "--plot=", 7)) {
			plot = argv[i] + 7;
			memmove(&argv[i], &argv[i + 1],
				(size_t)(argc - i) * sizeof(*argv));
			argc--;
			i--;
			continue;
		}
		if (!strcmp(argv[i], "--json") && i + 1 < argc)
			json_at = ++i, json = argv[i];
		else if (!strncmp(argv[i], "--json=", 7))
			json_at = i, json = argv[i] + 7;
	}
	for (arch = strtok_r(copy, ",", &save); arch;
	     arch = strtok_r(NULL, ",", &save))
		if (!in_list(scn_arch_names, arch)) {
			/* The message names the word: free its string after. */
			int ret = unknown_in_list("--arch", "architecture",
						  arch, scn_arch_names);

			free(copy);
			return ret;
		}
	free(copy);
	if (plot) {
		size_t n = strlen(plot);

		if (n < 5 || strcmp(plot + n - 4, ".svg"))
			return usage_error("--plot: '%s' must end in .svg", plot);
		if (strchr(plot, '\'') || strchr(plot, '"'))
			return usage_error("--plot: '%s' may not contain a"
					   " quote", plot);
		if (bench_plot_check("--plot", plot, why, sizeof(why)))
			return usage_error("%s", why);
	}
	if (json && outfile_open(&json_out, "--json", json, 0, why,
				 sizeof(why)))
		return usage_error("%s", why);
	/* The rows the figures are drawn from. */
	if (plot && outfile_scratch(&rows, "ptebatch-rows", why, sizeof(why))) {
		outfile_discard(&json_out);
		return usage_error("--plot: %s", why);
	}
	copy = strdup(list);
	for (arch = strtok_r(copy, ",", &save); arch && copy;
	     arch = strtok_r(NULL, ",", &save)) {
		char **cargv = calloc((size_t)argc + 5, sizeof(*cargv)), *eq;
		int status;

		if (!cargv)
			break;
		for (i = 0; i < argc; i++)
			cargv[i] = argv[i];
		extra = 0;
		eq = NULL;
		if (json || plot) {
			if (outfile_scratch(&part, "ptebatch-rows", why,
					    sizeof(why))) {
				fprintf(stderr, "ptebatch: bench: %s\n", why);
				free(cargv);
				worst = 1;
				break;
			}
			if (json_at < 0) {
				cargv[argc + extra++] = "--json";
				cargv[argc + extra++] =
					(char *)outfile_write_path(&part);
			} else if (json == argv[json_at]) {
				cargv[json_at] = (char *)outfile_write_path(&part);
			} else if (asprintf(&eq, "--json=%s",
					    outfile_write_path(&part)) > 0) {
				cargv[json_at] = eq;
			} else {
				outfile_discard(&part);
				free(cargv);
				worst = out_of_memory();
				break;
			}
		}
		cargv[argc + extra] = "--arch";
		cargv[argc + extra + 1] = arch;
		printf("== %s\n", arch);
		fflush(stdout);
		status = run_one_arch(cargv);
		if (status)
			worst = status;
		if (json || plot) {
			if (!status && append_rows(outfile_write_path(&part),
						   json_out.f, rows.f)) {
				fprintf(stderr, "ptebatch: bench: the rows of"
					" %s: %s\n", arch, strerror(errno));
				worst = 1;
			}
			outfile_discard(&part);
		}
		free(eq);
		free(cargv);
	}
	free(copy);
	/* The figures, then the rows: --json is replaced only when every
	 * arch ran and every figure was drawn. */
	if (plot && !worst && fflush(rows.f)) {
		fprintf(stderr, "ptebatch: --plot: the rows: %s\n",
			strerror(errno));
		worst = 1;
	}
	if (plot && !worst)
		worst = bench_each_arch_plot(outfile_write_path(&rows), plot);
	outfile_discard(&rows);
	if (json && worst) {
		outfile_discard(&json_out);
	} else if (json && outfile_commit(&json_out, why, sizeof(why))) {
		fprintf(stderr, "ptebatch: %s\n", why);
		worst = 1;
	}
	return worst;
}
