// SPDX-License-Identifier: GPL-2.0-only
/*
 * calibrate.c - ptebatch calibrate: time the calibration suite on this
 * machine's kernel, count it on the model, fit one cost per counter and
 * write the calibration; or refit saved samples, and say how well a fit
 * predicts what it was not fitted on (--validate).
 */
#include <errno.h>
#include <glob.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "calibrate/measure.h"
#include "calibrate/samples.h"
#include "cli/cli.h"
#include "lib/outfile.h"
#include "scenario/run.h"

/* The suite's repetitions: the median of this many kernel runs. */
#define CALIB_DEFAULT_REPS 5
#define CALIB_QUICK_REPS 1
/* Runs of a scenario the kernel backend skipped before giving up on it. */
#define CALIB_TRIES 3

struct calibrate_options {
	const char *out;		/* -o */
	const char *samples_out;	/* --samples */
	const char *from_samples;
	const char *suite;
	bool quick, validate, recount;
	int reps;
	const char *without[16];	/* --without: families left out of the fit */
	const char *sizes[16];		/* --sizes: the folio sizes fitted on */
	int nr_without, nr_sizes;
	char *copies[32];		/* the lists' words point into these */
	int nr_copies;
};

static int set_out(void *o, const char *v)
{
	((struct calibrate_options *)o)->out = v;
	return *v ? 0 : usage_error("-o: empty file name");
}

static int set_samples(void *o, const char *v)
{
	((struct calibrate_options *)o)->samples_out = v;
	return *v ? 0 : usage_error("--samples: empty file name");
}

static int set_from(void *o, const char *v)
{
	((struct calibrate_options *)o)->from_samples = v;
	return *v ? 0 : usage_error("--from-samples: empty file name");
}

static int set_suite(void *o, const char *v)
{
	((struct calibrate_options *)o)->suite = v;
	return *v ? 0 : usage_error("--suite: empty directory name");
}

static int set_quick(void *o, const char *v)
{
	((struct calibrate_options *)o)->quick = true;
	return 0;
}

static int set_validate(void *o, const char *v)
{
	((struct calibrate_options *)o)->validate = true;
	return 0;
}

static int set_recount(void *o, const char *v)
{
	((struct calibrate_options *)o)->recount = true;
	return 0;
}

static int set_reps(void *o, const char *v)
{
	return reps_flag(v, &((struct calibrate_options *)o)->reps);
}

/*
 * A comma-separated list into @list (at most 15 words, kept in @arg).  An
 * empty word ("64k,,1m", "fork,") is refused: strtok() would skip it.
 */
static int split_list(struct calibrate_options *opts, const char *flag,
		      const char *arg, const char **list, int *nr)
{
	char *copy, *save = NULL, *w;
	size_t n = strlen(arg);

	if (!n || arg[0] == ',' || arg[n - 1] == ',' || strstr(arg, ",,"))
		return usage_error("%s: an empty name in '%s'", flag, arg);
	/* Each list holds at most 15 words, so at most 30 flags get here. */
	if (opts->nr_copies == 32)
		return usage_error("%s: at most 15 names", flag);
	copy = strdup(arg);
	if (!copy)
		return out_of_memory();
	/* Kept for the run (the words point into it), freed at its end. */
	opts->copies[opts->nr_copies++] = copy;
	for (w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		if (*nr == 15)
			return usage_error("%s: at most 15 names", flag);
		list[(*nr)++] = w;
	}
	return 0;
}

static int set_without(void *o, const char *v)
{
	struct calibrate_options *opts = o;
	int i, ret, first = opts->nr_without;

	ret = split_list(opts, "--without", v, opts->without,
			 &opts->nr_without);
	for (i = first; !ret && i < opts->nr_without; i++)
		if (!in_list(calib_families, opts->without[i]))
			ret = unknown_in_list("--without", "family",
					      opts->without[i], calib_families);
	return ret;
}

static int set_sizes(void *o, const char *v)
{
	struct calibrate_options *opts = o;

	return split_list(opts, "--sizes", v, opts->sizes, &opts->nr_sizes);
}

static int no_operand(void *o, const char *word)
{
	return usage_error("unexpected argument '%s' (the suite is --suite"
			   " DIR)", word);
}

/* The synopsis lines: measure on this machine, or refit saved samples. */
enum { CALIB_MEASURE = CLI_FORM(0), CALIB_REFIT = CLI_FORM(1) };

static const struct cli_option calibrate_options[] = {
	{ .name = "-o", .arg = "FILE", .set = set_out,
	  .help = "the calibration (JSON); default {calibration}" },
	{ .name = "--samples", .arg = "FILE", .set = set_samples,
	  .help = "the timed statements fitted on; default FILE with .samples"
		  " in place of .json" },
	{ .name = "--suite", .arg = "DIR", .set = set_suite,
	  .help = "the calibration scenarios (DIR/*.scn); default the source"
		  " tree's calibrate/" },
	{ .name = "--reps", .arg = "N", .set = set_reps, .forms = CALIB_MEASURE,
	  .help = "the median of N kernel runs of each scenario (default "
		  CLI_STR(CALIB_DEFAULT_REPS) ")" },
	{ .name = "--quick", .set = set_quick, .forms = CALIB_MEASURE,
	  .help = "the smallest scenario of each folio size, one run each (a"
		  " smoke test, not a calibration to use)" },
	{ .name = "--from-samples", .arg = "FILE", .set = set_from,
	  .forms = CALIB_REFIT, .required = CALIB_REFIT,
	  .help = "fit saved samples: no kernel, no root" },
	{ .name = "--recount", .set = set_recount, .forms = CALIB_REFIT,
	  .help = "with --from-samples: count each sample's statement again"
		  " on the model as it is now (the suite's scenario), keep the"
		  " kernel's time: a model change refitted without root;"
		  " --samples FILE writes the recounted samples" },
	{ .name = "--without", .arg = "F,...", .set = set_without,
	  .help = "fit without the samples of these families (fork, munmap,"
		  " cow, mprotect, register, fault, mmap, ...)" },
	{ .name = "--sizes", .arg = "S,...", .set = set_sizes,
	  .help = "fit on the samples of these folio sizes only (4k, 64k, 1m,"
		  " 2m-pte, 2m-pmd: the suite files' names)" },
	{ .name = "--validate", .set = set_validate,
	  .help = "also fit without each family (fork, munmap, cow, mprotect,"
		  " register) and on 4K and 2M-pte only, and print the median"
		  " error of what each fit did not see" },
	{ .name = NULL },
};

static const struct cli_form calibrate_forms[] = {
	{ .after = NULL },
	{ .after = NULL },
};

static const struct cli_help calibrate_help = {
	.name = "calibrate",
	.options = calibrate_options,
	CLI_FORMS(calibrate_forms),
	.about = "fit the model's cost counters to this machine's kernel times",
	.epilogue = "Measuring needs root (the kernel backend); it runs each"
		    " scenario on the\n"
		    "kernel with per-statement timing and on the model"
		    " (upstream) with counters.\n",
};

static void calibrate_usage(FILE *f)
{
	cli_usage(f, &calibrate_help);
}

/* ---- measuring ---------------------------------------------------------- */

/* The folio sizes --sizes may name (at most 64), NULL after the last. */
struct size_names {
	char label[64][16];
	const char *list[65];
	int nr;
};

static void size_names_add(struct size_names *sn, const char *label)
{
	int i;

	for (i = 0; i < sn->nr; i++)
		if (!strcmp(sn->list[i], label))
			return;
	if (sn->nr == 64)
		return;
	snprintf(sn->label[sn->nr], sizeof(sn->label[0]), "%s", label);
	sn->list[sn->nr] = sn->label[sn->nr];
	sn->list[++sn->nr] = NULL;
}

/*
 * Every word of --sizes must be a folio size there is to fit on: one of
 * @ss's samples (--from-samples), else of the suite's files (their names,
 * calib_size_label()), said before anything is measured.  0 or a usage
 * error listing the known sizes.
 */
static int check_sizes(const struct calibrate_options *o,
		       const struct calib_samples *ss)
{
	struct size_names *sn;
	char pattern[4096], label[64];
	glob_t g;
	size_t j;
	int i, ret = 0;

	if (!o->nr_sizes)
		return 0;
	sn = calloc(1, sizeof(*sn));
	if (!sn)
		return out_of_memory();
	if (ss) {
		for (j = 0; j < ss->nr; j++)
			size_names_add(sn, ss->v[j].size);
	} else {
		snprintf(pattern, sizeof(pattern), "%s/*.scn", o->suite);
		if (!glob(pattern, 0, NULL, &g)) {
			for (j = 0; j < g.gl_pathc; j++) {
				calib_size_label(g.gl_pathv[j], label,
						 sizeof(label));
				size_names_add(sn, label);
			}
			globfree(&g);
		}
	}
	/* No suite file at all: measure_suite() says so. */
	for (i = 0; sn->nr && !ret && i < o->nr_sizes; i++)
		if (!in_list(sn->list, o->sizes[i]))
			ret = unknown_in_list("--sizes", "folio size",
					      o->sizes[i], sn->list);
	free(sn);
	return ret;
}

/* The length a suite file is about, from its "-LENGTH.scn" ending. */
static unsigned long file_length(const char *path)
{
	const char *dash = strrchr(path, '-');
	char *end;
	unsigned long n;

	if (!dash)
		return 0;
	n = strtoul(dash + 1, &end, 10);
	switch (*end) {
	case 'g': case 'G': n <<= 10; /* fall through */
	case 'm': case 'M': n <<= 10; /* fall through */
	case 'k': case 'K': n <<= 10; break;
	default: return 0;
	}
	return n;
}

/* --quick: keep only the shortest file of each folio size. */
static bool shortest_of_its_size(char **paths, size_t nr, size_t i)
{
	char a[64], b[64];
	size_t j;

	calib_size_label(paths[i], a, sizeof(a));
	for (j = 0; j < nr; j++) {
		calib_size_label(paths[j], b, sizeof(b));
		if (j != i && !strcmp(a, b) &&
		    (file_length(paths[j]) < file_length(paths[i]) ||
		     (file_length(paths[j]) == file_length(paths[i]) && j < i)))
			return false;
	}
	return true;
}

static int measure_suite(const struct calibrate_options *o,
			 struct calib_samples *ss)
{
	struct calib_measure_stats st = { 0 };
	char pattern[4096], why[4096];
	glob_t g;
	size_t i, ran = 0;
	int try, ret, reps = o->reps ? o->reps :
		o->quick ? CALIB_QUICK_REPS : CALIB_DEFAULT_REPS;

	snprintf(pattern, sizeof(pattern), "%s/*.scn", o->suite);
	ret = glob(pattern, 0, NULL, &g);
	if (ret == GLOB_NOMATCH) {
		fprintf(stderr, "ptebatch: calibrate: %s: no calibration"
			" scenario (*.scn) there\n", o->suite);
		return EXIT_USAGE;
	}
	if (ret)
		return out_of_memory();
	calib_this_machine(&ss->machine);
	for (i = 0; i < g.gl_pathc; i++) {
		if (o->quick && !shortest_of_its_size(g.gl_pathv, g.gl_pathc, i))
			continue;
		fprintf(stderr, "calibrate: %s (%d run%s)\n", g.gl_pathv[i],
			reps, reps == 1 ? "" : "s");
		/*
		 * A skip is a folio size this kernel lacks, or khugepaged
		 * collapsing a range during the run (the backend holds it
		 * off but cannot stop it): said on stderr; try again.
		 */
		for (try = 0; try < CALIB_TRIES; try++) {
			ret = calib_measure(g.gl_pathv[i], reps, ss, &st, why,
					    sizeof(why));
			if (why[0])
				fprintf(stderr, "%s\n", why);
			if (ret != -EOPNOTSUPP)
				break;
		}
		if (ret == -EOPNOTSUPP)
			continue;
		if (ret) {
			fprintf(stderr, "ptebatch: calibrate: %s: %s\n",
				g.gl_pathv[i], ret == -ENOMEM ? "out of memory" :
				"the run failed (above)");
			globfree(&g);
			return SCN_RUN_FAILED;
		}
		ran++;
	}
	globfree(&g);
	fprintf(stderr, "calibrate: %zu scenarios, %lu samples; left out: %lu"
		" untimed, %lu split, dio or drain, %lu errors, %lu with other faults than"
		" the kernel's, %lu that varied\n", ran, st.taken, st.untimed,
		st.unfitted, st.failed, st.differ, st.vary);
	if (!ss->nr) {
		fprintf(stderr, "ptebatch: calibrate: no sample taken%s\n",
			ran ? "" : " (every scenario was skipped)");
		return SCN_RUN_SKIPPED;
	}
	return 0;
}

/* FILE.json -> FILE.samples (or FILE + ".samples"). */
static char *samples_path(const char *out)
{
	size_t n = strlen(out);
	char *p = malloc(n + 16);

	if (!p)
		return NULL;
	memcpy(p, out, n + 1);
	if (n > 5 && !strcmp(p + n - 5, ".json"))
		p[n - 5] = '\0';
	strcat(p, ".samples");
	return p;
}

/* The samples into @of, committed: 0, or SCN_RUN_FAILED said on stderr. */
static int write_samples(struct outfile *of, const struct calib_samples *ss)
{
	char why[1024];

	if (calib_samples_write(of->f, ss)) {
		fprintf(stderr, "ptebatch: calibrate: %s %s: write error\n",
			of->flag, of->path);
		outfile_discard(of);
		return SCN_RUN_FAILED;
	}
	if (outfile_commit(of, why, sizeof(why))) {
		fprintf(stderr, "ptebatch: calibrate: %s\n", why);
		return SCN_RUN_FAILED;
	}
	return 0;
}

/*
 * The calibration (-o) and the samples (--samples, or beside -o when
 * measuring), opened before anything is measured or read: a bad path is
 * a usage error, never a lost measurement.  *@spath: the samples' path
 * (malloc'd), NULL when none are written.
 */
static int open_outputs(const struct calibrate_options *o, struct outfile *cal,
			struct outfile *smp, char **spath)
{
	bool measuring = !o->from_samples;
	char why[1024];

	if (outfile_open(cal, "-o", o->out, 0, why, sizeof(why)))
		return usage_error("%s", why);
	*spath = NULL;
	if (o->samples_out)
		*spath = strdup(o->samples_out);
	else if (measuring && cal->in_place) {
		outfile_discard(cal);
		/* FILE.samples beside a device (/dev/null.samples) is a
		 * file no one asked for. */
		return usage_error("-o %s is not a regular file: name the"
				   " samples' file with --samples FILE",
				   o->out);
	} else if (measuring)
		*spath = samples_path(o->out);
	else
		return 0;
	if (!*spath) {
		outfile_discard(cal);
		return out_of_memory();
	}
	if (outfile_open(smp, "--samples", *spath, 0, why, sizeof(why))) {
		outfile_discard(cal);
		free(*spath);
		*spath = NULL;
		return usage_error("%s", why);
	}
	return 0;
}

/* ---- reporting ---------------------------------------------------------- */

static const char *const held_out_families[] = {
	"fork", "munmap", "cow", "mprotect", "register", NULL
};

static void print_costs(const struct calibration *c)
{
	int j;

	printf("%-20s %10s %10s  %s\n", "counter", "us", "stderr", "state");
	for (j = 0; j < PB_NR_STATS; j++) {
		const struct calib_cost *k = &c->cost[j];

		if (!k->present || k->state == NNLS_UNIDENTIFIABLE)
			continue;
		printf("%-20s %10.5f %10.5f  %s\n", pb_stat_name(j), k->us,
		       k->stderr_us, nnls_cost_state_name(k->state));
	}
	printf("fit: %zu samples, R^2 %.4f, median |error| %.1f%%\n",
	       c->nr_residuals, c->r2, 100 * c->median_abs_rel_err);
}

/* The distinct values of a field of @ss, in order of first appearance. */
static size_t distinct(const struct calib_samples *ss, bool family,
		       const char **out, size_t max)
{
	size_t i, j, n = 0;

	for (i = 0; i < ss->nr; i++) {
		const char *v = family ? ss->v[i].family : ss->v[i].size;

		for (j = 0; j < n && strcmp(out[j], v); j++)
			;
		if (j == n && n < max)
			out[n++] = v;
	}
	return n;
}

/* The median error of @c on each family, or each size, of @ss. */
static void print_errors(const struct calib_samples *ss,
			 const struct calibration *c, bool family)
{
	const char *v[64];
	size_t i, n = distinct(ss, family, v, 64), nr;

	printf("  %-10s %8s %10s\n", family ? "family" : "size", "samples",
	       "median|e|");
	for (i = 0; i < n; i++) {
		const char *one[] = { v[i], NULL };
		struct calib_select sel = { 0 };
		double e;

		if (family)
			sel.families = one;
		else
			sel.sizes = one;
		e = calib_median_error(ss, &sel, c, &nr);
		printf("  %-10s %8zu %9.1f%%\n", v[i], nr, 100 * e);
	}
}

/*
 * Fit on what @fit selects, and print the median error on what @pred
 * selects, overall and per folio size.
 */
static int held_out(const struct calib_samples *ss, const char *what,
		    const struct calib_select *fit,
		    const struct calib_select *pred)
{
	struct calibration c;
	const char *sizes[64], *sep = "";
	char err[256];
	size_t i, n, nr;
	double e;
	int ret;

	ret = calib_fit(ss, fit, &c, err, sizeof(err));
	if (ret) {
		printf("%-34s (%s)\n", what, err);
		return ret == -ENOMEM ? out_of_memory() : 0;
	}
	e = calib_median_error(ss, pred, &c, &nr);
	printf("%-34s %5zu samples  median |error| %5.1f%%  (", what, nr,
	       100 * e);
	n = distinct(ss, false, sizes, 64);
	for (i = 0; i < n; i++) {
		const char *one[] = { sizes[i], NULL };
		struct calib_select sel = *pred;

		if (pred->sizes && !in_list(pred->sizes, sizes[i]))
			continue;
		sel.sizes = one;
		e = calib_median_error(ss, &sel, &c, &nr);
		if (!nr)
			continue;
		printf("%s%s %.1f%%", sep, sizes[i], 100 * e);
		sep = ", ";
	}
	printf(")\n");
	calib_free(&c);
	return 0;
}

static int validate(const struct calib_samples *ss)
{
	static const char *const fit_sizes[] = { "4k", "2m-pte", NULL };
	static const char *const pred_sizes[] = { "64k", "1m", NULL };
	const char *const *f;
	char what[64];
	int ret = 0;

	printf("\nheld out by operation (fit without the family, predict"
	       " it):\n");
	for (f = held_out_families; !ret && *f; f++) {
		const char *one[] = { *f, NULL };
		struct calib_select fit = { .not_families = one };
		struct calib_select pred = { .families = one };

		snprintf(what, sizeof(what), "  %s", *f);
		ret = held_out(ss, what, &fit, &pred);
	}
	if (!ret) {
		struct calib_select fit = { .sizes = fit_sizes };
		struct calib_select pred = { .sizes = pred_sizes };

		printf("\nheld out by folio size:\n");
		ret = held_out(ss, "  fit 4k + 2m-pte, predict 64k + 1m",
			       &fit, &pred);
	}
	return ret;
}

/* Beside the default calibration: <src>/calibrate. */
static const char *default_suite(void)
{
	static char suite[4096];

	snprintf(suite, sizeof(suite), "%s", calib_default_output());
	*strrchr(suite, '/') = '\0';
	*strrchr(suite, '/') = '\0';
	strcat(suite, "/calibrate");
	return suite;
}

/* --recount: the samples' counters from the model as it is now. */
static int recount(const struct calibrate_options *o,
		   struct calib_samples *ss, struct outfile *smp)
{
	unsigned long dropped;
	size_t before = ss->nr;
	char why[4096];
	int ret;

	ret = calib_recount(ss, o->suite, &dropped, why, sizeof(why));
	if (ret && ret != -ENOMEM)
		fprintf(stderr, "ptebatch: calibrate: --recount: the samples"
			" of %s need the scenarios they were taken from in"
			" %s (--suite DIR):\n%s\n", o->from_samples, o->suite,
			why);
	if (ret)
		return ret == -ENOMEM ? out_of_memory() : EXIT_USAGE;
	fprintf(stderr, "calibrate: recounted %zu samples on the model,"
		" dropped %lu (an error or other faults now)\n", before,
		dropped);
	if (!o->samples_out)
		return 0;
	return write_samples(smp, ss);
}

/* The calibration @o asks for, its flags read and checked. */
static int calibrate_run(struct calibrate_options o)
{
	struct calib_samples ss = { 0 };
	struct calib_select sel = { 0 };
	struct outfile cal = { 0 }, smp = { 0 };
	struct calibration c;
	char err[512], *spath = NULL;
	int ret;

	if (!o.out)
		o.out = calib_default_output();
	if (!o.suite)
		o.suite = default_suite();
	if (!o.from_samples) {
		ret = check_sizes(&o, NULL);
		if (ret)
			return ret;
		if (geteuid()) {
			fprintf(stderr, "ptebatch: calibrate: skipped: timing"
				" the kernel needs root (fit saved samples"
				" with --from-samples)\n");
			return SCN_RUN_SKIPPED;
		}
	}
	ret = open_outputs(&o, &cal, &smp, &spath);
	if (ret)
		return ret;
	if (o.from_samples) {
		ret = calib_samples_read(o.from_samples, &ss, err, sizeof(err));
		if (ret) {
			fprintf(stderr, "ptebatch: calibrate: %s\n", err);
			ret = ret == -ENOMEM ? out_of_memory() : EXIT_USAGE;
			goto out;
		}
		ret = check_sizes(&o, &ss);
		if (ret)
			goto out;
		if (o.recount) {
			ret = recount(&o, &ss, &smp);
			if (ret)
				goto out;
		}
	} else {
		ret = measure_suite(&o, &ss);
		if (ret)
			goto out;
		/* Kept even if the fit fails: they took the time. */
		ret = write_samples(&smp, &ss);
		if (ret)
			goto out;
	}
	sel.not_families = o.nr_without ? o.without : NULL;
	sel.sizes = o.nr_sizes ? o.sizes : NULL;
	ret = calib_fit(&ss, &sel, &c, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "ptebatch: calibrate: %s\n", err);
		/* -EINVAL: too few samples (the file's, or the selection's). */
		ret = ret == -ENOMEM ? out_of_memory() :
		      ret == -EINVAL ? EXIT_USAGE : SCN_RUN_FAILED;
		goto out;
	}
	printf("# calibration of %s, %s, %d cores, kernel %s, %s\n",
	       c.machine.arch, c.machine.cpu, c.machine.cores,
	       c.machine.kernel, c.machine.date);
	print_costs(&c);
	printf("\nby family (the fit's own samples):\n");
	print_errors(&ss, &c, true);
	printf("by folio size:\n");
	print_errors(&ss, &c, false);
	if (calib_write(cal.f, o.out, &c, err, sizeof(err))) {
		outfile_discard(&cal);
		fprintf(stderr, "ptebatch: calibrate: %s\n", err);
		ret = SCN_RUN_FAILED;
	} else if (outfile_commit(&cal, err, sizeof(err))) {
		fprintf(stderr, "ptebatch: calibrate: %s\n", err);
		ret = SCN_RUN_FAILED;
	} else {
		fprintf(stderr, "calibrate: wrote %s%s%s\n", o.out,
			spath ? " and " : "", spath ? spath : "");
	}
	calib_free(&c);
	if (!ret && o.validate)
		ret = validate(&ss);
out:
	outfile_discard(&cal);
	outfile_discard(&smp);
	free(spath);
	calib_samples_free(&ss);
	return ret;
}

static int calibrate_main(int argc, char **argv)
{
	struct calibrate_options o = { 0 };
	int i, ret;

	command = "calibrate";
	ret = cli_parse(calibrate_options, &o, no_operand, argc, argv);
	if (!ret && o.from_samples && (o.quick || o.reps ||
				       ((o.suite || o.samples_out) && !o.recount)))
		ret = usage_error("--from-samples measures nothing: no"
				  " --suite, --quick, --reps or --samples"
				  " (but --recount takes --suite and --samples)");
	if (!ret && o.recount && !o.from_samples)
		ret = usage_error("--recount: the samples to count again come"
				  " from --from-samples FILE");
	if (!ret)
		ret = calibrate_run(o);
	for (i = 0; i < o.nr_copies; i++)
		free(o.copies[i]);
	return ret;
}

const struct cli_command calibrate_command = {
	.name = "calibrate",
	.main = calibrate_main,
	.usage = calibrate_usage,
};
