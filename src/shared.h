/*
 * The shared free list of POOL_SINGLE and POOL_LOCKED modes (the caller
 * holds the lock in POOL_LOCKED mode).  Inline: these are the fast paths.
 *
 * Free blocks are linked through their first word.  Blocks past `bump`
 * have never been handed out, so pool_init() builds no list (O(1), touches
 * no page) and a block taken from the bump is known to be zero.  One byte
 * per block says whether it is handed out; it turns a double free and a
 * corrupted link into a report instead of a block given to two owners.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SHIFTPOOL_SHARED_H
#define SHIFTPOOL_SHARED_H

#include "hooks.h"

/* A block, or NULL when the pool has none left; *fresh: never used. */
POOL_INLINE void *shared_alloc(struct pool *pool, bool *fresh, unsigned hooks)
{
	struct shared_list *list = &pool->shared;
	void *block = list->free_list;
	size_t index;

	if (likely(block != NULL)) {
		void *next = link_load(pool, block, hooks);
		/* A link is trusted only once it names a block start inside
		 * the region: a use-after-free write cannot steer us away. */
		if (unlikely(!link_is_valid(pool, next))) {
			list->free_list = NULL;
			pool_report_corrupted(pool, block);
			return NULL;
		}
		list->free_list = next;
		index = region_index_of(pool, block);
		*fresh = false;
	} else if (likely(list->bump < pool->block_count)) {
		index = list->bump++;
		block = region_block(pool, index);
		*fresh = true;
	} else {
		return NULL;
	}

	if (unlikely(pool->allocated[index])) {
		/* The list named a block that is handed out: corrupted. */
		list->free_list = NULL;
		pool_report_corrupted(pool, block);
		return NULL;
	}
	pool->allocated[index] = 1;
	list->allocs++;
	POOL_ASSERT(list->allocs - list->frees <= list->bump);
	return block;
}

/* Returns 0, or the pool_error found; nothing is changed on error. */
POOL_INLINE int shared_free(struct pool *pool, void *block, unsigned hooks)
{
	struct shared_list *list = &pool->shared;
	size_t index = region_index_of(pool, block);

	if (unlikely(!pool->allocated[index]))
		return POOL_ERROR_DOUBLE_FREE;
	pool->allocated[index] = 0;
	POOL_ASSERT(list->allocs > list->frees);
	hooks_block_in(pool, block, hooks);
	link_store(pool, block, list->free_list, hooks);
	list->free_list = block;
	list->frees++;
	return 0;
}

#endif /* SHIFTPOOL_SHARED_H */
