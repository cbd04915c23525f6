# Sourced by the tests that run programs under libshiftpool-malloc.so
# (tests/malloc.mk).  Needs abs_top_builddir and abs_top_srcdir;
# SANITIZER_CFLAGS names the sanitizers of the build, if any.
#
#   preload                the path of the built libshiftpool-malloc.so;
#                          the script exits 77 (skip) in a sanitized build
#                          (a sanitizer replaces malloc itself, and two
#                          replacements cannot both serve the process) or
#                          without shared libraries, 99 when it is missing
#   need PROGRAM...        exits 77 unless every PROGRAM is on the PATH
#   same NAME CMD...       runs CMD on the C library's allocator and then
#                          preloaded, with the statistics on; fails unless
#                          both give the same output and exit status, and
#                          the set served allocations of the run (the
#                          busiest process's total allocs above 0 in the
#                          statistics)
#   finish                 exits 0, or 1 when a comparison failed

: "${abs_top_builddir:?set by make check}"
: "${abs_top_srcdir:?set by make check}"

if [ -n "${SANITIZER_CFLAGS:-}" ]; then
	echo "a sanitized build (SANITIZER_CFLAGS=$SANITIZER_CFLAGS): its" \
		"runtime replaces malloc itself; skipped"
	exit 77
fi

# shellcheck source=tests/shared-object.sh
. "$abs_top_srcdir/tests/shared-object.sh"
find_shared_object libshiftpool-malloc
preload=$shared_object

scratch=$(mktemp -d "${TMPDIR:-/tmp}/shiftpool-malloc.XXXXXX") || exit 99
trap 'rm -rf "$scratch"' 0
trap 'exit 99' 1 2 15

# Settings a test may give; the statistics are added by same().
SHIFTPOOL_MALLOC_TEST=${SHIFTPOOL_MALLOC_TEST:-}
failures=0
runs=0

need() {
	for program in "$@"; do
		if ! command -v "$program" >/dev/null 2>&1; then
			echo "$program is not installed; skipped"
			exit 77
		fi
	done
}

# The statistics line (one per process that exited, a JSON object each)
# of the process whose set served the most: the program under test, not
# a wrapper script or a helper it started.
busiest() {
	sed -n 's/.*"total":{[^}]*"allocs":\([0-9]*\).*/\1 &/p' "$1" |
		sort -n -k1,1 | tail -1 | cut -d' ' -f2-
}

# The set's total allocations in one such line.
total_allocs() {
	printf '%s\n' "$1" |
		sed -n 's/.*"total":{[^}]*"allocs":\([0-9]*\).*/\1/p'
}

same() {
	name=$1
	shift
	runs=$((runs + 1))
	plain_out=$scratch/$name.plain
	pre_out=$scratch/$name.preloaded
	stats=$scratch/$name.stats
	"$@" >"$plain_out" 2>"$plain_out.err"
	plain_status=$?
	settings="stats=$stats,format=json"
	[ -n "$SHIFTPOOL_MALLOC_TEST" ] &&
		settings="$SHIFTPOOL_MALLOC_TEST,$settings"
	SHIFTPOOL_MALLOC=$settings LD_PRELOAD=$preload \
		"$@" >"$pre_out" 2>"$pre_out.err"
	pre_status=$?
	if [ "$plain_status" != "$pre_status" ]; then
		echo "FAIL $name: exit status $plain_status plain," \
			"$pre_status preloaded"
		cat "$pre_out.err"
		failures=$((failures + 1))
		return
	fi
	if ! cmp -s "$plain_out" "$pre_out"; then
		echo "FAIL $name: the output differs (plain, preloaded):"
		diff "$plain_out" "$pre_out" | head -20
		failures=$((failures + 1))
		return
	fi
	line=$(busiest "$stats" 2>/dev/null)
	allocs=$(total_allocs "$line")
	if [ -z "$allocs" ] || [ "$allocs" -eq 0 ]; then
		echo "FAIL $name: the set served nothing (statistics:" \
			"$(head -c 300 "$stats" 2>/dev/null))"
		failures=$((failures + 1))
		return
	fi
	direct=$(printf '%s\n' "$line" | sed -n 's/.*"direct":\([0-9]*\).*/\1/p')
	fallback=$(printf '%s\n' "$line" |
		sed -n 's/.*"total":{[^}]*"fallback_allocs":\([0-9]*\).*/\1/p')
	processes=$(wc -l <"$stats")
	echo "ok $name: same output and status ($plain_status);" \
		"the set served $allocs allocations, its fallback" \
		"$fallback, the C library directly $direct (the busiest" \
		"of $processes processes)"
}

finish() {
	echo "$runs programs, $failures failed"
	[ "$failures" -eq 0 ]
	exit $?
}
