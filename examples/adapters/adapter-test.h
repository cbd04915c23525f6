/*
 * examples/adapters: what the adapters' test programs share: the modes
 * they run a workload in, their checks, and the check that a set served
 * a library's allocations and got every one of them back.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef ADAPTER_TEST_H
#define ADAPTER_TEST_H

#include <shiftpool.h>

#include <stdbool.h>
#include <stdint.h>

/* Exit status of a test that cannot run here (automake's SKIP). */
#define TEST_SKIP 77

struct test_mode {
	int flags;
	const char *name;
};

/* Checks that failed so far, over the whole program. */
extern unsigned test_failures;

/* Counts a failure and says what failed (printf-style) when ok is false;
 * returns ok. */
bool test_check(bool ok, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* The set's mode as its flags name it: "single", "locked", "per-thread". */
const char *test_mode_name(int flags);

/*
 * After a library has freed all it had: prints the set's totals under
 * the title what, and checks that it served at least min_allocs
 * allocations, that no block is in use, that its fallback served exactly
 * fallbacks allocations and got all of them back.  Returns true when all
 * of that holds.
 */
bool test_set_clean(const pool_set_t *set, const char *what,
                    uint64_t min_allocs, uint64_t fallbacks);

#endif
