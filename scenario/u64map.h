/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * u64map.h - a map of 64-bit keys to 64-bit values: raw frame ids to
 * canonical numbers (record.c), to mapping counts and colours (svg.c).
 */
#ifndef SCENARIO_U64MAP_H
#define SCENARIO_U64MAP_H

#include <stdbool.h>
#include <stdint.h>

struct u64map {
	struct u64slot {
		uint64_t key;
		uint64_t val;
		bool used;
	} *slots;
	unsigned int bits;	/* 1 << bits slots */
	unsigned long nr;
};

/* Room for @nr keys without growing: 0 or -ENOMEM. */
int u64map_reserve(struct u64map *m, unsigned long nr);
/* The value of @key, 0 when it has none. */
uint64_t u64map_get(const struct u64map *m, uint64_t key);
/* Where @key's value is, made 0 if it had none; NULL: out of memory. */
uint64_t *u64map_at(struct u64map *m, uint64_t key);
/* Forget every key, keep the memory. */
void u64map_clear(struct u64map *m);
void u64map_free(struct u64map *m);

#endif /* SCENARIO_U64MAP_H */
