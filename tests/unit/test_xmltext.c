// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_xmltext.c - lib/xmltext.c: any text as text XML 1.0 carries.  The
 * edges of UTF-8 (RFC 3629) and of XML's Char production, byte by byte:
 * each byte that is not text becomes one U+FFFD, the rest stays.
 */
#include <stdlib.h>

#include "lib/xmltext.h"
#include "tests/tap.h"

#define R XML_REPLACEMENT

static void clean(const char *in, bool keep_newline, const char *want,
		  const char *name)
{
	char *got = xml_clean_text(in, keep_newline);

	tap_is_str(got ? got : "(NULL)", want, "%s", name);
	free(got);
}

static void escaped(const char *in, const char *want, const char *name)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	xml_put_text(f, in);
	fclose(f);
	tap_is_str(buf, want, "%s", name);
	free(buf);
}

int main(void)
{
	clean("plain ASCII, ]]> & <", false, "plain ASCII, ]]> & <",
	      "ASCII stays, specials too (not escaped)");
	clean("\xc3\xa9\xe2\x80\x98\xf0\x9f\x98\x80", false,
	      "\xc3\xa9\xe2\x80\x98\xf0\x9f\x98\x80",
	      "two-, three- and four-byte characters stay");
	clean("a\x01" "b\x1b" "c\x7f" "d", false, "a" R "b" R "c" R "d",
	      "C0 controls and DEL become U+FFFD");
	clean("\xc2\x85", false, R R, "a C1 control: one U+FFFD per byte");
	clean("\xef\xbf\xbe\xef\xbf\xbf", false, R R R R R R,
	      "U+FFFE and U+FFFF, which XML refuses");
	clean("\xef\xbf\xbd", false, R, "U+FFFD itself stays");
	clean("x\xffy\xfe", false, "x" R "y" R, "bytes never in UTF-8");
	clean("\x80\xbf", false, R R, "stray continuation bytes");
	clean("\xc0\xaf\xe0\x80\xaf", false, R R R R R, "overlong forms");
	clean("\xed\xa0\x80", false, R R R, "an encoded surrogate");
	clean("\xf4\x90\x80\x80", false, R R R R, "past U+10FFFF");
	clean("\xe2\x80", false, R R, "a sequence cut short by the end");
	clean("\xe2\x80z", false, R R "z", "a sequence cut short by ASCII");
	clean("a\nb\tc\rd", false, "a" R "b" R "c" R "d",
	      "newline, tab and CR are controls in a one-line text");
	clean("a\nb", true, "a\nb", "a kept newline stays");
	clean("", false, "", "the empty text");
	escaped("<a href=\"x\">&'b'</a>",
		"&lt;a href=&quot;x&quot;&gt;&amp;&apos;b&apos;&lt;/a&gt;",
		"xml_put_text: specials as entities");
	escaped("]]>\x01\xff--", "]]&gt;" R R "--",
		"xml_put_text: ]]>, a control, a byte not UTF-8");
	return tap_done();
}
