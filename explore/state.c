// SPDX-License-Identifier: GPL-2.0-only
/*
 * state.c - the state key of `ptebatch explore`: a digest of the model's
 * state, read straight from mm/ the way the invariant checker (mm/check.c)
 * reads it, and never written.
 *
 * The search prunes a sequence whose state it has met before, so two
 * states with equal digests must behave alike under every continuation.
 * What a snapshot shows is not enough for that: after "write, fork, child
 * exits" a snapshot looks exactly like after "write", but the parent's
 * PTEs are now read-only and its next write takes a reuse fault, which is
 * precisely where wp_reuse_max makes the variants differ.  The digest
 * therefore covers:
 *
 *  - every live mm, in creation order (the order of the scenario's
 *    processes): MMF_HAS_PINNED, its VMAs (range, flags, page protection,
 *    pgoff, which anon_vma), and for every page of every VMA the PMD
 *    (none, a table, or a leaf) and the PTE, each frame renamed;
 *  - every outstanding GUP result (the scenario's handles) by its FOLL_
 *    flags, with its pages;
 *  - for every frame reached: its page flags (PageAnonExclusive), its
 *    first byte, and its folio: order, refcount, mapcounts, pincount,
 *    flags, anon_vma and owning MMs (renamed).
 *
 * Left out, because only the cost counters depend on them:
 *
 *  - Accessed in PTEs and PMDs, PG_referenced on folios: set by the MMU
 *    and by GUP, read only by reclaim, and the model's one reclaim,
 *    MADV_PAGEOUT's, ignores references as Linux's does;
 *  - the TLBs: access_user() walks the page table on every miss,
 *    permission misses included, and the checker holds every entry to
 *    grant no more than its PTE, so a TLB never changes a result;
 *  - write_protect_seq (even between statements), fault counts (records
 *    show a statement's own), physical frame numbers (records rename them
 *    as well), free memory (the explored machine is far from full), and
 *    frame bytes past the first (explore only stores a page's first byte).
 *
 * Frames, folios, anon_vmas and MMs are renamed by first appearance in
 * the walk, so two machines that differ only in which frames the
 * allocator handed out have the same digest.
 */
#include <stdlib.h>
#include <string.h>

#include "explore/explore.h"
#include "mm/pgtable.h"

/* Two independent 64-bit lanes: a collision needs both to collide. */
struct hasher {
	uint64_t a, b;
};

static void mix(struct hasher *h, uint64_t v)
{
	h->a = (h->a ^ v) * 0x9e3779b97f4a7c15ULL;
	h->a ^= h->a >> 32;
	h->b = (h->b + v) * 0xc2b2ae3d27d4eb4fULL;
	h->b ^= h->b >> 29;
}

/*
 * A renaming: each distinct key gets 1, 2, ... in order of first
 * appearance.  Open addressing; the generation stamp empties it in O(1)
 * for the next digest.
 */
struct renaming {
	uint64_t *keys;
	uint32_t *names, *gens;
	uint64_t *order;	/* keys in naming order */
	size_t cap, nr;
	uint32_t gen;
};

static bool renaming_reset(struct renaming *r, size_t min_cap)
{
	size_t cap = r->cap ? r->cap : 1024;

	while (cap < 2 * min_cap)
		cap *= 2;
	if (cap != r->cap) {
		free(r->keys);
		free(r->names);
		free(r->gens);
		free(r->order);
		r->keys = malloc(cap * sizeof(*r->keys));
		r->names = malloc(cap * sizeof(*r->names));
		r->gens = calloc(cap, sizeof(*r->gens));
		r->order = malloc(cap / 2 * sizeof(*r->order));
		r->cap = cap;
		r->gen = 0;
		if (!r->keys || !r->names || !r->gens || !r->order) {
			r->cap = 0;
			return false;
		}
	}
	r->nr = 0;
	/* A wrapped stamp would make stale slots look current. */
	if (++r->gen == 0) {
		memset(r->gens, 0, r->cap * sizeof(*r->gens));
		r->gen = 1;
	}
	return true;
}

/* The name of @key, naming it if new; 0 when the table is full. */
static uint32_t rename_key(struct renaming *r, uint64_t key)
{
	size_t i = (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 17) & (r->cap - 1);

	for (;; i = (i + 1) & (r->cap - 1)) {
		if (r->gens[i] != r->gen) {
			if (r->nr == r->cap / 2)
				return 0;
			r->gens[i] = r->gen;
			r->keys[i] = key;
			r->order[r->nr] = key;
			r->names[i] = (uint32_t)++r->nr;
			return r->names[i];
		}
		if (r->keys[i] == key)
			return r->names[i];
	}
}

#define MAX_MMS 16
#define MAX_GUPS 16

struct digest_walk {
	struct hasher h;
	struct renaming frames, folios, anon_vmas;
	struct mm_struct *mms[MAX_MMS];
	int nr_mms;
	struct gup_pages *gups[MAX_GUPS];
	int nr_gups;
	bool overflow;		/* more MMs or GUP results than expected */
};

static void collect_mm(struct mm_struct *mm, void *arg)
{
	struct digest_walk *w = arg;

	if (w->nr_mms == MAX_MMS)
		w->overflow = true;
	else
		w->mms[w->nr_mms++] = mm;
}

static void collect_gup(struct gup_pages *gp, void *arg)
{
	struct digest_walk *w = arg;

	if (w->nr_gups == MAX_GUPS)
		w->overflow = true;
	else
		w->gups[w->nr_gups++] = gp;
}

/* An MM ID as the position of its mm (1-based); 0 for MM_ID_DUMMY. */
static uint64_t rename_mm_id(const struct digest_walk *w, mm_id_t id)
{
	int i;

	if (id == MM_ID_DUMMY)
		return 0;
	for (i = 0; i < w->nr_mms; i++)
		if (w->mms[i]->mm_id == id)
			return i + 1;
	return 0xffff;		/* an ID no live mm has: keep it distinct */
}

static void mix_frame(struct digest_walk *w, unsigned long pfn)
{
	uint32_t name = rename_key(&w->frames, pfn);

	if (!name)
		w->overflow = true;
	mix(&w->h, name);
}

static uint64_t rename_anon_vma(struct digest_walk *w,
				const struct anon_vma *av)
{
	uint32_t name;

	if (!av)
		return 0;
	name = rename_key(&w->anon_vmas, (uintptr_t)av);
	if (!name)
		w->overflow = true;
	return name;
}

/* A PTE or PMD leaf: its bits without Accessed, its frame renamed. */
static void mix_entry(struct digest_walk *w, pte_t pte, unsigned long pfn)
{
	mix(&w->h, pte_val(pte_mkold(pte)) & ~PTE_PFN_MASK);
	mix_frame(w, pfn);
}

static void mix_vma(struct digest_walk *w, const struct vm_area_struct *vma)
{
	mix(&w->h, vma->vm_start);
	mix(&w->h, vma->vm_end);
	mix(&w->h, vma->vm_flags);
	mix(&w->h, vma->vm_page_prot.pgprot);
	mix(&w->h, vma->vm_pgoff);
	mix(&w->h, rename_anon_vma(w, vma->anon_vma));
}

/* Every page of @vma: empty, PTE-mapped or inside a PMD leaf. */
static void mix_vma_pages(struct digest_walk *w, struct mm_struct *mm,
			  const struct vm_area_struct *vma)
{
	unsigned long addr;

	for (addr = vma->vm_start; addr < vma->vm_end; addr += PAGE_SIZE) {
		struct addr_lookup found;

		lookup_addr(mm, addr, &found);
		switch (found.level) {
		case ADDR_NO_PMD:
			mix(&w->h, 1);
			break;
		case ADDR_PMD_NONE:
			mix(&w->h, 2);
			break;
		case ADDR_PMD_LEAF:
			mix(&w->h, 3);
			mix_entry(w, found.entry, found.pfn);
			break;
		case ADDR_PTE:
			/*
			 * An empty table still decides something: a PMD
			 * fault needs pmd_none, so it is not the same as 2.
			 */
			mix(&w->h, 4);
			if (pte_present(found.entry))
				mix_entry(w, found.entry, found.pfn);
			else
				mix(&w->h, pte_val(found.entry));
			break;
		}
	}
}

static void mix_mm(struct digest_walk *w, struct mm_struct *mm)
{
	int i;

	mix(&w->h, 0x6d6d);
	mix(&w->h, atomic_load(&mm->has_pinned));
	mix(&w->h, mm->nr_vmas);
	for (i = 0; i < mm->nr_vmas; i++) {
		mix_vma(w, mm->vmas[i]);
		mix_vma_pages(w, mm, mm->vmas[i]);
	}
}

/* Handles are told apart by how they were taken; sort them so. */
static int gup_cmp(const void *a, const void *b)
{
	const struct gup_pages *x = *(struct gup_pages *const *)a;
	const struct gup_pages *y = *(struct gup_pages *const *)b;

	if (x->flags != y->flags)
		return x->flags < y->flags ? -1 : 1;
	return x->nr < y->nr ? -1 : x->nr > y->nr;
}

static void mix_gups(struct digest_walk *w)
{
	unsigned long i;
	int g;

	qsort(w->gups, w->nr_gups, sizeof(w->gups[0]), gup_cmp);
	mix(&w->h, w->nr_gups);
	for (g = 0; g < w->nr_gups; g++) {
		mix(&w->h, w->gups[g]->flags);
		mix(&w->h, w->gups[g]->nr);
		for (i = 0; i < w->gups[g]->nr; i++)
			mix_frame(w, page_to_pfn(w->gups[g]->pages[i]));
	}
}

static void mix_folio(struct digest_walk *w, struct folio *folio)
{
	int i;

	mix(&w->h, folio_order(folio));
	mix(&w->h, (uint32_t)atomic_load(&folio->_refcount));
	mix(&w->h, (uint32_t)atomic_load(&folio->_mapcount));
	mix(&w->h, (uint32_t)atomic_load(&folio->_large_mapcount));
	mix(&w->h, (uint32_t)atomic_load(&folio->_entire_mapcount));
	mix(&w->h, (uint32_t)atomic_load(&folio->_pincount));
	mix(&w->h, atomic_load(&folio->flags) & ~(1UL << PG_referenced));
	mix(&w->h, rename_anon_vma(w, atomic_load(&folio->mapping)));
	for (i = 0; i < 2; i++) {
		mix(&w->h, rename_mm_id(w, folio->_mm_id[i]));
		mix(&w->h, (uint32_t)folio->_mm_id_mapcount[i]);
	}
}

/* Every frame named so far, in naming order, with its folio. */
static void mix_frames(struct digest_walk *w)
{
	size_t i;

	mix(&w->h, w->frames.nr);
	for (i = 0; i < w->frames.nr; i++) {
		unsigned long pfn = w->frames.order[i];
		struct page *page = pfn_to_page(pfn);
		struct folio *folio = page_folio(page);
		size_t folios_before = w->folios.nr;

		/* The form of the contents is not state: only the bytes are. */
		mix(&w->h, atomic_load(&page->flags) &
			   ~(1UL << PG_data_full | 1UL << PG_data_lock));
		mix(&w->h, page_load_byte(page, 0));
		mix(&w->h, rename_key(&w->folios, folio_pfn(folio)));
		mix(&w->h, pfn - folio_pfn(folio));
		if (w->folios.nr != folios_before)
			mix_folio(w, folio);
	}
}

void explore_model_digest(struct explore_digest *d)
{
	static struct digest_walk w;
	int i;

	w.h = (struct hasher){ 0x243f6a8885a308d3ULL, 0x13198a2e03707344ULL };
	w.nr_mms = w.nr_gups = 0;
	w.overflow = false;
	/* A frame per page of the explored regions, a few thousand at most. */
	if (!renaming_reset(&w.frames, 4096) ||
	    !renaming_reset(&w.folios, 4096) ||
	    !renaming_reset(&w.anon_vmas, 64))
		w.overflow = true;
	mm_registry_for_each(collect_mm, &w);
	gup_for_each_tracked(collect_gup, &w);
	if (!w.overflow) {
		for (i = 0; i < w.nr_mms; i++)
			mix_mm(&w, w.mms[i]);
		mix_gups(&w);
		mix_frames(&w);
	}
	/*
	 * A state too big to digest must never match another: give it a
	 * key of its own (the search then only loses pruning).
	 */
	if (w.overflow) {
		static uint64_t unique;

		mix(&w.h, 0x0f0f0f0f0f0f0f0fULL);
		mix(&w.h, ++unique);
	}
	d->lo = w.h.a;
	d->hi = w.h.b;
}
