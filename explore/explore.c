// SPDX-License-Identifier: GPL-2.0-only
/*
 * explore.c - the engine of `ptebatch explore`: bounded exhaustive
 * equivalence of two variants of the model.
 *
 * Every sequence of up to K operations from a small alphabet (below) is
 * written as scenario text after a fixed prelude, parsed, and run by the
 * scenario runner on the model under both variants, with the invariant
 * checker after every statement (after the new ones: a run repeats its
 * prefix, which was checked when it ran).  An `observe` ends each
 * sequence, and
 * the two records must agree under the comparison rules of
 * scenario/compare.h.  Because a sequence's text is a scenario, anything
 * found is printed as a file `ptebatch run` reproduces.
 *
 * The search is breadth first, so what it finds is a shortest sequence.
 * What keeps depth affordable is pruning: after each run the pair of
 * model states (state.c's digest of each machine) and the sequence's own
 * bookkeeping (who is alive, who holds which handle, the next value
 * written) form a key, and a sequence that reaches a key met before is
 * not extended - everything after it behaves as after the earlier one,
 * which has at least as many operations left.  Runs are still compared
 * even when pruned.
 *
 * How a sequence runs.  One simulated machine exists per host process,
 * so the two variants' states cannot be kept side by side; they are kept
 * as checkpoints instead (mm/checkpoint.c: the machine's long-lived
 * objects come from one arena, so a checkpoint is a copy of the arena's
 * used bytes, the globals, the memmap entries ever written and the page
 * tables' frames).  Both sides' backends share the machine
 * (model_options.checkpoints) and swap their states in and out of it.
 * The search goes level by level: for each frontier sequence (a parent)
 * with a child to run, the parent's operations run once from the
 * prelude's checkpoint and its state is saved per side; then each child
 * restores that state and runs only its new operation and the observe,
 * the checker after the operation (the observe only reads: a check after
 * it would see the same machine), and its record is the parent's so far
 * followed by those lines (scenario_run_part(): the same lines a whole
 * run prints).  The two records are compared on those new lines alone
 * (compare_new_parts(): the parent's lines agreed when the parent ran).  Nothing is mapped, unmapped or fenced with
 * membarrier() per sequence.  Why this design: the replay it replaces
 * spent most of its time bringing a machine up and down (mmap/munmap of
 * the memmap, membarrier), the rest replaying prefixes; a checkpoint is a
 * few memcpy()s, and the model itself is untouched - only where its
 * objects are allocated.  The digest, the keys, the order of the search,
 * the numbering and the records compared are those of the replay.
 *
 * Anything but agreement - a difference, a violation, a failed run - is
 * run once more the ordinary way, from the prelude, and reported from
 * that run, so the reproducer is the whole scenario with both whole
 * records.  --check-all (every statement of every run checked: a
 * prefix restored from a checkpoint does not run again) replays every
 * sequence from the prelude, on the shared machine; so do
 * --verify-pruning's extra runs.  PTEBATCH_EXPLORE_REPLAY=1 (not 0 or
 * empty) takes the old path whole: every sequence replayed, on a machine
 * brought up and down per run - the reference the tests hold the fast
 * path to.
 *
 * --shard I/N cuts the search in N for N hosts or jobs: each runs every
 * depth but the last whole, and 1/N of the last (leaf_in_shard()).
 */
#include <errno.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/backend.h"
#include "explore/explore.h"
#include "lib/outfile.h"
#include "scenario/compare.h"
#include "scenario/live.h"
#include "scenario/run.h"
#include "scenario/scenario.h"
#include "scenario/vocab.h"

/* ---- the address space and the alphabet ------------------------------- */

/*
 * A: 32K, so `mthp 16K always` fills it with two 16K folios (32K is no
 * mTHP size here, and 2M does not fit).  B: 8K, too small for any large
 * folio: two order-0 pages.  With --thp, C: 2M, one PMD-mapped THP on its
 * first fault, which `split` maps with PTEs and seeds' 16-PTE reuse
 * window cuts in 32 (A's folios are smaller than the window).  Regions
 * sit in 2M blocks of their own (backend/model.c), so no folio spans two.
 *
 *   A: | 0 1 2 3 | 4 5 6 7 |   B: | 0 | 1 |   C: | 0 .. 15 | 16 .. 31 | .. 511 |
 *        16K       16K             4K  4K           2M: windows of 16 pages
 */
#define SCN_4K 4096UL

static const char prelude_small[] =
	"mthp 16K always\n"
	"P0 mmap A 32K rw\n"
	"P0 mmap B 8K rw\n";

static const char prelude_thp[] =
	"mthp 16K always\n"
	"mthp 2M always\n"
	"P0 mmap A 32K rw\n"
	"P0 mmap B 8K rw\n"
	"P0 mmap C 2M rw\n";

enum op_kind {
	OP_WRITE,
	OP_READ,
	OP_FORK,
	OP_EXIT,
	OP_MPROTECT,
	OP_MADVISE,	/* the advice in arg */
	OP_REGISTER,	/* pin w: long-term writable pin, held */
	OP_UNREGISTER,
	OP_VMSPLICE,	/* pin r: read-only references, held */
	OP_DRAIN,
	OP_DIO_WRITE,	/* pin r: read-only pins, released at once */
	OP_SPLIT,
};

/* The held handles: at most one of each kind. */
enum { HANDLE_W, HANDLE_V, NR_HANDLES };
static const char *const handle_names[NR_HANDLES] = { "W", "V" };
static const enum scn_take handle_takes[NR_HANDLES] = {
	SCN_TAKE_REGISTER, SCN_TAKE_VMSPLICE,
};

/*
 * The alphabet, one row per operation and range; each runs as either
 * live process.  The ranges are chosen so that every batched path meets
 * its boundaries: one page inside a folio, a range that cuts both folios
 * in half (runs end at the folio end, and mprotect splits the VMA inside
 * a folio), whole folios, order-0 pages, and with --thp a PMD mapping and
 * a range across a reuse-window boundary.
 */
static const struct op_row {
	enum op_kind kind;
	const char *range;	/* "R OFF LEN", or NULL */
	int arg;		/* mprotect: enum scn_prot; madvise: MADV_* */
	bool thp;		/* needs region C (--thp) */
} rows[] = {
	{ OP_WRITE, "A 4K 4K", 0, false },	/* a page inside folio 0 */
	{ OP_WRITE, "A 8K 16K", 0, false },	/* half of each folio */
	{ OP_WRITE, "A 0 32K", 0, false },	/* both folios */
	{ OP_WRITE, "B 0 8K", 0, false },	/* two order-0 folios */
	{ OP_READ, "A 4K 4K", 0, false },	/* the zero page if empty */
	{ OP_READ, "B 0 8K", 0, false },
	{ OP_FORK, NULL, 0, false },
	{ OP_EXIT, NULL, 0, false },
	{ OP_MPROTECT, "A 0 32K", SCN_PROT_R, false },
	{ OP_MPROTECT, "A 0 32K", SCN_PROT_RW, false },
	/* the VMA ends inside folios */
	{ OP_MPROTECT, "A 8K 16K", SCN_PROT_R, false },
	{ OP_MPROTECT, "A 8K 16K", SCN_PROT_RW, false },
	/* a hole in a folio */
	{ OP_MADVISE, "A 4K 4K", MADV_DONTNEED, false },
	/* a whole folio */
	{ OP_MADVISE, "A 16K 16K", MADV_DONTNEED, false },
	/* GUP's write faults over half of each folio, COW-shared or not */
	{ OP_MADVISE, "A 8K 16K", MADV_POPULATE_WRITE, false },
	/* lazy-free, kept whole */
	{ OP_MADVISE, "A 0 32K", MADV_FREE, false },
	/* splits both folios */
	{ OP_MADVISE, "A 8K 16K", MADV_FREE, false },
	/* discards what is clean */
	{ OP_MADVISE, "A 0 32K", MADV_PAGEOUT, false },
	{ OP_REGISTER, "A 4K 4K", 0, false },
	{ OP_REGISTER, "A 8K 16K", 0, false },
	{ OP_UNREGISTER, NULL, 0, false },
	{ OP_VMSPLICE, "A 4K 4K", 0, false },
	{ OP_VMSPLICE, "A 8K 16K", 0, false },
	{ OP_DRAIN, NULL, 0, false },
	{ OP_DIO_WRITE, "A 8K 16K", 0, false },
	{ OP_WRITE, "C 60K 8K", 0, true },	/* across a reuse window */
	{ OP_SPLIT, "C 0 2M", 0, true },
	/* a hole in the THP */
	{ OP_MADVISE, "C 64K 4K", MADV_DONTNEED, true },
};

#define NR_ROWS (int)(sizeof(rows) / sizeof(rows[0]))
#define NR_SLOTS 2

/* The rows in use; an operation is (slot, row), numbered slot * nr + row. */
struct alphabet {
	const char *prelude;
	const struct op_row *row[NR_ROWS];
	int nr_rows;
	/* The tables above, sizes scaled to the build's page size. */
	char prelude_buf[256];
	struct op_row scaled[NR_ROWS];
	char range_buf[NR_ROWS][32];
};

/*
 * The layout is written in 4K pages; a build with 16K or 64K pages gets
 * the same layout in its own pages: every "NK" of @in is multiplied by
 * @factor (4K -> one page, 16K -> a folio of four pages).  "2M" (region
 * C, --thp) is left as it is: --thp is refused off 4K pages.
 */
static void scale_sizes(const char *in, char *out, size_t room,
			unsigned long factor)
{
	size_t len = 0;

	while (*in && len + 24 < room) {
		char *end;
		unsigned long v;

		if (*in >= '0' && *in <= '9' && (len == 0 || out[len - 1] == ' ')) {
			v = strtoul(in, &end, 10);
			if (*end == 'K') {
				v *= factor;
				len += (size_t)(v % 1024 ? snprintf(out + len, room - len,
								    "%luK", v)
						       : snprintf(out + len, room - len,
								  "%luM", v / 1024));
				in = end + 1;
				continue;
			}
		}
		out[len++] = *in++;
	}
	out[len] = '\0';
}

static void alphabet_init(struct alphabet *ab, bool thp)
{
	unsigned long factor = pb_page_size() / SCN_4K;
	int i;

	scale_sizes(thp ? prelude_thp : prelude_small, ab->prelude_buf,
		    sizeof(ab->prelude_buf), factor);
	ab->prelude = ab->prelude_buf;
	ab->nr_rows = 0;
	for (i = 0; i < NR_ROWS; i++) {
		if (!thp && rows[i].thp)
			continue;
		ab->scaled[i] = rows[i];
		if (rows[i].range) {
			scale_sizes(rows[i].range, ab->range_buf[i],
				    sizeof(ab->range_buf[i]), factor);
			ab->scaled[i].range = ab->range_buf[i];
		}
		ab->row[ab->nr_rows++] = &ab->scaled[i];
	}
}

static int alphabet_ops(const struct alphabet *ab)
{
	return ab->nr_rows * NR_SLOTS;
}

/*
 * The bytes writes store, in turn.  Consecutive writes differ, so a
 * stale page (a pipe still holding the old copy, a COW that did not
 * happen) shows in the data; three values rather than one per write, so
 * that states still meet again.
 */
static const unsigned int write_values[] = { 0x11, 0x22, 0x33 };
#define NR_VALUES (sizeof(write_values) / sizeof(write_values[0]))

/*
 * What the sequence itself knows: which processes are alive (P<id>, the
 * slots of the alphabet being the live ones from the oldest) and who
 * holds each handle (scenario/live.h), how many writes so far.  It
 * decides which operations are valid next and how they are spelled: the
 * parser's rules (no exit while holding a handle, no release by another
 * process) and the alphabet's own (two processes at most, the last one
 * never exits).
 */
struct seq_state {
	uint64_t alive;			/* bit p: P<p> is alive */
	struct scn_hold hold[NR_HANDLES];
	uint8_t next_name;		/* the id of the next fork's child */
	uint8_t writes;			/* modulo NR_VALUES */
};

_Static_assert(EXPLORE_MAX_DEPTH < 64, "seq_state.alive is one word");

static const struct seq_state initial_state = {
	.alive = 1,
	.next_name = 1,
};

/* @ss as scenario/live.h's picture: what changes it changes @ss. */
static struct scn_live seq_live(struct seq_state *ss)
{
	return (struct scn_live){
		.alive = &ss->alive, .max_procs = 64,
		.hold = ss->hold, .max_handles = NR_HANDLES,
	};
}

/* The slot of live process @proc: how many live ones are older. */
static int slot_of(const struct seq_state *ss, int proc)
{
	return __builtin_popcountll(ss->alive & ((1ULL << proc) - 1));
}

static int row_handle(enum op_kind kind)
{
	switch (kind) {
	case OP_REGISTER:
	case OP_UNREGISTER:
		return HANDLE_W;
	case OP_VMSPLICE:
	case OP_DRAIN:
		return HANDLE_V;
	default:
		return -1;
	}
}

static bool op_valid(const struct alphabet *ab, const struct seq_state *ss,
		     int op)
{
	const struct op_row *row = ab->row[op % ab->nr_rows];
	int slot = op / ab->nr_rows, h = row_handle(row->kind);
	struct seq_state state = *ss;
	struct scn_live live = seq_live(&state);
	int nr_alive = scn_live_nr_alive(&live);
	int proc = scn_live_nth_alive(&live, slot);

	if (slot >= nr_alive)
		return false;
	switch (row->kind) {
	case OP_FORK:
		return nr_alive < NR_SLOTS;
	case OP_EXIT:
		/* The last process stays: nothing could follow it. */
		return nr_alive >= 2 && !scn_live_check_leave(&live, proc);
	case OP_REGISTER:
	case OP_VMSPLICE:
		return !scn_live_check_take(&live, h);
	case OP_UNREGISTER:
	case OP_DRAIN:
		return !scn_live_check_release(&live, h, proc,
					       handle_takes[h]);
	default:
		return true;
	}
}

/* Append @op's statement to @buf (at *len, of @size) and apply it to @ss. */
static int op_append(const struct alphabet *ab, struct seq_state *ss, int op,
		     char *buf, size_t size, size_t *len)
{
	const struct op_row *row = ab->row[op % ab->nr_rows];
	struct scn_live live = seq_live(ss);
	int slot = op / ab->nr_rows, proc = scn_live_nth_alive(&live, slot);
	int h = row_handle(row->kind), n = -1;
	char *p = buf + *len;
	size_t room = size - *len;

	switch (row->kind) {
	case OP_WRITE:
		n = snprintf(p, room, "P%d write %s value 0x%02x\n", proc,
			     row->range, write_values[ss->writes]);
		ss->writes = (ss->writes + 1) % NR_VALUES;
		break;
	case OP_READ:
		n = snprintf(p, room, "P%d read %s\n", proc, row->range);
		break;
	case OP_FORK:
		n = snprintf(p, room, "P%d fork P%d\n", proc, ss->next_name);
		scn_live_start(&live, ss->next_name++);
		break;
	case OP_EXIT:
		n = snprintf(p, room, "P%d exit\n", proc);
		scn_live_exit(&live, proc);
		break;
	case OP_MPROTECT:
		n = snprintf(p, room, "P%d mprotect %s %s\n", proc, row->range,
			     scn_prot_word(row->arg));
		break;
	case OP_MADVISE:
		n = snprintf(p, room, "P%d madvise %s %s\n", proc,
			     row->range, scn_advice_word(row->arg));
		break;
	case OP_REGISTER:
	case OP_VMSPLICE:
		n = snprintf(p, room, "P%d %s %s %s\n", proc,
			     row->kind == OP_REGISTER ? "register" : "vmsplice",
			     handle_names[h], row->range);
		scn_live_take(&live, h, proc, handle_takes[h]);
		break;
	case OP_UNREGISTER:
	case OP_DRAIN:
		n = snprintf(p, room, "P%d %s %s\n", proc,
			     row->kind == OP_UNREGISTER ? "unregister" : "drain",
			     handle_names[h]);
		scn_live_release(&live, h, proc, handle_takes[h]);
		break;
	case OP_DIO_WRITE:
		n = snprintf(p, room, "P%d dio-write %s\n", proc, row->range);
		break;
	case OP_SPLIT:
		n = snprintf(p, room, "P%d split %s\n", proc, row->range);
		break;
	}
	if (n < 0 || (size_t)n >= room)
		return -ENOSPC;
	*len += n;
	return 0;
}

void explore_alphabet_text(FILE *f, bool thp)
{
	struct alphabet ab;
	char line[128];
	size_t len;
	int r;

	alphabet_init(&ab, thp);
	fprintf(f, "prelude:\n%s", ab.prelude);
	fprintf(f, "operations (%d; each by either live process, P0 shown):\n",
		ab.nr_rows);
	for (r = 0; r < ab.nr_rows; r++) {
		struct seq_state ss = initial_state;
		int h = row_handle(ab.row[r]->kind);

		/* A release needs something to release. */
		if (h >= 0) {
			struct scn_live live = seq_live(&ss);

			scn_live_take(&live, h, 0, handle_takes[h]);
		}
		len = 0;
		if (!op_append(&ab, &ss, r, line, sizeof(line), &len))
			fprintf(f, "  %s", line);
	}
	fputs("written values cycle through", f);
	for (r = 0; r < (int)NR_VALUES; r++)
		fprintf(f, " 0x%02x", write_values[r]);
	fputs("; every sequence ends with observe\n", f);
}

/* ---- sequences ---------------------------------------------------------- */

struct seq {
	uint8_t ops[EXPLORE_MAX_DEPTH];
	uint8_t len;
	struct seq_state ss;
};

/* The scenario text of @q, ending with observe. */
static int seq_text(const struct alphabet *ab, const struct seq *q,
		    char *buf, size_t size)
{
	struct seq_state ss = initial_state;
	size_t len = strlen(ab->prelude);
	int i, ret;

	if (len + 1 > size)
		return -ENOSPC;
	memcpy(buf, ab->prelude, len + 1);
	for (i = 0; i < q->len; i++) {
		ret = op_append(ab, &ss, q->ops[i], buf, size, &len);
		if (ret)
			return ret;
	}
	if (len + sizeof("observe\n") > size)
		return -ENOSPC;
	memcpy(buf + len, "observe\n", sizeof("observe\n"));
	return 0;
}

/* @parent followed by @op, in *child. */
static int seq_extend(const struct alphabet *ab, const struct seq *parent,
		      int op, struct seq *child)
{
	char line[128];
	size_t len = 0;

	if (parent->len == EXPLORE_MAX_DEPTH)
		return -ENOSPC;
	*child = *parent;
	child->ops[child->len++] = (uint8_t)op;
	return op_append(ab, &child->ss, op, line, sizeof(line), &len);
}

/* ---- a side: a model backend, and the digest of its final state ------- */

/*
 * The runner calls finish() right after the last statement, and the
 * model backend's finish() takes the machine down; the backend calls
 * side_digest() just before, while the run's final state is still there.
 */
struct side {
	struct backend *model;
	struct explore_digest digest;
	/*
	 * The first statement checked, for scenario_run(): those before it
	 * are the prefix, and were checked when the prefix ran as a
	 * sequence of its own (the model is deterministic, so this run
	 * repeats that one exactly).
	 */
	int check_from;
	/*
	 * The fast path (below): the machine after the prelude and after
	 * the parent being extended, and the record each printed so far.
	 */
	struct model_checkpoint *root, *parent;
	char *root_record, *parent_record;
	size_t root_record_len, parent_record_len;
};

static void side_digest(void *arg)
{
	struct side *side = arg;

	explore_model_digest(&side->digest);
}

static struct side *side_create(const struct explore_side *which,
				unsigned long memory_bytes, bool fast)
{
	struct side *side = calloc(1, sizeof(*side));
	struct model_options mopt = {
		.memory_bytes = memory_bytes,
		.variant = which->variant,
		.variant_name = which->name,
		.before_teardown = side_digest,
		.teardown_arg = side,
		.checkpoints = fast,
	};

	if (!side)
		return NULL;
	side->model = model_backend_create(&mopt);
	if (fast && side->model) {
		side->root = model_checkpoint_alloc();
		side->parent = model_checkpoint_alloc();
	}
	if (!side->model || (fast && (!side->root || !side->parent))) {
		if (side->model)
			side->model->ops->destroy(side->model);
		model_checkpoint_free(side->root);
		model_checkpoint_free(side->parent);
		free(side);
		return NULL;
	}
	return side;
}

static void side_destroy(struct side *side)
{
	if (!side)
		return;
	side->model->ops->destroy(side->model);
	model_checkpoint_free(side->root);
	model_checkpoint_free(side->parent);
	free(side->root_record);
	free(side->parent_record);
	free(side);
}

/* ---- the set of state keys met ---------------------------------------- */

/* A key and the first sequence that reached it (an index in reps). */
struct key_slot {
	struct explore_digest key;	/* lo == hi == 0: empty */
	size_t rep;
};

struct key_set {
	struct key_slot *slots;
	size_t cap, nr;
	struct seq *reps;		/* in the order the keys were met */
	size_t cap_reps;
};

static bool key_empty(const struct explore_digest *k)
{
	return !k->lo && !k->hi;
}

static bool key_equal(const struct explore_digest *a,
		      const struct explore_digest *b)
{
	return a->lo == b->lo && a->hi == b->hi;
}

static int key_set_grow(struct key_set *set)
{
	size_t cap = set->cap ? set->cap * 2 : 1 << 16, i, j;
	struct key_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < set->cap; i++) {
		if (key_empty(&set->slots[i].key))
			continue;
		for (j = set->slots[i].key.lo & (cap - 1);
		     !key_empty(&slots[j].key); j = (j + 1) & (cap - 1))
			;
		slots[j] = set->slots[i];
	}
	free(set->slots);
	set->slots = slots;
	set->cap = cap;
	return 0;
}

/*
 * Add @k, reached by @q.  Returns 1 if it is new, 0 if it was met before
 * (*rep: the sequence that met it first), or -ENOMEM.
 */
static int key_set_add(struct key_set *set, struct explore_digest k,
		       const struct seq *q, const struct seq **rep)
{
	size_t i;

	if (key_empty(&k))
		k.lo = 1;	/* the empty slot's value: move it aside */
	if (2 * (set->nr + 1) > set->cap && key_set_grow(set))
		return -ENOMEM;
	for (i = k.lo & (set->cap - 1); !key_empty(&set->slots[i].key);
	     i = (i + 1) & (set->cap - 1)) {
		if (key_equal(&set->slots[i].key, &k)) {
			*rep = &set->reps[set->slots[i].rep];
			return 0;
		}
	}
	if (set->nr == set->cap_reps) {
		size_t cap = set->cap_reps ? 2 * set->cap_reps : 1024;
		struct seq *bigger = realloc(set->reps, cap * sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		set->reps = bigger;
		set->cap_reps = cap;
	}
	set->reps[set->nr] = *q;
	set->slots[i].key = k;
	set->slots[i].rep = set->nr++;
	return 1;
}

static void key_set_free(struct key_set *set)
{
	free(set->slots);
	free(set->reps);
}

/* ---- running one sequence --------------------------------------------- */

struct side_run {
	char *record, *errors;
	size_t record_len, errors_len;
	int status;			/* scenario_run()'s */
	bool borrowed;			/* record and errors are the streams' */
};

/* The fast path's record and error streams, one pair per side, reused. */
struct part_stream {
	FILE *f;
	char *buf;
	size_t len;
};

struct explorer {
	const struct explore_options *o;
	struct explore_result *r;
	FILE *out, *progress;
	struct side *sides[2];
	struct side_run runs[2];
	char text[4096];
	char *explain;
	size_t explain_len;
	struct alphabet ab;
	struct key_set seen;
	struct timespec start;
	/*
	 * The place in the whole search's order of the sequence run last:
	 * sequences counts only what this shard ran, this counts those the
	 * other shards run too, so a finding has one number in every shard.
	 */
	unsigned long ordinal;
	/*
	 * The fast path: extend a parent from its checkpoint (see the top
	 * of the file).  The prelude's statements (without its observe),
	 * the prelude scenario the root checkpoint was taken with, and the
	 * frontier entry whose state is in each side's parent checkpoint.
	 */
	bool fast;
	struct part_stream part_out[2], part_err[2];
	int prelude_stmts;
	struct scenario *root_scn;
	const struct seq *materialized;
};

static const struct explore_side *side_of(const struct explorer *x, int i)
{
	return i ? &x->o->other : &x->o->base;
}

static void side_run_free(struct side_run *sr)
{
	if (!sr->borrowed) {
		free(sr->record);
		free(sr->errors);
	}
	memset(sr, 0, sizeof(*sr));
}

/* @ps emptied for a new part, opened the first time. */
static FILE *part_stream_reset(struct part_stream *ps)
{
	if (!ps->f)
		ps->f = open_memstream(&ps->buf, &ps->len);
	else
		rewind(ps->f);
	return ps->f;
}

/* What was written since the reset, in buf and len; 0 or -ENOMEM. */
static int part_stream_end(struct part_stream *ps)
{
	return fflush(ps->f) || ferror(ps->f) ? -ENOMEM : 0;
}

static void part_stream_close(struct part_stream *ps)
{
	if (ps->f)
		fclose(ps->f);
	free(ps->buf);
	memset(ps, 0, sizeof(*ps));
}

/* @sr emptied, its record and errors open as *@out and *@err. */
static int side_run_open(struct side_run *sr, FILE **out, FILE **err)
{
	side_run_free(sr);
	*out = open_memstream(&sr->record, &sr->record_len);
	*err = open_memstream(&sr->errors, &sr->errors_len);
	if (*out && *err)
		return 0;
	if (*out)
		fclose(*out);
	if (*err)
		fclose(*err);
	return -ENOMEM;
}

static int run_side(struct explorer *x, int i, const struct scenario *s)
{
	struct side_run *sr = &x->runs[i];
	FILE *out, *err;
	int bad;

	if (side_run_open(sr, &out, &err))
		return -ENOMEM;
	sr->status = scenario_run(s, x->sides[i]->model, out, err,
				  x->sides[i]->check_from);
	bad = fclose(out);
	bad |= fclose(err);
	return bad ? -ENOMEM : 0;
}

/* "--variant seeds --set wp_reuse_max=1" for the side named @name. */
static void print_run_flags(FILE *f, const char *name)
{
	const char *plus = strchr(name, '+');

	fprintf(f, "--variant %.*s", (int)(plus ? plus - name : (long)strlen(name)),
		name);
	while (plus) {
		const char *next = strchr(plus + 1, '+');

		fprintf(f, " --set %.*s",
			(int)(next ? next - plus - 1 : (long)strlen(plus + 1)),
			plus + 1);
		plus = next;
	}
}

/*
 * The reproducer: the scenario between marker lines, then each side's
 * record (and what went wrong on it) as far as it got.
 */
static void save_finding(struct explorer *x, const struct seq *q);
static const char *rules_name(unsigned int rules);

static void report(struct explorer *x, const struct seq *q)
{
	FILE *f = x->out;
	int i;

	fprintf(f, "--- scenario (sequence %lu, %d operations); reproduce"
		" with\n---   ptebatch run ", x->ordinal, q->len);
	print_run_flags(f, x->o->base.name);
	fputs(" FILE.scn\n---   ptebatch run ", f);
	print_run_flags(f, x->o->other.name);
	fprintf(f, " FILE.scn\n%s", x->text);
	for (i = 0; i < 2; i++) {
		const struct side_run *sr = &x->runs[i];

		fprintf(f, "--- record under %s\n%.*s", side_of(x, i)->name,
			(int)sr->record_len, sr->record ? sr->record : "");
		if (sr->errors_len)
			fprintf(f, "--- reported under %s\n%.*s",
				side_of(x, i)->name, (int)sr->errors_len,
				sr->errors);
	}
	fputs("--- end\n", f);
	fflush(f);
	save_finding(x, q);
}

/* @len bytes of @text on @f, each line behind "# ". */
static void put_commented(FILE *f, const char *text, size_t len)
{
	size_t i;
	bool bol = true;

	for (i = 0; i < len; i++) {
		if (bol)
			fputs("# ", f);
		fputc(text[i], f);
		bol = text[i] == '\n';
	}
	if (!bol)
		fputc('\n', f);
}

/*
 * The finding as a file `ptebatch run` takes: what it is and how to run
 * it, the scenario, then each side's record (and what its run reported)
 * as comments, so that the file alone says what each side printed.
 */
static void save_finding(struct explorer *x, const struct seq *q)
{
	const char *dir = x->o->out_dir;
	char *path = x->r->finding, why[1200];
	size_t room = sizeof(x->r->finding);
	struct outfile of;
	FILE *f;
	int i;

	if (!dir)
		return;
	if (mkdir(dir, 0777) && errno != EEXIST) {
		fprintf(x->out, "explore: cannot make %s: %s (the finding is"
			" above only)\n", dir, strerror(errno));
		return;
	}
	if ((size_t)snprintf(path, room, "%s/explore-%lu.scn", dir,
			     x->ordinal) >= room) {
		path[0] = '\0';
		return;
	}
	if (outfile_open(&of, "--out", path, 0, why, sizeof(why))) {
		fprintf(x->out, "explore: %s (the finding is above only)\n",
			why);
		path[0] = '\0';
		return;
	}
	f = of.f;
	fprintf(f, "# explore: sequence %lu (%d operations), %s against %s,"
		" rules %s\n# reproduce with\n", x->ordinal, q->len,
		x->o->base.name, x->o->other.name, rules_name(x->o->rules));
	for (i = 0; i < 2; i++) {
		fputs("#   ptebatch run ", f);
		print_run_flags(f, side_of(x, i)->name);
		fprintf(f, " %s\n", path);
	}
	fputs(x->text, f);
	for (i = 0; i < 2; i++) {
		const struct side_run *sr = &x->runs[i];

		fprintf(f, "# --- record under %s\n", side_of(x, i)->name);
		put_commented(f, sr->record ? sr->record : "",
			      sr->record ? sr->record_len : 0);
		if (sr->errors_len) {
			fprintf(f, "# --- reported under %s\n",
				side_of(x, i)->name);
			put_commented(f, sr->errors, sr->errors_len);
		}
	}
	if (outfile_commit(&of, why, sizeof(why))) {
		fprintf(x->out, "explore: %s (the finding is above only)\n",
			why);
		path[0] = '\0';
	}
}

void explore_print_reproducer(FILE *f, const struct explore_options *o,
			      const char *path)
{
	fprintf(f, "explore: the finding is in %s; reproduce with\n", path);
	fputs("  ptebatch run ", f);
	print_run_flags(f, o->base.name);
	fprintf(f, " %s\n  ptebatch run ", path);
	print_run_flags(f, o->other.name);
	fprintf(f, " %s\n", path);
}

static const char *rules_name(unsigned int rules)
{
	return rules & CMP_SAME_FRAMES ? "same-frames" : "equivalent";
}

/*
 * Compare the two records of the run just made.  Returns 0 when they
 * agree, EXPLORE_FOUND when they do not (explained in x->explain), or a
 * negative errno.
 */
static int compare_runs(struct explorer *x)
{
	struct record *rec[2] = { NULL, NULL };
	FILE *explain;
	int i, ret = 0;

	free(x->explain);
	x->explain = NULL;
	explain = open_memstream(&x->explain, &x->explain_len);
	if (!explain)
		return -ENOMEM;
	for (i = 0; i < 2 && !ret; i++) {
		rec[i] = record_parse(side_of(x, i)->name, x->runs[i].record,
				      x->runs[i].record_len,
				      SCN_DEFAULT_PAGE_SIZE, explain);
		/* The runner printed it; failing to read it back is a bug
		 * worth seeing, so it counts as a finding. */
		if (!rec[i])
			ret = EXPLORE_FOUND;
	}
	if (!ret)
		ret = compare_records(rec[0], rec[1], x->o->rules, explain);
	if (fclose(explain) && !ret)
		ret = -ENOMEM;
	record_free(rec[0]);
	record_free(rec[1]);
	return ret;
}

static double elapsed(const struct explorer *x)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - x->start.tv_sec) +
	       (double)(now.tv_nsec - x->start.tv_nsec) / 1e9;
}

/* The key of the state @q left: both machines and the sequence's own. */
static struct explore_digest state_key(const struct explorer *x,
				       const struct seq *q)
{
	const struct explore_digest *a = &x->sides[0]->digest;
	const struct explore_digest *b = &x->sides[1]->digest;
	struct seq_state ss = q->ss;
	struct scn_live live = seq_live(&ss);
	uint64_t own = (uint64_t)scn_live_nr_alive(&live) |
		       (uint64_t)ss.writes << 8;
	struct explore_digest k;
	int h;

	/* Names do not matter, only which live process holds a handle. */
	for (h = 0; h < NR_HANDLES; h++)
		own |= (uint64_t)(!ss.hold[h].held ? 0xff :
				  slot_of(&ss, ss.hold[h].holder) & 0xff)
		       << (16 + 8 * h);
	k.lo = (a->lo ^ (b->lo * 0x9e3779b97f4a7c15ULL)) + own;
	k.hi = (a->hi * 0xc2b2ae3d27d4eb4fULL) ^ b->hi ^ (own << 1);
	return k;
}

/* What run_sequence() says of one sequence (or a negative errno). */
enum { SEQ_SEEN, SEQ_NEW, SEQ_FOUND };

/*
 * Run @q under both variants and compare the records: 0 when they agree
 * and every check passed, SEQ_FOUND after reporting a difference, a
 * violation or a failed run, or a negative errno.  The records stay in
 * x->runs, the digests in x->sides.
 */
/* @q's scenario text in x->text, parsed into *@s. */
static int parse_seq(struct explorer *x, const struct seq *q,
		     struct scenario **s)
{
	char *parse_errors = NULL;
	size_t parse_errors_len = 0;
	FILE *err;
	int ret;

	*s = NULL;
	ret = seq_text(&x->ab, q, x->text, sizeof(x->text));
	if (ret)
		return ret;
	err = open_memstream(&parse_errors, &parse_errors_len);
	if (!err)
		return -ENOMEM;
	*s = scenario_parse_string("explore.scn", x->text, SCN_DEFAULT_PAGE_SIZE,
				   err);
	fclose(err);
	if (!*s) {
		/* The generator wrote what the parser refuses: its bug. */
		fprintf(x->out, "explore: the generated scenario does not"
			" parse:\n%s%s", parse_errors ? parse_errors : "",
			x->text);
		free(parse_errors);
		return -EINVAL;
	}
	free(parse_errors);
	return 0;
}

static int run_both(struct explorer *x, const struct seq *q)
{
	struct scenario *s;
	int i, ret;

	ret = parse_seq(x, q, &s);
	if (ret)
		return ret;
	for (i = 0; i < 2; i++) {
		/* The new operation and the observe after it; all of the
		 * prelude's when there is no operation yet. */
		x->sides[i]->check_from = q->len ? s->nr_stmts - 1 : 1;
		if (x->o->check_all)
			x->sides[i]->check_from = 1;
		ret = run_side(x, i, s);
		if (ret)
			break;
	}
	scenario_free(s);
	if (ret)
		return ret;

	for (i = 0; i < 2; i++) {
		if (x->runs[i].status == SCN_RUN_OK)
			continue;
		fprintf(x->out, "explore: %s under %s\n",
			x->runs[i].status == SCN_RUN_VIOLATION ?
			"invariant violation" : "the run failed",
			side_of(x, i)->name);
		report(x, q);
		return SEQ_FOUND;
	}
	ret = compare_runs(x);
	if (ret == EXPLORE_FOUND) {
		fprintf(x->out, "explore: %s and %s differ (rules %s):\n%.*s",
			x->o->base.name, x->o->other.name,
			rules_name(x->o->rules), (int)x->explain_len,
			x->explain ? x->explain : "");
		report(x, q);
		return SEQ_FOUND;
	}
	return ret;
}

/* ---- the fast path: extending a parent's checkpoint -------------------- */

/*
 * Statements [@from, @to) of @s on side @i's started backend, the record
 * lines after @prefix in x->runs[i] (a whole run's record, as if the
 * prefix's statements had printed it), the checks after statements
 * numbered @check_from (0: none) up to @check_to.  A run that does not
 * end well is run again whole, so it may stop at the first part.
 */
static int run_side_part(struct explorer *x, int i, const struct scenario *s,
			 int from, int to, int check_from, int check_to,
			 const char *prefix, size_t prefix_len)
{
	struct side_run *sr = &x->runs[i];
	FILE *out, *err;
	int ret;

	side_run_free(sr);
	out = part_stream_reset(&x->part_out[i]);
	err = part_stream_reset(&x->part_err[i]);
	if (!out || !err)
		return -ENOMEM;
	fwrite(prefix, 1, prefix_len, out);
	/* Statement number N is s->stmts[N - 1]. */
	if (check_from && check_to < to) {
		sr->status = scenario_run_part(s, x->sides[i]->model, from,
					       check_to, out, err, check_from);
		from = check_to;
		check_from = 0;
	}
	if (sr->status == SCN_RUN_OK && from < to)
		sr->status = scenario_run_part(s, x->sides[i]->model, from,
					       to, out, err, check_from);
	ret = part_stream_end(&x->part_out[i]);
	if (!ret)
		ret = part_stream_end(&x->part_err[i]);
	sr->record = x->part_out[i].buf;
	sr->record_len = x->part_out[i].len;
	sr->errors = x->part_err[i].buf;
	sr->errors_len = x->part_err[i].len;
	sr->borrowed = true;
	return ret;
}

/* Keep x->runs[i]'s record as *@rec: what the next part follows. */
static int take_record(struct explorer *x, int i, char **rec, size_t *len)
{
	const struct side_run *sr = &x->runs[i];
	char *copy = malloc(sr->record_len + 1);

	if (!copy)
		return -ENOMEM;
	memcpy(copy, sr->record, sr->record_len);
	copy[sr->record_len] = '\0';
	free(*rec);
	*rec = copy;
	*len = sr->record_len;
	return 0;
}

/*
 * A part that ran clean when it ran as a sequence of its own did not
 * this time: the checkpoint did not bring back what it saved.
 */
static int replay_differs(struct explorer *x, int i)
{
	fprintf(x->out, "explore: under %s, replaying a sequence from a"
		" checkpoint did not run as it did before:\n%s%.*s",
		side_of(x, i)->name, x->text, (int)x->runs[i].errors_len,
		x->runs[i].errors ? x->runs[i].errors : "");
	return -EIO;
}

/*
 * The root checkpoints: the prelude on each side, started as a whole run
 * would start it, and its record so far.  Runs once, after the root
 * sequence (prelude and observe) ran and was checked the ordinary way.
 */
static int fast_setup(struct explorer *x)
{
	struct seq root = { .len = 0, .ss = initial_state };
	int i, ret;

	ret = parse_seq(x, &root, &x->root_scn);
	if (ret)
		return ret;
	x->prelude_stmts = x->root_scn->nr_stmts - 1;	/* all but observe */
	for (i = 0; i < 2 && !ret; i++) {
		struct side *side = x->sides[i];
		struct side_run *sr = &x->runs[i];
		FILE *out, *err;

		if (side_run_open(sr, &out, &err))
			return -ENOMEM;
		sr->status = scenario_run_start(x->root_scn, side->model, out,
						err);
		if (sr->status == SCN_RUN_OK)
			sr->status = scenario_run_part(x->root_scn, side->model,
						       0, x->prelude_stmts, out,
						       err, 0);
		ret = fclose(out) | fclose(err) ? -ENOMEM : 0;
		if (!ret && sr->status != SCN_RUN_OK)
			ret = replay_differs(x, i);
		if (!ret)
			ret = model_backend_save(side->model, side->root);
		if (!ret)
			ret = take_record(x, i, &side->root_record,
					  &side->root_record_len);
	}
	return ret;
}

/*
 * Bring @parent's state into each side's parent checkpoint: from the
 * root, its operations run once more (unchecked: they were checked when
 * @parent ran), and its record so far is kept for its children.
 */
static int fast_materialize(struct explorer *x, const struct seq *parent)
{
	struct scenario *s;
	int i, ret;

	if (x->materialized == parent)
		return 0;
	x->materialized = NULL;
	ret = parse_seq(x, parent, &s);
	if (ret)
		return ret;
	for (i = 0; i < 2 && !ret; i++) {
		struct side *side = x->sides[i];

		ret = model_backend_restore(side->model, side->root, s);
		if (!ret)
			ret = run_side_part(x, i, s, x->prelude_stmts,
					    s->nr_stmts - 1, 0, 0,
					    side->root_record,
					    side->root_record_len);
		if (!ret && x->runs[i].status != SCN_RUN_OK)
			ret = replay_differs(x, i);
		if (!ret)
			ret = model_backend_save(side->model, side->parent);
		if (!ret)
			ret = take_record(x, i, &side->parent_record,
					  &side->parent_record_len);
	}
	scenario_free(s);
	if (!ret)
		x->materialized = parent;
	return ret;
}

/*
 * What the child's record adds to its parent's, to compare: the header
 * line, then the lines after @prefix_len (the new operation's and the
 * observe's), their statements numbered from 1 as if they were a record
 * of their own.  compare_records() compares statement by statement, each
 * on its own (struct cmp holds nothing across statements), and the
 * parent's statements agreed when the parent ran (they are its record's,
 * word for word), so the child's records agree exactly when these agree;
 * and they read back exactly when these do (the reader checks a
 * statement's number against the count so far, and keeps nothing else
 * across statements that the new lines depend on).
 */
static int new_part(const struct side_run *sr, size_t prefix_len,
		    char **text, size_t *len)
{
	const char *c = sr->record, *end = sr->record + sr->record_len;
	const char *nl = memchr(c, '\n', sr->record_len);
	int number = 0;
	FILE *f;

	*text = NULL;
	if (!nl || prefix_len > sr->record_len)
		return -EINVAL;
	f = open_memstream(text, len);
	if (!f)
		return -ENOMEM;
	fwrite(c, 1, (size_t)(nl + 1 - c), f);
	for (c = sr->record + prefix_len; c < end; c = nl + 1) {
		nl = memchr(c, '\n', (size_t)(end - c));
		if (!nl)
			nl = end - 1;
		if (*c >= '0' && *c <= '9') {
			while (*c >= '0' && *c <= '9')
				c++;
			fprintf(f, "%d", ++number);
		}
		fwrite(c, 1, (size_t)(nl + 1 - c), f);
	}
	return fclose(f) ? -ENOMEM : 0;
}

/*
 * compare_runs() on what the child added (new_part()): 0 when the two
 * agree and read back, EXPLORE_FOUND when not (run again whole to say
 * why), or a negative errno.  Two parts that say the same word for word
 * are only read back: a line agrees with itself under every rule.
 */
static int compare_new_parts(struct explorer *x)
{
	struct record *rec[2] = { NULL, NULL };
	char *text[2] = { NULL, NULL };
	size_t len[2] = { 0, 0 };
	int i, ret = 0;

	for (i = 0; i < 2 && !ret; i++)
		ret = new_part(&x->runs[i], x->sides[i]->parent_record_len,
			       &text[i], &len[i]);
	if (!ret) {
		const char *a = memchr(text[0], '\n', len[0]);
		const char *b = memchr(text[1], '\n', len[1]);
		bool same = a && b && len[0] - (size_t)(a - text[0]) ==
					      len[1] - (size_t)(b - text[1]) &&
			    !memcmp(a, b, len[0] - (size_t)(a - text[0]));

		for (i = 0; i < (same ? 1 : 2) && !ret; i++) {
			rec[i] = record_parse(side_of(x, i)->name, text[i],
					      len[i], SCN_DEFAULT_PAGE_SIZE, NULL);
			if (!rec[i])
				ret = EXPLORE_FOUND;
		}
		if (!ret && !same)
			ret = compare_records(rec[0], rec[1], x->o->rules, NULL);
	}
	for (i = 0; i < 2; i++) {
		record_free(rec[i]);
		free(text[i]);
	}
	return ret;
}

/*
 * run_both() for @q, a child of the materialized parent: each side
 * restores the parent's checkpoint and runs only the new operation and
 * the observe, checked as run_both() checks them; the record is the
 * parent's so far and those lines.  Anything but agreement is run again
 * the ordinary way, from the prelude, and reported by run_both(): the
 * reproducer printed is the whole scenario's.
 */
static int run_both_fast(struct explorer *x, const struct seq *q)
{
	struct scenario *s;
	int i, ret;

	ret = parse_seq(x, q, &s);
	if (ret)
		return ret;
	for (i = 0; i < 2 && !ret; i++) {
		struct side *side = x->sides[i];

		ret = model_backend_restore(side->model, side->parent, s);
		/*
		 * The new operation, checked; then the observe, which only
		 * reads the machine (pb_observe()): a check after it would
		 * see what the check before it saw.
		 */
		if (!ret)
			ret = run_side_part(x, i, s, s->nr_stmts - 2,
					    s->nr_stmts, s->nr_stmts - 1,
					    s->nr_stmts - 1, side->parent_record,
					    side->parent_record_len);
		if (!ret)
			explore_model_digest(&side->digest);
	}
	scenario_free(s);
	if (ret)
		return ret;
	for (i = 0; i < 2; i++)
		if (x->runs[i].status != SCN_RUN_OK)
			break;
	if (i == 2) {
		ret = compare_new_parts(x);
		if (ret != EXPLORE_FOUND)
			return ret;
	}
	/* Found: the machines' states go, the parent's must come back. */
	x->materialized = NULL;
	ret = run_both(x, q);
	if (ret == 0) {
		fprintf(x->out, "explore: a sequence run from its parent's"
			" checkpoint and the same run from the prelude do not"
			" agree:\n%s", x->text);
		return -EIO;
	}
	return ret;
}

/*
 * Run @q and file its state: SEQ_NEW, SEQ_SEEN (*rep: the sequence that
 * met the state first), SEQ_FOUND or a negative errno.  @parent: the
 * sequence @q extends by one operation, NULL for the root.
 */
static int run_sequence(struct explorer *x, const struct seq *q,
			const struct seq *parent, const struct seq **rep)
{
	int ret;

	x->r->sequences++;
	x->ordinal++;
	if (x->fast && parent) {
		ret = fast_materialize(x, parent);
		if (!ret)
			ret = run_both_fast(x, q);
	} else {
		ret = run_both(x, q);
	}
	if (ret)
		return ret;
	ret = key_set_add(&x->seen, state_key(x, q), q, rep);
	return ret < 0 ? ret : ret ? SEQ_NEW : SEQ_SEEN;
}

/* ---- checking the pruning itself ---------------------------------------- */

/*
 * The last operation's result and the final snapshot of @a and @b agree,
 * process names aside (the same state may be reached with other names).
 */
static bool same_outcome(const struct record *a, const struct record *b)
{
	const struct rec_stmt *x, *y;
	unsigned long i;

	if (a->nr_stmts < 2 || b->nr_stmts < 2)
		return false;
	x = &a->stmts[a->nr_stmts - 2];
	y = &b->stmts[b->nr_stmts - 2];
	if (x->result != y->result || x->faults != y->faults ||
	    x->child_faults != y->child_faults ||
	    (x->errname && strcmp(x->errname, y->errname ? y->errname : "")) ||
	    x->has_data != y->has_data || x->data_len != y->data_len ||
	    (x->data_len && memcmp(x->data, y->data, x->data_len)))
		return false;
	x = &a->stmts[a->nr_stmts - 1];
	y = &b->stmts[b->nr_stmts - 1];
	if (x->nr_pages != y->nr_pages)
		return false;
	for (i = 0; i < x->nr_pages; i++) {
		const struct rec_page *p = &x->pages[i], *q = &y->pages[i];

		if (strcmp(record_name(a, p->region), record_name(b, q->region)) ||
		    p->off != q->off || p->present != q->present ||
		    p->size != q->size || p->index != q->index ||
		    p->frame != q->frame || p->data != q->data)
			return false;
	}
	return true;
}

/* Run @q; its key in *key and the reference side's record in *rec. */
static int run_for_verify(struct explorer *x, const struct seq *q,
			  struct explore_digest *key, struct record **rec)
{
	int ret = run_both(x, q);

	*rec = NULL;
	if (ret)
		return ret;
	*key = state_key(x, q);
	*rec = record_parse("verify", x->runs[0].record, x->runs[0].record_len,
			    SCN_DEFAULT_PAGE_SIZE, NULL);
	return *rec ? 0 : -EINVAL;
}

/*
 * --verify-pruning: @pruned reached the state @rep reached first, so
 * every continuation must do the same after both.  Try every single
 * operation after each: the same key, the same result, the same
 * snapshot.  A failure means the state key misses something that
 * matters, and the search would have hidden sequences.
 */
static int verify_pruned(struct explorer *x, const struct seq *pruned,
			 const struct seq *rep)
{
	char text[2][sizeof(x->text)];
	int op, ret = 0;

	for (op = 0; op < alphabet_ops(&x->ab) && !ret; op++) {
		struct explore_digest key[2];
		struct record *rec[2] = { NULL, NULL };
		struct seq q[2];
		int i;

		if (!op_valid(&x->ab, &pruned->ss, op))
			continue;
		for (i = 0; i < 2 && !ret; i++) {
			ret = seq_extend(&x->ab, i ? pruned : rep, op, &q[i]);
			if (!ret)
				ret = run_for_verify(x, &q[i], &key[i], &rec[i]);
			memcpy(text[i], x->text, sizeof(text[i]));
		}
		x->r->verified++;
		if (!ret && (!key_equal(&key[0], &key[1]) ||
			     !same_outcome(rec[0], rec[1]))) {
			fprintf(x->out, "explore: pruning is unsound: these two"
				" sequences left states with equal keys, but"
				" one more operation tells them apart (%s)\n"
				"--- first\n%s--- second\n%s--- end\n",
				key_equal(&key[0], &key[1]) ? "its outcome" :
				"the keys after it", text[0], text[1]);
			ret = SEQ_FOUND;
		}
		record_free(rec[0]);
		record_free(rec[1]);
	}
	return ret;
}

/* ---- the search ------------------------------------------------------- */

/*
 * PTEBATCH_EXPLORE_REPLAY=1: the old path, every sequence replayed from
 * the prelude on a machine of its own (the reference the tests compare
 * the fast path with).
 */
static bool explore_replay_forced(void)
{
	const char *replay = getenv("PTEBATCH_EXPLORE_REPLAY");

	return replay && *replay && strcmp(replay, "0");
}

static bool sharded(const struct explore_options *o)
{
	return o->nr_shards > 1;
}

/*
 * Is the @leaf'th sequence of the last depth (counted from 0 in the order
 * of the search) this shard's to run?
 *
 * Why N shards together find exactly what one whole run finds: every
 * shard runs the depths before the last in full, so it meets the same
 * states in the same order, prunes the same sequences and builds the
 * same last frontier as the whole run - no pruning decision depends on
 * what another shard ran.  The last depth extends that frontier by every
 * valid operation, as the whole run does, and runs and compares every
 * such sequence, pruned or not (nothing follows it), so pruning there
 * changes only the counts, never which sequences run.  Its sequences,
 * numbered in order, are dealt out modulo N: each is run by exactly one
 * shard, under the same two variants, from the same prelude, and the
 * model is deterministic, so each finds in it what the whole run would.
 * A finding before the last depth is found by every shard.  The whole
 * run stops at its first finding; the shard that holds that sequence
 * ran before it only sequences the whole run ran and found clean, so it
 * reports the same sequence under the same number (x->ordinal), and
 * every other shard's finding has a larger number.  The
 * price is the depths before the last, run N times: small, as the last
 * depth is about ten times the rest.
 */
static bool leaf_in_shard(const struct explore_options *o, unsigned long leaf)
{
	return !sharded(o) || leaf % o->nr_shards == o->shard - 1;
}

static void show_progress(struct explorer *x, int depth, size_t done,
			  size_t total)
{
	if (!x->progress)
		return;
	double s = elapsed(x);

	fprintf(x->progress, "\rdepth %d: %zu/%zu prefixes, %lu sequences,"
		" %lu states, %.0f s, %.0f sequences/s ", depth, done, total,
		x->r->sequences, x->r->states, s,
		s > 0 ? (double)x->r->sequences / s : 0.0);
	fflush(x->progress);
}

static void clear_progress(struct explorer *x)
{
	if (x->progress) {
		fprintf(x->progress, "\r%96s\r", "");
		fflush(x->progress);
	}
}

/*
 * Extend every sequence of @frontier by every valid operation; the new
 * states go to @next (when there is a next depth).  Returns 0,
 * EXPLORE_FOUND or a negative errno.
 */
static int explore_level(struct explorer *x, int depth, const struct seq *frontier,
			 size_t nr, struct seq **next, size_t *nr_next)
{
	size_t i, cap = 0;
	unsigned long seq0 = x->r->sequences, states0 = x->r->states;
	unsigned long pruned0 = x->r->pruned;
	int op, ret;

	*next = NULL;
	*nr_next = 0;
	for (i = 0; i < nr; i++) {
		if (x->o->max_seconds > 0 && elapsed(x) > x->o->max_seconds) {
			x->r->stopped = true;
			break;
		}
		if ((i & 63) == 0)
			show_progress(x, depth, i, nr);
		for (op = 0; op < alphabet_ops(&x->ab); op++) {
			const struct seq *rep;
			struct seq q;

			if (!op_valid(&x->ab, &frontier[i].ss, op))
				continue;
			if (depth == x->o->depth &&
			    !leaf_in_shard(x->o, x->r->last_total++)) {
				x->ordinal++;	/* another shard's */
				continue;
			}
			if (depth == x->o->depth)
				x->r->last_run++;
			ret = seq_extend(&x->ab, &frontier[i], op, &q);
			if (!ret)
				ret = run_sequence(x, &q, &frontier[i], &rep);
			if (ret == SEQ_SEEN && x->o->verify_pruning &&
			    depth < x->o->depth) {
				x->r->pruned++;
				ret = verify_pruned(x, &q, rep);
				if (!ret)
					continue;
			}
			if (ret < 0 || ret == SEQ_FOUND) {
				free(*next);
				*next = NULL;
				return ret < 0 ? ret : EXPLORE_FOUND;
			}
			if (ret == SEQ_SEEN) {
				x->r->pruned++;
				continue;
			}
			x->r->states++;
			if (depth == x->o->depth)
				continue;
			if (*nr_next == cap) {
				struct seq *bigger;

				cap = cap ? 2 * cap : 1024;
				bigger = realloc(*next, cap * sizeof(**next));
				if (!bigger) {
					free(*next);
					*next = NULL;
					return -ENOMEM;
				}
				*next = bigger;
			}
			(*next)[(*nr_next)++] = q;
		}
	}
	clear_progress(x);
	if (x->o->levels) {
		fprintf(x->out, "depth %d: %lu sequences", depth,
			x->r->sequences - seq0);
		if (sharded(x->o) && depth == x->o->depth)
			fprintf(x->out, " (of %lu, shard %u/%u)",
				x->r->last_total, x->o->shard, x->o->nr_shards);
		fprintf(x->out, ", %lu new states, %lu pruned, %.1f s%s\n",
			x->r->states - states0, x->r->pruned - pruned0,
			elapsed(x),
			x->r->stopped ? " (stopped: --max-seconds)" : "");
	}
	/* A long run shows each depth as it ends, also into a file. */
	fflush(x->out);
	return 0;
}

int explore(const struct explore_options *o, struct explore_result *r,
	    FILE *out, FILE *progress)
{
	struct explorer x = {
		.o = o, .r = r, .out = out,
		.progress = o->progress ? progress : NULL,
	};
	struct seq root = { .len = 0, .ss = initial_state };
	const struct seq *rep;
	struct seq *frontier, *next = NULL;
	size_t nr, nr_next = 0;
	int depth, i, ret = -ENOMEM;
	bool shared;

	memset(r, 0, sizeof(*r));
	if (o->depth < 1 || o->depth > EXPLORE_MAX_DEPTH ||
	    o->nr_shards > EXPLORE_MAX_SHARDS ||
	    (sharded(o) && (o->shard < 1 || o->shard > o->nr_shards)))
		return -EINVAL;
	/* The layout scales with the page size; region C is one 2M THP. */
	if (o->thp && pb_pmd_size() != (2UL << 20)) {
		fprintf(out, "explore: --thp maps one 2M PMD THP; this build's PMD"
			" is %luM\n", pb_pmd_size() >> 20);
		return -EOPNOTSUPP;
	}
	clock_gettime(CLOCK_MONOTONIC, &x.start);
	alphabet_init(&x.ab, o->thp);
	shared = !explore_replay_forced();
	/* A prefix restored from a checkpoint is not checked again. */
	x.fast = shared && !o->check_all;
	for (i = 0; i < 2; i++) {
		x.sides[i] = side_create(side_of(&x, i), o->memory_bytes,
					 shared);
		if (!x.sides[i])
			goto out;
	}

	/* The prelude alone: the state everything starts from. */
	ret = run_sequence(&x, &root, NULL, &rep);
	if (ret < 0)
		goto out;
	if (ret == SEQ_FOUND) {
		ret = EXPLORE_FOUND;
		goto out;
	}
	if (x.fast) {
		ret = fast_setup(&x);
		if (ret)
			goto out;
	}
	r->states = 1;
	frontier = malloc(sizeof(*frontier));
	if (!frontier) {
		ret = -ENOMEM;
		goto out;
	}
	frontier[0] = root;
	nr = 1;
	ret = 0;
	for (depth = 1; depth <= o->depth && nr; depth++) {
		ret = explore_level(&x, depth, frontier, nr, &next, &nr_next);
		free(frontier);
		frontier = next;
		nr = nr_next;
		if (ret || r->stopped)
			break;
		r->depth_done = depth;
	}
	free(frontier);
	/* No new state left to extend: every longer sequence is covered. */
	if (!ret && !r->stopped && r->depth_done < o->depth)
		r->depth_done = o->depth;
out:
	clear_progress(&x);
	r->seconds = elapsed(&x);
	for (i = 0; i < 2; i++) {
		side_destroy(x.sides[i]);
		side_run_free(&x.runs[i]);
		part_stream_close(&x.part_out[i]);
		part_stream_close(&x.part_err[i]);
	}
	free(x.explain);
	key_set_free(&x.seen);
	scenario_free(x.root_scn);
	return ret;
}
