#!/bin/sh
# scenario-tests.sh - run the .scn scenarios through the tool, as TAP.
#
# tests/scenarios/NAME.scn with NAME.out beside it: `ptebatch run
# --variant baseline` must exit 0 and print exactly NAME.out (a mismatch
# shows the diff -u as "# " lines).  The .out files are the per-PTE
# reference; build/tests/test_equivalence holds the other variants to it.  tests/scenarios/errors/NAME.scn with NAME.err beside it: the run
# must exit 2 and its stderr must contain the line of NAME.err, as a fixed
# string.
#
# Usage: BUILD=build sh tests/scenario-tests.sh   (from the top of the tree)

BUILD=${BUILD:-build}
TOOL=$BUILD/ptebatch
DIR=tests/scenarios

out=$(mktemp) || exit 1
err=$(mktemp) || exit 1
trap 'rm -f "$out" "$err"' EXIT INT TERM

n=0
failed=0

ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}

not_ok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $1"
}

# Show a file as TAP comments.
comment() {
	sed 's/^/# /' "$1"
}

if [ ! -x "$TOOL" ]; then
	echo "not ok 1 - $TOOL is not built"
	echo "1..1"
	exit 1
fi

for scn in "$DIR"/*.scn; do
	[ -f "$scn" ] || continue
	want=${scn%.scn}.out
	[ -f "$want" ] || continue
	"$TOOL" run --variant baseline "$scn" >"$out" 2>"$err"
	status=$?
	if [ "$status" -ne 0 ]; then
		not_ok "$scn (exit status $status)"
		comment "$err"
	elif ! diff -u "$want" "$out" >"$err"; then
		not_ok "$scn (record differs)"
		comment "$err"
	else
		ok "$scn"
	fi
done

for scn in "$DIR"/errors/*.scn; do
	[ -f "$scn" ] || continue
	want=${scn%.scn}.err
	if [ ! -f "$want" ]; then
		not_ok "$scn (no ${want##*/} beside it)"
		continue
	fi
	expected=$(head -n 1 "$want")
	if [ -z "$expected" ]; then
		not_ok "$scn (${want##*/} is empty)"
		continue
	fi
	"$TOOL" run "$scn" >"$out" 2>"$err"
	status=$?
	if [ "$status" -ne 2 ]; then
		not_ok "$scn (exit status $status, wanted 2)"
		comment "$err"
	elif ! grep -qF -- "$expected" "$err"; then
		not_ok "$scn (stderr lacks the expected message)"
		echo "# wanted: $expected"
		comment "$err"
	else
		ok "$scn"
	fi
done

echo "1..$n"
[ "$failed" -eq 0 ]
