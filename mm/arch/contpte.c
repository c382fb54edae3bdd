// SPDX-License-Identifier: GPL-2.0-only
/*
 * contpte.c: the out-of-line half of arm64's contiguous-PTE management
 * (arch/arm64/mm/contpte.c; the rules are listed in mm/arch/contpte.h),
 * and __ptep_set_access_flags()
 * (arch/arm64/mm/fault.c).  Compiled only for arm64 (Makefile).
 *
 * Counters: contpte_convert counts every repaint of a block (fold or
 * unfold), contpte_fold the folds among them; each entry access is in
 * pte_read/pte_write and each block invalidation in tlb_flush.
 */
#include "mm/pgtable.h"
#include "mm/tlb.h"

static unsigned long pte_cont_addr_end(unsigned long addr, unsigned long end)
{
	unsigned long boundary = (addr + CONT_PTE_SIZE) & CONT_PTE_MASK;

	return boundary - 1 < end - 1 ? boundary : end;
}

/*
 * contpte_convert(): repaint the block around @ptep with @pte's attributes
 * - CONT set for a fold, clear for an unfold.  The entries are cleared
 * first, collecting the access and dirty bits the MMU may have set in any
 * of them; then the block's translations are invalidated, because the TLB
 * must never hold a contiguous and a non-contiguous translation of one
 * address at once (a TLB conflict abort; BBML2 CPUs that may skip this are
 * not modelled); only then is the block rewritten.  A lockless walker in
 * between sees none entries and faults, and its fault waits for our PTL.
 */
static void contpte_convert(struct mm_struct *mm, unsigned long addr,
			    pte_t *ptep, pte_t pte)
{
	pte_t *start_ptep = contpte_align_down(ptep);
	unsigned long start_addr = ALIGN_DOWN(addr, CONT_PTE_SIZE);
	unsigned int i;

	count_stat(contpte_convert);
	pte = pfn_pte(ALIGN_DOWN(pte_pfn(pte), CONT_PTES), pte_pgprot(pte));
	for (i = 0; i < CONT_PTES; i++) {
		pte_t ptent = __ptep_get_and_clear(start_ptep + i);

		if (pte_dirty(ptent))
			pte = pte_mkdirty(pte);
		if (pte_young(ptent))
			pte = pte_mkyoung(pte);
	}
	flush_tlb_range(mm, start_addr, start_addr + CONT_PTE_SIZE);
	__set_ptes(start_ptep, pte, CONT_PTES);
}

/*
 * contpte_try_fold() found @ptep to be the last entry of an aligned block
 * with an aligned PFN.  Fold if the block lies inside one folio and every
 * entry maps the next page with the same attributes apart from access and
 * dirty (the folded block has one of each: the OR of them all).  The
 * folio is checked from @pte's page, as arm64 does: there is no VMA here.
 */
void __contpte_try_fold(struct mm_struct *mm, unsigned long addr,
			pte_t *ptep, pte_t pte)
{
	struct page *page = pte_page(pte);
	struct folio *folio = page_folio(page);
	unsigned long folio_start = addr - (pte_pfn(pte) - folio_pfn(folio)) * PAGE_SIZE;
	unsigned long folio_end = folio_start + folio_size(folio);
	unsigned long cont_start = ALIGN_DOWN(addr, CONT_PTE_SIZE);
	pte_t expected_pte, *p = contpte_align_down(ptep);
	unsigned int i;

	if (folio_start > cont_start || folio_end < cont_start + CONT_PTE_SIZE)
		return;
	expected_pte = pfn_pte(ALIGN_DOWN(pte_pfn(pte), CONT_PTES),
			       pte_pgprot(pte_mkold(pte_mkclean(pte))));
	for (i = 0; i < CONT_PTES; i++, p++) {
		if (!pte_same(pte_mkold(pte_mkclean(__ptep_get(p))), expected_pte))
			return;
		expected_pte = pte_advance_pfn(expected_pte, 1);
	}
	count_stat(contpte_fold);
	contpte_convert(mm, addr, ptep, pte_mkcont(pte));
}

/* contpte_try_unfold() found @pte folded: repaint its block as 16 entries. */
void __contpte_try_unfold(struct mm_struct *mm, unsigned long addr,
			  pte_t *ptep, pte_t pte)
{
	contpte_convert(mm, addr, ptep, pte_mknoncont(pte));
}

/*
 * Unfold the blocks that [@ptep, @ptep + @nr) covers only partly: at most
 * the first and the last.  Whole blocks may be changed as a unit.
 */
static void contpte_try_unfold_partial(struct mm_struct *mm, unsigned long addr,
				       pte_t *ptep, unsigned int nr)
{
	if (ptep != contpte_align_down(ptep) || nr < CONT_PTES)
		contpte_try_unfold(mm, addr, ptep, __ptep_get(ptep));
	if (ptep + nr != contpte_align_down(ptep + nr)) {
		unsigned long last_addr = addr + PAGE_SIZE * (nr - 1);
		pte_t *last_ptep = ptep + nr - 1;

		contpte_try_unfold(mm, last_addr, last_ptep, __ptep_get(last_ptep));
	}
}

/*
 * The access and dirty bits of a folded block live in whichever entries
 * the MMU used: OR them into @orig_pte.  Reading stops as soon as both
 * are found, so a young and dirty block costs one more read, a clean and
 * old one CONT_PTES.
 */
pte_t contpte_ptep_get(pte_t *ptep, pte_t orig_pte)
{
	bool young = false, dirty = false;
	unsigned int i;

	ptep = contpte_align_down(ptep);
	for (i = 0; i < CONT_PTES && !(young && dirty); i++) {
		pte_t pte = __ptep_get(ptep + i);

		young |= pte_young(pte);
		dirty |= pte_dirty(pte);
	}
	if (young)
		orig_pte = pte_mkyoung(orig_pte);
	if (dirty)
		orig_pte = pte_mkdirty(orig_pte);
	return orig_pte;
}

/*
 * Without the PTL the block may be unfolded, changed and refolded while
 * it is read, one entry at a time.  Accept a read only when every entry
 * was valid, contiguous, at the expected PFN and had the target's
 * attributes apart from access/dirty; otherwise start again.  An entry
 * that is not (or no longer) contiguous stands on its own.
 */
pte_t contpte_ptep_get_lockless(pte_t *orig_ptep)
{
	pgprot_t orig_prot;
	unsigned long pfn;
	pte_t orig_pte, *ptep;
	unsigned int i;

retry:
	orig_pte = __ptep_get(orig_ptep);
	if (!pte_valid_cont(orig_pte))
		return orig_pte;
	orig_prot = pte_pgprot(pte_mkold(pte_mkclean(orig_pte)));
	ptep = contpte_align_down(orig_ptep);
	pfn = pte_pfn(orig_pte) - (unsigned long)(orig_ptep - ptep);
	for (i = 0; i < CONT_PTES; i++, ptep++, pfn++) {
		pte_t pte = __ptep_get(ptep);

		if (!pte_valid_cont(pte) || pte_pfn(pte) != pfn ||
		    pte_pgprot(pte_mkold(pte_mkclean(pte))).pgprot != orig_prot.pgprot)
			goto retry;
		if (pte_dirty(pte))
			orig_pte = pte_mkdirty(orig_pte);
		if (pte_young(pte))
			orig_pte = pte_mkyoung(orig_pte);
	}
	return orig_pte;
}

/*
 * set_ptes(nr > 1): the entries are none (set_ptes' contract), so nothing
 * needs unfolding; every fully covered block whose VA and PA are aligned
 * is written contiguous, the rest not.  No conversion.
 */
void contpte_set_ptes(struct mm_struct *mm, unsigned long addr,
		      pte_t *ptep, pte_t pte, unsigned int nr)
{
	unsigned long end = addr + ((unsigned long)nr << PAGE_SHIFT), next;
	unsigned long pfn = pte_pfn(pte);
	pgprot_t prot = pte_pgprot(pte);

	(void)mm;
	do {
		next = pte_cont_addr_end(addr, end);
		nr = (unsigned int)((next - addr) >> PAGE_SHIFT);
		pte = pfn_pte(pfn, prot);
		if (((addr | next | (pfn << PAGE_SHIFT)) & ~CONT_PTE_MASK) == 0)
			pte = pte_mkcont(pte);
		else
			pte = pte_mknoncont(pte);
		__set_ptes(ptep, pte, nr);
		addr = next;
		ptep += nr;
		pfn += nr;
	} while (addr != end);
}

/* get_and_clear_full_ptes(nr > 1): whole blocks need no unfold. */
pte_t contpte_get_and_clear_ptes(struct mm_struct *mm, unsigned long addr,
				 pte_t *ptep, unsigned int nr)
{
	contpte_try_unfold_partial(mm, addr, ptep, nr);
	return __get_and_clear_ptes(ptep, nr);
}

/*
 * Write-protecting whole blocks in place needs no unfold: until the
 * caller's flush an entry may or may not look read-only, after it every
 * one does.  A partly covered block would stay mixed after the flush - an
 * unpredictable contiguous block - so it is unfolded first.
 */
void contpte_wrprotect_ptes(struct mm_struct *mm, unsigned long addr,
			    pte_t *ptep, unsigned int nr)
{
	contpte_try_unfold_partial(mm, addr, ptep, nr);
	__wrprotect_ptes(ptep, nr);
}

/*
 * Relax @ptep (last read as @pte) towards @entry: access, write and dirty
 * only ever added, RDONLY only ever removed, in one atomic update so a
 * concurrent hardware AF/dirty update is not lost.  Nothing else of the
 * entry (PFN, CONT) changes.
 */
static void __ptep_relax_access_flags(pte_t *ptep, pte_t pte, pte_t entry)
{
	const uint64_t add = pte_val(entry) & (PTE_AF | PTE_WRITE | PTE_DIRTY);
	const uint64_t drop = PTE_RDONLY & ~pte_val(entry);
	uint64_t old = pte_val(pte);

	while (!entry_cmpxchg(ptep, &old, (old | add) & ~drop))
		;
}

/*
 * arm64 ptep_set_access_flags() of a single entry.  Unlike x86 it flushes
 * after making the entry dirty: a stale read-only TLB entry would fault
 * again, and arm64 does not fix spurious faults with a local flush
 * (broadcast invalidation is the rule).
 */
int __ptep_set_access_flags(struct vm_area_struct *vma, unsigned long addr,
			    pte_t *ptep, pte_t entry, int dirty)
{
	pte_t pte = __ptep_get(ptep);

	if (pte_same(pte, entry))
		return 0;
	__ptep_relax_access_flags(ptep, pte, entry);
	if (dirty)
		flush_tlb_page(vma->vm_mm, addr);
	return 1;
}

/*
 * Does every entry of the block already carry what @entry asks?  Asked of
 * each entry, not of the gathered view: a gathered "young and dirty" says
 * nothing of the entry an SMMU or a CPU without DBM will use (the March
 * 2026 fix of an endless fault loop).
 */
static bool contpte_access_flags_match(pte_t *ptep, pte_t entry)
{
	const uint64_t mask = PTE_RDONLY | PTE_AF | PTE_WRITE | PTE_DIRTY;
	unsigned int i;

	ptep = contpte_align_down(ptep);
	for (i = 0; i < CONT_PTES; i++)
		if ((pte_val(__ptep_get(ptep + i)) & mask) != (pte_val(entry) & mask))
			return false;
	return true;
}

/*
 * ptep_set_access_flags() of a folded entry.  Access and dirty can be
 * fixed up in place on the whole block (one invalidation of the block if
 * dirty); a change of the write bit would leave the block with mixed
 * permissions, so the block is unfolded and only the one entry changed.
 * That unfold is what a one-PTE write-fault reuse after fork pays (mainline,
 * wp_reuse_max = 1).
 */
int contpte_ptep_set_access_flags(struct vm_area_struct *vma,
				  unsigned long addr, pte_t *ptep,
				  pte_t entry, int dirty)
{
	pte_t orig_pte = pte_mknoncont(ptep_get(ptep));
	unsigned long start_addr;
	unsigned int i;

	if (contpte_access_flags_match(ptep, entry))
		return 0;
	if (pte_write(orig_pte) == pte_write(entry)) {
		ptep = contpte_align_down(ptep);
		start_addr = ALIGN_DOWN(addr, CONT_PTE_SIZE);
		for (i = 0; i < CONT_PTES; i++)
			__ptep_set_access_flags(vma, start_addr + i * PAGE_SIZE,
						ptep + i, entry, 0);
		if (dirty)
			flush_tlb_range(vma->vm_mm, start_addr,
					start_addr + CONT_PTE_SIZE);
	} else {
		__contpte_try_unfold(vma->vm_mm, addr, ptep, orig_pte);
		__ptep_set_access_flags(vma, addr, ptep, entry, dirty);
	}
	return 1;
}

/*
 * The batched write-fault reuse (wp_page_reuse()) over @nr entries mapping the
 * consecutive pages @entry starts at.  Blocks covered only partly are
 * unfolded (a block may not end up with mixed write bits); whole blocks
 * are relaxed in place and stay folded - the reverse of
 * contpte_wrprotect_ptes(), and safe for the same reason: until the flush
 * a stale read-only translation only faults spuriously, and that fault
 * waits for our PTL.  One invalidation of the range when dirty, instead
 * of one per entry.
 */
int contpte_set_access_flags_ptes(struct vm_area_struct *vma,
				  unsigned long addr, pte_t *ptep,
				  pte_t entry, unsigned int nr, int dirty)
{
	unsigned long start_addr = addr;
	unsigned int i;
	int changed = 0;

	entry = pte_mknoncont(entry);
	contpte_try_unfold_partial(vma->vm_mm, addr, ptep, nr);
	for (i = 0; i < nr; i++, ptep++, entry = pte_advance_pfn(entry, 1)) {
		pte_t pte = __ptep_get(ptep);

		if (pte_same(pte_mknoncont(pte), entry))
			continue;
		__ptep_relax_access_flags(ptep, pte, entry);
		changed = 1;
	}
	if (changed && dirty)
		flush_tlb_range(vma->vm_mm, start_addr,
				start_addr + ((unsigned long)nr << PAGE_SHIFT));
	return changed;
}

/*
 * arm64's contpte_clear_young_dirty_ptes(): access and dirty may be
 * cleared in a folded block without unfolding it, so a range that starts
 * or ends inside a block is widened to the whole block (a block lies in
 * one folio, and MADV_FREE works on whole folios) and nothing is
 * repainted.  The entries cleared beyond the caller's range are flushed
 * here, as the caller flushes only its own: a translation left dirty
 * would let a store skip the walk that re-dirties the entry.  The
 * per-PTE MADV_FREE walk pays for that on every one-entry call.
 */
void contpte_clear_young_dirty_ptes(struct vm_area_struct *vma,
				    unsigned long addr, pte_t *ptep,
				    unsigned int nr, cydp_t flags)
{
	pte_t *start = ptep, *end = ptep + nr;
	unsigned long s = addr, e = addr + nr * PAGE_SIZE;

	if (pte_cont(__ptep_get(start))) {
		start = contpte_align_down(start);
		s = ALIGN_DOWN(addr, CONT_PTE_SIZE);
	}
	if (pte_cont(__ptep_get(end - 1))) {
		end = contpte_align_down(end - 1) + CONT_PTES;
		e = ALIGN(e, CONT_PTE_SIZE);
	}
	__clear_young_dirty_ptes(start, (unsigned int)(end - start), flags);
	if (s < addr)
		flush_tlb_range(vma->vm_mm, s, addr);
	if (e > addr + nr * PAGE_SIZE)
		flush_tlb_range(vma->vm_mm, addr + nr * PAGE_SIZE, e);
}
