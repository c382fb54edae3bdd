// SPDX-License-Identifier: GPL-2.0-only
/*
 * madvise.c: MADV_DONTNEED (zap, keep the VMA), MADV_FREE (lazy free),
 * MADV_PAGEOUT (reclaim now, on a machine without swap), the VMA-flag
 * advices HUGEPAGE, NOHUGEPAGE, DONTFORK, DOFORK, WIPEONFORK, KEEPONFORK,
 * and POPULATE_READ/WRITE (mm/madvise.c).  Unmapped parts of the range
 * are skipped and reported as -ENOMEM at the end, as Linux does; populate
 * stops at the first one.
 */
#include <stdlib.h>

#include "mm/pgtable.h"
#include "mm/pte_batch.h"
#include "mm/tlb.h"

/* The advices the model knows; Linux fails any other with -EINVAL. */
static bool madvise_behavior_valid(int advice)
{
	switch (advice) {
	case MADV_DONTNEED:
	case MADV_HUGEPAGE:
	case MADV_NOHUGEPAGE:
	case MADV_DONTFORK:
	case MADV_DOFORK:
	case MADV_WIPEONFORK:
	case MADV_KEEPONFORK:
	case MADV_POPULATE_READ:
	case MADV_POPULATE_WRITE:
	case MADV_FREE:
	case MADV_PAGEOUT:
		return true;
	default:
		return false;
	}
}

static unsigned long advice_flags(unsigned long flags, int advice)
{
	switch (advice) {
	case MADV_HUGEPAGE:
		return (flags & ~VM_NOHUGEPAGE) | VM_HUGEPAGE;
	case MADV_NOHUGEPAGE:
		return (flags & ~VM_HUGEPAGE) | VM_NOHUGEPAGE;
	case MADV_DONTFORK:
		return flags | VM_DONTCOPY;
	case MADV_DOFORK:
		return flags & ~VM_DONTCOPY;
	case MADV_WIPEONFORK:
		return flags | VM_WIPEONFORK;
	case MADV_KEEPONFORK:
		return flags & ~VM_WIPEONFORK;
	default:
		return flags;
	}
}

static bool is_madvise_populate(int advice)
{
	return advice == MADV_POPULATE_READ || advice == MADV_POPULATE_WRITE;
}

/*
 * madvise_populate(): fault [start, end) in through GUP, which takes the
 * faults as the task's own.  It stops at the first hole (-ENOMEM) or VMA
 * that forbids the access (-EINVAL); what came before stays populated.
 */
static int madvise_populate(struct mm_struct *mm, unsigned long start,
			    unsigned long end, int advice)
{
	const bool write = advice == MADV_POPULATE_WRITE;
	long pages = 0;

	pthread_rwlock_rdlock(&mm->mmap_lock);
	while (start < end) {
		pages = faultin_page_range(mm, start, end, write);
		if (pages < 0)
			break;
		start += pages << PAGE_SHIFT;
	}
	pthread_rwlock_unlock(&mm->mmap_lock);
	if (pages >= 0)
		return 0;
	switch (pages) {
	case -EINVAL:
	case -EFAULT:
		return (int)pages;
	default:
		return -ENOMEM;
	}
}

/*
 * The walk of MADV_FREE and MADV_PAGEOUT over one PTE table: where a large
 * folio starts, one scan (madvise_folio_pte_batch() of the kernel:
 * FPB_MERGE_YOUNG_DIRTY) says whether the range maps all of it by
 * consecutive PTEs; if not, the folio is split - unless another MM may
 * map it, then those PTEs are left alone.  A folio mapped whole is then
 * handled in steps of nr PTEs: the whole run with madvise_free_batch,
 * one PTE at a time without - the same code, with the scan's verdict
 * kept for the rest of the folio (@covered) so that both forms decide
 * the same.
 */
struct madvise_walk {
	struct mmu_gather *tlb;
	bool pageout;
	/* MADV_PAGEOUT: the folios isolated for reclaim, with a reference. */
	struct reclaim_item {
		struct folio *folio;
		unsigned long addr;	/* where its first page is mapped */
		bool pmd;
	} *isolated;
	unsigned int nr_isolated;
};

static void madvise_free_pageout_pte_range(struct madvise_walk *walk,
					   struct vm_area_struct *vma,
					   pmd_t *pmdp, unsigned long addr,
					   unsigned long end)
{
	struct mm_struct *mm = vma->vm_mm;
	struct folio *covered = NULL;
	pte_t *start_pte, *ptep;
	spinlock_t *ptl;
	unsigned int nr;

	start_pte = ptep = pte_offset_map_lock(mm, pmdp, addr, &ptl);
	if (!start_pte)
		return;
	for (; addr != end; ptep += nr, addr += nr * PAGE_SIZE) {
		pte_t ptent = ptep_get(ptep);
		struct folio *folio;
		struct page *page;

		nr = 1;
		if (!pte_present(ptent))
			continue;
		count_stat(pte_batch);
		page = vm_normal_page(vma, addr, ptent);
		if (!page)
			continue;
		folio = page_folio(page);
		if (folio_test_large(folio) && folio != covered) {
			pte_t run = ptent;
			unsigned int whole = folio_pte_batch_flags(folio, NULL,
					ptep, &run, (end - addr) >> PAGE_SHIFT,
					FPB_MERGE_YOUNG_DIRTY);

			if (whole < folio_nr_pages(folio)) {
				int err;

				nr = whole;
				if (folio_maybe_mapped_shared(folio))
					continue;
				pte_unmap_unlock(start_pte, ptl);
				err = split_folio(vma, addr, page, 0);
				start_pte = ptep = pte_offset_map_lock(mm, pmdp,
								       addr, &ptl);
				if (!start_pte)
					return;
				/* Split: the same PTEs again, as small folios. */
				if (!err)
					nr = 0;
				continue;
			}
			covered = folio;
			if (machine.variant.madvise_free_batch) {
				nr = whole;
				ptent = run;
			}
		}

		if (walk->pageout) {
			/*
			 * Leave a folio other MMs map to them; a large folio
			 * here is mapped whole, so mapcount == nr pages is
			 * exclusive.  Isolate it once, at its first PTE.
			 */
			if (folio_mapcount(folio) != (int)folio_nr_pages(folio))
				continue;
			if (folio_test_large(folio) &&
			    page != folio_page(folio, 0))
				continue;
			folio_clear_flag(folio, PG_referenced);
			folio_get(folio);
			walk->isolated[walk->nr_isolated++] =
				(struct reclaim_item){ folio, addr, false };
			continue;
		}

		if (folio_test_dirty(folio)) {
			/* Only an exclusive folio's PG_dirty may be dropped. */
			if (folio_mapcount(folio) != (int)folio_nr_pages(folio))
				continue;
			folio_clear_flag(folio, PG_dirty);
		}
		if (pte_young(ptent) || pte_dirty(ptent)) {
			clear_young_dirty_ptes(vma, addr, ptep, nr,
					       CYDP_CLEAR_YOUNG | CYDP_CLEAR_DIRTY);
			/*
			 * tlb_remove_tlb_entries(): the next store must walk
			 * the table and set Dirty again, which is what tells
			 * reclaim the data is wanted after all.
			 */
			tlb_flush_pte_range(walk->tlb, addr, nr * PAGE_SIZE);
		}
		folio_mark_lazyfree(folio);
	}
	pte_unmap_unlock(start_pte, ptl);
}

/*
 * try_to_unmap_one() putting back the @nr entries it cleared (@orig) of a
 * folio it may not discard: set_ptes() over each batch
 * folio_unmap_pte_batch() made (FPB_RESPECT_WRITE |
 * FPB_RESPECT_SOFT_DIRTY: the whole folio unless those bits differ), with
 * the young and dirty bits the clear gathered (@gathered).  A batch, not
 * one entry at a time: arm64 writes its whole blocks contiguous without
 * a conversion, where single entries would fold each block again at its
 * last entry.
 */
static void restore_lazyfree_ptes(struct mm_struct *mm, unsigned long addr,
				  pte_t *ptep, const pte_t *orig, unsigned int nr,
				  pte_t gathered)
{
	const fpb_t flags = FPB_RESPECT_WRITE | FPB_RESPECT_SOFT_DIRTY;
	unsigned int i, n;

	for (i = 0; i < nr; i += n) {
		pte_t pte = orig[i];

		for (n = 1; i + n < nr; n++)
			if (!pte_same(__pte_batch_clear_ignored(orig[i + n], flags),
				      __pte_batch_clear_ignored(pte_advance_pfn(pte, n),
								flags)))
				break;
		/* Each entry's young and dirty are part of @gathered's. */
		if (pte_young(gathered))
			pte = pte_mkyoung(pte);
		if (pte_dirty(gathered))
			pte = pte_mkdirty(pte);
		set_ptes(mm, addr + i * PAGE_SIZE, ptep + i, pte, n);
	}
}

/*
 * try_to_unmap_one() of a lazy-free folio mapped by the PTEs at @addr (the
 * isolation reference held): clear them and flush, so no CPU can store
 * through a stale translation; a folio clean in every PTE, not
 * re-dirtied, referenced only by its mappings and the isolation, goes
 * (its references after the final flush).  A re-dirtied one was wanted
 * after all: the PTEs come back (dirty) and the folio is swapbacked again,
 * no longer lazy-free.  One that someone else holds (a GUP reference, a
 * pin) gets its PTEs back and stays lazy-free, as Linux 6.18 does: a GUP
 * user that writes marks it dirty, and the next reclaim decides.  True
 * if it went.
 */
static bool discard_lazyfree_ptes(struct mmu_gather *tlb,
				  struct vm_area_struct *vma, unsigned long addr,
				  struct folio *folio)
{
	struct mm_struct *mm = vma->vm_mm;
	const unsigned int nr = folio_nr_pages(folio);
	pmd_t *pmdp = walk_to_pmd(mm, addr);
	pte_t *ptep, pteval, *orig;
	unsigned int i;
	spinlock_t *ptl;

	ptep = pmdp ? pte_offset_map_lock(mm, pmdp, addr, &ptl) : NULL;
	if (!ptep)
		return false;
	orig = malloc(nr * sizeof(*orig));
	pteval = ptep_get(ptep);
	if (!orig || !pte_present(pteval) || pte_pfn(pteval) != folio_pfn(folio) ||
	    (nr > 1 && folio_pte_batch(folio, ptep, pteval, nr) != nr))
		goto keep;
	for (i = 0; i < nr; i++)
		orig[i] = i ? ptep_get(ptep + i) : pteval;
	pteval = get_and_clear_ptes(mm, addr, ptep, nr);
	flush_tlb_range(mm, addr, addr + nr * PAGE_SIZE);
	if (pte_dirty(pteval))
		folio_set_flag(folio, PG_dirty);
	/* The only references: the mappings' and the isolation's. */
	if (folio_test_dirty(folio) ||
	    folio_ref_count(folio) != folio_mapcount(folio) + 1) {
		restore_lazyfree_ptes(mm, addr, ptep, orig, nr, pteval);
		if (folio_test_dirty(folio))
			folio_set_flag(folio, PG_swapbacked);
		goto keep;
	}
	folio_remove_rmap_ptes(folio, folio_page(folio, 0), (int)nr, vma);
	pte_unmap_unlock(ptep, ptl);
	free(orig);
	tlb_remove_folio_refs(tlb, folio, (int)nr);
	return true;
keep:
	pte_unmap_unlock(ptep, ptl);
	free(orig);
	return false;
}

/*
 * reclaim_pages() -> shrink_folio_list() for what MADV_PAGEOUT isolated,
 * on a machine without swap, the only reclaim the model has.  A lazy-free
 * folio is discarded if it can be; a swapbacked one cannot go (there is
 * no swap for add_to_swap()), and reclaim then splits a large one to try
 * its pages one by one - which fail too, but the folio stays split - when
 * nothing but the mappings and the isolation hold it and it is not pinned.
 */
static void reclaim_isolated(struct madvise_walk *walk,
			     struct vm_area_struct *vma)
{
	unsigned int i;

	for (i = 0; i < walk->nr_isolated; i++) {
		struct reclaim_item *it = &walk->isolated[i];
		struct folio *folio = it->folio;

		if (it->pmd)
			pageout_huge_pmd_folio(vma, it->addr, folio);
		if (folio_test_lazyfree(folio))
			discard_lazyfree_ptes(walk->tlb, vma, it->addr, folio);
		else if (!it->pmd && folio_test_large(folio) &&
			 !folio_maybe_dma_pinned(folio))
			split_folio(vma, it->addr, folio_page(folio, 0), 1);
		/* The isolation reference (on the head's folio after a split). */
		folio_put(folio);
	}
	walk->nr_isolated = 0;
}

/* madvise_free_single_vma() / madvise_pageout_page_range(). */
static int madvise_free_pageout_vma(struct vm_area_struct *vma,
				    unsigned long addr, unsigned long end,
				    bool pageout)
{
	struct mm_struct *mm = vma->vm_mm;
	struct madvise_walk walk = { .pageout = pageout };
	struct mmu_gather tlb;
	unsigned long next;

	if (pageout) {
		walk.isolated = malloc(PTRS_PER_PTE * sizeof(*walk.isolated));
		if (!walk.isolated)
			return -ENOMEM;
	}
	tlb_gather_mmu(&tlb, mm);
	walk.tlb = &tlb;
	for (; addr < end; addr = next) {
		pmd_t *pmdp = walk_to_pmd(mm, addr);
		pmd_t pmd;

		next = pmd_addr_end(addr, end);
		if (!pmdp)
			continue;
		pmd = pmdp_get(pmdp);
		if (pmd_none(pmd))
			continue;
		if (pmd_leaf(pmd) && pageout) {
			struct folio *folio = madvise_pageout_huge_pmd(vma, pmdp,
								       addr, next);

			if (folio) {
				walk.isolated[walk.nr_isolated++] =
					(struct reclaim_item){ folio, addr & PMD_MASK, true };
				reclaim_isolated(&walk, vma);
				continue;
			}
		} else if (pmd_leaf(pmd) &&
			   madvise_free_huge_pmd(&tlb, vma, pmdp, addr, next)) {
			continue;
		}
		/* A PMD still a leaf here was left alone: no table to walk. */
		madvise_free_pageout_pte_range(&walk, vma, pmdp, addr, next);
		if (pageout)
			reclaim_isolated(&walk, vma);
	}
	tlb_finish_mmu(&tlb);
	free(walk.isolated);
	return 0;
}

int do_madvise(struct mm_struct *mm, unsigned long start, unsigned long len,
	       int advice)
{
	/* These change page tables, not VMAs: mmap_lock for read. */
	const bool dontneed = advice == MADV_DONTNEED || advice == MADV_FREE ||
			      advice == MADV_PAGEOUT;
	unsigned long end, addr;
	int err = 0, unmapped = 0;

	if (!madvise_behavior_valid(advice))
		return -EINVAL;
	/*
	 * check_input_range(): a length that rounds up to 0 from the top
	 * of the range of size_t is -EINVAL, not an empty range.
	 */
	if (start & ~PAGE_MASK)
		return -EINVAL;
	end = start + ALIGN(len, PAGE_SIZE);
	if (len && end == start)
		return -EINVAL;
	if (end < start)
		return -EINVAL;
	if (end == start)
		return 0;
	if (is_madvise_populate(advice))
		return madvise_populate(mm, start, end, advice);
	if (dontneed)
		pthread_rwlock_rdlock(&mm->mmap_lock);
	else
		pthread_rwlock_wrlock(&mm->mmap_lock);
	for (addr = start; addr < end;) {
		struct vm_area_struct *vma = find_vma(mm, addr);
		unsigned long tmp;

		if (!vma || vma->vm_start >= end) {
			unmapped = 1;
			break;
		}
		if (vma->vm_start > addr) {
			unmapped = 1;
			addr = vma->vm_start;
		}
		tmp = min(vma->vm_end, end);
		if (advice == MADV_FREE || advice == MADV_PAGEOUT) {
			err = madvise_free_pageout_vma(vma, addr, tmp,
						       advice == MADV_PAGEOUT);
			if (err)
				break;
		} else if (dontneed) {
			/* CONFIG_PT_RECLAIM: emptied PTE tables go too. */
			const struct zap_details details = { .reclaim_pt = true };
			struct mmu_gather tlb;

			tlb_gather_mmu(&tlb, mm);
			zap_page_range(&tlb, vma, addr, tmp, &details);
			tlb_finish_mmu(&tlb);
		} else {
			unsigned long newflags = advice_flags(vma->vm_flags, advice);

			/*
			 * madvise_vma_behavior(): a VMA split that found no
			 * memory is -EAGAIN, telling it from a hole's -ENOMEM.
			 */
			if (newflags != vma->vm_flags &&
			    !vma_modify_flags(mm, vma, addr, tmp, newflags, &err)) {
				if (err == -ENOMEM)
					err = -EAGAIN;
				break;
			}
		}
		addr = tmp;
	}
	if (!dontneed)
		vma_try_merge_around(mm, start, end);
	pthread_rwlock_unlock(&mm->mmap_lock);
	if (err)
		return err;
	return unmapped ? -ENOMEM : 0;
}
