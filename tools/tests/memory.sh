#!/bin/sh
# Memory: what the analyzer keeps for a pool or a process is what it has,
# and the records it holds back for seq= order stay within --window.
#  - 200,000 pool ids, each allocating and freeing one block, and 200,000
#    processes of one such pool (gen-ids.awk): the analyzer's peak RSS,
#    divided by the number of pools or processes, stays below 1,000 bytes
#    a pool id and 1,600 a process (measured on x86-64 with glibc: 664
#    and 1,067; before pools kept their counters sparse and their lists
#    and tables small, 3,045 and 3,499).  --window 0, so that the figure
#    is the model's alone: the window is a fixed cost, checked next.
#  - One pool, 200,000 times: with --window 1000, at most 1,000 records
#    are held at once, however many the trace has.
# The RSS is read with wait4() from python3; without it the test skips.
. "$srcdir/tools/tests/common.sh"

if [ "$have_python" != yes ]; then
	echo "SKIP: no python3 to read the peak RSS"
	exit 77
fi

# The peak RSS of a run of the analyzer in KiB, then its exit status.
maxrss()
{
	python3 -c '
import os, sys
null = os.open(os.devnull, os.O_WRONLY)
pid = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ,
                     file_actions=[(os.POSIX_SPAWN_DUP2, null, 1)])
_, status, usage = os.wait4(pid, 0)
print(usage.ru_maxrss, os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1)' "$ANALYZE" "$@"
}

n=200000
for by in pool pid; do
	case $by in
	pool) bound=1000 ;;
	pid) bound=1600 ;;
	esac
	awk -v n=$n -v by=$by -f "$srcdir/tools/tests/gen-ids.awk" \
		>"$tmp/$by.trace" || exit 99
	set -- $(maxrss --window 0 "$tmp/$by.trace")
	[ $# -eq 2 ] || { fail "$by: could not run the analyzer"; continue; }
	kib=$1 rc=$2
	per=$((kib * 1024 / n))
	echo "$n by $by: peak RSS $kib KiB, $per bytes each (bound $bound)"
	[ "$rc" -eq 0 ] || fail "$by: exit status $rc, not 0 (clean)"
	# A sanitizer's allocator keeps memory of its own beside each
	# allocation: the bound is the analyzer's, not the sanitizer's.
	if [ -n "${SANITIZER_CFLAGS:-}" ]; then
		echo "$by: a sanitized build: the bound is not checked"
	elif [ "$per" -ge "$bound" ]; then
		fail "$by: $per bytes each, not below $bound"
	fi
	rm -f "$tmp/$by.trace"
done

awk -v n=$n -v by=none -f "$srcdir/tools/tests/gen-ids.awk" \
	>"$tmp/none.trace" || exit 99
SHIFTPOOL_ANALYZE_TABLE_STATS=1 "$ANALYZE" --window 1000 "$tmp/none.trace" \
	>"$out" 2>"$tmp/err"
grep '^order: ' "$tmp/err"
grep -Fx "order: held at most 1000 records, out of order 0" "$tmp/err" \
	>/dev/null || fail "the window held more than --window records"
expect_line "result: clean"
finish
