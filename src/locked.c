/*
 * POOL_LOCKED without hooks: a stack of free blocks per thread in front of
 * the locked list.
 *
 * 1. Every thread that allocates from the pool or frees into it keeps a
 *    stack of free blocks (its cache for the pool, cache.c; the stack
 *    lives in its hint while the hint holds the pool, like
 *    POOL_PER_THREAD's).  A free pushes the block on the calling thread's
 *    stack and an allocation pops the head of that stack, with no lock:
 *    threads that allocate and free at once no longer wait for each other
 *    on every call.  The lock is taken when the stack is empty, for one
 *    block of the list (never a batch: a thread's stack holds only blocks
 *    that thread freed, so the list's blocks stay available to every
 *    thread, and a pool with room for every thread's live blocks never
 *    runs dry), and to give half a full stack back to the list.  What the thread keeps aside is
 *    bounded by pool->stack_limit (as in POOL_PER_THREAD: about 64 KiB of
 *    blocks, and a sixteenth of the pool at most); a thread that exits
 *    gives its stack back to the list, and pool_trim() the caller's.  A
 *    thread keeps a stack only once it allocates from the pool: the
 *    frees of a thread that only frees (a consumer) go to the list under
 *    the lock, where the allocating threads find them.
 *
 * 2. A block is in one of three states, told by two bitmaps: on the list
 *    (allocated 0, cached 0), handed out (allocated 1, cached 0), or on a
 *    thread's stack (allocated 1, cached 1).  allocated[] is written under
 *    the lock only, as in POOL_SINGLE; cached[] by atomic operations, from
 *    any thread.  Seen from the list and from pool_trim(), a block on a
 *    stack is handed out: a trim never gives back its page.
 *     - A free sets the block's cached bit with an atomic OR: of two
 *       frees of one handed-out block, at any moment, only one finds the
 *       bit clear, and the other is reported.  A free first checks that
 *       the block is allocated (a block on the list is free already), and
 *       checks again after its OR: a flush clears allocated before cached,
 *       so a free that raced with the flush of the same block (a second
 *       free) finds allocated clear on its second look, withdraws its
 *       bit, and is reported.  The OR and the second load are sequentially
 *       consistent, so either the free's OR finds the flush's cached bit
 *       still set, or its load finds allocated cleared.
 *     - An allocation from the stack clears the head's cached bit (an
 *       atomic AND); a head whose bit is clear is no block of a stack (a
 *       corrupted link): it is reported and the stack dropped, its blocks
 *       lost rather than handed out twice.
 *
 * 3. Counting: the list counts the blocks it hands out (list.allocs); a
 *    thread counts the blocks it hands out from its stack
 *    (COUNT_STACK_POPS).  The blocks handed out
 *    now are the allocated bits less the cached ones.  Both are exact
 *    when no thread is inside a call.
 *
 * 4. Lock order: a thread that exits holds caches_lock (cache.c) and then
 *    takes the pool's lock to give its stack back; fork() takes them in
 *    the same order (registry.c).
 *
 * 5. The stacks serve only once threads contend.  A pool starts as a list
 *    under a lock: every call takes the lock, which costs one uncontended
 *    compare-and-swap, less than a stack's atomic bit operations.  When
 *    LOCKED_CONTENDED acquisitions found the lock taken, the thread that
 *    holds it turns the stacks on, for good (pool->stacks_on, set under
 *    the lock).  A call without the stacks reads the flag again once it
 *    holds the lock, and goes to the stacks if it is set: so no block is
 *    freed onto the list without the cached bit's check after the first
 *    block went on a stack.  Blocks handed out from the list before are
 *    like any other (allocated, not cached).
 *
 * SPDX-License-Identifier: MIT
 */
#include "locked.h"

#include "list.h"

/* ------------------------------------------------------------ helpers */

/*
 * Takes the head off the thread's stack (or a retired cache's) to give it
 * back to the list: the block, or NULL at the stack's end.  A head that
 * is no block of the region on a stack is dropped with the rest of the
 * stack; *bad then names the block to report (the caller reports it once
 * it holds no lock: the handler may call the pool).
 */
static char *stack_take(struct pool *pool, struct thread_stack *stack,
                        char **bad)
{
	char *block = stack->head;
	if (block == NULL)
		return NULL;
	size_t index = region_slot(pool, block);
	if (index >= pool->block_count ||
	    !(atomic_load_explicit(&pool->cached[index >> 6],
	                           memory_order_relaxed) &
	      bit_mask(index))) {
		*bad = stack->last != NULL ? stack->last : block;
		*stack = (struct thread_stack){.limit = stack->limit};
		return NULL;
	}
	stack->head = (char *)(uintptr_t)(block_word_load(block, 0) ^
	                                  link_key_from(pool->secret, block));
	stack->last = block;
	stack->count--;
	return block;
}

/*
 * Gives n blocks of a stack (all, for SIZE_MAX) back to the list, under
 * the lock.  Each block goes on the list (allocated cleared) before its
 * cached bit is cleared: point 2 of the design.  A corrupted link found
 * ends the stack, and is reported when report says so.
 */
static void stack_give_back(struct pool *pool, struct thread_stack *stack,
                            size_t n, bool report)
{
	char *block, *bad = NULL;
	if (n == 0 || stack->head == NULL)
		return;
	lock_acquire(&pool->lock);
	for (; n > 0 && (block = stack_take(pool, stack, &bad)) != NULL;
	     n--) {
		size_t index = region_slot(pool, block);
		int error = list_free(pool, block, index, 0);
		POOL_ASSERT(error == 0);
		(void)error;
		atomic_fetch_and_explicit(&pool->cached[index >> 6],
		                          ~bit_mask(index),
		                          memory_order_seq_cst);
	}
	lock_release(&pool->lock);
	if (bad != NULL && report)
		report_corrupted(pool, bad);
}

/* The pool's cache_retire (cache.c): the exiting thread's stack back to
 * the list.  A corrupted link ends it unreported: this runs under
 * caches_lock, which a handler calling back into the library would wait
 * for forever. */
static void locked_cache_retire(struct pool *pool, struct thread_cache *tc)
{
	stack_give_back(pool, &tc->stack, SIZE_MAX, false);
}

/* ------------------------------------------------------------ internal API */

/* Contended acquisitions of the lock that turn the stacks on. */
#define LOCKED_CONTENDED 16

void locked_contended(struct pool *pool)
{
	if (pool->contended < LOCKED_CONTENDED)
		pool->contended++;
	if (pool->contended == LOCKED_CONTENDED)
		atomic_store_explicit(&pool->stacks_on, true,
		                      memory_order_release);
}

void *locked_alloc_slow(struct pool *pool, bool *fresh)
{
	if (!locked_stacks_on(pool))
		return list_alloc_slow(pool, fresh, 0);
	struct thread_cache *tc = cache_get(pool);
	*fresh = false;
	if (tc != NULL) {
		/* The fast path may have missed only the hint. */
		void *block = locked_pop(pool);
		if (block != NULL)
			return block;
		struct thread_stack *stack = &hint_of(pool)->stack;
		/* The thread allocates: from now on its frees go on its
		 * stack (point 1 of the design). */
		tc->stack_limit = pool->stack_limit;
		stack->limit = pool->stack_limit;
		char *bad = NULL;
		if (stack->head != NULL && stack_take(pool, stack, &bad) == NULL)
			/* The head the fast path refused: a corrupted link.
			 * The stack is dropped, and the report made with no
			 * lock held. */
			report_corrupted(pool, bad);
	}
	/* One block from the list, never a batch: the list's blocks stay
	 * available to every thread (point 1 of the design).  The head of
	 * the list, the never-used blocks, a chunk a trim gave back, and the
	 * reports of a corrupted list are list.c's. */
	return list_alloc_slow(pool, fresh, 0);
}

int locked_free_slow(struct pool *pool, void *block, size_t index)
{
	struct thread_cache *tc = cache_get(pool);
	if (tc != NULL) {
		struct thread_stack *stack = &hint_of(pool)->stack;
		/* A full stack gives half back (a thread that only frees
		 * has none: its limit is 0). */
		if (stack->limit != 0 && stack->count >= stack->limit)
			stack_give_back(pool, stack,
			                stack->count - stack->limit / 2, true);
		int error = locked_push(pool, block, index);
		if (error >= 0)
			return error;
	}
	/* A thread that only frees, or one that has no cache: the list.  The
	 * cached bit decides between this free and a racing one as it does
	 * for a stack's (point 2 of the design): set first, then the block
	 * goes on the list, then the bit is cleared. */
	uint64_t mask = bit_mask(index);
	if (atomic_fetch_or_explicit(&pool->cached[index >> 6], mask,
	                             memory_order_seq_cst) &
	    mask)
		return POOL_ERROR_DOUBLE_FREE;
	lock_acquire(&pool->lock);
	int error = list_free(pool, block, index, 0);
	/* Cleared before the lock is let go: once the block is on the list,
	 * a thread may take it and free it again, and its free must find the
	 * bit clear. */
	atomic_fetch_and_explicit(&pool->cached[index >> 6], ~mask,
	                          memory_order_seq_cst);
	lock_release(&pool->lock);
	return error;
}

bool locked_block_is_live(struct pool *pool, size_t index)
{
	return list_block_is_live(pool, index) &&
	       !(atomic_load_explicit(&pool->cached[index >> 6],
	                              memory_order_relaxed) &
	         bit_mask(index));
}

void locked_stats(struct pool *pool, pool_stats_t *out)
{
	uint64_t sums[COUNT_KINDS];
	size_t stacked = 0;

	list_stats(pool, out);
	cache_sum_counters(pool, sums);
	for (size_t w = 0; w < (pool->block_count + 63) / 64; w++)
		stacked += (size_t)__builtin_popcountll(atomic_load_explicit(
		    &pool->cached[w], memory_order_relaxed));
	out->allocs += sums[COUNT_STACK_POPS];
	out->in_use = out->in_use >= stacked ? out->in_use - stacked : 0;
	out->frees = out->allocs >= out->in_use ? out->allocs - out->in_use : 0;
}

size_t locked_trim(struct pool *pool)
{
	/* The caller's own stack first: its blocks count as handed out, and
	 * their pages would stay. */
	struct thread_hint *hint = hint_of(pool);
	if (hint->pool_id == pool->id && hint->stack.head != NULL)
		stack_give_back(pool, &hint->stack, SIZE_MAX, true);
	return list_trim(pool);
}

int locked_pool_init(struct pool *pool)
{
	return cache_pool_init(pool, locked_cache_retire);
}
