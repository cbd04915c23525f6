# make analyze-static: cppcheck and GCC's -fanalyzer over the library, the
# analyzer and the fuzz targets; any finding fails.  A false positive is
# silenced only where it is found, by an inline "cppcheck-suppress" comment
# (or a #pragma for GCC) that says why.  Included from the top Makefile.am;
# paths are from the top.  It needs the build tree's config.h and header,
# so configure first.

CPPCHECK = cppcheck
# -fanalyzer is GCC's, whatever CC is.
ANALYZER_CC = gcc
STATIC_CHECKED_FILES = $(src_libshiftpool_la_SOURCES) src/malloc.c \
	$(tools_shiftpool_analyze_SOURCES) fuzz/analyze.c fuzz/api.c
STATIC_INCLUDES = -DHAVE_CONFIG_H -I$(top_builddir) -I$(top_builddir)/include \
	-I$(top_srcdir)/src -I$(top_srcdir)/tools/analyze
# cppcheck tries every #ifdef configuration by itself; -fanalyzer sees one,
# so it runs twice: as configured, and with the debug, ASan and unhardened
# code switched on.
STATIC_VARIANTS = "" \
	"-DSHIFTPOOL_ASSERTIONS=1 -DSHIFTPOOL_ASAN=1 -DSHIFTPOOL_NO_HARDENING=1"
# The style checks are left out: they are taste, not findings.
CPPCHECK_FLAGS = --quiet --std=c11 --enable=warning,performance,portability \
	--inline-suppr --error-exitcode=1

.PHONY: analyze-static
analyze-static: $(nodist_include_HEADERS)
	@for tool in $(CPPCHECK) $(ANALYZER_CC); do \
	  command -v $$tool >/dev/null || { \
	    echo "make analyze-static: $$tool not found" >&2; exit 1; }; \
	done
	@cfiles=; for f in $(STATIC_CHECKED_FILES); do case $$f in \
	  *.c) cfiles="$$cfiles $(top_srcdir)/$$f";; esac; done; \
	echo "  CPPCHECK"; \
	$(CPPCHECK) $(CPPCHECK_FLAGS) $(STATIC_INCLUDES) $$cfiles || exit 1; \
	for variant in $(STATIC_VARIANTS); do \
	  echo "  ANALYZE  $${variant:-as configured}"; \
	  for f in $$cfiles; do \
	    $(ANALYZER_CC) -std=gnu11 -fanalyzer -Werror -pthread \
	      $(STATIC_INCLUDES) $$variant -c -o /dev/null $$f || exit 1; \
	  done; \
	done

EXTRA_DIST += tools/static.mk
