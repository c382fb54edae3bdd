// SPDX-License-Identifier: GPL-2.0-only
/*
 * kernels.c - the kernels scripts/kernel-build left in the cache: each a
 * directory kernels/NAME with an "info" file of "key value" lines (read
 * with a bound: it is ours, but the cache is a directory anyone with the
 * account can write).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "vm/vm.h"

#define INFO_MAX	(64 * 1024)

int vm_cache_dir(char *buf, size_t size)
{
	const char *c = getenv("PTEBATCH_CACHE"), *home = getenv("HOME");
	int n;

	if (c && *c)
		n = snprintf(buf, size, "%s", c);
	else if (home && *home)
		n = snprintf(buf, size, "%s/.cache/ptebatch", home);
	else
		n = snprintf(buf, size, "/root/.cache/ptebatch");
	if (n < 0 || (size_t)n >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* @v into @dst, cut to fit (the fields are short; a long one is junk). */
static void copy_field(char *dst, size_t size, const char *v)
{
	size_t n = strnlen(v, size - 1);

	memcpy(dst, v, n);
	dst[n] = '\0';
}

/* Read kernels/@name/info into @k; 0, or -1 if it is not a built kernel. */
static int kernel_read_info(const char *kernels, const char *name,
			    struct vm_kernel *k)
{
	char path[PATH_MAX + 64], line[4096 + 64];
	struct stat st;
	size_t total = 0;
	FILE *f;

	memset(k, 0, sizeof(*k));
	if (snprintf(k->dir, sizeof(k->dir), "%s/%s", kernels, name) >=
	    (int)sizeof(k->dir))
		return -1;
	copy_field(k->name, sizeof(k->name), name);
	snprintf(path, sizeof(path), "%s/info", k->dir);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *v = strchr(line, ' ');

		total += strlen(line);
		if (total > INFO_MAX)
			break;
		line[strcspn(line, "\n")] = '\0';
		if (!v)
			continue;
		*v++ = '\0';
		if (!strcmp(line, "version"))
			copy_field(k->version, sizeof(k->version), v);
		else if (!strcmp(line, "arch"))
			copy_field(k->arch, sizeof(k->arch), v);
		else if (!strcmp(line, "granule"))
			copy_field(k->granule, sizeof(k->granule), v);
		else if (!strcmp(line, "patches"))
			copy_field(k->patches, sizeof(k->patches), v);
		else if (!strcmp(line, "built"))
			copy_field(k->built, sizeof(k->built), v);
		else if (!strcmp(line, "build_seconds"))
			k->build_seconds = strtol(v, NULL, 10);
		else if (!strcmp(line, "image") &&
			 snprintf(k->image, sizeof(k->image), "%s/%s", k->dir,
				  v) >= (int)sizeof(k->image))
			k->image[0] = '\0';
	}
	fclose(f);
	if (!k->version[0] || !k->arch[0] || !k->image[0] ||
	    stat(k->image, &st) || !S_ISREG(st.st_mode))
		return -1;
	if (!k->granule[0])
		copy_field(k->granule, sizeof(k->granule), "4k");
	return 0;
}

static int newest_first(const void *a, const void *b)
{
	const struct vm_kernel *x = a, *y = b;
	int c = strcmp(y->built, x->built);

	return c ? c : strcmp(x->name, y->name);
}

int vm_kernels_list(struct vm_kernel **out)
{
	char cache[PATH_MAX], kernels[PATH_MAX + 16];
	struct vm_kernel *v = NULL;
	struct dirent *d;
	int n = 0, cap = 0;
	DIR *dir;

	*out = NULL;
	if (vm_cache_dir(cache, sizeof(cache)))
		return -1;
	snprintf(kernels, sizeof(kernels), "%s/kernels", cache);
	dir = opendir(kernels);
	if (!dir)
		return errno == ENOENT ? 0 : -1;
	while ((d = readdir(dir))) {
		struct vm_kernel k;

		if (d->d_name[0] == '.' ||
		    kernel_read_info(kernels, d->d_name, &k))
			continue;
		if (n == cap) {
			struct vm_kernel *nv;

			cap = cap ? 2 * cap : 8;
			nv = realloc(v, (size_t)cap * sizeof(*v));
			if (!nv) {
				free(v);
				closedir(dir);
				errno = ENOMEM;
				return -1;
			}
			v = nv;
		}
		v[n++] = k;
	}
	closedir(dir);
	qsort(v, (size_t)n, sizeof(*v), newest_first);
	*out = v;
	return n;
}

/* The patch series' name as NAME shows it: its directory's last part. */
static const char *series_name(const struct vm_kernel *k)
{
	const char *s = strrchr(k->patches, '/');

	return k->patches[0] ? (s ? s + 1 : k->patches) : "";
}

/* Does @k's version start with @want, at a dot boundary ("7.3" ~ 7.3.4)? */
static bool version_matches(const char *version, const char *want, size_t n)
{
	return !strncmp(version, want, n) &&
	       (version[n] == '\0' || version[n] == '.');
}

/*
 * @spec as VERSION[+SERIES][-ARCH[-GRANULE]]; an arch of "arm64" without a
 * granule is 4k.
 */
static bool spec_matches(const char *spec, const struct vm_kernel *k)
{
	char s[256], *arch, *series, *granule;

	if (snprintf(s, sizeof(s), "%s", spec) >= (int)sizeof(s))
		return false;
	arch = strchr(s, '-');
	if (arch)
		*arch++ = '\0';
	series = strchr(s, '+');
	if (series)
		*series++ = '\0';
	if (!version_matches(k->version, s, strlen(s)))
		return false;
	if (strcmp(series ? series : "", series_name(k)))
		return false;
	granule = arch ? strchr(arch, '-') : NULL;
	if (granule)
		*granule++ = '\0';
	if (strcmp(arch ? arch : "x86_64", k->arch))
		return false;
	return !strcmp(granule ? granule : "4k", k->granule);
}

int vm_kernel_find(const char *spec, struct vm_kernel *k, char *why,
		   size_t whylen)
{
	struct vm_kernel *v;
	char cache[PATH_MAX];
	struct utsname u;
	int n, i;

	n = vm_kernels_list(&v);
	if (n < 0) {
		snprintf(why, whylen, "cannot read the kernel cache: %s",
			 strerror(errno));
		return -1;
	}
	if (vm_cache_dir(cache, sizeof(cache)))
		cache[0] = '\0';
	uname(&u);
	for (i = 0; i < n; i++) {
		bool hit;

		if (!spec || !*spec)
			hit = !v[i].patches[0] &&
			      !strcmp(v[i].arch, !strcmp(u.machine, "aarch64") ?
					      "arm64" : "x86_64");
		else
			hit = !strcmp(spec, v[i].name) ||
			      spec_matches(spec, &v[i]);
		if (hit) {
			*k = v[i];
			free(v);
			return 0;
		}
	}
	free(v);
	if (!n)
		snprintf(why, whylen,
			 "no kernel is built in %s/kernels (build one: "
			 "ptebatch vm build, or make kernel)", cache);
	else
		snprintf(why, whylen,
			 "no built kernel is '%s' (ptebatch vm list shows "
			 "the %d there)", spec && *spec ? spec : "the default",
			 n);
	return -1;
}
