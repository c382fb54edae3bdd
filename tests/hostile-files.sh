#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# hostile-files.sh - every output flag of every command against the paths
# a hostile (or careless) user gives, as TAP: the rule of lib/outfile.h
# (README, "Output files").
#
# Each flag gets, in a directory of its own:
#   - a device node (a private one, mknod in the test's directory, never
#     /dev/null or /dev/full): written in place, still the device, same
#     major and minor, nothing made beside it;
#   - a FIFO with a reader: the reader gets the output, still a FIFO;
#   - a symbolic link to a file: the link stays a link, its target is
#     replaced only by a run that succeeds, and left byte for byte by one
#     that fails;
#   - an existing regular file and a run that fails: unchanged byte for
#     byte, no temporary file left beside it;
#   - an existing regular file and a run that succeeds: replaced, its mode
#     kept;
#   - a missing directory: exit status 2 and one line naming the flag and
#     the path, before any work (record's command does not run: it would
#     touch a marker; the others print nothing on stdout);
#   - a run stopped by SIGTERM: the target unchanged, no temporary left.
# The flags: run --svg, record -o and --events, bench --json and --plot
# (one arch and --arch A,B), plot --out, calibrate -o and --samples, diff
# --random --dump DIR and --out DIR, explore --out DIR.  Besides: record
# with a command and no -o is refused before it runs; record refuses a
# scenario longer than the readers read (PTEBATCH_SCENARIO_MAX_BYTES
# lowers the 256M bound) and the readers agree on the boundary; `make -n
# bench` names no path in docs/.
#
# Runs that fail or stop on purpose: gnuplot is replaced by a script that
# fails, or that sleeps until the test stops the run; record and calibrate
# wait on a FIFO that no one writes.  Recording a real command needs root
# and tracefs: those cases SKIP with the reason elsewhere, as do device
# nodes without root.
#
# Usage: BUILD=build sh tests/hostile-files.sh   (from the top of the tree;
#        BUILD may be an absolute path, another tree's build)

BUILD=${BUILD:-build}
case $BUILD in
/*) TOOL=$BUILD/ptebatch ;;
*) TOOL=$(pwd)/$BUILD/ptebatch ;;
esac
. tests/tap.sh
tmp=$(mktemp -d) || exit 1
# What a run keeps in $TMPDIR (a failed gnuplot's script) stays in here.
mkdir "$tmp/tmpdir"
TMPDIR=$tmp/tmpdir
export TMPDIR
bg_pids=
cleanup() {
	for p in $bg_pids; do
		kill -KILL "$p" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

diag() {
	sed -n '1,12s/^/# /p' "$1"
}

if [ ! -x "$TOOL" ]; then
	echo "not ok 1 - $TOOL is not built"
	echo "1..1"
	exit 1
fi

# ---- what the cases need ------------------------------------------------

can_mknod=false
mknod "$tmp/probe-node" c 1 3 2>/dev/null && can_mknod=true
rm -f "$tmp/probe-node"

printf 'P0 mmap A 64K rw\nP0 write A 0 64K\nobserve\n' >"$tmp/ok.scn"
# 64M written on a 16M machine: the run fails (ENOMEM, exit 1).
printf 'P0 mmap A 64M rw\nP0 write A 0 64M\nobserve\n' >"$tmp/oom.scn"
# Seconds of work, for a signal to stop.
{
	echo "P0 mmap A 512M rw"
	i=0
	while [ $i -lt 40 ]; do
		echo "P0 write A 0 512M"
		echo "P0 madvise A 0 512M dontneed"
		i=$((i + 1))
	done
	echo observe
} >"$tmp/slow.scn"
printf 'root 1\n1 1 teleport addr=0x1\n' >"$tmp/bad.events"
head -n 5 calibrate/x86_64.samples >"$tmp/few.samples"
mkdir "$tmp/emptysuite"

# gnuplot stand-ins: one that fails, one that sleeps until it is killed.
mkdir "$tmp/fail-bin" "$tmp/slow-bin"
printf '#!/bin/sh\necho "gnuplot stand-in: failing" >&2\nexit 1\n' \
	>"$tmp/fail-bin/gnuplot"
printf '#!/bin/sh\necho $$ >"%s/gnuplot.pid"\nexec sleep 600\n' "$tmp" \
	>"$tmp/slow-bin/gnuplot"
chmod +x "$tmp/fail-bin/gnuplot" "$tmp/slow-bin/gnuplot"
have_gnuplot=false
command -v gnuplot >/dev/null 2>&1 && have_gnuplot=true

BQ="--quick --backend model --reps 1 --size 2M"
"$TOOL" bench gup $BQ --json "$tmp/rows.json" >/dev/null 2>&1

# A kernel side for diff that is the model with every fault count of a
# dio-read made 999 (a planted difference), noting that it ran.
cat >"$tmp/planted" <<EOF
#!/bin/sh
: >"$tmp/planted.ran"
"$TOOL" run --no-check --name "\$6" -- /dev/stdin |
	sed -E '/^[0-9]+ P[0-9]+ dio-read /s/faults [0-9]+/faults 999/'
EOF
# One that cannot run anything here (skips every scenario).
cat >"$tmp/notroot" <<EOF
#!/bin/sh
echo "\$6: skipped on backend kernel: not root: a stand-in" >&2
exit 4
EOF
# One that sleeps until it is killed.
cat >"$tmp/sleeper" <<EOF
#!/bin/sh
echo \$\$ >"$tmp/sleeper.pid"
exec sleep 600
EOF
chmod +x "$tmp/planted" "$tmp/notroot" "$tmp/sleeper"
# The first scenario of seed 3 the planted difference shows in.
rd_index=
i=0
while [ $i -lt 40 ] && [ -z "$rd_index" ]; do
	if PTEBATCH_DIFF_KERNEL=$tmp/planted "$TOOL" diff --random 1 --seed 3 \
		--index $i --no-shrink --out "$tmp/rd-probe" >/dev/null 2>&1; then
		:
	elif [ -e "$tmp/rd-probe/random-3-$i.scn" ]; then
		rd_index=$i
	fi
	i=$((i + 1))
done
# The sequence explore's same-frames finding is (its file's name).
"$TOOL" explore --depth 4 --rules same-frames --quiet \
	--out "$tmp/ex-probe" >/dev/null 2>&1
ex_name=$(ls "$tmp/ex-probe" 2>/dev/null | head -n 1)

# Recording needs root and tracefs; the probe says why not.
rec_reason=
if [ "$(id -u)" -ne 0 ]; then
	rec_reason="not root: recording needs tracefs"
elif ! "$TOOL" record -o "$tmp/probe.scn" -- true >/dev/null \
	2>"$tmp/probe.err"; then
	rec_reason="recording fails here: $(tail -n 1 "$tmp/probe.err")"
fi

# ---- the checks ---------------------------------------------------------

# The names in directory $1, one line (ls's order).
names() {
	LC_ALL=C ls -A "$1" | tr '\n' ' '
}

# The names given, as names() prints them.
these() {
	printf '%s\n' "$@" | LC_ALL=C sort | tr '\n' ' '
}

# Wait (at most 60 s) until "$1" holds; the outcome is checked after.
wait_until() {
	i=0
	while [ $i -lt 600 ]; do
		eval "$1" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# Has process $1 (a child of this shell) ended (a zombie, or reaped)?
gone() {
	[ ! -d "/proc/$1" ] || grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null
}

# Is there a file of this run's beside $1 (".NAME.XXXXXX")?
has_temp() {
	ls -A "$(dirname "$1")" | grep -q "^\.$(basename "$1")\.......\$"
}

# The case directory, fresh.
nd=0
newdir() {
	nd=$((nd + 1))
	d=$tmp/case$nd
	mkdir "$d"
}

# Each flag is a set of functions named after it ($f):
#   ${f}_name        the target's file name in the case directory $d
#   ${f}_ok T        a run that writes T and succeeds
#   ${f}_fail T      a run that opens T and fails (non-zero)
#   ${f}_slow T      a run, in the background, that will not end by
#                    itself; prints nothing; ${f}_ready T says it has
#                    started working (its temporary file is there)
#   ${f}_nowork      after a refused run: proof that no work was done
# Every run's stdout is $d.out, stderr $d.err.

# check_device F: the target a private device node.
check_device() {
	f=$1
	if ! $can_mknod; then
		skip "$f: a device node is written in place" "mknod needs root"
		return
	fi
	newdir
	t=$d/$(${f}_name)
	mknod "$t" c 1 3
	before=$(names "$d")
	${f}_ok "$t" >"$d.out" 2>"$d.err"
	status=$?
	[ -c "$t" ] && [ "$(stat -c %t:%T "$t")" = 1:3 ] &&
		[ "$(names "$d")" = "$before" ] && ok_status "$f" "$status"
	tap_result $? "$f: a device node is written in place: still the device 1:3, nothing beside it (exit $status)"
	[ -c "$t" ] || { echo "# $t is no longer a device:"; ls -la "$d" | sed 's/^/# /'; }
}

# The exit status a successful run of flag $1 has (explore and diff exit
# 1 when they write a finding).
ok_status() {
	case $1 in
	exout|rdout) [ "$2" -eq 1 ] ;;
	*) [ "$2" -eq 0 ] ;;
	esac
}

# check_fifo F: the target a FIFO with a reader.
check_fifo() {
	f=$1
	newdir
	t=$d/$(${f}_name)
	mkfifo "$t"
	cat "$t" >"$d.got" &
	reader=$!
	bg_pids="$bg_pids $reader"
	${f}_ok "$t" >"$d.out" 2>"$d.err"
	status=$?
	# A reader still waiting to open it (the run never opened it) is let
	# go by a writer that opens and closes at once; one waiting on a FIFO
	# that is no longer there (renamed over) is stopped.
	(exec 3>"$t") 2>/dev/null &
	releaser=$!
	bg_pids="$bg_pids $releaser"
	wait_until "gone $reader"
	kill -KILL "$reader" "$releaser" 2>/dev/null
	wait "$reader" 2>/dev/null
	wait "$releaser" 2>/dev/null
	[ -p "$t" ] && [ -s "$d.got" ] && [ "$(names "$d")" = "$(basename "$t") " ] &&
		ok_status "$f" "$status"
	tap_result $? "$f: a FIFO is written in place: its reader gets $(wc -c <"$d.got") bytes, still a FIFO, no rename (exit $status)"
	ok_status "$f" "$status" || diag "$d.err"
}

# check_link F: the target a symbolic link to a file.
check_link() {
	f=$1
	newdir
	t=$d/$(${f}_name)
	echo "the link's target, kept" >"$d/real"
	ln -s real "$t"
	cp "$d/real" "$d.keep"
	${f}_fail "$t" >"$d.out" 2>"$d.err"
	status=$?
	[ "$status" -ne 0 ] && [ -L "$t" ] && [ "$(readlink "$t")" = real ] &&
		cmp -s "$d/real" "$d.keep" &&
		[ "$(names "$d")" = "$(these "$(basename "$t")" real)" ]
	tap_result $? "$f: a link, a run that fails: the link kept, its target byte for byte (exit $status)"
	[ "$status" -ne 0 ] || diag "$d.err"
	${f}_ok "$t" >"$d.out" 2>"$d.err"
	status=$?
	ok_status "$f" "$status" && [ -L "$t" ] && [ "$(readlink "$t")" = real ] &&
		[ -s "$d/real" ] && ! cmp -s "$d/real" "$d.keep" &&
		[ "$(names "$d")" = "$(these "$(basename "$t")" real)" ]
	tap_result $? "$f: a link, a run that succeeds: still a link, the file it names replaced (exit $status)"
	ok_status "$f" "$status" || diag "$d.err"
}

# check_fail F: an existing file and a run that fails.
check_fail() {
	f=$1
	newdir
	t=$d/$(${f}_name)
	printf 'an existing file\nkept byte for byte\n' >"$t"
	chmod 640 "$t"
	cp -p "$t" "$d.keep"
	${f}_fail "$t" >"$d.out" 2>"$d.err"
	status=$?
	[ "$status" -ne 0 ] && [ "$status" -lt 128 ] && cmp -s "$t" "$d.keep" &&
		[ "$(names "$d")" = "$(basename "$t") " ]
	tap_result $? "$f: an existing file, a run that fails: unchanged, nothing beside it (exit $status; $(names "$d"))"
	[ "$status" -ne 0 ] || diag "$d.err"
}

# check_replace F: an existing file and a run that succeeds.
check_replace() {
	f=$1
	newdir
	t=$d/$(${f}_name)
	printf 'an existing file\n' >"$t"
	chmod 640 "$t"
	cp "$t" "$d.keep"
	${f}_ok "$t" >"$d.out" 2>"$d.err"
	status=$?
	ok_status "$f" "$status" && [ -s "$t" ] && ! cmp -s "$t" "$d.keep" &&
		[ "$(stat -c %a "$t")" = 640 ] &&
		[ "$(names "$d")" = "$(basename "$t") " ]
	tap_result $? "$f: an existing file, a run that succeeds: replaced, mode $(stat -c %a "$t") kept (exit $status)"
	ok_status "$f" "$status" || diag "$d.err"
}

# check_missing F: the target in a directory that does not exist.
check_missing() {
	f=$1
	newdir
	# A directory flag's directory is made if it is missing: its parent
	# is the one missing then.
	case $f in
	dump|rdout|exout) t=$d/nodir/sub/$(${f}_name) ;;
	*) t=$d/nodir/$(${f}_name) ;;
	esac
	${f}_ok "$t" >"$d.out" 2>"$d.err"
	status=$?
	[ "$status" -eq 2 ] && head -n 1 "$d.err" | grep -q -- "$(${f}_flag): $d/nodir" &&
		${f}_nowork && [ ! -e "$d/nodir" ]
	tap_result $? "$f: a missing directory: exit 2 naming $(${f}_flag) and the path, before any work (exit $status)"
	[ "$status" -eq 2 ] || diag "$d.err"
}

# check_term F: SIGTERM while the run works.
check_term() {
	f=$1
	newdir
	t=$d/$(${f}_name)
	printf 'an existing file\nkept byte for byte\n' >"$t"
	cp "$t" "$d.keep"
	rm -f "$tmp/gnuplot.pid" "$tmp/sleeper.pid"
	before=$(names "$d")
	${f}_slow "$t" >"$d.out" 2>"$d.err" &
	pid=$!
	bg_pids="$bg_pids $pid"
	wait_until "${f}_ready '$t'"
	kill -TERM "$pid"
	# One that does not end by it (a broken build) is killed, and fails.
	wait_until "gone $pid" || kill -KILL "$pid" 2>/dev/null
	wait "$pid"
	status=$?
	# What the run started (a gnuplot stand-in, a kernel side) goes too.
	for p in $(cat "$tmp/gnuplot.pid" "$tmp/sleeper.pid" 2>/dev/null); do
		kill -KILL "$p" 2>/dev/null
	done
	[ "$status" -eq 143 ] && cmp -s "$t" "$d.keep" &&
		[ "$(names "$d")" = "$before" ]
	tap_result $? "$f: SIGTERM while it works: the file unchanged, no temporary left (exit $status; $(names "$d"))"
	[ "$status" -eq 143 ] || diag "$d.err"
}

check_all() {
	check_device "$1"
	check_fifo "$1"
	check_link "$1"
	check_fail "$1"
	check_replace "$1"
	check_missing "$1"
	check_term "$1"
}

no_stdout() {
	[ ! -s "$d.out" ]
}

# ---- run --svg ----------------------------------------------------------

svg_name() { echo x.svg; }
svg_flag() { echo --svg; }
svg_ok() { "$TOOL" run --svg "$1" "$tmp/ok.scn"; }
svg_fail() { "$TOOL" run --memory 16M --svg "$1" "$tmp/oom.scn"; }
svg_slow() { exec "$TOOL" run --no-check --svg "$1" "$tmp/slow.scn"; }
svg_ready() { has_temp "$1"; }
svg_nowork() { no_stdout; }
check_all svg

# ---- record -o ------------------------------------------------------------

rec_o_name() { echo x.scn; }
rec_o_flag() { echo -o; }
rec_o_ok() { "$TOOL" record --from-events tests/record/tasks.events -o "$1"; }
rec_o_fail() { "$TOOL" record --from-events "$tmp/bad.events" -o "$1"; }
# Waits to read a FIFO no one writes, its output already open.
rec_o_slow() {
	mkfifo "$tmp/in.fifo" 2>/dev/null
	exec "$TOOL" record --from-events "$tmp/in.fifo" -o "$1"
}
rec_o_ready() { has_temp "$1"; }
rec_o_nowork() { no_stdout; }
check_device rec_o
check_fifo rec_o
check_link rec_o
check_fail rec_o
check_replace rec_o
check_term rec_o
if [ -z "$rec_reason" ]; then
	# With a command: -o in a missing directory is refused before it runs.
	newdir
	"$TOOL" record -o "$d/nodir/x.scn" -- touch "$d.marker" >"$d.out" 2>"$d.err"
	status=$?
	[ "$status" -eq 2 ] && [ ! -e "$d.marker" ] &&
		head -n 1 "$d.err" | grep -q -- "-o: $d/nodir/x.scn"
	tap_result $? "rec_o: a missing directory: exit 2 naming -o and the path, the command never ran (exit $status)"
	[ "$status" -eq 2 ] || diag "$d.err"
	# A command that cannot run: the trace fails, the file stays.
	newdir
	echo "an old scenario" >"$d/old.scn"
	cp "$d/old.scn" "$d.keep"
	"$TOOL" record -o "$d/old.scn" -- "$d/no-such-command" >"$d.out" 2>"$d.err"
	status=$?
	[ "$status" -eq 1 ] && cmp -s "$d/old.scn" "$d.keep" &&
		[ "$(names "$d")" = "old.scn " ]
	tap_result $? "rec_o: record -o OLD -- a command that does not exist: OLD kept, nothing beside it (exit $status)"
	[ "$status" -eq 1 ] || diag "$d.err"
	# A command's stdout is its own, never in the scenario.
	newdir
	"$TOOL" record -o "$d/x.scn" -- echo "the command's own line" >"$d.out" 2>"$d.err"
	status=$?
	[ "$status" -eq 0 ] && grep -qx "the command's own line" "$d.out" &&
		! grep -qx "the command's own line" "$d/x.scn" &&
		"$TOOL" run "$d/x.scn" >/dev/null 2>&1
	tap_result $? "rec_o: the command's stdout stays on stdout, the scenario in -o runs (exit $status)"
	[ "$status" -eq 0 ] || diag "$d.err"
	# FILE.gz: compressed, and read as it is.
	newdir
	"$TOOL" record -o "$d/x.scn.gz" -- true >"$d.out" 2>"$d.err"
	status=$?
	[ "$status" -eq 0 ] && gzip -t "$d/x.scn.gz" 2>/dev/null &&
		"$TOOL" run "$d/x.scn.gz" >/dev/null 2>&1
	tap_result $? "rec_o: -o FILE.scn.gz is gzip, and run reads it (exit $status)"
	[ "$status" -eq 0 ] || diag "$d.err"
else
	check_missing rec_o
	skip "rec_o: record -o OLD -- a command that does not exist: OLD kept" "$rec_reason"
	skip "rec_o: the command's stdout stays on stdout" "$rec_reason"
	skip "rec_o: -o FILE.scn.gz is gzip, and run reads it" "$rec_reason"
fi
newdir
"$TOOL" record -- touch "$d.marker" >"$d.out" 2>"$d.err"
status=$?
[ "$status" -eq 2 ] && [ ! -e "$d.marker" ] &&
	head -n 1 "$d.err" | grep -q -- "-o FILE.scn is needed"
tap_result $? "record -- CMD without -o: exit 2, CMD never ran (exit $status)"

# ---- record --events ------------------------------------------------------

rec_ev_name() { echo x.events; }
rec_ev_flag() { echo --events; }
rec_ev_ok() { "$TOOL" record -o "$d.scn" --events "$1" -- true; }
rec_ev_fail() { "$TOOL" record -o "$d.scn" --events "$1" -- "$d/no-such-command"; }
# --events opened, then -o blocks on a FIFO no one reads.
rec_ev_slow() {
	mkfifo "$tmp/out.fifo" 2>/dev/null
	exec "$TOOL" record --events "$1" -o "$tmp/out.fifo" -- true
}
rec_ev_ready() { has_temp "$1"; }
rec_ev_nowork() { [ ! -e "$d.marker" ]; }
if [ -z "$rec_reason" ]; then
	check_device rec_ev
	check_fifo rec_ev
	check_link rec_ev
	check_fail rec_ev
	check_replace rec_ev
	newdir
	"$TOOL" record -o "$d/x.scn" --events "$d/nodir/x.events" -- touch "$d.marker" \
		>"$d.out" 2>"$d.err"
	status=$?
	[ "$status" -eq 2 ] && [ ! -e "$d.marker" ] && [ ! -e "$d/x.scn" ] &&
		head -n 1 "$d.err" | grep -q -- "--events: $d/nodir/x.events"
	tap_result $? "rec_ev: a missing directory: exit 2 naming --events, the command never ran (exit $status)"
	check_term rec_ev
	# SIGTERM while the command runs stops it: both files whole.
	newdir
	"$TOOL" record -o "$d/x.scn" --events "$d/x.events" -- sleep 600 \
		>"$d.out" 2>"$d.err" &
	pid=$!
	bg_pids="$bg_pids $pid"
	wait_until 'pgrep -P $pid -x sleep >/dev/null'
	kill -TERM "$pid"
	wait_until "gone $pid" || kill -KILL "$pid" 2>/dev/null
	wait "$pid"
	status=$?
	[ "$status" -eq 130 ] && "$TOOL" run "$d/x.scn" >/dev/null 2>&1 &&
		"$TOOL" record --from-events "$d/x.events" >/dev/null 2>&1 &&
		[ "$(names "$d")" = "x.events x.scn " ]
	tap_result $? "record: SIGTERM while the command runs stops it, -o and --events written whole (exit $status)"
	[ "$status" -eq 130 ] || diag "$d.err"
else
	for c in "a device node" "a FIFO" "a link, a run that fails" \
		 "a link, a run that succeeds" "an existing file, a run that fails" \
		 "an existing file, a run that succeeds" "a missing directory" \
		 "SIGTERM while it works" "SIGTERM while the command runs"; do
		skip "rec_ev: $c" "$rec_reason"
	done
fi

# ---- record: never write what cannot be read ----------------------------

newdir
echo "an old scenario" >"$d/x.scn"
cp "$d/x.scn" "$d.keep"
size=$(wc -c <tests/record/clusters.scn)
PTEBATCH_SCENARIO_MAX_BYTES=$((size - 1)) "$TOOL" record \
	--from-events tests/record/clusters.events -o "$d/x.scn" >"$d.out" 2>"$d.err"
status=$?
[ "$status" -eq 1 ] && cmp -s "$d/x.scn" "$d.keep" &&
	grep -q "more than the $((size - 1)) bytes of scenario text that run, diff and bench replay read: nothing written; record a shorter run" "$d.err" &&
	[ "$(names "$d")" = "x.scn " ]
tap_result $? "record: a scenario one byte past the readers' bound is refused, nothing written (exit $status)"
[ "$status" -eq 1 ] || diag "$d.err"
PTEBATCH_SCENARIO_MAX_BYTES=$size "$TOOL" record \
	--from-events tests/record/clusters.events -o "$d/y.scn.gz" >"$d.out" 2>"$d.err" &&
	PTEBATCH_SCENARIO_MAX_BYTES=$size "$TOOL" run "$d/y.scn.gz" >/dev/null 2>&1 &&
	PTEBATCH_SCENARIO_MAX_BYTES=$size "$TOOL" run tests/record/clusters.scn >/dev/null 2>&1 &&
	! PTEBATCH_SCENARIO_MAX_BYTES=$((size - 1)) "$TOOL" run "$d/y.scn.gz" >/dev/null 2>&1 &&
	! PTEBATCH_SCENARIO_MAX_BYTES=$((size - 1)) "$TOOL" run tests/record/clusters.scn >/dev/null 2>&1
tap_result $? "record and run agree on the bound: $size bytes written and read (plain and .gz), one byte less refused by both"

# ---- bench --json -----------------------------------------------------------

json_name() { echo rows.json; }
json_flag() { echo --json; }
json_ok() { "$TOOL" bench gup $BQ --json "$1"; }
json_fail() {
	PATH=$tmp/fail-bin:$PATH "$TOOL" bench gup $BQ --json "$1" \
		--plot "$(dirname "$1")/gup.svg"
}
json_slow() {
	exec env PATH="$tmp/slow-bin:$PATH" "$TOOL" bench gup $BQ --json "$1" \
		--plot "$(dirname "$1")/gup.svg"
}
json_ready() { [ -s "$tmp/gnuplot.pid" ]; }
json_nowork() { no_stdout; }
check_all json

# ---- bench --plot ---------------------------------------------------------

# gup.svg: the gup figure is the file itself (figure.h).
plot_name() { echo gup.svg; }
plot_flag() { echo --plot; }
plot_ok() { "$TOOL" bench gup $BQ --plot "$1"; }
plot_fail() { PATH=$tmp/fail-bin:$PATH "$TOOL" bench gup $BQ --plot "$1"; }
plot_slow() {
	exec env PATH="$tmp/slow-bin:$PATH" "$TOOL" bench gup $BQ --plot "$1"
}
plot_ready() { [ -s "$tmp/gnuplot.pid" ]; }
plot_nowork() { no_stdout; }
if $have_gnuplot; then
	check_all plot
else
	skip "plot: the cases drawn by gnuplot" "no gnuplot"
fi

# ---- plot --out -----------------------------------------------------------

plotout_name() { echo fig.svg; }
plotout_flag() { echo --out; }
plotout_ok() { "$TOOL" plot --out "$1" --only gup "$tmp/rows.json"; }
plotout_fail() {
	PATH=$tmp/fail-bin:$PATH "$TOOL" plot --out "$1" --only gup "$tmp/rows.json"
}
plotout_slow() {
	exec env PATH="$tmp/slow-bin:$PATH" "$TOOL" plot --out "$1" --only gup \
		"$tmp/rows.json"
}
plotout_ready() { [ -s "$tmp/gnuplot.pid" ]; }
plotout_nowork() { no_stdout; }
if $have_gnuplot; then
	check_all plotout
else
	skip "plotout: the cases drawn by gnuplot" "no gnuplot"
fi

# ---- bench --arch A,B --json ------------------------------------------------

archjson_name() { echo rows.json; }
archjson_flag() { echo --json; }
archjson_ok() { "$TOOL" bench gup $BQ --arch x86_64,x86-pae --json "$1"; }
archjson_fail() {
	PATH=$tmp/fail-bin:$PATH "$TOOL" bench gup $BQ --arch x86_64,x86-pae \
		--json "$1" --plot "$(dirname "$1")/a.svg"
}
archjson_slow() {
	exec env PATH="$tmp/slow-bin:$PATH" "$TOOL" bench gup $BQ --arch x86_64,x86-pae \
		--json "$1" --plot "$(dirname "$1")/a.svg"
}
archjson_ready() { [ -s "$tmp/gnuplot.pid" ]; }
archjson_nowork() { no_stdout; }
if [ -x "$(dirname "$TOOL")/x86-pae/ptebatch" ]; then
	check_all archjson
	# Its runs' rows never go beside --json under names of their own.
	newdir
	echo "someone's file" >"$d/rows.json.x86_64"
	cp "$d/rows.json.x86_64" "$d.keep"
	"$TOOL" bench gup $BQ --arch x86_64,x86-pae --json "$d/rows.json" \
		>"$d.out" 2>"$d.err"
	status=$?
	[ "$status" -eq 0 ] && cmp -s "$d/rows.json.x86_64" "$d.keep" &&
		[ "$(names "$d")" = "rows.json rows.json.x86_64 " ] &&
		[ "$(grep -c '"arch":"x86-pae"' "$d/rows.json")" -gt 0 ]
	tap_result $? "archjson: FILE.x86_64 beside --json FILE is left alone, FILE has every arch's rows (exit $status)"
else
	skip "archjson: bench --arch x86_64,x86-pae --json" "no x86-pae build (make tests)"
fi

# ---- calibrate -o ---------------------------------------------------------

cal_name() { echo c.json; }
cal_flag() { echo -o; }
cal_ok() { "$TOOL" calibrate --from-samples calibrate/x86_64.samples -o "$1"; }
cal_fail() { "$TOOL" calibrate --from-samples "$tmp/few.samples" -o "$1"; }
cal_slow() {
	mkfifo "$tmp/in.fifo" 2>/dev/null
	exec "$TOOL" calibrate --from-samples "$tmp/in.fifo" -o "$1"
}
cal_ready() { has_temp "$1"; }
cal_nowork() { no_stdout; }
check_all cal

# ---- calibrate --samples ----------------------------------------------------

samples_name() { echo s.samples; }
samples_flag() { echo --samples; }
samples_ok() {
	"$TOOL" calibrate --from-samples calibrate/x86_64.samples --recount \
		--samples "$1" -o "$d.json"
}
samples_fail() {
	"$TOOL" calibrate --from-samples calibrate/x86_64.samples --recount \
		--suite "$tmp/emptysuite" --samples "$1" -o "$d.json"
}
samples_slow() {
	mkfifo "$tmp/in.fifo" 2>/dev/null
	exec "$TOOL" calibrate --from-samples "$tmp/in.fifo" --recount \
		--samples "$1" -o "$d.json"
}
samples_ready() { has_temp "$1"; }
samples_nowork() { no_stdout; }
check_all samples
# No FILE.samples made beside a device given as -o.
if $can_mknod && [ "$(id -u)" -eq 0 ]; then
	newdir
	mknod "$d/null" c 1 3
	"$TOOL" calibrate --quick -o "$d/null" >"$d.out" 2>"$d.err"
	status=$?
	[ "$status" -eq 2 ] && [ "$(names "$d")" = "null " ] &&
		grep -q -- "-o $d/null is not a regular file: name the samples' file with --samples" "$d.err"
	tap_result $? "calibrate -o DEVICE without --samples: refused before measuring, no DEVICE.samples (exit $status)"
else
	skip "calibrate -o DEVICE without --samples" "mknod and calibrate need root"
fi

# ---- diff --random --dump DIR -----------------------------------------------

# The files of the directory: random-SEED-I.scn.
dump_name() { echo random-1-1.scn; }
dump_flag() { echo --dump; }
dump_ok() {
	"$TOOL" diff --random 1 --seed 1 --index 1 --dump "$(dirname "$1")"
}
# random-1-0.scn, written first, cannot be: a directory.
dump_fail() {
	mkdir -p "$(dirname "$1")/random-1-0.scn"
	"$TOOL" diff --random 2 --seed 1 --dump "$(dirname "$1")"
	status=$?
	rmdir "$(dirname "$1")/random-1-0.scn"
	return $status
}
# random-1-0.scn, written first, a FIFO no one reads.
dump_slow() {
	mkfifo "$(dirname "$1")/random-1-0.scn"
	exec "$TOOL" diff --random 2 --seed 1 --dump "$(dirname "$1")"
}
# In openat() (257 on x86-64) of the FIFO, waiting for a reader.
dump_ready() { [ "$(cut -d ' ' -f 1 "/proc/$pid/syscall" 2>/dev/null)" = 257 ]; }
dump_nowork() { no_stdout; }
check_device dump
check_fifo dump
check_link dump
check_fail dump
check_replace dump
check_missing dump
check_term_dump() {
	newdir
	t=$d/random-1-1.scn
	printf 'an existing file\n' >"$t"
	cp "$t" "$d.keep"
	dump_slow "$t" >"$d.out" 2>"$d.err" &
	pid=$!
	bg_pids="$bg_pids $pid"
	wait_until "dump_ready '$t'"
	kill -TERM "$pid"
	wait_until "gone $pid" || kill -KILL "$pid" 2>/dev/null
	wait "$pid"
	status=$?
	[ "$status" -eq 143 ] && cmp -s "$t" "$d.keep" &&
		[ "$(names "$d")" = "random-1-0.scn random-1-1.scn " ]
	tap_result $? "dump: SIGTERM while it waits to write: the files unchanged, no temporary left (exit $status; $(names "$d"))"
}
check_term_dump

# ---- diff --random --out DIR ------------------------------------------------

rdout_name() { echo "random-3-$rd_index.scn"; }
rdout_flag() { echo --out; }
rdout_ok() {
	PTEBATCH_DIFF_KERNEL=$tmp/planted "$TOOL" diff --random 1 --seed 3 \
		--index "$rd_index" --no-shrink --out "$(dirname "$1")"
}
# A kernel side that runs nothing: no finding, the run skipped.
rdout_fail() {
	PTEBATCH_DIFF_KERNEL=$tmp/notroot "$TOOL" diff --random 1 --seed 3 \
		--index "$rd_index" --out "$(dirname "$1")"
}
rdout_slow() {
	exec env PTEBATCH_DIFF_KERNEL="$tmp/sleeper" "$TOOL" diff --random 1 --seed 3 \
		--index "$rd_index" --out "$(dirname "$1")"
}
rdout_ready() { [ -s "$tmp/sleeper.pid" ]; }
# The kernel side never ran.
rdout_nowork() { [ ! -e "$tmp/planted.ran" ] && no_stdout; }
if [ -n "$rd_index" ]; then
	check_device rdout
	check_fifo rdout
	check_link rdout
	check_fail rdout
	check_replace rdout
	rm -f "$tmp/planted.ran"
	check_missing rdout
	check_term rdout
else
	skip "rdout: diff --random --out DIR" "the planted difference was not found"
fi

# ---- explore --out DIR ------------------------------------------------------

exout_name() { echo "$ex_name"; }
exout_flag() { echo --out; }
exout_ok() {
	"$TOOL" explore --depth 4 --rules same-frames --quiet --out "$(dirname "$1")"
}
# Nothing found at depth 3: the file is not touched.
exout_fail() {
	"$TOOL" explore --depth 3 --rules same-frames --quiet \
		--out "$(dirname "$1")" && return 1
}
exout_slow() {
	exec "$TOOL" explore --depth 6 --quiet --out "$(dirname "$1")"
}
exout_ready() { sleep 1; }
exout_nowork() { no_stdout; }
if [ -n "$ex_name" ]; then
	check_device exout
	check_fifo exout
	check_link exout
	check_fail exout
	check_replace exout
	check_missing exout
	check_term exout
else
	skip "exout: explore --out DIR" "no same-frames finding at depth 4"
fi

# ---- make bench leaves the checkout alone -----------------------------------

if command -v make >/dev/null 2>&1; then
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -n -s bench BUILD="$BUILD" \
		>"$tmp/make-n" 2>&1
	status=$?
	[ "$status" -eq 0 ] && grep -q 'bench all' "$tmp/make-n" &&
		! grep -q 'docs/' "$tmp/make-n"
	tap_result $? "make -n bench names no path in docs/ (its results go under build/)"
	grep 'docs/' "$tmp/make-n" | sed -n '1,3s/^/# /p'
else
	skip "make -n bench names no path in docs/" "no make"
fi

echo "1..$n"
exit $fail
