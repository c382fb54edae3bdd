// SPDX-License-Identifier: GPL-2.0-only
/*
 * memory.c: page faults, zapping and fork's page-table copy (mm/memory.c).
 *
 * Every PTE walker here is a loop whose step is "nr" entries: nr is 1 on
 * the per-PTE paths (mainline before batching), and the batched variants
 * (zap_batch, fork_batch, wp_reuse_max) widen it with
 * folio_pte_batch_flags() without another copy of the loop.
 */
#include "mm/pgtable.h"
#include "mm/pte_batch.h"
#include "mm/tlb.h"

struct vm_fault {
	struct vm_area_struct *vma;
	unsigned long address;		/* page aligned */
	unsigned int flags;
	pmd_t *pmd;
	pte_t *pte;			/* mapped PTE, or NULL if none */
	pte_t orig_pte;
	spinlock_t *ptl;
	struct page *page;
};

/* The page a PTE maps, NULL for special entries (the zero page). */
struct page *vm_normal_page(struct vm_area_struct *vma, unsigned long addr,
			    pte_t pte)
{
	(void)vma;
	(void)addr;
	if (pte_special(pte))
		return NULL;
	return pte_page(pte);
}

static bool pte_range_none(pte_t *ptep, unsigned long nr)
{
	unsigned long i;

	for (i = 0; i < nr; i++)
		if (!pte_none(ptep_get_lockless(ptep + i)))
			return false;
	return true;
}

/*
 * alloc_anon_folio(): the largest allowed order whose naturally aligned
 * block lies inside the VMA and whose PTEs are all none, falling back to
 * smaller orders when allocation fails.  The folio comes back zeroed.
 */
static struct folio *alloc_anon_folio(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	unsigned long orders, addr;
	pte_t *ptep;
	int order;

	orders = thp_vma_allowable_orders(vma) & ((1UL << HPAGE_PMD_ORDER) - 1);
	if (!orders)
		goto fallback;
	ptep = pte_offset_map_nolock(vma->vm_mm, vmf->pmd,
				     vmf->address & PMD_MASK);
	if (!ptep)
		return NULL;
	for (order = HPAGE_PMD_ORDER - 1; order >= 2; order--) {
		if (!(orders & (1UL << order)))
			continue;
		if (!thp_vma_suitable_order(vma, vmf->address, order)) {
			orders &= ~(1UL << order);
			continue;
		}
		addr = ALIGN_DOWN(vmf->address, PAGE_SIZE << order);
		if (pte_range_none(ptep + pte_index(addr), 1UL << order))
			break;
		orders &= ~(1UL << order);
	}
	/* Lower orders' ranges are subsets of the chosen one: all none. */
	for (; order >= 2; order--) {
		struct folio *folio;

		if (!(orders & (1UL << order)))
			continue;
		folio = folio_alloc(order);
		if (folio) {
			clear_folio(folio);
			return folio;
		}
		count_mthp_stat(order, MTHP_STAT_ANON_FAULT_FALLBACK);
	}
fallback:
	{
		struct folio *folio = folio_alloc(0);

		if (folio)
			clear_folio(folio);
		return folio;
	}
}

static vm_fault_t do_anonymous_page(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct folio *folio;
	unsigned long addr = vmf->address, nr;
	pte_t entry, *ptep;
	spinlock_t *ptl;

	if (pmd_none(pmdp_get(vmf->pmd)) && __pte_alloc(vma->vm_mm, vmf->pmd))
		return VM_FAULT_OOM;

	/*
	 * A read maps the shared zero page, one PTE, never a large folio;
	 * where it may not, it allocates as a write does, and the folio is
	 * mapped writable and dirty just the same.
	 */
	if (!(vmf->flags & FAULT_FLAG_WRITE) &&
	    read_fault_maps_zeropage(vma->vm_mm)) {
		entry = pte_mkspecial(pfn_pte(machine.zero_pfn, vma->vm_page_prot));
		ptep = pte_offset_map_lock(vma->vm_mm, vmf->pmd, addr, &ptl);
		if (!ptep)
			return 0;
		if (pte_none(ptep_get(ptep))) {
			set_pte_at(vma->vm_mm, addr, ptep, entry);
			count_stat(fault_zero);
		}
		pte_unmap_unlock(ptep, ptl);
		return 0;
	}

	if (anon_vma_prepare(vma))
		return VM_FAULT_OOM;
	folio = alloc_anon_folio(vmf);
	if (!folio)
		return VM_FAULT_OOM;
	nr = folio_nr_pages(folio);
	addr = ALIGN_DOWN(vmf->address, nr * PAGE_SIZE);

	/* vm_page_prot already has Accessed; all nr PTEs writable+dirty. */
	entry = mk_pte(folio_page(folio, 0), vma->vm_page_prot);
	if (vma->vm_flags & VM_WRITE)
		entry = pte_mkwrite(pte_mkdirty(entry), vma);

	ptep = pte_offset_map_lock(vma->vm_mm, vmf->pmd, addr, &ptl);
	if (!ptep)
		goto release;
	/* Someone mapped part of the range meanwhile: no smaller retry here. */
	if (!pte_range_none(ptep, nr)) {
		pte_unmap_unlock(ptep, ptl);
		goto release;
	}
	if (nr > 1)
		folio_ref_add(folio, (int)nr - 1);
	folio_add_new_anon_rmap(folio, vma, false);
	set_ptes(vma->vm_mm, addr, ptep, entry, nr);
	pte_unmap_unlock(ptep, ptl);
	count_stat(fault_anon);
	/* Order 0 too, as the kernel does; no hugepages-4kB file shows it. */
	count_mthp_stat(folio_order(folio), MTHP_STAT_ANON_FAULT_ALLOC);
	return 0;
release:
	folio_put(folio);
	return 0;
}

/*
 * Can the faulting MM reuse @folio instead of copying?  Small folios: the
 * only reference is our mapping.  Large folios (MM_ID tracking): every
 * reference is a mapping of this MM, and there is more than one mapping
 * (a folio with one mapped page is copied so it can be freed).
 */
static bool wp_can_reuse_anon_folio(struct folio *folio,
				    struct vm_area_struct *vma)
{
	bool ret;

	if (folio_test_large(folio)) {
		if (folio_large_mapcount(folio) <= 1)
			return false;
		if (folio_maybe_mapped_shared(folio))
			return false;
		if (folio_large_mapcount(folio) != folio_ref_count(folio))
			return false;
		/* Recheck under the large-mapcount lock. */
		spin_lock(&folio->mm_id_lock);
		ret = !folio_test(folio, PG_mm_ids_shared) &&
		      folio_large_mapcount(folio) == folio_ref_count(folio);
		spin_unlock(&folio->mm_id_lock);
		return ret;
	}
	if (folio_ref_count(folio) > 1)
		return false;
	/* folio_trylock: contention means copy, never sleep. */
	if (folio_test(folio, PG_locked))
		return false;
	folio_set_flag(folio, PG_locked);
	ret = folio_ref_count(folio) == 1;
	if (ret)	/* folio_move_anon_rmap */
		atomic_store_explicit(&folio->mapping, vma->anon_vma,
				      memory_order_relaxed);
	folio_clear_flag(folio, PG_locked);
	return ret;
}

/*
 * The window a reuse fault may make writable: the wp_reuse_max-aligned
 * block around the fault, cut to the folio as if mapped linearly around
 * the faulting page, the page table and the VMA.  wp_reuse_max == 1 gives
 * just the faulting page.
 */
static void wp_reuse_window(struct vm_fault *vmf, struct folio *folio,
			    unsigned long *startp, unsigned long *endp)
{
	struct vm_area_struct *vma = vmf->vma;
	unsigned long addr = vmf->address;
	unsigned long window = (unsigned long)machine.variant.wp_reuse_max << PAGE_SHIFT;
	unsigned long idx = pte_pfn(vmf->orig_pte) - folio_pfn(folio);
	unsigned long start = max(ALIGN_DOWN(addr, window), max(addr & PMD_MASK, vma->vm_start));
	unsigned long end = min(ALIGN_DOWN(addr, window) + window,
				min((addr & PMD_MASK) + PMD_SIZE, vma->vm_end));

	/* fva = where the folio would start, mapped linearly around addr. */
	if (addr - start > idx << PAGE_SHIFT)
		start = addr - (idx << PAGE_SHIFT);
	if (end - addr > (folio_nr_pages(folio) - idx) << PAGE_SHIFT)
		end = addr + ((folio_nr_pages(folio) - idx) << PAGE_SHIFT);
	*startp = start;
	*endp = end;
}

/*
 * Do @a and @b, @b mapping the page @nr pages after @a's, carry the same
 * bits but for young, dirty and soft-dirty - the bits a reuse sets anyway?
 */
static bool wp_reuse_pte_same(pte_t a, pte_t b, unsigned long nr)
{
	a = pte_advance_pfn(a, nr);
	return pte_same(pte_mkold(pte_mkclean(pte_clear_soft_dirty(a))),
			pte_mkold(pte_mkclean(pte_clear_soft_dirty(b))));
}

/*
 * May the read-only PTE @pte at @addr be made writable by this reuse, if
 * its page is exclusive?  It must map the page of @folio that a linear
 * mapping puts there (after mremap a PTE may map another page or folio),
 * carry the faulting PTE's protection bits, and need no fault for
 * soft-dirty or uffd-wp.  These are also the rules folio_pte_batch_flags()
 * extends a qualifying PTE by (wp_page_reuse()): the same bits, the next
 * pages, soft-dirty respected where it is tracked.
 */
static bool wp_reuse_pte_qualifies(struct vm_fault *vmf, struct folio *folio,
				   unsigned long addr, pte_t pte)
{
	struct vm_area_struct *vma = vmf->vma;
	long delta = (long)(addr - vmf->address) >> PAGE_SHIFT;
	unsigned long pfn = pte_pfn(vmf->orig_pte) + delta;

	if (!pte_present(pte) || pte_protnone(pte) || pte_write(pte))
		return false;
	if (pte_pfn(pte) != pfn || pfn < folio_pfn(folio) ||
	    pfn >= folio_pfn(folio) + folio_nr_pages(folio))
		return false;
	if (delta < 0 ? !wp_reuse_pte_same(pte, vmf->orig_pte, -delta) :
			!wp_reuse_pte_same(vmf->orig_pte, pte, delta))
		return false;
	return !pte_uffd_wp(pte) &&
	       (!vma_soft_dirty_enabled(vma) || pte_soft_dirty(pte));
}

/*
 * Make a run of @nr reusable PTEs from @ptep (the first mapping @pte)
 * writable, young and dirty: ptep_set_access_flags(dirty = 1) over the
 * run.  x86 relaxes entry by entry without a flush (a stale read-only
 * TLB entry only refaults); arm64 relaxes whole contiguous blocks in
 * place, so they stay folded, with one invalidation for the run.  Only
 * the bits the qualifying PTEs share matter: young and dirty are set here.
 */
static void wp_reuse_ptes(struct vm_area_struct *vma, unsigned long addr,
			  pte_t *ptep, pte_t pte, unsigned int nr)
{
	pte_t entry = maybe_mkwrite(pte_mkdirty(pte_mkyoung(pte)), vma);

	entry = pte_clear_uffd_wp(entry);
	set_access_flags_ptes(vma, addr, ptep, entry, nr, 1);
}

/*
 * The reusable PTEs found so far that are adjacent: a stretch that
 * touches the run joins it, and the run is committed with one
 * wp_reuse_ptes() where something that is not reused ends it.
 */
struct wp_reuse_run {
	unsigned long addr;
	pte_t *ptep;
	pte_t pte;		/* the first PTE of the run */
	unsigned int nr;
};

static void wp_reuse_run_add(struct wp_reuse_run *run, unsigned long addr,
			     pte_t *ptep, pte_t pte, unsigned int nr)
{
	if (!run->nr) {
		run->addr = addr;
		run->ptep = ptep;
		run->pte = pte;
	}
	run->nr += nr;
}

static void wp_reuse_run_end(struct vm_area_struct *vma,
			     struct wp_reuse_run *run)
{
	if (run->nr)
		wp_reuse_ptes(vma, run->addr, run->ptep, run->pte, run->nr);
	run->nr = 0;
}

/*
 * The @nr PTEs from @ptep at @addr, the first being @pte, qualify but for
 * their pages' exclusivity: add the exclusive pages to @run - every page
 * when the whole folio is known exclusive, and then marked so - and let
 * the shared ones end it.  Returns how many were added.
 */
static unsigned int wp_reuse_exclusive(struct vm_area_struct *vma,
				       struct wp_reuse_run *run,
				       unsigned long addr, pte_t *ptep,
				       pte_t pte, unsigned int nr,
				       bool folio_exclusive)
{
	struct page *page = pte_page(pte);
	unsigned int i, j, n, reused = 0;

	for (i = 0; i < nr; i += n) {
		if (folio_exclusive) {
			n = nr - i;
			for (j = i; j < nr; j++)
				SetPageAnonExclusive(page + j);
		} else {
			n = page_anon_exclusive_sub_batch(page + i, nr - i, true);
			if (!n) {
				/* Shared pages stay read-only and split the run. */
				n = 1 + page_anon_exclusive_sub_batch(page + i + 1,
								      nr - i - 1, false);
				wp_reuse_run_end(vma, run);
				continue;
			}
		}
		wp_reuse_run_add(run, addr + ((unsigned long)i << PAGE_SHIFT),
				 ptep + i, pte_advance_pfn(pte, i), n);
		reused += n;
	}
	return reused;
}

/*
 * wp_page_reuse(): make the faulting PTE writable, young and dirty again,
 * no copy.  With wp_reuse_max > 1 and an anon large folio, do the same at
 * once for every qualifying PTE of the folio in the window, marking each
 * page exclusive first: one fault instead of one per PTE (the write-fault
 * reuse proposal; not in mainline).  All under the one PTL of this page
 * table.
 *
 * The window is walked the way the batched paths walk: a PTE that
 * qualifies on its own heads a batch, which folio_pte_batch_flags()
 * extends over the following PTEs with the same bits and the next pages;
 * the entry a scan stops at differs in one or the other, so it does not
 * qualify either and is not read again.  Every PTE of the window is read
 * once, by ptep_get() or by a scan, except the faulting one: orig_pte is
 * its value, it is reused whatever its own bits say, and it heads its own
 * batch, so no batch before it reaches it.  A batch is split by its pages'
 * exclusivity; what is reused and adjacent is committed at once.
 */
static void wp_page_reuse(struct vm_fault *vmf, struct folio *folio,
			  bool folio_exclusive)
{
	struct vm_area_struct *vma = vmf->vma;
	const fpb_t flags = FPB_RESPECT_WRITE | (vma_soft_dirty_enabled(vma) ?
						 FPB_RESPECT_SOFT_DIRTY : 0);
	unsigned long start = vmf->address, end = start + PAGE_SIZE, addr;
	struct wp_reuse_run run = { .nr = 0 };
	unsigned long reused = 0;
	unsigned int nr;
	pte_t *ptep;

	if (folio && folio_test_large(folio) && (vma->vm_flags & VM_WRITE) &&
	    machine.variant.wp_reuse_max > 1) {
		wp_reuse_window(vmf, folio, &start, &end);
		/* Reuse via the faulting page's own bit says nothing of the rest. */
		if (!folio_exclusive && end - start > PAGE_SIZE)
			folio_exclusive = wp_can_reuse_anon_folio(folio, vma);
	}
	ptep = vmf->pte - ((vmf->address - start) >> PAGE_SHIFT);
	for (addr = start; addr < end; addr += nr << PAGE_SHIFT, ptep += nr) {
		const bool fault = addr == vmf->address;
		pte_t pte = fault ? vmf->orig_pte : ptep_get(ptep);
		unsigned int batch = 1, max_nr = 1;

		count_stat(pte_batch);
		nr = 1;
		if (fault) {
			if (end - addr > PAGE_SIZE &&
			    wp_reuse_pte_qualifies(vmf, folio, addr, pte))
				max_nr = (end - addr) >> PAGE_SHIFT;
		} else if (wp_reuse_pte_qualifies(vmf, folio, addr, pte)) {
			/* A batch before the faulting PTE stops short of it. */
			max_nr = ((addr < vmf->address ? vmf->address : end) -
				  addr) >> PAGE_SHIFT;
		} else {
			wp_reuse_run_end(vma, &run);
			continue;
		}
		if (max_nr > 1)
			batch = folio_pte_batch_flags(folio, vma, ptep, &pte,
						      max_nr, flags);
		reused += wp_reuse_exclusive(vma, &run, addr, ptep, pte, batch,
					     folio_exclusive);
		nr = batch;
		/*
		 * The window is cut to the folio, so the scan's own folio bound
		 * is never the shorter one: a batch short of max_nr stopped at
		 * an entry it read, which does not qualify.
		 */
		if (batch < max_nr) {
			wp_reuse_run_end(vma, &run);
			nr++;
		}
	}
	wp_reuse_run_end(vma, &run);
	pte_unmap_unlock(vmf->pte, vmf->ptl);
	count_stat(fault_wp_reuse);
	count_stat_n(wp_reuse_ptes, reused);
}

/*
 * Break COW by copying into a new order-0 folio (or a zeroed one for the
 * zero page).  The old mapping is cleared and flushed before the new one
 * is installed, and the old rmap is dropped only after, so no other
 * process can see a lower mapcount while this PTE may still read it.
 */
static vm_fault_t wp_page_copy(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	const bool unshare = vmf->flags & FAULT_FLAG_UNSHARE;
	struct folio *old_folio = vmf->page ? page_folio(vmf->page) : NULL;
	struct folio *new_folio;
	bool copied = false;
	pte_t entry;

	if (anon_vma_prepare(vma))
		goto oom;
	new_folio = folio_alloc(0);
	if (!new_folio)
		goto oom;
	if (old_folio)
		copy_highpage(folio_page(new_folio, 0), vmf->page);
	else
		clear_folio(new_folio);

	vmf->pte = pte_offset_map_lock(vma->vm_mm, vmf->pmd, vmf->address,
				       &vmf->ptl);
	if (vmf->pte && pte_same(ptep_get(vmf->pte), vmf->orig_pte)) {
		entry = mk_pte(folio_page(new_folio, 0), vma->vm_page_prot);
		if (unshare) {
			/* Read-only and clean; soft-dirty and uffd-wp survive. */
			if (pte_soft_dirty(vmf->orig_pte))
				entry = pte_mksoft_dirty(entry);
			if (pte_uffd_wp(vmf->orig_pte))
				entry = pte_mkuffd_wp(entry);
		} else {
			entry = maybe_mkwrite(pte_mkdirty(entry), vma);
		}
		/* ptep_clear_flush */
		ptep_get_and_clear(vma->vm_mm, vmf->address, vmf->pte);
		flush_tlb_page(vma->vm_mm, vmf->address);
		folio_add_new_anon_rmap(new_folio, vma, false);
		set_pte_at(vma->vm_mm, vmf->address, vmf->pte, entry);
		if (old_folio)
			folio_remove_rmap_ptes(old_folio, vmf->page, 1, vma);
		copied = true;
	}
	if (vmf->pte)
		pte_unmap_unlock(vmf->pte, vmf->ptl);
	if (copied) {
		count_stat(fault_wp_copy);
		/* The old mapping's reference. */
		if (old_folio)
			folio_put(old_folio);
	} else {
		folio_put(new_folio);
	}
	if (old_folio)
		folio_put(old_folio);	/* taken by do_wp_page */
	return 0;
oom:
	if (old_folio)
		folio_put(old_folio);
	return VM_FAULT_OOM;
}

/*
 * do_wp_page(): a write (or unshare) fault on a present read-only PTE,
 * entered with the PTL held.  Reuse an exclusive (or reusable) anon page,
 * otherwise copy.  UNSHARE only marks the page exclusive: the PTE stays
 * read-only and clean.
 */
static vm_fault_t do_wp_page(struct vm_fault *vmf)
{
	const bool unshare = vmf->flags & FAULT_FLAG_UNSHARE;
	struct folio *folio = NULL;

	vmf->page = vm_normal_page(vmf->vma, vmf->address, vmf->orig_pte);
	if (vmf->page)
		folio = page_folio(vmf->page);

	if (folio && folio_test_anon(folio)) {
		bool folio_exclusive = false;

		if (!PageAnonExclusive(vmf->page)) {
			folio_exclusive = wp_can_reuse_anon_folio(folio, vmf->vma);
			if (!folio_exclusive)
				goto copy;
			SetPageAnonExclusive(vmf->page);
		}
		/* Unshare only marks the page exclusive: PTE stays read-only. */
		if (unlikely(unshare)) {
			pte_unmap_unlock(vmf->pte, vmf->ptl);
			count_stat(fault_unshare);
			return 0;
		}
		wp_page_reuse(vmf, folio, folio_exclusive);
		return 0;
	}
copy:
	if (folio)
		folio_get(folio);
	pte_unmap_unlock(vmf->pte, vmf->ptl);
	if (unshare)
		count_stat(fault_unshare);
	return wp_page_copy(vmf);
}

static vm_fault_t handle_pte_fault(struct vm_fault *vmf)
{
	const bool write = vmf->flags & FAULT_FLAG_WRITE;
	pte_t entry;

	vmf->pte = pte_offset_map_nolock(vmf->vma->vm_mm, vmf->pmd,
					 vmf->address);
	if (vmf->pte) {
		vmf->orig_pte = ptep_get_lockless(vmf->pte);
		if (pte_none(vmf->orig_pte))
			vmf->pte = NULL;
	}
	if (!vmf->pte)
		return do_anonymous_page(vmf);

	/* orig_pte is only a hint: re-validate under the PTL. */
	vmf->pte = pte_offset_map_lock(vmf->vma->vm_mm, vmf->pmd, vmf->address,
				       &vmf->ptl);
	if (!vmf->pte)
		return 0;
	entry = ptep_get(vmf->pte);
	if (unlikely(!pte_same(entry, vmf->orig_pte)))
		goto unlock;
	if (vmf->flags & (FAULT_FLAG_WRITE | FAULT_FLAG_UNSHARE)) {
		if (!pte_write(entry))
			return do_wp_page(vmf);
		if (write)
			entry = pte_mkdirty(entry);
	}
	entry = pte_mkyoung(entry);
	/*
	 * Nothing changed: a stale TLB entry faulted.  Both x86 (the fault
	 * dropped it) and arm64 (whoever relaxed the entry flushed)
	 * need no flush_tlb_fix_spurious_fault().
	 */
	if (!ptep_set_access_flags(vmf->vma, vmf->address, vmf->pte, entry,
				   write))
		count_stat(fault_spurious);
unlock:
	pte_unmap_unlock(vmf->pte, vmf->ptl);
	return 0;
}

static vm_fault_t __handle_mm_fault(struct vm_area_struct *vma,
				    unsigned long address, unsigned int flags)
{
	struct vm_fault vmf = {
		.vma = vma,
		.address = address & PAGE_MASK,
		.flags = flags,
	};
	pmd_t orig_pmd;
	vm_fault_t ret;

	vmf.pmd = pmd_alloc_walk(vma->vm_mm, address);
	if (!vmf.pmd)
		return VM_FAULT_OOM;
	orig_pmd = pmdp_get_lockless(vmf.pmd);
	if (pmd_none(orig_pmd) &&
	    (thp_vma_allowable_orders(vma) & (1UL << HPAGE_PMD_ORDER)) &&
	    thp_vma_suitable_order(vma, address, HPAGE_PMD_ORDER)) {
		ret = do_huge_pmd_anonymous_page(vma, address, vmf.pmd, flags);
		if (!(ret & VM_FAULT_FALLBACK))
			return ret;
	} else if (pmd_leaf(orig_pmd)) {
		if ((flags & (FAULT_FLAG_WRITE | FAULT_FLAG_UNSHARE)) &&
		    !pmd_write(orig_pmd)) {
			ret = do_huge_pmd_wp_page(vma, address, vmf.pmd,
						  orig_pmd, flags);
			if (!(ret & VM_FAULT_FALLBACK))
				return ret;
		} else {
			huge_pmd_set_accessed(vma, vmf.pmd, orig_pmd,
					      flags & FAULT_FLAG_WRITE);
			return 0;
		}
	}
	return handle_pte_fault(&vmf);
}

/* sanitize_fault_flags() */
static bool fault_flags_bad(struct vm_area_struct *vma, unsigned int *flags)
{
	if (*flags & FAULT_FLAG_UNSHARE) {
		if (*flags & FAULT_FLAG_WRITE)
			return true;
		if (!is_cow_mapping(vma->vm_flags))
			*flags &= ~FAULT_FLAG_UNSHARE;
	} else if (*flags & FAULT_FLAG_WRITE) {
		if (!(vma->vm_flags & VM_MAYWRITE))
			return true;
		if (!(vma->vm_flags & VM_WRITE) && !is_cow_mapping(vma->vm_flags))
			return true;
	}
	return false;
}

/*
 * The fault entry point for the MMU and for GUP.  A fault that completes
 * without error counts as a minor fault of the acting task (ru_minflt),
 * whether the CPU or GUP took it (mm_account_fault).
 */
vm_fault_t handle_mm_fault(struct vm_area_struct *vma, unsigned long address,
			   unsigned int flags)
{
	vm_fault_t ret;

	/* Every entry, retried and failed ones too: /proc/vmstat's pgfault. */
	count_vm_event(PGFAULT);
	if (fault_flags_bad(vma, &flags))
		return VM_FAULT_SIGSEGV;
	ret = __handle_mm_fault(vma, address, flags);
	if (!(ret & (VM_FAULT_RETRY | VM_FAULT_ERROR))) {
		count_stat(fault);
		if (current_task)
			atomic_fetch_add_explicit(&current_task->min_flt, 1,
						  memory_order_relaxed);
	}
	return ret;
}

/* ---- zap ---- */

static void zap_present_folio_ptes(struct mmu_gather *tlb,
				   struct vm_area_struct *vma,
				   struct folio *folio, struct page *page,
				   pte_t *ptep, unsigned int nr,
				   unsigned long addr)
{
	/*
	 * An anon folio's Dirty dies with the mapping: the kernel moves it to
	 * the folio only for file folios, so a lazy-free folio a child
	 * dirtied before it exited can still be discarded.
	 */
	get_and_clear_ptes(vma->vm_mm, addr, ptep, nr);
	folio_remove_rmap_ptes(folio, page, (int)nr, vma);
	tlb_flush_pte_range(tlb, addr, nr * PAGE_SIZE);
	/* The references go after the flush: stale TLBs may still read. */
	tlb_remove_folio_refs(tlb, folio, (int)nr);
}

/*
 * Zap the present PTE at @ptep and, with zap_batch, every following PTE
 * mapping the next pages of the same large folio (dirty, young, write and
 * soft-dirty do not matter to a zap): one rmap update and one reference
 * drop per run instead of per page.
 */
static unsigned int zap_present_ptes(struct mmu_gather *tlb,
				     struct vm_area_struct *vma, pte_t *ptep,
				     pte_t ptent, unsigned int max_nr,
				     unsigned long addr)
{
	struct page *page = vm_normal_page(vma, addr, ptent);
	struct folio *folio;
	unsigned int nr = 1;

	if (!page) {
		/* The zero page: no references, no rmap. */
		ptep_get_and_clear(vma->vm_mm, addr, ptep);
		tlb_flush_pte_range(tlb, addr, PAGE_SIZE);
		return 1;
	}
	folio = page_folio(page);
	if (machine.variant.zap_batch && folio_test_large(folio) && max_nr > 1)
		nr = folio_pte_batch(folio, ptep, ptent, max_nr);
	zap_present_folio_ptes(tlb, vma, folio, page, ptep, nr, addr);
	return nr;
}

/*
 * Page-table reclaim (CONFIG_PT_RECLAIM, on x86-64): when MADV_DONTNEED
 * zaps a whole PTE table's range and leaves it empty, the table itself
 * is freed, so a later fault there starts from an empty PMD (and may get
 * a PMD THP).  Called with the PTL held; the table goes after the flush.
 */
static void try_to_free_pte(struct mmu_gather *tlb, struct mm_struct *mm,
			    pmd_t *pmdp, pte_t *start_pte)
{
	spinlock_t *pml;
	unsigned long i;
	pmd_t pmdval;

	for (i = 0; i < PTRS_PER_PTE; i++)
		if (!pte_none(ptep_get(start_pte + i)))
			return;
	pml = pmd_lockptr(mm, pmdp);
	if (!spin_trylock(pml))
		return;
	pmdval = pmdp_get(pmdp);
	set_pmd(pmdp, __pmd(0));
	mm->nr_ptes--;
	spin_unlock(pml);
	tlb_remove_table(tlb, table_entry_pfn(pmd_val(pmdval)));
}

static void zap_pte_range(struct mmu_gather *tlb, struct vm_area_struct *vma,
			  pmd_t *pmdp, unsigned long addr, unsigned long end,
			  const struct zap_details *details)
{
	const bool reclaim_pt = details && details->reclaim_pt &&
				end - addr >= PMD_SIZE;
	spinlock_t *ptl;
	pte_t *ptep = pte_offset_map_lock(vma->vm_mm, pmdp, addr, &ptl);
	pte_t *start_pte = ptep;
	unsigned int nr;

	if (!ptep)
		return;
	do {
		pte_t ptent = ptep_get(ptep);

		nr = 1;
		if (pte_none(ptent))
			continue;
		count_stat(pte_batch);
		nr = zap_present_ptes(tlb, vma, ptep, ptent,
				      (end - addr) >> PAGE_SHIFT, addr);
	} while (ptep += nr, addr += nr * PAGE_SIZE, addr != end);
	if (reclaim_pt)
		try_to_free_pte(tlb, vma->vm_mm, pmdp, start_pte);
	pte_unmap_unlock(start_pte, ptl);
}

void zap_page_range(struct mmu_gather *tlb, struct vm_area_struct *vma,
		    unsigned long start, unsigned long end,
		    const struct zap_details *details)
{
	unsigned long addr = max(start, vma->vm_start), next;

	end = min(end, vma->vm_end);
	for (; addr < end; addr = next) {
		pmd_t *pmdp = walk_to_pmd(vma->vm_mm, addr);
		pmd_t pmd;

		next = pmd_addr_end(addr, end);
		if (!pmdp)
			continue;
		pmd = pmdp_get(pmdp);
		if (pmd_none(pmd))
			continue;
		if (pmd_leaf(pmd)) {
			if (IS_ALIGNED(addr, PMD_SIZE) && next - addr == PMD_SIZE) {
				zap_huge_pmd(tlb, vma, pmdp, addr);
				continue;
			}
			/* Partly covered: map it with PTEs first. */
			__split_huge_pmd(vma, pmdp, addr & PMD_MASK);
		}
		zap_pte_range(tlb, vma, pmdp, addr, next, details);
	}
}

/* ---- fork: copy_page_range ---- */

/*
 * The child's copy of an exclusive page of a maybe-pinned folio: a new
 * order-0 folio with the same contents, exclusive and writable in the
 * child.  The parent's PTE is left as it is.
 */
static int copy_present_page(struct vm_area_struct *dst_vma, pte_t *dst_pte,
			     unsigned long addr, struct folio **prealloc,
			     struct page *page)
{
	struct folio *new_folio = *prealloc;
	pte_t pte;

	if (!new_folio)
		return -EAGAIN;
	*prealloc = NULL;
	copy_highpage(folio_page(new_folio, 0), page);
	folio_add_new_anon_rmap(new_folio, dst_vma, false);
	pte = mk_pte(folio_page(new_folio, 0), dst_vma->vm_page_prot);
	pte = maybe_mkwrite(pte_mkdirty(pte), dst_vma);
	set_pte_at(dst_vma->vm_mm, addr, dst_pte, pte);
	return 0;
}

/* Install @nr copies of @pte in the child, write-protecting the parent. */
static void __copy_present_ptes(struct vm_area_struct *dst_vma,
				struct vm_area_struct *src_vma, pte_t *dst_pte,
				pte_t *src_pte, pte_t pte, unsigned long addr,
				unsigned int nr)
{
	if (is_cow_mapping(src_vma->vm_flags) && pte_write(pte)) {
		wrprotect_ptes(src_vma->vm_mm, addr, src_pte, nr);
		pte = pte_wrprotect(pte);
	}
	pte = pte_mkold(pte);
	pte = pte_clear_uffd_wp(pte);	/* the child VMA is never uffd-wp */
	set_ptes(dst_vma->vm_mm, addr, dst_pte, pte, nr);
}

/*
 * Copy the present PTE at @src_pte; returns how many PTEs were handled,
 * or -EAGAIN when a preallocated page is needed first.
 */
static int copy_present_ptes(struct vm_area_struct *dst_vma,
			     struct vm_area_struct *src_vma, pte_t *dst_pte,
			     pte_t *src_pte, pte_t pte, unsigned long addr,
			     int max_nr, struct folio **prealloc)
{
	struct page *page = vm_normal_page(src_vma, addr, pte);
	struct folio *folio;
	int nr = 1;

	if (!page) {
		__copy_present_ptes(dst_vma, src_vma, dst_pte, src_pte, pte, addr, 1);
		return 1;
	}
	folio = page_folio(page);
	/*
	 * fork_batch: share a whole run of a large folio at once.  Not while
	 * a preallocated page is held: that means an exclusive page of a
	 * maybe-pinned folio needs copying, which goes page by page.
	 */
	if (machine.variant.fork_batch && !*prealloc &&
	    folio_test_large(folio) && max_nr > 1) {
		fpb_t flags = FPB_MERGE_WRITE;

		/* The child inherits per-PTE dirty (and soft-dirty if tracked). */
		if (!(src_vma->vm_flags & VM_SHARED))
			flags |= FPB_RESPECT_DIRTY;
		if (vma_soft_dirty_enabled(src_vma))
			flags |= FPB_RESPECT_SOFT_DIRTY;
		nr = (int)folio_pte_batch_flags(folio, src_vma, src_pte, &pte,
						(unsigned int)max_nr, flags);
		folio_ref_add(folio, nr);
		if (folio_try_dup_anon_rmap_ptes(folio, page, nr, dst_vma, src_vma)) {
			folio_put_refs(folio, nr);
			return -EAGAIN;
		}
		/* FPB_MERGE_WRITE: one writable PTE makes the parent wrprotect all. */
		__copy_present_ptes(dst_vma, src_vma, dst_pte, src_pte, pte, addr,
				    (unsigned int)nr);
		return nr;
	}
	folio_get(folio);
	if (folio_try_dup_anon_rmap_ptes(folio, page, nr, dst_vma, src_vma)) {
		/* Exclusive page of a maybe-pinned folio: copy it now. */
		folio_put(folio);
		return copy_present_page(dst_vma, dst_pte, addr, prealloc, page)
			? -EAGAIN : 1;
	}
	__copy_present_ptes(dst_vma, src_vma, dst_pte, src_pte, pte, addr, nr);
	return nr;
}

static int copy_pte_range(struct vm_area_struct *dst_vma,
			  struct vm_area_struct *src_vma, pmd_t *dst_pmd,
			  pmd_t *src_pmd, unsigned long addr, unsigned long end)
{
	struct folio *prealloc = NULL;
	int ret;

again:
	ret = 0;
	if (pmd_none(pmdp_get(dst_pmd)) && __pte_alloc(dst_vma->vm_mm, dst_pmd))
		return -ENOMEM;
	{
		spinlock_t *dst_ptl, *src_ptl;
		pte_t *dst_pte = pte_offset_map_lock(dst_vma->vm_mm, dst_pmd,
						     addr, &dst_ptl);
		pte_t *src_pte = pte_offset_map_lock(src_vma->vm_mm, src_pmd,
						     addr, &src_ptl);
		pte_t *dst_start = dst_pte, *src_start = src_pte;
		int nr;

		do {
			pte_t ptent = ptep_get(src_pte);

			nr = 1;
			if (pte_none(ptent))
				continue;
			count_stat(pte_batch);
			ret = copy_present_ptes(dst_vma, src_vma, dst_pte,
						src_pte, ptent, addr,
						(int)((end - addr) >> PAGE_SHIFT),
						&prealloc);
			if (ret == -EAGAIN)
				break;
			/*
			 * A preallocated page still held after a successful
			 * copy was not needed after all (the pin it was for
			 * went away meanwhile): release it now, as Linux does,
			 * so the next PTEs may batch again instead of going
			 * page by page for the rest of the range.
			 */
			if (unlikely(prealloc)) {
				folio_put(prealloc);
				prealloc = NULL;
			}
			nr = ret;
			ret = 0;
		} while (dst_pte += nr, src_pte += nr, addr += nr * PAGE_SIZE,
			 addr != end);
		pte_unmap_unlock(src_start, src_ptl);
		pte_unmap_unlock(dst_start, dst_ptl);
	}
	if (ret == -EAGAIN) {
		prealloc = folio_alloc(0);
		if (!prealloc)
			return -ENOMEM;
		hook_fork_prealloc();
		goto again;
	}
	if (prealloc)
		folio_put(prealloc);
	return 0;
}

int copy_page_range(struct vm_area_struct *dst_vma,
		    struct vm_area_struct *src_vma)
{
	struct mm_struct *src_mm = src_vma->vm_mm;
	unsigned long addr, next, end = src_vma->vm_end;
	const bool is_cow = is_cow_mapping(src_vma->vm_flags);
	int ret = 0;

	/* vma_needs_copy(): nothing was ever faulted in. */
	if (!src_vma->anon_vma)
		return 0;
	/*
	 * raw_write_seqcount_begin(&src_mm->write_protect_seq): a concurrent
	 * GUP-fast PIN sees the odd count (or its change) and backs off.
	 */
	if (is_cow) {
		atomic_fetch_add_explicit(&src_mm->write_protect_seq, 1,
					  memory_order_seq_cst);
		/*
		 * What the locked write-protect of the first PTE gives on
		 * x86 (the kernel's RMW after the seqcount's store).  Pairs
		 * with the barrier after the pin in try_grab_folio_fast():
		 * either this fork sees the pin (folio_maybe_dma_pinned) or
		 * GUP-fast sees the odd count.
		 */
		smp_mb__after_atomic();
	}
	for (addr = src_vma->vm_start; addr < end; addr = next) {
		pmd_t *src_pmd = walk_to_pmd(src_mm, addr), *dst_pmd;
		pmd_t pmd;

		next = pmd_addr_end(addr, end);
		if (!src_pmd)
			continue;
		pmd = pmdp_get(src_pmd);
		if (pmd_none(pmd))
			continue;
		dst_pmd = pmd_alloc_walk(dst_vma->vm_mm, addr);
		if (!dst_pmd) {
			ret = -ENOMEM;
			break;
		}
		if (pmd_leaf(pmd)) {
			ret = copy_huge_pmd(dst_vma, src_vma, dst_pmd, src_pmd, addr);
			if (ret == -ENOMEM)
				break;
			if (!ret)
				continue;
			/* -EAGAIN: split in the parent, copy its PTEs. */
			ret = 0;
		}
		ret = copy_pte_range(dst_vma, src_vma, dst_pmd, src_pmd, addr, next);
		if (ret)
			break;
	}
	/* raw_write_seqcount_end(): the PTE changes are visible first. */
	if (is_cow)
		atomic_fetch_add_explicit(&src_mm->write_protect_seq, 1,
					  memory_order_seq_cst);
	return ret;
}
