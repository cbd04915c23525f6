/*
 * pool_init() and pool_destroy(): block size rounding and alignment, the
 * errno of every refusal, and a large pool that costs nothing until used.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "testutil.h"

/* Asserts pool_init() refuses with the given errno. */
static void assert_init_fails(size_t block_size, size_t block_count, int flags,
                              int expected_errno)
{
	errno = 0;
	pool_t *pool = pool_init(block_size, block_count, flags);
	int saved = errno;

	if (pool != NULL)
		pool_destroy(pool);
	ck_assert_msg(
	    pool == NULL, "pool_init(%zu, %zu, %#x) succeeded; expected %s",
	    block_size, block_count, (unsigned)flags, strerror(expected_errno));
	ck_assert_msg(
	    saved == expected_errno,
	    "pool_init(%zu, %zu, %#x): errno %d (%s), expected %d (%s)",
	    block_size, block_count, (unsigned)flags, saved, strerror(saved),
	    expected_errno, strerror(expected_errno));
}

/* Asserts the pool's block size, by both accessors, is expected. */
static void assert_rounds_to(size_t requested, size_t expected, int mode)
{
	errno = 0;
	pool_t *pool = pool_init(requested, 1, mode);
	ck_assert_msg(pool != NULL, "pool_init(%zu, 1, %s): %s", requested,
	              mode_name(mode), strerror(errno));
	size_t got = pool_block_size(pool);
	pool_stats_t st = stats_of(pool);
	pool_destroy(pool);
	ck_assert_msg(got == expected,
	              "block size %zu rounded to %zu, expected %zu", requested,
	              got, expected);
	ck_assert_uint_eq(st.block_size, expected);
	ck_assert_uint_eq(st.block_count, 1);
}

/* ------------------------------------------------------------ rounding */

START_TEST(test_rounding_table)
{
	static const struct {
		size_t requested, expected;
	} table[] = {
	    {1, 16},        {2, 16},         {15, 16},     {16, 16},
	    {17, 32},       {31, 32},        {32, 32},     {33, 64},
	    {100, 128},     {1000, 1024},    {1023, 1024}, {1024, 1024},
	    {1025, 2048},   {4095, 4096},    {4096, 4096}, {4097, 8192},
	    {65535, 65536}, {65537, 131072},
	};
	int mode = test_modes[_i];

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		assert_rounds_to(table[i].requested, table[i].expected, mode);
}
END_TEST

START_TEST(test_rounding_powers)
{
	int mode = test_modes[_i];

	/* Every power from the minimum to 1 MiB stays itself; one byte more
	 * takes the next power; one less (above the minimum) stays. */
	for (unsigned k = 4; k <= 20; k++) {
		size_t power = (size_t)1 << k;
		assert_rounds_to(power, power, mode);
		assert_rounds_to(power + 1, power * 2, mode);
		if (power - 1 > POOL_MIN_BLOCK_SIZE)
			assert_rounds_to(power - 1, power, mode);
	}
}
END_TEST

START_TEST(test_rounding_maximum)
{
	int mode = test_modes[_i];

	/* The maximum itself is accepted, and so is anything rounding to it:
	 * the region is only reserved, so this costs address space only. */
	assert_rounds_to(POOL_MAX_BLOCK_SIZE, POOL_MAX_BLOCK_SIZE, mode);
	assert_rounds_to(POOL_MAX_BLOCK_SIZE / 2 + 1, POOL_MAX_BLOCK_SIZE,
	                 mode);
}
END_TEST

/* ------------------------------------------------------------ alignment */

START_TEST(test_alignment_small_blocks)
{
	static const size_t sizes[] = {1, 16, 24, 32, 64, 100, 256, 1024, 4096};
	int mode = test_modes[_i];
	size_t page = page_size();

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		pool_t *pool = pool_init(sizes[s], 37, mode);
		ck_assert_ptr_nonnull(pool);
		size_t bs = pool_block_size(pool);
		size_t want = bs < page ? bs : page;
		void **blocks = take_every_block(pool, bs);

		for (size_t i = 0; i < 37; i++) {
			uintptr_t a = (uintptr_t)blocks[i];
			ck_assert_msg(
			    a % want == 0,
			    "block %p of a %zu-byte pool is not aligned "
			    "to %zu",
			    blocks[i], bs, want);
			ck_assert_msg(a % alignof(max_align_t) == 0 &&
			                  a % 16 == 0,
			              "block %p is not aligned for max_align_t",
			              blocks[i]);
		}
		give_back(pool, blocks, 37);
		pool_destroy(pool);
	}
}
END_TEST

START_TEST(test_alignment_large_blocks)
{
	int mode = test_modes[_i];
	size_t page = page_size();

	/* Above the page size a block is aligned to the page (at least). */
	for (size_t factor = 2; factor <= 256; factor *= 8) {
		pool_t *pool = pool_init(page * factor, 5, mode);
		ck_assert_ptr_nonnull(pool);
		ck_assert_uint_eq(pool_block_size(pool), page * factor);
		void **blocks = take_every_block(pool, page * factor);
		for (size_t i = 0; i < 5; i++)
			ck_assert_msg(
			    (uintptr_t)blocks[i] % page == 0,
			    "block %p of %zu bytes is not page aligned",
			    blocks[i], page * factor);
		assert_region_blocks(blocks, 5, page * factor);
		give_back(pool, blocks, 5);
		pool_destroy(pool);
	}
}
END_TEST

/* ------------------------------------------------------------ errno */

START_TEST(test_einval_zero)
{
	int mode = test_modes[_i];

	assert_init_fails(0, 16, mode, EINVAL);
	assert_init_fails(64, 0, mode, EINVAL);
	assert_init_fails(0, 0, mode, EINVAL);
	/* Zero stays EINVAL even when the other argument is absurd. */
	assert_init_fails(0, SIZE_MAX, mode, EINVAL);
	assert_init_fails(SIZE_MAX, 0, mode, EINVAL);
}
END_TEST

START_TEST(test_einval_too_large)
{
	int mode = test_modes[_i];

	assert_init_fails(POOL_MAX_BLOCK_SIZE + 1, 1, mode, EINVAL);
	assert_init_fails(POOL_MAX_BLOCK_SIZE * 2, 1, mode, EINVAL);
	/* Rounding SIZE_MAX up would overflow: still "too large". */
	assert_init_fails(SIZE_MAX, 1, mode, EINVAL);
	assert_init_fails(SIZE_MAX / 2 + 2, 1, mode, EINVAL);
}
END_TEST

START_TEST(test_einval_flags)
{
	static const int bad_modes[] = {
	    3,                             /* no such mode */
	    POOL_LOCKED | POOL_PER_THREAD, /* two modes at once */
	    4,
	    5,
	    7,
	    8,
	    0xf, /* unknown modes */
	};

	for (size_t i = 0; i < sizeof(bad_modes) / sizeof(bad_modes[0]); i++) {
		assert_init_fails(64, 16, bad_modes[i], EINVAL);
		assert_init_fails(64, 16, bad_modes[i] | POOL_NO_FALLBACK,
		                  EINVAL);
	}
	/* Every bit above the mode that is not a known option, alone and
	 * beside a valid mode and option. */
	for (unsigned bit = 4; bit < sizeof(int) * CHAR_BIT; bit++) {
		int flag = (int)(1u << bit);
		if (flag & TEST_KNOWN_OPTIONS)
			continue;
		assert_init_fails(64, 16, flag, EINVAL);
		assert_init_fails(
		    64, 16, POOL_PER_THREAD | POOL_NO_FALLBACK | flag, EINVAL);
	}
	assert_init_fails(64, 16, -1, EINVAL);
}
END_TEST

START_TEST(test_valid_flags)
{
	int mode = test_modes[_i];

	/* Each mode alone and with every known option is accepted, and the
	 * flags come back unchanged. */
	pool_t *plain = test_pool(64, 16, mode);
	ck_assert_int_eq(stats_of(plain).flags, mode);
	pool_t *strict = test_pool(64, 16, mode | POOL_NO_FALLBACK);
	ck_assert_int_eq(stats_of(strict).flags, mode | POOL_NO_FALLBACK);
}
END_TEST

START_TEST(test_enomem_overflow)
{
	int mode = test_modes[_i];

	assert_init_fails((size_t)1 << 20, SIZE_MAX >> 10, mode, ENOMEM);
	assert_init_fails(16, SIZE_MAX / 8, mode, ENOMEM);
	assert_init_fails(64, SIZE_MAX, mode, ENOMEM);
	/* 17 * count fits in size_t, but the rounded 32 * count does not:
	 * the product must be taken after rounding. */
	assert_init_fails(17, SIZE_MAX / 17, mode, ENOMEM);
	assert_init_fails(POOL_MAX_BLOCK_SIZE, SIZE_MAX / 4, mode, ENOMEM);
}
END_TEST

START_TEST(test_enomem_unreachable)
{
	int mode = test_modes[_i];

#if SIZE_MAX > UINT32_MAX
	/* No overflow, but far more address space than a process has. */
	assert_init_fails((size_t)1 << 20, (size_t)1 << 40, mode, ENOMEM);
	assert_init_fails(16, SIZE_MAX / 16, mode, ENOMEM);
	/* Just below the overflow: any padding the region gets for its
	 * alignment must not wrap around to a small request. */
	assert_init_fails(POOL_MAX_BLOCK_SIZE, SIZE_MAX / POOL_MAX_BLOCK_SIZE,
	                  mode, ENOMEM);
	assert_init_fails(4096, SIZE_MAX / 4096, mode, ENOMEM);
#else
	assert_init_fails((size_t)1 << 20, (size_t)1 << 12, mode, ENOMEM);
#endif
}
END_TEST

/* ------------------------------------------------------------ lifetime */

START_TEST(test_destroy_null)
{
	/* Nothing to check but that it returns and leaves errno alone. */
	errno = 0;
	pool_destroy(NULL);
	ck_assert_int_eq(errno, 0);
}
END_TEST

/* Whether the page holding p is mapped: mincore() fails with ENOMEM for
 * an address range that is not. */
static bool page_is_mapped(const void *p)
{
	size_t page = page_size();
	unsigned char resident;
	void *start = (void *)((uintptr_t)p & ~(uintptr_t)(page - 1));

	return mincore(start, page, &resident) == 0 || errno != ENOMEM;
}

START_TEST(test_destroy_releases)
{
	int mode = test_modes[_i];
	enum { CYCLES = 8 };
	const size_t block = (size_t)1 << 16, count = 1024; /* 64 MiB */
	/* The registry's granule table (64 MiB of address space, mapped
	 * once) and the first chunk of the library's own objects. */
	const size_t slack = ((size_t)64 << 20) + ((size_t)1 << 20);
	size_t before = virtual_bytes();

	/* Create, use and destroy pools: the region and side tables must go
	 * back each time.  The region's pages are unmapped at once, checked
	 * by asking the kernel, and the cycles add up to no address space:
	 * eight leaked regions would show as 512 MiB.  The pools are no
	 * bigger than that needs: a sanitizer build pays for every byte of a
	 * region it unpoisons at pool_destroy(). */
	for (int i = 0; i < CYCLES; i++) {
		pool_t *pool = pool_init(block, count, mode);
		ck_assert_msg(pool != NULL, "pool %d of %d: %s", i + 1, CYCLES,
		              strerror(errno));
		void *first = pool_malloc(pool, 100);
		ck_assert_int_eq(pool_owns(pool, first), 1);
		pool_free(pool, first);
		pool_destroy(pool);
		ck_assert_msg(
		    !page_is_mapped(first),
		    "pool %d of %d (%s): its block %p is still mapped "
		    "after pool_destroy()",
		    i + 1, CYCLES, mode_name(mode), first);
	}
	size_t after = virtual_bytes();
	if (before == 0)
		return; /* no /proc: the mincore() half still ran */
	ck_assert_msg(after <= before + slack,
	              "%d destroyed 64 MiB %s pools left %zu MiB of address "
	              "space mapped",
	              CYCLES, mode_name(mode), (after - before) >> 20);
}
END_TEST

START_TEST(test_single_block)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(100, 1, mode);

	ck_assert_uint_eq(pool_block_size(pool), 128);
	void *block = pool_malloc(pool, 128);
	ck_assert_ptr_nonnull(block);
	ck_assert_int_eq(pool_owns(pool, block), 1);
	memset(block, 0x5a, 128);
	assert_exhausted(pool);
	pool_free(pool, block);

	/* The one block comes back, again and again. */
	for (int round = 0; round < 10; round++) {
		void *again = pool_malloc(pool, 1);
		ck_assert_ptr_eq(again, block);
		pool_free(pool, again);
	}
	ck_assert_uint_eq(stats_of(pool).in_use, 0);
}
END_TEST

START_TEST(test_huge_pool_is_lazy)
{
	int mode = test_modes[_i];
	const size_t block = 4096, count = 262144; /* 1 GiB */
	const size_t slack = (size_t)8 << 20;      /* side tables and noise */
	size_t before = resident_bytes();

	pool_t *pool = test_pool(block, count, mode);
	size_t after_init = resident_bytes();

	/* Usable at once: allocate, write, free. */
	enum { USED = 64 };
	void *blocks[USED];
	for (size_t i = 0; i < USED; i++) {
		blocks[i] = pool_malloc(pool, block);
		ck_assert_ptr_nonnull(blocks[i]);
		ck_assert_int_eq(pool_owns(pool, blocks[i]), 1);
		memset(blocks[i], (int)i, block);
	}
	for (size_t i = 0; i < USED; i++) {
		assert_bytes(blocks[i], block, (unsigned char)i,
		             "huge pool block");
		pool_free(pool, blocks[i]);
	}
	size_t after_use = resident_bytes();
	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.block_count, count);
	ck_assert_uint_eq(st.allocs, USED);
	ck_assert_uint_eq(st.in_use, 0);

	if (before == 0)
		return; /* no /proc: the usability half still ran */
	ck_assert_msg(after_init <= before + slack,
	              "a 1 GiB %s pool made %zu KiB resident at init",
	              mode_name(mode), (after_init - before) / 1024);
	/* The first allocations may not build the whole free list either. */
	ck_assert_msg(after_use <= before + slack + USED * block,
	              "64 allocations from a 1 GiB %s pool made %zu KiB "
	              "resident",
	              mode_name(mode), (after_use - before) / 1024);
}
END_TEST

/* ------------------------------------------------------------ suite */

Suite *init_suite(void)
{
	Suite *s = suite_create("init");
	TCase *tc;

	tc = test_tcase(s, "rounding");
	test_add_every_mode(tc, test_rounding_table);
	test_add_every_mode(tc, test_rounding_powers);
	test_add_every_mode(tc, test_rounding_maximum);

	tc = test_tcase(s, "alignment");
	test_add_every_mode(tc, test_alignment_small_blocks);
	test_add_every_mode(tc, test_alignment_large_blocks);

	tc = test_tcase(s, "einval");
	test_add_every_mode(tc, test_einval_zero);
	test_add_every_mode(tc, test_einval_too_large);
	tcase_add_test(tc, test_einval_flags);
	test_add_every_mode(tc, test_valid_flags);

	tc = test_tcase(s, "enomem");
	test_add_every_mode(tc, test_enomem_overflow);
	test_add_every_mode(tc, test_enomem_unreachable);

	tc = test_tcase(s, "lifetime");
	tcase_add_test(tc, test_destroy_null);
	test_add_every_mode(tc, test_destroy_releases);
	test_add_every_mode(tc, test_single_block);

	tc = test_tcase(s, "lazy");
	test_add_every_mode(tc, test_huge_pool_is_lazy);

	return s;
}
