// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_pte_batch.c - white-box tests of folio_pte_batch_flags()
 * (mm/pte_batch.h, after the kernel's mm/internal.h: a run of PTEs that
 * map consecutive pages of one folio with the same bits, less the ones
 * the FPB_* flags let it ignore) on page tables built through the public
 * API and then edited by hand.
 *
 * Each test maps two 16-page folios at ADDR_A (folio A = pages 0..15,
 * folio B = pages 16..31; 64K each with 4K pages), saves their 32 PTEs,
 * edits some of them with the pte_*() helpers of the architecture
 * (mm/arch/), calls the batch helper on a copy of an entry, and puts every
 * PTE back before t_finish(), so the checker it runs stays meaningful.  Nothing touches memory through the simulated MMU while a
 * PTE is edited, so no TLB entry disagrees with a restored table.  The
 * x86-only bits (SavedDirty, soft-dirty, shadow stack, the inverted
 * PROT_NONE PFN) are checked on x86 only; on arm64-4k the folios start
 * unfolded (see fx_setup()).
 */
#include "tests/unit/pbtest.h"
#include "mm/pte_batch.h"

#define NPTES 32
/* A 16-page folio: mTHP order 4 exists on every granule. */
#define FOLIO_SZ (16 * PAGE_SIZE)

/* The uffd-wp bit alone, without pte_mkuffd_wp()'s write-protect. */
#ifdef CONFIG_ARM64
#define UFFD_WP_BIT PTE_UFFD_WP
#else
#define UFFD_WP_BIT _PAGE_UFFD_WP
#endif

static struct {
	struct pb_proc *p;
	struct vm_area_struct *vma;
	pte_t *ptep;			/* the PTE of ADDR_A */
	struct folio *a, *b;		/* folio A (pages 0..15), B (16..31) */
	pte_t saved[NPTES];
} fx;

/* Machine up, two 64K folios at ADDR_A, their PTEs saved. */
static bool fx_setup(void)
{
	unsigned int i;

	memset(&fx, 0, sizeof(fx));
	if (!t_begin_folios(SZ_64M, FOLIO_SZ))
		return false;
	fx.p = t_proc_written(ADDR_A, 2 * FOLIO_SZ, 0x40);
	if (!fx.p || !t.ok)
		return false;
	fx.vma = vma_lookup(mm_of(fx.p), ADDR_A);
	fx.ptep = t_ptep(fx.p, ADDR_A);
	if (!EXPECT(fx.vma && fx.ptep))
		return false;
	for (i = 0; i < NPTES; i++)
		fx.saved[i] = ptep_get(fx.ptep + i);
#ifdef ARCH_HAS_CONTPTE
	/*
	 * The edits below change single entries, which a folded block does
	 * not allow (mm/arch/contpte.h): start from the blocks unfolded, as
	 * a per-PTE path leaves them (set_pte() writes them non-contiguous).
	 * Contiguous blocks have their own tests: test_contpte.c.
	 */
	for (i = 0; i < NPTES; i++) {
		set_pte(fx.ptep + i, fx.saved[i]);
		fx.saved[i] = ptep_get(fx.ptep + i);
	}
#endif
	fx.a = t_folio(pte_pfn(fx.saved[0]));
	fx.b = t_folio(pte_pfn(fx.saved[16]));
	if (!EXPECT_EQ(folio_nr_pages(fx.a), 16) || !EXPECT_EQ(folio_nr_pages(fx.b), 16) ||
	    !EXPECT(fx.a != fx.b))
		return false;
	for (i = 0; i < NPTES; i++) {
		EXPECT(pte_write(fx.saved[i]) && pte_dirty(fx.saved[i]));
		EXPECT_EQ(pte_pfn(fx.saved[i]),
			  folio_pfn(i < 16 ? fx.a : fx.b) + (i & 15));
	}
	return t.ok;
}

static void fx_restore(void)
{
	unsigned int i;

	if (!fx.ptep)
		return;
	for (i = 0; i < NPTES; i++)
		set_pte(fx.ptep + i, fx.saved[i]);
}

static void fx_teardown(void)
{
	fx_restore();
	if (fx.p)
		t_exit(fx.p);
	fx.p = NULL;
}

/* Set PTE @i to @pte; read PTE @i. */
static void fx_set(unsigned int i, pte_t pte) { set_pte(fx.ptep + i, pte); }
static pte_t fx_get(unsigned int i) { return ptep_get(fx.ptep + i); }

/* Apply @fn to PTEs [from, to). */
static void fx_map(unsigned int from, unsigned int to, pte_t (*fn)(pte_t))
{
	for (unsigned int i = from; i < to; i++)
		fx_set(i, fn(fx_get(i)));
}

static pte_t ro_clean(pte_t pte) { return pte_mkclean(pte_wrprotect(pte)); }

/* The batch from PTE @i of the folio that PTE maps; *outp gets the merged copy. */
static unsigned int fx_batch_vma(unsigned int i, unsigned int max_nr, fpb_t flags,
				 struct vm_area_struct *vma, pte_t *outp)
{
	pte_t copy = fx_get(i);
	struct folio *folio = t_folio(pte_pfn(copy));
	unsigned int nr = folio_pte_batch_flags(folio, vma, fx.ptep + i, &copy,
						max_nr, flags);

	if (outp)
		*outp = copy;
	return nr;
}

static unsigned int fx_batch(unsigned int i, unsigned int max_nr, fpb_t flags)
{
	return fx_batch_vma(i, max_nr, flags, fx.vma, NULL);
}

/* pte_read delta of one batch call (the copy of PTE @i is read first). */
static uint64_t fx_batch_reads(unsigned int i, unsigned int max_nr, fpb_t flags,
			       unsigned int *nr)
{
	pte_t copy = fx_get(i);
	struct folio *folio = t_folio(pte_pfn(copy));
	uint64_t before = t_stat(PB_STAT_pte_read);

	*nr = folio_pte_batch_flags(folio, fx.vma, fx.ptep + i, &copy, max_nr, flags);
	return t_stat(PB_STAT_pte_read) - before;
}

static const fpb_t all_flag_sets[] = {
	0,
	FPB_RESPECT_DIRTY,
	FPB_RESPECT_SOFT_DIRTY,
	FPB_RESPECT_WRITE,
	FPB_RESPECT_DIRTY | FPB_RESPECT_SOFT_DIRTY | FPB_RESPECT_WRITE,
	FPB_RESPECT_SOFT_DIRTY | FPB_RESPECT_WRITE,	/* mprotect */
	FPB_LOCKLESS | FPB_RESPECT_WRITE,		/* GUP-fast */
	FPB_MERGE_WRITE | FPB_RESPECT_DIRTY,		/* fork */
	FPB_MERGE_YOUNG_DIRTY,
};
#define NR_FLAG_SETS (sizeof(all_flag_sets) / sizeof(all_flag_sets[0]))

/* ---- the folio end and max_nr ----------------------------------------- */

/*
 * A batch never runs past its folio: from page 0 with max_nr 16, 32 or
 * 512 it is 16, from page 5 it is 11, from the last page 1; max_nr caps
 * it.  The PTE after folio A is made to map the next PFN with the same
 * bits (physically the frame after the folio), so only the folio clamp
 * stops the batch - and that PTE is never even read.
 */
static void test_folio_end(void)
{
	unsigned int nr;
	uint64_t reads;

	if (fx_setup()) {
		fx_set(16, pte_advance_pfn(fx.saved[15], 1));
		EXPECT_EQ(pte_pfn(fx_get(16)), folio_pfn(fx.a) + 16);
		EXPECT_EQ(fx_batch(0, 16, 0), 16);
		EXPECT_EQ(fx_batch(0, 32, 0), 16);
		EXPECT_EQ(fx_batch(0, 512, FPB_RESPECT_DIRTY | FPB_RESPECT_WRITE), 16);
		EXPECT_EQ(fx_batch(5, 32, 0), 11);
		EXPECT_EQ(fx_batch(15, 32, 0), 1);
		EXPECT_EQ(fx_batch(0, 3, 0), 3);
		EXPECT_EQ(fx_batch(0, 1, 0), 1);
		EXPECT_EQ(fx_batch(7, 4, FPB_RESPECT_WRITE), 4);
		/* the first PTE is not read again; nothing past the clamp is read */
		reads = fx_batch_reads(0, 32, 0, &nr);
		EXPECT_EQ(nr, 16);
		EXPECT_EQ(reads, 15);
		reads = fx_batch_reads(0, 4, 0, &nr);
		EXPECT_EQ(nr, 4);
		EXPECT_EQ(reads, 3);
		reads = fx_batch_reads(15, 1, 0, &nr);
		EXPECT_EQ(nr, 1);
		EXPECT_EQ(reads, 0);
		fx_restore();
		/* folio B batches on its own */
		EXPECT_EQ(fx_batch(16, 16, 0), 16);
		EXPECT_EQ(fx_batch(20, 512, FPB_RESPECT_WRITE), 12);
		/* same answers when read as a lockless walker */
		EXPECT_EQ(fx_batch(0, 32, FPB_LOCKLESS), 16);
		EXPECT_EQ(fx_batch(3, 32, FPB_LOCKLESS | FPB_RESPECT_WRITE), 13);
	}
	fx_teardown();
	t_finish();
}

/* ---- write ------------------------------------------------------------- */

/*
 * Write: a read-only PTE 7 among writable ones is ignored by default and
 * cuts the batch under FPB_RESPECT_WRITE.  Write-protecting moves Dirty to
 * SavedDirty, which is still "dirty": FPB_RESPECT_DIRTY alone batches it.
 */
static void test_write(void)
{
	if (fx_setup()) {
		fx_set(7, pte_wrprotect(fx_get(7)));
		EXPECT(!pte_write(fx_get(7)) && pte_dirty(fx_get(7)));
		/* x86 keeps it in SavedDirty, arm64 in PTE_DIRTY */
		EXPECT(!pte_hw_dirty(fx_get(7)));
		EXPECT_EQ(fx_batch(0, 16, 0), 16);
		EXPECT_EQ(fx_batch(0, 16, FPB_RESPECT_DIRTY), 16);
		EXPECT_EQ(fx_batch(0, 16, FPB_RESPECT_SOFT_DIRTY), 16);
		EXPECT_EQ(fx_batch(0, 16, FPB_RESPECT_WRITE), 7);
		EXPECT_EQ(fx_batch(0, 16, FPB_RESPECT_WRITE | FPB_RESPECT_DIRTY), 7);
		EXPECT_EQ(fx_batch(7, 16, FPB_RESPECT_WRITE), 1);
		EXPECT_EQ(fx_batch(8, 16, FPB_RESPECT_WRITE), 8);
		/* a read-only first PTE, writable followers */
		fx_restore();
		fx_set(0, pte_wrprotect(fx_get(0)));
		EXPECT_EQ(fx_batch(0, 16, FPB_RESPECT_WRITE), 1);
		EXPECT_EQ(fx_batch(0, 16, 0), 16);
		/* all read-only: batches again under RESPECT_WRITE */
		fx_map(0, 16, pte_wrprotect);
		EXPECT_EQ(fx_batch(0, 16, FPB_RESPECT_WRITE | FPB_RESPECT_DIRTY), 16);
	}
	fx_teardown();
	t_finish();
}

/* ---- dirty, SavedDirty ------------------------------------------------- */

static void test_dirty(void)
{
	if (fx_setup()) {
		fx_set(9, pte_mkclean(fx_get(9)));
		EXPECT(!pte_dirty(fx_get(9)) && pte_write(fx_get(9)));
		EXPECT_EQ(fx_batch(0, 16, 0), 16);
		EXPECT_EQ(fx_batch(0, 16, FPB_RESPECT_WRITE), 16);
		EXPECT_EQ(fx_batch(0, 16, FPB_RESPECT_DIRTY), 9);
		EXPECT_EQ(fx_batch(9, 16, FPB_RESPECT_DIRTY), 1);

		/* read-only entries keep dirty in SavedDirty */
		fx_restore();
		fx_map(0, 16, pte_wrprotect);
		fx_set(4, pte_mkclean(fx_get(4)));
		EXPECT(pte_dirty(fx_get(3)) && !pte_hw_dirty(fx_get(3)));
		EXPECT(!pte_dirty(fx_get(4)));
		EXPECT_EQ(fx_batch(0, 16, FPB_RESPECT_WRITE), 16);
		EXPECT_EQ(fx_batch(0, 16, FPB_RESPECT_WRITE | FPB_RESPECT_DIRTY), 4);
		EXPECT_EQ(fx_batch(0, 16, FPB_RESPECT_DIRTY), 4);

		/* HW Dirty (writable) vs SavedDirty (read-only): same dirty */
		fx_restore();
		fx_set(3, pte_wrprotect(fx_get(3)));
		EXPECT_EQ(fx_batch(0, 16, FPB_RESPECT_DIRTY), 16);
		EXPECT_EQ(fx_batch(0, 16, FPB_RESPECT_DIRTY | FPB_RESPECT_WRITE), 3);
	}
	fx_teardown();
	t_finish();
}

/* ---- young -------------------------------------------------------------- */

static void test_young_ignored(void)
{
	unsigned int k;

	if (fx_setup()) {
		fx_set(5, pte_mkold(fx_get(5)));
		fx_set(11, pte_mkold(fx_get(11)));
		EXPECT(!pte_young(fx_get(5)) && pte_young(fx_get(4)));
		for (k = 0; k < NR_FLAG_SETS; k++)
			if (!EXPECT_EQ(fx_batch(0, 16, all_flag_sets[k]), 16))
				tap_diag("flags %#x", all_flag_sets[k]);
		/* an old first PTE, young followers */
		fx_set(0, pte_mkold(fx_get(0)));
		for (k = 0; k < NR_FLAG_SETS; k++)
			EXPECT_EQ(fx_batch(0, 16, all_flag_sets[k]), 16);
	}
	fx_teardown();
	t_finish();
}

/* ---- soft-dirty ---------------------------------------------------------- */

#ifdef CONFIG_MEM_SOFT_DIRTY
static void test_soft_dirty(void)
{
	if (fx_setup()) {
		EXPECT(pte_soft_dirty(fx_get(0)));	/* x86 pte_mkdirty sets it */
		fx_set(6, pte_clear_soft_dirty(fx_get(6)));
		EXPECT_EQ(fx_batch(0, 16, 0), 16);
		EXPECT_EQ(fx_batch(0, 16, FPB_RESPECT_DIRTY | FPB_RESPECT_WRITE), 16);
		EXPECT_EQ(fx_batch(0, 16, FPB_RESPECT_SOFT_DIRTY), 6);
		EXPECT_EQ(fx_batch(0, 16, FPB_RESPECT_SOFT_DIRTY | FPB_RESPECT_WRITE), 6);
		EXPECT_EQ(fx_batch(6, 16, FPB_RESPECT_SOFT_DIRTY), 1);
		EXPECT_EQ(fx_batch(7, 16, FPB_RESPECT_SOFT_DIRTY), 9);
	}
	fx_teardown();
	t_finish();
}
#endif /* CONFIG_MEM_SOFT_DIRTY */

/* ---- uffd-wp ---------------------------------------------------------------- */

static void test_uffd_wp_never_ignored(void)
{
	unsigned int k;

	if (fx_setup()) {
		/* the bit alone, write left as it is */
		fx_set(10, __pte(pte_val(fx_get(10)) | UFFD_WP_BIT));
		for (k = 0; k < NR_FLAG_SETS; k++)
			if (!EXPECT_EQ(fx_batch(0, 16, all_flag_sets[k]), 10))
				tap_diag("flags %#x", all_flag_sets[k]);
		/* read-only entries, one of them uffd-wp protected */
		fx_restore();
		fx_map(0, 16, pte_wrprotect);
		fx_set(10, pte_mkuffd_wp(fx_get(10)));
		EXPECT(pte_uffd_wp(fx_get(10)));
		for (k = 0; k < NR_FLAG_SETS; k++)
			EXPECT_EQ(fx_batch(0, 16, all_flag_sets[k]), 10);
		EXPECT_EQ(fx_batch(10, 16, 0), 1);
		EXPECT_EQ(fx_batch(11, 16, 0), 5);
	}
	fx_teardown();
	t_finish();
}

/* ---- shadow stack ------------------------------------------------------------- */

/*
 * x86 shadow stack: RW=0/Dirty=1 is pte_write().  pte_mkclean() makes it
 * look like an ordinary read-only entry, so under FPB_RESPECT_WRITE
 * without FPB_RESPECT_DIRTY (GUP-fast's flags) a shadow-stack entry and
 * a read-only one would batch - and GUP-fast, seeing pte_write() on the
 * first, would skip the unshare check for the rest.  "mm: internal: fix
 * inconsistent in folio_pte_batch_flags() for shadow stack" (part of the
 * GUP-fast batching series) stops the batch where pte_write() changes.
 */
#ifndef CONFIG_ARM64
static void test_shadow_stack_mixing(void)
{
	const fpb_t gup = FPB_LOCKLESS | FPB_RESPECT_WRITE;

	if (fx_setup()) {
		fx_map(0, 16, ro_clean);
		fx_set(0, pte_mkwrite_shstk(fx_get(0)));
		EXPECT(pte_shstk(fx_get(0)) && pte_write(fx_get(0)));
		EXPECT(!pte_write(fx_get(1)));
		/* the normalised forms are equal: only the fix tells them apart */
		EXPECT(pte_same(__pte_batch_clear_ignored(pte_advance_pfn(fx_get(0), 1),
							  FPB_RESPECT_WRITE),
				__pte_batch_clear_ignored(fx_get(1), FPB_RESPECT_WRITE)));
		EXPECT_EQ(fx_batch(0, 16, FPB_RESPECT_WRITE), 1);
		EXPECT_EQ(fx_batch(0, 16, gup), 1);
		EXPECT_EQ(fx_batch(0, 16, FPB_RESPECT_WRITE | FPB_RESPECT_DIRTY), 1);
		EXPECT_EQ(fx_batch(1, 16, gup), 15);
		/* write not respected: mixing is allowed (zap, plain folio_pte_batch) */
		EXPECT_EQ(fx_batch(0, 16, 0), 16);
		/* read-only first, shadow-stack second */
		fx_set(0, ro_clean(fx.saved[0]));
		fx_set(1, pte_mkwrite_shstk(fx_get(1)));
		EXPECT_EQ(fx_batch(0, 16, gup), 1);
		EXPECT_EQ(fx_batch(1, 16, gup), 1);
		/* a SavedDirty read-only entry after a shadow-stack one */
		fx_map(0, 16, pte_wrprotect);
		fx_map(2, 16, pte_mkdirty);
		EXPECT(pte_dirty(fx_get(2)) && !pte_write(fx_get(2)));
		fx_set(1, pte_mkwrite_shstk(fx_get(1)));
		EXPECT_EQ(fx_batch(1, 16, gup), 1);
		EXPECT_EQ(fx_batch(2, 16, gup), 14);
	}
	fx_teardown();
	t_finish();
}
#endif /* !CONFIG_ARM64 */

/* ---- PROT_NONE ---------------------------------------------------------------- */

/*
 * PROT_NONE entries store the PFN inverted: pte_advance_pfn() must step
 * it the other way, and a batch over PROT_NONE entries of one folio works.
 * A present and a PROT_NONE entry never batch.
 */
static void test_prot_none(void)
{
	unsigned long pfn0;
	unsigned int i;
	pte_t p0;

	if (fx_setup()) {
		pfn0 = folio_pfn(fx.a);
		EXPECT_EQ(pb_mprotect(fx.p, ADDR_A, FOLIO_SZ, PB_PROT_NONE), 0);
		EXPECT_CLEAN();
		p0 = fx_get(0);
		EXPECT(pte_protnone(p0) && pte_present(p0));
		EXPECT_EQ(pte_pfn(p0), pfn0);
#ifndef CONFIG_ARM64
		/* stored inverted (x86 L1TF; arm64 stores it as is) */
		EXPECT(((pte_val(p0) & PTE_PFN_MASK) >> PAGE_SHIFT) != pfn0);
#endif
		for (i = 0; i < 16; i++) {
			EXPECT_EQ(pte_pfn(fx_get(i)), pfn0 + i);
			EXPECT_EQ(pte_pfn(pte_advance_pfn(p0, i)), pfn0 + i);
			EXPECT(pte_protnone(pte_advance_pfn(p0, i)));
			EXPECT(pte_same(__pte_batch_clear_ignored(pte_advance_pfn(p0, i), 0),
					__pte_batch_clear_ignored(fx_get(i), 0)));
		}
		fx.vma = vma_lookup(mm_of(fx.p), ADDR_A);
		EXPECT_EQ(fx_batch(0, 16, 0), 16);
		EXPECT_EQ(fx_batch(0, 16, FPB_RESPECT_SOFT_DIRTY | FPB_RESPECT_WRITE), 16);
		EXPECT_EQ(fx_batch(3, 16, FPB_RESPECT_WRITE | FPB_RESPECT_DIRTY), 13);

		/* half present again: the two halves never batch together */
		EXPECT_EQ(pb_mprotect(fx.p, ADDR_A, FOLIO_SZ / 2, RW), 0);
		EXPECT_CLEAN();
		EXPECT(!pte_protnone(fx_get(7)) && pte_protnone(fx_get(8)));
		fx.vma = vma_lookup(mm_of(fx.p), ADDR_A);
		EXPECT_EQ(fx_batch(0, 16, 0), 8);	/* max_nr deliberately past the VMA */
		EXPECT_EQ(fx_batch(8, 16, 0), 8);
		EXPECT_EQ(fx_batch(4, 16, FPB_RESPECT_WRITE), 4);

		EXPECT_EQ(pb_mprotect(fx.p, ADDR_A, FOLIO_SZ, RW), 0);
		EXPECT_CLEAN();
		EXPECT(t_data_is(fx.p, ADDR_A, NPTES, 0x40));
		for (i = 0; i < NPTES; i++)
			fx.saved[i] = fx_get(i);	/* the new state is the one to keep */
	}
	fx_teardown();
	t_finish();
}

/* ---- the zero page and special entries ------------------------------------------ */

/*
 * The zero page is a special PTE: vm_normal_page() gives NULL, so no
 * caller ever asks for a batch there.  A special bit on an entry inside
 * a folio run stops the batch under every flag set.
 */
static void test_zero_page_special(void)
{
	struct vm_area_struct *vb;
	pte_t *zp;
	unsigned int i, k;
	uint8_t v = 1;

	if (fx_setup()) {
		EXPECT_EQ(pb_mmap(fx.p, ADDR_B, FOLIO_SZ, RW), 0);
		for (i = 0; i < 4; i++)
			EXPECT_EQ(pb_load(fx.p, 0, ADDR_B + i * PAGE_SIZE, &v), 0);
		EXPECT_EQ(v, 0);
		EXPECT_CLEAN();
		zp = t_ptep(fx.p, ADDR_B);
		vb = vma_lookup(mm_of(fx.p), ADDR_B);
		if (EXPECT(zp && vb)) {
			for (i = 0; i < 4; i++) {
				pte_t z = ptep_get(zp + i);

				EXPECT(pte_special(z));
				EXPECT(!pte_write(z));
				EXPECT_EQ(pte_pfn(z), machine.zero_pfn);
				EXPECT(vm_normal_page(vb, ADDR_B + i * PAGE_SIZE, z) == NULL);
			}
		}
		/* a special entry in the middle of a folio run */
		fx_set(5, pte_mkspecial(fx_get(5)));
		for (k = 0; k < NR_FLAG_SETS; k++)
			EXPECT_EQ(fx_batch(0, 16, all_flag_sets[k]), 5);
		fx_restore();
		EXPECT_EQ(pb_munmap(fx.p, ADDR_B, FOLIO_SZ), 0);
	}
	fx_teardown();
	t_finish();
}

/* ---- another folio's page in the middle ------------------------------------------ */

static void test_foreign_page_stops(void)
{
	unsigned int k;
	pte_t pte8;

	if (fx_setup()) {
		pte8 = fx.saved[8];
		/* PTE 8 maps page 8 of folio B, same bits */
		fx_set(8, pfn_pte(folio_pfn(fx.b) + 8,
				  (pgprot_t){ pte_val(pte8) & ~PTE_PFN_MASK }));
		EXPECT_EQ(pte_val(fx_get(8)) & ~PTE_PFN_MASK, pte_val(pte8) & ~PTE_PFN_MASK);
		for (k = 0; k < NR_FLAG_SETS; k++)
			EXPECT_EQ(fx_batch(0, 16, all_flag_sets[k]), 8);
		EXPECT_EQ(fx_batch(9, 16, 0), 7);
		/* PTE 8 maps page 9 of its own folio: out of order */
		fx_set(8, fx.saved[9]);
		EXPECT_EQ(fx_batch(0, 16, 0), 8);
		/* PTE 8 is none */
		fx_set(8, __pte(0));
		EXPECT_EQ(fx_batch(0, 16, 0), 8);
		/* the second folio's first PTE right after the first folio's */
		fx_restore();
		EXPECT_EQ(fx_batch(15, 2, 0), 1);
	}
	fx_teardown();
	t_finish();
}

/* ---- FPB_MERGE_WRITE ---------------------------------------------------------- */

static void test_merge_write(void)
{
	struct vm_area_struct shstk_vma;
	pte_t out;

	if (fx_setup()) {
		fx_map(0, 16, pte_wrprotect);
		fx_set(5, pte_mkwrite_novma(fx_get(5)));
		EXPECT(pte_write(fx_get(5)) && !pte_write(fx_get(0)));
		EXPECT_EQ(fx_batch_vma(0, 16, FPB_MERGE_WRITE, fx.vma, &out), 16);
		EXPECT(pte_write(out));
		EXPECT(!pte_shstk(out));
		EXPECT(pte_hw_dirty(out));
#ifndef CONFIG_ARM64
		EXPECT(!(pte_val(out) & _PAGE_SAVED_DIRTY));
#endif
		EXPECT_EQ(pte_pfn(out), folio_pfn(fx.a));
		/* without the flag the copy stays as it was */
		EXPECT_EQ(fx_batch_vma(0, 16, 0, fx.vma, &out), 16);
		EXPECT(pte_same(out, fx_get(0)));
		/* respected write ends the batch before the writable entry */
		EXPECT_EQ(fx_batch_vma(0, 16, FPB_MERGE_WRITE | FPB_RESPECT_WRITE, fx.vma,
				       &out), 5);
		EXPECT(!pte_write(out));
		/* only examined entries merge: max_nr 5 stops before PTE 5 */
		EXPECT_EQ(fx_batch_vma(0, 5, FPB_MERGE_WRITE, fx.vma, &out), 5);
		EXPECT(!pte_write(out));
		EXPECT_EQ(fx_batch_vma(0, 6, FPB_MERGE_WRITE, fx.vma, &out), 6);
		EXPECT(pte_write(out));
		/* a shadow-stack VMA merges "writable" as RW=0/Dirty=1 (x86) */
		shstk_vma = *fx.vma;
		shstk_vma.vm_flags |= VM_SHADOW_STACK;
		EXPECT_EQ(fx_batch_vma(0, 16, FPB_MERGE_WRITE, &shstk_vma, &out), 16);
#ifndef CONFIG_ARM64
		EXPECT(pte_shstk(out) && pte_write(out));
#endif
	}
	fx_teardown();
	t_finish();
}

/* ---- FPB_MERGE_YOUNG_DIRTY --------------------------------------------------------- */

static pte_t ro_clean_old(pte_t pte) { return pte_mkold(ro_clean(pte)); }

static void test_merge_young_dirty(void)
{
	pte_t out;

	if (fx_setup()) {
		fx_map(0, 16, ro_clean_old);
		fx_set(7, pte_mkyoung(fx_get(7)));
		fx_set(11, pte_mkdirty(fx_get(11)));
		EXPECT(!pte_young(fx_get(0)) && !pte_dirty(fx_get(0)));
#ifdef CONFIG_MEM_SOFT_DIRTY
		EXPECT(pte_soft_dirty(fx_get(0)) && pte_soft_dirty(fx_get(11)));
#endif
		EXPECT_EQ(fx_batch_vma(0, 16, FPB_MERGE_YOUNG_DIRTY, fx.vma, &out), 16);
		EXPECT(pte_young(out) && pte_dirty(out));
		EXPECT(!pte_write(out));			/* never a write bit */
		EXPECT(!pte_hw_dirty(out));			/* read-only: SavedDirty */
		EXPECT_EQ(fx_batch_vma(0, 16, 0, fx.vma, &out), 16);
		EXPECT(!pte_young(out) && !pte_dirty(out));
		EXPECT_EQ(fx_batch_vma(0, 7, FPB_MERGE_YOUNG_DIRTY, fx.vma, &out), 7);
		EXPECT(!pte_young(out) && !pte_dirty(out));
		EXPECT_EQ(fx_batch_vma(0, 8, FPB_MERGE_YOUNG_DIRTY, fx.vma, &out), 8);
		EXPECT(pte_young(out) && !pte_dirty(out));
		EXPECT_EQ(fx_batch_vma(0, 12, FPB_MERGE_YOUNG_DIRTY, fx.vma, &out), 12);
		EXPECT(pte_young(out) && pte_dirty(out));
		/* respected dirty stops at PTE 11: its dirt is not merged */
		EXPECT_EQ(fx_batch_vma(0, 16, FPB_MERGE_YOUNG_DIRTY | FPB_RESPECT_DIRTY,
				       fx.vma, &out), 11);
		EXPECT(pte_young(out) && !pte_dirty(out));
	}
	fx_teardown();
	t_finish();
}

/* ---- page-table end --------------------------------------------------------------- */

/*
 * A 64K folio moved by mremap to 32K below a 2M boundary: pages 0..7 are
 * the last eight slots of one PTE table, pages 8..15 the first eight of
 * the next.  folio_pte_batch_flags() only clamps to the folio: the caller
 * bounds max_nr by the table.  Then every batched caller (GUP-fast, zap,
 * mprotect, fork) must still get the right result there.
 */
static void test_table_end(void)
{
	const unsigned long dst = ADDR_B + PMD_SIZE - FOLIO_SZ / 2;
	struct page *pages[16];
	struct pb_proc *c;
	pte_t *t1, *t2, copy;
	unsigned int nr, i;
	uint64_t reads;
	long got;

	if (!fx_setup())
		goto out;
	t_variant("seeds", NULL);
	EXPECT_EQ(pb_mremap(fx.p, ADDR_A, FOLIO_SZ, dst), 0);
	EXPECT_CLEAN();
	t1 = t_ptep(fx.p, dst);
	t2 = t_ptep(fx.p, dst + FOLIO_SZ / 2);
	if (!EXPECT(t1 && t2))
		goto out;
	EXPECT_EQ(pte_index(dst), PTRS_PER_PTE - 8);
	EXPECT_EQ(pte_index(dst + FOLIO_SZ / 2), 0);
	EXPECT(table_page_of(t1) != table_page_of(t2));
	/* bounded by the table: 8 from slot 504, nothing read past slot 511 */
	copy = ptep_get(t1);
	reads = t_stat(PB_STAT_pte_read);
	nr = folio_pte_batch_flags(fx.a, NULL, t1, &copy,
				   (unsigned int)((pmd_addr_end(dst, dst + FOLIO_SZ) - dst) >> PAGE_SHIFT),
				   FPB_RESPECT_WRITE);
	EXPECT_EQ(t_stat(PB_STAT_pte_read) - reads, 7);
	EXPECT_EQ(nr, 8);
	copy = ptep_get(t2);
	EXPECT_EQ(pte_pfn(copy), folio_pfn(fx.a) + 8);
	EXPECT_EQ(folio_pte_batch_flags(fx.a, NULL, t2, &copy, PTRS_PER_PTE, 0), 8);
	copy = ptep_get(t1 + 5);
	EXPECT_EQ(folio_pte_batch_flags(fx.a, NULL, t1 + 5, &copy, 3, 0), 3);

	/* GUP-fast across the boundary */
	got = get_user_pages_fast_flags(mm_of(fx.p), dst, 16,
					PB_FOLL_PIN | PB_FOLL_WRITE | PB_FOLL_FAST_ONLY, pages);
	EXPECT_EQ(got, 16);
	for (i = 0; i < 16 && (long)i < got; i++)
		EXPECT(pages[i] == folio_page(fx.a, i));
	EXPECT_EQ(atomic_load(&fx.a->_pincount), 16);
	if (got > 0)
		unpin_user_pages_dirty_lock(pages, (unsigned long)got, false);
	EXPECT_EQ(atomic_load(&fx.a->_pincount), 0);
	EXPECT_CLEAN();
	/* mprotect across it: read-only, then writable again without faults */
	EXPECT_EQ(pb_mprotect(fx.p, dst, FOLIO_SZ, PB_PROT_READ), 0);
	EXPECT_CLEAN();
	for (i = 0; i < 16; i++)
		EXPECT(!t_writable(fx.p, dst + i * PAGE_SIZE));
	EXPECT_EQ(pb_mprotect(fx.p, dst, FOLIO_SZ, RW), 0);
	EXPECT_CLEAN();
	for (i = 0; i < 16; i++)
		EXPECT(t_writable(fx.p, dst + i * PAGE_SIZE));
	EXPECT(t_data_is(fx.p, dst, 16, 0x40));
	/* fork across it, then the child zaps it */
	c = t_fork(fx.p);
	EXPECT_CLEAN();
	for (i = 0; i < 16; i++) {
		EXPECT_EQ(t_pfn(c, dst + i * PAGE_SIZE), folio_pfn(fx.a) + i);
		EXPECT(!t_writable(fx.p, dst + i * PAGE_SIZE));
	}
	EXPECT_EQ(folio_large_mapcount(fx.a), 32);
	EXPECT_EQ(pb_munmap(c, dst, FOLIO_SZ), 0);
	EXPECT_EQ(folio_large_mapcount(fx.a), 16);
	EXPECT_CLEAN();
	t_exit(c);
	/* exclusive again: one reuse fault per page table rewrites it all */
	EXPECT_EQ(t_fill_faults(fx.p, dst, 16, 0x50), 2);	/* one per page table */
	EXPECT_CLEAN();
	/* zap across it */
	EXPECT_EQ(pb_munmap(fx.p, dst, FOLIO_SZ), 0);
	EXPECT_CLEAN();
	fx.ptep = NULL;		/* nothing to restore: the PTEs moved */
out:
	fx_teardown();
	t_finish();
}

/*
 * fork batching keeps per-PTE dirty and soft-dirty (FPB_RESPECT_DIRTY for
 * private VMAs, FPB_RESPECT_SOFT_DIRTY with tracking on): the child's PTE
 * i carries the parent's PTE i dirty and soft-dirty bits.  White-box:
 * some parent PTEs are cleaned by hand, soft-dirty tracking is switched
 * on by clearing VM_SOFTDIRTY.  State stays legal (clean and
 * non-soft-dirty are ordinary states).
 */
static void test_fork_keeps_per_pte_dirty(void)
{
	struct pb_proc *c;
	pte_t *cp;
	unsigned int i;

	if (!fx_setup())
		goto out;
	t_variant("upstream", NULL);
	fx.vma->vm_flags &= ~VM_SOFTDIRTY;
	for (i = 4; i < 8; i++)
		fx_set(i, pte_mkclean(fx_get(i)));
	for (i = 10; i < 12; i++)
		fx_set(i, pte_clear_soft_dirty(fx_get(i)));
	c = t_fork(fx.p);
	EXPECT_CLEAN();
	cp = c ? t_ptep(c, ADDR_A) : NULL;
	if (EXPECT(cp)) {
		for (i = 0; i < 16; i++) {
			pte_t pp = fx_get(i), cc = ptep_get(cp + i);

			EXPECT_EQ(pte_pfn(cc), pte_pfn(pp));
			if (!EXPECT_EQ(pte_dirty(cc), i < 4 || i >= 8))
				tap_diag("child PTE %u", i);
#ifdef CONFIG_MEM_SOFT_DIRTY
			if (!EXPECT_EQ(pte_soft_dirty(cc), i < 10 || i >= 12))
				tap_diag("child PTE %u", i);
#endif
			EXPECT(!pte_write(cc) && !pte_write(pp));
		}
	}
	t_exit(c);
	fx.vma->vm_flags |= VM_SOFTDIRTY;
	for (i = 0; i < NPTES; i++)
		fx.saved[i] = fx_get(i);	/* write-protected by fork: keep */
	EXPECT_CLEAN();
out:
	fx_teardown();
	t_finish();
}

int main(void)
{
	t_isolated(test_folio_end,
		   "pte_batch: stops at the folio end (even with the next PFN mapped alike) and at max_nr; never reads past them");
	t_isolated(test_write,
		   "pte_batch: write bit ignored by default, respected under FPB_RESPECT_WRITE");
	t_isolated(test_dirty,
		   "pte_batch: dirty (HW Dirty and SavedDirty) ignored by default, respected under FPB_RESPECT_DIRTY");
	t_isolated(test_young_ignored,
		   "pte_batch: young is ignored under every flag set");
#ifdef CONFIG_MEM_SOFT_DIRTY
	t_isolated(test_soft_dirty,
		   "pte_batch: soft-dirty ignored by default, respected under FPB_RESPECT_SOFT_DIRTY");
#else
	tap_skip("no soft-dirty bit in " ARCH_NAME " entries",
		 "pte_batch: soft-dirty ignored by default, respected under FPB_RESPECT_SOFT_DIRTY");
#endif
	t_isolated(test_uffd_wp_never_ignored,
		   "pte_batch: uffd-wp is never ignored");
#ifndef CONFIG_ARM64
	t_isolated(test_shadow_stack_mixing,
		   "pte_batch: a shadow-stack entry and a read-only one never batch under FPB_RESPECT_WRITE (seed 2/4 fix)");
#else
	tap_skip("the RW=0/Dirty=1 shadow-stack encoding is x86's",
		 "pte_batch: a shadow-stack entry and a read-only one never batch under FPB_RESPECT_WRITE (seed 2/4 fix)");
#endif
	t_isolated(test_prot_none,
		   "pte_batch: PROT_NONE entries (inverted PFN) advance and batch; present and PROT_NONE never mix");
	t_isolated(test_zero_page_special,
		   "pte_batch: zero page is special (vm_normal_page NULL); a special entry stops a run");
	t_isolated(test_foreign_page_stops,
		   "pte_batch: a PTE mapping another folio's page (or a wrong page, or none) stops the run");
	t_isolated(test_merge_write,
		   "pte_batch: FPB_MERGE_WRITE makes *ptentp writable if a later examined entry is (pte_mkwrite with the VMA)");
	t_isolated(test_merge_young_dirty,
		   "pte_batch: FPB_MERGE_YOUNG_DIRTY ORs young/dirty of examined entries into *ptentp");
	t_isolated(test_fork_keeps_per_pte_dirty,
		   "pte_batch: batched fork keeps per-PTE dirty and soft-dirty in the child");
	t_isolated(test_table_end,
		   "pte_batch: a folio across a PTE-table end - callers bound max_nr by the table; GUP/fork/zap/mprotect correct");
	return tap_done();
}
