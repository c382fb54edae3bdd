// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_mprotect.c - mprotect (mm/mprotect.c, change_pte_range): the write
 * upgrade of exclusive pages (can_change_pte_writable) and its refusal
 * for shared ones, VMA split and merge, holes, PROT_NONE, and PMD-mapped THPs.
 */
#include "tests/unit/pbtest.h"

static bool all_writable(struct pb_proc *p, unsigned long addr, unsigned long n)
{
	return t_nr_writable(p, addr, n) == n;
}

/* RO then RW makes exclusive pages writable again without any fault. */
static void test_ro_rw_exclusive_no_faults(void)
{
	struct pb_proc *p;

	t_begin_folios(SZ_64M, PAGES(16));
	p = t_proc_written(ADDR_A, 4 * PAGE_SIZE, 0);
	t_map_written(p, ADDR_B, PAGES(16), 0);
	EXPECT_EQ(pb_mprotect(p, ADDR_A, 4 * PAGE_SIZE, PB_PROT_READ), 0);
	EXPECT_EQ(pb_mprotect(p, ADDR_B, PAGES(16), PB_PROT_READ), 0);
	EXPECT_CLEAN();
	EXPECT(!t_writable(p, ADDR_A) && !t_writable(p, ADDR_B + 5 * PAGE_SIZE));
	EXPECT_EQ(pb_mprotect(p, ADDR_A, 4 * PAGE_SIZE, RW), 0);
	EXPECT_EQ(pb_mprotect(p, ADDR_B, PAGES(16), RW), 0);
	EXPECT_CLEAN();
	EXPECT(all_writable(p, ADDR_A, 4));
	EXPECT(all_writable(p, ADDR_B, 16));
	EXPECT_EQ(t_fill_faults(p, ADDR_A, 4, 1), 0);
	EXPECT_EQ(t_fill_faults(p, ADDR_B, 16, 1), 0);
	EXPECT_CLEAN();
	t_exit(p);
	t_end("mprotect: RO then RW restores writability of exclusive pages without faults");
}

/* Pages shared with a live child stay R/O after RW: a write still copies. */
static void test_ro_rw_shared_still_copies(void)
{
	struct pb_proc *p, *c;
	unsigned long pfn, faults;
	uint8_t v;

	t_begin(SZ_64M);
	p = t_proc_written(ADDR_A, PAGE_SIZE, 0x10);
	pfn = t_pfn(p, ADDR_A);
	c = t_fork(p);
	EXPECT_EQ(pb_mprotect(p, ADDR_A, PAGE_SIZE, PB_PROT_READ), 0);
	EXPECT_EQ(pb_mprotect(p, ADDR_A, PAGE_SIZE, RW), 0);
	EXPECT_CLEAN();
	EXPECT(!t_writable(p, ADDR_A));
	faults = pb_proc_faults(p);
	EXPECT_EQ(pb_store(p, 0, ADDR_A, 0x11), 0);
	EXPECT_EQ(pb_proc_faults(p) - faults, 1);
	EXPECT(t_pfn(p, ADDR_A) != pfn);
	EXPECT_EQ(pb_load(c, 0, ADDR_A, &v), 0);
	EXPECT_EQ(v, 0x10);
	EXPECT_CLEAN();
	t_exit(c);
	t_exit(p);
	t_end("mprotect: RW does not write-enable pages shared with a live child");
}

/*
 * Partial mprotect of a 64K folio splits the VMA in three; RW merges it
 * back; the folio stays whole and mapped throughout.
 *
 *   [p0..p3 RW][p4..p7 RO][p8..p15 RW]  ->  [p0..p15 RW]
 */
static void partial_64k_split_merge(void)
{
	struct pb_proc *p;
	unsigned long pfn5;
	uint8_t v;

	t_begin_folios(SZ_64M, PAGES(16));
	p = t_proc_written(ADDR_A, PAGES(16), 0);
	pfn5 = t_pfn(p, ADDR_A + 5 * PAGE_SIZE);
	EXPECT_EQ(mm_of(p)->nr_vmas, 1);
	EXPECT_EQ(pb_mprotect(p, ADDR_A + 4 * PAGE_SIZE, 4 * PAGE_SIZE, PB_PROT_READ), 0);
	EXPECT_CLEAN();
	EXPECT_EQ(mm_of(p)->nr_vmas, 3);
	EXPECT_EQ(pb_store(p, 0, ADDR_A + 5 * PAGE_SIZE, 1), -EFAULT);
	EXPECT_EQ(pb_load(p, 0, ADDR_A + 5 * PAGE_SIZE, &v), 0);
	EXPECT_EQ(v, 5);
	EXPECT_EQ(pb_store(p, 0, ADDR_A + 3 * PAGE_SIZE, 1), 0);
	EXPECT_EQ(pb_store(p, 0, ADDR_A + 8 * PAGE_SIZE, 1), 0);
	EXPECT_EQ(pb_mprotect(p, ADDR_A + 4 * PAGE_SIZE, 4 * PAGE_SIZE, RW), 0);
	EXPECT_CLEAN();
	EXPECT_EQ(mm_of(p)->nr_vmas, 1);
	EXPECT(all_writable(p, ADDR_A, 16));
	EXPECT_EQ(pb_store(p, 0, ADDR_A + 5 * PAGE_SIZE, 2), 0);
	EXPECT_EQ(t_pfn(p, ADDR_A + 5 * PAGE_SIZE), pfn5);
	EXPECT_EQ(t_page(p, ADDR_A + 5 * PAGE_SIZE).folio_size, PAGES(16));
	EXPECT_EQ(pb_proc_faults(p), 1);
	EXPECT_CLEAN();
	t_exit(p);
	t_finish();
}

/*
 * Adjacent compatible mappings merge into one VMA, as the kernel merges
 * them (which decides the mTHP orders that fit); the merged VMA works
 * as one and goes away cleanly.
 *
 *   ADDR_A [64K] + [64K]  ->  [128K]
 */
static void adjacent_mmaps_merge(void)
{
	struct pb_proc *p;

	t_begin_folios(SZ_64M, PAGES(16));
	p = t_proc_map(ADDR_A, PAGES(16), RW);
	EXPECT_EQ(pb_mmap(p, ADDR_A + PAGES(16), PAGES(16), RW), 0);
	EXPECT_EQ(mm_of(p)->nr_vmas, 1);
	if (mm_of(p)->nr_vmas == 1) {
		EXPECT_EQ(mm_of(p)->vmas[0]->vm_start, ADDR_A);
		EXPECT_EQ(mm_of(p)->vmas[0]->vm_end, ADDR_A + 2 * PAGES(16));
	}
	EXPECT(t_fill(p, ADDR_A, 32, 0));
	EXPECT_EQ(t_page(p, ADDR_A + PAGES(16)).folio_size, PAGES(16));
	EXPECT_CLEAN();
	t_exit(p);
	t_finish();
}

/*
 * A range with a hole is -ENOMEM.
 *
 *   ADDR_A [64K][hole 64K][64K]
 */
static void test_hole_enomem(void)
{
	struct pb_proc *p;

	t_begin(SZ_64M);
	p = t_proc_map(ADDR_A, PAGES(16), RW);
	EXPECT_EQ(pb_mmap(p, ADDR_A + 2 * PAGES(16), PAGES(16), RW), 0);
	EXPECT_EQ(pb_mprotect(p, ADDR_A, 3 * PAGES(16), PB_PROT_READ), -ENOMEM);
	EXPECT_CLEAN();
	EXPECT_EQ(pb_mprotect(p, ADDR_A + PAGES(16), PAGES(16), PB_PROT_READ), -ENOMEM);
	EXPECT_EQ(pb_mprotect(p, ADDR_A + PAGES(16), 2 * PAGES(16), PB_PROT_READ), -ENOMEM);
	EXPECT_EQ(pb_mprotect(p, ADDR_A + 1, PAGE_SIZE, PB_PROT_READ), -EINVAL);
	/* the mapped part after the hole was not touched */
	EXPECT_EQ(pb_store(p, 0, ADDR_A + 2 * PAGES(16), 1), 0);
	EXPECT_CLEAN();
	t_exit(p);
	t_end("mprotect: a range over a hole fails with -ENOMEM");
}

/* PROT_NONE makes pages inaccessible; RW brings them back intact. */
static void test_prot_none_round_trip(void)
{
	struct pb_proc *p;
	unsigned long pfn, faults;
	uint8_t v;

	t_begin(SZ_64M);
	p = t_proc_written(ADDR_A, 2 * PAGE_SIZE, 0x70);
	pfn = t_pfn(p, ADDR_A);
	EXPECT_EQ(pb_mprotect(p, ADDR_A, 2 * PAGE_SIZE, PB_PROT_NONE), 0);
	EXPECT_CLEAN();
	EXPECT(pte_protnone(t_entry(p, ADDR_A, NULL)));
	EXPECT_EQ(pte_pfn(t_entry(p, ADDR_A, NULL)), pfn);
	EXPECT_EQ(pb_load(p, 0, ADDR_A, &v), -EFAULT);
	EXPECT_EQ(pb_store(p, 0, ADDR_A, 1), -EFAULT);
	EXPECT_EQ(pb_mprotect(p, ADDR_A, 2 * PAGE_SIZE, RW), 0);
	EXPECT_CLEAN();
	faults = pb_proc_faults(p);
	EXPECT(t_data_is(p, ADDR_A, 2, 0x70));
	EXPECT(t_fill(p, ADDR_A, 2, 0x72));
	EXPECT_EQ(pb_proc_faults(p) - faults, 0);
	EXPECT_EQ(t_pfn(p, ADDR_A), pfn);
	EXPECT_CLEAN();
	t_exit(p);
	t_end("mprotect: PROT_NONE round trip keeps pages and restores access without faults");
}

/* mprotect of a whole PMD-mapped THP keeps the PMD; a partial one splits it. */
static void test_pmd_whole_and_partial(void)
{
	struct pb_proc *p;
	unsigned long faults;
	struct t_snap s;

	t_begin_folios(SZ_64M, PMD_SIZE);
	p = t_proc_map(ADDR_A, PMD_SIZE, RW);
	EXPECT_EQ(pb_store(p, 0, ADDR_A, 1), 0);
	t_snap(&s);
	EXPECT_EQ(pb_mprotect(p, ADDR_A, PMD_SIZE, PB_PROT_READ), 0);
	EXPECT_CLEAN();
	EXPECT(t_pmd_mapped(p, ADDR_A));
	EXPECT(!t_writable(p, ADDR_A));
	EXPECT_EQ(pb_store(p, 0, ADDR_A + (PMD_SIZE / 2), 1), -EFAULT);
	EXPECT_EQ(pb_mprotect(p, ADDR_A, PMD_SIZE, RW), 0);
	EXPECT_CLEAN();
	EXPECT(t_pmd_mapped(p, ADDR_A));
	EXPECT(t_writable(p, ADDR_A));
	faults = pb_proc_faults(p);
	EXPECT_EQ(pb_store(p, 0, ADDR_A + (PMD_SIZE / 2), 2), 0);
	EXPECT_EQ(pb_proc_faults(p) - faults, 0);
	EXPECT_EQ(t_since(&s, PB_STAT_pmd_split), 0);

	EXPECT_EQ(pb_mprotect(p, ADDR_A, (PMD_SIZE / 2), PB_PROT_READ), 0);
	EXPECT_CLEAN();
	EXPECT_EQ(t_since(&s, PB_STAT_pmd_split), 1);
	EXPECT(!t_pmd_mapped(p, ADDR_A));
	EXPECT_EQ(t_page(p, ADDR_A).folio_size, PMD_SIZE);
	EXPECT(!t_writable(p, ADDR_A));
	EXPECT(t_writable(p, ADDR_A + (PMD_SIZE / 2)));
	EXPECT_EQ(pb_store(p, 0, ADDR_A, 3), -EFAULT);
	EXPECT_EQ(pb_store(p, 0, ADDR_A + (PMD_SIZE / 2) + PAGE_SIZE, 3), 0);
	EXPECT_EQ(pb_proc_faults(p) - faults, 0);
	EXPECT_CLEAN();
	t_exit(p);
	t_end("mprotect: a whole PMD-mapped THP keeps its PMD, a partial mprotect splits it");
}

int main(void)
{
	test_ro_rw_exclusive_no_faults();
	test_ro_rw_shared_still_copies();
	t_isolated(partial_64k_split_merge,
		   "mprotect: partial mprotect of a 64K folio splits the VMA and RW merges it back");
	t_isolated(adjacent_mmaps_merge,
		   "vma: adjacent compatible mmaps merge into one VMA");
	test_hole_enomem();
	test_prot_none_round_trip();
	test_pmd_whole_and_partial();
	return tap_done();
}
