/*
 * POOL_LOCKED without hooks: the calling thread's stack of free blocks in
 * front of the locked list.  The fast paths are here, inline; the design,
 * the refill and the flush are in locked.c; read its header comment
 * first.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SHIFTPOOL_LOCKED_H
#define SHIFTPOOL_LOCKED_H

#include "cache.h"
#include "hooks.h"

/* Whether the threads' stacks serve the pool (point 5 of locked.c's
 * design); until they do, every call takes the lock, as in POOL_SINGLE
 * plus the lock. */
POOL_INLINE bool locked_stacks_on(const struct pool *pool)
{
	return atomic_load_explicit(&pool->stacks_on, memory_order_acquire);
}

/* Counts a contended acquisition of the lock, which the caller holds;
 * enough of them turn the stacks on. */
POOL_NOINLINE void locked_contended(struct pool *pool);

/* Takes the lock for a call without the stacks; false, with the lock let
 * go, when the stacks turned on meanwhile (the call then uses them). */
POOL_INLINE bool locked_lock_plain(struct pool *pool)
{
	if (unlikely(lock_acquire_contended(&pool->lock)))
		locked_contended(pool);
	if (unlikely(atomic_load_explicit(&pool->stacks_on,
	                                  memory_order_relaxed))) {
		lock_release(&pool->lock);
		return false;
	}
	return true;
}

/*
 * The head of the thread's stack, handed out: its tag cleared.  NULL when
 * the thread's hint does not hold the pool, the stack is empty, or its
 * head is no block of the region on a stack (a link or a tag that a use
 * after free overwrote): locked_alloc_slow() then sorts it out.
 */
POOL_INLINE void *locked_pop(struct pool *pool)
{
	struct thread_hint *hint = hint_of(pool);
	char *block = hint->stack.head;

	if (unlikely(hint->pool_id != pool->id || block == NULL))
		return NULL;
	if (unlikely(region_slot(pool, block) >= pool->block_count ||
	             tag_load(block) != stack_tag(pool, block)))
		return NULL;
	hint->stack.head = (char *)(uintptr_t)(block_word_load(block, 0) ^
	                                       link_key_from(pool->secret,
	                                                     block));
	tag_store(block, 0);
	hint->stack.last = block;
	hint->stack.count--;
	owned_increment(&hint->cache->counts.counters[COUNT_STACK_POPS]);
	return block;
}

/* A block the list hands out once the stacks are on: the tag it may keep
 * from a stack is cleared (point 2 of locked.c's design). */
POOL_INLINE void *locked_untag(struct pool *pool, void *block)
{
	uintptr_t tag = stack_tag(pool, block);
	if (block != NULL && tag_load(block) == tag)
		tag_swap(block, &tag, 0);
	return block;
}

/*
 * Tags the block of that index (a block of the region, handed out) as on
 * a stack, for a free: returns 0, or POOL_ERROR_DOUBLE_FREE (the block is
 * on the list, or on a stack already) with nothing changed.  Point 2 of
 * locked.c's design says why a racing double free is caught.
 */
POOL_INLINE int locked_tag(struct pool *pool, void *block, size_t index)
{
	_Atomic uint64_t *allocated = (_Atomic uint64_t *)pool->allocated;
	uint64_t mask = bit_mask(index);
	uintptr_t tag = stack_tag(pool, block);

	if (unlikely(!(atomic_load_explicit(&allocated[index >> 6],
	                                    memory_order_relaxed) &
	               mask)))
		return POOL_ERROR_DOUBLE_FREE;
	/* One exchange, not a load and a compare-and-swap: the block's line
	 * is fetched once, for writing.  A word that was the tag already
	 * stays the tag: nothing changed. */
	uintptr_t word = tag_exchange(block, tag);
	if (unlikely(word == tag))
		return POOL_ERROR_DOUBLE_FREE;
	if (unlikely(!(atomic_load_explicit(&allocated[index >> 6],
	                                    memory_order_seq_cst) &
	               mask))) {
		/* The block went on the list meanwhile, by a free that took
		 * the lock before the stacks turned on: this free is the
		 * second. */
		tag_swap(block, &tag, word);
		return POOL_ERROR_DOUBLE_FREE;
	}
	return 0;
}

/*
 * Frees the block of that index (a block of the region) onto the thread's
 * stack: returns 0, POOL_ERROR_DOUBLE_FREE, or -1 when the hint does not
 * hold the pool or the stack is full (locked_free_slow() then decides).
 */
POOL_INLINE int locked_push(struct pool *pool, void *block, size_t index)
{
	struct thread_hint *hint = hint_of(pool);

	if (unlikely(hint->pool_id != pool->id ||
	             hint->stack.count >= hint->stack.limit))
		return -1;
	int error = locked_tag(pool, block, index);
	if (unlikely(error))
		return error;
	block_word_store(block, 0,
	                 (uintptr_t)hint->stack.head ^
	                     link_key_from(pool->secret, block));
	hooks_block_in(pool, block, 0);
	hint->stack.head = block;
	hint->stack.count++;
	owned_increment(&hint->cache->counts.counters[COUNT_STACK_PUSHES]);
	return 0;
}

/* pool_malloc/pool_calloc when locked_pop() found nothing: a block from
 * the list (the rest of a batch goes on the stack), or NULL. */
POOL_NOINLINE void *locked_alloc_slow(struct pool *pool, bool *fresh);
/* pool_free when locked_push() returned -1; returns 0 or the misuse. */
POOL_NOINLINE int locked_free_slow(struct pool *pool, void *block,
                                   size_t index);
/* Whether the block of that index is handed out now. */
bool locked_block_is_live(struct pool *pool, size_t index);
/* The counters of pool_stats(). */
void locked_stats(struct pool *pool, pool_stats_t *out);
/* pool_trim(): the caller's stack back to the list, then list_trim(). */
size_t locked_trim(struct pool *pool);
/* Sets up what the mode keeps beside the list; 0 or an errno value. */
int locked_pool_init(struct pool *pool);

#endif /* SHIFTPOOL_LOCKED_H */
