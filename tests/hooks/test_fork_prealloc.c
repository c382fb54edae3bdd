// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_fork_prealloc.c - fork's preallocated page, released once it is
 * not needed (issue 13, "fork's preallocated page").
 *
 * copy_pte_range() meets an exclusive page of a maybe-pinned folio: it
 * must copy that page for the child, so it drops the PTE locks,
 * allocates a page and retries.  Meanwhile the pin may go (another
 * thread unpins); the retry then shares the page after all and the page
 * it allocated was not needed.  Linux releases it right after that
 * successful copy, so the PTEs after it batch again; keeping it would
 * send the rest of the range page by page, since a held preallocated
 * page turns batching off.  The test releases the pin from the hook
 * between the allocation and the retry (mm/hooks.h), then checks:
 *
 * - the child shares every page of the 64K folio (nothing was copied:
 *   the pin had gone), and the allocated page went back (no frame lost);
 * - the 15 PTEs after the first were shared as one batch: the fork cost
 *   exactly the reference atomics of the failed batch (an add and a put),
 *   the unpin (one), the first page on its own (one), the released
 *   preallocated page (one) and one batch (one) - six, where keeping the
 *   page would cost one per page (twenty).
 */
#include "tests/unit/pbtest.h"
#include "mm/hooks.h"

static struct pb_pages *held_pin;
static int hook_calls;

static void release_pin(void)
{
	hook_calls++;
	if (held_pin) {
		pb_pages_release(held_pin, false);
		held_pin = NULL;
	}
}

static void test_prealloc_released(void)
{
	struct pb_proc *p, *c;
	struct t_snap s;
	unsigned long free_before, i;
	struct folio *folio;

	t_begin_folios(SZ_64M, PAGES(16));
	t_variant("upstream", "fork_batch=1");
	p = t_proc_written(ADDR_A, PAGES(16), 0x42);
	folio = t_folio(t_pfn(p, ADDR_A));
	EXPECT_EQ(folio_nr_pages(folio), 16);
	EXPECT_EQ(pb_gup_fast(p, ADDR_A, 16, PB_FOLL_PIN, &held_pin), 0);
	free_before = nr_free_frames();

	pb_hook_fork_prealloc = release_pin;
	hook_calls = 0;
	t_snap(&s);
	c = t_fork(p);
	pb_hook_fork_prealloc = NULL;

	EXPECT_EQ(hook_calls, 1);
	EXPECT(held_pin == NULL);
	for (i = 0; i < 16; i++)
		EXPECT_EQ(t_pfn(c, ADDR_A + i * PAGE_SIZE),
			  t_pfn(p, ADDR_A + i * PAGE_SIZE));
	EXPECT_EQ(t_since(&s, PB_STAT_folio_copy), 0);
	EXPECT_EQ(t_since(&s, PB_STAT_folio_ref_atomic), 6);
	/* One page allocated for the copy; the checker finds it freed. */
	EXPECT_EQ(t_since(&s, PB_STAT_folio_alloc), 1);
	EXPECT_CLEAN();
	t_exit(c);
	EXPECT_EQ(nr_free_frames(), free_before);
	t_exit(p);
	t_end("fork: a preallocated page the retry did not need is released,"
	      " and the rest of the folio is shared as one batch");
}

int main(void)
{
	test_prealloc_released();
	return tap_done();
}
