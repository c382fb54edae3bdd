// SPDX-License-Identifier: GPL-2.0-only
/*
 * place.c - where the regions of a scenario go.
 *
 * The language names regions; a backend wants addresses.  Both backends
 * place them with this code, in statement order, so the model and the
 * kernel map every region at the same address and whatever lies around a
 * region (a neighbour to merge with, a page table to share, the end of
 * the address space) is the same in both records.
 *
 * From 4G up, each region on a fresh PMD-aligned block, past the room the
 * one before may grow into (SCN_RESIZE_ROOM, or its `room`) and one empty
 * block more, so no two regions share a page table's worth of address
 * space, a THP can never span two of them, and a region grown to the end
 * of its room still does not touch (or merge with) the next.  Rooms are
 * address arithmetic, not reservations: nothing is mapped past a
 * region's end, the next region is only placed beyond.  4096 regions
 * with the default room (about 66M each) take under 300G of x86-64's
 * 128T.
 */
#include <errno.h>

#include "mm/arch/arch.h"
#include "scenario/place.h"
#include "scenario/scenario.h"

/*
 * The end of the user address space: the architecture's TASK_SIZE
 * (mm/arch/), where pb_mmap() stops - x86-64's four levels (x86-pae's
 * too: the model's x86-pae is x86-64 reading its PTEs in halves),
 * arm64's 48-bit VA.  This program is built per architecture, the kernel
 * backend included (the arm64 guests run the static aarch64 build), so
 * the kernel backend refuses a region exactly where the model does.
 */
#define PLACE_ADDR_LIMIT ARCH_TASK_SIZE

static unsigned long round_up(unsigned long x, unsigned long align)
{
	return (x + align - 1) & ~(align - 1);
}

void scenario_place_init(struct scn_placement *pl, unsigned long pmd_size)
{
	pl->cursor = SCN_FIRST_REGION_ADDR;
	/*
	 * The language's 2M alignment, or the PMD size where that is larger
	 * (32M and 512M on arm64's 16K and 64K granules), so a region still
	 * starts on a page table of its own.
	 */
	pl->align = pmd_size > SCN_REGION_ALIGN ? pmd_size : SCN_REGION_ALIGN;
}

int scenario_place_region(struct scn_placement *pl, struct scn_region_addr *r,
			  unsigned long at, unsigned long len,
			  unsigned long room)
{
	unsigned long base = round_up(pl->cursor, pl->align);
	unsigned long span = room > len ? room : len;

	/* In this order, so that no sum can wrap: base + at + span. */
	if (base < pl->cursor || base > PLACE_ADDR_LIMIT ||
	    span > PLACE_ADDR_LIMIT || at > PLACE_ADDR_LIMIT - span ||
	    at + span > PLACE_ADDR_LIMIT - base)
		return -ENOMEM;
	r->addr = base + at;
	r->room_end = scenario_region_room_end(r->addr, len, room);
	r->placed = true;
	pl->cursor = round_up(r->room_end, pl->align) + pl->align;
	return 0;
}

/*
 * A region whose placement was refused has no address, and its ranges go
 * to address 0 whatever their offset: page 0 is never mapped (the model
 * maps nothing below SCN_FIRST_REGION_ADDR, Linux nothing below
 * mmap_min_addr), so a statement there meets no mapping at its first
 * page, on either backend.  Adding the offset, as the kernel backend once
 * did, could start the range on the kernel backend's own process instead:
 * the arm64 guests' ptebatch is a static binary linked at 4M, its data
 * and heap just above, where a write would succeed - and corrupt it -
 * while the model says EFAULT.
 */
unsigned long scenario_region_addr(const struct scn_region_addr *r,
				   unsigned long off)
{
	return r->placed ? r->addr + off : 0;
}
