// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_gup.c - GUP and pinning (mm/gup.c: try_grab_folio, the GUP-fast
 * PTE walk, gup_must_unshare, unpin_user_pages): reference and
 * _pincount accounting, unshare on R/O pins of shared pages, COW break on
 * writable pins, errors that hold nothing, GUP-fast alone, the zero page,
 * and the exact atomic counts of today's per-PTE GUP-fast.
 */
#include "tests/unit/pbtest.h"

#define PIN_RW (PB_FOLL_PIN | PB_FOLL_WRITE)

/* Pinning 4K folios adds GUP_PIN_COUNTING_BIAS per page; unpin restores. */
static void test_pin_small(void)
{
	struct pb_proc *p;
	struct pb_pages *pin = NULL;
	unsigned long i, pfn[4];

	t_begin(SZ_64M);
	p = t_proc_written(ADDR_A, 4 * PAGE_SIZE, 1);
	t_pfns(p, ADDR_A, 4, pfn);
	EXPECT_EQ(pb_gup_fast(p, ADDR_A + PAGE_SIZE, 3, PIN_RW, &pin), 0);
	EXPECT_EQ(pb_pages_count(pin), 3);
	EXPECT_CLEAN();
	EXPECT_EQ(folio_ref_count(t_folio(pfn[0])), 1);
	for (i = 1; i < 4; i++) {
		EXPECT_EQ(folio_ref_count(t_folio(pfn[i])), 1 + GUP_PIN_COUNTING_BIAS);
		EXPECT(folio_maybe_dma_pinned(t_folio(pfn[i])));
	}
	EXPECT(mm_of(p)->has_pinned);
	pb_pages_release(pin, false);
	EXPECT_CLEAN();
	for (i = 0; i < 4; i++)
		EXPECT_EQ(folio_ref_count(t_folio(pfn[i])), 1);
	EXPECT(!folio_maybe_dma_pinned(t_folio(pfn[1])));
	t_exit(p);
	t_end("gup: pinning 4K folios adds 1024 refs per page; unpin restores");
}

/* Pinning pages of a 64K folio adds 1 ref + 1 _pincount each; GET adds 1 ref. */
static void test_pin_and_get_large(void)
{
	struct pb_proc *p;
	struct pb_pages *pin = NULL, *get = NULL;
	struct folio *folio;

	t_begin_folios(SZ_64M, PAGES(16));
	p = t_proc_written(ADDR_A, PAGES(16), 0);
	folio = t_folio_at(p, ADDR_A);
	EXPECT_EQ(folio_ref_count(folio), 16);
	EXPECT_EQ(pb_gup_fast(p, ADDR_A + 2 * PAGE_SIZE, 5, PIN_RW, &pin), 0);
	EXPECT_EQ(folio_ref_count(folio), 16 + 5);
	EXPECT_EQ(atomic_load(&folio->_pincount), 5);
	EXPECT_CLEAN();
	EXPECT_EQ(pb_gup_fast(p, ADDR_A, 16, PB_FOLL_GET, &get), 0);
	EXPECT_EQ(folio_ref_count(folio), 16 + 5 + 16);
	EXPECT_EQ(atomic_load(&folio->_pincount), 5);
	EXPECT_CLEAN();
	pb_pages_release(pin, true);
	EXPECT_EQ(folio_ref_count(folio), 16 + 16);
	EXPECT_EQ(atomic_load(&folio->_pincount), 0);
	EXPECT(folio_test_dirty(folio));
	EXPECT_CLEAN();
	pb_pages_release(get, false);
	EXPECT_EQ(folio_ref_count(folio), 16);
	EXPECT_CLEAN();
	t_exit(p);
	t_end("gup: 64K folio pin adds 1 ref + 1 pincount per page, GET adds 1 ref; release restores");
}

/*
 * A R/O pin (FOLL_PIN without WRITE) of a page shared after fork unshares
 * it: the pinner gets an exclusive copy, the other process keeps the
 * original, and the pinner's later writes are visible through the pin.
 */
static void test_ro_pin_unshares(void)
{
	struct pb_proc *p, *c;
	struct pb_pages *pin = NULL;
	unsigned long orig, copy;
	struct t_snap s;
	uint8_t v = 0;

	t_begin(SZ_64M);
	p = t_proc_written(ADDR_A, 2 * PAGE_SIZE, 0x30);
	orig = t_pfn(p, ADDR_A);
	c = t_fork(p);
	t_snap(&s);
	EXPECT_EQ(pb_gup_fast(p, ADDR_A, 1, PB_FOLL_PIN, &pin), 0);
	EXPECT_CLEAN();
	EXPECT_EQ(t_since(&s, PB_STAT_fault_unshare), 1);
	EXPECT(t_pfn(p, ADDR_A) != orig);
	EXPECT_EQ(t_pfn(c, ADDR_A), orig);
	EXPECT(t_exclusive(p, ADDR_A));
	EXPECT(!t_writable(p, ADDR_A));		/* unshare never write-enables */
	copy = t_pfn(p, ADDR_A);
	pb_pages_read(pin, 0, &v, 1);
	EXPECT_EQ(v, 0x30);
	/* a later write by the pinner reuses the pinned page: visible via the pin */
	EXPECT_EQ(pb_store(p, 0, ADDR_A, 0x31), 0);
	EXPECT_EQ(t_pfn(p, ADDR_A), copy);
	pb_pages_read(pin, 0, &v, 1);
	EXPECT_EQ(v, 0x31);
	EXPECT_EQ(pb_load(c, 0, ADDR_A, &v), 0);
	EXPECT_EQ(v, 0x30);
	EXPECT_CLEAN();
	pb_pages_release(pin, false);
	EXPECT_CLEAN();
	t_exit(c);
	t_exit(p);
	t_end("gup: R/O pin of a page shared after fork unshares it; pinner's writes reach the pin");
}

/* The same on a 64K folio: the pinned page is copied, the folio stays shared. */
static void test_ro_pin_unshares_large(void)
{
	struct pb_proc *p, *c;
	struct pb_pages *pin = NULL;
	unsigned long orig;

	t_begin_folios(SZ_64M, PAGES(16));
	p = t_proc_written(ADDR_A, PAGES(16), 0x30);
	orig = t_pfn(p, ADDR_A + 3 * PAGE_SIZE);
	c = t_fork(p);
	EXPECT_EQ(pb_gup_fast(c, ADDR_A + 3 * PAGE_SIZE, 1, PB_FOLL_PIN, &pin), 0);
	EXPECT_CLEAN();
	EXPECT(t_pfn(c, ADDR_A + 3 * PAGE_SIZE) != orig);
	EXPECT_EQ(t_page(c, ADDR_A + 3 * PAGE_SIZE).folio_size, PAGE_SIZE);
	EXPECT_EQ(t_pfn(p, ADDR_A + 3 * PAGE_SIZE), orig);
	EXPECT_EQ(t_pfn(c, ADDR_A + 4 * PAGE_SIZE), t_pfn(p, ADDR_A + 4 * PAGE_SIZE));
	pb_pages_release(pin, false);
	EXPECT_CLEAN();
	t_exit(c);
	t_exit(p);
	t_end("gup: R/O pin in a shared 64K folio copies only the pinned page");
}

/* A R/O pin of a page that was shared but no longer is takes no copy. */
static void test_ro_pin_after_exit_no_copy(void)
{
	struct pb_proc *p;
	struct pb_pages *pin = NULL;
	unsigned long pfn, pfn64;
	struct t_snap s;

	t_begin_folios(SZ_64M, PAGES(16));
	p = t_proc_written(ADDR_A, PAGE_SIZE, 1);
	t_map_written(p, ADDR_B, PAGES(16), 1);
	pfn = t_pfn(p, ADDR_A);
	pfn64 = t_pfn(p, ADDR_B + 5 * PAGE_SIZE);
	t_fork_exit(p);
	t_snap(&s);
	EXPECT_EQ(pb_gup_fast(p, ADDR_A, 1, PB_FOLL_PIN, &pin), 0);
	EXPECT_EQ(t_pfn(p, ADDR_A), pfn);
	EXPECT(t_exclusive(p, ADDR_A));
	EXPECT_CLEAN();
	pb_pages_release(pin, false);
	EXPECT_EQ(pb_gup_fast(p, ADDR_B + 5 * PAGE_SIZE, 1, PB_FOLL_PIN, &pin), 0);
	EXPECT_EQ(t_pfn(p, ADDR_B + 5 * PAGE_SIZE), pfn64);
	EXPECT(t_exclusive(p, ADDR_B + 5 * PAGE_SIZE));
	EXPECT_CLEAN();
	pb_pages_release(pin, false);
	EXPECT_EQ(t_since(&s, PB_STAT_folio_copy), 0);
	EXPECT_CLEAN();
	t_exit(p);
	t_end("gup: R/O pin of a previously shared page (child exited) takes no copy");
}

/* A writable pin of a R/O PTE of a shared page breaks COW first. */
static void test_write_pin_breaks_cow(void)
{
	struct pb_proc *p, *c;
	struct pb_pages *pin = NULL;
	unsigned long orig;
	uint8_t v = 0;

	t_begin(SZ_64M);
	p = t_proc_written(ADDR_A, PAGE_SIZE, 0x50);
	orig = t_pfn(p, ADDR_A);
	c = t_fork(p);
	EXPECT_EQ(pb_gup_fast(p, ADDR_A, 1, PIN_RW, &pin), 0);
	EXPECT_CLEAN();
	EXPECT(t_pfn(p, ADDR_A) != orig);
	EXPECT_EQ(t_pfn(c, ADDR_A), orig);
	EXPECT(t_writable(p, ADDR_A));
	EXPECT(!t_writable(c, ADDR_A));
	pb_pages_fill(pin, 0x51);	/* the "device" writes */
	EXPECT_EQ(pb_load(p, 0, ADDR_A, &v), 0);
	EXPECT_EQ(v, 0x51);
	EXPECT_EQ(pb_load(c, 0, ADDR_A, &v), 0);
	EXPECT_EQ(v, 0x50);
	pb_pages_release(pin, true);
	EXPECT_CLEAN();
	t_exit(c);
	t_exit(p);
	t_end("gup: writable pin of a shared R/O page breaks COW; the other process keeps the original");
}

/*
 * Failures hold nothing: FOLL_WRITE on PROT_READ is -EFAULT; a range
 * whose second page is PROT_READ gives back the first page's pin.
 *
 *   ADDR_A [RW page][RO page]
 */
static void test_write_pin_prot_read(void)
{
	struct pb_proc *p;
	struct pb_pages *pin = NULL;
	unsigned long pfn;

	t_begin(SZ_64M);
	p = t_proc_written(ADDR_A, 2 * PAGE_SIZE, 1);
	EXPECT_EQ(pb_mprotect(p, ADDR_A + PAGE_SIZE, PAGE_SIZE, PB_PROT_READ), 0);
	pfn = t_pfn(p, ADDR_A);
	EXPECT_EQ(pb_gup_fast(p, ADDR_A + PAGE_SIZE, 1, PIN_RW, &pin), -EFAULT);
	EXPECT_EQ(pb_gup_fast(p, ADDR_A, 2, PIN_RW, &pin), -EFAULT);
	EXPECT_EQ(pb_gup_fast(p, ADDR_A, 2, PB_FOLL_GET | PB_FOLL_WRITE, &pin), -EFAULT);
	EXPECT_EQ(folio_ref_count(t_folio(pfn)), 1);
	EXPECT_EQ(folio_ref_count(t_folio_at(p, ADDR_A + PAGE_SIZE)), 1);
	EXPECT_EQ(pb_gup_fast(p, ADDR_B, 1, PIN_RW, &pin), -EFAULT);	/* no VMA */
	EXPECT_EQ(pb_gup_fast(p, ADDR_A, 1, PB_FOLL_PIN | PB_FOLL_GET, &pin), -EINVAL);
	EXPECT_EQ(pb_gup_fast(p, ADDR_A, 1, PB_FOLL_GET | PB_FOLL_LONGTERM, &pin), -EINVAL);
	EXPECT_CLEAN();
	/* R/O pins of the PROT_READ page are fine */
	EXPECT_EQ(pb_gup_fast(p, ADDR_A, 2, PB_FOLL_PIN, &pin), 0);
	EXPECT_CLEAN();
	pb_pages_release(pin, false);
	t_exit(p);
	t_end("gup: FOLL_WRITE pin of PROT_READ is -EFAULT and holds nothing");
}

/*
 * FOLL_FAST_ONLY never faults: a fully mapped range is taken by GUP-fast
 * alone; a range with an unmapped page returns what GUP-fast could take
 * (seen white-box), the public API then gives it back.
 *
 *   ADDR_A [w][w][w][ ][w][w][w][w]   page 3 never touched
 */
static void test_fast_only(void)
{
	struct pb_proc *p;
	struct pb_pages *pin = NULL;
	struct page *pages[8];
	unsigned long faults, pfn0;
	struct t_snap s;
	long got;

	t_begin(SZ_64M);
	p = t_proc_map(ADDR_A, 8 * PAGE_SIZE, RW);
	EXPECT(t_fill(p, ADDR_A, 3, 0));
	EXPECT(t_fill(p, ADDR_A + 4 * PAGE_SIZE, 4, 0));
	pfn0 = t_pfn(p, ADDR_A);
	faults = pb_proc_faults(p);
	t_snap(&s);
	EXPECT_EQ(pb_gup_fast(p, ADDR_A + 4 * PAGE_SIZE, 4,
			      PIN_RW | PB_FOLL_FAST_ONLY, &pin), 0);
	EXPECT_EQ(t_since(&s, PB_STAT_gup_fast_pages), 4);
	EXPECT_EQ(t_since(&s, PB_STAT_gup_slow_pages), 0);
	EXPECT_CLEAN();
	pb_pages_release(pin, false);

	EXPECT_EQ(pb_gup_fast(p, ADDR_A, 8, PIN_RW | PB_FOLL_FAST_ONLY, &pin),
		  -EFAULT);
	EXPECT_EQ(pb_proc_faults(p), faults);
	EXPECT(!t_page(p, ADDR_A + 3 * PAGE_SIZE).present);
	EXPECT_EQ(folio_ref_count(t_folio(pfn0)), 1);
	EXPECT_CLEAN();

	/* white-box: GUP-fast stops at the hole and keeps what it took */
	got = get_user_pages_fast_flags(mm_of(p), ADDR_A, 8,
					PIN_RW | PB_FOLL_FAST_ONLY, pages);
	EXPECT_EQ(got, 3);
	EXPECT_EQ(folio_ref_count(t_folio(pfn0)), 1 + GUP_PIN_COUNTING_BIAS);
	if (got > 0)
		unpin_user_pages_dirty_lock(pages, (unsigned long)got, false);
	EXPECT_EQ(pb_proc_faults(p), faults);
	EXPECT_CLEAN();
	/* without FAST_ONLY the slow path faults the hole in */
	EXPECT_EQ(pb_gup_fast(p, ADDR_A, 8, PIN_RW, &pin), 0);
	EXPECT_EQ(pb_proc_faults(p), faults + 1);
	EXPECT_CLEAN();
	pb_pages_release(pin, false);
	t_exit(p);
	t_end("gup: FOLL_FAST_ONLY returns what GUP-fast can take without faulting");
}

/*
 * Pins of the shared zero page take no reference (slow path; GUP-fast
 * bails on the special PTE).  A long-term R/O pin unshares it instead.
 */
static void test_zero_page_pins(void)
{
	struct pb_proc *p;
	struct pb_pages *pin = NULL;
	struct folio *zero;
	int ref;
	uint8_t v = 0xff;

	t_begin(SZ_64M);
	zero = pfn_folio(machine.zero_pfn);
	p = t_proc_map(ADDR_A, 2 * PAGE_SIZE, RW);
	EXPECT_EQ(pb_load(p, 0, ADDR_A, &v), 0);
	EXPECT_EQ(pb_load(p, 0, ADDR_A + PAGE_SIZE, &v), 0);
	ref = folio_ref_count(zero);
	EXPECT_EQ(pb_gup_fast(p, ADDR_A, 2, PB_FOLL_PIN, &pin), 0);
	EXPECT_EQ(folio_ref_count(zero), ref);
	EXPECT_EQ(t_pfn(p, ADDR_A), machine.zero_pfn);
	pb_pages_read(pin, 1, &v, 1);
	EXPECT_EQ(v, 0);
	EXPECT_CLEAN();
	pb_pages_release(pin, false);
	EXPECT_EQ(folio_ref_count(zero), ref);
	EXPECT_CLEAN();

	EXPECT_EQ(pb_gup_fast(p, ADDR_A, 1, PB_FOLL_PIN | PB_FOLL_LONGTERM, &pin), 0);
	EXPECT(t_pfn(p, ADDR_A) != machine.zero_pfn);
	EXPECT(!t_writable(p, ADDR_A));
	EXPECT_EQ(folio_ref_count(t_folio(t_pfn(p, ADDR_A))), 1 + GUP_PIN_COUNTING_BIAS);
	EXPECT_EQ(t_pfn(p, ADDR_A + PAGE_SIZE), machine.zero_pfn);
	EXPECT_CLEAN();
	pb_pages_release(pin, false);
	EXPECT_EQ(folio_ref_count(zero), ref);
	t_exit(p);
	t_end("gup: pins of the zero page take no ref; a long-term R/O pin unshares it");
}

/*
 * The huge zero folio, unlike the 4K zero page, is really pinned by a
 * read-only FOLL_PIN (an O_DIRECT write from a range only ever read):
 * one reference and one _pincount per page, and NR_FOLL_PIN_ACQUIRED
 * moves; unpinning takes them back.  Linux 6.18 does this (measured
 * with /proc/vmstat's nr_foll_pin_acquired around O_DIRECT writes from
 * a huge-zero-mapped range: +1 per write, +0 from the 4K zero page).
 * GUP-fast bails on the special PMD, so the slow path takes them.
 */
static void test_huge_zero_folio_pins(void)
{
	struct pb_proc *p;
	struct pb_pages *pin = NULL;
	struct folio *hzero;
	long acquired, released;
	int ref, pins;
	uint8_t v = 0xff;

	t_begin_folios(SZ_64M, PMD_SIZE);
	hzero = pfn_folio(machine.huge_zero_pfn);
	p = t_proc_map(ADDR_A, PMD_SIZE, RW);
	EXPECT_EQ(pb_load(p, 0, ADDR_A, &v), 0);
	EXPECT_EQ(t_pfn(p, ADDR_A + 3 * PAGE_SIZE), machine.huge_zero_pfn + 3);
	EXPECT(t_pmd_mapped(p, ADDR_A));
	ref = folio_ref_count(hzero);
	pins = atomic_load(&hzero->_pincount);
	node_stat_flush();
	acquired = atomic_load(&vm_node_stat[NR_FOLL_PIN_ACQUIRED]);
	released = atomic_load(&vm_node_stat[NR_FOLL_PIN_RELEASED]);

	EXPECT_EQ(pb_gup_fast(p, ADDR_A + 2 * PAGE_SIZE, 4, PB_FOLL_PIN, &pin), 0);
	EXPECT_EQ(pb_pages_pfn(pin, 0), machine.huge_zero_pfn + 2);
	EXPECT_EQ(folio_ref_count(hzero), ref + 4);
	EXPECT_EQ(atomic_load(&hzero->_pincount), pins + 4);
	node_stat_flush();
	EXPECT_EQ(atomic_load(&vm_node_stat[NR_FOLL_PIN_ACQUIRED]), acquired + 4);
	EXPECT(t_pmd_mapped(p, ADDR_A));	/* no unshare: not long-term */
	EXPECT_CLEAN();

	pb_pages_release(pin, false);
	EXPECT_EQ(folio_ref_count(hzero), ref);
	EXPECT_EQ(atomic_load(&hzero->_pincount), pins);
	node_stat_flush();
	EXPECT_EQ(atomic_load(&vm_node_stat[NR_FOLL_PIN_RELEASED]), released + 4);
	EXPECT_CLEAN();
	t_exit(p);
	t_end("gup: a R/O pin of the huge zero folio takes refs, _pincount and the pin stats");
}

/*
 * The cost of today's per-PTE GUP-fast on a 64K folio, counted exactly
 * so a batched path can be compared: one speculative ref per page (and
 * one _pincount RMW per page for PIN), and one put per folio on release.
 */
static void test_fast_atomic_counts(void)
{
	struct pb_proc *p;
	struct pb_pages *pin = NULL;
	struct t_snap s;

	t_begin_folios(SZ_64M, PAGES(16));
	p = t_proc_written(ADDR_A, PAGES(16), 0);

	t_snap(&s);
	EXPECT_EQ(pb_gup_fast(p, ADDR_A, 16, PIN_RW, &pin), 0);
	EXPECT_EQ(t_since(&s, PB_STAT_folio_ref_atomic), 16);
	EXPECT_EQ(t_since(&s, PB_STAT_pincount_atomic), 16);
	EXPECT_EQ(t_since(&s, PB_STAT_gup_fast_pages), 16);
	t_snap(&s);
	pb_pages_release(pin, false);
	EXPECT_EQ(t_since(&s, PB_STAT_folio_ref_atomic), 1);
	EXPECT_EQ(t_since(&s, PB_STAT_pincount_atomic), 1);

	t_snap(&s);
	EXPECT_EQ(pb_gup_fast(p, ADDR_A, 16, PB_FOLL_GET, &pin), 0);
	EXPECT_EQ(t_since(&s, PB_STAT_folio_ref_atomic), 16);
	EXPECT_EQ(t_since(&s, PB_STAT_pincount_atomic), 0);
	EXPECT_CLEAN();
	pb_pages_release(pin, false);
	EXPECT_CLEAN();
	t_exit(p);
	t_end("gup: per-PTE GUP-fast of a 64K folio costs 16 ref atomics (+16 pincount for PIN)");
}

/*
 * A caller-owned pages[] (pb_pages_alloc): taken into, put and taken
 * again with the references exact each time; too many pages, a set that
 * still holds, and a failed take leave nothing held.
 */
static void test_preallocated_pages(void)
{
	struct pb_proc *p;
	struct pb_pages *set;
	unsigned long pfn;
	int round;

	t_begin(SZ_64M);
	p = t_proc_written(ADDR_A, 4 * PAGE_SIZE, 1);
	pfn = t_pfn(p, ADDR_A);
	set = pb_pages_alloc(4);
	EXPECT(set != NULL);
	EXPECT_EQ(pb_gup_fast_into(p, ADDR_A, 5, PIN_RW, set), -EINVAL);
	for (round = 0; round < 2; round++) {
		EXPECT_EQ(pb_gup_fast_into(p, ADDR_A, 4, PIN_RW, set), 0);
		EXPECT_EQ(pb_pages_count(set), 4);
		EXPECT_EQ(folio_ref_count(t_folio(pfn)), 1 + GUP_PIN_COUNTING_BIAS);
		/* Still holding: a second take into it is refused. */
		EXPECT_EQ(pb_gup_fast_into(p, ADDR_A, 1, PIN_RW, set), -EINVAL);
		EXPECT_CLEAN();
		pb_pages_put(set, false);
		EXPECT_EQ(pb_pages_count(set), 0);
		EXPECT_EQ(folio_ref_count(t_folio(pfn)), 1);
		EXPECT_CLEAN();
	}
	/* Past the VMA: fails, holds nothing, and the set stays usable. */
	EXPECT_EQ(pb_gup_fast_into(p, ADDR_A + PAGE_SIZE, 4, PIN_RW, set), -EFAULT);
	EXPECT_EQ(pb_pages_count(set), 0);
	EXPECT_EQ(pb_gup_fast_into(p, ADDR_A, 1, PB_FOLL_GET, set), 0);
	EXPECT_EQ(folio_ref_count(t_folio(pfn)), 2);
	pb_pages_free(set);		/* drops what it holds */
	EXPECT_EQ(folio_ref_count(t_folio(pfn)), 1);
	EXPECT_CLEAN();
	t_exit(p);
	t_end("gup: a preallocated pages[] is reused; refs exact; errors hold nothing");
}

/*
 * MADV_POPULATE_WRITE and MAP_POPULATE fault through the GUP slow path
 * but take nothing: a populated 64K folio has one reference and one
 * mapping per page, no pin, and the faults are the process's.
 *
 *   ADDR_A [64K folio][64K folio]   populate-write of the first 96K
 */
static void test_populate_takes_no_reference(void)
{
	struct pb_proc *p;
	struct folio *folio;
	unsigned long pfn;

	t_begin_folios(SZ_64M, PAGES(16));
	p = t_proc_map(ADDR_A, PAGES(32), RW);
	EXPECT_EQ(pb_madvise(p, ADDR_A, PAGES(24), MADV_POPULATE_WRITE), 0);
	EXPECT_CLEAN();
	EXPECT_EQ(pb_proc_faults(p), 2);
	pfn = t_pfn(p, ADDR_A + PAGES(16));
	folio = t_folio(pfn);
	EXPECT_EQ(folio_ref_count(folio), 16);
	EXPECT_EQ(folio_mapcount(folio), 16);
	EXPECT(!folio_maybe_dma_pinned(folio));
	EXPECT(!mm_of(p)->has_pinned);
	EXPECT(t_writable(p, ADDR_A + PAGES(31)));
	/* Mapped writable already: no fault the second time. */
	EXPECT_EQ(pb_madvise(p, ADDR_A, PAGES(32), MADV_POPULATE_WRITE), 0);
	EXPECT_EQ(pb_proc_faults(p), 2);
	EXPECT_EQ(pb_mmap_flags(p, ADDR_B, PAGES(16), PB_PROT_READ | PB_PROT_WRITE,
				PB_MAP_POPULATE), 0);
	EXPECT_EQ(pb_proc_faults(p), 3);
	EXPECT_EQ(folio_ref_count(t_folio(t_pfn(p, ADDR_B))), 16);
	EXPECT_EQ(pb_madvise(p, ADDR_A + PAGES(32), PAGE_SIZE,
			     MADV_POPULATE_READ), -ENOMEM);
	EXPECT_CLEAN();
	t_exit(p);
	t_end("gup: populate faults pages in and holds no reference or pin");
}

int main(void)
{
	test_pin_small();
	test_pin_and_get_large();
	test_ro_pin_unshares();
	test_ro_pin_unshares_large();
	test_ro_pin_after_exit_no_copy();
	test_write_pin_breaks_cow();
	test_write_pin_prot_read();
	test_fast_only();
	test_zero_page_pins();
	test_huge_zero_folio_pins();
	test_fast_atomic_counts();
	test_preallocated_pages();
	test_populate_takes_no_reference();
	return tap_done();
}
