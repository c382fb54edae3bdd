// SPDX-License-Identifier: GPL-2.0-only
/*
 * svg.c - the drawing of `ptebatch run --svg`: each observe of a run as a
 * figure with one row per process and region and one cell per base page,
 * coloured by folio, marked where a live register pins the frame or where
 * a statement copied the page on write.  What the marks mean is
 * docs/SCENARIO.md's ("Drawing the snapshots"); the choices made here:
 *
 * - A folio (its raw first frame: frame - index) gets its colour the first
 *   time a figure shows it and keeps it for the rest of the run, so one
 *   folio looks the same in every figure.  The palette cycles, and a raw
 *   frame the backend frees and reuses for a new folio keeps the colour.
 * - COW marks need the state before and after every statement: the
 *   runner hands over a raw snapshot after each process statement
 *   (scn_watch), and marks carry from one to the next by page position
 *   (process, region, offset), as long as the page keeps its frame.
 * - A row of more than SVG_FOLD_PAGES pages folds the record's runs
 *   (record_run_length()), cut further where a pin or COW mark changes,
 *   so that a folded cell has one set of marks.
 * - A row wider than SVG_WRAP_WIDTH goes on in lines below, each led by
 *   the offset of its first page.
 * - Text widths are estimated (no font metrics): 0.6 of the font size per
 *   character, a little more than sans-serif needs.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xmltext.h"
#include "scenario/record.h"
#include "scenario/svg.h"
#include "scenario/u64map.h"

#define SVG_FOLD_PAGES	64	/* rows longer than this fold their runs */
#define SVG_WRAP_WIDTH	1400	/* cells of one line at most, px */
#define MARGIN		16
#define CELL		16	/* one page's cell, px square */
/*
 * Between the cells of a row of single pages: one pitch for every page,
 * so that one offset is at one x in every row (a frame two processes
 * share is one above the other), and room for two folios' outlines.
 */
#define GAP_GRID	5
/* Between the cells of a folded row: of one folio, of two. */
#define GAP_IN		1
#define GAP_OUT		6
#define SIZE_BAND	12	/* above a line's cells: folio sizes */
#define LINE_PITCH	(SIZE_BAND + CELL + 8)
#define CAPTION_H	28
#define LEGEND_LINE	24

#define FILL_ABSENT	"#ffffff"
#define STROKE_ABSENT	"#c4c4c4"
#define FILL_ZERO	"#d4d4d4"
#define OUTLINE		"#262626"

/*
 * Light and mid tones only, so that the black marks and text read on
 * every one; no grey (the zero page's) and no white (absent).
 */
static const char *const palette[] = {
	"#66c2a5", "#fc8d62", "#8da0cb", "#e78ac3", "#a6d854", "#ffd92f",
	"#e5c494", "#7fc8f8", "#c39bd3", "#f4a6a6", "#9fd9b4", "#d9b26f",
};
#define NR_PALETTE	(sizeof(palette) / sizeof(palette[0]))

/* ---- the state a run leaves ------------------------------------------- */

/* What a live register holds: the raw frames it pinned. */
struct svg_pin {
	int proc;		/* the registering process; -1: not held */
	uint64_t *frames;
	unsigned long nr;
};

struct svg_drawing {
	const struct scenario *s;
	const struct backend *b;
	int err;		/* the first -errno of a hook */

	/* The pages after the last process statement, and their marks. */
	struct snapshot cur;
	int *cur_cow;		/* statement that copied the page, or 0 */
	int *next_cow;
	unsigned long cap_cow;
	struct u64map cur_maps;	/* raw frame -> pages that map it */
	struct u64map next_maps;
	struct svg_pin *pins;	/* [handle] */

	struct u64map colours;	/* raw folio id -> palette index + 1 */
	unsigned long nr_colours;

	/* One figure's working arrays, by page of its snapshot. */
	struct snapshot canon;
	bool *pinned;
	int *fig_cow;
	uint64_t *folio;	/* the figure's folio number, from 1 */
	unsigned long cap_fig;
	struct u64map fig_folios;	/* raw folio id -> folio number */
	uint64_t *pinned_frames;	/* sorted */

	/* The figures drawn so far, and the room they take. */
	FILE *body;
	char *body_text;
	size_t body_len;
	int width, height, nr_figures;
};

static int text_width(const char *text, int px)
{
	return (int)(strlen(text) * px * 6 + 9) / 10;
}

/*
 * @text as XML text (lib/xmltext.h): specials escaped, and what XML
 * cannot carry (a file name's control characters or bytes that are not
 * UTF-8) drawn as U+FFFD.
 */
static void put_text(FILE *f, const char *text)
{
	xml_put_text(f, text);
}

static int page_cmp(const struct snap_page *a, const struct snap_page *b)
{
	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	if (a->region != b->region)
		return a->region < b->region ? -1 : 1;
	if (a->off != b->off)
		return a->off < b->off ? -1 : 1;
	return 0;
}

static int copy_snapshot(struct snapshot *dst, const struct snapshot *src)
{
	if (src->nr > dst->cap) {
		struct snap_page *pages;

		pages = realloc(dst->pages, src->nr * sizeof(*pages));
		if (!pages)
			return -ENOMEM;
		dst->pages = pages;
		dst->cap = src->nr;
	}
	if (src->nr)
		memcpy(dst->pages, src->pages, src->nr * sizeof(*src->pages));
	dst->nr = src->nr;
	return 0;
}

/* Room for @nr elements of @size in *@array, what it holds kept. */
static int reserve(void **array, unsigned long nr, size_t size)
{
	void *p = realloc(*array, (nr ? nr : 1) * size);

	if (!p)
		return -ENOMEM;
	*array = p;
	return 0;
}

static int count_maps(struct u64map *maps, const struct snapshot *snap)
{
	unsigned long i;

	u64map_clear(maps);
	for (i = 0; i < snap->nr; i++) {
		uint64_t *v;

		if (!snap->pages[i].present)
			continue;
		v = u64map_at(maps, snap->pages[i].frame);
		if (!v)
			return -ENOMEM;
		(*v)++;
	}
	return 0;
}

/*
 * A copy on write, as the drawing defines it: the page at one place moved
 * from a frame others could see (mapped more than once, or the zero page,
 * which every process shares) to a frame of its own.
 */
static bool copied_on_write(const struct snap_page *old,
			    const struct u64map *old_maps,
			    const struct snap_page *new,
			    const struct u64map *new_maps)
{
	if (!old->present || !new->present || old->frame == new->frame)
		return false;
	if (!old->zero && u64map_get(old_maps, old->frame) < 2)
		return false;
	return !new->zero && u64map_get(new_maps, new->frame) == 1;
}

/*
 * The COW marks of @next's pages, in @cow: carried over from d->cur where
 * the page kept its frame; @number's where statement @number (0: none, an
 * observe) copied it, by @next_maps, the frame counts of @next.
 */
static void carry_cow(const struct svg_drawing *d, const struct snapshot *next,
		      const struct u64map *next_maps, int number, int *cow)
{
	unsigned long i, j = 0;

	for (i = 0; i < next->nr; i++) {
		const struct snap_page *new = &next->pages[i], *old;

		cow[i] = 0;
		while (j < d->cur.nr && page_cmp(&d->cur.pages[j], new) < 0)
			j++;
		if (j == d->cur.nr || page_cmp(&d->cur.pages[j], new))
			continue;
		old = &d->cur.pages[j];
		if (old->present && new->present && old->frame == new->frame)
			cow[i] = d->cur_cow[j];
		else if (number && copied_on_write(old, &d->cur_maps, new,
						   next_maps))
			cow[i] = number;
	}
}

static void pin_release(struct svg_pin *pin)
{
	free(pin->frames);
	pin->frames = NULL;
	pin->nr = 0;
	pin->proc = -1;
}

/* register: the frames of the range, as the statement left them. */
static int pin_take(struct svg_pin *pin, const struct stmt *st,
		    const struct snapshot *snap)
{
	unsigned long i;

	pin_release(pin);
	for (i = 0; i < snap->nr; i++) {
		const struct snap_page *pg = &snap->pages[i];
		uint64_t *frames;

		if (pg->proc != st->proc || pg->region != st->region ||
		    pg->off < st->off || pg->off - st->off >= st->len ||
		    !pg->present)
			continue;
		frames = realloc(pin->frames, (pin->nr + 1) * sizeof(*frames));
		if (!frames)
			return -ENOMEM;
		pin->frames = frames;
		pin->frames[pin->nr++] = pg->frame;
	}
	pin->proc = st->proc;
	return 0;
}

/* What @st, which ended as @res, did to the pins. */
static int update_pins(struct svg_drawing *d, const struct stmt *st,
		       const struct stmt_result *res,
		       const struct snapshot *snap)
{
	int h;

	switch (st->kind) {
	case ST_REGISTER:
		/* A failed registration pins nothing (io_uring unpins). */
		if (!res->err)
			return pin_take(&d->pins[st->handle], st, snap);
		break;
	case ST_UNREGISTER:
		if (!res->err)
			pin_release(&d->pins[st->handle]);
		break;
	case ST_EXIT:
	case ST_EXEC:
		/* The process's ring goes with it, and its buffers. */
		for (h = 0; h < d->s->nr_handles; h++)
			if (d->pins[h].proc == st->proc)
				pin_release(&d->pins[h]);
		break;
	default:
		break;
	}
	return 0;
}

static int watch_stmt_done(void *arg, const struct stmt *st,
			   const struct stmt_result *res,
			   const struct snapshot *raw)
{
	struct svg_drawing *d = arg;
	struct u64map maps;
	int *cow, ret;

	if (raw->nr > d->cap_cow) {
		ret = reserve((void **)&d->cur_cow, raw->nr, sizeof(int));
		if (!ret)
			ret = reserve((void **)&d->next_cow, raw->nr,
				      sizeof(int));
		if (ret)
			return d->err = ret;
		d->cap_cow = raw->nr;
	}
	ret = count_maps(&d->next_maps, raw);
	if (ret)
		return d->err = ret;
	carry_cow(d, raw, &d->next_maps, st->number, d->next_cow);
	ret = copy_snapshot(&d->cur, raw);
	if (ret)
		return d->err = ret;
	cow = d->cur_cow;
	d->cur_cow = d->next_cow;
	d->next_cow = cow;
	maps = d->cur_maps;
	d->cur_maps = d->next_maps;
	d->next_maps = maps;
	ret = update_pins(d, st, res, raw);
	return ret ? (d->err = ret) : 0;
}

/* ---- one figure ------------------------------------------------------- */

static int cmp_frame(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* d->pinned[]: which pages of @raw show a frame a live register holds. */
static int mark_pinned(struct svg_drawing *d, const struct snapshot *raw)
{
	unsigned long i, nr = 0;
	int h, ret;

	for (h = 0; h < d->s->nr_handles; h++)
		nr += d->pins[h].nr;
	ret = reserve((void **)&d->pinned_frames, nr, sizeof(uint64_t));
	if (ret)
		return ret;
	nr = 0;
	for (h = 0; h < d->s->nr_handles; h++) {
		if (!d->pins[h].nr)
			continue;
		memcpy(d->pinned_frames + nr, d->pins[h].frames,
		       d->pins[h].nr * sizeof(uint64_t));
		nr += d->pins[h].nr;
	}
	qsort(d->pinned_frames, nr, sizeof(uint64_t), cmp_frame);
	for (i = 0; i < raw->nr; i++)
		d->pinned[i] = raw->pages[i].present && nr &&
			       bsearch(&raw->pages[i].frame, d->pinned_frames,
				       nr, sizeof(uint64_t), cmp_frame);
	return 0;
}

static uint64_t folio_key(const struct snap_page *pg)
{
	return pg->frame - pg->index;
}

/*
 * The colour of the folio first seen at page @i: the palette's next, but
 * not the one of the page before it in the row (where the palette came
 * round to it), so that a copy never looks like the folio it left.  The
 * colour is the run's from then on.
 */
static uint64_t new_colour(struct svg_drawing *d, const struct snapshot *raw,
			   unsigned long i)
{
	const struct snap_page *prev = i ? &raw->pages[i - 1] : NULL;
	uint64_t c = d->nr_colours++ % NR_PALETTE + 1;

	if (prev && prev->present && prev->proc == raw->pages[i].proc &&
	    prev->region == raw->pages[i].region &&
	    u64map_get(&d->colours, folio_key(prev)) == c)
		c = d->nr_colours++ % NR_PALETTE + 1;
	return c;
}

/* d->folio[]: folios numbered from 1 in order of first appearance. */
static int number_folios(struct svg_drawing *d, const struct snapshot *raw)
{
	uint64_t next = 1, *v;
	unsigned long i;

	u64map_clear(&d->fig_folios);
	for (i = 0; i < raw->nr; i++) {
		d->folio[i] = 0;
		if (!raw->pages[i].present)
			continue;
		v = u64map_at(&d->fig_folios, folio_key(&raw->pages[i]));
		if (!v)
			return -ENOMEM;
		if (!*v)
			*v = next++;
		d->folio[i] = *v;
		v = u64map_at(&d->colours, folio_key(&raw->pages[i]));
		if (!v)
			return -ENOMEM;
		if (!*v)
			*v = new_colour(d, raw, i);
	}
	return 0;
}

/* What draw_row() needs of the figure being drawn. */
struct figure {
	struct svg_drawing *d;
	const struct snapshot *raw;
	const struct snap_page *canon;	/* the record's frame numbers */
	const int *cow;
	FILE *f;
	int label_w;
	int y;				/* top of the next line */
	int right;			/* the rightmost x drawn */
};

static const char *fill_of(const struct figure *g, unsigned long i)
{
	const struct snap_page *pg = &g->raw->pages[i];

	if (!pg->present)
		return FILL_ABSENT;
	if (pg->zero)
		return FILL_ZERO;
	return palette[u64map_get(&g->d->colours, folio_key(pg)) - 1];
}

/*
 * How many pages from @i (of a row ending at @end) one cell shows: one,
 * or in a folded row the record's run, cut where a mark changes.
 */
static unsigned long cell_pages(const struct figure *g, unsigned long i,
				unsigned long end, bool fold)
{
	unsigned long n, k;

	if (!fold)
		return 1;
	n = record_run_length(&g->canon[i], end - i, g->d->s->page_size);
	for (k = 1; k < n; k++)
		if (g->d->pinned[i + k] != g->d->pinned[i] ||
		    g->cow[i + k] != g->cow[i])
			return k;
	return n;
}

/* Is page @i the next of @prev's folio (absent pages go together too)? */
static bool same_group(const struct figure *g, unsigned long prev,
		       unsigned long i)
{
	const struct snap_page *a = &g->raw->pages[prev], *b = &g->raw->pages[i];

	if (!a->present || !b->present)
		return !a->present && !b->present;
	return g->d->folio[prev] == g->d->folio[i] && b->index == a->index + 1;
}

/* A folded cell's text: "x15 1..15" (count, index range), "C" first. */
static void folded_text(const struct figure *g, unsigned long i,
			unsigned long n, char *buf, size_t size)
{
	const struct snap_page *a = &g->raw->pages[i];
	const struct snap_page *z = &g->raw->pages[i + n - 1];
	const char *c = g->cow[i] ? "C " : "";

	if (!a->present || a->index == z->index)
		snprintf(buf, size, "%sx%lu", c, n);
	else
		snprintf(buf, size, "%sx%lu %lu..%lu", c, n, a->index,
			 z->index);
}

static int cell_width(const struct figure *g, unsigned long i,
		      unsigned long n)
{
	char text[96];
	int w;

	if (n == 1)
		return CELL;
	folded_text(g, i, n, text, sizeof(text));
	w = text_width(text, 10) + 8;
	if (g->d->pinned[i])
		w += 8;		/* the pin's dot, right of the text */
	return w;
}

/* The cell's tooltip: its record line, and its marks. */
static void cell_title(const struct figure *g, unsigned long i,
		       unsigned long n)
{
	const struct scenario *s = g->d->s;
	const struct snap_page *pg = &g->raw->pages[i];
	const struct snap_page *c = &g->canon[i], *cz = &g->canon[i + n - 1];
	char size[32];

	fputs("<title>", g->f);
	put_text(g->f, s->proc_names[pg->proc]);
	fputc(' ', g->f);
	put_text(g->f, s->regions[pg->region].name);
	fprintf(g->f, " 0x%07lx", pg->off);
	if (!pg->present) {
		fputs(" absent", g->f);
	} else {
		fprintf(g->f, " present size %s",
			record_size_text(size, sizeof(size), pg->folio_size));
		if (c->frame != cz->frame)
			fprintf(g->f, " index %lu..%lu frame %llu..%llu",
				c->index, cz->index,
				(unsigned long long)c->frame,
				(unsigned long long)cz->frame);
		else
			fprintf(g->f, " index %lu frame %llu", c->index,
				(unsigned long long)c->frame);
		fprintf(g->f, " data 0x%02x", pg->data);
	}
	if (n > 1)
		fprintf(g->f, " x%lu", n);
	if (pg->zero)
		fputs(" (the shared zero page)", g->f);
	if (g->d->pinned[i])
		fputs(" (pinned)", g->f);
	if (g->cow[i])
		fprintf(g->f, " (copied on write at statement %d)", g->cow[i]);
	fputs("</title>", g->f);
}

static void draw_cell(const struct figure *g, unsigned long i,
		      unsigned long n, int x, int y, int w)
{
	const struct scenario *s = g->d->s;
	const struct snap_page *pg = &g->raw->pages[i];
	bool pinned = g->d->pinned[i];
	FILE *f = g->f;
	char text[96];

	fprintf(f, "<rect class=\"page\" x=\"%d\" y=\"%d\" width=\"%d\""
		" height=\"%d\" fill=\"%s\"", x, y, w, CELL, fill_of(g, i));
	if (!pg->present)
		fputs(" stroke=\"" STROKE_ABSENT "\"", f);
	fputs(" data-proc=\"", f);
	put_text(f, s->proc_names[pg->proc]);
	fputs("\" data-region=\"", f);
	put_text(f, s->regions[pg->region].name);
	fprintf(f, "\" data-off=\"0x%07lx\"", pg->off);
	if (pg->present)
		fprintf(f, " data-frame=\"%llu\" data-folio=\"%llu\"",
			(unsigned long long)g->canon[i].frame,
			(unsigned long long)g->d->folio[i]);
	else
		fputs(" data-frame=\"-\" data-folio=\"-\"", f);
	fprintf(f, " data-count=\"%lu\"", n);
	if (pg->zero)
		fputs(" data-zero=\"1\"", f);
	if (pinned)
		fputs(" data-pinned=\"1\"", f);
	if (g->cow[i])
		fprintf(f, " data-cow=\"1\" data-cow-stmt=\"%d\"", g->cow[i]);
	fputc('>', f);
	cell_title(g, i, n);
	fputs("</rect>\n", f);

	if (n > 1) {
		folded_text(g, i, n, text, sizeof(text));
		fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"10\">%s"
			"</text>\n", x + 4, y + 12, text);
	} else if (g->cow[i]) {
		/* Left of the pin's dot, smaller, when there is one. */
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"%d\""
			" font-weight=\"bold\" text-anchor=\"middle\">C</text>\n",
			x + (pinned ? 5.5 : 8), y + 12, pinned ? 10 : 11);
	} else if (pg->zero) {
		fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"10\""
			" fill=\"#555555\" text-anchor=\"middle\">0</text>\n",
			x + 8, y + 12);
	}
	if (pinned)
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.4\""
			" fill=\"#000000\"/>\n", x + w - 3.5, y + 3.5);
}

/*
 * The outline of one folio's cells on one line, [@x0, @x1), and its
 * size (or "zero") above it where the text fits.
 */
static void draw_group(const struct figure *g, unsigned long first, int x0,
		       int x1, int y)
{
	const struct snap_page *pg = &g->raw->pages[first];
	char text[32];

	if (!pg->present)
		return;
	fprintf(g->f, "<rect class=\"folio\" x=\"%.1f\" y=\"%.1f\""
		" width=\"%d\" height=\"%d\" rx=\"2\" fill=\"none\""
		" stroke=\"" OUTLINE "\" stroke-width=\"1\"/>\n",
		x0 - 1.5, y - 1.5, x1 - x0 + 3, CELL + 3);
	if (pg->zero)
		snprintf(text, sizeof(text), "zero");
	else
		record_size_text(text, sizeof(text), pg->folio_size);
	if (text_width(text, 9) <= x1 - x0 + 4)
		fprintf(g->f, "<text x=\"%.1f\" y=\"%d\" font-size=\"9\""
			" fill=\"#333333\" text-anchor=\"middle\">%s</text>\n",
			(x0 + x1) / 2.0, y - 4, text);
}

static void row_label(const struct figure *g, const struct snap_page *pg,
		      int y, bool first_line)
{
	const struct scenario *s = g->d->s;

	if (first_line) {
		fprintf(g->f, "<text x=\"%d\" y=\"%d\" font-size=\"12\">",
			MARGIN, y + 12);
		put_text(g->f, s->proc_names[pg->proc]);
		fputc(' ', g->f);
		put_text(g->f, s->regions[pg->region].name);
		fputs("</text>\n", g->f);
	} else {
		fprintf(g->f, "<text x=\"%d\" y=\"%d\" font-size=\"10\""
			" fill=\"#777777\">0x%07lx</text>\n", MARGIN, y + 12,
			pg->off);
	}
}

/* Pages [@first, @end) of the figure: one process's region. */
static void draw_row(struct figure *g, unsigned long first, unsigned long end)
{
	bool fold = end - first > SVG_FOLD_PAGES;
	int x = g->label_w, y = g->y + SIZE_BAND, gx = x, w, gap;
	unsigned long i, n, prev = 0, gfirst = first;

	row_label(g, &g->raw->pages[first], y, true);
	for (i = first; i < end; i += n) {
		bool joined = i > first && same_group(g, prev, i);

		n = cell_pages(g, i, end, fold);
		w = cell_width(g, i, n);
		gap = i == first ? 0 : !fold ? GAP_GRID :
		      joined ? GAP_IN : GAP_OUT;
		if (i > first && x + gap + w > g->label_w + SVG_WRAP_WIDTH) {
			/* The folio's outline ends here and goes on below. */
			draw_group(g, gfirst, gx, x, y);
			if (x > g->right)
				g->right = x;
			g->y += LINE_PITCH;
			y = g->y + SIZE_BAND;
			x = gx = g->label_w;
			gfirst = i;
			row_label(g, &g->raw->pages[i], y, false);
		} else if (i > first && !joined) {
			draw_group(g, gfirst, gx, x, y);
			x += gap;
			gx = x;
			gfirst = i;
		} else {
			x += gap;
		}
		draw_cell(g, i, n, x, y, w);
		x += w;
		prev = i + n - 1;
	}
	draw_group(g, gfirst, gx, x, y);
	if (x > g->right)
		g->right = x;
	g->y += LINE_PITCH;
}

static bool same_row(const struct snap_page *a, const struct snap_page *b)
{
	return a->proc == b->proc && a->region == b->region;
}

/* "FILE, statement N (TEXT) - BACKEND, VARIANT, ARCH" */
static void caption(const struct svg_drawing *d, const struct stmt *st,
		    char *buf, size_t size)
{
	const struct backend *b = d->b;

	snprintf(buf, size, "%s, statement %d (%s) - %s%s%s, %s", d->s->file,
		 st->number, st->text, b->ops->name, b->variant ? ", " : "",
		 b->variant ? b->variant : "", b->arch ? b->arch : "-");
}

static void draw_figure(struct svg_drawing *d, const struct stmt *st,
			const struct snapshot *raw, const int *cow)
{
	struct figure g = {
		.d = d, .raw = raw, .canon = d->canon.pages, .cow = cow,
		.f = d->body, .y = CAPTION_H,
	};
	unsigned long i, end;
	char text[1024];
	int w;

	/* The widest row label, and the offsets that lead wrapped lines. */
	g.label_w = text_width("0x0000000", 10);
	for (i = 0; i < raw->nr; i++) {
		const struct snap_page *pg = &raw->pages[i];

		if (i && same_row(&raw->pages[i - 1], pg))
			continue;
		snprintf(text, sizeof(text), "%s %s",
			 d->s->proc_names[pg->proc],
			 d->s->regions[pg->region].name);
		w = text_width(text, 12);
		if (w > g.label_w)
			g.label_w = w;
	}
	g.label_w += MARGIN + 12;
	g.right = g.label_w;

	caption(d, st, text, sizeof(text));
	fprintf(d->body, "<g class=\"figure\" data-statement=\"%d\""
		" transform=\"translate(0,%d)\">\n<text x=\"%d\" y=\"%d\""
		" font-size=\"13\" font-weight=\"bold\">", st->number,
		d->height, MARGIN, 18);
	put_text(d->body, text);
	fputs("</text>\n", d->body);
	w = MARGIN + (int)(strlen(text) * 13 * 65 + 99) / 100;
	if (w > d->width)
		d->width = w;

	for (i = 0; i < raw->nr; i = end) {
		for (end = i + 1; end < raw->nr &&
		     same_row(&raw->pages[i], &raw->pages[end]); end++)
			;
		draw_row(&g, i, end);
	}
	if (!raw->nr) {
		fprintf(d->body, "<text x=\"%d\" y=\"%d\" font-size=\"12\""
			" fill=\"#555555\">no process has a region</text>\n",
			MARGIN, g.y + 14);
		g.y += LINE_PITCH;
	}
	fputs("</g>\n", d->body);
	if (g.right + MARGIN > d->width)
		d->width = g.right + MARGIN;
	d->height += g.y + 10;
	d->nr_figures++;
}

static int watch_observed(void *arg, const struct stmt *st,
			  const struct snapshot *raw)
{
	struct svg_drawing *d = arg;
	int ret = 0;

	if (raw->nr > d->cap_fig) {
		ret = reserve((void **)&d->pinned, raw->nr, sizeof(bool));
		if (!ret)
			ret = reserve((void **)&d->folio, raw->nr,
				      sizeof(uint64_t));
		if (!ret)
			ret = reserve((void **)&d->fig_cow, raw->nr,
				      sizeof(int));
		if (ret)
			return d->err = ret;
		d->cap_fig = raw->nr;
	}
	/* The observe changed nothing: only marks to carry, none new. */
	carry_cow(d, raw, NULL, 0, d->fig_cow);
	ret = mark_pinned(d, raw);
	if (!ret)
		ret = copy_snapshot(&d->canon, raw);
	if (!ret)
		ret = snapshot_canonicalize(&d->canon);
	if (!ret)
		ret = number_folios(d, raw);
	if (ret)
		return d->err = ret;
	draw_figure(d, st, raw, d->fig_cow);
	return 0;
}

/* ---- the document ----------------------------------------------------- */

struct svg_drawing *svg_drawing_create(const struct scenario *s,
				       const struct backend *b)
{
	struct svg_drawing *d = calloc(1, sizeof(*d));
	int h;

	if (!d)
		return NULL;
	d->s = s;
	d->b = b;
	d->pins = calloc((size_t)s->nr_handles + 1, sizeof(*d->pins));
	d->body = open_memstream(&d->body_text, &d->body_len);
	if (!d->pins || !d->body) {
		svg_drawing_free(d);
		return NULL;
	}
	for (h = 0; h < s->nr_handles; h++)
		d->pins[h].proc = -1;
	return d;
}

void svg_drawing_watch(struct svg_drawing *d, struct scn_watch *watch)
{
	watch->stmt_done = watch_stmt_done;
	watch->observed = watch_observed;
	watch->arg = d;
}

int svg_drawing_figures(const struct svg_drawing *d)
{
	return d->nr_figures;
}

/* A legend line's sample cell at @x of the line at @y. */
static void legend_cell(FILE *f, int x, int y, const char *fill,
			const char *stroke)
{
	fprintf(f, "<rect class=\"legend\" x=\"%d\" y=\"%d\" width=\"%d\""
		" height=\"%d\" fill=\"%s\"%s%s%s/>\n", x, y, CELL, CELL, fill,
		stroke ? " stroke=\"" : "", stroke ? stroke : "",
		stroke ? "\"" : "");
}

static void legend_outline(FILE *f, int x0, int x1, int y)
{
	fprintf(f, "<rect class=\"legend\" x=\"%.1f\" y=\"%.1f\" width=\"%d\""
		" height=\"%d\" rx=\"2\" fill=\"none\" stroke=\"" OUTLINE "\""
		" stroke-width=\"1\"/>\n", x0 - 1.5, y - 1.5, x1 - x0 + 3,
		CELL + 3);
}

static const char *const legend_text[] = {
	"one colour, one folio: the same in every process and figure"
	" (the colours cycle)",
	"outlined: the pages of one folio in a row, its size above when it"
	" fits",
	"C: copied on write - the page left a frame mapped more than once"
	" (or the zero page) for one of its own",
	"dot: pinned - a live register holds the frame",
	"0: the shared zero page",
	"white: absent",
	"rows over 64 pages fold each record line into one cell: xN pages,"
	" index first..last",
};
#define NR_LEGEND (int)(sizeof(legend_text) / sizeof(legend_text[0]))

/* The legend at the top; returns its height. */
static int draw_legend(FILE *f, int *width)
{
	int i, x = MARGIN, text_x = MARGIN + 96, y, w;

	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"13\""
		" font-weight=\"bold\">Legend</text>\n", MARGIN, MARGIN + 8);
	for (i = 0; i < NR_LEGEND; i++) {
		y = MARGIN + 20 + i * LEGEND_LINE;
		switch (i) {
		case 0:
			legend_cell(f, x, y, palette[0], NULL);
			legend_cell(f, x + CELL + GAP_OUT, y, palette[1], NULL);
			legend_cell(f, x + 2 * (CELL + GAP_OUT), y, palette[2],
				    NULL);
			break;
		case 1:
			legend_cell(f, x, y, palette[0], NULL);
			legend_cell(f, x + CELL + GAP_GRID, y, palette[0],
				    NULL);
			legend_cell(f, x + 2 * (CELL + GAP_GRID), y, palette[0],
				    NULL);
			legend_outline(f, x, x + 3 * CELL + 2 * GAP_GRID, y);
			break;
		case 2:
			legend_cell(f, x, y, palette[1], NULL);
			fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\""
				" font-weight=\"bold\" text-anchor=\"middle\">"
				"C</text>\n", x + 8, y + 12);
			break;
		case 3:
			legend_cell(f, x, y, palette[2], NULL);
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.4\""
				" fill=\"#000000\"/>\n", x + CELL - 3.5,
				y + 3.5);
			break;
		case 4:
			legend_cell(f, x, y, FILL_ZERO, NULL);
			fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"10\""
				" fill=\"#555555\" text-anchor=\"middle\">0"
				"</text>\n", x + 8, y + 12);
			break;
		case 5:
			legend_cell(f, x, y, FILL_ABSENT, STROKE_ABSENT);
			break;
		case 6:
			fprintf(f, "<rect class=\"legend\" x=\"%d\" y=\"%d\""
				" width=\"%d\" height=\"%d\" fill=\"%s\"/>\n",
				x, y, text_width("x512 0..511", 10) + 8, CELL,
				palette[3]);
			fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"10\">"
				"x512 0..511</text>\n", x + 4, y + 12);
			break;
		}
		fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\">%s</text>\n",
			text_x, y + 12, legend_text[i]);
		w = text_x + text_width(legend_text[i], 12) + MARGIN;
		if (w > *width)
			*width = w;
	}
	return MARGIN + 20 + NR_LEGEND * LEGEND_LINE + 12;
}

int svg_drawing_write(struct svg_drawing *d, FILE *f)
{
	FILE *legend;
	char *legend_buf = NULL;
	size_t legend_len = 0;
	int width = d->width, top, height;
	char note[512];

	if (d->err)
		return d->err;
	if (fflush(d->body) || ferror(d->body))
		return -ENOMEM;
	legend = open_memstream(&legend_buf, &legend_len);
	if (!legend)
		return -ENOMEM;
	top = draw_legend(legend, &width);
	if (!d->nr_figures) {
		snprintf(note, sizeof(note), "no observe in %s: nothing to draw",
			 d->s->file);
		fprintf(legend, "<text x=\"%d\" y=\"%d\" font-size=\"13\">",
			MARGIN, top + 16);
		put_text(legend, note);
		fputs("</text>\n", legend);
		if (MARGIN + text_width(note, 13) + MARGIN > width)
			width = MARGIN + text_width(note, 13) + MARGIN;
		top += 32;
	}
	if (fflush(legend) || ferror(legend)) {
		fclose(legend);
		free(legend_buf);
		return -ENOMEM;
	}
	height = top + d->height + MARGIN;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\""
		" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n"
		"<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\""
		" fill=\"#ffffff\"/>\n", width, height, width, height, width,
		height);
	fwrite(legend_buf, 1, legend_len, f);
	fprintf(f, "<g transform=\"translate(0,%d)\">\n", top);
	fwrite(d->body_text, 1, d->body_len, f);
	fputs("</g>\n</svg>\n", f);
	fclose(legend);
	free(legend_buf);
	if (fflush(f) || ferror(f))
		return -EIO;
	return 0;
}

void svg_drawing_free(struct svg_drawing *d)
{
	int h;

	if (!d)
		return;
	for (h = 0; d->pins && h < d->s->nr_handles; h++)
		free(d->pins[h].frames);
	free(d->pins);
	snapshot_free(&d->cur);
	snapshot_free(&d->canon);
	free(d->cur_cow);
	free(d->next_cow);
	free(d->pinned);
	free(d->fig_cow);
	free(d->folio);
	free(d->pinned_frames);
	u64map_free(&d->cur_maps);
	u64map_free(&d->next_maps);
	u64map_free(&d->colours);
	u64map_free(&d->fig_folios);
	if (d->body)
		fclose(d->body);
	free(d->body_text);
	free(d);
}
