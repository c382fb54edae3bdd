// SPDX-License-Identifier: GPL-2.0-only
/*
 * vma.c: address spaces and their VMAs - creating and destroying an mm,
 * finding, splitting, merging, inserting and removing VMAs, mmap and
 * munmap (mm/mmap.c, mm/vma.c).
 *
 * VMAs live in an array sorted by address (the kernel's maple tree);
 * mmap_lock protects it.  Adjacent VMAs merge when the kernel would merge
 * them (same flags, compatible anon_vma, contiguous pgoff), because merging
 * decides which mTHP orders fit at a fault.
 */
#include <stdlib.h>

#include "mm/pgtable.h"
#include "mm/tlb.h"

struct mm_struct *mm_alloc(void)
{
	struct mm_struct *mm = kzalloc(sizeof(*mm));

	if (!mm)
		return NULL;
	mm->pgd_pfn = pgd_alloc();
	if (!mm->pgd_pfn) {
		kfree(mm);
		return NULL;
	}
	mm->pgd = pfn_address(mm->pgd_pfn);
	hook_table_root(mm->pgd_pfn, mm);
	pthread_rwlock_init(&mm->mmap_lock, NULL);
	spin_lock_init(&mm->page_table_lock);
	mm->mm_id = atomic_fetch_add(&machine.next_mm_id, 1) + 1;
	mm_registry_add(mm);
	count_stat(mm_alloc);
	return mm;
}

void mm_free(struct mm_struct *mm)
{
	mm_registry_del(mm);
	kfree(mm->vmas);
	pthread_rwlock_destroy(&mm->mmap_lock);
	kfree(mm);
}

struct vm_area_struct *vm_area_alloc(struct mm_struct *mm)
{
	struct vm_area_struct *vma = kzalloc(sizeof(*vma));

	if (!vma)
		return NULL;
	count_stat(vma_alloc);
	vma->vm_mm = mm;
	return vma;
}

void vm_area_free(struct vm_area_struct *vma)
{
	anon_vma_put(vma->anon_vma);
	kfree(vma);
}

/* Index of the first VMA ending above @addr (nr_vmas if none). */
static int vma_search(struct mm_struct *mm, unsigned long addr)
{
	int lo = 0, hi = mm->nr_vmas;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (mm->vmas[mid]->vm_end > addr)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

struct vm_area_struct *find_vma(struct mm_struct *mm, unsigned long addr)
{
	int i = vma_search(mm, addr);

	return i < mm->nr_vmas ? mm->vmas[i] : NULL;
}

struct vm_area_struct *vma_lookup(struct mm_struct *mm, unsigned long addr)
{
	struct vm_area_struct *vma = find_vma(mm, addr);

	return vma && vma->vm_start <= addr ? vma : NULL;
}

int vma_index(struct mm_struct *mm, struct vm_area_struct *vma)
{
	int i = vma_search(mm, vma->vm_start);

	return i < mm->nr_vmas && mm->vmas[i] == vma ? i : -1;
}

int vma_insert(struct mm_struct *mm, struct vm_area_struct *vma)
{
	int i;

	if (mm->nr_vmas == mm->cap_vmas) {
		int cap = mm->cap_vmas ? 2 * mm->cap_vmas : 8;
		struct vm_area_struct **n = krealloc(mm->vmas, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		mm->vmas = n;
		mm->cap_vmas = cap;
	}
	i = vma_search(mm, vma->vm_start);
	memmove(&mm->vmas[i + 1], &mm->vmas[i],
		(mm->nr_vmas - i) * sizeof(*mm->vmas));
	mm->vmas[i] = vma;
	mm->nr_vmas++;
	return 0;
}

void vma_remove(struct mm_struct *mm, struct vm_area_struct *vma)
{
	int i = vma_index(mm, vma);

	if (i < 0)
		return;
	memmove(&mm->vmas[i], &mm->vmas[i + 1],
		(mm->nr_vmas - i - 1) * sizeof(*mm->vmas));
	mm->nr_vmas--;
}

/*
 * Split @vma at @addr; the new VMA takes the lower part if @new_below.
 * A huge PMD straddling @addr is split first (vma_adjust_trans_huge).
 */
int split_vma(struct mm_struct *mm, struct vm_area_struct *vma,
	      unsigned long addr, int new_below)
{
	struct vm_area_struct *new;
	int err;

	if (addr <= vma->vm_start || addr >= vma->vm_end)
		return 0;
	if (!IS_ALIGNED(addr, PMD_SIZE)) {
		err = split_huge_pmd_range(vma, addr, addr + PAGE_SIZE);
		if (err)
			return err;
	}
	new = vm_area_alloc(mm);
	if (!new)
		return -ENOMEM;
	*new = *vma;
	new->anon_vma = anon_vma_get(vma->anon_vma);
	/* anon_vma_clone(): the new VMA is linked to the whole chain. */
	count_stat_n(anon_vma_chain, anon_vma_chain_len(vma->anon_vma));
	if (new_below) {
		new->vm_end = addr;
		vma->vm_pgoff += (addr - vma->vm_start) >> PAGE_SHIFT;
		vma->vm_start = addr;
	} else {
		new->vm_start = addr;
		new->vm_pgoff += (addr - vma->vm_start) >> PAGE_SHIFT;
		vma->vm_end = addr;
	}
	err = vma_insert(mm, new);
	if (err) {
		/* Undo: the split never happened. */
		if (new_below) {
			vma->vm_start = new->vm_start;
			vma->vm_pgoff = new->vm_pgoff;
		} else {
			vma->vm_end = new->vm_end;
		}
		vm_area_free(new);
	}
	return err;
}

/*
 * vma_had_uncowed_parents(): @vma's anon_vma chain is not singular - it
 * was forked, and still links its parents' anon_vmas.  The model's
 * anon_vma keeps no chain; a forked VMA is the one whose anon_vma is not
 * its own root (anon_vma_fork()).
 */
static bool vma_had_uncowed_parents(const struct vm_area_struct *vma)
{
	const struct anon_vma *av = vma->anon_vma;

	return av && av->root != av;
}

/*
 * is_mergeable_anon_vma(): two VMAs with one anon_vma merge; one with
 * and one without merge only if the one with it was not forked (Linux
 * keeps a child's VMA, whose anon_vma chain links its parents', from
 * spreading that chain's lock over more of the address space).
 */
static bool is_mergeable_anon_vma(const struct vm_area_struct *a,
				  const struct vm_area_struct *b)
{
	if (a->anon_vma && b->anon_vma)
		return a->anon_vma == b->anon_vma;
	return !vma_had_uncowed_parents(a->anon_vma ? a : b);
}

/*
 * anon_vma_compatible(): could @a and @b (in address order) ever merge,
 * once mprotect() has made their protections equal?  Adjacent, the same
 * flags but for the access bits and the sticky soft-dirty bit, and
 * contiguous offsets.  The model maps anonymous memory only, with the
 * default policy, so vm_file and the mempolicy always agree.
 */
static bool anon_vma_compatible(const struct vm_area_struct *a,
				const struct vm_area_struct *b)
{
	const unsigned long ignored = VM_READ | VM_WRITE | VM_EXEC |
				      VM_SOFTDIRTY;

	return a->vm_end == b->vm_start &&
	       !((a->vm_flags ^ b->vm_flags) & ~ignored) &&
	       b->vm_pgoff == a->vm_pgoff + ((a->vm_end - a->vm_start) >> PAGE_SHIFT);
}

/*
 * reusable_anon_vma(): @old's anon_vma, if @a and @b are compatible and
 * @old's anon_vma chain holds only its own (it was not forked: a forked
 * VMA's chain links its parents', which must not spread).  The neighbour
 * may be taking its anon_vma in a fault beside ours (mmap_lock is held
 * for read): a NULL read just means no reuse.
 */
static struct anon_vma *reusable_anon_vma(const struct vm_area_struct *old,
					  const struct vm_area_struct *a,
					  const struct vm_area_struct *b)
{
	struct anon_vma *av;

	if (!anon_vma_compatible(a, b))
		return NULL;
	/* Acquire: pairs with anon_vma_prepare()'s release. */
	av = atomic_load_explicit(&old->anon_vma, memory_order_acquire);
	return av && av->root == av ? av : NULL;
}

/*
 * find_mergeable_anon_vma(): a first fault in @vma takes a neighbour's
 * anon_vma when it can (the next VMA first, then the previous), so that
 * a later mprotect() making the two alike can merge them again.
 */
struct anon_vma *find_mergeable_anon_vma(struct vm_area_struct *vma)
{
	struct mm_struct *mm = vma->vm_mm;
	int i = vma_index(mm, vma);
	struct anon_vma *av = NULL;

	if (i < 0)
		return NULL;
	if (i + 1 < mm->nr_vmas)
		av = reusable_anon_vma(mm->vmas[i + 1], vma, mm->vmas[i + 1]);
	if (!av && i > 0)
		av = reusable_anon_vma(mm->vmas[i - 1], mm->vmas[i - 1], vma);
	return av;
}

static bool vmas_can_merge(const struct vm_area_struct *a,
			   const struct vm_area_struct *b)
{
	return a->vm_end == b->vm_start && a->vm_flags == b->vm_flags &&
	       is_mergeable_anon_vma(a, b) &&
	       b->vm_pgoff == a->vm_pgoff + ((a->vm_end - a->vm_start) >> PAGE_SHIFT);
}

/* Merge every mergeable neighbour pair touching [start, end]. */
void vma_try_merge_around(struct mm_struct *mm, unsigned long start,
			  unsigned long end)
{
	int i = vma_search(mm, start);

	if (i > 0)
		i--;
	while (i + 1 < mm->nr_vmas && mm->vmas[i]->vm_start <= end) {
		struct vm_area_struct *a = mm->vmas[i], *b = mm->vmas[i + 1];

		if (!vmas_can_merge(a, b)) {
			i++;
			continue;
		}
		/* Unlink b while the array is still sorted, then grow a. */
		vma_remove(mm, b);
		a->vm_end = b->vm_end;
		if (!a->anon_vma)
			a->anon_vma = anon_vma_get(b->anon_vma);
		vm_area_free(b);
	}
}

/*
 * vma_merge_extend(): mremap's expansion in place.  @vma grows by @delta
 * at its end (the caller checked that nothing maps the new range; the new
 * pages are absent) and then merges with the next VMA if it now adjoins
 * it and is compatible.  A grown VMA may cover an aligned block it did not
 * before, so later faults may take larger folios.
 */
struct vm_area_struct *vma_merge_extend(struct mm_struct *mm,
					struct vm_area_struct *vma,
					unsigned long delta)
{
	/* The array stays sorted: [vm_end, vm_end + delta) was free. */
	vma->vm_end += delta;
	vma_try_merge_around(mm, vma->vm_end, vma->vm_end);
	return vma;
}

/*
 * Make [start, end) start and end on VMA boundaries (splitting as needed)
 * and return the first VMA inside it.  The range must be fully mapped
 * unless the caller accepts holes (munmap does).
 */
int vma_modify_range(struct mm_struct *mm, unsigned long start,
		     unsigned long end, struct vm_area_struct **vmap)
{
	struct vm_area_struct *vma = find_vma(mm, start);
	int err;

	*vmap = NULL;
	if (!vma || vma->vm_start >= end)
		return 0;
	if (vma->vm_start < start) {
		err = split_vma(mm, vma, start, 1);
		if (err)
			return err;
	}
	vma = find_vma(mm, end - 1);
	if (vma && vma->vm_start < end && vma->vm_end > end) {
		err = split_vma(mm, vma, end, 0);
		if (err)
			return err;
	}
	*vmap = find_vma(mm, start);
	return 0;
}

/*
 * vma_modify_flags(): give [start, end) of @vma the flags @newflags,
 * splitting it where the range ends inside.  Returns the VMA that now
 * covers exactly [start, end), or NULL with *errp set.  Callers merge
 * neighbours afterwards (vma_try_merge_around).
 */
struct vm_area_struct *vma_modify_flags(struct mm_struct *mm,
					struct vm_area_struct *vma,
					unsigned long start, unsigned long end,
					unsigned long newflags, int *errp)
{
	*errp = 0;
	if (start > vma->vm_start) {
		*errp = split_vma(mm, vma, start, 1);
		if (*errp)
			return NULL;
		vma = vma_lookup(mm, start);
	}
	if (end < vma->vm_end) {
		*errp = split_vma(mm, vma, end, 0);
		if (*errp)
			return NULL;
	}
	vma->vm_flags = newflags;
	vma->vm_page_prot = vm_get_page_prot(newflags);
	return vma;
}

/*
 * A private anonymous mapping at @addr: MAP_FIXED_NOREPLACE, or MAP_FIXED
 * with @fixed.  do_mmap()'s checks come in Linux's order, before anything
 * is looked at: a zero length is -EINVAL; the length is page-aligned, and
 * one that rounds up to 0 is -ENOMEM; then __get_unmapped_area(): a
 * length past TASK_SIZE or a range ending past it is -ENOMEM, and only
 * then an unaligned @addr -EINVAL.  Then an existing mapping in the way
 * is -EEXIST, or with @fixed unmapped first (mmap_region()).
 */
int do_mmap(struct mm_struct *mm, unsigned long addr, unsigned long len,
	    unsigned long vm_flags, bool fixed)
{
	struct vm_area_struct *vma, *next;
	int err;

	if (!len)
		return -EINVAL;
	len = ALIGN(len, PAGE_SIZE);
	if (!len)
		return -ENOMEM;
	if (len > TASK_SIZE || addr > TASK_SIZE - len)
		return -ENOMEM;
	if (addr & ~PAGE_MASK)
		return -EINVAL;
	if (fixed) {
		err = do_munmap(mm, addr, len);
		if (err)
			return err;
	} else {
		next = find_vma(mm, addr);
		if (next && next->vm_start < addr + len)
			return -EEXIST;		/* MAP_FIXED_NOREPLACE */
	}
	vma = vm_area_alloc(mm);
	if (!vma)
		return -ENOMEM;
	vma->vm_start = addr;
	vma->vm_end = addr + len;
	/* accountable_mapping(): private and writable is committed memory. */
	if ((vm_flags & (VM_SHARED | VM_WRITE)) == VM_WRITE)
		vm_flags |= VM_ACCOUNT;
	/* New mappings start soft-dirty: tracking is off until clear_refs. */
	vma->vm_flags = vm_flags | VM_MAYREAD | VM_MAYWRITE | VM_MAYEXEC |
			VM_SOFTDIRTY;
	vma->vm_page_prot = vm_get_page_prot(vma->vm_flags);
	vma->vm_pgoff = addr >> PAGE_SHIFT;
	err = vma_insert(mm, vma);
	if (err) {
		vm_area_free(vma);
		return err;
	}
	vma_try_merge_around(mm, addr, addr + len);
	return 0;
}

/* Is any VMA left in [start, end)? */
static bool range_has_vma(struct mm_struct *mm, unsigned long start,
			  unsigned long end)
{
	struct vm_area_struct *vma = find_vma(mm, start);

	return vma && vma->vm_start < end;
}

/*
 * free_pgtables() for a hole: free every PTE table whose whole 2M range
 * no longer meets a VMA.  Upper-level tables are freed at exit only.
 */
void free_pgd_range(struct mmu_gather *tlb, struct mm_struct *mm,
		    unsigned long addr, unsigned long end)
{
	unsigned long a;

	for (a = ALIGN_DOWN(addr, PMD_SIZE); a < end; a += PMD_SIZE) {
		pmd_t *pmdp = walk_to_pmd(mm, a);
		pmd_t pmd;
		spinlock_t *ptl;

		if (!pmdp || range_has_vma(mm, a, a + PMD_SIZE))
			continue;
		ptl = pmd_lock(mm, pmdp);
		pmd = pmdp_get(pmdp);
		/* zap already removed every leaf; only a table can be left */
		if (pmd_is_table(pmd)) {
			set_pmd(pmdp, __pmd(0));
			mm->nr_ptes--;
			tlb_remove_table(tlb, table_entry_pfn(pmd_val(pmd)));
		}
		spin_unlock(ptl);
	}
}

/* Zap the pages of [start, end) in @vma (part of munmap/exit). */
void unmap_region(struct mm_struct *mm, struct vm_area_struct *vma,
		  unsigned long start, unsigned long end)
{
	struct mmu_gather tlb;

	tlb_gather_mmu(&tlb, mm);
	zap_page_range(&tlb, vma, start, end, NULL);
	tlb_finish_mmu(&tlb);
}

int do_munmap(struct mm_struct *mm, unsigned long start, unsigned long len)
{
	unsigned long end = start + len;
	struct vm_area_struct *vma;
	struct mmu_gather tlb;
	int err;

	if (!IS_ALIGNED(start, PAGE_SIZE) || !len || end > TASK_SIZE || end < start)
		return -EINVAL;
	len = ALIGN(len, PAGE_SIZE);
	end = start + len;
	err = vma_modify_range(mm, start, end, &vma);
	if (err)
		return err;
	tlb_gather_mmu(&tlb, mm);
	while ((vma = find_vma(mm, start)) && vma->vm_start < end) {
		zap_page_range(&tlb, vma, vma->vm_start, vma->vm_end, NULL);
		vma_remove(mm, vma);
		vm_area_free(vma);
	}
	free_pgd_range(&tlb, mm, start, end);
	tlb_finish_mmu(&tlb);
	return 0;
}
