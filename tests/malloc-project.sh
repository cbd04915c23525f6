#!/bin/sh
# The project's own test programs on the C library's allocator and under
# libshiftpool-malloc.so: two suites of the Check runner (whose pools fall
# back to malloc(), and so to the preloaded set) and the threaded stress
# program's churn and set parts.  The stress program prints timings and
# counts that vary from run to run, so only its verdicts and its exit
# status are compared.
set -u
. "$abs_top_srcdir/tests/malloc-common.sh"

build=$abs_top_builddir/tests
ran=0
if [ -x "$build/check_shiftpool" ]; then
	CK_RUN_SUITE=set same check-set "$build/check_shiftpool"
	CK_RUN_SUITE=alloc same check-alloc "$build/check_shiftpool"
	ran=1
else
	echo "skip check_shiftpool: not built (no Check)"
fi
if [ -x "$build/stress" ]; then
	same stress sh -c '{ "$1" --only=churn,set --rounds=2; echo "exit $?"; } |
		sed -n -e "s/^\([a-z-]*\)  *\([a-z+-]*\) .* OK\$/\1 \2 OK/p" \
		-e "s/^\(stress: all OK\).*/\1/p" -e "/^exit /p"' \
		sh "$build/stress"
	ran=1
fi
[ $ran -eq 1 ] || exit 77
finish
