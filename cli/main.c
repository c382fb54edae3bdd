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
	const char *variant;
	bool stats;
	bool check;
	unsigned long memory;
	const char *file;
};

static const char *const backends[] = { "model", NULL };
static const char *const variants[] = { "baseline", NULL };

/*
 * The switches --set KEY=VALUE can change.  None exists yet; a batching
 * switch is added here with the function that applies it.
 */
struct switch_def {
	const char *name;
	const char *help;
	int (*apply)(struct run_options *opts, const char *value);
};

static const struct switch_def switches[] = {
	{ NULL, NULL, NULL }
};

static void usage(FILE *f)
{
	fputs("usage: ptebatch run [--backend model] [--variant NAME]"
	      " [--set KEY=VALUE]...\n"
	      "                    [--stats] [--memory SIZE] [--no-check]"
	      " FILE.scn\n"
	      "       ptebatch help\n"
	      "\n"
	      "run       run a scenario and print its record on stdout\n"
	      "  --backend NAME    what runs it: model (the default)\n"
	      "  --variant NAME    which batching is on: baseline (the"
	      " default)\n"
	      "  --set KEY=VALUE   change one switch of the variant\n"
	      "  --stats           print the cost counters of every"
	      " statement\n"
	      "  --memory SIZE     simulated memory, e.g. 256M or 4G"
	      " (at least 16M)\n"
	      "  --no-check        skip the invariant check after each"
	      " statement\n"
	      "\n"
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

static int set_switch(struct run_options *opts, const char *arg)
{
	const char *eq = strchr(arg, '=');
	const struct switch_def *sw;
	size_t klen;

	if (!eq || eq == arg)
		return usage_error("--set: expected KEY=VALUE, got '%s'", arg);
	klen = eq - arg;
	for (sw = switches; sw->name; sw++)
		if (strlen(sw->name) == klen && !strncmp(sw->name, arg, klen))
			return sw->apply(opts, eq + 1);
	return usage_error("--set: unknown switch '%.*s'", (int)klen, arg);
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
		if (!in_list(variants, value))
			return unknown_in_list(o->name, "variant", value,
					       variants);
		opts->variant = value;
		return 0;
	case OPT_SET:
		return set_switch(opts, value);
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
	if (access(opts->file, R_OK))
		return usage_error("%s: %s", opts->file, strerror(errno));
	return 0;
}

static int cmd_run(int argc, char **argv)
{
	struct run_options opts = {
		.backend = "model",
		.variant = "baseline",
		.check = true,
	};
	struct model_options mopt = { 0 };
	struct scenario *s;
	struct backend *b;
	int ret;

	ret = parse_run_args(&opts, argc, argv);
	if (ret)
		return ret;
	/*
	 * The page size should come from the model's architecture, but
	 * pb_page_size() needs the machine up; until the backend can say it
	 * before start, scenarios are parsed for x86-64.
	 */
	s = scenario_parse_file(opts.file, SCN_DEFAULT_PAGE_SIZE, stderr);
	if (!s)
		return EXIT_USAGE;

	mopt.memory_bytes = opts.memory;
	b = model_backend_create(&mopt);
	if (!b) {
		fprintf(stderr, "ptebatch: out of memory\n");
		scenario_free(s);
		return SCN_RUN_FAILED;
	}
	b->variant = opts.variant;
	b->want_stats = opts.stats;
	ret = scenario_run(s, b, stdout, stderr, opts.check);
	b->ops->destroy(b);
	scenario_free(s);
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
