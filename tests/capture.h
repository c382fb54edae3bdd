/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * capture.h - collect what a test's code under test writes to a FILE *
 * into memory (open_memstream), for the tests that compare printed text.
 */
#ifndef TESTS_CAPTURE_H
#define TESTS_CAPTURE_H

#include <stdio.h>
#include <stdlib.h>

struct capture {
	char *buf;
	size_t len;
	FILE *f;
};

static inline FILE *capture_open(struct capture *c)
{
	c->buf = NULL;
	c->len = 0;
	c->f = open_memstream(&c->buf, &c->len);
	if (!c->f) {
		perror("open_memstream");
		exit(1);	/* the test program itself cannot run */
	}
	return c->f;
}

/* The text written so far; the caller frees it. */
static inline char *capture_close(struct capture *c)
{
	fclose(c->f);
	return c->buf;
}

#endif /* TESTS_CAPTURE_H */
