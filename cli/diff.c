// SPDX-License-Identifier: GPL-2.0-only
/*
 * diff.c - ptebatch diff: its options, usage and checks; each scenario
 * on the model and on this machine's kernel, the two records compared,
 * is the work of diff/ (diff/diff.h), and so is --random N.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "diff/diff.h"
#include "lib/outfile.h"
#include "scenario/generate.h"
#include "scenario/run.h"
#include "scenario/scenario.h"
#include "vm/vm.h"

/* --random N at most: ten million scenarios. */
#define DIFF_RANDOM_MAX 10000000UL

/* The kernel side is `ptebatch run`: its bad usage is ours. */
_Static_assert(DIFF_KERNEL_EXIT_USAGE == EXIT_USAGE,
	       "diff reads back the exit status of ptebatch run");

struct diff_options {
	struct variant_flags variant;
	bool counters;
	bool random;			/* --random N given */
	const char *random_only;	/* a flag that needs --random, given */
	struct diff_random_options rnd;
	struct diff_file *files;
	int nr_files;
	const char *vm_spec;		/* --backend vm[:NAME], NULL: kernel */
	bool functions;			/* --functions */
};

static void diff_usage(FILE *f)
{
	fputs("usage: ptebatch diff [--variant NAME] [--set KEY=VALUE]..."
	      " [--arch ARCH]\n"
	      "                     [--backend kernel|vm[:NAME]] [--counters]"
	      " FILE.scn...\n"
	      "       ptebatch diff [--variant NAME] [--set KEY=VALUE]..."
	      " --random N [--seed S]\n"
	      "                     [--length K] [--index I] [--out OUT]"
	      " [--dump DIR] [--no-shrink]\n"
	      "\n"
	      "diff      run each scenario on the model and on this machine's"
	      " kernel\n"
	      "          (root: the run writes THP sysfs and puts it back),"
	      " compare the\n"
	      "          records (everything but header, stat lines and cost),"
	      " and print\n"
	      "          MATCH FILE, MISMATCH FILE: first difference,"
	      " SKIP FILE: reason\n"
	      "          or ERROR FILE: reason, then the counts\n"
	      "  --variant NAME    the model's preset (" PB_DEFAULT_VARIANT
	      " by default)\n"
	      "  --set KEY=VALUE   change one switch of the preset"
	      " (repeatable)\n"
	      "  --arch ARCH       the model built for another architecture"
	      " (see 'run'); the\n"
	      "                    records are compared all the same\n"
	      "  --backend vm[:NAME]  the kernel side in a guest of a kernel"
	      " of our own\n"
	      "                    (ptebatch vm list; the newest x86_64 one"
	      " by default),\n"
	      "                    booted once for the whole run; exit 4 if"
	      " none is built\n"
	      "  --functions       with --backend vm: the guest kernel's"
	      " function calls per\n"
	      "                    statement (run --count default) against"
	      " the model's\n"
	      "                    counters (do_wp_page ~ fault_wp_reuse +"
	      " fault_wp_copy, ...);\n"
	      "                    each statement where they differ as a"
	      " \"#   FUNCTION: ...\"\n"
	      "                    line after the file's MATCH; a table of"
	      " how many agree,\n"
	      "                    at the end\n"
	      "  --counters        also the kernel's own accounting, statement"
	      " by statement\n"
	      "                    (run --kstats): pins, THP faults and"
	      " splits per size;\n"
	      "                    one line \"MISMATCH FILE: statement N"
	      " (TEXT): COUNTER\n"
	      "                    model M kernel K\" each; the kernel's are"
	      " system-wide, so\n"
	      "                    up to 5 kernel runs, the least taken;"
	      " pgfault only as a\n"
	      "                    lower bound (docs/MODEL.md); at the end,"
	      " a table of how\n"
	      "                    many statements agree on each counter\n"
	      "  --random N        N random scenarios instead of files"
	      " (scenario/generate.c);\n"
	      "                    a mismatch is run again, shrunk (ddmin)"
	      " and written to\n"
	      "                    OUT/random-SEED-I.scn with both records;"
	      " exit 4 if the\n"
	      "                    kernel backend cannot run here\n"
	      "  --seed S          the run's seed (default: from the clock,"
	      " printed)\n"
	      "  --length K        statements drawn per scenario (1..1000,"
	      " default 30)\n"
	      "  --index I         the first scenario's index (with --random 1:"
	      " scenario I)\n"
	      "  --out OUT         where mismatches go (default random-diff)\n"
	      "  --dump DIR        write the scenarios to DIR, run nothing\n"
	      "  --no-shrink       write a mismatching scenario whole\n"
	      "exit status: 0 every scenario matched or was skipped, 1 a"
	      " mismatch or error,\n"
	      "             2 bad usage or a scenario that does not parse"
	      " (then nothing runs)\n", f);
}

static int set_variant(void *o, const char *value)
{
	return variant_flags_preset(&((struct diff_options *)o)->variant,
				    "--variant", value);
}

static int add_set(void *o, const char *value)
{
	return variant_flags_add_set(&((struct diff_options *)o)->variant,
				     value);
}

static int set_backend(void *o, const char *value)
{
	struct diff_options *opts = o;

	if (!strcmp(value, "kernel")) {
		opts->vm_spec = NULL;
		return 0;
	}
	if (!strcmp(value, "vm") || !strncmp(value, "vm:", 3)) {
		opts->vm_spec = value[2] ? value + 3 : "";
		return 0;
	}
	return usage_error("--backend: '%s' is not kernel, vm or vm:NAME "
			   "(the model is always the other side)", value);
}

static int set_functions(void *o, const char *value)
{
	(void)value;
	((struct diff_options *)o)->functions = true;
	return 0;
}

static int set_counters(void *o, const char *value)
{
	((struct diff_options *)o)->counters = true;
	return 0;
}

static int add_file(void *o, const char *word)
{
	struct diff_options *opts = o;

	opts->files[opts->nr_files++].path = word;
	return 0;
}

/*
 * A count of --random's: digits only (strtoul() would take " 5", "+5"
 * and "-5" too), @min to @max, into *@out.  0 or a usage error naming
 * @flag.
 */
static int count_flag(const char *flag, const char *arg, unsigned long min,
		      unsigned long max, unsigned long *out)
{
	unsigned long n;
	char *end;

	errno = 0;
	n = strtoul(arg, &end, 10);
	if (arg[0] < '0' || arg[0] > '9' || errno || *end || n < min ||
	    n > max)
		return usage_error("%s: expected a number from %lu to %lu,"
				   " got '%s'", flag, min, max, arg);
	*out = n;
	return 0;
}

static int set_random(void *o, const char *value)
{
	struct diff_options *opts = o;

	opts->random = true;
	return count_flag("--random", value, 1, DIFF_RANDOM_MAX,
			  &opts->rnd.count);
}

static int set_seed(void *o, const char *value)
{
	struct diff_options *opts = o;
	const char *digits = value;
	unsigned long long n;
	int base = 10;
	char *end;

	opts->random_only = "--seed";
	/* Base 0 would read "010" as octal 8: decimal, or hex after 0x. */
	if (value[0] == '0' && (value[1] == 'x' || value[1] == 'X'))
		digits = value + 2, base = 16;
	errno = 0;
	n = strtoull(digits, &end, base);
	if (!(base == 16 ? isxdigit((unsigned char)digits[0]) :
	      isdigit((unsigned char)digits[0])) || errno || *end)
		return usage_error("--seed: expected a number (decimal or 0x"
				   " hex, at most 64 bits), got '%s'", value);
	opts->rnd.seed = n;
	opts->rnd.have_seed = true;
	return 0;
}

static int set_length(void *o, const char *value)
{
	struct diff_options *opts = o;
	unsigned long n;
	int ret;

	opts->random_only = "--length";
	ret = count_flag("--length", value, 1, SCN_GEN_MAX_LENGTH, &n);
	opts->rnd.length = (int)n;
	return ret;
}

static int set_index(void *o, const char *value)
{
	struct diff_options *opts = o;

	opts->random_only = "--index";
	return count_flag("--index", value, 0, DIFF_RANDOM_MAX,
			  &opts->rnd.first);
}

static int set_out(void *o, const char *value)
{
	struct diff_options *opts = o;

	opts->random_only = "--out";
	if (!*value)
		return usage_error("--out: expected a directory, got ''");
	opts->rnd.out_dir = value;
	return 0;
}

static int set_dump(void *o, const char *value)
{
	struct diff_options *opts = o;

	opts->random_only = "--dump";
	if (!*value)
		return usage_error("--dump: expected a directory, got ''");
	opts->rnd.dump_dir = value;
	return 0;
}

static int set_no_shrink(void *o, const char *value)
{
	struct diff_options *opts = o;

	opts->random_only = "--no-shrink";
	opts->rnd.no_shrink = true;
	return 0;
}

static const struct cli_option diff_options[] = {
	{ "--variant", true, set_variant },
	{ "--set", true, add_set },
	{ "--backend", true, set_backend },
	{ "--counters", false, set_counters },
	{ "--functions", false, set_functions },
	{ "--random", true, set_random },
	{ "--seed", true, set_seed },
	{ "--length", true, set_length },
	{ "--index", true, set_index },
	{ "--out", true, set_out },
	{ "--dump", true, set_dump },
	{ "--no-shrink", false, set_no_shrink },
	{ NULL, false, NULL },
};

/*
 * Every file must parse before any runs: a typo in the last one should
 * not cost a long comparison first, and bad input should never get as
 * far as the kernel side (which writes THP sysfs).  Each problem is one
 * "FILE:LINE: message" on stderr.  Each file is read once and its text
 * kept: /dev/stdin, a pipe or a FIFO cannot be read again.
 */
static int diff_read_files(struct diff_options *opts)
{
	int i, bad = 0;

	for (i = 0; i < opts->nr_files; i++) {
		struct diff_file *f = &opts->files[i];
		struct scenario *s = NULL;

		f->text = scenario_read_file(f->path, &f->len, stderr);
		if (f->text)
			s = scenario_parse_text(f->path, f->text, f->len,
						SCN_DEFAULT_PAGE_SIZE, stderr);
		bad += !s;
		scenario_free(s);
	}
	return bad ? EXIT_USAGE : 0;
}


/*
 * Boot the kernel --backend vm:NAME names: one guest for the whole run.
 * 0, SCN_RUN_SKIPPED when no such kernel is built (said), or 1.
 */
static int diff_vm_boot(const char *spec, struct vm_guest **g)
{
	struct vm_boot_options bo = { 0 };
	struct timespec t0, t1;
	struct vm_kernel k;
	char why[2048];

	if (vm_kernel_find(spec, &k, why, sizeof(why))) {
		fprintf(stderr, "ptebatch: diff: --backend vm%s%s: skipped: "
			"%s\n", *spec ? ":" : "", spec, why);
		return SCN_RUN_SKIPPED;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	*g = vm_boot(&k, &bo, why, sizeof(why));
	if (!*g) {
		fprintf(stderr, "ptebatch: diff: %s\n", why);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("# vm:%s booted in %.1f s (QEMU %s, 1 CPU)\n", k.name,
	       (double)(t1.tv_sec - t0.tv_sec) +
	       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9, vm_guest_accel(*g));
	fflush(stdout);
	return 0;
}

/*
 * --random's checks, once the guest is up: this build's page size, and
 * where a finding would go (before a scenario runs: a long run never
 * ends unable to keep what it found).
 */
static int diff_random_check(const struct diff_random_options *o)
{
	char why[1024];

	/* The generator writes 4K sizes (scenario/generate.c). */
	if (SCN_DEFAULT_PAGE_SIZE != 4096)
		return usage_error("--random: the generator writes scenarios"
				   " for 4K pages, this build has %luK pages",
				   SCN_DEFAULT_PAGE_SIZE >> 10);
	if (outfile_check_dir(o->dump_dir ? "--dump" : "--out", o->dump_dir ?
			      o->dump_dir : o->out_dir ? o->out_dir :
			      DIFF_RANDOM_OUT_DIR, why, sizeof(why)))
		return usage_error("%s%s", why, o->dump_dir || o->out_dir ?
				   "" : " (the default --out)");
	return 0;
}

static int diff_main(int argc, char **argv)
{
	struct diff_options opts = { 0 };
	struct vm_guest *vm = NULL;
	struct pb_variant variant;
	char *variant_name = NULL;
	int i, ret;

	command = "diff";
	ret = variant_flags_init(&opts.variant, argc, PB_DEFAULT_VARIANT);
	if (ret)
		return ret;
	opts.files = calloc(argc + 1, sizeof(*opts.files));
	if (!opts.files) {
		ret = out_of_memory();
		goto out;
	}
	opts.rnd.length = SCN_GEN_DEFAULT_LENGTH;
	ret = cli_parse(diff_options, &opts, add_file, argc, argv);
	if (!ret && opts.random_only && !opts.random)
		ret = usage_error("%s: only with --random N", opts.random_only);
	if (!ret && opts.random && opts.nr_files)
		ret = usage_error("--random: no scenario file with it (got"
				  " '%s')", opts.files[0].path);
	if (!ret && opts.random && opts.counters)
		ret = usage_error("--random: not with --counters");
	if (!ret && opts.functions && (!opts.vm_spec || opts.random))
		ret = usage_error("--functions counts the guest kernel's "
				  "functions: with --backend vm and files");
	if (!ret && !opts.random && !opts.nr_files)
		ret = usage_error("no scenario file given");
	if (!ret)
		ret = variant_flags_build(&opts.variant, &variant, &variant_name);
	if (!ret && !opts.random)
		ret = diff_read_files(&opts);
	if (!ret && opts.vm_spec)
		ret = diff_vm_boot(opts.vm_spec, &vm);
	if (!ret && opts.random) {
		opts.rnd.vm = vm;
		ret = diff_random_check(&opts.rnd);
		if (!ret)
			ret = diff_random(&opts.rnd, &variant, variant_name);
		if (ret < 0)
			ret = out_of_memory();
	} else if (!ret) {
		struct diff_files_options fo = {
			.files = opts.files,
			.nr_files = opts.nr_files,
			.counters = opts.counters,
			.functions = opts.functions,
			.vm = vm,
		};

		ret = diff_files(&fo, &variant, variant_name);
	}
out:
	vm_shutdown(vm, false);
	free(variant_name);
	variant_flags_free(&opts.variant);
	for (i = 0; opts.files && i < opts.nr_files; i++)
		free(opts.files[i].text);
	free(opts.files);
	return ret;
}

const struct cli_command diff_command = {
	.name = "diff",
	.main = diff_main,
	.usage = diff_usage,
	.takes_arch = true,
};
