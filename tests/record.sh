#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# record.sh - `ptebatch record`, as TAP.
#
# Without root: the converter on stored event streams (tests/record/
# *.events against the *.scn beside them), bad streams and bad flags (a
# command without -o among them).
# As root, on this machine's kernel (SKIP otherwise): recording
# tests/record/known.c, whose memory behaviour is known exactly; the THP
# settings and tracefs left as they were; a ring buffer too small is an
# error naming --buffer-kb; SIGINT stops the command and restores
# everything; the recorded scenario, the converter's expected scenarios
# and the shipped traces (examples/traces/) replay equal on the model and
# the kernel.
#
# Usage: BUILD=build [SAN=asan|tsan] sh tests/record.sh   (from the top of
#        the tree)

BUILD=${BUILD:-build}
TOOL=$(pwd)/$BUILD/ptebatch
KNOWN=$(pwd)/$BUILD/record/known
. tests/tap.sh
ok() { tap_result 0 "$1"; }
not_ok() { tap_result 1 "$1"; }
skip() { n=$((n + 1)); echo "ok $n - # SKIP $1"; }
done_testing() { echo "1..$n"; exit $fail; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

diag() {
	sed -n '1,20s/^/# /p' "$1"
}

# 1. Stored streams convert to the scenarios beside them.
for ev in tests/record/*.events; do
	want=${ev%.events}.scn
	if "$TOOL" record --from-events "$ev" -o "$tmp/got.scn" 2>"$tmp/err" &&
	   diff -u "$want" "$tmp/got.scn" >"$tmp/diff"; then
		ok "record --from-events $ev gives $want"
	else
		diag "$tmp/err"
		diag "$tmp/diff"
		not_ok "record --from-events $ev gives $want"
	fi
done

# 2. Bad streams: exit 2 and FILE:LINE.
bad_stream() {
	name=$1
	printf '%s\n' "$2" >"$tmp/bad.events"
	"$TOOL" record --from-events "$tmp/bad.events" >/dev/null 2>"$tmp/err"
	status=$?
	if [ "$status" -eq 2 ] && grep -q "$3" "$tmp/err"; then
		ok "bad stream refused: $name"
	else
		echo "# status $status"
		diag "$tmp/err"
		not_ok "bad stream refused: $name"
	fi
}
bad_stream "unknown kind" "root 1
1 1 teleport addr=0x1" "bad.events:2: unknown event kind 'teleport'"
bad_stream "bad field" "root 1
1 1 mmap addr=0x1 colour=red" "bad.events:2: bad field 'colour=red' for mmap"
bad_stream "time backwards" "root 1
5 1 execve ret=0
4 1 exit group_dead=1" "bad.events:3: time goes backwards"
bad_stream "no root line" "1 1 execve ret=0" "no 'root PID' line"
bad_stream "no execve" "root 1
1 1 fault_user addr=0x1000 err=0x6" "no execve of the traced command"

# 3. Bad flags: exit 2, one line naming the flag.
bad_flag() {
	name=$1
	shift
	"$TOOL" record "$@" >/dev/null 2>"$tmp/err"
	status=$?
	if [ "$status" -eq 2 ] && grep -q -- "$name" "$tmp/err"; then
		ok "record $* refused naming $name"
	else
		echo "# status $status"
		diag "$tmp/err"
		not_ok "record $* refused naming $name"
	fi
}
bad_flag "no command given"
bad_flag "--buffer-kb" --buffer-kb 0 -- true
bad_flag "--mthp" --mthp 3K=always -- true
bad_flag "--mthp" --mthp 64K=sometimes -- true
bad_flag "--from-events runs no command" --from-events tests/record/tasks.events -- true
bad_flag "the command goes after" true
# The command's own stdout is never mixed into the scenario.
bad_flag "-o FILE.scn is needed when a command runs" -- true
bad_flag "--events writes the stream of a recording" \
	--from-events tests/record/tasks.events --events "$tmp/x.events"

# The rest needs root and tracefs.
if [ "$(id -u)" -ne 0 ]; then
	skip "recording (not root)"
	done_testing
	exit 0
fi

# The THP settings, read under the THP settings lock (backend/thp_sysfs.c)
# so that another run on this machine (a second make check, a CI clone)
# is never caught with its settings half applied.
thp_lock=/run/lock/ptebatch-thp.lock
[ -w /run/lock ] || thp_lock=/tmp/ptebatch-thp.lock
thp_state() {
	flock "$thp_lock" sh -c '
		for f in /sys/kernel/mm/transparent_hugepage/enabled \
			 /sys/kernel/mm/transparent_hugepage/hugepages-*/enabled; do
			[ -r "$f" ] && echo "$f $(cat "$f")"
		done'
}
# The tracefs instance of the recorder PID, if it is still there (only its
# own: another recorder may be running on the machine).
instances() {
	ls /sys/kernel/tracing/instances 2>/dev/null |
		grep -x "ptebatch-record-$1" || true
}

# 4. known.c: the lines of its own mapping are exactly what it does.
thp_state >"$tmp/thp.before"
"$TOOL" record -o "$tmp/known.scn" -- "$KNOWN" 2>"$tmp/err" &
known_pid=$!
if wait "$known_pid"; then
	ok "record known.c exits 0"
else
	diag "$tmp/err"
	not_ok "record known.c exits 0"
fi
# Keep the statements of the 256K region (renamed K), and of touch lines
# only that region's accesses.
awk '
	$2 == "mmap" && $4 == "0x40000" { k = $3 }
	k == "" { next }
	$2 == "touch" {
		out = ""; cur = ""; mode = ""; shown = ""
		for (i = 3; i <= NF; i++) {
			if ($i ~ /^@/) { cur = substr($i, 2); continue }
			if ($i == "r" || $i == "w") { mode = $i; continue }
			if (cur != k) continue
			if (out == "") out = $1 " touch @K"
			if (mode != shown) { out = out " " mode; shown = mode }
			out = out " " $i
		}
		if (out != "") print out
		next
	}
	{ for (i = 1; i <= NF; i++) if ($i == k) $i = "K"; sub(/ at 0x[0-9a-f]+/, ""); print }
' "$tmp/known.scn" | grep -v '^#' >"$tmp/known.got"
cat >"$tmp/known.want" <<'EOF'
P0 mmap K 0x40000 rw
P0 touch @K w 0+64
P0 fork P1
P1 touch @K w 0+16
P1 exit
P0 touch @K w 0+32
P0 munmap K 0 0x40000
P0 exit
EOF
if diff -u "$tmp/known.want" "$tmp/known.got" >"$tmp/diff"; then
	ok "known.c recorded as it behaves: 64 writes, fork, 16 child writes, exit, 32 rewrites, munmap"
else
	diag "$tmp/diff"
	diag "$tmp/known.scn"
	not_ok "known.c recorded as it behaves: 64 writes, fork, 16 child writes, exit, 32 rewrites, munmap"
fi
thp_state >"$tmp/thp.after"
if diff "$tmp/thp.before" "$tmp/thp.after" >"$tmp/diff" &&
   [ -z "$(instances "$known_pid")" ]; then
	ok "THP settings and tracefs instances as before the recording"
else
	diag "$tmp/diff"
	instances "$known_pid" | sed 's/^/# left: /'
	not_ok "THP settings and tracefs instances as before the recording"
fi

# 5. A buffer too small loses events: an error that names --buffer-kb.
"$TOOL" record --buffer-kb 4 -o "$tmp/lost.scn" -- "$KNOWN" 100000 2>"$tmp/err"
status=$?
if [ "$status" -eq 1 ] && grep -q "lost .* events.*--buffer-kb" "$tmp/err" &&
   [ ! -e "$tmp/lost.scn" ]; then
	ok "lost events: exit 1, nothing written, --buffer-kb named"
else
	echo "# status $status"
	diag "$tmp/err"
	not_ok "lost events: exit 1, nothing written, --buffer-kb named"
fi

# 6. SIGINT stops the command and the trace; everything is put back.
"$TOOL" record -o "$tmp/int.scn" -- sleep 30 2>"$tmp/err" &
pid=$!
# Once the command runs (a sanitized build takes a while to get there):
# a background job of a script starts with SIGINT ignored, until the
# recorder installs its handler.
i=0
sleep_pid=
while [ -z "$sleep_pid" ] && [ "$i" -lt 200 ]; do
	sleep 0.1
	sleep_pid=$(pgrep -P "$pid" -x -f "sleep 30")
	i=$((i + 1))
done
kill -INT "$pid"
i=0
while kill -0 "$pid" 2>/dev/null && [ "$i" -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
wait "$pid"
status=$?
thp_state >"$tmp/thp.after"
if [ "$status" -eq 130 ] && diff -q "$tmp/thp.before" "$tmp/thp.after" >/dev/null &&
   [ -z "$(instances "$pid")" ] && [ -n "$sleep_pid" ] &&
   ! kill -0 "$sleep_pid" 2>/dev/null; then
	ok "SIGINT: exit 130 within 10 s, sleep gone, THP and tracefs restored"
else
	echo "# status $status"
	diag "$tmp/err"
	not_ok "SIGINT: exit 130 within 10 s, sleep gone, THP and tracefs restored"
fi

# ptebatch diff FILE $2, as test $1: match, skip (the kernel backend
# cannot run it here, or its count varied from run to run: exit 5) or a
# failure showing the difference.
diff_one() {
	"$TOOL" diff "$2" >"$tmp/diff" 2>&1
	status=$?
	if [ "$status" -eq 0 ]; then
		ok "$1: model and kernel match"
	elif [ "$status" -eq 4 ]; then
		skip "$1: $(tail -1 "$tmp/diff")"
	elif [ "$status" -eq 5 ]; then
		skip "$1: the kernel varies here: $(grep -m1 '^VARIES' "$tmp/diff")"
	else
		diag "$tmp/diff"
		not_ok "$1: model and kernel match"
	fi
}

# 7. The recording, the converter's scenarios and the shipped traces of
#    real programs replay equal on the model and on this kernel.
if [ -n "${SAN:-}" ]; then
	skip "replay on the kernel backend (it skips under sanitizers)"
else
	for f in tests/record/*.scn examples/traces/*.scn examples/traces/*.scn.gz; do
		[ -e "$f" ] && diff_one "diff $f" "$f"
	done
	# The traces again under 64K mTHP: a 4K trace replayed with large
	# folios, where the model's and the kernel's choices must agree.
	for f in examples/traces/*.scn; do
		[ -e "$f" ] || continue
		{ echo "mthp 64K always"; grep -v '^mthp' "$f"; } >"$tmp/64k.scn"
		diff_one "diff $f under 64K mTHP" "$tmp/64k.scn"
	done
	diff_one "the recorded known.c" "$tmp/known.scn"
fi
done_testing
