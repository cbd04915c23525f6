# examples/: shiftpool in two small programs to copy from, built by `make`,
# never installed.  Included by the top-level Makefile.am, so paths are
# relative to the top of the tree.  Each is one file that also builds on
# its own: cc FILE.c $(pkg-config --cflags --libs shiftpool).
#
#   examples/echo-server  a one-thread TCP echo server whose connections
#                         take their buffers from a POOL_SINGLE pool
#   examples/curl-pool    libcurl with shiftpool (a pool, or a pool set) as
#                         its allocator (curl_global_init_mem), counting
#                         what the seed posts counted; built when libcurl
#                         is found
#
# See examples/README.md.

EXTRA_DIST += examples/README.md
dist_noinst_SCRIPTS += examples/tests/echo-server.sh \
	examples/tests/curl-pool.sh

# ---------------------------------------------------------------- echo-server

noinst_PROGRAMS += examples/echo-server
examples_echo_server_SOURCES = examples/echo-server.c
examples_echo_server_LDFLAGS = $(AM_LDFLAGS) -no-install
examples_echo_server_LDADD = src/libshiftpool.la
TESTS += examples/tests/echo-server.sh

# ---------------------------------------------------------------- curl-pool

if HAVE_LIBCURL
noinst_PROGRAMS += examples/curl-pool
endif
examples_curl_pool_SOURCES = examples/curl-pool.c
examples_curl_pool_CFLAGS = $(AM_CFLAGS) $(LIBCURL_CFLAGS)
examples_curl_pool_LDFLAGS = $(AM_LDFLAGS) -no-install
examples_curl_pool_LDADD = src/libshiftpool.la $(LIBCURL_LIBS)

# Always in TESTS: without libcurl it reports SKIP, never a silent pass.
# It downloads from bench/httpd and checks the body with the test client
# of bench/tests (see bench/local.mk).
TESTS += examples/tests/curl-pool.sh
