#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# run-all.sh - run every test program in $BUILD/tests/, the scenario
# tests and the kernel diff, show their TAP output, and sum it up.
#
# Each program's output follows a "# NAME" header.  Lines "ok ..." count as
# passed, "not ok ..." as failed, "ok ... # SKIP ..." as skipped (never as
# passed).  A program that exits non-zero without printing "not ok" counts
# as one more failure, so a crash is never silent.  The last line is
# "N passed, N failed, N skipped"; the status is 1 if anything failed.
#
# A program still running after $TEST_TIMEOUT seconds (default 600) is
# stopped and counted as failed, so one hung test cannot hang `make check`.
#
# Usage: BUILD=build sh tests/run-all.sh   (from the top of the tree)

BUILD=${BUILD:-build}
TEST_TIMEOUT=${TEST_TIMEOUT:-600}
tmp=$(mktemp) || exit 1
trap 'rm -f "$tmp"' EXIT INT TERM

passed=0
failed=0
skipped=0

# Count the TAP lines of $tmp and report a silent bad exit of test $1.
tally() {
	name=$1
	status=$2
	p=$(grep -c '^ok ' "$tmp")
	s=$(grep -ci '^ok .*# *skip' "$tmp")
	f=$(grep -c '^not ok' "$tmp")
	passed=$((passed + p - s))
	skipped=$((skipped + s))
	failed=$((failed + f))
	if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - $name exited with status $status"
		failed=$((failed + 1))
	fi
}

# Run test $1, the command "$2 ...", its output to stdout and $tmp.
run_test() {
	name=$1
	shift
	echo "# $name"
	if command -v timeout >/dev/null 2>&1; then
		timeout "$TEST_TIMEOUT" "$@" >"$tmp" 2>&1
	else
		"$@" >"$tmp" 2>&1
	fi
	status=$?
	cat "$tmp"
	if [ "$status" -eq 124 ] && command -v timeout >/dev/null 2>&1; then
		echo "# $name stopped after ${TEST_TIMEOUT}s"
	fi
	tally "$name" "$status"
}

for t in $(ls "$BUILD/tests" 2>/dev/null | LC_ALL=C sort); do
	path=$BUILD/tests/$t
	[ -f "$path" ] && [ -x "$path" ] || continue
	run_test "$t" "$path"
done
# The other architectures' builds (make tests makes them): equivalence,
# contpte, stress, placement (where the address space ends) and explore
# on each, and the torn-read test on x86-pae, the one architecture that
# reads a PTE in two halves.  On 64K pages the PMD is 512M, so explore
# stays at depth 2 there.
for arch in x86-pae arm64-4k arm64-16k arm64-64k; do
	dir=$BUILD/$arch
	[ -x "$dir/ptebatch" ] || continue
	checks="test_equivalence test_contpte test_stress test_place"
	# Under ThreadSanitizer only what runs threads is worth its time.
	[ "${SAN:-}" = tsan ] && checks=test_stress
	for t in $checks; do
		[ -x "$dir/tests/$t" ] && run_test "$arch/$t" "$dir/tests/$t"
	done
	[ "${SAN:-}" = tsan ] && continue
	depth=3
	[ "$arch" = arm64-64k ] && depth=2
	run_test "$arch/explore" sh -c "out=\$(\"$dir/ptebatch\" explore --depth $depth --quiet) && echo \"ok 1 - explore --depth $depth on $arch: \$(echo \"\$out\" | tail -1)\" || { echo \"\$out\"; echo \"not ok 1 - explore --depth $depth on $arch\"; }"
done
[ -x "$BUILD/x86-pae/tests/test_torn_read" ] &&
	run_test x86-pae/test_torn_read "$BUILD/x86-pae/tests/test_torn_read"

run_test scenario-tests env BUILD="$BUILD" sh tests/scenario-tests.sh
# The arm64 guests' static binaries (make cross-arm64, not built here)
# under qemu-aarch64-static: the records of this machine's arm64 builds.
run_test cross-arm64 env BUILD="$BUILD" sh tests/cross-arm64.sh
run_test bench-smoke env BUILD="$BUILD" sh tests/bench-smoke.sh
run_test bench-replay env BUILD="$BUILD" sh tests/bench-replay.sh
# The benchmark figures: ptebatch plot of the rows in docs/, bench --plot.
run_test figures env BUILD="$BUILD" sh tests/figures.sh
# The drawings given hostile text (issue 24, points 4, 7, 8): nothing a
# row, a flag or a file name holds runs or is expanded, XML stays well-formed.
run_test hostile-drawings env BUILD="$BUILD" sh tests/hostile-drawings.sh
# explore runs one thread: under ThreadSanitizer (about 14 times slower
# here: depth 4 took 340 s) depth 3 runs every path of the script; the
# plain and ASan runs go to depth 4.
explore_depth=4
[ "${SAN:-}" = tsan ] && explore_depth=3
run_test explore-smoke env BUILD="$BUILD" \
	EXPLORE_CHECK_DEPTH="${EXPLORE_CHECK_DEPTH:-$explore_depth}" \
	sh tests/explore-smoke.sh
# docs/ARCHITECTURE.md names every file and every list of the advices.
run_test architecture-doc sh tests/architecture-doc.sh
# The build names what is missing and rebuilds nothing twice.
run_test build-checks env BUILD="$BUILD" SAN="${SAN:-}" sh tests/build-checks.sh
# Bad input to every command and flag: refused in one line, never a crash.
run_test cli-errors env BUILD="$BUILD" SAN="${SAN:-}" sh tests/cli-errors.sh
# run --svg: the drawing's cells against the record, pins, copies,
# folding, escaping, bad paths; as root the kernel's drawing too.
run_test run-svg env BUILD="$BUILD" SAN="${SAN:-}" sh tests/run-svg.sh
# diff and the kernel backend under signals, dying processes, host
# limits and inputs that can be read only once.
run_test robustness env BUILD="$BUILD" SAN="${SAN:-}" sh tests/robustness.sh
# diff --random: the generator, the shrinker on a planted difference and
# the flags with a stand-in kernel side; as root, random scenarios here.
run_test random-diff env BUILD="$BUILD" SAN="${SAN:-}" sh tests/random-diff.sh
# A kernel that varies, or is configured otherwise, is no model bug:
# VARIES against MISMATCH, the host line, the zero page, own faults.
run_test host-varies env BUILD="$BUILD" SAN="${SAN:-}" sh tests/host-varies.sh
# The oracle: every scenario on this machine's kernel against the model.
# It skips (with the reason) where the kernel backend cannot run.
run_test kernel-diff env BUILD="$BUILD" sh tests/kernel-diff.sh
# run --backend kernel --time: the field on every statement, the counts
# unchanged, the record still comparable (no timed assertions).
run_test kernel-time env BUILD="$BUILD" sh tests/kernel-time.sh
# diff --counters: the kernel's own accounting (pins, THP faults and
# splits per size) held to the model's; as root, on this kernel.
run_test kernel-counters env BUILD="$BUILD" SAN="${SAN:-}" sh tests/kernel-counters.sh
# A fuzz harness's input through `run --fuzz`; fuzz/run.sh prints that
# command for what a failing harness kept.
run_test fuzz-repro env BUILD="$BUILD" sh tests/fuzz-repro.sh
# calibrate and predict: bad input, predictions, refits; --quick as root.
run_test calibrate env BUILD="$BUILD" sh tests/calibrate.sh
# Hostile input: every reader's bound against /dev/zero, pipes and sparse
# files, out-of-range flags and files, /tmp left clean, another CPU's
# calibration.
run_test hostile-input env BUILD="$BUILD" SAN="${SAN:-}" sh tests/hostile-input.sh
# The recorder: converter on stored streams; as root, real recordings.
run_test record env BUILD="$BUILD" SAN="${SAN:-}" sh tests/record.sh
# What a newcomer meets first: commands as root runs them, what the
# benchmarks' verdicts mean, the licence on every source file.
run_test newcomer env BUILD="$BUILD" sh tests/newcomer.sh
# The machine's state around record and the kernel backend (tracefs
# mounts and instances, THP knobs, the lock between ptebatch processes)
# under concurrency, signals, SIGKILL and ptebatch run under record.
run_test hostile-state env BUILD="$BUILD" SAN="${SAN:-}" sh tests/hostile-state.sh
# Output files: every output flag of every command given a device, a
# FIFO, a link, a missing directory, a failing and a stopped run
# (lib/outfile.h's rule); record's bound; make bench leaves docs/ alone.
run_test hostile-files env BUILD="$BUILD" sh tests/hostile-files.sh

# Kernels of our own: --backend vm in a QEMU guest of a kernel built into
# the cache (make kernel); each test a SKIP with the reason without one.
run_test vm env BUILD="$BUILD" SAN="${SAN:-}" sh tests/vm.sh

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
