/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * generate.h - random scenarios for `ptebatch diff --random`.
 *
 * A seed and an index make one scenario, always the same text: scenario I
 * of a run with seed S has its own seed scenario_gen_seed(S, I), so it can
 * be made again alone.  The generator keeps the parser's picture of the
 * run (live processes and the handles each holds, by the parser's rules
 * in scenario/live.h; the regions each has), so what it writes always
 * parses; what only the run decides (an access to a page unmapped or
 * protected a few statements before, a resize past its room, an mremap
 * of a hole) fails at run time, as it should, in both backends alike.
 */
#ifndef SCENARIO_GENERATE_H
#define SCENARIO_GENERATE_H

#include <stddef.h>
#include <stdint.h>

/* --length: statements after the settings, before the closing ones. */
#define SCN_GEN_DEFAULT_LENGTH 30
#define SCN_GEN_MAX_LENGTH 1000

/* The seed of scenario @index of a run seeded @seed. */
uint64_t scenario_gen_seed(uint64_t seed, unsigned long index);

/*
 * The text of the scenario of seed @gen_seed (scenario_gen_seed()), about
 * @length process statements long, malloc'd, NUL-terminated, its length
 * in *@lenp.  NULL when out of memory.
 */
char *scenario_generate(uint64_t gen_seed, int length, size_t *lenp);

#endif
