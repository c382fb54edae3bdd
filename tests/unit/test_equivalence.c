// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_equivalence.c - every variant shows a program what the per-PTE
 * model shows it.
 *
 * Batching is an optimisation: whichever PTE paths a variant batches, a
 * program must not be able to tell.  Every scenario under tests/scenarios/
 * runs under each variant of the table below and under "baseline"
 * (nothing batched), with the invariant checker after every statement of
 * every run, and each record is held to baseline's by these rules
 * (scenario/compare.h implements them):
 *
 *   1. What a program can see is identical: the same statements succeed
 *      and fail with the same errno, every drained byte is the same, the
 *      same pages are present with the same byte (the byte each process
 *      would read there).
 *   2. Fault counts may only fall, statement by statement, and so may a
 *      fork child's.
 *   3. Frames may differ only where batched write-fault reuse made pages
 *      exclusive that the per-PTE variant left shared-looking, which has
 *      exactly two visible effects in Linux: (a) a page the per-PTE
 *      variant had to copy when a pin raised its folio's refcount (there
 *      a 4K order-0 folio) may stay in its large folio; (b) at a fork
 *      while the folio is pinned, every exclusive page is copied into the
 *      child (folio_try_dup_anon_rmap_ptes refuses to share it), so a page
 *      the per-PTE variant shares between processes may be a 4K copy in
 *      the batched one (pin-fork-exit-64k shows it).  Nothing else: apart
 *      from such pages, pages share a frame in one record exactly when
 *      they share one in the other.
 *   4. Only a switch whose effect is FAULTS (include/ptebatch_switches.h:
 *      wp_reuse_max) changes frames or faults: a variant that agrees with
 *      baseline on those (it differs only in GUP-fast, mprotect, fork or
 *      zap batching) must print baseline's record exactly, stat lines
 *      aside (CMP_SAME_FRAMES, pb_variant_same_frames()).
 *
 * Each run happens in a forked host process, so a crash or hang of the
 * model fails one case instead of every later one.  The comparator itself
 * is tested first, on hand-written record pairs.
 */
#include <dirent.h>
#include <glob.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/backend.h"
#include "scenario/compare.h"
#include "scenario/run.h"
#include "scenario/scenario.h"
#include "tests/unit/fixture.h"

/* The reference every other variant is compared with. */
#define REFERENCE "baseline"

/* A run that takes longer than this is a hang. */
#define RUN_TIMEOUT_SECONDS 60

static const struct variant_case {
	const char *preset;
	const char *set;	/* one "KEY=VALUE" on top of it, or NULL */
} variant_cases[] = {
	{ "upstream", NULL },
	{ "seeds", NULL },
	{ "seeds", "wp_reuse_max=512" },	/* a whole page table at once */
	{ "baseline", "wp_reuse_max=16" },	/* reuse batching alone */
	{ "baseline", "gup_batch=1" },
	{ "baseline", "mprotect_batch=1" },
	{ "baseline", "madvise_free_batch=1" },	/* MADV_FREE/PAGEOUT batching alone */
};

/* ---- helpers ---------------------------------------------------------- */

/* Parse @text as the record @name; *err gets the messages (malloc'd). */
static struct record *parse_quiet(const char *name, const char *text,
				  char **err)
{
	struct capture c;
	struct record *r;

	r = record_parse(name, text, strlen(text), 0, capture_open(&c));
	*err = capture_close(&c);
	return r;
}

/* The same, the messages shown as diagnostics if it does not parse. */
static struct record *parse_record(const char *name, const char *text)
{
	struct record *r;
	char *err;

	r = parse_quiet(name, text, &err);
	if (!r)
		tap_diag_text(err);
	free(err);
	return r;
}

/*
 * Compare two hand-written records; returns compare_records()'s verdict
 * (-1 if one does not parse) and the explanation in *why (malloc'd).
 */
static int compare_texts(const char *base, const char *other,
			 unsigned int rules, char **why)
{
	struct record *b = parse_record("base", base);
	struct record *o = parse_record("other", other);
	struct capture c;
	int ret = -1;

	capture_open(&c);
	if (b && o)
		ret = compare_records(b, o, rules, c.f);
	*why = capture_close(&c);
	record_free(b);
	record_free(o);
	return ret;
}

/* Expect @want (0 agree, 1 differ); on a difference, its explanation
 * must contain @mention. */
static void expect_compare(const char *base, const char *other,
			   unsigned int rules, int want, const char *mention,
			   const char *intent)
{
	char *why;
	int got = compare_texts(base, other, rules, &why);
	bool ok = got == want && (!mention || strstr(why, mention));

	tap_ok(ok, "comparator: %s", intent);
	if (!ok) {
		tap_diag("compare_records returned %d, wanted %d", got, want);
		if (mention)
			tap_diag("the explanation should mention '%s'", mention);
	}
	if (!ok)
		tap_diag_text(why);
	free(why);
}

/* @text with the first occurrence of @from replaced by @to (malloc'd). */
static char *replace(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	size_t n;
	char *s;

	if (!at) {
		fprintf(stderr, "replace: '%s' not in the text\n", from);
		exit(1);
	}
	n = strlen(text) - strlen(from) + strlen(to) + 1;
	s = malloc(n);
	if (!s)
		exit(1);
	snprintf(s, n, "%.*s%s%s", (int)(at - text), text, to,
		 at + strlen(from));
	return s;
}

/* expect_compare() of @base with @base edited: @from replaced by @to. */
static void expect_edit(const char *base, const char *from, const char *to,
			unsigned int rules, int want, const char *mention,
			const char *intent)
{
	char *t = replace(base, from, to);

	expect_compare(base, t, rules, want, mention, intent);
	free(t);
}

/* ---- the comparator on hand-written records --------------------------- */

/*
 * Statements 1-5 of the 64K records: one 64K folio, written, shared by
 * fork until the child exits.
 */
#define FOLIO_AFTER_FORK_EXIT \
	"1 mthp 64K always\n" \
	"2 P0 mmap A 64K rw: faults 0\n" \
	"3 P0 write A 0 64K: faults 1\n" \
	"4 P0 fork P1: faults 0 (P1 0)\n" \
	"5 P1 exit: faults 0\n"

/*
 * A 64K folio, shared by fork until the child exits.  P0 writes page 2: a
 * reuse fault.  Per PTE, only page 2 becomes writable; with batched reuse
 * all 16 pages do.  P0 then pins page 5, which raises the folio's
 * refcount, and writes page 0: per PTE, page 0 is still read-only and can
 * no longer be reused, so it is copied to a 4K folio; batched, it is
 * writable already and stays.  Then P0 vmsplices pages 0-1 and drains
 * them.
 *
 *   A: | 0 | 1 | 2 | 3 4 | 5 | 6 .. 15 |   one 64K folio
 */
static const char rec_copied[] =
	"# backend model variant baseline arch x86_64\n"
	FOLIO_AFTER_FORK_EXIT
	"6 P0 write A 8K 4K: faults 1\n"
	"7 P0 register H A 20K 4K: faults 1\n"
	"8 P0 write A 0 4K: faults 1\n"
	"  stat folio_copies 1\n"
	"9 observe\n"
	"P0 A 0x0000000 present size 4K index 0 frame 1 data 0x09\n"
	"P0 A 0x0001000 present size 64K index 1 frame 2 data 0x04\n"
	"P0 A 0x0002000 present size 64K index 2 frame 3 data 0x07\n"
	"P0 A 0x0003000 present size 64K index 3..15 frame 4..16 data 0x04 x13\n"
	"10 P0 vmsplice V A 0 8K: faults 0\n"
	"11 P0 drain V: faults 0 data 0x09*4096 0x04*4096\n";

static const char rec_kept[] =
	"# backend model variant seeds arch x86_64\n"
	FOLIO_AFTER_FORK_EXIT
	"6 P0 write A 8K 4K: faults 1\n"
	"7 P0 register H A 20K 4K: faults 0\n"
	"8 P0 write A 0 4K: faults 0\n"
	"9 observe\n"
	"P0 A 0x0000000 present size 64K index 0 frame 1 data 0x09\n"
	"P0 A 0x0001000 present size 64K index 1 frame 2 data 0x04\n"
	"P0 A 0x0002000 present size 64K index 2 frame 3 data 0x07\n"
	"P0 A 0x0003000 present size 64K index 3..15 frame 4..16 data 0x04 x13\n"
	"10 P0 vmsplice V A 0 8K: faults 0\n"
	"11 P0 drain V: faults 0 data 0x09*4096 0x04*4096\n";

/*
 * Rule 3(b): P0 pins page 0 of a 64K folio and forks.  Per PTE only page
 * 0 was exclusive, so only it is copied into P2; after batched reuse
 * every page was, so P2 gets copies of pages 1..15 too.  The two records
 * differ from P2's page 1 on.
 */
#define FORK_PINNED \
	FOLIO_AFTER_FORK_EXIT \
	"6 P0 register H A 0 4K: faults 1\n" \
	"7 P0 fork P2: faults 0 (P2 0)\n" \
	"8 observe\n" \
	"P0 A 0x0000000 present size 64K index 0..15 frame 1..16 data 0x03 x16\n" \
	"P2 A 0x0000000 present size 4K index 0 frame 17 data 0x03\n"

static const char rec_fork_shared[] =
	"# backend model variant baseline arch x86_64\n"
	FORK_PINNED
	"P2 A 0x0001000 present size 64K index 1..15 frame 2..16 data 0x03 x15\n";

static const char rec_fork_copied[] =
	"# backend model variant seeds arch x86_64\n"
	FORK_PINNED
	"P2 A 0x0001000 present size 4K index 0 frame 18 data 0x03\n"
	"P2 A 0x0002000 present size 64K index 2..15 frame 3..16 data 0x03 x14\n";

/* Two processes share a 4K page; the zero page is mapped twice. */
static const char rec_shared[] =
	"# backend model variant baseline arch x86_64\n"
	"1 P0 mmap A 16K rw: faults 0\n"
	"2 P0 write A 0 8K: faults 2\n"
	"3 P0 read A 8K 8K: faults 2\n"
	"4 P0 fork P1: faults 0 (P1 0)\n"
	"5 observe\n"
	"P0 A 0x0000000 present size 4K index 0 frame 1 data 0x03\n"
	"P0 A 0x0001000 present size 4K index 0 frame 2 data 0x03\n"
	"P0 A 0x0002000 present size 4K index 0 frame 3 data 0x00 x2\n"
	"P1 A 0x0000000 present size 4K index 0 frame 1 data 0x03\n"
	"P1 A 0x0001000 present size 4K index 0 frame 2 data 0x03\n"
	"P1 A 0x0002000 present size 4K index 0 frame 3 data 0x00 x2\n";

/*
 * rec_copied as a timed kernel run prints it (run --backend kernel --time):
 * a "# time:" line, "time US" after the counts and before drained data,
 * "~" on the counts that were not the same in every run.
 */
static const char rec_copied_timed[] =
	"# backend kernel variant - arch x86_64\n"
	"# time: microseconds, the median of 3 runs\n"
	"1 mthp 64K always\n"
	"2 P0 mmap A 64K rw: faults 0 time 4.10\n"
	"3 P0 write A 0 64K: faults 1~ time 61.25\n"
	"4 P0 fork P1: faults 0 (P1 0~) time 180.00\n"
	"5 P1 exit: faults 0 time 0.00\n"
	"6 P0 write A 8K 4K: faults 1 time 2.5\n"
	"7 P0 register H A 20K 4K: faults 1 time 12\n"
	"8 P0 write A 0 4K: faults 1 time 3.75\n"
	"9 observe\n"
	"P0 A 0x0000000 present size 4K index 0 frame 1 data 0x09\n"
	"P0 A 0x0001000 present size 64K index 1 frame 2 data 0x04\n"
	"P0 A 0x0002000 present size 64K index 2 frame 3 data 0x07\n"
	"P0 A 0x0003000 present size 64K index 3..15 frame 4..16 data 0x04 x13\n"
	"10 P0 vmsplice V A 0 8K: faults 0 time 9.01\n"
	"11 P0 drain V: faults 0 time 1.00 data 0x09*4096 0x04*4096\n";

static void test_comparator(void)
{
	char *t, *u;

	expect_compare(rec_copied, rec_copied, CMP_SAME_FRAMES, 0, NULL,
		       "a record equals itself, stat lines and all");
	expect_compare(rec_copied, rec_copied, CMP_EQUIVALENT, 0, NULL,
		       "a record is equivalent to itself");
	expect_edit(rec_copied, "  stat folio_copies 1\n", "",
		    CMP_SAME_FRAMES, 0, NULL,
		    "stat lines never count");

	t = replace(rec_copied, "3 P0 write A 0 64K: faults 1",
		    "3 P0 write A 0 64K: faults 2");
	expect_compare(rec_copied, t, CMP_EQUIVALENT, 1, "statement 3",
		       "one more fault fails");
	expect_compare(t, rec_copied, CMP_EQUIVALENT, 0, NULL,
		       "one fault fewer passes the general rule");
	expect_compare(t, rec_copied, CMP_SAME_FRAMES, 1, "statement 3",
		       "one fault fewer fails when frames must be the same");
	free(t);
	expect_edit(rec_shared, "(P1 0)", "(P1 1)",
		    CMP_EQUIVALENT, 1, "child faults",
		    "one more fault in the fork child fails");

	expect_edit(rec_copied, "index 2 frame 3 data 0x07",
		    "index 2 frame 3 data 0x08",
		    CMP_EQUIVALENT, 1, "0x08",
		    "one byte of snapshot data differs");
	expect_edit(rec_copied, "0x04*4096", "0x04*4095 0x05",
		    CMP_EQUIVALENT, 1, "drained byte 0x1fff",
		    "one drained byte differs");
	expect_edit(rec_copied, "0x04*4096", "0x04*4095",
		    CMP_EQUIVALENT, 1, "8191",
		    "one drained byte fewer");
	expect_edit(rec_copied, "8 P0 write A 0 4K: faults 1",
		    "8 P0 write A 0 4K: error EFAULT",
		    CMP_EQUIVALENT, 1, "error EFAULT",
		    "a statement that fails in one record only");
	t = replace(rec_copied, "P0 A 0x0000000 present size 4K index 0 frame 1"
		    " data 0x09", "P0 A 0x0000000 absent");
	u = replace(t, "frame 2 data", "frame 1 data");
	free(t);
	t = replace(u, "frame 3 data", "frame 2 data");
	free(u);
	u = replace(t, "frame 4..16", "frame 3..15");
	free(t);
	t = u;
	expect_compare(rec_copied, t, CMP_EQUIVALENT, 1, "absent",
		       "a page present in one record only");
	free(t);

	expect_compare(rec_copied, rec_kept, CMP_EQUIVALENT, 0, NULL,
		       "a 4K copy in base kept in its folio in other passes"
		       " the general rule");
	expect_compare(rec_copied, rec_kept, CMP_SAME_FRAMES, 1, "statement 7",
		       "... and fails when frames must be the same");
	expect_compare(rec_kept, rec_copied, CMP_EQUIVALENT, 1, "statement 7",
		       "the reverse (other copies where base kept) fails");
	expect_compare(rec_fork_shared, rec_fork_copied, CMP_EQUIVALENT, 0, NULL,
		       "a fork child's copy of a page base shares passes the"
		       " general rule");
	expect_compare(rec_fork_shared, rec_fork_copied, CMP_SAME_FRAMES, 1,
		       "statement 8", "... and fails when frames must be the same");
	t = replace(rec_fork_shared, "P0 A 0x0000000 present size 64K index 0..15 frame 1..16 data 0x03 x16",
		    "P0 A 0x0000000 present size 4K index 0 frame 18 data 0x03\n"
		    "P0 A 0x0001000 present size 4K index 0 frame 19 data 0x03\n"
		    "P0 A 0x0002000 present size 4K index 0 frame 20 data 0x03\n"
		    "P0 A 0x0003000 present size 4K index 0 frame 21 data 0x03\n"
		    "P0 A 0x0004000 present size 4K index 0 frame 22 data 0x03\n"
		    "P0 A 0x0005000 present size 4K index 0 frame 23 data 0x03\n"
		    "P0 A 0x0006000 present size 4K index 0 frame 24 data 0x03\n"
		    "P0 A 0x0007000 present size 4K index 0 frame 25 data 0x03\n"
		    "P0 A 0x0008000 present size 4K index 0 frame 26 data 0x03\n"
		    "P0 A 0x0009000 present size 4K index 0 frame 27 data 0x03\n"
		    "P0 A 0x000a000 present size 4K index 0 frame 28 data 0x03\n"
		    "P0 A 0x000b000 present size 4K index 0 frame 29 data 0x03\n"
		    "P0 A 0x000c000 present size 4K index 0 frame 30 data 0x03\n"
		    "P0 A 0x000d000 present size 4K index 0 frame 31 data 0x03\n"
		    "P0 A 0x000e000 present size 4K index 0 frame 32 data 0x03\n"
		    "P0 A 0x000f000 present size 4K index 0 frame 33 data 0x03");
	free(t);
	/* The parent keeps its page at fork: a copy there is no fork copy. */
	t = replace(rec_fork_copied,
		    "P0 A 0x0000000 present size 64K index 0..15 frame 1..16 data 0x03 x16\n"
		    "P2 A 0x0000000 present size 4K index 0 frame 17 data 0x03\n"
		    "P2 A 0x0001000 present size 4K index 0 frame 18 data 0x03\n",
		    "P0 A 0x0000000 present size 64K index 0 frame 1 data 0x03\n"
		    "P0 A 0x0001000 present size 4K index 0 frame 2 data 0x03\n"
		    "P0 A 0x0002000 present size 64K index 2..15 frame 3..16 data 0x03 x14\n"
		    "P2 A 0x0000000 present size 4K index 0 frame 17 data 0x03\n"
		    "P2 A 0x0001000 present size 64K index 1 frame 18 data 0x03\n");
	expect_compare(rec_fork_shared, t, CMP_EQUIVALENT, 1, "statement 8",
		       "a copy in the parent where base shares the page fails");
	free(t);
	t = replace(rec_copied, "7 P0 register H A 20K 4K: faults 1",
		    "7 P0 register H A 20K 4K: faults 0");
	u = replace(t, "8 P0 write A 0 4K: faults 1", "8 P0 write A 0 4K: faults 0");
	expect_compare(rec_kept, u, CMP_EQUIVALENT, 1, "P0 A 0x0000000",
		       "the reverse fails on the page too");
	free(u);
	free(t);

	t = replace(rec_shared, "P1 A 0x0000000 present size 4K index 0 frame 1",
		    "P1 A 0x0000000 present size 4K index 0 frame 4");
	expect_compare(rec_shared, t, CMP_EQUIVALENT, 1, "shares its frame",
		       "a page shared in base but copied in other");
	expect_compare(t, rec_shared, CMP_EQUIVALENT, 1, "shares its frame",
		       "a page copied in base but shared in other");
	free(t);
	t = replace(rec_shared, "frame 3 data 0x00 x2\nP1",
		    "frame 3 data 0x00\nP0 A 0x0003000 present size 4K index 0"
		    " frame 4 data 0x00\nP1");
	u = replace(t, "frame 3 data 0x00 x2\n",
		    "frame 3 data 0x00\nP1 A 0x0003000 present size 4K index 0"
		    " frame 4 data 0x00\n");
	expect_compare(rec_shared, u, CMP_EQUIVALENT, 1, "P0 A 0x0003000",
		       "the zero page mapped twice in base, two pages in other");
	free(u);
	free(t);

	expect_edit(rec_copied, "11 P0 drain V: faults 0 data 0x09*4096 0x04*4096\n", "",
		    CMP_EQUIVALENT, 1, "statement 11",
		    "a record that stops early");

	expect_compare(rec_copied, rec_copied_timed,
		       CMP_SAME_FRAMES | CMP_IGNORE_HEADER, 0, NULL,
		       "a timed kernel record (times, '~') equals the untimed"
		       " one");
	expect_edit(rec_copied_timed, "faults 1~ time", "faults 2~ time",
		    CMP_SAME_FRAMES, 1, "statement 3",
		    "a count marked '~' is still compared");
}

/* ---- the reader ------------------------------------------------------- */

static void test_reader(void)
{
	static const struct {
		const char *intent;
		const char *text;
		const char *want;	/* substring of the message */
	} bad[] = {
		{ "a count that disagrees with its ranges",
		  "# backend model variant baseline arch x86_64\n1 observe\n"
		  "P0 A 0x0000000 present size 64K index 0..3 frame 1..4"
		  " data 0x00 x3\n", "t:3: ranges 0..3 and 1..4 do not hold x3" },
		{ "a frame out of canonical order",
		  "# backend model variant baseline arch x86_64\n1 observe\n"
		  "P0 A 0x0000000 present size 4K index 0 frame 2 data 0x00\n",
		  "t:3: frame 2 is not canonical" },
		{ "a page line outside an observe",
		  "# backend model variant baseline arch x86_64\n"
		  "1 P0 mmap A 4K rw: faults 0\nP0 A 0x0000000 absent\n",
		  "t:3: snapshot line outside an observe" },
		{ "a skipped statement number",
		  "1 mthp 64K always\n3 observe\n",
		  "t:2: statement 3: expected statement 2" },
		{ "an unknown result",
		  "1 P0 mmap A 4K rw: ok\n",
		  "t:1: result 'ok': expected 'faults' or 'error'" },
		{ "a page line when the page size is unknown",
		  "# backend model variant baseline arch pdp11\n1 observe\n"
		  "P0 A 0x0000000 absent\n", "t:3: page size unknown" },
		{ "a bad drain byte",
		  "1 P0 drain V: faults 0 data 0x100*2\n",
		  "t:1: bad data byte '0x100'" },
		{ "a time with no microseconds",
		  "1 P0 mmap A 4K rw: faults 0 time\n",
		  "t:1: time: no microseconds" },
		{ "a negative time",
		  "1 P0 mmap A 4K rw: faults 0 time -1.5\n",
		  "t:1: bad time '-1.5'" },
		{ "a time that is no number",
		  "1 P0 mmap A 4K rw: faults 0 time nan\n",
		  "t:1: bad time 'nan'" },
		{ "a time before the fork child's count",
		  "1 P0 fork P1: faults 0 time 3.0 (P1 0)\n",
		  "t:1: unexpected '(P1'" },
	};
	struct record *r;
	char *err;
	size_t i;
	bool ok;

	r = parse_quiet("t", rec_copied, &err);
	ok = r && r->nr_stmts == 11 && !strcmp(r->variant, "baseline") &&
	     r->page_size == 4096 && r->stmts[3].child &&
	     !strcmp(r->stmts[3].child, "P1") && r->stmts[7].nr_stats == 1 &&
	     r->stmts[8].observe && r->stmts[8].nr_pages == 16 &&
	     r->stmts[8].pages[15].off == 0xf000 &&
	     r->stmts[8].pages[15].index == 15 &&
	     r->stmts[8].pages[15].frame == 16 &&
	     r->stmts[10].data_len == 8192 && r->stmts[10].data[4095] == 9 &&
	     r->stmts[10].data[4096] == 4;
	tap_ok(ok, "reader: a record with runs, a fork, stats and a drain");
	if (!ok)
		tap_diag_text(err);
	record_free(r);
	free(err);

	r = parse_quiet("t", rec_shared, &err);
	ok = r && r->stmts[4].nr_pages == 8 &&
	     r->stmts[4].pages[3].frame == 3 && r->stmts[4].pages[3].index == 0 &&
	     r->stmts[4].pages[3].off == 0x3000;
	tap_ok(ok, "reader: a repeating run (the zero page) expands");
	record_free(r);
	free(err);

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = parse_quiet("t", bad[i].text, &err);
		ok = !r && strstr(err, bad[i].want);
		tap_ok(ok, "reader: %s", bad[i].intent);
		if (!ok)
			tap_diag("got '%s', wanted '%s'", err, bad[i].want);
		record_free(r);
		free(err);
	}
}

/* ---- every scenario under every variant ------------------------------- */

struct variant {
	char name[96];
	struct pb_variant v;
};

static bool make_variant(const char *preset, const char *set,
			 struct variant *out)
{
	snprintf(out->name, sizeof(out->name), "%s%s%s", preset,
		 set ? "+" : "", set ? set : "");
	return t_variant_make(preset, set, &out->v);
}

/* Which rule holds @v to the reference (rule 4 of the top comment). */
static unsigned int rules_for(const struct pb_variant *v,
			      const struct pb_variant *ref)
{
	return pb_variant_same_frames(v, ref) ? CMP_SAME_FRAMES :
						CMP_EQUIVALENT;
}

/* What one run printed. */
struct run_output {
	bool ran;		/* the child reported back */
	int status;		/* scenario_run()'s */
	char *out, *err;
	int signal;		/* the child died of it */
};

static void run_output_free(struct run_output *ro)
{
	free(ro->out);
	free(ro->err);
	memset(ro, 0, sizeof(*ro));
}

struct run_header {
	int status;
	size_t out_len, err_len;
};

/* One run: the scenario and the variant it runs under. */
struct run_args {
	const struct scenario *s;
	const struct variant *var;
};

/* In the child: run the scenario, send the status and texts to @fd. */
static void run_child(void *arg, int fd)
{
	const struct scenario *s = ((const struct run_args *)arg)->s;
	const struct variant *var = ((const struct run_args *)arg)->var;
	struct model_options mopt = { 0 };
	struct capture out, err;
	struct run_header h;
	struct backend *b;

	alarm(RUN_TIMEOUT_SECONDS);
	mopt.variant = var->v;
	mopt.variant_name = var->name;
	capture_open(&out);
	capture_open(&err);
	b = model_backend_create(&mopt);
	if (!b) {
		fprintf(err.f, "model_backend_create failed\n");
		h.status = SCN_RUN_FAILED;
	} else {
		h.status = scenario_run(s, b, out.f, err.f, 1);
		b->ops->destroy(b);
	}
	capture_close(&out);
	capture_close(&err);
	h.out_len = out.len;
	h.err_len = err.len;
	if (!t_write_all(fd, &h, sizeof(h)) || !t_write_all(fd, out.buf, out.len) ||
	    !t_write_all(fd, err.buf, err.len))
		_exit(2);
	_exit(0);
}

static char *dup_text(const char *text, size_t len)
{
	char *s = malloc(len + 1);

	if (!s)
		exit(1);
	memcpy(s, text, len);
	s[len] = '\0';
	return s;
}

/* Run @s under @var in a forked host process. */
static void run_isolated(const struct scenario *s, const struct variant *var,
			 struct run_output *ro)
{
	struct run_args args = { s, var };
	struct run_header h;
	size_t len;
	char *buf;
	int status;

	memset(ro, 0, sizeof(*ro));
	status = t_child(run_child, &args, &buf, &len);
	if (status != -1 && WIFSIGNALED(status))
		ro->signal = WTERMSIG(status);
	if (buf && len >= sizeof(h)) {
		memcpy(&h, buf, sizeof(h));
		if (len == sizeof(h) + h.out_len + h.err_len) {
			ro->ran = true;
			ro->status = h.status;
			ro->out = dup_text(buf + sizeof(h), h.out_len);
			ro->err = dup_text(buf + sizeof(h) + h.out_len,
					   h.err_len);
		}
	}
	free(buf);
}

/* Did the run go through cleanly?  Explain to @why if not. */
static bool run_clean(const struct run_output *ro, FILE *why)
{
	if (!ro->ran) {
		if (ro->signal)
			fprintf(why, "the run crashed or hung: signal %d (%s)\n",
				ro->signal, strsignal(ro->signal));
		else
			fprintf(why, "the run did not report back\n");
		return false;
	}
	if (ro->status != SCN_RUN_OK) {
		fprintf(why, "scenario_run returned %d%s\n%s", ro->status,
			ro->status == SCN_RUN_VIOLATION ?
			" (an invariant check failed)" : "", ro->err);
		return false;
	}
	return true;
}

/*
 * Run @s under @var (run_isolated) and read its record back; NULL,
 * explained to @why, if the run was not clean or the record does not read.
 */
static struct record *run_record(const struct scenario *s,
				 const struct variant *var, FILE *why)
{
	struct run_output ro;
	struct record *r = NULL;

	run_isolated(s, var, &ro);
	if (run_clean(&ro, why))
		r = record_parse(var->name, ro.out, strlen(ro.out), 0, why);
	run_output_free(&ro);
	return r;
}

/* The scenario's base name without ".scn", for test names. */
static const char *short_name(const char *path, char *buf, size_t size)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	size_t n = strlen(base);

	if (n > 4 && !strcmp(base + n - 4, ".scn"))
		n -= 4;
	snprintf(buf, size, "%.*s", (int)n, base);
	return buf;
}

/* Does @path parse with 4K pages (the ones the suite was written for)? */
static bool scenario_fits_4k(const char *path)
{
	struct scenario *s;
	struct capture c;
	bool fits;

	s = scenario_parse_file(path, 4096, capture_open(&c));
	free(capture_close(&c));
	fits = s != NULL;
	scenario_free(s);
	return fits;
}

static void test_scenario(const char *path, const struct variant *ref,
			  const struct variant *vars, int nr_vars)
{
	struct record *base = NULL, *other;
	struct scenario *s;
	struct capture c;
	char name[128], *text;
	unsigned int rules;
	bool ok;
	int i;

	short_name(path, name, sizeof(name));
	s = scenario_parse_file(path, SCN_DEFAULT_PAGE_SIZE, capture_open(&c));
	text = capture_close(&c);
	if (!s && SCN_DEFAULT_PAGE_SIZE != 4096 && scenario_fits_4k(path)) {
		/* Written for 4K pages: a size this granule has no use for. */
		text[strcspn(text, "\n")] = '\0';
		tap_skip(text, "%s: runs on %s", name, pb_arch_name());
		free(text);
		return;
	}
	if (!s) {
		tap_ok(false, "%s: parses", name);
		tap_diag_text(text);
		free(text);
		return;
	}
	free(text);

	/* Diagnostics are gathered and shown after the test's TAP line. */
	capture_open(&c);
	base = run_record(s, ref, c.f);
	tap_ok(base != NULL, "%s %s: runs clean, the record reads back", name,
	       ref->name);
	t_text_diag(&c);

	for (i = 0; i < nr_vars; i++) {
		rules = rules_for(&vars[i].v, &ref->v);
		capture_open(&c);
		other = run_record(s, &vars[i], c.f);
		if (other && !base)
			fprintf(c.f, "no %s record to compare with\n", ref->name);
		ok = base && other &&
		     compare_records(base, other, rules, c.f) == 0;
		tap_ok(ok, "%s %s: %s", name, vars[i].name,
		       rules & CMP_SAME_FRAMES ? "the same record" :
						 "equivalent");
		t_text_diag(&c);
		record_free(other);
	}
	record_free(base);
	scenario_free(s);
}

/*
 * tests/scenarios, found from the current directory (run-all.sh runs
 * tests from the top of the tree) or else from this file's own path.
 */
static bool find_scenario_dir(char *buf, size_t size)
{
	static const char *const here = __FILE__;
	const char *unit = strstr(here, "unit/test_equivalence.c");
	DIR *d;

	snprintf(buf, size, "tests/scenarios");
	d = opendir(buf);
	if (!d && unit) {
		snprintf(buf, size, "%.*sscenarios", (int)(unit - here), here);
		d = opendir(buf);
	}
	if (d)
		closedir(d);
	return d != NULL;
}

static void test_scenarios(void)
{
	struct variant ref, vars[sizeof(variant_cases) / sizeof(variant_cases[0])];
	int nr_vars = 0;
	char dir[4096], pattern[4200];
	glob_t g;
	size_t i;

	if (!tap_ok(make_variant(REFERENCE, NULL, &ref),
		    "the reference variant %s exists", REFERENCE))
		return;
	for (i = 0; i < sizeof(variant_cases) / sizeof(variant_cases[0]); i++) {
		const struct variant_case *vc = &variant_cases[i];

		if (tap_ok(make_variant(vc->preset, vc->set, &vars[nr_vars]),
			   "variant %s%s%s can be made", vc->preset,
			   vc->set ? "+" : "", vc->set ? vc->set : ""))
			nr_vars++;
	}
	if (!tap_ok(find_scenario_dir(dir, sizeof(dir)),
		    "the scenario directory tests/scenarios is found"))
		return;
	snprintf(pattern, sizeof(pattern), "%s/*.scn", dir);
	if (!tap_ok(glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc > 0,
		    "%s holds scenarios", pattern))
		return;
	for (i = 0; i < g.gl_pathc; i++)
		test_scenario(g.gl_pathv[i], &ref, vars, nr_vars);
	globfree(&g);
}

/*
 * "  kstat NAME VALUE" lines (run --kstats) and compare_kstats(): the
 * least of the kernel runs against the model, a missing line is 0,
 * pgfault only as a lower bound, one line per difference.
 */
static void test_kstats(void)
{
	static const char model[] =
		"1 P0 mmap A 64K rw: faults 0\n"
		"2 P0 write A 0 64K: faults 1\n"
		"  kstat pgfault 1\n"
		"  kstat hugepages-64kB/anon_fault_alloc 1\n"
		"3 P0 register H A 0 64K: faults 0\n"
		"  kstat nr_foll_pin_acquired 16\n";
	/* Noise in one run only (a fault elsewhere on the machine). */
	static const char noisy[] =
		"1 P0 mmap A 64K rw: faults 0\n"
		"  kstat hugepages-64kB/anon_fault_alloc 1\n"
		"2 P0 write A 0 64K: faults 1\n"
		"  kstat pgfault 7\n"
		"  kstat hugepages-64kB/anon_fault_alloc 1\n"
		"3 P0 register H A 0 64K: faults 0\n"
		"  kstat nr_foll_pin_acquired 16\n"
		"  kstat nr_foll_pin_released 15\n";
	static const char quiet[] =
		"1 P0 mmap A 64K rw: faults 0\n"
		"2 P0 write A 0 64K: faults 1\n"
		"  kstat pgfault 3\n"
		"  kstat hugepages-64kB/anon_fault_alloc 1\n"
		"3 P0 register H A 0 64K: faults 0\n"
		"  kstat nr_foll_pin_acquired 16\n"
		"  kstat nr_foll_pin_released 15\n";
	static const char fewer[] =
		"1 P0 mmap A 64K rw: faults 0\n"
		"2 P0 write A 0 64K: faults 1\n"
		"  kstat hugepages-64kB/anon_fault_alloc 1\n"
		"3 P0 register H A 0 64K: faults 0\n"
		"  kstat nr_foll_pin_acquired 16\n";
	struct record *m = parse_record("model", model);
	struct record *k[2] = { parse_record("k1", noisy),
				parse_record("k2", quiet) };
	struct record *f = parse_record("fewer", fewer);
	struct capture c;
	char *out;
	int n;

	tap_ok(m && m->stmts[1].nr_kstats == 2 && m->stmts[1].nr_stats == 0 &&
	       !strcmp(m->stmts[1].kstats[1].name,
		       "hugepages-64kB/anon_fault_alloc") &&
	       m->stmts[1].kstats[1].value == 1,
	       "kstats: kstat lines read apart from stat lines");
	if (!m || !k[0] || !k[1] || !f)
		goto out;
	tap_ok(compare_records(m, k[0], CMP_SAME_FRAMES, NULL) == 0,
	       "kstats: records that differ only in kstat lines agree");
	capture_open(&c);
	n = compare_kstats(m, (const struct record *const *)k, 2, "X ",
			   c.f);
	out = capture_close(&c);
	tap_ok(n == 1 && !strcmp(out, "X statement 3 (P0 register H A 0 64K):"
				 " nr_foll_pin_released model 0 kernel 15\n"),
	       "kstats: the least of two runs; pgfault above the model's is"
	       " no difference");
	if (n != 1)
		tap_diag_text(out);
	free(out);
	n = compare_kstats(m, (const struct record *const *)&f, 1, "", NULL);
	tap_ok(n == 1, "kstats: pgfault below the model's is a difference"
	       " (%d)", n);
out:
	record_free(m);
	record_free(k[0]);
	record_free(k[1]);
	record_free(f);
}

int main(void)
{
	test_comparator();
	test_reader();
	test_kstats();
	test_scenarios();
	return tap_done();
}
