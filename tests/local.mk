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

# pool_trim()'s work counted, from a build of the library's sources with
# the counters and the invariant checks (never the library itself).
check_PROGRAMS += %reldir%/trim-work
TESTS += %reldir%/trim-work
%canon_reldir%_trim_work_SOURCES = %reldir%/trim-work.c \
	%reldir%/safety-util.h $(src_libshiftpool_la_SOURCES)
%canon_reldir%_trim_work_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src \
	-DSHIFTPOOL_TRIM_COUNTERS -DSHIFTPOOL_ASSERTIONS
%canon_reldir%_trim_work_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden

# The symbol, pkg-config and interposition tests need no Check.
TESTS += %reldir%/symbols.sh %reldir%/pkgconfig.sh %reldir%/layers.sh \
	%reldir%/interpose.sh
dist_noinst_SCRIPTS += %reldir%/symbols.sh %reldir%/pkgconfig.sh \
	%reldir%/no-check.sh %reldir%/layers.sh %reldir%/interpose.sh
EXTRA_DIST += %reldir%/pkgconfig-consumer.c %reldir%/interpose-driver.c
# Sourced by tests/exports.sh and tests/malloc-common.sh.
EXTRA_DIST += %reldir%/shared-object.sh

# The Debian packaging agrees with configure.ac and the built library
# (SKIP in a tree without debian/).  debian/ is distributed: the release
# tarball builds the packages too.
TESTS += %reldir%/debian.sh
dist_noinst_SCRIPTS += %reldir%/debian.sh
EXTRA_DIST += \
	debian/README.source \
	debian/changelog \
	debian/control \
	debian/copyright \
	debian/libshiftpool-dev.lintian-overrides \
	debian/libshiftpool-malloc.lintian-overrides \
	debian/libshiftpool0.lintian-overrides \
	debian/shiftpool-tools.lintian-overrides \
	debian/libshiftpool-dev.install \
	debian/libshiftpool0.install \
	debian/libshiftpool0.symbols \
	debian/rules \
	debian/ship.mk \
	debian/shiftpool-tools.install \
	debian/source/format \
	debian/update-symbols \
	tools/deb-check.sh

# The library calls no malloc() for its own state: a program that defines
# malloc() and the rest itself, counting the calls made inside the
# library's.  Needs no Check.
check_PROGRAMS += %reldir%/no-malloc
TESTS += %reldir%/no-malloc
%canon_reldir%_no_malloc_SOURCES = %reldir%/no-malloc.c
%canon_reldir%_no_malloc_LDADD = src/libshiftpool.la

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
	%reldir%/check_dropin.c \
	%reldir%/check_fallback.c \
	%reldir%/dropin.h \
	%reldir%/dropin-util.c \
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
