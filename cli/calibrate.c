// SPDX-License-Identifier: GPL-2.0-only
/*
 * calibrate.c - ptebatch calibrate: time the calibration suite on this
 * machine's kernel (or count a guest kernel's instructions, --backend
 * vm:NAME), count it on the model, fit one cost per counter and write
 * the calibration; or refit saved samples, and say how well a fit
 * predicts what it was not fitted on (--validate).
 */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.h"
#include "calibrate/measure.h"
#include "calibrate/samples.h"
#include "cli/cli.h"
#include "lib/outfile.h"
#include "scenario/run.h"
#include "vm/vm.h"

/* The suite's repetitions: the median of this many kernel runs. */
#define CALIB_DEFAULT_REPS 5
#define CALIB_QUICK_REPS 1
/* Runs of a scenario the kernel backend skipped before giving up on it. */
#define CALIB_TRIES 3
/* The scenario files a command line may name. */
#define CALIB_MAX_FILES 256
/*
 * One suite file in a guest under -icount: the longest (32M, five runs)
 * takes about a minute here; a guest silent for half an hour is hung.
 */
#define CALIB_VM_TIMEOUT 1800

struct calibrate_options {
	const char *out;		/* -o */
	const char *samples_out;	/* --samples */
	const char *from_samples;
	const char *suite;
	const char *vm_spec;		/* --backend vm[:NAME]; NULL: this kernel */
	bool quick, validate, recount;
	bool time_insns;		/* --time-insns: the clock counts instructions */
	bool samples_only;		/* --samples-only: no fit */
	int reps;
	const char *files[CALIB_MAX_FILES];	/* operands: the suite's files */
	int nr_files;
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

static int set_backend(void *o, const char *v)
{
	struct calibrate_options *opts = o;

	opts->vm_spec = vm_backend_spec(v);
	if (!opts->vm_spec && strcmp(v, "kernel"))
		return usage_error("--backend: '%s' is not kernel, vm or"
				   " vm:NAME", v);
	return 0;
}

static int set_time_insns(void *o, const char *v)
{
	((struct calibrate_options *)o)->time_insns = true;
	return 0;
}

static int set_samples_only(void *o, const char *v)
{
	((struct calibrate_options *)o)->samples_only = true;
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

static int add_file(void *o, const char *word)
{
	struct calibrate_options *opts = o;

	if (!*word)
		return usage_error("an empty scenario file name");
	if (opts->nr_files == CALIB_MAX_FILES)
		return usage_error("at most %d scenario files",
				   CALIB_MAX_FILES);
	/* Said before anything is measured, not after a guest booted. */
	if (access(word, R_OK))
		return usage_error("%s: %s", word, strerror(errno));
	opts->files[opts->nr_files++] = word;
	return 0;
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
	{ .name = "--backend", .arg = "B", .set = set_backend,
	  .forms = CALIB_MEASURE,
	  .help = "kernel (default): this machine's kernel, timed in us;"
		  " vm[:NAME]: a kernel of our own booted under QEMU's -icount,"
		  " its instructions counted (the calibration's unit is then"
		  " insns)" },
	{ .name = "--reps", .arg = "N", .set = set_reps, .forms = CALIB_MEASURE,
	  .help = "the median of N kernel runs of each scenario (default "
		  CLI_STR(CALIB_DEFAULT_REPS) ")" },
	{ .name = "--quick", .set = set_quick, .forms = CALIB_MEASURE,
	  .help = "the smallest scenario of each folio size, one run each (a"
		  " smoke test, not a calibration to use)" },
	{ .name = "--samples-only", .set = set_samples_only,
	  .forms = CALIB_MEASURE,
	  .help = "measure and write the samples (--samples FILE), fit"
		  " nothing (what a guest runs for --backend vm)" },
	{ .name = "--time-insns", .set = set_time_insns, .forms = CALIB_MEASURE,
	  .help = "the kernel's clock counts instructions (a guest under"
		  " -icount): the samples are insns (--backend vm sets it)" },
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
	{ .after = "[FILE.scn...]" },
	{ .after = NULL },
};

static const struct cli_help calibrate_help = {
	.name = "calibrate",
	.options = calibrate_options,
	CLI_FORMS(calibrate_forms),
	.about = "fit the model's cost counters to a kernel's times or"
		 " instructions",
	.epilogue = "Measuring needs root (the kernel backend); it runs each"
		    " scenario (the suite's,\n"
		    "or the FILEs named) on the kernel with per-statement"
		    " timing and on the model\n"
		    "(upstream) with counters.  With --backend vm:NAME the"
		    " guest does both and its\n"
		    "clock counts instructions: the same run to run.\n",
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
	} else if (o->nr_files) {
		for (i = 0; i < o->nr_files; i++) {
			calib_size_label(o->files[i], label, sizeof(label));
			size_names_add(sn, label);
		}
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

/*
 * The suite's files: the FILEs named, else the .scn files of DIR (globbed into @g,
 * which the caller frees with globfree() when *@globbed).  0 or an exit
 * status, said on stderr.
 */
static int suite_files(const struct calibrate_options *o, glob_t *g,
		       bool *globbed, char *const **paths, size_t *nr)
{
	char pattern[4096];
	int ret;

	*globbed = false;
	if (o->nr_files) {
		*paths = (char *const *)o->files;
		*nr = (size_t)o->nr_files;
		return 0;
	}
	snprintf(pattern, sizeof(pattern), "%s/*.scn", o->suite);
	ret = glob(pattern, 0, NULL, g);
	if (ret == GLOB_NOMATCH) {
		fprintf(stderr, "ptebatch: calibrate: %s: no calibration"
			" scenario (*.scn) there\n", o->suite);
		return EXIT_USAGE;
	}
	if (ret)
		return out_of_memory();
	*globbed = true;
	*paths = g->gl_pathv;
	*nr = g->gl_pathc;
	return 0;
}

/*
 * The scenario @path measured in the guest @g: its text on the guest's
 * stdin (an arm64 guest has no host files), the guest's own `ptebatch
 * calibrate --samples-only` taking the samples, which come back on its
 * stdout and are named here after @path.  0; -EOPNOTSUPP for a scenario
 * the guest skipped; -EINVAL (said on stderr) for a failed run; -EIO
 * for a guest that died or hung (said in @why).
 */
static int measure_in_vm(struct vm_guest *g, const char *path, int reps,
			 struct calib_samples *ss, char *why, size_t whylen)
{
	char r_arg[16], err[2048], size[16], *text;
	char *argv[] = { "ptebatch", "calibrate", "--samples-only",
			 "--time-insns", "--reps", r_arg, "--samples",
			 "/dev/stdout", "--", "/dev/stdin", NULL };
	const char *base = strrchr(path, '/');
	struct calib_samples got = { 0 };
	struct vm_result r = { 0 };
	size_t len, i;
	int ret, st;
	FILE *f;

	base = base ? base + 1 : path;
	snprintf(r_arg, sizeof(r_arg), "%d", reps);
	text = scenario_read_file(path, &len, stderr);
	if (!text)
		return -EINVAL;
	ret = vm_exec(g, argv, "/", text, len, path, &r, why, whylen);
	free(text);
	if (ret)
		return -EIO;
	fwrite(r.err, 1, r.err_len, stderr);
	st = WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1;
	if (st == SCN_RUN_SKIPPED) {
		vm_result_free(&r);
		return -EOPNOTSUPP;
	}
	if (st) {
		vm_result_free(&r);
		return -EINVAL;
	}
	f = fmemopen(r.out, r.out_len, "r");
	ret = f ? calib_samples_read_stream(f, path, &got, err, sizeof(err)) :
		  -errno;
	if (f)
		fclose(f);
	vm_result_free(&r);
	if (ret) {
		fprintf(stderr, "ptebatch: calibrate: the guest's samples of"
			" %s: %s\n", path, f ? err : strerror(-ret));
		return ret == -ENOMEM ? ret : -EINVAL;
	}
	calib_size_label(path, size, sizeof(size));
	for (i = 0; !ret && i < got.nr; i++) {
		snprintf(got.v[i].scenario, sizeof(got.v[i].scenario), "%s",
			 base);
		snprintf(got.v[i].size, sizeof(got.v[i].size), "%s", size);
		ret = calib_samples_add(ss, &got.v[i]);
	}
	if (!ss->machine.arch[0])
		ss->machine = got.machine;
	calib_samples_free(&got);
	return ret;
}

/* A guest's samples: its kernel named, its instructions the unit. */
static void vm_machine(struct calib_machine *m, const struct vm_kernel *k,
		       const char *accel)
{
	struct calib_machine host;

	calib_this_machine(&host);
	memcpy(m->date, host.date, sizeof(m->date));
	m->unit = CALIB_UNIT_INSNS;
	snprintf(m->kernel, sizeof(m->kernel), "vm:%s", k->name);
	snprintf(m->cpu, sizeof(m->cpu), "QEMU %s", accel);
	if (!m->arch[0])
		snprintf(m->arch, sizeof(m->arch), "%s", k->arch);
	if (m->cores < 1)
		m->cores = 1;
}

/*
 * Every file of the suite measured on this machine's kernel, or in one
 * guest of the kernel --backend vm names, into @ss.
 */
static int measure_suite(const struct calibrate_options *o,
			 struct calib_samples *ss)
{
	struct vm_boot_options bo = { .icount = true,
				      .request_timeout = CALIB_VM_TIMEOUT };
	struct calib_measure_stats st = { 0 };
	struct vm_guest *g = NULL;
	struct vm_kernel k;
	char why[4096];
	char *const *paths = NULL;
	bool globbed;
	glob_t gl;
	size_t i, nr = 0, ran = 0, before;
	int try, ret, reps = o->reps ? o->reps :
		o->quick ? CALIB_QUICK_REPS : CALIB_DEFAULT_REPS;

	ret = suite_files(o, &gl, &globbed, &paths, &nr);
	if (ret)
		return ret;
	calib_this_machine(&ss->machine);
	if (o->time_insns)
		ss->machine.unit = CALIB_UNIT_INSNS;
	if (o->vm_spec) {
		if (vm_kernel_find(o->vm_spec, &k, why, sizeof(why))) {
			fprintf(stderr, "ptebatch: calibrate: skipped on"
				" backend vm: %s\n", why);
			ret = SCN_RUN_SKIPPED;
			goto out;
		}
		g = vm_boot(&k, &bo, why, sizeof(why));
		if (!g) {
			fprintf(stderr, "ptebatch: calibrate: %s\n", why);
			ret = SCN_RUN_FAILED;
			goto out;
		}
		/* The guest's own machine line, then its kernel named. */
		memset(&ss->machine, 0, sizeof(ss->machine));
	}
	for (i = 0; i < nr; i++) {
		if (o->quick && !shortest_of_its_size((char **)paths, nr, i))
			continue;
		fprintf(stderr, "calibrate: %s (%d run%s%s%s)\n", paths[i],
			reps, reps == 1 ? "" : "s", g ? ", vm:" : "",
			g ? k.name : "");
		/*
		 * A skip is a folio size this kernel lacks, or khugepaged
		 * collapsing a range during the run (the backend holds it
		 * off but cannot stop it): said on stderr; try again.
		 */
		before = ss->nr;
		for (try = 0; try < CALIB_TRIES; try++) {
			why[0] = '\0';
			ret = g ? measure_in_vm(g, paths[i], reps, ss, why,
						sizeof(why)) :
				  calib_measure(paths[i], reps, o->time_insns,
						ss, &st, why, sizeof(why));
			if (why[0])
				fprintf(stderr, "%s\n", why);
			if (ret != -EOPNOTSUPP)
				break;
		}
		if (ret == -EOPNOTSUPP)
			continue;
		if (ret) {
			fprintf(stderr, "ptebatch: calibrate: %s: %s\n",
				paths[i], ret == -ENOMEM ? "out of memory" :
				"the run failed (above)");
			ret = SCN_RUN_FAILED;
			goto out;
		}
		if (g)
			st.taken += ss->nr - before;
		ran++;
	}
	if (g) {
		vm_machine(&ss->machine, &k, vm_guest_accel(g));
		fprintf(stderr, "calibrate: %zu scenarios, %lu samples in"
			" vm:%s (what each left out: above)\n", ran, st.taken,
			k.name);
	} else {
		fprintf(stderr, "calibrate: %zu scenarios, %lu samples; left"
			" out: %lu untimed, %lu split, dio or drain, %lu"
			" errors, %lu with other faults than the kernel's, %lu"
			" that varied\n", ran, st.taken, st.untimed,
			st.unfitted, st.failed, st.differ, st.vary);
	}
	ret = 0;
	if (!ss->nr) {
		fprintf(stderr, "ptebatch: calibrate: no sample taken%s\n",
			ran ? "" : " (every scenario was skipped)");
		ret = SCN_RUN_SKIPPED;
	}
out:
	vm_shutdown(g, ret == SCN_RUN_FAILED);
	if (globbed)
		globfree(&gl);
	return ret;
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

	*spath = NULL;
	if (o->samples_only) {
		*spath = strdup(o->samples_out);
		if (!*spath)
			return out_of_memory();
		if (outfile_open(smp, "--samples", *spath, 0, why,
				 sizeof(why))) {
			free(*spath);
			*spath = NULL;
			return usage_error("%s", why);
		}
		return 0;
	}
	if (outfile_open(cal, "-o", o->out, 0, why, sizeof(why)))
		return usage_error("%s", why);
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

	printf("%-20s %10s %10s  %s\n", "counter",
	       calib_unit_name(c->machine.unit), "stderr", "state");
	for (j = 0; j < PB_NR_STATS; j++) {
		const struct calib_cost *k = &c->cost[j];

		if (!k->present || k->state == NNLS_UNIDENTIFIABLE)
			continue;
		printf("%-20s %10.5f %10.5f  %s\n", pb_stat_name(j), k->value,
		       k->error, nnls_cost_state_name(k->state));
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
		if (geteuid() && !o.vm_spec) {
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
		if (ret || o.samples_only)
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
	printf("# calibration of %s, %s, %d cores, kernel %s, %s; costs in"
	       " %s\n", c.machine.arch, c.machine.cpu, c.machine.cores,
	       c.machine.kernel, c.machine.date,
	       calib_unit_name(c.machine.unit));
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
	ret = cli_parse(calibrate_options, &o, add_file, argc, argv);
	if (!ret && o.from_samples && (o.quick || o.reps ||
				       ((o.suite || o.samples_out) && !o.recount)))
		ret = usage_error("--from-samples measures nothing: no"
				  " --suite, --quick, --reps or --samples"
				  " (but --recount takes --suite and --samples)");
	if (!ret && o.recount && !o.from_samples)
		ret = usage_error("--recount: the samples to count again come"
				  " from --from-samples FILE");
	if (!ret && o.from_samples && (o.vm_spec || o.time_insns ||
				       o.samples_only || o.nr_files))
		ret = usage_error("--from-samples measures nothing: no"
				  " --backend, --time-insns, --samples-only or"
				  " scenario FILE");
	if (!ret && o.time_insns && o.vm_spec)
		ret = usage_error("--time-insns: --backend vm counts"
				  " instructions already");
	if (!ret && o.samples_only && !o.samples_out)
		ret = usage_error("--samples-only: name the samples' file with"
				  " --samples FILE");
	if (!ret && o.samples_only && (o.out || o.validate || o.nr_without ||
				       o.nr_sizes))
		ret = usage_error("--samples-only fits nothing: no -o,"
				  " --validate, --without or --sizes");
	if (!ret && o.nr_files && o.suite)
		ret = usage_error("--suite DIR and scenario FILEs: name one"
				  " or the other");
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
