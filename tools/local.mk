# shiftpool-analyze: reads the log that libshiftpool writes when
# SHIFTPOOL_TRACE=FILE is set.  Included from the top Makefile.am: this
# directory is %reldir% (%canon_reldir% in names), other paths are from the
# top.  It does not link the library.

bin_PROGRAMS += %reldir%/shiftpool-analyze
# Everything but main.c, which the fuzz target replaces with its own.  The
# trace vocabulary is the library's header, listed here so that it is
# distributed however the library's sources change.
ANALYZE_CORE_SOURCES = \
	src/trace-format.h \
	%reldir%/analyze/analyze.h \
	%reldir%/analyze/util.c \
	%reldir%/analyze/table.c \
	%reldir%/analyze/snapshot.c \
	%reldir%/analyze/parse.c \
	%reldir%/analyze/order.c \
	%reldir%/analyze/model.c \
	%reldir%/analyze/summary.c \
	%reldir%/analyze/report-text.c \
	%reldir%/analyze/report-json.c \
	%reldir%/analyze/plot.c
%canon_reldir%_shiftpool_analyze_SOURCES = %reldir%/analyze/main.c \
	$(ANALYZE_CORE_SOURCES)
# The trace vocabulary, shared with the library.
%canon_reldir%_shiftpool_analyze_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src

# Shell scripts, run from the top build directory with srcdir exported by
# the test harness; each sources tools/tests/common.sh.
TOOLS_TESTS = \
	%reldir%/tests/example.sh \
	%reldir%/tests/clean.sh \
	%reldir%/tests/leaks.sh \
	%reldir%/tests/double-free.sh \
	%reldir%/tests/invalid-free.sh \
	%reldir%/tests/unknown-free.sh \
	%reldir%/tests/realloc.sh \
	%reldir%/tests/multi-pool.sh \
	%reldir%/tests/malformed.sh \
	%reldir%/tests/empty.sh \
	%reldir%/tests/usage.sh \
	%reldir%/tests/large.sh \
	%reldir%/tests/v2.sh \
	%reldir%/tests/seq.sh \
	%reldir%/tests/memory.sh \
	%reldir%/tests/report.sh \
	%reldir%/tests/fork.sh \
	%reldir%/tests/set.sh \
	%reldir%/tests/fallback-reuse.sh \
	%reldir%/tests/hash-collide.sh \
	%reldir%/tests/fork-heavy.sh \
	%reldir%/tests/plot-data.sh \
	%reldir%/tests/plot.sh

TOOLS_TEST_FILES = \
	%reldir%/tests/data/example.trace \
	%reldir%/tests/data/example.expected \
	%reldir%/tests/data/clean.trace \
	%reldir%/tests/data/clean.expected \
	%reldir%/tests/data/leaks.trace \
	%reldir%/tests/data/leaks.expected \
	%reldir%/tests/data/double-free.trace \
	%reldir%/tests/data/double-free.expected \
	%reldir%/tests/data/invalid-free.trace \
	%reldir%/tests/data/invalid-free.expected \
	%reldir%/tests/data/unknown-free.trace \
	%reldir%/tests/data/unknown-free.expected \
	%reldir%/tests/data/duplicate.trace \
	%reldir%/tests/data/realloc.trace \
	%reldir%/tests/data/realloc.expected \
	%reldir%/tests/data/multi-pool.trace \
	%reldir%/tests/data/multi-pool.expected \
	%reldir%/tests/data/malformed.trace \
	%reldir%/tests/data/malformed.expected \
	%reldir%/tests/data/empty.trace \
	%reldir%/tests/data/empty.expected \
	%reldir%/tests/data/v2.trace \
	%reldir%/tests/data/v2.expected \
	%reldir%/tests/data/report.trace \
	%reldir%/tests/data/report.expected \
	%reldir%/tests/data/fork.trace \
	%reldir%/tests/data/fork.expected \
	%reldir%/tests/data/fork.plot-data \
	%reldir%/tests/data/set.trace \
	%reldir%/tests/data/set.expected \
	%reldir%/tests/data/fallback-reuse.trace \
	%reldir%/tests/data/fallback-reuse.expected \
	%reldir%/tests/data/example.plot-data

TESTS += $(TOOLS_TESTS)
EXTRA_DIST += $(TOOLS_TESTS) $(TOOLS_TEST_FILES) \
	%reldir%/tests/common.sh \
	%reldir%/tests/gen-large.awk \
	%reldir%/tests/gen-fork.awk \
	%reldir%/tests/gen-ids.awk \
	%reldir%/tests/gen-collide.py
