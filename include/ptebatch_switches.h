/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The variant switches: which PTE-walking paths run batched over large
 * folios.  One row each, an X-macro list included with PB_SWITCH defined
 * by the includer (ptebatch.h makes struct pb_variant's fields of it,
 * mm/variant.c the table that --set, `ptebatch help`, the presets,
 * explore and the fuzzers read).  Adding a switch is one row here plus
 * the code in mm/ that obeys it.
 *
 *   PB_SWITCH(name, kind, max, baseline, upstream, seeds, effect, help)
 *
 * kind     BOOL (0|1: a bool field) or POW2 (a power of two from 1 to
 *          max: an unsigned int field)
 * max      the largest value (1 for BOOL); an mm/ expression
 * baseline, upstream, seeds
 *          the switch's value in each preset: baseline batches nothing,
 *          upstream what mainline Linux batches today (fork, zap,
 *          mprotect), seeds adds two posted proposals: "mm: gup: batch
 *          PTE-mapped large folios in gup_fast_pte_range()" and "mm/memory:
 *          reuse 16 PTEs of an exclusive large folio on a write fault"
 * effect   COST: only cost counters may change (the same faults, folios
 *          and frames, record for record); FAULTS: faults may be saved
 *          and a page may stay in its folio instead of being copied
 *          (scenario/compare.h, CMP_EQUIVALENT)
 * help     one line for `ptebatch help`, after the range
 *
 * Only the name and kind are used outside mm/, so max and the preset
 * values may name mm/'s constants (PTRS_PER_PTE, WP_REUSE_MAX_NR_PTES:
 * 16, or CONT_PTES on arm64).
 */
PB_SWITCH(gup_batch, BOOL, 1, 0, 0, 1, COST,
	  "GUP-fast takes a run of PTEs of one large folio at once")
PB_SWITCH(gup_batch_recheck, BOOL, 1, 0, 0, 0, COST,
	  "with gup_batch, re-check the PMD and the run's PTEs after the bulk"
	  " grab, as the per-PTE walk does for every page (not in the seed)")
PB_SWITCH(wp_reuse_max, POW2, PTRS_PER_PTE, 1, 1, WP_REUSE_MAX_NR_PTES, FAULTS,
	  "PTEs one write-fault reuse may make writable")
PB_SWITCH(mprotect_batch, BOOL, 1, 0, 1, 1, COST,
	  "mprotect changes PTEs of one large folio as a batch")
PB_SWITCH(fork_batch, BOOL, 1, 0, 1, 1, COST,
	  "fork copies PTEs of one large folio as a batch")
PB_SWITCH(zap_batch, BOOL, 1, 0, 1, 1, COST,
	  "munmap/exit/MADV_DONTNEED zap PTEs of one large folio as a batch")
PB_SWITCH(mremap_batch, BOOL, 1, 0, 1, 1, COST,
	  "mremap moves PTEs of one large folio as a batch where the"
	  " architecture hints at a run (arm64 contpte blocks)")
PB_SWITCH(madvise_free_batch, BOOL, 1, 0, 1, 1, COST,
	  "MADV_FREE/MADV_PAGEOUT clear young and dirty of PTEs of one large"
	  " folio as a batch")
