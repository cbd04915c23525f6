/*
 * POOL_PER_THREAD: the pieces of the fast paths, inline.  The design, the
 * slow paths and everything else are in span.c; read its header comment
 * first.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SHIFTPOOL_THREAD_H
#define SHIFTPOOL_THREAD_H

#include "hooks.h"

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

/* The index in the active span of the block at ptr, or a value >=
 * capacity when ptr is no block start of it (as region_slot()). */
POOL_INLINE uint64_t hint_rel(const struct pool *pool, const void *ptr)
{
	return slot_from((const char *)hint_of(pool)->first, pool->block_shift,
	                 ptr);
}

/* The public header's view of the thread's hint. */
POOL_INLINE struct shiftpool_hint_ *fast_hint_of(const struct pool *pool)
{
	return (struct shiftpool_hint_ *)(void *)hint_of(pool);
}

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
 * that span's local list, with plain loads and stores.  Returns 0
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

/*
 * The bulk calls' loops: what thread_pop() and thread_push() do, for up
 * to n blocks of the thread's active span (pop) or spans (push), for
 * unhooked pools.  thread_pop_many() returns how many it took;
 * thread_push_many() how many it freed before the first pointer it left
 * (another span's block, outside the region, misuse), for the caller to
 * free the slow way.
 */
POOL_INLINE size_t thread_pop_many(struct pool *pool, size_t n, void **out)
{
	const struct thread_hint *hint = hint_of(pool);
	/* A thread with no span writes nothing: thread_no_span is shared. */
	if (unlikely(hint->pool_id != pool->id || hint->capacity == 0))
		return 0;
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

/* pool_malloc/pool_calloc when thread_pop() missed: the thread's cache is
 * looked up, then its span, another span.  NULL when the pool has nothing
 * this thread can have (the caller falls back); *fresh: never used. */
POOL_NOINLINE void *thread_alloc_slow(struct pool *pool, bool *fresh,
                                      unsigned hooks);
/* pool_free when thread_push() missed, for the block of the region of
 * that index: a lookup, then a local or a remote free.  Returns 0, or the
 * pool_error found (nothing changed then). */
POOL_NOINLINE int thread_free_slow(struct pool *pool, void *block, size_t index,
                                   unsigned hooks);
/* Whether the block of that index is handed out now. */
bool thread_block_is_live(struct pool *pool, size_t index);
/* A failed pool_malloc_bulk() took n blocks and freed them again: they
 * are counted no more. */
void thread_uncount(struct pool *pool, size_t n);
/* pool_trim(): gives back the pages of the spans nobody holds and whose
 * blocks are all free; returns the bytes. */
size_t thread_trim(struct pool *pool);
/* Sets up and tears down what the mode keeps beside the region. */
int thread_pool_init(struct pool *pool);
void thread_pool_destroy(struct pool *pool);
/* Counts a fallback allocation or free for the calling thread. */
void thread_count_fallback(struct pool *pool, bool is_free);
/* The counters of pool_stats(); exact when no thread is inside a call. */
void thread_stats(struct pool *pool, pool_stats_t *out);
/* fork(): take and give back caches_lock, which guards the thread caches
 * of every POOL_PER_THREAD pool (span.c). */
void thread_fork_prepare(void);
void thread_fork_release(void);

#endif /* SHIFTPOOL_THREAD_H */
