/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * contpte.h: arm64's public PTE API, which manages the contiguous bit of
 * user mappings behind the core code's back (arch/arm64/include/asm/
 * pgtable.h, the CONFIG_ARM64_CONTPTE half).
 * Included by mm/pgtable.h after the raw one-entry accessors (the __
 * forms), on top of which everything here is built; the out-of-line
 * halves are in mm/arch/contpte.c.
 *
 * The rules, in one place:
 * - set_ptes(nr > 1) over none entries sets PTE_CONT on every fully
 *   covered, VA- and PA-aligned block (contpte_set_ptes), no conversion;
 * - set_ptes(nr = 1) unfolds the target's block, and when the entry is the
 *   last of a block tries to fold the block (contpte_try_fold): the core
 *   code mostly writes low to high, so that is the likely last change;
 * - any other single-entry change of a folded entry unfolds its block
 *   first (contpte_try_unfold); batched changes unfold only the blocks
 *   they cover partly;
 * - a fold or an unfold is contpte_convert(): clear the whole block, OR
 *   in its access/dirty bits, one TLB invalidation of the block, rewrite;
 * - ptep_get() of a folded entry returns it with the access/dirty bits of
 *   the whole block (the MMU sets them in whichever entry it used), and
 *   the CONT bit leaks through on purpose: setters strip it.
 * Contpte applies only to user mms; the model has no other kind.
 */
#ifndef MM_ARCH_CONTPTE_H
#define MM_ARCH_CONTPTE_H

/* The first entry of @ptep's block: tables are page-aligned, blocks too. */
static inline pte_t *contpte_align_down(pte_t *ptep)
{
	return (pte_t *)((uintptr_t)ptep & ~((uintptr_t)CONT_PTES * sizeof(pte_t) - 1));
}

/* mm/arch/contpte.c */
void __contpte_try_fold(struct mm_struct *mm, unsigned long addr,
			pte_t *ptep, pte_t pte);
void __contpte_try_unfold(struct mm_struct *mm, unsigned long addr,
			  pte_t *ptep, pte_t pte);
pte_t contpte_ptep_get(pte_t *ptep, pte_t orig_pte);
pte_t contpte_ptep_get_lockless(pte_t *orig_ptep);
void contpte_set_ptes(struct mm_struct *mm, unsigned long addr,
		      pte_t *ptep, pte_t pte, unsigned int nr);
pte_t contpte_get_and_clear_ptes(struct mm_struct *mm, unsigned long addr,
				 pte_t *ptep, unsigned int nr);
void contpte_wrprotect_ptes(struct mm_struct *mm, unsigned long addr,
			    pte_t *ptep, unsigned int nr);
int __ptep_set_access_flags(struct vm_area_struct *vma, unsigned long addr,
			    pte_t *ptep, pte_t entry, int dirty);
int contpte_ptep_set_access_flags(struct vm_area_struct *vma,
				  unsigned long addr, pte_t *ptep,
				  pte_t entry, int dirty);
int contpte_set_access_flags_ptes(struct vm_area_struct *vma,
				  unsigned long addr, pte_t *ptep,
				  pte_t entry, unsigned int nr, int dirty);

/*
 * Fold only at the last entry of a block whose PFN is also the last of an
 * aligned block, for a valid, not yet contiguous, non-special entry (a
 * special mapping has no folio to prove the block is one).
 */
static inline void contpte_try_fold(struct mm_struct *mm, unsigned long addr,
				    pte_t *ptep, pte_t pte)
{
	const unsigned long contmask = CONT_PTES - 1;

	if (unlikely(((addr >> PAGE_SHIFT) & contmask) == contmask) &&
	    unlikely((pte_pfn(pte) & contmask) == contmask) &&
	    pte_valid(pte) && !pte_cont(pte) && !pte_special(pte))
		__contpte_try_fold(mm, addr, ptep, pte);
}

static inline void contpte_try_unfold(struct mm_struct *mm, unsigned long addr,
				      pte_t *ptep, pte_t pte)
{
	if (unlikely(pte_valid_cont(pte)))
		__contpte_try_unfold(mm, addr, ptep, pte);
}

/* How many entries from @ptep are alike: the rest of a folded block. */
static inline unsigned int pte_batch_hint(pte_t *ptep, pte_t pte)
{
	if (!pte_valid_cont(pte))
		return 1;
	return CONT_PTES - (unsigned int)(((uintptr_t)ptep / sizeof(pte_t)) &
					  (CONT_PTES - 1));
}

/* Under the PTL: a folded block cannot change while its bits are gathered. */
static inline pte_t ptep_get(pte_t *ptep)
{
	pte_t pte = __ptep_get(ptep);

	if (likely(!pte_valid_cont(pte)))
		return pte;
	return contpte_ptep_get(ptep, pte);
}

/* Without the PTL: gather, and retry until the block read was consistent. */
static inline pte_t ptep_get_lockless(pte_t *ptep)
{
	pte_t pte = __ptep_get(ptep);

	if (likely(!pte_valid_cont(pte)))
		return pte;
	return contpte_ptep_get_lockless(ptep);
}

/*
 * The batch scan's read (folio_pte_batch_flags(), see mm/pgtable.h) is
 * arm64's own folio_pte_batch() read: ptep_get() gathers a folded block's
 * access/dirty bits and leaks CONT, so a batch stops where CONT changes.
 * It counts what it loads as it gathers, so nothing is left in *@reads.
 */
static inline pte_t ptep_get_batch(pte_t *ptep, bool lockless,
				   unsigned int *reads)
{
	(void)reads;
	return lockless ? ptep_get_lockless(ptep) : ptep_get(ptep);
}

/*
 * set_pte() has no mm or address, so it cannot unfold (that needs a TLB
 * invalidation); like arm64 it is for entries outside folded blocks only
 * - tests that poke entries - and never sets CONT itself.
 */
static inline void set_pte(pte_t *ptep, pte_t pte)
{
	__set_pte(ptep, pte_mknoncont(pte));
}

static inline void set_ptes(struct mm_struct *mm, unsigned long addr,
			    pte_t *ptep, pte_t pte, unsigned int nr)
{
	pte = pte_mknoncont(pte);
	if (likely(nr == 1)) {
		contpte_try_unfold(mm, addr, ptep, __ptep_get(ptep));
		__set_ptes(ptep, pte, 1);
		contpte_try_fold(mm, addr, ptep, pte);
	} else {
		contpte_set_ptes(mm, addr, ptep, pte, nr);
	}
}
static inline void set_pte_at(struct mm_struct *mm, unsigned long addr,
			      pte_t *ptep, pte_t pte)
{
	set_ptes(mm, addr, ptep, pte, 1);
}

static inline void pte_clear(struct mm_struct *mm, unsigned long addr,
			     pte_t *ptep)
{
	contpte_try_unfold(mm, addr, ptep, __ptep_get(ptep));
	__pte_clear(ptep);
}

static inline pte_t ptep_get_and_clear(struct mm_struct *mm,
				       unsigned long addr, pte_t *ptep)
{
	contpte_try_unfold(mm, addr, ptep, __ptep_get(ptep));
	return __ptep_get_and_clear(ptep);
}

/* get_and_clear_full_ptes(): whole blocks are cleared without unfolding. */
static inline pte_t get_and_clear_ptes(struct mm_struct *mm,
				       unsigned long addr, pte_t *ptep,
				       unsigned int nr)
{
	if (likely(nr == 1)) {
		contpte_try_unfold(mm, addr, ptep, __ptep_get(ptep));
		return __get_and_clear_ptes(ptep, 1);
	}
	return contpte_get_and_clear_ptes(mm, addr, ptep, nr);
}

static inline void wrprotect_ptes(struct mm_struct *mm, unsigned long addr,
				  pte_t *ptep, unsigned int nr)
{
	if (likely(nr == 1)) {
		contpte_try_unfold(mm, addr, ptep, __ptep_get(ptep));
		__wrprotect_ptes(ptep, 1);
	} else {
		contpte_wrprotect_ptes(mm, addr, ptep, nr);
	}
}
static inline void ptep_set_wrprotect(struct mm_struct *mm,
				      unsigned long addr, pte_t *ptep)
{
	wrprotect_ptes(mm, addr, ptep, 1);
}

void contpte_clear_young_dirty_ptes(struct vm_area_struct *vma,
				    unsigned long addr, pte_t *ptep,
				    unsigned int nr, cydp_t flags);

static inline void clear_young_dirty_ptes(struct vm_area_struct *vma,
					  unsigned long addr, pte_t *ptep,
					  unsigned int nr, cydp_t flags)
{
	if (likely(nr == 1 && !pte_cont(__ptep_get(ptep))))
		__clear_young_dirty_ptes(ptep, 1, flags);
	else
		contpte_clear_young_dirty_ptes(vma, addr, ptep, nr, flags);
}

static inline int ptep_set_access_flags(struct vm_area_struct *vma,
					unsigned long addr, pte_t *ptep,
					pte_t entry, int dirty)
{
	pte_t orig_pte = __ptep_get(ptep);

	entry = pte_mknoncont(entry);
	if (likely(!pte_valid_cont(orig_pte)))
		return __ptep_set_access_flags(vma, addr, ptep, entry, dirty);
	return contpte_ptep_set_access_flags(vma, addr, ptep, entry, dirty);
}

/*
 * The batched write-fault reuse: @nr entries of one folio made young,
 * dirty and writable at once.  Whole blocks change in place and stay
 * folded; see contpte_set_access_flags_ptes().
 */
static inline int set_access_flags_ptes(struct vm_area_struct *vma,
					unsigned long addr, pte_t *ptep,
					pte_t entry, unsigned int nr, int dirty)
{
	if (likely(nr == 1))
		return ptep_set_access_flags(vma, addr, ptep, entry, dirty);
	return contpte_set_access_flags_ptes(vma, addr, ptep, entry, nr, dirty);
}

#endif /* MM_ARCH_CONTPTE_H */
