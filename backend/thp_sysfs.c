/*
 * thp_sysfs.c - the THP sysfs settings of a kernel-backend run, saved,
 * written and put back, and the fallback counters read around a run.
 *
 * What a run writes, in this order (restore goes the other way), each
 * only if it differs from the current value:
 *
 *   khugepaged/pages_to_scan          1
 *   khugepaged/scan_sleep_millisecs   86400000 (a day)
 *   khugepaged/alloc_sleep_millisecs  86400000
 *   khugepaged/max_ptes_none          0
 *   defrag                            madvise
 *   use_zero_page                     1
 *   enabled                           the 2M line's policy
 *   hugepages-<N>kB/enabled           PMD size: inherit; a named size: its
 *                                     policy; every other size: never
 *
 * khugepaged cannot be stopped while any THP size is enabled, and a run
 * needs some enabled.  Left alone, it collapses a range a scenario split
 * or punched a hole into back into a new 2M folio between two statements
 * (measured here: 4 of 4 DONTNEED-holed THPs collapsed within 25 s with
 * the defaults), and the record would show frames no program asked for.
 * So, three layers:
 *
 *  - Sleep.  Writing scan_sleep_millisecs wakes khugepaged for one pass
 *    (the store resets its sleep), so pages_to_scan is lowered first and
 *    that pass covers about one PMD; then it sleeps for a day.  An idle
 *    khugepaged (empty mm list) instead wakes when the first mm
 *    registers, so apply registers an "anchor" of its own first: one
 *    PMD-sized MADV_HUGEPAGE mapping in the applying process (never
 *    touched, so it costs no memory; MADV_DONTFORK, so children lack it),
 *    ahead of every scenario mm in khugepaged's list.
 *  - max_ptes_none 0: a range with any empty PTE is never collapsed.
 *    The sleep alone did not suffice: in one test run khugepaged still
 *    collapsed one holed THP about 8 s after apply, for a reason not
 *    understood; with max_ptes_none 0 as well, none in 16 s.  The cost:
 *    the THP shrinker (shrink_underused) counts a THP with any zero-filled
 *    page as underused, and may split it, but only under memory pressure.
 *  - Detection: a collapse moves khugepaged/pages_collapsed, and
 *    thp_fallback_check() reports it, so the run is skipped, not failed.
 *
 * Left alone on purpose: khugepaged/defrag (it only matters to a
 * khugepaged that does not run), max_ptes_shared and max_ptes_swap,
 * shrink_underused, shmem knobs, and any knob this file does not know
 * (such as a non-mainline anon_beside_full).  defrag is written with the
 * kernel default, madvise, so that a host tuned otherwise behaves like
 * the one the expectations were measured on, where no mTHP fault fell
 * back; a fallback is detected, not assumed away.
 *
 * Async-signal-safety: everything restore needs (paths, old values with
 * their newline, lengths) is formatted at apply time into static storage.
 * Restore only calls open, write, close, sigaction and munmap, and each
 * knob carries its own "pending" flag, cleared after its value is back;
 * a signal that interrupts a restore in progress finishes it from the
 * handler.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "backend/thp_sysfs.h"

#define KNOB_PATH_MAX 256
#define KNOB_VALUE_MAX 64
/* 6 global knobs and every hugepages-<N>kB size (4K << 1..9 on x86-64). */
#define MAX_KNOBS 32

#define KHUGEPAGED_SLEEP_MS "86400000"

/* The language's PMD size: its 2M line is the global policy. */
#define SCN_PMD_SIZE (2UL << 20)

struct knob {
	char path[KNOB_PATH_MAX];
	char old[KNOB_VALUE_MAX];	/* "value\n", as read */
	size_t old_len;
	volatile sig_atomic_t pending;	/* written by apply, not yet restored */
};

static char thp_dir[KNOB_PATH_MAX - 64] = THP_SYSFS_DIR;
static struct knob knobs[MAX_KNOBS];
static volatile sig_atomic_t nr_knobs;
/* The process that applied; restore does nothing anywhere else. */
static volatile pid_t owner;
static void *volatile anchor;

static const int restore_signals[] = {
	SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGABRT, SIGBUS,
};
#define NR_RESTORE_SIGNALS \
	(int)(sizeof(restore_signals) / sizeof(restore_signals[0]))

static struct sigaction old_actions[NR_RESTORE_SIGNALS];
static volatile sig_atomic_t installed[NR_RESTORE_SIGNALS];

/* ---- restore (async-signal-safe) -------------------------------------- */

static size_t safe_strlen(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

static void safe_warn(const char *path)
{
	static const char msg[] = "ptebatch: could not restore ";
	ssize_t r;

	r = write(STDERR_FILENO, msg, sizeof(msg) - 1);
	r = write(STDERR_FILENO, path, safe_strlen(path));
	r = write(STDERR_FILENO, "\n", 1);
	(void)r;
}

/* O_TRUNC changes nothing in sysfs, and keeps a fake tree's files whole. */
static int write_value(const char *path, const char *value, size_t len)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, value, len);
	if (n < 0) {
		int err = errno;

		close(fd);
		return -err;
	}
	close(fd);
	return (size_t)n == len ? 0 : -EIO;
}

/* Put back every knob still pending, last written first. */
static void restore_knobs(void)
{
	int i;

	for (i = nr_knobs - 1; i >= 0; i--) {
		struct knob *k = &knobs[i];

		if (!k->pending)
			continue;
		if (write_value(k->path, k->old, k->old_len))
			safe_warn(k->path);
		k->pending = 0;
	}
}

/*
 * The THP knobs are the machine's: two runs that applied at once would
 * each save the other's values as "original" and the last restore would
 * leave them changed.  A run holds this lock from apply to restore, so
 * runs (tests, diff, benchmarks) take turns.  Apply takes it only for the
 * real sysfs tree (a test's fake tree is its own), and only if this
 * process does not hold it already: a test that reads and compares the
 * real knobs around its children's runs holds it itself, through
 * thp_lock_take(), and the children share it (see thp_sysfs.h).
 *
 * flock(), not fcntl() locks.  Every ptebatch build, older ones too
 * (another worktree, a CI clone), flocks this file, and flock and fcntl
 * locks do not see each other.  POSIX record locks would name their
 * holder (F_GETLK), but they are the process's, not the open file's: any
 * close of the file in the process drops them, a forked child does not
 * share them, and a second open in the same process does not conflict.
 * OFD locks belong to the open file, but F_OFD_GETLK reports their
 * holder's pid as -1.
 *
 * A waiting run names the holder's pid, read from /proc/locks: the
 * kernel's own table, right from the moment the lock is taken to the
 * moment it goes, also for a holder built from older sources.  A pid
 * written into the file instead would be empty or stale between a
 * holder's flock() and its write, left behind by a holder that was
 * killed, and never written by older builds: a message naming the wrong
 * process.
 */
static int __attribute__((format(printf, 4, 5)))
fail(int err, char *why, size_t whylen, const char *fmt, ...);

#define THP_LOCK_PATH "/run/lock/ptebatch-thp.lock"
#define THP_LOCK_FALLBACK "/tmp/ptebatch-thp.lock"
/* A wait up to this long goes unsaid: the holder is about to restore. */
#define THP_LOCK_QUIET_MS 1000
#define THP_LOCK_POLL_MS 10

static volatile int lock_fd = -1;
/* apply took the lock, and restore drops it; else thp_lock_take()'s. */
static volatile sig_atomic_t lock_of_apply;

/*
 * The pid of the process holding the flock() lock on @fd's file, as
 * /proc/locks lists it ("1: FLOCK  ADVISORY  WRITE 1234 fe:00:10780673 0
 * EOF"; a waiter's line has "->" before FLOCK); 0 if none is listed.
 */
static pid_t lock_holder(int fd)
{
	unsigned int maj, min;
	unsigned long ino;
	char line[256], type[16];
	struct stat st;
	pid_t holder = 0;
	FILE *f;
	int pid;

	if (fstat(fd, &st))
		return 0;
	f = fopen("/proc/locks", "re");
	if (!f)
		return 0;
	while (!holder && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*d: %15s %*s %*s %d %x:%x:%lu", type, &pid,
			   &maj, &min, &ino) == 5 && !strcmp(type, "FLOCK") &&
		    pid > 0 && maj == major(st.st_dev) &&
		    min == minor(st.st_dev) && ino == st.st_ino)
			holder = pid;
	fclose(f);
	return holder;
}

static long ms_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - start->tv_sec) * 1000 +
	       (now.tv_nsec - start->tv_nsec) / 1000000;
}

/*
 * Take the lock on @fd (the file @path).  Tried without blocking for a
 * second, quietly; then said once on stderr, with the holder, and waited
 * for in flock(), however long the holder takes.  Nothing else blocks,
 * so a signal whose action ends the process ends the wait (and the lock
 * request with the fd); a handled one (EINTR) does not.
 */
static int wait_for_lock(int fd, const char *path, char *why, size_t whylen)
{
	const struct timespec nap = { 0, THP_LOCK_POLL_MS * 1000000L };
	struct timespec start;
	pid_t holder = 0;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		if (!flock(fd, LOCK_EX | LOCK_NB))
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			goto error;
		if (ms_since(&start) >= THP_LOCK_QUIET_MS) {
			holder = lock_holder(fd);
			/* Unlisted: changing hands right now, or not in our
			 * pid namespace; give the first a moment. */
			if (holder || ms_since(&start) >= 2 * THP_LOCK_QUIET_MS)
				break;
		}
		nanosleep(&nap, NULL);
	}
	if (holder)
		fprintf(stderr, "ptebatch: waiting for the THP settings lock held"
			" by pid %d (%s)\n", (int)holder, path);
	else
		fprintf(stderr, "ptebatch: waiting for the THP settings lock (%s),"
			" its holder not listed in /proc/locks\n", path);
	while (flock(fd, LOCK_EX))
		if (errno != EINTR)
			goto error;
	return 0;
error:
	return fail(-errno, why, whylen, "cannot lock %s: %s", path,
		    strerror(errno));
}

int thp_lock_take(char *why, size_t whylen)
{
	const char *path = THP_LOCK_PATH;
	int fd, ret;

	if (lock_fd >= 0)
		return 0;
	/* Never through a link: /run/lock and /tmp are everyone's, and
	 * root's O_CREAT would make the file a planted link names. */
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		path = THP_LOCK_FALLBACK;
		fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
			  0600);
	}
	if (fd < 0)
		return fail(-errno, why, whylen, "cannot open %s: %s",
			    THP_LOCK_PATH, strerror(errno));
	ret = wait_for_lock(fd, path, why, whylen);
	if (ret) {
		close(fd);
		return ret;
	}
	lock_fd = fd;
	return 0;
}

/* Async-signal-safe: close() releases the lock. */
static void close_lock(void)
{
	int fd = lock_fd;

	lock_fd = -1;
	if (fd >= 0)
		close(fd);
}

void thp_lock_drop(void)
{
	if (!lock_of_apply)
		close_lock();
}

/* For the real tree, unless this process holds the lock already. */
static int take_apply_lock(char *why, size_t whylen)
{
	int ret;

	if (strcmp(thp_dir, THP_SYSFS_DIR) || lock_fd >= 0)
		return 0;
	ret = thp_lock_take(why, whylen);
	if (!ret)
		lock_of_apply = 1;
	return ret;
}

/* Async-signal-safe. */
static void drop_apply_lock(void)
{
	if (lock_of_apply) {
		lock_of_apply = 0;
		close_lock();
	}
}

static void drop_anchor(void)
{
	void *a = anchor;

	anchor = NULL;
	if (a)
		munmap(a, SCN_PMD_SIZE);
}

static void on_fatal_signal(int sig);

/* Give back each signal we hold, unless someone took it over since. */
static void uninstall_handlers(void)
{
	struct sigaction cur;
	int i;

	for (i = 0; i < NR_RESTORE_SIGNALS; i++) {
		if (!installed[i])
			continue;
		installed[i] = 0;
		if (sigaction(restore_signals[i], NULL, &cur) == 0 &&
		    cur.sa_handler == on_fatal_signal)
			sigaction(restore_signals[i], &old_actions[i], NULL);
	}
}

void thp_settings_restore(void)
{
	if (getpid() != owner)
		return;
	restore_knobs();
	drop_anchor();
	uninstall_handlers();
	drop_apply_lock();
}

/*
 * Restore, then let the signal do what it would have done without us:
 * the previous action (the default one, usually: the process ends with
 * the same signal, core dump included).  In a child that inherited the
 * handler, only the second part.
 */
static void on_fatal_signal(int sig)
{
	int saved_errno = errno, i;
	sigset_t set;

	if (getpid() == owner) {
		restore_knobs();
		drop_anchor();
		drop_apply_lock();
	}
	for (i = 0; i < NR_RESTORE_SIGNALS; i++)
		if (restore_signals[i] == sig)
			break;
	if (i < NR_RESTORE_SIGNALS) {
		installed[i] = 0;
		sigaction(sig, &old_actions[i], NULL);
	} else {
		signal(sig, SIG_DFL);
	}
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	errno = saved_errno;
}

static void restore_at_exit(void)
{
	thp_settings_restore();
}

/* ---- apply ------------------------------------------------------------ */

static int __attribute__((format(printf, 4, 5)))
fail(int err, char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (why && whylen) {
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return err;
}

static int knob_path(char *buf, const char *rel)
{
	int n = snprintf(buf, KNOB_PATH_MAX, "%s/%s", thp_dir, rel);

	return n < 0 || n >= KNOB_PATH_MAX ? -ENAMETOOLONG : 0;
}

static bool knob_exists(const char *rel)
{
	char path[KNOB_PATH_MAX];

	return !knob_path(path, rel) && access(path, F_OK) == 0;
}

/*
 * The current value of a knob: the bracketed word of a choice file
 * ("always [madvise] never"), else the content without its trailing
 * whitespace.  A fake tree's plain file reads back as the bare word.
 */
static int read_value(const char *path, char *buf, size_t size)
{
	char raw[256], *start, *end;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, raw, sizeof(raw) - 1);
	if (n < 0) {
		int err = errno;

		close(fd);
		return -err;
	}
	close(fd);
	raw[n] = '\0';
	start = strchr(raw, '[');
	if (start) {
		end = strchr(++start, ']');
		if (!end)
			return -EINVAL;
	} else {
		start = raw + strspn(raw, " \t\n");
		end = start + strlen(start);
		while (end > start && strchr(" \t\n", end[-1]))
			end--;
	}
	if (end == start || (size_t)(end - start) >= size)
		return -EINVAL;
	memcpy(buf, start, end - start);
	buf[end - start] = '\0';
	return 0;
}

static int read_ulong(const char *rel, unsigned long *out)
{
	char path[KNOB_PATH_MAX], val[KNOB_VALUE_MAX], *end;
	int ret = knob_path(path, rel);

	if (!ret)
		ret = read_value(path, val, sizeof(val));
	if (ret)
		return ret;
	errno = 0;
	*out = strtoul(val, &end, 10);
	return errno || *end ? -EINVAL : 0;
}

/* One write of the plan: a knob and the value the run wants in it. */
struct plan_entry {
	char rel[64];
	char value[KNOB_VALUE_MAX];
};

struct plan {
	struct plan_entry e[MAX_KNOBS];
	int nr;
};

static void plan_add(struct plan *p, const char *rel, const char *value)
{
	if (p->nr == MAX_KNOBS || !knob_exists(rel))
		return;
	snprintf(p->e[p->nr].rel, sizeof(p->e[p->nr].rel), "%s", rel);
	snprintf(p->e[p->nr].value, sizeof(p->e[p->nr].value), "%s", value);
	p->nr++;
}

static const char *policy_word(enum scn_policy policy)
{
	switch (policy) {
	case SCN_POL_ALWAYS:
		return "always";
	case SCN_POL_MADVISE:
		return "madvise";
	case SCN_POL_INHERIT:
		return "inherit";
	case SCN_POL_NEVER:
		break;
	}
	return "never";
}

static int cmp_ulong(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

/* The sizes (in kB) of every hugepages-<N>kB directory, ascending. */
static int list_sizes(unsigned long *kb, int max)
{
	DIR *d = opendir(thp_dir);
	struct dirent *de;
	int nr = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d)) && nr < max) {
		unsigned long n;
		char tail[4];

		if (sscanf(de->d_name, "hugepages-%lu%3s", &n, tail) == 2 &&
		    !strcmp(tail, "kB"))
			kb[nr++] = n;
	}
	closedir(d);
	qsort(kb, nr, sizeof(*kb), cmp_ulong);
	return nr;
}

/* The policy the scenario gives a size of @kb kilobytes. */
static const char *size_policy(const enum scn_policy mthp[], unsigned long kb)
{
	int i;

	if (kb << 10 == SCN_PMD_SIZE)
		return "inherit";
	for (i = 0; i < SCN_NR_MTHP_SIZES - 1; i++)
		if (scenario_mthp_size(i) == kb << 10)
			return policy_word(mthp[i]);
	return "never";
}

/* Can this kernel run @mthp at all?  0, or -EOPNOTSUPP with @why. */
static int check_support(const enum scn_policy mthp[], char *why,
			 size_t whylen)
{
	char rel[64];
	unsigned long pmd;
	int i;

	if (!knob_exists("enabled"))
		return fail(-EOPNOTSUPP, why, whylen, "this kernel has no"
			    " transparent hugepages (no %s/enabled)", thp_dir);
	if (!read_ulong("hpage_pmd_size", &pmd) && pmd != SCN_PMD_SIZE)
		return fail(-EOPNOTSUPP, why, whylen, "this kernel's PMD size"
			    " is %lukB, the scenario language's is 2048kB",
			    pmd >> 10);
	for (i = 0; i < SCN_NR_MTHP_SIZES - 1; i++) {
		unsigned long kb = scenario_mthp_size(i) >> 10;

		if (mthp[i] == SCN_POL_NEVER)
			continue;
		snprintf(rel, sizeof(rel), "hugepages-%lukB/enabled", kb);
		if (!knob_exists(rel))
			return fail(-EOPNOTSUPP, why, whylen, "this kernel has"
				    " no %lukB mTHP size", kb);
	}
	return 0;
}

static int build_plan(const enum scn_policy mthp[], struct plan *p)
{
	unsigned long kb[MAX_KNOBS];
	char rel[64];
	int i, nr;

	p->nr = 0;
	/* Before the sleeps: writing one wakes khugepaged for a pass. */
	plan_add(p, "khugepaged/pages_to_scan", "1");
	plan_add(p, "khugepaged/scan_sleep_millisecs", KHUGEPAGED_SLEEP_MS);
	plan_add(p, "khugepaged/alloc_sleep_millisecs", KHUGEPAGED_SLEEP_MS);
	plan_add(p, "khugepaged/max_ptes_none", "0");
	plan_add(p, "defrag", "madvise");
	plan_add(p, "use_zero_page", "1");
	/* inherit is refused on the 2M line, so this is never "inherit". */
	plan_add(p, "enabled", policy_word(mthp[SCN_NR_MTHP_SIZES - 1]));
	nr = list_sizes(kb, MAX_KNOBS);
	if (nr < 0)
		return nr;
	for (i = 0; i < nr; i++) {
		snprintf(rel, sizeof(rel), "hugepages-%lukB/enabled", kb[i]);
		plan_add(p, rel, size_policy(mthp, kb[i]));
	}
	return 0;
}

/*
 * Save the knobs of @p whose value differs from the plan; those are the
 * ones that will be written and restored.  Fills knobs[] but leaves
 * nr_knobs to the caller.
 */
static int save_knobs(const struct plan *p, int *nr, char *why, size_t whylen)
{
	char cur[KNOB_VALUE_MAX];
	int i, ret;

	*nr = 0;
	for (i = 0; i < p->nr; i++) {
		struct knob *k = &knobs[*nr];

		ret = knob_path(k->path, p->e[i].rel);
		if (!ret)
			ret = read_value(k->path, cur, sizeof(cur));
		if (ret)
			return fail(ret, why, whylen, "cannot read %s: %s",
				    k->path, strerror(-ret));
		if (!strcmp(cur, p->e[i].value))
			continue;
		k->old_len = snprintf(k->old, sizeof(k->old), "%s\n", cur);
		k->pending = 0;
		(*nr)++;
	}
	return 0;
}

static void install_handlers(void)
{
	static bool at_exit_registered;
	struct sigaction sa;
	int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fatal_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < NR_RESTORE_SIGNALS; i++)
		sigaddset(&sa.sa_mask, restore_signals[i]);
	for (i = 0; i < NR_RESTORE_SIGNALS; i++) {
		if (sigaction(restore_signals[i], NULL, &old_actions[i]))
			continue;
		/* An ignored signal (nohup's SIGHUP) stays ignored. */
		if (old_actions[i].sa_handler == SIG_IGN)
			continue;
		if (!sigaction(restore_signals[i], &sa, NULL))
			installed[i] = 1;
	}
	if (!at_exit_registered && !atexit(restore_at_exit))
		at_exit_registered = true;
}

/* See the top of the file: keeps khugepaged's one wake-up scan off the
 * scenario's processes.  Best effort: without it the run still works. */
static void make_anchor(void)
{
	size_t len = 2 * SCN_PMD_SIZE;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	char *a;

	if (p == MAP_FAILED)
		return;
	a = (char *)(((unsigned long)p + SCN_PMD_SIZE - 1) & ~(SCN_PMD_SIZE - 1));
	if (a > p)
		munmap(p, a - p);
	if (p + len > a + SCN_PMD_SIZE)
		munmap(a + SCN_PMD_SIZE, p + len - (a + SCN_PMD_SIZE));
	madvise(a, SCN_PMD_SIZE, MADV_DONTFORK);
	madvise(a, SCN_PMD_SIZE, MADV_HUGEPAGE);
	anchor = a;
}

static int write_error(int err, const char *path, char *why, size_t whylen)
{
	if (err == -EACCES || err == -EPERM || err == -EROFS) {
		if (geteuid())
			return fail(-EACCES, why, whylen, "not root: cannot"
				    " write %s (%s)", path, strerror(-err));
		return fail(-EACCES, why, whylen, "cannot write %s: %s", path,
			    strerror(-err));
	}
	return fail(err, why, whylen, "cannot write %s: %s", path,
		    strerror(-err));
}

int thp_settings_apply(const enum scn_policy mthp[SCN_NR_MTHP_SIZES],
		       char *why, size_t whylen)
{
	struct plan *p;
	int i, j, nr, ret;

	if (why && whylen)
		why[0] = '\0';
	for (i = 0; i < nr_knobs; i++)
		if (knobs[i].pending)
			return fail(-EBUSY, why, whylen, "THP settings already"
				    " applied and not restored");
	ret = check_support(mthp, why, whylen);
	if (ret)
		return ret;
	p = malloc(sizeof(*p));
	if (!p)
		return fail(-ENOMEM, why, whylen, "out of memory");
	ret = build_plan(mthp, p);
	if (ret) {
		fail(ret, why, whylen, "cannot list %s: %s", thp_dir,
		     strerror(-ret));
		goto out;
	}
	ret = take_apply_lock(why, whylen);
	if (ret)
		goto out;
	nr_knobs = 0;
	ret = save_knobs(p, &nr, why, whylen);
	if (ret) {
		drop_apply_lock();
		goto out;
	}
	owner = getpid();
	nr_knobs = nr;
	install_handlers();

	/* knobs[] holds the plan's changed entries, in plan order. */
	for (i = 0, j = 0; i < p->nr && j < nr && !ret; i++) {
		struct knob *k = &knobs[j];
		char path[KNOB_PATH_MAX];
		size_t len;

		knob_path(path, p->e[i].rel);
		if (strcmp(path, k->path))
			continue;	/* already had the wanted value */
		j++;
		len = strlen(p->e[i].value);
		k->pending = 1;
		ret = write_value(k->path, p->e[i].value, len);
		if (ret) {
			/* A refused write changed nothing: nothing to undo. */
			k->pending = 0;
			ret = write_error(ret, k->path, why, whylen);
		}
	}
	if (ret) {
		thp_settings_restore();
		goto out;
	}
	make_anchor();
out:
	free(p);
	return ret;
}

int thp_sysfs_set_dir(const char *dir)
{
	int i;

	for (i = 0; i < nr_knobs; i++)
		if (knobs[i].pending)
			return -EBUSY;
	if (!dir)
		dir = THP_SYSFS_DIR;
	if (strlen(dir) >= sizeof(thp_dir))
		return -ENAMETOOLONG;
	strcpy(thp_dir, dir);
	return 0;
}

/* ---- fallback detection ----------------------------------------------- */

int thp_fallback_snapshot(struct thp_fallback *snap)
{
	static const char *const stat_names[] = {
		"anon_fault_alloc", "anon_fault_fallback",
		"anon_fault_fallback_charge",
	};
	char rel[96];
	int i, s, ret;

	memset(snap, 0, sizeof(*snap));
	for (i = 0; i < SCN_NR_MTHP_SIZES; i++) {
		unsigned long kb = scenario_mthp_size(i) >> 10, v[3];

		snprintf(rel, sizeof(rel), "hugepages-%lukB/stats", kb);
		if (!knob_exists(rel))
			continue;
		for (s = 0; s < 3; s++) {
			snprintf(rel, sizeof(rel), "hugepages-%lukB/stats/%s",
				 kb, stat_names[s]);
			ret = read_ulong(rel, &v[s]);
			if (ret)
				return ret;
		}
		snap->size[i].have = true;
		snap->size[i].alloc = v[0];
		snap->size[i].fallback = v[1];
		snap->size[i].charge = v[2];
	}
	if (!read_ulong("khugepaged/pages_collapsed", &snap->collapsed))
		snap->have_collapsed = true;
	return 0;
}

/* Append to @why, "; "-separated. */
static void __attribute__((format(printf, 3, 4)))
append(char *why, size_t whylen, const char *fmt, ...)
{
	size_t len = strnlen(why, whylen);
	va_list ap;

	if (len && len + 2 < whylen) {
		memcpy(why + len, "; ", 3);
		len += 2;
	}
	if (len + 1 >= whylen)
		return;
	va_start(ap, fmt);
	vsnprintf(why + len, whylen - len, fmt, ap);
	va_end(ap);
}

int thp_fallback_check(const struct thp_fallback *before,
		       const struct thp_fallback *after, char *why,
		       size_t whylen)
{
	char buf[256] = "";
	int i, found = 0;

	for (i = 0; i < SCN_NR_MTHP_SIZES; i++) {
		unsigned long fb, alloc, charge;

		if (!before->size[i].have || !after->size[i].have)
			continue;
		fb = after->size[i].fallback - before->size[i].fallback;
		if (!fb)
			continue;
		alloc = after->size[i].alloc - before->size[i].alloc;
		charge = after->size[i].charge - before->size[i].charge;
		found = 1;
		append(buf, sizeof(buf), "%lu of the %lu %lukB faults fell back"
		       " to smaller folios", fb, fb + alloc,
		       scenario_mthp_size(i) >> 10);
		if (charge)
			append(buf, sizeof(buf), "%lu of them at the memory"
			       " cgroup charge", charge);
	}
	if (before->have_collapsed && after->have_collapsed &&
	    after->collapsed != before->collapsed) {
		found = 1;
		append(buf, sizeof(buf), "khugepaged collapsed %lu pages during"
		       " the run", after->collapsed - before->collapsed);
	}
	if (why && whylen)
		snprintf(why, whylen, "%s", buf);
	return found;
}
