#!/bin/sh
# examples/curl-pool: downloads a generated 1 MiB body from bench/httpd (the
# benchmark's server) on loopback with libcurl over a shiftpool pool, a
# pool set and malloc, checks every byte, and checks from its report that
# libcurl freed every allocation and the pool has no block in use at the
# end; the set must have served every allocation, none from the fallback.
# Also a failing transfer (404) and repeated transfers on one handle, which
# must not leak either.
#
# Run by `make check`, which sets abs_top_builddir and abs_top_srcdir.
# SKIP (77) when configure did not find libcurl.
set -u

: "${abs_top_builddir:?set by make check}"
: "${abs_top_srcdir:?set by make check}"
. "$abs_top_srcdir/bench/tests/common.sh"

curl_pool=$abs_top_builddir/examples/curl-pool
client=$abs_top_builddir/bench/tests/httpd-client

if [ ! -x "$curl_pool" ]; then
	echo "curl-pool: not built: configure did not find libcurl (install" \
		"libcurl4-openssl-dev and re-run configure); skipped"
	exit 77
fi
require_built curl-pool "$httpd" "$client"
scratch_dir curl-pool

# clean_report NAME REPORT: every allocation freed, none unknown, and for
# the pool no block (nor fallback allocation) left.
clean_report() {
	ok=1
	report_balanced "$2" live && ok=0
	case $2 in
	*'"clean":true'*) ;;
	*) ok=1 ;;
	esac
	check "$1" $ok "allocations left over: $2"
}

if ! httpd_start curl --allocator=pool-locked --threads=1; then
	echo "curl-pool: bench/httpd did not start" >&2
	exit 99
fi
base=http://127.0.0.1:$HTTPD_PORT
size=1048576

for allocator in pool pool-set system; do
	body=$tmp/body-$allocator
	timeout 60 "$curl_pool" --allocator=$allocator --json \
		--output="$body" "$base/bytes/$size" >"$tmp/$allocator.json" \
		2>"$tmp/$allocator.err"
	status=$?
	report=$(cat "$tmp/$allocator.json")
	check "$allocator" $status "curl-pool exited with $status: $report
$(cat "$tmp/$allocator.err")"
	"$client" --check-file="$body" --size=$size >/dev/null 2>"$tmp/check.err"
	check "$allocator" $? "the body is wrong: $(cat "$tmp/check.err")"
	bytes=$(json_number bytes "$report")
	check "$allocator" "$([ "$bytes" = $size ]; echo $?)" \
		"$bytes bytes reported, $size expected"
	clean_report "$allocator" "$report"
	echo "$allocator: $(json_number allocations "$report") allocations," \
		"peak $(json_number peak_bytes "$report") bytes," \
		"pool served $(json_pool_number allocs "$report")," \
		"fallback $(json_pool_number fallback_allocs "$report")"
	echo "  $report"
done

# The pool must have served some of libcurl's allocations: else the
# example would show nothing.
served=$(json_pool_number allocs "$(cat "$tmp/pool.json")")
check pool "$([ "${served:-0}" -gt 0 ]; echo $?)" "the pool served nothing"

# The set must have served every one of libcurl's allocations, whatever
# its size, and made none from the fallback.
report=$(cat "$tmp/pool-set.json")
allocations=$(json_number allocations "$report")
served=0
for n in $(printf '%s\n' "$report" | sed -n 's/.*"sizes":\[\([^]]*\)\].*/\1/p' |
	tr '}' '\n' | sed -n 's/.*"pool":\([0-9][0-9]*\).*/\1/p'); do
	served=$((served + n))
done
check pool-set "$([ "${allocations:-0}" -gt 0 ] &&
	[ "$served" = "$allocations" ]; echo $?)" \
	"the set served $served of $allocations allocations: $report"
check pool-set "$([ "$(json_pool_number fallback_allocs "$report")" = 0 ] &&
	[ "$(json_pool_number allocs "$report")" -gt 0 ] &&
	[ "$(json_pool_number allocs "$report")" = \
		"$(json_pool_number frees "$report")" ]; echo $?)" \
	"the set fell back, or did not get every block back: $report"

# The set in per-thread mode over repeated transfers, in text.
timeout 60 "$curl_pool" --allocator=pool-set --pool-mode=per-thread \
	--repeat=5 "$base/bytes/100000" >"$tmp/set-repeat.txt" 2>&1
check set-repeat $? "curl-pool --allocator=pool-set --repeat=5 failed:
$(cat "$tmp/set-repeat.txt")"
grep -q '^  pool-set  *served [1-9][0-9]*, fallback 0;' "$tmp/set-repeat.txt"
check set-repeat $? "the set fell back: $(cat "$tmp/set-repeat.txt")"

# Repeated transfers on one handle, the per-thread mode, the text report.
timeout 60 "$curl_pool" --pool-mode=per-thread --repeat=5 \
	"$base/bytes/100000" >"$tmp/repeat.txt" 2>&1
check repeat $? "curl-pool --repeat=5 failed: $(cat "$tmp/repeat.txt")"
grep -q '^  leaks *none' "$tmp/repeat.txt"
check repeat $? "the text report shows a leak: $(cat "$tmp/repeat.txt")"

# A failed transfer (404) exits 1, and still frees everything.
timeout 60 "$curl_pool" --json "$base/missing" >"$tmp/missing.json" 2>&1
check missing "$([ $? -eq 1 ]; echo $?)" "a 404 did not exit 1"
report=$(cat "$tmp/missing.json")
case $report in
*'"ok":false'*) check missing 0 "" ;;
*) check missing 1 "a 404 was reported as a success: $report" ;;
esac
clean_report missing "$report"

# Bad options exit 2.
timeout 60 "$curl_pool" --allocator=nonesuch "$base/" >/dev/null 2>&1
check options "$([ $? -eq 2 ]; echo $?)" "a bad --allocator was accepted"

httpd_stop
check httpd "$HTTPD_STATUS" "httpd exited with $HTTPD_STATUS: $HTTPD_REPORT"

check_summary
