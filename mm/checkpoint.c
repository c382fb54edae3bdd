// SPDX-License-Identifier: GPL-2.0-only
/*
 * checkpoint.c: the whole simulated machine saved and restored in
 * process, for `ptebatch explore` (explore/explore.c), which extends
 * each sequence from its parent's state instead of replaying it.
 *
 * Nothing here is the kernel's; it is a mechanism around mm/, which it
 * never changes.  A machine's state is:
 *
 *  - the objects that live as long as a process, an mm, a VMA, an
 *    anon_vma or a GUP result does (pb_proc, mm_struct and its VMA array,
 *    vm_area_struct, anon_vma, pb_pages and its page array, the
 *    registry's lists).  On a machine brought up with
 *    pb_config.checkpoints slab.c allocates them from one arena, so a
 *    checkpoint is a copy of the arena's used bytes (the allocator's own
 *    free lists are inside it) and every pointer between the objects
 *    stays valid on restore;
 *  - the globals: struct machine, the buddy allocator's lists and
 *    counts, the registry, the TLBs of the CPUs that cached anything, the
 *    node statistics;
 *  - the memmap and folio metadata of the pfns ever written: the first
 *    block up to page_alloc.c's low_end, the huge zero folio's head, and
 *    the blocks handed out from the top (deferred_init_end up); every
 *    other entry is still the zeroes MAP_NORESERVE gave it, and restore
 *    zeroes again what was written since;
 *  - the frames whose bytes are state: page tables (PG_table) and data
 *    pages materialized in full (PG_data_full).  A free frame's bytes are
 *    never read: a table is cleared when allocated, a page is filled when
 *    materialized.
 *
 * Left out: the per-thread cost counters (pb_stats_read(), vm events),
 * which count the host thread's work and are read only as deltas, and the
 * checker's scratch tables.  A checkpoint is taken and restored at a
 * quiescent point, by the one thread that runs the model (the scenario
 * runner's CPU 0): no other thread may be registered.
 */
#include <stdlib.h>

#include "mm/internal.h"
#include "mm/tlb.h"

struct pb_checkpoint;

/*
 * The checkpoint the machine was last saved to or restored from (its gen
 * then), since when page_alloc.c's log holds the blocks handed out.
 */
static const struct pb_checkpoint *machine_is;
static unsigned long machine_is_gen, last_gen;

/* A machine brought up with pb_config.checkpoints: its objects in the arena. */
void checkpoints_enable(void)
{
	arena_enable();
	machine_is = NULL;
}

/* A machine brought down is no checkpoint's. */
void checkpoints_disable(void)
{
	arena_disable();
	machine_is = NULL;
}

struct pb_checkpoint {
	struct machine machine;
	struct page_alloc_state alloc;
	struct registry_state registry;
	int skip_flushes;
	long node_stat[NR_VM_NODE_STAT_ITEMS];
	long node_stat_diff[NR_VM_NODE_STAT_ITEMS];
	struct task_struct *current_task;
	unsigned int tlb_used;			/* a bit per CPU */
	struct cpu_tlb tlbs[NR_CPUS];		/* those CPUs' only */

	char *arena;
	size_t arena_used, arena_cap;

	/* The memmap and folio metadata: [0, low_end), the huge zero
	 * folio's first two, [deferred_init_end, nr_frames). */
	struct page *pages;
	struct folio *folios;
	size_t map_cap;

	unsigned long *frame_pfns;
	unsigned char *frames;
	size_t nr_frames, frames_cap, frame_bytes_cap;

	/*
	 * For a restore that copies only what may have changed: this save's
	 * number (never 0), and the memmap entries a machine that starts
	 * from it may write besides the blocks it is handed (page_alloc.c's
	 * log): its allocated folios, page tables, free blocks' heads, pfn 0,
	 * the zero page and the huge zero folio's head.
	 */
	unsigned long gen;
	struct alloc_log_entry *live;
	size_t nr_live, live_cap;
	/* The pfns whose saved entries differ from @diff_peer's. */
	const struct pb_checkpoint *diff_peer;
	unsigned long diff_peer_gen, diff_gen;
	unsigned long *diff;
	size_t nr_diff, diff_cap;
};


struct pb_checkpoint *pb_checkpoint_alloc(void)
{
	return calloc(1, sizeof(struct pb_checkpoint));
}

void pb_checkpoint_free(struct pb_checkpoint *ck)
{
	if (!ck)
		return;
	free(ck->arena);
	free(ck->pages);
	free(ck->folios);
	free(ck->frame_pfns);
	free(ck->frames);
	free(ck->live);
	free(ck->diff);
	if (machine_is == ck)
		machine_is = NULL;
	free(ck);
}

/* Grow *@buf to hold @n of @size, keeping *@cap. */
static bool reserve_room(void **buf, size_t *cap, size_t n, size_t size)
{
	void *bigger;

	if (n <= *cap)
		return true;
	bigger = realloc(*buf, n * size);
	if (!bigger)
		return false;
	*buf = bigger;
	*cap = n;
	return true;
}

#define HUGE_ZERO_SAVED 2UL

static unsigned long map_entries(const struct page_alloc_state *a)
{
	return a->low_end + HUGE_ZERO_SAVED + machine.nr_frames -
	       a->deferred_init_end;
}

/* The memmap entries a checkpoint holds, in its order, to @fn. */
static void for_each_saved_range(const struct page_alloc_state *a,
				 void (*fn)(unsigned long pfn, unsigned long nr,
					    unsigned long at, void *arg),
				 void *arg)
{
	fn(0, a->low_end, 0, arg);
	fn(machine.huge_zero_pfn, HUGE_ZERO_SAVED, a->low_end, arg);
	fn(a->deferred_init_end, machine.nr_frames - a->deferred_init_end,
	   a->low_end + HUGE_ZERO_SAVED, arg);
}

static void save_range(unsigned long pfn, unsigned long nr, unsigned long at,
		       void *arg)
{
	struct pb_checkpoint *ck = arg;

	memcpy(ck->pages + at, machine.mem_map + pfn, nr * sizeof(struct page));
	memcpy(ck->folios + at, machine.folio_map + pfn,
	       nr * sizeof(struct folio));
}

static void restore_range(unsigned long pfn, unsigned long nr,
			  unsigned long at, void *arg)
{
	const struct pb_checkpoint *ck = arg;

	memcpy(machine.mem_map + pfn, ck->pages + at, nr * sizeof(struct page));
	memcpy(machine.folio_map + pfn, ck->folios + at,
	       nr * sizeof(struct folio));
}

/* Back to the zeroes of a memmap never written. */
static void zero_range(unsigned long pfn, unsigned long end)
{
	if (end <= pfn)
		return;
	memset(machine.mem_map + pfn, 0, (end - pfn) * sizeof(struct page));
	memset(machine.folio_map + pfn, 0, (end - pfn) * sizeof(struct folio));
}

static bool frame_is_state(unsigned long pfn)
{
	const struct page *page = pfn_to_page(pfn);

	return raw_PageFlag(page, PG_table) || raw_PageFlag(page, PG_data_full);
}

/* @nr entries from @pfn join @ck's live list (merged with the last). */
static int add_live(struct pb_checkpoint *ck, unsigned long pfn,
		    unsigned long nr)
{
	struct alloc_log_entry *last = ck->nr_live ? &ck->live[ck->nr_live - 1]
						   : NULL;

	if (last && last->pfn + last->nr == pfn) {
		last->nr += nr;
		return 0;
	}
	if (!reserve_room((void **)&ck->live, &ck->live_cap, ck->nr_live + 1,
			  sizeof(*ck->live)))
		return -ENOMEM;
	ck->live[ck->nr_live++] = (struct alloc_log_entry){ pfn, nr };
	return 0;
}

struct live_walk {
	struct pb_checkpoint *ck;
	int ret;
};

static void add_live_folio(struct folio *folio, void *arg)
{
	struct live_walk *w = arg;

	if (!w->ret)
		w->ret = add_live(w->ck, folio_pfn(folio),
				  1UL << raw_folio_order(folio));
}

/* The frames whose bytes are state, and page tables' and free heads' pfns. */
static int save_frames(struct pb_checkpoint *ck, unsigned long pfn,
		       unsigned long end)
{
	int ret;

	for (; pfn < end; pfn++) {
		const struct page *page = pfn_to_page(pfn);

		if (raw_PageFlag(page, PG_table) || raw_PageFlag(page, PG_buddy)) {
			ret = add_live(ck, pfn, 1);
			if (ret)
				return ret;
		}
		if (!frame_is_state(pfn))
			continue;
		if (!reserve_room((void **)&ck->frame_pfns, &ck->frames_cap,
				  ck->nr_frames + 1, sizeof(*ck->frame_pfns)))
			return -ENOMEM;
		ck->frame_pfns[ck->nr_frames++] = pfn;
	}
	return 0;
}

int pb_checkpoint_save(struct pb_checkpoint *ck)
{
	const void *arena;
	size_t n, cap, arena_used;
	int cpu, ret;

	arena = arena_contents(&arena_used);
	if (!arena || !machine.mem_map)
		return -EINVAL;
	ck->machine = machine;
	page_alloc_save(&ck->alloc);
	registry_save(&ck->registry);
	ck->skip_flushes = tlb_skip_flushes_get();
	for (n = 0; n < NR_VM_NODE_STAT_ITEMS; n++) {
		ck->node_stat[n] = atomic_load(&vm_node_stat[n]);
		ck->node_stat_diff[n] = node_stat_diff[n];
	}
	ck->current_task = current_task;
	ck->tlb_used = 0;
	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		if (!cpu_tlbs[cpu].used)
			continue;
		ck->tlb_used |= 1U << cpu;
		ck->tlbs[cpu] = cpu_tlbs[cpu];
	}

	if (!reserve_room((void **)&ck->arena, &ck->arena_cap, arena_used, 1))
		return -ENOMEM;
	memcpy(ck->arena, arena, arena_used);
	ck->arena_used = arena_used;

	n = map_entries(&ck->alloc);
	cap = ck->map_cap;
	if (!reserve_room((void **)&ck->pages, &cap, n, sizeof(struct page)) ||
	    !reserve_room((void **)&ck->folios, &ck->map_cap, n,
			  sizeof(struct folio)))
		return -ENOMEM;
	for_each_saved_range(&ck->alloc, save_range, ck);

	ck->nr_frames = 0;
	ck->nr_live = 0;
	ret = add_live(ck, 0, 2);
	if (!ret)
		ret = add_live(ck, machine.huge_zero_pfn, HUGE_ZERO_SAVED);
	if (!ret)
		ret = save_frames(ck, 0, ck->alloc.low_end);
	if (!ret)
		ret = save_frames(ck, ck->alloc.deferred_init_end,
				  machine.nr_frames);
	if (!ret) {
		struct live_walk w = { ck, 0 };
		struct frame_counts counts;

		for_each_allocated_folio(add_live_folio, &w, &counts);
		ret = w.ret;
	}
	if (ret)
		return ret;
	if (!reserve_room((void **)&ck->frames, &ck->frame_bytes_cap,
			  ck->nr_frames, PAGE_SIZE))
		return -ENOMEM;
	for (n = 0; n < ck->nr_frames; n++)
		memcpy(ck->frames + n * PAGE_SIZE, pfn_address(ck->frame_pfns[n]),
		       PAGE_SIZE);
	ck->gen = ++last_gen;
	machine_is = ck;
	machine_is_gen = ck->gen;
	alloc_log_reset();
	return 0;
}

/* Where @ck holds @pfn's entries, or -1: never written before the save. */
static long saved_index(const struct pb_checkpoint *ck, unsigned long pfn)
{
	if (pfn < ck->alloc.low_end)
		return (long)pfn;
	if (pfn >= machine.huge_zero_pfn &&
	    pfn < machine.huge_zero_pfn + HUGE_ZERO_SAVED)
		return (long)(ck->alloc.low_end + pfn - machine.huge_zero_pfn);
	if (pfn >= ck->alloc.deferred_init_end && pfn < machine.nr_frames)
		return (long)(ck->alloc.low_end + HUGE_ZERO_SAVED + pfn -
			      ck->alloc.deferred_init_end);
	return -1;
}

/* @pfn's memmap and folio entries as @ck saved them. */
static void restore_pfns(const struct pb_checkpoint *ck, unsigned long pfn,
			 unsigned long nr)
{
	for (; nr; pfn++, nr--) {
		long i = saved_index(ck, pfn);

		if (pfn >= machine.nr_frames)
			return;
		if (i < 0) {
			zero_range(pfn, pfn + 1);
			continue;
		}
		machine.mem_map[pfn] = ck->pages[i];
		machine.folio_map[pfn] = ck->folios[i];
	}
}

/* Differ in what @a and @b saved of @pfn? */
static bool saved_differ(const struct pb_checkpoint *a,
			 const struct pb_checkpoint *b, unsigned long pfn)
{
	long i = saved_index(a, pfn), j = saved_index(b, pfn);

	if (i < 0 || j < 0)
		return i >= 0 || j >= 0;
	return memcmp(&a->pages[i], &b->pages[j], sizeof(struct page)) ||
	       memcmp(&a->folios[i], &b->folios[j], sizeof(struct folio));
}

/* @ck's list of the pfns whose saved entries differ from @peer's. */
static bool diff_ready(struct pb_checkpoint *ck,
		       const struct pb_checkpoint *peer)
{
	unsigned long pfn, end;

	if (ck->diff_peer == peer && ck->diff_peer_gen == peer->gen &&
	    ck->diff_gen == ck->gen)
		return true;
	ck->nr_diff = 0;
	ck->diff_peer = NULL;
	end = max(ck->alloc.low_end, peer->alloc.low_end);
	for (pfn = 0; pfn < machine.nr_frames; pfn++) {
		if (pfn == end)
			pfn = machine.huge_zero_pfn;
		if (pfn == machine.huge_zero_pfn + HUGE_ZERO_SAVED)
			pfn = min(ck->alloc.deferred_init_end,
				  peer->alloc.deferred_init_end);
		if (pfn >= machine.nr_frames || !saved_differ(ck, peer, pfn))
			continue;
		if (!reserve_room((void **)&ck->diff, &ck->diff_cap,
				  ck->nr_diff + 1, sizeof(*ck->diff)))
			return false;
		ck->diff[ck->nr_diff++] = pfn;
	}
	ck->diff_peer = peer;
	ck->diff_peer_gen = peer->gen;
	ck->diff_gen = ck->gen;
	return true;
}

/*
 * The memmap back to @ck, copying only what may differ: the machine is
 * the checkpoint it was last saved to or restored from, but for the
 * entries that one's live list names and the blocks handed out since,
 * and that checkpoint differs from @ck where diff_ready() says.  False
 * when that is not known (then everything is copied).
 */
static bool restore_memmap_since(struct pb_checkpoint *ck)
{
	const struct pb_checkpoint *was = machine_is;
	const struct alloc_log_entry *log;
	unsigned int nr_log, n;

	log = alloc_log_read(&nr_log);
	if (!was || was->gen != machine_is_gen || nr_log > ALLOC_LOG_MAX)
		return false;
	if (was != ck && !diff_ready(ck, was))
		return false;
	for (n = 0; n < was->nr_live; n++)
		restore_pfns(ck, was->live[n].pfn, was->live[n].nr);
	for (n = 0; n < nr_log; n++)
		restore_pfns(ck, log[n].pfn, log[n].nr);
	if (was != ck)
		for (n = 0; n < ck->nr_diff; n++)
			restore_pfns(ck, ck->diff[n], 1);
	return true;
}

void pb_checkpoint_restore(struct pb_checkpoint *ck)
{
	struct page_alloc_state now;
	struct machine keep = machine;
	size_t n;
	int cpu;

	if (!restore_memmap_since(ck)) {
		page_alloc_save(&now);
		zero_range(ck->alloc.low_end, now.low_end);
		zero_range(now.deferred_init_end, ck->alloc.deferred_init_end);
		for_each_saved_range(&ck->alloc, restore_range, (void *)ck);
	}
	for (n = 0; n < ck->nr_frames; n++)
		memcpy(pfn_address(ck->frame_pfns[n]), ck->frames + n * PAGE_SIZE,
		       PAGE_SIZE);
	page_alloc_restore(&ck->alloc);

	/* The same reservations: only what lives in them comes back. */
	machine = ck->machine;
	machine.mem_map = keep.mem_map;
	machine.folio_map = keep.folio_map;
	machine.frames = keep.frames;
	machine.nr_frames = keep.nr_frames;
	registry_restore(&ck->registry);
	tlb_skip_flushes_set(ck->skip_flushes);
	for (n = 0; n < NR_VM_NODE_STAT_ITEMS; n++) {
		atomic_store(&vm_node_stat[n], ck->node_stat[n]);
		node_stat_diff[n] = ck->node_stat_diff[n];
	}
	current_task = ck->current_task;
	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		if (ck->tlb_used & (1U << cpu))
			cpu_tlbs[cpu] = ck->tlbs[cpu];
		else if (cpu_tlbs[cpu].used)
			memset(&cpu_tlbs[cpu], 0, sizeof(cpu_tlbs[cpu]));
	}
	arena_restore(ck->arena, ck->arena_used);
	machine_is = ck;
	machine_is_gen = ck->gen;
	alloc_log_reset();
}
