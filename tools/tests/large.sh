#!/bin/sh
# A log of about a million lines (gen-large.awk says what is in it): the
# numbers must come out exactly, and the hash tables' lookups stay short
# (what the time of the run would show, without depending on the machine).
. "$srcdir/tools/tests/common.sh"

awk -f "$srcdir/tools/tests/gen-large.awk" >"$tmp/large.trace" || exit 99
lines=$(wc -l <"$tmp/large.trace")
echo "log: $lines lines"
[ "$lines" -eq 999998 ] || fail "generator wrote $lines lines"

SHIFTPOOL_ANALYZE_TABLE_STATS=1
export SHIFTPOOL_ANALYZE_TABLE_STATS
run 1 "$tmp/large.trace"
cat "$tmp/err"
probes_within live 3 256
probes_within maps 3 256

expect_line "lines: 999998 (records 999997, comments 1, blank 0)"
expect_line "malformed lines: 0"
expect_in "pool 1" "  allocations: 250000 (pool 225000, fallback 25000, failed 0)"
expect_in "pool 1" "  leaks: 7 (1218 bytes)"
expect_in "pool 1" "    0x7f100000600 size 195 malloc line 994029 (pool, thread 7010)"
expect_in "pool 1" "  peak live pool blocks: 900"
expect_in "pool 1" "  peak live fallback bytes: 476100"
expect_in "pool 2" "  peak live fallback bytes: 860100"
expect_in "pool 2" "  leaks: 0 (0 bytes)"
expect_in "total" "  operations: init=2 set_init=0 destroy=2 malloc=500000 calloc=0 realloc=0 strdup=0 free=499993 malloc_bulk=0 free_bulk=0 trim=0 report=0 fork=0"
expect_in "total" "  allocations: 500000 (pool 450000, fallback 50000, failed 0)"
expect_in "total" "  fallback rate: 10.00%"
expect_in "total" "  threads: 7"
expect_in "total" "  leaks: 7 (1218 bytes)"
expect_in "total" "  peak live pool blocks: 1800"
expect_in "total" "  peak live fallback bytes: 1336200"
expect_in "total" "  frees of unknown pointers: 0"
expect_in "total" "  double frees not reported by the library: 0"
expect_in "total" "  allocations returning a live pointer: 0"
expect_line "result: 7 problems (leaks 7)"
finish
