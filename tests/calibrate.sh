#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# calibrate.sh - `ptebatch calibrate` and `ptebatch predict`, as TAP.
#
# Nothing here is timed; the checks are of form and of arithmetic:
#   - bad flags and bad files (a missing, malformed or foreign
#     calibration; a malformed samples file) exit 2 naming the flag or
#     the file (and line), print no record, and never crash;
#   - predict with the shipped calibration (calibrate/ARCH.json, what a
#     clean checkout has): every process statement of a scenario gets
#     "predicted US" (US >= 0), the record without them is `run`'s, the
#     total is their sum, and a batched variant's counters give another
#     total;
#   - the shipped samples refit (--from-samples, no root) to a calibration
#     with the shipped costs, and --validate prints every held-out family;
#   - as root: calibrate --quick writes a calibration and its samples, the
#     calibration reads back (predict takes it) and refitting its samples
#     gives the same costs.  Not root, or a sanitizer build (the kernel
#     backend does not run there): SKIP with the reason.
#
# Usage: BUILD=build sh tests/calibrate.sh   (from the top of the tree)

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

# same_costs A B: the two calibrations have the same counters, states and
# costs (to 1e-6 relative: another libm or CPU may round the last digits
# of the solve otherwise).
same_costs() {
	awk 'function key(line) { gsub(/[ ,]/, "", line); return line }
	     /"counter"|"state"/ { t[FILENAME] = t[FILENAME] key($0) "\n" }
	     /"us"/ { v[FILENAME, ++nv[FILENAME]] = $2 + 0 }
	     END {
		if (t[ARGV[1]] != t[ARGV[2]] || nv[ARGV[1]] != nv[ARGV[2]] ||
		    !nv[ARGV[1]])
			exit 1
		for (i = 1; i <= nv[ARGV[1]]; i++) {
			a = v[ARGV[1], i]; b = v[ARGV[2], i]
			d = a - b; if (d < 0) d = -d
			m = a < 0 ? -a : a
			if (d > 1e-6 * m + 1e-9)
				exit 1
		}
	     }' "$1" "$2"
}

arch=$(uname -m)
shipped=calibrate/$arch.json
shipped_samples=calibrate/$arch.samples

cat >"$tmp/small.scn" <<'EOF'
mthp 64K always
P0 mmap A 1M rw
P0 write A 0 1M value 0x11
P0 mprotect A 0 1M r
P0 mprotect A 0 1M rw
P0 fork P1
P1 write A 0 256K value 0x22
P1 exit
P0 write A 0 1M value 0x33
P0 register H A 0 512K
P0 unregister H
P0 munmap A 0 1M
EOF

# ---- bad input --------------------------------------------------------

# usage NAME WHAT CMD ARGS...: exit status 2, stderr's first line names
# WHAT, nothing on stdout.
usage() {
	name=$1
	what=$2
	shift 2
	"$TOOL" "$@" >"$tmp/out" 2>"$tmp/err"
	status=$?
	[ "$status" -eq 2 ] && head -n 1 "$tmp/err" | grep -qF -- "$what" &&
		[ ! -s "$tmp/out" ]
	tap_result $? "$name: exit 2 naming $what (exit $status)"
	[ "$status" -eq 2 ] || sed 's/^/# /' "$tmp/err"
}

echo '{"version": 1, "machine": ' >"$tmp/broken.json"
echo '{"version": 7}' >"$tmp/version.json"
printf '# ptebatch calibration samples 1\nscenario stmt family size us fault\nx.scn 3 fault 4k 12.5 -1\n' \
	>"$tmp/neg.samples"
printf '# ptebatch calibration samples 1\nscenario stmt family size us no_such_counter\n' \
	>"$tmp/counter.samples"
printf 'not samples\n' >"$tmp/magic.samples"

usage "predict: a missing calibration" "$tmp/absent.json" \
	predict --calibration "$tmp/absent.json" "$tmp/small.scn"
usage "predict: a calibration that is not JSON" "$tmp/broken.json:" \
	predict --calibration "$tmp/broken.json" "$tmp/small.scn"
usage "predict: a calibration of another version" "$tmp/version.json" \
	predict --calibration "$tmp/version.json" "$tmp/small.scn"
usage "predict: no scenario" "no scenario file" predict
usage "predict: an unknown variant" "--variant" \
	predict --variant nosuch "$tmp/small.scn"
usage "calibrate: a negative count" "$tmp/neg.samples:3:" \
	calibrate --from-samples "$tmp/neg.samples" -o "$tmp/x.json"
usage "calibrate: an unknown counter" "$tmp/counter.samples:2:" \
	calibrate --from-samples "$tmp/counter.samples" -o "$tmp/x.json"
usage "calibrate: not a samples file" "$tmp/magic.samples:1:" \
	calibrate --from-samples "$tmp/magic.samples" -o "$tmp/x.json"
printf '# ptebatch calibration samples 1\nscenario stmt family size us fault\nx.scn 3 fault 4k 12.5 1\nx.scn 4 fault 4k 25 2\n' \
	>"$tmp/few.samples"
usage "calibrate: fewer samples than counters" "fewer than the" \
	calibrate --from-samples "$tmp/few.samples" -o "$tmp/x.json"
usage "calibrate: --reps 0" "--reps" calibrate --reps 0
usage "calibrate: --from-samples with --quick" "--from-samples" \
	calibrate --from-samples "$tmp/neg.samples" --quick
usage "calibrate: a scenario file that is not there" "extra:" \
	calibrate extra
usage "calibrate: --from-samples with --backend" "--from-samples" \
	calibrate --from-samples "$tmp/neg.samples" --backend vm
usage "calibrate: --from-samples with a scenario file" "--from-samples" \
	calibrate --from-samples "$tmp/neg.samples" "$tmp/small.scn"
usage "calibrate: an unknown backend" "--backend" calibrate --backend model
usage "calibrate: --time-insns with --backend vm" "--time-insns" \
	calibrate --time-insns --backend vm
usage "calibrate: --samples-only without --samples" "--samples-only" \
	calibrate --samples-only
usage "calibrate: --samples-only with -o" "--samples-only" \
	calibrate --samples-only --samples "$tmp/s.samples" -o "$tmp/x.json"
usage "calibrate: --suite and scenario files" "--suite" \
	calibrate --suite calibrate "$tmp/small.scn"
printf '# ptebatch calibration samples 1\nscenario stmt family size ms fault\n' \
	>"$tmp/unit.samples"
usage "calibrate: samples in an unknown unit" "$tmp/unit.samples:2:" \
	calibrate --from-samples "$tmp/unit.samples" -o "$tmp/x.json"
usage "calibrate: --recount without samples" "--recount" calibrate --recount
usage "calibrate: --recount, scenarios not in --suite" "--suite DIR" \
	calibrate --from-samples "$shipped_samples" --recount --suite "$tmp" \
	-o "$tmp/x.json"
[ ! -e "$tmp/x.json" ]
tap_result $? "no calibration written from a bad samples file"

# ---- predict with the shipped calibration -----------------------------

if [ ! -f "$shipped" ]; then
	skip "predict with the shipped calibration" "no $shipped for $arch"
else
	"$TOOL" predict --calibration "$shipped" "$tmp/small.scn" \
		>"$tmp/pred" 2>"$tmp/err"
	status=$?
	tap_result "$status" "predict --calibration $shipped (exit $status)"
	[ "$status" -eq 0 ] || sed 's/^/# /' "$tmp/err"
	bad=$(awk '/^[0-9]+ P[0-9]+ .*: faults / {
			p = ""
			for (i = 1; i < NF; i++)
				if ($i == "predicted")
					p = $(i + 1)
			if (p !~ /^[0-9]+(\.[0-9]+)?$/)
				print
			sum += p
			nr++
		}
		/^# predicted total: / { total = $4 }
		END {
			if (nr != 11)
				print nr " process statements, not 11"
			d = sum - total
			if (d < -0.1 * nr || d > 0.1 * nr)
				print "total " total " is not the sum " sum
		}' "$tmp/pred")
	[ -z "$bad" ]
	tap_result $? "every statement predicted, the total their sum"
	[ -z "$bad" ] || echo "$bad" | sed 's/^/# /'

	"$TOOL" run "$tmp/small.scn" >"$tmp/plain" 2>&1
	sed -e '/^# predicted/d' -e 's/ predicted [0-9.]*//' "$tmp/pred" \
		>"$tmp/unpred"
	cmp -s "$tmp/unpred" "$tmp/plain"
	tap_result $? "the record is run's but for the predictions"
	cmp -s "$tmp/unpred" "$tmp/plain" ||
		diff "$tmp/plain" "$tmp/unpred" | head -n 10 | sed 's/^/# /'

	"$TOOL" predict --calibration "$shipped" --variant seeds \
		"$tmp/small.scn" >"$tmp/pred-seeds" 2>"$tmp/err"
	a=$(sed -n 's/^# predicted total: \([0-9.]*\).*/\1/p' "$tmp/pred")
	b=$(sed -n 's/^# predicted total: \([0-9.]*\).*/\1/p' "$tmp/pred-seeds")
	[ -n "$a" ] && [ -n "$b" ] && [ "$a" != "$b" ]
	tap_result $? "seeds predicts another total than upstream ($a, $b us)"

	grep -q "^# predicted: kernel microseconds (predicted) from $shipped (" "$tmp/pred"
	tap_result $? "the record names the calibration and its machine"

	sed "s/\"arch\": \"[^\"]*\"/\"arch\": \"sparc64\"/" "$shipped" \
		>"$tmp/foreign.json"
	"$TOOL" predict --calibration "$tmp/foreign.json" "$tmp/small.scn" \
		>/dev/null 2>"$tmp/err"
	status=$?
	[ "$status" -eq 0 ] && grep -q "measured on sparc64" "$tmp/err"
	tap_result $? "another machine's calibration: a warning, not a failure"
fi

# ---- the shipped samples, refitted ------------------------------------

if [ ! -f "$shipped_samples" ]; then
	skip "refit the shipped samples" "no $shipped_samples for $arch"
else
	"$TOOL" calibrate --from-samples "$shipped_samples" --validate \
		-o "$tmp/refit.json" >"$tmp/refit" 2>"$tmp/err"
	status=$?
	tap_result "$status" "calibrate --from-samples $shipped_samples (exit $status)"
	[ "$status" -eq 0 ] || sed 's/^/# /' "$tmp/err"
	same_costs "$shipped" "$tmp/refit.json"
	tap_result $? "refitting the shipped samples gives the shipped calibration"
	missing=
	for f in fork munmap cow mprotect register; do
		grep -q "^  $f  *[0-9]* samples  median |error|" "$tmp/refit" ||
			missing="$missing $f"
	done
	grep -q "^  fit 4k + 2m-pte, predict 64k + 1m " "$tmp/refit" ||
		missing="$missing by-size"
	[ -z "$missing" ]
	tap_result $? "--validate reports every held-out fit${missing:+ (missing:$missing)}"
	# The shipped samples were counted by the model as it is: a change
	# that moves a counter must refit them (calibrate --from-samples
	# FILE --recount --samples FILE -o calibrate/ARCH.json).
	"$TOOL" calibrate --from-samples "$shipped_samples" --recount \
		--samples "$tmp/recount.samples" -o "$tmp/recount.json" \
		>/dev/null 2>"$tmp/err"
	status=$?
	tap_result "$status" "calibrate --recount of the shipped samples (exit $status)"
	[ "$status" -eq 0 ] || sed 's/^/# /' "$tmp/err"
	cmp -s "$shipped_samples" "$tmp/recount.samples"
	status=$?
	tap_result "$status" "the model counts the shipped samples as they were taken (else refit: --recount)"
	[ "$status" -eq 0 ] || diff "$shipped_samples" "$tmp/recount.samples" |
		head -6 | sed 's/^/# /'
fi

# ---- a guest's instructions ---------------------------------------------

# The shipped samples as a guest's would be (issue 28): the time column
# "insns", a thousand instructions per us.  Their calibration says so,
# its costs are the shipped ones times 1000, and predict and bench name
# the unit.
if [ -f "$shipped_samples" ]; then
	awk '/^scenario / { sub(/ us /, " insns ") }
	     /^[^#]/ && !/^scenario / { $5 = sprintf("%.0f", $5 * 1000) }
	     { print }' "$shipped_samples" >"$tmp/insns.samples"
	"$TOOL" calibrate --from-samples "$tmp/insns.samples" \
		-o "$tmp/insns.json" >"$tmp/insns" 2>"$tmp/err"
	status=$?
	tap_result "$status" "calibrate --from-samples of instructions (exit $status)"
	grep -q '"unit": "insns"' "$tmp/insns.json" &&
		grep -q '^# calibration of .*; costs in insns$' "$tmp/insns"
	tap_result $? "the calibration names its unit, insns"
	a=$(sed -n '/"kernel_entry"/,/}/s/.*"us": \([0-9.e+-]*\).*/\1/p' "$shipped")
	b=$(sed -n '/"kernel_entry"/,/}/s/.*"insns": \([0-9.e+-]*\).*/\1/p' "$tmp/insns.json")
	awk -v a="$a" -v b="$b" 'BEGIN { d = b - 1000 * a; if (d < 0) d = -d
		exit !(a > 0 && d < 0.01 * b) }'
	tap_result $? "its costs are instructions: kernel_entry $a us, $b insns"
	"$TOOL" predict --calibration "$tmp/insns.json" "$tmp/small.scn" \
		>"$tmp/pred-insns" 2>"$tmp/err"
	grep -q '^# predicted: kernel instructions (predicted-insns) from ' \
		"$tmp/pred-insns" &&
		grep -q '^[0-9]* P0 .* predicted-insns [0-9]*$' "$tmp/pred-insns" &&
		grep -q '^# predicted total: [0-9]* insns over ' "$tmp/pred-insns"
	tap_result $? "predict prints instructions, and says so"
	"$TOOL" bench mprotect --backend model --quick --reps 1 \
		--calibration "$tmp/insns.json" >"$tmp/bench-insns" 2>"$tmp/err"
	grep -q "predicted kernel: calibration $tmp/insns.json, unit insns" \
		"$tmp/bench-insns"
	tap_result $? "bench names the calibration and its unit"
else
	skip "a calibration of instructions" "no $shipped_samples for $arch"
fi

# ---- scripts/predict-seeds: its usage (tests/vm.sh runs it) --------------

if command -v python3 >/dev/null 2>&1; then
	mkdir "$tmp/full" && : >"$tmp/full/x"
	ln -s "$tmp/nowhere" "$tmp/keep-link"
	for c in "--keep $tmp/full:--keep" "--keep $tmp/keep-link:--keep" \
		 "--plot /dev/null:--plot" "--reps 0:--reps" \
		 "--tool $tmp/absent:--tool"; do
		flags=${c%:*}
		what=${c##*:}
		# shellcheck disable=SC2086
		# The tool named first: later flags override it (--tool).
		python3 scripts/predict-seeds --tool "$TOOL" \
			--calibration "$shipped" $flags "$tmp/small.scn" \
			>"$tmp/out" 2>"$tmp/err"
		status=$?
		[ "$status" -eq 2 ] && grep -qF -- "$what" "$tmp/err"
		tap_result $? "predict-seeds $flags: exit 2 naming $what (exit $status)"
	done
	[ "$(ls -A "$tmp/full")" = x ] && [ ! -e "$tmp/nowhere" ]
	tap_result $? "predict-seeds: nothing written into a full --keep or through a symlink"
else
	skip "predict-seeds usage" "no python3"
fi

# ---- a quick calibration (root) ----------------------------------------

"$TOOL" calibrate --quick -o "$tmp/quick.json" >"$tmp/quick" 2>"$tmp/err"
status=$?
if [ "$status" -eq 4 ]; then
	why=$(grep -m 1 'skipped' "$tmp/err" | sed 's/.*skipped[^:]*: //')
	skip "calibrate --quick" "${why:-the kernel backend cannot run here}"
	echo "1..$n"
	exit "$fail"
fi
tap_result "$status" "calibrate --quick (exit $status)"
[ "$status" -eq 0 ] || sed 's/^/# /' "$tmp/err"
[ -s "$tmp/quick.json" ] && [ -s "$tmp/quick.samples" ]
tap_result $? "it wrote the calibration and its samples"
grep -q '^fit: [0-9]* samples, R^2 ' "$tmp/quick"
tap_result $? "it printed the fit"
"$TOOL" predict --calibration "$tmp/quick.json" "$tmp/small.scn" \
	>/dev/null 2>"$tmp/err"
tap_result $? "predict reads the new calibration"
"$TOOL" calibrate --from-samples "$tmp/quick.samples" -o "$tmp/again.json" \
	>/dev/null 2>"$tmp/err"
same_costs "$tmp/quick.json" "$tmp/again.json"
tap_result $? "its samples refit to the same calibration"

echo "1..$n"
exit "$fail"
