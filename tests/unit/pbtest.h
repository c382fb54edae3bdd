/*
 * pbtest.h - what the model's unit tests share: a per-test pass/fail
 * accumulator on top of tests/tap.h (one TAP line per test function, a
 * "# file:line: ..." diagnostic for every failed expectation), machine
 * bring-up with a frame-leak check at the end of each test, and
 * white-box lookups (the mm of a process, the entry mapping an address,
 * the folio of a pfn).
 *
 * Include after tests/tap.h, from one .c file per program.
 */
#ifndef TESTS_UNIT_PBTEST_H
#define TESTS_UNIT_PBTEST_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptebatch.h"
#include "mm/pgtable.h"
#include "tests/tap.h"

#define SZ_4K	(4UL << 10)
#define SZ_16K	(16UL << 10)
#define SZ_32K	(32UL << 10)
#define SZ_64K	(64UL << 10)
#define SZ_1M	(1UL << 20)
#define SZ_2M	(2UL << 20)
#define SZ_64M	(64UL << 20)

/*
 * Sizes in base pages.  The tests were written for 4K pages, where a
 * "64K folio" is 16 pages and "2M" is the PMD size; PAGES(16) keeps the
 * 16 pages on every granule (a 256K folio with 16K pages, 1M with 64K -
 * mTHP order 4 exists on all of them) and PMD_SIZE the PMD.  Test names
 * keep the 4K sizes.
 */
#define PAGES(n)	((unsigned long)(n) * PAGE_SIZE)

/*
 * A PMD-aligned address far from everything else, and a second one:
 * 256M and 512M, or two and four PMDs where a PMD is larger (64K pages).
 */
#define ADDR_A	(PMD_SIZE > (64UL << 20) ? 2 * PMD_SIZE : 0x10000000UL)
#define ADDR_B	(2 * ADDR_A)

/* ---- the per-test accumulator ---------------------------------------- */

static struct {
	bool ok;
	bool up;		/* pb_init succeeded */
	unsigned long baseline;	/* frames in use right after pb_init */
} t;

static inline bool t_expect_at(bool cond, const char *expr, const char *file,
			       int line)
{
	if (!cond) {
		tap_diag("%s:%d: expected %s", file, line, expr);
		t.ok = false;
	}
	return cond;
}

static inline bool t_expect_eq_at(long long got, long long want,
				  const char *gexpr, const char *wexpr,
				  const char *file, int line)
{
	if (got != want) {
		tap_diag("%s:%d: %s is %lld (%#llx), expected %s = %lld (%#llx)",
			 file, line, gexpr, got, (unsigned long long)got,
			 wexpr, want, (unsigned long long)want);
		t.ok = false;
	}
	return got == want;
}

/* Record a failure unless @cond holds; returns @cond. */
#define EXPECT(cond) t_expect_at(!!(cond), #cond, __FILE__, __LINE__)
/* Record a failure unless got == want, showing both. */
#define EXPECT_EQ(got, want) \
	t_expect_eq_at((long long)(got), (long long)(want), #got, #want, \
		       __FILE__, __LINE__)
/* The invariant checker finds nothing (its report goes to stderr). */
#define EXPECT_CLEAN() EXPECT_EQ(pb_check(stderr), 0)

/*
 * Bring up a machine of @bytes for one test, at least the four PMD-size
 * blocks pb_init() needs (2G with 64K pages): the frames cost nothing
 * until used.
 */
static inline bool t_begin(unsigned long bytes)
{
	struct pb_config cfg = { .memory_bytes = bytes > 4 * PMD_SIZE ? bytes
						    : 4 * PMD_SIZE };
	int err = pb_init(&cfg);

	t.ok = true;
	t.up = err == 0;
	if (!t.up) {
		tap_diag("pb_init(%lu) failed: %d", bytes, err);
		t.ok = false;
		return false;
	}
	t.baseline = pb_frames_in_use();
	return true;
}

/*
 * Finish a test: everything it created must be gone (no frame leaked,
 * the checker clean), then the machine goes down.
 */
static inline void t_finish(void)
{
	if (t.up) {
		EXPECT_CLEAN();
		EXPECT_EQ(pb_frames_in_use(), t.baseline);
		pb_fini();
		t.up = false;
	}
}

/* t_finish(), then the test's TAP line. */
static inline void __attribute__((format(printf, 1, 2)))
t_end(const char *fmt, ...)
{
	char name[256];
	va_list ap;

	t_finish();
	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	tap_ok(t.ok, "%s", name);
}

/*
 * Run @body in a forked host process, so that a crash of the model (a
 * use-after-free, a double free) fails this one test instead of killing
 * every later one.  @body runs a whole test from t_begin() to t_finish()
 * and leaves its verdict in t.ok; the TAP line is printed here.
 */
static inline void __attribute__((format(printf, 2, 3)))
t_isolated(void (*body)(void), const char *fmt, ...)
{
	char name[256];
	va_list ap;
	pid_t pid;
	int status = 0;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		setvbuf(stdout, NULL, _IOLBF, 0);	/* diagnostics survive a kill */
		alarm(10);	/* a hang in the model is a failure too */
		body();
		fflush(stdout);
		fflush(stderr);
		_exit(t.ok ? 0 : 1);
	}
	t.ok = pid > 0 && waitpid(pid, &status, 0) == pid;
	if (!t.ok)
		tap_diag("fork/waitpid of the isolated test failed");
	else if (WIFSIGNALED(status))
		tap_diag("the model crashed or hung: signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else if (WIFEXITED(status) && WEXITSTATUS(status))
		tap_diag("the test failed (exit status %d)", WEXITSTATUS(status));
	tap_ok(t.ok && WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s", name);
}

/* ---- processes, with their mm for white-box checks -------------------- */

#define T_MAX_PROCS 16

static struct {
	struct pb_proc *proc;
	struct mm_struct *mm;
} t_procs[T_MAX_PROCS];

static inline void t_newest_mm_cb(struct mm_struct *mm, void *arg)
{
	*(struct mm_struct **)arg = mm;
}

/* The registry keeps creation order: the last mm is the newest. */
static inline void t_remember(struct pb_proc *proc)
{
	struct mm_struct *mm = NULL;
	int i;

	mm_registry_for_each(t_newest_mm_cb, &mm);
	for (i = 0; i < T_MAX_PROCS; i++) {
		if (!t_procs[i].proc) {
			t_procs[i].proc = proc;
			t_procs[i].mm = mm;
			return;
		}
	}
	EXPECT(!"too many processes for pbtest.h");
}

static inline struct mm_struct *mm_of(struct pb_proc *proc)
{
	int i;

	for (i = 0; i < T_MAX_PROCS; i++)
		if (t_procs[i].proc == proc)
			return t_procs[i].mm;
	return NULL;
}

static inline struct pb_proc *t_proc(void)
{
	struct pb_proc *p = NULL;

	if (!EXPECT_EQ(pb_proc_create(&p), 0))
		return NULL;
	t_remember(p);
	return p;
}

static inline struct pb_proc *t_fork(struct pb_proc *parent)
{
	struct pb_proc *c = NULL;

	if (!EXPECT_EQ(pb_fork(parent, &c), 0))
		return NULL;
	t_remember(c);
	return c;
}

static inline void t_exit(struct pb_proc *proc)
{
	int i;

	if (!proc)
		return;
	for (i = 0; i < T_MAX_PROCS; i++)
		if (t_procs[i].proc == proc)
			t_procs[i].proc = NULL;
	pb_exit(proc);
}

/* A process with one mapping [addr, addr + len) of @prot. */
static inline struct pb_proc *t_proc_map(unsigned long addr, unsigned long len,
					 int prot)
{
	struct pb_proc *p = t_proc();

	if (p && !EXPECT_EQ(pb_mmap(p, addr, len, prot), 0)) {
		t_exit(p);
		return NULL;
	}
	return p;
}

/* ---- looking at state ------------------------------------------------- */

static inline struct pb_page_info t_page(struct pb_proc *p, unsigned long addr)
{
	struct pb_page_info info;

	memset(&info, 0, sizeof(info));
	pb_observe(p, addr, 1, &info);
	return info;
}

static inline unsigned long t_pfn(struct pb_proc *p, unsigned long addr)
{
	struct pb_page_info info = t_page(p, addr);

	return info.present ? info.pfn : 0;
}

static inline struct folio *t_folio(unsigned long pfn)
{
	return page_folio(pfn_to_page(pfn));
}

/*
 * The leaf entry mapping @addr in @p: a PTE, or a huge PMD (as a pte_t,
 * *huge set).  A zero entry when nothing maps it.
 */
static inline pte_t t_entry(struct pb_proc *p, unsigned long addr, bool *huge)
{
	struct addr_lookup found;

	lookup_addr(mm_of(p), addr, &found);
	if (huge)
		*huge = found.level == ADDR_PMD_LEAF;
	return found.entry;
}

static inline bool t_writable(struct pb_proc *p, unsigned long addr)
{
	return pte_write(t_entry(p, addr, NULL));
}

static inline bool t_pmd_mapped(struct pb_proc *p, unsigned long addr)
{
	bool huge;

	t_entry(p, addr, &huge);
	return huge;
}

static inline uint64_t t_stat(enum pb_stat stat)
{
	uint64_t v[PB_NR_STATS];

	pb_stats_read(v);
	return v[stat];
}

/* Store @base + i at the first byte of each of @n pages from @addr. */
static inline bool t_fill(struct pb_proc *p, unsigned long addr,
			  unsigned long n, uint8_t base)
{
	unsigned long i;
	bool ok = true;

	for (i = 0; i < n; i++)
		ok &= pb_store(p, 0, addr + i * PAGE_SIZE, (uint8_t)(base + i)) == 0;
	return EXPECT(ok);
}

/* Does each of @n pages from @addr read back @base + i? */
static inline bool t_data_is(struct pb_proc *p, unsigned long addr,
			     unsigned long n, uint8_t base)
{
	unsigned long i;
	uint8_t v;

	for (i = 0; i < n; i++) {
		v = 0;
		if (pb_load(p, 0, addr + i * PAGE_SIZE, &v) ||
		    v != (uint8_t)(base + i)) {
			tap_diag("page %lu at %#lx reads %#x, expected %#x", i,
				 addr + i * PAGE_SIZE, v, (uint8_t)(base + i));
			return false;
		}
	}
	return true;
}

#endif /* TESTS_UNIT_PBTEST_H */
