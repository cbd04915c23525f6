/*
 * pool_malloc(), pool_calloc(), pool_realloc(), pool_strdup(): where a
 * request is served (pool, fallback, or refused), zeroing, size 0, and the
 * errno of every failure.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* The shape most tests here use: small, so exhaustion is cheap. */
#define BLOCK 64
#define COUNT 8

/* ------------------------------------------------------------ in region */

START_TEST(test_malloc_in_region)
{
	static const size_t sizes[] = { 1, 8, 17, 63, BLOCK };
	int mode = test_modes[_i];
	pool_t *pool = test_pool(BLOCK, COUNT, mode);
	void *blocks[COUNT];

	/* Every request that fits is served by the pool until it is full. */
	for (size_t i = 0; i < COUNT; i++) {
		size_t size = sizes[i % (sizeof(sizes) / sizeof(sizes[0]))];
		blocks[i] = pool_malloc(pool, size);
		ck_assert_ptr_nonnull(blocks[i]);
		ck_assert_msg(pool_owns(pool, blocks[i]) == 1,
		              "pool_malloc(%zu) #%zu: %p is not a pool block",
		              size, i, blocks[i]);
		memset(blocks[i], 0xc3, size);
	}
	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.allocs, COUNT);
	ck_assert_uint_eq(st.fallback_allocs, 0);
	assert_region_blocks(blocks, COUNT, BLOCK);
	for (size_t i = 0; i < COUNT; i++)
		pool_free(pool, blocks[i]);
}
END_TEST

START_TEST(test_calloc_in_region)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(BLOCK, COUNT, mode);
	void *blocks[COUNT];

	for (size_t i = 0; i < COUNT; i++) {
		/* nmemb * size from 1 up to exactly one block */
		size_t nmemb = i + 1, size = BLOCK / COUNT;
		blocks[i] = pool_calloc(pool, nmemb, size);
		ck_assert_ptr_nonnull(blocks[i]);
		ck_assert_int_eq(pool_owns(pool, blocks[i]), 1);
		assert_bytes(blocks[i], nmemb * size, 0, "fresh pool_calloc()");
	}
	assert_region_blocks(blocks, COUNT, BLOCK);
	for (size_t i = 0; i < COUNT; i++)
		pool_free(pool, blocks[i]);
}
END_TEST

/* ------------------------------------------------------------ zeroing */

START_TEST(test_calloc_zeroes_recycled)
{
	static const struct {
		size_t nmemb, size;
	} shapes[] = {
		{ 1, BLOCK }, { BLOCK, 1 }, { 8, 8 }, { 3, 20 }, { 1, 1 },
	};
	int mode = test_modes[_i];
	pool_t *pool = test_pool(BLOCK, COUNT, mode);

	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		/* Dirty every block, free them all (the free list now lives
		 * in them), then every calloc must still see zeroes. */
		void **blocks = take_every_block(pool, BLOCK);
		for (size_t i = 0; i < COUNT; i++)
			memset(blocks[i], 0xab, BLOCK);
		give_back(pool, blocks, COUNT);

		void *zeroed[COUNT];
		size_t bytes = shapes[s].nmemb * shapes[s].size;
		for (size_t i = 0; i < COUNT; i++) {
			zeroed[i] = pool_calloc(pool, shapes[s].nmemb,
			                        shapes[s].size);
			ck_assert_ptr_nonnull(zeroed[i]);
			ck_assert_int_eq(pool_owns(pool, zeroed[i]), 1);
			assert_bytes(zeroed[i], bytes, 0,
			             "pool_calloc() of a recycled block");
		}
		for (size_t i = 0; i < COUNT; i++)
			pool_free(pool, zeroed[i]);
	}
}
END_TEST

START_TEST(test_calloc_zeroes_fallback)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(BLOCK, COUNT, mode);
	void **blocks = take_every_block(pool, BLOCK);

	/* Exhausted: the fallback's memory must be zeroed too. */
	unsigned char *spill = pool_calloc(pool, 4, BLOCK / 4);
	ck_assert_ptr_nonnull(spill);
	ck_assert_int_eq(pool_owns(pool, spill), 0);
	assert_bytes(spill, BLOCK, 0, "fallback pool_calloc()");
	/* Oversize, also zeroed. */
	unsigned char *big = pool_calloc(pool, 3, BLOCK);
	ck_assert_ptr_nonnull(big);
	ck_assert_int_eq(pool_owns(pool, big), 0);
	assert_bytes(big, 3 * BLOCK, 0, "oversize pool_calloc()");
	pool_free(pool, spill);
	pool_free(pool, big);
	give_back(pool, blocks, COUNT);
}
END_TEST

/* ------------------------------------------------------------ size 0 */

START_TEST(test_size_zero)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(BLOCK, COUNT, mode);
	void *p[5];

	misuse_record();
	p[0] = pool_malloc(pool, 0);
	p[1] = pool_malloc(pool, 0);
	p[2] = pool_calloc(pool, 0, 16);
	p[3] = pool_calloc(pool, 16, 0);
	p[4] = pool_realloc(pool, NULL, 0);
	for (size_t i = 0; i < 5; i++) {
		ck_assert_msg(p[i] != NULL, "size-0 request %zu gave NULL", i);
		for (size_t j = 0; j < i; j++)
			ck_assert_msg(p[i] != p[j],
			              "size-0 requests %zu and %zu both gave %p", j,
			              i, p[i]);
	}
	for (size_t i = 0; i < 5; i++)
		pool_free(pool, p[i]);
	ck_assert_uint_eq(misuse_count(), 0);

	/* Whatever served them took everything back. */
	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.in_use, 0);
	ck_assert_uint_eq(st.allocs, st.frees);
	ck_assert_uint_eq(st.fallback_allocs, st.fallback_frees);
	ck_assert_uint_eq(st.allocs + st.fallback_allocs, 5);

	/* With the pool full, size 0 still gets unique pointers. */
	void **blocks = take_every_block(pool, BLOCK);
	void *a = pool_malloc(pool, 0);
	void *b = pool_calloc(pool, 0, 0);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_ne(a, b);
	ck_assert_int_eq(pool_owns(pool, a), 0);
	pool_free(pool, a);
	pool_free(pool, b);
	give_back(pool, blocks, COUNT);
	ck_assert_uint_eq(misuse_count(), 0);
}
END_TEST

/* ------------------------------------------------------------ overflow */

START_TEST(test_calloc_overflow)
{
	static const struct {
		size_t nmemb, size;
	} products[] = {
		{ SIZE_MAX, 2 },
		{ 2, SIZE_MAX },
		{ SIZE_MAX, SIZE_MAX },
#if SIZE_MAX > UINT32_MAX
		{ (size_t)1 << 32, (size_t)1 << 32 },
		{ ((size_t)1 << 32) + 1, (size_t)1 << 32 },
#else
		{ (size_t)1 << 16, (size_t)1 << 16 },
#endif
		{ SIZE_MAX / 2 + 1, 2 },
		{ SIZE_MAX / BLOCK + 1, BLOCK },
	};
	int mode = test_modes[_i];
	pool_t *pool = test_pool(BLOCK, COUNT, mode);

	for (size_t i = 0; i < sizeof(products) / sizeof(products[0]); i++) {
		errno = 0;
		void *p = pool_calloc(pool, products[i].nmemb, products[i].size);
		int saved = errno;
		ck_assert_msg(p == NULL, "pool_calloc(%zu, %zu) gave %p",
		              products[i].nmemb, products[i].size, p);
		ck_assert_msg(saved == ENOMEM,
		              "pool_calloc(%zu, %zu): errno %d, expected ENOMEM",
		              products[i].nmemb, products[i].size, saved);
	}
	/* No failed request touched the pool. */
	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.allocs, 0);
	ck_assert_uint_eq(st.fallback_allocs, 0);
	ck_assert_uint_eq(st.in_use, 0);
}
END_TEST

START_TEST(test_malloc_impossible)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(BLOCK, COUNT, mode);

	/* More than any system allocator has: the fallback's NULL and ENOMEM
	 * come through.  (Sizes up to PTRDIFF_MAX: valgrind calls larger
	 * ones "fishy", an error, and these tests run under it.) */
	assert_null_errno(pool_malloc(pool, SIZE_MAX / 2), ENOMEM);
	assert_null_errno(pool_calloc(pool, 1, SIZE_MAX / 4), ENOMEM);
	ck_assert_uint_eq(stats_of(pool).fallback_allocs, 0);
}
END_TEST

/* ------------------------------------------------------------ fallback */

START_TEST(test_exhaustion_falls_back)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(BLOCK, COUNT, mode);
	void **blocks = take_every_block(pool, BLOCK);
	unsigned char *spill[3];

	/* Once the pool is full every request still succeeds, outside it. */
	for (size_t i = 0; i < 3; i++) {
		errno = 0;
		spill[i] = i == 1 ? pool_calloc(pool, 1, BLOCK)
		                  : pool_malloc(pool, i + 1);
		ck_assert_ptr_nonnull(spill[i]);
		ck_assert_int_eq(pool_owns(pool, spill[i]), 0);
		memset(spill[i], 0x77, i == 1 ? BLOCK : i + 1);
	}
	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.allocs, COUNT);
	ck_assert_uint_eq(st.in_use, COUNT);
	ck_assert_uint_eq(st.fallback_allocs, 3);
	ck_assert_uint_eq(st.fallback_frees, 0);

	for (size_t i = 0; i < 3; i++)
		pool_free(pool, spill[i]);
	st = stats_of(pool);
	ck_assert_uint_eq(st.fallback_frees, 3);
	ck_assert_uint_eq(st.frees, 0);

	/* One block back: the pool serves again. */
	pool_free(pool, blocks[3]);
	void *again = pool_malloc(pool, 1);
	ck_assert_ptr_eq(again, blocks[3]);
	give_back(pool, blocks, COUNT);
}
END_TEST

START_TEST(test_oversize_falls_back)
{
	static const size_t sizes[] = { BLOCK + 1, BLOCK * 2, 1 << 20 };
	int mode = test_modes[_i];
	pool_t *pool = test_pool(BLOCK, COUNT, mode);

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		unsigned char *p = pool_malloc(pool, sizes[i]);
		ck_assert_ptr_nonnull(p);
		ck_assert_msg(pool_owns(pool, p) == 0,
		              "a %zu-byte request got a %d-byte block", sizes[i],
		              BLOCK);
		/* All of it is ours to write. */
		memset(p, 0x3c, sizes[i]);
		assert_bytes(p, sizes[i], 0x3c, "oversize allocation");
		pool_free(pool, p);
	}
	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.allocs, 0);
	ck_assert_uint_eq(st.fallback_allocs, 3);
	ck_assert_uint_eq(st.fallback_frees, 3);
}
END_TEST

START_TEST(test_no_fallback)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(BLOCK, COUNT, mode | POOL_NO_FALLBACK);
	char text[BLOCK + 1];

	memset(text, 'x', BLOCK);
	text[BLOCK] = '\0';

	/* Oversize: refused, with the pool not yet full. */
	assert_null_errno(pool_malloc(pool, BLOCK + 1), ENOMEM);
	assert_null_errno(pool_calloc(pool, 2, BLOCK), ENOMEM);
	/* text is BLOCK + 1 bytes */
	assert_null_errno(pool_strdup(pool, text), ENOMEM);
	assert_null_errno(pool_realloc(pool, NULL, BLOCK + 1), ENOMEM);

	/* Exhausted: refused as well. */
	void **blocks = take_every_block(pool, BLOCK);
	assert_null_errno(pool_malloc(pool, 1), ENOMEM);
	assert_null_errno(pool_calloc(pool, 1, 1), ENOMEM);
	assert_null_errno(pool_strdup(pool, "x"), ENOMEM);

	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.fallback_allocs, 0);
	ck_assert_uint_eq(st.allocs, COUNT);
	ck_assert_int_eq(st.flags, mode | POOL_NO_FALLBACK);

	/* The refusals did not cost a block: one freed, one served. */
	pool_free(pool, blocks[0]);
	void *again = pool_malloc(pool, 1);
	ck_assert_ptr_eq(again, blocks[0]);
	give_back(pool, blocks, COUNT);
}
END_TEST

/* ------------------------------------------------------------ strdup */

START_TEST(test_strdup)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(BLOCK, COUNT, mode);
	char fits[BLOCK], over[BLOCK + 1];

	memset(fits, 'a', BLOCK - 1);
	fits[BLOCK - 1] = '\0'; /* with its NUL, exactly one block */
	memset(over, 'b', BLOCK);
	over[BLOCK] = '\0'; /* one byte too many */

	char *empty = pool_strdup(pool, "");
	ck_assert_ptr_nonnull(empty);
	ck_assert_str_eq(empty, "");
	ck_assert_int_eq(pool_owns(pool, empty), 1);

	char *hello = pool_strdup(pool, "hello, pool");
	ck_assert_ptr_nonnull(hello);
	ck_assert_str_eq(hello, "hello, pool");
	ck_assert_int_eq(pool_owns(pool, hello), 1);

	char *full = pool_strdup(pool, fits);
	ck_assert_ptr_nonnull(full);
	ck_assert_str_eq(full, fits);
	ck_assert_ptr_ne(full, fits);
	ck_assert_int_eq(pool_owns(pool, full), 1);

	char *big = pool_strdup(pool, over);
	ck_assert_ptr_nonnull(big);
	ck_assert_str_eq(big, over);
	ck_assert_int_eq(pool_owns(pool, big), 0);

	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.allocs, 3);
	ck_assert_uint_eq(st.fallback_allocs, 1);

	pool_free(pool, empty);
	pool_free(pool, hello);
	pool_free(pool, full);
	pool_free(pool, big);
	st = stats_of(pool);
	ck_assert_uint_eq(st.in_use, 0);
	ck_assert_uint_eq(st.fallback_frees, 1);
}
END_TEST

START_TEST(test_strdup_null)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(BLOCK, COUNT, mode);

	assert_null_errno(pool_strdup(pool, NULL), EINVAL);
	ck_assert_uint_eq(stats_of(pool).allocs, 0);
}
END_TEST

/* ------------------------------------------------------------ realloc */

/* Fills n bytes with a pattern that depends on the offset and a seed. */
static void fill_pattern(void *p, size_t n, unsigned seed)
{
	unsigned char *bytes = p;

	for (size_t i = 0; i < n; i++)
		bytes[i] = (unsigned char)(seed * 31 + i * 7);
}

static void assert_pattern(const void *p, size_t n, unsigned seed,
                           const char *what)
{
	const unsigned char *bytes = p;

	for (size_t i = 0; i < n; i++)
		expect(bytes[i] == (unsigned char)(seed * 31 + i * 7),
		       "%s: byte %zu of %zu lost", what, i, n);
}

START_TEST(test_realloc_null_is_malloc)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(BLOCK, COUNT, mode);

	void *small = pool_realloc(pool, NULL, BLOCK);
	ck_assert_ptr_nonnull(small);
	ck_assert_int_eq(pool_owns(pool, small), 1);
	void *big = pool_realloc(pool, NULL, BLOCK + 1);
	ck_assert_ptr_nonnull(big);
	ck_assert_int_eq(pool_owns(pool, big), 0);

	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.allocs, 1);
	ck_assert_uint_eq(st.fallback_allocs, 1);
	pool_free(pool, small);
	pool_free(pool, big);
}
END_TEST

START_TEST(test_realloc_in_place)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(BLOCK, COUNT, mode);
	void **blocks = take_every_block(pool, BLOCK);

	/* Even with the pool exhausted, a block keeps its address for any
	 * size that fits it. */
	void *block = blocks[2];
	fill_pattern(block, 10, 1);
	static const size_t sizes[] = { 10, 1, BLOCK, BLOCK - 1, 33 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		void *same = pool_realloc(pool, block, sizes[i]);
		ck_assert_msg(same == block,
		              "pool_realloc(%p, %zu) moved a block to %p", block,
		              sizes[i], same);
		assert_pattern(same, 1, 1, "in-place realloc");
	}
	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.allocs, COUNT);
	ck_assert_uint_eq(st.frees, 0);
	ck_assert_uint_eq(st.fallback_allocs, 0);
	give_back(pool, blocks, COUNT);
}
END_TEST

START_TEST(test_realloc_grows_out)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(BLOCK, 1, mode);

	unsigned char *block = pool_malloc(pool, BLOCK);
	ck_assert_int_eq(pool_owns(pool, block), 1);
	fill_pattern(block, BLOCK, 2);

	unsigned char *moved = pool_realloc(pool, block, BLOCK * 4);
	ck_assert_ptr_nonnull(moved);
	ck_assert_int_eq(pool_owns(pool, moved), 0);
	assert_pattern(moved, BLOCK, 2, "realloc out of the pool");
	memset(moved + BLOCK, 0x11, BLOCK * 3);

	/* The block was freed: it is the one block, so it comes back. */
	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.in_use, 0);
	ck_assert_uint_eq(st.frees, 1);
	ck_assert_uint_eq(st.fallback_allocs, 1);
	void *again = pool_malloc(pool, 1);
	ck_assert_ptr_eq(again, block);
	pool_free(pool, again);

	/* Growing a fallback allocation keeps it outside, contents kept. */
	unsigned char *bigger = pool_realloc(pool, moved, BLOCK * 64);
	ck_assert_ptr_nonnull(bigger);
	ck_assert_int_eq(pool_owns(pool, bigger), 0);
	assert_pattern(bigger, BLOCK, 2, "realloc of a fallback allocation");
	assert_bytes(bigger + BLOCK, BLOCK * 3, 0x11,
	             "realloc of a fallback allocation");
	pool_free(pool, bigger);
	st = stats_of(pool);
	ck_assert_uint_eq(st.fallback_frees, st.fallback_allocs);
	ck_assert_uint_eq(st.in_use, 0);
}
END_TEST

START_TEST(test_realloc_shrinks_in)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(BLOCK, COUNT, mode);

	unsigned char *big = pool_malloc(pool, BLOCK * 3);
	ck_assert_ptr_nonnull(big);
	ck_assert_int_eq(pool_owns(pool, big), 0);
	fill_pattern(big, BLOCK * 3, 3);

	/* Now it fits a block, and the pool has one: it moves in. */
	unsigned char *small = pool_realloc(pool, big, BLOCK / 2);
	ck_assert_ptr_nonnull(small);
	ck_assert_msg(pool_owns(pool, small) == 1,
	              "a fallback allocation shrunk to %d bytes stayed outside "
	              "the pool",
	              BLOCK / 2);
	assert_pattern(small, BLOCK / 2, 3, "realloc into the pool");

	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.fallback_allocs, 1);
	ck_assert_uint_eq(st.fallback_frees, 1);
	ck_assert_uint_eq(st.allocs, 1);
	ck_assert_uint_eq(st.in_use, 1);
	pool_free(pool, small);
}
END_TEST

START_TEST(test_realloc_shrink_while_exhausted)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(BLOCK, COUNT, mode);
	void **blocks = take_every_block(pool, BLOCK);

	/* No block to move into: it must still succeed, contents kept. */
	unsigned char *big = pool_malloc(pool, BLOCK * 3);
	ck_assert_ptr_nonnull(big);
	fill_pattern(big, BLOCK * 3, 4);
	unsigned char *small = pool_realloc(pool, big, BLOCK / 2);
	ck_assert_ptr_nonnull(small);
	ck_assert_int_eq(pool_owns(pool, small), 0);
	assert_pattern(small, BLOCK / 2, 4, "realloc while exhausted");
	pool_free(pool, small);

	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.fallback_allocs, st.fallback_frees);
	ck_assert_uint_eq(st.in_use, COUNT);
	give_back(pool, blocks, COUNT);
}
END_TEST

START_TEST(test_realloc_zero_frees)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(BLOCK, COUNT, mode);

	void *block = pool_malloc(pool, BLOCK);
	void *big = pool_malloc(pool, BLOCK * 2);
	ck_assert_int_eq(pool_owns(pool, block), 1);
	ck_assert_int_eq(pool_owns(pool, big), 0);

	ck_assert_ptr_null(pool_realloc(pool, block, 0));
	ck_assert_ptr_null(pool_realloc(pool, big, 0));

	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.in_use, 0);
	ck_assert_uint_eq(st.frees, 1);
	ck_assert_uint_eq(st.fallback_frees, 1);
}
END_TEST

START_TEST(test_realloc_failure_keeps_old)
{
	int mode = test_modes[_i];
	pool_t *strict = test_pool(BLOCK, COUNT, mode | POOL_NO_FALLBACK);
	pool_t *pool = test_pool(BLOCK, COUNT, mode);

	/* Under POOL_NO_FALLBACK a block cannot grow past its size. */
	unsigned char *block = pool_malloc(strict, BLOCK);
	ck_assert_int_eq(pool_owns(strict, block), 1);
	fill_pattern(block, BLOCK, 5);
	assert_null_errno(pool_realloc(strict, block, BLOCK + 1), ENOMEM);
	assert_pattern(block, BLOCK, 5, "failed realloc");
	ck_assert_uint_eq(stats_of(strict).in_use, 1);
	ck_assert_uint_eq(stats_of(strict).frees, 0);

	/* With the fallback, a size no allocator has fails the same way,
	 * for a block and for a fallback allocation. */
	unsigned char *pooled = pool_malloc(pool, BLOCK);
	unsigned char *big = pool_malloc(pool, BLOCK * 2);
	fill_pattern(pooled, BLOCK, 6);
	fill_pattern(big, BLOCK * 2, 7);
	assert_null_errno(pool_realloc(pool, pooled, SIZE_MAX / 2), ENOMEM);
	assert_null_errno(pool_realloc(pool, big, SIZE_MAX / 2 - BLOCK),
	                  ENOMEM);
	assert_pattern(pooled, BLOCK, 6, "failed realloc of a block");
	assert_pattern(big, BLOCK * 2, 7, "failed realloc of a fallback");

	/* Both still belong to the caller and free cleanly. */
	misuse_record();
	pool_free(strict, block);
	pool_free(pool, pooled);
	pool_free(pool, big);
	ck_assert_uint_eq(misuse_count(), 0);
	ck_assert_uint_eq(stats_of(strict).in_use, 0);
	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.in_use, 0);
	ck_assert_uint_eq(st.fallback_frees, 1);
}
END_TEST

/* ------------------------------------------------------------ suite */

Suite *alloc_suite(void)
{
	Suite *s = suite_create("alloc");
	TCase *tc;

	tc = test_tcase(s, "in_region");
	test_add_every_mode(tc, test_malloc_in_region);
	test_add_every_mode(tc, test_calloc_in_region);

	tc = test_tcase(s, "zeroing");
	test_add_every_mode(tc, test_calloc_zeroes_recycled);
	test_add_every_mode(tc, test_calloc_zeroes_fallback);

	tc = test_tcase(s, "size_zero");
	test_add_every_mode(tc, test_size_zero);

	tc = test_tcase(s, "overflow");
	test_add_every_mode(tc, test_calloc_overflow);
	test_add_every_mode(tc, test_malloc_impossible);

	tc = test_tcase(s, "fallback");
	test_add_every_mode(tc, test_exhaustion_falls_back);
	test_add_every_mode(tc, test_oversize_falls_back);
	test_add_every_mode(tc, test_no_fallback);

	tc = test_tcase(s, "strdup");
	test_add_every_mode(tc, test_strdup);
	test_add_every_mode(tc, test_strdup_null);

	tc = test_tcase(s, "realloc");
	test_add_every_mode(tc, test_realloc_null_is_malloc);
	test_add_every_mode(tc, test_realloc_in_place);
	test_add_every_mode(tc, test_realloc_grows_out);
	test_add_every_mode(tc, test_realloc_shrinks_in);
	test_add_every_mode(tc, test_realloc_shrink_while_exhausted);
	test_add_every_mode(tc, test_realloc_zero_frees);
	test_add_every_mode(tc, test_realloc_failure_keeps_old);

	return s;
}
