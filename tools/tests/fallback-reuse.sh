#!/bin/sh
# A fallback block given back (free() or a realloc that moved it) goes to
# the system allocator, which may hand the address to any malloc of the
# program; that block may then reach pool_free(), which passes it on to
# free().  Its free is of a pointer the trace never showed allocated, not a
# double free.  A pool block freed twice with no allocation between is
# still a double free.
. "$srcdir/tools/tests/common.sh"

run 1 - <"$DATA/fallback-reuse.trace"
expect_file fallback-reuse.expected
expect_in "pool 1" "  frees of unknown pointers: 2"
expect_in "pool 1" "    line 5: free 0x560000001000 (thread 2), freed at line 4"
expect_in "pool 1" "    line 8: free 0x560000002000 (thread 1), freed at line 7"
expect_in "pool 1" "  double frees not reported by the library: 1"
expect_in "pool 1" "    line 12: free 0x7f0000000000 (thread 1), freed at line 11"
expect_line "result: 3 problems (unknown_frees 2, unreported_double_frees 1)"
finish
