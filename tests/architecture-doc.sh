#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# architecture-doc.sh - docs/ARCHITECTURE.md kept in step with the tree:
#
#  1.   every tracked C file outside tests/ and fuzz/ is named in the
#       section of its top directory ("**`DIR/`**"), by its path below
#       that directory (`arch/contpte.c` under mm/) or its name;
#  1b.  every top directory that holds tracked C files (tests/ and fuzz/
#       too) has a section;
#  2.   the recipe for a new advice ("## Adding a batched path") names
#       every file (fuzz/ too) that lists the advices - one that names at
#       least six of the eleven, by their MADV_* constant or their
#       scenario word - since a new advice must join each such list;
#  and  checks 1 and 2 fail where they should: a copy of the document
#       without one file's bullet, and a tree with one more list of the
#       advices.
#
# Usage: sh tests/architecture-doc.sh   (from the top of the tree)

. tests/tap.sh

doc=docs/ARCHITECTURE.md
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# The C files of the tree, tests and fuzzers left out.
sources() {
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git ls-files '*.c'
	else
		find . -name '*.c' -not -path './build*' | sed 's|^\./||'
	fi | grep -v -e '^tests/' -e '^fuzz/' | LC_ALL=C sort
}

# The lines of DOC's section for top directory $2.
section() {
	awk -v head="**\`$2/\`**" '
		index($0, head) == 1 { on = 1; print; next }
		on && (/^\*\*`/ || /^## /) { on = 0 }
		on { print }' "$1"
}

# The files of the list on stdin that DOC ($1) does not name, one a line.
unnamed() {
	while IFS= read -r f; do
		top=${f%%/*}
		below=${f#*/}
		base=${f##*/}
		section "$1" "$top" >"$tmp/section"
		if ! grep -qF "\`$below\`" "$tmp/section" &&
		   ! grep -qF "\`$base\`" "$tmp/section" &&
		   ! grep -qF "\`$f\`" "$tmp/section"; then
			# "`name.c`, `name.h`" lists name both ways; a
			# "`name.[ch]`" too.
			stem=${base%.c}
			grep -qF "\`$stem.[ch]\`" "$tmp/section" || echo "$f"
		fi
	done
}

# Files listing the advices: six or more of the eleven named.
advice_lists() {
	for f in "$@"; do
		n=0
		for a in DONTNEED:dontneed HUGEPAGE:hugepage \
			 NOHUGEPAGE:nohugepage DONTFORK:dontfork DOFORK:dofork \
			 FREE:free PAGEOUT:pageout POPULATE_READ:populate-read \
			 POPULATE_WRITE:populate-write WIPEONFORK:wipeonfork \
			 KEEPONFORK:keeponfork; do
			if grep -q -e "MADV_${a%%:*}\\b" -e "\"${a#*:}\"" "$f"; then
				n=$((n + 1))
			fi
		done
		[ "$n" -ge 6 ] && echo "$f"
	done
}

# The recipe's section: from "## Adding a batched path" to the next "## ".
recipe() {
	awk '/^## Adding a batched path/ { on = 1; next }
	     on && /^## / { on = 0 } on { print }' "$1"
}

# The listing files ($2...) the recipe of DOC ($1) does not name.
unlisted() {
	d=$1
	shift
	recipe "$d" >"$tmp/recipe"
	for f in "$@"; do
		grep -qF "\`$f\`" "$tmp/recipe" || echo "$f"
	done
}

sources >"$tmp/sources"
unnamed "$doc" <"$tmp/sources" >"$tmp/missing"
[ -s "$tmp/sources" ] && [ ! -s "$tmp/missing" ]
tap_result $? "$doc names every C file outside tests/ and fuzz/ ($(wc -l <"$tmp/sources") files) in its directory's section"
[ -s "$tmp/missing" ] && sed 's/^/# not named: /' "$tmp/missing"

# 1b. A section for every top directory with C files.
dirs=$(if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files '*.c'
else
	find . -name '*.c' -not -path './build*' | sed 's|^\./||'
fi | grep / | sed 's|/.*||' | LC_ALL=C sort -u)
nodir=
for d in $dirs; do
	grep -qF "**\`$d/\`**" "$doc" || nodir="$nodir $d/"
done
[ -n "$dirs" ] && [ -z "$nodir" ]
tap_result $? "$doc has a section for every directory with C files ($(echo $dirs))"
[ -n "$nodir" ] && echo "# no section:$nodir"

# Every C file and header but the tests', the fuzzers' too (a fuzzer that
# draws advices lists them).
all=$(if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files '*.c' '*.h'
else
	find . -name '*.[ch]' -not -path './build*' | sed 's|^\./||'
fi | grep -v '^tests/')
lists=$(advice_lists $all)
unlisted "$doc" $lists >"$tmp/unlisted"
[ -n "$lists" ] && [ ! -s "$tmp/unlisted" ]
tap_result $? "the recipe for a new advice names every file that lists the advices ($(echo $lists))"
[ -s "$tmp/unlisted" ] && sed 's/^/# not in the recipe: /' "$tmp/unlisted"

# 3. Without one file's bullet, check 1 finds it.
victim=$(grep '^scenario/parse\.c$' "$tmp/sources" || head -n 1 "$tmp/sources")
grep -vF "\`${victim##*/}\`" "$doc" >"$tmp/doc"
echo "$victim" | unnamed "$tmp/doc" >"$tmp/missing"
[ "$(cat "$tmp/missing")" = "$victim" ]
tap_result $? "a document without $victim's bullet fails check 1"

# 4. One more file listing the advices, not in the recipe: check 2 finds it.
printf '%s\n' 'static const char *const words[] = { "dontneed", "hugepage",' \
	'	"nohugepage", "dontfork", "dofork", "free", "pageout" };' \
	>"$tmp/extra.c"
unlisted "$doc" $(advice_lists "$tmp/extra.c") >"$tmp/unlisted"
[ "$(cat "$tmp/unlisted")" = "$tmp/extra.c" ]
tap_result $? "a seventh list of the advices outside the recipe fails check 2"

echo "1..$n"
exit $fail
