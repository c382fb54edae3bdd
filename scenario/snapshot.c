// SPDX-License-Identifier: GPL-2.0-only
/*
 * snapshot.c - the containers a backend fills for the runner: snapshots
 * and statement results.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/backend.h"

int snapshot_add(struct snapshot *snap, const struct snap_page *page)
{
	if (snap->nr == snap->cap) {
		unsigned long cap = snap->cap ? snap->cap * 2 : 1024;
		struct snap_page *pages;

		if (cap < snap->cap || cap > SIZE_MAX / sizeof(*pages))
			return -ENOMEM;
		pages = realloc(snap->pages, cap * sizeof(*pages));
		if (!pages)
			return -ENOMEM;
		snap->pages = pages;
		snap->cap = cap;
	}
	snap->pages[snap->nr++] = *page;
	return 0;
}

void snapshot_clear(struct snapshot *snap)
{
	snap->nr = 0;
}

void snapshot_free(struct snapshot *snap)
{
	free(snap->pages);
	memset(snap, 0, sizeof(*snap));
}

void stmt_result_reset(struct stmt_result *res)
{
	free(res->data);
	memset(res, 0, sizeof(*res));
}
