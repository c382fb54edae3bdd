// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_input.c - `ptebatch run --fuzz NAME FILE`: one input of a fuzz
 * harness (fuzz/fuzz_NAME.c) replayed in this process, exactly as the
 * fuzzer ran it.  A crash the fuzzer kept (build-fuzz/crashes/NAME-*)
 * reproduces with this one command; a harness that finds something
 * broken says what on stderr and abort()s, as it did under libFuzzer.
 * Built with SAN=asan the tool reports what AddressSanitizer reported.
 *
 * The harnesses are compiled a second time for the tool, their entry
 * points renamed (Makefile: $(BUILD)/cli-fuzz/), so that the four can be
 * linked into one program.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "fuzz/fuzz.h"
#include "lib/readfile.h"

int pb_fuzz_scenario_one(const uint8_t *data, size_t size);
int pb_fuzz_ops_one(const uint8_t *data, size_t size);
int pb_fuzz_events_one(const uint8_t *data, size_t size);
int pb_fuzz_calib_one(const uint8_t *data, size_t size);

static const struct {
	const char *name;
	int (*one)(const uint8_t *data, size_t size);
} harnesses[] = {
	{ "scenario", pb_fuzz_scenario_one },
	{ "ops", pb_fuzz_ops_one },
	{ "events", pb_fuzz_events_one },
	{ "calib", pb_fuzz_calib_one },
};

bool fuzz_harness_known(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(harnesses) / sizeof(harnesses[0]); i++)
		if (!strcmp(harnesses[i].name, name))
			return true;
	return false;
}

int run_fuzz_input(const char *name, const char *path)
{
	char *data, why[512];
	size_t i, len = 0;

	for (i = 0; i < sizeof(harnesses) / sizeof(harnesses[0]); i++)
		if (!strcmp(harnesses[i].name, name))
			break;
	if (i == sizeof(harnesses) / sizeof(harnesses[0]))
		return usage_error("--fuzz: no harness '%s' (scenario, ops,"
				   " events or calib)", name);
	/* The bound a replay has (fuzz/fuzz.h): /dev/zero is no input. */
	if (readfile_all(path, FUZZ_INPUT_MAX_BYTES, "a fuzz input", &data,
			 &len, why, sizeof(why)))
		return usage_error("%s", why);
	fprintf(stderr, "run --fuzz %s: %s, %zu bytes\n", name, path, len);
	harnesses[i].one((const uint8_t *)data, len);
	free(data);
	/* The harness abort()s on anything broken: this input is fine. */
	printf("ok: %s passes the %s harness (fuzz/fuzz_%s.c)\n", path, name,
	       name);
	return 0;
}
