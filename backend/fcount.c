// SPDX-License-Identifier: GPL-2.0-only
/*
 * fcount.c - kernel functions' call counts, by the acting process only:
 * the function tracer in a tracefs instance of our own, its
 * set_ftrace_filter naming the functions and its set_ftrace_pid the
 * process a statement runs in (the function profiler would count every
 * task's calls: a forked child's copy-on-write of its own memory, say,
 * would land in its parent's statement).  Each statement's window clears
 * the instance's buffer before and reads it after.  Every read has a
 * bound.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/fcount.h"

#define TRACING		"/sys/kernel/tracing"
#define INSTANCE	TRACING "/instances/ptebatch-count"
/* available_filter_functions is some 3M; a trace_stat file of a few
 * functions is small, but a filter gone wrong lists every function. */
#define AVAILABLE_MAX	(64UL << 20)
/* The buffer's text for a statement: 64 MB is some 700,000 calls. */
#define STAT_MAX	(64UL << 20)

/*
 * The default set: the PTE walks and batches the seeds change and what
 * they save (GUP-fast's references, write-fault reuse, TLB flushes,
 * contpte conversions on arm64), where this kernel has them as functions
 * of their own (an inlined one has no entry to trace).
 */
static const char *const default_set[] = {
	"gup_fast_pte_range", "try_grab_folio_fast", "folio_pte_batch_flags",
	"do_wp_page", "wp_page_reuse", "wp_page_copy", "do_anonymous_page",
	"flush_tlb_mm_range", "contpte_convert",
	"contpte_ptep_set_access_flags", "copy_present_ptes",
	"zap_present_ptes", "change_pte_range", "split_huge_pmd_locked",
	"ptep_set_access_flags", "__ptep_set_access_flags_anysz",
	"wp_page_reuse_large", NULL
};

/* The whole of @path, at most @max bytes, into a malloc'd buffer. */
static char *read_bounded(const char *path, size_t max, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 65536, n = 0;
	char *buf = NULL;

	if (fd < 0)
		return NULL;
	for (;;) {
		ssize_t got;

		if (!buf || n + 4096 > cap) {
			char *nb;

			if (buf)
				cap *= 2;
			if (cap > max + 1)
				cap = max + 1;
			nb = realloc(buf, cap);
			if (!nb)
				break;
			buf = nb;
		}
		got = read(fd, buf + n, cap - 1 - n);
		if (got <= 0)
			break;
		n += (size_t)got;
		if (n >= max) {
			errno = EFBIG;
			free(buf);
			buf = NULL;
			break;
		}
	}
	close(fd);
	if (buf) {
		buf[n] = '\0';
		*len = n;
	}
	return buf;
}

/* Write all of @text to @path (truncated), however the file takes it. */
static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	size_t len = strlen(text), done = 0;

	if (fd < 0)
		return -errno;
	while (done < len) {
		ssize_t n = write(fd, text + done, len - done);

		if (n <= 0) {
			int err = n < 0 ? -errno : -EIO;

			close(fd);
			return err;
		}
		done += (size_t)n;
	}
	return close(fd) ? -errno : 0;
}

/* Is @name a line (or "name [module]") of available_filter_functions? */
static bool traceable(const char *avail, const char *name)
{
	size_t n = strlen(name);
	const char *p = avail;

	while ((p = strstr(p, name))) {
		bool start = p == avail || p[-1] == '\n';
		char end = p[n];

		if (start && (end == '\n' || end == ' ' || end == '\0'))
			return true;
		p += n;
	}
	return false;
}

static int add_name(struct fcount *fc, const char *name, size_t len,
		    char *why, size_t whylen)
{
	char *copy;

	if (fc->nr == FCOUNT_MAX) {
		snprintf(why, whylen, "--count: at most %d functions",
			 FCOUNT_MAX);
		return -1;
	}
	copy = strndup(name, len);
	if (!copy) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	fc->names[fc->nr++] = copy;
	return 0;
}

int fcount_open(struct fcount *fc, const char *list, char *why,
		size_t whylen)
{
	char *avail, filter[FCOUNT_MAX * 64 + 1] = "";
	const char *c;
	size_t len;
	int i, err;

	memset(fc, 0, sizeof(*fc));
	if (!getenv("PTEBATCH_VM")) {
		snprintf(why, whylen, "--count turns on the machine's function "
			 "tracing: only in a guest of our own (--backend vm)");
		return -1;
	}
	avail = read_bounded(TRACING "/available_filter_functions",
			     AVAILABLE_MAX, &len);
	if (!avail) {
		snprintf(why, whylen, "--count: cannot read %s: %s (a kernel "
			 "with FUNCTION_TRACER and tracefs)",
			 TRACING "/available_filter_functions", strerror(errno));
		return -1;
	}
	if (!strcmp(list, "default")) {
		for (i = 0; default_set[i]; i++)
			if (traceable(avail, default_set[i]) &&
			    add_name(fc, default_set[i], strlen(default_set[i]),
				     why, whylen))
				goto fail;
	} else {
		for (c = list; *c; c += *c == ',') {
			size_t n = strcspn(c, ",");

			if (!n || n > 60) {
				snprintf(why, whylen, "--count: '%.*s' is no "
					 "function name", (int)n, c);
				goto fail;
			}
			if (add_name(fc, c, n, why, whylen))
				goto fail;
			c += n;
			if (!traceable(avail, fc->names[fc->nr - 1])) {
				snprintf(why, whylen, "--count: %s: this kernel"
					 " cannot trace it (not in "
					 "available_filter_functions: inlined, "
					 "or no such function)",
					 fc->names[fc->nr - 1]);
				goto fail;
			}
		}
	}
	free(avail);
	avail = NULL;
	for (i = 0; i < fc->nr; i++) {
		strcat(filter, fc->names[i]);
		strcat(filter, "\n");
	}
	/*
	 * One buffer for every read, its pages touched now: a read in a
	 * statement's window must not fault.
	 */
	fc->cap = STAT_MAX;
	fc->buf = mmap(NULL, fc->cap, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fc->buf == MAP_FAILED) {
		fc->buf = NULL;
		snprintf(why, whylen, "out of memory");
		goto fail;
	}
	/* Not in the scenario processes forked after: no COW of it. */
	madvise(fc->buf, fc->cap, MADV_DONTFORK);
	memset(fc->buf, 0, fc->cap);
	if (mkdir(INSTANCE, 0700) && errno != EEXIST) {
		snprintf(why, whylen, "--count: cannot make %s: %s", INSTANCE,
			 strerror(errno));
		goto fail;
	}
	err = write_file(INSTANCE "/tracing_on", "0");
	if (!err)
		err = write_file(INSTANCE "/buffer_size_kb", "16384");
	if (!err)
		err = write_file(INSTANCE "/set_ftrace_filter", filter);
	if (!err)
		err = write_file(INSTANCE "/current_tracer", "function");
	if (err) {
		snprintf(why, whylen, "--count: cannot set up the function "
			 "tracer in %s: %s", INSTANCE, strerror(-err));
		fcount_close(fc);
		return -1;
	}
	return 0;
fail:
	free(avail);
	if (fc->buf)
		munmap(fc->buf, fc->cap);
	fc->buf = NULL;
	for (i = 0; i < fc->nr; i++)
		free((char *)fc->names[i]);
	fc->nr = 0;
	return -1;
}

int fcount_begin(struct fcount *fc, pid_t pid)
{
	char p[24];
	int err;

	fc->pid = pid;
	snprintf(p, sizeof(p), "%d", (int)pid);
	err = write_file(INSTANCE "/set_ftrace_pid", p);
	if (!err)
		err = write_file(INSTANCE "/trace", "");
	if (!err)
		err = write_file(INSTANCE "/tracing_on", "1");
	return err;
}

/*
 * "  TASK-PID  [CPU] FLAGS  TIME: FUNCTION <-CALLER", of @pid only (the
 * instance's set_ftrace_pid filters already; this holds if it did not).
 */
static void count_line(struct fcount *fc, const char *line, uint64_t *hits)
{
	const char *f = strstr(line, ": "), *cpu = strstr(line, " [");
	const char *dash = NULL, *p;
	size_t n;
	int i;

	if (line[0] == '#' || !f || !cpu || cpu > f)
		return;
	for (p = line; p < cpu; p++)
		if (*p == '-')
			dash = p;
	if (!dash || strtol(dash + 1, NULL, 10) != fc->pid)
		return;
	f += 2;
	n = strcspn(f, " ");
	for (i = 0; i < fc->nr; i++)
		if (strlen(fc->names[i]) == n && !strncmp(f, fc->names[i], n))
			hits[i]++;
}

int fcount_end(struct fcount *fc, uint64_t *hits)
{
	char *line, *save;
	size_t len = 0;
	ssize_t n;
	int fd, err;

	memset(hits, 0, sizeof(*hits) * FCOUNT_MAX);
	err = write_file(INSTANCE "/tracing_on", "0");
	if (err)
		return err;
	fd = open(INSTANCE "/trace", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len < fc->cap - 1 &&
	       (n = read(fd, fc->buf + len, fc->cap - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	if (len >= fc->cap - 1)
		return -EFBIG;
	fc->buf[len] = '\0';
	/* The header says "entries-in-buffer/entries-written: A/B". */
	line = strstr(fc->buf, "entries-in-buffer/entries-written: ");
	if (line) {
		unsigned long in, written;

		if (sscanf(line + 35, "%lu/%lu", &in, &written) == 2 &&
		    in != written)
			return -EOVERFLOW;	/* the buffer lost calls */
	}
	for (line = strtok_r(fc->buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		count_line(fc, line, hits);
	return 0;
}

void fcount_close(struct fcount *fc)
{
	int i;

	write_file(INSTANCE "/tracing_on", "0");
	write_file(INSTANCE "/current_tracer", "nop");
	rmdir(INSTANCE);
	for (i = 0; i < fc->nr; i++)
		free((char *)fc->names[i]);
	fc->nr = 0;
	if (fc->buf)
		munmap(fc->buf, fc->cap);
	fc->buf = NULL;
}
