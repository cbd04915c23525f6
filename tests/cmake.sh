#!/bin/sh
# The installed tree is usable from CMake: install into a temporary
# DESTDIR, then configure, build and run tests/pkgconfig-consumer.c as a
# CMake project
#  - with find_package(shiftpool 0.1 REQUIRED) and shiftpool::shiftpool;
#  - with pkg_check_modules(... IMPORTED_TARGET shiftpool);
# check that find_package() refuses a version the package is not
# compatible with, and that after the whole tree is moved elsewhere
# find_package() still finds it, and the program the library, there.
#
# Run by `make check` (see tests/install-common.sh for what it sets; also
# CC, CONSUMER_CFLAGS, PKG_CONFIG and prefix).  CMAKE names cmake; exit 77
# (skip) without it.
set -u

CONSUMER_CFLAGS=${CONSUMER_CFLAGS:-}
CMAKE=${CMAKE:-cmake}
if ! command -v "$CMAKE" >/dev/null 2>&1; then
	echo "cmake: no $CMAKE found; skipped"
	exit 77
fi

# shellcheck source=tests/install-common.sh
. "${abs_top_srcdir:?set by make check}/tests/install-common.sh"

projects=$abs_top_srcdir/tests/cmake
consumer=$abs_top_srcdir/tests/pkgconfig-consumer.c
# CMake looks for <prefix>/<libdir>/cmake/shiftpool.
: "${prefix:?set by make check}"
cmakeconfigdir=$libdir/cmake/shiftpool

# build NAME PROJECT [cmake options...]: configure and build PROJECT in
# $tmp/NAME; the log is $tmp/NAME.log.  Returns cmake's status.
build() {
	name=$1
	project=$2
	shift 2
	(
		unset MAKEFLAGS MFLAGS
		CC=${CC:-cc}
		export CC
		"$CMAKE" -S "$projects/$project" -B "$tmp/$name" \
			-DCONSUMER_SOURCE="$consumer" \
			-DCMAKE_C_FLAGS="$CONSUMER_CFLAGS" "$@" &&
			"$CMAKE" --build "$tmp/$name"
	) >"$tmp/$name.log" 2>&1
}

# found_in NAME DIR: the project in $tmp/NAME took shiftpool from DIR.
found_in() {
	dir=$(sed -n 's/^shiftpool_DIR:PATH=//p' "$tmp/$1/CMakeCache.txt")
	[ "$dir" = "$2" ] ||
		fail "$1: find_package(shiftpool) found $dir, not $2"
}

build_or_fail() {
	if ! build "$@"; then
		cat "$tmp/$1.log"
		fail "$1: the CMake project does not build"
	fi
}

root=$tmp/root
install_into "$root"
for f in shiftpoolConfig.cmake shiftpoolConfigVersion.cmake; do
	[ -f "$root$cmakeconfigdir/$f" ] ||
		fail "make install did not install $cmakeconfigdir/$f"
done
# Relocatable: nothing in the package names where it was installed.
if grep -n "$prefix" "$root$cmakeconfigdir"/*.cmake; then
	fail "the CMake package names the absolute path $prefix"
fi

LD_LIBRARY_PATH=
export LD_LIBRARY_PATH

# find_package, by the package's own directory's prefix.
build_or_fail find-package find-package -DSHIFTPOOL_WANT=0.1 \
	-DCMAKE_PREFIX_PATH="$root$prefix"
found_in find-package "$root$cmakeconfigdir"
grep -q "shiftpool $PACKAGE_VERSION from" "$tmp/find-package.log" ||
	fail "find-package: the package does not say version $PACKAGE_VERSION"
run_consumer "$tmp/find-package/consumer" "$root$libdir"
echo "find_package(shiftpool 0.1): built and ran"

# A version the package cannot give is refused.
if build too-new find-package -DSHIFTPOOL_WANT=99.0 \
	-DCMAKE_PREFIX_PATH="$root$prefix"; then
	fail "find_package(shiftpool 99.0) accepted version $PACKAGE_VERSION"
fi
grep -q "$PACKAGE_VERSION" "$tmp/too-new.log" ||
	{ cat "$tmp/too-new.log"; fail "too-new: failed, but not for the version"; }
echo "find_package(shiftpool 99.0): refused"

# pkg_check_modules with an imported target.
if [ -n "${PKG_CONFIG:-}" ]; then
	(
		use_pkgconfig "$root"
		build_or_fail pkg-config pkg-config \
			-DPKG_CONFIG_EXECUTABLE="$PKG_CONFIG"
		run_consumer "$tmp/pkg-config/consumer" "$root$libdir"
	) || exit 1
	echo "pkg_check_modules(IMPORTED_TARGET shiftpool): built and ran"
else
	echo "configure found no pkg-config: pkg_check_modules not tried"
fi

# The tree moves; the package and the program built against it follow.
moved=$tmp/moved
mv "$root" "$moved" || fail "mv $root $moved"
build_or_fail relocated find-package -DSHIFTPOOL_WANT=0.1 \
	-DCMAKE_PREFIX_PATH="$moved$prefix"
found_in relocated "$moved$cmakeconfigdir"
run_consumer "$tmp/relocated/consumer" "$moved$libdir"
echo "moved to $moved: found, built and ran"
