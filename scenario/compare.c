// SPDX-License-Identifier: GPL-2.0-only
/*
 * compare.c - reading a printed record back, and comparing two records.
 *
 * The reader is strict: a record is machine output, so anything that
 * record.c would not print (a run whose ranges disagree with its count, a
 * frame number out of canonical order, a stat line with no statement) is
 * an error with its line number rather than a guess.  It is lenient only
 * about blank lines and about header lines other than the
 * "# backend ..." one, which it skips.
 *
 * The comparator walks both records in step and stops at the first
 * difference, which it explains in one line.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/compare.h"
#include "scenario/record.h"
#include "scenario/scenario.h"
#include "scenario/vocab.h"

/* ---- the reader ------------------------------------------------------- */

struct reader {
	struct record *r;
	FILE *err;
	int line;
	char **tok;		/* the current line's tokens */
	int nr_tok, cap_tok;
	uint64_t max_frame;	/* highest frame so far in this snapshot */
};

static int __attribute__((format(printf, 2, 3)))
rerr(struct reader *rd, const char *fmt, ...)
{
	va_list ap;

	fprintf(rd->err, "%s:%d: ", rd->r->name, rd->line);
	va_start(ap, fmt);
	vfprintf(rd->err, fmt, ap);
	va_end(ap);
	fputc('\n', rd->err);
	return -1;
}

static int out_of_memory(struct reader *rd)
{
	return rerr(rd, "out of memory");
}

/* Split @line (modified in place) at spaces and tabs. */
static int tokenize(struct reader *rd, char *line)
{
	char *save = NULL, *t;

	rd->nr_tok = 0;
	for (t = strtok_r(line, " \t", &save); t;
	     t = strtok_r(NULL, " \t", &save)) {
		if (rd->nr_tok == rd->cap_tok) {
			int cap = rd->cap_tok ? rd->cap_tok * 2 : 32;
			char **tok = realloc(rd->tok, cap * sizeof(*tok));

			if (!tok)
				return out_of_memory(rd);
			rd->tok = tok;
			rd->cap_tok = cap;
		}
		rd->tok[rd->nr_tok++] = t;
	}
	return 0;
}

/* A plain count: decimal, or 0x hex; no sign, no suffix. */
static int parse_count(const char *tok, uint64_t *out)
{
	unsigned int base = 10;
	uint64_t v = 0;
	int digits = 0, d;

	if (tok[0] == '0' && tok[1] == 'x') {
		base = 16;
		tok += 2;
	}
	for (; *tok; tok++, digits++) {
		if (*tok >= '0' && *tok <= '9')
			d = *tok - '0';
		else if (base == 16 && *tok >= 'a' && *tok <= 'f')
			d = *tok - 'a' + 10;
		else
			return -EINVAL;
		if (v > (UINT64_MAX - d) / base)
			return -ERANGE;
		v = v * base + d;
	}
	if (!digits)
		return -EINVAL;
	*out = v;
	return 0;
}

static int take_count(struct reader *rd, const char *what, const char *tok,
		      uint64_t *out)
{
	if (parse_count(tok, out))
		return rerr(rd, "bad %s '%s'", what, tok);
	return 0;
}

static int take_ulong(struct reader *rd, const char *what, const char *tok,
		      unsigned long *out)
{
	uint64_t v;

	if (take_count(rd, what, tok, &v))
		return -1;
	if (v > ULONG_MAX)
		return rerr(rd, "%s '%s' is too large", what, tok);
	*out = v;
	return 0;
}

/*
 * A fault count, "F" or "F~": a timed run marks the counts that were not
 * the same in every run with "~".  The count is still the printed run's,
 * compared as any other.
 */
static int take_faults(struct reader *rd, const char *what, char *tok,
		       unsigned long *out)
{
	size_t len = strlen(tok);

	if (len > 1 && tok[len - 1] == '~')
		tok[len - 1] = '\0';
	return take_ulong(rd, what, tok, out);
}

/*
 * "time US" of a timed kernel run: a number of microseconds, read and
 * not kept.  Times are no part of a comparison (the model's would not be
 * the kernel's), so a timed record compares as an untimed one.
 */
static int take_time(struct reader *rd, int i)
{
	char *end;
	double us;

	if (i == rd->nr_tok)
		return rerr(rd, "time: no microseconds");
	errno = 0;
	us = strtod(rd->tok[i], &end);
	/* Digits first: strtod() would take "inf", "nan" and "-1" too. */
	if (rd->tok[i][0] < '0' || rd->tok[i][0] > '9' || *end || errno ||
	    !(us >= 0))
		return rerr(rd, "bad time '%s': expected microseconds, e.g."
			    " 12.34", rd->tok[i]);
	return 0;
}

static int take_byte(struct reader *rd, const char *what, const char *tok,
		     uint8_t *out)
{
	uint64_t v;

	if (strncmp(tok, "0x", 2) || parse_count(tok, &v) || v > 0xff)
		return rerr(rd, "bad %s '%s': expected a byte in hex, 0x00..0xff",
			    what, tok);
	*out = v;
	return 0;
}

/* "A..B" or "A" (then B = A). */
static int take_range(struct reader *rd, const char *what, char *tok,
		      uint64_t *a, uint64_t *b, bool *is_range)
{
	char *dots = strstr(tok, "..");
	int ret;

	*is_range = dots != NULL;
	if (!dots) {
		ret = take_count(rd, what, tok, a);
		*b = *a;
		return ret;
	}
	*dots = '\0';
	ret = parse_count(tok, a) || parse_count(dots + 2, b);
	*dots = '.';
	if (ret)
		return rerr(rd, "bad %s range '%s'", what, tok);
	if (*b < *a)
		return rerr(rd, "%s range '%s' runs backwards", what, tok);
	return 0;
}

static char *dup_str(struct reader *rd, const char *s)
{
	char *d = strdup(s);

	if (!d)
		out_of_memory(rd);
	return d;
}

/* The id of process or region name @s, added if new; -1 on error. */
static int intern(struct reader *rd, const char *s)
{
	struct record *r = rd->r;
	char **names;
	int i;

	for (i = 0; i < r->nr_names; i++)
		if (!strcmp(r->names[i], s))
			return i;
	names = realloc(r->names, (r->nr_names + 1) * sizeof(*names));
	if (!names)
		return out_of_memory(rd);
	r->names = names;
	names[r->nr_names] = dup_str(rd, s);
	if (!names[r->nr_names])
		return -1;
	return r->nr_names++;
}

static struct rec_stmt *last_stmt(struct reader *rd)
{
	return rd->r->nr_stmts ? &rd->r->stmts[rd->r->nr_stmts - 1] : NULL;
}

/*
 * "# backend B variant V arch A"; other comment lines ("# time: ...",
 * a statement's "# note: ...") are skipped wherever they are.
 */
static int read_header(struct reader *rd)
{
	struct record *r = rd->r;
	char **field;
	int i;

	if (rd->nr_tok < 2 || strcmp(rd->tok[1], "backend"))
		return 0;
	if (r->nr_stmts)
		return rerr(rd, "header line after the first statement");
	if (rd->nr_tok % 2 == 0)
		return rerr(rd, "header: expected KEY VALUE pairs after '#'");
	for (i = 1; i < rd->nr_tok; i += 2) {
		if (!strcmp(rd->tok[i], "backend"))
			field = &r->backend;
		else if (!strcmp(rd->tok[i], "variant"))
			field = &r->variant;
		else if (!strcmp(rd->tok[i], "arch"))
			field = &r->arch;
		else
			continue;
		free(*field);
		*field = dup_str(rd, rd->tok[i + 1]);
		if (!*field)
			return -1;
	}
	return 0;
}

/* "data -" or "data 0x03*4096 0x09 ...", from token @i on. */
static int read_data(struct reader *rd, struct rec_stmt *st, int i)
{
	const unsigned long limit = SCN_MAX_REGION_LEN;
	unsigned long cap = 0, n;
	uint8_t byte, *data;
	char *star;
	int ret;

	st->has_data = true;
	if (i == rd->nr_tok)
		return rerr(rd, "data: no bytes (an empty drain is 'data -')");
	if (!strcmp(rd->tok[i], "-"))
		return i + 1 == rd->nr_tok ? 0 :
			rerr(rd, "data: '-' followed by '%s'", rd->tok[i + 1]);
	for (; i < rd->nr_tok; i++) {
		n = 1;
		star = strchr(rd->tok[i], '*');
		if (star) {
			*star = '\0';
			if (take_ulong(rd, "data count", star + 1, &n))
				return -1;
			if (!n)
				return rerr(rd, "data count 0 in '%s*%s'",
					    rd->tok[i], star + 1);
		}
		ret = take_byte(rd, "data byte", rd->tok[i], &byte);
		if (ret)
			return ret;
		if (n > limit - st->data_len)
			return rerr(rd, "data: more than %lu bytes", limit);
		if (st->data_len + n > cap) {
			cap = 2 * (st->data_len + n);
			data = realloc(st->data, cap);
			if (!data)
				return out_of_memory(rd);
			st->data = data;
		}
		memset(st->data + st->data_len, byte, n);
		st->data_len += n;
	}
	return 0;
}

/*
 * After "N TEXT:": "faults F [(CHILD F)] [time US] [data ...]" or "error
 * ENAME"; a timed run's counts may end in "~".
 */
static int read_result(struct reader *rd, struct rec_stmt *st, int i)
{
	char *child;
	size_t len;

	if (i == rd->nr_tok)
		return rerr(rd, "no result after ':'");
	if (!strcmp(rd->tok[i], "error")) {
		st->result = REC_ERROR;
		if (i + 2 != rd->nr_tok)
			return rerr(rd, "error: expected one errno name");
		st->errname = dup_str(rd, rd->tok[i + 1]);
		return st->errname ? 0 : -1;
	}
	if (strcmp(rd->tok[i], "faults"))
		return rerr(rd, "result '%s': expected 'faults' or 'error'",
			    rd->tok[i]);
	st->result = REC_OK;
	if (i + 1 == rd->nr_tok)
		return rerr(rd, "faults: no count");
	if (take_faults(rd, "fault count", rd->tok[i + 1], &st->faults))
		return -1;
	i += 2;
	if (i < rd->nr_tok && rd->tok[i][0] == '(') {
		if (i + 1 == rd->nr_tok)
			return rerr(rd, "fork: expected '(CHILD FAULTS)'");
		child = rd->tok[i + 1];
		len = strlen(child);
		if (!rd->tok[i][1] || child[len - 1] != ')')
			return rerr(rd, "fork: expected '(CHILD FAULTS)'");
		child[len - 1] = '\0';
		if (take_faults(rd, "child fault count", child,
				&st->child_faults))
			return -1;
		st->child = dup_str(rd, rd->tok[i] + 1);
		if (!st->child)
			return -1;
		i += 2;
	}
	if (i < rd->nr_tok && (!strcmp(rd->tok[i], "time") ||
			       !strcmp(rd->tok[i], "insns"))) {
		if (take_time(rd, i + 1))
			return -1;
		i += 2;
	}
	if (i < rd->nr_tok && !strcmp(rd->tok[i], "data"))
		return read_data(rd, st, i + 1);
	if (i < rd->nr_tok)
		return rerr(rd, "unexpected '%s' after the result", rd->tok[i]);
	return 0;
}

/* "N TEXT" or "N TEXT: RESULT"; @raw is the untokenized line. */
static int read_statement(struct reader *rd, const char *raw)
{
	struct record *r = rd->r;
	struct rec_stmt *st;
	const char *text, *colon;
	uint64_t number;
	size_t n;
	int i;

	if (r->nr_stmts == r->cap_stmts) {
		int cap = r->cap_stmts ? r->cap_stmts * 2 : 32;
		struct rec_stmt *stmts = realloc(r->stmts, cap * sizeof(*stmts));

		if (!stmts)
			return out_of_memory(rd);
		r->stmts = stmts;
		r->cap_stmts = cap;
	}
	st = &r->stmts[r->nr_stmts++];
	memset(st, 0, sizeof(*st));
	st->line = rd->line;
	if (take_count(rd, "statement number", rd->tok[0], &number))
		return -1;
	if (number != (uint64_t)r->nr_stmts)
		return rerr(rd, "statement %s: expected statement %d",
			    rd->tok[0], r->nr_stmts);
	st->number = r->nr_stmts;
	if (rd->nr_tok < 2)
		return rerr(rd, "statement %d has no text", st->number);

	/* The text is the raw line between the number and the colon: the
	 * printer folded its spaces already.  No statement word contains a
	 * colon, so the first one starts the result. */
	text = raw + strspn(raw, " \t");
	text += strlen(rd->tok[0]);
	text += strspn(text, " \t");
	colon = strchr(text, ':');
	st->text = colon ? strndup(text, colon - text) : strdup(text);
	if (!st->text)
		return out_of_memory(rd);
	for (n = strlen(st->text); n && strchr(" \t\r", st->text[n - 1]);)
		st->text[--n] = '\0';
	if (!colon) {
		st->observe = !strcmp(st->text, "observe");
		return 0;
	}
	/* The token after the one ending in ':' starts the result. */
	for (i = 1; i < rd->nr_tok; i++)
		if (strchr(rd->tok[i], ':'))
			break;
	if (i == rd->nr_tok || rd->tok[i][strlen(rd->tok[i]) - 1] != ':')
		return rerr(rd, "statement %d: expected ': ' before the result",
			    st->number);
	return read_result(rd, st, i + 1);
}

/* "  stat NAME VALUE", "  kstat NAME VALUE" or "  count FUNCTION N". */
static int read_stat(struct reader *rd, const char *word)
{
	struct rec_stmt *st = last_stmt(rd);
	bool kernel = !strcmp(word, "kstat"), count = !strcmp(word, "count");
	struct rec_stat **arr, *stats, *s;
	int *nr;

	if (!st || st->result == REC_NONE)
		return rerr(rd, "%s line without a statement result before it",
			    word);
	if (rd->nr_tok != 3)
		return rerr(rd, "%s: expected '%s NAME VALUE'", word, word);
	arr = count ? &st->fcounts : kernel ? &st->kstats : &st->stats;
	nr = count ? &st->nr_fcounts : kernel ? &st->nr_kstats : &st->nr_stats;
	stats = realloc(*arr, (*nr + 1) * sizeof(*stats));
	if (!stats)
		return out_of_memory(rd);
	*arr = stats;
	s = &stats[*nr];
	if (take_count(rd, count ? "count value" : kernel ? "kstat value" :
		       "stat value", rd->tok[2], &s->value))
		return -1;
	s->name = dup_str(rd, rd->tok[1]);
	if (!s->name)
		return -1;
	(*nr)++;
	return 0;
}

/*
 * Frames are numbered from 1 in order of first appearance: a frame is
 * either one seen before or the next new one.
 */
static int check_frame(struct reader *rd, uint64_t frame)
{
	if (!frame || frame > rd->max_frame + 1)
		return rerr(rd, "frame %" PRIu64 " is not canonical (the next"
			    " new frame is %" PRIu64 ")", frame,
			    rd->max_frame + 1);
	if (frame > rd->max_frame)
		rd->max_frame = frame;
	return 0;
}

static int add_page(struct reader *rd, struct rec_stmt *st,
		    const struct rec_page *pg)
{
	if (st->nr_pages == st->cap_pages) {
		unsigned long cap = st->cap_pages ? st->cap_pages * 2 : 256;
		struct rec_page *pages = realloc(st->pages,
						 cap * sizeof(*pages));

		if (!pages)
			return out_of_memory(rd);
		st->pages = pages;
		st->cap_pages = cap;
	}
	st->pages[st->nr_pages++] = *pg;
	return 0;
}

/*
 * "PROC REGION 0xOFF absent [xN]" or
 * "PROC REGION 0xOFF present size S index I[..J] frame F[..G] data 0xDD [xN]"
 */
static int read_page_line(struct reader *rd)
{
	struct rec_stmt *st = last_stmt(rd);
	unsigned long page_size = rd->r->page_size;
	uint64_t count = 1, index, index_end, frame, frame_end, i;
	bool index_run = false, frame_run = false;
	struct rec_page pg;
	int nr = rd->nr_tok, fields;

	if (!st || !st->observe)
		return rerr(rd, "snapshot line outside an observe");
	if (!page_size)
		return rerr(rd, "page size unknown: arch '%s' is not one this"
			    " reader knows", rd->r->arch ? rd->r->arch : "-");
	memset(&pg, 0, sizeof(pg));
	pg.line = rd->line;
	if (nr > 0 && rd->tok[nr - 1][0] == 'x') {
		if (take_count(rd, "run count", rd->tok[nr - 1] + 1, &count))
			return -1;
		if (!count || count > SCN_MAX_REGION_LEN / page_size)
			return rerr(rd, "run count %s out of range",
				    rd->tok[nr - 1]);
		nr--;
	}
	if (nr < 4)
		return rerr(rd, "snapshot line: expected PROC REGION OFFSET"
			    " present|absent");
	pg.proc = intern(rd, rd->tok[0]);
	pg.region = intern(rd, rd->tok[1]);
	if (pg.proc < 0 || pg.region < 0)
		return -1;
	if (strncmp(rd->tok[2], "0x", 2))
		return rerr(rd, "offset '%s': expected 0x hex", rd->tok[2]);
	if (take_ulong(rd, "offset", rd->tok[2], &pg.off))
		return -1;
	if (pg.off % page_size)
		return rerr(rd, "offset %s is not a multiple of the page size"
			    " (%lu)", rd->tok[2], page_size);

	if (!strcmp(rd->tok[3], "absent")) {
		if (nr != 4)
			return rerr(rd, "unexpected '%s' after absent",
				    rd->tok[4]);
		for (i = 0; i < count; i++, pg.off += page_size)
			if (add_page(rd, st, &pg))
				return -1;
		return 0;
	}
	if (strcmp(rd->tok[3], "present"))
		return rerr(rd, "'%s': expected present or absent", rd->tok[3]);
	fields = nr - 4;
	if (fields != 8 || strcmp(rd->tok[4], "size") ||
	    strcmp(rd->tok[6], "index") || strcmp(rd->tok[8], "frame") ||
	    strcmp(rd->tok[10], "data"))
		return rerr(rd, "expected 'present size S index I frame F"
			    " data 0xDD [xN]'");
	pg.present = true;
	if (scenario_parse_number(rd->tok[5], &pg.size) || !pg.size ||
	    pg.size % page_size)
		return rerr(rd, "bad folio size '%s'", rd->tok[5]);
	if (take_range(rd, "index", rd->tok[7], &index, &index_end,
		       &index_run) ||
	    take_range(rd, "frame", rd->tok[9], &frame, &frame_end,
		       &frame_run) ||
	    take_byte(rd, "data", rd->tok[11], &pg.data))
		return -1;
	/* A counting run: index and frame both step by one per page. */
	if (index_run != frame_run)
		return rerr(rd, "index and frame must both be ranges or"
			    " neither");
	if (index_run && (index_end - index + 1 != count ||
			  frame_end - frame + 1 != count))
		return rerr(rd, "ranges %s and %s do not hold x%" PRIu64
			    " pages", rd->tok[7], rd->tok[9], count);
	if (index_end >= pg.size / page_size)
		return rerr(rd, "index %" PRIu64 " lies outside a folio of %s",
			    index_end, rd->tok[5]);
	for (i = 0; i < count; i++, pg.off += page_size) {
		pg.index = index + (index_run ? i : 0);
		pg.frame = frame + (frame_run ? i : 0);
		if (check_frame(rd, pg.frame) || add_page(rd, st, &pg))
			return -1;
	}
	return 0;
}

static int read_line(struct reader *rd, char *line)
{
	char *raw = dup_str(rd, line);
	bool indented = line[0] == ' ' || line[0] == '\t';
	int ret;

	if (!raw)
		return -1;
	ret = tokenize(rd, line);
	if (ret || !rd->nr_tok)
		goto out;
	if (rd->tok[0][0] == '#') {
		ret = read_header(rd);
	} else if (indented) {
		if (!strcmp(rd->tok[0], "stat") ||
		    !strcmp(rd->tok[0], "kstat") ||
		    !strcmp(rd->tok[0], "count"))
			ret = read_stat(rd, rd->tok[0]);
		else
			ret = rerr(rd, "indented line: expected '  stat NAME"
				   " VALUE', '  kstat NAME VALUE' or '  count"
				   " FUNCTION N'");
	} else if (rd->tok[0][0] >= '0' && rd->tok[0][0] <= '9') {
		rd->max_frame = 0;
		ret = read_statement(rd, raw);
	} else {
		ret = read_page_line(rd);
	}
out:
	free(raw);
	return ret;
}

struct record *record_parse(const char *name, const char *text, size_t len,
			    unsigned long page_size, FILE *err)
{
	struct reader rd = { .err = err };
	const char *c = text, *end = text + len, *nl;
	char *line = NULL;
	size_t cap = 0, n;
	int ret = 0;

	rd.r = calloc(1, sizeof(*rd.r));
	if (!rd.r || !(rd.r->name = strdup(name))) {
		fprintf(err, "%s: out of memory\n", name);
		free(rd.r);
		return NULL;
	}
	rd.r->page_size = page_size;
	for (; c < end && !ret; c = nl ? nl + 1 : end) {
		nl = memchr(c, '\n', end - c);
		n = nl ? (size_t)(nl - c) : (size_t)(end - c);
		if (n + 1 > cap) {
			char *bigger = realloc(line, n + 1);

			if (!bigger) {
				ret = out_of_memory(&rd);
				break;
			}
			line = bigger;
			cap = n + 1;
		}
		memcpy(line, c, n);
		line[n] = '\0';
		rd.line++;
		if (memchr(line, '\0', n)) {
			ret = rerr(&rd, "NUL byte in the record");
			break;
		}
		ret = read_line(&rd, line);
		/* The header names the arch before any page line needs it. */
		if (!ret && !rd.r->page_size)
			rd.r->page_size = scn_arch_page_size(rd.r->arch);
	}
	free(line);
	free(rd.tok);
	if (ret) {
		record_free(rd.r);
		return NULL;
	}
	return rd.r;
}

void record_free(struct record *r)
{
	int i, j;

	if (!r)
		return;
	for (i = 0; i < r->nr_stmts; i++) {
		struct rec_stmt *st = &r->stmts[i];

		free(st->text);
		free(st->errname);
		free(st->child);
		free(st->data);
		for (j = 0; j < st->nr_stats; j++)
			free(st->stats[j].name);
		free(st->stats);
		for (j = 0; j < st->nr_kstats; j++)
			free(st->kstats[j].name);
		free(st->kstats);
		for (j = 0; j < st->nr_fcounts; j++)
			free(st->fcounts[j].name);
		free(st->fcounts);
		free(st->pages);
	}
	for (i = 0; i < r->nr_names; i++)
		free(r->names[i]);
	free(r->names);
	free(r->stmts);
	free(r->name);
	free(r->backend);
	free(r->variant);
	free(r->arch);
	free(r);
}

/* ---- the comparator --------------------------------------------------- */

struct cmp {
	const struct record *base, *other;
	unsigned int rules;
	FILE *explain;
};

/*
 * The one line that explains a difference:
 * "statement N (TEXT): WHAT (BASE:LINE, OTHER:LINE)".
 */
static int __attribute__((format(printf, 5, 6)))
differ(const struct cmp *c, const struct rec_stmt *st, int base_line,
       int other_line, const char *fmt, ...)
{
	va_list ap;

	if (!c->explain)
		return 1;
	if (st)
		fprintf(c->explain, "statement %d (%s): ", st->number, st->text);
	va_start(ap, fmt);
	vfprintf(c->explain, fmt, ap);
	va_end(ap);
	fprintf(c->explain, " (%s:%d, %s:%d)\n", c->base->name, base_line,
		c->other->name, other_line);
	return 1;
}

/* One page as a snapshot line would show it alone. */
static const char *page_text(char *buf, size_t size, const struct record *r,
			     const struct rec_page *pg)
{
	char sz[32];
	int n = snprintf(buf, size, "%s %s 0x%07lx ", record_name(r, pg->proc),
			 record_name(r, pg->region), pg->off);

	if (n < 0 || (size_t)n >= size)
		return buf;
	if (!pg->present) {
		snprintf(buf + n, size - n, "absent");
		return buf;
	}
	record_size_text(sz, sizeof(sz), pg->size);
	snprintf(buf + n, size - n, "present size %s index %lu frame %" PRIu64
		 " data 0x%02x", sz, pg->index, pg->frame, pg->data);
	return buf;
}

static const char *result_text(char *buf, size_t size,
			       const struct rec_stmt *st)
{
	switch (st->result) {
	case REC_NONE:
		return "no result";
	case REC_ERROR:
		snprintf(buf, size, "error %s", st->errname);
		return buf;
	case REC_OK:
		break;
	}
	snprintf(buf, size, "faults %lu", st->faults);
	return buf;
}

/* Faults of @other against @base, under the rules. */
static int compare_faults(const struct cmp *c, const struct rec_stmt *b,
			  const struct rec_stmt *o, const char *what,
			  unsigned long fb, unsigned long fo)
{
	if (fo == fb)
		return 0;
	if (c->rules & CMP_SAME_FRAMES)
		return differ(c, b, b->line, o->line, "%s: %lu in %s, %lu in %s"
			      " (must be equal)", what, fb, c->base->name, fo,
			      c->other->name);
	if (fo > fb)
		return differ(c, b, b->line, o->line, "%s: %lu in %s, %lu in %s"
			      " (may only fall)", what, fb, c->base->name, fo,
			      c->other->name);
	return 0;
}

static int compare_data(const struct cmp *c, const struct rec_stmt *b,
			const struct rec_stmt *o)
{
	unsigned long i, n;

	if (b->has_data != o->has_data)
		return differ(c, b, b->line, o->line, "drain data in %s only",
			      b->has_data ? c->base->name : c->other->name);
	n = b->data_len < o->data_len ? b->data_len : o->data_len;
	for (i = 0; i < n; i++)
		if (b->data[i] != o->data[i])
			return differ(c, b, b->line, o->line, "drained byte"
				      " %#lx: 0x%02x in %s, 0x%02x in %s", i,
				      b->data[i], c->base->name, o->data[i],
				      c->other->name);
	if (b->data_len != o->data_len)
		return differ(c, b, b->line, o->line, "drained %lu bytes in %s,"
			      " %lu in %s", b->data_len, c->base->name,
			      o->data_len, c->other->name);
	return 0;
}

static int compare_result(const struct cmp *c, const struct rec_stmt *b,
			  const struct rec_stmt *o)
{
	char bt[64], ot[64];
	int ret;

	if (b->result != o->result ||
	    (b->result == REC_ERROR && strcmp(b->errname, o->errname)))
		return differ(c, b, b->line, o->line, "%s in %s, %s in %s",
			      result_text(bt, sizeof(bt), b), c->base->name,
			      result_text(ot, sizeof(ot), o), c->other->name);
	if (b->result != REC_OK)
		return 0;
	ret = compare_faults(c, b, o, "faults", b->faults, o->faults);
	if (ret)
		return ret;
	if (!b->child != !o->child || (b->child && strcmp(b->child, o->child)))
		return differ(c, b, b->line, o->line, "child %s in %s, %s in %s",
			      b->child ? b->child : "none", c->base->name,
			      o->child ? o->child : "none", c->other->name);
	if (b->child) {
		ret = compare_faults(c, b, o, "child faults", b->child_faults,
				     o->child_faults);
		if (ret)
			return ret;
	}
	return compare_data(c, b, o);
}

/*
 * A page @base copied to a 4K order-0 folio that @other still has inside
 * a larger folio: the one frame difference batched reuse may make.
 */
static bool kept_in_folio(const struct record *base, const struct rec_page *b,
			  const struct rec_page *o)
{
	return b->size == base->page_size && b->index == 0 &&
	       o->size > base->page_size;
}

/*
 * The other frame difference: exclusivity has a second visible effect.
 * When batched reuse made the pages of a folio exclusive and the folio is
 * pinned, fork must give the child its own copy of every exclusive page
 * (folio_try_dup_anon_rmap_ptes refuses them), where the per-PTE variant
 * shared the ones it never made exclusive.  So @other may show a 4K
 * order-0 copy where @base shows a later process sharing a page of a large
 * folio with an earlier one (@shared).
 */
static bool copied_at_fork(const struct record *base, const struct rec_page *b,
			   const struct rec_page *o, bool shared)
{
	return shared && b->size > base->page_size &&
	       o->size == base->page_size && o->index == 0;
}

/* frame -> the first page (index + 1) seen with it, 0 for none. */
struct frame_index {
	unsigned long *first;
	uint64_t nr;
};

static int frame_index_init(struct frame_index *fi, const struct rec_stmt *st)
{
	uint64_t max = 0;
	unsigned long i;

	for (i = 0; i < st->nr_pages; i++)
		if (st->pages[i].frame > max)
			max = st->pages[i].frame;
	fi->nr = max + 1;
	fi->first = calloc(fi->nr, sizeof(*fi->first));
	return fi->first ? 0 : -ENOMEM;
}

/*
 * The sharing structure of the pages that are not allowed to differ:
 * two of them share a frame in @other exactly when they share one in
 * @base.  Each frame of either side is tied to the first such page that
 * shows it; a later page with the same frame on one side must have that
 * page's frame on the other side too.
 */
static int compare_sharing(const struct cmp *c, const struct rec_stmt *bs,
			   const struct rec_stmt *os, const bool *exempt)
{
	const struct rec_stmt *side[2] = { bs, os };
	const struct record *rec[2] = { c->base, c->other };
	struct frame_index fi[2] = { { 0 } };
	char t1[160], t2[160], t3[160], t4[160];
	unsigned long i, j;
	int s, ret = 0;

	if (frame_index_init(&fi[0], bs) || frame_index_init(&fi[1], os)) {
		ret = differ(c, bs, bs->line, os->line,
			     "out of memory comparing frames");
		goto out;
	}
	for (i = 0; i < bs->nr_pages && !ret; i++) {
		if (!bs->pages[i].present || exempt[i])
			continue;
		for (s = 0; s < 2 && !ret; s++) {
			const struct rec_page *pg = &side[s]->pages[i];
			const struct rec_page *peer = &side[!s]->pages[i];

			j = fi[s].first[pg->frame];
			if (!j) {
				fi[s].first[pg->frame] = i + 1;
				continue;
			}
			j--;
			if (side[!s]->pages[j].frame == peer->frame)
				continue;
			ret = differ(c, bs, bs->pages[i].line, os->pages[i].line,
				     "%s shares its frame with %s in %s, but"
				     " not in %s: %s, %s",
				     page_text(t1, sizeof(t1), rec[s], pg),
				     page_text(t2, sizeof(t2), rec[s],
					       &side[s]->pages[j]),
				     rec[s]->name, rec[!s]->name,
				     page_text(t3, sizeof(t3), rec[!s], peer),
				     page_text(t4, sizeof(t4), rec[!s],
					       &side[!s]->pages[j]));
		}
	}
out:
	free(fi[0].first);
	free(fi[1].first);
	return ret;
}

/*
 * One page of a snapshot.  Sets *exempt for a page whose folio may
 * differ (and whose frame then takes no part in the sharing structure).
 */
static int compare_page(const struct cmp *c, const struct rec_stmt *bs,
			const struct rec_page *b, const struct rec_page *o,
			bool shared, bool *exempt)
{
	const struct record *br = c->base, *orr = c->other;
	char bt[160], ot[160], why[160] = "";

	if (strcmp(record_name(br, b->proc), record_name(orr, o->proc)) ||
	    strcmp(record_name(br, b->region), record_name(orr, o->region)) ||
	    b->off != o->off || b->present != o->present ||
	    (b->present && b->data != o->data))
		goto differs;
	if (!b->present)
		return 0;
	if (c->rules & CMP_SAME_FRAMES) {
		if (b->size == o->size && b->index == o->index &&
		    b->frame == o->frame)
			return 0;
		goto differs;
	}
	if (b->size == o->size && b->index == o->index)
		return 0;
	if (kept_in_folio(br, b, o) || copied_at_fork(br, b, o, shared)) {
		*exempt = true;
		return 0;
	}
	snprintf(why, sizeof(why), " (only a page %s copied may stay in its"
		 " folio in %s, or a page %s shares be a fork's copy in %s)",
		 br->name, orr->name, br->name, orr->name);
differs:
	return differ(c, bs, b->line, o->line, "%s in %s, %s in %s%s",
		      page_text(bt, sizeof(bt), br, b), br->name,
		      page_text(ot, sizeof(ot), orr, o), orr->name, why);
}

/*
 * shared[i]: page i's frame was already mapped by an earlier process of
 * the snapshot - processes come in creation order, so by the process a
 * fork could have shared it from.  The first mapper (the parent) keeps
 * its page at fork; only a later one can hold a fork's copy.
 */
static int base_sharing(const struct rec_stmt *st, bool *shared)
{
	struct frame_index fi;
	unsigned long i;

	if (frame_index_init(&fi, st))
		return -ENOMEM;
	for (i = 0; i < st->nr_pages; i++) {
		const struct rec_page *pg = &st->pages[i];
		unsigned long j;

		if (!pg->present)
			continue;
		j = fi.first[pg->frame];
		if (!j) {
			fi.first[pg->frame] = i + 1;
			continue;
		}
		if (st->pages[j - 1].proc != pg->proc)
			shared[i] = true;
	}
	free(fi.first);
	return 0;
}

static int compare_snapshot(const struct cmp *c, const struct rec_stmt *bs,
			    const struct rec_stmt *os)
{
	unsigned long i, n = bs->nr_pages < os->nr_pages ? bs->nr_pages :
							   os->nr_pages;
	bool *exempt = calloc(n + 1, sizeof(*exempt));
	bool *shared = calloc(bs->nr_pages + 1, sizeof(*shared));
	int ret = 0;

	if (!exempt || !shared || base_sharing(bs, shared)) {
		free(exempt);
		free(shared);
		return differ(c, bs, bs->line, os->line,
			      "out of memory comparing snapshots");
	}
	for (i = 0; i < n && !ret; i++)
		ret = compare_page(c, bs, &bs->pages[i], &os->pages[i],
				   shared[i], &exempt[i]);
	free(shared);
	if (!ret && bs->nr_pages != os->nr_pages)
		ret = differ(c, bs, bs->line, os->line, "%lu pages in %s, %lu"
			     " in %s", bs->nr_pages, c->base->name,
			     os->nr_pages, c->other->name);
	if (!ret && !(c->rules & CMP_SAME_FRAMES))
		ret = compare_sharing(c, bs, os, exempt);
	free(exempt);
	return ret;
}

int compare_records(const struct record *base, const struct record *other,
		    unsigned int rules, FILE *explain)
{
	return compare_records_where(base, other, rules, explain, NULL);
}

int compare_records_where(const struct record *base,
			  const struct record *other, unsigned int rules,
			  FILE *explain, int *where)
{
	struct cmp c = { base, other, rules, explain };
	int i, n, ret;

	if (where)
		*where = -1;

	if (!(rules & CMP_IGNORE_HEADER) && base->arch && other->arch &&
	    strcmp(base->arch, other->arch))
		return differ(&c, NULL, 1, 1, "arch %s in %s, %s in %s",
			      base->arch, base->name, other->arch, other->name);
	if (base->page_size != other->page_size)
		return differ(&c, NULL, 1, 1, "page size %lu in %s, %lu in %s",
			      base->page_size, base->name, other->page_size,
			      other->name);
	n = base->nr_stmts < other->nr_stmts ? base->nr_stmts : other->nr_stmts;
	for (i = 0; i < n; i++) {
		const struct rec_stmt *b = &base->stmts[i], *o = &other->stmts[i];

		if (where)
			*where = i;
		if (strcmp(b->text, o->text))
			return differ(&c, b, b->line, o->line, "text '%s' in %s,"
				      " '%s' in %s", b->text, base->name,
				      o->text, other->name);
		ret = compare_result(&c, b, o);
		if (!ret && b->observe)
			ret = compare_snapshot(&c, b, o);
		if (ret)
			return ret;
	}
	if (where)
		*where = n;
	if (base->nr_stmts != other->nr_stmts) {
		const struct record *longer = base->nr_stmts > n ? base : other;
		const struct rec_stmt *st = &longer->stmts[n];

		return differ(&c, st, longer == base ? st->line : 0,
			      longer == other ? st->line : 0,
			      "only in %s (%d statements in %s, %d in %s)",
			      longer->name, base->nr_stmts, base->name,
			      other->nr_stmts, other->name);
	}
	return 0;
}

/* ---- kernel accounting ------------------------------------------------- */

static uint64_t kstat_value(const struct rec_stmt *st, const char *name)
{
	int i;

	for (i = 0; i < st->nr_kstats; i++)
		if (!strcmp(st->kstats[i].name, name))
			return st->kstats[i].value;
	return 0;
}

/* A record of the same statements as @model's, to compare counters with. */
static bool same_statements(const struct record *model,
			    const struct record *r)
{
	int i;

	if (r->nr_stmts != model->nr_stmts)
		return false;
	for (i = 0; i < r->nr_stmts; i++)
		if (strcmp(r->stmts[i].text, model->stmts[i].text))
			return false;
	return true;
}

/*
 * Counter @name of statement @i: the model's, and the least of the
 * kernel records' with the model's statements (false: no such record).
 */
static bool kstat_pair(const struct record *model,
		       const struct record *const *kernel, int nr_kernel,
		       int i, const char *name, uint64_t *mv, uint64_t *kv)
{
	int r;

	*mv = kstat_value(&model->stmts[i], name);
	*kv = UINT64_MAX;
	for (r = 0; r < nr_kernel; r++) {
		uint64_t v;

		if (!same_statements(model, kernel[r]))
			continue;
		v = kstat_value(&kernel[r]->stmts[i], name);
		if (v < *kv)
			*kv = v;
	}
	return *kv != UINT64_MAX;
}

/* Has a statement before @i's of @kernel's records a counter @name? */
static bool kstat_named_before(const struct rec_stmt *st, int k,
			       const char *name)
{
	int j;

	for (j = 0; j < k; j++)
		if (!strcmp(st->kstats[j].name, name))
			return true;
	return false;
}

/* Is @name a counter of statement @i in a kernel record before @r's? */
static bool kstat_in_earlier_run(const struct record *model,
				 const struct record *const *kernel, int r,
				 int i, const char *name)
{
	int q;

	for (q = 0; q < r; q++)
		if (same_statements(model, kernel[q]) &&
		    kstat_named_before(&kernel[q]->stmts[i],
				       kernel[q]->stmts[i].nr_kstats, name))
			return true;
	return false;
}

void kstats_for_each(const struct record *model,
		     const struct record *const *kernel, int nr_kernel,
		     kstat_visit_fn *visit, void *arg)
{
	uint64_t mv, kv;
	int i, j, r;

	for (i = 0; i < model->nr_stmts; i++) {
		const struct rec_stmt *m = &model->stmts[i];

		/* Each name once: the model's first, then the kernel's. */
		for (j = 0; j < m->nr_kstats; j++)
			if (!kstat_named_before(m, j, m->kstats[j].name) &&
			    kstat_pair(model, kernel, nr_kernel, i,
				       m->kstats[j].name, &mv, &kv))
				visit(arg, m, m->kstats[j].name, mv, kv);
		for (r = 0; r < nr_kernel; r++) {
			const struct rec_stmt *k;

			if (!same_statements(model, kernel[r]))
				continue;
			k = &kernel[r]->stmts[i];
			for (j = 0; j < k->nr_kstats; j++) {
				const char *name = k->kstats[j].name;

				if (kstat_named_before(m, m->nr_kstats, name) ||
				    kstat_in_earlier_run(model, kernel, r, i,
							 name) ||
				    kstat_named_before(k, j, name))
					continue;
				kstat_pair(model, kernel, nr_kernel, i, name,
					   &mv, &kv);
				visit(arg, m, name, mv, kv);
			}
		}
	}
}

bool kstat_agrees(const char *name, uint64_t model, uint64_t kernel)
{
	/* pgfault: a lower bound only (compare.h). */
	return kernel == model || (!strcmp(name, "pgfault") && kernel > model);
}

struct kstat_report {
	const char *prefix;
	FILE *report;
	int differ;
};

static void kstat_report_one(void *arg, const struct rec_stmt *m,
			     const char *name, uint64_t mv, uint64_t kv)
{
	struct kstat_report *kr = arg;

	if (kstat_agrees(name, mv, kv))
		return;
	kr->differ++;
	if (kr->report)
		fprintf(kr->report, "%sstatement %d (%s): %s model %" PRIu64
			" kernel %" PRIu64 "\n", kr->prefix, m->number, m->text,
			name, mv, kv);
}

int compare_kstats(const struct record *model,
		   const struct record *const *kernel, int nr_kernel,
		   const char *prefix, FILE *report)
{
	struct kstat_report kr = { prefix, report, 0 };

	kstats_for_each(model, kernel, nr_kernel, kstat_report_one, &kr);
	return kr.differ;
}
