/*
 * madvise.c: MADV_DONTNEED (zap, keep the VMA), the VMA-flag advices
 * HUGEPAGE, NOHUGEPAGE, DONTFORK, DOFORK, WIPEONFORK, KEEPONFORK, and
 * POPULATE_READ/WRITE (mm/madvise.c).  Unmapped parts of the range are
 * skipped and reported as -ENOMEM at the end, as Linux does; populate
 * stops at the first one.
 */
#include "mm/pgtable.h"
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

int do_madvise(struct mm_struct *mm, unsigned long start, unsigned long len,
	       int advice)
{
	const bool dontneed = advice == MADV_DONTNEED;
	unsigned long end, addr;
	int err = 0, unmapped = 0;

	if (!madvise_behavior_valid(advice))
		return -EINVAL;
	if (start & ~PAGE_MASK)
		return -EINVAL;
	len = ALIGN(len, PAGE_SIZE);
	end = start + len;
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
		if (dontneed) {
			/* CONFIG_PT_RECLAIM: emptied PTE tables go too. */
			const struct zap_details details = { .reclaim_pt = true };
			struct mmu_gather tlb;

			tlb_gather_mmu(&tlb, mm);
			zap_page_range(&tlb, vma, addr, tmp, &details);
			tlb_finish_mmu(&tlb);
		} else {
			unsigned long newflags = advice_flags(vma->vm_flags, advice);

			if (newflags != vma->vm_flags &&
			    !vma_modify_flags(mm, vma, addr, tmp, newflags, &err))
				break;
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
