#!/bin/sh
# The files of bench/ form layers, as those of src/ do (tests/layers.sh):
# no two of them depend on each other in a loop, where "depends" is
# "includes" or "calls a function defined in".  A header's calls are those
# of its inline functions (each header is compiled alone with
# -fkeep-inline-functions); a source file's are the undefined symbols of
# its object.  bench/ builds several programs, each defining main(), so
# main() is no file's to be called.  tsort(1) finds any loop.
set -u

bench="$abs_top_srcdir/bench"
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-layers.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT

cc=${CC:-cc}
# The pool's worker and the default httpd: the variants that compile the
# most code (the other peers' workers leave out the pool's).
flags="-I$abs_top_builddir -I$abs_top_builddir/include -I$bench -D_GNU_SOURCE
	-DBENCH_PEER_POOL -DHTTPD_PEER_DEFAULT"

edges=$work/edges
defined=$work/defined
: >"$edges"
: >"$defined"

cd "$bench" || exit 99
files=$(ls ./*.c ./*.h ./*/*.c ./*/*.h 2>/dev/null | sed 's|^\./||')
for name in $files; do
	obj=$work/$(echo "$name" | tr / _).o
	case $name in
	*.c) opts="-O0" ;;
	*.h) opts="-O0 -fkeep-inline-functions -x c" ;;
	esac
	# shellcheck disable=SC2086
	if ! $cc $flags $opts -c "$name" -o "$obj" 2>"$work/err"; then
		cat "$work/err" >&2
		echo "layers: cannot compile bench/$name" >&2
		exit 99
	fi
	case $name in
	*.c) nm --defined-only -g "$obj" |
		awk -v f="$name" 'NF == 3 && $3 != "main" { print $3, f }' \
			>>"$defined" ;;
	esac
	nm -u "$obj" | awk -v f="$name" '{ print f, $NF }' >"$obj.calls"
	echo "$name $name" >>"$edges"
	# A quoted include names a file beside the includer, else in bench/.
	dir=$(dirname "$name")
	sed -n 's/^#include "\([^"]*\)".*/\1/p' "$name" |
		while read -r header; do
			for path in "$dir/$header" "$header"; do
				if [ -f "$path" ]; then
					realpath -m --relative-to=. "$path" |
						sed "s|^|$name |" >>"$edges"
					break
				fi
			done
		done
done

# Calls: from the file to the file that defines the symbol.  The programs
# of bench/ share no global name they do not mean to share, so a symbol
# has one definition.
sort -k1,1 "$defined" >"$defined.sorted"
cat "$work"/*.calls | awk '{ print $2, $1 }' | sort -k1,1 |
	join "$defined.sorted" - | awk '$2 != $3 { print $3, $2 }' >>"$edges"
dups=$(awk '{ print $1 }' "$defined" | sort | uniq -d)
if [ -n "$dups" ]; then
	echo "layers: defined in more than one file of bench/: $dups" >&2
	exit 1
fi

if ! tsort "$edges" >/dev/null 2>"$work/loops"; then
	echo "layers: files of bench/ depend on each other in a loop:" >&2
	cat "$work/loops" >&2
	echo "the dependencies (file -> what it includes or calls):" >&2
	awk '$1 != $2' "$edges" | sort -u >&2
	exit 1
fi
echo "layers: $(awk '$1 != $2' "$edges" | sort -u | wc -l) dependencies among $(echo "$files" | wc -w) files of bench/, no loop"
echo "the dependencies between source files:"
awk '$1 != $2 && $1 ~ /\.c$/ && $2 ~ /\.c$/' "$edges" | sort -u | sed 's/^/	/'
exit 0
