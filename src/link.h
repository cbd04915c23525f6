/*
 * The links of the free lists, which are stored inside the free blocks.
 * The following holds in every pool:
 *
 *  - Each link is stored encoded with a secret of the pool and with the
 *    address of the block that holds it.  This is done in the manner of
 *    glibc's safe-linking, but mixed so that a link copied into another
 *    block does not decode to the start of a block.  Every decoded link is
 *    checked before it is followed.
 *  - Word 0 of a free block holds the local link: the link of the free list
 *    in POOL_SINGLE and POOL_LOCKED mode, or of a span's local list in
 *    POOL_PER_THREAD mode.  Word 1 of a block on a POOL_LOCKED thread's
 *    stack holds its tag (below).
 *  - Under Valgrind (HOOK_VALGRIND) a free block is inaccessible to the
 *    program, so the pool makes accessible exactly the word that it reads
 *    or writes, and only while it does.  Under AddressSanitizer, the pool's
 *    own accesses to these words are not instrumented.
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

/* Under HOOK_FILL, every byte of a free block holds FILL_BYTE (and every
 * word FILL_WORD), except the words that hold live links. */
#define FILL_BYTE 0xdb
#define FILL_WORD ((uintptr_t)0xdbdbdbdbdbdbdbdbull)

/* Read and write a raw word of a free block, through the accessors of the
 * public header.  In an AddressSanitizer build, internal.h defines these
 * two functions instead, so that the accesses are not instrumented. */
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

/* Under Valgrind a free block is inaccessible to the program.
 * link_open() makes word `word` of a free block accessible for the pool's
 * own access, and link_close() makes it inaccessible again. */
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
 * The key of a block's links: the pool's secret, xor the block's address
 * multiplied by an odd constant (shiftpool_key_() in the public header).
 * The multiplication matters.  With a plain xor of the address, a link
 * copied from block B into block A would decode to next(B) ^ B ^ A, which
 * is often another block of the region.  With the multiplication, the
 * difference lands in the high bits, and the check rejects the link.  The
 * constant is an odd 32-bit number, sign-extended, so that the
 * multiplication is one instruction with an immediate operand.  The low 4
 * bits of the key are zero, because blocks are aligned to at least 16
 * bytes and make_secret() clears those bits of the secret, so a link keeps
 * its alignment when it is encoded.
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
 * The local link (word 0), as it is stored: the next block's address, xor
 * the key.  What it decodes to is not to be trusted.  The free list of
 * POOL_SINGLE and POOL_LOCKED checks a head with region_slot(), and a span
 * checks the head's index in the span against its capacity, before either
 * follows it, so a damaged link is refused and never followed.
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

/*
 * POOL_LOCKED's tag (locked.c, point 2): word 1 of a block on a thread's
 * stack holds it, a value of the pool's secret and the block's address
 * mixed otherwise than the links' keys, so that neither a link nor a
 * program's data is taken for it but by a chance of 2^-64.  Other threads
 * may race on it (a double free), so it is read and written atomically;
 * in an AddressSanitizer build without instrumentation, because the pool
 * reads it in blocks that are poisoned (free).
 */
POOL_INLINE uintptr_t stack_tag(const struct pool *pool, const void *block)
{
	uint64_t mix =
	    (uint64_t)(uintptr_t)block * UINT64_C(0xc2b2ae3d27d4eb4f);
	return (uintptr_t)((uint64_t)pool->secret ^ (mix >> 23 | mix << 41) ^
	                   UINT64_C(0x5bd1e9955bd1e995));
}

#ifdef SHIFTPOOL_ASAN
#define TAG_ACCESS static __attribute__((noinline, no_sanitize_address, unused))
#else
#define TAG_ACCESS POOL_INLINE
#endif

TAG_ACCESS uintptr_t tag_load(const void *block)
{
	return __atomic_load_n((const uintptr_t *)block + 1, __ATOMIC_RELAXED);
}

TAG_ACCESS void tag_store(void *block, uintptr_t value)
{
	__atomic_store_n((uintptr_t *)block + 1, value, __ATOMIC_RELAXED);
}

/* Word 1 from *expected to desired if it holds *expected; else false and
 * *expected what it holds.  Sequentially consistent. */
TAG_ACCESS bool tag_swap(void *block, uintptr_t *expected, uintptr_t desired)
{
	return __atomic_compare_exchange_n((uintptr_t *)block + 1, expected,
	                                   desired, false, __ATOMIC_SEQ_CST,
	                                   __ATOMIC_SEQ_CST);
}

/* Word 1 set to desired; returns what it held.  Sequentially
 * consistent. */
TAG_ACCESS uintptr_t tag_exchange(void *block, uintptr_t desired)
{
	return __atomic_exchange_n((uintptr_t *)block + 1, desired,
	                           __ATOMIC_SEQ_CST);
}

#undef TAG_ACCESS

#endif /* SHIFTPOOL_LINK_H */
