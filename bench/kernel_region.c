// SPDX-License-Identifier: GPL-2.0-only
/*
 * kernel_region.c: the kernel side the three benchmarks share - a region
 * of one folio mode on this machine's kernel.  THP sysfs set for the mode
 * (only its size "always", every other "never"; restored by the caller's
 * thp_settings_restore() or bench_kernel_region_free()), a 2M-aligned
 * anonymous mapping with every page written, 2M-PTE split to PTEs, and a
 * check through /proc/self/pagemap, /proc/kpageflags and smaps that the
 * kernel really gave the folios asked for; a region whose folios did not
 * materialize is a SKIP, with the reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/kernel-page-flags.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "backend/thp_sysfs.h"
#include "bench/bench.h"

#define KR_PMD_SIZE	(2UL << 20)
/* Folios checked per region: spread evenly over it. */
#define KR_VERIFY_SAMPLES	64
/* Regions tried before the mode is skipped for want of folios. */
#define KR_REGION_TRIES	3

#define PM_PRESENT	(1ULL << 63)
#define PM_PFN_MASK	((1ULL << 55) - 1)
#define KPF(bit)	(1ULL << (bit))

unsigned long folio_mode_bytes(enum folio_mode m)
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

/* THP sysfs for mode @m: its size "always", every other size "never". */
int bench_thp_apply(enum folio_mode m, char *why, size_t whylen)
{
	unsigned long ps = (unsigned long)sysconf(_SC_PAGESIZE);
	unsigned long want = folio_mode_bytes(m);
	enum scn_policy mthp[SCN_MAX_MTHP_SIZES];
	int i;

	/* The slots of this kernel's page size, as thp_sysfs.c reads them. */
	for (i = 0; i < SCN_MAX_MTHP_SIZES; i++)
		mthp[i] = i < scenario_nr_mthp_sizes(ps) &&
			  scenario_mthp_size_of(ps, i) == want ?
			  SCN_POL_ALWAYS : SCN_POL_NEVER;
	return thp_settings_apply(mthp, why, whylen);
}

static int pread_full(int fd, void *buf, size_t len, off_t off)
{
	ssize_t r = pread(fd, buf, len, off);

	if (r < 0)
		return -errno;
	return (size_t)r == len ? 0 : -EIO;
}

/*
 * Is the folio at @addr one of @fbytes bytes (@nr pages), mapped whole and
 * in order by [addr, addr + fbytes)?  pagemap gives the PFNs (root only),
 * kpageflags the head, the tails, and that the next PFN starts another
 * folio.  Order 0: a present page that is not compound.  0; -EAGAIN with
 * @why when it is not; another -errno when the files cannot be read.
 */
static int verify_folio(int pm_fd, int kpf_fd, unsigned long addr,
			unsigned long fbytes, unsigned long page, uint64_t *pm,
			uint64_t *kpf, char *why, size_t whylen)
{
	unsigned long nr = fbytes / page, i;
	uint64_t pfn0;
	int err;

	err = pread_full(pm_fd, pm, nr * sizeof(*pm),
			 (off_t)(addr / page * sizeof(*pm)));
	if (err) {
		snprintf(why, whylen, "cannot read /proc/self/pagemap: %s",
			 strerror(-err));
		return err;
	}
	pfn0 = pm[0] & PM_PFN_MASK;
	for (i = 0; i < nr; i++) {
		if (!(pm[i] & PM_PRESENT) || !(pm[i] & PM_PFN_MASK)) {
			snprintf(why, whylen, "page %#lx not present or no pfn"
				 " (pagemap needs CAP_SYS_ADMIN)", addr + i * page);
			return -EAGAIN;
		}
		if ((pm[i] & PM_PFN_MASK) != pfn0 + i) {
			snprintf(why, whylen, "folio at %#lx: pfns not consecutive",
				 addr);
			return -EAGAIN;
		}
	}
	if (pfn0 % nr) {
		snprintf(why, whylen, "PFN %#" PRIx64 " at %#lx: not %lu-page"
			 " aligned", pfn0, addr, nr);
		return -EAGAIN;
	}
	/* Flags of every page, and of the page after the last. */
	err = pread_full(kpf_fd, kpf, (nr + 1) * sizeof(*kpf),
			 (off_t)(pfn0 * sizeof(*kpf)));
	if (err) {
		snprintf(why, whylen, "cannot read /proc/kpageflags: %s",
			 strerror(-err));
		return err;
	}
	if (nr == 1) {
		if (kpf[0] & (KPF(KPF_COMPOUND_HEAD) | KPF(KPF_COMPOUND_TAIL))) {
			snprintf(why, whylen, "page at %#lx is in a large folio,"
				 " want order 0", addr);
			return -EAGAIN;
		}
		return 0;
	}
	if (!(kpf[0] & KPF(KPF_COMPOUND_HEAD)) || !(kpf[0] & KPF(KPF_THP))) {
		snprintf(why, whylen, "the page at %#lx is no THP head", addr);
		return -EAGAIN;
	}
	for (i = 1; i < nr; i++) {
		if (!(kpf[i] & KPF(KPF_COMPOUND_TAIL))) {
			snprintf(why, whylen, "the folio at %#lx is smaller than"
				 " %lu kB", addr, fbytes >> 10);
			return -EAGAIN;
		}
	}
	if (kpf[nr] & KPF(KPF_COMPOUND_TAIL)) {
		snprintf(why, whylen, "the folio at %#lx is larger than %lu kB",
			 addr, fbytes >> 10);
		return -EAGAIN;
	}
	return 0;
}

/* kB of AnonHugePages (PMD-mapped THP) in the VMAs that overlap [lo, hi). */
static long smaps_anon_huge_kb(unsigned long lo, unsigned long hi)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	unsigned long start = 0, end = 0;
	char line[256];
	long kb = 0, v;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2)
			continue;
		if (start < hi && end > lo &&
		    sscanf(line, "AnonHugePages: %ld kB", &v) == 1)
			kb += v;
	}
	fclose(f);
	return kb;
}

/*
 * Did the folios materialize?  A sample of them spread over the region
 * (verify_folio), and for 2M how much of it smaps counts PMD-mapped: all
 * of it for 2M-PMD, none after the split for 2M-PTE.
 */
static int verify_region(char *base, unsigned long size, enum folio_mode m,
			 unsigned long page, char *why, size_t whylen)
{
	unsigned long fbytes = folio_mode_bytes(m) ? folio_mode_bytes(m) : page;
	unsigned long nr = fbytes / page, nfolios = size / fbytes, step, s;
	uint64_t *pm = malloc(nr * sizeof(*pm));
	uint64_t *kpf = malloc((nr + 1) * sizeof(*kpf));
	int pm_fd = open("/proc/self/pagemap", O_RDONLY);
	int kpf_fd = open("/proc/kpageflags", O_RDONLY);
	int err = 0;
	long kb;

	if (!pm || !kpf || pm_fd < 0 || kpf_fd < 0) {
		err = !pm || !kpf ? -ENOMEM : -errno;
		snprintf(why, whylen, "cannot read %s: %s",
			 pm_fd < 0 ? "/proc/self/pagemap" : "/proc/kpageflags",
			 strerror(-err));
		goto out;
	}
	step = nfolios > KR_VERIFY_SAMPLES ? nfolios / KR_VERIFY_SAMPLES : 1;
	for (s = 0; !err && s < nfolios; s += step)
		err = verify_folio(pm_fd, kpf_fd, (unsigned long)base + s * fbytes,
				   fbytes, page, pm, kpf, why, whylen);
	if (!err && (m == FOLIO_2M_PTE || m == FOLIO_2M_PMD)) {
		long want = m == FOLIO_2M_PMD ? (long)(size >> 10) : 0;

		kb = smaps_anon_huge_kb((unsigned long)base,
					(unsigned long)base + size);
		if (kb < 0) {
			err = (int)kb;
			snprintf(why, whylen, "cannot read AnonHugePages from"
				 " /proc/self/smaps");
		} else if (m == FOLIO_2M_PMD ? kb < want : kb != 0) {
			err = -EAGAIN;
			snprintf(why, whylen, "%ldkB PMD-mapped, want %ldkB",
				 kb, want);
		}
	}
out:
	if (pm_fd >= 0)
		close(pm_fd);
	if (kpf_fd >= 0)
		close(kpf_fd);
	free(pm);
	free(kpf);
	return err;
}

/*
 * One try: map @size bytes 2M-aligned (so every 2M block is a PMD), write
 * every page, for 2M-PTE split every PMD to PTEs by mprotect()ing its
 * first page away and back (the kernel splits the PMD, the folio stays
 * whole), then verify.  -EAGAIN with @why when the kernel did not give the
 * folios; the region is unmapped on every error.
 */
static int map_once(enum folio_mode m, unsigned long size, char **basep,
		    char *why, size_t whylen)
{
	unsigned long page = (unsigned long)sysconf(_SC_PAGESIZE), a;
	size_t maplen = size + KR_PMD_SIZE;
	struct thp_fallback before, after;
	char *map, *base;
	bool have_snap;
	int err;

	map = mmap(NULL, maplen, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		err = -errno;
		snprintf(why, whylen, "mmap of %zu bytes: %s", maplen,
			 strerror(-err));
		return err;
	}
	/* Keep only the aligned part, so every 2M block is a PMD. */
	base = (char *)(((unsigned long)map + KR_PMD_SIZE - 1) & ~(KR_PMD_SIZE - 1));
	if (base > map)
		munmap(map, (size_t)(base - map));
	if (base + size < map + maplen)
		munmap(base + size, (size_t)(map + maplen - (base + size)));
	if (m == FOLIO_4K && madvise(base, size, MADV_NOHUGEPAGE)) {
		err = -errno;
		snprintf(why, whylen, "MADV_NOHUGEPAGE: %s", strerror(-err));
		goto fail;
	}
	if ((m == FOLIO_2M_PTE || m == FOLIO_2M_PMD) &&
	    madvise(base, size, MADV_HUGEPAGE)) {
		err = -errno;
		snprintf(why, whylen, "MADV_HUGEPAGE: %s", strerror(-err));
		goto fail;
	}
	have_snap = !thp_fallback_snapshot(&before);
	for (a = 0; a < size; a += page)
		((volatile char *)base)[a] = 1;
	/* A fault that fell back gave a smaller folio somewhere: try again. */
	if (have_snap && !thp_fallback_snapshot(&after) &&
	    thp_fallback_check(&before, &after, why, whylen)) {
		err = -EAGAIN;
		goto fail;
	}
	if (m == FOLIO_2M_PTE) {
		for (a = 0; a < size; a += KR_PMD_SIZE) {
			if (mprotect(base + a, page, PROT_READ) ||
			    mprotect(base + a, page, PROT_READ | PROT_WRITE)) {
				err = -errno;
				snprintf(why, whylen, "mprotect split: %s",
					 strerror(-err));
				goto fail;
			}
		}
	}
	/* Folios that cannot be checked are not the mode's either: SKIP. */
	err = verify_region(base, size, m, page, why, whylen);
	if (err && err != -EAGAIN)
		err = -EOPNOTSUPP;
	if (err)
		goto fail;
	*basep = base;
	return 0;
fail:
	munmap(base, size);
	return err;
}

int bench_kernel_map(enum folio_mode m, unsigned long size, void **addrp,
		     char *why, size_t whylen)
{
	int tries = 0, err;
	char *base = NULL;
	size_t len;

	/*
	 * A region whose folios did not all materialize (an allocation fell
	 * back under fragmentation) is not measured: unmap it and try a
	 * fresh one.
	 */
	do
		err = map_once(m, size, &base, why, whylen);
	while (err == -EAGAIN && ++tries < KR_REGION_TRIES);
	if (err == -EAGAIN) {
		len = strlen(why);
		snprintf(why + len, whylen - len, " (in %d fresh regions)", tries);
	}
	if (err)
		return err == -EAGAIN ? -EOPNOTSUPP : err;
	*addrp = base;
	return 0;
}

void bench_kernel_unmap(void *addr, unsigned long size)
{
	if (addr)
		munmap(addr, size);
}

int bench_kernel_region(enum folio_mode m, unsigned long size, void **addrp,
			char *why, size_t whylen)
{
	int err = bench_thp_apply(m, why, whylen);

	/* Not root, no such size, no THP: the mode cannot run here. */
	if (err)
		return -EOPNOTSUPP;
	err = bench_kernel_map(m, size, addrp, why, whylen);
	if (err)
		thp_settings_restore();
	return err;
}

void bench_kernel_region_free(void *addr, unsigned long size)
{
	bench_kernel_unmap(addr, size);
	thp_settings_restore();
}
