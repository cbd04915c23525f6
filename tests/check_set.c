/*
 * The "set" suite: pool sets in every mode.  Each size goes to the
 * smallest class that fits and is served there until that class is
 * exhausted; pool_set_free() takes back every pointer (blocks of any
 * class, fallback allocations); realloc moves across classes keeping the
 * contents; misuse (a double free, a pointer into a slice that is no
 * block, another set's block) is reported and never reaches free();
 * arguments are checked.
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

#define MIN_BLOCK 16
#define MAX_BLOCK 4096
#define PER_CLASS ((size_t)1 << 20)

static pool_set_t *test_set(int flags)
{
	errno = 0;
	pool_set_t *set = pool_set_init(MIN_BLOCK, MAX_BLOCK, PER_CLASS, flags);
	ck_assert_msg(set != NULL, "pool_set_init(%#x): %s", (unsigned)flags,
	              strerror(errno));
	return set;
}

static pool_stats_t class_stats(const pool_set_t *set, size_t block_size)
{
	pool_stats_t st;
	ck_assert_int_eq(pool_set_stats(set, block_size, &st), 0);
	ck_assert_uint_eq(st.block_size, block_size);
	return st;
}

/* The smallest power of two >= size, at least MIN_BLOCK. */
static size_t class_of(size_t size)
{
	size_t c = MIN_BLOCK;
	while (c < size)
		c <<= 1;
	return c;
}

/* Every size from 1 to MAX_BLOCK goes to its class. */
START_TEST(test_set_classes)
{
	int mode = test_modes[_i];
	pool_set_t *set = test_set(mode | POOL_NO_FALLBACK);

	for (size_t size = 1; size <= MAX_BLOCK; size += size < 64 ? 1 : 61) {
		size_t c = class_of(size);
		pool_stats_t before = class_stats(set, c);
		char *p = pool_set_malloc(set, size);
		ck_assert_ptr_nonnull(p);
		memset(p, 0x5a, size);
		pool_stats_t after = class_stats(set, c);
		ck_assert_msg(after.in_use == before.in_use + 1,
		              "size %zu not served by the %zu B class", size,
		              c);
		pool_set_free(set, p);
		ck_assert_uint_eq(class_stats(set, c).in_use, before.in_use);
	}
	pool_stats_t total;
	ck_assert_int_eq(pool_set_stats(set, 0, &total), 0);
	ck_assert_uint_eq(total.in_use, 0);
	ck_assert_uint_eq(total.fallback_allocs, 0);
	pool_set_destroy(set);
}
END_TEST

/* A class serves every request that fits it until it is exhausted; then
 * the fallback (or ENOMEM); its blocks all go back. */
START_TEST(test_set_class_until_exhausted)
{
	int mode = test_modes[_i];
	pool_set_t *set = test_set(mode);
	size_t count = class_stats(set, 64).block_count;
	ck_assert_uint_ge(count, PER_CLASS / 64 - 4096 / 64);
	void **p = malloc((count + 1) * sizeof *p);
	ck_assert_ptr_nonnull(p);

	for (size_t i = 0; i < count; i++) {
		p[i] = pool_set_malloc(set, 33 + i % 32);
		ck_assert_ptr_nonnull(p[i]);
	}
	pool_stats_t st = class_stats(set, 64);
	ck_assert_uint_eq(st.in_use, count);
	ck_assert_uint_eq(st.fallback_allocs, 0);
	p[count] = pool_set_malloc(set, 64);
	ck_assert_ptr_nonnull(p[count]);
	ck_assert_uint_eq(class_stats(set, 64).fallback_allocs, 1);
	/* Other classes are not touched by it. */
	ck_assert_uint_eq(class_stats(set, 128).allocs, 0);
	for (size_t i = 0; i <= count; i++)
		pool_set_free(set, p[i]);
	pool_stats_t total;
	ck_assert_int_eq(pool_set_stats(set, 0, &total), 0);
	ck_assert_uint_eq(total.in_use, 0);
	ck_assert_uint_eq(total.fallback_allocs, total.fallback_frees);
	free(p);
	pool_set_destroy(set);
}
END_TEST

START_TEST(test_set_above_max)
{
	int mode = test_modes[_i];
	pool_set_t *set = test_set(mode);
	char *big = pool_set_malloc(set, MAX_BLOCK + 1);
	ck_assert_ptr_nonnull(big);
	memset(big, 1, MAX_BLOCK + 1);
	pool_stats_t total;
	ck_assert_int_eq(pool_set_stats(set, 0, &total), 0);
	ck_assert_uint_eq(total.fallback_allocs, 1);
	ck_assert_uint_eq(total.in_use, 0);
	pool_set_free(set, big);
	ck_assert_int_eq(pool_set_stats(set, 0, &total), 0);
	ck_assert_uint_eq(total.fallback_frees, 1);
	pool_set_destroy(set);

	set = test_set(mode | POOL_NO_FALLBACK);
	errno = 0;
	ck_assert_ptr_null(pool_set_malloc(set, MAX_BLOCK + 1));
	ck_assert_int_eq(errno, ENOMEM);
	volatile size_t huge = SIZE_MAX / 2;
	errno = 0;
	ck_assert_ptr_null(pool_set_calloc(set, huge, 4));
	ck_assert_int_eq(errno, ENOMEM);
	pool_set_destroy(set);
}
END_TEST

/* realloc moves across classes, up and down, and to the fallback and
 * back, keeping the contents. */
START_TEST(test_set_realloc)
{
	int mode = test_modes[_i];
	pool_set_t *set = test_set(mode);
	static const size_t sizes[] = {10, 12, 1000, 100, 5000, 3000, 20, 17};
	char *p = pool_set_realloc(set, NULL, 1);
	ck_assert_ptr_nonnull(p);
	p[0] = 'a';
	size_t kept = 1;
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		size_t size = sizes[i];
		char *q = pool_set_realloc(set, p, size);
		ck_assert_ptr_nonnull(q);
		for (size_t k = 0; k < (kept < size ? kept : size); k++)
			ck_assert_int_eq(q[k], (char)('a' + k % 26));
		for (size_t k = 0; k < size; k++)
			q[k] = (char)('a' + k % 26);
		kept = size;
		p = q;
		pool_stats_t total;
		ck_assert_int_eq(pool_set_stats(set, 0, &total), 0);
		ck_assert_uint_eq(total.in_use, size > MAX_BLOCK ? 0 : 1);
		if (size <= MAX_BLOCK)
			ck_assert_uint_eq(
			    class_stats(set, class_of(size)).in_use, 1);
	}
	ck_assert_ptr_null(pool_set_realloc(set, p, 0));
	pool_stats_t total;
	ck_assert_int_eq(pool_set_stats(set, 0, &total), 0);
	ck_assert_uint_eq(total.in_use, 0);
	ck_assert_uint_eq(total.fallback_allocs, total.fallback_frees);

	char *s = pool_set_strdup(set, "pool sets");
	ck_assert_str_eq(s, "pool sets");
	char *z = pool_set_calloc(set, 10, 30);
	assert_bytes(z, 300, 0, "pool_set_calloc");
	pool_set_free(set, s);
	pool_set_free(set, z);
	pool_set_free(set, NULL);
	errno = 0;
	ck_assert_ptr_null(pool_set_strdup(set, NULL));
	ck_assert_int_eq(errno, EINVAL);
	pool_set_destroy(set);
}
END_TEST

/* Misuse through a set: reported, nothing freed, nothing handed to
 * free(). */
START_TEST(test_set_misuse)
{
	int mode = test_modes[_i];
	pool_set_t *set = test_set(mode);
	pool_set_t *other = test_set(mode);
	char *a = pool_set_malloc(set, 100);
	char *theirs = pool_set_malloc(other, 100);

	misuse_record();
	pool_set_free(set, a + 8);
	ck_assert_uint_eq(misuse_count_of(POOL_ERROR_INVALID_POINTER), 1);
	pool_set_free(set, theirs);
	ck_assert_uint_eq(misuse_count_of(POOL_ERROR_WRONG_POOL), 1);
	pool_set_free(set, a);
	pool_set_free(set, a);
	ck_assert_uint_eq(misuse_count_of(POOL_ERROR_DOUBLE_FREE), 1);
	/* The last page of a slice is its guard: inside the set, no block.
	 * A request of the 64 B class tells where its slice is; the slice
	 * before it is the 32 B class's. */
	char *b = pool_set_malloc(set, 64);
	uintptr_t slice = (uintptr_t)b & ~(uintptr_t)(PER_CLASS - 1);
	pool_set_free(set, (void *)(slice + PER_CLASS - page_size()));
	pool_set_free(set, (void *)(slice - 64));
	ck_assert_uint_eq(misuse_count(), 5);
	ck_assert_str_eq(misuse_last().function, "pool_free");
	pool_set_free(set, b);
	ck_assert_uint_eq(misuse_count(), 5);
	pool_stats_t total;
	ck_assert_int_eq(pool_set_stats(set, 0, &total), 0);
	ck_assert_uint_eq(total.in_use, 0);
	ck_assert_uint_eq(total.fallback_frees, 0);
	pool_set_free(other, theirs);
	pool_set_destroy(other);
	pool_set_destroy(set);
}
END_TEST

START_TEST(test_set_arguments)
{
	int mode = test_modes[_i];
	static const size_t bad[][2] = {{0, 64},  {8, 64},   {24, 64},
	                                {64, 96}, {128, 64}, {16, 0}};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		errno = 0;
		ck_assert_ptr_null(
		    pool_set_init(bad[i][0], bad[i][1], PER_CLASS, mode));
		ck_assert_int_eq(errno, EINVAL);
	}
	errno = 0;
	ck_assert_ptr_null(pool_set_init(16, 64, 0, mode));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(pool_set_init(16, 64, PER_CLASS, mode | 0x40000));
	ck_assert_int_eq(errno, EINVAL);
	pool_set_destroy(NULL);

	/* A tiny bytes_per_class still holds a block of the largest class. */
	pool_set_t *set = pool_set_init(16, 8192, 1, mode | POOL_NO_FALLBACK);
	ck_assert_ptr_nonnull(set);
	void *p = pool_set_malloc(set, 8192);
	ck_assert_ptr_nonnull(p);
	pool_stats_t st;
	errno = 0;
	ck_assert_int_eq(pool_set_stats(set, 100, &st), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(pool_set_stats(set, 32768, &st), -1);
	ck_assert_int_eq(pool_set_stats(NULL, 0, &st), -1);
	ck_assert_int_eq(pool_set_stats(set, 0, NULL), -1);
	ck_assert_int_eq(pool_set_stats(set, 0, &st), 0);
	ck_assert_uint_eq(st.in_use, 1);
	ck_assert_int_eq(st.flags, mode | POOL_NO_FALLBACK);
	pool_set_free(set, p);
	pool_set_destroy(set);
}
END_TEST

struct set_worker {
	pool_set_t *set;
	void **mine;   /* allocated by this thread */
	void **theirs; /* to free: allocated by another */
	size_t n;
	unsigned seed;
};

static void *set_worker_fn(void *arg)
{
	struct set_worker *w = arg;
	for (size_t i = 0; i < w->n; i++)
		pool_set_free(w->set, w->theirs[i]);
	uint64_t rng = w->seed;
	for (size_t i = 0; i < w->n; i++) {
		size_t size = 1 + (size_t)(test_random(&rng) % (2 * MAX_BLOCK));
		w->mine[i] = pool_set_malloc(w->set, size);
		ck_assert_ptr_nonnull(w->mine[i]);
		memset(w->mine[i], (int)i, size < 16 ? size : 16);
	}
	return NULL;
}

/* Threads allocate every size and free each other's. */
START_TEST(test_set_threads)
{
	int mode = test_modes[_i + TEST_FIRST_CONCURRENT_MODE];
	enum { T = 4, N = 2000, ROUNDS = 4 };
	pool_set_t *set = test_set(mode);
	static void *blocks[ROUNDS + 1][T][N];
	struct set_worker w[T];
	for (int round = 0; round < ROUNDS; round++) {
		pthread_t th[T];
		for (int t = 0; t < T; t++) {
			w[t] = (struct set_worker){
			    set, blocks[round + 1][t],
			    round ? blocks[round][(t + 1) % T] : blocks[0][t],
			    N, (unsigned)(round * T + t + 1)};
			ck_assert_int_eq(
			    pthread_create(&th[t], NULL, set_worker_fn, &w[t]),
			    0);
		}
		for (int t = 0; t < T; t++)
			ck_assert_int_eq(pthread_join(th[t], NULL), 0);
	}
	for (int t = 0; t < T; t++)
		for (int i = 0; i < N; i++)
			pool_set_free(set, blocks[ROUNDS][t][i]);
	pool_stats_t total;
	ck_assert_int_eq(pool_set_stats(set, 0, &total), 0);
	ck_assert_uint_eq(total.in_use, 0);
	ck_assert_uint_eq(total.allocs, total.frees);
	ck_assert_uint_eq(total.fallback_allocs, total.fallback_frees);
	ck_assert_uint_eq(total.allocs + total.fallback_allocs,
	                  (uint64_t)ROUNDS * T * N);
	pool_set_destroy(set);
}
END_TEST

Suite *set_suite(void)
{
	Suite *s = suite_create("set");

	TCase *tc = test_tcase(s, "set");
	test_add_every_mode(tc, test_set_classes);
	test_add_every_mode(tc, test_set_class_until_exhausted);
	test_add_every_mode(tc, test_set_above_max);
	test_add_every_mode(tc, test_set_realloc);
	test_add_every_mode(tc, test_set_misuse);
	test_add_every_mode(tc, test_set_arguments);
	test_add_concurrent_modes(tc, test_set_threads);
	return s;
}
