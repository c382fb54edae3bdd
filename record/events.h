/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * record/ - what a traced program did to its memory, turned into a
 * scenario: the events the kernel's tracepoints report (trace.c reads
 * them with libtracefs), their stored text form (events.c), and the
 * converter (convert.c) that replays them against a picture of each
 * address space and writes the statements.
 *
 * events.h: one event of the trace as the converter sees it.  A system
 * call is one event, taken at its exit with its entry's arguments (its
 * effect is known only then: the address mmap chose, whether it failed);
 * exit_group, which has no exit, is taken at its entry.
 */
#ifndef RECORD_EVENTS_H
#define RECORD_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum rec_kind {
	REC_FAULT_USER,		/* a: address, b: x86 error code */
	REC_FAULT_KERNEL,	/* the same, taken in the kernel (copy_to_user) */
	REC_MMAP,		/* a addr, b len, c prot, d flags, e fd; ret */
	REC_MUNMAP,		/* a addr, b len; ret */
	REC_MPROTECT,		/* a start, b len, c prot; ret */
	REC_MADVISE,		/* a start, b len, c advice; ret */
	REC_MREMAP,		/* a addr, b old_len, c new_len, d flags, e new_addr; ret */
	REC_BRK,		/* a brk; ret the new break */
	REC_NEWTASK,		/* a the new task's pid, b clone flags (in the parent) */
	REC_EXECVE,		/* ret */
	REC_EXIT,		/* a: 1 when the thread group died with this task */
	REC_OPEN,		/* c flags; ret the fd (openat, open) */
	REC_CLOSE,		/* a fd; ret */
	REC_FCNTL,		/* a fd, b cmd, c arg; ret */
	REC_READ,		/* a fd, b buf, c count; ret (read, pread64) */
	REC_WRITE,		/* a fd, b buf, c count; ret (write, pwrite64) */
	REC_NR_KINDS
};

struct rec_event {
	uint64_t ts;		/* trace clock, ns */
	int32_t pid;		/* the acting task (thread id) */
	uint16_t kind;		/* enum rec_kind */
	uint16_t cpu;
	uint64_t a, b, c, d, e;
	int64_t ret;
};

/* A growing array of events. */
struct rec_stream {
	struct rec_event *ev;
	size_t nr, cap;
	int32_t root;		/* the pid the trace followed from */
};

/* Append; 0 or -ENOMEM. */
int rec_stream_add(struct rec_stream *s, const struct rec_event *e);
void rec_stream_free(struct rec_stream *s);
/* Order by time, keeping the order of equal stamps (one CPU's order). */
void rec_stream_sort(struct rec_stream *s);

const char *rec_kind_name(enum rec_kind kind);

/*
 * The stored form: a line "# ptebatch events 1", a line "root PID", then
 * one event per line, "TS PID KIND key=value...", with the keys of its
 * kind (rec_write_events() prints them).  Used for the converter's tests
 * and by `ptebatch record --events FILE` / `--from-events FILE`.
 * rec_read_events() prints "FILE:LINE: message" to @err on bad input and
 * returns -EINVAL (a stream larger than REC_EVENTS_MAX_BYTES or with a
 * line longer than REC_EVENTS_MAX_LINE included); 0 on success.
 *
 * The bounds: an event is a line of about 45 bytes (a fault) to 170 (an
 * mremap), one per fault the trace saw, file-backed ones included; the
 * largest trace recorded here, 7.2M faults, makes some 330M of them.
 * 1G is three times that (and some 1.4G of memory as events).
 */
#define REC_EVENTS_MAX_BYTES	(1UL << 30)
#define REC_EVENTS_MAX_LINE	(64UL << 10)
int rec_write_events(FILE *f, const struct rec_stream *s);
int rec_read_events(const char *name, FILE *in, struct rec_stream *s,
		    FILE *err);

#endif
