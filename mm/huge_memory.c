/*
 * huge_memory.c: THP policy and PMD-mapped THP (mm/huge_memory.c) -
 * order selection, the PMD fault and huge zero page, PMD write-protect
 * faults, PMD split, and the PMD cases of zap, fork and mprotect.
 */
#include "mm/pgtable.h"
#include "mm/tlb.h"

static inline pmd_t pmd_mkyoung(pmd_t pmd) { return pte_pmd(pte_mkyoung(pmd_pte(pmd))); }
static inline pmd_t pmd_mkdirty(pmd_t pmd) { return pte_pmd(pte_mkdirty(pmd_pte(pmd))); }
static inline pmd_t pmd_mkold(pmd_t pmd) { return pte_pmd(pte_mkold(pmd_pte(pmd))); }
static inline pmd_t pmd_wrprotect(pmd_t pmd) { return pte_pmd(pte_wrprotect(pmd_pte(pmd))); }
static inline bool pmd_young(pmd_t pmd) { return pte_young(pmd_pte(pmd)); }
static inline bool pmd_dirty(pmd_t pmd) { return pte_dirty(pmd_pte(pmd)); }
static inline pmd_t maybe_pmd_mkwrite(pmd_t pmd, struct vm_area_struct *vma)
{
	return pte_pmd(maybe_mkwrite(pmd_pte(pmd), vma));
}
static inline bool is_huge_zero_pmd(pmd_t pmd)
{
	return pmd_leaf(pmd) && is_huge_zero_pfn(pmd_pfn(pmd));
}

/*
 * The orders THP may use in @vma: a size's own policy, or with "inherit"
 * the global one (the PMD size's line).  "madvise" needs VM_HUGEPAGE;
 * VM_NOHUGEPAGE disables everything.  Anon orders are 2..PMD order.
 */
unsigned long thp_vma_allowable_orders(struct vm_area_struct *vma)
{
	enum pb_thp_policy global = machine.thp_policy[HPAGE_PMD_ORDER];
	unsigned long orders = 0;
	unsigned int order;

	if (vma->vm_flags & VM_NOHUGEPAGE)
		return 0;
	/*
	 * No large folios in x86 shadow-stack VMAs (the GUP-fast batching
	 * review): with dirty ignored, a shadow-stack PTE and a read-only one
	 * look alike to folio_pte_batch_flags(), so a run starting at one
	 * could skip the unshare check of the other.
	 */
	if (vma->vm_flags & VM_SHADOW_STACK)
		return 0;
	for (order = 2; order <= HPAGE_PMD_ORDER; order++) {
		enum pb_thp_policy p = machine.thp_policy[order];

		if (p == PB_THP_INHERIT)
			p = global;
		if (p == PB_THP_ALWAYS ||
		    (p == PB_THP_MADVISE && (vma->vm_flags & VM_HUGEPAGE)))
			orders |= 1UL << order;
	}
	return orders;
}

/* Does the naturally aligned block of @order around @addr fit the VMA? */
bool thp_vma_suitable_order(struct vm_area_struct *vma, unsigned long addr,
			    unsigned int order)
{
	unsigned long size = PAGE_SIZE << order;
	unsigned long haddr = ALIGN_DOWN(addr, size);

	return haddr >= vma->vm_start && haddr + size <= vma->vm_end;
}

static pmd_t mk_huge_pmd(struct page *page, pgprot_t prot)
{
	return pte_pmd(mk_pte(page, prot));
}

/*
 * A fault on an empty PMD where PMD THP is allowed: a read maps the huge
 * zero page (use_zero_page=1), a write a new, zeroed PMD-size folio.
 * Allocation failure falls back to PTEs.
 */
vm_fault_t do_huge_pmd_anonymous_page(struct vm_area_struct *vma,
				      unsigned long addr, pmd_t *pmdp,
				      unsigned int flags)
{
	struct mm_struct *mm = vma->vm_mm;
	unsigned long pgtable;
	struct folio *folio = NULL;
	spinlock_t *ptl;
	pmd_t entry;

	if (anon_vma_prepare(vma))
		return VM_FAULT_OOM;
	pgtable = alloc_table_frame();
	if (!pgtable)
		return VM_FAULT_OOM;
	if (flags & FAULT_FLAG_WRITE) {
		folio = folio_alloc(HPAGE_PMD_ORDER);
		if (!folio) {
			free_table_frame(pgtable);
			return VM_FAULT_FALLBACK;
		}
		clear_folio(folio);
		entry = mk_huge_pmd(folio_page(folio, 0), vma->vm_page_prot);
		entry = maybe_pmd_mkwrite(pmd_mkdirty(entry), vma);
	} else {
		entry = pte_pmd(pte_mkspecial(pfn_pte(machine.huge_zero_pfn,
						      vma->vm_page_prot)));
	}
	ptl = pmd_lock(mm, pmdp);
	if (!pmd_none(pmdp_get(pmdp))) {
		spin_unlock(ptl);
		free_table_frame(pgtable);
		if (folio)
			folio_put(folio);
		return 0;
	}
	if (folio)
		folio_add_new_anon_rmap(folio, vma, true);
	pgtable_trans_huge_deposit(mm, pmdp, pgtable);
	mm->nr_ptes++;
	set_pmd(pmdp, entry);
	spin_unlock(ptl);
	count_stat(fault_huge_anon);
	return 0;
}

void huge_pmd_set_accessed(struct vm_area_struct *vma, pmd_t *pmdp,
			   pmd_t orig_pmd, bool write)
{
	spinlock_t *ptl = pmd_lock(vma->vm_mm, pmdp);
	pmd_t entry = pmd_mkyoung(orig_pmd);

	if (write)
		entry = pmd_mkdirty(entry);
	if (pmd_same(pmdp_get(pmdp), orig_pmd) && !pmd_same(entry, orig_pmd))
		set_pmd(pmdp, entry);
	else
		count_stat(fault_spurious);
	spin_unlock(ptl);
}

/*
 * Split a PMD mapping into 512 PTEs of the same folio (or of the zero
 * page).  The folio stays whole: each PTE mapping takes its own reference
 * and the head's PageAnonExclusive spreads to every subpage.
 * Called with the PMD lock held.
 */
static void __split_huge_pmd_locked(struct vm_area_struct *vma, pmd_t *pmdp,
				    unsigned long haddr)
{
	struct mm_struct *mm = vma->vm_mm;
	pmd_t old = pmdp_get_and_clear(pmdp);
	unsigned long pgtable, i;
	pte_t *ptep, entry;
	struct folio *folio;
	struct page *page;
	bool exclusive;

	flush_tlb_range(mm, haddr, haddr + PMD_SIZE);
	pgtable = pgtable_trans_huge_withdraw(mm, pmdp);
	ptep = pfn_address(pgtable);
	count_stat(pmd_split);

	if (is_huge_zero_pmd(old)) {
		entry = pte_mkspecial(pfn_pte(machine.zero_pfn, vma->vm_page_prot));
		for (i = 0; i < HPAGE_PMD_NR; i++)
			set_pte_at(mm, haddr + i * PAGE_SIZE, ptep + i, entry);
		set_pmd(pmdp, __pmd(mk_table_entry(pgtable)));
		return;
	}
	page = pfn_to_page(pmd_pfn(old));
	folio = page_folio(page);
	exclusive = PageAnonExclusive(page);
	folio_ref_add(folio, HPAGE_PMD_NR - 1);
	folio_add_anon_rmap_ptes(folio, page, HPAGE_PMD_NR, vma,
				 exclusive ? RMAP_EXCLUSIVE : RMAP_NONE);
	entry = mk_pte(page, vma->vm_page_prot);
	if (pmd_write(old))
		entry = pte_mkwrite(entry, vma);
	if (!pmd_young(old))
		entry = pte_mkold(entry);
	if (pmd_dirty(old))
		entry = pte_mkdirty(entry);
	if (pte_soft_dirty(pmd_pte(old)))
		entry = pte_mksoft_dirty(entry);
	set_ptes(mm, haddr, ptep, entry, HPAGE_PMD_NR);
	set_pmd(pmdp, __pmd(mk_table_entry(pgtable)));
	folio_remove_rmap_pmd(folio, vma);
}

void __split_huge_pmd(struct vm_area_struct *vma, pmd_t *pmdp,
		      unsigned long haddr)
{
	spinlock_t *ptl = pmd_lock(vma->vm_mm, pmdp);

	if (pmd_leaf(pmdp_get(pmdp)))
		__split_huge_pmd_locked(vma, pmdp, haddr & PMD_MASK);
	spin_unlock(ptl);
}

/* Split every PMD mapping that meets [start, end) of @vma. */
int split_huge_pmd_range(struct vm_area_struct *vma, unsigned long start,
			 unsigned long end)
{
	unsigned long addr;

	for (addr = start & PMD_MASK; addr < end; addr += PMD_SIZE) {
		pmd_t *pmdp = walk_to_pmd(vma->vm_mm, addr);

		if (pmdp && pmd_leaf(pmdp_get(pmdp)))
			__split_huge_pmd(vma, pmdp, addr);
	}
	return 0;
}

/*
 * do_huge_pmd_wp_page(): write/unshare fault on a read-only huge PMD.
 * Reuse when the head is exclusive or ours is the only reference;
 * replace the huge zero page with a new THP; otherwise split and let the
 * PTE level copy the one faulting page.
 */
vm_fault_t do_huge_pmd_wp_page(struct vm_area_struct *vma, unsigned long addr,
			       pmd_t *pmdp, pmd_t orig_pmd, unsigned int flags)
{
	const bool unshare = flags & FAULT_FLAG_UNSHARE;
	struct mm_struct *mm = vma->vm_mm;
	unsigned long haddr = addr & PMD_MASK;
	struct folio *folio;
	struct page *page;
	spinlock_t *ptl;
	pmd_t entry;

	count_stat(fault_huge_wp);
	if (is_huge_zero_pmd(orig_pmd)) {
		/*
		 * do_huge_zero_wp_pmd(): a fresh THP instead of the zero page,
		 * for an unshare fault too (since 6.13), and mapped writable
		 * as for a write: 6.18's map_anon_folio_pmd() does not look at
		 * FAULT_FLAG_UNSHARE.  Split only if no THP can be had.
		 */
		folio = folio_alloc(HPAGE_PMD_ORDER);
		if (!folio)
			goto fallback;
		clear_folio(folio);
		ptl = pmd_lock(mm, pmdp);
		if (!pmd_same(pmdp_get(pmdp), orig_pmd)) {
			spin_unlock(ptl);
			folio_put(folio);
			return 0;
		}
		pmdp_get_and_clear(pmdp);
		flush_tlb_range(mm, haddr, haddr + PMD_SIZE);
		entry = mk_huge_pmd(folio_page(folio, 0), vma->vm_page_prot);
		entry = maybe_pmd_mkwrite(pmd_mkdirty(entry), vma);
		folio_add_new_anon_rmap(folio, vma, true);
		set_pmd(pmdp, entry);
		spin_unlock(ptl);
		count_stat(fault_huge_anon);
		return 0;
	}

	ptl = pmd_lock(mm, pmdp);
	if (!pmd_same(pmdp_get(pmdp), orig_pmd)) {
		spin_unlock(ptl);
		return 0;
	}
	page = pfn_to_page(pmd_pfn(orig_pmd));
	folio = page_folio(page);
	if (PageAnonExclusive(page))
		goto reuse;
	/* Only the PMD mapping holds a reference: nobody else can see it. */
	if (folio_ref_count(folio) == 1) {
		atomic_store_explicit(&folio->mapping, vma->anon_vma,
				      memory_order_relaxed);
		SetPageAnonExclusive(page);
		goto reuse;
	}
	spin_unlock(ptl);
fallback:
	__split_huge_pmd(vma, pmdp, haddr);
	return VM_FAULT_FALLBACK;
reuse:
	if (unshare) {
		spin_unlock(ptl);
		return 0;
	}
	entry = maybe_pmd_mkwrite(pmd_mkdirty(pmd_mkyoung(orig_pmd)), vma);
	if (!pmd_same(entry, orig_pmd))
		set_pmd(pmdp, entry);
	spin_unlock(ptl);
	return 0;
}

void zap_huge_pmd(struct mmu_gather *tlb, struct vm_area_struct *vma,
		  pmd_t *pmdp, unsigned long addr)
{
	struct mm_struct *mm = vma->vm_mm;
	spinlock_t *ptl = pmd_lock(mm, pmdp);
	pmd_t orig = pmdp_get_and_clear(pmdp);
	unsigned long pgtable;

	if (!pmd_leaf(orig)) {
		/* Raced with a split: put it back for the PTE walk. */
		set_pmd(pmdp, orig);
		spin_unlock(ptl);
		return;
	}
	tlb_flush_pte_range(tlb, addr & PMD_MASK, PMD_SIZE);
	pgtable = pgtable_trans_huge_withdraw(mm, pmdp);
	mm->nr_ptes--;
	if (!is_huge_zero_pmd(orig)) {
		struct folio *folio = page_folio(pfn_to_page(pmd_pfn(orig)));

		if (pmd_dirty(orig))
			folio_set_flag(folio, PG_dirty);
		folio_remove_rmap_pmd(folio, vma);
		tlb_remove_folio_refs(tlb, folio, 1);
	}
	spin_unlock(ptl);
	if (pgtable)
		tlb_remove_table(tlb, pgtable);
}

/*
 * fork of a PMD mapping: share it write-protected, or, when the folio may
 * be pinned and is exclusive, split it in the parent and return -EAGAIN
 * so the PTE level copies the exclusive pages.
 */
int copy_huge_pmd(struct vm_area_struct *dst_vma, struct vm_area_struct *src_vma,
		  pmd_t *dst_pmdp, pmd_t *src_pmdp, unsigned long addr)
{
	struct mm_struct *dst_mm = dst_vma->vm_mm, *src_mm = src_vma->vm_mm;
	unsigned long pgtable = alloc_table_frame();
	struct folio *folio;
	pmd_t pmd;

	if (!pgtable)
		return -ENOMEM;
	spin_lock(&dst_mm->page_table_lock);
	spin_lock(&src_mm->page_table_lock);
	pmd = pmdp_get(src_pmdp);
	if (!pmd_leaf(pmd)) {
		spin_unlock(&src_mm->page_table_lock);
		spin_unlock(&dst_mm->page_table_lock);
		free_table_frame(pgtable);
		return -EAGAIN;
	}
	if (!is_huge_zero_pmd(pmd)) {
		folio = page_folio(pfn_to_page(pmd_pfn(pmd)));
		folio_get(folio);
		if (folio_try_dup_anon_rmap_pmd(folio, dst_vma, src_vma)) {
			folio_put(folio);
			spin_unlock(&src_mm->page_table_lock);
			spin_unlock(&dst_mm->page_table_lock);
			free_table_frame(pgtable);
			__split_huge_pmd(src_vma, src_pmdp, addr & PMD_MASK);
			return -EAGAIN;
		}
	}
	pgtable_trans_huge_deposit(dst_mm, dst_pmdp, pgtable);
	dst_mm->nr_ptes++;
	pmdp_set_wrprotect(src_pmdp);
	pmd = pmd_mkold(pmd_wrprotect(pmd));
	set_pmd(dst_pmdp, pmd);
	spin_unlock(&src_mm->page_table_lock);
	spin_unlock(&dst_mm->page_table_lock);
	return 0;
}

static bool can_change_pmd_writable(struct vm_area_struct *vma, pmd_t pmd)
{
	struct page *page;

	if (!(vma->vm_flags & VM_WRITE) || pmd_protnone(pmd))
		return false;
	if (vma_soft_dirty_enabled(vma) && !pte_soft_dirty(pmd_pte(pmd)))
		return false;
	if (pmd_special(pmd))
		return false;
	page = pfn_to_page(pmd_pfn(pmd));
	return folio_test_anon(page_folio(page)) && PageAnonExclusive(page);
}

/* mprotect of a whole PMD mapping; 1 if handled, 0 if not a leaf. */
int change_huge_pmd(struct mmu_gather *tlb, struct vm_area_struct *vma,
		    pmd_t *pmdp, unsigned long addr, pgprot_t newprot,
		    bool try_writable)
{
	spinlock_t *ptl = pmd_lock(vma->vm_mm, pmdp);
	pmd_t old = pmdp_get(pmdp), entry;

	if (!pmd_leaf(old)) {
		spin_unlock(ptl);
		return 0;
	}
	old = pmdp_get_and_clear(pmdp);
	entry = pte_pmd(pte_modify(pmd_pte(old), newprot));
	if (try_writable && !pmd_write(entry) && can_change_pmd_writable(vma, entry))
		entry = pte_pmd(pte_mkwrite(pmd_pte(entry), vma));
	set_pmd(pmdp, entry);
	if (pte_needs_flush(pmd_pte(old), pmd_pte(entry)))
		tlb_flush_pte_range(tlb, addr & PMD_MASK, PMD_SIZE);
	spin_unlock(ptl);
	return 1;
}
