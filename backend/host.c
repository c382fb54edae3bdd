// SPDX-License-Identifier: GPL-2.0-only
/*
 * host.c - this machine's kernel, looked at: its zero page, its reuse of
 * a PMD-mapped THP, DAMON, CPUs (host.h says why each matters); and the machine's memory, CPU model and
 * name.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/host.h"

#define KPF_ZERO_PAGE_BIT 24	/* include/uapi/linux/kernel-page-flags.h */
#define PM_PRESENT (1ULL << 63)
#define PM_PFN_MASK ((1ULL << 55) - 1)

/* Read 8 bytes at @off of @path: 0, or -1. */
static int read_u64_at(const char *path, uint64_t off, uint64_t *v)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, v, sizeof(*v), (off_t)off);
	close(fd);
	return n == sizeof(*v) ? 0 : -1;
}

/*
 * Touch one page of fresh private anonymous memory for reading and ask
 * kpageflags what it maps.  Small pages only (MADV_NOHUGEPAGE), so that
 * the THP settings do not matter: a kernel seen allocating on a small
 * read fault allocated a THP on a PMD one too, as mm_forbids_zeropage()
 * makes mainline do.
 */
static int probe_zero_page(void)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t pm, kpf;
	volatile char *p;
	int ret = -1;

	p = mmap(NULL, page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	madvise((void *)p, page, MADV_NOHUGEPAGE);
	(void)p[0];
	if (!read_u64_at("/proc/self/pagemap",
			 (uintptr_t)p / page * sizeof(pm), &pm) &&
	    (pm & PM_PRESENT) && (pm & PM_PFN_MASK) &&
	    !read_u64_at("/proc/kpageflags", (pm & PM_PFN_MASK) * sizeof(kpf),
			 &kpf))
		ret = !!(kpf & (1ULL << KPF_ZERO_PAGE_BIT));
	munmap((void *)p, page);
	return ret;
}

/* This thread's minor faults so far (what the kernel backend counts). */
static long minor_faults(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? -1 : ru.ru_minflt;
}

/* One try of probe_pmd_reuse(): 1, 0 or -1 as it says. */
static int pmd_reuse_once(size_t pmd, long page)
{
	char *raw, *p;
	long before, faults;
	int i, status, ret = -1;
	pid_t pid;

	raw = mmap(NULL, 2 * pmd, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		return -1;
	p = (char *)(((uintptr_t)raw + pmd - 1) & ~(uintptr_t)(pmd - 1));
	if (madvise(p, pmd, MADV_HUGEPAGE))
		goto out;
	before = minor_faults();
	memset(p, 1, pmd);
	if (minor_faults() - before != 1)
		goto out;	/* not one PMD-mapped THP: nothing to tell */
	pid = fork();
	if (pid == 0)
		_exit(0);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		goto out;
	before = minor_faults();
	for (i = 0; i < 4; i++)
		p[i * page] = 2;
	faults = minor_faults() - before;
	if (faults == 1)
		ret = 1;
	else if (faults == 4)
		ret = 0;
out:
	munmap(raw, 2 * pmd);
	return ret;
}

/*
 * Does a write fault reuse a PMD-mapped THP whole once it is exclusive
 * again (after fork and the child's exit), as do_huge_pmd_wp_page() does
 * when the mapping holds the folio's only reference?  Some builds of this
 * machine's kernel split the PMD there and reuse PTE by PTE, every time
 * (tests/scenarios/ro-pin-2m-pmd.scn's note): a store to each of four
 * pages takes 4 faults, not 1.  What holds the extra reference in those
 * builds is not known; the model cannot do it, so diff says so.  1 the
 * PMD was reused (in one of three tries: DAMON or another CPU's LRU cache
 * can make mainline fall back once), 0 split in all three, -1 unknown
 * (no 2M PMD-mapped THP to be had here).
 */
static int probe_pmd_reuse(void)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned long pmd = 0;
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size",
			"r");
	int i, r, ret = -1;

	if (f) {
		if (fscanf(f, "%lu", &pmd) != 1)
			pmd = 0;
		fclose(f);
	}
	/* A bigger PMD (arm64's 16K and 64K granules) costs too much. */
	if (page <= 0 || pmd != 2UL << 20)
		return -1;
	for (i = 0; i < 3; i++) {
		r = pmd_reuse_once(pmd, page);
		if (r == 1)
			return 1;
		if (r == 0)
			ret = 0;
	}
	return ret;
}

/* A word of /proc/cmdline that forbids the zero page, into @word. */
static void zero_page_param(char *word, size_t size)
{
	char line[4096], *tok, *save;
	FILE *f = fopen("/proc/cmdline", "re");

	word[0] = '\0';
	if (!f)
		return;
	if (fgets(line, sizeof(line), f))
		for (tok = strtok_r(line, " \n", &save); tok;
		     tok = strtok_r(NULL, " \n", &save))
			if (strstr(tok, "zero_page") || strstr(tok, "zeropage")) {
				snprintf(word, size, "%s", tok);
				break;
			}
	fclose(f);
}

/* Kernel threads named kdamond.N: DAMON contexts running. */
static int count_kdamonds(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int nr = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char path[300], comm[32] = "";
		FILE *f;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) &&
		    !strncmp(comm, "kdamond.", 8))
			nr++;
		fclose(f);
	}
	closedir(d);
	return nr;
}

void host_probe(struct host_facts *h)
{
	struct utsname u;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	memset(h, 0, sizeof(*h));
	snprintf(h->release, sizeof(h->release), "%s",
		 uname(&u) ? "unknown" : u.release);
	h->zero_page = probe_zero_page();
	if (h->zero_page == 0)
		zero_page_param(h->zero_page_param,
				sizeof(h->zero_page_param));
	h->pmd_reuse = probe_pmd_reuse();
	h->nr_kdamonds = count_kdamonds();
	h->nr_cpus = cpus > 0 ? (int)cpus : 1;
}

bool host_read_faults_allocate(void)
{
	static int zero_page = -2;

	if (zero_page == -2)
		zero_page = probe_zero_page();
	return zero_page == 0;
}

bool host_counts_may_vary(const struct host_facts *h)
{
	return h->nr_kdamonds > 0 || h->nr_cpus > 1;
}

void host_facts_line(const struct host_facts *h, char *buf, size_t size)
{
	size_t n;

	n = (size_t)snprintf(buf, size, "this kernel (%s): ", h->release);
	if (n < size && h->zero_page == 0)
		n += (size_t)snprintf(buf + n, size - n, "read faults map no"
				      " zero page%s%s%s: the model's allocate"
				      " too; ",
				      h->zero_page_param[0] ? " (" : "",
				      h->zero_page_param,
				      h->zero_page_param[0] ? ")" : "");
	else if (n < size && h->zero_page < 0)
		n += (size_t)snprintf(buf + n, size - n, "whether read faults"
				      " map the zero page is unknown (not"
				      " root); ");
	if (n < size && h->pmd_reuse == 0)
		n += (size_t)snprintf(buf + n, size - n, "a write fault on a"
				      " PMD-mapped THP exclusive again after"
				      " fork splits it where Linux reuses it"
				      " whole (a probe): a steady mismatch"
				      " where the kernel faults more is a"
				      " SKIP; ");
	if (n >= size)
		return;
	if (!host_counts_may_vary(h)) {
		snprintf(buf + n, size - n, "nothing seen that makes THP"
			 " reuse vary (no DAMON, one CPU)");
		return;
	}
	n += (size_t)snprintf(buf + n, size - n, "THP reuse can vary here:");
	if (n < size && h->nr_kdamonds)
		n += (size_t)snprintf(buf + n, size - n, " DAMON on (%d"
				      " kdamond%s: sampling takes transient"
				      " folio references)%s", h->nr_kdamonds,
				      h->nr_kdamonds == 1 ? "" : "s",
				      h->nr_cpus > 1 ? "," : "");
	if (n < size && h->nr_cpus > 1)
		snprintf(buf + n, size - n, " %d CPUs (folios in other CPUs'"
			 " LRU caches hold references)", h->nr_cpus);
}

unsigned long host_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);

	if (pages <= 0 || page <= 0 ||
	    (unsigned long)pages > ~0UL / (unsigned long)page)
		return 0;
	return (unsigned long)pages * (unsigned long)page;
}

bool host_cpu_model(char *buf, size_t len)
{
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/cpuinfo", "re");

	while (f && !found && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) || !colon)
			continue;
		colon += 1 + (colon[1] == ' ');
		colon[strcspn(colon, "\n")] = '\0';
		snprintf(buf, len, "%s", colon);
		found = true;
	}
	if (f)
		fclose(f);
	return found;
}

const char *host_machine_name(void)
{
	static char text[700];
	char cpu[256];
	struct utsname u;
	long cores;

	if (!text[0]) {
		if (!host_cpu_model(cpu, sizeof(cpu)))
			snprintf(cpu, sizeof(cpu), "unknown");
		cores = sysconf(_SC_NPROCESSORS_ONLN);
		if (cores < 1)
			cores = 1;
		snprintf(text, sizeof(text), "%s, %ld core%s, Linux %s", cpu,
			 cores, cores == 1 ? "" : "s",
			 uname(&u) ? "" : u.release);
	}
	return text;
}
