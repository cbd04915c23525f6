/*
 * POOL_PER_THREAD: the pieces of the fast paths, inline.  The design, the
 * slow paths and everything else are in thread.c; read its header comment
 * first.
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

/* Counters are written by their thread only: a load and a store, not an
 * atomic read-modify-write; relaxed, since pool_stats() only needs each
 * value to be one that was written. */
POOL_INLINE void counter_add(struct thread_counters *counts,
                             enum thread_counter which, uint64_t n)
{
	_Atomic uint64_t *counter = &counts->counters[which];
	atomic_store_explicit(
	    counter, atomic_load_explicit(counter, memory_order_relaxed) + n,
	    memory_order_relaxed);
}

POOL_INLINE size_t span_first_block(const struct pool *pool,
                                    const struct span *span)
{
	return (size_t)(span - pool->spans) << pool->span_shift;
}

/* The span a block of the region belongs to. */
POOL_INLINE struct span *span_of(const struct pool *pool, size_t index)
{
	return &pool->spans[index >> pool->span_shift];
}

/*
 * The fast path of taking a block from a span the caller owns: the head
 * of the span's local list, when it can be handed out as it is.  NULL when
 * the list is empty, or its head needs the slow path (a bad link, a block
 * still claimed by a remote free): then nothing changed.
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
	counter_add(&tc->counts, COUNT_FREES, 1);
	return 0;
}

/*
 * pool_malloc/pool_calloc's fast path: the head of this thread's active
 * span's local list.  NULL when the thread has no cache for the pool yet,
 * no active span, or nothing the fast path may take: thread_alloc_slow()
 * then starts over with a full lookup.
 */
POOL_INLINE void *thread_pop(struct pool *pool, unsigned hooks)
{
	if (likely(thread_hint.pool_id == pool->id)) {
		struct span *span = thread_hint.cache->active;
		if (likely(span != NULL)) {
			void *block = span_pop_local(pool, span, hooks);
			if (likely(block != NULL)) {
				counter_add(&thread_hint.cache->counts,
				            COUNT_ALLOCS, 1);
				return block;
			}
		}
	}
	return NULL;
}

/*
 * pool_free's fast path for the block start of that index: a block of
 * this thread's active span.  Returns 0 (freed), a pool_error, or -1 when
 * the block needs thread_free_slow().
 */
POOL_INLINE int thread_push(struct pool *pool, void *block, size_t index,
                            unsigned hooks)
{
	struct span *span = span_of(pool, index);

	if (likely(thread_hint.pool_id == pool->id &&
	           span == thread_hint.cache->active))
		return span_free_local(pool, thread_hint.cache, span, block,
		                       index, hooks);
	return -1;
}

/* ------------------------------------------------------------ thread.c */

/* pool_malloc/pool_calloc when thread_pop() missed: the thread's cache is
 * looked up, then its span, another span.  NULL when the pool has nothing
 * this thread can have (the caller falls back); *fresh: never used. */
POOL_COLD void *thread_alloc_slow(struct pool *pool, bool *fresh,
                                  unsigned hooks);
/* pool_free when thread_push() missed: a lookup, then a local or a remote
 * free.  Returns 0, or the pool_error found (nothing changed then). */
POOL_COLD int thread_free_slow(struct pool *pool, void *block, size_t index,
                               unsigned hooks);
/* Whether the block of that index is handed out now. */
bool thread_block_is_live(struct pool *pool, size_t index);
/* Sets up and tears down what the mode keeps beside the region. */
int thread_pool_init(struct pool *pool);
void thread_pool_destroy(struct pool *pool);
/* Counts a fallback allocation or free for the calling thread. */
void thread_count_fallback(struct pool *pool, bool is_free);
/* The counters of pool_stats(); exact when no thread is inside a call. */
void thread_stats(struct pool *pool, pool_stats_t *out);
/* fork(): take and give back the registry lock (fork.c). */
void thread_fork_prepare(void);
void thread_fork_release(void);

#endif /* SHIFTPOOL_THREAD_H */
