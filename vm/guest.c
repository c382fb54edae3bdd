// SPDX-License-Identifier: GPL-2.0-only
/*
 * guest.c - PID 1 of a ptebatch guest, started by the kernel
 * (init=PTEBATCH PTEBATCH_VM=agent) from the host's root file system,
 * read-only over 9p.  It makes what a distribution's init would make for
 * the kernel backend (proc, sysfs, devtmpfs and /dev's links, tmpfs on
 * /run, /dev/shm and /tmp, the scratch disk on /var/tmp, tracefs,
 * debugfs), then serves the host: each request is one `ptebatch ...` run
 * of this same binary, its stdin given, its stdout, stderr and status
 * sent back over the virtio-serial port.  On the host's quit, or if
 * anything goes wrong, it powers the guest off: PID 1 must never exit.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vm/proto.h"
#include "vm/vm.h"

static void say(const char *fmt, const char *arg)
{
	fprintf(stderr, "ptebatch-init: ");
	fprintf(stderr, fmt, arg, strerror(errno));
	fputc('\n', stderr);
}

static void mount_one(const char *src, const char *dir, const char *type,
		      const char *opts)
{
	mkdir(dir, 0755);
	if (mount(src, dir, type, MS_NOSUID, opts) && errno != EBUSY)
		say("mount %s: %s", dir);
}

/* /tmp: the host's (read-only, over 9p) under a tmpfs, or a tmpfs. */
static void mount_tmp(void)
{
	mount_one("tmp", "/run/.tmp", "tmpfs", "mode=0755");
	mkdir("/run/.tmp/upper", 01777);
	mkdir("/run/.tmp/work", 0755);
	if (mount("overlay", "/tmp", "overlay", 0,
		  "lowerdir=/tmp,upperdir=/run/.tmp/upper,"
		  "workdir=/run/.tmp/work") == 0) {
		chmod("/tmp", 01777);
		return;
	}
	mount_one("tmp", "/tmp", "tmpfs", "mode=1777");
}

static void make_dev_links(void)
{
	static const char *const links[][2] = {
		{ "/proc/self/fd", "/dev/fd" },
		{ "/proc/self/fd/0", "/dev/stdin" },
		{ "/proc/self/fd/1", "/dev/stdout" },
		{ "/proc/self/fd/2", "/dev/stderr" },
	};
	size_t i;

	for (i = 0; i < sizeof(links) / sizeof(links[0]); i++)
		symlink(links[i][0], links[i][1]);
}

static void guest_mounts(void)
{
	mount_one("proc", "/proc", "proc", NULL);
	mount_one("sysfs", "/sys", "sysfs", NULL);
	mount_one("devtmpfs", "/dev", "devtmpfs", NULL);
	mount_one("devpts", "/dev/pts", "devpts", "gid=5,mode=620");
	mount_one("shm", "/dev/shm", "tmpfs", "mode=1777");
	make_dev_links();
	mount_one("run", "/run", "tmpfs", "mode=0755");
	mkdir("/run/lock", 01777);
	mount_tmp();
	/* The scratch disk (ext4, made by the host) for O_DIRECT files. */
	if (mount("/dev/vda", "/var/tmp", "ext4", MS_NOSUID, NULL))
		mount_one("vartmp", "/var/tmp", "tmpfs", "mode=1777");
	else
		chmod("/var/tmp", 01777);
	/* An arm64 guest's root is an initramfs: the host's is at /host. */
	mkdir("/host", 0755);
	if (mount("hostroot", "/host", "9p", MS_RDONLY,
		  "trans=virtio,version=9p2000.L,msize=512000"))
		rmdir("/host");
	mount_one("tracefs", "/sys/kernel/tracing", "tracefs", NULL);
	mount_one("debugfs", "/sys/kernel/debug", "debugfs", NULL);
	setenv("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:"
	       "/sbin:/bin", 1);
	setenv("HOME", "/root", 1);
	setenv("LC_ALL", "C", 1);
}

/*
 * This binary, copied to the guest's /run: every request runs the copy,
 * so rebuilding ptebatch on the host (which the guest sees over 9p)
 * while a guest runs changes nothing in it.
 */
#define GUEST_SELF "/run/ptebatch"
static void copy_self(void)
{
	int in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	int out = open(GUEST_SELF, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		       0755);
	char buf[65536];
	ssize_t n = 0;

	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			n = -1;
			break;
		}
	if (in < 0 || out < 0 || n < 0) {
		say("copy to %s: %s", GUEST_SELF);
		unlink(GUEST_SELF);
	}
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
}

/* /dev/vportNpM whose name is ours; waits for it a few seconds. */
static int open_port(void)
{
	int tries;

	for (tries = 0; tries < 100; tries++) {
		DIR *d = opendir("/sys/class/virtio-ports");
		struct dirent *e;

		while (d && (e = readdir(d))) {
			char path[PATH_MAX], name[128] = "";
			FILE *f;

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path),
				 "/sys/class/virtio-ports/%s/name", e->d_name);
			f = fopen(path, "re");
			if (!f)
				continue;
			if (!fgets(name, sizeof(name), f))
				name[0] = '\0';
			fclose(f);
			name[strcspn(name, "\n")] = '\0';
			if (!strcmp(name, VM_AGENT_PORT)) {
				int fd;

				snprintf(path, sizeof(path), "/dev/%s",
					 e->d_name);
				closedir(d);
				fd = open(path, O_RDWR | O_CLOEXEC);
				if (fd < 0)
					say("open %s: %s", path);
				return fd;
			}
		}
		if (d)
			closedir(d);
		usleep(100 * 1000);
	}
	errno = ENOENT;
	say("no virtio port named %s: %s", VM_AGENT_PORT);
	return -1;
}

/* The whole of a memfd, NUL-terminated, malloc'd. */
static char *read_back(int fd, size_t *len)
{
	off_t end = lseek(fd, 0, SEEK_END);
	size_t got = 0;
	char *buf;

	if (end < 0)
		end = 0;
	buf = malloc((size_t)end + 1);
	if (!buf)
		return NULL;
	while (got < (size_t)end) {
		ssize_t n = pread(fd, buf + got, (size_t)end - got, (off_t)got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	*len = got;
	return buf;
}

/* Wait for @pid, reaping whatever else was left to PID 1 meanwhile. */
static int wait_child(pid_t pid)
{
	int status;

	for (;;) {
		pid_t p = waitpid(-1, &status, 0);

		if (p == pid)
			return status;
		if (p < 0 && errno != EINTR)
			return -1;
	}
}

/* Run one request: `ptebatch ARGV[1]...` of this binary. */
static int serve_request(int port, struct vm_request *r)
{
	int in = memfd_create("stdin", MFD_CLOEXEC);
	int out = memfd_create("stdout", MFD_CLOEXEC);
	int err = memfd_create("stderr", MFD_CLOEXEC);
	char *obuf = NULL, *ebuf = NULL;
	size_t olen = 0, elen = 0;
	int status = 127 << 8, ret;
	pid_t pid;

	if (in < 0 || out < 0 || err < 0 ||
	    (r->in_len && write(in, r->in, r->in_len) != (ssize_t)r->in_len) ||
	    lseek(in, 0, SEEK_SET)) {
		ret = vm_send_result(port, 126 << 8, "", 0,
				     "ptebatch-init: cannot set up the run\n",
				     38);
		goto out;
	}
	pid = fork();
	if (pid == 0) {
		setsid();
		dup2(in, 0);
		dup2(out, 1);
		dup2(err, 2);
		if (chdir(r->cwd)) {
			char host[PATH_MAX + 8];

			snprintf(host, sizeof(host), "/host%s", r->cwd);
			if (chdir(host))
				(void)!chdir("/");
		}
		execv(GUEST_SELF, r->argv);
		execv("/proc/self/exe", r->argv);
		dprintf(2, "ptebatch-init: exec: %s\n", strerror(errno));
		_exit(127);
	}
	if (pid > 0)
		status = wait_child(pid);
	obuf = read_back(out, &olen);
	ebuf = read_back(err, &elen);
	ret = vm_send_result(port, status, obuf, obuf ? olen : 0, ebuf,
			     ebuf ? elen : 0);
out:
	free(obuf);
	free(ebuf);
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	if (err >= 0)
		close(err);
	return ret;
}

static void serve(int port)
{
	struct vm_chan c = { .fd = port };
	struct utsname u;

	uname(&u);
	if (vm_send_up(port, u.release))
		return;
	for (;;) {
		char magic[VM_MAGIC_LEN + 1];
		struct vm_request r;

		if (vm_read_magic(&c, magic) || !strcmp(magic, VM_MAGIC_QUIT))
			return;
		if (strcmp(magic, VM_MAGIC_REQUEST) || vm_read_request(&c, &r))
			return;
		if (r.argv[0] == NULL) {
			vm_request_free(&r);
			return;
		}
		if (serve_request(port, &r)) {
			vm_request_free(&r);
			return;
		}
		vm_request_free(&r);
	}
}

/* A shell on the serial console, its controlling terminal. */
static void shell(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		int tty;

		setsid();
		tty = open("/dev/ttyS0", O_RDWR);
		if (tty < 0)
			tty = open("/dev/ttyAMA0", O_RDWR);
		if (tty >= 0) {
			dup2(tty, 0);
			dup2(tty, 1);
			dup2(tty, 2);
		}
		execl("/bin/bash", "bash", "-i", (char *)NULL);
		execl("/bin/sh", "sh", "-i", (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		wait_child(pid);
}

/*
 * khugepaged, left to itself, collapses a scenario's PTE-mapped range
 * into a PMD THP now and then, which the kernel backend can only SKIP
 * (the model has no khugepaged).  It sleeps between passes only while
 * some mm is on its list; with the list empty, the next MADV_HUGEPAGE
 * (a scenario's) wakes it to scan at once.  So PID 1 puts its own mm on
 * the list for good (an untouched MADV_HUGEPAGE mapping: nothing to
 * collapse) and then sets the interval, which makes khugepaged scan now,
 * find nothing, and sleep for 49 days.  Like DAMON's absence from the
 * configuration, it takes away a source of runs that differ, nothing a
 * scenario asks of the kernel; a test that wants khugepaged (the
 * selftests' khugepaged) sets its own interval.
 */
static void quiet_khugepaged(void)
{
	static const char path[] =
		"/sys/kernel/mm/transparent_hugepage/khugepaged/"
		"scan_sleep_millisecs";
	static const char forever[] = "4294967295";
	const size_t len = 4UL << 20;	/* holds an aligned PMD anywhere */
	void *keep = mmap(NULL, len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd;

	if (keep == MAP_FAILED || madvise(keep, len, MADV_HUGEPAGE))
		say("cannot keep khugepaged's list (%s): %s", "MADV_HUGEPAGE");
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, forever, sizeof(forever) - 1) < 0)
		say("cannot quiet khugepaged (%s): %s", path);
	if (fd >= 0)
		close(fd);
}

int vm_guest_init(const char *mode)
{
	bool want_shell = !strcmp(mode, "shell");

	guest_mounts();
	copy_self();
	if (want_shell) {
		fprintf(stderr, "ptebatch guest: exit the shell to power off\n");
		shell();
	} else {
		int port;

		quiet_khugepaged();
		port = open_port();

		if (port >= 0)
			serve(port);
	}
	sync();
	reboot(RB_POWER_OFF);
	for (;;)
		pause();
}
