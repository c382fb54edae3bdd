// SPDX-License-Identifier: GPL-2.0-only
/*
 * rmap.c: anon_vmas, mapcounts, per-MM ownership and PageAnonExclusive
 * bookkeeping (mm/rmap.c, include/linux/rmap.h).
 *
 * Counting rule: each mapping (a PTE, or a PMD of a PMD-mapped folio)
 * holds one folio reference, taken before the mapcount when mapping and
 * dropped after it when unmapping; callers own the references, these
 * functions own the mapcounts.  Large folios track up to two owning MMs
 * (CONFIG_MM_ID) so "maybe mapped shared" can be answered without rmap.
 */
#include <stdlib.h>

#include "mm/internal.h"

/*
 * anon_vmas are reference-counted: one reference per VMA using it (a
 * split or a merge shares it), and a forked one holds its root's.
 */
struct anon_vma *anon_vma_get(struct anon_vma *av)
{
	if (av)
		atomic_fetch_add(&av->refcount, 1);
	return av;
}

void anon_vma_put(struct anon_vma *av)
{
	if (av && atomic_fetch_sub(&av->refcount, 1) == 1) {
		struct anon_vma *root = av->root;

		kfree(av);
		if (root != av)
			anon_vma_put(root);
	}
}

/*
 * The first fault of a VMA gives it an anon_vma, a neighbour's when the
 * two could merge later (find_mergeable_anon_vma()).  The model's anon_vma
 * only decides VMA merging and is what folio->mapping points at; the
 * reverse-map walk itself is not modelled.
 */
int anon_vma_prepare(struct vm_area_struct *vma)
{
	struct mm_struct *mm = vma->vm_mm;
	struct anon_vma *av;

	/* Acquire: pairs with the release below, the anon_vma is ready. */
	if (likely(atomic_load_explicit(&vma->anon_vma, memory_order_acquire)))
		return 0;
	av = anon_vma_get(find_mergeable_anon_vma(vma));
	if (!av) {
		av = kzalloc(sizeof(*av));
		if (!av)
			return -ENOMEM;
		av->root = av;
		atomic_init(&av->refcount, 1);
	}
	/*
	 * __anon_vma_prepare(): faults on the same VMA run side by side under
	 * mmap_lock for read; page_table_lock decides which one's anon_vma
	 * the VMA keeps, the others give theirs back.
	 */
	spin_lock(&mm->page_table_lock);
	if (!atomic_load_explicit(&vma->anon_vma, memory_order_relaxed)) {
		atomic_store_explicit(&vma->anon_vma, av, memory_order_release);
		count_stat(anon_vma_chain);
		av = NULL;
	}
	spin_unlock(&mm->page_table_lock);
	anon_vma_put(av);
	return 0;
}

/*
 * The anon_vma_chain links of a VMA of @av: one to its own anon_vma, one
 * more to the root for a forked one.  The model keeps only the root, so
 * a grandchild's longer chain counts as a child's.
 */
unsigned int anon_vma_chain_len(const struct anon_vma *av)
{
	return !av ? 0 : av->root == av ? 1 : 2;
}

/*
 * anon_vma_fork(): the child's VMA gets its own anon_vma under the root;
 * anon_vma_clone() links it to each anon_vma of the parent's chain, and
 * one more link to its own.
 */
struct anon_vma *anon_vma_fork(struct vm_area_struct *vma)
{
	struct anon_vma *av;

	if (!vma->anon_vma)
		return NULL;
	count_stat_n(anon_vma_chain, anon_vma_chain_len(vma->anon_vma) + 1);
	av = kzalloc(sizeof(*av));
	if (!av)
		return NULL;
	av->root = anon_vma_get(vma->anon_vma->root);
	atomic_init(&av->refcount, 1);
	return av;
}

/* folio_add_return_large_mapcount(): @diff mappings by @vma's MM. */
static void folio_add_large_mapcount(struct folio *folio, int diff,
				     struct vm_area_struct *vma)
{
	const mm_id_t id = vma->vm_mm->mm_id;
	int new;

	spin_lock(&folio->mm_id_lock);
	folio_touch_large(folio);
	count_stat(mapcount_atomic);
	new = atomic_fetch_add_explicit(&folio->_large_mapcount, diff,
					memory_order_relaxed) + diff;
	if (folio->_mm_id[0] == id) {
		folio->_mm_id_mapcount[0] += diff;
	} else if (folio->_mm_id[1] == id) {
		folio->_mm_id_mapcount[1] += diff;
	} else if (folio->_mm_id[0] == MM_ID_DUMMY) {
		folio->_mm_id[0] = id;
		folio->_mm_id_mapcount[0] = diff - 1;
		/* Were there mappings before ours? Then someone else has them. */
		if (new != diff - 1)
			folio_set_flag(folio, PG_mm_ids_shared);
	} else if (folio->_mm_id[1] == MM_ID_DUMMY) {
		folio->_mm_id[1] = id;
		folio->_mm_id_mapcount[1] = diff - 1;
		folio_set_flag(folio, PG_mm_ids_shared);
	} else {
		/* No slot left: a third MM; only the shared bit can say so. */
		folio_set_flag(folio, PG_mm_ids_shared);
	}
	spin_unlock(&folio->mm_id_lock);
}

/* folio_sub_return_large_mapcount(). */
static void folio_sub_large_mapcount(struct folio *folio, int diff,
				     struct vm_area_struct *vma)
{
	const mm_id_t id = vma->vm_mm->mm_id;
	int new, slot = -1;

	spin_lock(&folio->mm_id_lock);
	folio_touch_large(folio);
	count_stat(mapcount_atomic);
	new = atomic_fetch_sub_explicit(&folio->_large_mapcount, diff,
					memory_order_relaxed) - diff;
	if (folio->_mm_id[0] == id)
		slot = 0;
	else if (folio->_mm_id[1] == id)
		slot = 1;
	if (slot >= 0) {
		folio->_mm_id_mapcount[slot] -= diff;
		if (folio->_mm_id_mapcount[slot] >= 0)
			goto out;
		/* Corner cases can underflow a slot: free it at -1. */
		folio->_mm_id_mapcount[slot] = -1;
		folio->_mm_id[slot] = MM_ID_DUMMY;
	}
	/* One slot owning every mapping means exclusive again. */
	if (folio->_mm_id_mapcount[0] == new || folio->_mm_id_mapcount[1] == new)
		folio_clear_flag(folio, PG_mm_ids_shared);
out:
	spin_unlock(&folio->mm_id_lock);
}

static void folio_set_anon_mapping(struct folio *folio,
				   struct vm_area_struct *vma)
{
	atomic_store_explicit(&folio->mapping, vma->anon_vma,
			      memory_order_relaxed);
	folio_set_flag(folio, PG_anon);
}

/*
 * A freshly allocated folio becomes mapped in @vma, every page of it
 * (or, for @pmd_level, the whole folio by one PMD) exclusive to this MM.
 */
void folio_add_new_anon_rmap(struct folio *folio, struct vm_area_struct *vma,
			     bool pmd_level)
{
	unsigned long i, nr = folio_nr_pages(folio);

	folio_set_anon_mapping(folio, vma);
	folio_set_flag(folio, PG_swapbacked);
	if (!folio_test_large(folio)) {
		count_stat(mapcount_atomic);
		folio_touch_head(folio);
		atomic_store_explicit(&folio->_mapcount, 0, memory_order_relaxed);
		SetPageAnonExclusive(folio_page(folio, 0));
		return;
	}
	if (pmd_level) {
		folio_touch_large(folio);
		atomic_store_explicit(&folio->_entire_mapcount, 0,
				      memory_order_relaxed);
		folio_add_large_mapcount(folio, 1, vma);
		/* PMD-mapped: PageAnonExclusive lives on the head page. */
		SetPageAnonExclusive(folio_page(folio, 0));
		return;
	}
	folio_add_large_mapcount(folio, (int)nr, vma);
	for (i = 0; i < nr; i++)
		SetPageAnonExclusive(folio_page(folio, i));
}

/* Map @nr pages from @page of an anon folio that already has a mapping. */
void folio_add_anon_rmap_ptes(struct folio *folio, struct page *page, int nr,
			      struct vm_area_struct *vma, int flags)
{
	int i;

	if (folio_test_large(folio)) {
		folio_add_large_mapcount(folio, nr, vma);
	} else {
		count_stat(mapcount_atomic);
		folio_touch_head(folio);
		atomic_fetch_add_explicit(&folio->_mapcount, nr,
					  memory_order_relaxed);
	}
	if (flags & RMAP_EXCLUSIVE)
		for (i = 0; i < nr; i++)
			SetPageAnonExclusive(page + i);
}

/*
 * fork: duplicate the mappings of @nr pages into @dst_vma.  If the folio
 * may be pinned and any page is exclusive, fail with -EBUSY without
 * changing anything: the caller must copy instead - once shared, the
 * parent's next write would copy the page, and the pinned page would no
 * longer be the one the parent maps.
 */
int folio_try_dup_anon_rmap_ptes(struct folio *folio, struct page *page,
				 int nr, struct vm_area_struct *dst_vma,
				 struct vm_area_struct *src_vma)
{
	bool maybe_pinned = atomic_load(&src_vma->vm_mm->has_pinned) &&
			    folio_maybe_dma_pinned(folio);
	int i;

	if (maybe_pinned)
		for (i = 0; i < nr; i++)
			if (PageAnonExclusive(page + i))
				return -EBUSY;
	for (i = 0; i < nr; i++)
		ClearPageAnonExclusive(page + i);
	if (folio_test_large(folio)) {
		folio_add_large_mapcount(folio, nr, dst_vma);
	} else {
		count_stat(mapcount_atomic);
		folio_touch_head(folio);
		atomic_fetch_add_explicit(&folio->_mapcount, nr,
					  memory_order_relaxed);
	}
	return 0;
}

int folio_try_dup_anon_rmap_pmd(struct folio *folio,
				struct vm_area_struct *dst_vma,
				struct vm_area_struct *src_vma)
{
	struct page *head = folio_page(folio, 0);

	if (atomic_load(&src_vma->vm_mm->has_pinned) &&
	    folio_maybe_dma_pinned(folio) && PageAnonExclusive(head))
		return -EBUSY;
	ClearPageAnonExclusive(head);
	count_stat(mapcount_atomic);
	folio_touch_large(folio);
	atomic_fetch_add_explicit(&folio->_entire_mapcount, 1,
				  memory_order_relaxed);
	folio_add_large_mapcount(folio, 1, dst_vma);
	return 0;
}

/* Unmap @nr PTE mappings; PageAnonExclusive stays until the free. */
void folio_remove_rmap_ptes(struct folio *folio, struct page *page, int nr,
			    struct vm_area_struct *vma)
{
	(void)page;
	if (folio_test_large(folio)) {
		folio_sub_large_mapcount(folio, nr, vma);
		return;
	}
	count_stat(mapcount_atomic);
	folio_touch_head(folio);
	atomic_fetch_sub_explicit(&folio->_mapcount, nr, memory_order_relaxed);
}

void folio_remove_rmap_pmd(struct folio *folio, struct vm_area_struct *vma)
{
	count_stat(mapcount_atomic);
	folio_touch_large(folio);
	atomic_fetch_sub_explicit(&folio->_entire_mapcount, 1,
				  memory_order_relaxed);
	folio_sub_large_mapcount(folio, 1, vma);
}
