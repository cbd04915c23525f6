#!/bin/bash
# bench/mimalloc-bench.sh: the published allocator benchmarks of
# mimalloc-bench (https://github.com/daanx/mimalloc-bench), built unmodified
# from its public sources, run under LD_PRELOAD of each allocator: glibc
# (nothing preloaded), tcmalloc, jemalloc and mimalloc (their Debian
# libraries) and shiftpool's drop-in library, libshiftpool-malloc.so, in
# each of its modes (SHIFTPOOL_MALLOC=mode=per-thread, mode=locked,
# mode=single).  Rounds are interleaved: every round runs every case for
# every allocator, starting one allocator further along each round.  It
# writes a table of each case's median metric, its ratio to the best of
# the four general allocators, and the peak RSS (from /usr/bin/time -v).
#
# A run by hand: it downloads code, runs for many minutes and is never
# part of the build, of `make check` or of CI.  See bench/README.md.
#
#   bench/mimalloc-bench.sh                       # clone, build, 3 rounds (40 min)
#   bench/mimalloc-bench.sh --quick --rounds=1    # shorter runs, a look
#   bench/mimalloc-bench.sh --src=DIR --lib=build/src/.libs/libshiftpool-malloc.so
#
# Options (defaults in brackets):
#   --src=DIR         an existing mimalloc-bench tree (a clone or an export)
#                     [clone the repository into WORK/src]
#   --commit=REV      check REV out after cloning [the default branch]
#   --work=DIR        where the sources and the programs go
#                     [${TMPDIR:-/tmp}/shiftpool-mimalloc-bench]
#   --lib=PATH        libshiftpool-malloc.so [build/src/.libs/ beside bench/]
#   --allocators=LIST glibc,tcmalloc,jemalloc,mimalloc,shiftpool-per-thread,
#                     shiftpool-locked,shiftpool-single [all of them]; a
#                     shiftpool mode may carry more SHIFTPOOL_MALLOC
#                     settings after "+" signs: shiftpool-locked+min=64 is
#                     mode=locked,min=64
#   --cases=LIST      larson,xmalloc-test,cache-scratch,cache-thrash,mstress,
#                     alloc-test,glibc-simple,glibc-thread,rptest [all]
#   --threads=LIST    thread counts [1,2]
#   --rounds=N        interleaved rounds [3]
#   --quick           shorter runs (larson 1 s, xmalloc 1 s, fewer
#                     repetitions): a look, not a measurement
#   --out=FILE        the table [bench/results/mimalloc-bench-DATE.md];
#                     every run's line goes to FILE with .csv for .md
#
# The metric of a case is mimalloc-bench's own (its bench.sh): a time in
# seconds, lower is better.  larson and xmalloc-test print a relative time
# of their fixed-length run, rptest a count of memory operations (time =
# 2,000,000 / count), glibc-thread a count of iterations (time = 10^9 /
# count); the others are the wall time of the whole program.
#
# shiftpool-single is run only where the program has one thread using the
# allocator at a time (the cases of SINGLE_CASES at one thread): a
# POOL_SINGLE pool takes no concurrent calls.
#
# SPDX-License-Identifier: MIT

set -u
# One decimal point for every number read and written (EPOCHREALTIME,
# awk, sort).
export LC_ALL=C
if test "${BASH_VERSINFO[0]}" -lt 5; then
	echo "mimalloc-bench.sh: needs bash 5 or later (EPOCHREALTIME)" >&2
	exit 1
fi

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
repository=https://github.com/daanx/mimalloc-bench

src=
commit=
work=${TMPDIR:-/tmp}/shiftpool-mimalloc-bench
lib=$top/build/src/.libs/libshiftpool-malloc.so
allocators=glibc,tcmalloc,jemalloc,mimalloc,shiftpool-per-thread,shiftpool-locked,shiftpool-single
cases=larson,xmalloc-test,cache-scratch,cache-thrash,mstress,alloc-test,glibc-simple,glibc-thread,rptest
threads=1,2
rounds=3
quick=0
out=

# The cases where each thread of the program is done before the next
# starts, at one thread: POOL_SINGLE may serve them.
SINGLE_CASES=" cache-scratch cache-thrash mstress alloc-test glibc-simple glibc-thread "

usage() {
	sed -n '2,/^# SPDX/p' "$0" | sed '$d; s/^# \{0,1\}//'
}

for arg in "$@"; do
	case $arg in
	--src=*) src=${arg#*=} ;;
	--commit=*) commit=${arg#*=} ;;
	--work=*) work=${arg#*=} ;;
	--lib=*) lib=${arg#*=} ;;
	--allocators=*) allocators=${arg#*=} ;;
	--cases=*) cases=${arg#*=} ;;
	--threads=*) threads=${arg#*=} ;;
	--rounds=*) rounds=${arg#*=} ;;
	--quick) quick=1 ;;
	--out=*) out=${arg#*=} ;;
	--help | -h)
		usage
		exit 0
		;;
	*)
		echo "mimalloc-bench.sh: unknown argument '$arg' (see --help)" >&2
		exit 2
		;;
	esac
done
case $rounds in
'' | *[!0-9]* | 0)
	echo "mimalloc-bench.sh: --rounds takes a count above 0" >&2
	exit 2
	;;
esac
if test -z "$out"; then
	out=$here/results/mimalloc-bench-$(date -u +%Y-%m-%d).md
fi
csv=${out%.md}.csv
test "$csv" = "$out" && csv=$out.csv

die() {
	echo "mimalloc-bench.sh: $*" >&2
	exit 1
}

for tool in cc c++ git awk /usr/bin/time; do
	command -v "$tool" >/dev/null 2>&1 ||
		die "$tool is missing (Debian: apt-get install gcc g++ git gawk time)"
done

# ------------------------------------------------------------ sources

mkdir -p "$work" || die "cannot make $work"
if test -z "$src"; then
	src=$work/src
	if ! test -d "$src/bench"; then
		echo "cloning $repository into $src" >&2
		git clone --quiet "$repository" "$src" || die "git clone failed"
	fi
	if test -n "$commit"; then
		git -C "$src" checkout --quiet "$commit" ||
			die "cannot check out $commit"
	fi
fi
test -d "$src/bench/larson" || die "$src is not a mimalloc-bench tree"
revision=$(git -C "$src" rev-parse HEAD 2>/dev/null || echo "unknown (not a git checkout)")

# ------------------------------------------------------------ programs

# Each benchmark as mimalloc-bench's CMakeLists.txt builds it (Release:
# -O3 -DNDEBUG, warnings off), with plain compiler commands: its own build
# script also downloads and builds many allocators, which this does not
# need.
bin=$work/bin
mkdir -p "$bin"
log=$work/build.log
: >"$log"
b=$src/bench
flags=(-O3 -DNDEBUG -w)
build() { # name, compiler, arguments...
	local name=$1 compiler=$2
	shift 2
	echo "$compiler ${flags[*]} -o $bin/$name $*" >>"$log"
	"$compiler" "${flags[@]}" -o "$bin/$name" "$@" >>"$log" 2>&1 ||
		die "building $name failed; see $log"
}
echo "building the benchmarks into $bin" >&2
build larson c++ -DCPP=1 "$b/larson/larson.cpp" -lpthread
build xmalloc-test cc "$b/xmalloc-test/xmalloc-test.c" -lpthread
build cache-scratch c++ "$b/cache-scratch/cache-scratch.cpp" -lpthread
build cache-thrash c++ "$b/cache-thrash/cache-thrash.cpp" -lpthread
build mstress cc "$b/mstress/mstress.c" -lpthread
build alloc-test c++ -DBENCH=4 "$b/alloc-test/test_common.cpp" \
	"$b/alloc-test/allocator_tester.cpp" -lpthread
build glibc-simple cc "$b/glibc-bench/bench-malloc-simple.c" -lpthread
build glibc-thread cc "$b/glibc-bench/bench-malloc-thread.c" -lpthread
build rptest cc -I"$b/rptest" "$b/rptest/rptest.c" "$b/rptest/thread.c" \
	"$b/rptest/timer.c" -lpthread -lm

# ------------------------------------------------------------ allocators

# A library by its soname, as the dynamic linker finds it.
soname_path() {
	ldconfig -p 2>/dev/null | awk -v name="$1" '$1 == name { print $NF; exit }'
}

# preload[A]: the library to preload for allocator A ("" for glibc);
# setting[A]: SHIFTPOOL_MALLOC for the shiftpool rows; missing[A]: why A
# cannot run.
declare -A preload setting missing
preload[glibc]=
preload[tcmalloc]=$(soname_path libtcmalloc_minimal.so.4)
preload[jemalloc]=$(soname_path libjemalloc.so.2)
preload[mimalloc]=$(soname_path libmimalloc.so.2)
for a in tcmalloc jemalloc mimalloc; do
	test -n "${preload[$a]}" ||
		missing[$a]="not installed (Debian: libgoogle-perftools-dev, libjemalloc-dev, libmimalloc-dev)"
done
# Paths inside this tree are written relative to its top, so that a table
# says nothing of the machine it was made on but what it measured.
shown() {
	case $1 in
	"$top"/*) echo "${1#"$top"/}" ;;
	*) echo "$1" ;;
	esac
}
# The programs run elsewhere: a relative LD_PRELOAD would be ignored by
# the dynamic linker, and its rows would be glibc's.
case $lib in /*) ;; *) lib=$PWD/$lib ;; esac
# The library must really serve: a program run under it, with its
# statistics to a file, must show allocations served by the set.
if [ -f "$lib" ]; then
	check=$(mktemp)
	LD_PRELOAD=$lib SHIFTPOOL_MALLOC=stats=$check ls / >/dev/null
	if ! grep -q "allocs: [1-9]" "$check"; then
		echo "mimalloc-bench.sh: $lib served nothing under LD_PRELOAD" >&2
		cat "$check" >&2
		rm -f "$check"
		exit 1
	fi
	rm -f "$check"
fi
for mode in per-thread locked single; do
	preload[shiftpool-$mode]=$lib
	setting[shiftpool-$mode]=mode=$mode
	test -f "$lib" || missing[shiftpool-$mode]="not built: $(shown "$lib")"
done

IFS=, read -r -a allocator_list <<<"$allocators"
# shiftpool-MODE+KEY=VALUE...: that mode with more settings.
for a in "${allocator_list[@]}"; do
	case $a in
	shiftpool-*+*)
		base=${a%%+*}
		test -n "${setting[$base]+set}" || die "unknown allocator '$a'"
		preload[$a]=${preload[$base]}
		setting[$a]=${setting[$base]},${a#*+}
		setting[$a]=${setting[$a]//+/,}
		test -n "${missing[$base]:-}" && missing[$a]=${missing[$base]}
		;;
	esac
done
IFS=, read -r -a case_list <<<"$cases"
IFS=, read -r -a thread_list <<<"$threads"
for a in "${allocator_list[@]}"; do
	test -n "${preload[$a]+set}" || die "unknown allocator '$a'"
	test -n "${missing[$a]:-}" && echo "skipping $a: ${missing[$a]}" >&2
done

# ------------------------------------------------------------ cases

# The command of a case at T threads: mimalloc-bench's own arguments
# (bench.sh), with shorter runs under --quick.
command_of() { # case, threads
	local t=$2
	case $1 in
	larson)
		if test $quick = 1; then
			echo "larson 1 8 1000 5000 100 4141 $t"
		else
			echo "larson 5 8 1000 5000 100 4141 $t"
		fi
		;;
	xmalloc-test) echo "xmalloc-test -w $t -t $((quick ? 1 : 5)) -s 64" ;;
	cache-scratch) echo "cache-scratch $t 1000 1 $((quick ? 200000 : 2000000)) $t" ;;
	cache-thrash) echo "cache-thrash $t 1000 1 $((quick ? 200000 : 2000000)) $t" ;;
	mstress) echo "mstress $t 50 $((quick ? 5 : 25))" ;;
	alloc-test) echo "alloc-test $t" ;;
	glibc-simple) echo "glibc-simple" ;;
	glibc-thread) echo "glibc-thread $t" ;;
	rptest) echo "rptest $t 0 1 2 $((quick ? 100 : 500)) 1000 100 8 16000" ;;
	*) return 1 ;;
	esac
}

# The runs: every case at every thread count (glibc-simple has one
# thread), as "case threads" lines.
runs=()
for c in "${case_list[@]}"; do
	command_of "$c" 1 >/dev/null || die "unknown case '$c'"
	if test "$c" = glibc-simple; then
		runs+=("$c 1")
		continue
	fi
	for t in "${thread_list[@]}"; do
		runs+=("$c $t")
	done
done

applies() { # allocator, case, threads
	test -z "${missing[$1]:-}" || return 1
	case $1 in shiftpool-single | shiftpool-single+*) ;; *) return 0 ;; esac
	test "$3" = 1 && case $SINGLE_CASES in *" $2 "*) return 0 ;; esac
	return 1
}

# The case's metric from its output, in seconds (see the header).
metric_of() { # case, output file, elapsed seconds
	case $1 in
	larson) sed -n 's/.*relative time: \([0-9.]*\)s.*/\1/p' "$2" | tail -1 ;;
	xmalloc-test) sed -n 's/^rtime: \([0-9.]*\).*/\1/p' "$2" | tail -1 ;;
	rptest)
		sed -n 's/.*\.\.\.\([0-9]*\) memory ops.*/\1/p' "$2" | tail -1 |
			awk '$1 > 0 { printf "%.4f\n", 2000000 / $1 }'
		;;
	glibc-thread)
		sed -n 's/^\([0-9.]*\) iterations.*/\1/p' "$2" | tail -1 |
			awk '$1 > 0 { printf "%.4f\n", 1e9 / $1 }'
		;;
	*) echo "$3" ;;
	esac
}

# ------------------------------------------------------------ rounds

mkdir -p "$(dirname "$out")" || die "cannot make the directory of $out"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/mimalloc-bench-run.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$scratch"' EXIT INT TERM
echo "round,case,threads,allocator,status,metric_s,elapsed_s,maxrss_kib" >"$csv"
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
count=${#allocator_list[@]}
for ((r = 1; r <= rounds; r++)); do
	for run in "${runs[@]}"; do
		read -r c t <<<"$run"
		for ((k = 0; k < count; k++)); do
			a=${allocator_list[$(((k + r - 1) % count))]}
			applies "$a" "$c" "$t" || continue
			echo "round $r/$rounds: $c T=$t $a" >&2
			env=(env -u LD_PRELOAD -u SHIFTPOOL_MALLOC -u GLIBC_TUNABLES)
			test -n "${preload[$a]}" && env+=("LD_PRELOAD=${preload[$a]}")
			test -n "${setting[$a]:-}" && env+=("SHIFTPOOL_MALLOC=${setting[$a]}")
			read -r -a cmd <<<"$(command_of "$c" "$t")"
			# alloc-test and larson read nothing; every program runs
			# in the directory of the programs.
			# The wall time by bash's clock (microseconds): time -v
			# gives only hundredths, too coarse for the short cases.
			start=$EPOCHREALTIME
			(cd "$bin" && /usr/bin/time -v -o "$scratch/time" \
				"${env[@]}" "./${cmd[0]}" "${cmd[@]:1}" \
				>"$scratch/out" 2>&1 </dev/null)
			status=$?
			elapsed=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.4f\n", b - a }')
			rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$scratch/time")
			metric=$(metric_of "$c" "$scratch/out" "$elapsed")
			state=ok
			if test $status -ne 0 || test -z "$metric"; then
				state=failed
				metric=
				echo "  failed (status $status):" >&2
				tail -5 "$scratch/out" >&2
			fi
			echo "$r,$c,$t,$a,$state,$metric,$elapsed,${rss:-}" >>"$csv"
		done
	done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# ------------------------------------------------------------ table

model=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)
{
	echo "# mimalloc-bench under LD_PRELOAD: shiftpool's drop-in library beside the general allocators"
	echo
	echo "- date: $started; machine: ${model:-unknown}, $(nproc) CPUs online, $(uname -sr)"
	echo "- load average (1, 5, 15 min): $load_before before, $load_after after"
	echo "- mimalloc-bench: $repository at $revision, built with cc/c++ ${flags[*]} ($(cc --version | head -1))"
	args="$*"
	echo "- command: bench/mimalloc-bench.sh ${args//"$top"\//}"
	echo "- $rounds interleaved round(s); metric: mimalloc-bench's time in seconds (lower is better), median [min .. max] of the rounds"
	echo "- ratio: the row's median over the best median of glibc, tcmalloc, jemalloc and mimalloc in the case (below 1: faster than all four)"
	echo "- RSS: median of the rounds' peak resident set (/usr/bin/time -v), MiB; RSS ratio likewise over the best peer's"
	for a in "${allocator_list[@]}"; do
		if test -n "${missing[$a]:-}"; then
			echo "- $a: ${missing[$a]}"
		elif test -n "${preload[$a]}"; then
			echo "- $a: LD_PRELOAD=$(shown "${preload[$a]}")${setting[$a]:+ SHIFTPOOL_MALLOC=${setting[$a]}}"
		else
			echo "- $a: nothing preloaded"
		fi
	done
	echo
	awk -F, '
	function median(list, n,    v, i, j, t) {
		n = split(list, v, " ")
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) {
				t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
			}
		lo = v[1]; hi = v[n]
		return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
	}
	NR == 1 { next }
	{
		key = $2 " T=" $3
		if (!(key in seen)) { seen[key] = 1; order[++cases] = key }
		if (!((key, $4) in has)) {
			has[key, $4] = 1
			names[key] = names[key] " " $4
		}
		if ($5 == "ok") {
			metric[key, $4] = metric[key, $4] " " $6
			rss[key, $4] = rss[key, $4] " " $8
		} else {
			failed[key, $4]++
		}
	}
	END {
		print "| case | allocator | time s [min .. max] | x best peer | RSS MiB | RSS x best peer | failed |"
		print "| --- | --- | --- | --- | --- | --- | --- |"
		peers = "glibc tcmalloc jemalloc mimalloc"
		np = split(peers, peer, " ")
		for (i = 1; i <= cases; i++) {
			key = order[i]
			best = 0; best_rss = 0; best_name = "-"
			for (p = 1; p <= np; p++) {
				if (metric[key, peer[p]] == "") continue
				m = median(metric[key, peer[p]])
				if (best == 0 || m < best) { best = m; best_name = peer[p] }
				r = median(rss[key, peer[p]])
				if (best_rss == 0 || r < best_rss) best_rss = r
			}
			n = split(names[key], row, " ")
			for (j = 1; j <= n; j++) {
				a = row[j]
				if (metric[key, a] == "") {
					printf "| %s | %s | failed | - | - | - | %d |\n", key, a, failed[key, a] + 0
					continue
				}
				m = median(metric[key, a]); mlo = lo; mhi = hi
				r = median(rss[key, a])
				ratio = "-"; rss_ratio = "-"
				if (best > 0) ratio = sprintf("%.2f", m / best)
				if (best_rss > 0) rss_ratio = sprintf("%.2f", r / best_rss)
				printf "| %s | %s | %.4g [%.4g .. %.4g] | %s | %.1f | %s | %d |\n",
				    key, a, m, mlo, mhi, ratio, r / 1024, rss_ratio, failed[key, a] + 0
			}
			printf "| %s | best peer: %s | | | | | |\n", key, best_name
		}
	}' "$csv"
} >"$out"
echo "wrote $out and $csv" >&2
cat "$out"
