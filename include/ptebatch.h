/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ptebatch.h - the public interface of libptebatch, the userspace model of
 * Linux anonymous memory management.
 *
 * The model is one simulated machine per process that uses the library:
 * physical frames with a permanent memmap, a buddy allocator, page tables,
 * processes with VMAs, faults, fork/COW, GUP and pinning.  This header is
 * the "system call" layer on top of it: what a program (or the scenario
 * runner) may do to a simulated process.  Everything below it lives in
 * mm/ and uses the kernel's names.
 *
 * Errors are negative errno values, as the kernel returns them.
 */
#ifndef PTEBATCH_H
#define PTEBATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>

/* Machine configuration. */
struct pb_config {
	/* Bytes of simulated physical memory; 0 selects the default. */
	unsigned long memory_bytes;
	/*
	 * Allow pb_checkpoint_save(): the machine's long-lived objects come
	 * from one arena (mm/checkpoint.c) instead of the C heap.
	 */
	bool checkpoints;
	/*
	 * A read fault on private anonymous memory never maps the shared
	 * zero page nor the huge zero folio: it allocates as a write fault
	 * does, and maps the folio writable and dirty.  Mainline does so
	 * where mm_forbids_zeropage() (s390 guests), which also keeps a
	 * split from remapping zero-filled pages to the zero page; a PVM
	 * guest kernel booted with pvm_no_zero_page=1 does only the fault
	 * half (seen: its split still remaps).  `ptebatch diff` sets it
	 * when this machine's kernel behaves so (backend/host.c).
	 */
	bool read_faults_allocate;
};

#define PB_DEFAULT_MEMORY (4UL << 30)
/*
 * The most pb_init() accepts (more is -ENOMEM).  Nothing costs host
 * memory until used: a block's memmap is written when the block is first
 * handed out, and a data page keeps its contents in its struct page.
 */
#define PB_MAX_MEMORY (256UL << 30)
/*
 * What this machine pays for a model of @memory_bytes with every frame in
 * use: the memmap and folio metadata, 128 bytes a frame, and one PTE
 * table's frame per PMD of memory - about 1/30 of the simulated size
 * with 4K pages.  A data page costs no frame of its own
 * (mm/page_data.c), but for the rare one a store outside the first byte
 * gave it.
 */
unsigned long pb_host_bytes(unsigned long memory_bytes);

/* Per-size anonymous THP policy, as in hugepages-<size>kB/enabled. */
enum pb_thp_policy {
	PB_THP_NEVER,
	PB_THP_ALWAYS,
	PB_THP_MADVISE,
	PB_THP_INHERIT,
};

/*
 * Bring the machine up / down.  pb_init() must be called by the thread that
 * will use the model; other threads call pb_thread_register() first.
 * It returns 0; -EINVAL for memory below four PMD-size blocks; -ENOMEM
 * for memory above PB_MAX_MEMORY or that this machine cannot reserve;
 * -EBUSY when the machine is already up.  Memory is used in whole
 * PMD-size blocks (the rest is ignored).
 */
int pb_init(const struct pb_config *cfg);
void pb_fini(void);
void pb_thread_register(void);
void pb_thread_unregister(void);
/*
 * Fold this thread's pending per-thread counters into the machine's (what
 * vmstat's periodic refresh does per CPU).  A thread that stops while
 * another runs pb_check() calls it first; unregistering does it too.
 */
void pb_thread_quiesce(void);

/*
 * The whole machine's state, saved and restored in this process
 * (mm/checkpoint.c): on a machine brought up with pb_config.checkpoints,
 * at a quiescent point, with no thread registered but the caller.
 * pb_checkpoint_save() reuses @ck's buffers; it returns 0, -EINVAL
 * (checkpoints not enabled) or -ENOMEM.  A restored machine is the saved
 * one: the same objects at the same addresses, so the pb_proc and
 * pb_pages pointers held at the save are valid again.
 */
struct pb_checkpoint;
struct pb_checkpoint *pb_checkpoint_alloc(void);
int pb_checkpoint_save(struct pb_checkpoint *ck);
void pb_checkpoint_restore(struct pb_checkpoint *ck);
void pb_checkpoint_free(struct pb_checkpoint *ck);

unsigned long pb_page_size(void);
unsigned long pb_pmd_size(void);
const char *pb_arch_name(void);

/*
 * Set the policy for anonymous folios of @size bytes: the anon mTHP orders
 * 2..PMD order, pb_page_size() << 2 .. pb_pmd_size() (16K..2M with 4K
 * pages, 64K..32M with 16K, 256K..512M with 64K).  The PMD size's policy
 * is also the global "enabled" policy that INHERIT follows.  Returns
 * -EINVAL for a size that is not an anon THP size.
 */
int pb_set_thp_policy(unsigned long size, enum pb_thp_policy policy);

/*
 * A variant: which PTE-walking paths run batched over large folios, one
 * field per switch of ptebatch_switches.h.  Presets: "baseline" (nothing
 * batched), "upstream" (what mainline Linux batches today: fork, zap and
 * mprotect), "seeds" (upstream plus two posted proposals: GUP-fast
 * batching and write-fault reuse of 16 PTEs, ptebatch_switches.h).
 */
#define PB_SWITCH_FIELD_BOOL bool
#define PB_SWITCH_FIELD_POW2 unsigned int
struct pb_variant {
#define PB_SWITCH(name, kind, ...) PB_SWITCH_FIELD_##kind name;
#include "ptebatch_switches.h"
#undef PB_SWITCH
};

#define PB_DEFAULT_VARIANT "upstream"

/* NULL-terminated list of preset names, in a stable order. */
const char *const *pb_variant_presets(void);
/* Fill @v from preset @name; -EINVAL if there is no such preset. */
int pb_variant_preset(const char *name, struct pb_variant *v);
/*
 * Set one switch from text ("gup_batch=1", "wp_reuse_max=16"): -ENOENT
 * for an unknown key, -EINVAL for a value the key does not accept (BOOL
 * switches take 0/1/off/on, POW2 ones a power of two up to their max).
 */
int pb_variant_set(struct pb_variant *v, const char *key, const char *value);
/*
 * A variant by its name as a record header prints it,
 * "PRESET[+KEY=VALUE]...": the preset, then each switch in order.
 * Returns 0, -EINVAL (no such preset, or a bad value) or -ENOENT (no
 * such switch).
 */
int pb_variant_from_name(const char *name, struct pb_variant *v);
/*
 * NULL-terminated list of switch names, in ptebatch_switches.h's order,
 * and the help line of each: its range, then what it does.
 */
const char *const *pb_variant_switches(void);
const char *pb_variant_switch_help(const char *key);
/*
 * Do @a and @b agree on every switch that may change faults and frames
 * (effect FAULTS)?  Then their records must agree but for stat lines
 * (CMP_SAME_FRAMES); otherwise they are held to CMP_EQUIVALENT.
 */
bool pb_variant_same_frames(const struct pb_variant *a,
			    const struct pb_variant *b);
/* Make @v the machine's variant (any time; takes effect for what follows). */
void pb_set_variant(const struct pb_variant *v);
void pb_get_variant(struct pb_variant *v);

/* A simulated process: one mm and the task accounting of its thread. */
struct pb_proc;

int pb_proc_create(struct pb_proc **out);
/* fork(): the child's fault count is the child's own. */
int pb_fork(struct pb_proc *parent, struct pb_proc **child);
/* _exit(): tears the address space down and frees the process. */
void pb_exit(struct pb_proc *proc);
/* ru_minflt of the process. */
unsigned long pb_proc_faults(const struct pb_proc *proc);

#define PB_PROT_NONE  0
#define PB_PROT_READ  1
#define PB_PROT_WRITE 2

/*
 * mmap(MAP_PRIVATE|MAP_ANONYMOUS|MAP_FIXED_NOREPLACE) at @addr, @len
 * rounded up to whole pages.  The errors come in Linux's order: a zero
 * @len is -EINVAL; a range past the address space -ENOMEM; then an
 * unaligned @addr -EINVAL; then a mapping in the way -EEXIST.
 */
int pb_mmap(struct pb_proc *proc, unsigned long addr, unsigned long len,
	    int prot);
/*
 * The same with flags: PB_MAP_POPULATE (MAP_POPULATE) faults every page
 * in before it returns - for write in a writable mapping, for read in a
 * read-only one, nothing in a PROT_NONE one - and the faults are the
 * process's.  Failing to populate does not fail the mmap.
 */
#define PB_MAP_POPULATE 0x1
/*
 * PB_MAP_FIXED (MAP_FIXED): the new mapping replaces whatever was mapped
 * in [addr, addr + len) - its pages unmapped, its folios freed or split
 * as munmap does - instead of failing with -EEXIST.
 */
#define PB_MAP_FIXED 0x2
int pb_mmap_flags(struct pb_proc *proc, unsigned long addr, unsigned long len,
		  int prot, unsigned int map_flags);
int pb_munmap(struct pb_proc *proc, unsigned long addr, unsigned long len);
/*
 * mprotect(): @prot of PB_PROT_* (another bit is -EINVAL, checked after
 * the range's alignment and wrap, before any VMA); a hole stops it with
 * -ENOMEM, what came before it changed.
 */
int pb_mprotect(struct pb_proc *proc, unsigned long addr, unsigned long len,
		int prot);

/*
 * madvise() with Linux's advice values (MADV_* of <sys/mman.h>): the model
 * takes MADV_DONTNEED, MADV_HUGEPAGE, MADV_NOHUGEPAGE, MADV_DONTFORK,
 * MADV_DOFORK, MADV_WIPEONFORK, MADV_KEEPONFORK, MADV_POPULATE_READ,
 * MADV_POPULATE_WRITE, MADV_FREE and MADV_PAGEOUT (the reclaim of a
 * machine without swap), and refuses any other with -EINVAL, as Linux
 * refuses an advice it does not know.
 */
int pb_madvise(struct pb_proc *proc, unsigned long addr, unsigned long len,
	       int advice);
/* mremap(old, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, new). */
int pb_mremap(struct pb_proc *proc, unsigned long old_addr, unsigned long len,
	      unsigned long new_addr);
/*
 * The same with flags: PB_MREMAP_DONTUNMAP (MREMAP_DONTUNMAP) leaves the
 * old range mapped and empty; later accesses there fault in fresh pages.
 */
#define PB_MREMAP_DONTUNMAP 0x1
int pb_mremap_flags(struct pb_proc *proc, unsigned long old_addr,
		    unsigned long len, unsigned long new_addr,
		    unsigned int flags);
/*
 * mremap(addr, old_len, new_len, 0): resize a mapping in place.  A shrink
 * unmaps the tail; a grow needs [addr, addr + old_len) to be one VMA to
 * its end (else -EFAULT) and the range after it free (else -ENOMEM), and
 * adds absent pages.  @addr unmapped is -EFAULT.  The checks come in
 * Linux's order: -EINVAL for the arguments, then -EFAULT, then -ENOMEM.
 */
int pb_mremap_resize(struct pb_proc *proc, unsigned long addr,
		     unsigned long old_len, unsigned long new_len);
/*
 * The same, as if another mapping began at @room_end: a grow that would
 * end past it is -ENOMEM where Linux would meet that mapping (in
 * vma_expandable()), after every check before it - an unmapped @addr or
 * a range that is not one VMA is still -EFAULT.  For a caller that keeps
 * [room_end, ...) for mappings of its own.
 */
int pb_mremap_resize_room(struct pb_proc *proc, unsigned long addr,
			  unsigned long old_len, unsigned long new_len,
			  unsigned long room_end);
/* Map every PMD-mapped THP in the range with PTEs, keeping folios whole. */
int pb_split_pmd(struct pb_proc *proc, unsigned long addr, unsigned long len);

/*
 * CPU loads and stores of one byte, through the simulated TLB of CPU @cpu.
 * A fault the access cannot resolve returns -EFAULT (SIGSEGV); running out
 * of model memory returns -ENOMEM.
 */
int pb_load(struct pb_proc *proc, int cpu, unsigned long addr, uint8_t *val);
int pb_store(struct pb_proc *proc, int cpu, unsigned long addr, uint8_t val);

/* GUP.  Flag values are the model's FOLL_* flags. */
#define PB_FOLL_WRITE    0x01
#define PB_FOLL_GET      0x02
#define PB_FOLL_PIN      0x04
#define PB_FOLL_LONGTERM 0x08
#define PB_FOLL_FAST_ONLY 0x10

/* A set of pages taken by GUP, released as a whole. */
struct pb_pages;

/*
 * get_user_pages_fast() (PB_FOLL_GET) or pin_user_pages_fast()
 * (PB_FOLL_PIN): GUP-fast first, then the slow path for what remains.
 * On success all @nr_pages are held in *out.  On failure nothing is held.
 */
int pb_gup_fast(struct pb_proc *proc, unsigned long start,
		unsigned long nr_pages, unsigned int foll_flags,
		struct pb_pages **out);
/*
 * pb_gup_fast() as a system call makes it in calls of at most @per_call
 * pages (vmsplice: 16, the pages[] of iter_to_pipe()); one system call,
 * all or nothing as a whole.
 */
int pb_gup_fast_calls(struct pb_proc *proc, unsigned long start,
		      unsigned long nr_pages, unsigned int foll_flags,
		      unsigned long per_call, struct pb_pages **out);
/*
 * pin_user_pages_fast() as O_DIRECT uses it: GUP stops at the first page
 * it cannot take and the pages before it are kept, for the I/O to go on
 * with; the error is returned all the same.  *out holds what was taken
 * (NULL if nothing was); returns 0 when all @nr_pages were.
 */
int pb_gup_fast_partial(struct pb_proc *proc, unsigned long start,
			unsigned long nr_pages, unsigned int foll_flags,
			struct pb_pages **out);
/*
 * The same into a set allocated beforehand (as gup_test allocates its
 * pages[] before it starts the clock): pb_pages_alloc() makes room for
 * @capacity pages, pb_gup_fast_into() takes nr_pages <= capacity into an
 * empty set, pb_pages_put() drops what it holds and keeps the room,
 * pb_pages_free() drops and frees.
 */
struct pb_pages *pb_pages_alloc(unsigned long capacity);
int pb_gup_fast_into(struct pb_proc *proc, unsigned long start,
		     unsigned long nr_pages, unsigned int foll_flags,
		     struct pb_pages *pages);
void pb_pages_put(struct pb_pages *pages, bool make_dirty);
void pb_pages_free(struct pb_pages *pages);
unsigned long pb_pages_count(const struct pb_pages *pages);
/*
 * io_uring's buffer registration keeps one pin per large folio (6.10+,
 * io_coalesce_buffer()): when @pages are whole folios of one size, but
 * for a partial first and last one, drop every pin but the first of each
 * folio; @pages then holds that one page per folio.  Returns how many
 * pins were dropped.
 */
unsigned long pb_pages_io_coalesce(struct pb_pages *pages);
/* The frame (PFN) of held page @index, 0 past the end: what a DMA got. */
unsigned long pb_pages_pfn(const struct pb_pages *pages, unsigned long index);
/* Copy bytes out of / fill the held pages (the "device" side of DMA). */
void pb_pages_read(const struct pb_pages *pages, unsigned long index,
		   void *buf, unsigned long len);
void pb_pages_fill(struct pb_pages *pages, uint8_t value);
/* unpin_user_pages_dirty_lock() for pins, put_page() for gets. */
void pb_pages_release(struct pb_pages *pages, bool make_dirty);
/*
 * The same as a system call of its own (a kernel entry in the stats):
 * io_uring_register(IORING_UNREGISTER_BUFFERS), or the read() that
 * drains a vmsplice'd pipe.  Inside an O_DIRECT read or write the
 * release is part of that call: pb_pages_release().
 */
void pb_pages_release_syscall(struct pb_pages *pages, bool make_dirty);

/* What a snapshot sees of one base page. */
struct pb_page_info {
	bool present;
	unsigned long folio_size;	/* bytes */
	unsigned long index;		/* page index inside the folio */
	unsigned long pfn;		/* physical frame */
	uint8_t data;			/* byte at the page's first address */
	bool zero;			/* the shared (huge) zero page */
};
/* Describe @nr pages from @addr (page aligned) as pagemap would. */
int pb_observe(struct pb_proc *proc, unsigned long addr, unsigned long nr,
	       struct pb_page_info *out);

/* Cost counters of the calling thread, monotonically increasing. */
enum pb_stat {
#define PB_STAT(name) PB_STAT_##name,
#include "ptebatch_stats.h"
#undef PB_STAT
	PB_NR_STATS
};
const char *pb_stat_name(enum pb_stat stat);
void pb_stats_read(uint64_t out[PB_NR_STATS]);

/*
 * The events the kernel itself counts and the model does too, under the
 * kernel's names (issue 16): /proc/vmstat's pgfault (handle_mm_fault()
 * entries), thp_fault_alloc, thp_fault_fallback, thp_split_pmd,
 * nr_foll_pin_acquired/released (the machine's, every thread's part
 * folded in), and per folio order the mTHP stats anon_fault_alloc,
 * anon_fault_fallback and split.  The events are the calling thread's
 * since it started, as pb_stats_read()'s; take differences.
 */
enum { PB_MTHP_ANON_FAULT_ALLOC, PB_MTHP_ANON_FAULT_FALLBACK, PB_MTHP_SPLIT,
       PB_NR_MTHP_STATS };
#define PB_MTHP_ORDERS	16
struct pb_vm_events {
	uint64_t pgfault, thp_fault_alloc, thp_fault_fallback, thp_split_pmd;
	uint64_t foll_pin_acquired, foll_pin_released;
	uint64_t mthp[PB_MTHP_ORDERS][PB_NR_MTHP_STATS];
};
void pb_vm_events_read(struct pb_vm_events *ev);
/*
 * Count memmap_line (off by default: a few nanoseconds per struct page
 * access, which the benchmarks would time).  Process-wide; each thread
 * keeps its own set of lines.  Off frees the calling thread's set.
 */
void pb_stats_count_memmap_lines(bool on);

/*
 * Walk all model state and report every invariant violation to @report
 * (one line each).  Returns the number of violations.
 */
unsigned long pb_check(FILE *report);

/* Frames in use (folios and page tables), for leak tests. */
unsigned long pb_frames_in_use(void);

#endif /* PTEBATCH_H */
