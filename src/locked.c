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
 *    on every call.  The lock is taken when the stack is empty, for a
 *    magazine (point 6) or one block of the list (never a batch of it: a
 *    thread's stack holds only blocks that thread freed or a consumer
 *    gave up, so the list's blocks stay available to every thread, and a
 *    pool with room for every thread's live blocks never runs dry; the
 *    rest of a never-used block's cache line is the exception, point 7),
 *    and to give half a full stack back to the list.  What the thread keeps
 *    aside is bounded by pool->stack_limit (about 64 KiB of blocks, 128
 *    at most, and a sixteenth of the pool at most: stack_limit_of()); a
 *    thread that exits gives its stack back to the list, and pool_trim()
 *    the caller's.  A thread keeps a stack only once it allocates from
 *    the pool (point 6 says where the frees of the others go).
 *
 * 2. A block is in one of three states: on the list (allocated 0),
 *    handed out (allocated 1, no tag), or on a thread's stack (allocated
 *    1, tagged).  allocated[] is written under the lock only, as in
 *    POOL_SINGLE.  The tag is word 1 of the block holding stack_tag(), a
 *    value of the pool's secret and the block's address (link.h), written
 *    by atomic operations from any thread.  It lives in the block, not
 *    in a bitmap beside the region, because a bitmap's word holds the
 *    bits of 64 neighbouring blocks: when two threads' blocks share one
 *    (a program whose objects move between threads), every free and
 *    allocation moved that word's cache line between the cores, and that
 *    took more than half the time.  The block's own line is the one the
 *    free writes its link into anyway.  Seen from the list and from
 *    pool_trim(), a block on a stack is handed out: a trim never gives
 *    back its page.
 *     - A free checks that the block is allocated (a block on the list is
 *       free already), then swaps the word it finds in word 1 for the
 *       tag (an atomic exchange): of two frees of one handed-out block,
 *       at any moment, only one gets back a word that is not the tag,
 *       and the other gets the tag (its exchange changed nothing) and is
 *       reported.  A program's word equals the tag by a chance of
 *       2^-64 (its free would be reported as a double free).
 *     - A block given back to the list keeps its tag, so a free that
 *       raced with that flush (a second free) finds either the tag or
 *       allocated clear.  The list clears the tag when it hands the block
 *       out again (locked_untag(), a compare-and-swap from the tag to 0).
 *       A free also checks allocated again after its swap (sequentially
 *       consistent): a free onto the list that took the lock before the
 *       stacks turned on (point 5) tags nothing, and a second free that
 *       raced with it finds allocated clear, puts the word back and is
 *       reported.
 *     - An allocation from the stack checks the head's tag and clears it
 *       (a load and a store: a racing free finds the tag, or finds it
 *       cleared once the block is handed out again, which is a free of
 *       the new allocation).  A head without its tag is no block of a
 *       stack (a link or a tag that a use after free overwrote): it is
 *       reported and the stack dropped, its blocks lost rather than
 *       handed out twice.
 *
 * 3. Counting: the list counts the blocks it hands out (list.allocs); a
 *    thread counts the blocks it frees onto its stack (or a magazine) and
 *    hands out from it (COUNT_STACK_PUSHES, COUNT_STACK_POPS), and the
 *    depot the blocks stacks gave back to the list (depot->returned).
 *    The blocks on stacks are the pushes less the pops and the returns;
 *    those handed out now are the allocated bits less them.  Both are
 *    exact when no thread is inside a call.
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
 *    freed onto the list without the tag's check after the first block
 *    went on a stack.  Blocks handed out from the list before are like
 *    any other (allocated, not tagged).
 *
 * 6. A thread that only frees (a consumer) would keep its blocks on a
 *    stack, in the way above, for allocations that never come.  Until it
 *    has freed LOCKED_FREES_ALONE blocks in a row with no allocation, it
 *    keeps no stack, and its frees go to the list under the lock (the
 *    tag arbitrating as for a stack), where every thread finds
 *    them: a thread that allocates soon after, as every thread does when
 *    the stacks turn on, is no consumer.  After that, it fills magazines
 *    with no lock: its frees go on tc->filling, and a full one (exactly
 *    pool->stack_limit blocks) goes on the pool's depot (pool->depot,
 *    under the lock: one acquisition for a magazine).  A thread whose own
 *    stack is empty takes a magazine off the depot, as its stack, before
 *    it looks at the list (one acquisition for a magazine's worth of
 *    allocations).  A block in a magazine is on a stack (point 2):
 *    allocated, tagged, its link in word 0; the depot is an array of the
 *    magazines' heads, with room for as many as the pool's blocks make
 *    (a word per pool->stack_limit blocks).  The magazine being filled
 *    is never out of reach: the filling thread takes it (an exchange)
 *    and puts it back (a store) around each push, so that a thread that
 *    finds the pool dry (its stack, the depot and the list empty, no
 *    block never used) takes it whole with an exchange, under
 *    caches_lock, and the filling thread starts a new one.  pool_trim()
 *    gives the depot's magazines and those being filled to the list
 *    first, so that their pages can go, and a thread that exits gives
 *    back the one it was filling.  The cost: a pool with room for no
 *    more than the blocks in flight may find one magazine in the moment
 *    its filling thread holds it, and fall back.
 *
 * 7. Blocks smaller than a cache line share lines, and two threads that
 *    write blocks of one line move it between their cores at every
 *    write.  Handed out one at a time, never-used blocks would alternate
 *    between threads that allocate at once (every line shared), and
 *    those blocks then cycle on each thread's stack for good: glibc's
 *    bench-malloc-thread at two threads took 1.2 to 2.5 times as long
 *    with 16-byte classes as with the smallest class at 64 bytes.  So a
 *    thread that takes a never-used block from the list takes the blocks
 *    that follow it in its line too, if they are the next never-used
 *    ones (list_take_line(), which takes the lock again: another thread
 *    may have taken them meanwhile): handed out and tagged,
 *    as on a stack, they go on its spares, the chain in tc->filling that a
 *    thread which allocates never uses for a magazine.  Its next
 *    allocations take them when its stack is empty (one exchange), before
 *    the depot and the list.  They are a line's worth at most (3 blocks
 *    of 16 bytes), and they stay within every thread's reach as a
 *    magazine being filled is: a thread that finds the pool dry takes
 *    another's spares or magazine, one block for itself, and keeps the
 *    rest as its own spares (not on its stack), which the next thread to
 *    find the pool dry may take in turn.  So a pool with room for every
 *    thread's live blocks still serves them all, but for the moment a
 *    chain is in flight between two exchanges.  The list counts them as
 *    handed out (its invariant holds), the thread as pushed on a stack,
 *    and depot->spared keeps their number, which pool_stats() takes off
 *    the allocations; pool_trim() and a thread's exit give them back to
 *    the list with the magazines.
 *
 * SPDX-License-Identifier: MIT
 */
#include "locked.h"

#include "list.h"

/* ------------------------------------------------------------ helpers */

/* Whether block is a block of the region on a stack (or in a magazine):
 * its tag in word 1. */
static bool block_on_stack(struct pool *pool, char *block)
{
	return region_slot(pool, block) < pool->block_count &&
	       tag_load(block) == stack_tag(pool, block);
}

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
	if (!block_on_stack(pool, block)) {
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
 * the lock.  Each block keeps its tag on the list (point 2 of the
 * design).  A corrupted link found ends the stack, and is reported when
 * report says so.
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
		int error = list_free(pool, block, region_slot(pool, block), 0);
		POOL_ASSERT(error == 0);
		(void)error;
		owned_increment(&pool->depot->returned);
	}
	lock_release(&pool->lock);
	if (bad != NULL && report)
		report_corrupted(pool, bad);
}

/* ------------------------------------------------------------ depot */

/* A thread that only frees: its full stack goes on the depot, whole, as
 * one magazine (point 6 of the design).  The stack is then empty.  The
 * depot has room for every magazine the pool's blocks can make. */
static void depot_put(struct pool *pool, struct thread_stack *stack)
{
	struct locked_depot *depot = pool->depot;
	lock_acquire(&pool->lock);
	size_t count =
	    atomic_load_explicit(&depot->count, memory_order_relaxed);
	POOL_ASSERT(count < pool->block_count / pool->stack_limit);
	depot->magazines[count] = stack->head;
	atomic_store_explicit(&depot->count, count + 1, memory_order_relaxed);
	lock_release(&pool->lock);
	*stack = (struct thread_stack){.limit = stack->limit};
}

/* The magazine on top of the depot, taken off it under the lock, or NULL
 * when the depot is empty. */
static char *depot_pop(struct pool *pool)
{
	struct locked_depot *depot = pool->depot;
	size_t count =
	    atomic_load_explicit(&depot->count, memory_order_relaxed);
	if (count == 0)
		return NULL;
	char *head = depot->magazines[count - 1];
	atomic_store_explicit(&depot->count, count - 1, memory_order_relaxed);
	return head;
}

/*
 * A thread whose stack is empty: a magazine of the depot becomes its
 * stack.  Returns false when the depot is empty.  A head that is no block
 * on a stack (its tag overwritten by a use after free) is reported and
 * its magazine dropped: its blocks are lost, never handed out twice.
 */
static bool depot_take(struct pool *pool, struct thread_stack *stack)
{
	if (atomic_load_explicit(&pool->depot->count, memory_order_relaxed) ==
	    0)
		return false;
	lock_acquire(&pool->lock);
	char *head = depot_pop(pool);
	lock_release(&pool->lock);
	if (head == NULL)
		return false;
	if (!block_on_stack(pool, head)) {
		report_corrupted(pool, head);
		return false;
	}
	*stack = (struct thread_stack){
	    .head = head, .count = pool->stack_limit, .limit = stack->limit};
	return true;
}

/* pool_trim(): every magazine of the depot back to the list. */
static void depot_give_back(struct pool *pool)
{
	for (;;) {
		lock_acquire(&pool->lock);
		char *head = depot_pop(pool);
		lock_release(&pool->lock);
		if (head == NULL)
			return;
		if (!block_on_stack(pool, head)) {
			report_corrupted(pool, head);
			continue;
		}
		struct thread_stack magazine = {.head = head};
		stack_give_back(pool, &magazine, pool->stack_limit, true);
	}
}

/* ------------------------------------------------------------ filling */

/*
 * A free of a thread that only frees: the block goes on the magazine the
 * thread is filling, tc->filling, which it takes (an exchange) and puts
 * back (a store) around the push, so that a thread that finds the pool
 * dry may take it whole meanwhile (the filling thread then starts a new
 * one).  A full magazine goes on the depot.  Returns 0 or the misuse.
 */
static int filling_push(struct pool *pool, struct thread_cache *tc,
                        char *block, size_t index)
{
	int error = locked_tag(pool, block, index);
	if (error)
		return error;
	hooks_block_in(pool, block, 0);
	owned_increment(&tc->counts.counters[COUNT_STACK_PUSHES]);
	uintptr_t chain = atomic_exchange_explicit(&tc->filling, 0,
	                                           memory_order_acquire);
	if (chain == 0)
		tc->filling_count = 0;
	block_word_store(block, 0, chain ^ link_key_from(pool->secret, block));
	if (++tc->filling_count == pool->stack_limit) {
		struct thread_stack full = {.head = block};
		depot_put(pool, &full);
		tc->filling_count = 0;
		return 0;
	}
	atomic_store_explicit(&tc->filling, (uintptr_t)block,
	                      memory_order_release);
	return 0;
}

/* cache_find()'s look for a magazine being filled: takes it whole. */
static bool filling_take(struct thread_cache *tc, void *arg)
{
	uintptr_t chain =
	    atomic_exchange_explicit(&tc->filling, 0, memory_order_acquire);
	*(char **)arg = (char *)chain;
	return chain != 0;
}

/*
 * A chain taken from a thread's magazine becomes the empty stack: each
 * block checked (a block of the region on a stack), at most as many as
 * the pool has blocks (a cycle).  A link that fails the check ends the
 * stack with the blocks before it and is reported; the rest is lost.
 * Returns whether the stack got any block.
 */
static bool filling_adopt(struct pool *pool, struct thread_stack *stack,
                          char *block)
{
	char *last = NULL, *bad = NULL;
	uint32_t n = 0;

	stack->head = block;
	while (block != NULL) {
		if (!block_on_stack(pool, block) || n == pool->block_count ||
		    n == UINT32_MAX) {
			bad = last != NULL ? last : block;
			break;
		}
		last = block;
		n++;
		block = (char *)(block_word_load(block, 0) ^
		                 link_key_from(pool->secret, block));
	}
	if (bad != NULL && last != NULL)
		block_word_store(last, 0, link_key_from(pool->secret, last));
	if (last == NULL)
		stack->head = NULL;
	stack->count = n;
	stack->last = NULL;
	if (bad != NULL)
		report_corrupted(pool, bad);
	return n != 0;
}

/* ------------------------------------------------------------ spares */

/*
 * A never-used block a thread took from the list, smaller than a cache
 * line: the blocks after it in its line come with it, tagged as on a
 * stack, onto the chain of the thread's spare blocks, tc->filling (point
 * 7 of the design).
 */
static void line_spares(struct pool *pool, struct thread_cache *tc, char *block)
{
	char *spare[POOL_CACHE_LINE / POOL_MIN_BLOCK_SIZE];

	if (pool->block_shift >= POOL_CACHE_LINE_SHIFT)
		return;
	/* The region's start need not be a line's: count from the address. */
	size_t after = POOL_CACHE_LINE - (uintptr_t)block % POOL_CACHE_LINE;
	size_t rest = (after >> pool->block_shift) - 1;
	size_t index = region_slot(pool, block);
	size_t n = rest == 0 ? 0 : list_take_line(pool, index, spare, rest);
	if (n == 0)
		return;
	atomic_fetch_add_explicit(&pool->depot->spared, n,
	                          memory_order_relaxed);
	/* Only this thread puts blocks there; others may take them all. */
	char *chain = (char *)atomic_exchange_explicit(&tc->filling, 0,
	                                               memory_order_acquire);
	for (size_t i = n; i-- > 0;) {
		/* Never used: handed out (list_take_line()) and not tagged. */
		int error = locked_tag(pool, spare[i], index + 1 + i);
		POOL_ASSERT(error == 0);
		(void)error;
		block_word_store(spare[i], 0,
		                 (uintptr_t)chain ^
		                     link_key_from(pool->secret, spare[i]));
		chain = spare[i];
	}
	owned_add(&tc->counts.counters[COUNT_STACK_PUSHES], n);
	atomic_store_explicit(&tc->filling, (uintptr_t)chain,
	                      memory_order_release);
}

/* The thread's own spares (or the magazine it was filling) as its empty
 * stack; returns whether it got any block. */
static bool spares_adopt(struct pool *pool, struct thread_cache *tc,
                         struct thread_stack *stack)
{
	char *chain = (char *)atomic_exchange_explicit(&tc->filling, 0,
	                                               memory_order_acquire);
	return chain != NULL && filling_adopt(pool, stack, chain);
}

/* The pool's cache_retire (cache.c): the exiting thread's stack back to
 * the list.  A corrupted link ends it unreported: this runs under
 * caches_lock, which a handler calling back into the library would wait
 * for forever. */
static void locked_cache_retire(struct pool *pool, struct thread_cache *tc)
{
	stack_give_back(pool, &tc->stack, SIZE_MAX, false);
	struct thread_stack filling = {.head = (char *)atomic_exchange_explicit(
	                                   &tc->filling, 0, memory_order_acquire)};
	stack_give_back(pool, &filling, pool->block_count, false);
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
		return locked_untag(pool, list_alloc_slow(pool, fresh, 0));
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
		/* Its spares come first (point 7 of the design), then what
		 * threads that only free gave back (point 6). */
		if (stack->head == NULL && (spares_adopt(pool, tc, stack) ||
		                            depot_take(pool, stack))) {
			block = locked_pop(pool);
			if (block != NULL)
				return block;
		}
	}
	/* One block from the list, never a batch: the list's blocks stay
	 * available to every thread (point 1 of the design; point 7 for the
	 * rest of a never-used block's cache line).  The head of
	 * the list, the never-used blocks, a chunk a trim gave back, and the
	 * reports of a corrupted list are list.c's. */
	void *block = locked_untag(pool, list_alloc_slow(pool, fresh, 0));
	if (block != NULL) {
		if (*fresh && tc != NULL)
			line_spares(pool, tc, block);
		return block;
	}
	/* The pool is dry: a magazine that a thread which only frees is
	 * filling, or another thread's spares, if there are any (points 6
	 * and 7 of the design).  The thread takes one block; the rest
	 * become its spares, which the next thread that finds the pool dry
	 * may take in turn. */
	char *chain = NULL;
	struct thread_stack *stack = &hint_of(pool)->stack;
	if (tc != NULL && cache_find(pool, filling_take, &chain) &&
	    filling_adopt(pool, stack, chain)) {
		block = locked_pop(pool);
		if (stack->head != NULL) {
			/* Empty: its own went first, and only it fills it. */
			POOL_ASSERT(
			    atomic_load_explicit(&tc->filling,
			                         memory_order_relaxed) == 0);
			atomic_store_explicit(&tc->filling,
			                      (uintptr_t)stack->head,
			                      memory_order_release);
			*stack = (struct thread_stack){.limit = stack->limit};
		}
	}
	return block;
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
		/* A thread that only frees fills magazines (point 6 of the
		 * design). */
		if (stack->limit == 0) {
			if (tc->frees_alone <= LOCKED_FREES_ALONE)
				tc->frees_alone++;
			if (tc->frees_alone > LOCKED_FREES_ALONE)
				return filling_push(pool, tc, block, index);
		}
	}
	/* One that may allocate yet, or one without a cache: the list.  The
	 * tag decides between this free and a racing one as it does for a
	 * stack's (point 2 of the design), and stays on the list with the
	 * block. */
	int error = locked_tag(pool, block, index);
	if (error)
		return error;
	lock_acquire(&pool->lock);
	error = list_free(pool, block, index, 0);
	lock_release(&pool->lock);
	return error;
}

bool locked_block_is_live(struct pool *pool, size_t index)
{
	return list_block_is_live(pool, index) &&
	       !block_on_stack(pool, region_block(pool, index));
}

void locked_stats(struct pool *pool, pool_stats_t *out)
{
	uint64_t sums[COUNT_KINDS];

	list_stats(pool, out);
	cache_sum_counters(pool, sums);
	/* The blocks on stacks: those freed onto them less those that left
	 * them (point 3 of the design). */
	uint64_t left =
	    sums[COUNT_STACK_POPS] +
	    atomic_load_explicit(&pool->depot->returned, memory_order_relaxed);
	uint64_t stacked = sums[COUNT_STACK_PUSHES] >= left
	                       ? sums[COUNT_STACK_PUSHES] - left
	                       : 0;
	/* The spares the list handed out are no allocations (point 7);
	 * a snapshot taken while a thread takes some may see them counted
	 * here before the list's count. */
	uint64_t spared =
	    atomic_load_explicit(&pool->depot->spared, memory_order_relaxed);
	uint64_t allocs = out->allocs + sums[COUNT_STACK_POPS];
	out->allocs = allocs >= spared ? allocs - spared : 0;
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
	/* Then the depot's magazines, and those being filled. */
	depot_give_back(pool);
	char *chain = NULL;
	while (cache_find(pool, filling_take, &chain)) {
		struct thread_stack filling = {.head = chain};
		stack_give_back(pool, &filling, pool->block_count, true);
	}
	return list_trim(pool);
}

int locked_pool_init(struct pool *pool)
{
	return cache_pool_init(pool, locked_cache_retire);
}
