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
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/figure.h"
#include "cli/cli.h"

static int bench_each_arch(int argc, char **argv, const char *list);

/* Every architecture the model is built for (make ARCH=...). */
static const char *const model_arches[] = {
	"x86_64", "x86-pae", "arm64-4k", "arm64-16k", "arm64-64k", NULL,
};

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
	if (!in_list(model_arches, arch))
		return unknown_in_list("--arch", "architecture", arch,
				       model_arches);
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
 * run (each row carries its "arch").  argv no longer holds --arch.
 */
/* The figures of every arch's rows, gathered in @json. */
static int bench_each_arch_plot(const char *json, const char *plot)
{
	struct fig_rows rows = { 0 };
	char why[800];
	int err;

	err = fig_rows_read_file(&rows, json, why, sizeof(why));
	if (err)
		fprintf(stderr, "ptebatch: --plot: %s\n", why);
	else
		err = fig_draw_all(&rows, plot, NULL, NULL, stderr);
	fig_rows_free(&rows);
	return err ? 1 : 0;
}

static int bench_each_arch(int argc, char **argv, const char *list)
{
	char *copy = strdup(list), *arch, *save = NULL, part[4200];
	char plot_rows[] = "/tmp/ptebatch-rows-XXXXXX";
	const char *json = NULL, *plot = NULL;
	bool cargv_json = false;
	int i, json_at = -1, worst = 0;
	FILE *out = NULL;

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
		if (!in_list(model_arches, arch)) {
			free(copy);
			return unknown_in_list("--arch", "architecture", arch,
					       model_arches);
		}
	free(copy);
	if (plot) {
		char why[512];
		size_t n = strlen(plot);

		if (n < 5 || strcmp(plot + n - 4, ".svg"))
			return usage_error("--plot: '%s' must end in .svg", plot);
		if (strchr(plot, '\'') || strchr(plot, '"'))
			return usage_error("--plot: '%s' may not contain a"
					   " quote", plot);
		if (bench_plot_check(plot, why, sizeof(why)))
			return usage_error("--plot: %s", why);
		if (!json) {
			/* The rows the figures are drawn from. */
			int fd = mkstemp(plot_rows);

			if (fd < 0)
				return usage_error("--plot: %s: %s", plot_rows,
						   strerror(errno));
			close(fd);
			json = plot_rows;
			cargv_json = true;
		}
	}
	copy = strdup(list);
	if (json && !(out = fopen(json, "w"))) {
		int ret = usage_error("--json: %s: %s", json, strerror(errno));

		free(copy);
		if (cargv_json)
			unlink(plot_rows);
		return ret;
	}
	for (arch = strtok_r(copy, ",", &save); arch && copy;
	     arch = strtok_r(NULL, ",", &save)) {
		char **cargv = calloc((size_t)argc + 5, sizeof(*cargv));
		int status = 0;
		pid_t pid;

		if (!cargv)
			break;
		for (i = 0; i < argc; i++)
			cargv[i] = argv[i];
		snprintf(part, sizeof(part), "%s.%s", json ? json : "", arch);
		if (cargv_json) {
			cargv[argc++] = "--json";
			cargv[argc++] = part;
		}
		if (json_at >= 0)
			cargv[json_at] = json == argv[json_at] ? part : NULL;
		if (json_at >= 0 && !cargv[json_at]) {
			/* --json=FILE: the same, as --json=FILE.ARCH */
			static char eq[4210];

			snprintf(eq, sizeof(eq), "--json=%s", part);
			cargv[json_at] = eq;
		}
		cargv[argc] = "--arch";
		cargv[argc + 1] = arch;
		if (cargv_json)
			argc -= 2;
		printf("== %s\n", arch);
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			execv("/proc/self/exe", cargv);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid)
			status = 1 << 8;
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			worst = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
		if (out) {
			FILE *in = fopen(part, "r");
			char buf[8192];
			size_t n;

			while (in && (n = fread(buf, 1, sizeof(buf), in)) > 0)
				fwrite(buf, 1, n, out);
			if (in)
				fclose(in);
			unlink(part);
		}
		free(cargv);
	}
	free(copy);
	if (out && fclose(out))
		worst = worst ? worst : 1;
	if (plot && !worst)
		worst = bench_each_arch_plot(json, plot);
	if (cargv_json)
		unlink(plot_rows);
	return worst;
}

