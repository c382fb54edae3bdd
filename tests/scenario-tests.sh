#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# scenario-tests.sh - run the .scn scenarios through the tool, as TAP.
#
# tests/scenarios/NAME.scn with NAME.out beside it: `ptebatch run
# --variant baseline` must exit 0 and print exactly NAME.out (a mismatch
# shows the diff -u as "# " lines).  The .out files are the per-PTE
# reference; build/tests/test_equivalence holds the other variants to it.  tests/scenarios/errors/NAME.scn with NAME.err beside it: the run
# must exit 2 and its stderr must contain the line of NAME.err, as a fixed
# string.
#
# The .out and .err files were recorded with x86-64's 4K pages.  A build
# for another architecture (make ARCH=..., BUILD=build/ARCH) is held to
# them where they apply: with 4K pages (arm64-4k, x86-pae) exactly, but for
# the arch in the record header; with 16K or 64K pages a scenario written
# in 4K sizes is refused, or prints other page lines, so a mismatch there
# is a SKIP with the reason.
#
# Usage: BUILD=build sh tests/scenario-tests.sh   (from the top of the tree)

BUILD=${BUILD:-build}
TOOL=$BUILD/ptebatch
DIR=tests/scenarios

out=$(mktemp) || exit 1
err=$(mktemp) || exit 1
ref=$(mktemp) || exit 1
trap 'rm -f "$out" "$err" "$ref"' EXIT INT TERM

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

skip() {
	n=$((n + 1))
	echo "ok $n - $1 # SKIP $2"
}

if [ ! -x "$TOOL" ]; then
	echo "not ok 1 - $TOOL is not built"
	echo "1..1"
	exit 1
fi

# The tool's architecture, from the header of a record.
echo "P0 mmap A 2M rw" >"$ref"
arch=$("$TOOL" run "$ref" 2>/dev/null | sed -n '1s/^# backend .* arch //p')
case $arch in
arm64-16k | arm64-64k) big_pages=1 ;;
*) big_pages= ;;
esac

for scn in "$DIR"/*.scn; do
	[ -f "$scn" ] || continue
	want=${scn%.scn}.out
	[ -f "$want" ] || continue
	"$TOOL" run --variant baseline "$scn" >"$out" 2>"$err"
	status=$?
	sed "1s/ arch x86_64\$/ arch $arch/" "$want" >"$ref"
	if [ -n "$big_pages" ] && [ "$status" -eq 2 ]; then
		skip "$scn" "written for 4K pages: $(head -n 1 "$err")"
	elif [ "$status" -ne 0 ]; then
		not_ok "$scn (exit status $status)"
		comment "$err"
	elif [ -n "$big_pages" ] && ! diff -q "$ref" "$out" >/dev/null; then
		skip "$scn" "recorded with 4K pages; $arch has larger ones"
	elif ! diff -u "$ref" "$out" >"$err"; then
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
	if [ -n "$big_pages" ] &&
	   { [ "$status" -ne 2 ] || ! grep -qF -- "$expected" "$err"; }; then
		skip "$scn" "written for 4K pages: $arch says $(head -n 1 "$err")"
	elif [ "$status" -ne 2 ]; then
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
