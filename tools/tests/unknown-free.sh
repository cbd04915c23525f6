#!/bin/sh
# Frees of pointers the log never showed allocated: never allocated, freed
# through the wrong pool, and realloc of an unknown pointer.
. "$srcdir/tools/tests/common.sh"

run 1 - <"$DATA/unknown-free.trace"
expect_file unknown-free.expected
expect_in "pool 1" "  frees of unknown pointers: 2"
expect_in "pool 1" "    line 5: free 0x7f00000000c0 (thread 1)"
expect_in "pool 1" "    line 8: realloc 0x5600000000a0 (thread 1)"
expect_in "pool 1" "  leaks: 0 (0 bytes)"
expect_in "pool 2" "  frees of unknown pointers: 1"
expect_in "pool 2" "    line 6: free 0x7f0000000040 (thread 1)"
expect_in "pool 2" "  fallback rate: n/a"
expect_in "total" "  frees of unknown pointers: 3"
expect_line "result: 3 problems (unknown_frees 3)"

run 1 --json "$DATA/unknown-free.trace"
json_valid
json_is '[p["unknown_frees"]["count"] for p in d["pools"]]' '[2, 1]'
json_is 'd["total"]["unknown_frees"]' 3
json_is 'd["pools"][1]["fallback_rate"]' null

# An allocation that returns a pointer still live.
run 1 - <"$DATA/duplicate.trace"
expect_in "pool 9" "  allocations returning a live pointer: 1"
expect_in "pool 9" "    line 4: malloc 0x7f0000000020 (thread 5), allocated at line 3"
expect_in "pool 9" "  peak live pool blocks: 1"
expect_in "pool 9" "  leaks: 0 (0 bytes)"
expect_line "result: 1 problem (duplicate_allocations 1)"
finish
