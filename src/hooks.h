/*
 * What a block going out or coming back costs when a tool is watching,
 * and nothing when none is:
 *
 *  - In an AddressSanitizer build (configure --enable-sanitizers=address),
 *    free blocks are poisoned and a block handed out is unpoisoned exactly
 *    to the requested size.
 *  - At run time, pool->hooks selects: describing blocks to Valgrind's
 *    memcheck (when running under it), the debug fill pattern, the trace.
 *    Every fast path is compiled twice: with hooks a constant 0 (the code
 *    that pools without hooks run, where all of this folds away) and with
 *    hooks read from the pool (the code that hooked pools run).  The
 *    out-of-line halves are in debug.c.
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

/* A block is handed out for size bytes (fresh: never used before) by the
 * public call named function; false when it is quarantined instead
 * (hooks_block_out_slow()). */
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

/* A block handed out for size bytes by the public call named function,
 * in every mode: the hooks, then the zeroing.  A never-used block is
 * still zero from the mapping; a recycled one needs only the requested
 * bytes.  NULL when the hooks quarantined the block (never without
 * hooks). */
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

/* A free block leaves a remote list for a local one: word 1 no longer
 * holds a link, and holds the fill pattern again. */
POOL_INLINE void hooks_block_relinked(void *block, unsigned hooks)
{
	if (unlikely(hooks & HOOK_FILL))
		link_word_store(block, 1, FILL_WORD, hooks);
}

/* A handed-out block is about to go back on a free list. */
POOL_INLINE void hooks_block_in(struct pool *pool, void *block, unsigned hooks)
{
	if (unlikely(hooks))
		hooks_block_in_slow(pool, block, hooks);
#ifdef SHIFTPOOL_ASAN
	ASAN_POISON_MEMORY_REGION(block, pool->block_size);
#endif
}

/* A live block now holds size bytes (pool_realloc() within the block). */
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

/* The whole of a live block is about to be read by the pool itself (the
 * caller's size is not kept, so a move copies the block). */
POOL_INLINE void hooks_block_expose(struct pool *pool, void *block)
{
#ifdef SHIFTPOOL_ASAN
	ASAN_UNPOISON_MEMORY_REGION(block, pool->block_size);
#else
	(void)pool;
	(void)block;
#endif
}

/* A mapping is about to be unmapped: ASan's shadow outlives it, and a
 * later mapping at the same address must not inherit our poison. */
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
