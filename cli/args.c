// SPDX-License-Identifier: GPL-2.0-only
/*
 * args.c - what every command's argument parsing shares: the option
 * parser, the usage-error message, the "unknown WORD (known: ...)"
 * refusal, and the --variant/--set flags.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "cli/cli.h"
#include "scenario/record.h"
#include "scenario/run.h"
#include "scenario/scenario.h"

const char *command;

int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("ptebatch: ", stderr);
	if (command)
		fprintf(stderr, "%s: ", command);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'ptebatch help'.\n", stderr);
	return EXIT_USAGE;
}

int out_of_memory(void)
{
	fprintf(stderr, "ptebatch: out of memory\n");
	return SCN_RUN_FAILED;
}

bool in_list(const char *const *list, const char *word)
{
	for (; *list; list++)
		if (!strcmp(*list, word))
			return true;
	return false;
}

int unknown_in_list(const char *flag, const char *what, const char *word,
		    const char *const *list)
{
	char known[256] = "";
	size_t len = 0;

	for (; *list; list++) {
		int n = snprintf(known + len, sizeof(known) - len, "%s%s",
				 len ? " " : "", *list);

		if (n < 0 || (size_t)n >= sizeof(known) - len)
			break;
		len += (size_t)n;
	}
	return usage_error("%s: unknown %s '%s' (known: %s)", flag, what, word,
			   known);
}

static const struct cli_option *find_option(const struct cli_option *table,
					    const char *arg, size_t len)
{
	for (; table->name; table++)
		if (strlen(table->name) == len && !strncmp(table->name, arg, len))
			return table;
	return NULL;
}

int cli_parse(const struct cli_option *table, void *opts,
	      int (*operand)(void *opts, const char *word), int argc,
	      char **argv)
{
	bool options_done = false;
	int i, ret;

	for (i = 0; i < argc; i++) {
		const char *arg = argv[i], *eq = strchr(arg, '='), *value = NULL;
		const struct cli_option *o;

		if (!options_done && !strcmp(arg, "--")) {
			options_done = true;
			continue;
		}
		if (options_done || arg[0] != '-' || !arg[1]) {
			ret = operand(opts, arg);
			if (ret)
				return ret;
			continue;
		}
		o = find_option(table, arg, eq ? (size_t)(eq - arg) : strlen(arg));
		if (!o)
			return usage_error("unknown option '%s'", arg);
		if (!o->has_value && eq)
			return usage_error("%s takes no value", o->name);
		if (o->has_value) {
			if (eq)
				value = eq + 1;
			else if (i + 1 < argc)
				value = argv[++i];
			else
				return usage_error("%s needs a value", o->name);
		}
		ret = o->set(opts, value);
		if (ret)
			return ret;
	}
	return 0;
}

int memory_flag(const char *arg, unsigned long min, unsigned long *out)
{
	unsigned long bytes, block = pb_pmd_size(), host = bench_host_memory();
	char a[24];

	if (scenario_parse_number(arg, &bytes))
		return usage_error("--memory: bad size '%s' (e.g. 256M or 4G)",
				   arg);
	if (bytes < min)
		return usage_error("--memory: '%s' is below the minimum %s", arg,
				   record_size_text(a, sizeof(a), min));
	if (bytes > PB_MAX_MEMORY)
		return usage_error("--memory: '%s' is above the model's maximum"
				   " %s", arg,
				   record_size_text(a, sizeof(a), PB_MAX_MEMORY));
	if (bytes % block)
		return usage_error("--memory: '%s' is not a multiple of %s (the"
				   " model's memory comes in PMD-size blocks)",
				   arg, record_size_text(a, sizeof(a), block));
	/* Frames cost the host their memmap, not their size (page_data.c). */
	if (host && pb_host_bytes(bytes) > host)
		return usage_error("--memory: '%s' needs %.1fG of memmap and page"
				   " tables when in use, more than this machine's"
				   " %.1fG of memory", arg,
				   (double)pb_host_bytes(bytes) / (1UL << 30),
				   (double)host / (1UL << 30));
	*out = bytes;
	return 0;
}

unsigned long model_min_memory(void)
{
	unsigned long four_pmds = 4 * pb_pmd_size();

	return four_pmds > (16UL << 20) ? four_pmds : 16UL << 20;
}

int variant_flags_init(struct variant_flags *vf, int argc, const char *preset)
{
	vf->preset = preset;
	vf->nr_sets = 0;
	vf->sets = calloc((size_t)argc + 1, sizeof(*vf->sets));
	return vf->sets ? 0 : out_of_memory();
}

void variant_flags_free(struct variant_flags *vf)
{
	free(vf->sets);
	vf->sets = NULL;
}

int variant_flags_preset(struct variant_flags *vf, const char *flag,
			 const char *preset)
{
	if (!in_list(pb_variant_presets(), preset))
		return unknown_in_list(flag, "variant", preset,
				       pb_variant_presets());
	vf->preset = preset;
	return 0;
}

int variant_flags_add_set(struct variant_flags *vf, const char *arg)
{
	const char *eq = strchr(arg, '=');

	if (!eq || eq == arg || !eq[1])
		return usage_error("--set: expected KEY=VALUE, got '%s'", arg);
	if (strpbrk(arg, " \t\n+"))
		return usage_error("--set: '%s' may not contain spaces or '+'",
				   arg);
	vf->sets[vf->nr_sets++] = arg;
	return 0;
}

/* Apply one --set KEY=VALUE to @v, explaining a refusal. */
static int apply_set(struct pb_variant *v, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char key[64], flag[128];
	int ret;

	snprintf(flag, sizeof(flag), "--set %s", arg);
	if (!eq || (size_t)(eq - arg) >= sizeof(key))
		return unknown_in_list(flag, "switch", eq ? "(too long)" : arg,
				       pb_variant_switches());
	memcpy(key, arg, (size_t)(eq - arg));
	key[eq - arg] = '\0';
	ret = pb_variant_set(v, key, eq + 1);
	if (ret == -ENOENT)
		return unknown_in_list(flag, "switch", key,
				       pb_variant_switches());
	if (ret == -EINVAL)
		return usage_error("%s: bad value '%s'; %s %s", flag, eq + 1,
				   key, pb_variant_switch_help(key));
	if (ret)
		return usage_error("%s: %s", flag, strerror(-ret));
	return 0;
}

int variant_flags_build(const struct variant_flags *vf, struct pb_variant *v,
			char **name)
{
	size_t len = strlen(vf->preset) + 1;
	int i, ret;

	if (pb_variant_preset(vf->preset, v))
		return unknown_in_list("--variant", "variant", vf->preset,
				       pb_variant_presets());
	for (i = 0; i < vf->nr_sets; i++) {
		ret = apply_set(v, vf->sets[i]);
		if (ret)
			return ret;
		len += 1 + strlen(vf->sets[i]);
	}
	*name = malloc(len);
	if (!*name)
		return out_of_memory();
	strcpy(*name, vf->preset);
	for (i = 0; i < vf->nr_sets; i++) {
		strcat(*name, "+");
		strcat(*name, vf->sets[i]);
	}
	return 0;
}

int reps_flag(const char *arg, int *reps)
{
	unsigned long n;
	char *end;

	errno = 0;
	n = strtoul(arg, &end, 10);
	if (arg[0] < '0' || arg[0] > '9' || errno || *end || n < 1 ||
	    n > BENCH_MAX_REPS)
		return usage_error("--reps: expected a number from 1 to %d,"
				   " got '%s'", BENCH_MAX_REPS, arg);
	*reps = (int)n;
	return 0;
}
