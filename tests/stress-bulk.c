/*
 * Part bulk: threads that hold no span of the pool (they never allocated
 * from it) free the main thread's blocks with pool_free_bulk(), all at
 * once, then ask for a block with pool_malloc_bulk().  The bulk loops of
 * a thread with no span must write nothing shared: in the
 * ThreadSanitizer build (where this part matters) a write to the
 * descriptor standing for "no span" is a reported race.  Every block must
 * come back.
 *
 * SPDX-License-Identifier: MIT
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "shiftpool.h"
#include "concurrency.h"
#include "stress.h"

#define BULK_THREADS 4
#define BULK_BLOCKS  4096 /* per thread */
#define BULK_BATCH   16

struct bulk_thread {
	pool_t *pool;
	void **blocks;
	pthread_barrier_t *start;
};

static void *bulk_thread_fn(void *arg)
{
	struct bulk_thread *t = arg;

	pthread_barrier_wait(t->start);
	for (size_t i = 0; i < BULK_BLOCKS; i += BULK_BATCH)
		pool_free_bulk(t->pool, BULK_BATCH, t->blocks + i);
	void *one;
	if (pool_malloc_bulk(t->pool, 64, 1, &one) == 1)
		pool_free(t->pool, one);
	return NULL;
}

void part_bulk(const struct stress_options *o, int mode)
{
	size_t count = (size_t)BULK_THREADS * BULK_BLOCKS;
	pool_t *pool = pool_init(64, count, mode | POOL_NO_FALLBACK);
	void **blocks = malloc(count * sizeof *blocks);
	pthread_barrier_t start;
	pthread_t threads[BULK_THREADS];
	struct bulk_thread t[BULK_THREADS];

	(void)o;
	CHECK(pool != NULL && blocks != NULL, "no pool of %zu blocks", count);
	for (size_t i = 0; i < count; i++) {
		blocks[i] = pool_malloc(pool, 64);
		CHECK(blocks[i] != NULL, "block %zu of %zu", i, count);
	}
	pthread_barrier_init(&start, NULL, BULK_THREADS);
	for (int i = 0; i < BULK_THREADS; i++) {
		t[i] = (struct bulk_thread){.pool = pool,
		                            .blocks = blocks + i * BULK_BLOCKS,
		                            .start = &start};
		CHECK(pthread_create(&threads[i], NULL, bulk_thread_fn,
		                     &t[i]) == 0,
		      "thread %d", i);
	}
	for (int i = 0; i < BULK_THREADS; i++)
		pthread_join(threads[i], NULL);
	pthread_barrier_destroy(&start);
	pool_stats_t st;
	CHECK(pool_stats(pool, &st) == 0 && st.in_use == 0,
	      "%zu blocks still in use after every one was freed", st.in_use);
	for (size_t i = 0; i < count; i++) {
		blocks[i] = pool_malloc(pool, 64);
		CHECK(blocks[i] != NULL, "block %zu of %zu after the frees", i,
		      count);
	}
	pool_destroy(pool);
	free(blocks);
	printf("bulk %s: %d threads with no span freed %zu blocks in "
	       "batches of %d\n",
	       mode == POOL_PER_THREAD ? "per-thread" : "locked", BULK_THREADS,
	       count, BULK_BATCH);
}
