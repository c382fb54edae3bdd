// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_stress.c - GUP-fast against everything else an address space does
 * (issue 6, item 1), with real threads.
 *
 * One process P maps 4M of large folios (PMD THPs, and 64K mTHPs where
 * a range is unmapped and mapped again).  For a number of rounds:
 *   - two threads pin and release random ranges (pin_user_pages_fast with
 *     and without FOLL_WRITE or FOLL_LONGTERM, get_user_pages_fast),
 *     keeping up to MAX_HELD sets held;
 *   - a writer thread stores and loads random pages (write faults, COW);
 *   - a mutator unmaps and maps back ranges, makes ranges read-only and
 *     writable again, and splits PMDs;
 *   - a second mutator forks children (which write their copies and exit)
 *     and drops ranges with MADV_DONTNEED.
 * Every store to a page-table entry of P is logged with the global clock
 * of mm/hooks.h around it.  At the end of each round, with every thread
 * stopped:
 *   1. every page every GUP call returned was mapped at its address at
 *      some instant during the call (the interval between the clock ticks
 *      around the call), writable if the call asked for FOLL_WRITE;
 *   2. data written through a held writable pin is what P reads at that
 *      address while P still maps the page, and no other process maps it;
 *   3. the invariant checker is clean with the pins held and again after
 *      all are released (refcounts, pincounts, mapcounts exact).
 * The preset is baseline, then seeds, then seeds with gup_batch_recheck.
 *
 * STRESS_ROUNDS and STRESS_ITERS (ops per thread per round) size the run;
 * `make stress` runs it long, `make check` short.  STRESS_SEED varies it.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "tests/unit/pbtest.h"
#include "mm/hooks.h"

#define REGION		(4UL << 20)
#define NR_REGION_PAGES	(REGION >> PAGE_SHIFT)
#define NR_PINNERS	2
#define MAX_HELD	6
#define MAX_PIN_PAGES	32
#define MAX_CHILDREN	2

enum { CPU_MAIN, CPU_WRITER, CPU_PIN0, CPU_MUT1 = CPU_PIN0 + NR_PINNERS, CPU_MUT2 };

/* ---- the entry history ------------------------------------------------ */

struct hist_event {
	unsigned long addr;
	int level;
	uint64_t val, before, after;
};

static struct hist_event *hist;
static atomic_ulong nr_hist;
static unsigned long cap_hist;
static struct mm_struct *watched;

static bool in_region(unsigned long addr, int level)
{
	unsigned long start = level == 2 ? ADDR_A & PMD_MASK : ADDR_A;

	return addr >= start && addr < ADDR_A + REGION;
}

static void on_entry(const struct pb_entry_event *ev)
{
	unsigned long n;

	if (ev->mm != watched || ev->level > 2 || !in_region(ev->addr, ev->level))
		return;
	n = atomic_fetch_add_explicit(&nr_hist, 1, memory_order_relaxed);
	if (n < cap_hist)
		hist[n] = (struct hist_event){ ev->addr, ev->level, ev->val,
					       ev->seq_before, ev->seq_after };
}

static int hist_cmp(const void *a, const void *b)
{
	const struct hist_event *x = a, *y = b;

	if (x->level != y->level)
		return x->level - y->level;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->before < y->before ? -1 : x->before > y->before;
}

/* The entries of P's region as they are now, as events at tick @t0. */
static void hist_snapshot(struct mm_struct *mm, uint64_t t0)
{
	unsigned long a, i;

	for (a = ADDR_A; a < ADDR_A + REGION; a += PMD_SIZE) {
		pmd_t *pmdp = walk_to_pmd(mm, a);
		pmd_t pmd;

		if (!pmdp)
			continue;
		pmd = pmdp_get(pmdp);
		hist[nr_hist++] = (struct hist_event){ a, 2, pmd_val(pmd), t0, t0 };
		if (!pmd_is_table(pmd))
			continue;
		for (i = 0; i < PTRS_PER_TABLE; i++)
			hist[nr_hist++] = (struct hist_event){
				a + (i << PAGE_SHIFT), 1,
				pte_val(ptep_get(pte_offset(pmd, a) + i)), t0, t0 };
	}
}

/* First event of (level, addr) in the sorted history, or the end. */
static unsigned long hist_find(int level, unsigned long addr, unsigned long n)
{
	unsigned long lo = 0, hi = n;

	while (lo < hi) {
		unsigned long mid = (lo + hi) / 2;
		const struct hist_event *e = &hist[mid];

		if (e->level < level || (e->level == level && e->addr < addr))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Did an entry map @pfn at @addr (writable if @write) at some instant of
 * [s0, s1]?  A value stored by event i holds from i's tick before the
 * store to the next event's tick after its store.
 */
static bool hist_mapped(unsigned long addr, unsigned long pfn, bool write,
			uint64_t s0, uint64_t s1, unsigned long n)
{
	int level;

	for (level = 1; level <= 2; level++) {
		unsigned long key = level == 1 ? addr : addr & PMD_MASK;
		unsigned long i = hist_find(level, key, n);

		for (; i < n && hist[i].level == level && hist[i].addr == key; i++) {
			uint64_t end = i + 1 < n && hist[i + 1].level == level &&
				       hist[i + 1].addr == key ? hist[i + 1].after
							       : UINT64_MAX;
			uint64_t v = hist[i].val;
			bool ok;

			if (hist[i].before > s1 || end < s0)
				continue;
			if (level == 1) {
				pte_t pte = __pte(v);

				ok = pte_present(pte) && !pte_protnone(pte) &&
				     pte_pfn(pte) == pfn && (!write || pte_write(pte));
			} else {
				pmd_t pmd = __pmd(v);

				ok = pmd_leaf(pmd) && !pmd_protnone(pmd) &&
				     pmd_pfn(pmd) + ((addr & ~PMD_MASK) >> PAGE_SHIFT) == pfn &&
				     (!write || pmd_write(pmd));
			}
			if (ok)
				return true;
		}
	}
	return false;
}

/* ---- the threads ------------------------------------------------------- */

struct pin_record {
	unsigned long addr, pfn;
	bool write;
	uint64_t s0, s1;
};

struct held {
	struct pb_pages *pages;
	unsigned long addr;
	unsigned int flags;
};

static struct {
	struct pb_proc *p;
	struct pb_proc *children[MAX_CHILDREN];
	int nr_children;
	int iters;
	pthread_barrier_t start, stop;
	atomic_bool quit;
	atomic_int mutators_running;
	/* per pinner */
	struct pin_record *rec[NR_PINNERS];
	unsigned long nr_rec[NR_PINNERS], cap_rec[NR_PINNERS];
	struct held held[NR_PINNERS][MAX_HELD];
	atomic_ulong ops, pins_ok, forks;
	unsigned long pages_checked;
	atomic_ulong unrecorded;
	unsigned int seed;
} st;

static unsigned int rnd(unsigned int *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static unsigned long rnd_page(unsigned int *s)
{
	return ADDR_A + ((unsigned long)(rnd(s) % NR_REGION_PAGES) << PAGE_SHIFT);
}

/*
 * Pinners and the writer go on while a mutator is still at work (up to
 * a bound), so that on a machine of two CPUs they really overlap; and
 * everybody yields now and then, so that a thread cannot finish its
 * round inside one time slice.
 */
static bool keep_going(int i)
{
	if (i && !(i % 32))
		sched_yield();
	if (i < st.iters)
		return true;
	return atomic_load(&st.mutators_running) > 0 && i < 64 * st.iters;
}

static void pinner_round(int id, unsigned int *s)
{
	static const unsigned int flag_set[] = {
		PB_FOLL_PIN | PB_FOLL_WRITE, PB_FOLL_PIN,
		PB_FOLL_PIN | PB_FOLL_WRITE | PB_FOLL_LONGTERM, PB_FOLL_GET,
	};
	int i;

	for (i = 0; keep_going(i); i++) {
		struct held *h = &st.held[id][rnd(s) % MAX_HELD];
		unsigned long addr, nr, k;
		unsigned int flags;
		uint64_t s0, s1;

		if (h->pages) {
			pb_pages_put(h->pages, false);
			pb_pages_free(h->pages);
			h->pages = NULL;
			continue;
		}
		addr = rnd_page(s);
		nr = 1 + rnd(s) % MAX_PIN_PAGES;
		if (addr + (nr << PAGE_SHIFT) > ADDR_A + REGION)
			nr = (ADDR_A + REGION - addr) >> PAGE_SHIFT;
		flags = flag_set[rnd(s) % 4];
		h->pages = pb_pages_alloc(nr);
		if (!h->pages)
			abort();
		s0 = pb_hook_tick();
		if (pb_gup_fast_into(st.p, addr, nr, flags, h->pages)) {
			s1 = 0;
			pb_pages_free(h->pages);
			h->pages = NULL;
			atomic_fetch_add(&st.ops, 1);
			continue;
		}
		s1 = pb_hook_tick();
		atomic_fetch_add(&st.pins_ok, 1);
		h->addr = addr;
		h->flags = flags;
		for (k = 0; k < nr && st.nr_rec[id] < st.cap_rec[id]; k++)
			st.rec[id][st.nr_rec[id]++] = (struct pin_record){
				addr + (k << PAGE_SHIFT), pb_pages_pfn(h->pages, k),
				(flags & PB_FOLL_WRITE) != 0, s0, s1 };
		/* The log is full: counted, not checked. */
		atomic_fetch_add(&st.unrecorded, nr - k);
		atomic_fetch_add(&st.ops, 1);
	}
}

static void writer_round(unsigned int *s)
{
	int i;

	for (i = 0; keep_going(i); i++) {
		unsigned long addr = rnd_page(s);
		uint8_t v = (uint8_t)rnd(s);

		/* Offset 0 only: offset 8 belongs to the pins' data check. */
		if (rnd(s) % 4)
			pb_store(st.p, CPU_WRITER, addr, v);
		else
			pb_load(st.p, CPU_WRITER, addr, &v);
		atomic_fetch_add(&st.ops, 1);
	}
}

static void mutator1_round(unsigned int *s)
{
	int i;

	for (i = 0; i < st.iters / 8 + 1; i++) {
		unsigned long addr = rnd_page(s);
		unsigned long len = (1 + rnd(s) % 64) << PAGE_SHIFT;

		if (i && !(i % 4))
			sched_yield();

		if (addr + len > ADDR_A + REGION)
			len = ADDR_A + REGION - addr;
		switch (rnd(s) % 3) {
		case 0:
			if (!pb_munmap(st.p, addr, len))
				pb_mmap(st.p, addr, len, PB_PROT_READ | PB_PROT_WRITE);
			break;
		case 1:
			pb_mprotect(st.p, addr, len, PB_PROT_READ);
			pb_mprotect(st.p, addr, len, PB_PROT_READ | PB_PROT_WRITE);
			break;
		default:
			pb_split_pmd(st.p, addr & PMD_MASK, PMD_SIZE);
			break;
		}
		atomic_fetch_add(&st.ops, 1);
	}
}

static void mutator2_round(unsigned int *s)
{
	int i;

	for (i = 0; i < st.iters / 8 + 1; i++) {
		unsigned long addr = rnd_page(s);
		unsigned long len = (1 + rnd(s) % 32) << PAGE_SHIFT;

		if (i && !(i % 4))
			sched_yield();

		if (addr + len > ADDR_A + REGION)
			len = ADDR_A + REGION - addr;
		if (rnd(s) % 2) {
			pb_madvise(st.p, addr, len, MADV_DONTNEED);
		} else if (st.nr_children < MAX_CHILDREN) {
			struct pb_proc *c;

			if (!pb_fork(st.p, &c)) {
				atomic_fetch_add(&st.forks, 1);
				/* The child writes some of its copy (COW in the child). */
				pb_store(c, CPU_MUT2, rnd_page(s), 0xcc);
				st.children[st.nr_children++] = c;
			}
		} else {
			pb_exit(st.children[--st.nr_children]);
		}
		atomic_fetch_add(&st.ops, 1);
	}
}

static void *thread_main(void *arg)
{
	long role = (long)arg;
	unsigned int s = st.seed * 2654435761u + (unsigned int)role * 97u + 1;

	pb_thread_register();
	for (;;) {
		pthread_barrier_wait(&st.start);
		if (atomic_load(&st.quit))
			break;
		if (role < NR_PINNERS)
			pinner_round((int)role, &s);
		else if (role == NR_PINNERS)
			writer_round(&s);
		else if (role == NR_PINNERS + 1)
			mutator1_round(&s);
		else
			mutator2_round(&s);
		if (role > NR_PINNERS)
			atomic_fetch_sub(&st.mutators_running, 1);
		pb_thread_quiesce();
		pthread_barrier_wait(&st.stop);
	}
	pb_thread_unregister();
	return NULL;
}

/* ---- the checks at the end of a round --------------------------------- */

/* 1: every returned page was mapped, with the permission, during its call. */
static unsigned long check_records(void)
{
	unsigned long n = atomic_load(&nr_hist), bad = 0, i;
	int id;

	qsort(hist, n, sizeof(*hist), hist_cmp);
	for (id = 0; id < NR_PINNERS; id++) {
		for (i = 0; i < st.nr_rec[id]; i++) {
			struct pin_record *r = &st.rec[id][i];

			st.pages_checked++;
			if (hist_mapped(r->addr, r->pfn, r->write, r->s0, r->s1, n))
				continue;
			if (bad++ < 3) {
				int level;

				tap_diag("GUP returned pfn %lu for %#lx (%s) during ticks"
					 " %llu..%llu, but no entry mapped it then",
					 r->pfn, r->addr, r->write ? "write" : "read",
					 (unsigned long long)r->s0,
					 (unsigned long long)r->s1);
				for (level = 1; level <= 2; level++) {
					unsigned long key = level == 1 ? r->addr : r->addr & PMD_MASK;
					unsigned long e = hist_find(level, key, n);

					for (; e < n && hist[e].level == level && hist[e].addr == key; e++)
						tap_diag("  L%d %#lx = %#llx at %llu..%llu", level, key,
							 (unsigned long long)hist[e].val,
							 (unsigned long long)hist[e].before,
							 (unsigned long long)hist[e].after);
				}
			}
		}
		st.nr_rec[id] = 0;
	}
	return bad;
}

/*
 * 2: write a tag through every held writable pin ("the device"), then P
 * must read it where it still maps that page, and no child may map it.
 */
static unsigned long check_pinned_data(unsigned int round)
{
	unsigned long bad = 0, k;
	int id, h, c;

	for (id = 0; id < NR_PINNERS; id++) {
		for (h = 0; h < MAX_HELD; h++) {
			struct held *hp = &st.held[id][h];

			if (!hp->pages || !(hp->flags & PB_FOLL_WRITE))
				continue;
			for (k = 0; k < pb_pages_count(hp->pages); k++) {
				unsigned long pfn = pb_pages_pfn(hp->pages, k);
				unsigned long addr = hp->addr + (k << PAGE_SHIFT);
				uint8_t tag = (uint8_t)(0x40 + round + id * 7 + h), got = 0;

				page_store_byte(pfn_to_page(pfn), 8, tag);
				if (t_pfn(st.p, addr) == pfn &&
				    (pb_load(st.p, CPU_MAIN, addr + 8, &got) || got != tag)) {
					if (bad++ < 5)
						tap_diag("P reads %#x at %#lx, the pin wrote %#x",
							 got, addr + 8, tag);
				}
				for (c = 0; c < st.nr_children; c++) {
					if (t_pfn(st.children[c], addr) != pfn)
						continue;
					if (bad++ < 5)
						tap_diag("child %d maps pinned pfn %lu at %#lx",
							 c, pfn, addr);
				}
			}
		}
	}
	return bad;
}

static void release_all(void)
{
	int id, h;

	for (id = 0; id < NR_PINNERS; id++) {
		for (h = 0; h < MAX_HELD; h++) {
			struct held *hp = &st.held[id][h];

			if (hp->pages) {
				pb_pages_release(hp->pages, false);
				hp->pages = NULL;
			}
		}
	}
}

static void stress(const char *preset, bool recheck, int rounds)
{
	pthread_t threads[NR_PINNERS + 3];
	unsigned long bad_rec = 0, bad_data = 0, bad_check = 0;
	struct pb_variant v;
	long i;
	int r, id;

	if (!t_begin(256UL << 20))
		return;
	pb_variant_preset(preset, &v);
	v.gup_batch_recheck = recheck;
	pb_set_variant(&v);
	pb_set_thp_policy(SZ_64K, PB_THP_ALWAYS);
	pb_set_thp_policy(SZ_2M, PB_THP_MADVISE);
	memset(&st, 0, sizeof(st));
	st.iters = getenv("STRESS_ITERS") ? atoi(getenv("STRESS_ITERS")) : 300;
	st.seed = getenv("STRESS_SEED") ? (unsigned int)atoi(getenv("STRESS_SEED")) : 1;
	st.p = t_proc_map(ADDR_A, REGION, PB_PROT_READ | PB_PROT_WRITE);
	if (!st.p)
		goto out;
	pb_madvise(st.p, ADDR_A, REGION, MADV_HUGEPAGE);
	t_fill(st.p, ADDR_A, NR_REGION_PAGES, 1);
	watched = mm_of(st.p);
	for (id = 0; id < NR_PINNERS; id++) {
		st.cap_rec[id] = 4UL * st.iters * MAX_PIN_PAGES;
		st.rec[id] = calloc(st.cap_rec[id], sizeof(struct pin_record));
	}
	pthread_barrier_init(&st.start, NULL, NR_PINNERS + 4);
	pthread_barrier_init(&st.stop, NULL, NR_PINNERS + 4);
	pb_hook_entry_written = on_entry;
	for (i = 0; i < NR_PINNERS + 3; i++)
		pthread_create(&threads[i], NULL, thread_main, (void *)i);
	for (r = 0; r < rounds; r++) {
		uint64_t t0 = pb_hook_tick();

		atomic_store(&nr_hist, 0);
		hist_snapshot(watched, t0);
		atomic_store(&st.mutators_running, 2);
		pthread_barrier_wait(&st.start);	/* go */
		pthread_barrier_wait(&st.stop);		/* all stopped */
		pb_thread_quiesce();
		if (atomic_load(&nr_hist) > cap_hist) {
			tap_diag("history overflow: %lu events", atomic_load(&nr_hist));
			t.ok = false;
			break;
		}
		bad_rec += check_records();
		bad_data += check_pinned_data((unsigned int)r);
		bad_check += pb_check(stderr) != 0;
		release_all();
		bad_check += pb_check(stderr) != 0;
	}
	atomic_store(&st.quit, true);
	pthread_barrier_wait(&st.start);
	for (i = 0; i < NR_PINNERS + 3; i++)
		pthread_join(threads[i], NULL);
	pb_hook_entry_written = NULL;
	pthread_barrier_destroy(&st.start);
	pthread_barrier_destroy(&st.stop);
	EXPECT_EQ(bad_rec, 0);
	EXPECT_EQ(bad_data, 0);
	EXPECT_EQ(bad_check, 0);
	tap_diag("%s%s: %d rounds, %lu operations: %lu GUP calls succeeded,"
		 " %lu returned pages checked against the history (%lu more not"
		 " logged), %lu forks", preset, recheck ? "+gup_batch_recheck" : "",
		 rounds, atomic_load(&st.ops), atomic_load(&st.pins_ok),
		 st.pages_checked, atomic_load(&st.unrecorded),
		 atomic_load(&st.forks));
	while (st.nr_children)
		pb_exit(st.children[--st.nr_children]);
	for (id = 0; id < NR_PINNERS; id++)
		free(st.rec[id]);
out:
	t_exit(st.p);
	t_finish();
}

int main(void)
{
	int rounds = getenv("STRESS_ROUNDS") ? atoi(getenv("STRESS_ROUNDS")) : 3;

	cap_hist = 4UL << 20;
	hist = calloc(cap_hist, sizeof(*hist));
	if (!hist || rounds < 1)
		return 1;
	stress("baseline", false, rounds);
	tap_ok(t.ok, "stress: baseline (per-PTE GUP-fast) against munmap, mprotect,"
	       " split, fork/exit, dontneed and faults: every pin mapped during its"
	       " call, pinned data coherent, counts exact");
	stress("seeds", false, rounds);
	tap_ok(t.ok, "stress: seeds (batched GUP-fast as posted), the same");
	stress("seeds", true, rounds);
	tap_ok(t.ok, "stress: seeds+gup_batch_recheck, the same");
	free(hist);
	return tap_done();
}
