#!/bin/sh
# The Debian packaging agrees with the library it packages:
#  - the shared library's package is libshiftpoolN, N = current - age of
#    SHIFTPOOL_LT_VERSION in configure.ac, and the soname of the built
#    library is libshiftpool.so.N;
#  - debian/libshiftpoolN.symbols is the one symbols file, for
#    libshiftpool.so.N and that package, and lists exactly the symbols the
#    built library exports (nm -D), version nodes included;
#  - debian/changelog's version, less its Debian revision, is AC_INIT's.
#
# Run by `make check` (abs_top_builddir, abs_top_srcdir, NM) and by the
# package build.  Exit 77 (skip) in a tree without debian/, or when the
# build has no shared library.
set -u

: "${abs_top_builddir:?set by make check}"
: "${abs_top_srcdir:?set by make check}"
debian=$abs_top_srcdir/debian
if [ ! -f "$debian/control" ]; then
	echo "no debian/ in $abs_top_srcdir; skipped"
	exit 77
fi

status=0
fail() {
	echo "FAIL: $*"
	status=1
}

# ---------------------------------------------------------------- names
configure_ac=$abs_top_srcdir/configure.ac
lt=$(sed -n 's/^SHIFTPOOL_LT_VERSION=\([0-9]*:[0-9]*:[0-9]*\).*/\1/p' "$configure_ac")
version=$(sed -n 's/^AC_INIT(\[shiftpool\], *\[\([^]]*\)\].*/\1/p' "$configure_ac")
if [ -z "$lt" ] || [ -z "$version" ]; then
	echo "no SHIFTPOOL_LT_VERSION=C:R:A or AC_INIT version in $configure_ac" >&2
	exit 99
fi
current=${lt%%:*}
age=${lt##*:}
major=$((current - age))
package=libshiftpool$major
soname=libshiftpool.so.$major
echo "configure.ac: version $version, SHIFTPOOL_LT_VERSION=$lt: $soname in $package"

# The library packages debian/control declares (not the -dev package).
libpackages=$(sed -n 's/^Package: *\(libshiftpool[0-9][^ ]*\) *$/\1/p' "$debian/control")
[ "$libpackages" = "$package" ] ||
	fail "debian/control's shared library package is '$libpackages', not $package"
grep -q "^Depends:.*\\b$package (= \${binary:Version})" "$debian/control" ||
	fail "debian/control: libshiftpool-dev does not depend on $package (= \${binary:Version})"

symbols=$debian/$package.symbols
others=
for f in "$debian"/*.symbols; do
	[ -e "$f" ] && [ "$f" != "$debian/$package.symbols" ] && others="$others ${f##*/}"
done
[ -z "$others" ] || fail "symbols files of other packages: $others"
if [ ! -f "$symbols" ]; then
	fail "no debian/$package.symbols"
	exit 1
fi
header=$(grep -v '^#' "$symbols" | sed -n '1p')
[ "$header" = "$soname $package #MINVER#" ] ||
	fail "debian/$package.symbols begins '$header', not '$soname $package #MINVER#'"

# ---------------------------------------------------------------- version
changelog=$debian/changelog
top=$(sed -n '1p' "$changelog")
source=$(sed -n 's/^Source: *//p' "$debian/control")
case $top in
"$source ("*) ;;
*) fail "debian/changelog's first entry is not of source package $source: $top" ;;
esac
debversion=$(echo "$top" | sed -n 's/^[^ ]* (\([^)]*\)).*/\1/p')
upstream=${debversion#*:}
upstream=${upstream%-*}
[ "$upstream" = "$version" ] ||
	fail "debian/changelog says $debversion: upstream version $upstream, AC_INIT $version"
if [ -n "${PACKAGE_VERSION:-}" ] && [ "$PACKAGE_VERSION" != "$version" ]; then
	fail "this build is version $PACKAGE_VERSION, configure.ac says $version (reconfigure)"
fi

# ---------------------------------------------------------------- library
tmp=$(mktemp -d "${TMPDIR:-/tmp}/shiftpool-debian.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' 0
trap 'exit 99' 1 2 15

# shellcheck source=tests/exports.sh
. "$abs_top_srcdir/tests/exports.sh"
exported_symbols "$tmp/exported"
echo "library: $lib"

# libtool's dlname is the soname the library was linked with.
[ "$dlname" = "$soname" ] ||
	fail "the built library's soname is $dlname, not $soname (SHIFTPOOL_LT_VERSION=$lt)"

# NAME@VERSION, as the symbols file spells them: the defined symbols of
# nm -D, "@@" (the default version) written "@", a version node (type A)
# as NODE@NODE.
awk 'NF >= 3 {
	name = $3
	if ($2 == "A")
		name = name "@" name
	sub(/@@/, "@", name)
	print name
}' "$tmp/exported.nm" | sort -u >"$tmp/library"
sed -n 's/^ \([^ #][^ ]*\) .*/\1/p' "$symbols" | sort -u >"$tmp/listed"

missing=$(comm -23 "$tmp/library" "$tmp/listed")
gone=$(comm -13 "$tmp/library" "$tmp/listed")
if [ -n "$missing" ]; then
	fail "exported but not in debian/$package.symbols (run debian/update-symbols):"
	echo "$missing" | sed 's/^/	/'
fi
if [ -n "$gone" ]; then
	fail "in debian/$package.symbols but not exported (an incompatible change: SHIFTPOOL_LT_VERSION, then debian/update-symbols):"
	echo "$gone" | sed 's/^/	/'
fi
[ $status -eq 0 ] &&
	echo "debian/: $package, $soname, $(wc -l <"$tmp/listed") symbols, version $debversion: all agree"
exit $status
