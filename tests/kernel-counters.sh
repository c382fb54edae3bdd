#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# kernel-counters.sh - `ptebatch diff --counters`: the kernel's own
# accounting (run --kstats: pins in /proc/vmstat, THP faults and splits,
# the hugepages-*kB/stats files) held to the model's, as TAP.
#
#   - no root needed: the model's kstat lines of a 64K fault, a PMD THP
#     fault, a pin and a split; a stand-in kernel side
#     (PTEBATCH_DIFF_KERNEL) whose pin count differs makes diff --counters
#     print "MISMATCH FILE: statement N (TEXT): COUNTER model M kernel K"
#     and exit 1, and one that agrees (its pgfault higher: a lower bound
#     only) a MATCH;
#   - as root, on this machine's kernel: a pin through io_uring
#     registration, a 64K mTHP fault, a PMD THP fault, PMD and folio
#     splits, each its own scenario, are MATCH on their counters too.
# Where the kernel backend cannot run (not root, a folio size this kernel
# lacks) the kernel cases are SKIP with diff's reason; in a sanitizer
# build (SAN set) they are SKIP too: the sanitizer's shadow memory,
# which the scenario processes never populate ahead (backend/
# kernel_proc.c), faults in inside the statements' windows and adds to
# the kernel's system-wide counters.
#
# Usage: BUILD=build [SAN=asan] sh tests/kernel-counters.sh   (from the top
# of the tree)

BUILD=${BUILD:-build}
TOOL=$BUILD/ptebatch
. tests/tap.sh

if [ ! -x "$TOOL" ]; then
	echo "not ok 1 - $TOOL is not built"
	echo "1..1"
	exit 1
fi

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

skip() {
	n=$((n + 1))
	echo "ok $n - $1 # SKIP $2"
}

# A pin of four 4K pages (4K folios: io_uring keeps every page's pin).
cat >"$tmp/pin.scn" <<'SCN'
P0 mmap A 16K rw nohugepage
P0 write A 0 16K value 0x11
P0 register H A 0 16K
P0 unregister H
SCN

# The counters are the machine's: with a size "always", every other
# process's faults on this machine would get such folios too and count;
# "madvise" and MADV_HUGEPAGE regions keep them to the scenario's own.
#
# One 64K folio per 64K, and two of them split by MADV_FREE/PAGEOUT of
# half of each.
cat >"$tmp/mthp.scn" <<'SCN'
mthp 64K madvise
P0 mmap A 256K rw hugepage
P0 write A 0 256K value 0x11
P0 madvise A 0 32K free
P0 madvise A 64K 32K pageout
observe
SCN

# A PMD THP fault, its PMD split by a partial munmap.
cat >"$tmp/pmd.scn" <<'SCN'
mthp 2M madvise
P0 mmap A 4M rw hugepage
P0 write A 2M 2M value 0x22
P0 munmap A 2M 64K
observe
SCN

# A PMD THP whose folio is split: MADV_PAGEOUT of part of it.
cat >"$tmp/pmd-split.scn" <<'SCN'
mthp 2M madvise
P0 mmap A 4M rw hugepage
P0 write A 0 2M value 0x33
P0 madvise A 0 64K pageout
observe
SCN

# An O_DIRECT write (a read-only pin) of 16K a fork shares: GUP-fast
# finds the pages must be unshared, drops them, and the slow path
# unshares and pins - 5 pins acquired and released.  The kernel asks for
# the pages once per extent of the file written to: the kernel backend's
# scratch file is one extent, so the kernel's count is the model's.
cat >"$tmp/dio.scn" <<'SCN'
P0 mmap A 16K rw nohugepage
P0 write A 0 16K value 0x11
P0 fork P1
P0 dio-write A 0 16K
observe
SCN

# ---- the model's counts ----------------------------------------------

# has FILE STATEMENT-PREFIX "kstat NAME VALUE" INTENT
has() {
	awk -v st="$2" -v want="  $3" '
		/^[0-9]+ / { cur = (index($0, st) == 1) }
		cur && $0 == want { found = 1 }
		END { exit !found }' "$1"
	tap_result $? "$4"
}

"$TOOL" run --kstats "$tmp/pin.scn" >"$tmp/pin.out" 2>&1
tap_result $? "run --kstats of the model (exit $?)"
has "$tmp/pin.out" "3 P0 register" "kstat nr_foll_pin_acquired 4" \
	"model: register pins 4 pages (nr_foll_pin_acquired)"
"$TOOL" run --kstats "$tmp/dio.scn" >"$tmp/dio.out" 2>&1
has "$tmp/dio.out" "4 P0 dio-write" "kstat nr_foll_pin_acquired 5" \
	"model: a dio-write of 4 shared pages acquires 5 pins (one failed GUP-fast)"
has "$tmp/pin.out" "4 P0 unregister" "kstat nr_foll_pin_released 4" \
	"model: unregister unpins them (nr_foll_pin_released)"
"$TOOL" run --kstats "$tmp/mthp.scn" >"$tmp/mthp.out" 2>&1
has "$tmp/mthp.out" "3 P0 write" "kstat hugepages-64kB/anon_fault_alloc 4" \
	"model: four 64K folios faulted in (hugepages-64kB/anon_fault_alloc)"
has "$tmp/mthp.out" "4 P0 madvise" "kstat hugepages-64kB/split 1" \
	"model: MADV_FREE of half a 64K folio splits it (hugepages-64kB/split)"
"$TOOL" run --kstats "$tmp/pmd.scn" >"$tmp/pmd.out" 2>&1
has "$tmp/pmd.out" "3 P0 write" "kstat thp_fault_alloc 1" \
	"model: a PMD THP fault (thp_fault_alloc)"
has "$tmp/pmd.out" "3 P0 write" "kstat hugepages-2048kB/anon_fault_alloc 1" \
	"model: ... and its size's anon_fault_alloc"
has "$tmp/pmd.out" "4 P0 munmap" "kstat thp_split_pmd 1" \
	"model: a partial munmap splits the PMD (thp_split_pmd)"
"$TOOL" run "$tmp/pin.scn" >"$tmp/plain" 2>&1
! grep -q kstat "$tmp/plain"
tap_result $? "model: no kstat lines without --kstats"

# ---- diff --counters against a stand-in kernel side --------------------

# A kernel side that prints FILE, whatever it is asked.
standin() {
	cat >"$tmp/standin" <<SH
#!/bin/sh
cat >/dev/null
exec cat "$1"
SH
	chmod +x "$tmp/standin"
}

sed 's/^  kstat nr_foll_pin_released 4$/  kstat nr_foll_pin_released 3/' \
	"$tmp/pin.out" >"$tmp/pin.fewer"
standin "$tmp/pin.fewer"
PTEBATCH_DIFF_KERNEL=$tmp/standin "$TOOL" diff --counters "$tmp/pin.scn" \
	>"$tmp/diff" 2>&1
status=$?
[ "$status" -eq 1 ] && grep -qxF "MISMATCH $tmp/pin.scn: statement 4 (P0 unregister H): nr_foll_pin_released model 4 kernel 3" "$tmp/diff"
tap_result $? "diff --counters: a pin count that differs is a MISMATCH line naming it (exit $status)"
[ "$status" -eq 1 ] || sed 's/^/# /' "$tmp/diff"

PTEBATCH_DIFF_KERNEL=$tmp/standin "$TOOL" diff "$tmp/pin.scn" \
	>"$tmp/diff" 2>&1
status=$?
[ "$status" -eq 0 ] && grep -qxF "MATCH $tmp/pin.scn" "$tmp/diff"
tap_result $? "diff without --counters: the counters are not compared (exit $status)"

sed 's/^  kstat pgfault 1$/  kstat pgfault 40/' "$tmp/pin.out" >"$tmp/pin.more"
standin "$tmp/pin.more"
PTEBATCH_DIFF_KERNEL=$tmp/standin "$TOOL" diff --counters "$tmp/pin.scn" \
	>"$tmp/diff" 2>&1
status=$?
[ "$status" -eq 0 ] && grep -qxF "MATCH $tmp/pin.scn" "$tmp/diff"
tap_result $? "diff --counters: a kernel pgfault above the model's is no difference (exit $status)"
[ "$status" -eq 0 ] || sed 's/^/# /' "$tmp/diff"

# ---- on this machine's kernel -----------------------------------------

for scn in pin mthp pmd pmd-split dio; do
	if [ -n "${SAN:-}" ]; then
		skip "kernel: $scn.scn on its counters" "a $SAN build: its shadow memory faults inside the statements' windows"
		continue
	fi
	# The counters are the machine's: another process's fault in every
	# one of diff's runs is a MISMATCH; a second diff is asked then.
	for try in 1 2 3; do
		"$TOOL" diff --counters "$tmp/$scn.scn" >"$tmp/diff" 2>&1
		status=$?
		grep -q "^MISMATCH " "$tmp/diff" || break
	done
	if grep -q "^SKIP " "$tmp/diff"; then
		why=$(sed -n 's/^SKIP [^:]*: //p' "$tmp/diff" | head -n 1)
		skip "kernel: $scn.scn on its counters" "$why"
		continue
	fi
	[ "$status" -eq 0 ] && grep -qxF "MATCH $tmp/$scn.scn" "$tmp/diff"
	tap_result $? "kernel: $scn.scn matches on its counters (exit $status, diff $try)"
	[ "$status" -eq 0 ] || sed 's/^/# /' "$tmp/diff"
done

echo "1..$n"
exit "$fail"
