// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_place.c - scenario/place.c, where both backends put a scenario's
 * regions: the alignment (2M, or the PMD where that is larger), the gap
 * past each region's room, the end of the architecture's address space
 * (this program is built per architecture: `make tests` runs it on each),
 * and the address of a region that never got one.
 */
#include "scenario/place.h"
#include "scenario/scenario.h"
#include "tests/unit/pbtest.h"

#define SZ_4G	(4UL << 30)

/*
 * The end of the user address space this build's model has: x86-64's
 * four levels of page table (128T; x86-pae's address space is x86-64's),
 * arm64's 48-bit VA (256T) on every granule.
 */
static unsigned long want_limit(void)
{
	return strncmp(pb_arch_name(), "arm64", 5) ? 1UL << 47 : 1UL << 48;
}

static unsigned long round_up(unsigned long x, unsigned long align)
{
	return (x + align - 1) & ~(align - 1);
}

/*
 * The first region at 4G, the next past its room and one empty block:
 *
 *   4G        A   A+len    room_end        next block   B
 *   |=========|---------|..........|  gap  |============|
 *
 * for each PMD size there is (2M on x86 and arm64-4k, 32M on 16K pages,
 * 512M on 64K) and one below the language's 2M, which does not lower it.
 */
static void test_alignment_and_gaps(void)
{
	static const unsigned long pmds[] = {
		1UL << 20, 2UL << 20, 32UL << 20, 512UL << 20,
	};
	unsigned int i;

	t.ok = true;
	for (i = 0; i < sizeof(pmds) / sizeof(pmds[0]); i++) {
		unsigned long align = pmds[i] > SZ_2M ? pmds[i] : SZ_2M;
		struct scn_region_addr a = { 0 }, b = { 0 }, c = { 0 };
		struct scn_placement pl;
		unsigned long gap;

		scenario_place_init(&pl, pmds[i]);
		EXPECT_EQ(pl.align, align);
		EXPECT_EQ(pl.cursor, SCN_FIRST_REGION_ADDR);

		/* A: 64K at 4G, the default room: 64M past its end's 2M. */
		EXPECT_EQ(scenario_place_region(&pl, &a, 0, SZ_64K, 0), 0);
		EXPECT(a.placed);
		EXPECT_EQ(a.addr, SZ_4G);
		EXPECT_EQ(a.room_end, SZ_4G + SZ_2M + SZ_64M);
		EXPECT_EQ(pl.cursor, round_up(a.room_end, align) + align);

		/* B: 4K past a fresh block, one empty block after A's room. */
		EXPECT_EQ(scenario_place_region(&pl, &b, SZ_4K, SZ_4K, 0), 0);
		EXPECT_EQ(b.addr % align, SZ_4K);
		gap = (b.addr - SZ_4K) - a.room_end;
		EXPECT(gap >= align && gap < 2 * align);
		/* A THP or a page table never spans two regions. */
		EXPECT((a.room_end - 1) / align + 1 < b.addr / align);

		/* C: `room 1G`, its room exact; the next region past it. */
		EXPECT_EQ(scenario_place_region(&pl, &c, 0, SZ_1M, 1UL << 30),
			  0);
		EXPECT_EQ(c.addr % align, 0);
		EXPECT(c.addr > b.room_end);
		EXPECT_EQ(c.room_end, c.addr + (1UL << 30));
		EXPECT_EQ(pl.cursor, round_up(c.room_end, align) + align);
	}
	t_end("place: regions from 4G, each on a fresh block of max(2M, PMD), one empty block past the room of the one before");
}

/*
 * The end of the address space: a region may end at it, not a byte past.
 * N is 64M, or the alignment where that is larger (512M on 64K pages):
 *
 *   cursor = limit - N - align     limit - N                limit
 *   |............................|=========== N ============|
 *
 * A refusal is mmap's ENOMEM and changes nothing: the cursor stays, the
 * region stays unplaced, and a region that fits is still placed after it.
 */
static void test_limit(void)
{
	unsigned long limit = want_limit(), n;
	struct scn_region_addr r = { 0 };
	struct scn_placement pl, before;

	t.ok = true;
	scenario_place_init(&pl, pb_pmd_size());
	n = round_up(SZ_64M, pl.align);
	pl.cursor = limit - n - pl.align + 1;	/* rounds up to limit - n */
	before = pl;
	EXPECT_EQ(scenario_place_region(&pl, &r, 0, n + SZ_4K, 0), -ENOMEM);
	EXPECT_EQ(scenario_place_region(&pl, &r, SZ_4K, n, 0), -ENOMEM);
	/* the room counts, not only the length */
	EXPECT_EQ(scenario_place_region(&pl, &r, 0, SZ_4K, n + SZ_4K),
		  -ENOMEM);
	EXPECT(!r.placed);
	EXPECT_EQ(pl.cursor, before.cursor);
	EXPECT_EQ(scenario_place_region(&pl, &r, 0, n, 0), 0);
	EXPECT_EQ(r.addr, limit - n);
	/* past the end now: nothing more goes, however small */
	before = pl;
	r.placed = false;
	EXPECT_EQ(scenario_place_region(&pl, &r, 0, SZ_4K, 0), -ENOMEM);
	EXPECT_EQ(pl.cursor, before.cursor);
	EXPECT(!r.placed);
	t_end("place: on %s a region may end at the address space's end (%luT), not past it; a refusal is ENOMEM and changes nothing",
	      pb_arch_name(), limit >> 40);
}

/* Sums that would wrap are refused, not wrapped into a low address. */
static void test_no_wrap(void)
{
	struct scn_region_addr r = { 0 };
	struct scn_placement pl;

	t.ok = true;
	scenario_place_init(&pl, pb_pmd_size());
	EXPECT_EQ(scenario_place_region(&pl, &r, 0, ~0UL - SZ_4K, 0),
		  -ENOMEM);
	EXPECT_EQ(scenario_place_region(&pl, &r, ~0UL - SZ_4K, SZ_4K, 0),
		  -ENOMEM);
	EXPECT_EQ(scenario_place_region(&pl, &r, 0, SZ_4K, ~0UL), -ENOMEM);
	pl.cursor = ~0UL - SZ_4K;	/* rounding it up wraps to 0 */
	EXPECT_EQ(scenario_place_region(&pl, &r, 0, SZ_4K, 0), -ENOMEM);
	EXPECT(!r.placed);
	t_end("place: a length, offset, room or cursor whose sum would wrap is ENOMEM");
}

/*
 * The placement's limit is the model's: where placement stops, pb_mmap()
 * stops too, so a refusal never comes from one and not the other.
 */
static void test_limit_is_the_models(void)
{
	unsigned long limit = want_limit(), n;
	struct scn_region_addr r = { 0 };
	struct scn_placement pl;
	struct pb_proc *p;

	t_begin(SZ_64M);
	p = t_proc();
	scenario_place_init(&pl, pb_pmd_size());
	n = round_up(SZ_64M, pl.align);
	pl.cursor = limit - n;
	EXPECT_EQ(scenario_place_region(&pl, &r, 0, n, 0), 0);
	EXPECT_EQ(r.addr + n, limit);
	EXPECT_EQ(pb_mmap(p, r.addr, n, RW), 0);
	EXPECT_EQ(pb_munmap(p, r.addr, n), 0);
	EXPECT_EQ(scenario_place_region(&pl, &r, 0, PAGE_SIZE, 0), -ENOMEM);
	EXPECT_EQ(pb_mmap(p, r.addr, n + PAGE_SIZE, RW), -ENOMEM);
	t_exit(p);
	t_end("place: on %s the model maps up to the placement's limit and refuses past it", pb_arch_name());
}

/*
 * A region whose placement was refused has no address: its ranges go to
 * address 0, whatever their offset, where nothing is ever mapped.
 */
static void test_unplaced(void)
{
	struct scn_region_addr r = { 0 };
	struct scn_placement pl;

	t.ok = true;
	EXPECT_EQ(scenario_region_addr(&r, 0), 0);
	EXPECT_EQ(scenario_region_addr(&r, 0x5000), 0);
	EXPECT_EQ(scenario_region_addr(&r, SZ_4G), 0);
	scenario_place_init(&pl, pb_pmd_size());
	pl.cursor = want_limit();
	EXPECT_EQ(scenario_place_region(&pl, &r, 0, SZ_4K, 0), -ENOMEM);
	EXPECT_EQ(scenario_region_addr(&r, 0x5000), 0);
	scenario_place_init(&pl, pb_pmd_size());
	EXPECT_EQ(scenario_place_region(&pl, &r, SZ_4K, SZ_1M, 0), 0);
	EXPECT_EQ(scenario_region_addr(&r, 0x5000), SZ_4G + SZ_4K + 0x5000);
	t_end("place: a region never placed is at address 0 whatever the offset; a placed one at its address plus the offset");
}

int main(void)
{
	test_alignment_and_gaps();
	test_limit();
	test_no_wrap();
	test_limit_is_the_models();
	test_unplaced();
	return tap_done();
}
