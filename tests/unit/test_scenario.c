// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_scenario.c - the .scn parser, the runner and the record, without
 * the model: a fake backend in this file plays the statements back.
 *
 * Only pb_stat_name() (a table lookup) is called from the model library.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "scenario/record.h"
#include "scenario/run.h"
#include "scenario/scenario.h"
#include "tests/unit/fixture.h"

#define PAGE 4096UL

/* ---- helpers ---------------------------------------------------------- */


static struct scenario *parse(const char *text, char **err)
{
	struct capture c;
	struct scenario *s;

	s = scenario_parse_string("t.scn", text, PAGE, capture_open(&c));
	*err = capture_close(&c);
	return s;
}

/* ---- parser errors ---------------------------------------------------- */

struct parse_error_case {
	const char *intent;
	const char *text;
	const char *want;	/* substring of the message, after "t.scn:" */
};

static const struct parse_error_case error_cases[] = {
	/* lexical */
	{ "a bad number",
	  "P0 mmap A 12z4 rw\n", "1: bad number '12z4' for LEN" },
	{ "a bad size suffix",
	  "P0 mmap A 4X rw\n", "1: bad size suffix in LEN '4X'" },
	{ "a lowercase suffix is not a suffix",
	  "P0 mmap A 4k rw\n", "1: bad size suffix in LEN '4k'" },
	{ "a number that overflows",
	  "P0 mmap A 99999999999999999999 rw\n", "1: LEN '99999999999999999999' is too large" },
	{ "a suffix that overflows",
	  "P0 mmap A 0xfffffffffffffffK rw\n", "1: LEN '0xfffffffffffffffK' is too large" },
	{ "0x without digits",
	  "P0 mmap A 0x rw\n", "1: bad number '0x'" },
	{ "a negative number",
	  "P0 mmap A -4K rw\n", "1: bad number '-4K'" },
	{ "a bad region name",
	  "P0 mmap 1A 4K rw\n", "1: bad region name '1A'" },
	{ "a name of 32 characters",
	  "P0 mmap A2345678901234567890123456789012 4K rw\n",
	  "1: region name 'A2345678901234567890123456789012' is longer than 31" },
	{ "a name of 31 characters is fine, so the error is elsewhere",
	  "P0 mmap A234567890123456789012345678901 4X rw\n", "1: bad size suffix" },
	{ "too many tokens",
	  "P0 write A 0 4K a b c d e f g h i j k l m\n", "1: too many tokens" },
	{ "line numbers count comments and blank lines",
	  "# a comment\n\n   \t\nP0 mmap A 4X rw\n", "4: bad size suffix" },
	/* statements */
	{ "an unknown statement word",
	  "P0 frob A\n", "1: unknown statement 'frob' (known: mthp observe mmap" },
	{ "an unknown first word",
	  "frobnicate\n", "1: unknown statement 'frobnicate'" },
	{ "a statement without its process",
	  "write A 0 4K\n",
	  "1: write needs the acting process first: usage is 'P write R OFF LEN [stride S] [value V]'" },
	{ "a process without a statement",
	  "P0\n", "1: missing statement word after process P0" },
	{ "a missing argument",
	  "P0 mmap A 4K rw\nP0 munmap A 0\n",
	  "2: missing argument: usage is 'P munmap R OFF LEN'" },
	{ "an extra token",
	  "P0 exit now\n", "1: extra token 'now': usage is 'P exit'" },
	{ "an extra token after mmap's flag",
	  "P0 mmap A 4K rw at 4K room 8K hugepage populate x\n", "1: extra token 'x'" },
	{ "observe with an argument",
	  "observe P0\n", "1: observe takes no arguments" },
	/* mthp */
	{ "mthp after a process statement",
	  "P0 mmap A 4K rw\nmthp 64K always\n",
	  "2: mthp must come before the first process statement" },
	{ "mthp after observe",
	  "observe\nmthp 64K always\n",
	  "2: mthp must come before the first process statement" },
	{ "mthp 2M inherit",
	  "mthp 2M inherit\n",
	  "1: mthp 2M inherit: inherit follows the 2M line, so 2M itself must be always, madvise or never" },
	{ "an mthp size given twice",
	  "mthp 64K always\nmthp 0x10000 never\n", "2: mthp size 0x10000 given twice" },
	{ "an mthp size that is not a folio size",
	  "mthp 8K always\n", "1: mthp SIZE '8K' is not one of" },
	{ "an mthp size above the PMD size",
	  "mthp 4M always\n", "1: mthp SIZE '4M' is not one of" },
	{ "a bad mthp policy",
	  "mthp 64K sometimes\n",
	  "1: bad mthp POLICY 'sometimes': expected always, madvise, inherit or never" },
	{ "mthp without a policy",
	  "mthp 64K\n", "1: missing token: usage is 'mthp SIZE POLICY'" },
	{ "mthp with an extra token",
	  "mthp 64K always now\n", "1: extra tokens after POLICY" },
	/* processes */
	{ "an unknown process",
	  "P1 mmap A 4K rw\n", "1: unknown process 'P1'" },
	{ "a process used after its exit",
	  "P0 fork P1\nP1 exit\nP1 mmap A 4K rw\n", "3: process 'P1' has exited" },
	{ "a process name used again after exit",
	  "P0 fork P1\nP1 exit\nP0 fork P1\n",
	  "3: process name 'P1' is already used (process names are never reused)" },
	{ "fork to P0",
	  "P0 fork P0\n", "1: process name 'P0' is already used" },
	{ "a process named like a statement word",
	  "P0 fork observe\n", "1: process name 'observe' is a statement word" },
	{ "a bad process name",
	  "P0 fork 9x\n", "1: bad process name '9x'" },
	/* regions */
	{ "a region name used twice",
	  "P0 mmap A 4K rw\nP0 mmap A 4K rw\n", "2: region 'A' already exists" },
	{ "a region name used twice across processes",
	  "P0 fork P1\nP0 mmap A 4K rw\nP1 mmap A 4K rw\n", "3: region 'A' already exists" },
	{ "an unknown region",
	  "P0 write A 0 4K\n", "1: unknown region 'A'" },
	{ "a region the process did not create",
	  "P0 fork P1\nP1 mmap B 4K rw\nP0 write B 0 4K\n",
	  "3: process P0 does not have region 'B'" },
	{ "a region the parent created after the fork",
	  "P0 fork P1\nP0 mmap A 4K rw\nP1 read A 0 4K\n",
	  "3: process P1 does not have region 'A'" },
	{ "an mremap target that belongs to another process",
	  "P0 mmap A 8K rw\nP0 fork P1\nP0 mremap A 0 4K S 0\nP1 read S 0 4K\n",
	  "4: process P1 does not have region 'S'" },
	{ "mmap of length 0",
	  "P0 mmap A 0 rw\n", "1: LEN must be greater than 0" },
	{ "mmap of a length that is not a page multiple",
	  "P0 mmap A 4097 rw\n", "1: LEN '4097' is not a multiple of the page size (4096)" },
	{ "mmap larger than a region may be",
	  "P0 mmap A 65G rw\n", "1: LEN '65G' is larger than a region may be" },
	{ "a bad PROT",
	  "P0 mmap A 4K rwx\n", "1: bad PROT 'rwx': expected none, r or rw" },
	{ "a bad mmap flag",
	  "P0 mmap A 4K rw huge\n", "1: bad mmap flag 'huge'" },
	{ "mmap at an offset that is not page aligned",
	  "P0 mmap A 4K rw at 2K\n",
	  "1: at '2K' is not a multiple of the page size (4096)" },
	{ "mmap at 2M or more",
	  "P0 mmap A 4K rw at 2M\n", "1: at '2M' must be below 2M" },
	{ "mmap at without an offset",
	  "P0 mmap A 4K rw at\n", "1: at needs an offset after it" },
	{ "mmap populate twice",
	  "P0 mmap A 4K rw populate populate\n", "1: populate given twice" },
	{ "mmap hugepage and nohugepage",
	  "P0 mmap A 4K rw hugepage nohugepage\n",
	  "1: hugepage or nohugepage given twice" },
	{ "an unknown advice",
	  "P0 mmap A 4K rw\nP0 madvise A 0 4K populate\n",
	  "2: bad ADVICE 'populate'" },
	{ "an unknown mremap option",
	  "P0 mmap A 8K rw\nP0 mremap A 0 4K S 0 unmap\n",
	  "2: unknown mremap option 'unmap'" },
	/* ranges */
	{ "an offset that is not page aligned",
	  "P0 mmap A 8K rw\nP0 write A 2K 4K\n",
	  "2: OFF '2K' is not a multiple of the page size (4096)" },
	{ "a length of 0",
	  "P0 mmap A 8K rw\nP0 munmap A 0 0\n", "2: LEN must be greater than 0" },
	{ "a range past the end of its region",
	  "P0 mmap A 8K rw\nP0 write A 4K 8K\n",
	  "2: range 4K+8K lies outside region A (length 0x2000)" },
	{ "an offset past the end of its region",
	  "P0 mmap A 8K rw\nP0 write A 16K 4K\n", "2: range 16K+4K lies outside region A" },
	{ "a range whose end overflows",
	  "P0 mmap A 8K rw\nP0 write A 4K 0xfffffffffffff000\n", "2: range 4K+0xfffffffffffff000 lies outside" },
	{ "a bad madvise advice",
	  "P0 mmap A 8K rw\nP0 madvise A 0 4K cold\n", "2: bad ADVICE 'cold'" },
	{ "a bad mprotect PROT",
	  "P0 mmap A 8K rw\nP0 mprotect A 0 4K w\n", "2: bad PROT 'w'" },
	/* write and read options */
	{ "stride 0",
	  "P0 mmap A 8K rw\nP0 write A 0 8K stride 0\n", "2: stride must be greater than 0" },
	{ "a stride that is not a page multiple",
	  "P0 mmap A 8K rw\nP0 write A 0 8K stride 100\n",
	  "2: stride '100' is not a multiple of the page size" },
	{ "a value above 255",
	  "P0 mmap A 8K rw\nP0 write A 0 8K value 256\n", "2: value '256' does not fit a byte" },
	{ "stride given twice",
	  "P0 mmap A 8K rw\nP0 write A 0 8K stride 4K stride 8K\n",
	  "2: stride given twice" },
	{ "more options than a write has",
	  "P0 mmap A 8K rw\nP0 write A 0 8K stride 4K value 1 stride 4K\n",
	  "2: extra token 'stride'" },
	{ "value given twice",
	  "P0 mmap A 8K rw\nP0 write A 0 8K value 1 value 2\n", "2: value given twice" },
	{ "an option without its number",
	  "P0 mmap A 8K rw\nP0 write A 0 8K stride\n", "2: stride needs a number after it" },
	{ "value on a read",
	  "P0 mmap A 8K rw\nP0 read A 0 8K value 3\n", "2: unknown read option 'value'" },
	{ "an unknown write option",
	  "P0 mmap A 8K rw\nP0 write A 0 8K step 4K\n", "2: unknown write option 'step'" },
	/* mremap */
	{ "mremap AT of 2M",
	  "P0 mmap A 8K rw\nP0 mremap A 0 4K S 2M\n", "2: AT '2M' must be below 2M" },
	{ "mremap AT not page aligned",
	  "P0 mmap A 8K rw\nP0 mremap A 0 4K S 512\n",
	  "2: AT '512' is not a multiple of the page size" },
	{ "mremap to an existing region",
	  "P0 mmap A 8K rw\nP0 mmap B 8K rw\nP0 mremap A 0 4K B 0\n",
	  "3: region 'B' already exists" },
	/* handles */
	{ "a handle taken twice",
	  "P0 mmap A 8K rw\nP0 register H A 0 4K\nP0 vmsplice H A 0 4K\n",
	  "3: handle 'H' is still held by P0" },
	{ "unregister of an unknown handle",
	  "P0 unregister H\n", "1: unknown handle 'H'" },
	{ "drain of a register handle",
	  "P0 mmap A 8K rw\nP0 register H A 0 4K\nP0 drain H\n",
	  "3: handle 'H' was taken by register; only unregister releases it" },
	{ "unregister of a vmsplice handle",
	  "P0 mmap A 8K rw\nP0 vmsplice H A 0 4K\nP0 unregister H\n",
	  "3: handle 'H' was taken by vmsplice; only drain releases it" },
	{ "release by a process that does not hold the handle",
	  "P0 mmap A 8K rw\nP0 register H A 0 4K\nP0 fork P1\nP1 unregister H\n",
	  "4: handle 'H' is held by P0, not P1" },
	{ "a handle released twice",
	  "P0 mmap A 8K rw\nP0 register H A 0 4K\nP0 unregister H\nP0 unregister H\n",
	  "4: handle 'H' is not held" },
	{ "exit while holding a handle",
	  "P0 mmap A 8K rw\nP0 fork P1\nP1 vmsplice V A 0 4K\nP1 exit\n",
	  "4: P1 exits while holding handle 'V'; drain it first" },
	{ "register outside the region",
	  "P0 mmap A 8K rw\nP0 register H A 8K 4K\n", "2: range 8K+4K lies outside region A" },
	{ "resize to 0",
	  "P0 mmap A 8K rw\nP0 resize A 0\n", "2: resize to 0: LEN must be greater than 0" },
	{ "resize to an unaligned length",
	  "P0 mmap A 8K rw\nP0 resize A 6000\n", "2: LEN '6000' is not a multiple" },
	{ "resize past the largest region",
	  "P0 mmap A 8K rw\nP0 resize A 65G\n", "2: LEN '65G' is larger than a region" },
	{ "a range before the resize that adds it",
	  "P0 mmap A 8K rw\nP0 write A 8K 4K\nP0 resize A 16K\n",
	  "2: range 8K+4K lies outside region A" },
	{ "a range only a grow past the room (ENOMEM) would add",
	  "P0 mmap A 8K rw at 4K\nP0 resize A 1G\nP0 read A 0x41fe000 4K\n",
	  "3: range 0x41fe000+4K lies outside region A (length 0x2000)" },
};

static void test_parse_errors(void)
{
	size_t i;

	for (i = 0; i < sizeof(error_cases) / sizeof(error_cases[0]); i++) {
		const struct parse_error_case *c = &error_cases[i];
		struct scenario *s;
		char *err, want[512];

		snprintf(want, sizeof(want), "t.scn:%s", c->want);
		s = parse(c->text, &err);
		if (!tap_ok(!s && strstr(err, want), "error: %s", c->intent))
			tap_diag("got: %swanted: %s", err, want);
		/* One message, one line: nothing runs after the first error. */
		tap_ok(!s && strchr(err, '\n') == err + strlen(err) - 1,
		       "error: %s: exactly one line", c->intent);
		scenario_free(s);
		free(err);
	}
}

/* ---- valid scenarios -------------------------------------------------- */

static const char valid_text[] =
	"# a scenario that uses every statement\n"
	"mthp 64K always     # trailing comment\n"
	"mthp\t2M   madvise\n"
	"\n"
	"P0 mmap A 2M rw hugepage\n"			/* 3 */
	"P0 write A 0 64K\n"				/* 4 */
	"  P0   write A\t4K 8K value 7 stride 8K   \n"	/* 5 */
	"P0 fork P1#comment right after a token\n"	/* 6 */
	"P1 mmap B 0x10000 r\n"				/* 7 */
	"P1 read B 0 64K stride 16K\n"			/* 8 */
	"P1 register H B 0 4K\n"			/* 9 */
	"P1 unregister H\n"				/* 10 */
	"P1 vmsplice H A 0 4K\n"			/* 11 */
	"P1 drain H\n"					/* 12 */
	"P0 dio-read A 0 4K\n"				/* 13 */
	"P0 mremap A 0 64K C 4K\n"			/* 14 */
	"P0 split A 0 2M\n"				/* 15 */
	"P0 madvise A 0 4K dontfork\n"			/* 16 */
	"P0 mprotect A 0 4K none\n"			/* 17 */
	"P0 dio-write A 4K 4K\n"			/* 18 */
	"P0 munmap A 0 4K\n"				/* 19 */
	"P1 exit\n"					/* 20 */
	"observe";					/* 21, no newline */

static void test_parse_valid(void)
{
	struct scenario *s;
	const struct stmt *st;
	char *err;

	s = parse(valid_text, &err);
	if (!tap_ok(s != NULL, "valid: parses")) {
		tap_diag("%s", err);
		free(err);
		return;
	}
	tap_is_str(err, "", "valid: no messages");
	tap_ok(s->nr_stmts == 21, "valid: 21 statements (got %d)", s->nr_stmts);
	tap_ok(s->page_size == PAGE, "valid: page size kept");
	tap_ok(s->mthp[2] == SCN_POL_ALWAYS && s->mthp[7] == SCN_POL_MADVISE &&
	       s->mthp[0] == SCN_POL_NEVER && s->mthp[6] == SCN_POL_NEVER,
	       "valid: mthp 64K always, 2M madvise, the rest never");
	st = &s->stmts[0];
	tap_ok(st->kind == ST_MTHP && st->number == 1 && st->line == 2 &&
	       st->mthp_size == 64 * 1024 && st->policy == SCN_POL_ALWAYS &&
	       st->proc == -1, "valid: mthp statement fields");
	tap_is_str(st->text, "mthp 64K always", "valid: comment dropped");
	tap_is_str(s->stmts[1].text, "mthp 2M madvise", "valid: tab and spaces folded");

	st = &s->stmts[2];
	tap_ok(st->kind == ST_MMAP && st->proc == 0 && st->region == 0 &&
	       st->len == 2UL << 20 && st->prot == SCN_PROT_RW &&
	       st->huge == SCN_HUGE_HUGEPAGE && st->line == 5,
	       "valid: mmap fields");
	st = &s->stmts[3];
	tap_ok(st->kind == ST_WRITE && st->off == 0 && st->len == 64 * 1024 &&
	       st->stride == PAGE && st->value == 1 + 4 % 255,
	       "valid: write defaults: stride = page size, value = 1 + N %% 255");
	st = &s->stmts[4];
	tap_ok(st->off == 4096 && st->len == 8192 && st->value == 7 &&
	       st->stride == 8192, "valid: options in any order");
	tap_is_str(st->text, "P0 write A 4K 8K value 7 stride 8K",
		   "valid: leading and trailing blanks trimmed");
	st = &s->stmts[5];
	tap_ok(st->kind == ST_FORK && st->child == 1 && s->nr_procs == 2 &&
	       !strcmp(s->proc_names[1], "P1"), "valid: fork makes P1, id 1");
	tap_is_str(st->text, "P0 fork P1", "valid: a comment may touch a token");
	st = &s->stmts[6];
	tap_ok(st->proc == 1 && st->region == 1 && st->len == 0x10000 &&
	       st->prot == SCN_PROT_R && st->huge == SCN_HUGE_DEFAULT,
	       "valid: hex length, region id 1");
	st = &s->stmts[7];
	tap_ok(st->kind == ST_READ && st->stride == 16384, "valid: read stride");
	tap_ok(s->stmts[8].handle == 0 && s->stmts[9].handle == 0 &&
	       s->stmts[10].handle == 0 && s->stmts[11].handle == 0 &&
	       s->nr_handles == 1,
	       "valid: a released handle name is reused with the same id");
	tap_ok(s->stmts[10].region == 0 && s->stmts[10].len == PAGE,
	       "valid: a child uses its parent's region");
	st = &s->stmts[12];
	tap_ok(st->kind == ST_DIO_READ && st->value == 14,
	       "valid: dio-read default value");
	st = &s->stmts[13];
	tap_ok(st->kind == ST_MREMAP && st->region == 0 && st->new_region == 2 &&
	       st->at == 4096 && st->len == 65536 && s->nr_regions == 3 &&
	       s->regions[2].len == 65536 && !strcmp(s->regions[2].name, "C"),
	       "valid: mremap makes region C of LEN bytes");
	tap_ok(s->stmts[15].advice == MADV_DONTFORK &&
	       s->stmts[16].prot == SCN_PROT_NONE &&
	       s->stmts[17].kind == ST_DIO_WRITE && s->stmts[17].value == 0,
	       "valid: madvise, mprotect, dio-write");
	st = &s->stmts[20];
	tap_ok(st->kind == ST_OBSERVE && st->proc == -1 && st->number == 21 &&
	       st->line == 23, "valid: observe, last line without newline");
	scenario_free(s);
	free(err);
}

/* The default value wraps: statement 255 writes 1, 256 writes 2. */
static void test_default_value_wraps(void)
{
	size_t cap = 300 * 20, len = 0;
	char *text = malloc(cap), *err;
	struct scenario *s;
	int i;

	len += sprintf(text + len, "P0 mmap A 4K rw\n");
	for (i = 2; i <= 256; i++)
		len += sprintf(text + len, "P0 write A 0 4K\n");
	s = parse(text, &err);
	tap_ok(s && s->nr_stmts == 256 && s->stmts[253].value == 255 &&
	       s->stmts[254].value == 1 && s->stmts[255].value == 2,
	       "default value: 1 + N %% 255 wraps at 255");
	scenario_free(s);
	free(err);
	free(text);
}

/*
 * resize: later ranges may address what a grow could add, up to the room
 * (64M past the first 2M boundary at or after the end at creation); a
 * shrink never narrows them, the run refuses the removed tail.
 */
static void test_resize_ranges(void)
{
	struct scenario *s;
	char *err;

	/*   A at 4K past 2M, 8K long: its room ends 66M past the boundary
	 *   |4K|A 8K|........ room .........|66M
	 */
	s = parse("P0 mmap A 8K rw at 4K\nP0 resize A 64K\nP0 write A 32K 32K\n"
		  "P0 resize A 4K\nP0 write A 60K 4K\nP0 resize A 0x41ff000\n"
		  "P0 read A 0x41fe000 4K\n", &err);
	tap_ok(s && s->stmts[1].kind == ST_RESIZE && s->stmts[1].len == 65536 &&
	       s->stmts[1].region == 0 && s->regions[0].len == 8192 &&
	       s->regions[0].room_len == (66UL << 20) - 4096 &&
	       s->regions[0].max_len == s->regions[0].room_len,
	       "resize: ranges reach what a grow adds, up to the room");
	if (!s)
		tap_diag("%s", err);
	scenario_free(s);
	free(err);
}

/*
 * touch: items are stored compactly, a run one item whatever its length,
 * adjacent accesses of one kind merged; the value is the statement's.
 *
 *   A (64K), B (8K): A's pages 0..3 stored as 0, 0x1000+2, 0x3000: one item
 */
static void test_touch_items(void)
{
	const struct scn_touch *it;
	struct scenario *s;
	char *err;

	s = parse("P0 mmap A 64K rw\nP0 mmap B 8K rw\n"
		  "P0 touch @A w 0 0x1000+2 0x3000 r 0x3000 @B r 4K @A w 0xf000\n",
		  &err);
	it = s ? s->stmts[2].items : NULL;
	tap_ok(s && s->stmts[2].kind == ST_TOUCH && s->stmts[2].nr_items == 4 &&
	       s->stmts[2].nr_accesses == 7 && s->stmts[2].value == 4 &&
	       it[0].region == 0 && it[0].pgoff == 0 && it[0].count == 4 &&
	       it[0].write && it[1].pgoff == 3 && !it[1].write &&
	       it[2].region == 1 && it[2].pgoff == 1 && it[3].pgoff == 15,
	       "touch: runs merge, kinds and regions split items");
	if (!s)
		tap_diag("%s", err);
	scenario_free(s);
	free(err);
}

/* A statement longer than a tokenizer's fixed array, up to the limit. */
static void test_touch_long(void)
{
	const int nr = 200000;	/* tokens of "0x1000 ": 1.4M characters */
	size_t cap = (size_t)nr * 8 + 256, len = 0;
	char *text = malloc(cap), *err, *big;
	struct scenario *s;
	int i;

	len += sprintf(text + len, "P0 mmap A 8K rw\nP0 touch @A");
	for (i = 0; i < nr; i++)
		len += sprintf(text + len, " %s", i % 2 ? "r 0x1000" : "w 0");
	text[len++] = '\n';
	text[len] = '\0';
	s = parse(text, &err);
	tap_ok(s && s->stmts[1].nr_items == (unsigned int)nr &&
	       s->stmts[1].nr_accesses == (unsigned long)nr,
	       "touch: a 1.4M-character line of %d items parses", nr);
	scenario_free(s);
	free(err);
	free(text);

	/* One token past the limit: 1 << 20 items after "P0 touch". */
	cap = (1UL << 20) * 2 + 64;
	big = malloc(cap);
	len = sprintf(big, "P0 mmap A 8K rw\nP0 touch @A w");
	for (i = 0; i < (1 << 20); i++) {
		big[len++] = ' ';
		big[len++] = '0';
	}
	big[len++] = '\n';
	big[len] = '\0';
	s = parse(big, &err);
	tap_ok(!s && strstr(err, "t.scn:2: touch too long: at most 1048576 items"),
	       "touch: too long is an error on its line");
	scenario_free(s);
	free(err);
	free(big);
}

/* 4096 regions, looked up by name; the 4097th is refused. */
static void test_many_regions(void)
{
	size_t cap = (size_t)(SCN_MAX_REGIONS + 2) * 48, len = 0;
	char *text = malloc(cap), *err;
	struct scenario *s;
	int i;

	for (i = 0; i < SCN_MAX_REGIONS; i++)
		len += sprintf(text + len, "P0 mmap R%d 4K rw\n", i);
	len += sprintf(text + len, "P0 touch @R4095 w 0 @R0 r 0 @R2048 w 0\n");
	s = parse(text, &err);
	tap_ok(s && s->nr_regions == SCN_MAX_REGIONS &&
	       s->stmts[SCN_MAX_REGIONS].items[0].region == 4095 &&
	       s->stmts[SCN_MAX_REGIONS].items[2].region == 2048,
	       "regions: %d of them, found by name", SCN_MAX_REGIONS);
	if (!s)
		tap_diag("%s", err);
	scenario_free(s);
	free(err);
	sprintf(text + len, "P0 mmap Z 4K rw\n");
	s = parse(text, &err);
	tap_ok(!s && strstr(err, "too many regions (at most 4096)"),
	       "regions: the one past the limit is an error");
	scenario_free(s);
	free(err);
	free(text);
}

static void test_handles_across_processes(void)
{
	struct scenario *s;
	char *err;

	/* A child may take a handle name its parent released, and the
	 * parent may exit once its handles are released. */
	s = parse("P0 mmap A 8K rw\nP0 register H A 0 4K\nP0 fork P1\n"
		  "P0 unregister H\nP0 exit\nP1 vmsplice H A 0 8K\n"
		  "P1 drain H\nP1 exit\nobserve\n", &err);
	tap_ok(s && s->nr_handles == 1 && s->stmts[5].handle == 0,
	       "handles: a name moves between processes once released");
	if (!s)
		tap_diag("%s", err);
	scenario_free(s);
	free(err);
}

static void test_crlf(void)
{
	struct scenario *s;
	char *err;

	s = parse("mthp 64K always\r\nP0 mmap A 8K rw\r\n", &err);
	tap_ok(s && s->nr_stmts == 2 && !strcmp(s->stmts[1].text, "P0 mmap A 8K rw"),
	       "CRLF line endings are line endings");
	scenario_free(s);
	free(err);
}

static void test_numbers(void)
{
	static const struct {
		const char *tok;
		int ret;
		unsigned long v;
	} cases[] = {
		{ "0", 0, 0 },
		{ "4096", 0, 4096 },
		{ "010", 0, 10 },
		{ "0x10", 0, 16 },
		{ "0xfF", 0, 255 },
		{ "4K", 0, 4096 },
		{ "2M", 0, 2UL << 20 },
		{ "1G", 0, 1UL << 30 },
		{ "0x1M", 0, 1UL << 20 },
		{ "18446744073709551615", 0, ~0UL },
		{ "18446744073709551616", -ERANGE, 0 },
		{ "17179869184G", -ERANGE, 0 },
		{ "", -EINVAL, 0 },
		{ "K", -EINVAL, 0 },
		{ "0x", -EINVAL, 0 },
		{ "1KK", -EINVAL, 0 },
		{ "1 ", -EINVAL, 0 },
		{ "+1", -EINVAL, 0 },
		{ "0X10", -EINVAL, 0 },
		{ "12g", -EINVAL, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned long v = 12345;
		int ret = scenario_parse_number(cases[i].tok, &v);

		tap_ok(ret == cases[i].ret && (ret || v == cases[i].v),
		       "number '%s' -> %d %lu (got %d %lu)", cases[i].tok,
		       cases[i].ret, cases[i].v, ret, v);
	}
}

static void test_parse_file(void)
{
	static const char nul[] = "P0 mmap A 4K rw\nP0 write\0 A 0 4K\n";
	struct t_tmpdir dir;
	struct capture c;
	struct scenario *s;
	char *err, path[512];

	s = scenario_parse_file("/nonexistent/x.scn", PAGE, capture_open(&c));
	err = capture_close(&c);
	tap_ok(!s && strstr(err, "/nonexistent/x.scn: cannot open"),
	       "file: a missing file is named");
	free(err);

	if (!t_tmpdir_make(&dir, "test_scenario")) {
		tap_skip("mkdtemp failed", "file: NUL byte");
		return;
	}
	if (!t_tmpdir_write(&dir, "nul.scn", nul, sizeof(nul) - 1))
		tap_diag("short write");
	s = scenario_parse_file(t_tmpdir_path(&dir, "nul.scn", path, sizeof(path)),
				PAGE, capture_open(&c));
	err = capture_close(&c);
	tap_ok(!s && strstr(err, ":2: NUL byte"), "file: a NUL byte is an error on its line");
	free(err);
	t_tmpdir_remove(&dir);
}

/* ---- a fake backend --------------------------------------------------- */

/*
 * It replays what a test scripts, by statement number, and records what
 * it was asked to do.
 */
struct fake_stmt {
	int number;
	int err;
	unsigned long faults, child_faults;
	const uint8_t *data;
	unsigned long data_len;
	int stat_a, stat_b;	/* PB_STAT_fault and PB_STAT_pte_write */
};

struct fake {
	struct backend base;
	const struct fake_stmt *script;
	int nr_script;
	const struct snap_page *snap;
	unsigned long nr_snap;
	int start_ret;
	int violation_after;	/* statement number, 0 for none */
	int last_number;
	int started, finished, execs, observes;
};

static struct fake *to_fake(struct backend *b)
{
	return (struct fake *)b;
}

static int fake_start(struct backend *b, const struct scenario *s)
{
	to_fake(b)->started++;
	return to_fake(b)->start_ret;
}

static void fake_exec(struct backend *b, const struct stmt *st,
		      struct stmt_result *res)
{
	struct fake *f = to_fake(b);
	int i;

	f->execs++;
	f->last_number = st->number;
	for (i = 0; i < f->nr_script; i++) {
		const struct fake_stmt *fs = &f->script[i];

		if (fs->number != st->number)
			continue;
		res->err = fs->err;
		res->faults = fs->faults;
		res->child_faults = fs->child_faults;
		if (fs->data_len) {
			res->data = malloc(fs->data_len);
			memcpy(res->data, fs->data, fs->data_len);
			res->data_len = fs->data_len;
		}
		if (fs->stat_a || fs->stat_b) {
			res->stats[PB_STAT_fault] = fs->stat_a;
			res->stats[PB_STAT_pte_write] = fs->stat_b;
			res->has_stats = 1;
		}
	}
}

static int fake_observe(struct backend *b, struct snapshot *snap)
{
	struct fake *f = to_fake(b);
	unsigned long i;
	int ret;

	f->observes++;
	for (i = 0; i < f->nr_snap; i++) {
		ret = snapshot_add(snap, &f->snap[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static int fake_finish(struct backend *b)
{
	to_fake(b)->finished++;
	return 0;
}

static unsigned long fake_check(struct backend *b, FILE *report)
{
	struct fake *f = to_fake(b);

	if (!f->violation_after || f->last_number != f->violation_after)
		return 0;
	fprintf(report, "folio 7: refcount 1 < mapcount 2\npage table leak\n");
	return 2;
}

static const struct backend_ops fake_ops = {
	.name = "fake",
	.start = fake_start,
	.exec = fake_exec,
	.observe = fake_observe,
	.finish = fake_finish,
	.check = fake_check,
};

static void fake_init(struct fake *f)
{
	memset(f, 0, sizeof(*f));
	f->base.ops = &fake_ops;
	f->base.variant = "testvar";
	f->base.arch = "testarch";
}

/* Run @s on @f; returns the record, *err_out the messages. */
static char *fake_run(const struct scenario *s, struct fake *f, int check,
		      int *ret, char **err_out)
{
	struct capture out, err;

	*ret = scenario_run(s, &f->base, capture_open(&out),
			    capture_open(&err), check);
	*err_out = capture_close(&err);
	return capture_close(&out);
}

/* ---- records ---------------------------------------------------------- */

#define P(proc_, region_, page_, size_, index_, frame_, data_) \
	{ .proc = proc_, .region = region_, .off = (page_) * PAGE, \
	  .present = 1, .folio_size = size_, .index = index_, \
	  .frame = frame_, .data = data_ }
#define ABSENT(proc_, region_, page_) \
	{ .proc = proc_, .region = region_, .off = (page_) * PAGE }

static const char record_text[] =
	"mthp 64K always\n"		/* 1 */
	"P0 mmap A 128K rw\n"		/* 2 */
	"P0 write A 0 128K\n"		/* 3 */
	"P0 fork P1\n"			/* 4 */
	"P0 vmsplice H A 0 8K\n"	/* 5 */
	"P0 drain H\n"			/* 6 */
	"P1 write A 0 4K\n"		/* 7 */
	"observe\n"			/* 8 */
	"P0 read A 0 4K\n"		/* 9 */
	"P0 vmsplice H A 0 4K\n"	/* 10 */
	"P0 drain H\n";			/* 11 */

static struct snap_page record_snap[64];
static uint8_t drain_data[8193];

/*
 * The snapshot of the record test, in raw frames.
 *
 *   P0 A: 0x00000 .. 0x0f000  one 64K folio, raw frames 1000..1015, 0x03
 *         0x10000 .. 0x17000  the zero page (raw 7) eight times
 *         0x18000 .. 0x1f000  absent
 *   P1 A: 0x00000             a COW copy, raw 5000, 0x09
 *         0x01000 .. 0x0f000  shared with P0: raw 1001..1015
 *         0x10000 .. 0x1f000  absent
 */
static unsigned long build_record_snap(void)
{
	unsigned long n = 0, i;

	for (i = 0; i < 16; i++)
		record_snap[n++] = (struct snap_page)P(0, 0, i, 65536, i, 1000 + i, 3);
	for (i = 16; i < 24; i++)
		record_snap[n++] = (struct snap_page)P(0, 0, i, 4096, 0, 7, 0);
	for (i = 24; i < 32; i++)
		record_snap[n++] = (struct snap_page)ABSENT(0, 0, i);
	record_snap[n++] = (struct snap_page)P(1, 0, 0, 4096, 0, 5000, 9);
	for (i = 1; i < 16; i++)
		record_snap[n++] = (struct snap_page)P(1, 0, i, 65536, i, 1000 + i, 3);
	for (i = 16; i < 32; i++)
		record_snap[n++] = (struct snap_page)ABSENT(1, 0, i);
	return n;
}

static void test_record(void)
{
	static const struct fake_stmt script[] = {
		{ .number = 3, .faults = 2, .stat_a = 2, .stat_b = 5 },
		{ .number = 4, .child_faults = 3 },
		{ .number = 6, .data = drain_data, .data_len = sizeof(drain_data) },
		{ .number = 7, .err = EFAULT, .faults = 1, .stat_a = 1 },
		{ .number = 9, .err = 12345 },
	};
	struct scenario *s;
	struct fake f;
	char *err, *out, want[4096];
	int ret;

	memset(drain_data, 0x03, 4096);
	memset(drain_data + 4096, 0x09, 4096);
	drain_data[8192] = 0x05;
	s = parse(record_text, &err);
	free(err);
	if (!tap_ok(s != NULL, "record: scenario parses"))
		return;

	fake_init(&f);
	f.script = script;
	f.nr_script = sizeof(script) / sizeof(script[0]);
	f.snap = record_snap;
	f.nr_snap = build_record_snap();
	f.base.want_stats = 1;
	out = fake_run(s, &f, 1, &ret, &err);

	snprintf(want, sizeof(want),
		 "# backend fake variant testvar arch testarch\n"
		 "1 mthp 64K always\n"
		 "2 P0 mmap A 128K rw: faults 0\n"
		 "3 P0 write A 0 128K: faults 2\n"
		 "  stat %s 2\n"
		 "  stat %s 5\n"
		 "4 P0 fork P1: faults 0 (P1 3)\n"
		 "5 P0 vmsplice H A 0 8K: faults 0\n"
		 "6 P0 drain H: faults 0 data 0x03*4096 0x09*4096 0x05\n"
		 "7 P1 write A 0 4K: error EFAULT\n"
		 "  stat %s 1\n"
		 "8 observe\n"
		 "P0 A 0x0000000 present size 64K index 0..15 frame 1..16 data 0x03 x16\n"
		 "P0 A 0x0010000 present size 4K index 0 frame 17 data 0x00 x8\n"
		 "P0 A 0x0018000 absent x8\n"
		 "P1 A 0x0000000 present size 4K index 0 frame 18 data 0x09\n"
		 "P1 A 0x0001000 present size 64K index 1..15 frame 2..16 data 0x03 x15\n"
		 "P1 A 0x0010000 absent x16\n"
		 "9 P0 read A 0 4K: error E12345\n"
		 "10 P0 vmsplice H A 0 4K: faults 0\n"
		 "11 P0 drain H: faults 0 data -\n",
		 pb_stat_name(PB_STAT_fault), pb_stat_name(PB_STAT_pte_write),
		 pb_stat_name(PB_STAT_fault));
	tap_is_str(out, want, "record: header, results, stats, snapshot runs, data");
	tap_ok(ret == SCN_RUN_OK, "record: run returns 0 (got %d)", ret);
	tap_is_str(err, "", "record: nothing on err");
	tap_ok(f.started == 1 && f.finished == 1 && f.execs == 9 && f.observes == 1,
	       "record: start once, 9 statements executed, observe once, finish once");
	free(out);
	free(err);

	/* Without want_stats, no stat lines even when the backend has them. */
	fake_init(&f);
	f.script = script;
	f.nr_script = sizeof(script) / sizeof(script[0]);
	f.snap = record_snap;
	f.nr_snap = build_record_snap();
	out = fake_run(s, &f, 0, &ret, &err);
	tap_ok(!strstr(out, "stat "), "record: stats only when wanted");
	free(out);
	free(err);
	scenario_free(s);
}

/* Snapshot lines alone, for the compression edge cases. */
static char *snapshot_lines(const struct scenario *s, struct snap_page *pages,
			    unsigned long nr)
{
	struct snapshot snap = { .pages = pages, .nr = nr, .cap = nr };
	struct capture c;

	if (snapshot_canonicalize(&snap))
		return NULL;
	record_snapshot(capture_open(&c), s, &snap);
	return capture_close(&c);
}

static void test_snapshot_runs(void)
{
	struct scenario *s;
	char *err, *out;

	s = parse("P0 mmap A 64K rw\nP0 mmap B 3G rw\nP0 fork P1\n", &err);
	free(err);
	if (!tap_ok(s != NULL, "runs: scenario parses"))
		return;

	{
		/* Frames are numbered in order of first appearance, not by
		 * raw value. */
		struct snap_page pg[] = {
			P(0, 0, 0, 4096, 0, 900, 1),
			P(0, 0, 1, 4096, 0, 40, 1),
			ABSENT(0, 0, 2),
			P(1, 0, 0, 4096, 0, 40, 1),
			P(1, 0, 1, 4096, 0, 900, 1),
		};
		out = snapshot_lines(s, pg, 5);
		tap_is_str(out,
			   "P0 A 0x0000000 present size 4K index 0 frame 1 data 0x01\n"
			   "P0 A 0x0001000 present size 4K index 0 frame 2 data 0x01\n"
			   "P0 A 0x0002000 absent\n"
			   "P1 A 0x0000000 present size 4K index 0 frame 2 data 0x01\n"
			   "P1 A 0x0001000 present size 4K index 0 frame 1 data 0x01\n",
			   "runs: canonical frames by first appearance; runs of one have no count");
		free(out);
	}
	{
		/* A run stops at a change of region, of data, of size, and
		 * at a gap in the offsets. */
		struct snap_page pg[] = {
			P(0, 0, 0, 16384, 0, 10, 2),
			P(0, 0, 1, 16384, 1, 11, 2),
			P(0, 1, 0, 16384, 2, 12, 2),	/* another region */
			P(0, 1, 1, 16384, 3, 13, 2),
			P(0, 1, 2, 16384, 0, 14, 3),	/* other data */
			P(0, 1, 3, 32768, 1, 15, 3),	/* other size */
			P(0, 1, 5, 32768, 2, 16, 3),	/* a gap */
			ABSENT(0, 1, 6),
			ABSENT(1, 1, 7),		/* another process */
		};
		out = snapshot_lines(s, pg, 9);
		tap_is_str(out,
			   "P0 A 0x0000000 present size 16K index 0..1 frame 1..2 data 0x02 x2\n"
			   "P0 B 0x0000000 present size 16K index 2..3 frame 3..4 data 0x02 x2\n"
			   "P0 B 0x0002000 present size 16K index 0 frame 5 data 0x03\n"
			   "P0 B 0x0003000 present size 32K index 1 frame 6 data 0x03\n"
			   "P0 B 0x0005000 present size 32K index 2 frame 7 data 0x03\n"
			   "P0 B 0x0006000 absent\n"
			   "P1 B 0x0007000 absent\n",
			   "runs: broken by region, data, size, gap and process");
		free(out);
	}
	{
		/* Counting, then the same page repeated, then counting
		 * again: the second page decides each run's kind.  Sizes
		 * print in their largest exact unit. */
		struct snap_page pg[] = {
			P(0, 1, 0, 2UL << 20, 510, 70, 4),
			P(0, 1, 1, 2UL << 20, 511, 71, 4),
			P(0, 1, 2, 1UL << 30, 0, 5, 0),
			P(0, 1, 3, 1UL << 30, 0, 5, 0),
			P(0, 1, 4, 1UL << 30, 0, 5, 0),
			P(0, 1, 5, 1UL << 20, 0, 80, 0),
			P(0, 1, 6, 1UL << 20, 1, 81, 0),
			P(0, 1, 7, 12288, 0, 90, 0),
		};
		out = snapshot_lines(s, pg, 8);
		tap_is_str(out,
			   "P0 B 0x0000000 present size 2M index 510..511 frame 1..2 data 0x04 x2\n"
			   "P0 B 0x0002000 present size 1G index 0 frame 3 data 0x00 x3\n"
			   "P0 B 0x0005000 present size 1M index 0..1 frame 4..5 data 0x00 x2\n"
			   "P0 B 0x0007000 present size 12K index 0 frame 6 data 0x00\n",
			   "runs: counting, repeating, counting; size units");
		free(out);
	}
	{
		/* Offsets wider than seven hex digits still print whole. */
		struct snap_page pg[] = {
			P(0, 1, 0x10000, 4096, 0, 1, 0xff),
		};
		out = snapshot_lines(s, pg, 1);
		tap_is_str(out,
			   "P0 B 0x10000000 present size 4K index 0 frame 1 data 0xff\n",
			   "runs: offset format 0x%%07lx");
		free(out);
	}
	scenario_free(s);
}

static void test_record_data(void)
{
	static const uint8_t one[] = { 7 };
	static const uint8_t mixed[] = { 1, 1, 2, 3, 3, 3 };
	struct capture c;

	record_data(capture_open(&c), NULL, 0);
	t_text_is(&c, "-", "data: empty is '-'");
	record_data(capture_open(&c), one, 1);
	t_text_is(&c, "0x07", "data: a single byte has no count");
	record_data(capture_open(&c), mixed, sizeof(mixed));
	t_text_is(&c, "0x01*2 0x02 0x03*3", "data: runs");
}

static void test_errno_names(void)
{
	char buf[16];

	tap_is_str(record_errno_name(EFAULT, buf, sizeof(buf)), "EFAULT", "errno: EFAULT");
	tap_is_str(record_errno_name(EMLINK, buf, sizeof(buf)), "EMLINK", "errno: EMLINK");
	tap_is_str(record_errno_name(ENOSPC, buf, sizeof(buf)), "ENOSPC", "errno: ENOSPC");
	tap_is_str(record_errno_name(EMFILE, buf, sizeof(buf)), "EMFILE", "errno: EMFILE by name");
	tap_is_str(record_errno_name(4095, buf, sizeof(buf)), "E4095", "errno: unnamed as E<number>");
}

static void test_run_check_and_failures(void)
{
	struct scenario *s;
	struct fake f;
	char *err, *out;
	int ret;

	s = parse("P0 mmap A 8K rw\nP0 write A 0 8K\nP0 read A 0 8K\n", &err);
	free(err);
	if (!tap_ok(s != NULL, "check: scenario parses"))
		return;

	fake_init(&f);
	f.violation_after = 2;
	out = fake_run(s, &f, 1, &ret, &err);
	tap_ok(ret == SCN_RUN_VIOLATION, "check: a violation makes the run return 3 (got %d)", ret);
	tap_is_str(err,
		   "t.scn: after statement 2: folio 7: refcount 1 < mapcount 2\n"
		   "t.scn: after statement 2: page table leak\n",
		   "check: each violation line says where it was found");
	tap_ok(f.execs == 3 && strstr(out, "3 P0 read A 0 8K: faults 0\n"),
	       "check: the run goes on after a violation");
	free(out);
	free(err);

	fake_init(&f);
	f.violation_after = 2;
	out = fake_run(s, &f, 0, &ret, &err);
	tap_ok(ret == SCN_RUN_OK && !*err, "check: not asked, not run");
	free(out);
	free(err);

	fake_init(&f);
	f.start_ret = -ENOMEM;
	out = fake_run(s, &f, 1, &ret, &err);
	tap_ok(ret == SCN_RUN_FAILED && !*out && f.execs == 0 && f.finished == 0 &&
	       strstr(err, "t.scn: backend fake could not start"),
	       "start failure: reported, nothing run, returns 1");
	free(out);
	free(err);
	scenario_free(s);
}

int main(void)
{
	test_numbers();
	test_parse_errors();
	test_parse_valid();
	test_default_value_wraps();
	test_resize_ranges();
	test_touch_items();
	test_touch_long();
	test_many_regions();
	test_handles_across_processes();
	test_crlf();
	test_parse_file();
	test_record_data();
	test_errno_names();
	test_record();
	test_snapshot_runs();
	test_run_check_and_failures();
	return tap_done();
}
