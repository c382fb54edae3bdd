#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# run.sh - run the libFuzzer harnesses for a bounded time (`make fuzz`).
#
#   FUZZ_TIME=60 FUZZ_BUILD=build-fuzz sh fuzz/run.sh scenario ops events
#
# Each harness $FUZZ_BUILD/fuzz_NAME runs for FUZZ_TIME seconds, one after
# the other, in one process (no -jobs), over two corpus directories:
# $FUZZ_BUILD/corpus/NAME, the scratch one, and the committed
# fuzz/corpus/NAME.  libFuzzer writes new inputs only to the first
# directory, so the committed corpus is never changed; the scratch one
# carries what a run found over to the next.  fuzz/NAME.dict, if present,
# is the harness's dictionary.  A crash, leak, timeout or abort is written
# to $FUZZ_BUILD/crashes/NAME-*; the status is 1 if any harness failed,
# and the run ends with one `ptebatch run --fuzz NAME FILE` per input
# kept, the command that reproduces it ($REPRO_TOOL, build-asan/ptebatch
# by default: the harness's sanitizers are ASan's and UBSan's).
set -u
FUZZ_TIME=${FUZZ_TIME:-60}
FUZZ_BUILD=${FUZZ_BUILD:-build-fuzz}
names=$*
status=0
repro=
REPRO_TOOL=${REPRO_TOOL:-build-asan/ptebatch}

mkdir -p "$FUZZ_BUILD/crashes"
for name in $names; do
	bin=$FUZZ_BUILD/fuzz_$name
	scratch=$FUZZ_BUILD/corpus/$name
	mkdir -p "$scratch"
	# An operation is 5 bytes after a byte of policies; 64 of them.
	case $name in
	ops) max_len=321 ;;
	calib) max_len=16384 ;;	# a calibration file is ~10K
	*) max_len=4096 ;;
	esac
	set -- -max_total_time="$FUZZ_TIME" -max_len="$max_len" -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$FUZZ_BUILD/crashes/$name-"
	[ -f "fuzz/$name.dict" ] && set -- "$@" -dict="fuzz/$name.dict"
	echo "== fuzz_$name: $FUZZ_TIME s over $scratch and fuzz/corpus/$name"
	if ! "$bin" "$@" "$scratch" "fuzz/corpus/$name"; then
		echo "fuzz_$name: FAILED; the input is in $FUZZ_BUILD/crashes/:"
		ls -t "$FUZZ_BUILD/crashes" | grep "^$name-" | head -3
		for input in $(ls -t "$FUZZ_BUILD/crashes" | grep "^$name-" |
			       head -3); do
			repro="$repro
  $REPRO_TOOL run --fuzz $name $FUZZ_BUILD/crashes/$input"
		done
		status=1
	fi
done
# What failed, as commands that run the input again the way the harness
# did (in the tool built with AddressSanitizer, as the fuzzer was).
if [ -n "$repro" ]; then
	echo "== fuzz: reproduce with (make SAN=asan first if $REPRO_TOOL is missing):$repro"
fi
exit $status
