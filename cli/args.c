// SPDX-License-Identifier: GPL-2.0-only
/*
 * args.c - what every command's argument parsing shares: the option
 * parser and the usage printer, both reading a command's option table;
 * the usage-error message, the "unknown WORD (known: ...)" refusal, and
 * the --variant/--set flags.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/host.h"
#include "bench/bench.h"
#include "calibrate/calib.h"
#include "cli/cli.h"
#include "scenario/vocab.h"
#include "scenario/readfile.h"
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

const char *vm_backend_spec(const char *value)
{
	if (!strcmp(value, "vm"))
		return "";
	return !strncmp(value, "vm:", 3) ? value + 3 : NULL;
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
		/* A row without a setter is another reader's (cli.h). */
		if (!o || !o->set)
			return usage_error("unknown option '%s'", arg);
		if (!o->arg && eq)
			return usage_error("%s takes no value", o->name);
		if (o->arg) {
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
	unsigned long bytes, block = pb_pmd_size(), host = host_memory();
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

/* ---- the usage, printed from the option tables ------------------------- */

#define USAGE_WIDTH 79		/* no line of the help is wider */
#define ABOUT_COLUMN 10		/* where what a command does starts */
#define OPTION_COLUMN 18	/* where what an option does starts, indented */

bool cli_usage_rows;

/* --help and -h, which main.c takes before any table is read. */
static const struct cli_option help_option = {
	.name = "--help",
	.help = "print this usage and exit (-h too); `ptebatch help` prints"
		" every command's",
};

const char *cli_fact(const char *key, char *buf, size_t size)
{
	unsigned long bytes;

	if (!strcmp(key, "page"))
		bytes = pb_page_size();
	else if (!strcmp(key, "pmd"))
		bytes = pb_pmd_size();
	else if (!strcmp(key, "min_memory"))
		bytes = model_min_memory();
	else if (!strcmp(key, "default_memory"))
		bytes = PB_DEFAULT_MEMORY;
	else if (!strcmp(key, "max_memory"))
		bytes = PB_MAX_MEMORY;
	else if (!strcmp(key, "bench_max_size"))
		bytes = BENCH_MAX_SIZE;
	else if (!strcmp(key, "scenario_max_bytes"))
		bytes = SCN_MAX_FILE_BYTES;
	else if (!strcmp(key, "memmap_share")) {
		/* What the host pays for the model's memory: 1/30 with 4K. */
		snprintf(buf, size, "1/%lu", PB_DEFAULT_MEMORY /
			 pb_host_bytes(PB_DEFAULT_MEMORY));
		return buf;
	} else if (!strcmp(key, "arch")) {
		snprintf(buf, size, "%s", pb_arch_name());
		return buf;
	} else if (!strcmp(key, "arches")) {
		/* scenario/vocab.c's list, the one --arch checks against. */
		size_t n = 0;
		int i;

		buf[0] = '\0';
		for (i = 0; scn_arch_names[i] && n < size; i++)
			n += (size_t)snprintf(buf + n, size - n, "%s%s",
					      i ? ", " : "", scn_arch_names[i]);
		return buf;
	} else if (!strcmp(key, "calibration")) {
		snprintf(buf, size, "%s", calib_default_output());
		return buf;
	} else {
		return NULL;
	}
	return record_size_text(buf, size, bytes);
}

/*
 * @text with each "{KEY}" filled in, the command's facts first, into
 * @buf.  A key nobody knows stays as it is, for the tests to see.
 */
static const char *fill_in(const struct cli_help *h, const char *text,
			   char *buf, size_t size)
{
	size_t len = 0;

	while (*text && len + 1 < size) {
		const char *end = *text == '{' ? strchr(text, '}') : NULL;
		char key[32], value[4096];
		const char *v = NULL;

		if (end && (size_t)(end - text - 1) < sizeof(key)) {
			memcpy(key, text + 1, (size_t)(end - text - 1));
			key[end - text - 1] = '\0';
			if (h->fact)
				v = h->fact(key, value, sizeof(value));
			if (!v)
				v = cli_fact(key, value, sizeof(value));
		}
		if (!v) {
			buf[len++] = *text++;
			continue;
		}
		len += (size_t)snprintf(buf + len, size - len, "%s", v);
		if (len >= size)
			len = size - 1;
		text = end + 1;
	}
	buf[len] = '\0';
	return buf;
}

/*
 * @text, its "{KEY}"s filled in, from column @col (where the caller's
 * label ended), filled to USAGE_WIDTH; every further line, and each
 * after a '\n' of @text, starts at column @indent.  Ends the line.
 */
static void put_text(FILE *f, const struct cli_help *h, const char *text,
		     int col, int indent)
{
	char buf[8192];
	const char *p = fill_in(h, text ? text : "", buf, sizeof(buf));
	bool line_start = true;

	while (*p) {
		int spaces = (int)strspn(p, " "), len;

		if (p[spaces] == '\n') {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
			line_start = true;
			p += spaces + 1;
			continue;
		}
		len = (int)strcspn(p + spaces, " \n");
		if (!len) {
			p += spaces;
			continue;
		}
		if (!line_start && col + spaces + len > USAGE_WIDTH) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
			line_start = true;
		}
		if (!line_start) {
			fprintf(f, "%*s", spaces, "");
			col += spaces;
		}
		fprintf(f, "%.*s", len, p + spaces);
		col += len;
		line_start = false;
		p += spaces + len;
	}
	fputc('\n', f);
}

/*
 * @label at column @indent, then spaces to @column, or @gap of them if
 * that is not enough: the column its text starts at.
 */
static int put_label(FILE *f, const char *label, int len, int indent,
		     int column, int gap)
{
	int col = indent + len;

	fprintf(f, "%*s%.*s", indent, "", len, label);
	if (col + gap > column) {
		fprintf(f, "%*s", gap, "");
		return col + gap;
	}
	fprintf(f, "%*s", column - col, "");
	return column;
}

static void put_option(FILE *f, const struct cli_help *h,
		       const struct cli_option *o, int indent)
{
	char head[128];
	int len = snprintf(head, sizeof(head), "%s%s%s", o->name,
			   o->arg ? " " : "", o->arg ? o->arg : "");

	put_text(f, h, o->help,
		 put_label(f, head, len, indent, indent + OPTION_COLUMN, 2),
		 indent + OPTION_COLUMN);
}

/* One word of a synopsis, at *@col: on the next line if it would not fit. */
static void put_word(FILE *f, const char *word, int *col, int indent)
{
	int len = (int)strlen(word);

	if (*col >= indent && *col + 1 + len > USAGE_WIDTH) {
		fprintf(f, "\n%*s%s", indent, "", word);
		*col = indent + len;
		return;
	}
	fprintf(f, " %s", word);
	*col += 1 + len;
}

static bool on_line(const struct cli_option *o, unsigned int line)
{
	return !o->forms || (o->forms & line);
}

/*
 * Synopsis line @i of @h (@fm, NULL for a command without forms): its
 * needed options first, then the others in brackets, in table order.
 */
static void put_synopsis(FILE *f, const struct cli_help *h,
			 const struct cli_form *fm, int i)
{
	const struct cli_option *table = fm && fm->options ? fm->options :
					 h->options, *o;
	unsigned int line = fm && fm->options ? 0 : CLI_FORM(i);
	int col = fprintf(f, "%s ptebatch %s", i ? "      " : "usage:",
			  h->name), indent = col + 1, pass;
	char word[160];

	if (fm && fm->before)
		put_word(f, fm->before, &col, indent);
	for (pass = 0; pass < 2 && table; pass++) {
		for (o = table; o->name; o++) {
			bool needed = line && (o->required & line);

			if ((line && !on_line(o, line)) || needed != !pass)
				continue;
			snprintf(word, sizeof(word), "%s%s%s%s%s%s",
				 needed ? "" : "[", o->name, o->arg ? " " : "",
				 o->arg ? o->arg : "", needed ? "" : "]",
				 o->repeat ? "..." : "");
			put_word(f, word, &col, indent);
		}
	}
	if (fm && fm->after)
		put_word(f, fm->after, &col, indent);
	fputc('\n', f);
}

/* What `ptebatch help --list-options` prints of @h: a line a row. */
static void list_rows(FILE *f, const struct cli_help *h)
{
	const struct cli_option *o;
	int i;

	for (i = -1; i < h->nr_forms; i++)
		for (o = i < 0 ? h->options : h->forms[i].options; o && o->name;
		     o++)
			fprintf(f, "%s %s%s%s\n", h->name, o->name,
				o->arg ? " " : "", o->arg ? o->arg : "");
	fprintf(f, "%s %s\n", h->name, help_option.name);
}

void cli_usage(FILE *f, const struct cli_help *h)
{
	const struct cli_option *o;
	char buf[8192];
	int i;

	if (cli_usage_rows) {
		list_rows(f, h);
		return;
	}
	if (!h->nr_forms)
		put_synopsis(f, h, NULL, 0);
	for (i = 0; i < h->nr_forms; i++)
		put_synopsis(f, h, &h->forms[i], i);
	fputc('\n', f);
	put_text(f, h, h->about, put_label(f, h->name, (int)strlen(h->name), 0,
					    ABOUT_COLUMN, 1), ABOUT_COLUMN);
	/* A subcommand: what it does, then its options under it. */
	for (i = 0; i < h->nr_forms; i++) {
		const struct cli_form *fm = &h->forms[i];

		if (!fm->about)
			continue;
		put_text(f, h, fm->about,
			 put_label(f, fm->before, (int)strcspn(fm->before, " "),
				   2, ABOUT_COLUMN, 2), ABOUT_COLUMN);
		for (o = fm->options; o && o->name; o++)
			put_option(f, h, o, 4);
	}
	for (o = h->options; o && o->name; o++)
		put_option(f, h, o, 2);
	put_option(f, h, &help_option, 2);
	if (h->lists)
		h->lists(f);
	if (h->epilogue)
		fputs(fill_in(h, h->epilogue, buf, sizeof(buf)), f);
}
