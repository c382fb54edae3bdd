// SPDX-License-Identifier: GPL-2.0-only
/*
 * fork.c: duplicating an address space (dup_mmap) and tearing one down
 * (exit_mmap).
 */
#include "mm/pgtable.h"
#include "mm/tlb.h"

/*
 * dup_mmap(): copy every VMA not marked VM_DONTCOPY, and its page tables
 * (copy_page_range write-protects COW mappings in the parent) unless it is
 * VM_WIPEONFORK.  The
 * parent's stale writable TLB entries are flushed once at the end.
 */
int dup_mm(struct mm_struct *oldmm, struct mm_struct **newmmp)
{
	struct mm_struct *mm = mm_alloc();
	int i, err = 0;

	if (!mm)
		return -ENOMEM;
	pthread_rwlock_wrlock(&oldmm->mmap_lock);
	for (i = 0; i < oldmm->nr_vmas; i++) {
		struct vm_area_struct *src = oldmm->vmas[i], *dst;

		if (src->vm_flags & VM_DONTCOPY)
			continue;
		dst = vm_area_alloc(mm);
		if (!dst) {
			err = -ENOMEM;
			break;
		}
		*dst = *src;
		dst->vm_mm = mm;
		/*
		 * VM_WIPEONFORK: the child gets the range empty, keeping the
		 * flag; no anon_vma until its first fault, no page copied
		 * (and so nothing write-protected in the parent).
		 */
		if (src->vm_flags & VM_WIPEONFORK) {
			dst->anon_vma = NULL;
		} else {
			dst->anon_vma = anon_vma_fork(src);
			if (src->anon_vma && !dst->anon_vma) {
				vm_area_free(dst);
				err = -ENOMEM;
				break;
			}
		}
		err = vma_insert(mm, dst);
		if (err) {
			vm_area_free(dst);
			break;
		}
		if (!(src->vm_flags & VM_WIPEONFORK))
			err = copy_page_range(dst, src);
		if (err)
			break;
	}
	flush_tlb_mm(oldmm);
	pthread_rwlock_unlock(&oldmm->mmap_lock);
	if (err) {
		exit_mmap(mm);
		mm_free(mm);
		return err;
	}
	*newmmp = mm;
	return 0;
}

/* Free every page table below the PGD (the VMAs are already zapped). */
static void free_all_tables(struct mmu_gather *tlb, struct mm_struct *mm)
{
	unsigned long i, j, k;

	for (i = 0; i < PTRS_PER_TABLE; i++) {
		pgd_t pgd = __pgd(entry_read_raw(mm->pgd + i));
		pud_t *pud;

		if (!pgd_val(pgd))
			continue;
		pud = table_of(pgd_val(pgd));
		for (j = 0; j < PTRS_PER_TABLE; j++) {
			pud_t pv = __pud(entry_read_raw(pud + j));
			pmd_t *pmd;

			if (!pud_val(pv))
				continue;
			pmd = table_of(pud_val(pv));
			for (k = 0; k < PTRS_PER_TABLE; k++) {
				pmd_t pm = pmdp_get(pmd + k);

				if (pmd_is_table(pm)) {
					set_pmd(pmd + k, __pmd(0));
					mm->nr_ptes--;
					tlb_remove_table(tlb, table_entry_pfn(pmd_val(pm)));
				}
			}
			entry_write(pud + j, 0);
			tlb_remove_table(tlb, table_entry_pfn(pud_val(pv)));
		}
		entry_write(mm->pgd + i, 0);
		tlb_remove_table(tlb, table_entry_pfn(pgd_val(pgd)));
	}
}

void exit_mmap(struct mm_struct *mm)
{
	struct mmu_gather tlb;
	int i;

	pthread_rwlock_wrlock(&mm->mmap_lock);
	tlb_gather_mmu(&tlb, mm);
	for (i = 0; i < mm->nr_vmas; i++)
		zap_page_range(&tlb, mm->vmas[i], mm->vmas[i]->vm_start,
			       mm->vmas[i]->vm_end, NULL);
	free_all_tables(&tlb, mm);
	tlb_remove_table(&tlb, mm->pgd_pfn);
	tlb_finish_mmu(&tlb);
	flush_tlb_mm(mm);
	for (i = 0; i < mm->nr_vmas; i++)
		vm_area_free(mm->vmas[i]);
	mm->nr_vmas = 0;
	mm->pgd = NULL;
	mm->pgd_pfn = 0;
	pthread_rwlock_unlock(&mm->mmap_lock);
}
