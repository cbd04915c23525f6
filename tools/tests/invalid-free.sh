#!/bin/sh
# Invalid frees (src=invalid), by free and by realloc; the block stays live
# and its later free is fine.
. "$srcdir/tools/tests/common.sh"

run 1 - <"$DATA/invalid-free.trace"
expect_file invalid-free.expected
expect_in "pool 4" "  invalid frees (reported by the library): 2"
expect_in "pool 4" "    line 4: free 0x7f0000000010 (thread 1)"
expect_in "pool 4" "    line 5: realloc 0x7f0000000020 (thread 1)"
expect_in "pool 4" "  frees: 2 (pool 1, fallback 0, NULL 0, invalid 1, double 0, wrong pool 0)"
expect_in "pool 4" "  leaks: 0 (0 bytes)"
expect_in "pool 4" "  frees of unknown pointers: 0"
expect_line "result: 2 problems (invalid_frees 2)"

run 1 --json "$DATA/invalid-free.trace"
json_valid
json_is 'd["pools"][0]["invalid_frees"]["count"]' 2
json_is 'd["pools"][0]["invalid_frees"]["list"][1]["op"]' '"realloc"'
json_is 'd["pools"][0]["flags"]' '"0x1"'
finish
