/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * diff.h - the engine of `ptebatch diff` (cli/diff.c is the command): one
 * scenario text on the model and on a kernel, compared (diff.c), every
 * file of `diff FILE...` so, and `diff --random N` (random.c).
 */
#ifndef PTEBATCH_DIFF_DIFF_H
#define PTEBATCH_DIFF_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ptebatch.h"

/*
 * DIFF_VARIES: the records differ, and so do the kernel's own records of
 * the same scenario from run to run at or before the first difference:
 * something outside the scenario changed a count (backend/host.h), which
 * says nothing of the model.
 */
enum diff_verdict { DIFF_MATCH, DIFF_MISMATCH, DIFF_SKIP, DIFF_ERROR,
		    DIFF_VARIES };

/* diff's exit status when nothing mismatched but some kernel count varied. */
#define DIFF_EXIT_VARIES 5

/* Kernel runs of a mismatching scenario, to tell VARIES from MISMATCH. */
#define DIFF_VARY_RUNS 5

/*
 * The kernel side's exit status for bad usage (`ptebatch run`'s, as
 * cli/cli.h's EXIT_USAGE): what a ptebatch without the kernel backend
 * says to --backend kernel.
 */
#define DIFF_KERNEL_EXIT_USAGE 2

extern const char *const diff_words[];

/* A scenario file as diff reads it: once, whatever it is (a pipe too). */
struct diff_file {
	const char *path;
	char *text;
	size_t len;
};

/* A growing text buffer; the functions below keep it NUL-terminated. */
struct text {
	char *buf;
	size_t len;
};

void text_free(struct text *t);

struct vm_guest;

/* How diff_one() runs and compares a scenario. */
struct diff_config {
	const char *self;		/* the kernel side's program */
	/* Not NULL: the kernel side runs in this guest (vm/vm.h). */
	struct vm_guest *vm;
	const struct pb_variant *variant;
	const char *variant_name;
	bool counters;			/* --counters */
	/*
	 * Kernel runs a mismatch may take to tell VARIES from MISMATCH
	 * (1: none again, the first difference is the verdict).
	 */
	int vary_runs;
	/* The model as this machine's kernel is configured (host.h). */
	bool read_faults_allocate;
	/*
	 * This machine's kernel splits a PMD-mapped THP that is exclusive
	 * again on a write fault (host.h, pmd_reuse 0): a steady mismatch
	 * where the kernel faulted more is a SKIP, not the model's.
	 */
	bool host_splits_pmd_reuse;
	/*
	 * --functions: the guest kernel's function counts (run --count
	 * default) held to the model's cost counters, statement by
	 * statement.
	 */
	bool functions;
	/*
	 * Not NULL: how many statements agree, per function pair
	 * (--functions) and per accounting counter (--counters), tallied
	 * over the run.
	 */
	struct diff_tally *tally;
};

/* How many statements agree on one counter, and the first that does not. */
struct diff_agreement {
	unsigned long agree, total;
	char first[400];		/* the first disagreement, or "" */
};

/* One model counter (a sum of cost counters) against one function. */
#define DIFF_FN_PAIRS	11
/* Accounting counters told apart (pins, THP faults, per-size ones). */
#define DIFF_KSTAT_NAMES	64
struct diff_tally {
	struct diff_agreement pair[DIFF_FN_PAIRS];
	struct diff_kstat_agreement {
		char name[48];
		struct diff_agreement a;
	} kstat[DIFF_KSTAT_NAMES];
	int nr_kstats;
};

/*
 * The tables after a run, as "# " lines on @f: the function pairs if
 * @functions, the accounting counters if @counters.
 */
void diff_tally_report(FILE *f, const struct diff_tally *t, bool functions,
		       bool counters);

/*
 * @f parsed, run on the model (in this process) and on the kernel (the
 * program @c->self, `run --backend kernel`, in a child) and the records
 * compared: the verdict, its one line in @why.  With @model and @kernel
 * not NULL, the two records are left there (the caller frees them).
 */
enum diff_verdict diff_one(const struct diff_config *c,
			   const struct diff_file *f, struct text *detail,
			   char *why, size_t whylen, struct text *model,
			   struct text *kernel);

/*
 * Look at this machine's kernel (backend/host.h) unless a stand-in runs
 * the kernel side: fill @c->read_faults_allocate and print the facts as one
 * "# this kernel ..." line on stdout.
 */
void diff_host_setup(struct diff_config *c);

/* The program that runs the kernel side (PTEBATCH_DIFF_KERNEL or this
 * one) into @self: 0, or the status to exit with. */
int diff_kernel_side(char *self, size_t size);

/* diff FILE...: the files diff_main() read, each of which parses. */
struct diff_files_options {
	const struct diff_file *files;
	int nr_files;
	bool counters;		/* --counters */
	bool functions;		/* --functions */
	struct vm_guest *vm;	/* --backend vm: the guest, booted */
};

/*
 * Each file on the model and on the kernel (diff_one()): a line each,
 * MATCH FILE, MISMATCH/VARIES/SKIP/ERROR FILE: why, then the counts and
 * the tally tables on stdout.  The status to exit with: 0, 1 (a
 * mismatch or an error) or DIFF_EXIT_VARIES.
 */
int diff_files(const struct diff_files_options *o,
	       const struct pb_variant *variant, const char *variant_name);

/* Where --random's findings go when no --out is given. */
#define DIFF_RANDOM_OUT_DIR "random-diff"

/* diff --random N ...: the options diff_main() read, and the rest. */
struct diff_random_options {
	unsigned long count;	/* N */
	unsigned long first;	/* --index: the first scenario's index */
	uint64_t seed;
	bool have_seed;
	int length;
	const char *out_dir;	/* --out */
	const char *dump_dir;	/* --dump: write the scenarios, run nothing */
	bool no_shrink;
	struct vm_guest *vm;	/* --backend vm: the guest, booted */
};

/*
 * The N scenarios of the seed, each compared as a file is; a mismatch run
 * again, shrunk and written to OUT (or each written to --dump's DIR,
 * nothing run).  The caller checked that OUT or DIR can be made and this
 * build's pages are 4K (the generator's).  The status to exit with, as
 * diff_files()'s (SCN_RUN_SKIPPED: the kernel side cannot run here), or
 * -ENOMEM.
 */
int diff_random(const struct diff_random_options *o,
		const struct pb_variant *variant, const char *variant_name);

#endif
