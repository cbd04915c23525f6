# fuzz/: libFuzzer targets, built with clang (-fsanitize=fuzzer,address,
# undefined) by "make fuzz" only, which then runs each for FUZZ_SECONDS on
# a copy of its seed corpus fuzz/corpus/NAME/, in fuzz/work/NAME/ (what it
# finds stays there: crashes as fuzz/work/NAME-crash-*).  Included from the
# top Makefile.am: this directory is %reldir%, other paths are from the top.
#
# A new target NAME: fuzz/NAME.c and fuzz/corpus/NAME/, its name in
# FUZZ_TARGETS, its sources in a build rule like analyze's, its files in
# EXTRA_DIST.

FUZZ_TARGETS = analyze api
FUZZ_SECONDS = 60
FUZZ_CFLAGS = -g -O1 -fno-omit-frame-pointer \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_CPPFLAGS = -DHAVE_CONFIG_H -I$(top_builddir) -I$(top_builddir)/include \
	-I$(top_srcdir)/include -I$(top_srcdir)/src
# Builds $@ from the .c files among the prerequisites.
FUZZ_LINK = $(CLANG) $(FUZZ_CPPFLAGS) $(FUZZ_CFLAGS) -o $@ \
	`for f in $^; do case $$f in *.c) echo $$f;; esac; done`
FUZZ_NO_CLANG = echo "make fuzz: clang was not found by configure; install" \
	"clang and run configure again" >&2; exit 1

%reldir%/analyze-fuzzer: %reldir%/analyze.c $(ANALYZE_CORE_SOURCES) \
		include/shiftpool.h
	@test -n "$(CLANG)" || { $(FUZZ_NO_CLANG); }
	@$(MKDIR_P) %reldir%
	$(AM_V_CC)$(FUZZ_LINK) -I$(top_srcdir)/tools/analyze

# The library's sources built into the target, so that all of it is
# instrumented; SHIFTPOOL_ASAN makes it poison free blocks as an
# --enable-sanitizers=address build does.  The public header is generated
# in the build tree (FUZZ_CPPFLAGS looks there first).
%reldir%/api-fuzzer: %reldir%/api.c $(src_libshiftpool_la_SOURCES) \
		include/shiftpool.h
	@test -n "$(CLANG)" || { $(FUZZ_NO_CLANG); }
	@$(MKDIR_P) %reldir%
	$(AM_V_CC)$(FUZZ_LINK) -DSHIFTPOOL_ASAN=1 \
	  -pthread

.PHONY: fuzz clean-fuzz
fuzz:
	@test -n "$(CLANG)" || { $(FUZZ_NO_CLANG); }
	@for t in $(FUZZ_TARGETS); do \
	  $(MAKE) $(AM_MAKEFLAGS) %reldir%/$$t-fuzzer || exit 1; \
	done
	@for t in $(FUZZ_TARGETS); do \
	  rm -rf %reldir%/work/$$t && $(MKDIR_P) %reldir%/work/$$t && \
	  cp $(srcdir)/%reldir%/corpus/$$t/* %reldir%/work/$$t/ && \
	  echo "%reldir%/$$t-fuzzer: $(FUZZ_SECONDS) s on a copy of %reldir%/corpus/$$t" && \
	  %reldir%/$$t-fuzzer -max_total_time=$(FUZZ_SECONDS) \
	    -artifact_prefix=%reldir%/work/$$t- %reldir%/work/$$t || exit 1; \
	done

clean-fuzz:
	rm -rf %reldir%/work
	for t in $(FUZZ_TARGETS); do rm -f %reldir%/$$t-fuzzer; done
clean-local: clean-fuzz

EXTRA_DIST += %reldir%/analyze.c %reldir%/api.c \
	%reldir%/corpus/analyze/v1-calls \
	%reldir%/corpus/analyze/v1-realloc \
	%reldir%/corpus/analyze/v2-bulk-trim \
	%reldir%/corpus/analyze/v2-fork-chain \
	%reldir%/corpus/analyze/v2-fork-report \
	%reldir%/corpus/analyze/v2-odd-lines \
	%reldir%/corpus/analyze/v2-set \
	%reldir%/corpus/analyze/v3-seq \
	%reldir%/corpus/api/destroy-live \
	%reldir%/corpus/api/locked-nofallback \
	%reldir%/corpus/api/per-thread-fill \
	%reldir%/corpus/api/single-exhaust \
	%reldir%/corpus/api/two-pools-misuse
