// SPDX-License-Identifier: GPL-2.0-only
/*
 * trace.c - the recorder's capture: a tracefs instance of our own (its
 * buffers, events, pid filter and clock are private to it, so the rest of
 * the machine's tracing is untouched), following the command's process
 * tree from before its execve, drained while it runs, read with
 * libtracefs and decoded with libtraceevent.
 *
 * The machine's state, and how each piece comes back:
 *
 *  - The THP settings lock (backend/thp_sysfs.h) is taken first, before
 *    anything is changed or even looked at, and dropped last, once all
 *    is back: two recorders take turns (the second says whose lock it
 *    waits for), as they must anyway for the THP knobs, which are the
 *    machine's.  The command gets the lock lent (thp_lock_lend()), so
 *    that a ptebatch it runs (run --backend kernel, diff, bench,
 *    calibrate, record) takes turns with its siblings instead of waiting
 *    for us, which wait for it.
 *  - tracefs: the machine's mount if it has one, used as it is.  If it
 *    has none, a mount of our own that is attached nowhere (fsopen() and
 *    fsmount(): a descriptor, never in any mount table), which goes away
 *    with its last descriptor, so also when this process is killed with
 *    SIGKILL.  Nothing is ever mounted or unmounted where others see
 *    it.  libtracefs is told the directory (tracefs_set_tracing_dir()),
 *    since left to find one itself it mounts tracefs (or debugfs) on the
 *    machine's /sys/kernel when it sees none mounted.
 *  - The instance, instances/ptebatch-record-PID, holds every buffer,
 *    event, filter, option and set_event_pid we write; removing it
 *    removes them all.  Removed on every exit path, a fault in the
 *    recorder included (its handler); one left by a recorder killed with
 *    SIGKILL is removed by the next recorder (remove_stale_instances()).
 *  - The THP knobs: thp_settings_apply() and its restore, journal
 *    included (a SIGKILL's leftovers are put back by the next holder of
 *    the lock).
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event-parse.h>
#include <tracefs.h>

#include "backend/thp_sysfs.h"
#include "lib/outfile.h"
#include "record/trace.h"

#define TRACEFS_PATH "/sys/kernel/tracing"
#define INSTANCE_PREFIX "ptebatch-record-"
#define INSTANCES "instances/"
#define DEFAULT_BUFFER_KB 65536UL

/* The events read, the field each slot of rec_event takes, and its kind. */
struct ev_desc {
	const char *system, *name;
	int kind;			/* enum rec_kind */
	bool enter;			/* a sys_enter_: its exit completes it */
	const char *fields[5];		/* into a..e */
	const char *filter;
};

static const struct ev_desc descs[] = {
	{ "exceptions", "page_fault_user", REC_FAULT_USER, false,
	  { "address", "error_code" }, NULL },
	{ "exceptions", "page_fault_kernel", REC_FAULT_KERNEL, false,
	  { "address", "error_code" }, "address < 0x800000000000" },
	{ "syscalls", "sys_enter_mmap", REC_MMAP, true,
	  { "addr", "len", "prot", "flags", "fd" }, NULL },
	{ "syscalls", "sys_enter_munmap", REC_MUNMAP, true, { "addr", "len" }, NULL },
	{ "syscalls", "sys_enter_mprotect", REC_MPROTECT, true,
	  { "start", "len", "prot" }, NULL },
	{ "syscalls", "sys_enter_madvise", REC_MADVISE, true,
	  { "start", "len_in", "behavior" }, NULL },
	{ "syscalls", "sys_enter_mremap", REC_MREMAP, true,
	  { "addr", "old_len", "new_len", "flags", "new_addr" }, NULL },
	{ "syscalls", "sys_enter_brk", REC_BRK, true, { "brk" }, NULL },
	{ "syscalls", "sys_enter_execve", REC_EXECVE, true, { NULL }, NULL },
	{ "syscalls", "sys_enter_execveat", REC_EXECVE, true, { NULL }, NULL },
	{ "syscalls", "sys_enter_openat", REC_OPEN, true,
	  { NULL, NULL, "flags" }, NULL },
	{ "syscalls", "sys_enter_open", REC_OPEN, true,
	  { NULL, NULL, "flags" }, NULL },
	{ "syscalls", "sys_enter_close", REC_CLOSE, true, { "fd" }, NULL },
	{ "syscalls", "sys_enter_fcntl", REC_FCNTL, true,
	  { "fd", "cmd", "arg" }, NULL },
	/* O_DIRECT moves whole sectors: smaller transfers cannot be one. */
	{ "syscalls", "sys_enter_read", REC_READ, true,
	  { "fd", "buf", "count" }, "count >= 512" },
	{ "syscalls", "sys_enter_pread64", REC_READ, true,
	  { "fd", "buf", "count" }, "count >= 512" },
	{ "syscalls", "sys_enter_write", REC_WRITE, true,
	  { "fd", "buf", "count" }, "count >= 512" },
	{ "syscalls", "sys_enter_pwrite64", REC_WRITE, true,
	  { "fd", "buf", "count" }, "count >= 512" },
	{ "task", "task_newtask", REC_NEWTASK, false, { "pid", "clone_flags" }, NULL },
	{ "sched", "sched_process_exit", REC_EXIT, false, { "group_dead" }, NULL },
};
#define NR_DESCS (sizeof(descs) / sizeof(descs[0]))

/* What this kernel's formats say of each: ids (-1 absent) and fields. */
struct ev_live {
	int id, exit_id;
	struct tep_format_field *f[5], *ret;
};

/* A system call entered and not yet left, per task. */
struct pending {
	int32_t pid;			/* 0: free */
	const struct ev_desc *entry;
	struct rec_event ev;
};
#define PENDING_SLOTS 65536

struct capture {
	struct tep_handle *tep;
	struct ev_live live[NR_DESCS];
	struct pending *pending;
	struct rec_stream *s;
	int error;
};

static volatile sig_atomic_t stop_signal;
/* Set by a stop signal while we wait to take the lent lock back. */
static volatile sig_atomic_t give_up_lent;
static volatile sig_atomic_t taking_back;
static volatile pid_t child_pgid;

/* Where tracefs is, for libtracefs (a path) and for the handler (a fd). */
struct tracing {
	char dir[PATH_MAX];
	int mount_fd;			/* our own mount, attached nowhere; or -1 */
};
static volatile int tracing_fd = -1;	/* O_PATH, the tracing directory */
static char instance_rel[96];		/* "instances/NAME" under it */
static volatile sig_atomic_t instance_made;

/* The first asks the command to end; a second one insists. */
static void on_stop_signal(int sig)
{
	int again = stop_signal != 0;

	stop_signal = sig;
	if (taking_back)
		give_up_lent = 1;
	if (child_pgid > 0)
		kill(-child_pgid, again ? SIGKILL : SIGTERM);
}

/*
 * A fault in the recorder itself: the instance goes (unlinkat is
 * async-signal-safe and the kernel disables its events), the THP
 * settings come back, the output files' temporaries go (lib/outfile.h),
 * and the signal does what it would have done.  Our tracefs mount, if
 * any, goes with the process.
 */
static void on_fatal_signal(int sig)
{
	outfile_remove_temporaries();
	if (child_pgid > 0)
		kill(-child_pgid, SIGKILL);
	if (instance_made && tracing_fd >= 0)
		unlinkat(tracing_fd, instance_rel, AT_REMOVEDIR);
	thp_settings_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

static int __attribute__((format(printf, 2, 3)))
fail(FILE *err, const char *fmt, ...)
{
	va_list ap;

	fputs("ptebatch: record: ", err);
	va_start(ap, fmt);
	vfprintf(err, fmt, ap);
	va_end(ap);
	fputc('\n', err);
	return -1;
}

static struct pending *pending_slot(struct capture *cap, int32_t pid, bool take)
{
	unsigned int h = (unsigned int)pid * 2654435761u, i;

	for (i = 0; i < PENDING_SLOTS; i++) {
		struct pending *p = &cap->pending[(h + i) % PENDING_SLOTS];

		if (p->pid == pid)
			return p;
		if (!p->pid)
			return take ? p : NULL;
	}
	return NULL;
}

static uint64_t field_value(struct tep_format_field *f, struct tep_record *r)
{
	unsigned long long v = 0;

	if (f)
		tep_read_number_field(f, r->data, &v);
	/* Signed fields shorter than 64 bits (fd, pid): sign-extend. */
	if (f && (f->flags & TEP_FIELD_IS_SIGNED) && f->size < 8) {
		int shift = 64 - 8 * f->size;

		v = (unsigned long long)((long long)(v << shift) >> shift);
	}
	return v;
}

static int on_event(struct tep_event *event, struct tep_record *record,
		    int cpu, void *arg)
{
	struct capture *cap = arg;
	struct rec_event e = { 0 };
	struct pending *p;
	unsigned int i, j;

	e.ts = record->ts;
	e.cpu = (uint16_t)cpu;
	e.pid = tep_data_pid(cap->tep, record);
	for (i = 0; i < NR_DESCS; i++) {
		const struct ev_desc *d = &descs[i];
		struct ev_live *l = &cap->live[i];
		uint64_t *slot[5] = { &e.a, &e.b, &e.c, &e.d, &e.e };

		if (l->id == event->id) {
			for (j = 0; j < 5; j++)
				*slot[j] = field_value(l->f[j], record);
			e.kind = (uint16_t)d->kind;
			if (!d->enter)
				goto add;
			p = pending_slot(cap, e.pid, true);
			if (p) {
				p->pid = e.pid;
				p->entry = d;
				p->ev = e;
			}
			return 0;
		}
		if (l->exit_id == event->id) {
			p = pending_slot(cap, e.pid, false);
			if (!p || p->entry != d)
				return 0;	/* entered before the trace */
			e = p->ev;
			e.ts = record->ts;
			e.cpu = (uint16_t)cpu;
			e.ret = (int64_t)field_value(l->ret, record);
			p->entry = NULL;
			goto add;
		}
	}
	return 0;
add:
	if (rec_stream_add(cap->s, &e)) {
		cap->error = -ENOMEM;
		return 1;
	}
	return 0;
}

/* A tracefs file read whole (a format is a few KB); NULL if it cannot be. */
static char *read_whole(const char *path, size_t *len)
{
	size_t cap = 8192, n = 0;
	char *buf = malloc(cap), *more;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (!buf || fd < 0)
		goto fail;
	while ((r = read(fd, buf + n, cap - n)) > 0) {
		n += r;
		if (n < cap)
			continue;
		/* 1M: no format comes near it. */
		if (cap >= (1UL << 20) || !(more = realloc(buf, cap * 2)))
			goto fail;
		buf = more;
		cap *= 2;
	}
	if (r < 0 || !n)
		goto fail;
	close(fd);
	*len = n;
	return buf;
fail:
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

static void load_format(struct tep_handle *tep, const char *dir,
			const char *system, const char *name)
{
	char path[PATH_MAX + 128], *buf;
	size_t len;

	snprintf(path, sizeof(path), "%s/events/%s/%s/format", dir, system,
		 name);
	buf = read_whole(path, &len);
	if (buf)
		tep_parse_event(tep, buf, len, system);
	free(buf);
}

/*
 * The formats of the events read (descs[] and their sys_exit_ twins) and
 * the ring buffer's page header: what tracefs_local_events_system() reads
 * for them, without every other event of their systems and without
 * /proc/kallsyms, which this decoder never prints and which takes half a
 * minute to parse under AddressSanitizer.  A missing event is for
 * resolve_events() to name.
 */
static struct tep_handle *load_formats(const char *dir)
{
	struct tep_handle *tep = tep_alloc();
	char path[PATH_MAX + 32], name[64], *buf;
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	unsigned int i;
	size_t len;

	if (!tep)
		return NULL;
	snprintf(path, sizeof(path), "%s/events/header_page", dir);
	buf = read_whole(path, &len);
	if (!buf) {
		tep_free(tep);
		return NULL;
	}
	tep_parse_header_page(tep, buf, len, sizeof(long));
	free(buf);
	for (i = 0; i < NR_DESCS; i++) {
		load_format(tep, dir, descs[i].system, descs[i].name);
		if (!descs[i].enter)
			continue;
		snprintf(name, sizeof(name), "sys_exit_%s",
			 descs[i].name + strlen("sys_enter_"));
		load_format(tep, dir, descs[i].system, name);
	}
	tep_set_cpus(tep, cpus > 0 ? (int)cpus : 1);
	return tep;
}

static int resolve_events(struct capture *cap, FILE *err)
{
	unsigned int i, j;

	for (i = 0; i < NR_DESCS; i++) {
		const struct ev_desc *d = &descs[i];
		struct ev_live *l = &cap->live[i];
		struct tep_event *ev = tep_find_event_by_name(cap->tep, d->system,
							      d->name);

		l->id = -1;
		l->exit_id = -1;
		if (!ev) {
			/* Optional ones: a kernel without them loses little. */
			if (!strcmp(d->name, "sys_enter_open") ||
			    !strcmp(d->name, "sys_enter_execveat"))
				continue;
			return fail(err, "this kernel has no tracepoint %s:%s",
				    d->system, d->name);
		}
		l->id = ev->id;
		for (j = 0; j < 5; j++)
			l->f[j] = d->fields[j] ? tep_find_field(ev, d->fields[j]) : NULL;
		if (d->enter) {
			char name[64];

			snprintf(name, sizeof(name), "sys_exit_%s",
				 d->name + strlen("sys_enter_"));
			ev = tep_find_event_by_name(cap->tep, d->system, name);
			if (!ev)
				return fail(err, "this kernel has no tracepoint"
					    " %s:%s", d->system, name);
			l->exit_id = ev->id;
			l->ret = tep_find_field(ev, "ret");
		}
	}
	return 0;
}

static int enable_events(const struct capture *cap,
			 struct tracefs_instance *inst, FILE *err)
{
	unsigned int i;

	for (i = 0; i < NR_DESCS; i++) {
		const struct ev_desc *d = &descs[i];

		if (cap->live[i].id < 0)
			continue;
		if (d->filter && tracefs_event_file_write(inst, d->system,
							  d->name, "filter",
							  d->filter) < 0)
			return fail(err, "cannot set the filter of %s:%s",
				    d->system, d->name);
		if (tracefs_event_enable(inst, d->system, d->name))
			return fail(err, "cannot enable %s:%s", d->system, d->name);
		if (d->enter) {
			char name[64];

			snprintf(name, sizeof(name), "sys_exit_%s",
				 d->name + strlen("sys_enter_"));
			if (d->filter && !strncmp(d->filter, "count", 5) &&
			    tracefs_event_file_write(inst, d->system, name,
						     "filter", "ret >= 512") < 0)
				return fail(err, "cannot set the filter of %s:%s",
					    d->system, name);
			if (tracefs_event_enable(inst, d->system, name))
				return fail(err, "cannot enable %s:%s",
					    d->system, name);
		}
	}
	return 0;
}

/*
 * Instances left by a recorder that died without cleaning up (SIGKILL).
 * Called holding the THP settings lock, which every recorder holds from
 * before it makes its instance until after it removed it: so every
 * ptebatch-record-PID instance there is is stale, but those of this
 * process's ancestors, recorders that lent us the lock.  By that rule,
 * not by "PID is not running": a dead recorder's pid may be in use again.
 */
static void remove_stale_instances(void)
{
	struct dirent *de;
	int fd = openat(tracing_fd, "instances", O_RDONLY | O_DIRECTORY |
			O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d))) {
		long pid;
		char *end;

		if (strncmp(de->d_name, INSTANCE_PREFIX, strlen(INSTANCE_PREFIX)))
			continue;
		pid = strtol(de->d_name + strlen(INSTANCE_PREFIX), &end, 10);
		if (*end || pid <= 0 || pid > INT_MAX ||
		    thp_pid_is_ancestor((pid_t)pid))
			continue;
		unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
	}
	closedir(d);
}

/* The mount point of the machine's tracefs (this mount namespace's). */
static bool find_tracefs(char *dir, size_t size)
{
	char line[4096], point[PATH_MAX], inst[PATH_MAX + 16], *sep, *f;
	FILE *mi = fopen("/proc/self/mountinfo", "re");
	bool found = false;
	struct stat st;

	if (!mi)
		return false;
	while (fgets(line, sizeof(line), mi)) {
		size_t i, j;

		/* "ID PARENT MAJ:MIN ROOT POINT OPTS [TAGS] - TYPE SRC OPTS" */
		sep = strstr(line, " - ");
		if (!sep || strncmp(sep + 3, "tracefs ", 8))
			continue;
		f = line;
		for (i = 0; i < 4 && f; i++) {
			f = strchr(f, ' ');
			f = f ? f + 1 : NULL;
		}
		if (!f)
			continue;
		/* The point, its \040-style escapes undone. */
		for (i = 0, j = 0; f[i] && f[i] != ' ' && j + 1 < sizeof(point);
		     j++) {
			if (f[i] == '\\' && f[i + 1] >= '0' && f[i + 1] <= '3' &&
			    f[i + 2] >= '0' && f[i + 2] <= '7' &&
			    f[i + 3] >= '0' && f[i + 3] <= '7') {
				point[j] = (char)((f[i + 1] - '0') * 64 +
						  (f[i + 2] - '0') * 8 +
						  (f[i + 3] - '0'));
				i += 4;
			} else {
				point[j] = f[i++];
			}
		}
		point[j] = '\0';
		if (strlen(point) + strlen("/instances") >= sizeof(inst) ||
		    strlen(point) >= size)
			continue;
		snprintf(inst, sizeof(inst), "%s/instances", point);
		if (stat(inst, &st) || !S_ISDIR(st.st_mode))
			continue;
		/* The usual place first; else the first one listed. */
		if (!found || !strcmp(point, TRACEFS_PATH))
			snprintf(dir, size, "%s", point);
		found = true;
		if (!strcmp(point, TRACEFS_PATH))
			break;
	}
	fclose(mi);
	return found;
}

/*
 * Where to trace: the machine's tracefs as it is, or a mount of our own
 * attached nowhere (so never to undo).  0, or -1 with a message.
 */
static int tracing_open(struct tracing *t, FILE *err)
{
	int fs;

	t->mount_fd = -1;
	if (!find_tracefs(t->dir, sizeof(t->dir))) {
		fs = fsopen("tracefs", FSOPEN_CLOEXEC);
		if (fs < 0 || fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) ||
		    (t->mount_fd = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID |
					   MOUNT_ATTR_NODEV |
					   MOUNT_ATTR_NOEXEC)) < 0) {
			int e = errno;

			if (fs >= 0)
				close(fs);
			return fail(err, "tracefs is not mounted, and a mount of"
				    " our own failed (%s): mount it (mount -t"
				    " tracefs nodev %s) and run again",
				    strerror(e), TRACEFS_PATH);
		}
		close(fs);
		snprintf(t->dir, sizeof(t->dir), "/proc/self/fd/%d", t->mount_fd);
	}
	tracing_fd = open(t->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (tracing_fd < 0 || tracefs_set_tracing_dir(t->dir)) {
		fail(err, "cannot open %s: %s", t->dir, strerror(errno));
		return -1;
	}
	return 0;
}

static void tracing_close(struct tracing *t)
{
	int fd = tracing_fd;

	tracefs_set_tracing_dir(NULL);
	tracing_fd = -1;
	if (fd >= 0)
		close(fd);
	if (t->mount_fd >= 0)
		close(t->mount_fd);
	t->mount_fd = -1;
}

/*
 * instances/NAME, made here: not one libtracefs finds already there
 * (tracefs_instance_create() takes it as it is, with whatever a dead
 * recorder of the same pid left set in it).
 */
static struct tracefs_instance *make_instance(const struct tracing *t,
					      const char *name, FILE *err)
{
	struct tracefs_instance *inst;

	snprintf(instance_rel, sizeof(instance_rel), INSTANCES "%s", name);
	if (mkdirat(tracing_fd, instance_rel, 0700) && (errno != EEXIST ||
	    unlinkat(tracing_fd, instance_rel, AT_REMOVEDIR) ||
	    mkdirat(tracing_fd, instance_rel, 0700))) {
		fail(err, "cannot create the tracefs instance %s: %s", name,
		     strerror(errno));
		return NULL;
	}
	instance_made = 1;
	inst = tracefs_instance_alloc(t->dir, name);
	if (!inst)
		fail(err, "cannot open the tracefs instance %s: %s", name,
		     strerror(errno));
	return inst;
}

/* 0, or -1 with a message: what is left, the next recorder removes. */
static int remove_instance(const char *name, FILE *err)
{
	if (!instance_made)
		return 0;
	instance_made = 0;
	if (!unlinkat(tracing_fd, instance_rel, AT_REMOVEDIR) || errno == ENOENT)
		return 0;
	return fail(err, "cannot remove the tracefs instance %s: %s (the next"
		    " ptebatch record removes it)", name, strerror(errno));
}

/* overrun + commit overrun + dropped events over every CPU's buffer. */
static unsigned long lost_events(struct tracefs_instance *inst)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF), cpu;
	unsigned long lost = 0;

	for (cpu = 0; cpu < ncpu; cpu++) {
		static const char *const keys[] = { "overrun:", "commit overrun:",
						    "dropped events:" };
		char file[64], *text, *at;
		unsigned int k;

		snprintf(file, sizeof(file), "per_cpu/cpu%ld/stats", cpu);
		text = tracefs_instance_file_read(inst, file, NULL);
		if (!text)
			continue;
		for (k = 0; k < 3; k++) {
			at = strstr(text, keys[k]);
			if (at)
				lost += strtoul(at + strlen(keys[k]), NULL, 10);
		}
		free(text);
	}
	return lost;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int write_file(struct tracefs_instance *inst, const char *file,
		      const char *value, FILE *err)
{
	if (tracefs_instance_file_write(inst, file, value) < 0)
		return fail(err, "cannot write '%s' to %s/%s", value,
			    instance_rel, file);
	return 0;
}

static void install(int sig, void (*fn)(int), struct sigaction *old)
{
	struct sigaction sa = { 0 };

	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, old);
}

int rec_trace(const struct rec_trace_opts *o, struct rec_stream *s,
	      struct rec_trace_result *res)
{
	static const int stop_sigs[] = { SIGINT, SIGTERM, SIGHUP };
	static const int fatal_sigs[] = { SIGSEGV, SIGBUS, SIGABRT, SIGQUIT };
	struct sigaction old_stop[3], old_fatal[4];
	struct capture cap = { 0 };
	struct tracefs_instance *inst = NULL;
	struct tracing t = { .mount_fd = -1 };
	char why[256], name[64] = "", value[64];
	int go[2] = { -1, -1 }, ret = -1, i, status;
	bool applied = false, waited = false, lent = false, stale_ok = true;
	pid_t child = -1;

	memset(res, 0, sizeof(*res));
	cap.s = s;
	stop_signal = 0;
	give_up_lent = 0;
	/* The lock first: nothing is changed, or even read, without it. */
	if (thp_lock_take(why, sizeof(why)))
		return fail(o->err, "%s", why);
	if (tracing_open(&t, o->err))
		goto out;
	remove_stale_instances();
	cap.pending = calloc(PENDING_SLOTS, sizeof(*cap.pending));
	cap.tep = load_formats(t.dir);
	if (!cap.pending || !cap.tep) {
		fail(o->err, "cannot read the event formats under %s/events",
		     t.dir);
		goto out;
	}
	if (resolve_events(&cap, o->err))
		goto out;

	if (thp_settings_apply(o->mthp, why, sizeof(why))) {
		fail(o->err, "cannot set the THP settings: %s", why);
		goto out;
	}
	applied = true;
	for (i = 0; i < 3; i++)
		install(stop_sigs[i], on_stop_signal, &old_stop[i]);
	for (i = 0; i < 4; i++)
		install(fatal_sigs[i], on_fatal_signal, &old_fatal[i]);

	snprintf(name, sizeof(name), INSTANCE_PREFIX "%d", (int)getpid());
	inst = make_instance(&t, name, o->err);
	if (!inst)
		goto out;
	res->buffer_kb = o->buffer_kb ? o->buffer_kb : DEFAULT_BUFFER_KB;
	snprintf(value, sizeof(value), "%lu", res->buffer_kb);
	if (write_file(inst, "buffer_size_kb", value, o->err) ||
	    write_file(inst, "trace_clock", "mono", o->err) ||
	    write_file(inst, "tracing_on", "0", o->err))
		goto out;

	if (thp_lock_lend(why, sizeof(why))) {
		fail(o->err, "%s", why);
		goto out;
	}
	lent = true;
	if (pipe2(go, O_CLOEXEC)) {
		fail(o->err, "pipe: %s", strerror(errno));
		goto out;
	}
	child = fork();
	if (child < 0) {
		fail(o->err, "fork: %s", strerror(errno));
		goto out;
	}
	if (!child) {
		char c;

		/* Its own group, so that a signal reaches the whole tree. */
		setpgid(0, 0);
		for (i = 0; i < 3; i++)
			signal(stop_sigs[i], SIG_DFL);
		for (i = 0; i < 4; i++)
			signal(fatal_sigs[i], SIG_DFL);
		close(go[1]);
		/* The same addresses every run: comparable recordings. */
		if (o->no_aslr)
			personality((unsigned long)personality(0xffffffff) |
				    ADDR_NO_RANDOMIZE);
		if (read(go[0], &c, 1) != 1)
			_exit(126);
		/* A ptebatch it runs takes turns on our lock, not waits. */
		thp_lock_lend_child();
		execvp(o->argv[0], o->argv);
		fprintf(stderr, "ptebatch: record: cannot run %s: %s\n",
			o->argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(child, child);
	child_pgid = child;
	close(go[0]);
	go[0] = -1;
	snprintf(value, sizeof(value), "%d", (int)child);
	if (write_file(inst, "set_event_pid", value, o->err) ||
	    tracefs_option_enable(inst, TRACEFS_OPTION_EVENT_FORK) ||
	    enable_events(&cap, inst, o->err) ||
	    write_file(inst, "tracing_on", "1", o->err)) {
		kill(child, SIGKILL);
		goto out;
	}
	s->root = child;
	/* Interrupted while setting up: the command never starts. */
	if (stop_signal || write(go[1], "g", 1) != 1) {
		if (stop_signal)
			fail(o->err, "interrupted before the command started");
		else
			fail(o->err, "cannot start the command: %s",
			     strerror(errno));
		kill(child, SIGKILL);
		goto out;
	}
	close(go[1]);
	go[1] = -1;

	/* Drain while it runs, so that the buffers seldom fill. */
	for (;;) {
		pid_t w = waitpid(child, &status, WNOHANG);

		if (tracefs_iterate_raw_events(cap.tep, inst, NULL, 0, on_event,
					       &cap) < 0 && cap.error) {
			fail(o->err, "out of memory holding the trace");
			kill(-child, SIGKILL);
			goto out;
		}
		if (w == child) {
			waited = true;
			break;
		}
		sleep_ms(20);
	}
	write_file(inst, "tracing_on", "0", o->err);
	tracefs_iterate_raw_events(cap.tep, inst, NULL, 0, on_event, &cap);
	if (cap.error) {
		fail(o->err, "out of memory holding the trace");
		goto out;
	}
	res->status = status;
	res->lost = lost_events(inst);
	res->interrupted = stop_signal != 0;
	rec_stream_sort(s);
	ret = 0;
out:
	if (child > 0 && !waited) {
		kill(-child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	child_pgid = 0;
	if (go[0] >= 0)
		close(go[0]);
	if (go[1] >= 0)
		close(go[1]);
	/* Whatever a ptebatch under the command changed goes back first. */
	if (lent) {
		taking_back = 1;
		if (thp_lock_take_back(&give_up_lent, why, sizeof(why))) {
			fail(o->err, "%s; a ptebatch the command started may"
			     " still change the THP settings", why);
			stale_ok = false;	/* its instance may be live */
		}
		taking_back = 0;
	}
	if (inst)
		tracefs_instance_free(inst);
	if (tracing_fd >= 0)
		remove_instance(name, o->err);
	if (applied) {
		/* Ours off first: the THP restore then puts back the originals. */
		for (i = 0; i < 3; i++)
			sigaction(stop_sigs[i], &old_stop[i], NULL);
		for (i = 0; i < 4; i++)
			sigaction(fatal_sigs[i], &old_fatal[i], NULL);
		thp_settings_restore();
	}
	if (cap.tep)
		tep_free(cap.tep);
	free(cap.pending);
	/* A nested recorder killed with SIGKILL left its instance. */
	if (tracing_fd >= 0 && stale_ok)
		remove_stale_instances();
	tracing_close(&t);
	thp_lock_drop();
	return ret;
}
