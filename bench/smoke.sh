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
trap 'rm -f "$csv" "$csv2"' EXIT INT TERM

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

# Columns: 1 workload, 2 case, 3 allocator, 4 status, 5 message,
# 20 source, 22 free_source.  The fields checked hold no comma.
awk -F, '
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
	if ($3 == "glibc") want = "^libc[.-]"
	else if ($3 == "tcmalloc") want = "^libtcmalloc"
	else if ($3 == "jemalloc") want = "^libjemalloc"
	else if ($3 == "mimalloc") want = "^libmimalloc"
	else if ($3 ~ /^pool-/) want = "^(libshiftpool|bench-pool$)"
	else want = "^none$"
	if ($20 !~ want) fail("served by " $20)
	if ($22 != $20) fail("freed by " $22 ", allocated by " $20)
}
END {
	if (rows == 0) { print "smoke: no rows" > "/dev/stderr"; exit 1 }
	n = split("glibc pool-single pool-locked pool-per-thread floor", need, " ")
	for (i = 1; i <= n; i++)
		if (!(need[i] in seen)) {
			print "smoke: no row of " need[i] > "/dev/stderr"
			bad = 1
		}
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
