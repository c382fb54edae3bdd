#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# build-checks.sh - the build behaves, as TAP:
#  1. a missing Debian package is named, with the command that installs
#     it, before anything compiles (a made-up header stands for it);
#  2. so is a missing compiler;
#  3. once `make tests` has run, make has nothing left to compile (no
#     object deleted as an intermediate and rebuilt the next time).
#
# Usage: BUILD=build SAN= sh tests/build-checks.sh   (from the top of the tree)

BUILD=${BUILD:-build}
. tests/tap.sh
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

ok() {
	tap_result "$@" || true
	if [ "$1" -ne 0 ]; then
		sed -n '1,20s/^/# /p' "$tmp/out"
	fi
}

make -s BUILD="$tmp/b" SAN="${SAN:-}" \
	DEP_HEADERS="urcu.h:liburcu-dev ptebatch-no-such.h:libptebatch-no-such-dev" \
	all >"$tmp/out" 2>&1
status=$?
[ "$status" -ne 0 ] && grep -q 'missing Debian package(s): libptebatch-no-such-dev' "$tmp/out" &&
	grep -q 'scripts/install-deps' "$tmp/out" && [ ! -d "$tmp/b" ]
ok $? "a missing package is named with scripts/install-deps, nothing compiled"

make -s BUILD="$tmp/b" SAN="${SAN:-}" CC=ptebatch-no-such-cc all >"$tmp/out" 2>&1
status=$?
[ "$status" -ne 0 ] && grep -q "the compiler 'ptebatch-no-such-cc' is not installed" "$tmp/out" &&
	grep -q 'scripts/install-deps' "$tmp/out"
ok $? "a missing compiler is named with scripts/install-deps"

make -n BUILD="$BUILD" SAN="${SAN:-}" tests >"$tmp/out" 2>&1
! grep -E '(^|[ /])(cc|gcc|clang|ar) ' "$tmp/out" | grep -v '^make' >/dev/null
ok $? "after make tests, make tests compiles nothing"

echo "1..$n"
exit $fail
