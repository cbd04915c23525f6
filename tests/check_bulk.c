/*
 * The "bulk" suite: pool_malloc_bulk() and pool_free_bulk() in every
 * mode.  A batch is all or nothing (exhaustion under POOL_NO_FALLBACK, a
 * failing fallback: nothing allocated, nothing lost), spills into the
 * fallback like single calls, frees in order with NULL entries skipped,
 * and misuse inside a batch is reported per pointer while the rest of the
 * batch is freed.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define BATCH 100

/* Asserts out[0..n) are n distinct pointers, each writable for size
 * bytes, and returns how many the pool owns. */
static size_t check_batch(pool_t *pool, void **out, size_t n, size_t size)
{
	size_t owned = 0;
	for (size_t i = 0; i < n; i++) {
		ck_assert_ptr_nonnull(out[i]);
		memset(out[i], (int)(i & 0xff), size);
		owned += (size_t)pool_owns(pool, out[i]);
	}
	for (size_t i = 0; i < n; i++)
		assert_bytes(out[i], size, (unsigned char)(i & 0xff),
		             "an object of a batch");
	return owned;
}

START_TEST(test_bulk_round_trip)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(64, 4 * BATCH, mode);
	void *out[BATCH];

	/* Twice: from never-used blocks, then from the free list. */
	for (int round = 0; round < 2; round++) {
		ck_assert_uint_eq(pool_malloc_bulk(pool, 64, BATCH, out),
		                  BATCH);
		ck_assert_uint_eq(check_batch(pool, out, BATCH, 64), BATCH);
		pool_stats_t st = stats_of(pool);
		ck_assert_uint_eq(st.in_use, BATCH);
		ck_assert_uint_eq(st.allocs, (uint64_t)(round + 1) * BATCH);
		pool_free_bulk(pool, BATCH, out);
		st = stats_of(pool);
		ck_assert_uint_eq(st.in_use, 0);
		ck_assert_uint_eq(st.frees, (uint64_t)(round + 1) * BATCH);
	}
	/* Blocks of a batch go back one by one too, and single blocks in a
	 * batch. */
	ck_assert_uint_eq(pool_malloc_bulk(pool, 1, BATCH, out), BATCH);
	for (size_t i = 0; i < BATCH; i++)
		pool_free(pool, out[i]);
	for (size_t i = 0; i < BATCH; i++)
		out[i] = pool_malloc(pool, 64);
	pool_free_bulk(pool, BATCH, out);
	ck_assert_uint_eq(stats_of(pool).in_use, 0);
}
END_TEST

START_TEST(test_bulk_arguments)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(64, 16, mode);
	void *out[4] = {NULL};

	errno = 1234;
	ck_assert_uint_eq(pool_malloc_bulk(pool, 64, 0, out), 0);
	ck_assert_int_eq(errno, 1234); /* n == 0 is no error */
	ck_assert_uint_eq(pool_malloc_bulk(pool, 64, 0, NULL), 0);
	ck_assert_int_eq(errno, 1234);
	ck_assert_uint_eq(pool_malloc_bulk(NULL, 64, 4, out), 0);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_uint_eq(pool_malloc_bulk(pool, 64, 4, NULL), 0);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_uint_eq(stats_of(pool).allocs, 0);

	errno = 1234;
	pool_free_bulk(pool, 0, NULL);
	ck_assert_int_eq(errno, 1234);
	pool_free_bulk(NULL, 4, out);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	pool_free_bulk(pool, 4, NULL);
	ck_assert_int_eq(errno, EINVAL);
	/* NULL entries do nothing. */
	misuse_record();
	pool_free_bulk(pool, 4, out);
	ck_assert_uint_eq(misuse_count(), 0);
	ck_assert_uint_eq(stats_of(pool).frees, 0);
}
END_TEST

/* Past the pool's blocks a batch spills into the fallback, as single
 * calls would; too big a size is all fallback. */
START_TEST(test_bulk_spills_to_fallback)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(64, 16, mode);
	void *out[40];

	ck_assert_uint_eq(pool_malloc_bulk(pool, 64, 40, out), 40);
	ck_assert_uint_eq(check_batch(pool, out, 40, 64), 16);
	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.in_use, 16);
	ck_assert_uint_eq(st.fallback_allocs, 24);
	pool_free_bulk(pool, 40, out);
	st = stats_of(pool);
	ck_assert_uint_eq(st.in_use, 0);
	ck_assert_uint_eq(st.fallback_frees, 24);

	ck_assert_uint_eq(pool_malloc_bulk(pool, 65, 8, out), 8);
	ck_assert_uint_eq(check_batch(pool, out, 8, 65), 0);
	pool_free_bulk(pool, 8, out);
	st = stats_of(pool);
	ck_assert_uint_eq(st.fallback_allocs, 32);
	ck_assert_uint_eq(st.fallback_frees, 32);
}
END_TEST

/* POOL_NO_FALLBACK: a batch larger than what is free takes nothing. */
START_TEST(test_bulk_all_or_nothing)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(64, 16, mode | POOL_NO_FALLBACK);
	void *held[10], *out[10];

	for (size_t i = 0; i < 10; i++)
		held[i] = pool_malloc(pool, 64);
	errno = 0;
	ck_assert_uint_eq(pool_malloc_bulk(pool, 64, 7, out), 0);
	ck_assert_int_eq(errno, ENOMEM);
	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.in_use, 10);
	ck_assert_uint_eq(st.fallback_allocs, 0);
	/* What the failed batch took went back: all 6 are still there. */
	ck_assert_uint_eq(pool_malloc_bulk(pool, 64, 6, out), 6);
	ck_assert_uint_eq(check_batch(pool, out, 6, 64), 6);
	assert_exhausted(pool);
	pool_free_bulk(pool, 6, out);
	pool_free_bulk(pool, 10, held);
	ck_assert_uint_eq(stats_of(pool).in_use, 0);
}
END_TEST

/* The counters a failed batch must leave alone. */
static void assert_counts(pool_t *pool, uint64_t allocs, uint64_t frees,
                          size_t peak, const char *when)
{
	pool_stats_t st = stats_of(pool);
	/* POOL_PER_THREAD's peak is a bound, the blocks ever touched: a
	 * failed batch touched them. */
	bool peak_exact = (st.flags & POOL_MODE_MASK) != POOL_PER_THREAD;
	ck_assert_msg(st.allocs == allocs && st.frees == frees &&
	                  (!peak_exact || st.peak_in_use == peak) &&
	                  st.peak_in_use >= peak && st.in_use == allocs - frees,
	              "%s: allocs %llu frees %llu in use %zu peak %zu, "
	              "expected %llu, %llu, %llu, %zu",
	              when, (unsigned long long)st.allocs,
	              (unsigned long long)st.frees, st.in_use, st.peak_in_use,
	              (unsigned long long)allocs, (unsigned long long)frees,
	              (unsigned long long)(allocs - frees), peak);
}

/*
 * A batch that fails takes nothing, and counts nothing either: allocs,
 * frees and the peak are those from before it, on a fresh pool and on one
 * in use, with and without the debug fill.
 */
START_TEST(test_bulk_failed_uncounted)
{
	int mode = test_modes[_i];
	const int options[] = {0, POOL_DEBUG_FILL};

	for (size_t o = 0; o < sizeof options / sizeof options[0]; o++) {
		pool_t *pool =
		    test_pool(64, 16, mode | POOL_NO_FALLBACK | options[o]);
		void *held[5], *out[17];

		ck_assert_uint_eq(pool_malloc_bulk(pool, 64, 17, out), 0);
		assert_counts(pool, 0, 0, 0, "a failed batch of 17 of 16");
		for (size_t i = 0; i < 5; i++)
			ck_assert_ptr_nonnull(held[i] = pool_malloc(pool, 64));
		pool_free(pool, held[3]);
		pool_free(pool, held[4]);
		assert_counts(pool, 5, 2, 5, "5 taken, 2 freed");
		errno = 0;
		ck_assert_uint_eq(pool_malloc_bulk(pool, 64, 14, out), 0);
		ck_assert_int_eq(errno, ENOMEM);
		assert_counts(pool, 5, 2, 5, "a failed batch of 14 of 13");
		/* What it took went back whole: every block again, calloc's
		 * read zero. */
		ck_assert_uint_eq(pool_malloc_bulk(pool, 64, 13, out), 13);
		ck_assert_uint_eq(check_batch(pool, out, 13, 64), 13);
		assert_counts(pool, 18, 2, 16, "the batch of 13");
		assert_exhausted(pool);
		pool_free_bulk(pool, 13, out);
		for (size_t i = 0; i < 13; i++) {
			void *p = pool_calloc(pool, 1, 64);
			ck_assert_ptr_nonnull(p);
			assert_bytes(p, 64, 0, "pool_calloc() after a batch");
			out[i] = p;
		}
		pool_free_bulk(pool, 13, out);
		pool_free_bulk(pool, 3, held);
		assert_counts(pool, 31, 31, 16, "all back");
	}
}
END_TEST

/* Every mode takes a failed batch back uncounted (POOL_PER_THREAD's peak,
 * a bound, excepted). */
#define UNCOUNTED_MODES TEST_MODE_COUNT

/* A fallback allocation that fails halfway: nothing allocated, from the
 * pool or the fallback. */
START_TEST(test_bulk_fallback_fails)
{
	int mode = test_modes[_i];
	void *out[12];

	ck_assert_int_eq(setenv("SHIFTPOOL_DEBUG", "fail-fallback=3", 1), 0);
	pool_t *pool = test_pool(64, 4, mode);
	unsetenv("SHIFTPOOL_DEBUG");
	errno = 0;
	ck_assert_uint_eq(pool_malloc_bulk(pool, 64, 12, out), 0);
	ck_assert_int_eq(errno, ENOMEM);
	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.in_use, 0);
	ck_assert_uint_eq(st.fallback_allocs, 2);
	ck_assert_uint_eq(st.fallback_frees, 2);
	/* Only the third failed: the next batch is whole. */
	ck_assert_uint_eq(pool_malloc_bulk(pool, 64, 12, out), 12);
	pool_free_bulk(pool, 12, out);
	ck_assert_uint_eq(stats_of(pool).in_use, 0);
}
END_TEST

/* Misuse inside a batch: each bad pointer reported with pool_free_bulk's
 * name and left alone; every good one freed. */
START_TEST(test_bulk_free_misuse)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(64, 16, mode);
	pool_t *other = test_pool(64, 16, mode);
	char *a = pool_malloc(pool, 64), *b = pool_malloc(pool, 64);
	char *c = pool_malloc(pool, 64), *theirs = pool_malloc(other, 64);
	void *fallback = pool_malloc(pool, 1000);
	ck_assert(pool_owns(pool, a) && pool_owns(pool, b));
	ck_assert(pool_owns(other, theirs) && !pool_owns(pool, fallback));

	misuse_record();
	void *batch[] = {a, a, c + 8, NULL, theirs, fallback, b, c};
	pool_free_bulk(pool, sizeof batch / sizeof batch[0], batch);
	ck_assert_uint_eq(misuse_count(), 3);
	ck_assert_uint_eq(misuse_count_of(POOL_ERROR_DOUBLE_FREE), 1);
	ck_assert_uint_eq(misuse_count_of(POOL_ERROR_INVALID_POINTER), 1);
	ck_assert_uint_eq(misuse_count_of(POOL_ERROR_WRONG_POOL), 1);
	struct misuse_report last = misuse_last();
	ck_assert_str_eq(last.function, "pool_free_bulk");
	ck_assert_ptr_eq(last.ptr, theirs);

	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.in_use, 0);
	ck_assert_uint_eq(st.frees, 3);
	ck_assert_uint_eq(st.fallback_frees, 1);
	ck_assert_uint_eq(stats_of(other).in_use, 1);
	pool_free(other, theirs);
}
END_TEST

struct handoff {
	pool_t *pool;
	void **blocks;
	size_t n;
};

static void *free_batch_thread(void *arg)
{
	struct handoff *h = arg;
	pool_free_bulk(h->pool, h->n, h->blocks);
	return NULL;
}

/* A batch taken by one thread and freed by another. */
START_TEST(test_bulk_cross_thread)
{
	int mode = test_modes[_i + TEST_FIRST_CONCURRENT_MODE];
	pool_t *pool = test_pool(128, 1024, mode | POOL_NO_FALLBACK);
	void *out[BATCH];

	for (int round = 0; round < 20; round++) {
		ck_assert_uint_eq(pool_malloc_bulk(pool, 128, BATCH, out),
		                  BATCH);
		ck_assert_uint_eq(check_batch(pool, out, BATCH, 128), BATCH);
		struct handoff h = {pool, out, BATCH};
		pthread_t t;
		ck_assert_int_eq(
		    pthread_create(&t, NULL, free_batch_thread, &h), 0);
		ck_assert_int_eq(pthread_join(t, NULL), 0);
	}
	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.in_use, 0);
	ck_assert_uint_eq(st.allocs, 20 * BATCH);
	void **all = take_every_block(pool, 128);
	give_back(pool, all, 1024);
}
END_TEST

Suite *bulk_suite(void)
{
	Suite *s = suite_create("bulk");

	TCase *tc = test_tcase(s, "bulk");
	test_add_every_mode(tc, test_bulk_round_trip);
	test_add_every_mode(tc, test_bulk_arguments);
	test_add_every_mode(tc, test_bulk_spills_to_fallback);
	test_add_every_mode(tc, test_bulk_all_or_nothing);
	test_add_every_mode(tc, test_bulk_fallback_fails);
	tcase_add_loop_test(tc, test_bulk_failed_uncounted, 0, UNCOUNTED_MODES);
	test_add_every_mode(tc, test_bulk_free_misuse);
	test_add_concurrent_modes(tc, test_bulk_cross_thread);
	return s;
}
