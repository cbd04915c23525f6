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

/*
 * Takes the head of the free list: the fast path.  Returns NULL when the
 * list is empty or its head is not to be trusted (its link names no block
 * start of the region, or it is marked handed out); then nothing changed,
 * and shared_alloc_rest() tells which and reports.  Keeping the report
 * out of here leaves the fast path no call to make but tail calls.
 */
POOL_INLINE void *shared_pop(struct pool *pool, unsigned hooks)
{
	struct shared_list *list = &pool->shared;
	void *block = list->free_list;

	if (unlikely(block == NULL))
		return NULL;
	void *next = link_load(pool, block, hooks);
	size_t index = region_index_of(pool, block);
	/* A link is trusted only once it names a block start inside the
	 * region: a use-after-free write cannot steer us away. */
	if (unlikely(!link_is_valid(pool, next) || pool->allocated[index]))
		return NULL;
	list->free_list = next;
	pool->allocated[index] = 1;
	list->allocs++;
	POOL_ASSERT(list->allocs - list->frees <= list->bump);
	return block;
}

/* After shared_pop() found nothing: reports and drops a corrupted list,
 * then takes a never-used block (*fresh).  NULL when none is left. */
POOL_COLD void *shared_alloc_rest(struct pool *pool, bool *fresh,
                                  unsigned hooks);

/* A block, or NULL when the pool has none left; *fresh: never used. */
POOL_INLINE void *shared_alloc(struct pool *pool, bool *fresh, unsigned hooks)
{
	void *block = shared_pop(pool, hooks);
	if (likely(block != NULL)) {
		*fresh = false;
		return block;
	}
	return shared_alloc_rest(pool, fresh, hooks);
}

/* Frees the block of that index.  Returns 0, or the pool_error found;
 * nothing is changed on error. */
POOL_INLINE int shared_free(struct pool *pool, void *block, size_t index,
                            unsigned hooks)
{
	struct shared_list *list = &pool->shared;

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
