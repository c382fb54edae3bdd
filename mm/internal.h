/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * internal.h: what the files of mm/ share - geometry, frame/folio lookup,
 * reference and mapcount primitives with their cost counters, the flag
 * sets of GUP and faults, and the cross-file prototypes.
 */
#ifndef MM_INTERNAL_H
#define MM_INTERNAL_H

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "ptebatch.h"
#include "mm/mm_types.h"

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#define min(a, b)	((a) < (b) ? (a) : (b))
#define max(a, b)	((a) > (b) ? (a) : (b))

/*
 * Geometry: four levels of tables of 8-byte entries, each table one page,
 * so every level resolves PAGE_SHIFT - 3 bits (x86-64: 12/21/30/39; arm64
 * 16K: 14/25/36/47; arm64 64K: 16/29/42, the top level folded).
 */
#define PAGE_SHIFT	ARCH_PAGE_SHIFT
#define PAGE_SIZE	(1UL << PAGE_SHIFT)
#define PAGE_MASK	(~(PAGE_SIZE - 1))
#define PTRS_PER_TABLE	(PAGE_SIZE / sizeof(uint64_t))
#define PTRS_PER_PTE	PTRS_PER_TABLE
#define TABLE_SHIFT	(PAGE_SHIFT - 3)
#define PMD_SHIFT	(PAGE_SHIFT + TABLE_SHIFT)
#define PMD_SIZE	(1UL << PMD_SHIFT)
#define PMD_MASK	(~(PMD_SIZE - 1))
#define PUD_SHIFT	(PMD_SHIFT + TABLE_SHIFT)
#define PUD_SIZE	(1UL << PUD_SHIFT)
#define PGDIR_SHIFT	(PUD_SHIFT + TABLE_SHIFT)
#define PGDIR_SIZE	(1UL << PGDIR_SHIFT)
#define HPAGE_PMD_ORDER	(PMD_SHIFT - PAGE_SHIFT)
#define HPAGE_PMD_NR	(1UL << HPAGE_PMD_ORDER)
#define TASK_SIZE	ARCH_TASK_SIZE
#define MAX_PAGE_ORDER	HPAGE_PMD_ORDER
/*
 * The write-fault reuse window of the seeds preset (mm/variant.c): 16
 * PTEs, as proposed ("mm/memory: reuse 16 PTEs of an exclusive large
 * folio on a write fault"), or the arch's own choice (arm64: one
 * contiguous block, CONT_PTES).
 */
#ifndef WP_REUSE_MAX_NR_PTES
#define WP_REUSE_MAX_NR_PTES	16
#endif

#define ALIGN_DOWN(x, a)	((x) & ~((a) - 1))
#define ALIGN(x, a)		(((x) + (a) - 1) & ~((a) - 1))
#define IS_ALIGNED(x, a)	(((x) & ((a) - 1)) == 0)

/*
 * The machine: memmap, folio metadata and frames - the entries of
 * page-table pages, and the contents of the few data pages that need
 * a whole frame (page_data.c).
 */
struct machine {
	struct page *mem_map;
	struct folio *folio_map;
	unsigned char *frames;
	unsigned long nr_frames;
	unsigned long zero_pfn;		/* the shared zero page */
	unsigned long huge_zero_pfn;	/* the huge zero folio */
	/* THP: per-order policies; PMD order's is the global "enabled". */
	enum pb_thp_policy thp_policy[HPAGE_PMD_ORDER + 1];
	atomic_uint next_mm_id;
	struct pb_variant variant;	/* which paths run batched */
	bool read_faults_allocate;	/* pb_config.read_faults_allocate */
};
extern struct machine machine;

/* Cost counters, per thread (mm/vmstat.c). */
extern _Thread_local uint64_t pb_stat_counters[PB_NR_STATS];
#define count_stat(name)	(pb_stat_counters[PB_STAT_##name]++)
#define count_stat_n(name, n)	(pb_stat_counters[PB_STAT_##name] += (n))

/*
 * Entering the kernel (mm/vmstat.c): a system call (mm/api.c), counted
 * in kernel_entry, or a user fault's trap (mm/access.c), counted in
 * fault_trap.  Each starts a new operation for memmap_line.
 */
void kernel_enter(void);
void kernel_trap(void);

/*
 * smp_mb(): a full barrier, counted (the acquire fence of smp_rmb() is
 * not: x86 gives it for free).  A macro: GCC's -Wtsan refuses the fence
 * inlined from a function.
 */
#define smp_mb() do {						\
	count_stat(barrier);					\
	atomic_thread_fence(memory_order_seq_cst);		\
} while (0)

/*
 * smp_mb__after_atomic(): what follows is ordered after the atomic RMW
 * before it.  The model needs a C11 fence for that; the kernel on x86
 * needs nothing (the RMW's lock prefix is a full barrier: a compiler
 * barrier only), on arm64 a dmb.  So it counts as a barrier on arm64
 * only: the counter is the barriers the kernel would execute.
 */
#ifdef CONFIG_ARM64
#define smp_mb__after_atomic() smp_mb()
#else
#define smp_mb__after_atomic() atomic_thread_fence(memory_order_seq_cst)
#endif

/*
 * memmap_line (mm/vmstat.c): the struct page cache lines the kernel
 * touches, as the kernel lays them out - struct page is 64 bytes, one
 * line per pfn; a folio's flags, refcount, mapping (and an order-0
 * folio's _mapcount) are in its head page's line, a large folio's
 * _large_mapcount, _entire_mapcount, _pincount, MM ids and order in the
 * line of head + 1.  The accessors below call memmap_touch(); the
 * model's own bookkeeping (buddy lists, page contents, the checker) uses
 * the raw_ variants or pauses.  Off unless pb_stats_count_memmap_lines():
 * one relaxed load and a branch.
 */
extern atomic_bool memmap_lines_on;
void memmap_line_touch(unsigned long line);

static inline void memmap_touch(unsigned long pfn)
{
	if (unlikely(atomic_load_explicit(&memmap_lines_on, memory_order_relaxed)))
		memmap_line_touch(pfn);
}
/* Pause counting on this thread (the checker, snapshots); nests. */
void memmap_lines_pause(void);
void memmap_lines_resume(void);

/*
 * Node statistics (mm/vmstat.c): each CPU (here: thread) keeps a small
 * difference and folds it into the global counter past a threshold, so
 * the hot path pays a local add, as node_stat_mod_folio() does.
 */
enum node_stat_item {
	NR_FOLL_PIN_ACQUIRED,
	NR_FOLL_PIN_RELEASED,
	NR_VM_NODE_STAT_ITEMS
};
#define NODE_STAT_THRESHOLD 125
extern atomic_long vm_node_stat[NR_VM_NODE_STAT_ITEMS];
extern _Thread_local long node_stat_diff[NR_VM_NODE_STAT_ITEMS];

static inline void node_stat_mod(enum node_stat_item item, long delta)
{
	long d = node_stat_diff[item] + delta;

	if (d > NODE_STAT_THRESHOLD || d < -NODE_STAT_THRESHOLD) {
		atomic_fetch_add_explicit(&vm_node_stat[item], d,
					  memory_order_relaxed);
		d = 0;
	}
	node_stat_diff[item] = d;
}
/* Fold the calling thread's differences (for exact reads when quiescent). */
void node_stat_flush(void);
void node_stat_reset(void);

/*
 * The kernel's own event counters the model keeps too (issue 16), per
 * thread as the cost counters are: vm events (/proc/vmstat's pgfault,
 * thp_*) and the mTHP stats per order (count_mthp_stat(), the files of
 * hugepages-<size>kB/stats/).  Read by pb_vm_events_read().
 */
enum vm_event_item {
	PGFAULT,
	THP_FAULT_ALLOC,
	THP_FAULT_FALLBACK,
	THP_SPLIT_PMD,
	NR_VM_EVENT_ITEMS
};
enum mthp_stat_item {
	MTHP_STAT_ANON_FAULT_ALLOC,
	MTHP_STAT_ANON_FAULT_FALLBACK,
	MTHP_STAT_SPLIT,
	__MTHP_STAT_COUNT
};
extern _Thread_local uint64_t vm_events[NR_VM_EVENT_ITEMS];
extern _Thread_local uint64_t mthp_stats[HPAGE_PMD_ORDER + 1][__MTHP_STAT_COUNT];
#define count_vm_event(item)		(vm_events[item]++)
#define count_mthp_stat(order, item)	(mthp_stats[order][item]++)

/* The acting task, for fault accounting (mm/vmstat.c). */
extern _Thread_local struct task_struct *current_task;

static inline struct page *pfn_to_page(unsigned long pfn)
{
	return &machine.mem_map[pfn];
}
static inline unsigned long page_to_pfn(const struct page *page)
{
	return (unsigned long)(page - machine.mem_map);
}
static inline void *page_address(const struct page *page)
{
	return machine.frames + (page_to_pfn(page) << PAGE_SHIFT);
}
static inline void *pfn_address(unsigned long pfn)
{
	return machine.frames + (pfn << PAGE_SHIFT);
}
static inline bool pfn_valid(unsigned long pfn)
{
	return pfn && pfn < machine.nr_frames;
}

/*
 * raw_: the model's own look at a page's flags (the buddy allocator's
 * lists, page contents), which is no kernel memmap access.
 */
static inline bool raw_PageFlag(const struct page *page, int bit)
{
	return atomic_load_explicit(&((struct page *)page)->flags,
				    memory_order_relaxed) & (1UL << bit);
}
static inline void raw_SetPageFlag(struct page *page, int bit)
{
	atomic_fetch_or_explicit(&page->flags, 1UL << bit, memory_order_relaxed);
}
static inline void raw_ClearPageFlag(struct page *page, int bit)
{
	atomic_fetch_and_explicit(&page->flags, ~(1UL << bit), memory_order_relaxed);
}
static inline bool PageFlag(const struct page *page, int bit)
{
	memmap_touch(page_to_pfn(page));
	return raw_PageFlag(page, bit);
}
static inline void SetPageFlag(struct page *page, int bit)
{
	memmap_touch(page_to_pfn(page));
	raw_SetPageFlag(page, bit);
}
static inline void ClearPageFlag(struct page *page, int bit)
{
	memmap_touch(page_to_pfn(page));
	raw_ClearPageFlag(page, bit);
}
#define PageAnonExclusive(p)		PageFlag(p, PG_anon_exclusive)
#define SetPageAnonExclusive(p)		SetPageFlag(p, PG_anon_exclusive)
/* Part of a large folio?  One load of the page's own flags. */
static inline bool PageCompound(const struct page *page)
{
	memmap_touch(page_to_pfn(page));
	return atomic_load_explicit(&((struct page *)page)->flags,
				    memory_order_relaxed) &
	       ((1UL << PG_head) | (1UL << PG_tail));
}
#define ClearPageAnonExclusive(p)	ClearPageFlag(p, PG_anon_exclusive)

/*
 * How many of the @max_nr pages from @page have PageAnonExclusive ==
 * @expected.  Exclusivity is per page, so every batch over a large folio
 * that depends on it (GUP's unshare rule, mprotect's write upgrade, the
 * write-fault reuse) is cut where it changes.  Counting starts at @page,
 * the batch's own first page - never the folio's head: a batch that
 * starts inside the folio and asked the head would judge the wrong pages.
 */
static inline unsigned long page_anon_exclusive_sub_batch(struct page *page,
							  unsigned long max_nr,
							  bool expected)
{
	unsigned long nr = 0;

	while (nr < max_nr && PageAnonExclusive(page + nr) == expected)
		nr++;
	return nr;
}

static inline struct folio *pfn_folio(unsigned long head_pfn)
{
	return &machine.folio_map[head_pfn];
}
static inline unsigned long folio_pfn(const struct folio *folio)
{
	return (unsigned long)(folio - machine.folio_map);
}
/* The head page's line: flags, refcount, mapping, order-0 _mapcount. */
static inline void folio_touch_head(const struct folio *folio)
{
	memmap_touch(folio_pfn(folio));
}
/* A large folio's second line: mapcounts, pincount, MM ids, order. */
static inline void folio_touch_large(const struct folio *folio)
{
	memmap_touch(folio_pfn(folio) + 1);
}
/*
 * May race with a split or free: callers that need it stable re-check.
 * The kernel's READ_ONCE(page->compound_head) orders the folio reads that
 * follow by address dependency; C11 has no such ordering, hence acquire.
 */
static inline struct folio *raw_page_folio(const struct page *page)
{
	return pfn_folio(atomic_load_explicit(&((struct page *)page)->compound_head,
					      memory_order_acquire));
}
/* The page's line, and a tail's head line (folio_test_large() et al.). */
static inline struct folio *page_folio(const struct page *page)
{
	struct folio *folio = raw_page_folio(page);

	memmap_touch(page_to_pfn(page));
	memmap_touch(folio_pfn(folio));
	return folio;
}
static inline struct page *folio_page(const struct folio *folio, unsigned long n)
{
	return pfn_to_page(folio_pfn(folio) + n);
}
static inline unsigned int raw_folio_order(const struct folio *folio)
{
	return atomic_load_explicit(&((struct folio *)folio)->order,
				    memory_order_relaxed);
}
/* folio_test_large() on the head line, then a large one's _flags_1. */
static inline unsigned int folio_order(const struct folio *folio)
{
	unsigned int order = raw_folio_order(folio);

	folio_touch_head(folio);
	if (order)
		folio_touch_large(folio);
	return order;
}
static inline unsigned long folio_nr_pages(const struct folio *folio)
{
	return 1UL << folio_order(folio);
}
static inline unsigned long folio_size(const struct folio *folio)
{
	return folio_nr_pages(folio) << PAGE_SHIFT;
}
static inline bool folio_test(const struct folio *folio, int bit)
{
	folio_touch_head(folio);
	return atomic_load_explicit(&((struct folio *)folio)->flags,
				    memory_order_relaxed) & (1UL << bit);
}
static inline void folio_set_flag(struct folio *folio, int bit)
{
	folio_touch_head(folio);
	atomic_fetch_or_explicit(&folio->flags, 1UL << bit, memory_order_relaxed);
}
static inline void folio_clear_flag(struct folio *folio, int bit)
{
	folio_touch_head(folio);
	atomic_fetch_and_explicit(&folio->flags, ~(1UL << bit), memory_order_relaxed);
}
/*
 * As in the kernel, "large" is the head page's PG_head bit: for an order-0
 * page the folio's first page is the page itself, so asking costs no
 * cache line beyond the struct page the caller already has (the order-0
 * mprotect batching regression is about exactly this load).
 */
#define folio_test_large(f)	PageFlag(folio_page(f, 0), PG_head)
#define folio_test_anon(f)	folio_test(f, PG_anon)
#define folio_test_dirty(f)	folio_test(f, PG_dirty)
#define folio_test_zero(f)	folio_test(f, PG_zero)
#define folio_test_swapbacked(f) folio_test(f, PG_swapbacked)
/* MADV_FREE'd and not re-dirtied since: reclaim may discard it. */
static inline bool folio_test_lazyfree(const struct folio *folio)
{
	return folio_test_anon(folio) && !folio_test_swapbacked(folio);
}
/*
 * folio_mark_lazyfree(): the kernel moves the folio to the inactive file
 * LRU and clears PG_swapbacked (lru_lazyfree()); the model has no LRU
 * lists, only the flags.
 */
static inline void folio_mark_lazyfree(struct folio *folio)
{
	if (folio_test_anon(folio) && folio_test_swapbacked(folio)) {
		folio_clear_flag(folio, PG_swapbacked);
		folio_clear_flag(folio, PG_referenced);
	}
}
/* 64-bit: every large folio has _pincount. */
#define folio_has_pincount(f)	folio_test_large(f)

/*
 * May a read fault map the (huge) zero page?  Mainline: unless
 * mm_forbids_zeropage(mm); here one setting for the whole machine.
 */
static inline bool read_fault_maps_zeropage(const struct mm_struct *mm)
{
	return !machine.read_faults_allocate;
}

static inline bool is_zero_pfn(unsigned long pfn)
{
	return pfn == machine.zero_pfn;
}
static inline bool is_huge_zero_pfn(unsigned long pfn)
{
	return pfn >= machine.huge_zero_pfn &&
	       pfn < machine.huge_zero_pfn + HPAGE_PMD_NR;
}

/* Reference counting, each atomic counted. */
static inline int folio_ref_count(const struct folio *folio)
{
	folio_touch_head(folio);
	return atomic_load_explicit(&((struct folio *)folio)->_refcount,
				    memory_order_relaxed);
}
static inline void folio_ref_add(struct folio *folio, int nr)
{
	count_stat(folio_ref_atomic);
	folio_touch_head(folio);
	atomic_fetch_add_explicit(&folio->_refcount, nr, memory_order_relaxed);
}
static inline void folio_get(struct folio *folio) { folio_ref_add(folio, 1); }
/*
 * Speculative get: add unless zero (folio_ref_try_add_rcu).  Fully ordered
 * (seq_cst) as the kernel's atomic_add_unless() is.
 */
static inline bool folio_ref_try_add(struct folio *folio, int nr)
{
	int old = atomic_load_explicit(&folio->_refcount, memory_order_relaxed);

	count_stat(folio_ref_atomic);
	folio_touch_head(folio);
	do {
		if (old <= 0)
			return false;
	} while (!atomic_compare_exchange_weak_explicit(&folio->_refcount, &old,
			old + nr, memory_order_seq_cst, memory_order_relaxed));
	return true;
}
void folio_put_refs(struct folio *folio, int refs);
static inline void folio_put(struct folio *folio) { folio_put_refs(folio, 1); }

/* Mapcounts. */
static inline int folio_large_mapcount(const struct folio *folio)
{
	folio_touch_large(folio);
	return atomic_load_explicit(&((struct folio *)folio)->_large_mapcount,
				    memory_order_relaxed) + 1;
}
static inline int folio_entire_mapcount(const struct folio *folio)
{
	folio_touch_large(folio);
	return atomic_load_explicit(&((struct folio *)folio)->_entire_mapcount,
				    memory_order_relaxed) + 1;
}
static inline int folio_mapcount(const struct folio *folio)
{
	if (folio_test_large(folio))
		return folio_large_mapcount(folio);
	folio_touch_head(folio);
	return atomic_load_explicit(&((struct folio *)folio)->_mapcount,
				    memory_order_relaxed) + 1;
}
static inline bool folio_mapped(const struct folio *folio)
{
	return folio_mapcount(folio) > 0;
}
static inline bool folio_maybe_mapped_shared(const struct folio *folio)
{
	if (!folio_test_large(folio))
		return folio_mapcount(folio) > 1;
	/*
	 * "A single mapping implies 'mapped exclusively', even if the folio
	 * flag says something different": the bit outlives the MMs that set
	 * it when a third MM, which had no mm_id slot, is the one left
	 * (random-diff, seed 5, scenario 1862: a partial MADV_FREE of a THP
	 * only that MM's PMD maps splits it).
	 */
	if (folio_mapcount(folio) <= 1)
		return false;
	/* The kernel's bit is in _mm_ids, on head + 1's line. */
	folio_touch_large(folio);
	return folio_test(folio, PG_mm_ids_shared);
}

#define GUP_PIN_COUNTING_BIAS 1024
/* Exact for large folios; may be a false positive for small ones. */
static inline bool folio_maybe_dma_pinned(const struct folio *folio)
{
	if (folio_has_pincount(folio)) {
		folio_touch_large(folio);
		return atomic_load_explicit(&((struct folio *)folio)->_pincount,
					    memory_order_relaxed) > 0;
	}
	return (unsigned int)folio_ref_count(folio) >= GUP_PIN_COUNTING_BIAS;
}

/* GUP flags (include/linux/mm_types.h + mm/internal.h). */
#define FOLL_WRITE	PB_FOLL_WRITE
#define FOLL_GET	PB_FOLL_GET
#define FOLL_PIN	PB_FOLL_PIN
#define FOLL_LONGTERM	PB_FOLL_LONGTERM
#define FOLL_FAST_ONLY	PB_FOLL_FAST_ONLY
#define FOLL_TOUCH	0x40
#define FOLL_MADV_POPULATE 0x80	/* MADV_POPULATE_*'s errors: holes -ENOMEM */

/* Fault flags. */
#define FAULT_FLAG_WRITE	0x01
#define FAULT_FLAG_UNSHARE	0x02
#define FAULT_FLAG_USER		0x04
#define FAULT_FLAG_REMOTE	0x08	/* GUP on the task's behalf */

/* Fault results. */
#define VM_FAULT_OOM		0x0001
#define VM_FAULT_SIGSEGV	0x0002
#define VM_FAULT_SIGBUS		0x0004
#define VM_FAULT_FALLBACK	0x0008
#define VM_FAULT_RETRY		0x0010
#define VM_FAULT_ERROR		(VM_FAULT_OOM | VM_FAULT_SIGSEGV | VM_FAULT_SIGBUS)
typedef unsigned int vm_fault_t;

/* rmap flags */
#define RMAP_NONE	0
#define RMAP_EXCLUSIVE	1

static inline bool is_cow_mapping(unsigned long flags)
{
	return (flags & (VM_SHARED | VM_MAYWRITE)) == VM_MAYWRITE;
}
static inline bool vma_soft_dirty_enabled(const struct vm_area_struct *vma)
{
#ifdef CONFIG_MEM_SOFT_DIRTY
	/* Soft-dirty tracking is on while VM_SOFTDIRTY is clear. */
	return !(vma->vm_flags & VM_SOFTDIRTY);
#else
	/* No soft-dirty bit in this architecture's entries: never tracked. */
	(void)vma;
	return false;
#endif
}
static inline pte_t pte_mkwrite(pte_t pte, const struct vm_area_struct *vma)
{
	if (vma->vm_flags & VM_SHADOW_STACK)
		return pte_mkwrite_shstk(pte);
	return pte_mkwrite_novma(pte);
}
static inline pte_t maybe_mkwrite(pte_t pte, const struct vm_area_struct *vma)
{
	if (likely(vma->vm_flags & VM_WRITE))
		pte = pte_mkwrite(pte, vma);
	return pte;
}
static inline pgprot_t vm_get_page_prot(unsigned long vm_flags)
{
	/* Private mappings never get RW in vm_page_prot: COW sets it. */
	if (vm_flags & (VM_READ | VM_WRITE | VM_EXEC))
		return (pgprot_t){ PAGE_READONLY };
	return (pgprot_t){ PAGE_NONE };
}
static inline pte_t mk_pte(const struct page *page, pgprot_t prot)
{
	return pfn_pte(page_to_pfn(page), prot);
}
static inline struct page *pte_page(pte_t pte)
{
	return pfn_to_page(pte_pfn(pte));
}
static inline pte_t pte_advance_pfn(pte_t pte, unsigned long nr)
{
	return arch_pte_advance_pfn(pte, nr);
}

/* page_alloc.c */
int memmap_init(unsigned long bytes);
void memmap_exit(void);
struct folio *folio_alloc(unsigned int order);
unsigned long alloc_table_frame(void);
void free_table_frame(unsigned long pfn);
void folio_list_add_split(unsigned long head, unsigned long nr);
/* A new folio's order, mapcounts but _mapcount, pincount and MM ids. */
void folio_reset_fields(struct folio *folio, unsigned int order);
unsigned long nr_free_frames(void);
/* The frames in no allocated folio (pb_check's count of the memmap). */
struct frame_counts {
	unsigned long free, tables, reserved;
};
void for_each_allocated_folio(void (*fn)(struct folio *folio, void *arg),
			      void *arg, struct frame_counts *counts);

/*
 * page_data.c: a data page's contents, through these functions only (a
 * page in compact form has nothing in machine.frames to read).
 */
void clear_highpage(struct page *page);
void clear_folio(struct folio *folio);
void copy_highpage(struct page *to, struct page *from);
void memset_page(struct page *page, size_t offset, uint8_t val, size_t len);
void memcpy_from_page(void *to, struct page *page, size_t offset, size_t len);
uint8_t page_load_byte(struct page *page, unsigned long offset);
void page_store_byte(struct page *page, unsigned long offset, uint8_t val);
bool page_data_materialized(const struct page *page);
bool page_is_zero(struct page *page);

/* check.c */
unsigned long check_visited(void);

/* rmap.c */
int anon_vma_prepare(struct vm_area_struct *vma);
struct anon_vma *find_mergeable_anon_vma(struct vm_area_struct *vma);
struct anon_vma *anon_vma_get(struct anon_vma *av);
void anon_vma_put(struct anon_vma *av);
struct anon_vma *anon_vma_fork(struct vm_area_struct *vma);
unsigned int anon_vma_chain_len(const struct anon_vma *av);
void folio_add_new_anon_rmap(struct folio *folio, struct vm_area_struct *vma,
			     bool pmd_level);
void folio_add_anon_rmap_ptes(struct folio *folio, struct page *page, int nr,
			      struct vm_area_struct *vma, int flags);
int folio_try_dup_anon_rmap_ptes(struct folio *folio, struct page *page,
				 int nr, struct vm_area_struct *dst_vma,
				 struct vm_area_struct *src_vma);
int folio_try_dup_anon_rmap_pmd(struct folio *folio,
				struct vm_area_struct *dst_vma,
				struct vm_area_struct *src_vma);
void folio_remove_rmap_ptes(struct folio *folio, struct page *page, int nr,
			    struct vm_area_struct *vma);
void folio_remove_rmap_pmd(struct folio *folio, struct vm_area_struct *vma);

/* vma.c */
struct vm_area_struct *find_vma(struct mm_struct *mm, unsigned long addr);
struct vm_area_struct *vma_lookup(struct mm_struct *mm, unsigned long addr);
int vma_index(struct mm_struct *mm, struct vm_area_struct *vma);
int split_vma(struct mm_struct *mm, struct vm_area_struct *vma,
	      unsigned long addr, int new_below);
void vma_try_merge_around(struct mm_struct *mm, unsigned long start,
			  unsigned long end);
struct vm_area_struct *vma_merge_extend(struct mm_struct *mm,
					struct vm_area_struct *vma,
					unsigned long delta);
int vma_insert(struct mm_struct *mm, struct vm_area_struct *vma);
void vma_remove(struct mm_struct *mm, struct vm_area_struct *vma);
struct vm_area_struct *vm_area_alloc(struct mm_struct *mm);
void vm_area_free(struct vm_area_struct *vma);
struct vm_area_struct *vma_modify_flags(struct mm_struct *mm,
					struct vm_area_struct *vma,
					unsigned long start, unsigned long end,
					unsigned long newflags, int *errp);
int vma_modify_range(struct mm_struct *mm, unsigned long start,
		     unsigned long end, struct vm_area_struct **vmap);
struct mm_struct *mm_alloc(void);
void mm_free(struct mm_struct *mm);
int do_mmap(struct mm_struct *mm, unsigned long addr, unsigned long len,
	    unsigned long vm_flags, bool fixed);
int do_munmap(struct mm_struct *mm, unsigned long start, unsigned long len);
void unmap_region(struct mm_struct *mm, struct vm_area_struct *vma,
		  unsigned long start, unsigned long end);

/* memory.c */
vm_fault_t handle_mm_fault(struct vm_area_struct *vma, unsigned long address,
			   unsigned int flags);
struct mmu_gather;
/* What a zap may do beyond clearing entries. */
struct zap_details {
	bool reclaim_pt;	/* MADV_DONTNEED: free emptied PTE tables */
};
void zap_page_range(struct mmu_gather *tlb, struct vm_area_struct *vma,
		    unsigned long start, unsigned long end,
		    const struct zap_details *details);
int copy_page_range(struct vm_area_struct *dst_vma,
		    struct vm_area_struct *src_vma);
void free_pgd_range(struct mmu_gather *tlb, struct mm_struct *mm,
		    unsigned long addr, unsigned long end);
struct page *vm_normal_page(struct vm_area_struct *vma, unsigned long addr,
			    pte_t pte);

/* huge_memory.c */
unsigned long thp_vma_allowable_orders(struct vm_area_struct *vma);
bool thp_vma_suitable_order(struct vm_area_struct *vma, unsigned long addr,
			    unsigned int order);
vm_fault_t do_huge_pmd_anonymous_page(struct vm_area_struct *vma,
				      unsigned long addr, pmd_t *pmdp,
				      unsigned int flags);
vm_fault_t do_huge_pmd_wp_page(struct vm_area_struct *vma, unsigned long addr,
			       pmd_t *pmdp, pmd_t orig_pmd, unsigned int flags);
int split_folio(struct vm_area_struct *vma, unsigned long addr,
		struct page *page, int extra);
bool madvise_free_huge_pmd(struct mmu_gather *tlb, struct vm_area_struct *vma,
			   pmd_t *pmdp, unsigned long addr, unsigned long next);
struct folio *madvise_pageout_huge_pmd(struct vm_area_struct *vma, pmd_t *pmdp,
				       unsigned long addr, unsigned long next);
void pageout_huge_pmd_folio(struct vm_area_struct *vma, unsigned long addr,
			    struct folio *folio);
void __split_huge_pmd(struct vm_area_struct *vma, pmd_t *pmdp,
		      unsigned long haddr);
int split_huge_pmd_range(struct vm_area_struct *vma, unsigned long start,
			 unsigned long end);
void zap_huge_pmd(struct mmu_gather *tlb, struct vm_area_struct *vma,
		  pmd_t *pmdp, unsigned long addr);
int copy_huge_pmd(struct vm_area_struct *dst_vma, struct vm_area_struct *src_vma,
		  pmd_t *dst_pmdp, pmd_t *src_pmdp, unsigned long addr);
int change_huge_pmd(struct mmu_gather *tlb, struct vm_area_struct *vma,
		    pmd_t *pmdp, unsigned long addr, pgprot_t newprot,
		    bool try_writable);
void huge_pmd_set_accessed(struct vm_area_struct *vma, pmd_t *pmdp,
			   pmd_t orig_pmd, bool write);

/* gup.c */
struct gup_pages {
	struct page **pages;
	unsigned long nr;
	unsigned int flags;
};
long get_user_pages_fast_flags(struct mm_struct *mm, unsigned long start,
			       unsigned long nr_pages, unsigned int gup_flags,
			       struct page **pages);
void unpin_user_pages_dirty_lock(struct page **pages, unsigned long npages,
				 bool make_dirty);
void put_user_pages_refs(struct page **pages, unsigned long npages);
bool gup_must_unshare(struct vm_area_struct *vma, unsigned int flags,
		      struct page *page);
long faultin_page_range(struct mm_struct *mm, unsigned long start,
			unsigned long end, bool write);
long populate_vma_page_range(struct vm_area_struct *vma, unsigned long start,
			     unsigned long end);
void __mm_populate(struct mm_struct *mm, unsigned long start, unsigned long end);

/* fork.c */
int dup_mm(struct mm_struct *oldmm, struct mm_struct **newmm);
void exit_mmap(struct mm_struct *mm);

/* mprotect.c, madvise.c, mremap.c */
int do_mprotect(struct mm_struct *mm, unsigned long start, unsigned long len,
		unsigned long prot_flags);
int do_madvise(struct mm_struct *mm, unsigned long start, unsigned long len,
	       int advice);
int do_mremap(struct mm_struct *mm, unsigned long old, unsigned long len,
	      unsigned long new_addr, bool dontunmap);
int mremap_at(struct mm_struct *mm, unsigned long addr, unsigned long old_len,
	      unsigned long new_len, unsigned long limit);

/* access.c */
#define NR_CPUS 8
int access_user(struct mm_struct *mm, int cpu, unsigned long addr, bool write,
		uint8_t *val);

/* registry.c: every live mm and GUP result, for the checker and explore */
void mm_registry_add(struct mm_struct *mm);
void mm_registry_del(struct mm_struct *mm);
void mm_registry_for_each(void (*fn)(struct mm_struct *mm, void *arg),
			  void *arg);
void gup_track(struct gup_pages *gp);
void gup_untrack(struct gup_pages *gp);
void gup_for_each_tracked(void (*fn)(struct gup_pages *gp, void *arg),
			  void *arg);
struct registry_state {
	struct mm_struct **mm_registry;
	int nr_mm_registry, cap_mm_registry;
	struct gup_pages **tracked;
	unsigned long nr_tracked, cap_tracked;
};
void registry_save(struct registry_state *st);
void registry_restore(const struct registry_state *st);

/*
 * slab.c: the model's own allocator for what lives as long as a process,
 * an mm, a VMA or a GUP result does.  Plain calloc/realloc/free unless the
 * machine was brought up with pb_config.checkpoints, when they come from
 * one arena that pb_checkpoint_save() copies whole.
 */
void *kzalloc(size_t size);
void *krealloc(void *p, size_t size);
void kfree(void *p);
void arena_enable(void);
void arena_disable(void);
/* The arena's used bytes, its free lists among them; NULL without one. */
const void *arena_contents(size_t *used);
/* The arena back to what arena_contents() gave. */
void arena_restore(const void *contents, size_t used);

/* checkpoint.c: a machine brought up, or down, for checkpoints. */
void checkpoints_enable(void);
void checkpoints_disable(void);

/* page_alloc.c: the allocator's globals, for a checkpoint. */
struct page_alloc_state {
	unsigned long free_list[MAX_PAGE_ORDER + 1];
	unsigned long nr_free, allocated_folios, nr_table_frames, nr_reserved;
	unsigned long deferred_init_end, low_end;
};
void page_alloc_save(struct page_alloc_state *st);
struct alloc_log_entry {
	unsigned long pfn, nr;
};
#define ALLOC_LOG_MAX 256
const struct alloc_log_entry *alloc_log_read(unsigned int *nr);
void alloc_log_reset(void);
void page_alloc_restore(const struct page_alloc_state *st);
/* The first block (pfn 0 .. the huge zero folio): below low_end, written. */
#define MEMMAP_LOW_LIMIT HPAGE_PMD_NR

/* tlb.c */
void rcu_reader_registered(bool on);
int tlb_skip_flushes_get(void);
void tlb_skip_flushes_set(int n);

#endif /* MM_INTERNAL_H */
