#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# hostile-input.sh - what a user hands in, endless, huge or out of range,
# as TAP (issue 24, points 5, 9, 12 and 18).
#
#  - Every reader of a user's file or stream has a bound (README): given
#    /dev/zero, a pipe from /dev/zero on /dev/stdin, and a sparse file
#    past the bound, each must exit 2 with its first stderr line naming
#    the file and the bound ("PATH: larger than the 16M a samples file
#    may be", or "PATH:1: a line longer than the 64K ..."), under a
#    memory limit (ulimit -v) so that an unbounded reader fails here
#    instead of growing until the OOM killer ends it.  A file exactly at
#    the bound is not refused for its size.
#  - Flags and files with words that name nothing or numbers that are not
#    numbers (calibrate --without/--sizes, bench --arch lists, a
#    calibration's cost, a samples file's times and counts, an event
#    stream's pids and times, explore's and record's counts, diff's seed,
#    the fuzz replays' knobs) exit 2 naming the flag or the file.
#  - The fuzz replays leave nothing in $TMPDIR nor in /tmp.
#  - A calibration measured on another CPU model than this machine's
#    makes predict and bench (--calibration, replay) warn in one line on
#    stderr, and still run; one of this machine's CPU does not.
#
# A case a process would take minutes or all memory for on the old code
# fails within the limits here.  Under a sanitizer build the memory limit
# is left out (AddressSanitizer reserves terabytes of address space).
#
# Usage: BUILD=build SAN= sh tests/hostile-input.sh   (from the top of the tree)

BUILD=${BUILD:-build}
TOOL=$BUILD/ptebatch
. tests/tap.sh

if [ ! -x "$TOOL" ]; then
	echo "not ok 1 - $TOOL is not built"
	echo "1..1"
	exit 1
fi

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Half a gigabyte of address space: several times what any of these
# commands needs, far less than reading /dev/zero without a bound takes.
MEM_KB=524288
[ -n "${SAN:-}" ] && MEM_KB=
# A guard against a hang (not a timing: every case takes well under a
# second), so that a reader that never ends fails instead of hanging.
GUARD=
command -v timeout >/dev/null 2>&1 && GUARD="timeout 60"

# limited CMD ARGS...: run the tool under the memory limit and the guard,
# stdout into $tmp/out, stderr into $tmp/err; the status in $status.
limited() {
	(
		[ -n "$MEM_KB" ] && ulimit -v "$MEM_KB"
		exec $GUARD "$TOOL" "$@"
	) >"$tmp/out" 2>"$tmp/err" </dev/null
	status=$?
}

# limited_stdin SOURCE CMD ARGS...: the same, SOURCE (a file) piped in.
limited_stdin() {
	src=$1
	shift
	cat "$src" 2>/dev/null | (
		[ -n "$MEM_KB" ] && ulimit -v "$MEM_KB"
		exec $GUARD "$TOOL" "$@"
	) >"$tmp/out" 2>"$tmp/err"
	status=$?
}

# expect NAME KEY: the last run exited 2 and the first line of its stderr
# holds KEY (a fixed string).
expect() {
	[ "$status" -eq 2 ] && head -n 1 "$tmp/err" | grep -qF -- "$2"
	tap_result $? "$1 (exit $status)"
	if [ "$status" -ne 2 ] || ! head -n 1 "$tmp/err" | grep -qF -- "$2"; then
		echo "# expected exit 2 and: $2"
		sed -n '1,3s/^/# stderr: /p' "$tmp/err"
	fi
}

scn=$tmp/small.scn
cat >"$scn" <<'EOF'
P0 mmap A 64K rw
P0 write A 0 64K
P0 fork P1
P1 write A 0 4K
P1 exit
P0 munmap A 0 64K
EOF
samples=calibrate/x86_64.samples
shipped=calibrate/x86_64.json
cat >"$tmp/ok.events" <<'EOF'
# ptebatch events 1
root 300
1 300 execve ret=0
2 300 mmap addr=0 len=0x10000 prot=0x3 flags=0x22 fd=-1 ret=0x7f0000a00000
3 300 fault_user addr=0x7f0000a00000 err=0x6
EOF

# ---- 5: every reader's bound ------------------------------------------

# Sparse files: just past each bound (nothing is written to disk).
truncate -s $((16 * 1024 * 1024 + 1)) "$tmp/past-16M"
truncate -s $((16 * 1024 * 1024)) "$tmp/at-16M"
truncate -s $((1024 * 1024 + 1)) "$tmp/past-1M"
truncate -s $((1024 * 1024)) "$tmp/at-1M"
truncate -s $((1024 * 1024 * 1024 + 1)) "$tmp/past-1G"

# bounded NAME BOUND-TEXT AT-FILE PAST-FILE CMD-BEFORE-FILE...: the
# reader given /dev/zero, /dev/stdin fed from /dev/zero, PAST-FILE (one
# byte past the bound: refused) and AT-FILE (exactly at it: whatever else
# is wrong with it, not refused for its size).
bounded() {
	name=$1
	what=$2
	at=$3
	past=$4
	shift 4
	limited "$@" /dev/zero
	expect "$name: /dev/zero" "/dev/zero: larger than the $what"
	limited_stdin /dev/zero "$@" /dev/stdin
	expect "$name: /dev/stdin, a pipe from /dev/zero" \
		"/dev/stdin: larger than the $what"
	limited "$@" "$at"
	if grep -q 'larger than the' "$tmp/err"; then
		status=-1
		sed -n '1,3s/^/# at the bound: /p' "$tmp/err"
	else
		limited "$@" "$past"
	fi
	expect "$name: a sparse file one byte past the bound (exactly at it: read)" \
		"$past: larger than the $what"
}

bounded "calibrate --from-samples" "16M a samples file may be" \
	"$tmp/at-16M" "$tmp/past-16M" calibrate -o "$tmp/c.json" --from-samples
bounded "predict --calibration" "16M a calibration file may be" \
	"$tmp/at-16M" "$tmp/past-16M" predict "$scn" --calibration
bounded "bench --calibration" "16M a calibration file may be" \
	"$tmp/at-16M" "$tmp/past-16M" bench gup --quick --backend model \
	--calibration
# plot checks for gnuplot before it reads a row.
if ! command -v gnuplot >/dev/null 2>&1; then
	skip "plot's bound" "no gnuplot (Debian: gnuplot-nox)"
else
	bounded "plot" "16M a rows file may be" "$tmp/at-16M" "$tmp/past-16M" \
		plot --out "$tmp/p.svg"
fi
bounded "run --fuzz calib" "1M a fuzz input may be" "$tmp/at-1M" \
	"$tmp/past-1M" run --fuzz calib

# The event stream: 1G in all, 64K a line; /dev/zero is one endless line.
limited record --from-events /dev/zero
expect "record --from-events: /dev/zero" \
	"/dev/zero:1: a line longer than the 64K a line of an events file may be"
limited_stdin /dev/zero record --from-events /dev/stdin
expect "record --from-events: /dev/stdin, a pipe from /dev/zero" \
	"/dev/stdin:1: a line longer than the 64K"
limited record --from-events "$tmp/past-1G"
expect "record --from-events: a sparse file one byte past 1G" \
	"$tmp/past-1G: larger than the 1G an events file may be"
{ sed -n 1,3p "$tmp/ok.events"; printf '# '; head -c 70000 /dev/zero |
	tr '\0' x; echo; } >"$tmp/long-line.events"
limited record --from-events "$tmp/long-line.events"
expect "record --from-events: a comment line past 64K" \
	"$tmp/long-line.events:4: a line longer than the 64K"

# The fuzz replays read with the same bound as run --fuzz.
replay=$BUILD/tests/fuzz_replay_calib
if [ ! -x "$replay" ]; then
	skip "fuzz_replay_calib /dev/zero" "no $replay"
else
	(
		[ -n "$MEM_KB" ] && ulimit -v "$MEM_KB"
		exec $GUARD "$replay" /dev/zero
	) >"$tmp/out" 2>&1
	grep -q '^not ok' "$tmp/out" &&
		grep -q '/dev/zero: larger than the 1M a fuzz input may be' "$tmp/out"
	tap_result $? "fuzz_replay_calib /dev/zero: a failed input naming the bound"
fi

# ---- 9: words that name nothing, numbers that are not numbers ---------

limited calibrate --from-samples "$samples" -o "$tmp/c.json" --without forkk
expect "calibrate --without forkk" "--without: unknown family 'forkk' (known: "
grep -qF 'fork' "$tmp/err"
tap_result $? "calibrate --without forkk: the known families listed"
limited calibrate --from-samples "$samples" -o "$tmp/c.json" --sizes 64k,zzz
expect "calibrate --from-samples --sizes 64k,zzz" \
	"--sizes: unknown folio size 'zzz' (known: "
head -n 1 "$tmp/err" | grep -q '64k.*2m-pmd\|2m-pmd.*64k'
tap_result $? "calibrate --sizes 64k,zzz: the samples' sizes listed"
limited calibrate --from-samples "$samples" -o "$tmp/c.json" --without fork,
expect "calibrate --without 'fork,': an empty word" \
	"--without: an empty name in 'fork,'"
limited calibrate --from-samples "$samples" -o "$tmp/c.json" --sizes 4k,,1m
expect "calibrate --sizes '4k,,1m': an empty word" \
	"--sizes: an empty name in '4k,,1m'"
# Measuring: the suite's sizes, said before anything runs (the suite's
# one scenario would not even parse).
mkdir "$tmp/suite"
echo 'not a scenario' >"$tmp/suite/4k-2m.scn"
limited calibrate --suite "$tmp/suite" -o "$tmp/c.json" --sizes zzz
expect "calibrate --suite DIR --sizes zzz: refused before measuring" \
	"--sizes: unknown folio size 'zzz' (known: 4k)"
[ ! -e "$tmp/c.json" ]
tap_result $? "no calibration written by the refused runs"

# A calibration's costs: finite, not negative, at most a second.  The
# shipped file's second cost is fault_anon's, fitted.
cost_of_fault_anon() {
	sed '/"counter": "fault_anon"/{n;s/"us": [^,]*/"us": '"$1"'/;}' \
		"$shipped" >"$tmp/cost.json"
}
# A second is no absurd cost yet: taken, before 1e7 us is refused.
cost_of_fault_anon 1e6
"$TOOL" predict --calibration "$tmp/cost.json" "$scn" >"$tmp/out" 2>"$tmp/err"
second=$?
grep -q '^# predicted total: ' "$tmp/out" || second=1
[ "$second" -eq 0 ] || sed -n '1,3s/^/# a cost of 1e6 us: /p' "$tmp/err"
for cost in 1.7e308 1e7; do
	cost_of_fault_anon "$cost"
	limited predict --calibration "$tmp/cost.json" "$scn"
	[ -s "$tmp/out" ] || [ "$second" -ne 0 ] && status=-1
	expect "predict: a cost of $cost us refused, nothing predicted (1e6 us is taken)" \
		"$tmp/cost.json: costs[1].us: "
done

# A samples file's times and counts.
head -n 4 "$samples" >"$tmp/head.samples"
row=$(sed -n 5p "$samples")
sample_case() {
	name=$1
	line=$2
	{ cat "$tmp/head.samples"; echo "$line"; } >"$tmp/bad.samples"
	limited calibrate --from-samples "$tmp/bad.samples" -o "$tmp/c.json"
	expect "calibrate --from-samples: $name" "$tmp/bad.samples:5:"
}
set -- $row
rest=$(echo "$row" | cut -d' ' -f6-)
sample_case "a time of 1e300 us" "$1 $2 $3 $4 1e300 $rest"
sample_case "a time of 0.0001 us" "$1 $2 $3 $4 0.0001 $rest"
sample_case "a count with a sign" "$1 $2 $3 $4 $5 +$rest"
sample_case "a statement number with a sign" "$1 +$2 $3 $4 $5 $rest"

# An event stream's numbers: a pid is not cut to 32 bits, a time has no sign.
ev_case() {
	name=$1
	shift
	printf '%s\n' '# ptebatch events 1' "$@" >"$tmp/bad.events"
	limited record --from-events "$tmp/bad.events"
	expect "record --from-events: $name" "$tmp/bad.events:"
	[ ! -s "$tmp/out" ]
	tap_result $? "record --from-events: $name: no scenario written"
}
ev_case "a root pid past 32 bits" 'root 4294967596' '1 300 execve ret=0'
ev_case "words after root PID" 'root 300 301' '1 300 execve ret=0'
ev_case "an event pid past 32 bits" 'root 300' '1 4294967596 execve ret=0'
ev_case "a negative time" 'root 300' '-1 300 execve ret=0'

# Counts of other commands: digits only.
limited explore --list --depth +2
expect "explore --depth +2" "--depth: expected a whole number"
limited explore --list --depth ' 2'
expect "explore --depth ' 2'" "--depth: expected a whole number"
limited explore --list --max-seconds +5
expect "explore --max-seconds +5" "--max-seconds: expected a whole number"
limited explore --list --shard '1/ 2'
expect "explore --shard '1/ 2'" "--shard: expected I/N"
limited explore --list --shard '+1/2'
expect "explore --shard '+1/2'" "--shard: expected I/N"
limited record --buffer-kb +64 --from-events "$tmp/ok.events"
expect "record --buffer-kb +64" "--buffer-kb: bad size '+64'"
# An empty word of a list; a bench with it would run (and fail on --reps).
limited bench gup --quick --backend model --reps 0 --arch x86_64,,arm64-4k
expect "bench --arch 'x86_64,,arm64-4k': an empty word" \
	"--arch: an empty name in 'x86_64,,arm64-4k'"
# A seed with a leading 0 is decimal, as the usage says, not octal.  The
# kernel side is a program that does not exist: nothing runs on the kernel.
# Hex after 0x stays digits only ("0x-5" is no number).
limited diff --random 1 --seed 0x-5
hex=$status
PTEBATCH_DIFF_KERNEL=/nonexistent/ptebatch-kernel-side \
	"$TOOL" diff --random 1 --seed 010 --out "$tmp/rdiff" \
	>"$tmp/out" 2>"$tmp/err"
[ "$hex" -eq 2 ] && head -n 1 "$tmp/out" | grep -q -- '--seed 10 '
tap_result $? "diff --random --seed 010 is seed 10, not octal 8 (0x-5: exit $hex)"
head -n 1 "$tmp/out" | grep -q -- '--seed 10 ' || sed -n '1s/^/# stdout: /p' "$tmp/out"
# The fuzz replays' knobs: a typo is refused, not the default.
if [ -x "$BUILD/tests/fuzz_replay_calib" ]; then
	FUZZ_REPLAY_MAX=abc "$BUILD/tests/fuzz_replay_calib" >"$tmp/out" 2>"$tmp/err"
	status=$?
	expect "FUZZ_REPLAY_MAX=abc" "FUZZ_REPLAY_MAX: expected a number"
fi

# ---- 12: nothing left in /tmp ------------------------------------------

replay=$BUILD/tests/fuzz_replay_calib
if [ ! -x "$replay" ]; then
	skip "fuzz replays leave nothing behind" "no $replay"
else
	mkdir "$tmp/tmpdir"
	ls -d /tmp/fuzz-calib.* 2>/dev/null | sort >"$tmp/before"
	TMPDIR=$tmp/tmpdir "$replay" >"$tmp/out" 2>&1
	status=$?
	ls -d /tmp/fuzz-calib.* 2>/dev/null | sort >"$tmp/after"
	new=$(comm -13 "$tmp/before" "$tmp/after")
	[ "$status" -eq 0 ] && grep -q '^ok .*calibration' "$tmp/out" &&
		[ -z "$(ls -A "$tmp/tmpdir")" ] && [ -z "$new" ]
	tap_result $? "fuzz_replay_calib round-trips the corpus's calibrations and leaves nothing in \$TMPDIR nor a /tmp/fuzz-calib.* (exit $status)"
	ls -A "$tmp/tmpdir" | sed 's/^/# left: /'
	[ -z "$new" ] || echo "$new" | sed 's/^/# left: /'
	# Without TMPDIR the round trip's directory is in /tmp, and goes.
	ls -d /tmp/fuzz-calib.* 2>/dev/null | sort >"$tmp/before"
	env -u TMPDIR "$replay" >"$tmp/out" 2>&1
	ls -d /tmp/fuzz-calib.* 2>/dev/null | sort >"$tmp/after"
	new=$(comm -13 "$tmp/before" "$tmp/after")
	[ -z "$new" ]
	tap_result $? "fuzz_replay_calib without TMPDIR leaves no /tmp/fuzz-calib.* behind"
fi

# ---- 18: a calibration of another CPU ---------------------------------

this_cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
if [ -z "$this_cpu" ]; then
	skip "a calibration of another CPU" "/proc/cpuinfo names no CPU model here"
else
	other="Made-up CPU 9000 @ 1.00GHz"
	sed "s/\"cpu\": \"[^\"]*\"/\"cpu\": \"$other\"/" "$shipped" \
		>"$tmp/other-cpu.json"
	# cpu_warns NAME CMD ARGS...: exit 0 and exactly one line on stderr
	# naming both CPUs and the command that calibrates this machine.
	cpu_warns() {
		name=$1
		shift
		"$TOOL" "$@" >"$tmp/out" 2>"$tmp/err"
		status=$?
		nr=$(grep -c "warning: $tmp/other-cpu.json was measured on another CPU" "$tmp/err")
		[ "$status" -eq 0 ] && [ "$nr" -eq 1 ] && [ "$this_status" -eq 0 ] &&
			grep -qF "($other; this machine: $this_cpu)" "$tmp/err" &&
			grep -qF 'ptebatch calibrate' "$tmp/err"
		tap_result $? "$name: one warning line naming both CPUs (exit $status)"
		[ "$status" -eq 0 ] && [ "$nr" -eq 1 ] || sed -n '1,3s/^/# stderr: /p' "$tmp/err"
	}
	# This machine's own CPU: no such warning.
	esc=$(printf '%s' "$this_cpu" | sed 's/[\/&]/\\&/g')
	sed "s/\"cpu\": \"[^\"]*\"/\"cpu\": \"$esc\"/" "$shipped" \
		>"$tmp/this-cpu.json"
	"$TOOL" predict --calibration "$tmp/this-cpu.json" "$scn" \
		>"$tmp/out" 2>"$tmp/this-cpu.err"
	this_status=$?
	grep -q 'another CPU' "$tmp/this-cpu.err" && this_status=1
	[ "$this_status" -eq 0 ] ||
		sed -n '1,3s/^/# this machine'"'"'s CPU: /p' "$tmp/this-cpu.err"
	cpu_warns "predict (none for this machine's own CPU)" \
		predict --calibration "$tmp/other-cpu.json" "$scn"
	cpu_warns "bench gup --calibration" bench gup --quick --backend model \
		--calibration "$tmp/other-cpu.json"
	cpu_warns "bench replay --calibration" bench replay "$scn" \
		--backend model --reps 1 --calibration "$tmp/other-cpu.json"
fi

echo "1..$n"
exit $fail
