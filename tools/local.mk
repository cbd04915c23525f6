# shiftpool-analyze: reads the log that libshiftpool writes when
# SHIFTPOOL_TRACE=FILE is set.  Included from the top Makefile.am; paths are
# from the top.  It does not link the library.

bin_PROGRAMS += tools/shiftpool-analyze
# Everything but main.c, which the fuzz target replaces with its own.  The
# trace vocabulary is the library's header, listed here so that it is
# distributed however the library's sources change.
ANALYZE_CORE_SOURCES = \
	src/trace-format.h \
	tools/analyze/analyze.h \
	tools/analyze/util.c \
	tools/analyze/table.c \
	tools/analyze/snapshot.c \
	tools/analyze/parse.c \
	tools/analyze/model.c \
	tools/analyze/summary.c \
	tools/analyze/report-text.c \
	tools/analyze/report-json.c \
	tools/analyze/plot.c
tools_shiftpool_analyze_SOURCES = tools/analyze/main.c $(ANALYZE_CORE_SOURCES)
# The trace vocabulary, shared with the library.
tools_shiftpool_analyze_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src

# Shell scripts, run from the top build directory with srcdir exported by
# the test harness; each sources tools/tests/common.sh.
TOOLS_TESTS = \
	tools/tests/example.sh \
	tools/tests/clean.sh \
	tools/tests/leaks.sh \
	tools/tests/double-free.sh \
	tools/tests/invalid-free.sh \
	tools/tests/unknown-free.sh \
	tools/tests/realloc.sh \
	tools/tests/multi-pool.sh \
	tools/tests/malformed.sh \
	tools/tests/empty.sh \
	tools/tests/usage.sh \
	tools/tests/large.sh \
	tools/tests/v2.sh \
	tools/tests/report.sh \
	tools/tests/fork.sh \
	tools/tests/set.sh \
	tools/tests/fallback-reuse.sh \
	tools/tests/hash-collide.sh \
	tools/tests/fork-heavy.sh \
	tools/tests/plot-data.sh \
	tools/tests/plot.sh

TOOLS_TEST_FILES = \
	tools/tests/data/example.trace \
	tools/tests/data/example.expected \
	tools/tests/data/clean.trace \
	tools/tests/data/clean.expected \
	tools/tests/data/leaks.trace \
	tools/tests/data/leaks.expected \
	tools/tests/data/double-free.trace \
	tools/tests/data/double-free.expected \
	tools/tests/data/invalid-free.trace \
	tools/tests/data/invalid-free.expected \
	tools/tests/data/unknown-free.trace \
	tools/tests/data/unknown-free.expected \
	tools/tests/data/duplicate.trace \
	tools/tests/data/realloc.trace \
	tools/tests/data/realloc.expected \
	tools/tests/data/multi-pool.trace \
	tools/tests/data/multi-pool.expected \
	tools/tests/data/malformed.trace \
	tools/tests/data/malformed.expected \
	tools/tests/data/empty.trace \
	tools/tests/data/empty.expected \
	tools/tests/data/v2.trace \
	tools/tests/data/v2.expected \
	tools/tests/data/report.trace \
	tools/tests/data/report.expected \
	tools/tests/data/fork.trace \
	tools/tests/data/fork.expected \
	tools/tests/data/fork.plot-data \
	tools/tests/data/set.trace \
	tools/tests/data/set.expected \
	tools/tests/data/fallback-reuse.trace \
	tools/tests/data/fallback-reuse.expected \
	tools/tests/data/example.plot-data

TESTS += $(TOOLS_TESTS)
EXTRA_DIST += $(TOOLS_TESTS) $(TOOLS_TEST_FILES) \
	tools/tests/common.sh \
	tools/tests/gen-large.awk \
	tools/tests/gen-fork.awk \
	tools/tests/gen-collide.py
