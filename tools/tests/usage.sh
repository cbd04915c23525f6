#!/bin/sh
# Exit status 2: missing or unreadable file, usage errors.  --help is 0.
. "$srcdir/tools/tests/common.sh"

run 2 "$DATA/no-such-file.trace"
grep 'no-such-file.trace' "$tmp/err" >/dev/null || fail "no message naming the missing file"
test -s "$out" && fail "output for a missing file"
run 2 --json "$DATA/no-such-file.trace"
run 2 "$DATA"
run 2
run 2 --bogus "$DATA/clean.trace"
run 2 "$DATA/clean.trace" "$DATA/leaks.trace"
run 2 --limit "$DATA/clean.trace"
run 2 --top=x "$DATA/clean.trace"
run 0 --help
expect_line "    shiftpool-analyze [--json] [--strict] [--limit N] [--top N]"
expect_line "                      [--plot PNG] [--plot-data FILE] [--plot-window N]"
expect_line "                      [--window N] FILE"
grep "^EXIT STATUS" "$out" >/dev/null || fail "--help has no exit status section"
run 0 --version
grep '^shiftpool-analyze (shiftpool) ' "$out" >/dev/null || fail "--version"
# -- ends the options; - is standard input.
run 0 -- - <"$DATA/clean.trace"
expect_line "result: clean"
finish
