#!/bin/sh
# Malformed lines, unknown operations and keys, CRLF, blank lines, a last
# line cut short; then every prefix of every line of the logs, and bytes
# of all values: counted, never a crash.
. "$srcdir/tools/tests/common.sh"

run 0 - <"$DATA/malformed.trace"
expect_file malformed.expected
expect_line "lines: 23 (records 6, comments 2, blank 1)"
expect_line "unknown operations: 2 (lines 6, 21)"
expect_line "records with unknown keys: 1"
expect_line "malformed lines: 12 (lines 5, 8, 9, 10, 11, 12, 13, 14, 15, 17, 18, 23)"
expect_in "pool 1" "  allocations: 2 (pool 2, fallback 0, failed 0)"
expect_in "pool 1" "  leaks: 0 (0 bytes)"
expect_line "result: clean"

run 1 --strict --limit 3 - <"$DATA/malformed.trace"
expect_line "malformed lines: 12 (lines 5, 8, 9, ...)"
expect_line "result: 14 problems (malformed 12, unknown 2)"

run 0 --json "$DATA/malformed.trace"
json_valid
json_is 'd["lines"]["malformed_lines"]' '[5, 8, 9, 10, 11, 12, 13, 14, 15, 17, 18, 23]'
json_is 'd["lines"]["unknown"]' 2
json_is 'd["lines"]["unknown_keys"]' 1

# Every prefix of every line: each is a record or malformed.
cat "$DATA"/*.trace | awk '{ for (i = 1; i <= length($0); i++) print substr($0, 1, i) }' \
	>"$tmp/prefixes.trace"
"$ANALYZE" "$tmp/prefixes.trace" >"$out" 2>"$tmp/err"
status=$?
[ "$status" -le 1 ] || fail "prefixes: exit status $status"
grep '^malformed lines: [1-9]' "$out" >/dev/null || fail "prefixes: no malformed line counted"
"$ANALYZE" --json "$tmp/prefixes.trace" >"$out" 2>"$tmp/err"
json_valid

# All byte values, NUL and control characters included.
awk 'BEGIN { srand(7); for (i = 0; i < 20000; i++) {
	c = int(rand() * 256); if (c == 0) c = 48; printf "%c", c
	if (rand() < 0.05) printf "\n"
	if (rand() < 0.01) printf "malloc pool=1 thread=1 size=%d ptr=0x%x src=pool ", i, i * 16 } }' \
	>"$tmp/noise.trace"
printf 'free pool=1 thread=1 ptr=0x10\000 src=pool\n' >>"$tmp/noise.trace"
"$ANALYZE" "$tmp/noise.trace" >"$out" 2>"$tmp/err"
status=$?
[ "$status" -le 1 ] || fail "noise: exit status $status"
"$ANALYZE" --json "$tmp/noise.trace" >"$out" 2>"$tmp/err"
json_valid
json_is 'd["lines"]["malformed"] > 0' true
finish
