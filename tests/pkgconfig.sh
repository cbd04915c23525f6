#!/bin/sh
# The installed library is usable through pkg-config alone: install into a
# temporary DESTDIR, build tests/pkgconfig-consumer.c with nothing but
# `pkg-config --cflags --libs shiftpool`, run it against the installed
# library, and compare its output.
#
# Run by `make check`, which sets abs_top_builddir, abs_top_srcdir, MAKE,
# CC, PKG_CONFIG, libdir, includedir, pkgconfigdir, PACKAGE_VERSION and
# CONSUMER_CFLAGS (the compiler flags any program linking this build needs,
# e.g. a sanitizer's).
set -u

CC=${CC:-cc}
CONSUMER_CFLAGS=${CONSUMER_CFLAGS:-}

if [ -z "${PKG_CONFIG:-}" ]; then
	echo "pkgconfig: configure found no pkg-config; skipped"
	exit 77
fi

# shellcheck source=tests/install-common.sh
. "${abs_top_srcdir:?set by make check}/tests/install-common.sh"

destdir=$tmp/root
install_into "$destdir"
use_pkgconfig "$destdir"

version=$($PKG_CONFIG --modversion shiftpool) ||
	fail "$PKG_CONFIG --modversion shiftpool"
[ "$version" = "$PACKAGE_VERSION" ] ||
	fail "pkg-config says version $version, the package is $PACKAGE_VERSION"

# Without a shared library, -lshiftpool finds the static one, which needs
# the private libraries too.
static=
[ -n "$(shared_dlname)" ] || static=--static

cflags=$($PKG_CONFIG --cflags shiftpool) || fail "pkg-config --cflags"
libs=$($PKG_CONFIG $static --libs shiftpool) || fail "pkg-config --libs"
echo "pkg-config --cflags --libs shiftpool: $cflags $libs"
case " $cflags " in
*" -I$destdir$includedir "*) ;;
*) fail "--cflags does not name the installed include directory" ;;
esac

# shellcheck disable=SC2086 # the flags are word lists
$CC $CONSUMER_CFLAGS -o "$tmp/consumer" \
	"$abs_top_srcdir/tests/pkgconfig-consumer.c" $cflags $libs ||
	fail "the consumer does not build with pkg-config's flags"

LD_LIBRARY_PATH=$destdir$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH
run_consumer "$tmp/consumer" "$destdir$libdir"
echo "the installed library works through pkg-config"
