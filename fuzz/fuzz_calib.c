// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_calib.c - the calibration's two readers under libFuzzer: the first
 * byte chooses the calibration file (JSON, calib_read_file()) or the
 * samples file (calib_samples_read()), the rest of the input is the file.
 *
 * What must hold for every input:
 *  - reading neither crashes nor leaks, and a refused file says why, in a
 *    message that names the file;
 *  - a calibration that reads is written back and read again to the same
 *    costs, and predicts a finite time >= 0 for any counts;
 *  - samples that read are fitted (calib_fit()): 0 with every cost
 *    finite, >= 0 and at most CALIB_MAX_COST_US (what the calibration
 *    reader takes), or an error that says why.
 * Anything else abort()s, after printing what went wrong.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "calibrate/calib.h"
#include "calibrate/samples.h"
#include "fuzz/fuzz.h"

const char fuzz_harness_name[] = "calib";

/* @data in a file of its own (memory, no disk); its path in @path. */
static int as_file(const uint8_t *data, size_t size, char *path, size_t len)
{
	int fd = memfd_create("fuzz-calib", 0);

	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

static void check_said(int ret, const char *err, const char *path,
		       const char *what)
{
	if (ret && (!err[0] || !strstr(err, path))) {
		fprintf(stderr, "fuzz_calib: %s refused (%d) without naming"
			" %s: '%s'\n", what, ret, path, err);
		abort();
	}
}

/*
 * A calibration that read: its round trip and its predictions.  The file
 * goes to a directory of its own under $TMPDIR (else /tmp), made for this
 * input and removed before anything is checked, so that no run leaves one
 * behind; a write that leaves more than its file there fails.
 */
static void check_calibration(const struct calibration *c)
{
	const char *tmpdir = getenv("TMPDIR");
	struct calibration back;
	uint64_t count[PB_NR_STATS];
	enum pb_stat missing;
	char dir[4096], path[4200], err[512];
	double us;
	int i, ret;

	snprintf(dir, sizeof(dir), "%s/fuzz-calib.XXXXXX",
		 tmpdir && *tmpdir ? tmpdir : "/tmp");
	if (!mkdtemp(dir)) {
		fprintf(stderr, "fuzz_calib: %s: %s\n", dir, strerror(errno));
		abort();
	}
	snprintf(path, sizeof(path), "%s/back.json", dir);
	ret = calib_write_file(path, c, err, sizeof(err));
	if (!ret)
		ret = calib_read_file(path, &back, err, sizeof(err));
	unlink(path);
	if (rmdir(dir)) {
		fprintf(stderr, "fuzz_calib: %s: %s after the round trip\n",
			dir, strerror(errno));
		abort();
	}
	if (ret) {
		fprintf(stderr, "fuzz_calib: a calibration that read does not"
			" write and read back: %s\n", err);
		abort();
	}
	for (i = 0; i < PB_NR_STATS; i++) {
		if (c->cost[i].present != back.cost[i].present ||
		    c->cost[i].value != back.cost[i].value ||
		    c->cost[i].state != back.cost[i].state) {
			fprintf(stderr, "fuzz_calib: '%s' changed in the round"
				" trip\n", pb_stat_name(i));
			abort();
		}
		count[i] = (uint64_t)i * 1000003;
	}
	calib_free(&back);
	calib_predict(c, count, &us, &missing);
	if (!isfinite(us) || us < 0) {
		fprintf(stderr, "fuzz_calib: predicted %g us\n", us);
		abort();
	}
}

static void check_samples(const struct calib_samples *ss)
{
	struct calibration c;
	char err[512] = "";
	int i, ret;

	ret = calib_fit(ss, NULL, &c, err, sizeof(err));
	if (ret && !err[0]) {
		fprintf(stderr, "fuzz_calib: the fit failed (%d) silently\n",
			ret);
		abort();
	}
	if (ret)
		return;
	for (i = 0; i < PB_NR_STATS; i++) {
		double max = CALIB_MAX_COST_US *
			     calib_unit_scale(c.machine.unit);

		if (!isfinite(c.cost[i].value) || c.cost[i].value < 0 ||
		    c.cost[i].value > max) {
			fprintf(stderr, "fuzz_calib: fitted '%s' at %g %s\n",
				pb_stat_name(i), c.cost[i].value,
				calib_unit_name(c.machine.unit));
			abort();
		}
	}
	calib_free(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], err[512] = "";
	int fd, ret;

	if (!size)
		return 0;
	fd = as_file(data + 1, size - 1, path, sizeof(path));
	if (data[0] & 1) {
		struct calib_samples ss;

		ret = calib_samples_read(path, &ss, err, sizeof(err));
		check_said(ret, err, path, "samples");
		if (!ret) {
			check_samples(&ss);
			calib_samples_free(&ss);
		}
	} else {
		struct calibration c;

		ret = calib_read_file(path, &c, err, sizeof(err));
		check_said(ret, err, path, "calibration");
		if (!ret) {
			check_calibration(&c);
			calib_free(&c);
		}
	}
	close(fd);
	return 0;
}
