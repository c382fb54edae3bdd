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
#include "explore/explore.h"
#include "scenario/compare.h"
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

enum rules_choice { RULES_AUTO, RULES_EQUIVALENT, RULES_SAME_FRAMES };

/* One side while the flags are read: a preset and its --set texts. */
struct side_flags {
	const char *preset;
	const char **sets;
	int nr_sets;
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
};

void explore_usage_text(FILE *f)
{
	fputs("usage: ptebatch explore [--depth K] [--variant NAME [--set"
	      " KEY=VALUE]...]\n"
	      "                        [--against NAME [--set KEY=VALUE]...]"
	      " [--rules RULES]\n"
	      "                        [--thp] [--memory SIZE] [--max-seconds"
	      " N] [--check-all]\n"
	      "                        [--verify-pruning] [--quiet|--progress]"
	      " [--list]\n"
	      "\n"
	      "explore   run every sequence of up to K operations (write, read,"
	      " fork, exit,\n"
	      "          mprotect r/rw, madvise dontneed, register, unregister,"
	      " vmsplice,\n"
	      "          drain, dio-write) on two 16K folios and two 4K pages,"
	      " by at most two\n"
	      "          processes, under two variants, with the invariant"
	      " check after every\n"
	      "          statement, and compare the two records; a sequence"
	      " that reaches a\n"
	      "          state met before is not extended.  The first"
	      " difference or violation\n"
	      "          is printed as a scenario for `ptebatch run`, with"
	      " both records\n"
	      "  --depth K         operations per sequence, 1 to ", f);
	fprintf(f, "%d (default %d)\n", EXPLORE_MAX_DEPTH, DEFAULT_DEPTH);
	fputs("  --variant NAME    the reference side's preset (baseline by"
	      " default); given\n"
	      "                    twice, the second names the other side\n"
	      "  --against NAME    the other side's preset (seeds by default)\n"
	      "  --set KEY=VALUE   change one switch of the side named just"
	      " before it\n"
	      "  --rules RULES     auto (the default: same-frames when both"
	      " sides have the\n"
	      "                    same wp_reuse_max, else equivalent),"
	      " equivalent or\n"
	      "                    same-frames (scenario/compare.h)\n"
	      "  --thp             add a 2M region mapped by a THP, and write,"
	      " split and\n"
	      "                    madvise dontneed on it (slower: each THP"
	      " is 2M to clear)\n"
	      "  --memory SIZE     simulated memory per run (default and least"
	      " four PMDs)\n"
	      "  --max-seconds N   stop after N seconds and say how deep it"
	      " got\n"
	      "  --check-all       check after every statement of every run,"
	      " not only after\n"
	      "                    those its prefix had not run yet\n"
	      "  --verify-pruning  run one more operation after each pruned"
	      " sequence and after\n"
	      "                    the one it was pruned for: they must agree\n"
	      "  --quiet           only the summary line (and a finding)\n"
	      "  --progress        a live count on stderr even when it is not"
	      " a terminal\n"
	      "  --list            print the prelude and the operations, and"
	      " exit\n"
	      "exit status: 0 every sequence agreed, 1 a difference, a"
	      " violation or a failed\n"
	      "             run (printed), 2 bad usage\n", f);
}




/* A whole number from @min to @max, for @flag. */
static int parse_count(const char *flag, const char *v, long min, long max,
		       long *out)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || end == v || *end || n < min || n > max)
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
				   fl->side[side].preset, preset);
	fl->side[side].preset = preset;
	fl->side[side].named = true;
	fl->current = side;
	return 0;
}

/*
 * The text goes into the record header's variant token after a '+', as in
 * `ptebatch run`, so it may hold no space and no '+'.
 */
static int add_set(struct explore_flags *fl, const char *arg)
{
	const char *eq = strchr(arg, '=');
	struct side_flags *sf;

	if (fl->current < 0)
		return usage_error("--set %s: name the side it changes first"
				   " (--variant NAME or --against NAME)", arg);
	if (!eq || eq == arg || !eq[1])
		return usage_error("--set: expected KEY=VALUE, got '%s'", arg);
	if (strpbrk(arg, " \t\n+"))
		return usage_error("--set: '%s' may not contain spaces or '+'",
				   arg);
	sf = &fl->side[fl->current];
	sf->sets[sf->nr_sets++] = arg;
	return 0;
}

static int set_rules(struct explore_flags *fl, const char *v)
{
	static const char *const words[] = { "auto", "equivalent",
					      "same-frames", NULL };
	int i;

	for (i = 0; words[i]; i++) {
		if (!strcmp(words[i], v)) {
			fl->rules = (enum rules_choice)i;
			return 0;
		}
	}
	return unknown_in_list("--rules", "rule set", v, words);
}

static int set_memory(struct explore_flags *fl, const char *v)
{
	unsigned long bytes;

	if (scenario_parse_number(v, &bytes))
		return usage_error("--memory: bad size '%s' (e.g. 16M or 64M)",
				   v);
	if (bytes < MIN_MEMORY)
		return usage_error("--memory: '%s' is less than %luM (four PMDs)",
				   v, MIN_MEMORY >> 20);
	fl->o.memory_bytes = bytes;
	return 0;
}

/* One flag that takes a value: --name VALUE or --name=VALUE. */
static int apply_value(struct explore_flags *fl, const char *name,
		       const char *v)
{
	long n;
	int ret;

	if (!strcmp(name, "--depth")) {
		ret = parse_count(name, v, 1, EXPLORE_MAX_DEPTH, &n);
		fl->o.depth = (int)n;
		return ret;
	}
	if (!strcmp(name, "--variant"))
		return name_side(fl, fl->side[0].named ? 1 : 0, name, v);
	if (!strcmp(name, "--against"))
		return name_side(fl, 1, name, v);
	if (!strcmp(name, "--set"))
		return add_set(fl, v);
	if (!strcmp(name, "--rules"))
		return set_rules(fl, v);
	if (!strcmp(name, "--memory"))
		return set_memory(fl, v);
	ret = parse_count(name, v, 1, 7 * 24 * 3600, &n);
	fl->o.max_seconds = (double)n;
	return ret;
}

static int parse_flags(struct explore_flags *fl, int argc, char **argv)
{
	static const char *const valued[] = { "--depth", "--variant",
		"--against", "--set", "--rules", "--memory", "--max-seconds",
		NULL };
	static const char *const plain[] = { "--quiet", "--progress",
					     "--list", "--thp", "--check-all",
					     "--verify-pruning", NULL };
	int i, ret;

	for (i = 0; i < argc; i++) {
		const char *arg = argv[i], *eq = strchr(arg, '='), *v;
		char name[32];
		size_t len = eq ? (size_t)(eq - arg) : strlen(arg);

		if (arg[0] != '-' || len >= sizeof(name))
			return usage_error("unexpected argument '%s' (explore"
					   " takes no files)", arg);
		memcpy(name, arg, len);
		name[len] = '\0';
		if (in_list(plain, name)) {
			if (eq)
				return usage_error("%s takes no value", name);
			if (!strcmp(name, "--quiet"))
				fl->quiet = true;
			else if (!strcmp(name, "--progress"))
				fl->force_progress = true;
			else if (!strcmp(name, "--thp"))
				fl->o.thp = true;
			else if (!strcmp(name, "--check-all"))
				fl->o.check_all = true;
			else if (!strcmp(name, "--verify-pruning"))
				fl->o.verify_pruning = true;
			else
				fl->list = true;
			continue;
		}
		if (!in_list(valued, name))
			return usage_error("unknown option '%s'", arg);
		if (eq)
			v = eq + 1;
		else if (i + 1 < argc)
			v = argv[++i];
		else
			return usage_error("%s needs a value", name);
		ret = apply_value(fl, name, v);
		if (ret)
			return ret;
	}
	if (fl->quiet && fl->force_progress)
		return usage_error("--quiet and --progress contradict each"
				   " other");
	return 0;
}


/* The side's variant, and its name "preset+k=v+..." (malloc'd). */
static int build_side(const struct side_flags *sf, struct explore_side *side,
		      char **name)
{
	size_t len = strlen(sf->preset) + 1;
	int i, ret;

	if (pb_variant_preset(sf->preset, &side->variant))
		return unknown_in_list("--variant", "variant", sf->preset,
				    pb_variant_presets());
	for (i = 0; i < sf->nr_sets; i++) {
		ret = apply_set(&side->variant, sf->sets[i]);
		if (ret)
			return ret;
		len += 1 + strlen(sf->sets[i]);
	}
	*name = malloc(len);
	if (!*name) {
		fputs("ptebatch explore: out of memory\n", stderr);
		return SCN_RUN_FAILED;
	}
	strcpy(*name, sf->preset);
	for (i = 0; i < sf->nr_sets; i++) {
		strcat(*name, "+");
		strcat(*name, sf->sets[i]);
	}
	side->name = *name;
	return 0;
}

/*
 * Variants with the same wp_reuse_max must print the same record, frames
 * and faults included (test_equivalence.c, rule 4); only reuse batching
 * may save a fault or a copy.
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
	return fl->o.base.variant.wp_reuse_max ==
	       fl->o.other.variant.wp_reuse_max ? CMP_SAME_FRAMES :
						  CMP_EQUIVALENT;
}

static void print_summary(const struct explore_options *o,
			  const struct explore_result *r, int ret)
{
	printf("explore: %s against %s, rules %s, depth %d: %lu sequences,"
	       " %lu distinct states, %lu pruned, %.1f s", o->base.name,
	       o->other.name, o->rules & CMP_SAME_FRAMES ? "same-frames" :
	       "equivalent", o->depth, r->sequences, r->states, r->pruned,
	       r->seconds);
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

int cmd_explore(int argc, char **argv)
{
	struct explore_flags fl = {
		.side = { { .preset = "baseline" }, { .preset = "seeds" } },
		.current = -1,
		.o = { .depth = DEFAULT_DEPTH, .memory_bytes = DEFAULT_MEMORY,
		       .levels = true },
	};
	struct explore_result r;
	char *names[2] = { NULL, NULL };
	int ret;

	command = "explore";
	/* No more --set flags than arguments, on either side. */
	fl.side[0].sets = calloc(argc + 1, sizeof(char *));
	fl.side[1].sets = calloc(argc + 1, sizeof(char *));
	ret = SCN_RUN_FAILED;
	if (!fl.side[0].sets || !fl.side[1].sets) {
		fputs("ptebatch explore: out of memory\n", stderr);
		goto out;
	}
	ret = parse_flags(&fl, argc, argv);
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
	if (ret < 0) {
		fprintf(stderr, "ptebatch explore: %s\n", strerror(-ret));
		ret = SCN_RUN_FAILED;
	}
out:
	fflush(stdout);
	free(names[0]);
	free(names[1]);
	free(fl.side[0].sets);
	free(fl.side[1].sets);
	return ret;
}
