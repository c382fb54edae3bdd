/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * compare.h - reading a printed record back into a structure, and
 * comparing two records under a set of equivalence rules.
 *
 * The reader takes exactly the text scenario/record.c prints (and the
 * format document specifies): header lines, statement lines with their
 * results, "  stat" lines, and observe snapshots with compressed runs,
 * which it expands to one entry per base page.  It knows nothing of the
 * model, so it reads a kernel backend's record as well as the model's.
 *
 * The comparator decides whether two records show the same behaviour to a
 * program.  Which differences are allowed is a parameter (enum cmp_rules):
 * two variants of the model differ in what they may differ in, and the
 * model and the kernel (`ptebatch diff`) in something else again.
 */
#ifndef SCENARIO_COMPARE_H
#define SCENARIO_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* One base page of one snapshot, expanded from its (run) line. */
struct rec_page {
	int proc;		/* process name: index in record->names */
	int region;		/* region name: index in record->names */
	unsigned long off;	/* offset in the region */
	bool present;
	unsigned long size;	/* folio size in bytes (present pages) */
	unsigned long index;	/* page index in the folio */
	uint64_t frame;		/* canonical frame number, 0 if absent */
	uint8_t data;
	int line;		/* the record line that described it */
};

/* A "  stat NAME VALUE" line. */
struct rec_stat {
	char *name;
	uint64_t value;
};

enum rec_result {
	REC_NONE,	/* a setting or observe: "N TEXT" */
	REC_OK,		/* "N TEXT: faults F ..." */
	REC_ERROR,	/* "N TEXT: error ENAME" */
};

struct rec_stmt {
	int number;
	int line;			/* line of the record */
	char *text;			/* the statement as printed */
	enum rec_result result;
	char *errname;			/* REC_ERROR: "EFAULT", ... */
	unsigned long faults;
	char *child;			/* "(P1 N)": the child's name, or NULL */
	unsigned long child_faults;
	bool has_data;			/* "data ...": drain */
	uint8_t *data;			/* run-length decoded */
	unsigned long data_len;
	struct rec_stat *stats;
	int nr_stats;
	struct rec_stat *kstats;	/* "  kstat NAME VALUE" lines */
	int nr_kstats;
	struct rec_stat *fcounts;	/* "  count FUNCTION N" lines */
	int nr_fcounts;
	bool observe;			/* text "observe": pages follow */
	struct rec_page *pages;
	unsigned long nr_pages, cap_pages;
};

struct record {
	char *name;			/* file name, for messages */
	/* From the "# backend B variant V arch A" line; NULL if absent. */
	char *backend, *variant, *arch;
	unsigned long page_size;
	struct rec_stmt *stmts;
	int nr_stmts, cap_stmts;
	char **names;			/* process and region names */
	int nr_names;
};

/*
 * Read the record @text (@len bytes) named @name.  Page offsets advance by
 * @page_size; 0 takes it from the header's arch (x86_64: 4K).  On error
 * prints "NAME:LINE: message" to @err and returns NULL.
 */
struct record *record_parse(const char *name, const char *text, size_t len,
			    unsigned long page_size, FILE *err);
void record_free(struct record *r);

/* The name a rec_page's proc or region index stands for. */
static inline const char *record_name(const struct record *r, int id)
{
	return r->names[id];
}

/*
 * What two records may differ in.  Header lines (backend, variant) and
 * stat lines never count; the statements, their results and errors, the
 * drained bytes and which pages are present with which data always do.
 */
enum cmp_rules {
	/*
	 * Variants that differ in write-fault reuse (wp_reuse_max): @other
	 * may take fewer faults than @base (also a fork's child), and a page
	 * @base shows as a 4K copy ("size 4K index 0") may show in @other
	 * still inside its larger folio: batched reuse made it exclusive
	 * before a pin raised the folio's refcount, where the per-PTE path
	 * had to copy it.  Never the reverse.  Apart from such pages, pages
	 * share a frame in @other exactly when they share one in @base.
	 */
	CMP_EQUIVALENT = 0,
	/*
	 * Nothing but stat lines may differ: the same faults, folios and
	 * frames (variants that differ only in GUP-fast, mprotect, fork or
	 * zap batching).
	 */
	CMP_SAME_FRAMES = 1 << 0,
	/*
	 * Also let the arch in the header differ: the model and the kernel
	 * (`ptebatch diff`) name theirs in their own words.  Parse both
	 * records with the same explicit page size, which is still compared.
	 */
	CMP_IGNORE_HEADER = 1 << 1,
};

/*
 * Compare @other against @base under @rules.  Returns 0 if they agree;
 * otherwise prints one line explaining the first difference (statement,
 * what differs, both sides, the record lines) to @explain, if not NULL,
 * and returns 1.
 */
int compare_records(const struct record *base, const struct record *other,
		    unsigned int rules, FILE *explain);
/*
 * The same, and where: *@where is the index in stmts[] of the first
 * statement that differs (nr_stmts of the shorter record if one only has
 * more; -1 if the headers differ).  Meaningful only when it returns 1.
 */
int compare_records_where(const struct record *base,
			  const struct record *other, unsigned int rules,
			  FILE *explain, int *where);

/*
 * The kernel accounting counters ("kstat" lines, scenario/backend.h) of
 * @model against the kernel's, statement by statement: for each counter
 * either names, the least of the @nr_kernel kernel records' values (the
 * kernel's are system-wide deltas: other work on the machine only adds
 * to them, so the least of several runs is the closest to the
 * statement's own), a counter a record does not print being 0.  pgfault
 * is held to a lower bound only: the kernel enters handle_mm_fault()
 * again after a per-VMA-lock retry, and counts every process's faults,
 * so a kernel pgfault below the model's is a difference, one above it is
 * not.  A kernel record whose statements are not @model's is left out.
 * Prints one line per difference to @report, "@prefix statement N
 * (TEXT): COUNTER model M kernel K", and returns how many there were.
 */
int compare_kstats(const struct record *model,
		   const struct record *const *kernel, int nr_kernel,
		   const char *prefix, FILE *report);

/*
 * Each counter compare_kstats() compares, once per statement: @visit
 * gets the model's statement, the counter's name, the model's value and
 * the least of the kernel records'.
 */
typedef void kstat_visit_fn(void *arg, const struct rec_stmt *model_stmt,
			    const char *name, uint64_t model, uint64_t kernel);
void kstats_for_each(const struct record *model,
		     const struct record *const *kernel, int nr_kernel,
		     kstat_visit_fn *visit, void *arg);

/* Do the model's @model and the kernel's @kernel of counter @name agree? */
bool kstat_agrees(const char *name, uint64_t model, uint64_t kernel);

#endif /* SCENARIO_COMPARE_H */
