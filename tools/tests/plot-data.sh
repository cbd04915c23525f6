#!/bin/sh
# --plot-data: the series behind --plot, a block per pool, a sample after
# every call on it.  x is the record number for a v1 trace and the seconds
# since the first record for a v2 one; the fallback rate looks at a window
# of the pool's last allocations.  --plot needs gnuplot on PATH, and says
# so with status 2 when it is not there.
. "$srcdir/tools/tests/common.sh"

run 1 --plot-data "$tmp/example.data" --plot-window 2 - <"$DATA/example.trace"
expect_line "result: 3 problems (leaks 1, invalid_frees 1, double_frees 1)"
diff -u "$DATA/example.plot-data" "$tmp/example.data" >&2 || fail "example: plot data differs"
# calloc served by the fallback after a pool malloc: half of the window.
grep -Fx "3 1 4096 0.5000" "$tmp/example.data" >/dev/null || fail "example: no sample of record 3"

run 1 --plot-data="$tmp/fork.data" - <"$DATA/fork.trace"
diff -u "$DATA/fork.plot-data" "$tmp/fork.data" >&2 || fail "fork: plot data differs"
grep -Fx "# x: seconds since the first record" "$tmp/fork.data" >/dev/null || fail "fork: x is not in seconds"
# A forked pool starts from its parent's live blocks, before any allocation.
grep -Fx "0.000005000 1 1000 ?" "$tmp/fork.data" >/dev/null || fail "fork: no first sample of the copy"

run 2 --plot-data "$tmp/no/such/dir/x.data" "$DATA/example.trace"
grep 'no/such/dir' "$tmp/err" >/dev/null || fail "no message naming the unwritable file"
run 2 --plot-window 0 "$DATA/example.trace"
run 2 --plot

# No gnuplot on PATH: a clear error, status 2, no report.
mkdir "$tmp/empty"
env PATH="$tmp/empty" "$ANALYZE" --plot "$tmp/x.png" "$DATA/example.trace" >"$out" 2>"$tmp/err"
status=$?
[ "$status" -eq 2 ] || fail "--plot without gnuplot: status $status, expected 2"
grep -F -- '--plot needs gnuplot, which is not on PATH' "$tmp/err" >/dev/null ||
	fail "--plot without gnuplot: no clear message"
test -s "$out" && fail "--plot without gnuplot: a report all the same"
test -e "$tmp/x.png" && fail "--plot without gnuplot: a PNG all the same"
finish
