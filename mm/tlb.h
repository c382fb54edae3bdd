/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tlb.h: the simulated TLBs and the mmu_gather.
 *
 * Each simulated CPU has a small direct-mapped TLB caching translations
 * with their permission (writable) and whether the entry's Dirty bit was
 * already set.  A CPU's lock stands for "interrupts disabled": the CPU
 * holds it while it uses a translation, and a flush takes it to
 * invalidate, the way a shootdown IPI waits for the target CPU.  A
 * permission downgrade that forgets its flush leaves an entry that grants
 * more than its PTE; pb_check() reports exactly that.
 */
#ifndef MM_TLB_H
#define MM_TLB_H

#include "mm/internal.h"

#define TLB_ENTRIES 256

struct tlb_entry {
	struct mm_struct *mm;		/* NULL = invalid */
	unsigned long vpn;
	unsigned long pfn;
	bool writable;
	bool dirty;			/* D already set in the PTE */
};

struct cpu_tlb {
	spinlock_t lock;
	/*
	 * The model's own, not the kernel's: set by the first translation
	 * the CPU caches, so that pb_check() passes over the CPUs that never
	 * held one (a scenario runs on CPU 0).
	 */
	bool used;
	struct tlb_entry e[TLB_ENTRIES];
};
extern struct cpu_tlb cpu_tlbs[NR_CPUS];

static inline struct tlb_entry *tlb_slot(struct cpu_tlb *t, unsigned long vpn)
{
	return &t->e[vpn & (TLB_ENTRIES - 1)];
}

void flush_tlb_range(struct mm_struct *mm, unsigned long start,
		     unsigned long end);
void flush_tlb_page(struct mm_struct *mm, unsigned long addr);
void flush_tlb_mm(struct mm_struct *mm);
/* Test hook: drop the next @n flushes on the floor (never in real runs). */
void tlb_debug_skip_flushes(int n);

/*
 * mmu_gather: PTE changes of an operation record the range to flush and
 * the folio references and page tables to release; the flush happens once
 * at tlb_finish_mmu(), and only then are references dropped and tables
 * freed (after an RCU grace period, so lockless walkers are done).
 */
struct tlb_folio_ref {
	struct folio *folio;
	int refs;
};

struct mmu_gather {
	struct mm_struct *mm;
	unsigned long start, end;
	struct tlb_folio_ref *refs;
	unsigned int nr_refs, cap_refs;
	unsigned long table_list;	/* pfns linked through pt.pt_next */
};

void tlb_gather_mmu(struct mmu_gather *tlb, struct mm_struct *mm);
void tlb_flush_pte_range(struct mmu_gather *tlb, unsigned long addr,
			 unsigned long size);
void tlb_remove_folio_refs(struct mmu_gather *tlb, struct folio *folio,
			   int refs);
void tlb_remove_table(struct mmu_gather *tlb, unsigned long table_pfn);
void tlb_flush_mmu(struct mmu_gather *tlb);
void tlb_finish_mmu(struct mmu_gather *tlb);

#endif /* MM_TLB_H */
