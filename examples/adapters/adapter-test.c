/*
 * examples/adapters: what the adapters' test programs share.
 *
 * SPDX-License-Identifier: MIT
 */
#include "adapter-test.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

unsigned test_failures;

bool test_check(bool ok, const char *format, ...)
{
	if (ok)
		return true;
	va_list args;
	va_start(args, format);
	fputs("FAIL: ", stdout);
	vprintf(format, args);
	putchar('\n');
	va_end(args);
	fflush(stdout);
	test_failures++;
	return false;
}

const char *test_mode_name(int flags)
{
	switch (flags & POOL_MODE_MASK) {
	case POOL_SINGLE:
		return "single";
	case POOL_LOCKED:
		return "locked";
	case POOL_PER_THREAD:
		return "per-thread";
	default:
		return "unknown";
	}
}

bool test_set_clean(const pool_set_t *set, const char *what,
                    uint64_t min_allocs, uint64_t fallbacks)
{
	pool_stats_t total;
	if (!test_check(pool_set_stats(set, 0, &total) == 0,
	                "%s: pool_set_stats failed", what))
		return false;
	printf("%s: set served %" PRIu64 " allocations (%" PRIu64
	       " freed), fallback %" PRIu64 " (%" PRIu64
	       " freed), in use at the end %zu\n",
	       what, total.allocs, total.frees, total.fallback_allocs,
	       total.fallback_frees, total.in_use);
	/* Each class that served anything: its block size, the allocations
	 * it served and its peak of blocks in use. */
	printf("%s: classes (block: served, peak)", what);
	for (size_t block = pool_set_class_size(set, 0); block != 0;
	     block *= 2) {
		pool_stats_t one;
		if (pool_set_stats(set, block, &one) != 0)
			break;
		if (one.allocs != 0)
			printf(" %zu: %" PRIu64 ", %zu;", block, one.allocs,
			       one.peak_in_use);
	}
	putchar('\n');
	bool ok = test_check(total.allocs >= min_allocs,
	                     "%s: the set served %" PRIu64
	                     " allocations, fewer than %" PRIu64,
	                     what, total.allocs, min_allocs);
	ok &= test_check(total.in_use == 0 && total.allocs == total.frees,
	                 "%s: %zu blocks still in use", what, total.in_use);
	ok &= test_check(total.fallback_allocs == fallbacks,
	                 "%s: %" PRIu64
	                 " fallback allocations, expected %" PRIu64,
	                 what, total.fallback_allocs, fallbacks);
	ok &= test_check(total.fallback_frees == total.fallback_allocs,
	                 "%s: %" PRIu64 " fallback allocations not freed", what,
	                 total.fallback_allocs - total.fallback_frees);
	fflush(stdout);
	return ok;
}
