#!/bin/sh
# --plot draws a PNG with gnuplot: for a v1 and a v2 trace, the file is
# there and is a PNG.  Skipped without gnuplot.
. "$srcdir/tools/tests/common.sh"

if ! command -v gnuplot >/dev/null 2>&1; then
	echo "SKIP: no gnuplot"
	exit 77
fi

is_png()
{
	sig=$(od -An -tx1 -N8 "$1" | tr -d ' \n')
	[ "$sig" = 89504e470d0a1a0a ] || fail "$1 is not a PNG (starts with $sig)"
}

run 1 --plot "$tmp/example.png" "$DATA/example.trace"
is_png "$tmp/example.png"
expect_line "result: 3 problems (leaks 1, invalid_frees 1, double_frees 1)"

run 1 --plot="$tmp/fork.png" --plot-data "$tmp/fork.data" --json "$DATA/fork.trace"
is_png "$tmp/fork.png"
json_valid
test -s "$tmp/fork.data" || fail "no plot data beside the plot"

# Nothing to draw: an error, not an empty picture.
run 2 --plot "$tmp/empty.png" "$DATA/empty.trace"
grep 'no calls on any pool to plot' "$tmp/err" >/dev/null || fail "no message for an empty trace"
finish
