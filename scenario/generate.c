// SPDX-License-Identifier: GPL-2.0-only
/*
 * generate.c - random scenarios from the whole .scn language, for
 * `ptebatch diff --random` (see generate.h).
 *
 * Every statement kind the parser accepts is drawn: mthp settings for
 * every size and policy, mmap with each of its options, mmap-fixed,
 * resize, munmap, mprotect, madvise with every advice scenario/vocab.c
 * gives a draw number, write and read (strides, values), touch, fork,
 * spawn, exec, exit, register and unregister, vmsplice and drain,
 * dio-write and dio-read, mremap (with dontunmap), split and observe;
 * the words are vocab.c's.  Ranges are drawn on 4K, 16K, 64K and 2M
 * grains, so that they cut large folios, cover them exactly, or cross a
 * PMD; regions are at most a few megabytes, so that a run takes tens of
 * milliseconds on the kernel.
 *
 * What the generator leaves out, and why: vmsplice ranges past 1M, whose
 * pipe this machine may not make (/proc/sys/fs/pipe-max-size), a host
 * limit the kernel backend skips on.  Nothing is left out for the
 * kernel's nondeterminism: khugepaged collapsing pages during a run, or a
 * large folio falling back, is detected by the kernel backend from the
 * kernel's own counters and the run skipped (docs/MODEL.md, "Random
 * differential testing").  A controlled share of the statements fail on
 * purpose (gen_invalid()); others fail because of what came before.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/generate.h"
#include "scenario/live.h"
#include "scenario/scenario.h"
#include "scenario/vocab.h"

#define GEN_MAX_PROCS 8
#define GEN_MAX_REGIONS 24
#define GEN_MAX_HANDLES 16
#define GEN_PAGE 4096UL
#define GEN_2M (2UL << 20)
#define GEN_VMSPLICE_MAX (1UL << 20)

struct gen_region {
	unsigned long max_len;	/* the parser's: ranges must lie inside */
	unsigned long room_len;	/* how long resize can make it */
};

struct gen {
	uint64_t rng;
	FILE *out;
	int nr_procs;
	uint32_t has[GEN_MAX_PROCS];	/* bit r: has region r */
	int nr_regions;
	struct gen_region regions[GEN_MAX_REGIONS];
	int nr_handles;
	/* Who is alive, who holds which handle (scenario/live.h). */
	struct scn_live live;
	uint64_t alive[1];
	struct scn_hold handles[GEN_MAX_HANDLES];
};

_Static_assert(GEN_MAX_PROCS <= 64, "gen.alive is one word");

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t scenario_gen_seed(uint64_t seed, unsigned long index)
{
	uint64_t x = seed, y = index;

	return splitmix64(&x) ^ splitmix64(&y) ^ index;
}

/* 0 .. @n - 1 (the tiny modulo bias does not matter here). */
static unsigned long rnd(struct gen *g, unsigned long n)
{
	return n ? splitmix64(&g->rng) % n : 0;
}

/* True with probability @pct percent. */
static bool chance(struct gen *g, int pct)
{
	return (int)rnd(g, 100) < pct;
}

/* A size the language spells: 4K multiples as K, 1M multiples as M. */
static void put_size(struct gen *g, unsigned long v)
{
	if (v && !(v % (1UL << 20)))
		fprintf(g->out, " %luM", v >> 20);
	else
		fprintf(g->out, " %luK", v >> 10);
}

/*
 * The policies in the order they are drawn: inherit last, so that the
 * PMD size's line, which inherit follows, can leave it out.
 */
static const enum scn_policy policies[] = {
	SCN_POL_ALWAYS, SCN_POL_MADVISE, SCN_POL_NEVER, SCN_POL_INHERIT,
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Mostly rw: a region that can be written is one that has folios. */
static const char *random_prot(struct gen *g)
{
	int r = rnd(g, 100);

	return scn_prot_word(r < 70 ? SCN_PROT_RW : r < 85 ? SCN_PROT_R :
				      SCN_PROT_NONE);
}

/* An advice of those vocab.c lets the generator draw, in its order. */
static const char *random_advice(struct gen *g)
{
	return scn_advice_drawn(rnd(g, scn_nr_advices_drawn()))->word;
}

/* A region length: small ones, one large folio, a PMD, more than a PMD. */
static unsigned long random_len(struct gen *g)
{
	static const unsigned long lens[] = {
		4096, 8192, 16384, 32768, 65536, 128 << 10, 256 << 10,
		512 << 10, 1 << 20, 2 << 20, 2 << 20, (2 << 20) + (64 << 10),
		4 << 20,
	};

	if (chance(g, 15))	/* any page count up to 1M */
		return (1 + rnd(g, 256)) * GEN_PAGE;
	if (chance(g, 4))	/* several PMDs */
		return (6 + 2 * rnd(g, 2)) << 20;
	return lens[rnd(g, ARRAY_SIZE(lens))];
}

/* An offset below 2M: `at` of mmap and mremap. */
static unsigned long random_at(struct gen *g)
{
	if (chance(g, 10))	/* just below a 2M boundary: straddles it */
		return GEN_2M - (1 + rnd(g, 32)) * GEN_PAGE;
	if (chance(g, 50))
		return rnd(g, 32) * (64 << 10);
	return rnd(g, 512) * GEN_PAGE;
}

/*
 * A range inside a region of @max bytes, on a grain of 4K, 16K, 64K or
 * 2M (as long as the region has one), mostly short.
 */
static void random_range(struct gen *g, unsigned long max,
			 unsigned long *off, unsigned long *len)
{
	static const unsigned long grains[] = { 4096, 16384, 65536, GEN_2M };
	unsigned long grain = grains[rnd(g, ARRAY_SIZE(grains))], units, n;

	while (grain > max)
		grain >>= 2;
	if (grain < GEN_PAGE)
		grain = GEN_PAGE;
	units = max / grain;
	if (chance(g, 20)) {		/* the whole region */
		*off = 0;
		*len = max;
		return;
	}
	*off = rnd(g, units) * grain;
	n = (max - *off) / grain;
	if (chance(g, 60) && n > 4)
		n = 4;
	*len = (1 + rnd(g, n)) * grain;
	if (*off + *len > max)		/* a grain that does not divide max */
		*len = max - *off;
}

/* A live process, at random; -1 if none is left. */
static int random_proc(struct gen *g)
{
	int nr = scn_live_nr_alive(&g->live);

	return nr ? scn_live_nth_alive(&g->live, rnd(g, nr)) : -1;
}

/* A region @p has, at random; -1 if it has none. */
static int random_region(struct gen *g, int p)
{
	int have[GEN_MAX_REGIONS], nr = 0, r;

	for (r = 0; r < g->nr_regions; r++)
		if (g->has[p] & (1U << r))
			have[nr++] = r;
	return nr ? have[rnd(g, nr)] : -1;
}

/* "R OFF LEN" of region @r, a random range of it. */
static void put_range(struct gen *g, int r)
{
	unsigned long off, len;

	random_range(g, g->regions[r].max_len, &off, &len);
	fprintf(g->out, " R%d", r);
	put_size(g, off);
	put_size(g, len);
}

static void gen_mthp(struct gen *g)
{
	enum scn_policy policy;
	int i;

	for (i = 0; i < SCN_NR_MTHP_SIZES; i++) {
		unsigned long size = scenario_mthp_size(i);
		/* The PMD size is named more often: inherit follows it. */
		if (!chance(g, i == SCN_NR_MTHP_SIZES - 1 ? 70 : 35))
			continue;
		fprintf(g->out, "mthp");
		put_size(g, size);
		/* inherit follows the 2M line: not for 2M itself. */
		policy = policies[rnd(g, ARRAY_SIZE(policies) -
				      (i == SCN_NR_MTHP_SIZES - 1))];
		fprintf(g->out, " %s\n", scn_policy_word(policy));
	}
}

static void gen_mmap(struct gen *g, int p)
{
	int r = g->nr_regions++;
	unsigned long len = random_len(g), at = 0, room = 0;

	fprintf(g->out, "P%d mmap R%d", p, r);
	put_size(g, len);
	fprintf(g->out, " %s", random_prot(g));
	if (chance(g, 25)) {
		at = random_at(g);
		fprintf(g->out, " at");
		put_size(g, at);
	}
	if (chance(g, 5)) {
		room = len + rnd(g, 64) * (64 << 10);
		fprintf(g->out, " room");
		put_size(g, room);
	}
	if (chance(g, 30))
		fprintf(g->out, chance(g, 60) ? " hugepage" : " nohugepage");
	if (chance(g, 12))
		fprintf(g->out, " populate");
	fputc('\n', g->out);
	g->regions[r].max_len = len;
	g->regions[r].room_len = scenario_region_room_end(at, len, room) - at;
	g->has[p] |= 1U << r;
}

static void gen_access(struct gen *g, int p, int r, bool write)
{
	fprintf(g->out, "P%d %s", p, write ? "write" : "read");
	put_range(g, r);
	if (chance(g, 15)) {
		fprintf(g->out, " stride");
		put_size(g, GEN_PAGE << rnd(g, 5));
	}
	if (write && chance(g, 15))
		fprintf(g->out, " value %lu", rnd(g, 256));
	fputc('\n', g->out);
}

/* touch: one to four runs over the regions @p has. */
static void gen_touch(struct gen *g, int p)
{
	int i, items = 1 + rnd(g, 4), last_r = -1, last_w = -1;

	fprintf(g->out, "P%d touch", p);
	for (i = 0; i < items; i++) {
		int r = random_region(g, p), w = chance(g, 50);
		unsigned long off, len;

		random_range(g, g->regions[r].max_len, &off, &len);
		if (r != last_r)
			fprintf(g->out, " @R%d", r);
		if (w != last_w)
			fprintf(g->out, " %s", w ? "w" : "r");
		last_r = r;
		last_w = w;
		if (len == GEN_PAGE)
			fprintf(g->out, " %lu", off);
		else
			fprintf(g->out, " %lu+%lu", off, len / GEN_PAGE);
	}
	fputc('\n', g->out);
}

static void gen_resize(struct gen *g, int p, int r)
{
	struct gen_region *reg = &g->regions[r];
	unsigned long len;

	if (chance(g, 50))		/* grow, now and then past the room */
		len = reg->max_len + (1 + rnd(g, 8)) * (chance(g, 50) ?
							GEN_PAGE : 64 << 10);
	else
		len = (1 + rnd(g, reg->max_len / GEN_PAGE)) * GEN_PAGE;
	if (chance(g, 3))
		len = reg->room_len + GEN_PAGE;
	fprintf(g->out, "P%d resize R%d", p, r);
	put_size(g, len);
	fputc('\n', g->out);
	/* The parser's rule: a grow within the room may add pages. */
	if (len > reg->max_len && len <= reg->room_len)
		reg->max_len = len;
}

static void gen_mremap(struct gen *g, int p, int r)
{
	int s = g->nr_regions++;
	unsigned long off, len, at = random_at(g);

	random_range(g, g->regions[r].max_len, &off, &len);
	fprintf(g->out, "P%d mremap R%d", p, r);
	put_size(g, off);
	put_size(g, len);
	fprintf(g->out, " R%d", s);
	put_size(g, at);
	fprintf(g->out, "%s\n", chance(g, 30) ? " dontunmap" : "");
	g->regions[s].max_len = len;
	g->regions[s].room_len = scenario_room_end(at + len) - at;
	g->has[p] |= 1U << s;
}

static void gen_new_handle(struct gen *g, int p, int r, enum scn_take take)
{
	int h = g->nr_handles++;

	unsigned long off, len;

	random_range(g, g->regions[r].max_len, &off, &len);
	/*
	 * vmsplice's pipe is as large as the range; a pipe larger than
	 * /proc/sys/fs/pipe-max-size (1M by default) is a host limit the
	 * kernel backend skips on.
	 */
	if (take == SCN_TAKE_VMSPLICE && len > GEN_VMSPLICE_MAX)
		len = GEN_VMSPLICE_MAX;
	fprintf(g->out, "P%d %s H%d R%d", p, take == SCN_TAKE_REGISTER ?
		"register" : "vmsplice", h, r);
	put_size(g, off);
	put_size(g, len);
	fputc('\n', g->out);
	scn_live_take(&g->live, h, p, take);
}

static void release(struct gen *g, int p, int h)
{
	enum scn_take take = g->handles[h].take;

	fprintf(g->out, "P%d %s H%d\n", p,
		take == SCN_TAKE_REGISTER ? "unregister" : "drain", h);
	scn_live_release(&g->live, h, p, take);
}

static int new_proc(struct gen *g, int parent)
{
	int c = g->nr_procs++;

	scn_live_start(&g->live, c);
	g->has[c] = parent >= 0 ? g->has[parent] : 0;
	return c;
}

enum gen_kind {
	G_MMAP, G_WRITE, G_READ, G_TOUCH, G_FORK, G_EXIT, G_SPAWN, G_EXEC,
	G_MPROTECT, G_MADVISE, G_MUNMAP, G_MMAP_FIXED, G_MREMAP, G_RESIZE,
	G_REGISTER, G_UNREGISTER, G_VMSPLICE, G_DRAIN, G_DIO_READ,
	G_DIO_WRITE, G_SPLIT, G_OBSERVE, G_INVALID, G_NR_KINDS
};

/* How often each kind is drawn, relative to the others. */
static const int weights[G_NR_KINDS] = {
	[G_MMAP] = 6, [G_WRITE] = 14, [G_READ] = 6, [G_TOUCH] = 3,
	[G_FORK] = 5, [G_EXIT] = 2, [G_SPAWN] = 1, [G_EXEC] = 1,
	[G_MPROTECT] = 6, [G_MADVISE] = 10, [G_MUNMAP] = 3,
	[G_MMAP_FIXED] = 2, [G_MREMAP] = 3, [G_RESIZE] = 3,
	[G_REGISTER] = 3, [G_UNREGISTER] = 3, [G_VMSPLICE] = 3, [G_DRAIN] = 3,
	[G_DIO_READ] = 3, [G_DIO_WRITE] = 3, [G_SPLIT] = 2, [G_OBSERVE] = 2,
	[G_INVALID] = 3,
};

/*
 * G_INVALID: a range made unusable and then used, so that a known share
 * of the statements (3 in 100) fail on purpose: unmapped, then accessed,
 * pinned, protected, advised or moved (EFAULT or ENOMEM); or made
 * PROT_NONE or read-only, then written or pinned for writing (EFAULT).
 */
static bool gen_invalid(struct gen *g, int p, int r)
{
	static const char *const after_munmap[] = {
		"write", "read", "dio-read", "dio-write", "mprotect", "madvise",
		"split",
	};
	static const char *const after_protect[] = {
		"write", "dio-read", "read",
	};
	unsigned long off, len;
	bool protect = chance(g, 50);
	const char *op;

	random_range(g, g->regions[r].max_len, &off, &len);
	if (!protect) {
		fprintf(g->out, "P%d munmap R%d", p, r);
		op = after_munmap[rnd(g, ARRAY_SIZE(after_munmap))];
	} else {
		fprintf(g->out, "P%d mprotect R%d", p, r);
		op = after_protect[rnd(g, ARRAY_SIZE(after_protect))];
	}
	put_size(g, off);
	put_size(g, len);
	if (protect)
		fprintf(g->out, " %s", scn_prot_word(chance(g, 50) ?
						     SCN_PROT_NONE :
						     SCN_PROT_R));
	fprintf(g->out, "\nP%d %s R%d", p, op, r);
	put_size(g, off);
	put_size(g, len);
	if (!strcmp(op, "mprotect"))
		fprintf(g->out, " %s", random_prot(g));
	else if (!strcmp(op, "madvise"))
		fprintf(g->out, " %s", random_advice(g));
	fputc('\n', g->out);
	return true;
}

static enum gen_kind random_kind(struct gen *g)
{
	int total = 0, i, x;

	for (i = 0; i < G_NR_KINDS; i++)
		total += weights[i];
	x = rnd(g, total);
	for (i = 0; i < G_NR_KINDS; i++) {
		x -= weights[i];
		if (x < 0)
			break;
	}
	return i;
}

/*
 * One statement of process @p; false if the kind drawn cannot be
 * written now (no region, no room for a name, a handle held), to draw
 * again.
 */
static bool gen_statement(struct gen *g, int p)
{
	enum gen_kind kind = random_kind(g);
	int r = random_region(g, p), h;
	bool need_region = !(kind == G_MMAP || kind == G_FORK ||
			     kind == G_EXIT || kind == G_SPAWN ||
			     kind == G_EXEC || kind == G_UNREGISTER ||
			     kind == G_DRAIN || kind == G_OBSERVE);

	if (need_region && r < 0)
		kind = G_MMAP;
	if ((kind == G_MMAP || kind == G_MREMAP) &&
	    g->nr_regions == GEN_MAX_REGIONS)
		return false;
	if ((kind == G_FORK || kind == G_SPAWN) &&
	    g->nr_procs == GEN_MAX_PROCS)
		return false;
	if ((kind == G_REGISTER || kind == G_VMSPLICE) &&
	    g->nr_handles == GEN_MAX_HANDLES)
		return false;

	switch (kind) {
	case G_MMAP:
		gen_mmap(g, p);
		break;
	case G_WRITE:
	case G_READ:
		gen_access(g, p, r, kind == G_WRITE);
		break;
	case G_TOUCH:
		gen_touch(g, p);
		break;
	case G_FORK:
	case G_SPAWN:
		fprintf(g->out, "P%d %s P%d\n", p,
			kind == G_FORK ? "fork" : "spawn",
			new_proc(g, kind == G_FORK ? p : -1));
		break;
	case G_EXIT:
	case G_EXEC:
		if (scn_live_check_leave(&g->live, p))
			return false;
		/* The last process seldom goes: nothing would be left. */
		if (kind == G_EXIT && scn_live_nr_alive(&g->live) == 1 &&
		    !chance(g, 10))
			return false;
		fprintf(g->out, "P%d %s\n", p, kind == G_EXIT ? "exit" : "exec");
		if (kind == G_EXIT)
			scn_live_exit(&g->live, p);
		else
			g->has[p] = 0;
		break;
	case G_MPROTECT:
		fprintf(g->out, "P%d mprotect", p);
		put_range(g, r);
		fprintf(g->out, " %s\n", random_prot(g));
		break;
	case G_MADVISE:
		fprintf(g->out, "P%d madvise", p);
		put_range(g, r);
		fprintf(g->out, " %s\n", random_advice(g));
		break;
	case G_MUNMAP:
	case G_DIO_READ:
	case G_DIO_WRITE:
	case G_SPLIT:
		fprintf(g->out, "P%d %s", p,
			kind == G_MUNMAP ? "munmap" : kind == G_DIO_READ ?
			"dio-read" : kind == G_DIO_WRITE ? "dio-write" :
			"split");
		put_range(g, r);
		fputc('\n', g->out);
		break;
	case G_MMAP_FIXED:
		fprintf(g->out, "P%d mmap-fixed", p);
		put_range(g, r);
		fprintf(g->out, " %s\n", random_prot(g));
		break;
	case G_MREMAP:
		gen_mremap(g, p, r);
		break;
	case G_RESIZE:
		gen_resize(g, p, r);
		break;
	case G_REGISTER:
	case G_VMSPLICE:
		gen_new_handle(g, p, r, kind == G_REGISTER ? SCN_TAKE_REGISTER :
							     SCN_TAKE_VMSPLICE);
		break;
	case G_UNREGISTER:
	case G_DRAIN:
		h = scn_live_held_by(&g->live, p, kind == G_UNREGISTER ?
				     SCN_TAKE_REGISTER : SCN_TAKE_VMSPLICE);
		if (h < 0)
			return false;
		release(g, p, h);
		break;
	case G_OBSERVE:
		fprintf(g->out, "observe\n");
		break;
	case G_INVALID:
		return gen_invalid(g, p, r);
	case G_NR_KINDS:
		return false;
	}
	return true;
}

char *scenario_generate(uint64_t gen_seed, int length, size_t *lenp)
{
	struct gen g;
	char *text = NULL;
	size_t len = 0;
	int i, tries;

	memset(&g, 0, sizeof(g));
	g.live = (struct scn_live){
		.alive = g.alive, .max_procs = GEN_MAX_PROCS,
		.hold = g.handles, .max_handles = GEN_MAX_HANDLES,
	};
	g.rng = gen_seed;
	g.out = open_memstream(&text, &len);
	if (!g.out)
		return NULL;
	gen_mthp(&g);
	new_proc(&g, -1);
	for (i = 0; i < length; i++) {
		int p = random_proc(&g);

		if (p < 0)
			break;
		for (tries = 0; tries < 20; tries++)
			if (gen_statement(&g, p))
				break;
	}
	/* Drain what vmsplice holds, so its bytes are compared too. */
	for (i = 0; i < g.nr_handles; i++)
		if (g.handles[i].held &&
		    g.handles[i].take == SCN_TAKE_VMSPLICE &&
		    scn_live_alive(&g.live, g.handles[i].holder))
			release(&g, g.handles[i].holder, i);
	fprintf(g.out, "observe\n");
	if (fclose(g.out)) {
		free(text);
		return NULL;
	}
	*lenp = len;
	return text;
}
