#!/bin/sh
# A pool set is one unit: its classes come from set_init and their init
# records (whose pool numbers name the set), and the report breaks the
# requests down per class and above the largest one.  A call may name the
# class that served it (class=, 0 for the fallback); the library writes
# no such key, and then the class that served a request is the smallest
# that fits it.
. "$srcdir/tools/tests/common.sh"

run 0 - <"$DATA/set.trace"
expect_file set.expected
expect_line "total (2 pools)"
expect_in "set 1" "  classes: 64-256 bytes, 65536 bytes per class"
expect_in "set 1" "  allocations: 7 (pool 4, fallback 3, failed 0)"
expect_in "set 1" "  peak live pool blocks: 4"
expect_in "set 1" "    64: blocks 1024, requests 2, fallback 0, served 2"
expect_in "set 1" "    128: blocks 512, requests 3, fallback 1, served 1"
expect_in "set 1" "    256: blocks 256, requests 0, fallback 0, served 1"
expect_in "set 1" "    above the largest class: requests 2, fallback 2"
expect_in "pool 5" "  block size: 32"
expect_line "result: clean"

run 0 --json "$DATA/set.trace"
json_valid
json_is 'd["pools"][0]["kind"]' '"set"'
json_is 'd["pools"][1]["kind"]' '"pool"'
json_is '[c["block_size"] for c in d["pools"][0]["classes"]]' '[64, 128, 256]'
json_is '[c["requests"] for c in d["pools"][0]["classes"]]' '[2, 3, 0]'
json_is '[c["served"] for c in d["pools"][0]["classes"]]' '[2, 1, 1]'
json_is 'd["pools"][0]["above_largest_class"]' '{"requests": 2, "fallback": 2}'
json_is 'd["pools"][0]["min_block"]' 64
json_is 'd["pools"][0]["block_size"]' null

# Without set_init, the classes seen in class= still make a set.
grep -v '^set_init\|^init' "$DATA/set.trace" >"$tmp/noinit.trace"
run 0 "$tmp/noinit.trace"
expect_in "set 1" "  classes: unknown (no set_init line; first seen at line 2)"
expect_in "set 1" "    64: blocks unknown, requests 2, fallback 0, served 2"
# As the library writes it: no class= key; served by the class that fits.
sed 's/ class=[0-9]*//' "$DATA/set.trace" >"$tmp/noclass.trace"
run 0 "$tmp/noclass.trace"
expect_in "set 1" "    64: blocks 1024, requests 2, fallback 0, served 2"
expect_in "set 1" "    128: blocks 512, requests 3, fallback 1, served 2"
expect_in "set 1" "    256: blocks 256, requests 0, fallback 0, served 0"
finish
