// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_pte.c - the x86-64 entry encoding of mm/arch/x86_64.h: bit
 * positions pinned by value, the Dirty/SavedDirty/shadow-stack rules,
 * pte_modify and pte_needs_flush, as Linux's
 * arch/x86/include/asm/pgtable_types.h and pgtable.h define them.
 *
 * Pure functions of the header: no machine is brought up.
 */
#include "tests/unit/pbtest.h"

#ifdef CONFIG_ARM64
/* The x86 bits do not exist here; arm64's encoding is in test_contpte.c. */
int main(void)
{
	tap_skip("x86-64 entry encoding; arm64's is tested by test_contpte",
		 "pte: x86-64 bit positions, dirty, shadow stack, pte_modify, pte_needs_flush");
	return tap_done();
}
#else

/* A user PTE for pfn 0x12345 with the given extra bits. */
#define PFN 0x12345UL
static pte_t upte(uint64_t bits)
{
	return __pte(((uint64_t)PFN << 12) | _PAGE_PRESENT | _PAGE_USER | bits);
}

/* The bit positions are the hardware's and Linux's; pin them by value. */
static void test_bit_positions(void)
{
	t.ok = true;
	EXPECT_EQ(_PAGE_PRESENT, 0x1ULL);
	EXPECT_EQ(_PAGE_RW, 0x2ULL);
	EXPECT_EQ(_PAGE_USER, 0x4ULL);
	EXPECT_EQ(_PAGE_ACCESSED, 0x20ULL);
	EXPECT_EQ(_PAGE_DIRTY, 0x40ULL);
	EXPECT_EQ(_PAGE_PSE, 0x80ULL);
	EXPECT_EQ(_PAGE_PROTNONE, 0x100ULL);
	EXPECT_EQ(_PAGE_SPECIAL, 0x200ULL);
	EXPECT_EQ(_PAGE_UFFD_WP, 0x400ULL);
	EXPECT_EQ(_PAGE_SOFT_DIRTY, 0x800ULL);
	EXPECT_EQ(_PAGE_SAVED_DIRTY, 0x0400000000000000ULL);
	EXPECT_EQ(_PAGE_NX, 0x8000000000000000ULL);
	EXPECT_EQ(PTE_PFN_MASK, 0x000ffffffffff000ULL);
	/* PROTNONE shares bit 8 with GLOBAL: only meaningful when !present */
	EXPECT_EQ(_PAGE_PROTNONE, _PAGE_GLOBAL);
	EXPECT(!pte_protnone(upte(_PAGE_GLOBAL)));
	EXPECT(pte_present(__pte(_PAGE_PROTNONE)));
	/* private vm_page_prot values never carry RW or Dirty */
	EXPECT(!(PAGE_READONLY & (_PAGE_RW | _PAGE_DIRTY)));
	EXPECT(!(PAGE_NONE & (_PAGE_PRESENT | _PAGE_RW)));
	EXPECT_EQ(pte_pfn(upte(0)), PFN);
	tap_ok(t.ok, "pte: bit positions and PFN field pinned by value");
}

/* pte_mkdirty on a read-only entry saves the dirt; on a writable one sets D. */
static void test_mkdirty(void)
{
	pte_t ro = pte_mkdirty(upte(_PAGE_ACCESSED));
	pte_t rw = pte_mkdirty(upte(_PAGE_ACCESSED | _PAGE_RW));

	t.ok = true;
	EXPECT(!(pte_val(ro) & _PAGE_DIRTY));
	EXPECT(pte_val(ro) & _PAGE_SAVED_DIRTY);
	EXPECT(pte_soft_dirty(ro));
	EXPECT(pte_dirty(ro));
	EXPECT(!pte_write(ro));
	EXPECT(!pte_shstk(ro));
	EXPECT(pte_val(rw) & _PAGE_DIRTY);
	EXPECT(!(pte_val(rw) & _PAGE_SAVED_DIRTY));
	EXPECT(pte_soft_dirty(rw));
	EXPECT(pte_dirty(rw) && pte_write(rw));
	EXPECT_EQ(pte_pfn(ro), PFN);
	EXPECT_EQ(pte_pfn(rw), PFN);
	tap_ok(t.ok, "pte: mkdirty sets SavedDirty+soft-dirty on R/O, Dirty on RW");
}

/* wrprotect moves D to SavedDirty; mkwrite_novma moves it back. */
static void test_wrprotect_mkwrite(void)
{
	pte_t rw = upte(_PAGE_RW | _PAGE_DIRTY | _PAGE_ACCESSED);
	pte_t ro = pte_wrprotect(rw), back = pte_mkwrite_novma(ro);
	pte_t clean_ro = pte_wrprotect(upte(_PAGE_RW));

	t.ok = true;
	EXPECT(!(pte_val(ro) & (_PAGE_RW | _PAGE_DIRTY)));
	EXPECT(pte_val(ro) & _PAGE_SAVED_DIRTY);
	EXPECT(pte_dirty(ro) && !pte_write(ro) && !pte_shstk(ro));
	EXPECT_EQ(pte_val(back), pte_val(rw));
	EXPECT(!(pte_val(clean_ro) & (_PAGE_SAVED_DIRTY | _PAGE_DIRTY)));
	EXPECT(!pte_dirty(clean_ro));
	EXPECT(!pte_dirty(pte_mkclean(ro)));
	EXPECT(!pte_dirty(pte_mkclean(rw)));
	EXPECT(pte_young(ro));
	tap_ok(t.ok, "pte: wrprotect moves Dirty to SavedDirty, mkwrite_novma moves it back");
}

/*
 * RW=0/D=1 is a shadow-stack entry: logically writable, and never the
 * result of wrprotect or mkdirty, whatever the input's RW/D/SavedDirty.
 */
static void test_shadow_stack_encoding(void)
{
	pte_t shstk = upte(_PAGE_DIRTY | _PAGE_ACCESSED);
	unsigned int combo;

	t.ok = true;
	EXPECT(pte_shstk(shstk));
	EXPECT(pte_write(shstk));
	EXPECT(pte_dirty(shstk));
	EXPECT(!pte_access_permitted(shstk, true));
	EXPECT(pte_access_permitted(shstk, false));
	for (combo = 0; combo < 8; combo++) {
		uint64_t bits = ((combo & 1) ? _PAGE_RW : 0) |
				((combo & 2) ? _PAGE_DIRTY : 0) |
				((combo & 4) ? _PAGE_SAVED_DIRTY : 0);
		pte_t in = upte(bits);

		if (!EXPECT(!pte_shstk(pte_wrprotect(in))) ||
		    !EXPECT(!pte_shstk(pte_mkdirty(in))) ||
		    !EXPECT(!pte_shstk(pte_mkclean(in))))
			tap_diag("input bits %#llx", (unsigned long long)bits);
	}
	/* mkwrite_shstk is the only way in, and it is logically writable */
	EXPECT(pte_shstk(pte_mkwrite_shstk(upte(_PAGE_SAVED_DIRTY))));
	EXPECT(pte_shstk(pte_mkwrite_shstk(upte(_PAGE_RW))));
	tap_ok(t.ok, "pte: shadow-stack RW=0/D=1 is pte_write() and never made by wrprotect/mkdirty");
}

/* pte_modify keeps PFN, A, D, soft-dirty and special; protection is new. */
static void test_modify_keeps(void)
{
	uint64_t keep = _PAGE_ACCESSED | _PAGE_SOFT_DIRTY | _PAGE_SPECIAL;
	pte_t rw = upte(_PAGE_RW | _PAGE_DIRTY | _PAGE_NX | keep);
	pte_t ro = pte_modify(rw, (pgprot_t){ PAGE_READONLY });
	pte_t again = pte_modify(ro, (pgprot_t){ PAGE_READONLY });

	t.ok = true;
	EXPECT_EQ(pte_pfn(ro), PFN);
	EXPECT_EQ(pte_val(ro) & keep, keep);
	EXPECT(!pte_write(ro));
	EXPECT(pte_dirty(ro));
	/* the dirt is saved, not left as RW=0/D=1 */
	EXPECT(!pte_shstk(ro));
	EXPECT(pte_val(ro) & _PAGE_SAVED_DIRTY);
	EXPECT(pte_val(ro) & _PAGE_PRESENT);
	EXPECT(pte_val(ro) & _PAGE_NX);
	EXPECT_EQ(pte_val(again), pte_val(ro));
	tap_ok(t.ok, "pte: pte_modify keeps PFN/A/D/soft-dirty/special, takes protection from prot");
}

/*
 * A writable dirty entry modified to a protection that is still writable
 * keeps hardware Dirty: x86 mksaveddirty_shift() only moves D when the
 * result has RW=0 (arch/x86/include/asm/pgtable.h), so RW=1 with
 * SavedDirty never appears.
 */
static void test_modify_rw_to_rw(void)
{
	pte_t rw = upte(_PAGE_RW | _PAGE_DIRTY | _PAGE_ACCESSED);
	pte_t out = pte_modify(rw, (pgprot_t){ PAGE_SHARED });
	pte_t saved = pte_modify(pte_wrprotect(rw), (pgprot_t){ PAGE_SHARED });

	t.ok = true;
	EXPECT(pte_write(out));
	EXPECT(pte_dirty(out));
	EXPECT(pte_val(out) & _PAGE_DIRTY);
	EXPECT(!(pte_val(out) & _PAGE_SAVED_DIRTY));
	/* R/O with SavedDirty to a writable prot: D comes back */
	EXPECT(pte_val(saved) & _PAGE_DIRTY);
	EXPECT(!(pte_val(saved) & _PAGE_SAVED_DIRTY));
	tap_ok(t.ok, "pte: pte_modify RW->RW keeps hardware Dirty (no RW+SavedDirty)");
}

/* PROT_NONE inverts the stored PFN (L1TF); back to R/O restores it. */
static void test_modify_protnone(void)
{
	pte_t ro = upte(_PAGE_ACCESSED | _PAGE_NX | _PAGE_SOFT_DIRTY);
	pte_t none = pte_modify(ro, (pgprot_t){ PAGE_NONE });
	pte_t back = pte_modify(none, (pgprot_t){ PAGE_READONLY });

	t.ok = true;
	EXPECT(pte_protnone(none));
	EXPECT(pte_present(none));
	EXPECT(!(pte_val(none) & _PAGE_PRESENT));
	EXPECT(!pte_access_permitted(none, false));
	EXPECT_EQ(pte_pfn(none), PFN);
	/* the stored bits are the inverted PFN */
	EXPECT_EQ((pte_val(none) & PTE_PFN_MASK) >> 12,
		  (~PFN) & (PTE_PFN_MASK >> 12));
	EXPECT(pte_soft_dirty(none));
	EXPECT(!pte_write(none));
	EXPECT(!pte_protnone(back));
	EXPECT_EQ(pte_val(back), pte_val(ro));
	EXPECT_EQ(pte_pfn(pfn_pte(PFN, (pgprot_t){ PAGE_NONE })), PFN);
	tap_ok(t.ok, "pte: pte_modify to PROT_NONE inverts the PFN and back restores it");
}

/* x86 pte_needs_flush(): which changes must be flushed from the TLB. */
static void test_needs_flush(void)
{
	pte_t ro = upte(_PAGE_ACCESSED | _PAGE_NX);
	pte_t rw = upte(_PAGE_ACCESSED | _PAGE_NX | _PAGE_RW | _PAGE_DIRTY);

	t.ok = true;
	EXPECT(pte_needs_flush(ro, pte_mkwrite_novma(ro)));	/* RO -> RW */
	EXPECT(pte_needs_flush(rw, pte_wrprotect(rw)));		/* RW -> RO */
	EXPECT(!pte_needs_flush(ro, pte_mksoft_dirty(ro)));	/* soft-dirty */
	EXPECT(!pte_needs_flush(pte_mksoft_dirty(ro), ro));
	EXPECT(!pte_needs_flush(ro, pte_mkold(ro)));		/* Accessed */
	EXPECT(!pte_needs_flush(pte_mkold(ro), ro));
	EXPECT(pte_needs_flush(rw, pte_mkclean(rw)));		/* clear Dirty */
	EXPECT(!pte_needs_flush(pte_mkclean(rw), rw));		/* set Dirty */
	EXPECT(pte_needs_flush(ro, __pte(0)));			/* unmap */
	EXPECT(pte_needs_flush(ro, pte_modify(ro, (pgprot_t){ PAGE_NONE })));
	EXPECT(!pte_needs_flush(__pte(0), rw));			/* !present old */
	EXPECT(!pte_needs_flush(pte_modify(ro, (pgprot_t){ PAGE_NONE }), ro));
	EXPECT(pte_needs_flush(ro, pfn_pte(PFN + 1, (pgprot_t){ PAGE_READONLY })));
	EXPECT(!pte_needs_flush(ro, ro));
	tap_ok(t.ok, "pte: pte_needs_flush (RO<->RW and clearing D flush; A/soft-dirty do not)");
}

int main(void)
{
	test_bit_positions();
	test_mkdirty();
	test_wrprotect_mkwrite();
	test_shadow_stack_encoding();
	test_modify_keeps();
	test_modify_rw_to_rw();
	test_modify_protnone();
	test_needs_flush();
	return tap_done();
}
#endif /* CONFIG_ARM64 */
