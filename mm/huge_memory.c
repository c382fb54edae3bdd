// SPDX-License-Identifier: GPL-2.0-only
/*
 * huge_memory.c: THP policy and PMD-mapped THP (mm/huge_memory.c) -
 * order selection, the PMD fault and huge zero page, PMD write-protect
 * faults, PMD split, and the PMD cases of zap, fork and mprotect.
 */
#include <stdlib.h>

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

/* map_anon_folio_pmd()'s and vma_alloc_anon_folio_pmd()'s counts. */
static void count_thp_fault_alloc(void)
{
	count_vm_event(THP_FAULT_ALLOC);
	count_mthp_stat(HPAGE_PMD_ORDER, MTHP_STAT_ANON_FAULT_ALLOC);
}

static void count_thp_fault_fallback(void)
{
	count_vm_event(THP_FAULT_FALLBACK);
	count_mthp_stat(HPAGE_PMD_ORDER, MTHP_STAT_ANON_FAULT_FALLBACK);
}

static pmd_t mk_huge_pmd(struct page *page, pgprot_t prot)
{
	return pte_pmd(mk_pte(page, prot));
}

/*
 * A fault on an empty PMD where PMD THP is allowed: a read maps the huge
 * zero page (use_zero_page=1), a write a new, zeroed PMD-size folio; so
 * does a read where it may not map the zero page.
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
	if ((flags & FAULT_FLAG_WRITE) || !read_fault_maps_zeropage(mm)) {
		folio = folio_alloc(HPAGE_PMD_ORDER);
		if (!folio) {
			free_table_frame(pgtable);
			count_thp_fault_fallback();
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
	if (folio)
		count_thp_fault_alloc();
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
 * and the head's PageAnonExclusive spreads to every subpage.  @freeze:
 * the split of the folio follows at once (split_folio()); see below.
 * Called with the PMD lock held.
 */
static void __split_huge_pmd_locked(struct vm_area_struct *vma, pmd_t *pmdp,
				    unsigned long haddr, bool freeze)
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
	/* The huge zero page's too, as the kernel counts it. */
	count_vm_event(THP_SPLIT_PMD);

	if (is_huge_zero_pmd(old)) {
		entry = pte_mkspecial(pfn_pte(machine.zero_pfn, vma->vm_page_prot));
		for (i = 0; i < HPAGE_PMD_NR; i++)
			set_pte_at(mm, haddr + i * PAGE_SIZE, ptep + i, entry);
		set_pmd(pmdp, __pmd(mk_table_entry(pgtable)));
		return;
	}
	page = pfn_to_page(pmd_pfn(old));
	folio = page_folio(page);
	/*
	 * The PMD's Dirty goes to the folio, as __split_huge_pmd_locked()
	 * does: MADV_FREE then leaves a shared split THP alone (a dirty
	 * folio is cleaned only when exclusive).
	 */
	if (pmd_dirty(old))
		folio_set_flag(folio, PG_dirty);
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
	/*
	 * A freeze writes migration entries in the kernel, and after the
	 * folio split remove_migration_pte() maps each order-0 page on its
	 * own: no entry is ever contiguous, so nothing is folded or unfolded
	 * (0 contpte_convert where a PTE-mapped folio's split unfolds every
	 * block).  The model keeps the entries present through the split, so
	 * it writes them as the remap leaves them, under the arch's set_ptes(),
	 * which would fold the blocks of the still large folio.
	 */
	if (freeze)
		__set_ptes(ptep, entry, HPAGE_PMD_NR);
	else
		set_ptes(mm, haddr, ptep, entry, HPAGE_PMD_NR);
	set_pmd(pmdp, __pmd(mk_table_entry(pgtable)));
	folio_remove_rmap_pmd(folio, vma);
}

static void split_huge_pmd_address(struct vm_area_struct *vma, pmd_t *pmdp,
				   unsigned long haddr, bool freeze)
{
	spinlock_t *ptl = pmd_lock(vma->vm_mm, pmdp);

	if (pmd_leaf(pmdp_get(pmdp)))
		__split_huge_pmd_locked(vma, pmdp, haddr & PMD_MASK, freeze);
	spin_unlock(ptl);
}

void __split_huge_pmd(struct vm_area_struct *vma, pmd_t *pmdp,
		      unsigned long haddr)
{
	split_huge_pmd_address(vma, pmdp, haddr, false);
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
		if (!folio) {
			count_thp_fault_fallback();
			goto fallback;
		}
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
		count_thp_fault_alloc();
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

		/* Anon: Dirty is not moved to the folio (zap_present_folio_ptes). */
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

/* ---- folio split, MADV_FREE and MADV_PAGEOUT of huge PMDs ---- */

/*
 * try_to_map_unused_to_zeropage(): after an anon folio split, the PTE at
 * @addr that maps order-0 page @pfn, which holds only zeroes, maps the
 * shared zero page instead, and the page loses that mapping and its
 * reference (remove_migration_pte() takes none for it).  The kernel does
 * it while the PTE is a migration entry, already flushed; here the PTE is
 * present, so it is cleared and flushed first.  Since Linux 6.12 (commit
 * b1f202060afe, "mm: remap unused subpages to shared zeropage when
 * splitting isolated thp"); no mlock or userfaultfd in the model, the two
 * cases it leaves alone.
 */
static void map_unused_to_zeropage(struct vm_area_struct *vma,
				   unsigned long addr, pte_t *ptep,
				   unsigned long pfn)
{
	struct folio *folio = pfn_folio(pfn);

	ptep_get_and_clear(vma->vm_mm, addr, ptep);
	flush_tlb_page(vma->vm_mm, addr);
	set_pte_at(vma->vm_mm, addr, ptep,
		   pte_mkspecial(pfn_pte(machine.zero_pfn, vma->vm_page_prot)));
	folio_remove_rmap_ptes(folio, pfn_to_page(pfn), 1, vma);
	folio_put(folio);
}

/*
 * The anon rmap walk of split_folio(): every PTE of @mm that maps a page
 * of @folio.  The model keeps no folio->index; the caller's mapping of
 * @page at @addr in @vma gives the folio's linear page offset, and each
 * VMA of the same anon_vma maps page i, if at all, at the address that
 * offset puts it (vma_address()), as mremap keeps vm_pgoff.  @mapped[i]
 * counts page i's mappings; with @zero, each mapping of a page i with
 * @zero[i] set goes to the shared zero page (after the split); without
 * either (arm64, after the split)
 * every folded entry found is repainted as single entries, which the
 * kernel gets from unmapping and remapping the folio.  Returns the
 * number of mappings found.
 */
static long split_folio_rmap_walk(struct vm_area_struct *vma, unsigned long addr,
				  unsigned long pfn, unsigned long head,
				  unsigned long nr, unsigned char *mapped,
				  const bool *zero)
{
	struct mm_struct *mm = vma->vm_mm;
	/* The linear page offset of the folio's first page. */
	const unsigned long base = vma->vm_pgoff +
		((addr - vma->vm_start) >> PAGE_SHIFT) - (pfn - head);
	const struct anon_vma *root = vma->anon_vma ? vma->anon_vma->root : NULL;
	long found = 0;
	int v;

	for (v = 0; v < mm->nr_vmas; v++) {
		struct vm_area_struct *w = mm->vmas[v];
		unsigned long first = max(base, w->vm_pgoff);
		unsigned long last = min(base + nr,
			w->vm_pgoff + ((w->vm_end - w->vm_start) >> PAGE_SHIFT));
		unsigned long a, end, i = first - base;

		if (!w->anon_vma || w->anon_vma->root != root || first >= last)
			continue;
		a = w->vm_start + ((first - w->vm_pgoff) << PAGE_SHIFT);
		end = a + ((last - first) << PAGE_SHIFT);
		while (a < end) {
			unsigned long next = pmd_addr_end(a, end);
			pmd_t *pmdp = walk_to_pmd(mm, a);
			spinlock_t *ptl;
			pte_t *ptep = pmdp ? pte_offset_map_lock(mm, pmdp, a, &ptl) : NULL;
			pte_t *start_pte = ptep;

			for (; ptep && a < next; a += PAGE_SIZE, ptep++, i++) {
				pte_t pte = ptep_get(ptep);

				if (!pte_present(pte) || pte_pfn(pte) != head + i)
					continue;
				found++;
				if (zero && zero[i]) {
					map_unused_to_zeropage(w, a, ptep, head + i);
					continue;
				}
				if (mapped)
					mapped[i]++;
#ifdef ARCH_HAS_CONTPTE
				else if (pte_valid_cont(pte))
					set_pte_at(mm, a, ptep, pte);
#endif
			}
			if (start_pte)
				pte_unmap_unlock(start_pte, ptl);
			i += (next - a) >> PAGE_SHIFT;
			a = next;
		}
	}
	return found;
}

/*
 * split_folio(): split the PTE-mapped large anon @folio into order-0
 * folios, as split_huge_page_to_list_to_order(folio, NULL, 0) does for
 * an anon folio: only if every reference is a mapping's or one of the
 * caller's @extra (can_split_folio(): a GUP reference, a vmsplice or a
 * pin makes it fail with -EAGAIN), only if the mappings are all in
 * @vma's MM (the walk must find every one; -EBUSY otherwise: the kernel
 * would unmap the others too, but MADV_FREE and MADV_PAGEOUT, the
 * callers, leave a folio other MMs map alone before they get here), and
 * never while a PMD maps it (the caller splits the PMD first).  Not the
 * maybe-mapped-shared bit: it stays set after every other MM has gone
 * while a third MM still maps the folio (no mm_id slot was free for it),
 * and reclaim, which isolated the folio by its mapcount, still splits it
 * (random-diff, seed 5, scenario 23 before the fix).  The
 * caller maps @page, a page of @folio, at @addr in @vma (see the walk).
 * Pages no PTE maps are freed; the caller's @extra references stay on
 * the head page's new folio.  Called with mmap_lock held, no PTL.
 *
 * The kernel freezes the refcount with the folio unmapped (migration
 * entries); the model freezes it with the PTEs in place, which GUP-fast
 * sees as the refcount-zero window of a folio being freed: its grab
 * fails, or its re-check finds the page in another folio, and it falls
 * back to the slow path, which waits for nothing here (mmap_lock is
 * shared) but finds the order-0 folios.
 */
int split_folio(struct vm_area_struct *vma, unsigned long addr,
		struct page *page, int extra)
{
	struct folio *folio = page_folio(page);
	const unsigned long nr = folio_nr_pages(folio), head = folio_pfn(folio);
	unsigned long flags, i;
	unsigned char *mapped;
	bool *zero, any_zero = false;
	int expected;
	long found;

	if (!folio_test_large(folio))
		return 0;
	if (!folio_test_anon(folio) || folio_entire_mapcount(folio))
		return -EBUSY;
	expected = folio_mapcount(folio) + extra;
	if (folio_ref_count(folio) != expected)
		return -EAGAIN;
	mapped = calloc(nr, 1);
	zero = calloc(nr, sizeof(*zero));
	if (!mapped || !zero) {
		free(mapped);
		free(zero);
		return -ENOMEM;
	}
	found = split_folio_rmap_walk(vma, addr, page_to_pfn(page), head, nr,
				      mapped, NULL);
	if (found != folio_mapcount(folio)) {
		free(mapped);
		free(zero);
		return -EBUSY;
	}
	/* folio_ref_freeze(): GUP-fast cannot add to a zero refcount. */
	count_stat(folio_ref_atomic);
	folio_touch_head(folio);
	if (!atomic_compare_exchange_strong_explicit(&folio->_refcount, &expected,
			0, memory_order_acquire, memory_order_relaxed)) {
		free(mapped);
		free(zero);
		return -EAGAIN;
	}
	flags = atomic_load_explicit(&folio->flags, memory_order_relaxed) &
		((1UL << PG_anon) | (1UL << PG_dirty) | (1UL << PG_referenced) |
		 (1UL << PG_lru) | (1UL << PG_swapbacked));
	folio_list_add_split(head, nr);
	for (i = 0; i < nr; i++) {
		struct page *p = pfn_to_page(head + i);
		struct folio *new = pfn_folio(head + i);

		/* PageAnonExclusive stays with its page. */
		memmap_touch(head + i);
		atomic_fetch_and_explicit(&p->flags, ~((1UL << PG_head) |
					  (1UL << PG_tail)), memory_order_relaxed);
		atomic_store_explicit(&p->compound_head, head + i,
				      memory_order_relaxed);
		atomic_store_explicit(&new->flags, flags, memory_order_relaxed);
		if (i)
			atomic_store_explicit(&new->mapping,
					      atomic_load(&folio->mapping),
					      memory_order_relaxed);
		atomic_store_explicit(&new->_mapcount, (int)mapped[i] - 1,
				      memory_order_relaxed);
		folio_reset_fields(new, 0);
	}
	/*
	 * Unfreeze, head last (the caller's references are on it): each
	 * release store publishes the metadata above, as prep_folio() does.
	 * A page nobody maps gets one reference only to drop it: freed.
	 */
	for (i = nr; i-- > 0;) {
		struct folio *new = pfn_folio(head + i);
		int refs = mapped[i] + (i ? 0 : extra);

		atomic_store_explicit(&new->_refcount, refs ?: 1,
				      memory_order_release);
		if (!refs)
			folio_put(new);
	}
#ifdef ARCH_HAS_CONTPTE
	split_folio_rmap_walk(vma, addr, page_to_pfn(page), head, nr, NULL,
			      NULL);
#endif
	/*
	 * remap_page(RMP_USE_SHARED_ZEROPAGE): every page that holds only
	 * zeroes and is still mapped goes to the shared zero page.  The
	 * model's PTEs never left, so the walk replaces them now.
	 */
	for (i = 0; i < nr; i++) {
		zero[i] = mapped[i] && page_is_zero(pfn_to_page(head + i));
		any_zero |= zero[i];
	}
	if (any_zero)
		split_folio_rmap_walk(vma, addr, page_to_pfn(page), head, nr,
				      NULL, zero);
	free(zero);
	free(mapped);
	/* The old order: @folio is the head's order-0 folio by now. */
	count_mthp_stat(__builtin_ctzl(nr), MTHP_STAT_SPLIT);
	return 0;
}

/*
 * Split the PMD mapping of @folio at @haddr and then the folio, when it
 * can be split (can_split_folio() first, as __folio_split() does: a pin
 * leaves even the PMD mapping alone).  The kernel's split_folio() of a
 * PMD-mapped folio splits the PMD with freeze (unmap_folio():
 * TTU_SPLIT_HUGE_PMD | TTU_SPLIT_FREEZE).  Called without the PMD lock.
 */
static int split_huge_pmd_folio(struct vm_area_struct *vma, pmd_t *pmdp,
				unsigned long haddr, struct folio *folio,
				int extra)
{
	if (folio_ref_count(folio) != folio_mapcount(folio) + extra)
		return -EAGAIN;
	split_huge_pmd_address(vma, pmdp, haddr, true);
	return split_folio(vma, haddr, folio_page(folio, 0), extra);
}

/*
 * madvise_free_huge_pmd(): MADV_FREE of [@addr, @next) inside a huge PMD.
 * The whole PMD of a folio no other MM maps: clean the folio, make the
 * PMD old and clean (flushed) and mark the folio lazy-free; true, the PMD
 * is done.  Part of it: split the mapping and the folio, false, and the
 * PTE walk does the range.  A shared folio or the huge zero page: left
 * alone; false, but the PMD stays a leaf, so the PTE walk finds nothing.
 */
bool madvise_free_huge_pmd(struct mmu_gather *tlb, struct vm_area_struct *vma,
			   pmd_t *pmdp, unsigned long addr, unsigned long next)
{
	struct mm_struct *mm = vma->vm_mm;
	const unsigned long haddr = addr & PMD_MASK;
	spinlock_t *ptl = pmd_lock(mm, pmdp);
	pmd_t orig = pmdp_get(pmdp);
	struct folio *folio;

	if (!pmd_leaf(orig) || is_huge_zero_pmd(orig))
		goto out;
	folio = page_folio(pfn_to_page(pmd_pfn(orig)));
	if (folio_maybe_mapped_shared(folio))
		goto out;
	if (next - addr != PMD_SIZE) {
		spin_unlock(ptl);
		split_huge_pmd_folio(vma, pmdp, haddr, folio, 0);
		return false;
	}
	folio_clear_flag(folio, PG_dirty);
	if (pmd_young(orig) || pmd_dirty(orig)) {
		/* pmdp_invalidate(): no hardware A/D update may be lost. */
		orig = pmdp_get_and_clear(pmdp);
		flush_tlb_range(mm, haddr, haddr + PMD_SIZE);
		set_pmd(pmdp, pte_pmd(pte_mkclean(pmd_pte(pmd_mkold(orig)))));
		tlb_flush_pte_range(tlb, haddr, PMD_SIZE);
	}
	folio_mark_lazyfree(folio);
	spin_unlock(ptl);
	return true;
out:
	spin_unlock(ptl);
	return false;
}

/*
 * MADV_PAGEOUT of [@addr, @next) inside a huge PMD (the PMD half of
 * madvise_cold_or_pageout_pte_range()).  The whole PMD of a folio no
 * other MM maps: the folio, isolated (a reference taken), for the caller
 * to reclaim.  Part of it: the mapping and the folio split, for the PTE
 * walk.  NULL either way, or for a shared folio or the huge zero page.
 */
struct folio *madvise_pageout_huge_pmd(struct vm_area_struct *vma, pmd_t *pmdp,
				       unsigned long addr, unsigned long next)
{
	spinlock_t *ptl = pmd_lock(vma->vm_mm, pmdp);
	pmd_t orig = pmdp_get(pmdp);
	struct folio *folio = NULL;

	if (!pmd_leaf(orig) || is_huge_zero_pmd(orig))
		goto out;
	folio = page_folio(pfn_to_page(pmd_pfn(orig)));
	if (folio_maybe_mapped_shared(folio)) {
		folio = NULL;
		goto out;
	}
	if (next - addr != PMD_SIZE) {
		spin_unlock(ptl);
		split_huge_pmd_folio(vma, pmdp, addr & PMD_MASK, folio, 0);
		return NULL;
	}
	folio_clear_flag(folio, PG_referenced);
	folio_get(folio);
out:
	spin_unlock(ptl);
	return folio;
}

/*
 * Reclaim of a PMD-mapped folio, the caller holding the isolation
 * reference: try_to_unmap() with TTU_SPLIT_HUGE_PMD.  A lazy-free folio
 * is unmapped at the PTE level after a split of its mapping, as this
 * machine's kernel does (a store after MADV_PAGEOUT faults a 4K page into
 * the emptied table, not a new THP); the caller discards it there.  A
 * swapbacked folio cannot go without swap: add_to_swap() fails and
 * reclaim splits it, mapping and folio, unless it is pinned or otherwise
 * referenced.
 */
void pageout_huge_pmd_folio(struct vm_area_struct *vma, unsigned long addr,
			    struct folio *folio)
{
	const unsigned long haddr = addr & PMD_MASK;
	pmd_t *pmdp = walk_to_pmd(vma->vm_mm, haddr);

	if (!pmdp)
		return;
	if (folio_test_lazyfree(folio))
		__split_huge_pmd(vma, pmdp, haddr);
	else if (!folio_maybe_dma_pinned(folio))
		split_huge_pmd_folio(vma, pmdp, haddr, folio, 1);
}
