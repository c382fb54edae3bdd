// SPDX-License-Identifier: GPL-2.0-only
/*
 * parse.c - the .scn parser: text in, a fully validated struct scenario out.
 *
 * Everything a backend may rely on is decided here, before anything runs:
 * names resolve to ids, ranges lie inside regions the acting process has,
 * handles are released by their holder in the way they were taken.  The
 * parser therefore keeps a static picture of the run (which processes are
 * alive, which regions each one has, who holds which handle) and checks
 * every statement against it.  What only the run can tell (whether a page
 * is mapped, whether memory runs out) is left to the backend.
 *
 * The language is described in docs/SCENARIO.md.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "scenario/live.h"
#include "scenario/readfile.h"
#include "scenario/scenario.h"
#include "scenario/vocab.h"

/* The longest statement (write with both options) has 9 tokens. */
#define SCN_MAX_TOKENS 16
/*
 * touch is the exception: a recorded trace packs thousands of accesses
 * into one statement.  Its tokens are bounded too, so a runaway line is an
 * error on its line rather than an allocation the size of the file.
 */
#define SCN_MAX_TOUCH_TOKENS (1 << 20)

/* Tokens are quoted in messages up to this many characters, then "...". */
#define MSG_TOKEN_MAX 40
#define TOK "'%.*s%s'"
#define TOK_ARG(t) MSG_TOKEN_MAX, (t), (strlen(t) > MSG_TOKEN_MAX ? "..." : "")
/* The same, unquoted. */
#define BARE "%.*s%s"

#define REGION_WORDS ((SCN_MAX_REGIONS + 63) / 64)

/*
 * Region names by hash: a trace names thousands of regions and a touch
 * looks one up per @R.  Open addressing, at most half full.
 */
#define REGION_HASH_SIZE (2 * SCN_MAX_REGIONS)
_Static_assert((REGION_HASH_SIZE & (REGION_HASH_SIZE - 1)) == 0,
	       "REGION_HASH_SIZE is a power of two");

struct parser {
	struct scenario *s;
	FILE *err;
	int line;
	int stmts_cap;
	/* No process statement (or observe) seen yet: mthp is allowed. */
	bool in_settings;
	unsigned int mthp_named;	/* bit i: mthp slot i was given */
	/* Who is alive, who holds which handle (scenario/live.h). */
	struct scn_live live;
	uint64_t alive[(SCN_MAX_PROCS + 63) / 64];
	struct scn_hold handles[SCN_MAX_HANDLES];
	/*
	 * SCN_MAX_PROCS rows, each written when its process is created (not
	 * zeroed as a whole: explore parses a scenario per sequence).
	 */
	uint64_t (*has_region)[REGION_WORDS];
	/*
	 * Region id + 1, 0 if free: open addressing, at most half full,
	 * region_hash_size slots (a power of two up to REGION_HASH_SIZE),
	 * grown as regions are declared.
	 */
	int *region_hash;
	unsigned int region_hash_size;
	const struct verb *verb;	/* statement being parsed */
	char **tok;			/* the line's tokens, tok_cap of them */
	int tok_cap;
};

struct verb {
	const char *word;
	enum stmt_kind kind;
	const char *usage;
	int min_args, max_args;	/* tokens after the statement word */
	int (*parse)(struct parser *p, struct stmt *st, char **arg, int nr);
};

static void perr_prefix(struct parser *p)
{
	fprintf(p->err, "%s:%d: ", p->s->file, p->line);
}

/* Report "FILE:LINE: message" and return -1, so callers can return it. */
static int __attribute__((format(printf, 2, 3)))
perr(struct parser *p, const char *fmt, ...)
{
	va_list ap;

	perr_prefix(p);
	va_start(ap, fmt);
	vfprintf(p->err, fmt, ap);
	va_end(ap);
	fputc('\n', p->err);
	return -1;
}

/* ---- lexical level ---------------------------------------------------- */

static bool is_letter(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int digit_value(char c, unsigned int base)
{
	int d;

	if (is_digit(c))
		d = c - '0';
	else if (c >= 'a' && c <= 'f')
		d = c - 'a' + 10;
	else if (c >= 'A' && c <= 'F')
		d = c - 'A' + 10;
	else
		return -1;
	return d < (int)base ? d : -1;
}

static unsigned int suffix_shift(char c)
{
	switch (c) {
	case 'K': return 10;
	case 'M': return 20;
	case 'G': return 30;
	}
	return 0;
}

/*
 * The number parser behind scenario_parse_number().  On -EINVAL, *bad
 * points at the first character that is not part of a number, so the
 * caller can tell a bad suffix ("4X") from garbage.
 */
static int parse_number(const char *tok, unsigned long *out, const char **bad)
{
	const char *c = tok;
	unsigned int base = 10, shift;
	unsigned long v = 0;
	int digits = 0, d;

	if (c[0] == '0' && c[1] == 'x') {
		base = 16;
		c += 2;
	}
	for (; (d = digit_value(*c, base)) >= 0; c++, digits++) {
		if (v > (ULONG_MAX - d) / base)
			return -ERANGE;
		v = v * base + d;
	}
	*bad = c;
	if (!digits)
		return -EINVAL;
	if (*c) {
		shift = suffix_shift(*c);
		if (!shift || c[1])
			return -EINVAL;
		if (v > (ULONG_MAX >> shift))
			return -ERANGE;
		v <<= shift;
	}
	*out = v;
	return 0;
}

int scenario_parse_number(const char *tok, unsigned long *out)
{
	const char *bad;

	return parse_number(tok, out, &bad);
}

/* A number token named @what ("LEN", "stride", ...) in a statement. */
static int take_number(struct parser *p, const char *what, const char *tok,
		       unsigned long *out)
{
	const char *bad;
	int ret = parse_number(tok, out, &bad);

	if (ret == -ERANGE)
		return perr(p, "%s " TOK " is too large", what, TOK_ARG(tok));
	if (ret == 0)
		return 0;
	if (bad > tok && digit_value(bad[-1], 16) >= 0 && is_letter(*bad) && !bad[1])
		return perr(p, "bad size suffix in %s " TOK
			    ": use K, M or G", what, TOK_ARG(tok));
	return perr(p, "bad number " TOK " for %s: expected decimal or 0x hex",
		    TOK_ARG(tok), what);
}

/* A byte count that must be a multiple of the page size. */
static int take_page_multiple(struct parser *p, const char *what,
			      const char *tok, unsigned long *out)
{
	if (take_number(p, what, tok, out))
		return -1;
	if (*out % p->s->page_size)
		return perr(p, "%s " TOK " is not a multiple of the page size (%lu)",
			    what, TOK_ARG(tok), p->s->page_size);
	return 0;
}

static int take_length(struct parser *p, const char *tok, unsigned long *out)
{
	if (take_page_multiple(p, "LEN", tok, out))
		return -1;
	if (!*out)
		return perr(p, "LEN must be greater than 0");
	return 0;
}

static int check_name(struct parser *p, const char *what, const char *tok)
{
	const char *c;

	if (!is_letter(tok[0]))
		goto bad;
	for (c = tok + 1; *c; c++)
		if (!is_letter(*c) && !is_digit(*c) && *c != '_')
			goto bad;
	if (c - tok > SCN_NAME_MAX)
		return perr(p, "%s name " TOK " is longer than %d characters",
			    what, TOK_ARG(tok), SCN_NAME_MAX);
	return 0;
bad:
	return perr(p, "bad %s name " TOK
		    ": a name is a letter followed by letters, digits or _",
		    what, TOK_ARG(tok));
}

/* ---- names and ownership ---------------------------------------------- */

static int find_name(const char (*names)[SCN_NAME_MAX + 1], int nr,
		     const char *name)
{
	int i;

	for (i = 0; i < nr; i++)
		if (!strcmp(names[i], name))
			return i;
	return -1;
}

static int find_proc(const struct scenario *s, const char *name)
{
	return find_name(s->proc_names, s->nr_procs, name);
}

static int find_handle(const struct scenario *s, const char *name)
{
	return find_name(s->handle_names, s->nr_handles, name);
}

static unsigned int region_hash(const char *name, unsigned int size)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	return h & (size - 1);
}

/* The id of region @name, or -1; *@slot is where it is or would go. */
static int find_region_slot(const struct parser *p, const char *name,
			    unsigned int *slot)
{
	unsigned int i;
	int id;

	if (!p->region_hash) {		/* no region yet */
		*slot = 0;
		return -1;
	}
	i = region_hash(name, p->region_hash_size);
	while ((id = p->region_hash[i] - 1) >= 0) {
		if (!strcmp(p->s->regions[id].name, name))
			break;
		i = (i + 1) & (p->region_hash_size - 1);
	}
	*slot = i;
	return id;
}

/* Room for one more region in the hash, which stays at most half full. */
static int region_hash_reserve(struct parser *p)
{
	unsigned int size = p->region_hash_size, i, slot;
	int *old = p->region_hash, id;

	if (2 * ((unsigned int)p->s->nr_regions + 1) <= size)
		return 0;
	size = size ? 2 * size : 16;
	if (size > REGION_HASH_SIZE)
		return 0;	/* SCN_MAX_REGIONS already refuses the next */
	p->region_hash = calloc(size, sizeof(*p->region_hash));
	if (!p->region_hash) {
		p->region_hash = old;
		return -ENOMEM;
	}
	p->region_hash_size = size;
	for (i = 0; old && i < size / 2; i++) {
		if ((id = old[i] - 1) < 0)
			continue;
		find_region_slot(p, p->s->regions[id].name, &slot);
		p->region_hash[slot] = id + 1;
	}
	free(old);
	return 0;
}

static int find_region(const struct parser *p, const char *name)
{
	unsigned int slot;

	return find_region_slot(p, name, &slot);
}

static bool proc_has_region(const struct parser *p, int proc, int region)
{
	return p->has_region[proc][region / 64] & (1ULL << (region % 64));
}

static void proc_add_region(struct parser *p, int proc, int region)
{
	p->has_region[proc][region / 64] |= 1ULL << (region % 64);
}

/* The acting process: it must exist and still be alive. */
static int take_proc(struct parser *p, const char *tok)
{
	int id;

	if (check_name(p, "process", tok))
		return -1;
	id = find_proc(p->s, tok);
	if (id < 0)
		return perr(p, "unknown process " TOK
			    " (P0 exists at the start, others come from fork)",
			    TOK_ARG(tok));
	if (scn_live_act(&p->live, id))
		return perr(p, "process " TOK " has exited", TOK_ARG(tok));
	return id;
}

static bool is_reserved_word(const char *name)
{
	return !strcmp(name, "mthp") || !strcmp(name, "observe");
}

/* A child of @parent named @tok: a name never used before. */
static int new_proc(struct parser *p, const char *tok, int parent)
{
	struct scenario *s = p->s;
	int id;

	if (check_name(p, "process", tok))
		return -1;
	if (is_reserved_word(tok))
		return perr(p, "process name " TOK " is a statement word",
			    TOK_ARG(tok));
	if (find_proc(s, tok) >= 0)
		return perr(p, "process name " TOK
			    " is already used (process names are never reused)",
			    TOK_ARG(tok));
	if (s->nr_procs == SCN_MAX_PROCS)
		return perr(p, "too many processes (at most %d)", SCN_MAX_PROCS);
	id = s->nr_procs++;
	strcpy(s->proc_names[id], tok);
	scn_live_start(&p->live, id);
	if (parent >= 0)
		memcpy(p->has_region[id], p->has_region[parent],
		       sizeof(p->has_region[id]));
	else
		memset(p->has_region[id], 0, sizeof(p->has_region[id]));
	return id;
}

/*
 * A region @tok of @len bytes, @at past a 2M boundary, created by (and so
 * belonging to) @proc; @room is mmap's `room`, 0 for the default.
 */
static int new_region(struct parser *p, const char *tok, unsigned long at,
		      unsigned long len, unsigned long room, int proc)
{
	struct scenario *s = p->s;
	unsigned int slot;
	int id;

	if (check_name(p, "region", tok))
		return -1;
	if (region_hash_reserve(p))
		return perr(p, "out of memory");
	if (find_region_slot(p, tok, &slot) >= 0)
		return perr(p, "region " TOK
			    " already exists (region names are global)",
			    TOK_ARG(tok));
	if (s->nr_regions == SCN_MAX_REGIONS)
		return perr(p, "too many regions (at most %d)", SCN_MAX_REGIONS);
	if (s->nr_regions == s->cap_regions) {
		int cap = s->cap_regions ? 2 * s->cap_regions : 8;
		struct scn_region *n = realloc(s->regions, cap * sizeof(*n));

		if (!n)
			return perr(p, "out of memory");
		memset(n + s->cap_regions, 0,
		       (cap - s->cap_regions) * sizeof(*n));
		s->regions = n;
		s->cap_regions = cap;
	}
	id = s->nr_regions++;
	p->region_hash[slot] = id + 1;
	strcpy(s->regions[id].name, tok);
	s->regions[id].len = len;
	s->regions[id].max_len = len;
	s->regions[id].room_len = scenario_region_room_end(at, len, room) - at;
	proc_add_region(p, proc, id);
	return id;
}

/* An existing region that the acting process has. */
static int take_region(struct parser *p, const struct stmt *st,
		       const char *tok)
{
	int id;

	if (check_name(p, "region", tok))
		return -1;
	id = find_region(p, tok);
	if (id < 0)
		return perr(p, "unknown region " TOK, TOK_ARG(tok));
	if (!proc_has_region(p, st->proc, id))
		return perr(p, "process %s does not have region " TOK
			    " (a process has the regions it created and those"
			    " its parent had when it forked)",
			    p->s->proc_names[st->proc], TOK_ARG(tok));
	return id;
}

/* R OFF LEN: a non-empty page-aligned range inside a region P has. */
static int take_range(struct parser *p, struct stmt *st, char **arg)
{
	unsigned long rlen;

	st->region = take_region(p, st, arg[0]);
	if (st->region < 0)
		return -1;
	if (take_page_multiple(p, "OFF", arg[1], &st->off) ||
	    take_length(p, arg[2], &st->len))
		return -1;
	rlen = p->s->regions[st->region].max_len;
	if (st->off > rlen || st->len > rlen - st->off)
		return perr(p, "range " BARE "+" BARE " lies outside region %s"
			    " (length %#lx)", TOK_ARG(arg[1]), TOK_ARG(arg[2]),
			    p->s->regions[st->region].name, rlen);
	return 0;
}

/* register/vmsplice H: H is free (never seen, or released). */
static int take_new_handle(struct parser *p, struct stmt *st, const char *tok,
			   enum scn_take take)
{
	struct scenario *s = p->s;
	int id;

	if (check_name(p, "handle", tok))
		return -1;
	id = find_handle(s, tok);
	if (id >= 0 && scn_live_check_take(&p->live, id))
		return perr(p, "handle " TOK " is still held by %s",
			    TOK_ARG(tok), s->proc_names[p->handles[id].holder]);
	if (id < 0) {
		if (s->nr_handles == SCN_MAX_HANDLES)
			return perr(p, "too many handle names (at most %d)",
				    SCN_MAX_HANDLES);
		id = s->nr_handles++;
		strcpy(s->handle_names[id], tok);
	}
	scn_live_take(&p->live, id, st->proc, take);
	st->handle = id;
	return 0;
}

/* The statement that takes a handle @take's way, and the one releasing it. */
static const char *handle_taker(enum scn_take take)
{
	return take == SCN_TAKE_REGISTER ? "register" : "vmsplice";
}

static const char *handle_releaser(enum scn_take take)
{
	return take == SCN_TAKE_REGISTER ? "unregister" : "drain";
}

/* unregister/drain H: P holds H, taken the matching way; H is released. */
static int release_handle(struct parser *p, struct stmt *st, const char *tok,
			  enum scn_take take)
{
	struct scenario *s = p->s;
	const struct scn_hold *h;
	int id;

	if (check_name(p, "handle", tok))
		return -1;
	id = find_handle(s, tok);
	if (id < 0)
		return perr(p, "unknown handle " TOK, TOK_ARG(tok));
	h = &p->handles[id];
	switch (scn_live_release(&p->live, id, st->proc, take)) {
	case SCN_LIVE_NOT_HELD:
		return perr(p, "handle " TOK " is not held (already released)",
			    TOK_ARG(tok));
	case SCN_LIVE_TAKEN_OTHERWISE:
		return perr(p, "handle " TOK " was taken by %s; only %s releases"
			    " it", TOK_ARG(tok), handle_taker(h->take),
			    handle_releaser(h->take));
	case SCN_LIVE_OTHER_HOLDER:
		return perr(p, "handle " TOK " is held by %s, not %s",
			    TOK_ARG(tok), s->proc_names[h->holder],
			    s->proc_names[st->proc]);
	default:
		break;
	}
	st->handle = id;
	return 0;
}

/* ---- keywords: scenario/vocab.c --------------------------------------- */

/* Look @tok up in @table; the error lists the words it knows. */
static int take_keyword(struct parser *p, const char *what,
			const struct scn_word *table, const char *tok, int *out)
{
	const struct scn_word *k = scn_word_lookup(table, tok);

	/* Set either way: the callers' compilers cannot see into the lookup. */
	*out = k ? k->value : 0;
	if (k)
		return 0;
	perr_prefix(p);
	fprintf(p->err, "bad %s " TOK ": expected", what, TOK_ARG(tok));
	for (k = table; k->word; k++)
		fprintf(p->err, "%s %s", k == table ? "" : (k[1].word ? "," : " or"),
			k->word);
	fputc('\n', p->err);
	return -1;
}

static int take_prot(struct parser *p, const char *tok, enum scn_prot *out)
{
	int v;

	if (take_keyword(p, "PROT", scn_prots, tok, &v))
		return -1;
	*out = v;
	return 0;
}

/* ---- statements ------------------------------------------------------- */

static uint8_t default_value(int number)
{
	/* The data says which statement wrote it. */
	return 1 + number % 255;
}

/* "at OFF": an offset past a 2M-aligned address, below 2M. */
static int take_at(struct parser *p, const char *what, const char *tok,
		   unsigned long *out)
{
	if (take_page_multiple(p, what, tok, out))
		return -1;
	if (*out >= SCN_REGION_ALIGN)
		return perr(p, "%s " TOK " must be below 2M", what, TOK_ARG(tok));
	return 0;
}

/*
 * mmap's options after PROT: "at OFF", "room LEN", "hugepage" or
 * "nohugepage", and "populate", in any order, each at most once.
 */
static int parse_mmap_options(struct parser *p, struct stmt *st, char **arg,
			      int nr)
{
	bool have_at = false, have_huge = false;
	int i;

	for (i = 0; i < nr; i++) {
		if (!strcmp(arg[i], "room")) {
			if (st->room)
				return perr(p, "room given twice");
			if (i + 1 == nr)
				return perr(p, "room needs a length after it");
			if (take_page_multiple(p, "room", arg[++i], &st->room))
				return -1;
			if (st->room < st->len)
				return perr(p, "room " TOK " is shorter than the"
					    " mapping (%#lx): it is the length"
					    " the region may grow to",
					    TOK_ARG(arg[i]), st->len);
			if (st->room > SCN_MAX_REGION_LEN)
				return perr(p, "room " TOK " is larger than a"
					    " region may be (%luG)",
					    TOK_ARG(arg[i]),
					    SCN_MAX_REGION_LEN >> 30);
		} else if (!strcmp(arg[i], "at")) {
			if (have_at)
				return perr(p, "at given twice");
			if (i + 1 == nr)
				return perr(p, "at needs an offset after it");
			have_at = true;
			if (take_at(p, "at", arg[++i], &st->at))
				return -1;
		} else if (!strcmp(arg[i], "populate")) {
			if (st->populate)
				return perr(p, "populate given twice");
			st->populate = true;
		} else if (!strcmp(arg[i], "hugepage") ||
			   !strcmp(arg[i], "nohugepage")) {
			if (have_huge)
				return perr(p, "hugepage or nohugepage given twice");
			have_huge = true;
			st->huge = !strcmp(arg[i], "hugepage") ?
				   SCN_HUGE_HUGEPAGE : SCN_HUGE_NOHUGEPAGE;
		} else {
			return perr(p, "bad mmap flag " TOK ": expected at OFF,"
				    " room LEN, hugepage, nohugepage or populate",
				    TOK_ARG(arg[i]));
		}
	}
	return 0;
}

static int parse_mmap(struct parser *p, struct stmt *st, char **arg, int nr)
{
	unsigned long len;

	if (take_length(p, arg[1], &len) || take_prot(p, arg[2], &st->prot))
		return -1;
	if (len > SCN_MAX_REGION_LEN)
		return perr(p, "LEN " TOK " is larger than a region may be (%luG)",
			    TOK_ARG(arg[1]), SCN_MAX_REGION_LEN >> 30);
	st->len = len;
	if (parse_mmap_options(p, st, arg + 3, nr - 3))
		return -1;
	st->region = new_region(p, arg[0], st->at, len, st->room, st->proc);
	return st->region < 0 ? -1 : 0;
}

static int parse_range_only(struct parser *p, struct stmt *st, char **arg,
			    int nr)
{
	return take_range(p, st, arg);
}

static int parse_mprotect(struct parser *p, struct stmt *st, char **arg,
			  int nr)
{
	if (take_range(p, st, arg))
		return -1;
	return take_prot(p, arg[3], &st->prot);
}

static int parse_madvise(struct parser *p, struct stmt *st, char **arg, int nr)
{
	int v;

	if (take_range(p, st, arg) ||
	    take_keyword(p, "ADVICE", scn_advices(), arg[3], &v))
		return -1;
	st->advice = v;
	return 0;
}

/*
 * The options of write and read: "stride S" and (write only) "value V",
 * in any order, each at most once.
 */
static int parse_access_options(struct parser *p, struct stmt *st,
				char **arg, int nr, bool allow_value)
{
	bool have_stride = false, have_value = false;
	unsigned long v;
	int i;

	for (i = 0; i < nr; i += 2) {
		bool is_stride = !strcmp(arg[i], "stride");
		bool is_value = allow_value && !strcmp(arg[i], "value");

		if (!is_stride && !is_value)
			return perr(p, "unknown %s option " TOK ": usage is '%s'",
				    p->verb->word, TOK_ARG(arg[i]),
				    p->verb->usage);
		if ((is_stride && have_stride) || (is_value && have_value))
			return perr(p, "%s given twice", arg[i]);
		if (i + 1 == nr)
			return perr(p, "%s needs a number after it", arg[i]);
		if (is_stride) {
			have_stride = true;
			if (take_page_multiple(p, "stride", arg[i + 1],
					       &st->stride))
				return -1;
			if (!st->stride)
				return perr(p, "stride must be greater than 0");
		} else {
			have_value = true;
			if (take_number(p, "value", arg[i + 1], &v))
				return -1;
			if (v > 255)
				return perr(p, "value " TOK
					    " does not fit a byte (0..255)",
					    TOK_ARG(arg[i + 1]));
			st->value = v;
		}
	}
	return 0;
}

static int parse_write(struct parser *p, struct stmt *st, char **arg, int nr)
{
	st->stride = p->s->page_size;
	st->value = default_value(st->number);
	if (take_range(p, st, arg))
		return -1;
	return parse_access_options(p, st, arg + 3, nr - 3, true);
}

static int parse_read(struct parser *p, struct stmt *st, char **arg, int nr)
{
	st->stride = p->s->page_size;
	if (take_range(p, st, arg))
		return -1;
	return parse_access_options(p, st, arg + 3, nr - 3, false);
}

static int parse_fork(struct parser *p, struct stmt *st, char **arg, int nr)
{
	st->child = new_proc(p, arg[0], st->proc);
	return st->child < 0 ? -1 : 0;
}

/*
 * spawn Q: vfork + execve, or posix_spawn.  Q starts with an address space
 * of its own, empty: it has no region of P's.
 */
static int parse_spawn(struct parser *p, struct stmt *st, char **arg, int nr)
{
	st->child = new_proc(p, arg[0], -1);
	return st->child < 0 ? -1 : 0;
}

/*
 * exit or exec (@how: "exits", "execs") while holding a handle: a handle
 * outliving its holder, or the memory it was taken on, would have nobody
 * to release it.
 */
static int check_no_handles(struct parser *p, const struct stmt *st,
			    const char *how)
{
	int h = scn_live_holding(&p->live, st->proc);

	if (h >= 0)
		return perr(p, "%s %s while holding handle '%s'; %s it first",
			    p->s->proc_names[st->proc], how,
			    p->s->handle_names[h],
			    handle_releaser(p->handles[h].take));
	return 0;
}

static int parse_exit(struct parser *p, struct stmt *st, char **arg, int nr)
{
	if (check_no_handles(p, st, "exits"))
		return -1;
	scn_live_exit(&p->live, st->proc);
	return 0;
}

/* exec: every region P has goes; P lives on with none. */
static int parse_exec(struct parser *p, struct stmt *st, char **arg, int nr)
{
	if (check_no_handles(p, st, "execs"))
		return -1;
	memset(p->has_region[st->proc], 0, sizeof(p->has_region[st->proc]));
	return 0;
}

/* ---- touch ------------------------------------------------------------ */

/* The N of OFF+N: a decimal count of at least 1. */
static int take_touch_count(struct parser *p, const char *tok,
			    unsigned long *out)
{
	const char *c = tok;
	unsigned long v = 0;

	if (!is_digit(*c))
		goto bad;
	for (; is_digit(*c); c++) {
		/* Past a region's pages anyway: the range check says so. */
		if (v < (1UL << 40))
			v = v * 10 + (*c - '0');
	}
	if (*c)
		goto bad;
	if (!v)
		return perr(p, "touch count +" BARE " must be at least 1",
			    TOK_ARG(tok));
	*out = v;
	return 0;
bad:
	return perr(p, "bad touch count +" BARE ": expected a decimal number",
		    TOK_ARG(tok));
}

/* Append @count accesses from page @pgoff, merged with a run it extends. */
static void touch_add(struct stmt *st, int region, unsigned long pgoff,
		      unsigned long count, bool write)
{
	struct scn_touch *last = st->nr_items ? &st->items[st->nr_items - 1] :
						NULL;

	st->nr_accesses += count;
	if (last && last->region == region && last->write == write &&
	    (unsigned long)last->pgoff + last->count == pgoff) {
		last->count += count;
		return;
	}
	last = &st->items[st->nr_items++];
	last->region = region;
	last->pgoff = pgoff;
	last->count = count;
	last->write = write;
}

/*
 * touch ITEM...: @R picks the region, r or w the access, OFF or OFF+N
 * are accesses of one page or N consecutive ones.  Each token is at most
 * one item, so @nr items is enough room.
 */
static int parse_touch(struct parser *p, struct stmt *st, char **arg, int nr)
{
	unsigned long region_pages = 0, off, count, ps = p->s->page_size;
	int region = -1, kind = -1, i;
	struct scn_touch *items;
	char *plus;

	st->value = default_value(st->number);
	st->items = malloc((nr ? nr : 1) * sizeof(*st->items));
	if (!st->items)
		return perr(p, "out of memory");
	for (i = 0; i < nr; i++) {
		char *tok = arg[i];

		if (tok[0] == '@') {
			region = take_region(p, st, tok + 1);
			if (region < 0)
				return -1;
			region_pages = p->s->regions[region].max_len / ps;
			continue;
		}
		if (!strcmp(tok, "r") || !strcmp(tok, "w")) {
			kind = tok[0] == 'w';
			continue;
		}
		if (!is_digit(tok[0]))
			return perr(p, "bad touch item " TOK ": expected @REGION,"
				    " r, w, OFF or OFF+N", TOK_ARG(tok));
		if (region < 0)
			return perr(p, "touch offset " TOK " before any @REGION",
				    TOK_ARG(tok));
		if (kind < 0)
			return perr(p, "touch offset " TOK " before r or w",
				    TOK_ARG(tok));
		count = 1;
		plus = strchr(tok, '+');
		if (plus) {
			*plus = '\0';
			if (take_touch_count(p, plus + 1, &count))
				return -1;
		}
		if (take_page_multiple(p, "touch offset", tok, &off))
			return -1;
		off /= ps;
		if (off >= region_pages || count > region_pages - off)
			return perr(p, "touch " BARE "%s%s lies outside region %s"
				    " (length %#lx)", TOK_ARG(tok),
				    plus ? "+" : "", plus ? plus + 1 : "",
				    p->s->regions[region].name,
				    region_pages * ps);
		touch_add(st, region, off, count, kind);
	}
	if (!st->nr_items)
		return perr(p, "touch with no access: usage is '%s'",
			    p->verb->usage);
	/* Merged runs leave the array longer than it needs to be. */
	items = realloc(st->items, st->nr_items * sizeof(*st->items));
	if (items)
		st->items = items;
	return 0;
}

static int parse_register(struct parser *p, struct stmt *st, char **arg,
			  int nr)
{
	if (take_range(p, st, arg + 1))
		return -1;
	return take_new_handle(p, st, arg[0], SCN_TAKE_REGISTER);
}

static int parse_vmsplice(struct parser *p, struct stmt *st, char **arg,
			  int nr)
{
	if (take_range(p, st, arg + 1))
		return -1;
	return take_new_handle(p, st, arg[0], SCN_TAKE_VMSPLICE);
}

static int parse_unregister(struct parser *p, struct stmt *st, char **arg,
			    int nr)
{
	return release_handle(p, st, arg[0], SCN_TAKE_REGISTER);
}

static int parse_drain(struct parser *p, struct stmt *st, char **arg, int nr)
{
	return release_handle(p, st, arg[0], SCN_TAKE_VMSPLICE);
}

static int parse_dio_read(struct parser *p, struct stmt *st, char **arg,
			  int nr)
{
	st->value = default_value(st->number);
	return take_range(p, st, arg);
}

static int parse_mremap(struct parser *p, struct stmt *st, char **arg, int nr)
{
	if (take_range(p, st, arg) || take_at(p, "AT", arg[4], &st->at))
		return -1;
	if (nr > 5) {
		if (strcmp(arg[5], "dontunmap"))
			return perr(p, "unknown mremap option " TOK
				    ": usage is '%s'", TOK_ARG(arg[5]),
				    p->verb->usage);
		st->dontunmap = true;
	}
	st->new_region = new_region(p, arg[3], st->at, st->len, 0, st->proc);
	return st->new_region < 0 ? -1 : 0;
}

/*
 * resize R LEN: mremap(addr, old, LEN, 0).  Whether it succeeds is the
 * run's to say (the region may have a hole, or grow past its room); the
 * parser only lets later statements address what a successful resize
 * could have added.
 */
static int parse_resize(struct parser *p, struct stmt *st, char **arg, int nr)
{
	struct scn_region *r;

	st->region = take_region(p, st, arg[0]);
	if (st->region < 0)
		return -1;
	if (take_page_multiple(p, "LEN", arg[1], &st->len))
		return -1;
	if (!st->len)
		return perr(p, "resize to 0: LEN must be greater than 0"
			    " (munmap removes the whole region)");
	if (st->len > SCN_MAX_REGION_LEN)
		return perr(p, "LEN " TOK " is larger than a region may be (%luG)",
			    TOK_ARG(arg[1]), SCN_MAX_REGION_LEN >> 30);
	r = &p->s->regions[st->region];
	/* A grow past the room fails (ENOMEM, or EFAULT): it adds nothing. */
	if (st->len > r->max_len && st->len <= r->room_len)
		r->max_len = st->len;
	return 0;
}

static const struct verb verbs[] = {
	{ "mmap", ST_MMAP,
	  "P mmap R LEN PROT [at OFF] [room LEN] [hugepage|nohugepage]"
	  " [populate]", 3, 9, parse_mmap },
	{ "munmap", ST_MUNMAP, "P munmap R OFF LEN", 3, 3, parse_range_only },
	{ "mprotect", ST_MPROTECT, "P mprotect R OFF LEN PROT", 4, 4,
	  parse_mprotect },
	{ "madvise", ST_MADVISE, "P madvise R OFF LEN ADVICE", 4, 4,
	  parse_madvise },
	{ "write", ST_WRITE, "P write R OFF LEN [stride S] [value V]", 3, 7,
	  parse_write },
	{ "read", ST_READ, "P read R OFF LEN [stride S]", 3, 5, parse_read },
	{ "fork", ST_FORK, "P fork Q", 1, 1, parse_fork },
	{ "exit", ST_EXIT, "P exit", 0, 0, parse_exit },
	{ "register", ST_REGISTER, "P register H R OFF LEN", 4, 4,
	  parse_register },
	{ "unregister", ST_UNREGISTER, "P unregister H", 1, 1,
	  parse_unregister },
	{ "dio-write", ST_DIO_WRITE, "P dio-write R OFF LEN", 3, 3,
	  parse_range_only },
	{ "dio-read", ST_DIO_READ, "P dio-read R OFF LEN", 3, 3,
	  parse_dio_read },
	{ "vmsplice", ST_VMSPLICE, "P vmsplice H R OFF LEN", 4, 4,
	  parse_vmsplice },
	{ "drain", ST_DRAIN, "P drain H", 1, 1, parse_drain },
	{ "mremap", ST_MREMAP, "P mremap R OFF LEN S AT [dontunmap]", 5, 6,
	  parse_mremap },
	{ "split", ST_SPLIT, "P split R OFF LEN", 3, 3, parse_range_only },
	{ "mmap-fixed", ST_MMAP_FIXED, "P mmap-fixed R OFF LEN PROT", 4, 4,
	  parse_mprotect },
	{ "resize", ST_RESIZE, "P resize R LEN", 2, 2, parse_resize },
	{ "touch", ST_TOUCH, "P touch @R r|w OFF[+N]...", 0,
	  SCN_MAX_TOUCH_TOKENS, parse_touch },
	{ "spawn", ST_SPAWN, "P spawn Q", 1, 1, parse_spawn },
	{ "exec", ST_EXEC, "P exec", 0, 0, parse_exec },
};

#define NR_VERBS (sizeof(verbs) / sizeof(verbs[0]))

static const struct verb *find_verb(const char *word)
{
	size_t i;

	for (i = 0; i < NR_VERBS; i++)
		if (!strcmp(verbs[i].word, word))
			return &verbs[i];
	return NULL;
}

static int unknown_statement(struct parser *p, const char *word)
{
	size_t i;

	perr_prefix(p);
	fprintf(p->err, "unknown statement " TOK " (known: mthp observe",
		TOK_ARG(word));
	for (i = 0; i < NR_VERBS; i++)
		fprintf(p->err, " %s", verbs[i].word);
	fprintf(p->err, ")\n");
	return -1;
}

/*
 * "16K", "2M", "512M": @size (a power of two of at least 1K) in its
 * largest unit, after @sep; returns the length written.
 */
static int size_name(char *buf, unsigned long size, const char *sep)
{
	if (size >= (1UL << 30))
		return sprintf(buf, "%s%luG", sep, size >> 30);
	if (size >= (1UL << 20))
		return sprintf(buf, "%s%luM", sep, size >> 20);
	return sprintf(buf, "%s%luK", sep, size >> 10);
}

static int parse_mthp(struct parser *p, struct stmt *st, char **tok, int nr)
{
	const int nr_sizes = scenario_nr_mthp_sizes(p->s->page_size);
	unsigned long size;
	int i, v;

	st->kind = ST_MTHP;
	if (!p->in_settings)
		return perr(p, "mthp must come before the first process statement");
	if (nr != 3)
		return perr(p, "%s token%s: usage is 'mthp SIZE POLICY'",
			    nr < 3 ? "missing" : "extra",
			    nr < 3 ? "" : "s after POLICY");
	if (take_number(p, "mthp SIZE", tok[1], &size))
		return -1;
	for (i = 0; i < nr_sizes; i++)
		if (size == scenario_mthp_size_of(p->s->page_size, i))
			break;
	if (i == nr_sizes) {
		char list[SCN_MAX_MTHP_SIZES * 8] = "", *l = list;

		for (i = 0; i < nr_sizes; i++)
			l += size_name(l, scenario_mthp_size_of(p->s->page_size, i),
				       i ? " " : "");
		return perr(p, "mthp SIZE " TOK " is not one of %s", TOK_ARG(tok[1]),
			    list);
	}
	if (take_keyword(p, "mthp POLICY", scn_policies, tok[2], &v))
		return -1;
	if (v == SCN_POL_INHERIT && i == nr_sizes - 1) {
		char pmd[8];

		size_name(pmd, size, "");
		return perr(p, "mthp %s inherit: inherit follows the %s line, so"
			    " %s itself must be always, madvise or never", pmd,
			    pmd, pmd);
	}
	if (p->mthp_named & (1U << i))
		return perr(p, "mthp size " BARE " given twice", TOK_ARG(tok[1]));
	p->mthp_named |= 1U << i;
	p->s->mthp[i] = v;
	st->mthp_size = size;
	st->policy = v;
	return 0;
}

/*
 * A snapshot holds every base page of every region of every live process,
 * about 60 bytes each, present or not: bound it by one largest region's
 * worth (about 1G of this machine's memory), so that no scenario can make
 * an observe take all of it.
 */
#define SCN_MAX_OBSERVE_PAGES (SCN_MAX_REGION_LEN / SCN_DEFAULT_PAGE_SIZE)

static int parse_observe(struct parser *p, struct stmt *st, char **tok, int nr)
{
	unsigned long pages = 0;
	int proc, r;

	st->kind = ST_OBSERVE;
	p->in_settings = false;
	if (nr > 1)
		return perr(p, "observe takes no arguments (got " TOK ")",
			    TOK_ARG(tok[1]));
	for (proc = 0; proc < p->s->nr_procs; proc++)
		for (r = 0; scn_live_alive(&p->live, proc) &&
			    r < p->s->nr_regions; r++)
			if (proc_has_region(p, proc, r))
				pages += p->s->regions[r].max_len /
					 p->s->page_size;
	if (pages > SCN_MAX_OBSERVE_PAGES)
		return perr(p, "observe would snapshot %lu pages (every page of"
			    " every region of every live process); at most %lu",
			    pages, SCN_MAX_OBSERVE_PAGES);
	return 0;
}

static int parse_process_statement(struct parser *p, struct stmt *st,
				   char **tok, int nr)
{
	const struct verb *v = nr >= 2 ? find_verb(tok[1]) : NULL;
	int nargs = nr - 2;

	p->in_settings = false;
	if (!v) {
		v = find_verb(tok[0]);
		if (v)
			return perr(p, "%s needs the acting process first:"
				    " usage is '%s'", v->word, v->usage);
		if (find_proc(p->s, tok[0]) < 0)
			return unknown_statement(p, tok[0]);
		if (nr == 1)
			return perr(p, "missing statement word after process %s",
				    tok[0]);
		return unknown_statement(p, tok[1]);
	}
	p->verb = v;
	st->kind = v->kind;
	st->proc = take_proc(p, tok[0]);
	if (st->proc < 0)
		return -1;
	if (nargs < v->min_args)
		return perr(p, "missing argument: usage is '%s'", v->usage);
	if (nargs > v->max_args)
		return perr(p, "extra token " TOK ": usage is '%s'",
			    TOK_ARG(tok[2 + v->max_args]), v->usage);
	return v->parse(p, st, tok + 2, nargs);
}

/* ---- lines ------------------------------------------------------------ */

/* Whether the line so far (@nr tokens) is a touch statement. */
static bool is_touch(struct parser *p, int nr)
{
	return nr >= 2 && !strcmp(p->tok[1], "touch");
}

/*
 * Split @line in place into tokens (p->tok), dropping the comment.
 * Returns the number of tokens, or -1 after reporting too many.
 */
static int tokenize(struct parser *p, char *line)
{
	char *c = line;
	int nr = 0;

	for (;;) {
		while (*c == ' ' || *c == '\t')
			c++;
		if (!*c || *c == '#')
			break;
		if (nr == SCN_MAX_TOKENS && !is_touch(p, nr))
			return perr(p, "too many tokens (at most %d)",
				    SCN_MAX_TOKENS);
		if (nr == SCN_MAX_TOUCH_TOKENS + 2)
			return perr(p, "touch too long: at most %d items in one"
				    " statement (split it)", SCN_MAX_TOUCH_TOKENS);
		if (nr == p->tok_cap) {
			int cap = p->tok_cap * 2;
			char **tok = realloc(p->tok, cap * sizeof(*tok));

			if (!tok)
				return perr(p, "out of memory");
			p->tok = tok;
			p->tok_cap = cap;
		}
		p->tok[nr++] = c;
		while (*c && *c != ' ' && *c != '\t' && *c != '#')
			c++;
		if (*c == '#') {
			*c = '\0';
			break;
		}
		if (*c)
			*c++ = '\0';
	}
	return nr;
}

/* The statement as written: tokens joined by single spaces. */
static char *join_tokens(char **tok, int nr)
{
	size_t len = 0;
	char *text, *c;
	int i;

	for (i = 0; i < nr; i++)
		len += strlen(tok[i]) + 1;
	text = malloc(len);
	if (!text)
		return NULL;
	for (c = text, i = 0; i < nr; i++) {
		if (i)
			*c++ = ' ';
		c = stpcpy(c, tok[i]);
	}
	*c = '\0';
	return text;
}

static struct stmt *new_stmt(struct parser *p)
{
	struct scenario *s = p->s;
	struct stmt *st;

	if (s->nr_stmts == p->stmts_cap) {
		int cap = p->stmts_cap ? p->stmts_cap * 2 : 64;

		if (p->stmts_cap > INT_MAX / 2) {
			perr(p, "too many statements");
			return NULL;
		}
		st = realloc(s->stmts, cap * sizeof(*st));
		if (!st) {
			perr(p, "out of memory");
			return NULL;
		}
		s->stmts = st;
		p->stmts_cap = cap;
	}
	st = &s->stmts[s->nr_stmts];
	memset(st, 0, sizeof(*st));
	st->number = s->nr_stmts + 1;
	st->line = p->line;
	st->proc = -1;
	st->region = -1;
	st->child = -1;
	st->handle = -1;
	st->new_region = -1;
	s->nr_stmts++;
	return st;
}

/*
 * Statements are printable ASCII; comments may hold anything but NUL.
 * Any other byte most likely means a binary file, and echoing it in a
 * message would garble the terminal.
 */
static int check_printable(struct parser *p, const char *line)
{
	const unsigned char *c;

	for (c = (const unsigned char *)line; *c && *c != '#'; c++)
		if ((*c < 0x20 && *c != '\t') || *c > 0x7e)
			return perr(p, "byte 0x%02x in column %d is not printable"
				    " ASCII (is this a scenario file?)", *c,
				    (int)((const char *)c - line) + 1);
	return 0;
}

static int parse_line(struct parser *p, char *line)
{
	struct stmt *st;
	char **tok;
	int nr;

	if (check_printable(p, line))
		return -1;
	nr = tokenize(p, line);
	tok = p->tok;
	if (nr <= 0)
		return nr;
	st = new_stmt(p);
	if (!st)
		return -1;
	st->text = join_tokens(tok, nr);
	if (!st->text)
		return perr(p, "out of memory");
	p->verb = NULL;
	if (!strcmp(tok[0], "mthp"))
		return parse_mthp(p, st, tok, nr);
	if (!strcmp(tok[0], "observe"))
		return parse_observe(p, st, tok, nr);
	return parse_process_statement(p, st, tok, nr);
}

static struct scenario *scenario_alloc(const char *name,
				       unsigned long page_size)
{
	struct scenario *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->file = strdup(name);
	if (!s->file) {
		free(s);
		return NULL;
	}
	s->page_size = page_size;
	strcpy(s->proc_names[0], "P0");
	s->nr_procs = 1;
	return s;
}

struct scenario *scenario_parse_string(const char *name, const char *text,
				       unsigned long page_size, FILE *err)
{
	struct parser *p;
	struct scenario *s;
	const char *c = text;
	char *line = NULL;
	size_t cap = 0;
	int ret = 0;

	s = scenario_alloc(name, page_size);
	p = calloc(1, sizeof(*p));
	if (!s || !p) {
		fprintf(err, "%s: out of memory\n", name);
		goto fail;
	}
	p->s = s;
	p->err = err;
	p->in_settings = true;
	p->tok_cap = SCN_MAX_TOKENS;
	p->tok = malloc(p->tok_cap * sizeof(*p->tok));
	p->has_region = malloc(SCN_MAX_PROCS * sizeof(*p->has_region));
	if (!p->tok || !p->has_region) {
		fprintf(err, "%s: out of memory\n", name);
		goto fail;
	}
	p->live = (struct scn_live){
		.alive = p->alive, .max_procs = SCN_MAX_PROCS,
		.hold = p->handles, .max_handles = SCN_MAX_HANDLES,
	};
	scn_live_start(&p->live, 0);
	memset(p->has_region[0], 0, sizeof(p->has_region[0]));
	if (!page_size || (page_size & (page_size - 1))) {
		fprintf(err, "%s: page size %lu is not a power of two\n",
			name, page_size);
		goto fail;
	}

	while (*c && !ret) {
		size_t len = strcspn(c, "\n");
		const char *next = c + len + (c[len] == '\n');

		if (p->line == INT_MAX) {
			ret = perr(p, "too many lines");
			break;
		}
		p->line++;
		if (len + 1 > cap) {
			char *bigger = realloc(line, len + 1);

			if (!bigger) {
				ret = perr(p, "out of memory");
				break;
			}
			line = bigger;
			cap = len + 1;
		}
		memcpy(line, c, len);
		/* A CRLF line ending is a line ending, not part of a token. */
		if (len && line[len - 1] == '\r')
			len--;
		line[len] = '\0';
		ret = parse_line(p, line);
		c = next;
	}
	free(line);
	if (ret)
		goto fail;
	free(p->tok);
	free(p->has_region);
	free(p->region_hash);
	free(p);
	return s;
fail:
	if (p) {
		free(p->tok);
		free(p->has_region);
		free(p->region_hash);
	}
	free(p);
	scenario_free(s);
	return NULL;
}

/* The largest scenario file: scenario_max_bytes() (scenario/readfile.h). */

/* Read all of @f into a malloc'd buffer of *@lenp bytes. */
static char *read_all(FILE *f, const char *path, size_t *lenp, FILE *err)
{
	size_t len = 0, cap = 4096, n;
	char *buf = malloc(cap), *bigger;

	if (!buf)
		goto nomem;
	while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (len > scenario_max_bytes()) {
			char words[32];

			fprintf(err, "%s: larger than %s: not a scenario file\n",
				path, scenario_max_words(words, sizeof(words)));
			free(buf);
			return NULL;
		}
		if (cap - len - 1)
			continue;
		if (cap > SIZE_MAX / 2)
			goto nomem;
		bigger = realloc(buf, cap * 2);
		if (!bigger)
			goto nomem;
		buf = bigger;
		cap *= 2;
	}
	if (ferror(f)) {
		fprintf(err, "%s: read error: %s\n", path, strerror(errno));
		free(buf);
		return NULL;
	}
	*lenp = len;
	return buf;
nomem:
	fprintf(err, "%s: out of memory\n", path);
	free(buf);
	return NULL;
}

struct scenario *scenario_parse_buffer(const char *name, const char *buf,
				       size_t len, unsigned long page_size,
				       FILE *err)
{
	const char *nul = memchr(buf, '\0', len);
	struct scenario *s;
	char *text;
	int line = 1;

	/* A NUL byte would silently end the text, so refuse it. */
	if (nul) {
		for (const char *c = buf; c < nul; c++)
			line += *c == '\n';
		fprintf(err, "%s:%d: NUL byte in a scenario file\n", name, line);
		return NULL;
	}
	text = malloc(len + 1);
	if (!text) {
		fprintf(err, "%s: out of memory\n", name);
		return NULL;
	}
	memcpy(text, buf, len);
	text[len] = '\0';
	s = scenario_parse_string(name, text, page_size, err);
	free(text);
	return s;
}

char *scenario_read_file(const char *path, size_t *lenp, FILE *err)
{
	FILE *f = fopen(path, "r");
	struct stat sb;
	char *text;

	if (!f) {
		fprintf(err, "%s: cannot open: %s\n", path, strerror(errno));
		return NULL;
	}
	/* fopen() opens a directory for reading; only read() says no. */
	if (!fstat(fileno(f), &sb) && S_ISDIR(sb.st_mode)) {
		fprintf(err, "%s: cannot open: %s\n", path, strerror(EISDIR));
		fclose(f);
		return NULL;
	}
	text = read_all(f, path, lenp, err);
	fclose(f);
	return text ? scenario_gunzip(path, text, lenp, err) : NULL;
}

struct scenario *scenario_parse_text(const char *name, const char *text,
				     size_t len, unsigned long page_size,
				     FILE *err)
{
	struct scenario *s = scenario_parse_buffer(name, text, len, page_size,
						   err);

	/* Nothing to run is a mistake (an empty or truncated file). */
	if (s && !s->nr_stmts) {
		fprintf(err, "%s: no statements (the file is empty or only"
			" comments)\n", name);
		scenario_free(s);
		return NULL;
	}
	return s;
}

struct scenario *scenario_parse_file(const char *path, unsigned long page_size,
				     FILE *err)
{
	struct scenario *s;
	size_t len;
	char *text = scenario_read_file(path, &len, err);

	if (!text)
		return NULL;
	s = scenario_parse_text(path, text, len, page_size, err);
	free(text);
	return s;
}

void scenario_free(struct scenario *s)
{
	int i;

	if (!s)
		return;
	for (i = 0; i < s->nr_stmts; i++) {
		free(s->stmts[i].text);
		free(s->stmts[i].items);
	}
	free(s->stmts);
	free(s->regions);
	free(s->file);
	free(s);
}
