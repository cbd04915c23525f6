/*
 * The "dropin" suite: the calls that put a pool or a set behind another
 * library's allocator hook, or behind malloc() itself, in every mode.
 *
 *  - pool_usable_size() and pool_set_usable_size(): the block size of a
 *    block (all of it writable), the fallback's size of a fallback
 *    pointer, 0 for NULL; misuse reported under the call's own name.
 *  - pool_set_owns() and pool_set_class_size(): every class boundary,
 *    interior pointers, fallback pointers, guard pages, NULL, SIZE_MAX.
 *  - pool_set_trim(): bytes given back after frees, live blocks kept,
 *    blocks zero afterwards through pool_set_calloc().
 *  - pool_init_with() and pool_set_init_with(): a counting fallback sees
 *    every request the pool does not serve and every pointer from outside
 *    it, each with its own arg; without usable_size a fallback pointer has
 *    usable size 0 and stays in the fallback; EINVAL for a fallback that
 *    lacks one of malloc, calloc, realloc, free.
 *  - POOL_NO_FALLBACK: a pointer from outside given to free or realloc is
 *    reported as POOL_ERROR_INVALID_POINTER and left alone.
 *  - pool_get_error_handler(), and pool_set_error_handler()'s result.
 *  - A set's reports name the set's call and give no pool, whichever
 *    path of the call finds the misuse (pool_set_calloc()'s fast path
 *    too).
 *  - pool_set_realloc(): a shrink keeps a block at least half used, moves
 *    a smaller one to its class when that class has a block, never fails;
 *    growth moves and copies; a fallback pointer moves to the class that
 *    fits.
 *  - A set of 13 classes of 4 GiB each, far more than memory, made and
 *    used in every mode for the memory of the blocks it serves.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "dropin.h"

/* ------------------------------------------------------------ usable size */

/* A block's usable size is its block size, all of it writable; a fallback
 * pointer's is the C library's (at least what was asked); NULL's is 0;
 * none of it touches errno. */
START_TEST(test_usable_size)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(100, 8, mode);
	static const size_t sizes[] = {0,   1,   64,   100,  127,
	                               128, 129, 1000, 70000};

	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		size_t size = sizes[i];
		errno = 0;
		char *p = pool_malloc(pool, size);
		ck_assert_ptr_nonnull(p);
		size_t usable = pool_usable_size(pool, p);
		ck_assert_int_eq(errno, 0);
		if (size <= 128) {
			ck_assert_int_eq(pool_owns(pool, p), 1);
			ck_assert_uint_eq(usable, 128);
		} else {
			/* glibc's malloc_usable_size(): at least the size. */
			ck_assert_int_eq(pool_owns(pool, p), 0);
			ck_assert_uint_ge(usable, size);
		}
		/* The usable size is the caller's to use, every byte: as a
		 * hook uses it, and after a realloc to it, which keeps a
		 * block where it is. */
		char *hooked = opaque(p);
		fill(hooked, usable, (unsigned)i);
		assert_filled(hooked, usable, (unsigned)i, "usable bytes");
		if (size <= 128) {
			char *q = pool_realloc(pool, p, usable);
			ck_assert_ptr_eq(q, p);
			fill(q, usable, (unsigned)i + 1);
			p = q;
		}
		pool_free(pool, p);
	}
	errno = 0;
	ck_assert_uint_eq(pool_usable_size(pool, NULL), 0);
	ck_assert_uint_eq(pool_usable_size(NULL, NULL), 0);
	ck_assert_int_eq(errno, 0);

	/* A block of an exhausted pool's fallback. */
	void **blocks = take_every_block(pool, 128);
	errno = 0;
	char *spill = pool_malloc(pool, 50);
	ck_assert_ptr_nonnull(spill);
	ck_assert_int_eq(pool_owns(pool, spill), 0);
	ck_assert_uint_ge(pool_usable_size(pool, spill), 50);
	ck_assert_uint_eq(pool_usable_size(pool, blocks[3]), 128);
	ck_assert_int_eq(errno, 0);
	pool_free(pool, spill);
	give_back(pool, blocks, 8);
	ck_assert_uint_eq(stats_of(pool).in_use, 0);
}
END_TEST

/* Misuse given to pool_usable_size() is reported as pool_free() would
 * report it, under pool_usable_size's own name, and gives 0. */
START_TEST(test_usable_size_misuse)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(64, 8, mode);
	pool_t *other = test_pool(64, 8, mode);
	char *block = pool_malloc(pool, 64);
	char *theirs = pool_malloc(other, 64);
	ck_assert_int_eq(pool_owns(pool, block), 1);

	misuse_record();
	ck_assert_uint_eq(pool_usable_size(pool, block + 8), 0);
	assert_report(POOL_ERROR_INVALID_POINTER, "pool_usable_size", pool,
	              block + 8);
	ck_assert_uint_eq(pool_usable_size(pool, theirs), 0);
	assert_report(POOL_ERROR_WRONG_POOL, "pool_usable_size", pool, theirs);
	pool_free(pool, block);
	ck_assert_uint_eq(pool_usable_size(pool, block), 0);
	assert_report(POOL_ERROR_DOUBLE_FREE, "pool_usable_size", pool, block);
	ck_assert_uint_eq(misuse_count(), 3);

	/* The reports acted on nothing. */
	ck_assert_uint_eq(stats_of(pool).in_use, 0);
	ck_assert_uint_eq(stats_of(other).in_use, 1);
	pool_free(other, theirs);
	ck_assert_uint_eq(misuse_count(), 3);
}
END_TEST

/* pool_set_usable_size(): each class's block size, the fallback's size,
 * 0 for NULL; misuse reported as pool_set_usable_size with no pool. */
START_TEST(test_set_usable_size)
{
	int mode = test_modes[_i];
	pool_set_t *set = new_set(PER_CLASS, mode);
	pool_set_t *other = new_set(PER_CLASS, mode);

	for (size_t c = MIN_BLOCK; c <= MAX_BLOCK; c <<= 1) {
		/* Just above the class below, and the class's own size. */
		size_t sizes[2] = {c / 2 + 1, c};
		for (int k = 0; k < 2; k++) {
			errno = 0;
			char *p = pool_set_malloc(set, sizes[k]);
			ck_assert_ptr_nonnull(p);
			size_t usable = pool_set_usable_size(set, p);
			ck_assert_int_eq(errno, 0);
			ck_assert_msg(usable == c,
			              "%zu B in the %zu B class: usable %zu",
			              sizes[k], c, usable);
			ck_assert_uint_eq(pool_set_class_size(set, sizes[k]),
			                  usable);
			char *hooked = opaque(p);
			fill(hooked, usable, (unsigned)c);
			assert_filled(hooked, usable, (unsigned)c,
			              "usable bytes");
			char *q = pool_set_realloc(set, p, usable);
			ck_assert_ptr_eq(q, p);
			fill(q, usable, (unsigned)c + 1);
			pool_set_free(set, q);
		}
	}
	errno = 0;
	char *big = pool_set_malloc(set, MAX_BLOCK + 1);
	ck_assert_ptr_nonnull(big);
	ck_assert_int_eq(pool_set_owns(set, big), 0);
	ck_assert_uint_ge(pool_set_usable_size(set, big), MAX_BLOCK + 1);
	ck_assert_uint_eq(pool_set_usable_size(set, NULL), 0);
	ck_assert_uint_eq(pool_set_usable_size(NULL, big), 0);
	ck_assert_int_eq(errno, 0);
	pool_set_free(set, big);

	char *a = pool_set_malloc(set, 100);
	char *theirs = pool_set_malloc(other, 100);
	uintptr_t slice = (uintptr_t)a & ~(uintptr_t)(PER_CLASS - 1);
	char *guard = (char *)(slice + PER_CLASS - page_size());
	misuse_record();
	ck_assert_uint_eq(pool_set_usable_size(set, a + 16), 0);
	assert_report(POOL_ERROR_INVALID_POINTER, "pool_set_usable_size", NULL,
	              a + 16);
	ck_assert_uint_eq(pool_set_usable_size(set, guard), 0);
	assert_report(POOL_ERROR_INVALID_POINTER, "pool_set_usable_size", NULL,
	              guard);
	ck_assert_uint_eq(pool_set_usable_size(set, theirs), 0);
	assert_report(POOL_ERROR_WRONG_POOL, "pool_set_usable_size", NULL,
	              theirs);
	pool_set_free(set, a);
	ck_assert_uint_eq(pool_set_usable_size(set, a), 0);
	assert_report(POOL_ERROR_DOUBLE_FREE, "pool_set_usable_size", NULL, a);
	ck_assert_uint_eq(misuse_count(), 4);
	pool_set_free(other, theirs);
	ck_assert_uint_eq(misuse_count(), 4);
	pool_set_destroy(other);
	pool_set_destroy(set);
}
END_TEST

/* ------------------------------------------------------------ owns, class */

/* pool_set_owns(): 1 for the start of a block of any class, in use or
 * not; 0 for everything else, reporting nothing. */
START_TEST(test_set_owns)
{
	int mode = test_modes[_i];
	pool_set_t *set = new_set(PER_CLASS, mode);
	pool_set_t *other = new_set(PER_CLASS, mode);
	char *theirs = pool_set_malloc(other, 64);
	char *foreign = malloc(64);
	int local;
	ck_assert_ptr_nonnull(foreign);

	misuse_record();
	errno = 0;
	for (size_t c = MIN_BLOCK; c <= MAX_BLOCK; c <<= 1) {
		char *p = pool_set_malloc(set, c);
		ck_assert_ptr_nonnull(p);
		ck_assert_int_eq(pool_set_owns(set, p), 1);
		ck_assert_int_eq(pool_set_owns(set, p + 1), 0);
		ck_assert_int_eq(pool_set_owns(set, p + c / 2), 0);
		ck_assert_int_eq(pool_set_owns(set, p + c - 1), 0);
		/* The block after it is a block start too. */
		ck_assert_int_eq(pool_set_owns(set, p + c), 1);
		/* The slice's guard page, and the byte before the slice. */
		uintptr_t slice = (uintptr_t)p & ~(uintptr_t)(PER_CLASS - 1);
		ck_assert_int_eq(pool_set_owns(set, (void *)(slice + PER_CLASS -
		                                             page_size())),
		                 0);
		ck_assert_int_eq(
		    pool_set_owns(set, (void *)(slice + PER_CLASS - 1)), 0);
		pool_set_free(set, p);
		/* A block start, in use or not (as pool_owns()). */
		ck_assert_int_eq(pool_set_owns(set, p), 1);
	}
	char *big = pool_set_malloc(set, 2 * MAX_BLOCK);
	ck_assert_ptr_nonnull(big);
	ck_assert_int_eq(pool_set_owns(set, big), 0);
	ck_assert_int_eq(pool_set_owns(set, NULL), 0);
	ck_assert_int_eq(pool_set_owns(NULL, big), 0);
	ck_assert_int_eq(pool_set_owns(set, theirs), 0);
	ck_assert_int_eq(pool_set_owns(set, foreign), 0);
	ck_assert_int_eq(pool_set_owns(set, &local), 0);
	ck_assert_int_eq(pool_set_owns(set, (void *)UINTPTR_MAX), 0);
	ck_assert_int_eq(errno, 0);
	ck_assert_uint_eq(misuse_count(), 0);

	pool_set_free(set, big);
	free(foreign);
	pool_set_free(other, theirs);
	pool_set_destroy(other);
	pool_set_destroy(set);
}
END_TEST

/* The class that serves size, as sizes is each power of two, one less
 * and one more: expected by the rounding rule written out here. */
static void check_class_sizes(const pool_set_t *set, size_t min, size_t max)
{
	for (unsigned k = 0; k < sizeof(size_t) * CHAR_BIT; k++) {
		size_t power = (size_t)1 << k;
		size_t sizes[3] = {power - 1, power, power + 1};
		for (int j = 0; j < 3; j++) {
			size_t size = sizes[j], want = 0;
			if (size <= max) {
				want = min;
				while (want < size)
					want <<= 1;
			}
			errno = 0;
			size_t got = pool_set_class_size(set, size);
			expect(got == want && errno == 0,
			       "pool_set_class_size(%zu) is %zu, not %zu", size,
			       got, want);
		}
	}
	errno = 0;
	ck_assert_uint_eq(pool_set_class_size(set, 0), min);
	ck_assert_uint_eq(pool_set_class_size(set, 1), min);
	ck_assert_uint_eq(pool_set_class_size(set, max), max);
	ck_assert_uint_eq(pool_set_class_size(set, max + 1), 0);
	ck_assert_uint_eq(pool_set_class_size(set, SIZE_MAX), 0);
	ck_assert_uint_eq(pool_set_class_size(set, SIZE_MAX / 2), 0);
	ck_assert_uint_eq(pool_set_class_size(set, SIZE_MAX / 2 + 2), 0);
	ck_assert_int_eq(errno, 0);
}

/* pool_set_class_size() at every boundary, in two sets; and the class it
 * names is the one pool_set_malloc() serves from. */
START_TEST(test_set_class_size)
{
	int mode = test_modes[_i];
	pool_set_t *set = new_set(PER_CLASS, mode);

	check_class_sizes(set, MIN_BLOCK, MAX_BLOCK);
	for (size_t size = 0; size <= MAX_BLOCK + 1; size++) {
		size_t c = pool_set_class_size(set, size);
		char *p = pool_set_malloc(set, size);
		ck_assert_ptr_nonnull(p);
		if (c != 0)
			expect(pool_set_owns(set, p) &&
			           pool_set_usable_size(set, p) == c,
			       "%zu B: pool_set_class_size() says %zu, the "
			       "block is %zu B",
			       size, c, pool_set_usable_size(set, p));
		else
			expect(!pool_set_owns(set, p),
			       "%zu B: above the classes, served by one", size);
		pool_set_free(set, p);
	}
	pool_set_destroy(set);

	errno = 0;
	pool_set_t *narrow = pool_set_init(64, 1024, PER_CLASS, mode);
	ck_assert_ptr_nonnull(narrow);
	check_class_sizes(narrow, 64, 1024);
	pool_set_destroy(narrow);
	ck_assert_uint_eq(pool_set_class_size(NULL, 16), 0);
}
END_TEST

/* ------------------------------------------------------------ trim */

/* pool_set_trim() gives back the pages of the blocks freed; live blocks
 * keep their contents; the blocks read zero through pool_set_calloc()
 * afterwards. */
START_TEST(test_set_trim)
{
	int mode = test_modes[_i];
	enum { COUNT = 1024 };
	const size_t block = 4096;
	pool_set_t *set = new_set((size_t)8 << 20, mode | POOL_NO_FALLBACK);
	static void *blocks[COUNT];

	ck_assert_uint_eq(pool_set_trim(NULL), 0);
	ck_assert_uint_eq(pool_set_trim(set), 0); /* nothing used yet */

	char *live = pool_set_malloc(set, 100);
	ck_assert_ptr_nonnull(live);
	fill(live, 100, 7);
	for (size_t i = 0; i < COUNT; i++) {
		blocks[i] = pool_set_malloc(set, block);
		ck_assert_ptr_nonnull(blocks[i]);
		memset(blocks[i], 0xa5, block);
	}
	for (size_t i = 0; i < COUNT; i++)
		pool_set_free(set, blocks[i]);

	errno = 0;
	size_t released = pool_set_trim(set);
	ck_assert_int_eq(errno, 0);
	/* All of it but what a POOL_PER_THREAD span keeps (256 blocks). */
	size_t kept = mode == POOL_PER_THREAD ? 256 * block : 0;
	ck_assert_msg(released + kept >= COUNT * block &&
	                  released <= COUNT * block + PER_CLASS,
	              "%s: pool_set_trim() gave back %zu KiB of %zu KiB freed",
	              mode_name(mode), released >> 10, (COUNT * block) >> 10);
	assert_filled(live, 100, 7, "a live block after pool_set_trim()");

	for (size_t i = 0; i < COUNT; i++) {
		blocks[i] = pool_set_calloc(set, 1, block);
		ck_assert_ptr_nonnull(blocks[i]);
		ck_assert_int_eq(pool_set_owns(set, blocks[i]), 1);
		if (i % 16 == 0)
			assert_bytes(blocks[i], block, 0,
			             "a block after pool_set_trim()");
	}
	for (size_t i = 0; i < COUNT; i++)
		pool_set_free(set, blocks[i]);
	pool_set_free(set, live);
	pool_set_destroy(set);
}
END_TEST

/* ------------------------------------------------------------ handler */

/* Two handlers that record what they were given. */
static struct {
	unsigned calls;
	const void *arg;
	const pool_t *pool;
	char function[32];
} seen[2];

static void seen_record(int which, const pool_t *pool, const char *function,
                        void *arg)
{
	seen[which].calls++;
	seen[which].arg = arg;
	seen[which].pool = pool;
	snprintf(seen[which].function, sizeof seen[which].function, "%s",
	         function);
}

static void handler_a(const pool_t *pool, const char *function, const void *ptr,
                      enum pool_error error, void *arg)
{
	(void)ptr;
	(void)error;
	seen_record(0, pool, function, arg);
}

static void handler_b(const pool_t *pool, const char *function, const void *ptr,
                      enum pool_error error, void *arg)
{
	(void)ptr;
	(void)error;
	seen_record(1, pool, function, arg);
}

/* Asserts the installed pair. */
static void assert_installed(pool_error_handler_fn *fn, void *arg)
{
	pool_error_handler_fn *got_fn = handler_b;
	void *got_arg = &got_fn;
	pool_get_error_handler(&got_fn, &got_arg);
	ck_assert_msg(got_fn == fn,
	              "pool_get_error_handler(): another handler");
	ck_assert_ptr_eq(got_arg, arg);
	/* Either may be NULL. */
	got_fn = handler_b;
	pool_get_error_handler(&got_fn, NULL);
	ck_assert_msg(got_fn == fn,
	              "pool_get_error_handler(): another handler");
	got_arg = &got_fn;
	pool_get_error_handler(NULL, &got_arg);
	ck_assert_ptr_eq(got_arg, arg);
	pool_get_error_handler(NULL, NULL);
}

/* pool_get_error_handler() tells the pair installed (NULL, NULL for the
 * default); pool_set_error_handler() returns the previous handler, never
 * fails and leaves errno alone, through any number of pairs; each report
 * reaches the handler installed with its arg. */
START_TEST(test_get_error_handler)
{
	int mode = test_modes[_i];
	enum { PAIRS = 20, SWITCHES = 1000 };
	static int args[PAIRS];
	pool_t *pool = test_pool(64, 8, mode);
	char *block = pool_malloc(pool, 64);
	memset(seen, 0, sizeof seen);

	assert_installed(NULL, NULL);
	errno = 0;
	ck_assert_msg(pool_set_error_handler(handler_a, &args[0]) == NULL,
	              "the default handler is returned as NULL");
	ck_assert_int_eq(errno, 0);
	assert_installed(handler_a, &args[0]);
	pool_free(pool, block + 1);
	ck_assert_uint_eq(seen[0].calls, 1);
	ck_assert_ptr_eq(seen[0].arg, &args[0]);
	ck_assert_ptr_eq(seen[0].pool, pool);
	ck_assert_str_eq(seen[0].function, "pool_free");

	/* Twenty pairs, over and over: each call returns the one before. */
	pool_error_handler_fn *previous = handler_a;
	for (unsigned i = 1; i <= SWITCHES; i++) {
		unsigned k = i % PAIRS;
		pool_error_handler_fn *fn = k % 2 ? handler_b : handler_a;
		errno = 0;
		pool_error_handler_fn *got =
		    pool_set_error_handler(fn, &args[k]);
		expect(got == previous && errno == 0,
		       "switch %u: pool_set_error_handler() returned another "
		       "handler, or set errno %d",
		       i, errno);
		pool_get_error_handler(&got, NULL);
		expect(got == fn, "switch %u: another handler installed", i);
		previous = fn;
	}
	/* A pair none of the switches installed last, so that its report
	 * is told apart from the first one's. */
	ck_assert_msg(pool_set_error_handler(handler_b, &args[7]) == previous,
	              "the previous handler is returned");
	assert_installed(handler_b, &args[7]);
	pool_free(pool, block + 2);
	ck_assert_uint_eq(seen[1].calls, 1);
	ck_assert_ptr_eq(seen[1].arg, &args[7]);
	ck_assert_uint_eq(seen[0].calls, 1);

	ck_assert_msg(pool_set_error_handler(NULL, NULL) == handler_b,
	              "the previous handler is returned");
	assert_installed(NULL, NULL);
	pool_free(pool, block);
}
END_TEST

/* ------------------------------------------------------------ set reports */

/* Blocks of 4096 B that damage_for_trim() frees. */
#define TRIM_DAMAGE_BLOCKS 64

struct trim_damage {
	pool_t *pool;    /* or */
	pool_set_t *set; /* to allocate from */
	void *blocks[TRIM_DAMAGE_BLOCKS];
};

static void *trim_damage_allocate(void *arg)
{
	struct trim_damage *d = arg;
	for (size_t i = 0; i < TRIM_DAMAGE_BLOCKS; i++) {
		d->blocks[i] = d->pool != NULL ? pool_malloc(d->pool, 4096)
		                               : pool_set_malloc(d->set, 4096);
		expect(d->blocks[i] != NULL, "allocation %zu failed", i);
	}
	return NULL;
}

/* After damage_for_trim() and a trim that reported nothing: n blocks of
 * 4096 B from the pool (or the set), every one its own and none twice,
 * written whole, then freed with nothing left in use and nothing
 * reported. */
static void assert_serves(pool_t *pool, pool_set_t *set, size_t n)
{
	void **blocks = calloc(n, sizeof *blocks);
	unsigned reports = misuse_count();
	ck_assert_ptr_nonnull(blocks);
	for (size_t i = 0; i < n; i++) {
		blocks[i] = pool != NULL ? pool_malloc(pool, 4096)
		                         : pool_set_malloc(set, 4096);
		ck_assert(pool != NULL ? pool_owns(pool, blocks[i])
		                       : pool_set_owns(set, blocks[i]));
		for (size_t j = 0; j < i; j++)
			ck_assert_ptr_ne(blocks[i], blocks[j]);
		memset(blocks[i], (int)i, 4096);
	}
	for (size_t i = 0; i < n; i++)
		if (pool != NULL)
			pool_free(pool, blocks[i]);
		else
			pool_set_free(set, blocks[i]);
	free(blocks);
	if (pool != NULL) {
		pool_stats_t stats;
		pool_stats(pool, &stats);
		ck_assert_uint_eq(stats.in_use, 0);
	} else {
		ck_assert_uint_eq(class_in_use(set, 4096), 0);
	}
	ck_assert_uint_eq(misuse_count(), reports);
}

/*
 * Leaves free blocks of 4096 B in the pool (or the set) with the first
 * words of one overwritten, where a trim goes through them: allocated by
 * a thread that has exited and freed by this one.  In POOL_SINGLE and
 * POOL_LOCKED mode they are on the free list, whose links the trim
 * follows.  In POOL_PER_THREAD mode a free by another thread only claims
 * the block, and writes no link in it; the trim takes the span, whose
 * drain writes the block's link afresh, and gives it back by its bits:
 * the write is never read, and nothing is reported.
 */
static void damage_for_trim(pool_t *pool, pool_set_t *set)
{
	static struct trim_damage d;
	pthread_t thread;

	d.pool = pool;
	d.set = set;
	ck_assert_int_eq(
	    pthread_create(&thread, NULL, trim_damage_allocate, &d), 0);
	ck_assert_int_eq(pthread_join(thread, NULL), 0);
	for (size_t i = 0; i < TRIM_DAMAGE_BLOCKS; i++)
		if (pool != NULL)
			pool_free(pool, d.blocks[i]);
		else
			pool_set_free(set, d.blocks[i]);
	raw_write(d.blocks[TRIM_DAMAGE_BLOCKS / 2], 16, 0x77);
}

/* Every report from a set's call names that call and gives the handler no
 * pool: free, realloc (within a class and across), usable size, and a
 * damaged free list found by an allocation or by a trim. */
START_TEST(test_set_report_names)
{
	int mode = test_modes[_i];
	pool_set_t *set = new_set(PER_CLASS, mode);
	char *a = pool_set_malloc(set, 100);
	ck_assert_ptr_nonnull(a);
	fill(a, 100, 9);

	misuse_record();
	ck_assert_ptr_null(pool_set_realloc(set, a + 8, 10));
	assert_report(POOL_ERROR_INVALID_POINTER, "pool_set_realloc", NULL,
	              a + 8);
	ck_assert_ptr_null(pool_set_realloc(set, a + 8, 1000));
	assert_report(POOL_ERROR_INVALID_POINTER, "pool_set_realloc", NULL,
	              a + 8);
	ck_assert_ptr_null(pool_set_realloc(set, a + 8, 0));
	assert_report(POOL_ERROR_INVALID_POINTER, "pool_set_realloc", NULL,
	              a + 8);
	pool_set_free(set, a + 8);
	assert_report(POOL_ERROR_INVALID_POINTER, "pool_set_free", NULL, a + 8);
	ck_assert_uint_eq(pool_set_usable_size(set, a + 8), 0);
	assert_report(POOL_ERROR_INVALID_POINTER, "pool_set_usable_size", NULL,
	              a + 8);
	ck_assert_uint_eq(class_in_use(set, 128), 1);
	assert_filled(a, 100, 9, "a block after misuse of its interior");

	pool_set_free(set, a);
	ck_assert_ptr_null(pool_set_realloc(set, a, 10));
	assert_report(POOL_ERROR_DOUBLE_FREE, "pool_set_realloc", NULL, a);
	ck_assert_ptr_null(pool_set_realloc(set, a, 1000));
	assert_report(POOL_ERROR_DOUBLE_FREE, "pool_set_realloc", NULL, a);
	pool_set_free(set, a);
	assert_report(POOL_ERROR_DOUBLE_FREE, "pool_set_free", NULL, a);
	ck_assert_uint_eq(misuse_count(), 8);
	ck_assert_uint_eq(class_in_use(set, 128), 0);

	/* A free block's link overwritten: found by the next allocation
	 * that reaches it. */
	char *b[4];
	for (int i = 0; i < 4; i++)
		b[i] = pool_set_malloc(set, 64);
	for (int i = 0; i < 4; i++)
		pool_set_free(set, b[i]);
	raw_write(b[3], 16, 0x77);
	for (int i = 0; i < 4; i++)
		b[i] = pool_set_malloc(set, 64);
	for (int i = 0; i < 4; i++)
		pool_set_free(set, b[i]);
	ck_assert_uint_eq(misuse_count(), 9);
	ck_assert_int_eq(misuse_last().error, POOL_ERROR_CORRUPTED);
	ck_assert_str_eq(misuse_last().function, "pool_set_malloc");
	ck_assert_ptr_null(misuse_last().pool);

	/* ...and by a trim, which goes through the free blocks. */
	damage_for_trim(NULL, set);
	pool_set_trim(set);
	if (mode == POOL_PER_THREAD) {
		ck_assert_uint_eq(misuse_count(), 9);
		assert_serves(NULL, set, TRIM_DAMAGE_BLOCKS);
	} else {
		ck_assert_uint_eq(misuse_count(), 10);
		ck_assert_int_eq(misuse_last().error, POOL_ERROR_CORRUPTED);
		ck_assert_str_eq(misuse_last().function, "pool_set_trim");
		ck_assert_ptr_null(misuse_last().pool);
	}
	pool_set_destroy(set);
}
END_TEST

/*
 * pool_set_calloc()'s reports name it, not pool_set_malloc, on every path
 * that finds the damage: under POOL_DEBUG_FILL a write into a free block,
 * found on the fast path as the block would be handed out (it never is),
 * and in every set a damaged link, found when the list is followed past
 * the block that held it.
 */
START_TEST(test_set_calloc_report_names)
{
	int mode = test_modes[_i];

	for (int fill = 0; fill <= 1; fill++) {
		pool_set_t *set =
		    new_set(PER_CLASS, mode | (fill ? POOL_DEBUG_FILL : 0));
		char *b[4];
		for (int i = 0; i < 4; i++)
			b[i] = pool_set_malloc(set, 64);
		for (int i = 0; i < 4; i++)
			pool_set_free(set, b[i]);
		misuse_record();
		char *head = b[3];

		if (fill) {
			/* A byte the fill pattern covers (past the link). */
			raw_write(head + 32, 1, 0x77);
			char *p = pool_set_calloc(set, 1, 64);
			ck_assert_ptr_nonnull(p);
			ck_assert_ptr_ne(p, head);
			assert_bytes(p, 64, 0, "pool_set_calloc");
			ck_assert_uint_eq(misuse_count(), 1);
			assert_report(POOL_ERROR_WRITE_AFTER_FREE,
			              "pool_set_calloc", NULL, head);
			pool_set_free(set, p);
			head = p;
		}

		/* The link of the list's head: the first calloc takes the
		 * block, the second finds where its link leads. */
		raw_write(head, sizeof(uintptr_t), 0x77);
		for (int i = 0; i < 2; i++) {
			b[i] = pool_set_calloc(set, 1, 64);
			ck_assert_ptr_nonnull(b[i]);
			assert_bytes(b[i], 64, 0, "pool_set_calloc");
		}
		ck_assert_uint_eq(misuse_count(), 1 + fill);
		assert_report(POOL_ERROR_CORRUPTED, "pool_set_calloc", NULL,
		              head);
		for (int i = 0; i < 2; i++)
			pool_set_free(set, b[i]);
		pool_set_destroy(set);
	}
}
END_TEST

/* A pool's own trim that finds a damaged link names pool_trim and the
 * pool. */
START_TEST(test_pool_trim_report_name)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(4096, 4 * TRIM_DAMAGE_BLOCKS, mode);

	misuse_record();
	damage_for_trim(pool, NULL);
	pool_trim(pool);
	if (mode == POOL_PER_THREAD) {
		ck_assert_uint_eq(misuse_count(), 0);
		assert_serves(pool, NULL, 4 * TRIM_DAMAGE_BLOCKS);
		return;
	}
	ck_assert_uint_eq(misuse_count(), 1);
	ck_assert_int_eq(misuse_last().error, POOL_ERROR_CORRUPTED);
	ck_assert_str_eq(misuse_last().function, "pool_trim");
	ck_assert_ptr_eq(misuse_last().pool, pool);
}
END_TEST

/* ------------------------------------------------------------ set realloc */

/* A shrink keeps a block that stays at least half used; a smaller size
 * moves it to the class that fits; the contents go along. */
START_TEST(test_set_realloc_shrink)
{
	int mode = test_modes[_i];
	pool_set_t *set = new_set(PER_CLASS, mode);
	char *a = pool_set_malloc(set, 1000);
	ck_assert_ptr_nonnull(a);
	fill(a, 1000, 10);

	/* Half used, and back up within the block: it stays. */
	char *same = pool_set_realloc(set, a, 512);
	ck_assert_ptr_eq(same, a);
	assert_filled(same, 512, 10, "shrunk to half its block");
	same = pool_set_realloc(set, a, 1024);
	ck_assert_ptr_eq(same, a);
	fill(same, 1024, 11);
	a = pool_set_realloc(set, same, 700);
	ck_assert_ptr_eq(a, same);
	ck_assert_uint_eq(class_in_use(set, 1024), 1);

	/* Less than half: to the 512 B class. */
	char *b = pool_set_realloc(set, a, 511);
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_ne(b, a);
	ck_assert_int_eq(pool_set_owns(set, b), 1);
	ck_assert_uint_eq(pool_set_usable_size(set, b), 512);
	ck_assert_uint_eq(class_in_use(set, 1024), 0);
	ck_assert_uint_eq(class_in_use(set, 512), 1);
	assert_filled(b, 511, 11, "moved to the 512 B class");

	ck_assert_ptr_eq(pool_set_realloc(set, b, 256), b);
	char *c = pool_set_realloc(set, b, 100); /* two classes down */
	ck_assert_ptr_ne(c, b);
	ck_assert_uint_eq(pool_set_usable_size(set, c), 128);
	assert_filled(c, 100, 11, "moved to the 128 B class");
	char *d = pool_set_realloc(set, c, 17);
	ck_assert_uint_eq(pool_set_usable_size(set, d), 32);
	ck_assert_ptr_eq(pool_set_realloc(set, d, 16), d);
	char *e = pool_set_realloc(set, d, 1);
	ck_assert_ptr_ne(e, d);
	ck_assert_uint_eq(pool_set_usable_size(set, e), 16);
	assert_filled(e, 1, 11, "moved to the 16 B class");
	/* The smallest class has no smaller one: it stays. */
	ck_assert_ptr_eq(pool_set_realloc(set, e, 8), e);

	pool_stats_t total;
	ck_assert_int_eq(pool_set_stats(set, 0, &total), 0);
	ck_assert_uint_eq(total.in_use, 1);
	ck_assert_uint_eq(total.fallback_allocs, 0);
	ck_assert_ptr_null(pool_set_realloc(set, e, 0));
	ck_assert_int_eq(pool_set_stats(set, 0, &total), 0);
	ck_assert_uint_eq(total.in_use, 0);
	pool_set_destroy(set);
}
END_TEST

/* A shrink never fails: where the smaller class has no block, the block
 * stays where it is (with POOL_NO_FALLBACK, and with a fallback, which a
 * shrink never uses); errno is left alone.  Once the class has a block
 * again, the shrink moves there. */
START_TEST(test_set_realloc_shrink_exhausted)
{
	int mode = test_modes[_i];
	enum { MAX_SMALL = SMALL_PER_CLASS / MIN_BLOCK };
	static void *small[MAX_SMALL + 1];

	for (int with_fallback = 0; with_fallback < 2; with_fallback++) {
		int flags = mode | (with_fallback ? 0 : POOL_NO_FALLBACK);
		pool_set_t *set = new_set(SMALL_PER_CLASS, flags);
		char *a = pool_set_malloc(set, MAX_BLOCK);
		ck_assert_int_eq(pool_set_owns(set, a), 1);
		fill(a, MAX_BLOCK, 12);

		/* The 16 B class, exhausted. */
		size_t n = 0;
		for (;;) {
			ck_assert_uint_le(n, MAX_SMALL);
			small[n] = pool_set_malloc(set, MIN_BLOCK);
			if (small[n] == NULL || !pool_set_owns(set, small[n]))
				break;
			n++;
		}
		ck_assert_uint_gt(n, 0);
		if (small[n] != NULL)
			pool_set_free(set, small[n]); /* the fallback's */

		errno = 0;
		ck_assert_ptr_eq(pool_set_realloc(set, a, 10), a);
		ck_assert_ptr_eq(pool_set_realloc(set, a, 1), a);
		ck_assert_int_eq(errno, 0);
		assert_filled(a, 1, 12, "a shrink that stayed");
		ck_assert_uint_eq(class_in_use(set, MAX_BLOCK), 1);
		pool_stats_t total;
		ck_assert_int_eq(pool_set_stats(set, 0, &total), 0);
		ck_assert_uint_eq(total.fallback_allocs,
		                  with_fallback ? total.fallback_frees : 0);

		/* A block of the 16 B class free again: the shrink moves. */
		pool_set_free(set, small[0]);
		char *moved = pool_set_realloc(set, a, 10);
		ck_assert_ptr_eq(moved, small[0]);
		ck_assert_uint_eq(class_in_use(set, MAX_BLOCK), 0);
		assert_filled(moved, 1, 12, "a shrink that moved");

		pool_set_free(set, moved);
		for (size_t i = 1; i < n; i++)
			pool_set_free(set, small[i]);
		ck_assert_int_eq(pool_set_stats(set, 0, &total), 0);
		ck_assert_uint_eq(total.in_use, 0);
		pool_set_destroy(set);
	}
}
END_TEST

/* Growth moves across classes and out to the fallback, copying; a
 * fallback pointer reallocated to a size that fits a class moves to that
 * class (24 B: the 32 B class, not the largest). */
START_TEST(test_set_realloc_grow)
{
	int mode = test_modes[_i];
	pool_set_t *set = new_set(PER_CLASS, mode);
	static const size_t sizes[] = {17,        100,           1000,  3000,
	                               MAX_BLOCK, MAX_BLOCK + 1, 100000};
	char *p = pool_set_malloc(set, 10);
	ck_assert_ptr_nonnull(p);
	fill(p, 10, 13);
	size_t kept = 10;

	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		size_t size = sizes[i];
		size_t before =
		    pool_set_owns(set, p) ? pool_set_usable_size(set, p) : 0;
		char *q = pool_set_realloc(set, p, size);
		ck_assert_ptr_nonnull(q);
		assert_filled(q, kept, 13, "grown");
		size_t c = pool_set_class_size(set, size);
		if (c != 0) {
			ck_assert_int_eq(pool_set_owns(set, q), 1);
			ck_assert_uint_eq(pool_set_usable_size(set, q), c);
			ck_assert_uint_eq(class_in_use(set, c), 1);
			/* A new class means a new block. */
			if (c != before)
				ck_assert_ptr_ne(q, p);
		} else {
			ck_assert_int_eq(pool_set_owns(set, q), 0);
			ck_assert_uint_ge(pool_set_usable_size(set, q), size);
		}
		fill(q, size, 13);
		kept = size;
		p = q;
	}

	/* From the fallback to 24 bytes: the 32 B class. */
	char *q = pool_set_realloc(set, p, 24);
	ck_assert_ptr_nonnull(q);
	ck_assert_int_eq(pool_set_owns(set, q), 1);
	ck_assert_uint_eq(pool_set_usable_size(set, q), 32);
	ck_assert_uint_eq(class_in_use(set, 32), 1);
	assert_filled(q, 24, 13, "from the fallback to the 32 B class");

	pool_stats_t total;
	ck_assert_int_eq(pool_set_stats(set, 0, &total), 0);
	ck_assert_uint_eq(total.in_use, 1);
	ck_assert_uint_eq(total.fallback_allocs, total.fallback_frees);
	pool_set_free(set, q);
	pool_set_destroy(set);
}
END_TEST

/* ------------------------------------------------------------ a huge set */

/* A set of 13 classes of 4 GiB each (56 GiB of address space, more than
 * this machine's memory) is made in every mode, serves every class and
 * goes: slices are reserved, not committed. */
START_TEST(test_set_far_beyond_memory)
{
	int mode = test_modes[_i];
	const size_t per_class = (size_t)4 << 30;
	const size_t min_block = 16, max_block = 65536;
	/* 13 slices, one of alignment slack, the side tables: 15 slices
	 * of address space is plenty. */
	const size_t needed = 15 * per_class;
	struct rlimit as;

	if (sizeof(size_t) < 8) {
		fprintf(stderr, "a 56 GiB set needs a 64-bit address space: "
		                "skipped\n");
		return;
	}
	/* Valgrind describes every page of each class's region as it
	 * appears (56 GiB of them): minutes, not a test. */
	if (under_valgrind()) {
		fprintf(stderr, "a 56 GiB set under Valgrind: skipped\n");
		return;
	}
	if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY &&
	    as.rlim_cur < needed + virtual_bytes()) {
		fprintf(stderr,
		        "RLIMIT_AS of %llu bytes forbids a 56 GiB set: "
		        "skipped\n",
		        (unsigned long long)as.rlim_cur);
		return;
	}
	/* Strict overcommit accounting ignores MAP_NORESERVE. */
	FILE *overcommit = fopen("/proc/sys/vm/overcommit_memory", "r");
	int policy = 0;
	if (overcommit != NULL) {
		if (fscanf(overcommit, "%d", &policy) != 1)
			policy = 0;
		fclose(overcommit);
	}
	if (policy == 2) {
		fprintf(stderr, "vm.overcommit_memory is 2 (no MAP_NORESERVE): "
		                "a 56 GiB set skipped\n");
		return;
	}
	struct rusage usage;
	ck_assert_int_eq(getrusage(RUSAGE_SELF, &usage), 0);
	long peak_before = usage.ru_maxrss; /* KiB */
	errno = 0;
	pool_set_t *set = pool_set_init(min_block, max_block, per_class, mode);
	ck_assert_msg(set != NULL, "pool_set_init(16, 65536, 4 GiB, %s): %s",
	              mode_name(mode), strerror(errno));
	unsigned classes = 0;
	for (size_t c = min_block; c <= max_block; c <<= 1, classes++) {
		char *first = pool_set_malloc(set, c);
		char *second = pool_set_malloc(set, c / 2 + 1);
		ck_assert_ptr_nonnull(first);
		ck_assert_ptr_nonnull(second);
		ck_assert_int_eq(pool_set_owns(set, first), 1);
		ck_assert_int_eq(pool_set_owns(set, second), 1);
		ck_assert_uint_eq(pool_set_usable_size(set, first), c);
		memset(first, 0x11, c);
		memset(second, 0x22, c / 2 + 1);
		assert_bytes(first, c, 0x11, "a block of a 4 GiB class");
		pool_stats_t st;
		ck_assert_int_eq(pool_set_stats(set, c, &st), 0);
		ck_assert_uint_eq(st.in_use, 2);
		/* The class has the slice, short of its guard page. */
		ck_assert_msg(
		    st.block_count * c >= per_class - max_block - page_size(),
		    "the %zu B class has %zu blocks", c, st.block_count);
		pool_set_free(set, first);
		pool_set_free(set, second);
	}
	ck_assert_uint_eq(classes, 13);
	pool_stats_t total;
	ck_assert_int_eq(pool_set_stats(set, 0, &total), 0);
	ck_assert_uint_eq(total.in_use, 0);
	ck_assert_uint_eq(total.fallback_allocs, 0);
	pool_set_destroy(set);

	/* From start to end, the set cost the memory of the blocks used,
	 * and of their side tables: nowhere near its size (an ASan build
	 * included, whose shadow of the set must not be written whole). */
	ck_assert_int_eq(getrusage(RUSAGE_SELF, &usage), 0);
	ck_assert_msg(usage.ru_maxrss - peak_before < 256 * 1024,
	              "%s: the peak resident size grew by %ld MiB",
	              mode_name(mode), (usage.ru_maxrss - peak_before) / 1024);
}
END_TEST

Suite *dropin_suite(void)
{
	Suite *s = suite_create("dropin");

	TCase *tc = test_tcase(s, "usable_size");
	test_add_every_mode(tc, test_usable_size);
	test_add_every_mode(tc, test_usable_size_misuse);
	test_add_every_mode(tc, test_set_usable_size);

	tc = test_tcase(s, "set_owns_class");
	test_add_every_mode(tc, test_set_owns);
	test_add_every_mode(tc, test_set_class_size);

	tc = test_tcase(s, "set_trim");
	test_add_every_mode(tc, test_set_trim);

	tc = test_tcase(s, "handler");
	test_add_every_mode(tc, test_get_error_handler);
	test_add_every_mode(tc, test_set_report_names);
	test_add_every_mode(tc, test_set_calloc_report_names);
	test_add_every_mode(tc, test_pool_trim_report_name);

	tc = test_tcase(s, "set_realloc");
	test_add_every_mode(tc, test_set_realloc_shrink);
	test_add_every_mode(tc, test_set_realloc_shrink_exhausted);
	test_add_every_mode(tc, test_set_realloc_grow);

	tc = test_tcase(s, "set_huge");
	test_add_every_mode(tc, test_set_far_beyond_memory);
	return s;
}
