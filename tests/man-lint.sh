#!/bin/sh
# Every manual page is clean: `mandoc -Tlint` says nothing about it, or,
# where mandoc is missing, `groff -ww -z -man` warns of nothing.  A page
# that is only a `.so` link must name a page that is installed too (mandoc
# warns of every .so, so the link is checked here and its target linted).
# Every page under man/ must be in the list make installs.
#
# Run by `make check`, which sets abs_top_srcdir and MAN_PAGES (the pages
# make installs, from the top of the source tree).  MANDOC and GROFF name
# the programs; exit 77 (skip) when neither is found.
set -u

: "${abs_top_srcdir:?set by make check}"
: "${MAN_PAGES:?set by make check}"
MANDOC=${MANDOC:-mandoc}
GROFF=${GROFF:-groff}

if command -v "$MANDOC" >/dev/null 2>&1; then
	lint() { "$MANDOC" -Tlint "$1" 2>&1; }
	linter=$MANDOC
elif command -v "$GROFF" >/dev/null 2>&1; then
	# -t: the ATTRIBUTES tables are tbl's.
	lint() { "$GROFF" -ww -z -t -man "$1" 2>&1; }
	linter="$GROFF -ww"
else
	echo "man-lint: neither mandoc nor groff found; skipped"
	exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/shiftpool-man-lint.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' 0
trap 'exit 99' 1 2 15

# .so names its target from the top of the manual tree, as man(1) finds it.
cd "$abs_top_srcdir/man" || exit 99

status=0
count=0
for page in $MAN_PAGES; do
	page=${page#man/}
	count=$((count + 1))
	echo "$page" >>"$tmp/listed"
	if [ ! -f "$page" ]; then
		echo "FAIL: $page: listed but missing"
		status=1
		continue
	fi
	if grep -q '^\.so ' "$page"; then
		target=$(sed -n 's/^\.so //p' "$page")
		lines=$(wc -l <"$page")
		if [ "$lines" -ne 1 ]; then
			echo "FAIL: $page: a .so link holds more than the link"
			status=1
		fi
		case " $MAN_PAGES " in
		*" man/$target "*) ;;
		*)
			echo "FAIL: $page: links to $target, no installed page"
			status=1
			;;
		esac
		continue
	fi
	lint "$page" >"$tmp/out"
	if [ -s "$tmp/out" ]; then
		echo "FAIL: $page: $linter:"
		sed 's/^/	/' "$tmp/out"
		status=1
	fi
done

# A page written but not installed is a page nobody reads.
find man* -type f -name '*.[1-9]' | sort >"$tmp/found"
sort -o "$tmp/listed" "$tmp/listed"
unlisted=$(comm -23 "$tmp/found" "$tmp/listed")
if [ -n "$unlisted" ]; then
	echo "FAIL: pages under man/ that make does not install:"
	echo "$unlisted" | sed 's/^/	/'
	status=1
fi

[ $status -eq 0 ] && echo "man-lint: $count pages clean ($linter)"
exit $status
