#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# explore-smoke.sh - `ptebatch explore` as `make check` runs it.  TAP.
#
#  1. baseline against seeds, every sequence of up to $EXPLORE_CHECK_DEPTH
#     (default 4) operations: all agree under the equivalence rules, the
#     invariants hold, and the coverage the summary reports is plausible;
#  2. the same to depth 3 with the 2M THP region (--thp: split, reuse
#     windows inside a large folio);
#  3. baseline against upstream to depth 3 under the stricter same-frames
#     rule: they differ only in fork, zap and mprotect batching, which
#     must not change a fault or a frame (test_equivalence.c, rule 4);
#  4. the search can fail: under same-frames, baseline against seeds must
#     differ (seeds' batched write-fault reuse legitimately saves faults,
#     which same-frames forbids), exit 1, and print a scenario that
#     `ptebatch run` reproduces record for record, for both variants;
#  5. the pruning checks itself (--verify-pruning) to depth 3;
#  6. --shard I/N: four shards at depth 3 together run the last depth's
#     sequences exactly once and the earlier depths each in full, and at
#     depth 4 under same-frames together find what one whole run finds:
#     the lowest-numbered finding of any shard is the whole run's, same
#     number, same scenario;
#  7. bad flags exit 2 with a message that names the flag;
#  8. the fast path (each sequence extended from its parent's checkpoint)
#     finds what the replay of every sequence from the prelude finds
#     (PTEBATCH_EXPLORE_REPLAY=1): the same depths, counts and summary at
#     depth 3, with --thp, and the same finding, numbered alike, with the
#     same reproducer, under same-frames at depth 4.
#
# Usage: BUILD=build sh tests/explore-smoke.sh   (from the top of the tree)

BUILD=${BUILD:-build}
DEPTH=${EXPLORE_CHECK_DEPTH:-4}
tool=$BUILD/ptebatch
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
. tests/tap.sh


# Show a file as TAP diagnostics, at most 60 lines.
diag() {
	sed -n '1,60s/^/# /p' "$1"
}

# The number before WORD in the summary line of file $1.
count() {
	sed -n "s/^explore: .* \([0-9][0-9]*\) $2.*/\1/p" "$1" | tail -n 1
}

# 1. The main run.
"$tool" explore --depth "$DEPTH" >"$tmp/main.out" 2>"$tmp/main.err"
status=$?
[ $status -eq 0 ] && grep -q ': all agree$' "$tmp/main.out"
tap_result $? "explore --depth $DEPTH: baseline and seeds agree (exit $status)"
[ $status -eq 0 ] || { diag "$tmp/main.out"; diag "$tmp/main.err"; }
grep '^explore: ' "$tmp/main.out" | sed 's/^/# /'
seqs=$(count "$tmp/main.out" sequences)
states=$(count "$tmp/main.out" 'distinct states')
pruned=$(count "$tmp/main.out" pruned)
levels=$(grep -c '^depth [0-9]*: ' "$tmp/main.out")
# Depth 4 covers some 65000 sequences and 24000 states (2026-12-02, with free and pageout);
# the bounds leave room for the model to change, not for a search that
# stopped early or pruned everything.
[ -n "$seqs" ] && [ -n "$states" ] && [ -n "$pruned" ] &&
	[ "$levels" -eq "$DEPTH" ] && [ "$states" -gt 1 ] &&
	[ "$pruned" -gt 0 ] && [ "$states" -lt "$seqs" ] &&
	{ [ "$DEPTH" -ne 4 ] || { [ "$seqs" -ge 20000 ] &&
				  [ "$states" -ge 5000 ]; }; }
tap_result $? "coverage is plausible: $levels depths, ${seqs:-?} sequences, ${states:-?} states, ${pruned:-?} pruned"
[ ! -s "$tmp/main.err" ]
tap_result $? "nothing on stderr when it is not a terminal"

# 2. With the PMD-mapped THP.
"$tool" explore --depth 3 --thp --quiet >"$tmp/thp.out" 2>&1
status=$?
[ $status -eq 0 ] && grep -q ': all agree$' "$tmp/thp.out" &&
	[ "$(wc -l <"$tmp/thp.out")" -eq 1 ]
tap_result $? "explore --depth 3 --thp --quiet: agree, one summary line (exit $status)"
[ $status -eq 0 ] || diag "$tmp/thp.out"

# 3. The stricter rule where it must hold.
"$tool" explore --depth 3 --variant baseline --against upstream \
	--rules same-frames --quiet >"$tmp/up.out" 2>&1
status=$?
[ $status -eq 0 ] && grep -q 'rules same-frames.*: all agree$' "$tmp/up.out"
tap_result $? "baseline and upstream print the same records (same-frames, exit $status)"
[ $status -eq 0 ] || diag "$tmp/up.out"

# 4. A difference is found, reported and reproducible.
"$tool" explore --depth 4 --rules same-frames --quiet --out "$tmp/found" \
	>"$tmp/sf.out" 2>&1
status=$?
[ $status -eq 1 ] &&
	grep -q '^explore: baseline and seeds differ (rules same-frames):$' \
		"$tmp/sf.out" &&
	grep -q '^statement [0-9]* (.*): faults: [0-9]* in baseline, [0-9]* in seeds (must be equal)' \
		"$tmp/sf.out" &&
	grep -q ': FOUND (above)$' "$tmp/sf.out"
tap_result $? "same-frames between baseline and seeds reports a fault difference, exit 1 (exit $status)"
[ $status -eq 1 ] || diag "$tmp/sf.out"
awk '/^--- scenario/ { on = 1; next } /^--- record/ { on = 0 } on && !/^---/' \
	"$tmp/sf.out" >"$tmp/found.scn"
repro=0
for v in baseline seeds; do
	awk -v v="$v" '$0 == "--- record under " v { on = 1; next }
		/^---/ { on = 0 } on' "$tmp/sf.out" >"$tmp/want-$v"
	if ! "$tool" run --variant "$v" "$tmp/found.scn" >"$tmp/got-$v" 2>&1 ||
	   ! [ -s "$tmp/want-$v" ] || ! cmp -s "$tmp/want-$v" "$tmp/got-$v"; then
		repro=1
		echo "# ptebatch run --variant $v on the reported scenario:"
		diag "$tmp/got-$v"
	fi
done
grep -q '^observe$' "$tmp/found.scn" && [ $repro -eq 0 ]
tap_result $? "the reported scenario runs and reproduces both printed records"

# ... and it is kept as a file, whose commands, printed last, reproduce
# the records the file holds as comments.
file=$(sed -n 's/^explore: the finding is in \(.*\); reproduce with$/\1/p' "$tmp/sf.out")
repro=1
if [ -n "$file" ] && [ -f "$file" ] && tail -n 2 "$tmp/sf.out" |
	sed -n 's/^  ptebatch run //p' >"$tmp/cmds" && [ "$(wc -l <"$tmp/cmds")" -eq 2 ]; then
	repro=0
	while read -r flags; do
		v=$(echo "$flags" | sed -n 's/^--variant \([^ ]*\) .*/\1/p')
		# shellcheck disable=SC2086
		"$tool" run $flags >"$tmp/got" 2>&1
		awk -v v="$v" '$0 == "# --- record under " v { on = 1; next }
			/^# ---/ { on = 0 } on { sub(/^# /, ""); print }' "$file" >"$tmp/want"
		[ -s "$tmp/want" ] && cmp -s "$tmp/want" "$tmp/got" || repro=1
	done <"$tmp/cmds"
fi
tap_result $repro "the finding is saved (${file:-no file}) and the commands printed at the end reproduce its records"

# 5. Pruning: every pruned sequence continues like the one it was pruned for.
"$tool" explore --depth 3 --verify-pruning --quiet >"$tmp/vp.out" 2>&1
status=$?
[ $status -eq 0 ] && grep -q 'continuations verified: all agree$' \
	"$tmp/vp.out" && [ "$(count "$tmp/vp.out" 'pruned continuations')" -gt 0 ]
tap_result $? "--verify-pruning --depth 3: equal keys continue alike (exit $status)"
[ $status -eq 0 ] || diag "$tmp/vp.out"

# 6. Sharding.  Per shard: its sequences, and of the last depth its own
# and all.
shard_counts() {
	sed -n 's/^explore: .*, shard [0-9]*\/[0-9]*: \([0-9]*\) sequences (\([0-9]*\) of \([0-9]*\) at depth [0-9]*).*/\1 \2 \3/p' "$1"
}
"$tool" explore --depth 3 >"$tmp/whole3.out" 2>&1
whole=$(count "$tmp/whole3.out" sequences)
whole_last=$(sed -n 's/^depth 3: \([0-9]*\) sequences.*/\1/p' "$tmp/whole3.out")
sum=0
ok=0
for i in 1 2 3 4; do
	"$tool" explore --depth 3 --shard $i/4 --quiet >"$tmp/shard$i.out" 2>&1
	status=$?
	set -- $(shard_counts "$tmp/shard$i.out")
	if [ $status -ne 0 ] || [ $# -ne 3 ] ||
	   ! grep -q ", shard $i/4: .*: all agree$" "$tmp/shard$i.out" ||
	   [ "$3" != "$whole_last" ] ||
	   [ $(($1 - $2)) -ne $((${whole:-0} - ${whole_last:-0})) ]; then
		ok=1
		echo "# shard $i/4 (exit $status):"
		diag "$tmp/shard$i.out"
	else
		sum=$((sum + $2))
	fi
done
[ -n "$whole_last" ] && [ "$whole_last" -gt 0 ] && [ $ok -eq 0 ] &&
	[ "$sum" -eq "$whole_last" ]
tap_result $? "--shard 1/4..4/4 --depth 3: the shards' depth-3 sequences add up to the whole run's ($sum of ${whole_last:-?}), earlier depths run in full"

# The whole run's finding (4. above) is the first any shard finds.
seqno() {
	sed -n 's/^--- scenario (sequence \([0-9]*\), .*/\1/p' "$1"
}
want=$(seqno "$tmp/sf.out")
best=
ok=0
for i in 1 2 3 4; do
	"$tool" explore --depth 4 --rules same-frames --shard $i/4 --quiet \
		--out "$tmp/found" >"$tmp/sfshard$i.out" 2>&1
	status=$?
	got=$(seqno "$tmp/sfshard$i.out")
	echo "# shard $i/4: exit $status, finding ${got:-none}"
	if [ $status -eq 1 ] && [ -n "$got" ]; then
		# No shard may find something before what the whole run found.
		[ "$got" -ge "${want:-0}" ] || ok=1
		if [ -z "$best" ] || [ "$got" -lt "$best" ]; then
			best=$got
			awk '/^--- scenario/ { on = 1; next } /^--- record/ { on = 0 }
				on && !/^---/' "$tmp/sfshard$i.out" >"$tmp/best.scn"
		fi
	elif [ $status -ne 0 ]; then
		ok=1
		diag "$tmp/sfshard$i.out"
	fi
done
[ -n "$want" ] && [ $ok -eq 0 ] && [ "$best" = "$want" ] &&
	cmp -s "$tmp/best.scn" "$tmp/found.scn"
tap_result $? "--shard I/4 --depth 4 --rules same-frames: the first finding of the shards is the whole run's (sequence ${best:-none} and ${want:-none}, the same scenario)"

# 7. Usage errors name the flag.
bad_flag() {
	want=$1
	shift
	"$tool" explore "$@" >"$tmp/bad.out" 2>"$tmp/bad.err"
	status=$?
	[ $status -eq 2 ] && grep -q -- "$want" "$tmp/bad.err" &&
		[ ! -s "$tmp/bad.out" ]
	tap_result $? "explore $*: exit 2 naming $want (exit $status)"
	[ $status -eq 2 ] || diag "$tmp/bad.err"
}
bad_flag '--depth' --depth 0
bad_flag '--depth' --depth many
bad_flag '--variant' --variant nosuch
bad_flag '--against' --against nosuch
bad_flag '--set' --set wp_reuse_max=1
bad_flag '--set wp_reuse_max=3' --variant seeds --set wp_reuse_max=3
bad_flag '--rules' --rules loose
bad_flag '--memory' --memory 1M
bad_flag "'--bogus'" --bogus
for v in 0/4 5/4 1/0 x 1/4097 1/ 2/4x; do
	bad_flag '--shard' --shard "$v"
done

# 8. Fast path against replay.  Times aside, the outputs are the same.
untimed() {
	sed 's/, [0-9.]* s\([,:)]\)/\1/; s/, [0-9.]* s$//' "$1"
}
same_as_replay() {
	name=$1
	shift
	"$tool" explore "$@" --out "$tmp/found" >"$tmp/fast.out" 2>&1
	fstatus=$?
	PTEBATCH_EXPLORE_REPLAY=1 "$tool" explore "$@" --out "$tmp/found" \
		>"$tmp/replay.out" 2>&1
	rstatus=$?
	untimed "$tmp/fast.out" >"$tmp/fast.cmp"
	untimed "$tmp/replay.out" >"$tmp/replay.cmp"
	[ $fstatus -eq $rstatus ] && [ -s "$tmp/fast.cmp" ] &&
		cmp -s "$tmp/fast.cmp" "$tmp/replay.cmp"
	tap_result $? "explore $*: the fast path prints what the replay prints, $name (exit $fstatus and $rstatus)"
	if ! cmp -s "$tmp/fast.cmp" "$tmp/replay.cmp"; then
		diff "$tmp/replay.cmp" "$tmp/fast.cmp" | sed -n '1,40s/^/# /p'
	fi
}
same_as_replay "every depth's counts" --depth 3
same_as_replay "with the THP region" --depth 3 --thp
same_as_replay "the same finding and reproducer" --depth 4 \
	--rules same-frames
grep -q '^--- scenario (sequence ' "$tmp/fast.out"
tap_result $? "... and that run found something to compare"
same_as_replay "with one shard of four" --depth 3 --shard 3/4

echo "1..$n"
exit $fail
