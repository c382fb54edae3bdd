/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pgtable.h: page-table entries and walking.
 *
 * Tables are frames; every entry is a 64-bit word read and written with C11
 * atomics, so lockless readers (GUP-fast, the simulated MMU) are correct by
 * the language's rules.  Relaxed loads and stores stand for READ_ONCE and
 * WRITE_ONCE; where the kernel relies on a barrier the ordering is named.
 * Every PTE and PMD access of the kernel's code is counted (pte_read /
 * pte_write); the MMU's walk and the model's own look-ups (lookup_addr())
 * read with entry_read_raw(), uncounted.
 */
#ifndef MM_PGTABLE_H
#define MM_PGTABLE_H

#include "mm/internal.h"
#include "mm/hooks.h"

typedef _Atomic uint64_t atomic_entry_t;

static inline atomic_entry_t *entry_ptr(void *p) { return (atomic_entry_t *)p; }

/*
 * Upper levels (PGD, PUD) are walked, not counted: pte_read counts PTEs and
 * PMDs.  Acquire stands for READ_ONCE() plus the address dependency every
 * walker (the MMU, GUP-fast) relies on: what it reads next - the table or
 * the page the entry points to - was written before the release store
 * that published the entry (the smp_wmb() of __folio_mark_uptodate() and
 * pmd_populate()).  On x86-64 an acquire load is a plain load.
 */
static inline uint64_t entry_read_raw(void *p)
{
	return atomic_load_explicit(entry_ptr(p), memory_order_acquire);
}
static inline uint64_t entry_read(void *p)
{
	count_stat(pte_read);
	return entry_read_raw(p);
}

#ifdef CONFIG_X86_PAE
/*
 * x86-pae (x86-32 with PAE, CONFIG_GUP_GET_PXX_LOW_HIGH): an entry is 64
 * bits but the CPU loads 32 at a time, so a PTE read is two loads, the
 * low half and then the high half, and a store that lands between them
 * leaves the reader half the old entry and half the new one.  Stores stay
 * one 64-bit atomic here: one store between the two loads already tears.
 * (x86-32 stores the halves in an order chosen for its readers - high
 * first when making an entry present, low first when clearing it.)
 * Little-endian: the low half is the first 32-bit word.
 */
static inline uint32_t *entry_half(void *p, unsigned int high)
{
	return (uint32_t *)p + high;
}
static inline uint64_t entry_halves(uint32_t low, uint32_t high)
{
	return (uint64_t)high << 32 | low;
}
/* A plain read, ptep_get() on 32-bit PAE: low, then high, as one load was. */
static inline uint64_t entry_read_halves(void *p)
{
	uint32_t low, high;

	low = __atomic_load_n(entry_half(p, 0), __ATOMIC_RELAXED);
	hook_split_read(p);
	high = __atomic_load_n(entry_half(p, 1), __ATOMIC_RELAXED);
	return entry_halves(low, high);
}
/*
 * ptep_get_lockless() of CONFIG_GUP_GET_PXX_LOW_HIGH: read low, then high,
 * then low again, and start over if the low half changed.  An unchanged
 * low half means no store landed between the first and the last load, so
 * both halves are one store's - unless the low half changed and changed
 * back meanwhile.  Linux rules that out: a PTE goes from one page to
 * another only through a TLB flush, and the flush waits for GUP-fast's
 * disabled IRQs.  (The model's TLB flush does not wait for
 * rcu_read_lock(): there, ABA needs a writer to bring a low half back
 * within the few loads of one read.)
 */
static inline uint64_t entry_read_halves_lockless(void *p)
{
	uint32_t low, high;

	/*
	 * Each smp_rmb() orders the load before it against the loads after
	 * it: an acquire load is that (and ThreadSanitizer understands it,
	 * which it does not a fence).
	 */
	do {
		/* smp_rmb(): the high half is read after the low half... */
		low = __atomic_load_n(entry_half(p, 0), __ATOMIC_ACQUIRE);
		hook_split_read(p);
		/* smp_rmb(): ...and before the low half is read again. */
		high = __atomic_load_n(entry_half(p, 1), __ATOMIC_ACQUIRE);
	} while (unlikely(low != __atomic_load_n(entry_half(p, 0),
						 __ATOMIC_RELAXED)));
	return entry_halves(low, high);
}
#endif /* CONFIG_X86_PAE */
/*
 * Stores that make an entry point somewhere are release stores: they
 * publish the zeroed/copied folio and its metadata (the kernel's smp_wmb
 * in __folio_mark_uptodate / pmd_populate) to lockless walkers.
 */
static inline void entry_write(void *p, uint64_t v)
{
	uint64_t t = pb_hook_tick();

	count_stat(pte_write);
	atomic_store_explicit(entry_ptr(p), v, memory_order_release);
	hook_entry_written(p, v, t);
}
static inline uint64_t entry_xchg(void *p, uint64_t v)
{
	uint64_t t = pb_hook_tick(), old;

	count_stat(pte_write);
	old = atomic_exchange_explicit(entry_ptr(p), v, memory_order_acq_rel);
	hook_entry_written(p, v, t);
	return old;
}
static inline bool entry_cmpxchg(void *p, uint64_t *old, uint64_t v)
{
	uint64_t t = pb_hook_tick();
	bool done;

	count_stat(pte_write);
	done = atomic_compare_exchange_strong_explicit(entry_ptr(p), old, v,
			memory_order_acq_rel, memory_order_relaxed);
	if (done)
		hook_entry_written(p, v, t);
	return done;
}

/*
 * PTE accessors.  The __ forms touch one entry as the hardware format
 * has it; the plain names (include/linux/pgtable.h) are what mm/ calls.
 * On x86-64 they are the same thing.  An architecture with contiguous-PTE
 * blocks (arm64's contpte, ARCH_HAS_CONTPTE) defines the plain names
 * itself on top of the __ forms, the way arch/arm64 does: mm/arch/
 * contpte.h, included below in place of the generic ones.
 */
#ifdef CONFIG_X86_PAE
static inline pte_t __ptep_get(pte_t *ptep)
{
	count_stat(pte_read);
	return __pte(entry_read_halves(ptep));
}
#else
static inline pte_t __ptep_get(pte_t *ptep) { return __pte(entry_read(ptep)); }
#endif
static inline bool pte_same(pte_t a, pte_t b) { return a.pte == b.pte; }
static inline void __set_pte(pte_t *ptep, pte_t pte) { entry_write(ptep, pte.pte); }
static inline void __pte_clear(pte_t *ptep) { entry_write(ptep, 0); }
static inline pte_t __ptep_get_and_clear(pte_t *ptep)
{
	return __pte(entry_xchg(ptep, 0));
}
/* Write-protect in place: a cmpxchg so a concurrent hardware A/D set is kept. */
static inline void __ptep_set_wrprotect(pte_t *ptep)
{
	uint64_t old = atomic_load_explicit(entry_ptr(ptep), memory_order_relaxed);

	count_stat(pte_read);
	while (!entry_cmpxchg(ptep, &old, pte_wrprotect(__pte(old)).pte))
		;
}
static inline void __set_ptes(pte_t *ptep, pte_t pte, unsigned int nr)
{
	for (;;) {
		__set_pte(ptep, pte);
		if (--nr == 0)
			break;
		ptep++;
		pte = pte_advance_pfn(pte, 1);
	}
}
/*
 * Clear @nr consecutive entries and return the first with the young and
 * dirty bits of all of them ORed in (get_and_clear_full_ptes on zap, the
 * generic modify_prot_start_ptes on mprotect): a hardware A/D update that
 * raced with the clear is never lost.
 */
static inline pte_t __get_and_clear_ptes(pte_t *ptep, unsigned int nr)
{
	pte_t pte = __ptep_get_and_clear(ptep);

	while (--nr) {
		pte_t tmp = __ptep_get_and_clear(++ptep);

		if (pte_dirty(tmp))
			pte = pte_mkdirty(pte);
		if (pte_young(tmp))
			pte = pte_mkyoung(pte);
	}
	return pte;
}
static inline void __wrprotect_ptes(pte_t *ptep, unsigned int nr)
{
	for (; nr; nr--, ptep++)
		__ptep_set_wrprotect(ptep);
}

/* What clear_young_dirty_ptes() clears (the kernel's cydp_t). */
typedef unsigned int cydp_t;
#define CYDP_CLEAR_YOUNG	0x1U
#define CYDP_CLEAR_DIRTY	0x2U

/*
 * Clear young and/or dirty of @nr entries, each with one atomic RMW: a
 * hardware A/D update that lands meanwhile is retried, never lost, and
 * an entry the caller then flushes must be re-dirtied by the next store
 * (the simulated MMU walks again for a TLB entry without Dirty).
 */
static inline void __clear_young_dirty_ptes(pte_t *ptep, unsigned int nr,
					    cydp_t flags)
{
	for (; nr; nr--, ptep++) {
		uint64_t old = atomic_load_explicit(entry_ptr(ptep),
						    memory_order_relaxed);
		pte_t pte;

		count_stat(pte_read);
		do {
			pte = __pte(old);
			if (flags & CYDP_CLEAR_YOUNG)
				pte = pte_mkold(pte);
			if (flags & CYDP_CLEAR_DIRTY)
				pte = pte_mkclean(pte);
		} while (!entry_cmpxchg(ptep, &old, pte.pte));
	}
}

#ifndef ARCH_HAS_CONTPTE
static inline pte_t ptep_get(pte_t *ptep) { return __ptep_get(ptep); }
#ifdef CONFIG_X86_PAE
/* Counted as one read, however often it starts over. */
static inline pte_t ptep_get_lockless(pte_t *ptep)
{
	count_stat(pte_read);
	return __pte(entry_read_halves_lockless(ptep));
}
/*
 * ptep_get_batch(): how folio_pte_batch_flags() reads each entry after
 * the first - as ptep_get_lockless() if @lockless (no PTL: a store may
 * land between the two halves, and only the lockless re-read catches
 * it), as ptep_get() otherwise - but uncounted: the load is added to
 * *@reads, and the scan counts them all at once, so the counter is not a
 * store per entry.
 */
static inline pte_t ptep_get_batch(pte_t *ptep, bool lockless,
				   unsigned int *reads)
{
	(*reads)++;
	return __pte(lockless ? entry_read_halves_lockless(ptep) :
				entry_read_halves(ptep));
}
#else
/* 64-bit entries are read in one access on x86-64: no torn reads. */
static inline pte_t ptep_get_lockless(pte_t *ptep) { return __ptep_get(ptep); }
/* One relaxed load serves both: ptep_get_lockless() is a single load. */
static inline pte_t ptep_get_batch(pte_t *ptep, bool lockless,
				   unsigned int *reads)
{
	(void)lockless;
	(*reads)++;
	return __pte(entry_read_raw(ptep));
}
#endif
/* How many entries from @ptep are known to be alike: 1 without contpte. */
static inline unsigned int pte_batch_hint(pte_t *ptep, pte_t pte)
{
	(void)ptep;
	(void)pte;
	return 1;
}
/*
 * The setters take the mm and address as Linux's do: x86 needs neither,
 * arm64 needs both to unfold a contiguous block (a TLB invalidation).
 * set_pte() is the exception, for callers outside mm/ poking one entry.
 */
static inline void set_pte(pte_t *ptep, pte_t pte) { __set_pte(ptep, pte); }
static inline void set_ptes(struct mm_struct *mm, unsigned long addr,
			    pte_t *ptep, pte_t pte, unsigned int nr)
{
	__set_ptes(ptep, pte, nr);
}
static inline void set_pte_at(struct mm_struct *mm, unsigned long addr,
			      pte_t *ptep, pte_t pte)
{
	__set_pte(ptep, pte);
}
static inline void pte_clear(struct mm_struct *mm, unsigned long addr,
			     pte_t *ptep)
{
	__pte_clear(ptep);
}
static inline pte_t ptep_get_and_clear(struct mm_struct *mm,
				       unsigned long addr, pte_t *ptep)
{
	return __ptep_get_and_clear(ptep);
}
static inline void ptep_set_wrprotect(struct mm_struct *mm,
				      unsigned long addr, pte_t *ptep)
{
	__ptep_set_wrprotect(ptep);
}
static inline pte_t get_and_clear_ptes(struct mm_struct *mm,
				       unsigned long addr, pte_t *ptep,
				       unsigned int nr)
{
	return __get_and_clear_ptes(ptep, nr);
}
static inline void wrprotect_ptes(struct mm_struct *mm, unsigned long addr,
				  pte_t *ptep, unsigned int nr)
{
	__wrprotect_ptes(ptep, nr);
}
/* MADV_FREE/MADV_COLD: @nr entries mapping consecutive pages of one folio. */
static inline void clear_young_dirty_ptes(struct vm_area_struct *vma,
					  unsigned long addr, pte_t *ptep,
					  unsigned int nr, cydp_t flags)
{
	__clear_young_dirty_ptes(ptep, nr, flags);
}
/*
 * x86 ptep_set_access_flags(): the fault only relaxes bits (young, dirty,
 * write), so no flush - a stale read-only TLB entry faults once more and
 * finds the work done.  Only a write fault stores; a read finds Accessed
 * set by the MMU anyway.  The caller read this entry under the PTL just
 * before: the comparison is that read, counted once, not a second one.
 */
static inline int ptep_set_access_flags(struct vm_area_struct *vma,
					unsigned long addr, pte_t *ptep,
					pte_t entry, int dirty)
{
	int changed = !pte_same(__pte(entry_read_raw(ptep)), entry);

	if (changed && dirty)
		__set_pte(ptep, entry);
	return changed;
}
/*
 * ptep_set_access_flags() over @nr entries mapping the consecutive pages
 * @entry starts at: entry by entry here; arm64 changes whole contiguous
 * blocks at once.  Not in mainline: its caller is the batched write-fault
 * reuse (wp_page_reuse(), a proposal); named like the other batched entry
 * points (wrprotect_ptes(), get_and_clear_full_ptes()).
 */
static inline int set_access_flags_ptes(struct vm_area_struct *vma,
					unsigned long addr, pte_t *ptep,
					pte_t entry, unsigned int nr, int dirty)
{
	int changed = 0;

	for (;;) {
		changed |= ptep_set_access_flags(vma, addr, ptep, entry, dirty);
		if (--nr == 0)
			break;
		ptep++;
		addr += PAGE_SIZE;
		entry = pte_advance_pfn(entry, 1);
	}
	return changed;
}
#else
#include "mm/arch/contpte.h"
#endif

/*
 * PMDs stay one 64-bit load on x86-pae: x86-pae is here for the batch
 * scan, which reads PTEs only, and the lockless PMD readers (GUP-fast,
 * pte_offset_map) use pmdp_get_lockless(), which on PAE Linux is the PTE's
 * retry loop: it returns what one store wrote, as the single load does.
 */
static inline pmd_t pmdp_get(pmd_t *pmdp) { return __pmd(entry_read(pmdp)); }
static inline pmd_t pmdp_get_lockless(pmd_t *pmdp) { return pmdp_get(pmdp); }
static inline void set_pmd(pmd_t *pmdp, pmd_t pmd) { entry_write(pmdp, pmd.pmd); }
static inline pmd_t pmdp_get_and_clear(pmd_t *pmdp) { return __pmd(entry_xchg(pmdp, 0)); }
static inline bool pmd_same(pmd_t a, pmd_t b) { return a.pmd == b.pmd; }
static inline void pmdp_set_wrprotect(pmd_t *pmdp)
{
	uint64_t old = atomic_load_explicit(entry_ptr(pmdp), memory_order_relaxed);

	count_stat(pte_read);
	while (!entry_cmpxchg(pmdp, &old, pte_pmd(pte_wrprotect(pmd_pte(__pmd(old)))).pmd))
		;
}

/* Indexes and table lookup. */
static inline unsigned long pgd_index(unsigned long a) { return (a >> PGDIR_SHIFT) & (PTRS_PER_TABLE - 1); }
static inline unsigned long pud_index(unsigned long a) { return (a >> PUD_SHIFT) & (PTRS_PER_TABLE - 1); }
static inline unsigned long pmd_index(unsigned long a) { return (a >> PMD_SHIFT) & (PTRS_PER_TABLE - 1); }
static inline unsigned long pte_index(unsigned long a) { return (a >> PAGE_SHIFT) & (PTRS_PER_TABLE - 1); }

static inline void *table_of(uint64_t entry)
{
	return pfn_address(table_entry_pfn(entry));
}
static inline pgd_t *pgd_offset(struct mm_struct *mm, unsigned long addr)
{
	return mm->pgd + pgd_index(addr);
}
static inline pud_t *pud_offset(pgd_t pgd, unsigned long addr)
{
	return (pud_t *)table_of(pgd_val(pgd)) + pud_index(addr);
}
static inline pmd_t *pmd_offset(pud_t pud, unsigned long addr)
{
	return (pmd_t *)table_of(pud_val(pud)) + pmd_index(addr);
}
/* The PTE table a non-leaf @pmd points to. */
static inline pte_t *pte_offset(pmd_t pmd, unsigned long addr)
{
	return (pte_t *)table_of(pmd_val(pmd)) + pte_index(addr);
}
static inline struct page *pmd_table_page(pmd_t pmd)
{
	return pfn_to_page(table_entry_pfn(pmd_val(pmd)));
}
static inline struct page *table_page_of(void *entryp)
{
	unsigned long off = (unsigned long)((unsigned char *)entryp - machine.frames);

	return pfn_to_page(off >> PAGE_SHIFT);
}
static inline bool pmd_is_table(pmd_t pmd) { return !pmd_none(pmd) && !pmd_leaf(pmd); }

static inline unsigned long pmd_addr_end(unsigned long addr, unsigned long end)
{
	unsigned long boundary = (addr + PMD_SIZE) & PMD_MASK;

	return boundary - 1 < end - 1 ? boundary : end;
}

/* Locks. */
static inline spinlock_t *pmd_lockptr(struct mm_struct *mm, pmd_t *pmdp)
{
	(void)pmdp;
	return &mm->page_table_lock;
}
static inline spinlock_t *pmd_lock(struct mm_struct *mm, pmd_t *pmdp)
{
	spinlock_t *ptl = pmd_lockptr(mm, pmdp);

	spin_lock(ptl);
	return ptl;
}

/*
 * What lookup_addr() found at an address: the levels a walk can stop at.
 * Not a kernel concept - the model's own bookkeeping asks it (below).
 */
enum addr_level {
	ADDR_NO_PMD,		/* an upper-level table is missing */
	ADDR_PMD_NONE,		/* the PMD entry is empty */
	ADDR_PMD_LEAF,		/* a huge PMD maps the address */
	ADDR_PTE,		/* a PTE table: its entry, none or not */
};
struct addr_lookup {
	enum addr_level level;
	pte_t entry;		/* the PTE, or the PMD leaf as a PTE; else 0 */
	unsigned long pfn;	/* the page at the address (of a leaf: + offset) */
};

/* pgtable.c */
void lookup_addr(struct mm_struct *mm, unsigned long addr,
		 struct addr_lookup *found);
pmd_t *walk_to_pmd(struct mm_struct *mm, unsigned long addr);
pmd_t *pmd_alloc_walk(struct mm_struct *mm, unsigned long addr);
int __pte_alloc(struct mm_struct *mm, pmd_t *pmdp);
pte_t *pte_offset_map_lock(struct mm_struct *mm, pmd_t *pmdp,
			   unsigned long addr, spinlock_t **ptlp);
pte_t *pte_offset_map_nolock(struct mm_struct *mm, pmd_t *pmdp,
			     unsigned long addr);
void pte_unmap_unlock(pte_t *ptep, spinlock_t *ptl);
unsigned long pgd_alloc(void);
void pgtable_trans_huge_deposit(struct mm_struct *mm, pmd_t *pmdp,
				unsigned long table_pfn);
unsigned long pgtable_trans_huge_withdraw(struct mm_struct *mm, pmd_t *pmdp);

#endif /* MM_PGTABLE_H */
