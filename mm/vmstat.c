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
 *    keeps current_task per CPU too).
 */
#include "mm/internal.h"

_Thread_local uint64_t pb_stat_counters[PB_NR_STATS];
/* The model has one node: its sums are the global ones. */
atomic_long vm_node_stat[NR_VM_NODE_STAT_ITEMS];
_Thread_local long node_stat_diff[NR_VM_NODE_STAT_ITEMS];
_Thread_local struct task_struct *current_task;

static const char *const stat_names[PB_NR_STATS] = {
#define PB_STAT(name) #name,
#include "ptebatch_stats.h"
#undef PB_STAT
};

const char *pb_stat_name(enum pb_stat stat)
{
	return (unsigned)stat < PB_NR_STATS ? stat_names[stat] : "?";
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
