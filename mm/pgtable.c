// SPDX-License-Identifier: GPL-2.0-only
/*
 * pgtable.c: allocating, walking and locking page tables.
 *
 * Upper levels are allocated under mm->page_table_lock, PTE tables are
 * populated under the PMD lock; each PTE table carries its own PTL in its
 * struct page.  Tables are only ever freed through an mmu_gather (tlb.c),
 * after an RCU grace period.
 */
#include "mm/pgtable.h"

unsigned long pgd_alloc(void)
{
	return alloc_table_frame();
}

/* The PMD entry for @addr, or NULL if an upper level is missing. */
pmd_t *walk_to_pmd(struct mm_struct *mm, unsigned long addr)
{
	pgd_t pgd = __pgd(entry_read_raw(pgd_offset(mm, addr)));
	pud_t *pudp;
	pud_t pud;

	if (!pgd_val(pgd))
		return NULL;
	pudp = pud_offset(pgd, addr);
	pud = __pud(entry_read_raw(pudp));
	if (!pud_val(pud))
		return NULL;
	return pmd_offset(pud, addr);
}

/*
 * lookup_addr(): what maps @addr in @mm - nothing, an empty PMD, a PMD
 * leaf or a PTE table's entry - for the model's own bookkeeping, never
 * for the kernel's walks: snapshots (pb_observe), the checker's audit of
 * the TLBs, explore's state digest and the tests.  It takes no lock and
 * its reads are entry_read_raw(): a look from outside the machine costs
 * the model nothing, so no counter moves (and on arm64 a contiguous
 * block's access/dirty bits are not gathered: none of these asks them).
 */
void lookup_addr(struct mm_struct *mm, unsigned long addr,
		 struct addr_lookup *found)
{
	pmd_t *pmdp = walk_to_pmd(mm, addr);
	pmd_t pmd;

	found->entry = __pte(0);
	found->pfn = 0;
	if (!pmdp) {
		found->level = ADDR_NO_PMD;
		return;
	}
	pmd = __pmd(entry_read_raw(pmdp));
	if (pmd_none(pmd)) {
		found->level = ADDR_PMD_NONE;
	} else if (pmd_leaf(pmd)) {
		found->level = ADDR_PMD_LEAF;
		found->entry = pmd_pte(pmd);
		found->pfn = pmd_pfn(pmd) + ((addr & ~PMD_MASK) >> PAGE_SHIFT);
	} else {
		found->level = ADDR_PTE;
		found->entry = __pte(entry_read_raw(pte_offset(pmd, addr)));
		found->pfn = pte_pfn(found->entry);
	}
}

/* Populate one upper-level entry with a fresh table if it is empty. */
static int populate_entry(struct mm_struct *mm, void *entryp)
{
	unsigned long pfn = alloc_table_frame();

	if (!pfn)
		return -ENOMEM;
	spin_lock(&mm->page_table_lock);
	if (!entry_read_raw(entryp)) {
		entry_write(entryp, mk_table_entry(pfn));
		pfn = 0;
	}
	spin_unlock(&mm->page_table_lock);
	if (pfn)
		free_table_frame(pfn);
	return 0;
}

/* The PMD entry for @addr, allocating upper tables; NULL on -ENOMEM. */
pmd_t *pmd_alloc_walk(struct mm_struct *mm, unsigned long addr)
{
	pgd_t *pgdp = pgd_offset(mm, addr);
	pud_t *pudp;

	if (!entry_read_raw(pgdp) && populate_entry(mm, pgdp))
		return NULL;
	pudp = pud_offset(__pgd(entry_read_raw(pgdp)), addr);
	if (!entry_read_raw(pudp) && populate_entry(mm, pudp))
		return NULL;
	return pmd_offset(__pud(entry_read_raw(pudp)), addr);
}

int __pte_alloc(struct mm_struct *mm, pmd_t *pmdp)
{
	unsigned long pfn = alloc_table_frame();
	spinlock_t *ptl;

	if (!pfn)
		return -ENOMEM;
	ptl = pmd_lock(mm, pmdp);
	if (pmd_none(pmdp_get(pmdp))) {
		/* Release store: the zeroed table is visible before the entry. */
		set_pmd(pmdp, __pmd(mk_table_entry(pfn)));
		mm->nr_ptes++;
		pfn = 0;
	}
	spin_unlock(ptl);
	if (pfn)
		free_table_frame(pfn);
	return 0;
}

/*
 * Map and lock the PTE table under @pmdp.  NULL if there is none (or it
 * became a huge PMD): the caller must look again at the PMD level.
 */
pte_t *pte_offset_map_lock(struct mm_struct *mm, pmd_t *pmdp,
			   unsigned long addr, spinlock_t **ptlp)
{
	pmd_t pmdval;
	spinlock_t *ptl;

	(void)mm;
	for (;;) {
		pmdval = pmdp_get_lockless(pmdp);
		if (!pmd_is_table(pmdval))
			return NULL;
		ptl = &pmd_table_page(pmdval)->pt.ptl;
		spin_lock(ptl);
		/* The table may have been freed or replaced meanwhile. */
		if (likely(pmd_same(pmdval, pmdp_get(pmdp)))) {
			*ptlp = ptl;
			return pte_offset(pmdval, addr);
		}
		spin_unlock(ptl);
	}
}

/* Lockless map: the caller holds rcu_read_lock() and re-checks. */
pte_t *pte_offset_map_nolock(struct mm_struct *mm, pmd_t *pmdp,
			     unsigned long addr)
{
	pmd_t pmdval = pmdp_get_lockless(pmdp);

	(void)mm;
	return pmd_is_table(pmdval) ? pte_offset(pmdval, addr) : NULL;
}

void pte_unmap_unlock(pte_t *ptep, spinlock_t *ptl)
{
	(void)ptep;
	spin_unlock(ptl);
}

/*
 * A huge PMD keeps a preallocated PTE table deposited beside it, so that
 * splitting it never needs to allocate.  Called under the PMD lock.
 */
void pgtable_trans_huge_deposit(struct mm_struct *mm, pmd_t *pmdp,
				unsigned long table_pfn)
{
	struct page *pmd_table = table_page_of(pmdp);

	(void)mm;
	pfn_to_page(table_pfn)->pt.pt_next = pmd_table->pt.pmd_huge_pte;
	pmd_table->pt.pmd_huge_pte = table_pfn;
}

unsigned long pgtable_trans_huge_withdraw(struct mm_struct *mm, pmd_t *pmdp)
{
	struct page *pmd_table = table_page_of(pmdp);
	unsigned long pfn = pmd_table->pt.pmd_huge_pte;

	(void)mm;
	if (pfn) {
		pmd_table->pt.pmd_huge_pte = pfn_to_page(pfn)->pt.pt_next;
		pfn_to_page(pfn)->pt.pt_next = 0;
		hook_table_withdrawn(pmdp, pfn);
	}
	return pfn;
}
