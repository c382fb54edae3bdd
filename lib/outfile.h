/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * outfile.h - a file the user named for output (-o, --json, --plot,
 * --svg, ...), written so that a run never destroys what it was not
 * asked to replace, whatever the path names and however the run ends.
 *
 * The rule, the same for every output flag of every command:
 *
 *  - The path is checked when it is opened, before the work starts: a
 *    missing directory, a directory given as the file, a file or
 *    directory that cannot be written is refused there, in one line
 *    naming the flag and the path.
 *  - A regular file, or a name that does not exist yet: the output goes
 *    to a temporary file of this run beside it (".NAME.XXXXXX" in the
 *    same directory, so that the rename is atomic), which
 *    outfile_commit() renames over the name once the output is complete
 *    and on disk.  A file it replaces keeps its mode and owner.  Until
 *    then the file is exactly as it was.
 *  - Anything else - a character or block device, a FIFO - is written in
 *    place: opened for writing without O_CREAT or O_TRUNC, never renamed
 *    over, never unlinked.  /dev/stdout, /dev/stderr, /dev/fd/N and
 *    /proc/self/fd/N are this process's descriptor N itself, as a shell
 *    redirection is (a file opened with >> is appended to, not replaced).
 *  - A symbolic link is followed, as open() follows it (a link the kernel
 *    would not follow, fs.protected_symlinks, is refused); the rule
 *    applies to the file it ends at, and the link stays a link.  A link
 *    to nothing gets the file it names created.
 *  - Nothing is ever unlinked that this run did not create: only its own
 *    temporary files go, on every path a run can end by - outfile_discard()
 *    (an error), the end of the process without a commit (exit()), and
 *    the signals that end a process (SIGINT, SIGTERM, SIGHUP, SIGQUIT,
 *    SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ): the handler
 *    lets the signal do what it did before, and when that ends the
 *    process, resignal() removes them first.  Only SIGKILL, _exit() from
 *    a handler of the program's own, or a crash can leave one behind.
 *
 * The signal handlers are installed while an outfile is open and given
 * back (unless another handler took the signal over since) when the last
 * one is closed.  A handler of the program's own installed before them
 * decides: if it returns (a fuzzer's timer), the run goes on and so do
 * its files.  One installed later (the kernel backend's THP restore) ends
 * by resignal(), which removes them; one that ends the process another
 * way calls outfile_remove_temporaries() first.
 * Open and close outfiles from one thread.
 */
#ifndef LIB_OUTFILE_H
#define LIB_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct outfile {
	const char *flag;	/* for messages: "-o", "--json" */
	char *path;		/* as given */
	char *target;		/* the file written: the path, links followed */
	char *tmp;		/* this run's temporary file, or NULL */
	FILE *f;		/* the stream to write (NULL: OUTFILE_BY_PATH) */
	int fd;			/* in place: the target's descriptor, else -1 */
	int slot;		/* in the table the signal handler reads */
	bool in_place;		/* written in place (a device, a FIFO, fd N) */
	bool by_path;		/* OUTFILE_BY_PATH */
	bool scratch;		/* outfile_scratch(): no target */
};

/*
 * Another program writes the output, by its path (gnuplot's `set
 * output`): no stream; it writes the temporary file outfile_write_path()
 * names - beside the target, or in $TMPDIR when the target is written in
 * place, its bytes copied there by outfile_commit() - and never opens
 * the target itself.
 */
#define OUTFILE_BY_PATH 0x1

/*
 * Open @path, given to @flag, by the rule above: its stream in @of->f
 * (unless OUTFILE_BY_PATH).  0, or -errno with "FLAG: PATH: why" in @why
 * (-EINVAL: a directory or a socket, or a link the kernel would not
 * follow).  A FIFO blocks here until a reader opens it.
 */
int outfile_open(struct outfile *of, const char *flag, const char *path,
		 unsigned int flags, char *why, size_t whylen);

/*
 * Would outfile_open() take @path?  Checked without writing anything
 * there and without opening a device or a FIFO (a FIFO's reader would
 * see an end of file): for a file that figures are drawn to at the end of
 * a run, under names made from it.  0 or -errno, "FLAG: PATH: why".
 */
int outfile_check(const char *flag, const char *path, char *why,
		  size_t whylen);

/*
 * Could files be written into directory @dir (given to @flag), which is
 * made when the first one is written if it does not exist yet?  It must
 * be a directory this process may create files in, or not exist in one.
 * 0 or -errno, "FLAG: DIR: why".
 */
int outfile_check_dir(const char *flag, const char *dir, char *why,
		      size_t whylen);

/* The file another program writes (OUTFILE_BY_PATH, outfile_scratch()). */
const char *outfile_write_path(const struct outfile *of);

/*
 * The output is complete: flush it, check every write went through, put
 * it on disk and rename it over the target (or copy it into a target
 * written in place).  The outfile is closed either way; on an error its
 * temporary file is removed and the target is as it was (a device or a
 * FIFO may have been written in part).  0 or -errno with "FLAG: PATH:
 * why" in @why.
 */
int outfile_commit(struct outfile *of, char *why, size_t whylen);

/*
 * The run failed: close @of and remove its temporary file; the target is
 * left as it was.  Does nothing to an outfile never opened (zeroed) or
 * already closed.
 */
void outfile_discard(struct outfile *of);

/*
 * A temporary file no one named (a gnuplot script, rows in transit),
 * private to this run, in $TMPDIR (/tmp if unset), called NAME-XXXXXX:
 * its stream in @of->f, its path outfile_write_path(); removed by
 * outfile_discard(), at exit and on the signals above.  0 or -errno.
 */
int outfile_scratch(struct outfile *of, const char *name, char *why,
		    size_t whylen);

/*
 * A stream that takes every write and keeps nothing, for a record that
 * is thrown away: not fopen("/dev/null", "w"), which creates a regular
 * file of that name where the device node is missing (and truncates
 * whatever is there).  NULL when out of memory; fclose() it.
 */
FILE *outfile_sink(void);

/*
 * Remove every temporary file of this process now: async-signal-safe,
 * for a signal handler that ends the process without returning to the
 * previous action.
 */
void outfile_remove_temporaries(void);

#endif /* LIB_OUTFILE_H */
