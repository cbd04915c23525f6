/*
 * Shared pieces of the Check suites; see testutil.h.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include "testutil.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_VALGRIND_VALGRIND_H
#include <valgrind/valgrind.h>
#endif

/* ------------------------------------------------------------ modes */

const int test_modes[TEST_MODE_COUNT] = {
	POOL_SINGLE,
	POOL_LOCKED,
	POOL_PER_THREAD,
};

/* ------------------------------------------------------------ fixture */

/* Pools made by test_pool(); a test needs two at most, four is plenty. */
#define TEST_POOLS_MAX 4
static pool_t *test_pools[TEST_POOLS_MAX];

void test_setup(void)
{
	memset(test_pools, 0, sizeof(test_pools));
	/* A previous test in the same process (CK_FORK=no) may have left its
	 * recording handler installed. */
	pool_set_error_handler(NULL, NULL);
	errno = 0;
}

void test_teardown(void)
{
	for (size_t i = 0; i < TEST_POOLS_MAX; i++) {
		pool_destroy(test_pools[i]);
		test_pools[i] = NULL;
	}
	pool_set_error_handler(NULL, NULL);
}

TCase *test_tcase(Suite *s, const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	suite_add_tcase(s, tc);
	return tc;
}

pool_t *test_pool(size_t block_size, size_t block_count, int flags)
{
	size_t slot;

	for (slot = 0; slot < TEST_POOLS_MAX; slot++)
		if (test_pools[slot] == NULL)
			break;
	ck_assert_msg(slot < TEST_POOLS_MAX, "test_pool(): too many pools");

	errno = 0;
	pool_t *pool = pool_init(block_size, block_count, flags);
	ck_assert_msg(pool != NULL, "pool_init(%zu, %zu, %s%s) failed: %s",
	              block_size, block_count, mode_name(flags),
	              (flags & POOL_NO_FALLBACK) ? "|POOL_NO_FALLBACK" : "",
	              strerror(errno));
	test_pools[slot] = pool;
	return pool;
}

/* ------------------------------------------------------------ misuse */

/* The recording handler's state; guarded by its mutex because threads
 * tests report from workers. */
static struct misuse_log {
	pthread_mutex_t lock;
	unsigned count;
	unsigned by_error[8]; /* by enum pool_error value */
	unsigned wrong_arg; /* calls whose arg was not &misuse_log */
	struct misuse_report last;
} misuse_log = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void misuse_handler(const pool_t *pool, const char *function,
                           const void *ptr, enum pool_error error, void *arg)
{
	struct misuse_log *log = &misuse_log;

	pthread_mutex_lock(&log->lock);
	if (arg != log)
		log->wrong_arg++;
	log->count++;
	if ((unsigned)error < sizeof(log->by_error) / sizeof(log->by_error[0]))
		log->by_error[(unsigned)error]++;
	log->last.pool = pool;
	log->last.ptr = ptr;
	log->last.error = error;
	snprintf(log->last.function, sizeof(log->last.function), "%s",
	         function != NULL ? function : "(null)");
	pthread_mutex_unlock(&log->lock);
}

void misuse_record(void)
{
	pthread_mutex_lock(&misuse_log.lock);
	misuse_log.count = 0;
	memset(misuse_log.by_error, 0, sizeof(misuse_log.by_error));
	misuse_log.wrong_arg = 0;
	memset(&misuse_log.last, 0, sizeof(misuse_log.last));
	pthread_mutex_unlock(&misuse_log.lock);
	pool_set_error_handler(misuse_handler, &misuse_log);
}

unsigned misuse_count(void)
{
	pthread_mutex_lock(&misuse_log.lock);
	unsigned count = misuse_log.count;
	unsigned wrong_arg = misuse_log.wrong_arg;
	pthread_mutex_unlock(&misuse_log.lock);
	expect(wrong_arg == 0,
	       "the handler got an arg other than the one installed");
	return count;
}

unsigned misuse_count_of(enum pool_error error)
{
	expect((unsigned)error < 8, "no such error code %d", (int)error);
	pthread_mutex_lock(&misuse_log.lock);
	unsigned count = misuse_log.by_error[error];
	pthread_mutex_unlock(&misuse_log.lock);
	return count;
}

struct misuse_report misuse_last(void)
{
	pthread_mutex_lock(&misuse_log.lock);
	struct misuse_report last = misuse_log.last;
	unsigned count = misuse_log.count;
	pthread_mutex_unlock(&misuse_log.lock);
	expect(count > 0, "no misuse was reported");
	return last;
}

/* ------------------------------------------------------------ blocks */

void **take_every_block(pool_t *pool, size_t size)
{
	pool_stats_t st = stats_of(pool);
	void **blocks = calloc(st.block_count, sizeof(*blocks));

	ck_assert_ptr_nonnull(blocks);
	for (size_t i = 0; i < st.block_count; i++) {
		errno = 0;
		blocks[i] = pool_malloc(pool, size);
		expect(blocks[i] != NULL,
		       "%s pool: allocation %zu of %zu failed: %s",
		       mode_name(st.flags), i + 1, st.block_count,
		       strerror(errno));
		expect(pool_owns(pool, blocks[i]) == 1,
		       "%s pool: allocation %zu of %zu (%p) is not a pool "
		       "block although %zu blocks are free",
		       mode_name(st.flags), i + 1, st.block_count, blocks[i],
		       st.block_count - i);
	}
	return blocks;
}

static int compare_pointers(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (void *const *)a;
	uintptr_t y = (uintptr_t) * (void *const *)b;

	return (x > y) - (x < y);
}

char *assert_region_blocks(void **blocks, size_t count, size_t block_size)
{
	ck_assert_uint_gt(count, 0);
	qsort(blocks, count, sizeof(*blocks), compare_pointers);
	for (size_t i = 1; i < count; i++) {
		expect(blocks[i] != blocks[i - 1], "block %p was handed out twice",
		       blocks[i]);
		expect((uintptr_t)blocks[i] - (uintptr_t)blocks[i - 1] ==
		           block_size,
		       "blocks %p and %p: gap of %zu bytes, expected one block "
		       "of %zu (a block missing or outside the region)",
		       blocks[i - 1], blocks[i],
		       (size_t)((uintptr_t)blocks[i] - (uintptr_t)blocks[i - 1]),
		       block_size);
	}
	return blocks[0];
}

void assert_exhausted(pool_t *pool)
{
	pool_stats_t before = stats_of(pool);

	errno = 0;
	void *extra = pool_malloc(pool, 1);
	if (before.flags & POOL_NO_FALLBACK) {
		ck_assert_msg(extra == NULL,
		              "an exhausted POOL_NO_FALLBACK pool served %p",
		              extra);
		ck_assert_int_eq(errno, ENOMEM);
		return;
	}
	ck_assert_msg(extra != NULL, "the fallback failed: %s",
	              strerror(errno));
	ck_assert_msg(pool_owns(pool, extra) == 0,
	              "%s pool: block %p handed out although all %zu blocks "
	              "are in use",
	              mode_name(before.flags), extra, before.block_count);
	pool_stats_t after = stats_of(pool);
	ck_assert_uint_eq(after.fallback_allocs, before.fallback_allocs + 1);
	ck_assert_uint_eq(after.allocs, before.allocs);
	pool_free(pool, extra);
}

void give_back(pool_t *pool, void **blocks, size_t count)
{
	for (size_t i = 0; i < count; i++)
		pool_free(pool, blocks[i]);
	free(blocks);
}

pool_stats_t stats_of(const pool_t *pool)
{
	pool_stats_t st;

	memset(&st, 0xff, sizeof(st));
	errno = 0;
	expect(pool_stats(pool, &st) == 0, "pool_stats() failed: %s",
	       strerror(errno));
	return st;
}

/* ------------------------------------------------------------ misc */

uint64_t test_random(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

void shuffle_pointers(void **items, size_t count, uint64_t seed)
{
	for (size_t i = count; i > 1; i--) {
		size_t j = (size_t)(test_random(&seed) % i);
		void *t = items[i - 1];
		items[i - 1] = items[j];
		items[j] = t;
	}
}

void assert_bytes(const void *p, size_t len, unsigned char value,
                  const char *what)
{
	const unsigned char *bytes = p;

	for (size_t i = 0; i < len; i++)
		expect(bytes[i] == value,
		       "%s: byte %zu of %zu is 0x%02x, expected 0x%02x", what, i,
		       len, bytes[i], value);
}

/* Field 0 of /proc/self/statm is the mapped size, field 1 the resident
 * set, both in pages; 0 when the file cannot be read. */
static size_t statm_bytes(int field)
{
	unsigned long values[2];
	FILE *f = fopen("/proc/self/statm", "r");

	if (f == NULL)
		return 0;
	int n = fscanf(f, "%lu %lu", &values[0], &values[1]);
	fclose(f);
	return n == 2 ? (size_t)values[field] * page_size() : 0;
}

size_t resident_bytes(void)
{
	return statm_bytes(1);
}

size_t virtual_bytes(void)
{
	return statm_bytes(0);
}

size_t page_size(void)
{
	long size = sysconf(_SC_PAGESIZE);

	return size > 0 ? (size_t)size : 4096;
}

bool under_valgrind(void)
{
#ifdef HAVE_VALGRIND_VALGRIND_H
	if (RUNNING_ON_VALGRIND)
		return true;
#endif
	const char *preload = getenv("LD_PRELOAD");
	return preload != NULL && strstr(preload, "valgrind") != NULL;
}
