# Sourced by the tests that read the shared library's exports (symbols.sh,
# man-names.sh).  Needs abs_top_builddir; NM may name nm.
#
#   exported_symbols FILE   the names the shared library exports, one a
#                           line, sorted, into FILE; sets $lib to the
#                           library read.  Exits 77 (skip) when the build
#                           has no shared library, 99 when it is missing.

exported_symbols() {
	la=$abs_top_builddir/src/libshiftpool.la
	if [ ! -f "$la" ]; then
		echo "$la is not built" >&2
		exit 99
	fi
	# libtool's .la names the shared object in dlname, empty without one.
	dlname=$(sed -n "s/^dlname='\(.*\)'\$/\1/p" "$la")
	if [ -z "$dlname" ]; then
		echo "shared libraries are disabled (--disable-shared); skipped"
		exit 77
	fi
	lib=$abs_top_builddir/src/.libs/$dlname
	if [ ! -f "$lib" ]; then
		echo "$lib, named by $la, does not exist" >&2
		exit 99
	fi
	# Absolute symbols (type A) are the version nodes of the version
	# script; "@VERSION" suffixes are stripped.
	if ! ${NM:-nm} -D --defined-only "$lib" >"$1.nm"; then
		echo "${NM:-nm} -D --defined-only $lib failed" >&2
		exit 99
	fi
	awk 'NF >= 3 && $2 != "A" { sub(/@.*/, "", $3); print $3 }' \
		"$1.nm" | sort -u >"$1"
}
