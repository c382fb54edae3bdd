/*
 * test_cow.c - fork and copy-on-write (spec-gup-fork.md 5): sharing after
 * fork, the one-page copy, isolation of data in both directions for every
 * folio kind, reuse after the child exits, the copy of pinned pages at
 * fork (CVE-2020-29374 family), MADV_DONTFORK and holes.
 */
#include "tests/unit/pbtest.h"

#define RW (PB_PROT_READ | PB_PROT_WRITE)

/* The memory kinds every isolation case runs on. */
enum kind { K_4K, K_64K, K_PMD, K_PTE_2M, NR_KINDS };

static const char *const kind_name[NR_KINDS] = {
	"4K pages", "64K mTHP", "PMD-mapped 2M THP", "PTE-mapped 2M THP",
};

static unsigned long kind_len(enum kind k)
{
	return k == K_4K ? 4 * PAGE_SIZE : k == K_64K ? PAGES(16) : PMD_SIZE;
}

static unsigned long kind_folio(enum kind k)
{
	return k == K_4K ? PAGE_SIZE : k == K_64K ? PAGES(16) : PMD_SIZE;
}

/* A process whose [ADDR_A, +kind_len) is written with 0x10 + i per page. */
static struct pb_proc *populated(enum kind k)
{
	struct pb_proc *p;

	if (k == K_64K)
		pb_set_thp_policy(PAGES(16), PB_THP_ALWAYS);
	if (k == K_PMD || k == K_PTE_2M)
		pb_set_thp_policy(PMD_SIZE, PB_THP_ALWAYS);
	p = t_proc_map(ADDR_A, kind_len(k), RW);
	if (!p)
		return NULL;
	t_fill(p, ADDR_A, kind_len(k) / PAGE_SIZE, 0x10);
	if (k == K_PTE_2M) {
		EXPECT_EQ(pb_split_pmd(p, ADDR_A, PMD_SIZE), 0);
		EXPECT(!t_pmd_mapped(p, ADDR_A));
	}
	EXPECT_EQ(t_page(p, ADDR_A).folio_size, kind_folio(k));
	EXPECT_EQ(t_pmd_mapped(p, ADDR_A), k == K_PMD);
	EXPECT_CLEAN();
	return p;
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
static void test_fork_shares_then_copies_one(enum kind k)
{
	unsigned long n = kind_len(k) / PAGE_SIZE, i, pfn0;
	struct pb_proc *p, *c;
	uint64_t copies;
	bool ro = true;

	t_begin(SZ_64M);
	p = populated(k);
	c = t_fork(p);
	EXPECT_CLEAN();
	EXPECT(same_pfns(p, c, n));
	for (i = 0; i < n; i++)
		ro &= !t_writable(p, ADDR_A + i * PAGE_SIZE) &&
		      !t_writable(c, ADDR_A + i * PAGE_SIZE);
	EXPECT(ro);
	EXPECT_EQ(t_pmd_mapped(c, ADDR_A), k == K_PMD);
	EXPECT_EQ(pb_proc_faults(c), 0);

	pfn0 = t_pfn(c, ADDR_A + 3 * PAGE_SIZE);
	copies = t_stat(PB_STAT_folio_copy);
	EXPECT_EQ(pb_store(p, 0, ADDR_A + 3 * PAGE_SIZE, 0xaa), 0);
	EXPECT_CLEAN();
	EXPECT_EQ(t_stat(PB_STAT_folio_copy) - copies, 1);
	EXPECT(t_pfn(p, ADDR_A + 3 * PAGE_SIZE) != pfn0);
	EXPECT_EQ(t_page(p, ADDR_A + 3 * PAGE_SIZE).folio_size, PAGE_SIZE);
	EXPECT_EQ(t_pfn(c, ADDR_A + 3 * PAGE_SIZE), pfn0);
	EXPECT_EQ(t_page(c, ADDR_A + 3 * PAGE_SIZE).folio_size, kind_folio(k));
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
static void test_fork_isolates_data(enum kind k)
{
	unsigned long n = kind_len(k) / PAGE_SIZE, last = (n - 1) * PAGE_SIZE;
	struct pb_proc *p, *c;
	uint8_t v;

	t_begin(SZ_64M);
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
static void test_reuse_after_child_exit(enum kind k)
{
	unsigned long n = kind_len(k) / PAGE_SIZE, i, faults, want;
	unsigned long pfns[HPAGE_PMD_NR];
	struct pb_proc *p, *c;
	uint64_t copies, reuse;
	bool same = true;

	t_begin(SZ_64M);
	p = populated(k);
	for (i = 0; i < n; i++)
		pfns[i] = t_pfn(p, ADDR_A + i * PAGE_SIZE);
	c = t_fork(p);
	t_exit(c);
	EXPECT_CLEAN();
	faults = pb_proc_faults(p);
	copies = t_stat(PB_STAT_folio_copy);
	reuse = t_stat(PB_STAT_fault_wp_reuse);
	EXPECT(t_fill(p, ADDR_A, n, 0x40));
	EXPECT_CLEAN();
	for (i = 0; i < n; i++)
		same &= t_pfn(p, ADDR_A + i * PAGE_SIZE) == pfns[i];
	EXPECT(same);
	EXPECT_EQ(t_stat(PB_STAT_folio_copy) - copies, 0);
	/* a PMD mapping is reused whole by one fault */
	want = k == K_PMD ? 1 : n;
	EXPECT_EQ(pb_proc_faults(p) - faults, want);
	if (k != K_PMD)
		EXPECT_EQ(t_stat(PB_STAT_fault_wp_reuse) - reuse, n);
	EXPECT(t_data_is(p, ADDR_A, n, 0x40));
	t_exit(p);
	t_end("cow %s: after the child exits, parent writes reuse the folio (%s)",
	      kind_name[k], k == K_PMD ? "one PMD fault" : "one fault per PTE");
}

/*
 * fork with a long-term writable pin: the pinned pages are copied into
 * the child at fork, the parent keeps its pages writable (0 faults).
 */
static void test_fork_copies_pinned(enum kind k)
{
	unsigned long n = kind_len(k) / PAGE_SIZE, i, faults;
	struct pb_proc *p, *c;
	struct pb_pages *pin = NULL;
	uint64_t splits;
	bool differ = true, child_small = true;
	uint8_t v;

	t_begin(SZ_64M);
	p = populated(k);
	EXPECT_EQ(pb_gup_fast(p, ADDR_A, n,
			      PB_FOLL_PIN | PB_FOLL_WRITE | PB_FOLL_LONGTERM, &pin), 0);
	EXPECT_CLEAN();
	splits = t_stat(PB_STAT_pmd_split);
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
	if (k == K_PMD) {
		EXPECT_EQ(t_stat(PB_STAT_pmd_split) - splits, 1);
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
	p = t_proc_map(ADDR_A, 4 * PAGE_SIZE, RW);
	EXPECT(t_fill(p, ADDR_A, 4, 1));
	EXPECT_EQ(pb_madvise(p, ADDR_A + PAGE_SIZE, PAGE_SIZE, PB_MADV_DONTFORK), 0);
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

	t_begin(SZ_64M);
	pb_set_thp_policy(PAGES(16), PB_THP_ALWAYS);
	p = t_proc_map(ADDR_A, PAGES(16), RW);
	EXPECT(t_fill(p, ADDR_A, 16, 0));
	EXPECT_EQ(pb_madvise(p, ADDR_A + 4 * PAGE_SIZE, 4 * PAGE_SIZE, PB_MADV_DONTNEED), 0);
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
	uint64_t copies, reuse;

	t_begin(SZ_64M);
	p = t_proc_map(ADDR_A, PAGE_SIZE, RW);
	EXPECT(t_fill(p, ADDR_A, 1, 7));
	pfn = t_pfn(p, ADDR_A);
	c = t_fork(p);
	EXPECT_EQ(folio_ref_count(t_folio(pfn)), 2);
	EXPECT_EQ(folio_mapcount(t_folio(pfn)), 2);
	EXPECT(!PageAnonExclusive(pfn_to_page(pfn)));
	t_exit(c);
	EXPECT_CLEAN();
	copies = t_stat(PB_STAT_folio_copy);
	reuse = t_stat(PB_STAT_fault_wp_reuse);
	EXPECT_EQ(pb_store(p, 0, ADDR_A, 8), 0);
	EXPECT_EQ(t_pfn(p, ADDR_A), pfn);
	EXPECT_EQ(t_stat(PB_STAT_folio_copy) - copies, 0);
	EXPECT_EQ(t_stat(PB_STAT_fault_wp_reuse) - reuse, 1);
	EXPECT(PageAnonExclusive(pfn_to_page(pfn)));
	EXPECT(t_writable(p, ADDR_A));
	EXPECT_CLEAN();
	t_exit(p);
	t_end("cow: a small folio unshared by the child's exit is reused, not copied");
}

int main(void)
{
	enum kind k;

	for (k = 0; k < NR_KINDS; k++)
		test_fork_shares_then_copies_one(k);
	for (k = 0; k < NR_KINDS; k++)
		test_fork_isolates_data(k);
	for (k = K_64K; k < NR_KINDS; k++)
		test_reuse_after_child_exit(k);
	test_small_reuse_after_exit();
	for (k = 0; k < NR_KINDS; k++)
		test_fork_copies_pinned(k);
	test_dontfork();
	test_holes_survive_fork();
	return tap_done();
}
