/*
 * pgtable.h: page-table entries and walking.
 *
 * Tables are frames; every entry is a 64-bit word read and written with C11
 * atomics, so lockless readers (GUP-fast, the simulated MMU) are correct by
 * the language's rules.  Relaxed loads and stores stand for READ_ONCE and
 * WRITE_ONCE; where the kernel relies on a barrier the ordering is named.
 * Every entry access is counted (pte_read / pte_write).
 */
#ifndef MM_PGTABLE_H
#define MM_PGTABLE_H

#include "mm/internal.h"

typedef _Atomic uint64_t atomic_entry_t;

static inline atomic_entry_t *entry_ptr(void *p) { return (atomic_entry_t *)p; }

/* Upper levels (PGD, PUD) are walked, not counted: pte_read counts PTEs and PMDs. */
static inline uint64_t entry_read_raw(void *p)
{
	return atomic_load_explicit(entry_ptr(p), memory_order_relaxed);
}
static inline uint64_t entry_read(void *p)
{
	count_stat(pte_read);
	return entry_read_raw(p);
}
/*
 * Stores that make an entry point somewhere are release stores: they
 * publish the zeroed/copied folio and its metadata (the kernel's smp_wmb
 * in __folio_mark_uptodate / pmd_populate) to lockless walkers.
 */
static inline void entry_write(void *p, uint64_t v)
{
	count_stat(pte_write);
	atomic_store_explicit(entry_ptr(p), v, memory_order_release);
}
static inline uint64_t entry_xchg(void *p, uint64_t v)
{
	count_stat(pte_write);
	return atomic_exchange_explicit(entry_ptr(p), v, memory_order_acq_rel);
}
static inline bool entry_cmpxchg(void *p, uint64_t *old, uint64_t v)
{
	count_stat(pte_write);
	return atomic_compare_exchange_strong_explicit(entry_ptr(p), old, v,
			memory_order_acq_rel, memory_order_relaxed);
}

/* PTE accessors (include/linux/pgtable.h names). */
static inline pte_t ptep_get(pte_t *ptep) { return __pte(entry_read(ptep)); }
/* 64-bit entries are read in one access on x86-64: no torn reads. */
static inline pte_t ptep_get_lockless(pte_t *ptep) { return ptep_get(ptep); }
static inline bool pte_same(pte_t a, pte_t b) { return a.pte == b.pte; }
static inline void set_pte(pte_t *ptep, pte_t pte) { entry_write(ptep, pte.pte); }
static inline void pte_clear(pte_t *ptep) { entry_write(ptep, 0); }
static inline pte_t ptep_get_and_clear(pte_t *ptep)
{
	return __pte(entry_xchg(ptep, 0));
}
/* Write-protect in place: a cmpxchg so a concurrent hardware A/D set is kept. */
static inline void ptep_set_wrprotect(pte_t *ptep)
{
	uint64_t old = atomic_load_explicit(entry_ptr(ptep), memory_order_relaxed);

	count_stat(pte_read);
	while (!entry_cmpxchg(ptep, &old, pte_wrprotect(__pte(old)).pte))
		;
}
static inline void set_ptes(pte_t *ptep, pte_t pte, unsigned int nr)
{
	for (;;) {
		set_pte(ptep, pte);
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
static inline pte_t get_and_clear_ptes(pte_t *ptep, unsigned int nr)
{
	pte_t pte = ptep_get_and_clear(ptep);

	while (--nr) {
		pte_t tmp = ptep_get_and_clear(++ptep);

		if (pte_dirty(tmp))
			pte = pte_mkdirty(pte);
		if (pte_young(tmp))
			pte = pte_mkyoung(pte);
	}
	return pte;
}
static inline void wrprotect_ptes(pte_t *ptep, unsigned int nr)
{
	for (; nr; nr--, ptep++)
		ptep_set_wrprotect(ptep);
}

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

/* pgtable.c */
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
