#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# figures.sh - the benchmark figures (bench/figure.c), as TAP: `ptebatch
# plot` of the rows committed in docs/ and `bench --plot` of quick runs.
#
#   - every figure is well-formed XML (xmllint) and renders (rsvg-convert,
#     as a reader's viewer would);
#   - every series the JSON rows name is in its figure: each op, and each
#     variant (the cow figure's wp_reuse_max=N as its x axis's N);
#   - labels are literal: "pin_user_pages_fast" is one string, no "_"
#     read as a subscript;
#   - a title names the machine the rows carry, the statistic and the reps;
#   - one figure goes to FILE.svg, several to FILE-NAME.svg each; --arch
#     x86_64,arm64-4k draws the mprotect panels of both side by side;
#   - bad input (a missing file, a line that is no row, --out not .svg,
#     an unknown --only) is a message naming it, status 2, no file.
#
# Usage: BUILD=build sh tests/figures.sh   (from the top of the tree)

BUILD=${BUILD:-build}
tool=$BUILD/ptebatch
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
. tests/tap.sh

skip() {
	n=$((n + 1))
	echo "ok $n - $1 # SKIP $2"
}

if ! command -v gnuplot >/dev/null 2>&1; then
	skip "figures" "no gnuplot (Debian: gnuplot-nox)"
	echo "1..$n"
	exit 0
fi

# Well-formed and renderable, each of the files $@.
check_svgs() {
	what=$1
	shift
	if command -v xmllint >/dev/null 2>&1; then
		ok=0
		for f in "$@"; do
			xmllint --noout "$f" 2>"$tmp/xml.err" || {
				ok=1
				sed 's/^/# /' "$tmp/xml.err"
			}
		done
		tap_result $ok "$what: well-formed XML (xmllint)"
	else
		skip "$what: well-formed XML" "no xmllint (Debian: libxml2-utils)"
	fi
	if command -v rsvg-convert >/dev/null 2>&1; then
		ok=0
		for f in "$@"; do
			rsvg-convert -o "$tmp/render.png" "$f" 2>"$tmp/rsvg.err" &&
				[ -s "$tmp/render.png" ] || {
				ok=1
				sed 's/^/# /' "$tmp/rsvg.err"
			}
		done
		tap_result $ok "$what: renders to PNG (rsvg-convert)"
	else
		skip "$what: renders to PNG" "no rsvg-convert (Debian: librsvg2-bin)"
	fi
}

# Every op and variant of the rows in JSON file $1 of bench $2 appears in
# the text of figure $3 (python3: the text of every <text>, joined).
series_in_figure() {
	python3 - "$1" "$2" "$3" <<'EOF'
import json, re, sys
import xml.etree.ElementTree as ET
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
bench, svg = sys.argv[2], sys.argv[3]
texts = []
for el in ET.parse(svg).iter():
    if el.tag.endswith('}text') or el.tag == 'text':
        texts.append(''.join(el.itertext()).strip())
text = '\n'.join(texts)
missing = set()
for r in rows:
    if r['bench'] != bench:
        continue
    if r['op'] not in text:
        missing.add('op ' + r['op'])
    v = r['variant']
    m = re.match(r'(.*),wp_reuse_max=(\d+)$', v)
    if m:
        # cow: the preset in the title, N among the x axis's tic labels
        if m.group(1) not in text or m.group(2) not in texts:
            missing.add('variant ' + v)
    elif v == 'none':
        pass            # the floor: its op names it
    elif v not in text:
        missing.add('variant ' + v)
for x in sorted(missing):
    print('# missing from %s: %s' % (svg, x))
sys.exit(1 if missing else 0)
EOF
}

# ---- ptebatch plot of the committed rows --------------------------------

"$tool" plot --out "$tmp/b.svg" docs/bench-results.json >"$tmp/b.out" \
	2>"$tmp/b.err"
st=$?
[ $st -eq 0 ] && [ -s "$tmp/b-gup.svg" ] && [ -s "$tmp/b-cow.svg" ] &&
	[ -s "$tmp/b-mprotect.svg" ] && ! [ -e "$tmp/b.svg" ] &&
	grep -q "^plot: wrote $tmp/b-cow.svg$" "$tmp/b.out"
tap_result $? "plot docs/bench-results.json: b-gup, b-cow, b-mprotect.svg"
sed 's/^/# stderr: /' "$tmp/b.err"
check_svgs "bench figures" "$tmp"/b-*.svg
ok=0
for b in gup cow mprotect; do
	series_in_figure docs/bench-results.json $b "$tmp/b-$b.svg" || ok=1
done
tap_result $ok "every op and variant of the rows is in its figure"
grep -q '>pin_user_pages_fast' "$tmp/b-gup.svg" &&
	! grep -q 'baseline-shift' "$tmp"/b-*.svg
tap_result $? "labels are literal (no enhanced-text subscripts)"
grep -q 'median of 15 reps' "$tmp/b-gup.svg" &&
	grep -q 'median of 5 reps' "$tmp/b-cow.svg" &&
	grep -q 'machine not recorded in the rows' "$tmp/b-gup.svg"
tap_result $? "titles: the statistic, the reps, and no machine made up"
"$tool" plot --out "$tmp/m.svg" --machine "Test box, 3 cores" \
	docs/bench-results.json >/dev/null 2>&1 &&
	grep -q 'Test box, 3 cores' "$tmp/m-mprotect.svg"
tap_result $? "--machine names the machine rows do not carry"

"$tool" plot --out "$tmp/r.svg" docs/replay-results.json >/dev/null \
	2>"$tmp/r.err" && [ -s "$tmp/r.svg" ] &&
	series_in_figure docs/replay-results.json replay "$tmp/r.svg"
tap_result $? "replay: one figure, every preset and the kernel in it"
"$tool" plot --out "$tmp/p.svg" --only predicted \
	docs/predicted-recount-results.json docs/bench-results.json \
	>/dev/null 2>"$tmp/p.err" && [ -s "$tmp/p.svg" ] &&
	grep -q '>predicted kernel: pin_user_pages_fast batched' "$tmp/p.svg" &&
	grep -q '>kernel: measured on this machine' "$tmp/p.svg" &&
	! [ -e "$tmp/p-gup.svg" ]
tap_result $? "--only predicted: the predictions beside the kernel, alone"
check_svgs "replay and predicted figures" "$tmp/r.svg" "$tmp/p.svg"

# Seed 003's table across our kernels: rows of `bench cow --backend
# vm:NAME`, each stamped with its kernel, and the model's rows beside.
"$tool" plot --out "$tmp/k.svg" --only kernels-cow docs/vm-runs/cow-*.json \
	docs/bench-results.json >/dev/null 2>"$tmp/k.err" && [ -s "$tmp/k.svg" ] &&
	grep -q ">Seed 003's table on our kernels" "$tmp/k.svg" &&
	grep -q '6 kernels (7.3.4-x86_64-4k-[0-9a-f]* ... 7.3.4+seeds-n512-' "$tmp/k.svg" &&
	grep -q '>lines alone: the model' "$tmp/k.svg" &&
	grep -q '>least-squares fit: ' "$tmp/k.svg"
tap_result $? "--only kernels-cow: six kernels by their windows, the model beside"
check_svgs "kernels-cow figure" "$tmp/k.svg"

# ---- bench --plot ----------------------------------------------------------

"$tool" bench gup --quick --backend model --json "$tmp/g.json" \
	--plot "$tmp/g.svg" >/dev/null 2>"$tmp/g.err"
[ $? -eq 0 ] && [ -s "$tmp/g.svg" ] && ! ls "$tmp"/g-*.svg >/dev/null 2>&1
tap_result $? "bench gup --plot FILE.svg: one figure, FILE.svg itself"
machine=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["machine"])' "$tmp/g.json" 2>/dev/null)
[ -n "$machine" ] && grep -qF "$machine" "$tmp/g.svg" &&
	grep -q 'median of 3 reps' "$tmp/g.svg"
tap_result $? "a fresh row carries its machine, and the title names it"
series_in_figure "$tmp/g.json" gup "$tmp/g.svg"
tap_result $? "bench gup --plot: every op and variant of its rows drawn"

"$tool" bench all --quick --backend model --plot "$tmp/a.svg" >/dev/null \
	2>"$tmp/a.err"
[ $? -eq 0 ] && [ -s "$tmp/a-gup.svg" ] && [ -s "$tmp/a-cow.svg" ] &&
	[ -s "$tmp/a-mprotect.svg" ] && ! [ -e "$tmp/a.svg" ]
tap_result $? "bench all --plot FILE.svg: FILE-gup, -cow, -mprotect.svg"
check_svgs "bench all --quick figures" "$tmp"/a-*.svg

if [ -x "$BUILD/arm64-4k/ptebatch" ]; then
	"$tool" bench mprotect --quick --backend model \
		--arch x86_64,arm64-4k --plot "$tmp/arch.svg" >/dev/null \
		2>"$tmp/arch.err"
	[ $? -eq 0 ] && grep -q '>arch x86_64 (model' "$tmp/arch.svg" &&
		grep -q '>arch arm64-4k (model' "$tmp/arch.svg"
	tap_result $? "--arch x86_64,arm64-4k --plot: both archs side by side"
	sed 's/^/# stderr: /' "$tmp/arch.err"
else
	skip "--arch x86_64,arm64-4k --plot" "no $BUILD/arm64-4k build"
fi

# ---- bad input ---------------------------------------------------------------

# Status 2, a message with $2 in it, no figure left: command $3...
refused() {
	name=$1
	want=$2
	shift 2
	"$@" >"$tmp/bad.out" 2>"$tmp/bad.err"
	st=$?
	[ $st -eq 2 ] && grep -qF -- "$want" "$tmp/bad.err" &&
		! ls "$tmp"/bad*.svg >/dev/null 2>&1
	tap_result $? "$name"
	[ $st -eq 2 ] || echo "# status $st"
	sed 's/^/# stderr: /' "$tmp/bad.err"
}

printf '%s\n' '{"bench":"gup","folio":"4K","op":"x","variant":"v","backend":"model","median_us":1}' \
	'{"bench":"gup","folio":"4K"' >"$tmp/broken.json"
printf '%s\n' '[1,2]' >"$tmp/array.json"
printf '%s\n' '{"bench":"gup","folio":"4K","op":"x","backend":"model","median_us":1}' \
	>"$tmp/novariant.json"
printf '%s\n' '{"bench":"other","folio":"4K","op":"x","variant":"v","backend":"model","median_us":1}' \
	>"$tmp/other.json"
: >"$tmp/empty.json"
refused "plot: a missing file is named" "$tmp/missing.json" \
	"$tool" plot --out "$tmp/bad.svg" "$tmp/missing.json"
refused "plot: a line that is not JSON: FILE:LINE" "$tmp/broken.json:2: not JSON" \
	"$tool" plot --out "$tmp/bad.svg" "$tmp/broken.json"
refused "plot: a JSON value that is no object" "$tmp/array.json:1: not a JSON object" \
	"$tool" plot --out "$tmp/bad.svg" "$tmp/array.json"
refused "plot: a row without its variant" "no string \"variant\"" \
	"$tool" plot --out "$tmp/bad.svg" "$tmp/novariant.json"
refused "plot: rows of no benchmark it draws" "no row of gup, cow, mprotect or replay" \
	"$tool" plot --out "$tmp/bad.svg" "$tmp/other.json"
refused "plot: an empty file" "no rows in $tmp/empty.json" \
	"$tool" plot --out "$tmp/bad.svg" "$tmp/empty.json"
refused "plot: --out not .svg" "--out: '$tmp/bad.png' must end in .svg" \
	"$tool" plot --out "$tmp/bad.png" docs/bench-results.json
refused "plot: no --out" "no --out FILE.svg given" \
	"$tool" plot docs/bench-results.json
refused "plot: no rows file" "no ROWS.json given" \
	"$tool" plot --out "$tmp/bad.svg"
refused "plot: --only an unknown figure" "--only: no figure 'pie'" \
	"$tool" plot --out "$tmp/bad.svg" --only pie docs/bench-results.json
refused "plot: --only a figure the rows cannot draw" "no rows for the figure 'replay'" \
	"$tool" plot --out "$tmp/bad.svg" --only replay docs/bench-results.json
refused "plot: --only kernels-cow without rows of two kernels" \
	"no rows for the figure 'kernels-cow'" \
	"$tool" plot --out "$tmp/bad.svg" --only kernels-cow docs/bench-results.json
refused "plot: --out in a missing directory" "--out: $tmp/nodir/bad.svg" \
	"$tool" plot --out "$tmp/nodir/bad.svg" docs/bench-results.json

echo "1..$n"
exit $fail
