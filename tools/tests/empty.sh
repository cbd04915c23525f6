#!/bin/sh
# An empty log and a log with only the header: nothing to report, clean.
. "$srcdir/tools/tests/common.sh"

run 0 - <"$DATA/empty.trace"
expect_file empty.expected
expect_line 'format: no "# shiftpool trace vN" version line'
expect_line "processes: 0"
expect_line "lines: 0 (records 0, comments 0, blank 0)"
expect_line "total (0 pools)"
expect_line "result: clean"

run 0 --json "$DATA/empty.trace"
json_valid
json_is 'd["pools"]' '[]'
json_is 'd["format_version"]' null
json_is 'd["total"]["fallback_rate"]' null

echo '# shiftpool trace v1' >"$tmp/header.trace"
run 0 "$tmp/header.trace"
expect_line "format: v1"
expect_line "lines: 1 (records 0, comments 1, blank 0)"

# A newer format version still reads, and says so.
printf '# shiftpool trace v4\nmalloc pool=1 thread=1 size=8 ptr=0x10 src=pool extra=1\nfree pool=1 thread=1 ptr=0x10 src=pool\nresize pool=1 by=2\n' \
	>"$tmp/newer.trace"
run 0 "$tmp/newer.trace"
expect_line "format: v4 (this analyzer knows v3; unknown parts are skipped)"
expect_line "unknown operations: 1 (line 4)"
expect_line "records with unknown keys: 1"
finish
