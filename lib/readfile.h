/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * readfile.h - a file the user hands in, read with a bound.
 *
 * Every reader of a user's file or stream (samples, rows, event streams,
 * calibrations, fuzz inputs) reads through here, so that /dev/zero, a
 * pipe that never ends or a 10G file is an error naming the file and the
 * bound, "PATH: larger than the 16M a samples file may be", instead of a
 * process that grows until the OOM killer ends it.  A regular file past
 * the bound is refused from its size before a byte is read; anything
 * else (a device, a pipe, a FIFO, /dev/stdin) is read up to one byte past
 * the bound.  Each caller chooses its bound from what real inputs of its
 * kind need, with room, and says it where the input is described.
 */
#ifndef LIB_READFILE_H
#define LIB_READFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * All of @path, at most @max bytes, into a malloc'd buffer (*@bufp, NUL
 * after its *@lenp bytes; the bytes themselves may hold NULs).  @what is
 * the kind of file, with its article, for the message ("a samples file").
 * 0, or -errno with "PATH: why" in @why: -EFBIG past the bound, -EISDIR
 * for a directory, -ENOMEM, or the error of open() or read().
 */
int readfile_all(const char *path, size_t max, const char *what,
		 char **bufp, size_t *lenp, char *why, size_t whylen);

/*
 * A file read one line at a time (getline() with bounds): at most
 * @max_bytes in all and @max_line in one line (0: the whole bound), so
 * that neither a long file nor a file without a newline can grow the
 * buffer without end.
 */
struct readfile_lines {
	FILE *f;
	bool own;		/* opened here: closed by readfile_lines_close() */
	bool checked;		/* fstat() said it is no directory nor too big */
	const char *path, *what;
	size_t max_bytes, max_line;
	size_t total;		/* bytes read so far */
	unsigned long lineno;	/* of the line last returned */
	char *buf;
	size_t cap;
};

/*
 * Open @path for readfile_lines_next().  0, or -errno with "PATH: why" in
 * @why (a regular file larger than @max_bytes is -EFBIG already here).
 */
int readfile_lines_open(struct readfile_lines *r, const char *path,
			size_t max_bytes, size_t max_line, const char *what,
			char *why, size_t whylen);

/*
 * The same on a stream already open (@f stays the caller's); its size is
 * checked by the first readfile_lines_next().
 */
void readfile_lines_init(struct readfile_lines *r, FILE *f, const char *path,
			 size_t max_bytes, size_t max_line, const char *what);

/*
 * The next line into *@line (the reader's buffer, valid until the next
 * call), with its newline if it has one and a NUL after it, its length in
 * *@len (a NUL byte inside shows as strlen() < *@len).  1 for a line, 0
 * at the end, -errno with "PATH: why" (or "PATH:LINE: why" for a line
 * past its bound) in @why: -EFBIG past a bound, -EIO, -ENOMEM.
 */
int readfile_lines_next(struct readfile_lines *r, char **line, size_t *len,
			char *why, size_t whylen);

void readfile_lines_close(struct readfile_lines *r);

/*
 * @bytes as the bounds are written: "64M", "16K", "1G", else a number of
 * bytes.  Returns @buf.
 */
const char *readfile_size_text(char *buf, size_t len, size_t bytes);

#endif /* LIB_READFILE_H */
