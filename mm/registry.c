// SPDX-License-Identifier: GPL-2.0-only
/*
 * registry.c: the model's own bookkeeping, not the kernel's - what the
 * invariant checker (pb_check), explore's state digest and the tests
 * enumerate: every live mm, in creation order, and every outstanding GUP
 * result.  The kernel has no such lists (its mms are found from tasks,
 * its pinned pages only through their refcounts); mm_alloc()/mm_free()
 * and the API's GUP calls keep these up to date.
 */
#include <stdlib.h>

#include "mm/internal.h"

/* ---- live mms ---- */

static pthread_mutex_t mm_registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mm_struct **mm_registry;
static int nr_mm_registry, cap_mm_registry;

void mm_registry_add(struct mm_struct *mm)
{
	pthread_mutex_lock(&mm_registry_lock);
	if (nr_mm_registry == cap_mm_registry) {
		int cap = cap_mm_registry ? 2 * cap_mm_registry : 16;
		struct mm_struct **n = krealloc(mm_registry, cap * sizeof(*n));

		if (!n)
			abort();	/* host out of memory: not a model state */
		mm_registry = n;
		cap_mm_registry = cap;
	}
	mm_registry[nr_mm_registry++] = mm;
	pthread_mutex_unlock(&mm_registry_lock);
}

void mm_registry_del(struct mm_struct *mm)
{
	int i;

	pthread_mutex_lock(&mm_registry_lock);
	for (i = 0; i < nr_mm_registry; i++) {
		if (mm_registry[i] == mm) {
			memmove(&mm_registry[i], &mm_registry[i + 1],
				(nr_mm_registry - i - 1) * sizeof(*mm_registry));
			nr_mm_registry--;
			break;
		}
	}
	if (!nr_mm_registry) {
		kfree(mm_registry);
		mm_registry = NULL;
		cap_mm_registry = 0;
	}
	pthread_mutex_unlock(&mm_registry_lock);
}

void mm_registry_for_each(void (*fn)(struct mm_struct *mm, void *arg),
			  void *arg)
{
	int i;

	pthread_mutex_lock(&mm_registry_lock);
	for (i = 0; i < nr_mm_registry; i++)
		fn(mm_registry[i], arg);
	pthread_mutex_unlock(&mm_registry_lock);
}

/* ---- outstanding GUP results ---- */

/* So that the checker can account for their references. */
static pthread_mutex_t gup_track_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gup_pages **tracked;
static unsigned long nr_tracked, cap_tracked;

void gup_track(struct gup_pages *gp)
{
	pthread_mutex_lock(&gup_track_lock);
	if (nr_tracked == cap_tracked) {
		unsigned long cap = cap_tracked ? 2 * cap_tracked : 16;
		struct gup_pages **n = krealloc(tracked, cap * sizeof(*n));

		if (!n)
			abort();	/* host out of memory */
		tracked = n;
		cap_tracked = cap;
	}
	tracked[nr_tracked++] = gp;
	pthread_mutex_unlock(&gup_track_lock);
}

void gup_untrack(struct gup_pages *gp)
{
	unsigned long i;

	pthread_mutex_lock(&gup_track_lock);
	for (i = 0; i < nr_tracked; i++) {
		if (tracked[i] == gp) {
			tracked[i] = tracked[--nr_tracked];
			break;
		}
	}
	if (!nr_tracked) {
		kfree(tracked);
		tracked = NULL;
		cap_tracked = 0;
	}
	pthread_mutex_unlock(&gup_track_lock);
}

void gup_for_each_tracked(void (*fn)(struct gup_pages *gp, void *arg),
			  void *arg)
{
	unsigned long i;

	pthread_mutex_lock(&gup_track_lock);
	for (i = 0; i < nr_tracked; i++)
		fn(tracked[i], arg);
	pthread_mutex_unlock(&gup_track_lock);
}

/* ---- checkpoints (checkpoint.c): the lists, kept in the arena ---- */

void registry_save(struct registry_state *st)
{
	st->mm_registry = mm_registry;
	st->nr_mm_registry = nr_mm_registry;
	st->cap_mm_registry = cap_mm_registry;
	st->tracked = tracked;
	st->nr_tracked = nr_tracked;
	st->cap_tracked = cap_tracked;
}

void registry_restore(const struct registry_state *st)
{
	mm_registry = st->mm_registry;
	nr_mm_registry = st->nr_mm_registry;
	cap_mm_registry = st->cap_mm_registry;
	tracked = st->tracked;
	nr_tracked = st->nr_tracked;
	cap_tracked = st->cap_tracked;
}
