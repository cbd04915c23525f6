#!/bin/sh
# The Debian packages as a user gets them: builds them from a scratch copy
# of this tree (dpkg-buildpackage -us -uc -b; build/ and the other build
# trees are left alone), runs lintian on them (no error, no warning),
# installs them, builds tests/pkgconfig-consumer.c against the installed
# packages with pkg-config (shared and static) and with CMake (the
# projects of tests/cmake/: find_package and pkg_check_modules), runs each
# build, has shiftpool-analyze read the trace of one run, and removes the
# packages again.  Run by `./quickstart.sh package` and by .ci/run.
#
# Installs what it needs with apt-get (debhelper, dpkg-dev, fakeroot,
# lintian, cmake, ...) and installs and removes packages: run it as root or
# with sudo available, on a machine where the shiftpool packages may come
# and go.  KEEP_DEBS=DIR copies the built packages to DIR.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
jobs=$(nproc 2>/dev/null || echo 2)
start=$(date +%s)

say() {
	echo "deb-check: $*"
}

# ---------------------------------------------------------------- tools
needed="debhelper dpkg-dev fakeroot lintian pkgconf cmake gcc libc6-dev make binutils"
missing=
for p in $needed; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q 'install ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
	say "installing:$missing"
	$sudo apt-get update -qq
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
		--no-install-recommends $missing >/dev/null
fi

# ---------------------------------------------------------------- copy
work=$(mktemp -d "${TMPDIR:-/tmp}/shiftpool-deb.XXXXXX")
src=$work/shiftpool
mkdir "$src"
installed=
packages=

cleanup() {
	status=$?
	if [ -n "$installed" ]; then
		say "removing$packages"
		# shellcheck disable=SC2086
		$sudo dpkg --purge $packages >/dev/null || status=1
	fi
	rm -rf "$work"
	exit $status
}
trap cleanup 0
trap 'exit 1' 1 2 15

# The files of the tree as they are now: in a git checkout the tracked
# ones and the new ones git does not ignore (no build products), else
# everything but the build trees.
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$top" && git ls-files -z --cached --others --exclude-standard) |
		tar -C "$top" --null --ignore-failed-read -T - -cf - 2>/dev/null |
		tar -C "$src" -xf -
else
	tar -C "$top" --exclude='./build*' --exclude=./debian/build \
		--exclude=./debian/tmp -cf - . | tar -C "$src" -xf -
	if [ -f "$src/config.status" ]; then
		(cd "$src" && make distclean) >/dev/null
	fi
fi

# ---------------------------------------------------------------- build
cd "$src"
if ! dpkg-checkbuilddeps >/dev/null 2>&1; then
	say "installing the build dependencies"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get build-dep -y -qq \
		--no-install-recommends "$src" >/dev/null
fi
say "dpkg-buildpackage -us -uc -b in $src"
if ! dpkg-buildpackage -us -uc -b -j"$jobs" >"$work/build.log" 2>&1; then
	tail -n 60 "$work/build.log"
	say "FAIL: dpkg-buildpackage (the last lines of its log above)"
	exit 1
fi
built=$(date +%s)
say "built in $((built - start)) s"

version=$(dpkg-parsechangelog -S Version)
upstream=${version#*:}
upstream=${upstream%-*}
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
packages=
debs=
# shellcheck disable=SC2013
for p in $(sed -n 's/^Package: *//p' debian/control); do
	packages="$packages $p"
	debs="$debs $work/${p}_${version#*:}_$arch.deb"
done
changes=$work/shiftpool_${version#*:}_$arch.changes
if [ -n "${KEEP_DEBS:-}" ]; then
	mkdir -p "$KEEP_DEBS"
	cp "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo "$KEEP_DEBS"/
	say "packages copied to $KEEP_DEBS"
fi

# ---------------------------------------------------------------- lintian
# lintian warns when run as root (the packages are only read): that line
# is left out of what it says.
say "lintian --fail-on error,warning $(basename "$changes")"
lint=0
lintian --fail-on error,warning "$changes" >"$work/lintian.log" 2>&1 || lint=$?
grep -v 'running with root privileges is not recommended' "$work/lintian.log" || :
if [ $lint -ne 0 ]; then
	say "FAIL: lintian reports an error or a warning (status $lint)"
	exit 1
fi

# ---------------------------------------------------------------- install
say "installing$packages"
installed=yes
# shellcheck disable=SC2086
if ! $sudo dpkg -i $debs >"$work/install.log" 2>&1; then
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -f -y -qq \
		>>"$work/install.log" 2>&1 || :
fi
for p in $packages; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q 'install ok installed'; then
		cat "$work/install.log"
		say "FAIL: $p is not installed"
		exit 1
	fi
done

# ---------------------------------------------------------------- consumers
# From here on each step checks its own result (tests/install-common.sh's
# functions expect no set -e).
set +e
# tests/install-common.sh checks a consumer's output and that it loaded the
# library from where it should; here that is the system's library
# directory, and the soname is the installed library's.
libdir=/usr/lib/$multiarch
includedir=/usr/include
pkgconfigdir=$libdir/pkgconfig
abs_top_srcdir=$src
abs_top_builddir=$src
PACKAGE_VERSION=$upstream
TMPDIR=$work
export abs_top_srcdir abs_top_builddir libdir includedir pkgconfigdir PACKAGE_VERSION TMPDIR
# shellcheck source=tests/install-common.sh
. "$src/tests/install-common.sh"
trap cleanup 0
soname=$(objdump -p "$libdir/libshiftpool.so" | sed -n 's/^ *SONAME *//p')
shared_dlname() {
	echo "$soname"
}
# run_installed PROGRAM: run_consumer, once the library PROGRAM loads is
# known to be the installed one (by its real path: with a merged /usr the
# loader names /lib/<triplet>/ for /usr/lib/<triplet>/).
run_installed() {
	loaded=$(LD_TRACE_LOADED_OBJECTS=1 "$1" 2>/dev/null |
		sed -n "s/^[[:space:]]*$soname => \([^ ]*\) .*/\1/p")
	[ -n "$loaded" ] || fail "$1 does not load $soname"
	[ "$(readlink -f "$loaded")" = "$(readlink -f "$libdir/$soname")" ] ||
		fail "$1 loads $loaded, not the installed $libdir/$soname"
	run_consumer "$1" "$(dirname "$loaded")"
}
unset PKG_CONFIG_PATH PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR LD_LIBRARY_PATH
CC=${CC:-cc}
consumer=$src/tests/pkgconfig-consumer.c
cflags="-O2 -Wall -Wextra -Werror"

modversion=$(pkg-config --modversion shiftpool) ||
	fail "pkg-config does not find shiftpool"
[ "$modversion" = "$upstream" ] ||
	fail "pkg-config says shiftpool $modversion, the package is $version"

# shellcheck disable=SC2046,SC2086
$CC $cflags -o "$tmp/pkg-config" "$consumer" \
	$(pkg-config --cflags --libs shiftpool) ||
	fail "cc \$(pkg-config --cflags --libs shiftpool)"
run_installed "$tmp/pkg-config"
say "pkg-config: built and ran against $libdir/$soname"

# The static library, with what pkg-config --static adds to it.
static_libs=$(pkg-config --static --libs shiftpool | sed 's/-lshiftpool\b/-l:libshiftpool.a/')
# shellcheck disable=SC2046,SC2086
$CC $cflags -o "$tmp/static" "$consumer" $(pkg-config --cflags shiftpool) \
	$static_libs || fail "cc ... $static_libs"
if LD_TRACE_LOADED_OBJECTS=1 "$tmp/static" | grep -q libshiftpool; then
	fail "the static build loads a shared libshiftpool"
fi
run_consumer "$tmp/static" "$libdir"
say "pkg-config --static: built and ran with $libdir/libshiftpool.a"

for project in find-package pkg-config; do
	if ! (
		unset MAKEFLAGS MFLAGS
		export CC
		cmake -S "$src/tests/cmake/$project" -B "$tmp/cmake-$project" \
			-DSHIFTPOOL_WANT="${upstream%.*}" \
			-DCONSUMER_SOURCE="$consumer" -DCMAKE_C_FLAGS="$cflags" &&
			cmake --build "$tmp/cmake-$project"
	) >"$tmp/cmake-$project.log" 2>&1; then
		cat "$tmp/cmake-$project.log"
		fail "CMake project tests/cmake/$project does not build"
	fi
	run_installed "$tmp/cmake-$project/consumer"
done
found=$(sed -n 's/^shiftpool_DIR:PATH=//p' "$tmp/cmake-find-package/CMakeCache.txt")
[ "$found" = "$libdir/cmake/shiftpool" ] ||
	fail "find_package(shiftpool) found $found, not $libdir/cmake/shiftpool"
say "CMake: find_package(shiftpool ${upstream%.*}) from $found and pkg_check_modules: built and ran"

# The analyzer of shiftpool-tools reads what the installed library traced.
SHIFTPOOL_TRACE=$tmp/consumer.trace "$tmp/pkg-config" >/dev/null ||
	fail "the consumer fails with SHIFTPOOL_TRACE"
shiftpool-analyze "$tmp/consumer.trace" >"$tmp/analyze.out" 2>&1 || {
	cat "$tmp/analyze.out"
	fail "shiftpool-analyze on the consumer's trace"
}
grep -q '^result: clean' "$tmp/analyze.out" || {
	cat "$tmp/analyze.out"
	fail "shiftpool-analyze does not find the consumer's trace clean"
}
say "shiftpool-analyze: the consumer's trace is clean"

# ---------------------------------------------------------------- remove
say "removing$packages"
installed=
# shellcheck disable=SC2086
$sudo dpkg --purge $packages >/dev/null
for p in $packages; do
	if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'installed'; then
		fail "$p is still installed"
	fi
done
for f in "$libdir/$soname" "$includedir/shiftpool.h" "$pkgconfigdir/shiftpool.pc" \
	"$libdir/cmake/shiftpool" /usr/bin/shiftpool-analyze; do
	[ ! -e "$f" ] || fail "$f is still there after the packages were removed"
done
say "all passed: version $version, $(($(date +%s) - start)) s in all ($((built - start)) s of it the package build)"
