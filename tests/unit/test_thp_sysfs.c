// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_thp_sysfs.c - the kernel backend's THP settings: what a run
 * writes, that every value comes back on every exit path (restore,
 * exit(), a fatal signal; never from a child that inherited the handlers;
 * after SIGKILL, by the next apply from the journal, which nothing planted
 * in it can turn against another file), and the fallback counters'
 * explanation.
 *
 * Most cases run on a fake tree of plain files in a temporary directory,
 * so they run anywhere.  The cases on the real /sys/kernel/mm/
 * transparent_hugepage need root; each one compares every file it could
 * touch with what it read before, holding the THP settings lock so that
 * no other run on this machine changes them in between.  The lock cases
 * hold it in a child: the real cases, and a `ptebatch run --backend
 * kernel`, wait for it, say whose lock they wait for, and go on once the
 * child lets go.  All of these are skipped where they cannot run: not
 * root, no THP sysfs, a kernel backend that skips the scenario.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * AddressSanitizer and ThreadSanitizer take SIGSEGV and SIGBUS for
 * themselves (they report and exit), so under them a handler of ours
 * never sees them.
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZER_OWNS_SEGV 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZER_OWNS_SEGV 1
#endif
#endif
#ifndef SANITIZER_OWNS_SEGV
#define SANITIZER_OWNS_SEGV 0
#endif

#include "backend/thp_sysfs.h"
#include "tests/unit/fixture.h"

/* The fake /sys/kernel/mm/transparent_hugepage most cases run on. */
static struct t_tmpdir fake;

/* ---- files ------------------------------------------------------------ */

/* A file's text, newline dropped; "?" when unreadable. */
static const char *get(const char *dir, const char *rel)
{
	static char buf[8][256];
	static int slot;
	char path[512], *b = buf[slot++ % 8];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return "?";
	n = read(fd, b, 255);
	close(fd);
	if (n < 0)
		return "?";
	b[n] = '\0';
	if (n && b[n - 1] == '\n')
		b[n - 1] = '\0';
	return b;
}

/* The selected word: "[x]" of a choice file, or a plain file's text. */
static const char *word(const char *dir, const char *rel)
{
	static char buf[8][64];
	static int slot;
	const char *t = get(dir, rel), *l = strchr(t, '['), *r;
	char *b = buf[slot++ % 8];

	if (!l || !(r = strchr(l, ']')))
		return t;
	snprintf(b, 64, "%.*s", (int)(r - l - 1), l + 1);
	return b;
}

static const char choice4[] = "always inherit madvise [never]\n";

/*
 * The fake tree: the files of a kernel with 8K, 16K, 64K and 2M anon
 * THP sizes (no 32K: a size the scenario language has and this "kernel"
 * lacks), as they are after boot.  False if a file could not be made.
 */
static bool make_fake_tree(void)
{
	static const char *const files[][2] = {
		{ "enabled", "always [madvise] never\n" },
		{ "defrag", "always defer defer+madvise [madvise] never\n" },
		{ "use_zero_page", "1\n" },
		{ "hpage_pmd_size", "2097152\n" },
		{ "anon_beside_full", "0\n" },
		{ "khugepaged/pages_to_scan", "4096\n" },
		{ "khugepaged/scan_sleep_millisecs", "10000\n" },
		{ "khugepaged/alloc_sleep_millisecs", "60000\n" },
		{ "khugepaged/defrag", "1\n" },
		{ "khugepaged/max_ptes_none", "511\n" },
		{ "khugepaged/pages_collapsed", "0\n" },
	};
	static const char *const sizes[] = { "8", "16", "64", "2048" };
	static const char *const stats[] = {
		"anon_fault_alloc", "anon_fault_fallback",
		"anon_fault_fallback_charge",
	};
	char rel[128];
	size_t i, s;
	bool ok;

	if (!t_tmpdir_make(&fake, "thp-sysfs-test"))
		return false;
	ok = t_tmpdir_mkdir(&fake, "khugepaged");
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		ok &= t_tmpdir_put(&fake, files[i][0], files[i][1]);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		snprintf(rel, sizeof(rel), "hugepages-%skB", sizes[i]);
		ok &= t_tmpdir_mkdir(&fake, rel);
		snprintf(rel, sizeof(rel), "hugepages-%skB/enabled", sizes[i]);
		ok &= t_tmpdir_put(&fake, rel, strcmp(sizes[i], "2048") ? choice4 :
				   "always [inherit] madvise never\n");
		snprintf(rel, sizeof(rel), "hugepages-%skB/stats", sizes[i]);
		ok &= t_tmpdir_mkdir(&fake, rel);
		for (s = 0; s < 3; s++) {
			snprintf(rel, sizeof(rel), "hugepages-%skB/stats/%s",
				 sizes[i], stats[s]);
			ok &= t_tmpdir_put(&fake, rel, "0\n");
		}
	}
	return ok;
}

/* Every knob apply may write, and a few it must not. */
static const char *const knob_names[] = {
	"enabled", "defrag", "use_zero_page", "anon_beside_full",
	"shrink_underused", "khugepaged/defrag", "khugepaged/pages_to_scan",
	"khugepaged/scan_sleep_millisecs", "khugepaged/alloc_sleep_millisecs",
	"khugepaged/max_ptes_none", "hugepages-8kB/enabled",
	"hugepages-16kB/enabled", "hugepages-32kB/enabled",
	"hugepages-64kB/enabled", "hugepages-128kB/enabled",
	"hugepages-256kB/enabled", "hugepages-512kB/enabled",
	"hugepages-1024kB/enabled", "hugepages-2048kB/enabled",
};
#define NR_KNOB_NAMES (int)(sizeof(knob_names) / sizeof(knob_names[0]))

struct state {
	char word[NR_KNOB_NAMES][256];
};

/*
 * If >= 0, read_state() writes a byte here before each read of the real
 * knobs: how test_real_cases_wait() sees when the real cases read them.
 */
static int real_reads_fd = -1;

static void read_state(const char *dir, struct state *st)
{
	int i;

	if (real_reads_fd >= 0 && !strcmp(dir, THP_SYSFS_DIR))
		t_write_all(real_reads_fd, "r", 1);
	for (i = 0; i < NR_KNOB_NAMES; i++)
		snprintf(st->word[i], sizeof(st->word[i]), "%s",
			 word(dir, knob_names[i]));
}

/* "" if equal, else the first knob that differs. */
static const char *state_diff(const struct state *a, const struct state *b)
{
	static char buf[600];
	int i;

	for (i = 0; i < NR_KNOB_NAMES; i++)
		if (strcmp(a->word[i], b->word[i])) {
			snprintf(buf, sizeof(buf), "%s: %.255s, was %.255s",
				 knob_names[i], b->word[i], a->word[i]);
			return buf;
		}
	return "";
}

/* Pass if every knob under @dir reads as in @before again. */
static bool __attribute__((format(printf, 3, 4)))
state_is_back(const char *dir, const struct state *before, const char *fmt, ...)
{
	struct state after;
	char name[256];
	va_list ap;

	read_state(dir, &after);
	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	return tap_is_str(state_diff(before, &after), "", "%s", name);
}

/* ---- applying in a child ---------------------------------------------- */

enum ending { END_SIGNAL, END_EXIT, END_RESTORE };

/* How a child that applied settings ends, and the name tests give it. */
struct ending_case {
	enum ending how;
	int sig;
	const char *name;
};

/*
 * Fork a child that applies @mthp, tells us, waits for our word and then
 * (per @how) is killed by @sig or raises it, calls exit(0) or restores
 * and _exit(0)s.  @probe, if not NULL, is read while the child holds the
 * settings.  Returns the wait status, or -1 if the child could not apply
 * (its reason in @why).
 */
static int run_child(const enum scn_policy mthp[], enum ending how, int sig,
		     const char *dir, struct state *probe, char *why,
		     size_t whylen)
{
	bool self = sig == SIGSEGV || sig == SIGBUS || sig == SIGABRT;
	int up[2], down[2], status;
	char buf[256] = "";
	ssize_t n;
	pid_t pid;

	if (pipe(up) || pipe(down))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		int ret;

		close(up[0]);
		close(down[1]);
		ret = thp_settings_apply(mthp, buf, sizeof(buf));
		n = write(up[1], buf, strlen(buf) + 1);
		if (ret)
			_exit(2);
		n = read(down[0], buf, 1);
		(void)n;
		switch (how) {
		case END_SIGNAL:
			if (self)
				raise(sig);
			for (;;)
				pause();
		case END_EXIT:
			exit(0);
		case END_RESTORE:
			thp_settings_restore();
			_exit(0);
		}
		_exit(3);
	}
	close(up[1]);
	close(down[0]);
	n = read(up[0], buf, sizeof(buf) - 1);
	close(up[0]);
	if (n <= 0 || buf[0]) {
		snprintf(why, whylen, "%s", n > 0 ? buf : "child died");
		close(down[1]);
		waitpid(pid, &status, 0);
		return -1;
	}
	if (probe)
		read_state(dir, probe);
	if (how == END_SIGNAL && !self)
		kill(pid, sig);
	else
		n = write(down[1], "", 1);
	close(down[1]);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

static bool died_of(int status, int sig)
{
	return status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == sig;
}

/* ---- the fake tree ---------------------------------------------------- */

static void set_policy(enum scn_policy mthp[], unsigned long size,
		       enum scn_policy p)
{
	int i;

	for (i = 0; i < SCN_NR_MTHP_SIZES; i++)
		if (scenario_mthp_size(i) == size)
			mthp[i] = p;
}

static void test_fake_apply(void)
{
	enum scn_policy mthp[SCN_MAX_MTHP_SIZES] = { 0 };
	struct state before;
	char why[256];
	int ret;

	read_state(fake.path, &before);
	set_policy(mthp, 64UL << 10, SCN_POL_ALWAYS);
	set_policy(mthp, 16UL << 10, SCN_POL_INHERIT);
	set_policy(mthp, 2UL << 20, SCN_POL_ALWAYS);
	ret = thp_settings_apply(mthp, why, sizeof(why));
	if (!tap_ok(ret == 0, "fake: apply 16K inherit, 64K always, 2M always"
		    " (got %d: %s)", ret, why))
		return;
	tap_ok(!strcmp(word(fake.path, "enabled"), "always") &&
	       !strcmp(word(fake.path, "hugepages-2048kB/enabled"), "inherit") &&
	       !strcmp(word(fake.path, "hugepages-64kB/enabled"), "always") &&
	       !strcmp(word(fake.path, "hugepages-16kB/enabled"), "inherit") &&
	       !strcmp(word(fake.path, "hugepages-8kB/enabled"), "never"),
	       "fake: global is the 2M line, 2048kB inherit, sizes their"
	       " policy, the unnamed 8kB never");
	tap_ok(!strcmp(word(fake.path, "khugepaged/pages_to_scan"), "1") &&
	       !strcmp(word(fake.path, "khugepaged/max_ptes_none"), "0") &&
	       !strcmp(word(fake.path, "khugepaged/scan_sleep_millisecs"),
		       "86400000") &&
	       !strcmp(word(fake.path, "khugepaged/alloc_sleep_millisecs"),
		       "86400000"),
	       "fake: khugepaged asleep, scanning one page a pass, no holes");
	tap_ok(!strcmp(get(fake.path, "anon_beside_full"), "0") &&
	       !strcmp(get(fake.path, "khugepaged/defrag"), "1") &&
	       !strcmp(get(fake.path, "defrag"),
		       "always defer defer+madvise [madvise] never") &&
	       !strcmp(get(fake.path, "hugepages-8kB/enabled"),
		       "always inherit madvise [never]"),
	       "fake: unknown knobs and knobs already right are not written");
	ret = thp_settings_apply(mthp, why, sizeof(why));
	tap_ok(ret == -EBUSY, "fake: a second apply is refused (got %d)", ret);
	thp_settings_restore();
	state_is_back(fake.path, &before, "fake: restore puts every value back");
	thp_settings_restore();
	state_is_back(fake.path, &before, "fake: a second restore changes nothing");
	ret = thp_settings_apply(mthp, why, sizeof(why));
	tap_ok(ret == 0, "fake: apply works again after restore (got %d)",
	       ret);
	thp_settings_restore();
}

static void test_fake_unsupported(void)
{
	enum scn_policy mthp[SCN_MAX_MTHP_SIZES] = { 0 };
	struct state before;
	char why[256];
	int ret;

	read_state(fake.path, &before);
	set_policy(mthp, 64UL << 10, SCN_POL_ALWAYS);
	set_policy(mthp, 32UL << 10, SCN_POL_MADVISE);
	ret = thp_settings_apply(mthp, why, sizeof(why));
	tap_ok(ret == -EOPNOTSUPP, "fake: a named size the kernel lacks:"
	       " -EOPNOTSUPP (got %d)", ret);
	tap_is_str(why, "this kernel has no 32kB mTHP size",
		   "fake: the reason names the size");
	state_is_back(fake.path, &before,
		      "fake: nothing written when the size is missing");

	/* A missing size the scenario does not use is no reason to skip. */
	set_policy(mthp, 32UL << 10, SCN_POL_NEVER);
	ret = thp_settings_apply(mthp, why, sizeof(why));
	tap_ok(ret == 0, "fake: a missing size left at never is fine (got %d:"
	       " %s)", ret, why);
	thp_settings_restore();
}

/* Apply in a child that then ends each way; the values must be back. */
static void test_fake_exit_paths(void)
{
	static const struct ending_case cases[] = {
		{ END_SIGNAL, SIGTERM, "SIGTERM" },
		{ END_SIGNAL, SIGINT, "SIGINT" },
		{ END_SIGNAL, SIGHUP, "SIGHUP" },
		{ END_SIGNAL, SIGQUIT, "SIGQUIT" },
		{ END_SIGNAL, SIGSEGV, "SIGSEGV" },
		{ END_SIGNAL, SIGABRT, "SIGABRT" },
		{ END_SIGNAL, SIGBUS, "SIGBUS" },
		{ END_EXIT, 0, "exit()" },
		{ END_RESTORE, 0, "restore and _exit()" },
	};
	enum scn_policy mthp[SCN_MAX_MTHP_SIZES] = { 0 };
	struct state before, during;
	char why[256];
	size_t i;
	int status;

	set_policy(mthp, 64UL << 10, SCN_POL_MADVISE);
	set_policy(mthp, 2UL << 20, SCN_POL_NEVER);
	read_state(fake.path, &before);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (SANITIZER_OWNS_SEGV &&
		    (cases[i].sig == SIGSEGV || cases[i].sig == SIGBUS)) {
			tap_skip("AddressSanitizer owns SIGSEGV and SIGBUS",
				 "fake, %s: restored on the signal", cases[i].name);
			continue;
		}
		status = run_child(mthp, cases[i].how, cases[i].sig, fake.path,
				   &during, why, sizeof(why));
		tap_ok(status != -1 && !strcmp(during.word[13], "madvise") &&
		       !strcmp(during.word[0], "never"),
		       "fake, %s: the child's settings were in place",
		       cases[i].name);
		if (cases[i].how == END_SIGNAL)
			tap_ok(died_of(status, cases[i].sig), "fake, %s: the"
			       " child still dies of the signal (status %#x)",
			       cases[i].name, status);
		else
			tap_ok(status != -1 && WIFEXITED(status) &&
			       !WEXITSTATUS(status),
			       "fake, %s: the child exits 0 (status %#x)",
			       cases[i].name, status);
		state_is_back(fake.path, &before, "fake, %s: every value is back",
			      cases[i].name);
	}
}

/*
 * In a child (t_child): apply @mthp, let one grandchild die of SIGSEGV
 * and another exit, and answer 'y' if the settings are still applied.
 * Then exit(), whose atexit hook restores.
 */
static void apply_outliving_children(void *mthp, int fd)
{
	char why[256], answer;
	int st1, st2;
	pid_t g;

	if (thp_settings_apply(mthp, why, sizeof(why)))
		_exit(2);
	g = fork();
	if (!g) {
		raise(SIGSEGV);
		_exit(1);
	}
	waitpid(g, &st1, 0);
	g = fork();
	if (!g)
		exit(0);
	waitpid(g, &st2, 0);
	answer = !strcmp(word(fake.path, "hugepages-64kB/enabled"), "always") &&
		 died_of(st1, SIGSEGV) ? 'y' : 'n';
	t_write_all(fd, &answer, 1);
	exit(0);
}

/*
 * A child of the applying process inherits the handlers and the atexit
 * hook; its death must not restore (the run is still going), whether it
 * dies of a signal or exits.
 */
static void test_fake_grandchild(void)
{
	enum scn_policy mthp[SCN_MAX_MTHP_SIZES] = { 0 };
	struct state before;
	char *answer;
	size_t len;

	if (SANITIZER_OWNS_SEGV) {
		tap_skip("AddressSanitizer owns SIGSEGV", "fake: a child that"
			 " dies of SIGSEGV or exits leaves its parent's settings"
			 " applied");
		return;
	}
	set_policy(mthp, 64UL << 10, SCN_POL_ALWAYS);
	read_state(fake.path, &before);
	t_child(apply_outliving_children, mthp, &answer, &len);
	tap_ok(len == 1 && answer[0] == 'y', "fake: a child that dies of SIGSEGV"
	       " or exits leaves its parent's settings applied");
	state_is_back(fake.path, &before,
		      "fake: the applying process restores at its exit");
	free(answer);
}

/*
 * In a child (t_child): apply @mthp where the 64kB knob cannot be written
 * - root writes anything, so as nobody; else the file is made read-only.
 * Send the reason and exit 0 if it was -EACCES.
 */
static void apply_unwritable(void *mthp, int fd)
{
	char why[256] = "", path[512];
	int ret;

	if (geteuid() == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(3);
	} else {
		chmod(t_tmpdir_path(&fake, "hugepages-64kB/enabled", path,
				    sizeof(path)), 0444);
	}
	ret = thp_settings_apply(mthp, why, sizeof(why));
	t_write_all(fd, why, strlen(why) + 1);
	_exit(ret == -EACCES ? 0 : 1);
}

static void test_fake_not_writable(void)
{
	enum scn_policy mthp[SCN_MAX_MTHP_SIZES] = { 0 };
	struct state before;
	char *why, path[512];
	int status;
	size_t len;

	set_policy(mthp, 64UL << 10, SCN_POL_ALWAYS);
	read_state(fake.path, &before);
	status = t_child(apply_unwritable, mthp, &why, &len);
	if (geteuid())
		chmod(t_tmpdir_path(&fake, "hugepages-64kB/enabled", path,
				    sizeof(path)), 0644);
	tap_ok(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
	       why && strstr(why, "not root: cannot write "),
	       "fake: an unwritable knob is -EACCES, and says why (%s)",
	       why ? why : "");
	state_is_back(fake.path, &before,
		      "fake: what was written before the refusal is back");
	free(why);
}

/* ---- SIGKILL and the journal ----------------------------------------- */

#define FAKE_JOURNAL ".ptebatch-thp.journal"

/* The kernel's boot_id, as the journal names it. */
static void boot_id(char *buf, size_t size)
{
	const char *t = get("/proc/sys/kernel/random", "boot_id");

	snprintf(buf, size, "%s", strcmp(t, "?") ? t : "unknown");
}

/*
 * SIGKILL: no handler runs, so the child's values stay; but apply wrote
 * its journal before writing any, and the next apply puts back what it
 * says before it saves anything - except a knob set since by someone
 * else, which keeps their value.  Its restore then leaves every knob as
 * before the killed run, and no journal.
 */
static void test_fake_sigkill(void)
{
	enum scn_policy mthp[SCN_MAX_MTHP_SIZES] = { 0 };
	enum scn_policy none[SCN_MAX_MTHP_SIZES] = { 0 };
	struct state before, during, now;
	char why[256], journal[256];
	int status, ret;

	set_policy(mthp, 64UL << 10, SCN_POL_MADVISE);
	set_policy(mthp, 2UL << 20, SCN_POL_NEVER);
	t_tmpdir_path(&fake, FAKE_JOURNAL, journal, sizeof(journal));
	read_state(fake.path, &before);
	status = run_child(mthp, END_SIGNAL, SIGKILL, fake.path, &during, why,
			   sizeof(why));
	tap_ok(died_of(status, SIGKILL) &&
	       !strcmp(word(fake.path, "hugepages-64kB/enabled"), "madvise") &&
	       !strcmp(word(fake.path, "khugepaged/pages_to_scan"), "1"),
	       "fake, SIGKILL: the child dies and its settings stay (status"
	       " %#x)", status);
	tap_ok(access(journal, F_OK) == 0, "fake, SIGKILL: it left a journal");

	/* Someone sets a knob the dead run had written: theirs stays. */
	t_tmpdir_put(&fake, "khugepaged/pages_to_scan", "2048\n");
	snprintf(before.word[6], sizeof(before.word[6]), "2048");
	ret = thp_settings_apply(none, why, sizeof(why));
	tap_ok(ret == 0 && access(journal, F_OK) == 0,
	       "fake: the next apply works, with a journal of its own (got %d:"
	       " %s)", ret, why);
	thp_settings_restore();
	read_state(fake.path, &now);
	tap_is_str(state_diff(&before, &now), "", "fake: after it, every knob"
		   " the killed run wrote is back, the one set since kept");
	tap_ok(access(journal, F_OK) != 0, "fake: and no journal is left");
	t_tmpdir_put(&fake, "khugepaged/pages_to_scan", "4096\n");
}

/* Put @text as the fake tree's journal, mode @mode. */
static void plant_journal(const char *text, mode_t mode)
{
	char path[256];

	t_tmpdir_put(&fake, FAKE_JOURNAL, text);
	chmod(t_tmpdir_path(&fake, FAKE_JOURNAL, path, sizeof(path)), mode);
}

/* apply and restore (nothing named: every size never), for the replay. */
static void apply_restore(void)
{
	enum scn_policy none[SCN_MAX_MTHP_SIZES] = { 0 };
	char why[256];

	if (!thp_settings_apply(none, why, sizeof(why)))
		thp_settings_restore();
}

/*
 * A journal is the machine's word on what to write, as root: nothing in
 * one may make apply write anything but a THP knob of the tree it was
 * written for, with a knob's kind of value, in this boot - nor through a
 * link, nor from a file others could have written.
 */
static void test_fake_journal_hostile(void)
{
	struct t_tmpdir other = { "" };
	char boot[64], text[2048], path[256], victim[256];
	struct state before;

	boot_id(boot, sizeof(boot));
	read_state(fake.path, &before);
	/* Each line would write "0" to use_zero_page or "never" to enabled
	 * (both "1" and "madvise" now) if it were followed. */
	snprintf(text, sizeof(text),
		 "ptebatch-thp-journal 1\nboot %s\ndir %s\n"
		 "knob hugepages-8kB/../use_zero_page\t1\t0\n"
		 "knob khugepaged/../use_zero_page\t1\t0\n"
		 "knob ./use_zero_page\t1\t0\n"
		 "knob enabled\tmadvise\tnever;touch\n"
		 "knob enabled\tmadvise\tnever x\n"
		 "knob enabled\tmadvise\n", boot, fake.path);
	plant_journal(text, 0600);
	apply_restore();
	state_is_back(fake.path, &before, "fake journal: paths other than the"
		      " knobs, and values no knob has, are not written");

	snprintf(text, sizeof(text), "ptebatch-thp-journal 1\nboot"
		 " 00000000-0000-0000-0000-000000000000\ndir %s\n"
		 "knob enabled\tmadvise\tnever\n", fake.path);
	plant_journal(text, 0600);
	apply_restore();
	state_is_back(fake.path, &before, "fake journal: another boot's is not"
		      " replayed");

	if (t_tmpdir_make(&other, "thp-sysfs-other") &&
	    t_tmpdir_put(&other, "enabled", "always\n")) {
		snprintf(text, sizeof(text), "ptebatch-thp-journal 1\nboot %s\n"
			 "dir %s\nknob enabled\talways\tnever\n", boot,
			 other.path);
		plant_journal(text, 0600);
		apply_restore();
		tap_is_str(get(other.path, "enabled"), "always", "fake journal:"
			   " one naming another directory is not followed there");
	}

	/* A valid journal, only not in a file of our own. */
	snprintf(text, sizeof(text), "ptebatch-thp-journal 1\nboot %s\ndir %s\n"
		 "knob enabled\tmadvise\tnever\n", boot, fake.path);
	plant_journal(text, 0622);
	apply_restore();
	state_is_back(fake.path, &before, "fake journal: one others may write is"
		      " not replayed");
	t_tmpdir_path(&fake, FAKE_JOURNAL, path, sizeof(path));
	unlink(path);
	/* Through it, a valid journal to read, and a file to write. */
	if (other.path[0] && t_tmpdir_put(&other, "victim", text) &&
	    !symlink(t_tmpdir_path(&other, "victim", victim, sizeof(victim)),
		     path)) {
		apply_restore();
		state_is_back(fake.path, &before, "fake journal: a symbolic link"
			      " is not followed to read one");
		text[strlen(text) - 1] = '\0';
		tap_is_str(get(other.path, "victim"), text, "fake journal: nor"
			   " to write one, its target untouched");
	} else {
		tap_ok(false, "fake journal: a symbolic link planted");
	}
	tap_ok(access(path, F_OK) != 0 && errno == ENOENT, "fake journal:"
	       " none is left after a restore");
	unlink(path);
	t_tmpdir_remove(&other);
}

static void test_fallback_check(void)
{
	struct thp_fallback before, after;
	char why[256];
	int ret;

	ret = thp_fallback_snapshot(&before);
	if (!tap_ok(ret == 0 && before.size[2].have && !before.size[1].have &&
		    before.have_collapsed,
		    "fallback: snapshot of the fake tree (got %d)", ret))
		return;
	after = before;
	tap_ok(thp_fallback_check(&before, &after, why, sizeof(why)) == 0 &&
	       !*why, "fallback: no change, no reason");
	t_tmpdir_put(&fake, "hugepages-64kB/stats/anon_fault_alloc", "64\n");
	t_tmpdir_put(&fake, "hugepages-64kB/stats/anon_fault_fallback", "2\n");
	thp_fallback_snapshot(&after);
	ret = thp_fallback_check(&before, &after, why, sizeof(why));
	tap_ok(ret == 1, "fallback: two 64K fallbacks are found");
	tap_is_str(why, "2 of the 66 64kB faults fell back to smaller folios",
		   "fallback: the reason counts them");
	t_tmpdir_put(&fake, "hugepages-2048kB/stats/anon_fault_fallback", "1\n");
	t_tmpdir_put(&fake, "hugepages-2048kB/stats/anon_fault_fallback_charge", "1\n");
	t_tmpdir_put(&fake, "khugepaged/pages_collapsed", "512\n");
	thp_fallback_snapshot(&after);
	thp_fallback_check(&before, &after, why, sizeof(why));
	tap_is_str(why, "2 of the 66 64kB faults fell back to smaller folios;"
		   " 1 of the 1 2048kB faults fell back to smaller folios;"
		   " 1 of them at the memory cgroup charge;"
		   " khugepaged collapsed 512 pages during the run",
		   "fallback: every size, the charge and khugepaged");
}

/* ---- the real sysfs --------------------------------------------------- */

static void test_real_exit_paths(void)
{
	static const struct ending_case cases[] = {
		{ END_SIGNAL, SIGTERM, "SIGTERM" },
		{ END_SIGNAL, SIGINT, "SIGINT" },
		{ END_EXIT, 0, "exit()" },
	};
	enum scn_policy mthp[SCN_MAX_MTHP_SIZES] = { 0 };
	struct state before, during;
	struct thp_fallback fb;
	char why[256];
	size_t i;
	int status;

	if (geteuid()) {
		tap_skip("not root", "real sysfs: apply, signals, restore");
		return;
	}
	/*
	 * From the first read to the last comparison: another run (a diff,
	 * a bench on the kernel) must not change the knobs in between.  The
	 * children apply under it: they share it (thp_sysfs.h).
	 */
	if (thp_lock_take(why, sizeof(why))) {
		tap_ok(false, "real sysfs: the THP settings lock");
		tap_diag("%s", why);
		return;
	}
	if (thp_sysfs_set_dir(NULL)) {
		thp_lock_drop();
		return;
	}
	/* A configuration unlike the usual one, so restoring shows. */
	set_policy(mthp, 64UL << 10, SCN_POL_ALWAYS);
	set_policy(mthp, 2UL << 20, SCN_POL_NEVER);
	read_state(THP_SYSFS_DIR, &before);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		status = run_child(mthp, cases[i].how, cases[i].sig,
				   THP_SYSFS_DIR, &during, why, sizeof(why));
		if (status == -1) {
			tap_skip(why, "real sysfs, %s", cases[i].name);
			continue;
		}
		tap_ok(!strcmp(during.word[13], "always") &&
		       !strcmp(during.word[0], "never") &&
		       !strcmp(during.word[7], "86400000"),
		       "real sysfs, %s: the child's settings were in place",
		       cases[i].name);
		state_is_back(THP_SYSFS_DIR, &before,
			      "real sysfs, %s: every value is back", cases[i].name);
	}
	tap_ok(thp_fallback_snapshot(&fb) == 0 && fb.have_collapsed,
	       "real sysfs: the fallback counters can be read");
	thp_sysfs_set_dir(fake.path);
	thp_lock_drop();
}

/* ---- the THP settings lock -------------------------------------------- */

/*
 * How long a lock test waits for something before it calls it hung and
 * fails.  Never a timing assertion: the other runs on this machine (a CI
 * run, a developer's diff) may hold the lock for a while, and a waiting
 * run speaks after a second.
 */
#define LOCK_TEST_BOUND_S 300

static struct timespec bound_from_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += LOCK_TEST_BOUND_S;
	return t;
}

/* Milliseconds until @deadline, 0 once it has passed. */
static int ms_left(const struct timespec *deadline)
{
	struct timespec now;
	long ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (deadline->tv_sec - now.tv_sec) * 1000 +
	     (deadline->tv_nsec - now.tv_nsec) / 1000000;
	return ms > 0 ? (int)ms : 0;
}

enum wait_end { SAW_TEXT, SAW_OTHER, ENDED, BOUND_HIT };

/*
 * Append what @fd says to @buf (@size bytes, kept NUL-terminated) until
 * it holds @want (NULL: until @fd ends), @other (if >= 0) has something
 * to read, @fd ends, or @deadline passes.
 */
static enum wait_end wait_for_text(int fd, char *buf, size_t size,
				   const char *want, int other,
				   const struct timespec *deadline)
{
	struct pollfd pfd[2] = { { fd, POLLIN, 0 }, { other, POLLIN, 0 } };
	size_t len = strlen(buf);
	char scratch[512];
	ssize_t n;

	for (;;) {
		if (want && strstr(buf, want))
			return SAW_TEXT;
		n = poll(pfd, other >= 0 ? 2 : 1, ms_left(deadline));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return BOUND_HIT;
		if (other >= 0 && (pfd[1].revents & POLLIN))
			return SAW_OTHER;
		if (other >= 0 && pfd[1].revents)
			other = -1;	/* ended with nothing to read */
		if (!pfd[0].revents)
			continue;
		/* Past the buffer's end the text is read and dropped. */
		n = len + 1 < size ? read(fd, buf + len, size - len - 1) :
				     read(fd, scratch, sizeof(scratch));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return ENDED;
		if (len + 1 < size) {
			len += n;
			buf[len] = '\0';
		}
	}
}

/* waitpid() with the bound; past it, SIGTERM (which restores) and wait. */
static int wait_bounded(pid_t pid, const struct timespec *deadline)
{
	const struct timespec nap = { 0, 10 * 1000000L };
	int status;
	pid_t got;

	while ((got = waitpid(pid, &status, WNOHANG)) == 0 && ms_left(deadline))
		nanosleep(&nap, NULL);
	if (got == 0) {
		tap_diag("pid %d still running after %d s: stopped", (int)pid,
			 LOCK_TEST_BOUND_S);
		kill(pid, SIGTERM);
		got = waitpid(pid, &status, 0);
	}
	return got == pid ? status : -1;
}

/*
 * Another process holding the THP settings lock: a child that takes it
 * with thp_lock_take(), says so, and holds it until a byte comes down its
 * pipe from us or the pipe ends (so also when we die).
 */
struct holder {
	pid_t pid;
	int release;	/* a byte, or its end: the holder lets go and exits */
};

static void holder_body(int up, int down)
{
	char c, reason[256] = "";

	if (thp_lock_take(reason, sizeof(reason))) {
		t_write_all(up, reason, strlen(reason));
		_exit(1);
	}
	t_write_all(up, "locked", 6);
	close(up);
	/* A byte, or the end: every copy of the write end closed. */
	while (read(down, &c, 1) < 0 && errno == EINTR)
		;
	thp_lock_drop();
	_exit(0);
}

/*
 * Let go, and reap the holder.  A byte, not only the end of the pipe: a
 * child forked meanwhile may hold a copy of its write end.
 */
static void holder_stop(struct holder *h)
{
	struct timespec deadline = bound_from_now();

	if (h->release >= 0) {
		t_write_all(h->release, "", 1);
		close(h->release);
	}
	h->release = -1;
	if (h->pid > 0)
		wait_bounded(h->pid, &deadline);
	h->pid = -1;
}

/* False, with the reason in @why, if it did not get the lock in time. */
static bool holder_start(struct holder *h, char *why, size_t whylen)
{
	struct timespec deadline = bound_from_now();
	char answer[256] = "";
	int up[2], down[2];
	enum wait_end end;

	h->pid = -1;
	h->release = -1;
	if (pipe2(up, O_CLOEXEC))
		return false;
	if (pipe2(down, O_CLOEXEC)) {
		close(up[0]);
		close(up[1]);
		return false;
	}
	fflush(stdout);
	fflush(stderr);
	h->pid = fork();
	if (h->pid == 0) {
		close(up[0]);
		close(down[1]);
		holder_body(up[1], down[0]);
	}
	close(up[1]);
	close(down[0]);
	h->release = down[1];
	end = h->pid < 0 ? ENDED : wait_for_text(up[0], answer, sizeof(answer),
						  NULL, -1, &deadline);
	close(up[0]);
	if (end == ENDED && !strcmp(answer, "locked"))
		return true;
	snprintf(why, whylen, "%s", end == BOUND_HIT ? "the holder did not"
		 " get the lock in time" : answer[0] ? answer :
		 "the holder died");
	if (h->pid > 0)
		kill(h->pid, SIGTERM);	/* it holds nothing yet */
	holder_stop(h);
	return false;
}

/* $BUILD/ptebatch: this program is $BUILD/tests/test_thp_sysfs. */
static bool tool_path(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);
	char *slash;
	int i;

	if (n <= 0)
		return false;
	buf[n] = '\0';
	for (i = 0; i < 2; i++) {
		slash = strrchr(buf, '/');
		if (!slash)
			return false;
		*slash = '\0';
	}
	if (strlen(buf) + sizeof("/ptebatch") > size)
		return false;
	strcat(buf, "/ptebatch");
	return access(buf, X_OK) == 0;
}

/* Base pages only: on the kernel it never falls back, so never skips. */
#define LOCK_TEST_SCENARIO "tests/scenarios/cow-basic-4k.scn"

/*
 * Start `@tool run --backend kernel LOCK_TEST_SCENARIO`, its stdout to
 * /dev/null, its stderr to a pipe whose read end goes to *@err.  Returns
 * its pid, or -1.
 */
static pid_t start_run(const char *tool, int *err)
{
	int fds[2];
	pid_t pid;

	*err = -1;
	if (pipe2(fds, O_CLOEXEC))
		return -1;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null < 0 || dup2(null, STDOUT_FILENO) < 0 ||
		    dup2(fds[1], STDERR_FILENO) < 0)
			_exit(127);
		execl(tool, tool, "run", "--backend", "kernel",
		      LOCK_TEST_SCENARIO, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	if (pid < 0) {
		close(fds[0]);
		return -1;
	}
	*err = fds[0];
	return pid;
}

/* Can a test run the kernel backend's apply here?  If not, why. */
static const char *real_sysfs_missing(void)
{
	if (geteuid())
		return "not root";
	if (access(THP_SYSFS_DIR "/enabled", F_OK))
		return "no " THP_SYSFS_DIR;
	return NULL;
}

/*
 * `ptebatch run --backend kernel` while another process holds the THP
 * settings lock: it says on stderr whom it waits for, changes nothing
 * meanwhile, still ends on SIGTERM and SIGINT (the restore path's
 * signals), and once the holder lets go it runs to its end.
 */
static void test_real_run_waits(void)
{
	static const struct ending_case sigs[] = {
		{ END_SIGNAL, SIGTERM, "SIGTERM" },
		{ END_SIGNAL, SIGINT, "SIGINT" },
	};
	char tool[512], why[256], want[96], err[4096] = "", other[4096];
	const char *missing = real_sysfs_missing();
	struct state before, during;
	struct timespec deadline;
	int fd, wfd, status;
	enum wait_end end;
	struct holder h;
	pid_t run, w;
	size_t i;

	if (missing) {
		tap_skip(missing, "lock: a kernel run waits for the THP settings"
			 " lock and says whose");
		return;
	}
	if (!tap_ok(tool_path(tool, sizeof(tool)) &&
		    !access(LOCK_TEST_SCENARIO, R_OK),
		    "lock: ptebatch and " LOCK_TEST_SCENARIO " are there")) {
		tap_diag("looked for %s", tool);
		return;
	}
	if (!tap_ok(holder_start(&h, why, sizeof(why)), "lock: another process"
		    " holds the THP settings lock")) {
		tap_diag("%s", why);
		return;
	}
	read_state(THP_SYSFS_DIR, &before);
	snprintf(want, sizeof(want), "waiting for the THP settings lock held"
		 " by pid %d", (int)h.pid);

	run = start_run(tool, &fd);
	deadline = bound_from_now();
	end = run > 0 ? wait_for_text(fd, err, sizeof(err), want, -1, &deadline)
		      : ENDED;
	if (end == ENDED && run > 0) {
		/* Done before the lock: skipped (exit 4), or failed. */
		status = wait_bounded(run, &deadline);
		run = -1;
		if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 4) {
			holder_stop(&h);
			close(fd);
			err[strcspn(err, "\n")] = '\0';
			tap_skip(err, "lock: a kernel run waits for the THP"
				 " settings lock and says whose");
			return;
		}
	}
	if (!tap_ok(end == SAW_TEXT, "lock: a kernel run says on stderr it is"
		    " waiting for the THP settings lock held by pid <the"
		    " holder's>"))
		tap_diag("wanted '%s' in its stderr: %s", want, err);

	for (i = 0; end == SAW_TEXT && i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		other[0] = '\0';
		w = start_run(tool, &wfd);
		deadline = bound_from_now();
		if (w > 0 && wait_for_text(wfd, other, sizeof(other), want, -1,
					   &deadline) == SAW_TEXT)
			kill(w, sigs[i].sig);
		else if (w > 0)
			kill(w, SIGTERM);
		status = w > 0 ? wait_bounded(w, &deadline) : -1;
		if (wfd >= 0)
			close(wfd);
		if (!tap_ok(died_of(status, sigs[i].sig), "lock: a run waiting for"
			    " it ends on %s (status %#x)", sigs[i].name, status))
			tap_diag("its stderr: %s", other);
	}

	read_state(THP_SYSFS_DIR, &during);
	if (!tap_ok(run > 0 && waitpid(run, &status, WNOHANG) == 0 &&
		    !*state_diff(&before, &during), "lock: meanwhile the run"
		    " waits and no knob changed"))
		tap_diag("%s", state_diff(&before, &during));

	holder_stop(&h);
	deadline = bound_from_now();
	if (fd >= 0) {
		wait_for_text(fd, err, sizeof(err), NULL, -1, &deadline);
		close(fd);
	}
	status = run > 0 ? wait_bounded(run, &deadline) : -1;
	tap_ok(status != -1 && WIFEXITED(status) && !WEXITSTATUS(status),
	       "lock: once the holder lets go, the run goes to its end"
	       " (status %#x)", status);
	if (!tap_ok(end == SAW_TEXT && strchr(err, '\n') == err + strlen(err) - 1,
		    "lock: and it said nothing else on stderr"))
		tap_diag("its stderr: %s", err);
}

/*
 * In a child: the real-sysfs cases, their TAP lines and stderr to @out,
 * a byte to @reads before each read of the real knobs.  Exits 0 if they
 * all passed.
 */
static void real_cases_body(int out, int reads)
{
	if (dup2(out, STDOUT_FILENO) < 0 || dup2(out, STDERR_FILENO) < 0)
		_exit(127);
	memset(&tap_state, 0, sizeof(tap_state));
	real_reads_fd = reads;
	test_real_exit_paths();
	fflush(stdout);
	_exit(tap_state.failed ? 1 : 0);
}

/*
 * The real-sysfs cases read the knobs, let children change and restore
 * them, and compare: a kernel run of someone else's in between (a diff,
 * a bench on the kernel) would make them fail, so they hold the THP
 * settings lock from their first read to their last.  Run them while
 * another process holds it: they must read nothing until it lets go,
 * which it does when they say they are waiting for it (or read anyway),
 * and then pass.
 */
static void test_real_cases_wait(void)
{
	const char *missing = real_sysfs_missing();
	char why[256], want[96], text[16384] = "";
	int out[2], reads[2], status;
	struct timespec deadline;
	struct pollfd early;
	enum wait_end end;
	struct holder h;
	pid_t pid;

	if (missing) {
		tap_skip(missing, "real sysfs: the cases wait for the THP"
			 " settings lock");
		return;
	}
	if (!tap_ok(holder_start(&h, why, sizeof(why)), "real sysfs: another"
		    " process holds the THP settings lock")) {
		tap_diag("%s", why);
		return;
	}
	if (pipe2(out, O_CLOEXEC) || pipe2(reads, O_CLOEXEC)) {
		tap_ok(false, "real sysfs: pipes for the cases");
		holder_stop(&h);
		return;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0)
		real_cases_body(out[1], reads[1]);
	close(out[1]);
	close(reads[1]);
	snprintf(want, sizeof(want), "waiting for the THP settings lock held"
		 " by pid %d", (int)h.pid);
	deadline = bound_from_now();
	end = pid < 0 ? ENDED : wait_for_text(out[0], text, sizeof(text), want,
					      reads[0], &deadline);
	/* Anything read before we let go was read under another's lock. */
	early = (struct pollfd){ reads[0], POLLIN, 0 };
	if (end == SAW_TEXT && poll(&early, 1, 0) == 1 &&
	    (early.revents & POLLIN))
		end = SAW_OTHER;
	if (!tap_ok(end == SAW_TEXT, "real sysfs: the cases read no knob while"
		    " another process holds the THP settings lock, and say they"
		    " wait"))
		tap_diag("%s", end == SAW_OTHER ? "they read the knobs under"
			 " another's lock" : end == ENDED ? "they ended" :
			 "they neither read nor said they wait");
	holder_stop(&h);
	deadline = bound_from_now();
	wait_for_text(out[0], text, sizeof(text), NULL, -1, &deadline);
	status = pid < 0 ? -1 : wait_bounded(pid, &deadline);
	if (!tap_ok(status != -1 && WIFEXITED(status) && !WEXITSTATUS(status),
		    "real sysfs: once it lets go, they run and pass (status %#x)",
		    status))
		tap_diag_text(text);
	close(out[0]);
	close(reads[0]);
}

int main(void)
{
	/* The children that die of SIGSEGV, SIGABRT, SIGBUS and SIGQUIT
	 * should leave no core files behind. */
	struct rlimit no_core = { 0, 0 };

	setrlimit(RLIMIT_CORE, &no_core);
	if (!make_fake_tree() || thp_sysfs_set_dir(fake.path)) {
		t_tmpdir_remove(&fake);
		return 1;	/* nothing can run without the tree */
	}
	test_fake_apply();
	test_fake_unsupported();
	test_fake_exit_paths();
	test_fake_grandchild();
	test_fake_not_writable();
	test_fake_sigkill();
	test_fake_journal_hostile();
	test_fallback_check();
	test_real_exit_paths();
	test_real_cases_wait();
	test_real_run_waits();
	t_tmpdir_remove(&fake);
	return tap_done();
}
