/*
 * POOL_SINGLE and POOL_LOCKED: the slow paths, the counters and the
 * invariant check of the shared free list (the fast paths are in
 * shared.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "shared.h"

/* ------------------------------------------------------------ lock */

#include <sched.h>

/*
 * A waiter backs off exponentially between looks at the lock, from
 * LOCK_BACKOFF_MIN pauses to LOCK_BACKOFF_MAX, and yields its core once it
 * has waited that long LOCK_YIELD_AFTER times.  Each look takes the lock's
 * cache line (and the list's, at the next acquisition) away from the thread
 * that holds it: under contention, waiters that look less let the holder run
 * many short sections with its lines in its own cache, where looking
 * after every pause made every section wait for the lines to come back.
 */
#define LOCK_BACKOFF_MIN 8
#define LOCK_BACKOFF_MAX 64
#define LOCK_YIELD_AFTER 4

static void pause_for(unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#else
		atomic_signal_fence(memory_order_seq_cst);
#endif
	}
}

void lock_give_way(void)
{
	pause_for(2 * LOCK_BACKOFF_MAX);
	sched_yield();
}

void lock_wait(struct spin_lock *lock)
{
	unsigned backoff = LOCK_BACKOFF_MIN, at_max = 0;

	for (;;) {
		uint32_t expected = 0;
		if (atomic_load_explicit(&lock->state, memory_order_relaxed) ==
		        0 &&
		    atomic_compare_exchange_weak_explicit(
		        &lock->state, &expected, 1, memory_order_acquire,
		        memory_order_relaxed))
			return;
		pause_for(backoff);
		if (backoff < LOCK_BACKOFF_MAX) {
			backoff *= 2;
		} else if (++at_max == LOCK_YIELD_AFTER) {
			at_max = 0;
			sched_yield();
		}
	}
}

/* ------------------------------------------------------------ helpers */

void *shared_pop_opened(struct pool *pool)
{
	char *head = pool->shared.head;
	size_t index = region_slot(pool, head);
	bool open =
	    index < pool->block_count && !bit_test(pool->allocated, index);

	if (open)
		link_open(head, 0);
	void *block = shiftpool_list_pop_(fast_of(pool), pool->allocated,
	                                  pool->block_count);
	if (open && block == NULL)
		link_close(head, 0);
	return block;
}

static void shared_lock(struct pool *pool)
{
	if (pool->mode == POOL_LOCKED)
		lock_acquire(&pool->lock);
}

static void shared_unlock(struct pool *pool)
{
	if (pool->mode == POOL_LOCKED)
		lock_release(&pool->lock);
}

/* The next chunk pool_trim() gave back: its blocks become the carve
 * range.  Lock held; false when there is none. */
static bool take_released_chunk(struct pool *pool)
{
	struct shared_list *list = &pool->shared;
	size_t words = (pool->chunk_count + 63) / 64;

	if (list->released_blocks == 0)
		return false;
	for (size_t w = list->released_cursor / 64; w < words; w++) {
		if (list->released[w] == 0)
			continue;
		size_t chunk =
		    w * 64 + (size_t)__builtin_ctzll(list->released[w]);
		bit_test_and_clear(list->released, chunk);
		list->released_cursor = chunk;
		region_chunk_blocks(pool, chunk, &list->carve,
		                    &list->carve_end);
		list->released_blocks -= list->carve_end - list->carve;
		return true;
	}
	return false;
}

/* After shared_pop() refused: drops a corrupted list (*corrupt names the
 * block whose link was refused), then takes a block that is known to be
 * zero: from a chunk pool_trim() gave back, else a never-used one.  Lock
 * held. */
static void *take_rest(struct pool *pool, void **corrupt)
{
	struct shared_list *list = &pool->shared;

	if (list->head != NULL) {
		/* head is only ever refused when a pop decoded it from
		 * last's link. */
		*corrupt = list->last;
		list->head = NULL;
	}
	size_t index;
	if (list->carve < list->carve_end || take_released_chunk(pool)) {
		index = list->carve++;
	} else if (list->bump < pool->block_count) {
		index = list->bump++;
	} else {
		return NULL;
	}
	if (bit_test_and_set(pool->allocated, index)) {
		*corrupt = region_block(pool, index);
		return NULL;
	}
	list->allocs++;
	return region_block(pool, index);
}

/* Whether every block of a chunk is free and below bump, and the chunk
 * not given back already.  Lock held. */
static bool chunk_is_free(struct pool *pool, size_t chunk)
{
	size_t first, end;
	region_chunk_blocks(pool, chunk, &first, &end);
	if (end > pool->shared.bump || first >= end ||
	    bit_test(pool->shared.released, chunk))
		return false;
	for (size_t i = first; i < end; i++)
		if (bit_test(pool->allocated, i))
			return false;
	return true;
}

/* The chunk of a block. */
static size_t chunk_of(const struct pool *pool, const char *block)
{
	return (size_t)(block - pool->area) >> pool->chunk_shift;
}

/*
 * Takes off the free list every block of the chunks marked in *give (the
 * ones to give back), keeping the others in their order.  A link that
 * must not be followed ends the walk: the list is cut there, the blocks
 * behind it lost (never handed out twice), and *corrupt names the block.
 * Lock held.
 */
static void unlink_chunks(struct pool *pool, const uint64_t *give,
                          void **corrupt)
{
	struct shared_list *list = &pool->shared;
	char *block = list->head, *from = NULL;
	char *kept = NULL, *kept_tail = NULL;
	size_t walked = 0;

	while (block != NULL) {
		size_t index = region_slot(pool, block);
		if (index >= list->bump || bit_test(pool->allocated, index) ||
		    walked++ >= list->bump) {
			*corrupt = from != NULL ? from : list->last;
			break;
		}
		char *next =
		    (char *)(uintptr_t)link_load(pool, block, pool->hooks);
		if (!bit_test(give, chunk_of(pool, block))) {
			if (kept_tail != NULL)
				link_store(pool, kept_tail, (uintptr_t)block,
				           pool->hooks);
			else
				kept = block;
			kept_tail = block;
		}
		from = block;
		block = next;
	}
	if (kept_tail != NULL)
		link_store(pool, kept_tail, 0, pool->hooks);
	list->head = kept;
}

/* Blocks handed out now: the bits set below bump.  Lock held. */
static size_t handed_out(const struct pool *pool)
{
	size_t count = 0;
	for (size_t w = 0; w < (pool->shared.bump + 63) / 64; w++)
		count += (size_t)__builtin_popcountll(pool->allocated[w]);
	return count;
}

/* ------------------------------------------------------------ internal API */

void *shared_alloc_slow(struct pool *pool, bool *fresh, unsigned hooks)
{
	void *corrupt = NULL;

	shared_lock(pool);
	void *block = shared_pop(pool, hooks);
	*fresh = block == NULL;
	if (block == NULL)
		block = take_rest(pool, &corrupt);
	shared_unlock(pool);
	/* Never with the lock held: the handler may call the library. */
	if (corrupt != NULL)
		report_corrupted(pool, corrupt);
	return block;
}

/* Runs of chunks pool_trim() gives back with one system call each; more
 * runs than this take another walk of the list. */
#define TRIM_RUNS 32

size_t shared_trim(struct pool *pool)
{
	struct shared_list *list = &pool->shared;
	void *corrupt = NULL;
	size_t bytes = 0, first, end;
	size_t run_lo[TRIM_RUNS], run_hi[TRIM_RUNS];

	if (pool->flags & POOL_LOCK_MEMORY)
		return 0;
	shared_lock(pool);
	for (size_t c = 0; c < pool->chunk_count && corrupt == NULL;) {
		/* The next runs of chunks that became free since the last
		 * trim, marked given back... */
		unsigned runs = 0;
		for (; c < pool->chunk_count && runs < TRIM_RUNS; c++) {
			if (!chunk_is_free(pool, c))
				continue;
			bit_test_and_set(list->released, c);
			region_chunk_blocks(pool, c, &first, &end);
			list->released_blocks += end - first;
			if (list->carve >= first && list->carve < end)
				list->carve = list->carve_end = 0;
			if (c < list->released_cursor)
				list->released_cursor = c;
			if (runs > 0 && run_hi[runs - 1] == c)
				run_hi[runs - 1] = c + 1;
			else
				run_lo[runs] = c, run_hi[runs++] = c + 1;
		}
		if (runs == 0)
			break;
		/* ...off the list while their links are still there, then
		 * their pages gone. */
		unlink_chunks(pool, list->released, &corrupt);
		for (unsigned r = 0; r < runs; r++)
			bytes += region_give_back(
			    pool, region_chunk_address(pool, run_lo[r]),
			    region_chunk_address(pool, run_hi[r]));
		/* A trim is long and rare: between its batches it lets the
		 * threads that wait for the lock (backing off) have it. */
		if (pool->mode == POOL_LOCKED && corrupt == NULL) {
			shared_unlock(pool);
			lock_give_way();
			shared_lock(pool);
		}
	}
	shared_check(pool);
	shared_unlock(pool);
	/* A program may trim in a loop: the lock goes to the waiters in
	 * between. */
	if (pool->mode == POOL_LOCKED)
		lock_give_way();
	if (corrupt != NULL)
		report_corrupted(pool, corrupt);
	return bytes;
}

size_t shared_mark(struct pool *pool)
{
	shared_lock(pool);
	size_t bump = pool->shared.bump;
	shared_unlock(pool);
	return bump;
}

size_t shared_take_back(struct pool *pool, void **out, size_t n, size_t mark)
{
	struct shared_list *list = &pool->shared;
	unsigned hooks = pool->hooks;
	size_t left = 0;

	shared_lock(pool);
	/* Last taken first: the never-used blocks the batch took from the
	 * top of bump are at the top still (unless another thread took
	 * more meanwhile), and the list gets back its order. */
	for (size_t i = n; i-- > 0;) {
		char *block = out[i];
		size_t index = region_slot(pool, block);
		if (index >= pool->block_count ||
		    !bit_test_and_clear(pool->allocated, index)) {
			/* The fallback's, kept at the end of what was
			 * seen. */
			out[n - 1 - left++] = block;
			continue;
		}
		list->allocs--;
		if (index + 1 == list->bump && index >= mark) {
			/* Never used again: zero, as the caller never had
			 * it, and the peak is what it was. */
			hooks_block_expose(pool, block);
			memset(block, 0, pool->block_size);
			hooks_block_in(pool, block, hooks & ~HOOK_FILL);
			list->bump--;
			continue;
		}
		block_word_store(block, 0,
		                 (uintptr_t)list->head ^ link_key(pool, block));
		list->head = block;
		hooks_block_in(pool, block, hooks);
	}
	shared_check(pool);
	shared_unlock(pool);
	memmove(out, out + n - left, left * sizeof *out);
	return left;
}

bool shared_block_is_live(struct pool *pool, size_t index)
{
	shared_lock(pool);
	bool live = bit_test(pool->allocated, index);
	shared_unlock(pool);
	return live;
}

void shared_stats(struct pool *pool, pool_stats_t *out)
{
	shared_lock(pool);
	shared_check(pool);
	out->allocs = pool->shared.allocs;
	out->in_use = handed_out(pool);
	out->frees = pool->shared.allocs - out->in_use;
	/* The free list is used before the bump, so in_use reaches a new
	 * high only when it equals bump: the peak is exactly bump. */
	out->peak_in_use = pool->shared.bump;
	shared_unlock(pool);
	out->fallback_allocs =
	    atomic_load_explicit(&pool->fallback_allocs, memory_order_relaxed);
	out->fallback_frees =
	    atomic_load_explicit(&pool->fallback_frees, memory_order_relaxed);
}

#ifdef SHIFTPOOL_ASSERTIONS
void shared_check(struct pool *pool)
{
	struct shared_list *list = &pool->shared;
	size_t listed = 0, index;
	char *block = list->head;

	/* A list that holds a link the fast path would refuse is reported
	 * when met; check only a list that is whole. */
	for (; (index = region_slot(pool, block)) < list->bump;
	     block = (char *)(uintptr_t)link_load(pool, block, pool->hooks)) {
		if (bit_test(pool->allocated, index) || listed >= list->bump)
			return;
		listed++;
	}
	if (block != NULL)
		return;
	/* Every block below bump is handed out, listed, in a chunk given
	 * back, or still to carve, once. */
	assert(listed + handed_out(pool) + list->released_blocks +
	           (list->carve_end - list->carve) ==
	       list->bump);
	assert(handed_out(pool) <= list->allocs);
}
#else
void shared_check(struct pool *pool)
{
	(void)pool;
}
#endif
