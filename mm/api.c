// SPDX-License-Identifier: GPL-2.0-only
/*
 * api.c: the public interface (include/ptebatch.h) - machine bring-up,
 * processes, the system-call layer and snapshots, each a thin wrapper
 * that takes the locks the kernel's entry point would and calls mm/.
 * Each entry point that stands for a system call starts with
 * kernel_enter() (the kernel_entry counter); the others (the GUP set's
 * release inside a direct I/O, snapshots) are not entries.
 */
#include <stdlib.h>
#include <urcu.h>

#include "mm/pgtable.h"
#include "mm/tlb.h"

struct pb_proc {
	struct mm_struct *mm;
};

struct pb_pages {
	struct gup_pages gp;
	unsigned long capacity;		/* entries of gp.pages */
	bool held;			/* gp.nr references are taken */
};

void pb_thread_register(void)
{
	rcu_register_thread();
	rcu_reader_registered(true);
}

void pb_thread_unregister(void)
{
	node_stat_flush();
	rcu_reader_registered(false);
	rcu_unregister_thread();
}

int pb_init(const struct pb_config *cfg)
{
	unsigned long bytes = cfg && cfg->memory_bytes ? cfg->memory_bytes
						       : PB_DEFAULT_MEMORY;
	int order, err;

	if (machine.mem_map)
		return -EBUSY;
	if (bytes > PB_MAX_MEMORY)
		return -ENOMEM;
	err = memmap_init(bytes);
	if (err)
		return err;
	for (order = 0; order <= HPAGE_PMD_ORDER; order++)
		machine.thp_policy[order] = PB_THP_NEVER;
	machine.thp_policy[HPAGE_PMD_ORDER] = PB_THP_MADVISE;
	memset(cpu_tlbs, 0, sizeof(cpu_tlbs));
	pb_variant_preset(PB_DEFAULT_VARIANT, &machine.variant);
	machine.read_faults_allocate = cfg && cfg->read_faults_allocate;
	node_stat_reset();
	if (cfg && cfg->checkpoints)
		checkpoints_enable();
	rcu_register_thread();
	rcu_reader_registered(true);
	return 0;
}

void pb_fini(void)
{
	rcu_reader_registered(false);
	rcu_unregister_thread();
	checkpoints_disable();
	memmap_exit();
}

unsigned long pb_page_size(void) { return PAGE_SIZE; }
unsigned long pb_pmd_size(void) { return PMD_SIZE; }
const char *pb_arch_name(void) { return ARCH_NAME; }

int pb_set_thp_policy(unsigned long size, enum pb_thp_policy policy)
{
	unsigned int order;

	for (order = 2; order <= HPAGE_PMD_ORDER; order++) {
		if ((PAGE_SIZE << order) == size) {
			if (order == HPAGE_PMD_ORDER && policy == PB_THP_INHERIT)
				return -EINVAL;
			machine.thp_policy[order] = policy;
			return 0;
		}
	}
	return -EINVAL;
}

int pb_proc_create(struct pb_proc **out)
{
	struct pb_proc *p = kzalloc(sizeof(*p));

	if (!p)
		return -ENOMEM;
	/* spawn's execve(): the child's new mm. */
	kernel_enter();
	p->mm = mm_alloc();
	if (!p->mm) {
		kfree(p);
		return -ENOMEM;
	}
	*out = p;
	return 0;
}

/* Run with @p as the task faults are accounted to. */
#define AS_TASK(p) (current_task = &(p)->mm->task)

int pb_fork(struct pb_proc *parent, struct pb_proc **child)
{
	struct pb_proc *c = kzalloc(sizeof(*c));
	int err;

	if (!c)
		return -ENOMEM;
	kernel_enter();
	AS_TASK(parent);
	err = dup_mm(parent->mm, &c->mm);
	if (err) {
		kfree(c);
		return err;
	}
	*child = c;
	return 0;
}

void pb_exit(struct pb_proc *proc)
{
	kernel_enter();
	AS_TASK(proc);
	exit_mmap(proc->mm);
	current_task = NULL;
	mm_free(proc->mm);
	kfree(proc);
}

unsigned long pb_proc_faults(const struct pb_proc *proc)
{
	return atomic_load_explicit(&proc->mm->task.min_flt,
				    memory_order_relaxed);
}

int pb_mmap_flags(struct pb_proc *proc, unsigned long addr, unsigned long len,
		  int prot, unsigned int map_flags)
{
	unsigned long flags = 0;
	int err;

	if (map_flags & ~(PB_MAP_POPULATE | PB_MAP_FIXED))
		return -EINVAL;
	if (prot & PB_PROT_READ)
		flags |= VM_READ;
	if (prot & PB_PROT_WRITE)
		flags |= VM_READ | VM_WRITE;
	kernel_enter();
	AS_TASK(proc);
	pthread_rwlock_wrlock(&proc->mm->mmap_lock);
	/*
	 * MAP_FIXED: what was mapped there goes first, under the same lock,
	 * as mmap_region() unmaps it before it inserts the new VMA - once
	 * the arguments have passed every check.
	 */
	err = do_mmap(proc->mm, addr, len, flags, map_flags & PB_MAP_FIXED);
	pthread_rwlock_unlock(&proc->mm->mmap_lock);
	/*
	 * vm_mmap_pgoff(): mm_populate() once the write lock is dropped,
	 * of the page-aligned length.
	 */
	if (!err && (map_flags & PB_MAP_POPULATE)) {
		pthread_rwlock_rdlock(&proc->mm->mmap_lock);
		__mm_populate(proc->mm, addr, addr + ALIGN(len, PAGE_SIZE));
		pthread_rwlock_unlock(&proc->mm->mmap_lock);
	}
	return err;
}

int pb_mmap(struct pb_proc *proc, unsigned long addr, unsigned long len,
	    int prot)
{
	return pb_mmap_flags(proc, addr, len, prot, 0);
}

int pb_munmap(struct pb_proc *proc, unsigned long addr, unsigned long len)
{
	int err;

	kernel_enter();
	AS_TASK(proc);
	pthread_rwlock_wrlock(&proc->mm->mmap_lock);
	err = do_munmap(proc->mm, addr, len);
	pthread_rwlock_unlock(&proc->mm->mmap_lock);
	return err;
}

int pb_mprotect(struct pb_proc *proc, unsigned long addr, unsigned long len,
		int prot)
{
	kernel_enter();
	AS_TASK(proc);
	return do_mprotect(proc->mm, addr, len, (unsigned long)prot);
}

int pb_madvise(struct pb_proc *proc, unsigned long addr, unsigned long len,
	       int advice)
{
	kernel_enter();
	AS_TASK(proc);
	return do_madvise(proc->mm, addr, len, advice);
}

int pb_mremap(struct pb_proc *proc, unsigned long old_addr, unsigned long len,
	      unsigned long new_addr)
{
	return pb_mremap_flags(proc, old_addr, len, new_addr, 0);
}

int pb_mremap_flags(struct pb_proc *proc, unsigned long old_addr,
		    unsigned long len, unsigned long new_addr,
		    unsigned int flags)
{
	if (flags & ~PB_MREMAP_DONTUNMAP)
		return -EINVAL;
	kernel_enter();
	AS_TASK(proc);
	return do_mremap(proc->mm, old_addr, len, new_addr,
			 flags & PB_MREMAP_DONTUNMAP);
}

int pb_mremap_resize(struct pb_proc *proc, unsigned long addr,
		     unsigned long old_len, unsigned long new_len)
{
	return pb_mremap_resize_room(proc, addr, old_len, new_len, TASK_SIZE);
}

int pb_mremap_resize_room(struct pb_proc *proc, unsigned long addr,
			  unsigned long old_len, unsigned long new_len,
			  unsigned long room_end)
{
	kernel_enter();
	AS_TASK(proc);
	return mremap_at(proc->mm, addr, old_len, new_len, room_end);
}

int pb_split_pmd(struct pb_proc *proc, unsigned long addr, unsigned long len)
{
	struct mm_struct *mm = proc->mm;
	unsigned long end = addr + len;
	int i, err = 0;

	kernel_enter();
	AS_TASK(proc);
	pthread_rwlock_wrlock(&mm->mmap_lock);
	for (i = 0; i < mm->nr_vmas && !err; i++) {
		struct vm_area_struct *vma = mm->vmas[i];

		if (vma->vm_end <= addr || vma->vm_start >= end)
			continue;
		err = split_huge_pmd_range(vma, max(addr, vma->vm_start),
					   min(end, vma->vm_end));
	}
	pthread_rwlock_unlock(&mm->mmap_lock);
	return err;
}

int pb_load(struct pb_proc *proc, int cpu, unsigned long addr, uint8_t *val)
{
	if (cpu < 0 || cpu >= NR_CPUS)
		return -EINVAL;
	AS_TASK(proc);
	return access_user(proc->mm, cpu, addr, false, val);
}

int pb_store(struct pb_proc *proc, int cpu, unsigned long addr, uint8_t val)
{
	if (cpu < 0 || cpu >= NR_CPUS)
		return -EINVAL;
	AS_TASK(proc);
	return access_user(proc->mm, cpu, addr, true, &val);
}

struct pb_pages *pb_pages_alloc(unsigned long capacity)
{
	struct pb_pages *pp = kzalloc(sizeof(*pp));

	if (!pp)
		return NULL;
	pp->gp.pages = capacity > SIZE_MAX / sizeof(struct page *) ? NULL :
		       kzalloc((capacity ? capacity : 1) * sizeof(struct page *));
	if (!pp->gp.pages) {
		kfree(pp);
		return NULL;
	}
	pp->capacity = capacity;
	return pp;
}

void pb_pages_free(struct pb_pages *pages)
{
	if (!pages)
		return;
	if (pages->held)
		pb_pages_put(pages, false);
	kfree(pages->gp.pages);
	kfree(pages);
}

/*
 * GUP of @nr_pages from @start into @pages in calls of at most @per_call
 * pages: the number taken, fewer at the first call that fell short.
 */
static long gup_fast_calls(struct mm_struct *mm, unsigned long start,
			   unsigned long nr_pages, unsigned int foll_flags,
			   unsigned long per_call, struct page **pages)
{
	unsigned long done = 0;

	while (done < nr_pages) {
		unsigned long nr = nr_pages - done < per_call ?
				   nr_pages - done : per_call;
		long got = get_user_pages_fast_flags(mm, start + done * PAGE_SIZE,
						     nr, foll_flags, pages + done);

		if (got < 0)
			return done ? (long)done : got;
		done += (unsigned long)got;
		if ((unsigned long)got < nr)
			break;
	}
	return (long)done;
}

static int gup_fast_into(struct pb_proc *proc, unsigned long start,
			 unsigned long nr_pages, unsigned int foll_flags,
			 unsigned long per_call, struct pb_pages *pp)
{
	long got;

	if (foll_flags & ~(PB_FOLL_WRITE | PB_FOLL_GET | PB_FOLL_PIN |
			   PB_FOLL_LONGTERM | PB_FOLL_FAST_ONLY))
		return -EINVAL;
	if (pp->held || nr_pages > pp->capacity)
		return -EINVAL;
	/* io_uring_register, vmsplice, an O_DIRECT read or write. */
	kernel_enter();
	AS_TASK(proc);
	got = gup_fast_calls(proc->mm, start, nr_pages, foll_flags,
			     per_call ? per_call : nr_pages, pp->gp.pages);
	if (got < 0 || (unsigned long)got < nr_pages) {
		/* Like io_uring and O_DIRECT: all or nothing. */
		if (got > 0) {
			if (foll_flags & FOLL_PIN)
				unpin_user_pages_dirty_lock(pp->gp.pages,
							    (unsigned long)got, false);
			else
				put_user_pages_refs(pp->gp.pages, (unsigned long)got);
		}
		return got < 0 ? (int)got : -EFAULT;
	}
	pp->gp.nr = nr_pages;
	pp->gp.flags = foll_flags;
	pp->held = true;
	gup_track(&pp->gp);
	return 0;
}

int pb_gup_fast_into(struct pb_proc *proc, unsigned long start,
		     unsigned long nr_pages, unsigned int foll_flags,
		     struct pb_pages *pp)
{
	return gup_fast_into(proc, start, nr_pages, foll_flags, 0, pp);
}

int pb_gup_fast(struct pb_proc *proc, unsigned long start,
		unsigned long nr_pages, unsigned int foll_flags,
		struct pb_pages **out)
{
	return pb_gup_fast_calls(proc, start, nr_pages, foll_flags, 0, out);
}

int pb_gup_fast_calls(struct pb_proc *proc, unsigned long start,
		      unsigned long nr_pages, unsigned int foll_flags,
		      unsigned long per_call, struct pb_pages **out)
{
	struct pb_pages *pp = pb_pages_alloc(nr_pages);
	int err;

	if (!pp)
		return -ENOMEM;
	err = gup_fast_into(proc, start, nr_pages, foll_flags, per_call, pp);
	if (err) {
		pb_pages_free(pp);
		return err;
	}
	*out = pp;
	return 0;
}

int pb_gup_fast_partial(struct pb_proc *proc, unsigned long start,
			unsigned long nr_pages, unsigned int foll_flags,
			struct pb_pages **out)
{
	struct pb_pages *pp;
	long got;

	*out = NULL;
	if (foll_flags & ~(PB_FOLL_WRITE | PB_FOLL_GET | PB_FOLL_PIN |
			   PB_FOLL_LONGTERM | PB_FOLL_FAST_ONLY))
		return -EINVAL;
	pp = pb_pages_alloc(nr_pages);
	if (!pp)
		return -ENOMEM;
	kernel_enter();
	AS_TASK(proc);
	got = get_user_pages_fast_flags(proc->mm, start, nr_pages, foll_flags,
					pp->gp.pages);
	if (got <= 0) {
		pb_pages_free(pp);
		return got < 0 ? (int)got : -EFAULT;
	}
	pp->gp.nr = (unsigned long)got;
	pp->gp.flags = foll_flags;
	pp->held = true;
	gup_track(&pp->gp);
	*out = pp;
	/* GUP stops at the first page it cannot take: Linux's -EFAULT. */
	return (unsigned long)got < nr_pages ? -EFAULT : 0;
}

unsigned long pb_pages_pfn(const struct pb_pages *pages, unsigned long index)
{
	return index < pages->gp.nr ? page_to_pfn(pages->gp.pages[index]) : 0;
}

unsigned long pb_pages_count(const struct pb_pages *pages)
{
	return pages->gp.nr;
}

void pb_pages_read(const struct pb_pages *pages, unsigned long index,
		   void *buf, unsigned long len)
{
	unsigned char *dst = buf;

	while (len && index < pages->gp.nr) {
		unsigned long n = min(len, PAGE_SIZE);

		memcpy_from_page(dst, pages->gp.pages[index], 0, n);
		dst += n;
		len -= n;
		index++;
	}
}

void pb_pages_fill(struct pb_pages *pages, uint8_t value)
{
	unsigned long i;

	for (i = 0; i < pages->gp.nr; i++)
		memset_page(pages->gp.pages[i], 0, value, PAGE_SIZE);
}

/*
 * io_check_coalesce_buffer() (io_uring/rsrc.c): @pages are runs of
 * consecutive pages of one folio each; every folio but the first starts
 * at its first page and has the first one's size, and every folio but the
 * first and the last is whole.  *@nr_head: the pages of the first folio,
 * *@nr_mid: a folio's.
 */
static bool io_check_coalesce_buffer(struct page **pages, unsigned long nr,
				     unsigned long *nr_head,
				     unsigned long *nr_mid)
{
	struct folio *folio = page_folio(pages[0]);
	unsigned long count = 1, nr_folios = 1, i;

	*nr_mid = folio_nr_pages(folio);
	for (i = 1; i < nr; i++) {
		if (page_folio(pages[i]) == folio &&
		    page_to_pfn(pages[i]) == page_to_pfn(pages[i - 1]) + 1) {
			count++;
			continue;
		}
		if (nr_folios == 1) {
			if (page_to_pfn(pages[i - 1]) - folio_pfn(folio) !=
			    *nr_mid - 1)
				return false;
			*nr_head = count;
		} else if (count != *nr_mid) {
			return false;
		}
		folio = page_folio(pages[i]);
		if (folio_nr_pages(folio) != *nr_mid ||
		    page_to_pfn(pages[i]) != folio_pfn(folio))
			return false;
		count = 1;
		nr_folios++;
	}
	if (nr_folios == 1)
		*nr_head = count;
	return true;
}

/*
 * io_coalesce_buffer(): one pin per folio stays, on the folio's first
 * pinned page, the others are dropped at once (unpin_user_folio(): not
 * dirtied).  The kernel keeps the head page; either way the pin is the
 * folio's.
 */
unsigned long pb_pages_io_coalesce(struct pb_pages *pp)
{
	struct page **pages = pp->gp.pages;
	unsigned long nr_head, nr_mid, left = pp->gp.nr, dropped = 0;
	unsigned long i, j;

	if (!pp->held || !(pp->gp.flags & FOLL_PIN) || left <= 1 ||
	    !io_check_coalesce_buffer(pages, left, &nr_head, &nr_mid) ||
	    nr_mid == 1)
		return 0;
	for (i = 0, j = 0; left; i++) {
		unsigned long nr = i ? nr_mid : nr_head;

		if (nr > left)
			nr = left;
		if (nr > 1)
			unpin_user_pages_dirty_lock(pages + j + 1, nr - 1, false);
		dropped += nr - 1;
		pages[i] = pages[j];
		j += nr;
		left -= nr;
	}
	pp->gp.nr = i;
	return dropped;
}

void pb_pages_put(struct pb_pages *pages, bool make_dirty)
{
	if (!pages->held)
		return;
	gup_untrack(&pages->gp);
	if (pages->gp.flags & FOLL_PIN)
		unpin_user_pages_dirty_lock(pages->gp.pages, pages->gp.nr,
					    make_dirty);
	else
		put_user_pages_refs(pages->gp.pages, pages->gp.nr);
	pages->held = false;
	pages->gp.nr = 0;
}

void pb_pages_release(struct pb_pages *pages, bool make_dirty)
{
	pb_pages_put(pages, make_dirty);
	pb_pages_free(pages);
}

void pb_pages_release_syscall(struct pb_pages *pages, bool make_dirty)
{
	kernel_enter();
	pb_pages_release(pages, make_dirty);
}

/* What /proc/PID/pagemap and /proc/kpageflags would say of each page. */
int pb_observe(struct pb_proc *proc, unsigned long addr, unsigned long nr,
	       struct pb_page_info *out)
{
	struct mm_struct *mm = proc->mm;
	unsigned long i;

	/* A look from outside: no memmap line is the kernel's. */
	memmap_lines_pause();
	pthread_rwlock_rdlock(&mm->mmap_lock);
	for (i = 0; i < nr; i++) {
		struct pb_page_info *info = &out[i];
		struct addr_lookup found;
		unsigned long pfn;
		struct folio *folio;

		memset(info, 0, sizeof(*info));
		lookup_addr(mm, addr + (i << PAGE_SHIFT), &found);
		if (found.level != ADDR_PMD_LEAF &&
		    (found.level != ADDR_PTE || !pte_present(found.entry)))
			continue;
		pfn = found.pfn;
		folio = page_folio(pfn_to_page(pfn));
		info->present = true;
		info->pfn = pfn;
		info->folio_size = folio_size(folio);
		info->index = pfn - folio_pfn(folio);
		info->data = page_load_byte(pfn_to_page(pfn), 0);
		info->zero = is_zero_pfn(pfn) || is_huge_zero_pfn(pfn);
	}
	pthread_rwlock_unlock(&mm->mmap_lock);
	memmap_lines_resume();
	return 0;
}

unsigned long pb_host_bytes(unsigned long memory_bytes)
{
	unsigned long nr = memory_bytes >> PAGE_SHIFT;

	return nr * (sizeof(struct page) + sizeof(struct folio)) +
	       nr / PTRS_PER_PTE * PAGE_SIZE;
}

unsigned long pb_frames_in_use(void)
{
	return machine.nr_frames - nr_free_frames();
}
