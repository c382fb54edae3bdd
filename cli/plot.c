// SPDX-License-Identifier: GPL-2.0-only
/*
 * plot.c - ptebatch plot: draw the benchmark figures (bench/figure.h)
 * from rows saved with `ptebatch bench --json`, without measuring again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/figure.h"
#include "cli/cli.h"

struct plot_options {
	const char *out;
	const char *machine;
	const char *only;
	const char **files;
	int nr_files;
};

static int set_out(void *o, const char *v)
{
	size_t n = strlen(v);
	char why[1200];

	if (n < 5 || strcmp(v + n - 4, ".svg"))
		return usage_error("--out: '%s' must end in .svg", v);
	if (bench_plot_check("--out", v, why, sizeof(why)))
		return usage_error("%s", why);
	((struct plot_options *)o)->out = v;
	return 0;
}

static int set_machine(void *o, const char *v)
{
	if (!v[0])
		return usage_error("--machine: empty text");
	((struct plot_options *)o)->machine = v;
	return 0;
}

static int set_only(void *o, const char *v)
{
	static const char *const known[] = { "gup", "cow", "kernels-cow",
					     "mprotect", "replay", "predicted",
					     NULL };
	const char *c;

	for (c = v; c; c = strchr(c, ',') ? strchr(c, ',') + 1 : NULL) {
		size_t n = strcspn(c, ",");
		const char *const *k;

		for (k = known; *k; k++)
			if ((strlen(*k) == n && !strncmp(*k, c, n)) ||
			    ((!strcmp(*k, "gup") || !strcmp(*k, "cow") ||
			      !strcmp(*k, "kernels-cow")) &&
			     n > strlen(*k) + 1 && !strncmp(*k, c, strlen(*k)) &&
			     c[strlen(*k)] == '-'))
				break;
		if (!*k)
			return usage_error("--only: no figure '%.*s' (known:"
					   " gup, cow, kernels-cow, mprotect,"
					   " replay, predicted, gup-ARCH,"
					   " cow-ARCH, kernels-cow-ARCH)",
					   (int)n, c);
	}
	((struct plot_options *)o)->only = v;
	return 0;
}

static int add_file(void *o, const char *word)
{
	struct plot_options *p = o;

	p->files[p->nr_files++] = word;
	return 0;
}

static const struct cli_option plot_options[] = {
	{ .name = "--out", .arg = "FILE.svg", .set = set_out,
	  .required = CLI_FORM(0),
	  .help = "where the figures go" },
	{ .name = "--machine", .arg = "TEXT", .set = set_machine,
	  .help = "the machine every title names, for rows that do not carry"
		  " it (written before rows had \"machine\")" },
	{ .name = "--only", .arg = "NAME,...", .set = set_only,
	  .help = "draw only these figures (each must have rows): gup, cow,"
		  " kernels-cow, mprotect, replay, predicted, gup-ARCH,"
		  " cow-ARCH, kernels-cow-ARCH; one alone goes to FILE.svg"
		  " itself" },
	{ .name = NULL },
};

static const struct cli_form plot_forms[] = {
	{ .after = "ROWS.json..." },
};

static const struct cli_help plot_help = {
	.name = "plot",
	.options = plot_options,
	CLI_FORMS(plot_forms),
	.about = "draw the figures of benchmark rows saved with `bench"
		 " --json`: one figure per question (gup, cow, mprotect,"
		 " replay, predicted), each an SVG: FILE.svg when there is one,"
		 " else FILE-NAME.svg each (arm64 rows: mprotect beside x86,"
		 " gup-ARCH and cow-ARCH apart); kernels-cow: seed 003's table"
		 " across the kernels whose rows `bench cow --backend vm:NAME`"
		 " stamped with their names",
	.epilogue = "exit status: 0 drawn, 1 gnuplot missing or failed, 2 bad"
		    " usage or a bad row\n"
		    "             (FILE:LINE named, such as a 0 that a log axis"
		    " cannot show);\n"
		    "             on any failure no file is written\n",
};

static void plot_usage(FILE *f)
{
	cli_usage(f, &plot_help);
}

static int plot_main(int argc, char **argv)
{
	struct plot_options o = { 0 };
	struct fig_rows rows = { 0 };
	char why[800];
	int i, ret, err = 0;

	command = "plot";
	o.files = calloc((size_t)argc + 1, sizeof(*o.files));
	if (!o.files)
		return out_of_memory();
	ret = cli_parse(plot_options, &o, add_file, argc, argv);
	if (!ret && !o.out)
		ret = usage_error("no --out FILE.svg given");
	if (!ret && !o.nr_files)
		ret = usage_error("no ROWS.json given");
	for (i = 0; !ret && i < o.nr_files; i++) {
		err = fig_rows_read_file(&rows, o.files[i], why, sizeof(why));
		if (err == -ENOMEM)
			ret = out_of_memory();
		else if (err)
			ret = usage_error("%s", why);
	}
	if (!ret && !rows.nr)
		ret = usage_error("no rows in %s", o.files[0]);
	if (!ret) {
		err = fig_draw_all(&rows, o.out, o.machine, o.only,
				   stdout);
		/* -EINVAL: a row a log axis cannot show, named. */
		ret = err == -ENODATA || err == -EINVAL ? EXIT_USAGE :
		      err ? 1 : 0;
	}
	fig_rows_free(&rows);
	free(o.files);
	return ret;
}

const struct cli_command plot_command = {
	.name = "plot",
	.main = plot_main,
	.usage = plot_usage,
};
