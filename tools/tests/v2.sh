#!/bin/sh
# Format v2: bulk allocations and frees count per object and as their own
# operations, a failed batch is one failed allocation, trims add up, and
# frees the library refused as another pool's pointer have their own list.
# A realloc that refused its old pointer is that bad free, size 0 or not,
# never a realloc to zero.
. "$srcdir/tools/tests/common.sh"

run 1 - <"$DATA/v2.trace"
expect_file v2.expected
expect_line "format: v2"
expect_in "pool 1" "  operations: init=1 set_init=0 destroy=1 malloc=1 calloc=0 realloc=3 strdup=0 free=2 malloc_bulk=4 free_bulk=3 trim=2 report=0 fork=0"
expect_in "pool 1" "  allocations: 5 (pool 3, fallback 1, failed 1)"
expect_in "pool 1" "  frees: 5 (pool 3, fallback 1, NULL 0, invalid 0, double 0, wrong pool 1)"
expect_in "pool 1" "  reallocs: in place 0, moved 0, freed (size 0) 0, failed 0"
expect_in "pool 1" "  trims: 2 (12288 bytes released)"
expect_in "pool 1" "  peak live pool blocks: 3"
expect_in "pool 1" "  frees of another pool's pointer (reported by the library): 2"
expect_in "pool 1" "    line 11: free 0x7f0000000010 (thread 101)"
expect_in "pool 1" "    line 12: realloc 0x7f0000000000 (thread 100)"
expect_in "pool 1" "    line 13: realloc 0x7f0000000300 (thread 100)"
expect_in "pool 1" "    line 14: realloc 0x7f0000000310 (thread 100)"
expect_in "pool 1" "  leaks: 0 (0 bytes)"
expect_line "result: 4 problems (invalid_frees 1, double_frees 1, wrong_pool_frees 2)"

run 1 --json "$DATA/v2.trace"
json_valid
json_is 'd["format_version"]' 2
json_is 'd["pools"][0]["operations"]["malloc_bulk"]' 4
json_is 'd["pools"][0]["trims"]' '{"count": 2, "bytes": 12288}'
json_is 'd["pools"][0]["frees"]["wrong_pool"]' 1
json_is 'd["total"]["wrong_pool_frees"]' 2
json_is 'd["pools"][0]["name"]' '"1"'
json_is 'd["pools"][0]["pid"]' 100

# A refused realloc with a pointer is not a refusal: malformed.
printf '%s\n' '# shiftpool trace v2' \
	'realloc t=1 pid=1 thread=1 pool=1 old=0x10 size=0 ptr=0x20 src=wrong_pool' >"$tmp/bad.trace"
run 0 "$tmp/bad.trace"
expect_line "malformed lines: 1 (line 2)"
finish
