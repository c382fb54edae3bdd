// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_check.c - the invariant checker must be able to fail: each test
 * corrupts one piece of state through the internal headers, asserts that
 * pb_check() reports it, and restores the state before going down.  And
 * what it costs follows what is in use, not the size of the machine.
 */
#include "mm/tlb.h"
#include "tests/unit/pbtest.h"

/* The corruption just made is reported (at least one violation). */
#define EXPECT_REPORTED() EXPECT(pb_check(NULL) >= 1)

/* One extra folio reference nobody accounts for. */
static void test_refcount_bump(void)
{
	struct pb_proc *p;
	struct folio *folio;

	t_begin(SZ_64M);
	p = t_proc_written(ADDR_A, PAGE_SIZE, 1);
	folio = t_folio_at(p, ADDR_A);
	EXPECT_CLEAN();
	folio_ref_add(folio, 1);
	EXPECT_REPORTED();
	folio_put_refs(folio, 1);
	EXPECT_CLEAN();
	t_exit(p);
	t_end("check: an unaccounted folio reference is reported");
}

/* A writable PTE on a page shared with a child (the COW bug). */
static void test_writable_shared_pte(void)
{
	struct pb_proc *p, *c;
	pte_t *ptep, old;

	t_begin(SZ_64M);
	p = t_proc_written(ADDR_A, PAGE_SIZE, 1);
	c = t_fork(p);
	EXPECT_CLEAN();
	ptep = t_ptep(p, ADDR_A);
	old = ptep_get(ptep);
	EXPECT(!pte_write(old));
	set_pte(ptep, pte_mkwrite_novma(old));
	EXPECT_REPORTED();
	set_pte(ptep, old);
	EXPECT_CLEAN();
	t_exit(c);
	t_exit(p);
	t_end("check: a writable PTE on a page shared after fork is reported");
}

/* A pinned page that lost PageAnonExclusive. */
static void test_pinned_not_exclusive(void)
{
	struct pb_proc *p;
	struct pb_pages *pin = NULL;
	struct page *page;

	t_begin(SZ_64M);
	p = t_proc_written(ADDR_A, PAGE_SIZE, 1);
	EXPECT_EQ(pb_mprotect(p, ADDR_A, PAGE_SIZE, PB_PROT_READ), 0);
	EXPECT_EQ(pb_gup_fast(p, ADDR_A, 1, PB_FOLL_PIN, &pin), 0);
	EXPECT_CLEAN();
	page = pfn_to_page(t_pfn(p, ADDR_A));
	ClearPageAnonExclusive(page);
	EXPECT_REPORTED();
	SetPageAnonExclusive(page);
	EXPECT_CLEAN();
	pb_pages_release(pin, false);
	t_exit(p);
	t_end("check: a pinned page without PageAnonExclusive is reported");
}

/* A pin released without NR_FOLL_PIN_RELEASED (unpin symmetry). */
static void test_pin_stats_asymmetric(void)
{
	struct pb_proc *p;
	struct pb_pages *pin = NULL;

	t_begin(SZ_64M);
	p = t_proc_written(ADDR_A, PAGE_SIZE, 1);
	EXPECT_EQ(pb_gup_fast(p, ADDR_A, 1, PB_FOLL_PIN | PB_FOLL_WRITE, &pin), 0);
	EXPECT_CLEAN();
	node_stat_mod(NR_FOLL_PIN_RELEASED, 1);
	EXPECT_REPORTED();
	node_stat_mod(NR_FOLL_PIN_RELEASED, -1);
	EXPECT_CLEAN();
	pb_pages_release(pin, false);
	EXPECT_CLEAN();
	t_exit(p);
	t_end("check: pins acquired minus released that disagree with what is pinned are reported");
}

/* A page-table frame allocated and reachable from nowhere. */
static void test_leaked_table(void)
{
	unsigned long pfn;

	t_begin(SZ_64M);
	EXPECT_CLEAN();
	pfn = alloc_table_frame();
	EXPECT(pfn != 0);
	EXPECT_REPORTED();
	free_table_frame(pfn);
	EXPECT_CLEAN();
	t_end("check: a leaked page-table frame is reported");
}

/* A folio allocated and held by nobody: its frames leak. */
static void test_leaked_folio(void)
{
	struct folio *folio;

	t_begin(SZ_64M);
	EXPECT_CLEAN();
	folio = folio_alloc(0);
	EXPECT(folio != NULL);
	EXPECT_REPORTED();
	folio_put(folio);
	EXPECT_CLEAN();
	t_end("check: a folio nothing maps or holds is reported");
}

/*
 * A frame the allocator handed out that is in no folio, no table and not
 * free: the tail of a 2-page folio whose order says 1 page.  Its refcount
 * dropped to 0 is what nothing holding it expects, so the lost frame is
 * the one violation.
 */
static void test_lost_frame(void)
{
	struct folio *folio;

	t_begin(SZ_64M);
	folio = folio_alloc(1);
	if (EXPECT(folio != NULL)) {
		atomic_store(&folio->order, 0);
		atomic_store(&folio->_refcount, 0);
		EXPECT_EQ(pb_check(NULL), 1);
		atomic_store(&folio->order, 1);
		atomic_store(&folio->_refcount, 1);
		folio_put(folio);
	}
	EXPECT_CLEAN();
	t_end("check: a frame neither free, in a folio nor in a table is reported");
}

/* A folio's mapcount that disagrees with the page tables. */
static void test_mapcount_mismatch(void)
{
	struct pb_proc *p;
	struct folio *folio;

	t_begin_folios(SZ_64M, PAGES(16));
	p = t_proc_map(ADDR_A, PAGES(16), RW);
	EXPECT(t_fill(p, ADDR_A, 1, 1));
	folio = t_folio_at(p, ADDR_A);
	EXPECT_CLEAN();
	atomic_fetch_add(&folio->_large_mapcount, 1);
	EXPECT_REPORTED();
	atomic_fetch_sub(&folio->_large_mapcount, 1);
	EXPECT_CLEAN();
	atomic_fetch_add(&folio->_pincount, 1);
	EXPECT_REPORTED();
	atomic_fetch_sub(&folio->_pincount, 1);
	EXPECT_CLEAN();
	t_exit(p);
	t_end("check: a wrong large mapcount or pincount is reported");
}

/* The zero page mapped writable. */
static void test_writable_zero_page(void)
{
	struct pb_proc *p;
	pte_t *ptep, old;
	uint8_t v;

	t_begin(SZ_64M);
	p = t_proc_map(ADDR_A, PAGE_SIZE, RW);
	EXPECT_EQ(pb_load(p, 0, ADDR_A, &v), 0);
	EXPECT_CLEAN();
	ptep = t_ptep(p, ADDR_A);
	old = ptep_get(ptep);
	EXPECT_EQ(pte_pfn(old), machine.zero_pfn);
	set_pte(ptep, pte_mkwrite_novma(old));
	EXPECT_REPORTED();
	set_pte(ptep, old);
	EXPECT_CLEAN();
	t_exit(p);
	t_end("check: a writable zero-page PTE is reported");
}

/* A TLB entry granting write where the PTE is read-only (a missed flush). */
static void test_stale_tlb_entry(void)
{
	struct pb_proc *p;
	struct tlb_entry *e, saved;
	unsigned long vpn = ADDR_A >> PAGE_SHIFT;
	uint8_t v;

	t_begin(SZ_64M);
	p = t_proc_written(ADDR_A, PAGE_SIZE, 1);
	EXPECT_EQ(pb_mprotect(p, ADDR_A, PAGE_SIZE, PB_PROT_READ), 0);
	EXPECT_EQ(pb_load(p, 2, ADDR_A, &v), 0);
	EXPECT_CLEAN();
	e = tlb_slot(&cpu_tlbs[2], vpn);
	EXPECT(e->mm == mm_of(p) && e->vpn == vpn && !e->writable);
	saved = *e;
	e->writable = true;
	e->dirty = true;
	EXPECT_REPORTED();
	*e = saved;
	EXPECT_CLEAN();
	t_exit(p);
	t_end("check: a TLB entry writable over a read-only PTE is reported");
}

/*
 * MADV_FREE that forgets the flush: a CPU keeps a dirty translation of a
 * page whose PTE is now clean, so its next store would not re-dirty the
 * PTE and reclaim would throw the stored byte away.
 */
static void test_lazyfree_dirty_tlb(void)
{
	struct pb_proc *p;
	struct tlb_entry *e;
	unsigned long vpn = ADDR_A >> PAGE_SHIFT;

	t_begin(SZ_64M);
	p = t_proc_written(ADDR_A, PAGE_SIZE, 1);
	EXPECT_EQ(pb_store(p, 2, ADDR_A, 7), 0);
	e = tlb_slot(&cpu_tlbs[2], vpn);
	EXPECT(e->mm == mm_of(p) && e->vpn == vpn && e->dirty);
	EXPECT_CLEAN();
	tlb_debug_skip_flushes(1000);
	EXPECT_EQ(pb_madvise(p, ADDR_A, PAGE_SIZE, MADV_FREE), 0);
	tlb_debug_skip_flushes(0);
	EXPECT(folio_test_lazyfree(t_folio_at(p, ADDR_A)));
	EXPECT(!pte_dirty(ptep_get(t_ptep(p, ADDR_A))));
	EXPECT_REPORTED();
	/* The flush MADV_FREE owed: clean again. */
	flush_tlb_range(mm_of(p), ADDR_A, ADDR_A + PAGE_SIZE);
	EXPECT_CLEAN();
	/* A store now walks, re-dirties the PTE: no longer clean, still fine. */
	EXPECT_EQ(pb_store(p, 2, ADDR_A, 8), 0);
	EXPECT(pte_dirty(ptep_get(t_ptep(p, ADDR_A))));
	EXPECT_CLEAN();
	t_exit(p);
	t_end("check: a dirty TLB entry over a clean PTE of a lazy-free folio is reported");
}

#define SZ_16M	(16UL << 20)
#define SZ_4G	(4UL << 30)
#define MAX_STEPS 16

/*
 * On a machine of @memory, one of each thing the checker walks - small,
 * mTHP and PMD-size folios, pins and references, a fork's shared pages
 * and its copies, translations on two CPUs, a range unmapped and one
 * made read-only - with, after each step, what the checker visited
 * (check_visited()) in @visited.  Returns the number of steps.
 *
 *   ADDR_A [64 pages: 64K folios (16 pages), 4 pinned]
 *   ADDR_B [PMD-size THP, 4 pages referenced]
 */
static int check_workload(unsigned long memory, unsigned long *visited)
{
	struct pb_pages *pin = NULL, *ref = NULL;
	struct pb_proc *p, *c;
	uint8_t v;
	int n = 0;

#define STEP() do { EXPECT_CLEAN(); visited[n++] = check_visited(); } while (0)
	if (!t_begin_folios(memory, PAGES(16)))
		return 0;
	STEP();
	p = t_proc_written(ADDR_A, PAGES(64), 1);
	STEP();
	EXPECT_EQ(pb_mmap(p, ADDR_B, PMD_SIZE, RW), 0);
	EXPECT_EQ(pb_madvise(p, ADDR_B, PMD_SIZE, MADV_HUGEPAGE), 0);
	EXPECT(t_fill(p, ADDR_B, 1, 2));
	STEP();
	EXPECT_EQ(pb_gup_fast(p, ADDR_A, 4, PB_FOLL_PIN | PB_FOLL_WRITE, &pin), 0);
	EXPECT_EQ(pb_gup_fast(p, ADDR_B, 4, PB_FOLL_GET, &ref), 0);
	STEP();
	c = t_fork(p);
	STEP();
	EXPECT(t_fill(c, ADDR_A, 8, 3));
	EXPECT_EQ(pb_load(c, 1, ADDR_B, &v), 0);
	STEP();
	EXPECT_EQ(pb_mprotect(p, ADDR_A, PAGES(16), PB_PROT_READ), 0);
	EXPECT_EQ(pb_munmap(c, ADDR_B, PMD_SIZE), 0);
	STEP();
	t_release(pin, true);
	t_release(ref, false);
	t_exit(c);
	STEP();
	t_exit(p);
	STEP();
#undef STEP
	t_finish();
	return n;
}

/*
 * The checker's cost follows what is mapped and allocated, not the
 * machine's size: the same steps on a 16M and a 4G machine (256 times
 * the frames) have it visit the same table entries, folios, pages and
 * TLB entries.  (A checker that walks the memmap visits every free
 * block of the larger one.)  Counted, not timed: speed is the
 * benchmarks' business.
 */
static void test_work_follows_use(void)
{
	unsigned long small[MAX_STEPS], large[MAX_STEPS];
	int ns, nl, i;
	bool ok;

	ns = check_workload(SZ_16M, small);
	ok = t.ok;
	nl = check_workload(SZ_4G, large);
	t.ok &= ok;
	EXPECT(ns > 0);
	EXPECT_EQ(nl, ns);
	for (i = 0; i < ns && i < nl; i++)
		if (!EXPECT_EQ(large[i], small[i]))
			tap_diag("after step %d", i + 1);
	tap_ok(t.ok, "check: what the checker visits is the same on a 16M and a 4G machine");
}

int main(void)
{
	test_refcount_bump();
	test_writable_shared_pte();
	test_pinned_not_exclusive();
	test_pin_stats_asymmetric();
	test_leaked_table();
	test_leaked_folio();
	test_lost_frame();
	test_mapcount_mismatch();
	test_writable_zero_page();
	test_stale_tlb_entry();
	test_lazyfree_dirty_tlb();
	test_work_follows_use();
	return tap_done();
}
