/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pbtest.h - what the model's unit tests share: a per-test pass/fail
 * accumulator on top of tests/tap.h (one TAP line per test function, a
 * "# file:line: ..." diagnostic for every failed expectation), machine
 * bring-up with a frame-leak check at the end of each test, and the
 * fixtures a test starts from: a variant by name, anonymous folios of a
 * size, a process with a region written, the kinds of memory the
 * isolation cases run on, fork with a child that exits; then what tests
 * look at: counter deltas, pages, frames, write bits and exclusivity,
 * and white-box lookups (the mm of a process, the entry mapping an
 * address, the folio of a pfn).  What needs no machine is in fixture.h.
 *
 * Include from one .c file per program.
 */
#ifndef TESTS_UNIT_PBTEST_H
#define TESTS_UNIT_PBTEST_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptebatch.h"
#include "mm/pgtable.h"
#include "tests/tap.h"
#include "tests/unit/fixture.h"

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

/* What every private anonymous region of the tests is mapped with. */
#define RW	(PB_PROT_READ | PB_PROT_WRITE)

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

/* ---- how the machine runs ---------------------------------------------- */

/*
 * Run the machine under t_variant_make(@preset, @sets) (fixture.h), e.g.
 * t_variant("seeds", "gup_batch=0,wp_reuse_max=1"); a name that does not
 * exist fails the test and leaves the variant as it was.
 */
static inline bool t_variant(const char *preset, const char *sets)
{
	struct pb_variant v;

	if (!EXPECT(t_variant_make(preset, sets, &v)))
		return false;
	pb_set_variant(&v);
	return true;
}

/*
 * t_begin(@bytes), with anonymous faults making folios of @folio bytes
 * where they fit: that mTHP or THP size "always".  PAGE_SIZE leaves the
 * policies as pb_init() sets them: small folios (the PMD size is
 * "madvise").
 */
static inline bool t_begin_folios(unsigned long bytes, unsigned long folio)
{
	if (!t_begin(bytes))
		return false;
	return folio == PAGE_SIZE ||
	       EXPECT_EQ(pb_set_thp_policy(folio, PB_THP_ALWAYS), 0);
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

/*
 * Map [addr, addr + len) read-write in @p and write it (t_fill): every
 * page faulted in, in folios of the size the policy allows, page i
 * holding @base + i.
 */
static inline bool t_map_written(struct pb_proc *p, unsigned long addr,
				 unsigned long len, uint8_t base)
{
	return EXPECT_EQ(pb_mmap(p, addr, len, RW), 0) &&
	       t_fill(p, addr, len / PAGE_SIZE, base);
}

/*
 * A process with one such region, e.g. 1M of 64K folios (with 4K pages)
 * written:
 *
 *	t_begin_folios(SZ_64M, PAGES(16));
 *	p = t_proc_written(ADDR_A, PAGES(256), 0);
 *
 * NULL if the mapping fails; a failed write fails the test but still
 * returns the process, for the caller to t_exit().
 */
static inline struct pb_proc *t_proc_written(unsigned long addr,
					     unsigned long len, uint8_t base)
{
	struct pb_proc *p = t_proc_map(addr, len, RW);

	if (p)
		t_fill(p, addr, len / PAGE_SIZE, base);
	return p;
}

/*
 * Share all of @p with a child that exits at once: afterwards @p is again
 * the only mapper of its pages, but they are read-only and no longer
 * PageAnonExclusive - what a write fault after fork() and the child's
 * exit finds.  (Pages a pin holds stay exclusive: fork copies them.)
 */
static inline void t_fork_exit(struct pb_proc *p)
{
	t_exit(t_fork(p));
}

/* Release what a GUP took, if it took anything. */
static inline void t_release(struct pb_pages *pages, bool make_dirty)
{
	if (pages)
		pb_pages_release(pages, make_dirty);
}

/* ---- looking at pages and frames --------------------------------------- */

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

/* The folio of the page @p maps at @addr. */
static inline struct folio *t_folio_at(struct pb_proc *p, unsigned long addr)
{
	return t_folio(t_pfn(p, addr));
}

/* The frames @p maps at @n pages from @addr (0 where none), in @pfn. */
static inline void t_pfns(struct pb_proc *p, unsigned long addr,
			  unsigned long n, unsigned long *pfn)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		pfn[i] = t_pfn(p, addr + i * PAGE_SIZE);
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

/* ---- page-table entries (white-box) ----------------------------------- */

/* The PMD entry covering @addr in @p; none where there is no PMD table. */
static inline pmd_t t_pmd(struct pb_proc *p, unsigned long addr)
{
	pmd_t *pmdp = walk_to_pmd(mm_of(p), addr);

	return pmdp ? pmdp_get(pmdp) : __pmd(0);
}

/* The PTE slot of @addr in @p; NULL where no PTE table covers it. */
static inline pte_t *t_ptep(struct pb_proc *p, unsigned long addr)
{
	pmd_t pmd = t_pmd(p, addr);

	return pmd_is_table(pmd) ? pte_offset(pmd, addr) : NULL;
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

/* How many of the @n pages from @addr @p maps writable. */
static inline unsigned long t_nr_writable(struct pb_proc *p, unsigned long addr,
					  unsigned long n)
{
	unsigned long i, w = 0;

	for (i = 0; i < n; i++)
		w += t_writable(p, addr + i * PAGE_SIZE);
	return w;
}

static inline bool t_pmd_mapped(struct pb_proc *p, unsigned long addr)
{
	bool huge;

	t_entry(p, addr, &huge);
	return huge;
}

/*
 * Is the page @p maps at @addr an exclusive anon page?  A PMD-mapped
 * THP's head carries PageAnonExclusive for the whole folio.
 */
static inline bool t_exclusive(struct pb_proc *p, unsigned long addr)
{
	unsigned long pfn = t_pfn(p, addr);

	if (!pfn || !folio_test_anon(t_folio(pfn)))
		return false;
	if (t_pmd_mapped(p, addr))
		pfn = folio_pfn(t_folio(pfn));
	return PageAnonExclusive(pfn_to_page(pfn));
}

/*
 * Do (p, a) and (q, b) look the same for @n pages: present, folio size,
 * index in the folio, first byte and write bit?  Frames are not compared
 * (two regions never share them); the first difference is a diagnostic.
 */
static inline bool t_same_view(struct pb_proc *p, unsigned long a,
			       struct pb_proc *q, unsigned long b,
			       unsigned long n)
{
	struct pb_page_info *x = calloc(n, sizeof(*x)), *y = calloc(n, sizeof(*y));
	unsigned long i;
	bool ok = x && y;

	if (ok) {
		pb_observe(p, a, n, x);
		pb_observe(q, b, n, y);
		for (i = 0; i < n; i++) {
			if (x[i].present != y[i].present || x[i].folio_size != y[i].folio_size ||
			    x[i].index != y[i].index || x[i].data != y[i].data ||
			    t_writable(p, a + i * PAGE_SIZE) != t_writable(q, b + i * PAGE_SIZE)) {
				tap_diag("page %lu differs: present %d/%d size %lu/%lu index %lu/%lu "
					 "data %#x/%#x writable %d/%d", i, x[i].present, y[i].present,
					 x[i].folio_size, y[i].folio_size, x[i].index, y[i].index,
					 x[i].data, y[i].data, t_writable(p, a + i * PAGE_SIZE),
					 t_writable(q, b + i * PAGE_SIZE));
				ok = false;
				break;
			}
		}
	}
	free(x);
	free(y);
	return EXPECT(ok);
}

/* ---- what a step costs ------------------------------------------------- */

static inline uint64_t t_stat(enum pb_stat stat)
{
	uint64_t v[PB_NR_STATS];

	pb_stats_read(v);
	return v[stat];
}

/* The calling thread's cost counters at one moment (ptebatch_stats.h). */
struct t_snap {
	uint64_t v[PB_NR_STATS];
};

static inline void t_snap(struct t_snap *s)
{
	pb_stats_read(s->v);
}

/* How much @stat has grown since @s was taken. */
static inline uint64_t t_since(const struct t_snap *s, enum pb_stat stat)
{
	return t_stat(stat) - s->v[stat];
}

/* t_fill(), and the faults it took. */
static inline unsigned long t_fill_faults(struct pb_proc *p, unsigned long addr,
					  unsigned long n, uint8_t base)
{
	unsigned long f = pb_proc_faults(p);

	t_fill(p, addr, n, base);
	return pb_proc_faults(p) - f;
}

/* ---- the kinds of anonymous memory ------------------------------------- */

/*
 * What the isolation and security cases run on: small folios, 64K mTHP,
 * a 2M THP mapped by PTEs (its PMD split after the fault) and one mapped
 * by its PMD.  A region of a kind is 4 pages, one 16-page folio, or one
 * PMD.  (16 pages and the PMD size on other granules: PAGES(), PMD_SIZE.)
 */
enum t_kind { T_4K, T_64K, T_PTE_2M, T_PMD, T_NR_KINDS };

static inline unsigned long t_kind_len(enum t_kind k)
{
	return k == T_4K ? 4 * PAGE_SIZE : k == T_64K ? PAGES(16) : PMD_SIZE;
}

static inline unsigned long t_kind_folio(enum t_kind k)
{
	return k == T_4K ? PAGE_SIZE : k == T_64K ? PAGES(16) : PMD_SIZE;
}

/* Let faults make folios of kind @k (small folios need nothing). */
static inline void t_kind_policy(enum t_kind k)
{
	if (k != T_4K)
		EXPECT_EQ(pb_set_thp_policy(t_kind_folio(k), PB_THP_ALWAYS), 0);
}

/*
 * A new process whose [ADDR_A, + t_kind_len(k)) holds @base + i at page
 * i, in folios of kind @k - checked, and the checker clean.  NULL if the
 * mapping fails.
 */
static inline struct pb_proc *t_kind_region(enum t_kind k, uint8_t base)
{
	struct pb_proc *p;

	t_kind_policy(k);
	p = t_proc_written(ADDR_A, t_kind_len(k), base);
	if (!p)
		return NULL;
	if (k == T_PTE_2M)
		EXPECT_EQ(pb_split_pmd(p, ADDR_A, PMD_SIZE), 0);
	EXPECT_EQ(t_page(p, ADDR_A).folio_size, t_kind_folio(k));
	EXPECT_EQ(t_pmd_mapped(p, ADDR_A), k == T_PMD);
	EXPECT_CLEAN();
	return p;
}

#endif /* TESTS_UNIT_PBTEST_H */
