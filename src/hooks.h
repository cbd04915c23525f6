/*
 * What a pool does besides handing out blocks, and how it costs nothing when
 * it is off:
 *
 *  - The links of the free lists are stored encoded with a per-pool secret
 *    and the block's own address (in the manner of glibc's safe-linking), and
 *    every decoded link is checked before it is followed.  Always on.
 *  - In an AddressSanitizer build (configure --enable-sanitizers=address),
 *    free blocks are poisoned and a block handed out is unpoisoned exactly to
 *    the requested size.
 *  - At run time, pool->hooks selects: describing blocks to Valgrind's
 *    memcheck (when running under it), the debug fill pattern, the trace.
 *    Every fast path is compiled twice: with hooks a constant 0 (the code
 *    that pools without hooks run, where all of this folds away) and with
 *    hooks read from the pool (the code that hooked pools run).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SHIFTPOOL_HOOKS_H
#define SHIFTPOOL_HOOKS_H

#include "internal.h"

#ifdef SHIFTPOOL_ASAN
#include <sanitizer/asan_interface.h>
#endif
#ifdef HAVE_VALGRIND_MEMCHECK_H
#include <valgrind/memcheck.h>
#include <valgrind/valgrind.h>
#endif

/* ------------------------------------------------------------ hooks */

#define HOOK_VALGRIND 0x1u /* describe blocks to memcheck */
#define HOOK_FILL 0x2u     /* fill free blocks, verify when handed out */
#define HOOK_TRACE 0x4u    /* log every call to the trace file */

#define FILL_BYTE 0xdb
/* Words 0 and 1 of a free block hold the local and the remote link. */
#define LINK_WORDS 2

/* The out-of-line halves, in debug.c. */
POOL_COLD void hooks_block_out_slow(struct pool *pool, void *block,
                                    bool fresh, unsigned hooks);
POOL_COLD void hooks_block_in_slow(struct pool *pool, void *block,
                                   unsigned hooks);

/* A block is handed out for size bytes (fresh: never used before). */
POOL_INLINE void hooks_block_out(struct pool *pool, void *block, size_t size,
                                 bool fresh, unsigned hooks)
{
	if (unlikely(hooks))
		hooks_block_out_slow(pool, block, fresh, hooks);
#ifdef SHIFTPOOL_ASAN
	ASAN_POISON_MEMORY_REGION(block, pool->block_size);
	ASAN_UNPOISON_MEMORY_REGION(block, size);
#else
	(void)size;
#endif
}

/* A handed-out block is about to go back on a free list. */
POOL_INLINE void hooks_block_in(struct pool *pool, void *block,
                                unsigned hooks)
{
	if (unlikely(hooks))
		hooks_block_in_slow(pool, block, hooks);
#ifdef SHIFTPOOL_ASAN
	ASAN_POISON_MEMORY_REGION(block, pool->block_size);
#endif
}

/* ------------------------------------------------------------ links */

/*
 * The raw words of a free block.  Under ASan the block is poisoned and
 * these accesses are the pool's own, so they are not instrumented (and
 * therefore not inlined: GCC will not inline across that attribute).
 */
#ifdef SHIFTPOOL_ASAN
#define LINK_ACCESS static __attribute__((noinline, no_sanitize_address))
#else
#define LINK_ACCESS POOL_INLINE
#endif

LINK_ACCESS uintptr_t block_word_load(const void *block, int word)
{
	return ((const uintptr_t *)block)[word];
}

LINK_ACCESS void block_word_store(void *block, int word, uintptr_t value)
{
	((uintptr_t *)block)[word] = value;
}

POOL_INLINE uintptr_t link_word_load(void *block, int word, unsigned hooks)
{
	uintptr_t value;
#ifdef HAVE_VALGRIND_MEMCHECK_H
	if (unlikely(hooks & HOOK_VALGRIND)) {
		uintptr_t *slot = (uintptr_t *)block + word;
		VALGRIND_MAKE_MEM_DEFINED(slot, sizeof *slot);
		value = block_word_load(block, word);
		VALGRIND_MAKE_MEM_NOACCESS(slot, sizeof *slot);
		return value;
	}
#else
	(void)hooks;
#endif
	value = block_word_load(block, word);
	return value;
}

POOL_INLINE void link_word_store(void *block, int word, uintptr_t value,
                                 unsigned hooks)
{
#ifdef HAVE_VALGRIND_MEMCHECK_H
	if (unlikely(hooks & HOOK_VALGRIND)) {
		uintptr_t *slot = (uintptr_t *)block + word;
		VALGRIND_MAKE_MEM_UNDEFINED(slot, sizeof *slot);
		block_word_store(block, word, value);
		VALGRIND_MAKE_MEM_NOACCESS(slot, sizeof *slot);
		return;
	}
#else
	(void)hooks;
#endif
	block_word_store(block, word, value);
}

/*
 * The local link (word 0): the next free block, stored xor the pool's
 * secret and the block's own address, so a stray write of a plausible
 * pointer, or a copy of a link into another block, decodes to garbage that
 * the checks reject.  NULL encodes too.
 */
POOL_INLINE void *link_load(const struct pool *pool, void *block,
                            unsigned hooks)
{
	return (void *)(link_word_load(block, 0, hooks) ^ pool->secret ^
	                (uintptr_t)block);
}

POOL_INLINE void link_store(const struct pool *pool, void *block, void *next,
                            unsigned hooks)
{
	link_word_store(block, 0,
	                (uintptr_t)next ^ pool->secret ^ (uintptr_t)block, hooks);
}

/* Whether a decoded local link may be followed: NULL, or a block start. */
POOL_INLINE bool link_is_valid(const struct pool *pool, const void *next)
{
	return next == NULL ||
	       (region_contains(pool, next) && region_is_block_start(pool, next));
}

/* The remote link (word 1): a span-relative index + 1, encoded likewise. */
POOL_INLINE uint32_t remote_link_load(const struct pool *pool, void *block,
                                      unsigned hooks)
{
	return (uint32_t)(link_word_load(block, 1, hooks) ^ pool->secret);
}

POOL_INLINE void remote_link_store(const struct pool *pool, void *block,
                                   uint32_t next, unsigned hooks)
{
	link_word_store(block, 1, (uintptr_t)next ^ pool->secret, hooks);
}

#endif /* SHIFTPOOL_HOOKS_H */
