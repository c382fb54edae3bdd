/*
 * diff.h - what `ptebatch diff` (diff.c) shares with its random mode
 * (diff_random.c): one scenario text on both backends, compared.
 */
#ifndef PTEBATCH_CLI_DIFF_H
#define PTEBATCH_CLI_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptebatch.h"

/* --random N at most: ten million scenarios. */
#define DIFF_RANDOM_MAX 10000000UL

enum diff_verdict { DIFF_MATCH, DIFF_MISMATCH, DIFF_SKIP, DIFF_ERROR };

extern const char *const diff_words[];

/* A scenario file as diff reads it: once, whatever it is (a pipe too). */
struct diff_file {
	const char *path;
	char *text;
	size_t len;
};

/* A growing text buffer; the functions below keep it NUL-terminated. */
struct text {
	char *buf;
	size_t len;
};

void text_free(struct text *t);

/*
 * @f parsed, run on the model (in this process) and on the kernel (the
 * program @self, `run --backend kernel`, in a child) and the records
 * compared: the verdict, its one line in @why.  With @model and @kernel
 * not NULL, the two records are left there (the caller frees them).
 */
enum diff_verdict diff_one(const char *self, const struct diff_file *f,
			   const struct pb_variant *variant,
			   const char *variant_name, bool counters,
			   struct text *detail, char *why, size_t whylen,
			   struct text *model, struct text *kernel);

/* The program that runs the kernel side (PTEBATCH_DIFF_KERNEL or this
 * one) into @self: 0, or the status to exit with. */
int diff_kernel_side(char *self, size_t size);

/* diff --random N ...: the options diff_main() read, and the rest. */
struct diff_random_options {
	unsigned long count;	/* N */
	unsigned long first;	/* --index: the first scenario's index */
	uint64_t seed;
	bool have_seed;
	int length;
	const char *out_dir;	/* --out */
	const char *dump_dir;	/* --dump: write the scenarios, run nothing */
	bool no_shrink;
};

int diff_random(const struct diff_random_options *o,
		const struct pb_variant *variant, const char *variant_name);

#endif
