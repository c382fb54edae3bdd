// SPDX-License-Identifier: GPL-2.0-only
/*
 * page_alloc.c: the memmap, the frames and the buddy allocator.
 *
 * The memmap (struct page per frame), the folio metadata array and the
 * frames are reserved once with MAP_NORESERVE and never freed, so an idle
 * model costs nothing and a stale pointer to a freed folio is still valid
 * memory (the property GUP-fast's speculative reference relies on).  A
 * frame costs host memory only once written: a page table's entries, or
 * the few data pages whose contents need a whole frame (page_data.c).  Free memory is kept in naturally aligned blocks of order
 * 0..MAX_PAGE_ORDER; running out is -ENOMEM for the caller, never a crash.
 *
 * Besides the kernel's state, the allocator keeps the model's own
 * bookkeeping for the invariant checker: every allocated folio on one
 * list and the number of page-table frames handed out, so that pb_check()
 * visits the frames in use instead of walking the whole memmap (the
 * kernel has neither; page_owner and /proc/kpageflags walk every pfn).
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "mm/internal.h"

struct machine machine;

static spinlock_t zone_lock;
static unsigned long free_list[MAX_PAGE_ORDER + 1];	/* head pfn, 0 = empty */
static unsigned long nr_free;
/* The model's own, for pb_check(): see the top comment. */
static unsigned long allocated_folios;	/* head pfn, 0 = empty */
static unsigned long nr_table_frames;
static unsigned long nr_reserved;	/* never handed out */
/*
 * CONFIG_DEFERRED_STRUCT_PAGE_INIT: the MAX_PAGE_ORDER blocks from
 * 2 * HPAGE_PMD_NR up to here are free but on no list, their struct pages
 * never written: a 256G machine would otherwise write one host page of
 * memmap per block at boot.  deferred_grow_zone() hands out the highest
 * when the lists have no block, the one the list, filled in ascending
 * order at boot, would have had at its head: the same pfns, in the same
 * order, as a memmap set up at once.
 */
static unsigned long deferred_init_end;
/*
 * The model's own, for a checkpoint (checkpoint.c): every struct page of
 * the first block (below MEMMAP_LOW_LIMIT) that the allocator has
 * written since boot lies below this - a free block's head, a block
 * handed out - so a checkpoint copies that much of the memmap and no
 * more; above it, up to the huge zero folio, the memmap is untouched.
 */
static unsigned long low_end;

/*
 * Also for checkpoint.c: the blocks handed out since the log was last
 * reset (at a checkpoint's save or restore), so that a restore can copy
 * back only what may have been written since.  Every write to a struct
 * page or folio of a frame that was free then lands in such a block (or
 * on a free block's head, which the checkpoint knows).  More than
 * ALLOC_LOG_MAX: overflowed, the restore copies everything.
 */
static struct alloc_log_entry alloc_log[ALLOC_LOG_MAX];
static unsigned int nr_alloc_log;

static void alloc_log_add(unsigned long pfn, unsigned int order)
{
	if (nr_alloc_log < ALLOC_LOG_MAX)
		alloc_log[nr_alloc_log] =
			(struct alloc_log_entry){ pfn, 1UL << order };
	if (nr_alloc_log <= ALLOC_LOG_MAX)
		nr_alloc_log++;
}

const struct alloc_log_entry *alloc_log_read(unsigned int *nr)
{
	*nr = nr_alloc_log;
	return alloc_log;
}

void alloc_log_reset(void)
{
	nr_alloc_log = 0;
}

static void note_low_write(unsigned long pfn, unsigned long nr)
{
	if (pfn < MEMMAP_LOW_LIMIT && pfn + nr > low_end)
		low_end = min(pfn + nr, (unsigned long)MEMMAP_LOW_LIMIT);
}

static void prep_folio(unsigned long pfn, unsigned int order);

static void *reserve(unsigned long bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	/*
	 * The memmap is touched sparsely (a block's entries when the block
	 * is first handed out, a table's frame when it is allocated): on a
	 * host whose THP setting is "always" each touch would take a 2M
	 * page, and the model's host memory would follow the host's
	 * setting (a kernel-backend run sets it) instead of what is in use.
	 */
	madvise(p, bytes, MADV_NOHUGEPAGE);
	return p;
}

static void list_add_block(unsigned long pfn, unsigned int order)
{
	struct page *page = pfn_to_page(pfn);
	unsigned long head = free_list[order];

	note_low_write(pfn, 1);
	page->buddy.order = order;
	page->buddy.prev = 0;
	page->buddy.next = head;
	if (head)
		pfn_to_page(head)->buddy.prev = pfn;
	free_list[order] = pfn;
	raw_SetPageFlag(page, PG_buddy);
}

static void list_del_block(unsigned long pfn, unsigned int order)
{
	struct page *page = pfn_to_page(pfn);

	if (page->buddy.prev)
		pfn_to_page(page->buddy.prev)->buddy.next = page->buddy.next;
	else
		free_list[order] = page->buddy.next;
	if (page->buddy.next)
		pfn_to_page(page->buddy.next)->buddy.prev = page->buddy.prev;
	raw_ClearPageFlag(page, PG_buddy);
}

/* Under zone_lock: @pfn, a folio's head, joins or leaves allocated_folios. */
static void folio_list_add(unsigned long pfn)
{
	struct page *page = pfn_to_page(pfn);
	unsigned long head = allocated_folios;

	page->folio_list.prev = 0;
	page->folio_list.next = head;
	if (head)
		pfn_to_page(head)->folio_list.prev = pfn;
	allocated_folios = pfn;
}

static void folio_list_del(unsigned long pfn)
{
	struct page *page = pfn_to_page(pfn);

	if (page->folio_list.prev)
		pfn_to_page(page->folio_list.prev)->folio_list.next =
			page->folio_list.next;
	else
		allocated_folios = page->folio_list.next;
	if (page->folio_list.next)
		pfn_to_page(page->folio_list.next)->folio_list.prev =
			page->folio_list.prev;
}

static bool page_is_buddy(unsigned long pfn, unsigned int order)
{
	struct page *page = pfn_to_page(pfn);

	return pfn < machine.nr_frames && raw_PageFlag(page, PG_buddy) &&
	       page->buddy.order == order;
}

/* Free a naturally aligned block, merging with free buddies. */
static void __free_block(unsigned long pfn, unsigned int order)
{
	nr_free += 1UL << order;
	while (order < MAX_PAGE_ORDER) {
		unsigned long buddy = pfn ^ (1UL << order);

		if (!page_is_buddy(buddy, order))
			break;
		list_del_block(buddy, order);
		pfn = min(pfn, buddy);
		order++;
	}
	list_add_block(pfn, order);
}

/* Under zone_lock: the next block never handed out, 0 when none is left. */
static unsigned long deferred_grow_zone(void)
{
	if (deferred_init_end <= 2 * HPAGE_PMD_NR)
		return 0;
	deferred_init_end -= HPAGE_PMD_NR;
	return deferred_init_end;
}

static unsigned long __alloc_block(unsigned int order)
{
	unsigned int o;
	unsigned long pfn;

	for (o = order; o <= MAX_PAGE_ORDER; o++)
		if (free_list[o])
			break;
	if (o <= MAX_PAGE_ORDER) {
		pfn = free_list[o];
		list_del_block(pfn, o);
	} else {
		pfn = deferred_grow_zone();
		if (!pfn)
			return 0;
		o = MAX_PAGE_ORDER;
	}
	alloc_log_add(pfn, o);
	/* Split, returning the upper halves. */
	while (o > order) {
		o--;
		list_add_block(pfn + (1UL << o), o);
	}
	nr_free -= 1UL << order;
	note_low_write(pfn, 1UL << order);
	return pfn;
}

int memmap_init(unsigned long bytes)
{
	unsigned long nr = bytes >> PAGE_SHIFT, pfn;

	nr = ALIGN_DOWN(nr, HPAGE_PMD_NR);
	if (nr < 4 * HPAGE_PMD_NR)
		return -EINVAL;
	machine.mem_map = reserve(nr * sizeof(struct page));
	machine.folio_map = reserve(nr * sizeof(struct folio));
	machine.frames = reserve(nr << PAGE_SHIFT);
	if (!machine.mem_map || !machine.folio_map || !machine.frames) {
		memmap_exit();
		return -ENOMEM;
	}
	machine.nr_frames = nr;
	spin_lock_init(&zone_lock);
	memset(free_list, 0, sizeof(free_list));
	nr_free = 0;
	allocated_folios = 0;
	nr_table_frames = 0;
	nr_alloc_log = 0;
	low_end = 2;	/* pfn 0 and the zero page */
	/*
	 * The first block holds pfn 0 (never handed out, so 0 can mean
	 * "none") and the zero page; the second is the huge zero folio.
	 * Untouched MAP_NORESERVE memory reads as zeroes, so their contents
	 * (page->data, page_data.c) need no clearing.  The blocks above are
	 * free, their memmap untouched until handed out.
	 */
	deferred_init_end = nr;
	nr_free = nr - 2 * HPAGE_PMD_NR;
	for (pfn = 2; pfn < HPAGE_PMD_NR; pfn++)
		__free_block(pfn, 0);
	nr_reserved = nr - nr_free;
	raw_SetPageFlag(pfn_to_page(0), PG_reserved);
	machine.zero_pfn = 1;
	prep_folio(machine.zero_pfn, 0);
	folio_set_flag(pfn_folio(machine.zero_pfn), PG_zero);
	machine.huge_zero_pfn = HPAGE_PMD_NR;
	prep_folio(machine.huge_zero_pfn, HPAGE_PMD_ORDER);
	folio_set_flag(pfn_folio(machine.huge_zero_pfn), PG_zero);
	return 0;
}

void memmap_exit(void)
{
	if (machine.mem_map)
		munmap(machine.mem_map, machine.nr_frames * sizeof(struct page));
	if (machine.folio_map)
		munmap(machine.folio_map, machine.nr_frames * sizeof(struct folio));
	if (machine.frames)
		munmap(machine.frames, machine.nr_frames << PAGE_SHIFT);
	machine.mem_map = NULL;
	machine.folio_map = NULL;
	machine.frames = NULL;
	machine.nr_frames = 0;
}

/* At a quiescent point: the globals above, for checkpoint.c. */
void page_alloc_save(struct page_alloc_state *st)
{
	memcpy(st->free_list, free_list, sizeof(free_list));
	st->nr_free = nr_free;
	st->allocated_folios = allocated_folios;
	st->nr_table_frames = nr_table_frames;
	st->nr_reserved = nr_reserved;
	st->deferred_init_end = deferred_init_end;
	st->low_end = low_end;
}

void page_alloc_restore(const struct page_alloc_state *st)
{
	memcpy(free_list, st->free_list, sizeof(free_list));
	nr_free = st->nr_free;
	allocated_folios = st->allocated_folios;
	nr_table_frames = st->nr_table_frames;
	nr_reserved = st->nr_reserved;
	deferred_init_end = st->deferred_init_end;
	low_end = st->low_end;
}

unsigned long nr_free_frames(void)
{
	unsigned long n;

	spin_lock(&zone_lock);
	n = nr_free;
	spin_unlock(&zone_lock);
	return n;
}

/*
 * The fields a new folio of @order starts with besides its flags, mapping
 * and _mapcount (which a fresh allocation and a split set differently):
 * no large mapcount, no entire mapping, no pins, no MM ids.
 */
void folio_reset_fields(struct folio *folio, unsigned int order)
{
	folio_touch_head(folio);
	if (order)
		folio_touch_large(folio);
	atomic_store_explicit(&folio->order, order, memory_order_relaxed);
	atomic_store_explicit(&folio->_large_mapcount, -1, memory_order_relaxed);
	atomic_store_explicit(&folio->_entire_mapcount, -1, memory_order_relaxed);
	atomic_store_explicit(&folio->_pincount, 0, memory_order_relaxed);
	spin_lock_init(&folio->mm_id_lock);
	folio->_mm_id[0] = folio->_mm_id[1] = MM_ID_DUMMY;
	folio->_mm_id_mapcount[0] = folio->_mm_id_mapcount[1] = -1;
}

/* prep_compound_page + the folio fields a fresh allocation starts with. */
static void prep_folio(unsigned long pfn, unsigned int order)
{
	struct folio *folio = pfn_folio(pfn);
	unsigned long i, nr = 1UL << order;

	for (i = 0; i < nr; i++) {
		struct page *page = pfn_to_page(pfn + i);

		memmap_touch(pfn + i);
		atomic_store_explicit(&page->flags, !order ? 0 :
				      i ? 1UL << PG_tail : 1UL << PG_head,
				      memory_order_relaxed);
		atomic_store_explicit(&page->compound_head, pfn,
				      memory_order_relaxed);
	}
	atomic_store_explicit(&folio->flags, 0, memory_order_relaxed);
	atomic_store_explicit(&folio->mapping, NULL, memory_order_relaxed);
	atomic_store_explicit(&folio->_mapcount, -1, memory_order_relaxed);
	folio_reset_fields(folio, order);
	/*
	 * Publish last: a speculative folio_ref_try_add() that sees the new
	 * refcount also sees the fields above (set_page_refcounted).
	 */
	atomic_store_explicit(&folio->_refcount, 1, memory_order_release);
}

/* A folio of 2^order frames with refcount 1; contents are not cleared. */
struct folio *folio_alloc(unsigned int order)
{
	unsigned long pfn;

	spin_lock(&zone_lock);
	pfn = __alloc_block(order);
	if (pfn)
		folio_list_add(pfn);
	spin_unlock(&zone_lock);
	if (!pfn) {
		/* A larger order has a smaller one to fall back to; 0 has none. */
		if (!order)
			count_stat(alloc_fail);
		return NULL;
	}
	prep_folio(pfn, order);
	count_stat(folio_alloc);
	count_stat_n(folio_alloc_pages, 1UL << order);
	return pfn_folio(pfn);
}

/*
 * split_folio()'s half in the model's own bookkeeping: the @nr - 1 pages
 * after @head, now folios of their own, join the allocated list.
 */
void folio_list_add_split(unsigned long head, unsigned long nr)
{
	unsigned long i;

	spin_lock(&zone_lock);
	for (i = 1; i < nr; i++)
		folio_list_add(head + i);
	spin_unlock(&zone_lock);
}

/* Called when the last reference goes: back to the buddy allocator. */
static void free_folio(struct folio *folio)
{
	unsigned long pfn = folio_pfn(folio), i, nr = folio_nr_pages(folio);

	count_stat(folio_free);
	count_stat_n(folio_free_pages, nr);
	if (nr > 1)
		count_stat(folio_free_large);
	/* free_pages_prepare(): every page's struct page is cleared. */
	for (i = 0; i < nr; i++) {
		memmap_touch(pfn + i);
		atomic_store_explicit(&pfn_to_page(pfn + i)->flags, 0,
				      memory_order_relaxed);
	}
	atomic_store_explicit(&folio->mapping, NULL, memory_order_relaxed);
	atomic_store_explicit(&folio->flags, 0, memory_order_relaxed);
	spin_lock(&zone_lock);
	folio_list_del(pfn);
	__free_block(pfn, raw_folio_order(folio));
	spin_unlock(&zone_lock);
}

void folio_put_refs(struct folio *folio, int refs)
{
	int old;

	count_stat(folio_ref_atomic);
	/*
	 * folio_put_testzero()'s atomic_sub_and_test() is fully ordered:
	 * release for our accesses to the folio, acquire for whoever frees.
	 */
	old = atomic_fetch_sub_explicit(&folio->_refcount, refs,
					memory_order_acq_rel);
	if (old == refs)
		free_folio(folio);
}

unsigned long alloc_table_frame(void)
{
	unsigned long pfn;
	struct page *page;

	spin_lock(&zone_lock);
	pfn = __alloc_block(0);
	if (pfn)
		nr_table_frames++;
	spin_unlock(&zone_lock);
	if (!pfn) {
		count_stat(alloc_fail);
		return 0;
	}
	count_stat(pgtable_alloc);
	page = pfn_to_page(pfn);
	atomic_store_explicit(&page->flags, 1UL << PG_table, memory_order_relaxed);
	atomic_store_explicit(&page->compound_head, pfn, memory_order_relaxed);
	spin_lock_init(&page->pt.ptl);
	page->pt.pmd_huge_pte = 0;
	page->pt.pt_level = 0;		/* unlabelled until linked (hooks) */
	page->pt.pt_next = 0;
	memset(pfn_address(pfn), 0, PAGE_SIZE);
	return pfn;
}

void free_table_frame(unsigned long pfn)
{
	count_stat(pgtable_free);
	atomic_store_explicit(&pfn_to_page(pfn)->flags, 0, memory_order_relaxed);
	spin_lock(&zone_lock);
	nr_table_frames--;
	__free_block(pfn, 0);
	spin_unlock(&zone_lock);
}

/*
 * For pb_check(), at a quiescent point: @fn on every allocated folio
 * (the zero folios were never allocated: they count as reserved), and in
 * @counts the frames in no allocated folio, all under the zone lock so
 * that they add up.
 */
void for_each_allocated_folio(void (*fn)(struct folio *folio, void *arg),
			      void *arg, struct frame_counts *counts)
{
	unsigned long pfn;

	spin_lock(&zone_lock);
	for (pfn = allocated_folios; pfn; pfn = pfn_to_page(pfn)->folio_list.next)
		fn(pfn_folio(pfn), arg);
	counts->free = nr_free;
	counts->tables = nr_table_frames;
	counts->reserved = nr_reserved;
	spin_unlock(&zone_lock);
}
