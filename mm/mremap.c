// SPDX-License-Identifier: GPL-2.0-only
/*
 * mremap.c: moving a range to a fixed new address (mremap with
 * MREMAP_MAYMOVE|MREMAP_FIXED, and MREMAP_DONTUNMAP, mm/mremap.c), and
 * resizing a mapping in place (mremap without flags: mremap_at()).  Page-table entries move, the
 * folios stay: a large folio can end up misaligned, across a page-table
 * boundary, or mapped from two places.  Like Linux 6.17+, a move may span
 * several VMAs and the gaps between them stay gaps.
 */
#include "mm/pgtable.h"
#include "mm/pte_batch.h"
#include "mm/tlb.h"

/*
 * mremap_folio_pte_batch(): with mremap_batch (Linux 6.17+), a present PTE
 * heads a run of the PTEs that map the following pages of its large folio
 * with the same write bit, moved with one get_and_clear_ptes() and one
 * set_ptes(): on arm64 a whole contpte block leaves and arrives folded,
 * never unfolded.  Only where the architecture hints at a run
 * (pte_batch_hint(): arm64's contiguous blocks): elsewhere the folio
 * lookup would cost more than the batch saves, and each PTE goes alone.
 */
static unsigned int mremap_folio_pte_batch(struct vm_area_struct *vma,
					   unsigned long addr, pte_t *ptep,
					   pte_t pte, unsigned int max_nr)
{
	struct page *page;

	if (!machine.variant.mremap_batch || max_nr == 1)
		return 1;
	if (pte_batch_hint(ptep, pte) == 1)
		return 1;
	page = vm_normal_page(vma, addr, pte);
	if (!page || !folio_test_large(page_folio(page)))
		return 1;
	return folio_pte_batch_flags(page_folio(page), NULL, ptep, &pte, max_nr,
				     FPB_RESPECT_WRITE);
}

/* Move the PTEs of [old_addr, old_end) to @new_addr in the same mm. */
static int move_ptes(struct vm_area_struct *vma, pmd_t *old_pmd,
		     unsigned long old_addr, unsigned long old_end,
		     pmd_t *new_pmd, unsigned long new_addr)
{
	struct mm_struct *mm = vma->vm_mm;
	spinlock_t *old_ptl, *new_ptl;
	pte_t *old_pte, *new_pte, *old_start;
	bool moved = false;
	unsigned long a = old_addr;
	unsigned int nr;

	if (pmd_none(pmdp_get(new_pmd)) && __pte_alloc(mm, new_pmd))
		return -ENOMEM;
	old_pte = old_start = pte_offset_map_lock(mm, old_pmd, old_addr, &old_ptl);
	if (!old_pte)
		return 0;
	new_pte = pte_offset(pmdp_get(new_pmd), new_addr);
	new_ptl = &pmd_table_page(pmdp_get(new_pmd))->pt.ptl;
	if (new_ptl != old_ptl)
		spin_lock(new_ptl);
	for (; a < old_end; a += (unsigned long)nr << PAGE_SHIFT,
	     old_pte += nr, new_pte += nr) {
		pte_t pte = ptep_get(old_pte);

		nr = 1;
		if (pte_none(pte))
			continue;
		if (pte_present(pte))
			nr = mremap_folio_pte_batch(vma, a, old_pte, pte,
					(unsigned int)((old_end - a) >> PAGE_SHIFT));
		pte = get_and_clear_ptes(mm, a, old_pte, nr);
		moved = true;
		/* move_soft_dirty_pte(): a moved page counts as written. */
		set_ptes(mm, new_addr + (a - old_addr), new_pte,
			 pte_mksoft_dirty(pte), nr);
	}
	if (moved)
		flush_tlb_range(mm, old_addr, old_end);
	if (new_ptl != old_ptl)
		spin_unlock(new_ptl);
	pte_unmap_unlock(old_start, old_ptl);
	return 0;
}

/* move_huge_pmd(): a whole aligned PMD mapping moves with its deposit. */
static void move_huge_pmd(struct mm_struct *mm, pmd_t *old_pmd,
			  unsigned long old_addr, pmd_t *new_pmd)
{
	spinlock_t *ptl = pmd_lock(mm, old_pmd);
	pmd_t pmd = pmdp_get_and_clear(old_pmd);
	unsigned long pgtable = pgtable_trans_huge_withdraw(mm, old_pmd);

	flush_tlb_range(mm, old_addr, old_addr + PMD_SIZE);
	pgtable_trans_huge_deposit(mm, new_pmd, pgtable);
	set_pmd(new_pmd, __pmd(pte_pmd(pte_mksoft_dirty(pmd_pte(pmd))).pmd));
	spin_unlock(ptl);
}

/*
 * move_normal_pmd(): a whole PTE table under an aligned PMD moves by its
 * PMD entry (CONFIG_HAVE_MOVE_PMD), its PTE lock with it.  The old PMD is
 * then empty, not a table of empty PTEs: after MREMAP_DONTUNMAP a fault
 * there may map a huge page again.
 */
static void move_normal_pmd(struct mm_struct *mm, pmd_t *old_pmd,
			    unsigned long old_addr, pmd_t *new_pmd)
{
	spinlock_t *ptl = pmd_lock(mm, old_pmd);
	pmd_t pmd = pmdp_get(old_pmd);

	set_pmd(old_pmd, __pmd(0));
	set_pmd(new_pmd, pmd);
	flush_tlb_range(mm, old_addr, old_addr + PMD_SIZE);
	spin_unlock(ptl);
}

static int move_page_tables(struct vm_area_struct *vma, unsigned long old_addr,
			    unsigned long new_addr, unsigned long len)
{
	struct mm_struct *mm = vma->vm_mm;
	unsigned long old_end = old_addr + len, extent;
	int err;

	for (; old_addr < old_end; old_addr += extent, new_addr += extent) {
		pmd_t *old_pmd, *new_pmd;
		pmd_t pmd;

		/* Stay inside one table on both sides. */
		extent = min(pmd_addr_end(old_addr, old_end) - old_addr,
			     PMD_SIZE - (new_addr & ~PMD_MASK));
		old_pmd = walk_to_pmd(mm, old_addr);
		if (!old_pmd || pmd_none(pmdp_get(old_pmd)))
			continue;
		new_pmd = pmd_alloc_walk(mm, new_addr);
		if (!new_pmd)
			return -ENOMEM;
		pmd = pmdp_get(old_pmd);
		if (pmd_leaf(pmd)) {
			if (extent == PMD_SIZE && IS_ALIGNED(old_addr | new_addr, PMD_SIZE) &&
			    pmd_none(pmdp_get(new_pmd))) {
				move_huge_pmd(mm, old_pmd, old_addr, new_pmd);
				continue;
			}
			__split_huge_pmd(vma, old_pmd, old_addr & PMD_MASK);
		} else if (extent == PMD_SIZE && pmd_none(pmdp_get(new_pmd))) {
			move_normal_pmd(mm, old_pmd, old_addr, new_pmd);
			continue;
		}
		err = move_ptes(vma, old_pmd, old_addr, old_addr + extent,
				new_pmd, new_addr);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Move one VMA-sized piece [old, old+len) of @vma to @new_addr.  With
 * @dontunmap (MREMAP_DONTUNMAP) the old VMA stays as it is, unsplit, its
 * range now empty; it gives up its anon_vma if all of it moved
 * (dontunmap_complete), so later faults there start a fresh one.
 */
static int move_vma(struct mm_struct *mm, struct vm_area_struct *vma,
		    unsigned long old, unsigned long len, unsigned long new_addr,
		    bool dontunmap)
{
	struct vm_area_struct *new_vma;
	struct mmu_gather tlb;
	int err;

	if (!dontunmap) {
		err = vma_modify_range(mm, old, old + len, &vma);
		if (err)
			return err;
	}
	new_vma = vm_area_alloc(mm);
	if (!new_vma)
		return -ENOMEM;
	*new_vma = *vma;
	new_vma->vm_start = new_addr;
	new_vma->vm_end = new_addr + len;
	/*
	 * copy_vma(): an anonymous VMA that never faulted takes the pgoff
	 * of its new place, as a new mapping there would, "to increase its
	 * chance of merging"; one with an anon_vma keeps its pages' offsets.
	 */
	if (vma->anon_vma)
		new_vma->vm_pgoff += (old - vma->vm_start) >> PAGE_SHIFT;
	else
		new_vma->vm_pgoff = new_addr >> PAGE_SHIFT;
	new_vma->anon_vma = anon_vma_get(vma->anon_vma);
	err = vma_insert(mm, new_vma);
	if (err) {
		vm_area_free(new_vma);
		return err;
	}
	err = move_page_tables(vma, old, new_addr, len);
	if (err)
		return err;
	if (dontunmap) {
		if (old == vma->vm_start && old + len == vma->vm_end) {
			anon_vma_put(vma->anon_vma);
			vma->anon_vma = NULL;
		}
		return 0;
	}
	/* Everything moved: the old VMA goes without zapping anything. */
	vma_remove(mm, vma);
	vm_area_free(vma);
	tlb_gather_mmu(&tlb, mm);
	free_pgd_range(&tlb, mm, old, old + len);
	tlb_finish_mmu(&tlb);
	return 0;
}

/*
 * check_mremap_params() of a move (MREMAP_MAYMOVE|MREMAP_FIXED, the same
 * length at both ends), in Linux's order; every failure is -EINVAL, so
 * the order shows only in what is never looked at: no VMA before all of
 * these passed.  The length is page-aligned first, so one that rounds up
 * past the top of the address space is 0 and refused.
 */
static int check_move_params(unsigned long old, unsigned long len,
			     unsigned long new_addr)
{
	if (old & ~PAGE_MASK || !len || len > TASK_SIZE)
		return -EINVAL;
	if (new_addr > TASK_SIZE - len || new_addr & ~PAGE_MASK)
		return -EINVAL;
	/* vrm_overlaps(), with the kernel's sums as they are. */
	if (old + len > new_addr && new_addr + len > old)
		return -EINVAL;
	return 0;
}

int do_mremap(struct mm_struct *mm, unsigned long old, unsigned long len,
	      unsigned long new_addr, bool dontunmap)
{
	unsigned long end, addr;
	int err;

	len = ALIGN(len, PAGE_SIZE);
	err = check_move_params(old, len, new_addr);
	if (err)
		return err;
	end = old + len;
	pthread_rwlock_wrlock(&mm->mmap_lock);
	/*
	 * remap_move(): no gap at the start of the range.  An @old past
	 * the address space, where old + len may wrap, has no VMA either.
	 */
	if (!vma_lookup(mm, old)) {
		err = -EFAULT;
		goto out;
	}
	/* MREMAP_FIXED: whatever was at the target goes first. */
	{
		struct vm_area_struct *v = find_vma(mm, new_addr);

		if (v && v->vm_start < new_addr + len) {
			err = do_munmap(mm, new_addr, len);
			if (err)
				goto out;
		}
	}
	for (addr = old; addr < end;) {
		struct vm_area_struct *vma = find_vma(mm, addr);
		unsigned long s, e;

		if (!vma || vma->vm_start >= end)
			break;
		s = max(addr, vma->vm_start);
		e = min(end, vma->vm_end);
		err = move_vma(mm, vma, s, e - s, new_addr + (s - old),
			       dontunmap);
		if (err)
			break;
		addr = e;
	}
out:
	pthread_rwlock_unlock(&mm->mmap_lock);
	return err;
}

/*
 * vma_expandable(): nothing maps [vm_end, vm_end + delta), and it lies in
 * the user address space (get_unmapped_area() with MAP_FIXED).  @limit
 * is where the caller's next mapping would begin (the scenario's room):
 * reaching past it fails here, as meeting that mapping would.
 */
static bool vma_expandable(struct vm_area_struct *vma, unsigned long delta,
			   unsigned long limit)
{
	unsigned long end = vma->vm_end + delta;
	struct vm_area_struct *next;

	if (end < vma->vm_end || end > limit)
		return false;
	next = find_vma(vma->vm_mm, vma->vm_end);
	if (next && next->vm_start < end)
		return false;
	return end <= TASK_SIZE;
}

/*
 * check_prep_vma() of a grow, in Linux's order, then expand_vma()
 * without MREMAP_MAYMOVE.  A private mapping cannot be duplicated
 * (@old_len 0: -EINVAL).  [addr, addr + old_len) must lie in one VMA:
 * after a partial mprotect or with a hole it does not, and Linux says
 * -EFAULT - before it looks for room, so a grow that would also run
 * into the next mapping is -EFAULT too.  The rest of what
 * check_prep_vma() checks (VM_DONTEXPAND, mlock and address-space
 * limits) has nothing to refuse in the model.  Then the grow needs the
 * range to reach the VMA's end, since only the end can grow in place,
 * and room after it (vrm_can_expand_in_place()), else -ENOMEM.
 */
static int expand_vma(struct mm_struct *mm, struct vm_area_struct *vma,
		      unsigned long addr, unsigned long old_len,
		      unsigned long new_len, unsigned long limit)
{
	unsigned long delta = new_len - old_len;

	if (!old_len)
		return -EINVAL;
	if (old_len > vma->vm_end - addr)
		return -EFAULT;
	if (vma->vm_end - addr != old_len || !vma_expandable(vma, delta, limit))
		return -ENOMEM;
	vma_merge_extend(mm, vma, delta);
	return 0;
}

/*
 * mremap(addr, old_len, new_len, 0): resize in place, growing no further
 * than @limit.  check_mremap_params() first (@addr aligned, @new_len not
 * 0 once page-aligned and within the address space: -EINVAL); then @addr
 * must be mapped (-EFAULT), whatever the lengths: a resize to the same
 * length then succeeds with nothing to do, as Linux's MREMAP_NO_RESIZE
 * does.  A shrink unmaps the tail as munmap does (shrink_vma()), across
 * VMAs and holes alike, splitting a huge PMD mapped across the new end;
 * the folios there stay whole, partly mapped.  A grow adds absent pages
 * (expand_vma()).
 */
int mremap_at(struct mm_struct *mm, unsigned long addr, unsigned long old_len,
	      unsigned long new_len, unsigned long limit)
{
	struct vm_area_struct *vma;
	int err = 0;

	/* do_mremap() aligns both lengths before check_mremap_params(). */
	old_len = ALIGN(old_len, PAGE_SIZE);
	new_len = ALIGN(new_len, PAGE_SIZE);
	if (addr & ~PAGE_MASK || !new_len || new_len > TASK_SIZE)
		return -EINVAL;
	pthread_rwlock_wrlock(&mm->mmap_lock);
	vma = vma_lookup(mm, addr);
	if (!vma)
		err = -EFAULT;
	else if (new_len < old_len)
		err = do_munmap(mm, addr + new_len, old_len - new_len);
	else if (new_len > old_len)
		err = expand_vma(mm, vma, addr, old_len, new_len, limit);
	pthread_rwlock_unlock(&mm->mmap_lock);
	return err;
}
