/*
 * Misuse: interior and unaligned pointers, double frees on one thread,
 * across threads and by two threads at once, a write after free.  Each is
 * reported through the error handler, under the name of the call that
 * found it, and the call then leaves the pool as it was.  The recording
 * handler keeps the process alive; two tests let the default handler
 * really abort, in Check's forked child.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dropin.h" /* raw_write() */
#include "testutil.h"

/* Asserts that exactly one more report arrived, of this kind, about ptr in
 * pool, from the named function. */
static void assert_reported(unsigned *seen, const pool_t *pool, const void *ptr,
                            enum pool_error error, const char *function)
{
	unsigned count = misuse_count();

	expect(count == *seen + 1, "%s(%p): %u reports, expected exactly one",
	       function, ptr, count - *seen);
	struct misuse_report last = misuse_last();
	expect(last.error == error,
	       "%s(%p): reported error %d (%s), expected %d (%s)", function,
	       ptr, (int)last.error, pool_error_string(last.error), (int)error,
	       pool_error_string(error));
	expect(last.ptr == ptr, "%s(%p): the report names %p", function, ptr,
	       last.ptr);
	expect(last.pool == pool, "%s(%p): the report names pool %p, not %p",
	       function, ptr, (const void *)last.pool, (const void *)pool);
	expect(strcmp(last.function, function) == 0,
	       "%s(%p): the report names function %s", function, ptr,
	       last.function);
	*seen = count;
}

/* Asserts the pool hands out each of its blocks exactly once more. */
static void assert_blocks_intact(pool_t *pool)
{
	size_t count = stats_of(pool).block_count;
	void **blocks = take_every_block(pool, 1);
	void **sorted = malloc(count * sizeof(*sorted));

	ck_assert_ptr_nonnull(sorted);
	memcpy(sorted, blocks, count * sizeof(*sorted));
	assert_region_blocks(sorted, count, pool_block_size(pool));
	free(sorted);
	assert_exhausted(pool);
	give_back(pool, blocks, count);
}

/* ------------------------------------------------------------ interior */

/* Block sizes for the every-offset tests: the minimum, a middle size,
 * and one spanning two pages. */
static const size_t interior_sizes[] = {16, 256, 8192};
#define INTERIOR_SIZES (sizeof(interior_sizes) / sizeof(interior_sizes[0]))

START_TEST(test_interior_of_allocated)
{
	int mode = test_modes[_i];

	for (size_t s = 0; s < INTERIOR_SIZES; s++) {
		size_t bs = interior_sizes[s];
		pool_t *pool = test_pool(bs, 4, mode);
		unsigned seen = 0;
		unsigned char *block = pool_malloc(pool, bs);

		ck_assert_int_eq(pool_owns(pool, block), 1);
		memset(block, 0x5e, bs);
		misuse_record();
		for (size_t off = 1; off < bs; off++) {
			pool_free(pool, block + off);
			assert_reported(&seen, pool, block + off,
			                POOL_ERROR_INVALID_POINTER,
			                "pool_free");
			expect(pool_owns(pool, block + off) == 0,
			       "pool_owns(%p) accepts an interior pointer",
			       (void *)(block + off));
		}
		/* Nothing was freed, nothing written. */
		pool_stats_t st = stats_of(pool);
		ck_assert_uint_eq(st.frees, 0);
		ck_assert_uint_eq(st.in_use, 1);
		ck_assert_uint_eq(st.fallback_frees, 0);
		assert_bytes(block, bs, 0x5e, "a block given interior frees");

		/* The block is still ours: the rest fill the pool, then it
		 * frees cleanly. */
		void *others[3];
		for (size_t i = 0; i < 3; i++) {
			others[i] = pool_malloc(pool, bs);
			ck_assert_int_eq(pool_owns(pool, others[i]), 1);
			ck_assert_ptr_ne(others[i], block);
		}
		assert_exhausted(pool);
		pool_free(pool, block);
		for (size_t i = 0; i < 3; i++)
			pool_free(pool, others[i]);
		ck_assert_uint_eq(misuse_count(), seen);
		assert_blocks_intact(pool);
	}
}
END_TEST

START_TEST(test_interior_of_free)
{
	int mode = test_modes[_i];

	for (size_t s = 0; s < INTERIOR_SIZES; s++) {
		size_t bs = interior_sizes[s];
		pool_t *pool = test_pool(bs, 4, mode);
		unsigned seen = 0;

		/* One block freed (on the free list) and the region's last
		 * block (perhaps never handed out yet). */
		void **blocks = take_every_block(pool, 1);
		char *base = assert_region_blocks(blocks, 4, bs);
		give_back(pool, blocks, 4);
		unsigned char *targets[2] = {(unsigned char *)base,
		                             (unsigned char *)base + 3 * bs};

		misuse_record();
		for (size_t t = 0; t < 2; t++) {
			for (size_t off = 1; off < bs; off++) {
				pool_free(pool, targets[t] + off);
				assert_reported(&seen, pool, targets[t] + off,
				                POOL_ERROR_INVALID_POINTER,
				                "pool_free");
			}
		}
		pool_stats_t st = stats_of(pool);
		ck_assert_uint_eq(st.frees, 4);
		ck_assert_uint_eq(st.in_use, 0);
		assert_blocks_intact(pool);
		ck_assert_uint_eq(misuse_count(), seen);
	}
}
END_TEST

START_TEST(test_unaligned)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(64, 4, mode);
	unsigned seen = 0;
	unsigned char *block = pool_malloc(pool, 64);

	/* Odd addresses, and one aligned for a word but not a block. */
	misuse_record();
	static const size_t offsets[] = {1, 3, 7, 33, 63, 8, 16, 32};
	for (size_t i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++) {
		pool_free(pool, block + offsets[i]);
		assert_reported(&seen, pool, block + offsets[i],
		                POOL_ERROR_INVALID_POINTER, "pool_free");
	}
	ck_assert_uint_eq(stats_of(pool).in_use, 1);
	pool_free(pool, block);
	ck_assert_uint_eq(misuse_count(), seen);
	assert_blocks_intact(pool);
}
END_TEST

START_TEST(test_interior_realloc)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(64, 4, mode);
	unsigned seen = 0;
	unsigned char *block = pool_malloc(pool, 64);

	memset(block, 0x42, 64);
	misuse_record();
	/* pool_realloc() finds the misuse too, and does nothing with it. */
	for (size_t off = 1; off < 64; off += 9) {
		void *r = pool_realloc(pool, block + off, 16);
		assert_reported(&seen, pool, block + off,
		                POOL_ERROR_INVALID_POINTER, "pool_realloc");
		ck_assert_ptr_null(r);
	}
	assert_bytes(block, 64, 0x42, "a block given interior reallocs");
	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.in_use, 1);
	ck_assert_uint_eq(st.allocs, 1);
	ck_assert_uint_eq(st.fallback_allocs, 0);
	pool_free(pool, block);
	assert_blocks_intact(pool);
}
END_TEST

/* ------------------------------------------------------------ edges */

START_TEST(test_region_edges)
{
	int mode = test_modes[_i];
	const size_t bs = 128, count = 16;
	pool_t *pool = test_pool(bs, count, mode);
	void **blocks = take_every_block(pool, 1);
	char *base = assert_region_blocks(blocks, count, bs);
	char *end = base + bs * count;

	/* One past the last block and one byte before the first are outside
	 * the region: pool_free() would hand them to free(), so only
	 * pool_owns() is asked about them. */
	ck_assert_int_eq(pool_owns(pool, end), 0);
	ck_assert_int_eq(pool_owns(pool, base - 1), 0);
	ck_assert_int_eq(pool_owns(pool, base - bs), 0);
	ck_assert_int_eq(pool_owns(pool, end + bs), 0);
	ck_assert_int_eq(pool_owns(pool, base), 1);
	ck_assert_int_eq(pool_owns(pool, end - bs), 1);
	ck_assert_int_eq(pool_owns(pool, end - 1), 0);
	for (size_t off = 1; off < bs; off++)
		expect(pool_owns(pool, base + off) == 0,
		       "pool_owns(base + %zu) accepts an interior pointer",
		       off);

	/* Every block start is owned, handed out or free. */
	give_back(pool, blocks, count);
	for (size_t i = 0; i < count; i++)
		ck_assert_int_eq(pool_owns(pool, base + i * bs), 1);
}
END_TEST

/*
 * Addresses inside the pool's own mappings that are no block: the lower
 * guard page, the unused start of the first page (when the blocks do not
 * fill whole pages), one past the last block and the upper guard page.
 * Each is reported as an invalid pointer by every call that frees, and
 * none reaches free() (which would abort, or fault on the guard page).
 */
static void check_mapping_edges(int mode, size_t bs, size_t count)
{
	pool_t *pool = test_pool(bs, count, mode);
	void **blocks = take_every_block(pool, 1);
	char *base = assert_region_blocks(blocks, count, bs);
	char *end = base + bs * count;
	size_t page = page_size();
	char *area = (char *)((uintptr_t)base & ~(uintptr_t)(page - 1));
	char *edges[8];
	size_t n = 0;
	unsigned seen = 0;

	misuse_record();
	edges[n++] = area - page; /* the lower guard page's first byte */
	edges[n++] = base - 16;   /* the lead's last slot, or the guard */
	if (area < base) {
		edges[n++] = area; /* the unused start of the first page */
		edges[n++] = area + 16;
	}
	edges[n++] = end; /* one past the last block */
	edges[n++] = end + 16;
	edges[n++] = end + page - 16; /* the upper guard page's last slot */
	for (size_t i = 0; i < n; i++) {
		char *ptr = edges[i];
		pool_free(pool, ptr);
		assert_reported(&seen, pool, ptr, POOL_ERROR_INVALID_POINTER,
		                "pool_free");
		errno = 0;
		ck_assert_ptr_null(pool_realloc(pool, ptr, 8));
		assert_reported(&seen, pool, ptr, POOL_ERROR_INVALID_POINTER,
		                "pool_realloc");
		pool_free_bulk(pool, 1, (void *const *)&edges[i]);
		assert_reported(&seen, pool, ptr, POOL_ERROR_INVALID_POINTER,
		                "pool_free_bulk");
	}
	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.fallback_frees, 0);
	ck_assert_uint_eq(st.in_use, count);
	give_back(pool, blocks, count);
}

START_TEST(test_mapping_edges)
{
	int mode = test_modes[_i];

	/* Less than a page (a lead before the first block), whole pages,
	 * and blocks larger than a page. */
	check_mapping_edges(mode, 256, 3);
	check_mapping_edges(mode, 16, 4096);
	check_mapping_edges(mode, 8192, 2);
}
END_TEST

/* ------------------------------------------------------------ double free */

START_TEST(test_double_free)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(64, 8, mode);
	unsigned seen = 0;
	void *block = pool_malloc(pool, 64);
	void *other = pool_malloc(pool, 64);

	misuse_record();
	pool_free(pool, block);
	ck_assert_uint_eq(misuse_count(), 0);
	pool_free(pool, block);
	assert_reported(&seen, pool, block, POOL_ERROR_DOUBLE_FREE,
	                "pool_free");
	/* The block is free once, not twice. */
	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.frees, 1);
	ck_assert_uint_eq(st.in_use, 1);

	/* ... and a third time, after others were freed on top of it. */
	pool_free(pool, other);
	pool_free(pool, block);
	assert_reported(&seen, pool, block, POOL_ERROR_DOUBLE_FREE,
	                "pool_free");
	assert_blocks_intact(pool);
}
END_TEST

START_TEST(test_double_free_every_block)
{
	int mode = test_modes[_i];
	const size_t count = 32;
	pool_t *pool = test_pool(64, count, mode);
	unsigned seen = 0;
	void **blocks = take_every_block(pool, 64);

	/* Free them all, then free each again: a block is caught wherever
	 * it sits in the free list, not just at its head. */
	for (size_t i = 0; i < count; i++)
		pool_free(pool, blocks[i]);
	misuse_record();
	shuffle_pointers(blocks, count, 2024);
	for (size_t i = 0; i < count; i++) {
		pool_free(pool, blocks[i]);
		assert_reported(&seen, pool, blocks[i], POOL_ERROR_DOUBLE_FREE,
		                "pool_free");
	}
	ck_assert_uint_eq(stats_of(pool).frees, count);
	free(blocks);
	assert_blocks_intact(pool);
	ck_assert_uint_eq(misuse_count(), seen);
}
END_TEST

START_TEST(test_free_never_allocated)
{
	int mode = test_modes[_i];
	const size_t count = 64, bs = 64;
	pool_t *pool = test_pool(bs, count, mode);
	unsigned seen = 0;
	size_t found = 0;

	/* One block handed out; every other block of the region has never
	 * been, and freeing one is a double free.  They are found as the
	 * addresses a whole number of blocks away that pool_owns() accepts
	 * (integer arithmetic: they are not part of any object we have). */
	char *first = pool_malloc(pool, bs);
	ck_assert_int_eq(pool_owns(pool, first), 1);
	misuse_record();
	for (long k = -(long)count; k <= (long)count; k++) {
		void *p =
		    (void *)((uintptr_t)first + (uintptr_t)(k * (long)bs));
		if (k == 0 || pool_owns(pool, p) != 1)
			continue;
		found++;
		pool_free(pool, p);
		assert_reported(&seen, pool, p, POOL_ERROR_DOUBLE_FREE,
		                "pool_free");
	}
	ck_assert_uint_eq(found, count - 1);
	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.frees, 0);
	ck_assert_uint_eq(st.in_use, 1);
	pool_free(pool, first);
	assert_blocks_intact(pool);
	ck_assert_uint_eq(misuse_count(), seen);
}
END_TEST

/* Runs fn(arg) on a new thread and waits for it. */
static void run_on_thread(void *(*fn)(void *), void *arg)
{
	pthread_t thread;

	ck_assert_int_eq(pthread_create(&thread, NULL, fn, arg), 0);
	ck_assert_int_eq(pthread_join(thread, NULL), 0);
}

struct handoff {
	pool_t *pool;
	void *block;
	pthread_barrier_t *barrier; /* shared with the main thread, or NULL */
};

static void *allocate_one(void *arg)
{
	struct handoff *h = arg;

	h->block = pool_malloc(h->pool, 64);
	return NULL;
}

static void *free_one(void *arg)
{
	struct handoff *h = arg;

	pool_free(h->pool, h->block);
	return NULL;
}

START_TEST(test_double_free_across_threads)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(64, 16, mode);
	struct handoff h = {.pool = pool};
	unsigned seen = 0;

	/* A allocates, B frees, C frees again; each thread has exited before
	 * the next starts, so this holds in every mode. */
	misuse_record();
	run_on_thread(allocate_one, &h);
	ck_assert_int_eq(pool_owns(pool, h.block), 1);
	run_on_thread(free_one, &h);
	ck_assert_uint_eq(misuse_count(), 0);
	run_on_thread(free_one, &h);
	assert_reported(&seen, pool, h.block, POOL_ERROR_DOUBLE_FREE,
	                "pool_free");
	/* And the main thread, a fourth, is caught too. */
	pool_free(pool, h.block);
	assert_reported(&seen, pool, h.block, POOL_ERROR_DOUBLE_FREE,
	                "pool_free");
	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.frees, 1);
	ck_assert_uint_eq(st.in_use, 0);
	assert_blocks_intact(pool);
}
END_TEST

static void *allocate_wait_free(void *arg)
{
	struct handoff *h = arg;

	h->block = pool_malloc(h->pool, 64);
	pthread_barrier_wait(h->barrier); /* main: another thread frees it */
	pthread_barrier_wait(h->barrier);
	pool_free(h->pool, h->block); /* the owner frees it again */
	return NULL;
}

START_TEST(test_double_free_by_owner)
{
	int mode = test_modes[TEST_FIRST_CONCURRENT_MODE + _i];
	pool_t *pool = test_pool(64, 16, mode);
	pthread_barrier_t barrier;
	struct handoff h = {.pool = pool, .barrier = &barrier};
	pthread_t owner, other;
	unsigned seen = 0;

	/* The owner is alive when another thread frees its block, then
	 * frees it itself: its own fast path must see the block is free.
	 * What happens in between is only looked at once the owner has
	 * exited, so a failure never leaves it waiting. */
	misuse_record();
	ck_assert_int_eq(pthread_barrier_init(&barrier, NULL, 2), 0);
	ck_assert_int_eq(pthread_create(&owner, NULL, allocate_wait_free, &h),
	                 0);
	pthread_barrier_wait(&barrier);
	int owned = pool_owns(pool, h.block);
	int created = pthread_create(&other, NULL, free_one, &h);
	if (created == 0)
		pthread_join(other, NULL);
	unsigned reports_between = misuse_count();
	pthread_barrier_wait(&barrier);
	ck_assert_int_eq(pthread_join(owner, NULL), 0);
	pthread_barrier_destroy(&barrier);

	ck_assert_int_eq(created, 0);
	ck_assert_int_eq(owned, 1);
	ck_assert_uint_eq(reports_between, 0);
	assert_reported(&seen, pool, h.block, POOL_ERROR_DOUBLE_FREE,
	                "pool_free");
	ck_assert_uint_eq(stats_of(pool).in_use, 0);
	assert_blocks_intact(pool);
}
END_TEST

/* ------------------------------------------------------------ at once */

#define RACE_ROUNDS 2000
/* A racer spins this long for the other, then yields to it: when both are
 * on a CPU the spin lines the frees up, and when the other is not (a loaded
 * machine, Valgrind's one thread at a time) spinning on would only burn
 * the time slice the other needs. */
#define RACE_SPINS 1000

/*
 * Each round one block is freed by two threads at the same moment.  Who
 * allocated it rotates: the main thread (both frees are by non-owners), or
 * one of the racers (its own free races a free by another thread, the case
 * where a per-thread owner and a remote free meet).
 */
struct race {
	pool_t *pool;
	void *block;
	/* Each round: begin (the main thread has checked the last round),
	 * the allocator allocates, allocated, both free, done. */
	pthread_barrier_t begin, allocated, done;
	/* Racers arrived at the free, counted over all rounds: spinning on
	 * it lines the two frees up far closer than a barrier's wake-up. */
	atomic_uint arrived;
	/* Allocations the pool did not serve: freeing such a pointer twice
	 * would be a real double free of the system's memory. */
	atomic_uint not_pooled;
};

struct racer {
	struct race *race;
	int id;
};

/* Allocates this round's block; a pointer the pool did not serve is
 * given back at once and the round races on NULL instead. */
static void race_allocate(struct race *r)
{
	void *p = pool_malloc(r->pool, 64);

	if (pool_owns(r->pool, p) == 1) {
		r->block = p;
		return;
	}
	atomic_fetch_add(&r->not_pooled, 1);
	pool_free(r->pool, p);
	r->block = NULL;
}

static void *race_free(void *arg)
{
	struct racer *self = arg;
	struct race *r = self->race;

	for (int round = 0; round < RACE_ROUNDS; round++) {
		pthread_barrier_wait(&r->begin);
		if (round % 3 == self->id + 1)
			race_allocate(r);
		pthread_barrier_wait(&r->allocated);
		unsigned target = 2 * ((unsigned)round + 1);
		atomic_fetch_add(&r->arrived, 1);
		for (unsigned spins = 0; atomic_load(&r->arrived) < target;
		     spins++)
			if (spins >= RACE_SPINS)
				sched_yield();
		pool_free(r->pool, r->block);
		pthread_barrier_wait(&r->done);
	}
	return NULL;
}

START_TEST(test_double_free_at_once)
{
	/* The loop's last turn: POOL_LOCKED with the threads' stacks on from
	 * the start, where the tag a free leaves in the block arbitrates. */
	bool stacks = _i == TEST_MODE_COUNT - TEST_FIRST_CONCURRENT_MODE;
	int mode = stacks ? POOL_LOCKED
	                  : test_modes[TEST_FIRST_CONCURRENT_MODE + _i];
	if (stacks)
		ck_assert_int_eq(setenv("SHIFTPOOL_DEBUG", "locked-stacks", 1),
		                 0);
	/* Room for every thread to hold blocks of its own. */
	pool_t *pool = test_pool(64, 256, mode);
	unsetenv("SHIFTPOOL_DEBUG");
	struct race r = {.pool = pool};
	struct racer racers[2];
	pthread_t threads[2];

	misuse_record();
	ck_assert_int_eq(pthread_barrier_init(&r.begin, NULL, 3), 0);
	ck_assert_int_eq(pthread_barrier_init(&r.allocated, NULL, 3), 0);
	ck_assert_int_eq(pthread_barrier_init(&r.done, NULL, 3), 0);
	for (int t = 0; t < 2; t++) {
		racers[t] = (struct racer){.race = &r, .id = t};
		ck_assert_int_eq(
		    pthread_create(&threads[t], NULL, race_free, &racers[t]),
		    0);
	}
	/* The racers run every round whatever happens: the first thing that
	 * goes wrong is kept and asserted once they are gone. */
	char failure[160] = "";
	for (int round = 0; round < RACE_ROUNDS; round++) {
		pthread_barrier_wait(&r.begin);
		if (round % 3 == 0)
			race_allocate(&r);
		pthread_barrier_wait(&r.allocated);
		pthread_barrier_wait(&r.done);
		/* A pool may find the second free later (when the block's
		 * owner next looks at blocks freed by other threads), but it
		 * never reports one double free twice. */
		unsigned reports = misuse_count();
		if (failure[0] == '\0' && reports > (unsigned)round + 1)
			snprintf(failure, sizeof(failure),
			         "round %d: %u reports for %d double frees: a "
			         "valid free was reported as misuse",
			         round, reports, round + 1);
	}
	for (int t = 0; t < 2; t++)
		ck_assert_int_eq(pthread_join(threads[t], NULL), 0);
	pthread_barrier_destroy(&r.begin);
	pthread_barrier_destroy(&r.allocated);
	pthread_barrier_destroy(&r.done);
	ck_assert_msg(atomic_load(&r.not_pooled) == 0,
	              "%u of %d one-block allocations were not served by a "
	              "256-block pool",
	              atomic_load(&r.not_pooled), RACE_ROUNDS);
	ck_assert_msg(failure[0] == '\0', "%s", failure);

	/* Taking every block back makes the pool look at every pending free:
	 * no block went onto a free list twice, each double free has been
	 * reported exactly once, and only one free per block counted. */
	assert_blocks_intact(pool);
	ck_assert_msg(misuse_count() == RACE_ROUNDS,
	              "%u reports for %d double frees", misuse_count(),
	              RACE_ROUNDS);
	ck_assert_uint_eq(misuse_count_of(POOL_ERROR_DOUBLE_FREE), RACE_ROUNDS);
	pool_stats_t st = stats_of(pool);
	ck_assert_msg(
	    st.in_use == 0 && st.allocs == st.frees,
	    "after %d double frees: allocs %llu frees %llu in_use %zu",
	    RACE_ROUNDS, (unsigned long long)st.allocs,
	    (unsigned long long)st.frees, st.in_use);
}
END_TEST

/* ------------------------------------------------------------ names */

/* A write into a free block, found as a call hands the block out, is
 * reported under that call's name, whichever call it is. */
START_TEST(test_alloc_report_names)
{
	static const char *const names[] = {"pool_malloc", "pool_calloc",
	                                    "pool_strdup", "pool_realloc",
	                                    "pool_malloc_bulk"};
	int mode = test_modes[_i];
	pool_t *pool = test_pool(64, 16, mode | POOL_DEBUG_FILL);
	unsigned seen = 0;

	misuse_record();
	for (unsigned k = 0; k < sizeof names / sizeof names[0]; k++) {
		char *victim = pool_malloc(pool, 64);
		ck_assert_ptr_nonnull(victim);
		pool_free(pool, victim);
		raw_write(victim + 32, 1, 0x77);
		void *p = NULL;
		switch (k) {
		case 0:
			p = pool_malloc(pool, 64);
			break;
		case 1:
			p = pool_calloc(pool, 1, 64);
			break;
		case 2:
			p = pool_strdup(pool, "strdup");
			break;
		case 3:
			p = pool_realloc(pool, NULL, 64);
			break;
		default:
			ck_assert_uint_eq(pool_malloc_bulk(pool, 64, 1, &p), 1);
			break;
		}
		ck_assert_ptr_nonnull(p);
		ck_assert_ptr_ne(p, victim);
		assert_reported(&seen, pool, victim,
		                POOL_ERROR_WRITE_AFTER_FREE, names[k]);
		pool_free(pool, p);
	}
}
END_TEST

/* ------------------------------------------------------------ handler */

static void other_handler(const pool_t *pool, const char *function,
                          const void *ptr, enum pool_error error, void *arg)
{
	(void)pool, (void)function, (void)ptr, (void)error, (void)arg;
}

START_TEST(test_handler_api)
{
	/* Installing returns the one installed before. */
	pool_set_error_handler(other_handler, NULL);
	ck_assert_ptr_eq(pool_set_error_handler(NULL, NULL), other_handler);
	ck_assert_ptr_ne(pool_set_error_handler(other_handler, NULL),
	                 other_handler);
	ck_assert_ptr_eq(pool_set_error_handler(NULL, NULL), other_handler);

	/* Every code has its own description, and a stray one has one too. */
	const char *invalid = pool_error_string(POOL_ERROR_INVALID_POINTER);
	const char *twice = pool_error_string(POOL_ERROR_DOUBLE_FREE);
	const char *corrupt = pool_error_string(POOL_ERROR_CORRUPTED);
	ck_assert_ptr_nonnull(invalid);
	ck_assert_ptr_nonnull(twice);
	ck_assert_ptr_nonnull(corrupt);
	ck_assert_str_ne(invalid, twice);
	ck_assert_str_ne(invalid, corrupt);
	ck_assert_str_ne(twice, corrupt);
	ck_assert_ptr_nonnull(pool_error_string((enum pool_error)0));
	ck_assert_ptr_nonnull(pool_error_string((enum pool_error)99));
}
END_TEST

/* ------------------------------------------------------------ abort */

/* These run with the default handler, which must abort the process. */

START_TEST(test_abort_double_free)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(64, 4, mode);
	void *block = pool_malloc(pool, 64);

	pool_free(pool, block);
	pool_free(pool, block);
}
END_TEST

START_TEST(test_abort_interior)
{
	int mode = test_modes[_i];
	pool_t *pool = test_pool(64, 4, mode);
	char *block = pool_malloc(pool, 64);

	pool_free(pool, block + 8);
}
END_TEST

/* ------------------------------------------------------------ suite */

Suite *misuse_suite(void)
{
	Suite *s = suite_create("misuse");
	TCase *tc;

	tc = test_tcase(s, "interior");
	test_add_every_mode(tc, test_interior_of_allocated);
	test_add_every_mode(tc, test_interior_of_free);
	test_add_every_mode(tc, test_unaligned);
	test_add_every_mode(tc, test_interior_realloc);

	tc = test_tcase(s, "edges");
	test_add_every_mode(tc, test_region_edges);
	test_add_every_mode(tc, test_mapping_edges);

	tc = test_tcase(s, "double_free");
	test_add_every_mode(tc, test_double_free);
	test_add_every_mode(tc, test_double_free_every_block);
	test_add_every_mode(tc, test_free_never_allocated);
	test_add_every_mode(tc, test_double_free_across_threads);

	/* Modes where threads may call at once; loop index is offset by
	 * TEST_FIRST_CONCURRENT_MODE. */
	tc = test_tcase(s, "double_free_concurrent");
	test_add_concurrent_modes(tc, test_double_free_by_owner);
	tcase_add_loop_test(tc, test_double_free_at_once, 0,
	                    TEST_MODE_COUNT - TEST_FIRST_CONCURRENT_MODE + 1);

	tc = test_tcase(s, "handler");
	tcase_add_test(tc, test_handler_api);
	test_add_every_mode(tc, test_alloc_report_names);

	/* A real abort needs Check's fork: without one it would end the
	 * runner, so CK_FORK=no (for a debugger) leaves these out. */
	const char *fork_mode = getenv("CK_FORK");
	if (fork_mode != NULL && strcmp(fork_mode, "no") == 0) {
		fprintf(stderr, "misuse: CK_FORK=no, the abort tests are not "
		                "run\n");
	} else {
		tc = test_tcase(s, "abort");
		tcase_add_loop_test_raise_signal(tc, test_abort_double_free,
		                                 SIGABRT, 0, TEST_MODE_COUNT);
		tcase_add_loop_test_raise_signal(tc, test_abort_interior,
		                                 SIGABRT, 0, TEST_MODE_COUNT);
	}

	return s;
}
