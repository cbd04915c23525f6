# tests/: the Check runner, the exported-symbols test and the pkg-config
# test.  Included by the top-level Makefile.am: this directory is %reldir%
# (%canon_reldir% in names), other paths are from the top of the tree.

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
TESTS += %reldir%/symbols.sh %reldir%/pkgconfig.sh %reldir%/layers.sh
dist_noinst_SCRIPTS += %reldir%/symbols.sh %reldir%/pkgconfig.sh \
	%reldir%/no-check.sh %reldir%/layers.sh
EXTRA_DIST += %reldir%/pkgconfig-consumer.c

if HAVE_CHECK
# One runner for every Check suite: a main, shared helpers, one file per
# suite.
check_PROGRAMS += %reldir%/check_shiftpool
TESTS += %reldir%/check_shiftpool
%canon_reldir%_check_shiftpool_SOURCES = \
	%reldir%/check_shiftpool.c \
	%reldir%/testutil.c \
	%reldir%/testutil.h \
	%reldir%/modes.c \
	%reldir%/modes.h \
	%reldir%/check_init.c \
	%reldir%/check_alloc.c \
	%reldir%/check_free.c \
	%reldir%/check_misuse.c \
	%reldir%/check_stats.c \
	%reldir%/check_threads.c \
	%reldir%/check_memory.c \
	%reldir%/check_bulk.c \
	%reldir%/check_set.c \
	%reldir%/check_spans.c
%canon_reldir%_check_shiftpool_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
%canon_reldir%_check_shiftpool_LDADD = src/libshiftpool.la $(CHECK_LIBS)
if INLINE_PATHS
# The same suites with SHIFTPOOL_INLINE: pool_malloc(), pool_calloc() and
# pool_free() through the header's inline fast paths.
check_PROGRAMS += %reldir%/check_inline
TESTS += %reldir%/check_inline
%canon_reldir%_check_inline_SOURCES = $(%canon_reldir%_check_shiftpool_SOURCES)
%canon_reldir%_check_inline_CPPFLAGS = $(AM_CPPFLAGS) -DSHIFTPOOL_INLINE
%canon_reldir%_check_inline_CFLAGS = $(%canon_reldir%_check_shiftpool_CFLAGS)
%canon_reldir%_check_inline_LDADD = $(%canon_reldir%_check_shiftpool_LDADD)
endif
else
# Without Check the unit tests report SKIP, never a silent pass.
TESTS += %reldir%/no-check.sh
endif
