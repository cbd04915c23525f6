#!/bin/sh
# bench/httpd under every allocator this build has: start it on a free
# loopback port, run the test client's scenarios (a few hundred requests:
# keep-alive and not, pipelined, malformed, oversized heads, clients that
# go away), fetch a few URLs with curl when it is installed, stop the
# server with SIGTERM and check from its report that every buffer went
# back to the allocator.
#
# Run by `make check`, which sets abs_top_builddir and abs_top_srcdir.
# HTTPD_TEST_ALLOCATORS overrides the list of allocators.
set -u

: "${abs_top_builddir:?set by make check}"
: "${abs_top_srcdir:?set by make check}"
. "$abs_top_srcdir/bench/tests/common.sh"

client=$abs_top_builddir/bench/tests/httpd-client
CURL=${CURL:-$(command -v curl 2>/dev/null || true)}

require_built httpd "$httpd" "$client"
scratch_dir httpd

# The three pool modes, the pool set and glibc always; the other
# allocators when their programs were built.
allocators=${HTTPD_TEST_ALLOCATORS:-"pool-single pool-locked pool-per-thread pool-set glibc"}
if [ -z "${HTTPD_TEST_ALLOCATORS:-}" ]; then
	for peer in tcmalloc jemalloc mimalloc; do
		[ -x "$abs_top_builddir/bench/httpd-$peer" ] &&
			allocators="$allocators $peer"
	done
fi

# curl_check NAME URL-PATH SIZE: curl fetches /bytes/SIZE, the client
# checks the bytes.
curl_check() {
	out=$tmp/curl-$1.body
	timeout 30 "$CURL" --silent --show-error --fail --max-time 20 \
		--output "$out" "http://127.0.0.1:$HTTPD_PORT$2" &&
		"$client" --check-file="$out" --size="$3" >/dev/null
}

for allocator in $allocators; do
	# pool-single: a pool per worker, so two workers test the routing of
	# frees back to the owner.
	if ! httpd_start "$allocator" --allocator="$allocator" --threads=2; then
		check "$allocator" 1 "the server did not start"
		continue
	fi

	timeout 120 "$client" --port="$HTTPD_PORT" \
		>"$tmp/client-$allocator.out" 2>&1
	status=$?
	check "$allocator" $status "httpd-client failed (status $status):
$(grep -v '^ok' "$tmp/client-$allocator.out")"

	if [ -n "$CURL" ]; then
		# curl as a second, independent client: two URLs on one
		# keep-alive connection, and one large body.
		curl_status=0
		curl_check small /bytes/1000 1000 || curl_status=1
		curl_check large /bytes/3000000 3000000 || curl_status=1
		timeout 30 "$CURL" --silent --fail --max-time 20 \
			--output /dev/null "http://127.0.0.1:$HTTPD_PORT/bytes/5" \
			--output /dev/null "http://127.0.0.1:$HTTPD_PORT/bytes/6" ||
			curl_status=1
		check "$allocator" $curl_status "curl could not fetch correct bodies"
	fi

	httpd_stop
	check "$allocator" "$HTTPD_STATUS" "httpd exited with status $HTTPD_STATUS:
$(cat "$HTTPD_ERR")"
	report=$HTTPD_REPORT
	requests=$(json_number requests "$report")
	leak=1
	report_balanced "$report" in_use && leak=0
	# A pool's report must have its "pool" section.
	case $allocator:$report in
	pool-*:*'"pool":{'*) ;;
	pool-*) leak=1 ;;
	esac
	check "$allocator" $leak "the report shows a leak: $report"
	case $report in
	*'"clean":true'*) check "$allocator" 0 "" ;;
	*) check "$allocator" 1 "the report is not clean: $report" ;;
	esac
	echo "$allocator: ${requests:-?} requests, ${allocs:-?} allocations," \
		"${frees:-?} frees; $(tail -n 2 "$tmp/client-$allocator.out" | head -n 1)"
	echo "  $report"
done

# A bad option is refused with status 2, before any socket is opened.
timeout 60 "$httpd" --threads=0 >/dev/null 2>&1
check options "$([ $? -eq 2 ]; echo $?)" "--threads=0 was not refused"
timeout 60 "$httpd" --allocator=nonesuch >/dev/null 2>&1
check options "$([ $? -eq 2 ]; echo $?)" "--allocator=nonesuch was not refused"

check_summary
