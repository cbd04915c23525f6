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
 *    runs dry), and to give half a full stack back to the list.  What
 *    the thread keeps aside is bounded by pool->stack_limit (as in
 *    POOL_PER_THREAD: about 64 KiB of blocks, and a sixteenth of the pool
 *    at most); a thread that exits gives its stack back to the list, and
 *    pool_trim() the caller's.  A thread keeps a stack only once it
 *    allocates from the pool (point 6 says where the frees of the others
 *    go).
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
 * 6. A thread that only frees (a consumer) keeps no stack: its blocks
 *    would wait there for allocations that never come.  Until it has
 *    freed LOCKED_FREES_ALONE blocks in a row with no allocation, its
 *    frees go to the list under the lock (the cached bit arbitrating as
 *    for a stack), where every thread finds them: a thread that
 *    allocates soon after, as every thread does when the stacks turn on,
 *    is no consumer.  After that, its frees go on the pool's pending
 *    stack, one compare-and-swap each and no lock.  That stack is pushed
 *    one block at a time and taken whole (an exchange), so it has no ABA
 *    case.  A block on it is on a stack (point 2): allocated, cached, its
 *    link in word 0.  A thread whose own stack is empty takes the pending
 *    stack before it looks at the list, keeps up to its stack's limit of
 *    blocks as its stack, and puts the rest back after whatever was
 *    pushed meanwhile.  So producers and consumers pass blocks without
 *    the lock.  The cost: the blocks a producer keeps are its own until
 *    it allocates them, so in a pool with room for no more than the
 *    blocks in flight, another producer may find none (at most a stack's
 *    limit per producer), and a thread that takes the whole pending
 *    stack leaves it empty for a moment.  pool_trim() gives the pending
 *    blocks to the list first, so that their pages can go.
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

/* ------------------------------------------------------------ pending */

/* A free of a thread without a stack: the block on the pending stack
 * (point 6 of the design).  Returns 0 or the misuse found. */
static int pending_push(struct pool *pool, char *block, size_t index)
{
	int error = locked_mark_cached(pool, index);
	if (error)
		return error;
	hooks_block_in(pool, block, 0);
	uintptr_t head =
	    atomic_load_explicit(pool->pending, memory_order_relaxed);
	do {
		block_word_store(block, 0,
		                 head ^ link_key_from(pool->secret, block));
	} while (!atomic_compare_exchange_weak_explicit(
	    pool->pending, &head, (uintptr_t)block, memory_order_release,
	    memory_order_relaxed));
	return 0;
}

/*
 * Puts back on the pending stack a chain taken off it: the blocks a thread
 * did not keep.  Without the chain's tail, it can go back only on an empty
 * stack; blocks pushed meanwhile are taken off, and the chain goes after
 * them, so that only those few blocks are walked.  A walk that finds a
 * corrupted link (or more links than the pool has blocks: a cycle) gives
 * both chains to the list instead, where each block is checked and the
 * damage reported.
 */
static void pending_put_back(struct pool *pool, char *chain)
{
	for (;;) {
		uintptr_t expected = 0;
		if (atomic_compare_exchange_strong_explicit(
		        pool->pending, &expected, (uintptr_t)chain,
		        memory_order_release, memory_order_relaxed))
			return;
		char *newer = (char *)atomic_exchange_explicit(
		    pool->pending, 0, memory_order_acquire);
		char *block = newer, *tail = NULL;
		size_t steps = 0;
		while (block != NULL) {
			size_t index = region_slot(pool, block);
			if (index >= pool->block_count ||
			    !(atomic_load_explicit(&pool->cached[index >> 6],
			                           memory_order_relaxed) &
			      bit_mask(index)) ||
			    ++steps > pool->block_count)
				break;
			tail = block;
			block = (char *)(block_word_load(block, 0) ^
			                 link_key_from(pool->secret, block));
		}
		if (block != NULL) {
			struct thread_stack ours = {.head = chain},
			                    theirs = {.head = newer};
			stack_give_back(pool, &ours, pool->block_count, true);
			stack_give_back(pool, &theirs, pool->block_count, true);
			return;
		}
		if (tail != NULL) {
			block_word_store(tail, 0,
			                 (uintptr_t)chain ^
			                     link_key_from(pool->secret, tail));
			chain = newer;
		}
	}
}

/*
 * The whole pending stack, taken: the thread's empty stack becomes its
 * first blocks, up to the stack's limit, and the rest goes back on the
 * pending stack.
 * A link that names no block on a stack (a use after free) ends the
 * thread's part with the blocks before it, and the rest is dropped: it is
 * reported.  Returns whether the stack got any block.
 */
static bool pending_adopt(struct pool *pool, struct thread_stack *stack)
{
	char *block = (char *)atomic_exchange_explicit(pool->pending, 0,
	                                               memory_order_acquire);
	char *last = NULL, *bad = NULL;
	uint32_t n = 0;
	char *rest = NULL;

	stack->head = block;
	while (block != NULL) {
		size_t index = region_slot(pool, block);
		if (index >= pool->block_count ||
		    !(atomic_load_explicit(&pool->cached[index >> 6],
		                           memory_order_relaxed) &
		      bit_mask(index))) {
			bad = last != NULL ? last : block;
			break;
		}
		char *next =
		    (char *)(block_word_load(block, 0) ^
		             link_key_from(pool->secret, block));
		last = block;
		n++;
		if (n == stack->limit) {
			rest = next;
			break;
		}
		block = next;
	}
	if (last != NULL)
		block_word_store(last, 0, link_key_from(pool->secret, last));
	else
		stack->head = NULL;
	stack->count = n;
	stack->last = NULL;
	/* The rest is checked as a thread takes it. */
	if (rest != NULL)
		pending_put_back(pool, rest);
	if (bad != NULL)
		report_corrupted(pool, bad);
	return n != 0;
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
/* Frees in a row, with no allocation, that make a thread one that only
 * frees (point 6 of the design). */
#define LOCKED_FREES_ALONE 64

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
		tc->frees_alone = 0;
		stack->limit = pool->stack_limit;
		char *bad = NULL;
		if (stack->head != NULL && stack_take(pool, stack, &bad) == NULL)
			/* The head the fast path refused: a corrupted link.
			 * The stack is dropped, and the report made with no
			 * lock held. */
			report_corrupted(pool, bad);
		/* What threads that only free gave back comes first (point
		 * 6 of the design). */
		if (stack->head == NULL &&
		    atomic_load_explicit(pool->pending, memory_order_relaxed) !=
		        0 &&
		    pending_adopt(pool, stack)) {
			block = locked_pop(pool);
			if (block != NULL)
				return block;
		}
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
	/* A thread that only frees: the pending stack (point 6 of the
	 * design). */
	if (tc != NULL && ++tc->frees_alone > LOCKED_FREES_ALONE)
		return pending_push(pool, block, index);
	/* One that may allocate yet, or one without a cache: the list.  The
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
	/* Then the pending blocks, whole: up to every block of the pool,
	 * which ends a cycle that a use after free made. */
	if (atomic_load_explicit(pool->pending, memory_order_relaxed) != 0) {
		struct thread_stack pending = {
		    .head = (char *)atomic_exchange_explicit(
		        pool->pending, 0, memory_order_acquire)};
		stack_give_back(pool, &pending, pool->block_count, true);
	}
	return list_trim(pool);
}

int locked_pool_init(struct pool *pool)
{
	return cache_pool_init(pool, locked_cache_retire);
}
