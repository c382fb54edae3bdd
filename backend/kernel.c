// SPDX-License-Identifier: GPL-2.0-only
/*
 * kernel.c - the kernel backend: runs a scenario on the Linux kernel of
 * this machine, so that the model's record can be diffed against it.
 *
 * Every scenario process is a real process (kernel_proc.c); fork is a
 * real fork.  This file is the coordinator: it applies the THP settings
 * (thp_sysfs.c), places the regions as the model does (scenario/place.c),
 * sends each statement to the process that acts, and reads back the
 * error and the minor faults it took.  An observe reads the processes'
 * page tables from /proc/PID/pagemap and the folios from /proc/kpageflags;
 * the byte at each present page is read by the process itself.
 *
 * What is not the model's: no cost counters (has_stats is 0), and `split`
 * is an mprotect of one page of each PMD to another protection and back.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/kernel-page-flags.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/backend.h"
#include "backend/kernel_proc.h"
#include "backend/fcount.h"
#include "backend/kstats.h"
#include "backend/thp_sysfs.h"
#include "scenario/place.h"

/* Pages read from pagemap, and peeked, per round trip. */
#define OBSERVE_BATCH KPEEK_MAX
/* kpageflags entries read at a time while walking a folio. */
#define KPF_WINDOW 512
/* No folio is larger than a PUD's worth of base pages. */
#define MAX_FOLIO_PAGES (1UL << 18)

#define PM_PRESENT (1ULL << 63)
#define PM_PFN_MASK ((1ULL << 55) - 1)

#define KPF(bit) (1ULL << (bit))

/* Per-region state is sized by the scenario's regions (see model.c). */
struct kernel_proc {
	pid_t pid;		/* 0 before fork, after exit, if fork failed */
	uint64_t *regions;	/* the regions it has */
	/* Each region's length in this process: resize changes it. */
	unsigned long *len;
};

/* The folio last found by an observe: reused for its other pages. */
struct kfolio {
	uint64_t head, nr;
	bool zero;	/* KPF_ZERO_PAGE: the zero page or the huge one */
};

struct kernel {
	struct backend base;
	struct kernel_options opt;
	const struct scenario *s;
	bool running;
	bool thp_applied;
	bool have_fallback;
	struct thp_fallback fallback;	/* the counters at start */
	unsigned long page_size;
	unsigned long pmd_size;
	struct scn_placement place;	/* where the next region goes */
	int kpf_fd;		/* /proc/kpageflags */
	struct kstats_reader *kst;	/* want_kstats: open while running */
	bool kst_failed;		/* a read failed: no more kstats */
	struct fcount *fc;		/* --count: open while running */
	bool dio_filled;		/* kernel_settle() wrote the dio file */
	int thp_disable_saved;		/* the coordinator's PR_GET_THP_DISABLE */
	struct sigaction old_sigpipe;
	bool sigpipe_saved;
	int fds[SCN_MAX_PROCS][4];
	int parent[SCN_MAX_PROCS];
	struct kproc_env env;
	struct kernel_proc procs[SCN_MAX_PROCS];
	size_t region_words;		/* of a process's region bitmap */
	struct scn_region_addr *regions;	/* the scenario's nr_regions */
	uint64_t *region_bits;		/* every process's bitmap */
	unsigned long *lens;		/* every process's lengths */
	struct ktouch touch[KTOUCH_MAX];	/* one KOP_TOUCH's runs */
	struct utsname uts;
	char arch[32];		/* the record's arch: kernel_arch_name() */
	/* observe */
	uint64_t pm[OBSERVE_BATCH];
	unsigned long peek_addr[OBSERVE_BATCH];
	uint8_t peek_byte[OBSERVE_BATCH];
	uint64_t kpf[KPF_WINDOW];
	struct kfolio last;
	/* Why the run cannot go on (a process died), for the statement. */
	char fatal[160];
	/* The statement's time so far: its commands' replies, added up. */
	uint64_t stmt_ns;
	/* Its faults on the processes' own pages (kreply), left out. */
	unsigned long stmt_strays, stray_addr;
	int stray_proc;
	bool stmt_unattributed;
	/*
	 * The first statement that failed on a limit of this machine rather
	 * than by the kernel's rules: the run is then SKIP, with this.
	 */
	char host_limit[256];
};

static struct kernel *to_kernel(struct backend *b)
{
	return (struct kernel *)((char *)b - offsetof(struct kernel, base));
}

static unsigned long round_up(unsigned long x, unsigned long align)
{
	return (x + align - 1) & ~(align - 1);
}

static void __attribute__((format(printf, 2, 3)))
verbose(const struct kernel *k, const char *fmt, ...)
{
	va_list ap;

	if (!k->opt.verbose)
		return;
	fputs("kernel backend: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int __attribute__((format(printf, 2, 3)))
skip(struct kernel *k, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(k->base.skip_reason, sizeof(k->base.skip_reason), fmt, ap);
	va_end(ap);
	return -EOPNOTSUPP;
}

/* ---- regions: placed by scenario/place.c, as the model's are ------------ */

static bool proc_has_region(const struct kernel_proc *p, int region)
{
	return p->regions[region / 64] & (1ULL << (region % 64));
}

static void proc_add_region(struct kernel_proc *p, int region,
			    unsigned long len)
{
	p->regions[region / 64] |= 1ULL << (region % 64);
	p->len[region] = len;
}

static unsigned long range_addr(const struct kernel *k, const struct stmt *st)
{
	return scenario_region_addr(&k->regions[st->region], st->off);
}

/* ---- talking to a process ---------------------------------------------- */



static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Wait for @proc to end; its wait status, or -1 if there was none. */
static int reap(struct kernel *k, int proc)
{
	struct kernel_proc *p = &k->procs[proc];
	int status = -1;

	if (p->pid > 0)
		while (waitpid(p->pid, &status, 0) < 0) {
			if (errno != EINTR) {
				status = -1;
				break;
			}
		}
	p->pid = 0;
	close_fd(&k->fds[proc][KFD_CMD_W]);
	close_fd(&k->fds[proc][KFD_REPLY_R]);
	return status;
}

/*
 * @proc went away in the middle of a statement: killed (by a signal, the
 * OOM killer, a user) or exited.  The scenario cannot go on: say who and
 * how, for the statement's result.
 */
static void process_died(struct kernel *k, int proc)
{
	/* Every scenario process is the coordinator's child (CLONE_PARENT). */
	pid_t pid = k->procs[proc].pid;
	int status = reap(k, proc);
	const char *name = k->s->proc_names[proc];

	if (status != -1 && WIFSIGNALED(status))
		snprintf(k->fatal, sizeof(k->fatal), "%s (pid %d) killed by"
			 " signal %d (%s)", name, (int)pid, WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else if (status != -1 && WIFEXITED(status))
		snprintf(k->fatal, sizeof(k->fatal), "%s (pid %d) exited with"
			 " status %d in the middle of a statement", name,
			 (int)pid, WEXITSTATUS(status));
	else
		snprintf(k->fatal, sizeof(k->fatal), "%s (pid %d) went away in"
			 " the middle of a statement", name, (int)pid);
}

/*
 * Read @proc's replies up to the final one.  Data messages are appended
 * to *@data (malloc'd) when @data is given, else into @buf of @cap bytes.
 */
static int read_reply(struct kernel *k, int proc, struct kreply *r,
		      uint8_t **data, unsigned long *data_len, uint8_t *buf,
		      unsigned long cap)
{
	int fd = k->fds[proc][KFD_REPLY_R];
	unsigned long have = 0;
	int ret;

	for (;;) {
		ret = kio_read_full(fd, r, sizeof(*r));
		if (ret)
			return ret;
		if (r->kind == KREPLY_DONE)
			break;
		if (data) {
			uint8_t *grown = realloc(*data, have + r->data_len);

			if (!grown)
				return -ENOMEM;
			*data = grown;
			buf = grown;
		} else if (r->data_len > cap - have) {
			return -EIO;
		}
		ret = kio_read_full(fd, buf + have, r->data_len);
		if (ret)
			return ret;
		have += r->data_len;
	}
	if (data_len)
		*data_len = have;
	return 0;
}

static void init_cmd(const struct kernel *k, struct kcmd *c, enum kop op)
{
	memset(c, 0, sizeof(*c));
	c->op = op;
	c->advice = -1;
	c->span_lo = SCN_FIRST_REGION_ADDR;
	c->span_hi = k->place.cursor;
}

/*
 * Send @c to @proc and wait for its reply.  A process that died under us
 * is reaped and the statement fails with EIO.
 */
static int call(struct kernel *k, int proc, const struct kcmd *c,
		const void *payload, size_t payload_len, struct kreply *r,
		uint8_t **data, unsigned long *data_len)
{
	int ret;

	memset(r, 0, sizeof(*r));
	ret = kio_write_full(k->fds[proc][KFD_CMD_W], c, sizeof(*c));
	if (!ret && payload_len)
		ret = kio_write_full(k->fds[proc][KFD_CMD_W], payload, payload_len);
	if (!ret)
		ret = read_reply(k, proc, r, data, data_len, k->peek_byte,
				 sizeof(k->peek_byte));
	if (!ret) {
		k->stmt_ns += r->ns;
		if (r->stray_faults && !k->stmt_strays) {
			k->stray_addr = r->stray_addr;
			k->stray_proc = proc;
		}
		k->stmt_strays += r->stray_faults;
		k->stmt_unattributed |= r->unattributed != 0;
	}
	if (ret == -EPIPE) {
		process_died(k, proc);
		return -EIO;
	}
	return ret;
}

/* ---- statements ---------------------------------------------------------- */

static int os_prot(enum scn_prot prot)
{
	switch (prot) {
	case SCN_PROT_NONE:
		return PROT_NONE;
	case SCN_PROT_R:
		return PROT_READ;
	case SCN_PROT_RW:
		break;
	}
	return PROT_READ | PROT_WRITE;
}

/* The protection a split goes through: another one, and back. */
static int other_prot(int prot)
{
	if (prot & PROT_WRITE)
		return prot & ~PROT_WRITE;
	if (prot & PROT_READ)
		return PROT_NONE;
	return PROT_READ;
}

static unsigned long read_ulong_file(const char *path, unsigned long dflt);

/* A "Name:  N kB" line of /proc/meminfo, in bytes; 0 if there is none. */
static unsigned long meminfo_bytes(const char *name)
{
	size_t len = strlen(name);
	unsigned long kb = 0;
	char line[256];
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, name, len) && line[len] == ':' &&
		    sscanf(line + len + 1, "%lu", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb << 10;
}

static const char *gib_text(char *buf, size_t size, unsigned long bytes)
{
	snprintf(buf, size, "%.1fG", (double)bytes / (1UL << 30));
	return buf;
}

/* Say, once, that the run met a limit of this machine: it will be SKIP. */
static void __attribute__((format(printf, 2, 3)))
host_limit(struct kernel *k, const char *fmt, ...)
{
	va_list ap;

	if (k->host_limit[0])
		return;
	va_start(ap, fmt);
	vsnprintf(k->host_limit, sizeof(k->host_limit), fmt, ap);
	va_end(ap);
}

/*
 * mmap fails with ENOMEM when the kernel will not commit that much
 * (vm.overcommit_memory 0: more than RAM and swap in one go; 2: past
 * CommitLimit): this machine's policy, which the model does not have.
 */
static void mmap_refused(struct kernel *k, unsigned long len)
{
	static const char *const policy[] = { "heuristic", "always",
					      "never" };
	unsigned long mode = read_ulong_file("/proc/sys/vm/overcommit_memory", 0);
	unsigned long limit, used;
	char a[32], b[32], c[32];

	/*
	 * Only if the policy could refuse @len (__vm_enough_memory()):
	 * heuristic, more than RAM and swap; never, past CommitLimit.  A
	 * smaller ENOMEM is the kernel's rule for the call (a resize whose
	 * mapping does not end where the region does cannot grow in
	 * place), a result like any other.
	 */
	if (mode == 1)
		return;
	if (mode == 0 && len <= meminfo_bytes("MemTotal") +
				meminfo_bytes("SwapTotal"))
		return;
	limit = meminfo_bytes("CommitLimit");
	used = meminfo_bytes("Committed_AS");
	if (mode == 2 && limit > used && len <= limit - used)
		return;

	host_limit(k, "host limit: the kernel refused a %s mapping (ENOMEM)"
		   " under vm.overcommit_memory=%lu (%s; CommitLimit %s,"
		   " Committed_AS %s)", gib_text(a, sizeof(a), len), mode,
		   mode < 3 ? policy[mode] : "?",
		   gib_text(b, sizeof(b), meminfo_bytes("CommitLimit")),
		   gib_text(c, sizeof(c), meminfo_bytes("Committed_AS")));
}

static int do_simple(struct kernel *k, int proc, struct kcmd *c,
		     struct stmt_result *res)
{
	struct kreply r;
	int ret = call(k, proc, c, NULL, 0, &r, NULL, NULL);

	if (ret)
		return ret;
	res->faults = r.faults;
	if (r.host_limit && c->op == KOP_VMSPLICE)
		host_limit(k, "host limit: vmsplice of %lu bytes needs a pipe"
			   " that large, and this machine made none (%s;"
			   " /proc/sys/fs/pipe-max-size %lu)", c->len,
			   strerror(r.err), k->env.pipe_max);
	return r.err;
}

static int do_fork(struct kernel *k, int proc, const struct stmt *st,
		   struct stmt_result *res)
{
	struct kernel_proc *child = &k->procs[st->child];
	struct kreply r, hello;
	struct kcmd c;
	int ret;

	init_cmd(k, &c, KOP_FORK);
	c.child = st->child;
	ret = call(k, proc, &c, NULL, 0, &r, NULL, NULL);
	if (ret)
		return ret;
	res->faults = r.faults;
	if (r.err)
		return r.err;
	child->pid = r.child_pid;
	/* The child's first reply is its own fault count. */
	ret = read_reply(k, st->child, &hello, NULL, NULL, NULL, 0);
	if (ret) {
		process_died(k, st->child);
		return -EIO;
	}
	memcpy(child->regions, k->procs[proc].regions,
	       k->region_words * sizeof(*child->regions));
	memcpy(child->len, k->procs[proc].len,
	       k->s->nr_regions * sizeof(*child->len));
	res->child_faults = hello.faults;
	return 0;
}

/*
 * Start the scenario process @id from the coordinator itself, as P0 is:
 * not forked from any scenario process, so no mm is copied and no page
 * of another process is write-protected (what vfork + execve leave
 * alone).  It serves its own subtree, whose pipe ends it takes over.
 */
static int start_root(struct kernel *k, int id)
{
	pid_t pid;
	int i;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		close(k->kpf_fd);
		if (k->kst)
			kstats_close(k->kst);
		kproc_serve(&k->env, id);
	}
	k->procs[id].pid = pid;
	for (i = 0; i < k->s->nr_procs; i++) {
		if (!kproc_in_subtree(&k->env, i, id))
			continue;
		close_fd(&k->fds[i][KFD_CMD_R]);
		close_fd(&k->fds[i][KFD_REPLY_W]);
	}
	return 0;
}

/*
 * spawn: the child is a new process with nothing of the scenario's; the
 * parent takes no part, as after posix_spawn its memory is untouched.
 */
static int do_spawn(struct kernel *k, const struct stmt *st,
		    struct stmt_result *res)
{
	int ret = start_root(k, st->child);

	res->faults = 0;
	res->child_faults = 0;
	return ret;
}

/*
 * exec: every scenario mapping of the process goes.  They all lie in the
 * span [span_lo, span_hi), which holds nothing of the process's own
 * (check_addresses_free()), so one munmap is the whole old address space.
 */
static int do_exec(struct kernel *k, int proc, struct stmt_result *res)
{
	struct kernel_proc *p = &k->procs[proc];
	struct kcmd c;

	memset(p->regions, 0, k->region_words * sizeof(*p->regions));
	memset(p->len, 0, k->s->nr_regions * sizeof(*p->len));
	if (k->place.cursor == SCN_FIRST_REGION_ADDR)
		return 0;
	init_cmd(k, &c, KOP_MUNMAP);
	c.addr = c.span_lo;
	c.len = c.span_hi - c.span_lo;
	return do_simple(k, proc, &c, res);
}

/* Send the @n runs gathered in k->touch; the faults add up. */
static int touch_send(struct kernel *k, int proc, const struct stmt *st,
		      unsigned long n, struct stmt_result *res)
{
	struct kreply r;
	struct kcmd c;
	int ret;

	if (!n)
		return 0;
	init_cmd(k, &c, KOP_TOUCH);
	c.len = n;
	c.value = st->value;
	ret = call(k, proc, &c, k->touch, n * sizeof(k->touch[0]), &r, NULL,
		   NULL);
	if (ret)
		return ret;
	res->faults += r.faults;
	return r.err;
}

/*
 * touch: the runs go to the process KTOUCH_MAX at a time.  The first
 * access refused stops the statement there, as in the model; a region
 * that never got an address is refused at its first access.
 */
static int do_touch(struct kernel *k, int proc, const struct stmt *st,
		    struct stmt_result *res)
{
	unsigned long n = 0;
	unsigned int i;
	int ret;

	for (i = 0; i < st->nr_items; i++) {
		const struct scn_touch *it = &st->items[i];
		const struct scn_region_addr *r = &k->regions[it->region];

		if (!r->placed) {
			ret = touch_send(k, proc, st, n, res);
			return ret ? ret : EFAULT;
		}
		k->touch[n].addr = r->addr + (unsigned long)it->pgoff *
					     k->page_size;
		k->touch[n].count = it->count;
		k->touch[n].write = it->write;
		if (++n < KTOUCH_MAX)
			continue;
		ret = touch_send(k, proc, st, n, res);
		if (ret)
			return ret;
		n = 0;
	}
	return touch_send(k, proc, st, n, res);
}

static int do_exit(struct kernel *k, int proc)
{
	struct kcmd c;

	init_cmd(k, &c, KOP_EXIT);
	kio_write_full(k->fds[proc][KFD_CMD_W], &c, sizeof(c));
	/* Once it is a zombie its memory is gone: exit_mm() comes first. */
	reap(k, proc);
	return 0;
}

struct vma_prot {
	unsigned long start, end;
	int prot;
};

/* The VMAs of @pid that meet [addr, end), in address order. */
static int read_vmas(pid_t pid, unsigned long addr, unsigned long end,
		     struct vma_prot **out, int *nr)
{
	char path[64], *line = NULL, perms[8];
	struct vma_prot *v = NULL;
	size_t cap = 0;
	int n = 0, ret = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		unsigned long s, e;
		struct vma_prot *grown;

		if (sscanf(line, "%lx-%lx %4s", &s, &e, perms) != 3)
			continue;
		if (e <= addr || s >= end)
			continue;
		grown = realloc(v, (n + 1) * sizeof(*v));
		if (!grown) {
			ret = -ENOMEM;
			break;
		}
		v = grown;
		v[n].start = s;
		v[n].end = e;
		v[n].prot = (perms[0] == 'r' ? PROT_READ : 0) |
			    (perms[1] == 'w' ? PROT_WRITE : 0) |
			    (perms[2] == 'x' ? PROT_EXEC : 0);
		n++;
	}
	free(line);
	fclose(f);
	if (ret) {
		free(v);
		return ret;
	}
	*out = v;
	*nr = n;
	return 0;
}

/*
 * split: in each PMD-sized block of the range, mprotect the first mapped
 * page to another protection and back.  Changing part of a PMD mapping
 * splits it into PTEs and leaves the folio whole; the second mprotect
 * merges the VMAs again.  Holes are skipped, as the model skips them.
 */
static int folio_of(struct kernel *k, uint64_t pfn, struct kfolio *f);

/*
 * Can a PMD map a THP at @block of @proc (one VMA, [@vstart, @vend),
 * covers the whole block, and its first page is the head of a PMD-size
 * folio)?  What it cannot be is not split's to touch.
 */
static bool block_has_pmd_folio(struct kernel *k, int proc,
				unsigned long block, unsigned long vstart,
				unsigned long vend)
{
	char path[64];
	uint64_t pm;
	struct kfolio f;
	int fd;
	bool yes = false;

	if (vstart > block || vend < block + k->pmd_size)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/pagemap",
		 (int)k->procs[proc].pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return true;	/* cannot tell: split as before */
	if (pread(fd, &pm, sizeof(pm), block / k->page_size * sizeof(pm)) ==
	    sizeof(pm) && (pm & PM_PRESENT)) {
		k->last.nr = 0;	/* what an observe found may be gone */
		yes = !folio_of(k, pm & PM_PFN_MASK, &f) &&
		      f.head == (pm & PM_PFN_MASK) &&
		      f.nr == k->pmd_size / k->page_size;
		k->last.nr = 0;
	}
	close(fd);
	return yes;
}

/*
 * The span arm64's contpte folds (CONT_PTES entries: 64K of 4K pages, 2M
 * of 16K or 64K ones); a page elsewhere.
 */
static unsigned long cont_block_size(const struct kernel *k)
{
#ifdef __aarch64__
	return k->page_size == 4096 ? 64UL << 10 : 2UL << 20;
#else
	return k->page_size;
#endif
}

/*
 * The page of @lo's PMD block that split's mprotect round trip changes:
 * the last of @lo's contpte block.  The round trip unfolds that block on
 * arm64, and arm64 folds a block again only when its last entry is
 * written (contpte_try_fold()); with the first page the block would stay
 * unfolded, an effect `split` must not have (a later batch over the
 * folio stops where folded and unfolded blocks meet: MADV_FREE then
 * splits the folio).  On x86 it is @lo's page.
 */
static unsigned long split_page(const struct kernel *k, unsigned long lo,
				unsigned long vend)
{
	unsigned long cont = cont_block_size(k);
	unsigned long last = (lo & ~(cont - 1)) + cont - k->page_size;

	return last < vend ? last : lo;
}

static int do_split(struct kernel *k, int proc, const struct stmt *st,
		    struct stmt_result *res)
{
	unsigned long addr = range_addr(k, st), end = addr + st->len, block;
	struct vma_prot *v = NULL;
	struct kreply r;
	struct kcmd c;
	int nr = 0, i = 0, ret;

	ret = read_vmas(k->procs[proc].pid, addr, end, &v, &nr);
	if (ret)
		return ret;
	for (block = addr & ~(k->pmd_size - 1); block < end && !ret;
	     block += k->pmd_size) {
		unsigned long lo = block > addr ? block : addr;
		unsigned long hi = block + k->pmd_size < end ?
				   block + k->pmd_size : end;

		while (i < nr && v[i].end <= lo)
			i++;
		if (i == nr || v[i].start >= hi)
			continue;
		/*
		 * Only where a PMD may map a THP: the mprotect round trip has
		 * effects of its own elsewhere (it makes an exclusive anon
		 * page's read-only PTE writable), which `split` must not have.
		 */
		if (!block_has_pmd_folio(k, proc, block, v[i].start,
					 v[i].end))
			continue;
		init_cmd(k, &c, KOP_SPLIT_BLOCK);
		c.addr = split_page(k, v[i].start > lo ? v[i].start : lo,
				    v[i].end);
		c.prot = v[i].prot;
		c.prot2 = other_prot(v[i].prot);
		ret = call(k, proc, &c, NULL, 0, &r, NULL, NULL);
		if (!ret) {
			res->faults += r.faults;
			ret = r.err;
		}
	}
	free(v);
	return ret;
}

/*
 * resize: mremap(addr, the region's length in this process, LEN, 0),
 * without MREMAP_MAYMOVE.  A grow past the region's room is refused as
 * if another mapping began at the room's end: the scenario process maps
 * one there for the call (the next region may not be placed yet, so the
 * room is this rule, not what happens to be free), and the kernel says
 * EFAULT or ENOMEM in its own order, as the model does.
 */
static int do_resize(struct kernel *k, int proc, const struct stmt *st,
		     struct stmt_result *res)
{
	const struct scn_region_addr *r = &k->regions[st->region];
	unsigned long *len = &k->procs[proc].len[st->region];
	bool past_room = st->len > *len && st->len > r->room_end - r->addr;
	struct kreply rep;
	struct kcmd c;
	int ret;

	if (!r->placed)
		return EFAULT;
	init_cmd(k, &c, KOP_RESIZE);
	c.addr = r->addr;
	c.len = *len;
	c.new_len = st->len;
	c.new_addr = past_room ? r->room_end : 0;
	ret = call(k, proc, &c, NULL, 0, &rep, NULL, NULL);
	if (ret)
		return ret;
	res->faults = rep.faults;
	ret = rep.err;
	if (rep.host_limit) {
		host_limit(k, "host limit: nothing could be mapped at the end"
			   " of %s's room (%#lx) to stand for the next"
			   " mapping (%s)", k->s->regions[st->region].name,
			   r->room_end, strerror(ret));
		return ret;
	}
	if (!ret)
		*len = st->len;
	/*
	 * Inside the room nothing is in the way: ENOMEM is the commit
	 * limit refusing the grow (a `room` of many gigabytes), as for mmap.
	 */
	if (ret == ENOMEM && st->len > c.len && !past_room)
		mmap_refused(k, st->len - c.len);
	return ret;
}

/* One process statement; returns 0, a positive errno or -errno. */
static int kernel_do(struct kernel *k, int proc, const struct stmt *st,
		     struct stmt_result *res)
{
	unsigned long addr = st->region >= 0 ? range_addr(k, st) : 0;
	struct kernel_proc *p = &k->procs[proc];
	struct kcmd c;
	int ret;

	init_cmd(k, &c, KOP_MMAP);
	c.addr = addr;
	c.len = st->len;
	c.handle = st->handle;
	c.value = st->value;
	switch (st->kind) {
	case ST_MMAP:
		/* The region is the process's even if the mapping fails. */
		proc_add_region(p, st->region, st->len);
		ret = scenario_place_region(&k->place, &k->regions[st->region],
					    st->at, st->len, st->room);
		if (ret)
			return ret;
		init_cmd(k, &c, KOP_MMAP);	/* the span grew */
		c.addr = k->regions[st->region].addr;
		c.len = st->len;
		c.prot = os_prot(st->prot);
		c.flags = st->populate ? MAP_POPULATE : 0;
		if (st->huge != SCN_HUGE_DEFAULT)
			c.advice = st->huge == SCN_HUGE_HUGEPAGE ?
				   MADV_HUGEPAGE : MADV_NOHUGEPAGE;
		ret = do_simple(k, proc, &c, res);
		if (ret == ENOMEM)
			mmap_refused(k, st->len);
		return ret;
	case ST_MUNMAP:
		c.op = KOP_MUNMAP;
		return do_simple(k, proc, &c, res);
	case ST_MMAP_FIXED:
		c.op = KOP_MMAP;	/* over the region's own range */
		c.prot = os_prot(st->prot);
		c.flags = MAP_FIXED;
		return do_simple(k, proc, &c, res);
	case ST_MPROTECT:
		c.op = KOP_MPROTECT;
		c.prot = os_prot(st->prot);
		return do_simple(k, proc, &c, res);
	case ST_MADVISE:
		c.op = KOP_MADVISE;
		c.advice = st->advice;
		return do_simple(k, proc, &c, res);
	case ST_WRITE:
	case ST_READ:
		c.op = st->kind == ST_WRITE ? KOP_WRITE : KOP_READ;
		c.stride = st->stride;
		return do_simple(k, proc, &c, res);
	case ST_FORK:
		return do_fork(k, proc, st, res);
	case ST_EXIT:
		return do_exit(k, proc);
	case ST_REGISTER:
		c.op = KOP_REGISTER;
		return do_simple(k, proc, &c, res);
	case ST_UNREGISTER:
		c.op = KOP_UNREGISTER;
		return do_simple(k, proc, &c, res);
	case ST_DIO_WRITE:
	case ST_DIO_READ:
		if (k->env.scratch_fd < 0)
			return EINVAL;
		c.op = st->kind == ST_DIO_WRITE ? KOP_DIO_WRITE : KOP_DIO_READ;
		if (k->dio_filled)
			c.flags = KDIO_FILLED;
		return do_simple(k, proc, &c, res);
	case ST_VMSPLICE:
		c.op = KOP_VMSPLICE;
		return do_simple(k, proc, &c, res);
	case ST_DRAIN: {
		struct kreply r;

		c.op = KOP_DRAIN;
		ret = call(k, proc, &c, NULL, 0, &r, &res->data,
			   &res->data_len);
		if (ret)
			return ret;
		res->faults = r.faults;
		return r.err;
	}
	case ST_MREMAP:
		proc_add_region(p, st->new_region, st->len);
		ret = scenario_place_region(&k->place,
					    &k->regions[st->new_region],
					    st->at, st->len, 0);
		if (ret)
			return ret;
		init_cmd(k, &c, KOP_MREMAP);
		c.addr = addr;
		c.len = st->len;
		c.new_addr = k->regions[st->new_region].addr;
		c.flags = st->dontunmap ? MREMAP_DONTUNMAP : 0;
		return do_simple(k, proc, &c, res);
	case ST_SPLIT:
		return do_split(k, proc, st, res);
	case ST_RESIZE:
		return do_resize(k, proc, st, res);
	case ST_TOUCH:
		return do_touch(k, proc, st, res);
	case ST_SPAWN:
		return do_spawn(k, st, res);
	case ST_EXEC:
		return do_exec(k, proc, res);
	case ST_MTHP:
	case ST_OBSERVE:
		break;
	}
	return -EINVAL;
}

/*
 * Have @proc do the pre-faulting every command does before its measured
 * part (its own memory populated on its first command, its stack, its
 * buffers written again after a fork made them copy-on-write): those
 * faults are not the statement's, and would be in its kernel counters.
 */
static int kernel_settle(struct kernel *k, const struct stmt *st)
{
	struct kreply r;
	struct kcmd c;
	int ret;

	init_cmd(k, &c, KOP_SETTLE);
	/*
	 * A dio-read's file is written through the O_DIRECT descriptor
	 * (pinning the writer's buffer): now, not in the window.
	 */
	if (st->kind == ST_DIO_READ && k->env.scratch_fd >= 0) {
		c.op = KOP_DIO_FILL;
		c.len = st->len;
		c.value = st->value;
	}
	ret = call(k, st->proc, &c, NULL, 0, &r, NULL, NULL);
	if (!ret && c.op == KOP_DIO_FILL && !r.err)
		k->dio_filled = true;
	return ret;
}

/*
 * The mapping of /proc/PID/maps that holds @addr, into @buf ("" if none):
 * where a process's own fault was.
 */
static void describe_addr(pid_t pid, unsigned long addr, char *buf,
			  size_t size)
{
	char path[64], line[512];
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && addr >= lo &&
		    addr < hi) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(buf, size, "%.*s", (int)size - 1, line);
			break;
		}
	}
	fclose(f);
}

/* The statement's faults on the processes' own pages, said in its note. */
static void note_strays(struct kernel *k, struct stmt_result *res)
{
	const struct kernel_proc *p = &k->procs[k->stray_proc];
	char where[300];

	describe_addr(p->pid, k->stray_addr, where, sizeof(where));
	/* A long mapping's name is cut (%.100s): the note has 256 bytes. */
	snprintf(res->note, sizeof(res->note), "%lu fault%s of %s's own,"
		 " outside the scenario's regions, not counted: the first at"
		 " 0x%lx (%.100s)", k->stmt_strays,
		 k->stmt_strays == 1 ? "" : "s",
		 k->s->proc_names[k->stray_proc], k->stray_addr,
		 where[0] ? where : "no mapping now");
}

static void kernel_exec(struct backend *b, const struct stmt *st,
			struct stmt_result *res)
{
	struct kernel *k = to_kernel(b);
	struct kstats before, after;
	bool fc_ok = false;
	int ret;

	res->has_stats = 0;
	/* Only a process whose fork failed can be missing here. */
	if (!k->procs[st->proc].pid) {
		res->err = ESRCH;
		return;
	}
	/*
	 * The counters are the whole machine's: read them right before the
	 * statement's first command and right after its last reply (a fork's
	 * child's hello, an exit's reap), so the window holds the
	 * statement's work and as little else as can be.  The acting
	 * process pre-faults first (kernel_settle()), outside the window.
	 */
	if (k->kst && !k->kst_failed &&
	    (kernel_settle(k, st) || kstats_read(k->kst, &before)))
		k->kst_failed = true;
	/* The same for --count: the process's pre-faulting is its own. */
	if (k->fc && (k->kst || !kernel_settle(k, st)))
		fc_ok = !fcount_begin(k->fc, k->procs[st->proc].pid);
	k->stmt_ns = 0;
	k->stmt_strays = 0;
	k->stmt_unattributed = false;
	ret = kernel_do(k, st->proc, st, res);
	if (k->stmt_strays)
		note_strays(k, res);
	else if (k->stmt_unattributed)
		snprintf(res->note, sizeof(res->note), "more faults than the"
			 " fault sampler holds: the count is ru_minflt's,"
			 " the process's own pages included if it took any");
	k->dio_filled = false;
	if (fc_ok && !fcount_end(k->fc, res->fcounts)) {
		res->fcount_names = k->fc->names;
		res->nr_fcounts = k->fc->nr;
	}
	if (k->kst && !k->kst_failed && !kstats_read(k->kst, &after)) {
		kstats_sub(&res->kstats, &after, &before);
		res->has_kstats = 1;
	}
	res->err = ret < 0 ? -ret : ret;
	res->time_ns = k->stmt_ns;
	res->has_time = 1;
	if (k->fatal[0]) {
		memcpy(res->fatal, k->fatal, sizeof(res->fatal));
		k->fatal[0] = '\0';
	}
	if (res->err) {
		free(res->data);
		res->data = NULL;
		res->data_len = 0;
	}
}

/* ---- snapshots ---------------------------------------------------------- */

/* kpageflags of [pfn, pfn + nr); entries past the end read as 0. */
static int kpf_read(struct kernel *k, uint64_t pfn, unsigned long nr)
{
	ssize_t n;

	memset(k->kpf, 0, nr * sizeof(k->kpf[0]));
	n = pread(k->kpf_fd, k->kpf, nr * sizeof(k->kpf[0]),
		  pfn * sizeof(k->kpf[0]));
	return n < 0 ? -errno : 0;
}

static bool kpf_tail(uint64_t flags)
{
	return (flags & KPF(KPF_COMPOUND_TAIL)) &&
	       !(flags & KPF(KPF_COMPOUND_HEAD));
}

/*
 * The folio @pfn belongs to: its head and number of pages.  A page that
 * is neither head nor tail is a folio of its own (the zero page too); a
 * tail walks back to its head, and the head's tails are counted forward.
 * The huge zero page is a compound page like any THP.
 */
static int folio_of(struct kernel *k, uint64_t pfn, struct kfolio *f)
{
	uint64_t head, p;
	unsigned long i, n;
	int ret;

	if (k->last.nr && pfn >= k->last.head &&
	    pfn < k->last.head + k->last.nr) {
		*f = k->last;
		return 0;
	}
	ret = kpf_read(k, pfn, 1);
	if (ret)
		return ret;
	/* Every page of the huge zero folio has it, not just its head. */
	f->zero = !!(k->kpf[0] & KPF(KPF_ZERO_PAGE));
	if (!(k->kpf[0] & (KPF(KPF_COMPOUND_HEAD) | KPF(KPF_COMPOUND_TAIL)))) {
		f->head = pfn;
		f->nr = 1;
		return 0;
	}
	/* Back to the head. */
	head = pfn;
	if (kpf_tail(k->kpf[0])) {
		bool found = false;

		for (p = pfn; !found && p > 0 && pfn - p < MAX_FOLIO_PAGES;
		     p -= n) {
			n = p < KPF_WINDOW ? p : KPF_WINDOW;
			ret = kpf_read(k, p - n, n);
			if (ret)
				return ret;
			for (i = n; i-- > 0;) {
				if (k->kpf[i] & KPF(KPF_COMPOUND_HEAD)) {
					head = p - n + i;
					found = true;
					break;
				}
				if (!kpf_tail(k->kpf[i]))
					return -EIO;	/* changed under us */
			}
		}
		if (!found)
			return -EIO;
	}
	/* Forward over the tails. */
	f->head = head;
	f->nr = 1;
	for (p = head + 1; f->nr < MAX_FOLIO_PAGES; p += KPF_WINDOW) {
		ret = kpf_read(k, p, KPF_WINDOW);
		if (ret)
			return ret;
		for (i = 0; i < KPF_WINDOW && kpf_tail(k->kpf[i]); i++)
			f->nr++;
		if (i < KPF_WINDOW)
			break;
	}
	if (pfn >= f->head + f->nr)
		return -EIO;
	k->last = *f;
	return 0;
}

/* The first byte of each of @nr pages, read by the process itself. */
static int peek(struct kernel *k, int proc, unsigned long nr)
{
	struct kreply r;
	struct kcmd c;
	int ret;

	if (!nr)
		return 0;
	init_cmd(k, &c, KOP_PEEK);
	c.len = nr;
	ret = call(k, proc, &c, k->peek_addr, nr * sizeof(k->peek_addr[0]),
		   &r, NULL, NULL);
	if (ret)
		return ret;
	return r.err ? -r.err : 0;
}

static int observe_batch(struct kernel *k, int proc, int region, int pm_fd,
			 unsigned long first, unsigned long n,
			 struct snapshot *snap)
{
	const struct scn_region_addr *r = &k->regions[region];
	unsigned long i, nr_peek = 0;
	struct snap_page pg;
	struct kfolio f;
	ssize_t got;
	int ret;

	memset(k->pm, 0, n * sizeof(k->pm[0]));
	if (r->placed) {
		got = pread(pm_fd, k->pm, n * sizeof(k->pm[0]),
			    (r->addr / k->page_size + first) * sizeof(k->pm[0]));
		if (got < 0)
			return -errno;
	}
	for (i = 0; i < n; i++)
		if (k->pm[i] & PM_PRESENT)
			k->peek_addr[nr_peek++] = r->addr +
						  (first + i) * k->page_size;
	ret = peek(k, proc, nr_peek);
	if (ret)
		return ret;
	nr_peek = 0;
	for (i = 0; i < n; i++) {
		memset(&pg, 0, sizeof(pg));
		pg.proc = proc;
		pg.region = region;
		pg.off = (first + i) * k->page_size;
		pg.present = !!(k->pm[i] & PM_PRESENT);
		if (pg.present) {
			pg.frame = k->pm[i] & PM_PFN_MASK;
			ret = folio_of(k, pg.frame, &f);
			if (ret)
				return ret;
			pg.folio_size = f.nr * k->page_size;
			pg.index = pg.frame - f.head;
			pg.data = k->peek_byte[nr_peek++];
			pg.zero = f.zero;
		}
		ret = snapshot_add(snap, &pg);
		if (ret)
			return ret;
	}
	return 0;
}

static int observe_proc(struct kernel *k, int proc, struct snapshot *snap)
{
	char path[64];
	int region, pm_fd, ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/pagemap",
		 (int)k->procs[proc].pid);
	pm_fd = open(path, O_RDONLY);
	if (pm_fd < 0)
		return -errno;
	for (region = 0; region < k->s->nr_regions && !ret; region++) {
		unsigned long nr = k->procs[proc].len[region] / k->page_size;
		unsigned long done, n;

		if (!proc_has_region(&k->procs[proc], region))
			continue;
		for (done = 0; done < nr && !ret; done += n) {
			n = nr - done < OBSERVE_BATCH ? nr - done :
							OBSERVE_BATCH;
			ret = observe_batch(k, proc, region, pm_fd, done, n,
					    snap);
		}
	}
	close(pm_fd);
	return ret;
}

static int kernel_observe(struct backend *b, struct snapshot *snap)
{
	struct kernel *k = to_kernel(b);
	int proc, ret;

	/* Folios change between statements: nothing is kept across them. */
	k->last.nr = 0;
	for (proc = 0; proc < k->s->nr_procs; proc++) {
		if (!k->procs[proc].pid)
			continue;
		ret = observe_proc(k, proc, snap);
		if (ret)
			return ret;
	}
	k->last.nr = 0;
	return 0;
}

/* ---- the run ------------------------------------------------------------ */

static unsigned long read_ulong_file(const char *path, unsigned long dflt)
{
	unsigned long v;
	FILE *f = fopen(path, "r");

	if (!f)
		return dflt;
	if (fscanf(f, "%lu", &v) != 1)
		v = dflt;
	fclose(f);
	return v;
}

/*
 * An unlinked scratch file that takes O_DIRECT I/O (O_TMPFILE where the
 * file system has it, else made and unlinked at once): in build/ under the
 * current directory, /var/tmp or /tmp, whichever first takes an aligned
 * write of the largest I/O a statement does (SCN_DIO_CHUNK).  Returns
 * the fd or -errno.
 *
 * Written whole before the scenario starts, so that every dio-write
 * lands on blocks the file already has, in one extent: the filesystem
 * asks the direct-I/O path for the user pages once per extent (ext4
 * through iomap), and each ask is one GUP - one failed GUP-fast attempt
 * more on pages a fork shares, one pin acquired and released more in
 * /proc/vmstat.  A file of 4K (as it was) made every write beyond 4K two
 * extents, and the kernel's pin counts one or two off the model's, which
 * pins a statement's range in one call (docs/MODEL.md).
 */
static int open_scratch(struct kernel *k)
{
	static const char *const dirs[] = { "build", "/var/tmp", "/tmp" };
	const size_t len = SCN_DIO_CHUNK;
	char path[PATH_MAX];
	void *buf;
	size_t i;
	int fd, ret = -ENOENT;

	if (posix_memalign(&buf, 4096, len))
		return -ENOMEM;
	memset(buf, 0, len);
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		/* A file with no name at all, where the file system has
		 * them: nothing is left behind even by SIGKILL. */
		fd = open(dirs[i], O_RDWR | O_TMPFILE | O_DIRECT, 0600);
		if (fd < 0) {
			snprintf(path, sizeof(path), "%s/ptebatch-dio-%d",
				 dirs[i], (int)getpid());
			fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_DIRECT,
				  0600);
			if (fd < 0) {
				ret = -errno;
				continue;
			}
			unlink(path);
		}
		if (pwrite(fd, buf, len, 0) == (ssize_t)len && !fdatasync(fd)) {
			verbose(k, "O_DIRECT scratch file in %s", dirs[i]);
			free(buf);
			return fd;
		}
		ret = -errno;
		close(fd);
	}
	free(buf);
	return ret;
}

static bool uses_dio(const struct scenario *s)
{
	int i;

	for (i = 0; i < s->nr_stmts; i++)
		if (s->stmts[i].kind == ST_DIO_READ ||
		    s->stmts[i].kind == ST_DIO_WRITE)
			return true;
	return false;
}

static void kernel_free_regions(struct kernel *k)
{
	free(k->regions);
	free(k->region_bits);
	free(k->lens);
	k->regions = NULL;
	k->region_bits = NULL;
	k->lens = NULL;
}

/* The per-region state of @s's regions and processes, all zero. */
static int kernel_alloc_regions(struct kernel *k, const struct scenario *s)
{
	size_t nr = s->nr_regions ? s->nr_regions : 1;
	int i;

	k->region_words = (nr + 63) / 64;
	k->regions = calloc(nr, sizeof(*k->regions));
	k->region_bits = calloc((size_t)s->nr_procs * k->region_words,
				sizeof(*k->region_bits));
	k->lens = calloc((size_t)s->nr_procs * nr, sizeof(*k->lens));
	if (!k->regions || !k->region_bits || !k->lens) {
		kernel_free_regions(k);
		return -ENOMEM;
	}
	for (i = 0; i < s->nr_procs; i++) {
		k->procs[i].regions = k->region_bits + i * k->region_words;
		k->procs[i].len = k->lens + i * nr;
	}
	return 0;
}

static void kernel_reset(struct kernel *k)
{
	int i, j;

	memset(k->procs, 0, sizeof(k->procs));
	for (i = 0; i < SCN_MAX_PROCS; i++) {
		for (j = 0; j < 4; j++)
			k->fds[i][j] = -1;
		k->parent[i] = -1;
	}
	k->kpf_fd = -1;
	k->kst_failed = false;
	k->env.scratch_fd = -1;
	k->last.nr = 0;
	k->fatal[0] = '\0';
	k->host_limit[0] = '\0';
}

/* Kill and reap every process, close every descriptor, restore. */
static void kernel_teardown(struct kernel *k)
{
	int i, j;

	/* Youngest first, as a shell's children would go. */
	for (i = SCN_MAX_PROCS - 1; i >= 0; i--) {
		if (k->procs[i].pid > 0) {
			kill(k->procs[i].pid, SIGKILL);
			reap(k, i);
		}
		for (j = 0; j < 4; j++)
			close_fd(&k->fds[i][j]);
	}
	close_fd(&k->kpf_fd);
	if (k->fc) {
		fcount_close(k->fc);
		free(k->fc);
		k->fc = NULL;
	}
	if (k->kst) {
		kstats_close(k->kst);
		free(k->kst);
		k->kst = NULL;
		if (k->thp_disable_saved >= 0)
			prctl(PR_SET_THP_DISABLE, k->thp_disable_saved, 0, 0,
			      0);
	}
	close_fd(&k->env.scratch_fd);
	if (k->sigpipe_saved)
		sigaction(SIGPIPE, &k->old_sigpipe, NULL);
	k->sigpipe_saved = false;
	if (k->thp_applied)
		thp_settings_restore();
	k->thp_applied = false;
	kernel_free_regions(k);
}

/*
 * Where the run's regions will lie: [SCN_FIRST_REGION_ADDR, the end), each
 * mmap and mremap placed in turn on a copy of the run's placement.
 */
static unsigned long regions_end(const struct kernel *k,
				 const struct scenario *s)
{
	struct scn_placement pl = k->place;
	struct scn_region_addr r;
	int i;

	for (i = 0; i < s->nr_stmts; i++) {
		const struct stmt *st = &s->stmts[i];

		if (st->kind == ST_MMAP)
			scenario_place_region(&pl, &r, st->at, st->len,
					      st->room);
		else if (st->kind == ST_MREMAP)
			scenario_place_region(&pl, &r, st->at, st->len, 0);
	}
	return pl.cursor;
}

/*
 * The regions go where the model puts them; something of the tool's own
 * there (a sanitizer's shadow memory, say) would make every mmap fail.
 * Returns 0, or -EOPNOTSUPP with skip_reason naming the mapping.
 */
static int check_addresses_free(struct kernel *k, const struct scenario *s)
{
	unsigned long lo = SCN_FIRST_REGION_ADDR, hi = regions_end(k, s);
	unsigned long start, end;
	char *line = NULL;
	size_t cap = 0;
	int ret = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return 0;
	while (!ret && getline(&line, &cap, f) > 0) {
		if (sscanf(line, "%lx-%lx", &start, &end) == 2 &&
		    start < hi && end > lo) {
			line[strcspn(line, "\n")] = '\0';
			ret = skip(k, "the regions' addresses (%#lx-%#lx) are"
				   " taken in this process: %s", lo, hi, line);
		}
	}
	free(line);
	fclose(f);
	return ret;
}

#if defined(__SANITIZE_THREAD__)
#define KERNEL_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KERNEL_UNDER_TSAN 1
#endif
#endif

/*
 * The most anonymous memory @s can make its processes hold: for each
 * process and region, what its writes, dio-reads, registers and write
 * populates (which fault pages in writable) cover, each statement rounded up to 2M (a
 * fault may map a whole THP), and no more than the region rounded the
 * same way; summed over every process and region, as if nothing were
 * ever freed or shared.  Reads map the zero page and cost nothing.
 * Deliberately an upper bound: a run it lets through cannot be the OOM
 * killer's.
 */
static bool allocates_anon(const struct stmt *st)
{
	switch (st->kind) {
	case ST_TOUCH:		/* its w runs, item by item */
	case ST_WRITE:
	case ST_DIO_READ:
	case ST_REGISTER:
		return true;
	case ST_MMAP:		/* MAP_POPULATE of rw faults for write */
		return st->populate && st->prot == SCN_PROT_RW;
	case ST_MADVISE:
		return st->advice == MADV_POPULATE_WRITE;
	default:
		return false;
	}
}

/* @len more bytes written to @region by @proc, in 2M blocks, capped. */
static void anon_add(const struct scenario *s, unsigned long *bytes,
		     int proc, int region, unsigned long len)
{
	const unsigned long block = SCN_REGION_ALIGN;
	unsigned long *b = &bytes[proc * s->nr_regions + region];
	unsigned long cap = round_up(s->regions[region].max_len, block);

	*b += round_up(len, block);
	if (*b > cap)
		*b = cap;
}

static unsigned long scenario_anon_bound(const struct scenario *s)
{
	unsigned long *bytes, total = 0;
	int i;

	bytes = calloc((size_t)s->nr_procs * s->nr_regions, sizeof(*bytes));
	if (!bytes)
		return ULONG_MAX;
	for (i = 0; i < s->nr_stmts; i++) {
		const struct stmt *st = &s->stmts[i];
		unsigned int j;

		if (!allocates_anon(st))
			continue;
		if (st->kind != ST_TOUCH) {
			anon_add(s, bytes, st->proc, st->region, st->len);
			continue;
		}
		for (j = 0; j < st->nr_items; j++)
			if (st->items[j].write)
				anon_add(s, bytes, st->proc, st->items[j].region,
					 (unsigned long)st->items[j].count *
					 s->page_size);
	}
	for (i = 0; i < s->nr_procs * s->nr_regions; i++)
		total += bytes[i];
	free(bytes);
	return total;
}

/* Probe what the run needs; -EOPNOTSUPP with skip_reason if it cannot. */
static int kernel_probe(struct kernel *k, const struct scenario *s)
{
	unsigned long need, avail;
	char a[32], b[32];

	uint64_t flags;

#ifdef KERNEL_UNDER_TSAN
	return skip(k, "built with ThreadSanitizer: its runtime faults in"
		    " shadow memory in every process, so the fault counts would"
		    " not be the scenario's");
#endif
	if (geteuid() != 0)
		return skip(k, "not root: the kernel backend needs to write THP"
			    " settings and read /proc/kpageflags");
	k->kpf_fd = open("/proc/kpageflags", O_RDONLY);
	if (k->kpf_fd < 0 ||
	    pread(k->kpf_fd, &flags, sizeof(flags), 0) != sizeof(flags))
		return skip(k, "cannot read /proc/kpageflags: %s",
			    strerror(errno));
	if (s->page_size != k->page_size)
		return -EINVAL;
	/* Refused before anything runs, not half-run and OOM-killed. */
	need = scenario_anon_bound(s);
	avail = meminfo_bytes("MemAvailable");
	if (avail && need > avail)
		return skip(k, "host limit: the scenario may write up to %s of"
			    " anonymous memory (its writes, dio-reads,"
			    " registers and write populates per process and"
			    " region, each rounded up to 2M), more than the %s"
			    " this machine has available (MemAvailable)",
			    gib_text(a, sizeof(a), need),
			    gib_text(b, sizeof(b), avail));
	return check_addresses_free(k, s);
}

static int kernel_spawn_p0(struct kernel *k)
{
	struct sigaction ign;
	int i;

	for (i = 0; i < k->s->nr_procs; i++) {
		int cmd[2], reply[2];

		if (pipe(cmd))
			return -errno;
		if (pipe(reply)) {
			close(cmd[0]);
			close(cmd[1]);
			return -errno;
		}
		k->fds[i][KFD_CMD_R] = cmd[0];
		k->fds[i][KFD_CMD_W] = cmd[1];
		k->fds[i][KFD_REPLY_R] = reply[0];
		k->fds[i][KFD_REPLY_W] = reply[1];
	}
	/* A process that died must not kill the coordinator. */
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	if (sigaction(SIGPIPE, &ign, &k->old_sigpipe))
		return -errno;
	k->sigpipe_saved = true;
	/*
	 * The ends of P0's subtree go with it; those of a process a spawn
	 * will start (and of its subtree) stay here until then.
	 */
	return start_root(k, 0);
}

/* The kernel accounting counters, for want_kstats (backend/kstats.c). */
static int kernel_kstats_open(struct kernel *k)
{
	int ret;

	k->kst = malloc(sizeof(*k->kst));
	if (!k->kst)
		return -ENOMEM;
	/*
	 * The coordinator's own faults are in the window too (the counters
	 * are the machine's): no large folio for it, so its heap growing
	 * in a window never reads as a statement's mTHP fault.  Its
	 * scenario processes turn THP back on (kproc_serve()).
	 */
	k->thp_disable_saved = prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0);
	if (k->thp_disable_saved >= 0)
		prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	ret = kstats_open(k->kst, k->page_size);
	if (ret) {
		free(k->kst);
		k->kst = NULL;
		return skip(k, "cannot read the kernel's counters"
			    " (/proc/vmstat, /proc/sys/vm/stat_refresh): %s",
			    strerror(-ret));
	}
	return 0;
}

/*
 * The record's arch in the model's names (make ARCH=...), so that a
 * record of this kernel reads back with its page size and sits beside
 * the model's: uname's "aarch64" is one of three granules, "arm64-4k",
 * "-16k" or "-64k" by this kernel's page size.  Any other machine keeps
 * uname's name.
 */
static const char *kernel_arch_name(struct kernel *k)
{
	if (strcmp(k->uts.machine, "aarch64"))
		return k->uts.machine;
	snprintf(k->arch, sizeof(k->arch), "arm64-%luk", k->page_size >> 10);
	return k->arch;
}

static int kernel_start(struct backend *b, const struct scenario *s)
{
	struct kernel *k = to_kernel(b);
	char why[256];
	int i, ret;

	if (k->running)
		return -EBUSY;
	k->s = s;
	k->base.skip_reason[0] = '\0';
	kernel_reset(k);
	k->page_size = sysconf(_SC_PAGESIZE);
	k->pmd_size = read_ulong_file(THP_SYSFS_DIR "/hpage_pmd_size",
				      SCN_REGION_ALIGN);
	scenario_place_init(&k->place, k->pmd_size);
	ret = kernel_alloc_regions(k, s);
	if (ret)
		goto fail;

	ret = kernel_probe(k, s);
	if (ret)
		goto fail;
	ret = thp_settings_apply(s->mthp, why, sizeof(why));
	if (ret == -EOPNOTSUPP) {
		ret = skip(k, "%s", why);
		goto fail;
	}
	if (ret) {
		fprintf(stderr, "kernel backend: %s\n", why);
		goto fail;
	}
	k->thp_applied = true;
	k->have_fallback = !thp_fallback_snapshot(&k->fallback);

	if (uses_dio(s)) {
		ret = open_scratch(k);
		if (ret < 0) {
			ret = skip(k, "no directory for an O_DIRECT scratch"
				   " file (build/, /var/tmp, /tmp): %s",
				   strerror(-ret));
			goto fail;
		}
		k->env.scratch_fd = ret;
	}
	k->env.nr_procs = s->nr_procs;
	k->env.fds = k->fds;
	k->env.parent = k->parent;
	k->env.page_size = k->page_size;
	k->env.no_fault_sampler = b->timed;
	k->env.pipe_max = read_ulong_file("/proc/sys/fs/pipe-max-size",
					  1UL << 20);
	for (i = 0; i < s->nr_stmts; i++)
		if (s->stmts[i].kind == ST_FORK)
			k->parent[s->stmts[i].child] = s->stmts[i].proc;

	if (b->want_kstats) {
		ret = kernel_kstats_open(k);
		if (ret)
			goto fail;
	}
	if (b->count_list) {
		k->fc = calloc(1, sizeof(*k->fc));
		if (!k->fc) {
			ret = -ENOMEM;
			goto fail;
		}
		if (fcount_open(k->fc, b->count_list, why, sizeof(why))) {
			free(k->fc);
			k->fc = NULL;
			ret = skip(k, "%s", why);
			goto fail;
		}
	}
	ret = kproc_prepare();
	if (!ret)
		ret = kernel_spawn_p0(k);
	if (ret)
		goto fail;
	if (uname(&k->uts) == 0)
		k->base.arch = kernel_arch_name(k);
	k->running = true;
	return 0;
fail:
	kernel_teardown(k);
	return ret < 0 ? ret : -EIO;
}

static int kernel_finish(struct backend *b)
{
	struct kernel *k = to_kernel(b);
	struct thp_fallback after;
	int ret = 0;

	if (!k->running)
		return 0;
	kernel_teardown(k);
	k->running = false;
	if (k->host_limit[0]) {
		snprintf(k->base.skip_reason, sizeof(k->base.skip_reason), "%s",
			 k->host_limit);
		return -EOPNOTSUPP;
	}
	/* A folio the scenario asked for that did not materialize makes the
	 * record not Linux's answer to the scenario: SKIP. */
	if (k->have_fallback && !thp_fallback_snapshot(&after) &&
	    thp_fallback_check(&k->fallback, &after, k->base.skip_reason,
			       sizeof(k->base.skip_reason)))
		ret = -EOPNOTSUPP;
	return ret;
}

static void kernel_destroy(struct backend *b)
{
	if (!b)
		return;
	kernel_finish(b);
	free(to_kernel(b));
}

static const struct backend_ops kernel_ops = {
	.name = "kernel",
	.start = kernel_start,
	.exec = kernel_exec,
	.observe = kernel_observe,
	.finish = kernel_finish,
	.check = NULL,
	.destroy = kernel_destroy,
};

struct backend *kernel_backend_create(const struct kernel_options *opt)
{
	struct kernel *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	if (opt)
		k->opt = *opt;
	kernel_reset(k);
	k->base.ops = &kernel_ops;
	k->base.variant = NULL;
	k->base.arch = "-";
	return &k->base;
}
