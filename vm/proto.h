/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * proto.h - the frames between the host and the guest's agent (proto.c).
 */
#ifndef PTEBATCH_VM_PROTO_H
#define PTEBATCH_VM_PROTO_H

#include <stdbool.h>
#include <stddef.h>

#define VM_MAGIC_LEN		6
#define VM_MAGIC_UP		"PBUP1\n"
#define VM_MAGIC_REQUEST	"PBRQ1\n"
#define VM_MAGIC_RESULT		"PBRS1\n"
#define VM_MAGIC_QUIT		"PBQT1\n"

/* Bounds on what a frame may carry: a field (a record, a scenario on
 * stdin: the scenario reader's own bound is 256M) and the arguments. */
#define VM_FIELD_MAX	(1ULL << 30)
#define VM_ARGS_MAX	4096

/* One end of the port, as a reader sees it. */
struct vm_chan {
	int fd;
	/* CLOCK_MONOTONIC milliseconds after which a read gives up; 0: never */
	long long deadline_ms;
	/* Asked about once a second while a read waits: false ends it. */
	bool (*alive)(void *arg);
	void *arg;
};

struct vm_request {
	char **argv;		/* NULL-terminated */
	char *cwd;
	char *in;
	size_t in_len;
};

int vm_read_magic(struct vm_chan *c, char magic[VM_MAGIC_LEN + 1]);
int vm_send_up(int fd, const char *release);
int vm_read_up(struct vm_chan *c, char **release);
int vm_send_quit(int fd);
int vm_send_request(int fd, char *const argv[], const char *cwd,
		    const void *in, size_t in_len);
int vm_read_request(struct vm_chan *c, struct vm_request *r);
void vm_request_free(struct vm_request *r);
int vm_send_result(int fd, int status, const void *out, size_t out_len,
		   const void *err_buf, size_t err_len);
int vm_read_result(struct vm_chan *c, int *status, char **out,
		   size_t *out_len, char **err_buf, size_t *err_len);

#endif /* PTEBATCH_VM_PROTO_H */
