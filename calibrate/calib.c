// SPDX-License-Identifier: GPL-2.0-only
/*
 * calibrate/ - the model's cost counters turned into a prediction of the
 * kernel's time (nnls.h says how the pieces fit).
 *
 * calib.c: the calibration file, written and read with jansson; the
 * reader takes nothing on trust - every field is checked for presence,
 * type and range, and anything it does not know is refused, so that a
 * typo in a hand-edited file is an error, not a cost silently 0.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <jansson.h>

#include "backend/host.h"
#include "calibrate/calib.h"
#include "lib/readfile.h"
#include "lib/outfile.h"

int calib_counter(const char *name)
{
	int i;

	for (i = 0; i < PB_NR_STATS; i++)
		if (!strcmp(pb_stat_name(i), name))
			return i;
	return -1;
}

static const char *const unit_names[] = {
	[CALIB_UNIT_US] = "us",
	[CALIB_UNIT_INSNS] = "insns",
};

const char *calib_unit_name(enum calib_unit u)
{
	return unit_names[u];
}

int calib_unit_parse(const char *name, enum calib_unit *u)
{
	size_t i;

	for (i = 0; i < sizeof(unit_names) / sizeof(unit_names[0]); i++) {
		if (!strcmp(name, unit_names[i])) {
			*u = (enum calib_unit)i;
			return 0;
		}
	}
	return -1;
}

double calib_unit_scale(enum calib_unit u)
{
	return u == CALIB_UNIT_INSNS ? 1000 : 1;
}

void calib_free(struct calibration *c)
{
	free(c->residual);
	memset(c, 0, sizeof(*c));
}

int calib_from_fit(struct calibration *c, const struct calib_machine *machine,
		   const enum pb_stat *cols, const struct nnls_fit *fit)
{
	double scale = calib_unit_scale(machine->unit);
	size_t j;

	memset(c, 0, sizeof(*c));
	c->machine = *machine;
	for (j = 0; j < fit->n; j++) {
		struct calib_cost *cost = &c->cost[cols[j]];

		cost->present = true;
		/* The fit is in us (the samples' times); the file's unit. */
		cost->value = fit->cost[j] * scale;
		cost->error = fit->stderr_cost[j] * scale;
		cost->state = fit->state[j];
	}
	c->residual = malloc((fit->m ? fit->m : 1) * sizeof(*c->residual));
	if (!c->residual)
		return -ENOMEM;
	for (j = 0; j < fit->m; j++)
		c->residual[j] = fit->residual[j] * scale;
	c->nr_residuals = fit->m;
	c->r2 = fit->r2;
	c->median_abs_rel_err = fit->median_abs_rel_err;
	return 0;
}

int calib_predict(const struct calibration *c,
		  const uint64_t count[PB_NR_STATS], double *us,
		  enum pb_stat *missing)
{
	double scale = calib_unit_scale(c->machine.unit);
	int i, err = 0;

	*us = 0;
	for (i = 0; i < PB_NR_STATS; i++) {
		if (!count[i])
			continue;
		/* Never seen to move: its cost is unknown, not 0. */
		if (!c->cost[i].present ||
		    c->cost[i].state == NNLS_UNIDENTIFIABLE) {
			if (!err)
				*missing = i;
			err = -ENOENT;
			continue;
		}
		*us += c->cost[i].value / scale * (double)count[i];
	}
	return err;
}

/* ---- writing ------------------------------------------------------------ */

/* @obj[@key] = @value, which is consumed; false if either is NULL. */
static bool put(json_t *obj, const char *key, json_t *value)
{
	if (!obj) {
		json_decref(value);
		return false;
	}
	return value && !json_object_set_new(obj, key, value);
}

static json_t *calib_to_json(const struct calibration *c)
{
	json_t *root = json_object(), *machine = json_object();
	json_t *costs = json_array(), *res = json_array(), *fit = json_object();
	bool ok = root && machine && costs && res && fit;
	const char *unit = calib_unit_name(c->machine.unit);
	size_t i;

	ok = ok && put(machine, "arch", json_string(c->machine.arch)) &&
	     put(machine, "kernel", json_string(c->machine.kernel)) &&
	     put(machine, "cpu", json_string(c->machine.cpu)) &&
	     put(machine, "cores", json_integer(c->machine.cores)) &&
	     put(machine, "date", json_string(c->machine.date));
	for (i = 0; ok && i < PB_NR_STATS; i++) {
		const struct calib_cost *cost = &c->cost[i];
		json_t *o;

		if (!cost->present)
			continue;
		o = json_object();
		ok = put(o, "counter", json_string(pb_stat_name(i))) &&
		     put(o, unit, json_real(cost->value)) &&
		     put(o, "stderr", json_real(cost->error)) &&
		     put(o, "state",
			 json_string(nnls_cost_state_name(cost->state)));
		if (ok)
			ok = !json_array_append_new(costs, o);
		else
			json_decref(o);
	}
	for (i = 0; ok && i < c->nr_residuals; i++)
		ok = !json_array_append_new(res, json_real(c->residual[i]));
	ok = ok && put(fit, "r2", json_real(c->r2)) &&
	     put(fit, "median_abs_rel_err", json_real(c->median_abs_rel_err));
	/* put() consumes its value even when it fails: no double free */
	ok = ok && put(root, "version", json_integer(CALIB_VERSION)) &&
	     put(root, "unit", json_string(unit)) &&
	     put(root, "machine", json_incref(machine)) &&
	     put(root, "costs", json_incref(costs)) &&
	     put(root, "residuals", json_incref(res)) &&
	     put(root, "fit", json_incref(fit));
	json_decref(machine);
	json_decref(costs);
	json_decref(res);
	json_decref(fit);
	if (!ok) {
		json_decref(root);
		return NULL;
	}
	return root;
}

int calib_write(FILE *f, const char *name, const struct calibration *c,
		char *why, size_t whylen)
{
	json_t *root = calib_to_json(c);
	int ret = 0;

	if (!root) {
		/* jansson refuses NaN and infinities, as JSON does */
		snprintf(why, whylen, "%s: cannot encode the calibration "
			 "(out of memory, or a value not finite)", name);
		return -EINVAL;
	}
	if (json_dumpf(root, f, JSON_INDENT(1) | JSON_REAL_PRECISION(17))) {
		ret = -EIO;
		snprintf(why, whylen, "%s: write error", name);
	}
	json_decref(root);
	return ret;
}

int calib_write_file(const char *path, const struct calibration *c,
		     char *why, size_t whylen)
{
	struct outfile of;
	int ret = outfile_open(&of, "calibration", path, 0, why, whylen);

	if (ret)
		return ret;
	ret = calib_write(of.f, path, c, why, whylen);
	if (ret) {
		outfile_discard(&of);
		return ret;
	}
	return outfile_commit(&of, why, whylen);
}

/* ---- reading ------------------------------------------------------------ */

struct calib_reader {
	const char *file;
	char *why;
	size_t whylen;
};

static int __attribute__((format(printf, 2, 3)))
rd_fail(struct calib_reader *rd, const char *fmt, ...)
{
	int n = snprintf(rd->why, rd->whylen, "%s: ", rd->file);
	va_list ap;

	if (n >= 0 && (size_t)n < rd->whylen) {
		va_start(ap, fmt);
		vsnprintf(rd->why + n, rd->whylen - n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* "where.key", or "key" at the top. */
static const char *rd_name(char *buf, size_t size, const char *where,
			   const char *key)
{
	snprintf(buf, size, "%s%s%s", where, *where ? "." : "", key);
	return buf;
}

/*
 * @obj (called @where) is an object with exactly the fields @keys
 * (NULL-terminated): none missing, none unknown.
 */
static int rd_fields(struct calib_reader *rd, json_t *obj, const char *where,
		     const char *const *keys)
{
	const char *key, *const *k;
	char name[128];
	json_t *v;

	if (!json_is_object(obj))
		return rd_fail(rd, "%s is not an object",
			       *where ? where : "the top level");
	for (k = keys; *k; k++)
		if (!json_object_get(obj, *k))
			return rd_fail(rd, "missing field '%s'",
				       rd_name(name, sizeof(name), where, *k));
	json_object_foreach(obj, key, v) {
		for (k = keys; *k && strcmp(*k, key); k++)
			;
		if (!*k)
			return rd_fail(rd, "unknown field '%s'",
				       rd_name(name, sizeof(name), where, key));
	}
	return 0;
}

/* @obj[@key], a finite number, into *@out; with @min_zero, >= 0. */
static int rd_number(struct calib_reader *rd, json_t *obj, const char *where,
		     const char *key, bool min_zero, double *out)
{
	json_t *v = json_object_get(obj, key);
	char name[128];

	rd_name(name, sizeof(name), where, key);
	if (!json_is_number(v))
		return rd_fail(rd, "'%s' is not a number", name);
	*out = json_number_value(v);
	if (!isfinite(*out))
		return rd_fail(rd, "'%s' is not finite", name);
	if (min_zero && *out < 0)
		return rd_fail(rd, "'%s' is negative (%g)", name, *out);
	return 0;
}

static int rd_string(struct calib_reader *rd, json_t *obj, const char *where,
		     const char *key, char *buf, size_t size)
{
	json_t *v = json_object_get(obj, key);
	char name[128];

	rd_name(name, sizeof(name), where, key);
	if (!json_is_string(v))
		return rd_fail(rd, "'%s' is not a string", name);
	if (json_string_length(v) >= size)
		return rd_fail(rd, "'%s' is longer than %zu bytes", name,
			       size - 1);
	memcpy(buf, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

static int rd_machine(struct calib_reader *rd, json_t *o,
		      struct calib_machine *m)
{
	static const char *const keys[] = {
		"arch", "kernel", "cpu", "cores", "date", NULL
	};
	json_t *cores;
	int err;

	err = rd_fields(rd, o, "machine", keys);
	if (!err)
		err = rd_string(rd, o, "machine", "arch", m->arch,
				sizeof(m->arch));
	if (!err)
		err = rd_string(rd, o, "machine", "kernel", m->kernel,
				sizeof(m->kernel));
	if (!err)
		err = rd_string(rd, o, "machine", "cpu", m->cpu, sizeof(m->cpu));
	if (!err)
		err = rd_string(rd, o, "machine", "date", m->date,
				sizeof(m->date));
	if (err)
		return err;
	cores = json_object_get(o, "cores");
	if (!json_is_integer(cores) || json_integer_value(cores) < 1 ||
	    json_integer_value(cores) > 1 << 20)
		return rd_fail(rd, "'machine.cores' is not a number of cores");
	m->cores = json_integer_value(cores);
	return 0;
}

static int rd_state(const char *name, enum nnls_cost_state *state)
{
	enum nnls_cost_state s;

	for (s = NNLS_FITTED; s <= NNLS_UNIDENTIFIABLE; s++) {
		if (!strcmp(nnls_cost_state_name(s), name)) {
			*state = s;
			return 0;
		}
	}
	return -1;
}

/* costs[@i], into its counter's slot of @c. */
static int rd_cost(struct calib_reader *rd, json_t *o, size_t i,
		   struct calibration *c)
{
	const char *unit = calib_unit_name(c->machine.unit);
	const char *const keys[] = {
		"counter", unit, "stderr", "state", NULL
	};
	double scale = calib_unit_scale(c->machine.unit);
	struct calib_cost cost = { .present = true };
	char where[32], counter[64], state[32];
	int stat, err;

	snprintf(where, sizeof(where), "costs[%zu]", i);
	err = rd_fields(rd, o, where, keys);
	if (!err)
		err = rd_string(rd, o, where, "counter", counter,
				sizeof(counter));
	if (err)
		return err;
	stat = calib_counter(counter);
	if (stat < 0)
		return rd_fail(rd, "%s: unknown counter '%s'", where, counter);
	if (c->cost[stat].present)
		return rd_fail(rd, "%s: counter '%s' given twice", where,
			       counter);
	err = rd_number(rd, o, where, unit, false, &cost.value);
	if (!err && cost.value < 0)
		return rd_fail(rd, "%s: negative cost %g %s for '%s'", where,
			       cost.value, unit, counter);
	if (!err && cost.value > CALIB_MAX_COST_US * scale)
		return rd_fail(rd, "%s.%s: %g %s for '%s' is above the %g %s"
			       " a cost may be", where, unit, cost.value, unit,
			       counter, CALIB_MAX_COST_US * scale, unit);
	if (!err)
		err = rd_number(rd, o, where, "stderr", true, &cost.error);
	if (!err)
		err = rd_string(rd, o, where, "state", state, sizeof(state));
	if (err)
		return err;
	if (rd_state(state, &cost.state))
		return rd_fail(rd, "%s: unknown state '%s' (fitted, at_zero or "
			       "unidentifiable)", where, state);
	if (cost.state != NNLS_FITTED && cost.value != 0)
		return rd_fail(rd, "%s: '%s' is %s but its cost is %g, not 0",
			       where, counter, state, cost.value);
	c->cost[stat] = cost;
	return 0;
}

static int rd_calibration(struct calib_reader *rd, json_t *root,
			  struct calibration *c)
{
	/* Version 1 had no unit: its costs were us. */
	static const char *const keys_v1[] = {
		"version", "machine", "costs", "residuals", "fit", NULL
	};
	static const char *const keys[] = {
		"version", "unit", "machine", "costs", "residuals", "fit", NULL
	};
	static const char *const fit_keys[] = {
		"r2", "median_abs_rel_err", NULL
	};
	json_t *version, *costs, *res, *fit, *v;
	char unit[16];
	size_t i;
	int err;

	if (!json_is_object(root))
		return rd_fail(rd, "the top level is not an object");
	version = json_object_get(root, "version");
	if (!json_is_integer(version))
		return rd_fail(rd, "'version' is not an integer");
	if (json_integer_value(version) != CALIB_VERSION &&
	    json_integer_value(version) != 1)
		return rd_fail(rd, "version %lld, but this ptebatch reads "
			       "versions 1 and %d", json_integer_value(version),
			       CALIB_VERSION);
	err = rd_fields(rd, root, "", json_integer_value(version) == 1 ?
			keys_v1 : keys);
	if (err)
		return err;
	c->machine.unit = CALIB_UNIT_US;
	if (json_integer_value(version) != 1) {
		err = rd_string(rd, root, "", "unit", unit, sizeof(unit));
		if (err)
			return err;
		if (calib_unit_parse(unit, &c->machine.unit))
			return rd_fail(rd, "unknown unit '%s' (us or insns)",
				       unit);
	}
	err = rd_machine(rd, json_object_get(root, "machine"), &c->machine);
	if (err)
		return err;

	costs = json_object_get(root, "costs");
	if (!json_is_array(costs))
		return rd_fail(rd, "'costs' is not an array");
	if (!json_array_size(costs))
		return rd_fail(rd, "'costs' is empty");
	json_array_foreach(costs, i, v) {
		err = rd_cost(rd, v, i, c);
		if (err)
			return err;
	}

	res = json_object_get(root, "residuals");
	if (!json_is_array(res))
		return rd_fail(rd, "'residuals' is not an array");
	c->residual = malloc((json_array_size(res) + 1) * sizeof(*c->residual));
	if (!c->residual) {
		snprintf(rd->why, rd->whylen, "%s: out of memory", rd->file);
		return -ENOMEM;
	}
	json_array_foreach(res, i, v) {
		if (!json_is_number(v) || !isfinite(json_number_value(v)))
			return rd_fail(rd, "residuals[%zu] is not a number", i);
		c->residual[i] = json_number_value(v);
	}
	c->nr_residuals = json_array_size(res);

	fit = json_object_get(root, "fit");
	err = rd_fields(rd, fit, "fit", fit_keys);
	if (!err)
		err = rd_number(rd, fit, "fit", "r2", false, &c->r2);
	if (!err && c->r2 > 1)
		return rd_fail(rd, "'fit.r2' is %g, above 1", c->r2);
	if (!err)
		err = rd_number(rd, fit, "fit", "median_abs_rel_err", true,
				&c->median_abs_rel_err);
	return err;
}

int calib_read_file(const char *path, struct calibration *c, char *why,
		    size_t whylen)
{
	struct calib_reader rd = { .file = path, .why = why, .whylen = whylen };
	json_error_t jerr;
	json_t *root;
	char *text;
	size_t len;
	int ret;

	memset(c, 0, sizeof(*c));
	ret = readfile_all(path, CALIB_MAX_FILE_BYTES, "a calibration file",
			   &text, &len, why, whylen);
	if (ret)
		return ret;
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	free(text);
	if (!root) {
		if (json_error_code(&jerr) == json_error_out_of_memory) {
			snprintf(why, whylen, "%s: out of memory", path);
			return -ENOMEM;
		}
		snprintf(why, whylen, "%s:%d:%d: not JSON: %s", path,
			 jerr.line, jerr.column, jerr.text);
		return -EINVAL;
	}
	ret = rd_calibration(&rd, root, c);
	json_decref(root);
	if (ret)
		calib_free(c);
	return ret;
}

bool calib_warn_other_cpu(FILE *f, const char *who, const char *path,
			  const struct calibration *c)
{
	char cpu[sizeof(c->machine.cpu)];

	/* A guest's instruction count is the same on any host CPU. */
	if (c->machine.unit == CALIB_UNIT_INSNS)
		return false;
	if (!host_cpu_model(cpu, sizeof(cpu)) || !strcmp(cpu, c->machine.cpu))
		return false;
	fprintf(f, "%s: warning: %s was measured on another CPU (%s; this"
		" machine: %s): its costs are an assumption here; `ptebatch"
		" calibrate` (as root) measures this one\n", who, path,
		c->machine.cpu, cpu);
	return true;
}

/* The source tree, from the Makefile: where build/ and calibrate/ are. */
#ifndef PB_SRCDIR
#define PB_SRCDIR "."
#endif

const char *calib_default_output(void)
{
	return PB_SRCDIR "/build/calibration.json";
}

const char *calib_default_input(void)
{
	static char path[4096];
	struct utsname u;

	if (!access(calib_default_output(), F_OK))
		return calib_default_output();
	snprintf(path, sizeof(path), "%s/calibrate/%s.json", PB_SRCDIR,
		 uname(&u) ? "x86_64" : u.machine);
	return path;
}
