/*
 * The thread caches and hints of POOL_PER_THREAD pools (cache.c): a
 * thread's hint finds its cache for a pool without a lookup, and holds
 * its active span and its stack where the fast paths read them.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SHIFTPOOL_CACHE_H
#define SHIFTPOOL_CACHE_H

#include "internal.h"

/*
 * What this thread needs of the pool it used last, found without a
 * lookup: its cache (the owner the free path compares a span's owner
 * with), its active span, and where that span's blocks lie.  pool_id is
 * unique per pool_init() in the process, so a destroyed pool whose address
 * is reused never matches.  While the hint holds a pool, span is that
 * pool's cache's active span (written back to the cache when the hint
 * moves on); a thread that holds no span points span at thread_no_span,
 * whose lists are empty, and has capacity 0, so the fast paths need no
 * test of their own for it.  first and capacity are the span's, copied
 * where the fast paths find them without another load.
 */
struct thread_hint {
	uint64_t pool_id;
	struct span *span;
	uintptr_t first;   /* the address of the span's first block */
	uint64_t capacity; /* the span's blocks; 0 when the thread has none */
	struct thread_cache *cache;
	/* the thread's stack of free blocks of the pool */
	struct thread_stack stack;
};

_Static_assert(sizeof(struct thread_hint) == sizeof(struct shiftpool_hint_) &&
                   offsetof(struct thread_hint, pool_id) ==
                       offsetof(struct shiftpool_hint_, pool_id) &&
                   offsetof(struct thread_hint, span) ==
                       offsetof(struct shiftpool_hint_, span) &&
                   offsetof(struct thread_hint, first) ==
                       offsetof(struct shiftpool_hint_, first) &&
                   offsetof(struct thread_hint, capacity) ==
                       offsetof(struct shiftpool_hint_, capacity) &&
                   offsetof(struct thread_hint, cache) ==
                       offsetof(struct shiftpool_hint_, cache) &&
                   offsetof(struct thread_hint, stack.head) ==
                       offsetof(struct shiftpool_hint_, stack) &&
                   offsetof(struct thread_hint, stack.last) ==
                       offsetof(struct shiftpool_hint_, stack_last) &&
                   offsetof(struct thread_hint, stack.count) ==
                       offsetof(struct shiftpool_hint_, stack_count) &&
                   offsetof(struct thread_hint, stack.limit) ==
                       offsetof(struct shiftpool_hint_, stack_limit),
               "struct thread_hint is laid out as the header says");

/*
 * A thread's hints, one slot per pool by the pool's number: pools whose
 * numbers differ in the low bits (a set's classes, numbered in a row) each
 * keep their own, so a thread that goes from class to class stays on the
 * fast paths.  Pools that share a slot take it from each other through
 * the slow path.
 */
#define HINT_SLOTS 16

extern __thread struct thread_hint thread_hints[HINT_SLOTS]
    __attribute__((tls_model("initial-exec")));

/*
 * The calling thread's hint for the pool.  The hints are initial-exec
 * TLS: they lie at the same offset from the thread pointer in every
 * thread, so a pool keeps that offset for its slot (hint_offset, set by
 * thread_pool_init()) and the fast paths find their hint with one add,
 * where indexing the array costs a load of its offset, a mask and two
 * address computations.
 */
#ifdef HAVE_BUILTIN_THREAD_POINTER
#define HINT_BY_OFFSET 1
#endif

POOL_INLINE struct thread_hint *hint_of(const struct pool *pool)
{
#ifdef HINT_BY_OFFSET
	return (struct thread_hint *)((char *)__builtin_thread_pointer() +
	                              pool->hint_offset);
#else
	return &thread_hints[pool->id & (HINT_SLOTS - 1)];
#endif
}
extern struct span thread_no_span;

/* The public header's view of the thread's hint. */
POOL_INLINE struct shiftpool_hint_ *fast_hint_of(const struct pool *pool)
{
	return (struct shiftpool_hint_ *)(void *)hint_of(pool);
}

/* The thread's active span of the pool a hint holds, or NULL. */
POOL_INLINE struct span *hint_span(const struct thread_hint *hint)
{
	return hint->span == &thread_no_span ? NULL : hint->span;
}

/* The thread has no active span.  It is kept apart from hint_set_span(),
 * so that no caller passes a NULL pool that only a branch on span keeps
 * unused. */
POOL_INLINE void hint_clear_span(struct thread_hint *hint)
{
	hint->span = &thread_no_span;
	hint->first = 0;
	hint->capacity = 0;
}

/* Makes span (or none, for NULL) the thread's active span; the hint holds
 * the pool. */
POOL_INLINE void hint_set_span(struct pool *pool, struct span *span)
{
	struct thread_hint *hint = hint_of(pool);
	if (span == NULL) {
		hint_clear_span(hint);
		return;
	}
	hint->span = span;
	hint->first = (uintptr_t)region_block(
	    pool, (size_t)(span - pool->spans) << pool->span_shift);
	hint->capacity = span->capacity;
}

/* The thread's cache for the pool, then held by the pool's hint, or NULL
 * when the thread has none: never made. */
struct thread_cache *cache_of_thread(struct pool *pool);
/* The thread's cache for the pool when its hint holds another pool:
 * found in the thread's list, or made. */
POOL_NOINLINE struct thread_cache *cache_lookup(struct pool *pool);

/* This thread's cache for the pool, made on first use and then held by
 * the pool's hint; NULL when it cannot be made (the caller falls back). */
POOL_INLINE struct thread_cache *cache_get(struct pool *pool)
{
	struct thread_hint *hint = hint_of(pool);
	if (likely(hint->pool_id == pool->id))
		return hint->cache;
	return cache_lookup(pool);
}
/* Sets up a pool's hint slot and stack limit; retire is what the pool's
 * mode does with a cache whose thread exits (under caches_lock, the pool
 * alive, the hint written back).  Returns 0 or an errno value. */
int cache_pool_init(struct pool *pool,
                    void (*retire)(struct pool *, struct thread_cache *));
/* pool_destroy(): the pool's caches become orphans, which their threads
 * free without touching the pool. */
void cache_pool_destroy(struct pool *pool);
/* Calls fn on the pool's caches, under caches_lock, until it returns
 * true; returns whether one did.  fn must not call the library. */
bool cache_find(struct pool *pool,
                bool (*fn)(struct thread_cache *tc, void *arg), void *arg);
/* The counters of the pool's caches, live and retired, summed. */
void cache_sum_counters(struct pool *pool, uint64_t *sums);
/* A failed pool_malloc_bulk() took n blocks and freed them again: they
 * are counted no more. */
void thread_uncount(struct pool *pool, size_t n);
/* Counts a fallback allocation or free for the calling thread. */
void thread_count_fallback(struct pool *pool, bool is_free);
/* fork(): take and give back caches_lock, which guards the thread caches
 * of every pool. */
void thread_fork_prepare(void);
void thread_fork_release(void);

#endif /* SHIFTPOOL_CACHE_H */
