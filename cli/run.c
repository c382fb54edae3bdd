// SPDX-License-Identifier: GPL-2.0-only
/*
 * run.c - ptebatch run: parse a scenario, run it on the model or on this
 * machine's kernel, print its record.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/backend.h"
#include "bench/bench.h"
#include "cli/cli.h"
#include "lib/outfile.h"
#include "scenario/record.h"
#include "scenario/run.h"
#include "scenario/scenario.h"
#include "scenario/svg.h"
#include "vm/vm.h"

/* --time: the median of this many runs, unless --reps says otherwise. */
#define RUN_DEFAULT_REPS 5

struct run_options {
	const char *backend;
	struct variant_flags variant;
	bool variant_given;
	bool stats;
	bool kstats;
	bool check;
	bool no_zero_page;
	bool time;
	int reps;		/* 0: not given */
	unsigned long memory;	/* 0: the model's default */
	const char *file;
	const char *name;	/* in messages; the file's by default */
	const char *fuzz;	/* --fuzz NAME: FILE is that harness's input */
	const char *svg;	/* --svg FILE.svg: draw the observes there */
	const char *vm_spec;	/* --backend vm[:NAME]: the NAME, or "" */
	bool time_insns;	/* --time-insns: the clock counts instructions */
	const char *count;	/* --count FUNC,... or "default" */
};

static const char *const backends[] = { "model", "kernel", NULL };

static int set_backend(void *o, const char *value)
{
	struct run_options *opts = o;

	opts->vm_spec = vm_backend_spec(value);
	if (opts->vm_spec) {
		opts->backend = "vm";
		return 0;
	}
	if (!in_list(backends, value))
		return unknown_in_list("--backend", "backend", value, backends);
	opts->backend = value;
	return 0;
}

static int set_variant(void *o, const char *value)
{
	struct run_options *opts = o;

	opts->variant_given = true;
	return variant_flags_preset(&opts->variant, "--variant", value);
}

/*
 * A --set is applied on top of the preset once all flags are read, so
 * --variant may come after it.
 */
static int add_set(void *o, const char *value)
{
	return variant_flags_add_set(&((struct run_options *)o)->variant, value);
}

static int set_stats(void *o, const char *value)
{
	((struct run_options *)o)->stats = true;
	return 0;
}

static int set_kstats(void *o, const char *value)
{
	(void)value;
	((struct run_options *)o)->kstats = true;
	return 0;
}

static int set_no_check(void *o, const char *value)
{
	((struct run_options *)o)->check = false;
	return 0;
}

static int set_no_zero_page(void *o, const char *value)
{
	((struct run_options *)o)->no_zero_page = true;
	return 0;
}

static int set_time(void *o, const char *value)
{
	((struct run_options *)o)->time = true;
	return 0;
}

static int set_count(void *o, const char *value)
{
	size_t n = strspn(value, "abcdefghijklmnopqrstuvwxyz"
			  "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_,.");

	if (!value[0] || value[n])
		return usage_error("--count: '%s' is not FUNC[,FUNC]... (kernel"
				   " function names) or 'default'", value);
	((struct run_options *)o)->count = value;
	return 0;
}

static int set_time_insns(void *o, const char *value)
{
	(void)value;
	((struct run_options *)o)->time_insns = true;
	return 0;
}

static int set_reps(void *o, const char *v)
{
	return reps_flag(v, &((struct run_options *)o)->reps);
}

static int set_memory(void *o, const char *arg)
{
	return memory_flag(arg, model_min_memory(),
			   &((struct run_options *)o)->memory);
}

static int set_name(void *o, const char *value)
{
	if (!*value)
		return usage_error("--name: empty name");
	((struct run_options *)o)->name = value;
	return 0;
}

static int set_file(void *o, const char *word)
{
	struct run_options *opts = o;

	if (opts->file)
		return usage_error("more than one scenario file ('%s' and '%s')",
				   opts->file, word);
	opts->file = word;
	return 0;
}

static int set_fuzz(void *o, const char *v)
{
	if (!fuzz_harness_known(v))
		return usage_error("--fuzz: no harness '%s' (scenario, ops,"
				   " events or calib)", v);
	((struct run_options *)o)->fuzz = v;
	return 0;
}

static int set_svg(void *o, const char *v)
{
	size_t len = strlen(v);

	if (len < 5 || strcmp(v + len - 4, ".svg"))
		return usage_error("--svg: '%s' must end in .svg", v);
	((struct run_options *)o)->svg = v;
	return 0;
}

/* The synopsis lines: a scenario, or a fuzz harness's input. */
enum { RUN_SCENARIO = CLI_FORM(0), RUN_FUZZ = CLI_FORM(1) };

static const struct cli_option run_options[] = {
	{ .name = "--backend", .arg = "NAME", .set = set_backend,
	  .forms = RUN_SCENARIO,
	  .help = "what runs it: model (the default) or kernel (this"
		  " machine's Linux, as root; no variant, stats or check), or"
		  " vm[:NAME]: the kernel backend in a QEMU guest of a kernel"
		  " of our own (ptebatch vm list; --time then counts guest"
		  " instructions: \"insns N\")" },
	{ .name = "--count", .arg = "FUNC,...", .set = set_count,
	  .forms = RUN_SCENARIO,
	  .help = "vm: how many times each kernel function ran in each"
		  " statement, counted by the guest kernel's function"
		  " profiler: \"  count FUNC N\" lines; 'default' is the PTE"
		  " walks the seeds change (gup_fast_pte_range, do_wp_page,"
		  " wp_page_reuse, flush_tlb_mm_range, contpte_convert, ...)" },
	{ .name = "--variant", .arg = "NAME", .set = set_variant,
	  .forms = RUN_SCENARIO,
	  .help = "which batching is on: a preset (" PB_DEFAULT_VARIANT
		  " by default)" },
	{ .name = "--set", .arg = "KEY=VALUE", .set = add_set,
	  .forms = RUN_SCENARIO, .repeat = true,
	  .help = "change one switch of the preset (repeatable, in order)" },
	{ .name = "--stats", .set = set_stats, .forms = RUN_SCENARIO,
	  .help = "print the cost counters of every statement" },
	{ .name = "--kstats", .set = set_kstats, .forms = RUN_SCENARIO,
	  .help = "print the kernel's own accounting of every statement"
		  " (\"kstat NAME N\": pgfault, thp_*, pins, hugepages-*kB"
		  " stats); the kernel's are system-wide deltas (root)" },
	{ .name = "--memory", .arg = "SIZE", .set = set_memory,
	  .forms = RUN_SCENARIO,
	  .help = "simulated memory (default {default_memory}): a multiple"
		  " of {pmd}, from {min_memory} to {max_memory}, as much as"
		  " this machine's memory holds the memmap of (about"
		  " {memmap_share} of it); running out of it fails the run" },
	{ .name = "--time", .set = set_time, .forms = RUN_SCENARIO,
	  .help = "kernel only: each statement's time in microseconds,"
		  " measured in its process around the system call or the"
		  " stores and loads: \"time US\" after its faults; the median"
		  " of N runs" },
	{ .name = "--reps", .arg = "N", .set = set_reps, .forms = RUN_SCENARIO,
	  .help = "with --time: how many runs, 1 to " CLI_STR(BENCH_MAX_REPS)
		  " (default " CLI_STR(RUN_DEFAULT_REPS) "), each a fresh set"
		  " of processes; \"~\" marks faults that varied" },
	{ .name = "--time-insns", .set = set_time_insns, .forms = RUN_SCENARIO,
	  .help = "with --time and --backend kernel, in a guest under QEMU's"
		  " icount: the times are instructions, \"insns N\", the least"
		  " of the N runs (noise only adds instructions; --backend vm"
		  " sets it)" },
	{ .name = "--svg", .arg = "FILE.svg", .set = set_svg,
	  .forms = RUN_SCENARIO,
	  .help = "also draw every observe, one figure each, into FILE.svg:"
		  " a cell per page coloured by folio, pins and copies on"
		  " write marked (docs/SCENARIO.md); the record is unchanged."
		  "  It takes a snapshot after every statement, as long as an"
		  " observe: slow for big regions.  Written when the run ends"
		  " (exit status 0 or 3), never half; not with --time" },
	{ .name = "--no-check", .set = set_no_check, .forms = RUN_SCENARIO,
	  .help = "skip the invariant check after each statement" },
	{ .name = "--no-zero-page", .set = set_no_zero_page,
	  .forms = RUN_SCENARIO,
	  .help = "read faults allocate as write faults do, never mapping the"
		  " zero page: the model of a kernel that maps none (diff's"
		  " first line says when this machine's does; it then runs the"
		  " model so); the header says \"zero-page no\"" },
	{ .name = "--name", .arg = "NAME", .set = set_name,
	  .forms = RUN_SCENARIO,
	  .help = "the scenario's name in messages (FILE's by default), for a"
		  " scenario read from /dev/stdin or a pipe" },
	{ .name = "--fuzz", .arg = "NAME", .set = set_fuzz,
	  .forms = RUN_FUZZ, .required = RUN_FUZZ,
	  .help = "FILE is an input of fuzz harness NAME, scenario, ops,"
		  " events or calib (a crash the fuzzer kept:"
		  " build-fuzz/crashes/NAME-*): run it as the fuzzer did,"
		  " every variant, checks after every step; the harness aborts"
		  " on what it finds (build with SAN=asan for ASan's reports);"
		  " no other option with it" },
	{ .name = "--arch", .arg = "ARCH", .forms = RUN_SCENARIO,
	  .help = "the model built for another architecture: {arches};"
		  " this build's ({arch}) by"
		  " default (also for diff, bench, explore and predict; each is"
		  " its own build, make ARCH=...)" },
	{ .name = NULL },
};

static const struct cli_form run_forms[] = {
	{ .after = "FILE.scn" },
	{ .after = "FILE" },
};

/* The presets and switches --variant and --set name. */
static void run_lists(FILE *f)
{
	const char *const *p;

	fputs("\npresets:", f);
	for (p = pb_variant_presets(); *p; p++)
		fprintf(f, " %s", *p);
	fputs("\nswitches:\n", f);
	for (p = pb_variant_switches(); *p; p++)
		fprintf(f, "  %-17s %s\n", *p, pb_variant_switch_help(*p));
}

static const struct cli_help run_help = {
	.name = "run",
	.options = run_options,
	CLI_FORMS(run_forms),
	.about = "run a scenario and print its record on stdout",
	.lists = run_lists,
	.epilogue = "\n"
		"exit status: 0 ok, 1 the run failed (or the model ran out of"
		" memory),\n"
		"             2 bad usage or scenario, 3 an invariant check"
		" failed,\n"
		"             4 skipped: the backend cannot run it here (the"
		" reason on stderr)\n",
};

static void run_usage(FILE *f)
{
	cli_usage(f, &run_help);
}

/* The kernel runs no variant, counts nothing and has the memory it has. */
static int check_kernel_options(const struct run_options *opts)
{
	const char *flag = opts->variant_given ? "--variant" :
			   opts->variant.nr_sets ? "--set" :
			   opts->stats ? "--stats" :
			   opts->no_zero_page ? "--no-zero-page" :
			   opts->memory ? "--memory" : NULL;

	if (!strcmp(opts->backend, "model") || !flag)
		return 0;
	return usage_error("%s applies to the model only, not to --backend"
			   " %s", flag, opts->backend);
}

/*
 * Only the kernel's times are kernel times: the model's would time the
 * model.  --reps says how many runs --time takes the median of.
 */
static int check_time_options(const struct run_options *opts)
{
	if (opts->reps && !opts->time)
		return usage_error("--reps needs --time (it counts the timed"
				   " runs)");
	if (opts->time && !strcmp(opts->backend, "model"))
		return usage_error("--time applies to --backend kernel or vm"
				   " only: the model's times are not kernel"
				   " times");
	if (opts->time_insns && (!opts->time ||
				 strcmp(opts->backend, "kernel")))
		return usage_error("--time-insns needs --time and --backend"
				   " kernel (a guest's clock under QEMU's"
				   " icount: --backend vm sets it)");
	if (opts->count && !strcmp(opts->backend, "model"))
		return usage_error("--count counts kernel functions: --backend"
				   " vm (or kernel inside a guest of ours)");
	if (opts->svg && !strcmp(opts->backend, "vm"))
		return usage_error("--svg draws in this process: not with"
				   " --backend vm (draw the model's run, or"
				   " run the kernel backend in the guest)");
	/* Its snapshots between statements would be in the timed runs. */
	if (opts->time && opts->svg)
		return usage_error("--svg draws one untimed run: not with"
				   " --time");
	return 0;
}

/*
 * The drawing of a run that ended @status into @of (lib/outfile.h: it
 * replaces FILE.svg only now); a run that failed or was skipped gets
 * none, and one stopped by a signal none either (the outfile's handler).
 * Returns @status, or 1 when the file could not be written.
 */
static int svg_close(struct svg_drawing *d, int status, struct outfile *of,
		     const char *name)
{
	char why[1200];
	int ret;

	if (status != SCN_RUN_OK && status != SCN_RUN_VIOLATION) {
		fprintf(stderr, "ptebatch: run: --svg: %s not written: the run"
			" %s\n", of->path, status == SCN_RUN_SKIPPED ?
			"was skipped" : "failed");
		outfile_discard(of);
		return status;
	}
	if (!svg_drawing_figures(d))
		fprintf(stderr, "ptebatch: run: --svg: no observe in %s: %s"
			" holds only a note saying so\n", name, of->path);
	ret = svg_drawing_write(d, of->f);
	if (ret) {
		fprintf(stderr, "ptebatch: run: --svg: %s: %s\n", of->path,
			strerror(-ret));
		outfile_discard(of);
		return SCN_RUN_FAILED;
	}
	if (outfile_commit(of, why, sizeof(why))) {
		fprintf(stderr, "ptebatch: run: %s\n", why);
		return SCN_RUN_FAILED;
	}
	return status;
}

/*
 * --backend vm[:NAME]: the same run on the kernel backend in a guest of
 * a kernel of our own, the scenario's text on its stdin; its record,
 * messages and exit status are this run's.  --time boots the guest with
 * QEMU's icount (one instruction a nanosecond), so its times are
 * instructions, and say so.
 */
static int run_in_vm(const struct run_options *o, const char *text,
		     size_t len)
{
	struct vm_boot_options bo = { .icount = o->time };
	char *argv[20], reps[16], why[2048], cwd[PATH_MAX];
	struct vm_guest *g;
	struct vm_result r;
	struct vm_kernel k;
	int n = 0, ret;

	argv[n++] = "ptebatch";
	argv[n++] = "run";
	argv[n++] = "--backend";
	argv[n++] = "kernel";
	if (o->kstats)
		argv[n++] = "--kstats";
	if (!o->check)
		argv[n++] = "--no-check";
	if (o->time) {
		argv[n++] = "--time";
		argv[n++] = "--time-insns";
	}
	if (o->count) {
		argv[n++] = "--count";
		argv[n++] = (char *)o->count;
	}
	if (o->reps) {
		snprintf(reps, sizeof(reps), "%d", o->reps);
		argv[n++] = "--reps";
		argv[n++] = reps;
	}
	argv[n++] = "--name";
	argv[n++] = (char *)(o->name ? o->name : o->file);
	argv[n++] = "--";
	argv[n++] = "/dev/stdin";
	argv[n] = NULL;
	if (vm_kernel_find(o->vm_spec, &k, why, sizeof(why))) {
		fprintf(stderr, "%s: skipped on backend vm: %s\n",
			o->name ? o->name : o->file, why);
		return SCN_RUN_SKIPPED;
	}
	g = vm_boot(&k, &bo, why, sizeof(why));
	if (!g) {
		fprintf(stderr, "ptebatch: run: %s\n", why);
		return SCN_RUN_FAILED;
	}
	if (!getcwd(cwd, sizeof(cwd)))
		strcpy(cwd, "/");
	if (vm_exec(g, argv, cwd, text, len, o->name ? o->name : o->file, &r,
		    why, sizeof(why))) {
		fprintf(stderr, "ptebatch: run: %s\n", why);
		vm_shutdown(g, true);
		return SCN_RUN_FAILED;
	}
	vm_shutdown(g, false);
	fwrite(r.out, 1, r.out_len, stdout);
	fwrite(r.err, 1, r.err_len, stderr);
	ret = WIFEXITED(r.status) ? WEXITSTATUS(r.status) : SCN_RUN_FAILED;
	if (WIFSIGNALED(r.status))
		fprintf(stderr, "ptebatch: run: the kernel backend in vm:%s "
			"was killed by signal %d\n", k.name,
			WTERMSIG(r.status));
	vm_result_free(&r);
	return ret;
}

static int run_main(int argc, char **argv)
{
	struct run_options opts = {
		.backend = "model",
		.check = true,
	};
	struct model_options mopt = { 0 };
	struct svg_drawing *drawing = NULL;
	struct outfile svg_out = { 0 };
	struct scenario *s = NULL;
	char *variant_name = NULL, *text, why[1200];
	struct scn_watch watch;
	struct backend *b;
	size_t len;
	int ret;

	command = "run";
	ret = variant_flags_init(&opts.variant, argc, PB_DEFAULT_VARIANT);
	if (ret)
		return ret;
	ret = cli_parse(run_options, &opts, set_file, argc, argv);
	if (!ret && !opts.file)
		ret = usage_error("no scenario file given");
	if (!ret && opts.fuzz && opts.svg)
		ret = usage_error("--svg does not apply to --fuzz: the harness"
				  " runs no scenario to draw");
	if (!ret && opts.fuzz) {
		/* The harness chooses variants, backend and checks itself. */
		if (opts.variant_given || opts.variant.nr_sets ||
		    opts.stats || opts.kstats || opts.memory || !opts.check ||
		    opts.no_zero_page ||
		    opts.time || opts.reps || opts.name ||
		    strcmp(opts.backend, "model"))
			ret = usage_error("--fuzz NAME FILE takes no other"
					  " flag: the harness runs FILE as"
					  " the fuzzer did");
		else
			ret = run_fuzz_input(opts.fuzz, opts.file);
		goto out;
	}
	if (!ret)
		ret = check_kernel_options(&opts);
	if (!ret)
		ret = check_time_options(&opts);
	if (!ret)
		ret = variant_flags_build(&opts.variant, &mopt.variant,
					  &variant_name);
	if (!ret && access(opts.file, R_OK))
		ret = usage_error("%s: %s", opts.file, strerror(errno));
	if (ret)
		goto out;
	/* With this build's page size (SCN_DEFAULT_PAGE_SIZE): its arch's. */
	text = scenario_read_file(opts.file, &len, stderr);
	if (text)
		s = scenario_parse_text(opts.name ? opts.name : opts.file, text,
					len, SCN_DEFAULT_PAGE_SIZE, stderr);
	if (s && !strcmp(opts.backend, "vm"))
		ret = run_in_vm(&opts, text, len);
	free(text);
	if (s && !strcmp(opts.backend, "vm"))
		goto out;
	ret = EXIT_USAGE;
	if (!s)
		goto out;
	if (opts.svg && outfile_open(&svg_out, "--svg", opts.svg, 0, why,
				     sizeof(why))) {
		ret = usage_error("%s", why);
		goto out;
	}

	mopt.memory_bytes = opts.memory;
	mopt.variant_name = variant_name;
	mopt.read_faults_allocate = opts.no_zero_page;
	if (!strcmp(opts.backend, "kernel")) {
		struct kernel_options kopt = { 0 };

		b = kernel_backend_create(&kopt);
		if (b) {
			b->time_insns = opts.time_insns;
			b->timed = opts.time;
			b->count_list = opts.count;
		}
	} else {
		b = model_backend_create(&mopt);
	}
	ret = b ? 0 : out_of_memory();
	if (!ret && opts.svg) {
		drawing = svg_drawing_create(s, b);
		if (!drawing) {
			b->ops->destroy(b);
			ret = out_of_memory();
		}
	}
	if (ret)
		goto out;
	b->want_stats = opts.stats;
	b->want_kstats = opts.kstats;
	if (drawing) {
		svg_drawing_watch(drawing, &watch);
		ret = scenario_run_watched(s, b, stdout, stderr, opts.check,
					   &watch);
		ret = svg_close(drawing, ret, &svg_out, s->file);
	} else if (opts.time)
		ret = scenario_run_timed(s, b, opts.reps ? opts.reps :
					 RUN_DEFAULT_REPS, stdout, stderr,
					 opts.check);
	else
		ret = scenario_run(s, b, stdout, stderr, opts.check);
	b->ops->destroy(b);
out:
	outfile_discard(&svg_out);
	svg_drawing_free(drawing);
	scenario_free(s);
	free(variant_name);
	variant_flags_free(&opts.variant);
	return ret;
}

const struct cli_command run_command = {
	.name = "run",
	.main = run_main,
	.usage = run_usage,
	.takes_arch = true,
};
