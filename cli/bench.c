// SPDX-License-Identifier: GPL-2.0-only
/*
 * bench.c - ptebatch bench: the seed tables (bench/), on the model and on
 * this machine's kernel.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/figure.h"
#include "calibrate/calib.h"
#include "cli/cli.h"
#include "lib/outfile.h"
#include "scenario/run.h"
#include "scenario/scenario.h"
#include "vm/vm.h"

/* The seed tables first (bench_main() indexes them), then replay. */
static const char *const bench_names[] = { "gup", "cow", "mprotect", "all",
					   "replay", NULL };
static const char *const bench_backends[] = { "model", "kernel", "both",
					      NULL };

struct bench_flags {
	struct bench_opts o;
	const char *name;
	const char *json;
	const char *calibration;	/* --calibration, NULL: the default */
	bool size_given;
	/* replay's FILE operands, in order (at most argc of them) */
	const char **files;
	int nr_files;
	const char *vm_spec;	/* --backend vm[:NAME]: the NAME, or "" */
};

static int set_backend(void *f, const char *v)
{
	struct bench_opts *o = &((struct bench_flags *)f)->o;

	((struct bench_flags *)f)->vm_spec = vm_backend_spec(v);
	if (((struct bench_flags *)f)->vm_spec) {
		o->backend = BENCH_KERNEL;
		return 0;
	}
	if (!in_list(bench_backends, v))
		return unknown_in_list("--backend", "backend", v, bench_backends);
	o->backend = !strcmp(v, "model") ? BENCH_MODEL :
		     !strcmp(v, "kernel") ? BENCH_KERNEL : BENCH_BOTH;
	return 0;
}

static int set_size(void *f, const char *v)
{
	char why[256];
	unsigned long n;

	if (scenario_parse_number(v, &n) || !n)
		return usage_error("--size: bad size '%s' (e.g. 64M or 1G)", v);
	if (bench_check_size(n, why, sizeof(why)))
		return usage_error("--size: '%s' %s", v, why);
	((struct bench_flags *)f)->o.size = n;
	((struct bench_flags *)f)->size_given = true;
	return 0;
}

static int set_reps(void *f, const char *v)
{
	return reps_flag(v, &((struct bench_flags *)f)->o.reps);
}

static int set_quick(void *f, const char *v)
{
	((struct bench_flags *)f)->o.quick = true;
	return 0;
}

static int set_json(void *f, const char *v)
{
	if (!*v)
		return usage_error("--json: empty file name");
	((struct bench_flags *)f)->json = v;
	return 0;
}

static int set_plot(void *f, const char *v)
{
	size_t len = strlen(v);

	if (len < 5 || strcmp(v + len - 4, ".svg"))
		return usage_error("--plot: '%s' must end in .svg", v);
	((struct bench_flags *)f)->o.plot = v;
	return 0;
}

static int set_calibration(void *f, const char *v)
{
	if (!*v)
		return usage_error("--calibration: empty file name");
	((struct bench_flags *)f)->calibration = v;
	return 0;
}

static int set_name(void *f, const char *word)
{
	struct bench_flags *fl = f;

	/* No NAME starts with '-': a lone "-" is a mistyped option. */
	if (word[0] == '-')
		return usage_error("unknown option '%s'", word);
	if (fl->name && !strcmp(fl->name, "replay")) {
		fl->files[fl->nr_files++] = word;
		return 0;
	}
	if (fl->name)
		return usage_error("more than one NAME ('%s' and '%s')",
				   fl->name, word);
	if (!in_list(bench_names, word))
		return unknown_in_list("NAME", "benchmark", word, bench_names);
	fl->name = word;
	return 0;
}

/* The synopsis lines: a seed table, or replay's scenarios. */
enum { BENCH_SEEDS = CLI_FORM(0), BENCH_REPLAY = CLI_FORM(1) };

static const struct cli_option bench_options[] = {
	{ .name = "--backend", .arg = "NAME", .set = set_backend,
	  .help = "model, kernel (this machine, as root) or both (the"
		  " default), or vm[:NAME]: the kernel's columns in a QEMU"
		  " guest of a kernel of our own (ptebatch vm list)" },
	{ .name = "--arch", .arg = "ARCH",
	  .help = "the model's architecture (see 'run'), or a list A,B,...:"
		  " each in turn, under an \"== ARCH\" line; the kernel columns"
		  " run only where it is this machine's (x86_64)" },
	{ .name = "--size", .arg = "SIZE", .set = set_size,
	  .forms = BENCH_SEEDS,
	  .help = "region size, a multiple of {pmd}, e.g. 1G (default: the"
		  " seeds' sizes; at most {bench_max_size} and a quarter of"
		  " this machine's memory; not for replay)" },
	{ .name = "--reps", .arg = "N", .set = set_reps,
	  .help = "timed repetitions, 1 to " CLI_STR(BENCH_MAX_REPS)
		  " (default 15 for gup, 5 for cow, mprotect and replay),"
		  " after one warm-up" },
	{ .name = "--quick", .set = set_quick,
	  .help = "small sizes, few reps: a smoke test (replay: 1 rep)" },
	{ .name = "--json", .arg = "FILE", .set = set_json,
	  .help = "every row as one JSON object per line" },
	{ .name = "--plot", .arg = "FILE.svg", .set = set_plot,
	  .help = "draw the tables with gnuplot" },
	{ .name = "--calibration", .arg = "FILE", .set = set_calibration,
	  .help = "the costs (ptebatch calibrate) of the \"predicted kernel\""
		  " column of every model row; default this machine's"
		  " ({calibration}) when it exists, else the one shipped for"
		  " this architecture; without one the column is left out" },
	{ .name = NULL },
};

static const struct cli_form bench_forms[] = {
	{ .before = "NAME" },
	{ .before = "replay FILE.scn[.gz]..." },
};

static const struct cli_help bench_help = {
	.name = "bench",
	.options = bench_options,
	CLI_FORMS(bench_forms),
	.about = "measure the seed tables: NAME is gup, cow, mprotect or all;"
		 " replay runs each scenario (a recorded trace) under each"
		 " folio size - the base page ({page}), those of 16K, 64K and"
		 " 1M that are mTHP sizes here, the PMD size ({pmd}) - (its own"
		 " mthp lines replaced) and the presets baseline, upstream,"
		 " seeds and seeds+wp_reuse_max=512, and on the kernel",
	.epilogue = "exit status: 0 ok, 1 a benchmark failed, 2 bad usage (then"
		    " nothing runs),\n"
		    "             4 skipped: the kernel backend without root\n",
};

static void bench_usage(FILE *f)
{
	cli_usage(f, &bench_help);
}

/*
 * What can only be checked on this machine, before anything runs: the
 * --plot file can be written and gnuplot is there (else a long run would
 * end without its plot), and the --json file opens (lib/outfile.h: it
 * replaces the file only when the run succeeds).
 */
static int open_bench_outputs(struct bench_opts *o, const char *json,
			      struct outfile *json_out)
{
	char why[1200];

	if (o->plot && bench_plot_check("--plot", o->plot, why, sizeof(why)))
		return usage_error("%s", why);
	if (!json)
		return 0;
	if (outfile_open(json_out, "--json", json, 0, why, sizeof(why)))
		return usage_error("%s", why);
	o->json = json_out->f;
	return 0;
}

/*
 * replay's scenarios, parsed before anything runs: a missing or malformed
 * one is "FILE[:LINE]: message" and exit status 2, as for `ptebatch run`.
 */
static int parse_traces(struct bench_flags *fl)
{
	struct bench_opts *o = &fl->o;
	int i;

	if (!fl->nr_files)
		return usage_error("replay: no scenario file given");
	if (fl->size_given)
		return usage_error("replay: --size does not apply (a trace"
				   " maps what it maps)");
	o->traces = calloc((size_t)fl->nr_files, sizeof(*o->traces));
	if (!o->traces)
		return out_of_memory();
	o->trace_names = fl->files;
	for (i = 0; i < fl->nr_files; i++) {
		o->traces[i] = scenario_parse_file(fl->files[i],
						   SCN_DEFAULT_PAGE_SIZE, stderr);
		if (!o->traces[i])
			return EXIT_USAGE;
		o->nr_traces++;
	}
	return 0;
}

/*
 * The calibration of the predicted kernel columns, before anything runs.
 * One named by --calibration must be read (missing or malformed: exit
 * status 2, the message naming the file); the default may be absent or
 * bad, and the tables then say so in one line and leave the column out.
 */
static int read_calibration(struct bench_flags *fl, struct calibration *c,
			    char *why, size_t whylen)
{
	struct bench_opts *o = &fl->o;
	const char *path = fl->calibration ? fl->calibration
					   : calib_default_input();
	int ret = calib_read_file(path, c, why, whylen);

	if (!ret) {
		o->calib = c;
		o->calib_path = path;
		return 0;
	}
	if (fl->calibration)
		return ret == -ENOMEM ? out_of_memory()
				      : usage_error("--calibration: %s", why);
	o->calib_none = why;
	return 0;
}

/*
 * A calibration measured on another CPU is an assumption here: said once
 * the command line is known to be good, so that a usage error is the
 * first line of stderr, and only where the model's rows carry its
 * predictions (the kernel's carry none).
 */
static void warn_calibration(const struct bench_opts *o)
{
	if (o->calib && o->backend != BENCH_KERNEL)
		calib_warn_other_cpu(stderr, "ptebatch: bench", o->calib_path,
				     o->calib);
}

static void free_traces(struct bench_opts *o)
{
	int i;

	for (i = 0; i < o->nr_traces; i++)
		scenario_free(o->traces[i]);
	free(o->traces);
}

/*
 * --backend vm[:NAME]: the kernel's columns measured in a guest of a
 * kernel of our own.  The guest runs this bench with --backend kernel and
 * its rows into its own /tmp; they come back (`vm exec cat`) into
 * --json here, and --plot is drawn here from them.  The guest sees this
 * machine's files read-only, so traces and calibrations are found.
 */
#define VM_ROWS "/tmp/ptebatch-bench-rows.json"

/*
 * The guest's rows say "Linux 7.3.4" whatever series its kernel carries:
 * each gets the kernel's cache name as "kernel", so that rows of several
 * kernels (the series with each window) keep apart in one figure.  The
 * rows of @r->out are replaced by the stamped ones; 15 digits give back
 * the guest's numbers as it printed them (87541.405, not ...404999999999).
 */
static int rows_name_kernel(struct vm_result *r, const char *kernel,
			    char *why, size_t whylen)
{
	char *text = NULL, *line, *next, *end = r->out + r->out_len;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int lineno = 0, ret = 0;

	if (!f)
		return -ENOMEM;
	for (line = r->out; !ret && line < end; line = next) {
		json_error_t jerr;
		json_t *o;
		char *nl = memchr(line, '\n', (size_t)(end - line));

		next = nl ? nl + 1 : end;
		lineno++;
		if (strspn(line, " \t\r") == (size_t)(next - line) - !!nl)
			continue;
		o = json_loadb(line, (size_t)(next - line), 0, &jerr);
		if (!o || !json_is_object(o) ||
		    json_object_set_new(o, "kernel", json_string(kernel)) ||
		    json_dumpf(o, f, BENCH_JSON_FLAGS) ||
		    fputc('\n', f) == EOF) {
			snprintf(why, whylen, "the guest's rows, line %d: %s",
				 lineno, o ? "cannot add \"kernel\"" :
				 jerr.text);
			ret = -EINVAL;
		}
		json_decref(o);
	}
	if (fclose(f) && !ret)
		ret = -ENOMEM;
	if (ret) {
		free(text);
		return ret;
	}
	free(r->out);
	r->out = text;
	r->out_len = len;
	return 0;
}
static int bench_in_vm(struct bench_flags *fl, int argc, char **argv,
		       struct outfile *json_out)
{
	/*
	 * Under -icount the guest's clock counts its instructions (1 ns
	 * each): a time the guest measures is then the instructions the
	 * kernel ran, the same in every run, and two kernels compare on
	 * what they execute, not on a noisy host.
	 */
	struct vm_boot_options bo = { .icount = true };
	char why[2048], cwd[PATH_MAX], rows_path[64];
	char **gargv = calloc((size_t)argc + 8, sizeof(*gargv));
	char *cat[] = { "ptebatch", "vm", "exec", "/bin/cat", VM_ROWS, NULL };
	struct fig_rows rows = { 0 };
	struct vm_result r = { 0 }, rr = { 0 };
	struct vm_guest *g = NULL;
	struct vm_kernel k;
	int i, n = 0, ret = SCN_RUN_FAILED, fd = -1;

	if (!gargv)
		return out_of_memory();
	gargv[n++] = "ptebatch";
	gargv[n++] = "bench";
	for (i = 0; i < argc; i++) {
		const char *a = argv[i];
		bool valued = !strcmp(a, "--backend") || !strcmp(a, "--json") ||
			      !strcmp(a, "--plot");

		if (!strcmp(a, "--")) {
			while (i < argc)
				gargv[n++] = argv[i++];
			break;
		}
		if (valued) {
			i++;
			continue;
		}
		if (!strncmp(a, "--backend=", 10) || !strncmp(a, "--json=", 7) ||
		    !strncmp(a, "--plot=", 7))
			continue;
		gargv[n++] = argv[i];
	}
	gargv[n++] = "--backend";
	gargv[n++] = "kernel";
	gargv[n++] = "--json";
	gargv[n++] = VM_ROWS;
	gargv[n] = NULL;
	if (vm_kernel_find(fl->vm_spec, &k, why, sizeof(why))) {
		fprintf(stderr, "ptebatch: bench: skipped on backend vm: %s\n",
			why);
		ret = SCN_RUN_SKIPPED;
		goto out;
	}
	g = vm_boot(&k, &bo, why, sizeof(why));
	if (!g)
		goto fail;
	printf("# kernel columns in a guest of %s under -icount: a guest us is"
	       " 1000 guest instructions\n", k.name);
	fflush(stdout);
	if (!getcwd(cwd, sizeof(cwd)))
		strcpy(cwd, "/");
	if (vm_exec(g, gargv, cwd, NULL, 0, "bench", &r, why, sizeof(why)))
		goto fail;
	fwrite(r.out, 1, r.out_len, stdout);
	fwrite(r.err, 1, r.err_len, stderr);
	fflush(stdout);
	if (!WIFEXITED(r.status) || WEXITSTATUS(r.status)) {
		ret = WIFEXITED(r.status) ? WEXITSTATUS(r.status) :
					    SCN_RUN_FAILED;
		goto out;
	}
	if (vm_exec(g, cat, "/", NULL, 0, "bench's rows", &rr, why,
		    sizeof(why)))
		goto fail;
	if (!WIFEXITED(rr.status) || WEXITSTATUS(rr.status)) {
		fprintf(stderr, "ptebatch: bench: the guest's rows: %s", rr.err);
		goto out;
	}
	if (rows_name_kernel(&rr, k.name, why, sizeof(why)))
		goto fail;
	if (fl->o.json && fwrite(rr.out, 1, rr.out_len, fl->o.json) !=
			  rr.out_len)
		goto out;
	if (fl->o.plot) {
		/* The rows as a file for the figure reader. */
		fd = memfd_create("bench-rows", MFD_CLOEXEC);
		if (fd < 0 || write(fd, rr.out, rr.out_len) != (ssize_t)rr.out_len)
			goto out;
		snprintf(rows_path, sizeof(rows_path), "/proc/self/fd/%d", fd);
		if (fig_rows_read_file(&rows, rows_path, why, sizeof(why))) {
			fprintf(stderr, "ptebatch: bench: %s\n", why);
			goto out;
		}
		if (fig_draw_all(&rows, fl->o.plot, NULL, NULL, stdout))
			goto out;
	}
	if (fl->o.json && outfile_commit(json_out, why, sizeof(why))) {
		fprintf(stderr, "ptebatch: %s\n", why);
		goto out;
	}
	fl->o.json = NULL;
	ret = 0;
	goto out;
fail:
	fprintf(stderr, "ptebatch: bench: %s\n", why);
out:
	if (fd >= 0)
		close(fd);
	fig_rows_free(&rows);
	vm_result_free(&r);
	vm_result_free(&rr);
	vm_shutdown(g, false);
	free(gargv);
	return ret;
}

static int bench_main(int argc, char **argv)
{
	static int (*const benches[])(const struct bench_opts *) = {
		bench_gup, bench_cow, bench_mprotect,
	};
	struct bench_flags fl = {
		.o = {
			.backend = BENCH_BOTH,
			.arch = pb_arch_name(),
			.out = stdout,
		},
	};
	struct bench_opts *o = &fl.o;
	struct outfile json_out = { 0 };
	struct calibration calib;
	char calib_why[512];
	bool replay;
	int i, ret, err = 0;

	command = "bench";
	memset(&calib, 0, sizeof(calib));
	fl.files = calloc((size_t)argc + 1, sizeof(*fl.files));
	if (!fl.files)
		return out_of_memory();
	ret = cli_parse(bench_options, &fl, set_name, argc, argv);
	if (!ret && !fl.name)
		ret = usage_error("no NAME given (gup, cow, mprotect, all or"
				  " replay)");
	replay = !ret && !strcmp(fl.name, "replay");
	if (replay)
		ret = parse_traces(&fl);
	if (!ret)
		ret = read_calibration(&fl, &calib, calib_why,
				       sizeof(calib_why));
	if (!ret && fl.vm_spec) {
		ret = open_bench_outputs(o, fl.json, &json_out);
		if (!ret) {
			warn_calibration(o);
			ret = bench_in_vm(&fl, argc, argv, &json_out);
		}
		goto out;
	}
	if (!ret && o->backend == BENCH_KERNEL && geteuid()) {
		/* Nothing would run: a table of dashes is no result. */
		fprintf(stderr, "ptebatch: bench: skipped: --backend kernel needs"
			" root (it writes THP sysfs and reads /proc/kpageflags)\n");
		ret = SCN_RUN_SKIPPED;
	}
	if (!ret)
		ret = open_bench_outputs(o, fl.json, &json_out);
	if (ret)
		goto out;
	warn_calibration(o);
	o->progress = isatty(STDERR_FILENO);
	if (replay) {
		err = bench_replay(o);
		fflush(stdout);
		if (err)
			fprintf(stderr, "ptebatch: bench replay: %s\n",
				strerror(-err));
	}
	for (i = 0; i < 3 && !err && !replay; i++) {
		if (strcmp(fl.name, "all") && strcmp(fl.name, bench_names[i]))
			continue;
		if (!strcmp(fl.name, "all") && i)
			fputc('\n', stdout);
		err = benches[i](o);
		fflush(stdout);
		if (err)
			fprintf(stderr, "ptebatch: bench %s: %s\n",
				bench_names[i], strerror(-err));
	}
	/* The figures (drawn from the rows kept in memory), then the rows:
	 * they replace --json only if every benchmark ran and every figure
	 * was drawn; a row that could not be written fails the commit. */
	if (!err && o->plot)
		err = bench_plot(o);
	if (o->json && err) {
		outfile_discard(&json_out);
	} else if (o->json) {
		char why[1200];

		if (outfile_commit(&json_out, why, sizeof(why))) {
			fprintf(stderr, "ptebatch: %s\n", why);
			err = -EIO;
		}
	}
	o->json = NULL;
	ret = err ? SCN_RUN_FAILED : 0;
out:
	outfile_discard(&json_out);
	calib_free(&calib);
	free_traces(o);
	free(fl.files);
	return ret;
}

const struct cli_command bench_command = {
	.name = "bench",
	.main = bench_main,
	.usage = bench_usage,
	.takes_arch = true,
};
