/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cli/ - the ptebatch command: one file per command (run.c, diff.c,
 * bench.c, explore.c, record.c, calibrate.c, predict.c, plot.c, vm.c),
 * each owning its option table, whose rows carry their help; main.c
 * dispatches and prints the help, arch.c re-runs a command in another
 * architecture's build, args.c holds what the parsers share and prints
 * every usage from its table.  The work is done by scenario/, backend/,
 * bench/, diff/, explore/, record/ and calibrate/.
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
	/* Its help: cli_usage() of its struct cli_help. */
	void (*usage)(FILE *f);
	/*
	 * --arch ARCH runs it in that architecture's build (arch.c); its
	 * table has a row for the help, which has no setter.
	 */
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
/*
 * --backend's "vm" or "vm:NAME" (run, diff, bench, calibrate): the NAME,
 * "" for "vm" (the newest kernel of this architecture); NULL for any
 * other word.
 */
const char *vm_backend_spec(const char *value);
/* "FLAG: unknown WHAT 'word' (known: a b c)", as a usage error. */
int unknown_in_list(const char *flag, const char *what, const char *word,
		    const char *const *list);

/*
 * Options.  Each command has a table of them; cli_parse() reads argv
 * against it: "--name", "--name VALUE" or "--name=VALUE" for an option,
 * any other word (and every word after "--") to @operand.  An unknown
 * option, a value given to a flag or a missing value is a usage error
 * naming it; so is what a setter or @operand refuses.  cli_usage()
 * prints the same rows as the command's help, so an option is written
 * once: its name, its value's placeholder and what it does.
 */
struct cli_option {
	const char *name;	/* "--memory", "-o" */
	/* Its value's placeholder in the help ("SIZE"); NULL: a flag. */
	const char *arg;
	/*
	 * Take the option (@value is NULL for a flag): 0 or a usage error.
	 * NULL for a row that another reader takes (--arch: arch_redirect(),
	 * before the table is read; vm build's: scripts/kernel-build):
	 * cli_parse() refuses it as unknown.
	 */
	int (*set)(void *opts, const char *value);
	/*
	 * What it does, wrapped to the terminal's 79 columns; "\n" starts a
	 * new line.  A value that depends on the build or the machine is
	 * "{KEY}", filled in when printed (cli_fact()): never written out.
	 */
	const char *help;
	/* The synopsis lines it is on (bit N: struct cli_form N); 0: all. */
	unsigned int forms;
	/* The lines on which it is needed (no brackets around it). */
	unsigned int required;
	bool repeat;		/* may be given again: "..." in the synopsis */
};

#define CLI_FORM(n) (1U << (n))
/* A constant's digits in a help text: CLI_STR(BENCH_MAX_REPS) is "1000". */
#define CLI_STR(x) CLI_STR_(x)
#define CLI_STR_(x) #x

int cli_parse(const struct cli_option *table, void *opts,
	      int (*operand)(void *opts, const char *word), int argc,
	      char **argv);

/*
 * One line of a command's synopsis: "ptebatch NAME BEFORE [OPTION]...
 * AFTER".  A command with subcommands (vm) gives each its line, its own
 * table and what it does.
 */
struct cli_form {
	const char *before;	/* the words before the options ("replay") */
	const char *after;	/* the operands after them ("FILE.scn") */
	/* A subcommand's own table, or NULL: the command's rows of the line. */
	const struct cli_option *options;
	const char *about;	/* a subcommand's: what it does */
};

/* A command's help, printed by cli_usage(). */
struct cli_help {
	const char *name;
	const struct cli_option *options;	/* NULL: in its forms */
	/* Its synopsis lines (CLI_FORMS()); none: one line of every row. */
	const struct cli_form *forms;
	int nr_forms;
	const char *about;		/* what it does, "{KEY}"s filled in */
	/* After the options: lists the build decides (run's presets). */
	void (*lists)(FILE *f);
	/* Then as it is, "{KEY}"s filled in: operands, exit statuses. */
	const char *epilogue;
	/*
	 * The text of a "{KEY}" the command defines, into @buf; NULL for
	 * one it does not (cli_fact() has those every command shares).
	 */
	const char *(*fact)(const char *key, char *buf, size_t size);
};

#define CLI_FORMS(f) \
	.forms = (f), .nr_forms = (int)(sizeof(f) / sizeof((f)[0]))

/*
 * Print @h: the synopsis, what the command does, a paragraph per option
 * (and --help, which main.c takes), then its lists and epilogue.
 */
void cli_usage(FILE *f, const struct cli_help *h);
/*
 * `ptebatch help --list-options` sets it: cli_usage() then prints every
 * row it would print, one "COMMAND NAME [ARG]" a line (for
 * tests/cli-errors.sh, which finds each in the command's --help).
 */
extern bool cli_usage_rows;
/*
 * A "{KEY}" every command's help may use, into @buf: page, pmd (this
 * build's sizes), min_memory (run's and predict's least --memory),
 * default_memory, max_memory, memmap_share ("1/30": what a frame's
 * memmap costs the host), arch (this build's), calibration (the default
 * calibration's path), bench_max_size, scenario_max_bytes.  NULL for
 * another.
 */
const char *cli_fact(const char *key, char *buf, size_t size);

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
