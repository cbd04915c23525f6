#!/bin/sh
# 25 allocations never freed: 15 from the pool, 10 from the fallback.
. "$srcdir/tools/tests/common.sh"

run 1 - <"$DATA/leaks.trace"
expect_file leaks.expected
expect_in "pool 3" "  destroy: never"
expect_in "pool 3" "  leaks: 25 (1605 bytes)"
expect_in "pool 3" "    0x7f0000000140 size 8 malloc line 8 (pool, thread 55)"
expect_in "pool 3" "    0x56000000a800 size 124 malloc line 27 (fallback, thread 56)"
expect_in "pool 3" "    ... and 5 more"
expect_in "pool 3" "  peak live pool blocks: 20"
expect_in "pool 3" "  peak live fallback bytes: 1245"
expect_in "pool 3" "  sizes, most frequent (10 of 15 distinct): 8x4 16x4 24x4 32x4 40x4 120x1 121x1 122x1 123x1 124x1"
expect_line "result: 25 problems (leaks 25)"
test "$(grep -c ' malloc line ' "$out")" -eq 20 || fail "not 20 leaks listed"

run 1 --limit 3 --top 2 - <"$DATA/leaks.trace"
test "$(grep -c ' malloc line ' "$out")" -eq 3 || fail "--limit 3: not 3 leaks listed"
expect_in "pool 3" "    ... and 22 more"
expect_in "pool 3" "  sizes, most frequent (2 of 15 distinct): 8x4 16x4"

run 1 --limit=0 - <"$DATA/leaks.trace"
test "$(grep -c ' malloc line ' "$out")" -eq 25 || fail "--limit=0: not 25 leaks listed"

run 1 --json --limit 5 "$DATA/leaks.trace"
json_valid
json_is 'd["pools"][0]["leaks"]["count"]' 25
json_is 'd["pools"][0]["leaks"]["bytes"]' 1605
json_is 'len(d["pools"][0]["leaks"]["list"])' 5
json_is 'd["pools"][0]["leaks"]["not_listed"]' 20
json_is '[l["line"] for l in d["pools"][0]["leaks"]["list"]]' '[8, 9, 10, 11, 12]'
json_is 'd["pools"][0]["destroy_line"]' null
json_is 'd["total"]["leaks"]["count"]' 25
finish
