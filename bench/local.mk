# ./bench: the driver, bench/bench, and one worker program per allocator,
# each linked with that allocator only (see bench/peer.h).  The driver finds
# the workers next to itself.
#
#   make bench                      build, then run the default comparison
#   make bench BENCH_FLAGS='--quick --workload=held'
#   bench/bench --help

BENCH_COMMON_SOURCES = bench/bench.h bench/options.c bench/latency.h \
	bench/latency.c
BENCH_WORKER_SOURCES = $(BENCH_COMMON_SOURCES) bench/peer.h bench/peer.c \
	bench/workload.h bench/workloads.c bench/worker.c

# The workers of other allocators are built without sanitizers: a sanitizer
# interposes malloc and would serve the rows in their place.
BENCH_PEER_COMPILE_FLAGS = $(WARN_CFLAGS)
BENCH_PEER_LINK_FLAGS =

if SANITIZED
BENCH_SANITIZED_CPPFLAGS = -DBENCH_SANITIZED
else
BENCH_SANITIZED_CPPFLAGS =
endif

BENCH_WORKERS = bench/bench-glibc$(EXEEXT) bench/bench-floor$(EXEEXT) \
	bench/bench-pool$(EXEEXT)
noinst_PROGRAMS += bench/bench bench/bench-glibc bench/bench-floor \
	bench/bench-pool

# bench/region: the region options and pool_trim(), one measurement per
# process (bench/README.md).
noinst_PROGRAMS += bench/region
bench_region_SOURCES = bench/region.c bench/latency.h bench/latency.c
bench_region_LDADD = src/libshiftpool.la $(LIBM)

bench_bench_SOURCES = $(BENCH_COMMON_SOURCES) bench/driver.h \
	bench/driver.c bench/report.c bench/plot.c bench/http.c
bench_bench_CPPFLAGS = $(AM_CPPFLAGS) $(BENCH_SANITIZED_CPPFLAGS) \
	-DBENCH_GNUPLOT='"$(GNUPLOT)"' -DBENCH_WRK='"$(WRK)"' \
	-DBENCH_LIGHTTPD='"$(LIGHTTPD)"'
bench_bench_LDADD = $(LIBM)
EXTRA_bench_bench_DEPENDENCIES = $(BENCH_WORKERS)

bench_bench_glibc_SOURCES = $(BENCH_WORKER_SOURCES)
bench_bench_glibc_CPPFLAGS = $(AM_CPPFLAGS) -DBENCH_PEER_GLIBC
bench_bench_glibc_CFLAGS = $(BENCH_PEER_COMPILE_FLAGS)
bench_bench_glibc_LDFLAGS = $(BENCH_PEER_LINK_FLAGS)

bench_bench_floor_SOURCES = $(BENCH_WORKER_SOURCES)
bench_bench_floor_CPPFLAGS = $(AM_CPPFLAGS) -DBENCH_PEER_FLOOR
bench_bench_floor_CFLAGS = $(BENCH_PEER_COMPILE_FLAGS)
bench_bench_floor_LDFLAGS = $(BENCH_PEER_LINK_FLAGS)

# -no-install: a real program, not libtool's wrapper script, so that the
# driver runs (and measures the memory of) the worker itself.
bench_bench_pool_SOURCES = $(BENCH_WORKER_SOURCES)
bench_bench_pool_CPPFLAGS = $(AM_CPPFLAGS) -DBENCH_PEER_POOL
bench_bench_pool_LDFLAGS = $(AM_LDFLAGS) -no-install
bench_bench_pool_LDADD = src/libshiftpool.la

# The pool's rows through the header's inline fast paths (SHIFTPOOL_INLINE),
# where a program gets them.
if INLINE_PATHS
noinst_PROGRAMS += bench/bench-pool-inline
BENCH_WORKERS += bench/bench-pool-inline$(EXEEXT)
endif
bench_bench_pool_inline_SOURCES = $(BENCH_WORKER_SOURCES)
bench_bench_pool_inline_CPPFLAGS = $(AM_CPPFLAGS) -DBENCH_PEER_POOL \
	-DSHIFTPOOL_INLINE
bench_bench_pool_inline_LDFLAGS = $(AM_LDFLAGS) -no-install
bench_bench_pool_inline_LDADD = src/libshiftpool.la

if HAVE_TCMALLOC
noinst_PROGRAMS += bench/bench-tcmalloc
BENCH_WORKERS += bench/bench-tcmalloc$(EXEEXT)
endif
bench_bench_tcmalloc_SOURCES = $(BENCH_WORKER_SOURCES)
bench_bench_tcmalloc_CPPFLAGS = $(AM_CPPFLAGS) -DBENCH_PEER_TCMALLOC
bench_bench_tcmalloc_CFLAGS = $(BENCH_PEER_COMPILE_FLAGS)
bench_bench_tcmalloc_LDFLAGS = $(BENCH_PEER_LINK_FLAGS)
bench_bench_tcmalloc_LDADD = $(TCMALLOC_LIBS)

if HAVE_JEMALLOC
noinst_PROGRAMS += bench/bench-jemalloc
BENCH_WORKERS += bench/bench-jemalloc$(EXEEXT)
endif
bench_bench_jemalloc_SOURCES = $(BENCH_WORKER_SOURCES)
bench_bench_jemalloc_CPPFLAGS = $(AM_CPPFLAGS) -DBENCH_PEER_JEMALLOC
bench_bench_jemalloc_CFLAGS = $(BENCH_PEER_COMPILE_FLAGS)
bench_bench_jemalloc_LDFLAGS = $(BENCH_PEER_LINK_FLAGS)
bench_bench_jemalloc_LDADD = $(JEMALLOC_LIBS)

if HAVE_MIMALLOC
noinst_PROGRAMS += bench/bench-mimalloc
BENCH_WORKERS += bench/bench-mimalloc$(EXEEXT)
endif
bench_bench_mimalloc_SOURCES = $(BENCH_WORKER_SOURCES)
bench_bench_mimalloc_CPPFLAGS = $(AM_CPPFLAGS) -DBENCH_PEER_MIMALLOC
bench_bench_mimalloc_CFLAGS = $(BENCH_PEER_COMPILE_FLAGS)
bench_bench_mimalloc_LDFLAGS = $(BENCH_PEER_LINK_FLAGS)
bench_bench_mimalloc_LDADD = $(MIMALLOC_LIBS)

# ---------------------------------------------------------------- fixed-size pools

# The fixed-size pools a user would pick instead of shiftpool: GLib's
# GSlice, DPDK's rte_mempool and boost::pool<> (header-only C++).  Each is
# built only where its library is installed, and looked for here, with
# pkg-config and a test compile, not by configure: the bench must build
# without them, and their rows then say "not built" (the driver looks for
# the programs).  `make` builds them through all-local.
EXTRA_PROGRAMS = bench/bench-gslice bench/bench-dpdk bench/bench-boost
CLEANFILES += bench/bench-gslice$(EXEEXT) bench/bench-dpdk$(EXEEXT) \
	bench/bench-boost$(EXEEXT)

# Set by bench-optional-workers when it finds the library.
BENCH_GLIB_CFLAGS =
BENCH_GLIB_LIBS =
BENCH_DPDK_CFLAGS =
BENCH_DPDK_LIBS =

bench_bench_gslice_SOURCES = $(BENCH_WORKER_SOURCES)
bench_bench_gslice_CPPFLAGS = $(AM_CPPFLAGS) -DBENCH_PEER_GSLICE \
	$(BENCH_GLIB_CFLAGS)
bench_bench_gslice_CFLAGS = $(BENCH_PEER_COMPILE_FLAGS)
bench_bench_gslice_LDFLAGS = $(BENCH_PEER_LINK_FLAGS)
bench_bench_gslice_LDADD = $(BENCH_GLIB_LIBS)

# rte_thread_register() is still experimental in DPDK 22.11.
bench_bench_dpdk_SOURCES = $(BENCH_WORKER_SOURCES)
bench_bench_dpdk_CPPFLAGS = $(AM_CPPFLAGS) -DBENCH_PEER_DPDK \
	-DALLOW_EXPERIMENTAL_API $(BENCH_DPDK_CFLAGS)
bench_bench_dpdk_CFLAGS = $(BENCH_PEER_COMPILE_FLAGS)
bench_bench_dpdk_LDFLAGS = $(BENCH_PEER_LINK_FLAGS)
bench_bench_dpdk_LDADD = $(BENCH_DPDK_LIBS)

# The C workers call boost::pool<> through bench/peer-boost.cc, compiled
# with the C++ compiler make knows ($(CXX), else c++): configure looks for
# none, and the rest of the project is C.
bench_bench_boost_SOURCES = $(BENCH_WORKER_SOURCES) bench/peer-boost.h
bench_bench_boost_CPPFLAGS = $(AM_CPPFLAGS) -DBENCH_PEER_BOOST
bench_bench_boost_CFLAGS = $(BENCH_PEER_COMPILE_FLAGS)
bench_bench_boost_LDFLAGS = $(BENCH_PEER_LINK_FLAGS)
bench_bench_boost_LDADD = bench/peer-boost.$(OBJEXT) -lstdc++
EXTRA_DIST += bench/peer-boost.cc

bench/peer-boost.$(OBJEXT): $(srcdir)/bench/peer-boost.cc \
		$(srcdir)/bench/peer-boost.h
	$(AM_V_CC)cxx='$(CXX)'; $${cxx:-c++} -O2 -g -Wall -Wextra \
		$(CXXFLAGS) -c -o $@ $(srcdir)/bench/peer-boost.cc

.PHONY: bench-optional-workers
all-local: bench-optional-workers
bench-optional-workers:
	@if $(PKG_CONFIG) --exists glib-2.0 2>/dev/null; then \
	  $(MAKE) $(AM_MAKEFLAGS) bench/bench-gslice$(EXEEXT) \
	    BENCH_GLIB_CFLAGS="`$(PKG_CONFIG) --cflags glib-2.0`" \
	    BENCH_GLIB_LIBS="`$(PKG_CONFIG) --libs glib-2.0`" || exit 1; \
	else \
	  echo "bench: glib-2.0 not found: bench-gslice not built"; \
	fi
	@if $(PKG_CONFIG) --exists libdpdk 2>/dev/null; then \
	  $(MAKE) $(AM_MAKEFLAGS) bench/bench-dpdk$(EXEEXT) \
	    BENCH_DPDK_CFLAGS="`$(PKG_CONFIG) --cflags libdpdk`" \
	    BENCH_DPDK_LIBS="`$(PKG_CONFIG) --libs libdpdk`" || exit 1; \
	else \
	  echo "bench: libdpdk not found: bench-dpdk not built"; \
	fi
	@cxx='$(CXX)'; \
	if echo '#include <boost/pool/pool.hpp>' | \
	    $${cxx:-c++} -x c++ -fsyntax-only - >/dev/null 2>&1; then \
	  $(MAKE) $(AM_MAKEFLAGS) bench/bench-boost$(EXEEXT) || exit 1; \
	else \
	  echo "bench: no C++ compiler with boost/pool: bench-boost not built"; \
	fi

# ---------------------------------------------------------------- httpd

# bench/httpd, the server of the http workload: a threaded keep-alive
# HTTP/1.1 server on loopback whose buffers come from --allocator=NAME.
# The peers that replace malloc process-wide are programs of their own
# (httpd-tcmalloc, ...), which httpd runs for --allocator=tcmalloc etc.
BENCH_HTTPD_SOURCES = bench/httpd.c bench/httpd-proto.h bench/httpd-proto.c \
	bench/httpd-alloc.h bench/httpd-alloc.c bench/httpd-util.h \
	bench/httpd-util.c

noinst_PROGRAMS += bench/httpd
bench_httpd_SOURCES = $(BENCH_HTTPD_SOURCES)
bench_httpd_CPPFLAGS = $(AM_CPPFLAGS) -DHTTPD_PEER_DEFAULT
# -no-install: the program itself, not libtool's wrapper script, so that
# it finds its sibling programs next to /proc/self/exe.
bench_httpd_LDFLAGS = $(AM_LDFLAGS) -no-install
bench_httpd_LDADD = src/libshiftpool.la

if HAVE_TCMALLOC
noinst_PROGRAMS += bench/httpd-tcmalloc
endif
bench_httpd_tcmalloc_SOURCES = $(BENCH_HTTPD_SOURCES)
bench_httpd_tcmalloc_CPPFLAGS = $(AM_CPPFLAGS) -DHTTPD_PEER_TCMALLOC
bench_httpd_tcmalloc_CFLAGS = $(BENCH_PEER_COMPILE_FLAGS)
bench_httpd_tcmalloc_LDFLAGS = $(BENCH_PEER_LINK_FLAGS)
bench_httpd_tcmalloc_LDADD = $(TCMALLOC_LIBS)

if HAVE_JEMALLOC
noinst_PROGRAMS += bench/httpd-jemalloc
endif
bench_httpd_jemalloc_SOURCES = $(BENCH_HTTPD_SOURCES)
bench_httpd_jemalloc_CPPFLAGS = $(AM_CPPFLAGS) -DHTTPD_PEER_JEMALLOC
bench_httpd_jemalloc_CFLAGS = $(BENCH_PEER_COMPILE_FLAGS)
bench_httpd_jemalloc_LDFLAGS = $(BENCH_PEER_LINK_FLAGS)
bench_httpd_jemalloc_LDADD = $(JEMALLOC_LIBS)

if HAVE_MIMALLOC
noinst_PROGRAMS += bench/httpd-mimalloc
endif
bench_httpd_mimalloc_SOURCES = $(BENCH_HTTPD_SOURCES)
bench_httpd_mimalloc_CPPFLAGS = $(AM_CPPFLAGS) -DHTTPD_PEER_MIMALLOC
bench_httpd_mimalloc_CFLAGS = $(BENCH_PEER_COMPILE_FLAGS)
bench_httpd_mimalloc_LDFLAGS = $(BENCH_PEER_LINK_FLAGS)
bench_httpd_mimalloc_LDADD = $(MIMALLOC_LIBS)

# The parser's own test, and the server test with its client (which the
# curl-pool example's test also uses, with tests/common.sh).
check_PROGRAMS += bench/tests/http-parse bench/tests/httpd-client
TESTS += bench/tests/http-parse bench/tests/httpd.sh
EXTRA_DIST += bench/tests/common.sh
dist_noinst_SCRIPTS += bench/tests/httpd.sh
bench_tests_http_parse_SOURCES = bench/tests/http-parse.c \
	bench/httpd-proto.h bench/httpd-proto.c
bench_tests_httpd_client_SOURCES = bench/tests/httpd-client.c \
	bench/httpd-proto.h bench/httpd-proto.c bench/httpd-util.h \
	bench/httpd-util.c

# The shell tests may use curl(1) as a second client.
AM_TESTS_ENVIRONMENT += CURL='$(CURL)'; export CURL;

# ---------------------------------------------------------------- smoke

# The smoke test: a seconds-long run of every allocator that fails when a
# row fails or is served by another library than the one it names.
TESTS += bench/smoke.sh
dist_noinst_SCRIPTS += bench/smoke.sh
EXTRA_DIST += bench/README.md

# The published results (see bench/README.md): the whole directory.
EXTRA_DIST += bench/results

# A directory is named bench too, hence .PHONY.
.PHONY: bench
bench: bench/bench$(EXEEXT) bench-optional-workers
	bench/bench$(EXEEXT) $(BENCH_FLAGS)

# The performance targets: bench/targets.py runs the cases they name and
# says, target by target, what one run measured and whether it was met;
# bench/pair-cost is what it counts instructions of, under callgrind.
noinst_PROGRAMS += bench/pair-cost
bench_pair_cost_SOURCES = bench/pair-cost.c
bench_pair_cost_LDFLAGS = $(AM_LDFLAGS) -no-install
bench_pair_cost_LDADD = src/libshiftpool.la
if INLINE_PATHS
noinst_PROGRAMS += bench/pair-cost-inline
endif
bench_pair_cost_inline_SOURCES = bench/pair-cost.c
bench_pair_cost_inline_CPPFLAGS = $(AM_CPPFLAGS) -DSHIFTPOOL_INLINE
bench_pair_cost_inline_LDFLAGS = $(AM_LDFLAGS) -no-install
bench_pair_cost_inline_LDADD = src/libshiftpool.la
dist_noinst_SCRIPTS += bench/targets.py
TESTS += bench/targets-smoke.sh
dist_noinst_SCRIPTS += bench/targets-smoke.sh

.PHONY: bench-targets
bench-targets: bench/bench$(EXEEXT) bench/pair-cost$(EXEEXT)
	$(PYTHON3) $(srcdir)/bench/targets.py --bench=bench/bench$(EXEEXT) \
		--pair-cost=bench/pair-cost$(EXEEXT) $(TARGETS_FLAGS)
