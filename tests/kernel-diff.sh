#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# kernel-diff.sh - hold the model to the running kernel: `ptebatch diff`
# over tests/scenarios/*.scn, as TAP.
#
# One TAP line per scenario: MATCH is ok, MISMATCH and ERROR are not ok
# (with the first difference or the error as a "# " line), SKIP is
# "ok N - FILE # SKIP reason" (never a pass), and so is VARIES: the
# kernel's own count was not the same from run to run (DAMON, other CPUs'
# LRU caches: diff's first line says what on this machine can do it), a
# fact of this machine that says nothing of the model.  A diff that dies, or
# leaves a scenario without a verdict, is one more failure.  Not root: the
# whole test is one skip, since the kernel backend must write THP sysfs.
#
# The run changes /sys/kernel/mm/transparent_hugepage for each scenario
# and puts every value back (also on SIGINT/SIGTERM/SIGHUP/SIGQUIT).
#
# Usage: BUILD=build sh tests/kernel-diff.sh   (from the top of the tree)
#        VARIANT=seeds BUILD=build sh tests/kernel-diff.sh

BUILD=${BUILD:-build}
TOOL=$BUILD/ptebatch
DIR=tests/scenarios
VARIANT=${VARIANT:-upstream}

if [ "$(id -u)" -ne 0 ]; then
	echo "ok 1 - kernel diff # SKIP not root"
	echo "1..1"
	exit 0
fi
if [ ! -x "$TOOL" ]; then
	echo "not ok 1 - $TOOL is not built"
	echo "1..1"
	exit 1
fi

out=$(mktemp) || exit 1
err=$(mktemp) || exit 1
trap 'rm -f "$out" "$err"' EXIT
# The diff's children restore sysfs on these signals; let them, then go.
trap 'exit 130' INT
trap 'exit 143' TERM

set -- "$DIR"/*.scn
[ -f "$1" ] || set --
if [ $# -eq 0 ]; then
	echo "ok 1 - kernel diff # SKIP no scenarios in $DIR"
	echo "1..1"
	exit 0
fi

"$TOOL" diff --variant "$VARIANT" "$@" >"$out" 2>"$err"
status=$?

n=0
failed=0
verdicts=0
while IFS= read -r line; do
	case $line in
	"MATCH "*)
		n=$((n + 1))
		verdicts=$((verdicts + 1))
		echo "ok $n - ${line#MATCH }"
		;;
	"SKIP "* | "VARIES "* | "MISMATCH "* | "ERROR "*)
		n=$((n + 1))
		verdicts=$((verdicts + 1))
		word=${line%% *}
		rest=${line#* }
		file=${rest%%: *}
		why=${rest#*: }
		if [ "$word" = SKIP ]; then
			echo "ok $n - $file # SKIP $why"
		elif [ "$word" = VARIES ]; then
			echo "ok $n - $file # SKIP the kernel varies here: $why"
		else
			failed=$((failed + 1))
			echo "not ok $n - $file ($word)"
			echo "# $why"
		fi
		;;
	*)
		echo "# $line"
		;;
	esac
done <"$out"

if [ -s "$err" ]; then
	sed 's/^/# stderr: /' "$err"
fi
if [ "$verdicts" -ne $# ]; then
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - ptebatch diff gave $verdicts verdicts for $# scenarios (exit status $status)"
elif [ "$status" -ne 0 ] && [ "$status" -ne 5 ] && [ "$failed" -eq 0 ]; then
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - ptebatch diff exited with status $status"
fi

echo "1..$n"
[ "$failed" -eq 0 ]
