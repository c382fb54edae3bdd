/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cli/ - the ptebatch command: one file per command (run.c, diff.c,
 * bench.c, explore.c, record.c, calibrate.c, predict.c), each owning its
 * options and usage text; main.c dispatches and prints the help, arch.c
 * re-runs a command in another architecture's build, args.c holds what
 * the parsers share.  The work is done by scenario/, backend/, bench/,
 * explore/, record/ and calibrate/.
 *
 * Exit statuses: 0 success, 1 the run failed (the model ran out of
 * memory, a benchmark failed), 2 bad usage or a scenario that does not
 * parse, 3 an invariant check failed, 4 the backend cannot run the
 * scenario here (skipped, the reason on stderr).  Bad input is refused
 * before anything runs, with one line naming the flag, value or file.
 */
#ifndef PTEBATCH_CLI_H
#define PTEBATCH_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "ptebatch.h"

#define EXIT_USAGE 2

/* A command of the tool. */
struct cli_command {
	const char *name;
	/* Run it; @argv holds what follows the command's name. */
	int (*main)(int argc, char **argv);
	void (*usage)(FILE *f);
	/* --arch ARCH runs it in that architecture's build (arch.c). */
	bool takes_arch;
};

extern const struct cli_command run_command, diff_command, bench_command,
	record_command, calibrate_command, predict_command,
	explore_command, plot_command, vm_command;

/* The command whose arguments are being read, for messages; NULL before. */
extern const char *command;

/*
 * Report a usage error, "ptebatch: COMMAND: message" and a hint, and
 * return the status to exit with (EXIT_USAGE).
 */
int __attribute__((format(printf, 1, 2))) usage_error(const char *fmt, ...);
/* "ptebatch: out of memory", and the status to exit with (1). */
int out_of_memory(void);
bool in_list(const char *const *list, const char *word);
/* "FLAG: unknown WHAT 'word' (known: a b c)", as a usage error. */
int unknown_in_list(const char *flag, const char *what, const char *word,
		    const char *const *list);

/*
 * Options.  Each command has a table of them; cli_parse() reads argv
 * against it: "--name", "--name VALUE" or "--name=VALUE" for an option,
 * any other word (and every word after "--") to @operand.  An unknown
 * option, a value given to a flag or a missing value is a usage error
 * naming it; so is what a setter or @operand refuses.
 */
struct cli_option {
	const char *name;
	bool has_value;
	/* Take the option (@value is NULL for a flag): 0 or a usage error. */
	int (*set)(void *opts, const char *value);
};

int cli_parse(const struct cli_option *table, void *opts,
	      int (*operand)(void *opts, const char *word), int argc,
	      char **argv);

/*
 * A variant on the command line: --variant PRESET, then --set KEY=VALUE
 * flags applied in order.  Its name in the record header is the preset
 * and each --set joined with '+' ("upstream+wp_reuse_max=512"), so a
 * --set may hold no space and no '+'.
 */
struct variant_flags {
	const char *preset;
	const char **sets;	/* room for as many as there are arguments */
	int nr_sets;
};

/*
 * --memory ARG, the model's simulated memory: at least @min, a multiple
 * of the PMD size, no more than the model's maximum nor this machine's
 * memory (else running out would be the host's OOM killer instead of the
 * model's ENOMEM).  0 or a usage error.
 */
int memory_flag(const char *arg, unsigned long min, unsigned long *bytes);
/* The least --memory of run and predict: a few THPs and their tables. */
unsigned long model_min_memory(void);

/*
 * --reps ARG: digits only (strtoul() would take " 5", "+5" and "-5"
 * too), 1 to BENCH_MAX_REPS, into *@reps.  0 or a usage error.
 */
int reps_flag(const char *arg, int *reps);

/* Room for @argc --set flags, and @preset.  0 or out_of_memory(). */
int variant_flags_init(struct variant_flags *vf, int argc, const char *preset);
void variant_flags_free(struct variant_flags *vf);
/* --variant @preset: a usage error naming @flag if it is no preset. */
int variant_flags_preset(struct variant_flags *vf, const char *flag,
			 const char *preset);
/* --set @arg, checked for its form; applied by variant_flags_build(). */
int variant_flags_add_set(struct variant_flags *vf, const char *arg);
/* The variant, and its name (malloc'd).  0 or a usage error. */
int variant_flags_build(const struct variant_flags *vf, struct pb_variant *v,
			char **name);

/*
 * --arch ARCH, for a command that takes it: take the option out of argv
 * and run that architecture's build with the rest (arch.c).  Returns 0 to
 * go on in this binary, or the status to exit with.
 */
int arch_redirect(int *argcp, char **argv);

/*
 * `run --fuzz NAME FILE` (cli/fuzz_input.c): FILE's bytes through fuzz
 * harness NAME as the fuzzer ran them.  0 when the harness finds nothing
 * (it abort()s otherwise), EXIT_USAGE for an unknown harness or a file
 * that cannot be read.
 */
bool fuzz_harness_known(const char *name);
int run_fuzz_input(const char *name, const char *path);

#endif
