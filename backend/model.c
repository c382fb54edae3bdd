// SPDX-License-Identifier: GPL-2.0-only
/*
 * model.c - the model backend: runs a scenario on libptebatch, through
 * include/ptebatch.h only.
 *
 * Each statement becomes the pb_* calls a real program's system calls
 * would make, on CPU 0 of the one simulated machine, which runs the
 * variant (batching switches) the options name.  The backend places
 * the regions (scenario/place.c: the language names them; the model
 * wants addresses), keeps
 * the handles a register or vmsplice holds, and measures each statement as
 * the delta of the acting process's fault count and of the cost counters.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "ptebatch.h"
#include "scenario/place.h"
#include "scenario/record.h"

/* pb_observe() is asked for this many pages at a time. */
#define OBSERVE_BATCH 256

/*
 * The per-region state of a process is sized by the scenario's regions
 * (up to SCN_MAX_REGIONS of them), allocated at start: a bitmap of
 * region_words words and nr_regions lengths.
 */
struct model_proc {
	struct pb_proc *pb;	/* NULL before fork, after exit, if fork failed */
	uint64_t *regions;	/* the regions it has */
	/* Each region's length in this process: resize changes it. */
	unsigned long *len;
};

struct model_handle {
	struct pb_pages *pages;	/* NULL when not held */
	bool dirty;		/* register: the device may have written */
};

struct model {
	struct backend base;
	struct model_options opt;
	const struct scenario *s;
	bool running;		/* between a successful pb_init and pb_fini */
	unsigned long page_size;
	struct scn_placement place;	/* where the next region goes */
	uint8_t *page_buf;	/* one page, for the device side of dio-write */
	size_t region_words;	/* of a process's region bitmap */
	struct model_proc procs[SCN_MAX_PROCS];
	struct scn_region_addr *regions;	/* the scenario's nr_regions */
	uint64_t *region_bits;		/* every process's bitmap */
	unsigned long *lens;		/* every process's lengths */
	struct model_handle handles[SCN_MAX_HANDLES];
	size_t nr_regions;		/* of regions and of each lens row */
};

/*
 * The machine the backends created with opt.checkpoints share: up from
 * the first start() to the last destroy(), and its state just after
 * pb_init(), which every start() restores.
 */
static struct {
	struct pb_checkpoint *boot;
	unsigned long memory_bytes;
	int users;
	struct model *owner;	/* whose state the machine holds now */
} shared;

static struct model *to_model(struct backend *b)
{
	return (struct model *)((char *)b - offsetof(struct model, base));
}

/* ---- regions ---------------------------------------------------------- */

static bool proc_has_region(const struct model_proc *p, int region)
{
	return p->regions[region / 64] & (1ULL << (region % 64));
}

static void proc_add_region(struct model_proc *p, int region,
			    unsigned long len)
{
	p->regions[region / 64] |= 1ULL << (region % 64);
	p->len[region] = len;
}

/* The address of @st's range (0 when its region never got one). */
static unsigned long range_addr(const struct model *m, const struct stmt *st)
{
	return scenario_region_addr(&m->regions[st->region], st->off);
}

/* ---- statements ------------------------------------------------------- */

static int pb_prot(enum scn_prot prot)
{
	switch (prot) {
	case SCN_PROT_NONE:
		return PB_PROT_NONE;
	case SCN_PROT_R:
		return PB_PROT_READ;
	case SCN_PROT_RW:
		break;
	}
	return PB_PROT_READ | PB_PROT_WRITE;
}

static int do_mmap(struct model *m, struct model_proc *p,
		   const struct stmt *st)
{
	unsigned long addr;
	int ret;

	/* The region is the process's even if the mapping fails, as in the
	 * parser's picture: a snapshot then shows it absent. */
	proc_add_region(p, st->region, st->len);
	ret = scenario_place_region(&m->place, &m->regions[st->region], st->at,
				    st->len, st->room);
	if (ret)
		return ret;
	addr = m->regions[st->region].addr;
	/* MAP_POPULATE runs inside mmap, before the program's madvise. */
	ret = pb_mmap_flags(p->pb, addr, st->len, pb_prot(st->prot),
			    st->populate ? PB_MAP_POPULATE : 0);
	if (ret || st->huge == SCN_HUGE_DEFAULT)
		return ret;
	return pb_madvise(p->pb, addr, st->len,
			  st->huge == SCN_HUGE_HUGEPAGE ? MADV_HUGEPAGE :
							  MADV_NOHUGEPAGE);
}

/*
 * write and read: one byte every stride bytes from OFF, stopping at the
 * first access that fails; what was stored before it stays.
 */
static int do_access(struct model_proc *p, unsigned long addr,
		     const struct stmt *st)
{
	unsigned long done;
	uint8_t val;
	int ret;

	for (done = 0; done < st->len; done += st->stride) {
		if (st->kind == ST_WRITE)
			ret = pb_store(p->pb, 0, addr + done, st->value);
		else
			ret = pb_load(p->pb, 0, addr + done, &val);
		if (ret)
			return ret;
		if (st->stride > st->len - done)
			break;
	}
	return 0;
}

static int do_fork(struct model *m, struct model_proc *p,
		   const struct stmt *st, struct stmt_result *res)
{
	struct model_proc *child = &m->procs[st->child];
	int ret;

	ret = pb_fork(p->pb, &child->pb);
	if (ret) {
		child->pb = NULL;
		return ret;
	}
	/* The child has the regions its parent has now, at the same
	 * addresses. */
	memcpy(child->regions, p->regions,
	       m->region_words * sizeof(*p->regions));
	memcpy(child->len, p->len, m->s->nr_regions * sizeof(*p->len));
	res->child_faults = pb_proc_faults(child->pb);
	return 0;
}

/*
 * spawn: vfork + execve.  The child gets a new, empty mm, and the parent's
 * is left alone: no page table is copied, nothing is write-protected, so
 * neither side takes a fault for it.
 */
static int do_spawn(struct model *m, const struct stmt *st,
		    struct stmt_result *res)
{
	struct model_proc *child = &m->procs[st->child];
	int ret;

	ret = pb_proc_create(&child->pb);
	if (ret) {
		child->pb = NULL;
		return ret;
	}
	res->child_faults = pb_proc_faults(child->pb);
	return 0;
}

/*
 * exec: the old address space goes as munmap takes a mapping (exit_mmap()
 * does the same work), region by region over all it may have grown to;
 * the process lives on with none.
 */
static int do_exec(struct model *m, struct model_proc *p)
{
	const struct scn_region_addr *r;
	size_t w;
	int ret, region;

	for (w = 0; w < m->region_words; w++) {
		while (p->regions[w]) {
			region = w * 64 + __builtin_ctzll(p->regions[w]);
			p->regions[w] &= p->regions[w] - 1;
			p->len[region] = 0;
			r = &m->regions[region];
			if (!r->placed)
				continue;
			ret = pb_munmap(p->pb, r->addr, r->room_end - r->addr);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/*
 * touch: each item's pages in order, one load or store each, as the
 * one-page reads and writes it stands for; the first access Linux refuses
 * stops the statement, and what was stored before it stays.
 */
static int do_touch(struct model *m, struct model_proc *p,
		    const struct stmt *st)
{
	const struct scn_touch *it, *end = st->items + st->nr_items;
	unsigned long addr, last;
	uint8_t val;
	int ret;

	for (it = st->items; it < end; it++) {
		const struct scn_region_addr *r = &m->regions[it->region];

		if (!r->placed)
			return -EFAULT;
		addr = r->addr + (unsigned long)it->pgoff * m->page_size;
		last = addr + (unsigned long)(it->count - 1) * m->page_size;
		for (;; addr += m->page_size) {
			if (it->write)
				ret = pb_store(p->pb, 0, addr, st->value);
			else
				ret = pb_load(p->pb, 0, addr, &val);
			if (ret)
				return ret;
			if (addr == last)
				break;
		}
	}
	return 0;
}

static unsigned long range_pages(const struct model *m, const struct stmt *st)
{
	return st->len / m->page_size;
}

static int take_handle(struct model *m, struct model_proc *p,
		       const struct stmt *st, unsigned int foll, bool dirty,
		       unsigned long per_call)
{
	struct model_handle *h = &m->handles[st->handle];
	int ret;

	/* The parser lets a handle be taken only when it is released. */
	if (h->pages)
		return -EBUSY;
	h->dirty = dirty;
	ret = pb_gup_fast_calls(p->pb, range_addr(m, st), range_pages(m, st),
				foll, per_call, &h->pages);
	if (ret)
		h->pages = NULL;
	return ret;
}

/*
 * Release a handle.  A handle whose register or vmsplice failed holds
 * nothing, and releasing it succeeds: there is nothing left to give back,
 * just as an empty pipe reads to its end at once.
 */
static void release_handle(struct model_handle *h)
{
	if (!h->pages)
		return;
	pb_pages_release_syscall(h->pages, h->dirty);
	h->pages = NULL;
}

/* The device reads every held page: DMA out of the pinned memory. */
static void device_read(struct model *m, const struct pb_pages *pages,
			uint8_t *buf, bool keep)
{
	unsigned long i, nr = pb_pages_count(pages);

	for (i = 0; i < nr; i++)
		pb_pages_read(pages, i, keep ? buf + i * m->page_size :
				  m->page_buf, m->page_size);
}

/*
 * O_DIRECT from or into the range, one system call per SCN_DIO_CHUNK bytes
 * at most, as the kernel backend makes them (backend/kernel_proc.c): the
 * pages of one call are pinned together and released when it returns,
 * before the next call pins its own, so a large folio that only this
 * process maps can be reused by the first unsharing fault of each call
 * (random-diff found it: seed 100, scenario 1224).  Linux does the I/O
 * of a call with the pages pinned before the first one it cannot pin (a
 * short read or write), and the retry from that page fails: the pages
 * before it are read or filled, and the statement's result is the error.
 */
static int do_dio(struct model *m, struct model_proc *p,
		  const struct stmt *st, bool write_to_memory)
{
	unsigned long addr = range_addr(m, st), left = range_pages(m, st);
	unsigned long chunk = SCN_DIO_CHUNK / m->page_size ?: 1;
	int ret = 0;

	while (left && !ret) {
		unsigned long nr = left < chunk ? left : chunk;
		struct pb_pages *pages;

		ret = pb_gup_fast_partial(p->pb, addr, nr, PB_FOLL_PIN |
					  (write_to_memory ? PB_FOLL_WRITE : 0),
					  &pages);
		if (pages) {
			if (write_to_memory)
				pb_pages_fill(pages, st->value);
			else
				device_read(m, pages, NULL, false);
			pb_pages_release(pages, write_to_memory);
		}
		addr += nr * m->page_size;
		left -= nr;
	}
	return ret;
}

static int do_dio_write(struct model *m, struct model_proc *p,
			const struct stmt *st)
{
	return do_dio(m, p, st, false);
}

static int do_dio_read(struct model *m, struct model_proc *p,
		       const struct stmt *st)
{
	return do_dio(m, p, st, true);
}

static int do_drain(struct model *m, const struct stmt *st,
		    struct stmt_result *res)
{
	struct model_handle *h = &m->handles[st->handle];
	unsigned long nr;

	if (h->pages) {
		nr = pb_pages_count(h->pages);
		if (nr && nr > SIZE_MAX / m->page_size)
			return -ENOMEM;
		if (nr) {
			res->data = malloc(nr * m->page_size);
			if (!res->data)
				return -ENOMEM;
			device_read(m, h->pages, res->data, true);
			res->data_len = nr * m->page_size;
		}
	}
	release_handle(h);
	return 0;
}

static int do_mremap(struct model *m, struct model_proc *p,
		     const struct stmt *st)
{
	unsigned long old_addr = range_addr(m, st);
	int ret;

	proc_add_region(p, st->new_region, st->len);
	ret = scenario_place_region(&m->place, &m->regions[st->new_region],
				    st->at, st->len, 0);
	if (ret)
		return ret;
	return pb_mremap_flags(p->pb, old_addr, st->len,
			       m->regions[st->new_region].addr,
			       st->dontunmap ? PB_MREMAP_DONTUNMAP : 0);
}

/*
 * resize: mremap(addr, the region's length in this process, LEN, 0).  A
 * grow past the region's room fails as if another mapping began there:
 * ENOMEM where Linux looks for room, after its EFAULT checks (the first
 * page mapped, the range one VMA).  The kernel backend maps such a
 * mapping there for the call, so the records compare whatever lies past
 * the room.
 */
static int do_resize(struct model *m, struct model_proc *p,
		     const struct stmt *st)
{
	const struct scn_region_addr *r = &m->regions[st->region];
	unsigned long old_len = p->len[st->region];
	int ret;

	if (!r->placed)
		return -EFAULT;
	ret = pb_mremap_resize_room(p->pb, r->addr, old_len, st->len,
				    r->room_end);
	if (!ret)
		p->len[st->region] = st->len;
	return ret;
}

/* One process statement; returns 0 or -errno. */
static int model_do(struct model *m, struct model_proc *p,
		    const struct stmt *st, struct stmt_result *res)
{
	unsigned long addr = st->region >= 0 ? range_addr(m, st) : 0;

	switch (st->kind) {
	case ST_MMAP:
		return do_mmap(m, p, st);
	case ST_MUNMAP:
		return pb_munmap(p->pb, addr, st->len);
	case ST_MMAP_FIXED:
		return pb_mmap_flags(p->pb, addr, st->len, pb_prot(st->prot),
				     PB_MAP_FIXED);
	case ST_MPROTECT:
		return pb_mprotect(p->pb, addr, st->len, pb_prot(st->prot));
	case ST_MADVISE:
		return pb_madvise(p->pb, addr, st->len, st->advice);
	case ST_WRITE:
	case ST_READ:
		return do_access(p, addr, st);
	case ST_FORK:
		return do_fork(m, p, st, res);
	case ST_EXIT:
		pb_exit(p->pb);
		p->pb = NULL;
		return 0;
	case ST_REGISTER: {
		int ret;

		/*
		 * io_uring unpins registered buffers without dirtying them
		 * (unpin_user_folio()): a lazy-free folio it held can still
		 * be discarded afterwards, as on this machine's kernel.
		 */
		ret = take_handle(m, p, st, PB_FOLL_PIN | PB_FOLL_WRITE |
				  PB_FOLL_LONGTERM, false, 0);
		/*
		 * io_sqe_buffer_register() then keeps one pin per large
		 * folio (the kernel's one iovec per 16M: folios no larger
		 * than that, aligned, coalesce alike).
		 */
		if (!ret)
			pb_pages_io_coalesce(m->handles[st->handle].pages);
		return ret;
	}
	case ST_UNREGISTER:
		release_handle(&m->handles[st->handle]);
		return 0;
	case ST_DIO_WRITE:
		return do_dio_write(m, p, st);
	case ST_DIO_READ:
		return do_dio_read(m, p, st);
	case ST_VMSPLICE:
		/* vmsplice_to_pipe() takes 16 pages per GUP call. */
		return take_handle(m, p, st, PB_FOLL_GET, false, 16);
	case ST_DRAIN:
		return do_drain(m, st, res);
	case ST_MREMAP:
		return do_mremap(m, p, st);
	case ST_SPLIT:
		return pb_split_pmd(p->pb, addr, st->len);
	case ST_RESIZE:
		return do_resize(m, p, st);
	case ST_TOUCH:
		return do_touch(m, p, st);
	case ST_SPAWN:
		return do_spawn(m, st, res);
	case ST_EXEC:
		return do_exec(m, p);
	case ST_MTHP:
	case ST_OBSERVE:
		break;
	}
	return -EINVAL;
}

/*
 * Running out of frames.  The model fails the statement the way Linux
 * fails an allocation it cannot satisfy (ENOMEM, or EFAULT from a pin
 * that got fewer pages than asked), and the record says so; but Linux
 * would reclaim or OOM-kill instead, so the result says what ran out.
 */
static void say_exhausted(const struct model *m, struct stmt_result *res)
{
	char mem[24], ebuf[16];

	snprintf(res->exhausted, sizeof(res->exhausted),
		 "every frame of the model's %s is in use (error %s); --memory"
		 " gives it more",
		 record_size_text(mem, sizeof(mem), m->opt.memory_bytes ?
				  m->opt.memory_bytes : PB_DEFAULT_MEMORY),
		 res->err ? record_errno_name(res->err, ebuf, sizeof(ebuf))
			  : "none");
}

/* The kernel accounting counters (scenario/backend.h) of the model. */
static void kstats_delta(struct kstats *ks, const struct pb_vm_events *a,
			 const struct pb_vm_events *b)
{
	int order;

	ks->global[KSTAT_PGFAULT] = b->pgfault - a->pgfault;
	ks->global[KSTAT_THP_FAULT_ALLOC] =
		b->thp_fault_alloc - a->thp_fault_alloc;
	ks->global[KSTAT_THP_FAULT_FALLBACK] =
		b->thp_fault_fallback - a->thp_fault_fallback;
	ks->global[KSTAT_THP_SPLIT_PMD] = b->thp_split_pmd - a->thp_split_pmd;
	ks->global[KSTAT_PIN_ACQUIRED] =
		b->foll_pin_acquired - a->foll_pin_acquired;
	ks->global[KSTAT_PIN_RELEASED] =
		b->foll_pin_released - a->foll_pin_released;
	/* Order 0 has no hugepages-*kB file: the kernel shows none. */
	for (order = 1; order < KSTAT_ORDERS && order < PB_MTHP_ORDERS;
	     order++) {
		ks->mthp[order][KSTAT_MTHP_ANON_FAULT_ALLOC] =
			b->mthp[order][PB_MTHP_ANON_FAULT_ALLOC] -
			a->mthp[order][PB_MTHP_ANON_FAULT_ALLOC];
		ks->mthp[order][KSTAT_MTHP_ANON_FAULT_FALLBACK] =
			b->mthp[order][PB_MTHP_ANON_FAULT_FALLBACK] -
			a->mthp[order][PB_MTHP_ANON_FAULT_FALLBACK];
		ks->mthp[order][KSTAT_MTHP_SPLIT] =
			b->mthp[order][PB_MTHP_SPLIT] -
			a->mthp[order][PB_MTHP_SPLIT];
	}
}

static void model_exec(struct backend *b, const struct stmt *st,
		       struct stmt_result *res)
{
	struct model *m = to_model(b);
	struct model_proc *p = &m->procs[st->proc];
	uint64_t before[PB_NR_STATS], after[PB_NR_STATS];
	struct pb_vm_events ev_before, ev_after;
	unsigned long faults;
	int i, ret;

	/* Only a process whose fork failed can be missing here. */
	if (!p->pb) {
		res->err = ESRCH;
		return;
	}
	pb_stats_read(before);
	pb_vm_events_read(&ev_before);
	faults = pb_proc_faults(p->pb);
	ret = model_do(m, p, st, res);
	/* exit reports 0: the process and its count are gone. */
	res->faults = p->pb ? pb_proc_faults(p->pb) - faults : 0;
	pb_stats_read(after);
	pb_vm_events_read(&ev_after);
	for (i = 0; i < PB_NR_STATS; i++)
		res->stats[i] = after[i] - before[i];
	res->has_stats = 1;
	kstats_delta(&res->kstats, &ev_before, &ev_after);
	res->has_kstats = 1;
	res->err = ret < 0 ? -ret : ret;
	if (res->stats[PB_STAT_alloc_fail])
		say_exhausted(m, res);
}

/* ---- snapshots -------------------------------------------------------- */

static int observe_region(struct model *m, int proc, int region,
			  struct snapshot *snap)
{
	const struct scn_region_addr *r = &m->regions[region];
	unsigned long nr = m->procs[proc].len[region] / m->page_size;
	struct pb_page_info info[OBSERVE_BATCH];
	struct snap_page pg;
	unsigned long done, n, i;
	int ret;

	for (done = 0; done < nr; done += n) {
		n = nr - done < OBSERVE_BATCH ? nr - done : OBSERVE_BATCH;
		if (r->placed) {
			ret = pb_observe(m->procs[proc].pb,
					 r->addr + done * m->page_size, n, info);
			if (ret)
				return ret;
		} else {
			memset(info, 0, n * sizeof(info[0]));
		}
		for (i = 0; i < n; i++) {
			memset(&pg, 0, sizeof(pg));
			pg.proc = proc;
			pg.region = region;
			pg.off = (done + i) * m->page_size;
			pg.present = info[i].present;
			if (pg.present) {
				pg.folio_size = info[i].folio_size;
				pg.index = info[i].index;
				pg.frame = info[i].pfn;
				pg.data = info[i].data;
				pg.zero = info[i].zero;
			}
			ret = snapshot_add(snap, &pg);
			if (ret)
				return ret;
		}
	}
	return 0;
}

static int model_observe(struct backend *b, struct snapshot *snap)
{
	struct model *m = to_model(b);
	int proc, region, ret;

	for (proc = 0; proc < m->s->nr_procs; proc++) {
		if (!m->procs[proc].pb)
			continue;
		for (region = 0; region < m->s->nr_regions; region++) {
			if (!proc_has_region(&m->procs[proc], region))
				continue;
			ret = observe_region(m, proc, region, snap);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* ---- the run ---------------------------------------------------------- */

static enum pb_thp_policy pb_policy(enum scn_policy policy)
{
	switch (policy) {
	case SCN_POL_ALWAYS:
		return PB_THP_ALWAYS;
	case SCN_POL_MADVISE:
		return PB_THP_MADVISE;
	case SCN_POL_INHERIT:
		return PB_THP_INHERIT;
	case SCN_POL_NEVER:
		break;
	}
	return PB_THP_NEVER;
}

/*
 * Every size of the granule gets a policy, named or never; the PMD size
 * (the global one) first.
 */
static int apply_thp_policies(const struct scenario *s)
{
	int i, ret;

	for (i = scenario_nr_mthp_sizes(s->page_size) - 1; i >= 0; i--) {
		ret = pb_set_thp_policy(scenario_mthp_size_of(s->page_size, i),
					pb_policy(s->mthp[i]));
		if (ret)
			return ret;
	}
	return 0;
}

static void model_free_regions(struct model *m)
{
	free(m->regions);
	free(m->region_bits);
	free(m->lens);
	m->regions = NULL;
	m->region_bits = NULL;
	m->lens = NULL;
}

/* The per-region state of @s's regions and processes, all zero. */
static int model_reset(struct model *m, const struct scenario *s)
{
	size_t nr = s->nr_regions ? s->nr_regions : 1;
	/* A restored run goes on with scenarios of more processes. */
	int nr_procs = m->opt.checkpoints ? SCN_MAX_PROCS : s->nr_procs;
	int i;

	memset(m->procs, 0, sizeof(m->procs));
	memset(m->handles, 0, sizeof(m->handles));
	scenario_place_init(&m->place, pb_pmd_size());
	m->region_words = (nr + 63) / 64;
	m->regions = calloc(nr, sizeof(*m->regions));
	m->region_bits = calloc((size_t)nr_procs * m->region_words,
				sizeof(*m->region_bits));
	m->lens = calloc((size_t)nr_procs * nr, sizeof(*m->lens));
	if (!m->regions || !m->region_bits || !m->lens) {
		model_free_regions(m);
		return -ENOMEM;
	}
	m->nr_regions = nr;
	for (i = 0; i < nr_procs; i++) {
		m->procs[i].regions = m->region_bits + i * m->region_words;
		m->procs[i].len = m->lens + i * nr;
	}
	return 0;
}

/* pb_init() the first time, the state just after it every other time. */
static int shared_machine_boot(struct model *m)
{
	struct pb_config cfg = {
		.memory_bytes = m->opt.memory_bytes, .checkpoints = true,
		.read_faults_allocate = m->opt.read_faults_allocate,
	};
	int ret;

	if (shared.boot) {
		if (shared.memory_bytes != m->opt.memory_bytes)
			return -EBUSY;
		pb_checkpoint_restore(shared.boot);
		shared.owner = m;
		return 0;
	}
	shared.boot = pb_checkpoint_alloc();
	if (!shared.boot)
		return -ENOMEM;
	ret = pb_init(&cfg);
	if (!ret)
		ret = pb_checkpoint_save(shared.boot);
	if (ret) {
		pb_checkpoint_free(shared.boot);
		shared.boot = NULL;
		return ret;
	}
	shared.memory_bytes = m->opt.memory_bytes;
	shared.owner = m;
	return 0;
}

static void model_fini(struct model *m)
{
	if (!m->opt.checkpoints)
		pb_fini();
}

static int model_start(struct backend *b, const struct scenario *s)
{
	struct model *m = to_model(b);
	struct pb_config cfg = {
		.memory_bytes = m->opt.memory_bytes,
		.read_faults_allocate = m->opt.read_faults_allocate,
	};
	int ret;

	if (m->running && !m->opt.checkpoints)
		return -EBUSY;
	/*
	 * On the shared machine, a backend left running by a restore (its
	 * state kept in checkpoints) just starts again: the machine goes
	 * back to boot, and the processes it held with it.
	 */
	if (m->running) {
		free(m->page_buf);
		m->page_buf = NULL;
		model_free_regions(m);
		m->running = false;
	}
	ret = m->opt.checkpoints ? shared_machine_boot(m) : pb_init(&cfg);
	if (ret)
		return ret < 0 ? ret : -EIO;
	pb_set_variant(&m->opt.variant);
	m->running = true;
	m->s = s;
	m->base.arch = pb_arch_name();
	m->page_size = pb_page_size();
	ret = model_reset(m, s);
	if (ret)
		goto fail;

	/* Offsets were checked against the scenario's page size. */
	ret = -EINVAL;
	if (s->page_size != m->page_size)
		goto fail;
	ret = -ENOMEM;
	m->page_buf = malloc(m->page_size);
	if (!m->page_buf)
		goto fail;
	ret = apply_thp_policies(s);
	if (ret)
		goto fail;
	ret = pb_proc_create(&m->procs[0].pb);
	if (ret)
		goto fail;
	/* memmap_line costs time: only for a run whose counters are read. */
	pb_stats_count_memmap_lines(b->want_stats);
	return 0;
fail:
	free(m->page_buf);
	m->page_buf = NULL;
	model_free_regions(m);
	model_fini(m);
	m->running = false;
	return ret < 0 ? ret : -EIO;
}

static int model_finish(struct backend *b)
{
	struct model *m = to_model(b);
	int i;

	if (!m->running)
		return 0;
	/*
	 * Another backend's state is on the shared machine: this one's
	 * processes live only in a checkpoint, and go with it.
	 */
	if (m->opt.checkpoints && shared.owner != m) {
		memset(m->procs, 0, sizeof(m->procs));
		memset(m->handles, 0, sizeof(m->handles));
	}
	if (m->opt.before_teardown && (!m->opt.checkpoints || shared.owner == m))
		m->opt.before_teardown(m->opt.teardown_arg);
	for (i = 0; i < SCN_MAX_HANDLES; i++)
		release_handle(&m->handles[i]);
	/* Youngest first, as a shell's children would go. */
	for (i = SCN_MAX_PROCS - 1; i >= 0; i--) {
		if (m->procs[i].pb)
			pb_exit(m->procs[i].pb);
		m->procs[i].pb = NULL;
	}
	free(m->page_buf);
	m->page_buf = NULL;
	model_free_regions(m);
	model_fini(m);
	pb_stats_count_memmap_lines(false);
	m->running = false;
	return 0;
}

static unsigned long model_check(struct backend *b, FILE *report)
{
	return to_model(b)->running ? pb_check(report) : 0;
}

static void model_destroy(struct backend *b)
{
	struct model *m = to_model(b);

	if (!b)
		return;
	model_finish(b);
	if (m->opt.checkpoints && shared.owner == m)
		shared.owner = NULL;
	if (m->opt.checkpoints && !--shared.users && shared.boot) {
		pb_fini();
		pb_checkpoint_free(shared.boot);
		shared.boot = NULL;
	}
	free(m);
}

/* ---- checkpoints ------------------------------------------------------ */

struct model_checkpoint {
	struct pb_checkpoint *machine;
	struct pb_proc *procs[SCN_MAX_PROCS];
	struct model_handle handles[SCN_MAX_HANDLES];
	struct scn_placement place;
	size_t nr_regions, region_words;
	struct scn_region_addr *regions;
	uint64_t *region_bits;
	unsigned long *lens;
};

struct model_checkpoint *model_checkpoint_alloc(void)
{
	struct model_checkpoint *ck = calloc(1, sizeof(*ck));

	if (ck && !(ck->machine = pb_checkpoint_alloc())) {
		free(ck);
		ck = NULL;
	}
	return ck;
}

static void model_checkpoint_free_regions(struct model_checkpoint *ck)
{
	free(ck->regions);
	free(ck->region_bits);
	free(ck->lens);
	ck->regions = NULL;
	ck->region_bits = NULL;
	ck->lens = NULL;
}

void model_checkpoint_free(struct model_checkpoint *ck)
{
	if (!ck)
		return;
	pb_checkpoint_free(ck->machine);
	model_checkpoint_free_regions(ck);
	free(ck);
}

static size_t bits_bytes(size_t words)
{
	return SCN_MAX_PROCS * words * sizeof(uint64_t);
}

static size_t lens_bytes(size_t nr_regions)
{
	return SCN_MAX_PROCS * nr_regions * sizeof(unsigned long);
}

int model_backend_save(struct backend *b, struct model_checkpoint *ck)
{
	struct model *m = to_model(b);
	int i, ret;

	if (!m->opt.checkpoints || !m->running || shared.owner != m)
		return -EINVAL;
	ret = pb_checkpoint_save(ck->machine);
	if (ret)
		return ret;
	if (ck->nr_regions != m->nr_regions ||
	    ck->region_words != m->region_words || !ck->regions) {
		model_checkpoint_free_regions(ck);
		ck->regions = malloc(m->nr_regions * sizeof(*ck->regions));
		ck->region_bits = malloc(bits_bytes(m->region_words));
		ck->lens = malloc(lens_bytes(m->nr_regions));
		if (!ck->regions || !ck->region_bits || !ck->lens) {
			model_checkpoint_free_regions(ck);
			return -ENOMEM;
		}
		ck->nr_regions = m->nr_regions;
		ck->region_words = m->region_words;
	}
	for (i = 0; i < SCN_MAX_PROCS; i++)
		ck->procs[i] = m->procs[i].pb;
	memcpy(ck->handles, m->handles, sizeof(ck->handles));
	ck->place = m->place;
	memcpy(ck->regions, m->regions, m->nr_regions * sizeof(*ck->regions));
	memcpy(ck->region_bits, m->region_bits, bits_bytes(m->region_words));
	memcpy(ck->lens, m->lens, lens_bytes(m->nr_regions));
	return 0;
}

int model_backend_restore(struct backend *b, const struct model_checkpoint *ck,
			  const struct scenario *s)
{
	struct model *m = to_model(b);
	size_t nr = s->nr_regions ? s->nr_regions : 1;
	int i, ret;

	if (!m->opt.checkpoints || !ck->regions || nr != ck->nr_regions ||
	    s->nr_procs > SCN_MAX_PROCS || !m->page_size || !shared.boot)
		return -EINVAL;
	/* A backend finished since (a whole run in between) starts again. */
	if (!m->running) {
		m->s = s;
		ret = model_reset(m, s);
		if (ret)
			return ret;
		m->page_buf = malloc(m->page_size);
		if (!m->page_buf) {
			model_free_regions(m);
			return -ENOMEM;
		}
		m->running = true;
	}
	pb_checkpoint_restore(ck->machine);
	shared.owner = m;
	m->s = s;
	for (i = 0; i < SCN_MAX_PROCS; i++)
		m->procs[i].pb = ck->procs[i];
	memcpy(m->handles, ck->handles, sizeof(m->handles));
	m->place = ck->place;
	memcpy(m->regions, ck->regions, nr * sizeof(*m->regions));
	memcpy(m->region_bits, ck->region_bits, bits_bytes(m->region_words));
	memcpy(m->lens, ck->lens, lens_bytes(nr));
	return 0;
}

static const struct backend_ops model_ops = {
	.name = "model",
	.start = model_start,
	.exec = model_exec,
	.observe = model_observe,
	.finish = model_finish,
	.check = model_check,
	.destroy = model_destroy,
};

struct backend *model_backend_create(const struct model_options *opt)
{
	struct model *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	if (opt)
		m->opt = *opt;
	if (!m->opt.variant_name) {
		m->opt.variant_name = PB_DEFAULT_VARIANT;
		if (pb_variant_preset(PB_DEFAULT_VARIANT, &m->opt.variant)) {
			free(m);
			return NULL;
		}
	}
	if (m->opt.checkpoints)
		shared.users++;
	m->base.ops = &model_ops;
	m->base.variant = m->opt.variant_name;
	m->base.arch = "-";
	m->base.no_zero_page = m->opt.read_faults_allocate;
	return &m->base;
}
