#!/bin/sh
# A trace made for forks to cost as much as they can (gen-fork.awk): a
# thousand live blocks and twenty pools, then 300 forks of that process
# and a chain of 300 forks, each child freeing two blocks it inherited.
# A fork must cost the same however much its parent holds, and a lookup
# the same however long the chain of forks behind it: the work the
# tables count (SHIFTPOOL_ANALYZE_TABLE_STATS) stays within a small
# multiple of the records, without timing anything.  Copying the parent's
# blocks and pools at each fork does 1.7 million lookups here, 480 a
# record.
# The bounds: a random key gave at most 7 lookups a record in each table,
# 22 nodes probed a record in the snapshots, a longest walk of 10 there
# and 2 nodes made a record, in 200 runs.
# The numbers come out as if every child had copies of its parent's pools.
. "$srcdir/tools/tests/common.sh"

lives=1000 pools=20 fans=300 chain=300 frees=2
awk -v lives=$lives -v pools=$pools -v fans=$fans -v chain=$chain \
	-v frees=$frees -f "$srcdir/tools/tests/gen-fork.awk" \
	>"$tmp/fork.trace" || exit 99
records=$(grep -vc '^#' "$tmp/fork.trace")
echo "log: $records records"
[ "$records" -eq 3439 ] || fail "generator wrote $records records"

SHIFTPOOL_ANALYZE_TABLE_STATS=1
export SHIFTPOOL_ANALYZE_TABLE_STATS
run 1 "$tmp/fork.trace"
cat "$tmp/err"
work_within live $((16 * records)) $((32 * records)) 256
work_within maps $((16 * records)) $((32 * records)) 256
work_within forks $((16 * records)) $((64 * records)) 40
nodes=$(awk '/^snapshots: / { print $3 }' "$tmp/err")
[ -n "$nodes" ] && [ "$nodes" -le $((8 * records)) ] ||
	fail "snapshots: ${nodes:-no} nodes, more than 8 a record"

# The sizes of pool 1's blocks, 1 + i % 64, and of those freed.
bytes=$(awk -v n=$lives 'BEGIN { for (i = 0; i < n; i++) s += 1 + i % 64; print s }')
expect_line "processes: $((1 + fans + chain))"
expect_line "total ($((pools + fans + chain)) pools)"
expect_in "pool 1:1" "  leaks: $lives ($bytes bytes)"
expect_in "pool 1:2" "  leaks: 1 (100 bytes)"
# The first child frees blocks 0 and 1, inherited from pool 1:1.
expect_in "pool 100000:1" "  forked: from pool 1:1 at line $((pools * 2 + lives + 1))"
expect_in "pool 100000:1" "  leaks: $((lives - 2)) ($((bytes - 3)) bytes)"
expect_in "pool 100000:1" "  peak live pool blocks: $lives"
expect_in "pool 100000:1" "    $(printf 0x%x $((1048576 + 2 * 64))) size 3 malloc line $((pools + 4)) (pool, thread 1)"
expect_in "pool 100000:1" "  frees of unknown pointers: 0"
# The last link of the chain: all of the chain's frees behind it.
last=$((200000 + chain - 1))
expect_in "pool $last:1" "  forked: from pool $((last - 1)):1 at line $(($(wc -l <"$tmp/fork.trace") - frees))"
expect_in "pool $last:1" "  leaks: $((lives - chain * frees)) ($(awk -v n=$lives -v k=$((chain * frees)) 'BEGIN { for (i = k; i < n; i++) s += 1 + i % 64; print s }') bytes)"
first=$((chain * frees))
expect_in "pool $last:1" "    $(printf 0x%x $((1048576 + first * 64))) size $((1 + first % 64)) malloc line $((pools + 2 + first)) (pool, thread 1)"
expect_in "pool $last:1" "    ... and $((lives - chain * frees - 20)) more"
expect_in "pool $last:1" "  double frees not reported by the library: 0"
leaks=$((lives + (pools - 1) + fans * (lives - frees) +
	chain * lives - frees * chain * (chain + 1) / 2 +
	(fans + chain) * (pools - 1)))
unnamed=$(((fans + chain) * (pools - 1)))
expect_in "total" "    of them in pools a forked process inherited and never named: $unnamed ($((unnamed * 100)) bytes)"
expect_line "result: $leaks problems (leaks $leaks)"
finish
