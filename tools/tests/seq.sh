#!/bin/sh
# Format v3: records are applied in seq= order within their process, not
# in the order of their lines, through a window of --window records.
#  - One block freed by one thread and allocated again by another, the
#    allocation logged first: clean; with --window 0 (line order) the two
#    false problems the order of the lines makes; with a window too small
#    for how far the free is out of place, it is counted as out of order.
#  - A fork: the child starts from what its parent had at the fork's
#    seq=, not at the fork record's line: a free logged late comes before,
#    an allocation logged early after.
#  - A chain of forks made to push the reordering deep stays bounded.
. "$srcdir/tools/tests/common.sh"

cat >"$tmp/reuse.trace" <<'TRACE'
# shiftpool trace v3
init t=1 pid=10 thread=10 pool=1 seq=1 block_size=64 block_count=4 flags=0x1
malloc t=2 pid=10 thread=11 pool=1 seq=2 size=8 ptr=0x1000 src=pool
malloc t=4 pid=10 thread=12 pool=1 seq=4 size=8 ptr=0x1000 src=pool
free t=3 pid=10 thread=11 pool=1 seq=3 ptr=0x1000 src=pool
free t=5 pid=10 thread=12 pool=1 seq=5 ptr=0x1000 src=pool
destroy t=6 pid=10 thread=10 pool=1 seq=6
TRACE

run 0 "$tmp/reuse.trace"
expect_line "format: v3"
expect_line "result: clean"
expect_in "pool 1" "  cross-thread frees: 0"
grep "out of seq order" "$out" >/dev/null && fail "records out of order in a clean trace"

run 0 --window 2 "$tmp/reuse.trace"
expect_line "result: clean"

run 1 --window 0 "$tmp/reuse.trace"
expect_line "result: 2 problems (unreported_double_frees 1, duplicate_allocations 1)"

run 1 --window 1 "$tmp/reuse.trace"
expect_line "records out of seq order: 1 (further out of place than --window 1; their problems may be false)"

run 1 --json --window 1 "$tmp/reuse.trace"
json_is 'd["lines"]["out_of_order"]' 1
run 0 --json "$tmp/reuse.trace"
json_is 'd["lines"]["out_of_order"]' 0

# The parent allocates X, another of its threads frees it (logged late),
# then it forks (seq=4) and allocates Y.  The child allocates X, which
# was free at the fork, and frees it; the parent frees Y.
cat >"$tmp/fork.trace" <<'TRACE'
# shiftpool trace v3
init t=1 pid=10 thread=10 pool=1 seq=1 block_size=64 block_count=4 flags=0x1
malloc t=2 pid=10 thread=10 pool=1 seq=2 size=8 ptr=0x1000 src=pool
malloc t=5 pid=10 thread=10 pool=1 seq=5 size=8 ptr=0x2000 src=pool
fork t=4 pid=20 thread=20 pool=0 seq=4 parent=10
malloc t=6 pid=20 thread=20 pool=1 seq=5 size=8 ptr=0x1000 src=pool
free t=3 pid=10 thread=11 pool=1 seq=3 ptr=0x1000 src=pool
free t=7 pid=10 thread=10 pool=1 seq=6 ptr=0x2000 src=pool
free t=8 pid=20 thread=20 pool=1 seq=6 ptr=0x1000 src=pool
TRACE

run 0 "$tmp/fork.trace"
expect_line "processes: 2"
expect_line "result: clean"

run 1 --window 0 "$tmp/fork.trace"
grep "allocations returning a live pointer: 1" "$out" >/dev/null ||
	fail "line order: no allocation returning a live pointer in the child"

# A trace written to hurt: a chain of 100,000 forks, each child with a
# record numbered below its fork, each fork below its parent's record, so
# that applying one record would have to apply the whole chain first (on
# the stack, without a bound: it overflowed).  Every process leaks its
# block; nothing else.
awk -v N=100000 'BEGIN {
	print "# shiftpool trace v3"
	for (k = 1; k <= N; k++) {
		if (k > 1)
			printf "fork pid=%d thread=%d pool=0 seq=%d parent=%d\n",
				k, k, 2 * (N - k) + 3, k - 1
		printf "malloc pid=%d thread=%d pool=1 seq=%d size=8 ptr=0x%x src=pool\n",
			k, k, 2 * (N - k) + 2, 4096 + k * 16
	}
}' >"$tmp/chain.trace" || exit 99
run 1 "$tmp/chain.trace"
expect_line "processes: 100000"
expect_line "result: 100000 problems (leaks 100000)"

# A v2 trace (no seq=) reads in the order of its lines, whatever --window.
run 1 --window 1 - <"$DATA/v2.trace"
expect_file v2.expected
finish
