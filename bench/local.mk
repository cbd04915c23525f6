# ./bench: the driver, bench/bench, and one worker program per allocator,
# each linked with that allocator only (see bench/peer/peer.h).  The driver finds
# the workers next to itself.
#
#   make bench                      build, then run the default comparison
#   make bench BENCH_FLAGS='--quick --workload=held'
#   bench/bench --help

BENCH_COMMON_SOURCES = %reldir%/bench.h %reldir%/options.c \
	%reldir%/cases.c %reldir%/cases-mt.c %reldir%/latency.h \
	%reldir%/latency.c
BENCH_WORKER_SOURCES = $(BENCH_COMMON_SOURCES) %reldir%/peer/peer.h \
	%reldir%/peer/peer.c %reldir%/workload.h %reldir%/harness.h \
	%reldir%/workloads.c %reldir%/workloads-mt.c %reldir%/worker.c

# The workers of other allocators are built without sanitizers: a sanitizer
# interposes malloc and would serve the rows in their place.
BENCH_PEER_COMPILE_FLAGS = $(WARN_CFLAGS)
BENCH_PEER_LINK_FLAGS =

if SANITIZED
BENCH_SANITIZED_CPPFLAGS = -DBENCH_SANITIZED
else
BENCH_SANITIZED_CPPFLAGS =
endif

BENCH_WORKERS = %reldir%/bench-glibc$(EXEEXT) %reldir%/bench-floor$(EXEEXT) \
	%reldir%/bench-pool$(EXEEXT)
noinst_PROGRAMS += %reldir%/bench %reldir%/bench-glibc %reldir%/bench-floor \
	%reldir%/bench-pool

# bench/region: the region options and pool_trim(), one measurement per
# process (bench/README.md).
noinst_PROGRAMS += %reldir%/region
%canon_reldir%_region_SOURCES = %reldir%/region.c %reldir%/latency.h \
	%reldir%/latency.c
%canon_reldir%_region_LDADD = src/libshiftpool.la $(LIBM)

# The driver (driver.c, run.c, collect.c), its external workloads (http/)
# and its outputs (report/).
%canon_reldir%_bench_SOURCES = $(BENCH_COMMON_SOURCES) %reldir%/driver.h \
	%reldir%/driver.c %reldir%/run.h %reldir%/run.c %reldir%/collect.h \
	%reldir%/collect.c %reldir%/http/http.h %reldir%/http/http.c \
	%reldir%/report/report.h %reldir%/report/describe.c \
	%reldir%/report/table.c %reldir%/report/fields.h \
	%reldir%/report/fields.c %reldir%/report/csv.c %reldir%/report/json.c \
	%reldir%/report/plot.c %reldir%/report/replot.c
%canon_reldir%_bench_CPPFLAGS = $(AM_CPPFLAGS) $(BENCH_SANITIZED_CPPFLAGS) \
	-DBENCH_GNUPLOT='"$(GNUPLOT)"' -DBENCH_WRK='"$(WRK)"' \
	-DBENCH_LIGHTTPD='"$(LIGHTTPD)"'
%canon_reldir%_bench_LDADD = $(LIBM)
EXTRA_%canon_reldir%_bench_DEPENDENCIES = $(BENCH_WORKERS)

%canon_reldir%_bench_glibc_SOURCES = $(BENCH_WORKER_SOURCES)
%canon_reldir%_bench_glibc_CPPFLAGS = $(AM_CPPFLAGS) -DBENCH_PEER_GLIBC
%canon_reldir%_bench_glibc_CFLAGS = $(BENCH_PEER_COMPILE_FLAGS)
%canon_reldir%_bench_glibc_LDFLAGS = $(BENCH_PEER_LINK_FLAGS)

%canon_reldir%_bench_floor_SOURCES = $(BENCH_WORKER_SOURCES)
%canon_reldir%_bench_floor_CPPFLAGS = $(AM_CPPFLAGS) -DBENCH_PEER_FLOOR
%canon_reldir%_bench_floor_CFLAGS = $(BENCH_PEER_COMPILE_FLAGS)
%canon_reldir%_bench_floor_LDFLAGS = $(BENCH_PEER_LINK_FLAGS)

# -no-install: a real program, not libtool's wrapper script, so that the
# driver runs (and measures the memory of) the worker itself.
%canon_reldir%_bench_pool_SOURCES = $(BENCH_WORKER_SOURCES)
%canon_reldir%_bench_pool_CPPFLAGS = $(AM_CPPFLAGS) -DBENCH_PEER_POOL
%canon_reldir%_bench_pool_LDFLAGS = $(AM_LDFLAGS) -no-install
%canon_reldir%_bench_pool_LDADD = src/libshiftpool.la

# The pool's rows through the header's inline fast paths (SHIFTPOOL_INLINE),
# where a program gets them.
if INLINE_PATHS
noinst_PROGRAMS += %reldir%/bench-pool-inline
BENCH_WORKERS += %reldir%/bench-pool-inline$(EXEEXT)
endif
%canon_reldir%_bench_pool_inline_SOURCES = $(BENCH_WORKER_SOURCES)
%canon_reldir%_bench_pool_inline_CPPFLAGS = $(AM_CPPFLAGS) -DBENCH_PEER_POOL \
	-DSHIFTPOOL_INLINE
%canon_reldir%_bench_pool_inline_LDFLAGS = $(AM_LDFLAGS) -no-install
%canon_reldir%_bench_pool_inline_LDADD = src/libshiftpool.la

if HAVE_TCMALLOC
noinst_PROGRAMS += %reldir%/bench-tcmalloc
BENCH_WORKERS += %reldir%/bench-tcmalloc$(EXEEXT)
endif
%canon_reldir%_bench_tcmalloc_SOURCES = $(BENCH_WORKER_SOURCES)
%canon_reldir%_bench_tcmalloc_CPPFLAGS = $(AM_CPPFLAGS) -DBENCH_PEER_TCMALLOC
%canon_reldir%_bench_tcmalloc_CFLAGS = $(BENCH_PEER_COMPILE_FLAGS)
%canon_reldir%_bench_tcmalloc_LDFLAGS = $(BENCH_PEER_LINK_FLAGS)
%canon_reldir%_bench_tcmalloc_LDADD = $(TCMALLOC_LIBS)

if HAVE_JEMALLOC
noinst_PROGRAMS += %reldir%/bench-jemalloc
BENCH_WORKERS += %reldir%/bench-jemalloc$(EXEEXT)
endif
%canon_reldir%_bench_jemalloc_SOURCES = $(BENCH_WORKER_SOURCES)
%canon_reldir%_bench_jemalloc_CPPFLAGS = $(AM_CPPFLAGS) -DBENCH_PEER_JEMALLOC
%canon_reldir%_bench_jemalloc_CFLAGS = $(BENCH_PEER_COMPILE_FLAGS)
%canon_reldir%_bench_jemalloc_LDFLAGS = $(BENCH_PEER_LINK_FLAGS)
%canon_reldir%_bench_jemalloc_LDADD = $(JEMALLOC_LIBS)

if HAVE_MIMALLOC
noinst_PROGRAMS += %reldir%/bench-mimalloc
BENCH_WORKERS += %reldir%/bench-mimalloc$(EXEEXT)
endif
%canon_reldir%_bench_mimalloc_SOURCES = $(BENCH_WORKER_SOURCES)
%canon_reldir%_bench_mimalloc_CPPFLAGS = $(AM_CPPFLAGS) -DBENCH_PEER_MIMALLOC
%canon_reldir%_bench_mimalloc_CFLAGS = $(BENCH_PEER_COMPILE_FLAGS)
%canon_reldir%_bench_mimalloc_LDFLAGS = $(BENCH_PEER_LINK_FLAGS)
%canon_reldir%_bench_mimalloc_LDADD = $(MIMALLOC_LIBS)

# ---------------------------------------------------------------- fixed-size pools

# The fixed-size pools a user would pick instead of shiftpool: GLib's
# GSlice, DPDK's rte_mempool and boost::pool<> (header-only C++).  Each is
# built only where its library is installed, and looked for here, with
# pkg-config and a test compile, not by configure: the bench must build
# without them, and their rows then say "not built" (the driver looks for
# the programs).  `make` builds them through all-local.
EXTRA_PROGRAMS = %reldir%/bench-gslice %reldir%/bench-dpdk %reldir%/bench-boost
CLEANFILES += %reldir%/bench-gslice$(EXEEXT) %reldir%/bench-dpdk$(EXEEXT) \
	%reldir%/bench-boost$(EXEEXT)

# Set by bench-optional-workers when it finds the library.
BENCH_GLIB_CFLAGS =
BENCH_GLIB_LIBS =
BENCH_DPDK_CFLAGS =
BENCH_DPDK_LIBS =

%canon_reldir%_bench_gslice_SOURCES = $(BENCH_WORKER_SOURCES)
%canon_reldir%_bench_gslice_CPPFLAGS = $(AM_CPPFLAGS) -DBENCH_PEER_GSLICE \
	$(BENCH_GLIB_CFLAGS)
%canon_reldir%_bench_gslice_CFLAGS = $(BENCH_PEER_COMPILE_FLAGS)
%canon_reldir%_bench_gslice_LDFLAGS = $(BENCH_PEER_LINK_FLAGS)
%canon_reldir%_bench_gslice_LDADD = $(BENCH_GLIB_LIBS)

# rte_thread_register() is still experimental in DPDK 22.11.
%canon_reldir%_bench_dpdk_SOURCES = $(BENCH_WORKER_SOURCES)
%canon_reldir%_bench_dpdk_CPPFLAGS = $(AM_CPPFLAGS) -DBENCH_PEER_DPDK \
	-DALLOW_EXPERIMENTAL_API $(BENCH_DPDK_CFLAGS)
%canon_reldir%_bench_dpdk_CFLAGS = $(BENCH_PEER_COMPILE_FLAGS)
%canon_reldir%_bench_dpdk_LDFLAGS = $(BENCH_PEER_LINK_FLAGS)
%canon_reldir%_bench_dpdk_LDADD = $(BENCH_DPDK_LIBS)

# The C workers call boost::pool<> through bench/peer/peer-boost.cc, compiled
# with the C++ compiler make knows ($(CXX), else c++): configure looks for
# none, and the rest of the project is C.
%canon_reldir%_bench_boost_SOURCES = $(BENCH_WORKER_SOURCES) \
	%reldir%/peer/peer-boost.h
%canon_reldir%_bench_boost_CPPFLAGS = $(AM_CPPFLAGS) -DBENCH_PEER_BOOST
%canon_reldir%_bench_boost_CFLAGS = $(BENCH_PEER_COMPILE_FLAGS)
%canon_reldir%_bench_boost_LDFLAGS = $(BENCH_PEER_LINK_FLAGS)
%canon_reldir%_bench_boost_LDADD = %reldir%/peer/peer-boost.$(OBJEXT) -lstdc++
EXTRA_DIST += %reldir%/peer/peer-boost.cc

%reldir%/peer/peer-boost.$(OBJEXT): $(srcdir)/%reldir%/peer/peer-boost.cc \
		$(srcdir)/%reldir%/peer/peer-boost.h
	@$(MKDIR_P) %reldir%/peer
	$(AM_V_CC)cxx='$(CXX)'; $${cxx:-c++} -O2 -g -Wall -Wextra \
		$(CXXFLAGS) -c -o $@ $(srcdir)/%reldir%/peer/peer-boost.cc

.PHONY: bench-optional-workers
all-local: bench-optional-workers
bench-optional-workers:
	@if $(PKG_CONFIG) --exists glib-2.0 2>/dev/null; then \
	  $(MAKE) $(AM_MAKEFLAGS) %reldir%/bench-gslice$(EXEEXT) \
	    BENCH_GLIB_CFLAGS="`$(PKG_CONFIG) --cflags glib-2.0`" \
	    BENCH_GLIB_LIBS="`$(PKG_CONFIG) --libs glib-2.0`" || exit 1; \
	else \
	  echo "bench: glib-2.0 not found: bench-gslice not built"; \
	fi
	@if $(PKG_CONFIG) --exists libdpdk 2>/dev/null; then \
	  $(MAKE) $(AM_MAKEFLAGS) %reldir%/bench-dpdk$(EXEEXT) \
	    BENCH_DPDK_CFLAGS="`$(PKG_CONFIG) --cflags libdpdk`" \
	    BENCH_DPDK_LIBS="`$(PKG_CONFIG) --libs libdpdk`" || exit 1; \
	else \
	  echo "bench: libdpdk not found: bench-dpdk not built"; \
	fi
	@cxx='$(CXX)'; \
	if echo '#include <boost/pool/pool.hpp>' | \
	    $${cxx:-c++} -x c++ -fsyntax-only - >/dev/null 2>&1; then \
	  $(MAKE) $(AM_MAKEFLAGS) %reldir%/bench-boost$(EXEEXT) || exit 1; \
	else \
	  echo "bench: no C++ compiler with boost/pool: bench-boost not built"; \
	fi

# ---------------------------------------------------------------- httpd

# bench/httpd, the server of the http workload: a threaded keep-alive
# HTTP/1.1 server on loopback whose buffers come from --allocator=NAME.
# The peers that replace malloc process-wide are programs of their own
# (httpd-tcmalloc, ...), which httpd runs for --allocator=tcmalloc etc.
BENCH_HTTPD_SOURCES = %reldir%/http/httpd.h %reldir%/http/httpd.c \
	%reldir%/http/httpd-conn.c %reldir%/http/httpd-writer.c \
	%reldir%/http/httpd-proto.h %reldir%/http/httpd-proto.c \
	%reldir%/http/httpd-alloc.h %reldir%/http/httpd-alloc.c \
	%reldir%/http/httpd-util.h %reldir%/http/httpd-util.c

noinst_PROGRAMS += %reldir%/httpd
%canon_reldir%_httpd_SOURCES = $(BENCH_HTTPD_SOURCES)
%canon_reldir%_httpd_CPPFLAGS = $(AM_CPPFLAGS) -DHTTPD_PEER_DEFAULT
# -no-install: the program itself, not libtool's wrapper script, so that
# it finds its sibling programs next to /proc/self/exe.
%canon_reldir%_httpd_LDFLAGS = $(AM_LDFLAGS) -no-install
%canon_reldir%_httpd_LDADD = src/libshiftpool.la

if HAVE_TCMALLOC
noinst_PROGRAMS += %reldir%/httpd-tcmalloc
endif
%canon_reldir%_httpd_tcmalloc_SOURCES = $(BENCH_HTTPD_SOURCES)
%canon_reldir%_httpd_tcmalloc_CPPFLAGS = $(AM_CPPFLAGS) -DHTTPD_PEER_TCMALLOC
%canon_reldir%_httpd_tcmalloc_CFLAGS = $(BENCH_PEER_COMPILE_FLAGS)
%canon_reldir%_httpd_tcmalloc_LDFLAGS = $(BENCH_PEER_LINK_FLAGS)
%canon_reldir%_httpd_tcmalloc_LDADD = $(TCMALLOC_LIBS)

if HAVE_JEMALLOC
noinst_PROGRAMS += %reldir%/httpd-jemalloc
endif
%canon_reldir%_httpd_jemalloc_SOURCES = $(BENCH_HTTPD_SOURCES)
%canon_reldir%_httpd_jemalloc_CPPFLAGS = $(AM_CPPFLAGS) -DHTTPD_PEER_JEMALLOC
%canon_reldir%_httpd_jemalloc_CFLAGS = $(BENCH_PEER_COMPILE_FLAGS)
%canon_reldir%_httpd_jemalloc_LDFLAGS = $(BENCH_PEER_LINK_FLAGS)
%canon_reldir%_httpd_jemalloc_LDADD = $(JEMALLOC_LIBS)

if HAVE_MIMALLOC
noinst_PROGRAMS += %reldir%/httpd-mimalloc
endif
%canon_reldir%_httpd_mimalloc_SOURCES = $(BENCH_HTTPD_SOURCES)
%canon_reldir%_httpd_mimalloc_CPPFLAGS = $(AM_CPPFLAGS) -DHTTPD_PEER_MIMALLOC
%canon_reldir%_httpd_mimalloc_CFLAGS = $(BENCH_PEER_COMPILE_FLAGS)
%canon_reldir%_httpd_mimalloc_LDFLAGS = $(BENCH_PEER_LINK_FLAGS)
%canon_reldir%_httpd_mimalloc_LDADD = $(MIMALLOC_LIBS)

# The parser's own test, and the server test with its client (which the
# curl-pool example's test also uses, with tests/common.sh).
check_PROGRAMS += %reldir%/tests/http-parse %reldir%/tests/httpd-client
TESTS += %reldir%/tests/http-parse %reldir%/tests/httpd.sh
EXTRA_DIST += %reldir%/tests/common.sh
dist_noinst_SCRIPTS += %reldir%/tests/httpd.sh
%canon_reldir%_tests_http_parse_SOURCES = %reldir%/tests/http-parse.c \
	%reldir%/http/httpd-proto.h %reldir%/http/httpd-proto.c
%canon_reldir%_tests_httpd_client_SOURCES = %reldir%/tests/httpd-client.c \
	%reldir%/http/httpd-proto.h %reldir%/http/httpd-proto.c \
	%reldir%/http/httpd-util.h %reldir%/http/httpd-util.c

# The shell tests may use curl(1) as a second client.
AM_TESTS_ENVIRONMENT += CURL='$(CURL)'; export CURL;

# ---------------------------------------------------------------- layers

# No two files of bench/ depend on each other in a loop (as for src/).
TESTS += %reldir%/tests/layers.sh
dist_noinst_SCRIPTS += %reldir%/tests/layers.sh

# ---------------------------------------------------------------- smoke

# The smoke test: a seconds-long run of every allocator that fails when a
# row fails or is served by another library than the one it names.
TESTS += %reldir%/smoke.sh
dist_noinst_SCRIPTS += %reldir%/smoke.sh
EXTRA_DIST += %reldir%/README.md

# The published results (see bench/README.md): the whole directory.
EXTRA_DIST += %reldir%/results

# A directory is named bench too, hence .PHONY.
.PHONY: bench
bench: %reldir%/bench$(EXEEXT) bench-optional-workers
	%reldir%/bench$(EXEEXT) $(BENCH_FLAGS)

# The performance targets: bench/targets.py runs the cases they name and
# says, target by target, what one run measured and whether it was met;
# bench/pair-cost is what it counts instructions of, under callgrind.
noinst_PROGRAMS += %reldir%/pair-cost
%canon_reldir%_pair_cost_SOURCES = %reldir%/pair-cost.c
%canon_reldir%_pair_cost_LDFLAGS = $(AM_LDFLAGS) -no-install
%canon_reldir%_pair_cost_LDADD = src/libshiftpool.la
if INLINE_PATHS
noinst_PROGRAMS += %reldir%/pair-cost-inline
BENCH_INLINE_PAIR_COST = %reldir%/pair-cost-inline$(EXEEXT)
endif
%canon_reldir%_pair_cost_inline_SOURCES = %reldir%/pair-cost.c
%canon_reldir%_pair_cost_inline_CPPFLAGS = $(AM_CPPFLAGS) -DSHIFTPOOL_INLINE
%canon_reldir%_pair_cost_inline_LDFLAGS = $(AM_LDFLAGS) -no-install
%canon_reldir%_pair_cost_inline_LDADD = src/libshiftpool.la
dist_noinst_SCRIPTS += %reldir%/targets.py
TESTS += %reldir%/targets-smoke.sh
dist_noinst_SCRIPTS += %reldir%/targets-smoke.sh
# Run by hand only (bench/README.md): it downloads and builds another
# project's benchmarks, so it is never a test.
dist_noinst_SCRIPTS += %reldir%/mimalloc-bench.sh

.PHONY: bench-targets
bench-targets: %reldir%/bench$(EXEEXT) %reldir%/pair-cost$(EXEEXT) \
		$(BENCH_INLINE_PAIR_COST)
	$(PYTHON3) $(srcdir)/%reldir%/targets.py \
		--bench=%reldir%/bench$(EXEEXT) \
		--pair-cost=%reldir%/pair-cost$(EXEEXT) \
		--pair-cost-inline=%reldir%/pair-cost-inline$(EXEEXT) \
		$(TARGETS_FLAGS)

# ---------------------------------------------------------------- replace

# bench/replace: each thread holds H live 64-byte blocks and replaces a
# random one per operation (bench/replace.c).  One program per malloc() it
# is linked with; the pool's modes run in bench/replace itself.
noinst_PROGRAMS += %reldir%/replace
%canon_reldir%_replace_SOURCES = %reldir%/replace.c
%canon_reldir%_replace_LDFLAGS = $(AM_LDFLAGS) -no-install
%canon_reldir%_replace_LDADD = src/libshiftpool.la
if HAVE_TCMALLOC
noinst_PROGRAMS += %reldir%/replace-tcmalloc
endif
%canon_reldir%_replace_tcmalloc_SOURCES = %reldir%/replace.c
%canon_reldir%_replace_tcmalloc_LDFLAGS = $(AM_LDFLAGS) -no-install
%canon_reldir%_replace_tcmalloc_LDADD = src/libshiftpool.la $(TCMALLOC_LIBS)
if HAVE_JEMALLOC
noinst_PROGRAMS += %reldir%/replace-jemalloc
endif
%canon_reldir%_replace_jemalloc_SOURCES = %reldir%/replace.c
%canon_reldir%_replace_jemalloc_LDFLAGS = $(AM_LDFLAGS) -no-install
%canon_reldir%_replace_jemalloc_LDADD = src/libshiftpool.la $(JEMALLOC_LIBS)
if HAVE_MIMALLOC
noinst_PROGRAMS += %reldir%/replace-mimalloc
endif
%canon_reldir%_replace_mimalloc_SOURCES = %reldir%/replace.c
%canon_reldir%_replace_mimalloc_LDFLAGS = $(AM_LDFLAGS) -no-install
%canon_reldir%_replace_mimalloc_LDADD = src/libshiftpool.la $(MIMALLOC_LIBS)
