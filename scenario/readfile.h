/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * readfile.h - a scenario file's text as it was written: gzip undone (and
 * done, for `record -o FILE.scn.gz`), and the bound on its length.
 */
#ifndef SCENARIO_READFILE_H
#define SCENARIO_READFILE_H

#include <stddef.h>
#include <stdio.h>

/*
 * The largest scenario text the readers take - a plain file, or what a
 * compressed one (FILE.scn.gz) inflates to - for `run`, `diff`, `bench
 * replay`, `predict` and calibrate's suite alike, and so the most that
 * `record` writes: 256M, about 25 million recorded faults (a recorded
 * fault is about 10 bytes of text).  It also bounds reading /dev/zero or
 * a pipe that never ends.  Measured on the 2-core machine (2026-12-02):
 * parsing 256M of touch statements (20 million items) takes 14 s and at
 * most 1.0G of memory (the text, each statement's copy of it and 12 bytes
 * an item); 64M takes 3.6 s and 260M.
 */
#define SCN_MAX_FILE_BYTES (256UL << 20)

/*
 * The bound in force: SCN_MAX_FILE_BYTES, or less for a test
 * (PTEBATCH_SCENARIO_MAX_BYTES=N in the environment, N bytes, taken only
 * below the bound), the same for every reader and for `record`.  @words
 * gets it as text ("256M", "1000 bytes").
 */
size_t scenario_max_bytes(void);
const char *scenario_max_words(char *words, size_t len);

/*
 * @buf holds the *@lenp bytes read from @path.  If they start with the
 * gzip magic (1f 8b; the name does not matter), return their decompressed
 * text (malloc'd, *@lenp updated) and free @buf; else return @buf as it
 * is.  Corrupt, truncated or oversized gzip data is an error: "PATH:
 * message" on @err, @buf freed, NULL returned.
 */
char *scenario_gunzip(const char *path, char *buf, size_t *lenp, FILE *err);

/*
 * The @len bytes of @text to @out as one gzip member (what
 * scenario_gunzip() undoes; `gzip -d` reads it too).  0, or -ENOMEM, or
 * -EIO when @out took an error (its error flag set).
 */
int scenario_gzip(FILE *out, const char *text, size_t len);

#endif /* SCENARIO_READFILE_H */
