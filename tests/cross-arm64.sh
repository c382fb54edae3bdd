#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# cross-arm64.sh - the static aarch64 ptebatch of the arm64 guests (make
# cross-arm64) under qemu-aarch64-static, held to this machine's build of
# the same model, as TAP.
#
# The model does not depend on the CPU it runs on: the aarch64 binary of
# a granule must print, byte for byte, the record (and exit status and
# messages) of `make ARCH=arm64-GRANULE` built here.  That checks the
# cross build itself (its compiler, C library and static link), not the
# arm64 kernel: that is for a guest (tests/vm.sh).
#   - $(BUILD)/cross/arm64-4k: suite scenarios of COW after fork and of
#     mprotect (splits, merges, round trips, a PMD-mapped THP);
#   - each granule: a scenario in sizes every granule takes (fork, COW,
#     mprotect, dontneed), and a 4K-only scenario refused the same way.
# Nothing is built here; without a cross binary, its host twin or
# qemu-aarch64-static (Debian package qemu-user-static) each test is a
# SKIP with the reason.
#
# Usage: BUILD=build sh tests/cross-arm64.sh   (from the top of the tree)

BUILD=${BUILD:-build}
QEMU=${QEMU_AARCH64:-qemu-aarch64-static}
. tests/tap.sh

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Fork, a COW in each process, mprotect of part of a region and back
# (split, merge), dontneed: 256K is a whole number of pages of every
# granule, and no mTHP size is named (the granules offer other ones).
cat >"$tmp/granules.scn" <<'EOF'
P0 mmap A 256K rw nohugepage
P0 write A 0 256K value 0x11
P0 fork P1
P1 write A 0 64K value 0x22
P0 mprotect A 64K 64K r
P0 write A 64K 64K value 0x33
observe
P0 mprotect A 64K 64K rw
P0 write A 64K 64K value 0x33
P1 madvise A 128K 64K dontneed
observe
EOF

# Why the pair for GRANULE cannot run, or nothing.
unavailable() {
	if ! command -v "$QEMU" >/dev/null 2>&1; then
		echo "no $QEMU (Debian package qemu-user-static)"
	elif [ ! -x "$BUILD/cross/arm64-$1/ptebatch" ]; then
		echo "no $BUILD/cross/arm64-$1/ptebatch (make cross-arm64)"
	elif [ ! -x "$BUILD/arm64-$1/ptebatch" ]; then
		echo "no $BUILD/arm64-$1/ptebatch (make ARCH=arm64-$1)"
	fi
}

# same GRANULE NAME ARGS...: `ptebatch ARGS` of this machine's build and
# of the cross build under qemu print the same and exit the same.
same() {
	g=$1
	name=$2
	shift 2
	why=$(unavailable "$g")
	if [ -n "$why" ]; then
		skip "$name" "$why"
		return
	fi
	"$BUILD/arm64-$g/ptebatch" "$@" >"$tmp/host" 2>&1
	echo "exit $?" >>"$tmp/host"
	"$QEMU" "$BUILD/cross/arm64-$g/ptebatch" "$@" >"$tmp/cross" 2>&1
	echo "exit $?" >>"$tmp/cross"
	if ! grep -q . "$tmp/host" || ! cmp -s "$tmp/host" "$tmp/cross"; then
		diff -u "$tmp/host" "$tmp/cross" >"$tmp/diff"
		diag "$tmp/diff"
		tap_result 1 "$name"
		return
	fi
	tap_result 0 "$name"
}

# The cross binary is what it says: an aarch64 program (file(1) is not
# always installed; the ELF header's e_machine is 183, EM_AARCH64).
bin=$BUILD/cross/arm64-4k/ptebatch
if [ -f "$bin" ]; then
	machine=$(od -An -t u2 -j 18 -N 2 "$bin" | tr -d ' ')
	[ "$machine" = 183 ]
	tap_result $? "$bin is an aarch64 ELF (e_machine $machine)"
else
	skip "$bin is an aarch64 ELF" "no $bin (make cross-arm64)"
fi

for s in cow-basic-4k cow-mprotect-4k cow-mprotect-64k \
	 mprotect-partial-64k mprotect-partial-2m-pmd \
	 mprotect-roundtrip-exclusive-4k mprotect-roundtrip-shared-64k; do
	same 4k "arm64-4k: run $s: the cross build's record is this machine's" \
		run "tests/scenarios/$s.scn"
done
for g in 4k 16k 64k; do
	same $g "arm64-$g: run --stats of a scenario every granule takes" \
		run --stats "$tmp/granules.scn"
done
# A scenario of 4K pages on the larger granules: the same parse error.
for g in 16k 64k; do
	same $g "arm64-$g: a 4K-page scenario refused as here" \
		run tests/scenarios/cow-basic-4k.scn
done

echo "1..$n"
exit $fail
