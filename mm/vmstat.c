// SPDX-License-Identifier: GPL-2.0-only
/*
 * vmstat.c: what each thread counts, and for whom (mm/vmstat.c).  The
 * kernel keeps its counters per CPU and sums or folds them when read; the
 * model keeps them per thread, the unit that runs its code:
 *
 *  - the cost counters (include/ptebatch_stats.h) are the model's vm
 *    events: count_stat() is a thread-local add as count_vm_event() is a
 *    per-CPU one, and pb_stats_read() reads the calling thread's;
 *  - the pin node statistics (NR_FOLL_PIN_ACQUIRED/RELEASED) keep a small
 *    per-thread difference that node_stat_mod() (mm/internal.h) folds
 *    into vm_node_stat[] past a threshold, as node_stat_mod_folio() does
 *    with per-CPU differences; pb_thread_quiesce() folds the caller's,
 *    as quiet_vmstat() does for a CPU going idle;
 *  - the acting task, whose minor faults handle_mm_fault() counts (x86
 *    keeps current_task per CPU too);
 *  - memmap_line's set of the struct page lines the current kernel entry
 *    has touched (a CPU's cache, roughly: what a kernel entry brings in).
 */
#include <stdlib.h>
#include <string.h>

#include "mm/internal.h"

_Thread_local uint64_t pb_stat_counters[PB_NR_STATS];
/* The model has one node: its sums are the global ones. */
atomic_long vm_node_stat[NR_VM_NODE_STAT_ITEMS];
_Thread_local long node_stat_diff[NR_VM_NODE_STAT_ITEMS];
_Thread_local struct task_struct *current_task;
_Thread_local uint64_t vm_events[NR_VM_EVENT_ITEMS];
_Thread_local uint64_t mthp_stats[HPAGE_PMD_ORDER + 1][__MTHP_STAT_COUNT];

static const char *const stat_names[PB_NR_STATS] = {
#define PB_STAT(name) #name,
#include "ptebatch_stats.h"
#undef PB_STAT
};

const char *pb_stat_name(enum pb_stat stat)
{
	return (unsigned)stat < PB_NR_STATS ? stat_names[stat] : "?";
}

/*
 * memmap_line: an open-addressing hash set of line numbers per thread.
 * A slot is in the set when its stamp is the current generation, so
 * emptying it at each kernel entry is one increment; it doubles when
 * half full (a 4G mprotect touches a million lines in one entry).
 */
atomic_bool memmap_lines_on;

struct memmap_slot {
	unsigned long line;
	unsigned long gen;
};

static _Thread_local struct {
	struct memmap_slot *slots;
	unsigned long mask;	/* slots - 1, 0 before the first use */
	unsigned long nr;	/* lines in the current generation */
	unsigned long gen;	/* starts at 1: a zeroed slot is empty */
	unsigned int paused;
} memmap_set;

static unsigned long memmap_hash(unsigned long line)
{
	return (line * 0x9E3779B97F4A7C15UL) >> 20;
}

/* The slot holding @line, or the empty one where it would go. */
static struct memmap_slot *memmap_slot(struct memmap_slot *slots,
				       unsigned long mask, unsigned long gen,
				       unsigned long line)
{
	unsigned long i = memmap_hash(line) & mask;

	while (slots[i].gen == gen && slots[i].line != line)
		i = (i + 1) & mask;
	return &slots[i];
}

/* Double the table (or make the first one), keeping this generation's. */
static bool memmap_set_grow(void)
{
	unsigned long size = memmap_set.mask ? 2 * (memmap_set.mask + 1) : 1024;
	struct memmap_slot *slots = calloc(size, sizeof(*slots));
	unsigned long i;

	if (!slots)
		return false;
	for (i = 0; memmap_set.mask && i <= memmap_set.mask; i++) {
		struct memmap_slot *old = &memmap_set.slots[i];

		if (old->gen == memmap_set.gen)
			*memmap_slot(slots, size - 1, 1, old->line) =
				(struct memmap_slot){ old->line, 1 };
	}
	free(memmap_set.slots);
	memmap_set.slots = slots;
	memmap_set.mask = size - 1;
	memmap_set.gen = 1;
	return true;
}

void memmap_line_touch(unsigned long line)
{
	struct memmap_slot *slot;

	if (memmap_set.paused)
		return;
	if (2 * (memmap_set.nr + 1) > memmap_set.mask + 1 && !memmap_set_grow())
		return;	/* out of host memory: the count falls short */
	slot = memmap_slot(memmap_set.slots, memmap_set.mask, memmap_set.gen,
			   line);
	if (slot->gen == memmap_set.gen)
		return;
	*slot = (struct memmap_slot){ line, memmap_set.gen };
	memmap_set.nr++;
	count_stat(memmap_line);
}

void memmap_lines_pause(void) { memmap_set.paused++; }
void memmap_lines_resume(void) { memmap_set.paused--; }

/* Every entry starts a new set of struct page lines touched. */
static void memmap_lines_new_entry(void)
{
	memmap_set.gen++;
	memmap_set.nr = 0;
}

void kernel_enter(void)
{
	count_stat(kernel_entry);
	memmap_lines_new_entry();
}

void kernel_trap(void)
{
	count_stat(fault_trap);
	memmap_lines_new_entry();
}

/* Off: the calling thread's set goes too. */
void pb_stats_count_memmap_lines(bool on)
{
	atomic_store_explicit(&memmap_lines_on, on, memory_order_relaxed);
	if (!on) {
		free(memmap_set.slots);
		memmap_set.slots = NULL;
		memmap_set.mask = memmap_set.nr = 0;
	}
}

void pb_stats_read(uint64_t out[PB_NR_STATS])
{
	memcpy(out, pb_stat_counters, sizeof(pb_stat_counters));
}

void node_stat_flush(void)
{
	int i;

	for (i = 0; i < NR_VM_NODE_STAT_ITEMS; i++) {
		atomic_fetch_add_explicit(&vm_node_stat[i], node_stat_diff[i],
					  memory_order_relaxed);
		node_stat_diff[i] = 0;
	}
}

/* A new machine counts from zero, the calling thread's pending part too. */
void node_stat_reset(void)
{
	atomic_store(&vm_node_stat[NR_FOLL_PIN_ACQUIRED], 0);
	atomic_store(&vm_node_stat[NR_FOLL_PIN_RELEASED], 0);
	node_stat_diff[NR_FOLL_PIN_ACQUIRED] = node_stat_diff[NR_FOLL_PIN_RELEASED] = 0;
}

void pb_thread_quiesce(void) { node_stat_flush(); }

/*
 * The pin counts are the machine's (every thread's folded part): exact
 * when the other threads are quiescent, as for the checker.
 */
void pb_vm_events_read(struct pb_vm_events *ev)
{
	int order;

	node_stat_flush();
	ev->pgfault = vm_events[PGFAULT];
	ev->thp_fault_alloc = vm_events[THP_FAULT_ALLOC];
	ev->thp_fault_fallback = vm_events[THP_FAULT_FALLBACK];
	ev->thp_split_pmd = vm_events[THP_SPLIT_PMD];
	ev->foll_pin_acquired = atomic_load(&vm_node_stat[NR_FOLL_PIN_ACQUIRED]);
	ev->foll_pin_released = atomic_load(&vm_node_stat[NR_FOLL_PIN_RELEASED]);
	memset(ev->mthp, 0, sizeof(ev->mthp));
	for (order = 0; order <= HPAGE_PMD_ORDER && order < PB_MTHP_ORDERS;
	     order++) {
		ev->mthp[order][PB_MTHP_ANON_FAULT_ALLOC] =
			mthp_stats[order][MTHP_STAT_ANON_FAULT_ALLOC];
		ev->mthp[order][PB_MTHP_ANON_FAULT_FALLBACK] =
			mthp_stats[order][MTHP_STAT_ANON_FAULT_FALLBACK];
		ev->mthp[order][PB_MTHP_SPLIT] =
			mthp_stats[order][MTHP_STAT_SPLIT];
	}
}
