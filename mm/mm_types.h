/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mm/ - the model proper: Linux anonymous memory management in userspace.
 *
 * mm_types.h: the state.  struct page (one per frame, permanent), struct
 * folio (metadata of a compound allocation, kept in a permanent array
 * indexed by the head PFN, so a speculative GUP-fast reference on a freed
 * folio touches valid memory exactly as in the kernel), the address space
 * (mm_struct, vm_area_struct, anon_vma) and the simulated task.
 */
#ifndef MM_MM_TYPES_H
#define MM_MM_TYPES_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mm/arch/arch.h"

/*
 * The spin-wait hint of the CPU the model runs on, not of the modelled
 * one: x86's pause, arm64's yield (as the kernels' cpu_relax()), else
 * a compiler barrier alone.
 */
static inline void cpu_relax(void)
{
#if defined(__x86_64__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" : : : "memory");
#else
	atomic_signal_fence(memory_order_seq_cst);
#endif
}

/* A test-and-test-and-set spinlock; acquire/release pair with the data. */
typedef struct { atomic_int locked; } spinlock_t;

static inline void spin_lock_init(spinlock_t *l) { atomic_init(&l->locked, 0); }
static inline void spin_lock(spinlock_t *l)
{
	for (;;) {
		if (!atomic_exchange_explicit(&l->locked, 1, memory_order_acquire))
			return;
		while (atomic_load_explicit(&l->locked, memory_order_relaxed))
			cpu_relax();
	}
}
static inline bool spin_trylock(spinlock_t *l)
{
	return !atomic_exchange_explicit(&l->locked, 1, memory_order_acquire);
}
static inline void spin_unlock(spinlock_t *l)
{
	atomic_store_explicit(&l->locked, 0, memory_order_release);
}
static inline bool spin_is_locked(spinlock_t *l)
{
	return atomic_load_explicit(&l->locked, memory_order_relaxed);
}

/* Per-page flags (struct page::flags). */
enum pageflags {
	/*
	 * PageAnonExclusive: mapped by one MM only, so it may be mapped
	 * writable or pinned; per page (a PMD mapping: on the head page).
	 */
	PG_anon_exclusive,
	PG_head,		/* first page of a large folio (compound head) */
	PG_tail,		/* any other page of a large folio */
	PG_buddy,		/* free, on a buddy free list (head of a block) */
	PG_table,		/* a page-table page */
	PG_reserved,		/* never allocated (pfn 0, the zero pages) */
	/*
	 * The model's own (page_data.c): the page's frame in machine.frames
	 * holds its contents, which page->data cannot; and the bit spinlock
	 * its writers take.
	 */
	PG_data_full,
	PG_data_lock,
};

/* Folio flags (struct folio::flags). */
enum folioflags {
	PG_locked,
	PG_referenced,
	PG_dirty,
	PG_anon,		/* folio->mapping is an anon_vma */
	PG_lru,
	PG_zero,		/* the shared (huge) zero folio */
	PG_mm_ids_shared,	/* FOLIO_MM_IDS_SHARED_BIT: maybe mapped shared */
	/*
	 * Backed by swap: every new anon folio.  MADV_FREE clears it (lazy
	 * free: reclaim may drop the folio if nothing re-dirtied it);
	 * reclaim that finds it re-dirtied or referenced sets it again.
	 */
	PG_swapbacked,
};

struct page {
	atomic_ulong flags;
	/* PFN of the folio's head page (the page itself for a head). */
	atomic_ulong compound_head;
	union {
		struct {			/* PG_buddy */
			unsigned long next, prev;	/* free list, pfns */
			unsigned int order;
		} buddy;
		struct {			/* head of an allocated folio */
			/*
			 * The model's own, not the kernel's: every
			 * allocated folio on one list, for pb_check()
			 * (page_alloc.c).  Pfns, 0 = none.
			 */
			unsigned long next, prev;
		} folio_list;
		struct {			/* any page of an allocated folio */
			/*
			 * Beside the head's folio_list and a free block's
			 * order, never on them: a page keeps its contents
			 * from its folio's first clear or copy to its free.
			 */
			unsigned long _folio_list[2];
			unsigned int _buddy_order;
			/*
			 * The contents without PG_data_full: the first byte,
			 * and the one value of every other byte (page_data.c).
			 */
			_Atomic uint8_t first, rest;
		} data;
		struct {			/* PG_table */
			spinlock_t ptl;
			/* Tables deposited for huge PMDs in this PMD table. */
			unsigned long pmd_huge_pte;
			/* Link in a deposit list or an mmu_gather free list. */
			unsigned long pt_next;
			/*
			 * Hooks build only: whose table, at which level (1
			 * PTE .. 4 PGD), mapping from which address.
			 */
			struct mm_struct *pt_mm;
			unsigned long pt_addr;
			int pt_level;
		} pt;
	};
} __attribute__((aligned(64)));
/* As the kernel's: 64 bytes, so per-page metadata costs a line per page. */
_Static_assert(sizeof(struct page) == 64, "struct page is 64 bytes");
_Static_assert(offsetof(struct page, data.first) >=
	       offsetof(struct page, buddy.order) + sizeof(unsigned int) &&
	       offsetof(struct page, data.first) >=
	       offsetof(struct page, folio_list.prev) + sizeof(unsigned long),
	       "a page's contents share no byte with the allocator's lists");

typedef unsigned int mm_id_t;
#define MM_ID_DUMMY 0

struct anon_vma;

struct folio {
	/*
	 * One cache line per folio, the reference count and the order
	 * first: GUP-fast asks the order right after its grab, and in the
	 * kernel that question (PG_head) sits in the line the grab wrote.
	 */
	atomic_int _refcount;
	/* Read by GUP-fast without a reference, hence atomic. */
	atomic_uint order;
	atomic_ulong flags;
	struct anon_vma *_Atomic mapping;
	atomic_int _mapcount;		/* small folios: -1 = unmapped */
	atomic_int _large_mapcount;	/* large folios: -1 = unmapped */
	atomic_int _entire_mapcount;	/* PMD mappings, -1 based */
	atomic_int _pincount;		/* large folios: exact pins */
	/*
	 * CONFIG_MM_ID: up to two owning MMs and their mapcounts (-1 based),
	 * under the large-mapcount lock (a bit spinlock in the kernel).
	 */
	spinlock_t mm_id_lock;
	mm_id_t _mm_id[2];
	int _mm_id_mapcount[2];
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct folio) == 64, "one cache line per folio");

struct vm_area_struct;

/*
 * The simulated task: fault accounting of a process.  Atomic because a
 * stress test runs several threads in one address space; the kernel's is
 * per thread and summed.
 */
struct task_struct {
	atomic_ulong min_flt;
};

struct mm_struct {
	pgd_t *pgd;			/* top-level table (in a frame) */
	unsigned long pgd_pfn;
	pthread_rwlock_t mmap_lock;
	spinlock_t page_table_lock;	/* PMD-level lock */
	/* VMAs sorted by address; mmap_lock protects the array. */
	struct vm_area_struct **vmas;
	int nr_vmas, cap_vmas;
	mm_id_t mm_id;
	/* Fork in progress (odd) for GUP-fast PIN: write_protect_seq. */
	atomic_uint write_protect_seq;
	atomic_bool has_pinned;		/* MMF_HAS_PINNED */
	struct task_struct task;
	unsigned long nr_ptes;		/* PTE tables, for the checker */
};

/* VMA flags we model (names as in include/linux/mm.h). */
#define VM_READ		0x00000001UL
#define VM_WRITE	0x00000002UL
#define VM_EXEC		0x00000004UL
#define VM_SHARED	0x00000008UL
#define VM_MAYREAD	0x00000010UL
#define VM_MAYWRITE	0x00000020UL
#define VM_MAYEXEC	0x00000040UL
#define VM_MAYSHARE	0x00000080UL
#define VM_DONTCOPY	0x00020000UL
#define VM_ACCOUNT	0x00100000UL	/* committed memory: private, writable once */
#define VM_WIPEONFORK	0x02000000UL
#define VM_SOFTDIRTY	0x08000000UL
#define VM_HUGEPAGE	0x20000000UL
#define VM_NOHUGEPAGE	0x40000000UL
#define VM_SHADOW_STACK	0x100000000UL

struct anon_vma {
	struct anon_vma *root;
	atomic_int refcount;
};

struct vm_area_struct {
	unsigned long vm_start, vm_end;
	struct mm_struct *vm_mm;
	unsigned long vm_flags;
	pgprot_t vm_page_prot;
	unsigned long vm_pgoff;		/* in pages, for merge compatibility */
	/*
	 * Set once, by the first fault, under mmap_lock for read and the
	 * mm's page_table_lock (anon_vma_prepare); read without either.
	 */
	struct anon_vma *_Atomic anon_vma;
};

#endif /* MM_MM_TYPES_H */
