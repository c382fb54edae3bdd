#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# fuzz-repro.sh - a fuzz harness's input replayed by the tool
# (`ptebatch run --fuzz NAME FILE`), and fuzz/run.sh printing that
# command for every input a failing harness kept, as TAP.
#
#   - every harness's corpus inputs pass through `run --fuzz` (exit 0,
#     "ok: FILE passes"), as they pass fuzz_replay_NAME;
#   - bad usage (an unknown harness, a missing file, another flag beside
#     --fuzz) exits 2 naming it;
#   - fuzz/run.sh with a stand-in harness that keeps a crash and fails
#     exits 1 and ends with "ptebatch run --fuzz NAME THAT-FILE", and that
#     command, run, replays the kept input.
#
# Usage: BUILD=build sh tests/fuzz-repro.sh   (from the top of the tree)

BUILD=${BUILD:-build}
TOOL=$BUILD/ptebatch
. tests/tap.sh

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

for name in scenario ops events calib; do
	input=$(ls fuzz/corpus/$name | head -1)
	"$TOOL" run --fuzz $name "fuzz/corpus/$name/$input" >"$tmp/out" 2>"$tmp/err"
	status=$?
	[ "$status" -eq 0 ] && grep -q "^ok: fuzz/corpus/$name/$input passes" "$tmp/out"
	tap_result $? "run --fuzz $name fuzz/corpus/$name/$input passes (exit $status)"
	[ "$status" -eq 0 ] || sed 's/^/# /' "$tmp/err" | tail -5
done

usage() {
	name=$1
	what=$2
	shift 2
	"$TOOL" "$@" >"$tmp/out" 2>"$tmp/err"
	status=$?
	[ "$status" -eq 2 ] && head -n 1 "$tmp/err" | grep -qF -- "$what" &&
		[ ! -s "$tmp/out" ]
	tap_result $? "$name: exit 2 naming $what (exit $status)"
}
usage "an unknown harness" "'nosuch'" run --fuzz nosuch examples/cow-64k.scn
usage "a missing input" "$tmp/absent" run --fuzz ops "$tmp/absent"
usage "--fuzz with --variant" "--fuzz NAME FILE" \
	run --fuzz scenario --variant seeds examples/cow-64k.scn
usage "--fuzz with --backend kernel" "--fuzz NAME FILE" \
	run --backend kernel --fuzz scenario examples/cow-64k.scn

# A stand-in fuzzer: keeps its "crash" (a scenario) and fails, as
# libFuzzer does with -artifact_prefix.
mkdir -p "$tmp/fb"
cat >"$tmp/fb/fuzz_scenario" <<'STANDIN'
#!/bin/sh
for arg; do
	case $arg in
	-artifact_prefix=*) prefix=${arg#-artifact_prefix=} ;;
	esac
done
cp examples/cow-64k.scn "${prefix}crash-0123abcd"
exit 1
STANDIN
chmod +x "$tmp/fb/fuzz_scenario"
FUZZ_TIME=1 FUZZ_BUILD="$tmp/fb" REPRO_TOOL="$TOOL" sh fuzz/run.sh scenario \
	>"$tmp/runout" 2>&1
status=$?
want="$TOOL run --fuzz scenario $tmp/fb/crashes/scenario-crash-0123abcd"
[ "$status" -eq 1 ] && tail -n 1 "$tmp/runout" | grep -qxF "  $want"
tap_result $? "fuzz/run.sh ends with the command reproducing the kept input (exit $status)"
[ "$status" -eq 1 ] || sed 's/^/# /' "$tmp/runout"
$want >"$tmp/out" 2>&1
tap_result $? "that command runs the kept input through the harness"
rm -rf "$tmp/fb/corpus"

echo "1..$n"
exit "$fail"
