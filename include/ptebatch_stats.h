/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The model's cost counters, one PB_STAT(name) each, in print order.
 * Included with PB_STAT defined by the includer (an X-macro list).
 */
PB_STAT(fault)			/* handle_mm_fault calls that were accounted */
PB_STAT(fault_anon)		/* do_anonymous_page: new folio */
PB_STAT(fault_zero)		/* do_anonymous_page: zero page mapped */
PB_STAT(fault_huge_anon)	/* PMD THP (or huge zero page) fault */
PB_STAT(fault_wp_reuse)		/* do_wp_page reused the page */
PB_STAT(wp_reuse_ptes)		/* PTEs made writable by those reuses */
PB_STAT(fault_wp_copy)		/* do_wp_page copied the page */
PB_STAT(fault_unshare)		/* FAULT_FLAG_UNSHARE faults */
PB_STAT(fault_huge_wp)		/* do_huge_pmd_wp_page */
PB_STAT(fault_spurious)		/* nothing to do: PTE already fine */
PB_STAT(folio_ref_atomic)	/* atomic RMW on a folio refcount */
PB_STAT(pincount_atomic)	/* atomic RMW on _pincount */
PB_STAT(mapcount_atomic)	/* atomic RMW on a mapcount */
PB_STAT(pte_read)		/* page-table entry loads (not the MMU's, nor the checker's) */
PB_STAT(pte_write)		/* page-table entry stores and RMWs */
PB_STAT(tlb_flush)		/* TLB flush operations */
PB_STAT(tlb_flush_pages)	/* pages covered by those flushes */
PB_STAT(contpte_convert)	/* arm64: contiguous blocks repainted (fold or unfold) */
PB_STAT(contpte_fold)		/* arm64: ... of them folds */
PB_STAT(folio_alloc)		/* folios allocated */
PB_STAT(folio_alloc_pages)	/* base pages in those folios */
PB_STAT(alloc_fail)		/* order-0 allocations refused: out of frames */
PB_STAT(folio_copy)		/* base pages copied (COW, fork copies) */
PB_STAT(pmd_split)		/* PMD mappings split to PTEs */
PB_STAT(gup_fast_pages)		/* pages returned by GUP-fast */
PB_STAT(gup_slow_pages)		/* pages returned by the GUP slow path */
PB_STAT(gup_fast_grab)		/* try_grab_folio_fast calls: one per PTE run or PMD */
/*
 * Issue 15's cost fit: what else costs the kernel time.  kernel_entry is
 * one per system call the API stands for (mm/api.c); a trap (a user
 * access that enters the fault handler, mm/access.c) is fault_trap;
 * faults GUP takes inside a system call are neither.
 */
PB_STAT(kernel_entry)		/* system calls */
PB_STAT(page_zero)		/* base pages zeroed: clear_page of new anon folios */
PB_STAT(folio_free)		/* folios returned to the page allocator */
PB_STAT(folio_free_pages)	/* base pages in those folios */
PB_STAT(pgtable_alloc)		/* page-table pages allocated, any level */
PB_STAT(pgtable_free)		/* page-table pages freed, any level */
PB_STAT(vma_alloc)		/* VMAs allocated: mmap, split, fork, mremap */
PB_STAT(mm_alloc)		/* address spaces (mm_struct) created */
/*
 * struct page cache lines first touched per kernel entry (64-byte struct
 * page: one line per pfn; a large folio's mapcounts and pincount are in
 * head + 1's line).  0 unless pb_stats_count_memmap_lines(true).
 */
PB_STAT(memmap_line)
PB_STAT(barrier)		/* full memory barriers: smp_mb() */
/*
 * Steps of a PTE-walking loop (change_pte_range, zap_pte_range,
 * copy_pte_range, gup_fast_pte_range, madvise's free/pageout walk, the
 * write-fault reuse walk): one per run of present PTEs handled together,
 * nr == 1 included - the per-step work batching saves.
 */
PB_STAT(pte_batch)
PB_STAT(user_access)		/* CPU loads and stores (one per page a statement accesses) */
/*
 * PTEs change_pte_range() changed, each of a batch counted: its per-PTE
 * work - modify_prot_start/commit's clear and set, pte_modify, the
 * soft-dirty and uffd-wp checks - costs 2-3x another walk's PTE store.
 */
PB_STAT(change_ptes)
/*
 * anon_vma_chain links made: a VMA's first anon_vma, a fork's clone of
 * a VMA's chain plus the child's own anon_vma, a split VMA's clone.
 */
PB_STAT(anon_vma_chain)
/* Large folios (order > 0) freed: deferred-split and compound teardown. */
PB_STAT(folio_free_large)
/*
 * User faults' traps (do_user_addr_fault entered): an exception entry
 * and return, cheaper than a system call's and with no timing around
 * each one, so apart from kernel_entry.
 */
PB_STAT(fault_trap)
