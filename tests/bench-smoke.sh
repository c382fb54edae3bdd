#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# bench-smoke.sh - `ptebatch bench gup --quick` on the model: the table is
# well-formed, every JSON row parses, and the counters agree with the
# variant (never the times); with --calibration, the predicted kernel
# columns of gup and mprotect are there with numbers.  TAP.
#
# With gup_batch on, pinning a 64K folio takes at most two refcount
# atomics (the speculative one and the rest of the run); off, one per page.
#
# Usage: BUILD=build sh tests/bench-smoke.sh   (from the top of the tree)

BUILD=${BUILD:-build}
tool=$BUILD/ptebatch
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
. tests/tap.sh


"$tool" bench gup --quick --backend model --json "$tmp/gup.json" \
	>"$tmp/gup.out" 2>"$tmp/gup.err"
tap_result $? "bench gup --quick --backend model exits 0"
[ -s "$tmp/gup.err" ] && sed 's/^/# stderr: /' "$tmp/gup.err"

# The table: method lines above it, a header, one row per folio mode with
# 13 columns (folio, 11 numbers, kernel as numbers or '-').
grep -q '^  method: .* reps after 1 warm-up, median' "$tmp/gup.out" &&
	grep -q '^  model:  before = upstream ' "$tmp/gup.out" &&
	grep -qE 'arch (x86_64|x86-pae|arm64-(4k|16k|64k))$' "$tmp/gup.out"
tap_result $? "the method is printed above the table"
rows=0
for f in 4K 64K 1M 2M-PTE 2M-PMD; do
	line=$(grep "^$f " "$tmp/gup.out")
	if [ -n "$line" ] && echo "$line" | awk 'NF != 13 { exit 1 }
		{ for (i = 2; i <= 11; i++) if ($i !~ /^[0-9]+\.[0-9]+$/) exit 1 }'
	then
		rows=$((rows + 1))
	else
		echo "# bad row for $f: '$line'"
	fi
done
[ "$rows" -eq 5 ]
tap_result $? "the table has a well-formed row per folio mode"

# 5 modes x 2 variants x (get, put, pin, unpin) + 5 floors.
[ "$(wc -l <"$tmp/gup.json")" -eq 45 ]
tap_result $? "the JSON has 45 rows"

if command -v python3 >/dev/null 2>&1; then
	python3 - "$tmp/gup.json" <<'EOF'
import json, sys
need = ["bench", "folio", "op", "variant", "backend", "median_us", "min_us",
        "max_us", "reps"]
rows = [json.loads(l) for l in open(sys.argv[1])]
for r in rows:
    for k in need:
        assert k in r, (k, r)
    assert r["min_us"] <= r["median_us"] <= r["max_us"], r
sys.exit(0)
EOF
	tap_result $? "every JSON row parses and has the common keys"
	python3 - "$tmp/gup.json" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
pins = [r for r in rows if r["folio"] == "64K" and
        r["op"] == "pin_user_pages_fast"]
assert len(pins) == 2, pins
for r in pins:
    folios = r["pages"] // 16
    if r["gup_batch"]:
        assert r["folio_ref_atomic"] <= 2 * folios, r
    else:
        assert r["folio_ref_atomic"] == r["pages"], r
sys.exit(0)
EOF
	tap_result $? "64K pin: folio_ref_atomic <= 2/folio batched, 1/page per-PTE"
else
	bad=$(grep -vc '^{"bench":"gup","folio":"[^"]*","op":"[^"]*","variant":"[^"]*","backend":"model","median_us":[0-9.]*,"min_us":[0-9.]*,"max_us":[0-9.]*,"reps":[0-9]*.*}$' "$tmp/gup.json")
	[ "$bad" -eq 0 ]
	tap_result $? "every JSON row has the common keys (grep; no python3)"
	per=$(grep '"folio":"64K","op":"pin_user_pages_fast","variant":"upstream",' "$tmp/gup.json" |
		sed -n 's/.*"folio_ref_atomic":\([0-9]*\).*"pages":\([0-9]*\).*/\1 \2/p')
	bat=$(grep '"folio":"64K","op":"pin_user_pages_fast","variant":"upstream+gup_batch=1",' "$tmp/gup.json" |
		sed -n 's/.*"folio_ref_atomic":\([0-9]*\).*"pages":\([0-9]*\).*/\1 \2/p')
	echo "$per" | awk '$1 == $2 { ok = 1 } END { exit !ok }' &&
		echo "$bat" | awk '$1 <= 2 * $2 / 16 { ok = 1 } END { exit !ok }'
	tap_result $? "64K pin: folio_ref_atomic <= 2/folio batched, 1/page per-PTE"
fi

# The predicted kernel columns, from a calibration named by --calibration:
# the one shipped for this architecture, else this machine's (ptebatch
# calibrate), else a made-up one.  Then another made-up one, of one cost
# (1 us per folio_ref_atomic), whose predictions are known exactly.
arch=$("$tool" bench gup --quick --backend model --reps 1 2>/dev/null |
	sed -n 's/.*; arch \([^ ]*\)$/\1/p' | head -n 1)
made=$tmp/made-up.json
cat >"$made" <<'EOF2'
{"version": 1,
 "machine": {"arch": "x86_64", "kernel": "test", "cpu": "made up", "cores": 1,
             "date": "2026-01-01"},
 "costs": [{"counter": "folio_ref_atomic", "us": 1.0, "stderr": 0.0,
            "state": "fitted"}],
 "residuals": [0.0],
 "fit": {"r2": 1.0, "median_abs_rel_err": 0.0}}
EOF2
fallback=$tmp/fallback.json
cat >"$fallback" <<'EOF2'
{"version": 1,
 "machine": {"arch": "x86_64", "kernel": "test", "cpu": "made up", "cores": 1,
             "date": "2026-01-01"},
 "costs": [{"counter": "pte_read", "us": 0.001, "stderr": 0.0, "state": "fitted"},
           {"counter": "pte_write", "us": 0.002, "stderr": 0.0, "state": "fitted"},
           {"counter": "tlb_flush", "us": 0.5, "stderr": 0.0, "state": "fitted"}],
 "residuals": [0.0],
 "fit": {"r2": 1.0, "median_abs_rel_err": 0.0}}
EOF2
cal=$fallback
for f in "calibrate/$arch.json" "$BUILD/calibration.json"; do
	if [ -n "$arch" ] && [ -r "$f" ]; then
		cal=$f
		break
	fi
done
"$tool" bench gup --quick --backend model --calibration "$cal" \
	--json "$tmp/pred.json" >"$tmp/pred.out" 2>"$tmp/pred.err"
tap_result $? "bench gup --quick --calibration $cal exits 0"
grep -qF "  predicted kernel: calibration $cal" "$tmp/pred.out"
tap_result $? "the method names the calibration ($cal)"
# Below the table: a row per folio mode of 8 numbers (before, after,
# predicted ratio, model ratio, for get and pin; '>' is a lower bound).
rows=0
if grep -q '^  predicted kernel, us of one take' "$tmp/pred.out"; then
	for f in 4K 64K 1M 2M-PTE 2M-PMD; do
		line=$(grep "^  $f " "$tmp/pred.out")
		if [ -n "$line" ] && echo "$line" | awk 'NF != 9 { exit 1 }
			{ for (i = 2; i <= 9; i++)
				if ($i !~ /^>?[0-9]+\.[0-9]+$/) exit 1 }'
		then
			rows=$((rows + 1))
		else
			echo "# bad predicted row for $f: '$line'"
		fi
	done
fi
[ "$rows" -eq 5 ]
tap_result $? "the predicted kernel table has a row of numbers per folio mode"
"$tool" bench mprotect --quick --backend model --calibration "$cal" \
	>"$tmp/mp.out" 2>&1 &&
	grep -q '^  folio .* per-PTE ms  batched ms   ratio$' "$tmp/mp.out" &&
	[ "$(grep -cE '^  (4K|64K|2M-PTE|2M-PMD) .* >?[0-9]+\.[0-9]+ +>?[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+$' "$tmp/mp.out")" -eq 4 ]
tap_result $? "bench mprotect --quick: predicted kernel per-PTE, batched and ratio columns"
if command -v python3 >/dev/null 2>&1; then
	"$tool" bench gup --quick --backend model --calibration "$made" \
		--json "$tmp/made.json" >/dev/null 2>&1
	python3 - "$tmp/pred.json" "$tmp/made.json" <<'EOF2'
import json, sys
takes = ("get_user_pages_fast", "pin_user_pages_fast")
for path in sys.argv[1:]:
    for r in map(json.loads, open(path)):
        if r["op"] in takes:
            assert r["predicted_us"] >= 0, r
        else:
            assert "predicted_us" not in r, r
# The made-up calibration costs 1 us per refcount atomic and knows no
# other counter: every take predicts its atomics, as a lower bound when
# another counter moved.
for r in map(json.loads, open(sys.argv[2])):
    if r["op"] in takes:
        assert abs(r["predicted_us"] - r["folio_ref_atomic"]) < 1e-3, r
        assert r.get("predicted_lower_bound") is True, r
EOF2
	tap_result $? "JSON: predicted_us on every take row, the made-up costs exactly"
fi

"$tool" bench gup --arch arm64 >/dev/null 2>"$tmp/arch.err"
[ $? -eq 2 ] && grep -q "unknown architecture 'arm64'" "$tmp/arch.err"
tap_result $? "--arch that is no architecture is refused with the known ones"

echo "1..$n"
exit $fail
