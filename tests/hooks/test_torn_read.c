// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_torn_read.c - torn PTE reads on x86-pae (issue 7, item 5).
 *
 * On x86-32 with PAE (CONFIG_GUP_GET_PXX_LOW_HIGH) a 64-bit PTE is read
 * as two 32-bit loads, low half then high half, and a store between them
 * leaves the reader an entry nobody wrote.  GUP-fast holds no PTL, so it
 * reads with ptep_get_lockless(), which re-reads the low half and starts
 * over if it changed.  The seed's batch scan (folio_pte_batch_flags())
 * read with plain ptep_get(); FPB_LOCKLESS makes it read as GUP-fast
 * does.  This test shows why:
 *
 * 1. with plain reads, a PTE changed between its two half-reads makes
 *    the scan accept a torn entry, and GUP-fast returns a page that the
 *    address mapped at no time during the walk (race injection at the
 *    split, deterministic);
 * 2. with FPB_LOCKLESS the scan starts the read over, sees the new entry,
 *    and GUP-fast returns only pages that were mapped;
 * 3. a writer thread flips the PTE between two entries that differ in
 *    both halves while a reader reads it and scans it, plain and
 *    lockless: the plain reads see torn entries (a diagnostic: timing
 *    decides how many), the lockless ones never (asserted).
 *
 * Every other architecture reads a PTE in one load: the test skips.
 */
#include "tests/unit/pbtest.h"
#include "mm/hooks.h"

#ifndef CONFIG_X86_PAE
int main(void)
{
	tap_skip("only x86-pae reads a PTE in two halves", "torn reads");
	return tap_done();
}
#else
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <urcu.h>

#include "mm/pte_batch.h"

#define SZ_4G		(4UL << 30)
#define ADDR_C		(ADDR_B + SZ_2M)
#define FOLIO_PAGES	(SZ_64K / SZ_4K)
#define A_PAGES		(SZ_2M / SZ_4K)
#define B_PAGES		256UL
/* Pages whose PFNs are 4G apart have PTEs with the same low half. */
#define PFN_4G		(SZ_4G / SZ_4K)

static uint32_t pte_low(pte_t pte) { return (uint32_t)pte_val(pte); }
static uint32_t pte_high(pte_t pte) { return (uint32_t)(pte_val(pte) >> 32); }

/*
 * Simulated memory of 4G + 2M: PTEs of pfns below PFN_4G have high half
 * NX|0, those of the last 2M block NX|1.  The model's buddy allocator
 * hands out the first block's free buddies (pfns 2..511) before the
 * highest block, so the last of A's 64K folios and everything after it
 * comes from above 4G, while page tables and B's first pages take the
 * first block's frames below pfn 16:
 *
 *   P  A  0x10000000  32 x 64K folios   the last above 4G     (E)
 *   q  B  0x20000000  256 x 4K pages    the first below 4G    (X)
 *   q  C  0x20200000  one 64K folio     above 4G              (Y)
 *
 * k: a page of A above 4G, not the first of its folio, whose pfn is a
 * page X of B's plus 4G.
 *
 *   E = P's PTE at A + k       (E.low, E.high)
 *   X = E with X's pfn         (E.low, E.high - 1)  same low half
 *   Y = E with Y's pfn         (Y.low, E.high)      same high half
 *
 * X and Y differ in both halves; a read that takes X's low half and Y's
 * high half returns E, a page the address maps in neither state.  The search
 * below finds k rather than trusting the allocator's order.
 */
struct layout {
	struct pb_proc *p, *q;
	pmd_t *pmdp;
	pte_t *ptep;		/* P's PTE at A + k */
	unsigned long k;
	unsigned long start;	/* first page of k's folio */
	pte_t e, x, y;
	struct folio *fe, *fx, *fy;
};

static bool layout_init(struct layout *l)
{
	unsigned long pa[A_PAGES], pb[B_PAGES], i, j, px = 0, py;
	struct pb_variant v;

	memset(l, 0, sizeof(*l));
	if (!t_begin(SZ_4G + SZ_2M))
		return false;
	pb_variant_preset("seeds", &v);		/* gup_batch */
	pb_set_variant(&v);
	pb_set_thp_policy(SZ_64K, PB_THP_ALWAYS);
	l->p = t_proc_map(ADDR_A, A_PAGES * SZ_4K, PB_PROT_READ | PB_PROT_WRITE);
	if (!l->p || !t_fill(l->p, ADDR_A, A_PAGES, 1))
		return false;
	pb_set_thp_policy(SZ_64K, PB_THP_NEVER);
	l->q = t_proc_map(ADDR_B, B_PAGES * SZ_4K, PB_PROT_READ | PB_PROT_WRITE);
	if (!l->q || !t_fill(l->q, ADDR_B, B_PAGES, 0x40))
		return false;
	pb_set_thp_policy(SZ_64K, PB_THP_ALWAYS);
	if (!EXPECT_EQ(pb_mmap(l->q, ADDR_C, SZ_64K, PB_PROT_READ | PB_PROT_WRITE), 0) ||
	    !t_fill(l->q, ADDR_C, FOLIO_PAGES, 0x80) ||
	    !EXPECT_EQ(t_page(l->q, ADDR_C).folio_size, SZ_64K))
		return false;

	for (i = 0; i < A_PAGES; i++)
		pa[i] = t_pfn(l->p, ADDR_A + i * SZ_4K);
	for (j = 0; j < B_PAGES; j++)
		pb[j] = t_pfn(l->q, ADDR_B + j * SZ_4K);
	py = t_pfn(l->q, ADDR_C);
	for (i = 0; i < A_PAGES && !l->k; i++) {
		if (pa[i] < PFN_4G || i % FOLIO_PAGES == 0 ||
		    t_page(l->p, ADDR_A + i * SZ_4K).folio_size != SZ_64K)
			continue;
		for (j = 0; j < B_PAGES; j++) {
			if (pb[j] + PFN_4G == pa[i]) {
				l->k = i;
				px = pb[j];
				break;
			}
		}
	}
	if (!l->k || py < PFN_4G) {
		tap_diag("layout: no page of A 4G above a page of B, or C below 4G"
			 " (A %#lx.., B %#lx.., C %#lx)", pa[0], pb[0], py);
		return EXPECT(false);
	}
	l->start = l->k - l->k % FOLIO_PAGES;
	l->pmdp = walk_to_pmd(mm_of(l->p), ADDR_A);
	l->ptep = pte_offset(pmdp_get(l->pmdp), ADDR_A) + l->k;
	l->e = ptep_get(l->ptep);
	/* Unsigned steps wrap: X is 4G below. */
	l->x = pte_advance_pfn(l->e, px - pa[l->k]);
	l->y = pte_advance_pfn(l->e, py - pa[l->k]);
	l->fe = t_folio(pa[l->k]);
	EXPECT(pte_page(l->e) == folio_page(l->fe, l->k - l->start));
	l->fx = t_folio(pte_pfn(l->x));
	l->fy = t_folio(py);
	tap_diag("layout: A+%#lx maps pfn %#lx (E %#018llx); X pfn %#lx (%#018llx),"
		 " Y pfn %#lx (%#018llx)", l->k * SZ_4K, pa[l->k],
		 (unsigned long long)pte_val(l->e), pte_pfn(l->x),
		 (unsigned long long)pte_val(l->x), py,
		 (unsigned long long)pte_val(l->y));
	return EXPECT(pte_low(l->x) == pte_low(l->e) &&
		      pte_high(l->x) != pte_high(l->e) &&
		      pte_low(l->y) != pte_low(l->e) &&
		      pte_high(l->y) == pte_high(l->e));
}

static void layout_fini(struct layout *l)
{
	t_exit(l->q);
	t_exit(l->p);
	t_finish();
}

/* ---- 1 and 2: a store between the two half-reads, deterministic ------ */

static struct {
	pte_t *target;
	pte_t y;
	int reads;		/* split reads of the target seen */
	bool done;
} inj;

/* The first time the target is read, store Y between its halves. */
static void on_split_read(void *entryp)
{
	if (entryp != inj.target)
		return;
	inj.reads++;
	if (!inj.done) {
		set_pte(inj.target, inj.y);
		inj.done = true;
	}
}

struct counts {
	int refs, pins;
};

static struct counts counts_of(struct folio *f)
{
	return (struct counts){ folio_ref_count(f), atomic_load(&f->_pincount) };
}

static bool counts_same(struct folio *f, struct counts c, const char *what)
{
	struct counts now = counts_of(f);

	if (now.refs == c.refs && now.pins == c.pins)
		return true;
	tap_diag("folio of %s: %d refs %d pins after release, %d %d before",
		 what, now.refs, now.pins, c.refs, c.pins);
	return false;
}

/*
 * Address A + k maps X; GUP-fast pins k's folio's 16 pages, batched, and
 * as its scan reads PTE k, Y is stored between the two halves.  With
 * @plain the scan reads without FPB_LOCKLESS.  Returns the page returned
 * for A + k (NULL if none), the pins released and the PTE restored.
 */
static struct page *gup_across_split(struct layout *l, bool plain, long *gotp)
{
	struct page *pages[FOLIO_PAGES], *at_k = NULL;
	struct counts ce = counts_of(l->fe), cx = counts_of(l->fx),
		      cy = counts_of(l->fy);
	unsigned long i;
	long got;

	set_pte(l->ptep, l->x);
	memset(&inj, 0, sizeof(inj));
	inj.target = l->ptep;
	inj.y = l->y;
	pb_hook_gup_batch_plain = plain;
	pb_hook_split_read = on_split_read;
	got = get_user_pages_fast_flags(mm_of(l->p), ADDR_A + l->start * SZ_4K,
					FOLIO_PAGES,
					FOLL_PIN | FOLL_WRITE | FOLL_FAST_ONLY,
					pages);
	pb_hook_split_read = NULL;
	pb_hook_gup_batch_plain = false;
	*gotp = got;
	EXPECT(inj.done);
	if (EXPECT(got >= 0 && got <= (long)FOLIO_PAGES)) {
		/* Every page but k's is the folio's own, in place. */
		for (i = 0; i < (unsigned long)got; i++)
			if (l->start + i != l->k)
				EXPECT(pages[i] == folio_page(l->fe, i));
		if (got > (long)(l->k - l->start))
			at_k = pages[l->k - l->start];
		unpin_user_pages_dirty_lock(pages, (unsigned long)got, false);
	}
	EXPECT(counts_same(l->fe, ce, "E"));
	EXPECT(counts_same(l->fx, cx, "X"));
	EXPECT(counts_same(l->fy, cy, "Y"));
	set_pte(l->ptep, l->e);
	EXPECT_CLEAN();
	return at_k;
}

static void test_plain_scan_tears(void)
{
	struct layout l;
	struct page *at_k;
	long got;

	if (layout_init(&l)) {
		at_k = gup_across_split(&l, true, &got);
		tap_diag("plain scan: A+%#lx mapped pfn %#lx, then pfn %#lx; GUP-fast"
			 " returned %ld pages, pfn %#lx for A+%#lx",
			 l.k * SZ_4K, pte_pfn(l.x), pte_pfn(l.y), got,
			 at_k ? page_to_pfn(at_k) : 0, l.k * SZ_4K);
		/* The hazard: the torn read is E, so the batch took E's page. */
		EXPECT_EQ(got, FOLIO_PAGES);
		EXPECT(at_k == pte_page(l.e));
		EXPECT_EQ(inj.reads, 1);
	}
	layout_fini(&l);
}

static void test_lockless_scan_retries(void)
{
	struct layout l;
	struct page *at_k;
	long got;

	if (layout_init(&l)) {
		at_k = gup_across_split(&l, false, &got);
		tap_diag("FPB_LOCKLESS scan: %d reads of PTE k; GUP-fast returned %ld"
			 " pages, pfn %#lx for A+%#lx", inj.reads, got,
			 at_k ? page_to_pfn(at_k) : 0, l.k * SZ_4K);
		/*
		 * The scan's read of PTE k starts over and sees Y, which ends
		 * the batch; the walk then takes Y on its own.
		 */
		EXPECT_EQ(got, FOLIO_PAGES);
		EXPECT(at_k == pte_page(l.y));
		EXPECT(inj.reads >= 2);
	}
	layout_fini(&l);
}

/* ---- 3: a writer flipping the PTE, a reader reading it --------------- */

/*
 * Reader iterations, half plain, half lockless: about 0.2 s on 2 idle
 * CPUs.  On a loaded machine the yields below make them slower, so the
 * reader also stops after READ_SECONDS.
 */
#define NR_READS	400000UL
#define READ_SECONDS	2

struct flipper {
	struct layout *l;
	atomic_bool go, stop;
	unsigned long flips;
};

/*
 * Flip PTE k between X and Y under its PTL until the reader is done, a
 * grace period after each flip.  The grace period stands for what Linux
 * guarantees GUP-fast: a PTE goes from one page to another only through
 * a TLB flush, which waits for GUP-fast's disabled IRQs, so one lockless
 * read sees at most one change.  Two flips within one read (X, Y, X)
 * would fool any re-read of the low half.
 */
static void *flip_main(void *arg)
{
	struct flipper *fl = arg;
	struct layout *l = fl->l;
	unsigned long i;

	pb_thread_register();
	while (!atomic_load(&fl->go))
		sched_yield();
	for (i = 0; !atomic_load(&fl->stop); i++) {
		spinlock_t *ptl;
		pte_t *ptep = pte_offset_map_lock(mm_of(l->p), l->pmdp,
						  ADDR_A + l->k * SZ_4K, &ptl);

		set_pte(ptep, i & 1 ? l->x : l->y);
		pte_unmap_unlock(ptep, ptl);
		synchronize_rcu();
	}
	fl->flips = i;
	pb_thread_unregister();
	return NULL;
}

/*
 * In one iteration of 32 per reader, the reads of the PTE give up the
 * CPU between their two halves (the split-read hook), so the writer's
 * store can land there even when the two threads share one CPU, as they
 * often do on a loaded machine.
 */
static pte_t *widen_target;
static bool widen_now;

static void widen_split(void *entryp)
{
	if (entryp == widen_target && widen_now)
		sched_yield();
}

static double seconds_since(struct timespec t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9;
}

struct reader_tally {
	unsigned long reads, torn, batched;
};

static void test_concurrent(void)
{
	struct reader_tally rt[2] = { { 0 } };	/* [0] plain, [1] lockless */
	struct flipper fl = { 0 };
	struct layout l;
	pthread_t writer;
	struct timespec t0;
	unsigned long i;
	pte_t prev;

	if (!layout_init(&l))
		goto out;
	prev = ptep_get(l.ptep - 1);
	set_pte(l.ptep, l.x);
	fl.l = &l;
	widen_target = l.ptep;
	pb_hook_split_read = widen_split;
	if (!EXPECT_EQ(pthread_create(&writer, NULL, flip_main, &fl), 0))
		goto restore;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	atomic_store(&fl.go, true);
	for (i = 0; i < NR_READS; i++) {
		bool lockless = i & 1;
		struct reader_tally *r = &rt[lockless];
		pte_t pte, copy = prev;
		unsigned int nr;

		if (i % 1024 == 0 && seconds_since(t0) >= READ_SECONDS)
			break;
		widen_now = (i >> 1) % 32 == 0;

		/*
		 * A lockless reader's section: the PTE read as GUP-fast reads
		 * the first PTE of a run, then the batch scan of one entry
		 * from PTE k - 1, which expects E at k.
		 */
		rcu_read_lock();
		pte = lockless ? ptep_get_lockless(l.ptep) : ptep_get(l.ptep);
		nr = folio_pte_batch_flags(l.fe, NULL, l.ptep - 1, &copy, 2,
					   lockless ? FPB_LOCKLESS | FPB_RESPECT_WRITE :
					   FPB_RESPECT_WRITE);
		rcu_read_unlock();
		r->reads++;
		if (!pte_same(pte, l.x) && !pte_same(pte, l.y))
			r->torn++;
		/* Neither X nor Y continues the run: E came from a torn read. */
		if (nr == 2)
			r->batched++;
	}
	atomic_store(&fl.stop, true);
	pthread_join(writer, NULL);
	pb_hook_split_read = NULL;
	tap_diag("%lu flips; plain: %lu reads, %lu torn, %lu scans took E;"
		 " lockless: %lu reads, %lu torn, %lu scans took E", fl.flips,
		 rt[0].reads, rt[0].torn, rt[0].batched, rt[1].reads,
		 rt[1].torn, rt[1].batched);
	if (!rt[0].torn && !rt[0].batched)
		tap_diag("the plain reader saw no torn entry this run (timing)");
	EXPECT(fl.flips > 0);
	EXPECT_EQ(rt[1].torn, 0);
	EXPECT_EQ(rt[1].batched, 0);
restore:
	pb_hook_split_read = NULL;
	set_pte(l.ptep, l.e);
out:
	layout_fini(&l);
}

int main(void)
{
	t_isolated(test_plain_scan_tears,
		   "torn reads: a plain batch scan takes X's low half and Y's high"
		   " half, and GUP-fast returns E's page, which the address mapped"
		   " at no time during the walk; refs exact");
	t_isolated(test_lockless_scan_retries,
		   "torn reads: with FPB_LOCKLESS the scan reads again, stops at Y,"
		   " and GUP-fast returns only mapped pages; refs exact");
	t_isolated(test_concurrent,
		   "torn reads: a writer flips a PTE between X and Y: ptep_get_lockless"
		   " and the FPB_LOCKLESS scan never see a torn entry");
	return tap_done();
}
#endif
