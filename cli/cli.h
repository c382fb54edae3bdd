/*
 * cli.h - the commands of the ptebatch tool that live outside main.c.
 */
#ifndef PTEBATCH_CLI_H
#define PTEBATCH_CLI_H

#include <stdio.h>

/* ptebatch explore ...: argc/argv start after the command's name. */
int cmd_explore(int argc, char **argv);
void explore_usage_text(FILE *f);

#endif
