#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# hostile-state.sh - the machine's state around `ptebatch record` and the
# kernel backend, as TAP: what they change (tracefs mounts, tracefs
# instances with their buffers, events, options and set_event_pid, the
# THP sysfs knobs and khugepaged's pacing) comes back exactly as it was,
# whoever finishes first and however each ends, and a ptebatch run by a
# recording neither hangs nor fights its parent for the THP settings lock.
#
# As root only (SKIP otherwise), in a mount namespace of its own (unshare
# -m, private): the mount table it compares is its own, so another run on
# this machine mounting tracefs does not disturb it, and whatever a
# recorder would leave mounted stays in it.  The knobs, the instances and
# the journal (/run/ptebatch-thp.journal) are the machine's: they are read
# holding the THP settings lock, so that another run is never caught
# half-way.  Every test starts from the state it read and compares after:
#
#  1.  record with tracefs not mounted: no tracefs mount appears, while it
#      records or after; instances, knobs, top-level tracing as before;
#  2.  two records at once: the second waits for the first's lock, says
#      whose, and nothing is left after both;
#  3.  SIGINT, SIGTERM, SIGHUP to a record: exit 130, everything back;
#  4.  a record waiting for the lock has changed nothing, and ends on
#      SIGTERM;
#  5.  SIGKILL to a record: no mount left; the next record removes its
#      instance and the next kernel run puts back its THP settings;
#  6.  the same with tracefs mounted (in this namespace): that mount stays;
#  7.  SIGKILL to `run --backend kernel`: the next run puts its settings
#      back;
#  8.  a ptebatch under a record (run --backend kernel, record, diff,
#      bench, calibrate, two runs at once), each under timeout(1) so that
#      a hang fails: it runs and ends, the record too, all is back;
#  9.  a ptebatch whose lent lock did not reach it (env -u), or under
#      flock(1) holding the lock: fails at once naming the ancestor;
#  10. SIGINT to a record while a ptebatch under it has the THP settings
#      applied: both end, all is back;
#  11. SIGKILL to a ptebatch under a record: the record puts back what it
#      left;
#  12. a forged PTEBATCH_THP_LOCK (pid 1, a plain file) lends nothing: the
#      run waits for the machine's lock.
#
# Usage: BUILD=build [SAN=asan|tsan] sh tests/hostile-state.sh   (from the
#        top of the tree)

BUILD=${BUILD:-build}
TOOL=$(pwd)/$BUILD/ptebatch
# Seconds a ptebatch under a record may take before it counts as hung.
BOUND=${HOSTILE_STATE_BOUND:-300}
. tests/tap.sh
done_testing() { echo "1..$n"; exit $fail; }

# Every test by name, for skipping them all with one reason.
ALL="record, tracefs not mounted
two records at once
signals to a record
a record waiting for the lock has changed nothing
SIGKILL to a record
SIGKILL to a record, tracefs mounted
SIGKILL to a kernel run
a ptebatch under a record
a ptebatch the lent lock did not reach
SIGINT to a record over a kernel run
SIGKILL to a kernel run under a record
a forged PTEBATCH_THP_LOCK"
skip_all() {
	old_ifs=$IFS
	IFS='
'
	for t in $ALL; do
		skip "$t" "$1"
	done
	IFS=$old_ifs
	done_testing
}

if [ "$(id -u)" -ne 0 ]; then
	skip_all "not root: tracing and THP sysfs need it"
fi
if [ -z "${HOSTILE_STATE_NS:-}" ]; then
	if ! command -v unshare >/dev/null 2>&1 ||
	   ! unshare -m --propagation private true 2>/dev/null; then
		skip_all "cannot make a mount namespace of its own (unshare -m)"
	fi
	HOSTILE_STATE_NS=1 exec unshare -m --propagation private \
		env HOSTILE_STATE_NS=1 sh "$0" "$@"
fi
for c in timeout flock; do
	command -v "$c" >/dev/null 2>&1 || skip_all "no $c(1)"
done

tmp=$(mktemp -d) || exit 1
trap 'touch "$tmp"/*.go 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
mkdir "$tmp/tfs"

THP=/sys/kernel/mm/transparent_hugepage
thp_lock=/run/lock/ptebatch-thp.lock
[ -w /run/lock ] || thp_lock=/tmp/ptebatch-thp.lock
touch "$thp_lock" 2>/dev/null

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

# ---- the state ------------------------------------------------------------

# Every THP knob a run writes, and some it must not.
knobs() {
	for f in "$THP/enabled" "$THP/defrag" "$THP/use_zero_page" \
		 "$THP/shrink_underused" "$THP"/hugepages-*/enabled \
		 "$THP/khugepaged/pages_to_scan" \
		 "$THP/khugepaged/scan_sleep_millisecs" \
		 "$THP/khugepaged/alloc_sleep_millisecs" \
		 "$THP/khugepaged/max_ptes_none" "$THP/khugepaged/max_ptes_swap" \
		 "$THP/khugepaged/max_ptes_shared" "$THP/khugepaged/defrag"; do
		[ -r "$f" ] && echo "knob $f $(cat "$f")"
	done
}

# tracefs as the machine has it, seen through a mount in a namespace of
# its own (gone with it): the instances, and the top level's settings a
# recorder could touch.
tracing() {
	unshare -m --propagation private sh -c '
		mount -t tracefs nodev "$1" || exit 0
		ls "$1/instances" | sed "s/^/instance /"
		for f in tracing_on set_event_pid current_tracer trace_clock \
			 buffer_size_kb options/event-fork events/enable; do
			[ -r "$1/$f" ] && echo "top $f $(cat "$1/$f")"
		done' sh "$tmp/tfs" 2>/dev/null
}

# The knobs at rest (holding the THP settings lock).
knobs_at_rest() {
	exec 9<"$thp_lock"
	flock 9
	knobs
	exec 9<&-
}

# tracefs and debugfs in this namespace's mount table (whole lines: the
# same mount has the same id).
mounts() {
	grep -E ' - (tracefs|debugfs) ' /proc/self/mountinfo | sed 's/^/mount /'
}

# Everything, at rest: holding the THP settings lock, unless $1 is
# "held" (one of ours holds it and waits for us).
state() {
	if [ "${1:-}" != held ]; then
		exec 9<"$thp_lock"
		flock 9
	fi
	knobs
	tracing
	[ -e /run/ptebatch-thp.journal ] && echo "journal left"
	[ "${1:-}" != held ] && exec 9<&-
	mounts
}

# Pass test $2 if the state now is $1's (a file); show what differs.
same_state() {
	state >"$tmp/state.now"
	if cmp -s "$1" "$tmp/state.now"; then
		return 0
	fi
	diff "$1" "$tmp/state.now" | sed -n '1,20s/^/# /p'
	return 1
}

# No tracefs mount in this namespace at all.
unmount_tracefs() {
	for p in $(grep -E ' - tracefs ' /proc/self/mountinfo | cut -d' ' -f5); do
		umount -l "$p" 2>/dev/null
	done
}

# A command that says it runs ($1.up) and runs until $1.go appears.
waiter() {
	echo "echo > $1.up; while [ ! -e $1.go ]; do sleep 0.05; done"
}

# The recorders of these tests must be able to run here at all.
unmount_tracefs
if ! "$TOOL" record -o "$tmp/probe.scn" -- true >/dev/null 2>"$tmp/probe"; then
	skip_all "ptebatch record cannot run here: $(head -1 "$tmp/probe")"
fi
printf 'mthp 64K always\nP0 mmap A 256K rw\nP0 write A 0 256K\nobserve\n' \
	>"$tmp/small.scn"
kernel_reason=
if [ "${SAN:-}" = tsan ]; then
	kernel_reason="ThreadSanitizer build: the kernel backend skips there"
elif ! "$TOOL" run --backend kernel "$tmp/small.scn" >/dev/null 2>"$tmp/probe"
then
	kernel_reason="the kernel backend cannot run here: $(sed -n '1s/^[^:]*: //p' "$tmp/probe")"
fi
# A kernel run of some seconds with the THP settings its own: enabled
# always (a recorder sets never).
{
	echo "mthp 2M always"
	echo "P0 mmap A 64M rw"
	i=0
	while [ "$i" -lt 400 ]; do
		echo "P0 write A 0 64M"
		echo "P0 madvise A 0 64M dontneed"
		i=$((i + 1))
	done
} >"$tmp/long.scn"
# Has process $1 applied long.scn's settings?  It holds a THP settings
# lock (the machine's or a lent one: then no other run can change the
# knobs) and enabled is always: not another run's on this machine.
applied_by() {
	[ -n "$1" ] && grep -q "^[0-9]*: FLOCK *ADVISORY *WRITE $1 " /proc/locks &&
		grep -q '\[always\]' "$THP/enabled"
}

# Each test starts here: no tracefs mount in this namespace, and the
# state it is held to afterwards.
begin() {
	unmount_tracefs
	state >"$tmp/state.before"
}

# ---- 1. tracefs not mounted -----------------------------------------------

begin
"$TOOL" record -o "$tmp/t1.scn" -- sh -c "$(waiter "$tmp/t1")" 2>"$tmp/t1.err" &
pid=$!
wait_for '[ -e "$tmp/t1.up" ]' 600
mounts >"$tmp/t1.during"
touch "$tmp/t1.go"
wait "$pid"
status=$?
ok=0
[ "$status" -eq 0 ] || { echo "# status $status"; diag "$tmp/t1.err"; ok=1; }
[ -s "$tmp/t1.during" ] && { echo "# while recording:"; diag "$tmp/t1.during"; ok=1; }
same_state "$tmp/state.before" || ok=1
tap_result $ok "record, tracefs not mounted: no tracefs mount appears while it records or after; instances, THP, top-level tracing as before"

# ---- 2. two records at once -------------------------------------------------

begin
"$TOOL" record -o "$tmp/t2a.scn" -- sh -c "$(waiter "$tmp/t2")" 2>"$tmp/t2a.err" &
a=$!
wait_for '[ -e "$tmp/t2.up" ]' 600
"$TOOL" record -o "$tmp/t2b.scn" -- true 2>"$tmp/t2b.err" &
b=$!
wait_for 'grep -q "waiting for the THP settings lock held by pid $a " "$tmp/t2b.err"' 600
said=$?
mounts >"$tmp/t2.during"
touch "$tmp/t2.go"
wait "$a"
sa=$?
wait "$b"
sb=$?
ok=0
[ "$sa" -eq 0 ] && [ "$sb" -eq 0 ] ||
	{ echo "# status $sa, $sb"; diag "$tmp/t2a.err"; diag "$tmp/t2b.err"; ok=1; }
[ "$said" -eq 0 ] || { echo "# the second did not say it waits for pid $a"; diag "$tmp/t2b.err"; ok=1; }
[ -s "$tmp/t2.during" ] && { echo "# while recording:"; diag "$tmp/t2.during"; ok=1; }
same_state "$tmp/state.before" || ok=1
tap_result $ok "two records at once: the second waits for the first's lock and names its pid; no mount, instance or THP change left"

# ---- 3. signals -------------------------------------------------------------

for sig in INT TERM HUP; do
	begin
	rm -f "$tmp/t3.up" "$tmp/t3.go"
	"$TOOL" record -o "$tmp/t3.scn" -- sh -c "$(waiter "$tmp/t3")" 2>"$tmp/t3.err" &
	pid=$!
	wait_for '[ -e "$tmp/t3.up" ]' 600
	mounts >"$tmp/t3.during"
	kill -"$sig" "$pid"
	# Bounded: the command gets SIGTERM from the recorder.
	wait_for '! kill -0 "$pid" 2>/dev/null' 600 || touch "$tmp/t3.go"
	wait "$pid" 2>/dev/null
	status=$?
	touch "$tmp/t3.go"
	ok=0
	[ "$status" -eq 130 ] || { echo "# status $status"; diag "$tmp/t3.err"; ok=1; }
	[ -s "$tmp/t3.during" ] && { echo "# while recording:"; diag "$tmp/t3.during"; ok=1; }
	same_state "$tmp/state.before" || ok=1
	tap_result $ok "SIG$sig to a record: exit 130, no mount while it records or after, instances and THP as before"
done

# ---- 4. SIGTERM while waiting for the lock ----------------------------------

# Another holds the THP settings lock (any holder: a kernel run, a
# test); a record waits for it and is stopped there.  It must not have
# changed anything before it got the lock: no mount, no instance, no
# knob.  (SIGTERM: a script's background job starts with SIGINT ignored,
# and a record waiting for the lock has installed no handler yet.)
begin
rm -f "$tmp/t4.up" "$tmp/t4.go"
flock "$thp_lock" sh -c "$(waiter "$tmp/t4")" &
a=$!
wait_for '[ -e "$tmp/t4.up" ]' 600
"$TOOL" record -o "$tmp/t4b.scn" -- true 2>"$tmp/t4b.err" &
b=$!
wait_for 'grep -q "waiting for the THP settings lock held by pid $a " "$tmp/t4b.err"' 600
said=$?
state held >"$tmp/t4.waiting"
kill -TERM "$b"
wait "$b" 2>/dev/null
sb=$?
touch "$tmp/t4.go"
wait "$a"
ok=0
[ "$said" -eq 0 ] && [ "$sb" -ne 0 ] ||
	{ echo "# said $said, status $sb"; diag "$tmp/t4b.err"; ok=1; }
cmp -s "$tmp/state.before" "$tmp/t4.waiting" ||
	{ echo "# while it waited:"; diff "$tmp/state.before" "$tmp/t4.waiting" | sed -n '1,20s/^/# /p'; ok=1; }
[ -e "$tmp/t4b.scn" ] && { echo "# the stopped one wrote a scenario"; ok=1; }
same_state "$tmp/state.before" || ok=1
tap_result $ok "a record waiting for the THP settings lock has changed nothing (no mount, no instance, no knob), and ends on SIGTERM"

# ---- 5, 6. SIGKILL to a record ----------------------------------------------

# $1: the test's name; with tracefs mounted here if $2 is "mounted".
sigkill_record() {
	name=$1
	rm -f "$tmp/t5.up" "$tmp/t5.go"
	knobs_at_rest >"$tmp/knobs.before"
	state >"$tmp/t5.before"
	"$TOOL" record -o "$tmp/t5.scn" -- sh -c "$(waiter "$tmp/t5")" 2>"$tmp/t5.err" &
	pid=$!
	wait_for '[ -e "$tmp/t5.up" ]' 600
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	touch "$tmp/t5.go"
	ok=0
	# Nothing a SIGKILL can clean: no mount may be left.
	mounts >"$tmp/t5.mounts"
	grep '^mount' "$tmp/t5.before" | cmp -s - "$tmp/t5.mounts" ||
		{ echo "# mounts after the SIGKILL:"; diag "$tmp/t5.mounts"; ok=1; }
	# The next kernel run puts back the THP settings, the next record
	# removes the instance.
	if [ -z "$kernel_reason" ]; then
		"$TOOL" run --backend kernel "$tmp/small.scn" >/dev/null 2>"$tmp/t5.next" ||
			{ diag "$tmp/t5.next"; ok=1; }
		knobs_at_rest >"$tmp/knobs.after"
		cmp -s "$tmp/knobs.before" "$tmp/knobs.after" ||
			{ echo "# knobs after the next kernel run:"; diff "$tmp/knobs.before" "$tmp/knobs.after" | diag /dev/stdin; ok=1; }
	fi
	"$TOOL" record -o "$tmp/t5n.scn" -- true 2>"$tmp/t5.next" ||
		{ diag "$tmp/t5.next"; ok=1; }
	same_state "$tmp/t5.before" || ok=1
	tap_result $ok "$name"
}
begin
sigkill_record "SIGKILL to a record, tracefs not mounted: no mount left; the next kernel run puts back its THP settings, the next record removes its instance"
begin
if mount -t tracefs nodev /sys/kernel/tracing 2>"$tmp/mount.err"; then
	sigkill_record "SIGKILL to a record, tracefs mounted: that mount stays, the same; the next kernel run puts back its THP settings, the next record removes its instance"
	unmount_tracefs
else
	skip "SIGKILL to a record, tracefs mounted" "cannot mount tracefs here: $(head -1 "$tmp/mount.err")"
fi

# ---- 7. SIGKILL to a kernel run ---------------------------------------------

if [ -n "$kernel_reason" ]; then
	skip "SIGKILL to run --backend kernel" "$kernel_reason"
else
	begin
	"$TOOL" run --backend kernel "$tmp/long.scn" >/dev/null 2>"$tmp/t7.err" &
	pid=$!
	wait_for 'applied_by "$pid"' 600
	applied=$?
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	"$TOOL" run --backend kernel "$tmp/small.scn" >/dev/null 2>"$tmp/t7.next"
	status=$?
	ok=0
	[ "$applied" -eq 0 ] || { echo "# the run never applied its settings"; diag "$tmp/t7.err"; ok=1; }
	[ "$status" -eq 0 ] && grep -q "put back .* THP setting.* that a killed run left" "$tmp/t7.next" ||
		{ echo "# next run: status $status"; diag "$tmp/t7.next"; ok=1; }
	same_state "$tmp/state.before" || ok=1
	tap_result $ok "SIGKILL to run --backend kernel: the next run puts back the settings it left, and says so"
fi

# ---- 8. a ptebatch under a record -------------------------------------------

# record -- sh -c "CMD >out 2>err; echo \$? >st", under timeout(1): the
# nested command must end with a status in $2 (a list), the record 0.
# $1 names the test.
nested() {
	name=$1
	want=$2
	cmd=$3
	begin
	rm -f "$tmp/n.st" "$tmp/n.out" "$tmp/n.err"
	timeout -k 10 "$BOUND" "$TOOL" record -o "$tmp/n.scn" -- \
		sh -c "$cmd >$tmp/n.out 2>$tmp/n.err; echo \$? >$tmp/n.st" \
		>/dev/null 2>"$tmp/n.rec"
	status=$?
	got=$(cat "$tmp/n.st" 2>/dev/null)
	ok=1
	for w in $want; do
		[ "$got" = "$w" ] && ok=0
	done
	[ "$status" -eq 0 ] || ok=1
	if [ "$ok" -ne 0 ]; then
		echo "# record status $status (124: timed out), the nested command's ${got:-none}"
		diag "$tmp/n.rec"
		diag "$tmp/n.err"
	fi
	same_state "$tmp/state.before" || ok=1
	tap_result $ok "$name (record $status, nested ${got:-none}); all back"
}
if [ -n "$kernel_reason" ]; then
	skip "a ptebatch under a record" "$kernel_reason"
else
	nested "record -- ptebatch run --backend kernel: runs, under the lock lent to it" 0 \
		"'$TOOL' run --backend kernel '$tmp/small.scn'"
	nested "record -- ptebatch record -- true: both record" 0 \
		"'$TOOL' record -o '$tmp/inner.scn' -- true"
	# The kernel may differ from the model here for its own reasons (1):
	# what matters is that it ran.
	nested "record -- ptebatch diff: it compares" "0 1" \
		"'$TOOL' diff '$tmp/small.scn'"
	nested "record -- ptebatch bench cow --backend kernel: it measures" 0 \
		"'$TOOL' bench cow --backend kernel --quick --reps 1"
	nested "record -- ptebatch calibrate --quick: it measures and fits" 0 \
		"'$TOOL' calibrate --quick -o '$tmp/cal.json'"
	nested "record -- two kernel runs at once: they take turns on the lent lock" 0 \
		"'$TOOL' run --backend kernel '$tmp/small.scn' >$tmp/n2.out 2>$tmp/n2.err & '$TOOL' run --backend kernel '$tmp/small.scn' && wait \$!"
fi

# ---- 9. the lent lock did not reach it --------------------------------------

if [ -n "$kernel_reason" ]; then
	skip "a ptebatch the lent lock did not reach" "$kernel_reason"
else
	nested "record -- env -u PTEBATCH_THP_LOCK ptebatch run --backend kernel: exit 1 at once" 1 \
		"env -u PTEBATCH_THP_LOCK '$TOOL' run --backend kernel '$tmp/small.scn'"
	grep -q "held by pid [0-9]* (ptebatch record .*an ancestor of this process, which would wait for it forever" "$tmp/n.err"
	ok=$?
	[ "$ok" -eq 0 ] || diag "$tmp/n.err"
	tap_result $ok "and it names the recorder as the ancestor holding the lock"
	begin
	timeout -k 10 "$BOUND" flock "$thp_lock" "$TOOL" run --backend kernel \
		"$tmp/small.scn" >/dev/null 2>"$tmp/t9.err"
	status=$?
	ok=0
	[ "$status" -eq 1 ] && grep -q "held by pid [0-9]* (flock .*an ancestor of this process" "$tmp/t9.err" ||
		{ echo "# status $status (124: timed out)"; diag "$tmp/t9.err"; ok=1; }
	same_state "$tmp/state.before" || ok=1
	tap_result $ok "flock LOCK ptebatch run --backend kernel: exit 1 at once, naming flock as the ancestor that holds the lock"
fi

# ---- 10, 11. signals to a record over a kernel run ---------------------------

# A record of a kernel run of long.scn: its stderr, pid, status in $tmp/r.*
long_under_record() {
	begin
	rm -f "$tmp/r.pid" "$tmp/r.st"
	"$TOOL" record -o "$tmp/r.scn" -- sh -c "'$TOOL' run --backend kernel '$tmp/long.scn' >/dev/null 2>$tmp/r.err & echo \$! >$tmp/r.pid; wait \$!; echo \$? >$tmp/r.st" \
		>/dev/null 2>"$tmp/r.rec" &
	rec=$!
}
if [ -n "$kernel_reason" ]; then
	skip "SIGINT to a record over a kernel run" "$kernel_reason"
	skip "SIGKILL to a kernel run under a record" "$kernel_reason"
else
	long_under_record
	wait_for 'applied_by "$(cat "$tmp/r.pid" 2>/dev/null)"' 600
	applied=$?
	kill -INT "$rec"
	wait_for '! kill -0 "$rec" 2>/dev/null' 600 || kill -KILL "$rec"
	wait "$rec"
	status=$?
	ok=0
	[ "$applied" -eq 0 ] || { echo "# the run under the record never applied its settings"; diag "$tmp/r.err"; ok=1; }
	[ "$status" -eq 130 ] || { echo "# status $status"; diag "$tmp/r.rec"; ok=1; }
	run=$(cat "$tmp/r.pid" 2>/dev/null)
	[ -n "$run" ] && wait_for '! kill -0 "$run" 2>/dev/null' 600 || { echo "# the kernel run is still there"; ok=1; }
	same_state "$tmp/state.before" || ok=1
	tap_result $ok "SIGINT to a record while a kernel run under it has its settings applied: both end, all is back"

	long_under_record
	wait_for 'applied_by "$(cat "$tmp/r.pid" 2>/dev/null)"' 600
	applied=$?
	run=$(cat "$tmp/r.pid" 2>/dev/null)
	[ -n "$run" ] && kill -KILL "$run"
	wait_for '! kill -0 "$rec" 2>/dev/null' 600 || kill -TERM "$rec"
	wait "$rec"
	status=$?
	ok=0
	[ "$applied" -eq 0 ] || { echo "# the run under the record never applied its settings"; diag "$tmp/r.err"; ok=1; }
	[ "$status" -eq 0 ] && grep -q "put back .* that a killed run left" "$tmp/r.rec" ||
		{ echo "# status $status"; diag "$tmp/r.rec"; ok=1; }
	same_state "$tmp/state.before" || ok=1
	tap_result $ok "SIGKILL to a kernel run under a record: the record puts back what it left, and says so"
fi

# ---- 12. a forged PTEBATCH_THP_LOCK -----------------------------------------

if [ -n "$kernel_reason" ]; then
	skip "a forged PTEBATCH_THP_LOCK" "$kernel_reason"
else
	begin
	flock "$thp_lock" sh -c "$(waiter "$tmp/t12")" &
	holder=$!
	wait_for '[ -e "$tmp/t12.up" ]' 600
	: >"$tmp/plain"
	PTEBATCH_THP_LOCK="7 1 0" "$TOOL" run --backend kernel "$tmp/small.scn" \
		>/dev/null 2>"$tmp/t12.err" 7<"$tmp/plain" &
	pid=$!
	wait_for 'grep -q "waiting for the THP settings lock held by pid $holder " "$tmp/t12.err"' 600
	said=$?
	touch "$tmp/t12.go"
	wait "$holder"
	wait "$pid"
	status=$?
	ok=0
	[ "$said" -eq 0 ] && [ "$status" -eq 0 ] ||
		{ echo "# said $said, status $status"; diag "$tmp/t12.err"; ok=1; }
	same_state "$tmp/state.before" || ok=1
	tap_result $ok "a forged PTEBATCH_THP_LOCK (pid 1, a plain file) lends nothing: the run waits for the machine's lock, then runs"
fi

done_testing
