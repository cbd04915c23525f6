# Programs under libshiftpool-malloc.so (src/malloc.mk).  Included by the
# top-level Makefile.am: this directory is %reldir% (%canon_reldir% in
# names), other paths are from the top of the tree.  Each script runs its
# programs on the C library's allocator and preloaded, and compares; each
# skips (77) in a sanitized build, whose runtime replaces malloc itself,
# and where a program it needs is missing.
#
#	tests/malloc-exports.sh    the library exports exactly the malloc
#	                           family
#	tests/malloc-api.sh        tests/malloc-api: the aligned calls,
#	                           reallocarray(), malloc_usable_size(),
#	                           realloc() through the classes, errno;
#	                           plain, preloaded, and linked
#	                           (tests/malloc-linked)
#	tests/malloc-threads.sh    tests/malloc-threads: cross-thread frees,
#	                           generations of threads, fork
#	tests/malloc-cxx.sh        a C++ program (new, delete, containers,
#	                           over-aligned new), built with the C++
#	                           compiler when there is one
#	tests/malloc-coreutils.sh  sort, ls -lR, sha256sum and others
#	tests/malloc-python.sh     python3 on tests/malloc-heavy.py, every
#	                           object a malloc()
#	tests/malloc-project.sh    the project's own test programs
#	tests/malloc-settings.sh   SHIFTPOOL_MALLOC: the settings, a mistake
#	                           in them, the statistics in both formats

MALLOC_TESTS = \
	%reldir%/malloc-exports.sh \
	%reldir%/malloc-api.sh \
	%reldir%/malloc-threads.sh \
	%reldir%/malloc-cxx.sh \
	%reldir%/malloc-coreutils.sh \
	%reldir%/malloc-python.sh \
	%reldir%/malloc-project.sh \
	%reldir%/malloc-settings.sh
TESTS += $(MALLOC_TESTS)
dist_noinst_SCRIPTS += $(MALLOC_TESTS) %reldir%/malloc-common.sh
EXTRA_DIST += %reldir%/malloc-cxx.cc %reldir%/malloc-heavy.py

AM_TESTS_ENVIRONMENT += \
	SANITIZER_CFLAGS='$(SANITIZER_CFLAGS)'; export SANITIZER_CFLAGS;

# The test programs call the malloc family for its effects: the compiler
# must not fold a malloc() and its free() away.
check_PROGRAMS += %reldir%/malloc-api %reldir%/malloc-threads \
	%reldir%/malloc-linked
%canon_reldir%_malloc_api_SOURCES = %reldir%/malloc-api.c
%canon_reldir%_malloc_api_CFLAGS = $(AM_CFLAGS) -fno-builtin
%canon_reldir%_malloc_threads_SOURCES = %reldir%/malloc-threads.c
%canon_reldir%_malloc_threads_CFLAGS = $(AM_CFLAGS) -fno-builtin
%canon_reldir%_malloc_threads_LDADD = -lpthread
# The same program linked with the library instead of preloaded.
%canon_reldir%_malloc_linked_SOURCES = %reldir%/malloc-api.c
%canon_reldir%_malloc_linked_CFLAGS = $(AM_CFLAGS) -fno-builtin
%canon_reldir%_malloc_linked_LDADD = src/libshiftpool-malloc.la
