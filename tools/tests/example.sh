#!/bin/sh
# The example log of the trace format's description.
. "$srcdir/tools/tests/common.sh"

run 1 - <"$DATA/example.trace"
expect_file example.expected
expect_in "pool 1" "  block size: 1024"
expect_in "pool 1" "  operations: init=1 set_init=0 destroy=1 malloc=2 calloc=1 realloc=1 strdup=1 free=4 malloc_bulk=0 free_bulk=0 trim=0 report=0 fork=0"
expect_in "pool 1" "  allocations: 5 (pool 3, fallback 1, failed 1)"
expect_in "pool 1" "  fallback rate: 25.00%"
expect_in "pool 1" "  peak live pool blocks: 2"
expect_in "pool 1" "  peak live fallback bytes: 4096"
expect_in "pool 1" "  leaks: 1 (6 bytes)"
expect_in "pool 1" "    0x7f12a0000400 size 6 strdup line 7 (pool, thread 4242)"
expect_in "pool 1" "    line 10: free 0x7f12a0000010 (thread 4243)"
expect_in "pool 1" "    line 11: free 0x7f12a0000000 (thread 4243)"
expect_line "result: 3 problems (leaks 1, invalid_frees 1, double_frees 1)"

run 1 --json "$DATA/example.trace"
json_valid
json_is 'd["format_version"]' 1
json_is 'd["pools"][0]["leaks"]["list"][0]["ptr"]' '"0x7f12a0000400"'
json_is 'd["pools"][0]["invalid_frees"]["list"][0]["line"]' 10
json_is 'd["pools"][0]["double_frees"]["count"]' 1
json_is 'd["pools"][0]["fallback_rate"]' 0.25
json_is 'd["total"]["allocations"]' '{"total": 5, "pool": 3, "fallback": 1, "failed": 1}'
json_is 'd["problems"]' 3
json_is 'd["clean"]' false
finish
