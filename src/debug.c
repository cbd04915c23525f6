/*
 * Debugging aids, each of which is off unless asked for: the fill pattern
 * that catches writes after free, making the Nth fallback allocation
 * fail, and describing the blocks to Valgrind's memcheck (which running
 * the program under Valgrind asks for).
 *
 *   SHIFTPOOL_DEBUG=fill,fail-fallback=N,no-valgrind,locked-stacks
 *                   A comma-separated list; unknown words are ignored.
 *                   no-valgrind keeps the pool from describing itself to
 *                   Valgrind, for instance under callgrind.  locked-stacks
 *                   makes a POOL_LOCKED pool serve from the threads'
 *                   stacks from the start, rather than once threads
 *                   contend (locked.c, point 5), to test or measure
 *                   them.
 *   SHIFTPOOL_TRACE=FILE
 *                   The trace (see trace.c).
 *
 * Both variables are read with secure_getenv(), so a set-user-ID or
 * set-group-ID program ignores them.  SHIFTPOOL_DEBUG is read by every
 * pool_init(), so it applies to the pools created after it is set.
 * SHIFTPOOL_TRACE is read only once, when the first pool or set of the
 * process is created (see trace.c).
 *
 * SPDX-License-Identifier: MIT
 */
#include "link.h"

#include <stdlib.h>
#include <string.h>

#ifdef SHIFTPOOL_ASAN
#include <sanitizer/asan_interface.h>
#include <sys/mman.h>
#endif

/* ------------------------------------------------------------ helpers */

/* Parses the value of SHIFTPOOL_DEBUG into the pool.  Returns false when
 * the value holds no-valgrind. */
static bool parse_debug_options(struct pool *pool, const char *options)
{
	bool valgrind = true;
	const char *word = options;
	while (*word) {
		size_t len = strcspn(word, ",");
		if (len == 4 && strncmp(word, "fill", 4) == 0) {
			pool->hooks |= HOOK_FILL;
		} else if (len > 14 &&
		           strncmp(word, "fail-fallback=", 14) == 0) {
			char *end;
			unsigned long long n = strtoull(word + 14, &end, 10);
			if (end == word + len)
				pool->fail_fallback_at = n;
		} else if (len == 11 && strncmp(word, "no-valgrind", 11) == 0) {
			valgrind = false;
		} else if (len == 13 &&
		           strncmp(word, "locked-stacks", 13) == 0) {
			atomic_store_explicit(&pool->stacks_on, true,
			                      memory_order_relaxed);
		}
		word += len;
		if (*word == ',')
			word++;
	}
	return valgrind;
}

/* Returns whether bytes [from, size) of block all hold the fill
 * pattern. */
static bool fill_intact(const unsigned char *block, size_t from, size_t size)
{
	for (size_t i = from; i < size; i++)
		if (block[i] != FILL_BYTE)
			return false;
	return true;
}

/* Makes the whole of a block accessible, because the pool itself is about
 * to read or write all of it. */
static void open_block(struct pool *pool, void *block, unsigned hooks)
{
#ifdef SHIFTPOOL_ASAN
	ASAN_UNPOISON_MEMORY_REGION(block, pool->block_size);
#endif
#ifdef HAVE_VALGRIND_MEMCHECK_H
	if (hooks & HOOK_VALGRIND)
		VALGRIND_MAKE_MEM_DEFINED(block, pool->block_size);
#else
	(void)hooks;
#endif
	(void)pool;
	(void)block;
}

/* Makes a block that the pool keeps from the program inaccessible again,
 * once the pool is done reading it. */
static void close_block(struct pool *pool, void *block, unsigned hooks)
{
#ifdef SHIFTPOOL_ASAN
	ASAN_POISON_MEMORY_REGION(block, pool->block_size);
#endif
#ifdef HAVE_VALGRIND_MEMCHECK_H
	if (hooks & HOOK_VALGRIND)
		VALGRIND_MAKE_MEM_NOACCESS(block, pool->block_size);
#else
	(void)hooks;
#endif
	(void)pool;
	(void)block;
}

/* ------------------------------------------------------------ internal API */

#ifdef SHIFTPOOL_ASAN
/*
 * ASAN_UNPOISON_MEMORY_REGION() writes every shadow byte of its range, and
 * the shadow is an eighth of the range.  For a set reserved far larger than
 * memory (13 classes of 4 GiB, say), that would make gigabytes resident
 * just to write zeros.  Instead, the whole pages of the range's shadow are
 * given back to the system, so that they read as zero (unpoisoned), as
 * ASan does for its own large ranges.  Only the shadow at the two ends, on
 * pages that it may share with the shadow of other memory, is written.
 */
void debug_asan_forget(void *mapping, size_t size)
{
	size_t scale, offset;
	__asan_get_shadow_mapping(&scale, &offset);
	size_t page = region_page_size();
	uintptr_t lo = (uintptr_t)mapping, hi = lo + size;
	uintptr_t inner_lo =
	    ((lo >> scale) + offset + page - 1) & ~(uintptr_t)(page - 1);
	uintptr_t inner_hi = ((hi >> scale) + offset) & ~(uintptr_t)(page - 1);

	if (inner_hi <= inner_lo) {
		ASAN_UNPOISON_MEMORY_REGION(mapping, size);
		return;
	}
	/* [mid_lo, mid_hi) is the memory whose shadow is the inner pages. */
	uintptr_t mid_lo = (inner_lo - offset) << scale;
	uintptr_t mid_hi = (inner_hi - offset) << scale;
	ASAN_UNPOISON_MEMORY_REGION(mapping, mid_lo - lo);
	ASAN_UNPOISON_MEMORY_REGION((void *)mid_hi, hi - mid_hi);
	if (madvise((void *)inner_lo, inner_hi - inner_lo, MADV_DONTNEED) != 0)
		ASAN_UNPOISON_MEMORY_REGION((void *)mid_lo, mid_hi - mid_lo);
}
#endif

void debug_configure(struct pool *pool)
{
	if (pool->flags & POOL_DEBUG_FILL)
		pool->hooks |= HOOK_FILL;
	const char *options = secure_getenv("SHIFTPOOL_DEBUG");
	bool valgrind = options ? parse_debug_options(pool, options) : true;
#ifdef HAVE_VALGRIND_MEMCHECK_H
	if (valgrind && RUNNING_ON_VALGRIND) {
		pool->hooks |= HOOK_VALGRIND;
		/* Blocks are made accessible when they are handed out. */
		VALGRIND_MAKE_MEM_NOACCESS(pool->base,
		                           (size_t)(pool->end - pool->base));
	}
#else
	(void)valgrind;
#endif
	if (trace_open())
		pool->hooks |= HOOK_TRACE;
}

void debug_block_dies(struct pool *pool, void *block)
{
#ifdef HAVE_VALGRIND_MEMCHECK_H
	if (pool->hooks & HOOK_VALGRIND)
		VALGRIND_FREELIKE_BLOCK(block, 0);
#else
	(void)pool;
	(void)block;
#endif
}

bool debug_fail_fallback(struct pool *pool)
{
	uint64_t n = atomic_fetch_add_explicit(&pool->fallback_attempts, 1,
	                                       memory_order_relaxed) +
	             1;
	return n == pool->fail_fallback_at;
}

bool hooks_block_out_slow(struct pool *pool, void *block, bool fresh,
                          unsigned hooks, const char *function)
{
	/* Every byte but word 0 is checked, since word 0 holds the local
	 * link that was just followed.  A free by another thread writes
	 * nothing in the block but the pattern. */
	if ((hooks & HOOK_FILL) && !fresh) {
		open_block(pool, block, hooks);
		if (!fill_intact(block, sizeof(uintptr_t), pool->block_size)) {
			/* The block is quarantined: it stays marked as
			 * handed out, and is never given to anyone.  The
			 * caller takes another block.  Memcheck is told of it
			 * as of a block handed out, which nobody may touch:
			 * pool_destroy() says it dies with every other block
			 * still out. */
#ifdef HAVE_VALGRIND_MEMCHECK_H
			if (hooks & HOOK_VALGRIND)
				VALGRIND_MALLOCLIKE_BLOCK(
				    block, pool->block_size, 0, 0);
#endif
			close_block(pool, block, hooks);
			report_detected(pool, function, block,
			                POOL_ERROR_WRITE_AFTER_FREE);
			return false;
		}
	}
#ifdef HAVE_VALGRIND_MEMCHECK_H
	if (hooks & HOOK_VALGRIND)
		VALGRIND_MALLOCLIKE_BLOCK(block, pool->block_size, 0, fresh);
#endif
	return true;
}

void hooks_block_in_slow(struct pool *pool, void *block, unsigned hooks)
{
	/* Every byte but word 0 is filled, since the free path has just
	 * stored the block's link there. */
	if (hooks & HOOK_FILL) {
		open_block(pool, block, hooks & ~HOOK_VALGRIND);
		memset((uintptr_t *)block + 1, FILL_BYTE,
		       pool->block_size - sizeof(uintptr_t));
	}
#ifdef HAVE_VALGRIND_MEMCHECK_H
	if (hooks & HOOK_VALGRIND)
		VALGRIND_FREELIKE_BLOCK(block, 0);
#endif
}
