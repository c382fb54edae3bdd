// SPDX-License-Identifier: GPL-2.0-only
/*
 * measure.c - samples from a calibration scenario: its statements timed
 * on the kernel and counted on the model (measure.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "backend/backend.h"
#include "backend/host.h"
#include "calibrate/measure.h"
#include "lib/outfile.h"
#include "scenario/run.h"
#include "scenario/scenario.h"

void calib_this_machine(struct calib_machine *m)
{
	struct utsname u;
	time_t now = time(NULL);
	struct tm tm;

	memset(m, 0, sizeof(*m));
	if (!uname(&u)) {
		snprintf(m->arch, sizeof(m->arch), "%s", u.machine);
		snprintf(m->kernel, sizeof(m->kernel), "%s", u.release);
	}
	if (!host_cpu_model(m->cpu, sizeof(m->cpu)))
		snprintf(m->cpu, sizeof(m->cpu), "unknown");
	m->cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (m->cores < 1)
		m->cores = 1;
	gmtime_r(&now, &tm);
	strftime(m->date, sizeof(m->date), "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/*
 * Families whose kernel time is mostly not the model's work: the kernel
 * backend carries `split` out as two mprotect calls per 2M (Linux has no
 * system call for it), a dio-read or dio-write is a block I/O to a file
 * (the pinning is a small part of it; the model does no I/O), and a
 * drain is a read() copying the pipe's pages out (the model hands the
 * bytes over without a copy).
 */
static bool unfitted_family(const char *family)
{
	return !strcmp(family, "split") || !strcmp(family, "dio") ||
	       !strcmp(family, "drain");
}

/* Run @s on @b (@reps runs) into @samples; the record goes nowhere. */
static int run_into(const struct scenario *s, struct backend *b, int reps,
		    struct stmt_sample *samples, FILE *err)
{
	FILE *devnull = outfile_sink();
	int ret;

	if (!devnull)
		return -errno;
	ret = scenario_run_sampled(s, b, reps, devnull, err, 0, samples);
	fclose(devnull);
	if (ret == SCN_RUN_SKIPPED)
		return -EOPNOTSUPP;
	return ret == SCN_RUN_OK ? 0 : -EINVAL;
}

static int add_samples(const char *path, const struct scenario *s,
		       const struct stmt_sample *kern,
		       const struct stmt_sample *model,
		       struct calib_samples *ss,
		       struct calib_measure_stats *st)
{
	const char *base = strrchr(path, '/');
	int i, ret;

	base = base ? base + 1 : path;
	for (i = 0; i < s->nr_stmts; i++) {
		const struct stmt_sample *k = &kern[i], *m = &model[i];
		struct calib_sample x;

		if (!k->ran || !m->ran)
			continue;
		memset(&x, 0, sizeof(x));
		calib_family(s->stmts[i].text, m->stats, x.family,
			     sizeof(x.family));
		if (unfitted_family(x.family)) {
			st->unfitted++;
			continue;
		}
		if (k->err || m->err) {
			st->failed++;
			continue;
		}
		if (k->faults != m->faults) {
			st->differ++;
			continue;
		}
		if (k->vary) {
			st->vary++;
			continue;
		}
		if (!k->has_time || k->us <= 0 || !m->has_stats) {
			st->untimed++;
			continue;
		}
		snprintf(x.scenario, sizeof(x.scenario), "%s", base);
		x.stmt = s->stmts[i].number;
		calib_size_label(path, x.size, sizeof(x.size));
		x.us = k->us;
		memcpy(x.count, m->stats, sizeof(x.count));
		ret = calib_samples_add(ss, &x);
		if (ret)
			return ret;
		st->taken++;
	}
	return 0;
}

static int measure(const char *path, int reps, bool insns,
		   struct calib_samples *ss, struct calib_measure_stats *st,
		   FILE *err)
{
	struct calib_measure_stats dummy = { 0 };
	struct stmt_sample *kern = NULL, *model = NULL;
	struct model_options mopt = { 0 };
	struct kernel_options kopt = { 0 };
	struct backend *kb = NULL, *mb = NULL;
	struct scenario *s = NULL;
	size_t len;
	char *text;
	int ret;

	if (!st)
		st = &dummy;
	text = scenario_read_file(path, &len, err);
	if (text)
		s = scenario_parse_text(path, text, len, SCN_DEFAULT_PAGE_SIZE,
					err);
	free(text);
	if (!s)
		return -EINVAL;
	ret = -ENOMEM;
	kern = calloc((size_t)s->nr_stmts + 1, sizeof(*kern));
	model = calloc((size_t)s->nr_stmts + 1, sizeof(*model));
	kb = kernel_backend_create(&kopt);
	/* Upstream: this kernel's rules, and its zero page's (host.h). */
	mopt.read_faults_allocate = host_read_faults_allocate();
	mb = model_backend_create(&mopt);
	if (!kern || !model || !kb || !mb)
		goto out;
	kb->time_insns = insns;
	kb->timed = true;
	ret = run_into(s, kb, reps, kern, err);
	if (ret)
		goto out;
	mb->want_stats = 1;
	ret = run_into(s, mb, 1, model, err);
	if (!ret)
		ret = add_samples(path, s, kern, model, ss, st);
out:
	if (kb)
		kb->ops->destroy(kb);
	if (mb)
		mb->ops->destroy(mb);
	free(kern);
	free(model);
	scenario_free(s);
	return ret;
}

/* The samples of one scenario, counted again from @model's statements. */
static void recount_one(struct calib_samples *ss, const char *name,
			const struct scenario *s, const struct stmt_sample *model,
			unsigned long *dropped)
{
	size_t i, kept = 0;
	int j;

	for (i = 0; i < ss->nr; i++) {
		struct calib_sample *x = &ss->v[i];
		const struct stmt_sample *m = NULL;

		if (strcmp(x->scenario, name)) {
			ss->v[kept++] = *x;
			continue;
		}
		for (j = 0; j < s->nr_stmts; j++)
			if (s->stmts[j].number == x->stmt)
				m = &model[j];
		if (!m || !m->ran || m->err || !m->has_stats ||
		    m->stats[PB_STAT_fault] != x->count[PB_STAT_fault]) {
			(*dropped)++;
			continue;
		}
		memcpy(x->count, m->stats, sizeof(x->count));
		for (j = 0; j < s->nr_stmts; j++)
			if (s->stmts[j].number == x->stmt)
				calib_family(s->stmts[j].text, m->stats,
					     x->family, sizeof(x->family));
		ss->v[kept++] = *x;
	}
	ss->nr = kept;
}

static int recount(struct calib_samples *ss, const char *suite,
		   unsigned long *dropped, FILE *err)
{
	char done[64][64], path[4096];
	size_t i, nr_done = 0, k;
	int ret = 0;

	*dropped = 0;
	for (i = 0; !ret && i < ss->nr; i++) {
		const char *name = ss->v[i].scenario;
		struct model_options mopt = { 0 };
		struct stmt_sample *model = NULL;
		struct backend *mb = NULL;
		struct scenario *s = NULL;
		char *text;
		size_t len;

		for (k = 0; k < nr_done && strcmp(done[k], name); k++)
			;
		if (k < nr_done)
			continue;
		if (nr_done == 64) {
			fprintf(err, "calibrate: more than 64 scenarios in the"
				" samples\n");
			return -EINVAL;
		}
		snprintf(done[nr_done++], sizeof(done[0]), "%s", name);
		snprintf(path, sizeof(path), "%s/%s", suite, name);
		text = scenario_read_file(path, &len, err);
		if (text)
			s = scenario_parse_text(path, text, len,
						SCN_DEFAULT_PAGE_SIZE, err);
		free(text);
		if (!s)
			return -EINVAL;
		ret = -ENOMEM;
		model = calloc((size_t)s->nr_stmts + 1, sizeof(*model));
		mb = model_backend_create(&mopt);
		if (model && mb) {
			mb->want_stats = 1;
			ret = run_into(s, mb, 1, model, err);
			if (ret == -EOPNOTSUPP || ret == -EINVAL) {
				fprintf(err, "calibrate: %s: the model's run"
					" failed\n", path);
				ret = -EINVAL;
			}
		}
		if (!ret) {
			recount_one(ss, name, s, model, dropped);
			/* The samples moved: look again from the first. */
			i = (size_t)-1;
		}
		if (mb)
			mb->ops->destroy(mb);
		free(model);
		scenario_free(s);
	}
	return ret;
}

/*
 * The scenario layer reports on a stream, a line for each thing wrong
 * (FILE:LINE: ...); calibrate/ reports in the caller's buffer, as lib/,
 * backend/ and bench/ do: a stream that collects the lines for it.
 */
struct why_stream {
	FILE *f;
	char *text;
	size_t len;
};

static int why_stream_open(struct why_stream *ws)
{
	ws->text = NULL;
	ws->len = 0;
	ws->f = open_memstream(&ws->text, &ws->len);
	return ws->f ? 0 : -ENOMEM;
}

/* What @ws collected, into @why without its last newline; @ret back. */
static int why_stream_close(struct why_stream *ws, int ret, char *why,
			    size_t whylen)
{
	size_t n;

	fclose(ws->f);
	if (whylen) {
		snprintf(why, whylen, "%s", ws->text ? ws->text : "");
		n = strlen(why);
		if (n && why[n - 1] == '\n')
			why[n - 1] = '\0';
	}
	free(ws->text);
	return ret;
}

int calib_measure(const char *path, int reps, bool insns,
		  struct calib_samples *ss, struct calib_measure_stats *st,
		  char *why, size_t whylen)
{
	struct why_stream ws;
	int ret = why_stream_open(&ws);

	return ret ? ret : why_stream_close(&ws, measure(path, reps, insns, ss,
							 st, ws.f), why,
					    whylen);
}

int calib_recount(struct calib_samples *ss, const char *suite,
		  unsigned long *dropped, char *why, size_t whylen)
{
	struct why_stream ws;
	int ret = why_stream_open(&ws);

	return ret ? ret : why_stream_close(&ws, recount(ss, suite, dropped,
							 ws.f), why, whylen);
}
