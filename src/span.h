/*
 * POOL_PER_THREAD: the pieces of the fast paths, inline.  The design, the
 * slow paths and everything else are in span.c; read its header comment
 * first.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SHIFTPOOL_THREAD_H
#define SHIFTPOOL_THREAD_H

#include "cache.h"
#include "hooks.h"

/* The index in the active span of the block at ptr, or a value >=
 * capacity when ptr is no block start of it (as region_slot()). */
POOL_INLINE uint64_t hint_rel(const struct pool *pool, const void *ptr)
{
	return slot_from((const char *)hint_of(pool)->first, pool->block_shift,
	                 ptr);
}

/* The index of a span's first block in the region, and a block of the
 * span by its index in it. */
POOL_INLINE size_t span_first_block(const struct pool *pool, const struct span *span)
{
	return (size_t)(span - pool->spans) << pool->span_shift;
}

POOL_INLINE void *span_block(const struct pool *pool, const struct span *span,
                        uint64_t rel)
{
	return region_block(pool, span_first_block(pool, span) + rel);
}

POOL_INLINE bool span_out(struct span *span, uint64_t rel)
{
	return shared_test(span->out, rel);
}

POOL_INLINE bool span_claimed(struct span *span, uint64_t rel)
{
	return shared_test(span->claim, rel);
}

/* The available stack (span.c): a span given up with free blocks, taken
 * by any thread; and the move of a span's remote frees to its local list,
 * by the thread that holds it.  span-pool.c's trim uses them too. */
struct span *available_pop(struct pool *pool);
void available_push(struct pool *pool, struct span *span);
size_t span_drain(struct pool *pool, struct span *span);
/* An abandoned span that a claim came into: on the available stack, by
 * whoever clears its mark (span.c). */
void span_publish(struct pool *pool, struct span *span);

/* span.c's own, which span-free.c's slow frees use too: who owns a span
 * (point 10 of the design), a span onto a list of its owner, a free block
 * back onto its span's list (with the list moves a local free makes), and
 * the thread's stack given back to the spans, n blocks of it or all of one
 * span's. */
POOL_INLINE uintptr_t span_owner(struct span *span)
{
	return atomic_load_explicit(&span->owner, memory_order_relaxed);
}
void span_set_owner(struct span *span, uintptr_t owner);
void list_add(struct pool *pool, struct span_list *list, struct span *span);
void span_take_back(struct pool *pool, struct thread_cache *tc,
                    struct span *span, char *block);
/* The span's blocks handed out: its out bits set (span.c). */
uint32_t span_handed_out(const struct span *span);
void stack_flush(struct pool *pool, struct thread_cache *tc, uint32_t n);
void stack_purge(struct pool *pool, struct span *span, const char *function);

/* thread_pop() under Valgrind, where free blocks are inaccessible: the
 * head's link opened for the pop when the head is a free block. */
POOL_COLD void *thread_pop_opened(struct pool *pool);

/*
 * pool_malloc/pool_calloc's fast path: the head of this thread's active
 * span's local list (the public header's shiftpool_span_pop_(), which
 * programs may inline too).  NULL when the thread has no cache for the
 * pool yet, no span, or nothing the fast path may take (an empty list, a
 * link to refuse, a block still claimed by a remote free):
 * thread_alloc_slow() then starts over with a full lookup.
 */
POOL_INLINE void *thread_pop(struct pool *pool, unsigned hooks)
{
	if (unlikely(hooks & HOOK_VALGRIND))
		return thread_pop_opened(pool);
	return shiftpool_span_pop_(fast_of(pool), fast_hint_of(pool));
}

/*
 * pool_free's fast path: a block of any span this thread owns goes on
 * the thread's stack, with plain loads and stores.  Returns 0
 * (freed), a pool_error (nothing changed then), or -1 when the pointer
 * needs the slow path: none of the thread's spans' blocks, outside the
 * region, a span on the thread's full list, or a span the free would
 * leave wholly free.
 */
POOL_INLINE int thread_push(struct pool *pool, void *block, unsigned hooks)
{
	int error =
	    shiftpool_span_push_(fast_of(pool), fast_hint_of(pool), block);
	if (likely(error == 0))
		hooks_block_in(pool, block, hooks);
	return error;
}

/* ------------------------------------------------------------ span.c */

/* thread_pop_many()'s run from the head of the active span's local
 * list. */
POOL_INLINE size_t thread_pop_list(struct pool *pool,
                                   const struct thread_hint *hint, size_t n,
                                   void **out)
{
	struct span *span = hint->span;
	const uintptr_t first = hint->first;
	const uint64_t capacity = hint->capacity;
	const unsigned shift = pool->block_shift;
	const uintptr_t secret = pool->secret;
	char *block = span->local, *last = span->last;
	struct word_cache outs;
	size_t got = 0;

	word_cache_init(&outs, (uint64_t *)span->out);
	while (got < n) {
		uint64_t rel = slot_from((const char *)first, shift, block);
		bool was;
		if (unlikely(rel >= capacity))
			break;
		uint64_t *word = word_cache_at(&outs, rel);
		if (unlikely(word_test(
		        *word | atomic_load_explicit(&span->claim[rel >> 6],
		                                     memory_order_relaxed),
		        rel)))
			break;
		*word = word_set(*word, rel, &was);
		out[got++] = last = block;
		block = (char *)(uintptr_t)(block_word_load(block, 0) ^
		                            link_key_from(secret, block));
	}
	word_cache_flush(&outs);
	if (got == 0)
		return 0;
	span->local = block;
	span->last = last;
	span->used = (uint16_t)(span->used + got);
	owned_add(&span->allocs, got);
	return got;
}

/*
 * thread_pop_many()'s run from the thread's stack: the blocks
 * shiftpool_span_pop_() would take one by one, up to the first it would
 * refuse, which the caller's slow path decides.
 */
POOL_INLINE size_t thread_pop_stack(struct pool *pool, size_t n, void **out)
{
	struct shiftpool_hint_ *hint = fast_hint_of(pool);
	size_t got = 0;

	while (got < n && hint->stack != NULL) {
		void *block = shiftpool_span_pop_(fast_of(pool), hint);
		if (block == NULL)
			break;
		out[got++] = block;
	}
	return got;
}

/*
 * The bulk calls' loops: what thread_pop() and thread_push() do, for up
 * to n blocks of the thread's stack, then of its active span (pop), or
 * of its spans (push), for unhooked pools.  thread_pop_many() returns
 * how many it took; thread_push_many() how many it freed before the
 * first pointer it left (another span's block, outside the region,
 * misuse), for the caller to free the slow way.
 */
POOL_INLINE size_t thread_pop_many(struct pool *pool, size_t n, void **out)
{
	struct thread_hint *hint = hint_of(pool);
	size_t got = 0;

	if (unlikely(hint->pool_id != pool->id))
		return 0;
	/* The blocks the thread freed last first, as pool_malloc() takes
	 * them: the span's list holds none of them, and a batch that took
	 * only from the list would find it empty after a batch was freed. */
	if (hint->stack.head != NULL) {
		got = thread_pop_stack(pool, n, out);
		if (got == n || hint->stack.head != NULL)
			return got; /* all, or a block the slow path decides */
	}
	/* A thread with no span writes nothing: thread_no_span is shared. */
	if (unlikely(hint->capacity == 0))
		return got;
	return got + thread_pop_list(pool, hint, n - got, out + got);
}

/* Each block as thread_push() frees it: into whichever span of the thread
 * it belongs to. */
POOL_INLINE size_t thread_push_many(struct pool *pool, size_t n,
                                    void *const *ptrs)
{
	struct shiftpool_hint_ *hint = fast_hint_of(pool);
	size_t done = 0;

	for (; done < n; done++) {
		if (shiftpool_span_push_(fast_of(pool), hint, ptrs[done]) != 0)
			break;
		hooks_block_in(pool, ptrs[done], 0);
	}
	return done;
}

/* pool_malloc/pool_calloc when thread_pop() missed because the active
 * span's local list is empty, for an unhooked pool: the next never-used
 * block of the span, the common case that needs no more of the slow path
 * below (a span's first use hands out each of its blocks so), or NULL. */
void *thread_pop_fresh(struct pool *pool);

/* pool_malloc/pool_calloc when thread_pop() missed: the thread's cache is
 * looked up, then its span, another span.  NULL when the pool has nothing
 * this thread can have (the caller falls back); *fresh: never used. */
POOL_NOINLINE void *thread_alloc_slow(struct pool *pool, bool *fresh,
                                      unsigned hooks);
/*
 * A remote free (point 5 of span.c's design): the block is claimed, one
 * atomic OR of its claim bit, and that is the whole free; the span's owner
 * finds it among the claims when it drains.  A block not handed out, or
 * claimed already, is a double free, and nothing changes.  The hooks see
 * the block freed before the claim makes it the owner's to hand out again.
 * A claim into an abandoned span publishes it.
 */
POOL_INLINE int span_free_remote(struct pool *pool, struct span *span,
                                 uint32_t rel, void *block, unsigned hooks)
{
	if (!span_out(span, rel) || span_claimed(span, rel))
		return POOL_ERROR_DOUBLE_FREE;
	hooks_block_in(pool, block, hooks);
	if (atomic_fetch_or_explicit(&span->claim[rel >> 6], bit_mask(rel),
	                             memory_order_seq_cst) &
	    bit_mask(rel))
		return POOL_ERROR_DOUBLE_FREE;
	/* Sequentially consistent, after the claim: either this load sees
	 * the mark of an owner that abandons the span, or that owner's look
	 * at the claims after its mark sees ours (span_release()). */
	if (unlikely(atomic_load_explicit(&span->abandoned,
	                                  memory_order_seq_cst) != 0))
		span_publish(pool, span);
	return 0;
}

/* The frees the fast path and pool.c's remote free leave, out of line
 * (span-free.c): a free into a span the cache owns or may take over, by
 * a thread with no cache yet, or of a hooked pool; a remote free then. */
POOL_NOINLINE int thread_free_other(struct pool *pool, struct span *span,
                                    uint32_t rel, void *block, unsigned hooks,
                                    const char *function);

/*
 * Whether a free into the span, which thread_push() refused, is a remote
 * free, decided with no look-up: the thread's hint holds the pool, and
 * the span is neither the thread's cache's nor abandoned (which the
 * thread might take over).  Only the thread itself could make the span
 * its own meanwhile (point 10 of the design); a span abandoned meanwhile
 * takes the remote free as any abandoned span does (point 5).
 */
POOL_INLINE bool thread_free_is_remote(struct pool *pool, struct span *span)
{
	const struct thread_hint *hint = hint_of(pool);
	return likely(hint->pool_id == pool->id) &&
	       (span_owner(span) & ~OWNER_FULL) != (uintptr_t)hint->cache &&
	       atomic_load_explicit(&span->abandoned, memory_order_relaxed) ==
	           0;
}

/* Whether the block of that index is handed out now. */
bool thread_block_is_live(struct pool *pool, size_t index);
/* pool_trim(): the caller gives up its spans (span.c), then the pages of
 * the spans nobody holds and whose blocks are all free go back; returns
 * the bytes. */
void thread_give_up_own(struct pool *pool);
size_t thread_trim(struct pool *pool);
/* Sets up and tears down what the mode keeps beside the region. */
int thread_pool_init(struct pool *pool);
/* The counters of pool_stats(); exact when no thread is inside a call. */
void thread_stats(struct pool *pool, pool_stats_t *out);

#endif /* SHIFTPOOL_THREAD_H */
