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

check_PROGRAMS += tests/stress tests/aba
TESTS += tests/stress tests/aba

tests_stress_SOURCES = tests/stress.c tests/stress.h \
	tests/stress-crossing.c tests/stress-objects.c tests/stress-objects.h \
	tests/stress-two-pools.c tests/stress-churn.c tests/stress-destroy.c \
	tests/stress-misuse.c tests/stress-trim.c \
	tests/stress-set.c tests/concurrency.c tests/concurrency.h \
	tests/modes.c tests/modes.h
tests_stress_LDADD = src/libshiftpool.la

tests_aba_SOURCES = tests/aba.c tests/concurrency.c tests/concurrency.h \
	tests/modes.c tests/modes.h
tests_aba_LDADD = src/libshiftpool.la
