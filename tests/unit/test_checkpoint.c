// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_checkpoint.c - saving and restoring the whole machine in process
 * (mm/checkpoint.c), what `ptebatch explore` extends its sequences from.
 *
 * A machine is checkpointed, mutated (faults, COW, fork, exit, munmap,
 * madvise, a held pin, a THP split), and restored: it must have explore's
 * state digest again, pass the invariant checker, hold a memmap and folio
 * metadata byte for byte as saved (every entry, not only those the
 * checkpoint copies), and go on as the saved machine would: the processes
 * held at the save exit without leaking a frame.
 */
#include <stdlib.h>

#include "explore/explore.h"
#include "tests/unit/pbtest.h"

#define A	ADDR_A
#define B	ADDR_B

static bool t_begin_checkpoints(void)
{
	struct pb_config cfg = { .memory_bytes = 4 * PMD_SIZE,
				 .checkpoints = true };
	int err = pb_init(&cfg);

	t.ok = true;
	t.up = err == 0;
	if (!EXPECT_EQ(err, 0))
		return false;
	t.baseline = pb_frames_in_use();
	return true;
}

/* The whole memmap and folio metadata, to compare a restore with. */
struct memmap_copy {
	struct page *pages;
	struct folio *folios;
};

static bool memmap_take(struct memmap_copy *c)
{
	c->pages = malloc(machine.nr_frames * sizeof(struct page));
	c->folios = malloc(machine.nr_frames * sizeof(struct folio));
	if (!EXPECT(c->pages && c->folios))
		return false;
	memcpy(c->pages, machine.mem_map, machine.nr_frames * sizeof(struct page));
	memcpy(c->folios, machine.folio_map,
	       machine.nr_frames * sizeof(struct folio));
	return true;
}

/* The first pfn whose entry differs from @c, or -1. */
static long memmap_differs(const struct memmap_copy *c)
{
	unsigned long pfn;

	for (pfn = 0; pfn < machine.nr_frames; pfn++)
		if (memcmp(&c->pages[pfn], &machine.mem_map[pfn],
			   sizeof(struct page)) ||
		    memcmp(&c->folios[pfn], &machine.folio_map[pfn],
			   sizeof(struct folio)))
			return (long)pfn;
	return -1;
}

static void memmap_free(struct memmap_copy *c)
{
	free(c->pages);
	free(c->folios);
}

static uint8_t load(struct pb_proc *p, unsigned long addr)
{
	uint8_t v = 0;

	EXPECT_EQ(pb_load(p, 0, addr, &v), 0);
	return v;
}

/*
 * Two processes sharing COW folios, one holding a pin; saved; then
 * every kind of change; restored twice (the second time after other
 * changes again), each time the same machine.
 */
static void test_restore_small(void)
{
	struct explore_digest d0, d1;
	struct memmap_copy saved = { 0 };
	struct pb_checkpoint *ck = pb_checkpoint_alloc();
	struct pb_proc *p0, *p1, *p2;
	struct pb_pages *pin = NULL;
	int round;

	if (!EXPECT(ck) || !t_begin_checkpoints())
		goto out;
	EXPECT_EQ(pb_set_thp_policy(PAGES(4), PB_THP_ALWAYS), 0);
	EXPECT_EQ(pb_proc_create(&p0), 0);
	EXPECT_EQ(pb_mmap(p0, A, PAGES(8), RW), 0);
	EXPECT_EQ(pb_mmap(p0, B, PAGES(2), RW), 0);
	EXPECT_EQ(pb_store(p0, 0, A, 0x11), 0);
	EXPECT_EQ(pb_store(p0, 0, A + PAGES(4), 0x22), 0);
	EXPECT_EQ(pb_store(p0, 0, B, 0x33), 0);
	EXPECT_EQ(pb_fork(p0, &p1), 0);
	EXPECT_EQ(pb_gup_fast(p0, A + PAGES(1), 2, PB_FOLL_PIN | PB_FOLL_WRITE |
			      PB_FOLL_LONGTERM, &pin), 0);
	EXPECT_CLEAN();

	EXPECT_EQ(pb_checkpoint_save(ck), 0);
	explore_model_digest(&d0);
	if (!memmap_take(&saved))
		goto out;

	for (round = 0; round < 2; round++) {
		/* COW, unmap, exit, another fork, a hole, the pin let go. */
		EXPECT_EQ(pb_store(p1, 0, A, 0x44 + round), 0);
		EXPECT_EQ(pb_munmap(p0, B, PAGES(2)), 0);
		EXPECT_EQ(pb_madvise(p1, A + PAGES(4), PAGES(4),
				     MADV_DONTNEED), 0);
		pb_pages_release(pin, true);
		EXPECT_EQ(pb_fork(p1, &p2), 0);
		EXPECT_EQ(pb_store(p2, 0, A + PAGES(6), 0x55), 0);
		pb_exit(p1);
		EXPECT_EQ(pb_mprotect(p2, A, PAGES(8), PB_PROT_READ), 0);
		EXPECT_CLEAN();
		explore_model_digest(&d1);
		EXPECT(d1.lo != d0.lo || d1.hi != d0.hi);

		pb_checkpoint_restore(ck);
		explore_model_digest(&d1);
		EXPECT_EQ(d1.lo, d0.lo);
		EXPECT_EQ(d1.hi, d0.hi);
		EXPECT_CLEAN();
		if (!EXPECT_EQ(memmap_differs(&saved), -1))
			tap_diag("round %d: pfn %ld differs from the save", round,
				 memmap_differs(&saved));
		/* The saved processes and pin are back, as they were. */
		EXPECT_EQ(load(p1, A), 0x11);
		EXPECT_EQ(load(p0, A + PAGES(4)), 0x22);
		EXPECT_EQ(load(p0, B), 0x33);
		pb_checkpoint_restore(ck);
	}
	pb_pages_release(pin, true);
	pb_exit(p1);
	pb_exit(p0);
out:
	memmap_free(&saved);
	pb_checkpoint_free(ck);
	t_end("checkpoint: restored after COW, fork, exit, munmap, dontneed, mprotect and a pin: the same digest, memmap and folios, checker clean, no frame leaked");
}

/* A PMD-mapped THP and the huge zero folio, split and zapped. */
static void test_restore_thp(void)
{
	struct explore_digest d0, d1;
	struct memmap_copy saved = { 0 };
	struct pb_checkpoint *ck = pb_checkpoint_alloc();
	struct pb_proc *p0, *p1;

	if (!EXPECT(ck) || !t_begin_checkpoints())
		goto out;
	EXPECT_EQ(pb_set_thp_policy(PMD_SIZE, PB_THP_ALWAYS), 0);
	EXPECT_EQ(pb_proc_create(&p0), 0);
	EXPECT_EQ(pb_mmap(p0, A, PMD_SIZE, RW), 0);
	EXPECT_EQ(pb_mmap(p0, B, PMD_SIZE, RW), 0);
	EXPECT_EQ(pb_store(p0, 0, A, 0x11), 0);
	EXPECT_EQ(load(p0, B), 0);		/* the huge zero folio */
	EXPECT_EQ(pb_checkpoint_save(ck), 0);
	explore_model_digest(&d0);
	if (!memmap_take(&saved))
		goto out;

	EXPECT_EQ(pb_fork(p0, &p1), 0);
	EXPECT_EQ(pb_split_pmd(p1, A, PMD_SIZE), 0);
	EXPECT_EQ(pb_store(p1, 0, A + PAGES(16), 0x22), 0);
	EXPECT_EQ(pb_store(p0, 0, B, 0x33), 0);
	EXPECT_EQ(pb_madvise(p0, A + PAGES(16), PAGES(1), MADV_DONTNEED), 0);
	pb_exit(p1);
	EXPECT_CLEAN();

	pb_checkpoint_restore(ck);
	explore_model_digest(&d1);
	EXPECT_EQ(d1.lo, d0.lo);
	EXPECT_EQ(d1.hi, d0.hi);
	EXPECT_CLEAN();
	if (!EXPECT_EQ(memmap_differs(&saved), -1))
		tap_diag("pfn %ld differs from the save", memmap_differs(&saved));
	EXPECT_EQ(load(p0, A), 0x11);
	EXPECT_EQ(load(p0, B), 0);
	pb_exit(p0);
out:
	memmap_free(&saved);
	pb_checkpoint_free(ck);
	t_end("checkpoint: restored after a THP split, a fork and a write over the huge zero folio: the same digest, memmap and folios");
}

/*
 * Two checkpoints of two states, restored in turn (as explore's two
 * sides are): each restore copies only what may differ from the other,
 * and must still give that checkpoint's memmap exactly.
 */
static void test_alternate(void)
{
	struct pb_checkpoint *ck[2] = { pb_checkpoint_alloc(),
					pb_checkpoint_alloc() };
	struct memmap_copy saved[2] = { { 0 }, { 0 } };
	struct explore_digest d[2], now;
	struct pb_proc *p0, *p1;
	int i, round;

	if (!EXPECT(ck[0] && ck[1]) || !t_begin_checkpoints())
		goto out;
	EXPECT_EQ(pb_set_thp_policy(PAGES(4), PB_THP_ALWAYS), 0);
	EXPECT_EQ(pb_proc_create(&p0), 0);
	EXPECT_EQ(pb_mmap(p0, A, PAGES(8), RW), 0);
	EXPECT_EQ(pb_store(p0, 0, A, 0x11), 0);
	EXPECT_EQ(pb_checkpoint_save(ck[0]), 0);
	explore_model_digest(&d[0]);
	if (!memmap_take(&saved[0]))
		goto out;
	EXPECT_EQ(pb_fork(p0, &p1), 0);
	EXPECT_EQ(pb_store(p1, 0, A + PAGES(4), 0x22), 0);
	EXPECT_EQ(pb_munmap(p0, A + PAGES(4), PAGES(4)), 0);
	EXPECT_EQ(pb_checkpoint_save(ck[1]), 0);
	explore_model_digest(&d[1]);
	if (!memmap_take(&saved[1]))
		goto out;
	for (round = 0; round < 6; round++) {
		i = round % 2;
		pb_checkpoint_restore(ck[i]);
		explore_model_digest(&now);
		EXPECT_EQ(now.lo, d[i].lo);
		EXPECT_EQ(now.hi, d[i].hi);
		if (!EXPECT_EQ(memmap_differs(&saved[i]), -1))
			tap_diag("round %d: pfn %ld differs", round,
				 memmap_differs(&saved[i]));
		EXPECT_CLEAN();
		/* Something to undo at the next restore. */
		EXPECT_EQ(pb_store(p0, 0, A + PAGES(round % 4), 0x30 + round), 0);
	}
	pb_checkpoint_restore(ck[1]);
	pb_exit(p1);
	pb_exit(p0);
out:
	for (i = 0; i < 2; i++) {
		memmap_free(&saved[i]);
		pb_checkpoint_free(ck[i]);
	}
	t_end("checkpoint: two checkpoints restored in turn, each the same digest and memmap");
}

/* Without pb_config.checkpoints there is nothing to save from. */
static void test_needs_checkpoints(void)
{
	struct pb_checkpoint *ck = pb_checkpoint_alloc();

	if (EXPECT(ck) && t_begin(4 * PMD_SIZE))
		EXPECT_EQ(pb_checkpoint_save(ck), -EINVAL);
	pb_checkpoint_free(ck);
	t_end("checkpoint: refused (-EINVAL) on a machine brought up without checkpoints");
}

int main(void)
{
	test_restore_small();
	test_restore_thp();
	test_alternate();
	test_needs_checkpoints();
	return tap_done();
}
