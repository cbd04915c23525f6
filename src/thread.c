/*
 * POOL_PER_THREAD: lock-free per-thread spans.
 *
 * The region is cut into spans of 2^span_shift blocks; pool_free() finds a
 * block's span with one more shift.  A thread owns at most one span at a
 * time, its active span, and allocates from it with no lock and no atomic
 * read-modify-write: a local free list linked through word 0 of the free
 * blocks, then the span's never-used tail (the bump).  A thread that frees a
 * block of its active span pushes it on that local list, again with plain
 * loads and stores.  Any other free is a remote free: the block goes on the
 * span's remote list, a lock-free stack linked through word 1 of the blocks.
 *
 * Spans nobody owns sit on the pool's available stack, or are "abandoned":
 * a thread whose active span has nothing left marks it abandoned and moves
 * on; the first remote free into an abandoned span publishes it on the
 * available stack, so no capacity is stranded behind a full span.  A thread
 * that frees into an abandoned span takes it over instead (one CAS), making
 * it its active span and giving up the old one: the frees that follow into
 * it are local, so a thread that frees in another order than it allocated
 * does not pay a remote free for each block.  A thread that exits (or whose
 * pool is destroyed) gives its span back like an owner that moves on.
 *
 * Why there is no ABA:
 *  - The remote list is only ever emptied whole, by the span's owner, with
 *    one atomic exchange; nobody pops single entries, so a pusher's CAS can
 *    only fail because another push happened, and retrying is always right.
 *  - The available stack is popped by many threads, so its head carries a
 *    32-bit tag beside the span index, bumped by every push and pop; a pop
 *    that read a stale next link fails its CAS.  Spans are never unmapped
 *    while the pool lives, so reading a stale link is harmless.
 *
 * Why a double free can never hand a block out twice, even when two threads
 * free the same block at the same moment:
 *  - Every block has a state word, written only by the owner of its span:
 *    generation << 2 | parked | handed-out.  Allocation sets the low bit; a
 *    free by the owner starts the next generation, not handed out.
 *  - A remote free first claims the block: a CAS of its claim word from 0 to
 *    the state it read.  Of two remote frees of one block only one can claim
 *    it, so a block is on a remote list at most once and no list can loop.
 *  - The owner, draining its remote list, accepts a block only if the claim
 *    still equals the block's state (same generation, still handed out).  If
 *    the owner freed the block in the meantime, the generations differ: the
 *    remote free is reported and dropped.  The owner never hands out a block
 *    that carries a claim: it parks it (free, on no list) and the drain puts
 *    it back on the local list, so the block is on a list exactly once.  The
 *    owner also refuses to free an allocation that a remote free claimed.
 *  - The remote link lives in word 1 and the local link in word 0, so even
 *    a block that sits on both lists after such a race keeps both intact;
 *    a drain also stops at any link that does not name a claimed block of
 *    the span (a claim is cleared once processed, so revisits stop too).
 *
 * Memory ordering, pair by pair:
 *  - remote push (release CAS on span->remote) / drain (acquire exchange):
 *    the drainer sees the word-1 links the pushers wrote.
 *  - available push (release CAS) / pop (acquire CAS): the acquirer of a
 *    span sees the owner-line fields (local_free, bump) its last holder
 *    wrote.  An abandoning owner's CAS on span->remote is a release too, and
 *    the publishing remote free's CAS on span->remote acquires it before the
 *    push, so the chain owner -> publisher -> acquirer is ordered.
 *  - block_state and claims are read with relaxed loads: a free happens
 *    after the allocation it frees (the program passed the pointer on, which
 *    synchronises), so the state it reads is current unless the program
 *    races with itself, and then the generation check above decides.
 *
 * SPDX-License-Identifier: MIT
 */
#include "thread.h"

#include <errno.h>
#include <stdlib.h>

/* ------------------------------------------------------------ data */

__thread struct thread_hint thread_hint
    __attribute__((tls_model("initial-exec")));

/* This thread's caches, one per pool it has used, linked by thread_next. */
static __thread struct thread_cache *thread_caches
    __attribute__((tls_model("initial-exec")));

/* Guards every pool's cache list, the caches' pool pointers and the
 * pools' retired counters, so thread exit, pool_stats() and
 * pool_destroy() can meet safely. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
static int exit_key_error;

/* ------------------------------------------------------------ invariants */

#ifdef SHIFTPOOL_ASSERTIONS
/* The span invariant of internal.h, for a span the caller holds: every
 * block below bump is on the local list, handed out or parked, exactly
 * once.  Blocks on the remote list are still handed out by their state. */
static void span_check(struct pool *pool, struct span *span)
{
	size_t first = span_first_block(pool, span);
	uint32_t bump = atomic_load_explicit(&span->bump, memory_order_relaxed);
	size_t listed = 0, out = 0;

	for (void *block = span->local_free; block != NULL;
	     block = link_load(pool, block, pool->hooks)) {
		size_t index = region_slot(pool, block);
		/* A list a use after free damaged is reported when met. */
		if (index - first >= bump || listed >= bump ||
		    !link_is_valid(pool, link_load(pool, block, pool->hooks)))
			return;
		uint32_t state = atomic_load_explicit(
		    &pool->block_state[index], memory_order_relaxed);
		assert(!(state & (STATE_OUT | STATE_PARKED)));
		listed++;
	}
	for (size_t i = first; i < first + bump; i++)
		out += (atomic_load_explicit(&pool->block_state[i],
		                             memory_order_relaxed) &
		        (STATE_OUT | STATE_PARKED)) != 0;
	assert(listed + out == bump);
	assert(bump <= span->capacity);
}
#else
#define span_check(pool, span) ((void)0)
#endif

/* ------------------------------------------------------------ spans */

static struct span *available_pop(struct pool *pool)
{
	uint64_t head =
	    atomic_load_explicit(&pool->available, memory_order_acquire);
	for (;;) {
		uint32_t top = (uint32_t)head;
		if (top == 0)
			return NULL;
		struct span *span = &pool->spans[top - 1];
		uint32_t next = atomic_load_explicit(&span->stack_next,
		                                     memory_order_relaxed);
		uint64_t tag = (head >> 32) + 1;
		if (atomic_compare_exchange_weak_explicit(
		        &pool->available, &head, (tag << 32) | next,
		        memory_order_acquire, memory_order_acquire))
			return span;
	}
}

static void available_push(struct pool *pool, struct span *span)
{
	uint32_t self = (uint32_t)(span - pool->spans) + 1;
	uint64_t head =
	    atomic_load_explicit(&pool->available, memory_order_relaxed);
	do {
		atomic_store_explicit(&span->stack_next, (uint32_t)head,
		                      memory_order_relaxed);
	} while (!atomic_compare_exchange_weak_explicit(
	    &pool->available, &head, (((head >> 32) + 1) << 32) | self,
	    memory_order_release, memory_order_relaxed));
}

/* A span never handed to any thread yet, or NULL. */
static struct span *fresh_span(struct pool *pool)
{
	size_t n =
	    atomic_load_explicit(&pool->fresh_spans, memory_order_relaxed);
	do {
		if (n >= pool->span_count)
			return NULL;
	} while (!atomic_compare_exchange_weak_explicit(
	    &pool->fresh_spans, &n, n + 1, memory_order_relaxed,
	    memory_order_relaxed));
	struct span *span = &pool->spans[n];
	size_t first = n << pool->span_shift;
	size_t left = pool->block_count - first;
	size_t per_span = (size_t)1 << pool->span_shift;
	span->capacity = (uint32_t)(left < per_span ? left : per_span);
	return span;
}

/*
 * Moves the span's remote list onto its local list.  The caller owns the
 * span.  Returns how many blocks came back.
 */
static size_t span_drain(struct pool *pool, struct span *span)
{
	unsigned hooks = pool->hooks;
	/* Most drains find nothing: look before paying for an exchange. */
	if (atomic_load_explicit(&span->remote, memory_order_relaxed) == 0)
		return 0;
	uint64_t head =
	    atomic_exchange_explicit(&span->remote, 0, memory_order_acquire);
	/* SPAN_ABANDONED is set only while nobody holds the span. */
	POOL_ASSERT(!(head & SPAN_ABANDONED));
	size_t first = span_first_block(pool, span);
	size_t returned = 0;
	uint32_t link = (uint32_t)head;

	while (link != 0) {
		uint32_t offset = link - 1;
		if (offset >= span->capacity) {
			report_corrupted(pool, region_block(pool, first));
			break;
		}
		size_t index = first + offset;
		void *block = region_block(pool, index);
		uint32_t claim = atomic_load_explicit(&pool->claims[index],
		                                      memory_order_relaxed);
		if (claim == 0) {
			/* Not claimed: the link was overwritten, or we came
			 * round a loop.  Stop; never follow it. */
			report_corrupted(pool, block);
			break;
		}
		link = remote_link_load(pool, block, hooks);
		uint32_t state = atomic_load_explicit(&pool->block_state[index],
		                                      memory_order_relaxed);
		if (claim == state || (state & STATE_PARKED)) {
			/* A remote free of the live allocation, or of a block
			 * the owner freed too and then parked: either way the
			 * block goes back on the local list, once. */
			atomic_store_explicit(&pool->block_state[index],
			                      claim == state
			                          ? state_freed(state)
			                          : state & ~STATE_PARKED,
			                      memory_order_relaxed);
			link_store(pool, block, span->local_free, hooks);
			span->local_free = block;
			returned++;
		}
		if (claim != state) {
			/* The owner freed this block while another thread
			 * freed it too; the owner's free stands, and the
			 * remote one, counted when it was made, is undone. */
			atomic_fetch_sub_explicit(
			    &pool->retired.counters[COUNT_FREES], 1,
			    memory_order_relaxed);
			report_detected(pool, "pool_free", block,
			                POOL_ERROR_DOUBLE_FREE);
		}
		atomic_store_explicit(&pool->claims[index], 0,
		                      memory_order_relaxed);
	}
	return returned;
}

static bool span_has_free(const struct span *span)
{
	return span->local_free != NULL ||
	       atomic_load_explicit(&span->bump, memory_order_relaxed) <
	           span->capacity;
}

/*
 * Gives up ownership of a span.  A span with free blocks goes on the
 * available stack; an empty one is abandoned, unless remote frees arrived,
 * in which case it is published after all.
 */
static void span_release(struct pool *pool, struct span *span)
{
	span_check(pool, span);
	if (!span_has_free(span)) {
		uint64_t expected = 0;
		/* Release: whoever later publishes and acquires the span sees
		 * our writes to its owner line. */
		if (atomic_compare_exchange_strong_explicit(
		        &span->remote, &expected, SPAN_ABANDONED,
		        memory_order_release, memory_order_relaxed))
			return;
	}
	available_push(pool, span);
}

/* Makes span the cache's active span and takes in its remote frees. */
static void span_adopt(struct pool *pool, struct thread_cache *tc,
                       struct span *span)
{
	tc->active = span;
	span_drain(pool, span);
	span_check(pool, span);
}

/*
 * Takes a block from a span the caller owns: the local list first (LIFO,
 * so the block is likely still in cache), then the never-used tail
 * (*fresh).  Returns NULL when the span has neither, or when its list is
 * found corrupted: that is reported, and the list dropped.  A block still
 * claimed by a remote free of its last life (a double free raced with our
 * own free) is parked instead: taken off the list, left for the drain to
 * reconcile.
 */
static void *span_pop(struct pool *pool, struct span *span, bool *fresh,
                      unsigned hooks)
{
	void *block;
	size_t index;

	for (;;) {
		block = span_pop_local(pool, span, hooks);
		if (likely(block != NULL)) {
			*fresh = false;
			return block;
		}
		block = span->local_free;
		*fresh = block == NULL;
		if (block != NULL) {
			/* span_pop_local() refused the head: say why. */
			void *next = link_load(pool, block, hooks);
			if (!link_is_valid(pool, next))
				break;
			span->local_free = next;
			index = region_index_of(pool, block);
		} else {
			uint32_t bump = atomic_load_explicit(
			    &span->bump, memory_order_relaxed);
			if (bump >= span->capacity)
				return NULL;
			atomic_store_explicit(&span->bump, bump + 1,
			                      memory_order_relaxed);
			index = span_first_block(pool, span) + bump;
			block = region_block(pool, index);
		}
		/* Only this thread writes the state of its span's blocks;
		 * other threads read it (relaxed) when they free one. */
		uint32_t state = atomic_load_explicit(
		    &pool->block_state[index], memory_order_relaxed);
		if (state & STATE_OUT)
			break;
		if (atomic_load_explicit(&pool->claims[index],
		                         memory_order_relaxed) == 0) {
			atomic_store_explicit(&pool->block_state[index],
			                      state | STATE_OUT,
			                      memory_order_relaxed);
			return block;
		}
		atomic_store_explicit(&pool->block_state[index],
		                      state | STATE_PARKED,
		                      memory_order_relaxed);
	}
	/* The list is corrupted: drop it (its blocks are lost, never handed
	 * out twice) and say so. */
	span->local_free = NULL;
	report_corrupted(pool, block);
	return NULL;
}

/* ------------------------------------------------------------ caches */

static void cache_fold_counters(struct pool *pool, struct thread_cache *tc)
{
	for (int i = 0; i < COUNT_KINDS; i++)
		atomic_fetch_add_explicit(
		    &pool->retired.counters[i],
		    atomic_load_explicit(&tc->counts.counters[i],
		                         memory_order_relaxed),
		    memory_order_relaxed);
}

/* Called with registry_lock held, for a cache whose pool is alive. */
static void cache_retire(struct thread_cache *tc)
{
	struct pool *pool = tc->pool;
	if (tc->active) {
		span_release(pool, tc->active);
		tc->active = NULL;
	}
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
	pthread_mutex_lock(&registry_lock);
	struct thread_cache *tc = thread_caches;
	while (tc) {
		struct thread_cache *next = tc->thread_next;
		if (tc->pool)
			cache_retire(tc);
		free(tc);
		tc = next;
	}
	thread_caches = NULL;
	thread_hint.pool_id = 0;
	thread_hint.cache = NULL;
	pthread_mutex_unlock(&registry_lock);
}

static void exit_key_create(void)
{
	exit_key_error = pthread_key_create(&exit_key, thread_exit);
}

/* Frees this thread's caches of destroyed pools.  Registry lock held. */
static void prune_orphans(void)
{
	struct thread_cache **link = &thread_caches;
	while (*link) {
		struct thread_cache *tc = *link;
		if (tc->pool == NULL) {
			*link = tc->thread_next;
			free(tc);
		} else {
			link = &tc->thread_next;
		}
	}
}

/* This thread's cache for the pool, created on first use; NULL when it
 * cannot be made (the caller falls back). */
static struct thread_cache *cache_lookup(struct pool *pool)
{
	for (struct thread_cache *tc = thread_caches; tc;
	     tc = tc->thread_next) {
		if (tc->pool_id == pool->id) {
			thread_hint.pool_id = pool->id;
			thread_hint.cache = tc;
			return tc;
		}
	}

	pthread_once(&exit_key_once, exit_key_create);
	if (exit_key_error)
		return NULL;
	struct thread_cache *tc = calloc(1, sizeof *tc);
	if (tc == NULL)
		return NULL;
	tc->pool = pool;
	tc->pool_id = pool->id;

	pthread_mutex_lock(&registry_lock);
	prune_orphans();
	tc->pool_next = pool->caches;
	if (pool->caches)
		pool->caches->pool_prev = tc;
	pool->caches = tc;
	tc->thread_next = thread_caches;
	thread_caches = tc;
	pthread_mutex_unlock(&registry_lock);

	/* Any non-NULL value makes the destructor run at thread exit. */
	pthread_setspecific(exit_key, tc);
	thread_hint.pool_id = pool->id;
	thread_hint.cache = tc;
	return tc;
}

static struct thread_cache *cache_get(struct pool *pool)
{
	if (likely(thread_hint.pool_id == pool->id))
		return thread_hint.cache;
	return cache_lookup(pool);
}

/* ------------------------------------------------------------ slow paths */

void *thread_alloc_slow(struct pool *pool, bool *fresh, unsigned hooks)
{
	struct thread_cache *tc = cache_get(pool);
	struct span *span;
	void *block = NULL;

	if (tc == NULL)
		return NULL;
	span = tc->active;
	if (span != NULL) {
		/* The span itself (the fast path may have missed only the
		 * hint), then what other threads gave back to it. */
		block = span_pop(pool, span, fresh, hooks);
		if (block == NULL && span_drain(pool, span) > 0)
			block = span_pop(pool, span, fresh, hooks);
		if (block == NULL) {
			tc->active = NULL;
			span_release(pool, span);
		}
	}
	/* Then another span: one given back (it has free blocks), or one
	 * never used.  Each try adopts a span that had a free block when it
	 * was published, so this loop ends within span_count tries. */
	for (size_t tries = 0; block == NULL && tries <= pool->span_count;
	     tries++) {
		span = available_pop(pool);
		if (span == NULL)
			span = fresh_span(pool);
		if (span == NULL)
			break;
		span_adopt(pool, tc, span);
		block = span_pop(pool, span, fresh, hooks);
		if (block == NULL) {
			tc->active = NULL;
			span_release(pool, span);
		}
	}
	if (block != NULL)
		counter_add(&tc->counts, COUNT_ALLOCS, 1);
	return block;
}

/* A remote free: claim the block, then push it on its span's remote list. */
static int span_free_remote(struct pool *pool, struct thread_cache *tc,
                            struct span *span, void *block, size_t index,
                            unsigned hooks)
{
	uint32_t state = atomic_load_explicit(&pool->block_state[index],
	                                      memory_order_relaxed);
	uint32_t unclaimed = 0;

	if (!(state & STATE_OUT) ||
	    !atomic_compare_exchange_strong_explicit(
	        &pool->claims[index], &unclaimed, state, memory_order_relaxed,
	        memory_order_relaxed))
		return POOL_ERROR_DOUBLE_FREE;

	/* The claim makes the block ours to link: push it. */
	hooks_block_in(pool, block, hooks);
	uint32_t self = (uint32_t)(index - span_first_block(pool, span)) + 1;
	uint64_t head =
	    atomic_load_explicit(&span->remote, memory_order_relaxed);
	do {
		remote_link_store(pool, block, (uint32_t)head, hooks);
	} while (!atomic_compare_exchange_weak_explicit(
	    &span->remote, &head, (uint64_t)self, memory_order_acq_rel,
	    memory_order_relaxed));
	/* We cleared SPAN_ABANDONED: nobody owns the span and it is on no
	 * stack, so it is ours to publish. */
	if (head & SPAN_ABANDONED)
		available_push(pool, span);

	if (tc != NULL)
		counter_add(&tc->counts, COUNT_FREES, 1);
	else
		atomic_fetch_add_explicit(&pool->retired.counters[COUNT_FREES],
		                          1, memory_order_relaxed);
	return 0;
}

/*
 * Takes over an abandoned span (nobody owns it and it is on no stack: its
 * owner ran out of blocks in it and moved on) to free into it locally,
 * and gives up the active span for it.  Returns false if the span is not
 * abandoned, or another thread took or published it first.
 *
 * This is what keeps a thread's frees local when it frees in an order
 * other than it allocated (a server dropping a connection's buffers): the
 * first free into each span it moved past costs two CAS (this one and the
 * release of the old active span), the others none, where each would
 * otherwise be a remote free.  A thread still owns at most one span.
 */
static bool span_take_over(struct pool *pool, struct thread_cache *tc,
                           struct span *span)
{
	uint64_t expected = SPAN_ABANDONED;

	/* A thread that only frees (it holds no span) never takes one: it
	 * would hold free blocks that the allocating threads then miss. */
	if (tc->active == NULL)
		return false;
	/* An abandoned span has no remote frees: the first one clears the
	 * flag and publishes the span. */
	if (atomic_load_explicit(&span->remote, memory_order_relaxed) !=
	        SPAN_ABANDONED ||
	    !atomic_compare_exchange_strong_explicit(&span->remote, &expected,
	                                             0, memory_order_acquire,
	                                             memory_order_relaxed))
		return false;
	/* Acquire: we see the owner line and block states its last owner
	 * wrote before abandoning it (a release). */
	span_release(pool, tc->active);
	tc->active = span;
	return true;
}

int thread_free_slow(struct pool *pool, void *block, size_t index,
                     unsigned hooks)
{
	struct span *span = span_of(pool, index);
	struct thread_cache *tc = cache_get(pool);

	if (tc != NULL &&
	    (span == tc->active || span_take_over(pool, tc, span)))
		return span_free_local(pool, tc, span, block, index, hooks);
	return span_free_remote(pool, tc, span, block, index, hooks);
}

/* ------------------------------------------------------------ internal API */

bool thread_block_is_live(struct pool *pool, size_t index)
{
	uint32_t state = atomic_load_explicit(&pool->block_state[index],
	                                      memory_order_relaxed);
	return (state & STATE_OUT) &&
	       atomic_load_explicit(&pool->claims[index],
	                            memory_order_relaxed) != state;
}

void thread_fork_prepare(void)
{
	pthread_mutex_lock(&registry_lock);
}

void thread_fork_release(void)
{
	pthread_mutex_unlock(&registry_lock);
}

int thread_pool_init(struct pool *pool)
{
	(void)pool;
	pthread_once(&exit_key_once, exit_key_create);
	return exit_key_error ? EAGAIN : 0;
}

void thread_pool_destroy(struct pool *pool)
{
	pthread_mutex_lock(&registry_lock);
	/* Caches of other threads become orphans: their threads free them
	 * at exit or at their next lookup, without touching the pool. */
	for (struct thread_cache *tc = pool->caches; tc; tc = tc->pool_next)
		tc->pool = NULL;
	pool->caches = NULL;
	prune_orphans();
	pthread_mutex_unlock(&registry_lock);
	if (thread_hint.pool_id == pool->id) {
		thread_hint.pool_id = 0;
		thread_hint.cache = NULL;
	}
}

void thread_count_fallback(struct pool *pool, bool is_free)
{
	enum thread_counter which =
	    is_free ? COUNT_FALLBACK_FREES : COUNT_FALLBACK_ALLOCS;
	struct thread_cache *tc = cache_get(pool);
	if (tc != NULL)
		counter_add(&tc->counts, which, 1);
	else
		atomic_fetch_add_explicit(&pool->retired.counters[which], 1,
		                          memory_order_relaxed);
}

void thread_stats(struct pool *pool, pool_stats_t *out)
{
	uint64_t sums[COUNT_KINDS];

	/* The retired counters are read under the lock that folds an exiting
	 * thread's counters into them: read outside it, a thread that exits
	 * between the two reads would be counted twice, or not at all. */
	pthread_mutex_lock(&registry_lock);
	for (int i = 0; i < COUNT_KINDS; i++)
		sums[i] = atomic_load_explicit(&pool->retired.counters[i],
		                               memory_order_relaxed);
	for (struct thread_cache *tc = pool->caches; tc; tc = tc->pool_next)
		for (int i = 0; i < COUNT_KINDS; i++)
			sums[i] += atomic_load_explicit(&tc->counts.counters[i],
			                                memory_order_relaxed);
	pthread_mutex_unlock(&registry_lock);

	/* The blocks ever touched: an upper bound of the true peak, which
	 * cannot be known without a shared counter on every call. */
	size_t touched = 0;
	size_t spans =
	    atomic_load_explicit(&pool->fresh_spans, memory_order_relaxed);
	for (size_t i = 0; i < spans && i < pool->span_count; i++)
		touched += atomic_load_explicit(&pool->spans[i].bump,
		                                memory_order_relaxed);

	out->allocs = sums[COUNT_ALLOCS];
	out->frees = sums[COUNT_FREES];
	out->fallback_allocs = sums[COUNT_FALLBACK_ALLOCS];
	out->fallback_frees = sums[COUNT_FALLBACK_FREES];
	out->in_use = (size_t)(sums[COUNT_ALLOCS] - sums[COUNT_FREES]);
	out->peak_in_use = touched;
}
