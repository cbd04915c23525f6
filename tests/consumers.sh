#!/bin/sh
# What other programs see of an installed tree (installed into a temporary
# DESTDIR):
#  - the header compiles clean, and the program runs, as C99 and C11 with
#    -pedantic -Wall -Wextra -Werror (tests/consumer-header.c);
#  - the same as C++11 and C++17 with g++ (tests/consumer-header.cc),
#    linked against the library: the declarations have C linkage.  SKIP of
#    that part without g++;
#  - a program linked with `pkg-config --static --libs shiftpool` against
#    the static library alone (the shared one removed from the tree) runs,
#    and does not need libshiftpool.so; where the toolchain can, fully
#    static too, which needs Libs.private to be complete.
#
# Run by `make check` (see tests/install-common.sh for what it sets; also
# CC, PKG_CONFIG, CONSUMER_CFLAGS).  CXX names the C++ compiler (g++).
set -u

CC=${CC:-cc}
CXX=${CXX:-g++}
CONSUMER_CFLAGS=${CONSUMER_CFLAGS:-}

# shellcheck source=tests/install-common.sh
. "${abs_top_srcdir:?set by make check}/tests/install-common.sh"

root=$tmp/root
install_into "$root"
inc=-I$root$includedir
lib=$root$libdir
LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH
strict="-pedantic -Wall -Wextra -Werror"
skipped=

# built NAME: run $tmp/NAME and check that it says ok.
built() {
	out=$("$tmp/$1") || fail "$1 exited with status $?: $out"
	[ "$out" = "ok $PACKAGE_VERSION" ] || fail "$1 printed '$out'"
	echo "$1: compiled clean and ran"
}

# Each also with SHIFTPOOL_INLINE (the inline fast paths), and through
# <shiftpool/inline.h> itself.
for std in c99 c11 c99-inline c11-inline c11-inline-header; do
	inline=
	case $std in
	*-inline) inline=-DSHIFTPOOL_INLINE ;;
	*-inline-header) inline=-DCONSUMER_INLINE_HEADER ;;
	esac
	# shellcheck disable=SC2086 # the flags are word lists
	$CC -std=${std%%-*} $strict $inline $CONSUMER_CFLAGS "$inc" \
		-o "$tmp/$std" "$abs_top_srcdir/tests/consumer-header.c" \
		-L"$lib" -lshiftpool || fail "the header as $std"
	built $std
done

if command -v "$CXX" >/dev/null 2>&1; then
	# Without SHIFTPOOL_INLINE the header is declarations alone: clean
	# under -Wold-style-cast too.
	for std in c++11 c++17 c++11-inline c++17-inline; do
		inline=-Wold-style-cast
		case $std in *-inline) inline=-DSHIFTPOOL_INLINE ;; esac
		# shellcheck disable=SC2086
		$CXX -std=${std%-inline} $strict $inline $CONSUMER_CFLAGS \
			"$inc" -o "$tmp/$std" \
			"$abs_top_srcdir/tests/consumer-header.cc" \
			-L"$lib" -lshiftpool || fail "the header as $std"
		built $std
	done
else
	echo "no $CXX: the C++ consumers are skipped"
	skipped="$skipped C++"
fi

# The static library, alone: with the shared one gone from the tree,
# -lshiftpool can only mean libshiftpool.a.
if [ -z "${PKG_CONFIG:-}" ]; then
	echo "configure found no pkg-config: the static consumer is skipped"
	skipped="$skipped static"
elif [ ! -f "$lib/libshiftpool.a" ]; then
	echo "no static library (--disable-static): the static consumer is skipped"
	skipped="$skipped static"
else
	rm -f "$lib"/libshiftpool.so*
	use_pkgconfig "$root"
	cflags=$($PKG_CONFIG --cflags shiftpool) || fail "pkg-config --cflags"
	libs=$($PKG_CONFIG --static --libs shiftpool) ||
		fail "pkg-config --static --libs"
	echo "pkg-config --static --libs shiftpool: $libs"
	# shellcheck disable=SC2086
	$CC $CONSUMER_CFLAGS -o "$tmp/static" \
		"$abs_top_srcdir/tests/pkgconfig-consumer.c" $cflags $libs ||
		fail "a program linked with pkg-config --static --libs"
	if readelf -d "$tmp/static" | grep -q 'NEEDED.*libshiftpool'; then
		fail "the static consumer needs the shared library"
	fi
	run_consumer "$tmp/static" "$lib"
	echo "static library: linked and ran"

	# Fully static, where the C library can be linked so (not with a
	# sanitizer, not without libc.a): every library libshiftpool needs
	# must then be in Libs.private.
	case "$CONSUMER_CFLAGS" in
	*-fsanitize=*) echo "sanitized build: no fully static consumer" ;;
	*)
		echo 'int main(void){return 0;}' >"$tmp/empty.c"
		if $CC -static -o "$tmp/empty" "$tmp/empty.c" 2>/dev/null; then
			# shellcheck disable=SC2086
			$CC -static $CONSUMER_CFLAGS -o "$tmp/all-static" \
				"$abs_top_srcdir/tests/pkgconfig-consumer.c" \
				$cflags $libs ||
				fail "a fully static link with pkg-config --static --libs"
			run_consumer "$tmp/all-static" "$lib"
			echo "fully static: linked and ran"
		else
			echo "$CC cannot link a static program: not tried"
		fi
		;;
	esac
fi

if [ -n "$skipped" ]; then
	echo "skipped:$skipped"
	exit 77
fi
