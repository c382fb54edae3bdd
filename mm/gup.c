// SPDX-License-Identifier: GPL-2.0-only
/*
 * gup.c: get_user_pages and pinning (mm/gup.c) - the slow path that walks
 * under mmap_lock and faults pages in, GUP-fast that walks without locks
 * under RCU with speculative references, and unpin.
 *
 * Reference accounting: FOLL_GET adds one ref per page; FOLL_PIN adds one
 * ref and one _pincount per page on large folios, GUP_PIN_COUNTING_BIAS
 * refs per page on small ones.  The shared 4K zero page is never pinned;
 * the huge zero folio is, as any large folio (only is_zero_folio() is
 * exempt).
 */
#include <urcu.h>

#include "mm/pte_batch.h"

/*
 * is_zero_folio(): the shared 4K zero page, on which anything PIN-related
 * is a no-op: it is mapped everywhere and never freed, so its refcount
 * would only be contended.  The huge zero folio is not one: a FOLL_PIN
 * of it takes references and a _pincount, and the pin node stats move,
 * as they do for any large folio.
 */
static inline bool is_zero_folio(const struct folio *folio)
{
	return is_zero_pfn(folio_pfn(folio));
}

/*
 * gup_unshared_pages(): how many of the @nr pages from @page (pages of
 * @folio) a read-only pin may take without unsharing them first.  Only
 * FOLL_PIN without FOLL_WRITE cares: anon pages must be exclusive; a
 * non-anon page in a COW mapping must be unshared for FOLL_LONGTERM
 * (GUP-fast, with no VMA, cannot tell and takes none).  It starts at
 * @page, the page the run starts at - never the folio's head.
 */
static unsigned long gup_unshared_pages(struct vm_area_struct *vma,
					unsigned int flags, struct folio *folio,
					struct page *page, unsigned long nr)
{
	if ((flags & (FOLL_WRITE | FOLL_PIN)) != FOLL_PIN)
		return nr;
	/* folio_test_anon(folio) is stable until the folio is freed. */
	if (!folio_test_anon(folio)) {
		if (!(flags & FOLL_LONGTERM))
			return nr;
		if (!vma || is_cow_mapping(vma->vm_flags))
			return 0;
		return nr;
	}
	/* smp_rmb(): pairs with the sharer's barrier before clearing PAE. */
	atomic_thread_fence(memory_order_acquire);
	return page_anon_exclusive_sub_batch(page, nr, true);
}

/* Must a read-only pin of @page unshare it first? */
bool gup_must_unshare(struct vm_area_struct *vma, unsigned int flags,
		      struct page *page)
{
	return gup_unshared_pages(vma, flags, page_folio(page), page, 1) != 1;
}

/* Take the pin part of a grab: a folio reference is already held. */
static void grab_pin(struct folio *folio, int refs)
{
	if (folio_has_pincount(folio)) {
		count_stat(pincount_atomic);
		folio_touch_large(folio);
		atomic_fetch_add_explicit(&folio->_pincount, refs,
					  memory_order_relaxed);
	} else {
		folio_ref_add(folio, refs * (GUP_PIN_COUNTING_BIAS - 1));
	}
}

/*
 * try_grab_folio_fast(): the speculative reference of GUP-fast.  The
 * folio may be freed or split under us: add-unless-zero, then check the
 * page still belongs to it.
 */
static struct folio *try_grab_folio_fast(struct page *page, int refs,
					 unsigned int flags)
{
	struct folio *folio;

	count_stat(gup_fast_grab);
	if (flags & FOLL_PIN) {
		folio = page_folio(page);
		if (is_zero_folio(folio))
			return folio;
	}
	for (;;) {
		folio = page_folio(page);
		if (!folio_ref_try_add(folio, refs))
			return NULL;
		if (likely(page_folio(page) == folio))
			break;
		folio_put_refs(folio, refs);
	}
	if (flags & FOLL_GET)
		return folio;
	grab_pin(folio, refs);
	node_stat_mod(NR_FOLL_PIN_ACQUIRED, refs);
	/*
	 * The pin is visible before we re-check the PTE; pairs with the
	 * barrier in folio_try_share_anon_rmap_*().
	 */
	smp_mb__after_atomic();
	return folio;
}

/* try_grab_folio(): slow path, a reference is already held or stable. */
static int try_grab_folio(struct folio *folio, int refs, unsigned int flags)
{
	if (folio_ref_count(folio) <= 0)
		return -ENOMEM;
	/* MADV_POPULATE and MAP_POPULATE fault pages in and take nothing. */
	if (!(flags & (FOLL_GET | FOLL_PIN)))
		return 0;
	if (flags & FOLL_GET) {
		folio_ref_add(folio, refs);
		return 0;
	}
	if (is_zero_folio(folio))
		return 0;
	if (folio_has_pincount(folio)) {
		folio_ref_add(folio, refs);
		grab_pin(folio, refs);
	} else {
		folio_ref_add(folio, refs * GUP_PIN_COUNTING_BIAS);
	}
	node_stat_mod(NR_FOLL_PIN_ACQUIRED, refs);
	return 0;
}

static void gup_put_folio(struct folio *folio, int refs, unsigned int flags)
{
	if (flags & FOLL_PIN) {
		if (is_zero_folio(folio))
			return;
		node_stat_mod(NR_FOLL_PIN_RELEASED, refs);
		if (folio_has_pincount(folio)) {
			count_stat(pincount_atomic);
			folio_touch_large(folio);
			atomic_fetch_sub_explicit(&folio->_pincount, refs,
						  memory_order_relaxed);
		} else {
			refs *= GUP_PIN_COUNTING_BIAS;
		}
	}
	folio_put_refs(folio, refs);
}

/* ---- GUP-fast ---- */

/* Fill @nr entries of pages[] with consecutive pages from @page. */
static inline void record_pages(struct page **pages, struct page *page,
				unsigned long nr)
{
	unsigned long i;

	for (i = 0; i < nr; i++)
		pages[i] = page + i;
}

/*
 * gup_batch_recheck: what the per-PTE walk does for every page - re-check
 * the PMD and the PTE after the reference is held - done for the batch
 * after its bulk grab.  The scan read the batch's PTEs before their
 * references were taken; a PTE or the PMD that changed in between is seen
 * here, and the batch is cut before it with the extra references given
 * back.  Without it (the GUP-fast batching as posted) such a page is
 * still returned: it was mapped when the scan read it, and the folio
 * reference taken for the first page kept it from being freed or split,
 * but the per-PTE walk would have refused it.
 */
static unsigned long gup_fast_batch_recheck(struct folio *folio, pmd_t pmd,
					    pmd_t *pmdp, pte_t *ptep, pte_t pte,
					    unsigned long nr, unsigned int flags)
{
	unsigned long same;
	pte_t copy = pte;

	if (unlikely(!pmd_same(pmd, pmdp_get_lockless(pmdp))))
		same = 1;
	else
		same = folio_pte_batch_flags(folio, NULL, ptep, &copy,
					     (unsigned int)nr,
					     FPB_LOCKLESS | FPB_RESPECT_WRITE);
	if (same < nr)
		gup_put_folio(folio, (int)(nr - same), flags);
	return same;
}

/*
 * gup_fast_pte_batch(): with gup_batch, extend a run whose first page is
 * grabbed and re-checked over the following PTEs of the same large folio
 * with the same protection (read as a lockless walker must), cut a
 * read-only run at the first page a pin would have to unshare, and take
 * the run's other references with one grab.  Returns the run length, 0 if
 * the grab failed (the caller drops the first reference).  The folio
 * cannot be freed or split meanwhile: we hold a reference.
 */
static unsigned long __attribute__((noinline))
gup_fast_pte_batch_large(struct folio *folio, struct page *page, pmd_t pmd,
			 pmd_t *pmdp, pte_t *ptep, pte_t pte,
			 unsigned long max_nr, unsigned int flags)
{
	unsigned long nr;
	pte_t copy = pte;

	/*
	 * FPB_LOCKLESS: we hold no PTL, so the entries may change as they are
	 * read.  Only the hooks build can drop it, for a test that shows what
	 * it prevents; elsewhere the flags are constant.
	 */
	nr = folio_pte_batch_flags(folio, NULL, ptep, &copy, (unsigned int)max_nr,
				   pb_hook_gup_batch_plain ? FPB_RESPECT_WRITE :
				   FPB_LOCKLESS | FPB_RESPECT_WRITE);
	/* A writable anon PTE implies an exclusive page; a read-only one not. */
	if (nr > 1 && !pte_write(pte))
		nr = gup_unshared_pages(NULL, flags, folio, page, nr);
	if (nr == 1)
		return 1;
	/* As the batching was posted: a failed bulk grab keeps the first page. */
	if (try_grab_folio(folio, (int)nr - 1, flags))
		return 1;
	hook_gup_fast(GUP_STEP_BATCH_GRABBED, ptep, (unsigned int)nr);
	if (machine.variant.gup_batch_recheck)
		nr = gup_fast_batch_recheck(folio, pmd, pmdp, ptep, pte, nr, flags);
	return nr;
}

static inline unsigned long gup_fast_pte_batch(struct folio *folio,
					       struct page *page, pmd_t pmd,
					       pmd_t *pmdp, pte_t *ptep,
					       pte_t pte, unsigned long max_nr,
					       unsigned int flags)
{
	/*
	 * Order-0 pages keep their per-page cost: the order sits in the
	 * folio's line that the grab just wrote, so asking is free (the
	 * head page's PG_head would be a second line per page), and the
	 * scan lives out of line so the per-PTE loop stays as it was.
	 */
	if (!machine.variant.gup_batch || !folio_order(folio) || max_nr == 1)
		return 1;
	return gup_fast_pte_batch_large(folio, page, pmd, pmdp, ptep, pte,
					max_nr, flags);
}

/*
 * Per PTE, in address order: read locklessly, check, grab speculatively,
 * re-check PMD and PTE, then the unshare rule; with gup_batch the checked
 * PTE starts a run.  Any failure stops the walk with what was taken so
 * far kept; the slow path does the rest.
 */
static int gup_fast_pte_range(pmd_t pmd, pmd_t *pmdp, unsigned long addr,
			      unsigned long end, unsigned int flags,
			      struct page **pages, unsigned long *nr)
{
	pte_t *ptep = pte_offset(pmd, addr);
	unsigned long npages;

	do {
		pte_t pte = ptep_get_lockless(ptep);
		struct folio *folio;
		struct page *page;

		hook_gup_fast(GUP_STEP_PTE_READ, ptep, 0);
		count_stat(pte_batch);
		npages = 1;
		if (pte_protnone(pte))
			return 0;
		if (!pte_access_permitted(pte, flags & FOLL_WRITE))
			return 0;
		if (pte_special(pte))
			return 0;
		page = pte_page(pte);
		folio = try_grab_folio_fast(page, 1, flags);
		if (!folio)
			return 0;
		hook_gup_fast(GUP_STEP_GRABBED, ptep, 0);
		if (unlikely(!pmd_same(pmd, pmdp_get_lockless(pmdp))) ||
		    unlikely(!pte_same(pte, ptep_get_lockless(ptep)))) {
			gup_put_folio(folio, 1, flags);
			return 0;
		}
		if (!pte_write(pte) && gup_must_unshare(NULL, flags, page)) {
			gup_put_folio(folio, 1, flags);
			return 0;
		}
		hook_gup_fast(GUP_STEP_RECHECKED, ptep, 0);
		npages = gup_fast_pte_batch(folio, page, pmd, pmdp, ptep, pte,
					    (end - addr) >> PAGE_SHIFT, flags);
		/* Test before setting: a load right after the locked op is costly. */
		if (!folio_test(folio, PG_referenced))
			folio_set_flag(folio, PG_referenced);
		record_pages(pages + *nr, page, npages);
		*nr += npages;
	} while (ptep += npages, addr += npages * PAGE_SIZE, addr != end);
	return 1;
}

static int gup_fast_pmd_leaf(pmd_t orig, pmd_t *pmdp, unsigned long addr,
			     unsigned long end, unsigned int flags,
			     struct page **pages, unsigned long *nr)
{
	unsigned long refs = (end - addr) >> PAGE_SHIFT;
	struct folio *folio;
	struct page *page;

	if (pmd_protnone(orig))
		return 0;
	if (!pte_access_permitted(pmd_pte(orig), flags & FOLL_WRITE))
		return 0;
	if (pmd_special(orig))
		return 0;
	page = pfn_to_page(pmd_pfn(orig) + ((addr & ~PMD_MASK) >> PAGE_SHIFT));
	folio = try_grab_folio_fast(page, (int)refs, flags);
	if (!folio)
		return 0;
	if (unlikely(!pmd_same(orig, pmdp_get_lockless(pmdp)))) {
		gup_put_folio(folio, (int)refs, flags);
		return 0;
	}
	/* PMD-mapped: exclusivity lives on the head page. */
	if (!pmd_write(orig) && gup_must_unshare(NULL, flags, folio_page(folio, 0))) {
		gup_put_folio(folio, (int)refs, flags);
		return 0;
	}
	record_pages(pages + *nr, page, refs);
	*nr += refs;
	folio_set_flag(folio, PG_referenced);
	return 1;
}

/*
 * gup_fast(): the lockless walk.  rcu_read_lock() stands for the
 * kernel's local_irq_save(): page tables are freed only after a grace
 * period, so every table we reach stays valid until we leave.  A PIN
 * backs off if fork runs concurrently (write_protect_seq).
 */
static unsigned long gup_fast(struct mm_struct *mm, unsigned long start,
			      unsigned long end, unsigned int flags,
			      struct page **pages)
{
	unsigned long nr = 0, addr = start, next;
	unsigned int seq = 0;

	if (flags & FOLL_PIN) {
		/* raw_read_seqcount(): acquire, as its smp_rmb(). */
		seq = atomic_load_explicit(&mm->write_protect_seq,
					   memory_order_acquire);
		if (seq & 1)
			return 0;
	}
	rcu_read_lock();
	for (; addr < end; addr = next) {
		pmd_t *pmdp = walk_to_pmd(mm, addr);
		pmd_t pmd;

		next = pmd_addr_end(addr, end);
		if (!pmdp)
			break;
		pmd = pmdp_get_lockless(pmdp);
		if (pmd_none(pmd))
			break;
		if (pmd_leaf(pmd)) {
			if (!gup_fast_pmd_leaf(pmd, pmdp, addr, next, flags,
					       pages, &nr))
				break;
		} else if (!gup_fast_pte_range(pmd, pmdp, addr, next, flags,
					       pages, &nr)) {
			break;
		}
	}
	rcu_read_unlock();
	if ((flags & FOLL_PIN) &&
	    atomic_load_explicit(&mm->write_protect_seq, memory_order_acquire) != seq) {
		/*
		 * read_seqcount_retry() (its smp_rmb() is the acquire): raced
		 * with fork, pages may now be shared.  Give them back.
		 */
		unpin_user_pages_dirty_lock(pages, nr, false);
		return 0;
	}
	count_stat_n(gup_fast_pages, nr);
	return nr;
}

/* ---- the slow path ---- */

static int check_vma_flags(struct vm_area_struct *vma, unsigned int flags)
{
	if (flags & FOLL_WRITE) {
		if (!(vma->vm_flags & VM_WRITE) || (vma->vm_flags & VM_SHADOW_STACK))
			return -EFAULT;
	} else if (!(vma->vm_flags & VM_READ)) {
		return -EFAULT;
	}
	return 0;
}

/*
 * follow_page_mask(): the page at @addr if GUP may take it as it is;
 * NULL when a fault must come first; ERR -EMLINK when a read-only pin must
 * unshare.  For a PMD mapping, *page_mask says how far the folio goes.
 */
static struct page *follow_page_mask(struct vm_area_struct *vma,
				     unsigned long addr, unsigned int flags,
				     unsigned long *page_mask, int *err)
{
	struct mm_struct *mm = vma->vm_mm;
	pmd_t *pmdp = walk_to_pmd(mm, addr);
	struct page *page;
	spinlock_t *ptl;
	pte_t *ptep, pte;

	*page_mask = 0;
	*err = 0;
	if (!pmdp || pmd_none(pmdp_get(pmdp)))
		return NULL;
	if (pmd_leaf(pmdp_get(pmdp))) {
		pmd_t pmd;

		ptl = pmd_lock(mm, pmdp);
		pmd = pmdp_get(pmdp);
		if (!pmd_leaf(pmd)) {
			spin_unlock(ptl);
			return follow_page_mask(vma, addr, flags, page_mask, err);
		}
		if (pmd_protnone(pmd) ||
		    ((flags & FOLL_WRITE) && !pmd_write(pmd))) {
			spin_unlock(ptl);
			return NULL;
		}
		page = pfn_to_page(pmd_pfn(pmd));
		if (!pmd_write(pmd) && gup_must_unshare(vma, flags, page)) {
			spin_unlock(ptl);
			*err = -EMLINK;
			return NULL;
		}
		page += (addr & ~PMD_MASK) >> PAGE_SHIFT;
		*err = try_grab_folio(page_folio(page), 1, flags);
		spin_unlock(ptl);
		if (*err)
			return NULL;
		*page_mask = HPAGE_PMD_NR - 1;
		return page;
	}
	ptep = pte_offset_map_lock(mm, pmdp, addr, &ptl);
	if (!ptep)
		return follow_page_mask(vma, addr, flags, page_mask, err);
	pte = ptep_get(ptep);
	page = NULL;
	if (!pte_present(pte) || pte_protnone(pte))
		goto out;
	if ((flags & FOLL_WRITE) && !pte_write(pte))
		goto out;
	page = vm_normal_page(vma, addr, pte);
	if (!page) {
		if (!is_zero_pfn(pte_pfn(pte))) {
			*err = -EFAULT;
			goto out;
		}
		page = pte_page(pte);
	}
	if (!pte_write(pte) && gup_must_unshare(vma, flags, page)) {
		*err = -EMLINK;
		page = NULL;
		goto out;
	}
	*err = try_grab_folio(page_folio(page), 1, flags);
	if (*err) {
		page = NULL;
		goto out;
	}
	/* FOLL_TOUCH: a dirty PTE already says so; else the folio must. */
	if ((flags & FOLL_WRITE) && !pte_dirty(pte) &&
	    !folio_test_zero(page_folio(page)))
		folio_set_flag(page_folio(page), PG_dirty);
	folio_set_flag(page_folio(page), PG_referenced);
out:
	pte_unmap_unlock(ptep, ptl);
	return page;
}

/* faultin_page(): a write fault for FOLL_WRITE, an unshare fault for -EMLINK. */
static int faultin_page(struct vm_area_struct *vma, unsigned long addr,
			unsigned int flags, bool unshare)
{
	unsigned int fault_flags = FAULT_FLAG_REMOTE;
	vm_fault_t ret;

	if (flags & FOLL_WRITE)
		fault_flags |= FAULT_FLAG_WRITE;
	if (unshare)
		fault_flags |= FAULT_FLAG_UNSHARE;
	ret = handle_mm_fault(vma, addr, fault_flags);
	if (ret & VM_FAULT_OOM)
		return -ENOMEM;
	if (ret & VM_FAULT_ERROR)
		return -EFAULT;
	return 0;
}

/*
 * __get_user_pages() with mmap_lock held: look each page up, fault it in
 * (or unshare it) when it is not usable as it is, and take the references
 * - none, and @pages may be NULL, without FOLL_GET or FOLL_PIN (populate).
 * Returns the number of pages done, or an error if none was.
 */
static long __get_user_pages_locked(struct mm_struct *mm, unsigned long start,
				    unsigned long nr_pages, unsigned int flags,
				    struct page **pages)
{
	unsigned long i = 0;
	long ret = 0;

	while (i < nr_pages) {
		unsigned long addr = start + (i << PAGE_SHIFT), page_mask, increm;
		struct vm_area_struct *vma = vma_lookup(mm, addr);
		struct page *page;
		int err;

		/*
		 * MADV_POPULATE_(READ|WRITE) reports a hole as -ENOMEM and a
		 * VMA that forbids the access as -EINVAL, as madvise does.
		 */
		if (!vma) {
			ret = (flags & FOLL_MADV_POPULATE) ? -ENOMEM : -EFAULT;
			break;
		}
		ret = check_vma_flags(vma, flags);
		if (ret) {
			if (flags & FOLL_MADV_POPULATE)
				ret = -EINVAL;
			break;
		}
		page = follow_page_mask(vma, addr, flags, &page_mask, &err);
		if (!page) {
			if (err && err != -EMLINK) {
				ret = err;
				break;
			}
			ret = faultin_page(vma, addr, flags, err == -EMLINK);
			if (ret)
				break;
			continue;
		}
		increm = 1 + (~(addr >> PAGE_SHIFT) & page_mask);
		increm = min(increm, nr_pages - i);
		if (increm > 1 &&
		    try_grab_folio(page_folio(page), (int)increm - 1, flags)) {
			gup_put_folio(page_folio(page), 1, flags);
			ret = -ENOMEM;
			break;
		}
		for (unsigned long j = 0; pages && j < increm; j++)
			pages[i + j] = page + j;
		i += increm;
	}
	count_stat_n(gup_slow_pages, i);
	return i ? (long)i : ret;
}

static long __get_user_pages(struct mm_struct *mm, unsigned long start,
			     unsigned long nr_pages, unsigned int flags,
			     struct page **pages)
{
	long ret;

	pthread_rwlock_rdlock(&mm->mmap_lock);
	ret = __get_user_pages_locked(mm, start, nr_pages, flags, pages);
	pthread_rwlock_unlock(&mm->mmap_lock);
	return ret;
}

/*
 * faultin_page_range(): MADV_POPULATE_READ/WRITE, with mmap_lock held for
 * read.  Every page of [start, end) is faulted in as a read or a write
 * access would fault it (the zero page for a read of anon memory, a new
 * folio for a write), and the faults are the caller's.  Returns the pages
 * done, or an error if none was.
 */
long faultin_page_range(struct mm_struct *mm, unsigned long start,
			unsigned long end, bool write)
{
	unsigned int flags = FOLL_TOUCH | FOLL_MADV_POPULATE;

	if (write)
		flags |= FOLL_WRITE;
	return __get_user_pages_locked(mm, start, (end - start) >> PAGE_SHIFT,
				       flags, NULL);
}

/*
 * populate_vma_page_range(): MAP_POPULATE of [start, end) of @vma, with
 * mmap_lock held.  A private writable mapping is faulted in for write
 * (to break COW up front), anything else for read; an inaccessible one
 * is left alone.  Returns the pages done or an error, which mmap ignores.
 */
long populate_vma_page_range(struct vm_area_struct *vma, unsigned long start,
			     unsigned long end)
{
	unsigned int flags = FOLL_TOUCH;

	if (!(vma->vm_flags & (VM_READ | VM_WRITE | VM_EXEC)))
		return -EFAULT;
	if ((vma->vm_flags & (VM_WRITE | VM_SHARED)) == VM_WRITE)
		flags |= FOLL_WRITE;
	return __get_user_pages_locked(vma->vm_mm, start,
				       (end - start) >> PAGE_SHIFT, flags, NULL);
}

/*
 * __mm_populate(): MAP_POPULATE of [start, end), VMA by VMA, with
 * mmap_lock held for read.  Errors are ignored, as mmap ignores them: a
 * page that cannot be faulted in now will be at its first access.
 */
void __mm_populate(struct mm_struct *mm, unsigned long start, unsigned long end)
{
	unsigned long nstart, nend;

	for (nstart = start; nstart < end; nstart = nend) {
		struct vm_area_struct *vma = find_vma(mm, nstart);
		long ret;

		if (!vma || vma->vm_start >= end)
			break;
		nend = min(end, vma->vm_end);
		nstart = max(nstart, vma->vm_start);
		ret = populate_vma_page_range(vma, nstart, nend);
		if (ret > 0)
			nend = nstart + ((unsigned long)ret << PAGE_SHIFT);
	}
}

/*
 * gup_fast_fallback(): GUP-fast for as much as it can, then the slow path
 * from where it stopped.  Returns pages taken or a negative error; the
 * argument checks come in Linux's order.
 */
long get_user_pages_fast_flags(struct mm_struct *mm, unsigned long start,
			       unsigned long nr_pages, unsigned int gup_flags,
			       struct page **pages)
{
	unsigned long nr_pinned, len, end;
	long ret;

	if (!!(gup_flags & FOLL_GET) == !!(gup_flags & FOLL_PIN))
		return -EINVAL;
	if ((gup_flags & FOLL_LONGTERM) && !(gup_flags & FOLL_PIN))
		return -EINVAL;
	/*
	 * MMF_HAS_PINNED goes up before the range is checked.  The range
	 * starts at @start's page; one that wraps is -EOVERFLOW, one that
	 * ends past the address space -EFAULT, even with no page asked for.
	 */
	if (gup_flags & FOLL_PIN)
		atomic_store(&mm->has_pinned, true);
	start &= PAGE_MASK;
	len = nr_pages << PAGE_SHIFT;
	end = start + len;
	if (end < start)
		return -EOVERFLOW;
	if (end > TASK_SIZE)
		return -EFAULT;
	if (!nr_pages)
		return 0;
	nr_pinned = gup_fast(mm, start, end, gup_flags, pages);
	if (nr_pinned == nr_pages || (gup_flags & FOLL_FAST_ONLY))
		return (long)nr_pinned;
	ret = __get_user_pages(mm, start + (nr_pinned << PAGE_SHIFT),
			       nr_pages - nr_pinned, gup_flags | FOLL_TOUCH,
			       pages + nr_pinned);
	if (ret < 0)
		return nr_pinned ? (long)nr_pinned : ret;
	return ret + (long)nr_pinned;
}

/*
 * Release runs of consecutive entries of the same folio with one put
 * each (gup_folio_next); mark the folio dirty first if asked.
 */
static void release_pages_runs(struct page **pages, unsigned long npages,
			       unsigned int flags, bool make_dirty)
{
	unsigned long i = 0;

	while (i < npages) {
		struct folio *folio = page_folio(pages[i]);
		unsigned long n = 1;

		while (i + n < npages && page_folio(pages[i + n]) == folio)
			n++;
		if (make_dirty && !folio_test_zero(folio))
			folio_set_flag(folio, PG_dirty);
		gup_put_folio(folio, (int)n, flags);
		i += n;
	}
}

void unpin_user_pages_dirty_lock(struct page **pages, unsigned long npages,
				 bool make_dirty)
{
	release_pages_runs(pages, npages, FOLL_PIN, make_dirty);
}

void put_user_pages_refs(struct page **pages, unsigned long npages)
{
	release_pages_runs(pages, npages, FOLL_GET, false);
}
