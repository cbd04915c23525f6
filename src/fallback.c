/*
 * The allocator behind a pool.  Requests that the pool cannot serve
 * (because they are too big, or because the pool is exhausted) go to its
 * fallback's malloc() or calloc(), and pointers from outside the region go
 * back to its free() and realloc().  The fallback is the C library's
 * malloc family, unless the pool was made with pool_init_with() (or is a
 * class of a set made with pool_set_init_with()).  Fallback allocations
 * and frees are both counted.  In POOL_PER_THREAD mode they are counted
 * per thread, so that a storm of fallback calls from many threads does not
 * meet on one cache line.
 *
 * SPDX-License-Identifier: MIT
 */
#include "cache.h"

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>

/* ------------------------------------------------------------ the C library */

static void *libc_malloc(size_t size, void *arg)
{
	(void)arg;
	return malloc(size);
}

static void *libc_calloc(size_t nmemb, size_t size, void *arg)
{
	(void)arg;
	return calloc(nmemb, size);
}

static void *libc_realloc(void *ptr, size_t size, void *arg)
{
	(void)arg;
	return realloc(ptr, size);
}

static void libc_free(void *ptr, void *arg)
{
	(void)arg;
	free(ptr);
}

static size_t libc_usable_size(const void *ptr, void *arg)
{
	(void)arg;
	return malloc_usable_size((void *)ptr);
}

static const pool_fallback_t libc_fallback = {
    .malloc = libc_malloc,
    .calloc = libc_calloc,
    .realloc = libc_realloc,
    .free = libc_free,
    .usable_size = libc_usable_size,
    .arg = NULL,
};

/* ------------------------------------------------------------ helpers */

static void count_fallback(struct pool *pool, bool is_free)
{
	if (pool->mode == POOL_PER_THREAD)
		thread_count_fallback(pool, is_free);
	else
		atomic_fetch_add_explicit(is_free ? &pool->fallback_frees
		                                  : &pool->fallback_allocs,
		                          1, memory_order_relaxed);
}

/* Returns whether the pool may make a fallback allocation now: it may
 * not under POOL_NO_FALLBACK, nor when the debug options make this
 * allocation fail. */
static bool fallback_allowed(struct pool *pool)
{
	return !(pool->flags & POOL_NO_FALLBACK) &&
	       !(pool->fail_fallback_at && debug_fail_fallback(pool));
}

/* ------------------------------------------------------------ internal API */

int fallback_set(struct pool *pool, const pool_fallback_t *fallback)
{
	if (fallback == NULL) {
		pool->fallback = libc_fallback;
		return 0;
	}
	if (fallback->malloc == NULL || fallback->calloc == NULL ||
	    fallback->realloc == NULL || fallback->free == NULL)
		return EINVAL;
	pool->fallback = *fallback;
	return 0;
}

void *fallback_alloc(struct pool *pool, size_t size, bool zero)
{
	if (!fallback_allowed(pool)) {
		errno = ENOMEM;
		return NULL;
	}
	/* A size of 0 still needs a unique pointer, so one byte is asked
	 * for. */
	if (size == 0)
		size = 1;
	const pool_fallback_t *fb = &pool->fallback;
	void *ptr = zero ? fb->calloc(1, size, fb->arg) : fb->malloc(size, fb->arg);
	if (ptr == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	count_fallback(pool, false);
	return ptr;
}

void *fallback_resize(struct pool *pool, void *ptr, size_t size)
{
	if (!fallback_allowed(pool)) {
		errno = ENOMEM;
		return NULL;
	}
	const pool_fallback_t *fb = &pool->fallback;
	void *moved = fb->realloc(ptr, size, fb->arg);
	if (moved == NULL)
		errno = ENOMEM;
	return moved;
}

size_t fallback_usable_size(const struct pool *pool, const void *ptr)
{
	const pool_fallback_t *fb = &pool->fallback;
	return fb->usable_size != NULL ? fb->usable_size(ptr, fb->arg) : 0;
}

void fallback_free(struct pool *pool, void *ptr)
{
	/* pool_free() keeps errno, whatever the fallback's free does. */
	int saved = errno;
	pool->fallback.free(ptr, pool->fallback.arg);
	errno = saved;
	count_fallback(pool, true);
}
