/*
 * thp_sysfs.h - the THP settings of a kernel-backend run: the scenario's
 * mthp lines written into /sys/kernel/mm/transparent_hugepage for the run
 * and put back afterwards on every exit path, and the counters that tell
 * afterwards whether the folios the run asked for really materialized.
 *
 * One configuration is applied at a time, per process.  The process that
 * applied it (not its children: they inherit the handlers but never
 * restore) puts the saved values back on thp_settings_restore(), at exit()
 * and on SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGABRT and SIGBUS.
 * Nothing can run on SIGKILL or _exit(): those leave the run's settings in
 * place, and the old values are lost.
 */
#ifndef BACKEND_THP_SYSFS_H
#define BACKEND_THP_SYSFS_H

#include <stdbool.h>
#include <stddef.h>

#include "scenario/scenario.h"

#define THP_SYSFS_DIR "/sys/kernel/mm/transparent_hugepage"

/*
 * Save every knob the run touches, then write the scenario's settings:
 * the global `enabled` takes the 2M line's policy, hugepages-2048kB
 * `inherit`, every other size its mthp line or `never` (also sizes the
 * language lacks, such as an 8kB one), use_zero_page 1, defrag madvise,
 * and khugepaged kept from collapsing during the run (see thp_sysfs.c).
 * Knobs it does not know are left alone.
 *
 * Returns 0; -EOPNOTSUPP when this kernel cannot run the configuration (a
 * named size has no sysfs file, no THP at all, a PMD size other than 2M);
 * -EACCES when the files cannot be written (not root); -EBUSY when a
 * configuration is already applied; another -errno for an I/O error.  On
 * an error @why (if not NULL) says what, nothing stays changed, and no
 * handler is installed.
 */
int thp_settings_apply(const enum scn_policy mthp[SCN_NR_MTHP_SIZES],
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
	} size[SCN_NR_MTHP_SIZES];
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
