// SPDX-License-Identifier: GPL-2.0-only
/*
 * random.c - ptebatch diff --random N: random scenarios
 * (scenario/generate.c) on the model and on this machine's kernel, each
 * compared as `diff` compares a file; a mismatch is run again (a second
 * mismatch rules out a one-off), shrunk by delta debugging to a minimal
 * scenario that still mismatches, and written with both records as
 * comments to OUT/random-SEED-I.scn.  The end of the run prints one
 * command per mismatch that reproduces it.
 *
 * The shrinker is ddmin over statements: it drops chunks of statements,
 * halving the chunks while nothing can go, down to single statements.
 * A candidate is made well-formed before it is tried: it is parsed, and
 * each statement the parser refuses (it used a region whose mmap went, a
 * handle never taken, a process never forked) is dropped, until it
 * parses.  The test is "the kernel's record still differs from the
 * model's" (any difference: the first one may move), twice in a row, so
 * that a one-off of the kernel's does not steer the shrink.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "diff/diff.h"
#include "lib/outfile.h"
#include "scenario/generate.h"
#include "scenario/run.h"
#include "scenario/scenario.h"

/* Kernel runs one shrink may take: each is tens of milliseconds. */
#define SHRINK_MAX_TESTS 1500

struct rdiff {
	const struct diff_random_options *o;
	/* One kernel run per try (the shrinker's), or DIFF_VARY_RUNS. */
	struct diff_config once, vary;
	char self[4096];	/* the kernel side's program */
	char exe[4096];		/* this program, for the commands printed */
	uint64_t seed;
	int tests;		/* the current shrink's */
};

/* A scenario's statements, one line each, for the shrinker. */
struct stmts {
	char **line;
	int nr;
};

static void stmts_free(struct stmts *s)
{
	int i;

	for (i = 0; i < s->nr; i++)
		free(s->line[i]);
	free(s->line);
	s->line = NULL;
	s->nr = 0;
}

static int stmts_split(struct stmts *s, const char *text)
{
	const char *c = text;

	s->nr = 0;
	s->line = calloc(strlen(text) / 2 + 2, sizeof(*s->line));
	if (!s->line)
		return -ENOMEM;
	while (*c) {
		size_t n = strcspn(c, "\n");

		if (n && c[0] != '#') {
			s->line[s->nr] = strndup(c, n);
			if (!s->line[s->nr++])
				return -ENOMEM;
		}
		c += n + (c[n] == '\n');
	}
	return 0;
}

/* The statements @keep marks, one per line, malloc'd. */
static char *join(const struct stmts *s, const bool *keep, size_t *lenp)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int i;

	if (!f)
		return NULL;
	for (i = 0; i < s->nr; i++)
		if (keep[i])
			fprintf(f, "%s\n", s->line[i]);
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	*lenp = len;
	return text;
}

/*
 * Make the statements @keep marks parse, dropping each one the parser
 * refuses: the candidate's text (malloc'd), or NULL if nothing is left.
 */
static char *well_formed(const struct stmts *s, bool *keep, size_t *lenp)
{
	static const char name[] = "candidate";

	for (;;) {
		char *text, *err = NULL;
		size_t errlen = 0;
		struct scenario *sc;
		FILE *errf;
		int line = 0, i, nth;

		text = join(s, keep, lenp);
		if (!text || !*lenp) {
			free(text);
			return NULL;
		}
		errf = open_memstream(&err, &errlen);
		if (!errf) {
			free(text);
			return NULL;
		}
		sc = scenario_parse_text(name, text, *lenp,
					 SCN_DEFAULT_PAGE_SIZE, errf);
		fclose(errf);
		if (sc) {
			scenario_free(sc);
			free(err);
			return text;
		}
		free(text);
		if (err && !strncmp(err, name, sizeof(name) - 1) &&
		    err[sizeof(name) - 1] == ':')
			line = atoi(err + sizeof(name));
		free(err);
		/* Line L of the text is the L-th statement kept. */
		for (i = 0, nth = 0; i < s->nr && line > 0; i++)
			if (keep[i] && ++nth == line)
				break;
		if (line <= 0 || i == s->nr)
			return NULL;
		keep[i] = false;
	}
}

/* Does @text still mismatch?  Its records, if so, into @model, @kernel. */
static enum diff_verdict try_text(struct rdiff *rd, const char *name,
				  char *text, size_t len, char *why,
				  size_t whylen, struct text *model,
				  struct text *kernel)
{
	struct diff_file f = { name, text, len };
	struct text detail = { 0 };
	enum diff_verdict v;

	v = diff_one(&rd->once, &f, &detail, why, whylen, model, kernel);
	text_free(&detail);
	return v;
}

static bool still_mismatch(struct rdiff *rd, const struct stmts *s,
			   bool *keep)
{
	struct text m = { 0 }, k = { 0 };
	char why[1024];
	size_t len;
	char *text = well_formed(s, keep, &len);
	enum diff_verdict v;

	if (!text)
		return false;
	rd->tests++;
	v = try_text(rd, "candidate", text, len, why, sizeof(why), &m, &k);
	text_free(&m);
	text_free(&k);
	/* A one-off must not steer the shrink: a step is taken on two. */
	if (v == DIFF_MISMATCH) {
		rd->tests++;
		v = try_text(rd, "candidate", text, len, why, sizeof(why), &m,
			     &k);
		text_free(&m);
		text_free(&k);
	}
	free(text);
	return v == DIFF_MISMATCH;
}

/*
 * ddmin over the statements @keep marks (complements only: a scenario
 * without its first mmap is seldom anything).  @keep is left marking a
 * minimal set: no statement of it can go alone.
 */
static void shrink(struct rdiff *rd, const struct stmts *s, bool *keep)
{
	bool *trial = malloc(s->nr * sizeof(*trial));
	int *idx = malloc(s->nr * sizeof(*idx));
	int n = 2;

	if (!trial || !idx)
		goto out;
	rd->tests = 0;
	for (;;) {
		int nr = 0, i, chunk, start;
		bool reduced = false;

		for (i = 0; i < s->nr; i++)
			if (keep[i])
				idx[nr++] = i;
		if (nr < 2 || rd->tests >= SHRINK_MAX_TESTS)
			break;
		if (n > nr)
			n = nr;
		chunk = (nr + n - 1) / n;
		for (start = 0; start < nr && !reduced; start += chunk) {
			memcpy(trial, keep, s->nr * sizeof(*trial));
			for (i = start; i < start + chunk && i < nr; i++)
				trial[idx[i]] = false;
			if (rd->tests >= SHRINK_MAX_TESTS)
				break;
			if (still_mismatch(rd, s, trial)) {
				memcpy(keep, trial, s->nr * sizeof(*keep));
				reduced = true;
			}
		}
		if (reduced) {
			if (n > 2)
				n--;
			continue;
		}
		if (n >= nr)
			break;
		n = n * 2 < nr ? n * 2 : nr;
	}
out:
	free(trial);
	free(idx);
}

/* @text as "# " lines of @f, under @title. */
static void put_commented(FILE *f, const char *title, const struct text *t)
{
	const char *c = t->buf ? t->buf : "";

	fprintf(f, "#\n# %s:\n", title);
	while (*c) {
		size_t n = strcspn(c, "\n");

		fprintf(f, "#   %.*s\n", (int)n, c);
		c += n + (c[n] == '\n');
	}
}

static int make_dir(const char *dir)
{
	if (mkdir(dir, 0777) && errno != EEXIST) {
		fprintf(stderr, "ptebatch: diff: cannot make %s: %s\n", dir,
			strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Shrink mismatching scenario @i (@text) and write OUT/random-SEED-I.scn:
 * the minimal scenario, why it differs, both records as comments.  The
 * file's path into @path; 0 or -1.
 */
static int shrink_and_write(struct rdiff *rd, unsigned long i,
			    const char *text, enum diff_verdict first,
			    const char *first_why, char *path, size_t pathlen)
{
	const char *dir = rd->o->out_dir ? rd->o->out_dir : DIFF_RANDOM_OUT_DIR;
	struct text m = { 0 }, k = { 0 };
	struct outfile of = { 0 };
	struct stmts s = { 0 };
	char why[1024], owhy[1200], *small = NULL;
	bool *keep = NULL;
	enum diff_verdict v = DIFF_ERROR;
	size_t len = 0;
	int nr_kept = 0, j, ret = -1;
	FILE *f;

	snprintf(path, pathlen, "%s/random-%" PRIu64 "-%lu.scn", dir, rd->seed,
		 i);
	if (make_dir(dir) || stmts_split(&s, text))
		goto out;
	keep = malloc(s.nr * sizeof(*keep));
	if (!keep)
		goto out;
	for (j = 0; j < s.nr; j++)
		keep[j] = true;
	if (!rd->o->no_shrink)
		shrink(rd, &s, keep);
	small = well_formed(&s, keep, &len);
	for (j = 0; j < s.nr; j++)
		nr_kept += keep[j];
	/* Once more, for the records, and to see it was no one-off. */
	if (small)
		v = try_text(rd, path, small, len, why, sizeof(why), &m, &k);
	/* Opened after the runs: no kernel side runs while it is open. */
	if (outfile_open(&of, "--out", path, 0, owhy, sizeof(owhy))) {
		fprintf(stderr, "ptebatch: diff: %s\n", owhy);
		goto out;
	}
	f = of.f;
	fprintf(f, "# ptebatch diff --random: scenario %lu of seed %" PRIu64
		" (--length %d), %d of its %d statements\n", i, rd->seed,
		rd->o->length, nr_kept, s.nr);
	fprintf(f, "# found: %s %s\n", diff_words[first], first_why);
	if (v == DIFF_MISMATCH || first == DIFF_ERROR)
		fprintf(f, "# minimal: %s\n", why);
	else
		fprintf(f, "# minimal: did not mismatch when run again"
			" (%s%s%s)\n", diff_words[v], why[0] ? ": " : "",
			v == DIFF_MATCH ? "" : why);
	fprintf(f, "# reproduce: ptebatch diff %s\n", path);
	fputs(small ? small : text, f);
	put_commented(f, "model record", &m);
	put_commented(f, "kernel record", &k);
	if (outfile_commit(&of, owhy, sizeof(owhy))) {
		fprintf(stderr, "ptebatch: diff: %s\n", owhy);
		goto out;
	}
	if (first == DIFF_ERROR)
		printf("  written whole: %s\n", path);
	else
		printf("  shrunk to %d of %d statements in %d runs: %s%s\n",
		       nr_kept, s.nr, rd->tests, path, v == DIFF_MISMATCH ? "" :
		       " (it did not mismatch again)");
	ret = 0;
out:
	text_free(&m);
	text_free(&k);
	free(small);
	free(keep);
	stmts_free(&s);
	return ret;
}

/* A kernel-side skip that no scenario can get past: the whole run's. */
static bool skips_everything(const char *why)
{
	return !strncmp(why, "not root", 8) ||
	       !strncmp(why, "this ptebatch has no kernel backend", 35) ||
	       !strncmp(why, "built with ThreadSanitizer", 26) ||
	       !strncmp(why, "cannot read /proc/kpageflags", 28) ||
	       /* this build's own mappings (a sanitizer's shadow) */
	       !strncmp(why, "the regions' addresses", 22);
}

static int dump(struct rdiff *rd)
{
	const struct diff_random_options *o = rd->o;
	char path[4096], why[1200];
	struct outfile of;
	unsigned long i;

	if (make_dir(o->dump_dir))
		return SCN_RUN_FAILED;
	for (i = o->first; i < o->first + o->count; i++) {
		size_t len;
		char *text = scenario_generate(scenario_gen_seed(rd->seed, i),
					       o->length, &len);

		if (!text)
			return -ENOMEM;
		snprintf(path, sizeof(path), "%s/random-%" PRIu64 "-%lu.scn",
			 o->dump_dir, rd->seed, i);
		if (outfile_open(&of, "--dump", path, 0, why, sizeof(why))) {
			fprintf(stderr, "ptebatch: diff: %s\n", why);
			free(text);
			return SCN_RUN_FAILED;
		}
		/* A short write sets the stream's error flag: the commit
		 * refuses it. */
		fwrite(text, 1, len, of.f);
		free(text);
		if (outfile_commit(&of, why, sizeof(why))) {
			fprintf(stderr, "ptebatch: diff: %s\n", why);
			return SCN_RUN_FAILED;
		}
	}
	printf("%lu scenarios of seed %" PRIu64 " in %s\n", o->count, rd->seed,
	       o->dump_dir);
	return 0;
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The reproducing commands, one per mismatch, printed at the end. */
struct repro {
	char **line;
	int nr;
};

/*
 * Scenario @i (@f) mismatched twice or failed: shrink it (a mismatch) or
 * keep it whole (an error), write it, and note its command in @rp.
 */
static void keep_failure(struct rdiff *rd, unsigned long i,
			 const struct diff_file *f, enum diff_verdict v,
			 const char *why, struct repro *rp)
{
	struct diff_random_options copy = *rd->o;
	struct rdiff one = *rd;
	char path[4096], **more;

	copy.no_shrink = rd->o->no_shrink || v == DIFF_ERROR;
	one.o = &copy;
	more = realloc(rp->line, (rp->nr + 1) * sizeof(*rp->line));
	if (!more)
		return;
	rp->line = more;
	if (!shrink_and_write(&one, i, f->text, v, why, path, sizeof(path)) &&
	    asprintf(&rp->line[rp->nr], "%s run --backend kernel %s   (model:"
		     " run %s; both: diff %s)", rd->exe, path, path, path) > 0)
		rp->nr++;
}

enum { RDIFF_NR_SLOTS = DIFF_VARIES + 1 };

/*
 * Scenario @i: generated, compared, a mismatch run again and kept.  The
 * slot it counts in; -1 if the kernel backend cannot run here at all
 * (@why says why), -2 out of memory.
 */
static int one_scenario(struct rdiff *rd, unsigned long i, char *why,
			size_t whylen, struct repro *rp)
{
	char name[64];
	struct diff_file f = { name, NULL, 0 };
	struct text detail = { 0 };
	enum diff_verdict v;
	int slot;

	snprintf(name, sizeof(name), "random-%" PRIu64 "-%lu", rd->seed, i);
	f.text = scenario_generate(scenario_gen_seed(rd->seed, i),
				   rd->o->length, &f.len);
	if (!f.text)
		return -2;
	why[0] = '\0';
	v = diff_one(&rd->vary, &f, &detail, why, whylen, NULL, NULL);
	text_free(&detail);
	if (v == DIFF_SKIP && skips_everything(why)) {
		free(f.text);
		return -1;
	}
	if (v == DIFF_MATCH)
		printf("MATCH %s\n", name);
	else
		printf("%s %s: %s\n", diff_words[v], name, why);
	fflush(stdout);
	/*
	 * A mismatch was run again on the kernel (DIFF_VARY_RUNS): a steady
	 * one is the model's to answer for, a varying one the machine's.
	 */
	slot = v;
	if (slot == DIFF_MISMATCH || slot == DIFF_ERROR) {
		keep_failure(rd, i, &f, v, why, rp);
		fflush(stdout);
	}
	free(f.text);
	return slot;
}

int diff_random(const struct diff_random_options *o,
		const struct pb_variant *variant, const char *variant_name)
{
	struct rdiff rd = { .o = o };
	unsigned long counts[RDIFF_NR_SLOTS] = { 0 }, i, done = 0;
	struct repro rp = { NULL, 0 };
	char why[1024];
	int ret, j;
	double t0;
	ssize_t n;

	rd.seed = o->have_seed ? o->seed :
		  ((uint64_t)time(NULL) * 1000003U) ^ (uint64_t)getpid();
	if (o->dump_dir)
		return dump(&rd);
	ret = diff_kernel_side(rd.self, sizeof(rd.self));
	if (ret)
		return ret;
	rd.once.self = rd.self;
	rd.once.variant = variant;
	rd.once.variant_name = variant_name;
	rd.once.vary_runs = 1;
	rd.once.vm = o->vm;
	diff_host_setup(&rd.once);
	rd.vary = rd.once;
	rd.vary.vary_runs = DIFF_VARY_RUNS;
	n = readlink("/proc/self/exe", rd.exe, sizeof(rd.exe) - 1);
	snprintf(rd.exe + (n > 0 ? n : 0), sizeof(rd.exe) - (n > 0 ? n : 0),
		 "%s", n > 0 ? "" : "ptebatch");
	printf("# diff --random %lu --seed %" PRIu64 " --length %d", o->count,
	       rd.seed, o->length);
	if (o->first)
		printf(" --index %lu", o->first);
	printf(": scenario I alone is --random 1 --index I\n");
	fflush(stdout);
	t0 = now_seconds();
	for (i = o->first; i < o->first + o->count; i++) {
		int slot = one_scenario(&rd, i, why, sizeof(why), &rp);

		if (slot == -2) {
			ret = -ENOMEM;
			goto out;
		}
		done++;
		if (slot == -1) {
			printf("SKIP diff --random: %s\n", why);
			ret = SCN_RUN_SKIPPED;
			goto out;
		}
		counts[slot]++;
	}
	ret = counts[DIFF_MISMATCH] || counts[DIFF_ERROR] ? 1 :
	      counts[DIFF_VARIES] ? DIFF_EXIT_VARIES : 0;
out:
	printf("%lu match, %lu mismatch, %lu skip", counts[DIFF_MATCH],
	       counts[DIFF_MISMATCH], counts[DIFF_SKIP]);
	if (counts[DIFF_VARIES])
		printf(", %lu varies", counts[DIFF_VARIES]);
	if (counts[DIFF_ERROR])
		printf(", %lu error", counts[DIFF_ERROR]);
	printf(" (seed %" PRIu64 ", %lu scenarios, %.1f ms each)\n", rd.seed,
	       done, done ? (now_seconds() - t0) * 1000 / done : 0.0);
	for (j = 0; j < rp.nr; j++) {
		printf("reproduce: %s\n", rp.line[j]);
		free(rp.line[j]);
	}
	free(rp.line);
	return ret;
}
