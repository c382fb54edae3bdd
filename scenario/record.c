// SPDX-License-Identifier: GPL-2.0-only
/*
 * record.c - printing the record of a run.
 *
 * Choices the format leaves open (docs/SCENARIO.md says what they
 * became), fixed here so that both backends and `ptebatch diff` agree on
 * them:
 *
 * - A failed statement prints "error ENAME" only: no fault count, no child,
 *   no data.  Stats lines still follow it when asked for.
 * - drain with nothing read prints "data -".
 * - Snapshot sizes use the largest unit that divides them exactly (4K,
 *   64K, 2M, 1G), plain bytes if none does.
 * - Runs are found greedily from the first page: the second page decides
 *   whether the run counts (index and frame +1) or repeats (same index and
 *   frame, e.g. the shared zero page); the run goes on while every further
 *   page, of the same process and region and at the next offset, keeps that
 *   pattern with the same size and data.  A run of one has no count.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/record.h"
#include "scenario/u64map.h"

void record_header(FILE *out, const struct backend *b)
{
	fprintf(out, "# backend %s variant %s arch %s%s\n", b->ops->name,
		b->variant ? b->variant : "-", b->arch ? b->arch : "-",
		b->no_zero_page ? " zero-page no" : "");
}

void record_time_method(FILE *out, const struct backend *b, int reps)
{
	fprintf(out, "# time: microseconds, the median of %d run%s of the"
		" whole scenario on backend %s, each statement's own work timed"
		" where it ran; ~: faults not the same in every run (this"
		" run's shown)\n", reps, reps == 1 ? "" : "s", b->ops->name);
}

void record_setting(FILE *out, const struct stmt *st)
{
	fprintf(out, "%d %s\n", st->number, st->text);
}

/* The C library's name of every errno Linux has (glibc 2.32 and later). */
const char *record_errno_name(int err, char *buf, size_t size)
{
	const char *name = strerrorname_np(err);

	if (name)
		return name;
	snprintf(buf, size, "E%d", err);
	return buf;
}

void record_data(FILE *out, const uint8_t *data, unsigned long len)
{
	unsigned long i, run;

	if (!len) {
		fputc('-', out);
		return;
	}
	for (i = 0; i < len; i += run) {
		for (run = 1; i + run < len && data[i + run] == data[i]; run++)
			;
		fprintf(out, "%s0x%02x", i ? " " : "", data[i]);
		if (run > 1)
			fprintf(out, "*%lu", run);
	}
}

static void record_stats(FILE *out, const struct stmt_result *res)
{
	int i;

	for (i = 0; i < PB_NR_STATS; i++)
		if (res->stats[i])
			fprintf(out, "  stat %s %" PRIu64 "\n",
				pb_stat_name(i), res->stats[i]);
}

static const char *const kstat_names[NR_KSTAT_GLOBAL] = {
	[KSTAT_PGFAULT] = "pgfault",
	[KSTAT_THP_FAULT_ALLOC] = "thp_fault_alloc",
	[KSTAT_THP_FAULT_FALLBACK] = "thp_fault_fallback",
	[KSTAT_THP_SPLIT_PMD] = "thp_split_pmd",
	[KSTAT_PIN_ACQUIRED] = "nr_foll_pin_acquired",
	[KSTAT_PIN_RELEASED] = "nr_foll_pin_released",
};

static const char *const kstat_mthp_names[NR_KSTAT_MTHP] = {
	[KSTAT_MTHP_ANON_FAULT_ALLOC] = "anon_fault_alloc",
	[KSTAT_MTHP_ANON_FAULT_FALLBACK] = "anon_fault_fallback",
	[KSTAT_MTHP_SPLIT] = "split",
};

const char *kstat_name(enum kstat_item item)
{
	return (unsigned)item < NR_KSTAT_GLOBAL ? kstat_names[item] : "?";
}

void kstat_mthp_name(char *buf, size_t size, enum kstat_mthp_item item,
		     int order, unsigned long page_size)
{
	snprintf(buf, size, "hugepages-%lukB/%s", (page_size << order) >> 10,
		 (unsigned)item < NR_KSTAT_MTHP ? kstat_mthp_names[item] : "?");
}

static void record_kstats(FILE *out, const struct scenario *s,
			  const struct kstats *ks)
{
	char name[64];
	int i, order;

	for (i = 0; i < NR_KSTAT_GLOBAL; i++)
		if (ks->global[i])
			fprintf(out, "  kstat %s %" PRIu64 "\n", kstat_name(i),
				ks->global[i]);
	for (order = 0; order < KSTAT_ORDERS; order++) {
		for (i = 0; i < NR_KSTAT_MTHP; i++) {
			if (!ks->mthp[order][i])
				continue;
			kstat_mthp_name(name, sizeof(name), i, order,
					s->page_size);
			fprintf(out, "  kstat %s %" PRIu64 "\n", name,
				ks->mthp[order][i]);
		}
	}
}

/* A time labelled "...insns" counts instructions: written whole. */
static bool record_label_insns(const char *label)
{
	size_t n = strlen(label);

	return n >= 5 && !strcmp(label + n - 5, "insns");
}

void record_result(FILE *out, const struct scenario *s, const struct stmt *st,
		   const struct stmt_result *res, bool with_stats,
		   bool with_kstats, const struct record_time *time)
{
	const char *vary = time && time->faults_vary ? "~" : "";
	char buf[16];

	fprintf(out, "%d %s: ", st->number, st->text);
	if (res->err) {
		fprintf(out, "error %s",
			record_errno_name(res->err, buf, sizeof(buf)));
	} else {
		fprintf(out, "faults %lu%s", res->faults, vary);
		if (st->kind == ST_FORK || st->kind == ST_SPAWN)
			fprintf(out, " (%s %lu%s)", s->proc_names[st->child],
				res->child_faults, vary);
		/*
		 * Instructions are whole: us * 1000 of the clock's ns
		 * ("insns", a guest's; "predicted-insns", a prediction's).
		 */
		if (time && time->label && record_label_insns(time->label))
			fprintf(out, " %s %.0f", time->label, time->us * 1000);
		else if (time)
			fprintf(out, " %s %.2f",
				time->label ? time->label : "time", time->us);
		if (st->kind == ST_DRAIN) {
			fputs(" data ", out);
			record_data(out, res->data, res->data_len);
		}
	}
	fputc('\n', out);
	if (with_stats && res->has_stats)
		record_stats(out, res);
	if (with_kstats && res->has_kstats)
		record_kstats(out, s, &res->kstats);
	for (int i = 0; i < res->nr_fcounts; i++)
		fprintf(out, "  count %s %" PRIu64 "\n", res->fcount_names[i],
			res->fcounts[i]);
	if (res->note[0])
		fprintf(out, "# note: %.*s\n", (int)sizeof(res->note),
			res->note);
}

/* ---- canonical frames ------------------------------------------------- */

int snapshot_canonicalize(struct snapshot *snap)
{
	struct u64map map = { 0 };
	uint64_t next = 1, *canon;
	unsigned long i;

	/* Sized once: no frame is added to a map that must grow. */
	if (u64map_reserve(&map, snap->nr))
		return -ENOMEM;
	for (i = 0; i < snap->nr; i++) {
		struct snap_page *pg = &snap->pages[i];

		if (!pg->present) {
			pg->frame = 0;
			continue;
		}
		canon = u64map_at(&map, pg->frame);
		if (!canon) {
			u64map_free(&map);
			return -ENOMEM;
		}
		if (!*canon)
			*canon = next++;
		pg->frame = *canon;
	}
	u64map_free(&map);
	return 0;
}

/* ---- page lines ------------------------------------------------------- */

enum run_kind {
	RUN_SINGLE,
	RUN_ABSENT,
	RUN_COUNTING,	/* index and frame +1 per page */
	RUN_REPEATING,	/* same index and frame: one page mapped many times */
};

/* @b is the page right after @a in the same region of the same process. */
static bool page_follows(const struct snap_page *a, const struct snap_page *b,
			 unsigned long page_size)
{
	return a->proc == b->proc && a->region == b->region &&
	       b->off == a->off + page_size;
}

/* Does @b continue a run of @kind whose last page is @a? */
static bool run_continues(enum run_kind kind, const struct snap_page *a,
			  const struct snap_page *b, unsigned long page_size)
{
	if (!page_follows(a, b, page_size))
		return false;
	if (kind == RUN_ABSENT)
		return !a->present && !b->present;
	if (!a->present || !b->present || a->folio_size != b->folio_size ||
	    a->data != b->data)
		return false;
	if (kind == RUN_COUNTING)
		return b->index == a->index + 1 && b->frame == a->frame + 1;
	return b->index == a->index && b->frame == a->frame;
}

/* The kind and length of the run that starts at @pg. */
static unsigned long find_run(const struct snap_page *pg, unsigned long nr,
			      unsigned long page_size, enum run_kind *kind)
{
	unsigned long len;

	if (!pg->present)
		*kind = RUN_ABSENT;
	else if (nr > 1 && run_continues(RUN_COUNTING, pg, pg + 1, page_size))
		*kind = RUN_COUNTING;
	else if (nr > 1 && run_continues(RUN_REPEATING, pg, pg + 1, page_size))
		*kind = RUN_REPEATING;
	else
		*kind = RUN_SINGLE;
	if (*kind == RUN_SINGLE)
		return 1;
	for (len = 1; len < nr; len++)
		if (!run_continues(*kind, &pg[len - 1], &pg[len], page_size))
			break;
	return len;
}

unsigned long record_run_length(const struct snap_page *pg, unsigned long nr,
				unsigned long page_size)
{
	enum run_kind kind;

	return find_run(pg, nr, page_size, &kind);
}

/* A folio size in the largest unit that divides it: 4K, 64K, 2M, 1G. */
const char *record_size_text(char *buf, size_t size, unsigned long bytes)
{
	static const struct {
		unsigned int shift;
		char unit;
	} units[] = { { 30, 'G' }, { 20, 'M' }, { 10, 'K' } };
	size_t i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (bytes && bytes % (1UL << units[i].shift) == 0) {
			snprintf(buf, size, "%lu%c", bytes >> units[i].shift,
				 units[i].unit);
			return buf;
		}
	}
	snprintf(buf, size, "%lu", bytes);
	return buf;
}

static void print_run(FILE *out, const struct scenario *s,
		      const struct snap_page *pg, unsigned long len,
		      enum run_kind kind)
{
	const struct snap_page *last = pg + len - 1;
	char sz[32];

	fprintf(out, "%s %s 0x%07lx ", s->proc_names[pg->proc],
		s->regions[pg->region].name, pg->off);
	if (kind == RUN_ABSENT) {
		fputs("absent", out);
	} else {
		fputs("present size ", out);
		fputs(record_size_text(sz, sizeof(sz), pg->folio_size), out);
		if (kind == RUN_COUNTING)
			fprintf(out, " index %lu..%lu frame %" PRIu64 "..%" PRIu64,
				pg->index, last->index, pg->frame, last->frame);
		else
			fprintf(out, " index %lu frame %" PRIu64, pg->index,
				pg->frame);
		fprintf(out, " data 0x%02x", pg->data);
	}
	if (len > 1)
		fprintf(out, " x%lu", len);
	fputc('\n', out);
}

void record_snapshot(FILE *out, const struct scenario *s,
		     const struct snapshot *snap)
{
	enum run_kind kind;
	unsigned long i, len;

	for (i = 0; i < snap->nr; i += len) {
		len = find_run(&snap->pages[i], snap->nr - i, s->page_size,
			       &kind);
		print_run(out, s, &snap->pages[i], len, kind);
	}
}

int record_observe(FILE *out, const struct scenario *s, const struct stmt *st,
		   struct snapshot *snap)
{
	int ret = snapshot_canonicalize(snap);

	if (ret)
		return ret;
	fprintf(out, "%d %s\n", st->number, st->text);
	record_snapshot(out, s, snap);
	return 0;
}
