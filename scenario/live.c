// SPDX-License-Identifier: GPL-2.0-only
/*
 * live.c - the live processes of a scenario and the handles they hold
 * (live.h).
 */
#include "scenario/live.h"

void scn_live_start(struct scn_live *l, int proc)
{
	l->alive[proc / 64] |= 1ULL << (proc % 64);
}

bool scn_live_alive(const struct scn_live *l, int proc)
{
	return l->alive[proc / 64] & (1ULL << (proc % 64));
}

int scn_live_nr_alive(const struct scn_live *l)
{
	int w, nr = 0;

	for (w = 0; w < (l->max_procs + 63) / 64; w++)
		nr += __builtin_popcountll(l->alive[w]);
	return nr;
}

int scn_live_nth_alive(const struct scn_live *l, int n)
{
	int proc;

	for (proc = 0; proc < l->max_procs; proc++)
		if (scn_live_alive(l, proc) && n-- == 0)
			return proc;
	return -1;
}

enum scn_refusal scn_live_act(const struct scn_live *l, int proc)
{
	return scn_live_alive(l, proc) ? SCN_LIVE_OK : SCN_LIVE_EXITED;
}

int scn_live_holding(const struct scn_live *l, int proc)
{
	int h;

	for (h = 0; h < l->max_handles; h++)
		if (l->hold[h].held && l->hold[h].holder == proc)
			return h;
	return -1;
}

int scn_live_held_by(const struct scn_live *l, int proc, enum scn_take take)
{
	int h;

	for (h = 0; h < l->max_handles; h++)
		if (l->hold[h].held && l->hold[h].holder == proc &&
		    l->hold[h].take == take)
			return h;
	return -1;
}

enum scn_refusal scn_live_check_leave(const struct scn_live *l, int proc)
{
	return scn_live_holding(l, proc) < 0 ? SCN_LIVE_OK : SCN_LIVE_HOLDING;
}

enum scn_refusal scn_live_exit(struct scn_live *l, int proc)
{
	enum scn_refusal why = scn_live_check_leave(l, proc);

	if (!why)
		l->alive[proc / 64] &= ~(1ULL << (proc % 64));
	return why;
}

enum scn_refusal scn_live_check_take(const struct scn_live *l, int h)
{
	return l->hold[h].held ? SCN_LIVE_HELD : SCN_LIVE_OK;
}

enum scn_refusal scn_live_take(struct scn_live *l, int h, int proc,
			       enum scn_take take)
{
	enum scn_refusal why = scn_live_check_take(l, h);

	if (!why) {
		l->hold[h].holder = (uint8_t)proc;
		l->hold[h].take = (uint8_t)take;
		l->hold[h].held = true;
	}
	return why;
}

enum scn_refusal scn_live_check_release(const struct scn_live *l, int h,
					int proc, enum scn_take take)
{
	const struct scn_hold *hold = &l->hold[h];

	if (!hold->held)
		return SCN_LIVE_NOT_HELD;
	if (hold->take != take)
		return SCN_LIVE_TAKEN_OTHERWISE;
	if (hold->holder != proc)
		return SCN_LIVE_OTHER_HOLDER;
	return SCN_LIVE_OK;
}

enum scn_refusal scn_live_release(struct scn_live *l, int h, int proc,
				  enum scn_take take)
{
	enum scn_refusal why = scn_live_check_release(l, h, proc, take);

	if (!why)
		l->hold[h].held = false;
	return why;
}
