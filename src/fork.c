/*
 * fork() while other threads use a pool: the child has only the forking
 * thread, so any lock another thread held at the fork would stay locked in
 * the child forever.  The prepare handler takes every lock the library
 * uses (in one order: the pool list, each POOL_LOCKED pool's mutex, the
 * per-thread registry, the trace), so the fork happens at a moment when no
 * other thread is inside a locked section, and both sides release them
 * afterwards.
 *
 * Lock-free state needs no such care: a POOL_PER_THREAD span that another
 * thread held at the fork stays with that thread's cache in the child,
 * where nobody uses it; the child allocates from the other spans.
 *
 * SPDX-License-Identifier: MIT
 */
#include "thread.h"

#include <errno.h>

/* ------------------------------------------------------------ data */

static pthread_mutex_t all_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pool *all_pools; /* guarded by all_lock */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static int atfork_error;

/* ------------------------------------------------------------ handlers */

static void fork_prepare(void)
{
	pthread_mutex_lock(&all_lock);
	for (struct pool *pool = all_pools; pool; pool = pool->all_next)
		if (pool->mode == POOL_LOCKED)
			pthread_mutex_lock(&pool->lock);
	thread_fork_prepare();
	trace_fork_prepare();
}

/* In the parent, and in the child, where the forking thread holds every
 * lock and may release them. */
static void fork_release(void)
{
	thread_fork_release();
	for (struct pool *pool = all_pools; pool; pool = pool->all_next)
		if (pool->mode == POOL_LOCKED)
			pthread_mutex_unlock(&pool->lock);
	pthread_mutex_unlock(&all_lock);
}

static void fork_parent(void)
{
	trace_fork_parent();
	fork_release();
}

static void fork_child(void)
{
	trace_fork_child();
	fork_release();
}

static void atfork_install(void)
{
	atfork_error = pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* ------------------------------------------------------------ internal API */

int fork_register(struct pool *pool)
{
	pthread_once(&atfork_once, atfork_install);
	if (atfork_error)
		return ENOMEM;
	pthread_mutex_lock(&all_lock);
	pool->all_prev = NULL;
	pool->all_next = all_pools;
	if (all_pools)
		all_pools->all_prev = pool;
	all_pools = pool;
	pthread_mutex_unlock(&all_lock);
	return 0;
}

void fork_unregister(struct pool *pool)
{
	pthread_mutex_lock(&all_lock);
	if (pool->all_prev)
		pool->all_prev->all_next = pool->all_next;
	else if (all_pools == pool)
		all_pools = pool->all_next;
	if (pool->all_next)
		pool->all_next->all_prev = pool->all_prev;
	pool->all_next = pool->all_prev = NULL;
	pthread_mutex_unlock(&all_lock);
}
