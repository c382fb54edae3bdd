// SPDX-License-Identifier: GPL-2.0-only
/*
 * check.c: the invariant checker (pb_check).  It reads all model state
 * and writes none of it (but for forgetting a TLB entry of a dead mm once
 * reported): every page table of every live mm, every
 * outstanding GUP result, every TLB and every allocated folio, and
 * reports each violation of these invariants:
 *
 *  - a writable PTE maps an anon page that is not PageAnonExclusive, or a
 *    page mapped more than once;
 *  - a PageAnonExclusive page is mapped by two MMs; a pinned anon page is
 *    not exclusive; the zero page is exclusive or writable;
 *  - refcount != mappings + GET refs + pins (x1 with _pincount, x1024
 *    without); mapcounts, entire mapcount and _pincount disagree with the
 *    page tables and pins; a folio mapped by two MMs is not marked
 *    "maybe mapped shared", or one marked exclusive has no owner slot
 *    covering all its mappings;
 *  - an entry outside every VMA, write without VM_WRITE, a writable
 *    PROT_NONE entry, RW=0/Dirty=1 outside a shadow-stack VMA, SavedDirty
 *    together with RW (x86); RDONLY clear without PTE_WRITE, a
 *    contiguous block that is not one all through (arm64);
 *  - a TLB entry that grants more than its PTE (a missing flush), or one
 *    of an mm that no longer exists; a TLB entry dirty over a clean PTE of
 *    a lazy-free folio (MADV_FREE's missing flush: a store would not
 *    re-dirty the PTE, and reclaim would discard it);
 *  - frames neither free, nor in a folio, nor in a reachable page table.
 *
 * Its cost follows what is in use, not the machine's size: it walks the
 * page tables of the live mms, the GUP results, the allocated folios (the
 * allocator's list, page_alloc.c) and the TLBs of the CPUs that used
 * theirs; what the page tables and GUP results say about each pfn goes
 * into a sparse array holding only the pfns they name; and the frames in
 * no folio are counted, not visited: free, page-table and reserved frames
 * are the allocator's counts.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>

#include "mm/pgtable.h"
#include "mm/tlb.h"

/*
 * What the page tables and GUP results say about one pfn: as the head of
 * a folio (the folio's mappings and references) and as a page (who maps
 * it).  A small folio's pfn is both.
 */
struct acct {
	unsigned int gen;		/* valid in the check of this generation */
	/* As a folio's head. */
	unsigned int pte_maps, pmd_maps, gets, pins;
	unsigned int mms;		/* distinct MMs mapping it */
	mm_id_t last_mm;
	unsigned int slot_maps[2];	/* mappings by the MMs in _mm_id[] */
	/* As a page. */
	mm_id_t mm;			/* first MM seen mapping it */
	bool multi_mm;
};
/*
 * One per pfn mapped: MMs by id, not pointer, keep it small, as the
 * check of a machine with every frame in use holds one per frame beside
 * the memmap.
 */
_Static_assert(sizeof(struct acct) <= 44, "struct acct grew");

/*
 * The accounting is a sparse array indexed by pfn, as SPARSEMEM keeps the
 * memmap: chunks of ACCT_CHUNK_PFNS consecutive pfns, present only where
 * a page table or GUP result names a pfn, found through a small hash
 * table of chunk numbers.  The pages of a folio, and folios allocated one
 * after the other, share a chunk, so the check reads its accounting in
 * the order it walks.  Chunks and hash table are kept from one check to
 * the next and emptied by advancing a generation: a check touches what
 * it meets and nothing else.
 */
#define ACCT_CHUNK_SHIFT	6
#define ACCT_CHUNK_PFNS		(1UL << ACCT_CHUNK_SHIFT)

struct acct_chunk {
	struct acct e[ACCT_CHUNK_PFNS];
};

struct acct_dir_entry {
	unsigned long nr;		/* pfn >> ACCT_CHUNK_SHIFT */
	unsigned int gen;
	struct acct_chunk *chunk;
};

struct acct_table {
	struct acct_dir_entry *dir;	/* open addressing */
	unsigned long dir_size;		/* a power of two */
	unsigned long dir_used;		/* entries of this generation */
	struct acct_chunk **chunks;	/* allocated chunks, reused */
	unsigned long nr_chunks, cap_chunks, chunks_used;
	unsigned int gen;
	unsigned long last_nr;		/* the chunk of the last look-up */
	struct acct_chunk *last;
	bool nomem;			/* the host refused to grow it */
};

/* pb_check() may be called from any thread; one at a time owns the table. */
static pthread_mutex_t check_lock = PTHREAD_MUTEX_INITIALIZER;
static struct acct_table acct_table;
static unsigned long last_visited;

struct checker {
	FILE *report;
	unsigned long violations;
	unsigned long outstanding_pins;	/* pages of live FOLL_PIN results */
	unsigned long huge_zero_pins;	/* of them, pages of the huge zero folio */
	struct acct_table *acct;
	unsigned long tables;		/* reachable table frames */
	unsigned long folio_frames;	/* frames of allocated folios */
	/*
	 * Table entries, GUP pages, folios, pages and TLB entries the check
	 * visited: what its cost follows (check_visited(), for the test that
	 * it is not the size of the machine).
	 */
	unsigned long visited;
};

static inline unsigned long acct_dir_slot(const struct acct_table *t,
					  unsigned long nr)
{
	return (nr * 0x9e3779b97f4a7c15UL) >> (64 - __builtin_ctzl(t->dir_size));
}

/* Empty the table for a new check. */
static bool acct_begin(struct acct_table *t)
{
	unsigned long i;

	if (!t->dir) {
		t->dir = calloc(64, sizeof(*t->dir));
		if (!t->dir)
			return false;
		t->dir_size = 64;
	}
	if (++t->gen == 0) {
		/* Wrapped: no entry may look current. */
		memset(t->dir, 0, t->dir_size * sizeof(*t->dir));
		for (i = 0; i < t->nr_chunks; i++)
			memset(t->chunks[i], 0, sizeof(*t->chunks[i]));
		t->gen = 1;
	}
	t->dir_used = 0;
	t->chunks_used = 0;
	t->last = NULL;
	t->nomem = false;
	return true;
}

/* Double the hash table, moving this generation's entries. */
static bool acct_dir_grow(struct acct_table *t)
{
	struct acct_table n = { .dir_size = 2 * t->dir_size };
	unsigned long i, j;

	n.dir = calloc(n.dir_size, sizeof(*n.dir));
	if (!n.dir)
		return false;
	for (i = 0; i < t->dir_size; i++) {
		if (t->dir[i].gen != t->gen)
			continue;
		for (j = acct_dir_slot(&n, t->dir[i].nr); n.dir[j].gen;
		     j = (j + 1) & (n.dir_size - 1))
			;
		n.dir[j] = t->dir[i];
	}
	free(t->dir);
	t->dir = n.dir;
	t->dir_size = n.dir_size;
	return true;
}

/* A chunk for this check: a kept one, or a new one. */
static struct acct_chunk *acct_chunk_take(struct acct_table *t)
{
	if (t->chunks_used == t->nr_chunks) {
		struct acct_chunk *chunk;

		if (t->nr_chunks == t->cap_chunks) {
			unsigned long cap = t->cap_chunks ? 2 * t->cap_chunks : 16;
			struct acct_chunk **n = realloc(t->chunks, cap * sizeof(*n));

			if (!n)
				return NULL;
			t->chunks = n;
			t->cap_chunks = cap;
		}
		chunk = calloc(1, sizeof(*chunk));	/* gen 0: none current */
		if (!chunk)
			return NULL;
		t->chunks[t->nr_chunks++] = chunk;
	}
	return t->chunks[t->chunks_used++];
}

/* acct_chunk() when @nr is not the chunk of the last look-up. */
static __attribute__((noinline)) struct acct_chunk *
acct_chunk_lookup(struct acct_table *t, unsigned long nr, bool create)
{
	struct acct_dir_entry *d;
	unsigned long i;

	for (i = acct_dir_slot(t, nr);; i = (i + 1) & (t->dir_size - 1)) {
		d = &t->dir[i];
		if (d->gen != t->gen)
			break;
		if (d->nr == nr)
			goto found;
	}
	if (!create)
		return NULL;
	if ((t->dir_used + 1) * 4 > t->dir_size * 3) {
		if (!acct_dir_grow(t))
			return NULL;
		for (i = acct_dir_slot(t, nr); t->dir[i].gen == t->gen;
		     i = (i + 1) & (t->dir_size - 1))
			;
		d = &t->dir[i];
	}
	d->chunk = acct_chunk_take(t);
	if (!d->chunk)
		return NULL;
	d->nr = nr;
	d->gen = t->gen;
	t->dir_used++;
found:
	t->last_nr = nr;
	t->last = d->chunk;
	return d->chunk;
}

/* The chunk holding @pfn; with @create, one is taken if there is none. */
static inline struct acct_chunk *acct_chunk(struct acct_table *t,
					    unsigned long pfn, bool create)
{
	unsigned long nr = pfn >> ACCT_CHUNK_SHIFT;

	if (likely(t->last && t->last_nr == nr))
		return t->last;
	return acct_chunk_lookup(t, nr, create);
}

/* The accounting of @pfn, or NULL when nothing named it. */
static inline struct acct *acct_find(struct acct_table *t, unsigned long pfn)
{
	struct acct_chunk *chunk = acct_chunk(t, pfn, false);
	struct acct *a = chunk ? &chunk->e[pfn & (ACCT_CHUNK_PFNS - 1)] : NULL;

	return a && a->gen == t->gen ? a : NULL;
}

/* The accounting of @pfn, a new zeroed one if nothing named it yet. */
static inline struct acct *acct_get(struct acct_table *t, unsigned long pfn)
{
	static struct acct sink;	/* where a check without memory counts */
	struct acct_chunk *chunk = acct_chunk(t, pfn, true);
	struct acct *a;

	if (unlikely(!chunk)) {
		t->nomem = true;
		memset(&sink, 0, sizeof(sink));
		return &sink;
	}
	a = &chunk->e[pfn & (ACCT_CHUNK_PFNS - 1)];
	if (a->gen != t->gen)
		*a = (struct acct){ .gen = t->gen };
	return a;
}

static void violation(struct checker *c, const char *fmt, ...)
{
	va_list ap;

	c->violations++;
	if (c->violations > 100 || !c->report)
		return;
	fputs("invariant: ", c->report);
	va_start(ap, fmt);
	vfprintf(c->report, fmt, ap);
	va_end(ap);
	fputc('\n', c->report);
}

static void account_map(struct checker *c, struct mm_struct *mm,
			unsigned long pfn, bool pmd)
{
	struct folio *folio = page_folio(pfn_to_page(pfn));
	unsigned long head = folio_pfn(folio);
	struct acct *fa = acct_get(c->acct, head);
	struct acct *pa = pfn == head ? fa : acct_get(c->acct, pfn);

	if (pmd)
		fa->pmd_maps++;
	else
		fa->pte_maps++;
	if (fa->last_mm != mm->mm_id) {
		fa->last_mm = mm->mm_id;
		fa->mms++;
	}
	if (folio->_mm_id[0] == mm->mm_id)
		fa->slot_maps[0]++;
	else if (folio->_mm_id[1] == mm->mm_id)
		fa->slot_maps[1]++;
	if (!pa->mm)
		pa->mm = mm->mm_id;
	else if (pa->mm != mm->mm_id)
		pa->multi_mm = true;
}

/*
 * Checks of one present leaf entry; @pfn is the page it maps.  *@vmap
 * caches the VMA of the entry before, the walk being in address order.
 */
static void check_leaf(struct checker *c, struct mm_struct *mm,
		       struct vm_area_struct **vmap, unsigned long addr,
		       pte_t pte, unsigned long pfn, bool pmd)
{
	struct vm_area_struct *vma = *vmap;
	struct folio *folio;
	uint64_t v = pte_val(pte);

	if (!vma || addr < vma->vm_start || addr >= vma->vm_end)
		vma = *vmap = vma_lookup(mm, addr);
	if (!vma || (pmd && (vma->vm_start > addr || vma->vm_end < addr + PMD_SIZE))) {
		violation(c, "mm %u: entry at %#lx outside every VMA", mm->mm_id, addr);
		return;
	}
	if (pte_write(pte) && !(vma->vm_flags & VM_WRITE))
		violation(c, "mm %u: writable entry at %#lx in a VMA without VM_WRITE",
			  mm->mm_id, addr);
	if (pte_protnone(pte) && pte_write(pte))
		violation(c, "mm %u: writable PROT_NONE entry at %#lx", mm->mm_id, addr);
	if (pte_shstk(pte) && !(vma->vm_flags & VM_SHADOW_STACK))
		violation(c, "mm %u: RW=0/Dirty=1 entry at %#lx outside a shadow stack",
			  mm->mm_id, addr);
#ifdef CONFIG_ARM64
	/* AP[2] clear lets the MMU store: only a writable (DBM) entry may. */
	if (pte_valid(pte) && !pte_rdonly(pte) && !pte_write(pte))
		violation(c, "mm %u: RDONLY clear without PTE_WRITE at %#lx",
			  mm->mm_id, addr);
	(void)v;
#else
	if ((v & _PAGE_RW) && (v & _PAGE_SAVED_DIRTY))
		violation(c, "mm %u: SavedDirty with RW at %#lx", mm->mm_id, addr);
#endif
	if (!pfn_valid(pfn)) {
		violation(c, "mm %u: entry at %#lx maps invalid pfn %#lx",
			  mm->mm_id, addr, pfn);
		return;
	}
	if (is_zero_pfn(pfn) || is_huge_zero_pfn(pfn)) {
		if (!pte_special(pte) || pte_write(pte))
			violation(c, "mm %u: zero page at %#lx is not a read-only special entry",
				  mm->mm_id, addr);
		return;
	}
	if (pte_special(pte)) {
		violation(c, "mm %u: special entry at %#lx is not the zero page",
			  mm->mm_id, addr);
		return;
	}
	folio = page_folio(pfn_to_page(pfn));
	if (folio_ref_count(folio) <= 0 || !folio_test_anon(folio)) {
		violation(c, "mm %u: %#lx maps pfn %#lx of a free or non-anon folio",
			  mm->mm_id, addr, pfn);
		return;
	}
	if (pmd && (folio_order(folio) != HPAGE_PMD_ORDER || pfn != folio_pfn(folio)))
		violation(c, "mm %u: PMD at %#lx does not map a whole PMD-size folio",
			  mm->mm_id, addr);
	if (!pmd && pfn + 1 > folio_pfn(folio) + folio_nr_pages(folio))
		violation(c, "mm %u: %#lx maps outside its folio", mm->mm_id, addr);
	if (pte_write(pte) && !PageAnonExclusive(pfn_to_page(pmd ? folio_pfn(folio) : pfn)))
		violation(c, "mm %u: writable entry at %#lx maps pfn %#lx that is not PageAnonExclusive",
			  mm->mm_id, addr, pfn);
	account_map(c, mm, pfn, pmd);
}

#ifdef ARCH_HAS_CONTPTE
/*
 * A block with one valid contiguous entry is
 * contiguous all through - every entry valid and CONT, the PFNs
 * consecutive from an aligned one inside one folio, the attributes equal
 * apart from access and dirty.  @table maps from @addr.
 */
static void check_contpte_blocks(struct checker *c, struct mm_struct *mm,
				 unsigned long addr, pte_t *table)
{
	unsigned long b, i;

	for (b = 0; b < PTRS_PER_PTE; b += CONT_PTES) {
		pte_t first = __pte(atomic_load(entry_ptr(table + b))), expected;
		unsigned long pfn = pte_pfn(first);
		struct folio *folio;
		bool any = false;

		for (i = 0; i < CONT_PTES && !any; i++)
			any = pte_valid_cont(__pte(atomic_load(entry_ptr(table + b + i))));
		if (!any)
			continue;
		if (!pte_valid_cont(first) || !IS_ALIGNED(pfn, CONT_PTES) ||
		    !pfn_valid(pfn)) {
			violation(c, "mm %u: contiguous block at %#lx does not start"
				  " with a valid contiguous entry at an aligned pfn",
				  mm->mm_id, addr + b * PAGE_SIZE);
			continue;
		}
		folio = page_folio(pfn_to_page(pfn));
		if (folio_pfn(folio) > pfn ||
		    pfn + CONT_PTES > folio_pfn(folio) + folio_nr_pages(folio))
			violation(c, "mm %u: contiguous block at %#lx is not inside"
				  " one folio", mm->mm_id, addr + b * PAGE_SIZE);
		expected = pte_mkold(pte_mkclean(first));
		for (i = 0; i < CONT_PTES; i++) {
			pte_t p = __pte(atomic_load(entry_ptr(table + b + i)));

			if (!pte_same(pte_mkold(pte_mkclean(p)), expected)) {
				violation(c, "mm %u: entry %#llx at %#lx breaks its"
					  " contiguous block", mm->mm_id,
					  (unsigned long long)pte_val(p),
					  addr + (b + i) * PAGE_SIZE);
				break;
			}
			expected = pte_advance_pfn(expected, 1);
		}
	}
}
#endif

static void check_mm(struct mm_struct *mm, void *arg)
{
	struct checker *c = arg;
	unsigned long i, j, k, l, deposits = 0, ptes = 0;
	struct vm_area_struct *vma = NULL;

	c->tables++;	/* the pgd */
	c->visited += PTRS_PER_TABLE;
	for (i = 0; i < PTRS_PER_TABLE; i++) {
		uint64_t pgd = atomic_load(entry_ptr(mm->pgd + i));
		pud_t *pud;

		if (!pgd)
			continue;
		c->tables++;
		c->visited += PTRS_PER_TABLE;
		pud = table_of(pgd);
		for (j = 0; j < PTRS_PER_TABLE; j++) {
			uint64_t pudv = atomic_load(entry_ptr(pud + j));
			pmd_t *pmdt;

			if (!pudv)
				continue;
			c->tables++;
			c->visited += PTRS_PER_TABLE;
			pmdt = table_of(pudv);
			deposits = 0;
			for (l = pfn_to_page(table_entry_pfn(pudv))->pt.pmd_huge_pte; l;
			     l = pfn_to_page(l)->pt.pt_next)
				deposits++;
			c->tables += deposits;
			ptes += deposits;
			for (k = 0; k < PTRS_PER_TABLE; k++) {
				pmd_t pmd = __pmd(atomic_load(entry_ptr(pmdt + k)));
				unsigned long addr = (i << PGDIR_SHIFT) | (j << PUD_SHIFT) |
						     (k << PMD_SHIFT);
				pte_t *pte;
				unsigned long m;

				if (pmd_none(pmd))
					continue;
				if (pmd_leaf(pmd)) {
					check_leaf(c, mm, &vma, addr, pmd_pte(pmd),
						   pmd_pfn(pmd), true);
					continue;
				}
				c->tables++;
				c->visited += PTRS_PER_PTE;
				ptes++;
				pte = table_of(pmd_val(pmd));
				for (m = 0; m < PTRS_PER_PTE; m++) {
					pte_t p = __pte(atomic_load(entry_ptr(pte + m)));

					if (pte_none(p))
						continue;
					if (!pte_present(p)) {
						violation(c, "mm %u: non-present entry %#llx at %#lx",
							  mm->mm_id, (unsigned long long)pte_val(p),
							  addr + (m << PAGE_SHIFT));
						continue;
					}
					check_leaf(c, mm, &vma, addr + (m << PAGE_SHIFT),
						   p, pte_pfn(p), false);
				}
#ifdef ARCH_HAS_CONTPTE
				check_contpte_blocks(c, mm, addr, pte);
#endif
			}
		}
	}
	if (ptes != mm->nr_ptes)
		violation(c, "mm %u: nr_ptes %lu but %lu PTE tables and deposits",
			  mm->mm_id, mm->nr_ptes, ptes);
}

static void account_gup(struct gup_pages *gp, void *arg)
{
	struct checker *c = arg;
	unsigned long i;

	for (i = 0; i < gp->nr; i++) {
		struct page *page = gp->pages[i];
		struct folio *folio = page_folio(page);

		c->visited++;
		/* The 4K zero page is never pinned; no reference is checked. */
		if (is_zero_pfn(folio_pfn(folio)))
			continue;
		/*
		 * The huge zero folio is pinned as any large folio: its pins
		 * are outstanding pins and its _pincount, though its
		 * references (held by every mapping of it) are not checked.
		 */
		if (folio_test_zero(folio)) {
			if (gp->flags & FOLL_PIN) {
				c->huge_zero_pins++;
				c->outstanding_pins++;
			}
			continue;
		}
		if (gp->flags & FOLL_GET) {
			acct_get(c->acct, folio_pfn(folio))->gets++;
			continue;
		}
		acct_get(c->acct, folio_pfn(folio))->pins++;
		c->outstanding_pins++;
		/* sanity_check_pinned_pages(): pinned anon pages stay exclusive */
		if (folio_test_anon(folio) &&
		    !PageAnonExclusive(page) &&
		    !(folio_test_large(folio) && PageAnonExclusive(folio_page(folio, 0))))
			violation(c, "pinned pfn %#lx is not PageAnonExclusive",
				  page_to_pfn(page));
	}
}

/*
 * Unpin symmetry: pins acquired minus pins
 * released is what is still pinned.  Exact when only this thread has
 * pinned since the machine started (other threads' differences are not
 * folded until they cross the threshold).
 */
static void check_pin_stats(struct checker *c)
{
	long acquired, released;

	node_stat_flush();
	acquired = atomic_load(&vm_node_stat[NR_FOLL_PIN_ACQUIRED]);
	released = atomic_load(&vm_node_stat[NR_FOLL_PIN_RELEASED]);
	if (acquired - released != (long)c->outstanding_pins)
		violation(c, "NR_FOLL_PIN_ACQUIRED %ld - NR_FOLL_PIN_RELEASED %ld"
			  " != %lu pages pinned", acquired, released,
			  c->outstanding_pins);
}

/* The huge zero folio's _pincount is the pins held on it. */
static void check_huge_zero_pins(struct checker *c)
{
	struct folio *folio = pfn_folio(machine.huge_zero_pfn);
	int pins = atomic_load_explicit(&folio->_pincount, memory_order_relaxed);

	if (pins != (long)c->huge_zero_pins)
		violation(c, "huge zero folio: _pincount %d, but %lu of its pages"
			  " are pinned", pins, c->huge_zero_pins);
}

static void check_folio(struct checker *c, struct folio *folio)
{
	static const struct acct none;
	unsigned long pfn = folio_pfn(folio), i, nr = folio_nr_pages(folio);
	const struct acct *fa = acct_find(c->acct, pfn) ?: &none;
	long maps = fa->pte_maps + fa->pmd_maps;
	long expect = maps + fa->gets +
		      (folio_has_pincount(folio) ? fa->pins
						 : (long)fa->pins * GUP_PIN_COUNTING_BIAS);
	int ref = folio_ref_count(folio);

	if (ref != expect)
		violation(c, "folio %#lx (order %u): refcount %d, expected %ld "
			  "(%u PTE + %u PMD mappings, %u gets, %u pins)",
			  pfn, folio_order(folio), ref, expect, fa->pte_maps,
			  fa->pmd_maps, fa->gets, fa->pins);
	if (folio_test_large(folio)) {
		if (folio_large_mapcount(folio) != maps)
			violation(c, "folio %#lx: large mapcount %d, %ld mappings",
				  pfn, folio_large_mapcount(folio), maps);
		if (folio_entire_mapcount(folio) != (int)fa->pmd_maps)
			violation(c, "folio %#lx: entire mapcount %d, %u PMD mappings",
				  pfn, folio_entire_mapcount(folio), fa->pmd_maps);
		if (atomic_load(&folio->_pincount) != (int)fa->pins)
			violation(c, "folio %#lx: pincount %d, %u pins", pfn,
				  atomic_load(&folio->_pincount), fa->pins);
		if (fa->mms > 1 && !folio_test(folio, PG_mm_ids_shared))
			violation(c, "folio %#lx: mapped by %u MMs but not maybe-mapped-shared",
				  pfn, fa->mms);
		if (maps && !folio_test(folio, PG_mm_ids_shared)) {
			bool owned = false;
			int s;

			for (s = 0; s < 2; s++)
				if (folio->_mm_id[s] != MM_ID_DUMMY &&
				    folio->_mm_id_mapcount[s] + 1 == maps &&
				    fa->slot_maps[s] == (unsigned int)maps)
					owned = true;
			if (!owned)
				violation(c, "folio %#lx: exclusive but no MM slot owns its %ld mappings",
					  pfn, maps);
		}
	} else if (atomic_load(&folio->_mapcount) + 1 != maps) {
		violation(c, "folio %#lx: mapcount %d, %ld mappings", pfn,
			  atomic_load(&folio->_mapcount) + 1, maps);
	}
	/* Only a mapped folio has pages mapped by two MMs. */
	for (i = 0; maps && i < nr; i++) {
		const struct acct *pa = !i ? fa : acct_find(c->acct, pfn + i) ?: &none;
		struct page *page = pfn_to_page(pfn + i);
		bool pae = PageAnonExclusive(page);

		c->visited++;
		/* PMD-mapped: the head's bit speaks for the folio. */
		if (fa->pmd_maps && i == 0)
			pae = PageAnonExclusive(page);
		if (pae && pa->multi_mm)
			violation(c, "pfn %#lx is PageAnonExclusive but mapped by two MMs",
				  pfn + i);
		if (pae && fa->pmd_maps && i == 0 && fa->mms > 1)
			violation(c, "PMD-mapped folio %#lx is exclusive but mapped by %u MMs",
				  pfn, fa->mms);
	}
}

/* One allocated folio: a folio's head, whose accounting adds up. */
static void check_allocated_folio(struct folio *folio, void *arg)
{
	struct checker *c = arg;
	unsigned long pfn = folio_pfn(folio);
	struct page *page = pfn_to_page(pfn);

	c->visited++;
	c->folio_frames += folio_nr_pages(folio);
	if ((atomic_load_explicit(&page->flags, memory_order_relaxed) &
	     (1UL << PG_buddy | 1UL << PG_table | 1UL << PG_reserved)) ||
	    atomic_load_explicit(&page->compound_head, memory_order_relaxed) != pfn) {
		violation(c, "pfn %#lx is neither free, a folio, a table nor reserved",
			  pfn);
		return;
	}
	check_folio(c, folio);
}

/*
 * Every frame is free, in a folio, a table or reserved: the allocated
 * folios are visited, the other frames counted (page_alloc.c).
 */
static void check_frames(struct checker *c)
{
	struct frame_counts n;
	unsigned long all;

	for_each_allocated_folio(check_allocated_folio, c, &n);
	all = n.free + c->folio_frames + n.tables + n.reserved;
	if (all != machine.nr_frames)
		violation(c, "%lu frames free, %lu in folios, %lu page tables, %lu"
			  " reserved: %lu of %lu frames accounted for", n.free,
			  c->folio_frames, n.tables, n.reserved, all,
			  machine.nr_frames);
	if (n.tables != c->tables)
		violation(c, "%lu page-table frames allocated, %lu reachable",
			  n.tables, c->tables);
}

/*
 * The lazy-free state: MADV_FREE cleaned every PTE of the folio and
 * flushed, so that a store since has set Dirty in a PTE again - which is
 * how reclaim learns the folio was re-dirtied and is no longer lazy-free.
 * A clean PTE of a lazy-free folio must then be clean in every TLB too:
 * a cached dirty translation would let a store through without a walk,
 * and reclaim would discard the data stored.
 */
static bool tlb_maps_lazyfree(unsigned long pfn)
{
	struct folio *folio;

	if (!pfn_valid(pfn) || is_zero_pfn(pfn) || is_huge_zero_pfn(pfn))
		return false;
	folio = page_folio(pfn_to_page(pfn));
	return folio_ref_count(folio) > 0 && folio_test_lazyfree(folio);
}

static void check_tlbs(struct checker *c)
{
	int cpu, i;

	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		struct cpu_tlb *t = &cpu_tlbs[cpu];

		spin_lock(&t->lock);
		if (!t->used) {
			spin_unlock(&t->lock);
			continue;
		}
		c->visited += TLB_ENTRIES;
		for (i = 0; i < TLB_ENTRIES; i++) {
			struct tlb_entry *e = &t->e[i];
			unsigned long addr = e->vpn << PAGE_SHIFT;
			struct addr_lookup found;
			pte_t pte;

			if (!e->mm)
				continue;
			lookup_addr(e->mm, addr, &found);
			pte = found.entry;
			if (!pte_access_permitted(pte, false) || found.pfn != e->pfn)
				violation(c, "CPU %d TLB: stale translation of %#lx (mm %u) to pfn %#lx",
					  cpu, addr, e->mm->mm_id, e->pfn);
			else if (e->writable && !pte_access_permitted(pte, true))
				violation(c, "CPU %d TLB: %#lx (mm %u) writable in the TLB, read-only in the PTE",
					  cpu, addr, e->mm->mm_id);
			else if (e->dirty && !pte_dirty(pte) && tlb_maps_lazyfree(e->pfn))
				violation(c, "CPU %d TLB: %#lx (mm %u) dirty in the TLB, clean in the PTE of a lazy-free folio",
					  cpu, addr, e->mm->mm_id);
		}
		spin_unlock(&t->lock);
	}
}

/* The live mms, for check_tlb_owners(); kept between checks. */
struct mm_set {
	struct mm_struct **mms;
	int nr, cap;
	bool nomem;
};
static struct mm_set live_mms;

static void mm_set_add(struct mm_struct *mm, void *arg)
{
	struct mm_set *set = arg;

	if (set->nr == set->cap) {
		int cap = set->cap ? 2 * set->cap : 16;
		struct mm_struct **n = realloc(set->mms, cap * sizeof(*n));

		if (!n) {
			set->nomem = true;
			return;
		}
		set->mms = n;
		set->cap = cap;
	}
	set->mms[set->nr++] = mm;
}

static bool mm_set_has(const struct mm_set *set, const struct mm_struct *mm)
{
	int i;

	for (i = 0; i < set->nr; i++)
		if (set->mms[i] == mm)
			return true;
	return false;
}

/* A TLB entry of an mm that no longer exists is a missed flush_tlb_mm. */
static void check_tlb_owners(struct checker *c)
{
	struct mm_struct *known = NULL;	/* the owner of the entry before */
	int cpu, i;

	live_mms.nr = 0;
	live_mms.nomem = false;
	mm_registry_for_each(mm_set_add, &live_mms);
	if (live_mms.nomem)
		return;
	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		if (!cpu_tlbs[cpu].used)
			continue;
		c->visited += TLB_ENTRIES;
		for (i = 0; i < TLB_ENTRIES; i++) {
			struct tlb_entry *e = &cpu_tlbs[cpu].e[i];

			if (!e->mm || e->mm == known)
				continue;
			if (mm_set_has(&live_mms, e->mm)) {
				known = e->mm;
				continue;
			}
			violation(c, "CPU %d TLB: entry of an mm that no longer exists",
				  cpu);
			/* don't dereference it in check_tlbs */
			e->mm = NULL;
		}
	}
}

unsigned long pb_check(FILE *report)
{
	struct checker c = { .report = report, .acct = &acct_table };

	pthread_mutex_lock(&check_lock);
	/* The checker's reads of the memmap are not the kernel's. */
	memmap_lines_pause();
	if (!acct_begin(c.acct)) {
		memmap_lines_resume();
		pthread_mutex_unlock(&check_lock);
		if (report)
			fputs("invariant: checker out of host memory\n", report);
		return 1;
	}
	mm_registry_for_each(check_mm, &c);
	gup_for_each_tracked(account_gup, &c);
	check_pin_stats(&c);
	check_huge_zero_pins(&c);
	check_frames(&c);
	check_tlb_owners(&c);
	check_tlbs(&c);
	if (c.acct->nomem) {
		c.violations++;
		if (report)
			fputs("invariant: checker out of host memory\n", report);
	}
	last_visited = c.visited;
	memmap_lines_resume();
	pthread_mutex_unlock(&check_lock);
	if (c.violations > 100 && report)
		fprintf(report, "invariant: ... %lu violations in all\n", c.violations);
	return c.violations;
}

/* What the last pb_check() visited (struct checker's visited). */
unsigned long check_visited(void)
{
	unsigned long n;

	pthread_mutex_lock(&check_lock);
	n = last_visited;
	pthread_mutex_unlock(&check_lock);
	return n;
}
