#!/bin/sh
# The benchmark's smoke test: a seconds-long run of every workload with
# every allocator.  Fails when bench fails, when a row failed, or when a
# row's allocation function was served by another shared object than the
# one its allocator names (a published measurement's "normal calloc" rows
# were served by tcmalloc).  bench checks this itself; this script checks its CSV again,
# independently.
#
# SPDX-License-Identifier: MIT

set -u

bench=${abs_top_builddir:-.}/bench/bench
csv=${TMPDIR:-/tmp}/shiftpool-smoke.$$.csv
csv2=${TMPDIR:-/tmp}/shiftpool-smoke-ext.$$.csv
csv3=${TMPDIR:-/tmp}/shiftpool-smoke-new.$$.csv
csv4=${TMPDIR:-/tmp}/shiftpool-smoke-footprint.$$.csv
plots=${TMPDIR:-/tmp}/shiftpool-smoke-plots.$$
trap 'rm -rf "$csv" "$csv2" "$csv3" "$csv4" "$plots"' EXIT INT TERM

if ! test -x "$bench"; then
	echo "smoke: $bench is not built" >&2
	exit 99
fi

"$bench" --quick --csv >"$csv"
status=$?
cat "$csv"
if test $status -ne 0; then
	echo "smoke: bench exited with status $status" >&2
	exit 1
fi

# The inline rows where the build has the inline fast paths.
inline_rows=
if test -x "${abs_top_builddir:-.}/bench/bench-pool-inline"; then
	inline_rows="pool-single-inline pool-per-thread-inline"
fi

# Columns: 1 workload, 2 case, 3 allocator, 4 status, 5 message,
# 20 source, 22 free_source.  The fields checked hold no comma.
awk -F, -v inline_rows="$inline_rows" '
function fail(why) {
	printf "smoke: %s %s %s: %s\n", $1, $2, $3, why > "/dev/stderr"
	bad = 1
}
NR == 1 {
	if ($3 != "allocator" || $4 != "status" || $20 != "source")
		fail("unexpected CSV header")
	next
}
{
	rows++
	if ($4 == "not built" || $4 == "n/a" || $4 == "not run")
		next
	if ($4 != "ok") { fail("status " $4); next }
	seen[$3] = 1
	want = ""
	if ($3 ~ /^glibc/) want = "^libc[.-]"
	else if ($3 == "tcmalloc") want = "^libtcmalloc"
	else if ($3 == "jemalloc") want = "^libjemalloc"
	else if ($3 == "mimalloc") want = "^libmimalloc"
	else if ($3 == "gslice") want = "^libglib-2\\.0"
	else if ($3 == "dpdk") want = "^bench-dpdk$"
	else if ($3 == "boost-pool") want = "^bench-boost$"
	else if ($3 ~ /^pool-.*-inline$/) want = "^bench-pool-inline$"
	else if ($3 ~ /^pool-/) want = "^(libshiftpool|bench-pool$)"
	else want = "^none$"
	if ($20 !~ want) fail("served by " $20)
	if ($22 != $20) fail("freed by " $22 ", allocated by " $20)
}
END {
	if (rows == 0) { print "smoke: no rows" > "/dev/stderr"; exit 1 }
	n = split("glibc glibc-notrim pool-single pool-locked pool-per-thread pool-set-single pool-set-locked pool-set-per-thread floor " inline_rows, need, " ")
	for (i = 1; i <= n; i++)
		if (!(need[i] in seen)) {
			print "smoke: no row of " need[i] > "/dev/stderr"
			bad = 1
		}
	exit bad
}' "$csv" || exit 1

# mixed: every pool set row served every request from its classes (no
# fallback), and reports what their rounding up to 2^k cost: between
# nothing and twice the bytes asked for.  Columns found by name.
awk -F, '
NR == 1 {
	for (i = 1; i <= NF; i++)
		col[$i] = i
	if (!("mixed_rounding" in col) || !("fallback_allocs" in col)) {
		print "smoke: no mixed_rounding column" > "/dev/stderr"
		exit 1
	}
	next
}
$1 == "mixed" && $3 ~ /^pool-set-/ {
	sets++
	r = $(col["mixed_rounding"])
	if ($(col["fallback_allocs"]) != 0 || $(col["pool_allocs"]) == 0 ||
	    r == "" || r < 1 || r > 2) {
		printf "smoke: mixed %s %s: pool %s, fallback %s, rounding %s\n",
		    $2, $3, $(col["pool_allocs"]), $(col["fallback_allocs"]),
		    r > "/dev/stderr"
		bad = 1
	}
}
END {
	if (sets == 0) { print "smoke: no pool set rows in mixed" > "/dev/stderr"; exit 1 }
	exit bad
}' "$csv" || exit 1

# The external workloads, about 3 s: one run of httpd under wrk for 1 s
# and one 256 MiB download with curl-pool, for glibc and a pool.  Rows
# whose programs are missing (wrk, lighttpd, libcurl) say "not run" and
# pass.
"$bench" --workload=http,curl --allocator=glibc,pool-locked --runs=1 \
	--warmup=0 --duration=1 --csv >"$csv2"
status=$?
cat "$csv2"
if test $status -ne 0; then
	echo "smoke: bench --workload=http,curl exited with status $status" >&2
	exit 1
fi
awk -F, '
function fail(why) {
	printf "smoke: %s %s %s: %s\n", $1, $2, $3, why > "/dev/stderr"
	bad = 1
}
NR == 1 { next }
{
	rows++
	if ($4 == "not run") next
	if ($4 != "ok") { fail("status " $4); next }
	# In a sanitized build httpd is sanitized too, and the sanitizer
	# runtime interposes malloc: it then serves the glibc row.
	if ($1 == "http" && $3 == "glibc" && $20 !~ /^lib(c[.-]|asan|tsan)/)
		fail("served by " $20)
	if ($1 == "http" && $3 ~ /^pool-/ && $20 !~ /^libshiftpool/)
		fail("served by " $20)
}
END {
	if (rows != 4) { print "smoke: expected 4 external rows" > "/dev/stderr"; exit 1 }
	exit bad
}' "$csv2"

# The newer options, each in a seconds-long form: --cold, --latency on
# the workloads that time each call, pair and glibc-notrim, with the
# charts when gnuplot is there.  Checked by column name: every row ran;
# each has its page faults; held, lighttpd and xthread rows have latency
# percentiles in order and calls counted on both sides; pair rows but the
# floor's have an overhead; glibc-notrim runs with its tunables and
# nothing else does; every row is cold.
plot_flag=
gnuplot=$(sed -n 's/^GNUPLOT *= *//p' "${abs_top_builddir:-.}/Makefile" 2>/dev/null)
if test -n "${GNUPLOT:-$gnuplot}"; then
	plot_flag=--plot=$plots
fi
"$bench" --quick --cold --latency --workload=held,lighttpd,xthread,pair \
	--allocator=glibc,glibc-notrim,pool-single,pool-per-thread,floor \
	--n=50 --threads=1 --sizes=64 --csv $plot_flag >"$csv3"
status=$?
cat "$csv3"
if test $status -ne 0; then
	echo "smoke: bench --cold --latency exited with status $status" >&2
	exit 1
fi
awk '
# The fields of a CSV line into f[1..n], quotes honoured (the command
# holds commas); returns n.
function split_csv(line, f,    n, i, c, field, quoted) {
	n = 0
	field = ""
	quoted = 0
	for (i = 1; i <= length(line); i++) {
		c = substr(line, i, 1)
		if (quoted && c == "\"" && substr(line, i + 1, 1) == "\"") {
			field = field c
			i++
		} else if (c == "\"") {
			quoted = !quoted
		} else if (c == "," && !quoted) {
			f[++n] = field
			field = ""
		} else {
			field = field c
		}
	}
	f[++n] = field
	return n
}
function fail(why) {
	printf "smoke: %s %s %s: %s\n", f[1], f[2], f[3], why > "/dev/stderr"
	bad = 1
}
function v(name) { return f[col[name]] }
NR == 1 { n = split_csv($0, f); for (i = 1; i <= n; i++) col[f[i]] = i; next }
{
	split_csv($0, f)
	rows++
	if (v("status") == "n/a") next
	if (v("status") != "ok") { fail("status " v("status")); next }
	if (v("minor_faults") !~ /^[0-9]+$/) fail("no page faults")
	if (v("cold") != 1) fail("not cold")
	timed = f[1] == "held" || f[1] == "lighttpd" || f[1] == "xthread"
	for (s = 0; timed && s < 2; s++) {
		side = s ? "free" : "alloc"
		if (v(side "_calls") + 0 <= 0) fail("no " side " calls timed")
		split("p50 p99 p999 p9999 max", p, " ")
		for (k = 2; k <= 5; k++)
			if (v(side "_" p[k] "_ns") + 0 < v(side "_" p[k - 1] "_ns") + 0)
				fail(side " " p[k] " below " p[k - 1])
	}
	if (!timed && v("alloc_calls") != "") fail("latency where none was timed")
	if (f[1] == "pair" && f[3] != "floor" && v("overhead_ns") == "")
		fail("no overhead")
	tunables = v("command") ~ /^GLIBC_TUNABLES=glibc\.malloc\.trim_threshold=/
	if ((f[3] == "glibc-notrim") != tunables) fail("command " v("command"))
	seen[f[1]] = 1
}
END {
	if (rows == 0) { print "smoke: no rows" > "/dev/stderr"; exit 1 }
	n = split("held lighttpd xthread pair", need, " ")
	for (i = 1; i <= n; i++)
		if (!(need[i] in seen)) {
			print "smoke: no row of " need[i] > "/dev/stderr"
			bad = 1
		}
	exit bad
}' "$csv3" || exit 1
if test -n "$plot_flag"; then
	for chart in pair latency-held-N-50 latency-lighttpd-fixed-order \
		latency-xthread-1+1; do
		if ! test -s "$plots/$chart.png"; then
			echo "smoke: --plot wrote no $chart.png" >&2
			exit 1
		fi
	done
	# The same charts again, drawn from the CSV alone.
	rm -rf "$plots"
	if ! "$bench" --plot="$plots" --plot-from="$csv3"; then
		echo "smoke: bench --plot-from failed" >&2
		exit 1
	fi
	for chart in pair held latency-held-N-50 latency-xthread-1+1; do
		if ! test -s "$plots/$chart.png"; then
			echo "smoke: --plot-from wrote no $chart.png" >&2
			exit 1
		fi
	done
fi

# footprint: every row has its overhead; the floor's blocks are a fresh
# mapping, so its RSS grows by their bytes exactly (within a page or two
# of the harness's); glibc's 16-byte requests take 32-byte chunks, 100%.
"$bench" --quick --workload=footprint --allocator=glibc,pool-single,floor \
	--sizes=16 --blocks=65536 --csv >"$csv4"
status=$?
cat "$csv4"
if test $status -ne 0; then
	echo "smoke: bench --workload=footprint exited with status $status" >&2
	exit 1
fi
awk -F, '
function fail(why) {
	printf "smoke: %s %s %s: %s\n", $1, $2, $3, why > "/dev/stderr"
	bad = 1
}
NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
{
	rows++
	if ($4 != "ok") { fail("status " $4); next }
	pct = $(col["footprint_overhead_pct"])
	if (pct !~ /^-?[0-9.]+$/) { fail("no overhead: " pct); next }
	if ($3 == "floor" && (pct < -1 || pct > 1)) fail("floor overhead " pct "%")
	if ($3 == "glibc" && pct < 50) fail("glibc overhead " pct "%")
}
END {
	if (rows != 3) { print "smoke: expected 3 footprint rows" > "/dev/stderr"; exit 1 }
	exit bad
}' "$csv4" || exit 1
