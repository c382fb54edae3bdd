/*
 * test_thp_sysfs.c - the kernel backend's THP settings: what a run
 * writes, that every value comes back on every exit path (restore,
 * exit(), a fatal signal; never from a child that inherited the handlers),
 * and the fallback counters' explanation.
 *
 * Most cases run on a fake tree of plain files in a temporary directory,
 * so they run anywhere.  The cases on the real /sys/kernel/mm/
 * transparent_hugepage need root; each one compares every file it could
 * touch with what it read before, and they are skipped when not root.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

static void read_state(const char *dir, struct state *st)
{
	int i;

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
	enum scn_policy mthp[SCN_NR_MTHP_SIZES] = { 0 };
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
	enum scn_policy mthp[SCN_NR_MTHP_SIZES] = { 0 };
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
	enum scn_policy mthp[SCN_NR_MTHP_SIZES] = { 0 };
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
	enum scn_policy mthp[SCN_NR_MTHP_SIZES] = { 0 };
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
	enum scn_policy mthp[SCN_NR_MTHP_SIZES] = { 0 };
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
	enum scn_policy mthp[SCN_NR_MTHP_SIZES] = { 0 };
	struct state before, during;
	struct thp_fallback fb;
	char why[256];
	size_t i;
	int status;

	if (geteuid()) {
		tap_skip("not root", "real sysfs: apply, signals, restore");
		return;
	}
	if (thp_sysfs_set_dir(NULL))
		return;
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
	test_fallback_check();
	test_real_exit_paths();
	t_tmpdir_remove(&fake);
	return tap_done();
}
