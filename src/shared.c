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

	if (list->free_list != NULL) {
		*corrupt = list->free_list;
		list->free_list = NULL;
	}
	if (list->bump >= pool->block_count)
		return NULL;
	size_t index = list->bump;
	void *block = region_block(pool, index);
	if (pool->allocated[index]) {
		*corrupt = block;
		return NULL;
	}
	list->bump++;
	pool->allocated[index] = 1;
	list->allocs++;
	return block;
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
	bool live = pool->allocated[index];
	shared_unlock(pool);
	return live;
}

void shared_stats(struct pool *pool, pool_stats_t *out)
{
	shared_lock(pool);
	shared_check(pool);
	out->allocs = pool->shared.allocs;
	out->frees = pool->shared.frees;
	out->in_use = (size_t)(pool->shared.allocs - pool->shared.frees);
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
	size_t listed = 0, handed_out = 0;

	/* Lists that hold a link the fast path would refuse are reported
	 * when met; check only a list that is whole. */
	for (void *block = list->free_list; block != NULL;
	     block = link_load(pool, block, pool->hooks)) {
		size_t index = region_slot(pool, block);
		if (index >= list->bump || pool->allocated[index] ||
		    listed >= list->bump ||
		    !link_is_valid(pool, link_load(pool, block, pool->hooks)))
			return;
		listed++;
	}
	for (size_t i = 0; i < list->bump; i++)
		handed_out += pool->allocated[i];
	assert(listed + handed_out == list->bump);
	assert(list->allocs - list->frees == handed_out);
}
#else
void shared_check(struct pool *pool)
{
	(void)pool;
}
#endif
