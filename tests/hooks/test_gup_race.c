// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_gup_race.c - race injection into GUP-fast (issue 6, item 3).
 *
 * GUP-fast reads page tables without locks.  Between any two of its steps
 * (mm/hooks.h: after the first PTE read, after the grab, after the
 * re-check, before each PTE read of a batch, after the batch's bulk grab)
 * this test changes one thing behind its back - clears a PTE, write-
 * protects it, points it at another page, clears the PMD, or freezes the
 * folio's refcount as a split does - for every step the walk reaches and
 * every PTE of a range of two 16K folios, under the per-PTE walk, the
 * seed's batch, and the batch with gup_batch_recheck, for FOLL_PIN|WRITE,
 * FOLL_PIN and FOLL_GET.  Then it undoes the change and checks:
 *
 * A. never a page the walk saw refused: a page whose PTE (or PMD) the
 *    walk read after the change, and which the change made unusable, is
 *    not returned; every page returned is what the address mapped when
 *    the walk last read its entry;
 * B. the per-PTE protocol's refusals: a page whose PTE or PMD changed
 *    before its own reference was held is refused - the per-PTE walk
 *    re-checks after every grab.  The seed's batch reads a run's PTEs
 *    before it takes their references and does not look again, so it
 *    does return such pages: the test counts them and checks that each is
 *    the page the address mapped when the scan read it (benign for data,
 *    the folio reference held all along) - gup_batch_recheck closes it;
 * C. exact release: after the pages are released, every refcount and
 *    pincount is what it was, and the invariant checker is clean.
 */
#include "tests/unit/pbtest.h"
#include "mm/hooks.h"

#define NR_PAGES 8		/* two 16K folios */
#define MAX_EVENTS 256

enum mutation { MUT_CLEAR, MUT_WRPROTECT, MUT_REPLACE, MUT_PMD_CLEAR,
		MUT_FREEZE, NR_MUTATIONS };
static const char *const mutation_names[NR_MUTATIONS] = {
	"clear PTE", "write-protect PTE", "replace PTE", "clear PMD",
	"freeze refcount",
};

struct step_event {
	enum gup_fast_step step;
	pte_t *ptep;
	unsigned int idx;
};

/* The injection in flight (GUP-fast runs on this thread). */
static struct {
	struct step_event ev[MAX_EVENTS];
	int nr_ev;
	int at;				/* inject inside event #at, -1 never */
	enum mutation mut;
	int target;			/* PTE index for the PTE mutations */
	bool done;			/* the change was made */
	pte_t *ptes;			/* the range's NR_PAGES PTEs */
	pmd_t *pmdp;
	uint64_t saved;			/* the entry before the change */
	void *saved_at;
	struct folio *frozen;
	int frozen_refs;
	unsigned long replace_pfn;
} inj;

static void inject(enum gup_fast_step step, pte_t *ptep)
{
	pte_t *t = inj.ptes + inj.target;
	pte_t old;

	switch (inj.mut) {
	case MUT_CLEAR:
	case MUT_WRPROTECT:
	case MUT_REPLACE:
		old = ptep_get(t);
		inj.saved = pte_val(old);
		inj.saved_at = t;
		if (inj.mut == MUT_CLEAR)
			__pte_clear(t);
		else if (inj.mut == MUT_WRPROTECT)
			set_pte(t, pte_wrprotect(old));
		else
			set_pte(t, pte_advance_pfn(old, inj.replace_pfn - pte_pfn(old)));
		break;
	case MUT_PMD_CLEAR:
		inj.saved = pmd_val(pmdp_get(inj.pmdp));
		inj.saved_at = inj.pmdp;
		set_pmd(inj.pmdp, __pmd(0));
		break;
	case MUT_FREEZE:
		/* folio_ref_freeze() of a split: only before the grab. */
		if (step != GUP_STEP_PTE_READ)
			return;
		inj.frozen = page_folio(pte_page(ptep_get(ptep)));
		inj.frozen_refs = atomic_exchange(&inj.frozen->_refcount, 0);
		break;
	default:
		return;
	}
	inj.done = true;
}

static void on_step(enum gup_fast_step step, void *ptep, unsigned int idx)
{
	int n = inj.nr_ev++;

	if (n < MAX_EVENTS)
		inj.ev[n] = (struct step_event){ step, ptep, idx };
	if (n == inj.at)
		inject(step, ptep);
}

static void undo(void)
{
	if (!inj.done)
		return;
	if (inj.mut == MUT_FREEZE)
		atomic_store(&inj.frozen->_refcount, inj.frozen_refs);
	else
		entry_write(inj.saved_at, inj.saved);
}

/*
 * The event index right before the walk's last read of PTE @j (-1: none);
 * *first_read the one before its first read.
 */
static int validation_event(int j, bool *first, int *first_read)
{
	int i, last = -1;

	*first = false;
	*first_read = -1;
	for (i = 0; i < inj.nr_ev && i < MAX_EVENTS; i++) {
		if (inj.ev[i].ptep != inj.ptes + j)
			continue;
		if (inj.ev[i].step == GUP_STEP_PTE_READ)
			*first = true;
		/* The re-check read follows GRABBED; a batch read follows BATCH_READ. */
		if (inj.ev[i].step == GUP_STEP_GRABBED ||
		    inj.ev[i].step == GUP_STEP_BATCH_READ) {
			last = i;
			if (*first_read < 0)
				*first_read = i;
		}
	}
	return last;
}

/* The first BATCH_GRABBED event after @from: where batch pages got their refs. */
static int grab_event(int from)
{
	int i;

	for (i = from + 1; i < inj.nr_ev && i < MAX_EVENTS; i++)
		if (inj.ev[i].step == GUP_STEP_BATCH_GRABBED)
			return i;
	return -1;
}

/* The GRABBED event of the first page of the batch holding @v. */
static int batch_first_grabbed(int v)
{
	int i;

	for (i = v; i >= 0; i--)
		if (inj.ev[i].step == GUP_STEP_GRABBED)
			return i;
	return -1;
}

/* Did the change make page @j (as it was) unusable for @flags? */
static bool affects(int j, unsigned int flags)
{
	if (!inj.done || inj.mut == MUT_FREEZE)
		return false;
	if (inj.mut == MUT_PMD_CLEAR)
		return true;
	if (inj.target != j)
		return false;
	return inj.mut != MUT_WRPROTECT || (flags & FOLL_WRITE);
}

struct tally {
	unsigned long cases, a_bad, b_diff, b_diff_bad, c_bad, returned;
};

struct variant_case {
	const char *name;
	bool batch, recheck;
};

/* One injection: set up, walk with the change at event @at, check A, B, C. */
static void run_case(const struct variant_case *vc, unsigned int flags, int at,
		     enum mutation mut, int target, int *nr_events,
		     struct tally *tl)
{
	struct page *pages[NR_PAGES];
	unsigned long pfn[NR_PAGES], i;
	int refs[NR_PAGES], pins[NR_PAGES], rrefs;
	struct pb_variant v;
	struct pb_proc *p, *q;
	struct folio *rf;
	long got;
	int j;

	if (!t_begin(SZ_64M))
		return;
	pb_variant_preset("upstream", &v);
	v.gup_batch = vc->batch;
	v.gup_batch_recheck = vc->recheck;
	pb_set_variant(&v);
	pb_set_thp_policy(PAGES(4), PB_THP_ALWAYS);
	p = t_proc_map(ADDR_A, NR_PAGES * PAGE_SIZE, PB_PROT_READ | PB_PROT_WRITE);
	q = t_proc_map(ADDR_B, PAGE_SIZE, PB_PROT_READ | PB_PROT_WRITE);
	if (!p || !q)
		goto out;
	t_fill(p, ADDR_A, NR_PAGES, 1);
	t_fill(q, ADDR_B, 1, 0x77);
	EXPECT_EQ(t_page(p, ADDR_A).folio_size, PAGES(4));
	memset(&inj, 0, sizeof(inj));
	inj.pmdp = walk_to_pmd(mm_of(p), ADDR_A);
	inj.ptes = pte_offset(pmdp_get(inj.pmdp), ADDR_A);
	inj.replace_pfn = t_pfn(q, ADDR_B);
	inj.at = at;
	inj.mut = mut;
	inj.target = target;
	for (i = 0; i < NR_PAGES; i++) {
		struct folio *f;

		pfn[i] = t_pfn(p, ADDR_A + i * PAGE_SIZE);
		f = t_folio(pfn[i]);
		refs[i] = folio_ref_count(f);
		pins[i] = atomic_load(&f->_pincount);
	}
	rf = t_folio(inj.replace_pfn);
	rrefs = folio_ref_count(rf);

	pb_hook_gup_fast = (void (*)(enum gup_fast_step, void *, unsigned int))on_step;
	got = get_user_pages_fast_flags(mm_of(p), ADDR_A, NR_PAGES,
					flags | FOLL_FAST_ONLY, pages);
	pb_hook_gup_fast = NULL;
	undo();
	*nr_events = inj.nr_ev;
	tl->cases++;
	if (!EXPECT(got >= 0 && got <= NR_PAGES))
		goto out;
	tl->returned += (unsigned long)got;

	for (j = 0; j < got; j++) {
		bool first, orig = pages[j] == pfn_to_page(pfn[j]);
		bool repl = pages[j] == pfn_to_page(inj.replace_pfn);
		int r_j, v_j = validation_event(j, &first, &r_j), g, pmd_read;

		/* A: a page never mapped at this address, or never read. */
		if ((!orig && !(repl && mut == MUT_REPLACE && target == j &&
				inj.done && at <= v_j)) || v_j < 0) {
			tap_diag("%s: page %d is not what the address mapped", vc->name, j);
			tl->a_bad++;
			continue;
		}
		if (!orig || !affects(j, flags))
			continue;
		/* Where the walk last read this PTE, and the PMD above it. */
		g = first ? -1 : grab_event(r_j);
		pmd_read = first ? v_j : vc->recheck ? g : batch_first_grabbed(v_j);
		if ((mut == MUT_PMD_CLEAR ? at <= pmd_read : at <= v_j)) {
			tap_diag("%s, %s of PTE %d at event %d: page %d returned after the walk saw the change",
				 vc->name, mutation_names[mut], target, at, j);
			tl->a_bad++;
			continue;
		}
		/* B: the change came before this page's own reference. */
		if (!first && g >= 0 && at <= g) {
			tl->b_diff++;
			if (!orig)
				tl->b_diff_bad++;
		}
	}
	if (mut == MUT_FREEZE && inj.done) {
		/* Nothing of the frozen folio at or after the frozen step. */
		for (j = 0; j < got; j++)
			if (page_folio(pages[j]) == inj.frozen &&
			    inj.ev[at].ptep <= inj.ptes + j)
				tl->a_bad++;
	}

	/* C: release, then every count is back. */
	if (flags & FOLL_PIN)
		unpin_user_pages_dirty_lock(pages, (unsigned long)got, false);
	else
		put_user_pages_refs(pages, (unsigned long)got);
	for (i = 0; i < NR_PAGES; i++) {
		struct folio *f = t_folio(pfn[i]);

		if (folio_ref_count(f) != refs[i] ||
		    atomic_load(&f->_pincount) != pins[i]) {
			tap_diag("%s, %s at event %d: folio of page %lu has %d refs %d pins, had %d %d",
				 vc->name, mutation_names[mut], at, i,
				 folio_ref_count(f), atomic_load(&f->_pincount),
				 refs[i], pins[i]);
			tl->c_bad++;
			break;
		}
	}
	if (folio_ref_count(rf) != rrefs)
		tl->c_bad++;
	if (pb_check(stderr))
		tl->c_bad++;
out:
	t_exit(q);
	t_exit(p);
	t_finish();
}

static const struct variant_case variants[] = {
	{ "per-PTE", false, false },
	{ "seed batch", true, false },
	{ "batch+recheck", true, true },
};

static const struct {
	const char *name;
	unsigned int flags;
} foll[] = {
	{ "PIN|WRITE", FOLL_PIN | FOLL_WRITE },
	{ "PIN", FOLL_PIN },
	{ "GET", FOLL_GET },
};

int main(void)
{
	unsigned long seed_b_diffs = 0, recheck_cases = 0;
	size_t vi, fi;

	for (vi = 0; vi < sizeof(variants) / sizeof(variants[0]); vi++) {
		for (fi = 0; fi < sizeof(foll) / sizeof(foll[0]); fi++) {
			const struct variant_case *vc = &variants[vi];
			struct tally tl = { 0 };
			int nr_events = 0, at, target, mut;
			bool ok;

			/* The walk undisturbed: how many steps there are. */
			run_case(vc, foll[fi].flags, -1, MUT_CLEAR, 0, &nr_events, &tl);
			ok = t.ok && tl.returned == NR_PAGES;
			if (!ok)
				tap_diag("the undisturbed walk returned %lu of %d pages",
					 tl.returned, NR_PAGES);
			memset(&tl, 0, sizeof(tl));
			for (at = 0; at < nr_events && at < MAX_EVENTS; at++) {
				for (mut = 0; mut < NR_MUTATIONS; mut++) {
					int targets = mut <= MUT_REPLACE ? NR_PAGES : 1;

					for (target = 0; target < targets; target++) {
						int n;

						run_case(vc, foll[fi].flags, at, mut,
							 target, &n, &tl);
						ok &= t.ok;
					}
				}
			}
			ok &= tl.a_bad == 0 && tl.c_bad == 0 && tl.b_diff_bad == 0;
			if (vc->batch && !vc->recheck)
				seed_b_diffs += tl.b_diff;
			else
				ok &= tl.b_diff == 0;
			if (vc->recheck)
				recheck_cases += tl.cases;
			tap_diag("%s %s: %d steps, %lu injections, %lu pages returned,"
				 " %lu refused-by-per-PTE pages returned",
				 vc->name, foll[fi].name, nr_events, tl.cases,
				 tl.returned, tl.b_diff);
			tap_ok(ok, "gup race: %s, %s: every step x every change of two 16K"
			       " folios - no page returned after its change was seen, refs"
			       " exact%s", vc->name, foll[fi].name,
			       vc->batch && !vc->recheck ? "" :
			       ", nothing the per-PTE walk would refuse");
		}
	}
	/*
	 * The seed's window is real: some pages changed before their own
	 * reference was held came back (each one the page the scan read).
	 */
	tap_ok(seed_b_diffs > 0 && recheck_cases > 0,
	       "gup race: the seed's batch returns pages the per-PTE walk would"
	       " refuse (%lu; benign: each was mapped when scanned); the recheck"
	       " returns none", seed_b_diffs);
	return tap_done();
}
