// SPDX-License-Identifier: GPL-2.0-only
/*
 * variant.c: the switches that choose per-PTE or batched paths, and their
 * presets, as one table made from include/ptebatch_switches.h.  Parsing,
 * help, presets and the equivalence rule all read the table; the machine's
 * variant is read on the hot paths as plain fields (machine.variant).
 */
#include <stddef.h>
#include <stdlib.h>

#include "mm/internal.h"

enum { PRESET_BASELINE, PRESET_UPSTREAM, PRESET_SEEDS, NR_PRESETS };

static const char *const preset_names[NR_PRESETS + 1] = {
	[PRESET_BASELINE] = "baseline",
	[PRESET_UPSTREAM] = "upstream",
	[PRESET_SEEDS] = "seeds",
};

enum switch_kind { SWITCH_BOOL, SWITCH_POW2 };
enum switch_effect { SWITCH_COST, SWITCH_FAULTS };

struct switch_row {
	const char *name;
	enum switch_kind kind;
	unsigned int max;
	unsigned int preset[NR_PRESETS];
	enum switch_effect effect;
	const char *help;
	size_t offset;		/* of the field in struct pb_variant */
};

static const struct switch_row switches[] = {
#define PB_SWITCH(n, k, mx, b, u, s, eff, text)			\
	{ .name = #n, .kind = SWITCH_##k, .max = (mx),			\
	  .preset = { (b), (u), (s) },					\
	  .effect = SWITCH_##eff, .help = (text),			\
	  .offset = offsetof(struct pb_variant, n) },
#include "ptebatch_switches.h"
#undef PB_SWITCH
};
#define NR_SWITCHES (sizeof(switches) / sizeof(switches[0]))

static const char *const switch_names[NR_SWITCHES + 1] = {
#define PB_SWITCH(n, ...) #n,
#include "ptebatch_switches.h"
#undef PB_SWITCH
};

static const struct switch_row *find_switch(const char *key)
{
	unsigned int i;

	for (i = 0; i < NR_SWITCHES; i++)
		if (!strcmp(key, switches[i].name))
			return &switches[i];
	return NULL;
}

static unsigned int switch_get(const struct pb_variant *v,
			       const struct switch_row *sw)
{
	const char *field = (const char *)v + sw->offset;

	if (sw->kind == SWITCH_BOOL)
		return *(const bool *)field;
	return *(const unsigned int *)field;
}

static void switch_put(struct pb_variant *v, const struct switch_row *sw,
		       unsigned int value)
{
	char *field = (char *)v + sw->offset;

	if (sw->kind == SWITCH_BOOL)
		*(bool *)field = value;
	else
		*(unsigned int *)field = value;
}

const char *const *pb_variant_presets(void) { return preset_names; }
const char *const *pb_variant_switches(void) { return switch_names; }

/* The range, then what the switch does: made once per switch. */
const char *pb_variant_switch_help(const char *key)
{
	static char text[NR_SWITCHES][256];
	const struct switch_row *sw = find_switch(key);
	char *buf;

	if (!sw)
		return NULL;
	buf = text[sw - switches];
	if (sw->kind == SWITCH_BOOL)
		snprintf(buf, sizeof(text[0]), "0|1: %s", sw->help);
	else
		snprintf(buf, sizeof(text[0]), "1..%u, a power of two: %s",
			 sw->max, sw->help);
	return buf;
}

int pb_variant_preset(const char *name, struct pb_variant *v)
{
	unsigned int p, i;

	for (p = 0; p < NR_PRESETS; p++) {
		if (strcmp(name, preset_names[p]))
			continue;
		memset(v, 0, sizeof(*v));
		for (i = 0; i < NR_SWITCHES; i++)
			switch_put(v, &switches[i], switches[i].preset[p]);
		return 0;
	}
	return -EINVAL;
}

static int parse_value(const struct switch_row *sw, const char *value,
		       unsigned int *out)
{
	unsigned long n;
	char *end;

	if (sw->kind == SWITCH_BOOL) {
		if (!strcmp(value, "0") || !strcmp(value, "off"))
			*out = 0;
		else if (!strcmp(value, "1") || !strcmp(value, "on"))
			*out = 1;
		else
			return -EINVAL;
		return 0;
	}
	n = strtoul(value, &end, 10);
	if (end == value || *end || !n || n > sw->max || (n & (n - 1)))
		return -EINVAL;
	*out = (unsigned int)n;
	return 0;
}

int pb_variant_set(struct pb_variant *v, const char *key, const char *value)
{
	const struct switch_row *sw = find_switch(key);
	unsigned int n;
	int ret;

	if (!sw)
		return -ENOENT;
	ret = parse_value(sw, value, &n);
	if (!ret)
		switch_put(v, sw, n);
	return ret;
}

int pb_variant_from_name(const char *name, struct pb_variant *v)
{
	char *copy = strdup(name), *part, *save = NULL, *eq;
	int ret = -ENOMEM;

	if (!copy)
		return ret;
	part = strtok_r(copy, "+", &save);
	ret = part ? pb_variant_preset(part, v) : -EINVAL;
	while (!ret && (part = strtok_r(NULL, "+", &save))) {
		eq = strchr(part, '=');
		if (!eq) {
			ret = -EINVAL;
			break;
		}
		*eq = '\0';
		ret = pb_variant_set(v, part, eq + 1);
	}
	free(copy);
	return ret;
}

bool pb_variant_same_frames(const struct pb_variant *a,
			    const struct pb_variant *b)
{
	unsigned int i;

	for (i = 0; i < NR_SWITCHES; i++)
		if (switches[i].effect == SWITCH_FAULTS &&
		    switch_get(a, &switches[i]) != switch_get(b, &switches[i]))
			return false;
	return true;
}

void pb_set_variant(const struct pb_variant *v) { machine.variant = *v; }
void pb_get_variant(struct pb_variant *v) { *v = machine.variant; }
