#!/bin/sh
# realloc in place, moving pool -> fallback -> pool, failing (the old block
# stays live), realloc(NULL, n), realloc(p, 0): a clean log.
. "$srcdir/tools/tests/common.sh"

run 0 - <"$DATA/realloc.trace"
expect_file realloc.expected
expect_in "pool 5" "  operations: init=1 set_init=0 destroy=1 malloc=2 calloc=0 realloc=8 strdup=0 free=2 malloc_bulk=0 free_bulk=0 trim=0 report=0 fork=0"
expect_in "pool 5" "  allocations: 9 (pool 4, fallback 4, failed 1)"
expect_in "pool 5" "  reallocs: in place 2, moved 3, freed (size 0) 1, failed 1"
expect_in "pool 5" "  peak live pool blocks: 2"
expect_in "pool 5" "  peak live fallback bytes: 8000"
expect_in "pool 5" "  cross-thread frees: 1"
expect_in "pool 5" "  leaks: 0 (0 bytes)"
expect_in "pool 5" "  double frees not reported by the library: 0"
expect_in "pool 5" "  frees of unknown pointers: 0"
expect_line "result: clean"

run 0 --json "$DATA/realloc.trace"
json_valid
json_is 'd["pools"][0]["reallocs"]' '{"in_place": 2, "moved": 3, "to_zero": 1, "failed": 1}'
json_is 'd["pools"][0]["peak_live_fallback_bytes"]' 8000

# Without the final frees, the block moved in by the last realloc leaks,
# with the realloc's size and line.
sed '/^free /d' "$DATA/realloc.trace" >"$tmp/r.trace"
run 1 "$tmp/r.trace"
expect_in "pool 5" "  leaks: 2 (5000 bytes)"
expect_in "pool 5" "    0x560000009000 size 3000 malloc line 10 (fallback, thread 10)"
expect_in "pool 5" "    0x560000001000 size 2000 realloc line 12 (fallback, thread 11)"
finish
