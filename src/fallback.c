/*
 * The system allocator behind a pool: requests the pool cannot serve (too
 * big, or made while the pool is exhausted) go to malloc()/calloc(), and
 * pool_free() hands pointers from outside the region back to free().
 * Both are counted: per thread in POOL_PER_THREAD mode, so a fallback
 * storm from many threads does not meet on one cache line.
 *
 * SPDX-License-Identifier: MIT
 */
#include "thread.h"

#include <errno.h>
#include <stdlib.h>

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

/* ------------------------------------------------------------ internal API */

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

void fallback_free(struct pool *pool, void *ptr)
{
	free(ptr);
	count_fallback(pool, true);
}
