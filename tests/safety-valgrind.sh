#!/bin/sh
# A use after free of a pool block is reported by Valgrind's memcheck, in
# every mode: the pool describes its blocks with VALGRIND_MALLOCLIKE_BLOCK
# and VALGRIND_FREELIKE_BLOCK when it runs under Valgrind.  The same program
# without the bad access is clean (leaks included), and with
# SHIFTPOOL_DEBUG=no-valgrind the pool stays silent, so the reports above are
# the pool's doing and not memcheck's own view of the region.
#
# Runs tests/safety-uaf (see its header) from the build tree.  SKIP (77)
# when valgrind is missing or does not run, when the build is sanitized
# (Valgrind and the sanitizers do not mix), or when the library was built
# without <valgrind/memcheck.h>.
#
# SPDX-License-Identifier: MIT

: "${abs_top_builddir:=$(pwd)}"
prog=$abs_top_builddir/tests/safety-uaf
status=42

skip()
{
	echo "SKIP: $*"
	exit 77
}

if [ ! -x "$prog" ]; then
	echo "ERROR: $prog not built" >&2
	exit 99
fi
command -v valgrind >/dev/null 2>&1 || skip "valgrind is not installed"
valgrind -q --error-exitcode=$status true >/dev/null 2>&1 ||
	skip "valgrind does not run here"
if grep '^SANITIZER_CFLAGS *= *[^ ]' "$abs_top_builddir/Makefile" \
	>/dev/null 2>&1; then
	skip "sanitized build: valgrind and the sanitizers do not mix"
fi
info=$("$prog" info) || { echo "ERROR: $prog info failed" >&2; exit 99; }
case $info in
*sanitized=1*) skip "sanitized build: valgrind and the sanitizers do not mix" ;;
esac
case $info in
*valgrind_h=1*) ;;
*) skip "built without <valgrind/memcheck.h>: the pool cannot describe itself" ;;
esac

# The program is linked with -no-install, so it is the real binary; should
# libtool still have made a wrapper script, let libtool run valgrind on it.
run_vg=valgrind
if [ "$(head -c 2 "$prog")" = "#!" ]; then
	run_vg="$abs_top_builddir/libtool --mode=execute valgrind"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/safety-valgrind.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' 0
trap 'exit 1' HUP INT PIPE TERM

# Only the settings given below apply.
unset SHIFTPOOL_DEBUG SHIFTPOOL_TRACE VALGRIND_OPTS
fails=0

fail()
{
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}

# vg NAME DEBUG MODE ACTION [VALGRIND OPTIONS]: runs the program under
# memcheck; $log is memcheck's log, $out the program's output, $rc the status.
vg()
{
	name=$1 debug=$2 mode=$3 action=$4
	shift 4
	log=$tmp/$name.vg
	out=$tmp/$name.out
	echo "+ SHIFTPOOL_DEBUG=$debug valgrind safety-uaf $mode $action"
	SHIFTPOOL_DEBUG=$debug $run_vg -q --error-exitcode=$status \
		--log-file="$log" "$@" "$prog" "$mode" "$action" >"$out" 2>&1
	rc=$?
}

show()
{
	sed 's/^/    /' "$log" "$out" >&2
}

# expect_uaf NAME: memcheck reported the read and the write, each inside
# the freed 256-byte block, and nothing else.
expect_uaf()
{
	before=$fails
	read_at=$(sed -n 's/^read=//p' "$out")
	write_at=$(sed -n 's/^write=//p' "$out")
	if [ "$rc" -ne $status ]; then
		fail "$1: exit status $rc, not valgrind's $status"
		show
		return
	fi
	if [ -z "$read_at" ] || [ -z "$write_at" ]; then
		fail "$1: the program printed no addresses"
		show
		return
	fi
	grep "Invalid read of size 1" "$log" >/dev/null ||
		fail "$1: no invalid read reported"
	grep "Invalid write of size 1" "$log" >/dev/null ||
		fail "$1: no invalid write reported"
	grep "Address $read_at is 128 bytes inside a block of size 256 free'd" \
		"$log" >/dev/null ||
		fail "$1: the read at $read_at is not placed in the freed block"
	grep "Address $write_at is 136 bytes inside a block of size 256 free'd" \
		"$log" >/dev/null ||
		fail "$1: the write at $write_at is not placed in the freed block"
	n=$(grep -c "^==[0-9]*== Invalid" "$log")
	[ "$n" -eq 2 ] || fail "$1: $n memcheck errors, not 2"
	[ $fails -eq "$before" ] || show
}

# expect_clean NAME: the program succeeded and memcheck said nothing.
expect_clean()
{
	if [ "$rc" -ne 0 ] || [ -s "$log" ]; then
		fail "$1: not clean (status $rc)"
		show
	fi
}

for mode in single locked per-thread; do
	vg "$mode-clean" "" "$mode" clean \
		--leak-check=full --errors-for-leak-kinds=definite,indirect
	expect_clean "$mode, correct use"
	vg "$mode-uaf" "" "$mode" uaf
	expect_uaf "$mode, use after free"
done

# A block freed by another thread: a remote free in per-thread mode.
vg remote "" per-thread remote
expect_uaf "per-thread, use after a remote free"

# The debug fill writes the free blocks itself: no error of its own, and
# the bad accesses are still seen.
vg fill-clean fill per-thread clean \
	--leak-check=full --errors-for-leak-kinds=definite,indirect
expect_clean "per-thread with fill, correct use"
vg fill-uaf fill,fail-fallback=1000 locked uaf
expect_uaf "locked with fill, use after free"

# no-valgrind: the pool no longer describes its blocks, so memcheck cannot
# see the bug (the region is ordinary mapped memory to it).
vg no-valgrind no-valgrind single uaf
expect_clean "single with SHIFTPOOL_DEBUG=no-valgrind"

if [ $fails -ne 0 ]; then
	echo "safety-valgrind: $fails failure(s)" >&2
	exit 1
fi
echo "safety-valgrind: memcheck saw every use after free, and nothing else"
exit 0
