/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pte_batch.h: folio_pte_batch_flags(), the one helper every batched PTE
 * walker uses to find how many consecutive PTEs map consecutive pages of
 * one large folio with the same bits (the kernel's is in mm/internal.h).
 * Inline, so each caller's flags fold away.
 */
#ifndef MM_PTE_BATCH_H
#define MM_PTE_BATCH_H

#include "mm/pgtable.h"

typedef unsigned int fpb_t;

/* Compare the dirty bit instead of ignoring it. */
#define FPB_RESPECT_DIRTY	(1U << 0)
/* Compare the soft-dirty bit instead of ignoring it. */
#define FPB_RESPECT_SOFT_DIRTY	(1U << 1)
/* Compare the write bit instead of ignoring it. */
#define FPB_RESPECT_WRITE	(1U << 2)
/* If any later PTE is writable, make *ptentp writable (fork). */
#define FPB_MERGE_WRITE		(1U << 3)
/* OR young and dirty of later PTEs into *ptentp. */
#define FPB_MERGE_YOUNG_DIRTY	(1U << 4)
/*
 * Read entries as a lockless walker must: GUP-fast's batch scan, which
 * holds no PTL (proposed with "mm: gup: batch PTE-mapped large folios in
 * gup_fast_pte_range()"; not in mainline).
 */
#define FPB_LOCKLESS		(1U << 5)

/* Normalise the bits a batch ignores; young is always ignored. */
static inline pte_t __pte_batch_clear_ignored(pte_t pte, fpb_t flags)
{
	if (!(flags & FPB_RESPECT_DIRTY))
		pte = pte_mkclean(pte);
	if (likely(!(flags & FPB_RESPECT_SOFT_DIRTY)))
		pte = pte_clear_soft_dirty(pte);
	if (likely(!(flags & FPB_RESPECT_WRITE)))
		pte = pte_wrprotect(pte);
	return pte_mkold(pte);
}

/*
 * folio_pte_batch_flags(): the number of PTEs from @ptep (which maps a
 * page of large @folio, *@ptentp being a copy of it) that map the
 * following pages of the same folio and are equal after ignoring what
 * @flags does not respect.  At most @max_nr, which the caller has already
 * bounded by its VMA and page table; the folio end bounds it here.
 * Merges (FPB_MERGE_*) go into *@ptentp.
 */
static inline unsigned int folio_pte_batch_flags(struct folio *folio,
		struct vm_area_struct *vma, pte_t *ptep, pte_t *ptentp,
		unsigned int max_nr, fpb_t flags)
{
	bool any_writable = false, any_young = false, any_dirty = false;
	pte_t expected_pte, pte = *ptentp;
	const bool writable = pte_write(pte);
	/*
	 * pte_mkclean() can remove the write bit: an x86 shadow-stack entry
	 * (RW=0, Dirty=1) and a read-only one look alike once dirty is
	 * ignored.  A batch that respects write must not mix them.  Write is
	 * compared exactly otherwise, so only a first entry whose pte_write()
	 * hangs on its dirty bit needs the check.
	 */
	const bool guard_write = (flags & (FPB_RESPECT_WRITE | FPB_RESPECT_DIRTY)) ==
				 FPB_RESPECT_WRITE && pte_write_needs_dirty(pte);
	unsigned int nr, cur_nr, reads = 0;
	uint64_t step;

	max_nr = min(max_nr, (unsigned int)(folio_pfn(folio) +
					    folio_nr_pages(folio) - pte_pfn(pte)));
	nr = pte_batch_hint(ptep, pte);
	expected_pte = __pte_batch_clear_ignored(pte_advance_pfn(pte, nr), flags);
	/*
	 * Every entry of a batch has the first one's present/PROT_NONE bits,
	 * so stepping the PFN is the same change of the entry's value each
	 * time: take it from the arch once instead of per entry.
	 */
	step = pte_val(pte_advance_pfn(expected_pte, 1)) - pte_val(expected_pte);
	ptep += nr;
	while (nr < max_nr) {
		if (PB_HOOKS && (flags & FPB_LOCKLESS))
			hook_gup_fast(GUP_STEP_BATCH_READ, ptep, nr);
		/* The arch's read; what it leaves uncounted is counted below. */
		pte = ptep_get_batch(ptep, flags & FPB_LOCKLESS, &reads);
		if (!pte_same(__pte_batch_clear_ignored(pte, flags), expected_pte))
			break;
		if (guard_write && unlikely(pte_write(pte) != writable))
			break;
		if (flags & FPB_MERGE_WRITE)
			any_writable |= pte_write(pte);
		if (flags & FPB_MERGE_YOUNG_DIRTY) {
			any_young |= pte_young(pte);
			any_dirty |= pte_dirty(pte);
		}
		cur_nr = pte_batch_hint(ptep, pte);
		expected_pte = __pte(pte_val(expected_pte) + step * cur_nr);
		ptep += cur_nr;
		nr += cur_nr;
	}
	count_stat_n(pte_read, reads);
	if (any_writable)
		*ptentp = pte_mkwrite(*ptentp, vma);
	if (any_young)
		*ptentp = pte_mkyoung(*ptentp);
	if (any_dirty)
		*ptentp = pte_mkdirty(*ptentp);
	return min(nr, max_nr);
}

/* folio_pte_batch(): no flags - ignores dirty, soft-dirty, write, young. */
static inline unsigned int folio_pte_batch(struct folio *folio, pte_t *ptep,
					   pte_t pte, unsigned int max_nr)
{
	return folio_pte_batch_flags(folio, NULL, ptep, &pte, max_nr, 0);
}

#endif /* MM_PTE_BATCH_H */
