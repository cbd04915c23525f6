#!/bin/sh
# A clean log: pointer reuse, fallback, free(NULL), a failed malloc.
. "$srcdir/tools/tests/common.sh"

run 0 - <"$DATA/clean.trace"
expect_file clean.expected
expect_in "pool 7" "  flags: 0x2"
expect_in "pool 7" "  allocations: 7 (pool 4, fallback 2, failed 1)"
expect_in "pool 7" "  fallback rate: 33.33%"
expect_in "pool 7" "  frees: 7 (pool 4, fallback 2, NULL 1, invalid 0, double 0, wrong pool 0)"
expect_in "pool 7" "  cross-thread frees: 2"
expect_in "pool 7" "  peak live pool blocks: 3"
expect_in "pool 7" "  peak live fallback bytes: 1512"
expect_in "pool 7" "  requests larger than a block: 3"
expect_in "pool 7" "    257-512: 2"
expect_in "pool 7" "  leaks: 0 (0 bytes)"
expect_line "result: clean"

run 0 "$DATA/clean.trace"
run 0 --json "$DATA/clean.trace"
json_valid
json_is 'd["clean"]' true
json_is 'd["problems"]' 0
json_is 'd["pools"][0]["peak_live_pool_blocks"]' 3
json_is 'd["pools"][0]["peak_live_fallback_bytes"]' 1512
json_is 'd["pools"][0]["sizes"]["distinct"]' 7
json_is '[b["count"] for b in d["pools"][0]["sizes"]["buckets"] if b["min"] == 257]' '[2]'
finish
