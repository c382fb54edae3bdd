/*
 * mprotect.c: changing protections (mm/mprotect.c) - VMA flags with
 * split/merge, then change_protection over the page tables.  Per PTE:
 * modify_prot_start (get-and-clear), pte_modify, the write upgrade of
 * can_change_pte_writable, modify_prot_commit, and a gathered flush where
 * pte_needs_flush says so.
 */
#include "mm/pgtable.h"
#include "mm/tlb.h"

/*
 * ptep_modify_prot_start over @nr entries: the entries are none until the
 * commit, so a concurrent hardware A/D update cannot be lost.
 */
static pte_t modify_prot_start_ptes(pte_t *ptep, unsigned int nr)
{
	return get_and_clear_ptes(ptep, nr);
}

static void modify_prot_commit_ptes(pte_t *ptep, pte_t pte, unsigned int nr)
{
	set_ptes(ptep, pte, nr);
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

		nr = 1;
		if (!pte_present(oldpte))
			continue;
		oldpte = modify_prot_start_ptes(ptep, nr);
		ptent = pte_modify(oldpte, newprot);
		if (try_writable && !pte_write(ptent) &&
		    can_change_pte_writable(vma, addr, ptent))
			ptent = pte_mkwrite(ptent, vma);
		modify_prot_commit_ptes(ptep, ptent, nr);
		if (pte_needs_flush(oldpte, ptent))
			tlb_flush_pte_range(tlb, addr, nr * PAGE_SIZE);
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
	int err;

	if (newflags == vma->vm_flags)
		return 0;
	vma = vma_modify_flags(mm, vma, start, end, newflags, &err);
	if (!vma)
		return err;
	/* vma_wants_manual_pte_write_upgrade(): private and now writable. */
	change_protection(tlb, vma, start, end, newflags & VM_WRITE);
	return 0;
}

/*
 * do_mprotect_pkey(): apply to each VMA of the range in order; a hole
 * stops with -ENOMEM, keeping what was already changed.
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
	if (end <= start || end > TASK_SIZE)
		return -ENOMEM;
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
