# Sourced by the tests that read the shared library's exports (symbols.sh,
# man-names.sh and others).  Needs abs_top_builddir and abs_top_srcdir;
# NM may name nm.
#
#   exported_symbols FILE   writes the names the shared library exports
#                           into FILE, one a line, sorted.  It sets $lib
#                           to the library it read (and $la and $dlname,
#                           see tests/shared-object.sh).  It exits 77
#                           (skip) when the build has no shared library,
#                           and 99 when the library is missing.

# shellcheck source=tests/shared-object.sh
. "$abs_top_srcdir/tests/shared-object.sh"

exported_symbols() {
	find_shared_object libshiftpool
	lib=$shared_object
	# Absolute symbols (type A) are the version nodes of the version
	# script; "@VERSION" suffixes are stripped.
	if ! ${NM:-nm} -D --defined-only "$lib" >"$1.nm"; then
		echo "${NM:-nm} -D --defined-only $lib failed" >&2
		exit 99
	fi
	awk 'NF >= 3 && $2 != "A" { sub(/@.*/, "", $3); print $3 }' \
		"$1.nm" | sort -u >"$1"
}
