# examples/: shiftpool in two real programs, built by `make`, never
# installed.  Included by the top-level Makefile.am, so paths are relative
# to the top of the tree.
#
#   examples/httpd        a threaded keep-alive HTTP/1.1 server on loopback
#                         whose buffers come from --allocator=NAME; the
#                         peers that replace malloc process-wide are
#                         programs of their own (httpd-tcmalloc, ...),
#                         which httpd runs for --allocator=tcmalloc etc.
#   examples/curl-pool    libcurl with shiftpool as its allocator
#                         (curl_global_init_mem), counting what the seed
#                         posts counted; built when libcurl is found
#
# See examples/README.md.

EXTRA_DIST += examples/README.md examples/tests/common.sh
dist_noinst_SCRIPTS += examples/tests/httpd.sh examples/tests/curl-pool.sh

# The shell tests may use curl(1) as a second client.
AM_TESTS_ENVIRONMENT += CURL='$(CURL)'; export CURL;

# ---------------------------------------------------------------- httpd

# What the programs share: option parsing (util), the HTTP they speak (http).
EXAMPLES_UTIL_SOURCES = examples/util.h examples/util.c

EXAMPLES_HTTPD_SOURCES = examples/httpd.c examples/http.h examples/http.c \
	examples/httpd-alloc.h examples/httpd-alloc.c $(EXAMPLES_UTIL_SOURCES)

noinst_PROGRAMS += examples/httpd
examples_httpd_SOURCES = $(EXAMPLES_HTTPD_SOURCES)
examples_httpd_CPPFLAGS = $(AM_CPPFLAGS) -DHTTPD_PEER_DEFAULT
# -no-install: the program itself, not libtool's wrapper script, so that
# it finds its sibling programs next to /proc/self/exe.
examples_httpd_LDFLAGS = $(AM_LDFLAGS) -no-install
examples_httpd_LDADD = src/libshiftpool.la

# The peers link their allocator and nothing else, and are built without
# sanitizers: a sanitizer interposes malloc and would serve in their place.
EXAMPLES_PEER_CFLAGS = $(WARN_CFLAGS)

if HAVE_TCMALLOC
noinst_PROGRAMS += examples/httpd-tcmalloc
endif
examples_httpd_tcmalloc_SOURCES = $(EXAMPLES_HTTPD_SOURCES)
examples_httpd_tcmalloc_CPPFLAGS = $(AM_CPPFLAGS) -DHTTPD_PEER_TCMALLOC
examples_httpd_tcmalloc_CFLAGS = $(EXAMPLES_PEER_CFLAGS)
examples_httpd_tcmalloc_LDFLAGS =
examples_httpd_tcmalloc_LDADD = $(TCMALLOC_LIBS)

if HAVE_JEMALLOC
noinst_PROGRAMS += examples/httpd-jemalloc
endif
examples_httpd_jemalloc_SOURCES = $(EXAMPLES_HTTPD_SOURCES)
examples_httpd_jemalloc_CPPFLAGS = $(AM_CPPFLAGS) -DHTTPD_PEER_JEMALLOC
examples_httpd_jemalloc_CFLAGS = $(EXAMPLES_PEER_CFLAGS)
examples_httpd_jemalloc_LDFLAGS =
examples_httpd_jemalloc_LDADD = $(JEMALLOC_LIBS)

if HAVE_MIMALLOC
noinst_PROGRAMS += examples/httpd-mimalloc
endif
examples_httpd_mimalloc_SOURCES = $(EXAMPLES_HTTPD_SOURCES)
examples_httpd_mimalloc_CPPFLAGS = $(AM_CPPFLAGS) -DHTTPD_PEER_MIMALLOC
examples_httpd_mimalloc_CFLAGS = $(EXAMPLES_PEER_CFLAGS)
examples_httpd_mimalloc_LDFLAGS =
examples_httpd_mimalloc_LDADD = $(MIMALLOC_LIBS)

# The parser's own test, and the client that drives the server test.
check_PROGRAMS += examples/tests/http-parse examples/tests/httpd-client
TESTS += examples/tests/http-parse examples/tests/httpd.sh

examples_tests_http_parse_SOURCES = examples/tests/http-parse.c \
	examples/http.h examples/http.c
examples_tests_httpd_client_SOURCES = examples/tests/httpd-client.c \
	examples/http.h examples/http.c $(EXAMPLES_UTIL_SOURCES)

# ---------------------------------------------------------------- curl-pool

if HAVE_LIBCURL
noinst_PROGRAMS += examples/curl-pool
endif
examples_curl_pool_SOURCES = examples/curl-pool.c $(EXAMPLES_UTIL_SOURCES)
examples_curl_pool_CFLAGS = $(AM_CFLAGS) $(LIBCURL_CFLAGS)
examples_curl_pool_LDFLAGS = $(AM_LDFLAGS) -no-install
examples_curl_pool_LDADD = src/libshiftpool.la $(LIBCURL_LIBS)

# Always in TESTS: without libcurl it reports SKIP, never a silent pass.
TESTS += examples/tests/curl-pool.sh
