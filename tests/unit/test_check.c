/*
 * test_check.c - the invariant checker must be able to fail: each test
 * corrupts one piece of state through the internal headers, asserts that
 * pb_check() reports it, and restores the state before going down.
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

int main(void)
{
	test_refcount_bump();
	test_writable_shared_pte();
	test_pinned_not_exclusive();
	test_pin_stats_asymmetric();
	test_leaked_table();
	test_mapcount_mismatch();
	test_writable_zero_page();
	test_stale_tlb_entry();
	return tap_done();
}
