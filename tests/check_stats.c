/*
 * pool_stats(), pool_owns(), pool_block_size(), shiftpool_version(): every
 * counter after a known sequence, and the NULL arguments.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "testutil.h"

START_TEST(test_fresh)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(50, 7, mode);
	pool_stats_t st = stats_of(pool);

	ck_assert_uint_eq(st.block_size, 64);
	ck_assert_uint_eq(st.block_count, 7);
	ck_assert_uint_eq(st.in_use, 0);
	ck_assert_uint_eq(st.peak_in_use, 0);
	ck_assert_uint_eq(st.allocs, 0);
	ck_assert_uint_eq(st.frees, 0);
	ck_assert_uint_eq(st.fallback_allocs, 0);
	ck_assert_uint_eq(st.fallback_frees, 0);
	ck_assert_int_eq(st.flags, mode);
}
END_TEST

/* Asserts every counter at once, so a failure names the step. */
#define ASSERT_COUNTERS(step, st, a, f, use, peak, fa, ff)                    \
	do {                                                                  \
		ck_assert_msg((st).allocs == (a) && (st).frees == (f) &&      \
		                  (st).in_use == (use) &&                     \
		                  (st).peak_in_use == (peak) &&               \
		                  (st).fallback_allocs == (fa) &&             \
		                  (st).fallback_frees == (ff),                \
		              "%s: allocs %llu frees %llu in_use %zu peak %zu "  \
		              "fallback %llu/%llu; expected %d %d %d %d %d/%d", \
		              step, (unsigned long long)(st).allocs,          \
		              (unsigned long long)(st).frees, (st).in_use,    \
		              (st).peak_in_use,                               \
		              (unsigned long long)(st).fallback_allocs,       \
		              (unsigned long long)(st).fallback_frees, a, f,  \
		              use, peak, fa, ff);                             \
	} while (0)

START_TEST(test_sequence)
{
	int mode = test_modes[_i % TEST_MODE_COUNT];
	int flags = mode | (_i >= TEST_MODE_COUNT ? POOL_NO_FALLBACK : 0);
	bool fallback = !(flags & POOL_NO_FALLBACK);
	pool_t *pool = test_pool(64, 4, flags);
	pool_stats_t st;

	void *a = pool_malloc(pool, 1);
	void *b = pool_calloc(pool, 2, 8);
	char *c = pool_strdup(pool, "counted");
	st = stats_of(pool);
	ASSERT_COUNTERS("three allocations", st, 3, 0, 3, 3, 0, 0);

	pool_free(pool, b);
	st = stats_of(pool);
	ASSERT_COUNTERS("one free", st, 3, 1, 2, 3, 0, 0);

	void *d = pool_malloc(pool, 65); /* oversize */
	ck_assert(fallback ? d != NULL : d == NULL);
	void *e = pool_malloc(pool, 64);
	void *f = pool_malloc(pool, 64);
	void *g = pool_malloc(pool, 8); /* the pool is full */
	ck_assert(fallback ? g != NULL : g == NULL);
	st = stats_of(pool);
	ASSERT_COUNTERS("full", st, 5, 1, 4, 4, fallback ? 2 : 0, 0);

	pool_free(pool, d);
	pool_free(pool, g);
	st = stats_of(pool);
	ASSERT_COUNTERS("fallbacks freed", st, 5, 1, 4, 4, fallback ? 2 : 0,
	                fallback ? 2 : 0);

	pool_free(pool, a);
	pool_free(pool, c);
	pool_free(pool, e);
	st = stats_of(pool);
	ASSERT_COUNTERS("three more freed", st, 5, 4, 1, 4, fallback ? 2 : 0,
	                fallback ? 2 : 0);

	/* The peak stays where it was. */
	void *h = pool_malloc(pool, 3);
	pool_free(pool, h);
	pool_free(pool, f);
	st = stats_of(pool);
	ASSERT_COUNTERS("all freed", st, 6, 6, 0, 4, fallback ? 2 : 0,
	                fallback ? 2 : 0);
	ck_assert_uint_eq(st.block_size, 64);
	ck_assert_uint_eq(st.block_count, 4);
	ck_assert_int_eq(st.flags, flags);
}
END_TEST

START_TEST(test_peak)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(32, 64, mode);
	void *held[40];

	/* Rise to 40, fall to 10, rise to 30: the peak is 40. */
	for (int i = 0; i < 40; i++)
		held[i] = pool_malloc(pool, 32);
	for (int i = 10; i < 40; i++)
		pool_free(pool, held[i]);
	for (int i = 10; i < 30; i++)
		held[i] = pool_malloc(pool, 32);
	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.in_use, 30);
	ck_assert_uint_eq(st.peak_in_use, 40);
	for (int i = 0; i < 30; i++)
		pool_free(pool, held[i]);
	st = stats_of(pool);
	ck_assert_uint_eq(st.in_use, 0);
	ck_assert_uint_eq(st.peak_in_use, 40);
}
END_TEST

START_TEST(test_peak_refill)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(32, 64, mode);
	void *held[20];

	/* The same twenty blocks' worth, three times over, freed in reverse:
	 * in_use never passes 20, so neither may the peak, however the
	 * blocks are spread over the region. */
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 20; i++)
			held[i] = pool_malloc(pool, 32);
		for (int i = 19; i >= 0; i--)
			pool_free(pool, held[i]);
		pool_stats_t st = stats_of(pool);
		ck_assert_msg(st.peak_in_use == 20,
		              "%s pool, round %d: peak_in_use %zu, but in_use "
		              "never exceeded 20",
		              mode_name(mode), round, st.peak_in_use);
	}
}
END_TEST

START_TEST(test_stats_null)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(64, 4, mode);
	pool_stats_t st;

	errno = 0;
	ck_assert_int_eq(pool_stats(NULL, &st), -1);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_int_eq(pool_stats(pool, NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_int_eq(pool_stats(NULL, NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

START_TEST(test_owns)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(64, 4, mode);
	pool_t *other = test_pool(64, 4, mode);
	void *block = pool_malloc(pool, 1);
	void *theirs = pool_malloc(other, 1);
	void *outside = pool_malloc(pool, 100);
	int local;

	ck_assert_int_eq(pool_owns(pool, block), 1);
	ck_assert_int_eq(pool_owns(other, theirs), 1);
	/* Another pool's block, a fallback pointer, a stack address. */
	ck_assert_int_eq(pool_owns(pool, theirs), 0);
	ck_assert_int_eq(pool_owns(other, block), 0);
	ck_assert_int_eq(pool_owns(pool, outside), 0);
	ck_assert_int_eq(pool_owns(pool, &local), 0);
	/* NULL either way. */
	ck_assert_int_eq(pool_owns(NULL, block), 0);
	ck_assert_int_eq(pool_owns(pool, NULL), 0);
	ck_assert_int_eq(pool_owns(NULL, NULL), 0);

	pool_free(pool, block);
	pool_free(other, theirs);
	pool_free(pool, outside);
}
END_TEST

START_TEST(test_block_size)
{
	int mode = test_modes[_i];

	ck_assert_uint_eq(pool_block_size(NULL), 0);
	ck_assert_uint_eq(pool_block_size(test_pool(200, 3, mode)), 256);
}
END_TEST

START_TEST(test_version)
{
	ck_assert_ptr_nonnull(shiftpool_version());
	ck_assert_str_eq(shiftpool_version(), SHIFTPOOL_VERSION_STRING);
	ck_assert_str_eq(SHIFTPOOL_VERSION_STRING, PACKAGE_VERSION);
}
END_TEST

Suite *stats_suite(void)
{
	Suite *s = suite_create("stats");
	TCase *tc;

	tc = test_tcase(s, "counters");
	test_add_every_mode(tc, test_fresh);
	/* Loop index: mode, then mode with POOL_NO_FALLBACK. */
	tcase_add_loop_test(tc, test_sequence, 0, 2 * TEST_MODE_COUNT);
	test_add_every_mode(tc, test_peak);
	test_add_every_mode(tc, test_peak_refill);

	tc = test_tcase(s, "null");
	test_add_every_mode(tc, test_stats_null);

	tc = test_tcase(s, "queries");
	test_add_every_mode(tc, test_owns);
	test_add_every_mode(tc, test_block_size);
	tcase_add_test(tc, test_version);

	return s;
}
