#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# robustness.sh - `ptebatch diff` and the kernel backend under signals,
# dying processes, host limits and odd inputs, as TAP.
#
# Without root (a stand-in for the kernel side, PTEBATCH_DIFF_KERNEL):
#  1-2. TERM to diff is passed on to its kernel side, which is waited
#       for; diff then ends by TERM;
#  3.   KILL to diff: the kernel side gets TERM (its parent-death signal);
#  4-6. diff reads a scenario from /dev/stdin, a pipe (<(...)) and a FIFO,
#       each once (the stand-in kernel side runs the model on the text
#       it is given on its stdin);
# As root, on this machine's kernel (SKIP otherwise):
#  7.   TERM to diff during a kernel run: within 10 s no process of that
#       run is left, THP sysfs is back to what it was, the lock is free;
#  8-9. a scenario process killed with SIGKILL: `run --backend kernel`
#       exits 1 naming it, and `diff` says ERROR with the same words;
#  10.  a 64G mapping the kernel's overcommit policy refuses: SKIP naming
#       the policy (the model has no such limit);
#  11.  a vmsplice longer than a pipe may hold here: MATCH, or SKIP naming
#       /proc/sys/fs/pipe-max-size;
#  12.  a scenario that writes more than this machine has: refused before
#       it runs, SKIP naming MemAvailable.
#
# Usage: BUILD=build [SAN=tsan] sh tests/robustness.sh   (from the top of
#        the tree)

BUILD=${BUILD:-build}
TOOL=$(pwd)/$BUILD/ptebatch
. tests/tap.sh
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

# Show a file as TAP diagnostics, at most 20 lines.
diag() {
	sed -n '1,20s/^/# /p' "$1"
}

# Wait up to $2 tenths of a second for command $1 to succeed.
wait_for() {
	i=0
	while [ "$i" -lt "$2" ]; do
		eval "$1" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

printf 'P0 mmap A 64K rw\nP0 write A 0 64K\nobserve\n' >"$tmp/small.scn"

# ---- diff and signals, with a stand-in kernel side ---------------------

# The stand-in: note its pid, say which signal ended it, else sleep.
cat >"$tmp/standin" <<EOF
#!/bin/sh
echo \$\$ >"$tmp/standin.pid"
sleep 60 &
trap 'echo TERM >"$tmp/standin.sig"; kill \$! 2>/dev/null; exit 143' TERM
trap 'echo INT >"$tmp/standin.sig"; kill \$! 2>/dev/null; exit 130' INT
wait
EOF
chmod +x "$tmp/standin"

# diff_with_standin SIGNAL: start diff, signal it once its kernel side
# runs; the exit status of diff, and what the stand-in saw, in files.
diff_with_standin() {
	rm -f "$tmp/standin.pid" "$tmp/standin.sig"
	PTEBATCH_DIFF_KERNEL=$tmp/standin "$TOOL" diff "$tmp/small.scn" \
		>"$tmp/diff.out" 2>&1 &
	dpid=$!
	if ! wait_for '[ -s "$tmp/standin.pid" ]' 100; then
		kill -KILL "$dpid" 2>/dev/null
		wait "$dpid" 2>/dev/null
		echo "# the stand-in never started"
		return 1
	fi
	kill -"$1" "$dpid"
	wait "$dpid" 2>/dev/null
	echo $? >"$tmp/diff.status"
	wait_for '[ -s "$tmp/standin.sig" ]' 50
	return 0
}

diff_with_standin TERM
[ "$(cat "$tmp/standin.sig" 2>/dev/null)" = TERM ]
tap_result $? "TERM to diff is passed on to its kernel side"
[ "$(cat "$tmp/diff.status" 2>/dev/null)" = 143 ]
tap_result $? "diff waits for its kernel side, then ends by TERM (status $(cat "$tmp/diff.status" 2>/dev/null))"

diff_with_standin KILL
[ "$(cat "$tmp/standin.sig" 2>/dev/null)" = TERM ]
tap_result $? "KILL to diff: its kernel side gets TERM and ends"

# ---- diff reads each input once ----------------------------------------

# A kernel side that runs the model on the text it gets on its stdin.
cat >"$tmp/modelside" <<EOF
#!/bin/sh
# run --backend kernel --no-check --name NAME -- /dev/stdin
exec "$TOOL" run --no-check --name "\$6" -- /dev/stdin
EOF
chmod +x "$tmp/modelside"

PTEBATCH_DIFF_KERNEL=$tmp/modelside "$TOOL" diff /dev/stdin \
	<"$tmp/small.scn" >"$tmp/out" 2>&1
status=$?
[ "$status" -eq 0 ] && grep -q '^MATCH /dev/stdin$' "$tmp/out"
tap_result $? "diff /dev/stdin (exit $status)"
[ "$status" -eq 0 ] || diag "$tmp/out"

cat "$tmp/small.scn" | PTEBATCH_DIFF_KERNEL=$tmp/modelside "$TOOL" diff \
	/dev/fd/0 >"$tmp/out" 2>&1
status=$?
[ "$status" -eq 0 ] && grep -q '^MATCH /dev/fd/0$' "$tmp/out"
tap_result $? "diff of a pipe (exit $status)"
[ "$status" -eq 0 ] || diag "$tmp/out"

mkfifo "$tmp/fifo"
(cat "$tmp/small.scn" >"$tmp/fifo") &
if command -v timeout >/dev/null 2>&1; then
	PTEBATCH_DIFF_KERNEL=$tmp/modelside timeout 20 "$TOOL" diff \
		"$tmp/fifo" >"$tmp/out" 2>&1
else
	PTEBATCH_DIFF_KERNEL=$tmp/modelside "$TOOL" diff "$tmp/fifo" \
		>"$tmp/out" 2>&1
fi
status=$?
[ "$status" -eq 0 ] && grep -q "^MATCH $tmp/fifo\$" "$tmp/out"
tap_result $? "diff of a FIFO, read once (exit $status)"
[ "$status" -eq 0 ] || diag "$tmp/out"
wait

# ---- on this machine's kernel --------------------------------------------

root_reason=
if [ "${SAN:-}" = tsan ]; then
	root_reason="ThreadSanitizer build: the kernel backend skips there"
elif [ "$(id -u)" -ne 0 ]; then
	root_reason="not root: the kernel backend writes THP sysfs"
elif [ ! -d /sys/kernel/mm/transparent_hugepage ]; then
	root_reason="no /sys/kernel/mm/transparent_hugepage"
elif ! "$TOOL" run --backend kernel "$tmp/small.scn" >/dev/null 2>"$tmp/probe"; then
	# The backend's own reason it cannot run here (under ASan, say,
	# whose shadow memory holds the scenarios' addresses).
	root_reason="the kernel backend cannot run here: $(sed -n '1s/^[^:]*: //p' "$tmp/probe")"
fi

skip_root() {
	n=$((n + 1))
	echo "ok $n - $1 # SKIP $root_reason"
}

# A scenario that keeps the kernel busy for seconds: 40 passes over 256M.
{
	echo "mthp 64K always"
	echo "P0 mmap A 256M rw"
	i=0
	while [ "$i" -lt 40 ]; do
		echo "P0 write A 0 256M"
		echo "P0 madvise A 0 256M dontneed"
		i=$((i + 1))
	done
} >"$tmp/long.scn"

# The THP settings, to compare before and after.
thp_state() {
	for f in /sys/kernel/mm/transparent_hugepage/enabled \
		 /sys/kernel/mm/transparent_hugepage/hugepages-*/enabled; do
		[ -r "$f" ] && echo "$f $(cat "$f")"
	done
}

# The THP settings lock's file, if a run ever made it.
thp_lock_file() {
	for lock in /run/lock/ptebatch-thp.lock /tmp/ptebatch-thp.lock; do
		[ -e "$lock" ] && { echo "$lock"; return 0; }
	done
	return 1
}

# The settings at rest: read holding the lock, so that a run of another
# worktree's `make check` (or `diff --random`), which holds it from apply
# to restore, is not caught half-way.  Waits up to 60 s for the lock.
thp_state_at_rest() {
	lock=$(thp_lock_file)
	if [ -n "$lock" ] && command -v flock >/dev/null 2>&1; then
		exec 9<"$lock"
		flock -w 60 9
		thp_state
		exec 9<&-
	else
		thp_state
	fi
}

# The pid of the first child of $1, if any.
child_of() {
	pgrep -P "$1" 2>/dev/null | head -n 1
}

if [ -n "$root_reason" ]; then
	skip_root "TERM to diff during a kernel run leaves no process, sysfs restored, lock free"
	skip_root "a killed scenario process fails run --backend kernel, named"
	skip_root "a killed scenario process is an ERROR in diff, named"
	skip_root "a 64G mapping the overcommit policy refuses is SKIP, named"
	skip_root "a vmsplice longer than a pipe may hold is MATCH or SKIP, named"
	skip_root "a scenario that writes more than this machine has is refused"
else
	thp_state_at_rest >"$tmp/thp.before"
	"$TOOL" diff "$tmp/long.scn" >"$tmp/out" 2>&1 &
	dpid=$!
	run=
	wait_for 'run=$(child_of "$dpid"); [ -n "$run" ] && [ -n "$(child_of "$run")" ]' 600
	kill -TERM "$dpid"
	wait "$dpid" 2>/dev/null
	status=$?
	gone=1
	[ -n "$run" ] && wait_for '! kill -0 "$run" 2>/dev/null || grep -q "^State:.*Z" "/proc/$run/status" 2>/dev/null' 100 && gone=0
	thp_state_at_rest >"$tmp/thp.after"
	# Free: ours is gone; another worktree's run may hold it a while.
	free=1
	lock=$(thp_lock_file)
	if [ -n "$lock" ] && command -v flock >/dev/null 2>&1; then
		flock -w 60 "$lock" true && free=0
	else
		free=0
	fi
	[ -n "$run" ] && [ "$status" -eq 143 ] && [ "$gone" -eq 0 ] &&
		cmp -s "$tmp/thp.before" "$tmp/thp.after" && [ "$free" -eq 0 ]
	tap_result $? "TERM to diff during a kernel run leaves no process, sysfs restored, lock free (exit $status, run ${run:-none}, gone $gone, lock free $free)"
	cmp -s "$tmp/thp.before" "$tmp/thp.after" ||
		diff "$tmp/thp.before" "$tmp/thp.after" | sed 's/^/# /'

	"$TOOL" run --backend kernel "$tmp/long.scn" >"$tmp/out" 2>"$tmp/err" &
	rpid=$!
	p0=
	wait_for 'p0=$(child_of "$rpid"); [ -n "$p0" ]' 600 && sleep 0.5
	[ -n "$p0" ] && kill -KILL "$p0"
	wait "$rpid" 2>/dev/null
	status=$?
	[ "$status" -eq 1 ] &&
		grep -q "P0 (pid $p0) killed by signal 9" "$tmp/err"
	tap_result $? "a killed scenario process fails run --backend kernel, named (exit $status)"
	[ "$status" -eq 1 ] || diag "$tmp/err"

	"$TOOL" diff "$tmp/long.scn" >"$tmp/out" 2>&1 &
	dpid=$!
	run=
	p0=
	wait_for 'run=$(child_of "$dpid"); [ -n "$run" ] && p0=$(child_of "$run") && [ -n "$p0" ]' 600 && sleep 0.5
	[ -n "$p0" ] && kill -KILL "$p0"
	wait "$dpid" 2>/dev/null
	status=$?
	[ "$status" -eq 1 ] &&
		grep -q "^ERROR $tmp/long.scn: P0 (pid $p0) killed by signal 9" "$tmp/out"
	tap_result $? "a killed scenario process is an ERROR in diff, named (exit $status)"
	[ "$status" -eq 1 ] || diag "$tmp/out"

	printf 'P0 mmap A 64G rw\nP0 write A 0 4K\nobserve\n' >"$tmp/huge.scn"
	"$TOOL" diff "$tmp/huge.scn" >"$tmp/out" 2>&1
	status=$?
	if grep -q '^MATCH' "$tmp/out"; then
		n=$((n + 1))
		echo "ok $n - a 64G mapping the overcommit policy refuses is SKIP, named # SKIP this kernel accepts a 64G mapping (vm.overcommit_memory=$(cat /proc/sys/vm/overcommit_memory))"
	else
		[ "$status" -eq 0 ] &&
			grep -q "^SKIP $tmp/huge.scn: host limit: .*overcommit" "$tmp/out"
		tap_result $? "a 64G mapping the overcommit policy refuses is SKIP, named (exit $status)"
		[ "$status" -eq 0 ] || diag "$tmp/out"
	fi

	max=$(cat /proc/sys/fs/pipe-max-size)
	len=$((max * 2))
	printf 'mthp 64K always\nP0 mmap A %s rw\nP0 write A 0 %s\nP0 vmsplice H A 0 %s\nP0 drain H\nobserve\n' \
		"$len" "$len" "$len" >"$tmp/pipe.scn"
	"$TOOL" diff "$tmp/pipe.scn" >"$tmp/out" 2>&1
	status=$?
	[ "$status" -eq 0 ] && { grep -q "^MATCH $tmp/pipe.scn" "$tmp/out" ||
		grep -q "^SKIP $tmp/pipe.scn: host limit: .*pipe-max-size" "$tmp/out"; }
	tap_result $? "a vmsplice longer than a pipe may hold is MATCH or SKIP, named (exit $status)"
	[ "$status" -eq 0 ] || diag "$tmp/out"

	# Regions of 32G, written whole, one more than MemAvailable holds.
	avail=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
	nr=$((avail / 33554432 + 1))
	size=$((nr * 32))G
	i=0
	while [ "$i" -lt "$nr" ]; do
		printf 'P0 mmap R%d 32G rw\nP0 write R%d 0 32G\n' "$i" "$i"
		i=$((i + 1))
	done >"$tmp/toomuch.scn"
	"$TOOL" run --backend kernel "$tmp/toomuch.scn" >"$tmp/out" 2>"$tmp/err"
	status=$?
	[ "$status" -eq 4 ] && grep -q 'MemAvailable' "$tmp/err" && [ ! -s "$tmp/out" ]
	tap_result $? "a scenario that writes $size, more than this machine has, is refused (exit $status)"
	[ "$status" -eq 4 ] || diag "$tmp/err"
fi

echo "1..$n"
exit $fail
