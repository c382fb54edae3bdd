#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# bench-replay.sh - `ptebatch bench replay` on the model, and compressed
# scenarios, as TAP.  The trace is tests/replay/toy.scn (write after
# fork: a child dirties part of the heap and exits, the parent rewrites
# it), one rep; only counters are held to anything, never times.
#
#   - the table has a row for every folio size x preset;
#   - 4K/upstream's faults are those `ptebatch run` records for the file
#     with its mthp lines removed (the sum of every statement's faults,
#     the children's included): the folio size replaces the file's own;
#   - within a folio size, faults never grow from baseline to upstream to
#     seeds to seeds+wp_reuse_max=512;
#   - with --calibration (a made-up one, 1 us per fault), every model row
#     has the predicted kernel time of its faults (pred_ms), and the ratio
#     lines its predicted ratio;
#   - the JSON rows parse and carry every column;
#   - the same file gzip-compressed gives the same record (`run`) and the
#     same counters (`bench replay`);
#   - --plot draws the labels as written (no "_" subscripts).
#
# Usage: BUILD=build sh tests/bench-replay.sh   (from the top of the tree)

BUILD=${BUILD:-build}
tool=$BUILD/ptebatch
trace=tests/replay/toy.scn
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
. tests/tap.sh

presets="baseline upstream seeds seeds+wp_reuse_max=512"
folios="4K 16K 64K 1M 2M"

"$tool" bench replay --backend model --reps 1 --json "$tmp/r.json" \
	"$trace" >"$tmp/r.out" 2>"$tmp/r.err"
tap_result $? "bench replay --backend model --reps 1 exits 0"
[ -s "$tmp/r.err" ] && sed 's/^/# stderr: /' "$tmp/r.err"

# folio, variant, 9 counters, the time, and pred_ms when the default
# calibration (this machine's, or the one shipped) could be read.
cols=12
grep -q '^folio .* time_ms  *pred_ms$' "$tmp/r.out" && cols=13
missing=
for f in $folios; do
	for p in $presets; do
		awk -v f="$f" -v p="$p" -v nf=$cols '$1 == f && $2 == p &&
			NF == nf { ok = 1 } END { exit !ok }' "$tmp/r.out" ||
			missing="$missing $f/$p"
	done
done
[ -z "$missing" ]
tap_result $? "the table has a row for every folio size x preset"
[ -n "$missing" ] && echo "# missing:$missing"

# --calibration: a made-up one (1 us per fault) predicts every row's
# faults, as a lower bound (it knows no other counter).
cat >"$tmp/calib.json" <<'EOF2'
{"version": 1,
 "machine": {"arch": "x86_64", "kernel": "test", "cpu": "made up", "cores": 1,
             "date": "2026-01-01"},
 "costs": [{"counter": "fault", "us": 1.0, "stderr": 0.0, "state": "fitted"}],
 "residuals": [0.0],
 "fit": {"r2": 1.0, "median_abs_rel_err": 0.0}}
EOF2
"$tool" bench replay --backend model --reps 1 --calibration "$tmp/calib.json" \
	"$trace" >"$tmp/rc.out" 2>&1 &&
	grep -q "^  predicted kernel: calibration $tmp/calib.json" "$tmp/rc.out" &&
	grep -q '^folio .* time_ms  *pred_ms$' "$tmp/rc.out" &&
	awk 'NF == 13 && $3 ~ /^[0-9]+$/ { rows++
		# ">N.NNN": the ms of 1 us per fault, a lower bound
		if ($13 !~ /^>[0-9]+\.[0-9]+$/) bad++
		v = substr($13, 2) * 1000
		if (v < $3 - 0.5 || v > $3 + 0.5) bad++ }
		END { exit !(rows == 20 && !bad) }' "$tmp/rc.out" &&
	grep -q '^  4K   faults .* predicted kernel time [0-9.]*x$' "$tmp/rc.out"
tap_result $? "bench replay --calibration: pred_ms of every row, in the ratio line too"

grep -q '^  method: .*mthp lines replaced' "$tmp/r.out" &&
	grep -q 'median of 1 rep after it, checker off' "$tmp/r.out" &&
	grep -q '^  kernel: not run: not asked for' "$tmp/r.out"
tap_result $? "the method is printed above the table"

# The record's faults: "faults N", and a fork's "(CHILD M)".
grep -v '^mthp' "$trace" >"$tmp/nomthp.scn"
"$tool" run "$tmp/nomthp.scn" >"$tmp/nomthp.out"
want=$(sed -n 's/.*: faults \([0-9]*\)\( ([A-Za-z0-9_]* \([0-9]*\))\)\{0,1\}$/\1 \3/p' \
	"$tmp/nomthp.out" | awk '{ s += $1 + $2 } END { print s + 0 }')
got=$(awk '$1 == "4K" && $2 == "upstream" { print $3 }' "$tmp/r.out")
[ -n "$want" ] && [ "$want" -gt 0 ] && [ "$got" = "$want" ]
tap_result $? "4K/upstream faults ($got) = the record's without mthp lines ($want)"

ok=0
for f in $folios; do
	awk -v f="$f" -v ps="$presets" '
		BEGIN { n = split(ps, p, " ") }
		$1 == f { for (i = 1; i <= n; i++) if ($2 == p[i]) v[i] = $3 }
		END {
			for (i = 2; i <= n; i++)
				if (!(i in v) || v[i] > v[i - 1]) exit 1
		}' "$tmp/r.out" || { echo "# faults grow within $f"; ok=1; }
done
tap_result $ok "within a folio size, faults never grow from baseline to seeds"

python3 - "$tmp/r.json" <<'PY'
import json, sys
need = ["bench", "folio", "op", "variant", "backend", "arch", "median_us",
        "min_us", "max_us", "reps", "trace", "statements", "faults",
        "cow_copies", "wp_reuse_ptes", "folio_ref_atomic", "mapcount_atomic",
        "pincount_atomic", "pte_read", "pte_write", "tlb_flush"]
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == 20, len(rows)
for r in rows:
    for k in need:
        assert k in r, (k, r)
    assert r["bench"] == "replay" and r["backend"] == "model", r
    assert r["trace"] == "tests/replay/toy.scn", r
    assert r["min_us"] <= r["median_us"] <= r["max_us"], r
PY
tap_result $? "the JSON has 20 rows, each with every column"

if command -v gzip >/dev/null 2>&1; then
	gzip -n <"$trace" >"$tmp/toy.scn.gz"
	"$tool" run "$trace" >"$tmp/plain.out" &&
		"$tool" run "$tmp/toy.scn.gz" >"$tmp/gz.out" &&
		cmp -s "$tmp/plain.out" "$tmp/gz.out"
	tap_result $? "run: FILE.scn.gz gives FILE.scn's record"
	# Any name: the magic decides.
	cp "$tmp/toy.scn.gz" "$tmp/toy-compressed.scn"
	"$tool" run "$tmp/toy-compressed.scn" >"$tmp/gz2.out" &&
		cmp -s "$tmp/plain.out" "$tmp/gz2.out"
	tap_result $? "run: a gzip file named .scn is read as gzip"
	"$tool" bench replay --backend model --reps 1 --json "$tmp/gz.json" \
		"$tmp/toy.scn.gz" >/dev/null 2>&1
	python3 - "$tmp/r.json" "$tmp/gz.json" <<'PY'
import json, sys
def counters(path):
    drop = {"median_us", "min_us", "max_us", "trace"}
    return [{k: v for k, v in json.loads(l).items() if k not in drop}
            for l in open(path)]
assert counters(sys.argv[1]) == counters(sys.argv[2])
PY
	tap_result $? "bench replay: FILE.scn.gz gives FILE.scn's counters"
else
	for t in "run: FILE.scn.gz gives FILE.scn's record" \
		 "run: a gzip file named .scn is read as gzip" \
		 "bench replay: FILE.scn.gz gives FILE.scn's counters"; do
		n=$((n + 1))
		echo "ok $n - $t # SKIP no gzip"
	done
fi

# Its only other line may be the warning that the shipped calibration was
# measured on another CPU than this machine's (bench says so first).
if command -v gnuplot >/dev/null 2>&1; then
	"$tool" bench replay --backend model --reps 1 --plot "$tmp/r.svg" \
		"$trace" >/dev/null 2>"$tmp/plot.err" &&
		grep -q '>model: seeds+wp_reuse_max=512<' "$tmp/r.svg" &&
		grep -q '>toy.scn: faults<' "$tmp/r.svg" &&
		grep -q '>toy.scn: wall time of its statements' "$tmp/r.svg" &&
		[ "$(grep -v ': warning: .* was measured on another CPU' \
			"$tmp/plot.err")" = "plot: wrote $tmp/r.svg" ]
	tap_result $? "--plot: a faults and a time panel, labels as written"
	sed 's/^/# stderr: /' "$tmp/plot.err"
else
	n=$((n + 1))
	echo "ok $n - --plot: a faults and a time panel # SKIP no gnuplot"
fi

echo "1..$n"
exit $fail
