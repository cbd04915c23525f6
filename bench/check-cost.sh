#!/bin/sh
# check-cost.sh [--time=ROUNDS]: what each of the pool's checks costs.
#
# Builds the committed tree (git HEAD) five times in a scratch directory,
# with bench/check-cost.patch applied and the checks compiled out one
# after another, and prints the instructions of one malloc(64) + free
# pair with its loop, through the library and inline (callgrind over
# bench/pair-cost, as bench/targets.py counts them).  These builds exist
# for this measurement only; none of them is ever installed.
#
# --time=ROUNDS also builds the bench of the first build (every check)
# and of the fourth (none), runs their pair workload in turn ROUNDS
# times, and prints each pool row's overhead over the floor as a fraction
# of tcmalloc's in the same run, median over the rounds.
#
# Run from the top of a git checkout; needs autoreconf, valgrind, patch
# and python3.  Takes a few minutes (more with --time).
#
# SPDX-License-Identifier: MIT
set -eu

rounds=0
case ${1-} in
--time=*) rounds=${1#--time=} ;;
'') ;;
*) echo "usage: $0 [--time=ROUNDS]" >&2; exit 2 ;;
esac
top=$(pwd)
[ -f bench/check-cost.patch ] && git rev-parse --git-dir >/dev/null 2>&1 || {
	echo "$0: run from the top of a git checkout" >&2
	exit 2
}
for tool in autoreconf valgrind patch python3; do
	command -v $tool >/dev/null 2>&1 ||
		{ echo "$0: $tool is needed" >&2; exit 2; }
done

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT INT TERM
git archive HEAD | tar -x -C "$scratch"
cd "$scratch"
patch -s -p1 <"$top/bench/check-cost.patch" || {
	echo "$0: bench/check-cost.patch no longer applies to HEAD" >&2
	exit 1
}
autoreconf -fi >autoreconf.log 2>&1

# name, then CPPFLAGS
builds='every|
plain|-DCHECK_COST_PLAIN_LINKS
nocount|-DCHECK_COST_PLAIN_LINKS -DCHECK_COST_NO_COUNTERS
none|-DCHECK_COST_PLAIN_LINKS -DCHECK_COST_NO_COUNTERS -DCHECK_COST_NO_STATE
byte|-DCHECK_COST_BYTE_STATE'

build() { # name cppflags [targets...]
	name=$1 flags=$2
	shift 2
	mkdir -p "b-$name"
	(cd "b-$name" &&
		{ [ -f Makefile ] || ../configure CPPFLAGS="$flags" >configure.log 2>&1; } &&
		make -j2 "$@" >make.log 2>&1) || {
		echo "$0: build $name failed:" >&2
		tail -n 20 "b-$name/configure.log" "b-$name/make.log" >&2
		exit 1
	}
}

count() { # program mode: instructions of one pair with its loop
	c() { # valgrind exits with the program's status, which says
		# whether the pool served every pair; a build without counters
		# cannot tell (pair-cost reads them)
		SHIFTPOOL_DEBUG=no-valgrind valgrind --tool=callgrind \
			--callgrind-out-file=/dev/null "$1" "$2" "$3" \
			>callgrind.log 2>&1 || [ "$counters" = no ] ||
			{ cat callgrind.log >&2; return 1; }
		sed -n 's/.*Collected : //p' callgrind.log
	}
	a=$(c "$1" "$2" 100000) && b=$(c "$1" "$2" 200000) &&
		[ -n "$a" ] && [ -n "$b" ] ||
		{ echo "$0: $1 $2 failed" >&2; exit 1; }
	echo $(((b - a) / 100000))
}

printf '%-8s %-68s %7s %10s %7s %7s %12s\n' build CPPFLAGS single per-thread \
	locked inline inline-thread
echo "$builds" | while IFS='|' read -r name flags; do
	build "$name" "$flags" src/libshiftpool.la bench/pair-cost \
		bench/pair-cost-inline
	case $flags in
	*NO_COUNTERS*) counters=no ;;
	*) counters=yes ;;
	esac
	# (assignments, so that a count that fails stops the script)
	single=$(count "b-$name/bench/pair-cost" single)
	thread=$(count "b-$name/bench/pair-cost" per-thread)
	locked=$(count "b-$name/bench/pair-cost" locked)
	inline=$(count "b-$name/bench/pair-cost-inline" single)
	inline_thread=$(count "b-$name/bench/pair-cost-inline" per-thread)
	printf '%-8s %-68s %7s %10s %7s %7s %12s\n' "$name" "${flags:--}" \
		"$single" "$thread" "$locked" "$inline" "$inline_thread"
done
echo "(instructions of one pair with its loop; byte: single and locked only;"
echo " the builds without counters cannot check that the pool served every pair)"

[ "$rounds" -gt 0 ] || exit 0
build every '' all
build none '-DCHECK_COST_PLAIN_LINKS -DCHECK_COST_NO_COUNTERS -DCHECK_COST_NO_STATE' all
python3 - "$rounds" <<'PY'
import csv, io, statistics, subprocess, sys
rounds = int(sys.argv[1])
rows = ["pool-single", "pool-per-thread", "pool-single-inline",
        "pool-per-thread-inline"]
ratios = {}
for r in range(rounds):
    for build in ("every", "none"):
        out = subprocess.run(
            [f"b-{build}/bench/bench", "--workload=pair", "--sizes=64",
             "--threads=1", "--runs=3", "--csv",
             "--allocator=tcmalloc," + ",".join(rows) + ",floor"],
            capture_output=True, text=True, check=True).stdout
        over = {x["allocator"]: float(x["overhead_ns"])
                for x in csv.DictReader(io.StringIO(out))
                if x["status"] == "ok"}
        missing = [a for a in ["tcmalloc"] + rows if a not in over]
        if missing:
            sys.exit("check-cost: no result for " + ", ".join(missing))
        for row in rows:
            ratios.setdefault((build, row), []).append(
                over[row] / over["tcmalloc"])
print("pair 64 B, 1 thread: overhead / tcmalloc's, median of %d rounds"
      % rounds)
print("%-24s %12s %12s" % ("row", "every check", "no checks"))
for row in rows:
    print("%-24s %12.2f %12.2f" % (row,
          statistics.median(ratios[("every", row)]),
          statistics.median(ratios[("none", row)])))
PY
