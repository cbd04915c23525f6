#!/bin/sh
# A program that defines functions of its own under the library's names
# must not take over the library's calls to itself: the library binds its
# calls between its own functions at link time.  The program here defines
# every name the shared library exports (each aborts, naming itself),
# exports them, opens the library with dlopen() and uses it through
# dlsym() (tests/interpose-driver.c): sets, prints, reports and the bulk
# calls, whose functions call others of the library.
#
# Run by `make check`, which sets abs_top_builddir, abs_top_srcdir, CC, NM
# and CONSUMER_CFLAGS.  Exit 77 (skip) when the build has no shared
# library.
set -u

: "${abs_top_builddir:?set by make check}"
: "${abs_top_srcdir:?set by make check}"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/shiftpool-interpose.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' 0
trap 'exit 99' 1 2 15

# shellcheck source=tests/exports.sh
. "$abs_top_srcdir/tests/exports.sh"
exported_symbols "$tmp/names"
if ! grep -qx pool_destroy "$tmp/names"; then
	echo "interpose: no pool_destroy among the exports of $lib" >&2
	exit 99
fi

# One definition per exported name, each an abort that says who.
{
	echo '#include <stdio.h>'
	echo '#include <stdlib.h>'
	while read -r name; do
		echo "void $name(void);"
		echo "void $name(void)"
		echo "{"
		printf '\tfputs("interpose: the library called the'
		printf ' program'"'"'s %s\\n", stderr);\n' "$name"
		echo "	abort();"
		echo "}"
	done <"$tmp/names"
} >"$tmp/names.c"

# shellcheck disable=SC2086 # CONSUMER_CFLAGS is a list of options
if ! ${CC:-cc} ${CONSUMER_CFLAGS:-} -I"$abs_top_builddir/include" -rdynamic \
	-o "$tmp/driver" "$abs_top_srcdir/tests/interpose-driver.c" \
	"$tmp/names.c" -ldl >"$tmp/cc.log" 2>&1; then
	cat "$tmp/cc.log" >&2
	echo "interpose: the driver does not build" >&2
	exit 99
fi
echo "interpose: $(wc -l <"$tmp/names") names defined by the program"
"$tmp/driver" "$lib"
