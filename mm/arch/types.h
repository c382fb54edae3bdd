/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * types.h: the entry types every architecture shares - 64-bit entries at
 * every level, wrapped so that a PTE cannot be passed where a PMD is
 * meant - and their constructors and accessors.
 */
#ifndef MM_ARCH_TYPES_H
#define MM_ARCH_TYPES_H

#include <stdbool.h>
#include <stdint.h>

typedef struct { uint64_t pte; } pte_t;
typedef struct { uint64_t pmd; } pmd_t;
typedef struct { uint64_t pud; } pud_t;
typedef struct { uint64_t pgd; } pgd_t;
typedef struct { uint64_t pgprot; } pgprot_t;

static inline pte_t __pte(uint64_t v) { return (pte_t){ v }; }
static inline uint64_t pte_val(pte_t pte) { return pte.pte; }
static inline pmd_t __pmd(uint64_t v) { return (pmd_t){ v }; }
static inline uint64_t pmd_val(pmd_t pmd) { return pmd.pmd; }
static inline pud_t __pud(uint64_t v) { return (pud_t){ v }; }
static inline uint64_t pud_val(pud_t pud) { return pud.pud; }
static inline pgd_t __pgd(uint64_t v) { return (pgd_t){ v }; }
static inline uint64_t pgd_val(pgd_t pgd) { return pgd.pgd; }

#endif /* MM_ARCH_TYPES_H */
