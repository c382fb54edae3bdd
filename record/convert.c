// SPDX-License-Identifier: GPL-2.0-only
/*
 * convert.c - replay a trace against a picture of each address space and
 * write what it did to private anonymous memory as scenario statements.
 *
 * The picture: per address space (mm) the intervals the traced program
 * mapped, each private anonymous one belonging to a scenario region (the
 * region's offset 0 is the address its mmap returned), the others kept
 * only to say which faults were left out.  A fault on a region becomes one
 * access of a `touch` statement; the system calls become the statements of
 * the same name, clipped to the regions they covered.
 *
 * Tasks: threads (CLONE_VM|CLONE_THREAD) act for their process; a vfork
 * child (CLONE_VM without CLONE_THREAD) acts in its parent's address space
 * until its execve, which makes it a process of its own (`spawn`); a fork
 * is `fork`; an execve of a process with regions is `exec`.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "record/convert.h"
#include "scenario/vocab.h"

/* Linux's values (x86-64), as the tracepoints report them. */
#define L_PROT_READ	0x1
#define L_PROT_WRITE	0x2
#define L_PROT_EXEC	0x4
#define L_MAP_SHARED	0x01
#define L_MAP_PRIVATE	0x02
#define L_MAP_TYPE	0x0f
#define L_MAP_ANONYMOUS	0x20
#define L_MAP_POPULATE	0x8000
#define L_MREMAP_DONTUNMAP 0x4
#define L_CLONE_VM	0x100
#define L_CLONE_VFORK	0x4000
#define L_CLONE_THREAD	0x10000
#define L_O_DIRECT	0x4000
#define L_F_SETFL	4
#define X86_PF_WRITE	0x2
#define USER_ADDR_END	(1ULL << 47)

/* How many accesses (or `@R`/`r`/`w` switches) one touch statement holds. */
#define TOUCH_MAX_TOKENS 16384
#define MAX_FDS 4096

enum vmr_kind { VMR_ANON, VMR_FILE, VMR_SHARED };

struct vmr {
	uint64_t start, end;
	int region;		/* VMR_ANON: the scenario region */
	uint8_t kind;		/* enum vmr_kind */
	uint8_t prot;		/* enum scn_prot */
	bool dontfork;
	bool faulted;		/* left-out mappings: counted once */
};

struct cmm {
	struct vmr *v;
	size_t nr, cap;
	bool brk_known;
	uint64_t brk_start, brk_cur;
	int heap;		/* the brk heap's region, -1 none */
	int users;		/* processes using it (1; a dead one 0) */
	/*
	 * Each region's length as the scenario's backends track it for
	 * this process (set by mmap, mremap and resize, not by munmap):
	 * resize is mremap(base, that length, LEN), so it is right only
	 * where that length is the mapping's.
	 */
	struct region_len { int region; uint64_t len; } *lens;
	size_t nr_lens, cap_lens;
	int lineage;		/* the address space's line (see struct lineage) */
	/* The region each cluster of the lineage has in this mm. */
	struct cluster_region { int cluster; int region; } *cregs;
	size_t nr_cregs, cap_cregs;
};

/*
 * A lineage is one address space's history: a fresh one at each execve
 * (and spawn), shared with the children it forks, whose addresses mean
 * the same things.  The first pass notes every range its private
 * anonymous mappings ever covered; ranges that overlap or touch form a
 * cluster, and the second pass gives each cluster one region: reserved
 * PROT_NONE from end to end, the program's mappings placed in it with
 * mmap-fixed, its munmaps putting the reservation back.  Mappings Linux
 * placed side by side so stay side by side, and merge into one VMA
 * where Linux merged them (a large folio may cross their border, as it
 * could in the program); the PROT_NONE rest is never touched, so it
 * changes no fault.
 */
struct span { uint64_t lo, hi; };
struct lineage {
	struct span *s;
	size_t nr, cap;
};

struct cregion {
	char name[SCN_NAME_MAX + 1];
	uint64_t base;		/* the address of offset 0 */
	uint64_t room;		/* the length resize may reach */
	bool reserved;		/* a cluster's: PROT_NONE where unmapped */
};

struct cproc {
	int mm;
	bool alive;
	uint8_t *dio_fds;	/* MAX_FDS flags: opened with O_DIRECT */
};

struct ctask {
	int32_t pid;
	int proc;		/* -1: before the root's first execve */
	bool shares;		/* a vfork child in its parent's mm */
};

/* The touch statement being gathered. */
struct touch {
	int proc;		/* -1: none */
	int region;
	char mode;
	uint64_t run_off, run_n;
	int tokens;
	char *buf;
	size_t len, cap;
};

struct conv {
	const struct rec_convert_opts *o;
	FILE *out, *err;
	struct rec_summary *sum;
	unsigned long page;
	struct cmm *mms;
	int nr_mms;
	size_t cap_mms;
	struct cregion *regions;
	int nr_regions;
	size_t cap_regions;
	int nr_heaps;
	struct cproc procs[SCN_MAX_PROCS];
	int nr_procs;
	struct ctask *tasks;
	int nr_tasks;
	size_t cap_tasks;
	uint64_t heap_room;
	struct touch t;
	int error;		/* the first -errno; output stops */
	bool collect;		/* the first pass: note spans, write nothing */
	struct lineage *lins;
	int nr_lins, nr_lins_noted;
	size_t cap_lins;
};

static int __attribute__((format(printf, 2, 3)))
conv_fail(struct conv *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->error) {
		va_start(ap, fmt);
		fputs("ptebatch: record: ", c->err);
		vfprintf(c->err, fmt, ap);
		fputc('\n', c->err);
		va_end(ap);
		c->error = -EINVAL;
	}
	return c->error;
}

/*
 * Room for one more element in a growing array: *@arrp holds @nr elements
 * of @size bytes with room for *@cap; a full one doubles.  0, or -ENOMEM
 * with the array as it was.
 */
static int grow_array(void *arrp, size_t *cap, size_t nr, size_t size)
{
	void *arr, *bigger;
	size_t n;

	if (nr < *cap)
		return 0;
	n = *cap ? 2 * *cap : 16;
	memcpy(&arr, arrp, sizeof(arr));
	bigger = realloc(arr, n * size);
	if (!bigger)
		return -ENOMEM;
	memcpy(arrp, &bigger, sizeof(bigger));
	*cap = n;
	return 0;
}

static uint64_t page_align(const struct conv *c, uint64_t x)
{
	return (x + c->page - 1) & ~(uint64_t)(c->page - 1);
}

static uint64_t page_down(const struct conv *c, uint64_t x)
{
	return x & ~(uint64_t)(c->page - 1);
}

static int scn_prot_of(uint64_t prot)
{
	if (prot & L_PROT_WRITE)
		return SCN_PROT_RW;
	if (prot & (L_PROT_READ | L_PROT_EXEC))
		return SCN_PROT_R;
	return SCN_PROT_NONE;
}

/* ---- the touch statement ---- */

static int touch_append(struct conv *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int touch_append(struct conv *c, const char *fmt, ...)
{
	struct touch *t = &c->t;
	va_list ap;
	int n;

	if (t->cap - t->len < 64) {
		size_t cap = t->cap ? 2 * t->cap : 65536;
		char *buf = realloc(t->buf, cap);

		if (!buf)
			return c->error = -ENOMEM;
		t->buf = buf;
		t->cap = cap;
	}
	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
	va_end(ap);
	t->len += (size_t)n;
	t->tokens++;
	return 0;
}

static void touch_end_run(struct conv *c)
{
	struct touch *t = &c->t;

	if (!t->run_n)
		return;
	if (t->run_n == 1)
		touch_append(c, " %#" PRIx64, t->run_off);
	else
		touch_append(c, " %#" PRIx64 "+%" PRIu64, t->run_off, t->run_n);
	t->run_n = 0;
}

static void flush_touch(struct conv *c)
{
	struct touch *t = &c->t;

	if (t->proc < 0)
		return;
	touch_end_run(c);
	if (!c->error && !c->collect) {
		fprintf(c->out, "P%d touch%.*s\n", t->proc, (int)t->len, t->buf);
		c->sum->statements++;
		c->sum->touch_statements++;
	}
	t->proc = -1;
	t->region = -1;
	t->mode = 0;
	t->len = 0;
	t->tokens = 0;
}

static void add_access(struct conv *c, int proc, int region, uint64_t off,
		       bool write)
{
	struct touch *t = &c->t;
	char mode = write ? 'w' : 'r';

	if (t->proc != proc || t->tokens >= TOUCH_MAX_TOKENS)
		flush_touch(c);
	t->proc = proc;
	if (t->run_n && t->region == region && t->mode == mode &&
	    off == t->run_off + t->run_n * c->page) {
		t->run_n++;
		return;
	}
	touch_end_run(c);
	if (t->region != region) {
		touch_append(c, " @%s", c->regions[region].name);
		t->region = region;
	}
	if (t->mode != mode) {
		touch_append(c, " %c", mode);
		t->mode = mode;
	}
	t->run_off = off;
	t->run_n = 1;
}

/* Any other statement: the gathered accesses come first. */
static void __attribute__((format(printf, 3, 4)))
emit(struct conv *c, int proc, const char *fmt, ...)
{
	va_list ap;

	flush_touch(c);
	if (c->error || c->collect)
		return;
	fprintf(c->out, "P%d ", proc);
	va_start(ap, fmt);
	vfprintf(c->out, fmt, ap);
	va_end(ap);
	fputc('\n', c->out);
	c->sum->statements++;
}

/* ---- address spaces ---- */

static int new_lineage(struct conv *c)
{
	if (grow_array(&c->lins, &c->cap_lins, (size_t)c->nr_lins,
		       sizeof(*c->lins)))
		return c->error = -ENOMEM;
	/* The second pass meets the lineages in the same order: kept. */
	if (c->collect || c->nr_lins >= c->nr_lins_noted)
		memset(&c->lins[c->nr_lins], 0, sizeof(c->lins[0]));
	return c->nr_lins++;
}

/* @lineage: the parent's for a fork, -1 for a fresh address space. */
static int new_mm(struct conv *c, int lineage)
{
	if (grow_array(&c->mms, &c->cap_mms, (size_t)c->nr_mms,
		       sizeof(*c->mms)))
		return c->error = -ENOMEM;
	if (lineage < 0 && (lineage = new_lineage(c)) < 0)
		return lineage;
	memset(&c->mms[c->nr_mms], 0, sizeof(c->mms[0]));
	c->mms[c->nr_mms].heap = -1;
	c->mms[c->nr_mms].users = 1;
	c->mms[c->nr_mms].lineage = lineage;
	return c->nr_mms++;
}

/* The first interval ending after @addr (nr if none). */
static size_t vmr_after(const struct cmm *m, uint64_t addr)
{
	size_t lo = 0, hi = m->nr;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (m->v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct vmr *vmr_find(struct cmm *m, uint64_t addr)
{
	size_t i = vmr_after(m, addr);

	return i < m->nr && m->v[i].start <= addr ? &m->v[i] : NULL;
}

static int vmr_insert_at(struct conv *c, struct cmm *m, size_t i,
			 const struct vmr *v)
{
	if (grow_array(&m->v, &m->cap, m->nr, sizeof(*m->v)))
		return c->error = -ENOMEM;
	memmove(&m->v[i + 1], &m->v[i], (m->nr - i) * sizeof(*v));
	m->v[i] = *v;
	m->nr++;
	return 0;
}

/* Split intervals so that none straddles @addr. */
static int vmr_split(struct conv *c, struct cmm *m, uint64_t addr)
{
	size_t i = vmr_after(m, addr);
	struct vmr tail;

	if (i >= m->nr || m->v[i].start >= addr)
		return 0;
	tail = m->v[i];
	tail.start = addr;
	m->v[i].end = addr;
	return vmr_insert_at(c, m, i + 1, &tail);
}

/* The intervals inside [s, e) after splitting at both ends: [*first, *last). */
static int vmr_range(struct conv *c, struct cmm *m, uint64_t s, uint64_t e,
		     size_t *first, size_t *last)
{
	size_t i;

	if (vmr_split(c, m, s) || vmr_split(c, m, e))
		return c->error;
	*first = vmr_after(m, s);
	for (i = *first; i < m->nr && m->v[i].start < e; i++)
		;
	*last = i;
	return 0;
}

static void vmr_delete(struct cmm *m, size_t first, size_t last)
{
	if (first == last)
		return;		/* also: no array yet */
	memmove(&m->v[first], &m->v[last], (m->nr - last) * sizeof(m->v[0]));
	m->nr -= last - first;
}

/* A new interval over [s, e), which the caller has emptied. */
static int vmr_add(struct conv *c, struct cmm *m, const struct vmr *v)
{
	return vmr_insert_at(c, m, vmr_after(m, v->start), v);
}

static uint64_t tracked_len(const struct cmm *m, int region)
{
	size_t i;

	for (i = 0; i < m->nr_lens; i++)
		if (m->lens[i].region == region)
			return m->lens[i].len;
	return 0;
}

static int set_tracked_len(struct conv *c, struct cmm *m, int region,
			   uint64_t len)
{
	size_t i;

	for (i = 0; i < m->nr_lens; i++)
		if (m->lens[i].region == region)
			break;
	if (i == m->nr_lens) {
		if (grow_array(&m->lens, &m->cap_lens, m->nr_lens,
			       sizeof(*m->lens)))
			return c->error = -ENOMEM;
		m->lens[m->nr_lens++].region = region;
	}
	m->lens[i].len = len;
	return 0;
}

/*
 * Statements over the anonymous parts of [s, e) in @proc's mm, one per
 * stretch of one region: "VERB R OFF LEN SUFFIX".  Holes and other
 * mappings between are skipped, as the system call skipped them.
 */
static void for_anon_pieces(struct conv *c, int proc, uint64_t s, uint64_t e,
			    const char *verb, const char *suffix)
{
	struct cmm *m = &c->mms[c->procs[proc].mm];
	size_t i = vmr_after(m, s);

	if (e <= s)
		return;		/* empty, or past the end of the address space */
	while (i < m->nr && m->v[i].start < e) {
		struct vmr *v = &m->v[i];
		uint64_t ps, pe;
		int region;

		if (v->kind != VMR_ANON) {
			i++;
			continue;
		}
		region = v->region;
		ps = v->start > s ? v->start : s;
		pe = v->end < e ? v->end : e;
		/* Merge following intervals of the same region without a gap. */
		while (i + 1 < m->nr && m->v[i + 1].kind == VMR_ANON &&
		       m->v[i + 1].region == region && m->v[i + 1].start == pe &&
		       pe < e) {
			i++;
			pe = m->v[i].end < e ? m->v[i].end : e;
		}
		emit(c, proc, "%s %s %#" PRIx64 " %#" PRIx64 "%s", verb,
		     c->regions[region].name, ps - c->regions[region].base,
		     pe - ps, suffix);
		i++;
	}
}

/* The region's end in this mm: where its last interval ends. */
static uint64_t region_end(const struct cmm *m, int region)
{
	uint64_t end = 0;
	size_t i;

	for (i = 0; i < m->nr; i++)
		if (m->v[i].kind == VMR_ANON && m->v[i].region == region)
			end = m->v[i].end;
	return end;
}

/*
 * munmap's effect on the picture and the statements for it: munmap of
 * each piece of a region, or for a cluster's region mmap-fixed PROT_NONE
 * (the reservation back).  Pieces of region @except are dropped from the
 * picture without a statement: the caller's mmap-fixed replaces them.
 */
static int unmap_range_except(struct conv *c, int proc, uint64_t s,
			      uint64_t e, int except)
{
	struct cmm *m = &c->mms[c->procs[proc].mm];
	size_t first, last, i;

	if (e <= s)
		return 0;
	if (vmr_range(c, m, s, e, &first, &last))
		return c->error;
	for (i = first; i < last; i++) {
		struct vmr *v = &m->v[i];
		struct cregion *r;
		uint64_t pe = v->end;

		if (v->kind != VMR_ANON || v->region == except)
			continue;
		r = &c->regions[v->region];
		/* One statement for neighbouring pieces of one region. */
		while (i + 1 < last && m->v[i + 1].kind == VMR_ANON &&
		       m->v[i + 1].region == v->region && m->v[i + 1].start == pe)
			pe = m->v[++i].end;
		if (r->reserved)
			emit(c, proc, "mmap-fixed %s %#" PRIx64 " %#" PRIx64 " %s",
			     r->name, v->start - r->base, pe - v->start,
			     scn_prot_word(SCN_PROT_NONE));
		else
			emit(c, proc, "munmap %s %#" PRIx64 " %#" PRIx64, r->name,
			     v->start - r->base, pe - v->start);
	}
	vmr_delete(m, first, last);
	if (m->heap >= 0 && !region_end(m, m->heap))
		m->heap = -1;
	return 0;
}

static int unmap_range(struct conv *c, int proc, uint64_t s, uint64_t e)
{
	return unmap_range_except(c, proc, s, e, -1);
}

static int new_region(struct conv *c, const char *prefix, int number,
		      uint64_t base, uint64_t room)
{
	struct cregion *r;

	/* The first pass maps without clusters: more regions, none written. */
	if (c->nr_regions == SCN_MAX_REGIONS && !c->collect)
		return conv_fail(c, "the program made more than %d private"
				 " anonymous mappings, more regions than a"
				 " scenario may have", SCN_MAX_REGIONS);
	if (grow_array(&c->regions, &c->cap_regions, (size_t)c->nr_regions,
		       sizeof(*c->regions)))
		return c->error = -ENOMEM;
	r = &c->regions[c->nr_regions];
	snprintf(r->name, sizeof(r->name), "%s%d", prefix, number);
	r->base = base;
	r->room = room;
	r->reserved = false;
	c->sum->regions++;
	return c->nr_regions++;
}

/* " at OFF" for a region starting at @addr, "" on a 2M boundary. */
static const char *at_clause(char *buf, size_t len, uint64_t addr)
{
	uint64_t at = addr & (SCN_REGION_ALIGN - 1);

	if (!at)
		return "";
	snprintf(buf, len, " at %#" PRIx64, at);
	return buf;
}

/* The default room of a region created at @addr, @len long. */
static uint64_t default_room(uint64_t addr, uint64_t len)
{
	uint64_t at = addr & (SCN_REGION_ALIGN - 1);

	return scenario_room_end(at + len) - at;
}

/* A new region over [addr, addr + len), emptied by the caller. */
static int map_region(struct conv *c, int proc, uint64_t addr, uint64_t len,
		      int prot, bool populate)
{
	struct vmr v = { addr, addr + len, -1, VMR_ANON, (uint8_t)prot, false, false };
	char at[40];
	int r;

	if (len > SCN_MAX_REGION_LEN) {
		c->sum->huge_mappings++;
		return 0;
	}
	r = new_region(c, "m", c->nr_regions + 1, addr, default_room(addr, len));
	if (r < 0)
		return r;
	v.region = r;
	emit(c, proc, "mmap %s %#" PRIx64 " %s%s%s", c->regions[r].name, len,
	     scn_prot_word(prot), at_clause(at, sizeof(at), addr),
	     populate ? " populate" : "");
	if (set_tracked_len(c, &c->mms[c->procs[proc].mm], r, len))
		return c->error;
	return vmr_add(c, &c->mms[c->procs[proc].mm], &v);
}

/* Is [s, e) one region's, without holes?  Its id, else -1. */
static int covering_region(struct cmm *m, uint64_t s, uint64_t e)
{
	size_t i = vmr_after(m, s);
	uint64_t at = s;
	int region = -1;

	for (; i < m->nr && at < e; i++) {
		struct vmr *v = &m->v[i];

		if (v->start > at || v->kind != VMR_ANON ||
		    (region >= 0 && v->region != region))
			return -1;
		region = v->region;
		at = v->end;
	}
	return at >= e ? region : -1;
}

/* First pass: [lo, hi) was private anonymous memory in @proc's lineage. */
static void note_span(struct conv *c, int proc, uint64_t lo, uint64_t hi)
{
	struct lineage *l = &c->lins[c->mms[c->procs[proc].mm].lineage];

	if (!c->collect || hi <= lo)
		return;
	if (grow_array(&l->s, &l->cap, l->nr, sizeof(*l->s))) {
		c->error = -ENOMEM;
		return;
	}
	l->s[l->nr].lo = lo;
	l->s[l->nr++].hi = hi;
}

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Between the passes: each lineage's spans merged into its clusters. */
static void make_clusters(struct conv *c)
{
	int i;

	for (i = 0; i < c->nr_lins; i++) {
		struct lineage *l = &c->lins[i];
		size_t n, out = 0;

		if (!l->nr)
			continue;
		qsort(l->s, l->nr, sizeof(l->s[0]), cmp_span);
		for (n = 1; n < l->nr; n++) {
			if (l->s[n].lo <= l->s[out].hi) {
				if (l->s[n].hi > l->s[out].hi)
					l->s[out].hi = l->s[n].hi;
			} else {
				l->s[++out] = l->s[n];
			}
		}
		l->nr = out + 1;
	}
	c->nr_lins_noted = c->nr_lins;
}

/*
 * Second pass: the region of the cluster holding [lo, hi) in @proc's mm,
 * made (reserved PROT_NONE end to end) when the mm has none yet; -1 where
 * there is no cluster to use (the first pass, a cluster longer than a
 * region may be): the caller then gives the mapping a region of its own.
 * A cluster that is [lo, hi) itself needs no reservation: its region is
 * made by a plain mmap of @prot (and @populate), and *@mapped says so.
 */
static int cluster_region(struct conv *c, int proc, uint64_t lo, uint64_t hi,
			  const char *prefix, int prot, bool populate,
			  bool *mapped)
{
	struct cmm *m = &c->mms[c->procs[proc].mm];
	const struct lineage *l;
	size_t a = 0, b, i;
	char at[40];
	int r;

	if (c->collect || m->lineage >= c->nr_lins_noted)
		return -1;
	l = &c->lins[m->lineage];
	b = l->nr;
	while (a < b) {
		size_t mid = (a + b) / 2;

		if (l->s[mid].hi <= lo)
			a = mid + 1;
		else
			b = mid;
	}
	if (a >= l->nr || l->s[a].lo > lo || l->s[a].hi < hi ||
	    l->s[a].hi - l->s[a].lo > SCN_MAX_REGION_LEN)
		return -1;
	*mapped = false;
	for (i = 0; i < m->nr_cregs; i++)
		if (m->cregs[i].cluster == (int)a)
			return m->cregs[i].region;
	if (grow_array(&m->cregs, &m->cap_cregs, m->nr_cregs,
		       sizeof(*m->cregs)))
		return c->error = -ENOMEM;
	r = new_region(c, prefix, c->nr_regions + 1, l->s[a].lo,
		       default_room(l->s[a].lo, l->s[a].hi - l->s[a].lo));
	if (r < 0)
		return r;
	*mapped = l->s[a].lo == lo && l->s[a].hi == hi;
	if (*mapped) {
		struct vmr v = { lo, hi, r, VMR_ANON, (uint8_t)prot, false, false };

		emit(c, proc, "mmap %s %#" PRIx64 " %s%s%s", c->regions[r].name,
		     hi - lo, scn_prot_word(prot),
		     at_clause(at, sizeof(at), lo),
		     populate ? " populate" : "");
		if (vmr_add(c, m, &v))
			return c->error;
	} else {
		c->regions[r].reserved = true;
		emit(c, proc, "mmap %s %#" PRIx64 " %s%s", c->regions[r].name,
		     l->s[a].hi - l->s[a].lo, scn_prot_word(SCN_PROT_NONE),
		     at_clause(at, sizeof(at), l->s[a].lo));
	}
	if (set_tracked_len(c, m, r, l->s[a].hi - l->s[a].lo))
		return c->error;
	m->cregs[m->nr_cregs].cluster = (int)a;
	m->cregs[m->nr_cregs++].region = r;
	return r;
}

/* [s, e) mapped anew with @prot inside cluster region @r. */
static void map_in_cluster(struct conv *c, int proc, int r, uint64_t s,
			   uint64_t e, int prot)
{
	struct vmr v = { s, e, r, VMR_ANON, (uint8_t)prot, false, false };

	if (e <= s || unmap_range_except(c, proc, s, e, r))
		return;
	emit(c, proc, "mmap-fixed %s %#" PRIx64 " %#" PRIx64 " %s",
	     c->regions[r].name, s - c->regions[r].base, e - s,
	     scn_prot_word(prot));
	vmr_add(c, &c->mms[c->procs[proc].mm], &v);
}

static void do_mmap(struct conv *c, int proc, const struct rec_event *e)
{
	struct cmm *m = &c->mms[c->procs[proc].mm];
	uint64_t addr = (uint64_t)e->ret, len = page_align(c, e->b);
	bool anon = (e->d & L_MAP_ANONYMOUS) &&
		    (e->d & L_MAP_TYPE) == L_MAP_PRIVATE;
	size_t first, last;
	int prot = scn_prot_of(e->c), region;
	bool mapped;

	if (e->ret < 0 || !len)
		return;
	if (anon && len > SCN_MAX_REGION_LEN) {
		c->sum->huge_mappings++;
		anon = false;
	}
	if (anon)
		note_span(c, proc, addr, addr + len);
	if (anon && (region = cluster_region(c, proc, addr, addr + len, "m",
					      prot, e->d & L_MAP_POPULATE,
					      &mapped)) >= 0) {
		if (mapped)
			return;
		map_in_cluster(c, proc, region, addr, addr + len, prot);
		/* MAP_POPULATE: the faults it takes, as the advice takes them. */
		if ((e->d & L_MAP_POPULATE) && prot != SCN_PROT_NONE)
			emit(c, proc, "madvise %s %#" PRIx64 " %#" PRIx64 " %s",
			     c->regions[region].name,
			     addr - c->regions[region].base, len,
			     scn_advice_word(prot == SCN_PROT_RW ?
					     MADV_POPULATE_WRITE :
					     MADV_POPULATE_READ));
		return;
	}
	if (anon && (region = covering_region(m, addr, addr + len)) >= 0) {
		/* MAP_FIXED over the region's own pages: it stays the region. */
		struct vmr v = { addr, addr + len, region, VMR_ANON,
				 (uint8_t)prot, false, false };

		emit(c, proc, "mmap-fixed %s %#" PRIx64 " %#" PRIx64 " %s",
		     c->regions[region].name, addr - c->regions[region].base,
		     len, scn_prot_word(prot));
		if (vmr_range(c, m, addr, addr + len, &first, &last))
			return;
		vmr_delete(m, first, last);
		vmr_add(c, m, &v);
		return;
	}
	if (unmap_range(c, proc, addr, addr + len))
		return;
	if (anon) {
		map_region(c, proc, addr, len, prot, e->d & L_MAP_POPULATE);
	} else {
		struct vmr v = { addr, addr + len, -1,
				 (e->d & L_MAP_TYPE) == L_MAP_PRIVATE ?
				 VMR_FILE : VMR_SHARED, (uint8_t)prot, false, false };

		if (v.kind == VMR_FILE)
			c->sum->file_mappings++;
		else
			c->sum->shared_mappings++;
		vmr_add(c, m, &v);
	}
}

/* One interval of @region from its start to its end in this mm? */
static bool region_whole(const struct cmm *m, const struct cregion *r,
			 int region)
{
	const struct vmr *v = vmr_find((struct cmm *)m, r->base);

	return v && v->kind == VMR_ANON && v->region == region &&
	       region_end(m, region) == v->end;
}

/*
 * Grow @region in place to end at @new_end, as resize does when the
 * region is one mapping with room; else the grown part becomes a region
 * of its own (an approximation: Linux made it one VMA with the rest).
 */
static void grow_region(struct conv *c, int proc, int region, uint64_t old_end,
			uint64_t new_end, int prot)
{
	struct cmm *m = &c->mms[c->procs[proc].mm];
	struct cregion *r = &c->regions[region];
	struct vmr *v;

	note_span(c, proc, old_end, new_end);
	if (r->reserved && new_end - r->base <= tracked_len(m, region)) {
		/* Inside its cluster: the new part merges as Linux's grew. */
		map_in_cluster(c, proc, region, old_end, new_end, prot);
		return;
	}
	if (unmap_range(c, proc, old_end, new_end))
		return;
	v = vmr_find(m, old_end - 1);
	if (v && region_whole(m, r, region) && region_end(m, region) == old_end &&
	    tracked_len(m, region) == old_end - r->base &&
	    new_end - r->base <= r->room &&
	    new_end - r->base <= SCN_MAX_REGION_LEN) {
		emit(c, proc, "resize %s %#" PRIx64, r->name, new_end - r->base);
		v->end = new_end;
		set_tracked_len(c, m, region, new_end - r->base);
		return;
	}
	c->sum->approximations++;
	map_region(c, proc, old_end, new_end - old_end, prot, false);
}

/*
 * Cut @region back to end at @new_end (from @old_end): resize where the
 * region is one mapping from its start and its tracked length is right,
 * else munmap of the tail, which Linux's shrink is.
 */
static void shrink_region(struct conv *c, int proc, int region,
			  uint64_t old_end, uint64_t new_end)
{
	struct cmm *m = &c->mms[c->procs[proc].mm];
	struct cregion *r = &c->regions[region];
	size_t first, last;

	if (!r->reserved && new_end > r->base && region_whole(m, r, region) &&
	    region_end(m, region) == old_end &&
	    tracked_len(m, region) == old_end - r->base) {
		emit(c, proc, "resize %s %#" PRIx64, r->name, new_end - r->base);
		if (vmr_range(c, m, new_end, old_end, &first, &last))
			return;
		vmr_delete(m, first, last);
		set_tracked_len(c, m, region, new_end - r->base);
		return;
	}
	unmap_range(c, proc, new_end, old_end);
}

static void do_mremap(struct conv *c, int proc, const struct rec_event *e)
{
	struct cmm *m = &c->mms[c->procs[proc].mm];
	uint64_t old = e->a, old_len = page_align(c, e->b);
	uint64_t new_len = page_align(c, e->c), to = (uint64_t)e->ret, moved;
	bool dontunmap = e->d & L_MREMAP_DONTUNMAP;
	struct vmr *v = vmr_find(m, old), copy;
	size_t first, last;
	int s;

	/* Linux refuses these lengths; a stream that says otherwise lies. */
	if (e->ret < 0 || !v || !old_len || !new_len)
		return;
	if (v->kind == VMR_ANON) {
		/* The old range lies in one mapping, or Linux said EFAULT. */
		size_t i = (size_t)(v - m->v);
		uint64_t end = v->end;

		while (i + 1 < m->nr && m->v[i + 1].start == end &&
		       m->v[i + 1].kind == VMR_ANON &&
		       m->v[i + 1].region == v->region)
			end = m->v[++i].end;
		if (old_len > end - old)
			return;
	}
	copy = *v;
	if (v->kind != VMR_ANON) {
		/* A file mapping moved: only the picture changes. */
		if (to != old && !dontunmap && (unmap_range(c, proc, old, old + old_len)))
			return;
		if (unmap_range(c, proc, to, to + new_len))
			return;
		copy.start = to;
		copy.end = to + new_len;
		vmr_add(c, m, &copy);
		return;
	}
	if (to == old) {
		if (new_len < old_len)
			shrink_region(c, proc, v->region, old + old_len,
				      old + new_len);
		else if (new_len > old_len)
			grow_region(c, proc, v->region, old + old_len,
				    old + new_len, v->prot);
		return;
	}
	/* Moved: shrink first, move, then grow the new region. */
	note_span(c, proc, to, to + new_len);
	if (new_len < old_len && unmap_range(c, proc, old + new_len, old + old_len))
		return;
	moved = new_len < old_len ? new_len : old_len;
	if (unmap_range(c, proc, to, to + moved))
		return;
	s = new_region(c, "m", c->nr_regions + 1, to, default_room(to, moved));
	if (s < 0)
		return;
	emit(c, proc, "mremap %s %#" PRIx64 " %#" PRIx64 " %s %#" PRIx64 "%s",
	     c->regions[copy.region].name, old - c->regions[copy.region].base,
	     moved, c->regions[s].name, to & (SCN_REGION_ALIGN - 1),
	     dontunmap ? " dontunmap" : "");
	m = &c->mms[c->procs[proc].mm];
	if (!dontunmap) {
		if (vmr_range(c, m, old, old + moved, &first, &last))
			return;
		vmr_delete(m, first, last);
		/* A cluster keeps its reservation where the pages left. */
		if (c->regions[copy.region].reserved)
			emit(c, proc, "mmap-fixed %s %#" PRIx64 " %#" PRIx64 " %s",
			     c->regions[copy.region].name,
			     old - c->regions[copy.region].base, moved,
			     scn_prot_word(SCN_PROT_NONE));
	}
	copy.start = to;
	copy.end = to + moved;
	copy.region = s;
	if (vmr_add(c, m, &copy) || set_tracked_len(c, m, s, moved))
		return;
	if (new_len > old_len)
		grow_region(c, proc, s, to + moved, to + new_len, copy.prot);
}

static void do_brk(struct conv *c, int proc, const struct rec_event *e)
{
	struct cmm *m = &c->mms[c->procs[proc].mm];
	uint64_t hs, old_end, new_end, room;
	char at[40];

	if (e->ret <= 0)
		return;
	if (!m->brk_known) {
		/* The first brk(0) says where the heap starts. */
		if (e->a == 0) {
			m->brk_known = true;
			m->brk_start = m->brk_cur = (uint64_t)e->ret;
		}
		return;
	}
	hs = page_align(c, m->brk_start);
	old_end = page_align(c, m->brk_cur);
	new_end = page_align(c, (uint64_t)e->ret);
	m->brk_cur = (uint64_t)e->ret;
	if (new_end == old_end)
		return;
	if (new_end > hs)
		note_span(c, proc, hs, new_end);
	if (m->heap >= 0) {
		int heap = m->heap;

		if (new_end <= hs)
			unmap_range(c, proc, hs, old_end);
		else if (new_end < old_end)
			shrink_region(c, proc, heap, old_end, new_end);
		else
			grow_region(c, proc, heap, old_end, new_end, SCN_PROT_RW);
		return;
	}
	if (new_end > hs) {
		struct vmr v = { hs, new_end, -1, VMR_ANON, SCN_PROT_RW, false, false };
		bool mapped;
		int r = cluster_region(c, proc, hs, new_end, "heap", SCN_PROT_RW,
				       false, &mapped);

		if (r < 0 && new_end - hs > SCN_MAX_REGION_LEN) {
			c->sum->huge_mappings++;
			return;
		}
		if (r >= 0) {
			if (!mapped)
				map_in_cluster(c, proc, r, hs, new_end, SCN_PROT_RW);
			c->mms[c->procs[proc].mm].heap = r;
			return;
		}
		if (unmap_range(c, proc, hs, new_end))
			return;
		room = c->heap_room;
		if (room < new_end - hs)	/* outgrew heap_room()'s guess */
			room = new_end - hs;
		r = new_region(c, "heap", ++c->nr_heaps, hs, room);
		if (r < 0)
			return;
		v.region = r;
		emit(c, proc, "mmap %s %#" PRIx64 " rw%s room %#" PRIx64,
		     c->regions[r].name, new_end - hs,
		     at_clause(at, sizeof(at), hs), room);
		m = &c->mms[c->procs[proc].mm];
		m->heap = r;
		if (!set_tracked_len(c, m, r, new_end - hs))
			vmr_add(c, m, &v);
	}
}

/*
 * The word a madvise of @advice is written with (scenario/vocab.c), NULL
 * for an advice the language lacks.  MADV_DONTNEED_LOCKED is dontneed:
 * the two differ only on locked memory, which a scenario has none of.
 */
static const char *advice_word(uint64_t advice)
{
	if (advice == MADV_DONTNEED_LOCKED)
		advice = MADV_DONTNEED;
	return advice <= INT_MAX ? scn_advice_word((int)advice) : NULL;
}

static void set_flag_range(struct conv *c, struct cmm *m, uint64_t s,
			   uint64_t e, int prot, int dontfork)
{
	size_t first, last, i;

	if (vmr_range(c, m, s, e, &first, &last))
		return;
	for (i = first; i < last; i++) {
		if (prot >= 0)
			m->v[i].prot = (uint8_t)prot;
		if (dontfork >= 0)
			m->v[i].dontfork = dontfork;
	}
}

static void do_madvise(struct conv *c, int proc, const struct rec_event *e)
{
	struct cmm *m = &c->mms[c->procs[proc].mm];
	uint64_t s = e->a, end = s + page_align(c, e->b);
	const char *word = advice_word(e->c);
	char suffix[32];

	/* -ENOMEM: a hole in the range, and the rest was done. */
	if (e->ret && e->ret != -ENOMEM)
		return;
	if (!word) {
		c->sum->ignored_advice++;
		return;
	}
	snprintf(suffix, sizeof(suffix), " %s", word);
	for_anon_pieces(c, proc, s, end, "madvise", suffix);
	if (e->c == MADV_DONTFORK || e->c == MADV_DOFORK)
		set_flag_range(c, m, s, end, -1, e->c == MADV_DONTFORK);
}

static void do_mprotect(struct conv *c, int proc, const struct rec_event *e)
{
	uint64_t s = e->a, end = s + page_align(c, e->b);
	int prot = scn_prot_of(e->c);
	char suffix[16];

	if (e->ret)
		return;
	snprintf(suffix, sizeof(suffix), " %s", scn_prot_word(prot));
	for_anon_pieces(c, proc, s, end, "mprotect", suffix);
	set_flag_range(c, &c->mms[c->procs[proc].mm], s, end, prot, -1);
}

static void do_fault(struct conv *c, int proc, const struct rec_event *e)
{
	struct cmm *m = &c->mms[c->procs[proc].mm];
	bool write = e->b & X86_PF_WRITE;
	struct vmr *v;

	if (e->a >= USER_ADDR_END)
		return;
	v = vmr_find(m, e->a);
	if (!v) {
		c->sum->other_faults++;
		return;
	}
	if (v->kind != VMR_ANON) {
		if (v->kind == VMR_FILE)
			c->sum->file_faults++;
		else
			c->sum->shared_faults++;
		return;
	}
	if (write ? v->prot != SCN_PROT_RW : v->prot == SCN_PROT_NONE) {
		c->sum->refused_faults++;
		return;
	}
	c->sum->faults++;
	if (e->kind == REC_FAULT_KERNEL)
		c->sum->faults_kernel++;
	add_access(c, proc, v->region,
		   page_down(c, e->a) - c->regions[v->region].base, write);
}

/* ---- tasks and processes ---- */

static struct ctask *find_task(struct conv *c, int32_t pid)
{
	int i;

	for (i = c->nr_tasks - 1; i >= 0; i--)
		if (c->tasks[i].pid == pid)
			return &c->tasks[i];
	return NULL;
}

static struct ctask *add_task(struct conv *c, int32_t pid, int proc,
			      bool shares)
{
	struct ctask *t;

	if (grow_array(&c->tasks, &c->cap_tasks, (size_t)c->nr_tasks,
		       sizeof(*c->tasks))) {
		c->error = -ENOMEM;
		return NULL;
	}
	t = &c->tasks[c->nr_tasks++];
	t->pid = pid;
	t->proc = proc;
	t->shares = shares;
	return t;
}

static void drop_task(struct conv *c, struct ctask *t)
{
	*t = c->tasks[--c->nr_tasks];
}

static int new_proc(struct conv *c, int mm)
{
	struct cproc *p;

	if (c->nr_procs == SCN_MAX_PROCS)
		return conv_fail(c, "the program made more than %d processes,"
				 " more than a scenario may have", SCN_MAX_PROCS);
	p = &c->procs[c->nr_procs];
	p->mm = mm;
	p->alive = true;
	p->dio_fds = calloc(MAX_FDS, 1);
	if (!p->dio_fds)
		return c->error = -ENOMEM;
	c->sum->processes++;
	return c->nr_procs++;
}

static void do_newtask(struct conv *c, struct ctask *parent,
		       const struct rec_event *e)
{
	int32_t child = (int32_t)e->a;
	int pproc = parent->proc, q, mm;
	struct cmm *pm, *cm;
	size_t i;

	if (find_task(c, child))
		return;
	if ((e->b & L_CLONE_VM) || pproc < 0) {
		/* A thread, or a vfork child in the parent's address space. */
		add_task(c, child, pproc, pproc >= 0 && !(e->b & L_CLONE_THREAD));
		return;
	}
	mm = new_mm(c, c->mms[c->procs[pproc].mm].lineage);
	if (mm < 0)
		return;
	q = new_proc(c, mm);
	if (q < 0)
		return;
	emit(c, pproc, "fork P%d", q);
	pm = &c->mms[c->procs[pproc].mm];
	cm = &c->mms[mm];
	cm->brk_known = pm->brk_known;
	cm->brk_start = pm->brk_start;
	cm->brk_cur = pm->brk_cur;
	cm->heap = pm->heap;
	for (i = 0; i < pm->nr; i++) {
		if (pm->v[i].dontfork)
			continue;
		if (vmr_insert_at(c, cm, cm->nr, &pm->v[i]))
			return;
		pm = &c->mms[c->procs[pproc].mm];
		cm = &c->mms[mm];
	}
	for (i = 0; i < pm->nr_lens; i++)
		if (set_tracked_len(c, cm, pm->lens[i].region, pm->lens[i].len))
			return;
	if (pm->nr_cregs) {
		cm->cregs = malloc(pm->nr_cregs * sizeof(*cm->cregs));
		if (!cm->cregs) {
			c->error = -ENOMEM;
			return;
		}
		memcpy(cm->cregs, pm->cregs, pm->nr_cregs * sizeof(*cm->cregs));
		cm->nr_cregs = cm->cap_cregs = pm->nr_cregs;
	}
	memcpy(c->procs[q].dio_fds, c->procs[pproc].dio_fds, MAX_FDS);
	add_task(c, child, q, false);
}

static bool mm_has_regions(const struct cmm *m)
{
	size_t i;

	for (i = 0; i < m->nr; i++)
		if (m->v[i].kind == VMR_ANON)
			return true;
	return false;
}

/* execve: the mm starts over, a new lineage. */
static void reset_mm(struct conv *c, struct cmm *m)
{
	int l = new_lineage(c);

	if (l >= 0)
		m->lineage = l;
	m->nr_cregs = 0;
	m->nr = 0;
	m->nr_lens = 0;
	m->brk_known = false;
	m->heap = -1;
}

static void do_execve(struct conv *c, struct ctask *t)
{
	int mm, q;

	if (t->proc < 0) {
		/* The root's first execve: the program starts, as P0. */
		if (c->nr_procs)
			return;
		mm = new_mm(c, -1);
		if (mm < 0 || new_proc(c, mm) < 0)
			return;
		t->proc = 0;
		return;
	}
	if (t->shares) {
		mm = new_mm(c, -1);
		if (mm < 0)
			return;
		q = new_proc(c, mm);
		if (q < 0)
			return;
		emit(c, t->proc, "spawn P%d", q);
		memcpy(c->procs[q].dio_fds, c->procs[t->proc].dio_fds, MAX_FDS);
		t->proc = q;
		t->shares = false;
		return;
	}
	if (mm_has_regions(&c->mms[c->procs[t->proc].mm]))
		emit(c, t->proc, "exec");
	reset_mm(c, &c->mms[c->procs[t->proc].mm]);
}

static void do_exit(struct conv *c, struct ctask *t, const struct rec_event *e)
{
	int proc = t->proc, i;

	if (proc >= 0 && !t->shares && e->a && c->procs[proc].alive) {
		emit(c, proc, "exit");
		c->procs[proc].alive = false;
		reset_mm(c, &c->mms[c->procs[proc].mm]);
		/* Its threads go with it. */
		for (i = c->nr_tasks - 1; i >= 0; i--)
			if (c->tasks[i].proc == proc && &c->tasks[i] != t &&
			    !c->tasks[i].shares)
				drop_task(c, &c->tasks[i]);
		t = find_task(c, e->pid);
	}
	if (t)
		drop_task(c, t);
}

/* O_DIRECT: which descriptors read and write pages by pinning them. */
static void do_fd_event(struct conv *c, int proc, const struct rec_event *e)
{
	uint8_t *fds = c->procs[proc].dio_fds;
	uint64_t s, end;

	switch (e->kind) {
	case REC_OPEN:
		if (e->ret >= 0 && e->ret < MAX_FDS)
			fds[e->ret] = !!(e->c & L_O_DIRECT);
		break;
	case REC_CLOSE:
		if (!e->ret && e->a < MAX_FDS)
			fds[e->a] = 0;
		break;
	case REC_FCNTL:
		if (!e->ret && e->b == L_F_SETFL && e->a < MAX_FDS)
			fds[e->a] = !!(e->c & L_O_DIRECT);
		break;
	case REC_READ:
	case REC_WRITE:
		if (e->ret <= 0 || e->a >= MAX_FDS || !fds[e->a])
			break;
		s = page_down(c, e->b);
		end = page_align(c, e->b + (uint64_t)e->ret);
		c->sum->dio++;
		for_anon_pieces(c, proc, s, end,
				e->kind == REC_READ ? "dio-read" : "dio-write", "");
		break;
	}
}

/*
 * The largest heap any process's brk reached: every heap's room.  A
 * task's heap starts at its first brk(0) after it starts or execs, as
 * do_brk() takes it; a later brk(0) only asks where the break is.  This
 * is a first guess (a forked child's heap is its parent's, and is not
 * followed here): a heap that outgrows it is mapped with room for itself.
 */
static uint64_t heap_room(const struct conv *c, const struct rec_stream *s)
{
	struct { int32_t pid; bool known; uint64_t start; } seen[256];
	int nr = 0, i;
	uint64_t most = 0, room;
	size_t n;

	for (n = 0; n < s->nr; n++) {
		const struct rec_event *e = &s->ev[n];

		if (e->kind != REC_BRK && e->kind != REC_EXECVE)
			continue;
		for (i = 0; i < nr && seen[i].pid != e->pid; i++)
			;
		if (e->kind == REC_EXECVE) {
			if (i < nr && !e->ret)	/* a new image: a new heap */
				seen[i].known = false;
			continue;
		}
		if (e->ret <= 0)
			continue;
		if (i == nr) {
			if (e->a || nr == 256)
				continue;
			seen[nr].pid = e->pid;
			seen[nr++].known = false;
		}
		if (!seen[i].known) {
			if (!e->a) {
				seen[i].known = true;
				seen[i].start = (uint64_t)e->ret;
			}
			continue;
		}
		if ((uint64_t)e->ret > seen[i].start &&
		    (uint64_t)e->ret - seen[i].start > most)
			most = (uint64_t)e->ret - seen[i].start;
	}
	room = (most + c->page + 2 * SCN_REGION_ALIGN) & ~(SCN_REGION_ALIGN - 1);
	if (room < SCN_RESIZE_ROOM)
		room = SCN_RESIZE_ROOM;
	return room > SCN_MAX_REGION_LEN ? SCN_MAX_REGION_LEN : room;
}

/*
 * Linux returns and accepts only page-aligned addresses in the memory
 * system calls that succeed; a stream where one is not was not written
 * by a kernel (or was damaged), and converting it would write ranges the
 * language refuses.
 */
static bool event_aligned(struct conv *c, const struct rec_event *e)
{
	uint64_t addr;

	switch (e->kind) {
	case REC_MMAP:
		addr = (uint64_t)e->ret;
		break;
	case REC_MUNMAP:
	case REC_MPROTECT:
	case REC_MADVISE:
		addr = e->a;
		break;
	case REC_MREMAP:
		addr = e->a | (e->ret >= 0 ? (uint64_t)e->ret : 0);
		break;
	default:
		return true;
	}
	if (e->ret < 0 || (e->ret > 0 && e->kind != REC_MMAP &&
	    e->kind != REC_MREMAP))
		return true;	/* failed: nothing happened */
	if (!(addr & (c->page - 1)))
		return true;
	conv_fail(c, "event at %" PRIu64 " (pid %d): %s at %#" PRIx64 " is not"
		  " page-aligned: not a stream a kernel wrote", e->ts, e->pid,
		  rec_kind_name(e->kind), addr);
	return false;
}

static void convert_event(struct conv *c, const struct rec_event *e)
{
	struct ctask *t = find_task(c, e->pid);
	int proc;

	if (!t)
		return;		/* not of the traced tree */
	/*
	 * A task whose process has exited went with it.  Linux keeps no such
	 * task, but a trace may (a vfork child past its parent's exit_group):
	 * nothing is written for a process after its exit.
	 */
	if (t->proc >= 0 && !c->procs[t->proc].alive) {
		drop_task(c, t);
		return;
	}
	if (e->kind == REC_EXECVE) {
		if (!e->ret)
			do_execve(c, t);
		return;
	}
	if (e->kind == REC_EXIT) {
		do_exit(c, t, e);
		return;
	}
	if (e->kind == REC_NEWTASK) {
		do_newtask(c, t, e);
		return;
	}
	proc = t->proc;
	if (c->collect && (e->kind == REC_FAULT_USER || e->kind == REC_FAULT_KERNEL))
		return;		/* the first pass needs the mappings only */
	if (!event_aligned(c, e))
		return;
	if (proc < 0) {
		if (e->kind == REC_FAULT_USER || e->kind == REC_FAULT_KERNEL)
			c->sum->early_faults++;
		return;
	}
	switch (e->kind) {
	case REC_FAULT_USER:
	case REC_FAULT_KERNEL:
		do_fault(c, proc, e);
		break;
	case REC_MMAP:
		do_mmap(c, proc, e);
		break;
	case REC_MUNMAP:
		if (!e->ret)
			unmap_range(c, proc, e->a, e->a + page_align(c, e->b));
		break;
	case REC_MPROTECT:
		do_mprotect(c, proc, e);
		break;
	case REC_MADVISE:
		do_madvise(c, proc, e);
		break;
	case REC_MREMAP:
		do_mremap(c, proc, e);
		break;
	case REC_BRK:
		do_brk(c, proc, e);
		break;
	default:
		do_fd_event(c, proc, e);
		break;
	}
}

void rec_summary_print(FILE *f, const struct rec_summary *s, const char *prefix)
{
	fprintf(f, "%srecorded: %lu faults on private anonymous memory (%lu"
		" taken in the kernel), %lu processes, %lu regions, %lu"
		" statements\n", prefix, s->faults, s->faults_kernel,
		s->processes, s->regions, s->statements);
	if (s->file_faults || s->file_mappings)
		fprintf(f, "%sleft out: %lu faults on %lu file-backed private"
			" mappings\n", prefix, s->file_faults, s->file_mappings);
	if (s->shared_faults || s->shared_mappings)
		fprintf(f, "%sleft out: %lu faults on %lu shared mappings\n",
			prefix, s->shared_faults, s->shared_mappings);
	if (s->other_faults)
		fprintf(f, "%sleft out: %lu faults on what execve mapped (the"
			" program, the main stack, the vdso)\n", prefix,
			s->other_faults);
	if (s->early_faults)
		fprintf(f, "%sleft out: %lu faults before the first execve\n",
			prefix, s->early_faults);
	if (s->refused_faults)
		fprintf(f, "%sleft out: %lu faults the protection refused"
			" (SIGSEGV)\n", prefix, s->refused_faults);
	if (s->huge_mappings)
		fprintf(f, "%sleft out: %lu anonymous mappings longer than"
			" %luG\n", prefix, s->huge_mappings,
			SCN_MAX_REGION_LEN >> 30);
	if (s->ignored_advice)
		fprintf(f, "%sleft out: %lu madvise calls with advice the"
			" language lacks\n", prefix, s->ignored_advice);
	if (s->approximations)
		fprintf(f, "%sapproximated: %lu in-place grows written as a"
			" region of their own\n", prefix, s->approximations);
	if (s->dio)
		fprintf(f, "%sO_DIRECT: %lu reads and writes written as"
			" dio-read/dio-write\n", prefix, s->dio);
}

static int max_int(int a, int b)
{
	return a > b ? a : b;
}

/* Forget one pass's picture (the lineages' clusters stay). */
static void pass_free(struct conv *c)
{
	int i;

	for (i = 0; i < c->nr_mms; i++) {
		free(c->mms[i].v);
		free(c->mms[i].lens);
		free(c->mms[i].cregs);
	}
	free(c->mms);
	c->mms = NULL;
	c->nr_mms = c->cap_mms = 0;
	free(c->regions);
	c->regions = NULL;
	c->nr_regions = c->cap_regions = 0;
	c->nr_heaps = 0;
	for (i = 0; i < c->nr_procs; i++)
		free(c->procs[i].dio_fds);
	c->nr_procs = 0;
	free(c->tasks);
	c->tasks = NULL;
	c->nr_tasks = c->cap_tasks = 0;
	c->t.proc = -1;
	c->t.region = -1;
	c->t.mode = 0;
	c->t.len = 0;
	c->t.tokens = 0;
	c->t.run_n = 0;
}

/* One pass over the stream: the first notes spans, the second writes. */
static void run_pass(struct conv *c, const struct rec_stream *s)
{
	size_t n;

	memset(c->sum, 0, sizeof(*c->sum));
	c->nr_lins = 0;
	if (!add_task(c, s->root, -1, false))
		return;
	for (n = 0; n < s->nr && !c->error; n++)
		convert_event(c, &s->ev[n]);
	flush_touch(c);
}

int rec_convert(const struct rec_stream *s, const struct rec_convert_opts *o,
		FILE *out, struct rec_summary *sum, FILE *err)
{
	struct rec_summary local = { 0 };
	struct conv c = { .o = o, .err = err, .sum = sum ? sum : &local };
	char *body = NULL;
	size_t body_len = 0;
	int i;

	c.page = o->page_size ? o->page_size : 4096;
	c.t.proc = -1;
	c.t.region = -1;
	c.heap_room = heap_room(&c, s);
	c.collect = true;
	run_pass(&c, s);
	pass_free(&c);
	if (c.error)
		goto out;
	make_clusters(&c);
	c.collect = false;
	c.out = open_memstream(&body, &body_len);
	if (!c.out) {
		c.error = -ENOMEM;
		goto out;
	}
	run_pass(&c, s);
	if (fclose(c.out) && !c.error)
		c.error = -ENOMEM;
	c.out = NULL;
	if (c.error)
		goto out;
	if (!c.nr_procs) {
		conv_fail(&c, "the trace has no execve of the traced command"
			  " (pid %d)", s->root);
		goto out;
	}
	fprintf(out, "# recorded by ptebatch record");
	if (o->machine)
		fprintf(out, " on %s", o->machine);
	fprintf(out, "\n");
	if (o->command)
		fprintf(out, "# command: %s\n", o->command);
	rec_summary_print(out, c.sum, "# ");
	for (i = 0; i < SCN_NR_MTHP_SIZES; i++)
		if (o->mthp[i] != SCN_POL_NEVER)
			fprintf(out, "mthp %luK %s\n",
				scenario_mthp_size(i) >> 10,
				scn_policy_word(o->mthp[i]));
	fwrite(body, 1, body_len, out);
	/* The language has no empty scenario; this one did nothing. */
	if (!c.sum->statements)
		fprintf(out, "# nothing in the trace touched private anonymous"
			" memory\nP0 exit\n");
	if (ferror(out))
		c.error = -EIO;
out:
	if (c.out)
		fclose(c.out);
	free(body);
	free(c.t.buf);
	pass_free(&c);
	for (i = 0; i < max_int(c.nr_lins, c.nr_lins_noted); i++)
		free(c.lins[i].s);
	free(c.lins);
	return c.error;
}
