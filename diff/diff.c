// SPDX-License-Identifier: GPL-2.0-only
/*
 * diff/ - the engine of `ptebatch diff`: a scenario run on the model and
 * on a kernel (this machine's, or a guest's), the two records compared.
 *
 * diff.c: one scenario compared (diff_one()), and every file of `diff
 * FILE...` in turn; random.c: `diff --random N`.
 *
 * The model runs here, in this process; the kernel side is `ptebatch run
 * --backend kernel` in a child process: the kernel backend forks real
 * processes, writes THP sysfs and installs signal handlers to restore
 * it, and a crash there should cost one scenario, not the whole
 * comparison.
 *
 * PTEBATCH_DIFF_KERNEL, if set, names the program run instead of this one
 * for the kernel side (with the same arguments): tests use a stand-in to
 * check the comparison itself on machines without root.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend/backend.h"
#include "backend/host.h"
#include "diff/diff.h"
#include "scenario/compare.h"
#include "scenario/record.h"
#include "scenario/run.h"
#include "scenario/scenario.h"
#include "vm/vm.h"

const char *const diff_words[] = {
	[DIFF_MATCH] = "MATCH",
	[DIFF_MISMATCH] = "MISMATCH",
	[DIFF_SKIP] = "SKIP",
	[DIFF_ERROR] = "ERROR",
	[DIFF_VARIES] = "VARIES",
};

/*
 * --counters: how many kernel runs at most, while a counter differs.
 * The kernel's counters are the whole machine's; other work only adds
 * to them, so the least of a few runs is the statement's own.
 */
#define DIFF_KSTAT_RUNS	5

void text_free(struct text *t)
{
	free(t->buf);
	t->buf = NULL;
	t->len = 0;
}

/* Read @fd to its end into @t.  Returns 0 or -errno. */
static int text_read_fd(struct text *t, int fd)
{
	size_t cap = t->len + 1;

	for (;;) {
		ssize_t n;

		if (t->len + 4096 >= cap || !t->buf) {
			char *bigger;

			cap = cap < 65536 ? 65536 : cap * 2;
			bigger = realloc(t->buf, cap);
			if (!bigger)
				return -ENOMEM;
			t->buf = bigger;
		}
		n = read(fd, t->buf + t->len, cap - t->len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		t->len += n;
	}
	t->buf[t->len] = '\0';
	return 0;
}

/* The first line of @text (or "" ), without its newline, at most 400 bytes. */
static const char *first_line(char *buf, size_t size, const char *text)
{
	size_t n = text ? strcspn(text, "\n") : 0;

	if (n >= size)
		n = size - 1;
	memcpy(buf, text ? text : "", n);
	buf[n] = '\0';
	return buf;
}

/*
 * The kernel side runs in a child process; it must not outlive diff.  A
 * signal that would end diff (INT, TERM, HUP, QUIT) is passed on to it,
 * diff waits for it to put THP sysfs back and then ends by the same
 * signal; if diff is killed outright (KILL), the child's parent-death
 * signal ends it.
 */
static const int passed_on[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
#define NR_PASSED_ON ((int)(sizeof(passed_on) / sizeof(passed_on[0])))
static volatile pid_t kernel_child;
static volatile sig_atomic_t pending_signal;

static void pass_on_signal(int sig)
{
	pid_t pid = kernel_child;

	pending_signal = sig;
	if (pid > 0)
		kill(pid, sig);
}

static void pass_on_signals(struct sigaction old[NR_PASSED_ON])
{
	struct sigaction sa;
	int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = pass_on_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < NR_PASSED_ON; i++)
		sigaction(passed_on[i], &sa, &old[i]);
}

/* Give the signals back; if one came, end by it as it would have. */
static void end_passing_on(const struct sigaction old[NR_PASSED_ON])
{
	int i, sig = pending_signal;

	kernel_child = 0;
	for (i = 0; i < NR_PASSED_ON; i++)
		sigaction(passed_on[i], &old[i], NULL);
	if (!sig)
		return;
	fflush(stdout);
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * The child's side of the fork: die with the parent (checking it is still
 * the one that forked us, in case it died before the prctl), the scenario
 * text on stdin, stdout into @out_fd and stderr into @err_fd.
 */
static void __attribute__((noreturn))
exec_kernel_side(char *const argv[], pid_t parent, int in_fd, int out_fd,
		 int err_fd)
{
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) || getppid() != parent)
		_exit(127);
	if (dup2(in_fd, STDIN_FILENO) < 0 || dup2(out_fd, STDOUT_FILENO) < 0 ||
	    dup2(err_fd, STDERR_FILENO) < 0)
		_exit(127);
	execv(argv[0], argv);
	fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/*
 * Run argv[0] with @argv, @in as its stdin, stdout into @out, stderr into
 * @err.  Returns the wait status, or -1 with errno set if it could not be
 * started.  Ends diff if a signal came meanwhile (pass_on_signal()).
 */
static int run_captured(char *const argv[], int in, struct text *out,
			struct text *err)
{
	struct sigaction old[NR_PASSED_ON];
	int fds[2], status, ret, saved;
	FILE *errf = tmpfile();
	pid_t pid, parent = getpid();

	if (!errf)
		return -1;
	if (pipe2(fds, O_CLOEXEC)) {
		saved = errno;
		fclose(errf);
		errno = saved;
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	pending_signal = 0;
	pass_on_signals(old);
	pid = fork();
	if (pid < 0) {
		saved = errno;
		close(fds[0]);
		close(fds[1]);
		fclose(errf);
		end_passing_on(old);
		errno = saved;
		return -1;
	}
	if (!pid)
		exec_kernel_side(argv, parent, in, fds[1], fileno(errf));
	kernel_child = pid;
	/* A signal before the line above has not been passed on yet. */
	if (pending_signal)
		kill(pid, pending_signal);
	close(fds[1]);
	ret = text_read_fd(out, fds[0]);
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			status = -1;
			break;
		}
	}
	end_passing_on(old);
	if (!ret && lseek(fileno(errf), 0, SEEK_SET) == 0)
		ret = text_read_fd(err, fileno(errf));
	fclose(errf);
	if (ret) {
		errno = -ret;
		return -1;
	}
	return status;
}

/* The model's record of @s, into @out; problems into @why. */
static enum diff_verdict diff_model_run(const struct scenario *s,
					const struct diff_config *c,
					struct text *out, char *why,
					size_t whylen)
{
	struct model_options mopt = { 0 };
	struct text err = { 0 };
	char line[400];
	FILE *outf, *errf;
	struct backend *b;
	int ret;

	mopt.variant = *c->variant;
	mopt.variant_name = c->variant_name;
	mopt.read_faults_allocate = c->read_faults_allocate;
	outf = open_memstream(&out->buf, &out->len);
	errf = open_memstream(&err.buf, &err.len);
	b = model_backend_create(&mopt);
	if (!outf || !errf || !b) {
		if (outf)
			fclose(outf);
		if (errf)
			fclose(errf);
		if (b)
			b->ops->destroy(b);
		text_free(&err);
		snprintf(why, whylen, "model: out of memory");
		return DIFF_ERROR;
	}
	b->want_kstats = c->counters;
	b->want_stats = c->functions;
	ret = scenario_run(s, b, outf, errf, 1);
	b->ops->destroy(b);
	fclose(outf);
	fclose(errf);
	if (ret != SCN_RUN_OK)
		snprintf(why, whylen, "model run failed (status %d): %s", ret,
			 first_line(line, sizeof(line), err.buf));
	text_free(&err);
	return ret == SCN_RUN_OK ? DIFF_MATCH : DIFF_ERROR;
}

/* @text in an anonymous file, read from its start: the kernel side's stdin. */
static int text_memfd(const struct diff_file *f)
{
	int fd = memfd_create("ptebatch-scenario", MFD_CLOEXEC);
	size_t done = 0;

	if (fd < 0)
		return -1;
	while (done < f->len) {
		ssize_t n = write(fd, f->text + done, f->len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int saved = n < 0 ? errno : EIO;

			close(fd);
			errno = saved;
			return -1;
		}
		done += (size_t)n;
	}
	if (lseek(fd, 0, SEEK_SET)) {
		int saved = errno;

		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

/*
 * Why the kernel side failed, from the first line of its stderr: a
 * "FILE:LINE: why" of its own is the why, with the line it came from.
 */
static void kernel_failure(char *why, size_t whylen, const char *path,
			   int status, const char *err)
{
	size_t plen = strlen(path);
	char line[400];
	const char *c;

	first_line(line, sizeof(line), err);
	c = line;
	if (!strncmp(c, path, plen) && c[plen] == ':') {
		const char *at = c + plen + 1;
		long n = strtol(at, (char **)&c, 10);

		if (c > at && !strncmp(c, ": ", 2))
			snprintf(why, whylen, "%s (line %ld)", c + 2, n);
		else
			snprintf(why, whylen, "%s", at[0] == ' ' ? at + 1 : at);
		return;
	}
	snprintf(why, whylen, "kernel run failed (exit status %d): %s",
		 status, line[0] ? line : "(it said nothing)");
}

/*
 * The kernel's record of @f, from `SELF run --backend kernel --name FILE
 * /dev/stdin` with the text on stdin.
 */
static enum diff_verdict diff_kernel_run(const struct diff_config *c,
					 const struct diff_file *f,
					 bool kstats, struct text *out,
					 char *why, size_t whylen)
{
	const char *self = c->self;
	static const char skip_mark[] = ": skipped on backend kernel: ";
	struct text err = { 0 };
	enum diff_verdict v = DIFF_ERROR;
	int status, in = text_memfd(f);
	char line[400];
	const char *mark;
	char *argv[16];
	int argc = 0;

	argv[argc++] = (char *)self;
	argv[argc++] = "run";
	argv[argc++] = "--backend";
	argv[argc++] = "kernel";
	argv[argc++] = "--no-check";
	if (kstats)
		argv[argc++] = "--kstats";
	if (c->functions) {
		argv[argc++] = "--count";
		argv[argc++] = "default";
	}
	argv[argc++] = "--name";
	argv[argc++] = (char *)f->path;
	argv[argc++] = "--";
	argv[argc++] = "/dev/stdin";
	argv[argc] = NULL;
	if (c->vm) {
		char cwd[PATH_MAX];
		struct vm_result r;

		if (in >= 0)
			close(in);
		in = -1;
		if (!getcwd(cwd, sizeof(cwd)))
			strcpy(cwd, "/");
		if (vm_exec(c->vm, argv, cwd, f->text, f->len, f->path, &r, why,
			    whylen))
			return DIFF_ERROR;
		status = r.status;
		out->buf = r.out;
		out->len = r.out_len;
		err.buf = r.err;
		err.len = r.err_len;
	} else {
		status = in < 0 ? -1 : run_captured(argv, in, out, &err);
	}

	if (in >= 0)
		close(in);
	if (status == -1) {
		snprintf(why, whylen, "cannot run %.900s: %s", self,
			 strerror(errno));
	} else if (WIFSIGNALED(status)) {
		first_line(line, sizeof(line), err.buf);
		snprintf(why, whylen, "kernel run killed by signal %d (%s)%s%s",
			 WTERMSIG(status), strsignal(WTERMSIG(status)),
			 line[0] ? ": " : "", line);
	} else if (WEXITSTATUS(status) == SCN_RUN_OK) {
		v = DIFF_MATCH;
	} else if (WEXITSTATUS(status) == SCN_RUN_SKIPPED &&
		   (mark = err.buf ? strstr(err.buf, skip_mark) : NULL)) {
		v = DIFF_SKIP;
		snprintf(why, whylen, "%s", first_line(line, sizeof(line),
				mark + sizeof(skip_mark) - 1));
	} else if (WEXITSTATUS(status) == DIFF_KERNEL_EXIT_USAGE && err.buf &&
		   strstr(err.buf, "unknown backend 'kernel'")) {
		v = DIFF_SKIP;
		snprintf(why, whylen, "this ptebatch has no kernel backend");
	} else {
		kernel_failure(why, whylen, f->path, WEXITSTATUS(status),
			       err.buf);
	}
	text_free(&err);
	return v;
}

/*
 * --functions: which model counters stand for which kernel function.
 * The model counts an event where the kernel calls the function that
 * does it: a fault's kind, a reuse, a copy, a TLB flush, a contpte
 * repaint, a PTE batch, a PMD split.
 *
 * The guest's profiler counts every call in the statement's window, the
 * backend's own work included (a forked child's COW faults on its stack,
 * a VMA split's call that splits nothing), so most pairs are compared
 * only on statements where the model counted the event.  @both_ways
 * pairs are compared on every statement but a fork and a split, a
 * missing counter as 0: elsewhere only the scenario's memory calls them
 * (GUP-fast pins only what a statement pins; the backend's own pages are
 * faulted in before the window), and a kernel that converts or grabs
 * where the model does not is the disagreement that matters most.
 */
static const struct diff_fn_pair {
	const char *func;
	const char *stats[3];
	bool both_ways;
} diff_fn_pairs[DIFF_FN_PAIRS] = {
	{ "do_anonymous_page", { "fault_anon", "fault_zero" }, false },
	{ "do_wp_page", { "fault_wp_reuse", "fault_wp_copy" }, false },
	{ "wp_page_reuse", { "fault_wp_reuse" }, false },
	{ "wp_page_copy", { "fault_wp_copy" }, false },
	{ "flush_tlb_mm_range", { "tlb_flush" }, false },
	{ "contpte_convert", { "contpte_convert" }, true },
	{ "folio_pte_batch_flags", { "pte_batch" }, false },
	{ "split_huge_pmd_locked", { "pmd_split" }, false },
	{ "try_grab_folio_fast", { "gup_fast_grab" }, true },
	/*
	 * A reuse makes each PTE writable with ptep_set_access_flags() (x86;
	 * arm64's out-of-line part is __ptep_set_access_flags_anysz()), once
	 * per PTE with the seeds' set_access_flags_ptes(); other callers
	 * (spurious faults, a PMD's reuse on arm64) are rare in a scenario.
	 */
	{ "ptep_set_access_flags", { "wp_reuse_ptes" }, false },
	{ "__ptep_set_access_flags_anysz", { "wp_reuse_ptes" }, false },
};

static bool rec_value(const struct rec_stat *v, int nr, const char *name,
		      uint64_t *out)
{
	int i;

	for (i = 0; i < nr; i++) {
		if (!strcmp(v[i].name, name)) {
			*out = v[i].value;
			return true;
		}
	}
	return false;
}

/*
 * Whether statement @number of @s carries the backend's own contpte work,
 * so that a both-ways pair is compared one way there.  A fork's child
 * writes its stack and heap in the window, and where the scenario's mTHP
 * policy gave those pages large folios, a COW unfolds their block.  A
 * split is an mprotect round trip on one page (backend/kernel.c
 * do_split()), which unfolds and folds that page's block again.
 */
static bool backend_work_in_window(const struct scenario *s, int number)
{
	enum stmt_kind kind;

	if (number < 1 || number > s->nr_stmts)
		return false;
	kind = s->stmts[number - 1].kind;
	return kind == ST_FORK || kind == ST_SPLIT;
}

/*
 * Tally @m's counters against @k's function counts, statement by
 * statement of @s; each disagreement a line of @detail (NULL: none),
 * "#   FUNCTION: statement N (TEXT): model M, kernel K".
 */
static void diff_functions_tally(struct diff_tally *t, const char *path,
				 const struct scenario *s,
				 const struct record *m, const struct record *k,
				 FILE *detail)
{
	int i, p, j;

	for (i = 0; i < m->nr_stmts && i < k->nr_stmts; i++) {
		const struct rec_stmt *ms = &m->stmts[i], *ks = &k->stmts[i];
		bool one_way = backend_work_in_window(s, ms->number);

		for (p = 0; p < DIFF_FN_PAIRS; p++) {
			struct diff_agreement *pt = &t->pair[p];
			const struct diff_fn_pair *dp = &diff_fn_pairs[p];
			uint64_t kv, mv = 0, v;
			bool have = false;

			if (!rec_value(ks->fcounts, ks->nr_fcounts, dp->func,
				       &kv))
				continue;	/* not traced in this kernel */
			for (j = 0; j < 3 && dp->stats[j]; j++)
				if (rec_value(ms->stats, ms->nr_stats,
					      dp->stats[j], &v)) {
					mv += v;
					have = true;
				}
			if (!have && (!dp->both_ways || one_way))
				continue;
			pt->total++;
			if (mv == kv) {
				pt->agree++;
				continue;
			}
			if (detail)
				fprintf(detail, "#   %s: statement %d (%.300s):"
					" model %" PRIu64 ", kernel %" PRIu64
					"\n", dp->func, ms->number, ms->text,
					mv, kv);
			if (!pt->first[0])
				snprintf(pt->first, sizeof(pt->first),
					 "%.200s statement %d (%.80s): model %"
					 PRIu64 ", kernel %" PRIu64, path,
					 ms->number, ms->text, mv, kv);
		}
	}
}

/*
 * One row of a table: @agree of @total statements, and the first other.
 * @with: the model's counters, where their names are not the kernel's.
 */
static void agreement_row(FILE *f, const char *name, const char *with,
			  const struct diff_agreement *a)
{
	char what[128];

	if (with)
		snprintf(what, sizeof(what), "%-22s ~ %-28s", name, with);
	else
		snprintf(what, sizeof(what), "%-53s", name);
	if (!a->total) {
		fprintf(f, "#   %s not counted (this kernel cannot trace it,"
			" or no statement had it)\n", what);
		return;
	}
	fprintf(f, "#   %s %lu of %lu statements agree (%.1f%%)%s%s\n",
		what, a->agree, a->total,
		100.0 * (double)a->agree / (double)a->total,
		a->first[0] ? "; first: " : "", a->first);
}

void diff_tally_report(FILE *f, const struct diff_tally *t, bool functions,
		       bool counters)
{
	int p, j;

	if (functions) {
		fprintf(f, "# functions: the guest kernel's calls against the"
			" model's counters, per statement where the model"
			" counted (*: every statement but a fork or a split,"
			" the model's 0 too)\n");
		for (p = 0; p < DIFF_FN_PAIRS; p++) {
			char stats[128] = "";

			for (j = 0; j < 3 && diff_fn_pairs[p].stats[j]; j++)
				snprintf(stats + strlen(stats),
					 sizeof(stats) - strlen(stats), "%s%s",
					 j ? "+" : "",
					 diff_fn_pairs[p].stats[j]);
			if (diff_fn_pairs[p].both_ways)
				strcat(stats, " *");
			agreement_row(f, diff_fn_pairs[p].func, stats,
				      &t->pair[p]);
		}
	}
	if (counters) {
		fprintf(f, "# counters: the kernel's accounting against the"
			" model's, per statement where either is not 0 (the"
			" least of the kernel's runs; pgfault a lower bound)\n");
		for (p = 0; p < t->nr_kstats; p++)
			agreement_row(f, t->kstat[p].name, NULL,
				      &t->kstat[p].a);
		if (!t->nr_kstats)
			fprintf(f, "#   no statement counted anything\n");
	}
}

/* Parse both records and compare them; the verdict and its one line. */
static enum diff_verdict diff_records(const struct text *model,
				      const struct text *kernel, char *why,
				      size_t whylen)
{
	struct record *m = NULL, *k = NULL;
	struct text explain = { 0 };
	enum diff_verdict v = DIFF_ERROR;
	char line[1024];
	FILE *f = open_memstream(&explain.buf, &explain.len);

	if (!f) {
		snprintf(why, whylen, "out of memory");
		return DIFF_ERROR;
	}
	/* Both with the page size the scenario was parsed with, so that
	 * the header's arch names need not agree. */
	m = record_parse("model", model->buf ? model->buf : "", model->len,
			 SCN_DEFAULT_PAGE_SIZE, f);
	if (m)
		k = record_parse("kernel", kernel->buf ? kernel->buf : "",
				 kernel->len, SCN_DEFAULT_PAGE_SIZE, f);
	if (m && k) {
		if (compare_records(m, k, CMP_SAME_FRAMES | CMP_IGNORE_HEADER,
				    f))
			v = DIFF_MISMATCH;
		else
			v = DIFF_MATCH;
	}
	fclose(f);
	if (v == DIFF_ERROR)
		snprintf(why, whylen, "unreadable record: %.900s",
			 first_line(line, sizeof(line), explain.buf));
	else if (v == DIFF_MISMATCH)
		snprintf(why, whylen, "%s",
			 first_line(line, sizeof(line), explain.buf));
	text_free(&explain);
	record_free(m);
	record_free(k);
	return v;
}

/* @text's record, or NULL with the reason in @why. */
static struct record *diff_parse(const char *name, const struct text *text,
				 char *why, size_t whylen)
{
	struct text explain = { 0 };
	struct record *r;
	char line[1024];
	FILE *f = open_memstream(&explain.buf, &explain.len);

	if (!f) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	r = record_parse(name, text->buf ? text->buf : "", text->len,
			 SCN_DEFAULT_PAGE_SIZE, f);
	fclose(f);
	if (!r)
		snprintf(why, whylen, "unreadable record: %.900s",
			 first_line(line, sizeof(line), explain.buf));
	text_free(&explain);
	return r;
}

/*
 * A pause before kernel run @nr (1, 2, ...): other work comes in bursts,
 * so the runs are 0.1 s, 0.2 s, 0.4 s, ... apart.
 */
static void pause_before_run(int nr)
{
	struct timespec pause = { 0, 100000000L << (nr - 1) };

	while (pause.tv_nsec >= 1000000000L) {
		pause.tv_sec++;
		pause.tv_nsec -= 1000000000L;
	}
	nanosleep(&pause, NULL);
}

struct kstats_tally {
	struct diff_tally *t;
	const char *path;
};

/* One counter of one statement, where the model or the kernel counted. */
static void kstat_tally_one(void *arg, const struct rec_stmt *m,
			    const char *name, uint64_t mv, uint64_t kv)
{
	struct kstats_tally *kt = arg;
	struct diff_tally *t = kt->t;
	struct diff_agreement *a = NULL;
	int i;

	if (!mv && !kv)
		return;
	for (i = 0; i < t->nr_kstats && !a; i++)
		if (!strcmp(t->kstat[i].name, name))
			a = &t->kstat[i].a;
	if (!a) {
		if (t->nr_kstats == DIFF_KSTAT_NAMES)
			return;		/* more names than the table holds */
		snprintf(t->kstat[t->nr_kstats].name,
			 sizeof(t->kstat[0].name), "%s", name);
		a = &t->kstat[t->nr_kstats++].a;
	}
	a->total++;
	if (kstat_agrees(name, mv, kv))
		a->agree++;
	else if (!a->first[0])
		snprintf(a->first, sizeof(a->first), "%.200s statement %d"
			 " (%.80s): model %" PRIu64 ", kernel %" PRIu64,
			 kt->path, m->number, m->text, mv, kv);
}

/*
 * --counters, once the records matched: the kernel accounting counters
 * of @model's record against @kernel's and, while some differ, those of
 * up to DIFF_KSTAT_RUNS - 1 more kernel runs (the least of each counter
 * is taken: compare_kstats()).  Each difference is a line of @detail,
 * "MISMATCH FILE: statement N (TEXT): COUNTER model M kernel K".
 */
static enum diff_verdict diff_counters(const struct diff_config *c,
				       const struct diff_file *f,
				       const struct text *model,
				       const struct text *kernel,
				       struct text *detail, char *why,
				       size_t whylen)
{
	struct record *m, *k[DIFF_KSTAT_RUNS] = { NULL };
	enum diff_verdict v = DIFF_ERROR;
	char prefix[1100];
	FILE *out;
	int nr = 0, differ, i;

	m = diff_parse("model", model, why, whylen);
	if (m)
		k[nr] = diff_parse("kernel", kernel, why, whylen);
	if (!m || !k[nr++])
		goto out;
	snprintf(prefix, sizeof(prefix), "MISMATCH %s: ", f->path);
	while ((differ = compare_kstats(m, (const struct record *const *)k,
					nr, prefix, NULL)) &&
	       nr < DIFF_KSTAT_RUNS) {
		struct text again = { 0 };
		enum diff_verdict rv;

		pause_before_run(nr);
		rv = diff_kernel_run(c, f, true, &again, why, whylen);
		if (rv == DIFF_MATCH)
			k[nr] = diff_parse("kernel", &again, why, whylen);
		text_free(&again);
		if (rv != DIFF_MATCH || !k[nr]) {
			v = rv == DIFF_MATCH ? DIFF_ERROR : rv;
			goto out;
		}
		nr++;
	}
	if (c->tally) {
		struct kstats_tally kt = { c->tally, f->path };

		kstats_for_each(m, (const struct record *const *)k, nr,
				kstat_tally_one, &kt);
	}
	if (!differ) {
		v = DIFF_MATCH;
		goto out;
	}
	out = open_memstream(&detail->buf, &detail->len);
	if (!out) {
		snprintf(why, whylen, "out of memory");
		goto out;
	}
	compare_kstats(m, (const struct record *const *)k, nr, prefix, out);
	fclose(out);
	snprintf(why, whylen, "%d counter%s differ%s (least of %d kernel"
		 " runs)", differ, differ == 1 ? "" : "s",
		 differ == 1 ? "s" : "", nr);
	v = DIFF_MISMATCH;
out:
	record_free(m);
	for (i = 0; i < DIFF_KSTAT_RUNS; i++)
		record_free(k[i]);
	return v;
}

/* Statement @i of @r as "statement N (TEXT)", or "the end of the record". */
static void stmt_name(char *buf, size_t size, const struct record *r, int i)
{
	if (i >= 0 && i < r->nr_stmts)
		snprintf(buf, size, "statement %d (%.300s)", r->stmts[i].number,
			 r->stmts[i].text);
	else
		snprintf(buf, size, "the end of the record");
}

/*
 * Statement @i's faults in every record of @k, after the model's @m, as
 * ": faults model M, kernel a, b, c"; the child's too if a fork.  False if
 * a record has no fault count there (an error, a setting, its end).
 */
static bool faults_line(char *buf, size_t size, const struct record *m,
			struct record *const *k, int nr, int i)
{
	const struct rec_stmt *st;
	bool child;
	size_t n;
	int r;

	if (i < 0 || i >= m->nr_stmts || m->stmts[i].result != REC_OK)
		return false;
	for (r = 0; r < nr; r++)
		if (i >= k[r]->nr_stmts || k[r]->stmts[i].result != REC_OK)
			return false;
	st = &m->stmts[i];
	child = st->child != NULL;
	n = (size_t)snprintf(buf, size, ": faults model %lu", st->faults);
	if (child && n < size)
		n += (size_t)snprintf(buf + n, size - n, " (%s %lu)", st->child,
				      st->child_faults);
	for (r = 0; r < nr && n < size; r++) {
		st = &k[r]->stmts[i];
		n += (size_t)snprintf(buf + n, size - n, "%s %lu",
				      r ? "," : ", kernel", st->faults);
		if (child && st->child && n < size)
			n += (size_t)snprintf(buf + n, size - n, " (%s %lu)",
					      st->child, st->child_faults);
	}
	return true;
}

/*
 * Is the steady difference at statement @i one this machine's kernel
 * makes on its own (host.h: it splits a PMD-mapped THP that is exclusive
 * again, where Linux reuses it whole, so it faults more)?  Then @why
 * says so before the difference.
 */
static bool host_split_explains(const struct diff_config *c,
				const struct record *m, const struct record *k,
				int i, char *why, size_t whylen)
{
	char was[1024];

	if (!c->host_splits_pmd_reuse || i < 0 || i >= m->nr_stmts ||
	    i >= k->nr_stmts || m->stmts[i].result != REC_OK ||
	    k->stmts[i].result != REC_OK ||
	    k->stmts[i].faults <= m->stmts[i].faults)
		return false;
	snprintf(was, sizeof(was), "%s", why);
	snprintf(why, whylen, "this kernel splits a PMD-mapped THP that"
		 " Linux reuses whole (see the first line): %s", was);
	return true;
}

/*
 * The records of @f differ: is it the model, or does the kernel differ
 * from itself?  Up to @c->vary_runs kernel runs in all (the first is
 * @kernel).  The first statement where some run differs from the model
 * is the difference; if every run is the same as the first up to and
 * including it, the difference is steady: MISMATCH, @why unchanged.  If
 * not, something outside the scenario changed the kernel's answer
 * (host.h): VARIES, with that statement's faults in every run.
 */
static enum diff_verdict diff_vary(const struct diff_config *c,
				   const struct diff_file *f,
				   const struct text *model,
				   const struct text *kernel, char *why,
				   size_t whylen)
{
	struct record *m, *k[DIFF_VARY_RUNS] = { NULL };
	enum diff_verdict v = DIFF_MISMATCH;
	int nr = 0, first = INT_MAX, vary = INT_MAX, at, i;
	char name[400], counts[600], again[1024];

	m = diff_parse("model", model, again, sizeof(again));
	if (m)
		k[nr] = diff_parse("kernel", kernel, again, sizeof(again));
	if (!m || !k[nr++])
		goto out;
	if (compare_records_where(m, k[0], CMP_SAME_FRAMES | CMP_IGNORE_HEADER,
				  NULL, &first) && first < 0)
		goto out;	/* headers: nothing a run changes */
	while (nr < c->vary_runs && nr < DIFF_VARY_RUNS) {
		struct text more = { 0 };
		enum diff_verdict rv;

		pause_before_run(nr);
		rv = diff_kernel_run(c, f, false, &more, again,
				     sizeof(again));
		if (rv == DIFF_MATCH)
			k[nr] = diff_parse("kernel", &more, again,
					   sizeof(again));
		text_free(&more);
		if (!k[nr])
			break;	/* the first run's verdict stands */
		if (compare_records_where(m, k[nr], CMP_SAME_FRAMES |
					  CMP_IGNORE_HEADER, NULL, &at) &&
		    at >= 0 && at < first)
			first = at;
		nr++;
	}
	for (i = 1; i < nr; i++)
		if (compare_records_where(k[0], k[i], CMP_SAME_FRAMES |
					  CMP_IGNORE_HEADER, NULL, &at) &&
		    at < vary)
			vary = at;
	if (nr < 2)
		goto out;
	if (vary > first) {
		/* Steady: say so after the first difference. */
		size_t n = strlen(why);

		snprintf(why + n, whylen - n, " (the same in %d kernel runs)",
			 nr);
		if (host_split_explains(c, m, k[0], first, why, whylen))
			v = DIFF_SKIP;
		goto out;
	}
	v = DIFF_VARIES;
	stmt_name(name, sizeof(name), m, vary);
	if (!faults_line(counts, sizeof(counts), m, k, nr, vary))
		snprintf(counts, sizeof(counts), ": the kernel's record is not"
			 " the same from run to run");
	snprintf(why, whylen, "%s%s (%d kernel runs)", name, counts, nr);
out:
	record_free(m);
	for (i = 0; i < DIFF_VARY_RUNS; i++)
		record_free(k[i]);
	return v;
}

enum diff_verdict diff_one(const struct diff_config *c,
			   const struct diff_file *f, struct text *detail,
			   char *why, size_t whylen, struct text *keep_model,
			   struct text *keep_kernel)
{
	struct text model = { 0 }, kernel = { 0 }, err = { 0 };
	enum diff_verdict v;
	struct scenario *s;
	char line[400];
	FILE *errf = open_memstream(&err.buf, &err.len);

	if (!errf) {
		snprintf(why, whylen, "out of memory");
		return DIFF_ERROR;
	}
	s = scenario_parse_text(f->path, f->text, f->len, SCN_DEFAULT_PAGE_SIZE,
				errf);
	fclose(errf);
	if (!s) {
		snprintf(why, whylen, "%s", first_line(line, sizeof(line),
							err.buf));
		text_free(&err);
		return DIFF_ERROR;
	}
	text_free(&err);
	v = diff_model_run(s, c, &model, why, whylen);
	if (v == DIFF_MATCH)
		v = diff_kernel_run(c, f, c->counters, &kernel, why,
				    whylen);
	if (v == DIFF_MATCH)
		v = diff_records(&model, &kernel, why, whylen);
	if (v == DIFF_MISMATCH && c->vary_runs > 1)
		v = diff_vary(c, f, &model, &kernel, why, whylen);
	if (v == DIFF_MATCH && c->counters)
		v = diff_counters(c, f, &model, &kernel, detail, why,
				  whylen);
	if (v == DIFF_MATCH && c->functions && c->tally) {
		char w[256];
		struct record *m = diff_parse("model", &model, w, sizeof(w));
		struct record *k = m ? diff_parse("kernel", &kernel, w,
						  sizeof(w)) : NULL;
		/* A MATCH has no detail yet: the disagreements are it. */
		FILE *out = m && k && !detail->buf ?
			    open_memstream(&detail->buf, &detail->len) : NULL;

		if (m && k)
			diff_functions_tally(c->tally, f->path, s, m, k, out);
		if (out)
			fclose(out);
		record_free(m);
		record_free(k);
	}
	scenario_free(s);
	if (keep_model)
		*keep_model = model;
	else
		text_free(&model);
	if (keep_kernel)
		*keep_kernel = kernel;
	else
		text_free(&kernel);
	return v;
}

/* The guest's facts, from `ptebatch vm facts` run in it. */
static void diff_guest_setup(struct diff_config *c)
{
	char *argv[] = { (char *)c->self, "vm", "facts", NULL };
	char why[1024], *line;
	struct vm_result r;

	if (vm_exec(c->vm, argv, "/", NULL, 0, "vm facts", &r, why,
		    sizeof(why))) {
		printf("# this kernel (vm:%s): cannot tell (%s)\n",
		       vm_guest_kernel(c->vm)->name, why);
		return;
	}
	c->read_faults_allocate = r.out && !strncmp(r.out, "zero_page 0\n", 12);
	line = r.out ? strstr(r.out, "\nline ") : NULL;
	if (line) {
		line += 6;
		line[strcspn(line, "\n")] = '\0';
		printf("# vm:%s: %s\n", vm_guest_kernel(c->vm)->name, line);
	}
	fflush(stdout);
	vm_result_free(&r);
}

void diff_host_setup(struct diff_config *c)
{
	struct host_facts h;
	char line[1024];
	const char *stand_in = getenv("PTEBATCH_DIFF_KERNEL");

	c->read_faults_allocate = false;
	if (c->vm) {
		diff_guest_setup(c);
		return;
	}
	if (stand_in && *stand_in) {
		/* Not this machine's kernel: the model as mainline, the
		 * stand-in's one fact as its test says (host-varies.sh). */
		c->host_splits_pmd_reuse =
			getenv("PTEBATCH_DIFF_KERNEL_SPLITS_PMD") != NULL;
		return;
	}
	host_probe(&h);
	c->read_faults_allocate = h.zero_page == 0;
	c->host_splits_pmd_reuse = h.pmd_reuse == 0;
	host_facts_line(&h, line, sizeof(line));
	printf("# %s\n", line);
	fflush(stdout);
}

/* The program that runs the kernel side: this very binary, by default. */
int diff_kernel_side(char *self, size_t size)
{
	const char *stand_in = getenv("PTEBATCH_DIFF_KERNEL");
	ssize_t n;

	if (stand_in && *stand_in) {
		snprintf(self, size, "%s", stand_in);
		return 0;
	}
	n = readlink("/proc/self/exe", self, size - 1);
	if (n <= 0 || (size_t)n >= size - 1) {
		fprintf(stderr, "ptebatch: cannot find this program"
			" (/proc/self/exe): %s\n", strerror(errno));
		return SCN_RUN_FAILED;
	}
	self[n] = '\0';
	return 0;
}

int diff_files(const struct diff_files_options *o,
	       const struct pb_variant *variant, const char *variant_name)
{
	static struct diff_tally tally;
	struct diff_config c = { 0 };
	int counts[DIFF_VARIES + 1] = { 0 }, i, ret, thp_disable_saved = -1;
	char self[4096], why[1024];

	ret = diff_kernel_side(self, sizeof(self));
	if (ret)
		return ret;
	/*
	 * The kernel's counters are the machine's, and diff reads the
	 * kernel side's record while it runs: no large folio for diff's
	 * own buffer as it grows, or its faults would read as a
	 * statement's.  Inherited by the kernel side, whose scenario
	 * processes turn THP back on (backend/kernel_proc.c).
	 */
	if (o->counters) {
		thp_disable_saved = prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0);
		if (thp_disable_saved >= 0)
			prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	}
	c.self = self;
	c.vm = o->vm;
	c.variant = variant;
	c.variant_name = variant_name;
	c.counters = o->counters;
	c.vary_runs = DIFF_VARY_RUNS;
	c.functions = o->functions;
	c.tally = &tally;
	diff_host_setup(&c);
	for (i = 0; i < o->nr_files; i++) {
		struct text detail = { 0 };
		enum diff_verdict v;

		why[0] = '\0';
		v = diff_one(&c, &o->files[i], &detail, why, sizeof(why),
			     NULL, NULL);
		counts[v]++;
		if (v == DIFF_MATCH) {
			printf("MATCH %s\n", o->files[i].path);
			if (detail.len)	/* --functions: where they differ */
				fputs(detail.buf, stdout);
		} else if (detail.len)
			fputs(detail.buf, stdout);
		else
			printf("%s %s: %s\n", diff_words[v], o->files[i].path,
			       why);
		text_free(&detail);
		fflush(stdout);
	}
	printf("%d match, %d mismatch, %d skip", counts[DIFF_MATCH],
	       counts[DIFF_MISMATCH], counts[DIFF_SKIP]);
	if (counts[DIFF_VARIES])
		printf(", %d varies", counts[DIFF_VARIES]);
	if (counts[DIFF_ERROR])
		printf(", %d error", counts[DIFF_ERROR]);
	putchar('\n');
	if (o->functions || o->counters)
		diff_tally_report(stdout, &tally, o->functions, o->counters);
	ret = counts[DIFF_MISMATCH] || counts[DIFF_ERROR] ? 1 :
	      counts[DIFF_VARIES] ? DIFF_EXIT_VARIES : 0;
	if (thp_disable_saved >= 0)
		prctl(PR_SET_THP_DISABLE, thp_disable_saved, 0, 0, 0);
	return ret;
}
