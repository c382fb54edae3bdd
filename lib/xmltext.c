// SPDX-License-Identifier: GPL-2.0-only
/*
 * xmltext.c - any C string as text an XML 1.0 document can carry
 * (xmltext.h).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xmltext.h"

/*
 * The length of the well-formed UTF-8 sequence at @s (RFC 3629: no
 * overlong form, no surrogate, nothing past U+10FFFF) and its code point
 * in @cp; 0 when @s does not start one.
 */
static size_t utf8_decode(const unsigned char *s, uint32_t *cp)
{
	uint32_t c = s[0], min;
	size_t n, i;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		c &= 0x1f;
		min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		c &= 0x0f;
		min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		c &= 0x07;
		min = 0x10000;
	} else {
		return 0;	/* a continuation byte, 0xc0, 0xc1, 0xf5.. */
	}
	for (i = 1; i < n; i++) {
		/* A NUL ends the string here: the sequence is cut short. */
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

/* Is @cp a character XML 1.0 carries and a drawing shows as text? */
static bool drawable(uint32_t cp, bool keep_newline)
{
	if (cp == '\n')
		return keep_newline;
	if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
		return false;
	return cp != 0xfffe && cp != 0xffff;
}

/*
 * Walk @s: each drawable character's bytes to @put as they are, each
 * byte that is not one to @put as U+FFFD.  @put gets @arg, the bytes and
 * their length, and the code point (0: a replacement).
 */
static void walk(const char *s, bool keep_newline,
		 void (*put)(void *arg, const char *b, size_t n, uint32_t cp),
		 void *arg)
{
	const unsigned char *c = (const unsigned char *)s;
	uint32_t cp;
	size_t n;

	while (*c) {
		n = utf8_decode(c, &cp);
		if (n && drawable(cp, keep_newline)) {
			put(arg, (const char *)c, n, cp);
			c += n;
		} else {
			/* One replacement per byte of a character XML does
			 * not carry, or per byte that is not UTF-8. */
			for (n = n ? n : 1; n--; c++)
				put(arg, XML_REPLACEMENT, 3, 0);
		}
	}
}

static void put_escaped(void *arg, const char *b, size_t n, uint32_t cp)
{
	FILE *f = arg;

	switch (cp) {
	case '&':
		fputs("&amp;", f);
		break;
	case '<':
		fputs("&lt;", f);
		break;
	case '>':
		fputs("&gt;", f);
		break;
	case '"':
		fputs("&quot;", f);
		break;
	case '\'':
		fputs("&apos;", f);
		break;
	default:
		fwrite(b, 1, n, f);
		break;
	}
}

void xml_put_text(FILE *f, const char *s)
{
	walk(s, false, put_escaped, f);
}

struct clean_buf {
	char *p;
	size_t len;
};

static void put_clean(void *arg, const char *b, size_t n, uint32_t cp)
{
	struct clean_buf *out = arg;

	(void)cp;
	memcpy(out->p + out->len, b, n);
	out->len += n;
}

char *xml_clean_text(const char *s, bool keep_newline)
{
	/* At worst three bytes (U+FFFD) for each byte of @s. */
	struct clean_buf out = { malloc(3 * strlen(s) + 1), 0 };

	if (!out.p)
		return NULL;
	walk(s, keep_newline, put_clean, &out);
	out.p[out.len] = '\0';
	return out.p;
}
