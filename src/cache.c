/*
 * The thread caches of POOL_PER_THREAD pools: one per thread and pool,
 * made at the thread's first call on the pool, found through the thread's
 * hints without a lookup, and given up at thread exit (the pool's mode
 * gives back what the cache holds: see span.c) or orphaned by
 * pool_destroy().  Also the counters each cache keeps of its own
 * thread's calls, which pool_stats() sums.
 *
 * SPDX-License-Identifier: MIT
 */
#include "cache.h"

#include <errno.h>

/* ------------------------------------------------------------ data */

__thread struct thread_hint thread_hints[HINT_SLOTS]
    __attribute__((tls_model("initial-exec")));

/* The span of a thread that holds none: empty lists, never written (the
 * fast paths read it and stop at its capacity 0). */
struct span thread_no_span;

/* This thread's caches, one per pool it has used, linked by thread_next. */
static __thread struct thread_cache *thread_caches
    __attribute__((tls_model("initial-exec")));

/* Guards every pool's cache list, the caches' pool pointers and the
 * pools' retired counters, so thread exit, pool_stats() and
 * pool_destroy() can meet safely. */
static pthread_mutex_t caches_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
static int exit_key_error;

/* ------------------------------------------------------------ hints */

static void cache_fold_counters(struct pool *pool, struct thread_cache *tc)
{
	for (int i = 0; i < COUNT_KINDS; i++)
		atomic_fetch_add_explicit(
		    &pool->retired.counters[i],
		    atomic_load_explicit(&tc->counts.counters[i],
		                         memory_order_relaxed),
		    memory_order_relaxed);
}

/* A hint gives the pool it holds back to that pool's cache. */
static void hint_write_back(struct thread_hint *hint)
{
	if (hint->pool_id != 0 && hint->cache != NULL) {
		hint->cache->active = hint_span(hint);
		hint->cache->stack = hint->stack;
		hint->cache->stack.limit = 0;
	}
	hint->pool_id = 0;
	hint->cache = NULL;
	hint_clear_span(hint);
	hint->stack = (struct thread_stack){0};
}

/* Every hint of the thread written back: none names a cache any more. */
static void hint_write_back_all(void)
{
	for (unsigned i = 0; i < HINT_SLOTS; i++)
		hint_write_back(&thread_hints[i]);
}

/* The pool's hint takes a cache of the pool. */
static void hint_take(struct pool *pool, struct thread_cache *tc)
{
	struct thread_hint *hint = hint_of(pool);
	hint_write_back(hint);
	hint->pool_id = pool->id;
	hint->cache = tc;
	hint_set_span(pool, tc->active);
	hint->stack = tc->stack;
	hint->stack.limit = tc->stack_limit;
}

/* ------------------------------------------------------------ caches */

/* Called with caches_lock held, for a cache whose pool is alive and
 * whose hint is written back: the mode gives back what the cache holds,
 * then its counters join the pool's retired ones. */
static void cache_retire(struct thread_cache *tc)
{
	struct pool *pool = tc->pool;
	pool->cache_retire(pool, tc);
	cache_fold_counters(pool, tc);
	if (tc->pool_prev)
		tc->pool_prev->pool_next = tc->pool_next;
	else
		pool->caches = tc->pool_next;
	if (tc->pool_next)
		tc->pool_next->pool_prev = tc->pool_prev;
	tc->pool = NULL;
}

/* pthread key destructor: the thread is exiting. */
static void thread_exit(void *value)
{
	(void)value;
	pthread_mutex_lock(&caches_lock);
	hint_write_back_all();
	struct thread_cache *tc = thread_caches;
	while (tc) {
		struct thread_cache *next = tc->thread_next;
		if (tc->pool)
			cache_retire(tc);
		meta_free(tc, sizeof *tc);
		tc = next;
	}
	thread_caches = NULL;
	pthread_mutex_unlock(&caches_lock);
}

static void exit_key_create(void)
{
	exit_key_error = pthread_key_create(&exit_key, thread_exit);
}

/* Frees this thread's caches of destroyed pools.  Registry lock held, no
 * hint holding any of them. */
static void prune_orphans(void)
{
	struct thread_cache **link = &thread_caches;
	while (*link) {
		struct thread_cache *tc = *link;
		if (tc->pool == NULL) {
			*link = tc->thread_next;
			meta_free(tc, sizeof *tc);
		} else {
			link = &tc->thread_next;
		}
	}
}

static struct thread_cache *cache_make(struct pool *pool);

struct thread_cache *cache_of_thread(struct pool *pool)
{
	struct thread_hint *hint = hint_of(pool);
	if (hint->pool_id == pool->id)
		return hint->cache;
	for (struct thread_cache *tc = thread_caches; tc;
	     tc = tc->thread_next) {
		if (tc->pool_id == pool->id) {
			hint_take(pool, tc);
			return tc;
		}
	}
	return NULL;
}

/* This thread's cache for the pool, created on first use, held by the
 * hint; NULL when it cannot be made (the caller falls back). */
struct thread_cache *cache_lookup(struct pool *pool)
{
	struct thread_cache *tc = cache_of_thread(pool);
	if (tc != NULL)
		return tc;

	/* Making a cache maps memory and may fail: errno is kept, since a
	 * pool_free() that makes one (a thread's first call) changes none,
	 * and an allocation that then falls back succeeds. */
	int saved = errno;
	tc = cache_make(pool);
	errno = saved;
	return tc;
}

/* cache_lookup() when the thread has no cache for the pool yet. */
static struct thread_cache *cache_make(struct pool *pool)
{
	pthread_once(&exit_key_once, exit_key_create);
	if (exit_key_error)
		return NULL;
	struct thread_cache *tc = meta_alloc(sizeof *tc);
	if (tc == NULL)
		return NULL;
	tc->pool = pool;
	tc->pool_id = pool->id;
	tc->stack_limit = pool->mode == POOL_PER_THREAD ? pool->stack_limit : 0;

	hint_write_back_all();
	pthread_mutex_lock(&caches_lock);
	prune_orphans();
	tc->pool_next = pool->caches;
	if (pool->caches)
		pool->caches->pool_prev = tc;
	pool->caches = tc;
	tc->thread_next = thread_caches;
	thread_caches = tc;
	pthread_mutex_unlock(&caches_lock);

	/* Any non-NULL value makes the destructor run at thread exit. */
	pthread_setspecific(exit_key, tc);
	hint_take(pool, tc);
	return tc;
}

/* ------------------------------------------------------------ internal API */

/* A failed pool_malloc_bulk() took n blocks and freed them again: they
 * are counted no more.  The thread's own counter, which thread_stats()
 * takes off the spans' counts of allocations. */
void thread_uncount(struct pool *pool, size_t n)
{
	struct thread_cache *tc = cache_get(pool);
	if (tc != NULL && n != 0)
		owned_add(&tc->counts.counters[COUNT_TAKEN_BACK], n);
}

void thread_fork_prepare(void)
{
	pthread_mutex_lock(&caches_lock);
}

void thread_fork_release(void)
{
	pthread_mutex_unlock(&caches_lock);
}

int cache_pool_init(struct pool *pool,
                    void (*retire)(struct pool *, struct thread_cache *))
{
	pthread_once(&exit_key_once, exit_key_create);
	if (exit_key_error)
		return EAGAIN;
#ifdef HINT_BY_OFFSET
	/* The slot by the pool's number, as the array would index it: a
	 * set's classes, numbered in a row, each get their own. */
	intptr_t offset = (char *)&thread_hints[pool->id & (HINT_SLOTS - 1)] -
	                  (char *)__builtin_thread_pointer();
	/* Static TLS lies within a few pages of the thread pointer. */
	if (offset != (int32_t)offset)
		return ENOMEM;
	pool->hint_offset = (int32_t)offset;
#endif
	pool->stack_limit =
	    stack_limit_of(pool->block_shift, pool->block_count,
	                   LOCKED_STACK_MOST);
	pool->cache_retire = retire;
	return 0;
}

void cache_pool_destroy(struct pool *pool)
{
	/* The hint may name this pool's cache, which is about to go. */
	struct thread_hint *hint = hint_of(pool);
	if (hint->pool_id == pool->id) {
		hint->pool_id = 0;
		hint->cache = NULL;
		hint_clear_span(hint);
		hint->stack = (struct thread_stack){0};
	}
	pthread_mutex_lock(&caches_lock);
	/* Caches of other threads become orphans: their threads free them
	 * at exit or at their next lookup, without touching the pool. */
	for (struct thread_cache *tc = pool->caches; tc; tc = tc->pool_next)
		tc->pool = NULL;
	pool->caches = NULL;
	prune_orphans();
	pthread_mutex_unlock(&caches_lock);
}

bool cache_find(struct pool *pool,
                bool (*fn)(struct thread_cache *tc, void *arg), void *arg)
{
	bool found = false;
	pthread_mutex_lock(&caches_lock);
	for (struct thread_cache *tc = pool->caches; tc && !found;
	     tc = tc->pool_next)
		found = fn(tc, arg);
	pthread_mutex_unlock(&caches_lock);
	return found;
}

void thread_count_fallback(struct pool *pool, bool is_free)
{
	enum thread_counter which =
	    is_free ? COUNT_FALLBACK_FREES : COUNT_FALLBACK_ALLOCS;
	struct thread_cache *tc = cache_get(pool);
	if (tc != NULL) {
		/* Written by this thread only. */
		owned_increment(&tc->counts.counters[which]);
	} else {
		atomic_fetch_add_explicit(&pool->retired.counters[which], 1,
		                          memory_order_relaxed);
	}
}


/* The counters of every cache of the pool, and of those retired, summed
 * into sums[COUNT_KINDS]; exact when no thread is inside a call. */
void cache_sum_counters(struct pool *pool, uint64_t *sums)
{
	/* The retired counters are read under the lock that folds an exiting
	 * thread's counters into them: read outside it, a thread that exits
	 * between the two reads would be counted twice, or not at all. */
	pthread_mutex_lock(&caches_lock);
	for (int i = 0; i < COUNT_KINDS; i++)
		sums[i] = atomic_load_explicit(&pool->retired.counters[i],
		                               memory_order_relaxed);
	for (struct thread_cache *tc = pool->caches; tc; tc = tc->pool_next)
		for (int i = 0; i < COUNT_KINDS; i++)
			sums[i] += atomic_load_explicit(&tc->counts.counters[i],
			                                memory_order_relaxed);
	pthread_mutex_unlock(&caches_lock);
}
