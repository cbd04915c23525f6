#!/bin/sh
# bench/replace.sh: bench/replace's comparison, run from the build
# directory (or name it in REPLACE_DIR) after `make bench/replace` (and
# the replace-* programs of the peers configure found).  Rounds are interleaved: each round runs every
# allocator once per case, so load on a shared machine falls on all of
# them alike; the table gives each case's median nanoseconds per pair.
#
#   bench/replace.sh [ROUNDS]            5 rounds by default
#   REPLACE_EXTRA='old:/path/to/replace per-thread' bench/replace.sh
#
# REPLACE_EXTRA adds rows, "label:program kind" separated by ";" (another
# build of the library, for a before-and-after comparison).
# SPDX-License-Identifier: MIT
set -eu
rounds=${1:-5}
dir=${REPLACE_DIR:-bench}
rows="per-thread:$dir/replace per-thread;locked:$dir/replace locked"
rows="$rows;single:$dir/replace single;glibc:$dir/replace malloc"
for peer in tcmalloc jemalloc mimalloc; do
	[ -x "$dir/replace-$peer" ] && rows="$rows;$peer:$dir/replace-$peer malloc"
done
[ -n "${REPLACE_EXTRA:-}" ] && rows="$rows;$REPLACE_EXTRA"
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# Operations per thread: about ten million pairs a run in all.
ops_for() { echo $((10000000 / $1)); }

for round in $(seq "$rounds"); do
	for threads in 1 2 256; do
		for held in 16 100 1000; do
			echo "$rows" | tr ';' '\n' | while IFS=: read -r label cmd; do
				set -- $cmd
				# POOL_SINGLE serves one thread only.
				[ "$2" = single ] && [ "$threads" != 1 ] && continue
				ns=$("$1" "$2" "$threads" "$held" \
					"$(ops_for "$threads")" | cut -d' ' -f4,5,6)
				echo "$label $threads $held $ns" >>"$out"
			done
		done
	done
done
echo "# threads held allocator ns/pair(median of $rounds) served maxrss_kib"
sort -k2,2n -k3,3n -k1,1 "$out" | awk '
function flush() {
	if (n == 0) return
	# median of the times
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
		if (t[j] < t[i]) { x = t[i]; t[i] = t[j]; t[j] = x }
	printf "%s %s %-12s %8.2f %s %s\n", th, h, lab, t[int((n + 1) / 2)], s, r
	n = 0
}
{
	key = $1 " " $2 " " $3
	if (key != last) { flush(); last = key }
	lab = $1; th = $2; h = $3; t[++n] = $4; s = $5; r = $6
}
END { flush() }' | sort -k1,1n -k2,2n -k4,4n
