#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# cli-errors.sh - bad input to every command and flag of `ptebatch`, as TAP.
#
# One case per bad input: wrong, missing or absurd values, unknown words,
# missing and extra operands, files that are missing, directories, empty,
# binary or unreadable, output paths that cannot be written.  Each must:
#   - exit non-zero and below 128 (no signal), within 10 s (no hang);
#   - say so on stderr, the first line naming the problem (the flag, the
#     value, the file and line: KEY below, as a fixed string), and no more
#     than that line and the "Try 'ptebatch help'." hint;
#   - print nothing on stdout (it failed before anything ran);
#   - leave no sanitizer report (AddressSanitizer, UBSan's "runtime
#     error") and no "Segmentation" on stderr.
# A case the environment cannot pose (root reads a chmod-000 file) is a
# SKIP with the reason.  Besides: a scenario that writes more than --memory
# holds fails with exit status 1, the record's "error ENOMEM" and a line
# naming the statement; the help lists every exit status run uses; every
# command's --help and -h print its usage and exit 0; the help is printed
# from the option tables (`ptebatch help --list-options` lists their rows):
# every row is in its command's help, every option the help names is a
# row, --arch is taken where a row says so, and in every build in $BUILD
# the least and default --memory the help states are right; a stdout (or --json
# file) that cannot be written fails every command with exit status 1;
# bench --backend kernel without root exits 4 with the reason.
#
# Nothing here runs a benchmark or the kernel backend: bench cases fail
# while their arguments are read, a kernel-backend case fails on its flags
# before the backend starts (and its scenario would not parse either), and
# PTEBATCH_DIFF_KERNEL points diff's kernel side at a program that does
# not exist.  About 5 s.
#
# Usage: BUILD=build sh tests/cli-errors.sh   (from the top of the tree)

BUILD=${BUILD:-build}
TOOL=$BUILD/ptebatch
PTEBATCH_DIFF_KERNEL=/nonexistent/ptebatch-kernel-side
export PTEBATCH_DIFF_KERNEL

n=0
failed=0

if [ ! -x "$TOOL" ]; then
	echo "not ok 1 - $TOOL is not built"
	echo "1..1"
	exit 1
fi

tmp=$(mktemp -d) || exit 1
trap 'chmod -R u+rwx "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
out=$tmp/stdout
err=$tmp/stderr

ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}

not_ok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $1"
	echo "# $2"
	sed -n '1,5s/^/# stderr: /p' "$err"
}

skip() {
	n=$((n + 1))
	echo "ok $n - $1 # SKIP $2"
}

# A refusal takes well under a second, but reading to a bound (256M of
# /dev/zero) under ThreadSanitizer's instrumentation took 16 s here: the
# limit is for a hang, not a measure of speed.
limit=10
[ -n "${SAN:-}" ] && limit=90
if command -v timeout >/dev/null 2>&1; then
	run() { timeout "$limit" "$@" >"$out" 2>"$err" </dev/null; }
else
	run() { "$@" >"$out" 2>"$err" </dev/null; }
fi

# What every failure must not show: a status that means a signal or a
# hang, an empty stderr, a sanitizer report.  Prints the problem, if any.
bad_failure() {
	if [ "$1" -eq 124 ]; then
		echo "hung: stopped after $limit s"
	elif [ "$1" -eq 0 ]; then
		echo "exit status 0"
	elif [ "$1" -ge 128 ]; then
		echo "killed by signal $(($1 - 128))"
	elif [ "$1" -ge 125 ]; then
		echo "could not be run (status $1)"
	elif [ ! -s "$err" ]; then
		echo "nothing on stderr"
	elif grep -qE 'AddressSanitizer|LeakSanitizer|runtime error|Segmentation' "$err"; then
		echo "sanitizer report or crash on stderr"
	fi
}

# case NAME KEY COMMAND...: a one-line refusal whose first line holds KEY.
case_() {
	name=$1
	key=$2
	shift 2
	run "$@"
	status=$?
	why=$(bad_failure "$status")
	lines=$(wc -l <"$err")
	if [ -z "$why" ] && ! head -n 1 "$err" | grep -qF -- "$key"; then
		why="the first line of stderr does not name '$key'"
	fi
	if [ -z "$why" ] && { [ "$lines" -gt 2 ] || { [ "$lines" -eq 2 ] &&
	     [ "$(sed -n 2p "$err")" != "Try 'ptebatch help'." ]; }; }; then
		why="more than one line on stderr"
	fi
	if [ -z "$why" ] && [ -s "$out" ]; then
		why="something on stdout: it should fail before anything runs"
	fi
	if [ -n "$why" ]; then
		not_ok "$name" "exit status $status: $why"
	else
		ok "$name"
	fi
}

# usage_case NAME EXTENDED-REGEX COMMAND...: a refusal that may show a
# usage text; REGEX matches somewhere on stderr.
usage_case() {
	name=$1
	re=$2
	shift 2
	run "$@"
	status=$?
	why=$(bad_failure "$status")
	if [ -z "$why" ] && ! grep -qE -- "$re" "$err"; then
		why="stderr does not match '$re'"
	fi
	if [ -n "$why" ]; then
		not_ok "$name" "exit status $status: $why"
	else
		ok "$name"
	fi
}

# ---- fixtures ----------------------------------------------------------

printf 'P0 mmap A 64K rw\nP0 write A 0 64K\n' >"$tmp/ok.scn"
printf 'P0 mmap A 64K rw\nP0 msync A 0 4K\n' >"$tmp/bad.scn"
: >"$tmp/empty.scn"
printf '# only a comment\n\n   \n' >"$tmp/comments.scn"
# A PNG header: NUL bytes on line 3.
printf '\211PNG\r\n\032\n\000\000\000\rIHDR' >"$tmp/image.scn"
# Binary bytes without a NUL: a terminal escape, then high bytes.
printf '\033[31m\377\376\201\n' >"$tmp/binary.scn"
# A no-break space (UTF-8 C2 A0) pasted between two tokens.
printf 'P0 mmap A\302\24064K rw\n' >"$tmp/nbsp.scn"
mkdir "$tmp/dir.scn"
printf 'P0 mmap A 64K rw\n' >"$tmp/unreadable.scn"
chmod 000 "$tmp/unreadable.scn"
# Two processes with two 64G regions each: 64M pages in one snapshot.
printf 'P0 mmap A 64G rw\nP0 mmap B 64G rw\nP0 fork P1\nobserve\n' \
	>"$tmp/huge-observe.scn"
# Writes 64M on a 16M machine.
printf 'P0 mmap A 64M rw\nP0 mmap B 64K rw\nP0 write A 0 64M\nP0 write B 0 64K\nobserve\n' \
	>"$tmp/oom.scn"
mkdir "$tmp/ro"
chmod 555 "$tmp/ro"
mkdir "$tmp/dir.svg"
# Compressed scenarios gone wrong (gzip -n: no name or time in the header).
have_gzip=false
if command -v gzip >/dev/null 2>&1; then
	have_gzip=true
	gzip -9n <"$tmp/ok.scn" >"$tmp/ok.scn.gz"
	gzip -9n <"$tmp/bad.scn" >"$tmp/bad.scn.gz"
	# The last 8 bytes are the CRC and the length: cut them off.
	head -c $(($(wc -c <"$tmp/ok.scn.gz") - 8)) "$tmp/ok.scn.gz" \
		>"$tmp/truncated.scn.gz"
	# The CRC's first byte changed: the text inflates, the check fails.
	size=$(wc -c <"$tmp/ok.scn.gz")
	crc0=$(tail -c 8 "$tmp/ok.scn.gz" | od -An -tu1 -N1 | tr -d ' ')
	{ head -c $((size - 8)) "$tmp/ok.scn.gz"
	  if [ "$crc0" = 0 ]; then printf '\001'; else printf '\000'; fi
	  tail -c 7 "$tmp/ok.scn.gz"; } >"$tmp/crc.scn.gz"
	{ cat "$tmp/ok.scn.gz"; printf 'junk'; } >"$tmp/trailing.scn.gz"
	# The gzip magic, then bytes that are no deflate data.
	printf '\037\213\010\000\000\000\000\000\000\003\377\377\377\377' \
		>"$tmp/garbage.scn.gz"
	# 260M of comment lines in about 260K: more text than a scenario
	# may have (256M).
	awk 'BEGIN { for (i = 0; i < 4260; i++) printf "#%063d\n", 0 }' \
		>"$tmp/line256k"
	i=0
	while [ $i -lt 1000 ]; do cat "$tmp/line256k"; i=$((i + 1)); done |
		gzip -1n >"$tmp/bomb.scn.gz"
fi

long_key=$(printf '%0100d' 0)

# This machine's memory (MemTotal, what sysconf reports), for the limits
# that depend on it: the next 2M multiple above it, and above a quarter.
host_kb=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo 2>/dev/null)
host_kb=${host_kb:-0}
# The least --memory whose memmap and page tables (136 bytes a 4K frame,
# pb_host_bytes()) this machine cannot hold.
above_host_mb=$(( (host_kb * 4096 / 136 / 2048 + 1) * 2 ))
above_quarter_mb=$(( (host_kb / 4 / 2048 + 1) * 2 ))

# ---- no command, unknown command, help ---------------------------------

usage_case "no command: the usage of every command" \
	'usage: ptebatch run' "$TOOL"
case_ "unknown command" "unknown command 'frobnicate'" "$TOOL" frobnicate
case_ "empty command" "unknown command ''" "$TOOL" ""
case_ "help: an extra operand" "help: unexpected argument 'run'" \
	"$TOOL" help run

# ---- run: operands -----------------------------------------------------

case_ "run: no scenario file" "run: no scenario file given" "$TOOL" run
case_ "run: no scenario file after --" "run: no scenario file given" \
	"$TOOL" run --
case_ "run: two scenario files" "more than one scenario file" \
	"$TOOL" run "$tmp/ok.scn" "$tmp/bad.scn"
case_ "run: '-' is not stdin" "run: -:" "$TOOL" run -

# ---- run: flags --------------------------------------------------------

case_ "run: unknown option" "unknown option '--bogus'" \
	"$TOOL" run --bogus "$tmp/ok.scn"
case_ "run: unknown short option" "unknown option '-x'" \
	"$TOOL" run -x "$tmp/ok.scn"
case_ "run: --backend without a value" "--backend needs a value" \
	"$TOOL" run --backend
case_ "run: --backend unknown" "--backend: unknown backend 'qemu'" \
	"$TOOL" run --backend qemu "$tmp/ok.scn"
case_ "run: --backend= empty" "--backend: unknown backend ''" \
	"$TOOL" run --backend= "$tmp/ok.scn"
case_ "run: --backend kernel with --variant" "--variant applies to the model only" \
	"$TOOL" run --backend kernel --variant seeds "$tmp/bad.scn"
case_ "run: --backend kernel with --set" "--set applies to the model only" \
	"$TOOL" run --backend kernel --set gup_batch=1 "$tmp/bad.scn"
case_ "run: --backend kernel with --stats" "--stats applies to the model only" \
	"$TOOL" run --backend kernel --stats "$tmp/bad.scn"
case_ "run: --backend kernel with --memory" "--memory applies to the model only" \
	"$TOOL" run --backend kernel --memory 64M "$tmp/bad.scn"
case_ "run: --time on the model" "--time applies to --backend kernel or vm only" \
	"$TOOL" run --time "$tmp/bad.scn"
case_ "run: --reps without --time" "--reps needs --time" \
	"$TOOL" run --backend kernel --reps 3 "$tmp/bad.scn"
case_ "run: --count on the model" "--count counts kernel functions" \
	"$TOOL" run --count default "$tmp/bad.scn"
case_ "run: --count with a bad name" "--count: 'a b' is not FUNC" \
	"$TOOL" run --backend vm --count "a b" "$tmp/bad.scn"
case_ "run: --time-insns without --time" "--time-insns needs --time" \
	"$TOOL" run --backend kernel --time-insns "$tmp/bad.scn"
case_ "run: --svg with --backend vm" "--svg draws in this process: not with --backend vm" \
	"$TOOL" run --backend vm --svg "$tmp/x.svg" "$tmp/bad.scn"
case_ "diff: --backend that is no backend" "--backend: 'qemu' is not kernel, vm or vm:NAME" \
	"$TOOL" diff --backend qemu "$tmp/bad.scn"
case_ "vm: an unknown command" "unknown vm command 'boot'" \
	"$TOOL" vm boot
case_ "vm: list with an argument" "list takes no arguments" \
	"$TOOL" vm list extra
case_ "run: --reps 0" "--reps: expected a number from 1 to 1000, got '0'" \
	"$TOOL" run --backend kernel --time --reps 0 "$tmp/bad.scn"
case_ "run: --reps x" "--reps: expected a number from 1 to 1000, got 'x'" \
	"$TOOL" run --backend kernel --time --reps x "$tmp/bad.scn"
case_ "run: --reps 1001" "--reps: expected a number from 1 to 1000, got '1001'" \
	"$TOOL" run --backend kernel --time --reps 1001 "$tmp/bad.scn"
case_ "run: --reps without a value" "--reps needs a value" \
	"$TOOL" run --backend kernel --time --reps
case_ "run: --backend kernel, missing file" "$tmp/missing.scn" \
	"$TOOL" run --backend kernel "$tmp/missing.scn"
case_ "run: --variant without a value" "--variant needs a value" \
	"$TOOL" run --variant
case_ "run: --variant unknown" "--variant: unknown variant 'fastest'" \
	"$TOOL" run --variant fastest "$tmp/ok.scn"
case_ "run: --variant= empty" "--variant: unknown variant ''" \
	"$TOOL" run --variant= "$tmp/ok.scn"
case_ "run: --set without a value" "--set needs a value" "$TOOL" run --set
case_ "run: --set without =" "--set: expected KEY=VALUE, got 'gup_batch'" \
	"$TOOL" run --set gup_batch "$tmp/ok.scn"
case_ "run: --set without a key" "--set: expected KEY=VALUE, got '=1'" \
	"$TOOL" run --set =1 "$tmp/ok.scn"
case_ "run: --set without a value after =" "--set: expected KEY=VALUE, got 'gup_batch='" \
	"$TOOL" run --set gup_batch= "$tmp/ok.scn"
case_ "run: --set unknown switch" "unknown switch 'turbo'" \
	"$TOOL" run --set turbo=1 "$tmp/ok.scn"
case_ "run: --set switch name too long" "--set $long_key=1: unknown switch" \
	"$TOOL" run --set "$long_key=1" "$tmp/ok.scn"
case_ "run: --set with a space" "may not contain spaces" \
	"$TOOL" run --set "gup_batch =1" "$tmp/ok.scn"
case_ "run: --set boolean 2" "--set gup_batch=2: bad value '2'" \
	"$TOOL" run --set gup_batch=2 "$tmp/ok.scn"
case_ "run: --set boolean yes" "--set fork_batch=yes: bad value 'yes'" \
	"$TOOL" run --set fork_batch=yes "$tmp/ok.scn"
case_ "run: --set wp_reuse_max=0" "--set wp_reuse_max=0: bad value '0'" \
	"$TOOL" run --set wp_reuse_max=0 "$tmp/ok.scn"
case_ "run: --set wp_reuse_max=-1" "--set wp_reuse_max=-1: bad value '-1'" \
	"$TOOL" run --set wp_reuse_max=-1 "$tmp/ok.scn"
case_ "run: --set wp_reuse_max not a power of two" "bad value '3'" \
	"$TOOL" run --set wp_reuse_max=3 "$tmp/ok.scn"
case_ "run: --set wp_reuse_max above a page table" "bad value '1024'" \
	"$TOOL" run --set wp_reuse_max=1024 "$tmp/ok.scn"
case_ "run: --set wp_reuse_max overflowing" "bad value '99999999999999999999'" \
	"$TOOL" run --set wp_reuse_max=99999999999999999999 "$tmp/ok.scn"
case_ "run: --set wp_reuse_max non-numeric" "bad value 'many'" \
	"$TOOL" run --set wp_reuse_max=many "$tmp/ok.scn"
case_ "run: --stats with a value" "--stats takes no value" \
	"$TOOL" run --stats=1 "$tmp/ok.scn"
case_ "run: --no-check with a value" "--no-check takes no value" \
	"$TOOL" run --no-check=yes "$tmp/ok.scn"
case_ "run: --memory without a value" "--memory needs a value" \
	"$TOOL" run --memory
case_ "run: --memory non-numeric" "--memory: bad size 'lots'" \
	"$TOOL" run --memory lots "$tmp/ok.scn"
case_ "run: --memory negative" "--memory: bad size '-16M'" \
	"$TOOL" run --memory -16M "$tmp/ok.scn"
case_ "run: --memory unknown suffix" "--memory: bad size '1T'" \
	"$TOOL" run --memory 1T "$tmp/ok.scn"
case_ "run: --memory overflowing" "--memory: bad size '99999999999999999999'" \
	"$TOOL" run --memory 99999999999999999999 "$tmp/ok.scn"
case_ "run: --memory overflowing with a suffix" "--memory: bad size '0xfffffffffffffffK'" \
	"$TOOL" run --memory 0xfffffffffffffffK "$tmp/ok.scn"
case_ "run: --memory 0" "--memory: '0' is below the minimum 16M" \
	"$TOOL" run --memory 0 "$tmp/ok.scn"
case_ "run: --memory below the minimum" "--memory: '15M' is below the minimum 16M" \
	"$TOOL" run --memory 15M "$tmp/ok.scn"
case_ "run: --memory not a multiple of 2M" "--memory: '17M' is not a multiple of 2M" \
	"$TOOL" run --memory 17M "$tmp/ok.scn"
case_ "run: --memory not a multiple of the page size" "'16777217' is not a multiple of 2M" \
	"$TOOL" run --memory 16777217 "$tmp/ok.scn"
case_ "run: --memory above the model's maximum" "--memory: '512G' is above the model's maximum 256G" \
	"$TOOL" run --memory 512G "$tmp/ok.scn"
if [ "$host_kb" -gt 0 ] && [ "$above_host_mb" -le 262144 ]; then
	case_ "run: --memory above this machine's memory" \
		"--memory: '${above_host_mb}M' needs" \
		"$TOOL" run --memory "${above_host_mb}M" "$tmp/ok.scn"
else
	skip "run: --memory above this machine's memory" \
		"no MemTotal, or this machine holds the memmap of the model's 256G"
fi

case_ "run: --svg without a value" "--svg needs a value" "$TOOL" run --svg
case_ "run: --svg not ending in .svg" "--svg: '$tmp/x.png' must end in .svg" \
	"$TOOL" run --svg "$tmp/x.png" "$tmp/ok.scn"
case_ "run: --svg= empty" "--svg: '' must end in .svg" \
	"$TOOL" run --svg= "$tmp/ok.scn"
case_ "run: --svg in a missing directory" "--svg: $tmp/missing/x.svg" \
	"$TOOL" run --svg "$tmp/missing/x.svg" "$tmp/ok.scn"
case_ "run: --svg a directory" "--svg: $tmp/dir.svg: Is a directory" \
	"$TOOL" run --svg "$tmp/dir.svg" "$tmp/ok.scn"
case_ "run: --svg with --fuzz" "--svg does not apply to --fuzz" \
	"$TOOL" run --fuzz scenario --svg "$tmp/f.svg" "$tmp/ok.scn"
case_ "run: --svg with --time" "--svg draws one untimed run: not with --time" \
	"$TOOL" run --backend kernel --time --svg "$tmp/t.svg" "$tmp/bad.scn"
if ( : >"$tmp/ro/probe" ) 2>/dev/null; then
	rm -f "$tmp/ro/probe"
	skip "run: --svg in a read-only directory" \
		"this user writes a chmod-555 directory (root)"
else
	case_ "run: --svg in a read-only directory" "--svg: $tmp/ro/x.svg" \
		"$TOOL" run --svg "$tmp/ro/x.svg" "$tmp/ok.scn"
fi
if [ -e "$tmp/x.png" ] || [ -e "$tmp/f.svg" ] || [ -e "$tmp/t.svg" ] ||
   ls -d "$tmp"/missing "$tmp"/.*.svg.* >/dev/null 2>&1; then
	not_ok "run: a refused --svg leaves no file" "left: $(ls -A "$tmp")"
else
	ok "run: a refused --svg leaves no file"
fi

# ---- run: scenario files -----------------------------------------------

case_ "run: missing file" "$tmp/missing.scn" "$TOOL" run "$tmp/missing.scn"
case_ "run: a directory" "$tmp/dir.scn: cannot open: Is a directory" \
	"$TOOL" run "$tmp/dir.scn"
case_ "run: an empty file" "$tmp/empty.scn: no statements" \
	"$TOOL" run "$tmp/empty.scn"
case_ "run: only comments" "$tmp/comments.scn: no statements" \
	"$TOOL" run "$tmp/comments.scn"
case_ "run: /dev/null" "/dev/null: no statements" "$TOOL" run /dev/null
case_ "run: binary with NUL bytes" "$tmp/image.scn:3: NUL byte" \
	"$TOOL" run "$tmp/image.scn"
case_ "run: binary without NUL bytes" "$tmp/binary.scn:1: byte 0x1b in column 1 is not printable" \
	"$TOOL" run "$tmp/binary.scn"
case_ "run: a no-break space between tokens" "$tmp/nbsp.scn:1: byte 0xc2 in column 10" \
	"$TOOL" run "$tmp/nbsp.scn"
case_ "run: an endless file (/dev/zero)" "/dev/zero: larger than 256M" \
	"$TOOL" run /dev/zero
if $have_gzip; then
	case_ "run: gzip truncated" "$tmp/truncated.scn.gz: gzip: truncated" \
		"$TOOL" run "$tmp/truncated.scn.gz"
	case_ "run: gzip with a bad CRC" "$tmp/crc.scn.gz: gzip: corrupt: incorrect data check" \
		"$TOOL" run "$tmp/crc.scn.gz"
	case_ "run: gzip with trailing bytes" "$tmp/trailing.scn.gz: gzip: 4 bytes of trailing data" \
		"$TOOL" run "$tmp/trailing.scn.gz"
	case_ "run: gzip magic, then garbage" "$tmp/garbage.scn.gz: gzip: corrupt" \
		"$TOOL" run "$tmp/garbage.scn.gz"
	case_ "run: gzip of more than 256M of text" "$tmp/bomb.scn.gz: gzip: decompresses to more than 256M" \
		"$TOOL" run "$tmp/bomb.scn.gz"
	case_ "run: a gzipped scenario's error names its line" "$tmp/bad.scn.gz:2: unknown statement" \
		"$TOOL" run "$tmp/bad.scn.gz"
	case_ "diff: gzip truncated" "$tmp/truncated.scn.gz: gzip: truncated" \
		"$TOOL" diff "$tmp/truncated.scn.gz"
else
	for c in "gzip truncated" "gzip with a bad CRC" "gzip with trailing bytes" \
		 "gzip magic, then garbage" "gzip of more than 64M of text" \
		 "a gzipped scenario's error names its line" "diff: gzip truncated"; do
		skip "run: $c" "no gzip to make the files with"
	done
fi
if cat "$tmp/unreadable.scn" >/dev/null 2>&1; then
	skip "run: an unreadable file" "this user reads a chmod-000 file (root)"
else
	case_ "run: an unreadable file" "$tmp/unreadable.scn" \
		"$TOOL" run "$tmp/unreadable.scn"
fi
case_ "run: a statement that does not parse" "$tmp/bad.scn:2: unknown statement 'msync'" \
	"$TOOL" run "$tmp/bad.scn"
case_ "run: an observe too large to snapshot" "$tmp/huge-observe.scn:4: observe would snapshot 67108864 pages" \
	"$TOOL" run "$tmp/huge-observe.scn"

# ---- run: more memory written than the model has -----------------------

name="run: writing more than --memory fails the run (exit 1), naming the statement"
run "$TOOL" run --memory 16M "$tmp/oom.scn"
status=$?
why=$(bad_failure "$status")
key="$tmp/oom.scn:3: P0 write A 0 64M: out of memory"
if [ -z "$why" ] && [ "$status" -ne 1 ]; then
	why="exit status $status, wanted 1"
elif [ -z "$why" ] && ! head -n 1 "$err" | grep -qF -- "$key"; then
	why="the first line of stderr does not name '$key'"
elif [ -z "$why" ] && ! grep -qxF "3 P0 write A 0 64M: error ENOMEM" "$out"; then
	why="the record lacks '3 P0 write A 0 64M: error ENOMEM'"
elif [ -z "$why" ] && ! grep -q '^5 observe$' "$out"; then
	why="the run did not go on to the end"
fi
if [ -n "$why" ]; then
	not_ok "$name" "$why"
else
	ok "$name"
fi

name="help: run's exit statuses include 4 (skipped)"
"$TOOL" help >"$out" 2>"$err"
status=$?
if [ "$status" -eq 0 ] && grep -q 'exit status: 0 ok, 1 ' "$out" &&
   grep -q ' 3 an invariant check failed' "$out" &&
   grep -q ' 4 skipped' "$out"; then
	ok "$name"
else
	not_ok "$name" "exit status $status, or the exit statuses are not all listed"
fi

# ---- diff --------------------------------------------------------------

case_ "diff: no scenario file" "diff: no scenario file given" "$TOOL" diff
case_ "diff: unknown option" "diff: unknown option '--stats'" \
	"$TOOL" diff --stats "$tmp/ok.scn"
case_ "diff: a run-only option" "diff: unknown option '--memory'" \
	"$TOOL" diff --memory 64M "$tmp/ok.scn"
case_ "diff: --variant without a value" "--variant needs a value" \
	"$TOOL" diff --variant
case_ "diff: --variant unknown" "--variant: unknown variant 'fastest'" \
	"$TOOL" diff --variant fastest "$tmp/ok.scn"
case_ "diff: --set without a value" "--set needs a value" "$TOOL" diff --set
case_ "diff: --set without =" "--set: expected KEY=VALUE" \
	"$TOOL" diff --set zap_batch "$tmp/ok.scn"
case_ "diff: --set unknown switch" "unknown switch 'turbo'" \
	"$TOOL" diff --set turbo=1 "$tmp/ok.scn"
case_ "diff: --set bad value" "--set wp_reuse_max=7: bad value '7'" \
	"$TOOL" diff --set wp_reuse_max=7 "$tmp/ok.scn"
case_ "diff: missing file" "$tmp/missing.scn: cannot open" \
	"$TOOL" diff "$tmp/missing.scn"
case_ "diff: a directory" "$tmp/dir.scn: cannot open: Is a directory" \
	"$TOOL" diff "$tmp/dir.scn"
case_ "diff: an empty file" "$tmp/empty.scn: no statements" \
	"$TOOL" diff "$tmp/empty.scn"
case_ "diff: binary garbage" "$tmp/image.scn:3: NUL byte" \
	"$TOOL" diff "$tmp/image.scn"
case_ "diff: a bad second file stops the first from running" "$tmp/bad.scn:2: unknown statement" \
	"$TOOL" diff "$tmp/ok.scn" "$tmp/bad.scn"

# ---- bench (never gets as far as running: --quick on the model, 1 rep,
# in case a check ever lets one through) ----------------------------------

B="$TOOL bench"
Q="--backend model --quick --reps 1"
case_ "bench: no NAME" "bench: no NAME given" $B
case_ "bench: unknown NAME" "NAME: unknown benchmark 'tlb'" $B tlb $Q
case_ "bench: two NAMEs" "more than one NAME ('gup' and 'cow')" $B gup cow $Q
case_ "bench: unknown option" "bench: unknown option '--bogus'" $B gup --bogus $Q
case_ "bench: a lone -" "bench: unknown option '-'" $B gup - $Q
case_ "bench: --backend without a value" "--backend needs a value" $B gup --backend
case_ "bench: --backend unknown" "--backend: unknown backend 'gpu'" $B gup $Q --backend gpu
case_ "bench: --arch without a value" "--arch needs a value" $B gup $Q --arch
case_ "bench: --arch unknown" "--arch: unknown architecture 'arm64'" $B gup $Q --arch arm64
case_ "bench: --arch list with an unknown name" "--arch: unknown architecture 'nosuch'" $B gup $Q --arch x86_64,nosuch
case_ "run: --arch unknown" "--arch: unknown architecture 'sparc'" "$TOOL" run --arch sparc examples/cow-64k.scn
case_ "bench: --size without a value" "--size needs a value" $B gup $Q --size
case_ "bench: --size non-numeric" "--size: bad size 'big'" $B gup $Q --size big
case_ "bench: --size 0" "--size: bad size '0'" $B gup $Q --size 0
case_ "bench: --size negative" "--size: bad size '-2M'" $B gup $Q --size -2M
case_ "bench: --size overflowing" "--size: bad size '99999999999999999999'" \
	$B gup $Q --size 99999999999999999999
case_ "bench: --size not a multiple of 2M" "--size: '3M' is not a multiple of 2M" \
	$B cow $Q --size 3M
case_ "bench: --size not a multiple of the page size" "--size: '4097' is not a multiple of 2M" \
	$B mprotect $Q --size 4097
case_ "bench: --size above the maximum" "--size: '128G' is above the maximum 64G" \
	$B gup $Q --size 128G
if [ "$host_kb" -gt 0 ] && [ "$above_quarter_mb" -le 65536 ]; then
	case_ "bench: --size above a quarter of this machine's memory" \
		"--size: '${above_quarter_mb}M' is more than a quarter of this machine's" \
		$B gup $Q --size "${above_quarter_mb}M"
else
	skip "bench: --size above a quarter of this machine's memory" \
		"no MemTotal, or a quarter of it is above the 64G maximum"
fi
case_ "bench: --reps without a value" "--reps needs a value" $B gup --backend model --reps
case_ "bench: --reps 0" "--reps: expected a number from 1 to 1000, got '0'" \
	$B gup --backend model --quick --reps 0
case_ "bench: --reps negative" "--reps: expected a number from 1 to 1000, got '-1'" \
	$B gup --backend model --quick --reps -1
case_ "bench: --reps non-numeric" "--reps: expected a number from 1 to 1000, got 'ten'" \
	$B gup --backend model --quick --reps ten
case_ "bench: --reps fractional" "got '1.5'" $B gup --backend model --quick --reps 1.5
case_ "bench: --reps above the maximum" "got '1001'" $B gup --backend model --quick --reps 1001
case_ "bench: --reps overflowing" "got '99999999999999999999'" \
	$B gup --backend model --quick --reps 99999999999999999999
case_ "bench: --quick with a value" "--quick takes no value" $B gup --quick=yes
case_ "bench: --json without a value" "--json needs a value" $B gup $Q --json
case_ "bench: --json= empty" "--json: empty file name" $B gup $Q --json=
case_ "bench: --json in a missing directory" "--json: $tmp/missing/rows.json" \
	$B gup $Q --json "$tmp/missing/rows.json"
case_ "bench: --json a directory" "--json: $tmp/dir.scn: Is a directory" \
	$B gup $Q --json "$tmp/dir.scn"
if ( : >"$tmp/ro/probe" ) 2>/dev/null; then
	skip "bench: --json in a read-only directory" \
		"this user writes a chmod-555 directory (root)"
	skip "bench: --plot in a read-only directory" \
		"this user writes a chmod-555 directory (root)"
else
	case_ "bench: --json in a read-only directory" "--json: $tmp/ro/rows.json" \
		$B gup $Q --json "$tmp/ro/rows.json"
	case_ "bench: --plot in a read-only directory" "--plot: $tmp/ro/p.svg" \
		$B gup $Q --plot "$tmp/ro/p.svg"
fi
case_ "bench: --plot without a value" "--plot needs a value" $B gup $Q --plot
case_ "bench: --plot not .svg" "--plot: '$tmp/p.png' must end in .svg" \
	$B gup $Q --plot "$tmp/p.png"
case_ "bench replay: no file" "replay: no scenario file given" $B replay $Q
case_ "bench replay: a missing file" "$tmp/missing.scn: cannot open" \
	$B replay $Q "$tmp/ok.scn" "$tmp/missing.scn"
case_ "bench replay: a bad file" "$tmp/bad.scn:2: unknown statement" \
	$B replay $Q "$tmp/ok.scn" "$tmp/bad.scn"
case_ "bench replay: an empty file" "$tmp/empty.scn: no statements" \
	$B replay $Q "$tmp/empty.scn"
case_ "bench replay: a directory" "$tmp/dir.scn: cannot open: Is a directory" \
	$B replay $Q "$tmp/dir.scn"
if $have_gzip; then
	case_ "bench replay: a corrupt gzip" "$tmp/crc.scn.gz: gzip: corrupt" \
		$B replay $Q "$tmp/crc.scn.gz"
else
	skip "bench replay: a corrupt gzip" "no gzip to make the file with"
fi
case_ "bench replay: --size" "replay: --size does not apply" \
	$B replay $Q --size 64M "$tmp/ok.scn"
case_ "bench: --calibration without a value" "--calibration needs a value" \
	$B gup $Q --calibration
case_ "bench: --calibration empty" "--calibration: empty file name" \
	$B gup $Q --calibration ""
case_ "bench: --calibration a missing file" \
	"--calibration: $tmp/missing.json: cannot open" \
	$B gup $Q --calibration "$tmp/missing.json"
case_ "bench: --calibration a file that is not JSON" \
	"--calibration: $tmp/ok.scn:1:" $B mprotect $Q --calibration "$tmp/ok.scn"
printf '{"version": 1}\n' >"$tmp/calib-partial.json"
case_ "bench replay: --calibration a file that is not a calibration" \
	"--calibration: $tmp/calib-partial.json: missing field" \
	$B replay $Q --calibration "$tmp/calib-partial.json" "$tmp/ok.scn"
# A named calibration that cannot be read is bad usage, as a missing
# scenario is: exit status 2, and nothing runs.
run $B cow $Q --calibration "$tmp/missing.json"
status=$?
if [ "$status" -eq 2 ] && [ ! -s "$out" ]; then
	ok "bench: --calibration a missing file: exit status 2"
else
	not_ok "bench: --calibration a missing file: exit status 2" \
		"exit status $status"
fi
case_ "bench: a file after another NAME" "more than one NAME ('gup' and '$tmp/ok.scn')" \
	$B gup $Q "$tmp/ok.scn"
case_ "bench: --plot in a missing directory" "--plot: $tmp/missing/p.svg" \
	$B gup $Q --plot "$tmp/missing/p.svg"
case_ "bench: --plot a directory" "--plot: $tmp/dir.svg" \
	$B gup $Q --plot "$tmp/dir.svg"
case_ "bench: --plot without gnuplot" "--plot: needs gnuplot" \
	env PATH=/nonexistent "$TOOL" bench gup $Q --plot "$tmp/p.svg"
name="bench: --plot's check leaves no file behind"
run $B gup $Q --plot "$tmp/left.svg" --json "$tmp/missing/rows.json"
status=$?
why=$(bad_failure "$status")
if [ -z "$why" ] && [ -e "$tmp/left.svg" ]; then
	why="$tmp/left.svg was left behind"
fi
if [ -n "$why" ]; then
	not_ok "$name" "exit status $status: $why"
else
	ok "$name"
fi

# ---- explore (its own flags are its author's to test) -------------------

usage_case "explore: an unknown option reaches a usage message" \
	'[Uu]sage|--no-such-flag' "$TOOL" explore --no-such-flag
# --memory is checked as run checks it.
case_ "explore: --memory above the maximum" "--memory: '300G' is above the model's maximum" \
	"$TOOL" explore --memory 300G
case_ "explore: --memory not a multiple of the PMD size" \
	"--memory: '17M' is not a multiple of 2M" "$TOOL" explore --memory 17M

# ---- help, per command --------------------------------------------------

# help_case NAME WORD COMMAND...: exit 0, the command's usage on stdout.
help_case() {
	name=$1
	want=$2
	shift 2
	run "$@"
	status=$?
	if [ "$status" -ne 0 ]; then
		not_ok "$name" "exit status $status"
	elif ! grep -q "^usage: ptebatch $want" "$out"; then
		not_ok "$name" "no 'usage: ptebatch $want' on stdout"
	elif grep -q "^usage: ptebatch" "$err"; then
		not_ok "$name" "usage on stderr too"
	else
		ok "$name"
	fi
}

for c in run diff bench explore; do
	help_case "$c --help prints its usage" "$c" "$TOOL" "$c" --help
	help_case "$c -h prints its usage" "$c" "$TOOL" "$c" -h
done
help_case "--help after other flags still prints the usage" run \
	"$TOOL" run --stats --help
for c in diff explore; do
	if "$TOOL" "$c" --help 2>/dev/null | grep -q -- '--arch ARCH'; then
		ok "$c's usage names --arch"
	else
		not_ok "$c's usage names --arch" "no '--arch ARCH' in its usage"
	fi
done

# ---- the help, printed from the option tables ------------------------------

# Every row of every command's option table, as the usage printer reads
# them (cli_usage()): "COMMAND NAME [ARG]" a line.
"$TOOL" help --list-options >"$tmp/rows" 2>"$err"
status=$?
if [ "$status" -eq 0 ] && grep -q '^run --memory SIZE$' "$tmp/rows" &&
   [ ! -s "$err" ]; then
	ok "help --list-options lists the option rows"
else
	not_ok "help --list-options lists the option rows" "exit status $status"
fi
"$TOOL" help >"$tmp/help" 2>/dev/null

# usage_of COMMAND: its --help.  vm's is cut from `ptebatch help`, the
# same text: no test runs `ptebatch vm` beyond a refusal.
usage_of() {
	if [ "$1" = vm ]; then
		awk '/^usage: ptebatch / { on = $3 == "vm" } on' "$tmp/help"
	else
		"$TOOL" "$1" --help 2>/dev/null
	fi
}

# Each row is a paragraph of its command's help: a line indented 2 (4
# under a subcommand) that starts with NAME ARG, then its text.
for c in $(cut -d' ' -f1 "$tmp/rows" | uniq); do
	usage_of "$c" >"$tmp/usage"
	missing=$(grep "^$c " "$tmp/rows" | cut -d' ' -f2- |
		while IFS= read -r row; do
			awk -v row="$row" '
				/^(  |    )[^ ]/ {
					sub(/^ +/, "")
					n = length(row)
					if (substr($0, 1, n) == row &&
					    substr($0, n + 1) ~ /^  +[^ ]/)
						found = 1
				}
				END { exit !found }' "$tmp/usage" ||
				printf "'%s' " "$row"
		done)
	if [ -z "$missing" ]; then
		ok "$c: every option row is in its help, with its text"
	else
		not_ok "$c: every option row is in its help, with its text" \
			"missing: $missing"
	fi
done

# No option is named in the help but by its row (a renamed or removed
# option would live on in a hand-written text), and every value the
# build decides was filled in.
unknown=$(grep -o -- '--[a-z][a-z0-9-]*' "$tmp/help" | sort -u |
	while read -r name; do
		grep -q -- "^[a-z]* $name\( \|$\)" "$tmp/rows" ||
			printf '%s ' "$name"
	done)
if [ -z "$unknown" ]; then
	ok "help: every option it names is a row of a table"
else
	not_ok "help: every option it names is a row of a table" \
		"no row for: $unknown"
fi
if grep -q '{[a-z_]*}' "$tmp/help"; then
	not_ok "help: every {KEY} is filled in" \
		"$(grep -o '{[a-z_]*}' "$tmp/help" | sort -u | tr '\n' ' ')"
else
	ok "help: every {KEY} is filled in"
fi

# A command takes --arch (arch_redirect(), before its table is read)
# exactly when its table has the row that documents it.  vm build's is
# scripts/kernel-build's.
for c in $(cut -d' ' -f1 "$tmp/rows" | uniq); do
	[ "$c" = vm ] && continue
	if grep -q "^$c --arch " "$tmp/rows"; then
		case_ "$c: --arch, as its help says, is taken" \
			"--arch: unknown architecture 'nonesuch'" \
			"$TOOL" "$c" --arch nonesuch
	else
		case_ "$c: --arch, not in its help, is refused" \
			"unknown option '--arch'" "$TOOL" "$c" --arch nonesuch
	fi
done

# ---- --memory: what the help says, in every build ------------------------

# The size in MiB of SIZE ("16M", "2G"), or nothing.
to_mb() {
	case $1 in
	*G) echo $((${1%G} * 1024)) ;;
	*M) echo "${1%M}" ;;
	esac
}

# memory_help TOOL COMMAND: COMMAND's --memory paragraph, on one line.
memory_help() {
	"$1" "$2" --help 2>/dev/null | awk '
		/^  --memory / { on = 1; printf "%s", $0; next }
		on && /^  [^ ]/ { exit }
		on { printf " %s", $0 }' | tr -s ' '
}

# size_after WORDS TEXT: the size ("16M", "2G") right after WORDS in TEXT.
size_after() {
	echo "$2" | sed -n "s/.*$1\([0-9]*[MG]\).*/\1/p"
}

# memory_run TOOL COMMAND SIZE: a quick run of COMMAND with --memory SIZE.
memory_run() {
	if [ "$2" = explore ]; then
		run "$1" explore --memory "$3" --depth 1 --quiet
	else
		run "$1" "$2" --memory "$3" "$tmp/ok.scn"
	fi
}

# The least --memory and the default, as each build's help states them,
# are taken; one PMD below the least is refused as below it.
for dir in "$BUILD" "$BUILD/x86-pae" "$BUILD/arm64-4k" "$BUILD/arm64-16k" \
	   "$BUILD/arm64-64k"; do
	tool=$dir/ptebatch
	[ -x "$tool" ] || continue
	arch=$(basename "$dir")
	[ "$dir" = "$BUILD" ] && arch=x86_64
	for c in run explore predict; do
		name="$arch: $c --memory: the least and the default its help"
		name="$name says are taken, a PMD less is not"
		text=$(memory_help "$tool" "$c")
		pmd=$(size_after 'a multiple of ' "$text")
		least=$(size_after ', from ' "$text")
		dflt=$(size_after '(default ' "$text")
		if [ -z "$pmd" ] || [ -z "$least" ] || [ -z "$dflt" ]; then
			not_ok "$name" "cannot read its help: $text"
			continue
		fi
		below=$(($(to_mb "$least") - $(to_mb "$pmd")))M
		why=
		for size in "$least" "$dflt"; do
			memory_run "$tool" "$c" "$size"
			status=$?
			[ -z "$why" ] && [ "$status" -ne 0 ] &&
				why="--memory $size: exit status $status"
		done
		memory_run "$tool" "$c" "$below"
		status=$?
		key="--memory: '$below' is below the minimum $least"
		if [ -z "$why" ] && { [ "$status" -ne 2 ] ||
		   ! grep -qF -- "$key" "$err"; }; then
			why="--memory $below: exit status $status, not '$key'"
		fi
		if [ -n "$why" ]; then
			not_ok "$name" "$why"
		else
			ok "$name"
		fi
	done
done

# ---- output that cannot be written ---------------------------------------

# full_case NAME COMMAND...: stdout is /dev/full: exit 1 and say so.
full_case() {
	name=$1
	shift
	if command -v timeout >/dev/null 2>&1; then
		timeout 60 "$@" >/dev/full 2>"$err" </dev/null
	else
		"$@" >/dev/full 2>"$err" </dev/null
	fi
	status=$?
	if [ "$status" -ne 1 ]; then
		not_ok "$name" "exit status $status, wanted 1"
	elif ! grep -q 'writ' "$err"; then
		not_ok "$name" "stderr does not say the write failed"
	else
		ok "$name"
	fi
}

full_case "help > /dev/full fails" "$TOOL" help
full_case "run --help > /dev/full fails" "$TOOL" run --help
full_case "run > /dev/full fails" "$TOOL" run "$tmp/ok.scn"
full_case "explore > /dev/full fails" "$TOOL" explore --depth 1 --quiet
full_case "explore --list > /dev/full fails" "$TOOL" explore --list
full_case "bench > /dev/full fails" "$TOOL" bench gup --quick --backend model \
	--reps 1 --size 2M
# diff with a kernel side that runs the model on the text it is given.
printf '#!/bin/sh\nexec "%s" run --no-check --name "$6" -- /dev/stdin\n' \
	"$TOOL" >"$tmp/modelside"
chmod +x "$tmp/modelside"
full_case "diff > /dev/full fails" env PTEBATCH_DIFF_KERNEL="$tmp/modelside" \
	"$TOOL" diff "$tmp/ok.scn"
# A private full device (never the real /dev/full: an output path is
# given to the tool under test), written in place and kept.
if mknod "$tmp/full" c 1 7 2>/dev/null; then
	run "$TOOL" bench gup --quick --backend model --reps 1 --size 2M \
		--json "$tmp/full"
	status=$?
	if [ "$status" -eq 1 ] &&
	   grep -q -- "--json: $tmp/full: write error" "$err" &&
	   [ -c "$tmp/full" ]; then
		ok "bench --json a full device fails, the device kept"
	else
		not_ok "bench --json a full device fails, the device kept" \
			"exit status $status"
	fi
else
	skip "bench --json a full device fails, the device kept" \
		"mknod needs root"
fi

# ---- bench on the kernel without root ------------------------------------

status=
if [ "$(id -u)" -ne 0 ]; then
	run "$TOOL" bench gup --quick --backend kernel
	status=$?
elif command -v setpriv >/dev/null 2>&1; then
	run setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$TOOL" bench gup --quick --backend kernel
	status=$?
fi
if [ -z "$status" ]; then
	skip "bench --backend kernel without root exits 4 with the reason" \
		"root, and no setpriv to drop it"
elif [ "$status" -eq 4 ] && grep -q 'needs root' "$err" && [ ! -s "$out" ]; then
	ok "bench --backend kernel without root exits 4 with the reason"
else
	not_ok "bench --backend kernel without root exits 4 with the reason" \
		"exit status $status"
fi


echo "1..$n"
[ "$failed" -eq 0 ]
