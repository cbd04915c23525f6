/*
 * The public entry points: argument checks, errno, mode dispatch, and the
 * fallback to the system allocator.
 *
 * SPDX-License-Identifier: MIT
 */
#include "shared.h"
#include "thread.h"

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ data */

/* Pool ids start at 1: 0 marks an empty thread hint. */
static _Atomic uint64_t next_pool_id = 1;

/* ------------------------------------------------------------ helpers */

static unsigned block_shift_for(size_t size)
{
	unsigned shift = 4; /* POOL_MIN_BLOCK_SIZE */
	while (((size_t)1 << shift) < size)
		shift++;
	return shift;
}

/* Spans of 8 to 256 blocks, aiming at SPAN_TARGET_COUNT spans, so that a
 * thread's share is a small part of the pool. */
static unsigned span_shift_for(size_t block_count)
{
	unsigned shift = SPAN_SHIFT_MIN;
	while (shift < SPAN_SHIFT_MAX &&
	       (block_count >> (shift + 1)) >= SPAN_TARGET_COUNT)
		shift++;
	return shift;
}

POOL_COLD void shared_report_corrupted(struct pool *pool, const void *link)
{
	pool_report(pool, "pool_malloc", link, POOL_ERROR_CORRUPTED);
}

/*
 * Each mode's entry points are instances of the inline templates below with
 * the mode a constant, so every instance holds only its own mode's code and
 * the public functions dispatch with one compare and a tail call.
 */

/* A block of the shared list, or NULL when the pool has none left. */
POOL_INLINE void *block_alloc(struct pool *pool, bool *fresh, int mode)
{
	if (mode == POOL_SINGLE)
		return shared_alloc(pool, fresh);
	pthread_mutex_lock(&pool->lock);
	void *block = shared_alloc(pool, fresh);
	pthread_mutex_unlock(&pool->lock);
	return block;
}

/* Returns 0, or the pool_error found. */
POOL_INLINE int block_free(struct pool *pool, void *block, int mode)
{
	if (mode == POOL_SINGLE)
		return shared_free(pool, block);
	pthread_mutex_lock(&pool->lock);
	int error = shared_free(pool, block);
	pthread_mutex_unlock(&pool->lock);
	return error;
}

/* Whether a block start is handed out right now (for pool_realloc()). */
static bool block_is_live(struct pool *pool, size_t index)
{
	bool live;

	switch (pool->mode) {
	case POOL_SINGLE:
		return pool->allocated[index];
	case POOL_LOCKED:
		pthread_mutex_lock(&pool->lock);
		live = pool->allocated[index];
		pthread_mutex_unlock(&pool->lock);
		return live;
	default:
		return (atomic_load_explicit(&pool->block_state[index],
		                             memory_order_relaxed) &
		        1) &&
		       atomic_load_explicit(&pool->claims[index],
		                            memory_order_relaxed) == 0;
	}
}

static void count_fallback(struct pool *pool, bool is_free)
{
	if (pool->mode == POOL_PER_THREAD)
		thread_count_fallback(pool, is_free);
	else
		atomic_fetch_add_explicit(is_free ? &pool->fallback_frees
		                                  : &pool->fallback_allocs,
		                          1, memory_order_relaxed);
}

/* Serves a request the pool cannot: too big, or the pool is exhausted. */
void *fallback_alloc(struct pool *pool, size_t size, bool zero)
{
	if (pool->flags & POOL_NO_FALLBACK) {
		errno = ENOMEM;
		return NULL;
	}
	/* Size 0 still needs a unique pointer: ask for one byte. */
	if (size == 0)
		size = 1;
	void *ptr = zero ? calloc(1, size) : malloc(size);
	if (ptr == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	count_fallback(pool, false);
	return ptr;
}

POOL_COLD static void fallback_free(struct pool *pool, void *ptr)
{
	free(ptr);
	count_fallback(pool, true);
}

/* Checks a pointer inside the region; reports and returns false if it is
 * not a block start. */
POOL_INLINE bool check_block_start(struct pool *pool, const char *function,
                                   const void *ptr)
{
	if (likely(region_is_block_start(pool, ptr)))
		return true;
	pool_report(pool, function, ptr, POOL_ERROR_INVALID_POINTER);
	return false;
}


POOL_INLINE void *malloc_in(struct pool *pool, size_t size, int mode)
{
	if (likely(size <= pool->block_size)) {
		bool fresh;
		void *block = block_alloc(pool, &fresh, mode);
		if (likely(block != NULL))
			return block;
	}
	return fallback_alloc(pool, size, false);
}

POOL_INLINE void *calloc_in(struct pool *pool, size_t total, int mode)
{
	if (likely(total <= pool->block_size)) {
		bool fresh;
		void *block = block_alloc(pool, &fresh, mode);
		if (likely(block != NULL)) {
			/* A never-used block is still zero from the mapping;
			 * a recycled one needs only the requested bytes. */
			if (!fresh)
				memset(block, 0, total);
			return block;
		}
	}
	return fallback_alloc(pool, total, true);
}

POOL_INLINE void free_in(struct pool *pool, void *ptr, int mode)
{
	if (likely(region_contains(pool, ptr))) {
		if (!check_block_start(pool, "pool_free", ptr))
			return;
		int error = block_free(pool, ptr, mode);
		if (unlikely(error))
			pool_report(pool, "pool_free", ptr, error);
		return;
	}
	if (ptr != NULL)
		fallback_free(pool, ptr);
}

#define MODE_ENTRY_POINTS(name, mode)                                          \
	static __attribute__((noinline)) void *name##_malloc(                  \
	    struct pool *pool, size_t size)                                    \
	{                                                                      \
		return malloc_in(pool, size, mode);                            \
	}                                                                      \
	static __attribute__((noinline)) void *name##_calloc(                  \
	    struct pool *pool, size_t total)                                   \
	{                                                                      \
		return calloc_in(pool, total, mode);                           \
	}                                                                      \
	static __attribute__((noinline)) void name##_free(struct pool *pool,   \
	                                                  void *ptr)           \
	{                                                                      \
		free_in(pool, ptr, mode);                                      \
	}

MODE_ENTRY_POINTS(locked, POOL_LOCKED)

/* POOL_PER_THREAD has its own: its slow paths take over the fallback, so
 * that the fast paths make no call but tail calls. */
static __attribute__((noinline)) void *per_thread_malloc(struct pool *pool,
                                                         size_t size)
{
	if (likely(size <= pool->block_size))
		return thread_alloc(pool, size, false);
	return fallback_alloc(pool, size, false);
}

static __attribute__((noinline)) void *per_thread_calloc(struct pool *pool,
                                                         size_t total)
{
	if (likely(total <= pool->block_size))
		return thread_alloc(pool, total, true);
	return fallback_alloc(pool, total, true);
}

static __attribute__((noinline)) void per_thread_free(struct pool *pool,
                                                      void *ptr)
{
	if (likely(region_contains(pool, ptr))) {
		if (check_block_start(pool, "pool_free", ptr))
			thread_free(pool, ptr);
		return;
	}
	if (ptr != NULL)
		fallback_free(pool, ptr);
}

/* ------------------------------------------------------------ public API */

POOL_API pool_t *pool_init(size_t block_size, size_t block_count, int flags)
{
	int mode = flags & POOL_MODE_MASK;

	if (block_size == 0 || block_count == 0 || block_size > POOL_MAX_BLOCK_SIZE ||
	    (mode != POOL_SINGLE && mode != POOL_LOCKED &&
	     mode != POOL_PER_THREAD) ||
	    (flags & ~(POOL_MODE_MASK | POOL_OPTION_MASK))) {
		errno = EINVAL;
		return NULL;
	}
	unsigned shift = block_shift_for(block_size);
	if (block_count > SIZE_MAX >> shift) {
		errno = ENOMEM;
		return NULL;
	}

	struct pool *pool;
	if (posix_memalign((void **)&pool, POOL_CACHE_LINE, sizeof *pool) != 0) {
		errno = ENOMEM;
		return NULL;
	}
	memset(pool, 0, sizeof *pool);
	pool->block_shift = shift;
	pool->block_size = (size_t)1 << shift;
	pool->block_count = block_count;
	pool->flags = flags;
	pool->mode = mode;
	pool->span_shift = span_shift_for(block_count);

	int error = 0;
	if (mode == POOL_PER_THREAD &&
	    ((block_count - 1) >> pool->span_shift) >= UINT32_MAX - 1)
		error = ENOMEM; /* span numbers are 32-bit */
	if (!error)
		error = region_reserve(pool);
	if (!error && mode == POOL_LOCKED &&
	    pthread_mutex_init(&pool->lock, NULL) != 0)
		error = ENOMEM;
	if (!error && mode == POOL_PER_THREAD)
		error = thread_pool_init(pool);
	if (error) {
		region_release(pool);
		free(pool);
		errno = error;
		return NULL;
	}
	pool->id = atomic_fetch_add_explicit(&next_pool_id, 1,
	                                     memory_order_relaxed);
	return pool;
}

POOL_API void pool_destroy(pool_t *pool)
{
	if (pool == NULL)
		return;
	if (pool->mode == POOL_PER_THREAD)
		thread_pool_destroy(pool);
	if (pool->mode == POOL_LOCKED)
		pthread_mutex_destroy(&pool->lock);
	region_release(pool);
	free(pool);
}

POOL_API void *pool_malloc(pool_t *pool, size_t size)
{
	if (likely(pool->mode == POOL_SINGLE))
		return malloc_in(pool, size, POOL_SINGLE);
	if (pool->mode == POOL_PER_THREAD)
		return per_thread_malloc(pool, size);
	return locked_malloc(pool, size);
}

POOL_API void *pool_calloc(pool_t *pool, size_t nmemb, size_t size)
{
	size_t total;

	if (unlikely(__builtin_mul_overflow(nmemb, size, &total))) {
		errno = ENOMEM;
		return NULL;
	}
	if (likely(pool->mode == POOL_SINGLE))
		return calloc_in(pool, total, POOL_SINGLE);
	if (pool->mode == POOL_PER_THREAD)
		return per_thread_calloc(pool, total);
	return locked_calloc(pool, total);
}

POOL_API void pool_free(pool_t *pool, void *ptr)
{
	if (likely(pool->mode == POOL_SINGLE))
		free_in(pool, ptr, POOL_SINGLE);
	else if (pool->mode == POOL_PER_THREAD)
		per_thread_free(pool, ptr);
	else
		locked_free(pool, ptr);
}

POOL_API void *pool_realloc(pool_t *pool, void *ptr, size_t size)
{
	if (ptr == NULL)
		return pool_malloc(pool, size);
	if (size == 0) {
		pool_free(pool, ptr);
		return NULL;
	}

	void *moved;
	if (region_contains(pool, ptr)) {
		if (!check_block_start(pool, "pool_realloc", ptr))
			return NULL;
		if (!block_is_live(pool, region_index_of(pool, ptr))) {
			pool_report(pool, "pool_realloc", ptr,
			            POOL_ERROR_DOUBLE_FREE);
			return NULL;
		}
		if (size <= pool->block_size)
			return ptr;
		moved = fallback_alloc(pool, size, false);
		if (moved == NULL)
			return NULL;
		memcpy(moved, ptr, pool->block_size);
		pool_free(pool, ptr);
		return moved;
	}

	/* A fallback allocation: into the pool when the new size fits a
	 * block, else the system's realloc(). */
	if (size <= pool->block_size) {
		moved = pool_malloc(pool, size);
		if (moved == NULL)
			return NULL;
		size_t old = malloc_usable_size(ptr);
		memcpy(moved, ptr, old < size ? old : size);
		fallback_free(pool, ptr);
		return moved;
	}
	moved = realloc(ptr, size);
	if (moved == NULL)
		errno = ENOMEM;
	return moved;
}

POOL_API char *pool_strdup(pool_t *pool, const char *s)
{
	if (s == NULL) {
		errno = EINVAL;
		return NULL;
	}
	size_t len = strlen(s) + 1;
	char *copy = pool_malloc(pool, len);
	if (copy != NULL)
		memcpy(copy, s, len);
	return copy;
}

POOL_API int pool_stats(const pool_t *pool, pool_stats_t *out)
{
	if (pool == NULL || out == NULL) {
		errno = EINVAL;
		return -1;
	}
	struct pool *p = (struct pool *)pool;
	memset(out, 0, sizeof *out);
	out->block_size = p->block_size;
	out->block_count = p->block_count;
	out->flags = p->flags;
	if (p->mode == POOL_PER_THREAD) {
		thread_stats(p, out);
		return 0;
	}
	if (p->mode == POOL_LOCKED)
		pthread_mutex_lock(&p->lock);
	out->allocs = p->shared.allocs;
	out->frees = p->shared.frees;
	out->in_use = (size_t)(p->shared.allocs - p->shared.frees);
	/* The free list is used before the bump, so in_use reaches a new
	 * high only when it equals bump: the peak is exactly bump. */
	out->peak_in_use = p->shared.bump;
	if (p->mode == POOL_LOCKED)
		pthread_mutex_unlock(&p->lock);
	out->fallback_allocs =
	    atomic_load_explicit(&p->fallback_allocs, memory_order_relaxed);
	out->fallback_frees =
	    atomic_load_explicit(&p->fallback_frees, memory_order_relaxed);
	return 0;
}

POOL_API size_t pool_block_size(const pool_t *pool)
{
	return pool ? pool->block_size : 0;
}

POOL_API int pool_owns(const pool_t *pool, const void *ptr)
{
	return pool != NULL && region_contains(pool, ptr) &&
	       region_is_block_start(pool, ptr);
}
