/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tap.h - a tiny header-only TAP producer for the unit tests.
 *
 *	#include "tests/tap.h"
 *
 *	int main(void)
 *	{
 *		tap_ok(2 + 2 == 4, "addition");
 *		tap_is_str(got, "P0 A 0x0000000 absent", "absent line");
 *		tap_skip("no arm64 here", "contpte folding of %d PTEs", 16);
 *		tap_diag("anything else worth saying");
 *		return tap_done();
 *	}
 *
 * prints
 *
 *	ok 1 - addition
 *	ok 2 - absent line
 *	ok 3 - contpte folding of 16 PTEs # SKIP no arm64 here
 *	# anything else worth saying
 *	1..3
 *
 * A failure prints "not ok N - name" and, as "# " lines, where it was and
 * (for tap_is_str) what was got and wanted.  The plan comes last, which
 * TAP allows, so a test need not count its cases in advance.  tap_done()
 * returns the exit status: 1 if any test failed, else 0.  A skip is never
 * a pass: tests/run-all.sh counts it separately.
 *
 * The state is static: include this header from one .c file per program.
 */
#ifndef TESTS_TAP_H
#define TESTS_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static struct {
	int run;
	int failed;
	int skipped;
} tap_state;

/* "# " before every line of @text. */
static inline void tap_diag_text(const char *text)
{
	const char *nl;

	while (*text) {
		nl = strchr(text, '\n');
		if (!nl) {
			printf("# %s\n", text);
			break;
		}
		printf("# %.*s\n", (int)(nl - text), text);
		text = nl + 1;
	}
}

static inline void __attribute__((format(printf, 1, 2)))
tap_diag(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	tap_diag_text(buf);
}

static inline void tap_vline(bool ok, const char *fmt, va_list ap)
{
	tap_state.run++;
	printf("%sok %d - ", ok ? "" : "not ", tap_state.run);
	vprintf(fmt, ap);
}

static inline bool __attribute__((format(printf, 4, 5)))
tap_ok_at(bool cond, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vline(cond, fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!cond) {
		tap_state.failed++;
		printf("# failed at %s:%d\n", file, line);
	}
	fflush(stdout);
	return cond;
}

/* Pass if @cond holds.  Returns @cond, so a test can stop early. */
#define tap_ok(cond, ...) tap_ok_at(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

static inline bool __attribute__((format(printf, 5, 6)))
tap_is_str_at(const char *got, const char *want, const char *file, int line,
	      const char *fmt, ...)
{
	bool ok = got && want && !strcmp(got, want);
	va_list ap;

	va_start(ap, fmt);
	tap_vline(ok, fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!ok) {
		tap_state.failed++;
		printf("# failed at %s:%d\n# got:\n", file, line);
		tap_diag_text(got ? got : "(null)");
		printf("# wanted:\n");
		tap_diag_text(want ? want : "(null)");
	}
	fflush(stdout);
	return ok;
}

/* Pass if the strings are equal; on failure show both. */
#define tap_is_str(got, want, ...) \
	tap_is_str_at((got), (want), __FILE__, __LINE__, __VA_ARGS__)

/* A case that cannot run here, with the reason. */
static inline void __attribute__((format(printf, 2, 3)))
tap_skip(const char *reason, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vline(true, fmt, ap);
	va_end(ap);
	printf(" # SKIP %s\n", reason);
	tap_state.skipped++;
	fflush(stdout);
}

/* Print the plan; the exit status for main(). */
static inline int tap_done(void)
{
	printf("1..%d\n", tap_state.run);
	fflush(stdout);
	return tap_state.failed ? 1 : 0;
}

#endif /* TESTS_TAP_H */
