/*
 * cli.h - the commands of the ptebatch tool that live outside main.c.
 */
#ifndef PTEBATCH_CLI_H
#define PTEBATCH_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "ptebatch.h"

#define EXIT_USAGE 2

/* The command whose arguments are being read, for messages; NULL before. */
extern const char *command;

/*
 * Report a usage error, "ptebatch: COMMAND: message" and a hint, and
 * return the status to exit with (EXIT_USAGE).
 */
int __attribute__((format(printf, 1, 2))) usage_error(const char *fmt, ...);
bool in_list(const char *const *list, const char *word);
/* "FLAG: unknown WHAT 'word' (known: a b c)", as a usage error. */
int unknown_in_list(const char *flag, const char *what, const char *word,
		    const char *const *list);
/* Apply one --set KEY=VALUE to @v, explaining a refusal. */
int apply_set(struct pb_variant *v, const char *arg);

/* ptebatch explore ...: argc/argv start after the command's name. */
int cmd_explore(int argc, char **argv);
void explore_usage_text(FILE *f);

#endif
