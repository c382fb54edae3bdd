/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * arm64.h: the arm64 stage-1 descriptor format (VMSAv8-64) for the 4K,
 * 16K and 64K granules, and the pte_*()/pmd_*() helpers the generic code
 * asks questions with.  Bit positions follow
 * arch/arm64/include/asm/pgtable-hwdef.h and pgtable-prot.h; the
 * dirty/write rules follow arch/arm64/include/asm/pgtable.h.  Selected by
 * `make ARCH=arm64-4k|arm64-16k|arm64-64k` (CONFIG_ARM64_PAGE_SHIFT).
 *
 * What differs from x86-64, and why the generic code does not notice:
 * - There is no hardware Dirty bit.  With FEAT_HAFDBS, DBM (bit 51, used
 *   as PTE_WRITE) says "writable", and AP[2] (PTE_RDONLY) says whether the
 *   MMU may write now; a store to a DBM=1, RDONLY=1 entry clears RDONLY
 *   itself.  So "hardware dirty" is PTE_WRITE && !PTE_RDONLY, and an entry
 *   that loses its write permission keeps that dirtiness in the software
 *   bit PTE_DIRTY (pte_wrprotect), the way x86 keeps it in SavedDirty.
 * - PROT_NONE is an invalid descriptor (!PTE_VALID) that Linux still
 *   treats as present: PTE_PRESENT_INVALID, the nG bit reused.
 * - PTE_CONT (bit 52) marks CONT_PTES aligned entries mapping one
 *   physically contiguous block; mm/arch/contpte.h keeps it private to
 *   the arch, as arch/arm64/mm/contpte.c does.
 * - No soft-dirty, no shadow stack of the x86 kind: those helpers are
 *   no-ops and predicates that answer false.
 * Physical addresses are 48 bits (PA bits [47:PAGE_SHIFT] in the entry;
 * the 52-bit layout of 64K pages is not modelled: frames stay far below).
 */
#ifndef MM_ARCH_ARM64_H
#define MM_ARCH_ARM64_H

#include "mm/arch/types.h"

#if !defined(CONFIG_ARM64_PAGE_SHIFT)
#error "CONFIG_ARM64 needs CONFIG_ARM64_PAGE_SHIFT (12, 14 or 16)"
#elif CONFIG_ARM64_PAGE_SHIFT == 12
#define ARCH_NAME		"arm64-4k"
#define CONFIG_ARM64_CONT_PTE_SHIFT	4	/* 16 x 4K = 64K */
#elif CONFIG_ARM64_PAGE_SHIFT == 14
#define ARCH_NAME		"arm64-16k"
#define CONFIG_ARM64_CONT_PTE_SHIFT	7	/* 128 x 16K = 2M */
#elif CONFIG_ARM64_PAGE_SHIFT == 16
#define ARCH_NAME		"arm64-64k"
#define CONFIG_ARM64_CONT_PTE_SHIFT	5	/* 32 x 64K = 2M */
#else
#error "CONFIG_ARM64_PAGE_SHIFT must be 12, 14 or 16"
#endif


/* What the generic code asks of an architecture (mm/arch/arch.h). */
#define ARCH_PAGE_SHIFT		CONFIG_ARM64_PAGE_SHIFT
#define ARCH_TASK_SIZE		(1UL << 48)	/* VA_BITS = 48 */

/* Descriptor type, bits [1:0]. */
#define PTE_VALID		(1ULL << 0)
#define PTE_TYPE_MASK		(3ULL << 0)
#define PTE_TYPE_PAGE		(3ULL << 0)	/* level 3: page */
#define PTE_TABLE_BIT		(1ULL << 1)
#define PMD_TYPE_MASK		(3ULL << 0)
#define PMD_TYPE_TABLE		(3ULL << 0)	/* levels 0-2: next table */
#define PMD_TYPE_SECT		(1ULL << 0)	/* level 2: block */
#define PMD_TABLE_BIT		(1ULL << 1)

/* Lower attributes. */
#define PTE_ATTRINDX(t)		((uint64_t)(t) << 2)	/* MAIR index */
#define PTE_ATTRINDX_MASK	(7ULL << 2)
#define MT_NORMAL		0
#define PTE_USER		(1ULL << 6)	/* AP[1]: EL0 access */
#define PTE_RDONLY		(1ULL << 7)	/* AP[2]: no write */
#define PTE_SHARED		(3ULL << 8)	/* SH[1:0]: inner shareable */
#define PTE_AF			(1ULL << 10)	/* Access Flag */
#define PTE_NG			(1ULL << 11)	/* not global: ASID-tagged */

/* Upper attributes. */
#define PTE_DBM			(1ULL << 51)	/* Dirty Bit Modifier */
#define PTE_CONT		(1ULL << 52)	/* contiguous hint */
#define PTE_PXN			(1ULL << 53)
#define PTE_UXN			(1ULL << 54)

/* Software bits (ignored by the MMU). */
#define PTE_WRITE		PTE_DBM		/* writable: DBM, as Linux uses it */
#define PTE_DIRTY		(1ULL << 55)	/* dirty while RDONLY says clean */
#define PTE_SPECIAL		(1ULL << 56)
#define PTE_UFFD_WP		(1ULL << 58)
/* Invalid to the MMU but present to Linux (PROT_NONE); only when !VALID. */
#define PTE_PRESENT_INVALID	PTE_NG

#define PTE_ADDR_MASK		(((1ULL << (48 - ARCH_PAGE_SHIFT)) - 1) << ARCH_PAGE_SHIFT)
#define PTE_PFN_MASK		PTE_ADDR_MASK

/* Contiguous-PTE blocks: CONT_PTES entries, naturally aligned in VA and PA. */
#define CONT_PTE_SHIFT		(CONFIG_ARM64_CONT_PTE_SHIFT + ARCH_PAGE_SHIFT)
#define CONT_PTES		(1U << CONFIG_ARM64_CONT_PTE_SHIFT)
#define CONT_PTE_SIZE		(1UL << CONT_PTE_SHIFT)
#define CONT_PTE_MASK		(~(CONT_PTE_SIZE - 1))
/* The contpte layer (mm/arch/contpte.h) provides the public PTE API. */
#define ARCH_HAS_CONTPTE	1
/*
 * The write-fault reuse window is one block: relaxed in place, a folded
 * block stays folded, with one invalidation (contpte_set_access_flags_ptes).
 */
#define WP_REUSE_MAX_NR_PTES	CONT_PTES

/* Protections (pgprot-prot.h); every user page is nG, never executable here. */
#define _PROT_DEFAULT		(PTE_TYPE_PAGE | PTE_AF | PTE_SHARED)
#define _PAGE_DEFAULT		(_PROT_DEFAULT | PTE_ATTRINDX(MT_NORMAL))
#define PAGE_NONE		((_PAGE_DEFAULT & ~PTE_VALID) | PTE_PRESENT_INVALID | \
				 PTE_RDONLY | PTE_PXN | PTE_UXN)
#define PAGE_READONLY		(_PAGE_DEFAULT | PTE_USER | PTE_RDONLY | PTE_NG | \
				 PTE_PXN | PTE_UXN)
#define PAGE_SHARED		(PAGE_READONLY | PTE_WRITE)

static inline pte_t set_pte_bit(pte_t pte, uint64_t bits) { return __pte(pte.pte | bits); }
static inline pte_t clear_pte_bit(pte_t pte, uint64_t bits) { return __pte(pte.pte & ~bits); }

static inline bool pte_none(pte_t pte) { return pte.pte == 0; }
static inline bool pte_valid(pte_t pte) { return pte.pte & PTE_VALID; }
static inline bool pte_present_invalid(pte_t pte)
{
	return (pte.pte & (PTE_VALID | PTE_PRESENT_INVALID)) == PTE_PRESENT_INVALID;
}
static inline bool pte_present(pte_t pte)
{
	return pte_valid(pte) || pte_present_invalid(pte);
}
static inline bool pte_user(pte_t pte) { return pte.pte & PTE_USER; }
static inline bool pte_user_exec(pte_t pte) { return !(pte.pte & PTE_UXN); }
/*
 * PROT_NONE: present-invalid and no user access at all.  A present-invalid
 * entry that kept its user bits would be something else (an invalidated
 * PMD), never PROT_NONE.
 */
static inline bool pte_protnone(pte_t pte)
{
	return pte_present_invalid(pte) && !pte_user(pte) && !pte_user_exec(pte);
}
static inline bool pte_cont(pte_t pte) { return pte.pte & PTE_CONT; }
static inline bool pte_valid_cont(pte_t pte) { return pte_valid(pte) && pte_cont(pte); }
static inline bool pte_write(pte_t pte) { return pte.pte & PTE_WRITE; }
static inline bool pte_rdonly(pte_t pte) { return pte.pte & PTE_RDONLY; }
/* Written through a DBM entry: the MMU cleared RDONLY. */
static inline bool pte_hw_dirty(pte_t pte) { return pte_write(pte) && !pte_rdonly(pte); }
static inline bool pte_sw_dirty(pte_t pte) { return pte.pte & PTE_DIRTY; }
static inline bool pte_dirty(pte_t pte) { return pte_sw_dirty(pte) || pte_hw_dirty(pte); }
static inline bool pte_young(pte_t pte) { return pte.pte & PTE_AF; }
static inline bool pte_special(pte_t pte) { return pte.pte & PTE_SPECIAL; }
static inline bool pte_uffd_wp(pte_t pte) { return pte.pte & PTE_UFFD_WP; }
/* No soft-dirty bit on arm64 (no HAVE_ARCH_SOFT_DIRTY). */
static inline bool pte_soft_dirty(pte_t pte) { (void)pte; return false; }
/* No x86-style shadow stack: write never hangs on dirty. */
static inline bool pte_shstk(pte_t pte) { (void)pte; return false; }
static inline bool pte_write_needs_dirty(pte_t pte) { (void)pte; return false; }

static inline unsigned long pte_pfn(pte_t pte)
{
	return (pte.pte & PTE_ADDR_MASK) >> ARCH_PAGE_SHIFT;
}
static inline pte_t pfn_pte(unsigned long pfn, pgprot_t prot)
{
	return __pte((((uint64_t)pfn << ARCH_PAGE_SHIFT) & PTE_ADDR_MASK) | prot.pgprot);
}
/* The PFN is stored as is, PROT_NONE included: stepping it is an add. */
static inline pte_t arch_pte_advance_pfn(pte_t pte, unsigned long nr)
{
	return __pte(pte.pte + ((uint64_t)nr << ARCH_PAGE_SHIFT));
}
/* Everything but the output address. */
static inline pgprot_t pte_pgprot(pte_t pte)
{
	return (pgprot_t){ pte.pte & ~PTE_ADDR_MASK };
}

static inline pte_t pte_mkold(pte_t pte) { return clear_pte_bit(pte, PTE_AF); }
static inline pte_t pte_mkyoung(pte_t pte) { return set_pte_bit(pte, PTE_AF); }
/* Clean: forget the software bit and let the MMU see a clean entry. */
static inline pte_t pte_mkclean(pte_t pte)
{
	return set_pte_bit(clear_pte_bit(pte, PTE_DIRTY), PTE_RDONLY);
}
/* Dirty: the software bit, and hardware-dirty too where writable. */
static inline pte_t pte_mkdirty(pte_t pte)
{
	pte = set_pte_bit(pte, PTE_DIRTY);
	if (pte_write(pte))
		pte = clear_pte_bit(pte, PTE_RDONLY);
	return pte;
}
/* Read-only: hardware dirtiness survives in PTE_DIRTY. */
static inline pte_t pte_wrprotect(pte_t pte)
{
	if (pte_hw_dirty(pte))
		pte = set_pte_bit(pte, PTE_DIRTY);
	pte = clear_pte_bit(pte, PTE_WRITE);
	return set_pte_bit(pte, PTE_RDONLY);
}
/*
 * Writable: DBM set; a software-dirty entry becomes hardware-dirty, a
 * clean one stays RDONLY until the MMU's first store clears it.
 */
static inline pte_t pte_mkwrite_novma(pte_t pte)
{
	pte = set_pte_bit(pte, PTE_WRITE);
	if (pte_sw_dirty(pte))
		pte = clear_pte_bit(pte, PTE_RDONLY);
	return pte;
}
/* No VM_SHADOW_STACK VMA exists on arm64 (GCS is not modelled). */
static inline pte_t pte_mkwrite_shstk(pte_t pte) { return pte_mkwrite_novma(pte); }
static inline pte_t pte_mksoft_dirty(pte_t pte) { return pte; }
static inline pte_t pte_clear_soft_dirty(pte_t pte) { return pte; }
static inline pte_t pte_mkspecial(pte_t pte) { return set_pte_bit(pte, PTE_SPECIAL); }
static inline pte_t pte_mkuffd_wp(pte_t pte)
{
	return pte_wrprotect(set_pte_bit(pte, PTE_UFFD_WP));
}
static inline pte_t pte_clear_uffd_wp(pte_t pte) { return clear_pte_bit(pte, PTE_UFFD_WP); }
static inline pte_t pte_mkcont(pte_t pte) { return set_pte_bit(pte, PTE_CONT); }
static inline pte_t pte_mknoncont(pte_t pte) { return clear_pte_bit(pte, PTE_CONT); }

/*
 * pte_modify(): the protection bits come from @newprot, the rest (PFN,
 * AF, software bits, CONT, shareability) stays.  Hardware dirtiness is
 * parked in PTE_DIRTY first, so a change to read-only keeps it, and is
 * restored where the new protection is writable.
 */
static inline pte_t pte_modify(pte_t pte, pgprot_t newprot)
{
	const uint64_t mask = PTE_USER | PTE_PXN | PTE_UXN | PTE_RDONLY |
			      PTE_PRESENT_INVALID | PTE_VALID | PTE_WRITE |
			      PTE_ATTRINDX_MASK;

	if (pte_hw_dirty(pte))
		pte = set_pte_bit(pte, PTE_DIRTY);
	pte = __pte((pte.pte & ~mask) | (newprot.pgprot & mask));
	if (pte_sw_dirty(pte))
		pte = pte_mkdirty(pte);
	return pte;
}

/* What the MMU lets a user access through this entry (DBM: write allowed). */
static inline bool pte_access_permitted(pte_t pte, bool write)
{
	return (pte.pte & (PTE_VALID | PTE_USER)) == (PTE_VALID | PTE_USER) &&
	       (!write || pte_write(pte));
}

/*
 * The entry as the MMU leaves it after using @v (a page or block
 * descriptor) for a load or a store, FEAT_HAFDBS: a load sets AF, a store
 * through a writable (DBM) entry clears RDONLY - the hardware dirty bit.
 * The caller has checked pte_access_permitted().
 */
static inline uint64_t arch_hw_update_access(uint64_t v, bool write)
{
	v |= PTE_AF;
	if (write)
		v &= ~PTE_RDONLY;
	return v;
}

/* Generic Linux: every change may need a flush. */
static inline bool pte_needs_flush(pte_t oldpte, pte_t newpte)
{
	(void)oldpte;
	(void)newpte;
	return true;
}

/*
 * PMD blocks share the page encoding but for the type: bits [1:0] are
 * 01 for a block (00 for a PROT_NONE one) where a page has 11 and a
 * table 11 too - a table is told from a block by bit 1.
 */
static inline pte_t pmd_pte(pmd_t pmd)
{
	return __pte(pmd.pmd ? pmd.pmd | PTE_TABLE_BIT : 0);
}
static inline pmd_t pte_pmd(pte_t pte) { return __pmd(pte.pte & ~PMD_TABLE_BIT); }
static inline bool pmd_none(pmd_t pmd) { return pmd.pmd == 0; }
static inline bool pmd_leaf(pmd_t pmd)
{
	return !pmd_none(pmd) && (pmd.pmd & PMD_TYPE_MASK) != PMD_TYPE_TABLE;
}
static inline bool pmd_present(pmd_t pmd) { return pte_present(pmd_pte(pmd)); }
static inline bool pmd_write(pmd_t pmd) { return pte_write(pmd_pte(pmd)); }
static inline bool pmd_protnone(pmd_t pmd) { return pte_protnone(pmd_pte(pmd)); }
static inline bool pmd_special(pmd_t pmd) { return pte_special(pmd_pte(pmd)); }
static inline unsigned long pmd_pfn(pmd_t pmd) { return pte_pfn(pmd_pte(pmd)); }

/* Table descriptors, every level. */
static inline uint64_t mk_table_entry(unsigned long pfn)
{
	return ((uint64_t)pfn << ARCH_PAGE_SHIFT) | PMD_TYPE_TABLE;
}
static inline unsigned long table_entry_pfn(uint64_t v)
{
	return (v & PTE_ADDR_MASK) >> ARCH_PAGE_SHIFT;
}

#endif /* MM_ARCH_ARM64_H */
