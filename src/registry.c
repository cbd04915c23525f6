/*
 * The registry of the live pools of the process.  It serves two purposes:
 *
 *  - Recognising a pointer of another pool.  A pointer that pool_free()
 *    finds outside its pool's region goes to free(), unless it lies in the
 *    region of another live pool.  Handed to free(), such a block would
 *    corrupt the C library's heap (or be taken into it, and handed to a
 *    second owner).  registry_find() answers without taking a lock.  It
 *    first looks at a table that holds, for each 2 MiB granule of the
 *    address space, the number of live regions that reach into the
 *    granule.  A pointer whose granule no region reaches (nearly always a
 *    fallback allocation) is answered with that one load.  Only the other
 *    pointers are looked up among the regions.  Each region sits in a slot
 *    that is written under the registry lock and read under a sequence
 *    count of its own, and the slots sit in chunks that are never moved or
 *    freed, so a reader never follows a pointer that may go away.
 *  - Making fork() safe while other threads use a pool.  The child has
 *    only the forking thread, so any lock that another thread held at the
 *    fork would stay locked in the child forever.  The prepare handler
 *    therefore takes every lock that the library uses, in one order: the
 *    registry lock, the lock of each POOL_LOCKED pool and of each
 *    POOL_PER_THREAD pool (which pool_trim() holds), the lock of the
 *    per-thread registry, the trace's, the error handler's, and the lock
 *    of the library's own objects.  The fork thus happens at a moment when
 *    no other thread is inside a locked section (so no trim holds spans
 *    off a pool's stack), and both sides release the locks afterwards.
 *    Lock-free state needs no such care.  The POOL_PER_THREAD spans that
 *    another thread held at the fork stay with that thread's cache in the
 *    child, where nobody uses them, and the child allocates from the other
 *    spans.
 *
 * SPDX-License-Identifier: MIT
 */
#include "list.h"
#include "span.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

/* ------------------------------------------------------------ data */

#define CHUNK_SLOTS 64

/*
 * A slot holds the range [lo, hi) that a live pool answers for, or is
 * empty (pool NULL, lo = hi = 0).  seq is odd while the slot is being
 * written.  A reader that sees it odd, or sees it change across its reads,
 * reads again.
 */
struct slot {
	_Atomic uint64_t seq;
	_Atomic uintptr_t lo, hi;
	struct pool *pool; /* guarded by registry_lock */
};

struct chunk {
	struct slot slots[CHUNK_SLOTS];
	/* slots [0, used) have been used; used only ever grows */
	_Atomic size_t used;
	_Atomic(struct chunk *) next;
};

/*
 * The granule table holds one count per 2 MiB of the address space below
 * 2^GRANULE_SPACE_BITS.  On a 64-bit system it takes 64 MiB of reserved
 * address space, of which only the pages that count a region are ever
 * written; a read of the others maps the zero page.  A count is the number
 * of live regions that reach into the granule.  A count of 255 sticks: it
 * is never decremented again, and the granule is always looked up.  The
 * table is written under the registry lock and read with relaxed loads.
 * That is enough, because a region is counted before its pool is handed to
 * anyone, and a pointer into a region that is being removed belongs to a
 * pool that nobody may use any more.
 */
#define GRANULE_SHIFT      21
#define GRANULE_SPACE_BITS (SIZE_MAX > UINT32_MAX ? 47 : 32)
#define GRANULE_COUNT      ((size_t)1 << (GRANULE_SPACE_BITS - GRANULE_SHIFT))
#define GRANULE_STUCK      255

static _Atomic(_Atomic uint8_t *) granules;

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
	/* The odd count becomes visible before the range changes. */
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&slot->lo, lo, memory_order_relaxed);
	atomic_store_explicit(&slot->hi, hi, memory_order_relaxed);
	atomic_store_explicit(&slot->seq, seq + 2, memory_order_release);
	slot->pool = pool;
}

/* Returns whether the slot holds a range that contains ptr. */
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

/* Returns the slot of pool or, when pool is NULL, a free slot.  Returns
 * NULL when pool has no slot, or when memory for another chunk cannot be
 * had.  The caller holds the lock. */
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
			    (next = meta_alloc(sizeof *next)) == NULL)
				return NULL;
			atomic_store_explicit(&chunk->next, next,
			                      memory_order_release);
		}
		chunk = next;
	}
}

/* ------------------------------------------------------------ granules */

/* Counts the range [lo, hi) into the granule table (when add is true) or
 * out of it.  Returns false when the table cannot be mapped, and then
 * nothing is counted.  The caller holds the lock. */
static bool granules_count(uintptr_t lo, uintptr_t hi, bool add)
{
	_Atomic uint8_t *table =
	    atomic_load_explicit(&granules, memory_order_relaxed);
	if (table == NULL) {
		if (!add)
			return true;
		void *map =
		    mmap(NULL, GRANULE_COUNT, PROT_READ | PROT_WRITE,
		         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (map == MAP_FAILED)
			return false;
		table = map;
		atomic_store_explicit(&granules, table, memory_order_release);
	}
	/* Granules beyond the table (in a 57-bit address space) are not
	 * counted: pointers there are always looked up. */
	for (uintptr_t g = lo >> GRANULE_SHIFT;
	     g <= (hi - 1) >> GRANULE_SHIFT && g < GRANULE_COUNT; g++) {
		uint8_t n =
		    atomic_load_explicit(&table[g], memory_order_relaxed);
		if (n == GRANULE_STUCK)
			continue;
		atomic_store_explicit(&table[g], (uint8_t)(add ? n + 1 : n - 1),
		                      memory_order_relaxed);
	}
	return true;
}

/* Returns whether a live region may reach into the granule of ptr. */
static bool granule_maybe(uintptr_t ptr)
{
	_Atomic uint8_t *table =
	    atomic_load_explicit(&granules, memory_order_acquire);
	uintptr_t g = ptr >> GRANULE_SHIFT;
	if (table == NULL)
		return false; /* no region was ever registered */
	return g >= GRANULE_COUNT ||
	       atomic_load_explicit(&table[g], memory_order_relaxed) != 0;
}

/* ------------------------------------------------------------ fork */

static void fork_prepare(void)
{
	pthread_mutex_lock(&registry_lock);
	/* caches_lock before the pools' locks: a thread that exits takes
	 * them in that order (locked.c). */
	thread_fork_prepare();
	for (struct chunk *c = &first_chunk; c; c = c->next)
		for (size_t i = 0; i < c->used; i++)
			if (c->slots[i].pool &&
			    c->slots[i].pool->mode != POOL_SINGLE)
				lock_acquire(&c->slots[i].pool->lock);
	trace_fork_prepare();
	report_fork_prepare();
	meta_fork_prepare();
}

/* Releases the locks, in the parent and in the child.  In the child the
 * forking thread holds every lock, and may release them. */
static void fork_release(void)
{
	meta_fork_release();
	report_fork_release();
	for (struct chunk *c = &first_chunk; c; c = c->next)
		for (size_t i = 0; i < c->used; i++)
			if (c->slots[i].pool &&
			    c->slots[i].pool->mode != POOL_SINGLE)
				lock_release(&c->slots[i].pool->lock);
	thread_fork_release();
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
	/* A trim that another thread was running is given up, and the
	 * blocks that it had taken go back on the list.  The threads that
	 * waited for a pool's lock are not in the child. */
	for (struct chunk *c = &first_chunk; c; c = c->next)
		for (size_t i = 0; i < c->used; i++) {
			struct pool *pool = c->slots[i].pool;
			if (pool == NULL)
				continue;
			if (pool->mode != POOL_PER_THREAD)
				list_fork_child(pool);
			if (pool->mode != POOL_SINGLE)
				lock_forget_waiters(&pool->lock);
		}
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
	uintptr_t lo = (uintptr_t)pool->claim_lo,
	          hi = (uintptr_t)pool->claim_hi;
	pthread_mutex_lock(&registry_lock);
	struct slot *slot = slot_find(NULL);
	if (slot != NULL && !granules_count(lo, hi, true))
		slot = NULL;
	if (slot != NULL)
		slot_write(slot, pool, lo, hi);
	pthread_mutex_unlock(&registry_lock);
	return slot != NULL ? 0 : ENOMEM;
}

void registry_remove(struct pool *pool)
{
	pthread_mutex_lock(&registry_lock);
	struct slot *slot = slot_find(pool);
	if (slot != NULL) {
		slot_write(slot, NULL, 0, 0);
		granules_count((uintptr_t)pool->claim_lo,
		               (uintptr_t)pool->claim_hi, false);
	}
	pthread_mutex_unlock(&registry_lock);
}

int registry_widen(struct pool *pool, char *lo, char *hi)
{
	pthread_mutex_lock(&registry_lock);
	struct slot *slot = slot_find(pool);
	bool counted =
	    slot != NULL && granules_count((uintptr_t)lo, (uintptr_t)hi, true);
	if (counted) {
		/* The new range is counted before the slot holds it, and the
		 * old one is uncounted after, so that a reader finds one or
		 * the other. */
		slot_write(slot, pool, (uintptr_t)lo, (uintptr_t)hi);
		granules_count((uintptr_t)pool->claim_lo,
		               (uintptr_t)pool->claim_hi, false);
		pool->claim_lo = lo;
		pool->claim_hi = hi;
	}
	pthread_mutex_unlock(&registry_lock);
	return counted ? 0 : ENOMEM;
}

bool registry_find(const void *ptr)
{
	if (!granule_maybe((uintptr_t)ptr))
		return false;
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
