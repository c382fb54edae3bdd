// SPDX-License-Identifier: GPL-2.0-only
/*
 * page_data.c: the contents of data pages, kept at the cost of what was
 * written to them.
 *
 * Every store the model's programs make lands on a page's first byte
 * (scenario offsets and strides are page multiples), and a direct-I/O
 * read fills whole pages with one value.  So a data page's contents are
 * two bytes in its struct page: the first byte and the value of all the
 * others (page->data).  Only a store that this form cannot hold (another
 * byte, another value: the tests' "device" writing through a pin) gives
 * the page its frame in machine.frames: it is materialized, filled from
 * the two bytes, and PG_data_full says the frame is the contents from
 * then on.  A page in compact form never touches machine.frames, so the
 * host pays for a frame only where one was needed, and a simulated 64G
 * costs its memmap, not 64G.  Page-table pages are not data pages: their
 * frames are their entries (alloc_table_frame() clears them).
 *
 * Each function reads or writes exactly the bytes a real page would:
 * the form is invisible to every caller, so records and checks are those
 * of full frames.
 *
 * Concurrency: the simulated CPUs store into one page from several
 * threads, and fork may copy a pinned page while another thread stores
 * into it.  Writers of a page's contents take PG_data_lock, a bit
 * spinlock in page->flags, so that a store and a materialization do not
 * lose each other; readers take no lock: they ask PG_data_full with
 * acquire, which pairs with the release that sets or clears it, and read
 * that form's bytes with relaxed loads - a read racing a store gets
 * either byte, as a CPU would.
 */
#include "mm/internal.h"

#if defined(__SANITIZE_THREAD__)
#define PB_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PB_TSAN 1
#endif
#endif

/* include/linux/wordpart.h */
#define REPEAT_BYTE(x)	((~0UL / 0xff) * (x))

static inline bool page_data_full(const struct page *page)
{
	/* Pairs with page_data_publish(): the frame, or the two bytes. */
	return atomic_load_explicit(&((struct page *)page)->flags,
				    memory_order_acquire) &
	       (1UL << PG_data_full);
}

static void page_data_lock(struct page *page)
{
	while (atomic_fetch_or_explicit(&page->flags, 1UL << PG_data_lock,
					memory_order_acquire) &
	       (1UL << PG_data_lock))
		while (raw_PageFlag(page, PG_data_lock))
			cpu_relax();
}

static void page_data_unlock(struct page *page)
{
	atomic_fetch_and_explicit(&page->flags, ~(1UL << PG_data_lock),
				  memory_order_release);
}

/*
 * Under ThreadSanitizer, the frame is read and written with relaxed word
 * accesses: a reader that saw PG_data_full may still be reading when the
 * page is filled again, and fork may copy a pinned page while another
 * thread of the process stores into it through its TLB - races Linux
 * accepts (either byte), like the simulated CPU's own relaxed byte
 * accesses.  Elsewhere the plain string functions do the same.
 */
static void frame_set(void *to, uint8_t val)
{
#ifdef PB_TSAN
	uint64_t *d = to;
	unsigned long i;

	for (i = 0; i < PAGE_SIZE / sizeof(uint64_t); i++)
		__atomic_store_n(d + i, REPEAT_BYTE(val), __ATOMIC_RELAXED);
#else
	memset(to, val, PAGE_SIZE);
#endif
}

static void frame_copy(void *to, const void *from)
{
#ifdef PB_TSAN
	const uint64_t *s = from;
	uint64_t *d = to;
	unsigned long i;

	for (i = 0; i < PAGE_SIZE / sizeof(uint64_t); i++)
		__atomic_store_n(d + i, __atomic_load_n(s + i, __ATOMIC_RELAXED),
				 __ATOMIC_RELAXED);
#else
	memcpy(to, from, PAGE_SIZE);
#endif
}

static void frame_read(void *to, const void *from, size_t len)
{
#ifdef PB_TSAN
	const uint8_t *s = from;
	uint8_t *d = to;
	size_t i;

	for (i = 0; i < len; i++)
		d[i] = __atomic_load_n(s + i, __ATOMIC_RELAXED);
#else
	memcpy(to, from, len);
#endif
}

/*
 * Switch the page's form: the bytes of the new form are written before,
 * so a reader that sees the flag (acquire) sees them.
 */
static void page_data_publish(struct page *page, bool full)
{
	if (full)
		atomic_fetch_or_explicit(&page->flags, 1UL << PG_data_full,
					 memory_order_release);
	else if (raw_PageFlag(page, PG_data_full))
		atomic_fetch_and_explicit(&page->flags, ~(1UL << PG_data_full),
					  memory_order_release);
}

/* The whole page in compact form: @first, then @rest everywhere else. */
static void page_data_set(struct page *page, uint8_t first, uint8_t rest)
{
	atomic_store_explicit(&page->data.first, first, memory_order_relaxed);
	atomic_store_explicit(&page->data.rest, rest, memory_order_relaxed);
	page_data_publish(page, false);
}

/*
 * Under PG_data_lock, a compact page: give it its frame.  The rare case
 * (no scenario statement needs it), so out of line.
 */
static __attribute__((noinline)) void page_data_materialize(struct page *page)
{
	uint8_t *p = page_address(page);

	frame_set(p, atomic_load_explicit(&page->data.rest,
					  memory_order_relaxed));
	__atomic_store_n(p, atomic_load_explicit(&page->data.first,
						 memory_order_relaxed),
			 __ATOMIC_RELAXED);
	page_data_publish(page, true);
}

/* A new page's contents: zeroes (clear_page()). */
void clear_highpage(struct page *page)
{
	count_stat(page_zero);
	page_data_set(page, 0, 0);
}

void clear_folio(struct folio *folio)
{
	unsigned long i, nr = folio_nr_pages(folio);

	for (i = 0; i < nr; i++)
		clear_highpage(folio_page(folio, i));
}

/*
 * A new page @to gets @from's contents.  @from may be stored into
 * meanwhile (fork copying a pinned page): each byte is the old or the
 * new one, as a CPU's copy would give.
 */
void copy_highpage(struct page *to, struct page *from)
{
	if (likely(!page_data_full(from))) {
		page_data_set(to, atomic_load_explicit(&from->data.first,
						       memory_order_relaxed),
			      atomic_load_explicit(&from->data.rest,
						   memory_order_relaxed));
	} else {
		frame_copy(page_address(to), page_address(from));
		page_data_publish(to, true);
	}
	count_stat(folio_copy);
}

/*
 * Fill @len bytes from @offset with @val (a direct-I/O read into a pinned
 * page).  A fill of the whole page makes the compact form exact again,
 * whatever the page held: the frame is no longer read.
 */
void memset_page(struct page *page, size_t offset, uint8_t val, size_t len)
{
	uint8_t *p = (uint8_t *)page_address(page) + offset;
	size_t i;

	page_data_lock(page);
	if (!offset && len == PAGE_SIZE) {
		page_data_set(page, val, val);
	} else if (len) {
		if (!page_data_full(page))
			page_data_materialize(page);
		for (i = 0; i < len; i++)
			__atomic_store_n(p + i, val, __ATOMIC_RELAXED);
	}
	page_data_unlock(page);
}

/* Copy @len bytes from @offset out of the page (a pipe read, DMA). */
void memcpy_from_page(void *to, struct page *page, size_t offset, size_t len)
{
	uint8_t *d = to;

	if (unlikely(page_data_full(page))) {
		frame_read(d, (uint8_t *)page_address(page) + offset, len);
		return;
	}
	if (!len)
		return;
	if (!offset) {
		*d++ = atomic_load_explicit(&page->data.first,
					    memory_order_relaxed);
		len--;
	}
	memset(d, atomic_load_explicit(&page->data.rest, memory_order_relaxed),
	       len);
}

/* The simulated CPU's byte load: relaxed, as a racing store allows. */
uint8_t page_load_byte(struct page *page, unsigned long offset)
{
	if (unlikely(page_data_full(page)))
		return __atomic_load_n((uint8_t *)page_address(page) + offset,
				       __ATOMIC_RELAXED);
	return atomic_load_explicit(offset ? &page->data.rest : &page->data.first,
				    memory_order_relaxed);
}

/*
 * The simulated CPU's byte store.  A store the compact form holds (the
 * first byte, or the value every other byte has) stays there; any other
 * materializes the page.
 */
void page_store_byte(struct page *page, unsigned long offset, uint8_t val)
{
	page_data_lock(page);
	if (likely(!raw_PageFlag(page, PG_data_full))) {
		if (!offset) {
			atomic_store_explicit(&page->data.first, val,
					      memory_order_relaxed);
			goto out;
		}
		if (val == atomic_load_explicit(&page->data.rest,
						memory_order_relaxed))
			goto out;
		page_data_materialize(page);
	}
	__atomic_store_n((uint8_t *)page_address(page) + offset, val,
			 __ATOMIC_RELAXED);
out:
	page_data_unlock(page);
}

/* Does the page hold only zeroes (memchr_inv(addr, 0, PAGE_SIZE) == NULL)? */
bool page_is_zero(struct page *page)
{
	const uint8_t *c;
	unsigned long i;

	if (!page_data_full(page))
		return !atomic_load_explicit(&page->data.first,
					     memory_order_relaxed) &&
		       !atomic_load_explicit(&page->data.rest,
					     memory_order_relaxed);
	c = page_address(page);
	for (i = 0; i < PAGE_SIZE; i++)
		if (__atomic_load_n(&c[i], __ATOMIC_RELAXED))
			return false;
	return true;
}

/* Does the page have its frame (for the tests of this file)? */
bool page_data_materialized(const struct page *page)
{
	return page_data_full(page);
}
