# Concurrency stress tests (reliability goal 3): tests/stress (objects
# crossing threads, thread churn, two pools, pool_destroy() under live
# threads, cross-thread misuse, pool_trim() racing with threads, a pool set
# of several classes under threads) and tests/aba (ABA torture on tiny pools).
# `make check` runs the short versions; the long sweep is
#	STRESS_LONG=1 make check TESTS='tests/stress tests/aba'
# or tests/stress --long, tests/aba --long.  tests/stress.c parses the
# options and runs the parts, one file each (tests/stress-*.c).  What the
# two programs share (failure reports, threads, the preemption timer, the
# owner table, tracked pools) is tests/concurrency.c; the mode names,
# shared with the Check suites, are tests/modes.c.

check_PROGRAMS += %reldir%/stress %reldir%/aba
TESTS += %reldir%/stress %reldir%/aba

%canon_reldir%_stress_SOURCES = %reldir%/stress.c %reldir%/stress.h \
	%reldir%/stress-crossing.c %reldir%/stress-objects.c \
	%reldir%/stress-objects.h %reldir%/stress-two-pools.c \
	%reldir%/stress-churn.c %reldir%/stress-destroy.c \
	%reldir%/stress-misuse.c %reldir%/stress-trim.c %reldir%/stress-set.c \
	%reldir%/stress-bulk.c \
	%reldir%/concurrency.c %reldir%/concurrency.h %reldir%/modes.c \
	%reldir%/modes.h
%canon_reldir%_stress_LDADD = src/libshiftpool.la

%canon_reldir%_aba_SOURCES = %reldir%/aba.c %reldir%/concurrency.c \
	%reldir%/concurrency.h %reldir%/modes.c %reldir%/modes.h
%canon_reldir%_aba_LDADD = src/libshiftpool.la
