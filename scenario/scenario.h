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
#include <stdint.h>
#include <stdio.h>

#define SCN_NAME_MAX 31
#define SCN_MAX_PROCS 64
#define SCN_MAX_REGIONS 256
#define SCN_MAX_HANDLES 256

/*
 * The base page size scenarios are parsed with until the tool learns it
 * from the selected architecture: x86-64's.
 */
#define SCN_DEFAULT_PAGE_SIZE 4096UL

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

/* mthp sizes, 16K << i for i < SCN_NR_MTHP_SIZES: 16K..2M. */
#define SCN_MTHP_MIN_SIZE (16UL << 10)
#define SCN_NR_MTHP_SIZES 8

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
	ST_OBSERVE,
};

enum scn_prot { SCN_PROT_NONE, SCN_PROT_R, SCN_PROT_RW };

enum scn_advice {
	SCN_ADV_DONTNEED,
	SCN_ADV_HUGEPAGE,
	SCN_ADV_NOHUGEPAGE,
	SCN_ADV_DONTFORK,
	SCN_ADV_DOFORK,
};

enum scn_policy { SCN_POL_NEVER, SCN_POL_ALWAYS, SCN_POL_MADVISE, SCN_POL_INHERIT };

enum scn_hugeflag { SCN_HUGE_DEFAULT, SCN_HUGE_HUGEPAGE, SCN_HUGE_NOHUGEPAGE };

struct stmt {
	int number;		/* 1-based statement number */
	int line;		/* line in the file */
	char *text;		/* statement as written: spaces folded, comment dropped */
	enum stmt_kind kind;
	int proc;		/* acting process id, -1 for settings/observe */
	int region;		/* region id, -1 if none */
	unsigned long off, len;
	unsigned long stride;	/* write/read; defaults to the base page size */
	uint8_t value;		/* write/dio-read: explicit or 1 + (number % 255) */
	enum scn_prot prot;	/* mmap, mprotect */
	enum scn_hugeflag huge;	/* mmap */
	enum scn_advice advice;	/* madvise */
	int child;		/* fork: new process id */
	int handle;		/* register/unregister/vmsplice/drain */
	int new_region;		/* mremap: region id of S */
	unsigned long at;	/* mremap: offset past a 2M-aligned address */
	unsigned long mthp_size;	/* mthp */
	enum scn_policy policy;		/* mthp */
};

struct scn_region {
	char name[SCN_NAME_MAX + 1];
	unsigned long len;
};

struct scenario {
	char *file;
	struct stmt *stmts;
	int nr_stmts;
	char proc_names[SCN_MAX_PROCS][SCN_NAME_MAX + 1];
	int nr_procs;
	struct scn_region regions[SCN_MAX_REGIONS];
	int nr_regions;
	char handle_names[SCN_MAX_HANDLES][SCN_NAME_MAX + 1];
	int nr_handles;
	/* mthp settings, indexed by log2(size / 16K): 16K..2M */
	enum scn_policy mthp[SCN_NR_MTHP_SIZES];
	unsigned long page_size;	/* the one the scenario was parsed with */
};

/*
 * Parse @path.  @page_size is the base page size offsets must be multiples
 * of.  On error prints "FILE:LINE: message" to @err and returns NULL.
 */
struct scenario *scenario_parse_file(const char *path, unsigned long page_size,
				     FILE *err);
struct scenario *scenario_parse_string(const char *name, const char *text,
				       unsigned long page_size, FILE *err);
void scenario_free(struct scenario *s);

/*
 * Parse one number of the language: decimal or 0x hex, optionally followed
 * by K, M or G (powers of 1024).  Returns 0, -EINVAL for a malformed number
 * or -ERANGE when it does not fit an unsigned long.  The CLI uses it for
 * sizes too, so that they read the same everywhere.
 */
int scenario_parse_number(const char *tok, unsigned long *out);

/* The size in bytes of mthp slot @i (16K << i). */
static inline unsigned long scenario_mthp_size(int i)
{
	return SCN_MTHP_MIN_SIZE << i;
}

#endif /* SCENARIO_H */
