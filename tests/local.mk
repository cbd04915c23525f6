# tests/: the Check runner, the exported-symbols test and the pkg-config
# test.  Included by the top-level Makefile.am, so paths are relative to
# the top of the tree.

TEST_EXTENSIONS = .sh
SH_LOG_COMPILER = $(SHELL)

# What the shell tests need to know about this build.
AM_TESTS_ENVIRONMENT = \
	abs_top_builddir='$(abs_top_builddir)'; \
	abs_top_srcdir='$(abs_top_srcdir)'; \
	MAKE='$(MAKE)'; CC='$(CC)'; NM='$(NM)'; PKG_CONFIG='$(PKG_CONFIG)'; \
	CONSUMER_CFLAGS='$(CFLAGS) $(SANITIZER_CFLAGS) $(LDFLAGS)'; \
	libdir='$(libdir)'; includedir='$(includedir)'; \
	pkgconfigdir='$(pkgconfigdir)'; PACKAGE_VERSION='$(PACKAGE_VERSION)'; \
	PYTHON3='$(PYTHON3)'; \
	export abs_top_builddir abs_top_srcdir MAKE CC NM PKG_CONFIG \
	CONSUMER_CFLAGS libdir includedir pkgconfigdir PACKAGE_VERSION PYTHON3;

# The symbol and pkg-config tests need no Check.
TESTS += tests/symbols.sh tests/pkgconfig.sh tests/layers.sh
dist_noinst_SCRIPTS += tests/symbols.sh tests/pkgconfig.sh tests/no-check.sh \
	tests/layers.sh
EXTRA_DIST += tests/pkgconfig-consumer.c

if HAVE_CHECK
# One runner for every Check suite: a main, shared helpers, one file per
# suite.
check_PROGRAMS += tests/check_shiftpool
TESTS += tests/check_shiftpool
tests_check_shiftpool_SOURCES = \
	tests/check_shiftpool.c \
	tests/testutil.c \
	tests/testutil.h \
	tests/modes.c \
	tests/modes.h \
	tests/check_init.c \
	tests/check_alloc.c \
	tests/check_free.c \
	tests/check_misuse.c \
	tests/check_stats.c \
	tests/check_threads.c \
	tests/check_memory.c \
	tests/check_bulk.c \
	tests/check_set.c
tests_check_shiftpool_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_check_shiftpool_LDADD = src/libshiftpool.la $(CHECK_LIBS)
if INLINE_PATHS
# The same suites with SHIFTPOOL_INLINE: pool_malloc(), pool_calloc() and
# pool_free() through the header's inline fast paths.
check_PROGRAMS += tests/check_inline
TESTS += tests/check_inline
tests_check_inline_SOURCES = $(tests_check_shiftpool_SOURCES)
tests_check_inline_CPPFLAGS = $(AM_CPPFLAGS) -DSHIFTPOOL_INLINE
tests_check_inline_CFLAGS = $(tests_check_shiftpool_CFLAGS)
tests_check_inline_LDADD = $(tests_check_shiftpool_LDADD)
endif
else
# Without Check the unit tests report SKIP, never a silent pass.
TESTS += tests/no-check.sh
endif
