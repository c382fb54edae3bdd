// SPDX-License-Identifier: GPL-2.0-only
/*
 * replay.c - a fuzz harness without libFuzzer: its entry point on every
 * file of some directories, one TAP line per file.
 *
 *	fuzz_replay_NAME [DIR|FILE]...
 *
 * Without arguments it replays fuzz/regressions/NAME (the crashes found so
 * far; the directory may be missing or hold only dot files) and
 * fuzz/corpus/NAME (which must exist), paths from the top of the tree, as
 * tests/run-all.sh runs tests.  Files whose names start with '.' are left
 * out.  FUZZ_REPLAY_MAX=N runs only N files of each corpus directory,
 * spread evenly over its sorted listing (regressions always run).
 *
 * Each input runs in a child process, so that an abort(), a sanitizer
 * report or a crash costs one "not ok" line and not the whole run; a child
 * still running after FUZZ_REPLAY_TIMEOUT seconds (default 30) is killed
 * and fails too.  The exit status is 1 if any input failed.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz/fuzz.h"
#include "lib/readfile.h"
#include "tests/tap.h"

#define REPLAY_TIMEOUT 30
/* Bytes of a failed input's output shown; FUZZ_VERBOSE shows them always. */
#define REPLAY_OUTPUT_MAX 16384

/*
 * The number in the environment variable @name, @dflt when it is unset
 * or empty, into *@out; -1 (said on stderr) when it is no number from 0
 * to 1000000: a typo is not the default.
 */
static int env_uint(const char *name, unsigned int dflt, unsigned int *out)
{
	const char *v = getenv(name);
	char *end;
	unsigned long n;

	*out = dflt;
	if (!v || !*v)
		return 0;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (v[0] < '0' || v[0] > '9' || errno || *end || n > 1000000) {
		fprintf(stderr, "%s: expected a number from 0 to 1000000, got"
			" '%s'\n", name, v);
		return -1;
	}
	*out = (unsigned int)n;
	return 0;
}

/* The child: one input, exit status 0 if the harness returned. */
static void __attribute__((noreturn)) run_child(const char *path,
						unsigned int timeout)
{
	char *data, why[512];
	size_t len;

	if (readfile_all(path, FUZZ_INPUT_MAX_BYTES, "a fuzz input", &data,
			 &len, why, sizeof(why))) {
		fprintf(stderr, "%s\n", why);
		_exit(2);
	}
	alarm(timeout);
	LLVMFuzzerTestOneInput((const uint8_t *)data, len);
	free(data);
	exit(0);
}

/* Replay @path in a child; one TAP line, its output as diagnostics. */
static void replay_file(const char *path, unsigned int timeout)
{
	/* In memory: no file of its own to leave behind in /tmp. */
	int fd = memfd_create("fuzz_replay", MFD_CLOEXEC), status;
	char *out;
	size_t len;
	pid_t pid;

	if (fd < 0) {
		tap_ok(false, "%s (memfd_create: %s)", path, strerror(errno));
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		run_child(path, timeout);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		tap_ok(false, "%s (fork or wait failed: %s)", path,
		       strerror(errno));
		close(fd);
		return;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		tap_ok(true, "%s", path);
	else if (WIFSIGNALED(status))
		tap_ok(false, "%s (killed by signal %d, %s)", path,
		       WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		tap_ok(false, "%s (exit status %d)", path, WEXITSTATUS(status));
	/* What the harness said about it, the start of it. */
	if (!WIFEXITED(status) || WEXITSTATUS(status) || getenv("FUZZ_VERBOSE")) {
		lseek(fd, 0, SEEK_SET);
		out = calloc(1, REPLAY_OUTPUT_MAX + 1);
		len = 0;
		for (ssize_t n; out && len < REPLAY_OUTPUT_MAX &&
		     (n = read(fd, out + len, REPLAY_OUTPUT_MAX - len)) > 0;)
			len += n;
		if (out)
			tap_diag_text(out);
		free(out);
	}
	close(fd);
}

static int skip_dot(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/*
 * Replay the files of @dir (or @dir itself if it is a file); a missing
 * directory is a failure unless @optional.
 */
static void replay_dir(const char *dir, bool optional, unsigned int max,
		       unsigned int timeout)
{
	struct dirent **names;
	struct stat st;
	char path[4096];
	int nr, i, ran = 0;

	if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
		replay_file(dir, timeout);
		return;
	}
	nr = scandir(dir, &names, skip_dot, alphasort);
	if (nr < 0) {
		if (optional && errno == ENOENT) {
			tap_diag("%s: no such directory, nothing to replay", dir);
			return;
		}
		tap_ok(false, "%s: cannot list: %s", dir, strerror(errno));
		return;
	}
	for (i = 0; i < nr; i++) {
		/* With a cap: the last file of each of max equal slices. */
		bool pick = !max || (unsigned int)nr <= max ||
			    (unsigned long)i * max / nr !=
			    (unsigned long)(i + 1) * max / nr;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		if (pick && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			replay_file(path, timeout);
			ran++;
		}
		free(names[i]);
	}
	free(names);
	if (nr > ran)
		tap_diag("%s: %d of %d files replayed", dir, ran, nr);
	if (!ran && !optional)
		tap_ok(false, "%s: no inputs", dir);
}

int main(int argc, char **argv)
{
	unsigned int max, timeout;
	char dir[256];
	int i;

	if (env_uint("FUZZ_REPLAY_MAX", 0, &max) ||
	    env_uint("FUZZ_REPLAY_TIMEOUT", REPLAY_TIMEOUT, &timeout))
		return 2;

	if (argc > 1) {
		for (i = 1; i < argc; i++)
			replay_dir(argv[i], false, max, timeout);
		return tap_done();
	}
	snprintf(dir, sizeof(dir), "fuzz/regressions/%s", fuzz_harness_name);
	replay_dir(dir, true, 0, timeout);
	snprintf(dir, sizeof(dir), "fuzz/corpus/%s", fuzz_harness_name);
	replay_dir(dir, false, max, timeout);
	return tap_done();
}
