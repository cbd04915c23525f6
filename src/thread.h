/*
 * POOL_PER_THREAD: the fast paths, inline.  The design and the slow paths
 * are in thread.c; read its header comment first.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SHIFTPOOL_THREAD_H
#define SHIFTPOOL_THREAD_H

#include "hooks.h"

/* The cache this thread used last, found without a lookup.  pool_id is
 * unique per pool_init() in the process, so a destroyed pool whose address
 * is reused never matches. */
struct thread_hint {
	uint64_t pool_id;
	struct thread_cache *cache;
};

extern __thread struct thread_hint thread_hint
    __attribute__((tls_model("initial-exec")));

/* ------------------------------------------------------------ slow paths */

POOL_COLD struct thread_cache *thread_cache_lookup(struct pool *pool);
/* pool_malloc/pool_calloc when the fast path missed: the thread's cache
 * is looked up, then its span, another span, else the fallback.  size fits
 * a block. */
POOL_COLD void *thread_alloc_slow(struct pool *pool, size_t size, bool zero,
                                  unsigned hooks);
/* pool_free when the fast path missed: a lookup, then a local or a remote
 * free; reports misuse. */
POOL_COLD void thread_free_slow(struct pool *pool, void *block, unsigned hooks);

int thread_pool_init(struct pool *pool);
void thread_pool_destroy(struct pool *pool);
void thread_count_fallback(struct pool *pool, bool is_free);
void thread_stats(const struct pool *pool, pool_stats_t *out);
/* fork(): take and give back the registry lock (fork.c). */
void thread_fork_prepare(void);
void thread_fork_parent(void);

/* ------------------------------------------------------------ helpers */

/* Counters are written by their thread only: a load and a store, not an
 * atomic read-modify-write; relaxed, since pool_stats() only needs each
 * value to be one that was written. */
POOL_INLINE void counter_add(_Atomic uint64_t *counter, uint64_t n)
{
	atomic_store_explicit(
	    counter, atomic_load_explicit(counter, memory_order_relaxed) + n,
	    memory_order_relaxed);
}

POOL_INLINE struct thread_cache *thread_cache_get(struct pool *pool)
{
	if (likely(thread_hint.pool_id == pool->id))
		return thread_hint.cache;
	return thread_cache_lookup(pool);
}

/*
 * A block's state word: generation << 2 | STATE_PARKED | STATE_OUT.  The
 * generation grows by one at each free, so a claim made for one allocation
 * never matches the next.  A parked block is free but held back from the
 * local list until the drain has seen a racing remote free of it.
 */
#define STATE_OUT    0x1u
#define STATE_PARKED 0x2u

/* The state after a free: the next generation, not handed out. */
POOL_INLINE uint32_t state_freed(uint32_t state)
{
	return (state & ~(STATE_OUT | STATE_PARKED)) + 4;
}

POOL_INLINE size_t span_first_block(const struct pool *pool,
                                    const struct span *span)
{
	return (size_t)(span - pool->spans) << pool->span_shift;
}

/*
 * The fast path of span_pop(): the head of the span's local list, when it
 * can be handed out as it is.  NULL when the list is empty, or its head
 * needs span_pop() (a bad link, a block still claimed by a remote free):
 * then nothing changed.
 */
POOL_INLINE void *span_pop_local(struct pool *pool, struct span *span,
                                 unsigned hooks)
{
	void *block = span->local_free;

	if (unlikely(block == NULL))
		return NULL;
	void *next = link_load(pool, block, hooks);
	size_t index = region_index_of(pool, block);
	uint32_t state = atomic_load_explicit(&pool->block_state[index],
	                                      memory_order_relaxed);
	if (unlikely(!link_is_valid(pool, next) || (state & STATE_OUT) ||
	             atomic_load_explicit(&pool->claims[index],
	                                  memory_order_relaxed) != 0))
		return NULL;
	span->local_free = next;
	atomic_store_explicit(&pool->block_state[index], state | STATE_OUT,
	                      memory_order_relaxed);
	return block;
}

/*
 * Takes a block from a span the caller owns: the local list first (LIFO,
 * so the block is likely still in cache), then the never-used tail.
 * Returns NULL when the span has neither, or when its list is found
 * corrupted: then span->corrupt names the block, and the slow path reports
 * it.  A block still claimed by a remote free of its last life (a double
 * free raced with our own free) is parked instead: taken off the list,
 * left for the drain to reconcile.
 */
POOL_INLINE void *span_pop(struct pool *pool, struct span *span, bool *fresh,
                           unsigned hooks)
{
	void *block;
	size_t index;
	uint32_t state;

	for (;;) {
		block = span_pop_local(pool, span, hooks);
		if (likely(block != NULL)) {
			*fresh = false;
			return block;
		}
		block = span->local_free;
		*fresh = block == NULL;
		if (block != NULL) {
			/* span_pop_local() refused the head: say why. */
			void *next = link_load(pool, block, hooks);
			if (!link_is_valid(pool, next))
				goto corrupt;
			span->local_free = next;
			index = region_index_of(pool, block);
		} else {
			uint32_t bump = atomic_load_explicit(
			    &span->bump, memory_order_relaxed);
			if (bump >= span->capacity)
				return NULL;
			atomic_store_explicit(&span->bump, bump + 1,
			                      memory_order_relaxed);
			index = span_first_block(pool, span) + bump;
			block = region_block(pool, index);
		}
		/* Only this thread writes the state of its span's blocks;
		 * other threads read it (relaxed) when they free one, see
		 * thread.c. */
		state = atomic_load_explicit(&pool->block_state[index],
		                             memory_order_relaxed);
		if (state & STATE_OUT)
			goto corrupt;
		if (atomic_load_explicit(&pool->claims[index],
		                         memory_order_relaxed) == 0) {
			atomic_store_explicit(&pool->block_state[index],
			                      state | STATE_OUT,
			                      memory_order_relaxed);
			return block;
		}
		atomic_store_explicit(&pool->block_state[index],
		                      state | STATE_PARKED,
		                      memory_order_relaxed);
	}

corrupt:
	span->local_free = NULL;
	span->corrupt = block;
	return NULL;
}

/*
 * Frees a block of the caller's active span onto its local list: plain
 * loads and stores only.  Returns 0, or POOL_ERROR_DOUBLE_FREE (nothing
 * changed then).
 */
POOL_INLINE int span_free_local(struct pool *pool, struct thread_cache *tc,
                                struct span *span, void *block, size_t index,
                                unsigned hooks)
{
	uint32_t state = atomic_load_explicit(&pool->block_state[index],
	                                      memory_order_relaxed);
	/* Not handed out, or this very allocation already claimed by another
	 * thread's free: either way this is a second free. */
	if (unlikely(!(state & STATE_OUT) ||
	             atomic_load_explicit(&pool->claims[index],
	                                  memory_order_relaxed) == state))
		return POOL_ERROR_DOUBLE_FREE;
	atomic_store_explicit(&pool->block_state[index], state_freed(state),
	                      memory_order_relaxed);
	hooks_block_in(pool, block, hooks);
	link_store(pool, block, span->local_free, hooks);
	span->local_free = block;
	counter_add(&tc->counters.frees, 1);
	return 0;
}

/* ------------------------------------------------------------ fast paths */

/*
 * pool_malloc (zero false) and pool_calloc (zero true) of size <= block.
 * Everything but the head of the active span's local list is a tail call
 * to the slow path, which starts over with a full lookup: the span's
 * never-used blocks, parking, a corrupted list, another span.
 */
POOL_INLINE void *thread_alloc(struct pool *pool, size_t size, bool zero,
                               unsigned hooks)
{
	if (likely(thread_hint.pool_id == pool->id)) {
		struct span *span = thread_hint.cache->active;
		if (likely(span != NULL)) {
			void *block = span_pop_local(pool, span, hooks);
			if (likely(block != NULL)) {
				counter_add(&thread_hint.cache->counters.allocs,
				            1);
				return block_out(pool, block, size, zero, false,
				                 hooks);
			}
		}
	}
	return thread_alloc_slow(pool, size, zero, hooks);
}

/* pool_free of the block start of the region of that index. */
POOL_INLINE void thread_free(struct pool *pool, void *block, size_t index,
                             unsigned hooks)
{
	struct span *span = &pool->spans[index >> pool->span_shift];

	if (likely(thread_hint.pool_id == pool->id &&
	           span == thread_hint.cache->active)) {
		if (unlikely(span_free_local(pool, thread_hint.cache, span,
		                             block, index, hooks)))
			pool_report(pool, "pool_free", block,
			            POOL_ERROR_DOUBLE_FREE);
		return;
	}
	thread_free_slow(pool, block, hooks);
}

#endif /* SHIFTPOOL_THREAD_H */
