#!/bin/sh
# The shared library exports exactly the functions include/shiftpool.h
# declares: none missing (hidden by the version script or by visibility),
# none extra (an internal helper leaking into the ABI).
#
# Run by `make check`, which sets abs_top_builddir, abs_top_srcdir and NM.
# Exit 77 (skip) when the build has no shared library.
set -u

: "${abs_top_builddir:?set by make check}"
: "${abs_top_srcdir:?set by make check}"
NM=${NM:-nm}

header=$abs_top_builddir/include/shiftpool.h
inline_header=$abs_top_builddir/include/shiftpool/inline.h

tmp=$(mktemp -d "${TMPDIR:-/tmp}/shiftpool-symbols.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' 0
trap 'exit 99' 1 2 15

# The declared functions: the header through the preprocessor (no
# comments, no directives, no attributes; SHIFTPOOL_INLINE, so that the
# entry points of its inline fast paths are declared too), keeping only
# the lines that come from the header itself; the bodies of its static
# inline functions cut out, the rest cut at semicolons; the name before
# the first parenthesis of every declaration that is neither a typedef
# nor static (the inline fast paths, which the library does not export).
${CC:-cc} -E -DSHIFTPOOL_NO_ATTRIBUTES -DSHIFTPOOL_INLINE -x c "$header" |
	awk -v header="$header" -v inline_header="$inline_header" '
		/^# [0-9]+ "/ {
			file = $3
			gsub(/"/, "", file)
			next
		}
		file == header || file == inline_header { print }
	' |
	sed 's/extern "C"[ \t]*{//' | tr '\n' ' ' |
	awk '
		# A function body (braces after a closing parenthesis) ends
		# its declaration; other braces (structures) are kept.
		{
			out = ""
			depth = 0
			body = 0
			for (i = 1; i <= length($0); i++) {
				c = substr($0, i, 1)
				if (depth == 0 && c == "{") {
					t = out
					sub(/[ \t]+$/, "", t)
					body = substr(t, length(t), 1) == ")"
				}
				if (c == "{")
					depth++
				if (!body || depth == 0)
					out = out c
				if (c == "}" && --depth == 0 && body) {
					out = out ";"
					body = 0
				}
			}
			print out
		}
	' | tr ';' '\n' |
	awk '
		# Members of a structure (a function pointer among them) are
		# no declarations of the library.
		{
			line = $0
			outer = depth
			depth += gsub(/[{]/, "{", line) - gsub(/[}]/, "}", line)
			if (outer > 0)
				next
		}
		{ sub(/^[ \t{}]+/, "") }
		/^typedef[ \t]/ { next }
		/^static[ \t]/ { next }
		{
			i = index($0, "(")
			if (i == 0)
				next
			head = substr($0, 1, i - 1)
			sub(/[ \t]+$/, "", head)
			n = split(head, words, /[^A-Za-z0-9_]+/)
			if (n > 0 && words[n] != "")
				print words[n]
		}
	' | sort -u >"$tmp/declared"

# A broken extraction must not pass as "nothing declared, nothing exported".
for name in pool_init pool_free shiftpool_version; do
	if ! grep -qx "$name" "$tmp/declared"; then
		echo "symbols: could not find $name in $header; extracted:" >&2
		cat "$tmp/declared" >&2
		exit 99
	fi
done

# The exported functions and data.
# shellcheck source=tests/exports.sh
. "$abs_top_srcdir/tests/exports.sh"
exported_symbols "$tmp/exported"

echo "symbols: $lib"
echo "declared in $header:"
sed 's/^/	/' "$tmp/declared"

# A library built without the hardened links has no entry points for the
# inline fast paths (shiftpool.h): their programs must not start with it.
if ! grep -qx shiftpool_inline_malloc_3 "$tmp/exported"; then
	echo "(no inline fast path entry points: a build without hardening)"
	grep -v '^shiftpool_inline_' "$tmp/declared" >"$tmp/declared.new"
	mv "$tmp/declared.new" "$tmp/declared"
fi

status=0
missing=$(comm -23 "$tmp/declared" "$tmp/exported")
extra=$(comm -13 "$tmp/declared" "$tmp/exported")
if [ -n "$missing" ]; then
	echo "FAIL: declared but not exported:"
	echo "$missing" | sed 's/^/	/'
	status=1
fi
if [ -n "$extra" ]; then
	echo "FAIL: exported but not declared in the public header:"
	echo "$extra" | sed 's/^/	/'
	status=1
fi
[ $status -eq 0 ] && echo "exports match the header exactly"
exit $status
