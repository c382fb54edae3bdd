#!/bin/sh
# bench-smoke.sh - `ptebatch bench gup --quick` on the model: the table is
# well-formed, every JSON row parses, and the counters agree with the
# variant (never the times).  TAP.
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

"$tool" bench gup --arch arm64 >/dev/null 2>"$tmp/arch.err"
[ $? -eq 2 ] && grep -q "unknown architecture 'arm64'" "$tmp/arch.err"
tap_result $? "--arch that is no architecture is refused with the known ones"

echo "1..$n"
exit $fail
