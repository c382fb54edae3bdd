/*
 * readfile.h - a scenario file's text as it was written: gzip undone.
 */
#ifndef SCENARIO_READFILE_H
#define SCENARIO_READFILE_H

#include <stddef.h>
#include <stdio.h>

/*
 * The largest text a compressed scenario may inflate to: the bound
 * parse.c puts on a plain file, so that a small .scn.gz cannot make the
 * parser hold more than a plain file could.
 */
#define SCN_MAX_GUNZIP_BYTES (64UL << 20)

/*
 * @buf holds the *@lenp bytes read from @path.  If they start with the
 * gzip magic (1f 8b; the name does not matter), return their decompressed
 * text (malloc'd, *@lenp updated) and free @buf; else return @buf as it
 * is.  Corrupt, truncated or oversized gzip data is an error: "PATH:
 * message" on @err, @buf freed, NULL returned.
 */
char *scenario_gunzip(const char *path, char *buf, size_t *lenp, FILE *err);

#endif /* SCENARIO_READFILE_H */
