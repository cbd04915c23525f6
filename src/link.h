/*
 * The links of the free lists, stored inside the free blocks.  Always on:
 *
 *  - Each link is stored encoded with a per-pool secret and the block's own
 *    address (in the manner of glibc's safe-linking, but mixed so that a
 *    link copied into another block does not decode to a block start), and
 *    every decoded link is checked before it is followed.
 *  - Word 0 of a free block holds the local link (the free list of
 *    POOL_SINGLE and POOL_LOCKED, a span's local list in POOL_PER_THREAD),
 *    word 1 the remote link of POOL_PER_THREAD.
 *  - Under Valgrind (HOOK_VALGRIND) a free block is inaccessible to the
 *    program, so the pool opens exactly the word it reads or writes; under
 *    AddressSanitizer the pool's own accesses are not instrumented.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SHIFTPOOL_LINK_H
#define SHIFTPOOL_LINK_H

#include "internal.h"

#ifdef HAVE_VALGRIND_MEMCHECK_H
#include <valgrind/memcheck.h>
#include <valgrind/valgrind.h>
#endif

/* Words 0 and 1 of a free block hold the local and the remote link. */
#define LINK_WORDS 2

/* What a free block holds under HOOK_FILL, but for its live links. */
#define FILL_BYTE 0xdb
#define FILL_WORD ((uintptr_t)0xdbdbdbdbdbdbdbdbull)

/* The raw words of a free block: the public header's accessors (not
 * instrumented in an AddressSanitizer build, see internal.h). */
#ifndef SHIFTPOOL_ASAN
POOL_INLINE uintptr_t block_word_load(const void *block, int word)
{
	return SHIFTPOOL_LINK_LOAD_(block, word);
}

POOL_INLINE void block_word_store(void *block, int word, uintptr_t value)
{
	SHIFTPOOL_LINK_STORE_(block, word, value);
}
#endif

/* Under Valgrind a free block is inaccessible to the program: word `word`
 * of one opened for the pool's own access, and closed again. */
POOL_INLINE void link_open(void *block, int word)
{
#ifdef HAVE_VALGRIND_MEMCHECK_H
	VALGRIND_MAKE_MEM_DEFINED((uintptr_t *)block + word, sizeof(uintptr_t));
#else
	(void)block;
	(void)word;
#endif
}

POOL_INLINE void link_close(void *block, int word)
{
#ifdef HAVE_VALGRIND_MEMCHECK_H
	VALGRIND_MAKE_MEM_NOACCESS((uintptr_t *)block + word,
	                           sizeof(uintptr_t));
#else
	(void)block;
	(void)word;
#endif
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
 * The key of a block's links: the pool's secret xor the block's address
 * multiplied by an odd constant (shiftpool_key_() in the public header).
 * The multiplication matters: with a plain xor of the address, a link
 * copied from block B into block A would decode to next(B) ^ B ^ A, often
 * another block of the region; multiplied, the difference lands in the
 * high bits and the check rejects it.  The constant is an odd 32-bit one,
 * sign-extended: one multiply by an immediate.  The low 4 bits of the key
 * are zero (16-byte blocks, see make_secret()), so alignment survives
 * encoding.
 */
POOL_INLINE uint64_t link_key_from(uintptr_t secret, const void *block)
{
	return shiftpool_key_(secret, block);
}

POOL_INLINE uint64_t link_key(const struct pool *pool, const void *block)
{
	return link_key_from(pool->secret, block);
}

/*
 * The local link (word 0), as stored: a block's address (the shared list)
 * or a span-relative index (a span's lists), xor the key.  What it decodes
 * to is not to be trusted: the shared list checks a head with
 * region_slot() and a span checks it against its capacity before either
 * follows it, so a damaged link is refused, never followed.
 */
POOL_INLINE uint64_t link_load(const struct pool *pool, void *block,
                               unsigned hooks)
{
	return (uint64_t)link_word_load(block, 0, hooks) ^
	       link_key(pool, block);
}

POOL_INLINE void link_store(const struct pool *pool, void *block, uint64_t next,
                            unsigned hooks)
{
	link_word_store(block, 0, (uintptr_t)(next ^ link_key(pool, block)),
	                hooks);
}

/* The remote link (word 1): a span-relative index + 1, encoded with the
 * key turned by half a word (so that word 0 copied into word 1 does not
 * decode), and decoded whole: damage to any of its bytes is seen. */
POOL_INLINE uint64_t remote_key(const struct pool *pool, const void *block)
{
	uint64_t key = link_key(pool, block);
	return key >> 32 | key << 32;
}

POOL_INLINE uint64_t remote_link_load(const struct pool *pool, void *block,
                                      unsigned hooks)
{
	return (uint64_t)link_word_load(block, 1, hooks) ^
	       remote_key(pool, block);
}

POOL_INLINE void remote_link_store(const struct pool *pool, void *block,
                                   uint64_t next, unsigned hooks)
{
	link_word_store(block, 1, (uintptr_t)(next ^ remote_key(pool, block)),
	                hooks);
}

#endif /* SHIFTPOOL_LINK_H */
