// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_mremap.c - mremap(MAYMOVE|FIXED) (mm/mremap.c): entries move, the
 * folios stay, so a large folio can end up mapped from two places,
 * misaligned or across a page-table boundary; data and frames survive.
 */
#include "tests/unit/pbtest.h"

/*
 * Moving half of a 64K folio keeps its pfns: one folio, mapped from two
 * places of the same mm.
 *
 *   ADDR_A [p0..p7][p8..p15]   ->   ADDR_A [p0..p7][ gone ]
 *                                   ADDR_B [p8..p15]
 */
static void test_move_half_64k(void)
{
	struct pb_proc *p;
	unsigned long pfn[16], i;
	struct folio *folio;
	bool same = true;

	t_begin_folios(SZ_64M, PAGES(16));
	p = t_proc_written(ADDR_A, PAGES(16), 0x20);
	t_pfns(p, ADDR_A, 16, pfn);
	folio = t_folio(pfn[0]);
	EXPECT_EQ(pb_mremap(p, ADDR_A + PAGES(8), PAGES(8), ADDR_B), 0);
	EXPECT_CLEAN();
	for (i = 0; i < 8; i++) {
		struct pb_page_info old = t_page(p, ADDR_A + i * PAGE_SIZE);
		struct pb_page_info new = t_page(p, ADDR_B + i * PAGE_SIZE);

		same &= old.pfn == pfn[i] && new.pfn == pfn[8 + i];
		same &= new.folio_size == PAGES(16) && new.index == 8 + i;
		same &= !t_page(p, ADDR_A + PAGES(8) + i * PAGE_SIZE).present;
	}
	EXPECT(same);
	EXPECT(t_folio(pfn[15]) == folio);
	EXPECT_EQ(folio_mapcount(folio), 16);
	EXPECT_EQ(folio_ref_count(folio), 16);
	EXPECT(t_data_is(p, ADDR_B, 8, 0x28));
	EXPECT(t_data_is(p, ADDR_A, 8, 0x20));
	/* still exclusive and writable where it landed: no faults */
	EXPECT(t_writable(p, ADDR_B));
	EXPECT(t_fill(p, ADDR_B, 8, 0x30));
	EXPECT_EQ(pb_proc_faults(p), 1);
	EXPECT_EQ(pb_load(p, 0, ADDR_A + PAGES(8), &(uint8_t){ 0 }), -EFAULT);
	EXPECT_CLEAN();
	t_exit(p);
	t_end("mremap: moving half of a 64K folio keeps its pfns (one folio, two places)");
}

/*
 * Moving a range to an address that straddles a 2M boundary keeps data
 * and frames; the old range is gone.
 *
 *   ADDR_A [64K]  ->  [32K | 32K] around ADDR_B + 2M
 */
static void test_move_across_pmd_boundary(void)
{
	const unsigned long dst = ADDR_B + PMD_SIZE - PAGES(8);
	struct pb_proc *p;
	unsigned long pfn[16], i;
	bool same = true, gone = true;

	t_begin_folios(SZ_64M, PAGES(16));
	p = t_proc_written(ADDR_A, PAGES(16), 0x40);
	t_pfns(p, ADDR_A, 16, pfn);
	EXPECT_EQ(pb_mremap(p, ADDR_A, PAGES(16), dst), 0);
	EXPECT_CLEAN();
	for (i = 0; i < 16; i++) {
		same &= t_pfn(p, dst + i * PAGE_SIZE) == pfn[i];
		gone &= !t_page(p, ADDR_A + i * PAGE_SIZE).present;
	}
	EXPECT(same);
	EXPECT(gone);
	EXPECT_EQ(mm_of(p)->nr_vmas, 1);
	EXPECT(t_data_is(p, dst, 16, 0x40));
	EXPECT_EQ(pb_store(p, 0, ADDR_A, 1), -EFAULT);
	/* the folio now spans two page tables; writes need no fault */
	EXPECT(t_fill(p, dst, 16, 0x50));
	EXPECT_EQ(pb_proc_faults(p), 1);
	EXPECT_CLEAN();
	t_exit(p);
	t_end("mremap: a move straddling a 2M boundary keeps data and frames; the old range is absent");
}

/* A range whose first page is unmapped fails with -EFAULT and moves nothing. */
static void test_unmapped_start_efault(void)
{
	struct pb_proc *p;

	t_begin(SZ_64M);
	p = t_proc_written(ADDR_A + PAGE_SIZE, 2 * PAGE_SIZE, 1);
	EXPECT_EQ(pb_mremap(p, ADDR_A, 3 * PAGE_SIZE, ADDR_B), -EFAULT);
	EXPECT(t_page(p, ADDR_A + PAGE_SIZE).present);
	EXPECT(!t_page(p, ADDR_B + PAGE_SIZE).present);
	EXPECT_EQ(pb_mremap(p, ADDR_A + PAGE_SIZE, 2 * PAGE_SIZE, ADDR_A + 2 * PAGE_SIZE), -EINVAL);	/* overlap */
	EXPECT_EQ(pb_mremap(p, ADDR_A + 1, PAGE_SIZE, ADDR_B), -EINVAL);
	EXPECT_CLEAN();
	t_exit(p);
	t_end("mremap: a range whose first page is unmapped fails with -EFAULT");
}

/* A whole PMD-mapped THP moved between 2M-aligned addresses stays PMD-mapped. */
static void test_move_pmd(void)
{
	struct pb_proc *p;
	unsigned long pfn;

	t_begin_folios(SZ_64M, PMD_SIZE);
	p = t_proc_map(ADDR_A, PMD_SIZE, RW);
	EXPECT_EQ(pb_store(p, 0, ADDR_A + PAGE_SIZE, 0x61), 0);
	pfn = t_pfn(p, ADDR_A);
	EXPECT_EQ(pb_mremap(p, ADDR_A, PMD_SIZE, ADDR_B), 0);
	EXPECT_CLEAN();
	EXPECT(t_pmd_mapped(p, ADDR_B));
	EXPECT_EQ(t_pfn(p, ADDR_B), pfn);
	EXPECT(!t_page(p, ADDR_A).present);
	EXPECT(t_data_is(p, ADDR_B + PAGE_SIZE, 1, 0x61));
	EXPECT_CLEAN();
	t_exit(p);
	t_end("mremap: a whole PMD-mapped THP moves as a PMD");
}

/*
 * MREMAP_DONTUNMAP of an aligned 2M of 4K folios: the PTE table moves by
 * its PMD entry (move_normal_pmd), so the old PMD is empty and the old
 * VMA, still there, takes a fresh fault on its next write.
 *
 *   ADDR_A [table: p0..p511]  ->  ADDR_A [pmd none], VMA kept
 *                                 ADDR_B [table: p0..p511]
 */
static void test_dontunmap_moves_table(void)
{
	struct pb_proc *p;
	unsigned long pfn, table;

	t_begin_folios(SZ_64M, PAGE_SIZE);
	p = t_proc_written(ADDR_A, PMD_SIZE, 0x40);
	pfn = t_pfn(p, ADDR_A + PAGE_SIZE);
	table = pmd_val(t_pmd(p, ADDR_A));
	EXPECT_EQ(pb_mremap_flags(p, ADDR_A, PMD_SIZE, ADDR_B,
				  PB_MREMAP_DONTUNMAP), 0);
	EXPECT_CLEAN();
	EXPECT(pmd_none(t_pmd(p, ADDR_A)));
	EXPECT_EQ(pmd_val(t_pmd(p, ADDR_B)), table);
	EXPECT_EQ(t_pfn(p, ADDR_B + PAGE_SIZE), pfn);
	EXPECT(t_data_is(p, ADDR_B + PAGE_SIZE, 1, 0x41));
	EXPECT(!t_page(p, ADDR_A).present);
	/* The old range is still mapped: a write faults in a zeroed page. */
	EXPECT_EQ(pb_store(p, 0, ADDR_A, 0x50), 0);
	EXPECT(t_page(p, ADDR_A).present && t_pfn(p, ADDR_A) != t_pfn(p, ADDR_B));
	EXPECT(t_data_is(p, ADDR_A + PAGE_SIZE, 1, 0));
	EXPECT_EQ(pb_mremap_flags(p, ADDR_A, PAGE_SIZE, ADDR_B + 4 * PMD_SIZE, 0x80), -EINVAL);
	EXPECT_CLEAN();
	t_exit(p);
	t_end("mremap: DONTUNMAP keeps the old VMA and moves an aligned table whole");
}

/*
 * Resize in place (mremap without flags, mremap_at()).  A grow that
 * reaches the next mapping merges with it (vma_merge_extend()), and the
 * grown VMA now holds an aligned 64K block, so a fault there takes a 64K
 * folio; a grow into a mapping is -ENOMEM, a grow from a range longer
 * than its VMA -EFAULT.  A shrink through a folio leaves it whole, partly
 * mapped.
 *
 *   ADDR_A [A 32K][ free 32K ][B 64K]   grow A by 32K: one VMA, 128K
 *          [A 16K]                       shrink to 16K: the rest unmapped
 */
static void test_resize_in_place(void)
{
	const int rw = PB_PROT_READ | PB_PROT_WRITE;
	struct mm_struct *mm;
	struct pb_proc *p;

	t_begin_folios(SZ_64M, PAGES(16));
	p = t_proc_map(ADDR_A, PAGES(8), rw);
	mm = mm_of(p);
	EXPECT_EQ(pb_mmap(p, ADDR_A + PAGES(16), PAGES(16), rw), 0);
	EXPECT_EQ(pb_mremap_resize(p, ADDR_A, PAGES(8), PAGES(17)), -ENOMEM);
	EXPECT_EQ(pb_mremap_resize(p, ADDR_A, PAGES(9), PAGES(16)), -EFAULT);
	EXPECT_EQ(pb_mremap_resize(p, ADDR_A + PAGES(8), PAGES(8), PAGES(4)), -EFAULT);
	EXPECT_EQ(pb_mremap_resize(p, ADDR_A, PAGES(8), PAGES(8)), 0);
	EXPECT_EQ(mm->nr_vmas, 2);
	EXPECT_EQ(pb_mremap_resize(p, ADDR_A, PAGES(8), PAGES(16)), 0);
	EXPECT_EQ(mm->nr_vmas, 1);
	EXPECT(t_fill(p, ADDR_A + PAGES(8), 1, 0x40));
	EXPECT_EQ(t_page(p, ADDR_A).folio_size, PAGES(16));
	EXPECT_EQ(pb_proc_faults(p), 1);
	EXPECT_CLEAN();
	EXPECT_EQ(pb_mremap_resize(p, ADDR_A, PAGES(32), PAGES(4)), 0);
	EXPECT_EQ(mm->nr_vmas, 1);
	EXPECT_EQ(mm->vmas[0]->vm_end, ADDR_A + PAGES(4));
	EXPECT_EQ(t_page(p, ADDR_A).folio_size, PAGES(16));
	EXPECT(!t_page(p, ADDR_A + PAGES(8)).present);
	EXPECT_EQ(pb_load(p, 0, ADDR_A + PAGES(8), &(uint8_t){ 0 }), -EFAULT);
	EXPECT_CLEAN();
	t_exit(p);
	t_end("mremap: resize in place grows into absent pages and merges, shrinks through a folio");
}

int main(void)
{
	test_move_half_64k();
	test_move_across_pmd_boundary();
	test_unmapped_start_efault();
	test_move_pmd();
	test_dontunmap_moves_table();
	test_resize_in_place();
	return tap_done();
}
