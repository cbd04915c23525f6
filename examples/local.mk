# examples/: shiftpool in two small programs to copy from, built by `make`,
# never installed.  Included by the top-level Makefile.am: this directory
# is %reldir% (%canon_reldir% in names), other paths are from the top of
# the tree.  Each is one file that also builds on its own:
# cc FILE.c $(pkg-config --cflags --libs shiftpool).
#
#   examples/echo-server  a one-thread TCP echo server whose connections
#                         take their buffers from a POOL_SINGLE pool
#   examples/curl-pool    libcurl with shiftpool (a pool, or a pool set) as
#                         its allocator (curl_global_init_mem), counting
#                         what the seed posts counted; built when libcurl
#                         is found
#
# See examples/README.md.

EXTRA_DIST += %reldir%/README.md
dist_noinst_SCRIPTS += %reldir%/tests/echo-server.sh \
	%reldir%/tests/curl-pool.sh

# ---------------------------------------------------------------- echo-server

noinst_PROGRAMS += %reldir%/echo-server
%canon_reldir%_echo_server_SOURCES = %reldir%/echo-server.c
%canon_reldir%_echo_server_LDFLAGS = $(AM_LDFLAGS) -no-install
%canon_reldir%_echo_server_LDADD = src/libshiftpool.la
TESTS += %reldir%/tests/echo-server.sh

# ---------------------------------------------------------------- curl-pool

if HAVE_LIBCURL
noinst_PROGRAMS += %reldir%/curl-pool
endif
%canon_reldir%_curl_pool_SOURCES = %reldir%/curl-pool.c
%canon_reldir%_curl_pool_CFLAGS = $(AM_CFLAGS) $(LIBCURL_CFLAGS)
%canon_reldir%_curl_pool_LDFLAGS = $(AM_LDFLAGS) -no-install
%canon_reldir%_curl_pool_LDADD = src/libshiftpool.la $(LIBCURL_LIBS)

# Always in TESTS: without libcurl it reports SKIP, never a silent pass.
# It downloads from bench/httpd and checks the body with the test client
# of bench/tests (see bench/local.mk).
TESTS += %reldir%/tests/curl-pool.sh
