/*
 * POOL_SINGLE and POOL_LOCKED: one free list for the whole pool (the
 * caller holds the lock in POOL_LOCKED mode).  The fast paths are inline
 * here; everything else is in list.c.
 *
 * Free blocks are linked through their first word (see struct
 * list_list).  Blocks past `bump` have never been handed out, so
 * pool_init() builds no list (O(1), touches no page) and a block taken
 * from the bump is known to be zero.  One bit per block says whether it
 * is handed out; it turns a double free and a corrupted link into a
 * report instead of a block given to two owners.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SHIFTPOOL_SHARED_H
#define SHIFTPOOL_SHARED_H

#include "hooks.h"

/* list_pop() under Valgrind, where free blocks are inaccessible: the
 * head's link opened for the pop when the head is a free block. */
POOL_COLD void *list_pop_opened(struct pool *pool);

/*
 * Takes the head of the free list: the fast path (the public header's
 * shiftpool_list_pop_(), which programs may inline too).  Returns NULL
 * when the list is empty or its head is not to be trusted (no block of
 * the region, or marked handed out); then nothing changed, and
 * list_alloc_slow() tells which and reports.  Keeping the report out of
 * here leaves the fast path no call to make but tail calls.
 */
POOL_INLINE void *list_pop(struct pool *pool, unsigned hooks)
{
	if (unlikely(hooks & HOOK_VALGRIND))
		return list_pop_opened(pool);
	return shiftpool_list_pop_(fast_of(pool), pool->allocated,
	                           pool->block_count);
}

/* Frees the block of that index.  Returns 0, or the pool_error found;
 * nothing is changed on error. */
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
 * The bulk calls' loops (pool_malloc_bulk(), pool_free_bulk()): what
 * list_pop() and list_free() do, for up to n blocks.  Unhooked pools;
 * lock held in POOL_LOCKED mode.  list_pop_many() returns how many it
 * took; list_free_many() how many it freed before the first pointer it
 * left (outside the region, not handed out), for the caller to free the
 * slow way.
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
	/* block: the head refused, or the link of the last block taken */
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
 * pool_malloc/pool_calloc when list_pop() found nothing: takes the lock
 * in POOL_LOCKED mode, then the head of the list or a never-used block
 * (*fresh).  A corrupted list is dropped (its blocks are lost, never handed
 * out twice) and reported once the lock is released.  NULL when the pool
 * has no block left.
 */
POOL_COLD void *list_alloc_slow(struct pool *pool, bool *fresh,
                                  unsigned hooks);
/* Whether the block of that index is handed out now. */
bool list_block_is_live(struct pool *pool, size_t index);
/*
 * A failed pool_malloc_bulk() taking back what it took, uncounted: mark is
 * list_mark() from before the batch (the never-used blocks it took above
 * it become never used again, so the peak stays).  The pool's blocks of
 * out[0, n) go back; the others (the fallback's) are moved to the start of
 * out[], and their number returned, for the caller to free.
 */
size_t list_mark(struct pool *pool);
size_t list_take_back(struct pool *pool, void **out, size_t n, size_t mark);
/* pool_trim(): gives back the chunks of the region that hold only free
 * blocks; returns the bytes.  Linear in the region, and the pool is held
 * for a bounded step at a time (list.c). */
size_t list_trim(struct pool *pool);
/* fork(), in the child, lock held: a trim the child's thread was not
 * running is undone. */
void list_fork_child(struct pool *pool);
/* The counters of pool_stats(); exact. */
void list_stats(struct pool *pool, pool_stats_t *out);
/* Checks the list's invariant (internal.h) under --enable-debug. */
void list_check(struct pool *pool);

#endif /* SHIFTPOOL_SHARED_H */
