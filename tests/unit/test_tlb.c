// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_tlb.c - the simulated TLBs (mm/tlb.h): permission downgrades,
 * unmaps and COW copies flush every CPU, and a flush that goes missing
 * (tlb_debug_skip_flushes) is both observable through a stale access and
 * reported by pb_check().
 */
#include "mm/tlb.h"
#include "tests/unit/pbtest.h"

/*
 * A machine and a process with one page at ADDR_A that it stored @v to
 * through @cpu, which caches the translation writable (and dirty).
 */
static struct pb_proc *page_cached_writable(int cpu, uint8_t v)
{
	struct pb_proc *p;

	t_begin(SZ_64M);
	p = t_proc_map(ADDR_A, PAGE_SIZE, RW);
	EXPECT_EQ(pb_store(p, cpu, ADDR_A, v), 0);
	return p;
}

/*
 * A page P wrote (0x20) and shares with its child C, read-only in both:
 *
 *   P  ADDR_A [0x20]
 *   C  ADDR_A [0x20]   the same frame
 */
static void shared_page(struct pb_proc **p, struct pb_proc **c)
{
	t_begin(SZ_64M);
	*p = t_proc_written(ADDR_A, PAGE_SIZE, 0x20);
	*c = t_fork(*p);
}

/* After mprotect(PROT_READ) a store faults, on the CPU that cached it too. */
static void test_mprotect_ro_flushes(void)
{
	struct pb_proc *p = page_cached_writable(0, 1);
	struct t_snap s;

	EXPECT_EQ(pb_store(p, 1, ADDR_A, 2), 0);	/* cpu 1 caches it writable */
	t_snap(&s);
	EXPECT_EQ(pb_mprotect(p, ADDR_A, PAGE_SIZE, PB_PROT_READ), 0);
	EXPECT(t_since(&s, PB_STAT_tlb_flush) > 0);
	EXPECT_CLEAN();
	EXPECT_EQ(pb_store(p, 0, ADDR_A, 3), -EFAULT);
	EXPECT_EQ(pb_store(p, 1, ADDR_A, 3), -EFAULT);
	EXPECT_CLEAN();
	t_exit(p);
	t_end("tlb: after mprotect(PROT_READ) a store faults on every CPU");
}

/*
 * The "a missing flush would be caught" test: drop mprotect's flush and
 * the store goes through the stale writable TLB entry, and pb_check()
 * reports the TLB entry that grants more than its PTE.
 */
static void test_missing_flush_is_caught(void)
{
	struct pb_proc *p = page_cached_writable(1, 1);
	uint8_t v = 0;

	tlb_debug_skip_flushes(1);
	EXPECT_EQ(pb_mprotect(p, ADDR_A, PAGE_SIZE, PB_PROT_READ), 0);
	tlb_debug_skip_flushes(0);
	EXPECT(!t_writable(p, ADDR_A));
	EXPECT_EQ(pb_store(p, 1, ADDR_A, 0x66), 0);	/* through the stale entry */
	EXPECT_EQ(pb_load(p, 0, ADDR_A, &v), 0);
	EXPECT_EQ(v, 0x66);
	EXPECT(pb_check(NULL) >= 1);
	t_exit(p);		/* exit_mmap flushes the mm: clean again */
	t_end("tlb: a skipped mprotect flush lets a store through and pb_check reports it");
}

/* After munmap a load faults, even on a CPU that had the translation. */
static void test_munmap_flushes(void)
{
	struct pb_proc *p;
	uint8_t v;

	t_begin(SZ_64M);
	p = t_proc_written(ADDR_A, 2 * PAGE_SIZE, 9);
	EXPECT_EQ(pb_load(p, 1, ADDR_A, &v), 0);
	EXPECT_EQ(pb_load(p, 2, ADDR_A + PAGE_SIZE, &v), 0);
	EXPECT_EQ(pb_munmap(p, ADDR_A, PAGE_SIZE), 0);
	EXPECT_CLEAN();
	EXPECT_EQ(pb_load(p, 0, ADDR_A, &v), -EFAULT);
	EXPECT_EQ(pb_load(p, 1, ADDR_A, &v), -EFAULT);
	EXPECT_EQ(pb_load(p, 2, ADDR_A + PAGE_SIZE, &v), 0);
	EXPECT_EQ(v, 10);
	EXPECT_CLEAN();
	t_exit(p);
	t_end("tlb: after munmap a load faults on every CPU");
}

/*
 * A COW copy flushes the old translation: the faulting CPU and another
 * CPU that cached the shared page both see the new private page.
 */
static void test_cow_flushes_other_cpu(void)
{
	struct pb_proc *p, *c;
	uint8_t v = 0;

	shared_page(&p, &c);
	EXPECT_EQ(pb_load(p, 0, ADDR_A, &v), 0);	/* cpu 0 and 1 cache the */
	EXPECT_EQ(pb_load(p, 1, ADDR_A, &v), 0);	/* shared page read-only */
	EXPECT_EQ(pb_load(c, 2, ADDR_A, &v), 0);
	EXPECT_EQ(pb_store(p, 0, ADDR_A, 0x21), 0);	/* COW copy on cpu 0 */
	EXPECT_CLEAN();
	EXPECT_EQ(pb_load(p, 0, ADDR_A, &v), 0);
	EXPECT_EQ(v, 0x21);
	EXPECT_EQ(pb_load(p, 1, ADDR_A, &v), 0);
	EXPECT_EQ(v, 0x21);
	EXPECT_EQ(pb_load(c, 2, ADDR_A, &v), 0);
	EXPECT_EQ(v, 0x20);
	EXPECT_CLEAN();
	t_exit(c);
	t_exit(p);
	t_end("tlb: a COW copy flushes the old translation on every CPU");
}

/* Without the COW flush, CPU 1 keeps reading the old page: pb_check says so. */
static void test_missing_cow_flush_is_caught(void)
{
	struct pb_proc *p, *c;
	uint8_t v = 0;

	shared_page(&p, &c);
	EXPECT_EQ(pb_load(p, 1, ADDR_A, &v), 0);
	tlb_debug_skip_flushes(1);
	EXPECT_EQ(pb_store(p, 0, ADDR_A, 0x21), 0);
	tlb_debug_skip_flushes(0);
	EXPECT_EQ(pb_load(p, 1, ADDR_A, &v), 0);
	EXPECT_EQ(v, 0x20);			/* the stale, shared page */
	EXPECT(pb_check(NULL) >= 1);
	t_exit(c);
	t_exit(p);
	t_end("tlb: a skipped COW flush leaves a stale translation that pb_check reports");
}

/* fork write-protects the parent: its cached writable entries go too. */
static void test_fork_flushes_parent(void)
{
	struct pb_proc *p = page_cached_writable(3, 0x30), *c;
	uint8_t v = 0;

	c = t_fork(p);
	EXPECT_CLEAN();
	EXPECT_EQ(pb_store(p, 3, ADDR_A, 0x31), 0);	/* must fault and copy */
	EXPECT_EQ(pb_load(c, 0, ADDR_A, &v), 0);
	EXPECT_EQ(v, 0x30);
	EXPECT_EQ(pb_proc_faults(p), 2);
	EXPECT_CLEAN();
	t_exit(c);
	t_exit(p);
	t_end("tlb: fork flushes the parent's writable translations");
}

int main(void)
{
	test_mprotect_ro_flushes();
	test_missing_flush_is_caught();
	test_munmap_flushes();
	test_cow_flushes_other_cpu();
	test_missing_cow_flush_is_caught();
	test_fork_flushes_parent();
	return tap_done();
}
