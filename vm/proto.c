// SPDX-License-Identifier: GPL-2.0-only
/*
 * proto.c - the frames the host and the guest's agent exchange over the
 * virtio-serial port: a magic line, then fields, each "LEN\n" and LEN
 * bytes.  A byte stream with lengths, so anything (a NUL, a newline, a
 * megabyte of record) passes, and nothing is taken from a line's text.
 *
 *   up:      "PBUP1\n" release
 *   request: "PBRQ1\n" N, then N fields: argv[0..N-3], cwd, stdin
 *   result:  "PBRS1\n" status, stdout, stderr
 *   quit:    "PBQT1\n"
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vm/proto.h"

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Wait until @fd is readable, the deadline passes or the peer is gone. */
static int wait_readable(struct vm_chan *c)
{
	for (;;) {
		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		long long left = c->deadline_ms ? c->deadline_ms - now_ms() : 1000;
		int n;

		if (c->deadline_ms && left <= 0)
			return -ETIMEDOUT;
		n = poll(&p, 1, left > 1000 ? 1000 : (int)left);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
		if (c->alive && !c->alive(c->arg))
			return -EPIPE;
	}
}

static int read_full(struct vm_chan *c, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n;
		int err = wait_readable(c);

		if (err)
			return err;
		n = read(c->fd, p, len);
		if (n == 0)
			return -EPIPE;
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* "DIGITS\n", at most 20 digits. */
static int read_number(struct vm_chan *c, unsigned long long *v)
{
	char ch;
	int digits = 0, err;

	*v = 0;
	for (;;) {
		err = read_full(c, &ch, 1);
		if (err)
			return err;
		if (ch == '\n')
			return digits ? 0 : -EPROTO;
		if (ch < '0' || ch > '9' || ++digits > 20)
			return -EPROTO;
		*v = *v * 10 + (unsigned long long)(ch - '0');
	}
}

static int write_field(int fd, const void *buf, size_t len)
{
	char head[32];
	int n = snprintf(head, sizeof(head), "%zu\n", len);
	int err = write_full(fd, head, (size_t)n);

	return err ? err : write_full(fd, buf, len);
}

/* A field of at most VM_FIELD_MAX bytes, NUL-terminated, malloc'd. */
static int read_field(struct vm_chan *c, char **buf, size_t *len)
{
	unsigned long long n;
	int err = read_number(c, &n);

	*buf = NULL;
	if (err)
		return err;
	if (n > VM_FIELD_MAX)
		return -EFBIG;
	*buf = malloc(n + 1);
	if (!*buf)
		return -ENOMEM;
	err = read_full(c, *buf, n);
	if (err) {
		free(*buf);
		*buf = NULL;
		return err;
	}
	(*buf)[n] = '\0';
	if (len)
		*len = n;
	return 0;
}

/* The next frame's kind: one of VM_MAGIC_*, or a negative errno. */
int vm_read_magic(struct vm_chan *c, char magic[VM_MAGIC_LEN + 1])
{
	int err = read_full(c, magic, VM_MAGIC_LEN);

	if (err)
		return err;
	magic[VM_MAGIC_LEN] = '\0';
	if (strcmp(magic, VM_MAGIC_UP) && strcmp(magic, VM_MAGIC_REQUEST) &&
	    strcmp(magic, VM_MAGIC_RESULT) && strcmp(magic, VM_MAGIC_QUIT))
		return -EPROTO;
	return 0;
}

int vm_send_up(int fd, const char *release)
{
	int err = write_full(fd, VM_MAGIC_UP, VM_MAGIC_LEN);

	return err ? err : write_field(fd, release, strlen(release));
}

int vm_read_up(struct vm_chan *c, char **release)
{
	return read_field(c, release, NULL);
}

int vm_send_quit(int fd)
{
	return write_full(fd, VM_MAGIC_QUIT, VM_MAGIC_LEN);
}

int vm_send_request(int fd, char *const argv[], const char *cwd,
		    const void *in, size_t in_len)
{
	char head[32];
	int argc = 0, n, err, i;

	while (argv[argc])
		argc++;
	n = snprintf(head, sizeof(head), "%d\n", argc + 2);
	err = write_full(fd, VM_MAGIC_REQUEST, VM_MAGIC_LEN);
	if (!err)
		err = write_full(fd, head, (size_t)n);
	for (i = 0; !err && i < argc; i++)
		err = write_field(fd, argv[i], strlen(argv[i]));
	if (!err)
		err = write_field(fd, cwd, strlen(cwd));
	if (!err)
		err = write_field(fd, in ? in : "", in ? in_len : 0);
	return err;
}

void vm_request_free(struct vm_request *r)
{
	int i;

	if (r->argv) {
		for (i = 0; r->argv[i]; i++)
			free(r->argv[i]);
		free(r->argv);
	}
	free(r->cwd);
	free(r->in);
	memset(r, 0, sizeof(*r));
}

int vm_read_request(struct vm_chan *c, struct vm_request *r)
{
	unsigned long long n;
	int err, i, argc;

	memset(r, 0, sizeof(*r));
	err = read_number(c, &n);
	if (err)
		return err;
	if (n < 3 || n > VM_ARGS_MAX + 2)
		return -EPROTO;
	argc = (int)n - 2;
	r->argv = calloc((size_t)argc + 1, sizeof(*r->argv));
	if (!r->argv)
		return -ENOMEM;
	for (i = 0; !err && i < argc; i++)
		err = read_field(c, &r->argv[i], NULL);
	if (!err)
		err = read_field(c, &r->cwd, NULL);
	if (!err)
		err = read_field(c, &r->in, &r->in_len);
	if (err)
		vm_request_free(r);
	return err;
}

int vm_send_result(int fd, int status, const void *out, size_t out_len,
		   const void *err_buf, size_t err_len)
{
	char head[32];
	int n = snprintf(head, sizeof(head), "%d\n", status);
	int err = write_full(fd, VM_MAGIC_RESULT, VM_MAGIC_LEN);

	if (!err)
		err = write_full(fd, head, (size_t)n);
	if (!err)
		err = write_field(fd, out ? out : "", out ? out_len : 0);
	if (!err)
		err = write_field(fd, err_buf ? err_buf : "",
				  err_buf ? err_len : 0);
	return err;
}

int vm_read_result(struct vm_chan *c, int *status, char **out,
		   size_t *out_len, char **err_buf, size_t *err_len)
{
	unsigned long long s;
	int err = read_number(c, &s);

	*out = *err_buf = NULL;
	if (err)
		return err;
	if (s > 0xffff)
		return -EPROTO;
	*status = (int)s;
	err = read_field(c, out, out_len);
	if (!err)
		err = read_field(c, err_buf, err_len);
	if (err) {
		free(*out);
		*out = NULL;
	}
	return err;
}
