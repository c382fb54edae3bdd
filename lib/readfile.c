// SPDX-License-Identifier: GPL-2.0-only
/*
 * readfile.c - a file the user hands in, read with a bound (readfile.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/readfile.h"

const char *readfile_size_text(char *buf, size_t len, size_t bytes)
{
	if (bytes && !(bytes % (1UL << 30)))
		snprintf(buf, len, "%zuG", bytes >> 30);
	else if (bytes && !(bytes % (1UL << 20)))
		snprintf(buf, len, "%zuM", bytes >> 20);
	else if (bytes && !(bytes % (1UL << 10)))
		snprintf(buf, len, "%zuK", bytes >> 10);
	else
		snprintf(buf, len, "%zu bytes", bytes);
	return buf;
}

/* "PATH: larger than the 16M WHAT may be", and -EFBIG. */
static int too_big(const char *path, size_t max, const char *what,
		   const struct stat *sb, char *why, size_t whylen)
{
	char bound[32];

	readfile_size_text(bound, sizeof(bound), max);
	if (sb)
		snprintf(why, whylen, "%s: larger than the %s %s may be (%lld"
			 " bytes)", path, bound, what, (long long)sb->st_size);
	else
		snprintf(why, whylen, "%s: larger than the %s %s may be", path,
			 bound, what);
	return -EFBIG;
}

/*
 * What fstat() says of @fd before reading: a directory cannot be read, a
 * regular file's size is known.  0, or -errno with @why.
 */
static int check_before_reading(int fd, const char *path, size_t max,
				const char *what, char *why, size_t whylen)
{
	struct stat sb;

	if (fstat(fd, &sb)) {
		snprintf(why, whylen, "%s: cannot read: %s", path,
			 strerror(errno));
		return -errno;
	}
	if (S_ISDIR(sb.st_mode)) {
		snprintf(why, whylen, "%s: cannot read: %s", path,
			 strerror(EISDIR));
		return -EISDIR;
	}
	if (S_ISREG(sb.st_mode) && sb.st_size >= 0 &&
	    (unsigned long long)sb.st_size > max)
		return too_big(path, max, what, &sb, why, whylen);
	return 0;
}

int readfile_all(const char *path, size_t max, const char *what,
		 char **bufp, size_t *lenp, char *why, size_t whylen)
{
	size_t len = 0, cap = 0;
	char *buf = NULL;
	int fd, ret;

	*bufp = NULL;
	*lenp = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(why, whylen, "%s: cannot open: %s", path,
			 strerror(errno));
		return ret;
	}
	ret = check_before_reading(fd, path, max, what, why, whylen);
	while (!ret) {
		ssize_t n;

		/*
		 * Room for one byte past the bound (that byte says "past")
		 * and the NUL.
		 */
		if (len + 1 >= cap) {
			size_t want = cap ? cap * 2 : 65536;
			char *bigger;

			if (want > max + 2)
				want = max + 2;
			if (want <= cap) {
				ret = too_big(path, max, what, NULL, why,
					      whylen);
				break;
			}
			bigger = realloc(buf, want);
			if (!bigger) {
				snprintf(why, whylen, "%s: out of memory", path);
				ret = -ENOMEM;
				break;
			}
			buf = bigger;
			cap = want;
		}
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			snprintf(why, whylen, "%s: cannot read: %s", path,
				 strerror(errno));
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > max)
			ret = too_big(path, max, what, NULL, why, whylen);
	}
	close(fd);
	if (ret) {
		free(buf);
		return ret;
	}
	if (!buf && !(buf = malloc(1))) {
		snprintf(why, whylen, "%s: out of memory", path);
		return -ENOMEM;
	}
	buf[len] = '\0';
	*bufp = buf;
	*lenp = len;
	return 0;
}

void readfile_lines_init(struct readfile_lines *r, FILE *f, const char *path,
			 size_t max_bytes, size_t max_line, const char *what)
{
	memset(r, 0, sizeof(*r));
	r->f = f;
	r->path = path;
	r->what = what;
	r->max_bytes = max_bytes;
	r->max_line = max_line && max_line < max_bytes ? max_line : max_bytes;
}

int readfile_lines_open(struct readfile_lines *r, const char *path,
			size_t max_bytes, size_t max_line, const char *what,
			char *why, size_t whylen)
{
	FILE *f = fopen(path, "re");
	int ret;

	readfile_lines_init(r, NULL, path, max_bytes, max_line, what);
	if (!f) {
		ret = -errno;
		snprintf(why, whylen, "%s: cannot open: %s", path,
			 strerror(errno));
		return ret;
	}
	ret = check_before_reading(fileno(f), path, max_bytes, what, why,
				   whylen);
	if (ret) {
		fclose(f);
		return ret;
	}
	r->checked = true;
	r->f = f;
	r->own = true;
	return 0;
}

int readfile_lines_next(struct readfile_lines *r, char **line, size_t *len,
			char *why, size_t whylen)
{
	size_t n = 0;
	int c = 0, ret = 0;

	/* A stream handed in open: its size, if it is a file, said first. */
	if (!r->checked) {
		r->checked = true;
		if (fileno(r->f) >= 0) {
			ret = check_before_reading(fileno(r->f), r->path,
						   r->max_bytes, r->what, why,
						   whylen);
			if (ret)
				return ret;
		}
	}
	flockfile(r->f);
	while ((c = getc_unlocked(r->f)) != EOF) {
		if (r->total == r->max_bytes) {
			ret = too_big(r->path, r->max_bytes, r->what, NULL, why,
				      whylen);
			break;
		}
		r->total++;
		if (n == r->max_line) {
			char bound[32];

			readfile_size_text(bound, sizeof(bound), r->max_line);
			snprintf(why, whylen, "%s:%lu: a line longer than the"
				 " %s a line of %s may be", r->path,
				 r->lineno + 1, bound, r->what);
			ret = -EFBIG;
			break;
		}
		if (n + 1 >= r->cap) {
			size_t want = r->cap ? r->cap * 2 : 256;
			char *bigger;

			if (want > r->max_line + 1)
				want = r->max_line + 1;
			bigger = realloc(r->buf, want);
			if (!bigger) {
				snprintf(why, whylen, "%s: out of memory",
					 r->path);
				ret = -ENOMEM;
				break;
			}
			r->buf = bigger;
			r->cap = want;
		}
		r->buf[n++] = (char)c;
		if (c == '\n')
			break;
	}
	if (!ret && c == EOF && ferror(r->f)) {
		ret = errno ? -errno : -EIO;
		snprintf(why, whylen, "%s: cannot read: %s", r->path,
			 strerror(-ret));
	}
	funlockfile(r->f);
	if (ret)
		return ret;
	if (!n)
		return 0;
	r->buf[n] = '\0';
	r->lineno++;
	*line = r->buf;
	*len = n;
	return 1;
}

void readfile_lines_close(struct readfile_lines *r)
{
	if (r->own && r->f)
		fclose(r->f);
	free(r->buf);
	r->buf = NULL;
	r->f = NULL;
}
