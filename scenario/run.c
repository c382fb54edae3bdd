// SPDX-License-Identifier: GPL-2.0-only
/*
 * run.c - the runner: feeds a backend the statements of a scenario in
 * order and prints the record.  It never looks inside the backend.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/outfile.h"
#include "scenario/record.h"
#include "scenario/run.h"

/* Copy @text to @err, every line prefixed with @s's file and statement. */
static void report_violations(const struct scenario *s, int number,
			      const char *text, size_t len, FILE *err)
{
	const char *c = text, *end = text + len;

	while (c < end) {
		const char *nl = memchr(c, '\n', end - c);
		size_t n = nl ? (size_t)(nl - c) : (size_t)(end - c);

		fprintf(err, "%s: after statement %d: %.*s\n", s->file, number,
			(int)n, c);
		c += n + 1;
	}
}

/*
 * Where the check writes: one in-memory stream for the whole run, written
 * from its start by every check.
 */
struct check_capture {
	FILE *mem;
	char *text;
	size_t len;
};

/*
 * Run the backend's invariant check.  The check writes plain lines; they
 * are captured so each one can say where in the scenario it was found.
 * Returns the number of violations.
 */
static unsigned long run_check(const struct scenario *s, struct backend *b,
			       int number, struct check_capture *cap, FILE *err)
{
	unsigned long nr;

	if (!cap->mem)
		cap->mem = open_memstream(&cap->text, &cap->len);
	if (!cap->mem) {
		fprintf(err, "%s: after statement %d: (violations unprefixed:"
			" %s)\n", s->file, number, strerror(errno));
		return b->ops->check(b, err);
	}
	rewind(cap->mem);
	nr = b->ops->check(b, cap->mem);
	fflush(cap->mem);	/* cap->len: what this check wrote */
	report_violations(s, number, cap->text, cap->len, err);
	if (nr && !cap->len)
		fprintf(err, "%s: after statement %d: %lu invariant"
			" violation%s\n", s->file, number, nr,
			nr == 1 ? "" : "s");
	return nr;
}

static int run_observe(const struct scenario *s, struct backend *b,
		       const struct stmt *st, struct snapshot *snap,
		       const struct scn_watch *watch, FILE *out, FILE *err)
{
	int ret;

	snapshot_clear(snap);
	ret = b->ops->observe(b, snap);
	/* Before record_observe() renumbers the frames in place. */
	if (!ret && watch)
		ret = watch->observed(watch->arg, st, snap);
	if (!ret)
		ret = record_observe(out, s, st, snap);
	if (ret)
		fprintf(err, "%s:%d: statement %d: observe failed: %s\n",
			s->file, st->line, st->number, strerror(-ret));
	return ret;
}

/*
 * The runs of a timed run (scenario_run_timed()): every process
 * statement's time in each, and whether its result was the first run's.
 * An annotated or watched run is one untimed run: ns NULL.
 */
struct run_times {
	int reps, rep;
	uint64_t *ns;			/* [statement index * reps + rep] */
	struct stmt_first {
		int err;
		unsigned long faults, child_faults;
		bool vary;
	} *first;			/* [statement index] */
	struct stmt_sample *samples;	/* [statement index], or NULL */
	bool insns;			/* the backend's time_insns */
	scn_annotate_fn annotate;	/* or NULL */
	void *annotate_arg;
	bool hide_stats;		/* counted for annotate, not printed */
	const struct scn_watch *watch;	/* or NULL */
	struct snapshot watch_snap;	/* what watch->stmt_done() is given */
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The median of @nr values, sorted in place. */
static double median_ns(uint64_t *v, int nr)
{
	qsort(v, (size_t)nr, sizeof(*v), cmp_u64);
	if (nr % 2)
		return (double)v[nr / 2];
	return ((double)v[nr / 2 - 1] + (double)v[nr / 2]) / 2;
}

static double least_ns(const uint64_t *v, int nr)
{
	uint64_t m = v[0];
	int i;

	for (i = 1; i < nr; i++)
		if (v[i] < m)
			m = v[i];
	return (double)m;
}

/*
 * Note @res of statement @i in this run; in the last run, fill @time
 * for its record line.  Returns @time then, else NULL.
 */
static const struct record_time *note_time(struct run_times *t, int i,
					   const struct stmt_result *res,
					   struct record_time *time)
{
	struct stmt_first *f = &t->first[i];
	uint64_t *ns = &t->ns[(size_t)i * t->reps];

	ns[t->rep] = res->time_ns;
	if (!t->rep) {
		f->err = res->err;
		f->faults = res->faults;
		f->child_faults = res->child_faults;
	} else if (f->err != res->err || f->faults != res->faults ||
		   f->child_faults != res->child_faults) {
		f->vary = true;
	}
	if (t->rep != t->reps - 1 || !res->has_time)
		return NULL;
	/*
	 * Under -icount a statement's count only grows with what else ran
	 * in its window (a tick, an RCU callback): the least run is the
	 * statement's own.  A clock's time is noisy both ways: the median.
	 */
	time->us = (t->insns ? least_ns(ns, t->reps) :
		    median_ns(ns, t->reps)) / 1000;
	time->faults_vary = f->vary;
	time->label = t->insns ? "insns" : NULL;
	return time;
}

/* The last run's result of a statement, for scenario_run_sampled(). */
static void note_sample(struct stmt_sample *sample,
			const struct stmt_result *res,
			const struct record_time *timed)
{
	sample->ran = true;
	sample->err = res->err;
	sample->faults = res->faults;
	sample->has_time = timed != NULL;
	sample->us = timed ? timed->us : 0;
	sample->vary = timed ? timed->faults_vary : false;
	sample->has_stats = res->has_stats;
	memcpy(sample->stats, res->stats, sizeof(sample->stats));
}

enum stmt_outcome { STMT_DONE, STMT_EXHAUSTED, STMT_FATAL };

/* The watch's snapshot after @st, which ran with @res. */
static int watch_stmt(const struct scenario *s, struct backend *b,
		      const struct stmt *st, const struct stmt_result *res,
		      struct run_times *t, FILE *err)
{
	int ret;

	snapshot_clear(&t->watch_snap);
	ret = b->ops->observe(b, &t->watch_snap);
	if (!ret)
		ret = t->watch->stmt_done(t->watch->arg, st, res,
					  &t->watch_snap);
	if (ret)
		fprintf(err, "%s:%d: statement %d: snapshot after it failed:"
			" %s\n", s->file, st->line, st->number, strerror(-ret));
	return ret;
}

static enum stmt_outcome run_process_statement(const struct scenario *s,
					       struct backend *b,
					       const struct stmt *st, FILE *out,
					       FILE *err, struct run_times *t)
{
	enum stmt_outcome outcome = STMT_DONE;
	const struct record_time *timed = NULL;
	struct record_time time;
	struct stmt_result res;

	memset(&res, 0, sizeof(res));
	b->ops->exec(b, st, &res);
	if (res.fatal[0]) {
		fprintf(err, "%s:%d: %.*s\n", s->file, st->line,
			(int)sizeof(res.fatal), res.fatal);
		stmt_result_reset(&res);
		return STMT_FATAL;
	}
	if (res.exhausted[0]) {
		fprintf(err, "%s:%d: %s: out of memory: %.*s\n", s->file,
			st->line, st->text, (int)sizeof(res.exhausted),
			res.exhausted);
		outcome = STMT_EXHAUSTED;
	}
	if (t && t->annotate) {
		memset(&time, 0, sizeof(time));
		if (t->annotate(t->annotate_arg, st, &res, &time))
			timed = &time;
	} else if (t && t->ns) {
		timed = note_time(t, (int)(st - s->stmts), &res, &time);
		if (t->samples && t->rep == t->reps - 1)
			note_sample(&t->samples[st - s->stmts], &res, timed);
	}
	record_result(out, s, st, &res, b->want_stats && !(t && t->hide_stats),
		      b->want_kstats, timed);
	if (t && t->watch && watch_stmt(s, b, st, &res, t, err))
		outcome = STMT_FATAL;
	stmt_result_reset(&res);
	return outcome;
}

/* start() or finish() said the backend cannot run @s here, and why. */
static bool run_skipped(const struct scenario *s, const struct backend *b,
			int ret, FILE *err)
{
	if (ret != -EOPNOTSUPP || !b->skip_reason[0])
		return false;
	fprintf(err, "%s: skipped on backend %s: %.*s\n", s->file,
		b->ops->name, (int)sizeof(b->skip_reason), b->skip_reason);
	return true;
}

/*
 * Statements [@from, @to) of @s on the started backend @b: records on
 * @out, checks (@check_from) on @err.  *@failed, *@exhausted and
 * *@violations gather what went wrong, as run_once() reports it.
 */
static void run_stmts(const struct scenario *s, struct backend *b, int from,
		      int to, FILE *out, FILE *err, int check_from,
		      struct run_times *t, bool *failed, bool *exhausted,
		      unsigned long *violations)
{
	struct snapshot snap = { 0 };
	struct check_capture cap = { 0 };
	int i;

	for (i = from; i < to && !*failed; i++) {
		const struct stmt *st = &s->stmts[i];

		switch (st->kind) {
		case ST_MTHP:
			/* The backend applied the settings in start(). */
			record_setting(out, st);
			break;
		case ST_OBSERVE:
			*failed = run_observe(s, b, st, &snap,
					      t ? t->watch : NULL, out,
					      err) != 0;
			break;
		default:
			switch (run_process_statement(s, b, st, out, err, t)) {
			case STMT_FATAL:
				*failed = true;
				break;
			case STMT_EXHAUSTED:
				*exhausted = true;
				break;
			case STMT_DONE:
				break;
			}
			break;
		}
		if (check_from && st->number >= check_from && b->ops->check)
			*violations += run_check(s, b, st->number, &cap, err);
	}
	snapshot_free(&snap);
	if (cap.mem)
		fclose(cap.mem);
	free(cap.text);
}

static int run_status(bool failed, bool exhausted, bool skipped,
		      unsigned long violations)
{
	if (violations)
		return SCN_RUN_VIOLATION;
	if (failed || exhausted)
		return SCN_RUN_FAILED;
	return skipped ? SCN_RUN_SKIPPED : SCN_RUN_OK;
}

/* start(), and the record's first lines; SCN_RUN_OK or why not. */
static int run_begin(const struct scenario *s, struct backend *b, FILE *out,
		     FILE *err, struct run_times *t)
{
	int ret = b->ops->start(b, s);

	if (run_skipped(s, b, ret, err))
		return SCN_RUN_SKIPPED;
	if (ret) {
		fprintf(err, "%s: backend %s could not start: %s\n", s->file,
			b->ops->name, strerror(ret < 0 ? -ret : ret));
		return SCN_RUN_FAILED;
	}
	record_header(out, b);
	if (t && t->ns)
		record_time_method(out, b, t->reps);
	return SCN_RUN_OK;
}

static int run_once(const struct scenario *s, struct backend *b, FILE *out,
		    FILE *err, int check_from, struct run_times *t)
{
	bool failed = false, skipped = false, exhausted = false;
	unsigned long violations = 0;
	int ret;

	ret = run_begin(s, b, out, err, t);
	if (ret != SCN_RUN_OK)
		return ret;
	run_stmts(s, b, 0, s->nr_stmts, out, err, check_from, t, &failed,
		  &exhausted, &violations);

	ret = b->ops->finish(b);
	if (run_skipped(s, b, ret, err)) {
		skipped = true;
	} else if (ret) {
		fprintf(err, "%s: backend %s could not finish: %s\n", s->file,
			b->ops->name, strerror(ret < 0 ? -ret : ret));
		failed = true;
	}
	if (fflush(out) || ferror(out)) {
		fprintf(err, "%s: error writing the record\n", s->file);
		failed = true;
	}
	return run_status(failed, exhausted, skipped, violations);
}

int scenario_run_start(const struct scenario *s, struct backend *b,
		       FILE *out, FILE *err)
{
	return run_begin(s, b, out, err, NULL);
}

int scenario_run_part(const struct scenario *s, struct backend *b, int from,
		      int to, FILE *out, FILE *err, int check_from)
{
	bool failed = false, exhausted = false;
	unsigned long violations = 0;

	run_stmts(s, b, from, to, out, err, check_from, NULL, &failed,
		  &exhausted, &violations);
	if (fflush(out) || ferror(out)) {
		fprintf(err, "%s: error writing the record\n", s->file);
		failed = true;
	}
	return run_status(failed, exhausted, false, violations);
}

int scenario_run(const struct scenario *s, struct backend *b, FILE *out,
		 FILE *err, int check_from)
{
	return run_once(s, b, out, err, check_from, NULL);
}

int scenario_run_timed(const struct scenario *s, struct backend *b, int reps,
		       FILE *out, FILE *err, int check_from)
{
	return scenario_run_sampled(s, b, reps, out, err, check_from, NULL);
}

int scenario_run_sampled(const struct scenario *s, struct backend *b,
			 int reps, FILE *out, FILE *err, int check_from,
			 struct stmt_sample *samples)
{
	struct run_times t = { .reps = reps, .samples = samples,
			       .insns = b->time_insns };
	FILE *devnull = NULL;
	int ret = SCN_RUN_OK;

	/* + 1: a scenario of no statement still gets its memory. */
	t.ns = calloc((size_t)s->nr_stmts * (size_t)reps + 1, sizeof(*t.ns));
	t.first = calloc((size_t)s->nr_stmts + 1, sizeof(*t.first));
	if (reps > 1)
		devnull = outfile_sink();
	if (!t.ns || !t.first || (reps > 1 && !devnull)) {
		fprintf(err, "%s: cannot time %d runs: %s\n", s->file, reps,
			strerror(errno));
		ret = SCN_RUN_FAILED;
	}
	/* Only the last run's record is printed; the others are thrown away. */
	for (t.rep = 0; ret == SCN_RUN_OK && t.rep < reps; t.rep++)
		ret = run_once(s, b, t.rep == reps - 1 ? out : devnull, err,
			       check_from, &t);
	if (devnull)
		fclose(devnull);
	free(t.ns);
	free(t.first);
	return ret;
}

int scenario_run_annotated(const struct scenario *s, struct backend *b,
			   FILE *out, FILE *err, int check_from,
			   bool with_stats, scn_annotate_fn annotate, void *arg)
{
	struct run_times t = {
		.reps = 1, .annotate = annotate, .annotate_arg = arg,
		.hide_stats = !with_stats,
	};

	return run_once(s, b, out, err, check_from, &t);
}

int scenario_run_watched(const struct scenario *s, struct backend *b,
			 FILE *out, FILE *err, int check_from,
			 const struct scn_watch *watch)
{
	struct run_times t = { .reps = 1, .watch = watch };
	int ret;

	ret = run_once(s, b, out, err, check_from, &t);
	snapshot_free(&t.watch_snap);
	return ret;
}
