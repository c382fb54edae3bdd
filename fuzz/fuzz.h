/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fuzz/ - libFuzzer harnesses of the model and the scenario language, and
 * a replay driver that runs their corpus and regressions in `make check`.
 *
 * Each harness defines LLVMFuzzerTestOneInput() and the name of its corpus
 * and regression directories.  Built with clang -fsanitize=fuzzer it is a
 * fuzzer; linked with replay.c it is a TAP test.  An input that breaks an
 * invariant makes the harness abort(): libFuzzer keeps it as a crash, the
 * replay reports it "not ok".
 */
#ifndef FUZZ_FUZZ_H
#define FUZZ_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "ptebatch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * The largest input a replay reads (fuzz/replay.c, `ptebatch run --fuzz
 * NAME FILE`): fuzz/run.sh gives the fuzzers inputs of at most 16K (the
 * calibration harness; 4K the others) and the committed corpus's largest
 * is 16K; 1M is 64 times that.
 */
#define FUZZ_INPUT_MAX_BYTES (1UL << 20)

/* "scenario", "ops" or "events": fuzz/corpus/NAME and fuzz/regressions/NAME. */
extern const char fuzz_harness_name[];

/*
 * The variants every input runs under: the three presets, and seeds with
 * the widest write-fault reuse window (a whole page table).
 */
#define FUZZ_NR_VARIANTS 4

/* Fill @v with variant @i and return its name as a record names it. */
static inline const char *fuzz_variant(int i, struct pb_variant *v)
{
	static const char *const names[FUZZ_NR_VARIANTS] = {
		"baseline", "upstream", "seeds", "seeds+wp_reuse_max=512",
	};

	if (pb_variant_from_name(names[i], v))
		abort();	/* the list above names what no longer exists */
	return names[i];
}

#endif /* FUZZ_FUZZ_H */
