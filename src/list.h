/*
 * POOL_SINGLE and POOL_LOCKED modes: one free list for the whole pool.  In
 * POOL_LOCKED mode the caller holds the lock.  The fast paths are inline
 * here, and everything else is in list.c.
 *
 * Free blocks are linked through their first word (see struct free_list
 * in internal.h).  The blocks from `bump` on have never been handed out,
 * so pool_init() builds no list (it takes constant time and touches no
 * page), and a block taken from the bump is known to be zero.  One bit per
 * block says whether the block is handed out.  The bit turns a double free
 * or a corrupted link into a report, instead of a block given to two
 * owners.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SHIFTPOOL_SHARED_H
#define SHIFTPOOL_SHARED_H

#include "hooks.h"

/* list_pop() under Valgrind, where free blocks are inaccessible to the
 * program.  When the head is a free block, its link is made accessible
 * for the pop, and made inaccessible again if the pop fails. */
POOL_COLD void *list_pop_opened(struct pool *pool);

/*
 * Takes the head of the free list.  This is the fast path: the public
 * header's shiftpool_list_pop_(), which programs may inline too.  Returns
 * NULL when the list is empty, or when its head is not to be trusted (it
 * is not a block of the region, or it is marked handed out).  Nothing has
 * changed then, and list_alloc_slow() finds out which case it is and
 * makes the report.  Keeping the report out of this function leaves the
 * fast path no calls to make other than tail calls.
 */
POOL_INLINE void *list_pop(struct pool *pool, unsigned hooks)
{
	if (unlikely(hooks & HOOK_VALGRIND))
		return list_pop_opened(pool);
	return shiftpool_list_pop_(fast_of(pool), pool->allocated,
	                           pool->block_count);
}

/* Frees block, whose index in the region is index.  Returns 0, or the
 * pool_error that it found; on an error nothing is changed. */
POOL_INLINE int list_free(struct pool *pool, void *block, size_t index,
                            unsigned hooks)
{
	int error =
	    shiftpool_list_push_(fast_of(pool), pool->allocated, block, index);
	if (likely(error == 0))
		hooks_block_in(pool, block, hooks);
	return error;
}

/*
 * The loops of the bulk calls, pool_malloc_bulk() and pool_free_bulk().
 * They do what list_pop() and list_free() do, for up to n blocks.  They
 * serve pools without hooks only, and in POOL_LOCKED mode the caller holds
 * the lock.  list_pop_many() returns how many blocks it took.
 * list_free_many() returns how many blocks it freed before the first
 * pointer that it left alone (one outside the region, or a block that is
 * not handed out), which the caller then frees the slow way.
 */
POOL_INLINE size_t list_pop_many(struct pool *pool, size_t n, void **out)
{
	struct free_list *list = &pool->list;
	const char *base = pool->base;
	const unsigned shift = pool->block_shift;
	const size_t count = pool->block_count;
	const uintptr_t secret = pool->secret;
	char *block = list->head;
	void **next = out, **const end = out + n;
	struct word_cache map;

	word_cache_init(&map, pool->allocated);
	while (next < end) {
		size_t index = slot_from(base, shift, block);
		bool was;
		if (unlikely(index >= count))
			break;
		uint64_t *word = word_cache_at(&map, index);
		*word = word_set(*word, index, &was);
		if (unlikely(was))
			break;
		*next++ = block;
		block = (char *)(uintptr_t)(block_word_load(block, 0) ^
		                            link_key_from(secret, block));
	}
	word_cache_flush(&map);
	size_t got = (size_t)(next - out);
	/* block is now either the head that was refused, or the decoded
	 * link of the last block taken.  Either way it is the new head. */
	list->head = block;
	if (got != 0)
		list->last = next[-1];
	list->allocs += got;
	return got;
}

POOL_INLINE size_t list_free_many(struct pool *pool, size_t n,
                                    void *const *ptrs)
{
	struct free_list *list = &pool->list;
	const char *base = pool->base;
	const unsigned shift = pool->block_shift;
	const size_t count = pool->block_count;
	const uintptr_t secret = pool->secret;
	char *head = list->head;
	struct word_cache map;
	size_t done = 0;

	word_cache_init(&map, pool->allocated);
	for (; done < n; done++) {
		char *block = ptrs[done];
		size_t index = slot_from(base, shift, block);
		bool was;
		if (unlikely(index >= count))
			break;
		uint64_t *word = word_cache_at(&map, index);
		*word = word_clear(*word, index, &was);
		if (unlikely(!was))
			break;
		block_word_store(
		    block, 0, (uintptr_t)head ^ link_key_from(secret, block));
		hooks_block_in(pool, block, 0);
		head = block;
	}
	word_cache_flush(&map);
	list->head = head;
	return done;
}

/*
 * pool_malloc() and pool_calloc() call this when list_pop() found
 * nothing.  It takes the lock in POOL_LOCKED mode, then takes the head of
 * the list or, failing that, another free block; *fresh is set when that
 * block is known to be zero (a never-used block, or one of a chunk that
 * pool_trim() gave back).  A corrupted list is dropped, so that its blocks
 * are lost rather than handed out twice, and the corruption is reported
 * once the lock is released.  Returns NULL when the pool has no block
 * left.
 */
POOL_COLD void *list_alloc_slow(struct pool *pool, bool *fresh,
                                  unsigned hooks);
/*
 * POOL_LOCKED: list_alloc_slow() gave a never-used block of that index;
 * takes the never-used blocks that follow it (the rest of its cache line:
 * n at most), as long as they are the next the pool would hand out (the
 * bump, or the chunk being carved), into out[].  They are handed out,
 * and counted in allocs: the caller takes them off its statistics, as
 * they go on its spares (locked.c, point 7).  Returns how many.
 */
size_t list_take_line(struct pool *pool, size_t index, char **out, size_t n);
/* Returns whether the block with that index is handed out now. */
bool list_block_is_live(struct pool *pool, size_t index);
/*
 * A failed pool_malloc_bulk() takes back what it took, without counting
 * it.  list_mark() returns the bump as it is before the batch, and that
 * value is given to list_take_back() as mark: the never-used blocks that
 * the batch took from mark on become never used again, so the peak stays
 * what it was.  list_take_back() puts the pool's blocks among out[0, n)
 * back.  It moves the other pointers (the fallback's) to the start of
 * out[], and returns how many there are, for the caller to free.
 */
size_t list_mark(struct pool *pool);
size_t list_take_back(struct pool *pool, void **out, size_t n, size_t mark);
/* pool_trim(): gives back the chunks of the region that hold only free
 * blocks, and returns the number of bytes given back.  Its work is linear
 * in the size of the region, and it holds the pool for a bounded step at
 * a time (see list.c). */
size_t list_trim(struct pool *pool);
/* Called in the child after fork(), with the lock held.  A trim that
 * another thread was running at the fork, a thread that the child does
 * not have, is undone. */
void list_fork_child(struct pool *pool);
/* Fills in the counters of pool_stats(), which are exact in these
 * modes. */
void list_stats(struct pool *pool, pool_stats_t *out);
/* Checks the invariant of the list (see struct free_list in internal.h)
 * in a build configured with --enable-debug, and does nothing otherwise. */
void list_check(struct pool *pool);

#endif /* SHIFTPOOL_SHARED_H */
