/*
 * The public entry points: argument checks, errno, mode dispatch, and the
 * fallback to the system allocator.
 *
 * Each mode's entry points are instances of the inline templates below with
 * the mode (and the hooks, see hooks.h) constant, so every instance holds
 * only its own code, and the public functions dispatch with a compare and
 * a tail call.  POOL_SINGLE and POOL_PER_THREAD without hooks are inlined
 * into the public functions themselves.
 *
 * SPDX-License-Identifier: MIT
 */
#include "shared.h"
#include "thread.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

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

/* Spans of 1 to 256 blocks, aiming at SPAN_TARGET_COUNT spans, so that a
 * thread's share is a small part of the pool. */
static unsigned span_shift_for(size_t block_count)
{
	unsigned shift = SPAN_SHIFT_MIN;
	while (shift < SPAN_SHIFT_MAX &&
	       (block_count >> (shift + 1)) >= SPAN_TARGET_COUNT)
		shift++;
	return shift;
}

/* A secret for the link encoding: random where the kernel gives it, else
 * mixed from what differs between processes and pools. */
static uintptr_t make_secret(const struct pool *pool)
{
	uintptr_t secret = 0;
	if (getrandom(&secret, sizeof secret, GRND_NONBLOCK) != sizeof secret) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		secret = (uintptr_t)pool ^ (uintptr_t)now.tv_nsec ^
		         ((uintptr_t)now.tv_sec << 20) ^ (uintptr_t)getpid();
		secret *= (uintptr_t)0x9e3779b97f4a7c15ull;
	}
	/* Keep the low bits clear: a decoded link must still be aligned. */
	return secret & ~(uintptr_t)(POOL_MIN_BLOCK_SIZE - 1);
}

void pool_report_corrupted(struct pool *pool, const void *link)
{
	pool_report(pool, "pool_malloc", link, POOL_ERROR_CORRUPTED);
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

void *fallback_alloc(struct pool *pool, size_t size, bool zero)
{
	if ((pool->flags & POOL_NO_FALLBACK) ||
	    (pool->fail_fallback_at && debug_fail_fallback(pool))) {
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

bool pool_block_is_live(struct pool *pool, size_t index)
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
	default: {
		uint32_t state = atomic_load_explicit(&pool->block_state[index],
		                                      memory_order_relaxed);
		return (state & STATE_OUT) &&
		       atomic_load_explicit(&pool->claims[index],
		                            memory_order_relaxed) != state;
	}
	}
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

/* ------------------------------------------------------------ templates */

void *shared_alloc_rest(struct pool *pool, bool *fresh, unsigned hooks)
{
	struct shared_list *list = &pool->shared;

	(void)hooks;
	if (list->free_list != NULL) {
		/* shared_pop() refused the head: the list is corrupted.  Drop
		 * it; the blocks on it are lost, never handed out twice. */
		void *head = list->free_list;
		list->free_list = NULL;
		pool_report_corrupted(pool, head);
	}
	if (list->bump >= pool->block_count)
		return NULL;
	size_t index = list->bump;
	void *block = region_block(pool, index);
	if (pool->allocated[index]) {
		pool_report_corrupted(pool, block);
		return NULL;
	}
	list->bump++;
	pool->allocated[index] = 1;
	list->allocs++;
	*fresh = true;
	return block;
}

/* POOL_SINGLE and POOL_LOCKED when the free list has nothing to give:
 * the never-used blocks, else the fallback. */
POOL_COLD static void *shared_alloc_slow(struct pool *pool, size_t size,
                                         bool zero, int mode, unsigned hooks)
{
	bool fresh = false;
	void *block;

	if (mode == POOL_LOCKED)
		pthread_mutex_lock(&pool->lock);
	block = shared_alloc(pool, &fresh, hooks);
	if (mode == POOL_LOCKED)
		pthread_mutex_unlock(&pool->lock);
	if (block == NULL)
		return fallback_alloc(pool, size, zero);
	return block_out(pool, block, size, zero, fresh, hooks);
}

/* Returns 0, or the pool_error found. */
POOL_INLINE int block_free(struct pool *pool, void *block, size_t index,
                           int mode, unsigned hooks)
{
	if (mode == POOL_SINGLE)
		return shared_free(pool, block, index, hooks);
	pthread_mutex_lock(&pool->lock);
	int error = shared_free(pool, block, index, hooks);
	pthread_mutex_unlock(&pool->lock);
	return error;
}

/*
 * pool_malloc (zero false) or pool_calloc (zero true) of size bytes.  The
 * fast path is the head of the free list; everything else (the never-used
 * blocks, a corrupted list, the fallback) is a tail call.
 */
POOL_INLINE void *alloc_in(struct pool *pool, size_t size, bool zero, int mode,
                           unsigned hooks)
{
	if (likely(size <= pool->block_size)) {
		if (mode == POOL_PER_THREAD)
			return thread_alloc(pool, size, zero, hooks);
		void *block;
		if (mode == POOL_LOCKED)
			pthread_mutex_lock(&pool->lock);
		block = shared_pop(pool, hooks);
		if (mode == POOL_LOCKED)
			pthread_mutex_unlock(&pool->lock);
		if (likely(block != NULL))
			return block_out(pool, block, size, zero, false, hooks);
		return shared_alloc_slow(pool, size, zero, mode, hooks);
	}
	return fallback_alloc(pool, size, zero);
}

/* pool_free of a pointer that is no block start of the region: NULL, a
 * fallback allocation, or misuse. */
POOL_COLD static void free_outside(struct pool *pool, void *ptr)
{
	if (region_contains(pool, ptr))
		check_block_start(pool, "pool_free", ptr); /* reports */
	else if (ptr != NULL)
		fallback_free(pool, ptr);
}

POOL_INLINE void free_in(struct pool *pool, void *ptr, int mode, unsigned hooks)
{
	size_t index = region_slot(pool, ptr);

	if (likely(index < pool->block_count)) {
		if (mode == POOL_PER_THREAD) {
			thread_free(pool, ptr, index, hooks);
			return;
		}
		int error = block_free(pool, ptr, index, mode, hooks);
		if (unlikely(error))
			pool_report(pool, "pool_free", ptr, error);
		return;
	}
	free_outside(pool, ptr);
}

#define NOINLINE __attribute__((noinline))

static NOINLINE void per_thread_free(struct pool *pool, void *ptr)
{
	free_in(pool, ptr, POOL_PER_THREAD, 0);
}

static NOINLINE void *locked_malloc(struct pool *pool, size_t size)
{
	return alloc_in(pool, size, false, POOL_LOCKED, 0);
}

static NOINLINE void *locked_calloc(struct pool *pool, size_t size)
{
	return alloc_in(pool, size, true, POOL_LOCKED, 0);
}

static NOINLINE void locked_free(struct pool *pool, void *ptr)
{
	free_in(pool, ptr, POOL_LOCKED, 0);
}

/* ------------------------------------------------------------ others */

/* Every mode with hooks. */

static NOINLINE void *hooked_alloc_untraced(struct pool *pool, size_t size,
                                            bool zero)
{
	unsigned hooks = pool->hooks;
	switch (pool->mode) {
	case POOL_SINGLE:
		return alloc_in(pool, size, zero, POOL_SINGLE, hooks);
	case POOL_LOCKED:
		return alloc_in(pool, size, zero, POOL_LOCKED, hooks);
	default:
		return alloc_in(pool, size, zero, POOL_PER_THREAD, hooks);
	}
}

static NOINLINE void hooked_free_untraced(struct pool *pool, void *ptr)
{
	unsigned hooks = pool->hooks;
	switch (pool->mode) {
	case POOL_SINGLE:
		free_in(pool, ptr, POOL_SINGLE, hooks);
		break;
	case POOL_LOCKED:
		free_in(pool, ptr, POOL_LOCKED, hooks);
		break;
	default:
		free_in(pool, ptr, POOL_PER_THREAD, hooks);
		break;
	}
}

/* Who served a pointer, for the trace. */
static const char *trace_source(const struct pool *pool, const void *ptr)
{
	if (ptr == NULL)
		return "none";
	return region_contains(pool, ptr) ? "pool" : "fallback";
}

static NOINLINE void *hooked_alloc(struct pool *pool, size_t size, bool zero)
{
	void *ptr = hooked_alloc_untraced(pool, size, zero);
	if (pool->hooks & HOOK_TRACE) {
		int saved = errno;
		trace_write(
		    pool, "%s pool=%llu thread=%ld size=%zu ptr=%p src=%s",
		    zero ? "calloc" : "malloc", (unsigned long long)pool->id,
		    (long)gettid(), size, ptr, trace_source(pool, ptr));
		errno = saved;
	}
	return ptr;
}

static NOINLINE void hooked_free(struct pool *pool, void *ptr)
{
	if (pool->hooks & HOOK_TRACE) {
		const char *source = trace_source(pool, ptr);
		if (ptr != NULL && region_contains(pool, ptr))
			source = !region_is_block_start(pool, ptr) ? "invalid"
			         : !pool_block_is_live(
			               pool, region_index_of(pool, ptr))
			             ? "double"
			             : "pool";
		trace_write(pool, "free pool=%llu thread=%ld ptr=%p src=%s",
		            (unsigned long long)pool->id, (long)gettid(), ptr,
		            source);
	}
	hooked_free_untraced(pool, ptr);
}

/* The public allocation and free, without a trace line: for the calls that
 * are made of them and log themselves (pool_realloc, pool_strdup). */
static void *alloc_untraced(struct pool *pool, size_t size)
{
	if (pool->dispatch == DISPATCH_SINGLE)
		return alloc_in(pool, size, false, POOL_SINGLE, 0);
	if (pool->dispatch == DISPATCH_PER_THREAD)
		return alloc_in(pool, size, false, POOL_PER_THREAD, 0);
	if (pool->dispatch == DISPATCH_LOCKED)
		return locked_malloc(pool, size);
	return hooked_alloc_untraced(pool, size, false);
}

static void free_untraced(struct pool *pool, void *ptr)
{
	if (pool->dispatch == DISPATCH_SINGLE)
		free_in(pool, ptr, POOL_SINGLE, 0);
	else if (pool->dispatch == DISPATCH_PER_THREAD)
		per_thread_free(pool, ptr);
	else
		hooked_free_untraced(pool, ptr);
}

/* ------------------------------------------------------------ public API */

POOL_API pool_t *pool_init(size_t block_size, size_t block_count, int flags)
{
	int mode = flags & POOL_MODE_MASK;

	if (block_size == 0 || block_count == 0 ||
	    block_size > POOL_MAX_BLOCK_SIZE ||
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
	if (posix_memalign((void **)&pool, POOL_CACHE_LINE, sizeof *pool) !=
	    0) {
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
	pool->secret = make_secret(pool);

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
	if (!error)
		error = fork_register(pool);
	if (error) {
		region_release(pool);
		free(pool);
		errno = error;
		return NULL;
	}
	pool->id =
	    atomic_fetch_add_explicit(&next_pool_id, 1, memory_order_relaxed);
	debug_configure(pool);
	pool->dispatch = pool->hooks           ? DISPATCH_HOOKED
	                 : mode == POOL_SINGLE ? DISPATCH_SINGLE
	                 : mode == POOL_LOCKED ? DISPATCH_LOCKED
	                                       : DISPATCH_PER_THREAD;
	return pool;
}

POOL_API void pool_destroy(pool_t *pool)
{
	if (pool == NULL)
		return;
	debug_release(pool);
	fork_unregister(pool);
	if (pool->mode == POOL_PER_THREAD)
		thread_pool_destroy(pool);
	if (pool->mode == POOL_LOCKED)
		pthread_mutex_destroy(&pool->lock);
	region_release(pool);
	free(pool);
}

POOL_API void *pool_malloc(pool_t *pool, size_t size)
{
	if (likely(pool->dispatch == DISPATCH_SINGLE))
		return alloc_in(pool, size, false, POOL_SINGLE, 0);
	if (pool->dispatch == DISPATCH_PER_THREAD)
		return alloc_in(pool, size, false, POOL_PER_THREAD, 0);
	if (pool->dispatch == DISPATCH_LOCKED)
		return locked_malloc(pool, size);
	return hooked_alloc(pool, size, false);
}

POOL_API void *pool_calloc(pool_t *pool, size_t nmemb, size_t size)
{
	size_t total;

	if (unlikely(__builtin_mul_overflow(nmemb, size, &total))) {
		errno = ENOMEM;
		return NULL;
	}
	if (likely(pool->dispatch == DISPATCH_SINGLE))
		return alloc_in(pool, total, true, POOL_SINGLE, 0);
	if (pool->dispatch == DISPATCH_PER_THREAD)
		return alloc_in(pool, total, true, POOL_PER_THREAD, 0);
	if (pool->dispatch == DISPATCH_LOCKED)
		return locked_calloc(pool, total);
	return hooked_alloc(pool, total, true);
}

POOL_API void pool_free(pool_t *pool, void *ptr)
{
	if (likely(pool->dispatch == DISPATCH_SINGLE))
		free_in(pool, ptr, POOL_SINGLE, 0);
	else if (pool->dispatch == DISPATCH_PER_THREAD)
		free_in(pool, ptr, POOL_PER_THREAD, 0);
	else if (pool->dispatch == DISPATCH_LOCKED)
		locked_free(pool, ptr);
	else
		hooked_free(pool, ptr);
}

POOL_API void *pool_realloc(pool_t *pool, void *ptr, size_t size)
{
	void *moved;

	if (ptr == NULL)
		return pool_malloc(pool, size);

	if (size == 0) {
		free_untraced(pool, ptr);
		moved = NULL;
	} else if (region_contains(pool, ptr)) {
		if (!check_block_start(pool, "pool_realloc", ptr))
			return NULL;
		if (!pool_block_is_live(pool, region_index_of(pool, ptr))) {
			pool_report(pool, "pool_realloc", ptr,
			            POOL_ERROR_DOUBLE_FREE);
			return NULL;
		}
		if (size <= pool->block_size) {
#ifdef SHIFTPOOL_ASAN
			ASAN_POISON_MEMORY_REGION(ptr, pool->block_size);
			ASAN_UNPOISON_MEMORY_REGION(ptr, size);
#endif
			moved = ptr;
		} else {
			moved = fallback_alloc(pool, size, false);
			if (moved != NULL) {
#ifdef SHIFTPOOL_ASAN
				/* The caller's size is not kept: copy the
				 * whole block, past its poisoned tail. */
				ASAN_UNPOISON_MEMORY_REGION(ptr,
				                            pool->block_size);
#endif
				memcpy(moved, ptr, pool->block_size);
				free_untraced(pool, ptr);
			}
		}
	} else if (size <= pool->block_size) {
		/* A fallback allocation moves into the pool when the new
		 * size fits a block. */
		moved = alloc_untraced(pool, size);
		if (moved != NULL) {
			size_t old = malloc_usable_size(ptr);
			memcpy(moved, ptr, old < size ? old : size);
			fallback_free(pool, ptr);
		}
	} else {
		moved = realloc(ptr, size);
		if (moved == NULL)
			errno = ENOMEM;
	}
	if (pool->hooks & HOOK_TRACE)
		trace_write(
		    pool,
		    "realloc pool=%llu thread=%ld old=%p size=%zu ptr=%p "
		    "src=%s",
		    (unsigned long long)pool->id, (long)gettid(), ptr, size,
		    moved, trace_source(pool, moved));
	return moved;
}

POOL_API char *pool_strdup(pool_t *pool, const char *s)
{
	if (s == NULL) {
		errno = EINVAL;
		return NULL;
	}
	size_t len = strlen(s) + 1;
	char *copy = alloc_untraced(pool, len);
	if (copy != NULL)
		memcpy(copy, s, len);
	if (pool->hooks & HOOK_TRACE)
		trace_write(
		    pool, "strdup pool=%llu thread=%ld size=%zu ptr=%p src=%s",
		    (unsigned long long)pool->id, (long)gettid(), len, copy,
		    trace_source(pool, copy));
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
	/* The same test as pool_free()'s fast path, so the edge cases that
	 * tests ask pool_owns() about are the ones pool_free() meets. */
	return pool != NULL && region_slot(pool, ptr) < pool->block_count;
}
