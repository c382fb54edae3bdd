// SPDX-License-Identifier: GPL-2.0-only
/*
 * kstats.c - the kernel's accounting of the events the model counts too
 * (issue 16), read by the kernel backend's coordinator right before and
 * right after a statement: /proc/vmstat's pgfault, thp_fault_alloc,
 * thp_fault_fallback, thp_split_pmd, nr_foll_pin_acquired/released, and
 * per folio size hugepages-<size>kB/stats/{anon_fault_alloc,
 * anon_fault_fallback,split}.
 *
 * All of them are system-wide: whatever else runs on the machine between
 * the two reads adds to the delta (never subtracts: they only grow).
 * The pin counts are node statistics, kept per CPU as differences the
 * kernel folds into the global count only past a threshold; /proc/vmstat
 * does not fold them, so each read first writes /proc/sys/vm/stat_refresh
 * (root; it folds every CPU's differences and changes no setting).  The
 * events (pgfault, thp_*, the mTHP stats) are summed over the CPUs at
 * each read and need no fold.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/kstats.h"

#define THP_DIR "/sys/kernel/mm/transparent_hugepage"

static const char *const mthp_files[NR_KSTAT_MTHP] = {
	[KSTAT_MTHP_ANON_FAULT_ALLOC] = "anon_fault_alloc",
	[KSTAT_MTHP_ANON_FAULT_FALLBACK] = "anon_fault_fallback",
	[KSTAT_MTHP_SPLIT] = "split",
};

void kstats_close(struct kstats_reader *r)
{
	int order, i;

	if (r->vmstat_fd >= 0)
		close(r->vmstat_fd);
	if (r->refresh_fd >= 0)
		close(r->refresh_fd);
	r->vmstat_fd = r->refresh_fd = -1;
	for (order = 0; order < KSTAT_ORDERS; order++) {
		for (i = 0; i < NR_KSTAT_MTHP; i++) {
			if (r->mthp_fd[order][i] >= 0)
				close(r->mthp_fd[order][i]);
			r->mthp_fd[order][i] = -1;
		}
	}
}

int kstats_open(struct kstats_reader *r, unsigned long page_size)
{
	char path[128];
	int order, i, ret;

	memset(r->mthp_fd, -1, sizeof(r->mthp_fd));
	r->refresh_fd = -1;
	r->vmstat_fd = open("/proc/vmstat", O_RDONLY | O_CLOEXEC);
	if (r->vmstat_fd < 0)
		return -errno;
	r->refresh_fd = open("/proc/sys/vm/stat_refresh",
			     O_WRONLY | O_CLOEXEC);
	if (r->refresh_fd < 0) {
		ret = -errno;
		kstats_close(r);
		return ret;
	}
	/* Order 0 has no directory; a size the kernel lacks is skipped. */
	for (order = 1; order < KSTAT_ORDERS; order++) {
		for (i = 0; i < NR_KSTAT_MTHP; i++) {
			snprintf(path, sizeof(path),
				 THP_DIR "/hugepages-%lukB/stats/%s",
				 (page_size << order) >> 10, mthp_files[i]);
			r->mthp_fd[order][i] = open(path, O_RDONLY | O_CLOEXEC);
		}
	}
	/* Fault the buffer in now, not inside a statement's window. */
	memset(r->buf, 0, sizeof(r->buf));
	return 0;
}

static ssize_t read_at_start(int fd, char *buf, size_t size)
{
	ssize_t n;

	do
		n = pread(fd, buf, size - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

/* "NAME VALUE" lines: the value of each name asked for. */
static void parse_vmstat(const char *text, struct kstats *out)
{
	static const struct {
		const char *name;
		enum kstat_item item;
	} wanted[] = {
		{ "pgfault", KSTAT_PGFAULT },
		{ "thp_fault_alloc", KSTAT_THP_FAULT_ALLOC },
		{ "thp_fault_fallback", KSTAT_THP_FAULT_FALLBACK },
		{ "thp_split_pmd", KSTAT_THP_SPLIT_PMD },
		{ "nr_foll_pin_acquired", KSTAT_PIN_ACQUIRED },
		{ "nr_foll_pin_released", KSTAT_PIN_RELEASED },
	};
	const char *line = text;
	unsigned int i;

	while (*line) {
		size_t len = strcspn(line, " ");

		for (i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++) {
			if (strlen(wanted[i].name) == len &&
			    !strncmp(line, wanted[i].name, len))
				out->global[wanted[i].item] =
					strtoull(line + len, NULL, 10);
		}
		line += strcspn(line, "\n");
		if (*line)
			line++;
	}
}

int kstats_read(struct kstats_reader *r, struct kstats *out)
{
	char num[32];
	int order, i;

	memset(out, 0, sizeof(*out));
	if (write(r->refresh_fd, "1", 1) < 0)
		return -errno;
	if (read_at_start(r->vmstat_fd, r->buf, sizeof(r->buf)) < 0)
		return -errno;
	parse_vmstat(r->buf, out);
	for (order = 1; order < KSTAT_ORDERS; order++) {
		for (i = 0; i < NR_KSTAT_MTHP; i++) {
			if (r->mthp_fd[order][i] < 0)
				continue;
			if (read_at_start(r->mthp_fd[order][i], num,
					  sizeof(num)) < 0)
				return -errno;
			out->mthp[order][i] = strtoull(num, NULL, 10);
		}
	}
	return 0;
}

void kstats_sub(struct kstats *out, const struct kstats *after,
		const struct kstats *before)
{
	int order, i;

	for (i = 0; i < NR_KSTAT_GLOBAL; i++)
		out->global[i] = after->global[i] - before->global[i];
	for (order = 0; order < KSTAT_ORDERS; order++)
		for (i = 0; i < NR_KSTAT_MTHP; i++)
			out->mthp[order][i] = after->mthp[order][i] -
					      before->mthp[order][i];
}
