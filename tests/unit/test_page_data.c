// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_page_data.c - a data page's contents (mm/page_data.c): every byte
 * reads what was written, in the compact form (the first byte and the
 * value of the rest, in struct page) and after a store that form cannot
 * hold gave the page its frame; a compact page never touches its frame;
 * and a region written, forked and rewritten costs this process its
 * memmap, not its frames.
 */
#include <sys/mman.h>

#include "tests/unit/pbtest.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif

/* Is @page's frame in this process's memory (ever written)? */
static bool frame_resident(struct page *page)
{
	long host = sysconf(_SC_PAGESIZE);
	unsigned char vec[PAGE_SIZE / 4096 + 1];
	uintptr_t p = (uintptr_t)page_address(page);
	unsigned long i, n = PAGE_SIZE / (unsigned long)host;

	memset(vec, 0, sizeof(vec));
	if (mincore((void *)p, PAGE_SIZE, vec))
		return true;	/* cannot tell: as if it were */
	for (i = 0; i < n; i++)
		if (vec[i] & 1)
			return true;
	return false;
}

/* Do all bytes of @page read @first, then @rest, but @at reads @val? */
static bool page_reads(struct page *page, uint8_t first, uint8_t rest,
		       unsigned long at, uint8_t val)
{
	static uint8_t buf[PAGE_SIZE];
	unsigned long i;
	bool ok = true;

	memcpy_from_page(buf, page, 0, PAGE_SIZE);
	for (i = 0; i < PAGE_SIZE; i++) {
		uint8_t want = i == at ? val : i ? rest : first;

		ok &= buf[i] == want && page_load_byte(page, i) == want;
	}
	/* A read from inside the page starts at that byte. */
	memcpy_from_page(buf, page, 1, 2);
	ok &= buf[0] == (at == 1 ? val : rest);
	return ok;
}

/*
 * The compact form: stores to the first byte, stores of the value the
 * rest already has, whole-page fills and copies keep it, and the frame
 * is never written.
 */
static void test_compact(void)
{
	struct folio *a, *b;
	struct page *pa, *pb;

	t_begin(SZ_64M);
	a = folio_alloc(0);
	b = folio_alloc(0);
	if (!EXPECT(a && b))
		goto out;
	pa = folio_page(a, 0);
	pb = folio_page(b, 0);
	clear_folio(a);
	EXPECT(page_reads(pa, 0, 0, 0, 0));
	page_store_byte(pa, 0, 0x5a);
	page_store_byte(pa, PAGE_SIZE - 1, 0);
	EXPECT(page_reads(pa, 0x5a, 0, 0, 0x5a));
	copy_highpage(pb, pa);
	EXPECT(page_reads(pb, 0x5a, 0, 0, 0x5a));
	memset_page(pa, 0, 0x11, PAGE_SIZE);
	EXPECT(page_reads(pa, 0x11, 0x11, 0, 0x11));
	page_store_byte(pa, 3, 0x11);
	EXPECT(page_reads(pa, 0x11, 0x11, 0, 0x11));
	EXPECT(page_reads(pb, 0x5a, 0, 0, 0x5a));	/* the copy is its own */
	EXPECT(!page_data_materialized(pa) && !page_data_materialized(pb));
	EXPECT(!frame_resident(pa) && !frame_resident(pb));
	folio_put(a);
	folio_put(b);
out:
	t_end("page_data: first-byte stores, fills and copies stay in struct page; the frame is never written");
}

/*
 * A store elsewhere gives the page its frame, with every byte it held;
 * copies of it copy the frame; a whole-page fill makes it compact again,
 * and the next page that reuses the frame's pfn starts compact.
 */
static void test_materialized(void)
{
	struct folio *a, *b;
	struct page *pa, *pb;
	unsigned long pfn;

	t_begin(SZ_64M);
	a = folio_alloc(0);
	b = folio_alloc(0);
	if (!EXPECT(a && b))
		goto out;
	pa = folio_page(a, 0);
	pb = folio_page(b, 0);
	memset_page(pa, 0, 0x22, PAGE_SIZE);
	page_store_byte(pa, 0, 0x33);
	page_store_byte(pa, 8, 0x44);
	EXPECT(page_data_materialized(pa) && frame_resident(pa));
	EXPECT(page_reads(pa, 0x33, 0x22, 8, 0x44));
	copy_highpage(pb, pa);
	EXPECT(page_data_materialized(pb));
	EXPECT(page_reads(pb, 0x33, 0x22, 8, 0x44));
	page_store_byte(pa, 0, 0x55);
	EXPECT(page_reads(pa, 0x55, 0x22, 8, 0x44));
	EXPECT(page_reads(pb, 0x33, 0x22, 8, 0x44));
	memset_page(pa, 0, 0x66, PAGE_SIZE);
	EXPECT(!page_data_materialized(pa));
	EXPECT(page_reads(pa, 0x66, 0x66, 0, 0x66));
	/* A partial fill: the form cannot hold it. */
	memset_page(pa, 1, 0x77, 1);
	EXPECT(page_data_materialized(pa));
	EXPECT(page_reads(pa, 0x66, 0x66, 1, 0x77));
	pfn = folio_pfn(a);
	folio_put(a);
	a = folio_alloc(0);
	if (EXPECT(a) && EXPECT_EQ(folio_pfn(a), pfn)) {
		clear_folio(a);
		EXPECT(!page_data_materialized(folio_page(a, 0)));
		EXPECT(page_reads(folio_page(a, 0), 0, 0, 0, 0));
	}
	if (a)
		folio_put(a);
	folio_put(b);
out:
	t_end("page_data: a store beyond the first byte materializes the page; copies and fills keep every byte");
}

/* Through the simulated CPU: stores, loads, fork and COW of a 64K folio. */
static void test_through_cpu(void)
{
	struct pb_proc *p, *c;
	uint8_t v = 0;
	unsigned long i;

	t_begin_folios(SZ_64M, SZ_64K);
	if (!EXPECT_EQ(pb_proc_create(&p), 0))
		goto out;
	EXPECT_EQ(pb_mmap(p, ADDR_A, SZ_64K, RW), 0);
	for (i = 0; i < SZ_64K; i += PAGE_SIZE)
		EXPECT_EQ(pb_store(p, 0, ADDR_A + i, (uint8_t)(i >> PAGE_SHIFT) + 1), 0);
	EXPECT_EQ(pb_store(p, 0, ADDR_A + 5, 9), 0);
	if (EXPECT_EQ(pb_fork(p, &c), 0)) {
		EXPECT_EQ(pb_store(c, 1, ADDR_A + PAGE_SIZE, 0x80), 0);
		EXPECT_EQ(pb_load(c, 1, ADDR_A + PAGE_SIZE, &v), 0);
		EXPECT_EQ(v, 0x80);
		EXPECT_EQ(pb_load(c, 1, ADDR_A + 5, &v), 0);
		EXPECT_EQ(v, 9);
		pb_exit(c);
	}
	EXPECT_EQ(pb_load(p, 0, ADDR_A + PAGE_SIZE, &v), 0);
	EXPECT_EQ(v, 2);
	EXPECT_EQ(pb_load(p, 0, ADDR_A + PAGE_SIZE + 1, &v), 0);
	EXPECT_EQ(v, 0);
	EXPECT_EQ(pb_load(p, 0, ADDR_A + 5, &v), 0);
	EXPECT_EQ(v, 9);
	pb_exit(p);
out:
	t_end("page_data: the CPU's stores and loads through fork and COW read back, either form");
}

static long status_kb(const char *field)
{
	char line[256];
	size_t n = strlen(field);
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':')
			kb = strtol(line + n + 1, NULL, 10);
	fclose(f);
	return kb;
}

/*
 * 1G written, forked, rewritten by the child (2G of frames at the peak,
 * checked there as a scenario run checks every statement): the process
 * grows by its memmap, folio metadata, page tables and the checker's
 * accounting - not by the 2G of frames.  Full frames cost a byte of host
 * memory per simulated byte; the bound is 1/20 of that.
 */
static void test_host_memory(void)
{
	const unsigned long len = 1UL << 30;
	long before, peak;
	unsigned long i, in_use, bound;
	struct pb_proc *p, *c;

#ifdef UNDER_SANITIZER
	tap_skip("a sanitizer's shadow memory is in the process's RSS",
		 "page_data: 1G written, forked and rewritten costs at most 1/20 of its frames");
	return;
#endif
	before = status_kb("VmRSS");
	if (before < 0 || status_kb("VmHWM") < 0) {
		tap_skip("no VmHWM in /proc/self/status",
			 "page_data: 1G written, forked and rewritten costs at most 1/20 of its frames");
		return;
	}
	t_begin(2 * len + SZ_64M);
	if (!EXPECT_EQ(pb_proc_create(&p), 0))
		goto out;
	EXPECT_EQ(pb_mmap(p, ADDR_A, len, RW), 0);
	for (i = 0; i < len; i += PAGE_SIZE)
		pb_store(p, 0, ADDR_A + i, 1);
	if (EXPECT_EQ(pb_fork(p, &c), 0)) {
		for (i = 0; i < len; i += PAGE_SIZE)
			pb_store(c, 0, ADDR_A + i, 2);
		EXPECT_CLEAN();
		in_use = pb_frames_in_use() * PAGE_SIZE;
		EXPECT(in_use >= 2 * len);
		peak = status_kb("VmHWM");
		bound = in_use / 20 / 1024;
		tap_diag("%lu M of frames in use: the process grew by %ld M"
			 " (VmHWM), at most %lu M allowed", in_use >> 20,
			 (peak - before) >> 10, bound >> 10);
		EXPECT(peak - before < (long)bound);
		pb_exit(c);
	}
	EXPECT_EQ(pb_munmap(p, ADDR_A, len), 0);
	pb_exit(p);
out:
	t_end("page_data: 1G written, forked and rewritten costs at most 1/20 of its frames");
}

int main(void)
{
	/* First: VmHWM is the process's, and the others add to it. */
	test_host_memory();
	test_compact();
	test_materialized();
	test_through_cpu();
	return tap_done();
}
