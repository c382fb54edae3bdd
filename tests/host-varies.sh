#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# host-varies.sh - a kernel that varies is not a model bug (issue 24, 14):
#
#  1-3. diff tells a kernel count that changes from run to run (VARIES,
#       exit 5, every run's count) from a steady difference (MISMATCH,
#       exit 1): a stand-in kernel side made to vary on purpose, one
#       made to differ steadily, and one that differs steadily early and
#       varies later (the first difference decides).
#  3b.  a kernel that splits a PMD-mapped THP where Linux reuses it whole
#       (host.h's probe): a steady difference where it faults more is a
#       SKIP with the reason, one where it faults less a MISMATCH.
#  4.   diff's first line says what this machine's kernel does otherwise
#       (no zero page) and what on it can make reuse vary (DAMON, CPUs).
#  5-6. run --no-zero-page: the model of a kernel whose read faults
#       allocate (a 64K folio for a read under 64K mTHP), said in the
#       header; as root, a read-then-write scenario matches this kernel
#       whether it maps the zero page or not.
#  7-8. a fault of a scenario process's own page inside a statement's
#       window (a library that touches memory of its own: an LD_PRELOAD
#       madvise() that writes a fresh page first) is left out of the
#       count and said in a "# note:" line naming the mapping: diff
#       matches.
#
# Usage: BUILD=build sh tests/host-varies.sh   (from the top of the tree)

BUILD=${BUILD:-build}
TOOL=$BUILD/ptebatch
. tests/tap.sh

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/cow.scn" <<'EOF'
mthp 64K always
P0 mmap A 64K rw
P0 write A 0 64K
P0 fork P1
P1 exit
P0 write A 0 4K
P0 write A 4K 8K
observe
EOF

# A stand-in kernel side: the model's record, statement 6's faults made
# 9 on the runs numbered in $ODD_ONLY's way (odd runs: 9, even: as is),
# statement 3's made 7 on every run when STEADY3 is set.
cat >"$tmp/standin" <<EOF
#!/bin/sh
n=\$(cat "$tmp/count" 2>/dev/null || echo 0)
echo \$((n + 1)) >"$tmp/count"
"$TOOL" run --no-check --name "\$6" -- /dev/stdin >"$tmp/rec"
if [ -n "\$STEADY3" ]; then
	sed -i -E '/^3 P0 write /s/faults [0-9]+/faults 7/' "$tmp/rec"
fi
if [ -n "\$FEWER" ]; then
	sed -i -E '/^6 P0 write /s/faults [0-9]+/faults 0/' "$tmp/rec"
elif [ -n "\$EVERY" ] || [ \$((n % 2)) -eq 0 ]; then
	sed -i -E '/^6 P0 write /s/faults [0-9]+/faults 9/' "$tmp/rec"
fi
cat "$tmp/rec"
EOF
chmod +x "$tmp/standin"

# 1. Varying on purpose: 9, 1, 9, 1, 9.
rm -f "$tmp/count"
PTEBATCH_DIFF_KERNEL=$tmp/standin "$TOOL" diff "$tmp/cow.scn" >"$tmp/out" 2>&1
status=$?
[ "$status" -eq 5 ] &&
	grep -qxF "VARIES $tmp/cow.scn: statement 6 (P0 write A 0 4K): faults model 1, kernel 9, 1, 9, 1, 9 (5 kernel runs)" "$tmp/out" &&
	grep -qx '0 match, 0 mismatch, 0 skip, 1 varies' "$tmp/out"
tap_result $? "a kernel count that varies from run to run is VARIES with each run's count, exit 5 (exit $status)"
[ "$status" -eq 5 ] || diag "$tmp/out"

# 2. Steady: 9 every run.
rm -f "$tmp/count"
EVERY=1 PTEBATCH_DIFF_KERNEL=$tmp/standin "$TOOL" diff "$tmp/cow.scn" \
	>"$tmp/out" 2>&1
status=$?
[ "$status" -eq 1 ] &&
	grep -q "^MISMATCH $tmp/cow.scn: statement 6 (P0 write A 0 4K): faults: 1 in model, 9 in kernel .*(the same in 5 kernel runs)$" "$tmp/out" &&
	[ "$(cat "$tmp/count")" -eq 5 ]
tap_result $? "a steady difference is a MISMATCH after 5 kernel runs, exit 1 (exit $status)"
[ "$status" -eq 1 ] || diag "$tmp/out"

# 3. Steady at statement 3, varying at 6: the first difference decides.
rm -f "$tmp/count"
STEADY3=1 PTEBATCH_DIFF_KERNEL=$tmp/standin "$TOOL" diff "$tmp/cow.scn" \
	>"$tmp/out" 2>&1
status=$?
[ "$status" -eq 1 ] &&
	grep -q "^MISMATCH $tmp/cow.scn: statement 3 (P0 write A 0 64K): faults: 1 in model, 7 in kernel" "$tmp/out"
tap_result $? "a steady first difference stays a MISMATCH when a later count varies (exit $status)"
[ "$status" -eq 1 ] || diag "$tmp/out"

# 3b. A kernel that splits a PMD-mapped THP Linux reuses whole (host.h's
#     probe; the stand-in says so by PTEBATCH_DIFF_KERNEL_SPLITS_PMD): a
#     steady difference where the kernel faults more is a SKIP saying
#     why, exit 0; one where it faults less stays a MISMATCH.
rm -f "$tmp/count"
EVERY=1 PTEBATCH_DIFF_KERNEL_SPLITS_PMD=1 PTEBATCH_DIFF_KERNEL=$tmp/standin \
	"$TOOL" diff "$tmp/cow.scn" >"$tmp/out" 2>&1
status=$?
[ "$status" -eq 0 ] &&
	grep -q "^SKIP $tmp/cow.scn: this kernel splits a PMD-mapped THP that Linux reuses whole (see the first line): statement 6 (P0 write A 0 4K): faults: 1 in model, 9 in kernel" "$tmp/out" &&
	grep -qx '0 match, 0 mismatch, 1 skip' "$tmp/out"
tap_result $? "a kernel that splits where Linux reuses: a steady difference where it faults more is a SKIP with the reason (exit $status)"
[ "$status" -eq 0 ] || diag "$tmp/out"
rm -f "$tmp/count"
FEWER=1 PTEBATCH_DIFF_KERNEL_SPLITS_PMD=1 PTEBATCH_DIFF_KERNEL=$tmp/standin \
	"$TOOL" diff "$tmp/cow.scn" >"$tmp/out" 2>&1
status=$?
[ "$status" -eq 1 ] &&
	grep -q "^MISMATCH $tmp/cow.scn: statement 6 (P0 write A 0 4K): faults: 1 in model, 0 in kernel" "$tmp/out"
tap_result $? "... one where the kernel faults less stays a MISMATCH (exit $status)"
[ "$status" -eq 1 ] || diag "$tmp/out"

# ---- as root, this machine ---------------------------------------------

if [ "$(id -u)" -ne 0 ] || [ -n "${SAN:-}" ]; then
	why="not root"
	[ -n "${SAN:-}" ] && why="a $SAN build: the kernel backend skips there"
	skip "diff's first line names this machine's facts" "$why"
else
	"$TOOL" diff "$tmp/cow.scn" >"$tmp/out" 2>&1
	line=$(head -n 1 "$tmp/out")
	ok=0
	case $line in
	"# this kernel ($(uname -r)): "*) ;;
	*) ok=1 ;;
	esac
	# What the line says, against what the test sees for itself.
	kd=$(cat /proc/[0-9]*/comm 2>/dev/null | grep -c '^kdamond\.')
	cpus=$(getconf _NPROCESSORS_ONLN)
	if [ "$kd" -gt 0 ]; then
		echo "$line" | grep -q "DAMON on ($kd kdamond" || ok=1
	else
		echo "$line" | grep -q DAMON && ok=1
	fi
	if [ "$cpus" -gt 1 ]; then
		echo "$line" | grep -q " $cpus CPUs" || ok=1
	fi
	if grep -q 'no_zero_page=1' /proc/cmdline; then
		echo "$line" | grep -q 'read faults map no zero page (pvm_no_zero_page=1)' || ok=1
	fi
	tap_result $ok "diff's first line names this kernel's facts (DAMON $kd, $cpus CPUs)"
	[ "$ok" -eq 0 ] || echo "# $line"
fi

# 5. The model of a kernel whose read faults allocate.
cat >"$tmp/read.scn" <<'EOF'
mthp 64K always
P0 mmap A 2M rw
P0 read A 0 4K
P0 write A 0 4K
P0 read A 1M 4K
observe
EOF
"$TOOL" run --no-zero-page "$tmp/read.scn" >"$tmp/nz" 2>&1 &&
	"$TOOL" run "$tmp/read.scn" >"$tmp/z" 2>&1 &&
	head -n 1 "$tmp/nz" | grep -q ' zero-page no$' &&
	! head -n 1 "$tmp/z" | grep -q 'zero-page' &&
	grep -qx '4 P0 write A 0 4K: faults 0' "$tmp/nz" &&
	grep -qx '4 P0 write A 0 4K: faults 1' "$tmp/z" &&
	grep -qx 'P0 A 0x0100000 present size 64K index 0..15 frame 17..32 data 0x00 x16' "$tmp/nz" &&
	grep -qx 'P0 A 0x0100000 present size 4K index 0 frame 2 data 0x00' "$tmp/z"
tap_result $? "run --no-zero-page: a read allocates a 64K folio, mapped writable; the header says zero-page no"
"$TOOL" run --backend kernel --no-zero-page "$tmp/read.scn" >"$tmp/out" 2>&1
status=$?
[ "$status" -eq 2 ] && grep -q -- '--no-zero-page applies to the model only' "$tmp/out"
tap_result $? "run --backend kernel --no-zero-page is refused (exit $status)"

if [ "$(id -u)" -ne 0 ] || [ -n "${SAN:-}" ]; then
	skip "a read-then-write scenario matches this kernel" "$why"
	skip "a fault of the process's own page is left out of the count" "$why"
	skip "the run's record says where that fault was" "$why"
	echo "1..$n"
	exit "$fail"
fi

"$TOOL" diff "$tmp/read.scn" >"$tmp/out" 2>&1
status=$?
[ "$status" -eq 0 ] && grep -q "^MATCH $tmp/read.scn$" "$tmp/out"
tap_result $? "a read-then-write scenario matches this kernel, zero page or not (exit $status)"
[ "$status" -eq 0 ] || diag "$tmp/out"

# 7-8. A library that touches a page of its own inside the window.
cat >"$tmp/stray.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <sys/mman.h>

/* madvise() that first writes a fresh page of the process's own, kept. */
int madvise(void *addr, size_t len, int advice)
{
	static int (*real)(void *, size_t, int);
	char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p != MAP_FAILED)
		p[0] = 1;
	if (!real)
		real = (int (*)(void *, size_t, int))dlsym(RTLD_NEXT,
							    "madvise");
	return real(addr, len, advice);
}
EOF
cat >"$tmp/adv.scn" <<'EOF'
mthp 64K never
P0 mmap A 64K rw
P0 write A 0 16K
P0 madvise A 0 16K dontneed
P0 madvise A 0 64K populate-write
observe
EOF
if ! ${CC:-cc} -shared -fPIC -O2 -o "$tmp/stray.so" "$tmp/stray.c" -ldl \
	2>"$tmp/cc"; then
	skip "a fault of the process's own page is left out of the count" "cannot build the preload library: $(head -n 1 "$tmp/cc")"
	skip "the run's record says where that fault was" "no preload library"
else
	LD_PRELOAD=$tmp/stray.so "$TOOL" diff "$tmp/adv.scn" >"$tmp/out" 2>&1
	status=$?
	[ "$status" -eq 0 ] && grep -q "^MATCH $tmp/adv.scn$" "$tmp/out"
	tap_result $? "a fault of the process's own page inside a statement is left out: diff matches (exit $status)"
	[ "$status" -eq 0 ] || diag "$tmp/out"
	LD_PRELOAD=$tmp/stray.so "$TOOL" run --backend kernel "$tmp/adv.scn" \
		>"$tmp/out" 2>&1
	status=$?
	[ "$status" -eq 0 ] &&
		grep -qx '5 P0 madvise A 0 64K populate-write: faults 16' "$tmp/out" &&
		grep -A1 '^5 P0 madvise' "$tmp/out" | grep -q "^# note: 1 fault of P0's own, outside the scenario's regions, not counted: the first at 0x[0-9a-f]* ([0-9a-f]*-[0-9a-f]* rw-p "
	tap_result $? "the record says where that fault was: a '# note:' line with the mapping (exit $status)"
	[ "$status" -eq 0 ] || diag "$tmp/out"
fi

echo "1..$n"
exit "$fail"
