/*
 * pool_free(): NULL, fallback pointers back to free(), and every block
 * reachable again whatever the order of the frees.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "testutil.h"

#define BLOCK 64
#define COUNT 100

START_TEST(test_free_null)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(BLOCK, COUNT, mode);
	void *held = pool_malloc(pool, 1);

	misuse_record();
	pool_stats_t before = stats_of(pool);
	errno = 0;
	pool_free(pool, NULL);
	ck_assert_int_eq(errno, 0);
	pool_stats_t after = stats_of(pool);

	ck_assert_uint_eq(misuse_count(), 0);
	ck_assert_uint_eq(after.frees, before.frees);
	ck_assert_uint_eq(after.fallback_frees, before.fallback_frees);
	ck_assert_uint_eq(after.in_use, before.in_use);
	pool_free(pool, held);
}
END_TEST

START_TEST(test_free_fallback)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(BLOCK, 2, mode);

	misuse_record();
	void *big = pool_malloc(pool, BLOCK + 1);
	void *a = pool_malloc(pool, 1);
	void *b = pool_malloc(pool, 1);
	void *spill = pool_malloc(pool, 1); /* the pool is full */
	ck_assert_int_eq(pool_owns(pool, big), 0);
	ck_assert_int_eq(pool_owns(pool, spill), 0);

	pool_free(pool, big);
	pool_free(pool, spill);
	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.fallback_allocs, 2);
	ck_assert_uint_eq(st.fallback_frees, 2);
	/* They went to free(), not onto the pool's free list. */
	ck_assert_uint_eq(st.frees, 0);
	ck_assert_uint_eq(st.in_use, 2);
	ck_assert_uint_eq(misuse_count(), 0);
	pool_free(pool, a);
	pool_free(pool, b);
	void **blocks = take_every_block(pool, BLOCK);
	assert_exhausted(pool);
	give_back(pool, blocks, 2);
}
END_TEST

/* What pool_free() calls and may not leave its errno behind: a handler
 * and a fallback's free that each set it. */
static unsigned errno_reports;

static void errno_setting_handler(const pool_t *pool, const char *function,
                                  const void *ptr, enum pool_error error,
                                  void *arg)
{
	(void)pool, (void)function, (void)ptr, (void)error, (void)arg;
	errno_reports++;
	errno = EIO;
}

static void *plain_malloc(size_t size, void *arg)
{
	(void)arg;
	return malloc(size);
}

static void *plain_calloc(size_t nmemb, size_t size, void *arg)
{
	(void)arg;
	return calloc(nmemb, size);
}

static void *plain_realloc(void *ptr, size_t size, void *arg)
{
	(void)arg;
	return realloc(ptr, size);
}

static void errno_setting_free(void *ptr, void *arg)
{
	(void)arg;
	free(ptr);
	errno = EBADF;
}

/* Frees ptr with errno set to a mark, and asserts the mark is still
 * there. */
#define ASSERT_FREE_KEEPS_ERRNO(call, mark)                                    \
	do {                                                                   \
		errno = (mark);                                                \
		call;                                                          \
		ck_assert_msg(errno == (mark), "%s changed errno to %d",       \
		              #call, errno);                                   \
	} while (0)

START_TEST(test_free_keeps_errno)
{
	int mode = test_modes[_i];
	const pool_fallback_t fb = {plain_malloc,  plain_calloc,
	                            plain_realloc, errno_setting_free,
	                            NULL,          NULL};
	pool_t *pool = pool_init_with(BLOCK, 2, mode, &fb);
	ck_assert_ptr_nonnull(pool);
	void *a = pool_malloc(pool, 1);
	void *b = pool_malloc(pool, 1);
	void *spill = pool_malloc(pool, 1); /* the pool is full */
	void *big = pool_malloc(pool, BLOCK + 1);
	ck_assert(pool_owns(pool, a) && pool_owns(pool, b));
	ck_assert(!pool_owns(pool, spill) && !pool_owns(pool, big));

	pool_error_handler_fn *old_fn;
	void *old_arg;
	pool_get_error_handler(&old_fn, &old_arg);
	pool_set_error_handler(errno_setting_handler, NULL);
	errno_reports = 0;

	ASSERT_FREE_KEEPS_ERRNO(pool_free(pool, NULL), 4321);
	ASSERT_FREE_KEEPS_ERRNO(pool_free(pool, a), 4322);
	ASSERT_FREE_KEEPS_ERRNO(pool_free(pool, spill), 4323);
	ASSERT_FREE_KEEPS_ERRNO(pool_free(pool, big), 4324);
	ck_assert_uint_eq(errno_reports, 0);
	/* Misuse: reported, and the handler's errno undone. */
	ASSERT_FREE_KEEPS_ERRNO(pool_free(pool, a), 4325);
	ASSERT_FREE_KEEPS_ERRNO(pool_free(pool, (char *)b + 1), 4326);
	ck_assert_uint_eq(errno_reports, 2);

	/* A set's free, of a block and of the fallback's memory. */
	pool_set_t *set = pool_set_init_with(16, 256, 4096, mode, &fb);
	ck_assert_ptr_nonnull(set);
	void *small = pool_set_malloc(set, 100);
	void *huge = pool_set_malloc(set, 100000);
	ck_assert_ptr_nonnull(small);
	ck_assert_ptr_nonnull(huge);
	ASSERT_FREE_KEEPS_ERRNO(pool_set_free(set, small), 4327);
	ASSERT_FREE_KEEPS_ERRNO(pool_set_free(set, huge), 4328);
	ASSERT_FREE_KEEPS_ERRNO(pool_set_free(set, small), 4329);
	ck_assert_uint_eq(errno_reports, 3);

	pool_set_error_handler(old_fn, old_arg);
	pool_set_destroy(set);
	pool_free(pool, b);
	pool_destroy(pool);
}
END_TEST

#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
START_TEST(test_free_fallback_releases)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(BLOCK, COUNT, mode);
	const size_t big = (size_t)4 << 20; /* glibc mmap()s this */

	/* glibc counts its mmap()ed chunks in hblkhd; a replacement
	 * allocator (valgrind, a sanitizer) may count nothing, and then
	 * this test has nothing to look at. */
	size_t before = mallinfo2().hblkhd;
	void *p = pool_malloc(pool, big);
	ck_assert_ptr_nonnull(p);
	memset(p, 1, big);
	size_t during = mallinfo2().hblkhd;
	pool_free(pool, p);
	size_t after = mallinfo2().hblkhd;
	if (during < before + big)
		return;
	ck_assert_msg(after <= before,
	              "pool_free() of a %zu-byte fallback allocation left %zu "
	              "bytes with the system allocator",
	              big, after - before);
}
END_TEST
#endif

/* The orders test_free_orders frees in, by loop index / TEST_MODE_COUNT. */
enum free_order { FORWARD, REVERSE, SHUFFLED, ORDER_COUNT };

START_TEST(test_free_orders)
{
	int mode = test_modes[_i % TEST_MODE_COUNT];
	enum free_order order = (enum free_order)(_i / TEST_MODE_COUNT);
	pool_t *pool = test_pool(BLOCK, COUNT, mode);

	void **first = take_every_block(pool, BLOCK);
	void *sorted[COUNT];
	memcpy(sorted, first, sizeof(sorted));
	char *base = assert_region_blocks(sorted, COUNT, BLOCK);
	assert_exhausted(pool);

	for (int round = 0; round < 3; round++) {
		/* Free all of them, in this test's order. */
		void *order_of_free[COUNT];
		for (size_t i = 0; i < COUNT; i++)
			order_of_free[i] =
			    sorted[order == REVERSE ? COUNT - 1 - i : i];
		if (order == SHUFFLED)
			shuffle_pointers(order_of_free, COUNT,
			                 (uint64_t)round * 7919 + 17);
		for (size_t i = 0; i < COUNT; i++)
			pool_free(pool, order_of_free[i]);
		pool_stats_t st = stats_of(pool);
		ck_assert_uint_eq(st.in_use, 0);

		/* Take them all again: the same set, no duplicate, no
		 * fallback, and then the pool is full again. */
		void **again = take_every_block(pool, BLOCK);
		ck_assert_ptr_eq(assert_region_blocks(again, COUNT, BLOCK),
		                 base);
		for (size_t i = 0; i < COUNT; i++)
			ck_assert_ptr_eq(again[i], sorted[i]);
		assert_exhausted(pool);
		st = stats_of(pool);
		/* One fallback per exhaustion check, one was before. */
		ck_assert_uint_eq(st.fallback_allocs, round + 2);
		ck_assert_uint_eq(st.allocs, (uint64_t)COUNT * (round + 2));
		free(again);
	}
	give_back(pool, first, COUNT);
}
END_TEST

/*
 * A server's order: connections each take a run of buffers, then leave in
 * an order of their own, freeing their buffers (the bench's lighttpd
 * workload, scaled down).  The pool is large enough for POOL_PER_THREAD
 * spans of many blocks, so the frees land in spans the thread allocated
 * from earlier and then moved past.  Every round must be served by the
 * pool alone, with contents intact.
 */
#define CLIENTS 10
#define BUFFERS 256 /* per client: POOL_PER_THREAD spans of 32 blocks */
#define ROUNDS  6

/* What buffer b of client c holds in a round: unique in the test. */
static uint64_t buffer_tag(int round, size_t c, size_t b)
{
	return (uint64_t)round << 32 | (uint64_t)(c * BUFFERS + b);
}

START_TEST(test_free_client_order)
{
	static const size_t leave[CLIENTS] = {3, 0, 5, 1, 6, 2, 4, 9, 8, 7};
	int mode = test_modes[_i];
	const size_t count = CLIENTS * BUFFERS;
	pool_t *pool = test_pool(BLOCK, count, mode);
	uint64_t(*held)[BUFFERS] = calloc(CLIENTS, sizeof(*held));
	void **blocks = malloc(count * sizeof(*blocks));

	ck_assert_ptr_nonnull(held);
	ck_assert_ptr_nonnull(blocks);
	misuse_record();
	for (int round = 0; round < ROUNDS; round++) {
		for (size_t c = 0; c < CLIENTS; c++)
			for (size_t b = 0; b < BUFFERS; b++) {
				uint64_t *p = pool_calloc(pool, 1, BLOCK);
				expect(
				    pool_owns(pool, p) == 1 && p[0] == 0 &&
				        p[BLOCK / 8 - 1] == 0,
				    "round %d, client %zu, buffer %zu: %p is "
				    "not a zeroed block of the pool",
				    round, c, b, (void *)p);
				p[0] = buffer_tag(round, c, b);
				p[BLOCK / 8 - 1] = ~p[0];
				held[c][b] = (uint64_t)(uintptr_t)p;
				blocks[c * BUFFERS + b] = p;
			}
		/* Every block once: the pool is full.  (No extra allocation
		 * to prove it: in POOL_PER_THREAD that would make the thread
		 * give up its span, and the frees below would not meet the
		 * case they are here for, a thread freeing into spans it
		 * moved past while it still holds one.) */
		assert_region_blocks(blocks, count, BLOCK);
		/* Odd rounds: each client frees its buffers backwards. */
		for (size_t i = 0; i < CLIENTS; i++)
			for (size_t j = 0; j < BUFFERS; j++) {
				size_t c = leave[(i + (size_t)round) % CLIENTS];
				size_t b = round & 1 ? BUFFERS - 1 - j : j;
				uint64_t *p = (uint64_t *)(uintptr_t)held[c][b];
				expect(
				    p[0] == buffer_tag(round, c, b) &&
				        p[BLOCK / 8 - 1] == ~p[0],
				    "round %d, client %zu, buffer %zu: %p was "
				    "overwritten",
				    round, c, b, (void *)p);
				pool_free(pool, p);
			}
		pool_stats_t st = stats_of(pool);
		ck_assert_uint_eq(st.in_use, 0);
		ck_assert_uint_eq(st.fallback_allocs, 0);
		ck_assert_uint_eq(st.allocs, (uint64_t)count * (round + 1));
	}
	ck_assert_uint_eq(misuse_count(), 0);
	free(blocks);
	free(held);
}
END_TEST

START_TEST(test_free_partial)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(BLOCK, COUNT, mode);
	void **blocks = take_every_block(pool, BLOCK);

	/* Each block carries its index; free every third one, refill, and
	 * the survivors must be untouched: the free list lives in freed
	 * blocks only. */
	for (size_t i = 0; i < COUNT; i++)
		memset(blocks[i], (int)(i & 0xff), BLOCK);
	for (size_t i = 0; i < COUNT; i += 3)
		pool_free(pool, blocks[i]);
	for (size_t i = 0; i < COUNT; i += 3) {
		blocks[i] = pool_malloc(pool, BLOCK);
		ck_assert_int_eq(pool_owns(pool, blocks[i]), 1);
		memset(blocks[i], (int)(i & 0xff), BLOCK);
	}
	assert_exhausted(pool);
	for (size_t i = 0; i < COUNT; i++)
		assert_bytes(blocks[i], BLOCK, (unsigned char)i,
		             "a live block");

	void *sorted[COUNT];
	memcpy(sorted, blocks, sizeof(sorted));
	assert_region_blocks(sorted, COUNT, BLOCK);
	give_back(pool, blocks, COUNT);
}
END_TEST

START_TEST(test_reuse_after_free)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(BLOCK, 1, mode);
	void *block = pool_malloc(pool, BLOCK);

	ck_assert_int_eq(pool_owns(pool, block), 1);
	for (int round = 0; round < 1000; round++) {
		memset(block, round & 0xff, BLOCK);
		pool_free(pool, block);
		void *again = round & 1 ? pool_calloc(pool, 1, BLOCK)
		                        : pool_malloc(pool, BLOCK);
		ck_assert_msg(again == block,
		              "round %d: got %p, not the one "
		              "block %p",
		              round, again, block);
		if (round & 1)
			assert_bytes(again, BLOCK, 0, "reused calloc");
	}
	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.allocs, 1001);
	ck_assert_uint_eq(st.frees, 1000);
	ck_assert_uint_eq(st.fallback_allocs, 0);
	pool_free(pool, block);
}
END_TEST

START_TEST(test_interleaved)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(BLOCK, COUNT, mode);
	void *held[COUNT] = {0};
	size_t live = 0;
	uint64_t seed = 42;

	/* Random allocate/free, tagged contents checked at free: nothing is
	 * handed out while held. */
	for (int step = 0; step < 20000; step++) {
		size_t slot = (size_t)(test_random(&seed) % COUNT);
		if (held[slot] == NULL) {
			held[slot] = pool_malloc(pool, BLOCK);
			expect(
			    pool_owns(pool, held[slot]) == 1,
			    "step %d: %p is not a pool block, %zu of %d in use",
			    step, held[slot], live, COUNT);
			memset(held[slot], (int)slot, BLOCK);
			live++;
		} else {
			assert_bytes(held[slot], BLOCK, (unsigned char)slot,
			             "a held block");
			pool_free(pool, held[slot]);
			held[slot] = NULL;
			live--;
		}
		size_t in_use = stats_of(pool).in_use;
		expect(in_use == live, "step %d: in_use %zu, %zu blocks held",
		       step, in_use, live);
	}
	for (size_t i = 0; i < COUNT; i++)
		pool_free(pool, held[i]); /* NULL for the empty slots */
	void **blocks = take_every_block(pool, BLOCK);
	assert_region_blocks(blocks, COUNT, BLOCK);
	give_back(pool, blocks, COUNT);
}
END_TEST

Suite *free_suite(void)
{
	Suite *s = suite_create("free");
	TCase *tc;

	tc = test_tcase(s, "null");
	test_add_every_mode(tc, test_free_null);

	tc = test_tcase(s, "fallback");
	test_add_every_mode(tc, test_free_fallback);
	test_add_every_mode(tc, test_free_keeps_errno);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
	test_add_every_mode(tc, test_free_fallback_releases);
#endif

	/* Loop index: mode + TEST_MODE_COUNT * order. */
	tc = test_tcase(s, "orders");
	tcase_add_loop_test(tc, test_free_orders, 0,
	                    TEST_MODE_COUNT * ORDER_COUNT);
	test_add_every_mode(tc, test_free_client_order);

	tc = test_tcase(s, "reuse");
	test_add_every_mode(tc, test_free_partial);
	test_add_every_mode(tc, test_reuse_after_free);
	test_add_every_mode(tc, test_interleaved);

	return s;
}
