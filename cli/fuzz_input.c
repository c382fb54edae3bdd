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

/* All of @path, which may hold any bytes. */
static uint8_t *read_input(const char *path, size_t *lenp)
{
	size_t len = 0, cap = 4096, n;
	uint8_t *buf = malloc(cap), *bigger;
	FILE *f = fopen(path, "rb");

	if (!f || !buf) {
		if (f)
			fclose(f);
		free(buf);
		return NULL;
	}
	while ((n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len < cap)
			continue;
		bigger = realloc(buf, cap * 2);
		if (!bigger) {
			free(buf);
			fclose(f);
			errno = ENOMEM;
			return NULL;
		}
		buf = bigger;
		cap *= 2;
	}
	if (ferror(f)) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*lenp = len;
	return buf;
}

int run_fuzz_input(const char *name, const char *path)
{
	uint8_t *data;
	size_t i, len = 0;

	for (i = 0; i < sizeof(harnesses) / sizeof(harnesses[0]); i++)
		if (!strcmp(harnesses[i].name, name))
			break;
	if (i == sizeof(harnesses) / sizeof(harnesses[0]))
		return usage_error("--fuzz: no harness '%s' (scenario, ops,"
				   " events or calib)", name);
	data = read_input(path, &len);
	if (!data)
		return usage_error("%s: %s", path, strerror(errno));
	fprintf(stderr, "run --fuzz %s: %s, %zu bytes\n", name, path, len);
	harnesses[i].one(data, len);
	free(data);
	/* The harness abort()s on anything broken: this input is fine. */
	printf("ok: %s passes the %s harness (fuzz/fuzz_%s.c)\n", path, name,
	       name);
	return 0;
}
