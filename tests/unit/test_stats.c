// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_stats.c - the cost counters issue 15's fit needs beside the
 * per-PTE ones: kernel entries (system calls and traps), pages zeroed,
 * folios freed, page tables allocated and freed, VMAs and mms created,
 * full barriers, and the struct page cache lines a kernel entry touches
 * (memmap_line).  Every value is exact and derived by hand in the
 * comment above it; the layouts are drawn at 4K pages.
 */
#include "tests/unit/pbtest.h"

/* What one step grew, for the counters that step is about. */
#define SINCE(s, name)	t_since(&(s), PB_STAT_##name)

/*
 * mmap 16 pages, then one store per page:
 *
 *   ADDR_A [p0 p1 ... p15]   16 order-0 folios
 *
 * The mmap is one system call and allocates one VMA and no table (tables
 * come with the first fault).  Each store traps once: 16 entries, 16
 * folios, 16 pages zeroed.  The first fault builds the path to ADDR_A
 * under the mm's PGD: a PUD, a PMD and a PTE table.
 */
static void test_small_pages(void)
{
	struct pb_proc *p;
	struct t_snap s;

	t_begin(SZ_64M);
	t_snap(&s);
	p = t_proc();
	/* The mm and its PGD; creating the first process is no entry here. */
	EXPECT_EQ(SINCE(s, mm_alloc), 1);
	EXPECT_EQ(SINCE(s, pgtable_alloc), 1);
	t_snap(&s);
	EXPECT_EQ(pb_mmap(p, ADDR_A, PAGES(16), RW), 0);
	EXPECT_EQ(SINCE(s, kernel_entry), 1);
	EXPECT_EQ(SINCE(s, vma_alloc), 1);
	EXPECT_EQ(SINCE(s, pgtable_alloc), 0);
	t_snap(&s);
	t_fill(p, ADDR_A, 16, 1);
	EXPECT_EQ(SINCE(s, fault_trap), 16);
	EXPECT_EQ(SINCE(s, fault), 16);
	EXPECT_EQ(SINCE(s, page_zero), 16);
	EXPECT_EQ(SINCE(s, folio_alloc), 16);
	EXPECT_EQ(SINCE(s, pgtable_alloc), 3);
	/* A store to a page already mapped writable does not enter. */
	t_snap(&s);
	EXPECT_EQ(pb_store(p, 0, ADDR_A, 2), 0);
	EXPECT_EQ(SINCE(s, kernel_entry), 0);
	EXPECT_EQ(SINCE(s, fault_trap), 0);
	/*
	 * munmap: one entry; 16 folios back to the allocator, and the PTE
	 * table (free_pgtables: the range was the only thing under it).
	 */
	t_snap(&s);
	EXPECT_EQ(pb_munmap(p, ADDR_A, PAGES(16)), 0);
	EXPECT_EQ(SINCE(s, kernel_entry), 1);
	EXPECT_EQ(SINCE(s, folio_free), 16);
	EXPECT_EQ(SINCE(s, folio_free_pages), 16);
	EXPECT_EQ(SINCE(s, pgtable_free), 1);
	/* exit: one entry; the PMD, PUD and PGD tables go. */
	t_snap(&s);
	t_exit(p);
	EXPECT_EQ(SINCE(s, kernel_entry), 1);
	EXPECT_EQ(SINCE(s, pgtable_free), 3);
	t_end("stats: 16 small pages: 1 + 16 entries, 16 zeroed, 16 freed, 3 tables");
}

/*
 * One 64K mTHP:
 *
 *   ADDR_A [f0 ................ f15]   one 64K folio
 *
 * The first store traps and maps all 16 pages; the other 15 stores go
 * through.  munmap frees the one folio of 16 pages.
 */
static void test_mthp(void)
{
	struct pb_proc *p;
	struct t_snap s;

	t_begin_folios(SZ_64M, PAGES(16));
	p = t_proc_map(ADDR_A, PAGES(16), RW);
	t_snap(&s);
	t_fill(p, ADDR_A, 16, 1);
	EXPECT_EQ(SINCE(s, fault_trap), 1);
	EXPECT_EQ(SINCE(s, page_zero), 16);
	EXPECT_EQ(SINCE(s, folio_alloc), 1);
	EXPECT_EQ(SINCE(s, folio_alloc_pages), 16);
	t_snap(&s);
	EXPECT_EQ(pb_munmap(p, ADDR_A, PAGES(16)), 0);
	EXPECT_EQ(SINCE(s, kernel_entry), 1);
	EXPECT_EQ(SINCE(s, folio_free), 1);
	EXPECT_EQ(SINCE(s, folio_free_pages), 16);
	t_exit(p);
	t_end("stats: a 64K mTHP: one trap, 16 pages zeroed, one folio of 16 freed");
}

/* Faults GUP takes inside a system call are not traps. */
static void test_populate_is_one_entry(void)
{
	struct pb_proc *p;
	struct t_snap s;

	t_begin(SZ_64M);
	p = t_proc();
	t_snap(&s);
	EXPECT_EQ(pb_mmap_flags(p, ADDR_A, PAGES(16), RW, PB_MAP_POPULATE), 0);
	EXPECT_EQ(SINCE(s, kernel_entry), 1);
	EXPECT_EQ(SINCE(s, fault), 16);
	t_exit(p);
	t_end("stats: MAP_POPULATE's 16 faults are inside one entry");
}

/*
 * fork of three VMAs, two of them written (COW mappings with an
 * anon_vma) and one never touched:
 *
 *   ADDR_A          [A0 A1]      written
 *   ADDR_A + 1M     [B0]         written, read-only after
 *   ADDR_B          [C0 .. C3]   never touched
 *
 * One entry, one new mm, a VMA copy each (3), and the new mm's tables:
 * its PGD, then a PUD, a PMD and a PTE table for A and B (one 2M range)
 * and nothing for C (vma_needs_copy(): no anon_vma).  Each copied COW
 * VMA opens write_protect_seq with one smp_mb__after_atomic(): a
 * barrier on arm64 (2), none on x86 (the lock prefix of the RMW is one).
 */
#ifdef CONFIG_ARM64
#define FORK_BARRIERS 2
#else
#define FORK_BARRIERS 0
#endif
static void test_fork(void)
{
	struct pb_proc *p, *c;
	struct t_snap s;

	t_begin(SZ_64M);
	p = t_proc();
	t_map_written(p, ADDR_A, PAGES(2), 1);
	t_map_written(p, ADDR_A + SZ_1M, PAGES(1), 3);
	EXPECT_EQ(pb_mprotect(p, ADDR_A + SZ_1M, PAGES(1), PB_PROT_READ), 0);
	EXPECT_EQ(pb_mmap(p, ADDR_B, PAGES(4), RW), 0);
	t_snap(&s);
	c = t_fork(p);
	EXPECT_EQ(SINCE(s, kernel_entry), 1);
	EXPECT_EQ(SINCE(s, mm_alloc), 1);
	EXPECT_EQ(SINCE(s, vma_alloc), 3);
	EXPECT_EQ(SINCE(s, pgtable_alloc), 4);
	EXPECT_EQ(SINCE(s, barrier), FORK_BARRIERS);
	t_exit(c);
	t_exit(p);
	t_end("stats: fork of 3 VMAs: 1 entry, 1 mm, 3 VMAs, 4 tables, "
	      "its barriers");
}

/*
 * Pin and release: register (io_uring_register), unregister (its own
 * call), and an O_DIRECT write whose unpin is part of the same call.
 */
static void test_pin_entries(void)
{
	struct pb_proc *p;
	struct pb_pages *pages;
	struct t_snap s;

	t_begin(SZ_64M);
	p = t_proc();
	t_map_written(p, ADDR_A, PAGES(4), 1);
	t_snap(&s);
	EXPECT_EQ(pb_gup_fast(p, ADDR_A, 4, PB_FOLL_PIN | PB_FOLL_LONGTERM,
			      &pages), 0);
	EXPECT_EQ(SINCE(s, kernel_entry), 1);
	pb_pages_release_syscall(pages, false);
	EXPECT_EQ(SINCE(s, kernel_entry), 2);
	t_snap(&s);
	EXPECT_EQ(pb_gup_fast_partial(p, ADDR_A, 4, PB_FOLL_PIN, &pages), 0);
	pb_pages_release(pages, false);
	EXPECT_EQ(SINCE(s, kernel_entry), 1);
	t_exit(p);
	t_end("stats: a pin is one entry, its release one more unless inside the call");
}

/*
 * memmap_line: mprotect(PROT_READ) of 16 written pages, counted.
 *
 * 16 order-0 folios: each page's PageCompound() is one line, its own,
 * but the last page's: with one PTE left the batch is 1 and the page is
 * not asked (mprotect_folio_pte_batch()'s max_nr == 1).  15 lines.
 *
 * One 64K folio: PageCompound(f0) is the head's line, page_folio()
 * finds the head there, and the batch's folio_nr_pages() reads the order
 * on head + 1's line: one batch of 16, 2 lines.
 *
 * pte_batch: change_pte_range()'s steps, 16 for small folios and 1 for
 * the 64K one (upstream batches mprotect), into *@steps.
 */
static unsigned long mprotect_lines(unsigned long folio, unsigned long *steps)
{
	struct pb_proc *p;
	struct t_snap s;
	unsigned long lines;

	t_begin_folios(SZ_64M, folio);
	p = t_proc_map(ADDR_A, PAGES(16), RW);
	t_fill(p, ADDR_A, 16, 1);
	pb_stats_count_memmap_lines(true);
	t_snap(&s);
	EXPECT_EQ(pb_mprotect(p, ADDR_A, PAGES(16), PB_PROT_READ), 0);
	lines = SINCE(s, memmap_line);
	*steps = SINCE(s, pte_batch);
	pb_stats_count_memmap_lines(false);
	t_exit(p);
	return lines;
}

static void test_memmap_lines_mprotect(void)
{
	unsigned long steps;

	EXPECT_EQ(mprotect_lines(PAGE_SIZE, &steps), 15);
	EXPECT_EQ(steps, 16);
	t_finish();
	EXPECT_EQ(mprotect_lines(PAGES(16), &steps), 2);
	EXPECT_EQ(steps, 1);
	t_end("stats: mprotect over 16 pages: 15 lines and 16 steps small, "
	      "2 lines and 1 step for a 64K folio");
}

/*
 * memmap_line per trap: the 64K fault touches each of the folio's 16
 * struct pages (prep_compound_page, then PageAnonExclusive on each), and
 * nothing else: 16.  Off, nothing is counted.
 */
static void test_memmap_lines_fault(void)
{
	struct pb_proc *p;
	struct t_snap s;

	t_begin_folios(SZ_64M, PAGES(16));
	p = t_proc_map(ADDR_A, PAGES(32), RW);
	t_snap(&s);
	t_fill(p, ADDR_A, 16, 1);
	EXPECT_EQ(SINCE(s, memmap_line), 0);
	pb_stats_count_memmap_lines(true);
	t_snap(&s);
	t_fill(p, ADDR_A + PAGES(16), 16, 1);
	EXPECT_EQ(SINCE(s, fault_trap), 1);
	EXPECT_EQ(SINCE(s, memmap_line), 16);
	pb_stats_count_memmap_lines(false);
	t_exit(p);
	t_end("stats: memmap_line of a 64K fault: its 16 struct pages; 0 when off");
}

/*
 * A set of lines larger than the first table (1024 slots, grown when
 * half full): mprotect over 8 PTE tables of small pages, every page but
 * each table's last (see above): 8 * (PTRS_PER_PTE - 1).
 */
static void test_memmap_lines_many(void)
{
	const unsigned long nr = 8 * PTRS_PER_PTE;
	struct pb_proc *p;
	struct t_snap s;

	t_begin(SZ_64M);
	p = t_proc_map(ADDR_A, PAGES(nr), RW);
	t_fill(p, ADDR_A, nr, 1);
	pb_stats_count_memmap_lines(true);
	t_snap(&s);
	EXPECT_EQ(pb_mprotect(p, ADDR_A, PAGES(nr), PB_PROT_READ), 0);
	EXPECT_EQ(SINCE(s, memmap_line), 8 * (PTRS_PER_PTE - 1));
	/*
	 * The next entry starts from an empty set: back to read-write, the
	 * write upgrade asks every page's folio and PageAnonExclusive (the
	 * same line for an order-0 page), the tables' last pages too: nr.
	 */
	t_snap(&s);
	EXPECT_EQ(pb_mprotect(p, ADDR_A, PAGES(nr), RW), 0);
	EXPECT_EQ(SINCE(s, memmap_line), nr);
	pb_stats_count_memmap_lines(false);
	t_exit(p);
	t_end("stats: memmap_line over %lu pages, then again from an empty set", nr);
}

int main(void)
{
	test_small_pages();
	test_mthp();
	test_populate_is_one_entry();
	test_fork();
	test_pin_entries();
	test_memmap_lines_mprotect();
	test_memmap_lines_fault();
	test_memmap_lines_many();
	return tap_done();
}
