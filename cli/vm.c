// SPDX-License-Identifier: GPL-2.0-only
/*
 * vm.c - ptebatch vm: kernels of our own (vm/).  `vm build` runs
 * scripts/kernel-build; `vm list` shows the cache; `vm shell` boots one
 * for a person; `vm facts` and `vm exec` run inside a guest.
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

/* What vm run and vm selftests read before a guest boots. */
struct vm_flags {
	const char *spec;		/* the kernel's NAME, NULL: newest */
	struct vm_boot_options boot;	/* run's */
	const char *only[16];		/* selftests' --only PROGs */
	int nr_only;
};

static int set_kernel(void *f, const char *word)
{
	struct vm_flags *fl = f;

	if (fl->spec)
		return usage_error("more than one NAME ('%s' and '%s')",
				   fl->spec, word);
	fl->spec = word;
	return 0;
}

static int set_icount(void *f, const char *v)
{
	(void)v;
	((struct vm_flags *)f)->boot.icount = true;
	return 0;
}

static int set_timeout(void *f, const char *v)
{
	unsigned long s;
	char *end;

	errno = 0;
	s = strtoul(v, &end, 10);
	if (errno || *end || end == v || !s || s > 86400)
		return usage_error("--timeout %s: seconds, from 1 to 86400", v);
	((struct vm_flags *)f)->boot.request_timeout = (unsigned int)s;
	return 0;
}

static int add_only(void *f, const char *v)
{
	struct vm_flags *fl = f;

	if (fl->nr_only == 16)
		return usage_error("--only: 16 at most");
	fl->only[fl->nr_only++] = v;
	return 0;
}

/* scripts/kernel-build reads these: vm build passes its arguments on. */
static const struct cli_option vm_build_options[] = {
	{ .name = "--arch", .arg = "x86_64|arm64",
	  .help = "the kernel's architecture (x86_64 by default)" },
	{ .name = "--granule", .arg = "4k|16k|64k",
	  .help = "its page size: 4k (the default, and x86_64's only), 16k or"
		  " 64k" },
	{ .name = "--patches", .arg = "DIR",
	  .help = "apply the *.patch files of DIR in name order (none by"
		  " default)" },
	{ .name = "--source", .arg = "TARBALL",
	  .help = "build this kernel source instead of fetching Debian's" },
	{ .name = "--jobs", .arg = "N",
	  .help = "how many compiler jobs run at once (one per CPU by"
		  " default)" },
	{ .name = NULL },
};

static const struct cli_option vm_run_options[] = {
	{ .name = "--icount", .set = set_icount,
	  .help = "the guest's clock counts instructions" },
	{ .name = "--timeout", .arg = "S", .set = set_timeout,
	  .help = "the guest is called hung after S seconds (default 600, at"
		  " most 86400)" },
	{ .name = NULL },
};

static const struct cli_option vm_selftests_options[] = {
	{ .name = "--only", .arg = "PROG", .set = add_only, .repeat = true,
	  .help = "run that test alone (repeatable)" },
	{ .name = NULL },
};

static const struct cli_form vm_forms[] = {
	{ .before = "build", .options = vm_build_options,
	  .about = "fetch Debian's linux-source-7.3 (or take a source"
		   " tarball), apply a patch series, configure from"
		   " kernel/config/ and build into"
		   " ~/.cache/ptebatch/kernels/NAME (NAME ="
		   " VERSION[+SERIES]-ARCH-GRANULE-HASH; ccache; 20+ min the"
		   " first time on 2 cores); the same as"
		   " scripts/kernel-build" },
	{ .before = "list", .about = "the built kernels, newest first" },
	{ .before = "shell [NAME]",
	  .about = "boot NAME (the newest x86_64 kernel by default) with a"
		   " shell on this terminal; exit the shell to power off" },
	{ .before = "run [NAME]", .options = vm_run_options,
	  .after = "-- PROG [ARG]...",
	  .about = "boot NAME, run PROG (a path of this machine, which the"
		   " guest sees read-only; an arm64 guest at /host) with ARGs"
		   " as root, print its output and exit with its status" },
	{ .before = "selftests [NAME]", .options = vm_selftests_options,
	  .about = "build the kernel's own tools/testing/selftests/mm (same"
		   " source, same patches) and run cow, gup_test,"
		   " gup_longterm, mremap_test, split_huge_page_test,"
		   " transhuge-stress (20 s), uffd-unit-tests and more, and"
		   " kernel/selftests' seeds_hazards, in one guest (x86_64 or"
		   " arm64): their totals per test, and any WARNING, BUG or bad"
		   " page in the kernel's log" },
};

static const struct cli_help vm_help = {
	.name = "vm",
	CLI_FORMS(vm_forms),
	.about = "kernels of our own, booted under QEMU for --backend"
		 " vm[:NAME]",
	.epilogue = "NAME is a cache name or short: 7.3, 7.3+seeds,"
		    " 7.3-arm64-4k (newest match).\n"
		    "The cache is $PTEBATCH_CACHE if set.\n",
};

static void vm_usage(FILE *f)
{
	cli_usage(f, &vm_help);
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

/*
 * vm run: one program in a fresh guest, for a measurement that is not a
 * scenario (scripts/redis-faults).  The guest is thrown away after it,
 * with whatever the program changed in it.
 */
static int vm_run_main(int argc, char **argv)
{
	struct vm_flags fl = { .boot = { .request_timeout = 600 } };
	const char *root;
	char why[2048], cwd[PATH_MAX], **gargv;
	struct vm_guest *g;
	struct vm_kernel k;
	struct vm_result r;
	int i, n = 0, ret;

	/* Its own flags and NAME before "--", PROG and its ARGs after. */
	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		;
	ret = cli_parse(vm_run_options, &fl, set_kernel, i - 1, argv + 1);
	if (ret)
		return ret;
	if (i + 1 >= argc)
		return usage_error("run: no program after --");
	ret = 1;
	if (vm_kernel_find(fl.spec, &k, why, sizeof(why))) {
		fprintf(stderr, "ptebatch: vm run: %s\n", why);
		return 4;
	}
	gargv = calloc((size_t)(argc - i) + 4, sizeof(*gargv));
	if (!gargv)
		return out_of_memory();
	gargv[n++] = "ptebatch";
	gargv[n++] = "vm";
	gargv[n++] = "exec";
	for (i++; i < argc; i++)
		gargv[n++] = argv[i];
	gargv[n] = NULL;
	/* An arm64 guest's root is its initramfs: the host's is at /host. */
	root = strcmp(k.arch, "arm64") ? "/" : "/host";
	if (!getcwd(cwd, sizeof(cwd)) || strcmp(root, "/"))
		snprintf(cwd, sizeof(cwd), "%s", root);
	g = vm_boot(&k, &fl.boot, why, sizeof(why));
	if (!g) {
		fprintf(stderr, "ptebatch: vm run: %s\n", why);
		free(gargv);
		return 1;
	}
	if (vm_exec(g, gargv, cwd, NULL, 0, gargv[3], &r, why, sizeof(why))) {
		fprintf(stderr, "ptebatch: vm run: %s\n", why);
	} else {
		fwrite(r.out, 1, r.out_len, stdout);
		fwrite(r.err, 1, r.err_len, stderr);
		ret = WIFEXITED(r.status) ? WEXITSTATUS(r.status) :
					    128 + WTERMSIG(r.status);
		vm_result_free(&r);
	}
	vm_shutdown(g, false);
	free(gargv);
	return ret;
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

/*
 * The mm selftests `vm selftests` runs, as run_vmtests.sh runs them
 * (hugetlb cases left out: the guest reserves no huge pages), each
 * bounded: transhuge-stress for 20 s.
 */
static const char *const selftests[][8] = {
	{ "cow" },
	{ "gup_test", "-u", "-n", "1" },
	{ "gup_test", "-u", "-n", "-1" },
	{ "gup_test", "-a", "-n", "1" },
	{ "gup_test", "-a", "-n", "-1" },
	{ "gup_test", "-ct", "-F", "0x1", "0", "19", "0x1000" },
	{ "gup_longterm" },
	{ "mremap_test" },
	{ "split_huge_page_test" },
	{ "transhuge-stress", "-d", "20" },
	{ "uffd-unit-tests" },
	{ "ksm_functional_tests" },
	{ "madv_populate" },
	{ "soft-dirty" },
	{ "pagemap_ioctl" },
	{ "mkdirty" },
	{ "khugepaged", "-s", "2" },
	/* ours, kernel/selftests/: the seeds series' hazards */
	{ "seeds_hazards" },
	{ NULL },
};

/*
 * What a kernel of ours must never log: DEBUG_VM's and PAGE_TABLE_CHECK's
 * assertions (WARNING, BUG), an oops, a bad page.  Read from the guest's
 * kernel log after each test (`vm-helper kmsg`), at every log level: the
 * console gets loglevel=4, so a WARNING never reaches it.
 */
static const char *const kmsg_marks[] = {
	"WARNING:", "BUG:", "Oops", "page_table_check", "Bad page", NULL
};

struct totals {
	long pass, fail, xfail, xpass, skip, error;
	bool have;
};

/* kselftest's "# Totals: pass:N fail:N xfail:N xpass:N skip:N error:N". */
static void read_totals(const char *out, struct totals *t)
{
	const char *c = out ? strstr(out, "# Totals: ") : NULL;

	memset(t, 0, sizeof(*t));
	if (c && sscanf(c, "# Totals: pass:%ld fail:%ld xfail:%ld xpass:%ld "
			"skip:%ld error:%ld", &t->pass, &t->fail, &t->xfail,
			&t->xpass, &t->skip, &t->error) == 6)
		t->have = true;
}

/*
 * The lines of @log that carry a kmsg_marks[] mark, printed under @what;
 * their number.
 */
static int kmsg_flagged(const char *log, const char *what)
{
	const char *line = log;
	int n = 0;

	while (line && *line) {
		const char *end = strchr(line, '\n');
		int len = end ? (int)(end - line) : (int)strlen(line);
		int i;

		for (i = 0; kmsg_marks[i]; i++) {
			const char *hit = memmem(line, (size_t)len, kmsg_marks[i],
						 strlen(kmsg_marks[i]));

			if (hit) {
				printf("# kernel log (%s): %.*s\n", what, len,
				       line);
				n++;
				break;
			}
		}
		line = end ? end + 1 : NULL;
	}
	return n;
}

/* Run one program in the guest (`vm exec`); 0 or -1 with @why. */
static int guest_exec(struct vm_guest *g, const char *const *args,
		      const char *cwd, struct vm_result *r, char *why,
		      size_t whylen)
{
	char *argv[16];
	int n = 0;

	argv[n++] = "ptebatch";
	argv[n++] = "vm";
	argv[n++] = "exec";
	while (*args && n < 15)
		argv[n++] = (char *)*args++;
	argv[n] = NULL;
	return vm_exec(g, argv, cwd, NULL, 0, argv[3], r, why, whylen);
}

/*
 * Each test's whole output, kept beside the kernel for reading after:
 * kernels/NAME/selftests-out/N-PROG.txt (the totals alone do not say
 * which case failed).
 */
static void save_output(const struct vm_kernel *k, int i, const char *cmd,
			const struct vm_result *r, const char *kmsg)
{
	char path[PATH_MAX + 64];
	FILE *f;

	snprintf(path, sizeof(path), "%.3900s/selftests-out", k->dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%.3900s/selftests-out/%02d-%s.txt",
		 k->dir, i, selftests[i][0]);
	f = fopen(path, "we");
	if (!f)
		return;
	fprintf(f, "# %s\n", cmd);
	fwrite(r->out, 1, r->out_len, f);
	fwrite(r->err, 1, r->err_len, f);
	if (kmsg)
		fprintf(f, "# the kernel's log during the test:\n%s", kmsg);
	fclose(f);
}

/*
 * The guest's kernel log since the last read (cleared): malloc'd, or
 * NULL if vm-helper could not read it.  -1 if the guest stopped.
 */
static int guest_kmsg(struct vm_guest *g, const char *helper, char **log,
		      char *why, size_t whylen)
{
	const char *args[] = { helper, "kmsg", NULL };
	struct vm_result r;

	*log = NULL;
	if (guest_exec(g, args, "/", &r, why, whylen))
		return -1;
	if (WIFEXITED(r.status) && !WEXITSTATUS(r.status)) {
		*log = r.out;
		r.out = NULL;
	}
	vm_result_free(&r);
	return 0;
}

/* Is @prog wanted: no --only, or named by one. */
static bool selftest_wanted(const char *prog, const char *const only[],
			    int nr_only)
{
	int i;

	for (i = 0; i < nr_only; i++)
		if (!strcmp(only[i], prog))
			return true;
	return !nr_only;
}

static int vm_selftests(int argc, char **argv)
{
	struct vm_boot_options bo = { .mem_mb = 4096 };
	char script[PATH_MAX + 32], dir[PATH_MAX + 32], why[2048];
	char helper[PATH_MAX + 32];
	char *build[64], *log;
	const char *root, *const *only;
	struct vm_flags fl = { 0 };
	struct vm_guest *g;
	struct vm_kernel k;
	struct vm_result r;
	int i, n, status, failed = 0, nr_only, flagged = 0;
	int ret = cli_parse(vm_selftests_options, &fl, set_kernel, argc - 1,
			    argv + 1);
	pid_t pid;

	if (ret)
		return ret;
	only = fl.only;
	nr_only = fl.nr_only;
	if (vm_kernel_find(fl.spec, &k, why, sizeof(why))) {
		fprintf(stderr, "ptebatch: vm selftests: %s\n", why);
		return 4;
	}
	for (i = 0; i < nr_only; i++) {
		for (n = 0; selftests[n][0]; n++)
			if (!strcmp(selftests[n][0], only[i]))
				break;
		if (!selftests[n][0])
			return usage_error("--only %s: not a test vm selftests "
					   "runs", only[i]);
	}
	if (kernel_build_script(script, sizeof(script))) {
		fprintf(stderr, "ptebatch: vm selftests: cannot find "
			"scripts/ beside this binary's tree\n");
		return 1;
	}
	/* scripts/kernel-selftests beside scripts/kernel-build */
	strcpy(strrchr(script, '/'), "/kernel-selftests");
	/* It builds what is named (arm64 cross-builds only those). */
	n = 0;
	build[n++] = script;
	build[n++] = k.dir;
	for (i = 0; selftests[i][0] && n < 61; i++)
		if ((!i || strcmp(selftests[i][0], selftests[i - 1][0])) &&
		    selftest_wanted(selftests[i][0], only, nr_only))
			build[n++] = (char *)selftests[i][0];
	build[n++] = "vm-helper";
	build[n] = NULL;
	if (posix_spawn(&pid, script, NULL, NULL, build, environ) ||
	    waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return 1;
	/* An arm64 guest's root is its initramfs: the host's is at /host. */
	root = strcmp(k.arch, "arm64") ? "" : "/host";
	snprintf(helper, sizeof(helper), "%s%s/selftests/mm/vm-helper", root,
		 k.dir);
	g = vm_boot(&k, &bo, why, sizeof(why));
	if (!g) {
		fprintf(stderr, "ptebatch: vm selftests: %s\n", why);
		return 1;
	}
	printf("# vm selftests on %s (tools/testing/selftests/mm of its "
	       "source, and kernel/selftests; each test's output and the "
	       "kernel's log in %s/selftests-out/)\n", k.name, k.dir);
	/* The boot's own messages, before any test. */
	if (guest_kmsg(g, helper, &log, why, sizeof(why)))
		goto stopped;
	if (!log)
		printf("# cannot read the guest's kernel log (vm-helper kmsg)\n");
	flagged += kmsg_flagged(log, "boot");
	free(log);
	/* cow's PAGEOUT cases need swap: a swap file on the scratch disk. */
	{
		const char *swap[] = { helper, "swapon", "/var/tmp/swap", "1024",
				       NULL };

		if (guest_exec(g, swap, "/", &r, why, sizeof(why)))
			goto stopped;
		if (!WIFEXITED(r.status) || WEXITSTATUS(r.status))
			printf("# no swap: %.*s", (int)r.err_len, r.err);
		vm_result_free(&r);
	}
	printf("%-34s %6s %6s %6s %6s %6s %6s  %s\n", "TEST", "pass", "fail",
	       "xfail", "xpass", "skip", "error", "exit");
	for (i = 0; selftests[i][0]; i++) {
		const char *args[8];
		char cmd[256] = "";
		struct totals t;
		int j;

		if (!selftest_wanted(selftests[i][0], only, nr_only))
			continue;
		snprintf(dir, sizeof(dir), "%s/selftests/mm/%s", k.dir,
			 selftests[i][0]);
		if (access(dir, X_OK))
			continue;	/* did not build here: the log says */
		snprintf(dir, sizeof(dir), "%s%s/selftests/mm/%s", root, k.dir,
			 selftests[i][0]);
		args[0] = dir;
		for (j = 1; j < 8 && selftests[i][j]; j++) {
			args[j] = selftests[i][j];
		}
		args[j] = NULL;
		for (j = 0; selftests[i][j]; j++)
			snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd),
				 "%s%s", j ? " " : "", selftests[i][j]);
		if (guest_exec(g, args, "/var/tmp", &r, why, sizeof(why))) {
			printf("%-34s the guest stopped: %s\n", cmd, why);
			failed = 1;
			break;
		}
		if (guest_kmsg(g, helper, &log, why, sizeof(why))) {
			vm_result_free(&r);
			goto stopped;
		}
		save_output(&k, i, cmd, &r, log);
		read_totals(r.out, &t);
		if (t.have)
			printf("%-34s %6ld %6ld %6ld %6ld %6ld %6ld  %d\n", cmd,
			       t.pass, t.fail, t.xfail, t.xpass, t.skip,
			       t.error, WIFEXITED(r.status) ?
			       WEXITSTATUS(r.status) : 128 + WTERMSIG(r.status));
		else
			printf("%-34s %41s  %d\n", cmd, "(no totals)",
			       WIFEXITED(r.status) ? WEXITSTATUS(r.status) :
			       128 + WTERMSIG(r.status));
		flagged += kmsg_flagged(log, cmd);
		free(log);
		failed |= t.fail || t.error || !WIFEXITED(r.status) ||
			  (WEXITSTATUS(r.status) && WEXITSTATUS(r.status) != 4);
		fflush(stdout);
		vm_result_free(&r);
	}
	if (flagged)
		printf("# kernel log: %d line%s with WARNING:, BUG:, Oops, "
		       "page_table_check or Bad page (above)\n", flagged,
		       flagged == 1 ? "" : "s");
	else
		printf("# kernel log: no WARNING:, BUG:, Oops, page_table_check"
		       " or Bad page\n");
	vm_shutdown(g, false);
	return failed || flagged;
stopped:
	printf("# the guest stopped: %s\n", why);
	vm_shutdown(g, true);
	return 1;
}

/* Inside a guest: run PROG with ARGS (vm selftests' programs). */
static int vm_exec_main(int argc, char **argv)
{
	if (argc < 2)
		return usage_error("exec: PROG [ARG]...");
	execv(argv[1], argv + 1);
	fprintf(stderr, "ptebatch: vm exec: %s: %s\n", argv[1],
		strerror(errno));
	return 127;
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
	if (!strcmp(argv[0], "run"))
		return vm_run_main(argc, argv);
	if (!strcmp(argv[0], "facts"))
		return vm_facts();
	if (!strcmp(argv[0], "selftests"))
		return vm_selftests(argc, argv);
	if (!strcmp(argv[0], "exec"))
		return vm_exec_main(argc, argv);
	if (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help")) {
		vm_usage(stdout);
		return 0;
	}
	return usage_error("unknown vm command '%s' (build, list, shell, run,"
			   " selftests)",
			   argv[0]);
}

const struct cli_command vm_command = {
	.name = "vm",
	.main = vm_main,
	.usage = vm_usage,
};
