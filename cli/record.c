// SPDX-License-Identifier: GPL-2.0-only
/*
 * record.c - ptebatch record: run a command under the kernel's
 * tracepoints and write what it did to private anonymous memory as a
 * scenario (record/), or convert a stored event stream.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "lib/outfile.h"
#include "record/convert.h"
#include "record/trace.h"
#include "scenario/readfile.h"
#include "scenario/record.h"
#include "scenario/run.h"
#include "scenario/scenario.h"
#include "scenario/vocab.h"

#define MAX_BUFFER_KB (4UL << 20)	/* 4G per CPU: more is a typo */

struct record_flags {
	const char *out;
	const char *events;		/* also write the event stream here */
	const char *from_events;	/* convert this stream; run nothing */
	unsigned long buffer_kb;
	bool no_aslr;
	enum scn_policy mthp[SCN_MAX_MTHP_SIZES];
};

static int set_out(void *f, const char *v)
{
	((struct record_flags *)f)->out = v;
	return 0;
}

static int set_events(void *f, const char *v)
{
	((struct record_flags *)f)->events = v;
	return 0;
}

static int set_no_aslr(void *f, const char *v)
{
	((struct record_flags *)f)->no_aslr = true;
	return 0;
}

static int set_from_events(void *f, const char *v)
{
	((struct record_flags *)f)->from_events = v;
	return 0;
}

static int set_buffer_kb(void *f, const char *v)
{
	unsigned long n;
	char *end;

	errno = 0;
	n = strtoul(v, &end, 10);
	/* Digits only: strtoul() would take " 5", "+5" and "-5" too. */
	if (*end || errno || !n || n > MAX_BUFFER_KB || v[0] < '0' ||
	    v[0] > '9')
		return usage_error("--buffer-kb: bad size '%s' (KiB per CPU,"
				   " 1 to %lu)", v, MAX_BUFFER_KB);
	((struct record_flags *)f)->buffer_kb = n;
	return 0;
}

/* --mthp's POLICY: a word of scn_policies[], or a usage error naming them. */
static int mthp_policy_flag(const char *word, enum scn_policy *policy)
{
	const struct scn_word *k = scn_word_lookup(scn_policies, word);
	char known[64] = "";
	size_t n = 0;

	if (k) {
		*policy = k->value;
		return 0;
	}
	for (k = scn_policies; k->word; k++)
		n += (size_t)snprintf(known + n, sizeof(known) - n, "%s%s",
				      k == scn_policies ? "" : " ", k->word);
	return usage_error("--mthp: unknown policy '%s' (known: %s)", word,
			   known);
}

/* SIZE=POLICY: the sizes and the policy words are the language's. */
static int set_mthp(void *f, const char *v)
{
	struct record_flags *rf = f;
	const char *eq = strchr(v, '=');
	char size[32], list[SCN_NR_MTHP_SIZES * 8] = "", one[16];
	unsigned long bytes;
	size_t n = 0;
	int i;

	if (!eq || (size_t)(eq - v) >= sizeof(size))
		return usage_error("--mthp: expected SIZE=POLICY, e.g. 64K=always,"
				   " not '%s'", v);
	memcpy(size, v, (size_t)(eq - v));
	size[eq - v] = '\0';
	if (scenario_parse_number(size, &bytes))
		return usage_error("--mthp: bad size '%s'", size);
	for (i = 0; i < SCN_NR_MTHP_SIZES; i++)
		if (scenario_mthp_size(i) == bytes)
			break;
	if (i == SCN_NR_MTHP_SIZES) {
		for (i = 0; i < SCN_NR_MTHP_SIZES && n < sizeof(list); i++)
			n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s",
					      i ? " " : "",
					      record_size_text(one, sizeof(one),
							       scenario_mthp_size(i)));
		return usage_error("--mthp: size '%s' is not one of %s", size,
				   list);
	}
	return mthp_policy_flag(eq + 1, &rf->mthp[i]);
}

static int no_operand(void *f, const char *word)
{
	return usage_error("unexpected '%s' (the command goes after '--')",
			   word);
}

/* The synopsis lines: a command to record, or an event stream. */
enum { RECORD_CMD = CLI_FORM(0), RECORD_EVENTS = CLI_FORM(1) };

static const struct cli_option record_options[] = {
	{ .name = "-o", .arg = "FILE.scn[.gz]", .set = set_out,
	  .required = RECORD_CMD,
	  .help = "the scenario: needed when CMD runs (CMD's own output stays"
		  " on standard output); with --from-events, standard output"
		  " by default.  FILE.gz is written compressed (gzip), as run,"
		  " diff and bench replay read it.  At most"
		  " {scenario_max_bytes} of scenario text (about 25 million"
		  " faults), what they read: a longer trace is an error, and"
		  " nothing is written" },
	{ .name = "--mthp", .arg = "SIZE=POLICY", .set = set_mthp,
	  .forms = RECORD_CMD, .repeat = true,
	  .help = "run CMD with this large-folio setting (SIZE 16K..2M, POLICY"
		  " always, madvise, inherit or never); sizes not named are"
		  " never.  Default: every size never, so that every first"
		  " touch and copy-on-write is a fault in the trace" },
	{ .name = "--buffer-kb", .arg = "N", .set = set_buffer_kb,
	  .forms = RECORD_CMD,
	  .help = "tracefs ring buffer per CPU (default 65536); a trace that"
		  " lost events is an error that says what to use" },
	{ .name = "--no-aslr", .set = set_no_aslr, .forms = RECORD_CMD,
	  .help = "run CMD without address-space randomization, so that two"
		  " recordings (say, 4K and --mthp 64K=always) place memory"
		  " alike" },
	{ .name = "--events", .arg = "FILE", .set = set_events,
	  .forms = RECORD_CMD,
	  .help = "also write the raw event stream (for --from-events)" },
	{ .name = "--from-events", .arg = "FILE", .set = set_from_events,
	  .forms = RECORD_EVENTS, .required = RECORD_EVENTS,
	  .help = "convert a stored event stream instead of running anything" },
	{ .name = NULL },
};

static const struct cli_form record_forms[] = {
	{ .after = "-- CMD [ARGS...]" },
	{ .after = NULL },
};

static const struct cli_help record_help = {
	.name = "record",
	.options = record_options,
	CLI_FORMS(record_forms),
	.about = "run CMD (as root) under the kernel's tracepoints and write a"
		 " scenario that replays what CMD and every process it forks"
		 " did to private anonymous memory: faults as touch"
		 " statements, mmap, munmap, mprotect, madvise, mremap, brk,"
		 " fork, vfork+execve (spawn), execve, exit",
	.epilogue = "Every output path is checked before CMD runs; a file is"
		    " replaced only when the\n"
		    "recording succeeds (a device or a FIFO is written in"
		    " place).\n"
		    "exit status: 0 ok, 1 the trace lost events or could not be"
		    " taken, 2 bad usage,\n"
		    "             4 not root (skipped), 130 interrupted (the"
		    " scenario holds what ran)\n",
};

static void record_usage(FILE *f)
{
	cli_usage(f, &record_help);
}

/* The command line as one string, for the scenario's header. */
static char *join_words(char **argv)
{
	size_t len = 1;
	char *s;
	int i;

	for (i = 0; argv[i]; i++)
		len += strlen(argv[i]) + 1;
	s = malloc(len);
	if (!s)
		return NULL;
	s[0] = '\0';
	for (i = 0; argv[i]; i++) {
		if (i)
			strcat(s, " ");
		/* One line: a newline in an argument would end the comment. */
		strncat(s, argv[i], len - strlen(s) - 1);
	}
	for (i = 0; s[i]; i++)
		if (s[i] == '\n' || s[i] == '\r')
			s[i] = ' ';
	return s;
}

/* The outputs, opened before anything runs (lib/outfile.h). */
struct record_outputs {
	struct outfile scn;		/* -o */
	struct outfile events;		/* --events */
};

/* --events and -o: 0, or a usage error naming the flag and the path. */
static int open_outputs(const struct record_flags *rf,
			struct record_outputs *out)
{
	char why[1024];

	if (rf->events && outfile_open(&out->events, "--events", rf->events,
				       0, why, sizeof(why)))
		return usage_error("%s", why);
	if (rf->out && outfile_open(&out->scn, "-o", rf->out, 0, why,
				    sizeof(why))) {
		outfile_discard(&out->events);
		return usage_error("%s", why);
	}
	return 0;
}

static void discard_outputs(struct record_outputs *out)
{
	outfile_discard(&out->scn);
	outfile_discard(&out->events);
}

static bool ends_in(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n > m && !strcmp(s + n - m, suffix);
}

/*
 * The scenario, held whole before a byte of it is written: what the
 * readers would refuse (longer than they read, or not parsing) is an
 * error with nothing written.  Returns 0 or -errno, said on stderr.
 */
static int convert(const struct record_flags *rf, const struct rec_stream *s,
		   const char *cmdline, const char *machine, char **textp,
		   size_t *lenp, struct rec_summary *sum)
{
	struct rec_convert_opts o = { .command = cmdline, .machine = machine,
				      .page_size = 4096 };
	struct scenario *check;
	char *text = NULL, *why = NULL;
	size_t len = 0, whylen = 0;
	FILE *mem, *err;
	int ret;

	memcpy(o.mthp, rf->mthp, sizeof(o.mthp));
	mem = open_memstream(&text, &len);
	if (!mem)
		return -ENOMEM;
	ret = rec_convert(s, &o, mem, sum, stderr);
	if (fclose(mem) && !ret)
		ret = -ENOMEM;
	if (ret) {
		free(text);
		return ret;
	}
	if (len > scenario_max_bytes()) {
		char words[32];

		fprintf(stderr, "ptebatch: record: the scenario is %zu bytes"
			" (%lu faults), more than the %s of scenario text that"
			" run, diff and bench replay read: nothing written;"
			" record a shorter run of the command, or under --mthp"
			" SIZE=always (fewer faults, each on a larger folio)\n",
			len, sum->faults, scenario_max_words(words,
							     sizeof(words)));
		free(text);
		return -EFBIG;
	}
	/* What is written is what they read: parsed as they parse it. */
	err = open_memstream(&why, &whylen);
	check = err ? scenario_parse_text(rf->out ? rf->out : "(stdout)",
					  text, len, SCN_DEFAULT_PAGE_SIZE, err)
		    : NULL;
	if (err)
		fclose(err);
	if (!check) {
		fprintf(stderr, "ptebatch: record: the scenario does not parse"
			" (nothing written): %s", why && *why ? why :
			"out of memory\n");
		free(why);
		free(text);
		return err ? -EINVAL : -ENOMEM;
	}
	scenario_free(check);
	free(why);
	*textp = text;
	*lenp = len;
	return 0;
}

/*
 * The scenario to -o (compressed when it ends in .gz) or stdout; -o is
 * committed, or discarded on any error.  0 or -errno (said on stderr).
 */
static int write_scenario(const struct record_flags *rf,
			  struct record_outputs *out,
			  const struct rec_stream *s, const char *cmdline,
			  const char *machine)
{
	struct rec_summary sum = { 0 };
	char *text = NULL, why[1024];
	size_t len = 0;
	int ret = convert(rf, s, cmdline, machine, &text, &len, &sum);

	if (ret) {
		outfile_discard(&out->scn);
		return ret;
	}
	if (!rf->out) {
		if (fwrite(text, 1, len, stdout) != len || fflush(stdout)) {
			fprintf(stderr, "ptebatch: record: standard output:"
				" write error: %s\n", strerror(errno));
			ret = -EIO;
		}
	} else {
		if (ends_in(rf->out, ".gz"))
			ret = scenario_gzip(out->scn.f, text, len);
		else if (fwrite(text, 1, len, out->scn.f) != len)
			ret = -EIO;
		if (ret == -ENOMEM) {
			outfile_discard(&out->scn);
			fprintf(stderr, "ptebatch: record: out of memory\n");
		} else {
			/* A write error shows in the commit, with its errno. */
			ret = outfile_commit(&out->scn, why, sizeof(why));
			if (ret)
				fprintf(stderr, "ptebatch: record: %s\n", why);
		}
	}
	free(text);
	if (!ret)
		rec_summary_print(stderr, &sum, "ptebatch: record: ");
	return ret;
}

static ssize_t count_bytes(void *cookie, const char *buf, size_t len)
{
	(void)buf;
	*(unsigned long long *)cookie += len;
	return (ssize_t)len;
}

/*
 * The stream into --events' temporary file; it replaces the file only
 * with the scenario (commit_events()), so a recording that fails leaves
 * both as they were.  A stream longer than --from-events reads
 * (REC_EVENTS_MAX_BYTES) is refused, measured before a byte goes where it
 * cannot be taken back (a device, a FIFO).
 */
static int write_events(struct outfile *of, const struct rec_stream *s)
{
	cookie_io_functions_t io = { .write = count_bytes };
	unsigned long long bytes = 0;
	FILE *count = fopencookie(&bytes, "w", io);

	if (!count || rec_write_events(count, s) || fclose(count)) {
		fprintf(stderr, "ptebatch: record: out of memory\n");
		outfile_discard(of);
		return 1;
	}
	if (bytes > REC_EVENTS_MAX_BYTES) {
		fprintf(stderr, "ptebatch: record: --events: %s: the stream is"
			" %llu bytes, more than the %luM that --from-events"
			" reads: nothing written (record without --events, or a"
			" shorter run)\n", of->path, bytes,
			REC_EVENTS_MAX_BYTES >> 20);
		outfile_discard(of);
		return 1;
	}
	if (rec_write_events(of->f, s)) {
		fprintf(stderr, "ptebatch: record: --events: %s: write"
			" error\n", of->path ? of->path : "");
		outfile_discard(of);
		return 1;
	}
	return 0;
}

static int commit_events(struct outfile *of)
{
	char why[1024];

	if (!of->path)
		return 0;
	if (outfile_commit(of, why, sizeof(why))) {
		fprintf(stderr, "ptebatch: record: %s\n", why);
		return 1;
	}
	return 0;
}

static int from_events(const struct record_flags *rf)
{
	struct record_outputs out = { 0 };
	struct rec_stream s = { 0 };
	FILE *in;
	int ret;

	if (rf->events)
		return usage_error("--events writes the stream of a recording:"
				   " not with --from-events");
	ret = open_outputs(rf, &out);
	if (ret)
		return ret;
	in = fopen(rf->from_events, "r");
	if (!in) {
		fprintf(stderr, "ptebatch: record: %s: %s\n", rf->from_events,
			strerror(errno));
		discard_outputs(&out);
		return EXIT_USAGE;
	}
	ret = rec_read_events(rf->from_events, in, &s, stderr);
	fclose(in);
	if (ret) {
		rec_stream_free(&s);
		discard_outputs(&out);
		return ret == -EINVAL ? EXIT_USAGE : 1;
	}
	/* A stream the converter refuses is bad input, as a bad line is. */
	ret = write_scenario(rf, &out, &s, NULL, NULL);
	rec_stream_free(&s);
	return ret == -EINVAL ? EXIT_USAGE : ret ? 1 : 0;
}

static int record_main(int argc, char **argv)
{
	struct record_flags rf = { 0 };
	struct record_outputs out = { 0 };
	struct rec_trace_opts to = { 0 };
	struct rec_trace_result res;
	struct rec_stream s = { 0 };
	struct utsname u;
	char machine[256], *cmdline;
	int dash, ret;

	command = "record";
	for (dash = 0; dash < argc && strcmp(argv[dash], "--"); dash++)
		;
	ret = cli_parse(record_options, &rf, no_operand, dash, argv);
	if (ret)
		return ret;
	if (rf.from_events) {
		if (dash < argc)
			return usage_error("--from-events runs no command");
		return from_events(&rf);
	}
	if (dash + 1 >= argc)
		return usage_error("no command given (ptebatch record [options]"
				   " -- CMD [ARGS...])");
	/* The command's own stdout is the terminal's: the scenario goes
	 * to a file, never mixed into it. */
	if (!rf.out)
		return usage_error("-o FILE.scn is needed when a command runs"
				   " (its own output stays on standard"
				   " output)");
	if (geteuid()) {
		fprintf(stderr, "ptebatch: record: skipped: tracing needs root\n");
		return SCN_RUN_SKIPPED;
	}
	/* Every output path before anything runs: a trace is never taken
	 * to be lost at the end. */
	ret = open_outputs(&rf, &out);
	if (ret)
		return ret;
	to.argv = argv + dash + 1;
	to.buffer_kb = rf.buffer_kb;
	to.no_aslr = rf.no_aslr;
	to.err = stderr;
	memcpy(to.mthp, rf.mthp, sizeof(to.mthp));
	if (rec_trace(&to, &s, &res)) {
		rec_stream_free(&s);
		discard_outputs(&out);
		return 1;
	}
	if (res.lost) {
		fprintf(stderr, "ptebatch: record: the trace lost %lu events"
			" (ring buffer overrun at --buffer-kb %lu): nothing"
			" written; run again with --buffer-kb %lu\n", res.lost,
			res.buffer_kb, res.buffer_kb * 4);
		rec_stream_free(&s);
		discard_outputs(&out);
		return 1;
	}
	if (rf.events && write_events(&out.events, &s)) {
		rec_stream_free(&s);
		discard_outputs(&out);
		return 1;
	}
	if (uname(&u))
		snprintf(machine, sizeof(machine), "an unknown machine");
	else
		snprintf(machine, sizeof(machine), "Linux %s %s", u.release,
			 u.machine);
	cmdline = join_words(to.argv);
	ret = write_scenario(&rf, &out, &s, cmdline, machine);
	free(cmdline);
	rec_stream_free(&s);
	if (!ret)
		ret = commit_events(&out.events);
	discard_outputs(&out);
	if (ret)
		return 1;
	if (res.interrupted) {
		fprintf(stderr, "ptebatch: record: interrupted: the scenario"
			" holds what ran until then\n");
		return 130;
	}
	if (WIFEXITED(res.status) && WEXITSTATUS(res.status))
		fprintf(stderr, "ptebatch: record: note: the command exited"
			" with status %d\n", WEXITSTATUS(res.status));
	else if (WIFSIGNALED(res.status))
		fprintf(stderr, "ptebatch: record: note: the command was"
			" killed by signal %d\n", WTERMSIG(res.status));
	return 0;
}

const struct cli_command record_command = {
	.name = "record",
	.main = record_main,
	.usage = record_usage,
	.takes_arch = false,
};
