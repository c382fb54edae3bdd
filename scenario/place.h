/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * place.h - where the regions of a scenario go: the one placement both
 * backends use, so that the model's record and the kernel's name the
 * same addresses.
 */
#ifndef SCENARIO_PLACE_H
#define SCENARIO_PLACE_H

#include <stdbool.h>

/* The first region starts here (4G), on every architecture. */
#define SCN_FIRST_REGION_ADDR (4UL << 30)

/* Where one region went, once its mmap or mremap placed it. */
struct scn_region_addr {
	unsigned long addr;
	unsigned long room_end;	/* resize may grow it up to here */
	bool placed;		/* its mmap or mremap got it an address */
};

/* One run's placement: where the next region may go. */
struct scn_placement {
	unsigned long cursor;	/* the next free address for a region */
	unsigned long align;	/* each region starts on a block of this */
};

/* A run's placement, nothing placed yet, on a machine of @pmd_size. */
void scenario_place_init(struct scn_placement *pl, unsigned long pmd_size);

/*
 * Give @r an address: @at past a fresh aligned block, @len long, with
 * @room to grow (mmap's `room`, 0 for the default).  0, or -ENOMEM when
 * the architecture's user address space has no room left for it (@pl and
 * @r then unchanged: mmap's ENOMEM).
 */
int scenario_place_region(struct scn_placement *pl, struct scn_region_addr *r,
			  unsigned long at, unsigned long len,
			  unsigned long room);

/* The address of the byte at @off of region @r (see place.c when unplaced). */
unsigned long scenario_region_addr(const struct scn_region_addr *r,
				   unsigned long off);

#endif /* SCENARIO_PLACE_H */
