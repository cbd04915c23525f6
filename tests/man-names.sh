#!/bin/sh
# Every function the shared library exports is named in the NAME section
# of some manual page, and every name there can be looked up: `man NAME`
# finds a page (the family's own, or a .so link to it) in its section.
#
# Run by `make check`, which sets abs_top_builddir, abs_top_srcdir, NM and
# MAN_PAGES (the pages make installs).  Exit 77 (skip) when the build has
# no shared library.
set -u

: "${abs_top_builddir:?set by make check}"
: "${abs_top_srcdir:?set by make check}"
: "${MAN_PAGES:?set by make check}"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/shiftpool-man-names.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' 0
trap 'exit 99' 1 2 15

# shellcheck source=tests/exports.sh
. "$abs_top_srcdir/tests/exports.sh"
exported_symbols "$tmp/exported"

# page NAME-section-names lines: the words before " \- " in NAME.
for page in $MAN_PAGES; do
	file=$abs_top_srcdir/$page
	grep -q '^\.so ' "$file" && continue
	awk -f "$abs_top_srcdir/tests/man-names.awk" "$file" |
		sed "s|^|$page |"
done >"$tmp/named"

# A broken extraction must not pass as "everything named".
if ! grep -q ' pool_init$' "$tmp/named"; then
	echo "man-names: found no pool_init in any NAME section; read:" >&2
	cat "$tmp/named" >&2
	exit 99
fi

status=0
cut -d' ' -f2 "$tmp/named" | sort -u >"$tmp/names"
missing=$(comm -23 "$tmp/exported" "$tmp/names")
if [ -n "$missing" ]; then
	echo "FAIL: exported by $lib but named in no page's NAME section:"
	echo "$missing" | sed 's/^/	/'
	status=1
fi

# man NAME looks for manN/NAME.N beside the page that names it.
while read -r page name; do
	dir=${page%/*}
	section=${page##*.}
	case " $MAN_PAGES " in
	*" $dir/$name.$section "*) ;;
	*)
		echo "FAIL: $page names $name, but no $dir/$name.$section is installed"
		status=1
		;;
	esac
done <"$tmp/named"

[ $status -eq 0 ] &&
	echo "man-names: $(wc -l <"$tmp/exported") exported functions, each named by a page that man finds"
exit $status
