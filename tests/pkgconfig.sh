#!/bin/sh
# The installed library is usable through pkg-config alone: install into a
# temporary DESTDIR, build tests/pkgconfig-consumer.c with nothing but
# `pkg-config --cflags --libs shiftpool`, run it against the installed
# library, and compare its output.
#
# Run by `make check`, which sets abs_top_builddir, abs_top_srcdir, MAKE,
# CC, PKG_CONFIG, libdir, includedir, pkgconfigdir, PACKAGE_VERSION and
# CONSUMER_CFLAGS (the compiler flags any program linking this build needs,
# e.g. a sanitizer's).  Only the build tree and the temporary directory are
# written, so this works under `make distcheck` too.
set -u

: "${abs_top_builddir:?set by make check}"
: "${abs_top_srcdir:?set by make check}"
: "${libdir:?}" "${includedir:?}" "${pkgconfigdir:?}" "${PACKAGE_VERSION:?}"
MAKE=${MAKE:-make}
CC=${CC:-cc}
CONSUMER_CFLAGS=${CONSUMER_CFLAGS:-}

if [ -z "${PKG_CONFIG:-}" ]; then
	echo "pkgconfig: configure found no pkg-config; skipped"
	exit 77
fi

fail() {
	echo "FAIL: $*"
	exit 1
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/shiftpool-pkgconfig.XXXXXX") || exit 99
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' 0
trap 'exit 99' 1 2 15
destdir=$tmp/root

# Install.  The jobserver of an outer `make -j` is not ours to use.
if ! (unset MAKEFLAGS MFLAGS; $MAKE -C "$abs_top_builddir" install \
	DESTDIR="$destdir") >"$tmp/install.log" 2>&1; then
	cat "$tmp/install.log"
	fail "make install DESTDIR=$destdir"
fi
for f in "$includedir/shiftpool.h" "$pkgconfigdir/shiftpool.pc"; do
	[ -f "$destdir$f" ] || fail "make install did not install $f"
done

# Only the DESTDIR's .pc file is visible, and its paths are taken as
# relative to the DESTDIR.  The ALLOW_SYSTEM variables keep -I/-L flags
# pkg-config would otherwise drop for a prefix of /usr.
PKG_CONFIG_PATH=$destdir$pkgconfigdir
PKG_CONFIG_LIBDIR=$destdir$pkgconfigdir
PKG_CONFIG_SYSROOT_DIR=$destdir
PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1
PKG_CONFIG_ALLOW_SYSTEM_LIBS=1
export PKG_CONFIG_PATH PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR
export PKG_CONFIG_ALLOW_SYSTEM_CFLAGS PKG_CONFIG_ALLOW_SYSTEM_LIBS

version=$($PKG_CONFIG --modversion shiftpool) ||
	fail "$PKG_CONFIG --modversion shiftpool"
[ "$version" = "$PACKAGE_VERSION" ] ||
	fail "pkg-config says version $version, the package is $PACKAGE_VERSION"

# Without a shared library, -lshiftpool finds the static one, which needs
# the private libraries too.
static=
dlname=$(sed -n "s/^dlname='\(.*\)'\$/\1/p" "$abs_top_builddir/src/libshiftpool.la")
[ -n "$dlname" ] || static=--static

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

# With glibc's loader, make sure the installed copy is the one loaded, not
# one in the build tree or the system.
if [ -n "$dlname" ]; then
	loaded=$(LD_TRACE_LOADED_OBJECTS=1 "$tmp/consumer" 2>/dev/null |
		grep "$dlname" || :)
	case "$loaded" in
	"" | *"$destdir$libdir/$dlname"*) ;;
	*) fail "the consumer loads $loaded, not the installed library" ;;
	esac
fi

"$tmp/consumer" >"$tmp/output" 2>&1
status=$?
if [ $status -ne 0 ]; then
	cat "$tmp/output"
	fail "the consumer exited with status $status"
fi
cat >"$tmp/expected" <<EOT
version $PACKAGE_VERSION $PACKAGE_VERSION
calloc owned 1 zeroed 1
block_size 64 block_count 4 in_use 1 allocs 1
in_use 0 frees 1
EOT
if ! cmp -s "$tmp/expected" "$tmp/output"; then
	echo "the consumer printed:"
	cat "$tmp/output"
	echo "expected:"
	cat "$tmp/expected"
	fail "wrong output"
fi
echo "the installed library works through pkg-config"
