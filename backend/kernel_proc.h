/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kernel_proc.h - the protocol between the kernel backend's coordinator
 * (kernel.c) and the scenario processes it drives (kernel_proc.c).
 *
 * Every scenario process is a real process running kproc_serve(): it
 * reads one fixed-size command from its command pipe, performs it, and
 * writes replies to its reply pipe.  A command is one statement, or one
 * piece of one (a split block, a batch of observed addresses); its reply
 * carries the minor faults the process took while doing it.  Bulk bytes
 * travel after the header: addresses to peek follow a KOP_PEEK command,
 * and drained or peeked bytes come back as KREPLY_DATA messages before
 * the final KREPLY_DONE.
 */
#ifndef BACKEND_KERNEL_PROC_H
#define BACKEND_KERNEL_PROC_H

#include <errno.h>
#include <stdint.h>
#include <sys/types.h>
#include <unistd.h>

#include "scenario/scenario.h"

enum kop {
	KOP_MMAP,		/* addr len prot advice flags (MAP_POPULATE, MAP_FIXED) */
	KOP_MUNMAP,		/* addr len */
	KOP_MPROTECT,		/* addr len prot */
	KOP_MADVISE,		/* addr len advice */
	KOP_WRITE,		/* addr len stride value */
	KOP_READ,		/* addr len stride */
	KOP_FORK,		/* child */
	KOP_EXIT,		/* no reply: the process is gone */
	KOP_REGISTER,		/* handle addr len */
	KOP_UNREGISTER,		/* handle */
	KOP_DIO_WRITE,		/* addr len */
	KOP_DIO_READ,		/* addr len value flags (KDIO_FILLED) */
	KOP_VMSPLICE,		/* handle addr len */
	KOP_DRAIN,		/* handle; replies with data */
	KOP_MREMAP,		/* addr len new_addr flags (MREMAP_DONTUNMAP) */
	KOP_SPLIT_BLOCK,	/* addr: mprotect one page to prot2, back to prot */
	KOP_PEEK,		/* len addresses follow; replies with len bytes */
	KOP_RESIZE,		/* addr len new_len new_addr (the room's end, or 0) */
	KOP_TOUCH,		/* len struct ktouch follow; value */
	KOP_SETTLE,		/* nothing: the pre-faulting of any command */
	KOP_DIO_FILL,		/* len value: a dio-read's file, written now */
};

/* KOP_DIO_READ: KOP_DIO_FILL wrote the file already. */
#define KDIO_FILLED	1

/* At most this many addresses follow one KOP_PEEK. */
#define KPEEK_MAX 4096

/*
 * One run of a touch: @count pages from @addr, stored to (@write) or
 * loaded.  At most KTOUCH_MAX follow one KOP_TOUCH; a longer touch is
 * several commands, their faults summed.
 */
struct ktouch {
	unsigned long addr;
	uint32_t count;
	uint32_t write;
};

#define KTOUCH_MAX 4096

struct kcmd {
	int op;			/* enum kop */
	int handle;
	int child;		/* fork: the new process's id */
	int prot, prot2;	/* PROT_* */
	int advice;		/* MADV_*, or -1 */
	int value;		/* the byte to store */
	int flags;		/* mmap: MAP_POPULATE; mremap: MREMAP_DONTUNMAP */
	unsigned long addr, len, stride, new_addr;
	unsigned long new_len;	/* resize */
	/*
	 * Where the scenario's regions lie: [span_lo, span_hi).  The process
	 * pre-faults every mapping of its own but never these.
	 */
	unsigned long span_lo, span_hi;
};

enum { KREPLY_DONE, KREPLY_DATA };

struct kreply {
	int kind;		/* KREPLY_DONE or KREPLY_DATA */
	int err;		/* positive errno */
	/*
	 * ru_minflt delta of the command, less the faults the fault sampler
	 * saw outside [span_lo, span_hi): the process's own pages
	 * (kernel_proc.c, "Where a fault was").
	 */
	unsigned long faults;
	unsigned long child_faults;
	unsigned long stray_faults;	/* left out of @faults */
	unsigned long stray_addr;	/* the first of them */
	/* The sampler lost samples: @faults is ru_minflt's whole delta. */
	int unattributed;
	/*
	 * CLOCK_MONOTONIC nanoseconds of the operation itself, read in this
	 * process right around it (kernel_proc.c: measure_begin/_end).
	 */
	uint64_t ns;
	long child_pid;
	unsigned long data_len;	/* KREPLY_DATA: bytes that follow */
	/*
	 * The command failed on a limit of this machine, not by the
	 * kernel's rules for it (a pipe cannot be made large enough).
	 */
	int host_limit;
};

/*
 * What a scenario process knows of the run.  It lives in the coordinator
 * and is inherited, read-only, by every process it forks.
 */
struct kproc_env {
	int nr_procs;
	int (*fds)[4];		/* per process: KFD_* */
	const int *parent;	/* parent process id, -1 for P0 */
	int scratch_fd;		/* O_DIRECT file, already unlinked */
	unsigned long pipe_max;	/* /proc/sys/fs/pipe-max-size */
	unsigned long page_size;
	bool no_fault_sampler;	/* backend.timed: no perf sample per fault */
};

/* The four pipe ends of one process. */
enum { KFD_CMD_R, KFD_CMD_W, KFD_REPLY_R, KFD_REPLY_W };

/*
 * One-time setup of the coordinator before any process is started:
 * the fork trampoline.  Returns 0 or -errno.
 */
int kproc_prepare(void);

/* Whether @desc is @anc or one of its descendants in the scenario. */
int kproc_in_subtree(const struct kproc_env *env, int desc, int anc);

/* The body of process @id; never returns. */
void kproc_serve(const struct kproc_env *env, int id)
	__attribute__((noreturn));

/*
 * Move exactly @len bytes over a pipe, riding out EINTR: 0, or -errno
 * (-EPIPE when the other end closed before everything arrived).
 */
static inline int kio_read_full(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static inline int kio_write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

#endif /* BACKEND_KERNEL_PROC_H */
