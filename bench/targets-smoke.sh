#!/bin/sh
# The targets report's smoke test: bench/targets.py --quick must run every
# case it names and print a verdict for each target.  A seconds-long run:
# its figures mean nothing, only that the report works.
#
# SPDX-License-Identifier: MIT

set -u

top_builddir=${abs_top_builddir:-.}
top_srcdir=${abs_top_srcdir:-.}
out=${TMPDIR:-/tmp}/shiftpool-targets.$$.txt
trap 'rm -f "$out"' EXIT INT TERM

if test -z "${PYTHON3:-}" || ! "$PYTHON3" -c 'import sys' 2>/dev/null; then
	echo "targets-smoke: python3 not found: skipped"
	exit 77
fi

# valgrind and the sanitizers do not mix: no instruction counts then.
skip_counts=
if grep '^SANITIZER_CFLAGS *= *[^ ]' "$top_builddir/Makefile" \
	>/dev/null 2>&1; then
	skip_counts=--no-instructions
fi

"$PYTHON3" "$top_srcdir/bench/targets.py" --quick $skip_counts \
	--bench="$top_builddir/bench/bench" \
	--pair-cost="$top_builddir/bench/pair-cost" \
	--pair-cost-inline="$top_builddir/bench/pair-cost-inline" >"$out"
status=$?
cat "$out"
if test $status -ne 0; then
	echo "targets-smoke: targets.py exited with status $status" >&2
	exit 1
fi

# Every target has a verdict, and the summary adds up to the rows.
rows=$(awk '/^(held|lighttpd|parallel|xthread|footprint|instructions|pair|bulk|fixed-size|mixed|latency)/' "$out" | wc -l)
verdicts=$(awk '/^(held|lighttpd|parallel|xthread|footprint|instructions|pair|bulk|fixed-size|mixed|latency)/ &&
	/ (met|missed|out of reach|not measured \([a-z ]+\))$/' "$out" | wc -l)
summary=$(awk '/ met, .* missed, / { print $1 + $3 + $5 + $14 }' "$out")
if test "$rows" -lt 40 || test "$rows" -ne "$verdicts" ||
	test "$rows" -ne "${summary:-0}"; then
	echo "targets-smoke: $rows targets, $verdicts verdicts," \
		"summary counts ${summary:-none}" >&2
	exit 1
fi
echo "targets-smoke: $rows targets, each with a verdict"
