// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_ops.c - random sequences of public API calls, run under every
 * variant and held to one another: batching may change what an operation
 * costs and which frame backs a page, never what a program sees.
 *
 * The input: byte 0 sets the THP policies of the 4-page, 16-page and
 * PMD-sized folios (16K, 64K and 2M on x86-64); then every OP_BYTES bytes
 * are one operation (decode_op() says how), at most MAX_OPS of them.  The
 * address space is a span of NR_WINDOWS PMD-sized windows from SPAN_BASE
 * (a range may run one window past it); there are at most NR_PROCS
 * processes (P0 at the start, the others from fork) and NR_HELD sets of
 * pages held by GUP at a time.
 *
 * For each variant, on a fresh machine: the operations in order, pb_check()
 * after each; then every page of every live process is read back; then
 * every held set is released, every process exits, and no frame may be
 * left in use.  Then every operation's result (its return value, and a
 * digest of the bytes it loaded or its device read) and every byte read
 * back must be the same under every variant.  A violation, a leak or a
 * difference abort()s after printing the sequence.
 *
 * What is read back.  Programs change bytes only by stores, of one byte at
 * one of the NR_SLOTS offsets of slot_offset(), and devices only by filling
 * whole pinned pages; the model only moves and copies whole pages.  So the
 * bytes of a page are known from those at the store offsets and at one
 * offset no store reaches: those are loaded, through CPU 0's TLB, from
 * every page.
 *
 * An input that came within OPS_HEADROOM of running out of model memory
 * under any variant is checked but not compared: which frames back what,
 * and so fragmentation and whether a large folio can be had, may differ
 * between variants, and with them where memory runs out.  Memory is only
 * sampled between operations, so the headroom is more than one operation
 * can allocate and give back: fork copying every pinned page of NR_HELD
 * sets of at most a window each, and its page tables.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "ptebatch.h"
#include "scenario/vocab.h"

const char fuzz_harness_name[] = "ops";

/*
 * 64M, or the four PMD-size blocks pb_init() needs where that is more
 * (128M with 16K pages, 2G with 64K): frames cost nothing until used.
 */
#define OPS_MEMORY (64UL << 20 > 4 * pb_pmd_size() ? 64UL << 20 \
						      : 4 * pb_pmd_size())
#define OPS_HEADROOM (16UL << 20)
#define SPAN_BASE (1UL << 30)
#define NR_WINDOWS 3
#define NR_PROCS 3
#define NR_HELD 4
#define NR_CPUS_USED 4
#define OP_BYTES 5
#define MAX_OPS 64

/* Store offsets, and the probe no store reaches. */
#define NR_SLOTS 4
#define NR_PROBES (NR_SLOTS + 1)

/* Results of the harness's own refusals, apart from any -errno. */
#define R_NO_PROC 1001		/* the acting process is not alive */
#define R_NO_SLOT 1002		/* fork: NR_PROCS live; GUP: NR_HELD held */
#define R_NOT_HELD 1003		/* release, fill, devread: no set is held */
#define R_READ_ONLY 1004	/* fill: the set was taken without WRITE */

enum op_kind {
	OP_MMAP, OP_MUNMAP, OP_MPROTECT, OP_MADVISE, OP_LOAD, OP_STORE,
	OP_FORK, OP_EXIT, OP_GUP, OP_RELEASE, OP_FILL, OP_DEVREAD, OP_SPLIT,
	OP_MREMAP,
	OP_RESIZE,
};

static const char *const op_names[] = {
	"mmap", "munmap", "mprotect", "madvise", "load", "store", "fork",
	"exit", "gup", "release", "fill", "devread", "split", "mremap",
	"resize",
};

/*
 * The low four bits of an operation's first byte; stores twice.  Code 15
 * was a second load until resize took it (no corpus input used it).
 */
static const enum op_kind op_codes[16] = {
	OP_MMAP, OP_MUNMAP, OP_MPROTECT, OP_MADVISE, OP_LOAD, OP_STORE,
	OP_FORK, OP_EXIT, OP_GUP, OP_RELEASE, OP_FILL, OP_DEVREAD, OP_SPLIT,
	OP_MREMAP, OP_STORE, OP_RESIZE,
};

/* madvise's advice from its arg byte: the language's advices in turn. */
static const struct scn_word *advice_of(uint8_t arg)
{
	const struct scn_word *advices = scn_advices();
	int nr = 0;

	while (advices[nr].word)
		nr++;
	return &advices[arg % nr];
}

/* PB_PROT_* bits: PB_PROT_WRITE alone is a write-only mapping. */
static const char *const prot_names[] = { "none", "r", "w", "rw" };

static const enum pb_thp_policy policies[4] = {
	PB_THP_NEVER, PB_THP_ALWAYS, PB_THP_MADVISE, PB_THP_INHERIT,
};

/* A policy's name is the scenario's word for it: the enums agree. */
_Static_assert(PB_THP_NEVER == (int)SCN_POL_NEVER &&
	       PB_THP_ALWAYS == (int)SCN_POL_ALWAYS &&
	       PB_THP_MADVISE == (int)SCN_POL_MADVISE &&
	       PB_THP_INHERIT == (int)SCN_POL_INHERIT,
	       "enum pb_thp_policy and enum scn_policy differ");

static const char *policy_name(int pol)
{
	return scn_policy_word((enum scn_policy)policies[pol]);
}

/* Policy field @shift of byte 0; the PMD size cannot inherit from itself. */
static int policy_of(uint8_t b, int shift)
{
	int pol = (b >> shift) & 3;

	return shift == 4 && policies[pol] == PB_THP_INHERIT ? 0 : pol;
}

struct op {
	enum op_kind kind;
	int proc;		/* acting process slot */
	int cpu;		/* load, store */
	unsigned long addr;	/* start of the range */
	unsigned long nr;	/* pages in the range */
	unsigned long dest;	/* mremap: the new address */
	unsigned long new_nr;	/* resize: pages after it */
	int slot;		/* load, store: which offset in each page */
	uint8_t arg;		/* prot, advice, GUP flags, value, held set */
	uint8_t value;		/* store: arg; fill: the start byte */
};

struct result {
	int ret;		/* 0, -errno, or one of R_* */
	uint64_t digest;	/* of what was loaded or read */
};

struct held {
	struct pb_pages *pages;	/* NULL when free */
	unsigned int flags;	/* how it was taken */
};

/* One variant's run: the machine's processes, held sets and results. */
struct run {
	struct pb_proc *procs[NR_PROCS];
	struct held held[NR_HELD];
	struct result res[MAX_OPS];
	int16_t *readback;	/* [proc][page][probe]: byte or -errno */
	bool live[NR_PROCS];	/* at read-back time */
	bool tight;		/* came within OPS_HEADROOM of the end */
};

/* The geometry of this machine, set before the first run. */
static unsigned long page_size, window_pages, span_pages, read_pages;
static unsigned long total_frames;
/* One page, for what a device reads. */
static uint8_t *page_buf;

static unsigned long slot_offset(int slot)
{
	const unsigned long offs[NR_PROBES] = {
		0, 1, page_size / 2, page_size - 1,
		page_size / 4,		/* the probe: no store goes there */
	};

	return offs[slot];
}

static unsigned long align_down(unsigned long x, unsigned long a)
{
	return x / a * a;
}

/*
 * One operation from five bytes:
 *   b0  bits 0-3 op_codes[], bits 4-5 process (mod NR_PROCS), bits 6-7 CPU
 *   b1  bits 0-2 start page (high bits), bits 3-4 alignment of start and
 *       mremap's destination (none, 16 pages, a window, 4 pages),
 *       bits 5-6 store/load offset slot, bits 5-7 mremap's fine offset
 *   b2  start page (low bits); fill: the value
 *   b3  length: 1..32 pages below 0x80, 16..512 (by 16) below 0xc0,
 *       else a window
 *   b4  arg: mmap/mprotect prot (bits 0-1) and mmap's madvise (bit 2
 *       hugepage, bit 3 nohugepage); madvise advice (mod the number of
 *       advices, scenario/vocab.c); store value;
 *       GUP flags (bit 0 PIN else GET, 1 WRITE, 2 LONGTERM, 3 FAST_ONLY);
 *       release/fill/devread: held set (mod NR_HELD; the next held one
 *       if that is free), release dirty (bit 2); mremap destination
 *       page (x 8); resize: the new length in pages, 1 + (b4 x 8 + b1
 *       bits 5-7) mod a window, so a grow stays inside what is read back
 */
static void decode_op(const uint8_t *b, struct op *op)
{
	static const unsigned long align_pages[4] = { 1, 16, 0, 4 };
	unsigned long start = ((unsigned long)(b[1] & 7) << 8 | b[2]) % span_pages;
	unsigned long align = align_pages[(b[1] >> 3) & 3];
	unsigned long dest;

	if (!align)
		align = window_pages;
	memset(op, 0, sizeof(*op));
	op->kind = op_codes[b[0] & 15];
	op->proc = ((b[0] >> 4) & 3) % NR_PROCS;
	op->cpu = (b[0] >> 6) % NR_CPUS_USED;
	start = align_down(start, align);
	op->addr = SPAN_BASE + start * page_size;
	if (b[3] < 0x80)
		op->nr = 1 + (b[3] & 31);
	else if (b[3] < 0xc0)
		op->nr = 16 * (1 + (b[3] & 31));
	else
		op->nr = window_pages;
	if (op->nr > window_pages)
		op->nr = window_pages;
	op->slot = (b[1] >> 5) & 3;
	op->arg = b[4];
	op->value = op->kind == OP_FILL ? b[2] : b[4];
	dest = (b[4] * 8UL + (b[1] >> 5)) % span_pages;
	op->dest = SPAN_BASE + align_down(dest, align) * page_size;
	op->new_nr = 1 + (b[4] * 8UL + (b[1] >> 5)) % window_pages;
}

static int nr_ops(size_t size)
{
	size_t n = size ? (size - 1) / OP_BYTES : 0;

	return n > MAX_OPS ? MAX_OPS : (int)n;
}

static void print_op(FILE *f, int i, const struct op *op)
{
	fprintf(f, "%3d P%d %s", i, op->proc, op_names[op->kind]);
	switch (op->kind) {
	case OP_FORK:
	case OP_EXIT:
		break;
	case OP_RELEASE:
	case OP_FILL:
	case OP_DEVREAD:
		fprintf(f, " set %d (or the next held)", op->arg % NR_HELD);
		if (op->kind == OP_RELEASE)
			fprintf(f, "%s", op->arg & 4 ? " dirty" : "");
		if (op->kind == OP_FILL)
			fprintf(f, " value %#x", op->value);
		break;
	default:
		fprintf(f, " %#lx +%lu pages", op->addr, op->nr);
		break;
	}
	switch (op->kind) {
	case OP_MMAP:
	case OP_MPROTECT:
		fprintf(f, " prot %s%s%s", prot_names[op->arg & 3],
			op->kind == OP_MPROTECT ? "" : op->arg & 4 ?
			" +hugepage" : op->arg & 8 ? " +nohugepage" : "",
			op->kind == OP_MMAP && (op->arg & 16) ? " +fixed" : "");
		break;
	case OP_MADVISE:
		fprintf(f, " %s", advice_of(op->arg)->word);
		break;
	case OP_LOAD:
	case OP_STORE:
		fprintf(f, " at +%#lx cpu %d", slot_offset(op->slot), op->cpu);
		if (op->kind == OP_STORE)
			fprintf(f, " value %#x", op->value);
		break;
	case OP_GUP:
		fprintf(f, " %s%s%s%s", op->arg & 1 ? "PIN" : "GET",
			op->arg & 2 ? "|WRITE" : "",
			op->arg & 4 ? "|LONGTERM" : "",
			op->arg & 8 ? "|FAST_ONLY" : "");
		break;
	case OP_MREMAP:
		fprintf(f, " to %#lx", op->dest);
		break;
	case OP_RESIZE:
		fprintf(f, " to %lu pages", op->new_nr);
		break;
	default:
		break;
	}
}

static void print_result(FILE *f, const struct result *r)
{
	fprintf(f, "ret %d digest %016llx", r->ret,
		(unsigned long long)r->digest);
}

/*
 * The input as a policy line and one line per operation, with its result
 * in @run for the first @done ones, and in @other (if any) where that
 * differs.
 */
static void print_sequence(FILE *f, const uint8_t *data, size_t size,
			   const struct run *run, const struct run *other,
			   int done)
{
	struct op op;
	int i;

	fprintf(f, "policies: 4 pages %s, 16 pages %s, PMD %s\n",
		policy_name(policy_of(data[0], 0)),
		policy_name(policy_of(data[0], 2)),
		policy_name(policy_of(data[0], 4)));
	for (i = 0; i < nr_ops(size); i++) {
		decode_op(data + 1 + i * OP_BYTES, &op);
		print_op(f, i, &op);
		if (run && i < done) {
			fprintf(f, ": ");
			print_result(f, &run->res[i]);
		}
		if (other && i < done &&
		    (other->res[i].ret != run->res[i].ret ||
		     other->res[i].digest != run->res[i].digest)) {
			fprintf(f, " (baseline: ");
			print_result(f, &other->res[i]);
			fputc(')', f);
		}
		fputc('\n', f);
	}
}

/* FNV-1a, 64 bits. */
static uint64_t digest_add(uint64_t h, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++, v >>= 8) {
		h ^= v & 0xff;
		h *= 0x100000001b3ULL;
	}
	return h;
}

#define DIGEST_INIT 0xcbf29ce484222325ULL

/* What a device reading a held set sees, at every probe offset. */
static uint64_t digest_pages(const struct pb_pages *pages)
{
	unsigned long i, nr = pb_pages_count(pages);
	uint64_t h = digest_add(DIGEST_INIT, nr);
	int s;

	for (i = 0; i < nr; i++) {
		pb_pages_read(pages, i, page_buf, page_size);
		for (s = 0; s < NR_PROBES; s++)
			h = digest_add(h, page_buf[slot_offset(s)]);
	}
	return h;
}

/* load/store: one byte per page, stopping at the first failure. */
static void do_access(struct pb_proc *p, const struct op *op,
		      struct result *r)
{
	unsigned long i, off = slot_offset(op->slot);
	uint64_t h = DIGEST_INIT;
	uint8_t v = op->value;
	int ret = 0;

	for (i = 0; i < op->nr && !ret; i++) {
		unsigned long addr = op->addr + i * page_size + off;

		if (op->kind == OP_STORE) {
			ret = pb_store(p, op->cpu, addr, v);
		} else {
			ret = pb_load(p, op->cpu, addr, &v);
			if (!ret)
				h = digest_add(h, v);
		}
	}
	r->ret = ret;
	r->digest = digest_add(h, i);
}

static void do_gup(struct run *run, struct pb_proc *p, const struct op *op,
		   struct result *r)
{
	unsigned int flags = (op->arg & 1 ? PB_FOLL_PIN : PB_FOLL_GET) |
			     (op->arg & 2 ? PB_FOLL_WRITE : 0) |
			     (op->arg & 4 ? PB_FOLL_LONGTERM : 0) |
			     (op->arg & 8 ? PB_FOLL_FAST_ONLY : 0);
	int i;

	for (i = 0; i < NR_HELD && run->held[i].pages; i++)
		;
	if (i == NR_HELD) {
		r->ret = R_NO_SLOT;
		return;
	}
	r->ret = pb_gup_fast(p, op->addr, op->nr, flags, &run->held[i].pages);
	if (r->ret) {
		run->held[i].pages = NULL;
		return;
	}
	run->held[i].flags = flags;
	r->digest = digest_pages(run->held[i].pages);
}

/*
 * release, fill, devread: an operation on held set arg % NR_HELD, or on
 * the next one that holds pages if that one is free.
 */
static void do_held(struct run *run, const struct op *op, struct result *r)
{
	struct held *h = NULL;
	int i;

	for (i = 0; i < NR_HELD && !h; i++)
		if (run->held[(op->arg + i) % NR_HELD].pages)
			h = &run->held[(op->arg + i) % NR_HELD];
	if (!h) {
		r->ret = R_NOT_HELD;
		return;
	}
	r->digest = h - run->held;
	switch (op->kind) {
	case OP_RELEASE:
		pb_pages_release(h->pages, op->arg & 4);
		h->pages = NULL;
		break;
	case OP_FILL:
		/* A device writes only where it was allowed to. */
		if (!(h->flags & PB_FOLL_WRITE)) {
			r->ret = R_READ_ONLY;
			break;
		}
		pb_pages_fill(h->pages, op->value);
		break;
	default:
		r->digest = digest_add(digest_pages(h->pages), r->digest);
		break;
	}
}

static void do_fork(struct run *run, struct pb_proc *p, struct result *r)
{
	int c;

	for (c = 0; c < NR_PROCS && run->procs[c]; c++)
		;
	if (c == NR_PROCS) {
		r->ret = R_NO_SLOT;
		return;
	}
	r->ret = pb_fork(p, &run->procs[c]);
	if (r->ret)
		run->procs[c] = NULL;
	r->digest = c;
}

static void do_op(struct run *run, const struct op *op, struct result *r)
{
	struct pb_proc *p = run->procs[op->proc];
	unsigned long len = op->nr * page_size;

	r->ret = 0;
	r->digest = 0;
	if (!p && op->kind != OP_RELEASE && op->kind != OP_FILL &&
	    op->kind != OP_DEVREAD) {
		r->ret = R_NO_PROC;
		return;
	}
	switch (op->kind) {
	case OP_MMAP:
		/* bit 4: MAP_FIXED, replacing what is there */
		r->ret = pb_mmap_flags(p, op->addr, len, op->arg & 3,
				       op->arg & 16 ? PB_MAP_FIXED : 0);
		if (!r->ret && (op->arg & 12))
			r->ret = pb_madvise(p, op->addr, len, op->arg & 4 ?
					    MADV_HUGEPAGE :
					    MADV_NOHUGEPAGE);
		break;
	case OP_MUNMAP:
		r->ret = pb_munmap(p, op->addr, len);
		break;
	case OP_MPROTECT:
		r->ret = pb_mprotect(p, op->addr, len, op->arg & 3);
		break;
	case OP_MADVISE:
		r->ret = pb_madvise(p, op->addr, len,
				    advice_of(op->arg)->value);
		break;
	case OP_LOAD:
	case OP_STORE:
		do_access(p, op, r);
		break;
	case OP_FORK:
		do_fork(run, p, r);
		break;
	case OP_EXIT:
		pb_exit(p);
		run->procs[op->proc] = NULL;
		break;
	case OP_GUP:
		do_gup(run, p, op, r);
		break;
	case OP_RELEASE:
	case OP_FILL:
	case OP_DEVREAD:
		do_held(run, op, r);
		break;
	case OP_SPLIT:
		r->ret = pb_split_pmd(p, op->addr, len);
		break;
	case OP_MREMAP:
		r->ret = pb_mremap(p, op->addr, len, op->dest);
		break;
	case OP_RESIZE:
		r->ret = pb_mremap_resize(p, op->addr, len,
					  op->new_nr * page_size);
		break;
	}
}

/* Note whether free model memory is down to the headroom. */
static void sample_memory(struct run *run)
{
	if (pb_frames_in_use() + OPS_HEADROOM / page_size >= total_frames)
		run->tight = true;
}

static int16_t *readback_at(const struct run *run, int proc,
			    unsigned long page)
{
	return run->readback + (proc * read_pages + page) * NR_PROBES;
}

/* Every probe of every page a live process may load, through CPU 0. */
static void read_back(struct run *run)
{
	unsigned long i;
	uint8_t v;
	int p, s, ret;

	for (p = 0; p < NR_PROCS; p++) {
		run->live[p] = run->procs[p];
		if (!run->procs[p])
			continue;
		for (i = 0; i < read_pages; i++) {
			unsigned long addr = SPAN_BASE + i * page_size;
			int16_t *out = readback_at(run, p, i);

			for (s = 0, ret = 0; s < NR_PROBES; s++) {
				/* One page, one protection: all fail alike. */
				if (!ret)
					ret = pb_load(run->procs[p], 0,
						      addr + slot_offset(s), &v);
				out[s] = ret ? ret : v;
			}
		}
	}
}

/* Say what went wrong under @variant, show the sequence, abort. */
static void __attribute__((noreturn))
fail(const char *variant, const uint8_t *data, size_t size,
     const struct run *run, const struct run *baseline, int done,
     const char *what, const char *report)
{
	fprintf(stderr, "fuzz_ops: variant %s: %s\n", variant, what);
	print_sequence(stderr, data, size, run, baseline, done);
	if (report)
		fputs(report, stderr);
	abort();
}

/* pb_check() after operation @done - 1; abort on a violation. */
static void check(const char *variant, const uint8_t *data, size_t size,
		  const struct run *run, int done)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);

	if (!mem)
		abort();
	if (pb_check(mem)) {
		fclose(mem);
		fail(variant, data, size, run, NULL, done,
		     done ? "invariant violated after the last operation shown"
			  : "invariant violated before any operation", text);
	}
	fclose(mem);
	free(text);
}

static void run_variant(int v, const uint8_t *data, size_t size,
			struct run *run)
{
	struct pb_config cfg = { .memory_bytes = OPS_MEMORY };
	const char *name;
	struct pb_variant variant;
	unsigned long frames;
	struct op op;
	int i, n = nr_ops(size);

	if (pb_init(&cfg))
		abort();
	name = fuzz_variant(v, &variant);
	pb_set_variant(&variant);
	if (pb_set_thp_policy(4 * page_size, policies[policy_of(data[0], 0)]) ||
	    pb_set_thp_policy(16 * page_size, policies[policy_of(data[0], 2)]) ||
	    pb_set_thp_policy(window_pages * page_size,
			      policies[policy_of(data[0], 4)]))
		abort();
	frames = pb_frames_in_use();
	if (pb_proc_create(&run->procs[0]))
		abort();
	for (i = 0; i < n; i++) {
		decode_op(data + 1 + i * OP_BYTES, &op);
		do_op(run, &op, &run->res[i]);
		sample_memory(run);
		check(name, data, size, run, i + 1);
	}
	read_back(run);
	sample_memory(run);
	for (i = 0; i < NR_HELD; i++)
		if (run->held[i].pages)
			pb_pages_release(run->held[i].pages, false);
	for (i = NR_PROCS - 1; i >= 0; i--)
		if (run->procs[i])
			pb_exit(run->procs[i]);
	check(name, data, size, run, n);
	if (pb_frames_in_use() != frames) {
		char what[128];

		snprintf(what, sizeof(what), "%lu frames in use after the end,"
			 " %lu before the start", pb_frames_in_use(), frames);
		fail(name, data, size, run, NULL, n, what, NULL);
	}
	pb_fini();
}

/* Hold run @b (variant @v) to run @a (variant 0). */
static void compare(int v, const uint8_t *data, size_t size,
		    const struct run *a, const struct run *b)
{
	struct pb_variant variant;
	const char *name = fuzz_variant(v, &variant);
	const char *base = fuzz_variant(0, &variant);
	unsigned long i;
	char what[256];
	int n = nr_ops(size), p, s;

	for (i = 0; i < (unsigned long)n; i++) {
		const struct result *x = &a->res[i], *y = &b->res[i];

		if (x->ret == y->ret && x->digest == y->digest)
			continue;
		snprintf(what, sizeof(what), "operation %lu: ret %d digest"
			 " %016llx, under %s ret %d digest %016llx", i, y->ret,
			 (unsigned long long)y->digest, base, x->ret,
			 (unsigned long long)x->digest);
		fail(name, data, size, b, a, n, what, NULL);
	}
	for (p = 0; p < NR_PROCS; p++) {
		if (a->live[p] != b->live[p])
			fail(name, data, size, b, a, n, "another set of"
			     " processes is alive at the end", NULL);
		if (!a->live[p])
			continue;
		for (i = 0; i < read_pages; i++) {
			const int16_t *x = readback_at(a, p, i);
			const int16_t *y = readback_at(b, p, i);

			for (s = 0; s < NR_PROBES; s++) {
				if (x[s] == y[s])
					continue;
				snprintf(what, sizeof(what), "P%d loads %d from"
					 " %#lx, under %s %d", p, y[s],
					 SPAN_BASE + i * page_size +
					 slot_offset(s), base, x[s]);
				fail(name, data, size, b, a, n, what, NULL);
			}
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct run runs[FUZZ_NR_VARIANTS];
	bool tight = false;
	int v;

	if (!size)
		return 0;
	if (!page_size) {
		page_size = pb_page_size();
		window_pages = pb_pmd_size() / page_size;
		span_pages = NR_WINDOWS * window_pages;
		read_pages = span_pages + window_pages;
		total_frames = OPS_MEMORY / page_size;
		page_buf = malloc(page_size);
		if (!page_buf)
			abort();
	}
	for (v = 0; v < FUZZ_NR_VARIANTS; v++) {
		int16_t *rb = runs[v].readback;

		memset(&runs[v], 0, sizeof(runs[v]));
		if (!rb)
			rb = malloc(NR_PROCS * read_pages * NR_PROBES *
				    sizeof(*rb));
		if (!rb)
			abort();
		runs[v].readback = rb;
		run_variant(v, data, size, &runs[v]);
		tight |= runs[v].tight;
	}
	if (getenv("FUZZ_VERBOSE"))
		print_sequence(stdout, data, size, &runs[0], NULL,
			       nr_ops(size));
	if (tight)
		return 0;
	for (v = 1; v < FUZZ_NR_VARIANTS; v++)
		compare(v, data, size, &runs[0], &runs[v]);
	return 0;
}
