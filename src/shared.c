/*
 * POOL_SINGLE and POOL_LOCKED: the slow paths, the counters and the
 * invariant check of the shared free list (the fast paths are in
 * shared.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "shared.h"

/* ------------------------------------------------------------ helpers */

static void shared_lock(struct pool *pool)
{
	if (pool->mode == POOL_LOCKED)
		pthread_mutex_lock(&pool->lock);
}

static void shared_unlock(struct pool *pool)
{
	if (pool->mode == POOL_LOCKED)
		pthread_mutex_unlock(&pool->lock);
}

/* After shared_pop() refused: drops a corrupted list (*corrupt names its
 * head), then takes a never-used block.  Lock held. */
static void *take_rest(struct pool *pool, void **corrupt)
{
	struct shared_list *list = &pool->shared;

	if (list->head != NULL) {
		/* The block whose link was refused: head is only ever
		 * refused when a pop decoded it from last's link. */
		*corrupt = list->last;
		list->head = NULL;
	}
	if (list->bump >= pool->block_count)
		return NULL;
	size_t index = list->bump;
	if (bit_test_and_set(pool->allocated, index)) {
		*corrupt = region_block(pool, index);
		return NULL;
	}
	list->bump++;
	list->allocs++;
	return region_block(pool, index);
}

/* Blocks handed out now: the bits set below bump.  Lock held. */
static size_t handed_out(const struct pool *pool)
{
	size_t count = 0;
	for (size_t w = 0; w < (pool->shared.bump + 63) / 64; w++)
		count += (size_t)__builtin_popcountll(pool->allocated[w]);
	return count;
}

/* ------------------------------------------------------------ internal API */

void *shared_alloc_slow(struct pool *pool, bool *fresh, unsigned hooks)
{
	void *corrupt = NULL;

	shared_lock(pool);
	void *block = shared_pop(pool, hooks);
	*fresh = block == NULL;
	if (block == NULL)
		block = take_rest(pool, &corrupt);
	shared_unlock(pool);
	/* Never with the lock held: the handler may call the library. */
	if (corrupt != NULL)
		report_corrupted(pool, corrupt);
	return block;
}

bool shared_block_is_live(struct pool *pool, size_t index)
{
	shared_lock(pool);
	bool live = bit_test(pool->allocated, index);
	shared_unlock(pool);
	return live;
}

void shared_stats(struct pool *pool, pool_stats_t *out)
{
	shared_lock(pool);
	shared_check(pool);
	out->allocs = pool->shared.allocs;
	out->in_use = handed_out(pool);
	out->frees = pool->shared.allocs - out->in_use;
	/* The free list is used before the bump, so in_use reaches a new
	 * high only when it equals bump: the peak is exactly bump. */
	out->peak_in_use = pool->shared.bump;
	shared_unlock(pool);
	out->fallback_allocs =
	    atomic_load_explicit(&pool->fallback_allocs, memory_order_relaxed);
	out->fallback_frees =
	    atomic_load_explicit(&pool->fallback_frees, memory_order_relaxed);
}

#ifdef SHIFTPOOL_ASSERTIONS
void shared_check(struct pool *pool)
{
	struct shared_list *list = &pool->shared;
	size_t listed = 0, index;
	char *block = list->head;

	/* A list that holds a link the fast path would refuse is reported
	 * when met; check only a list that is whole. */
	for (; (index = region_slot(pool, block)) < list->bump;
	     block = (char *)(uintptr_t)link_load(pool, block, pool->hooks)) {
		if (bit_test(pool->allocated, index) || listed >= list->bump)
			return;
		listed++;
	}
	if (block != NULL)
		return;
	assert(listed + handed_out(pool) == list->bump);
	assert(handed_out(pool) <= list->allocs);
}
#else
void shared_check(struct pool *pool)
{
	(void)pool;
}
#endif
