/*
 * cli/ - the ptebatch command: argument parsing and exit statuses; the
 * work is done by scenario/ and backend/.
 *
 * Exit statuses: 0 success, 1 the run failed, 2 bad usage or a scenario
 * that does not parse, 3 an invariant check failed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "scenario/run.h"
#include "scenario/scenario.h"

#define EXIT_USAGE 2

/* The smallest machine worth simulating: a few THPs and their tables. */
#define MIN_MEMORY (16UL << 20)

struct run_options {
	const char *backend;
	const char *variant;	/* the preset */
	const char **sets;	/* --set KEY=VALUE, in command-line order */
	int nr_sets;
	bool stats;
	bool check;
	unsigned long memory;
	const char *file;
};

static const char *const backends[] = { "model", NULL };

static void list_words(FILE *f, const char *const *list)
{
	for (; *list; list++)
		fprintf(f, " %s", *list);
}

static void usage(FILE *f)
{
	const char *const *sw;

	fputs("usage: ptebatch run [--backend model] [--variant NAME]"
	      " [--set KEY=VALUE]...\n"
	      "                    [--stats] [--memory SIZE] [--no-check]"
	      " FILE.scn\n"
	      "       ptebatch help\n"
	      "\n"
	      "run       run a scenario and print its record on stdout\n"
	      "  --backend NAME    what runs it: model (the default)\n"
	      "  --variant NAME    which batching is on: a preset ("
	      PB_DEFAULT_VARIANT " by default)\n"
	      "  --set KEY=VALUE   change one switch of the preset"
	      " (repeatable, in order)\n"
	      "  --stats           print the cost counters of every"
	      " statement\n"
	      "  --memory SIZE     simulated memory, e.g. 256M or 4G"
	      " (at least 16M)\n"
	      "  --no-check        skip the invariant check after each"
	      " statement\n"
	      "\n"
	      "presets:", f);
	list_words(f, pb_variant_presets());
	fputs("\nswitches:\n", f);
	for (sw = pb_variant_switches(); *sw; sw++)
		fprintf(f, "  %-17s %s\n", *sw, pb_variant_switch_help(*sw));
	fputs("\n"
	      "exit status: 0 ok, 1 the run failed, 2 bad usage or"
	      " scenario, 3 an invariant check failed\n", f);
}

/* Report a usage error and return the status to exit with. */
static int __attribute__((format(printf, 1, 2)))
usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("ptebatch: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'ptebatch help'.\n", stderr);
	return EXIT_USAGE;
}

static bool in_list(const char *const *list, const char *word)
{
	for (; *list; list++)
		if (!strcmp(*list, word))
			return true;
	return false;
}

/* "unknown X 'word' (known: a b c)" */
static int unknown_in_list(const char *flag, const char *what,
			   const char *word, const char *const *list)
{
	char known[256] = "";
	size_t len = 0;

	for (; *list; list++) {
		int n = snprintf(known + len, sizeof(known) - len, "%s%s",
				 len ? " " : "", *list);

		if (n < 0 || (size_t)n >= sizeof(known) - len)
			break;
		len += n;
	}
	return usage_error("%s: unknown %s '%s' (known: %s)", flag, what, word,
			   known);
}

/*
 * Remember one --set; it is applied on top of the preset once all flags
 * are read, so --variant may come after it.  The text goes into the
 * record header's variant token, so it may hold no space and no '+'.
 */
static int add_set(struct run_options *opts, const char *arg)
{
	const char *eq = strchr(arg, '=');

	if (!eq || eq == arg || !eq[1])
		return usage_error("--set: expected KEY=VALUE, got '%s'", arg);
	if (strpbrk(arg, " \t\n+"))
		return usage_error("--set: '%s' may not contain spaces or '+'",
				   arg);
	opts->sets[opts->nr_sets++] = arg;
	return 0;
}

/* Apply one --set KEY=VALUE to @v, explaining a refusal. */
static int apply_set(struct pb_variant *v, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char key[64], flag[128];
	int ret;

	snprintf(flag, sizeof(flag), "--set %s", arg);
	if ((size_t)(eq - arg) >= sizeof(key))
		return unknown_in_list(flag, "switch", "(too long)",
				       pb_variant_switches());
	memcpy(key, arg, eq - arg);
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

/*
 * The variant the options select, and its name for the record header:
 * the preset, then each --set in order, joined with '+'
 * ("upstream+wp_reuse_max=512").  *name is malloc'd.
 */
static int build_variant(const struct run_options *opts,
			 struct pb_variant *v, char **name)
{
	size_t len = strlen(opts->variant) + 1;
	int i, ret;

	if (pb_variant_preset(opts->variant, v))
		return unknown_in_list("--variant", "variant", opts->variant,
				       pb_variant_presets());
	for (i = 0; i < opts->nr_sets; i++) {
		ret = apply_set(v, opts->sets[i]);
		if (ret)
			return ret;
		len += 1 + strlen(opts->sets[i]);
	}
	*name = malloc(len);
	if (!*name) {
		fprintf(stderr, "ptebatch: out of memory\n");
		return SCN_RUN_FAILED;
	}
	strcpy(*name, opts->variant);
	for (i = 0; i < opts->nr_sets; i++) {
		strcat(*name, "+");
		strcat(*name, opts->sets[i]);
	}
	return 0;
}

static int set_memory(struct run_options *opts, const char *arg)
{
	unsigned long bytes;

	if (scenario_parse_number(arg, &bytes))
		return usage_error("--memory: bad size '%s' (e.g. 256M or 4G)",
				   arg);
	if (bytes < MIN_MEMORY)
		return usage_error("--memory: '%s' is less than 16M", arg);
	opts->memory = bytes;
	return 0;
}

enum option_id {
	OPT_BACKEND,
	OPT_VARIANT,
	OPT_SET,
	OPT_STATS,
	OPT_MEMORY,
	OPT_NO_CHECK,
};

static const struct option_def {
	const char *name;
	bool has_value;
	enum option_id id;
} run_option_defs[] = {
	{ "--backend", true, OPT_BACKEND },
	{ "--variant", true, OPT_VARIANT },
	{ "--set", true, OPT_SET },
	{ "--stats", false, OPT_STATS },
	{ "--memory", true, OPT_MEMORY },
	{ "--no-check", false, OPT_NO_CHECK },
};

static const struct option_def *find_option(const char *arg, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(run_option_defs) / sizeof(run_option_defs[0]);
	     i++)
		if (strlen(run_option_defs[i].name) == len &&
		    !strncmp(run_option_defs[i].name, arg, len))
			return &run_option_defs[i];
	return NULL;
}

static int apply_option(struct run_options *opts, const struct option_def *o,
			const char *value)
{
	switch (o->id) {
	case OPT_BACKEND:
		if (!in_list(backends, value))
			return unknown_in_list(o->name, "backend", value,
					       backends);
		opts->backend = value;
		return 0;
	case OPT_VARIANT:
		if (!in_list(pb_variant_presets(), value))
			return unknown_in_list(o->name, "variant", value,
					       pb_variant_presets());
		opts->variant = value;
		return 0;
	case OPT_SET:
		return add_set(opts, value);
	case OPT_STATS:
		opts->stats = true;
		return 0;
	case OPT_MEMORY:
		return set_memory(opts, value);
	case OPT_NO_CHECK:
		opts->check = false;
		return 0;
	}
	return usage_error("%s: not handled", o->name);
}

/* One "--name", "--name VALUE" or "--name=VALUE" at argv[*i]. */
static int parse_option(struct run_options *opts, int argc, char **argv,
			int *i)
{
	const char *arg = argv[*i], *eq = strchr(arg, '=');
	const struct option_def *o;
	const char *value = NULL;

	o = find_option(arg, eq ? (size_t)(eq - arg) : strlen(arg));
	if (!o)
		return usage_error("unknown option '%s'", arg);
	if (!o->has_value && eq)
		return usage_error("%s takes no value", o->name);
	if (o->has_value) {
		if (eq)
			value = eq + 1;
		else if (*i + 1 < argc)
			value = argv[++*i];
		else
			return usage_error("%s needs a value", o->name);
	}
	return apply_option(opts, o, value);
}

static int parse_run_args(struct run_options *opts, int argc, char **argv)
{
	bool options_done = false;
	int i, ret;

	for (i = 0; i < argc; i++) {
		const char *arg = argv[i];

		if (!options_done && !strcmp(arg, "--")) {
			options_done = true;
			continue;
		}
		if (!options_done && arg[0] == '-' && arg[1]) {
			ret = parse_option(opts, argc, argv, &i);
			if (ret)
				return ret;
			continue;
		}
		if (opts->file)
			return usage_error("run: more than one scenario file"
					   " ('%s' and '%s')", opts->file, arg);
		opts->file = arg;
	}
	if (!opts->file)
		return usage_error("run: no scenario file given");
	return 0;
}

static int cmd_run(int argc, char **argv)
{
	struct run_options opts = {
		.backend = "model",
		.variant = PB_DEFAULT_VARIANT,
		.check = true,
	};
	struct model_options mopt = { 0 };
	struct scenario *s = NULL;
	struct backend *b;
	char *variant_name = NULL;
	int ret;

	/* No more --set flags than arguments. */
	opts.sets = calloc(argc + 1, sizeof(*opts.sets));
	if (!opts.sets) {
		fprintf(stderr, "ptebatch: out of memory\n");
		return SCN_RUN_FAILED;
	}
	ret = parse_run_args(&opts, argc, argv);
	if (!ret)
		ret = build_variant(&opts, &mopt.variant, &variant_name);
	if (!ret && access(opts.file, R_OK))
		ret = usage_error("%s: %s", opts.file, strerror(errno));
	if (ret)
		goto out;
	/*
	 * The page size should come from the model's architecture, but
	 * pb_page_size() needs the machine up; until the backend can say it
	 * before start, scenarios are parsed for x86-64.
	 */
	s = scenario_parse_file(opts.file, SCN_DEFAULT_PAGE_SIZE, stderr);
	ret = EXIT_USAGE;
	if (!s)
		goto out;

	mopt.memory_bytes = opts.memory;
	mopt.variant_name = variant_name;
	b = model_backend_create(&mopt);
	ret = SCN_RUN_FAILED;
	if (!b) {
		fprintf(stderr, "ptebatch: out of memory\n");
		goto out;
	}
	b->want_stats = opts.stats;
	ret = scenario_run(s, b, stdout, stderr, opts.check);
	b->ops->destroy(b);
out:
	scenario_free(s);
	free(variant_name);
	free(opts.sets);
	return ret;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 2, argv + 2);
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	return usage_error("unknown command '%s'", argv[1]);
}
