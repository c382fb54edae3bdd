// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_scenario.c - the scenario language under libFuzzer: any bytes go
 * through the parser, and a scenario that parses runs on a small model
 * machine under every variant, the invariant checker after each statement.
 *
 * What must hold for every input:
 *  - the parser neither crashes nor leaks, a refused input gets at least
 *    one "fuzz.scn...: message" line (an error is never silent), and an
 *    accepted one gets none;
 *  - the run ends, successfully or with statement errors (the scenario's
 *    sizes may exceed the 32M machine: running out is "error ENOMEM"), and
 *    the checker finds nothing after any statement.
 * Anything else abort()s, after printing what went wrong.
 *
 * Work is bounded per input, so that one stays well under a second under
 * AddressSanitizer: a scenario of more than SCN_FUZZ_MAX_STMTS statements,
 * or whose statements may touch, pin or observe more than
 * SCN_FUZZ_MAX_WORK pages (counted generously, before the run), is parsed
 * but not run.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "fuzz/fuzz.h"
#include "lib/outfile.h"
#include "scenario/run.h"
#include "scenario/scenario.h"

const char fuzz_harness_name[] = "scenario";

#define SCN_FUZZ_NAME "fuzz.scn"
#define SCN_FUZZ_MEMORY (32UL << 20)
#define SCN_FUZZ_MAX_STMTS 128
#define SCN_FUZZ_MAX_WORK (1UL << 17)

static unsigned long sat_add(unsigned long a, unsigned long b)
{
	return a + b < a ? ~0UL : a + b;
}

/*
 * An upper bound of the pages the run of @s may touch, pin or observe:
 * each access of write and read, each page of a GUP range, each page of
 * each region of each process an observe may walk (as if every process
 * had every region, resized to its largest), each page mremap may move,
 * each PMD range a split, resize, munmap, mprotect or madvise may walk,
 * each access of a touch, each PMD of the rooms an exec unmaps; and one
 * per statement for the check after it.
 */
static unsigned long scenario_work(const struct scenario *s)
{
	unsigned long work = 0, region_pages = 0, page = s->page_size;
	unsigned long procs = 1, room_pmds = 0;
	int i;

	for (i = 0; i < s->nr_stmts; i++) {
		const struct stmt *st = &s->stmts[i];
		unsigned long w = 1;

		switch (st->kind) {
		case ST_MMAP:
			region_pages = sat_add(region_pages, st->len / page);
			room_pmds = sat_add(room_pmds, 1 +
				s->regions[st->region].room_len / SCN_REGION_ALIGN);
			break;
		case ST_MREMAP:
			region_pages = sat_add(region_pages, st->len / page);
			room_pmds = sat_add(room_pmds, 1 +
				s->regions[st->new_region].room_len / SCN_REGION_ALIGN);
			w = sat_add(w, st->len / page);
			break;
		case ST_TOUCH:
			w = sat_add(w, st->nr_accesses);
			break;
		case ST_EXEC:
			w = sat_add(w, room_pmds);
			break;
		case ST_RESIZE:
			/* a grow adds pages to observe; a shrink walks PMDs */
			region_pages = sat_add(region_pages, st->len / page);
			w = sat_add(w, st->len / SCN_REGION_ALIGN);
			break;
		case ST_WRITE:
		case ST_READ:
			w = sat_add(w, st->len / st->stride + 1);
			break;
		case ST_REGISTER:
		case ST_VMSPLICE:
		case ST_DIO_WRITE:
		case ST_DIO_READ:
			w = sat_add(w, st->len / page);
			break;
		case ST_MUNMAP:
		case ST_MMAP_FIXED:
		case ST_MPROTECT:
		case ST_MADVISE:
		case ST_SPLIT:
			w = sat_add(w, st->len / SCN_REGION_ALIGN);
			break;
		case ST_FORK:
		case ST_SPAWN:
			procs++;
			break;
		case ST_OBSERVE:
			/* procs <= SCN_MAX_PROCS: no overflow before the cap */
			w = sat_add(w, procs * (region_pages < SCN_FUZZ_MAX_WORK ?
						region_pages : SCN_FUZZ_MAX_WORK));
			break;
		default:
			break;
		}
		work = sat_add(work, w);
	}
	return work;
}

/* Where records go: nowhere, unless FUZZ_VERBOSE is set. */
static FILE *record_out(void)
{
	static FILE *out;

	if (!out)
		out = getenv("FUZZ_VERBOSE") ? stdout : outfile_sink();
	if (!out)
		abort();
	return out;
}

/* The parser's messages: refused must mean "said why", accepted silence. */
static void check_messages(const struct scenario *s, const char *text,
			   size_t len)
{
	size_t name_len = strlen(SCN_FUZZ_NAME);

	if (s && len) {
		fprintf(stderr, "fuzz_scenario: parsed, but with messages:\n%s",
			text);
		abort();
	}
	if (!s && (len <= name_len || strncmp(text, SCN_FUZZ_NAME, name_len) ||
		   text[name_len] != ':' || text[len - 1] != '\n')) {
		fprintf(stderr, "fuzz_scenario: refused without a "
			"\"" SCN_FUZZ_NAME ":...\" message (got %zu bytes: "
			"%.*s)\n", len, (int)len, text ? text : "");
		abort();
	}
}

/* Run @s under variant @i on a fresh machine; abort on a violation. */
static void run_variant(const struct scenario *s, int i)
{
	struct model_options opt = { .memory_bytes = SCN_FUZZ_MEMORY };
	struct backend *b;
	char *text = NULL;
	size_t len = 0;
	FILE *err;
	int ret;

	opt.variant_name = fuzz_variant(i, &opt.variant);
	b = model_backend_create(&opt);
	err = open_memstream(&text, &len);
	if (!b || !err)
		abort();	/* host out of memory */
	ret = scenario_run(s, b, record_out(), err, 1);
	b->ops->destroy(b);
	fclose(err);
	if (ret == SCN_RUN_VIOLATION) {
		fprintf(stderr, "fuzz_scenario: variant %s: invariant violated\n%s",
			opt.variant_name, text);
		abort();
	}
	if (getenv("FUZZ_VERBOSE") && len)
		fprintf(stderr, "%s", text);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct scenario *s;
	char *text = NULL;
	size_t len = 0;
	FILE *err = open_memstream(&text, &len);
	int i;

	if (!err)
		abort();
	s = scenario_parse_buffer(SCN_FUZZ_NAME, (const char *)data, size,
				  SCN_DEFAULT_PAGE_SIZE, err);
	fclose(err);
	check_messages(s, text, len);
	free(text);
	if (!s)
		return 0;
	if (s->nr_stmts <= SCN_FUZZ_MAX_STMTS &&
	    scenario_work(s) <= SCN_FUZZ_MAX_WORK)
		for (i = 0; i < FUZZ_NR_VARIANTS; i++)
			run_variant(s, i);
	scenario_free(s);
	return 0;
}
