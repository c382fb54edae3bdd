// SPDX-License-Identifier: GPL-2.0-only
/*
 * predict.c - ptebatch predict: run a scenario on the model, a variant
 * of it, and print each statement's kernel time as a calibration
 * (calibrate/) predicts it from the statement's counters.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "backend/backend.h"
#include "calibrate/calib.h"
#include "cli/cli.h"
#include "scenario/record.h"
#include "scenario/run.h"
#include "scenario/scenario.h"

struct predict_options {
	const char *calibration;
	struct variant_flags variant;
	unsigned long memory;
	bool stats;
	const char *file;
};

static int set_calibration(void *o, const char *v)
{
	((struct predict_options *)o)->calibration = v;
	return *v ? 0 : usage_error("--calibration: empty file name");
}

static int set_variant(void *o, const char *v)
{
	return variant_flags_preset(&((struct predict_options *)o)->variant,
				    "--variant", v);
}

static int add_set(void *o, const char *v)
{
	return variant_flags_add_set(&((struct predict_options *)o)->variant, v);
}

static int set_memory(void *o, const char *v)
{
	return memory_flag(v, model_min_memory(),
			   &((struct predict_options *)o)->memory);
}

static int set_stats(void *o, const char *v)
{
	((struct predict_options *)o)->stats = true;
	return 0;
}

static int set_file(void *o, const char *word)
{
	struct predict_options *opts = o;

	if (opts->file)
		return usage_error("more than one scenario file ('%s' and '%s')",
				   opts->file, word);
	opts->file = word;
	return 0;
}

static const struct cli_option predict_options[] = {
	{ .name = "--calibration", .arg = "FILE", .set = set_calibration,
	  .help = "the costs (ptebatch calibrate); default this machine's"
		  " ({calibration}) when it exists, else the one shipped for"
		  " this architecture" },
	{ .name = "--variant", .arg = "NAME", .set = set_variant,
	  .help = "which batching is on (" PB_DEFAULT_VARIANT " by default)" },
	{ .name = "--set", .arg = "KEY=VALUE", .set = add_set, .repeat = true,
	  .help = "as for run" },
	{ .name = "--memory", .arg = "SIZE", .set = set_memory,
	  .help = "simulated memory, as for run (default {default_memory}): a"
		  " multiple of {pmd}, from {min_memory} to {max_memory}" },
	{ .name = "--stats", .set = set_stats,
	  .help = "print each statement's counters too" },
	{ .name = "--arch", .arg = "ARCH",
	  .help = "the model built for another architecture (see 'run'); its"
		  " counters under this machine's calibration are an"
		  " assumption (below)" },
	{ .name = NULL },
};

static const struct cli_form predict_forms[] = {
	{ .after = "FILE.scn" },
};

static const struct cli_help predict_help = {
	.name = "predict",
	.options = predict_options,
	CLI_FORMS(predict_forms),
	.about = "run a scenario on the model and print each statement's"
		 " kernel time as a calibration predicts it from the model's"
		 " counters: \"predicted US\" after its faults (\"predicted-insns N\""
		 " with a calibration of a guest's instructions), and the"
		 " total",
	.epilogue = "A calibration holds for the machine it was measured on;"
		    " another machine's\n"
		    "costs, or another architecture's counters (arm64's), are"
		    " an assumption.\n",
};

static void predict_usage(FILE *f)
{
	cli_usage(f, &predict_help);
}

struct prediction {
	const struct calibration *c;
	double total;
	unsigned long statements;
	int missing;		/* the first counter without a cost, or -1 */
	int missing_stmt;
};

static bool predict_statement(void *arg, const struct stmt *st,
			      const struct stmt_result *res,
			      struct record_time *time)
{
	struct prediction *p = arg;
	enum pb_stat missing;

	if (!res->has_stats)
		return false;
	if (calib_predict(p->c, res->stats, &time->us, &missing) &&
	    p->missing < 0) {
		p->missing = (int)missing;
		p->missing_stmt = st->number;
	}
	time->label = p->c->machine.unit == CALIB_UNIT_INSNS ?
		      "predicted-insns" : "predicted";
	p->total += time->us;
	p->statements++;
	return true;
}

/* What the header says of the calibration, and whether it fits here. */
static void print_calibration(const char *path, const struct calibration *c)
{
	printf("# predicted: kernel %s from %s (%s, %s, %d cores,"
	       " kernel %s, %s; median |error| %.1f%% on its %zu samples)\n",
	       c->machine.unit == CALIB_UNIT_INSNS ?
	       "instructions (predicted-insns)" : "microseconds (predicted)",
	       path, c->machine.arch, c->machine.cpu, c->machine.cores,
	       c->machine.kernel, c->machine.date,
	       100 * c->median_abs_rel_err, c->nr_residuals);
	if (strcmp(c->machine.arch, pb_arch_name()))
		fprintf(stderr, "ptebatch: predict: warning: %s was measured"
			" on %s, this model is %s: its costs are an"
			" assumption here\n", path, c->machine.arch,
			pb_arch_name());
	calib_warn_other_cpu(stderr, "ptebatch: predict", path, c);
}

static int predict_main(int argc, char **argv)
{
	struct predict_options o = { 0 };
	struct model_options mopt = { 0 };
	struct calibration c;
	struct prediction p = { .missing = -1 };
	struct scenario *s = NULL;
	char err[512], *variant_name = NULL, *text;
	struct backend *b = NULL;
	size_t len;
	int ret;

	command = "predict";
	ret = variant_flags_init(&o.variant, argc, PB_DEFAULT_VARIANT);
	if (ret)
		return ret;
	memset(&c, 0, sizeof(c));
	ret = cli_parse(predict_options, &o, set_file, argc, argv);
	if (!ret && !o.file)
		ret = usage_error("no scenario file given");
	if (!ret)
		ret = variant_flags_build(&o.variant, &mopt.variant,
					  &variant_name);
	if (!ret && access(o.file, R_OK))
		ret = usage_error("%s: %s", o.file, strerror(errno));
	if (ret)
		goto out;
	if (!o.calibration)
		o.calibration = calib_default_input();
	ret = calib_read_file(o.calibration, &c, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "ptebatch: predict: %s\n", err);
		ret = ret == -ENOMEM ? out_of_memory() : EXIT_USAGE;
		goto out;
	}
	text = scenario_read_file(o.file, &len, stderr);
	if (text)
		s = scenario_parse_text(o.file, text, len,
					SCN_DEFAULT_PAGE_SIZE, stderr);
	free(text);
	ret = EXIT_USAGE;
	if (!s)
		goto out;
	mopt.memory_bytes = o.memory;
	mopt.variant_name = variant_name;
	b = model_backend_create(&mopt);
	ret = b ? 0 : out_of_memory();
	if (ret)
		goto out;
	b->want_stats = 1;
	p.c = &c;
	print_calibration(o.calibration, &c);
	fflush(stdout);
	ret = scenario_run_annotated(s, b, stdout, stderr, 0, o.stats,
				     predict_statement, &p);
	if (ret == SCN_RUN_OK)
		printf(c.machine.unit == CALIB_UNIT_INSNS ?
		       "# predicted total: %.0f insns over %lu statements\n" :
		       "# predicted total: %.2f us over %lu statements\n",
		       p.total * calib_unit_scale(c.machine.unit),
		       p.statements);
	if (p.missing >= 0)
		fprintf(stderr, "ptebatch: predict: warning: %s has no cost"
			" for '%s' (statement %d and maybe others): those"
			" predictions are lower bounds\n", o.calibration,
			pb_stat_name(p.missing), p.missing_stmt);
out:
	if (b)
		b->ops->destroy(b);
	calib_free(&c);
	scenario_free(s);
	free(variant_name);
	variant_flags_free(&o.variant);
	return ret;
}

const struct cli_command predict_command = {
	.name = "predict",
	.main = predict_main,
	.usage = predict_usage,
	.takes_arch = true,
};
