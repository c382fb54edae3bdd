# SPDX-License-Identifier: GPL-2.0-only
# tap.sh - TAP for the shell tests, sourced: tap_result STATUS NAME prints
# "ok N - NAME" when STATUS is 0, else "not ok N - NAME" and sets fail=1.
# $n counts the tests; end with `echo "1..$n"; exit $fail`.
n=0
fail=0

tap_result() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		fail=1
	fi
}

# skip NAME REASON: "ok N - NAME # SKIP REASON", never a pass.
skip() {
	n=$((n + 1))
	echo "ok $n - $1 # SKIP $2"
}

# diag FILE: its first 20 lines as TAP comments.
diag() {
	sed -n '1,20s/^/# /p' "$1"
}
