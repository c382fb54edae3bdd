// SPDX-License-Identifier: GPL-2.0-only
/*
 * mprotect.c: changing protections (mm/mprotect.c) - VMA flags with
 * split/merge, then change_protection over the page tables.  Per PTE:
 * modify_prot_start (get-and-clear), pte_modify, the write upgrade of
 * can_change_pte_writable, modify_prot_commit, and a gathered flush where
 * pte_needs_flush says so.
 */
#include "mm/pte_batch.h"
#include "mm/tlb.h"

/*
 * ptep_modify_prot_start over @nr entries: the entries are none until the
 * commit, so a concurrent hardware A/D update cannot be lost.
 */
static pte_t modify_prot_start_ptes(struct vm_area_struct *vma,
				    unsigned long addr, pte_t *ptep,
				    unsigned int nr)
{
	return get_and_clear_ptes(vma->vm_mm, addr, ptep, nr);
}

/* set_ptes(): on arm64 whole aligned blocks come back contiguous. */
static void modify_prot_commit_ptes(struct vm_area_struct *vma,
				    unsigned long addr, pte_t *ptep, pte_t pte,
				    unsigned int nr)
{
	set_ptes(vma->vm_mm, addr, ptep, pte, nr);
}

/*
 * Commit @nr entries starting @idx entries into the batch, write-enabled
 * if @set_write, and record the flush pte_needs_flush() asks for.
 */
static void prot_commit_flush_ptes(struct mmu_gather *tlb,
				   struct vm_area_struct *vma, unsigned long addr,
				   pte_t *ptep, pte_t oldpte, pte_t ptent,
				   unsigned int nr, unsigned int idx, bool set_write)
{
	addr += (unsigned long)idx << PAGE_SHIFT;
	ptep += idx;
	oldpte = pte_advance_pfn(oldpte, idx);
	ptent = pte_advance_pfn(ptent, idx);
	if (set_write)
		ptent = pte_mkwrite(ptent, vma);
	modify_prot_commit_ptes(vma, addr, ptep, ptent, nr);
	if (pte_needs_flush(oldpte, ptent))
		tlb_flush_pte_range(tlb, addr, (unsigned long)nr << PAGE_SHIFT);
}

/*
 * The PTE half of can_change_pte_writable(): what does not depend on the
 * page.  (VM_WRITE is known: only a writable VMA tries the upgrade.)
 */
static bool maybe_change_pte_writable(struct vm_area_struct *vma, pte_t pte)
{
	if (pte_protnone(pte))
		return false;
	if (vma_soft_dirty_enabled(vma) && !pte_soft_dirty(pte))
		return false;
	return !pte_uffd_wp(pte);
}

/*
 * commit_anon_folio_batch(): exclusivity is per page, so split the batch
 * into runs of equal PageAnonExclusive - starting at the batch's own first
 * page, never the folio's head (the 6.17-rc2 syzbot fix) - and make only
 * the exclusive runs writable.
 */
static void commit_anon_folio_batch(struct mmu_gather *tlb,
				    struct vm_area_struct *vma,
				    struct page *first_page, unsigned long addr,
				    pte_t *ptep, pte_t oldpte, pte_t ptent,
				    unsigned int nr)
{
	unsigned int idx = 0;

	while (nr) {
		bool excl = PageAnonExclusive(first_page + idx);
		unsigned int len = 1 + page_anon_exclusive_sub_batch(
					first_page + idx + 1, nr - 1, excl);

		prot_commit_flush_ptes(tlb, vma, addr, ptep, oldpte, ptent,
				       len, idx, excl);
		idx += len;
		nr -= len;
	}
}

/*
 * The write upgrade without a write fault: can_change_pte_writable() over
 * @nr pages (@nr == 1 on the per-PTE path).  What the fault handler would
 * do: only exclusive pages of an anon folio, and only if the PTE bits
 * allow it (no soft-dirty or uffd-wp tracking pending, not PROT_NONE).
 * The zero page has no @page and stays read-only.
 */
static void set_write_prot_commit_flush_ptes(struct mmu_gather *tlb,
					     struct vm_area_struct *vma,
					     struct page *page,
					     unsigned long addr, pte_t *ptep,
					     pte_t oldpte, pte_t ptent,
					     unsigned int nr)
{
	if (!page || !folio_test_anon(page_folio(page)) ||
	    !maybe_change_pte_writable(vma, ptent)) {
		prot_commit_flush_ptes(tlb, vma, addr, ptep, oldpte, ptent,
				       nr, 0, false);
		return;
	}
	commit_anon_folio_batch(tlb, vma, page, addr, ptep, oldpte, ptent, nr);
}

/*
 * mprotect_folio_pte_batch(): a batch is uniform in every bit but PFN,
 * young and dirty, so one pte_modify() serves it.  Order-0 pages never
 * pay for the scan.
 */
static unsigned int mprotect_folio_pte_batch(struct page *page, pte_t *ptep,
					     pte_t pte, unsigned int max_nr)
{
	struct folio *folio;

	if (!machine.variant.mprotect_batch || !page || max_nr == 1)
		return 1;
	/* Order-0: decided from the page's own flags, no folio lookup. */
	if (!PageCompound(page))
		return 1;
	folio = page_folio(page);
	return folio_pte_batch_flags(folio, NULL, ptep, &pte, max_nr,
				     FPB_RESPECT_SOFT_DIRTY | FPB_RESPECT_WRITE);
}

static unsigned long change_pte_range(struct mmu_gather *tlb,
				      struct vm_area_struct *vma, pmd_t *pmdp,
				      unsigned long addr, unsigned long end,
				      pgprot_t newprot, bool try_writable)
{
	spinlock_t *ptl;
	pte_t *ptep = pte_offset_map_lock(vma->vm_mm, pmdp, addr, &ptl);
	pte_t *start = ptep;
	unsigned long pages = 0;
	unsigned int nr;

	if (!ptep)
		return 0;
	do {
		pte_t oldpte = ptep_get(ptep), ptent;
		struct page *page;

		nr = 1;
		if (!pte_present(oldpte))
			continue;
		count_stat(pte_batch);
		page = vm_normal_page(vma, addr, oldpte);
		nr = mprotect_folio_pte_batch(page, ptep, oldpte,
					      (unsigned int)((end - addr) >> PAGE_SHIFT));
		count_stat_n(change_ptes, nr);
		oldpte = modify_prot_start_ptes(vma, addr, ptep, nr);
		ptent = pte_modify(oldpte, newprot);
		if (try_writable && !pte_write(ptent))
			set_write_prot_commit_flush_ptes(tlb, vma, page, addr,
							 ptep, oldpte, ptent, nr);
		else
			prot_commit_flush_ptes(tlb, vma, addr, ptep, oldpte,
					       ptent, nr, 0, false);
		pages += nr;
	} while (ptep += nr, addr += nr * PAGE_SIZE, addr != end);
	pte_unmap_unlock(start, ptl);
	return pages;
}

static void change_protection(struct mmu_gather *tlb,
			      struct vm_area_struct *vma, unsigned long start,
			      unsigned long end, bool try_writable)
{
	pgprot_t newprot = vma->vm_page_prot;
	unsigned long addr, next;

	for (addr = start; addr < end; addr = next) {
		pmd_t *pmdp = walk_to_pmd(vma->vm_mm, addr);
		pmd_t pmd;

		next = pmd_addr_end(addr, end);
		if (!pmdp)
			continue;
		pmd = pmdp_get(pmdp);
		if (pmd_none(pmd))
			continue;
		if (pmd_leaf(pmd)) {
			if (IS_ALIGNED(addr, PMD_SIZE) && next - addr == PMD_SIZE &&
			    change_huge_pmd(tlb, vma, pmdp, addr, newprot,
					    try_writable))
				continue;
			__split_huge_pmd(vma, pmdp, addr & PMD_MASK);
		}
		change_pte_range(tlb, vma, pmdp, addr, next, newprot, try_writable);
	}
}

static unsigned long prot_to_vm_flags(unsigned long prot)
{
	unsigned long f = 0;

	if (prot & PB_PROT_READ)
		f |= VM_READ;
	if (prot & PB_PROT_WRITE)
		f |= VM_WRITE | VM_READ;	/* x86: write implies read */
	return f;
}

static int mprotect_fixup(struct mmu_gather *tlb, struct mm_struct *mm,
			  struct vm_area_struct *vma, unsigned long start,
			  unsigned long end, unsigned long newflags)
{
	unsigned long oldflags = vma->vm_flags;
	int err;

	/*
	 * Becoming writable commits the memory (VM_ACCOUNT); becoming
	 * read-only gives it back only while nothing was ever faulted in
	 * (no anon_vma).  The flag takes part in VMA merging: a range made
	 * read-only after a write does not merge with a neighbour that was
	 * never writable.
	 */
	if (newflags & VM_WRITE) {
		if (!(oldflags & (VM_ACCOUNT | VM_WRITE | VM_SHARED)))
			newflags |= VM_ACCOUNT;
	} else if ((oldflags & VM_ACCOUNT) && !vma->anon_vma) {
		newflags &= ~VM_ACCOUNT;
	}
	if (newflags == oldflags)
		return 0;
	vma = vma_modify_flags(mm, vma, start, end, newflags, &err);
	if (!vma)
		return err;
	/* vma_wants_manual_pte_write_upgrade(): private and now writable. */
	change_protection(tlb, vma, start, end, newflags & VM_WRITE);
	return 0;
}

/*
 * arch_validate_prot(): x86-64's (the generic one) takes PROT_READ,
 * PROT_WRITE, PROT_EXEC and PROT_SEM, arm64's PROT_BTI and PROT_MTE
 * too.  The model has none of the others' memory: a bit it does not
 * know is -EINVAL, as Linux says for one it does not know.
 */
static bool arch_validate_prot(unsigned long prot)
{
	return !(prot & ~(unsigned long)(PB_PROT_READ | PB_PROT_WRITE));
}

/*
 * do_mprotect_pkey(): the checks in Linux's order - an unaligned @start
 * (-EINVAL) even with a zero length, which then does nothing; a range
 * that wraps (-ENOMEM); an unknown protection bit (-EINVAL) - then each
 * VMA of the range in order; a hole stops with -ENOMEM, keeping what was
 * already changed.  Nothing is mapped past TASK_SIZE, so a range that
 * runs past it changes what lies below and stops there with -ENOMEM.
 */
int do_mprotect(struct mm_struct *mm, unsigned long start, unsigned long len,
		unsigned long prot)
{
	unsigned long end, nstart, vm_prot = prot_to_vm_flags(prot);
	struct vm_area_struct *vma;
	struct mmu_gather tlb;
	int err = 0;

	if (start & ~PAGE_MASK)
		return -EINVAL;
	if (!len)
		return 0;
	len = ALIGN(len, PAGE_SIZE);
	end = start + len;
	if (end <= start)
		return -ENOMEM;
	if (!arch_validate_prot(prot))
		return -EINVAL;
	pthread_rwlock_wrlock(&mm->mmap_lock);
	vma = find_vma(mm, start);
	if (!vma || vma->vm_start > start) {
		pthread_rwlock_unlock(&mm->mmap_lock);
		return -ENOMEM;
	}
	tlb_gather_mmu(&tlb, mm);
	for (nstart = start; nstart < end;) {
		unsigned long tmp, newflags;

		vma = find_vma(mm, nstart);
		if (!vma || vma->vm_start > nstart) {
			err = -ENOMEM;
			break;
		}
		tmp = min(vma->vm_end, end);
		newflags = (vma->vm_flags & ~(VM_READ | VM_WRITE | VM_EXEC)) | vm_prot;
		err = mprotect_fixup(&tlb, mm, vma, nstart, tmp, newflags);
		if (err)
			break;
		nstart = tmp;
	}
	tlb_finish_mmu(&tlb);
	vma_try_merge_around(mm, start, end);
	pthread_rwlock_unlock(&mm->mmap_lock);
	return err;
}
