#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# run-svg.sh - `ptebatch run --svg`, the drawing of the observes, as TAP.
#
# The drawing is read back with python3's xml.etree: every page cell is a
# <rect class="page"> with data-proc, data-region, data-off, data-frame,
# data-folio, data-count and the marks, inside a <g class="figure"> per
# observe.  The checks:
#   - examples/cow-64k.scn's drawing is well-formed XML (xmllint) and
#     renders (rsvg-convert); the record is the same with --svg as without;
#   - each figure has a cell per page the record lists, in its order, with
#     its process, region, offset and frame number;
#   - the same frame or the same folio is the same fill; in cow-64k the
#     copy P0 made of page 0 has a fill of its own and the only COW mark,
#     and P1's pages share P0's folio's fill;
#   - a register pins exactly the pages of its range until unregister;
#   - a 64M region folds: a cell per line of the record (none is marked
#     but single pages), fewer cells than pages, counts summing to them;
#   - a scenario named with XML's special characters, and one with no
#     observe (a note, a warning), still give well-formed files;
#   - as root and not a sanitizer build: the kernel's drawing of cow-64k
#     has the model's cells and the model's partition of them by fill;
#   - bad --svg values exit non-zero naming --svg and leave no file; so
#     do a run that fails and one stopped by SIGTERM.
# A missing xmllint, rsvg-convert or python3 makes its checks SKIP.
#
# Usage: BUILD=build [SAN=asan] sh tests/run-svg.sh   (from the top of the
# tree)

BUILD=${BUILD:-build}
TOOL=$BUILD/ptebatch
SCN=examples/cow-64k.scn
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

have() {
	command -v "$1" >/dev/null 2>&1
}

# The checks on a drawing: svg.py CHECK FILE.svg [ARG]; exit status 0 or
# 1 with the reason on stdout.
cat >"$tmp/svg.py" <<'EOF'
import re
import sys
import xml.etree.ElementTree as ET

NS = '{http://www.w3.org/2000/svg}'
PAGE = 4096


def figures(path):
    root = ET.parse(path).getroot()
    out = []
    for g in root.iter(NS + 'g'):
        if g.get('class') == 'figure':
            cells = [r.attrib for r in g.iter(NS + 'rect')
                     if r.get('class') == 'page']
            out.append((int(g.get('data-statement')), cells))
    return out


def record_pages(path):
    """Each observe's pages as the record lists them, runs expanded."""
    figs, cur = [], None
    line_re = re.compile(r'^(\S+) (\S+) (0x[0-9a-f]+) (absent|present .*?)'
                         r'( x(\d+))?$')
    for line in open(path):
        line = line.rstrip('\n')
        m = re.match(r'^(\d+) observe$', line)
        if m:
            cur = []
            figs.append((int(m.group(1)), cur))
            continue
        m = line_re.match(line)
        if not m or cur is None:
            continue
        proc, region, off = m.group(1), m.group(2), int(m.group(3), 16)
        count = int(m.group(6) or 1)
        fm = re.search(r'frame (\d+)(\.\.(\d+))?', m.group(4))
        for k in range(count):
            if not fm:
                frame = '-'
            elif fm.group(3):
                frame = str(int(fm.group(1)) + k)
            else:
                frame = fm.group(1)
            cur.append((proc, region, '0x%07x' % (off + k * PAGE), frame))
    return figs


def fail(why):
    print(why)
    sys.exit(1)


def check_cells(svg, record):
    """One cell per page, in the record's order, the record's frames."""
    figs, recs = figures(svg), record_pages(record)
    if [f[0] for f in figs] != [r[0] for r in recs]:
        fail('figures %s, observes %s' % ([f[0] for f in figs],
                                          [r[0] for r in recs]))
    for (stmt, cells), (_, pages) in zip(figs, recs):
        got = [(c['data-proc'], c['data-region'], c['data-off'],
                c['data-frame']) for c in cells]
        if got != pages:
            fail('statement %d: %d cells, %d pages; first difference %s'
                 % (stmt, len(got), len(pages),
                    next(((a, b) for a, b in zip(got, pages) if a != b),
                         None)))


def check_colours(svg):
    """The same frame, the same folio: the same fill."""
    for stmt, cells in figures(svg):
        for key in ('data-frame', 'data-folio'):
            fills = {}
            for c in cells:
                if c[key] == '-':
                    continue
                if fills.setdefault(c[key], c['fill']) != c['fill']:
                    fail('statement %d: %s %s in two fills'
                         % (stmt, key, c[key]))


def check_cow64k(svg):
    stmt, cells = figures(svg)[0]
    p0 = [c for c in cells if c['data-proc'] == 'P0']
    p1 = [c for c in cells if c['data-proc'] == 'P1']
    if len(p0) != 16 or len(p1) != 16:
        fail('%d cells of P0, %d of P1' % (len(p0), len(p1)))
    if p0[0]['fill'] == p0[1]['fill']:
        fail("P0's copy of page 0 has its folio's fill")
    if [c.get('data-cow') for c in cells] != ['1'] + [None] * 31:
        fail('COW marks: %s' % [c['data-off'] for c in cells
                                if c.get('data-cow')])
    if p0[0].get('data-cow-stmt') != '5':
        fail('the copy is not marked as statement 5\'s')
    if {c['fill'] for c in p1} != {p0[1]['fill']}:
        fail("P1's pages are not all the fill of P0's pages 1..15")
    if {c['fill'] for c in p0[1:]} != {p0[1]['fill']}:
        fail("P0's pages 1..15 are not one fill")


def check_pinned(svg, want):
    """want: per figure, the offsets of P0 that are pinned ('' none)."""
    figs = figures(svg)
    want = want.split('/')
    if len(figs) != len(want):
        fail('%d figures, expected %d' % (len(figs), len(want)))
    for (stmt, cells), w in zip(figs, want):
        got = sorted('%s:%s' % (c['data-proc'], c['data-off'])
                     for c in cells if c.get('data-pinned') == '1')
        if got != sorted(filter(None, w.split(','))):
            fail('statement %d: pinned %s, expected %s' % (stmt, got, w))


def record_lines(path):
    """Each observe's lines: process, region, offset, first frame, count."""
    figs, cur = [], None
    for line in open(path):
        m = re.match(r'^(\d+) observe$', line)
        if m:
            cur = []
            figs.append(cur)
            continue
        m = re.match(r'^(\S+) (\S+) (0x[0-9a-f]+) ', line)
        if not m or cur is None:
            continue
        frame = re.search(r' frame (\d+)', line)
        count = re.search(r' x(\d+)$', line.rstrip('\n'))
        cur.append((m.group(1), m.group(2), m.group(3),
                    frame.group(1) if frame else '-',
                    count.group(1) if count else '1'))
    return figs


def check_fold(svg, record):
    """Rows of over 64 pages: a cell per record line, none marked here."""
    figs, recs = figures(svg), record_pages(record)
    for (stmt, cells), lines in zip(figs, record_lines(record)):
        got = [(c['data-proc'], c['data-region'], c['data-off'],
                c['data-frame'], c['data-count']) for c in cells]
        if got != lines:
            fail('statement %d: the cells are not the record\'s lines;'
                 ' first difference %s' % (stmt, next(
                     ((a, b) for a, b in zip(got, lines) if a != b),
                     (len(got), len(lines)))))
    for (stmt, cells), (_, pages) in zip(figs, recs):
        total = sum(int(c['data-count']) for c in cells)
        if total != len(pages):
            fail('statement %d: counts sum to %d, %d pages'
                 % (stmt, total, len(pages)))
        if len(cells) >= len(pages):
            fail('statement %d: %d cells for %d pages, nothing folded'
                 % (stmt, len(cells), len(pages)))
        for c in cells:
            if c['data-count'] != '1' and int(c['width']) <= 16:
                fail('statement %d: a folded cell no wider than a page'
                     % stmt)


def partition(cells):
    classes = {}
    for i, c in enumerate(cells):
        classes.setdefault(c['fill'], []).append(i)
    return sorted(classes.values())


def check_same_partition(svg, other):
    a, b = figures(svg), figures(other)
    if [len(c) for _, c in a] != [len(c) for _, c in b]:
        fail('cells per figure: %s and %s' % ([len(c) for _, c in a],
                                              [len(c) for _, c in b]))
    for (stmt, ca), (_, cb) in zip(a, b):
        if partition(ca) != partition(cb):
            fail('statement %d: the cells fall into other fill classes'
                 % stmt)


def check_note(svg, text):
    root = ET.parse(svg).getroot()
    if figures(svg):
        fail('figures in a drawing of no observe')
    if not any(text in (t.text or '') for t in root.iter(NS + 'text')):
        fail('no text "%s"' % text)


def check_caption(svg, text):
    root = ET.parse(svg).getroot()
    if not any((t.text or '').startswith(text)
               for t in root.iter(NS + 'text')):
        fail('no caption starting "%s"' % text)


check = sys.argv[1]
args = sys.argv[2:]
{'cells': check_cells, 'colours': check_colours, 'cow64k': check_cow64k,
 'pinned': check_pinned, 'fold': check_fold,
 'partition': check_same_partition, 'note': check_note,
 'caption': check_caption}[check](*args)
EOF

have_py=false
have python3 && have_py=true

# svg_check NAME CHECK ARGS...: a TAP line for one check of svg.py.
svg_check() {
	name=$1
	shift
	if ! $have_py; then
		skip "$name" "no python3"
		return
	fi
	why=$(python3 "$tmp/svg.py" "$@" 2>&1)
	status=$?
	tap_result $status "$name"
	[ $status -ne 0 ] && echo "$why" | sed 's/^/# /'
}

# ---- examples/cow-64k.scn on the model ---------------------------------

"$TOOL" run --svg "$tmp/cow.svg" "$SCN" >"$tmp/cow.out" 2>"$tmp/cow.err"
status=$?
[ $status -eq 0 ] && [ -s "$tmp/cow.svg" ] && [ ! -s "$tmp/cow.err" ]
tap_result $? "run --svg $SCN exits 0, writes the file, says nothing"
[ -s "$tmp/cow.err" ] && sed 's/^/# stderr: /' "$tmp/cow.err"

if have xmllint; then
	xmllint --noout "$tmp/cow.svg" 2>"$tmp/xmllint.err"
	tap_result $? "xmllint: the drawing is well-formed XML"
	sed 's/^/# /' "$tmp/xmllint.err"
else
	skip "xmllint: the drawing is well-formed XML" "no xmllint (Debian: libxml2-utils)"
fi
if have rsvg-convert; then
	rsvg-convert -o "$tmp/cow.png" "$tmp/cow.svg" 2>"$tmp/rsvg.err" &&
		[ -s "$tmp/cow.png" ] && [ ! -s "$tmp/rsvg.err" ]
	tap_result $? "rsvg-convert renders it"
	sed 's/^/# /' "$tmp/rsvg.err"
else
	skip "rsvg-convert renders it" "no rsvg-convert (Debian: librsvg2-bin)"
fi

"$TOOL" run "$SCN" >"$tmp/cow.plain" 2>&1
cmp -s "$tmp/cow.out" "$tmp/cow.plain"
tap_result $? "the record is the same with --svg as without"

svg_check "one cell per page of the record, its process, offset and frame" \
	cells "$tmp/cow.svg" "$tmp/cow.out"
svg_check "the same frame or the same folio is the same fill" \
	colours "$tmp/cow.svg"
svg_check "cow-64k: P0's copy of page 0 is its own fill and the only C; P1 shares P0's folio's fill" \
	cow64k "$tmp/cow.svg"
svg_check "the caption names the file, statement, backend and variant" \
	caption "$tmp/cow.svg" "$SCN, statement 6 (observe) - model, upstream, x86_64"

# ---- pins --------------------------------------------------------------

# P0 pins four pages of its 64K folio, forks (the child gets copies of
# what is pinned), unpins; then registers after a fork, which copies
# the pages first (a C and a dot), and again unregisters.
cat >"$tmp/pin.scn" <<'EOF'
mthp 64K always
P0 mmap A 64K rw
P0 write A 0 64K
P0 register H A 0 16K
P0 fork P1
observe
P0 unregister H
observe
P1 exit
P0 mmap B 64K rw
P0 write B 0 64K
P0 fork P2
P0 register G B 32K 8K
observe
P0 unregister G
observe
EOF
"$TOOL" run --svg "$tmp/pin.svg" "$tmp/pin.scn" >"$tmp/pin.out" 2>&1
tap_result $? "run --svg of a register scenario exits 0"
"$TOOL" run "$tmp/pin.scn" >"$tmp/pin.plain" 2>&1
cmp -s "$tmp/pin.out" "$tmp/pin.plain"
tap_result $? "its record is the same with --svg as without"
svg_check "the pinned cells are the registered pages, while registered" \
	pinned "$tmp/pin.svg" \
	"P0:0x0000000,P0:0x0001000,P0:0x0002000,P0:0x0003000//P0:0x0008000,P0:0x0009000/"
svg_check "the register scenario: cells follow the record" \
	cells "$tmp/pin.svg" "$tmp/pin.out"
if $have_py; then
	# The pages register copied out of the folio P2 shares: C and dot.
	python3 - "$tmp/pin.svg" <<'EOF'
import sys
import xml.etree.ElementTree as ET
NS = '{http://www.w3.org/2000/svg}'
figs = [g for g in ET.parse(sys.argv[1]).getroot().iter(NS + 'g')
        if g.get('class') == 'figure']
cells = [r for r in figs[2].iter(NS + 'rect') if r.get('class') == 'page']
marked = sorted((r.get('data-proc'), r.get('data-region'), r.get('data-off'))
                for r in cells if r.get('data-cow') == '1')
want = [('P0', 'B', '0x0008000'), ('P0', 'B', '0x0009000')]
sys.exit(0 if marked == want else print(marked) or 1)
EOF
	tap_result $? "register of shared pages: the copies it made carry the C"
else
	skip "register of shared pages: the copies it made carry the C" "no python3"
fi

# ---- folding -----------------------------------------------------------

for size in 2M 64K; do
	cat >"$tmp/big-$size.scn" <<EOF
mthp $size always
P0 mmap A 64M rw
P0 write A 0 64M
P0 fork P1
P1 write A 4K 4K
P0 munmap A 32M 4M
observe
EOF
	"$TOOL" run --svg "$tmp/big-$size.svg" "$tmp/big-$size.scn" \
		>"$tmp/big-$size.out" 2>&1
	tap_result $? "run --svg of a 64M region with $size folios exits 0"
	svg_check "64M with $size folios: a cell per record line, counts summing to the pages" \
		fold "$tmp/big-$size.svg" "$tmp/big-$size.out"
	svg_check "64M with $size folios: the same frame or folio is the same fill" \
		colours "$tmp/big-$size.svg"
done
if have xmllint; then
	xmllint --noout "$tmp/big-64K.svg"
	tap_result $? "xmllint: the folded drawing is well-formed XML"
else
	skip "xmllint: the folded drawing is well-formed XML" "no xmllint"
fi

# ---- names that need escaping, no observe ------------------------------

odd="$tmp/a&b<c>\"d'.scn"
cp "$SCN" "$odd"
"$TOOL" run --svg "$tmp/odd.svg" "$odd" >/dev/null 2>&1
tap_result $? "run --svg of a file named with & < > \" ' exits 0"
if have xmllint; then
	xmllint --noout "$tmp/odd.svg"
	tap_result $? "xmllint: that drawing is well-formed XML"
else
	skip "xmllint: that drawing is well-formed XML" "no xmllint"
fi
svg_check "its caption has the name as written" caption "$tmp/odd.svg" \
	"$odd, statement 6"

printf 'P0 mmap A 64K rw\nP0 write A 0 64K\n' >"$tmp/none.scn"
"$TOOL" run --svg "$tmp/none.svg" "$tmp/none.scn" >/dev/null 2>"$tmp/none.err"
[ $? -eq 0 ] && grep -q -- "--svg: no observe in $tmp/none.scn" "$tmp/none.err"
tap_result $? "no observe: exit 0 and a warning naming --svg"
svg_check "no observe: the file holds the note and no figure" note \
	"$tmp/none.svg" "no observe in $tmp/none.scn"

# ---- the kernel --------------------------------------------------------

kname="kernel: the drawing of $SCN has the model's cells and fill classes"
if [ "$(id -u)" -ne 0 ]; then
	skip "$kname" "not root"
elif [ -n "${SAN:-}" ]; then
	skip "$kname" "a sanitizer build (SAN=$SAN): the kernel backend's processes would run sanitized"
else
	"$TOOL" run --backend kernel --svg "$tmp/k.svg" "$SCN" \
		>"$tmp/k.out" 2>"$tmp/k.err"
	status=$?
	if [ $status -eq 4 ]; then
		skip "$kname" "$(tail -n 1 "$tmp/k.err")"
	else
		tap_result $status "kernel: run --svg exits 0"
		sed 's/^/# stderr: /' "$tmp/k.err"
		"$TOOL" run --backend kernel "$SCN" >"$tmp/k.plain" 2>&1
		cmp -s "$tmp/k.out" "$tmp/k.plain"
		tap_result $? "kernel: the record is the same with --svg as without"
		svg_check "kernel: cells follow the record" cells "$tmp/k.svg" \
			"$tmp/k.out"
		svg_check "$kname" partition "$tmp/k.svg" "$tmp/cow.svg"
	fi
fi

# ---- bad input ---------------------------------------------------------

# bad NAME ARGS...: non-zero, --svg named on stderr, nothing left in $tmp/bad.
mkdir "$tmp/bad"
bad() {
	name=$1
	shift
	"$TOOL" run "$@" >"$tmp/bad.out" 2>"$tmp/bad.err"
	status=$?
	[ $status -ne 0 ] && [ $status -lt 128 ] &&
		grep -q -- '--svg' "$tmp/bad.err" &&
		[ -z "$(ls -A "$tmp/bad")" ]
	tap_result $? "$name"
	if [ $status -eq 0 ] || [ -n "$(ls -A "$tmp/bad")" ]; then
		echo "# exit status $status; left: $(ls -A "$tmp/bad")"
		sed 's/^/# stderr: /' "$tmp/bad.err"
	fi
	rm -rf "$tmp/bad" && mkdir "$tmp/bad"
}
bad "--svg x.png: refused, no file" --svg "$tmp/bad/x.png" "$SCN"
bad "--svg in a missing directory: refused" --svg "$tmp/bad/missing/x.svg" "$SCN"
bad "--svg without a value: refused" "$SCN" --svg
bad "--svg with --fuzz: refused" --fuzz scenario --svg "$tmp/bad/x.svg" "$SCN"
bad "--svg with --time: refused" --backend kernel --time --svg "$tmp/bad/x.svg" "$SCN"
mkdir "$tmp/bad/dir.svg"
"$TOOL" run --svg "$tmp/bad/dir.svg" "$SCN" >/dev/null 2>"$tmp/bad.err"
[ $? -eq 2 ] && grep -q -- "--svg: $tmp/bad/dir.svg: Is a directory" \
	"$tmp/bad.err" && [ "$(ls -A "$tmp/bad")" = dir.svg ]
tap_result $? "--svg a directory: refused, nothing made beside it"
rm -rf "$tmp/bad" && mkdir "$tmp/bad"
# Writes 64M on a 16M machine: the run fails, the drawing is not written.
printf 'P0 mmap A 64M rw\nP0 write A 0 64M\nobserve\n' >"$tmp/oom.scn"
bad "a run that fails (out of memory) leaves no drawing" --memory 16M \
	--svg "$tmp/bad/oom.svg" "$tmp/oom.scn"

# SIGTERM while the run goes on: the signal's status, no file left.
printf 'P0 mmap A 512M rw\n' >"$tmp/slow.scn"
i=0
while [ $i -lt 8 ]; do
	echo "P0 write A 0 512M" >>"$tmp/slow.scn"
	i=$((i + 1))
done
echo observe >>"$tmp/slow.scn"
"$TOOL" run --no-check --svg "$tmp/bad/slow.svg" "$tmp/slow.scn" \
	>/dev/null 2>&1 &
pid=$!
i=0
while [ $i -lt 50 ] && [ -z "$(ls -A "$tmp/bad")" ]; do
	sleep 0.1
	i=$((i + 1))
done
sleep 0.2
kill -TERM $pid 2>/dev/null
wait $pid 2>/dev/null
status=$?
if [ $status -eq 0 ]; then
	skip "SIGTERM during the run leaves no file" "the run ended before the signal"
else
	[ $status -eq 143 ] && [ -z "$(ls -A "$tmp/bad")" ]
	tap_result $? "SIGTERM during the run leaves no file"
	[ -n "$(ls -A "$tmp/bad")" ] && echo "# status $status, left: $(ls -A "$tmp/bad")"
fi

echo "1..$n"
exit $fail
