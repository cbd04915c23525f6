#!/bin/sh
# The programs in the manual's EXAMPLES sections compile without a warning
# (-Wall -Wextra -Werror) against this build's header and library, and run
# with exit status 0: a page cannot drift from the API it documents.  A
# page whose functions the library does not export yet is skipped, and
# named.
#
# Run by `make check`, which sets abs_top_builddir, abs_top_srcdir, CC,
# CONSUMER_CFLAGS, NM and MAN_PAGES.  Exit 77 (skip) when the build has no
# shared library to read the exports of.
set -u

: "${abs_top_builddir:?set by make check}"
: "${abs_top_srcdir:?set by make check}"
: "${MAN_PAGES:?set by make check}"
CC=${CC:-cc}
CONSUMER_CFLAGS=${CONSUMER_CFLAGS:-}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/shiftpool-man-examples.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' 0
trap 'exit 99' 1 2 15

# shellcheck source=tests/exports.sh
. "$abs_top_srcdir/tests/exports.sh"
exported_symbols "$tmp/exported"

status=0
ran=0
for page in $MAN_PAGES; do
	file=$abs_top_srcdir/$page
	name=${page##*/}
	# The .EX block that holds a main(), with roff's escapes undone.
	awk '
		/^\.EX/ { block = ""; inside = 1; next }
		/^\.EE/ { if (block ~ /\nmain\(/) print block; inside = 0; next }
		inside { block = block "\n" $0 }
	' "$file" | sed -e 's/\\e/\\/g' -e 's/\\-/-/g' >"$tmp/$name.c"
	[ -s "$tmp/$name.c" ] || continue
	# Every function of the page's NAME must be exported to build it.
	missing=
	for fn in $(awk -f "$abs_top_srcdir/tests/man-names.awk" "$file"); do
		grep -qx "$fn" "$tmp/exported" || missing="$missing $fn"
	done
	if [ -n "$missing" ]; then
		echo "$page: not exported yet:$missing; example not built"
		continue
	fi
	# shellcheck disable=SC2086 # the flags are word lists
	if ! "$abs_top_builddir/libtool" --silent --mode=link \
		$CC -Wall -Wextra -Werror $CONSUMER_CFLAGS \
		-I"$abs_top_builddir/include" -o "$tmp/$name" "$tmp/$name.c" \
		"$abs_top_builddir/src/libshiftpool.la" >"$tmp/cc.log" 2>&1; then
		echo "FAIL: $page: the example does not compile:"
		cat -n "$tmp/$name.c"
		cat "$tmp/cc.log"
		status=1
		continue
	fi
	"$tmp/$name" >"$tmp/out" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		echo "FAIL: $page: the example exits with status $rc:"
		cat "$tmp/out"
		status=1
		continue
	fi
	ran=$((ran + 1))
	echo "$page: example compiled clean and ran"
done
# A broken extraction must not pass as "no examples".
if [ $ran -eq 0 ]; then
	echo "FAIL: no example was built"
	exit 1
fi
exit $status
