// SPDX-License-Identifier: GPL-2.0-only
/*
 * events.c - the event stream in memory and in its stored text form.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lib/readfile.h"
#include "record/events.h"

/*
 * Each kind's name and the fields it uses, in the order they print:
 * a..e name the argument slots, "ret" the result.  NULL: slot unused.
 */
struct kind_desc {
	const char *name;
	const char *keys[5];
	bool has_ret;
};

static const struct kind_desc kinds[REC_NR_KINDS] = {
	[REC_FAULT_USER]   = { "fault_user",   { "addr", "err" }, false },
	[REC_FAULT_KERNEL] = { "fault_kernel", { "addr", "err" }, false },
	[REC_MMAP]     = { "mmap",     { "addr", "len", "prot", "flags", "fd" }, true },
	[REC_MUNMAP]   = { "munmap",   { "addr", "len" }, true },
	[REC_MPROTECT] = { "mprotect", { "addr", "len", "prot" }, true },
	[REC_MADVISE]  = { "madvise",  { "addr", "len", "advice" }, true },
	[REC_MREMAP]   = { "mremap",   { "addr", "old_len", "new_len", "flags", "new_addr" }, true },
	[REC_BRK]      = { "brk",      { "brk" }, true },
	[REC_NEWTASK]  = { "newtask",  { "child", "clone_flags" }, false },
	[REC_EXECVE]   = { "execve",   { NULL }, true },
	[REC_EXIT]     = { "exit",     { "group_dead" }, false },
	[REC_OPEN]     = { "open",     { NULL, NULL, "flags" }, true },
	[REC_CLOSE]    = { "close",    { "fd" }, true },
	[REC_FCNTL]    = { "fcntl",    { "fd", "cmd", "arg" }, true },
	[REC_READ]     = { "read",     { "fd", "buf", "count" }, true },
	[REC_WRITE]    = { "write",    { "fd", "buf", "count" }, true },
};

const char *rec_kind_name(enum rec_kind kind)
{
	return kind < REC_NR_KINDS ? kinds[kind].name : "?";
}

int rec_stream_add(struct rec_stream *s, const struct rec_event *e)
{
	if (s->nr == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 4096;
		struct rec_event *ev = realloc(s->ev, cap * sizeof(*ev));

		if (!ev)
			return -ENOMEM;
		s->ev = ev;
		s->cap = cap;
	}
	s->ev[s->nr++] = *e;
	return 0;
}

void rec_stream_free(struct rec_stream *s)
{
	free(s->ev);
	s->ev = NULL;
	s->nr = s->cap = 0;
}

/*
 * A merge sort, stable: two events with the same stamp came from one
 * CPU's buffer in that order, or are too close to order anyway.
 */
static void merge_sort(struct rec_event *a, struct rec_event *tmp, size_t n)
{
	size_t mid = n / 2, i = 0, j = mid, k = 0;

	if (n < 2)
		return;
	merge_sort(a, tmp, mid);
	merge_sort(a + mid, tmp, n - mid);
	if (a[mid - 1].ts <= a[mid].ts)
		return;		/* already in order: the usual case */
	while (i < mid && j < n)
		tmp[k++] = a[j].ts < a[i].ts ? a[j++] : a[i++];
	while (i < mid)
		tmp[k++] = a[i++];
	while (j < n)
		tmp[k++] = a[j++];
	memcpy(a, tmp, n * sizeof(*a));
}

void rec_stream_sort(struct rec_stream *s)
{
	struct rec_event *tmp;
	size_t i;

	for (i = 1; i < s->nr; i++)
		if (s->ev[i].ts < s->ev[i - 1].ts)
			break;
	if (i >= s->nr)
		return;
	tmp = malloc(s->nr * sizeof(*tmp));
	if (!tmp) {
		/* Insertion sort needs no memory; slow, but right. */
		for (i = 1; i < s->nr; i++) {
			struct rec_event e = s->ev[i];
			size_t j = i;

			while (j > 0 && s->ev[j - 1].ts > e.ts) {
				s->ev[j] = s->ev[j - 1];
				j--;
			}
			s->ev[j] = e;
		}
		return;
	}
	merge_sort(s->ev, tmp, s->nr);
	free(tmp);
}

static uint64_t *slot(struct rec_event *e, int i)
{
	uint64_t *slots[5] = { &e->a, &e->b, &e->c, &e->d, &e->e };

	return slots[i];
}

int rec_write_events(FILE *f, const struct rec_stream *s)
{
	size_t n;
	int i;

	fprintf(f, "# ptebatch events 1\nroot %" PRId32 "\n", s->root);
	for (n = 0; n < s->nr; n++) {
		struct rec_event e = s->ev[n];
		const struct kind_desc *k = &kinds[e.kind < REC_NR_KINDS ? e.kind : 0];

		fprintf(f, "%" PRIu64 " %" PRId32 " %s", e.ts, e.pid, k->name);
		for (i = 0; i < 5; i++)
			if (k->keys[i])
				fprintf(f, " %s=%#" PRIx64, k->keys[i], *slot(&e, i));
		if (k->has_ret)
			fprintf(f, " ret=%" PRId64, e.ret);
		fputc('\n', f);
	}
	return ferror(f) ? -EIO : 0;
}

static int find_kind(const char *name)
{
	int k;

	for (k = 0; k < REC_NR_KINDS; k++)
		if (!strcmp(kinds[k].name, name))
			return k;
	return -1;
}

/* key=value into @e; -1 when the key is not one of the kind's. */
static int take_field(struct rec_event *e, const struct kind_desc *k,
		      const char *tok)
{
	const char *eq = strchr(tok, '=');
	char *end;
	size_t len;
	int i;

	if (!eq || eq == tok || !eq[1])
		return -1;
	len = (size_t)(eq - tok);
	errno = 0;
	if (len == 3 && !strncmp(tok, "ret", 3) && k->has_ret) {
		e->ret = strtoll(eq + 1, &end, 0);
		return *end || errno ? -1 : 0;
	}
	for (i = 0; i < 5; i++) {
		if (k->keys[i] && strlen(k->keys[i]) == len &&
		    !strncmp(k->keys[i], tok, len)) {
			/* fd=-1 and the like: negative values wrap, as in C. */
			*slot(e, i) = eq[1] == '-' ? (uint64_t)strtoll(eq + 1, &end, 0) :
				      strtoull(eq + 1, &end, 0);
			return *end || errno ? -1 : 0;
		}
	}
	return -1;
}

/* strtoull() and strtol() would skip spaces and take a sign. */
static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* A pid: digits, 1 to INT32_MAX (not cut to 32 bits, as a cast would). */
static int take_pid(const char *tok, int32_t *pid)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(tok, &end, 10);
	if (!is_digit(*tok) || *end || errno || v < 1 || v > INT32_MAX)
		return -1;
	*pid = (int32_t)v;
	return 0;
}

int rec_read_events(const char *name, FILE *in, struct rec_stream *s,
		    FILE *err)
{
	struct readfile_lines lines;
	char *line, *tok, *save, *end, why[512];
	size_t got;
	int lineno = 0, ret = 0;
	bool have_root = false;

	s->root = 0;
	readfile_lines_init(&lines, in, name, REC_EVENTS_MAX_BYTES,
			    REC_EVENTS_MAX_LINE, "an events file");
	while ((ret = readfile_lines_next(&lines, &line, &got, why,
					  sizeof(why))) > 0) {
		struct rec_event e = { 0 };
		const struct kind_desc *k;
		int kind;

		ret = 0;
		lineno++;
		if (strlen(line) != got) {
			fprintf(err, "%s:%d: a NUL byte in the line\n", name,
				lineno);
			goto bad;
		}
		line[strcspn(line, "\r\n")] = '\0';
		tok = strtok_r(line, " \t", &save);
		if (!tok || tok[0] == '#')
			continue;
		if (!strcmp(tok, "root")) {
			tok = strtok_r(NULL, " \t", &save);
			if (!tok || take_pid(tok, &s->root) || have_root ||
			    strtok_r(NULL, " \t", &save)) {
				fprintf(err, "%s:%d: 'root PID': one, a pid\n",
					name, lineno);
				goto bad;
			}
			have_root = true;
			continue;
		}
		errno = 0;
		e.ts = strtoull(tok, &end, 10);
		if (!is_digit(*tok) || *end || errno)
			goto bad_line;
		tok = strtok_r(NULL, " \t", &save);
		if (!tok || take_pid(tok, &e.pid))
			goto bad_line;
		tok = strtok_r(NULL, " \t", &save);
		kind = tok ? find_kind(tok) : -1;
		if (kind < 0) {
			fprintf(err, "%s:%d: unknown event kind '%s'\n", name,
				lineno, tok ? tok : "");
			goto bad;
		}
		e.kind = (uint16_t)kind;
		k = &kinds[kind];
		while ((tok = strtok_r(NULL, " \t", &save))) {
			if (take_field(&e, k, tok)) {
				fprintf(err, "%s:%d: bad field '%s' for %s\n",
					name, lineno, tok, k->name);
				goto bad;
			}
		}
		if (s->nr && e.ts < s->ev[s->nr - 1].ts) {
			fprintf(err, "%s:%d: time goes backwards\n", name, lineno);
			goto bad;
		}
		if (rec_stream_add(s, &e)) {
			fprintf(err, "%s: out of memory\n", name);
			ret = -ENOMEM;
			goto out;
		}
		continue;
bad_line:
		fprintf(err, "%s:%d: expected 'TS PID KIND key=value...'\n",
			name, lineno);
		goto bad;
	}
	if (ret) {
		fprintf(err, "%s\n", why);
		/* Past a bound is bad input, as a bad line is. */
		if (ret == -EFBIG)
			ret = -EINVAL;
	} else if (!have_root) {
		fprintf(err, "%s: no 'root PID' line\n", name);
		ret = -EINVAL;
	}
	goto out;
bad:
	ret = -EINVAL;
out:
	readfile_lines_close(&lines);
	return ret;
}
