/*
 * The live pools of the process, for two things:
 *
 *  - Telling another pool's pointer.  A pointer that pool_free() finds
 *    outside its pool's region goes to free(), unless it lies in the
 *    region of another live pool: handed to free(), such a block would
 *    corrupt the C library's heap (or be taken into it, and handed to a
 *    second owner).  registry_find() answers without a lock: the regions
 *    sit in slots that are written under the registry lock and read under
 *    a sequence count each, in chunks that are never moved or freed, so a
 *    reader never follows a pointer that may go away.
 *  - fork() while other threads use a pool: the child has only the forking
 *    thread, so any lock another thread held at the fork would stay locked
 *    in the child forever.  The prepare handler takes every lock the
 *    library uses (in one order: the registry, each POOL_LOCKED pool's
 *    lock, the per-thread registry, the trace), so the fork happens at a
 *    moment when no other thread is inside a locked section, and both
 *    sides release them afterwards.  Lock-free state needs no such care: a
 *    POOL_PER_THREAD span that another thread held at the fork stays with
 *    that thread's cache in the child, where nobody uses it; the child
 *    allocates from the other spans.
 *
 * SPDX-License-Identifier: MIT
 */
#include "thread.h"

#include <errno.h>
#include <stdlib.h>

/* ------------------------------------------------------------ data */

#define CHUNK_SLOTS 64

/*
 * A live pool's region [lo, hi), or an empty slot (pool NULL, lo = hi =
 * 0).  seq is odd while the slot is being written: a reader that sees it
 * odd, or changed across its reads, reads again.
 */
struct slot {
	_Atomic uint64_t seq;
	_Atomic uintptr_t lo, hi;
	struct pool *pool; /* guarded by registry_lock */
};

struct chunk {
	struct slot slots[CHUNK_SLOTS];
	/* slots [0, used) have been used; grows only */
	_Atomic size_t used;
	_Atomic(struct chunk *) next;
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct chunk first_chunk;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static int atfork_error;

/* ------------------------------------------------------------ slots */

static void slot_write(struct slot *slot, struct pool *pool, uintptr_t lo,
                       uintptr_t hi)
{
	uint64_t seq = atomic_load_explicit(&slot->seq, memory_order_relaxed);
	atomic_store_explicit(&slot->seq, seq + 1, memory_order_relaxed);
	/* The odd count is visible before the range changes. */
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&slot->lo, lo, memory_order_relaxed);
	atomic_store_explicit(&slot->hi, hi, memory_order_relaxed);
	atomic_store_explicit(&slot->seq, seq + 2, memory_order_release);
	slot->pool = pool;
}

/* Whether the slot holds a region that contains ptr. */
static bool slot_contains(struct slot *slot, uintptr_t ptr)
{
	for (;;) {
		uint64_t seq =
		    atomic_load_explicit(&slot->seq, memory_order_acquire);
		uintptr_t lo =
		    atomic_load_explicit(&slot->lo, memory_order_relaxed);
		uintptr_t hi =
		    atomic_load_explicit(&slot->hi, memory_order_relaxed);
		/* The range is read before the count is read again. */
		atomic_thread_fence(memory_order_acquire);
		if (!(seq & 1) && atomic_load_explicit(
		                      &slot->seq, memory_order_relaxed) == seq)
			return ptr - lo < hi - lo;
	}
}

/* The slot of a pool, or a free one; NULL when memory for another chunk
 * cannot be had.  Lock held. */
static struct slot *slot_find(struct pool *pool)
{
	struct chunk *chunk = &first_chunk;
	for (;;) {
		size_t used =
		    atomic_load_explicit(&chunk->used, memory_order_relaxed);
		for (size_t i = 0; i < used; i++)
			if (chunk->slots[i].pool == pool)
				return &chunk->slots[i];
		if (pool == NULL && used < CHUNK_SLOTS) {
			atomic_store_explicit(&chunk->used, used + 1,
			                      memory_order_release);
			return &chunk->slots[used];
		}
		struct chunk *next =
		    atomic_load_explicit(&chunk->next, memory_order_relaxed);
		if (next == NULL) {
			if (pool != NULL ||
			    (next = calloc(1, sizeof *next)) == NULL)
				return NULL;
			atomic_store_explicit(&chunk->next, next,
			                      memory_order_release);
		}
		chunk = next;
	}
}

/* ------------------------------------------------------------ fork */

static void fork_prepare(void)
{
	pthread_mutex_lock(&registry_lock);
	for (struct chunk *c = &first_chunk; c; c = c->next)
		for (size_t i = 0; i < c->used; i++)
			if (c->slots[i].pool &&
			    c->slots[i].pool->mode == POOL_LOCKED)
				lock_acquire(&c->slots[i].pool->lock);
	thread_fork_prepare();
	trace_fork_prepare();
}

/* In the parent, and in the child, where the forking thread holds every
 * lock and may release them. */
static void fork_release(void)
{
	thread_fork_release();
	for (struct chunk *c = &first_chunk; c; c = c->next)
		for (size_t i = 0; i < c->used; i++)
			if (c->slots[i].pool &&
			    c->slots[i].pool->mode == POOL_LOCKED)
				lock_release(&c->slots[i].pool->lock);
	pthread_mutex_unlock(&registry_lock);
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

int registry_add(struct pool *pool)
{
	pthread_once(&atfork_once, atfork_install);
	if (atfork_error)
		return ENOMEM;
	pthread_mutex_lock(&registry_lock);
	struct slot *slot = slot_find(NULL);
	if (slot != NULL)
		slot_write(slot, pool, (uintptr_t)pool->claim_lo,
		           (uintptr_t)pool->claim_hi);
	pthread_mutex_unlock(&registry_lock);
	return slot != NULL ? 0 : ENOMEM;
}

void registry_remove(struct pool *pool)
{
	pthread_mutex_lock(&registry_lock);
	struct slot *slot = slot_find(pool);
	if (slot != NULL)
		slot_write(slot, NULL, 0, 0);
	pthread_mutex_unlock(&registry_lock);
}

bool registry_find(const void *ptr)
{
	for (struct chunk *c = &first_chunk; c != NULL;
	     c = atomic_load_explicit(&c->next, memory_order_acquire)) {
		size_t used =
		    atomic_load_explicit(&c->used, memory_order_acquire);
		for (size_t i = 0; i < used; i++)
			if (slot_contains(&c->slots[i], (uintptr_t)ptr))
				return true;
	}
	return false;
}
