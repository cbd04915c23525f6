/*
 * Making and unmaking pools: pool_init(), pool_init_with(), the classes of
 * a set, and pool_destroy().  Making a pool checks the arguments, chooses
 * the region's geometry (the block shift, and the spans of
 * POOL_PER_THREAD), maps the region or places it in a set's slice,
 * registers the pool, configures its hooks and chooses its dispatch (see
 * pool.c).
 *
 * SPDX-License-Identifier: MIT
 */
#include "list.h"
#include "locked.h"
#include "span.h"

#include <errno.h>
#include <inttypes.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------ data */

/* Pool IDs start at 1, because 0 marks an empty thread hint.  Sets take
 * their IDs from the same counter. */
static _Atomic uint64_t next_pool_id = 1;

/* ------------------------------------------------------------ helpers */

static unsigned block_shift_for(size_t size)
{
	unsigned shift = 4; /* POOL_MIN_BLOCK_SIZE */
	while (((size_t)1 << shift) < size)
		shift++;
	return shift;
}

/* Chooses spans of 1 to 256 blocks, aiming at SPAN_TARGET_COUNT spans per
 * pool, so that what a thread holds is a small part of the pool. */
static unsigned span_shift_for(size_t block_count)
{
	unsigned shift = SPAN_SHIFT_MIN;
	while (shift < SPAN_SHIFT_MAX &&
	       (block_count >> (shift + 1)) >= SPAN_TARGET_COUNT)
		shift++;
	return shift;
}

/* Makes a secret for the link encoding: random where the kernel gives
 * random bytes, and otherwise mixed from values that differ between
 * processes and pools. */
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
	/* The low bits are kept clear, because a decoded link must still be
	 * aligned. */
	return secret & ~(uintptr_t)(POOL_MIN_BLOCK_SIZE - 1);
}

/* ------------------------------------------------------------ internal API */

/* Returns whether pool_init_with()'s arguments are valid.  The caller
 * fails with EINVAL when they are not. */
bool arguments_valid(size_t block_size, size_t block_count, int flags,
                            const pool_fallback_t *fallback)
{
	int mode = flags & POOL_MODE_MASK;
	return block_size != 0 && block_count != 0 &&
	       block_size <= POOL_MAX_BLOCK_SIZE &&
	       (mode == POOL_SINGLE || mode == POOL_LOCKED ||
	        mode == POOL_PER_THREAD) &&
	       !(flags & ~(POOL_MODE_MASK | POOL_OPTION_MASK)) &&
	       (fallback == NULL ||
	        (fallback->malloc != NULL && fallback->calloc != NULL &&
	         fallback->realloc != NULL && fallback->free != NULL));
}

/* Writes the trace's record of a new pool, which names the set when the
 * pool is a class of one. */
static void trace_init(struct pool *pool)
{
	if (pool->set == NULL)
		trace_record(pool, TRACE_OP_INIT,
		             "block_size=%zu block_count=%zu flags=0x%x",
		             pool->block_size, pool->block_count,
		             (unsigned)pool->flags);
	else
		trace_record(pool, TRACE_OP_INIT,
		             "block_size=%zu block_count=%zu flags=0x%x "
		             "set=%" PRIu64,
		             pool->block_size, pool->block_count,
		             (unsigned)pool->flags, pool->set->id);
}

/*
 * pool_init_with().  Given a set, it makes a class of that set instead,
 * placed in slice (see region_place()), and block_count then becomes the
 * number of blocks that fit in the slice.
 */
static struct pool *create_pool(size_t block_size, size_t block_count,
                                int flags, const pool_fallback_t *fallback,
                                const struct pool_set *set, char *slice,
                                size_t slice_size)
{
	int mode = flags & POOL_MODE_MASK;

	if (!arguments_valid(block_size, block_count, flags, fallback)) {
		errno = EINVAL;
		return NULL;
	}
	unsigned shift = block_shift_for(block_size);
	if (slice != NULL)
		block_count = (slice_size - region_page_size()) >> shift;
	/* A pool larger than a process's address space can hold is refused
	 * before its side tables are mapped, since they would only be
	 * unmapped again.  So is a POOL_PER_THREAD pool with more spans than
	 * span numbers, which are 32-bit, can count. */
	unsigned span_shift = span_shift_for(block_count);
	if (block_count > REGION_MAX_BYTES >> shift ||
	    (mode == POOL_PER_THREAD &&
	     ((block_count - 1) >> span_shift) >= UINT32_MAX - 1)) {
		errno = ENOMEM;
		return NULL;
	}
	/* The set aligns a class's slice itself, so the class's area is
	 * shaped as for ordinary pages. */
	int map_flags = slice != NULL ? flags & ~POOL_HUGEPAGES : flags;
	struct pool *pool =
	    region_pool_map(map_flags, block_count, shift, span_shift);
	if (pool == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	pool->block_shift = (uint8_t)shift;
	pool->block_size = (size_t)1 << shift;
	pool->block_count = block_count;
	pool->flags = flags;
	pool->mode = (uint8_t)mode;
	pool->span_shift = (uint8_t)span_shift;
	pool->secret = make_secret(pool);
	pool->id = serial_next();
	pool->set = set;
	fallback_set(pool, fallback); /* cannot fail: checked above */
	int error = slice != NULL ? region_place(pool, slice, slice_size)
	                          : region_reserve(pool);
	if (!error && mode == POOL_PER_THREAD)
		error = thread_pool_init(pool);
	if (!error && mode == POOL_LOCKED)
		error = locked_pool_init(pool);
	if (!error)
		error = registry_add(pool);
	if (error) {
		region_release(pool);
		errno = error;
		return NULL;
	}
	debug_configure(pool);
	if (pool->hooks & HOOK_TRACE)
		trace_init(pool);
	dispatch_choose(pool);
	return pool;
}

struct pool *class_create(const struct pool_set *set, size_t block_size,
                          const pool_fallback_t *fallback, char *slice,
                          size_t slice_size)
{
	return create_pool(block_size, 1, set->flags, fallback, set, slice,
	                   slice_size);
}

uint64_t serial_next(void)
{
	return atomic_fetch_add_explicit(&next_pool_id, 1,
	                                 memory_order_relaxed);
}

/* ------------------------------------------------------------ public API */

POOL_API pool_t *pool_init(size_t block_size, size_t block_count, int flags)
{
	return create_pool(block_size, block_count, flags, NULL, NULL, NULL, 0);
}

POOL_API pool_t *pool_init_with(size_t block_size, size_t block_count,
                                int flags, const pool_fallback_t *fallback)
{
	return create_pool(block_size, block_count, flags, fallback, NULL,
	                   NULL, 0);
}

POOL_API void pool_destroy(pool_t *pool)
{
	if (pool == NULL)
		return;
	if (pool->hooks & HOOK_TRACE) {
		trace_record(pool, TRACE_OP_DESTROY, "%s", "");
		trace_flush();
	}
	/* Blocks still handed out die with the pool.  Valgrind is told so,
	 * or memcheck would call them leaks. */
	if (pool->hooks & HOOK_VALGRIND) {
		size_t limit = pool->mode == POOL_PER_THREAD
		                   ? pool->block_count
		                   : pool->list.bump;
		for (size_t i = 0; i < limit; i++)
			if (block_is_live(pool, i))
				debug_block_dies(pool, region_block(pool, i));
	}
	if (pool->mode != POOL_PER_THREAD)
		list_check(pool);
	registry_remove(pool);
	if (pool->mode != POOL_SINGLE)
		cache_pool_destroy(pool);
	region_release(pool);
}
