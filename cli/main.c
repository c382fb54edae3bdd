/*
 * cli/ - the ptebatch command: argument parsing and exit statuses; the
 * work is done by scenario/ and backend/.
 *
 * Exit statuses: 0 success, 1 the run failed (the model ran out of
 * memory, a benchmark failed), 2 bad usage or a scenario that does not
 * parse, 3 an invariant check failed, 4 the backend cannot run the
 * scenario here (skipped, the reason on stderr).  Bad input is refused
 * before anything runs, with one line naming the flag, value or file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/backend.h"
#include "cli/cli.h"
#include "bench/bench.h"
#include "scenario/compare.h"
#include "scenario/record.h"
#include "scenario/run.h"
#include "scenario/scenario.h"


/* The smallest machine worth simulating: a few THPs and their tables. */
#define MIN_MEMORY (4 * pb_pmd_size() > (16UL << 20) ? 4 * pb_pmd_size() \
							  : (16UL << 20))

struct run_options {
	const char *backend;
	const char *variant;	/* the preset */
	bool variant_given;
	const char **sets;	/* --set KEY=VALUE, in command-line order */
	int nr_sets;
	bool stats;
	bool check;
	unsigned long memory;	/* 0: the model's default */
	const char *file;
};

static const char *const backends[] = { "model", "kernel", NULL };

static void list_words(FILE *f, const char *const *list)
{
	for (; *list; list++)
		fprintf(f, " %s", *list);
}

static void usage(FILE *f)
{
	const char *const *sw;

	fputs("usage: ptebatch run [--backend model|kernel] [--variant NAME]"
	      " [--set KEY=VALUE]...\n"
	      "                    [--stats] [--memory SIZE] [--no-check]"
	      " [--arch ARCH] FILE.scn\n"
	      "       ptebatch help\n"
	      "\n"
	      "run       run a scenario and print its record on stdout\n"
	      "  --backend NAME    what runs it: model (the default) or"
	      " kernel (this\n"
	      "                    machine's Linux, as root; no variant,"
	      " stats or check)\n"
	      "  --variant NAME    which batching is on: a preset ("
	      PB_DEFAULT_VARIANT " by default)\n"
	      "  --set KEY=VALUE   change one switch of the preset"
	      " (repeatable, in order)\n"
	      "  --stats           print the cost counters of every"
	      " statement\n"
	      "  --memory SIZE     simulated memory (default 4G): a multiple"
	      " of 2M, from 16M\n", f);
	fprintf(f, "                    to %luG and no more than this machine"
		" has; running out\n"
		"                    of it fails the run\n",
		PB_MAX_MEMORY >> 30);
	fputs("  --no-check        skip the invariant check after each"
	      " statement\n"
	      "  --arch ARCH       the model built for another architecture:"
	      " x86_64 (default),\n"
	      "                    x86-pae, arm64-4k, arm64-16k, arm64-64k"
	      " (also for diff,\n"
	      "                    bench and explore; each is its own build,"
	      " make ARCH=...)\n"
	      "\n"
	      "presets:", f);
	list_words(f, pb_variant_presets());
	fputs("\nswitches:\n", f);
	for (sw = pb_variant_switches(); *sw; sw++)
		fprintf(f, "  %-17s %s\n", *sw, pb_variant_switch_help(*sw));
	fputs("\n"
	      "exit status: 0 ok, 1 the run failed (or the model ran out of"
	      " memory),\n"
	      "             2 bad usage or scenario, 3 an invariant check"
	      " failed,\n"
	      "             4 skipped: the backend cannot run it here (the"
	      " reason on stderr)\n", f);
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

/* @bytes as "16M", "256G"; @buf must hold 24 characters. */
static const char *size_text(char *buf, unsigned long bytes)
{
	return record_size_text(buf, 24, bytes);
}

/*
 * --memory: the model's frames must be ones this machine can back, or
 * running out would be the host's OOM killer instead of the model's
 * ENOMEM.
 */
static int set_memory(struct run_options *opts, const char *arg)
{
	unsigned long bytes, block = pb_pmd_size(), host = bench_host_memory();
	char a[24];

	if (scenario_parse_number(arg, &bytes))
		return usage_error("--memory: bad size '%s' (e.g. 256M or 4G)",
				   arg);
	if (bytes < MIN_MEMORY)
		return usage_error("--memory: '%s' is below the minimum %s", arg,
				   size_text(a, MIN_MEMORY));
	if (bytes > PB_MAX_MEMORY)
		return usage_error("--memory: '%s' is above the model's maximum"
				   " %s", arg, size_text(a, PB_MAX_MEMORY));
	if (bytes % block)
		return usage_error("--memory: '%s' is not a multiple of %s (the"
				   " model's memory comes in PMD-size blocks)",
				   arg, size_text(a, block));
	if (host && bytes > host)
		return usage_error("--memory: '%s' is more than this machine's"
				   " %.1fG of memory", arg,
				   (double)host / (1UL << 30));
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
		opts->variant_given = true;
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
			return usage_error("more than one scenario file"
					   " ('%s' and '%s')", opts->file, arg);
		opts->file = arg;
	}
	if (!opts->file)
		return usage_error("no scenario file given");
	return 0;
}

/* The kernel runs no variant, counts nothing and has the memory it has. */
static int check_kernel_options(const struct run_options *opts)
{
	const char *flag = opts->variant_given ? "--variant" :
			   opts->nr_sets ? "--set" :
			   opts->stats ? "--stats" :
			   opts->memory ? "--memory" : NULL;

	if (strcmp(opts->backend, "kernel") || !flag)
		return 0;
	return usage_error("%s applies to the model only, not to --backend"
			   " kernel", flag);
}

/*
 * Running out of frames.  The model fails the statement the way Linux
 * fails an allocation it cannot satisfy (ENOMEM, or EFAULT from a pin
 * that got fewer pages than asked), and the record says so; but a Linux
 * machine would reclaim or OOM-kill instead, so from that statement on
 * the record is the model's, not Linux's.  The run goes on; each such
 * statement is named on stderr and the run fails (exit status 1).  The
 * backend's exec is wrapped to see the alloc_fail counter of every
 * statement.
 */
static struct {
	struct backend_ops ops;		/* the model's, with exec below */
	const struct backend_ops *model;
	const struct scenario *s;
	unsigned long memory;
	int nr;				/* statements that ran out */
} frame_watch;

static void exec_watching_frames(struct backend *b, const struct stmt *st,
				 struct stmt_result *res)
{
	char mem[24], ebuf[16];

	frame_watch.model->exec(b, st, res);
	if (!res->has_stats || !res->stats[PB_STAT_alloc_fail])
		return;
	frame_watch.nr++;
	fprintf(stderr, "%s:%d: %s: out of memory: every frame of the model's"
		" %s is in use (error %s); --memory gives it more\n",
		frame_watch.s->file, st->line, st->text,
		size_text(mem, frame_watch.memory),
		res->err ? record_errno_name(res->err, ebuf, sizeof(ebuf))
			 : "none");
}

static void watch_frames(struct backend *b, const struct scenario *s,
			 unsigned long memory)
{
	frame_watch.model = b->ops;
	frame_watch.ops = *b->ops;
	frame_watch.ops.exec = exec_watching_frames;
	frame_watch.s = s;
	frame_watch.memory = memory ? memory : PB_DEFAULT_MEMORY;
	frame_watch.nr = 0;
	b->ops = &frame_watch.ops;
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

	command = "run";
	/* No more --set flags than arguments. */
	opts.sets = calloc(argc + 1, sizeof(*opts.sets));
	if (!opts.sets) {
		fprintf(stderr, "ptebatch: out of memory\n");
		return SCN_RUN_FAILED;
	}
	ret = parse_run_args(&opts, argc, argv);
	if (!ret)
		ret = check_kernel_options(&opts);
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
	if (!strcmp(opts.backend, "kernel")) {
		struct kernel_options kopt = { 0 };

		b = kernel_backend_create(&kopt);
	} else {
		b = model_backend_create(&mopt);
		if (b)
			watch_frames(b, s, opts.memory);
	}
	ret = SCN_RUN_FAILED;
	if (!b) {
		fprintf(stderr, "ptebatch: out of memory\n");
		goto out;
	}
	b->want_stats = opts.stats;
	ret = scenario_run(s, b, stdout, stderr, opts.check);
	if (ret == SCN_RUN_OK && b->ops == &frame_watch.ops && frame_watch.nr)
		ret = SCN_RUN_FAILED;
	b->ops->destroy(b);
out:
	scenario_free(s);
	free(variant_name);
	free(opts.sets);
	return ret;
}

/* ---- ptebatch diff ---------------------------------------------------- */

/*
 * `ptebatch diff` runs each scenario twice, on the model (here, in this
 * process) and on the kernel (`ptebatch run --backend kernel` in a child
 * process: the kernel backend forks real processes, writes THP sysfs and
 * installs signal handlers to restore it, and a crash there should cost
 * one scenario, not the whole comparison), and compares the two records.
 *
 * PTEBATCH_DIFF_KERNEL, if set, names the program run instead of this one
 * for the kernel side (with the same arguments): tests use a stand-in to
 * check the comparison itself on machines without root.
 */
enum diff_verdict { DIFF_MATCH, DIFF_MISMATCH, DIFF_SKIP, DIFF_ERROR };

static const char *const diff_words[] = {
	[DIFF_MATCH] = "MATCH",
	[DIFF_MISMATCH] = "MISMATCH",
	[DIFF_SKIP] = "SKIP",
	[DIFF_ERROR] = "ERROR",
};

struct diff_options {
	struct run_options run;		/* variant and --set only */
	const char **files;
	int nr_files;
};

/* A growing text buffer; the functions below keep it NUL-terminated. */
struct text {
	char *buf;
	size_t len;
};

static void text_free(struct text *t)
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
 * Run argv[0] with @argv, stdout into @out, stderr into @err.  Returns the
 * wait status, or -1 with errno set if it could not be started.
 */
static int run_captured(char *const argv[], struct text *out, struct text *err)
{
	int fds[2], status, ret, saved;
	FILE *errf = tmpfile();
	pid_t pid;

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
	pid = fork();
	if (pid < 0) {
		saved = errno;
		close(fds[0]);
		close(fds[1]);
		fclose(errf);
		errno = saved;
		return -1;
	}
	if (!pid) {
		if (dup2(fds[1], STDOUT_FILENO) < 0 ||
		    dup2(fileno(errf), STDERR_FILENO) < 0)
			_exit(127);
		execv(argv[0], argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fds[1]);
	ret = text_read_fd(out, fds[0]);
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			status = -1;
			break;
		}
	}
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
					const struct pb_variant *variant,
					const char *variant_name,
					struct text *out, char *why,
					size_t whylen)
{
	struct model_options mopt = { 0 };
	struct text err = { 0 };
	char line[400];
	FILE *outf, *errf;
	struct backend *b;
	int ret;

	mopt.variant = *variant;
	mopt.variant_name = variant_name;
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

/* The kernel's record of @file, from `SELF run --backend kernel FILE`. */
static enum diff_verdict diff_kernel_run(const char *self, const char *file,
					 struct text *out, char *why,
					 size_t whylen)
{
	static const char skip_mark[] = ": skipped on backend kernel: ";
	char *argv[] = { (char *)self, "run", "--backend", "kernel",
			 "--no-check", "--", (char *)file, NULL };
	struct text err = { 0 };
	enum diff_verdict v = DIFF_ERROR;
	char line[400];
	const char *mark;
	int status;

	status = run_captured(argv, out, &err);
	if (status == -1) {
		snprintf(why, whylen, "cannot run %.900s: %s", self,
			 strerror(errno));
	} else if (WIFSIGNALED(status)) {
		snprintf(why, whylen, "kernel run killed by signal %d (%s): %s",
			 WTERMSIG(status), strsignal(WTERMSIG(status)),
			 first_line(line, sizeof(line), err.buf));
	} else if (WEXITSTATUS(status) == SCN_RUN_OK) {
		v = DIFF_MATCH;
	} else if (WEXITSTATUS(status) == SCN_RUN_SKIPPED &&
		   (mark = err.buf ? strstr(err.buf, skip_mark) : NULL)) {
		v = DIFF_SKIP;
		snprintf(why, whylen, "%s", first_line(line, sizeof(line),
				mark + sizeof(skip_mark) - 1));
	} else if (WEXITSTATUS(status) == EXIT_USAGE && err.buf &&
		   strstr(err.buf, "unknown backend 'kernel'")) {
		v = DIFF_SKIP;
		snprintf(why, whylen, "this ptebatch has no kernel backend");
	} else {
		snprintf(why, whylen, "kernel run failed (exit status %d): %s",
			 WEXITSTATUS(status),
			 first_line(line, sizeof(line), err.buf));
	}
	text_free(&err);
	return v;
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

static enum diff_verdict diff_one(const char *self, const char *file,
				  const struct pb_variant *variant,
				  const char *variant_name, char *why,
				  size_t whylen)
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
	s = scenario_parse_file(file, SCN_DEFAULT_PAGE_SIZE, errf);
	fclose(errf);
	if (!s) {
		snprintf(why, whylen, "%s", first_line(line, sizeof(line),
							err.buf));
		text_free(&err);
		return DIFF_ERROR;
	}
	text_free(&err);
	v = diff_model_run(s, variant, variant_name, &model, why, whylen);
	scenario_free(s);
	if (v == DIFF_MATCH)
		v = diff_kernel_run(self, file, &kernel, why, whylen);
	if (v == DIFF_MATCH)
		v = diff_records(&model, &kernel, why, whylen);
	text_free(&model);
	text_free(&kernel);
	return v;
}

static void diff_usage_text(FILE *f)
{
	fputs("usage: ptebatch diff [--variant NAME] [--set KEY=VALUE]..."
	      " FILE.scn...\n"
	      "\n"
	      "diff      run each scenario on the model and on this machine's"
	      " kernel\n"
	      "          (root: the run writes THP sysfs and puts it back),"
	      " compare the\n"
	      "          records (everything but header, stat lines and cost),"
	      " and print\n"
	      "          MATCH FILE, MISMATCH FILE: first difference,"
	      " SKIP FILE: reason\n"
	      "          or ERROR FILE: reason, then the counts\n"
	      "  --variant NAME    the model's preset (" PB_DEFAULT_VARIANT
	      " by default)\n"
	      "  --set KEY=VALUE   change one switch of the preset"
	      " (repeatable)\n"
	      "exit status: 0 every scenario matched or was skipped, 1 a"
	      " mismatch or error,\n"
	      "             2 bad usage or a scenario that does not parse"
	      " (then nothing runs)\n", f);
}

static int parse_diff_args(struct diff_options *opts, int argc, char **argv)
{
	bool options_done = false;
	int i, ret;

	for (i = 0; i < argc; i++) {
		const char *arg = argv[i], *eq = strchr(arg, '='), *value;
		size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
		bool is_variant = len == 9 && !strncmp(arg, "--variant", 9);
		bool is_set = len == 5 && !strncmp(arg, "--set", 5);

		if (!options_done && !strcmp(arg, "--")) {
			options_done = true;
			continue;
		}
		if (options_done || arg[0] != '-' || !arg[1]) {
			opts->files[opts->nr_files++] = arg;
			continue;
		}
		if (!is_variant && !is_set)
			return usage_error("unknown option '%s'", arg);
		if (eq)
			value = eq + 1;
		else if (i + 1 < argc)
			value = argv[++i];
		else
			return usage_error("%.*s needs a value", (int)len, arg);
		if (is_set) {
			ret = add_set(&opts->run, value);
			if (ret)
				return ret;
		} else if (!in_list(pb_variant_presets(), value)) {
			return unknown_in_list("--variant", "variant", value,
					       pb_variant_presets());
		} else {
			opts->run.variant = value;
		}
	}
	if (!opts->nr_files)
		return usage_error("no scenario file given");
	return 0;
}

/*
 * Every file must parse before any runs: a typo in the last one should
 * not cost a long comparison first, and bad input should never get as
 * far as the kernel side (which writes THP sysfs).  Each problem is one
 * "FILE:LINE: message" on stderr.
 */
static int diff_check_files(const struct diff_options *opts)
{
	int i, bad = 0;

	for (i = 0; i < opts->nr_files; i++) {
		struct scenario *s = scenario_parse_file(opts->files[i],
							 SCN_DEFAULT_PAGE_SIZE,
							 stderr);

		bad += !s;
		scenario_free(s);
	}
	return bad ? EXIT_USAGE : 0;
}

static int cmd_diff(int argc, char **argv)
{
	struct diff_options opts = {
		.run = { .variant = PB_DEFAULT_VARIANT },
	};
	int counts[4] = { 0 }, i, ret;
	struct pb_variant variant;
	char *variant_name = NULL;
	char self[4096], why[1024];
	ssize_t n;

	command = "diff";
	opts.run.sets = calloc(argc + 1, sizeof(*opts.run.sets));
	opts.files = calloc(argc + 1, sizeof(*opts.files));
	if (!opts.run.sets || !opts.files) {
		fprintf(stderr, "ptebatch: out of memory\n");
		ret = SCN_RUN_FAILED;
		goto out;
	}
	ret = parse_diff_args(&opts, argc, argv);
	if (!ret)
		ret = build_variant(&opts.run, &variant, &variant_name);
	if (!ret)
		ret = diff_check_files(&opts);
	if (ret)
		goto out;
	/* The kernel side runs this very binary. */
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0 || (size_t)n >= sizeof(self) - 1) {
		fprintf(stderr, "ptebatch: cannot find this program"
			" (/proc/self/exe): %s\n", strerror(errno));
		ret = SCN_RUN_FAILED;
		goto out;
	}
	self[n] = '\0';
	if (getenv("PTEBATCH_DIFF_KERNEL") && *getenv("PTEBATCH_DIFF_KERNEL"))
		snprintf(self, sizeof(self), "%s", getenv("PTEBATCH_DIFF_KERNEL"));
	for (i = 0; i < opts.nr_files; i++) {
		enum diff_verdict v;

		why[0] = '\0';
		v = diff_one(self, opts.files[i], &variant, variant_name, why,
			     sizeof(why));
		counts[v]++;
		if (v == DIFF_MATCH)
			printf("MATCH %s\n", opts.files[i]);
		else
			printf("%s %s: %s\n", diff_words[v], opts.files[i], why);
		fflush(stdout);
	}
	printf("%d match, %d mismatch, %d skip", counts[DIFF_MATCH],
	       counts[DIFF_MISMATCH], counts[DIFF_SKIP]);
	if (counts[DIFF_ERROR])
		printf(", %d error", counts[DIFF_ERROR]);
	putchar('\n');
	ret = counts[DIFF_MISMATCH] || counts[DIFF_ERROR] ? 1 : 0;
out:
	free(variant_name);
	free(opts.run.sets);
	free(opts.files);
	return ret;
}

/* ---- ptebatch bench --------------------------------------------------- */

static const char *const bench_names[] = { "gup", "cow", "mprotect", "all",
					   NULL };
static const char *const bench_backends[] = { "model", "kernel", "both",
					      NULL };

static void bench_usage_text(FILE *f)
{
	fputs("usage: ptebatch bench NAME [--backend model|kernel|both]"
	      " [--arch ARCH] [--size SIZE]\n"
	      "                      [--reps N] [--quick] [--json FILE]"
	      " [--plot FILE.svg]\n"
	      "\n"
	      "bench     measure the seed tables: NAME is gup, cow, mprotect"
	      " or all\n"
	      "  --backend NAME    model, kernel (this machine, as root) or"
	      " both (the default)\n"
	      "  --arch ARCH       the model's architecture (see 'run'); the"
	      " kernel columns\n"
	      "                    run only where it is this machine's (x86_64)\n"
	      "  --size SIZE       region size, a multiple of 2M, e.g. 64M or"
	      " 1G (default: the\n", f);
	fprintf(f, "                    seeds' sizes; at most %luG and a quarter"
		" of this machine's\n"
		"                    memory)\n", BENCH_MAX_SIZE >> 30);
	fprintf(f, "  --reps N          timed repetitions, 1 to %d (default 15"
		" for gup, 5 for cow\n"
		"                    and mprotect), after one warm-up\n",
		BENCH_MAX_REPS);
	fputs("  --quick           small sizes, few reps: a smoke test\n"
	      "  --json FILE       every row as one JSON object per line\n"
	      "  --plot FILE.svg   draw the tables with gnuplot\n"
	      "exit status: 0 ok, 1 a benchmark failed, 2 bad usage (then"
	      " nothing runs)\n", f);
}

/* "--name VALUE" or "--name=VALUE" at argv[*i]: the value, or NULL. */
static const char *bench_value(int argc, char **argv, int *i, size_t len)
{
	if (argv[*i][len] == '=')
		return argv[*i] + len + 1;
	if (*i + 1 < argc)
		return argv[++*i];
	return NULL;
}

static int set_bench_size(struct bench_opts *o, const char *v)
{
	char why[256];
	unsigned long n;

	if (scenario_parse_number(v, &n) || !n)
		return usage_error("--size: bad size '%s' (e.g. 64M or 1G)", v);
	if (bench_check_size(n, why, sizeof(why)))
		return usage_error("--size: '%s' %s", v, why);
	o->size = n;
	return 0;
}

static int set_bench_reps(struct bench_opts *o, const char *v)
{
	unsigned long n;
	char *end;

	/* Digits only: strtoul() would take " 5", "+5" and "-5" too. */
	errno = 0;
	n = strtoul(v, &end, 10);
	if (v[0] < '0' || v[0] > '9' || errno || *end || n < 1 ||
	    n > BENCH_MAX_REPS)
		return usage_error("--reps: expected a number from 1 to %d,"
				   " got '%s'", BENCH_MAX_REPS, v);
	o->reps = (int)n;
	return 0;
}

static int set_bench_plot(struct bench_opts *o, const char *v)
{
	size_t len = strlen(v);

	if (len < 5 || strcmp(v + len - 4, ".svg"))
		return usage_error("--plot: '%s' must end in .svg", v);
	if (strchr(v, '\''))
		return usage_error("--plot: '%s' may not contain a quote", v);
	o->plot = v;
	return 0;
}

static int parse_bench_args(struct bench_opts *o, const char **name,
			    const char **json, int argc, char **argv)
{
	int i, ret;

	for (i = 0; i < argc; i++) {
		const char *arg = argv[i], *eq = strchr(arg, '='), *v;
		size_t len = eq ? (size_t)(eq - arg) : strlen(arg);

		if (arg[0] != '-') {
			if (*name)
				return usage_error("more than one NAME"
						   " ('%s' and '%s')", *name, arg);
			if (!in_list(bench_names, arg))
				return unknown_in_list("NAME", "benchmark",
						       arg, bench_names);
			*name = arg;
			continue;
		}
		if (len == 7 && !strncmp(arg, "--quick", 7)) {
			if (eq)
				return usage_error("--quick takes no value");
			o->quick = true;
			continue;
		}
#define IS(flag) (len == sizeof(flag) - 1 && !strncmp(arg, flag, len))
		if (!IS("--backend") && !IS("--size") &&
		    !IS("--reps") && !IS("--json") && !IS("--plot"))
			return usage_error("unknown option '%s'", arg);
		v = bench_value(argc, argv, &i, len);
		if (!v)
			return usage_error("%.*s needs a value", (int)len, arg);
		ret = 0;
		if (IS("--backend")) {
			if (!in_list(bench_backends, v))
				return unknown_in_list("--backend", "backend", v,
						       bench_backends);
			o->backend = !strcmp(v, "model") ? BENCH_MODEL :
				     !strcmp(v, "kernel") ? BENCH_KERNEL :
				     BENCH_BOTH;
		} else if (IS("--size")) {
			ret = set_bench_size(o, v);
		} else if (IS("--reps")) {
			ret = set_bench_reps(o, v);
		} else if (IS("--json")) {
			if (!*v)
				return usage_error("--json: empty file name");
			*json = v;
		} else {
			ret = set_bench_plot(o, v);
		}
		if (ret)
			return ret;
#undef IS
	}
	if (!*name)
		return usage_error("no NAME given (gup, cow, mprotect or all)");
	return 0;
}

/*
 * What can only be checked on this machine, before anything runs: the
 * --plot file can be written and gnuplot is there (else a long run would
 * end without its plot), and the --json file opens.
 */
static int open_bench_outputs(struct bench_opts *o, const char *json)
{
	char why[512];

	if (o->plot && bench_plot_check(o->plot, why, sizeof(why)))
		return usage_error("--plot: %s", why);
	if (!json)
		return 0;
	o->json = fopen(json, "w");
	if (!o->json)
		return usage_error("--json: %s: %s", json, strerror(errno));
	return 0;
}

static int cmd_bench(int argc, char **argv)
{
	static int (*const benches[])(const struct bench_opts *) = {
		bench_gup, bench_cow, bench_mprotect,
	};
	struct bench_opts o = {
		.backend = BENCH_BOTH,
		.arch = pb_arch_name(),
		.out = stdout,
	};
	const char *name = NULL, *json = NULL;
	int i, ret, err = 0;

	command = "bench";
	ret = parse_bench_args(&o, &name, &json, argc, argv);
	if (!ret)
		ret = open_bench_outputs(&o, json);
	if (ret)
		return ret;
	o.progress = isatty(STDERR_FILENO);
	for (i = 0; i < 3 && !err; i++) {
		if (strcmp(name, "all") && strcmp(name, bench_names[i]))
			continue;
		if (!strcmp(name, "all") && i)
			fputc('\n', stdout);
		err = benches[i](&o);
		fflush(stdout);
		if (err)
			fprintf(stderr, "ptebatch: bench %s: %s\n",
				bench_names[i], strerror(-err));
	}
	if (o.json && fclose(o.json)) {
		fprintf(stderr, "ptebatch: --json: %s: %s\n", json,
			strerror(errno));
		err = -EIO;
	}
	if (!err && o.plot)
		err = bench_plot(&o);
	return err ? SCN_RUN_FAILED : 0;
}

static int bench_each_arch(int argc, char **argv, const char *list);

/* Every architecture the model is built for (make ARCH=...). */
static const char *const model_arches[] = {
	"x86_64", "x86-pae", "arm64-4k", "arm64-16k", "arm64-64k", NULL,
};

/*
 * --arch ARCH, for run, diff, bench and explore: the model is compiled
 * once per architecture (as the kernel is), so another architecture is
 * another binary - $(BUILD)/ptebatch for x86_64, $(BUILD)/ARCH/ptebatch
 * for the others.  Take the option out of argv (the commands never see
 * it) and, if it names another architecture than this binary's, run that
 * binary with the same arguments.  Returns 0 to go on here.
 */
static int arch_redirect(int *argcp, char **argv)
{
	const char *arch = NULL, *self = pb_arch_name();
	char exe[4096], target[4200], *slash;
	int i, j, argc = *argcp;
	ssize_t n;

	for (i = 2; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--arch")) {
			if (i + 1 >= argc)
				return usage_error("--arch needs a value");
			arch = argv[i + 1];
			for (j = i; j + 2 <= argc; j++)
				argv[j] = argv[j + 2];
			argc -= 2;
			i--;
		} else if (!strncmp(argv[i], "--arch=", 7)) {
			arch = argv[i] + 7;
			for (j = i; j + 1 <= argc; j++)
				argv[j] = argv[j + 1];
			argc -= 1;
			i--;
		}
	}
	*argcp = argc;
	if (arch && strchr(arch, ',')) {
		if (strcmp(argv[1], "bench"))
			return usage_error("--arch: one architecture at a time"
					   " (a list is for bench)");
		exit(bench_each_arch(argc, argv, arch));
	}
	if (!arch || !strcmp(arch, self))
		return 0;
	if (!in_list(model_arches, arch))
		return unknown_in_list("--arch", "architecture", arch,
				       model_arches);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return usage_error("--arch %s: cannot find this program: %s",
				   arch, strerror(errno));
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	*slash = '\0';
	/* An arm64 binary lives one directory below the x86_64 one. */
	if (strcmp(self, "x86_64") && (slash = strrchr(exe, '/')))
		*slash = '\0';
	if (!strcmp(arch, "x86_64"))
		snprintf(target, sizeof(target), "%s/ptebatch", exe);
	else
		snprintf(target, sizeof(target), "%s/%s/ptebatch", exe, arch);
	if (access(target, X_OK))
		return usage_error("--arch %s: %s is not built (make ARCH=%s)",
				   arch, target, arch);
	argv[argc] = NULL;
	execv(target, argv);
	fprintf(stderr, "ptebatch: --arch %s: %s: %s\n", arch, target,
		strerror(errno));
	return 1;
}

/*
 * bench --arch A,B,...: each architecture's build runs the benchmark in
 * turn, under an "== ARCH" line, so its tables (whose method lines name
 * the arch) stand one after another; --json FILE gets every row of every
 * run (each row carries its "arch").  argv no longer holds --arch.
 */
static int bench_each_arch(int argc, char **argv, const char *list)
{
	char *copy = strdup(list), *arch, *save = NULL, part[4200];
	const char *json = NULL;
	int i, json_at = -1, worst = 0;
	FILE *out = NULL;

	if (!copy)
		return 1;
	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--plot") || !strncmp(argv[i], "--plot=", 7)) {
			free(copy);
			return usage_error("--plot draws one architecture's"
					   " tables: give one --arch");
		}
		if (!strcmp(argv[i], "--json") && i + 1 < argc)
			json_at = ++i, json = argv[i];
		else if (!strncmp(argv[i], "--json=", 7))
			json_at = i, json = argv[i] + 7;
	}
	for (arch = strtok_r(copy, ",", &save); arch;
	     arch = strtok_r(NULL, ",", &save))
		if (!in_list(model_arches, arch)) {
			free(copy);
			return unknown_in_list("--arch", "architecture", arch,
					       model_arches);
		}
	free(copy);
	copy = strdup(list);
	if (json && !(out = fopen(json, "w"))) {
		free(copy);
		return usage_error("--json: %s: %s", json, strerror(errno));
	}
	for (arch = strtok_r(copy, ",", &save); arch && copy;
	     arch = strtok_r(NULL, ",", &save)) {
		char **cargv = calloc((size_t)argc + 3, sizeof(*cargv));
		int status = 0;
		pid_t pid;

		if (!cargv)
			break;
		for (i = 0; i < argc; i++)
			cargv[i] = argv[i];
		snprintf(part, sizeof(part), "%s.%s", json ? json : "", arch);
		if (json_at >= 0)
			cargv[json_at] = json == argv[json_at] ? part : NULL;
		if (json_at >= 0 && !cargv[json_at]) {
			/* --json=FILE: the same, as --json=FILE.ARCH */
			static char eq[4210];

			snprintf(eq, sizeof(eq), "--json=%s", part);
			cargv[json_at] = eq;
		}
		cargv[argc] = "--arch";
		cargv[argc + 1] = arch;
		printf("== %s\n", arch);
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			execv("/proc/self/exe", cargv);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid)
			status = 1 << 8;
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			worst = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
		if (out) {
			FILE *in = fopen(part, "r");
			char buf[8192];
			size_t n;

			while (in && (n = fread(buf, 1, sizeof(buf), in)) > 0)
				fwrite(buf, 1, n, out);
			if (in)
				fclose(in);
			unlink(part);
		}
		free(cargv);
	}
	free(copy);
	if (out && fclose(out))
		worst = worst ? worst : 1;
	return worst;
}

int main(int argc, char **argv)
{
	int ret;

	if (argc >= 2 && (!strcmp(argv[1], "run") || !strcmp(argv[1], "diff") ||
			  !strcmp(argv[1], "bench") || !strcmp(argv[1], "explore"))) {
		command = argv[1];
		ret = arch_redirect(&argc, argv);
		command = NULL;
		if (ret)
			return ret;
	}
	if (argc < 2) {
		usage(stderr);
		fputc('\n', stderr);
		diff_usage_text(stderr);
		fputc('\n', stderr);
		bench_usage_text(stderr);
		fputc('\n', stderr);
		explore_usage_text(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 2, argv + 2);
	if (!strcmp(argv[1], "diff"))
		return cmd_diff(argc - 2, argv + 2);
	if (!strcmp(argv[1], "bench"))
		return cmd_bench(argc - 2, argv + 2);
	if (!strcmp(argv[1], "explore"))
		return cmd_explore(argc - 2, argv + 2);
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "-h")) {
		if (argc > 2) {
			command = argv[1];
			return usage_error("unexpected argument '%s' (help"
					   " takes none)", argv[2]);
		}
		usage(stdout);
		putchar('\n');
		diff_usage_text(stdout);
		putchar('\n');
		bench_usage_text(stdout);
		putchar('\n');
		explore_usage_text(stdout);
		return 0;
	}
	return usage_error("unknown command '%s'", argv[1]);
}
