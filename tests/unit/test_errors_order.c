// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_errors_order.c - when two things are wrong with a call, the model
 * fails it with the errno Linux 7.3 checks first (mm/mmap.c,
 * mm/mprotect.c, mm/madvise.c, mm/gup.c, mm/mremap.c), and changes what
 * Linux would have changed before it gave up.  Each case pairs two
 * conditions that alone give different errnos; docs/MODEL.md "Error
 * order" has the table.  The system calls' cases were checked on this
 * host's 6.18 kernel too, with the same calls; GUP's, which no system
 * call reaches unchecked, against 7.3's source only.
 */
#include "tests/unit/pbtest.h"

/* mm_of(p)'s VMA count. */
static int t_nr_vmas(struct pb_proc *p)
{
	struct mm_struct *mm = mm_of(p);

	return mm ? mm->nr_vmas : -1;
}

/*
 * mmap: do_mmap() rounds the length up and __get_unmapped_area() checks
 * the range against TASK_SIZE (-ENOMEM) before the address's alignment
 * (-EINVAL); MAP_FIXED unmaps only once every check has passed.
 */
static void test_mmap_order(void)
{
	struct pb_proc *p;

	t_begin(SZ_64M);
	p = t_proc_written(ADDR_A, PAGES(2), 0x10);
	/* zero length: -EINVAL, before anything else */
	EXPECT_EQ(pb_mmap(p, ADDR_A + 1, 0, RW), -EINVAL);
	/* unaligned and too long: the length wins */
	EXPECT_EQ(pb_mmap(p, ADDR_B + 1, TASK_SIZE + PAGE_SIZE, RW), -ENOMEM);
	/* unaligned and ending past TASK_SIZE: the range wins */
	EXPECT_EQ(pb_mmap(p, TASK_SIZE - PAGE_SIZE + 1, PAGES(2), RW), -ENOMEM);
	/* a length that rounds up to 0 */
	EXPECT_EQ(pb_mmap(p, ADDR_B, ~0UL, RW), -ENOMEM);
	/* unaligned and in the way of a mapping: the alignment wins */
	EXPECT_EQ(pb_mmap(p, ADDR_A + 1, PAGE_SIZE, RW), -EINVAL);
	EXPECT_EQ(pb_mmap(p, ADDR_A, PAGE_SIZE, RW), -EEXIST);
	/* MAP_FIXED over A with a range past TASK_SIZE: A stays */
	EXPECT_EQ(pb_mmap_flags(p, ADDR_A, TASK_SIZE, RW, PB_MAP_FIXED),
		  -ENOMEM);
	EXPECT(t_data_is(p, ADDR_A, 2, 0x10));
	/* a length that is not a page multiple maps whole pages */
	EXPECT_EQ(pb_mmap(p, ADDR_B, PAGE_SIZE + 1, RW), 0);
	EXPECT(t_fill(p, ADDR_B + PAGE_SIZE, 1, 0x20));
	EXPECT_EQ(pb_store(p, 0, ADDR_B + PAGES(2), 1), -EFAULT);
	EXPECT_EQ(pb_munmap(p, ADDR_B, PAGES(2)), 0);
	/* MAP_POPULATE of such a length populates its last page too */
	EXPECT_EQ(pb_mmap_flags(p, ADDR_B, PAGE_SIZE + 1, RW, PB_MAP_POPULATE),
		  0);
	EXPECT(t_page(p, ADDR_B + PAGE_SIZE).present);
	EXPECT_CLEAN();
	t_exit(p);
	t_end("errors order: mmap checks the length and range (ENOMEM) before the address's alignment (EINVAL), and MAP_FIXED unmaps nothing until they pass");
}

/*
 * mprotect: do_mprotect_pkey() checks @start's alignment before the zero
 * length, the wrap (-ENOMEM) before the protection bits (-EINVAL), and
 * those before it looks for a VMA; a range running past TASK_SIZE
 * changes what is mapped below it before its -ENOMEM.
 */
static void test_mprotect_order(void)
{
	struct pb_proc *p;

	t_begin(SZ_64M);
	p = t_proc_written(ADDR_A, PAGES(2), 0x10);
	EXPECT_EQ(pb_mprotect(p, ADDR_A + 1, 0, PB_PROT_READ), -EINVAL);
	EXPECT_EQ(pb_mprotect(p, ADDR_A, 0, 0x100), 0);
	/* a wrapping range with an unknown bit: the wrap wins */
	EXPECT_EQ(pb_mprotect(p, ADDR_A, -ADDR_A, 0x100), -ENOMEM);
	/* an unknown bit over a hole: the bit wins */
	EXPECT_EQ(pb_mprotect(p, ADDR_B, PAGE_SIZE, 0x100), -EINVAL);
	EXPECT_EQ(pb_mprotect(p, ADDR_A, PAGE_SIZE, 0x100), -EINVAL);
	EXPECT(t_writable(p, ADDR_A));
	/* past TASK_SIZE: A is made read-only, then -ENOMEM */
	EXPECT_EQ(pb_mprotect(p, ADDR_A, TASK_SIZE, PB_PROT_READ), -ENOMEM);
	EXPECT_EQ(pb_store(p, 0, ADDR_A, 1), -EFAULT);
	EXPECT(t_data_is(p, ADDR_A, 2, 0x10));
	EXPECT_CLEAN();
	t_exit(p);
	t_end("errors order: mprotect checks the wrap (ENOMEM), then the protection (EINVAL), then the VMAs; a range past TASK_SIZE changes what lies below it");
}

/*
 * madvise: the advice first, then check_input_range() (a length that
 * rounds up to 0 is -EINVAL, not an empty range); MADV_POPULATE_*
 * stops at the first thing in address order that it cannot populate: a
 * VMA that forbids the access (-EINVAL) or a hole (-ENOMEM).
 *
 *   ADDR_A [rw 4][r 4][hole 4][rw 4]
 */
static void test_madvise_order(void)
{
	struct pb_proc *p;

	t_begin(SZ_64M);
	p = t_proc_map(ADDR_A, PAGES(16), RW);
	EXPECT_EQ(pb_madvise(p, ADDR_A + 1, 0, 12345), -EINVAL);
	EXPECT_EQ(pb_madvise(p, ADDR_A + 1, 0, MADV_DONTNEED), -EINVAL);
	EXPECT_EQ(pb_madvise(p, ADDR_A, 0, MADV_DONTNEED), 0);
	EXPECT_EQ(pb_madvise(p, ADDR_A, ~0UL, MADV_DONTNEED), -EINVAL);
	EXPECT_EQ(pb_madvise(p, ADDR_A, ~0UL, MADV_POPULATE_WRITE), -EINVAL);
	EXPECT(!t_page(p, ADDR_A).present);
	EXPECT_EQ(pb_mprotect(p, ADDR_A + PAGES(4), PAGES(4), PB_PROT_READ), 0);
	EXPECT_EQ(pb_munmap(p, ADDR_A + PAGES(8), PAGES(4)), 0);
	/* the read-only VMA comes first: -EINVAL, [0, 4) populated */
	EXPECT_EQ(pb_madvise(p, ADDR_A, PAGES(16), MADV_POPULATE_WRITE),
		  -EINVAL);
	EXPECT(t_page(p, ADDR_A + PAGES(3)).present);
	EXPECT(!t_page(p, ADDR_A + PAGES(4)).present);
	/* the hole comes first: -ENOMEM, [12, 16) untouched */
	EXPECT_EQ(pb_mprotect(p, ADDR_A + PAGES(12), PAGES(4), PB_PROT_READ), 0);
	EXPECT_EQ(pb_madvise(p, ADDR_A + PAGES(8), PAGES(8),
			     MADV_POPULATE_WRITE), -ENOMEM);
	EXPECT(!t_page(p, ADDR_A + PAGES(12)).present);
	EXPECT_CLEAN();
	t_exit(p);
	t_end("errors order: madvise checks the advice, then the range (a length rounding to 0 is EINVAL); populate fails at the first VMA (EINVAL) or hole (ENOMEM) in address order");
}

/*
 * mremap(MAYMOVE|FIXED): check_mremap_params() refuses a length that
 * rounds up to 0, a target that wraps, an unaligned target (all -EINVAL)
 * before remap_move() looks for the source (-EFAULT).
 */
static void test_mremap_move_order(void)
{
	struct pb_proc *p;

	t_begin(SZ_64M);
	p = t_proc_written(ADDR_A, PAGES(2), 0x10);
	EXPECT_EQ(pb_mremap(p, ADDR_A, ~0UL, ADDR_B), -EINVAL);
	EXPECT_EQ(pb_mremap(p, ADDR_A, PAGES(2), -PAGE_SIZE), -EINVAL);
	EXPECT_EQ(pb_mremap(p, ADDR_A, PAGES(2), TASK_SIZE - PAGE_SIZE),
		  -EINVAL);
	/* an unmapped source and an unaligned target: the target wins */
	EXPECT_EQ(pb_mremap(p, ADDR_B, PAGE_SIZE, ADDR_B + PMD_SIZE + 1),
		  -EINVAL);
	EXPECT_EQ(pb_mremap(p, ADDR_B, PAGE_SIZE, ADDR_B + PMD_SIZE), -EFAULT);
	EXPECT(t_data_is(p, ADDR_A, 2, 0x10));
	EXPECT_EQ(t_nr_vmas(p), 1);
	EXPECT_CLEAN();
	t_exit(p);
	t_end("errors order: mremap checks its lengths and target (EINVAL) before the source (EFAULT)");
}

/*
 * mremap in place: check_mremap_params() (-EINVAL: a new length past
 * TASK_SIZE) before check_prep_vma() (-EFAULT: @addr unmapped, or the
 * range not one VMA), and those before vma_expandable() (-ENOMEM: no
 * room).  The room is the next mapping, or pb_mremap_resize_room()'s
 * @room_end standing for one.
 *
 *   ADDR_A [r 4][rw 4] | room ends at ADDR_A + 16 pages
 */
static void test_resize_order(void)
{
	const unsigned long room = ADDR_A + PAGES(16);
	struct pb_proc *p;

	t_begin(SZ_64M);
	p = t_proc_map(ADDR_A, PAGES(8), RW);
	/* unmapped and too long: the length wins */
	EXPECT_EQ(pb_mremap_resize(p, ADDR_B, PAGE_SIZE, TASK_SIZE + PAGE_SIZE),
		  -EINVAL);
	EXPECT_EQ(pb_mremap_resize(p, ADDR_B, PAGE_SIZE, PAGES(2)), -EFAULT);
	/* one VMA past the room: -ENOMEM; inside it: grown */
	EXPECT_EQ(pb_mremap_resize_room(p, ADDR_A, PAGES(8), PAGES(17), room),
		  -ENOMEM);
	EXPECT_EQ(pb_mremap_resize_room(p, ADDR_A, PAGES(8), PAGES(16), room),
		  0);
	EXPECT_EQ(pb_mremap_resize_room(p, ADDR_A, PAGES(16), PAGES(8), room),
		  0);
	/* two VMAs past the room: the split wins (-EFAULT) */
	EXPECT_EQ(pb_mprotect(p, ADDR_A, PAGES(4), PB_PROT_READ), 0);
	EXPECT_EQ(pb_mremap_resize_room(p, ADDR_A, PAGES(8), PAGES(17), room),
		  -EFAULT);
	EXPECT_EQ(pb_mremap_resize_room(p, ADDR_A, PAGES(8), PAGES(16), room),
		  -EFAULT);
	/* a shrink or the same length needs no one VMA */
	EXPECT_EQ(pb_mremap_resize_room(p, ADDR_A, PAGES(8), PAGES(8), room), 0);
	/* the first page unmapped, past the room: -EFAULT */
	EXPECT_EQ(pb_munmap(p, ADDR_A, PAGE_SIZE), 0);
	EXPECT_EQ(pb_mremap_resize_room(p, ADDR_A, PAGES(8), PAGES(17), room),
		  -EFAULT);
	EXPECT_EQ(pb_mremap_resize_room(p, ADDR_A, PAGES(8), PAGES(4), room),
		  -EFAULT);
	EXPECT_EQ(t_nr_vmas(p), 2);
	EXPECT_CLEAN();
	t_exit(p);
	t_end("errors order: resize checks the length (EINVAL), then the mapping and its one VMA (EFAULT), then the room (ENOMEM)");
}

/*
 * pin_user_pages_fast() and get_user_pages_fast() (gup_fast_fallback()):
 * the flags (-EINVAL) first, then MMF_HAS_PINNED set for a pin, then the
 * range from @start's page: a wrap is -EOVERFLOW, an end past the
 * address space -EFAULT.  An unaligned @start takes its page.
 */
static void test_gup_order(void)
{
	struct pb_pages *pages = NULL;
	struct pb_proc *p;

	t_begin(SZ_64M);
	p = t_proc_written(ADDR_A, PAGES(2), 0x10);
	EXPECT_EQ(pb_gup_fast(p, -PAGE_SIZE, 2, PB_FOLL_GET | PB_FOLL_PIN,
			      &pages), -EINVAL);
	EXPECT(!atomic_load(&mm_of(p)->has_pinned));
	EXPECT_EQ(pb_gup_fast(p, -PAGE_SIZE, 2, PB_FOLL_GET, &pages),
		  -EOVERFLOW);
	EXPECT_EQ(pb_gup_fast(p, TASK_SIZE, 1, PB_FOLL_GET, &pages), -EFAULT);
	EXPECT(!atomic_load(&mm_of(p)->has_pinned));
	/* a pin that fails its range check still marks the mm */
	EXPECT_EQ(pb_gup_fast(p, -PAGE_SIZE, 2, PB_FOLL_PIN, &pages),
		  -EOVERFLOW);
	EXPECT(atomic_load(&mm_of(p)->has_pinned));
	if (EXPECT_EQ(pb_gup_fast(p, ADDR_A + PAGE_SIZE + 1, 1, PB_FOLL_PIN,
				  &pages), 0)) {
		EXPECT_EQ(pb_pages_pfn(pages, 0), t_pfn(p, ADDR_A + PAGE_SIZE));
		t_release(pages, false);
	}
	EXPECT_CLEAN();
	t_exit(p);
	t_end("errors order: GUP-fast checks its flags (EINVAL), marks a pinning mm, then the range (EOVERFLOW, EFAULT) from the start's page");
}

int main(void)
{
	test_mmap_order();
	test_mprotect_order();
	test_madvise_order();
	test_mremap_move_order();
	test_resize_order();
	test_gup_order();
	return tap_done();
}
