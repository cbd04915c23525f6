#!/bin/sh
# The files of src/ form layers: no two of them depend on each other in a
# loop, where "depends" is "includes" or "calls a function defined in".
# A header's calls are those of its inline functions (each header is
# compiled alone with -fkeep-inline-functions); a source file's are the
# undefined symbols of its object.  tsort(1) finds any loop.
set -u

src="$abs_top_srcdir/src"
work=$(mktemp -d "${TMPDIR:-/tmp}/layers.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT

cc=${CC:-cc}
flags="-I$abs_top_builddir -I$abs_top_builddir/include -I$src -D_GNU_SOURCE"

edges=$work/edges
defined=$work/defined
: >"$edges"
: >"$defined"

# Every file's object: its definitions, and what it calls.
for file in "$src"/*.c "$src"/*.h; do
	name=$(basename "$file")
	case $name in
	*.c) opts="-O2" ;;
	*.h) opts="-O0 -fkeep-inline-functions -x c" ;;
	esac
	# shellcheck disable=SC2086
	if ! $cc $flags $opts -c "$file" -o "$work/$name.o" 2>"$work/err"; then
		cat "$work/err" >&2
		echo "layers: cannot compile $name" >&2
		exit 99
	fi
	case $name in
	# malloc.c, the top of libshiftpool-malloc.so, defines only the C
	# library's malloc family: the other files call those functions as
	# the C library's (libshiftpool.so has no malloc.c), so none of
	# them depends on it.
	malloc.c) ;;
	*.c) nm --defined-only -g "$work/$name.o" |
		awk -v f="$name" 'NF == 3 { print $3, f }' >>"$defined" ;;
	esac
	nm -u "$work/$name.o" | awk -v f="$name" '{ print f, $NF }' \
		>"$work/$name.calls"
	# The file itself, so that a file with no edge is still a node.
	echo "$name $name" >>"$edges"
	sed -n 's/^#include "\([^"]*\)".*/\1/p' "$file" |
		while read -r header; do
			[ -f "$src/$header" ] && echo "$name $header" >>"$edges"
		done
done

# Calls: from the file to the file that defines the symbol.
for calls in "$work"/*.calls; do
	while read -r from symbol; do
		to=$(awk -v s="$symbol" '$1 == s { print $2; exit }' "$defined")
		[ -n "$to" ] && [ "$to" != "$from" ] && echo "$from $to" >>"$edges"
	done <"$calls"
done

if ! tsort "$edges" >/dev/null 2>"$work/loops"; then
	echo "layers: files of src/ depend on each other in a loop:" >&2
	cat "$work/loops" >&2
	echo "the dependencies (file -> what it includes or calls):" >&2
	awk '$1 != $2' "$edges" | sort -u >&2
	exit 1
fi
echo "layers: $(awk '$1 != $2' "$edges" | sort -u | wc -l) dependencies among $(ls "$src"/*.c "$src"/*.h | wc -l) files, no loop"
echo "the source files, each calling only into those after it:"
tsort "$edges" | grep '\.c$' | tr '\n' ' ' | sed 's/ $/\n/'
echo "the dependencies between source files:"
awk '$1 != $2 && $1 ~ /\.c$/ && $2 ~ /\.c$/' "$edges" | sort -u | sed 's/^/	/'
exit 0
