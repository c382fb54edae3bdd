// SPDX-License-Identifier: GPL-2.0-only
/*
 * outfile.c - output files written without destroying what was there
 * (outfile.h says the rule).
 *
 * The temporary files of this process are kept in a table that a signal
 * handler can read: a slot holds the path (set once the string is
 * complete, cleared before it is freed) and the pid that created it, so
 * that a forked child (the kernel backend's scenario processes) that
 * inherited the handlers and the table removes nothing of its parent's.
 * Every change of the table and every step that makes or removes a
 * temporary file runs with the handled signals blocked, so a signal sees
 * either the file and its slot or neither.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "lib/outfile.h"
#include "lib/resignal.h"

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif

/* Outfiles open at once: a command has a few (-o, --events, a script). */
#define MAX_OUTFILES 32
/* Symbolic links followed before giving up, as the kernel's MAXSYMLINKS. */
#define MAX_LINKS 40

struct temp_slot {
	char *volatile path;	/* NULL: free */
	volatile pid_t owner;
};

static struct temp_slot temps[MAX_OUTFILES];
static int nr_open;

/* Every signal whose default action ends the process and that a user,
 * a shell or the kernel sends to end a run. */
static const int cleanup_signals[] = {
	SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2,
	SIGXCPU, SIGXFSZ,
};
#define NR_CLEANUP_SIGNALS \
	(int)(sizeof(cleanup_signals) / sizeof(cleanup_signals[0]))

static struct sigaction old_actions[NR_CLEANUP_SIGNALS];
static volatile sig_atomic_t installed[NR_CLEANUP_SIGNALS];

/* ---- the signal side (async-signal-safe) ------------------------------- */

void outfile_remove_temporaries(void)
{
	pid_t me = getpid();
	int i;

	for (i = 0; i < MAX_OUTFILES; i++) {
		char *p = temps[i].path;

		if (p && temps[i].owner == me)
			unlink(p);
	}
}

static void on_signal(int sig);

/* Our action: on_signal(), with every handled signal blocked while it runs. */
static void our_action(struct sigaction *sa)
{
	int i;

	memset(sa, 0, sizeof(*sa));
	sa->sa_handler = on_signal;
	sigemptyset(&sa->sa_mask);
	for (i = 0; i < NR_CLEANUP_SIGNALS; i++)
		sigaddset(&sa->sa_mask, cleanup_signals[i]);
}

/*
 * Let the signal do what it did before this handler took it.  When that
 * is the default action the process ends, and resignal() removes the
 * temporary files first (our death hook).  When it is a handler of the
 * program's own (a fuzzer's timer, the THP restore), that handler decides:
 * if it returns, the run goes on with its files, and this handler takes
 * the signal back.
 */
static void on_signal(int sig)
{
	struct sigaction sa, cur;
	int saved_errno = errno, i;

	for (i = 0; i < NR_CLEANUP_SIGNALS && cleanup_signals[i] != sig; i++)
		;
	if (i == NR_CLEANUP_SIGNALS) {
		resignal(sig, NULL);
	} else {
		installed[i] = 0;
		resignal(sig, &old_actions[i]);
		/* Still here: the previous handler returned. */
		our_action(&sa);
		if (!sigaction(sig, NULL, &cur) &&
		    cur.sa_handler == old_actions[i].sa_handler &&
		    !sigaction(sig, &sa, NULL))
			installed[i] = 1;
	}
	errno = saved_errno;
}

static void install_handlers(void)
{
	struct sigaction sa;
	int i;

	our_action(&sa);
	for (i = 0; i < NR_CLEANUP_SIGNALS; i++) {
		if (installed[i] ||
		    sigaction(cleanup_signals[i], NULL, &old_actions[i]))
			continue;
		/* Ignored (nohup's SIGHUP, a background job's SIGINT): it
		 * ends nothing, and stays ignored. */
		if (old_actions[i].sa_handler == SIG_IGN)
			continue;
		if (!sigaction(cleanup_signals[i], &sa, NULL))
			installed[i] = 1;
	}
}

/* Give each signal back, unless another handler took it over since. */
static void uninstall_handlers(void)
{
	struct sigaction cur;
	int i;

	for (i = 0; i < NR_CLEANUP_SIGNALS; i++) {
		if (!installed[i])
			continue;
		installed[i] = 0;
		if (!sigaction(cleanup_signals[i], NULL, &cur) &&
		    cur.sa_handler == on_signal)
			sigaction(cleanup_signals[i], &old_actions[i], NULL);
	}
}

static void block_signals(sigset_t *old)
{
	sigset_t set;
	int i;

	sigemptyset(&set);
	for (i = 0; i < NR_CLEANUP_SIGNALS; i++)
		sigaddset(&set, cleanup_signals[i]);
	sigprocmask(SIG_BLOCK, &set, old);
}

static void restore_signals(const sigset_t *old)
{
	sigprocmask(SIG_SETMASK, old, NULL);
}

static void remove_at_exit(void)
{
	outfile_remove_temporaries();
}

/*
 * A slot for @of (signals blocked by the caller): 0 or -EMFILE.  A slot
 * is free when it has neither a path nor an owner; a taken one without a
 * file has owner -1.
 */
static int take_slot(struct outfile *of)
{
	static bool at_exit, at_death;
	int i;

	for (i = 0; i < MAX_OUTFILES && (temps[i].path || temps[i].owner); i++)
		;
	if (i == MAX_OUTFILES)
		return -EMFILE;
	if (!at_exit && !atexit(remove_at_exit))
		at_exit = true;
	if (!at_death && !resignal_at_death(outfile_remove_temporaries))
		at_death = true;
	temps[i].owner = -1;
	of->slot = i;
	if (!nr_open++)
		install_handlers();
	return 0;
}

/* The slot's file is @tmp now (signals blocked by the caller). */
static void slot_set(struct outfile *of, char *tmp)
{
	temps[of->slot].owner = getpid();
	temps[of->slot].path = tmp;
}

/* Forget the slot's file, keeping the slot (signals blocked). */
static void slot_clear(struct outfile *of)
{
	temps[of->slot].path = NULL;
	temps[of->slot].owner = -1;
}

static void put_slot(struct outfile *of)
{
	temps[of->slot].path = NULL;
	temps[of->slot].owner = 0;
	if (!--nr_open)
		uninstall_handlers();
}

/* ---- what a path names -------------------------------------------------- */

static int __attribute__((format(printf, 4, 5)))
fail(char *why, size_t whylen, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return err;
}

enum target_kind {
	T_ABSENT,	/* to be created */
	T_REGULAR,	/* replaced */
	T_IN_PLACE,	/* a device or a FIFO (or another process's fd) */
	T_FD,		/* this process's descriptor fd_n */
};

struct resolved {
	char *target;
	enum target_kind kind;
	int fd_n;
	struct stat st;
};

/* The directory part of @path, malloc'd ("." for a bare name). */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* @link's target, malloc'd, relative to @link's directory when relative. */
static char *follow(const char *link)
{
	char buf[PATH_MAX], *dir, *next;
	ssize_t n = readlink(link, buf, sizeof(buf) - 1);

	if (n < 0)
		return NULL;
	buf[n] = '\0';
	if (buf[0] == '/')
		return strdup(buf);
	dir = dir_of(link);
	if (!dir || asprintf(&next, "%s/%s", dir, buf) < 0)
		next = NULL;
	free(dir);
	if (!next)
		errno = ENOMEM;
	return next;
}

/*
 * Is the link @path one of procfs's (/proc/PID/fd/N, reached as
 * /dev/stdout, /dev/fd/N, ...)?  Its name is no path to follow: it stands
 * for an open file.  *@own_fd is N when the directory is this process's
 * own descriptor table, else -1.
 */
static bool proc_link(const char *path, int *own_fd)
{
	struct statfs fs;
	struct stat dir_st, self_st;
	const char *base = base_of(path), *c;
	char *dir = dir_of(path);
	bool proc = false;

	*own_fd = -1;
	if (dir && !statfs(dir, &fs) && fs.f_type == PROC_SUPER_MAGIC) {
		proc = true;
		for (c = base; *c >= '0' && *c <= '9'; c++)
			;
		if (*base && !*c && strlen(base) < 8 && !stat(dir, &dir_st) &&
		    !stat("/proc/self/fd", &self_st) &&
		    dir_st.st_dev == self_st.st_dev &&
		    dir_st.st_ino == self_st.st_ino)
			*own_fd = atoi(base);
	}
	free(dir);
	return proc;
}

/*
 * Where the output to @path lands, links followed as open() follows them.
 * 0 or -errno with "FLAG: PATH: why".
 */
static int resolve(const char *flag, const char *path, struct resolved *r,
		   char *why, size_t whylen)
{
	char *cur, *next, *dir;
	int hops, own_fd, fd, err;

	memset(r, 0, sizeof(*r));
	r->kind = T_REGULAR;	/* until the end of the links says otherwise */
	if (!*path)
		return fail(why, whylen, -EINVAL, "%s: empty file name", flag);
	cur = strdup(path);
	if (!cur)
		return fail(why, whylen, -ENOMEM, "%s: out of memory", flag);
	for (hops = 0;; hops++) {
		if (lstat(cur, &r->st)) {
			err = errno;
			if (err != ENOENT)
				goto error;
			/* A name to create: in a directory that exists. */
			dir = dir_of(cur);
			if (dir && stat(dir, &r->st)) {
				err = -errno;
				fail(why, whylen, err, err == -ENOENT ?
				     "%s: %s: the directory %s does not exist" :
				     "%s: %s: directory %s: %s", flag, path, dir,
				     strerror(-err));
				free(dir);
				free(cur);
				return err;
			}
			free(dir);
			r->kind = T_ABSENT;
			break;
		}
		if (!S_ISLNK(r->st.st_mode))
			break;
		if (!hops) {
			/* The kernel's own rules on following (a link in
			 * a sticky world-writable directory that another
			 * user planted: fs.protected_symlinks). */
			fd = open(path, O_PATH | O_CLOEXEC);
			if (fd >= 0)
				close(fd);
			else if (errno == EACCES || errno == ELOOP) {
				err = errno;
				free(cur);
				return fail(why, whylen, -err, "%s: %s: the"
					    " kernel would not follow this"
					    " symbolic link: %s", flag, path,
					    strerror(err));
			}
		}
		if (hops == MAX_LINKS) {
			err = ELOOP;
			goto error;
		}
		if (proc_link(cur, &own_fd)) {
			if (own_fd >= 0) {
				r->kind = T_FD;
				r->fd_n = own_fd;
			} else {
				r->kind = T_IN_PLACE;
			}
			r->target = cur;
			return 0;
		}
		next = follow(cur);
		if (!next) {
			err = errno;
			goto error;
		}
		free(cur);
		cur = next;
	}
	r->target = cur;
	if (r->kind == T_ABSENT)
		return 0;
	r->kind = T_REGULAR;
	if (S_ISDIR(r->st.st_mode)) {
		err = EISDIR;
		goto error;
	}
	if (S_ISSOCK(r->st.st_mode)) {
		free(cur);
		r->target = NULL;
		return fail(why, whylen, -EINVAL, "%s: %s: a socket, not a"
			    " file", flag, path);
	}
	if (!S_ISREG(r->st.st_mode)) {
		r->kind = T_IN_PLACE;
		return 0;
	}
	r->kind = T_REGULAR;
	/*
	 * May it be written?  Opened without O_TRUNC (nothing changes),
	 * and not created: what open() refuses - no permission, a
	 * read-only file system, an immutable or append-only file - a
	 * rename over it would have done anyway.
	 */
	fd = open(cur, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		free(cur);
		r->target = NULL;
		return fail(why, whylen, -err, "%s: %s: not writable: %s",
			    flag, path, strerror(err));
	}
	close(fd);
	return 0;
error:
	free(cur);
	r->target = NULL;
	return fail(why, whylen, -err, "%s: %s: %s", flag, path, strerror(err));
}

/* ---- temporary files ---------------------------------------------------- */

/*
 * A temporary file for @of: beside @target (".NAME.XXXXXX", or
 * ".ptebatch.XXXXXX" when NAME is too long for that), or in $TMPDIR when
 * @target is NULL (@name-XXXXXX).  Made with the signals blocked, and in
 * the slot before they can come.  Its descriptor, or -errno with @why.
 */
static int make_temp(struct outfile *of, const char *target, const char *name,
		     char *why, size_t whylen)
{
	const char *tmpdir = getenv("TMPDIR");
	char *dir = NULL, *tmp = NULL;
	sigset_t old;
	int fd, err;

	if (target) {
		const char *base = base_of(target);

		dir = dir_of(target);
		if (dir && strlen(base) + 8 <= NAME_MAX) {
			if (asprintf(&tmp, "%s/.%s.XXXXXX", dir, base) < 0)
				tmp = NULL;
		} else if (dir) {
			if (asprintf(&tmp, "%s/.ptebatch.XXXXXX", dir) < 0)
				tmp = NULL;
		}
	} else {
		if (!tmpdir || !*tmpdir)
			tmpdir = "/tmp";
		dir = strdup(tmpdir);
		if (asprintf(&tmp, "%s/%s-XXXXXX", tmpdir, name) < 0)
			tmp = NULL;
	}
	if (!dir || !tmp) {
		free(dir);
		free(tmp);
		return fail(why, whylen, -ENOMEM, "%s: %s: out of memory",
			    of->flag, of->path);
	}
	block_signals(&old);
	fd = mkostemp(tmp, O_CLOEXEC);
	err = errno;
	if (fd >= 0)
		slot_set(of, tmp);
	restore_signals(&old);
	if (fd < 0) {
		free(tmp);
		fail(why, whylen, -err, "%s: %s: cannot create a file in %s:"
		     " %s", of->flag, of->path, dir, strerror(err));
		free(dir);
		return -err;
	}
	free(dir);
	of->tmp = tmp;
	return fd;
}

/* Remove @of's temporary file, if any, and forget it. */
static void remove_temp(struct outfile *of)
{
	sigset_t old;

	if (!of->tmp)
		return;
	block_signals(&old);
	unlink(of->tmp);
	slot_clear(of);
	restore_signals(&old);
	free(of->tmp);
	of->tmp = NULL;
}

static mode_t current_umask(void)
{
	mode_t mask = umask(0);

	umask(mask);
	return mask;
}

/*
 * The replaced file's owner for its replacement (before its mode: a chown
 * clears the set-id bits).  A user who is not root cannot give a file
 * away: the new file is then theirs, as an editor's copy would be.
 */
static void keep_owner(int fd, const struct stat *st)
{
	if (fchown(fd, st->st_uid, st->st_gid))
		errno = 0;
}

/* The files the open outfiles replace, to refuse one named twice. */
static struct {
	const char *target, *flag, *path;
} replaced[MAX_OUTFILES];

/* The flag and path of the open outfile that replaces @r's file, if any. */
static int same_target(const struct resolved *r)
{
	int i;

	if (r->kind != T_ABSENT && r->kind != T_REGULAR)
		return -1;
	for (i = 0; i < MAX_OUTFILES; i++)
		if (replaced[i].target && !strcmp(replaced[i].target, r->target))
			return i;
	return -1;
}

static void release(struct outfile *of)
{
	if (of->path) {
		replaced[of->slot].target = NULL;
		put_slot(of);
	}
	free(of->path);
	free(of->target);
	of->path = NULL;
	of->target = NULL;
	of->f = NULL;
	of->fd = -1;
}

/* ---- the interface ------------------------------------------------------ */

int outfile_open(struct outfile *of, const char *flag, const char *path,
		 unsigned int flags, char *why, size_t whylen)
{
	struct resolved r;
	sigset_t old;
	int fd = -1, ret, other;

	memset(of, 0, sizeof(*of));
	of->fd = -1;
	of->flag = flag;
	of->by_path = flags & OUTFILE_BY_PATH;
	ret = resolve(flag, path, &r, why, whylen);
	if (ret)
		return ret;
	other = same_target(&r);
	if (other >= 0) {
		free(r.target);
		return fail(why, whylen, -EINVAL, "%s: %s: the same file as"
			    " %s %s", flag, path, replaced[other].flag,
			    replaced[other].path);
	}
	of->path = strdup(path);
	of->target = r.target;
	block_signals(&old);
	ret = of->path ? take_slot(of) : -ENOMEM;
	restore_signals(&old);
	if (ret) {
		free(of->path);
		free(of->target);
		memset(of, 0, sizeof(*of));
		of->fd = -1;
		return fail(why, whylen, ret, "%s: %s: %s", flag, path,
			    ret == -ENOMEM ? "out of memory" :
			    "too many output files at once");
	}
	of->in_place = r.kind == T_IN_PLACE || r.kind == T_FD;
	if (!of->in_place) {
		replaced[of->slot].flag = flag;
		replaced[of->slot].path = of->path;
		replaced[of->slot].target = of->target;
	}
	if (!of->in_place) {
		fd = make_temp(of, of->target, NULL, why, whylen);
		if (fd < 0) {
			ret = fd;
			goto fail;
		}
		if (r.kind == T_REGULAR) {
			keep_owner(fd, &r.st);
			fchmod(fd, r.st.st_mode & 07777);
		} else {
			fchmod(fd, 0666 & ~current_umask());
		}
		if (of->by_path) {
			close(fd);
			return 0;
		}
	} else {
		if (r.kind == T_FD) {
			int fl = fcntl(r.fd_n, F_GETFL);

			if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY) {
				ret = fail(why, whylen, -EBADF, "%s: %s:"
					   " descriptor %d is not open for"
					   " writing", flag, path, r.fd_n);
				goto fail;
			}
			of->fd = fcntl(r.fd_n, F_DUPFD_CLOEXEC, 3);
		} else {
			/* No O_CREAT, no O_TRUNC: a device stays as it is. */
			of->fd = open(of->target, O_WRONLY | O_NOCTTY |
				      O_CLOEXEC);
		}
		if (of->fd < 0) {
			ret = -errno;
			fail(why, whylen, ret, "%s: %s: %s", flag, path,
			     strerror(-ret));
			goto fail;
		}
		if (of->by_path) {
			/* The program writes a file of ours; commit
			 * copies it in. */
			fd = make_temp(of, NULL, "ptebatch-out", why, whylen);
			if (fd < 0) {
				ret = fd;
				goto fail;
			}
			close(fd);
			return 0;
		}
		fd = dup(of->fd);
		if (fd >= 0)
			fcntl(fd, F_SETFD, FD_CLOEXEC);
	}
	of->f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!of->f) {
		ret = -ENOMEM;
		if (fd >= 0)
			close(fd);
		fail(why, whylen, ret, "%s: %s: out of memory", flag, path);
		goto fail;
	}
	return 0;
fail:
	outfile_discard(of);
	return ret;
}

int outfile_check(const char *flag, const char *path, char *why,
		  size_t whylen)
{
	struct outfile probe;
	struct resolved r;
	sigset_t old;
	int ret = resolve(flag, path, &r, why, whylen), fd;

	if (ret)
		return ret;
	switch (r.kind) {
	case T_ABSENT:
	case T_REGULAR:
		/* Can a file be made beside it?  Made, and removed. */
		memset(&probe, 0, sizeof(probe));
		probe.fd = -1;
		probe.flag = flag;
		probe.path = (char *)path;
		block_signals(&old);
		ret = take_slot(&probe);
		restore_signals(&old);
		if (ret) {
			ret = fail(why, whylen, ret, "%s: %s: too many output"
				   " files at once", flag, path);
			break;
		}
		fd = make_temp(&probe, r.target, NULL, why, whylen);
		if (fd >= 0) {
			close(fd);
			remove_temp(&probe);
			ret = 0;
		} else {
			ret = fd;
		}
		block_signals(&old);
		put_slot(&probe);
		restore_signals(&old);
		break;
	case T_IN_PLACE:
		if (access(r.target, W_OK))
			ret = fail(why, whylen, -errno, "%s: %s: %s", flag,
				   path, strerror(errno));
		break;
	case T_FD:
		fd = fcntl(r.fd_n, F_GETFL);
		if (fd < 0 || (fd & O_ACCMODE) == O_RDONLY)
			ret = fail(why, whylen, -EBADF, "%s: %s: descriptor %d"
				   " is not open for writing", flag, path,
				   r.fd_n);
		break;
	}
	free(r.target);
	return ret;
}

int outfile_check_dir(const char *flag, const char *dir, char *why,
		      size_t whylen)
{
	struct stat st;
	char *parent;
	int err;

	if (!*dir)
		return fail(why, whylen, -EINVAL, "%s: empty directory name",
			    flag);
	if (!stat(dir, &st)) {
		if (!S_ISDIR(st.st_mode))
			return fail(why, whylen, -ENOTDIR, "%s: %s: not a"
				    " directory", flag, dir);
		if (access(dir, W_OK | X_OK))
			return fail(why, whylen, -errno, "%s: %s: cannot"
				    " create files in it: %s", flag, dir,
				    strerror(errno));
		return 0;
	}
	if (errno != ENOENT)
		return fail(why, whylen, -errno, "%s: %s: %s", flag, dir,
			    strerror(errno));
	/* Made when the first file is written: in a directory that is. */
	parent = dir_of(dir);
	if (!parent)
		return fail(why, whylen, -ENOMEM, "%s: out of memory", flag);
	err = 0;
	if (stat(parent, &st))
		err = -errno;
	else if (!S_ISDIR(st.st_mode))
		err = -ENOTDIR;
	else if (access(parent, W_OK | X_OK))
		err = -errno;
	if (err == -ENOENT)
		fail(why, whylen, err, "%s: %s: the directory %s does not"
		     " exist", flag, dir, parent);
	else if (err)
		fail(why, whylen, err, "%s: %s: cannot make it in %s: %s",
		     flag, dir, parent, strerror(-err));
	free(parent);
	return err;
}

const char *outfile_write_path(const struct outfile *of)
{
	return of->tmp;
}

/* Copy the temporary file's bytes into the target written in place. */
static int copy_in(struct outfile *of)
{
	char buf[65536];
	int in = open(of->tmp, O_RDONLY | O_CLOEXEC), err = 0;
	ssize_t n, w, off;

	if (in < 0)
		return -errno;
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		for (off = 0; off < n; off += w) {
			w = write(of->fd, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR) {
				w = 0;
				continue;
			}
			if (w <= 0) {
				err = w < 0 ? -errno : -EIO;
				break;
			}
		}
		if (err)
			break;
	}
	close(in);
	return err;
}

int outfile_commit(struct outfile *of, char *why, size_t whylen)
{
	bool stream_error = false;
	sigset_t old;
	int err = 0, fd;

	if (!of->path)
		return fail(why, whylen, -EINVAL, "%s: not open", of->flag);
	if (of->scratch) {
		outfile_discard(of);
		return fail(why, whylen, -EINVAL, "a temporary file has no"
			    " target to commit to");
	}
	if (of->f) {
		stream_error = ferror(of->f);
		if (stream_error)
			err = -EIO;
		if (fflush(of->f) && !err)
			err = errno ? -errno : -EIO;
		/* On disk before it replaces anything: after a crash the
		 * name holds the old file or the new one, never an empty
		 * one. */
		if (!err && !of->in_place && fsync(fileno(of->f)))
			err = -errno;
		if (fclose(of->f) && !err)
			err = errno ? -errno : -EIO;
		of->f = NULL;
	} else if (!of->in_place) {
		fd = open(of->tmp, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fsync(fd))
			err = -errno;
		if (fd >= 0)
			close(fd);
	}
	if (!err && of->in_place && of->by_path)
		err = copy_in(of);
	if (of->fd >= 0 && close(of->fd) && !err && errno != EINTR)
		err = -errno;
	of->fd = -1;
	if (!err && !of->in_place) {
		block_signals(&old);
		if (rename(of->tmp, of->target))
			err = -errno;
		else
			slot_clear(of);
		restore_signals(&old);
		if (!err) {
			free(of->tmp);
			of->tmp = NULL;
		}
	}
	/* A write that failed earlier left only the stream's error flag,
	 * not its errno: said as a write error alone. */
	if (err == -EIO && stream_error)
		fail(why, whylen, err, "%s: %s: write error%s", of->flag,
		     of->path, of->in_place ? "" : ": not written");
	else if (err)
		fail(why, whylen, err, "%s: %s: %s%s", of->flag, of->path,
		     of->in_place ? "write error: " : "not written: ",
		     strerror(-err));
	remove_temp(of);
	release(of);
	return err;
}

void outfile_discard(struct outfile *of)
{
	if (!of->path)
		return;
	if (of->f)
		fclose(of->f);
	of->f = NULL;
	if (of->fd >= 0)
		close(of->fd);
	of->fd = -1;
	remove_temp(of);
	release(of);
}

int outfile_scratch(struct outfile *of, const char *name, char *why,
		    size_t whylen)
{
	sigset_t old;
	int fd, ret;

	memset(of, 0, sizeof(*of));
	of->fd = -1;
	of->flag = name;
	of->scratch = true;
	of->path = strdup(name);
	block_signals(&old);
	ret = of->path ? take_slot(of) : -ENOMEM;
	restore_signals(&old);
	if (ret) {
		free(of->path);
		of->path = NULL;
		return fail(why, whylen, ret, "%s: %s", name, ret == -ENOMEM ?
			    "out of memory" : "too many temporary files");
	}
	fd = make_temp(of, NULL, name, why, whylen);
	if (fd < 0) {
		outfile_discard(of);
		return fd;
	}
	of->f = fdopen(fd, "w+");
	if (!of->f) {
		close(fd);
		outfile_discard(of);
		return fail(why, whylen, -ENOMEM, "%s: out of memory", name);
	}
	return 0;
}

static ssize_t sink_write(void *cookie, const char *buf, size_t len)
{
	(void)cookie;
	(void)buf;
	return (ssize_t)len;
}

FILE *outfile_sink(void)
{
	cookie_io_functions_t io = { .write = sink_write };

	return fopencookie(NULL, "w", io);
}
