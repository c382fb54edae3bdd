// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_vocab.c - the language's words (scenario/vocab.c) are defined
 * once, and everyone takes them from there:
 *
 *  1. the tables hold together: no word or value twice, every protection
 *     and policy named, the generator's draw numbers 1..N without a gap,
 *     and every advice parses to its MADV_* value;
 *  2. the architectures are the Makefile's ARCHES, in its order, each
 *     with the page size its ARCHFLAGS build (and this build is one);
 *  3. an advice row added by the test alone (scn_advices_replace(), no
 *     such row ships) is drawn by the generator of `diff --random`
 *     (scenario/generate.c), written by the converter of `record
 *     --from-events` (record/convert.c) and accepted by the parser; with
 *     the shipped table back, neither writes it.  A file that kept a
 *     word list of its own would fail here.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "lib/outfile.h"
#include "record/convert.h"
#include "record/events.h"
#include "scenario/generate.h"
#include "scenario/scenario.h"
#include "scenario/vocab.h"
#include "tests/unit/fixture.h"

#define PAGE 4096UL

/* ---- 1. the tables ----------------------------------------------------- */

static int table_len(const struct scn_word *t)
{
	int nr = 0;

	while (t[nr].word)
		nr++;
	return nr;
}

/* No word and no value twice in @t. */
static void check_unique(const char *what, const struct scn_word *t)
{
	int nr = table_len(t), i, j, dup = 0;

	for (i = 0; i < nr; i++) {
		for (j = i + 1; j < nr; j++) {
			if (strcmp(t[i].word, t[j].word) &&
			    t[i].value != t[j].value)
				continue;
			tap_diag("%s: '%s' and '%s' share a word or a value",
				 what, t[i].word, t[j].word);
			dup++;
		}
	}
	tap_ok(nr > 0 && !dup, "%s: %d words, each once with a value of its"
	       " own", what, nr);
}

/* Each advice parses, as the statement madvise reads it, to its value. */
static void check_advices_parse(void)
{
	const struct scn_word *a;
	char text[256];
	int bad = 0;

	for (a = scn_advices(); a->word; a++) {
		struct capture c;
		struct scenario *s;
		FILE *f = capture_open(&c);
		char *err;

		snprintf(text, sizeof(text),
			 "P0 mmap A 64K rw\nP0 madvise A 0 64K %s\n", a->word);
		s = scenario_parse_string("t.scn", text, PAGE, f);
		err = capture_close(&c);
		if (!s || s->stmts[1].advice != a->value) {
			tap_diag("madvise ... %s: %s", a->word,
				 s ? "another value" : err);
			bad++;
		}
		scenario_free(s);
		free(err);
	}
	tap_ok(!bad, "every advice parses to its MADV_* value");
}

static void test_tables(void)
{
	const struct scn_word *a;
	int nr_drawn = scn_nr_advices_drawn(), i, bad = 0;

	check_unique("advices", scn_advices());
	check_unique("protections", scn_prots);
	check_unique("policies", scn_policies);
	tap_ok(scn_prot_word(SCN_PROT_NONE) && scn_prot_word(SCN_PROT_R) &&
	       scn_prot_word(SCN_PROT_RW), "every enum scn_prot has a word");
	tap_ok(scn_policy_word(SCN_POL_NEVER) &&
	       scn_policy_word(SCN_POL_ALWAYS) &&
	       scn_policy_word(SCN_POL_MADVISE) &&
	       scn_policy_word(SCN_POL_INHERIT),
	       "every enum scn_policy has a word");

	/* Draw numbers 1..N, each once: the generator draws the i-th. */
	for (i = 0; i < nr_drawn; i++)
		bad += !scn_advice_drawn(i);
	for (a = scn_advices(); a->word; a++)
		bad += a->draw < 0 || a->draw > nr_drawn;
	tap_ok(nr_drawn > 0 && !bad, "the generator's draw numbers are 1..%d,"
	       " each once", nr_drawn);
	check_advices_parse();
}

/* ---- 2. the architectures against the Makefile ------------------------- */

/*
 * The Makefile, found from the current directory (run-all.sh runs tests
 * from the top of the tree) or else from this file's own path.
 */
static FILE *open_makefile(void)
{
	static const char *const here = __FILE__;
	const char *unit = strstr(here, "tests/unit/test_vocab.c");
	char path[4096];
	FILE *f = fopen("Makefile", "r");

	if (!f && unit) {
		snprintf(path, sizeof(path), "%.*sMakefile", (int)(unit - here),
			 here);
		f = fopen(path, "r");
	}
	return f;
}

#define MAX_ARCHES 16
#define SHIFT_FLAG "CONFIG_ARM64_PAGE_SHIFT="

struct make_arches {
	char names[MAX_ARCHES][32];
	unsigned long page_size[MAX_ARCHES];
	int nr;
};

/*
 * ARCHES := a b c, and for each ARCH the page size its ARCHFLAGS build:
 * 1 << CONFIG_ARM64_PAGE_SHIFT, else 4K.
 */
static bool read_makefile(struct make_arches *m)
{
	char line[1024], *tok, *save, *shift;
	int cur = -1, i;
	FILE *f = open_makefile();

	memset(m, 0, sizeof(*m));
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *cond = strstr(line, "ifeq ($(ARCH),");

		if (!strncmp(line, "ARCHES", 6) && strstr(line, ":=")) {
			tok = strtok_r(strstr(line, ":=") + 2, " \t\n", &save);
			for (; tok && m->nr < MAX_ARCHES;
			     tok = strtok_r(NULL, " \t\n", &save)) {
				snprintf(m->names[m->nr], sizeof(m->names[0]),
					 "%s", tok);
				m->page_size[m->nr++] = 0;
			}
		} else if (cond) {
			cond += strlen("ifeq ($(ARCH),");
			cond[strcspn(cond, ")")] = '\0';
			for (cur = -1, i = 0; i < m->nr; i++)
				if (!strcmp(m->names[i], cond))
					cur = i;
		} else if (cur >= 0 && !m->page_size[cur] &&
			   !strncmp(line, "ARCHFLAGS", 9)) {
			shift = strstr(line, SHIFT_FLAG);
			m->page_size[cur] = shift ?
				1UL << atoi(shift + strlen(SHIFT_FLAG)) : 4096;
			cur = -1;
		}
	}
	fclose(f);
	return m->nr > 0;
}

static void test_arches(void)
{
	struct make_arches m;
	int i, nr = 0, same;

	if (!tap_ok(read_makefile(&m), "the Makefile's ARCHES line is read"))
		return;
	while (scn_arch_names[nr])
		nr++;
	same = nr == m.nr;
	for (i = 0; same && i < nr; i++)
		same = !strcmp(scn_arch_names[i], m.names[i]);
	if (!same) {
		for (i = 0; i < nr || i < m.nr; i++)
			tap_diag("%d: vocab.c %s, Makefile %s", i,
				 i < nr ? scn_arch_names[i] : "-",
				 i < m.nr ? m.names[i] : "-");
	}
	tap_ok(same, "scn_arch_names is the Makefile's ARCHES (%d names, in"
	       " its order)", m.nr);
	for (i = 0; same && i < nr; i++)
		tap_ok(scn_arch_page_size(scn_arch_names[i]) == m.page_size[i],
		       "%s: page size %lu, as its ARCHFLAGS build (%lu)",
		       scn_arch_names[i], scn_arch_page_size(scn_arch_names[i]),
		       m.page_size[i]);
	tap_ok(scn_arch_page_size(pb_arch_name()) == pb_page_size(),
	       "this build (%s) is in the table with its page size %lu",
	       pb_arch_name(), pb_page_size());
	tap_ok(!scn_arch_page_size("arm64-32k") && !scn_arch_page_size(NULL),
	       "a name that is none of them has no page size");
}

/* ---- 3. a dummy advice, added by the test ------------------------------ */

#define DUMMY_WORD "test-dummy"
#define DUMMY_ADVICE 1000	/* no MADV_* has it */

/* The shipped rows, then the dummy with the next draw number. */
static struct scn_word with_dummy[64];

static void add_dummy(void)
{
	const struct scn_word *shipped = scn_advices();
	int nr = table_len(shipped);

	memcpy(with_dummy, shipped, nr * sizeof(*shipped));
	with_dummy[nr] = (struct scn_word){
		DUMMY_WORD, DUMMY_ADVICE, scn_nr_advices_drawn() + 1,
	};
	with_dummy[nr + 1] = (struct scn_word){ NULL, 0, 0 };
	scn_advices_replace(with_dummy);
}

/*
 * How many of 200 generated scenarios (seed 1, indexes 0..199, as
 * `diff --random 200 --seed 1` makes them) advise DUMMY_WORD; *@parsed
 * counts those the parser took, with the dummy's value.
 */
static int generated_with_dummy(int *parsed)
{
	int i, found = 0;

	*parsed = 0;
	for (i = 0; i < 200; i++) {
		uint64_t seed = scenario_gen_seed(1, i);
		size_t len;
		char *text = scenario_generate(seed, 30, &len);
		struct scenario *s;
		int j;

		if (!text || !strstr(text, " " DUMMY_WORD "\n")) {
			free(text);
			continue;
		}
		found++;
		s = scenario_parse_string("gen.scn", text, PAGE,
					  outfile_sink());
		for (j = 0; s && j < s->nr_stmts; j++)
			if (s->stmts[j].kind == ST_MADVISE &&
			    s->stmts[j].advice == DUMMY_ADVICE) {
				(*parsed)++;
				break;
			}
		scenario_free(s);
		free(text);
	}
	return found;
}

/* A traced program that maps 16K and madvises it with DUMMY_ADVICE. */
static const char dummy_events[] =
	"# ptebatch events 1\n"
	"root 300\n"
	"1 300 execve ret=0\n"
	"2 300 mmap addr=0 len=0x4000 prot=0x3 flags=0x22 fd=-1"
	" ret=0x7f0000200000\n"
	"3 300 madvise addr=0x7f0000200000 len=0x4000 advice=0x3e8 ret=0\n"
	"4 300 fault_user addr=0x7f0000201000 err=0x6\n";

/*
 * record --from-events of dummy_events: whether the scenario advises
 * DUMMY_WORD; *@ignored gets the madvise calls it left out.
 */
static bool converted_with_dummy(unsigned long *ignored)
{
	struct rec_convert_opts o = { .page_size = PAGE };
	struct rec_summary sum = { 0 };
	struct rec_stream st = { 0 };
	FILE *in = fmemopen((void *)dummy_events, sizeof(dummy_events) - 1,
			    "r");
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	bool found = false;

	*ignored = ~0UL;
	if (in && f && !rec_read_events("dummy.events", in, &st, stderr) &&
	    !rec_convert(&st, &o, f, &sum, stderr)) {
		fflush(f);
		found = strstr(out, "madvise m1 0 0x4000 " DUMMY_WORD "\n");
		*ignored = sum.ignored_advice;
	}
	if (in)
		fclose(in);
	if (f)
		fclose(f);
	free(out);
	rec_stream_free(&st);
	return found;
}

static void test_dummy_advice(void)
{
	unsigned long ignored;
	int found, parsed;
	bool converted;

	add_dummy();
	found = generated_with_dummy(&parsed);
	tap_ok(found > 0, "diff --random's generator draws the test's advice"
	       " row (%d of 200 scenarios)", found);
	tap_ok(parsed == found, "the parser reads it in each as MADV %d"
	       " (%d of %d)", DUMMY_ADVICE, parsed, found);
	converted = converted_with_dummy(&ignored);
	tap_ok(converted && ignored == 0, "record --from-events writes a"
	       " madvise of it as '%s' (%lu left out)", DUMMY_WORD, ignored);

	scn_advices_replace(NULL);
	found = generated_with_dummy(&parsed);
	tap_ok(found == 0, "with the shipped table back, no scenario draws it");
	converted = converted_with_dummy(&ignored);
	tap_ok(!converted && ignored == 1, "and record leaves the call out"
	       " (%lu left out)", ignored);
}

int main(void)
{
	test_tables();
	test_arches();
	test_dummy_advice();
	return tap_done();
}
