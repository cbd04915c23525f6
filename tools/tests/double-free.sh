#!/bin/sh
# Double frees: two reported by the library (src=double).  A second free
# of a fallback pointer is a free of an unknown pointer, not a double free:
# once given back to the system allocator, the address may have been any
# malloc's since (fallback-reuse.sh).
. "$srcdir/tools/tests/common.sh"

run 1 - <"$DATA/double-free.trace"
expect_file double-free.expected
expect_in "pool 2" "  double frees (reported by the library): 2"
expect_in "pool 2" "    line 6: free 0x7f0000001000 (thread 8)"
expect_in "pool 2" "    line 11: free 0x7f0000001000 (thread 9)"
expect_in "pool 2" "  frees of unknown pointers: 1"
expect_in "pool 2" "    line 8: free 0x560000000100 (thread 7), freed at line 7"
expect_in "pool 2" "  leaks: 0 (0 bytes)"
expect_in "pool 2" "  double frees not reported by the library: 0"
expect_line "result: 3 problems (double_frees 2, unknown_frees 1)"

run 1 --json "$DATA/double-free.trace"
json_valid
json_is '[e["line"] for e in d["pools"][0]["double_frees"]["list"]]' '[6, 11]'
json_is 'd["pools"][0]["unknown_frees"]["list"][0]["freed_line"]' 7
json_is 'd["total"]["double_frees"]' 2
json_is 'd["total"]["unreported_double_frees"]' 0

# A log whose only fault is one reported double free is not clean.
printf '%s\n' '# shiftpool trace v1' 'init pool=1 block_size=8 block_count=1' \
	'free pool=1 thread=1 ptr=0x1000 src=double' >"$tmp/one.trace"
run 1 "$tmp/one.trace"
expect_line "result: 1 problem (double_frees 1)"
finish
