// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_cow.c - fork and copy-on-write (copy_present_ptes, do_wp_page):
 * sharing after fork, the one-page copy, isolation of data in both directions for every
 * folio kind, reuse after the child exits, the copy of pinned pages at
 * fork (CVE-2020-29374 family), MADV_DONTFORK and holes.
 */
#include "tests/unit/pbtest.h"

/* The memory kinds every isolation case runs on, in the order they run. */
static const enum t_kind kinds[] = { T_4K, T_64K, T_PMD, T_PTE_2M };
#define NR_KINDS (sizeof(kinds) / sizeof(kinds[0]))

static const char *const kind_name[T_NR_KINDS] = {
	[T_4K] = "4K pages", [T_64K] = "64K mTHP",
	[T_PMD] = "PMD-mapped 2M THP", [T_PTE_2M] = "PTE-mapped 2M THP",
};

/* A machine, and a process whose region of kind @k holds 0x10 + i at page i. */
static struct pb_proc *populated(enum t_kind k)
{
	t_begin(SZ_64M);
	return t_kind_region(k, 0x10);
}

/* Do @a and @b map the same pfn at each of @n pages from ADDR_A? */
static bool same_pfns(struct pb_proc *a, struct pb_proc *b, unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		if (!t_pfn(a, ADDR_A + i * PAGE_SIZE) ||
		    t_pfn(a, ADDR_A + i * PAGE_SIZE) != t_pfn(b, ADDR_A + i * PAGE_SIZE))
			return false;
	return true;
}

/*
 * After fork both processes map the same frames, read-only; the first
 * write in the parent copies exactly one 4K page and the child keeps the
 * original.
 *
 *   parent  [p0'][p1 ][p2 ]...   p0' = private copy after the write
 *   child   [p0 ][p1 ][p2 ]...
 */
static void test_fork_shares_then_copies_one(enum t_kind k)
{
	unsigned long n = t_kind_len(k) / PAGE_SIZE, i, pfn0;
	struct pb_proc *p, *c;
	struct t_snap s;

	p = populated(k);
	c = t_fork(p);
	EXPECT_CLEAN();
	EXPECT(same_pfns(p, c, n));
	EXPECT(!t_nr_writable(p, ADDR_A, n) && !t_nr_writable(c, ADDR_A, n));
	EXPECT_EQ(t_pmd_mapped(c, ADDR_A), k == T_PMD);
	EXPECT_EQ(pb_proc_faults(c), 0);

	pfn0 = t_pfn(c, ADDR_A + 3 * PAGE_SIZE);
	t_snap(&s);
	EXPECT_EQ(pb_store(p, 0, ADDR_A + 3 * PAGE_SIZE, 0xaa), 0);
	EXPECT_CLEAN();
	EXPECT_EQ(t_since(&s, PB_STAT_folio_copy), 1);
	EXPECT(t_pfn(p, ADDR_A + 3 * PAGE_SIZE) != pfn0);
	EXPECT_EQ(t_page(p, ADDR_A + 3 * PAGE_SIZE).folio_size, PAGE_SIZE);
	EXPECT_EQ(t_pfn(c, ADDR_A + 3 * PAGE_SIZE), pfn0);
	EXPECT_EQ(t_page(c, ADDR_A + 3 * PAGE_SIZE).folio_size, t_kind_folio(k));
	/* the rest of the folio is still shared */
	for (i = 0; i < n; i++) {
		if (i == 3)
			continue;
		if (!EXPECT_EQ(t_pfn(p, ADDR_A + i * PAGE_SIZE),
			       t_pfn(c, ADDR_A + i * PAGE_SIZE)))
			break;
	}
	t_exit(c);
	t_exit(p);
	t_end("cow %s: fork shares frames read-only, a parent write copies one 4K page",
	      kind_name[k]);
}

/* Data written after fork by one process is never visible to the other. */
static void test_fork_isolates_data(enum t_kind k)
{
	unsigned long n = t_kind_len(k) / PAGE_SIZE, last = (n - 1) * PAGE_SIZE;
	struct pb_proc *p, *c;
	uint8_t v;

	p = populated(k);
	c = t_fork(p);
	/* parent writes page 0, child writes page 1 and the last page */
	EXPECT_EQ(pb_store(p, 0, ADDR_A, 0xa0), 0);
	EXPECT_CLEAN();
	EXPECT_EQ(pb_store(c, 1, ADDR_A + PAGE_SIZE, 0xc1), 0);
	EXPECT_EQ(pb_store(c, 1, ADDR_A + last, 0xcf), 0);
	EXPECT_CLEAN();
	v = 0;
	EXPECT_EQ(pb_load(c, 0, ADDR_A, &v), 0);
	EXPECT_EQ(v, 0x10);
	EXPECT_EQ(pb_load(p, 1, ADDR_A + PAGE_SIZE, &v), 0);
	EXPECT_EQ(v, 0x11);
	EXPECT_EQ(pb_load(p, 0, ADDR_A + last, &v), 0);
	EXPECT_EQ(v, (uint8_t)(0x10 + n - 1));
	EXPECT_EQ(pb_load(p, 0, ADDR_A, &v), 0);
	EXPECT_EQ(v, 0xa0);
	EXPECT_EQ(pb_load(c, 1, ADDR_A + PAGE_SIZE, &v), 0);
	EXPECT_EQ(v, 0xc1);
	/* a second write by each goes to its own page, no more copies */
	EXPECT_EQ(pb_store(p, 0, ADDR_A, 0xa2), 0);
	EXPECT_EQ(pb_store(c, 0, ADDR_A, 0xc2), 0);
	EXPECT_EQ(pb_load(p, 1, ADDR_A, &v), 0);
	EXPECT_EQ(v, 0xa2);
	EXPECT_EQ(pb_load(c, 1, ADDR_A, &v), 0);
	EXPECT_EQ(v, 0xc2);
	EXPECT_CLEAN();
	t_exit(p);		/* parent first: the child keeps its data */
	EXPECT_CLEAN();
	EXPECT_EQ(pb_load(c, 0, ADDR_A + 2 * PAGE_SIZE, &v), 0);
	EXPECT_EQ(v, 0x12);
	t_exit(c);
	t_end("cow %s: data written after fork never crosses between processes",
	      kind_name[k]);
}

/*
 * After the child exits, the parent's writes reuse the folio it still
 * owns alone: no copy, pfn unchanged, one PTE (or one PMD) per fault.
 */
static void test_reuse_after_child_exit(enum t_kind k)
{
	unsigned long n = t_kind_len(k) / PAGE_SIZE, i, faults;
	unsigned long pfns[HPAGE_PMD_NR];
	struct pb_proc *p;
	struct t_snap s;
	bool same = true;

	p = populated(k);
	t_pfns(p, ADDR_A, n, pfns);
	t_fork_exit(p);
	EXPECT_CLEAN();
	t_snap(&s);
	faults = t_fill_faults(p, ADDR_A, n, 0x40);
	EXPECT_CLEAN();
	for (i = 0; i < n; i++)
		same &= t_pfn(p, ADDR_A + i * PAGE_SIZE) == pfns[i];
	EXPECT(same);
	EXPECT_EQ(t_since(&s, PB_STAT_folio_copy), 0);
	/* a PMD mapping is reused whole by one fault */
	EXPECT_EQ(faults, k == T_PMD ? 1 : n);
	if (k != T_PMD)
		EXPECT_EQ(t_since(&s, PB_STAT_fault_wp_reuse), n);
	EXPECT(t_data_is(p, ADDR_A, n, 0x40));
	t_exit(p);
	t_end("cow %s: after the child exits, parent writes reuse the folio (%s)",
	      kind_name[k], k == T_PMD ? "one PMD fault" : "one fault per PTE");
}

/*
 * fork with a long-term writable pin: the pinned pages are copied into
 * the child at fork, the parent keeps its pages writable (0 faults).
 */
static void test_fork_copies_pinned(enum t_kind k)
{
	unsigned long n = t_kind_len(k) / PAGE_SIZE, i, faults;
	struct pb_proc *p, *c;
	struct pb_pages *pin = NULL;
	struct t_snap s;
	bool differ = true, child_small = true;
	uint8_t v;

	p = populated(k);
	EXPECT_EQ(pb_gup_fast(p, ADDR_A, n,
			      PB_FOLL_PIN | PB_FOLL_WRITE | PB_FOLL_LONGTERM, &pin), 0);
	EXPECT_CLEAN();
	t_snap(&s);
	c = t_fork(p);
	EXPECT_CLEAN();
	for (i = 0; i < n; i++) {
		struct pb_page_info pi = t_page(p, ADDR_A + i * PAGE_SIZE);
		struct pb_page_info ci = t_page(c, ADDR_A + i * PAGE_SIZE);

		differ &= ci.present && pi.present && ci.pfn != pi.pfn &&
			  ci.data == pi.data;
		child_small &= ci.folio_size == PAGE_SIZE;
	}
	EXPECT(differ);
	EXPECT(child_small);
	EXPECT(t_writable(p, ADDR_A));
	EXPECT(t_writable(c, ADDR_A));
	if (k == T_PMD) {
		EXPECT_EQ(t_since(&s, PB_STAT_pmd_split), 1);
		EXPECT(!t_pmd_mapped(p, ADDR_A));
		EXPECT_EQ(t_page(p, ADDR_A).folio_size, PMD_SIZE);
	}
	/* the parent's writes need no fault and reach the pinned pages */
	faults = pb_proc_faults(p);
	EXPECT_EQ(pb_store(p, 0, ADDR_A + PAGE_SIZE, 0xee), 0);
	EXPECT_EQ(pb_store(p, 0, ADDR_A + (n - 1) * PAGE_SIZE, 0xef), 0);
	EXPECT_EQ(pb_proc_faults(p) - faults, 0);
	v = 0;
	pb_pages_read(pin, 1, &v, 1);
	EXPECT_EQ(v, 0xee);
	/* the child sees none of it */
	EXPECT_EQ(pb_load(c, 0, ADDR_A + PAGE_SIZE, &v), 0);
	EXPECT_EQ(v, 0x11);
	EXPECT_EQ(pb_store(c, 0, ADDR_A + PAGE_SIZE, 0xcc), 0);
	EXPECT_EQ(pb_proc_faults(c), 0);
	pb_pages_read(pin, 1, &v, 1);
	EXPECT_EQ(v, 0xee);
	EXPECT_CLEAN();
	pb_pages_release(pin, true);
	EXPECT_CLEAN();
	t_exit(c);
	t_exit(p);
	t_end("cow %s: fork copies long-term pinned pages into the child; parent stays writable",
	      kind_name[k]);
}

/* MADV_DONTFORK regions are absent in the child. */
static void test_dontfork(void)
{
	struct pb_proc *p, *c;
	uint8_t v;

	t_begin(SZ_64M);
	p = t_proc_written(ADDR_A, 4 * PAGE_SIZE, 1);
	EXPECT_EQ(pb_madvise(p, ADDR_A + PAGE_SIZE, PAGE_SIZE, MADV_DONTFORK), 0);
	c = t_fork(p);
	EXPECT_CLEAN();
	EXPECT(t_page(c, ADDR_A).present);
	EXPECT(!t_page(c, ADDR_A + PAGE_SIZE).present);
	EXPECT_EQ(pb_load(c, 0, ADDR_A + PAGE_SIZE, &v), -EFAULT);
	EXPECT_EQ(pb_store(c, 0, ADDR_A + PAGE_SIZE, 1), -EFAULT);
	EXPECT(t_page(c, ADDR_A + 2 * PAGE_SIZE).present);
	/* the parent's DONTFORK page was not shared: still writable */
	EXPECT(t_writable(p, ADDR_A + PAGE_SIZE));
	EXPECT(!t_writable(p, ADDR_A));
	EXPECT_CLEAN();
	t_exit(c);
	t_exit(p);
	t_end("cow: MADV_DONTFORK regions are absent in the child");
}

/*
 * MADV_WIPEONFORK: the child gets the range empty, with no anon_vma until
 * it faults there, and the parent's pages in it are not write-protected;
 * a child of the child inherits the flag.
 *
 *   ADDR_A [p0][p1 wipeonfork][p2][p3]
 */
static void test_wipeonfork(void)
{
	struct pb_proc *p, *c, *g;
	struct vm_area_struct *vma;
	uint8_t v = 0xff;

	t_begin(SZ_64M);
	p = t_proc_written(ADDR_A, 4 * PAGE_SIZE, 1);
	EXPECT_EQ(pb_madvise(p, ADDR_A + PAGE_SIZE, PAGE_SIZE, MADV_WIPEONFORK), 0);
	c = t_fork(p);
	EXPECT_CLEAN();
	vma = vma_lookup(mm_of(c), ADDR_A + PAGE_SIZE);
	EXPECT(vma && (vma->vm_flags & VM_WIPEONFORK) && !vma->anon_vma);
	EXPECT(t_page(c, ADDR_A).present);
	EXPECT(!t_page(c, ADDR_A + PAGE_SIZE).present);
	EXPECT_EQ(pb_load(c, 0, ADDR_A + PAGE_SIZE, &v), 0);
	EXPECT_EQ(v, 0);
	EXPECT(t_writable(p, ADDR_A + PAGE_SIZE));
	EXPECT(!t_writable(p, ADDR_A));
	EXPECT_EQ(pb_store(c, 0, ADDR_A + PAGE_SIZE, 9), 0);
	g = t_fork(c);
	EXPECT(!t_page(g, ADDR_A + PAGE_SIZE).present);
	EXPECT_EQ(pb_madvise(p, ADDR_A, 4 * PAGE_SIZE, MADV_KEEPONFORK), 0);
	EXPECT_EQ(mm_of(p)->nr_vmas, 1);
	EXPECT_CLEAN();
	t_exit(g);
	t_exit(c);
	t_exit(p);
	t_end("cow: MADV_WIPEONFORK ranges are empty in the child, KEEPONFORK merges back");
}

/*
 * MADV_DONTNEED holes inside a 64K folio stay holes after fork and
 * refault as order-0 pages in either process.
 *
 *   [p0..p3][hole p4..p7][p8..p15]     one 64K folio around the hole
 */
static void test_holes_survive_fork(void)
{
	struct pb_proc *p, *c;
	unsigned long i;
	bool holes = true;

	t_begin_folios(SZ_64M, PAGES(16));
	p = t_proc_written(ADDR_A, PAGES(16), 0);
	EXPECT_EQ(pb_madvise(p, ADDR_A + 4 * PAGE_SIZE, 4 * PAGE_SIZE, MADV_DONTNEED), 0);
	EXPECT_CLEAN();
	c = t_fork(p);
	EXPECT_CLEAN();
	for (i = 0; i < 16; i++) {
		bool want = i < 4 || i >= 8;

		holes &= t_page(c, ADDR_A + i * PAGE_SIZE).present == want;
		holes &= t_page(p, ADDR_A + i * PAGE_SIZE).present == want;
	}
	EXPECT(holes);
	EXPECT(same_pfns(p, c, 4));
	EXPECT_EQ(pb_store(c, 0, ADDR_A + 5 * PAGE_SIZE, 0x55), 0);
	EXPECT_EQ(pb_store(p, 0, ADDR_A + 6 * PAGE_SIZE, 0x66), 0);
	EXPECT_CLEAN();
	EXPECT_EQ(t_page(c, ADDR_A + 5 * PAGE_SIZE).folio_size, PAGE_SIZE);
	EXPECT_EQ(t_page(p, ADDR_A + 6 * PAGE_SIZE).folio_size, PAGE_SIZE);
	EXPECT(!t_page(c, ADDR_A + 6 * PAGE_SIZE).present);
	EXPECT(!t_page(p, ADDR_A + 5 * PAGE_SIZE).present);
	EXPECT_EQ(t_page(c, ADDR_A + 8 * PAGE_SIZE).folio_size, PAGES(16));
	t_exit(c);
	t_exit(p);
	t_end("cow: dontneed holes in a 64K folio stay holes after fork and refault as 4K");
}

/* A small folio shared by fork and unshared by the child's exit is reused. */
static void test_small_reuse_after_exit(void)
{
	struct pb_proc *p, *c;
	unsigned long pfn;
	struct t_snap s;

	t_begin(SZ_64M);
	p = t_proc_written(ADDR_A, PAGE_SIZE, 7);
	pfn = t_pfn(p, ADDR_A);
	c = t_fork(p);
	EXPECT_EQ(folio_ref_count(t_folio(pfn)), 2);
	EXPECT_EQ(folio_mapcount(t_folio(pfn)), 2);
	EXPECT(!t_exclusive(p, ADDR_A));
	t_exit(c);
	EXPECT_CLEAN();
	t_snap(&s);
	EXPECT_EQ(pb_store(p, 0, ADDR_A, 8), 0);
	EXPECT_EQ(t_pfn(p, ADDR_A), pfn);
	EXPECT_EQ(t_since(&s, PB_STAT_folio_copy), 0);
	EXPECT_EQ(t_since(&s, PB_STAT_fault_wp_reuse), 1);
	EXPECT(t_exclusive(p, ADDR_A));
	EXPECT(t_writable(p, ADDR_A));
	EXPECT_CLEAN();
	t_exit(p);
	t_end("cow: a small folio unshared by the child's exit is reused, not copied");
}

int main(void)
{
	size_t k;

	for (k = 0; k < NR_KINDS; k++)
		test_fork_shares_then_copies_one(kinds[k]);
	for (k = 0; k < NR_KINDS; k++)
		test_fork_isolates_data(kinds[k]);
	for (k = 1; k < NR_KINDS; k++)	/* every kind of large folio */
		test_reuse_after_child_exit(kinds[k]);
	test_small_reuse_after_exit();
	for (k = 0; k < NR_KINDS; k++)
		test_fork_copies_pinned(kinds[k]);
	test_dontfork();
	test_wipeonfork();
	test_holes_survive_fork();
	return tap_done();
}
