/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * live.h - which processes of a scenario are alive and which handles each
 * holds, and the rules statements must keep: the acting process is alive;
 * register and vmsplice take a free handle; only its holder releases it,
 * the way it was taken (unregister what register took, drain what
 * vmsplice took); nobody exits or execs holding one, which would leave
 * it with nobody to release it.  The parser refuses a statement that
 * breaks them; the generator (`diff --random`) and explore write only
 * statements that keep them, from the same picture.
 *
 * The picture lives in its user's arrays (struct scn_live points at
 * them), sized as that user needs: the parser by the language's bounds,
 * the generator by its own, explore by a sequence's, one per sequence.
 */
#ifndef SCENARIO_LIVE_H
#define SCENARIO_LIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "scenario/scenario.h"

/* How a handle was taken, and so which statement releases it. */
enum scn_take { SCN_TAKE_REGISTER, SCN_TAKE_VMSPLICE };

/* One handle: free (never taken, or released), or held. */
struct scn_hold {
	uint8_t holder;		/* process id, while held */
	uint8_t take;		/* enum scn_take, while held */
	bool held;
};

_Static_assert(SCN_MAX_PROCS <= 256, "scn_hold.holder is 8 bits");

/* Why a statement may not run now; 0 (SCN_LIVE_OK) when it may. */
enum scn_refusal {
	SCN_LIVE_OK,
	SCN_LIVE_EXITED,	/* the acting process has exited */
	SCN_LIVE_HELD,		/* register, vmsplice: the handle is held */
	SCN_LIVE_NOT_HELD,	/* unregister, drain: it is not (released) */
	SCN_LIVE_TAKEN_OTHERWISE, /* it was taken the other way */
	SCN_LIVE_OTHER_HOLDER,	/* another process holds it */
	SCN_LIVE_HOLDING,	/* exit, exec: the process holds a handle */
};

struct scn_live {
	uint64_t *alive;	/* bit p of word p / 64: process p is alive */
	int max_procs;		/* the bits alive has */
	struct scn_hold *hold;	/* [max_handles], by handle id */
	int max_handles;
};

/* Process @proc starts alive: P0, or the child of a fork or spawn. */
void scn_live_start(struct scn_live *l, int proc);
bool scn_live_alive(const struct scn_live *l, int proc);
int scn_live_nr_alive(const struct scn_live *l);
/* The @n-th live process, the oldest first (ids go by age); -1: none. */
int scn_live_nth_alive(const struct scn_live *l, int n);
/* SCN_LIVE_EXITED if @proc may not act. */
enum scn_refusal scn_live_act(const struct scn_live *l, int proc);

/* A handle @proc holds (the lowest id), -1 if none. */
int scn_live_holding(const struct scn_live *l, int proc);
/* A handle @proc holds, taken @take (the lowest id), -1 if none. */
int scn_live_held_by(const struct scn_live *l, int proc, enum scn_take take);

/*
 * Each check says whether the statement may run; each change checks
 * first and changes nothing if it may not.
 */
/* exit or exec: @proc holds no handle.  An exit then ends @proc. */
enum scn_refusal scn_live_check_leave(const struct scn_live *l, int proc);
enum scn_refusal scn_live_exit(struct scn_live *l, int proc);
/* register or vmsplice (@take) of handle @h: it is free; then @proc's. */
enum scn_refusal scn_live_check_take(const struct scn_live *l, int h);
enum scn_refusal scn_live_take(struct scn_live *l, int h, int proc,
			       enum scn_take take);
/* unregister or drain: @proc holds @h, taken @take; then it is free. */
enum scn_refusal scn_live_check_release(const struct scn_live *l, int h,
					int proc, enum scn_take take);
enum scn_refusal scn_live_release(struct scn_live *l, int h, int proc,
				  enum scn_take take);

#endif /* SCENARIO_LIVE_H */
