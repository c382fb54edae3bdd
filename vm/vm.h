/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vm/ - kernels of our own: the built ones in the cache (kernels.c), a
 * guest of one booted under QEMU that runs ptebatch's kernel backend for
 * us (qemu.c, the host's side), and what runs inside it (guest.c: PID 1
 * and the agent), talking over one virtio-serial port (proto.c).
 *
 * The console (the kernel's log) goes to a file; requests and results go
 * over the port, so a kernel message can never be read as a result.
 */
#ifndef PTEBATCH_VM_H
#define PTEBATCH_VM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A kernel built into the cache by scripts/kernel-build. */
struct vm_kernel {
	char name[128];		/* the cache directory's name */
	char dir[4096];		/* its path */
	char image[4096];	/* the bootable image's path */
	char version[32];	/* "7.3.4" */
	char arch[16];		/* "x86_64" or "arm64" */
	char granule[8];	/* "4k", "16k", "64k" */
	char patches[4096];	/* the series' directory, "" for none */
	char built[32];		/* when, UTC */
	long build_seconds;
};

/* The cache: ${PTEBATCH_CACHE:-$HOME/.cache/ptebatch}. */
int vm_cache_dir(char *buf, size_t size);

/*
 * The built kernels, newest first, into a malloc'd array (*@out, free()
 * it); their number, or -1 with errno.
 */
int vm_kernels_list(struct vm_kernel **out);

/*
 * The kernel @spec names: a cache name, or "7.3", "7.3+seeds",
 * "7.3-arm64-4k", "7.3+seeds-arm64-64k" (version prefix, patch series,
 * arch and granule; x86_64 and 4k when not said; the newest build of
 * what matches); NULL or "" is "the newest unpatched kernel of this
 * machine's architecture".  0, or -1 with a message in @why.
 */
int vm_kernel_find(const char *spec, struct vm_kernel *k, char *why,
		   size_t whylen);

/* A booted guest. */
struct vm_guest;

struct vm_boot_options {
	int cpus;		/* guest CPUs; 0: 1 */
	unsigned long mem_mb;	/* guest memory; 0: 4096 */
	bool icount;		/* -icount shift=0: guest time = instructions */
	/* Seconds one request may take before the guest is called hung. */
	unsigned int request_timeout;
};

/*
 * Boot @k and wait for its agent.  NULL with a message in @why (which
 * names the kernel and, when it got that far, the console log kept).
 * SIGINT, SIGTERM and SIGHUP stop QEMU and remove what the boot made.
 */
struct vm_guest *vm_boot(const struct vm_kernel *k,
			 const struct vm_boot_options *o, char *why,
			 size_t whylen);

/* The result of one command run in the guest. */
struct vm_result {
	int status;		/* as waitpid() gives it */
	char *out;		/* its stdout, NUL-terminated (malloc'd) */
	size_t out_len;
	char *err;		/* its stderr */
	size_t err_len;
};

void vm_result_free(struct vm_result *r);

/*
 * Run `ptebatch ARGV[1]...` in the guest (ARGV[0] is ignored: the guest
 * runs its own ptebatch) in the directory @cwd (the host's path; the
 * guest sees the host's files read-only), with @in (may be NULL) as its
 * stdin.  0, or -1 with @why: the guest died, hung or broke the protocol
 * (the guest is then unusable; the console log is kept and named).
 * @what names the work for that message ("tests/scenarios/x.scn").
 */
int vm_exec(struct vm_guest *g, char *const argv[], const char *cwd,
	    const void *in, size_t in_len, const char *what,
	    struct vm_result *r, char *why, size_t whylen);

/* The kernel the guest runs, and how QEMU runs it, for messages. */
const struct vm_kernel *vm_guest_kernel(const struct vm_guest *g);
const char *vm_guest_accel(const struct vm_guest *g);

/*
 * Power the guest off (or kill it) and remove what the boot made; the
 * console log too unless @keep_log.  NULL is fine.
 */
void vm_shutdown(struct vm_guest *g, bool keep_log);

/* An interactive boot of @k for a person: the console on this terminal. */
int vm_shell(const struct vm_kernel *k, const struct vm_boot_options *o);

/*
 * The guest's PID 1 (guest.c): @mode "agent" serves the host over the
 * port, "shell" gives the console a shell; either way it powers off at
 * the end.  Never returns.
 */
int vm_guest_init(const char *mode);

/* The port's name in the guest, and the init's argument on the kernel
 * command line. */
#define VM_AGENT_PORT	"org.ptebatch.agent"

#endif /* PTEBATCH_VM_H */
