#!/bin/sh
# Three pools interleaved, three threads, one fallback address used by two
# pools in turn, a pool without an init line and a leak in it.
. "$srcdir/tools/tests/common.sh"

run 1 - <"$DATA/multi-pool.trace"
expect_file multi-pool.expected
expect_in "pool 1" "  allocations: 4 (pool 3, fallback 1, failed 0)"
expect_in "pool 1" "  peak live pool blocks: 2"
expect_in "pool 1" "  peak live fallback bytes: 200"
expect_in "pool 1" "  threads: 3"
expect_in "pool 1" "  leaks: 0 (0 bytes)"
expect_in "pool 2" "  block size: 4096"
expect_in "pool 2" "  fallback rate: 33.33%"
expect_in "pool 2" "  peak live pool blocks: 2"
expect_in "pool 2" "  peak live fallback bytes: 10000"
expect_in "pool 2" "  cross-thread frees: 1"
expect_in "pool 3" "  block size: unknown (no init line; first seen at line 9)"
expect_in "pool 3" "  leaks: 1 (16 bytes)"
expect_in "pool 3" "    0x7f3000000000 size 16 malloc line 9 (pool, thread 203)"
# Peaks in total are of the live set across pools at one time, not sums.
expect_in "total" "  peak live pool blocks: 4"
expect_in "total" "  peak live fallback bytes: 10000"
expect_in "total" "  allocations: 8 (pool 6, fallback 2, failed 0)"
expect_in "total" "  cross-thread frees: 2"
expect_in "total" "  frees of unknown pointers: 0"
expect_line "total (3 pools)"
expect_line "result: 1 problem (leaks 1)"

run 1 --json "$DATA/multi-pool.trace"
json_valid
json_is '[p["id"] for p in d["pools"]]' '[1, 2, 3]'
json_is '[p["peak_live_pool_blocks"] for p in d["pools"]]' '[2, 2, 1]'
json_is 'd["total"]["peak_live_pool_blocks"]' 4
json_is 'd["total"]["threads"]' 3
json_is 'd["pools"][2]["block_size"]' null
finish
