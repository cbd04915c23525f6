#!/bin/sh
# Everyday programs on the C library's allocator and under
# libshiftpool-malloc.so, their output compared: sort (several ways) on a
# generated file, ls -lR and sha256sum of a copy of the source tree, and
# others where installed.  A program that is missing is left out; the
# test skips when sort, ls and sha256sum are all missing.
set -u
. "$abs_top_srcdir/tests/malloc-common.sh"

have() {
	command -v "$1" >/dev/null 2>&1 && return 0
	echo "skip $1: not installed"
	return 1
}

if ! command -v sort >/dev/null 2>&1 && ! command -v ls >/dev/null 2>&1 &&
	! command -v sha256sum >/dev/null 2>&1; then
	echo "none of sort, ls, sha256sum is installed; skipped"
	exit 77
fi

# The input: 200000 lines, keys in a scrambled order (made by awk, or by
# the shell where there is no awk), and a copy of the sources, which no
# other test writes into meanwhile.
data=$scratch/data.txt
if command -v awk >/dev/null 2>&1; then
	awk 'BEGIN { for (i = 1; i <= 200000; i++)
		printf "%d key-%d %s\n", (i * 7919) % 100003, i % 977,
			substr("abcdefghijklmnopqrstuvwxyz", 1 + i % 26) }' \
		>"$data" || exit 99
else
	i=0
	while [ $i -lt 20000 ]; do
		echo "$(((i * 7919) % 100003)) key-$((i % 977))"
		i=$((i + 1))
	done >"$data"
fi
tree=$scratch/tree
mkdir "$tree" &&
	cp -R "$abs_top_srcdir/src" "$abs_top_srcdir/man" \
		"$abs_top_srcdir/include" "$tree/" || exit 99
# Whatever an in-tree build left there: only the sources are wanted.
find "$tree" \( -name '*.o' -o -name '*.lo' -o -name '.libs' \
	-o -name '.deps' -o -name '.dirstamp' -o -name '*.la' \) \
	-prune -exec rm -rf {} + 2>/dev/null

if have sort; then
	same sort sort "$data"
	same sort-numeric sort -n -k1,1 -k2,2 "$data"
	same sort-unique sort -u -t' ' -k2,2 "$data"
	same sort-reverse sort -r -S 1M -T "$scratch" "$data"
fi
if have ls; then
	same ls-lR ls -lR --time-style=+%s "$tree"
fi
if have sha256sum && have find; then
	same sha256sum sha256sum "$data"
	same sha256sum-tree sh -c 'cd "$1" && find . -type f | LC_ALL=C sort |
		xargs sha256sum' sh "$tree"
fi
have wc && same wc wc "$data"
have uniq && have sort && same uniq-count sh -c \
	'cut -d" " -f2 "$1" | sort | uniq -c | sort -rn | head -50' sh "$data"
have tr && same tr sh -c 'tr a-z A-Z <"$1" | tail -3' sh "$data"
have du && same du du -a --apparent-size "$tree"
have awk && same awk awk '{ n[$2]++ } END { for (k in n) s += n[k] * length(k);
	print s }' "$data"
have grep && same grep grep -c -E 'key-(1|22|333)[0-9]* ' "$data"
have sed && same sed sed -n 's/^\([0-9]*\) key-\(9[0-9]*\) .*/\2:\1/p' "$data"
have gzip && same gzip sh -c 'gzip -c "$1" | gzip -dc | sha256sum' sh "$data"
have tar && same tar sh -c 'cd "$1" && tar -cf - --sort=name --mtime=@0 \
	--owner=0 --group=0 . | sha256sum' sh "$tree"
finish
