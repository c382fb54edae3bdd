// SPDX-License-Identifier: GPL-2.0-only
/*
 * qemu.c - the host's side of a guest: boot a built kernel under QEMU,
 * hand its agent one command at a time over the virtio-serial port, and
 * take it down.
 *
 * x86_64 guests boot with this machine's root file system read-only over
 * virtio-9p (so the guest runs the very ptebatch binary that booted it,
 * as its PID 1: vm/guest.c), an ext4 scratch disk on virtio-blk
 * for O_DIRECT files, and the port.  TCG, because KVM does not run a
 * guest here (this machine is itself a nested guest; a probe decides).
 * The kernel's console goes to a log file under the cache: kept and named
 * when the guest panics, hangs or dies, removed when it powers off as
 * asked.  Every file a boot makes is in one run directory, removed at
 * the end, on error and on SIGINT/SIGTERM/SIGHUP (which also stop QEMU).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/resignal.h"
#include "vm/proto.h"
#include "vm/vm.h"

extern char **environ;

/* Seconds a boot may take to reach the agent (TCG: a few seconds). */
#define VM_BOOT_TIMEOUT		300
#define VM_REQUEST_TIMEOUT	1800
#define SCRATCH_BYTES		(4ULL << 30)

struct vm_guest {
	struct vm_kernel kernel;
	bool kvm;		/* -accel kvm (the probe said it works) */
	bool icount;
	pid_t qemu;
	pid_t helper;		/* mkfs.ext4 while it runs, else 0 */
	int fd;			/* the port, connected */
	bool dead;
	char rundir[PATH_MAX];
	char sock[PATH_MAX + 32];
	char scratch[PATH_MAX + 32];
	char qemu_err[PATH_MAX + 32];
	char log[PATH_MAX + 64];
	unsigned int timeout;
};

/* The guest a signal must take down (one per process). */
static struct vm_guest *volatile signal_guest;
static struct sigaction old_actions[3];
static const int cleanup_signals[3] = { SIGINT, SIGTERM, SIGHUP };

/* Async-signal-safe: kill QEMU, remove the run directory's files. */
static void guest_remove_files(struct vm_guest *g)
{
	if (g->sock[0])
		unlink(g->sock);
	if (g->scratch[0])
		unlink(g->scratch);
	if (g->qemu_err[0])
		unlink(g->qemu_err);
	if (g->rundir[0])
		rmdir(g->rundir);
}

static void on_signal(int sig)
{
	struct vm_guest *g = signal_guest;
	int i;

	if (g) {
		if (g->qemu > 0)
			kill(g->qemu, SIGKILL);
		if (g->helper > 0)
			kill(g->helper, SIGKILL);
		guest_remove_files(g);
		if (g->log[0])
			unlink(g->log);
	}
	for (i = 0; i < 3; i++)
		if (cleanup_signals[i] == sig)
			resignal(sig, &old_actions[i]);
}

static void watch_signals(struct vm_guest *g)
{
	struct sigaction sa = { .sa_handler = on_signal };
	int i;

	signal_guest = g;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < 3; i++)
		sigaction(cleanup_signals[i], &sa, &old_actions[i]);
}

static void unwatch_signals(void)
{
	int i;

	for (i = 0; i < 3; i++)
		sigaction(cleanup_signals[i], &old_actions[i], NULL);
	signal_guest = NULL;
}

/* The last line of the console that says why a kernel stopped, if any. */
static void console_last_words(const char *log, char *buf, size_t size)
{
	static const char *const marks[] = {
		"Kernel panic", "BUG:", "Oops", "WARNING:", "emulation failure",
		NULL
	};
	char line[512];
	FILE *f = fopen(log, "re");
	long off;

	buf[0] = '\0';
	if (!f)
		return;
	/* The last 64K are enough: a panic is at the end. */
	if (fseek(f, 0, SEEK_END) == 0 && (off = ftell(f)) > 65536)
		fseek(f, off - 65536, SEEK_SET);
	else
		rewind(f);
	while (fgets(line, sizeof(line), f)) {
		int i;

		for (i = 0; marks[i]; i++) {
			if (strstr(line, marks[i])) {
				line[strcspn(line, "\r\n")] = '\0';
				snprintf(buf, size, "%.300s", line);
				break;
			}
		}
	}
	fclose(f);
}

static bool qemu_alive(void *arg)
{
	struct vm_guest *g = arg;
	int status;

	if (g->qemu <= 0)
		return false;
	if (waitpid(g->qemu, &status, WNOHANG) == g->qemu) {
		g->qemu = -1;
		return false;
	}
	return true;
}

/* Say why the guest is gone, kill it, keep the log. */
static void guest_failed(struct vm_guest *g, int err, const char *what,
			 char *why, size_t whylen)
{
	char words[400], qerr[400] = "";
	FILE *f;

	if (g->qemu > 0) {
		kill(g->qemu, SIGKILL);
		waitpid(g->qemu, NULL, 0);
		g->qemu = -1;
	}
	g->dead = true;
	console_last_words(g->log, words, sizeof(words));
	f = fopen(g->qemu_err, "re");
	if (f) {
		if (fgets(qerr, sizeof(qerr), f))
			qerr[strcspn(qerr, "\n")] = '\0';
		fclose(f);
	}
	snprintf(why, whylen, "the guest (kernel %s) %s %s%s%s%s%s: its "
		 "console log is kept in %s", g->kernel.name,
		 err == -ETIMEDOUT ? "hung (no answer in time) running" :
		 err == -EPIPE ? "stopped while running" :
				 "broke the protocol while running",
		 what, words[0] ? " (console: " : "", words,
		 words[0] ? ")" : "", qerr[0] ? qerr : "", g->log);
}

static int spawn(char *const argv[], const char *out_path, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	int err;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, out_path,
					 O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	err = posix_spawnp(pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	return err;
}

/*
 * QEMU, dying with us: a SIGKILL of ptebatch (which no handler sees) must
 * not leave a guest running.  So not posix_spawn(): the child asks for
 * PR_SET_PDEATHSIG before it execs; an exec that fails says why through
 * a close-on-exec pipe.  0 or a positive errno.
 */
static int spawn_qemu(char *const argv[], const char *out_path, pid_t *pid)
{
	pid_t parent = getpid();
	int p[2], err = 0;
	ssize_t n;

	if (pipe2(p, O_CLOEXEC))
		return errno;
	*pid = fork();
	if (*pid < 0) {
		err = errno;
		close(p[0]);
		close(p[1]);
		return err;
	}
	if (*pid == 0) {
		int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			       0600);
		int in = open("/dev/null", O_RDONLY | O_CLOEXEC);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		signal(SIGPIPE, SIG_DFL);
		if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 ||
		    dup2(out, 2) < 0)
			err = errno;
		else
			execvp(argv[0], argv);
		err = err ? err : errno;
		(void)!write(p[1], &err, sizeof(err));
		_exit(127);
	}
	close(p[1]);
	while ((n = read(p[0], &err, sizeof(err))) < 0 && errno == EINTR)
		;
	close(p[0]);
	if (n == sizeof(err)) {
		waitpid(*pid, NULL, 0);
		*pid = -1;
		return err;
	}
	return 0;
}

/*
 * Run directories of boots whose ptebatch is gone (SIGKILL: no handler
 * ran): boot-PID-XXXXXX with no process PID.  Their files are ours, the
 * three a boot makes; anything else keeps the directory.
 */
static void remove_stale_runs(const char *run)
{
	static const char *const files[] = { "agent.sock", "scratch.img",
					     "qemu.out" };
	DIR *d = opendir(run);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char path[PATH_MAX + 300];
		long pid;
		size_t i;

		if (strncmp(e->d_name, "boot-", 5))
			continue;
		pid = strtol(e->d_name + 5, NULL, 10);
		if (pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
			snprintf(path, sizeof(path), "%.200s/%.64s/%s", run,
				 e->d_name, files[i]);
			unlink(path);
		}
		snprintf(path, sizeof(path), "%.200s/%.64s", run, e->d_name);
		rmdir(path);
	}
	if (d)
		closedir(d);
}

/* A sparse file made ext4, for the guest's O_DIRECT files and swap. */
static int make_scratch(struct vm_guest *g, char *why, size_t whylen)
{
	char *argv[] = { "mkfs.ext4", "-q", "-F", "-m", "0", g->scratch,
			 NULL };
	int fd = open(g->scratch, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
		      0600), status;
	pid_t pid;

	if (fd < 0 || ftruncate(fd, (off_t)SCRATCH_BYTES)) {
		snprintf(why, whylen, "cannot make the scratch disk %s: %s",
			 g->scratch, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	if (spawn(argv, g->qemu_err, &pid)) {
		snprintf(why, whylen, "cannot run mkfs.ext4 (Debian: apt-get "
			 "install e2fsprogs)");
		return -1;
	}
	g->helper = pid;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	g->helper = 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		snprintf(why, whylen, "mkfs.ext4 %s failed (Debian: apt-get "
			 "install e2fsprogs)", g->scratch);
		return -1;
	}
	return 0;
}

static int listen_agent(struct vm_guest *g, char *why, size_t whylen)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(g->sock) >= sizeof(a.sun_path)) {
		snprintf(why, whylen, "the cache's path is too long for a "
			 "socket: %s", g->sock);
		return -1;
	}
	strcpy(a.sun_path, g->sock);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(fd, 1)) {
		snprintf(why, whylen, "cannot listen on %s: %s", g->sock,
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* QEMU's command line for @g's kernel, into @argv (strings in @buf). */
static void qemu_command(const struct vm_guest *g,
			 const struct vm_boot_options *o, const char *init,
			 bool shell, char *argv[], int max, char bufs[][PATH_MAX + 512])
{
	int n = 0, b = 0;
	bool arm = !strcmp(g->kernel.arch, "arm64");

#define ARG(s) do { if (n < max - 1) argv[n++] = (char *)(s); } while (0)
#define FMT(...) do { snprintf(bufs[b], sizeof(bufs[b]), __VA_ARGS__); \
		      ARG(bufs[b]); b++; } while (0)
	ARG(arm ? "qemu-system-aarch64" : "qemu-system-x86_64");
	if (arm) {
		ARG("-M");
		ARG("virt");
		ARG("-cpu");
		ARG("max,pauth-impdef=on");
	} else {
		ARG("-cpu");
		ARG(g->kvm ? "host" : "max");
	}
	ARG("-accel");
	ARG(g->kvm ? "kvm" : "tcg");
	ARG("-smp");
	FMT("%d", o->cpus > 0 ? o->cpus : 1);
	ARG("-m");
	FMT("%lu", o->mem_mb ? o->mem_mb : 4096);
	if (o->icount) {
		ARG("-icount");
		ARG("shift=0,sleep=off");
	}
	ARG("-nodefaults");
	ARG("-no-user-config");
	ARG("-display");
	ARG("none");
	ARG("-no-reboot");
	ARG("-kernel");
	ARG(g->kernel.image);
	ARG("-append");
	if (arm) {
		/* ptebatch for arm64 (static) is the initramfs's /init; the
		 * host's root is still shared, at /host, for its files. */
		FMT("console=ttyAMA0 rdinit=/init panic=-1 nokaslr loglevel=4 "
		    "PTEBATCH_VM=%s", shell ? "shell" : "agent");
		ARG("-initrd");
		ARG(init);
	} else {
		FMT("console=ttyS0 root=/dev/root rootfstype=9p "
		    "rootflags=trans=virtio,version=9p2000.L,msize=512000 ro "
		    "init=%s panic=-1 no5lvl nokaslr loglevel=4 PTEBATCH_VM=%s",
		    init, shell ? "shell" : "agent");
	}
	if (shell) {
		ARG("-serial");
		ARG("mon:stdio");
	} else {
		ARG("-chardev");
		FMT("file,id=con,path=%s", g->log);
		ARG("-serial");
		ARG("chardev:con");
	}
	ARG("-fsdev");
	ARG("local,id=root,path=/,security_model=none,readonly=on,"
	    "multidevs=remap");
	ARG("-device");
	ARG(arm ? "virtio-9p-pci,fsdev=root,mount_tag=hostroot" :
		  "virtio-9p-pci,fsdev=root,mount_tag=/dev/root");
	ARG("-drive");
	FMT("file=%s,if=none,id=scratch,format=raw,cache=unsafe", g->scratch);
	ARG("-device");
	ARG("virtio-blk-pci,drive=scratch");
	if (!shell) {
		ARG("-device");
		ARG("virtio-serial-pci");
		ARG("-chardev");
		FMT("socket,id=agent,path=%s", g->sock);
		ARG("-device");
		ARG("virtserialport,chardev=agent,name=" VM_AGENT_PORT);
	}
	argv[n] = NULL;
#undef ARG
#undef FMT
}

/* The run directory and the log's path; 0 or -1 with @why. */
static int guest_paths(struct vm_guest *g, char *why, size_t whylen)
{
	char cache[PATH_MAX], stamp[32];
	time_t t = time(NULL);
	struct tm tm;

	/* Room for what goes under it, and a socket's 108 bytes. */
	if (vm_cache_dir(cache, sizeof(cache)) || strlen(cache) > 60) {
		snprintf(why, whylen, "the cache directory's path is too long "
			 "for QEMU's socket (60 bytes at most; set "
			 "PTEBATCH_CACHE)");
		return -1;
	}
	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	snprintf(g->log, sizeof(g->log), "%.60s/logs", cache);
	if (mkdir(cache, 0700) && errno != EEXIST)
		goto fail;
	if (mkdir(g->log, 0700) && errno != EEXIST)
		goto fail;
	snprintf(g->log, sizeof(g->log), "%.60s/logs/%.127s-%.20s-%d.console",
		 cache, g->kernel.name, stamp, (int)getpid());
	snprintf(g->rundir, sizeof(g->rundir), "%.60s/run", cache);
	if (mkdir(g->rundir, 0700) && errno != EEXIST)
		goto fail;
	remove_stale_runs(g->rundir);
	snprintf(g->rundir, sizeof(g->rundir), "%.60s/run/boot-%d-XXXXXX",
		 cache, (int)getpid());
	if (!mkdtemp(g->rundir)) {
		g->rundir[0] = '\0';
		goto fail;
	}
	snprintf(g->sock, sizeof(g->sock), "%.100s/agent.sock", g->rundir);
	snprintf(g->scratch, sizeof(g->scratch), "%.100s/scratch.img", g->rundir);
	snprintf(g->qemu_err, sizeof(g->qemu_err), "%.100s/qemu.out", g->rundir);
	return 0;
fail:
	snprintf(why, whylen, "cannot make %s: %s", g->log, strerror(errno));
	return -1;
}

/*
 * A request's time limit: the option, else $PTEBATCH_VM_TIMEOUT (seconds,
 * digits only; anything else is said and ignored), else the default.
 */
/*
 * An arm64 guest's root: the initramfs scripts/arm64-initramfs makes in
 * the cache, whose /init is ptebatch built for arm64 with the kernel's
 * page size (make cross-arm64).
 */
static int arm64_initramfs(const struct vm_kernel *k, char *buf, size_t size,
			   char *why, size_t whylen)
{
	char cache[PATH_MAX];

	if (vm_cache_dir(cache, sizeof(cache)) ||
	    snprintf(buf, size, "%.200s/initramfs/arm64-%s.cpio.gz", cache,
		     k->granule) >= (int)size)
		return -1;
	if (access(buf, R_OK)) {
		snprintf(why, whylen, "kernel %s: no arm64 root %s (make "
			 "cross-arm64 makes it)", k->name, buf);
		return -1;
	}
	return 0;
}

/*
 * Does KVM run a guest here?  /dev/kvm may open and still fail: on a
 * machine that is itself a nested guest a stock kernel stops at once
 * with "emulation failure".  So the probe boots @image with KVM and no
 * root, and KVM works if the kernel got as far as panicking for want
 * of one.  The answer is kept in the cache per host kernel release;
 * PTEBATCH_VM_ACCEL=tcg or kvm decides instead.
 */
static bool kvm_works(const char *image, const char *rundir)
{
	const char *force = getenv("PTEBATCH_VM_ACCEL");
	char cache[PATH_MAX], path[PATH_MAX + 32], log[PATH_MAX + 32];
	char line[256], want[128], *argv[24];
	struct utsname u;
	bool ok = false;
	int fd, i, status;
	FILE *f;
	pid_t pid;

	if (force && !strcmp(force, "tcg"))
		return false;
	if (force && !strcmp(force, "kvm"))
		return true;
	fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return false;
	close(fd);
	uname(&u);
	snprintf(want, sizeof(want), "%.64s ", u.release);
	if (vm_cache_dir(cache, sizeof(cache)))
		return false;
	snprintf(path, sizeof(path), "%.200s/kvm-probe", cache);
	f = fopen(path, "re");
	if (f) {
		bool known = fgets(line, sizeof(line), f) &&
			     !strncmp(line, want, strlen(want));

		fclose(f);
		if (known)
			return !strncmp(line + strlen(want), "yes", 3);
	}
	snprintf(log, sizeof(log), "%.200s/kvm-probe.console", rundir);
	i = 0;
	argv[i++] = "qemu-system-x86_64";
	argv[i++] = "-accel";
	argv[i++] = "kvm";
	argv[i++] = "-cpu";
	argv[i++] = "host";
	argv[i++] = "-m";
	argv[i++] = "256";
	argv[i++] = "-nodefaults";
	argv[i++] = "-display";
	argv[i++] = "none";
	argv[i++] = "-no-reboot";
	argv[i++] = "-serial";
	snprintf(line, sizeof(line), "file:%.200s", log);
	argv[i++] = line;
	argv[i++] = "-kernel";
	argv[i++] = (char *)image;
	argv[i++] = "-append";
	argv[i++] = "console=ttyS0 panic=-1 root=/dev/ptebatch-none";
	argv[i] = NULL;
	if (spawn(argv, "/dev/null", &pid) == 0) {
		for (i = 0; i < 600; i++) {
			if (waitpid(pid, &status, WNOHANG) == pid)
				break;
			usleep(100 * 1000);
		}
		if (i == 600) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
		}
		f = fopen(log, "re");
		while (f && fgets(line, sizeof(line), f))
			if (strstr(line, "Kernel panic") ||
			    strstr(line, "VFS: Unable to mount root"))
				ok = true;
		if (f)
			fclose(f);
	}
	unlink(log);
	f = fopen(path, "we");
	if (f) {
		fprintf(f, "%s%s (probed by booting %s with -accel kvm)\n",
			want, ok ? "yes" : "no", image);
		fclose(f);
	}
	return ok;
}

static unsigned int request_timeout(const struct vm_boot_options *o)
{
	const char *env = getenv("PTEBATCH_VM_TIMEOUT");

	if (o->request_timeout)
		return o->request_timeout;
	if (env && *env) {
		size_t n = strspn(env, "0123456789");

		if (!env[n] && n <= 6 && atoi(env) > 0)
			return (unsigned int)atoi(env);
		fprintf(stderr, "ptebatch: PTEBATCH_VM_TIMEOUT='%s' is not "
			"1 to 999999 seconds: %d s\n", env, VM_REQUEST_TIMEOUT);
	}
	return VM_REQUEST_TIMEOUT;
}

static int self_path(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);

	if (n < 0 || (size_t)n >= size - 1)
		return -1;
	buf[n] = '\0';
	/* The kernel command line ends a word at a space. */
	return strpbrk(buf, " \t\n") ? -1 : 0;
}

struct vm_guest *vm_boot(const struct vm_kernel *k,
			 const struct vm_boot_options *o, char *why,
			 size_t whylen)
{
	char init[PATH_MAX], *argv[64], bufs[12][PATH_MAX + 512];
	struct vm_guest *g = calloc(1, sizeof(*g));
	struct vm_chan c;
	int lfd = -1, err;
	char magic[VM_MAGIC_LEN + 1], *release = NULL;

	if (!g) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	g->kernel = *k;
	g->fd = -1;
	g->timeout = request_timeout(o);
	if (!strcmp(k->arch, "arm64")) {
		if (arm64_initramfs(k, init, sizeof(init), why, whylen)) {
			free(g);
			return NULL;
		}
	} else if (self_path(init, sizeof(init))) {
		snprintf(why, whylen, "cannot tell this program's path (or it "
			 "has a space, which a kernel command line cannot "
			 "carry)");
		free(g);
		return NULL;
	}
	if (guest_paths(g, why, whylen)) {
		free(g);
		return NULL;
	}
	watch_signals(g);
	/* icount is TCG's: the guest's clock counts its instructions. */
	g->icount = o->icount;
	g->kvm = !o->icount && !strcmp(k->arch, "x86_64") &&
		 kvm_works(k->image, g->rundir);
	if (make_scratch(g, why, whylen))
		goto fail;
	lfd = listen_agent(g, why, whylen);
	if (lfd < 0)
		goto fail;
	qemu_command(g, o, init, false, argv, 64, bufs);
	err = spawn_qemu(argv, g->qemu_err, &g->qemu);
	if (err) {
		snprintf(why, whylen, "cannot run %s: %s (Debian: apt-get "
			 "install qemu-system-x86)", argv[0], strerror(err));
		g->qemu = -1;
		goto fail;
	}
	/* QEMU connects to the socket as it starts. */
	for (;;) {
		struct pollfd p = { .fd = lfd, .events = POLLIN };

		if (poll(&p, 1, 1000) > 0)
			break;
		if (!qemu_alive(g)) {
			guest_failed(g, -EPIPE, "its boot", why, whylen);
			goto fail_keep_log;
		}
	}
	g->fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	close(lfd);
	lfd = -1;
	if (g->fd < 0) {
		snprintf(why, whylen, "accept: %s", strerror(errno));
		goto fail;
	}
	c = (struct vm_chan){ .fd = g->fd, .alive = qemu_alive, .arg = g };
	c.deadline_ms = 0;
	{
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		c.deadline_ms = ts.tv_sec * 1000LL + ts.tv_nsec / 1000000 +
				VM_BOOT_TIMEOUT * 1000LL;
	}
	err = vm_read_magic(&c, magic);
	if (!err && strcmp(magic, VM_MAGIC_UP))
		err = -EPROTO;
	if (!err)
		err = vm_read_up(&c, &release);
	free(release);
	if (err) {
		guest_failed(g, err, "its boot", why, whylen);
		goto fail_keep_log;
	}
	return g;

fail:
	if (lfd >= 0)
		close(lfd);
	vm_shutdown(g, false);
	return NULL;
fail_keep_log:
	if (lfd >= 0)
		close(lfd);
	vm_shutdown(g, true);
	return NULL;
}

void vm_result_free(struct vm_result *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
}

int vm_exec(struct vm_guest *g, char *const argv[], const char *cwd,
	    const void *in, size_t in_len, const char *what,
	    struct vm_result *r, char *why, size_t whylen)
{
	struct vm_chan c = { .fd = g->fd, .alive = qemu_alive, .arg = g };
	char magic[VM_MAGIC_LEN + 1];
	struct timespec ts;
	int err;

	memset(r, 0, sizeof(*r));
	if (g->dead) {
		snprintf(why, whylen, "the guest (kernel %s) is gone; its "
			 "console log is kept in %s", g->kernel.name, g->log);
		return -1;
	}
	err = vm_send_request(g->fd, argv, cwd, in, in_len);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	c.deadline_ms = ts.tv_sec * 1000LL + ts.tv_nsec / 1000000 +
			g->timeout * 1000LL;
	if (!err)
		err = vm_read_magic(&c, magic);
	if (!err && strcmp(magic, VM_MAGIC_RESULT))
		err = -EPROTO;
	if (!err)
		err = vm_read_result(&c, &r->status, &r->out, &r->out_len,
				     &r->err, &r->err_len);
	if (err) {
		guest_failed(g, err, what, why, whylen);
		return -1;
	}
	return 0;
}

const struct vm_kernel *vm_guest_kernel(const struct vm_guest *g)
{
	return &g->kernel;
}

const char *vm_guest_accel(const struct vm_guest *g)
{
	return g->kvm ? "KVM" : g->icount ? "TCG, icount" : "TCG";
}

void vm_shutdown(struct vm_guest *g, bool keep_log)
{
	if (!g)
		return;
	if (g->qemu > 0 && g->fd >= 0 && !g->dead) {
		/* Asked: the agent syncs and powers off; give it 30 s. */
		int i;

		vm_send_quit(g->fd);
		for (i = 0; i < 300 && qemu_alive(g); i++)
			usleep(100 * 1000);
	}
	if (g->qemu > 0) {
		kill(g->qemu, SIGKILL);
		waitpid(g->qemu, NULL, 0);
		g->qemu = -1;
	}
	if (g->fd >= 0)
		close(g->fd);
	guest_remove_files(g);
	/*
	 * A kernel of ours runs with DEBUG_VM and PAGE_TABLE_CHECK: a
	 * warning or BUG it logged is news, even when every result came.
	 */
	if (!g->dead && g->log[0]) {
		char words[400];

		console_last_words(g->log, words, sizeof(words));
		if (words[0]) {
			fprintf(stderr, "ptebatch: vm: the guest's kernel (%s) "
				"logged: %s (its console log is kept in %s)\n",
				g->kernel.name, words, g->log);
			keep_log = true;
		}
	}
	if (!keep_log && !g->dead && g->log[0])
		unlink(g->log);
	if (signal_guest == g)
		unwatch_signals();
	free(g);
}

int vm_shell(const struct vm_kernel *k, const struct vm_boot_options *o)
{
	char init[PATH_MAX], *argv[64], bufs[12][PATH_MAX + 512];
	struct vm_guest *g = calloc(1, sizeof(*g));
	char why[1024];
	int status = 1;
	pid_t pid;

	if (!g)
		return 1;
	g->kernel = *k;
	g->fd = -1;
	if (self_path(init, sizeof(init)) || guest_paths(g, why, sizeof(why)) ||
	    (watch_signals(g), make_scratch(g, why, sizeof(why)))) {
		fprintf(stderr, "ptebatch: vm shell: %s\n", why);
		vm_shutdown(g, false);
		return 1;
	}
	qemu_command(g, o, init, true, argv, 64, bufs);
	/* The console is this terminal: QEMU inherits it. */
	if (posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ) == 0) {
		g->qemu = pid;
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		g->qemu = -1;
		status = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	} else {
		fprintf(stderr, "ptebatch: vm shell: cannot run %s\n", argv[0]);
	}
	vm_shutdown(g, false);
	return status;
}
