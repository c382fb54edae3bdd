// SPDX-License-Identifier: GPL-2.0-only
/*
 * readfile.c - undo gzip on a scenario file's bytes, so that a recorded
 * trace (examples/traces/, often large and very repetitive) can be kept
 * compressed and still be given to `ptebatch run`, `diff` and `bench
 * replay` as it is.  Recognised by its magic, never by its name.  And
 * the other way, for `record -o FILE.scn.gz`.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "scenario/readfile.h"

size_t scenario_max_bytes(void)
{
	static size_t max;
	const char *v;
	unsigned long n;
	char *end;

	if (max)
		return max;
	max = SCN_MAX_FILE_BYTES;
	v = getenv("PTEBATCH_SCENARIO_MAX_BYTES");
	if (v && *v >= '1' && *v <= '9') {
		n = strtoul(v, &end, 10);
		if (!*end && n < max)
			max = n;
	}
	return max;
}

const char *scenario_max_words(char *words, size_t len)
{
	size_t max = scenario_max_bytes();

	if (max % (1UL << 20))
		snprintf(words, len, "%zu bytes", max);
	else
		snprintf(words, len, "%zuM", max >> 20);
	return words;
}

static bool is_gzip(const unsigned char *b, size_t len)
{
	return len >= 2 && b[0] == 0x1f && b[1] == 0x8b;
}

/* zlib's reason, or one of our own words when it has none. */
static const char *zreason(const z_stream *zs, int ret)
{
	if (zs->msg)
		return zs->msg;
	return ret == Z_MEM_ERROR ? "out of memory" : "corrupt data";
}

char *scenario_gunzip(const char *path, char *buf, size_t *lenp, FILE *err)
{
	size_t cap = 4096, len = 0;
	char *out = NULL, *bigger, words[32];
	z_stream zs;
	int ret;

	if (!is_gzip((const unsigned char *)buf, *lenp))
		return buf;
	memset(&zs, 0, sizeof(zs));
	/* 15 + 16: a gzip header and trailer (CRC and length checked). */
	if (inflateInit2(&zs, 15 + 16) != Z_OK) {
		fprintf(err, "%s: gzip: cannot start zlib: %s\n", path,
			zreason(&zs, Z_MEM_ERROR));
		free(buf);
		return NULL;
	}
	zs.next_in = (unsigned char *)buf;
	zs.avail_in = (uInt)*lenp;	/* read_all() keeps it to the bound */
	out = malloc(cap);
	if (!out)
		goto nomem;
	for (;;) {
		zs.next_out = (unsigned char *)out + len;
		zs.avail_out = (uInt)(cap - len);
		ret = inflate(&zs, Z_NO_FLUSH);
		len = cap - zs.avail_out;
		if (len > scenario_max_bytes()) {
			fprintf(err, "%s: gzip: decompresses to more than %s:"
				" not a scenario file\n", path,
				scenario_max_words(words, sizeof(words)));
			goto fail;
		}
		if (ret == Z_STREAM_END) {
			/*
			 * `cat a.gz b.gz` is one valid gzip file of two
			 * members (gzip -d gives both texts, in order).
			 */
			if (!zs.avail_in)
				break;
			if (!is_gzip(zs.next_in, zs.avail_in)) {
				fprintf(err, "%s: gzip: %u bytes of trailing data"
					" after the compressed text\n", path,
					zs.avail_in);
				goto fail;
			}
			inflateReset(&zs);
			continue;
		}
		if (ret == Z_BUF_ERROR && !zs.avail_in) {
			/* Input ended before the stream did. */
			fprintf(err, "%s: gzip: truncated (the compressed text"
				" ends early)\n", path);
			goto fail;
		}
		if (ret != Z_OK && ret != Z_BUF_ERROR) {
			if (ret == Z_MEM_ERROR)
				goto nomem;
			fprintf(err, "%s: gzip: corrupt: %s\n", path,
				zreason(&zs, ret));
			goto fail;
		}
		if (len < cap)
			continue;
		bigger = realloc(out, cap * 2);
		if (!bigger)
			goto nomem;
		out = bigger;
		cap *= 2;
	}
	inflateEnd(&zs);
	free(buf);
	*lenp = len;
	return out;
nomem:
	fprintf(err, "%s: out of memory\n", path);
fail:
	inflateEnd(&zs);
	free(out);
	free(buf);
	return NULL;
}

int scenario_gzip(FILE *out, const char *text, size_t len)
{
	unsigned char buf[65536];
	z_stream zs;
	int ret, flush;

	memset(&zs, 0, sizeof(zs));
	/* 15 + 16: a gzip header and trailer, as gzip(1) writes them. */
	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	zs.next_in = (unsigned char *)text;
	do {
		/* uInt is 32 bits: a long text goes in by pieces. */
		if (!zs.avail_in && len) {
			zs.avail_in = len > (1U << 30) ? (1U << 30) : (uInt)len;
			len -= zs.avail_in;
		}
		flush = len ? Z_NO_FLUSH : Z_FINISH;
		zs.next_out = buf;
		zs.avail_out = sizeof(buf);
		ret = deflate(&zs, flush);
		if (ret == Z_STREAM_ERROR)
			break;
		if (fwrite(buf, 1, sizeof(buf) - zs.avail_out, out) !=
		    sizeof(buf) - zs.avail_out) {
			deflateEnd(&zs);
			return -EIO;
		}
	} while (ret != Z_STREAM_END);
	deflateEnd(&zs);
	return ret == Z_STREAM_END ? 0 : -ENOMEM;
}
