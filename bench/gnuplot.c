// SPDX-License-Identifier: GPL-2.0-only
/*
 * gnuplot.c: the figures' engine (gnuplot.h) - what talks to gnuplot.
 *
 * No string of a row, of a flag or of a file name is gnuplot code.
 * gnuplot expands what it reads as commands before it parses them:
 * `command` runs a shell inside "..." (as root, here), @name substitutes
 * a macro, "..." reads \-escapes, ; and a newline end a command, and a
 * string in an expression may call system().  Datablock lines are not
 * commands: gnuplot 5.4 keeps a here-document's lines as they are
 * (no backquote, no macro, no escape, no continuation), and $L[N] is
 * line N as a string value, which nothing expands again.  So every
 * text a figure draws is a line of the datablock $L, and the script
 * names it by number only: `set title $L[3][2:]`.  Each line starts
 * with "|" ([2:] drops it), so that no text can be the datablock's
 * terminator.  A text's newlines make lines of their own, joined with
 * "\n" in the script.  Two things stay: the labels of `set xtics
 * ("LABEL" X)` are formats (gprintf), so their % are doubled; and the
 * text must be XML that the svg terminal passes on (lib/xmltext.h: what
 * XML cannot carry becomes U+FFFD; the terminal escapes & and <, and
 * figure_svg_fix() the > of a "]]>").  Enhanced text is off (`set
 * termoption noenhanced`), so ^ _ @ & { } are drawn as they are.
 *
 * The figure is drawn on gnuplot's stdout, not into a file gnuplot
 * names: no file name reaches gnuplot either, and nothing is written
 * until every figure of the run is drawn.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/gnuplot.h"
#include "lib/xmltext.h"

/*
 * @s drawn as it is, by reference to lines of $L: in the script
 * `$L[N][2:]`, or `$L[N][2:]."\n".$L[N+1][2:]` for several lines.  A
 * tic label (@tic) has its % doubled, gnuplot reading it as a format.
 */
static void label(struct figure *fig, const char *s, bool tic)
{
	char *clean = xml_clean_text(s, true), *c, *nl;
	bool first = true;

	if (!clean) {
		fig->err = -ENOMEM;
		fputs("\"\"", fig->f);
		return;
	}
	if (!clean[0]) {
		/* "" is gnuplot's no-title: kept as the code's own. */
		fputs("\"\"", fig->f);
		free(clean);
		return;
	}
	for (c = clean; c; c = nl ? nl + 1 : NULL) {
		nl = strchr(c, '\n');
		if (nl)
			*nl = '\0';
		fputc('|', fig->lab);
		for (; *c; c++) {
			if (tic && *c == '%')
				fputc('%', fig->lab);
			fputc(*c, fig->lab);
		}
		fputc('\n', fig->lab);
		fprintf(fig->f, "%s$L[%d][2:]", first ? "" : ".\"\\n\".",
			++fig->nr_labels);
		first = false;
	}
	free(clean);
}

void panel_init(struct panel *p, struct series *s)
{
	memset(p, 0, sizeof(*p));
	p->ymin = p->ymax = p->xmin = p->xmax = NAN;
	p->s = s;
	p->key = true;
}

struct series *series_add(struct panel *p, enum ser_kind kind,
			  const char *color, const char *fmt, ...)
{
	struct series *s = &p->s[p->ns++];
	va_list ap;

	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->color = color;
	s->pt = 7;
	va_start(ap, fmt);
	vsnprintf(s->title, sizeof(s->title), fmt, ap);
	va_end(ap);
	return s;
}

void point_add(struct series *s, double x, double y, double lo, double hi)
{
	if (s->n == MAX_POINTS)
		return;
	s->x[s->n] = x;
	s->y[s->n] = y;
	s->lo[s->n] = lo;
	s->hi[s->n] = hi;
	s->row[s->n] = NULL;
	s->field[s->n] = NULL;
	s->n++;
}

static void data_value(FILE *f, double v)
{
	if (isnan(v) || isinf(v))
		fputs(" NaN", f);
	else
		fprintf(f, " %.9g", v);
}

/* Has @s a point to draw (gnuplot warns of a series with none)? */
static bool series_drawn(const struct series *s)
{
	int i;

	if (s->kind == SER_HLINE)
		return s->n && !isnan(s->y[0]);
	for (i = 0; i < s->n; i++)
		if (!isnan(s->y[i]) && !isinf(s->y[i]))
			return true;
	return false;
}

/*
 * The right margin, in characters, that holds @p's legend (gnuplot does
 * not widen a margin that is set): its longest title and the sample.
 */
int panel_legend_chars(const struct panel *p)
{
	size_t len = 0;
	int j;

	if (!p->key)
		return 3;
	for (j = 0; j < p->ns; j++)
		if (strlen(p->s[j].title) > len)
			len = strlen(p->s[j].title);
	if (p->one_line && len < 14)
		len = 14;
	return (int)(len * 0.95) + 11;
}

/* One right margin for @n panels stacked in a column, so they align. */
void panels_align(struct panel *p, int n)
{
	int i, m = 0;

	for (i = 0; i < n; i++)
		if (panel_legend_chars(&p[i]) > m)
			m = panel_legend_chars(&p[i]);
	for (i = 0; i < n; i++)
		p[i].rmargin = m;
}

/*
 * min..max drawn as a vector from min to max with flat ends: gnuplot's
 * yerrorbars style would draw a white disc around a point at the median,
 * hiding the bar's top on short bars.
 */
#define ERRBAR_HEADS "heads size screen 0.004,90"

void panel_plot(struct figure *fig, const struct panel *p)
{
	int nbars = 0, bar = 0, i, j, first = fig->blk;
	int *blk = &fig->blk;
	FILE *f = fig->f;
	double width;
	bool any = false;

	if (p->lmargin)
		fprintf(f, "set lmargin %d\n", p->lmargin);
	for (j = 0; j < p->ns; j++)
		nbars += p->s[j].kind == SER_BARS && !p->s[j].key_only;
	width = nbars ? 0.8 / nbars : 0.8;
	for (j = 0; j < p->ns; j++) {
		const struct series *s = &p->s[j];

		fprintf(f, "$d%d << EOD\n", (*blk)++);
		for (i = 0; i < s->n; i++) {
			double x = s->x[i];

			if (s->kind == SER_BARS)
				x += (bar - (nbars - 1) / 2.0) * width;
			else if (s->kind == SER_MARKS)
				x += (s->slot - (nbars - 1) / 2.0) * width;
			data_value(f, x);
			data_value(f, s->y[i]);
			data_value(f, s->lo[i]);
			data_value(f, s->hi[i]);
			fputc('\n', f);
		}
		fputs("EOD\n", f);
		bar += s->kind == SER_BARS;
	}
	fputs("unset logscale\nunset xtics\nunset ytics\nset ytics nomirror\n"
	      "set xtics nomirror\nset grid ytics lc rgb '#d8d8d8' lw 1\n",
	      f);
	fputs("set title ", f);
	label(fig, p->title, false);
	fputs(" font ',12'\nset xlabel ", f);
	label(fig, p->xlabel, false);
	fputs("\nset ylabel ", f);
	label(fig, p->ylabel, false);
	fputc('\n', f);
	if (p->logy)
		fputs("set logscale y\nset format y '%g'\n", f);
	else
		fputs("set format y '%g'\n", f);
	if (p->logx2)
		fputs("set logscale x 2\n", f);
	if (p->nr_cats) {
		fputs("set xtics (", f);
		for (i = 0; i < p->nr_cats; i++) {
			fputs(i ? ", " : "", f);
			label(fig, p->cats[i], true);
			fprintf(f, " %d", i);
		}
		fputs(")\n", f);
		/* Many categories: their names slanted, so none overlap. */
		if (p->nr_cats > 8)
			fputs("set xtics rotate by 30 right\n", f);
		fprintf(f, "set xrange [-0.6:%f]\n", p->nr_cats - 0.4);
	} else if (p->xtics) {
		fprintf(f, "set xtics %s\n", p->xtics);
		fputs("set xrange [", f);
		if (!isnan(p->xmin))
			fprintf(f, "%g", p->xmin);
		fputs(":", f);
		if (!isnan(p->xmax))
			fprintf(f, "%g", p->xmax);
		fputs("]\n", f);
	} else {
		fputs("set xtics\nset xrange [*:*]\n", f);
	}
	fputs("set yrange [", f);
	if (!isnan(p->ymin))
		fprintf(f, "%g", p->ymin);
	fputs(":", f);
	if (!isnan(p->ymax))
		fprintf(f, "%g", p->ymax);
	fputs("]\n", f);
	if (p->key)
		fputs("set key outside right top vertical Left reverse"
		      " noautotitle samplen 2 spacing 1.1 width 1\n", f);
	else
		fputs("unset key\n", f);
	fprintf(f, "set rmargin %d\n", p->rmargin ? p->rmargin
						 : panel_legend_chars(p));
	fprintf(f, "set boxwidth %f absolute\n", width);
	fputs("plot ", f);
	for (j = 0; j < p->ns; j++) {
		const struct series *s = &p->s[j];
		int d = first + j;

		if (s->key_only) {
			fputs(any ? ", \\\n     " : "", f);
			fprintf(f, "keyentry with boxes lc rgb '%s' title ",
				s->color);
			label(fig, s->title, false);
			any = true;
			continue;
		}
		if (!series_drawn(s))
			continue;
		fputs(any ? ", \\\n     " : "", f);
		any = true;
		switch (s->kind) {
		case SER_BARS:
			fprintf(f, "$d%d using 1:2 with boxes lc rgb '%s'"
				" title ", d, s->color);
			label(fig, s->title, false);
			if (s->err)
				fprintf(f, ", $d%d using 1:3:(0):($4-$3) with"
					" vectors %s lc rgb '#222222' lw 1"
					" notitle", d, ERRBAR_HEADS);
			break;
		case SER_MARKS:
			fprintf(f, "$d%d using 1:2:3:4 with yerrorbars lc rgb '%s'"
				" pt %d ps 1.4 lw 1.5 title ", d, s->color, s->pt);
			label(fig, s->title, false);
			break;
		case SER_LINES:
			fprintf(f, "$d%d using 1:2 with linespoints lc rgb '%s'"
				" pt %d ps %s lw 2 title ", d, s->color, s->pt,
				s->pt == 4 ? "2" : "1");
			label(fig, s->title, false);
			if (s->err)
				fprintf(f, ", $d%d using 1:3:(0):($4-$3) with"
					" vectors %s lc rgb '%s' lw 1 notitle",
					d, ERRBAR_HEADS, s->color);
			break;
		case SER_HLINE:
			/* The line spans the axis: gnuplot's own x. */
			fprintf(f, "%.9g with lines dt 2 lw 2 lc rgb '%s' title ",
				s->y[0], s->color);
			label(fig, s->title, false);
			break;
		}
	}
	if (p->one_line) {
		fputs(any ? ", \\\n     " : "", f);
		fputs("1 with lines dt 3 lc rgb '#555555' title"
		      " \"1 = no change\"", f);
		any = true;
	}
	if (!any)
		fputs("NaN notitle", f);
	fputc('\n', f);
}

int figure_open(struct figure *fig, const char *path, int width,
		int height, int rows, int cols, const char *title)
{
	memset(fig, 0, sizeof(*fig));
	snprintf(fig->path, sizeof(fig->path), "%s", path);
	fig->f = open_memstream(&fig->cmd, &fig->cmd_len);
	fig->lab = open_memstream(&fig->lab_text, &fig->lab_len);
	if (!fig->f || !fig->lab) {
		if (fig->f)
			fclose(fig->f);
		free(fig->cmd);
		return -ENOMEM;
	}
	/* No `set output`: the SVG goes to stdout (see above). */
	fprintf(fig->f, "set terminal svg size %d,%d font 'Sans,11'"
		" background '#ffffff'\n"
		"set termoption noenhanced\n"
		"set encoding utf8\n", width, height);
	fputs("set datafile missing 'NaN'\n"
	      "set border 3 lc rgb '#444444'\n"
	      "set tics textcolor rgb '#222222'\n"
	      "set style fill solid 0.85 border lc rgb '#333333'\n"
	      "set pointintervalbox 0\n"
	      "set lmargin 12\n", fig->f);
	fprintf(fig->f, "set multiplot layout %d,%d title ", rows, cols);
	label(fig, title, false);
	fputs(" font ',13'\n", fig->f);
	return 0;
}

/* Write all of @len bytes of @buf to @fd: 0 or -errno. */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* All that was written to the memfd @fd, malloc'd, NUL-terminated. */
static char *read_memfd(int fd, size_t *lenp)
{
	struct stat sb;
	size_t len, done = 0;
	char *buf;

	if (fstat(fd, &sb))
		return NULL;
	len = (size_t)sb.st_size;
	buf = malloc(len + 1);
	if (!buf)
		return NULL;
	while (done < len) {
		ssize_t n = pread(fd, buf + done, len - done, (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	buf[done] = '\0';
	*lenp = done;
	return buf;
}

/*
 * The message of one line of gnuplot's stderr, @n bytes at @s, into
 * @buf: what follows its `"SCRIPT" line N: ` (N into @line), else the
 * line itself.
 */
static void gnuplot_line(const char *s, size_t n, char *buf, size_t len,
			 int *line)
{
	const char *c;

	*line = 0;
	for (c = s; c + 5 < s + n; c++)
		if (!strncmp(c, "line ", 5) && sscanf(c, "line %d:", line) == 1)
			break;
	if (c + 5 < s + n && memchr(c, ':', (size_t)(s + n - c))) {
		c = memchr(c, ':', (size_t)(s + n - c)) + 1;
	} else {
		c = s;
		*line = 0;
	}
	c += strspn(c, " \t");
	snprintf(buf, len, "%.*s", (int)(s + n - c), c);
}

/*
 * gnuplot's own words on what failed, in one line of @buf: its last
 * message ("line N: all points y value undefined!") without the script's
 * name, nor the line of the script and the caret it shows before it.
 */
static void gnuplot_message(const char *err, char *buf, size_t len, int *line)
{
	const char *c, *last = NULL;
	size_t n;

	for (c = err; *c; c += n + !!c[n]) {
		n = strcspn(c, "\n");
		if (strspn(c, " \t^") < n)
			last = c;
	}
	*line = 0;
	if (last)
		gnuplot_line(last, strcspn(last, "\n"), buf, len, line);
	else
		snprintf(buf, len, "it gave no reason");
}

/*
 * A memfd (close-on-exec) numbered 3 or above: were it 0, 1 or 2 (this
 * process started with one closed), the dup2() onto gnuplot's own 0, 1
 * or 2 would be no dup at all and leave it to close at exec.
 */
static int memfd_high(const char *name)
{
	int fd = memfd_create(name, MFD_CLOEXEC), high;

	if (fd < 0 || fd > 2)
		return fd;
	high = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return high;
}

/*
 * Run gnuplot on @script, its SVG (stdout) into @svg; 0, or -ENOENT (no
 * gnuplot) or -EIO with what happened in one line in @why.  The script
 * goes in a memfd, read by its /proc name (gnuplot stops at a script
 * file's first error; on stdin it would go on), so nothing is left in
 * /tmp; gnuplot is run from an argument vector, no shell.
 */
static int gnuplot_run(const char *script, size_t len, char **svg,
		       size_t *svg_len, char **errtext, char *why,
		       size_t whylen)
{
	char *const argv[] = { "gnuplot", "/proc/self/fd/0", NULL };
	posix_spawn_file_actions_t fa;
	int sfd, ofd, efd, status, err;
	size_t elen = 0;
	pid_t pid;

	*svg = *errtext = NULL;
	sfd = memfd_high("ptebatch-plot-script");
	ofd = memfd_high("ptebatch-plot-svg");
	efd = memfd_high("ptebatch-plot-stderr");
	err = sfd < 0 || ofd < 0 || efd < 0 ? -errno : 0;
	if (!err)
		err = write_all(sfd, script, len);
	if (err) {
		snprintf(why, whylen, "could not pass gnuplot its script: %s",
			 strerror(-err));
		goto out;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, sfd, 0);
	posix_spawn_file_actions_adddup2(&fa, ofd, 1);
	posix_spawn_file_actions_adddup2(&fa, efd, 2);
	err = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (err) {
		snprintf(why, whylen, err == ENOENT ? "gnuplot is not installed"
			 " (Debian: apt-get install gnuplot-nox)" :
			 "could not run gnuplot: %s", strerror(err));
		err = err == ENOENT ? -ENOENT : -EIO;
		goto out;
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			err = -errno;
			snprintf(why, whylen, "waiting for gnuplot: %s",
				 strerror(errno));
			goto out;
		}
	*errtext = read_memfd(efd, &elen);
	*svg = read_memfd(ofd, svg_len);
	if (!*errtext || !*svg) {
		err = -ENOMEM;
		snprintf(why, whylen, "%s", strerror(ENOMEM));
	} else if (WIFSIGNALED(status)) {
		err = -EIO;
		snprintf(why, whylen, "gnuplot was killed by signal %d (%s)",
			 WTERMSIG(status), strsignal(WTERMSIG(status)));
	} else if (WEXITSTATUS(status)) {
		char msg[400];
		int line;

		err = -EIO;
		gnuplot_message(*errtext, msg, sizeof(msg), &line);
		if (line)
			snprintf(why, whylen, "gnuplot stopped at line %d of"
				 " its script: %s", line, msg);
		else
			snprintf(why, whylen, "gnuplot exited with status %d:"
				 " %s", WEXITSTATUS(status), msg);
	} else if (!*svg_len) {
		err = -EIO;
		snprintf(why, whylen, "gnuplot drew nothing");
	}
out:
	if (sfd >= 0)
		close(sfd);
	if (ofd >= 0)
		close(ofd);
	if (efd >= 0)
		close(efd);
	if (err) {
		free(*svg);
		*svg = NULL;
	}
	return err;
}

/*
 * gnuplot's svg terminal escapes & and < in text but not >, so a "]]>"
 * in a label (which XML forbids in text) is written as "]]&gt;" here.
 * The terminal writes no CDATA section of its own (no `mouse` option).
 */
static int figure_svg_fix(char **svg, size_t *len)
{
	size_t n = 0, i, o;
	char *in = *svg, *out;

	for (i = 0; i + 3 <= *len; i++)
		n += !memcmp(in + i, "]]>", 3);
	if (!n)
		return 0;
	out = malloc(*len + 3 * n + 1);
	if (!out)
		return -ENOMEM;
	for (i = o = 0; i < *len; i++) {
		if (i + 3 <= *len && !memcmp(in + i, "]]>", 3)) {
			memcpy(out + o, "]]&gt;", 6);
			o += 6;
			i += 2;
		} else {
			out[o++] = in[i];
		}
	}
	out[o] = '\0';
	free(in);
	*svg = out;
	*len = o;
	return 0;
}

/*
 * A failed script kept for whoever debugs it: $TMPDIR (or /tmp)
 * /ptebatch-plot-XXXXXX.gp, named in @buf; "" if it could not be.
 */
static void figure_keep_script(const char *script, size_t len, char *buf,
			       size_t buflen)
{
	const char *dir = getenv("TMPDIR");
	char path[4200];
	int fd;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "%s/ptebatch-plot-XXXXXX.gp",
		 dir && dir[0] ? dir : "/tmp");
	fd = mkstemps(path, 3);
	if (fd < 0)
		return;
	if (write_all(fd, script, len) || close(fd)) {
		unlink(path);
		return;
	}
	snprintf(buf, buflen, "%s", path);
}

int figure_close(struct figure *fig, struct fig_svg *out)
{
	char why[800], kept[4300], *script = NULL, *errtext = NULL, *c;
	size_t len = 0, n;
	FILE *sf;
	int err;

	fputs("unset multiplot\n", fig->f);
	err = fflush(fig->f) || fflush(fig->lab) || ferror(fig->f) ||
	      ferror(fig->lab) ? -ENOMEM : fig->err;
	sf = err ? NULL : open_memstream(&script, &len);
	if (sf) {
		fprintf(sf, "$L << EOD\n%.*sEOD\n%.*s", (int)fig->lab_len,
			fig->lab_text, (int)fig->cmd_len, fig->cmd);
		if (fclose(sf))
			err = -ENOMEM;
	} else if (!err) {
		err = -ENOMEM;
	}
	fclose(fig->f);
	fclose(fig->lab);
	free(fig->cmd);
	free(fig->lab_text);
	if (err == -EINVAL) {
		fprintf(stderr, "ptebatch: plot: %s\n", fig->why);
		goto out;
	}
	if (err) {
		fprintf(stderr, "ptebatch: plot: %s: %s\n", fig->path,
			strerror(-err));
		goto out;
	}
	snprintf(out->path, sizeof(out->path), "%s", fig->path);
	err = gnuplot_run(script, len, &out->svg, &out->len, &errtext, why,
			  sizeof(why));
	if (err == -ENOENT) {
		fprintf(stderr, "ptebatch: plot: needs gnuplot, which is not"
			" installed (Debian: apt-get install gnuplot-nox)\n");
	} else if (err) {
		figure_keep_script(script, len, kept, sizeof(kept));
		fprintf(stderr, "ptebatch: plot: could not draw %s: %s%s%s%s\n",
			fig->path, why, kept[0] ? " (the script is kept in " :
			"", kept, kept[0] ? ")" : "");
	} else {
		err = figure_svg_fix(&out->svg, &out->len);
		/* What gnuplot warned of, one line each. */
		for (c = errtext; !err && *c; c += n + !!c[n]) {
			char msg[400];
			int line;

			n = strcspn(c, "\n");
			if (!memmem(c, n, "arning", 6))
				continue;
			gnuplot_line(c, n, msg, sizeof(msg), &line);
			fprintf(stderr, "ptebatch: plot: gnuplot, drawing %s:"
				" %s\n", fig->path, msg);
		}
	}
out:
	free(errtext);
	free(script);
	return err;
}

bool gnuplot_installed(void)
{
	const char *path = getenv("PATH"), *c;
	char file[4200];
	size_t n;

	/* Where posix_spawnp() looks: $PATH, or confstr's /bin:/usr/bin. */
	if (!path)
		path = "/bin:/usr/bin";
	for (c = path;; c += n + 1) {
		n = strcspn(c, ":");
		snprintf(file, sizeof(file), "%.*s/gnuplot", (int)n,
			 n ? c : ".");
		if (!access(file, X_OK))
			return true;
		if (!c[n])
			return false;
	}
}
