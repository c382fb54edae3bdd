/*
 * common.c: what the benchmarks share - statistics, rows, JSON, progress,
 * and regions of a folio mode on the model.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench.h"

static const char *const mode_names[NR_FOLIO_MODES] = {
	"4K", "64K", "1M", "2M-PTE", "2M-PMD",
};

const char *folio_mode_name(enum folio_mode m)
{
	return (unsigned)m < NR_FOLIO_MODES ? mode_names[m] : "?";
}

double bench_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct bench_stat bench_stats(double *samples, int n)
{
	struct bench_stat s = { 0, 0, 0, n };

	if (n <= 0)
		return s;
	qsort(samples, (size_t)n, sizeof(*samples), cmp_double);
	s.min_us = samples[0];
	s.max_us = samples[n - 1];
	s.median_us = n % 2 ? samples[n / 2]
			    : (samples[n / 2 - 1] + samples[n / 2]) / 2;
	return s;
}

void bench_row_init(struct bench_row *r)
{
	memset(r, 0, sizeof(*r));
	r->faults = r->folio_ref_atomic = r->pincount_atomic = r->tlb_flush = -1;
}

static void json_counter(FILE *f, const char *name, long long v)
{
	if (v >= 0)
		fprintf(f, ",\"%s\":%lld", name, v);
}

void bench_json_row(const struct bench_opts *o, const struct bench_row *r)
{
	FILE *f = o->json;

	if (!f)
		return;
	fprintf(f, "{\"bench\":\"%s\",\"folio\":\"%s\",\"op\":\"%s\","
		"\"variant\":\"%s\",\"backend\":\"%s\",\"median_us\":%.3f,"
		"\"min_us\":%.3f,\"max_us\":%.3f,\"reps\":%d",
		r->bench, r->folio, r->op, r->variant, r->backend,
		r->t.median_us, r->t.min_us, r->t.max_us, r->t.reps);
	json_counter(f, "faults", r->faults);
	json_counter(f, "folio_ref_atomic", r->folio_ref_atomic);
	json_counter(f, "pincount_atomic", r->pincount_atomic);
	json_counter(f, "tlb_flush", r->tlb_flush);
	if (r->extra_json)
		fputs(r->extra_json, f);
	fputs("}\n", f);
	fflush(f);
}

void bench_progress(const struct bench_opts *o, const char *fmt, ...)
{
	va_list ap;

	if (!o->progress)
		return;
	fputs("\r\033[K", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fflush(stderr);
}

int bench_model_start(unsigned long memory, const struct pb_variant *v)
{
	struct pb_config cfg = { .memory_bytes = memory };
	int err = pb_init(&cfg);

	if (err)
		return err;
	pb_set_variant(v);
	return 0;
}

/* The THP policy of mode @m: only that size enabled, "always". */
static void set_mode_policy(enum folio_mode m)
{
	static const unsigned long sizes[] = {
		16UL << 10, 32UL << 10, 64UL << 10, 128UL << 10,
		256UL << 10, 512UL << 10, 1UL << 20, 2UL << 20,
	};
	unsigned long want = m == FOLIO_64K ? 64UL << 10 :
			     m == FOLIO_1M ? 1UL << 20 :
			     (m == FOLIO_2M_PTE || m == FOLIO_2M_PMD) ? 2UL << 20 : 0;
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		pb_set_thp_policy(sizes[i], sizes[i] == want ? PB_THP_ALWAYS
							     : PB_THP_NEVER);
}

int bench_model_region(struct pb_proc **procp, unsigned long addr,
		       unsigned long size, enum folio_mode m)
{
	unsigned long page = pb_page_size(), a;
	struct pb_proc *p;
	int err;

	set_mode_policy(m);
	err = pb_proc_create(&p);
	if (err)
		return err;
	err = pb_mmap(p, addr, size, PB_PROT_READ | PB_PROT_WRITE);
	if (!err && m == FOLIO_4K)
		err = pb_madvise(p, addr, size, PB_MADV_NOHUGEPAGE);
	for (a = addr; !err && a < addr + size; a += page)
		err = pb_store(p, 0, a, 1);
	if (!err && m == FOLIO_2M_PTE)
		err = pb_split_pmd(p, addr, size);
	if (err) {
		pb_exit(p);
		return err;
	}
	*procp = p;
	return 0;
}

void bench_stats_snapshot(uint64_t out[PB_NR_STATS])
{
	pb_stats_read(out);
}
