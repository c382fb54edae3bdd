/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * xmltext.h - any C string as text an XML 1.0 document can carry: the
 * SVGs the tools draw (run --svg, the benchmark figures) show file names
 * and fields of files that may hold any byte.
 *
 * XML 1.0 allows only the characters #x9 | #xA | #xD | [#x20-#xD7FF] |
 * [#xE000-#xFFFD] | [#x10000-#x10FFFF], written here as UTF-8, and no
 * escape brings back the others.  So every byte that does not start a
 * well-formed UTF-8 sequence (a stray continuation byte, a sequence cut
 * short, an overlong form, a surrogate, a code point past U+10FFFF) and
 * every control character (C0 but a kept newline, DEL, C1) or
 * non-character XML refuses (U+FFFE, U+FFFF) is drawn as U+FFFD, the
 * replacement character: one for each byte that is not text.  The rest
 * is drawn as it is.
 */
#ifndef LIB_XMLTEXT_H
#define LIB_XMLTEXT_H

#include <stdbool.h>
#include <stdio.h>

#define XML_REPLACEMENT "\xef\xbf\xbd"	/* U+FFFD in UTF-8 */

/*
 * @s as XML character data or as an attribute's value: what XML cannot
 * carry replaced as above (newlines too), and & < > " ' as entities.
 */
void xml_put_text(FILE *f, const char *s);

/*
 * A copy of @s (malloc'd; NULL when out of memory) with what XML cannot
 * carry replaced as above but nothing escaped: text handed to a program
 * that escapes XML's specials itself (gnuplot's svg terminal).  With
 * @keep_newline, "\n" stays, as a line break.
 */
char *xml_clean_text(const char *s, bool keep_newline);

#endif /* LIB_XMLTEXT_H */
