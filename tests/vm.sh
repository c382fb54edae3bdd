#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# vm.sh - kernels of our own: `--backend vm` against a kernel built into
# the cache (scripts/kernel-build, `make kernel`), as TAP.
#
# Without a built x86_64 kernel (or QEMU, or root) every test is a SKIP
# with the reason: building one takes 20+ minutes, so CI does not, and
# `make check-vm` builds what is missing and runs this with VM_FULL=1
# (then the whole suite is diffed in one guest as well).
#
# What is held: one boot for a whole diff, the guest's verdicts (MATCH
# on scenarios that need the scratch disk, io_uring, pipes), errors that
# name the kernel and the scenario and keep the console log when QEMU is
# killed or stops answering, nothing left behind after SIGTERM, --time
# counted in instructions, the kernel's function counts and accounting
# against the model's, and an arm64 guest of each granule built (its own
# SKIP without one).
#
# Usage: BUILD=build sh tests/vm.sh   (from the top of the tree)

BUILD=${BUILD:-build}
TOOL=$BUILD/ptebatch
. tests/tap.sh

cache=${PTEBATCH_CACHE:-$HOME/.cache/ptebatch}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

why=
if [ "$(id -u)" -ne 0 ]; then
	why="not root (the guest's kernel backend writes THP sysfs; QEMU's 9p root needs it)"
elif [ -n "${SAN:-}" ]; then
	why="SAN=$SAN: the guest runs the plain build"
elif ! command -v qemu-system-x86_64 >/dev/null 2>&1; then
	why="no qemu-system-x86_64 (scripts/install-deps --vm)"
elif ! "$TOOL" vm list 2>/dev/null | grep -q ' x86_64 '; then
	why="no x86_64 kernel built in $cache/kernels (make kernel: 20+ minutes)"
fi
if [ -n "$why" ]; then
	for t in "vm list" "one boot for a diff" "guest verdicts" \
		"QEMU killed" "guest hung" "SIGTERM" "SIGKILL" \
		"--time in instructions" \
		"--count" "--count of an untraceable function" \
		"diff --functions" "diff --counters --functions" \
		"bench replay" "calibrate --backend vm" "predict-seeds" \
		"unknown kernel" \
		"arm64-4k guest" \
		"arm64-16k guest" "arm64-64k guest" \
		"vm selftests --only seeds_hazards on 7.3" \
		"vm selftests --only seeds_hazards on 7.3+seeds" \
		"vm selftests --only seeds_hazards on 7.3-arm64-4k"; do
		skip "$t" "$why"
	done
	echo "1..$n"
	exit 0
fi

# Is process $1 gone (or a zombie waiting for its new parent to reap it)?
gone() {
	[ -z "$1" ] || ! ps -o stat= -p "$1" 2>/dev/null | grep -qv '^Z'
}

# await_qemu PATTERN: the QEMU of the diff $diffpid into $q, once its
# output ($tmp/out) has a line matching PATTERN ('' : once it runs); at
# most a minute.
await_qemu() {
	q=
	for i in $(seq 1 600); do
		q=$(pgrep -P "$diffpid" qemu-system 2>/dev/null | head -n 1)
		[ -n "$q" ] && { [ -z "$1" ] || grep -q "$1" "$tmp/out"; } && return
		sleep 0.1
	done
}

S=tests/scenarios
picks="$S/cow-basic-4k.scn $S/dio-read-partial-64k.scn $S/cow-mprotect-64k.scn"
for f in $S/iouring-fork-64k.scn $S/vmsplice-pin-64k.scn; do
	[ -f "$f" ] && picks="$picks $f"
done

# 1. The cache as vm list shows it.
"$TOOL" vm list >"$tmp/list" 2>&1
tap_result $? "vm list shows the built kernels"
grep -q "^NAME " "$tmp/list" || { diag "$tmp/list"; tap_result 1 "vm list: a header"; }

# 2. One boot for the whole diff, MATCH on each.
# shellcheck disable=SC2086
"$TOOL" diff --backend vm $picks >"$tmp/out" 2>"$tmp/err"
status=$?
boots=$(grep -c '^# vm:.* booted in ' "$tmp/out")
[ "$status" -eq 0 ] && [ "$boots" -eq 1 ]
r=$?
[ $r -eq 0 ] || { diag "$tmp/out"; diag "$tmp/err"; }
tap_result $r "one boot for a diff of $(echo $picks | wc -w) scenarios (exit $status, $boots boot)"
nmatch=$(grep -c '^MATCH ' "$tmp/out")
[ "$nmatch" -eq "$(echo $picks | wc -w)" ]
tap_result $? "guest verdicts: $nmatch MATCH (scratch disk, io_uring, pipes)"

# 3. QEMU killed under a diff: an error naming the kernel and the
# scenario, the console log kept and named, no verdict, nothing running.
ls "$cache/logs" >"$tmp/logs-before" 2>/dev/null
"$TOOL" diff --backend vm $S/cow-basic-4k.scn $S/cow-basic-2m-pte.scn \
	$S/cow-basic-1m.scn >"$tmp/out" 2>"$tmp/err" &
diffpid=$!
await_qemu '^MATCH '
[ -n "$q" ] && kill -KILL "$q"
wait "$diffpid"
status=$?
log=$(sed -n 's/.*console log is kept in \([^ ]*\.console\).*/\1/p' "$tmp/out" | head -n 1)
[ "$status" -eq 1 ] && grep -q '^ERROR .*: the guest (kernel .*) stopped while running ' "$tmp/out" &&
	! grep -q '^MISMATCH' "$tmp/out" && [ -n "$log" ] && [ -f "$log" ]
r=$?
[ $r -eq 0 ] || { diag "$tmp/out"; diag "$tmp/err"; }
tap_result $r "QEMU killed: ERROR naming kernel and scenario, console log kept"
[ -n "$log" ] && rm -f "$log"

# 4. A guest that stops answering: hung, after PTEBATCH_VM_TIMEOUT.
PTEBATCH_VM_TIMEOUT=3 "$TOOL" diff --backend vm $S/cow-basic-4k.scn \
	$S/cow-basic-1m.scn >"$tmp/out" 2>"$tmp/err" &
diffpid=$!
await_qemu 'booted in'
[ -n "$q" ] && kill -STOP "$q"
wait "$diffpid"
status=$?
log=$(sed -n 's/.*console log is kept in \([^ ]*\.console\).*/\1/p' "$tmp/out" | head -n 1)
[ "$status" -eq 1 ] && grep -q 'hung (no answer in time) running' "$tmp/out" &&
	gone "$q"
r=$?
[ $r -eq 0 ] || { diag "$tmp/out"; diag "$tmp/err"; }
tap_result $r "guest hung: ERROR after the timeout, QEMU killed"
[ -n "$log" ] && rm -f "$log"

# 5. SIGTERM: QEMU stopped, the run directory and the log removed.
"$TOOL" diff --backend vm $S/cow-basic-4k.scn >"$tmp/out" 2>"$tmp/err" &
diffpid=$!
await_qemu ''
sleep 1
kill -TERM "$diffpid"
wait "$diffpid"
status=$?
sleep 0.5
left=$(find "$cache/run" -mindepth 1 2>/dev/null | head -n 3)
[ "$status" -eq 143 ] && [ -z "$left" ] && gone "$q"
r=$?
[ $r -eq 0 ] || echo "# status $status, left: $left"
tap_result $r "SIGTERM: QEMU gone, nothing left in $cache/run"

# 5b. SIGKILL, which no handler sees: QEMU dies with it (PR_SET_PDEATHSIG),
# and the next boot removes the run directory it left.
"$TOOL" diff --backend vm $S/cow-basic-4k.scn $S/cow-basic-1m.scn \
	$S/cow-basic-64k.scn >"$tmp/out" 2>"$tmp/err" &
diffpid=$!
await_qemu '^MATCH '
kill -KILL "$diffpid"
wait "$diffpid"
sleep 1
stale=$(find "$cache/run" -mindepth 1 -maxdepth 1 -name "boot-$diffpid-*" | head -n 1)
"$TOOL" diff --backend vm:9.9-nosuch $S/cow-basic-4k.scn >/dev/null 2>&1
"$TOOL" diff --backend vm $S/cow-basic-4k.scn >"$tmp/out2" 2>&1
gone "$q" && [ -n "$stale" ] && [ ! -e "$stale" ] && grep -q '^MATCH ' "$tmp/out2"
r=$?
[ $r -eq 0 ] || echo "# qemu $q, stale '$stale'"
tap_result $r "SIGKILL: QEMU dies with ptebatch, the next boot removes what was left"
rm -f "$cache"/logs/*-"$diffpid".console

# 6. --time in a guest: instructions, labelled so.
"$TOOL" run --backend vm --time --reps 1 $S/cow-basic-4k.scn >"$tmp/out" 2>"$tmp/err"
status=$?
[ "$status" -eq 0 ] && grep -q ': faults [0-9]* insns [0-9][0-9]*$' "$tmp/out" &&
	! grep -q ' time [0-9]' "$tmp/out"
r=$?
[ $r -eq 0 ] || { diag "$tmp/out"; diag "$tmp/err"; }
tap_result $r "run --backend vm --time: 'insns N' on each statement, no 'time'"

# 7. --count: the guest kernel's own count of a fault, by the process.
printf 'P0 mmap A 16K rw\nP0 write A 0 16K value 0x11\n' >"$tmp/four.scn"
"$TOOL" run --backend vm --count do_anonymous_page "$tmp/four.scn" >"$tmp/out" 2>"$tmp/err"
status=$?
[ "$status" -eq 0 ] && [ "$(grep -c '^  count do_anonymous_page 0$' "$tmp/out")" -eq 1 ] &&
	[ "$(grep -c '^  count do_anonymous_page 4$' "$tmp/out")" -eq 1 ]
r=$?
[ $r -eq 0 ] || { diag "$tmp/out"; diag "$tmp/err"; }
tap_result $r "run --backend vm --count: 4 write faults are 4 do_anonymous_page calls, the mmap none"
"$TOOL" run --backend vm --count no_such_function_here "$tmp/four.scn" >"$tmp/out" 2>"$tmp/err"
status=$?
[ "$status" -eq 4 ] && grep -q "no_such_function_here: this kernel cannot trace it" "$tmp/err"
tap_result $? "run --backend vm --count of a function the kernel cannot trace: SKIP, named"

# 8. diff --functions: a table that says how many statements agree.
"$TOOL" diff --backend vm --functions "$tmp/four.scn" $S/cow-basic-4k.scn >"$tmp/out" 2>"$tmp/err"
status=$?
[ "$status" -eq 0 ] && grep -q '^#   do_anonymous_page .* statements agree' "$tmp/out"
r=$?
[ $r -eq 0 ] || { diag "$tmp/out"; diag "$tmp/err"; }
tap_result $r "diff --functions: the agreement table"
"$TOOL" diff --backend vm --counters --functions "$tmp/four.scn" >"$tmp/out" 2>"$tmp/err"
status=$?
[ "$status" -eq 0 ] &&
	grep -q '^#   do_anonymous_page .* 1 of 1 statements agree' "$tmp/out" &&
	grep -q '^#   pgfault .* statements agree' "$tmp/out"
r=$?
[ $r -eq 0 ] || { diag "$tmp/out"; diag "$tmp/err"; }
tap_result $r "diff --counters --functions: both tables, the write of four faults counted by both"

# 9. bench replay --backend vm: the guest's rows come back into --json.
"$TOOL" bench replay "$tmp/four.scn" --backend vm --reps 1 \
	--json "$tmp/rows.json" >"$tmp/out" 2>"$tmp/err"
status=$?
[ "$status" -eq 0 ] && grep -q '"backend":"kernel"' "$tmp/rows.json" &&
	grep -q '"machine":"QEMU' "$tmp/rows.json" &&
	! grep -v '"kernel":"7\.3\.[0-9][^"]*-x86_64-' "$tmp/rows.json"
r=$?
[ $r -eq 0 ] || { diag "$tmp/out"; diag "$tmp/err"; }
tap_result $r "bench replay --backend vm: the guest's kernel rows in --json, its machine and kernel named"

# 9b. calibrate --backend vm: the guest takes the samples (its
# instructions), the host fits them; the calibration names the kernel
# and its unit, and predict prints instructions.
"$TOOL" calibrate --backend vm --quick --samples "$tmp/vm.samples" \
	-o "$tmp/vm.json" calibrate/4k-256k.scn calibrate/64k-256k.scn \
	>"$tmp/out" 2>"$tmp/err"
status=$?
[ "$status" -eq 0 ] && grep -q '"unit": "insns"' "$tmp/vm.json" &&
	grep -q '"kernel": "vm:7\.3\.[0-9]*-x86_64-' "$tmp/vm.json" &&
	grep -q '^scenario stmt family size insns ' "$tmp/vm.samples" &&
	grep -q '^4k-256k.scn [0-9]* [a-z]* 4k [0-9]* ' "$tmp/vm.samples" &&
	"$TOOL" predict --calibration "$tmp/vm.json" calibrate/4k-256k.scn |
	grep -q '^2 P0 .* predicted-insns [0-9]*$'
r=$?
[ $r -eq 0 ] || { diag "$tmp/out"; diag "$tmp/err"; }
tap_result $r "calibrate --backend vm: samples in guest instructions, the calibration names vm:KERNEL and insns"

# 9c. scripts/predict-seeds: a calibration of 7.3 held to 7.3+seeds.
if ! "$TOOL" vm list 2>/dev/null | grep -q '^7\.3\.[0-9]*+seeds-x86_64-'; then
	skip "predict-seeds" "no 7.3+seeds x86_64 kernel built (make kernel KERNEL_PATCHES=kernel/patches/seeds)"
elif ! command -v python3 >/dev/null 2>&1; then
	skip "predict-seeds" "no python3"
else
	python3 scripts/predict-seeds --tool "$TOOL" --calibration \
		calibrate/vm-7.3-x86_64.json --no-bench --reps 1 \
		calibrate/4k-256k.scn >"$tmp/out" 2>"$tmp/err"
	status=$?
	[ "$status" -eq 0 ] &&
		grep -q '^statements within 10% (patched, seeds prediction): [0-9]* of [1-9]' "$tmp/out" &&
		grep -q '^  seeds ratio (patched/base): measured ' "$tmp/out"
	r=$?
	[ $r -eq 0 ] || { diag "$tmp/out"; diag "$tmp/err"; }
	tap_result $r "predict-seeds: 4k-256k on 7.3 and 7.3+seeds against its predictions"
fi

# 10. A kernel that is not built: SKIP (exit 4), named.
"$TOOL" diff --backend vm:9.9-nosuch $S/cow-basic-4k.scn >"$tmp/out" 2>"$tmp/err"
status=$?
[ "$status" -eq 4 ] && grep -q "no built kernel is '9.9-nosuch'" "$tmp/err"
tap_result $? "--backend vm:9.9-nosuch: exit 4, named"

# 11. arm64 guests, one per granule built: the arm64 model of that
# granule against the kernel, on the suite's granule-* scenarios (in 64K
# units, so that every granule parses them: a 2M folio is a PMD on 4K
# pages and one contpte block of PTEs on 16K and 64K); on 4K also a split
# PMD's MADV_FREE (the split's mprotect round trip must leave the blocks
# folded) and 64K folios' COW.
for g in 4k 16k 64k; do
	name=$("$TOOL" vm list 2>/dev/null |
	       awk -v g=$g '$3 == "arm64" && $4 == g && $NF == "-" { print $1; exit }')
	t="arm64-$g guest: the arm64-$g model's records"
	if [ -z "$name" ]; then
		skip "$t" "no arm64 $g kernel built (make kernel KERNEL_ARCH=arm64 KERNEL_GRANULE=$g: 30+ minutes)"
		continue
	elif ! command -v qemu-system-aarch64 >/dev/null 2>&1; then
		skip "$t" "no qemu-system-aarch64 (scripts/install-deps --vm)"
		continue
	elif [ ! -x "$BUILD/arm64-$g/ptebatch" ]; then
		skip "$t" "no arm64-$g model built (make ARCH=arm64-$g)"
		continue
	elif [ ! -f "$cache/initramfs/arm64-$g.cpio.gz" ]; then
		skip "$t" "no arm64 root for the guest (make cross-arm64)"
		continue
	fi
	files=$(echo $S/granule-*.scn)
	[ $g = 4k ] && files="$files $S/free-pageout-2m-pte.scn $S/cow-basic-64k.scn"
	# shellcheck disable=SC2086 # the file list splits on purpose
	"$TOOL" diff --arch arm64-$g --backend "vm:$name" --functions $files \
		>"$tmp/out" 2>"$tmp/err"
	status=$?
	# contpte_convert is compared on every statement but a fork or a
	# split (the "*"): a kernel that converts where the model does not
	# disagrees too.
	[ "$status" -eq 0 ] && ! grep -q '^MISMATCH\|^ERROR' "$tmp/out" &&
		grep -q '^#   contpte_convert  *~ contpte_convert \* .* statements agree (100.0%)$' "$tmp/out"
	r=$?
	[ $r -eq 0 ] || { diag "$tmp/out"; diag "$tmp/err"; }
	tap_result $r "$t: MATCH, contpte_convert counted on every statement but forks and splits, all agree"
done

# 12. kernel/selftests' seeds_hazards in a guest of each kind built: the
# newest unpatched x86_64 kernel, the newest built with a series
# directory named seeds (kernel/patches/seeds), arm64-4k (its
# own SKIP without one): fail:0 error:0, at least one case run (a guest
# without large folios would SKIP them all), and nothing in the kernel's
# log.  The first run on a kernel builds its selftests (minutes, -j1).
seeds_hazards() {
	"$TOOL" vm selftests "$1" --only seeds_hazards >"$tmp/out" 2>"$tmp/err"
	status=$?
	[ "$status" -eq 0 ] &&
		awk '$1 == "seeds_hazards" && $2 > 0 && $3 == 0 && $7 == 0 { ok = 1 }
		     END { exit !ok }' "$tmp/out" &&
		grep -q '^# kernel log: no WARNING' "$tmp/out"
	r=$?
	[ $r -eq 0 ] || { diag "$tmp/out"; diag "$tmp/err"; }
	tap_result $r "vm selftests --only seeds_hazards on $1: fail:0 error:0, a clean kernel log"
}
for spec in 7.3 7.3+seeds 7.3-arm64-4k; do
	name=$("$TOOL" vm list 2>/dev/null | awk -v s="$spec" '
		{ arch = s ~ /arm64/ ? "arm64" : "x86_64"; seeds = s ~ /seeds/ }
		$3 == arch && $4 == "4k" && (seeds ? $NF ~ /\/seeds$/ : $NF == "-") { print $1; exit }')
	if [ -z "$name" ]; then
		skip "vm selftests --only seeds_hazards on $spec" "no $spec kernel built"
	elif [ "$spec" = 7.3-arm64-4k ] && ! command -v qemu-system-aarch64 >/dev/null 2>&1; then
		skip "vm selftests --only seeds_hazards on $spec" "no qemu-system-aarch64 (scripts/install-deps --vm)"
	elif [ "$spec" = 7.3-arm64-4k ] && [ ! -f "$cache/initramfs/arm64-4k.cpio.gz" ]; then
		skip "vm selftests --only seeds_hazards on $spec" "no arm64 root for the guest (make cross-arm64)"
	elif [ "$spec" = 7.3-arm64-4k ] && ! command -v aarch64-linux-gnu-gcc >/dev/null 2>&1; then
		skip "vm selftests --only seeds_hazards on $spec" "no aarch64-linux-gnu-gcc (Debian package gcc-aarch64-linux-gnu)"
	else
		seeds_hazards "$name"
	fi
done

if [ "${VM_FULL:-0}" = 1 ]; then
	"$TOOL" diff --backend vm $S/*.scn >"$tmp/out" 2>"$tmp/err"
	status=$?
	grep -v '^MATCH ' "$tmp/out" | sed 's/^/# /'
	tap_result $status "the suite in one guest: $(tail -n 1 "$tmp/out")"
	name=$("$TOOL" vm list 2>/dev/null |
	       awk '$3 == "arm64" && $4 == "4k" && $NF == "-" { print $1; exit }')
	if [ -n "$name" ] && [ -x "$BUILD/arm64-4k/ptebatch" ] &&
	   [ -f "$cache/initramfs/arm64-4k.cpio.gz" ]; then
		"$TOOL" diff --arch arm64-4k --backend "vm:$name" $S/*.scn \
			>"$tmp/out" 2>"$tmp/err"
		status=$?
		grep -v '^MATCH ' "$tmp/out" | sed 's/^/# /'
		tap_result $status "the suite in one arm64-4k guest: $(tail -n 1 "$tmp/out")"
	else
		skip "the suite in one arm64-4k guest" "no arm64 4k kernel, model or root built"
	fi
fi
echo "1..$n"
exit $fail
