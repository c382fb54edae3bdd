/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * arch.h: the architecture the model is built for.  Like the kernel, the
 * model is compiled once per architecture (and page size): the default
 * build is x86-64; `make ARCH=arm64-4k` and friends define CONFIG_ARM64
 * and CONFIG_ARM64_PAGE_SHIFT.  Each header gives the entry encoding, the
 * pte_*()/pmd_*() helpers and ARCH_NAME, ARCH_PAGE_SHIFT, ARCH_TASK_SIZE.
 */
#ifndef MM_ARCH_ARCH_H
#define MM_ARCH_ARCH_H

#if defined(CONFIG_ARM64)
#include "mm/arch/arm64.h"
#else
#include "mm/arch/x86_64.h"
#endif

#endif /* MM_ARCH_ARCH_H */
