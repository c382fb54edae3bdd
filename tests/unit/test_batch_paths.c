// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_batch_paths.c - the batched PTE paths through the public API, each
 * against its per-PTE variant (struct pb_variant, mm/variant.c):
 *
 *   - savings: the counter deltas the batching exists for (GUP-fast pin,
 *     write-fault reuse, zap, fork, mprotect of 1M of 64K folios);
 *   - boundaries: what a batch must not cross or change (VMA, PMD/table,
 *     folio, exclusivity, a live child, UNSHARE);
 *   - named regressions: one test per bug that PTE batching brought into
 *     Linux and that applies to this model, each named with its fix.
 *
 * Where a test runs both variants it does so in one machine on two
 * regions (ADDR_A batched, ADDR_B per-PTE, or the other way round) and
 * compares what pb_observe, the PTE write bits, the data and the fault
 * counts show (t_same_view).  After every state-changing step the checker
 * must be clean.
 */
#include "tests/unit/pbtest.h"

#define ADDR_C (3 * ADDR_A)
#define NP_1M 256UL			/* 1M with 4K pages */

/* The region of the first and of the second variant a test compares. */
static const unsigned long base[2] = { ADDR_A, ADDR_B };

/* ---- helpers ------------------------------------------------------------- */

/*
 * Round @b of a test that runs both ways: @preset with the switch @key
 * on in round 0 (batched) and off in round 1 (per PTE), @more on top
 * ("key=value,...", or NULL).
 */
static void round_variant(int b, const char *preset, const char *key,
			  const char *more)
{
	char sets[128];

	snprintf(sets, sizeof(sets), "%s=%d%s%s", key, b == 0, more ? "," : "",
		 more ? more : "");
	t_variant(preset, sets);
}

/* A fresh machine with 64K mTHP always on. */
static bool begin64k(void)
{
	return t_begin_folios(SZ_64M, PAGES(16));
}

/*
 * The savings tests' start: 64K mTHP, and a process with 1M of 64K
 * folios written @fill + i at ADDR_A and, with @n 2, at ADDR_B too.
 *
 *   ADDR_A [64K][64K] ... [64K]   16 folios, for the first variant
 *   ADDR_B [64K][64K] ... [64K]   16 folios, for the second
 */
static struct pb_proc *begin_1m(unsigned int n, uint8_t fill)
{
	struct pb_proc *p;

	if (!begin64k() || !(p = t_proc_written(ADDR_A, PAGES(NP_1M), fill)))
		return NULL;
	if (n == 2)
		t_map_written(p, ADDR_B, PAGES(NP_1M), fill);
	return p;
}

/*
 * A 64K folio at each of @n addresses, written (0x30 + i), then shared
 * with a child that exits (one fork for all): every page read-only and
 * not PageAnonExclusive, the folios exclusive to @p again.
 */
static bool folios_after_fork_exit(struct pb_proc *p, const unsigned long *addr,
				   unsigned int n)
{
	unsigned long i;
	unsigned int k;

	for (k = 0; k < n; k++) {
		if (!t_map_written(p, addr[k], PAGES(16), 0x30))
			return false;
		EXPECT_EQ(t_page(p, addr[k]).folio_size, PAGES(16));
	}
	t_fork_exit(p);
	EXPECT_CLEAN();
	for (k = 0; k < n; k++)
		for (i = 0; i < 16; i++)
			EXPECT(!t_exclusive(p, addr[k] + i * PAGE_SIZE) &&
			       !t_writable(p, addr[k] + i * PAGE_SIZE));
	return t.ok;
}

static bool folio_after_fork_exit(struct pb_proc *p, unsigned long addr)
{
	return folios_after_fork_exit(p, &addr, 1);
}

/*
 * A machine with 64K mTHP running @preset + @sets, and a process with
 * @len bytes at ADDR_A written @fill + i.  NULL if there is no machine.
 */
static struct pb_proc *begin_written(const char *preset, const char *sets,
				     unsigned long len, uint8_t fill)
{
	if (!begin64k())
		return NULL;
	t_variant(preset, sets);
	return t_proc_written(ADDR_A, len, fill);
}

/*
 * The reuse and unshare tests' start: 64K mTHP under @preset + @sets,
 * and a process whose 64K folio at ADDR_A is after fork and exit.  NULL
 * if there is no machine or process; t.ok false if the folio is not so.
 */
static struct pb_proc *begin_after_fork_exit(const char *preset, const char *sets)
{
	struct pb_proc *p;

	if (!begin64k())
		return NULL;
	t_variant(preset, sets);
	p = t_proc();
	if (p)
		folio_after_fork_exit(p, ADDR_A);
	return p;
}

/* Are the @n pages from @addr writable exactly where @want(i) says? */
static bool writable_is(struct pb_proc *p, unsigned long addr, unsigned long n,
			bool (*want)(unsigned long i))
{
	unsigned long i;
	bool ok = true;

	for (i = 0; i < n; i++) {
		if (t_writable(p, addr + i * PAGE_SIZE) != want(i)) {
			tap_diag("page %lu at %#lx: writable %d, expected %d", i,
				 addr + i * PAGE_SIZE, t_writable(p, addr + i * PAGE_SIZE), want(i));
			ok = false;
		}
	}
	return EXPECT(ok);
}

/* A store of @v to @addr is one reuse fault that makes @nr PTEs writable. */
static bool store_reuses(struct pb_proc *p, unsigned long addr, uint8_t v,
			 uint64_t nr)
{
	struct t_snap s;

	t_snap(&s);
	return EXPECT_EQ(pb_store(p, 0, addr, v), 0) &&
	       EXPECT_EQ(t_since(&s, PB_STAT_fault_wp_reuse), 1) &&
	       EXPECT_EQ(t_since(&s, PB_STAT_wp_reuse_ptes), nr);
}

/* A store of @v to @addr is one fault that copies the page. */
static bool store_copies(struct pb_proc *p, unsigned long addr, uint8_t v)
{
	struct t_snap s;

	t_snap(&s);
	return EXPECT_EQ(pb_store(p, 0, addr, v), 0) &&
	       EXPECT_EQ(t_since(&s, PB_STAT_fault_wp_copy), 1);
}

static bool w_first4(unsigned long i) { return i < 4; }
static bool w_none(unsigned long i) { (void)i; return false; }
static bool w_all(unsigned long i) { (void)i; return true; }
static bool w_first8(unsigned long i) { return i < 8; }
static bool w_8to11(unsigned long i) { return i >= 8 && i < 12; }

/* ======================================================================== */
/* Savings                                                                   */
/* ======================================================================== */

/*
 * Pin 1M of 64K folios (PIN|WRITE|LONGTERM): gup_batch=1 takes at most
 * two folio_ref_atomic per folio (32), gup_batch=0 one per page (256).
 * Both pin the same pages with the same per-folio ref/pin counts.
 */
static void test_save_gup_pin(void)
{
	const unsigned int flags = PB_FOLL_PIN | PB_FOLL_WRITE | PB_FOLL_LONGTERM;
	struct pb_pages *pin = NULL;
	struct page *pages[NP_1M];
	struct pb_proc *p;
	struct t_snap s;
	uint64_t refs[2] = { 0, 0 };
	unsigned long i;
	int b;
	long got;

	if (!(p = begin_1m(2, 0)))
		goto out;
	for (b = 0; b < 2; b++) {
		round_variant(b, "seeds", "gup_batch", NULL);
		t_snap(&s);
		EXPECT_EQ(pb_gup_fast(p, base[b], NP_1M, flags, &pin), 0);
		refs[b] = t_since(&s, PB_STAT_folio_ref_atomic);
		EXPECT_EQ(t_since(&s, PB_STAT_gup_fast_pages), NP_1M);
		EXPECT_EQ(t_since(&s, PB_STAT_gup_slow_pages), 0);
		EXPECT_EQ(t_since(&s, PB_STAT_fault), 0);
		EXPECT_CLEAN();
		for (i = 0; i < 16; i++) {
			struct folio *f = t_folio_at(p, base[b] + i * PAGES(16));

			EXPECT_EQ(folio_ref_count(f), 16 + 16);
			EXPECT_EQ(atomic_load(&f->_pincount), 16);
		}
		pb_pages_release(pin, false);
		EXPECT_CLEAN();
		/* the pinned pages, white-box, in address order */
		got = get_user_pages_fast_flags(mm_of(p), base[b], NP_1M,
						flags | PB_FOLL_FAST_ONLY, pages);
		EXPECT_EQ(got, NP_1M);
		for (i = 0; i < NP_1M && (long)i < got; i++)
			if (!EXPECT(pages[i] == pfn_to_page(t_pfn(p, base[b] + i * PAGE_SIZE))))
				break;
		if (got > 0)
			unpin_user_pages_dirty_lock(pages, (unsigned long)got, false);
		EXPECT_CLEAN();
	}
	tap_diag("pin of 1M of 64K folios: folio_ref_atomic %llu batched, %llu per PTE",
		 (unsigned long long)refs[0], (unsigned long long)refs[1]);
	EXPECT(refs[0] <= 32);
	EXPECT(refs[0] >= 16);
	EXPECT_EQ(refs[1], 256);
	EXPECT(t_same_view(p, ADDR_A, p, ADDR_B, NP_1M));
	t_exit(p);
out:
	t_finish();
}

/*
 * After fork and child exit, writing every page of 1M of 64K folios
 * takes 16 faults with wp_reuse_max=16 and 256 with 1; both reuse (no
 * copy) and end in the same state.
 */
static void test_save_wp_reuse(void)
{
	unsigned long faults[2] = { 0, 0 }, pfn[2];
	struct pb_proc *p;
	struct t_snap s;
	int b;

	if (!(p = begin_1m(2, 0x10)))
		goto out;
	t_fork_exit(p);
	EXPECT_CLEAN();
	for (b = 0; b < 2; b++) {
		t_variant("seeds", b == 0 ? "wp_reuse_max=16" : "wp_reuse_max=1");
		pfn[b] = t_pfn(p, base[b] + 77 * PAGE_SIZE);
		t_snap(&s);
		faults[b] = t_fill_faults(p, base[b], NP_1M, 0x20);
		EXPECT_EQ(t_since(&s, PB_STAT_folio_copy), 0);
		EXPECT_EQ(t_since(&s, PB_STAT_fault_wp_copy), 0);
		EXPECT_EQ(t_since(&s, PB_STAT_wp_reuse_ptes), NP_1M);
		EXPECT_EQ(t_pfn(p, base[b] + 77 * PAGE_SIZE), pfn[b]);
		EXPECT_EQ(t_nr_writable(p, base[b], NP_1M), NP_1M);
		EXPECT(t_data_is(p, base[b], NP_1M, 0x20));
		EXPECT_CLEAN();
	}
	EXPECT_EQ(faults[0], 16);
	EXPECT_EQ(faults[1], 256);
	EXPECT(t_same_view(p, ADDR_A, p, ADDR_B, NP_1M));
	t_exit(p);
out:
	t_finish();
}

/* munmap of 1M of 64K folios: one mapcount atomic per folio vs per page. */
static void test_save_zap(void)
{
	uint64_t mc[2] = { 0, 0 };
	struct pb_proc *p;
	unsigned long frames;
	struct t_snap s;
	int b;

	if (!(p = begin_1m(2, 1)))
		goto out;
	for (b = 0; b < 2; b++) {
		round_variant(b, "upstream", "zap_batch", NULL);
		frames = pb_frames_in_use();
		t_snap(&s);
		EXPECT_EQ(pb_munmap(p, base[b], PAGES(NP_1M)), 0);
		mc[b] = t_since(&s, PB_STAT_mapcount_atomic);
		EXPECT_CLEAN();
		/* every folio freed (256 frames; the empty PTE table may stay) */
		EXPECT(frames - pb_frames_in_use() >= NP_1M);
		EXPECT(!t_page(p, base[b]).present);
	}
	EXPECT_EQ(mc[0], 16);
	EXPECT_EQ(mc[1], 256);
	t_exit(p);
out:
	t_finish();
}

/* fork of 1M of 64K folios: 16 vs 256 mapcount atomics, same sharing. */
static void test_save_fork(void)
{
	struct pb_proc *p, *c[2];
	uint64_t mc[2] = { 0, 0 };
	unsigned long i;
	struct t_snap s;
	int b;

	if (!(p = begin_1m(1, 2)))
		goto out;
	for (b = 0; b < 2; b++) {
		round_variant(b, "upstream", "fork_batch", NULL);
		t_snap(&s);
		c[b] = t_fork(p);
		mc[b] = t_since(&s, PB_STAT_mapcount_atomic);
		EXPECT_EQ(t_since(&s, PB_STAT_folio_copy), 0);
		EXPECT_CLEAN();
		for (i = 0; i < NP_1M; i++)
			if (!EXPECT_EQ(t_pfn(c[b], ADDR_A + i * PAGE_SIZE), t_pfn(p, ADDR_A + i * PAGE_SIZE)))
				break;
		EXPECT_EQ(t_nr_writable(c[b], ADDR_A, NP_1M), 0);
		EXPECT_EQ(t_nr_writable(p, ADDR_A, NP_1M), 0);
		EXPECT(t_data_is(c[b], ADDR_A, NP_1M, 2));
	}
	EXPECT_EQ(mc[0], 16);
	EXPECT_EQ(mc[1], 256);
	EXPECT(t_same_view(c[0], ADDR_A, c[1], ADDR_A, NP_1M));
	t_exit(c[0]);
	t_exit(c[1]);
	EXPECT_CLEAN();
	t_exit(p);
out:
	t_finish();
}

/*
 * mprotect RO then RW of 1M of 64K folios: in both variants every page is
 * writable again (no fault on rewrite) and the results agree.  Batching
 * never costs more entry accesses.  It cannot save any on x86-64: every
 * PTE is still read once (ptep_get or the batch scan) and cleared and
 * set once (modify_prot_start/commit), and pte_batch_hint() is 1 - the
 * entry-access saving is arm64 contpte's, where a ptep_get() reads the
 * 16 entries of a block.  The counters show 518 pte_read for both on
 * x86-64; on arm64-4k 70 batched (one gathering ptep_get per block, the
 * hint skips the rest) against 2086 per PTE (every block unfolded at its
 * first clear and refolded at its last set, 16 reads each time).
 */
static void test_save_mprotect(void)
{
	uint64_t reads[2] = { 0, 0 }, writes[2] = { 0, 0 };
	struct pb_proc *p;
	struct t_snap s;
	int b;

	if (!(p = begin_1m(2, 3)))
		goto out;
	for (b = 0; b < 2; b++) {
		round_variant(b, "upstream", "mprotect_batch", NULL);
		t_snap(&s);
		EXPECT_EQ(pb_mprotect(p, base[b], PAGES(NP_1M), PB_PROT_READ), 0);
		EXPECT_EQ(pb_mprotect(p, base[b], PAGES(NP_1M), RW), 0);
		reads[b] = t_since(&s, PB_STAT_pte_read);
		writes[b] = t_since(&s, PB_STAT_pte_write);
		EXPECT_CLEAN();
		EXPECT_EQ(t_nr_writable(p, base[b], NP_1M), NP_1M);
		EXPECT_EQ(t_fill_faults(p, base[b], NP_1M, 4), 0);
		EXPECT(t_data_is(p, base[b], NP_1M, 4));
	}
	tap_diag("mprotect RO+RW of 1M of 64K folios: pte_read %llu batched, %llu per PTE",
		 (unsigned long long)reads[0], (unsigned long long)reads[1]);
	EXPECT(reads[0] <= reads[1]);
	EXPECT(writes[0] <= writes[1]);
#ifdef ARCH_HAS_CONTPTE
	/* 16-page folios are contiguous blocks with 4K pages only */
	if (CONT_PTES <= 16)
		EXPECT(reads[0] * 4 < reads[1]);	/* one read per block */
	else
#endif
		EXPECT(reads[0] >= NP_1M * 2);	/* each PTE read once per mprotect */
	EXPECT(t_same_view(p, ADDR_A, p, ADDR_B, NP_1M));
	t_exit(p);
out:
	t_finish();
}

/* ======================================================================== */
/* Boundaries: GUP-fast                                                      */
/* ======================================================================== */

/*
 * A read-only pin of pages 2..9 of a 64K folio whose pages 0..3 are
 * exclusive (written after fork+exit with wp_reuse_max=1) and 4..15 not:
 * GUP-fast takes 2 and 3, the slow path unshares 4..9.  Unsharing copies:
 * the pins GUP-fast already took on pages 2,3 are references beyond the
 * mappings, so wp_can_reuse_anon_folio() (refcount == mapcount) says no,
 * as in the kernel.  The pinned pages are exclusive afterwards and stay
 * read-only.  Same result with and without gup_batch.
 */
static void test_gup_ro_pin_mixed_exclusive(void)
{
	struct pb_pages *pin = NULL;
	unsigned long i, pfn0;
	struct pb_proc *p;
	struct t_snap s;
	int b;

	if (!begin64k())
		goto out;
	p = t_proc();
	if (!folios_after_fork_exit(p, base, 2))
		goto exit;
	for (b = 0; b < 2; b++) {
		unsigned long a = base[b];

		round_variant(b, "seeds", "gup_batch", "wp_reuse_max=1");
		EXPECT_EQ(t_fill_faults(p, a, 4, 0x40), 4);
		EXPECT(writable_is(p, a, 16, w_first4));
		pfn0 = t_pfn(p, a);
		t_snap(&s);
		EXPECT_EQ(pb_gup_fast(p, a + 2 * PAGE_SIZE, 8, PB_FOLL_PIN, &pin), 0);
		EXPECT_EQ(t_since(&s, PB_STAT_gup_fast_pages), 2);
		EXPECT_EQ(t_since(&s, PB_STAT_gup_slow_pages), 6);
		EXPECT_EQ(t_since(&s, PB_STAT_fault_unshare), 6);
		EXPECT_EQ(t_since(&s, PB_STAT_folio_copy), 6);
		EXPECT_CLEAN();
		for (i = 0; i < 16; i++) {
			EXPECT_EQ(t_exclusive(p, a + i * PAGE_SIZE), i < 10);
			EXPECT_EQ(t_page(p, a + i * PAGE_SIZE).folio_size,
				  i >= 4 && i < 10 ? PAGE_SIZE : PAGES(16));
		}
		EXPECT(writable_is(p, a, 16, w_first4));	/* unshare never write-enables */
		EXPECT_EQ(t_pfn(p, a), pfn0);
		EXPECT(t_data_is(p, a + 4 * PAGE_SIZE, 12, 0x34));
		pb_pages_release(pin, false);
		EXPECT_CLEAN();
	}
	EXPECT(t_same_view(p, ADDR_A, p, ADDR_B, 16));
exit:
	t_exit(p);
out:
	t_finish();
}

/*
 * Named: the wrong first page of a batch, for GUP.  mprotect's batch once
 * read PageAnonExclusive from folio_page(folio, 0) instead of the batch's
 * first page (fixed by "mm: Pass page directly instead of using
 * folio_page", cf1b80dc31a1); gup_unshared_pages() must likewise start
 * at the page the run's first PTE maps.  All 16 PTEs read-only (mprotect RO after pages 0..3 became exclusive),
 * so one GUP-fast batch covers pages 2..9 and only gup_unshared_pages()
 * can cut it.  Counting exclusivity from the folio's head (pages 0..3
 * exclusive) instead of the run's first page would pin non-exclusive
 * pages 4 and 5 from GUP-fast.  The converse: pages 8..11 exclusive, the
 * head not - a head-based count would refuse the whole run.
 */
static void test_bug_gup_wrong_first_page(void)
{
	struct pb_pages *pin = NULL;
	struct pb_proc *p;
	struct t_snap s;
	unsigned long i;

	p = begin_after_fork_exit("seeds", "wp_reuse_max=1");
	if (!p || !t.ok || !folio_after_fork_exit(p, ADDR_B))
		goto exit;
	t_fill(p, ADDR_A, 4, 0x41);			/* pages 0..3 exclusive */
	t_fill(p, ADDR_B + 8 * PAGE_SIZE, 4, 0x42);		/* pages 8..11 exclusive */
	EXPECT_EQ(pb_mprotect(p, ADDR_A, PAGES(16), PB_PROT_READ), 0);
	EXPECT_EQ(pb_mprotect(p, ADDR_B, PAGES(16), PB_PROT_READ), 0);
	EXPECT_CLEAN();
	EXPECT_EQ(t_nr_writable(p, ADDR_A, 16) + t_nr_writable(p, ADDR_B, 16), 0);
	EXPECT(t_exclusive(p, ADDR_A) && !t_exclusive(p, ADDR_A + 4 * PAGE_SIZE));
	EXPECT(!t_exclusive(p, ADDR_B) && t_exclusive(p, ADDR_B + 8 * PAGE_SIZE));

	t_snap(&s);
	EXPECT_EQ(pb_gup_fast(p, ADDR_A + 2 * PAGE_SIZE, 8, PB_FOLL_PIN, &pin), 0);
	EXPECT_EQ(t_since(&s, PB_STAT_gup_fast_pages), 2);
	EXPECT_EQ(t_since(&s, PB_STAT_gup_slow_pages), 6);
	EXPECT_EQ(t_since(&s, PB_STAT_fault_unshare), 6);
	EXPECT_CLEAN();
	for (i = 2; i < 10; i++)	/* every pinned page exclusive (per page, not head) */
		EXPECT(t_exclusive(p, ADDR_A + i * PAGE_SIZE));
	pb_pages_release(pin, false);

	t_snap(&s);
	EXPECT_EQ(pb_gup_fast(p, ADDR_B + 8 * PAGE_SIZE, 4, PB_FOLL_PIN, &pin), 0);
	EXPECT_EQ(t_since(&s, PB_STAT_gup_fast_pages), 4);
	EXPECT_EQ(t_since(&s, PB_STAT_fault_unshare), 0);
	EXPECT_EQ(t_since(&s, PB_STAT_folio_ref_atomic), 2);	/* one run: first grab + bulk */
	EXPECT_CLEAN();
	pb_pages_release(pin, false);
	EXPECT_CLEAN();
exit:
	t_exit(p);
	t_finish();
}

/*
 * Named: shadow-stack/RO mixing ("mm: internal: fix inconsistent in
 * folio_pte_batch_flags() for shadow stack", part of the GUP-fast
 * batching series): an x86 shadow-stack PTE is RW=0/Dirty=1 and
 * pte_write() is true, so a batch that ignores Dirty cannot tell it from
 * a plain read-only PTE.  White-box: PTE 0 of a read-only,
 * non-exclusive 64K folio becomes a shadow-stack entry (RW=0/Dirty=1,
 * pte_write() true; its page marked exclusive so the entry is legal).  A
 * R/O GUP-fast pin starting there skips the unshare check for the first
 * PTE (it "is writable"); if the batch also took PTEs 1..15 it would pin
 * non-exclusive pages.  GUP-fast must return just page 0.  The state is
 * restored before the checker runs.
 */
#ifndef CONFIG_ARM64
static void test_bug_gup_shadow_stack_mixing(void)
{
	struct page *pages[16];
	struct vm_area_struct *vma;
	struct pb_proc *p;
	pte_t *ptep, saved;
	long got, i;

	p = begin_after_fork_exit("seeds", NULL);
	if (!p || !t.ok || !EXPECT(ptep = t_ptep(p, ADDR_A)))
		goto exit;
	vma = vma_lookup(mm_of(p), ADDR_A);
	saved = ptep_get(ptep);
	vma->vm_flags |= VM_SHADOW_STACK;
	SetPageAnonExclusive(pte_page(saved));
	set_pte(ptep, pte_mkwrite_shstk(saved));
	EXPECT(pte_shstk(ptep_get(ptep)));

	got = get_user_pages_fast_flags(mm_of(p), ADDR_A, 16,
					PB_FOLL_PIN | PB_FOLL_FAST_ONLY, pages);
	EXPECT_EQ(got, 1);
	for (i = 0; i < got; i++)
		if (!PageAnonExclusive(pages[i]))
			tap_diag("GUP-fast pinned non-exclusive page %ld", i);
	if (got > 0)
		unpin_user_pages_dirty_lock(pages, (unsigned long)got, false);

	set_pte(ptep, saved);
	ClearPageAnonExclusive(pte_page(saved));
	vma->vm_flags &= ~VM_SHADOW_STACK;
	EXPECT_CLEAN();
exit:
	t_exit(p);
	t_finish();
}
#endif /* !CONFIG_ARM64 */

/* ======================================================================== */
/* Boundaries: VMA, PMD, page table                                         */
/* ======================================================================== */

/*
 * MADV_FREE of 1M of 64K folios, then a store to one page of folio 3 and
 * MADV_PAGEOUT: the batched walk reads each folio's PTEs once (the scan
 * and the clear), the per-PTE walk once more per PTE; the same PTE stores
 * either way (x86: one RMW each; arm64: a folded block cleared in place),
 * and on arm64 the per-PTE walk flushes each block its one-entry call
 * widened to.  Both leave the same: folio 3 re-dirtied and kept whole,
 * the other 15 discarded.
 *
 *   base[b] [64K][64K][64K][64K*] ... [64K]   * = stored to after the free
 */
static void test_save_free(void)
{
	uint64_t rd[2], wr[2], fl[2];
	const unsigned long f3 = 3 * PAGES(16);
	struct pb_proc *p;
	struct t_snap s;
	unsigned long i;
	int b;

	if (!(p = begin_1m(2, 1)))
		goto out;
	for (b = 0; b < 2; b++) {
		round_variant(b, "upstream", "madvise_free_batch", NULL);
		t_snap(&s);
		EXPECT_EQ(pb_madvise(p, base[b], PAGES(NP_1M), MADV_FREE), 0);
		rd[b] = t_since(&s, PB_STAT_pte_read);
		wr[b] = t_since(&s, PB_STAT_pte_write);
		fl[b] = t_since(&s, PB_STAT_tlb_flush);
		EXPECT_CLEAN();
		for (i = 0; i < NP_1M; i += 16)
			EXPECT(folio_test_lazyfree(t_folio_at(p, base[b] + PAGES(i))));
		for (i = 0; i < NP_1M; i++)
			EXPECT(!pte_dirty(ptep_get(t_ptep(p, base[b] + PAGES(i)))));
		/* No fault: the PTE stays writable, the store re-dirties it. */
		EXPECT_EQ(t_fill_faults(p, base[b] + f3 + PAGES(5), 1, 0x77), 0);
		EXPECT(pte_dirty(ptep_get(t_ptep(p, base[b] + f3 + PAGES(5)))));
		EXPECT_CLEAN();
		EXPECT_EQ(pb_madvise(p, base[b], PAGES(NP_1M), MADV_PAGEOUT), 0);
		EXPECT_CLEAN();
		for (i = 0; i < NP_1M; i++) {
			struct pb_page_info pi = t_page(p, base[b] + PAGES(i));
			bool kept = i >= 48 && i < 64;

			EXPECT(pi.present == kept);
			if (kept)
				EXPECT_EQ(pi.folio_size, PAGES(16));
		}
		EXPECT(!folio_test_lazyfree(t_folio_at(p, base[b] + f3)));
	}
	/* one PTE read saved per PTE after each folio's first */
	EXPECT(rd[0] + 15 * 16 <= rd[1]);
	EXPECT_EQ(wr[0], wr[1]);
#ifdef CONFIG_ARM64
	EXPECT(fl[0] < fl[1]);
#else
	EXPECT_EQ(rd[1] - rd[0], 15 * 16);
	EXPECT_EQ(fl[0], fl[1]);
#endif
	tap_diag("free of 1M: pte_read %llu batched, %llu per PTE; pte_write %llu, %llu;"
		 " tlb_flush %llu, %llu", (unsigned long long)rd[0],
		 (unsigned long long)rd[1], (unsigned long long)wr[0],
		 (unsigned long long)wr[1], (unsigned long long)fl[0],
		 (unsigned long long)fl[1]);
	EXPECT(t_same_view(p, ADDR_A, p, ADDR_B, NP_1M));
	t_exit(p);
out:
	t_finish();
}

/*
 * MADV_FREE of pages 4..11 of a 64K folio: the range covers the folio
 * only partly, so it is split (as Linux 6.18 splits it) and only the
 * eight order-0 folios inside the range become lazy-free; MADV_PAGEOUT of
 * the whole then drops exactly those, and the rest stays, 4K each.  A
 * second folio, freed whole from its page 1 on (the batch starts inside
 * the folio), is split as well.  Same with madvise_free_batch 0 and 1.
 *
 *   a: [0 1 2 3 |4 .. 11| 12 13 14 15][0 |1 ........... 15|]
 *               freed                     freed
 */
static void test_free_partial_folio(void)
{
	struct pb_proc *p;
	unsigned long i;
	int b;

	if (!begin64k())
		goto out;
	p = t_proc();
	for (b = 0; b < 2; b++) {
		unsigned long a = base[b];

		round_variant(b, "upstream", "madvise_free_batch", NULL);
		t_map_written(p, a, PAGES(32), 0x50);
		EXPECT_EQ(pb_madvise(p, a + PAGES(4), PAGES(8), MADV_FREE), 0);
		EXPECT_EQ(pb_madvise(p, a + PAGES(17), PAGES(15), MADV_FREE), 0);
		EXPECT_CLEAN();
		for (i = 0; i < 32; i++) {
			struct folio *folio = t_folio_at(p, a + PAGES(i));
			bool freed = (i >= 4 && i < 12) || i >= 17;

			EXPECT_EQ(t_page(p, a + PAGES(i)).folio_size, PAGES(1));
			EXPECT(folio_test_lazyfree(folio) == freed);
		}
		EXPECT_EQ(pb_madvise(p, a, PAGES(32), MADV_PAGEOUT), 0);
		EXPECT_CLEAN();
		for (i = 0; i < 32; i++)
			EXPECT(t_page(p, a + PAGES(i)).present ==
			       !((i >= 4 && i < 12) || i >= 17));
	}
	EXPECT(t_same_view(p, ADDR_A, p, ADDR_B, 32));
	t_exit(p);
out:
	t_finish();
}

/*
 * mprotect RO of pages 4..11 inside a 64K folio: the VMA boundaries cut
 * the batch - pages 0..3 and 12..15 stay writable, a store to page 5
 * fails; mprotect RW of 4..11 makes them writable again without faults.
 * Same with mprotect_batch 0 and 1.
 */
static bool w_outside_4to11(unsigned long i) { return i < 4 || i >= 12; }

static void test_mprotect_partial_folio(void)
{
	struct pb_proc *p;
	int b;

	if (!begin64k())
		goto out;
	p = t_proc();
	for (b = 0; b < 2; b++) {
		unsigned long a = base[b];

		round_variant(b, "upstream", "mprotect_batch", NULL);
		t_map_written(p, a, PAGES(16), 0x50);
		EXPECT_EQ(pb_mprotect(p, a + 4 * PAGE_SIZE, PAGES(8), PB_PROT_READ), 0);
		EXPECT_CLEAN();
		EXPECT(writable_is(p, a, 16, w_outside_4to11));
		EXPECT_EQ(pb_store(p, 0, a + 5 * PAGE_SIZE, 1), -EFAULT);
		EXPECT_EQ(pb_store(p, 0, a + 11 * PAGE_SIZE, 1), -EFAULT);
		EXPECT_EQ(t_fill_faults(p, a, 4, 0x60), 0);
		EXPECT_EQ(t_fill_faults(p, a + 12 * PAGE_SIZE, 4, 0x6c), 0);
		EXPECT_EQ(pb_mprotect(p, a + 4 * PAGE_SIZE, PAGES(8), RW), 0);
		EXPECT_CLEAN();
		EXPECT(writable_is(p, a, 16, w_all));
		EXPECT_EQ(t_fill_faults(p, a, 16, 0x60), 0);
		EXPECT_EQ(t_page(p, a + 15 * PAGE_SIZE).folio_size, PAGES(16));
		EXPECT_CLEAN();
	}
	EXPECT(t_same_view(p, ADDR_A, p, ADDR_B, 16));
	t_exit(p);
out:
	t_finish();
}

/*
 * mremap of the second half of a 64K folio to 16K below a 2M boundary:
 * pages 8..11 in the last slots of one table, 12..15 in the next.
 * GUP-fast, mprotect, fork and zap (seeds: all batched) over it.
 */
static void test_mremap_half_folio_across_pmd(void)
{
	const unsigned long dst = ADDR_B + PMD_SIZE - PAGES(4);
	struct page *pages[8];
	struct pb_proc *p, *c;
	struct folio *folio;
	unsigned long i;
	struct t_snap s;
	long got;

	if (!(p = begin_written("seeds", NULL, PAGES(16), 0x70)))
		goto out;
	folio = t_folio_at(p, ADDR_A);
	EXPECT_EQ(pb_mremap(p, ADDR_A + PAGES(8), PAGES(8), dst), 0);
	EXPECT_CLEAN();
	for (i = 0; i < 8; i++)
		EXPECT_EQ(t_pfn(p, dst + i * PAGE_SIZE), folio_pfn(folio) + 8 + i);
	EXPECT(t_data_is(p, dst, 8, 0x78));

	/* GUP-fast */
	got = get_user_pages_fast_flags(mm_of(p), dst, 8,
					PB_FOLL_PIN | PB_FOLL_WRITE | PB_FOLL_FAST_ONLY, pages);
	EXPECT_EQ(got, 8);
	for (i = 0; i < 8 && (long)i < got; i++)
		EXPECT(pages[i] == folio_page(folio, 8 + i));
	if (got > 0)
		unpin_user_pages_dirty_lock(pages, (unsigned long)got, false);
	EXPECT_EQ(atomic_load(&folio->_pincount), 0);
	EXPECT_CLEAN();
	/* mprotect: RO everywhere, then RW again without faults */
	EXPECT_EQ(pb_mprotect(p, dst, PAGES(8), PB_PROT_READ), 0);
	EXPECT_CLEAN();
	EXPECT(writable_is(p, dst, 8, w_none));
	EXPECT(writable_is(p, ADDR_A, 8, w_all));
	EXPECT_EQ(pb_mprotect(p, dst, PAGES(8), RW), 0);
	EXPECT_CLEAN();
	EXPECT_EQ(t_fill_faults(p, dst, 8, 0x88), 0);
	/* fork */
	t_snap(&s);
	c = t_fork(p);
	EXPECT_CLEAN();
	EXPECT_EQ(t_since(&s, PB_STAT_mapcount_atomic), 3);	/* runs: 0..7, 8..11, 12..15 */
	for (i = 0; i < 8; i++)
		EXPECT_EQ(t_pfn(c, dst + i * PAGE_SIZE), folio_pfn(folio) + 8 + i);
	EXPECT(t_data_is(c, dst, 8, 0x88));
	EXPECT_EQ(folio_large_mapcount(folio), 32);
	/* zap in the child, then the parent's moved half */
	EXPECT_EQ(pb_munmap(c, dst, PAGES(8)), 0);
	EXPECT_CLEAN();
	EXPECT_EQ(folio_large_mapcount(folio), 24);
	t_exit(c);
	EXPECT_EQ(pb_munmap(p, dst, PAGES(8)), 0);
	EXPECT_CLEAN();
	EXPECT_EQ(folio_large_mapcount(folio), 8);
	EXPECT(t_data_is(p, ADDR_A, 8, 0x70));
	t_exit(p);
out:
	t_finish();
}

/*
 * Named: out-of-bounds PTE-table read when a folio starts at the last
 * slot(s) of a table: Linux's batched unmap in try_to_unmap_one() read
 * past the table's end until folio_unmap_pte_batch() capped the batch at
 * the VMA and the PMD (Lance Yang, June 2025).
 * A 64K folio moved to 16K and to 4K below a 2M boundary, then GUP-fast,
 * mprotect, fork and zap with every batch on: results exact, checker clean.
 */
static void oob_case(unsigned long below)
{
	const unsigned long dst = ADDR_B + PMD_SIZE - below;
	struct page *pages[16];
	struct pb_pages *pin = NULL;
	struct pb_proc *p, *c;
	struct folio *folio;
	unsigned long i;
	uint64_t reads;
	long got;

	p = t_proc_written(ADDR_A, PAGES(16), 0x11);
	folio = t_folio_at(p, ADDR_A);
	EXPECT_EQ(pb_mremap(p, ADDR_A, PAGES(16), dst), 0);
	EXPECT_CLEAN();
	EXPECT_EQ(pte_index(dst), PTRS_PER_PTE - below / PAGE_SIZE);
	/*
	 * Entry loads of GUP-fast: each PTE once, one PTE re-check per run,
	 * the PMD once per table and once per run: 16 + 2 + 2 + 2.  A batch
	 * that read past slot 511 would load one more.
	 */
	reads = t_stat(PB_STAT_pte_read);
	got = get_user_pages_fast_flags(mm_of(p), dst, 16, PB_FOLL_GET | PB_FOLL_FAST_ONLY,
					pages);
	EXPECT_EQ(t_stat(PB_STAT_pte_read) - reads, 16 + 2 + 2 + 2);
	EXPECT_EQ(got, 16);
	for (i = 0; i < 16 && (long)i < got; i++)
		EXPECT(pages[i] == folio_page(folio, i));
	if (got > 0)
		put_user_pages_refs(pages, (unsigned long)got);
	EXPECT_EQ(folio_ref_count(folio), 16);
	EXPECT_EQ(pb_gup_fast(p, dst, 16, PB_FOLL_PIN | PB_FOLL_WRITE, &pin), 0);
	EXPECT_EQ(atomic_load(&folio->_pincount), 16);
	EXPECT_CLEAN();
	pb_pages_release(pin, true);
	EXPECT_CLEAN();
	EXPECT_EQ(pb_mprotect(p, dst, PAGES(16), PB_PROT_READ), 0);
	EXPECT_CLEAN();
	EXPECT(writable_is(p, dst, 16, w_none));
	EXPECT_EQ(pb_mprotect(p, dst, PAGES(16), RW), 0);
	EXPECT_CLEAN();
	EXPECT(writable_is(p, dst, 16, w_all));
	c = t_fork(p);
	EXPECT_CLEAN();
	for (i = 0; i < 16; i++)
		EXPECT_EQ(t_pfn(c, dst + i * PAGE_SIZE), folio_pfn(folio) + i);
	EXPECT_EQ(folio_large_mapcount(folio), 32);
	t_exit(c);
	EXPECT_CLEAN();
	EXPECT_EQ(folio_large_mapcount(folio), 16);
	EXPECT(t_data_is(p, dst, 16, 0x11));
	EXPECT_EQ(pb_munmap(p, dst, PAGES(16)), 0);
	EXPECT_CLEAN();
	t_exit(p);
}

static void test_bug_oob_table_read(void)
{
	if (begin64k()) {
		t_variant("seeds", NULL);
		oob_case(PAGES(4));
		oob_case(PAGE_SIZE);
	}
	t_finish();
}

/* ======================================================================== */
/* Boundaries: write-fault reuse                                             */
/* ======================================================================== */

/*
 * Pages of another folio in the window (after mremap) are never made
 * writable.  Folio X at ADDR_A, Y after it; a child keeps Y shared and
 * unmaps X; the parent moves X's second half away and Y's second half
 * into the hole.  A write to X's page 0 (wp_reuse_max=16) makes X's
 * pages 0..7 writable, not Y's pages 8..15 in the same window; a store
 * there copies and the child keeps its data.
 */
static void test_wp_reuse_other_folio_in_window(void)
{
	struct pb_proc *p, *c;
	struct folio *x, *y;
	unsigned long i;

	if (!(p = begin_written("seeds", "wp_reuse_max=16", 2 * PAGES(16), 0x20)))
		goto out;
	x = t_folio_at(p, ADDR_A);
	y = t_folio_at(p, ADDR_A + PAGES(16));
	c = t_fork(p);
	EXPECT_EQ(pb_munmap(c, ADDR_A, PAGES(16)), 0);
	EXPECT_EQ(pb_mremap(p, ADDR_A + PAGES(8), PAGES(8), ADDR_C), 0);
	EXPECT_EQ(pb_mremap(p, ADDR_A + PAGES(16) + PAGES(8), PAGES(8), ADDR_A + PAGES(8)), 0);
	EXPECT_CLEAN();
	for (i = 0; i < 8; i++) {
		EXPECT_EQ(t_pfn(p, ADDR_A + i * PAGE_SIZE), folio_pfn(x) + i);
		EXPECT_EQ(t_pfn(p, ADDR_A + (8 + i) * PAGE_SIZE), folio_pfn(y) + 8 + i);
	}
	store_reuses(p, ADDR_A, 0x99, 8);
	EXPECT_CLEAN();
	EXPECT(writable_is(p, ADDR_A, 16, w_first8));
	for (i = 8; i < 16; i++)
		EXPECT(!t_exclusive(p, ADDR_A + i * PAGE_SIZE));
	EXPECT(writable_is(p, ADDR_C, 8, w_none));	/* X's other half: other VMA */
	/* Y is shared with the child: a store copies */
	store_copies(p, ADDR_A + 9 * PAGE_SIZE, 0xaa);
	EXPECT(t_data_is(c, ADDR_A + PAGES(16), 16, 0x30));
	EXPECT_EQ(t_folio_at(c, ADDR_A + PAGES(16) + 9 * PAGE_SIZE), y);
	EXPECT_CLEAN();
	t_exit(c);
	t_exit(p);
out:
	t_finish();
}

/*
 * Another folio's page inside the window, in the same VMA and table: a
 * COW copy.  Page 8 of folio X was copied (small folio Z) while a child
 * lived; a second child keeps only Z mapped.  A write to page 0 reuses
 * X's other 15 pages; PTE 8 maps Z, not X's page 8, and Z is shared with
 * the live child: it must stay read-only (wp_reuse_pte_qualifies' PFN
 * check), and a store there copies.
 */
static void test_wp_reuse_cow_copy_in_window(void)
{
	struct pb_proc *p, *c;
	struct folio *x, *z;
	unsigned long i;

	if (!(p = begin_written("seeds", "wp_reuse_max=16", PAGES(16), 0x30)))
		goto out;
	x = t_folio_at(p, ADDR_A);
	c = t_fork(p);
	EXPECT_EQ(pb_store(p, 0, ADDR_A + 8 * PAGE_SIZE, 0x88), 0);
	t_exit(c);
	z = t_folio_at(p, ADDR_A + 8 * PAGE_SIZE);
	EXPECT(z != x && folio_nr_pages(z) == 1);
	c = t_fork(p);
	EXPECT_EQ(pb_munmap(c, ADDR_A, PAGES(8)), 0);
	EXPECT_EQ(pb_munmap(c, ADDR_A + 9 * PAGE_SIZE, 7 * PAGE_SIZE), 0);
	EXPECT_CLEAN();
	EXPECT_EQ(t_folio_at(c, ADDR_A + 8 * PAGE_SIZE), z);
	EXPECT_EQ(t_nr_writable(p, ADDR_A, 16), 0);
	store_reuses(p, ADDR_A, 0x99, 15);
	EXPECT_CLEAN();
	for (i = 0; i < 16; i++)
		EXPECT_EQ(t_writable(p, ADDR_A + i * PAGE_SIZE), i != 8);
	EXPECT(!PageAnonExclusive(folio_page(z, 0)));
	store_copies(p, ADDR_A + 8 * PAGE_SIZE, 0x77);
	EXPECT(t_data_is(c, ADDR_A + 8 * PAGE_SIZE, 1, 0x88));
	EXPECT_CLEAN();
	t_exit(c);
	t_exit(p);
out:
	t_finish();
}

/*
 * Reuse through the faulting page's own PageAnonExclusive says nothing of
 * the other pages: with the folio pinned and shared with a live child,
 * only exclusive pages may become writable.  Page 3 is made exclusive by
 * a R/O pin (unshare) and stays pinned; fork copies it for the child and
 * shares the rest.  A write to page 3 reuses that one PTE; the shared
 * neighbours stay read-only and the child never sees the parent's stores.
 */
static void test_wp_reuse_only_exclusive_when_folio_shared(void)
{
	struct pb_pages *pin = NULL;
	struct pb_proc *p, *c;
	unsigned long i;

	p = begin_after_fork_exit("seeds", "wp_reuse_max=16");
	if (!p || !t.ok)
		goto exit;
	EXPECT_EQ(pb_gup_fast(p, ADDR_A + 3 * PAGE_SIZE, 1, PB_FOLL_PIN, &pin), 0);
	EXPECT(t_exclusive(p, ADDR_A + 3 * PAGE_SIZE));
	c = t_fork(p);
	EXPECT_CLEAN();
	EXPECT(t_pfn(c, ADDR_A + 3 * PAGE_SIZE) != t_pfn(p, ADDR_A + 3 * PAGE_SIZE));
	EXPECT_EQ(t_pfn(c, ADDR_A + 4 * PAGE_SIZE), t_pfn(p, ADDR_A + 4 * PAGE_SIZE));
	store_reuses(p, ADDR_A + 3 * PAGE_SIZE, 0x99, 1);
	EXPECT_CLEAN();
	for (i = 0; i < 16; i++) {
		EXPECT_EQ(t_writable(p, ADDR_A + i * PAGE_SIZE), i == 3);
		EXPECT_EQ(t_exclusive(p, ADDR_A + i * PAGE_SIZE), i == 3);
	}
	EXPECT_EQ(t_fill_faults(p, ADDR_A + 4 * PAGE_SIZE, 4, 0x60), 4);
	EXPECT(t_data_is(c, ADDR_A, 16, 0x30));
	EXPECT_CLEAN();
	pb_pages_release(pin, false);
	t_exit(c);
	EXPECT_CLEAN();
exit:
	t_exit(p);
	t_finish();
}

/*
 * PTEs outside the VMA: after fork+exit, pages 8..15 of the folio are
 * mprotect'ed read-only.  A write to page 0 reuses 0..7 only; the RO VMA
 * part stays read-only and a store there is -EFAULT.  The same from the
 * other side (pages 0..7 RO, fault in page 12).
 */
static void test_wp_reuse_stays_in_vma(void)
{
	struct pb_proc *p;

	p = begin_after_fork_exit("seeds", "wp_reuse_max=16");
	if (!p || !t.ok || !folio_after_fork_exit(p, ADDR_B))
		goto exit;
	EXPECT_EQ(pb_mprotect(p, ADDR_A + PAGES(8), PAGES(8), PB_PROT_READ), 0);
	EXPECT_EQ(pb_mprotect(p, ADDR_B, PAGES(8), PB_PROT_READ), 0);
	EXPECT_CLEAN();
	store_reuses(p, ADDR_A, 1, 8);
	EXPECT_CLEAN();
	EXPECT(writable_is(p, ADDR_A, 16, w_first8));
	EXPECT_EQ(pb_store(p, 0, ADDR_A + 8 * PAGE_SIZE, 1), -EFAULT);
	EXPECT_EQ(pb_store(p, 0, ADDR_A + 15 * PAGE_SIZE, 1), -EFAULT);
	store_reuses(p, ADDR_B + 12 * PAGE_SIZE, 1, 8);
	EXPECT_CLEAN();
	EXPECT_EQ(t_nr_writable(p, ADDR_B, 8), 0);
	EXPECT_EQ(t_nr_writable(p, ADDR_B + PAGES(8), 8), 8);
	EXPECT_EQ(pb_store(p, 0, ADDR_B + 7 * PAGE_SIZE, 1), -EFAULT);
	EXPECT_CLEAN();
exit:
	t_exit(p);
	t_finish();
}

/*
 * A folio still shared with a live child: copy, not reuse; the other PTEs
 * stay read-only, the child's data unchanged.
 */
static void test_wp_reuse_live_child_copies(void)
{
	struct pb_proc *p, *c;
	unsigned long pfn0;
	struct t_snap s;

	if (!(p = begin_written("seeds", "wp_reuse_max=16", PAGES(16), 0x30)))
		goto out;
	pfn0 = t_pfn(p, ADDR_A);
	c = t_fork(p);
	t_snap(&s);
	EXPECT_EQ(pb_store(p, 0, ADDR_A, 0x99), 0);
	EXPECT_EQ(t_since(&s, PB_STAT_fault_wp_copy), 1);
	EXPECT_EQ(t_since(&s, PB_STAT_wp_reuse_ptes), 0);
	EXPECT_CLEAN();
	EXPECT(t_pfn(p, ADDR_A) != pfn0);
	EXPECT_EQ(t_nr_writable(p, ADDR_A, 16), 1);
	EXPECT_EQ(t_nr_writable(c, ADDR_A, 16), 0);
	EXPECT_EQ(t_fill_faults(p, ADDR_A + PAGE_SIZE, 15, 0x51), 15);
	EXPECT_EQ(t_since(&s, PB_STAT_fault_wp_copy), 16);
	EXPECT(t_data_is(c, ADDR_A, 16, 0x30));
	EXPECT_CLEAN();
	t_exit(c);
	t_exit(p);
out:
	t_finish();
}

/*
 * Pages beyond the folio: 16K folios with a 16-PTE window - one reuse
 * fault per folio (4 PTEs), the next folio in the window stays
 * read-only.  And 64K folios with a 32-PTE window: one fault per folio.
 */
static void test_wp_reuse_stops_at_folio(void)
{
	struct pb_proc *p;
	unsigned long i;

	if (!t_begin(SZ_64M))
		goto out;
	EXPECT_EQ(pb_set_thp_policy(PAGES(4), PB_THP_ALWAYS), 0);
	EXPECT_EQ(pb_set_thp_policy(PAGES(16), PB_THP_NEVER), 0);
	t_variant("seeds", "wp_reuse_max=16");
	p = t_proc_written(ADDR_A, 64 * PAGE_SIZE, 1);
	EXPECT_EQ(t_page(p, ADDR_A).folio_size, PAGES(4));
	t_fork_exit(p);
	store_reuses(p, ADDR_A, 2, 4);
	EXPECT(writable_is(p, ADDR_A, 16, w_first4));
	EXPECT_CLEAN();
	EXPECT_EQ(t_fill_faults(p, ADDR_A, 64, 3), 15);	/* 16 folios, one done */
	EXPECT_CLEAN();
	t_exit(p);
	/* 64K folios, 32-PTE window */
	EXPECT_EQ(pb_set_thp_policy(PAGES(4), PB_THP_NEVER), 0);
	EXPECT_EQ(pb_set_thp_policy(PAGES(16), PB_THP_ALWAYS), 0);
	t_variant("seeds", "wp_reuse_max=32");
	p = t_proc_written(ADDR_B, PAGES(NP_1M), 1);
	t_fork_exit(p);
	EXPECT_EQ(pb_store(p, 0, ADDR_B, 2), 0);
	for (i = 16; i < 32; i++)
		EXPECT(!t_writable(p, ADDR_B + i * PAGE_SIZE));
	EXPECT_EQ(t_nr_writable(p, ADDR_B, 16), 16);
	EXPECT_CLEAN();
	EXPECT_EQ(t_fill_faults(p, ADDR_B, NP_1M, 3), 15);
	EXPECT_CLEAN();
	t_exit(p);
out:
	t_finish();
}

/*
 * Reuse on UNSHARE never write-enables: a R/O pin of a previously shared
 * page (fork+exit) unshares it by marking it exclusive, no copy; the
 * page and its neighbours stay read-only and stores to them still fault.
 */
static void test_wp_reuse_unshare_never_writes(void)
{
	struct pb_pages *pin = NULL;
	struct pb_proc *p;
	struct t_snap s;
	unsigned long i;

	p = begin_after_fork_exit("seeds", "wp_reuse_max=16");
	if (!p || !t.ok)
		goto exit;
	t_snap(&s);
	EXPECT_EQ(pb_gup_fast(p, ADDR_A + 3 * PAGE_SIZE, 1, PB_FOLL_PIN, &pin), 0);
	EXPECT_EQ(t_since(&s, PB_STAT_fault_unshare), 1);
	EXPECT_EQ(t_since(&s, PB_STAT_folio_copy), 0);
	EXPECT_EQ(t_since(&s, PB_STAT_wp_reuse_ptes), 0);
	EXPECT_CLEAN();
	EXPECT_EQ(t_nr_writable(p, ADDR_A, 16), 0);
	for (i = 0; i < 16; i++)
		EXPECT_EQ(t_exclusive(p, ADDR_A + i * PAGE_SIZE), i == 3);
	EXPECT_EQ(t_fill_faults(p, ADDR_A + 4 * PAGE_SIZE, 1, 0x44), 1);
	EXPECT_CLEAN();
	pb_pages_release(pin, false);
	EXPECT_CLEAN();
exit:
	t_exit(p);
	t_finish();
}

/* ======================================================================== */
/* Boundaries: mprotect and fork over mixed exclusivity                      */
/* ======================================================================== */

/*
 * mprotect RO then RW over a 64K folio whose pages 0..3 are exclusive:
 * exactly 0..3 become writable; rewriting all takes 12 faults.  Same
 * with mprotect_batch 0 and 1.
 */
static void test_mprotect_mixed_exclusive(void)
{
	struct pb_proc *p;
	int b;

	if (!begin64k())
		goto out;
	p = t_proc();
	if (!folios_after_fork_exit(p, base, 2))
		goto exit;
	for (b = 0; b < 2; b++) {
		unsigned long a = base[b];

		round_variant(b, "seeds", "mprotect_batch", "wp_reuse_max=1");
		t_fill(p, a, 4, 0x40);
		EXPECT_EQ(pb_mprotect(p, a, PAGES(16), PB_PROT_READ), 0);
		EXPECT_CLEAN();
		EXPECT_EQ(pb_mprotect(p, a, PAGES(16), RW), 0);
		EXPECT_CLEAN();
		EXPECT(writable_is(p, a, 16, w_first4));
		EXPECT_EQ(t_fill_faults(p, a, 16, 0x60), 12);
		EXPECT_CLEAN();
	}
	EXPECT(t_same_view(p, ADDR_A, p, ADDR_B, 16));
exit:
	t_exit(p);
out:
	t_finish();
}

/*
 * Named: the wrong first page of a batch, for mprotect:
 * commit_anon_folio_batch() read PageAnonExclusive from folio_page(folio,
 * 0) instead of the batch's first page until cf1b80dc31a1 ("mm: Pass
 * page directly instead of using folio_page").  The batch starts
 * mid-folio: pages 0..3 exclusive, mprotect RW of 4..15 only
 * - a head-based decision would make 4..15 writable (checker: writable
 * non-exclusive).  Converse: 8..11 exclusive, head not, mprotect RW of
 * 8..15 - a head-based decision would leave 8..11 read-only.
 */
static void test_bug_mprotect_wrong_first_page(void)
{
	struct pb_proc *p;
	int b;

	if (!begin64k())
		goto out;
	p = t_proc();
	for (b = 0; b < 2; b++) {
		unsigned long a = base[b];

		round_variant(b, "seeds", "mprotect_batch", "wp_reuse_max=1");
		if (!folio_after_fork_exit(p, a) || !folio_after_fork_exit(p, ADDR_C + a))
			break;
		/* head exclusive, batch from page 4 not */
		t_fill(p, a, 4, 0x40);
		EXPECT_EQ(pb_mprotect(p, a, PAGES(16), PB_PROT_READ), 0);
		EXPECT_EQ(pb_mprotect(p, a + 4 * PAGE_SIZE, 12 * PAGE_SIZE, RW), 0);
		EXPECT_CLEAN();
		EXPECT(writable_is(p, a + 4 * PAGE_SIZE, 12, w_none));
		EXPECT_EQ(t_fill_faults(p, a + 4 * PAGE_SIZE, 12, 0x64), 12);
		EXPECT_CLEAN();
		/* head not exclusive, batch from page 8 is (8..11) */
		t_fill(p, ADDR_C + a + 8 * PAGE_SIZE, 4, 0x48);
		EXPECT_EQ(pb_mprotect(p, ADDR_C + a, PAGES(16), PB_PROT_READ), 0);
		EXPECT_EQ(pb_mprotect(p, ADDR_C + a + PAGES(8), PAGES(8), RW), 0);
		EXPECT_CLEAN();
		EXPECT(writable_is(p, ADDR_C + a + PAGES(8), 8, w_first4));
		EXPECT(writable_is(p, ADDR_C + a, 16, w_8to11));
		EXPECT_EQ(t_fill_faults(p, ADDR_C + a + PAGES(8), 8, 0x68), 4);
		EXPECT_CLEAN();
	}
	t_exit(p);
out:
	t_finish();
}

/*
 * Named: a batch committed with write permission stamped onto read-only
 * neighbours.  mremap's batch gave every PTE the first one's write bit
 * until it passed FPB_RESPECT_WRITE (a fix to f822a9a81a31 "mm: optimize
 * mremap() by PTE batching"); 29f40594a281 fixed the same class, a batch
 * restored with set_ptes() without FPB_RESPECT_WRITE.  With MADV_DONTFORK on pages 0..7 during fork,
 * the parent keeps 0..7 exclusive and writable while 8..15 are shared
 * read-only with the live child - in one VMA after MADV_DOFORK.  mprotect
 * RO then RW must give write back to 0..7 only; 8..15 stay read-only
 * because their pages are shared, a store copies and the child keeps its
 * data.
 */
static void test_bug_write_stamped_on_shared(void)
{
	struct pb_proc *p, *c[2] = { NULL, NULL };
	struct t_snap s;
	int b;

	if (!begin64k())
		goto out;
	p = t_proc();
	for (b = 0; b < 2; b++) {
		t_map_written(p, base[b], PAGES(16), 0x30);
		EXPECT_EQ(pb_madvise(p, base[b], PAGES(8), MADV_DONTFORK), 0);
	}
	c[0] = t_fork(p);
	for (b = 0; b < 2; b++)
		EXPECT_EQ(pb_madvise(p, base[b], PAGES(8), MADV_DOFORK), 0);
	EXPECT_CLEAN();
	for (b = 0; b < 2; b++) {
		unsigned long a = base[b];

		round_variant(b, "upstream", "mprotect_batch", NULL);
		EXPECT(writable_is(p, a, 16, w_first8));
		EXPECT(!t_page(c[0], a).present);
		EXPECT_EQ(t_pfn(c[0], a + 8 * PAGE_SIZE), t_pfn(p, a + 8 * PAGE_SIZE));
		EXPECT(vma_lookup(mm_of(p), a)->vm_end >= a + PAGES(16));	/* one VMA */
		EXPECT_EQ(pb_mprotect(p, a, PAGES(16), PB_PROT_READ), 0);
		EXPECT_CLEAN();
		EXPECT_EQ(pb_mprotect(p, a, PAGES(16), RW), 0);
		EXPECT_CLEAN();
		EXPECT(writable_is(p, a, 16, w_first8));
		t_snap(&s);
		EXPECT_EQ(t_fill_faults(p, a, 16, 0x50), 8);
		EXPECT_EQ(t_since(&s, PB_STAT_fault_wp_copy), 8);
		EXPECT(t_data_is(c[0], a + 8 * PAGE_SIZE, 8, 0x38));
		EXPECT_CLEAN();
	}
	EXPECT(t_same_view(p, ADDR_A, p, ADDR_B, 16));
	t_exit(c[0]);
	t_exit(p);
out:
	t_finish();
}

/*
 * Named: fork without FPB_MERGE_WRITE.  fork's batch must carry the write
 * bit of every PTE it covers (FPB_MERGE_WRITE; before it, an any_writable
 * out-parameter of folio_pte_batch()), or a read-only first PTE hides
 * writable followers.  Page 0 read-only, 1..15 writable and
 * exclusive; fork must write-protect all 16 in the parent, else the
 * parent's later stores would reach the child.
 */
static void test_bug_fork_merge_write(void)
{
	unsigned long i;
	struct pb_proc *p, *c[2] = { NULL, NULL };
	int b;

	if (!begin64k())
		goto out;
	p = t_proc();
	for (b = 0; b < 2; b++) {
		unsigned long a = base[b];

		round_variant(b, "seeds", "fork_batch", "wp_reuse_max=1");
		if (!folio_after_fork_exit(p, a))
			break;
		t_fill(p, a + PAGE_SIZE, 15, 0x41);
		EXPECT(!t_writable(p, a) && t_nr_writable(p, a, 16) == 15);
		c[b] = t_fork(p);
		EXPECT_CLEAN();
		EXPECT_EQ(t_nr_writable(p, a, 16), 0);
		EXPECT_EQ(t_nr_writable(c[b], a, 16), 0);
		for (i = 0; i < 16; i++) {
			EXPECT_EQ(t_pfn(c[b], a + i * PAGE_SIZE), t_pfn(p, a + i * PAGE_SIZE));
			EXPECT(!t_exclusive(p, a + i * PAGE_SIZE));
		}
		EXPECT_EQ(t_fill_faults(p, a, 16, 0x70), 16);
		EXPECT_EQ(pb_load(c[b], 0, a, &(uint8_t){ 0 }), 0);
		EXPECT(t_data_is(c[b], a + PAGE_SIZE, 15, 0x41));
		EXPECT_CLEAN();
	}
	EXPECT(t_same_view(c[0], ADDR_A, c[1], ADDR_B, 16));
	t_exit(c[0]);
	t_exit(c[1]);
	t_exit(p);
out:
	t_finish();
}

/*
 * fork over a pinned large folio: pages 0..7 exclusive (0..3 pinned), 8..15
 * shared.  The child gets copies of the exclusive pages (different pfns,
 * same data) and shares 8..15; the parent's 0..7 stay writable and
 * exclusive, and the device's writes through the pin reach the parent
 * only.  Same with fork_batch 0 and 1.
 */
static void test_fork_pinned_folio(void)
{
	unsigned long i;
	struct pb_proc *p, *c[2] = { NULL, NULL };
	struct pb_pages *pin = NULL;
	struct t_snap s;
	uint8_t v;
	int b;

	if (!begin64k())
		goto out;
	p = t_proc();
	for (b = 0; b < 2; b++) {
		unsigned long a = base[b];

		round_variant(b, "seeds", "fork_batch", "wp_reuse_max=1");
		if (!folio_after_fork_exit(p, a))
			break;
		t_fill(p, a, 8, 0x40);
		EXPECT_EQ(pb_gup_fast(p, a, 4, PB_FOLL_PIN | PB_FOLL_WRITE, &pin), 0);
		EXPECT_CLEAN();
		t_snap(&s);
		c[b] = t_fork(p);
		EXPECT_CLEAN();
		EXPECT_EQ(t_since(&s, PB_STAT_folio_copy), 8);
		for (i = 0; i < 16; i++) {
			unsigned long pa = t_pfn(p, a + i * PAGE_SIZE), ca = t_pfn(c[b], a + i * PAGE_SIZE);

			if (i < 8) {
				EXPECT(pa != ca);
				EXPECT(t_exclusive(p, a + i * PAGE_SIZE));
				EXPECT(t_writable(p, a + i * PAGE_SIZE));
				EXPECT_EQ(t_page(c[b], a + i * PAGE_SIZE).folio_size, PAGE_SIZE);
			} else {
				EXPECT_EQ(pa, ca);
				EXPECT(!t_writable(p, a + i * PAGE_SIZE));
			}
		}
		EXPECT(t_data_is(c[b], a, 8, 0x40));
		EXPECT(t_data_is(c[b], a + PAGES(8), 8, 0x38));
		pb_pages_fill(pin, 0xee);
		EXPECT_EQ(pb_load(p, 0, a + 2 * PAGE_SIZE, &v), 0);
		EXPECT_EQ(v, 0xee);
		EXPECT_EQ(pb_load(c[b], 0, a + 2 * PAGE_SIZE, &v), 0);
		EXPECT_EQ(v, 0x42);
		pb_pages_release(pin, true);
		EXPECT_CLEAN();
	}
	EXPECT(t_same_view(c[0], ADDR_A, c[1], ADDR_B, 16));
	t_exit(c[0]);
	t_exit(c[1]);
	t_exit(p);
out:
	t_finish();
}

int main(void)
{
	t_isolated(test_save_gup_pin,
		   "save/gup: pin of 1M of 64K folios - <= 32 folio_ref_atomic with gup_batch=1, 256 with 0");
	t_isolated(test_save_wp_reuse,
		   "save/wp-reuse: rewriting 1M of 64K folios after fork+exit - 16 faults with wp_reuse_max=16, 256 with 1");
	t_isolated(test_save_zap,
		   "save/zap: munmap of 1M of 64K folios - 16 mapcount atomics batched, 256 per PTE");
	t_isolated(test_save_fork,
		   "save/fork: fork of 1M of 64K folios - 16 mapcount atomics batched, 256 per PTE");
	t_isolated(test_save_mprotect,
		   "save/mprotect: RO then RW of 1M of 64K folios - no more entry accesses batched, all writable again in both");
	t_isolated(test_gup_ro_pin_mixed_exclusive,
		   "gup: R/O pin of pages 2..9 (0..3 exclusive) - fast takes 2,3, slow unshares 4..9; same with gup_batch 0/1");
	t_isolated(test_bug_gup_wrong_first_page,
		   "bug/wrong-first-page (GUP): gup_unshared_pages counts from the run's first page, not the folio head");
#ifdef CONFIG_ARM64
	tap_skip("the RW=0/Dirty=1 shadow-stack encoding is x86's",
		 "bug/shadow-stack: GUP-fast R/O pin never batches a shadow-stack PTE with read-only non-exclusive ones");
#else
	t_isolated(test_bug_gup_shadow_stack_mixing,
		   "bug/shadow-stack: GUP-fast R/O pin never batches a shadow-stack PTE with read-only non-exclusive ones");
#endif
	t_isolated(test_save_free,
		   "save/free: MADV_FREE of 1M of 64K folios - one PTE read per PTE saved batched; same stores; pageout keeps the re-dirtied folio");
	t_isolated(test_free_partial_folio,
		   "bounds/free: MADV_FREE of part of a 64K folio splits it; pageout drops only the freed pages; same with madvise_free_batch 0/1");
	t_isolated(test_mprotect_partial_folio,
		   "bounds/mprotect: partial mprotect inside a folio - the VMA boundary cuts the batch");
	t_isolated(test_mremap_half_folio_across_pmd,
		   "bounds/mremap: half a folio across a 2M boundary - GUP-fast, mprotect, fork, zap stay per table");
	t_isolated(test_bug_oob_table_read,
		   "bug/oob-table-read: folio starting at the last 4 / last 1 slots of a PTE table - all batched paths exact");
	t_isolated(test_wp_reuse_other_folio_in_window,
		   "bounds/wp-reuse: another folio's pages in the window (after mremap) stay read-only");
	t_isolated(test_wp_reuse_cow_copy_in_window,
		   "bounds/wp-reuse: a COW-copied page of another folio inside the window stays read-only");
	t_isolated(test_wp_reuse_only_exclusive_when_folio_shared,
		   "bounds/wp-reuse: reuse via the page's own exclusivity makes only exclusive pages writable");
	t_isolated(test_wp_reuse_stays_in_vma,
		   "bounds/wp-reuse: never crosses into a read-only VMA part of the folio (store there is -EFAULT)");
	t_isolated(test_wp_reuse_live_child_copies,
		   "bounds/wp-reuse: a folio shared with a live child is copied page by page, never reused");
	t_isolated(test_wp_reuse_stops_at_folio,
		   "bounds/wp-reuse: the window never goes past the folio (16K folios, 64K folios with a 32-PTE window)");
	t_isolated(test_wp_reuse_unshare_never_writes,
		   "bounds/wp-reuse: UNSHARE marks only the pinned page exclusive and makes nothing writable");
	t_isolated(test_mprotect_mixed_exclusive,
		   "mprotect: over mixed PageAnonExclusive only the exclusive pages become writable (12 faults on rewrite)");
	t_isolated(test_bug_mprotect_wrong_first_page,
		   "bug/wrong-first-page (mprotect): exclusivity is read from the batch's own first page");
	t_isolated(test_bug_write_stamped_on_shared,
		   "bug/write-stamp: mprotect batch never makes a PTE of a page shared with a live child writable");
	t_isolated(test_bug_fork_merge_write,
		   "bug/fork-merge-write: a read-only first PTE does not hide writable followers from fork's wrprotect");
	t_isolated(test_fork_pinned_folio,
		   "fork: over a pinned large folio copies the exclusive pages, shares the rest (fork_batch 0 and 1)");
	return tap_done();
}
