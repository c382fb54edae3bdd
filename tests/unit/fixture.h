/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fixture.h - what the unit tests share that needs no simulated machine:
 * a variant chosen by name, the text a step printed turned into a TAP
 * check or diagnostics, a forked host process that sends an answer back,
 * and a temporary directory of files.  pbtest.h builds the machine tests'
 * fixtures on top of it; the tests that never bring a machine up
 * themselves (test_equivalence, test_thp_sysfs, test_scenario) include it
 * alone.
 *
 * Include from one .c file per program.
 */
#ifndef TESTS_UNIT_FIXTURE_H
#define TESTS_UNIT_FIXTURE_H

#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptebatch.h"
#include "tests/capture.h"
#include "tests/tap.h"

/* ---- a variant by name ------------------------------------------------- */

/*
 * @v = the preset @preset with each "key=value" of @sets applied in order
 * (comma-separated, as ptebatch's --set takes them; NULL for none).  False,
 * with a diagnostic naming it, if the preset, a key or a value is unknown.
 */
static inline bool t_variant_make(const char *preset, const char *sets,
				  struct pb_variant *v)
{
	char buf[256], *tok, *save = NULL, *eq;
	bool ok = true;
	int err;

	if (pb_variant_preset(preset, v)) {
		tap_diag("no preset '%s'", preset);
		return false;
	}
	snprintf(buf, sizeof(buf), "%s", sets ? sets : "");
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		eq = strchr(tok, '=');
		if (!eq) {
			tap_diag("'%s' is not KEY=VALUE", tok);
			ok = false;
			continue;
		}
		*eq = '\0';
		err = pb_variant_set(v, tok, eq + 1);
		if (err) {
			tap_diag("pb_variant_set(%s, %s) failed: %d", tok, eq + 1,
				 err);
			ok = false;
		}
	}
	return ok;
}

/* ---- printed text (tests/capture.h) ------------------------------------ */

/*
 * Close @c: pass if what was written to it is @want (both shown if not).
 * The text is freed.
 */
static inline bool __attribute__((format(printf, 5, 6)))
t_text_is_at(struct capture *c, const char *want, const char *file, int line,
	     const char *fmt, ...)
{
	char name[512], *text = capture_close(c);
	va_list ap;
	bool ok;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	ok = tap_is_str_at(text, want, file, line, "%s", name);
	free(text);
	return ok;
}

#define t_text_is(c, want, ...) \
	t_text_is_at((c), (want), __FILE__, __LINE__, __VA_ARGS__)

/*
 * Close @c and show what was written to it as diagnostics, under the TAP
 * line printed last.  The text is freed.
 */
static inline void t_text_diag(struct capture *c)
{
	char *text = capture_close(c);

	tap_diag_text(text);
	free(text);
}

/* ---- a forked host process with a pipe back ----------------------------- */

/* Write all of @buf to @fd. */
static inline bool t_write_all(int fd, const void *buf, size_t len)
{
	const char *c = buf;
	ssize_t n;

	while (len) {
		n = write(fd, c, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		c += n;
		len -= n;
	}
	return true;
}

/* Read @fd to its end; NUL-terminated (malloc'd), *@len bytes before it. */
static inline char *t_read_all(int fd, size_t *len)
{
	size_t cap = 65536;
	char *buf = malloc(cap + 1), *bigger;
	ssize_t n;

	*len = 0;
	while (buf) {
		if (*len == cap) {
			bigger = realloc(buf, cap * 2 + 1);
			if (!bigger)
				break;
			buf = bigger;
			cap *= 2;
		}
		n = read(fd, buf + *len, cap - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			buf[*len] = '\0';
			return buf;
		}
		*len += n;
	}
	free(buf);
	return NULL;
}

/*
 * Run @body(@arg, fd) in a forked host process - a crash or a hang there
 * ends that process, not the test program - and collect what it writes
 * to fd until every process holding it (its own children too) has closed
 * it: *@out (malloc'd, NUL-terminated; NULL if reading failed), *@len
 * bytes.  @body may end the process itself (exit() runs its atexit
 * hooks); if it returns, the process _exit(0)s.  Returns the process's
 * wait status, or -1 if it could not be started or waited for.
 */
static inline int t_child(void (*body)(void *arg, int fd), void *arg,
			  char **out, size_t *len)
{
	int fds[2], status = 0;
	pid_t pid;

	*out = NULL;
	*len = 0;
	fflush(stdout);
	fflush(stderr);
	if (pipe(fds)) {
		perror("pipe");
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		body(arg, fds[1]);
		_exit(0);
	}
	close(fds[1]);
	if (pid > 0)
		*out = t_read_all(fds[0], len);
	close(fds[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

/* ---- a temporary directory ---------------------------------------------- */

/* A directory of files made for a test under /tmp, removed whole. */
struct t_tmpdir {
	char path[64];
};

/*
 * Make a fresh /tmp/@name.XXXXXX, readable by every user (a test may
 * drop its privileges and still have to find the files).
 */
static inline bool t_tmpdir_make(struct t_tmpdir *d, const char *name)
{
	snprintf(d->path, sizeof(d->path), "/tmp/%s.XXXXXX", name);
	if (!mkdtemp(d->path)) {
		perror("mkdtemp");
		d->path[0] = '\0';
		return false;
	}
	chmod(d->path, 0755);
	return true;
}

/* The path of @rel inside @d, in @buf. */
static inline const char *t_tmpdir_path(const struct t_tmpdir *d,
					const char *rel, char *buf,
					size_t size)
{
	snprintf(buf, size, "%s/%s", d->path, rel);
	return buf;
}

/* Make the file @rel of @d (or empty it) and write @len bytes of @data. */
static inline bool t_tmpdir_write(const struct t_tmpdir *d, const char *rel,
				  const void *data, size_t len)
{
	char path[512];
	FILE *f = fopen(t_tmpdir_path(d, rel, path, sizeof(path)), "w");
	bool ok;

	if (!f) {
		perror(path);
		return false;
	}
	ok = fwrite(data, 1, len, f) == len;
	return fclose(f) == 0 && ok;
}

/* The same with the string @text. */
static inline bool t_tmpdir_put(const struct t_tmpdir *d, const char *rel,
				const char *text)
{
	return t_tmpdir_write(d, rel, text, strlen(text));
}

/* Make the directory @rel of @d; its parent must exist. */
static inline bool t_tmpdir_mkdir(const struct t_tmpdir *d, const char *rel)
{
	char path[512];

	if (mkdir(t_tmpdir_path(d, rel, path, sizeof(path)), 0755) &&
	    errno != EEXIST) {
		perror(path);
		return false;
	}
	return true;
}

static inline int t_tmpdir_remove_one(const char *path, const struct stat *st,
				      int type, struct FTW *ftw)
{
	return remove(path);
}

/* Remove @d and everything in it. */
static inline void t_tmpdir_remove(struct t_tmpdir *d)
{
	if (!d->path[0])
		return;
	if (nftw(d->path, t_tmpdir_remove_one, 16, FTW_DEPTH | FTW_PHYS))
		tap_diag("could not remove %s", d->path);
	d->path[0] = '\0';
}

#endif /* TESTS_UNIT_FIXTURE_H */
