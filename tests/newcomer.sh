#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# newcomer.sh - what someone new to the project meets first (issue 24,
# 16, 17, 19):
#
#  1. The README's commands run as a root shell runs them: no command in
#     it starts with sudo (a root shell without sudo says "command not
#     found"), and it says once how to run them from a user account.
#     Nor does a message of the build or a script's usage ask for sudo.
#  2. The README says what the benchmarks' "met", "NOT met" and "MISSED"
#     are (results, exit status 0), and bench exits 0 on a run that
#     printed its targets block.
#  3. A licence: LICENSE is the GPL version 2, and every tracked source
#     file (C, headers, shell, Makefile, scripts, fuzz harnesses) says
#     so in an SPDX line in its first two lines.
#
# Usage: BUILD=build sh tests/newcomer.sh   (from the top of the tree)

BUILD=${BUILD:-build}
TOOL=$BUILD/ptebatch
. tests/tap.sh

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# 1. Code blocks are indented by four spaces or fenced with ```; a
#    command in running text is in backquotes.
awk '/^```/ { fence = !fence; next }
     fence || /^    / { print FILENAME ":" FNR ": " $0 }' README.md |
	grep -E ':[0-9]+: +(\$ +)?sudo ' >"$tmp/sudo"
grep -nE '`sudo (build|scripts|make|BUILD)' README.md >>"$tmp/sudo"
[ ! -s "$tmp/sudo" ] &&
	grep -q 'from a user account put `sudo` in front of each' README.md
tap_result $? "README: commands as a root shell runs them, sudo said once"
[ -s "$tmp/sudo" ] && sed 's/^/# /' "$tmp/sudo"

git grep -n 'sudo ' -- Makefile scripts/ cli/ bench/ backend/ record/ \
	calibrate/ >"$tmp/sudo2"
[ ! -s "$tmp/sudo2" ]
tap_result $? "no message or usage line of the build, the tool or a script asks for sudo"
[ -s "$tmp/sudo2" ] && sed 's/^/# /' "$tmp/sudo2"

# 2. The words of the targets block.
grep -q '`met`, `NOT met`$' README.md &&
	grep -q 'and `MISSED` are results of that run on that machine, not failures of' README.md &&
	grep -q '`bench` still exits 0' README.md
tap_result $? "README: met, NOT met and MISSED are results, bench exits 0"
"$TOOL" bench gup --backend model --quick >"$tmp/gup" 2>&1
status=$?
[ "$status" -eq 0 ] && grep -q 'targets (pin, batched vs per-PTE' "$tmp/gup" &&
	grep -Eq '(met|NOT met)$' "$tmp/gup"
tap_result $? "bench gup --quick prints its targets and exits 0, met or not (exit $status)"

# 3. The licence.
head -n 2 LICENSE | grep -q 'GNU GENERAL PUBLIC LICENSE' &&
	sed -n 2p LICENSE | grep -q 'Version 2, June 1991'
tap_result $? "LICENSE is the GPL version 2"
git ls-files -- '*.c' '*.h' '*.sh' Makefile 'scripts/*' '.ci/*' \
	'fuzz/*.sh' >"$tmp/files"
: >"$tmp/nolicence"
while IFS= read -r f; do
	head -n 2 "$f" | grep -q 'SPDX-License-Identifier: GPL-2.0-only' ||
		echo "$f" >>"$tmp/nolicence"
done <"$tmp/files"
[ -s "$tmp/files" ] && [ ! -s "$tmp/nolicence" ]
tap_result $? "every source file ($(wc -l <"$tmp/files")) has an SPDX GPL-2.0-only line at its top"
[ -s "$tmp/nolicence" ] && head -n 20 "$tmp/nolicence" | sed 's/^/# no SPDX line: /'

echo "1..$n"
exit "$fail"
