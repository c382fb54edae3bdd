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

	opts->vm_spec = vm_backend_spec(value);
	if (opts->vm_spec || !strcmp(value, "kernel"))
		return 0;
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

/* The synopsis lines: scenario files, or --random's. */
enum { DIFF_FILES = CLI_FORM(0), DIFF_RANDOM = CLI_FORM(1) };

static const struct cli_option diff_options[] = {
	{ .name = "--variant", .arg = "NAME", .set = set_variant,
	  .help = "the model's preset (" PB_DEFAULT_VARIANT " by default)" },
	{ .name = "--set", .arg = "KEY=VALUE", .set = add_set, .repeat = true,
	  .help = "change one switch of the preset (repeatable)" },
	{ .name = "--arch", .arg = "ARCH", .forms = DIFF_FILES,
	  .help = "the model built for another architecture (see 'run'); the"
		  " records are compared all the same" },
	{ .name = "--backend", .arg = "NAME", .set = set_backend,
	  .forms = DIFF_FILES,
	  .help = "the kernel side: kernel, this machine's (the default), or"
		  " vm[:NAME], in a guest of a kernel of our own (ptebatch vm"
		  " list; the newest x86_64 one by default), booted once for"
		  " the whole run; exit 4 if none is built.  The model is"
		  " always the other side" },
	{ .name = "--functions", .set = set_functions, .forms = DIFF_FILES,
	  .help = "with --backend vm: the guest kernel's function calls per"
		  " statement (run --count default) against the model's"
		  " counters (do_wp_page ~ fault_wp_reuse + fault_wp_copy,"
		  " ...); each statement where they differ as a \"#  "
		  " FUNCTION: ...\" line after the file's MATCH; a table of how"
		  " many agree, at the end" },
	{ .name = "--counters", .set = set_counters, .forms = DIFF_FILES,
	  .help = "also the kernel's own accounting, statement by statement"
		  " (run --kstats): pins, THP faults and splits per size; one"
		  " line \"MISMATCH FILE: statement N (TEXT): COUNTER model M"
		  " kernel K\" each; the kernel's are system-wide, so up to 5"
		  " kernel runs, the least taken; pgfault only as a lower"
		  " bound (docs/MODEL.md); at the end, a table of how many"
		  " statements agree on each counter" },
	{ .name = "--random", .arg = "N", .set = set_random,
	  .forms = DIFF_RANDOM, .required = DIFF_RANDOM,
	  .help = "N random scenarios instead of files"
		  " (scenario/generate.c); a mismatch is run again, shrunk"
		  " (ddmin) and written to OUT/random-SEED-I.scn with both"
		  " records; exit 4 if the kernel backend cannot run here" },
	{ .name = "--seed", .arg = "S", .set = set_seed, .forms = DIFF_RANDOM,
	  .help = "the run's seed (default: from the clock, printed)" },
	{ .name = "--length", .arg = "K", .set = set_length,
	  .forms = DIFF_RANDOM,
	  .help = "statements drawn per scenario (1.."
		  CLI_STR(SCN_GEN_MAX_LENGTH) ", default "
		  CLI_STR(SCN_GEN_DEFAULT_LENGTH) ")" },
	{ .name = "--index", .arg = "I", .set = set_index, .forms = DIFF_RANDOM,
	  .help = "the first scenario's index (with --random 1: scenario I)" },
	{ .name = "--out", .arg = "OUT", .set = set_out, .forms = DIFF_RANDOM,
	  .help = "where mismatches go (default random-diff)" },
	{ .name = "--dump", .arg = "DIR", .set = set_dump, .forms = DIFF_RANDOM,
	  .help = "write the scenarios to DIR, run nothing" },
	{ .name = "--no-shrink", .set = set_no_shrink, .forms = DIFF_RANDOM,
	  .help = "write a mismatching scenario whole" },
	{ .name = NULL },
};

static const struct cli_form diff_forms[] = {
	{ .after = "FILE.scn..." },
	{ .after = NULL },
};

static const struct cli_help diff_help = {
	.name = "diff",
	.options = diff_options,
	CLI_FORMS(diff_forms),
	.about = "run each scenario on the model and on this machine's kernel"
		 " (root: the run writes THP sysfs and puts it back), compare"
		 " the records (everything but header, stat lines and cost),"
		 " and print MATCH FILE, MISMATCH FILE: first difference, SKIP"
		 " FILE: reason or ERROR FILE: reason, then the counts",
	.epilogue = "exit status: 0 every scenario matched or was skipped, 1 a"
		    " mismatch or error,\n"
		    "             2 bad usage or a scenario that does not parse"
		    " (then nothing runs)\n",
};

static void diff_usage(FILE *f)
{
	cli_usage(f, &diff_help);
}

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
