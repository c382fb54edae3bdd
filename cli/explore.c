// SPDX-License-Identifier: GPL-2.0-only
/*
 * explore.c - ptebatch explore: flags and exit statuses; the search is
 * explore/explore.c's.
 *
 * Two sides are compared: --variant names the reference (the base of
 * compare_records), --against the other one; a second --variant is taken
 * as --against, so `--variant A --variant B` reads as expected.  Each
 * --set changes the side named last before it.
 */
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "lib/outfile.h"
#include "explore/explore.h"
#include "scenario/compare.h"
#include "scenario/record.h"
#include "scenario/run.h"
#include "scenario/scenario.h"


/* `ptebatch explore` with no --depth: about as deep as `make check`. */
#define DEFAULT_DEPTH 3

/*
 * The smallest machine the model brings up (four PMD blocks: the zero
 * pages' and two free ones), plenty for the explored regions; the
 * checker walks every frame after every statement, so smaller is faster.
 */
#define MIN_MEMORY (4 * pb_pmd_size() > (8UL << 20) ? 4 * pb_pmd_size() \
							 : (8UL << 20))
#define DEFAULT_MEMORY MIN_MEMORY
/* Where a finding's scenario goes, under the current directory. */
#define DEFAULT_OUT "explore-findings"

enum rules_choice { RULES_AUTO, RULES_EQUIVALENT, RULES_SAME_FRAMES };

/* One side while the flags are read: a preset and its --set texts. */
struct side_flags {
	struct variant_flags variant;
	bool named;		/* --variant or --against was given */
};

struct explore_flags {
	struct side_flags side[2];	/* base, other */
	int current;			/* the side a --set changes; -1 none */
	enum rules_choice rules;
	struct explore_options o;
	bool list;
	bool quiet;
	bool force_progress;
	bool out_given;		/* --out, not the default */
};

/*
 * A whole number from @min to @max, for @flag: digits only (strtol()
 * would take " 3" and "+3" too).
 */
static int parse_count(const char *flag, const char *v, long min, long max,
		       long *out)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (v[0] < '0' || v[0] > '9' || errno || *end || n < min || n > max)
		return usage_error("%s: expected a whole number from %ld to"
				   " %ld, got '%s'", flag, min, max, v);
	*out = n;
	return 0;
}

static int name_side(struct explore_flags *fl, int side, const char *flag,
		     const char *preset)
{
	if (!in_list(pb_variant_presets(), preset))
		return unknown_in_list(flag, "variant", preset,
				    pb_variant_presets());
	if (fl->side[side].named)
		return usage_error("%s: the %s side is named twice ('%s' and"
				   " '%s')", flag,
				   side ? "other" : "reference",
				   fl->side[side].variant.preset, preset);
	fl->side[side].variant.preset = preset;
	fl->side[side].named = true;
	fl->current = side;
	return 0;
}

static int set_variant(void *f, const char *v)
{
	struct explore_flags *fl = f;

	return name_side(fl, fl->side[0].named ? 1 : 0, "--variant", v);
}

static int set_against(void *f, const char *v)
{
	return name_side(f, 1, "--against", v);
}

static int add_set(void *f, const char *arg)
{
	struct explore_flags *fl = f;

	if (fl->current < 0)
		return usage_error("--set %s: name the side it changes first"
				   " (--variant NAME or --against NAME)", arg);
	return variant_flags_add_set(&fl->side[fl->current].variant, arg);
}

static int set_rules(void *f, const char *v)
{
	static const char *const words[] = { "auto", "equivalent",
					      "same-frames", NULL };
	int i;

	for (i = 0; words[i]; i++) {
		if (!strcmp(words[i], v)) {
			((struct explore_flags *)f)->rules = (enum rules_choice)i;
			return 0;
		}
	}
	return unknown_in_list("--rules", "rule set", v, words);
}

static int set_memory(void *f, const char *v)
{
	struct explore_flags *fl = f;

	return memory_flag(v, MIN_MEMORY, &fl->o.memory_bytes);
}

static int set_depth(void *f, const char *v)
{
	long n;
	int ret = parse_count("--depth", v, 1, EXPLORE_MAX_DEPTH, &n);

	((struct explore_flags *)f)->o.depth = (int)n;
	return ret;
}

static int set_max_seconds(void *f, const char *v)
{
	long n;
	int ret = parse_count("--max-seconds", v, 1, 7 * 24 * 3600, &n);

	((struct explore_flags *)f)->o.max_seconds = (double)n;
	return ret;
}

/* --shard I/N: shard I (from 1) of N. */
static int set_shard(void *f, const char *v)
{
	struct explore_options *o = &((struct explore_flags *)f)->o;
	const char *slash = strchr(v, '/');
	char *end;
	long i, n;

	/* Digits on both sides: strtol() would take spaces and signs. */
	if (!slash || v[0] < '0' || v[0] > '9' || slash[1] < '0' ||
	    slash[1] > '9')
		goto bad;
	errno = 0;
	i = strtol(v, &end, 10);
	if (errno || end == v || *end != '/')
		goto bad;
	n = strtol(end + 1, &end, 10);
	if (errno || end == slash + 1 || *end || n < 1 ||
	    n > EXPLORE_MAX_SHARDS || i < 1 || i > n)
		goto bad;
	o->shard = (unsigned int)i;
	o->nr_shards = (unsigned int)n;
	return 0;
bad:
	return usage_error("--shard: expected I/N, N from 1 to %d and I from 1"
			   " to N, got '%s'", EXPLORE_MAX_SHARDS, v);
}

static int set_quiet(void *f, const char *v)
{
	((struct explore_flags *)f)->quiet = true;
	return 0;
}

static int set_progress(void *f, const char *v)
{
	((struct explore_flags *)f)->force_progress = true;
	return 0;
}

static int set_list(void *f, const char *v)
{
	((struct explore_flags *)f)->list = true;
	return 0;
}

static int set_thp(void *f, const char *v)
{
	((struct explore_flags *)f)->o.thp = true;
	return 0;
}

static int set_check_all(void *f, const char *v)
{
	((struct explore_flags *)f)->o.check_all = true;
	return 0;
}

static int set_verify_pruning(void *f, const char *v)
{
	((struct explore_flags *)f)->o.verify_pruning = true;
	return 0;
}

static int set_out(void *f, const char *v)
{
	if (!*v)
		return usage_error("--out: empty directory name");
	((struct explore_flags *)f)->o.out_dir = v;
	((struct explore_flags *)f)->out_given = true;
	return 0;
}

static int no_operands(void *f, const char *word)
{
	return usage_error("unexpected argument '%s' (explore takes no files)",
			   word);
}

static const struct cli_option explore_options[] = {
	{ .name = "--depth", .arg = "K", .set = set_depth,
	  .help = "operations per sequence, 1 to " CLI_STR(EXPLORE_MAX_DEPTH)
		  " (default " CLI_STR(DEFAULT_DEPTH) ")" },
	{ .name = "--variant", .arg = "NAME", .set = set_variant,
	  .help = "the reference side's preset (baseline by default); given"
		  " twice, the second names the other side" },
	{ .name = "--against", .arg = "NAME", .set = set_against,
	  .help = "the other side's preset (seeds by default)" },
	{ .name = "--set", .arg = "KEY=VALUE", .set = add_set, .repeat = true,
	  .help = "change one switch of the side named just before it" },
	{ .name = "--rules", .arg = "RULES", .set = set_rules,
	  .help = "auto (the default: same-frames when both sides have the"
		  " same wp_reuse_max, else equivalent), equivalent or"
		  " same-frames (scenario/compare.h)" },
	{ .name = "--thp", .set = set_thp,
	  .help = "add a 2M region mapped by a THP, and write, split and"
		  " madvise dontneed on it (slower: each THP is 2M of pages);"
		  " only where the PMD is 2M (4K pages)" },
	{ .name = "--memory", .arg = "SIZE", .set = set_memory,
	  .help = "simulated memory per run (default {explore_memory}, the"
		  " least: four PMDs, at least 8M): a multiple of {pmd}, from"
		  " {explore_memory}" },
	{ .name = "--max-seconds", .arg = "N", .set = set_max_seconds,
	  .help = "stop after N seconds and say how deep it got" },
	{ .name = "--check-all", .set = set_check_all,
	  .help = "check after every statement of every run, not only after"
		  " those its prefix had not run yet" },
	{ .name = "--verify-pruning", .set = set_verify_pruning,
	  .help = "run one more operation after each pruned sequence and"
		  " after the one it was pruned for: they must agree" },
	{ .name = "--quiet", .set = set_quiet,
	  .help = "only the summary line (and a finding); not with"
		  " --progress" },
	{ .name = "--progress", .set = set_progress,
	  .help = "a live count (and sequences per second) on stderr even"
		  " when it is not a terminal" },
	{ .name = "--shard", .arg = "I/N", .set = set_shard,
	  .help = "run shard I of N (N at most " CLI_STR(EXPLORE_MAX_SHARDS)
		  "): every depth but the last whole, of the last depth every"
		  " Nth sequence from the Ith; N shards together find what one"
		  " run finds (README), and their exit statuses together are"
		  " the whole run's" },
	{ .name = "--out", .arg = "DIR", .set = set_out,
	  .help = "where a finding is written as DIR/explore-SEQ.scn, both"
		  " records as comments (default " DEFAULT_OUT "); the run"
		  " ends with the `ptebatch run` commands that reproduce it" },
	{ .name = "--arch", .arg = "ARCH",
	  .help = "the model built for another architecture (see 'run')" },
	{ .name = "--list", .set = set_list,
	  .help = "print the prelude and the operations, and exit" },
	{ .name = NULL },
};

/* What explore's help says that the page and PMD sizes decide. */
static const char *explore_fact(const char *key, char *buf, size_t size)
{
	if (!strcmp(key, "explore_memory"))
		return record_size_text(buf, size, MIN_MEMORY);
	/* Region A's folios: four pages, 16K with 4K (alphabet_init()). */
	if (!strcmp(key, "explore_folio"))
		return record_size_text(buf, size, 4 * pb_page_size());
	return NULL;
}

static const struct cli_help explore_help = {
	.name = "explore",
	.options = explore_options,
	.about = "run every sequence of up to K operations (write, read, fork,"
		 " exit, mprotect r/rw, madvise dontneed, register, unregister,"
		 " vmsplice, drain, dio-write) on two {explore_folio} folios"
		 " and two {page} pages, by at most two processes, under two"
		 " variants, with the invariant check after every statement,"
		 " and compare the two records; a sequence that reaches a state"
		 " met before is not extended.  The first difference or"
		 " violation is printed as a scenario for `ptebatch run`, with"
		 " both records",
	.epilogue = "exit status: 0 every sequence agreed, 1 a difference, a"
		    " violation or a failed\n"
		    "             run (printed), 2 bad usage; of a shard, of"
		    " its part\n",
	.fact = explore_fact,
};

static void explore_usage(FILE *f)
{
	cli_usage(f, &explore_help);
}

/* The side's variant, and its name "preset+k=v+..." (malloc'd). */
static int build_side(const struct side_flags *sf, struct explore_side *side,
		      char **name)
{
	int ret = variant_flags_build(&sf->variant, &side->variant, name);

	if (!ret)
		side->name = *name;
	return ret;
}

/*
 * Variants that agree on every switch whose effect is FAULTS
 * (include/ptebatch_switches.h: write-fault reuse) must print the same
 * record, frames and faults included; the others may save a fault or a
 * copy.
 */
static unsigned int pick_rules(const struct explore_flags *fl)
{
	switch (fl->rules) {
	case RULES_EQUIVALENT:
		return CMP_EQUIVALENT;
	case RULES_SAME_FRAMES:
		return CMP_SAME_FRAMES;
	case RULES_AUTO:
		break;
	}
	return pb_variant_same_frames(&fl->o.base.variant,
				      &fl->o.other.variant) ?
	       CMP_SAME_FRAMES : CMP_EQUIVALENT;
}

static void print_summary(const struct explore_options *o,
			  const struct explore_result *r, int ret)
{
	printf("explore: %s against %s, rules %s, depth %d", o->base.name,
	       o->other.name, o->rules & CMP_SAME_FRAMES ? "same-frames" :
	       "equivalent", o->depth);
	/* What the shards' lines add up to: each its part of the last depth. */
	if (o->nr_shards > 1)
		printf(", shard %u/%u: %lu sequences (%lu of %lu at depth %d)",
		       o->shard, o->nr_shards, r->sequences, r->last_run,
		       r->last_total, o->depth);
	else
		printf(": %lu sequences", r->sequences);
	printf(", %lu distinct states, %lu pruned, %.1f s", r->states,
	       r->pruned, r->seconds);
	if (o->verify_pruning)
		printf(", %lu pruned continuations verified", r->verified);
	if (ret == EXPLORE_FOUND)
		fputs(": FOUND (above)\n", stdout);
	else if (r->stopped)
		printf(": stopped by --max-seconds; complete to depth %d\n",
		       r->depth_done);
	else if (r->depth_done == o->depth && ret == 0)
		fputs(": all agree\n", stdout);
	else
		fputc('\n', stdout);
}

static int explore_main(int argc, char **argv)
{
	struct explore_flags fl = {
		.side = { { .named = false }, { .named = false } },
		.current = -1,
		.o = { .depth = DEFAULT_DEPTH, .memory_bytes = DEFAULT_MEMORY,
		       .levels = true, .out_dir = DEFAULT_OUT },
	};
	struct explore_result r;
	char *names[2] = { NULL, NULL }, why[1200];
	int ret;

	command = "explore";
	ret = variant_flags_init(&fl.side[0].variant, argc, "baseline");
	if (!ret)
		ret = variant_flags_init(&fl.side[1].variant, argc, "seeds");
	if (!ret)
		ret = cli_parse(explore_options, &fl, no_operands, argc, argv);
	if (!ret && fl.quiet && fl.force_progress)
		ret = usage_error("--quiet and --progress contradict each"
				  " other");
	if (!ret)
		ret = build_side(&fl.side[0], &fl.o.base, &names[0]);
	if (!ret)
		ret = build_side(&fl.side[1], &fl.o.other, &names[1]);
	if (ret)
		goto out;
	if (fl.list) {
		explore_alphabet_text(stdout, fl.o.thp);
		goto out;
	}
	/* Where a finding would go, before the search: checked, made when
	 * the first finding is written. */
	if (outfile_check_dir("--out", fl.o.out_dir, why, sizeof(why))) {
		ret = usage_error("%s%s", why, fl.out_given ? "" :
				  " (the default --out)");
		goto out;
	}
	fl.o.rules = pick_rules(&fl);
	fl.o.levels = !fl.quiet;
	fl.o.progress = fl.force_progress ||
			(!fl.quiet && isatty(STDERR_FILENO));

	/*
	 * The checker allocates arrays the size of the memmap after every
	 * statement of every run; keep freed memory in the heap so each one
	 * does not cost an mmap, page faults and an munmap.
	 */
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	ret = explore(&fl.o, &r, stdout, stderr);
	print_summary(&fl.o, &r, ret);
	if (ret == EXPLORE_FOUND && r.finding[0])
		explore_print_reproducer(stdout, &fl.o, r.finding);
	if (ret < 0) {
		fprintf(stderr, "ptebatch explore: %s\n", strerror(-ret));
		ret = SCN_RUN_FAILED;
	}
out:
	fflush(stdout);
	free(names[0]);
	free(names[1]);
	variant_flags_free(&fl.side[0].variant);
	variant_flags_free(&fl.side[1].variant);
	return ret;
}

const struct cli_command explore_command = {
	.name = "explore",
	.main = explore_main,
	.usage = explore_usage,
	.takes_arch = true,
};
