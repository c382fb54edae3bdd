/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vocab.h - the words of the .scn language, each defined once: madvise's
 * advices with Linux's MADV_* values, protections, THP policies, and the
 * architectures a record names.  The parser, the generator (`diff
 * --random`), the recorder's converter, the fuzzers, explore, the record
 * reader, --arch and the figures all take them from here, so a new
 * advice is one row of vocab.c (docs/ARCHITECTURE.md, "Adding a batched
 * path").
 */
#ifndef SCENARIO_VOCAB_H
#define SCENARIO_VOCAB_H

#include "scenario/scenario.h"

/* One word and what it stands for. */
struct scn_word {
	const char *word;
	int value;	/* MADV_*, enum scn_prot or enum scn_policy */
	/*
	 * Advices only: diff --random's generator draws among the advices
	 * numbered 1..N here, in that order; 0: never this one.  The
	 * numbers keep the order the generator drew in before this table,
	 * so that a seed and an index still make the same text; a new
	 * advice takes the next number (and changes the text of every
	 * scenario that draws an advice).
	 */
	int draw;
};

/* The row of NULL-terminated @table whose word is @word, or NULL. */
const struct scn_word *scn_word_lookup(const struct scn_word *table,
				       const char *word);

/*
 * The advices in the order the parser lists them, NULL-terminated:
 * `record` writes a madvise of any of them, the API fuzzer draws from
 * all of them, the generator from those with a draw number.
 */
const struct scn_word *scn_advices(void);
/* The word of MADV_* value @advice, or NULL if the language has none. */
const char *scn_advice_word(int advice);
/* How many advices the generator draws, and the @i-th of its order. */
int scn_nr_advices_drawn(void);
const struct scn_word *scn_advice_drawn(int i);

/*
 * Tests only: the advices become the NULL-terminated table @rows (kept,
 * not copied), as if vocab.c had it; NULL puts the shipped table back.
 */
void scn_advices_replace(const struct scn_word *rows);

/* PROT: none, r, rw (enum scn_prot order), NULL-terminated. */
extern const struct scn_word scn_prots[];
const char *scn_prot_word(enum scn_prot prot);

/* mthp's POLICY, in the order the parser lists them, NULL-terminated. */
extern const struct scn_word scn_policies[];
const char *scn_policy_word(enum scn_policy policy);

/*
 * Every architecture the model is built for (make ARCH=...), as a
 * record's header names it, in the order of the Makefile's ARCHES
 * (tests/unit/test_vocab.c holds the two to one list): the names,
 * NULL-terminated, and each one's base page size, 0 for a name that is
 * none of them.
 */
extern const char *const scn_arch_names[];
unsigned long scn_arch_page_size(const char *arch);

#endif /* SCENARIO_VOCAB_H */
