/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mm/arch/ - PTE encodings of the architectures the model runs.
 *
 * x86_64.h: the x86-64 entry format and the pte_*()/pmd_*() helpers the
 * generic code asks questions with.  Bit positions follow
 * arch/x86/include/asm/pgtable_types.h; the dirty/SavedDirty/shadow-stack
 * rules follow arch/x86/include/asm/pgtable.h.  A test
 * (tests/unit/test_pte.c) pins the bit values.
 */
#ifndef MM_ARCH_X86_64_H
#define MM_ARCH_X86_64_H

#include "mm/arch/types.h"


#define _PAGE_BIT_PRESENT	0
#define _PAGE_BIT_RW		1
#define _PAGE_BIT_USER		2
#define _PAGE_BIT_PWT		3
#define _PAGE_BIT_PCD		4
#define _PAGE_BIT_ACCESSED	5
#define _PAGE_BIT_DIRTY		6
#define _PAGE_BIT_PSE		7	/* huge leaf at PMD/PUD level */
#define _PAGE_BIT_PAT		7	/* at PTE level */
#define _PAGE_BIT_GLOBAL	8
#define _PAGE_BIT_PROTNONE	_PAGE_BIT_GLOBAL	/* only when !PRESENT */
#define _PAGE_BIT_SPECIAL	9	/* SOFTW1 */
#define _PAGE_BIT_UFFD_WP	10	/* SOFTW2 */
#define _PAGE_BIT_SOFT_DIRTY	11	/* SOFTW3 */
#define _PAGE_BIT_SAVED_DIRTY	58	/* SOFTW5 */
#define _PAGE_BIT_PKEY0		59
#define _PAGE_BIT_NX		63

#define _PAGE_PRESENT		(1ULL << _PAGE_BIT_PRESENT)
#define _PAGE_RW		(1ULL << _PAGE_BIT_RW)
#define _PAGE_USER		(1ULL << _PAGE_BIT_USER)
#define _PAGE_PWT		(1ULL << _PAGE_BIT_PWT)
#define _PAGE_PCD		(1ULL << _PAGE_BIT_PCD)
#define _PAGE_ACCESSED		(1ULL << _PAGE_BIT_ACCESSED)
#define _PAGE_DIRTY		(1ULL << _PAGE_BIT_DIRTY)
#define _PAGE_PSE		(1ULL << _PAGE_BIT_PSE)
#define _PAGE_GLOBAL		(1ULL << _PAGE_BIT_GLOBAL)
#define _PAGE_PROTNONE		(1ULL << _PAGE_BIT_PROTNONE)
#define _PAGE_SPECIAL		(1ULL << _PAGE_BIT_SPECIAL)
#define _PAGE_UFFD_WP		(1ULL << _PAGE_BIT_UFFD_WP)
#define _PAGE_SOFT_DIRTY	(1ULL << _PAGE_BIT_SOFT_DIRTY)
#define _PAGE_SAVED_DIRTY	(1ULL << _PAGE_BIT_SAVED_DIRTY)
#define _PAGE_PKEY_MASK		(0xfULL << _PAGE_BIT_PKEY0)
#define _PAGE_NX		(1ULL << _PAGE_BIT_NX)

#define X86_PAGE_SHIFT		12

/* What the generic code asks of an architecture (mm/arch/arch.h). */
#ifdef CONFIG_X86_PAE
/*
 * x86-pae: this encoding, but a PTE is read as two 32-bit halves
 * (mm/pgtable.h); everything else is x86-64's.
 */
#define ARCH_NAME		"x86-pae"
#else
#define ARCH_NAME		"x86_64"
#endif
#define ARCH_PAGE_SHIFT		X86_PAGE_SHIFT
#define ARCH_TASK_SIZE		(1UL << 47)	/* four-level paging */
#define PTE_PFN_MASK		0x000ffffffffff000ULL	/* bits 12..51 */
/* x86 has the soft-dirty bit (HAVE_ARCH_SOFT_DIRTY); arm64 does not. */
#define CONFIG_MEM_SOFT_DIRTY	1

/*
 * Bits pte_modify() keeps from the old entry (_PAGE_CHG_MASK); everything
 * else comes from the new protection.
 */
#define _PAGE_CHG_MASK	(PTE_PFN_MASK | _PAGE_PCD | _PAGE_PWT | _PAGE_SPECIAL | \
			 _PAGE_ACCESSED | _PAGE_DIRTY | _PAGE_SAVED_DIRTY | \
			 _PAGE_SOFT_DIRTY | _PAGE_UFFD_WP)

/* vm_page_prot values of private mappings (never RW: COW sets it). */
#define PAGE_NONE	(_PAGE_PROTNONE | _PAGE_ACCESSED)
#define PAGE_READONLY	(_PAGE_PRESENT | _PAGE_USER | _PAGE_ACCESSED | _PAGE_NX)
#define PAGE_SHARED	(PAGE_READONLY | _PAGE_RW)


static inline bool pte_none(pte_t pte) { return pte.pte == 0; }
/* PROT_NONE entries are "present" to the kernel but not to the MMU. */
static inline bool pte_present(pte_t pte)
{
	return pte.pte & (_PAGE_PRESENT | _PAGE_PROTNONE);
}
static inline bool pte_protnone(pte_t pte)
{
	return (pte.pte & (_PAGE_PRESENT | _PAGE_PROTNONE)) == _PAGE_PROTNONE;
}
static inline bool pte_hw_dirty(pte_t pte) { return pte.pte & _PAGE_DIRTY; }
/* RW=0, Dirty=1 is the shadow-stack encoding. */
static inline bool pte_shstk(pte_t pte)
{
	return (pte.pte & (_PAGE_RW | _PAGE_DIRTY)) == _PAGE_DIRTY;
}
static inline bool pte_write(pte_t pte)
{
	return (pte.pte & _PAGE_RW) || pte_shstk(pte);
}
static inline bool pte_dirty(pte_t pte)
{
	return pte.pte & (_PAGE_DIRTY | _PAGE_SAVED_DIRTY);
}
static inline bool pte_young(pte_t pte) { return pte.pte & _PAGE_ACCESSED; }
static inline bool pte_special(pte_t pte) { return pte.pte & _PAGE_SPECIAL; }
static inline bool pte_soft_dirty(pte_t pte) { return pte.pte & _PAGE_SOFT_DIRTY; }
static inline bool pte_uffd_wp(pte_t pte) { return pte.pte & _PAGE_UFFD_WP; }
static inline bool pte_user(pte_t pte) { return pte.pte & _PAGE_USER; }

/*
 * PFN of a present entry.  Non-present PROT_NONE entries store the PFN
 * inverted (L1TF mitigation, pgtable-invert.h).
 */
static inline bool __pte_needs_invert(uint64_t val)
{
	return val && !(val & _PAGE_PRESENT);
}
static inline uint64_t protnone_mask(uint64_t val)
{
	return __pte_needs_invert(val) ? ~0ULL : 0;
}
static inline unsigned long pte_pfn(pte_t pte)
{
	uint64_t v = pte.pte ^ protnone_mask(pte.pte);

	return (v & PTE_PFN_MASK) >> X86_PAGE_SHIFT;
}
/* Step the PFN of an entry by @nr pages; PROT_NONE PFNs are stored inverted. */
static inline pte_t arch_pte_advance_pfn(pte_t pte, unsigned long nr)
{
	uint64_t step = (uint64_t)nr << X86_PAGE_SHIFT;

	if (__pte_needs_invert(pte.pte))
		return (pte_t){ pte.pte - step };
	return (pte_t){ pte.pte + step };
}
static inline pte_t pfn_pte(unsigned long pfn, pgprot_t prot)
{
	uint64_t pfnbits = (uint64_t)pfn << X86_PAGE_SHIFT;

	pfnbits ^= protnone_mask(prot.pgprot);
	return __pte((pfnbits & PTE_PFN_MASK) | prot.pgprot);
}

/*
 * Keep the dirty bit where the write bit allows it: a read-only entry
 * keeps it in SavedDirty (so RW=0/D=1 is never created by accident), a
 * writable one in hardware Dirty.
 */
static inline uint64_t mksaveddirty_shift(uint64_t v)
{
	if (!(v & _PAGE_RW) && (v & _PAGE_DIRTY))
		v = (v & ~_PAGE_DIRTY) | _PAGE_SAVED_DIRTY;
	return v;
}
static inline uint64_t clear_saveddirty_shift(uint64_t v)
{
	if ((v & _PAGE_RW) && (v & _PAGE_SAVED_DIRTY))
		v = (v & ~_PAGE_SAVED_DIRTY) | _PAGE_DIRTY;
	return v;
}

static inline pte_t pte_mkold(pte_t pte) { return __pte(pte.pte & ~_PAGE_ACCESSED); }
static inline pte_t pte_mkyoung(pte_t pte) { return __pte(pte.pte | _PAGE_ACCESSED); }
static inline pte_t pte_mkclean(pte_t pte)
{
	return __pte(pte.pte & ~(_PAGE_DIRTY | _PAGE_SAVED_DIRTY));
}
/* x86 pte_mkdirty also sets soft-dirty; a read-only entry keeps it saved. */
static inline pte_t pte_mkdirty(pte_t pte)
{
	return __pte(mksaveddirty_shift(pte.pte | _PAGE_DIRTY | _PAGE_SOFT_DIRTY));
}
static inline pte_t pte_wrprotect(pte_t pte)
{
	return __pte(mksaveddirty_shift(pte.pte & ~_PAGE_RW));
}
/* The VMA-less half of pte_mkwrite(): set RW, restore SavedDirty to D. */
static inline pte_t pte_mkwrite_novma(pte_t pte)
{
	return __pte(clear_saveddirty_shift(pte.pte | _PAGE_RW));
}
/* Shadow-stack VMAs make "writable" entries RW=0, Dirty=1. */
static inline pte_t pte_mkwrite_shstk(pte_t pte)
{
	return __pte((pte.pte & ~(_PAGE_RW | _PAGE_SAVED_DIRTY)) | _PAGE_DIRTY);
}
static inline pte_t pte_mksoft_dirty(pte_t pte) { return __pte(pte.pte | _PAGE_SOFT_DIRTY); }
static inline pte_t pte_clear_soft_dirty(pte_t pte) { return __pte(pte.pte & ~_PAGE_SOFT_DIRTY); }
static inline pte_t pte_mkspecial(pte_t pte) { return __pte(pte.pte | _PAGE_SPECIAL); }
static inline pte_t pte_mkuffd_wp(pte_t pte)
{
	return pte_wrprotect(__pte(pte.pte | _PAGE_UFFD_WP));
}
static inline pte_t pte_clear_uffd_wp(pte_t pte) { return __pte(pte.pte & ~_PAGE_UFFD_WP); }

/*
 * pte_modify(): keep _PAGE_CHG_MASK, take the rest from @newprot, then
 * keep the dirty bit where it may live given the new RW.
 */
static inline pte_t pte_modify(pte_t pte, pgprot_t newprot)
{
	uint64_t old = pte.pte;
	uint64_t v = old & _PAGE_CHG_MASK;
	uint64_t pfnbits;

	/* Undo the protnone PFN inversion, apply the new one. */
	pfnbits = (old ^ protnone_mask(old)) & PTE_PFN_MASK;
	v = (v & ~PTE_PFN_MASK) | (newprot.pgprot & ~_PAGE_CHG_MASK);
	v |= pfnbits ^ (protnone_mask(v) & PTE_PFN_MASK);
	if (old & _PAGE_RW)
		v = mksaveddirty_shift(v);
	else
		v = clear_saveddirty_shift(v);
	return __pte(v);
}

/*
 * Can pte_write() of an entry shaped like @pte change with its dirty bit
 * alone?  Only without RW: there Dirty=1 is the shadow-stack encoding.
 */
static inline bool pte_write_needs_dirty(pte_t pte)
{
	return !(pte.pte & _PAGE_RW);
}

/* What the MMU would let a user access through this entry. */
static inline bool pte_access_permitted(pte_t pte, bool write)
{
	uint64_t need = _PAGE_PRESENT | _PAGE_USER;

	if (write)
		need |= _PAGE_RW;
	return (pte.pte & need) == need;
}

/*
 * The entry as the MMU leaves it after using @v (a PTE or a PMD leaf) for
 * a load or a store: Accessed, and Dirty for a store.  The caller has
 * checked pte_access_permitted().
 */
static inline uint64_t arch_hw_update_access(uint64_t v, bool write)
{
	return v | _PAGE_ACCESSED | (write ? _PAGE_DIRTY : 0);
}

/*
 * x86 pte_needs_flush(): does changing @oldpte to @newpte require a TLB
 * flush?  Software bits and Accessed are ignored; clearing Dirty or
 * Present flushes; any change of RW, USER, cache, global, PAT/PSE, pkey or
 * NX flushes.
 */
static inline bool pte_needs_flush(pte_t oldpte, pte_t newpte)
{
	uint64_t o = oldpte.pte, n = newpte.pte;
	const uint64_t flush_on_clear = _PAGE_DIRTY | _PAGE_PRESENT;
	const uint64_t flush_on_change = _PAGE_RW | _PAGE_USER | _PAGE_PWT |
		_PAGE_PCD | _PAGE_PSE | _PAGE_GLOBAL | _PAGE_PKEY_MASK | _PAGE_NX;

	if (!(o & _PAGE_PRESENT))
		return false;
	if ((o & PTE_PFN_MASK) != (n & PTE_PFN_MASK))
		return true;
	if ((o ^ n) & flush_on_change)
		return true;
	if ((o & flush_on_clear) & ~n)
		return true;
	return false;
}

/* PMD leaves share the PTE encoding plus PSE. */
static inline pte_t pmd_pte(pmd_t pmd) { return __pte(pmd.pmd & ~_PAGE_PSE); }
static inline pmd_t pte_pmd(pte_t pte) { return __pmd(pte.pte | _PAGE_PSE); }
static inline bool pmd_none(pmd_t pmd) { return pmd.pmd == 0; }
static inline bool pmd_leaf(pmd_t pmd) { return pmd.pmd & _PAGE_PSE; }
static inline bool pmd_present(pmd_t pmd) { return pte_present(pmd_pte(pmd)); }
static inline bool pmd_write(pmd_t pmd) { return pte_write(pmd_pte(pmd)); }
static inline bool pmd_protnone(pmd_t pmd) { return pte_protnone(pmd_pte(pmd)); }
static inline bool pmd_special(pmd_t pmd) { return pte_special(pmd_pte(pmd)); }
static inline unsigned long pmd_pfn(pmd_t pmd) { return pte_pfn(pmd_pte(pmd)); }

/* Table (non-leaf) entries. */
#define _KERNPG_TABLE (_PAGE_PRESENT | _PAGE_RW | _PAGE_USER | _PAGE_ACCESSED | _PAGE_DIRTY)
static inline uint64_t mk_table_entry(unsigned long pfn)
{
	return ((uint64_t)pfn << X86_PAGE_SHIFT) | _KERNPG_TABLE;
}
static inline unsigned long table_entry_pfn(uint64_t v)
{
	return (v & PTE_PFN_MASK) >> X86_PAGE_SHIFT;
}

#endif /* MM_ARCH_X86_64_H */
