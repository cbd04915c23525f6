#!/bin/sh
# report records: problems the library found outside the call that made
# them, each of its kind.  A double free that raced another thread's free
# is seen by the analyzer as unreported when the second free is written,
# and becomes reported when the library's report of it comes.
. "$srcdir/tools/tests/common.sh"

run 1 - <"$DATA/report.trace"
expect_file report.expected
expect_in "pool 1" "  double frees (reported by the library): 2"
expect_in "pool 1" "    line 7: report 0x7f0000000000 (thread 7), freed at line 6"
expect_in "pool 1" "    line 12: report 0x7f0000000100 (thread 8)"
expect_in "pool 1" "  double frees not reported by the library: 1"
expect_in "pool 1" "    line 9: free 0x7f0000000040 (thread 7), freed at line 8"
expect_in "pool 1" "  corrupted free lists (reported by the library): 1"
expect_in "pool 1" "  writes after free (reported by the library): 1"
expect_in "pool 1" "  invalid frees (reported by the library): 1"
expect_in "pool 1" "  frees of another pool's pointer (reported by the library): 1"
expect_line "malformed lines: 1 (line 15)"
expect_line "result: 7 problems (invalid_frees 1, double_frees 2, wrong_pool_frees 1, corrupted_free_lists 1, writes_after_free 1, unreported_double_frees 1)"

# Before the report, the racing double free is unreported.
head -n 6 "$DATA/report.trace" >"$tmp/early.trace"
run 1 "$tmp/early.trace"
expect_in "pool 1" "  double frees not reported by the library: 1"
expect_in "pool 1" "    line 6: free 0x7f0000000000 (thread 9), freed at line 5"
expect_in "pool 1" "  double frees (reported by the library): 0"

run 1 --json "$DATA/report.trace"
json_valid
json_is 'd["total"]["double_frees"]' 2
json_is 'd["total"]["unreported_double_frees"]' 1
json_is 'd["pools"][0]["unreported_double_frees"]["list"]' '[{"line": 9, "op": "free", "ptr": "0x7f0000000040", "thread": 7, "freed_line": 8}]'
json_is 'd["pools"][0]["double_frees"]["list"][0]' '{"line": 7, "op": "report", "ptr": "0x7f0000000000", "thread": 7, "freed_line": 6}'
json_is 'd["total"]["corrupted_free_lists"]' 1
json_is 'd["total"]["writes_after_free"]' 1

# With --limit 1 the list shows the one still counted, not the one taken
# back.
run 1 --limit 1 - <"$DATA/report.trace"
expect_in "pool 1" "    line 9: free 0x7f0000000040 (thread 7), freed at line 8"
finish
