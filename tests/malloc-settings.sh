#!/bin/sh
# SHIFTPOOL_MALLOC: a configured set serves (its classes, its mode, in the
# statistics at exit, text to stderr and JSON to a file named with the
# process ID); a setting not understood is reported on stderr and the
# defaults serve; so does a set that cannot be made, the C library then
# serving everything.
set -u
. "$abs_top_srcdir/tests/malloc-common.sh"

api=$abs_top_builddir/tests/malloc-api
fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

# Text statistics on stderr: the classes and the mode asked for.
SHIFTPOOL_MALLOC=mode=locked,min=32,max=1k,bytes=16M,stats=stderr \
	LD_PRELOAD=$preload "$api" >"$scratch/out" 2>"$scratch/err" ||
	fail "malloc-api failed under mode=locked,min=32,max=1k"
grep -q '^set: 6 classes, 32 \.\. 1024 B$' "$scratch/err" ||
	fail "no 'set: 6 classes, 32 .. 1024 B' line in the statistics"
grep -q '^class 32: mode: locked' "$scratch/err" ||
	fail "no locked 32-byte class in the statistics"
grep -q '^shiftpool-malloc: pid [0-9]*, [0-9]* allocations made directly' \
	"$scratch/err" || fail "no process line in the statistics"

# JSON statistics to a file named with the process ID.
SHIFTPOOL_MALLOC="stats=$scratch/stats.%p.json,format=json" \
	LD_PRELOAD=$preload "$api" set >"$scratch/out" 2>&1 ||
	fail "malloc-api failed with JSON statistics"
set -- "$scratch"/stats.*.json
if [ $# -ne 1 ] || [ ! -f "$1" ]; then
	fail "no statistics file stats.PID.json"
else
	pid=${1##*/stats.}
	pid=${pid%.json}
	grep -q "^{\"kind\":\"malloc\",\"pid\":$pid,\"direct\":[0-9]*,\"set\":{\"kind\":\"set\",\"classes\":\\[" "$1" ||
		fail "the JSON statistics do not start as documented: $(head -c 200 "$1")"
	[ "$(wc -l <"$1")" -eq 1 ] || fail "more than one line of JSON"
	allocs=$(total_allocs "$(cat "$1")")
	[ -n "$allocs" ] && [ "$allocs" -gt 0 ] ||
		fail "the JSON statistics show no allocation of the set"
fi

# A mistake: reported once, the defaults serve (malloc(17) in a 32-byte
# class), the program unharmed.
SHIFTPOOL_MALLOC=mode=fast LD_PRELOAD=$preload "$api" set \
	>"$scratch/out" 2>"$scratch/err" ||
	fail "malloc-api failed after a setting not understood"
grep -q "^shiftpool-malloc: SHIFTPOOL_MALLOC: not understood, using the defaults: 'mode=fast'\$" \
	"$scratch/err" || fail "no report of 'mode=fast': $(cat "$scratch/err")"
for bad in min=24 max=3000 min=4096,max=64 max=2G bytes=0 bytes=12Q \
	stats= format=xml, unknown=1 min heap=0 heap=3G heap=fast; do
	SHIFTPOOL_MALLOC=$bad LD_PRELOAD=$preload "$api" set \
		>"$scratch/out" 2>"$scratch/err" ||
		fail "malloc-api failed with SHIFTPOOL_MALLOC=$bad"
	grep -q "using the defaults" "$scratch/err" ||
		fail "SHIFTPOOL_MALLOC=$bad was not reported"
done

# heap=: the C library's heap, which serves the blocks above the classes,
# keeps its free top (4M by default) instead of giving pages back on
# every free and faulting them in again; heap=glibc, and glibc's own
# thresholds set in GLIBC_TUNABLES, keep glibc's behaviour.  Page faults
# are counted, not timed.
faults_of() { # environment assignments...
	env "$@" LD_PRELOAD=$preload "$api" heap | sed -n 's/^faults //p'
}
tuned=$(faults_of SHIFTPOOL_MALLOC=)
own=$(faults_of SHIFTPOOL_MALLOC=heap=glibc)
tunables=$(faults_of GLIBC_TUNABLES=glibc.malloc.trim_threshold=131072)
if [ -z "$tuned" ] || [ -z "$own" ] || [ -z "$tunables" ]; then
	fail "malloc-api heap printed no fault count"
elif [ $((tuned * 10)) -ge "$own" ]; then
	fail "heap= (default) faulted $tuned times, glibc's heap $own"
elif [ $((tuned * 10)) -ge "$tunables" ]; then
	fail "GLIBC_TUNABLES did not stand: $tunables faults, $tuned tuned"
fi

# No set can be made (4 PiB a class, beyond any address space): reported,
# the C library serves, so malloc-api's own checks (not the set's) hold.
SHIFTPOOL_MALLOC=bytes=4096T LD_PRELOAD=$preload "$api" \
	>"$scratch/out" 2>"$scratch/err" ||
	fail "malloc-api failed on the C library alone"
grep -q "the C library serves every allocation" "$scratch/err" ||
	fail "a set that cannot be made was not reported"

[ $failures -eq 0 ] && echo "ok: settings, reports and statistics"
exit $((failures != 0))
