// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_page_alloc.c - the memmap and the buddy allocator (mm/page_alloc.c):
 * alignment and compound metadata of every order, merging on free,
 * running out without crashing, and a memmap that stays readable after
 * a free (what GUP-fast's speculative reference relies on).
 */
#include <stdlib.h>

#include "tests/unit/pbtest.h"

/* The smallest machine memmap_init accepts: four PMD-size blocks. */
#define MIN_MEMORY	(4 * PMD_SIZE)

/* Folios of every order are naturally aligned, refcount 1, one compound. */
static void test_orders_aligned(void)
{
	unsigned int order;

	t_begin(SZ_64M);
	for (order = 0; order <= MAX_PAGE_ORDER; order++) {
		struct folio *folio = folio_alloc(order);
		unsigned long pfn, i, nr = 1UL << order;
		bool heads_ok = true;

		if (!EXPECT(folio))
			continue;
		pfn = folio_pfn(folio);
		EXPECT_EQ(pfn % nr, 0);
		EXPECT_EQ(folio_ref_count(folio), 1);
		EXPECT_EQ(folio_order(folio), order);
		EXPECT_EQ(folio_test_large(folio), order > 0);
		EXPECT_EQ(folio_mapcount(folio), 0);
		for (i = 0; i < nr; i++) {
			struct page *page = pfn_to_page(pfn + i);

			heads_ok &= page_folio(page) == folio;
			/* PG_head marks the head of a large folio only. */
			heads_ok &= PageFlag(page, PG_head) == (i == 0 && order > 0);
			heads_ok &= !PageFlag(page, PG_buddy);
		}
		if (!EXPECT(heads_ok))
			tap_diag("order %u at pfn %#lx", order, pfn);
		EXPECT_EQ(pb_frames_in_use(), t.baseline + nr);
		folio_put(folio);
		EXPECT_EQ(pb_frames_in_use(), t.baseline);
		EXPECT_CLEAN();
	}
	t_end("page_alloc: orders 0..%d naturally aligned, refcount 1, compound_head at the head",
	      MAX_PAGE_ORDER);
}

/*
 * Draining every free frame one page at a time and freeing them all
 * merges the buddies back: the same number of PMD-size blocks exists
 * afterwards as before.
 */
static void test_free_merges(void)
{
	unsigned long max_blocks = 0, n = 0, i, cap;
	struct folio **held;

	t_begin(32 * PMD_SIZE);		/* 64M with 4K pages */
	cap = machine.nr_frames;
	held = calloc(cap, sizeof(*held));
	if (!EXPECT(held))
		goto out;
	/* how many order-9 blocks are free now */
	while (n < cap && (held[n] = folio_alloc(MAX_PAGE_ORDER)))
		n++;
	max_blocks = n;
	for (i = 0; i < n; i++)
		folio_put(held[i]);
	EXPECT(max_blocks >= 20);
	EXPECT_EQ(pb_frames_in_use(), t.baseline);

	/* shatter everything into order-0 pages, then free them */
	n = 0;
	while (n < cap && (held[n] = folio_alloc(0)))
		n++;
	EXPECT_EQ(n, machine.nr_frames - t.baseline);
	EXPECT_EQ(nr_free_frames(), 0);
	for (i = 0; i < n; i += 2)	/* free out of order */
		folio_put(held[i]);
	for (i = 1; i < n; i += 2)
		folio_put(held[i]);
	EXPECT_EQ(pb_frames_in_use(), t.baseline);

	n = 0;
	while (n < cap && (held[n] = folio_alloc(MAX_PAGE_ORDER)))
		n++;
	EXPECT_EQ(n, max_blocks);
	for (i = 0; i < n; i++)
		folio_put(held[i]);
	EXPECT_CLEAN();
out:
	free(held);
	t_end("page_alloc: freeing merges buddies back into PMD-size blocks");
}

/* Below the minimum size the machine refuses to come up; at it, it runs. */
static void test_minimum_machine(void)
{
	struct pb_config small = { .memory_bytes = MIN_MEMORY - PMD_SIZE };

	t.ok = true;
	EXPECT_EQ(pb_init(&small), -EINVAL);
	if (t_begin(MIN_MEMORY)) {
		EXPECT_EQ(machine.nr_frames, MIN_MEMORY / PAGE_SIZE);
		EXPECT(nr_free_frames() > 0);
	}
	t_end("page_alloc: minimum machine is %lu MiB, smaller is -EINVAL",
	      MIN_MEMORY >> 20);
}

/* Exhausting a small machine from the allocator returns NULL, never crashes. */
static void test_exhaust_allocator(void)
{
	struct folio *big, *f;
	unsigned long n = 0;
	struct folio **held;

	t_begin(MIN_MEMORY);
	held = calloc(machine.nr_frames, sizeof(*held));
	if (!EXPECT(held))
		goto out;
	while ((f = folio_alloc(0)))
		held[n++] = f;
	EXPECT_EQ(nr_free_frames(), 0);
	EXPECT(folio_alloc(0) == NULL);
	EXPECT(folio_alloc(MAX_PAGE_ORDER) == NULL);
	EXPECT_EQ(alloc_table_frame(), 0);
	/* one page back: an order-0 works again, an order-2 still cannot */
	folio_put(held[--n]);
	f = folio_alloc(2);
	EXPECT(f == NULL);
	f = folio_alloc(0);
	EXPECT(f != NULL);
	if (f)
		held[n++] = f;
	while (n)
		folio_put(held[--n]);
	big = folio_alloc(MAX_PAGE_ORDER);
	EXPECT(big != NULL);
	if (big)
		folio_put(big);
	EXPECT_CLEAN();
out:
	free(held);
	t_end("page_alloc: an exhausted allocator returns NULL and recovers on free");
}

/*
 * Faulting more memory than the machine has fails with -ENOMEM from the
 * store, leaves consistent state, and everything comes back at exit.
 */
static void test_exhaust_faults(void)
{
	struct pb_proc *p;
	unsigned long addr, len = 4 * MIN_MEMORY;
	int err = 0;

	t_begin(MIN_MEMORY);
	p = t_proc_map(ADDR_A, len, PB_PROT_READ | PB_PROT_WRITE);
	if (!p)
		goto out;
	for (addr = ADDR_A; addr < ADDR_A + len; addr += PAGE_SIZE) {
		err = pb_store(p, 0, addr, 0x5a);
		if (err)
			break;
	}
	EXPECT_EQ(err, -ENOMEM);
	EXPECT(addr > ADDR_A);
	EXPECT(addr < ADDR_A + len);
	EXPECT_EQ(nr_free_frames(), 0);
	EXPECT_CLEAN();
	/* what was stored before running out is still there */
	EXPECT(t_data_is(p, ADDR_A, 1, 0x5a));
	EXPECT_EQ(pb_munmap(p, ADDR_A, PMD_SIZE), 0);
	EXPECT(nr_free_frames() > 0);
	EXPECT_CLEAN();
	t_exit(p);
out:
	t_end("page_alloc: running out during faults is -ENOMEM, not a crash");
}

/*
 * The memmap outlives the folio: after a free, page_folio() of a former
 * tail page still reads, its refcount is 0, and a speculative
 * add-unless-zero fails (GUP-fast's folio_ref_try_add).
 */
static void test_memmap_after_free(void)
{
	struct folio *folio, *seen;
	unsigned long pfn;

	t_begin(SZ_64M);
	folio = folio_alloc(4);
	if (!EXPECT(folio))
		goto out;
	pfn = folio_pfn(folio);
	folio_put(folio);
	seen = page_folio(pfn_to_page(pfn + 5));
	EXPECT(seen == folio);
	EXPECT_EQ(folio_ref_count(seen), 0);
	EXPECT(!folio_ref_try_add(seen, 1));
	EXPECT_EQ(folio_ref_count(seen), 0);
	EXPECT_EQ(pb_frames_in_use(), t.baseline);
	EXPECT_CLEAN();
out:
	t_end("page_alloc: memmap stays valid after free; try_add on a freed folio fails");
}

/* The reserved frames: pfn 0, the zero page and the huge zero folio. */
static void test_reserved_frames(void)
{
	struct folio *zero, *hzero;

	t_begin(SZ_64M);
	zero = pfn_folio(machine.zero_pfn);
	hzero = pfn_folio(machine.huge_zero_pfn);
	EXPECT(PageFlag(pfn_to_page(0), PG_reserved));
	EXPECT(!pfn_valid(0));
	EXPECT(folio_test_zero(zero) && folio_order(zero) == 0);
	EXPECT(folio_test_zero(hzero) && folio_order(hzero) == HPAGE_PMD_ORDER);
	EXPECT_EQ(machine.huge_zero_pfn % HPAGE_PMD_NR, 0);
	EXPECT(is_huge_zero_pfn(machine.huge_zero_pfn + HPAGE_PMD_NR - 1));
	EXPECT(!is_huge_zero_pfn(machine.huge_zero_pfn + HPAGE_PMD_NR));
	EXPECT_EQ(page_load_byte(pfn_to_page(machine.zero_pfn), 0), 0);
	t_end("page_alloc: zero page and huge zero folio are reserved, aligned and zero");
}

int main(void)
{
	test_orders_aligned();
	test_free_merges();
	test_minimum_machine();
	test_exhaust_allocator();
	test_exhaust_faults();
	test_memmap_after_free();
	test_reserved_frames();
	return tap_done();
}
