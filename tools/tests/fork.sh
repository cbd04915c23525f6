#!/bin/sh
# Processes: pools are known by (pid, pool), named PID:POOL when the trace
# has several processes.  A fork record starts the child's pools as copies
# of its parent's, live blocks and freed ones included; a pid seen again
# in a fork record is a new process.
. "$srcdir/tools/tests/common.sh"

run 1 - <"$DATA/fork.trace"
expect_file fork.expected
expect_line "processes: 3"
expect_line "total (3 pools)"
expect_in "pool 100:1" "  leaks: 0 (0 bytes)"
expect_in "pool 100:1" "  frees of unknown pointers: 0"
expect_in "pool 200:1" "  forked: from pool 100:1 at line 7"
# The child frees the block it inherited live: fine; the one freed before
# the fork: a double free; the one its parent allocated after: unknown.
expect_in "pool 200:1" "  double frees not reported by the library: 1"
expect_in "pool 200:1" "    line 9: free 0x7f0000000080 (thread 200), freed at line 6"
expect_in "pool 200:1" "  frees of unknown pointers: 1"
expect_in "pool 200:1" "    line 11: free 0x7f0000000100 (thread 200)"
# The fallback block it inherited and never freed is its leak.
expect_in "pool 200:1" "  leaks: 1 (1000 bytes)"
expect_in "pool 200:1" "    0x560000000010 size 1000 malloc line 4 (fallback, thread 100)"
expect_in "pool 200:1" "  peak live fallback bytes: 1000"
expect_in "pool 200#2:1" "  forked: from pool 100:1 at line 15"
expect_in "pool 200#2:1" "  leaks: 0 (0 bytes)"
expect_in "total" "  peak live fallback bytes: 2000"
expect_line "result: 3 problems (leaks 1, unknown_frees 1, unreported_double_frees 1)"

run 1 --json "$DATA/fork.trace"
json_valid
json_is 'd["processes"]' 3
json_is '[p["name"] for p in d["pools"]]' '["100:1", "200:1", "200#2:1"]'
json_is '[p["forked_from"] for p in d["pools"]]' '[null, "100:1", "100:1"]'
json_is '[p["fork_line"] for p in d["pools"]]' '[null, 7, 15]'
json_is '[p["pid"] for p in d["pools"]]' '[100, 200, 200]'

# One process: pools keep their plain numbers.
grep -v 'pid=200' "$DATA/fork.trace" >"$tmp/one.trace"
run 0 "$tmp/one.trace"
expect_line "processes: 1"
expect_line "pool 1"
finish
