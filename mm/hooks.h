/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hooks.h: test-only observation and injection points, compiled in only
 * with CONFIG_PB_HOOKS (the "hooks" build of the library that the race
 * and stress tests link against); in every other build they are empty
 * and cost nothing.
 *
 * Two kinds:
 * - entry events: every store to a page-table entry is bracketed by two
 *   ticks of one global counter, so a test can tell, for any address,
 *   which values its entries held over which interval of "time" (the
 *   stress test checks each GUP result against that history);
 * - GUP-fast steps: a callback between the steps of the lockless walk,
 *   where a race-injection test changes a PTE, the PMD or a refcount.
 */
#ifndef MM_HOOKS_H
#define MM_HOOKS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct mm_struct;

/* Between which steps of gup_fast_pte_range() the callback runs. */
enum gup_fast_step {
	GUP_STEP_PTE_READ,	/* first PTE read, nothing grabbed yet */
	GUP_STEP_GRABBED,	/* one reference taken, not re-checked */
	GUP_STEP_RECHECKED,	/* PMD and PTE re-checked, before any batch */
	GUP_STEP_BATCH_READ,	/* in the batch scan, before reading entry idx */
	GUP_STEP_BATCH_GRABBED,	/* the batch's other idx - 1 references taken */
	NR_GUP_STEPS,
};

/* One store to an entry: what it maps from when to when. */
struct pb_entry_event {
	struct mm_struct *mm;
	unsigned long addr;	/* first address the entry maps */
	int level;		/* 1 PTE, 2 PMD, 3 PUD, 4 PGD */
	uint64_t val;		/* the value stored */
	/* The counter read before the store and after it. */
	uint64_t seq_before, seq_after;
};

#ifdef CONFIG_PB_HOOKS
#define PB_HOOKS 1
extern atomic_ullong pb_hook_clock;
extern void (*pb_hook_entry_written)(const struct pb_entry_event *ev);
extern void (*pb_hook_gup_fast)(enum gup_fast_step step, void *ptep,
				unsigned int idx);

/* A tick of the global clock, ordered with every other tick. */
static inline uint64_t pb_hook_tick(void)
{
	return atomic_fetch_add(&pb_hook_clock, 1);
}
void hook_entry_written(void *entryp, uint64_t val, uint64_t seq_before);
void hook_table_root(unsigned long pgd_pfn, struct mm_struct *mm);
void hook_table_withdrawn(void *pmdp, unsigned long table_pfn);

#define hook_gup_fast(step, ptep, idx)					\
	do {								\
		if (pb_hook_gup_fast)					\
			pb_hook_gup_fast(step, ptep, idx);		\
	} while (0)

/*
 * Set by a test only: GUP-fast's batch scans with plain reads (without
 * FPB_LOCKLESS), to show what FPB_LOCKLESS prevents on x86-pae
 * (tests/hooks/test_torn_read.c).  Never set in the model's own paths.
 */
extern bool pb_hook_gup_batch_plain;

/*
 * Called by copy_pte_range() (fork) once it has allocated the page it
 * needs to copy an exclusive page of a maybe-pinned folio, before it
 * retries the copy without the PTE locks: where a test releases the pin,
 * as another thread may, so the retry no longer needs the page.
 */
extern void (*pb_hook_fork_prealloc)(void);
#define hook_fork_prealloc()						\
	do {								\
		if (pb_hook_fork_prealloc)				\
			pb_hook_fork_prealloc();			\
	} while (0)

#ifdef CONFIG_X86_PAE
/*
 * x86-pae: called between the two 32-bit loads of a PTE read, so a test
 * can store to the entry exactly there and tear the read.
 */
extern void (*pb_hook_split_read)(void *entryp);
#define hook_split_read(entryp)						\
	do {								\
		if (pb_hook_split_read)					\
			pb_hook_split_read(entryp);			\
	} while (0)
#endif
#else
#define PB_HOOKS 0
static inline uint64_t pb_hook_tick(void) { return 0; }
static inline void hook_entry_written(void *entryp, uint64_t val,
				      uint64_t seq_before)
{
	(void)entryp;
	(void)val;
	(void)seq_before;
}
static inline void hook_table_root(unsigned long pgd_pfn,
				   struct mm_struct *mm)
{
	(void)pgd_pfn;
	(void)mm;
}
static inline void hook_table_withdrawn(void *pmdp, unsigned long table_pfn)
{
	(void)pmdp;
	(void)table_pfn;
}
#define hook_gup_fast(step, ptep, idx) do { } while (0)
/* A constant: the batch's flags fold as before. */
#define pb_hook_gup_batch_plain false
#define hook_fork_prealloc() do { } while (0)
#define hook_split_read(entryp) do { } while (0)
#endif

#endif /* MM_HOOKS_H */
