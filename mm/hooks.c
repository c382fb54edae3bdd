// SPDX-License-Identifier: GPL-2.0-only
/*
 * hooks.c: the test-only hooks of hooks.h.  Built into every library, but
 * only the hooks build (CONFIG_PB_HOOKS) calls them.
 */
#include "mm/pgtable.h"

#ifdef CONFIG_PB_HOOKS
atomic_ullong pb_hook_clock = 1;
void (*pb_hook_entry_written)(const struct pb_entry_event *ev);
void (*pb_hook_gup_fast)(enum gup_fast_step step, void *ptep,
			 unsigned int idx);
bool pb_hook_gup_batch_plain;
void (*pb_hook_fork_prealloc)(void);
#ifdef CONFIG_X86_PAE
void (*pb_hook_split_read)(void *entryp);
#endif

static const int level_shift[] = { 0, PAGE_SHIFT, PMD_SHIFT, PUD_SHIFT,
				   PGDIR_SHIFT };

void hook_table_root(unsigned long pgd_pfn, struct mm_struct *mm)
{
	struct page *pt = pfn_to_page(pgd_pfn);

	pt->pt.pt_mm = mm;
	pt->pt.pt_addr = 0;
	pt->pt.pt_level = 4;
}

/*
 * A withdrawn PTE table is filled before it is linked (at a split), so it
 * is labelled when withdrawn, for the PMD entry it will stand behind: the
 * deposit list is per PMD table, so a table deposited beside one huge PMD
 * may be withdrawn for another.
 */
void hook_table_withdrawn(void *pmdp, unsigned long table_pfn)
{
	struct page *pmd_table = table_page_of(pmdp), *pt;
	unsigned long index = ((unsigned long)pmdp & (PAGE_SIZE - 1)) /
			      sizeof(uint64_t);

	if (pmd_table->pt.pt_level != 2)
		return;
	pt = pfn_to_page(table_pfn);
	pt->pt.pt_mm = pmd_table->pt.pt_mm;
	pt->pt.pt_addr = pmd_table->pt.pt_addr + (index << PMD_SHIFT);
	pt->pt.pt_level = 1;
}

/*
 * After a store of @val to @entryp: tell the test what the entry maps, and
 * when a table entry links a lower table, label that table with its owner,
 * level and address so its own entries can be told.  Every entry store is
 * under the lock that serializes its table's entries, so the label is
 * written before any store to the lower table can be.
 */
void hook_entry_written(void *entryp, uint64_t val, uint64_t seq_before)
{
	struct page *pt = table_page_of(entryp);
	unsigned long index = ((unsigned long)entryp & (PAGE_SIZE - 1)) /
			      sizeof(uint64_t);
	struct pb_entry_event ev;
	int level = pt->pt.pt_level;

	if (level < 1 || level > 4)
		return;		/* not a labelled table (a test writing raw) */
	ev.mm = pt->pt.pt_mm;
	ev.level = level;
	ev.addr = pt->pt.pt_addr + (index << level_shift[level]);
	ev.val = val;
	ev.seq_before = seq_before;
	if (level > 2 ? val != 0 : level == 2 && pmd_is_table(__pmd(val))) {
		struct page *lower = pfn_to_page(table_entry_pfn(val));

		lower->pt.pt_mm = ev.mm;
		lower->pt.pt_addr = ev.addr;
		lower->pt.pt_level = level - 1;
	}
	ev.seq_after = pb_hook_tick();
	if (pb_hook_entry_written)
		pb_hook_entry_written(&ev);
}
#endif
