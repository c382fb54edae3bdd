#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# random-diff.sh - `ptebatch diff --random`: the generator, the shrinker
# and the flags, as TAP.
#
# Without root (a stand-in for the kernel side, PTEBATCH_DIFF_KERNEL):
#  1-3. the same seed makes byte-identical scenarios, another seed other
#       ones, and --index I --random 1 makes scenario I alone;
#  4.   2000 (TSan: 500) generated scenarios all parse and run on the model with its
#       invariant checks (`ptebatch run`, exit 0 each);
#  5-8. a stand-in kernel side that is the model with every dio-read's
#       fault count changed: each mismatch is shrunk to a scenario whose
#       last statement is a dio-read and none of whose statements can go
#       (without any one it no longer mismatches), written with both
#       records, still a MISMATCH for `diff`, and the run ends with one
#       `ptebatch run` command per mismatch, exit 1;
#  9.   a stand-in that differs only every other run: "not reproduced";
#  10.  a kernel side that cannot run here (not root): SKIP, exit 4;
#  11-. bad flags exit 2 naming the flag.
# As root, on this machine's kernel (SKIP otherwise):
#  last. 40 random scenarios: no mismatch, no error.
#
# Usage: BUILD=build [SAN=tsan] sh tests/random-diff.sh   (from the top of
#        the tree)

BUILD=${BUILD:-build}
TOOL=$(pwd)/$BUILD/ptebatch
. tests/tap.sh
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

diag() {
	sed -n '1,20s/^/# /p' "$1"
}

# ---- the generator -----------------------------------------------------

"$TOOL" diff --random 50 --seed 7 --dump "$tmp/a" >/dev/null &&
	"$TOOL" diff --random 50 --seed 7 --dump "$tmp/b" >/dev/null &&
	diff -r "$tmp/a" "$tmp/b" >/dev/null
tap_result $? "same seed, same 50 scenarios"

"$TOOL" diff --random 50 --seed 8 --dump "$tmp/c" >/dev/null
same=0
for f in "$tmp"/a/*.scn; do
	g=$tmp/c/$(basename "$f" | sed 's/-7-/-8-/')
	cmp -s "$f" "$g" && same=$((same + 1))
done
[ "$(ls "$tmp/c" | wc -l)" -eq 50 ] && [ "$same" -eq 0 ]
tap_result $? "another seed, other scenarios ($same of 50 the same)"

"$TOOL" diff --random 1 --seed 7 --index 33 --dump "$tmp/d" >/dev/null &&
	cmp -s "$tmp/d/random-7-33.scn" "$tmp/a/random-7-33.scn"
tap_result $? "--index 33 --random 1 makes scenario 33 alone"

# 2000 (500 under ThreadSanitizer, where a model run is many times slower).
many=2000
[ "${SAN:-}" = tsan ] && many=500
"$TOOL" diff --random "$many" --seed 12345 --dump "$tmp/many" >/dev/null
bad=0
for f in "$tmp"/many/*.scn; do
	if ! "$TOOL" run "$f" >/dev/null 2>"$tmp/err"; then
		bad=$((bad + 1))
		[ "$bad" -le 3 ] && { echo "# $f:"; diag "$tmp/err"; }
	fi
done
[ "$(ls "$tmp/many" | wc -l)" -eq "$many" ] && [ "$bad" -eq 0 ]
tap_result $? "$many generated scenarios parse and run on the model, checked ($bad failed)"

# ---- the shrinker, against a planted difference ------------------------

# A kernel side that is the model, every dio-read's fault count made 999.
cat >"$tmp/planted" <<EOF
#!/bin/sh
# run --backend kernel --no-check --name NAME -- /dev/stdin
"$TOOL" run --no-check --name "\$6" -- /dev/stdin |
	sed -E '/^[0-9]+ P[0-9]+ dio-read /s/faults [0-9]+/faults 999/'
EOF
chmod +x "$tmp/planted"

PTEBATCH_DIFF_KERNEL=$tmp/planted "$TOOL" diff --random 40 --seed 3 \
	--out "$tmp/found" >"$tmp/out" 2>&1
status=$?
mismatches=$(grep -c '^MISMATCH ' "$tmp/out")
[ "$status" -eq 1 ] && [ "$mismatches" -gt 0 ]
tap_result $? "a planted difference is found ($mismatches mismatches, exit $status)"
[ "$status" -eq 1 ] || diag "$tmp/out"

# Minimal: it ends in the dio-read, and without any one of its statements
# it no longer mismatches (it does not parse, or it matches).
ok=1
for f in "$tmp"/found/*.scn; do
	[ -f "$f" ] || { ok=0; break; }
	grep -v '^#' "$f" >"$tmp/stmts"
	nst=$(wc -l <"$tmp/stmts")
	if ! tail -1 "$tmp/stmts" | grep -q ' dio-read '; then
		ok=0
		echo "# does not end in a dio-read: $f"
		diag "$tmp/stmts"
	fi
	k=1
	while [ "$k" -le "$nst" ]; do
		sed "${k}d" "$tmp/stmts" >"$tmp/less.scn"
		if PTEBATCH_DIFF_KERNEL=$tmp/planted "$TOOL" diff \
			"$tmp/less.scn" 2>/dev/null | grep -q '^MISMATCH '; then
			ok=0
			echo "# not minimal: $f without its statement $k"
			diag "$tmp/stmts"
		fi
		k=$((k + 1))
	done
	grep -q '^# model record:' "$f" && grep -q '^# kernel record:' "$f" ||
		ok=0
done
[ "$ok" -eq 1 ] && [ "$(ls "$tmp/found" | wc -l)" -eq "$mismatches" ]
tap_result $? "each mismatch shrunk to a minimal scenario ending in its dio-read (no statement can go), both records kept"

f=$(ls "$tmp"/found/*.scn | head -1)
PTEBATCH_DIFF_KERNEL=$tmp/planted "$TOOL" diff "$f" >"$tmp/again" 2>&1
grep -q '^MISMATCH ' "$tmp/again"
tap_result $? "the minimal scenario still mismatches for diff"

[ "$(grep -c "^reproduce: .*ptebatch run --backend kernel $tmp/found/random-3-[0-9]*\.scn" "$tmp/out")" -eq "$mismatches" ]
tap_result $? "one ptebatch run command per mismatch at the end"

# A kernel side that differs on every other run only: the kernel varies,
# which is no model bug: VARIES with the counts of each run, nothing
# kept, exit 5.
cat >"$tmp/flaky" <<EOF
#!/bin/sh
n=\$(cat "$tmp/count" 2>/dev/null || echo 0)
echo \$((n + 1)) >"$tmp/count"
if [ \$((n % 2)) -eq 0 ]; then
	exec "$tmp/planted" "\$@"
fi
exec "$TOOL" run --no-check --name "\$6" -- /dev/stdin
EOF
chmod +x "$tmp/flaky"
# Scenario 0 of seed 3 is one the planted difference shows in (above).
first=$(grep -m1 '^MISMATCH ' "$tmp/out" | sed 's/^MISMATCH random-3-\([0-9]*\):.*/\1/')
rm -f "$tmp/count"
PTEBATCH_DIFF_KERNEL=$tmp/flaky "$TOOL" diff --random 1 --seed 3 \
	--index "$first" --out "$tmp/flaky-out" >"$tmp/out2" 2>&1
status=$?
grep -q ', 1 varies' "$tmp/out2" && [ ! -d "$tmp/flaky-out" ] &&
	grep -q '^VARIES random-3-[0-9]*: statement [0-9]* (.* dio-read .*): faults model [0-9]*, kernel 999, [0-9]*, 999, [0-9]*, 999 (5 kernel runs)$' "$tmp/out2" &&
	[ "$status" -eq 5 ]
tap_result $? "a difference that does not come in every run is VARIES, with each run's count (exit $status)"
grep -q "^VARIES.*(5 kernel runs)$" "$tmp/out2" || diag "$tmp/out2"

# ---- no kernel backend here ----------------------------------------------

cat >"$tmp/notroot" <<EOF
#!/bin/sh
echo "\$6: skipped on backend kernel: not root: the kernel backend needs to write THP settings and read /proc/kpageflags" >&2
exit 4
EOF
chmod +x "$tmp/notroot"
PTEBATCH_DIFF_KERNEL=$tmp/notroot "$TOOL" diff --random 5 >"$tmp/out3" 2>&1
status=$?
[ "$status" -eq 4 ] && grep -q '^SKIP diff --random: not root' "$tmp/out3"
tap_result $? "no kernel backend here: SKIP with the reason, exit 4 (exit $status)"

# ---- bad flags -------------------------------------------------------------

bad_flag() {
	flag=$1
	shift
	"$TOOL" diff "$@" >"$tmp/bad" 2>&1
	status=$?
	[ "$status" -eq 2 ] && grep -q -- "$flag" "$tmp/bad"
	tap_result $? "diff $* exits 2 naming $flag (exit $status)"
	[ "$status" -eq 2 ] || diag "$tmp/bad"
}
bad_flag --random --random 0
bad_flag --random --random -3
bad_flag --random --random abc
bad_flag --random --random 1e3
bad_flag --random --random 99999999999
bad_flag --seed --random 5 --seed x
bad_flag --seed --random 5 --seed -1
bad_flag --seed --random 5 --seed 99999999999999999999999
bad_flag --length --random 5 --length 0
bad_flag --length --random 5 --length 100000
bad_flag --seed --seed 5
bad_flag --random --random 5 "$tmp/a/random-7-0.scn"
bad_flag --counters --random 5 --counters
bad_flag --index --random 5 --index x

# ---- as root, the real thing -------------------------------------------------

if [ "$(id -u)" -ne 0 ]; then
	n=$((n + 1))
	echo "ok $n - 40 random scenarios on this kernel # SKIP not root"
else
	"$TOOL" diff --random 40 --seed 20261202 --out "$tmp/real" \
		>"$tmp/real.out" 2>&1
	status=$?
	if [ "$status" -eq 4 ]; then
		# The kernel backend cannot run in this build (TSan, say).
		n=$((n + 1))
		echo "ok $n - 40 random scenarios on this kernel # SKIP $(grep -m1 '^SKIP' "$tmp/real.out")"
	else
		# VARIES (exit 5) is this machine's, reported, not failed.
		[ "$status" -eq 0 ] || [ "$status" -eq 5 ]
		tap_result $? "40 random scenarios on this kernel: $(grep -m1 ' match, ' "$tmp/real.out")"
		[ "$status" -eq 0 ] || grep -v '^MATCH' "$tmp/real.out" | diag /dev/stdin
	fi
fi

echo "1..$n"
exit $fail
