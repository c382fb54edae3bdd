// SPDX-License-Identifier: GPL-2.0-only
/*
 * u64map.c - a map of 64-bit keys to 64-bit values (u64map.h), open
 * addressing, growing to stay at most half full.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/u64map.h"

static unsigned long u64map_hash(uint64_t key, unsigned int bits)
{
	/* The high bits of a multiple mix every bit of nearby frames. */
	return (unsigned long)((key * 0xff51afd7ed558ccdULL) >> (64 - bits));
}

static struct u64slot *u64map_probe(struct u64slot *slots, unsigned int bits,
				    uint64_t key)
{
	unsigned long mask = (1UL << bits) - 1, i = u64map_hash(key, bits);

	while (slots[i].used && slots[i].key != key)
		i = (i + 1) & mask;
	return &slots[i];
}

/* Rehash into 1 << @bits slots. */
static int u64map_grow(struct u64map *m, unsigned int bits)
{
	struct u64slot *slots;
	unsigned long i;

	if (bits > 40)
		return -ENOMEM;
	slots = calloc(1UL << bits, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (i = 0; m->slots && i < (1UL << m->bits); i++)
		if (m->slots[i].used)
			*u64map_probe(slots, bits, m->slots[i].key) =
				m->slots[i];
	free(m->slots);
	m->slots = slots;
	m->bits = bits;
	return 0;
}

int u64map_reserve(struct u64map *m, unsigned long nr)
{
	unsigned int bits = m->slots ? m->bits : 3;

	/* At most half full, so probes stay short. */
	while (nr > (1UL << bits) / 2)
		bits++;
	if (m->slots && bits == m->bits)
		return 0;
	return u64map_grow(m, bits);
}

uint64_t u64map_get(const struct u64map *m, uint64_t key)
{
	const struct u64slot *slot;

	if (!m->slots)
		return 0;
	slot = u64map_probe(m->slots, m->bits, key);
	return slot->used ? slot->val : 0;
}

uint64_t *u64map_at(struct u64map *m, uint64_t key)
{
	struct u64slot *slot;

	if (u64map_reserve(m, m->nr + 1))
		return NULL;
	slot = u64map_probe(m->slots, m->bits, key);
	if (!slot->used) {
		slot->used = true;
		slot->key = key;
		slot->val = 0;
		m->nr++;
	}
	return &slot->val;
}

void u64map_clear(struct u64map *m)
{
	if (m->slots)
		memset(m->slots, 0, (1UL << m->bits) * sizeof(*m->slots));
	m->nr = 0;
}

void u64map_free(struct u64map *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}
