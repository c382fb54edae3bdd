// SPDX-License-Identifier: GPL-2.0-only
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
 * Restore only calls open, write, close, sigaction, munmap, unlink and
 * ftruncate, and each knob carries its own "pending" flag, cleared after
 * its value is back; a signal that interrupts a restore in progress
 * finishes it from the handler.
 *
 * SIGKILL: no handler runs, so apply first writes a journal of what it
 * is about to change (see "The journal" below), and the next process to
 * take the lock puts back what the dead one left.
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
#include "lib/resignal.h"

#define KNOB_PATH_MAX 256
#define KNOB_VALUE_MAX 64
/* 6 global knobs and every hugepages-<N>kB size (4K << 1..9 on x86-64). */
#define MAX_KNOBS 32

#define KHUGEPAGED_SLEEP_MS "86400000"

/*
 * The scenario's mthp slots for this kernel's page size (scenario.h):
 * order 2 up to the PMD order, whose line is the global policy; 16K..2M
 * with 4K pages, 64K..32M with 16K, 256K..512M with 64K.
 */
static unsigned long thp_page_size(void)
{
	static unsigned long ps;

	if (!ps)
		ps = (unsigned long)sysconf(_SC_PAGESIZE);
	return ps;
}

static int thp_nr_sizes(void)
{
	return scenario_nr_mthp_sizes(thp_page_size());
}

static unsigned long thp_size(int i)
{
	return scenario_mthp_size_of(thp_page_size(), i);
}

static unsigned long thp_pmd_size(void)
{
	return thp_size(thp_nr_sizes() - 1);
}

struct knob {
	char path[KNOB_PATH_MAX];
	char old[KNOB_VALUE_MAX];	/* "value\n", as read */
	size_t old_len;
	char new[KNOB_VALUE_MAX];	/* what apply writes (the journal's) */
	volatile sig_atomic_t pending;	/* written by apply, not yet restored */
};

static char thp_dir[KNOB_PATH_MAX - 64] = THP_SYSFS_DIR;
static struct knob knobs[MAX_KNOBS];
static volatile sig_atomic_t nr_knobs;
/* The process that applied; restore does nothing anywhere else. */
static volatile pid_t owner;
static void *volatile anchor;
static size_t anchor_len;	/* set before anchor, for a signal's restore */

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

/*
 * Put back every knob still pending, last written first.  Returns 0, or
 * -1 if a value could not be written back (said on stderr).
 */
static int restore_knobs(void)
{
	int i, ret = 0;

	for (i = nr_knobs - 1; i >= 0; i--) {
		struct knob *k = &knobs[i];

		if (!k->pending)
			continue;
		if (write_value(k->path, k->old, k->old_len)) {
			safe_warn(k->path);
			ret = -1;
		}
		k->pending = 0;
	}
	return ret;
}

/*
 * The journal: what an apply is about to write, saved before it writes
 * anything, so that a run killed with SIGKILL (which no handler sees)
 * leaves a record of what to put back.  It goes beside the lock that
 * guards the knobs: THP_JOURNAL_PATH for the machine's lock (/run is
 * root's alone, unlike /run/lock and /tmp, so nobody else can plant one),
 * the lent lock's own file for a lent lock (thp_lock_lend()), a file in a
 * test's fake tree for that tree.  Whoever takes the lock next (and every
 * apply, first) finds it and writes back each value the dead run left:
 * only where the knob still holds what the run wrote, so a value someone
 * set since is kept.  A restore that put every value back removes it.
 *
 *   ptebatch-thp-journal 1
 *   boot <the kernel's boot_id>      (another boot's is ignored)
 *   dir /sys/kernel/mm/transparent_hugepage
 *   knob <file under dir>\t<value written>\t<value before>
 *
 * Replay only writes knob files apply itself writes, under the dir this
 * process uses or the real one, with values of the characters knob
 * values have: a journal cannot make it write anything else.
 */
#define THP_JOURNAL_PATH "/run/ptebatch-thp.journal"
#define JOURNAL_MAGIC "ptebatch-thp-journal 1\n"
#define JOURNAL_MAX 8192
/* What a lender writes into its lent lock when it takes it back. */
#define LENT_REVOKED "taken back\n"

/* Where this process's current journal is: a path, or a lent lock's fd. */
static char journal_path[KNOB_PATH_MAX];
static volatile int journal_fd = -1;
static volatile sig_atomic_t journal_live;

/* Async-signal-safe: unlink and ftruncate. */
static void journal_clear(void)
{
	int r;

	if (!journal_live)
		return;
	journal_live = 0;
	if (journal_fd >= 0)
		r = ftruncate(journal_fd, 0);
	else if (journal_path[0])
		r = unlink(journal_path);
	(void)r;
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
 * ptebatch record holds it from before it touches anything to after it
 * has put everything back, and lends it to the command it runs
 * (thp_lock_lend(), below).
 *
 * flock(), not fcntl() locks.  Every ptebatch build, older ones too
 * (another worktree, a CI clone), flocks this file, and flock and fcntl
 * locks do not see each other.  POSIX record locks would name their
 * holder (F_GETLK), but they are the process's, not the open file's: any
 * close of the file in the process drops them, a forked child does not
 * share them, and a second open in the same process does not conflict.
 * OFD locks belong to the open file, but F_OFD_GETLK reports their
 * holder's pid as -1.  A flock() lock dies with the last descriptor of
 * its open file: a holder killed with SIGKILL leaves it free (and its
 * journal, above, for the next holder to replay).
 *
 * A waiting run names the holder's pid, read from /proc/locks: the
 * kernel's own table, right from the moment the lock is taken to the
 * moment it goes, also for a holder built from older sources.  A pid
 * written into the file instead would be empty or stale between a
 * holder's flock() and its write, left behind by a holder that was
 * killed, and never written by older builds: a message naming the wrong
 * process.  A holder that is an ancestor of the waiting process waits
 * for it in turn (a ptebatch run by a ptebatch record that did not lend
 * it the lock): that is an error, at once, never a wait without end.
 */
static int __attribute__((format(printf, 4, 5)))
fail(int err, char *why, size_t whylen, const char *fmt, ...);
static int read_value(const char *path, char *buf, size_t size);

#define THP_LOCK_PATH "/run/lock/ptebatch-thp.lock"
#define THP_LOCK_FALLBACK "/tmp/ptebatch-thp.lock"
/* A wait up to this long goes unsaid: the holder is about to restore. */
#define THP_LOCK_QUIET_MS 1000
#define THP_LOCK_POLL_MS 10
/* After the quiet second: how often to try, and to look at the holder. */
#define THP_LOCK_SLOW_POLL_MS 50
#define THP_LOCK_HOLDER_MS 1000

/*
 * A lent lock: the environment variable names a descriptor of a memfd
 * whose flock() is the lock the lender's command and its descendants take
 * turns on, and the lender (pid and start time, so that a reused pid is
 * not taken for it).
 */
#define THP_LENT_NAME "ptebatch-thp-lock"

static volatile int lock_fd = -1;
/* apply took the lock, and restore drops it; else thp_lock_take()'s. */
static volatile sig_atomic_t lock_of_apply;
/* lock_fd is a lock lent by an ancestor, not the machine's. */
static volatile sig_atomic_t lock_is_lent;
/* The lock this process lends its command (thp_lock_lend()); -1: none. */
static int lend_fd = -1;
static char lend_env[96];

/* ---- processes -------------------------------------------------------- */

/*
 * The parent, start time (clock ticks after boot) and state letter of
 * @pid, from /proc/PID/stat ("pid (comm) S ppid ..."; comm may hold
 * spaces and parentheses, so the fields are counted from its last ')').
 */
static int proc_stat(pid_t pid, pid_t *ppid, unsigned long long *start,
		     char *state)
{
	char path[64], buf[1024], *p, *save = NULL, *tok;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p)
		return -EIO;
	/* Fields from 3 (state): ppid is 4, starttime 22. */
	for (field = 3, tok = strtok_r(p + 1, " ", &save); tok;
	     field++, tok = strtok_r(NULL, " ", &save)) {
		if (field == 3)
			*state = tok[0];
		else if (field == 4)
			*ppid = (pid_t)strtol(tok, NULL, 10);
		else if (field == 22) {
			*start = strtoull(tok, NULL, 10);
			return 0;
		}
	}
	return -EIO;
}

/*
 * Is @pid this process's parent, or its parent's, and so on?  With
 * @start, also the same process as the one of that pid that started then
 * (not a later one given the pid again), and not a zombie.
 */
static bool is_ancestor(pid_t pid, const unsigned long long *start)
{
	unsigned long long st;
	pid_t p = getppid(), pp;
	char state;
	int depth;

	for (depth = 0; p > 0 && depth < 4096; depth++) {
		if (proc_stat(p, &pp, &st, &state))
			return false;
		if (p == pid)
			return (!start || st == *start) && state != 'Z' &&
			       state != 'X';
		p = pp;
	}
	return false;
}

bool thp_pid_is_ancestor(pid_t pid)
{
	return is_ancestor(pid, NULL);
}

/* "ptebatch record -o x.scn": @pid's first words, printable, bounded. */
static void proc_words(pid_t pid, char *buf, size_t size)
{
	char path[64], raw[256], *base;
	ssize_t n, i;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, raw, sizeof(raw) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		snprintf(buf, size, "?");
		return;
	}
	raw[n] = '\0';
	/* The program's name without its directory, then its arguments. */
	base = strrchr(raw, '/');
	base = base ? base + 1 : raw;
	for (i = base - raw; i < n - 1; i++)
		if (raw[i] == '\0')
			raw[i] = ' ';
		else if ((unsigned char)raw[i] < 0x20 || raw[i] == 0x7f)
			raw[i] = '?';
	snprintf(buf, size, "%.40s%s", base, strlen(base) > 40 ? "..." : "");
}

/* ---- the journal, replayed -------------------------------------------- */

/* The kernel's boot_id, so that a journal of another boot is left alone. */
static void boot_id(char *buf, size_t size)
{
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, size - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		n = snprintf(buf, size, "unknown");
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* One of the files apply writes (relative to the THP directory)? */
static bool journal_knob_ok(const char *rel)
{
	static const char *const fixed[] = {
		"khugepaged/pages_to_scan", "khugepaged/scan_sleep_millisecs",
		"khugepaged/alloc_sleep_millisecs", "khugepaged/max_ptes_none",
		"defrag", "use_zero_page", "enabled",
	};
	char again[64];
	unsigned long kb;
	size_t i;

	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (!strcmp(rel, fixed[i]))
			return true;
	if (sscanf(rel, "hugepages-%lukB/enabled", &kb) != 1)
		return false;
	snprintf(again, sizeof(again), "hugepages-%lukB/enabled", kb);
	return !strcmp(again, rel);
}

/* A value as knobs have them: "never", "86400000", "defer+madvise". */
static bool journal_value_ok(const char *v)
{
	size_t n = strlen(v);

	return n && n < KNOB_VALUE_MAX - 1 &&
	       strspn(v, "abcdefghijklmnopqrstuvwxyz"
		      "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-_.") == n;
}

/*
 * Write back what the journal @text (of @where) says a dead run left:
 * each knob that still holds the run's value gets its old one.  Said on
 * stderr when it wrote anything.  A journal of another boot, another
 * directory, or not ours at all, changes nothing.
 */
static void journal_replay(char *text, const char *where)
{
	char *line, *save = NULL, boot[64], cur[KNOB_VALUE_MAX];
	char path[KNOB_PATH_MAX], dir[KNOB_PATH_MAX] = "";
	bool boot_ok = false;
	int put = 0;

	if (strncmp(text, JOURNAL_MAGIC, strlen(JOURNAL_MAGIC)))
		return;
	boot_id(boot, sizeof(boot));
	for (line = strtok_r(text + strlen(JOURNAL_MAGIC), "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *rel, *new, *old;

		if (!strncmp(line, "boot ", 5)) {
			boot_ok = !strcmp(line + 5, boot);
			continue;
		}
		if (!strncmp(line, "dir ", 4)) {
			/* The real tree, or the one this process uses. */
			if (!strcmp(line + 4, THP_SYSFS_DIR) ||
			    !strcmp(line + 4, thp_dir))
				snprintf(dir, sizeof(dir), "%s", line + 4);
			continue;
		}
		if (strncmp(line, "knob ", 5) || !boot_ok || !dir[0])
			continue;
		rel = line + 5;
		new = strchr(rel, '\t');
		old = new ? strchr(new + 1, '\t') : NULL;
		if (!old)
			continue;
		*new++ = '\0';
		*old++ = '\0';
		if (!journal_knob_ok(rel) || !journal_value_ok(new) ||
		    !journal_value_ok(old) ||
		    snprintf(path, sizeof(path), "%s/%s", dir, rel) >=
			    (int)sizeof(path))
			continue;
		/* Someone set it since: theirs stays. */
		if (read_value(path, cur, sizeof(cur)) || strcmp(cur, new))
			continue;
		if (write_value(path, old, strlen(old))) {
			fprintf(stderr, "ptebatch: could not put back %s (%s)"
				" as a killed run's journal %s says\n", path,
				old, where);
		} else {
			put++;
		}
	}
	if (put)
		fprintf(stderr, "ptebatch: put back %d THP setting%s that a"
			" killed run left (journal %s)\n", put,
			put == 1 ? "" : "s", where);
}

/* Up to JOURNAL_MAX bytes of @fd from its start, NUL-terminated. */
static char *read_journal_fd(int fd)
{
	char *text = malloc(JOURNAL_MAX + 1);
	ssize_t n;

	if (!text)
		return NULL;
	n = pread(fd, text, JOURNAL_MAX, 0);
	if (n < 0)
		n = 0;
	text[n] = '\0';
	return text;
}

/*
 * Replay the journal at @path, if there is one, and remove it.  Only a
 * regular file of this user's, one link, writable by nobody else: in a
 * directory others can write, anything else may be planted.
 */
static void journal_replay_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	char *text;

	if (fd < 0 && errno != ELOOP)
		return;
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & 022) || st.st_nlink != 1) {
		fprintf(stderr, "ptebatch: ignored %s: not a regular file of"
			" this user's that only it can write\n", path);
		if (fd >= 0)
			close(fd);
		unlink(path);
		return;
	}
	text = read_journal_fd(fd);
	close(fd);
	if (text)
		journal_replay(text, path);
	free(text);
	unlink(path);
}

/* ---- the lock --------------------------------------------------------- */

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
 * Take the lock on @fd (@what: its file, or who lent it).  Tried without
 * blocking, quietly for a second; then said once on stderr, with the
 * holder, and tried on for however long the holder takes.  A holder that
 * is an ancestor of this process would never let go while this process
 * lives: -EDEADLK at once, with @why.  Only sleeps between tries, so a
 * signal whose action ends the process ends the wait; a handled one
 * does too if it set *@stop (-EINTR).
 */
static int wait_for_lock(int fd, const char *what,
			 const volatile sig_atomic_t *stop, char *why,
			 size_t whylen)
{
	struct timespec start, nap = { 0, THP_LOCK_POLL_MS * 1000000L };
	long looked = -THP_LOCK_HOLDER_MS;
	bool said = false;
	char words[64];
	pid_t holder;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		long ms;

		if (!flock(fd, LOCK_EX | LOCK_NB))
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return fail(-errno, why, whylen, "cannot lock %s: %s",
				    what, strerror(errno));
		if (stop && *stop)
			return fail(-EINTR, why, whylen, "interrupted while"
				    " waiting for the THP settings lock");
		ms = ms_since(&start);
		if (ms - looked >= THP_LOCK_HOLDER_MS) {
			looked = ms;
			holder = lock_holder(fd);
			if (holder && is_ancestor(holder, NULL)) {
				proc_words(holder, words, sizeof(words));
				return fail(-EDEADLK, why, whylen, "the THP"
					    " settings lock is held by pid %d"
					    " (%s), an ancestor of this process,"
					    " which would wait for it forever (no"
					    " lock lent through %s reached it)",
					    (int)holder, words, THP_LOCK_ENV);
			}
			/* Unlisted: changing hands right now, or not in our
			 * pid namespace: said without a pid a second on. */
			if (!said && ms >= THP_LOCK_QUIET_MS &&
			    (holder || ms >= 2 * THP_LOCK_QUIET_MS)) {
				said = true;
				proc_words(holder, words, sizeof(words));
				if (holder)
					fprintf(stderr, "ptebatch: waiting for"
						" the THP settings lock held by"
						" pid %d (%s; %s)\n", (int)holder,
						words, what);
				else
					fprintf(stderr, "ptebatch: waiting for"
						" the THP settings lock (%s), its"
						" holder not listed in"
						" /proc/locks\n", what);
			}
			if (ms >= THP_LOCK_QUIET_MS)
				nap.tv_nsec = THP_LOCK_SLOW_POLL_MS * 1000000L;
		}
		nanosleep(&nap, NULL);
	}
}

/*
 * The lock @env lends this process, if its lender is an ancestor still
 * running and has not taken it back: 1 once held, 0 if there is none to
 * take (the caller takes the machine's), -errno with @why if waiting for
 * it failed.
 */
static int take_lent(const char *env, char *why, size_t whylen)
{
	char path[64], link[128], what[96], extra, *text;
	unsigned long long start;
	int fd, sub, lender, ret;
	bool back;
	ssize_t n;

	if (!env || sscanf(env, "%d %d %llu%c", &fd, &lender, &start,
			   &extra) != 3 || fd < 0 || lender <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return 0;
	link[n] = '\0';
	if (strncmp(link, "/memfd:" THP_LENT_NAME " ",
		    strlen("/memfd:" THP_LENT_NAME " ")) ||
	    !is_ancestor(lender, &start))
		return 0;
	/* A file of our own on it: the lender's descendants take turns. */
	sub = open(path, O_RDWR | O_CLOEXEC);
	if (sub < 0)
		return 0;
	snprintf(what, sizeof(what), "lent by pid %d", lender);
	ret = wait_for_lock(sub, what, NULL, why, whylen);
	if (ret) {
		close(sub);
		return ret;
	}
	text = read_journal_fd(sub);
	back = !text || !strncmp(text, LENT_REVOKED, strlen(LENT_REVOKED)) ||
	       !is_ancestor(lender, &start);
	if (back) {
		free(text);
		close(sub);
		return 0;
	}
	/* A descendant before us was killed applying: its journal. */
	journal_replay(text, what);
	free(text);
	if (ftruncate(sub, 0)) {
		/* A memfd: cannot fail. */
	}
	lock_fd = sub;
	lock_is_lent = 1;
	return 1;
}

int thp_lock_take(char *why, size_t whylen)
{
	const char *path = THP_LOCK_PATH;
	int fd, ret;

	if (lock_fd >= 0)
		return 0;
	ret = take_lent(getenv(THP_LOCK_ENV), why, whylen);
	if (ret)
		return ret < 0 ? ret : 0;
	/* O_NOFOLLOW: /run/lock and /tmp are everyone's to write in. */
	fd = open(path, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		path = THP_LOCK_FALLBACK;
		fd = open(path, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
			  0600);
	}
	if (fd < 0)
		return fail(-errno, why, whylen, "cannot open %s: %s",
			    THP_LOCK_PATH, strerror(errno));
	ret = wait_for_lock(fd, path, NULL, why, whylen);
	if (ret) {
		close(fd);
		return ret;
	}
	lock_fd = fd;
	/* A holder before us was killed: what it left of the real knobs. */
	journal_replay_path(THP_JOURNAL_PATH);
	return 0;
}

int thp_lock_lend(char *why, size_t whylen)
{
	unsigned long long start;
	pid_t ppid;
	char state;
	int fd;

	if (lend_fd >= 0)
		return 0;
	if (lock_fd < 0)
		return fail(-ENOLCK, why, whylen, "cannot lend the THP settings"
			    " lock: this process does not hold it");
	fd = memfd_create(THP_LENT_NAME, MFD_CLOEXEC);
	if (fd < 0)
		return fail(-errno, why, whylen, "cannot lend the THP settings"
			    " lock: memfd_create: %s", strerror(errno));
	if (proc_stat(getpid(), &ppid, &start, &state)) {
		close(fd);
		return fail(-EIO, why, whylen, "cannot lend the THP settings"
			    " lock: cannot read /proc/self/stat");
	}
	snprintf(lend_env, sizeof(lend_env), THP_LOCK_ENV "=%d %d %llu", fd,
		 (int)getpid(), start);
	lend_fd = fd;
	return 0;
}

void thp_lock_lend_child(void)
{
	if (lend_fd < 0)
		return;
	if (fcntl(lend_fd, F_SETFD, 0) == 0)
		putenv(lend_env);
}

int thp_lock_take_back(const volatile sig_atomic_t *stop, char *why,
		       size_t whylen)
{
	char path[64], *text;
	int fd, ret;

	if (lend_fd < 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", lend_fd);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		ret = fail(-errno, why, whylen, "cannot take back the THP"
			   " settings lock: %s", strerror(errno));
		goto out;
	}
	ret = wait_for_lock(fd, "lent by this process", stop, why, whylen);
	if (!ret) {
		/* A descendant killed while it applied: its journal. */
		text = read_journal_fd(fd);
		if (text)
			journal_replay(text, "of a lent lock");
		free(text);
		if (ftruncate(fd, 0) ||
		    pwrite(fd, LENT_REVOKED, strlen(LENT_REVOKED), 0) !=
			    (ssize_t)strlen(LENT_REVOKED))
			ret = fail(-EIO, why, whylen, "cannot take back the THP"
				   " settings lock: %s", strerror(errno));
	}
	close(fd);
out:
	close(lend_fd);
	lend_fd = -1;
	return ret;
}

/* Async-signal-safe: close() releases the lock. */
static void close_lock(void)
{
	int fd = lock_fd;

	lock_fd = -1;
	lock_is_lent = 0;
	if (fd >= 0)
		close(fd);
}

void thp_lock_drop(void)
{
	if (lock_of_apply)
		return;
	close_lock();
	if (lend_fd >= 0) {
		close(lend_fd);
		lend_fd = -1;
	}
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
		munmap(a, anchor_len);
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
	/* Every value back: the journal has nothing left to say. */
	if (!restore_knobs())
		journal_clear();
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

	if (getpid() == owner) {
		if (!restore_knobs())
			journal_clear();
		drop_anchor();
		drop_apply_lock();
	}
	for (i = 0; i < NR_RESTORE_SIGNALS; i++)
		if (restore_signals[i] == sig)
			break;
	if (i < NR_RESTORE_SIGNALS)
		installed[i] = 0;
	resignal(sig, i < NR_RESTORE_SIGNALS ? &old_actions[i] : NULL);
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

	if (kb << 10 == thp_pmd_size())
		return "inherit";
	for (i = 0; i < thp_nr_sizes() - 1; i++)
		if (thp_size(i) == kb << 10)
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
	if (!read_ulong("hpage_pmd_size", &pmd) && pmd != thp_pmd_size())
		return fail(-EOPNOTSUPP, why, whylen, "this kernel's PMD size"
			    " is %lukB, the scenario language's with %lukB"
			    " pages is %lukB", pmd >> 10,
			    thp_page_size() >> 10, thp_pmd_size() >> 10);
	for (i = 0; i < thp_nr_sizes() - 1; i++) {
		unsigned long kb = thp_size(i) >> 10;

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
	/* inherit is refused on the PMD line, so this is never "inherit". */
	plan_add(p, "enabled", policy_word(mthp[thp_nr_sizes() - 1]));
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
		snprintf(k->new, sizeof(k->new), "%s", p->e[i].value);
		k->pending = 0;
		(*nr)++;
	}
	return 0;
}

/*
 * Where this apply's journal goes: into the lent lock's file when the
 * lock is lent (the lender's own journal is the machine's), else beside
 * the tree it writes.
 */
static void journal_locate(void)
{
	journal_fd = -1;
	journal_path[0] = '\0';
	if (lock_is_lent && lock_fd >= 0)
		journal_fd = lock_fd;
	else if (!strcmp(thp_dir, THP_SYSFS_DIR))
		snprintf(journal_path, sizeof(journal_path), "%s",
			 THP_JOURNAL_PATH);
	else
		snprintf(journal_path, sizeof(journal_path),
			 "%s/.ptebatch-thp.journal", thp_dir);
}

/* A journal there from a run that died: what it left, put back. */
static void journal_replay_located(void)
{
	char *text;

	if (journal_fd < 0) {
		journal_replay_path(journal_path);
		return;
	}
	text = read_journal_fd(journal_fd);
	if (text)
		journal_replay(text, "of a lent lock");
	free(text);
	if (ftruncate(journal_fd, 0)) {
		/* A memfd: cannot fail. */
	}
}

/*
 * The first @nr knobs[], before any is written.  Best effort: without it
 * (no /run, say) only a SIGKILL's leftovers go unrecovered.  O_EXCL on a
 * fresh name: never written through a link someone left there.
 */
static void journal_write(int nr)
{
	size_t len, dirlen = strlen(thp_dir);
	char boot[64], *buf;
	int i, fd;

	if (!nr)
		return;
	buf = malloc(JOURNAL_MAX);
	if (!buf)
		return;
	boot_id(boot, sizeof(boot));
	len = snprintf(buf, JOURNAL_MAX, JOURNAL_MAGIC "boot %s\ndir %s\n",
		       boot, thp_dir);
	for (i = 0; i < nr && len < JOURNAL_MAX; i++)
		len += snprintf(buf + len, JOURNAL_MAX - len, "knob %s\t%s\t%.*s\n",
				knobs[i].path + dirlen + 1, knobs[i].new,
				(int)knobs[i].old_len - 1, knobs[i].old);
	if (len >= JOURNAL_MAX) {
		free(buf);
		return;
	}
	if (journal_fd >= 0) {
		if (!ftruncate(journal_fd, 0) &&
		    pwrite(journal_fd, buf, len, 0) == (ssize_t)len)
			journal_live = 1;
	} else {
		unlink(journal_path);
		fd = open(journal_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			  O_CLOEXEC, 0600);
		if (fd >= 0) {
			if (write(fd, buf, len) == (ssize_t)len)
				journal_live = 1;
			close(fd);
			if (!journal_live)
				unlink(journal_path);
		}
	}
	free(buf);
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
	size_t pmd = thp_pmd_size(), len = 2 * pmd;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	char *a;

	if (p == MAP_FAILED)
		return;
	a = (char *)(((unsigned long)p + pmd - 1) & ~(pmd - 1));
	if (a > p)
		munmap(p, a - p);
	if (p + len > a + pmd)
		munmap(a + pmd, p + len - (a + pmd));
	madvise(a, pmd, MADV_DONTFORK);
	madvise(a, pmd, MADV_HUGEPAGE);
	anchor_len = pmd;
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

int thp_settings_apply(const enum scn_policy mthp[SCN_MAX_MTHP_SIZES],
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
	journal_locate();
	journal_replay_located();
	nr_knobs = 0;
	ret = save_knobs(p, &nr, why, whylen);
	if (ret) {
		drop_apply_lock();
		goto out;
	}
	owner = getpid();
	nr_knobs = nr;
	install_handlers();
	journal_write(nr);

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
	for (i = 0; i < thp_nr_sizes(); i++) {
		unsigned long kb = thp_size(i) >> 10, v[3];

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

	for (i = 0; i < thp_nr_sizes(); i++) {
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
		       thp_size(i) >> 10);
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
