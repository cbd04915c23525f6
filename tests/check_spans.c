/*
 * POOL_PER_THREAD's spans: a thread owns many, keeps few wholly free ones,
 * gives every one up at exit; and pool_trim() beside them: the blocks it
 * resets read zero, it never makes an allocation fail, and a child forked
 * while it runs can allocate.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dropin.h"
#include "testutil.h"

#define PT (POOL_PER_THREAD | POOL_NO_FALLBACK)

/* Takes n blocks of size bytes, each asserted from the pool. */
static void **take(pool_t *pool, size_t size, size_t n)
{
	void **blocks = malloc(n * sizeof *blocks);
	ck_assert_ptr_nonnull(blocks);
	for (size_t i = 0; i < n; i++) {
		blocks[i] = pool_malloc(pool, size);
		ck_assert_msg(blocks[i] != NULL && pool_owns(pool, blocks[i]),
		              "block %zu of %zu not from the pool", i, n);
	}
	return blocks;
}

/* How many more blocks the pool hands out before it has none; frees them
 * again. */
static size_t blocks_left(pool_t *pool, size_t size, size_t most)
{
	void **blocks = malloc(most * sizeof *blocks);
	ck_assert_ptr_nonnull(blocks);
	size_t n = 0;
	while (n < most && (blocks[n] = pool_malloc(pool, size)) != NULL)
		n++;
	for (size_t i = 0; i < n; i++)
		pool_free(pool, blocks[i]);
	free(blocks);
	return n;
}

/* ------------------------------------------------------------ trim */

/*
 * A region that is not a whole number of pages: the spans at its ends, and
 * spans that straddle pages, share pages with blocks that pool_trim() does
 * not give back.  After the trim every pool_calloc() reads zero, whether
 * its block was given back, kept, or reset to "never used".
 */
static const size_t odd_shapes[][2] = {
    {1024, 513}, {32, 16385}, {64, 8193}, {512, 4097}};

START_TEST(test_calloc_after_trim_odd_region)
{
	size_t size = odd_shapes[_i][0], count = odd_shapes[_i][1];
	pool_t *pool = test_pool(size, count, PT);
	void **blocks = take(pool, size, count);
	for (size_t i = 0; i < count; i++)
		memset(blocks[i], 0xab, size);
	for (size_t i = 0; i < count; i++)
		pool_free(pool, blocks[i]);
	pool_trim(pool);
	for (size_t i = 0; i < count; i++) {
		blocks[i] = pool_calloc(pool, 1, size);
		ck_assert_msg(blocks[i] != NULL, "calloc %zu of %zu failed", i,
		              count);
		assert_bytes(blocks[i], size, 0, "a block after pool_trim()");
	}
	give_back(pool, blocks, count);
}
END_TEST

/*
 * One thread takes every block of a POOL_NO_FALLBACK pool, round after
 * round, while two others trim it without pause: no allocation may fail.
 * Spans of one block make every allocation take a span off the stack the
 * trim empties.
 */
#define TRIM_RACE_BLOCKS   8
#define TRIM_RACE_TRIMMERS 2
#ifndef TRIM_RACE_ROUNDS
#define TRIM_RACE_ROUNDS 20000
#endif

struct trim_race {
	pool_t *pool;
	atomic_bool stop;
};

static void *trim_loop(void *arg)
{
	struct trim_race *r = arg;
	while (!atomic_load(&r->stop))
		pool_trim(r->pool);
	return NULL;
}

START_TEST(test_trim_never_fails_alloc)
{
	struct trim_race r = {.pool = test_pool(64, TRIM_RACE_BLOCKS, PT)};
	pthread_t trimmers[TRIM_RACE_TRIMMERS];
	void *blocks[TRIM_RACE_BLOCKS];
	unsigned failed = 0;

	atomic_init(&r.stop, false);
	for (int t = 0; t < TRIM_RACE_TRIMMERS; t++)
		ck_assert_int_eq(
		    pthread_create(&trimmers[t], NULL, trim_loop, &r), 0);
	for (unsigned round = 0; round < TRIM_RACE_ROUNDS; round++) {
		for (size_t i = 0; i < TRIM_RACE_BLOCKS; i++) {
			blocks[i] = pool_malloc(r.pool, 64);
			failed += blocks[i] == NULL;
		}
		for (size_t i = 0; i < TRIM_RACE_BLOCKS; i++)
			pool_free(r.pool, blocks[i]);
	}
	atomic_store(&r.stop, true);
	for (int t = 0; t < TRIM_RACE_TRIMMERS; t++)
		ck_assert_int_eq(pthread_join(trimmers[t], NULL), 0);
	ck_assert_msg(failed == 0,
	              "%u of %u allocations failed while pool_trim() ran",
	              failed, TRIM_RACE_ROUNDS * TRIM_RACE_BLOCKS);
}
END_TEST

/*
 * fork() while another thread is inside pool_trim(): the child (which has
 * no trimming thread) takes every block of the pool.  A child that waits
 * for a trim that will never end is stopped by its alarm and fails.
 */
#define FORK_TRIM_BLOCKS 4096
#define FORK_TRIM_FORKS  40

START_TEST(test_fork_during_trim)
{
	struct trim_race r = {.pool = test_pool(64, FORK_TRIM_BLOCKS, PT)};
	pthread_t trimmer;

	/* Every span touched and given back: the trim has them all to
	 * hold. */
	give_back(r.pool, take(r.pool, 64, FORK_TRIM_BLOCKS), FORK_TRIM_BLOCKS);
	atomic_init(&r.stop, false);
	ck_assert_int_eq(pthread_create(&trimmer, NULL, trim_loop, &r), 0);
	for (int i = 0; i < FORK_TRIM_FORKS; i++) {
		pid_t pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			alarm(60);
			size_t n = blocks_left(r.pool, 64, FORK_TRIM_BLOCKS);
			_exit(n == FORK_TRIM_BLOCKS ? 0 : 1);
		}
		int status;
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		              "child %d: %s", i,
		              WIFSIGNALED(status) ? "hung (killed by its alarm)"
		                                  : "did not get every block");
	}
	atomic_store(&r.stop, true);
	ck_assert_int_eq(pthread_join(trimmer, NULL), 0);
}
END_TEST

/* ------------------------------------------------------------ ownership */

/*
 * A thread frees, in random order, blocks of several spans it allocated
 * (local frees into spans it owns), then allocates them again: it gets
 * them back from its own spans, no block twice, and the pool keeps none
 * in use.
 */
#define OWN_BLOCKS 2048

START_TEST(test_random_frees_into_own_spans)
{
	pool_t *pool = test_pool(64, 4 * OWN_BLOCKS, PT);
	void **blocks = take(pool, 64, OWN_BLOCKS);

	for (uint64_t round = 1; round <= 8; round++) {
		shuffle_pointers(blocks, OWN_BLOCKS, round);
		for (size_t i = 0; i < OWN_BLOCKS / 2; i++)
			pool_free(pool, blocks[i]);
		for (size_t i = 0; i < OWN_BLOCKS / 2; i++) {
			blocks[i] = pool_malloc(pool, 64);
			ck_assert_ptr_nonnull(blocks[i]);
		}
		pool_stats_t st = stats_of(pool);
		ck_assert_uint_eq(st.in_use, OWN_BLOCKS);
	}
	void **sorted = malloc(OWN_BLOCKS * sizeof *sorted);
	ck_assert_ptr_nonnull(sorted);
	memcpy(sorted, blocks, OWN_BLOCKS * sizeof *sorted);
	shuffle_pointers(sorted, OWN_BLOCKS, 99);
	/* No block handed out twice: a second free of any is reported. */
	misuse_record();
	give_back(pool, blocks, OWN_BLOCKS);
	ck_assert_uint_eq(misuse_count(), 0);
	pool_free(pool, sorted[0]);
	ck_assert_uint_eq(misuse_count_of(POOL_ERROR_DOUBLE_FREE), 1);
	free(sorted);
	ck_assert_uint_eq(stats_of(pool).in_use, 0);
}
END_TEST

/*
 * A pool with room for exactly the blocks a thread keeps live, which frees
 * one at random and allocates another in its place, over and over: every
 * allocation is served by the pool (POOL_NO_FALLBACK would make a miss
 * NULL), none twice, and a block freed twice, on the thread's stack or
 * back on its span, is reported each time.
 */
#define EXACT_BLOCKS 1000
#define EXACT_STEPS  200000

START_TEST(test_random_replace_in_exact_pool)
{
	pool_t *pool = test_pool(64, EXACT_BLOCKS, PT);
	void **blocks = take(pool, 64, EXACT_BLOCKS);
	uint64_t x = 88172645463325252u;

	/* Fewer under Valgrind, which runs every instruction slowly. */
	size_t steps = under_valgrind() ? EXACT_STEPS / 50 : EXACT_STEPS;
	for (size_t step = 0; step < steps; step++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		size_t victim = (size_t)(x % EXACT_BLOCKS);
		pool_free(pool, blocks[victim]);
		blocks[victim] = pool_malloc(pool, 64);
		ck_assert_msg(blocks[victim] != NULL,
		              "step %zu: the pool had no block", step);
	}
	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.in_use, EXACT_BLOCKS);
	ck_assert_uint_eq(st.fallback_allocs, 0);

	misuse_record();
	/* A block just freed (on the thread's stack), freed again. */
	void *last = blocks[0];
	pool_free(pool, last);
	pool_free(pool, last);
	ck_assert_uint_eq(misuse_count_of(POOL_ERROR_DOUBLE_FREE), 1);
	/* Every block freed, which gives the spans their blocks back, then
	 * one of them freed again. */
	for (size_t i = 1; i < EXACT_BLOCKS; i++)
		pool_free(pool, blocks[i]);
	free(blocks);
	ck_assert_uint_eq(stats_of(pool).in_use, 0);
	pool_free(pool, last);
	ck_assert_uint_eq(misuse_count_of(POOL_ERROR_DOUBLE_FREE), 2);
	ck_assert_uint_eq(misuse_count(), 2);
	/* All of them again, each once. */
	void **again = take(pool, 64, EXACT_BLOCKS);
	ck_assert_uint_eq(stats_of(pool).in_use, EXACT_BLOCKS);
	give_back(pool, again, EXACT_BLOCKS);
	ck_assert_uint_eq(misuse_count(), 2);
}
END_TEST

/*
 * POOL_LOCKED under contention (its threads' stacks then serve: locked.c):
 * threads that each replace their own blocks at random, and free one
 * block twice, on a pool with room for all of them.  Every allocation is
 * the pool's, every second free is reported, and once the threads have
 * exited every block of the pool can be had again, each once.
 */
#define LSTACK_THREADS 2
#define LSTACK_HELD    200
#define LSTACK_STEPS   200000

struct lstack {
	pool_t *pool;
	uint64_t seed;
	size_t steps;
	unsigned misses;
};

static void *lstack_run(void *arg)
{
	struct lstack *l = arg;
	void *held[LSTACK_HELD];
	uint64_t x = l->seed;

	for (size_t i = 0; i < LSTACK_HELD; i++)
		if ((held[i] = pool_malloc(l->pool, 64)) == NULL)
			l->misses++;
	for (size_t step = 0; step < l->steps; step++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		size_t victim = (size_t)(x % LSTACK_HELD);
		pool_free(l->pool, held[victim]);
		if ((held[victim] = pool_malloc(l->pool, 64)) == NULL)
			l->misses++;
	}
	pool_free(l->pool, held[0]);
	pool_free(l->pool, held[0]); /* reported */
	for (size_t i = 1; i < LSTACK_HELD; i++)
		pool_free(l->pool, held[i]);
	return NULL;
}

START_TEST(test_locked_threads_replace)
{
	pool_t *pool = test_pool(64, LSTACK_THREADS * LSTACK_HELD,
	                         POOL_LOCKED | POOL_NO_FALLBACK);
	pthread_t threads[LSTACK_THREADS];
	struct lstack l[LSTACK_THREADS];

	misuse_record();
	for (int t = 0; t < LSTACK_THREADS; t++) {
		l[t] = (struct lstack){
		    .pool = pool,
		    .seed = 0x9e3779b97f4a7c15u * (uint64_t)(t + 1),
		    .steps = under_valgrind() ? LSTACK_STEPS / 50
		                              : LSTACK_STEPS};
		ck_assert_int_eq(pthread_create(&threads[t], NULL, lstack_run, &l[t]),
		                 0);
	}
	for (int t = 0; t < LSTACK_THREADS; t++) {
		ck_assert_int_eq(pthread_join(threads[t], NULL), 0);
		ck_assert_uint_eq(l[t].misses, 0);
	}
	ck_assert_uint_eq(misuse_count_of(POOL_ERROR_DOUBLE_FREE),
	                  LSTACK_THREADS);
	ck_assert_uint_eq(misuse_count(), LSTACK_THREADS);
	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.in_use, 0);
	ck_assert_uint_eq(st.allocs, st.frees);
	ck_assert_uint_eq(st.allocs,
	                  (uint64_t)LSTACK_THREADS * (LSTACK_HELD + l[0].steps));
	void **all = take(pool, 64, LSTACK_THREADS * LSTACK_HELD);
	ck_assert_ptr_null(pool_malloc(pool, 64));
	give_back(pool, all, LSTACK_THREADS * LSTACK_HELD);
	ck_assert_uint_eq(misuse_count(), LSTACK_THREADS);
}
END_TEST

/*
 * POOL_LOCKED, a producer and a consumer: the producer allocates, frees
 * half of its blocks itself (onto its stack, once the stacks serve) and
 * hands the others to a consumer that only frees (onto the list).  A
 * block the consumer puts on the list is soon the producer's again, and
 * freed again: never reported as a double free.
 */
#define HANDOFF_RING  64
#define HANDOFF_STEPS 400000

struct handoff {
	pool_t *pool;
	void *_Atomic ring[HANDOFF_RING];
	_Atomic bool done;
};

static void *handoff_consume(void *arg)
{
	struct handoff *h = arg;
	size_t at = 0;
	for (;;) {
		void *p = atomic_exchange(&h->ring[at], NULL);
		if (p != NULL) {
			pool_free(h->pool, p);
			at = (at + 1) % HANDOFF_RING;
		} else if (atomic_load(&h->done)) {
			break;
		} else {
			sched_yield();
		}
	}
	/* What is left in the ring after the producer stopped. */
	for (size_t i = 0; i < HANDOFF_RING; i++) {
		void *p = atomic_exchange(&h->ring[i], NULL);
		if (p != NULL)
			pool_free(h->pool, p);
	}
	return NULL;
}

START_TEST(test_locked_handoff)
{
	struct handoff h = {.pool = test_pool(64, 4096, POOL_LOCKED)};
	pthread_t consumer;
	size_t at = 0;

	misuse_record();
	ck_assert_int_eq(pthread_create(&consumer, NULL, handoff_consume, &h),
	                 0);
	size_t steps = under_valgrind() ? HANDOFF_STEPS / 100 : HANDOFF_STEPS;
	for (size_t step = 0; step < steps; step++) {
		void *p = pool_malloc(h.pool, 64);
		ck_assert_ptr_nonnull(p);
		if (step & 1) {
			pool_free(h.pool, p);
			continue;
		}
		while (atomic_load(&h.ring[at]) != NULL)
			sched_yield();
		atomic_store(&h.ring[at], p);
		at = (at + 1) % HANDOFF_RING;
	}
	atomic_store(&h.done, true);
	ck_assert_int_eq(pthread_join(consumer, NULL), 0);
	ck_assert_uint_eq(misuse_count(), 0);
	ck_assert_uint_eq(stats_of(h.pool).in_use, 0);
}
END_TEST

/*
 * POOL_LOCKED with its stacks serving from the start (SHIFTPOOL_DEBUG=
 * locked-stacks): a pool of that many blocks, POOL_NO_FALLBACK.
 */
static pool_t *locked_stacks_pool(size_t size, size_t count)
{
	ck_assert_int_eq(setenv("SHIFTPOOL_DEBUG", "locked-stacks", 1), 0);
	pool_t *pool = test_pool(size, count, POOL_LOCKED | POOL_NO_FALLBACK);
	unsetenv("SHIFTPOOL_DEBUG");
	return pool;
}

/*
 * POOL_LOCKED, a producer that only allocates and a consumer that only
 * frees, on a pool of twice the blocks in flight: the consumer's frees
 * reach the producer, so no allocation fails, nothing is reported, and
 * every block comes back.
 */
#define CONSUMER_BLOCKS (2 * HANDOFF_RING)

START_TEST(test_locked_consumer_handoff)
{
	struct handoff h = {.pool =
	                        locked_stacks_pool(64, CONSUMER_BLOCKS)};
	pthread_t consumer;
	size_t at = 0, misses = 0;

	misuse_record();
	ck_assert_int_eq(pthread_create(&consumer, NULL, handoff_consume, &h),
	                 0);
	size_t steps = under_valgrind() ? HANDOFF_STEPS / 100 : HANDOFF_STEPS;
	for (size_t step = 0; step < steps; step++) {
		void *p = pool_malloc(h.pool, 64);
		if (p == NULL) {
			misses++;
			continue;
		}
		while (atomic_load(&h.ring[at]) != NULL)
			sched_yield();
		atomic_store(&h.ring[at], p);
		at = (at + 1) % HANDOFF_RING;
	}
	/* The last blocks handed over are freed before the consumer stops. */
	for (size_t i = 0; i < HANDOFF_RING; i++)
		while (atomic_load(&h.ring[i]) != NULL)
			sched_yield();
	atomic_store(&h.done, true);
	ck_assert_int_eq(pthread_join(consumer, NULL), 0);
	ck_assert_msg(misses == 0, "%zu of %zu allocations failed", misses,
	              steps);
	ck_assert_uint_eq(misuse_count(), 0);
	pool_stats_t st = stats_of(h.pool);
	ck_assert_uint_eq(st.in_use, 0);
	ck_assert_uint_eq(st.allocs, steps);
	ck_assert_uint_eq(st.frees, steps);
	void **all = take(h.pool, 64, CONSUMER_BLOCKS);
	ck_assert_ptr_null(pool_malloc(h.pool, 64));
	assert_region_blocks(all, CONSUMER_BLOCKS, 64);
	give_back(h.pool, all, CONSUMER_BLOCKS);
}
END_TEST

/* Two threads that only free: each frees the round's block at once. */
struct consumer_race {
	pool_t *pool;
	void *block;
	pthread_barrier_t begin, done;
	int rounds;
};

static void *consumer_race_free(void *arg)
{
	struct consumer_race *r = arg;
	for (int round = 0; round < r->rounds; round++) {
		pthread_barrier_wait(&r->begin);
		pool_free(r->pool, r->block);
		pthread_barrier_wait(&r->done);
	}
	return NULL;
}

/*
 * POOL_LOCKED: two threads that only free free one block at once, round
 * after round: the second free of each round is reported, once, and the
 * pool still has every block exactly once.
 */
#define CONSUMER_RACE_ROUNDS 2000
#define CONSUMER_RACE_BLOCKS 64

START_TEST(test_locked_consumer_double_free)
{
	struct consumer_race r = {
	    .pool = locked_stacks_pool(64, CONSUMER_RACE_BLOCKS),
	    .rounds = under_valgrind() ? CONSUMER_RACE_ROUNDS / 20
	                               : CONSUMER_RACE_ROUNDS};
	pthread_t threads[2];

	misuse_record();
	ck_assert_int_eq(pthread_barrier_init(&r.begin, NULL, 3), 0);
	ck_assert_int_eq(pthread_barrier_init(&r.done, NULL, 3), 0);
	for (int t = 0; t < 2; t++)
		ck_assert_int_eq(
		    pthread_create(&threads[t], NULL, consumer_race_free, &r), 0);
	size_t misses = 0;
	for (int round = 0; round < r.rounds; round++) {
		r.block = pool_malloc(r.pool, 64);
		misses += r.block == NULL;
		pthread_barrier_wait(&r.begin);
		pthread_barrier_wait(&r.done);
	}
	for (int t = 0; t < 2; t++)
		ck_assert_int_eq(pthread_join(threads[t], NULL), 0);
	pthread_barrier_destroy(&r.begin);
	pthread_barrier_destroy(&r.done);
	ck_assert_msg(misses == 0, "%zu of %d allocations failed", misses,
	              r.rounds);
	ck_assert_uint_eq(misuse_count_of(POOL_ERROR_DOUBLE_FREE),
	                  (unsigned)r.rounds);
	ck_assert_uint_eq(misuse_count(), (unsigned)r.rounds);
	void **all = take(r.pool, 64, CONSUMER_RACE_BLOCKS);
	ck_assert_ptr_null(pool_malloc(r.pool, 64));
	assert_region_blocks(all, CONSUMER_RACE_BLOCKS, 64);
	give_back(r.pool, all, CONSUMER_RACE_BLOCKS);
	ck_assert_uint_eq(misuse_count(), (unsigned)r.rounds);
}
END_TEST

/* Frees every block of a batch, from a thread that allocates nothing. */
struct free_batch {
	pool_t *pool;
	void **blocks;
	size_t count;
};

static void *free_batch_run(void *arg)
{
	struct free_batch *b = arg;
	for (size_t i = 0; i < b->count; i++)
		pool_free(b->pool, b->blocks[i]);
	return NULL;
}

/*
 * POOL_LOCKED: pool_trim() gives back the pages of blocks that a thread
 * which only frees gave back.
 */
#define CONSUMER_TRIM_BLOCKS 256

START_TEST(test_locked_consumer_trim)
{
	size_t page = page_size();
	pool_t *pool = locked_stacks_pool(page, CONSUMER_TRIM_BLOCKS);
	struct free_batch b = {.pool = pool,
	                       .blocks = take(pool, page, CONSUMER_TRIM_BLOCKS),
	                       .count = CONSUMER_TRIM_BLOCKS};
	pthread_t freer;

	for (size_t i = 0; i < CONSUMER_TRIM_BLOCKS; i++)
		memset(b.blocks[i], 0x5a, page);
	ck_assert_int_eq(pthread_create(&freer, NULL, free_batch_run, &b), 0);
	ck_assert_int_eq(pthread_join(freer, NULL), 0);
	ck_assert_uint_eq(stats_of(pool).in_use, 0);
	ck_assert_uint_ge(pool_trim(pool), CONSUMER_TRIM_BLOCKS * page);
	for (size_t i = 0; i < CONSUMER_TRIM_BLOCKS; i++) {
		b.blocks[i] = pool_calloc(pool, 1, page);
		ck_assert_ptr_nonnull(b.blocks[i]);
		assert_bytes(b.blocks[i], page, 0, "a block after pool_trim()");
	}
	ck_assert_ptr_null(pool_malloc(pool, page));
	give_back(pool, b.blocks, CONSUMER_TRIM_BLOCKS);
}
END_TEST

/* Frees its batch, then waits, alive, until told to end. */
struct idle_consumer {
	struct free_batch batch;
	pthread_barrier_t freed, end;
};

static void *idle_consumer_run(void *arg)
{
	struct idle_consumer *c = arg;
	free_batch_run(&c->batch);
	pthread_barrier_wait(&c->freed);
	pthread_barrier_wait(&c->end);
	return NULL;
}

/*
 * POOL_LOCKED: a thread that only frees, and then sits idle with its last
 * blocks in a magazine it has not filled, keeps none of them from the
 * others: a thread that takes every block of a POOL_NO_FALLBACK pool gets
 * all of them.
 */
#define CONSUMER_IDLE_BLOCKS 256
#define CONSUMER_IDLE_FREED  70

START_TEST(test_locked_consumer_idle)
{
	pool_t *pool = locked_stacks_pool(64, CONSUMER_IDLE_BLOCKS);
	struct idle_consumer c = {
	    .batch = {.pool = pool,
	              .blocks = take(pool, 64, CONSUMER_IDLE_FREED),
	              .count = CONSUMER_IDLE_FREED}};
	pthread_t consumer;

	ck_assert_int_eq(pthread_barrier_init(&c.freed, NULL, 2), 0);
	ck_assert_int_eq(pthread_barrier_init(&c.end, NULL, 2), 0);
	ck_assert_int_eq(
	    pthread_create(&consumer, NULL, idle_consumer_run, &c), 0);
	pthread_barrier_wait(&c.freed);
	void **all = take(pool, 64, CONSUMER_IDLE_BLOCKS);
	ck_assert_ptr_null(pool_malloc(pool, 64));
	assert_region_blocks(all, CONSUMER_IDLE_BLOCKS, 64);
	give_back(pool, all, CONSUMER_IDLE_BLOCKS);
	pthread_barrier_wait(&c.end);
	ck_assert_int_eq(pthread_join(consumer, NULL), 0);
	pthread_barrier_destroy(&c.freed);
	pthread_barrier_destroy(&c.end);
	free(c.batch.blocks);
	ck_assert_uint_eq(stats_of(pool).in_use, 0);
}
END_TEST

static int pointer_order(const void *x, const void *y)
{
	uintptr_t a = (uintptr_t) * (void *const *)x;
	uintptr_t b = (uintptr_t) * (void *const *)y;
	return (a > b) - (a < b);
}

/* After damage: no block of got twice, and every one of the region
 * (sorts got). */
static void assert_distinct_blocks(pool_t *pool, void **got, size_t n)
{
	qsort(got, n, sizeof *got, pointer_order);
	for (size_t i = 1; i < n; i++)
		ck_assert_ptr_ne(got[i - 1], got[i]);
	for (size_t i = 0; i < n; i++)
		ck_assert(pool_owns(pool, got[i]));
}

/*
 * POOL_LOCKED: a write after free into the link of a block that a thread
 * which only frees gave back is reported once, as the pool comes to it;
 * the blocks past the damage are lost, at most those that thread freed,
 * and no block is handed out twice.
 */
#define CONSUMER_DAMAGE_BLOCKS 256
#define CONSUMER_DAMAGE_FREED  128

START_TEST(test_locked_consumer_damaged)
{
	pool_t *pool = locked_stacks_pool(64, CONSUMER_DAMAGE_BLOCKS);
	struct free_batch b = {.pool = pool,
	                       .blocks = take(pool, 64, CONSUMER_DAMAGE_FREED),
	                       .count = CONSUMER_DAMAGE_FREED};
	pthread_t freer;

	misuse_record();
	ck_assert_int_eq(pthread_create(&freer, NULL, free_batch_run, &b), 0);
	ck_assert_int_eq(pthread_join(freer, NULL), 0);
	raw_write(b.blocks[CONSUMER_DAMAGE_FREED - 28], 8, 0x41);

	void **got = malloc(CONSUMER_DAMAGE_BLOCKS * sizeof *got);
	ck_assert_ptr_nonnull(got);
	size_t n = 0;
	while (n < CONSUMER_DAMAGE_BLOCKS &&
	       (got[n] = pool_malloc(pool, 64)) != NULL)
		n++;
	ck_assert_uint_eq(misuse_count_of(POOL_ERROR_CORRUPTED), 1);
	ck_assert_uint_eq(misuse_count(), 1);
	/* Lost: what the damaged link ended, at most the freed blocks. */
	ck_assert_uint_lt(n, CONSUMER_DAMAGE_BLOCKS);
	ck_assert_uint_ge(n, CONSUMER_DAMAGE_BLOCKS - CONSUMER_DAMAGE_FREED);
	assert_distinct_blocks(pool, got, n);
	give_back(pool, got, n);
	free(b.blocks);
}
END_TEST

/*
 * POOL_LOCKED with the stacks on: no word a program leaves in its blocks
 * (zeros, ones, their own addresses, the words of blocks on a stack
 * copied) is taken for the mark of a block on a stack; a block the list
 * hands out again, after pool_trim() gave the stack back with the marks
 * on, is freed as any other, also from pool_malloc_bulk(); the stats
 * count the blocks on a stack as free; and a double free of a block on
 * the stack is reported once.
 */
#define TAG_BLOCKS 256
#define TAG_TAKEN  64

static void assert_all_free(pool_t *pool)
{
	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.in_use, 0);
	ck_assert_uint_eq(st.allocs, st.frees);
}

START_TEST(test_locked_stack_marks)
{
	pool_t *pool = locked_stacks_pool(64, TAG_BLOCKS);
	void *bulk[TAG_TAKEN];

	misuse_record();
	void **b = take(pool, 64, TAG_TAKEN);
	for (size_t i = 0; i < TAG_TAKEN; i++)
		pool_free(pool, b[i]);
	assert_all_free(pool);
	free(b);
	b = take(pool, 64, TAG_TAKEN);
	for (size_t i = 0; i < TAG_TAKEN; i++) {
		uintptr_t *w = b[i];
		if (i % 4 == 0)
			memset(w, 0, 64);
		else if (i % 4 == 1)
			memset(w, 0xff, 64);
		else
			for (size_t k = 0; k < 64 / sizeof *w; k++)
				w[k] = (uintptr_t)w;
	}
	/* Half freed, then the other half given those blocks' words, marks
	 * and links included. */
	for (size_t i = 0; i < TAG_TAKEN / 2; i++)
		pool_free(pool, b[i]);
	for (size_t i = TAG_TAKEN / 2; i < TAG_TAKEN; i++) {
		raw_copy(b[i], b[i - TAG_TAKEN / 2], 64);
		pool_free(pool, b[i]);
	}
	ck_assert_uint_eq(misuse_count(), 0);
	assert_all_free(pool);
	free(b);

	/* Back to the list with their marks (a block of each page kept,
	 * so that the trim gives no page back, which would clear them);
	 * handed out again, untouched, and freed. */
	void **pins = take(pool, 64, TAG_BLOCKS);
	size_t n_pins = 0;
	for (size_t i = 0; i < TAG_BLOCKS; i++)
		if ((uintptr_t)pins[i] % 4096 == 0)
			pins[n_pins++] = pins[i];
		else
			pool_free(pool, pins[i]);
	ck_assert_uint_gt(n_pins, 0);
	pool_trim(pool);
	b = take(pool, 64, TAG_BLOCKS - n_pins);
	for (size_t i = 0; i < TAG_BLOCKS - n_pins; i++)
		pool_free(pool, b[i]);
	ck_assert_uint_eq(misuse_count(), 0);
	pool_trim(pool);
	ck_assert_uint_eq(pool_malloc_bulk(pool, 64, TAG_TAKEN, bulk),
	                  TAG_TAKEN);
	pool_free_bulk(pool, TAG_TAKEN, bulk);
	ck_assert_uint_eq(misuse_count(), 0);
	give_back(pool, pins, n_pins);
	assert_all_free(pool);

	/* A double free of a block on the stack. */
	void *p = pool_malloc(pool, 64);
	ck_assert_ptr_nonnull(p);
	pool_free(pool, p);
	pool_free(pool, p);
	ck_assert_uint_eq(misuse_count_of(POOL_ERROR_DOUBLE_FREE), 1);
	ck_assert_uint_eq(misuse_count(), 1);
	assert_all_free(pool);
	free(b);
}
END_TEST

/*
 * POOL_LOCKED with the stacks on: a write after free over the mark of the
 * block on top of the thread's stack is reported once, when the pool
 * comes to that block; the stack's blocks are lost, and no block is
 * handed out twice.  (Under Valgrind the pool keeps no stacks: a free
 * block's word 1 is then nobody's, and nothing is reported.)
 */
START_TEST(test_locked_stack_mark_damaged)
{
	pool_t *pool = locked_stacks_pool(64, TAG_BLOCKS);
	void **b = take(pool, 64, 4);
	void **got = malloc(TAG_BLOCKS * sizeof *got);
	ck_assert_ptr_nonnull(got);

	misuse_record();
	for (size_t i = 0; i < 4; i++)
		pool_free(pool, b[i]);
	raw_write((char *)b[3] + sizeof(void *), sizeof(void *), 0x41);
	size_t n = 0;
	while (n < TAG_BLOCKS && (got[n] = pool_malloc(pool, 64)) != NULL)
		n++;
	if (under_valgrind()) {
		ck_assert_uint_eq(misuse_count(), 0);
		ck_assert_uint_eq(n, TAG_BLOCKS);
	} else {
		ck_assert_uint_eq(misuse_count_of(POOL_ERROR_CORRUPTED), 1);
		ck_assert_uint_eq(misuse_count(), 1);
		ck_assert_uint_eq(n, TAG_BLOCKS - 4);
	}
	qsort(got, n, sizeof *got, pointer_order);
	for (size_t i = 1; i < n; i++)
		ck_assert_ptr_ne(got[i - 1], got[i]);
	give_back(pool, got, n);
	free(b);
}
END_TEST

/*
 * POOL_LOCKED with the stacks on, blocks smaller than a cache line: a
 * thread that takes a never-used block takes the rest of its line as
 * spares, so another thread's first block is in another line, and the
 * first thread's next blocks are in its own.  The statistics count the
 * spares as free.  (Under Valgrind the pool keeps no stacks, and blocks
 * come in address order.)
 */
#define LINE_BLOCKS 64
#define LINE        64

struct one_block {
	pool_t *pool;
	void *block;
};

static void *one_block_take(void *arg)
{
	struct one_block *o = arg;
	o->block = pool_malloc(o->pool, 16);
	return NULL;
}

START_TEST(test_locked_line_spares)
{
	pool_t *pool = locked_stacks_pool(16, LINE_BLOCKS);
	struct one_block other = {.pool = pool};
	pthread_t thread;

	misuse_record();
	char *a = pool_malloc(pool, 16);
	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(pthread_create(&thread, NULL, one_block_take, &other),
	                 0);
	ck_assert_int_eq(pthread_join(thread, NULL), 0);
	char *b = other.block, *c = pool_malloc(pool, 16);
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_nonnull(c);
	/* The region of 64 x 16 bytes ends on a page: a starts a line. */
	ck_assert_uint_eq((uintptr_t)a % LINE, 0);
	if (!under_valgrind()) {
		ck_assert_uint_ne((uintptr_t)b / LINE, (uintptr_t)a / LINE);
		ck_assert_uint_eq((uintptr_t)c / LINE, (uintptr_t)a / LINE);
	}
	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.in_use, 3);
	ck_assert_uint_eq(st.allocs, 3);
	ck_assert_uint_eq(st.frees, 0);
	pool_free(pool, a);
	pool_free(pool, b);
	pool_free(pool, c);
	ck_assert_uint_eq(misuse_count(), 0);
	assert_all_free(pool);
	/* Nothing is lost: the exited thread's spares went back. */
	give_back(pool, take(pool, 16, LINE_BLOCKS), LINE_BLOCKS);
	assert_all_free(pool);
}
END_TEST

/*
 * POOL_LOCKED with the stacks on, 16-byte blocks, as many threads as the
 * pool has blocks, each taking one in turn and holding it until all have
 * one: the spares of the first threads' lines reach the others, each
 * thread that finds the pool dry keeping what it took within reach of the
 * next, so every thread is served by the pool (POOL_NO_FALLBACK).
 */
#define SPARE_THREADS 64

struct spare_taker {
	pool_t *pool;
	pthread_mutex_t *turn;
	pthread_barrier_t *all_hold;
	void *block;
};

static void *spare_taker_run(void *arg)
{
	struct spare_taker *t = arg;
	ck_assert_int_eq(pthread_mutex_lock(t->turn), 0);
	t->block = pool_malloc(t->pool, 16);
	ck_assert_int_eq(pthread_mutex_unlock(t->turn), 0);
	pthread_barrier_wait(t->all_hold);
	if (t->block != NULL)
		pool_free(t->pool, t->block);
	return NULL;
}

START_TEST(test_locked_spares_reach_every_thread)
{
	pool_t *pool = locked_stacks_pool(16, SPARE_THREADS);
	pthread_mutex_t turn = PTHREAD_MUTEX_INITIALIZER;
	pthread_barrier_t all_hold;
	struct spare_taker t[SPARE_THREADS];
	pthread_t threads[SPARE_THREADS];

	misuse_record();
	ck_assert_int_eq(pthread_barrier_init(&all_hold, NULL, SPARE_THREADS),
	                 0);
	for (int i = 0; i < SPARE_THREADS; i++) {
		t[i] = (struct spare_taker){
		    .pool = pool, .turn = &turn, .all_hold = &all_hold};
		ck_assert_int_eq(
		    pthread_create(&threads[i], NULL, spare_taker_run, &t[i]),
		    0);
	}
	for (int i = 0; i < SPARE_THREADS; i++)
		ck_assert_int_eq(pthread_join(threads[i], NULL), 0);
	pthread_barrier_destroy(&all_hold);
	size_t served = 0;
	for (int i = 0; i < SPARE_THREADS; i++)
		served += t[i].block != NULL;
	ck_assert_uint_eq(served, SPARE_THREADS);
	ck_assert_uint_eq(misuse_count(), 0);
	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.allocs, SPARE_THREADS);
	ck_assert_uint_eq(st.fallback_allocs, 0);
	assert_all_free(pool);
	give_back(pool, take(pool, 16, SPARE_THREADS), SPARE_THREADS);
	assert_all_free(pool);
}
END_TEST

/*
 * Threads that allocate many spans' worth, free part of it and exit give
 * every span up: the blocks they freed, and those they left live which the
 * main thread frees after they are gone, all come back.
 */
#define EXIT_THREADS 4
#define EXIT_BLOCKS  1500

struct exiter {
	pool_t *pool;
	void **kept; /* EXIT_BLOCKS / 2 blocks left live */
};

static void *exiter_run(void *arg)
{
	struct exiter *e = arg;
	void **blocks = take(e->pool, 64, EXIT_BLOCKS);
	shuffle_pointers(blocks, EXIT_BLOCKS, (uint64_t)(uintptr_t)e);
	for (size_t i = 0; i < EXIT_BLOCKS / 2; i++)
		pool_free(e->pool, blocks[i]);
	e->kept = blocks;
	return NULL;
}

START_TEST(test_no_capacity_lost_at_exit)
{
	/* Room for every thread at once, whatever the others hold. */
	size_t count = 2 * EXIT_THREADS * EXIT_BLOCKS;
	pool_t *pool = test_pool(64, count, PT);
	struct exiter e[EXIT_THREADS];
	pthread_t threads[EXIT_THREADS];

	for (int t = 0; t < EXIT_THREADS; t++) {
		e[t] = (struct exiter){.pool = pool};
		ck_assert_int_eq(
		    pthread_create(&threads[t], NULL, exiter_run, &e[t]), 0);
	}
	for (int t = 0; t < EXIT_THREADS; t++)
		ck_assert_int_eq(pthread_join(threads[t], NULL), 0);
	for (int t = 0; t < EXIT_THREADS; t++) {
		for (size_t i = EXIT_BLOCKS / 2; i < EXIT_BLOCKS; i++)
			pool_free(pool, e[t].kept[i]);
		free(e[t].kept);
	}
	ck_assert_uint_eq(stats_of(pool).in_use, 0);
	ck_assert_uint_eq(blocks_left(pool, 64, count), count);
}
END_TEST

/*
 * A thread the pool runs dry for: another thread holds a span with blocks
 * free that it cannot have, so it falls back (its sweep of the full list
 * then leaves its spans unsealed, as the pool has none to give).  Its
 * frees and the frees of other threads into its spans serve it again,
 * from the pool, and once everything is freed no block of the pool is
 * lost.  Whether the spans were sealed or not, this holds: it is the
 * dry sweep's correctness that is tested here, not its speed.
 */
#define DRY_BLOCKS 256 /* 16 spans of 16 blocks */
#define DRY_HELD   8   /* the other thread's blocks: half its span */

struct dry_holder {
	pool_t *pool;
	pthread_barrier_t *taken, *release;
};

static void *dry_holder_run(void *arg)
{
	struct dry_holder *h = arg;
	void **blocks = take(h->pool, 64, DRY_HELD);
	pthread_barrier_wait(h->taken);
	pthread_barrier_wait(h->release);
	give_back(h->pool, blocks, DRY_HELD);
	return NULL;
}

/* Allocates n blocks into blocks[], each asserted from the pool, then one
 * more, asserted from the fallback (freed again). */
static void take_until_dry(pool_t *pool, void **blocks, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		blocks[i] = pool_malloc(pool, 64);
		ck_assert_msg(blocks[i] != NULL && pool_owns(pool, blocks[i]),
		              "block %zu of %zu not from the pool", i, n);
	}
	void *extra = pool_malloc(pool, 64);
	ck_assert_ptr_nonnull(extra);
	ck_assert_msg(!pool_owns(pool, extra), "the pool had a block more");
	pool_free(pool, extra);
}

START_TEST(test_dry_pool_loses_nothing)
{
	pool_t *pool = test_pool(64, DRY_BLOCKS, POOL_PER_THREAD);
	pthread_barrier_t taken, release;
	ck_assert_int_eq(pthread_barrier_init(&taken, NULL, 2), 0);
	ck_assert_int_eq(pthread_barrier_init(&release, NULL, 2), 0);
	struct dry_holder h = {pool, &taken, &release};
	pthread_t holder;
	ck_assert_int_eq(pthread_create(&holder, NULL, dry_holder_run, &h), 0);
	pthread_barrier_wait(&taken);

	/* Every other span is this thread's: 240 blocks, then the fallback. */
	size_t mine = DRY_BLOCKS - 16;
	void **blocks = malloc(mine * sizeof *blocks);
	ck_assert_ptr_nonnull(blocks);
	take_until_dry(pool, blocks, mine);

	/* Its own frees, in random order, serve it again. */
	shuffle_pointers(blocks, mine, 7);
	for (size_t i = 0; i < 100; i++)
		pool_free(pool, blocks[i]);
	take_until_dry(pool, blocks, 100);

	/* So do another thread's frees into its spans. */
	struct free_batch f = {pool, blocks + 100, 50};
	pthread_t freer;
	ck_assert_int_eq(pthread_create(&freer, NULL, free_batch_run, &f), 0);
	ck_assert_int_eq(pthread_join(freer, NULL), 0);
	take_until_dry(pool, blocks + 100, 50);

	pool_stats_t st = stats_of(pool);
	ck_assert_uint_eq(st.in_use, mine + DRY_HELD);
	ck_assert_uint_eq(st.fallback_allocs, 3);
	ck_assert_uint_eq(st.fallback_frees, 3);

	give_back(pool, blocks, mine);
	pthread_barrier_wait(&release);
	ck_assert_int_eq(pthread_join(holder, NULL), 0);
	pthread_barrier_destroy(&taken);
	pthread_barrier_destroy(&release);
	ck_assert_uint_eq(stats_of(pool).in_use, 0);
	ck_assert_uint_eq(blocks_left(pool, 64, DRY_BLOCKS), DRY_BLOCKS);
}
END_TEST

/*
 * Many threads each allocate a few spans' worth, free everything, and stay
 * alive, idle: each holds at most its active span and one wholly free span
 * besides, so the main thread still gets the rest of the pool.
 */
#define IDLE_THREADS 256
#define IDLE_BLOCKS  1000
#define IDLE_KEPT    2 /* spans a thread that freed everything may hold */

struct idler {
	pool_t *pool;
	pthread_barrier_t *freed, *done;
};

static void *idler_run(void *arg)
{
	struct idler *d = arg;
	void **blocks = take(d->pool, 64, IDLE_BLOCKS);
	shuffle_pointers(blocks, IDLE_BLOCKS, (uint64_t)(uintptr_t)&blocks);
	give_back(d->pool, blocks, IDLE_BLOCKS);
	pthread_barrier_wait(d->freed);
	pthread_barrier_wait(d->done); /* idle, alive, until the count */
	return NULL;
}

START_TEST(test_idle_threads_hold_little)
{
	/* 256-block spans: the pool is large enough for them. */
	size_t count = (size_t)IDLE_THREADS * IDLE_BLOCKS;
	pool_t *pool = test_pool(64, count, PT);
	pthread_barrier_t freed, done;
	pthread_t *threads = calloc(IDLE_THREADS, sizeof *threads);
	struct idler d = {.pool = pool, .freed = &freed, .done = &done};

	ck_assert_ptr_nonnull(threads);
	pthread_barrier_init(&freed, NULL, IDLE_THREADS + 1);
	pthread_barrier_init(&done, NULL, IDLE_THREADS + 1);
	for (int t = 0; t < IDLE_THREADS; t++)
		ck_assert_int_eq(
		    pthread_create(&threads[t], NULL, idler_run, &d), 0);
	pthread_barrier_wait(&freed);
	size_t left = blocks_left(pool, 64, count);
	pthread_barrier_wait(&done);
	for (int t = 0; t < IDLE_THREADS; t++)
		ck_assert_int_eq(pthread_join(threads[t], NULL), 0);
	pthread_barrier_destroy(&freed);
	pthread_barrier_destroy(&done);
	free(threads);
	size_t held = count - left;
	ck_assert_msg(held <= (size_t)IDLE_THREADS * IDLE_KEPT * 256,
	              "%d idle threads that freed everything hold %zu blocks "
	              "(%zu spans' worth)",
	              IDLE_THREADS, held, held / 256);
}
END_TEST

/*
 * A thread's spans whose blocks another thread freed come back to it whole
 * (the drains count each block back), so once it has allocated them again
 * and freed everything itself, it keeps no more than an idle thread that
 * only ever freed its own: the main thread gets the rest of the pool.
 */
#define DRAINED_BLOCKS 4096 /* 16 spans of 256 */

struct drained {
	pool_t *pool;
	void **blocks;
	pthread_barrier_t *step;
};

static void *drained_owner_run(void *arg)
{
	struct drained *d = arg;
	d->blocks = take(d->pool, 64, DRAINED_BLOCKS);
	pthread_barrier_wait(d->step); /* the main thread frees them all */
	pthread_barrier_wait(d->step);
	free(d->blocks);
	d->blocks = take(d->pool, 64, DRAINED_BLOCKS);
	shuffle_pointers(d->blocks, DRAINED_BLOCKS,
	                 (uint64_t)(uintptr_t)d->blocks);
	give_back(d->pool, d->blocks, DRAINED_BLOCKS);
	pthread_barrier_wait(d->step); /* the main thread counts */
	pthread_barrier_wait(d->step); /* idle, alive, until then */
	return NULL;
}

/* A pool of DRAINED_BLOCKS, and its owner thread started on run, which
 * has taken its blocks once the call returns. */
static pthread_t start_owner(struct drained *d, pthread_barrier_t *step,
                             void *(*run)(void *))
{
	pthread_t owner;
	*d = (struct drained){.pool = test_pool(64, DRAINED_BLOCKS, PT),
	                      .step = step};
	pthread_barrier_init(step, NULL, 2);
	ck_assert_int_eq(pthread_create(&owner, NULL, run, d), 0);
	pthread_barrier_wait(step);
	return owner;
}

START_TEST(test_remote_freed_spans_come_back)
{
	pthread_barrier_t step;
	struct drained d;
	pthread_t owner = start_owner(&d, &step, drained_owner_run);
	pool_t *pool = d.pool;

	for (size_t i = 0; i < DRAINED_BLOCKS; i++)
		pool_free(pool, d.blocks[i]);
	pthread_barrier_wait(&step);
	pthread_barrier_wait(&step);
	size_t left = blocks_left(pool, 64, DRAINED_BLOCKS);
	pthread_barrier_wait(&step);
	ck_assert_int_eq(pthread_join(owner, NULL), 0);
	pthread_barrier_destroy(&step);
	ck_assert_msg(left >= DRAINED_BLOCKS - IDLE_KEPT * 256,
	              "a thread that freed everything holds %zu blocks",
	              (size_t)DRAINED_BLOCKS - left);
	ck_assert_uint_eq(stats_of(pool).in_use, 0);
}
END_TEST

/* Asserts that the one report since misuse_record() is of a damaged
 * link, naming the block whose link it was and the public call. */
static void assert_one_damage(const void *block, const char *function)
{
	ck_assert_uint_eq(misuse_count_of(POOL_ERROR_CORRUPTED), 1);
	ck_assert_uint_eq(misuse_count(), 1);
	ck_assert_ptr_eq(misuse_last().ptr, block);
	ck_assert_str_eq(misuse_last().function, function);
}

/* Takes every block of size bytes the pool still hands out (at most
 * most), asserts they are distinct blocks of the region, and frees them
 * again; returns how many. */
static size_t take_distinct(pool_t *pool, size_t size, size_t most)
{
	void **got = malloc(most * sizeof *got);
	ck_assert_ptr_nonnull(got);
	size_t n = 0;
	while (n < most && (got[n] = pool_malloc(pool, size)) != NULL)
		n++;
	assert_distinct_blocks(pool, got, n);
	give_back(pool, got, n);
	return n;
}

/*
 * Blocks that another thread freed into the active span are used before
 * its never-used blocks: the owner takes 100 blocks of a fresh span, the
 * main thread frees them, and the owner's next 100 allocations are those
 * blocks again, with no block touched beyond them.
 */
#define REUSED_BLOCKS 100

static void *reuse_owner_run(void *arg)
{
	struct drained *d = arg;
	d->blocks = take(d->pool, 64, REUSED_BLOCKS);
	pthread_barrier_wait(d->step); /* the main thread frees them */
	pthread_barrier_wait(d->step);
	void **again = take(d->pool, 64, REUSED_BLOCKS);
	qsort(d->blocks, REUSED_BLOCKS, sizeof *again, pointer_order);
	qsort(again, REUSED_BLOCKS, sizeof *again, pointer_order);
	for (size_t i = 0; i < REUSED_BLOCKS; i++)
		ck_assert_ptr_eq(again[i], d->blocks[i]);
	ck_assert_uint_eq(stats_of(d->pool).peak_in_use, REUSED_BLOCKS);
	give_back(d->pool, again, REUSED_BLOCKS);
	return NULL;
}

START_TEST(test_remote_frees_before_fresh_blocks)
{
	pthread_barrier_t step;
	struct drained d;
	pthread_t owner = start_owner(&d, &step, reuse_owner_run);

	for (size_t i = 0; i < REUSED_BLOCKS; i++)
		pool_free(d.pool, d.blocks[i]);
	pthread_barrier_wait(&step);
	ck_assert_int_eq(pthread_join(owner, NULL), 0);
	pthread_barrier_destroy(&step);
	free(d.blocks);
	ck_assert_uint_eq(stats_of(d.pool).in_use, 0);
}
END_TEST

/*
 * A thread that stops allocating keeps its spans, and the blocks other
 * threads free into them wait for it: only it drains them.  Here it
 * freed some blocks of each span itself, so its spans have free blocks
 * and none is sealed.  pool_trim()
 * called by that thread gives its spans up, as its exit would: its
 * stack goes back to its spans, the other threads get every block, and
 * the pages of the spans wholly free go back.
 */
#define OWN_TRIM_EVERY 16 /* the owner frees every 16th block itself */

static void *trim_owner_run(void *arg)
{
	struct drained *d = arg;
	d->blocks = take(d->pool, 64, DRAINED_BLOCKS);
	for (size_t i = 0; i < DRAINED_BLOCKS; i += OWN_TRIM_EVERY)
		pool_free(d->pool, d->blocks[i]);
	pthread_barrier_wait(d->step); /* the main thread frees the rest */
	pthread_barrier_wait(d->step);
	size_t bytes = pool_trim(d->pool);
	pthread_barrier_wait(d->step); /* the main thread counts */
	pthread_barrier_wait(d->step); /* idle, alive, until then */
	/* The owner allocates again, from spans it takes anew. */
	void *again = pool_malloc(d->pool, 64);
	ck_assert_ptr_nonnull(again);
	pool_free(d->pool, again);
	return (void *)bytes;
}

START_TEST(test_trim_gives_up_the_callers_spans)
{
	pthread_barrier_t step;
	struct drained d;
	pthread_t owner = start_owner(&d, &step, trim_owner_run);
	pool_t *pool = d.pool;

	for (size_t i = 0; i < DRAINED_BLOCKS; i++)
		if (i % OWN_TRIM_EVERY != 0)
			pool_free(pool, d.blocks[i]);
	pthread_barrier_wait(&step);
	pthread_barrier_wait(&step);
	size_t left = take_distinct(pool, 64, DRAINED_BLOCKS);
	pthread_barrier_wait(&step);
	void *bytes;
	ck_assert_int_eq(pthread_join(owner, &bytes), 0);
	pthread_barrier_destroy(&step);
	free(d.blocks);
	ck_assert_uint_eq(left, DRAINED_BLOCKS);
	/* Every span was wholly free: their pages, the region's but for
	 * at most a page at each end, went back. */
	ck_assert_uint_ge((size_t)bytes, (size_t)DRAINED_BLOCKS * 64 -
	                                     2 * (size_t)getpagesize());
	ck_assert_uint_eq(stats_of(pool).in_use, 0);
}
END_TEST

/*
 * A use after free overwrites the link of a block on the thread's stack,
 * and a later free leaves another span with nothing handed out, so its
 * blocks are taken back off the stack: that walk must not follow the
 * damaged link.  The damage is reported once, naming the damaged block
 * and pool_free, and the pool goes on: never a block twice, every one of
 * the region.
 */
#define PURGE_BLOCKS 4096 /* 16 spans of 256 */

START_TEST(test_stack_damage_met_by_a_purge)
{
	pool_t *pool = test_pool(64, PURGE_BLOCKS, PT);
	void **blocks = take(pool, 64, 3 * 256); /* spans A, B, C (active) */

	misuse_record();
	for (size_t i = 1; i < 256; i++) /* A but its first: on the stack */
		pool_free(pool, blocks[i]);
	for (size_t i = 256; i < 300; i++) /* some of B, above them */
		pool_free(pool, blocks[i]);
	raw_write(blocks[280], 16, 0x41);
	pool_free(pool, blocks[0]); /* A has nothing handed out */
	assert_one_damage(blocks[280], "pool_free");

	/* The rest of B and C go back; then take what the pool has. */
	for (size_t i = 300; i < 3 * 256; i++)
		pool_free(pool, blocks[i]);
	free(blocks);
	/* Lost: at most the blocks the stack held. */
	ck_assert_uint_ge(take_distinct(pool, 64, PURGE_BLOCKS),
	                  PURGE_BLOCKS - 300);
	ck_assert_uint_eq(misuse_count(), 1);
}
END_TEST

/*
 * A span's blocks freed together above older blocks of another span: the
 * free that leaves the span with nothing handed out takes them off the top
 * of the stack as one run, and the blocks below stay on the stack, where
 * the next allocation finds the one freed last.  Then every block of the
 * pool is served, once.
 */
#define RUN_BLOCKS 8192 /* a stack of 512: no flush below */

START_TEST(test_purge_takes_a_run_off_the_top)
{
	pool_t *pool = test_pool(64, RUN_BLOCKS, PT);
	void **blocks = take(pool, 64, 3 * 256); /* spans A, B, C (active) */

	for (size_t i = 256; i < 300; i++) /* some of B: the stack's bottom */
		pool_free(pool, blocks[i]);
	for (size_t i = 1; i < 256; i++) /* A but its first, above them */
		pool_free(pool, blocks[i]);
	pool_free(pool, blocks[0]); /* A has nothing handed out */
	ck_assert_uint_eq(stats_of(pool).in_use, 3 * 256 - 300);

	/* B's blocks are still the stack, newest first. */
	void *next = pool_malloc(pool, 64);
	ck_assert_ptr_eq(next, blocks[299]);
	pool_free(pool, next);

	for (size_t i = 300; i < 3 * 256; i++)
		pool_free(pool, blocks[i]);
	free(blocks);
	ck_assert_uint_eq(stats_of(pool).in_use, 0);
	ck_assert_uint_eq(take_distinct(pool, 64, RUN_BLOCKS), RUN_BLOCKS);
}
END_TEST

/*
 * The same run, with the link below it overwritten by a use after free:
 * the run's deepest block is blocks[2] (the free of blocks[1], A's first
 * while A was on the full list, went to A's own list).  The run goes back
 * to its span, the damaged link is not followed but reported once, naming
 * that block and pool_free, and the blocks below are lost, never handed
 * out twice.
 */
START_TEST(test_stack_damage_below_a_run)
{
	pool_t *pool = test_pool(64, RUN_BLOCKS, PT);
	void **blocks = take(pool, 64, 3 * 256); /* spans A, B, C (active) */

	misuse_record();
	for (size_t i = 256; i < 300; i++) /* some of B: the stack's bottom */
		pool_free(pool, blocks[i]);
	for (size_t i = 1; i < 256; i++) /* A but its first, above them */
		pool_free(pool, blocks[i]);
	raw_write(blocks[2], 16, 0x41);
	pool_free(pool, blocks[0]); /* A has nothing handed out */
	assert_one_damage(blocks[2], "pool_free");

	for (size_t i = 300; i < 3 * 256; i++)
		pool_free(pool, blocks[i]);
	free(blocks);
	/* Lost: at most the blocks of B below the run. */
	ck_assert_uint_ge(take_distinct(pool, 64, RUN_BLOCKS), RUN_BLOCKS - 44);
	ck_assert_uint_eq(misuse_count(), 1);
}
END_TEST

/*
 * POOL_PER_THREAD: a batch takes the blocks the thread freed last, from its
 * stack, before the active span's list.  The thread's stack holds a
 * sixteenth of this pool (256 blocks): freeing the active span's 232
 * blocks and 40 of the first span's fills it, and the free that finds it
 * full gives half of it back to the spans, the active one's list among
 * them.  A batch that took that list first would miss the batch just
 * freed onto the stack.
 */
#define BATCH_POOL   4096 /* spans of 256 */
#define BATCH_TAKEN  1000 /* spans A, B, C and D (active, 232 used) */
#define BATCH_BLOCKS 16

START_TEST(test_bulk_takes_the_stack_first)
{
	pool_t *pool = test_pool(64, BATCH_POOL, PT);
	void **blocks = take(pool, 64, BATCH_TAKEN);
	void *out[BATCH_BLOCKS];

	for (size_t i = 768; i < BATCH_TAKEN; i++) /* all of D */
		pool_free(pool, blocks[i]);
	for (size_t i = 0; i < 40; i++) /* and A's first: a full stack */
		pool_free(pool, blocks[i]);
	pool_free_bulk(pool, BATCH_BLOCKS, blocks + 100); /* more of A's */
	ck_assert_uint_eq(pool_malloc_bulk(pool, 64, BATCH_BLOCKS, out),
	                  BATCH_BLOCKS);
	for (size_t i = 0; i < BATCH_BLOCKS; i++)
		ck_assert_ptr_eq(out[i], blocks[100 + BATCH_BLOCKS - 1 - i]);
	ck_assert_uint_eq(stats_of(pool).in_use, 768 - 40);

	/* Every block back, and the pool serves all of them again. */
	for (size_t i = 40; i < 768; i++)
		pool_free(pool, blocks[i]);
	free(blocks);
	ck_assert_uint_eq(stats_of(pool).in_use, 0);
	ck_assert_uint_eq(blocks_left(pool, 64, BATCH_POOL + 1), BATCH_POOL);
}
END_TEST

/*
 * A batch that meets a stacked block whose link a write after free
 * overwrote: the blocks above it are taken, the damage is reported once,
 * naming pool_malloc_bulk and the block whose link it was, the rest of the
 * stack is dropped, and the batch is made whole from the spans: never a
 * block twice.
 */
START_TEST(test_bulk_meets_stack_damage)
{
	pool_t *pool = test_pool(64, BATCH_POOL, PT);
	void **blocks = take(pool, 64, 8);
	void *out[BATCH_BLOCKS];

	misuse_record();
	for (size_t i = 0; i < 8; i++)
		pool_free(pool, blocks[i]); /* blocks[7] on top */
	raw_write(blocks[6], 16, 0x41);
	ck_assert_uint_eq(pool_malloc_bulk(pool, 64, BATCH_BLOCKS, out),
	                  BATCH_BLOCKS);
	ck_assert_ptr_eq(out[0], blocks[7]);
	ck_assert_ptr_eq(out[1], blocks[6]);
	assert_one_damage(blocks[6], "pool_malloc_bulk");
	for (size_t i = 0; i < 6; i++) /* dropped with the stack: lost */
		for (size_t j = 0; j < BATCH_BLOCKS; j++)
			ck_assert_ptr_ne(out[j], blocks[i]);
	free(blocks);
	assert_distinct_blocks(pool, out, BATCH_BLOCKS);
	pool_free_bulk(pool, BATCH_BLOCKS, out);
	ck_assert_uint_eq(misuse_count(), 1);
	ck_assert_uint_eq(stats_of(pool).in_use, 0);
}
END_TEST

/*
 * Batches held, then freed in the order they were taken (a request's
 * buffers): the first span of a batch is emptied by its last free while
 * the stack holds only its blocks, and takes the stack as its list whole.
 * Pass after pass, every block is served once; a write after free into a
 * stacked block's link is reported once, when the pool meets it (by the
 * free, or by an allocation from that list), and never hands a block out
 * twice.  A pool of 1,024 has spans of 64 and a stack of 64 here.  (The
 * debug build checks each span's counts against its lists and bits as
 * the passes run: a span that took the stack with its counts wrong
 * aborts there.)
 */
#define SPLICE_POOL   1024
#define SPLICE_BATCH  100
#define SPLICE_PASSES 10

struct splice_count {
	pool_t *pool;
	size_t left;
};

static void *splice_count_run(void *arg)
{
	struct splice_count *c = arg;
	c->left = blocks_left(c->pool, 64, SPLICE_POOL + 1);
	return NULL;
}

static void splice_passes(bool damage)
{
	pool_t *pool = test_pool(64, SPLICE_POOL, PT);
	void *got[SPLICE_BATCH], *seen[SPLICE_BATCH];

	misuse_record();
	for (int pass = 0; pass < SPLICE_PASSES; pass++) {
		for (size_t i = 0; i < SPLICE_BATCH; i++) {
			got[i] = pool_calloc(pool, 1, 64);
			ck_assert_ptr_nonnull(got[i]);
			ck_assert(pool_owns(pool, got[i]));
			seen[i] = got[i];
		}
		assert_distinct_blocks(pool, seen, SPLICE_BATCH);
		for (size_t i = 0; i < SPLICE_BATCH; i++) {
			if (damage && pass == 4 && i == 40)
				raw_write(got[10], 16, 0x41);
			pool_free(pool, got[i]);
		}
	}
	ck_assert_uint_eq(misuse_count(), damage ? 1 : 0);
	if (damage) {
		ck_assert_uint_eq(misuse_count_of(POOL_ERROR_CORRUPTED), 1);
		/* The damaged block's span took the stack whole, with no
		 * walk: the next pass's allocation met the link. */
		ck_assert_str_eq(misuse_last().function, "pool_calloc");
	}
	ck_assert_uint_eq(stats_of(pool).in_use, 0);
	/* The spans emptied so were counted empty and kept or given back:
	 * another thread gets all but what an idle thread holds (and, after
	 * the damage, a span's blocks lost). */
	pthread_t other;
	struct splice_count count = {.pool = pool};
	ck_assert_int_eq(pthread_create(&other, NULL, splice_count_run, &count),
	                 0);
	ck_assert_int_eq(pthread_join(other, NULL), 0);
	ck_assert_uint_ge(count.left,
	                  SPLICE_POOL - IDLE_KEPT * 64 - (damage ? 64 : 0));
	ck_assert_uint_ge(blocks_left(pool, 64, SPLICE_POOL + 1),
	                  SPLICE_POOL - (damage ? 64 : 0));
	ck_assert_uint_eq(misuse_count(), damage ? 1 : 0);
}

START_TEST(test_span_takes_its_stack_whole)
{
	splice_passes(false);
}
END_TEST

START_TEST(test_span_takes_a_damaged_stack)
{
	splice_passes(true);
}
END_TEST

/*
 * POOL_PER_THREAD: a span of 256 blocks has four words of out bits.  A free
 * that clears the last bit of one word while the other words have bits
 * set leaves blocks of the span handed out: the block goes on the
 * thread's stack, and the next allocation takes it.  The free of the
 * span's last handed-out block, the others on the stack or its list,
 * leaves nothing of it handed out: the span takes its blocks back off the
 * stack, and the next allocation comes from the active span.  A free that
 * judged a span by one word would fail the first part, and one that
 * missed the last block the second.
 */
#define WORDS_POOL 4096 /* spans of 256 blocks */

static int by_address(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (void *const *)a;
	uintptr_t y = (uintptr_t) * (void *const *)b;
	return (x > y) - (x < y);
}

START_TEST(test_span_idle_reads_every_word)
{
	pool_t *pool = test_pool(64, WORDS_POOL, PT);
	/* The first span whole, then 8 blocks of the next, the active one. */
	void **blocks = take(pool, 64, 256 + 8);
	qsort(blocks, 256, sizeof *blocks, by_address);
	char *first = blocks[0];
	for (size_t i = 0; i < 256; i++)
		ck_assert_ptr_eq(blocks[i], first + 64 * i);
	for (size_t i = 256; i < 256 + 8; i++)
		ck_assert_msg((uintptr_t)((char *)blocks[i] - first) >=
		                  256 * 64,
		              "block %zu is in the first span", i);
	misuse_record();

	/* Word 1 (blocks 64 to 127) freed: words 0, 2 and 3 still out. */
	for (size_t i = 64; i < 128; i++)
		pool_free(pool, blocks[i]);
	void *again = pool_malloc(pool, 64);
	ck_assert_ptr_eq(again, blocks[127]);
	pool_free(pool, again);

	/* Then all of it but block 255, and block 255 last. */
	for (size_t i = 0; i < 64; i++)
		pool_free(pool, blocks[i]);
	for (size_t i = 128; i < 255; i++)
		pool_free(pool, blocks[i]);
	pool_free(pool, blocks[255]);
	void *next = pool_malloc(pool, 64);
	ck_assert_ptr_nonnull(next);
	ck_assert_msg((uintptr_t)((char *)next - first) >= 256 * 64,
	              "the next block %p is of the emptied span at %p", next,
	              (void *)first);
	pool_free(pool, next);

	for (size_t i = 256; i < 256 + 8; i++)
		pool_free(pool, blocks[i]);
	free(blocks);
	ck_assert_uint_eq(misuse_count(), 0);
	ck_assert_uint_ge(blocks_left(pool, 64, WORDS_POOL + 1), WORDS_POOL);
}
END_TEST

/*
 * Two threads that hold no span of the pool (they never allocated from it)
 * free blocks of it with pool_free_bulk() and ask for blocks with
 * pool_malloc_bulk() at the same time.  The bulk loops of a thread with no
 * span must write nothing shared: under ThreadSanitizer a write to the
 * descriptor that stands for "no span" is a reported race.
 */
#define BULK_BLOCKS 4096
#define BULK_BATCH  16

struct bulk_freer {
	pool_t *pool;
	void **blocks;
	pthread_barrier_t *start;
	size_t got;
};

static void *bulk_freer_run(void *arg)
{
	struct bulk_freer *b = arg;
	pthread_barrier_wait(b->start);
	for (size_t i = 0; i < BULK_BLOCKS / 2; i += BULK_BATCH)
		pool_free_bulk(b->pool, BULK_BATCH, b->blocks + i);
	/* A block, when the blocks freed came back to the pool; the thread
	 * then holds a span, and gives it back. */
	void *one;
	if (pool_malloc_bulk(b->pool, 64, 1, &one) == 1) {
		b->got++;
		pool_free(b->pool, one);
	}
	return NULL;
}

START_TEST(test_bulk_from_threads_with_no_span)
{
	pool_t *pool = test_pool(64, BULK_BLOCKS, PT);
	void **blocks = take(pool, 64, BULK_BLOCKS);
	pthread_barrier_t start;
	pthread_t threads[2];
	struct bulk_freer b[2];

	pthread_barrier_init(&start, NULL, 2);
	for (int t = 0; t < 2; t++) {
		b[t] =
		    (struct bulk_freer){.pool = pool,
		                        .blocks = blocks + t * BULK_BLOCKS / 2,
		                        .start = &start};
		ck_assert_int_eq(
		    pthread_create(&threads[t], NULL, bulk_freer_run, &b[t]),
		    0);
	}
	for (int t = 0; t < 2; t++)
		ck_assert_int_eq(pthread_join(threads[t], NULL), 0);
	pthread_barrier_destroy(&start);
	free(blocks);
	ck_assert_uint_eq(stats_of(pool).in_use, 0);
}
END_TEST

/* ------------------------------------------------------------ suite */

Suite *spans_suite(void)
{
	Suite *s = suite_create("spans");
	TCase *tc;

	tc = test_tcase(s, "trim");
	tcase_add_loop_test(tc, test_calloc_after_trim_odd_region, 0,
	                    sizeof odd_shapes / sizeof odd_shapes[0]);
	tcase_add_test(tc, test_trim_never_fails_alloc);
	tcase_add_test(tc, test_fork_during_trim);

	tc = test_tcase(s, "ownership");
	tcase_add_test(tc, test_random_frees_into_own_spans);
	tcase_add_test(tc, test_random_replace_in_exact_pool);
	tcase_add_test(tc, test_locked_threads_replace);
	tcase_add_test(tc, test_locked_handoff);
	tcase_add_test(tc, test_locked_consumer_handoff);
	tcase_add_test(tc, test_locked_consumer_double_free);
	tcase_add_test(tc, test_locked_consumer_trim);
	tcase_add_test(tc, test_locked_consumer_damaged);
	tcase_add_test(tc, test_locked_consumer_idle);
	tcase_add_test(tc, test_locked_stack_marks);
	tcase_add_test(tc, test_locked_stack_mark_damaged);
	tcase_add_test(tc, test_locked_line_spares);
	tcase_add_test(tc, test_locked_spares_reach_every_thread);
	tcase_add_test(tc, test_no_capacity_lost_at_exit);
	tcase_add_test(tc, test_dry_pool_loses_nothing);
	tcase_add_test(tc, test_idle_threads_hold_little);
	tcase_add_test(tc, test_remote_freed_spans_come_back);
	tcase_add_test(tc, test_trim_gives_up_the_callers_spans);
	tcase_add_test(tc, test_remote_frees_before_fresh_blocks);
	tcase_add_test(tc, test_stack_damage_met_by_a_purge);
	tcase_add_test(tc, test_purge_takes_a_run_off_the_top);
	tcase_add_test(tc, test_stack_damage_below_a_run);
	tcase_add_test(tc, test_bulk_takes_the_stack_first);
	tcase_add_test(tc, test_bulk_meets_stack_damage);
	tcase_add_test(tc, test_span_takes_its_stack_whole);
	tcase_add_test(tc, test_span_takes_a_damaged_stack);
	tcase_add_test(tc, test_span_idle_reads_every_word);
	tcase_add_test(tc, test_bulk_from_threads_with_no_span);
	return s;
}
