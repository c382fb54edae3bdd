// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_events.c - the recorder's converter under libFuzzer: any bytes are
 * read as a stored event stream (record/events.c), and a stream that
 * reads is converted (record/convert.c).
 *
 * What must hold for every input:
 *  - reading neither crashes nor leaks, and a refused stream says why;
 *  - a conversion that fails says why; one that succeeds writes a scenario
 *    the parser accepts: whatever a trace holds, the converter writes
 *    nothing the language refuses.
 * Anything else abort()s, after printing what went wrong.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "record/convert.h"
#include "scenario/scenario.h"

const char fuzz_harness_name[] = "events";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rec_convert_opts o = { .page_size = 4096 };
	struct rec_stream s = { 0 };
	struct scenario *scn;
	char *msg = NULL, *out = NULL;
	size_t msg_len = 0, out_len = 0;
	FILE *in, *err, *f;
	int ret;

	in = fmemopen((void *)data, size ? size : 1, "r");
	err = open_memstream(&msg, &msg_len);
	if (!in || !err)
		abort();
	if (!size)
		fgetc(in);	/* fmemopen wants a byte; read it: empty */
	ret = rec_read_events("fuzz.events", in, &s, err);
	fclose(in);
	fflush(err);
	if (ret && !msg_len) {
		fprintf(stderr, "fuzz_events: stream refused (%d) silently\n", ret);
		abort();
	}
	if (!ret) {
		f = open_memstream(&out, &out_len);
		if (!f)
			abort();
		ret = rec_convert(&s, &o, f, NULL, err);
		fclose(f);
		fflush(err);
		if (ret && !msg_len) {
			fprintf(stderr, "fuzz_events: conversion failed (%d)"
				" silently\n", ret);
			abort();
		}
		if (!ret) {
			scn = scenario_parse_text("fuzz.scn", out, out_len, 4096,
						  stderr);
			if (!scn) {
				fprintf(stderr, "fuzz_events: the converter wrote"
					" a scenario the parser refuses:\n%.*s\n",
					(int)(out_len > 4000 ? 4000 : out_len), out);
				abort();
			}
			scenario_free(scn);
		}
	}
	fclose(err);
	free(msg);
	free(out);
	rec_stream_free(&s);
	return 0;
}
