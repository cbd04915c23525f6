/*
 * The one Check runner: every suite, one program, one entry in TESTS.
 *
 *	tests/check_shiftpool [SUITE [CASE]]
 *
 * runs everything, one suite, or one test case of it; without arguments
 * Check's own CK_RUN_SUITE and CK_RUN_CASE select instead (and CK_FORK,
 * CK_VERBOSITY, CK_TIMEOUT_MULTIPLIER work as usual; CK_DEFAULT_TIMEOUT
 * defaults to TEST_TIMEOUT_SECONDS, not Check's 4).  Exit status: 0 when
 * every selected test passed, 1 otherwise, including when the selection
 * matched no test, so that a misspelt name does not look like a pass.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

/* Every test's timeout: a guard against a hang, not a speed limit. */
#define TEST_TIMEOUT_SECONDS "120"

/*
 * The tests ask the fallback for more than any allocator has and expect
 * NULL with ENOMEM, as from glibc; the sanitizers' allocators end the
 * program on such a request unless told otherwise.  They call these hooks
 * before reading ASAN_OPTIONS / TSAN_OPTIONS, which still override them.
 */
#ifdef SHIFTPOOL_ASAN
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}
#endif
#ifdef SHIFTPOOL_TSAN
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
	return "allocator_may_return_null=1";
}
#endif

int main(int argc, char **argv)
{
	const char *suite = argc > 1 ? argv[1] : NULL;
	const char *tcase = argc > 2 ? argv[2] : NULL;

	if (argc > 3) {
		fprintf(stderr, "usage: %s [SUITE [CASE]]\n", argv[0]);
		return 2;
	}
	/* Check's own default, 4 s a test, is a speed limit, and the
	 * machines that run this are shared: under load, a sanitizer or
	 * Valgrind a sound test can take longer.  A timeout here only turns
	 * a hang into a failure.  Read when the suites are made, so set
	 * first; CK_DEFAULT_TIMEOUT and CK_TIMEOUT_MULTIPLIER still rule. */
	setenv("CK_DEFAULT_TIMEOUT", TEST_TIMEOUT_SECONDS, 0);

	SRunner *sr = srunner_create(init_suite());
	srunner_add_suite(sr, alloc_suite());
	srunner_add_suite(sr, free_suite());
	srunner_add_suite(sr, misuse_suite());
	srunner_add_suite(sr, stats_suite());
	srunner_add_suite(sr, threads_suite());
	srunner_add_suite(sr, memory_suite());
	srunner_add_suite(sr, bulk_suite());
	srunner_add_suite(sr, set_suite());
	srunner_add_suite(sr, dropin_suite());
	srunner_add_suite(sr, fallback_suite());
	srunner_add_suite(sr, spans_suite());

	/* NULL names fall back to CK_RUN_SUITE / CK_RUN_CASE. */
	srunner_run(sr, suite, tcase, CK_ENV);
	int run = srunner_ntests_run(sr);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);

	if (run == 0) {
		fprintf(stderr, "%s: no test matched the selection\n", argv[0]);
		return EXIT_FAILURE;
	}
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
