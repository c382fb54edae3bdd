/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * explore/ - ptebatch explore: every short sequence of memory operations
 * on a tiny address space, run under two variants of the model and held
 * to the equivalence rules (scenario/compare.h) and to the invariant
 * checker after every statement.
 *
 * The engine (explore.c) writes each sequence as scenario text and runs it
 * with the scenario runner, so whatever it finds is a .scn file that
 * `ptebatch run` reproduces.  It searches breadth first and prunes a
 * sequence whose pair of model states it has met before; that state key is
 * the one place that reads the model's internals (state.c).
 */
#ifndef EXPLORE_EXPLORE_H
#define EXPLORE_EXPLORE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ptebatch.h"

/* The longest sequence the engine builds (the alphabet's ids fit a byte). */
#define EXPLORE_MAX_DEPTH 16

/* One side of the comparison: a variant and how to name it. */
struct explore_side {
	/* Record header name: the preset, then "+KEY=VALUE" per --set. */
	const char *name;
	struct pb_variant variant;
};

struct explore_options {
	int depth;			/* operations per sequence, at most */
	struct explore_side base;	/* the reference (compare_records' base) */
	struct explore_side other;
	unsigned int rules;		/* enum cmp_rules */
	bool thp;			/* add region C, a 2M THP, and its ops */
	unsigned long memory_bytes;	/* the simulated machine's memory */
	double max_seconds;		/* stop after this long; 0: never */
	/*
	 * Check after every statement of every run, not only after the
	 * statements a run adds to its prefix (which repeats a run already
	 * checked).
	 */
	bool check_all;
	/*
	 * Check the pruning itself: after every sequence pruned short of the
	 * last depth, run each single operation after it and after the
	 * sequence that met its state first, and require the same key and
	 * the same outcome (explore.c, verify_pruned).
	 */
	bool verify_pruning;
	bool levels;			/* a line per depth on @out */
	bool progress;			/* a live count on @progress */
	/*
	 * --shard SHARD/NR_SHARDS: run every depth but the last whole, and of
	 * the last depth only the sequences whose index there (in the search
	 * order) is SHARD - 1 modulo NR_SHARDS; explore.c, leaf_in_shard(),
	 * says why the shards together find what one whole run finds.
	 * nr_shards 0 or 1: the whole search.
	 */
	unsigned int shard, nr_shards;
	/*
	 * Where a finding's scenario is written, DIR/explore-SEQ.scn with
	 * both records as comments (the directory made if missing); NULL:
	 * nowhere, printed only.
	 */
	const char *out_dir;
};

/* The most shards a search is cut into. */
#define EXPLORE_MAX_SHARDS 4096

struct explore_result {
	unsigned long sequences;	/* run under both variants */
	unsigned long states;		/* distinct state pairs met */
	unsigned long pruned;		/* runs that met a known state */
	unsigned long verified;		/* --verify-pruning: pairs compared */
	unsigned long last_total;	/* sequences of the last depth, all */
	unsigned long last_run;		/* of those, run by this shard */
	int depth_done;			/* every sequence this long is covered */
	double seconds;
	bool stopped;			/* max_seconds ran out first */
	char finding[4096];		/* the finding's file, "" if none */
};

/* explore() returns one of these, or a negative errno. */
#define EXPLORE_AGREE	0	/* every sequence agreed and checked clean */
#define EXPLORE_FOUND	1	/* a difference or a violation, reported */

/*
 * Explore every sequence of up to @o->depth operations.  The first
 * difference between the two records, or the first invariant violation,
 * is printed on @out (the scenario, both records, the diagnosis) and ends
 * the search.  Its sequence number is its place in the whole search's
 * order, sharded or not.  Progress goes to @progress (may be NULL).
 */
int explore(const struct explore_options *o, struct explore_result *r,
	    FILE *out, FILE *progress);

/*
 * The commands that reproduce the finding saved in @path: one `ptebatch
 * run` per side, with its variant's flags.
 */
void explore_print_reproducer(FILE *f, const struct explore_options *o,
			      const char *path);

/* The prelude and the operations a sequence is made of, as text. */
void explore_alphabet_text(FILE *f, bool thp);

/*
 * The state key: a 128-bit digest of every part of the model's state that
 * can decide what a later statement does or shows, frames renamed in
 * order of appearance.  Reads the machine the calling thread brought up;
 * state.c says what is in it and what is left out, and why.
 */
struct explore_digest {
	uint64_t lo, hi;
};

void explore_model_digest(struct explore_digest *d);

#endif /* EXPLORE_EXPLORE_H */
