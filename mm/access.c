// SPDX-License-Identifier: GPL-2.0-only
/*
 * access.c: the simulated CPU - loads and stores through a TLB, a
 * hardware page walk that sets Accessed/Dirty as the architecture's MMU
 * does (x86 A/D; arm64 FEAT_HAFDBS: AF, and DBM clearing RDONLY), and the
 * page fault (do_user_addr_fault) when the walk finds no usable entry.
 */
#include <urcu.h>

#include "mm/pgtable.h"
#include "mm/tlb.h"

/*
 * The hardware walk: lockless reads of every level; a usable leaf gets
 * its access (and, for a write, dirty) state set with one atomic update,
 * like the MMU (arch_hw_update_access()).  An arm64 contiguous block is
 * not special here: the MMU updates the one entry it used, which is why
 * ptep_get() gathers the block.  Returns false when the access must
 * fault.  The walk is the MMU's work, not the kernel's, so it is not in
 * the cost counters.
 */
static bool hw_walk(struct mm_struct *mm, unsigned long addr, bool write,
		    unsigned long *pfn, bool *writable, bool *dirty)
{
	pmd_t *pmdp = walk_to_pmd(mm, addr);
	void *entryp;
	uint64_t old, new;
	pte_t pte;
	bool leaf;

	if (!pmdp)
		return false;
	for (;;) {
		pmd_t pmd = __pmd(entry_read_raw(pmdp));

		leaf = pmd_leaf(pmd);
		if (pmd_none(pmd))
			return false;
		if (leaf) {
			entryp = pmdp;
			pte = pmd_pte(pmd);
			old = pmd_val(pmd);
		} else {
			entryp = pte_offset(pmd, addr);
			pte = __pte(entry_read_raw(entryp));
			old = pte_val(pte);
		}
		if (!pte_access_permitted(pte, write))
			return false;
		new = arch_hw_update_access(old, write);
		/* The MMU's locked A/D update; not kernel work, not counted. */
		if (new == old ||
		    atomic_compare_exchange_strong(entry_ptr(entryp), &old, new))
			break;
	}
	*pfn = pte_pfn(pte);
	if (leaf)
		*pfn += (addr & ~PMD_MASK) >> PAGE_SHIFT;
	/*
	 * What the TLB caches: whether a store may use the translation, and
	 * whether the entry is already dirty - x86 D, arm64 RDONLY clear - so
	 * that a store through a clean translation walks again to dirty it.
	 */
	*writable = pte_access_permitted(pte, true);
	*dirty = pte_hw_dirty(leaf ? pmd_pte(__pmd(new)) : __pte(new));
	return true;
}

/* do_user_addr_fault(): VMA and permission checks, then handle_mm_fault. */
static int do_user_addr_fault(struct mm_struct *mm, unsigned long addr,
			      bool write)
{
	struct vm_area_struct *vma;
	vm_fault_t ret;
	int err = 0;

	pthread_rwlock_rdlock(&mm->mmap_lock);
	vma = vma_lookup(mm, addr);
	if (!vma)
		err = -EFAULT;
	else if (write ? !(vma->vm_flags & VM_WRITE) :
			 !(vma->vm_flags & (VM_READ | VM_WRITE)))
		err = -EFAULT;	/* access_error(): SIGSEGV */
	if (!err) {
		ret = handle_mm_fault(vma, addr, FAULT_FLAG_USER |
				      (write ? FAULT_FLAG_WRITE : 0));
		if (ret & VM_FAULT_OOM)
			err = -ENOMEM;
		else if (ret & VM_FAULT_ERROR)
			err = -EFAULT;
	}
	pthread_rwlock_unlock(&mm->mmap_lock);
	return err;
}

/*
 * One byte load or store by CPU @cpu in @mm.  The CPU lock is held while
 * a translation is used, so a flush (the IPI) waits for the access.
 */
int access_user(struct mm_struct *mm, int cpu, unsigned long addr, bool write,
		uint8_t *val)
{
	struct cpu_tlb *t = &cpu_tlbs[cpu];
	unsigned long vpn = addr >> PAGE_SHIFT;
	int err;

	count_stat(user_access);
	for (;;) {
		struct tlb_entry *e;
		unsigned long pfn;
		bool writable, dirty, ok;
		spin_lock(&t->lock);
		e = tlb_slot(t, vpn);
		if (e->mm == mm && e->vpn == vpn &&
		    (!write || (e->writable && e->dirty))) {
			pfn = e->pfn;
			goto access;
		}
		rcu_read_lock();
		ok = hw_walk(mm, addr, write, &pfn, &writable, &dirty);
		rcu_read_unlock();
		if (ok) {
			*e = (struct tlb_entry){ mm, vpn, pfn, writable, dirty };
			t->used = true;
			goto access;
		}
		/*
		 * x86 drops the faulting translation with the fault.  arm64
		 * does not: the kernel invalidates what it relaxes
		 * (ptep_set_access_flags), and a translation that denied this
		 * access is walked again above, never used for it.
		 */
#ifndef CONFIG_ARM64
		if (e->mm == mm && e->vpn == vpn)
			e->mm = NULL;
#endif
		spin_unlock(&t->lock);
		/* The trap: the access enters the kernel's fault handler. */
		kernel_trap();
		err = do_user_addr_fault(mm, addr, write);
		if (err)
			return err;
		continue;
access:
		if (write)
			page_store_byte(pfn_to_page(pfn), addr & ~PAGE_MASK,
					*val);
		else
			*val = page_load_byte(pfn_to_page(pfn),
					      addr & ~PAGE_MASK);
		spin_unlock(&t->lock);
		return 0;
	}
}
