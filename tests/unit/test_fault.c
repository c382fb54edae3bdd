// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_fault.c - anonymous faults through the public API: the zero page,
 * mTHP order selection and its fallbacks, PMD THP and the huge zero page,
 * access errors and exact fault counts (do_anonymous_page and its mTHP
 * order choice, alloc_anon_folio).
 */
#include "tests/unit/pbtest.h"

/* Every page of [addr, addr + n pages) maps page i of one folio of @size. */
static bool one_folio(struct pb_proc *p, unsigned long addr, unsigned long n,
		      unsigned long size)
{
	struct pb_page_info info[HPAGE_PMD_NR];
	unsigned long i;

	if (n > HPAGE_PMD_NR || pb_observe(p, addr, n, info))
		return false;
	for (i = 0; i < n; i++) {
		if (!info[i].present || info[i].folio_size != size ||
		    info[i].index != i || info[i].pfn != info[0].pfn + i) {
			tap_diag("page %lu at %#lx: present %d size %lu index %lu pfn %#lx",
				 i, addr + i * PAGE_SIZE, info[i].present,
				 info[i].folio_size, info[i].index, info[i].pfn);
			return false;
		}
	}
	return info[0].pfn % (size / PAGE_SIZE) == 0;
}

/*
 * A read fault maps the shared zero page: the same pfn at two addresses
 * of two processes, 4K, reading 0.
 *
 *   P1: ADDR_A [zero][....][zero]     P2: ADDR_A [zero]
 */
static void test_read_maps_zero_page(void)
{
	struct pb_proc *p1, *p2;
	struct pb_page_info a, b, c;
	uint8_t v = 0xff;

	t_begin(SZ_64M);
	p1 = t_proc_map(ADDR_A, PAGES(16), RW);
	p2 = t_proc_map(ADDR_A, PAGES(16), RW);
	EXPECT_EQ(pb_load(p1, 0, ADDR_A, &v), 0);
	EXPECT_EQ(v, 0);
	EXPECT_EQ(pb_load(p1, 0, ADDR_A + 2 * PAGE_SIZE, &v), 0);
	EXPECT_EQ(pb_load(p2, 1, ADDR_A, &v), 0);
	EXPECT_CLEAN();
	a = t_page(p1, ADDR_A);
	b = t_page(p1, ADDR_A + 2 * PAGE_SIZE);
	c = t_page(p2, ADDR_A);
	EXPECT(a.present && b.present && c.present);
	EXPECT_EQ(a.pfn, machine.zero_pfn);
	EXPECT_EQ(b.pfn, a.pfn);
	EXPECT_EQ(c.pfn, a.pfn);
	EXPECT_EQ(a.folio_size, PAGE_SIZE);
	EXPECT_EQ(a.data, 0);
	EXPECT(!t_page(p1, ADDR_A + PAGE_SIZE).present);
	EXPECT(!t_writable(p1, ADDR_A));
	EXPECT_EQ(pb_proc_faults(p1), 2);
	EXPECT_EQ(pb_proc_faults(p2), 1);
	t_exit(p1);
	t_exit(p2);
	t_end("fault: read fault maps the shared zero page (same pfn across addresses and processes)");
}

/* 64K always: one write fault maps an aligned 64K folio with all 16 PTEs. */
static void test_write_64k_folio(void)
{
	struct pb_proc *p;
	struct t_snap s;

	t_begin_folios(SZ_64M, PAGES(16));
	p = t_proc_map(ADDR_A, 4 * PAGES(16), RW);
	t_snap(&s);
	EXPECT_EQ(pb_store(p, 0, ADDR_A + PAGES(16) + 5 * PAGE_SIZE, 0x77), 0);
	EXPECT_EQ(pb_proc_faults(p), 1);
	EXPECT_CLEAN();
	EXPECT(one_folio(p, ADDR_A + PAGES(16), 16, PAGES(16)));
	EXPECT(!t_page(p, ADDR_A).present);
	EXPECT(!t_page(p, ADDR_A + 2 * PAGES(16)).present);
	EXPECT(t_fill(p, ADDR_A + PAGES(16), 16, 0x10));
	EXPECT_EQ(pb_proc_faults(p), 1);
	EXPECT_EQ(t_since(&s, PB_STAT_fault_anon), 1);
	EXPECT(t_data_is(p, ADDR_A + PAGES(16), 16, 0x10));
	EXPECT_CLEAN();
	t_exit(p);
	t_end("fault: 64K always gives an aligned 64K folio, 16 PTEs, one fault for 16 writes");
}

/*
 * A block with one PTE already present (a zero-page read) cannot get a
 * folio of that order: all PTEs of the range must be none.
 *
 *   [Z][w][.][.] [.][.][.][.] [..64K block..]   Z = zero page read first
 *   16K and 64K enabled: w gets order 0 (its 16K block holds Z),
 *   a write in the second 16K block gets 16K (the 64K block holds Z).
 */
static void test_partial_block_falls_back(void)
{
	struct pb_proc *p;
	uint8_t v;

	t_begin_folios(SZ_64M, PAGES(16));
	EXPECT_EQ(pb_set_thp_policy(PAGES(4), PB_THP_ALWAYS), 0);
	p = t_proc_map(ADDR_A, PAGES(16), RW);
	EXPECT_EQ(pb_load(p, 0, ADDR_A, &v), 0);
	EXPECT_EQ(pb_store(p, 0, ADDR_A + PAGES(4), 1), 0);
	EXPECT_EQ(pb_store(p, 0, ADDR_A + PAGE_SIZE, 2), 0);
	EXPECT_CLEAN();
	EXPECT_EQ(t_page(p, ADDR_A).pfn, machine.zero_pfn);
	EXPECT(one_folio(p, ADDR_A + PAGES(4), 4, PAGES(4)));
	EXPECT_EQ(t_page(p, ADDR_A + PAGE_SIZE).folio_size, PAGE_SIZE);
	EXPECT(!t_page(p, ADDR_A + 2 * PAGE_SIZE).present);
	/* the zero page itself: a write copies to order 0 */
	EXPECT_EQ(pb_store(p, 0, ADDR_A, 3), 0);
	EXPECT_EQ(t_page(p, ADDR_A).folio_size, PAGE_SIZE);
	EXPECT(t_page(p, ADDR_A).pfn != machine.zero_pfn);
	EXPECT_EQ(pb_proc_faults(p), 4);
	EXPECT_CLEAN();
	t_exit(p);
	t_end("fault: a block with a present PTE falls back to a smaller order");
}

/*
 * The folio's naturally aligned block must lie inside the VMA.
 *
 *   ADDR_A          [32K VMA]                  too small for 64K
 *   ADDR_B + 32K    [64K VMA, not 64K aligned] misaligned for 64K
 */
static void test_small_or_misaligned_vma(void)
{
	struct pb_proc *p;

	t_begin_folios(SZ_64M, PAGES(16));
	p = t_proc_map(ADDR_A, PAGES(8), RW);
	EXPECT_EQ(pb_mmap(p, ADDR_B + PAGES(8), PAGES(16), RW), 0);
	EXPECT_EQ(pb_store(p, 0, ADDR_A, 1), 0);
	EXPECT_EQ(pb_store(p, 0, ADDR_B + PAGES(16), 2), 0);
	EXPECT_EQ(pb_store(p, 0, ADDR_B + PAGES(8), 3), 0);
	EXPECT_CLEAN();
	EXPECT_EQ(t_page(p, ADDR_A).folio_size, PAGE_SIZE);
	EXPECT_EQ(t_page(p, ADDR_B + PAGES(16)).folio_size, PAGE_SIZE);
	EXPECT_EQ(t_page(p, ADDR_B + PAGES(8)).folio_size, PAGE_SIZE);
	/* with 16K enabled too, the misaligned VMA gets 16K folios */
	EXPECT_EQ(pb_set_thp_policy(PAGES(4), PB_THP_ALWAYS), 0);
	EXPECT_EQ(pb_store(p, 0, ADDR_B + PAGES(16) + PAGES(4), 4), 0);
	EXPECT(one_folio(p, ADDR_B + PAGES(16) + PAGES(4), 4, PAGES(4)));
	EXPECT_CLEAN();
	t_exit(p);
	t_end("fault: a VMA too small or misaligned for 64K falls back");
}

/* MADV_NOHUGEPAGE turns mTHP off for the VMA, even with "always". */
static void test_nohugepage(void)
{
	struct pb_proc *p;

	t_begin_folios(SZ_64M, PAGES(16));
	p = t_proc_map(ADDR_A, 2 * PAGES(16), RW);
	EXPECT_EQ(pb_madvise(p, ADDR_A, PAGES(16), MADV_NOHUGEPAGE), 0);
	EXPECT_EQ(pb_store(p, 0, ADDR_A, 1), 0);
	EXPECT_EQ(pb_store(p, 0, ADDR_A + PAGES(16), 2), 0);
	EXPECT_CLEAN();
	EXPECT_EQ(t_page(p, ADDR_A).folio_size, PAGE_SIZE);
	EXPECT(!t_page(p, ADDR_A + PAGE_SIZE).present);
	EXPECT(one_folio(p, ADDR_A + PAGES(16), 16, PAGES(16)));
	t_exit(p);
	t_end("fault: MADV_NOHUGEPAGE disables mTHP");
}

/*
 * "madvise" needs VM_HUGEPAGE; "inherit" follows the global (PMD) policy.
 *
 *   ADDR_A [64K plain][64K MADV_HUGEPAGE]
 */
static void test_madvise_and_inherit_policy(void)
{
	struct pb_proc *p;

	t_begin(SZ_64M);
	EXPECT_EQ(pb_set_thp_policy(PAGES(16), PB_THP_MADVISE), 0);
	p = t_proc_map(ADDR_A, 2 * PAGES(16), RW);
	EXPECT_EQ(pb_madvise(p, ADDR_A + PAGES(16), PAGES(16), MADV_HUGEPAGE), 0);
	EXPECT_EQ(pb_store(p, 0, ADDR_A, 1), 0);
	EXPECT_EQ(pb_store(p, 0, ADDR_A + PAGES(16), 2), 0);
	EXPECT_CLEAN();
	EXPECT_EQ(t_page(p, ADDR_A).folio_size, PAGE_SIZE);
	EXPECT(one_folio(p, ADDR_A + PAGES(16), 16, PAGES(16)));
	t_exit(p);

	/* inherit: global "always" enables 64K in a plain VMA */
	EXPECT_EQ(pb_set_thp_policy(PAGES(16), PB_THP_INHERIT), 0);
	EXPECT_EQ(pb_set_thp_policy(PMD_SIZE, PB_THP_ALWAYS), 0);
	p = t_proc_map(ADDR_A, PAGES(16), RW);
	EXPECT_EQ(pb_store(p, 0, ADDR_A, 3), 0);
	EXPECT(one_folio(p, ADDR_A, 16, PAGES(16)));
	EXPECT_CLEAN();
	t_exit(p);
	EXPECT_EQ(pb_set_thp_policy(PMD_SIZE, PB_THP_INHERIT), -EINVAL);
	EXPECT_EQ(pb_set_thp_policy(PAGE_SIZE, PB_THP_ALWAYS), -EINVAL);
	EXPECT_EQ(pb_set_thp_policy(8192, PB_THP_ALWAYS), -EINVAL);
	t_end("fault: madvise policy needs MADV_HUGEPAGE, inherit follows the global policy");
}

/* PMD THP: one write fault maps a whole 2M folio with one PMD. */
static void test_pmd_thp_write(void)
{
	struct pb_proc *p;
	struct t_snap s;

	t_begin_folios(SZ_64M, PMD_SIZE);
	p = t_proc_map(ADDR_A, 2 * PMD_SIZE, RW);
	t_snap(&s);
	EXPECT_EQ(pb_store(p, 0, ADDR_A + 0x1234, 0x42), 0);
	EXPECT_EQ(pb_proc_faults(p), 1);
	EXPECT_EQ(t_since(&s, PB_STAT_fault_huge_anon), 1);
	EXPECT_CLEAN();
	EXPECT(t_pmd_mapped(p, ADDR_A));
	EXPECT(one_folio(p, ADDR_A, HPAGE_PMD_NR, PMD_SIZE));
	EXPECT(!t_page(p, ADDR_A + PMD_SIZE).present);
	EXPECT(t_fill(p, ADDR_A, HPAGE_PMD_NR, 0));
	EXPECT_EQ(pb_proc_faults(p), 1);
	EXPECT(t_data_is(p, ADDR_A, HPAGE_PMD_NR, 0));
	EXPECT_CLEAN();
	t_exit(p);
	t_end("fault: PMD THP write maps a 2M folio by PMD in one fault");
}

/*
 * A read fault of a PMD-eligible range maps the huge zero page; the first
 * write replaces it with a fresh THP in one fault.
 */
static void test_huge_zero_page(void)
{
	struct pb_proc *p;
	struct pb_page_info a, z;
	uint8_t v = 0xff;

	t_begin_folios(SZ_64M, PMD_SIZE);
	p = t_proc_map(ADDR_A, PMD_SIZE, RW);
	EXPECT_EQ(pb_load(p, 0, ADDR_A + 100 * PAGE_SIZE, &v), 0);
	EXPECT_EQ(v, 0);
	EXPECT_CLEAN();
	z = t_page(p, ADDR_A + 7 * PAGE_SIZE);
	EXPECT(z.present);
	EXPECT_EQ(z.folio_size, PMD_SIZE);
	EXPECT_EQ(z.pfn, machine.huge_zero_pfn + 7);
	EXPECT_EQ(z.data, 0);
	EXPECT(t_pmd_mapped(p, ADDR_A));
	EXPECT_EQ(pb_proc_faults(p), 1);

	EXPECT_EQ(pb_store(p, 0, ADDR_A + 9 * PAGE_SIZE, 0x99), 0);
	EXPECT_EQ(pb_proc_faults(p), 2);
	EXPECT_CLEAN();
	a = t_page(p, ADDR_A + 9 * PAGE_SIZE);
	EXPECT_EQ(a.folio_size, PMD_SIZE);
	EXPECT(!is_huge_zero_pfn(a.pfn));
	EXPECT_EQ(a.data, 0x99);
	EXPECT(t_pmd_mapped(p, ADDR_A));
	EXPECT(one_folio(p, ADDR_A, HPAGE_PMD_NR, PMD_SIZE));
	EXPECT(t_writable(p, ADDR_A));
	EXPECT_EQ(pb_store(p, 0, ADDR_A + 300 * PAGE_SIZE, 1), 0);
	EXPECT_EQ(pb_proc_faults(p), 2);
	EXPECT_CLEAN();
	t_exit(p);
	t_end("fault: PMD read maps the huge zero page; a write replaces it with a THP in one fault");
}

/* Access errors: writes to PROT_READ, anything outside a VMA, PROT_NONE. */
static void test_access_errors(void)
{
	struct pb_proc *p;
	uint8_t v;

	t_begin(SZ_64M);
	p = t_proc_map(ADDR_A, PAGES(16), PB_PROT_READ);
	EXPECT_EQ(pb_mmap(p, ADDR_B, PAGES(16), PB_PROT_NONE), 0);
	EXPECT_EQ(pb_store(p, 0, ADDR_A, 1), -EFAULT);
	EXPECT(!t_page(p, ADDR_A).present);
	EXPECT_EQ(pb_load(p, 0, ADDR_A, &v), 0);	/* reads are fine */
	EXPECT_EQ(pb_store(p, 0, ADDR_A, 1), -EFAULT);	/* zero page mapped now */
	EXPECT_EQ(pb_store(p, 0, ADDR_A + PAGES(16), 1), -EFAULT);
	EXPECT_EQ(pb_load(p, 0, ADDR_A + PAGES(16), &v), -EFAULT);
	EXPECT_EQ(pb_load(p, 0, ADDR_A - PAGE_SIZE, &v), -EFAULT);
	EXPECT_EQ(pb_load(p, 0, ADDR_B, &v), -EFAULT);
	EXPECT_EQ(pb_store(p, 0, ADDR_B, 1), -EFAULT);
	EXPECT_EQ(pb_load(p, NR_CPUS, ADDR_A, &v), -EINVAL);
	EXPECT_EQ(pb_proc_faults(p), 1);	/* only the successful read */
	EXPECT_CLEAN();
	t_exit(p);
	t_end("fault: write to PROT_READ, access outside a VMA or to PROT_NONE is -EFAULT");
}

/*
 * Fault counts are exact: a read then a write of a fresh 4K page is two
 * faults (zero page, then the copy), later accesses none.
 */
static void test_fault_counts(void)
{
	struct pb_proc *p;
	struct t_snap s;
	uint8_t v;
	int i;

	t_begin(SZ_64M);
	p = t_proc_map(ADDR_A, 4 * PAGE_SIZE, RW);
	t_snap(&s);
	EXPECT_EQ(pb_load(p, 0, ADDR_A, &v), 0);
	EXPECT_EQ(pb_proc_faults(p), 1);
	EXPECT_EQ(pb_store(p, 0, ADDR_A, 1), 0);
	EXPECT_EQ(pb_proc_faults(p), 2);
	EXPECT_EQ(t_since(&s, PB_STAT_fault_zero), 1);
	EXPECT_EQ(t_since(&s, PB_STAT_fault_wp_copy), 1);
	for (i = 0; i < 10; i++) {
		EXPECT_EQ(pb_store(p, i % 2, ADDR_A, (uint8_t)i), 0);
		EXPECT_EQ(pb_load(p, i % 3, ADDR_A, &v), 0);
	}
	EXPECT_EQ(pb_proc_faults(p), 2);
	/* a write to a fresh page is one fault; each page faults separately */
	EXPECT(t_fill(p, ADDR_A + PAGE_SIZE, 3, 0));
	EXPECT_EQ(pb_proc_faults(p), 5);
	EXPECT_CLEAN();
	t_exit(p);
	t_end("fault: pb_proc_faults counts exactly one per resolved fault");
}

int main(void)
{
	test_read_maps_zero_page();
	test_write_64k_folio();
	test_partial_block_falls_back();
	test_small_or_misaligned_vma();
	test_nohugepage();
	test_madvise_and_inherit_policy();
	test_pmd_thp_write();
	test_huge_zero_page();
	test_access_errors();
	test_fault_counts();
	return tap_done();
}
