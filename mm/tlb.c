// SPDX-License-Identifier: GPL-2.0-only
/*
 * tlb.c: TLB flushes on the simulated CPUs and the mmu_gather.
 */
#include <stdlib.h>
#include <urcu.h>

#include "mm/tlb.h"

struct cpu_tlb cpu_tlbs[NR_CPUS];
static atomic_int skip_flushes;

/*
 * The threads registered with RCU (pb_init()'s, pb_thread_register()'s),
 * and whether the calling one is: the model's own, so that a grace
 * period with no other reader can be skipped (synchronize_rcu() would
 * still issue membarrier() for the caller itself).
 */
static atomic_int rcu_readers;
static _Thread_local bool rcu_reader_self;

void rcu_reader_registered(bool on)
{
	if (on == rcu_reader_self)
		return;
	rcu_reader_self = on;
	atomic_fetch_add(&rcu_readers, on ? 1 : -1);
	/* Pairs with the fence in synchronize_rcu_others(). */
	atomic_thread_fence(memory_order_seq_cst);
}

/*
 * synchronize_rcu(), skipped when no other thread is registered: only a
 * registered thread can be in a read-side section, and one that
 * registers after the fence below finds the tables already unlinked (its
 * registration's fence orders its walk after our unlinking).
 */
/* Not inlined: GCC's -Wtsan refuses a fence inlined from a function. */
static __attribute__((noinline)) void synchronize_rcu_others(void)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load(&rcu_readers) - (rcu_reader_self ? 1 : 0) <= 0)
		return;
	synchronize_rcu();
}

void tlb_debug_skip_flushes(int n)
{
	atomic_store(&skip_flushes, n);
}

int tlb_skip_flushes_get(void)
{
	return atomic_load(&skip_flushes);
}

void tlb_skip_flushes_set(int n)
{
	atomic_store(&skip_flushes, n);
}

static bool flush_skipped(void)
{
	int n = atomic_load(&skip_flushes);

	while (n > 0)
		if (atomic_compare_exchange_weak(&skip_flushes, &n, n - 1))
			return true;
	return false;
}

/* Invalidate [start, end) of @mm on every CPU, like a shootdown IPI. */
void flush_tlb_range(struct mm_struct *mm, unsigned long start,
		     unsigned long end)
{
	unsigned long first = start >> PAGE_SHIFT, last = (end - 1) >> PAGE_SHIFT;
	unsigned long npages = last - first + 1;
	int cpu;

	if (end <= start)
		return;
	count_stat(tlb_flush);
	count_stat_n(tlb_flush_pages, npages);
	if (unlikely(flush_skipped()))
		return;
	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		struct cpu_tlb *t = &cpu_tlbs[cpu];
		unsigned long vpn;
		int i;

		spin_lock(&t->lock);
		if (npages < TLB_ENTRIES) {
			for (vpn = first; vpn <= last; vpn++) {
				struct tlb_entry *e = tlb_slot(t, vpn);

				if (e->mm == mm && e->vpn == vpn)
					e->mm = NULL;
			}
		} else {
			for (i = 0; i < TLB_ENTRIES; i++) {
				struct tlb_entry *e = &t->e[i];

				if (e->mm == mm && e->vpn >= first && e->vpn <= last)
					e->mm = NULL;
			}
		}
		spin_unlock(&t->lock);
	}
}

void flush_tlb_page(struct mm_struct *mm, unsigned long addr)
{
	flush_tlb_range(mm, addr & PAGE_MASK, (addr & PAGE_MASK) + PAGE_SIZE);
}

/* Drop every entry of @mm: its address space is going away. */
void flush_tlb_mm(struct mm_struct *mm)
{
	int cpu, i;

	count_stat(tlb_flush);
	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		struct cpu_tlb *t = &cpu_tlbs[cpu];

		spin_lock(&t->lock);
		for (i = 0; i < TLB_ENTRIES; i++)
			if (t->e[i].mm == mm)
				t->e[i].mm = NULL;
		spin_unlock(&t->lock);
	}
}

void tlb_gather_mmu(struct mmu_gather *tlb, struct mm_struct *mm)
{
	memset(tlb, 0, sizeof(*tlb));
	tlb->mm = mm;
	tlb->start = ~0UL;
}

void tlb_flush_pte_range(struct mmu_gather *tlb, unsigned long addr,
			 unsigned long size)
{
	tlb->start = min(tlb->start, addr);
	tlb->end = max(tlb->end, addr + size);
}

void tlb_remove_folio_refs(struct mmu_gather *tlb, struct folio *folio,
			   int refs)
{
	if (tlb->nr_refs == tlb->cap_refs) {
		unsigned int cap = tlb->cap_refs ? tlb->cap_refs * 2 : 64;
		struct tlb_folio_ref *n = NULL;

		if (cap <= 16384)
			n = realloc(tlb->refs, cap * sizeof(*n));
		if (!n) {
			/* Like the kernel: no batch page, flush now. */
			tlb_flush_mmu(tlb);
		} else {
			tlb->refs = n;
			tlb->cap_refs = cap;
		}
	}
	if (tlb->nr_refs < tlb->cap_refs) {
		tlb->refs[tlb->nr_refs++] = (struct tlb_folio_ref){ folio, refs };
		return;
	}
	/* tlb_flush_mmu emptied the batch but no memory for it: put now. */
	folio_put_refs(folio, refs);
}

void tlb_remove_table(struct mmu_gather *tlb, unsigned long table_pfn)
{
	pfn_to_page(table_pfn)->pt.pt_next = tlb->table_list;
	tlb->table_list = table_pfn;
}

/* Flush the gathered range, then release what must outlive the flush. */
void tlb_flush_mmu(struct mmu_gather *tlb)
{
	unsigned int i;

	if (tlb->end > tlb->start || tlb->table_list)
		flush_tlb_range(tlb->mm, tlb->end > tlb->start ? tlb->start : 0,
				tlb->end);
	tlb->start = ~0UL;
	tlb->end = 0;
	for (i = 0; i < tlb->nr_refs; i++)
		folio_put_refs(tlb->refs[i].folio, tlb->refs[i].refs);
	tlb->nr_refs = 0;
	if (tlb->table_list) {
		/* Lockless walkers (GUP-fast) must be out of the tables. */
		synchronize_rcu_others();
		while (tlb->table_list) {
			unsigned long pfn = tlb->table_list;

			tlb->table_list = pfn_to_page(pfn)->pt.pt_next;
			free_table_frame(pfn);
		}
	}
}

void tlb_finish_mmu(struct mmu_gather *tlb)
{
	tlb_flush_mmu(tlb);
	free(tlb->refs);
	tlb->refs = NULL;
	tlb->cap_refs = 0;
}
