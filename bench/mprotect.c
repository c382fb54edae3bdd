/*
 * mprotect.c: seed 004 - a region made read-only then read-write 40 times,
 * per folio mode, on the model per-PTE (mprotect_batch=0) against batched
 * (mprotect_batch=1) in one run, and with real mprotect() on this kernel.
 *
 * One sample is the whole loop: iters x (mprotect(PROT_READ) +
 * mprotect(PROT_READ|PROT_WRITE)) over the region, every page already
 * faulted in.  After the loop every page is written once more: the final
 * RW must have left the PTEs writable (can_change_pte_writable), so that
 * rewrite must take no fault.
 *
 * The kernel column maps the region in the mode's folios (THP sysfs set
 * for the mode and restored on every path), checks a sample of them
 * through /proc/self/pagemap, /proc/kpageflags and smaps, and SKIPs the
 * column with the reason when the kernel did not give those folios.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/kernel-page-flags.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "backend/thp_sysfs.h"
#include "bench/bench.h"

#define MP_DEFAULT_SIZE		(256UL << 20)
#define MP_DEFAULT_REPS		5
#define MP_DEFAULT_ITERS	40
#define MP_QUICK_SIZE		(8UL << 20)
#define MP_QUICK_REPS		2
#define MP_QUICK_ITERS		4

/* Folios checked per kernel region: spread evenly over it. */
#define MP_VERIFY_SAMPLES	64

#define PM_PRESENT	(1ULL << 63)
#define PM_PFN_MASK	((1ULL << 55) - 1)
#define KPF(bit)	(1ULL << (bit))

static const enum folio_mode mp_modes[] = {
	FOLIO_4K, FOLIO_64K, FOLIO_2M_PTE, FOLIO_2M_PMD,
};
#define MP_NR_MODES (sizeof(mp_modes) / sizeof(mp_modes[0]))

struct mp_plan {
	unsigned long size;
	int reps, iters;
};

/* One column of one row. */
struct mp_result {
	bool ran;			/* false: skipped, see why */
	bool failed;			/* a check failed, see why */
	char why[160];
	struct bench_stat t;
	/* Model counters of one sample (the first timed one). */
	uint64_t pte_read, pte_write, tlb_flush;
	long long rewrite_faults;	/* faults of the rewrite after the loop */
};

static unsigned long mode_folio_bytes(enum folio_mode m)
{
	switch (m) {
	case FOLIO_64K:
		return 64UL << 10;
	case FOLIO_1M:
		return 1UL << 20;
	case FOLIO_2M_PTE:
	case FOLIO_2M_PMD:
		return 2UL << 20;
	default:
		return 0;	/* order 0: the base page */
	}
}

/* ---- model -------------------------------------------------------------- */

static int model_loop(struct pb_proc *p, unsigned long addr,
		      unsigned long size, int iters)
{
	int i, err = 0;

	for (i = 0; !err && i < iters; i++) {
		err = pb_mprotect(p, addr, size, PB_PROT_READ);
		if (!err)
			err = pb_mprotect(p, addr, size,
					  PB_PROT_READ | PB_PROT_WRITE);
	}
	return err;
}

/* Write every page; *@faults = the faults that took. */
static int model_rewrite(struct pb_proc *p, unsigned long addr,
			 unsigned long size, long long *faults)
{
	unsigned long page = pb_page_size(), before = pb_proc_faults(p), a;
	int err = 0;

	for (a = addr; !err && a < addr + size; a += page)
		err = pb_store(p, 0, a, 2);
	*faults = (long long)(pb_proc_faults(p) - before);
	return err;
}

/*
 * Both model columns of mode @m on one region: the per-PTE and batched
 * samples interleave (ABBA...), switching only mprotect_batch between them,
 * so that warm-up and drift fall on both alike.  res[0] per-PTE, res[1]
 * batched.
 */
static void model_run(const struct mp_plan *pl, enum folio_mode m,
		      struct mp_result res[2])
{
	/* Room for the region, its page tables and the allocator's slack. */
	unsigned long memory = (pl->size + pl->size / 4 + (64UL << 20)) &
			       ~((2UL << 20) - 1);
	unsigned long addr = BENCH_MODEL_ADDR;
	uint64_t s0[PB_NR_STATS], s1[PB_NR_STATS];
	struct pb_variant v[2];
	long long faults = -1;
	struct pb_proc *p;
	double *samples;
	int err, r, b;

	memset(res, 0, 2 * sizeof(*res));
	samples = calloc(2 * (size_t)pl->reps, sizeof(*samples));
	if (!samples) {
		err = -ENOMEM;
		goto out;
	}
	err = pb_variant_preset("upstream", &v[0]);
	if (err)
		goto out;
	v[1] = v[0];
	v[0].mprotect_batch = false;
	v[1].mprotect_batch = true;
	err = bench_model_start(memory, &v[0]);
	if (err)
		goto out;
	err = bench_model_region(&p, addr, pl->size, m);
	if (err)
		goto out_fini;

	/* One untimed round trip each, so that no first sample is colder. */
	for (b = 0; !err && b < 2; b++) {
		pb_set_variant(&v[b]);
		err = model_loop(p, addr, pl->size, 1);
	}
	for (r = 0; !err && r < 2 * pl->reps; r++) {
		/* ABBA ABBA ...: per-PTE and batched each go first half the time. */
		double t0;

		b = (r ^ (r >> 1)) & 1;
		pb_set_variant(&v[b]);
		bench_stats_snapshot(s0);
		t0 = bench_now_us();
		err = model_loop(p, addr, pl->size, pl->iters);
		samples[b * pl->reps + r / 2] = bench_now_us() - t0;
		if (r < 2) {
			bench_stats_snapshot(s1);
			res[b].pte_read = s1[PB_STAT_pte_read] - s0[PB_STAT_pte_read];
			res[b].pte_write = s1[PB_STAT_pte_write] - s0[PB_STAT_pte_write];
			res[b].tlb_flush = s1[PB_STAT_tlb_flush] - s0[PB_STAT_tlb_flush];
		}
	}
	/* Each variant's last loop ended RW; the very last one is checked. */
	if (!err)
		err = model_rewrite(p, addr, pl->size, &faults);
	pb_exit(p);
out_fini:
	pb_fini();
out:
	for (b = 0; b < 2; b++) {
		res[b].rewrite_faults = faults;
		if (err) {
			res[b].failed = true;
			snprintf(res[b].why, sizeof(res[b].why), "model: %s",
				 strerror(-err));
			continue;
		}
		res[b].ran = true;
		res[b].t = bench_stats(samples + b * pl->reps, pl->reps);
		if (faults) {
			res[b].failed = true;
			snprintf(res[b].why, sizeof(res[b].why),
				 "rewrite after the loop took %lld faults, want 0",
				 faults);
		}
	}
	free(samples);
}

/* ---- kernel ------------------------------------------------------------- */

struct kregion {
	char *base;		/* the 2M-aligned region */
	void *map;		/* what mmap returned */
	size_t map_len;
	long page;
};

/* The THP settings of mode @m: only its size "always", the rest "never". */
static void mode_mthp(enum folio_mode m, enum scn_policy mthp[SCN_NR_MTHP_SIZES])
{
	unsigned long want = mode_folio_bytes(m);
	int i;

	for (i = 0; i < SCN_NR_MTHP_SIZES; i++)
		mthp[i] = scenario_mthp_size(i) == want ? SCN_POL_ALWAYS
							: SCN_POL_NEVER;
}

/* AnonHugePages of the mapping at @addr in /proc/self/smaps, in bytes. */
static long smaps_anon_huge(unsigned long addr)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[256];
	bool in = false;
	long kb = -1;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			if (in)
				break;
			in = addr >= lo && addr < hi;
		} else if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1) {
			break;
		}
	}
	fclose(f);
	return kb < 0 ? -ENOENT : kb * 1024;
}

/*
 * Are the folios at a sample of folio-aligned addresses the mode's?  A
 * large folio of n pages: n present pages with consecutive pfns, the first
 * a compound head with KPF_THP, the rest tails, and the pfn after them not
 * a tail.  Order 0: a present page that is not compound.  0 or 1 with the
 * reason in @why; -errno when pagemap or kpageflags cannot be read.
 */
static int kernel_verify_folios(const struct kregion *kr, unsigned long size,
				enum folio_mode m, char *why, size_t whylen)
{
	unsigned long fbytes = mode_folio_bytes(m) ? mode_folio_bytes(m)
						   : (unsigned long)kr->page;
	unsigned long nr = fbytes / (unsigned long)kr->page;
	unsigned long nfolios = size / fbytes, step, s, i;
	uint64_t *pm = calloc(nr, sizeof(*pm)), kpf[2];
	int pm_fd = open("/proc/self/pagemap", O_RDONLY);
	int kpf_fd = open("/proc/kpageflags", O_RDONLY);
	int ret = 0;

	if (!pm || pm_fd < 0 || kpf_fd < 0) {
		ret = !pm ? -ENOMEM : -errno;
		snprintf(why, whylen, "cannot read %s: %s",
			 pm_fd < 0 ? "/proc/self/pagemap" : "/proc/kpageflags",
			 strerror(-ret));
		goto out;
	}
	step = nfolios > MP_VERIFY_SAMPLES ? nfolios / MP_VERIFY_SAMPLES : 1;
	for (s = 0; !ret && s < nfolios; s += step) {
		unsigned long addr = (unsigned long)kr->base + s * fbytes;
		uint64_t head;

		if (pread(pm_fd, pm, nr * sizeof(*pm),
			  (off_t)(addr / (unsigned long)kr->page * sizeof(*pm))) !=
		    (ssize_t)(nr * sizeof(*pm))) {
			ret = -EIO;
			snprintf(why, whylen, "short read of /proc/self/pagemap");
			break;
		}
		head = pm[0] & PM_PFN_MASK;
		for (i = 0; i < nr; i++) {
			if (!(pm[i] & PM_PRESENT) || !(pm[i] & PM_PFN_MASK)) {
				ret = 1;
				snprintf(why, whylen, "page %#lx not present or no pfn (pagemap needs CAP_SYS_ADMIN)",
					 addr + i * (unsigned long)kr->page);
				goto out;
			}
			if ((pm[i] & PM_PFN_MASK) != head + i) {
				ret = 1;
				snprintf(why, whylen, "folio at %#lx: pfns not consecutive",
					 addr);
				goto out;
			}
		}
		/* Flags of the head, and of the page after the last. */
		if (pread(kpf_fd, &kpf[0], sizeof(kpf[0]),
			  (off_t)(head * sizeof(kpf[0]))) != sizeof(kpf[0]) ||
		    pread(kpf_fd, &kpf[1], sizeof(kpf[1]),
			  (off_t)((head + nr) * sizeof(kpf[1]))) != sizeof(kpf[1])) {
			ret = -EIO;
			snprintf(why, whylen, "short read of /proc/kpageflags");
			break;
		}
		if (nr == 1) {
			if (kpf[0] & (KPF(KPF_COMPOUND_HEAD) | KPF(KPF_COMPOUND_TAIL))) {
				ret = 1;
				snprintf(why, whylen, "page at %#lx is in a large folio, want order 0",
					 addr);
			}
			continue;
		}
		if (!(kpf[0] & KPF(KPF_COMPOUND_HEAD)) || !(kpf[0] & KPF(KPF_THP)) ||
		    (kpf[1] & KPF(KPF_COMPOUND_TAIL))) {
			ret = 1;
			snprintf(why, whylen, "folio at %#lx is not one %lukB THP",
				 addr, fbytes >> 10);
		}
		/* The tails between are implied by consecutive pfns + size. */
	}
	if (!ret && (m == FOLIO_2M_PTE || m == FOLIO_2M_PMD)) {
		long huge = smaps_anon_huge((unsigned long)kr->base);
		long want = m == FOLIO_2M_PMD ? (long)size : 0;

		if (huge < 0) {
			ret = huge;
			snprintf(why, whylen, "cannot read AnonHugePages from /proc/self/smaps");
		} else if (huge != want) {
			ret = 1;
			snprintf(why, whylen, "%ldkB PMD-mapped, want %ldkB",
				 huge >> 10, want >> 10);
		}
	}
out:
	if (pm_fd >= 0)
		close(pm_fd);
	if (kpf_fd >= 0)
		close(kpf_fd);
	free(pm);
	return ret;
}

static int kernel_loop(char *base, size_t size, int iters)
{
	int i;

	for (i = 0; i < iters; i++) {
		if (mprotect(base, size, PROT_READ) ||
		    mprotect(base, size, PROT_READ | PROT_WRITE))
			return -errno;
	}
	return 0;
}

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/*
 * Map @size bytes 2M-aligned in mode @m's folios: every page written,
 * 2M-PTE split by mprotect()ing the first page of each PMD away and back
 * (the kernel splits the PMD, the folio stays whole).  0, 1 with @why for
 * a SKIP, or -errno.
 */
static int kernel_region(struct kregion *kr, unsigned long size,
			 enum folio_mode m, char *why, size_t whylen)
{
	unsigned long align = 2UL << 20, a;
	struct thp_fallback before, after;
	bool have_snap;

	kr->page = sysconf(_SC_PAGESIZE);
	kr->map_len = size + align;
	kr->map = mmap(NULL, kr->map_len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (kr->map == MAP_FAILED) {
		kr->map = NULL;
		snprintf(why, whylen, "mmap: %s", strerror(errno));
		return -errno;
	}
	kr->base = (char *)(((unsigned long)kr->map + align - 1) & ~(align - 1));
	if (m == FOLIO_4K && madvise(kr->base, size, MADV_NOHUGEPAGE)) {
		snprintf(why, whylen, "MADV_NOHUGEPAGE: %s", strerror(errno));
		return -errno;
	}
	have_snap = !thp_fallback_snapshot(&before);
	for (a = 0; a < size; a += (unsigned long)kr->page)
		kr->base[a] = 1;
	if (have_snap && !thp_fallback_snapshot(&after) &&
	    thp_fallback_check(&before, &after, why, whylen))
		return 1;
	if (m == FOLIO_2M_PTE) {
		for (a = 0; a < size; a += align) {
			if (mprotect(kr->base + a, (size_t)kr->page, PROT_READ) ||
			    mprotect(kr->base + a, (size_t)kr->page,
				     PROT_READ | PROT_WRITE)) {
				snprintf(why, whylen, "split mprotect: %s",
					 strerror(errno));
				return -errno;
			}
		}
	}
	/* Folios that cannot be checked are not the mode's either: SKIP. */
	return kernel_verify_folios(kr, size, m, why, whylen) ? 1 : 0;
}

static void kernel_run(const struct mp_plan *pl, enum folio_mode m,
		       struct mp_result *res)
{
	enum scn_policy mthp[SCN_NR_MTHP_SIZES];
	struct kregion kr = { 0 };
	double *samples;
	long f0;
	int err, r;

	memset(res, 0, sizeof(*res));
	res->rewrite_faults = -1;
	samples = calloc((size_t)pl->reps, sizeof(*samples));
	if (!samples) {
		res->failed = true;
		snprintf(res->why, sizeof(res->why), "out of memory");
		return;
	}
	mode_mthp(m, mthp);
	err = thp_settings_apply(mthp, res->why, sizeof(res->why));
	if (err) {
		/* Not root, no such size, no THP: the column cannot run here. */
		free(samples);
		return;
	}
	err = kernel_region(&kr, pl->size, m, res->why, sizeof(res->why));
	if (err > 0)
		goto out;		/* SKIP: the folios are not the mode's */
	if (!err)
		err = kernel_loop(kr.base, pl->size, 1);
	for (r = 0; !err && r < pl->reps; r++) {
		double t0 = bench_now_us();

		err = kernel_loop(kr.base, pl->size, pl->iters);
		samples[r] = bench_now_us() - t0;
	}
	if (err) {
		res->failed = true;
		snprintf(res->why, sizeof(res->why), "kernel: %s",
			 strerror(-err));
		goto out;
	}
	f0 = minflt();
	for (unsigned long a = 0; a < pl->size; a += (unsigned long)kr.page)
		kr.base[a] = 2;
	res->rewrite_faults = minflt() - f0;
	res->ran = true;
	res->t = bench_stats(samples, pl->reps);
	if (res->rewrite_faults) {
		res->failed = true;
		snprintf(res->why, sizeof(res->why),
			 "rewrite after the loop took %lld faults, want 0",
			 res->rewrite_faults);
	}
out:
	if (kr.map)
		munmap(kr.map, kr.map_len);
	thp_settings_restore();
	free(samples);
}

/* ---- report ------------------------------------------------------------- */

static const char *mp_variant_name(int col)
{
	return col == 0 ? "upstream,mprotect_batch=0" :
	       col == 1 ? "upstream,mprotect_batch=1" : "kernel";
}

static void mp_json(const struct bench_opts *o, const struct mp_plan *pl,
		    enum folio_mode m, int col, const struct mp_result *res)
{
	struct bench_row row;
	char extra[256];

	if (!res->ran)
		return;
	bench_row_init(&row);
	row.bench = "mprotect";
	row.folio = folio_mode_name(m);
	row.op = "mprotect_ro_rw";
	row.variant = mp_variant_name(col);
	row.backend = col < 2 ? "model" : "kernel";
	row.t = res->t;
	if (col < 2) {
		row.tlb_flush = (long long)res->tlb_flush;
		snprintf(extra, sizeof(extra),
			 ",\"size\":%lu,\"iters\":%d,\"pte_read\":%" PRIu64
			 ",\"pte_write\":%" PRIu64 ",\"rewrite_faults\":%lld",
			 pl->size, pl->iters, res->pte_read, res->pte_write,
			 res->rewrite_faults);
	} else {
		snprintf(extra, sizeof(extra),
			 ",\"size\":%lu,\"iters\":%d,\"rewrite_faults\":%lld",
			 pl->size, pl->iters, res->rewrite_faults);
	}
	row.extra_json = extra;
	bench_json_row(o, &row);
}

/* ns per PTE per mprotect call; "n/a" when the mode maps no PTEs. */
static void fmt_ns(char *buf, size_t len, const struct mp_plan *pl,
		   enum folio_mode m, const struct mp_result *res)
{
	unsigned long ptes = pl->size / pb_page_size();

	if (!res->ran)
		snprintf(buf, len, "-");
	else if (m == FOLIO_2M_PMD)
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%.1f", res->t.median_us * 1e3 /
			 (2.0 * pl->iters) / (double)ptes);
}

static void fmt_ms(char *buf, size_t len, const struct mp_result *res)
{
	if (res->ran)
		snprintf(buf, len, "%.2f", res->t.median_us / 1e3);
	else
		snprintf(buf, len, res->why[0] ? "SKIP" : "-");
}

int bench_mprotect(const struct bench_opts *o)
{
	struct mp_result res[MP_NR_MODES][3];
	struct mp_plan pl = {
		.size = o->size ? o->size : o->quick ? MP_QUICK_SIZE
						     : MP_DEFAULT_SIZE,
		.reps = o->reps > 0 ? o->reps : o->quick ? MP_QUICK_REPS
							 : MP_DEFAULT_REPS,
		.iters = o->quick ? MP_QUICK_ITERS : MP_DEFAULT_ITERS,
	};
	bool kernel = (o->backend & BENCH_KERNEL) && geteuid() == 0;
	bool model = o->backend & BENCH_MODEL;
	unsigned long pmd = 2UL << 20;
	struct utsname un;
	FILE *out = o->out;
	bool failed = false;
	size_t i;
	int col;

	if (pl.size < pmd || pl.size % pmd) {
		fprintf(out, "mprotect: --size must be a multiple of 2M (got %lu)\n",
			pl.size);
		return -EINVAL;
	}
	if (uname(&un))
		snprintf(un.release, sizeof(un.release), "?");

	memset(res, 0, sizeof(res));
	for (i = 0; i < MP_NR_MODES; i++) {
		enum folio_mode m = mp_modes[i];

		if (model) {
			bench_progress(o, "mprotect: model %s",
				       folio_mode_name(m));
			model_run(&pl, m, res[i]);
		}
		if (kernel) {
			bench_progress(o, "mprotect: kernel %s",
				       folio_mode_name(m));
			kernel_run(&pl, m, &res[i][2]);
		} else {
			snprintf(res[i][2].why, sizeof(res[i][2].why), "%s",
				 !(o->backend & BENCH_KERNEL) ? "" :
				 "not root: THP sysfs and /proc/kpageflags need it");
		}
		for (col = 0; col < 3; col++)
			mp_json(o, &pl, m, col, &res[i][col]);
	}
	bench_progress(o, "%s", "");

	fprintf(out, "\nmprotect (seed 004): %luM region, %d x (mprotect PROT_READ, "
		"PROT_READ|PROT_WRITE) = %d calls per sample, every page faulted in\n",
		pl.size >> 20, pl.iters, 2 * pl.iters);
	fprintf(out, "  statistic: median of %d samples (min..max in JSON), "
		"1 untimed round trip before them; arch %s, kernel %s\n",
		pl.reps, o->arch ? o->arch : pb_arch_name(), un.release);
	fprintf(out, "  model: variant \"upstream\" with mprotect_batch=0 (per-PTE) "
		"and =1 (batched), nothing else different: one region per mode,\n"
		"         the two variants' samples interleaved ABBA on it\n");
	fprintf(out, "  kernel: real mprotect(), THP sysfs set per mode "
		"(64K: hugepages-64kB; 2M: hugepages-2048kB; 4K: never + "
		"MADV_NOHUGEPAGE), folios checked via pagemap/kpageflags/smaps\n");
	fprintf(out, "  ratio = per-PTE / batched (>1: batched faster); ns/PTE = "
		"median / calls / PTEs (n/a: PMD-mapped, no PTEs)\n\n");
	fprintf(out, "  %-7s %11s %11s %7s %11s   %9s %9s %9s\n", "", "", "",
		"", "", "ns/PTE", "ns/PTE", "ns/PTE");
	fprintf(out, "  %-7s %11s %11s %7s %11s   %9s %9s %9s\n", "folio",
		"per-PTE ms", "batched ms", "ratio", "kernel ms",
		"per-PTE", "batched", "kernel");
	for (i = 0; i < MP_NR_MODES; i++) {
		enum folio_mode m = mp_modes[i];
		char ms[3][32], ns[3][32], ratio[16] = "-";

		for (col = 0; col < 3; col++) {
			fmt_ms(ms[col], sizeof(ms[col]), &res[i][col]);
			fmt_ns(ns[col], sizeof(ns[col]), &pl, m, &res[i][col]);
		}
		if (res[i][0].ran && res[i][1].ran && res[i][1].t.median_us > 0)
			snprintf(ratio, sizeof(ratio), "%.2f",
				 res[i][0].t.median_us / res[i][1].t.median_us);
		fprintf(out, "  %-7s %11s %11s %7s %11s   %9s %9s %9s\n",
			folio_mode_name(m), ms[0], ms[1], ratio, ms[2],
			ns[0], ns[1], ns[2]);
	}

	if (model) {
		fprintf(out, "\n  model counters of one sample (%d calls): "
			"pte_read / pte_write / tlb_flush\n", 2 * pl.iters);
		for (i = 0; i < MP_NR_MODES; i++) {
			const struct mp_result *a = &res[i][0], *b = &res[i][1];

			fprintf(out, "  %-7s per-PTE %10" PRIu64 " %10" PRIu64
				" %6" PRIu64 "   batched %10" PRIu64 " %10"
				PRIu64 " %6" PRIu64 "\n",
				folio_mode_name(mp_modes[i]), a->pte_read,
				a->pte_write, a->tlb_flush, b->pte_read,
				b->pte_write, b->tlb_flush);
		}
	}

	/* The targets of the issue, judged on this run's numbers. */
	fprintf(out, "\n");
	for (i = 0; model && i < MP_NR_MODES; i++) {
		const struct mp_result *a = &res[i][0], *b = &res[i][1];
		double q;

		if (!a->ran || !b->ran)
			continue;
		q = b->t.median_us / a->t.median_us;
		if (mp_modes[i] == FOLIO_2M_PMD)
			fprintf(out, "  2M-PMD: batched/per-PTE = %.3f, not judged: "
				"no PTEs, both take the same PMD path\n", q);
		else if (mp_modes[i] == FOLIO_4K)
			fprintf(out, "  target 4K: batched/per-PTE = %.3f, want <= 1.03: %s\n",
				q, q <= 1.03 ? "met" : "MISSED");
		else
			fprintf(out, "  target %s: batched/per-PTE = %.3f, want < 1: %s\n",
				folio_mode_name(mp_modes[i]), q,
				q < 1 ? "met" : "MISSED");
	}
	for (i = 0; i < MP_NR_MODES; i++) {
		for (col = 0; col < 3; col++) {
			const struct mp_result *r = &res[i][col];

			if (r->failed) {
				failed = true;
				fprintf(out, "  FAIL %s %s: %s\n",
					folio_mode_name(mp_modes[i]),
					mp_variant_name(col), r->why);
			} else if (!r->ran && r->why[0]) {
				fprintf(out, "  SKIP %s %s: %s\n",
					folio_mode_name(mp_modes[i]),
					mp_variant_name(col), r->why);
			}
		}
	}
	fprintf(out, "  rewrite of every page after the loop: %s\n",
		failed ? "see FAIL above" : "0 faults everywhere it ran");
	return failed ? -EIO : 0;
}
