# Safety and observability tests (reliability goals 2, 4, 6, 7): each proves
# that a debugging or hardening feature really reports.  Included by the
# top-level Makefile.am: this directory is %reldir% (%canon_reldir% in
# names), other paths are from the top of the tree.
#
#	tests/safety-valgrind.sh   memcheck sees a use after free of a pool
#	                           block in every mode (runs tests/safety-uaf);
#	                           SKIP without valgrind or in a sanitized build
#	tests/safety-asan          ASan stops a use after free and a one-byte
#	                           overflow inside a block; SKIP unless built
#	                           with --enable-sanitizers=address
#	tests/safety-hardened      damaged free-list links: POOL_ERROR_CORRUPTED,
#	                           never followed, no block handed out twice
#	tests/safety-debug         SHIFTPOOL_DEBUG=fill and fail-fallback=N,
#	                           POOL_DEBUG_FILL, the option parser
#	tests/safety-trace         SHIFTPOOL_TRACE, record by record, and
#	                           tools/shiftpool-analyze on it when built
#	tests/safety-stats-print   pool_stats_print(), text and JSON
#	tests/safety-fork          200 forks while 4 threads hammer a pool
#	tests/safety-wrong-pool    a pointer of another pool: reported, never
#	                           handed to free()
#	tests/safety-guard         a write off either end of the region faults
#	tests/safety-fork-trace    250 forks with the trace on while threads
#	                           hammer pools of every mode: no child hangs,
#	                           every record whole, once, in its place
#	tests/safety-stats-exit    POOL_PER_THREAD pool_stats() exact while
#	                           threads exit
#	tests/safety-handler       a misuse handler calls back into the pool
#	                           that reported, from every report path, while
#	                           another thread goes on using that pool
#	tests/safety-handler-switch  handlers switched while reports are
#	                           under way: each gets its own argument
#	tests/safety-hugepages     POOL_HUGEPAGES: half of a 64 MiB region or
#	                           more in AnonHugePages, every mode; SKIP
#	                           without transparent huge pages
#	tests/safety-mlockall      pool_trim() under mlockall(): nothing
#	                           counted as given back, pool_calloc() still
#	                           zero; SKIP where mlockall() is refused
#	tests/safety-setuid.sh     a set-user-ID program ignores
#	                           SHIFTPOOL_TRACE and SHIFTPOOL_DEBUG (runs
#	                           tests/safety-setuid-helper); SKIP unless
#	                           root, with setpriv, on a suid file system
#
# tests/safety-valgrind-suite.sh is not run by `make check`: it runs the
# Check runner (or any test program) under memcheck with zero suppressions;
# `make safety-valgrind-suite` runs it on tests/check_shiftpool.

SAFETY_TESTS = \
	%reldir%/safety-valgrind.sh \
	%reldir%/safety-asan \
	%reldir%/safety-hardened \
	%reldir%/safety-debug \
	%reldir%/safety-trace \
	%reldir%/safety-stats-print \
	%reldir%/safety-fork \
	%reldir%/safety-wrong-pool \
	%reldir%/safety-guard \
	%reldir%/safety-fork-trace \
	%reldir%/safety-stats-exit \
	%reldir%/safety-handler \
	%reldir%/safety-handler-switch \
	%reldir%/safety-hugepages \
	%reldir%/safety-mlockall \
	%reldir%/safety-setuid.sh

check_PROGRAMS += \
	%reldir%/safety-uaf \
	%reldir%/safety-asan \
	%reldir%/safety-hardened \
	%reldir%/safety-debug \
	%reldir%/safety-trace \
	%reldir%/safety-stats-print \
	%reldir%/safety-fork \
	%reldir%/safety-wrong-pool \
	%reldir%/safety-guard \
	%reldir%/safety-fork-trace \
	%reldir%/safety-stats-exit \
	%reldir%/safety-handler \
	%reldir%/safety-handler-switch \
	%reldir%/safety-hugepages \
	%reldir%/safety-mlockall \
	%reldir%/safety-setuid-helper
TESTS += $(SAFETY_TESTS)
dist_noinst_SCRIPTS += %reldir%/safety-valgrind.sh \
	%reldir%/safety-valgrind-suite.sh %reldir%/safety-setuid.sh

# Run under valgrind by a script: the real binary, not a libtool wrapper.
%canon_reldir%_safety_uaf_SOURCES = %reldir%/safety-uaf.c \
	%reldir%/safety-util.h
%canon_reldir%_safety_uaf_LDADD = src/libshiftpool.la
%canon_reldir%_safety_uaf_LDFLAGS = $(AM_LDFLAGS) -no-install

%canon_reldir%_safety_asan_SOURCES = %reldir%/safety-asan.c \
	%reldir%/safety-util.h
%canon_reldir%_safety_asan_LDADD = src/libshiftpool.la

%canon_reldir%_safety_hardened_SOURCES = %reldir%/safety-hardened.c \
	%reldir%/safety-util.h
%canon_reldir%_safety_hardened_LDADD = src/libshiftpool.la

%canon_reldir%_safety_debug_SOURCES = %reldir%/safety-debug.c \
	%reldir%/safety-util.h
%canon_reldir%_safety_debug_LDADD = src/libshiftpool.la

%canon_reldir%_safety_trace_SOURCES = %reldir%/safety-trace.c \
	%reldir%/safety-util.h
%canon_reldir%_safety_trace_LDADD = src/libshiftpool.la

%canon_reldir%_safety_stats_print_SOURCES = %reldir%/safety-stats-print.c \
	%reldir%/safety-util.h
%canon_reldir%_safety_stats_print_LDADD = src/libshiftpool.la

%canon_reldir%_safety_fork_SOURCES = %reldir%/safety-fork.c \
	%reldir%/safety-util.h
%canon_reldir%_safety_fork_LDADD = src/libshiftpool.la

%canon_reldir%_safety_wrong_pool_SOURCES = %reldir%/safety-wrong-pool.c \
	%reldir%/safety-util.h
%canon_reldir%_safety_wrong_pool_LDADD = src/libshiftpool.la

%canon_reldir%_safety_guard_SOURCES = %reldir%/safety-guard.c \
	%reldir%/safety-util.h
%canon_reldir%_safety_guard_LDADD = src/libshiftpool.la

%canon_reldir%_safety_fork_trace_SOURCES = %reldir%/safety-fork-trace.c \
	%reldir%/safety-util.h
%canon_reldir%_safety_fork_trace_LDADD = src/libshiftpool.la

%canon_reldir%_safety_stats_exit_SOURCES = %reldir%/safety-stats-exit.c \
	%reldir%/safety-util.h
%canon_reldir%_safety_stats_exit_LDADD = src/libshiftpool.la

%canon_reldir%_safety_handler_SOURCES = %reldir%/safety-handler.c \
	%reldir%/safety-util.h
%canon_reldir%_safety_handler_LDADD = src/libshiftpool.la

%canon_reldir%_safety_handler_switch_SOURCES = \
	%reldir%/safety-handler-switch.c %reldir%/safety-util.h
%canon_reldir%_safety_handler_switch_LDADD = src/libshiftpool.la

%canon_reldir%_safety_hugepages_SOURCES = %reldir%/safety-hugepages.c \
	%reldir%/safety-util.h
%canon_reldir%_safety_hugepages_LDADD = src/libshiftpool.la

%canon_reldir%_safety_mlockall_SOURCES = %reldir%/safety-mlockall.c \
	%reldir%/safety-util.h
%canon_reldir%_safety_mlockall_LDADD = src/libshiftpool.la

# Copied and made set-user-ID by a script: a program that needs no
# uninstalled shared library (the dynamic loader ignores LD_LIBRARY_PATH
# in a set-user-ID program).
%canon_reldir%_safety_setuid_helper_SOURCES = %reldir%/safety-setuid-helper.c
%canon_reldir%_safety_setuid_helper_LDADD = src/libshiftpool.la
%canon_reldir%_safety_setuid_helper_LDFLAGS = $(AM_LDFLAGS) -static

# The valgrind test needs its program built before it runs (make check
# builds check_PROGRAMS first; this is for `make check TESTS=...` alone).
%reldir%/safety-valgrind.log: %reldir%/safety-uaf$(EXEEXT)
%reldir%/safety-setuid.log: %reldir%/safety-setuid-helper$(EXEEXT)

# The Check runner under memcheck (CI; minutes, not part of make check).
safety-valgrind-suite: all
	$(MAKE) $(AM_MAKEFLAGS) $(check_PROGRAMS)
	abs_top_builddir='$(abs_top_builddir)' \
	  $(SHELL) $(srcdir)/%reldir%/safety-valgrind-suite.sh
.PHONY: safety-valgrind-suite
