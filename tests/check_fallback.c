/*
 * The allocator behind a pool: pool_init_with() and pool_set_init_with()
 * with a counting fallback (every request the pool does not serve and
 * every pointer outside it reach it, with its argument; without
 * usable_size a fallback pointer stays in the fallback), their argument
 * errors, and POOL_NO_FALLBACK, under which a pointer outside the region
 * is reported, never handed to free().  Every mode.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dropin.h"

/* ------------------------------------------------------------ fallback */

/*
 * A fallback over the C library's that counts its calls.  Every function
 * checks that it was given the arg installed with it (&counting); the
 * tests read the counts after each call they make.
 */
static struct {
	atomic_uint mallocs, callocs, reallocs, frees, usable_sizes;
	atomic_uint wrong_arg;
	_Atomic size_t last_size; /* of the latest request */
} counting;

static void counting_note(void *arg, atomic_uint *calls, size_t size)
{
	if (arg != (void *)&counting)
		atomic_fetch_add(&counting.wrong_arg, 1);
	atomic_fetch_add(calls, 1);
	atomic_store(&counting.last_size, size);
}

static void *counting_malloc(size_t size, void *arg)
{
	counting_note(arg, &counting.mallocs, size);
	return malloc(size);
}

static void *counting_calloc(size_t nmemb, size_t size, void *arg)
{
	counting_note(arg, &counting.callocs, nmemb * size);
	return calloc(nmemb, size);
}

static void *counting_realloc(void *ptr, size_t size, void *arg)
{
	counting_note(arg, &counting.reallocs, size);
	return realloc(ptr, size);
}

static void counting_free(void *ptr, void *arg)
{
	counting_note(arg, &counting.frees, 0);
	free(ptr);
}

static size_t counting_usable_size(const void *ptr, void *arg)
{
	counting_note(arg, &counting.usable_sizes, 0);
	return malloc_usable_size((void *)ptr);
}

/* Never called: installed in a fallback the pool copied before. */
static void *forbidden_malloc(size_t size, void *arg)
{
	(void)size;
	(void)arg;
	ck_abort_msg("the pool called a fallback it should have copied");
	return NULL;
}

/* The counting fallback, its counts cleared; usable_size only when
 * with_usable_size. */
static pool_fallback_t counting_fallback(bool with_usable_size)
{
	atomic_store(&counting.mallocs, 0);
	atomic_store(&counting.callocs, 0);
	atomic_store(&counting.reallocs, 0);
	atomic_store(&counting.frees, 0);
	atomic_store(&counting.usable_sizes, 0);
	atomic_store(&counting.wrong_arg, 0);
	atomic_store(&counting.last_size, 0);
	return (pool_fallback_t){
	    .malloc = counting_malloc,
	    .calloc = counting_calloc,
	    .realloc = counting_realloc,
	    .free = counting_free,
	    .usable_size = with_usable_size ? counting_usable_size : NULL,
	    .arg = &counting,
	};
}

/* Asserts the calls the counting fallback saw since it was made. */
static void assert_counted(unsigned mallocs, unsigned callocs,
                           unsigned reallocs, unsigned frees,
                           unsigned usable_sizes, const char *what)
{
	ck_assert_msg(
	    atomic_load(&counting.mallocs) == mallocs &&
	        atomic_load(&counting.callocs) == callocs &&
	        atomic_load(&counting.reallocs) == reallocs &&
	        atomic_load(&counting.frees) == frees &&
	        atomic_load(&counting.usable_sizes) == usable_sizes,
	    "%s: the fallback saw malloc %u, calloc %u, realloc %u, "
	    "free %u, usable_size %u; expected %u, %u, %u, %u, %u",
	    what, atomic_load(&counting.mallocs),
	    atomic_load(&counting.callocs), atomic_load(&counting.reallocs),
	    atomic_load(&counting.frees), atomic_load(&counting.usable_sizes),
	    mallocs, callocs, reallocs, frees, usable_sizes);
	ck_assert_uint_eq(atomic_load(&counting.wrong_arg), 0);
}

/* ------------------------------------------------------------ fallback */

/* A pool's own fallback: every request it does not serve reaches it,
 * with its arg, and so does every pointer of it given back. */
START_TEST(test_fallback_pool)
{
	int mode = test_modes[_i];
	pool_fallback_t fb = counting_fallback(true);

	errno = 0;
	pool_t *pool = pool_init_with(64, 8, mode, &fb);
	ck_assert_ptr_nonnull(pool);
	/* The pool copied the fallback: what the caller does with it next
	 * changes nothing. */
	fb.malloc = forbidden_malloc;
	assert_counted(0, 0, 0, 0, 0, "pool_init_with()");

	/* Too big: malloc and calloc, with the size asked. */
	char *big = pool_malloc(pool, 100);
	ck_assert_ptr_nonnull(big);
	ck_assert_int_eq(pool_owns(pool, big), 0);
	ck_assert_uint_eq(atomic_load(&counting.last_size), 100);
	assert_counted(1, 0, 0, 0, 0, "pool_malloc() too big");
	fill(big, 100, 1);
	char *zeroed = pool_calloc(pool, 10, 20);
	ck_assert_ptr_nonnull(zeroed);
	ck_assert_uint_eq(atomic_load(&counting.last_size), 200);
	assert_bytes(zeroed, 200, 0, "the fallback's calloc");
	assert_counted(1, 1, 0, 0, 0, "pool_calloc() too big");

	/* Exhausted: the fallback again, for a request that fits. */
	void **blocks = take_every_block(pool, 64);
	assert_counted(1, 1, 0, 0, 0, "every block taken");
	char *spill = pool_malloc(pool, 10);
	ck_assert_ptr_nonnull(spill);
	ck_assert_int_eq(pool_owns(pool, spill), 0);
	assert_counted(2, 1, 0, 0, 0, "pool_malloc() exhausted");
	fill(spill, 10, 2);
	char *spill_zeroed = pool_calloc(pool, 1, 10);
	ck_assert_ptr_nonnull(spill_zeroed);
	assert_counted(2, 2, 0, 0, 0, "pool_calloc() exhausted");

	/* Its usable size. */
	ck_assert_uint_ge(pool_usable_size(pool, big), 100);
	assert_counted(2, 2, 0, 0, 1, "pool_usable_size()");

	/* Grown: the fallback's realloc. */
	big = pool_realloc(pool, big, 5000);
	ck_assert_ptr_nonnull(big);
	ck_assert_uint_eq(atomic_load(&counting.last_size), 5000);
	assert_filled(big, 100, 1, "grown by the fallback's realloc");
	assert_counted(2, 2, 1, 0, 1, "pool_realloc() of a fallback pointer");

	/* Shrunk to fit a block while one is free: into the pool, its size
	 * asked of usable_size, the old one given back. */
	pool_free(pool, blocks[0]);
	char *moved = pool_realloc(pool, spill, 20);
	ck_assert_ptr_nonnull(moved);
	ck_assert_int_eq(pool_owns(pool, moved), 1);
	assert_filled(moved, 10, 2, "moved into the pool");
	assert_counted(2, 2, 1, 1, 2, "pool_realloc() into the pool");
	blocks[0] = moved;

	/* Given back: the fallback's free, never for NULL. */
	pool_free(pool, big);
	pool_free(pool, zeroed);
	pool_free(pool, spill_zeroed);
	pool_free(pool, NULL);
	assert_counted(2, 2, 1, 4, 2, "pool_free()");
	/* realloc to 0 frees too. */
	char *last = pool_malloc(pool, 1000);
	ck_assert_ptr_null(pool_realloc(pool, last, 0));
	assert_counted(3, 2, 1, 5, 2, "pool_realloc(0)");

	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.fallback_allocs, 5);
	ck_assert_uint_eq(st.fallback_frees, 5);
	give_back(pool, blocks, 8);
	assert_counted(3, 2, 1, 5, 2, "blocks given back");

	/* A fallback allocation outlives its pool, for the fallback's free. */
	char *kept = pool_malloc(pool, 300);
	ck_assert_ptr_nonnull(kept);
	fill(kept, 300, 3);
	pool_destroy(pool);
	assert_counted(4, 2, 1, 5, 2, "pool_destroy()");
	assert_filled(kept, 300, 3,
	              "a fallback allocation after pool_destroy()");
	counting_free(kept, &counting);
}
END_TEST

/* A fallback without usable_size: a fallback pointer's usable size is 0,
 * and pool_realloc() of one stays in the fallback even where a block is
 * free (the pool could not tell how much to copy). */
START_TEST(test_fallback_without_usable_size)
{
	int mode = test_modes[_i];
	pool_fallback_t fb = counting_fallback(false);

	pool_t *pool = pool_init_with(64, 8, mode, &fb);
	ck_assert_ptr_nonnull(pool);
	char *big = pool_malloc(pool, 1000);
	ck_assert_ptr_nonnull(big);
	fill(big, 1000, 4);
	assert_counted(1, 0, 0, 0, 0, "pool_malloc() too big");

	misuse_record();
	errno = 0;
	ck_assert_uint_eq(pool_usable_size(pool, big), 0);
	ck_assert_int_eq(errno, 0);
	ck_assert_uint_eq(misuse_count(), 0); /* 0 is no misuse here */

	char *small = pool_realloc(pool, big, 20);
	ck_assert_ptr_nonnull(small);
	ck_assert_int_eq(pool_owns(pool, small), 0);
	assert_filled(small, 20, 4, "shrunk by the fallback's realloc");
	assert_counted(1, 0, 1, 0, 0, "pool_realloc() of a fallback pointer");
	ck_assert_uint_eq(stats_of(pool).in_use, 0);
	pool_free(pool, small);
	assert_counted(1, 0, 1, 1, 0, "pool_free()");
	pool_destroy(pool);
}
END_TEST

/* A set's fallback serves every class: requests above the largest class
 * or made while a class is exhausted, and every pointer of it given
 * back; a fallback pointer reallocated to a size that fits a class moves
 * there. */
START_TEST(test_fallback_set)
{
	int mode = test_modes[_i];
	pool_fallback_t fb = counting_fallback(true);

	errno = 0;
	pool_set_t *set = pool_set_init_with(MIN_BLOCK, MAX_BLOCK,
	                                     SMALL_PER_CLASS, mode, &fb);
	ck_assert_ptr_nonnull(set);
	fb.malloc = forbidden_malloc; /* copied: changes nothing */

	char *big = pool_set_malloc(set, 5000);
	ck_assert_ptr_nonnull(big);
	ck_assert_uint_eq(atomic_load(&counting.last_size), 5000);
	fill(big, 5000, 5);
	char *zeroed = pool_set_calloc(set, 2, 3000);
	ck_assert_ptr_nonnull(zeroed);
	ck_assert_uint_eq(atomic_load(&counting.last_size), 6000);
	assert_bytes(zeroed, 6000, 0, "the fallback's calloc");
	char *grown = pool_set_realloc(set, NULL, 7000);
	ck_assert_ptr_nonnull(grown);
	assert_counted(2, 1, 0, 0, 0, "above the largest class");

	/* The 4096 B class exhausted: the next such request is the
	 * fallback's. */
	void *blocks[8];
	size_t taken = 0;
	for (;;) {
		ck_assert_uint_lt(taken, 8);
		blocks[taken] = pool_set_malloc(set, MAX_BLOCK);
		ck_assert_ptr_nonnull(blocks[taken]);
		if (!pool_set_owns(set, blocks[taken]))
			break;
		taken++;
	}
	ck_assert_uint_gt(taken, 0);
	assert_counted(3, 1, 0, 0, 0, "a class exhausted");
	pool_set_free(set, blocks[taken]);
	assert_counted(3, 1, 0, 1, 0, "pool_set_free() of a fallback pointer");

	ck_assert_uint_ge(pool_set_usable_size(set, big), 5000);
	assert_counted(3, 1, 0, 1, 1, "pool_set_usable_size()");

	/* To 24 bytes: into the 32 B class, the old one given back. */
	char *small = pool_set_realloc(set, big, 24);
	ck_assert_ptr_nonnull(small);
	ck_assert_int_eq(pool_set_owns(set, small), 1);
	ck_assert_uint_eq(pool_set_usable_size(set, small), 32);
	ck_assert_uint_eq(class_in_use(set, 32), 1);
	assert_filled(small, 24, 5, "moved into the 32 B class");
	assert_counted(3, 1, 0, 2, 2, "pool_set_realloc() into a class");

	/* Grown: the fallback's realloc. */
	grown = pool_set_realloc(set, grown, 9000);
	ck_assert_ptr_nonnull(grown);
	ck_assert_uint_eq(atomic_load(&counting.last_size), 9000);
	assert_counted(3, 1, 1, 2, 2, "pool_set_realloc() grown");

	pool_set_free(set, zeroed);
	pool_set_free(set, grown);
	pool_set_free(set, small);
	for (size_t i = 0; i < taken; i++)
		pool_set_free(set, blocks[i]);
	assert_counted(3, 1, 1, 4, 2, "everything given back");
	pool_stats_t total;
	ck_assert_int_eq(pool_set_stats(set, 0, &total), 0);
	ck_assert_uint_eq(total.in_use, 0);
	ck_assert_uint_eq(total.fallback_allocs, 4);
	ck_assert_uint_eq(total.fallback_frees, 4);
	pool_set_destroy(set);
	assert_counted(3, 1, 1, 4, 2, "pool_set_destroy()");
}
END_TEST

/* A set's fallback without usable_size: a fallback pointer's usable size
 * is 0, and realloc to a size that fits a class keeps it in the
 * fallback. */
START_TEST(test_fallback_set_without_usable_size)
{
	int mode = test_modes[_i];
	pool_fallback_t fb = counting_fallback(false);

	pool_set_t *set =
	    pool_set_init_with(MIN_BLOCK, MAX_BLOCK, PER_CLASS, mode, &fb);
	ck_assert_ptr_nonnull(set);
	char *big = pool_set_malloc(set, 10000);
	ck_assert_ptr_nonnull(big);
	fill(big, 10000, 6);
	ck_assert_uint_eq(pool_set_usable_size(set, big), 0);
	char *small = pool_set_realloc(set, big, 24);
	ck_assert_ptr_nonnull(small);
	ck_assert_int_eq(pool_set_owns(set, small), 0);
	ck_assert_uint_eq(class_in_use(set, 32), 0);
	assert_filled(small, 24, 6, "shrunk by the fallback's realloc");
	assert_counted(1, 0, 1, 0, 0, "pool_set_realloc() without usable_size");
	pool_set_free(set, small);
	assert_counted(1, 0, 1, 1, 0, "pool_set_free()");
	pool_set_destroy(set);
}
END_TEST

/* A fallback must have malloc, calloc, realloc and free; usable_size is
 * optional; a NULL fallback is the C library's. */
START_TEST(test_fallback_arguments)
{
	int mode = test_modes[_i];

	for (int missing = 0; missing < 4; missing++) {
		pool_fallback_t fb = counting_fallback(true);
		if (missing == 0)
			fb.malloc = NULL;
		else if (missing == 1)
			fb.calloc = NULL;
		else if (missing == 2)
			fb.realloc = NULL;
		else
			fb.free = NULL;
		assert_null_errno(pool_init_with(64, 8, mode, &fb), EINVAL);
		assert_null_errno(pool_set_init_with(MIN_BLOCK, MAX_BLOCK,
		                                     PER_CLASS, mode, &fb),
		                  EINVAL);
	}
	/* The other arguments are checked as pool_init()'s. */
	pool_fallback_t fb = counting_fallback(false);
	assert_null_errno(pool_init_with(0, 8, mode, &fb), EINVAL);
	assert_null_errno(
	    pool_init_with(
	        64, 8, mode | POOL_PER_THREAD | POOL_LOCKED | POOL_SINGLE, &fb),
	    EINVAL);
	assert_null_errno(
	    pool_set_init_with(24, MAX_BLOCK, PER_CLASS, mode, &fb), EINVAL);
	assert_counted(0, 0, 0, 0, 0, "refused arguments");

	/* usable_size may be missing. */
	pool_t *pool = pool_init_with(64, 8, mode, &fb);
	ck_assert_ptr_nonnull(pool);
	pool_destroy(pool);
	pool_set_t *set =
	    pool_set_init_with(MIN_BLOCK, MAX_BLOCK, PER_CLASS, mode, &fb);
	ck_assert_ptr_nonnull(set);
	pool_set_destroy(set);

	/* NULL: the C library's, as pool_init(). */
	pool = pool_init_with(64, 8, mode, NULL);
	ck_assert_ptr_nonnull(pool);
	char *big = pool_malloc(pool, 1000);
	ck_assert_ptr_nonnull(big);
	ck_assert_uint_ge(pool_usable_size(pool, big), 1000);
	pool_free(pool, big);
	pool_destroy(pool);
	set = pool_set_init_with(MIN_BLOCK, MAX_BLOCK, PER_CLASS, mode, NULL);
	ck_assert_ptr_nonnull(set);
	big = pool_set_malloc(set, 10000);
	ck_assert_ptr_nonnull(big);
	ck_assert_uint_ge(pool_set_usable_size(set, big), 10000);
	pool_set_free(set, big);
	pool_set_destroy(set);
	assert_counted(0, 0, 0, 0, 0, "the C library's fallback");
}
END_TEST

/* POOL_NO_FALLBACK with a fallback: still none.  Requests the pool cannot
 * serve fail, and pointers from outside are misuse. */
START_TEST(test_fallback_with_no_fallback)
{
	int mode = test_modes[_i];
	pool_fallback_t fb = counting_fallback(true);

	pool_t *pool = pool_init_with(64, 8, mode | POOL_NO_FALLBACK, &fb);
	ck_assert_ptr_nonnull(pool);
	pool_set_t *set = pool_set_init_with(MIN_BLOCK, MAX_BLOCK, PER_CLASS,
	                                     mode | POOL_NO_FALLBACK, &fb);
	ck_assert_ptr_nonnull(set);
	assert_null_errno(pool_malloc(pool, 100), ENOMEM);
	assert_null_errno(pool_calloc(pool, 1, 100), ENOMEM);
	assert_null_errno(pool_set_malloc(set, MAX_BLOCK + 1), ENOMEM);
	void **blocks = take_every_block(pool, 64);
	assert_null_errno(pool_malloc(pool, 1), ENOMEM);

	char *foreign = malloc(100);
	ck_assert_ptr_nonnull(foreign);
	misuse_record();
	pool_free(pool, foreign);
	assert_report(POOL_ERROR_INVALID_POINTER, "pool_free", pool, foreign);
	pool_set_free(set, foreign);
	assert_report(POOL_ERROR_INVALID_POINTER, "pool_set_free", NULL,
	              foreign);
	ck_assert_uint_eq(misuse_count(), 2);
	assert_counted(0, 0, 0, 0, 0, "POOL_NO_FALLBACK");
	free(foreign);
	give_back(pool, blocks, 8);
	pool_set_destroy(set);
	pool_destroy(pool);
}
END_TEST

/* ------------------------------------------------------------ no fallback */

/* POOL_NO_FALLBACK: a malloc()ed pointer given to free or realloc of a
 * pool or a set is reported as POOL_ERROR_INVALID_POINTER under the
 * call's name, and left alone: it is still the caller's, intact, to free
 * itself. */
START_TEST(test_no_fallback_foreign_pointer)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(64, 8, mode | POOL_NO_FALLBACK);
	pool_set_t *set = new_set(PER_CLASS, mode | POOL_NO_FALLBACK);
	char *foreign = malloc(100);
	ck_assert_ptr_nonnull(foreign);
	fill(foreign, 100, 8);

	misuse_record();
	pool_free(pool, foreign);
	assert_report(POOL_ERROR_INVALID_POINTER, "pool_free", pool, foreign);
	ck_assert_ptr_null(pool_realloc(pool, foreign, 10));
	assert_report(POOL_ERROR_INVALID_POINTER, "pool_realloc", pool,
	              foreign);
	ck_assert_ptr_null(pool_realloc(pool, foreign, 1000));
	assert_report(POOL_ERROR_INVALID_POINTER, "pool_realloc", pool,
	              foreign);
	ck_assert_ptr_null(pool_realloc(pool, foreign, 0));
	assert_report(POOL_ERROR_INVALID_POINTER, "pool_realloc", pool,
	              foreign);
	ck_assert_uint_eq(pool_usable_size(pool, foreign), 0);
	assert_report(POOL_ERROR_INVALID_POINTER, "pool_usable_size", pool,
	              foreign);

	pool_set_free(set, foreign);
	assert_report(POOL_ERROR_INVALID_POINTER, "pool_set_free", NULL,
	              foreign);
	ck_assert_ptr_null(pool_set_realloc(set, foreign, 10));
	assert_report(POOL_ERROR_INVALID_POINTER, "pool_set_realloc", NULL,
	              foreign);
	ck_assert_ptr_null(pool_set_realloc(set, foreign, 100000));
	assert_report(POOL_ERROR_INVALID_POINTER, "pool_set_realloc", NULL,
	              foreign);
	ck_assert_uint_eq(pool_set_usable_size(set, foreign), 0);
	assert_report(POOL_ERROR_INVALID_POINTER, "pool_set_usable_size", NULL,
	              foreign);
	ck_assert_uint_eq(misuse_count(), 9);
	ck_assert_uint_eq(misuse_count_of(POOL_ERROR_INVALID_POINTER), 9);

	/* Nothing was freed, moved or counted: the pointer is intact, and
	 * free() of it is no double free. */
	assert_filled(foreign, 100, 8, "a foreign pointer after the reports");
	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.fallback_frees, 0);
	ck_assert_uint_eq(st.in_use, 0);
	pool_stats_t total;
	ck_assert_int_eq(pool_set_stats(set, 0, &total), 0);
	ck_assert_uint_eq(total.fallback_frees, 0);
	ck_assert_uint_eq(total.in_use, 0);
	free(foreign);
	pool_set_destroy(set);
}
END_TEST

Suite *fallback_suite(void)
{
	Suite *s = suite_create("fallback");

	TCase *tc = test_tcase(s, "fallback");
	test_add_every_mode(tc, test_fallback_pool);
	test_add_every_mode(tc, test_fallback_without_usable_size);
	test_add_every_mode(tc, test_fallback_set);
	test_add_every_mode(tc, test_fallback_set_without_usable_size);
	test_add_every_mode(tc, test_fallback_arguments);
	test_add_every_mode(tc, test_fallback_with_no_fallback);

	tc = test_tcase(s, "no_fallback");
	test_add_every_mode(tc, test_no_fallback_foreign_pointer);
	return s;
}
