// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_limits.c - the machine's size is a hard limit: pb_init() refuses a
 * memory size it cannot simulate, and running out of frames in a fault,
 * a COW copy, a fork, a pin or a page-table allocation fails that one
 * operation with an error, leaves the invariants intact and leaks nothing:
 * once everything is unmapped, every frame is free again.
 *
 * The alloc_fail counter is what `ptebatch run` watches to tell "the model
 * ran out of memory" from an ENOMEM Linux itself returns (mprotect over a
 * hole), so its meaning is tested too: refused order-0 allocations only,
 * never an mTHP or THP size that falls back to a smaller one.
 *
 * Each test runs isolated (pbtest.h): a crash on the way out of memory
 * fails that test, not the program.
 */
#include <stdlib.h>

#include "tests/unit/pbtest.h"

/*
 * A small machine, so running out takes a few thousand stores: 16M, or
 * the four PMD-size blocks pb_init() needs where that is more (128M with
 * 16K pages, 2G with 64K).
 */
#define MACHINE (16UL << 20 > 4 * PMD_SIZE ? 16UL << 20 : 4 * PMD_SIZE)
/* More than the machine has, mapped but not yet touched. */
#define TOO_MUCH (4 * MACHINE)
/*
 * Where the regions go, TOO_MUCH apart at least: 256M, 512M and 768M
 * (pbtest.h's ADDR_A and ADDR_B) with 4K pages.
 */
#define LIM_SPAN (2 * TOO_MUCH > 0x10000000UL ? 2 * TOO_MUCH : 0x10000000UL)
#define LIM_A (LIM_SPAN)
#define LIM_B (2 * LIM_SPAN)

/* ---- helpers ---------------------------------------------------------- */

/*
 * Store @value into each page from @addr until a store fails or @len is
 * covered; *@done is the number of bytes stored.  Returns the failing
 * store's error, or 0.
 */
static int fill_until_error(struct pb_proc *p, unsigned long addr,
			    unsigned long len, uint8_t value,
			    unsigned long *done)
{
	int err = 0;

	for (*done = 0; *done < len; *done += PAGE_SIZE) {
		err = pb_store(p, 0, addr + *done, value);
		if (err)
			break;
	}
	return err;
}

/*
 * Ballast: a process of its own whose 4K pages take every free frame, so
 * that a test can hand exactly k frames back to the machine (zapping k
 * pages; their page table stays) and see what an operation does with
 * them.  It is an ordinary process, so the checker stays meaningful.
 */
#define ADDR_BALLAST (3 * LIM_SPAN)

static struct {
	struct pb_proc *p;
	unsigned long len;	/* bytes stored from ADDR_BALLAST */
} ballast;

/* Store into the ballast until no frame is left. */
static bool ballast_fill(void)
{
	unsigned long more = 0;

	if (!ballast.p) {
		ballast.p = t_proc_map(ADDR_BALLAST, TOO_MUCH, RW);
		if (!ballast.p ||
		    !EXPECT_EQ(pb_madvise(ballast.p, ADDR_BALLAST, TOO_MUCH,
					  MADV_NOHUGEPAGE), 0))
			return false;
	}
	EXPECT_EQ(fill_until_error(ballast.p, ADDR_BALLAST + ballast.len,
				   TOO_MUCH - ballast.len, 0xba, &more),
		  -ENOMEM);
	ballast.len += more;
	return EXPECT_EQ(nr_free_frames(), 0);
}

/* Give @n frames back to the machine: zap the last @n ballast pages. */
static void ballast_release(unsigned long n)
{
	n = n * PAGE_SIZE < ballast.len ? n * PAGE_SIZE : ballast.len;
	if (!n)
		return;
	ballast.len -= n;
	EXPECT_EQ(pb_madvise(ballast.p, ADDR_BALLAST + ballast.len, n,
			     MADV_DONTNEED), 0);
}

static void ballast_free(void)
{
	t_exit(ballast.p);
	ballast.p = NULL;
	ballast.len = 0;
}

static uint64_t alloc_fails(void)
{
	return t_stat(PB_STAT_alloc_fail);
}

/* ---- pb_init ---------------------------------------------------------- */

/* pb_init(@bytes) must fail with @want; a machine that came up anyway is
 * taken down again, so that the next test can have one. */
static void expect_init_refused(unsigned long bytes, int want)
{
	struct pb_config cfg = { .memory_bytes = bytes };
	int err = pb_init(&cfg);

	if (!err)
		pb_fini();
	if (!EXPECT_EQ(err, want))
		tap_diag("pb_init(%#lx)", bytes);
}

/*
 * An impossible size is refused before anything is reserved: above
 * PB_MAX_MEMORY (the memmap alone would cost the host gigabytes), the
 * largest unsigned long (no overflow in the frame count), below four PMD
 * blocks.  A refusal leaves nothing behind: a good size comes up next.
 */
static void test_init_limits(void)
{
	struct pb_config cfg = { .memory_bytes = MACHINE };
	bool refused;

	t.ok = true;
	expect_init_refused(PB_MAX_MEMORY + PMD_SIZE, -ENOMEM);
	expect_init_refused(~0UL, -ENOMEM);
	expect_init_refused(~0UL & ~(PMD_SIZE - 1), -ENOMEM);
	expect_init_refused(3 * PMD_SIZE, -EINVAL);
	refused = t.ok;
	if (t_begin(MACHINE)) {
		EXPECT_EQ(machine.nr_frames, MACHINE / PAGE_SIZE);
		EXPECT_EQ(pb_init(&cfg), -EBUSY);
	}
	t_finish();
	t.ok = t.ok && refused;
	t_end("limits: pb_init refuses more than PB_MAX_MEMORY (-ENOMEM), less"
	      " than 4 PMDs (-EINVAL), a second machine (-EBUSY)");
}

/* ---- anonymous faults ------------------------------------------------- */

static const struct fault_case {
	const char *name;
	unsigned long thp_size;		/* this size "always"; 0: none */
	bool hugepage;			/* MADV_HUGEPAGE on the region */
} fault_cases[] = {
	{ "4K folios", 0, false },
	{ "64K mTHP falling back to 4K", PAGES(16), false },
	{ "2M THP falling back to 4K", PMD_SIZE, true },
};

static const struct fault_case *fault_case;

/*
 *   A (4 x the machine): stored page by page until the machine is out
 *   | stored ............................ | X | untouched ...... |
 *                                     failing page
 *
 * The failing store is -ENOMEM and maps nothing; the stores before it
 * stay; a retry fails the same way; freeing one PMD's worth lets it
 * succeed; exit gives every frame back.
 */
static void body_fault_runs_out(void)
{
	const struct fault_case *c = fault_case;
	unsigned long done = 0;
	struct pb_proc *p;
	uint64_t fails;
	int err;

	if (!t_begin(MACHINE))
		return;
	if (c->thp_size)
		EXPECT_EQ(pb_set_thp_policy(c->thp_size, PB_THP_ALWAYS), 0);
	p = t_proc_map(LIM_A, TOO_MUCH, RW);
	if (!p)
		goto out;
	if (c->hugepage)
		EXPECT_EQ(pb_madvise(p, LIM_A, TOO_MUCH, MADV_HUGEPAGE), 0);
	fails = alloc_fails();
	err = fill_until_error(p, LIM_A, TOO_MUCH, 0x5a, &done);
	EXPECT_EQ(err, -ENOMEM);
	EXPECT(done >= PMD_SIZE && done < MACHINE);
	EXPECT_EQ(nr_free_frames(), 0);
	EXPECT(alloc_fails() > fails);
	EXPECT(!t_page(p, LIM_A + done).present);
	EXPECT_CLEAN();
	EXPECT_EQ(pb_store(p, 0, LIM_A + done, 0x5a), -ENOMEM);
	EXPECT(t_data_is(p, LIM_A, 1, 0x5a));
	EXPECT(t_data_is(p, LIM_A + done - PAGE_SIZE, 1, 0x5a));
	EXPECT_CLEAN();
	/* The first PMD's worth back: the failing store now succeeds. */
	EXPECT_EQ(pb_munmap(p, LIM_A, PMD_SIZE), 0);
	EXPECT(nr_free_frames() >= PMD_SIZE / PAGE_SIZE);
	EXPECT_EQ(pb_store(p, 0, LIM_A + done, 0x5b), 0);
	EXPECT(t_data_is(p, LIM_A + done, 1, 0x5b));
	EXPECT_CLEAN();
	EXPECT_EQ(pb_munmap(p, LIM_A, TOO_MUCH), 0);
	t_exit(p);
	EXPECT_EQ(pb_frames_in_use(), t.baseline);
out:
	t_finish();
}

/* ---- copy-on-write ---------------------------------------------------- */

/*
 *   P0, P1: A (1M, 4K folios) shared after fork
 *   P0:     B (4 x the machine) stored until the machine is out
 *
 * P1's write to A needs a copy and there is no frame: -ENOMEM, and A
 * stays shared, its bytes unchanged in both.  With a PMD's worth of B
 * unmapped the same write copies.
 */
static void body_cow_runs_out(void)
{
	unsigned long done, pfn, n = PAGES(256) / PAGE_SIZE;
	struct pb_proc *p0, *p1 = NULL;

	if (!t_begin(MACHINE))
		return;
	p0 = t_proc_written(LIM_A, PAGES(256), 1);
	if (!p0 || !t.ok)
		goto out;
	p1 = t_fork(p0);
	if (!p1 || !EXPECT_EQ(pb_mmap(p0, LIM_B, TOO_MUCH, RW), 0))
		goto out;
	EXPECT_EQ(fill_until_error(p0, LIM_B, TOO_MUCH, 0x5a, &done), -ENOMEM);
	EXPECT_EQ(nr_free_frames(), 0);
	pfn = t_pfn(p1, LIM_A);
	EXPECT_EQ(pb_store(p1, 0, LIM_A, 0x77), -ENOMEM);
	EXPECT_EQ(t_pfn(p1, LIM_A), pfn);
	EXPECT_EQ(t_pfn(p0, LIM_A), pfn);
	EXPECT(t_data_is(p0, LIM_A, n, 1));
	EXPECT(t_data_is(p1, LIM_A, n, 1));
	EXPECT_CLEAN();
	EXPECT_EQ(pb_munmap(p0, LIM_B, PMD_SIZE), 0);
	EXPECT_EQ(pb_store(p1, 0, LIM_A, 0x77), 0);
	EXPECT(t_pfn(p1, LIM_A) != pfn);
	EXPECT(t_data_is(p0, LIM_A, n, 1));
	EXPECT_CLEAN();
out:
	t_exit(p1);
	t_exit(p0);
	EXPECT_EQ(pb_frames_in_use(), t.baseline);
	t_finish();
}

/* ---- fork ------------------------------------------------------------- */

static const struct fork_case {
	const char *name;
	bool pinned;	/* exclusive pages of a pinned folio: fork copies */
} fork_cases[] = {
	{ "shared folios", false },
	{ "pinned folios, copied at fork", true },
};

static const struct fork_case *fork_case;

/*
 *   P0: A (64K, one mTHP folio, optionally pinned long-term)
 *
 * With every other frame in the ballast, fork is tried with 0, 1, 2, ...
 * frames free, until it succeeds.  Each failure is -ENOMEM wherever it
 * happened (the child's PGD, an upper table, a PTE table, a page copied
 * for a pin) and gives back all it took: the same frames are free again,
 * A's folio has the references and mappings it had, and the checker is
 * clean.  Then the fork that succeeds gives the child A's bytes.
 */
static void body_fork_runs_out(void)
{
	const struct fork_case *c = fork_case;
	struct pb_pages *pin = NULL;
	struct pb_proc *p, *child = NULL;
	int err = -ENOMEM, ref, map, pins, failed = 0;
	struct folio *folio;
	unsigned long k;

	if (!t_begin(MACHINE))
		return;
	EXPECT_EQ(pb_set_thp_policy(PAGES(16), PB_THP_ALWAYS), 0);
	p = t_proc_written(LIM_A, PAGES(16), 1);
	if (!p || !t.ok)
		goto out;
	if (c->pinned && !EXPECT_EQ(pb_gup_fast(p, LIM_A, 16, PB_FOLL_PIN |
						PB_FOLL_WRITE | PB_FOLL_LONGTERM,
						&pin), 0))
		goto out;
	folio = t_folio_at(p, LIM_A);
	EXPECT_EQ(folio_order(folio), 4);
	ref = folio_ref_count(folio);
	map = folio_mapcount(folio);
	pins = atomic_load(&folio->_pincount);
	if (!ballast_fill())
		goto out;
	for (k = 0; k < 64; k++) {
		ballast_release(k);
		EXPECT_EQ(nr_free_frames(), k);
		err = pb_fork(p, &child);
		if (!err)
			break;
		failed++;
		EXPECT_EQ(err, -ENOMEM);
		EXPECT_EQ(nr_free_frames(), k);
		EXPECT_EQ(folio_ref_count(folio), ref);
		EXPECT_EQ(folio_mapcount(folio), map);
		EXPECT_EQ(atomic_load(&folio->_pincount), pins);
		EXPECT(t_data_is(p, LIM_A, 16, 1));
		EXPECT_CLEAN();
		if (!t.ok || !ballast_fill())
			break;
	}
	if (EXPECT_EQ(err, 0)) {
		tap_diag("fork failed with 0..%d frames free, succeeded with %lu",
			 failed - 1, k);
		EXPECT(t_data_is(child, LIM_A, 16, 1));
		EXPECT_CLEAN();
		pb_exit(child);
	}
	/* 0 frames fails at the PGD; more must fail further in, too. */
	if (!EXPECT(failed >= 3))
		tap_diag("fork failed only with %d frames or fewer", failed - 1);
out:
	t_release(pin, false);
	t_exit(p);
	ballast_free();
	EXPECT_EQ(pb_frames_in_use(), t.baseline);
	t_finish();
}

/* ---- pinning ---------------------------------------------------------- */

/*
 *   A (4 x the machine), untouched: pin all of it, writable, long-term
 *
 * The pin faults pages in until the machine is out, gives back every page
 * it got and fails (-EFAULT: fewer pages than asked, as io_uring reports
 * a short pin); nothing stays pinned.  Pinning more once nothing is free
 * fails at its first page with -ENOMEM.
 */
static void body_pin_runs_out(void)
{
	unsigned int foll = PB_FOLL_PIN | PB_FOLL_WRITE | PB_FOLL_LONGTERM;
	struct pb_pages *pin = NULL;
	struct pb_proc *p;
	struct folio *folio;

	if (!t_begin(MACHINE))
		return;
	p = t_proc_map(LIM_A, TOO_MUCH, RW);
	if (!p)
		goto out;
	EXPECT_EQ(pb_gup_fast(p, LIM_A, TOO_MUCH / PAGE_SIZE, foll, &pin), -EFAULT);
	EXPECT(pin == NULL);
	EXPECT_EQ(nr_free_frames(), 0);
	EXPECT(t_page(p, LIM_A).present);
	folio = t_folio_at(p, LIM_A);
	EXPECT(!folio_maybe_dma_pinned(folio));
	EXPECT_EQ(folio_ref_count(folio), 1);
	EXPECT_CLEAN();
	/* Past what was faulted in: nothing to pin, nothing to fault in. */
	EXPECT_EQ(pb_gup_fast(p, LIM_A + TOO_MUCH - PAGES(16), 16, foll, &pin),
		  -ENOMEM);
	EXPECT(pin == NULL);
	EXPECT_CLEAN();
	EXPECT_EQ(pb_munmap(p, LIM_A, TOO_MUCH), 0);
	t_exit(p);
	EXPECT_EQ(pb_frames_in_use(), t.baseline);
out:
	t_finish();
}

/* ---- page tables ------------------------------------------------------ */

/*
 *   A (4 x the machine): stored until the machine is out
 *   R (64K, PROT_READ) in a 2M block of its own: no PTE table yet
 *
 * Reading R maps the zero page, which needs a PTE table: -ENOMEM, counted
 * as a refused allocation.  One page of A unmapped frees one frame,
 * enough for the table.
 */
static void body_table_runs_out(void)
{
	unsigned long done;
	struct pb_proc *p;
	uint64_t fails;
	uint8_t v = 1;

	if (!t_begin(MACHINE))
		return;
	p = t_proc_map(LIM_A, TOO_MUCH, RW);
	if (!p || !EXPECT_EQ(pb_mmap(p, LIM_B, PAGES(16), PB_PROT_READ), 0))
		goto out;
	EXPECT_EQ(fill_until_error(p, LIM_A, TOO_MUCH, 0x5a, &done), -ENOMEM);
	EXPECT_EQ(nr_free_frames(), 0);
	fails = alloc_fails();
	EXPECT_EQ(pb_load(p, 0, LIM_B, &v), -ENOMEM);
	EXPECT_EQ(alloc_fails(), fails + 1);
	EXPECT(!t_page(p, LIM_B).present);
	EXPECT_CLEAN();
	EXPECT_EQ(pb_munmap(p, LIM_A + done - PAGE_SIZE, PAGE_SIZE), 0);
	EXPECT_EQ(nr_free_frames(), 1);
	EXPECT_EQ(pb_load(p, 0, LIM_B, &v), 0);
	EXPECT_EQ(v, 0);
	EXPECT(t_page(p, LIM_B).present);
	EXPECT_EQ(alloc_fails(), fails + 1);
	EXPECT_CLEAN();
out:
	t_exit(p);
	EXPECT_EQ(pb_frames_in_use(), t.baseline);
	t_finish();
}

/* ---- what alloc_fail counts ------------------------------------------- */

/*
 *   A (128K), 64K mTHP "always"; its first folio faulted in (the tables
 *   exist), then every free frame but one in the ballast
 *
 * A fault at 64K wants a 64K folio, cannot have one and falls back to 4K:
 * no refused allocation counted, the store succeeds.  The next page finds
 * nothing at all: -ENOMEM and one refused allocation.
 */
static void body_fallback_not_counted(void)
{
	struct pb_proc *p;
	uint64_t fails;

	if (!t_begin(MACHINE))
		return;
	EXPECT_EQ(pb_set_thp_policy(PAGES(16), PB_THP_ALWAYS), 0);
	p = t_proc_map(LIM_A, 2 * PAGES(16), RW);
	if (!p || !EXPECT_EQ(pb_store(p, 0, LIM_A, 1), 0) ||
	    !ballast_fill())
		goto out;
	ballast_release(1);
	fails = alloc_fails();
	EXPECT(folio_alloc(4) == NULL);
	EXPECT_EQ(alloc_fails(), fails);
	EXPECT_EQ(pb_store(p, 0, LIM_A + PAGES(16), 2), 0);
	EXPECT_EQ(t_page(p, LIM_A + PAGES(16)).folio_size, PAGE_SIZE);
	EXPECT_EQ(alloc_fails(), fails);
	EXPECT_EQ(pb_store(p, 0, LIM_A + PAGES(16) + PAGE_SIZE, 3), -ENOMEM);
	EXPECT_EQ(alloc_fails(), fails + 1);
	EXPECT_CLEAN();
out:
	t_exit(p);
	ballast_free();
	EXPECT_EQ(pb_frames_in_use(), t.baseline);
	t_finish();
}

int main(void)
{
	size_t i;

	test_init_limits();
	for (i = 0; i < sizeof(fault_cases) / sizeof(fault_cases[0]); i++) {
		fault_case = &fault_cases[i];
		t_isolated(body_fault_runs_out, "limits: faults with %s run out"
			   " with -ENOMEM, clean, and recover", fault_case->name);
	}
	t_isolated(body_cow_runs_out, "limits: a COW copy with no frame left is"
		   " -ENOMEM; the page stays shared");
	for (i = 0; i < sizeof(fork_cases) / sizeof(fork_cases[0]); i++) {
		fork_case = &fork_cases[i];
		t_isolated(body_fork_runs_out, "limits: fork of %s fails with"
			   " -ENOMEM at every step and gives every frame and"
			   " reference back", fork_case->name);
	}
	t_isolated(body_pin_runs_out, "limits: a pin that runs out holds"
		   " nothing; pinning with nothing free is -ENOMEM");
	t_isolated(body_table_runs_out, "limits: a page table with no frame left"
		   " is -ENOMEM; one frame back is enough");
	t_isolated(body_fallback_not_counted, "limits: an mTHP fallback is not a"
		   " refused allocation; running out of order-0 frames is");
	return tap_done();
}
