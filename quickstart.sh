#!/bin/sh
# shiftpool quick start: installs what a Debian machine lacks, builds, and
#   ./quickstart.sh test    runs the test suite: make check, the unit tests
#                           under Valgrind, make distcheck, make check under
#                           ASan+UBSan with the internal assertions and
#                           invariant checks on, the stress tests under
#                           TSan, each fuzz target for FUZZ_SECONDS
#                           (default 30), cppcheck and gcc -fanalyzer
#   ./quickstart.sh bench   runs the benchmark's default comparison
#   ./quickstart.sh package builds the Debian packages in a scratch copy,
#                           lints, installs, uses and removes them
#                           (tools/deb-check.sh)
#   ./quickstart.sh deps    only installs the packages
# Builds go to build/, build-asan/ and build-tsan/ beside this script.
set -eu

top=$(cd "$(dirname "$0")" && pwd)
jobs=$(nproc 2>/dev/null || echo 2)

packages="autoconf automake libtool pkg-config make gcc check
	libgoogle-perftools-dev libjemalloc-dev libmimalloc-dev
	gnuplot-nox valgrind libcurl4-openssl-dev lighttpd wrk curl python3
	clang libclang-rt-14-dev cppcheck mandoc cmake g++
	libglib2.0-dev libdpdk-dev libboost-dev
	libsqlite3-dev libevent-dev liblua5.4-dev"

install_deps() {
	missing=
	for p in $packages; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q 'install ok installed' || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	echo "quickstart: installing:$missing" >&2
	sudo=
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
		--no-install-recommends $missing >/dev/null
}

# configure_in DIR [configure options...]: a configured build tree.
configure_in() {
	dir=$1
	shift
	[ -x "$top/configure" ] || (cd "$top" && ./autogen.sh)
	mkdir -p "$top/$dir"
	cd "$top/$dir"
	"$top/configure" --quiet "$@"
}

run_tests() {
	configure_in build
	make -j"$jobs" check
	# The Check suite again, under Valgrind's memcheck, zero suppressions.
	make -j"$jobs" safety-valgrind-suite
	make -j"$jobs" distcheck
	# The sanitizers' build also asserts the free-list and span
	# invariants (configure --enable-debug), which no other run checks.
	configure_in build-asan --enable-sanitizers=address,undefined \
		--enable-debug
	make -j"$jobs" check
	configure_in build-tsan --enable-sanitizers=thread
	# ThreadSanitizer: the concurrency tests, at their full thread count,
	# and the reliability tests that race reports and thread exits.
	tsan_tests="tests/stress tests/aba"
	tsan_tests="$tsan_tests tests/safety-handler-switch tests/safety-stats-exit"
	make -j"$jobs" check TESTS="$tsan_tests"
	# The fuzz targets (libFuzzer is in libclang-rt-14-dev), each for a
	# bounded time from its seed corpus, then the static analyzers.
	cd "$top/build"
	make fuzz FUZZ_SECONDS="${FUZZ_SECONDS:-30}"
	make analyze-static
}

run_bench() {
	configure_in build
	make -j"$jobs" bench
}

case "${1:-}" in
deps) install_deps ;;
test) install_deps && run_tests ;;
bench) install_deps && run_bench ;;
# tools/deb-check.sh installs what packaging needs itself.
package) exec "$top/tools/deb-check.sh" ;;
*)
	echo "usage: $0 test|bench|package|deps" >&2
	exit 2
	;;
esac
