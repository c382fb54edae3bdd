#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# kernel-time.sh - `ptebatch run --backend kernel --time`, as TAP.
#
# Nothing here is timed: the checks are that the field is there, that it
# is a positive number, that timing changes no fault count, and that a
# timed record still compares with the model's.
#   - the flags: --time with the model, --reps without --time, --reps 0
#     and --reps x exit 2 naming the flag (no root needed);
#   - as root: --time --reps 3 of a small scenario prints "time US" on
#     every process statement, US > 0, and the record with the times (and
#     any "~") taken out is the untimed run's;
#   - `ptebatch diff` of that timed record (a stand-in kernel side prints
#     it, PTEBATCH_DIFF_KERNEL) against the model is a MATCH.
# Where the kernel backend cannot run (not root, a ThreadSanitizer build,
# no 64K mTHP) the kernel cases are SKIP with the backend's reason.
#
# Usage: BUILD=build sh tests/kernel-time.sh   (from the top of the tree)

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

skip() {
	n=$((n + 1))
	echo "ok $n - $1 # SKIP $2"
}

# One 64K folio per 64K: faults, a fork, a copy, a protection change, a
# zap; every statement a system call or a fault of its own.
cat >"$tmp/small.scn" <<'EOF'
mthp 64K always
P0 mmap A 256K rw
P0 write A 0 256K value 0x11
P0 fork P1
P1 write A 0 64K value 0x22
P0 mprotect A 0 256K r
P1 madvise A 64K 64K dontneed
observe
P0 munmap A 0 256K
EOF

# ---- the flags --------------------------------------------------------

# usage NAME FLAG ARGS...: exit status 2, the first line names FLAG.
usage() {
	name=$1
	flag=$2
	shift 2
	"$TOOL" run "$@" "$tmp/small.scn" >"$tmp/out" 2>"$tmp/err"
	status=$?
	[ "$status" -eq 2 ] && head -n 1 "$tmp/err" | grep -qF -- "$flag" &&
		[ ! -s "$tmp/out" ]
	tap_result $? "$name: exit 2 naming $flag (exit $status)"
	[ "$status" -eq 2 ] || sed 's/^/# /' "$tmp/err"
}

usage "--time with the model" --time --time
usage "--reps without --time" --reps --backend kernel --reps 3
usage "--reps 0" --reps --backend kernel --time --reps 0
usage "--reps x" --reps --backend kernel --time --reps x

# ---- a timed kernel run -----------------------------------------------

"$TOOL" run --backend kernel "$tmp/small.scn" >"$tmp/plain" 2>"$tmp/err"
status=$?
if [ "$status" -eq 4 ]; then
	why=$(sed -n 's/.*skipped on backend kernel: //p' "$tmp/err" | head -n 1)
	skip "timed kernel run" "${why:-the kernel backend cannot run here}"
	echo "1..$n"
	exit "$fail"
fi
tap_result "$status" "untimed kernel run (exit $status)"
[ "$status" -eq 0 ] || sed 's/^/# /' "$tmp/err"

"$TOOL" run --backend kernel --time --reps 3 "$tmp/small.scn" \
	>"$tmp/timed" 2>"$tmp/err"
status=$?
tap_result "$status" "run --backend kernel --time --reps 3 (exit $status)"
[ "$status" -eq 0 ] || sed 's/^/# /' "$tmp/err"

# Every process statement ("N PK ...: faults ..."), and each its time.
bad=$(awk '/^[0-9]+ P[0-9]+ .*: faults / {
		t = ""
		for (i = 1; i < NF; i++)
			if ($i == "time")
				t = $(i + 1)
		if (t !~ /^[0-9]+(\.[0-9]+)?$/ || t + 0 <= 0)
			print
		nr++
	}
	END { if (nr != 7) print nr " process statements, not 7" }' \
	"$tmp/timed")
[ -z "$bad" ]
tap_result $? "every process statement has a positive time"
[ -z "$bad" ] || echo "$bad" | sed 's/^/# /'

grep -q '^# time: microseconds, the median of 3 runs' "$tmp/timed"
tap_result $? "the record says how it was timed"

sed -e '/^# time:/d' -e 's/ time [0-9.]*//' -e 's/~//g' "$tmp/timed" \
	>"$tmp/untimed"
cmp -s "$tmp/untimed" "$tmp/plain"
tap_result $? "the timed record is the untimed one but for the times"
cmp -s "$tmp/untimed" "$tmp/plain" ||
	diff "$tmp/plain" "$tmp/untimed" | head -n 10 | sed 's/^/# /'

# ---- diff of a timed record -------------------------------------------

# A kernel side that prints the timed record, whatever it is asked.
cat >"$tmp/standin" <<EOF
#!/bin/sh
cat >/dev/null
exec cat "$tmp/timed"
EOF
chmod +x "$tmp/standin"
PTEBATCH_DIFF_KERNEL=$tmp/standin "$TOOL" diff "$tmp/small.scn" \
	>"$tmp/diff" 2>&1
status=$?
[ "$status" -eq 0 ] && grep -q "^MATCH $tmp/small.scn\$" "$tmp/diff"
tap_result $? "diff: the timed kernel record matches the model (exit $status)"
[ "$status" -eq 0 ] || sed 's/^/# /' "$tmp/diff"

echo "1..$n"
exit "$fail"
