/*
 * check.c: the invariant checker (pb_check).  It reads all model state
 * and writes none of it (but for forgetting a TLB entry of a dead mm once
 * reported): every page table of every live mm, every
 * outstanding GUP result, every TLB and the memmap, and reports each
 * violation of these invariants:
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
 *    of an mm that no longer exists;
 *  - frames neither free, nor in a folio, nor in a reachable page table.
 */
#include <stdarg.h>
#include <stdlib.h>

#include "mm/pgtable.h"
#include "mm/tlb.h"

struct folio_acct {
	unsigned int pte_maps, pmd_maps, gets, pins;
	unsigned int mms;		/* distinct MMs mapping it */
	struct mm_struct *last_mm;
	unsigned int slot_maps[2];	/* mappings by the MMs in _mm_id[] */
};

struct page_acct {
	unsigned int maps;
	struct mm_struct *mm;		/* first MM seen mapping it */
	bool multi_mm;
};

struct checker {
	FILE *report;
	unsigned long violations;
	unsigned long outstanding_pins;	/* pages of live FOLL_PIN results */
	struct folio_acct *folios;	/* indexed by head pfn */
	struct page_acct *pages;	/* indexed by pfn */
	unsigned long tables;		/* reachable table frames */
};

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
	struct folio_acct *fa = &c->folios[folio_pfn(folio)];
	struct page_acct *pa = &c->pages[pfn];

	if (pmd)
		fa->pmd_maps++;
	else
		fa->pte_maps++;
	if (fa->last_mm != mm) {
		fa->last_mm = mm;
		fa->mms++;
	}
	if (folio->_mm_id[0] == mm->mm_id)
		fa->slot_maps[0]++;
	else if (folio->_mm_id[1] == mm->mm_id)
		fa->slot_maps[1]++;
	pa->maps++;
	if (!pa->mm)
		pa->mm = mm;
	else if (pa->mm != mm)
		pa->multi_mm = true;
}

/* Checks of one present leaf entry; @pfn is the page it maps. */
static void check_leaf(struct checker *c, struct mm_struct *mm,
		       unsigned long addr, pte_t pte, unsigned long pfn,
		       bool pmd)
{
	struct vm_area_struct *vma = vma_lookup(mm, addr);
	struct folio *folio;
	uint64_t v = pte_val(pte);

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

	c->tables++;	/* the pgd */
	for (i = 0; i < PTRS_PER_TABLE; i++) {
		uint64_t pgd = atomic_load(entry_ptr(mm->pgd + i));
		pud_t *pud;

		if (!pgd)
			continue;
		c->tables++;
		pud = table_of(pgd);
		for (j = 0; j < PTRS_PER_TABLE; j++) {
			uint64_t pudv = atomic_load(entry_ptr(pud + j));
			pmd_t *pmdt;

			if (!pudv)
				continue;
			c->tables++;
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
					check_leaf(c, mm, addr, pmd_pte(pmd), pmd_pfn(pmd), true);
					continue;
				}
				c->tables++;
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
					check_leaf(c, mm, addr + (m << PAGE_SHIFT), p,
						   pte_pfn(p), false);
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
		struct folio_acct *fa = &c->folios[folio_pfn(folio)];

		if (gp->flags & FOLL_GET) {
			fa->gets++;
			continue;
		}
		if (folio_test_zero(folio))
			continue;
		fa->pins++;
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

static void check_folio(struct checker *c, struct folio *folio)
{
	unsigned long pfn = folio_pfn(folio), i, nr = folio_nr_pages(folio);
	struct folio_acct *fa = &c->folios[pfn];
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
	for (i = 0; i < nr; i++) {
		struct page_acct *pa = &c->pages[pfn + i];
		struct page *page = pfn_to_page(pfn + i);
		bool pae = PageAnonExclusive(page);

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

/* Walk the memmap: every frame is free, in a folio, a table or reserved. */
static void check_memmap(struct checker *c)
{
	unsigned long pfn = 0, tables = 0;

	while (pfn < machine.nr_frames) {
		struct page *page = pfn_to_page(pfn);

		if (PageFlag(page, PG_buddy)) {
			pfn += 1UL << page->buddy.order;
			continue;
		}
		if (PageFlag(page, PG_table)) {
			tables++;
			pfn++;
			continue;
		}
		if (PageFlag(page, PG_reserved)) {
			pfn++;
			continue;
		}
		if (atomic_load_explicit(&page->compound_head,
					 memory_order_relaxed) != pfn) {
			violation(c, "pfn %#lx is neither free, a folio, a table nor reserved",
				  pfn);
			pfn++;
			continue;
		}
		if (!folio_test_zero(pfn_folio(pfn)))
			check_folio(c, pfn_folio(pfn));
		pfn += folio_nr_pages(pfn_folio(pfn));
	}
	if (tables != c->tables)
		violation(c, "%lu page-table frames allocated, %lu reachable",
			  tables, c->tables);
}

static void check_tlbs(struct checker *c)
{
	int cpu, i;

	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		struct cpu_tlb *t = &cpu_tlbs[cpu];

		spin_lock(&t->lock);
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
		}
		spin_unlock(&t->lock);
	}
}

static void tlb_mm_known(struct mm_struct *mm, void *arg)
{
	struct mm_struct **mms = arg;
	int i;

	for (i = 0; i < NR_CPUS * TLB_ENTRIES; i++)
		if (mms[i] == mm)
			mms[i] = NULL;
}

/* A TLB entry of an mm that no longer exists is a missed flush_tlb_mm. */
static void check_tlb_owners(struct checker *c)
{
	struct mm_struct **mms = calloc(NR_CPUS * TLB_ENTRIES, sizeof(*mms));
	int cpu, i;

	if (!mms)
		return;
	for (cpu = 0; cpu < NR_CPUS; cpu++)
		for (i = 0; i < TLB_ENTRIES; i++)
			mms[cpu * TLB_ENTRIES + i] = cpu_tlbs[cpu].e[i].mm;
	mm_registry_for_each(tlb_mm_known, mms);
	for (i = 0; i < NR_CPUS * TLB_ENTRIES; i++) {
		if (mms[i]) {
			violation(c, "CPU %d TLB: entry of an mm that no longer exists",
				  i / TLB_ENTRIES);
			/* don't dereference it in check_tlbs */
			cpu_tlbs[i / TLB_ENTRIES].e[i % TLB_ENTRIES].mm = NULL;
		}
	}
	free(mms);
}

unsigned long pb_check(FILE *report)
{
	struct checker c = { .report = report };

	c.folios = calloc(machine.nr_frames, sizeof(*c.folios));
	c.pages = calloc(machine.nr_frames, sizeof(*c.pages));
	if (!c.folios || !c.pages) {
		free(c.folios);
		free(c.pages);
		if (report)
			fputs("invariant: checker out of host memory\n", report);
		return 1;
	}
	mm_registry_for_each(check_mm, &c);
	gup_for_each_tracked(account_gup, &c);
	check_pin_stats(&c);
	check_memmap(&c);
	check_tlb_owners(&c);
	check_tlbs(&c);
	free(c.folios);
	free(c.pages);
	if (c.violations > 100 && report)
		fprintf(report, "invariant: ... %lu violations in all\n", c.violations);
	return c.violations;
}
