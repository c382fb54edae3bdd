#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# hostile-drawings.sh - the drawings (`ptebatch plot`, `bench --plot`,
# `run --svg`) given hostile text, as TAP (issue 24, points 4, 7 and 8).
#
#   - gnuplot runs nothing and expands nothing it is handed: each field of
#     a row that a figure draws (variant, machine, folio, op, trace) and
#     --machine carry, one at a time, each expansion gnuplot 5.4 has: a
#     backquoted `touch MARK`, $(...), @macros, system() after a closing
#     quote, formats (% in a tic label is one), \-escapes, a newline and
#     `;` followed by `set output`, the datablock terminator, enhanced
#     text, XML's specials.  Each run must exit 0, leave no MARK and no
#     HIJACK.svg, write an SVG that xmllint accepts and rsvg-convert
#     renders, and draw each line of the text exactly as it was;
#   - an "arch" that is no plain name (it names files) is refused;
#     control characters and bytes that are not UTF-8 are drawn as U+FFFD;
#     an --out or --plot path with shell and gnuplot syntax is written
#     exactly there;
#   - a 0 on a log axis (point 8) is refused before gnuplot runs: exit 2,
#     one line naming the rows file, the line and the field, no file
#     written, an existing target as it was; a gnuplot that fails, is
#     killed or is missing is one line in words (no wait status, no
#     script), writes no file, and the failed script is kept and named;
#   - `run --svg` of scenario files named with bytes that are not UTF-8,
#     control characters, a newline, <, &, ]]> and -- writes SVG that
#     xmllint accepts and rsvg-convert renders.
# A missing gnuplot, python3, xmllint or rsvg-convert makes its checks SKIP.
#
# Usage: BUILD=build sh tests/hostile-drawings.sh   (from the top of the
# tree)

BUILD=${BUILD:-build}
tool=$(cd "$(dirname "$BUILD/ptebatch")" && pwd)/ptebatch
top=$(pwd)
. tests/tap.sh

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# A script kept for debugging lands here, not in /tmp.
mkdir "$tmp/keep" "$tmp/cwd"
TMPDIR=$tmp/keep
export TMPDIR

have() {
	command -v "$1" >/dev/null 2>&1
}

if [ ! -x "$tool" ]; then
	echo "not ok 1 - $tool is not built"
	echo "1..1"
	exit 1
fi

# Well-formed (xmllint) and renderable (rsvg-convert), each of "$@";
# 0 or 1 with the reasons as TAP comments.
svg_ok() {
	for f in "$@"; do
		if have xmllint && ! xmllint --noout "$f" 2>"$tmp/xml.err"; then
			sed 's/^/# xmllint: /' "$tmp/xml.err" | head -5
			return 1
		fi
		if have rsvg-convert && ! rsvg-convert -o "$tmp/render.png" \
			"$f" 2>"$tmp/rsvg.err"; then
			sed 's/^/# rsvg-convert: /' "$tmp/rsvg.err" | head -5
			return 1
		fi
	done
	return 0
}

# Nothing the hostile text asked for happened: no MARK, no HIJACK.svg,
# wherever a shell or gnuplot could have made them.
nothing_ran() {
	for dir in "$tmp/cwd" "$tmp" "$top" "$tmp/keep"; do
		if [ -e "$dir/MARK" ] || [ -e "$dir/HIJACK.svg" ]; then
			echo "# a command ran: $(ls "$dir/MARK" "$dir/HIJACK.svg" 2>/dev/null)"
			rm -f "$dir/MARK" "$dir/HIJACK.svg"
			return 1
		fi
	done
	return 0
}

if ! have gnuplot || ! have python3; then
	skip "hostile figures" "needs gnuplot and python3"
else

# ---- every field, every expansion (point 4) ------------------------------

# The cases: python3 writes $tmp/case/N/{name,rows.json,args,expect}: the
# rows with the text planted in one field, the arguments of plot (a NUL
# after each), and the text each line of which the figure must show.
python3 - "$tmp/case" <<'EOF'
import json, os, sys

out = sys.argv[1]
texts = [
    ("a backquoted command", "`touch MARK`"),
    ("a backquote after a closing quote", '"`touch MARK`"'),
    ("a shell's $(...)", "$(touch MARK) ${HOME}"),
    ("macros", "@GPVAL_TERM @GPVAL_PWD @x"),
    ("system() after a closing double quote", '".system("touch MARK")."'),
    ("system() after a closing single quote", "'.system('touch MARK').'"),
    ("formats", '%s %d %n %% %1$s 100% sprintf("%s",`touch MARK`)'),
    ("escapes", 'a\\b \\n \\" \\140touch MARK\\140 \\U+0041 \\'),
    ("a newline, set output and system()",
     'x\n; set output "HIJACK.svg"; system("touch MARK")'),
    ("a semicolon and a comment", 'a; set output "HIJACK.svg" # b'),
    ("the datablock terminator", "x\nEOD\n`touch MARK`\n"),
    ("enhanced text", "a^{b}_c @{x} ~a{.8-} &{sp} {/Symbol a}"),
    ("XML's specials", "]]> & < > -- <!-- &amp; <![CDATA[ x"),
]
docs = "docs"
bench = [json.loads(l) for l in open(os.path.join(docs, "bench-results.json"))]
replay = [json.loads(l) for l in open(os.path.join(docs, "replay-results.json"))]
mprotect = [r for r in bench if r["bench"] == "mprotect"]


def plant(field, text):
    """The rows, the plot arguments and the text the figure shows."""
    if field == "variant":
        rows = [dict(r) for r in replay]
        for r in rows:
            if r["variant"] == "upstream":
                r["variant"] = "upstream " + text
        return rows, [], "upstream " + text
    if field == "trace":
        rows = [dict(r) for r in replay]
        for r in rows:
            r["trace"] = text
        return rows, [], text
    rows = [dict(r) for r in mprotect]
    for r in rows:
        if field == "machine":
            r["machine"] = text
        elif field == "op":
            r["op"] = text
        elif field == "folio" and r["folio"] == "64K":
            r["folio"] = text
    if field == "--machine":
        return rows, ["--machine", text], text
    return rows, [], text


i = 0
for field in ["variant", "machine", "folio", "op", "trace", "--machine"]:
    for name, text in texts:
        # The trace is drawn by its base name: no "/" planted there.
        if field == "trace" and "/" in text:
            continue
        rows, args, expect = plant(field, text)
        d = os.path.join(out, "%03d" % i)
        os.makedirs(d)
        open(os.path.join(d, "name"), "w").write("%s: %s\n" % (field, name))
        with open(os.path.join(d, "rows.json"), "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
        with open(os.path.join(d, "args"), "wb") as f:
            for a in args:
                f.write(a.encode() + b"\0")
        open(os.path.join(d, "expect"), "w").write(expect)
        i += 1
EOF

# Each case: plot, then nothing ran; the SVGs are checked together after
# (one python3 for all: each line of the case's text in one <text>).
for d in "$tmp"/case/*; do
	# The arguments from their NUL-separated file, as they are.
	(cd "$tmp/cwd" && xargs -0 -a "$d/args" "$tool" plot \
		--out "$d/out.svg" "$d/rows.json") >"$d/out" 2>"$d/err"
	echo $? >"$d/status"
	nothing_ran >"$d/ran" || echo 1 >>"$d/status"
done
python3 - "$tmp"/case/* >"$tmp/literal" <<'EOF'
import sys
import xml.etree.ElementTree as ET
for d in sys.argv[1:]:
    try:
        texts = ["".join(e.itertext())
                 for e in ET.parse(d + "/out.svg").iter()
                 if e.tag.endswith("}text") or e.tag == "text"]
    except Exception as e:
        print("%s # cannot read its SVG: %s" % (d, e))
        continue
    want = open(d + "/expect").read()
    for l in want.split("\n"):
        if l and not any(l in t for t in texts):
            print("%s # not drawn as it is: %r" % (d, l))
EOF
for d in "$tmp"/case/*; do
	ok=0
	[ "$(cat "$d/status")" = 0 ] || ok=1
	sed 's/^/# /' "$d/ran"
	if [ $ok -eq 0 ] && have xmllint && ! xmllint --noout "$d/out.svg" \
		2>"$tmp/xml.err"; then
		sed 's/^/# xmllint: /' "$tmp/xml.err" | head -5
		ok=1
	fi
	# rsvg-convert (slow) where the text is XML's own or many lines.
	case $(cat "$d/name") in
	*XML*|*terminator*|*newline*)
		[ $ok -eq 0 ] && { svg_ok "$d/out.svg" || ok=1; } ;;
	esac
	if grep -q "^$d " "$tmp/literal"; then
		grep "^$d " "$tmp/literal" | sed 's/^[^#]*//'
		ok=1
	fi
	[ $ok -eq 0 ] || sed 's/^/# stderr: /' "$d/err" | head -5
	tap_result $ok "plot, $(cat "$d/name"): nothing runs, well-formed, drawn as it is"
done

# ---- what is refused or replaced -------------------------------------------

python3 - "$tmp" <<'EOF'
import json, sys
tmp = sys.argv[1]
rows = [json.loads(l) for l in open("docs/bench-results.json")
        if json.loads(l)["bench"] == "mprotect"]
with open(tmp + "/arch.json", "w") as f:
    for i, r in enumerate(rows):
        r = dict(r)
        if i == 2:
            r["arch"] = "x86_64/../../`touch MARK`"
        f.write(json.dumps(r) + "\n")
with open(tmp + "/ctl.json", "w") as f:
    for r in rows:
        r = dict(r)
        r["machine"] = "ctl\u0001\u001b[31m\u007f\u0085\ufffe end"
        f.write(json.dumps(r) + "\n")
EOF
(cd "$tmp/cwd" && "$tool" plot --out "$tmp/arch.svg" "$tmp/arch.json") \
	>/dev/null 2>"$tmp/arch.err"
st=$?
[ $st -eq 2 ] && nothing_ran && ! ls "$tmp"/arch*.svg >/dev/null 2>&1 &&
	grep -q "arch.json:3: \"arch\"" "$tmp/arch.err"
tap_result $? "plot: an \"arch\" that is no plain name (it names files) is refused"
sed 's/^/# /' "$tmp/arch.err"

# A character XML cannot carry, each drawn as U+FFFD (one per byte).
has_replacement() {
	python3 - "$1" "$2" <<'EOF'
import sys
import xml.etree.ElementTree as ET
text = "\n".join("".join(e.itertext()) for e in ET.parse(sys.argv[1]).iter())
sys.exit(0 if sys.argv[2] in text else 1)
EOF
}
rm -f "$tmp/ctl.svg"
"$tool" plot --out "$tmp/ctl.svg" "$tmp/ctl.json" >/dev/null 2>&1 &&
	svg_ok "$tmp/ctl.svg" &&
	has_replacement "$tmp/ctl.svg" "ctl$(printf '\357\277\275\357\277\275')[31m$(printf '\357\277\275\357\277\275\357\277\275\357\277\275\357\277\275\357\277\275') end"
tap_result $? "plot: control characters in a row are drawn as U+FFFD, well-formed"

rm -f "$tmp/ctl.svg"
(cd "$tmp/cwd" && "$tool" plot --out "$tmp/ctl.svg" \
	--machine "$(printf 'bad\377\376\001x')" "$tmp/case/000/rows.json") \
	>/dev/null 2>&1
st=$?
nothing_ran >/dev/null || st=1
if [ -e "$tmp/ctl.svg" ]; then
	f=$tmp/ctl.svg
else
	f=$(ls "$tmp"/ctl-*.svg 2>/dev/null | head -1)
fi
[ $st -eq 0 ] && [ -n "$f" ] && svg_ok "$f" &&
	has_replacement "$f" "bad$(printf '\357\277\275\357\277\275\357\277\275')x"
tap_result $? "plot: --machine with bytes that are not UTF-8: U+FFFD, well-formed"

# File names never reach gnuplot or a shell: written exactly there.
mkdir "$tmp/o"
for name in '`touch MARK`$(touch MARK)@GPVAL_PWD.svg' \
	"q'\"x\";system(\"touch MARK\").svg" "$(printf 'nl\nset output "HIJACK.svg"\n.svg')"; do
	(cd "$tmp/cwd" && "$tool" plot --out "$tmp/o/$name" \
		"$tmp/case/000/rows.json") >/dev/null 2>"$tmp/o.err"
	st=$?
	[ $st -eq 0 ] && nothing_ran && [ -s "$tmp/o/$name" ] &&
		svg_ok "$tmp/o/$name"
	tap_result $? "plot --out $(printf '%s' "$name" | tr '\n' '|'): written there, nothing runs"
	sed 's/^/# /' "$tmp/o.err"
done
name='b`touch MARK`$(touch MARK).svg'
(cd "$tmp/cwd" && "$tool" bench gup --quick --backend model \
	--plot "$tmp/o/$name") >/dev/null 2>"$tmp/o.err"
st=$?
[ $st -eq 0 ] && nothing_ran && [ -s "$tmp/o/$name" ] && svg_ok "$tmp/o/$name"
tap_result $? "bench --plot with shell and gnuplot syntax in its name: written there"
sed 's/^/# /' "$tmp/o.err"

# ---- a 0 on a log axis, and gnuplot failing (point 8) ---------------------

python3 - "$tmp" <<'EOF'
import json, sys
tmp = sys.argv[1]
def write(name, rows):
    with open("%s/%s.json" % (tmp, name), "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
def load(name):
    return [json.loads(l) for l in open("docs/%s.json" % name)]
rows = load("replay-results")
for r in rows:
    r["faults"] = 0
write("zero-all", rows)
rows = load("replay-results")
rows[4]["faults"] = 0
write("zero-one", rows)
rows = load("bench-results")
for i, r in enumerate(rows):
    if r["bench"] == "gup" and r["op"] == "floor":
        r["median_us"] = 0
        print(i + 1, file=open(tmp + "/zero-gup.line", "w"))
        break
write("zero-gup", rows)
rows = load("bench-results")
for i, r in enumerate(rows):
    if r["bench"] == "cow" and r["backend"] == "model" and \
       r.get("wp_reuse_max") == 1:
        r["wp_reuse_max"] = 0
        print(i + 1, file=open(tmp + "/zero-cow.line", "w"))
        break
write("zero-cow", rows)
rows = load("predicted-results")
for r in rows:
    if "predicted_us" in r:
        r["predicted_us"] = 0
write("zero-pred", rows)
rows = load("replay-results")
rows[0]["median_us"] = -1
write("negative", rows)
EOF

# Refused: exit 2, one line naming FILE:LINE and the field, no file.
refused() {
	what=$1 file=$2 line=$3 field=$4
	shift 4
	rm -f "$tmp"/z*.svg
	"$tool" plot --out "$tmp/z.svg" "$@" "$tmp/$file.json" >/dev/null \
		2>"$tmp/z.err"
	st=$?
	[ $st -eq 2 ] && [ "$(wc -l <"$tmp/z.err")" -eq 1 ] &&
		grep -q "$file.json:$line: \"$field\" is .*log" "$tmp/z.err" &&
		! ls "$tmp"/z*.svg >/dev/null 2>&1 &&
		[ -z "$(ls "$tmp/keep")" ]
	tap_result $? "plot: $what: refused (FILE:LINE, field), nothing written"
	sed 's/^/# /' "$tmp/z.err" | head -8
}
refused "faults 0 in every replay row" zero-all 1 faults
refused "faults 0 in one replay row (once silently not drawn)" zero-one 5 faults
refused "a gup time of 0" zero-gup "$(cat "$tmp/zero-gup.line")" median_us
refused "wp_reuse_max 0 on the cow figure's log2 x axis" zero-cow \
	"$(cat "$tmp/zero-cow.line")" wp_reuse_max
refused "a predicted time of 0" zero-pred "[0-9]*" predicted_us --only predicted
refused "a negative replay time" negative 1 median_us

printf 'old\n' >"$tmp/z.svg"
"$tool" plot --out "$tmp/z.svg" "$tmp/zero-all.json" >/dev/null 2>&1
[ $? -eq 2 ] && [ "$(cat "$tmp/z.svg")" = old ]
tap_result $? "plot: a refused row leaves an existing --out as it was"

# gnuplot itself failing: a stand-in on $PATH.
mkdir "$tmp/fake" "$tmp/nognuplot"
fake() {
	printf '#!/bin/sh\n%s\n' "$1" >"$tmp/fake/gnuplot"
	chmod +x "$tmp/fake/gnuplot"
}
gnuplot_fails() {
	what=$1 words=$2 kept=$3
	rm -f "$tmp"/f*.svg "$tmp"/keep/*
	printf 'old\n' >"$tmp/f.svg"
	(cd "$tmp/cwd" && PATH=$tmp/fake:$PATH "$tool" plot \
		--out "$tmp/f.svg" "$tmp/case/000/rows.json") >/dev/null \
		2>"$tmp/f.err"
	st=$?
	ok=0
	[ $st -eq 1 ] || ok=1
	[ "$(wc -l <"$tmp/f.err")" -eq 1 ] || ok=1
	grep -q "$words" "$tmp/f.err" || ok=1
	! grep -qi 'status [0-9]\{3\}\|set terminal\|plot \$d' "$tmp/f.err" || ok=1
	[ "$(cat "$tmp/f.svg")" = old ] || ok=1
	if [ "$kept" = kept ]; then
		k=$(ls "$tmp"/keep/ptebatch-plot-*.gp 2>/dev/null)
		[ -n "$k" ] && grep -q "$k" "$tmp/f.err" &&
			grep -q '^set terminal svg' "$k" || ok=1
	fi
	tap_result $ok "plot: gnuplot $what: one line in words, no file written"
	sed 's/^/# /' "$tmp/f.err" | head -8
}
fake 'cat >/dev/null; printf "<?xml version=\"1.0\"?>\n<svg>\n"
printf "\n         plot \$d0 using 1:2 with boxes title \$L[3][2:]\n                ^\n" >&2
printf "\"/proc/self/fd/0\" line 69: all points y value undefined!\n\n" >&2
exit 1'
gnuplot_fails "stopping half-way (error, half an SVG)" \
	"line 69 of its script: all points y value undefined!" kept
fake 'kill -SEGV $$'
gnuplot_fails "killed by a signal" "killed by signal 11" kept
fake 'exit 0'
gnuplot_fails "drawing nothing" "drew nothing" kept
rm -f "$tmp/f.svg"
(cd "$tmp/cwd" && PATH=$tmp/nognuplot "$tool" plot --out "$tmp/f.svg" \
	"$tmp/case/000/rows.json") >/dev/null 2>"$tmp/f.err"
# (--out is checked first, as a usage error: status 2 and the hint.)
[ $? -ne 0 ] && grep -q "needs gnuplot, which is not installed" "$tmp/f.err" &&
	! grep -q "status" "$tmp/f.err" && ! [ -e "$tmp/f.svg" ]
tap_result $? "plot: no gnuplot on \$PATH: said in words, no file"
sed 's/^/# /' "$tmp/f.err"
rm -f "$tmp"/keep/*
fi

# ---- run --svg of hostile file names (point 7) ------------------------------

mkdir "$tmp/scn"
for what in "bytes that are not UTF-8" "control characters" "a newline" \
	"<, & and quotes" "]]>" "-- and a comment" "surrogates, past U+10FFFF"; do
	case $what in
	"bytes that are not UTF-8") name=$(printf 'bad\377\376\300\257utf8.scn') ;;
	"control characters") name=$(printf 'ctl\001\033[31m\177x.scn') ;;
	"a newline") name=$(printf 'new\nline.scn') ;;
	"<, & and quotes") name='<a href="x">&amp;'"'"'.scn' ;;
	"]]>") name='cdata]]>end.scn' ;;
	"-- and a comment") name='a--b<!--c-->.scn' ;;
	*) name=$(printf 'sur\355\240\200 and \364\220\200\200.scn') ;;
	esac
	if ! cp examples/cow-64k.scn "$tmp/scn/$name" 2>/dev/null; then
		skip "run --svg of a scenario named with $what" \
			"the file system refused the name"
		continue
	fi
	rm -f "$tmp/run.svg"
	"$tool" run --svg "$tmp/run.svg" "$tmp/scn/$name" >/dev/null 2>"$tmp/run.err"
	st=$?
	[ $st -eq 0 ] && [ -s "$tmp/run.svg" ] && svg_ok "$tmp/run.svg"
	tap_result $? "run --svg of a scenario named with $what: well-formed, renders"
	sed 's/^/# /' "$tmp/run.err" | head -3
done
# The names as they are where XML can carry them.
if have python3; then
	cp examples/cow-64k.scn "$tmp/scn/x]]>&<y.scn"
	"$tool" run --svg "$tmp/run.svg" "$tmp/scn/x]]>&<y.scn" >/dev/null 2>&1 &&
		python3 - "$tmp/run.svg" <<'EOF'
import sys
import xml.etree.ElementTree as ET
text = "\n".join("".join(e.itertext()) for e in ET.parse(sys.argv[1]).iter())
sys.exit(0 if "x]]>&<y.scn, statement" in text else 1)
EOF
	tap_result $? "run --svg: a name with ]]>, & and < is drawn as it is"
fi

echo "1..$n"
exit $fail
