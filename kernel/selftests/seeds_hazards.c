// SPDX-License-Identifier: GPL-2.0-only
/*
 * seeds_hazards - kselftest-style cases for the hazards of the seeds
 * series (kernel/patches/seeds): GUP-fast batching over PTE-mapped large
 * folios, and a reusing write fault that makes up to N read-only PTEs of
 * an exclusive anonymous large folio writable at once.
 *
 * Every case asserts an outcome that must hold on any correct kernel,
 * patched or not (what user space can see: SIGSEGV, memory contents, a
 * pipe's contents, pagemap bits, userfaultfd events), never a count of
 * faults.  Each runs on two kinds of large folio, and is a SKIP when the
 * kernel did not give one:
 *
 *   mTHP   a folio of 16 base pages (64K with 4K pages; hugepages-NkB
 *          of the page size), or the smallest mTHP size the kernel has;
 *   PMD    a PMD THP (MADV_HUGEPAGE), split into PTEs by an mprotect()
 *          round trip on one page while the folio stays whole.
 *
 * The cases, each around the page in the middle of the folio (M) and its
 * neighbour (M+1), inside one reuse window of 16 PTEs:
 *
 *   prot-read   after fork() and the child's exit (every PTE read-only,
 *               the folio exclusive again), M+1 becomes its own PROT_READ
 *               VMA; writing M and M+2 must leave M+1 read-only (a store
 *               SIGSEGVs), mapped to the same page, its data intact.
 *   vmsplice    a page spliced into a pipe (before fork(), or after the
 *               child's exit) keeps its old data in the pipe when the
 *               parent then writes every page of the folio.
 *   soft-dirty  with soft-dirty cleared (clear_refs 4), a store to one
 *               page marks that page alone soft-dirty (pagemap bit 55),
 *               with the pages exclusive and after fork().
 *   uffd-wp     with M+1 write-protected by userfaultfd, stores to M and
 *               M+2 leave M+1 write-protected (pagemap bit 57), and a
 *               store to M+1 raises a write-protect fault event.
 *   gup-race    a thread pins the folio with pin_user_pages_fast() (the
 *               gup_test debugfs, FOLL_LONGTERM, with and without
 *               FOLL_WRITE) while the main thread writes it, forks and
 *               mprotect()s it read-only and back: a pinned page must see
 *               the parent's later writes, and a child its snapshot.
 *
 * Global THP settings are saved and restored on every exit path,
 * including fatal signals.  Sizes come from sysconf(_SC_PAGESIZE) and
 * the hugepages-*kB directories, so it runs on 4K, 16K and 64K pages.
 * Needs root (pagemap PFNs, kpageflags, THP sysfs, debugfs).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/userfaultfd.h>

#include "kselftest.h"
#include "mm/gup_test.h"

#define THP_DIR		"/sys/kernel/mm/transparent_hugepage"
#define GUP_TEST_FILE	"/sys/kernel/debug/gup_test"

/* /proc/PID/pagemap and /proc/kpageflags bits (Documentation/admin-guide/mm/pagemap.rst) */
#define PM_PFN_MASK	((1ULL << 55) - 1)
#define PM_SOFT_DIRTY	(1ULL << 55)
#define PM_UFFD_WP	(1ULL << 57)
#define PM_PRESENT	(1ULL << 63)
#define KPF_COMPOUND_HEAD	15
#define KPF_COMPOUND_TAIL	16
#define KPF_THP			22

/* A PMD THP larger than this (512M with 64K pages) is not worth a guest's time. */
#define PMD_SIZE_MAX	(64UL << 20)

static size_t pagesize;
static int pagemap_fd = -1, kpageflags_fd = -1;

enum folio_kind { FOLIO_MTHP, FOLIO_PMD, NR_FOLIO_KINDS };

struct folio_kind_info {
	const char *name;
	size_t size;		/* 0: this kernel has none */
	char why[256];		/* why not, when size is 0 */
	char enabled[128];		/* its hugepages-NkB/enabled */
};

static struct folio_kind_info kinds[NR_FOLIO_KINDS] = {
	[FOLIO_MTHP] = { .name = "mTHP" },
	[FOLIO_PMD] = { .name = "PTE-mapped PMD THP" },
};

/* ------------------------------------------------------------------ */
/* THP settings: saved before the first change, restored on every exit. */

#define MAX_SAVED 8
static struct {
	char path[PATH_MAX];
	char value[128];
} saved[MAX_SAVED];
static int nr_saved;
static pid_t settings_owner;

static int read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/* write(2) only: also called from a signal handler. */
static int write_file(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, value, strlen(value));
	close(fd);
	return n == (ssize_t)strlen(value) ? 0 : -1;
}

/* The selected value of a "never [always] madvise" file. */
static int thp_selected(const char *path, char *out, size_t size)
{
	char buf[256], *l, *r;

	if (read_file(path, buf, sizeof(buf)))
		return -1;
	l = strchr(buf, '[');
	r = l ? strchr(l, ']') : NULL;
	if (!r || (size_t)(r - l) >= size)
		return -1;
	memcpy(out, l + 1, (size_t)(r - l - 1));
	out[r - l - 1] = '\0';
	return 0;
}

static void restore_settings(void)
{
	int i;

	/* A forked child's exit must not undo the parent's settings. */
	if (getpid() != settings_owner)
		return;
	for (i = nr_saved - 1; i >= 0; i--)
		write_file(saved[i].path, saved[i].value);
	nr_saved = 0;
}

static void fatal_signal(int sig)
{
	restore_settings();
	signal(sig, SIG_DFL);
	raise(sig);
}

static int set_setting(const char *path, const char *value)
{
	int i;

	for (i = 0; i < nr_saved; i++)
		if (!strcmp(saved[i].path, path))
			break;
	if (i == nr_saved) {
		if (nr_saved == MAX_SAVED)
			return -1;
		if (thp_selected(path, saved[i].value, sizeof(saved[i].value)))
			return -1;
		snprintf(saved[i].path, sizeof(saved[i].path), "%s", path);
		nr_saved++;
	}
	return write_file(path, value);
}

static void watch_fatal_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT,
				    SIGABRT, SIGBUS, SIGSEGV, SIGALRM };
	size_t i;

	settings_owner = getpid();
	atexit(restore_settings);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], fatal_signal);
}

/* ------------------------------------------------------------------ */
/* Which folio sizes this kernel has. */

static bool have_size_dir(size_t size, char *enabled, size_t len)
{
	snprintf(enabled, len, THP_DIR "/hugepages-%zukB/enabled", size >> 10);
	return access(enabled, W_OK) == 0;
}

static void probe_kinds(void)
{
	struct folio_kind_info *m = &kinds[FOLIO_MTHP];
	struct folio_kind_info *p = &kinds[FOLIO_PMD];
	char buf[64];
	size_t pmd = 0, s;

	if (!read_file(THP_DIR "/hpage_pmd_size", buf, sizeof(buf)))
		pmd = strtoul(buf, NULL, 10);

	/* 16 PTEs: the seeds' reuse window, and arm64's contpte block with 4K pages. */
	if (have_size_dir(16 * pagesize, m->enabled, sizeof(m->enabled)) &&
	    16 * pagesize < pmd) {
		m->size = 16 * pagesize;
	} else {
		for (s = 4 * pagesize; pmd && s < pmd; s *= 2)
			if (have_size_dir(s, m->enabled, sizeof(m->enabled))) {
				m->size = s;
				break;
			}
		if (!m->size)
			snprintf(m->why, sizeof(m->why),
				 "no mTHP size between 4 pages and the PMD size "
				 "in " THP_DIR);
	}

	if (!pmd) {
		snprintf(p->why, sizeof(p->why), "no %s/hpage_pmd_size", THP_DIR);
	} else if (pmd > PMD_SIZE_MAX) {
		snprintf(p->why, sizeof(p->why), "the PMD size is %zuM, over "
			 "this test's %luM", pmd >> 20, PMD_SIZE_MAX >> 20);
	} else if (!have_size_dir(pmd, p->enabled, sizeof(p->enabled))) {
		snprintf(p->why, sizeof(p->why), "cannot write %.120s", p->enabled);
	} else {
		p->size = pmd;
	}
}

/* ------------------------------------------------------------------ */
/* pagemap and kpageflags */

static uint64_t pagemap_entry(const void *addr)
{
	uint64_t e = 0;
	off_t off = (off_t)((uintptr_t)addr / pagesize) * 8;

	if (pread(pagemap_fd, &e, sizeof(e), off) != sizeof(e))
		return 0;
	return e;
}

static uint64_t page_flags(uint64_t pfn)
{
	uint64_t f = 0;

	if (pread(kpageflags_fd, &f, sizeof(f), (off_t)(pfn * 8)) != sizeof(f))
		return 0;
	return f;
}

/*
 * Do the @nr pages at @addr map one large folio of exactly @nr pages, in
 * order?  Its head first, tails after, consecutive PFNs.
 */
static bool is_one_large_folio(const char *addr, size_t nr)
{
	uint64_t head = 0;
	size_t i;

	for (i = 0; i < nr; i++) {
		uint64_t e = pagemap_entry(addr + i * pagesize);
		uint64_t pfn = e & PM_PFN_MASK, f;

		if (!(e & PM_PRESENT) || !pfn)
			return false;
		if (i == 0)
			head = pfn;
		else if (pfn != head + i)
			return false;
		f = page_flags(pfn);
		if (!(f & (1ULL << KPF_THP)) ||
		    !(f & (1ULL << (i ? KPF_COMPOUND_TAIL : KPF_COMPOUND_HEAD))))
			return false;
	}
	/* A tail right after it would make the folio larger than @nr pages. */
	return !(page_flags(head + nr) & (1ULL << KPF_COMPOUND_TAIL));
}

/* AnonHugePages of the VMA that starts at @addr, in kB; -1 if not found. */
static long anon_huge_kb(const void *addr)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	char line[512];
	bool in = false;
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end;

		/* A VMA's first line; "AnonHugePages:" and the rest fail at ':' or '-'. */
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2) {
			in = start == (uintptr_t)addr;
			continue;
		}
		if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

/* ------------------------------------------------------------------ */
/* Making a large folio */

struct folio_area {
	char *addr;
	size_t size, nr;	/* bytes, pages */
};

/* Byte value of page @i for contents @tag: the tags differ in every page. */
static uint8_t pattern(unsigned int tag, size_t i)
{
	return (uint8_t)(tag * 16 + i * 7 + 1);
}

static void fill_page(char *p, unsigned int tag, size_t i)
{
	memset(p, pattern(tag, i), pagesize);
}

static bool page_is(const char *p, unsigned int tag, size_t i)
{
	uint8_t v = pattern(tag, i);
	size_t j;

	for (j = 0; j < pagesize; j++)
		if ((uint8_t)p[j] != v)
			return false;
	return true;
}

/* A mapping of @size bytes aligned to @size. */
static char *mmap_aligned(size_t size)
{
	char *p = mmap(NULL, 2 * size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t a;

	if (p == MAP_FAILED)
		return NULL;
	a = ((uintptr_t)p + size - 1) & ~(uintptr_t)(size - 1);
	if (a > (uintptr_t)p)
		munmap(p, a - (uintptr_t)p);
	munmap((char *)a + size, (uintptr_t)p + size - a);
	return (char *)a;
}

/*
 * A PTE-mapped large folio of @kind filling a VMA of its own, every page
 * filled with contents 1.  0, or -1 with a SKIP reason in @why.
 */
static int make_folio(enum folio_kind kind, struct folio_area *fa, char *why,
		      size_t whylen)
{
	const struct folio_kind_info *k = &kinds[kind];
	size_t i;

	if (!k->size) {
		snprintf(why, whylen, "%s", k->why);
		return -1;
	}
	if (set_setting(k->enabled, "always")) {
		snprintf(why, whylen, "cannot set %s to always (root?)",
			 k->enabled);
		return -1;
	}
	fa->size = k->size;
	fa->nr = k->size / pagesize;
	fa->addr = mmap_aligned(fa->size);
	if (!fa->addr) {
		snprintf(why, whylen, "mmap of %zu bytes: %s", 2 * fa->size,
			 strerror(errno));
		return -1;
	}
	if (kind == FOLIO_PMD && madvise(fa->addr, fa->size, MADV_HUGEPAGE)) {
		snprintf(why, whylen, "MADV_HUGEPAGE: %s", strerror(errno));
		goto fail;
	}
	for (i = 0; i < fa->nr; i++)
		fill_page(fa->addr + i * pagesize, 1, i);
	if (kind == FOLIO_PMD) {
		long kb = anon_huge_kb(fa->addr);

		if (kb * 1024 != (long)fa->size) {
			snprintf(why, whylen, "no PMD THP (AnonHugePages %ld kB)",
				 kb);
			goto fail;
		}
		/* Split the PMD, not the folio: a round trip on one page. */
		if (mprotect(fa->addr, pagesize, PROT_READ) ||
		    mprotect(fa->addr, pagesize, PROT_READ | PROT_WRITE)) {
			snprintf(why, whylen, "mprotect: %s", strerror(errno));
			goto fail;
		}
		if (anon_huge_kb(fa->addr) != 0) {
			snprintf(why, whylen, "the PMD was not split into PTEs");
			goto fail;
		}
	}
	if (!is_one_large_folio(fa->addr, fa->nr)) {
		snprintf(why, whylen, "the kernel gave no %zuK folio",
			 fa->size >> 10);
		goto fail;
	}
	return 0;
fail:
	munmap(fa->addr, fa->size);
	return -1;
}

/*
 * The page the cases write first (M): M-1, M, M+1 and M+2 lie in one
 * naturally aligned block of 16 pages, the reuse window, whether the
 * folio has 16 pages or 512 (M is 10 or 258).
 */
static size_t middle_page(size_t nr)
{
	return nr >= 16 ? nr / 2 + 2 : 1;
}

/* fork(), the child exits at once: every PTE read-only, the folio exclusive again. */
static int fork_and_reap(void)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(0);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return 0;
}

/*
 * This thread's page faults so far.  Only printed, never asserted: it
 * shows whether a write found its PTE already made writable by an earlier
 * fault's reuse window (the seeds kernel) or faulted itself (mainline).
 */
static long minor_faults(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return -1;
	return ru.ru_minflt;
}

/* ------------------------------------------------------------------ */
/* Stores that may fault */

static sigjmp_buf probe_jmp;
static volatile sig_atomic_t probing;

static void probe_segv(int sig)
{
	if (!probing) {
		fatal_signal(sig);
		return;
	}
	siglongjmp(probe_jmp, 1);
}

/* Store @v at @p; whether it raised SIGSEGV (and was not done). */
static bool store_segfaults(volatile char *p, char v)
{
	struct sigaction sa = { .sa_handler = probe_segv }, old;
	bool faulted = false;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old);
	if (sigsetjmp(probe_jmp, 1) == 0) {
		probing = 1;
		*p = v;
		probing = 0;
	} else {
		probing = 0;
		faulted = true;
	}
	sigaction(SIGSEGV, &old, NULL);
	return faulted;
}

/* ------------------------------------------------------------------ */
/* The cases.  Each returns KSFT_PASS, KSFT_FAIL or KSFT_SKIP, with a reason. */

#define FAIL(...) do { snprintf(why, whylen, __VA_ARGS__); ret = KSFT_FAIL; goto out; } while (0)
#define SKIP(...) do { snprintf(why, whylen, __VA_ARGS__); ret = KSFT_SKIP; goto out; } while (0)

/*
 * A write fault's reuse window must stop at the VMA: the PTE of a
 * PROT_READ neighbour inside the same folio and window stays read-only.
 */
static int case_prot_read(enum folio_kind kind, char *why, size_t whylen)
{
	struct folio_area fa;
	size_t m, i;
	uint64_t before, after;
	int ret = KSFT_PASS;
	long faults;

	if (make_folio(kind, &fa, why, whylen))
		return KSFT_SKIP;
	m = middle_page(fa.nr);
	if (fork_and_reap())
		SKIP("fork: %s", strerror(errno));
	if (mprotect(fa.addr + (m + 1) * pagesize, pagesize, PROT_READ))
		SKIP("mprotect PROT_READ: %s", strerror(errno));
	if (!is_one_large_folio(fa.addr, fa.nr))
		SKIP("the folio was split before the writes");
	before = pagemap_entry(fa.addr + (m + 1) * pagesize);

	fill_page(fa.addr + m * pagesize, 2, m);
	/* In page M's VMA and window: the seeds kernel made it writable. */
	faults = minor_faults();
	fill_page(fa.addr + (m - 1) * pagesize, 2, m - 1);
	ksft_print_msg("%s prot-read: the store to page %zu after page %zu's "
		       "took %ld fault(s)\n", kinds[kind].name, m - 1, m,
		       minor_faults() - faults);
	fill_page(fa.addr + (m + 2) * pagesize, 2, m + 2);

	if (!store_segfaults(fa.addr + (m + 1) * pagesize, 0x5a))
		FAIL("a store to the PROT_READ page %zu did not SIGSEGV", m + 1);
	after = pagemap_entry(fa.addr + (m + 1) * pagesize);
	if (!(after & PM_PRESENT) ||
	    (after & PM_PFN_MASK) != (before & PM_PFN_MASK))
		FAIL("the PROT_READ page %zu moved (pagemap %#llx -> %#llx)",
		     m + 1, (unsigned long long)before,
		     (unsigned long long)after);
	for (i = 0; i < fa.nr; i++) {
		unsigned int tag = (i + 1 == m || i == m || i == m + 2) ? 2 : 1;

		if (!page_is(fa.addr + i * pagesize, tag, i))
			FAIL("page %zu does not hold its contents %u", i, tag);
	}
out:
	munmap(fa.addr, fa.size);
	return ret;
}

/*
 * A page spliced into a pipe is referenced by the pipe: the parent's
 * writes must copy it, never reuse it, so the pipe keeps the old data
 * (the vmsplice COW hazard, CVE-2020-29374), whether the page was
 * spliced before fork() or after the child's exit.
 */
static int case_vmsplice(enum folio_kind kind, bool before_fork, char *why,
			 size_t whylen)
{
	struct folio_area fa;
	int pipefd[2] = { -1, -1 }, ret = KSFT_PASS;
	char *buf = NULL;
	struct iovec iov;
	size_t m, i, got = 0;

	if (make_folio(kind, &fa, why, whylen))
		return KSFT_SKIP;
	m = middle_page(fa.nr);
	buf = malloc(pagesize);
	if (!buf || pipe(pipefd))
		SKIP("pipe: %s", strerror(errno));
	iov.iov_base = fa.addr + (m + 1) * pagesize;
	iov.iov_len = pagesize;
	if (before_fork && vmsplice(pipefd[1], &iov, 1, 0) != (ssize_t)pagesize)
		SKIP("vmsplice: %s", strerror(errno));
	if (fork_and_reap())
		SKIP("fork: %s", strerror(errno));
	if (!before_fork && vmsplice(pipefd[1], &iov, 1, 0) != (ssize_t)pagesize)
		SKIP("vmsplice: %s", strerror(errno));
	if (!is_one_large_folio(fa.addr, fa.nr))
		SKIP("the folio was split before the writes");

	/* The neighbour first: its fault's window holds the spliced page. */
	fill_page(fa.addr + m * pagesize, 2, m);
	for (i = 0; i < fa.nr; i++)
		fill_page(fa.addr + i * pagesize, 2, i);

	while (got < pagesize) {
		ssize_t n = read(pipefd[0], buf + got, pagesize - got);

		if (n <= 0)
			FAIL("reading the pipe: %s", n ? strerror(errno) : "EOF");
		got += (size_t)n;
	}
	if (!page_is(buf, 1, m + 1))
		FAIL("the pipe's page changed with the parent's writes "
		     "(byte 0 %#x, old %#x, new %#x)", (uint8_t)buf[0],
		     pattern(1, m + 1), pattern(2, m + 1));
	for (i = 0; i < fa.nr; i++)
		if (!page_is(fa.addr + i * pagesize, 2, i))
			FAIL("page %zu does not hold the parent's write", i);
out:
	if (pipefd[0] >= 0) {
		close(pipefd[0]);
		close(pipefd[1]);
	}
	free(buf);
	munmap(fa.addr, fa.size);
	return ret;
}

/* Is each page of @fa soft-dirty as @want says?  If not, *@bad is the first that is not. */
static bool soft_dirty_only(const struct folio_area *fa, const bool *want,
			    size_t *bad)
{
	size_t i;

	for (i = 0; i < fa->nr; i++) {
		bool sd = pagemap_entry(fa->addr + i * pagesize) & PM_SOFT_DIRTY;

		if (sd != want[i]) {
			*bad = i;
			return false;
		}
	}
	return true;
}

/*
 * Soft-dirty tracking needs a write fault per page: a store to one page
 * must not make its neighbours soft-dirty (nor writable without a fault
 * that marks them), whether the pages are exclusive or the folio is
 * exclusive again after fork().
 */
static int case_soft_dirty(enum folio_kind kind, char *why, size_t whylen)
{
	struct folio_area fa;
	bool *want = NULL;
	size_t m, bad = 0;
	int ret = KSFT_PASS;

	if (make_folio(kind, &fa, why, whylen))
		return KSFT_SKIP;
	m = middle_page(fa.nr);
	want = calloc(fa.nr, sizeof(*want));
	if (!want)
		SKIP("out of memory");
	if (write_file("/proc/self/clear_refs", "4"))
		SKIP("clear_refs 4: %s", strerror(errno));
	if (!soft_dirty_only(&fa, want, &bad))
		SKIP("page %zu is soft-dirty right after clear_refs 4: no "
		     "soft-dirty tracking (CONFIG_MEM_SOFT_DIRTY)", bad);
	fill_page(fa.addr + m * pagesize, 2, m);
	want[m] = true;
	if (!(pagemap_entry(fa.addr + m * pagesize) & PM_SOFT_DIRTY))
		SKIP("a written page is not soft-dirty: no soft-dirty "
		     "tracking (CONFIG_MEM_SOFT_DIRTY)");
	if (!soft_dirty_only(&fa, want, &bad))
		FAIL("exclusive pages: after a store to page %zu, page %zu "
		     "is %ssoft-dirty", m, bad, want[bad] ? "not " : "");

	/* Again with every PTE read-only after fork(), the folio exclusive. */
	if (fork_and_reap())
		SKIP("fork: %s", strerror(errno));
	if (write_file("/proc/self/clear_refs", "4"))
		SKIP("clear_refs 4: %s", strerror(errno));
	if (!is_one_large_folio(fa.addr, fa.nr))
		SKIP("the folio was split before the writes");
	memset(want, 0, fa.nr * sizeof(*want));
	fill_page(fa.addr + (m + 1) * pagesize, 2, m + 1);
	want[m + 1] = true;
	if (!soft_dirty_only(&fa, want, &bad))
		FAIL("after fork: after a store to page %zu, page %zu is "
		     "%ssoft-dirty", m + 1, bad, want[bad] ? "not " : "");
	fill_page(fa.addr + m * pagesize, 3, m);
	want[m] = true;
	if (!soft_dirty_only(&fa, want, &bad))
		FAIL("after fork: after stores to pages %zu and %zu, page %zu "
		     "is %ssoft-dirty", m + 1, m, bad, want[bad] ? "not " : "");
	if (!page_is(fa.addr + m * pagesize, 3, m) ||
	    !page_is(fa.addr + (m + 2) * pagesize, 1, m + 2))
		FAIL("the pages do not hold what was written");
out:
	free(want);
	munmap(fa.addr, fa.size);
	return ret;
}

struct wp_store {
	volatile char *p;
	char v;
};

static void *store_thread(void *arg)
{
	struct wp_store *s = arg;

	*s->p = s->v;
	return NULL;
}

/*
 * A uffd-wp PTE must keep its write-protection when a neighbour's write
 * fault reuses the folio, and a store to it must reach the monitor.
 */
static int case_uffd_wp(enum folio_kind kind, char *why, size_t whylen)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { 0 };
	struct uffdio_writeprotect wp = { 0 };
	struct wp_store st;
	struct folio_area fa;
	struct uffd_msg msg;
	struct pollfd pfd;
	pthread_t t;
	bool started = false;
	int uffd = -1, ret = KSFT_PASS;
	char *target;
	size_t m, i;

	if (make_folio(kind, &fa, why, whylen))
		return KSFT_SKIP;
	m = middle_page(fa.nr);
	target = fa.addr + (m + 1) * pagesize;
	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0)
		SKIP("userfaultfd: %s", strerror(errno));
	if (ioctl(uffd, UFFDIO_API, &api))
		SKIP("UFFDIO_API: %s", strerror(errno));
	if (!(api.features & UFFD_FEATURE_PAGEFAULT_FLAG_WP))
		SKIP("this kernel has no uffd-wp for anonymous memory");
	/* Registered after the fork: a child would not inherit it anyway. */
	if (fork_and_reap())
		SKIP("fork: %s", strerror(errno));
	reg.range.start = (uintptr_t)fa.addr;
	reg.range.len = fa.size;
	reg.mode = UFFDIO_REGISTER_MODE_WP;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		SKIP("UFFDIO_REGISTER (WP): %s", strerror(errno));
	wp.range.start = (uintptr_t)target;
	wp.range.len = pagesize;
	wp.mode = UFFDIO_WRITEPROTECT_MODE_WP;
	if (ioctl(uffd, UFFDIO_WRITEPROTECT, &wp))
		SKIP("UFFDIO_WRITEPROTECT: %s", strerror(errno));
	if (!(pagemap_entry(target) & PM_UFFD_WP))
		SKIP("pagemap shows no uffd-wp bit on the protected page");
	if (!is_one_large_folio(fa.addr, fa.nr))
		SKIP("the folio was split before the writes");

	fill_page(fa.addr + m * pagesize, 2, m);
	fill_page(fa.addr + (m + 2) * pagesize, 2, m + 2);
	if (!(pagemap_entry(target) & PM_UFFD_WP))
		FAIL("page %zu lost its uffd-wp bit when its neighbours were "
		     "written", m + 1);

	st.p = target;
	st.v = (char)0xa5;
	if (pthread_create(&t, NULL, store_thread, &st))
		SKIP("pthread_create failed");
	started = true;
	pfd.fd = uffd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, 10000) != 1)
		FAIL("no uffd event for a store to the write-protected page "
		     "%zu in 10 s", m + 1);
	if (read(uffd, &msg, sizeof(msg)) != sizeof(msg))
		FAIL("reading the uffd event: %s", strerror(errno));
	if (msg.event != UFFD_EVENT_PAGEFAULT ||
	    !(msg.arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WP) ||
	    (msg.arg.pagefault.address & ~(uint64_t)(pagesize - 1)) !=
		    (uintptr_t)target)
		FAIL("unexpected uffd event %u flags %#llx address %#llx",
		     msg.event, (unsigned long long)msg.arg.pagefault.flags,
		     (unsigned long long)msg.arg.pagefault.address);
out:
	if (started) {
		/* Let the store go on: drop the protection (wakes the fault). */
		wp.range.start = (uintptr_t)target;
		wp.range.len = pagesize;
		wp.mode = 0;
		if (ioctl(uffd, UFFDIO_WRITEPROTECT, &wp) && ret == KSFT_PASS) {
			snprintf(why, whylen, "UFFDIO_WRITEPROTECT (un-protect): %s",
				 strerror(errno));
			ret = KSFT_FAIL;
		}
		pthread_join(t, NULL);
		if (ret == KSFT_PASS && (uint8_t)*target != 0xa5) {
			snprintf(why, whylen, "the store to page %zu was lost", m + 1);
			ret = KSFT_FAIL;
		}
		for (i = 0; ret == KSFT_PASS && i < fa.nr; i++) {
			unsigned int tag = (i == m || i == m + 2) ? 2 : 1;

			if (i != m + 1 && !page_is(fa.addr + i * pagesize, tag, i)) {
				snprintf(why, whylen, "page %zu does not hold its "
					 "contents %u", i, tag);
				ret = KSFT_FAIL;
			}
		}
	}
	if (uffd >= 0)
		close(uffd);
	munmap(fa.addr, fa.size);
	return ret;
}

/* ------------------------------------------------------------------ */
/* GUP-fast racing fork() and mprotect() */

struct race {
	struct folio_area fa;
	int gup_fd;
	_Atomic unsigned long rounds;	/* the last round written in full */
	atomic_bool stop;
	/* the pinner's findings */
	unsigned long pins, checks;
	char failure[256];
	int pin_errno;
};

static uint64_t read_seq(const char *p)
{
	return *(const volatile uint64_t *)p;
}

static void write_seq(char *p, uint64_t v)
{
	*(volatile uint64_t *)p = v;
}

/*
 * Pin the whole folio with pin_user_pages_fast(), wait until the main
 * thread has written it twice more, and read the pinned pages: they
 * must hold at least the first of those writes.  A pinned page that a
 * fork() or an mprotect() took away from the parent would be stuck at an
 * older round.
 */
static void *pinner(void *arg)
{
	struct race *r = arg;
	char *buf = malloc(r->fa.size);
	unsigned int flags_cycle = 0;

	if (!buf) {
		snprintf(r->failure, sizeof(r->failure), "out of memory");
		return NULL;
	}
	while (!atomic_load(&r->stop) && !r->failure[0]) {
		struct pin_longterm_test args = {
			.addr = (uintptr_t)r->fa.addr,
			.size = r->fa.size,
			.flags = PIN_LONGTERM_TEST_FLAG_USE_FAST |
				 ((flags_cycle++ & 1) ?
					  PIN_LONGTERM_TEST_FLAG_USE_WRITE : 0),
		};
		uint64_t addr = (uintptr_t)buf;
		unsigned long r0;
		size_t i;

		if (ioctl(r->gup_fd, PIN_LONGTERM_TEST_START, &args)) {
			/* A write pin of a range mprotect()ed read-only: EFAULT. */
			if (errno != EFAULT)
				r->pin_errno = errno;
			continue;
		}
		r->pins++;
		r0 = atomic_load(&r->rounds);
		while (atomic_load(&r->rounds) < r0 + 2 && !atomic_load(&r->stop))
			sched_yield();
		if (atomic_load(&r->rounds) >= r0 + 2) {
			if (ioctl(r->gup_fd, PIN_LONGTERM_TEST_READ, &addr)) {
				snprintf(r->failure, sizeof(r->failure),
					 "PIN_LONGTERM_TEST_READ: %s",
					 strerror(errno));
			} else {
				r->checks++;
				for (i = 0; i < r->fa.nr; i++) {
					uint64_t v = read_seq(buf + i * pagesize);

					if (v >= r0 + 1)
						continue;
					snprintf(r->failure, sizeof(r->failure),
						 "%s pin: pinned page %zu holds "
						 "round %llu, the parent wrote "
						 "round %lu after pinning",
						 (args.flags & PIN_LONGTERM_TEST_FLAG_USE_WRITE) ?
							 "write" : "read-only",
						 i, (unsigned long long)v, r0 + 1);
					break;
				}
			}
		}
		ioctl(r->gup_fd, PIN_LONGTERM_TEST_STOP);
	}
	free(buf);
	return NULL;
}

/* A forked child: its memory holds round @v now and a little later. */
static void child_checks_snapshot(const struct folio_area *fa, uint64_t v)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };
	int pass;
	size_t i;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < fa->nr; i++)
			if (read_seq(fa->addr + i * pagesize) != v)
				_exit(1 + pass);
		nanosleep(&ts, NULL);	/* the parent writes meanwhile */
	}
	_exit(0);
}

static int case_gup_race(enum folio_kind kind, char *why, size_t whylen)
{
	const double seconds = 3;
	struct race *r = calloc(1, sizeof(*r));
	struct timespec t0, now;
	unsigned long round, forks = 0;
	pid_t child = 0;
	pthread_t t;
	bool started = false;
	int ret = KSFT_PASS, status;
	size_t i;

	if (!r) {
		snprintf(why, whylen, "out of memory");
		return KSFT_SKIP;
	}
	r->gup_fd = -1;
	if (make_folio(kind, &r->fa, why, whylen)) {
		free(r);
		return KSFT_SKIP;
	}
	r->gup_fd = open(GUP_TEST_FILE, O_RDWR | O_CLOEXEC);
	if (r->gup_fd < 0)
		SKIP("%s: %s (CONFIG_GUP_TEST, debugfs)", GUP_TEST_FILE,
		     strerror(errno));
	for (i = 0; i < r->fa.nr; i++)
		write_seq(r->fa.addr + i * pagesize, 0);
	if (pthread_create(&t, NULL, pinner, r))
		SKIP("pthread_create failed");
	started = true;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (round = 1;; round++) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec + (now.tv_nsec - t0.tv_nsec) / 1e9 >
		    seconds || r->failure[0])
			break;
		/* Every PTE read-only and back, racing the pins. */
		if (mprotect(r->fa.addr, r->fa.size, PROT_READ) ||
		    mprotect(r->fa.addr, r->fa.size, PROT_READ | PROT_WRITE))
			FAIL("mprotect: %s", strerror(errno));
		for (i = 0; i < r->fa.nr; i++)
			write_seq(r->fa.addr + i * pagesize, round);
		atomic_store(&r->rounds, round);
		if (round % 3)
			continue;
		/* The last child first: one at a time keeps TCG guests quick. */
		if (child > 0) {
			if (waitpid(child, &status, 0) != child)
				FAIL("waitpid: %s", strerror(errno));
			child = 0;
			if (!WIFEXITED(status) || WEXITSTATUS(status))
				FAIL("a child did not keep its snapshot (status %#x: "
				     "%s)", status, WIFEXITED(status) &&
				     WEXITSTATUS(status) == 2 ? "it saw a later "
				     "write" : "it saw a wrong round at fork");
		}
		child = fork();
		if (child < 0)
			FAIL("fork: %s", strerror(errno));
		if (child == 0)
			child_checks_snapshot(&r->fa, round);
		forks++;
	}
	atomic_store(&r->stop, true);
	pthread_join(t, NULL);
	started = false;
	if (child > 0) {
		if (waitpid(child, &status, 0) != child)
			FAIL("waitpid: %s", strerror(errno));
		child = 0;
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			FAIL("a child did not keep its snapshot (status %#x)",
			     status);
	}
	if (r->failure[0])
		FAIL("%s", r->failure);
	if (!r->pins)
		FAIL("no pin succeeded (%s)", r->pin_errno ?
		     strerror(r->pin_errno) : "every write pin got EFAULT");
	if (!r->checks)
		SKIP("no pin was held over two rounds (%lu pins, %lu rounds)",
		     r->pins, round);
	for (i = 0; i < r->fa.nr; i++)
		if (read_seq(r->fa.addr + i * pagesize) != round - 1 &&
		    read_seq(r->fa.addr + i * pagesize) != round)
			FAIL("page %zu holds round %llu after the last round %lu",
			     i, (unsigned long long)read_seq(r->fa.addr + i * pagesize),
			     round - 1);
	ksft_print_msg("%s gup-race: %lu rounds, %lu forks, %lu pins, %lu "
		       "checked\n", kinds[kind].name, round - 1, forks, r->pins,
		       r->checks);
out:
	atomic_store(&r->stop, true);
	if (started)
		pthread_join(t, NULL);
	if (child > 0)
		waitpid(child, NULL, 0);
	if (r->gup_fd >= 0)
		close(r->gup_fd);
	munmap(r->fa.addr, r->fa.size);
	free(r);
	return ret;
}

/* ------------------------------------------------------------------ */

static int run_vmsplice_before(enum folio_kind k, char *why, size_t len)
{
	return case_vmsplice(k, true, why, len);
}

static int run_vmsplice_after(enum folio_kind k, char *why, size_t len)
{
	return case_vmsplice(k, false, why, len);
}

static const struct {
	const char *name;
	int (*run)(enum folio_kind kind, char *why, size_t whylen);
} cases[] = {
	{ "prot-read neighbour stays read-only", case_prot_read },
	{ "vmsplice before fork keeps the pipe's data", run_vmsplice_before },
	{ "vmsplice after fork keeps the pipe's data", run_vmsplice_after },
	{ "soft-dirty only on the page written", case_soft_dirty },
	{ "uffd-wp neighbour stays write-protected", case_uffd_wp },
	{ "GUP-fast pins racing fork and mprotect stay coherent", case_gup_race },
};

int main(void)
{
	size_t c;
	int k;

	pagesize = (size_t)sysconf(_SC_PAGESIZE);
	ksft_print_header();
	ksft_set_plan(NR_FOLIO_KINDS * sizeof(cases) / sizeof(cases[0]));
	watch_fatal_signals();
	pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	kpageflags_fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	probe_kinds();
	ksft_print_msg("page size %zuK, mTHP %zuK, PMD THP %zuK\n",
		       pagesize >> 10, kinds[FOLIO_MTHP].size >> 10,
		       kinds[FOLIO_PMD].size >> 10);

	for (k = 0; k < NR_FOLIO_KINDS; k++) {
		for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
			char why[512] = "";
			int ret;

			if (pagemap_fd < 0 || kpageflags_fd < 0) {
				ksft_test_result_skip("%s: %s: cannot read "
						      "pagemap or kpageflags (root?)\n",
						      kinds[k].name, cases[c].name);
				continue;
			}
			ret = cases[c].run(k, why, sizeof(why));
			if (ret == KSFT_PASS)
				ksft_test_result_pass("%s %zuK: %s\n", kinds[k].name,
						      kinds[k].size >> 10,
						      cases[c].name);
			else if (ret == KSFT_FAIL)
				ksft_test_result_fail("%s %zuK: %s: %s\n",
						      kinds[k].name,
						      kinds[k].size >> 10,
						      cases[c].name, why);
			else
				ksft_test_result_skip("%s: %s: %s\n", kinds[k].name,
						      cases[c].name, why);
		}
	}
	restore_settings();
	ksft_finished();
}
