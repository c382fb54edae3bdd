// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_outfile.c - lib/outfile.c: what each kind of output path becomes
 * on a commit, on a failure, on a signal and at exit.  Every target is
 * private to the test, in a temporary directory: device nodes are made
 * there with mknod (root; skipped otherwise), never the real /dev ones.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/outfile.h"
#include "tests/unit/fixture.h"

static struct t_tmpdir dir;
static char why[1024];

static const char *at(const char *rel)
{
	static char bufs[4][512];
	static int next;
	char *b = bufs[next++ % 4];

	return t_tmpdir_path(&dir, rel, b, sizeof(bufs[0]));
}

/* The whole file @path (malloc'd, NUL-terminated), or NULL. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, len = 0, n;

	if (!f)
		return NULL;
	do {
		char *more;

		if (cap - len < 4096) {
			more = realloc(buf, cap + 65536);
			if (!more) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = more;
			cap += 65536;
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
	} while (n);
	buf[len] = '\0';
	fclose(f);
	return buf;
}

static bool file_is(const char *path, const char *want)
{
	char *got = slurp(path);
	bool ok = got && !strcmp(got, want);

	if (!ok)
		tap_diag("%s holds '%s', wanted '%s'", path, got ? got : "(none)",
			 want);
	free(got);
	return ok;
}

/* The names in the test directory other than those listed, as one line. */
static const char *strays(const char *const *keep)
{
	static char list[2048];
	DIR *d = opendir(dir.path);
	struct dirent *e;

	list[0] = '\0';
	while (d && (e = readdir(d))) {
		const char *const *k;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		for (k = keep; *k && strcmp(*k, e->d_name); k++)
			;
		if (!*k && strlen(list) + strlen(e->d_name) + 2 < sizeof(list)) {
			strcat(list, " ");
			strcat(list, e->d_name);
		}
	}
	if (d)
		closedir(d);
	return list;
}

static bool no_strays(const char *const *keep)
{
	const char *s = strays(keep);

	if (*s)
		tap_diag("left in the directory:%s", s);
	return !*s;
}

/* Remove everything in the test directory. */
static void clean(void)
{
	t_tmpdir_remove(&dir);
	if (!t_tmpdir_make(&dir, "test_outfile")) {
		tap_diag("cannot make a temporary directory");
		exit(1);
	}
}

static int write_commit(const char *path, const char *text)
{
	struct outfile of;
	int ret = outfile_open(&of, "-o", path, 0, why, sizeof(why));

	if (ret)
		return ret;
	fputs(text, of.f);
	return outfile_commit(&of, why, sizeof(why));
}

static void test_absent_and_regular(void)
{
	const char *keep[] = { "new.txt", "old.txt", NULL };
	struct outfile of;
	struct stat st;
	mode_t mask = umask(022);
	int ret;

	clean();
	ret = write_commit(at("new.txt"), "hello\n");
	tap_ok(!ret && file_is(at("new.txt"), "hello\n"),
	       "an absent name: written, committed (%s)", ret ? why : "ok");
	memset(&st, 0, sizeof(st));
	stat(at("new.txt"), &st);
	tap_ok((st.st_mode & 07777) == 0644,
	       "a new file gets 0666 less the umask (0%o)",
	       (unsigned int)(st.st_mode & 07777));

	t_tmpdir_put(&dir, "old.txt", "old contents\n");
	chmod(at("old.txt"), 0640);
	ret = outfile_open(&of, "--json", at("old.txt"), 0, why, sizeof(why));
	tap_ok(!ret, "an existing regular file opens (%s)", ret ? why : "ok");
	if (ret)
		return;
	fputs("new contents\n", of.f);
	fflush(of.f);
	tap_ok(file_is(at("old.txt"), "old contents\n") &&
	       strlen(strays(keep)) > 1 && of.tmp && strstr(of.tmp, "/.old.txt."),
	       "until the commit the file is as it was, the output in"
	       " .old.txt.XXXXXX beside it");
	ret = outfile_commit(&of, why, sizeof(why));
	tap_ok(!ret && file_is(at("old.txt"), "new contents\n"),
	       "the commit replaces it (%s)", ret ? why : "ok");
	memset(&st, 0, sizeof(st));
	stat(at("old.txt"), &st);
	tap_ok((st.st_mode & 07777) == 0640,
	       "its mode is kept (0%o)", (unsigned int)(st.st_mode & 07777));
	tap_ok(no_strays(keep), "no temporary file is left after a commit");

	ret = outfile_open(&of, "--json", at("old.txt"), 0, why, sizeof(why));
	if (!ret) {
		fputs("half a result", of.f);
		outfile_discard(&of);
	}
	tap_ok(!ret && file_is(at("old.txt"), "new contents\n") &&
	       no_strays(keep), "a discard leaves the file byte for byte,"
	       " and no temporary file");
	outfile_discard(&of);
	tap_ok(no_strays(keep), "a second discard does nothing");
	umask(mask);
}

static void test_refusals(void)
{
	const char *keep[] = { "d", "file", NULL };
	struct outfile of;
	int ret;

	clean();
	ret = outfile_open(&of, "-o", at("missing/x.scn"), 0, why, sizeof(why));
	tap_ok(ret == -ENOENT && strstr(why, "-o: ") == why &&
	       strstr(why, "missing/x.scn: the directory") &&
	       strstr(why, "does not exist"),
	       "a missing directory: -ENOENT, flag and path named (%s)", why);
	t_tmpdir_mkdir(&dir, "d");
	ret = outfile_open(&of, "--svg", at("d"), 0, why, sizeof(why));
	tap_ok(ret == -EISDIR && strstr(why, "--svg: ") == why &&
	       strstr(why, "Is a directory"),
	       "a directory given as the file: -EISDIR (%s)", why);
	t_tmpdir_put(&dir, "file", "x");
	ret = outfile_open(&of, "-o", at("file/x"), 0, why, sizeof(why));
	tap_ok(ret == -ENOTDIR, "a file as a directory: -ENOTDIR (%s)", why);
	ret = outfile_open(&of, "-o", "", 0, why, sizeof(why));
	tap_ok(ret == -EINVAL && strstr(why, "empty"), "an empty name (%s)",
	       why);
	tap_ok(no_strays(keep), "nothing made by a refusal");

	ret = outfile_open(&of, "-o", at("file"), 0, why, sizeof(why));
	if (!ret) {
		struct outfile two;
		int ret2 = outfile_open(&two, "--events", at("file"), 0, why,
					sizeof(why));

		tap_ok(ret2 == -EINVAL && strstr(why, "the same file as -o"),
		       "one file for two flags is refused (%s)", why);
		if (!ret2)
			outfile_discard(&two);
		outfile_discard(&of);
	} else {
		tap_ok(false, "one file for two flags is refused (%s)", why);
	}

	if (geteuid()) {
		chmod(at("d"), 0555);
		ret = outfile_open(&of, "-o", at("d/x"), 0, why, sizeof(why));
		tap_ok(ret == -EACCES && strstr(why, "cannot create a file in"),
		       "a directory that is not writable: -EACCES (%s)", why);
		chmod(at("d"), 0755);
		t_tmpdir_put(&dir, "ro", "x");
		chmod(at("ro"), 0444);
		ret = outfile_open(&of, "-o", at("ro"), 0, why, sizeof(why));
		tap_ok(ret == -EACCES && strstr(why, "not writable"),
		       "a file that is not writable: -EACCES (%s)", why);
	} else {
		/* Root writes anything: ask as nobody, in a child. */
		pid_t pid;
		int status = -1;

		chmod(dir.path, 0755);
		t_tmpdir_put(&dir, "ro", "x");
		chmod(at("ro"), 0644);
		pid = fork();
		if (pid == 0) {
			int a, b;

			if (setgid(65534) || setuid(65534))
				_exit(3);
			a = outfile_open(&of, "-o", at("d/x"), 0, why,
					 sizeof(why));
			b = outfile_open(&of, "-o", at("ro"), 0, why,
					 sizeof(why));
			_exit(a == -EACCES && b == -EACCES &&
			      strstr(why, "not writable") ? 0 : 1);
		}
		waitpid(pid, &status, 0);
		tap_ok(WIFEXITED(status) && !WEXITSTATUS(status),
		       "not writable as nobody: a directory, a file (-EACCES)");
	}
}

static void test_devices(void)
{
	const char *keep[] = { "null", "full", NULL };
	struct outfile of;
	struct stat st;
	int ret;

	clean();
	if (mknod(at("null"), S_IFCHR | 0666, makedev(1, 3)) ||
	    mknod(at("full"), S_IFCHR | 0666, makedev(1, 7))) {
		tap_skip("mknod needs root", "a device node is written in place");
		tap_skip("mknod needs root", "a write error on a device");
		return;
	}
	ret = write_commit(at("null"), "into the void\n");
	tap_ok(!ret && !lstat(at("null"), &st) && S_ISCHR(st.st_mode) &&
	       st.st_rdev == makedev(1, 3) && no_strays(keep),
	       "a device node is written in place: still the device 1:3,"
	       " nothing beside it (%s)", ret ? why : "ok");
	ret = outfile_open(&of, "-o", at("full"), 0, why, sizeof(why));
	if (!ret) {
		fputs("more than fits\n", of.f);
		ret = outfile_commit(&of, why, sizeof(why));
	}
	tap_ok(ret == -ENOSPC && strstr(why, "-o: ") == why &&
	       strstr(why, "No space left") && !lstat(at("full"), &st) &&
	       S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 7) &&
	       no_strays(keep),
	       "a write error on a device: -ENOSPC named, the device kept (%s)",
	       why);
}

/* Read @fifo to its end in a child, into @out; the child's pid. */
static pid_t fifo_reader(const char *fifo, const char *out)
{
	pid_t pid = fork();

	if (pid == 0) {
		char buf[4096];
		int in = open(fifo, O_RDONLY), o = open(out, O_WRONLY |
							O_CREAT | O_TRUNC, 0644);
		ssize_t n;

		if (in < 0 || o < 0)
			_exit(1);
		while ((n = read(in, buf, sizeof(buf))) > 0)
			if (write(o, buf, (size_t)n) != n)
				_exit(1);
		_exit(0);
	}
	return pid;
}

static void test_fifo(void)
{
	const char *keep[] = { "fifo", "got", NULL };
	struct outfile of;
	struct stat st;
	int status = -1, ret;
	pid_t pid;

	clean();
	if (mkfifo(at("fifo"), 0644)) {
		tap_skip("mkfifo failed", "a FIFO is written in place");
		return;
	}
	pid = fifo_reader(at("fifo"), at("got"));
	ret = write_commit(at("fifo"), "through the pipe\n");
	waitpid(pid, &status, 0);
	tap_ok(!ret && !lstat(at("fifo"), &st) && S_ISFIFO(st.st_mode) &&
	       file_is(at("got"), "through the pipe\n") && no_strays(keep),
	       "a FIFO is written in place: its reader gets it, still a FIFO"
	       " (%s)", ret ? why : "ok");

	/* By path: the program writes a file of ours, copied in. */
	pid = fifo_reader(at("fifo"), at("got"));
	ret = outfile_open(&of, "--plot", at("fifo"), OUTFILE_BY_PATH, why,
			   sizeof(why));
	if (!ret) {
		FILE *f = fopen(outfile_write_path(&of), "w");

		tap_ok(f && strncmp(outfile_write_path(&of), dir.path,
				    strlen(dir.path)),
		       "by path, in place: the program writes a file outside"
		       " the FIFO's directory (%s)", outfile_write_path(&of));
		if (f) {
			fputs("drawn\n", f);
			fclose(f);
		}
		ret = outfile_commit(&of, why, sizeof(why));
	}
	waitpid(pid, &status, 0);
	tap_ok(!ret && file_is(at("got"), "drawn\n") && !lstat(at("fifo"), &st) &&
	       S_ISFIFO(st.st_mode) && no_strays(keep),
	       "by path, in place: the bytes reach the FIFO (%s)",
	       ret ? why : "ok");
}

static void test_links(void)
{
	const char *keep[] = { "real", "link", "link2", "dangling", "made",
			       "null", "dlink", NULL };
	char buf[512];
	struct outfile of;
	struct stat st;
	ssize_t n;
	int ret;

	clean();
	t_tmpdir_put(&dir, "real", "the link's target\n");
	if (symlink("real", at("link")) || symlink("link", at("link2"))) {
		tap_skip("symlink failed", "a symbolic link is followed");
		return;
	}
	ret = outfile_open(&of, "-o", at("link2"), 0, why, sizeof(why));
	if (!ret) {
		fputs("half", of.f);
		outfile_discard(&of);
	}
	tap_ok(!ret && file_is(at("real"), "the link's target\n") &&
	       !lstat(at("link2"), &st) && S_ISLNK(st.st_mode) &&
	       no_strays(keep),
	       "a failed run through two links: the target as it was, the"
	       " links kept (%s)", ret ? why : "ok");
	ret = write_commit(at("link2"), "replaced\n");
	n = readlink(at("link2"), buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	tap_ok(!ret && file_is(at("real"), "replaced\n") && n > 0 &&
	       !strcmp(buf, "link") && !lstat(at("link"), &st) &&
	       S_ISLNK(st.st_mode) && no_strays(keep),
	       "a commit through two links replaces the file they end at,"
	       " the links stay links (%s)", ret ? why : "ok");

	symlink("made", at("dangling"));
	ret = write_commit(at("dangling"), "created\n");
	tap_ok(!ret && file_is(at("made"), "created\n") &&
	       !lstat(at("dangling"), &st) && S_ISLNK(st.st_mode),
	       "a link to nothing: the file it names is created (%s)",
	       ret ? why : "ok");

	if (!mknod(at("null"), S_IFCHR | 0666, makedev(1, 3))) {
		symlink("null", at("dlink"));
		ret = write_commit(at("dlink"), "x\n");
		tap_ok(!ret && !lstat(at("null"), &st) && S_ISCHR(st.st_mode) &&
		       !lstat(at("dlink"), &st) && S_ISLNK(st.st_mode) &&
		       no_strays(keep),
		       "a link to a device: the device written in place, both"
		       " kept (%s)", ret ? why : "ok");
	} else {
		tap_skip("mknod needs root", "a link to a device");
	}
}

/* fs.protected_symlinks: a link planted by another user in /tmp. */
static void test_protected_link(void)
{
	char setting[8] = "";
	FILE *f = fopen("/proc/sys/fs/protected_symlinks", "r");
	struct outfile of;
	pid_t pid;
	int status = -1, ret;

	if (f) {
		if (!fgets(setting, sizeof(setting), f))
			setting[0] = '\0';
		fclose(f);
	}
	if (geteuid() || setting[0] != '1') {
		tap_skip(geteuid() ? "not root" : "fs.protected_symlinks is off",
			 "a link another user planted in a sticky directory");
		return;
	}
	clean();
	t_tmpdir_mkdir(&dir, "sticky");
	chmod(at("sticky"), 01777);
	t_tmpdir_put(&dir, "secret", "root's\n");
	pid = fork();
	if (pid == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(3);
		_exit(symlink(at("secret"), at("sticky/out.scn")) ? 1 : 0);
	}
	waitpid(pid, &status, 0);
	ret = outfile_open(&of, "-o", at("sticky/out.scn"), 0, why, sizeof(why));
	if (!ret)
		outfile_discard(&of);
	tap_ok(ret == -EACCES && strstr(why, "would not follow") &&
	       file_is(at("secret"), "root's\n"),
	       "a link another user planted in a sticky directory is refused"
	       " (%s)", ret ? why : "opened");
}

static void test_descriptors(void)
{
	const char *keep[] = { "log", NULL };
	char path[64], buf[64];
	int p[2], fd, ret;
	ssize_t n;

	clean();
	if (pipe(p)) {
		tap_skip("pipe failed", "/dev/fd/N");
		return;
	}
	snprintf(path, sizeof(path), "/dev/fd/%d", p[1]);
	ret = write_commit(path, "down the pipe\n");
	close(p[1]);
	n = read(p[0], buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(p[0]);
	tap_ok(!ret && !strcmp(buf, "down the pipe\n"),
	       "/dev/fd/N is descriptor N itself (%s)", ret ? why : "ok");

	/* A file opened for appending, as `>> log` opens it. */
	t_tmpdir_put(&dir, "log", "earlier\n");
	fd = open(at("log"), O_WRONLY | O_APPEND);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ret = write_commit(path, "later\n");
	close(fd);
	tap_ok(!ret && file_is(at("log"), "earlier\nlater\n") && no_strays(keep),
	       "/proc/self/fd/N of a file opened to append: appended to, not"
	       " replaced (%s)", ret ? why : "ok");

	fd = open(at("log"), O_RDONLY);
	snprintf(path, sizeof(path), "/dev/fd/%d", fd);
	ret = write_commit(path, "x");
	close(fd);
	tap_ok(ret == -EBADF && strstr(why, "not open for writing"),
	       "a descriptor open only for reading is refused (%s)", why);
}

static volatile sig_atomic_t alarms;

static void count_alarm(int sig)
{
	(void)sig;
	alarms++;
}

static void test_signals(void)
{
	const char *keep[] = { "target", "marker", NULL };
	struct sigaction sa;
	struct outfile of;
	int status = -1;
	pid_t pid;

	clean();
	t_tmpdir_put(&dir, "target", "before\n");
	pid = fork();
	if (pid == 0) {
		if (outfile_open(&of, "-o", at("target"), 0, why, sizeof(why)))
			_exit(2);
		fputs("partial", of.f);
		fflush(of.f);
		raise(SIGTERM);
		_exit(1);
	}
	waitpid(pid, &status, 0);
	tap_ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM &&
	       file_is(at("target"), "before\n") && no_strays(keep),
	       "SIGTERM: the process ends by it, the target unchanged, no"
	       " temporary file left");

	pid = fork();
	if (pid == 0) {
		if (outfile_open(&of, "-o", at("target"), 0, why, sizeof(why)))
			_exit(2);
		fputs("partial", of.f);
		exit(0);	/* no commit */
	}
	waitpid(pid, &status, 0);
	tap_ok(WIFEXITED(status) && file_is(at("target"), "before\n") &&
	       no_strays(keep),
	       "exit() without a commit: the temporary file removed");

	/* A forked child that inherited the handler removes nothing of its
	 * parent's. */
	pid = fork();
	if (pid == 0) {
		pid_t grandchild;
		int gs = -1;

		if (outfile_open(&of, "-o", at("target"), 0, why, sizeof(why)))
			_exit(2);
		grandchild = fork();
		if (grandchild == 0) {
			raise(SIGINT);
			_exit(1);
		}
		waitpid(grandchild, &gs, 0);
		if (access(of.tmp, F_OK))
			_exit(3);
		fputs("after\n", of.f);
		_exit(outfile_commit(&of, why, sizeof(why)) ? 4 : 0);
	}
	waitpid(pid, &status, 0);
	tap_ok(WIFEXITED(status) && !WEXITSTATUS(status) &&
	       file_is(at("target"), "after\n") && no_strays(keep),
	       "a child killed by SIGINT leaves its parent's temporary file"
	       " (status %d)", WIFEXITED(status) ? WEXITSTATUS(status) : -1);

	/* A handler of the program's own that returns (libFuzzer's timer
	 * on SIGALRM, every few seconds): the run goes on, and so does its
	 * file; the next SIGTERM still removes it. */
	pid = fork();
	if (pid == 0) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = count_alarm;
		sigaction(SIGALRM, &sa, NULL);
		if (outfile_open(&of, "-o", at("target"), 0, why, sizeof(why)))
			_exit(2);
		fputs("kept\n", of.f);
		raise(SIGALRM);
		raise(SIGALRM);
		if (alarms != 2 || access(of.tmp, F_OK))
			_exit(3);
		if (outfile_commit(&of, why, sizeof(why)))
			_exit(4);
		if (outfile_open(&of, "-o", at("target"), 0, why, sizeof(why)))
			_exit(5);
		fputs("partial", of.f);
		fflush(of.f);
		raise(SIGALRM);
		raise(SIGTERM);
		_exit(6);
	}
	waitpid(pid, &status, 0);
	tap_ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM &&
	       file_is(at("target"), "kept\n") && no_strays(keep),
	       "a handler of the program's own that returns: the file stays"
	       " and is committed, a later SIGTERM still removes the next"
	       " one (status %d)",
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);

	/* Ignored before: stays ignored. */
	pid = fork();
	if (pid == 0) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_IGN;
		sigaction(SIGHUP, &sa, NULL);
		if (outfile_open(&of, "-o", at("target"), 0, why, sizeof(why)))
			_exit(2);
		raise(SIGHUP);		/* ignored before: still ignored */
		if (access(of.tmp, F_OK))
			_exit(3);
		outfile_discard(&of);
		sigaction(SIGTERM, NULL, &sa);
		_exit(sa.sa_handler == SIG_DFL ? 0 : 4);
	}
	waitpid(pid, &status, 0);
	tap_ok(WIFEXITED(status) && !WEXITSTATUS(status),
	       "an ignored signal stays ignored; the handlers are given back"
	       " when the last file closes (status %d)",
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

static void test_check(void)
{
	const char *keep[] = { "fifo", "d", NULL };
	int ret;

	clean();
	ret = outfile_check("--plot", at("p.svg"), why, sizeof(why));
	tap_ok(!ret && no_strays(keep), "check: an absent name in a directory"
	       " is taken, nothing made (%s)", ret ? why : "ok");
	ret = outfile_check("--plot", at("nodir/p.svg"), why, sizeof(why));
	tap_ok(ret == -ENOENT && strstr(why, "--plot: ") == why,
	       "check: a missing directory (%s)", why);
	mkfifo(at("fifo"), 0644);
	alarm(10);	/* opening a FIFO without a reader would block */
	ret = outfile_check("--plot", at("fifo"), why, sizeof(why));
	alarm(0);
	tap_ok(!ret && no_strays(keep), "check: a FIFO is taken without"
	       " opening it (%s)", ret ? why : "ok");

	ret = outfile_check_dir("--out", at("d"), why, sizeof(why));
	tap_ok(!ret && no_strays(keep), "check_dir: a directory to be made"
	       " is not made by the check (%s)", ret ? why : "ok");
	t_tmpdir_mkdir(&dir, "d");
	ret = outfile_check_dir("--out", at("d"), why, sizeof(why));
	tap_ok(!ret, "check_dir: an existing directory (%s)", ret ? why : "ok");
	ret = outfile_check_dir("--out", at("nodir/d"), why, sizeof(why));
	tap_ok(ret == -ENOENT && strstr(why, "--out: ") == why &&
	       strstr(why, "does not exist"), "check_dir: its parent"
	       " missing (%s)", why);
	ret = outfile_check_dir("--out", at("fifo"), why, sizeof(why));
	tap_ok(ret == -ENOTDIR, "check_dir: not a directory (%s)", why);
}

static void test_by_path_and_scratch(void)
{
	const char *keep[] = { "fig.svg", NULL };
	struct outfile of;
	char *saved = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
	FILE *f;
	int ret;

	clean();
	t_tmpdir_put(&dir, "fig.svg", "old figure\n");
	ret = outfile_open(&of, "--plot", at("fig.svg"), OUTFILE_BY_PATH, why,
			   sizeof(why));
	tap_ok(!ret && !of.f && outfile_write_path(&of) &&
	       strstr(outfile_write_path(&of), "/.fig.svg."),
	       "by path: no stream, a file beside the target to write (%s)",
	       ret ? why : outfile_write_path(&of));
	if (ret)
		return;
	f = fopen(outfile_write_path(&of), "w");
	if (f) {
		fputs("new figure\n", f);
		fclose(f);
	}
	tap_ok(file_is(at("fig.svg"), "old figure\n"),
	       "by path: the target as it was until the commit");
	ret = outfile_commit(&of, why, sizeof(why));
	tap_ok(!ret && file_is(at("fig.svg"), "new figure\n") && no_strays(keep),
	       "by path: the commit renames it over the target (%s)",
	       ret ? why : "ok");

	setenv("TMPDIR", dir.path, 1);
	ret = outfile_scratch(&of, "ptebatch-test", why, sizeof(why));
	tap_ok(!ret && of.f && !strncmp(outfile_write_path(&of), dir.path,
					 strlen(dir.path)) &&
	       strstr(outfile_write_path(&of), "/ptebatch-test-"),
	       "scratch: in $TMPDIR, named NAME-XXXXXX (%s)",
	       ret ? why : outfile_write_path(&of));
	if (!ret) {
		fputs("rows", of.f);
		outfile_discard(&of);
	}
	tap_ok(no_strays(keep), "scratch: removed by the discard");
	if (saved) {
		setenv("TMPDIR", saved, 1);
		free(saved);
	} else {
		unsetenv("TMPDIR");
	}
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_absent_and_regular();
	test_refusals();
	test_devices();
	test_fifo();
	test_links();
	test_protected_link();
	test_descriptors();
	test_signals();
	test_check();
	test_by_path_and_scratch();
	t_tmpdir_remove(&dir);
	return tap_done();
}
