/*
 * examples/adapters/libevent-pool: libevent's allocator on a shiftpool set.
 *
 * libevent's evbuffers allocate their chains in powers of two from 1 KiB,
 * header included, so each chain fills a block of one class exactly.
 *
 * SPDX-License-Identifier: MIT
 */
#include "libevent-pool.h"

#include <event2/event.h>

/* libevent's allocation calls take no argument: the set it allocates
 * from, set once before libevent's first allocation. */
static pool_set_t *libevent_set;

static void *libevent_pool_malloc(size_t size)
{
	return pool_set_malloc(libevent_set, size);
}

static void *libevent_pool_realloc(void *ptr, size_t size)
{
	return pool_set_realloc(libevent_set, ptr, size);
}

static void libevent_pool_free(void *ptr)
{
	pool_set_free(libevent_set, ptr);
}

void libevent_pool_install(pool_set_t *set)
{
	libevent_set = set;
	event_set_mem_functions(libevent_pool_malloc, libevent_pool_realloc,
	                        libevent_pool_free);
}
