/*
 * trace.c - the recorder's capture: a tracefs instance of our own (its
 * buffers, events, pid filter and clock are private to it, so the rest of
 * the machine's tracing is untouched), following the command's process
 * tree from before its execve, drained while it runs, read with
 * libtracefs and decoded with libtraceevent.
 */
#include <dirent.h>
#include <fcntl.h>
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
static volatile pid_t child_pgid;
static char instance_dir[256];
static volatile sig_atomic_t mounted_here;	/* tracefs: we mounted it */

/* The first asks the command to end; a second one insists. */
static void on_stop_signal(int sig)
{
	int again = stop_signal != 0;

	stop_signal = sig;
	if (child_pgid > 0)
		kill(-child_pgid, again ? SIGKILL : SIGTERM);
}

/*
 * A fault in the recorder itself: the instance goes (rmdir is
 * async-signal-safe and the kernel disables its events), the THP
 * settings come back, the output files' temporaries go (lib/outfile.h),
 * and the signal does what it would have done.
 */
static void on_fatal_signal(int sig)
{
	outfile_remove_temporaries();
	if (child_pgid > 0)
		kill(-child_pgid, SIGKILL);
	if (instance_dir[0])
		rmdir(instance_dir);
	if (mounted_here)
		umount2(TRACEFS_PATH, MNT_DETACH);
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

/* Instances left by a recorder that died without cleaning up. */
static void remove_stale_instances(void)
{
	char path[512];
	struct dirent *de;
	DIR *d = opendir(TRACEFS_PATH "/instances");

	if (!d)
		return;
	while ((de = readdir(d))) {
		long pid;
		char *end;

		if (strncmp(de->d_name, INSTANCE_PREFIX, strlen(INSTANCE_PREFIX)))
			continue;
		pid = strtol(de->d_name + strlen(INSTANCE_PREFIX), &end, 10);
		if (*end || pid <= 0 || !kill((pid_t)pid, 0) || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), TRACEFS_PATH "/instances/%s",
			 de->d_name);
		rmdir(path);
	}
	closedir(d);
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
			    instance_dir, file);
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
	static const char *const systems[] = { "exceptions", "syscalls", "task",
					       "sched", NULL };
	static const int stop_sigs[] = { SIGINT, SIGTERM, SIGHUP };
	static const int fatal_sigs[] = { SIGSEGV, SIGBUS, SIGABRT, SIGQUIT };
	struct sigaction old_stop[3], old_fatal[4];
	struct capture cap = { 0 };
	struct tracefs_instance *inst = NULL;
	struct stat st;
	char why[256], name[64], value[64];
	int go[2] = { -1, -1 }, ret = -1, i, status;
	bool mounted = false, applied = false, waited = false;
	pid_t child = -1;

	memset(res, 0, sizeof(*res));
	cap.s = s;
	stop_signal = 0;
	if (stat(TRACEFS_PATH "/events", &st)) {
		if (mount("nodev", TRACEFS_PATH, "tracefs", 0, NULL))
			return fail(o->err, "cannot mount tracefs on %s: %s",
				    TRACEFS_PATH, strerror(errno));
		mounted = true;
		mounted_here = 1;
		fprintf(o->err, "ptebatch: record: mounted tracefs on %s (it"
			" is unmounted again at the end)\n", TRACEFS_PATH);
	}
	remove_stale_instances();
	cap.pending = calloc(PENDING_SLOTS, sizeof(*cap.pending));
	cap.tep = tracefs_local_events_system(TRACEFS_PATH, systems);
	if (!cap.pending || !cap.tep) {
		fail(o->err, "cannot read the event formats under %s",
		     TRACEFS_PATH "/events");
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
	snprintf(instance_dir, sizeof(instance_dir),
		 TRACEFS_PATH "/instances/%s", name);
	inst = tracefs_instance_create(name);
	if (!inst) {
		instance_dir[0] = '\0';
		fail(o->err, "cannot create the tracefs instance %s: %s", name,
		     strerror(errno));
		goto out;
	}
	res->buffer_kb = o->buffer_kb ? o->buffer_kb : DEFAULT_BUFFER_KB;
	snprintf(value, sizeof(value), "%lu", res->buffer_kb);
	if (write_file(inst, "buffer_size_kb", value, o->err) ||
	    write_file(inst, "trace_clock", "mono", o->err) ||
	    write_file(inst, "tracing_on", "0", o->err))
		goto out;

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
	if (inst) {
		tracefs_instance_destroy(inst);
		tracefs_instance_free(inst);
	}
	instance_dir[0] = '\0';
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
	if (mounted) {
		umount(TRACEFS_PATH);
		mounted_here = 0;
	}
	return ret;
}
