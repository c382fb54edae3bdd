/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * host.h - what this machine's kernel does differently from mainline
 * Linux's defaults, and what on it can make a count vary from run to run,
 * found by looking (a probe, sysfs, /proc) rather than by its name; and
 * the machine itself: its memory, its CPU, the name a result carries.
 *
 * `ptebatch diff` holds the model to the kernel: where the kernel is
 * configured otherwise (it maps no zero page), the model runs configured
 * the same way; where something outside the scenario can change a count
 * (DAMON's transient folio references, other CPUs' LRU caches: a THP is
 * reused on a write fault only while nothing else holds a reference),
 * diff says so once and tells a varying count from a model difference.
 */
#ifndef BACKEND_HOST_H
#define BACKEND_HOST_H

#include <stdbool.h>
#include <stddef.h>

struct host_facts {
	char release[65];	/* uname -r */
	/*
	 * Does a read fault on untouched private anonymous memory map the
	 * shared zero page?  1 yes (mainline), 0 no: it allocates, as
	 * pb_config.read_faults_allocate says; -1 unknown (not root:
	 * pagemap hides PFNs).
	 */
	int zero_page;
	/* The kernel command line's word that says so, if it has one. */
	char zero_page_param[64];
	/*
	 * Is a PMD-mapped THP that is exclusive again after fork reused
	 * whole on a write fault?  1 yes (mainline), 0 no: this kernel
	 * splits it and reuses PTE by PTE; -1 unknown.
	 */
	int pmd_reuse;
	/* kdamond threads running (DAMON samples memory: transient refs). */
	int nr_kdamonds;
	int nr_cpus;		/* online */
};

/* Look at this machine.  Never fails: what cannot be told is unknown. */
void host_probe(struct host_facts *h);

/*
 * The facts as one line for a report, without a newline, e.g. "this
 * kernel (6.18.44): read faults map no zero page (pvm_no_zero_page=1):
 * the model runs so too; THP reuse can vary: DAMON on (1 kdamond), 2
 * CPUs".
 */
void host_facts_line(const struct host_facts *h, char *buf, size_t size);

/*
 * Do this kernel's read faults allocate (zero_page == 0)?  Probed once:
 * for a model that is to count what this kernel does (calibrate).
 */
bool host_read_faults_allocate(void);

/* Can something outside a scenario change its fault counts here? */
bool host_counts_may_vary(const struct host_facts *h);

/* This machine's memory in bytes; 0 if it cannot be told. */
unsigned long host_memory(void);

/*
 * This machine's CPU model, the "model name" of /proc/cpuinfo, into @buf;
 * false when there is none (arm64's /proc/cpuinfo names no model).
 */
bool host_cpu_model(char *buf, size_t len);

/*
 * The machine as "CPU, N cores, Linux RELEASE": what every benchmark row
 * carries as "machine" and every figure's title shows.
 */
const char *host_machine_name(void);

#endif /* BACKEND_HOST_H */
