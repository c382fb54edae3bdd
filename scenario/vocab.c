// SPDX-License-Identifier: GPL-2.0-only
/*
 * vocab.c - the words of the .scn language, one table each (vocab.h).
 */
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#include "scenario/vocab.h"

/*
 * One row per advice: the word, Linux's MADV_* value (which the model and
 * the kernel backend pass on as it is), and the generator's draw number.
 */
static const struct scn_word advice_table[] = {
	{ "dontneed", MADV_DONTNEED, 1 },
	{ "hugepage", MADV_HUGEPAGE, 2 },
	{ "nohugepage", MADV_NOHUGEPAGE, 3 },
	{ "dontfork", MADV_DONTFORK, 4 },
	{ "dofork", MADV_DOFORK, 5 },
	{ "populate-read", MADV_POPULATE_READ, 8 },
	{ "populate-write", MADV_POPULATE_WRITE, 9 },
	{ "wipeonfork", MADV_WIPEONFORK, 10 },
	{ "keeponfork", MADV_KEEPONFORK, 11 },
	{ "free", MADV_FREE, 6 },
	{ "pageout", MADV_PAGEOUT, 7 },
	{ NULL, 0, 0 }
};

const struct scn_word scn_prots[] = {
	{ "none", SCN_PROT_NONE, 0 },
	{ "r", SCN_PROT_R, 0 },
	{ "rw", SCN_PROT_RW, 0 },
	{ NULL, 0, 0 }
};

const struct scn_word scn_policies[] = {
	{ "always", SCN_POL_ALWAYS, 0 },
	{ "madvise", SCN_POL_MADVISE, 0 },
	{ "inherit", SCN_POL_INHERIT, 0 },
	{ "never", SCN_POL_NEVER, 0 },
	{ NULL, 0, 0 }
};

/* The advices in use: the table above, unless a test replaced it. */
static const struct scn_word *advices = advice_table;

static const char *word_of(const struct scn_word *table, int value)
{
	for (; table->word; table++)
		if (table->value == value)
			return table->word;
	return NULL;
}

const struct scn_word *scn_word_lookup(const struct scn_word *table,
				       const char *word)
{
	for (; table->word; table++)
		if (!strcmp(table->word, word))
			return table;
	return NULL;
}

const struct scn_word *scn_advices(void)
{
	return advices;
}

const char *scn_advice_word(int advice)
{
	return word_of(advices, advice);
}

int scn_nr_advices_drawn(void)
{
	const struct scn_word *a;
	int nr = 0;

	for (a = advices; a->word; a++)
		nr += a->draw > 0;
	return nr;
}

const struct scn_word *scn_advice_drawn(int i)
{
	const struct scn_word *a;

	for (a = advices; a->word; a++)
		if (a->draw == i + 1)
			return a;
	return NULL;
}

void scn_advices_replace(const struct scn_word *rows)
{
	advices = rows ? rows : advice_table;
}

const char *scn_prot_word(enum scn_prot prot)
{
	return word_of(scn_prots, prot);
}

const char *scn_policy_word(enum scn_policy policy)
{
	return word_of(scn_policies, policy);
}

/*
 * The architectures, one row each: name and base page size.  Both tables
 * below are made from it.
 */
#define ARCHES(X)		\
	X("x86_64", 4096)	\
	X("x86-pae", 4096)	\
	X("arm64-4k", 4096)	\
	X("arm64-16k", 16384)	\
	X("arm64-64k", 65536)

#define ARCH_NAME(name, page_size) name,
const char *const scn_arch_names[] = { ARCHES(ARCH_NAME) NULL };

#define ARCH_PAGE_SIZE(name, page_size) page_size,
static const unsigned long arch_page_sizes[] = { ARCHES(ARCH_PAGE_SIZE) };

unsigned long scn_arch_page_size(const char *arch)
{
	int i;

	for (i = 0; arch && scn_arch_names[i]; i++)
		if (!strcmp(scn_arch_names[i], arch))
			return arch_page_sizes[i];
	return 0;
}
