/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * thp_sysfs.h - the THP settings of a kernel-backend run: the scenario's
 * mthp lines written into /sys/kernel/mm/transparent_hugepage for the run
 * and put back afterwards on every exit path, and the counters that tell
 * afterwards whether the folios the run asked for really materialized.
 *
 * One configuration is applied at a time, per process, and one process
 * at a time changes the real knobs (the THP settings lock, below).  The
 * process that applied it (not its children: they inherit the handlers
 * but never restore) puts the saved values back on
 * thp_settings_restore(), at exit() and on SIGINT, SIGTERM, SIGHUP,
 * SIGQUIT, SIGSEGV, SIGABRT and SIGBUS.
 * Nothing can run on SIGKILL or _exit(): those leave the run's settings in
 * place, but apply saved the old values first in a journal beside the
 * lock (/run/ptebatch-thp.journal for the machine's), and whoever takes
 * the lock next puts back each knob that still holds the dead run's
 * value (thp_sysfs.c says more).
 */
#ifndef BACKEND_THP_SYSFS_H
#define BACKEND_THP_SYSFS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "scenario/scenario.h"

#define THP_SYSFS_DIR "/sys/kernel/mm/transparent_hugepage"

/*
 * Save every knob the run touches, then write the scenario's settings:
 * the global `enabled` takes the 2M line's policy, hugepages-2048kB
 * `inherit`, every other size its mthp line or `never` (also sizes the
 * language lacks, such as an 8kB one), use_zero_page 1, defrag madvise,
 * and khugepaged kept from collapsing during the run (see thp_sysfs.c).
 * Knobs it does not know are left alone.  On the real tree it first
 * takes the THP settings lock (thp_lock_take(), below), waiting for any
 * other run to restore.
 *
 * Returns 0; -EOPNOTSUPP when this kernel cannot run the configuration (a
 * named size has no sysfs file, no THP at all, a PMD size other than the
 * page size's: 2M with 4K pages);
 * -EACCES when the files cannot be written (not root); -EBUSY when a
 * configuration is already applied; another -errno for an I/O error.  On
 * an error @why (if not NULL) says what, nothing stays changed, and no
 * handler is installed.
 */
int thp_settings_apply(const enum scn_policy mthp[SCN_MAX_MTHP_SIZES],
		       char *why, size_t whylen);

/*
 * Put back every value apply saved, in reverse order of writing, and
 * uninstall the signal handlers.  Idempotent; does nothing in any process
 * but the one that applied.  Async-signal-safe (open, write, close of
 * buffers formatted at apply time, sigaction, munmap): a backend with its
 * own handler for one of the signals above may call it from there.
 */
void thp_settings_restore(void);

/*
 * The THP settings lock: every process that changes the real THP sysfs,
 * or reads it and depends on nobody else changing it, holds it, so that
 * they take turns.  It is flock() on /run/lock/ptebatch-thp.lock
 * (/tmp/ptebatch-thp.lock if that cannot be opened): it belongs to the
 * open file, so it dies with the last descriptor of the process holding
 * it - never left held by a process that is gone - and a child forked
 * while it is held shares it.
 *
 * thp_settings_apply() takes it on the real tree (not on a test's fake
 * one) unless this process holds it already, and its restore drops what
 * it took.  Other code that depends on the real knobs (the tests that
 * compare them before and after their children's runs) holds it through
 * thp_lock_take() and thp_lock_drop(); children forked in between apply
 * and restore under it.
 *
 * thp_lock_take() returns 0 once this process holds the lock (at once if
 * it does already: not counted, one thp_lock_drop() ends it), or -errno
 * with @why if the file cannot be opened or locked.  While another
 * process holds it, it waits, quietly for a second, then saying once on
 * stderr "ptebatch: waiting for the THP settings lock held by pid N
 * (ITS COMMAND; PATH)", and on for as long as it takes.  A signal that
 * ends the process ends the wait.  A holder that is an ancestor of this
 * process (a ptebatch record that did not lend it the lock, below; a
 * script holding it with flock(1) around its ptebatch) would wait for
 * this process to end: -EDEADLK at once, its reason in @why.
 *
 * thp_lock_drop() releases what thp_lock_take() took; while this
 * process's apply holds the lock it does nothing (restore releases it).
 * Async-signal-safe.
 */
int thp_lock_take(char *why, size_t whylen);
void thp_lock_drop(void);

/*
 * Lending the lock to a command: ptebatch record holds the lock while the
 * command it traces runs, and that command may be a ptebatch that needs
 * it (`record -- ptebatch run --backend kernel X.scn`, `record --
 * ptebatch diff X.scn`, a nested record, bench, calibrate).
 *
 * thp_lock_lend() (holding the lock) makes a lock of its own for the
 * command: a memfd, named in THP_LOCK_ENV as "FD PID STARTTIME" (the
 * lender's pid and start time, so that a reused pid is never taken for
 * it); thp_lock_lend_child(), between fork() and exec(), leaves that fd
 * open across exec() and puts the variable in the environment.  A
 * thp_lock_take() that finds the variable takes the lent lock instead of
 * the machine's if the descriptor is such a memfd, the lender is its
 * ancestor (parent, grandparent...) and still runs, and the lender has
 * not taken it back; the lender's descendants then take turns on it, as
 * processes do on the machine's.  Anything else (a daemon the command
 * left behind, a variable copied elsewhere) takes the machine's lock.
 * Everything it changes goes back before the lender's own restore.
 *
 * thp_lock_take_back(), once the command has ended, waits for any
 * descendant still holding the lent lock (one that left the command's
 * process group), puts back what a descendant killed with SIGKILL left,
 * and marks it taken back, so that nothing takes it after.  It returns
 * 0, or -errno with @why (-EINTR if *@stop became non-zero while it
 * waited).
 */
#define THP_LOCK_ENV "PTEBATCH_THP_LOCK"
int thp_lock_lend(char *why, size_t whylen);
void thp_lock_lend_child(void);
int thp_lock_take_back(const volatile sig_atomic_t *stop, char *why,
		       size_t whylen);

/* Is @pid this process's parent, grandparent, ...?  (From /proc.) */
bool thp_pid_is_ancestor(pid_t pid);

/*
 * Use @dir instead of THP_SYSFS_DIR (NULL: back to it).  For tests, which
 * build a fake tree of plain files; only while nothing is applied.
 * Returns 0, -EBUSY or -ENAMETOOLONG.
 */
int thp_sysfs_set_dir(const char *dir);

/*
 * The counters that show a fault did not get the folio its policy asked
 * for, per mthp size (16K << i), and khugepaged's collapses.  They are
 * global to the machine: another process's fallback shows up too, which
 * can only make a run skip, never pass.
 */
struct thp_fallback {
	struct {
		bool have;		/* hugepages-<size>kB/stats exists */
		unsigned long alloc;	/* anon_fault_alloc */
		unsigned long fallback;	/* anon_fault_fallback */
		unsigned long charge;	/* anon_fault_fallback_charge */
	} size[SCN_MAX_MTHP_SIZES];
	bool have_collapsed;
	unsigned long collapsed;	/* khugepaged/pages_collapsed */
};

/* Read the counters now.  Returns 0 or -errno. */
int thp_fallback_snapshot(struct thp_fallback *snap);

/*
 * Compare two snapshots, taken before and after a run.  Returns 0 if no
 * fault fell back and khugepaged collapsed nothing; otherwise 1, with the
 * reason in @why, e.g. "2 of the 66 64kB faults fell back to smaller
 * folios".
 */
int thp_fallback_check(const struct thp_fallback *before,
		       const struct thp_fallback *after, char *why,
		       size_t whylen);

#endif /* BACKEND_THP_SYSFS_H */
