#!/bin/sh
# Runs the Check unit-test runner (tests/check_shiftpool) under Valgrind's
# memcheck with zero suppressions, and fails on any memcheck error in any
# process (Check forks a child per test unless CK_FORK=no): invalid reads
# and writes (the pool describes its blocks to memcheck, so a use after
# free inside the pool counts), uses of uninitialised values, bad frees,
# definite and indirect leaks.  Not part of `make check` (it takes a
# while); CI calls it, from the top build directory:
#
#	make check TESTS=            # builds tests/check_shiftpool
#	sh $srcdir/tests/safety-valgrind-suite.sh [PROGRAM [ARGS...]]
#
# or `make safety-valgrind-suite`.  PROGRAM defaults to tests/check_shiftpool
# (any test program of the build tree can be given instead).
#
# Environment: abs_top_builddir (default: the current directory);
# CK_FORK (default: no, for speed; the runner then leaves out the tests that
# need a real abort in a forked child; CK_FORK=yes runs them too, each
# forked process checked);  VALGRIND (default: valgrind);  VALGRIND_EXTRA
# (more memcheck options);  SAFETY_VALGRIND_KEEP=DIR keeps memcheck's logs.
#
# Exit status: 0 clean, 1 memcheck errors or the runner failed, 77 when
# valgrind or the runner is missing or the build is sanitized, 99 on setup
# errors.
#
# SPDX-License-Identifier: MIT

: "${abs_top_builddir:=$(pwd)}"
: "${VALGRIND:=valgrind}"
: "${CK_FORK:=no}"
export CK_FORK

skip()
{
	echo "SKIP: $*"
	exit 77
}

if [ $# -gt 0 ]; then
	prog=$1
	shift
	case $prog in
	/*) ;;
	*) prog=$abs_top_builddir/$prog ;;
	esac
else
	prog=$abs_top_builddir/tests/check_shiftpool
fi

command -v "$VALGRIND" >/dev/null 2>&1 || skip "valgrind is not installed"
if grep '^SANITIZER_CFLAGS *= *[^ ]' "$abs_top_builddir/Makefile" \
	>/dev/null 2>&1; then
	skip "sanitized build: valgrind and the sanitizers do not mix"
fi
if [ ! -x "$prog" ]; then
	# The runner is only built when Check is installed.
	if grep '^CHECK_LIBS *= *[^ ]' "$abs_top_builddir/Makefile" \
		>/dev/null 2>&1; then
		echo "ERROR: $prog is not built: run make check TESTS= first" >&2
		exit 99
	fi
	skip "$prog is not built (Check is not installed)"
fi

if [ -n "${SAFETY_VALGRIND_KEEP:-}" ]; then
	logs=$SAFETY_VALGRIND_KEEP
	mkdir -p "$logs" || exit 99
	rm -f "$logs"/memcheck.*.log
else
	logs=$(mktemp -d "${TMPDIR:-/tmp}/safety-valgrind-suite.XXXXXX") ||
		exit 99
	trap 'rm -rf "$logs"' 0
	trap 'exit 1' HUP INT PIPE TERM
fi

# A libtool wrapper script is run through libtool, so that memcheck sees
# the real binary and its uninstalled library.
if [ "$(head -c 2 "$prog")" = "#!" ]; then
	launch()
	{
		"$abs_top_builddir/libtool" --mode=execute "$@"
	}
else
	launch()
	{
		"$@"
	}
fi

# Only the settings below apply: no trace, no debug options (the runner sets
# what each test needs itself).
unset SHIFTPOOL_DEBUG SHIFTPOOL_TRACE VALGRIND_OPTS

# --error-exitcode makes any error fail the process that had it; the logs
# (one per process, %p) catch the errors of Check's forked children, whose
# exit status Check reads itself.  --fair-sched=yes: Valgrind runs one
# thread at a time, and without it the tests whose threads take turns can
# spin through whole time slices, minutes instead of seconds.
# VALGRIND_EXTRA adds options, e.g. --track-origins=yes.
echo "+ CK_FORK=$CK_FORK $VALGRIND ${VALGRIND_EXTRA:-} $prog $*"
start=$(date +%s)
# shellcheck disable=SC2086
launch "$VALGRIND" --error-exitcode=42 --log-file="$logs/memcheck.%p.log" \
	--leak-check=full --show-leak-kinds=definite,indirect \
	--errors-for-leak-kinds=definite,indirect --num-callers=30 \
	--fair-sched=yes ${VALGRIND_EXTRA:-} "$prog" "$@"
rc=$?
end=$(date +%s)

errors=0
nlogs=0
for log in "$logs"/memcheck.*.log; do
	[ -f "$log" ] || continue
	nlogs=$((nlogs + 1))
	n=$(sed -n 's/.*ERROR SUMMARY: \([0-9][0-9]*\) errors.*/\1/p' "$log" |
		tail -n 1)
	if [ -z "$n" ]; then
		# A process that died before its summary (killed, or a Check
		# child that exited early) still counts what it reported.
		n=$(grep -c '^==[0-9]*== \(Invalid\|Conditional\|Use of\|Mismatched\|Syscall param\|Source and destination\|Argument\|.*definitely lost\|.*indirectly lost\)' "$log")
	fi
	if [ "$n" -ne 0 ]; then
		errors=$((errors + n))
		echo "---- $log: $n error(s)" >&2
		cat "$log" >&2
	fi
done

echo "safety-valgrind-suite: exit status $rc, $nlogs process(es), $errors memcheck error(s), $((end - start)) s"
if [ "$nlogs" -eq 0 ]; then
	echo "FAIL: memcheck wrote no log: did valgrind run?" >&2
	exit 1
fi
if [ "$errors" -ne 0 ] || [ "$rc" -ne 0 ]; then
	exit 1
fi
exit 0
