/*
 * POOL_PER_THREAD: the frees the inline fast path leaves (span.c's design,
 * points 3, 5 and 8): a full stack, a span the free leaves with nothing
 * handed out, a span the thread takes over, and remote frees.
 *
 * SPDX-License-Identifier: MIT
 */
#include "span.h"

/* ------------------------------------------------------------ frees */

/*
 * Takes over an abandoned span (nobody owns it and it is on no stack) to
 * free into it locally: it goes on the thread's partial list.  Returns
 * false if the span is not abandoned, or another thread took or published
 * it first, or the thread only frees (it would hold free blocks that the
 * allocating threads then miss).
 */
static bool span_take_over(struct pool *pool, struct thread_cache *tc,
                           struct span *span)
{
	uint64_t expected = SPAN_ABANDONED;

	/* The first remote free into an abandoned span clears the mark and
	 * publishes the span; so does a take-over. */
	if (atomic_load_explicit(&span->abandoned, memory_order_relaxed) !=
	    SPAN_ABANDONED)
		return false;
	if (hint_span(hint_of(pool)) == NULL && tc->partial.head == 0)
		return false;
	if (!atomic_compare_exchange_strong_explicit(
	        &span->abandoned, &expected, 0, memory_order_acquire,
	        memory_order_relaxed))
		return false;
	/* Acquire: we see the owner line its last owner wrote before
	 * abandoning it (a release).  It had no free block, and is now ours:
	 * the free that follows puts it on the partial list, and the drain of
	 * the next sweep takes what remote frees claimed meanwhile. */
	span_set_owner(span, (uintptr_t)tc | OWNER_FULL);
	list_add(pool, &tc->full, span);
	return true;
}

/* A free into a span the cache owns, which the fast path left: a span on
 * the full list, or one that the free leaves wholly free. */
static int span_free_local(struct pool *pool, struct thread_cache *tc,
                           struct span *span, uint32_t rel, void *block,
                           unsigned hooks, const char *function)
{
	if (span_claimed(span, rel) || !span_out(span, rel))
		return POOL_ERROR_DOUBLE_FREE;
	owned_test_and_clear(span->out, rel);
	span->used--;
	hooks_block_in(pool, block, hooks);
	/* Nothing else of the span handed out: its stacked blocks too go
	 * back, before the span is kept or given back. */
	if (span_handed_out(span) == 0 && span != hint_span(hint_of(pool)))
		stack_purge(pool, span, function);
	span_take_back(pool, tc, span, block);
	return 0;
}

/* A free into a span the cache owns, or may take over: onto the stack
 * (a full one gives half back first), or span_free_local(); a remote
 * free after all when another thread took the span over first. */
static POOL_NOINLINE int
thread_free_owned(struct pool *pool, struct thread_cache *tc, struct span *span,
                  uint32_t rel, void *block, unsigned hooks,
                  const char *function)
{
	uintptr_t owner = span_owner(span) & ~OWNER_FULL;
	if (owner == (uintptr_t)tc) {
		/* A full stack: half of it back to the spans, then the free
		 * goes on it as the fast path's would. */
		struct thread_stack *stack = &hint_of(pool)->stack;
		if (stack->count >= stack->limit)
			stack_flush(pool, tc, stack->count - stack->limit / 2);
		int error = thread_push(pool, block, hooks);
		if (error >= 0)
			return error;
		/* Refused again: a span that the free leaves with nothing
		 * handed out (or one the flush gave up). */
		owner = span_owner(span) & ~OWNER_FULL;
	}
	if (owner == (uintptr_t)tc || span_take_over(pool, tc, span))
		return span_free_local(pool, tc, span, rel, block, hooks,
		                       function);
	return span_free_remote(pool, span, rel, block, hooks);
}

int thread_free_other(struct pool *pool, struct span *span, uint32_t rel,
                      void *block, unsigned hooks, const char *function)
{
	struct thread_cache *tc = cache_get(pool);

	/* Only this thread makes a span its cache's (point 10 of the
	 * design): a span that is not is another thread's, or nobody's, and
	 * its block goes on no stack of this thread's.  An abandoned one
	 * may be taken over. */
	if (tc != NULL &&
	    ((span_owner(span) & ~OWNER_FULL) == (uintptr_t)tc ||
	     atomic_load_explicit(&span->abandoned, memory_order_relaxed) ==
	         SPAN_ABANDONED))
		return thread_free_owned(pool, tc, span, rel, block, hooks,
		                         function);
	return span_free_remote(pool, span, rel, block, hooks);
}
