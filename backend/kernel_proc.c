// SPDX-License-Identifier: GPL-2.0-only
/*
 * kernel_proc.c - one scenario process of the kernel backend: a real
 * process that performs the statements the coordinator sends it and
 * reports the minor faults each one took.
 *
 * ru_minflt is counted per process, so a command's fault count is exact
 * only if the process takes no fault of its own inside the measured
 * window.  Before every "before" reading the process therefore touches
 * its stack, its static buffers and errno, and after a fork (which write-
 * protects all of its private memory and leaves its text unmapped in the
 * child) it populates every mapping of its own with MADV_POPULATE_*.
 * Nothing is allocated on the measured path; bulk data lives in static
 * buffers.  fork itself runs through a trampoline (see kproc_fork_stub).
 *
 * The same window is timed: CLOCK_MONOTONIC is read right after the
 * "before" usage and right before the "after" one, so a command's time is
 * its system call or its stores and loads, not the pipes around them.
 * The vDSO's pages are left unpopulated by populate_own(), so prefault()
 * reads the clock once to map them before the window opens.
 *
 * Where a fault was: all that pre-faulting is a belief about what the
 * process's own code touches, and a new library, a new kernel or a new
 * glibc can prove it wrong (a statement taking one fault more than the
 * model, on some machines only).  So every process also samples its own
 * minor faults with their addresses (perf's software event
 * page-faults-min, one sample each, into a ring it reads after the
 * window): a fault outside the scenario's regions is the process's own,
 * left out of the statement's count and reported with its address.
 * That event counts what ru_minflt counts but for faults GUP takes for
 * the process (populate, pins, O_DIRECT: their regs are NULL), which are
 * always on the scenario's pages.  Without perf (perf_event_open fails)
 * the count is ru_minflt's, as before; so it is in a timed run
 * (kproc_env.no_fault_sampler), where a sample per fault would be in
 * every fault's time.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <liburing.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "backend/kernel_proc.h"

#define XSTR(x) STR(x)
#define STR(x) #x

/* Stack below the command loop that a command may use. */
#define STACK_PREFAULT (64UL << 10)
/*
 * dio-* move at most this much per pread/pwrite (the model makes the same
 * calls: SCN_DIO_CHUNK); drain reads as much.
 */
#define IOBUF_SIZE SCN_DIO_CHUNK
/*
 * register: one iovec per 16M.  io_uring accounts the pinned head pages of
 * one registration by scanning the earlier ones (headpage_already_acct()),
 * quadratic in the heads: 1G of 64K folios in one iovec took ~200 ms on
 * this machine's kernel, in 16M iovecs a few ms.
 */
#define REG_CHUNK (16UL << 20)
#define REG_MAX_IOV (SCN_MAX_REGION_LEN / REG_CHUNK)
#define ALTSTACK_SIZE (64UL << 10)
#define MAPS_BUF_SIZE (16UL << 10)
/* No mapping of the process's own that is worth populating is larger. */
#define POPULATE_MAX (1UL << 30)
/*
 * The fault sampler's ring: 16 bytes a sample, so 2M holds the faults of
 * a statement over 512M of 4K pages; a bigger one loses samples and its
 * count is ru_minflt's whole delta (reply.unattributed).
 */
#define FAULT_RING_SIZE (2UL << 20)

/*
 * fork with no fault of the process's own between it and the counter.
 *
 * After fork every private page of both processes is write-protected and
 * the child has no text mapped at all (fork does not copy page tables of
 * file mappings without anon pages), so even the instruction after the
 * syscall would fault in the child.  The stub therefore runs from an
 * anonymous page (kproc_prepare copies it there; fork copies anonymous
 * page tables), touches no memory between the two system calls, and reads
 * ru_minflt with a raw getrusage: the kernel computes the usage before
 * it copies it out, so the copy-on-write fault on the buffer is not in
 * the value.  The end of fork's time is a raw clock_gettime after that,
 * for the same reason: the vDSO's call would push onto the stack fork
 * just write-protected, and its fault would be in the time.  So fork's
 * time includes one getrusage, a fraction of a microsecond.
 *
 * The clone is fork's, plus CLONE_PARENT: every scenario process is then
 * a child of the coordinator, which can wait for each one to exit (the
 * memory of a process is gone once it is a zombie).  CLONE_PARENT only
 * changes who the parent is; the child's mm is copied exactly as fork
 * copies it.
 *
 *   long stub(struct rusage *ru, struct timespec *ts): returns the pid, 0
 *   in the child, or -errno; *ru is the caller's usage right after the
 *   clone, *ts its CLOCK_MONOTONIC time right after that.
 *
 * Each version keeps what it needs across the system calls in registers
 * the kernel preserves (x86-64's syscall clobbers rcx and r11, arm64's
 * svc only x0, the result).
 */
#if defined(__x86_64__)
/*
 * x86-64 clone: flags, stack, parent_tid, child_tid, tls.  The call
 * pushed the return address and rbx is callee-saved: both are saved on
 * the stack before the clone, and read back (loads do not fault) after.
 */
__asm__(".pushsection .text\n"
	".balign 16\n"
	".type kproc_fork_stub, @function\n"
	"kproc_fork_stub:\n"
	"	push %rbx\n"			/* before the clone: writable */
	"	mov %rsi, %rbx\n"
	"	mov %rdi, %r9\n"
	"	mov $" XSTR(__NR_clone) ", %eax\n"
	"	mov $(" XSTR(CLONE_PARENT) "|" XSTR(SIGCHLD) "), %edi\n"
	"	xor %esi, %esi\n"
	"	xor %edx, %edx\n"
	"	xor %r10d, %r10d\n"
	"	xor %r8d, %r8d\n"
	"	syscall\n"
	"	mov %rax, %r8\n"
	"	mov $" XSTR(__NR_getrusage) ", %eax\n"
	"	xor %edi, %edi\n"		/* RUSAGE_SELF */
	"	mov %r9, %rsi\n"
	"	syscall\n"
	"	mov $" XSTR(__NR_clock_gettime) ", %eax\n"
	"	mov $" XSTR(CLOCK_MONOTONIC) ", %edi\n"
	"	mov %rbx, %rsi\n"
	"	syscall\n"
	"	mov %r8, %rax\n"
	"	pop %rbx\n"			/* a load: no fault */
	"	ret\n"
	"kproc_fork_stub_end:\n"
	".size kproc_fork_stub, . - kproc_fork_stub\n"
	".popsection\n");
#elif defined(__aarch64__)
/*
 * arm64 clone: flags, stack, parent_tid, tls, child_tid (the generic
 * order, not x86-64's).  The number goes in x8, the arguments in x0-x5,
 * the result comes back in x0 and svc preserves every other register.
 * The return address is in x30 and x9-x11 are scratch registers, so the
 * stub is a leaf that never touches the stack: no store to write-protect,
 * no frame to restore.
 */
__asm__(".pushsection .text\n"
	".balign 16\n"
	".type kproc_fork_stub, %function\n"
	"kproc_fork_stub:\n"
	"	mov x9, x0\n"			/* ru */
	"	mov x10, x1\n"			/* ts */
	"	mov x8, #" XSTR(__NR_clone) "\n"
	"	mov x0, #(" XSTR(CLONE_PARENT) "|" XSTR(SIGCHLD) ")\n"
	"	mov x1, xzr\n"
	"	mov x2, xzr\n"
	"	mov x3, xzr\n"
	"	mov x4, xzr\n"
	"	svc #0\n"
	"	mov x11, x0\n"
	"	mov x8, #" XSTR(__NR_getrusage) "\n"
	"	mov x0, xzr\n"			/* RUSAGE_SELF */
	"	mov x1, x9\n"
	"	svc #0\n"
	"	mov x8, #" XSTR(__NR_clock_gettime) "\n"
	"	mov x0, #" XSTR(CLOCK_MONOTONIC) "\n"
	"	mov x1, x10\n"
	"	svc #0\n"
	"	mov x0, x11\n"
	"	ret\n"
	"kproc_fork_stub_end:\n"
	".size kproc_fork_stub, . - kproc_fork_stub\n"
	".popsection\n");
#else
#error "kproc_fork_stub: no fork stub for this architecture (x86-64, arm64)"
#endif

/*
 * Hidden: the labels are this file's, so the compiler takes their
 * addresses PC-relative.  Through the GOT, arm64's static link gave both
 * the one entry of the section symbol they are relocated against, and
 * the stub's length came out 0.
 */
extern const unsigned char kproc_fork_stub[] __attribute__((visibility("hidden")));
extern const unsigned char kproc_fork_stub_end[] __attribute__((visibility("hidden")));

_Static_assert(RUSAGE_SELF == 0, "the fork stub passes RUSAGE_SELF as 0");

typedef long (*fork_stub_fn)(struct rusage *ru, struct timespec *ts);

/* Set by kproc_prepare() in the coordinator, inherited by every process. */
static fork_stub_fn fork_stub;

int kproc_prepare(void)
{
	size_t len = kproc_fork_stub_end - kproc_fork_stub;
	long page = sysconf(_SC_PAGESIZE);
	void *code;

	if (fork_stub)
		return 0;
	code = mmap(NULL, page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return -errno;
	memcpy(code, kproc_fork_stub, len);
	/*
	 * arm64's instruction cache does not snoop the data side: the copy
	 * must be cleaned to the point of unification and the stale lines
	 * invalidated before it runs (nothing to do on x86-64).
	 */
	__builtin___clear_cache((char *)code, (char *)code + len);
	if (mprotect(code, page, PROT_READ | PROT_EXEC)) {
		int err = errno;

		munmap(code, page);
		return -err;
	}
	fork_stub = (fork_stub_fn)code;
	return 0;
}

int kproc_in_subtree(const struct kproc_env *env, int desc, int anc)
{
	for (; desc >= 0; desc = env->parent[desc])
		if (desc == anc)
			return 1;
	return 0;
}

/* ---- the process's state: all static, so nothing is allocated ---------- */

static struct {
	const struct kproc_env *env;
	int id;
	int cmd_fd, reply_fd;
	bool need_populate;
	bool ring_held[SCN_MAX_HANDLES];
	struct io_uring ring[SCN_MAX_HANDLES];
	int vpipe[SCN_MAX_HANDLES][2];
} srv;

static struct kcmd cmd;
static struct kreply rep;
static struct rusage ru_before, ru_after, ru_fork;
static struct timespec t_begin, t_end;
static struct ktouch touch_buf[KTOUCH_MAX];
static unsigned long peek_addr[KPEEK_MAX];
static uint8_t peek_byte[KPEEK_MAX];
static uint8_t iobuf[IOBUF_SIZE] __attribute__((aligned(4096)));
static struct iovec reg_iov[REG_MAX_IOV];
static char maps_buf[MAPS_BUF_SIZE];
static char altstack[ALTSTACK_SIZE] __attribute__((aligned(4096)));
static sigjmp_buf access_env;
static volatile sig_atomic_t in_access;

/* ---- where a fault was ---------------------------------------------------- */

static struct {
	int fd;				/* -1: no sampler */
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	uint64_t size;			/* of the data area */
	size_t page;			/* the meta page's size */
} sampler = { .fd = -1 };

/* One PERF_RECORD_SAMPLE of sample_type PERF_SAMPLE_ADDR. */
struct fault_sample {
	struct perf_event_header header;
	uint64_t addr;
};

static void sampler_close(void)
{
	if (sampler.meta)
		munmap(sampler.meta, sampler.page + FAULT_RING_SIZE);
	if (sampler.fd >= 0)
		close(sampler.fd);
	sampler.fd = -1;
	sampler.meta = NULL;
}

/*
 * This process's minor faults, each with its address, from now on.  A
 * child of fork inherits the parent's fd, which samples the parent: it
 * opens its own (the ring's mapping is not inherited, VM_DONTCOPY).
 */
static void sampler_open(void)
{
	struct perf_event_attr a;
	/*
	 * One page of metadata, then the data: a power of two pages, which
	 * FAULT_RING_SIZE is with 4K, 16K and 64K pages alike.
	 */
	size_t page = sysconf(_SC_PAGESIZE), len = page + FAULT_RING_SIZE;
	void *ring;

	if (FAULT_RING_SIZE % page || srv.env->no_fault_sampler)
		return;
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_SW_PAGE_FAULTS_MIN;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_ADDR;
	/* Kernel mode too: copy_from_user's faults on the process's pages. */
	a.exclude_hv = 1;
	sampler.fd = (int)syscall(__NR_perf_event_open, &a, 0, -1, -1,
				  PERF_FLAG_FD_CLOEXEC);
	if (sampler.fd < 0)
		return;
	ring = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, sampler.fd,
		    0);
	if (ring == MAP_FAILED) {
		sampler_close();
		return;
	}
	sampler.meta = ring;
	sampler.page = page;
	sampler.data = (unsigned char *)ring + page;
	sampler.size = FAULT_RING_SIZE;
}

static void ring_copy(void *dst, uint64_t pos, size_t len)
{
	uint64_t off = pos % sampler.size;
	size_t first = len < sampler.size - off ? len : sampler.size - off;

	memcpy(dst, sampler.data + off, first);
	memcpy((char *)dst + first, sampler.data, len - first);
}

/*
 * Read what the ring holds and free it.  With @in_window, count the
 * samples outside the scenario's span into the reply; else forget them
 * (the faults before a window, the sampler's own reading after one).
 */
static void sampler_read(bool in_window)
{
	uint64_t head, tail;

	if (!sampler.meta)
		return;
	head = __atomic_load_n(&sampler.meta->data_head, __ATOMIC_ACQUIRE);
	tail = sampler.meta->data_tail;
	while (in_window && tail + sizeof(struct perf_event_header) <= head) {
		struct fault_sample s;

		ring_copy(&s.header, tail, sizeof(s.header));
		if (!s.header.size)
			break;
		if (s.header.type == PERF_RECORD_SAMPLE &&
		    s.header.size >= sizeof(s)) {
			ring_copy(&s, tail, sizeof(s));
			if (s.addr < cmd.span_lo || s.addr >= cmd.span_hi) {
				if (!rep.stray_faults++)
					rep.stray_addr = s.addr;
			}
		} else if (s.header.type == PERF_RECORD_LOST) {
			rep.unattributed = 1;
		}
		tail += s.header.size;
	}
	__atomic_store_n(&sampler.meta->data_tail, head, __ATOMIC_RELEASE);
}

/* ---- pipes ------------------------------------------------------------ */

/* A reply that cannot be written: the coordinator is gone, so is the run. */
static void write_full(int fd, const void *buf, size_t len)
{
	if (kio_write_full(fd, buf, len))
		_exit(1);
}



static void send_data(const void *buf, size_t len)
{
	struct kreply r = { .kind = KREPLY_DATA, .data_len = len };

	write_full(srv.reply_fd, &r, sizeof(r));
	write_full(srv.reply_fd, buf, len);
}

static void send_done(void)
{
	rep.kind = KREPLY_DONE;
	write_full(srv.reply_fd, &rep, sizeof(rep));
}

/* ---- staying fault-free ------------------------------------------------ */

static void touch(void *buf, size_t len)
{
	volatile char *p = buf;
	size_t i;

	for (i = 0; i < len; i += 4096)
		p[i] = p[i];
	if (len)
		p[len - 1] = p[len - 1];
}

/* Grow and write the stack the command will use, below this frame. */
static void __attribute__((noinline)) prefault_stack(void)
{
	volatile char area[STACK_PREFAULT];
	size_t i;

	for (i = 0; i < sizeof(area); i += 1024)
		area[i] = 0;
}

static bool overlaps(unsigned long s, unsigned long e, unsigned long lo,
		     unsigned long hi)
{
	return s < hi && e > lo;
}

/* Populate one line of /proc/self/maps unless it is a scenario region. */
static void populate_line(const char *line)
{
	unsigned long start, end;
	char perms[8], *rest;

	start = strtoul(line, &rest, 16);
	if (*rest != '-')
		return;
	end = strtoul(rest + 1, &rest, 16);
	while (*rest == ' ')
		rest++;
	memcpy(perms, rest, 4);
	perms[4] = '\0';
	if (overlaps(start, end, cmd.span_lo, cmd.span_hi))
		return;
	/* [vvar], [vdso], [vsyscall]: nothing a fault would change. */
	if (strstr(line, "[v"))
		return;
	/* Reservations, not memory (a sanitizer's shadow): left alone. */
	if (end - start > POPULATE_MAX)
		return;
	if (perms[1] == 'w' && perms[3] == 'p') {
		/*
		 * The process's own memory never gets a large folio: a page
		 * it first touches in a statement's window (a fork's child
		 * before its hello) would read as the statement's mTHP fault
		 * in the kernel's counters (want_kstats, backend/kstats.c).
		 */
		madvise((void *)start, end - start, MADV_NOHUGEPAGE);
		madvise((void *)start, end - start, MADV_POPULATE_WRITE);
	} else if (perms[0] == 'r' || perms[2] == 'x')
		madvise((void *)start, end - start, MADV_POPULATE_READ);
}

/*
 * Map and make writable every page of every mapping of the process's own:
 * text, libraries, data, heap, stack.  Run after fork, which leaves the
 * child's text unmapped and both sides' private pages write-protected.
 */
static void populate_own(void)
{
	size_t have = 0;
	int fd = open("/proc/self/maps", O_RDONLY);

	if (fd < 0)
		return;
	for (;;) {
		ssize_t n = read(fd, maps_buf + have,
				 sizeof(maps_buf) - 1 - have);
		char *line, *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += n;
		maps_buf[have] = '\0';
		line = maps_buf;
		while ((nl = strchr(line, '\n'))) {
			*nl = '\0';
			populate_line(line);
			line = nl + 1;
		}
		have -= line - maps_buf;
		memmove(maps_buf, line, have);
		if (have == sizeof(maps_buf) - 1)
			have = 0;	/* a line longer than the buffer */
	}
	close(fd);
}

/*
 * Everything the measured window may write, written now.  The order
 * matters: the stack first (it may grow), then the populate, which reads
 * /proc/self/maps into a static buffer.
 */
static void prefault(void)
{
	prefault_stack();
	if (srv.need_populate) {
		populate_own();
		srv.need_populate = false;
	}
	touch(&rep, sizeof(rep));
	touch(&ru_before, sizeof(ru_before));
	touch(&ru_after, sizeof(ru_after));
	touch(&ru_fork, sizeof(ru_fork));
	touch(touch_buf, sizeof(touch_buf));
	touch(peek_addr, sizeof(peek_addr));
	touch(peek_byte, sizeof(peek_byte));
	touch(iobuf, sizeof(iobuf));
	touch(reg_iov, sizeof(reg_iov));
	touch(&srv, sizeof(srv));
	touch(altstack, sizeof(altstack));
	touch(&access_env, sizeof(access_env));
	/* Its control page: a kernel that maps it on demand faults here. */
	if (sampler.meta)
		touch(sampler.meta, sizeof(*sampler.meta));
	/* Maps the vDSO's code and data this process may not have yet. */
	clock_gettime(CLOCK_MONOTONIC, &t_begin);
	touch(&t_end, sizeof(t_end));
	errno = 0;
}

static uint64_t elapsed_ns(const struct timespec *a, const struct timespec *b)
{
	return (uint64_t)(b->tv_sec - a->tv_sec) * 1000000000u +
	       (uint64_t)b->tv_nsec - (uint64_t)a->tv_nsec;
}

static void measure_begin(void)
{
	prefault();
	sampler_read(false);
	getrusage(RUSAGE_SELF, &ru_before);
	clock_gettime(CLOCK_MONOTONIC, &t_begin);
}

static void measure_end(void)
{
	clock_gettime(CLOCK_MONOTONIC, &t_end);
	getrusage(RUSAGE_SELF, &ru_after);
	rep.faults = ru_after.ru_minflt - ru_before.ru_minflt;
	rep.ns = elapsed_ns(&t_begin, &t_end);
	sampler_read(true);
	if (rep.unattributed || rep.stray_faults > rep.faults)
		rep.stray_faults = 0;	/* ru_minflt's whole delta, then */
	rep.faults -= rep.stray_faults;
}

/* ---- statements ------------------------------------------------------- */

static void segv_handler(int sig, siginfo_t *si, void *uc)
{
	if (in_access)
		siglongjmp(access_env, 1);
	/* Not a scenario access: die of it as if unhandled. */
	signal(sig, SIG_DFL);
}

/* The loop of write/read, kept apart from sigsetjmp's frame. */
static void __attribute__((noinline)) access_loop(void)
{
	unsigned long done;

	for (done = 0; done < cmd.len; done += cmd.stride) {
		volatile uint8_t *p = (volatile uint8_t *)(cmd.addr + done);

		if (cmd.op == KOP_WRITE)
			*p = (uint8_t)cmd.value;
		else
			(void)*p;
		if (cmd.stride > cmd.len - done)
			break;
	}
}

/* The loop of touch: each run's pages in order, one access each. */
static void __attribute__((noinline)) touch_loop(void)
{
	unsigned long i, page = srv.env->page_size;
	const struct ktouch *t;
	volatile uint8_t *p;
	uint32_t n;

	for (i = 0; i < cmd.len; i++) {
		t = &touch_buf[i];
		p = (volatile uint8_t *)t->addr;
		for (n = t->count; n; n--, p += page) {
			if (t->write)
				*p = (uint8_t)cmd.value;
			else
				(void)*p;
		}
	}
}

/* A SIGSEGV stops @loop with EFAULT; the stores before it stay. */
static int do_access(void (*loop)(void))
{
	if (sigsetjmp(access_env, 1)) {
		in_access = 0;
		return EFAULT;
	}
	in_access = 1;
	loop();
	in_access = 0;
	return 0;
}

/*
 * mmap at the region's address: MAP_FIXED_NOREPLACE for a new region,
 * MAP_FIXED (cmd.flags) to replace part of one (mmap-fixed).
 */
static int do_mmap(void)
{
	int fixed = cmd.flags & MAP_FIXED ? MAP_FIXED : MAP_FIXED_NOREPLACE;
	void *p = mmap((void *)cmd.addr, cmd.len, cmd.prot,
		       MAP_PRIVATE | MAP_ANONYMOUS | fixed |
		       (cmd.flags & ~MAP_FIXED), -1, 0);

	if (p == MAP_FAILED)
		return errno;
	if (p != (void *)cmd.addr) {
		/* A kernel without MAP_FIXED_NOREPLACE took it as a hint. */
		munmap(p, cmd.len);
		return EEXIST;
	}
	if (cmd.advice >= 0 && madvise(p, cmd.len, cmd.advice))
		return errno;
	return 0;
}

static int do_dio(void)
{
	const struct kproc_env *env = srv.env;
	unsigned long done;
	ssize_t n;

	for (done = 0; done < cmd.len; done += n) {
		size_t chunk = cmd.len - done < IOBUF_SIZE ?
			       cmd.len - done : IOBUF_SIZE;
		void *p = (void *)(cmd.addr + done);

		if (cmd.op == KOP_DIO_WRITE)
			n = pwrite(env->scratch_fd, p, chunk, 0);
		else
			n = pread(env->scratch_fd, p, chunk, 0);
		if (n < 0)
			return errno;
		if (n == 0)
			return EIO;
	}
	return 0;
}

/* dio-read: the scratch file holds the value, before the window opens. */
static int fill_scratch(void)
{
	size_t len = cmd.len < IOBUF_SIZE ? cmd.len : IOBUF_SIZE;

	memset(iobuf, cmd.value, len);
	if (pwrite(srv.env->scratch_fd, iobuf, len, 0) != (ssize_t)len)
		return errno ? errno : EIO;
	return 0;
}

/* One ring per handle, set up before the measured window opens. */
static int ring_setup(struct io_uring *ring)
{
	return -io_uring_queue_init(1, ring, 0);
}

/* IORING_REGISTER_BUFFERS: pin_user_pages_fast(WRITE|LONGTERM) per iovec. */
static int do_register(struct io_uring *ring)
{
	unsigned long done, nr = 0;

	for (done = 0; done < cmd.len; done += REG_CHUNK, nr++) {
		reg_iov[nr].iov_base = (void *)(cmd.addr + done);
		reg_iov[nr].iov_len = cmd.len - done < REG_CHUNK ?
				      cmd.len - done : REG_CHUNK;
	}
	return -io_uring_register_buffers(ring, reg_iov, (unsigned int)nr);
}

static int do_unregister(struct io_uring *ring)
{
	return -io_uring_unregister_buffers(ring);
}

static void ring_release(int h)
{
	if (srv.ring_held[h])
		io_uring_queue_exit(&srv.ring[h]);
	srv.ring_held[h] = false;
}

/*
 * A pipe that holds @len bytes of page references, or -errno.  Root may
 * make one larger than /proc/sys/fs/pipe-max-size (CAP_SYS_RESOURCE), so
 * that limit is tried, not assumed.
 */
static int vmsplice_pipe(int p[2])
{
	int size;

	if (cmd.len > INT_MAX)
		return -EINVAL;
	if (pipe2(p, 0))
		return -errno;
	size = fcntl(p[1], F_GETPIPE_SZ);
	if (size >= 0 && (unsigned long)size < cmd.len)
		size = fcntl(p[1], F_SETPIPE_SZ, (int)cmd.len);
	if (size < 0 || (unsigned long)size < cmd.len) {
		int err = size < 0 ? errno : EINVAL;

		close(p[0]);
		close(p[1]);
		return -err;
	}
	return 0;
}

static int do_vmsplice(int fd)
{
	struct iovec iov = { (void *)cmd.addr, cmd.len };

	while (iov.iov_len) {
		ssize_t n = vmsplice(fd, &iov, 1, 0);

		if (n < 0)
			return errno;
		if (n == 0)
			return EFAULT;
		iov.iov_base = (char *)iov.iov_base + n;
		iov.iov_len -= n;
	}
	return 0;
}

static void close_vpipe(int h)
{
	if (srv.vpipe[h][0] >= 0) {
		close(srv.vpipe[h][0]);
		close(srv.vpipe[h][1]);
	}
	srv.vpipe[h][0] = srv.vpipe[h][1] = -1;
}

/* Read the pipe to its end, streaming the bytes to the coordinator. */
static int do_drain(int fd)
{
	for (;;) {
		ssize_t n = read(fd, iobuf, sizeof(iobuf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? 0 : errno;
		if (n == 0)
			return 0;
		send_data(iobuf, n);
	}
}

/* Read the first byte of each page through /proc/self/mem: it reaches
 * PROT_NONE pages too and faults nothing in for present ones. */
static void do_peek(void)
{
	unsigned long i, nr = cmd.len;
	int fd;

	if (nr > KPEEK_MAX || kio_read_full(srv.cmd_fd, peek_addr,
					nr * sizeof(peek_addr[0])))
		_exit(1);
	memset(peek_byte, 0, nr);
	fd = open("/proc/self/mem", O_RDONLY);
	if (fd < 0) {
		rep.err = errno;
	} else {
		for (i = 0; i < nr; i++)
			if (pread(fd, &peek_byte[i], 1, peek_addr[i]) != 1)
				rep.err = errno ? errno : EIO;
		close(fd);
	}
	send_data(peek_byte, nr);
}

/* ---- fork --------------------------------------------------------------- */

/* Close the pipe ends of every process in @root's subtree but @keep's. */
static void close_subtree_fds(int root, bool keep_subtree)
{
	const struct kproc_env *env = srv.env;
	int i, j;

	for (i = 0; i < env->nr_procs; i++) {
		if (kproc_in_subtree(env, i, root) == keep_subtree ||
		    i == srv.id)
			continue;
		for (j = 0; j < 4; j++) {
			if (env->fds[i][j] >= 0)
				close(env->fds[i][j]);
			env->fds[i][j] = -1;
		}
	}
}

static void child_start(int id, unsigned long faults)
{
	int h;

	srv.id = id;
	srv.cmd_fd = srv.env->fds[id][KFD_CMD_R];
	srv.reply_fd = srv.env->fds[id][KFD_REPLY_W];
	/* Only its own pipes and those of the processes it will fork. */
	close_subtree_fds(id, true);
	/* The parent's handles stay the parent's. */
	for (h = 0; h < SCN_MAX_HANDLES; h++) {
		ring_release(h);
		close_vpipe(h);
	}
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	srv.need_populate = true;
	/* The parent's sampler is the parent's. */
	if (sampler.fd >= 0)
		close(sampler.fd);
	sampler.fd = -1;
	sampler.meta = NULL;
	sampler_open();
	/* The command loop sends this as the child's first reply. */
	memset(&rep, 0, sizeof(rep));
	rep.faults = faults;
}

static void do_fork(void)
{
	long pid;

	measure_begin();
	pid = fork_stub(&ru_fork, &t_end);
	if (pid == 0) {
		/* The child: it starts counting from 0. */
		child_start(cmd.child, ru_fork.ru_minflt);
		return;
	}
	if (pid < 0) {
		rep.err = -pid;
		rep.faults = ru_fork.ru_minflt - ru_before.ru_minflt;
		return;
	}
	rep.faults = ru_fork.ru_minflt - ru_before.ru_minflt;
	rep.ns = elapsed_ns(&t_begin, &t_end);
	rep.child_pid = pid;
	/* The child's pipes (and its future children's) are its own now. */
	close_subtree_fds(cmd.child, false);
	srv.need_populate = true;
}

/*
 * resize: mremap(addr, len, new_len, 0).  With cmd.new_addr (a grow past
 * the region's room) a one-page PROT_NONE mapping sits there for the
 * call, the next mapping the room stands for, so that this kernel says
 * ENOMEM where it looks for room, after its EFAULT checks, as the model
 * does.  It is shared, so it never merges with the region, it is made
 * and removed outside the measured time, and nothing else maps there
 * (the next region begins a PMD block further).  If it cannot be made,
 * the reply says so as a limit of this machine.
 */
static void do_resize(void)
{
	void *guard = NULL;

	if (cmd.new_addr) {
		guard = mmap((void *)cmd.new_addr, srv.env->page_size,
			     PROT_NONE, MAP_SHARED | MAP_ANONYMOUS |
			     MAP_FIXED_NOREPLACE, -1, 0);
		if (guard == MAP_FAILED) {
			rep.err = errno;
			rep.host_limit = 1;
			return;
		}
		if (guard != (void *)cmd.new_addr) {
			/* A kernel without MAP_FIXED_NOREPLACE: a hint. */
			munmap(guard, srv.env->page_size);
			rep.err = EEXIST;
			rep.host_limit = 1;
			return;
		}
	}
	measure_begin();
	rep.err = mremap((void *)cmd.addr, cmd.len, cmd.new_len, 0) ==
		  MAP_FAILED ? errno : 0;
	measure_end();
	if (guard)
		munmap(guard, srv.env->page_size);
}

/* ---- the loop ---------------------------------------------------------- */

/* Run one statement command; the reply is in rep. */
static void do_command(void)
{
	int h = cmd.handle, p[2], ret;

	switch (cmd.op) {
	case KOP_MMAP:
		measure_begin();
		rep.err = do_mmap();
		measure_end();
		break;
	case KOP_MUNMAP:
		measure_begin();
		rep.err = munmap((void *)cmd.addr, cmd.len) ? errno : 0;
		measure_end();
		break;
	case KOP_MPROTECT:
		measure_begin();
		rep.err = mprotect((void *)cmd.addr, cmd.len, cmd.prot) ?
			  errno : 0;
		measure_end();
		break;
	case KOP_MADVISE:
		measure_begin();
		rep.err = madvise((void *)cmd.addr, cmd.len, cmd.advice) ?
			  errno : 0;
		measure_end();
		break;
	case KOP_WRITE:
	case KOP_READ:
		measure_begin();
		rep.err = do_access(access_loop);
		measure_end();
		break;
	case KOP_TOUCH:
		if (cmd.len > KTOUCH_MAX ||
		    kio_read_full(srv.cmd_fd, touch_buf,
				  cmd.len * sizeof(touch_buf[0])))
			_exit(1);
		measure_begin();
		rep.err = do_access(touch_loop);
		measure_end();
		break;
	case KOP_FORK:
		do_fork();
		break;
	case KOP_EXIT:
		_exit(0);
	case KOP_REGISTER:
		rep.err = ring_setup(&srv.ring[h]);
		if (rep.err)
			break;
		srv.ring_held[h] = true;
		measure_begin();
		rep.err = do_register(&srv.ring[h]);
		measure_end();
		/* A failed registration holds nothing. */
		if (rep.err)
			ring_release(h);
		break;
	case KOP_UNREGISTER:
		measure_begin();
		rep.err = srv.ring_held[h] ? do_unregister(&srv.ring[h]) : 0;
		measure_end();
		ring_release(h);
		break;
	case KOP_DIO_WRITE:
		measure_begin();
		rep.err = do_dio();
		measure_end();
		break;
	case KOP_DIO_FILL:	/* and KOP_SETTLE's pre-faulting */
		measure_begin();
		rep.err = fill_scratch();
		measure_end();
		break;
	case KOP_DIO_READ:
		rep.err = cmd.flags & KDIO_FILLED ? 0 : fill_scratch();
		if (rep.err)
			break;
		measure_begin();
		rep.err = do_dio();
		measure_end();
		break;
	case KOP_VMSPLICE:
		ret = vmsplice_pipe(p);
		if (ret) {
			rep.err = -ret;
			rep.host_limit = 1;
			break;
		}
		measure_begin();
		rep.err = do_vmsplice(p[1]);
		measure_end();
		srv.vpipe[h][0] = p[0];
		srv.vpipe[h][1] = p[1];
		/* A failed vmsplice holds nothing: give back what it got. */
		if (rep.err)
			close_vpipe(h);
		break;
	case KOP_DRAIN:
		if (srv.vpipe[h][0] >= 0)
			fcntl(srv.vpipe[h][0], F_SETFL, O_NONBLOCK);
		measure_begin();
		rep.err = srv.vpipe[h][0] >= 0 ? do_drain(srv.vpipe[h][0]) : 0;
		measure_end();
		close_vpipe(h);
		break;
	case KOP_MREMAP:
		measure_begin();
		rep.err = mremap((void *)cmd.addr, cmd.len, cmd.len,
				 MREMAP_MAYMOVE | MREMAP_FIXED | cmd.flags,
				 (void *)cmd.new_addr) == MAP_FAILED ? errno : 0;
		measure_end();
		break;
	case KOP_SPLIT_BLOCK:
		measure_begin();
		if (mprotect((void *)cmd.addr, srv.env->page_size, cmd.prot2) ||
		    mprotect((void *)cmd.addr, srv.env->page_size, cmd.prot))
			rep.err = errno;
		measure_end();
		break;
	case KOP_SETTLE:
		measure_begin();
		measure_end();
		break;
	case KOP_PEEK:
		do_peek();
		break;
	case KOP_RESIZE:
		do_resize();
		break;
	default:
		rep.err = EINVAL;
		break;
	}
}

/*
 * glibc registers an rseq area, and the kernel writes it on the way back
 * to user space after fork, when it is write-protected: a fault in both
 * processes that the fork trampoline cannot avoid.  Nothing here needs
 * rseq.  Returns 0 or -errno.
 */
static int rseq_unregister(void)
{
	unsigned int lens[2] = { __rseq_size, 32 };
	unsigned long tp;
	int i;

	if (!__rseq_size)
		return 0;
	/* __rseq_offset is from the thread pointer. */
#if defined(__x86_64__)
	__asm__("mov %%fs:0, %0" : "=r"(tp));
#elif defined(__aarch64__)
	__asm__("mrs %0, tpidr_el0" : "=r"(tp));
#else
#error "rseq_unregister: no thread pointer read for this architecture"
#endif
	for (i = 0; i < 2; i++)
		if (!syscall(__NR_rseq, (void *)(tp + __rseq_offset), lens[i],
			     RSEQ_FLAG_UNREGISTER, RSEQ_SIG))
			return 0;
	return -errno;
}

static void setup_signals(void)
{
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	struct sigaction sa;

	sigaltstack(&ss, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = segv_handler;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
}

/*
 * Every scenario process (children inherit it) runs on one CPU.  MADV_FREE
 * queues a small folio on a per-CPU batch that clears PG_swapbacked only
 * when drained, and MADV_PAGEOUT drains the batches of its own CPU only
 * (lru_add_drain()): on two CPUs a freed 4K page may or may not be
 * reclaimable yet.  On one CPU it always is, as in the model.  Best
 * effort: without it the run goes on.
 */
static void pin_to_one_cpu(void)
{
	int cpu = sched_getcpu();
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

void kproc_serve(const struct kproc_env *env, int id)
{
	int h, i;

	srv.env = env;
	srv.id = id;
	srv.cmd_fd = env->fds[id][KFD_CMD_R];
	srv.reply_fd = env->fds[id][KFD_REPLY_W];
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* The coordinator may have THP off for itself (want_kstats). */
	prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0);
	/* The coordinator's ends are the coordinator's. */
	for (i = 0; i < env->nr_procs; i++) {
		close(env->fds[i][KFD_CMD_W]);
		close(env->fds[i][KFD_REPLY_R]);
		env->fds[i][KFD_CMD_W] = env->fds[i][KFD_REPLY_R] = -1;
	}
	close_subtree_fds(id, true);
	for (h = 0; h < SCN_MAX_HANDLES; h++) {
		srv.ring_held[h] = false;
		srv.vpipe[h][0] = srv.vpipe[h][1] = -1;
	}
	rseq_unregister();
	setup_signals();
	pin_to_one_cpu();
	sampler_open();
	srv.need_populate = true;

	for (;;) {
		if (kio_read_full(srv.cmd_fd, &cmd, sizeof(cmd)))
			_exit(0);	/* the coordinator closed the pipe */
		memset(&rep, 0, sizeof(rep));
		do_command();
		send_done();
	}
}
