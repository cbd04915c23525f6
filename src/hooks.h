/*
 * The work that handing a block out, or taking it back, costs when a tool
 * is watching the pool.  When no tool is watching, it costs nothing.
 *
 *  - In an AddressSanitizer build (configure --enable-sanitizers=address),
 *    free blocks are poisoned, and a block that is handed out is unpoisoned
 *    for exactly the size that was requested.
 *  - At run time, pool->hooks selects the rest: describing blocks to
 *    Valgrind's memcheck (when the program runs under it), the debug fill
 *    pattern, and the trace.  Every fast path is compiled twice: once with
 *    hooks a constant 0, which is the code that pools without hooks run
 *    and where all of this folds away, and once with hooks read from the
 *    pool, which is the code that hooked pools run.  The out-of-line
 *    halves of these functions are in debug.c.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SHIFTPOOL_HOOKS_H
#define SHIFTPOOL_HOOKS_H

#include "link.h"

#include <string.h>

#ifdef SHIFTPOOL_ASAN
#include <sanitizer/asan_interface.h>
#endif

/* Called when the public call named function hands out a block for size
 * bytes; fresh says that the block was never used before.  Returns false
 * when the hooks quarantine the block instead (see
 * hooks_block_out_slow()). */
POOL_INLINE bool hooks_block_out(struct pool *pool, void *block, size_t size,
                                 bool fresh, unsigned hooks,
                                 const char *function)
{
	if (unlikely(hooks) &&
	    !hooks_block_out_slow(pool, block, fresh, hooks, function))
		return false;
#ifdef SHIFTPOOL_ASAN
	ASAN_POISON_MEMORY_REGION(block, pool->block_size);
	ASAN_UNPOISON_MEMORY_REGION(block, size);
#else
	(void)size;
#endif
	return true;
}

/* Hands out a block for size bytes for the public call named function,
 * in every mode: it runs the hooks, and then zeroes the block when zero
 * asks for it.  A block that was never used is still zero from the
 * mapping, and a recycled one needs only the requested bytes zeroed.
 * Returns NULL when the hooks quarantined the block, which never happens
 * in a pool without hooks. */
POOL_INLINE void *block_out(struct pool *pool, void *block, size_t size,
                            bool zero, bool fresh, unsigned hooks,
                            const char *function)
{
	if (!hooks_block_out(pool, block, size, fresh, hooks, function))
		return NULL;
	if (zero && !fresh)
		return memset(block, 0, size);
	return block;
}

/* Called when a block that was handed out is about to go back on a free
 * list. */
POOL_INLINE void hooks_block_in(struct pool *pool, void *block, unsigned hooks)
{
	if (unlikely(hooks))
		hooks_block_in_slow(pool, block, hooks);
#ifdef SHIFTPOOL_ASAN
	ASAN_POISON_MEMORY_REGION(block, pool->block_size);
#endif
}

/* Called when a live block now holds size bytes, after a pool_realloc()
 * that stays within the block. */
POOL_INLINE void hooks_block_resize(struct pool *pool, void *block, size_t size)
{
#ifdef SHIFTPOOL_ASAN
	ASAN_POISON_MEMORY_REGION(block, pool->block_size);
	ASAN_UNPOISON_MEMORY_REGION(block, size);
#else
	(void)pool;
	(void)block;
	(void)size;
#endif
}

/* Called when the pool itself is about to read the whole of a live block.
 * The pool does not keep the size that the caller asked for, so a move
 * may copy bytes beyond that size, which AddressSanitizer poisoned. */
POOL_INLINE void hooks_block_expose(struct pool *pool, void *block)
{
#ifdef SHIFTPOOL_ASAN
	ASAN_UNPOISON_MEMORY_REGION(block, pool->block_size);
#else
	(void)pool;
	(void)block;
#endif
}

/* Called when a mapping is about to be unmapped.  AddressSanitizer's
 * shadow memory outlives the mapping, and a later mapping at the same
 * address must not inherit the poison that the pool left there. */
POOL_INLINE void hooks_mapping_forget(void *mapping, size_t size)
{
#ifdef SHIFTPOOL_ASAN
	debug_asan_forget(mapping, size);
#else
	(void)mapping;
	(void)size;
#endif
}

#endif /* SHIFTPOOL_HOOKS_H */
