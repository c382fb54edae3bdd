/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * scenario/ - the .scn language: parser, runner and record, backend-neutral.
 *
 * A scenario is parsed and fully validated before anything runs; names of
 * processes, regions and handles are resolved to small integer ids, given
 * in creation order (process 0 is P0), which is also the order in which a
 * snapshot walks them.
 */
#ifndef SCENARIO_H
#define SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SCN_NAME_MAX 31
/*
 * A traced program maps thousands of times, and region names are never
 * reused: backends size their per-region state by the scenario's own
 * nr_regions, on the heap.
 */
#define SCN_MAX_PROCS 128
#define SCN_MAX_REGIONS 4096
#define SCN_MAX_HANDLES 256

/*
 * The base page size scenarios are parsed with: the one of the
 * architecture this program is built for (like the model, the tool is
 * built per architecture: `make ARCH=arm64-16k`).
 */
#ifdef CONFIG_ARM64_PAGE_SHIFT
#define SCN_DEFAULT_PAGE_SIZE (1UL << CONFIG_ARM64_PAGE_SHIFT)
#else
#define SCN_DEFAULT_PAGE_SIZE 4096UL
#endif

/*
 * The language's own alignment: mmap places a region on a 2M boundary and
 * mremap's AT lies below it, whatever the PMD size of the machine.
 */
#define SCN_REGION_ALIGN (2UL << 20)

/*
 * The largest region.  It keeps the address arithmetic of every backend far
 * from overflow and a snapshot (one entry per base page) within reach.
 */
#define SCN_MAX_REGION_LEN (64UL << 30)

/*
 * resize's room to grow: a region may grow until its end reaches this far
 * past the first 2M boundary at or after its end when it was created.  It
 * is exact, not whatever the placement happens to leave free, so that the
 * backends' records compare; both place the next region past it.
 */
#define SCN_RESIZE_ROOM (64UL << 20)

/*
 * dio-read and dio-write are O_DIRECT calls of at most this many bytes
 * each: the pages of one call are pinned together and released before the
 * next call pins its own, which decides whether an unsharing fault may
 * reuse a large folio.  Both backends make the same calls.
 */
#define SCN_DIO_CHUNK (1UL << 20)

/* The end of the room of a region created ending at @end. */
static inline unsigned long scenario_room_end(unsigned long end)
{
	return ((end + SCN_REGION_ALIGN - 1) & ~(SCN_REGION_ALIGN - 1)) +
	       SCN_RESIZE_ROOM;
}

/*
 * The end of the room of a region created at @start, @len long, with
 * mmap's `room ROOM` (0: none given, the rule above).  A brk heap grows by
 * hundreds of megabytes, so its scenario says how far.
 */
static inline unsigned long scenario_region_room_end(unsigned long start,
						     unsigned long len,
						     unsigned long room)
{
	return room ? start + room : scenario_room_end(start + len);
}

/*
 * mthp sizes with 4K pages, 16K << i for i < SCN_NR_MTHP_SIZES: 16K..2M,
 * what this machine's kernel offers (backend/thp_sysfs.c).  A scenario
 * parsed for another page size has its own list, the anon mTHP orders
 * 2..PMD order of that granule (scenario_nr_mthp_sizes()): 64K..32M with
 * 16K pages, 256K..512M with 64K pages; at most SCN_MAX_MTHP_SIZES.
 */
#define SCN_MTHP_MIN_SIZE (16UL << 10)
#define SCN_NR_MTHP_SIZES 8
#define SCN_MAX_MTHP_SIZES 12

enum stmt_kind {
	ST_MTHP,
	ST_MMAP,
	ST_MUNMAP,
	ST_MPROTECT,
	ST_MADVISE,
	ST_WRITE,
	ST_READ,
	ST_FORK,
	ST_EXIT,
	ST_REGISTER,
	ST_UNREGISTER,
	ST_DIO_WRITE,
	ST_DIO_READ,
	ST_VMSPLICE,
	ST_DRAIN,
	ST_MREMAP,
	ST_SPLIT,
	ST_MMAP_FIXED,
	ST_RESIZE,
	ST_TOUCH,
	ST_SPAWN,
	ST_EXEC,
	ST_OBSERVE,
};

enum scn_prot { SCN_PROT_NONE, SCN_PROT_R, SCN_PROT_RW };


enum scn_policy { SCN_POL_NEVER, SCN_POL_ALWAYS, SCN_POL_MADVISE, SCN_POL_INHERIT };

enum scn_hugeflag { SCN_HUGE_DEFAULT, SCN_HUGE_HUGEPAGE, SCN_HUGE_NOHUGEPAGE };

/*
 * One item of a touch: @count accesses of consecutive pages from page
 * @pgoff of region @region, loads or stores.  A trace has a million
 * accesses, so an item is 12 bytes and runs are one item.
 */
struct scn_touch {
	uint32_t pgoff;		/* in pages; a region has at most 2^24 */
	uint32_t count;		/* >= 1 */
	uint16_t region;	/* < SCN_MAX_REGIONS */
	uint8_t write;
};

_Static_assert(SCN_MAX_REGIONS <= 65536, "scn_touch.region is 16 bits");

struct stmt {
	int number;		/* 1-based statement number */
	int line;		/* line in the file */
	char *text;		/* statement as written: spaces folded, comment dropped */
	enum stmt_kind kind;
	int proc;		/* acting process id, -1 for settings/observe */
	int region;		/* region id, -1 if none */
	unsigned long off, len;	/* resize: off 0, len the new length */
	unsigned long stride;	/* write/read; defaults to the base page size */
	uint8_t value;		/* write/dio-read: explicit or 1 + (number % 255) */
	enum scn_prot prot;	/* mmap, mprotect */
	enum scn_hugeflag huge;	/* mmap */
	int advice;		/* madvise: Linux's MADV_* value */
	int child;		/* fork, spawn: new process id */
	int handle;		/* register/unregister/vmsplice/drain */
	int new_region;		/* mremap: region id of S */
	unsigned long at;	/* mmap, mremap: offset past a 2M-aligned address */
	unsigned long room;	/* mmap: `room LEN`, 0 when not given */
	struct scn_touch *items;	/* touch: malloc'd, in order */
	unsigned int nr_items;
	unsigned long nr_accesses;	/* touch: the items' counts summed */
	bool populate;		/* mmap: MAP_POPULATE */
	bool dontunmap;		/* mremap: MREMAP_DONTUNMAP */
	unsigned long mthp_size;	/* mthp */
	enum scn_policy policy;		/* mthp */
};

struct scn_region {
	char name[SCN_NAME_MAX + 1];
	unsigned long len;	/* when created */
	/*
	 * The longest the region can become by resize (its room, less its
	 * start's offset past 2M), and the longest the resizes parsed so far
	 * make it: ranges are checked against max_len, and what lies past a
	 * process's current length is the run's to refuse.  A backend tracks
	 * the current length of each process's region at run time.
	 */
	unsigned long room_len;
	unsigned long max_len;
};

struct scenario {
	char *file;
	struct stmt *stmts;
	int nr_stmts;
	char proc_names[SCN_MAX_PROCS][SCN_NAME_MAX + 1];
	int nr_procs;
	/* Up to SCN_MAX_REGIONS, grown as they are declared: most
	 * scenarios have a few, and explore parses one per sequence. */
	struct scn_region *regions;
	int nr_regions, cap_regions;
	char handle_names[SCN_MAX_HANDLES][SCN_NAME_MAX + 1];
	int nr_handles;
	/*
	 * mthp settings, indexed by log2(size / (4 * page size)): 16K..2M
	 * with 4K pages (scenario_mthp_size_of()); the last is the PMD size.
	 */
	enum scn_policy mthp[SCN_MAX_MTHP_SIZES];
	unsigned long page_size;	/* the one the scenario was parsed with */
};

/*
 * Parse @path.  @page_size is the base page size offsets must be multiples
 * of.  On error prints "FILE:LINE: message" to @err and returns NULL.
 */
struct scenario *scenario_parse_file(const char *path, unsigned long page_size,
				     FILE *err);
/*
 * scenario_parse_file() in two steps, for a caller that needs the text
 * itself (a pipe or /dev/stdin can be read only once): read @path whole
 * (malloc'd, *@lenp bytes, not NUL-terminated), then parse @len bytes of
 * @text named @name.  Both print "FILE[:LINE]: message" to @err and
 * return NULL on error; an empty scenario is one.
 */
char *scenario_read_file(const char *path, size_t *lenp, FILE *err);
struct scenario *scenario_parse_text(const char *name, const char *text,
				     size_t len, unsigned long page_size,
				     FILE *err);
struct scenario *scenario_parse_string(const char *name, const char *text,
				       unsigned long page_size, FILE *err);
/*
 * Parse the @len bytes at @buf, which need not end in a NUL, as the text of
 * a file named @name: a NUL byte among them is an error on its line.
 */
struct scenario *scenario_parse_buffer(const char *name, const char *buf,
				       size_t len, unsigned long page_size,
				       FILE *err);
void scenario_free(struct scenario *s);

/*
 * Parse one number of the language: decimal or 0x hex, optionally followed
 * by K, M or G (powers of 1024).  Returns 0, -EINVAL for a malformed number
 * or -ERANGE when it does not fit an unsigned long.  The CLI uses it for
 * sizes too, so that they read the same everywhere.
 */
int scenario_parse_number(const char *tok, unsigned long *out);

/* The size in bytes of mthp slot @i with 4K pages (16K << i). */
static inline unsigned long scenario_mthp_size(int i)
{
	return SCN_MTHP_MIN_SIZE << i;
}

/*
 * How many mthp sizes a scenario parsed for @page_size has: the orders 2
 * to the PMD order, where a page-sized table of 8-byte entries makes the
 * PMD order log2(page size / 8) - 8, 10 or 12 sizes for 4K, 16K, 64K.
 */
static inline int scenario_nr_mthp_sizes(unsigned long page_size)
{
	int shift = 0;

	while (shift < 63 && (1UL << shift) < page_size)
		shift++;
	/* Linux's granules are 4K..64K; other sizes get no mthp sizes. */
	if (shift < 12 || shift > 16)
		return 0;
	return shift - 3 - 1;
}

/* The size in bytes of mthp slot @i for @page_size: order i + 2. */
static inline unsigned long scenario_mthp_size_of(unsigned long page_size, int i)
{
	return page_size << (i + 2);
}

#endif /* SCENARIO_H */
