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
#   examples/adapters/    SQLite, libevent and Lua on a pool set, each an
#                         adapter to copy (NAME-pool.c, NAME-pool.h) and its
#                         test with a real workload of that library
#                         (NAME-pool-test.c), run by make check where
#                         configure found the library
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

# ---------------------------------------------------------------- adapters
# Each test is in TESTS whether or not its library was found: without it
# the program is missing.c, which reports SKIP, never a silent pass.
# Automake distributes the sources of both branches.  Each program has its
# CPPFLAGS in both branches: automake's rule takes them wherever one
# branch has them.

%canon_reldir%_adapter_test_sources = %reldir%/adapters/adapter-test.c \
	%reldir%/adapters/adapter-test.h

check_PROGRAMS += %reldir%/adapters/sqlite-pool-test \
	%reldir%/adapters/libevent-pool-test \
	%reldir%/adapters/lua-pool-test
TESTS += %reldir%/adapters/sqlite-pool-test \
	%reldir%/adapters/libevent-pool-test \
	%reldir%/adapters/lua-pool-test

if HAVE_SQLITE3
%canon_reldir%_adapters_sqlite_pool_test_SOURCES = \
	%reldir%/adapters/sqlite-pool-test.c %reldir%/adapters/sqlite-pool.c \
	%reldir%/adapters/sqlite-pool.h $(%canon_reldir%_adapter_test_sources)
%canon_reldir%_adapters_sqlite_pool_test_CPPFLAGS = $(AM_CPPFLAGS) \
	$(SQLITE3_CFLAGS)
%canon_reldir%_adapters_sqlite_pool_test_LDADD = src/libshiftpool.la \
	$(SQLITE3_LIBS)
else
%canon_reldir%_adapters_sqlite_pool_test_SOURCES = \
	%reldir%/adapters/missing.c
%canon_reldir%_adapters_sqlite_pool_test_CPPFLAGS = $(AM_CPPFLAGS) \
	-DMISSING='"SQLite 3 (libsqlite3-dev)"'
endif

if HAVE_LIBEVENT
%canon_reldir%_adapters_libevent_pool_test_SOURCES = \
	%reldir%/adapters/libevent-pool-test.c \
	%reldir%/adapters/libevent-pool.c %reldir%/adapters/libevent-pool.h \
	$(%canon_reldir%_adapter_test_sources)
%canon_reldir%_adapters_libevent_pool_test_CPPFLAGS = $(AM_CPPFLAGS) \
	$(LIBEVENT_CFLAGS)
%canon_reldir%_adapters_libevent_pool_test_LDADD = src/libshiftpool.la \
	$(LIBEVENT_LIBS)
else
%canon_reldir%_adapters_libevent_pool_test_SOURCES = \
	%reldir%/adapters/missing.c
%canon_reldir%_adapters_libevent_pool_test_CPPFLAGS = $(AM_CPPFLAGS) \
	-DMISSING='"libevent 2.1 (libevent-dev)"'
endif

if HAVE_LUA
%canon_reldir%_adapters_lua_pool_test_SOURCES = \
	%reldir%/adapters/lua-pool-test.c %reldir%/adapters/lua-pool.c \
	%reldir%/adapters/lua-pool.h $(%canon_reldir%_adapter_test_sources)
%canon_reldir%_adapters_lua_pool_test_CPPFLAGS = $(AM_CPPFLAGS) \
	$(LUA_CFLAGS)
%canon_reldir%_adapters_lua_pool_test_LDADD = src/libshiftpool.la \
	$(LUA_LIBS)
else
%canon_reldir%_adapters_lua_pool_test_SOURCES = \
	%reldir%/adapters/missing.c
%canon_reldir%_adapters_lua_pool_test_CPPFLAGS = $(AM_CPPFLAGS) \
	-DMISSING='"Lua 5.4 (liblua5.4-dev)"'
endif
