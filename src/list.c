/*
 * POOL_SINGLE and POOL_LOCKED modes: the slow paths of the free list that
 * lives in the blocks, pool_trim(), the counters and the invariant check.
 * The fast paths are in list.h, and POOL_LOCKED's lock is in lock.c.
 *
 * SPDX-License-Identifier: MIT
 */
#include "list.h"

/* ------------------------------------------------------------ trim's work */

/*
 * The build for tests/trim-work defines SHIFTPOOL_TRIM_COUNTERS; the
 * library itself is never built with it.  That build counts the work that
 * pool_trim() does, in units of work (a block or a bitmap word looked at,
 * or a system call): the total, and the most done during any one time that
 * it held the pool.  It also calls a hook between the times that it holds
 * the pool, so that the test can use the pool there.
 */
#ifdef SHIFTPOOL_TRIM_COUNTERS
uint64_t shiftpool_test_trim_work, shiftpool_test_trim_hold_max;
void (*shiftpool_test_trim_between)(pool_t *pool);
static uint64_t trim_hold;
#define TRIM_WORK(n)      (shiftpool_test_trim_work += (n), trim_hold += (n))
#define TRIM_HOLD_START() (trim_hold = 0)
#define TRIM_HOLD_END()                                                        \
	(shiftpool_test_trim_hold_max =                                        \
	     trim_hold > shiftpool_test_trim_hold_max                          \
	         ? trim_hold                                                   \
	         : shiftpool_test_trim_hold_max)
#define TRIM_BETWEEN(pool)                                                     \
	(shiftpool_test_trim_between ? shiftpool_test_trim_between(pool)       \
	                             : (void)0)
#else
#define TRIM_WORK(n)       ((void)0)
#define TRIM_HOLD_START()  ((void)0)
#define TRIM_HOLD_END()    ((void)0)
#define TRIM_BETWEEN(pool) ((void)0)
#endif

/* ------------------------------------------------------------ helpers */

void *list_pop_opened(struct pool *pool)
{
	char *head = pool->list.head;
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

static void list_lock(struct pool *pool)
{
	if (pool->mode == POOL_LOCKED)
		lock_acquire(&pool->lock);
}

static void list_unlock(struct pool *pool)
{
	if (pool->mode == POOL_LOCKED)
		lock_release(&pool->lock);
}

/* Takes the next chunk that pool_trim() gave back, whose blocks become the
 * range to carve.  Returns false when there is none.  The caller holds the
 * lock. */
static bool take_released_chunk(struct pool *pool)
{
	struct free_list *list = &pool->list;
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

/* ------------------------------------------------------------ trim */

/* Returns the number of the chunk that holds a block. */
static size_t chunk_of(const struct pool *pool, const char *block)
{
	return (size_t)(block - pool->area) >> pool->chunk_shift;
}

/*
 * pool_trim() gives back the pages of the chunks whose blocks are all
 * free.  The free list runs through those blocks in any order, so taking
 * them off it one chunk at a time would walk the list once per chunk, all
 * the while holding the pool.  Instead, a trim works in steps of at most
 * TRIM_STEP units of work (a block or a bitmap word looked at; a system
 * call counts as TRIM_CALL units), and lets go of the pool between them:
 *
 *  1. It takes the whole free list, and the pool's list starts empty
 *     again: blocks freed from then on go there.  It sorts the list it
 *     took, one block at a time.  A block whose chunk holds only free
 *     blocks is held aside: its bit is set in held[], and it is on no
 *     list.  Any other block goes back on the pool's list.
 *  2. It walks the chunks that hold blocks held aside, in address order.
 *     A chunk whose blocks are all held aside is given back: its pages are
 *     dropped, the chunk is marked released, and its blocks are zero when
 *     they are handed out again.  The blocks held aside in any other chunk
 *     (one of whose blocks was taken meanwhile) go back on the pool's
 *     list.
 *
 * Each block is sorted once and each chunk is walked once, so the work
 * grows with the region, and no step holds the pool longer than TRIM_STEP
 * units.  Between the steps the pool serves every call.  When its list is
 * empty, a block comes from the list being sorted, then from a chunk given
 * back or from the never-used blocks, and last from the blocks held aside
 * (see take_rest()), so a trim never makes an allocation fail.  Only a
 * chunk whose pages the system dropped counts as given back (under
 * mlockall() the system refuses to drop them).  The blocks of any other
 * chunk go back on the list with what they hold.
 */
#define TRIM_STEP 1024
#define TRIM_CALL 32

/* The work done so far in the current step of a trim, and what the whole
 * trim has to tell at its end. */
struct trim_step {
	size_t spent;
	size_t bytes;  /* the bytes given back by the trim */
	void *corrupt; /* a block whose link must not be followed: reported */
};

static void spend(struct trim_step *step, size_t work)
{
	step->spent += work;
	TRIM_WORK(work);
}

/* Returns the mask of bits [i, stop) within their 64-bit word.  The bits
 * must lie in one word: stop - i <= 64 - i % 64. */
static uint64_t bits_mask(size_t i, size_t stop)
{
	size_t n = stop - i;
	return (n >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1) << (i & 63);
}

/* Returns whether every bit of [first, end) in map is set (when set is
 * true) or clear (when set is false). */
static bool bits_all(const uint64_t *map, size_t first, size_t end, bool set,
                     struct trim_step *step)
{
	for (size_t i = first; i < end;) {
		size_t stop = ((i >> 6) + 1) << 6;
		if (stop > end)
			stop = end;
		uint64_t mask = bits_mask(i, stop);
		spend(step, 1);
		if ((map[i >> 6] & mask) != (set ? mask : 0))
			return false;
		i = stop;
	}
	return true;
}

/* Puts a free block on the pool's list.  The caller holds the lock. */
static void list_push(struct pool *pool, char *block)
{
	link_store(pool, block, (uintptr_t)pool->list.head, pool->hooks);
	pool->list.head = block;
}

/*
 * Takes the first block of the list that a trim sorts.  Returns NULL when
 * that list is empty, or when the link to its first block must not be
 * followed: the block is not a free block below bump, or the list holds
 * more blocks than there were when the trim took it.  In that second case
 * *corrupt names the block whose link it was, and the rest of the list is
 * dropped: its blocks are lost, and never handed out twice.  The caller
 * holds the lock.
 */
static char *sorting_take(struct pool *pool, void **corrupt)
{
	struct free_list *list = &pool->list;
	char *block = list->sorting;

	if (block == NULL)
		return NULL;
	size_t index = region_slot(pool, block);
	if (index >= list->bump || bit_test(pool->allocated, index) ||
	    bit_test(list->held, index) || list->sorting_left == 0) {
		*corrupt = list->sorting_last;
		list->sorting = NULL;
		list->damaged = true;
		return NULL;
	}
	list->sorting_left--;
	list->sorting = (char *)(uintptr_t)link_load(pool, block, pool->hooks);
	list->sorting_last = block;
	return block;
}

/* Returns whether a chunk may be given back as things stand now: it holds
 * blocks, every one of them has been used (it lies below bump) and is free
 * now, and the chunk is neither given back already nor being carved.  The
 * caller holds the lock. */
static bool chunk_may_go(struct pool *pool, size_t chunk,
                         struct trim_step *step)
{
	struct free_list *list = &pool->list;
	size_t first, end;

	region_chunk_blocks(pool, chunk, &first, &end);
	if (end > list->bump || first >= end ||
	    bit_test(list->released, chunk) ||
	    (list->carve < list->carve_end && list->carve >= first &&
	     list->carve < end))
		return false;
	return bits_all(pool->allocated, first, end, false, step);
}

/* Puts the blocks held aside among [first, end) back on the pool's list.
 * The caller holds the lock. */
static void unhold(struct pool *pool, size_t first, size_t end,
                   struct trim_step *step)
{
	struct free_list *list = &pool->list;

	for (size_t i = first; i < end; i++) {
		spend(step, 1);
		if (bit_test_and_clear(list->held, i)) {
			list->held_blocks--;
			list_push(pool, region_block(pool, i));
		}
	}
}

/* Gives back the chunks [lo, hi), whose blocks are all held aside.  The
 * blocks of a chunk whose pages the system will not drop go back on the
 * list.  The caller holds the lock. */
static void give_back_chunks(struct pool *pool, size_t lo, size_t hi,
                             struct trim_step *step)
{
	struct free_list *list = &pool->list;
	size_t first, end;

	spend(step, TRIM_CALL);
	if (!region_drop_pages(region_chunk_address(pool, lo),
	                       region_chunk_address(pool, hi))) {
		/* The chunks are tried one at a time, so that each chunk
		 * whose pages are dropped counts as given back. */
		if (hi - lo > 1) {
			for (size_t c = lo; c < hi; c++)
				give_back_chunks(pool, c, c + 1, step);
		} else {
			region_chunk_blocks(pool, lo, &first, &end);
			unhold(pool, first, end, step);
		}
		return;
	}
	for (size_t c = lo; c < hi; c++) {
		region_chunk_blocks(pool, c, &first, &end);
		for (size_t i = first; i < end; i++)
			bit_test_and_clear(list->held, i);
		spend(step, end - first);
		list->held_blocks -= end - first;
		list->released_blocks += end - first;
		bit_test_and_set(list->released, c);
		if (c < list->released_cursor)
			list->released_cursor = c;
	}
	step->bytes += (size_t)(region_chunk_address(pool, hi) -
	                        region_chunk_address(pool, lo));
}

/* Does one step of a trim, of about TRIM_STEP units of work.  It sorts the
 * list that the trim took or, once that is done, walks the chunks that
 * hold blocks held aside.  Returns whether work is left.  The caller holds
 * the lock. */
static bool trim_step(struct pool *pool, struct trim_step *step)
{
	struct free_list *list = &pool->list;
	size_t run_lo = 0, run_hi = 0, first, end;

	step->spent = 0;
	while (list->sorting != NULL && step->spent < TRIM_STEP) {
		spend(step, 1);
		char *block = sorting_take(pool, &step->corrupt);
		if (block == NULL)
			break;
		size_t chunk = chunk_of(pool, block);
		if (!chunk_may_go(pool, chunk, step)) {
			list_push(pool, block);
			continue;
		}
		bit_test_and_set(list->held, region_slot(pool, block));
		list->held_blocks++;
		if (chunk < list->held_lo)
			list->held_lo = chunk;
		if (chunk > list->held_hi)
			list->held_hi = chunk;
	}
	if (list->sorting != NULL)
		return true;
	while (list->held_blocks > 0 && list->held_lo <= list->held_hi &&
	       step->spent < TRIM_STEP) {
		size_t c = list->held_lo++;
		region_chunk_blocks(pool, c, &first, &end);
		if (first >= end ||
		    bits_all(list->held, first, end, false, step))
			continue;
		if (!bits_all(list->held, first, end, true, step) ||
		    !bits_all(pool->allocated, first, end, false, step) ||
		    bit_test(list->released, c)) {
			unhold(pool, first, end, step);
		} else if (run_hi == c) {
			run_hi = c + 1;
		} else {
			if (run_hi != run_lo)
				give_back_chunks(pool, run_lo, run_hi, step);
			run_lo = c;
			run_hi = c + 1;
		}
	}
	if (run_hi != run_lo)
		give_back_chunks(pool, run_lo, run_hi, step);
	return list->held_blocks > 0;
}

/* Takes back a block that the running trim holds aside, for when the pool
 * has no other block, and returns its index.  It takes the first one from
 * chunk held_lo on, since no block below that chunk is held aside.  The
 * caller holds the lock, and held_blocks is not 0. */
static size_t held_take(struct pool *pool)
{
	struct free_list *list = &pool->list;
	size_t first, end;

	region_chunk_blocks(pool, list->held_lo, &first, &end);
	for (size_t w = first / 64;; w++) {
		if (list->held[w] == 0)
			continue;
		size_t index = w * 64 + (size_t)__builtin_ctzll(list->held[w]);
		list->held[w] &= list->held[w] - 1;
		list->held_blocks--;
		list->held_lo = chunk_of(pool, region_block(pool, index));
		return index;
	}
}

/* Called after list_pop() refused the head of the list.  A list that is
 * not empty is then corrupted: it is dropped, and *corrupt names the block
 * whose link was refused.  Then a block is taken from the list that a trim
 * sorts; failing that, a block known to be zero (and *fresh is set), from
 * a chunk that pool_trim() gave back or from the never-used blocks;
 * failing that, a block that a trim holds aside.  The caller holds the
 * lock. */
static void *take_rest(struct pool *pool, bool *fresh, void **corrupt)
{
	struct free_list *list = &pool->list;
	char *block;
	size_t index;

	if (list->head != NULL) {
		/* A head is refused only after a pop decoded it from the
		 * link of last, so last is the block to report. */
		*corrupt = list->last;
		list->head = NULL;
		list->damaged = true;
	}
	*fresh = false;
	if ((block = sorting_take(pool, corrupt)) != NULL) {
		index = region_slot(pool, block);
	} else if (list->carve < list->carve_end || take_released_chunk(pool)) {
		index = list->carve++;
		*fresh = true;
	} else if (list->bump < pool->block_count) {
		index = list->bump++;
		*fresh = true;
	} else if (list->held_blocks > 0) {
		index = held_take(pool);
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

/* Returns the number of blocks handed out now: the bits set in
 * allocated[] below bump.  The caller holds the lock. */
static size_t handed_out(const struct pool *pool)
{
	size_t count = 0;
	for (size_t w = 0; w < (pool->list.bump + 63) / 64; w++)
		count += (size_t)__builtin_popcountll(pool->allocated[w]);
	return count;
}

/* ------------------------------------------------------------ internal API */

void *list_alloc_slow(struct pool *pool, bool *fresh, unsigned hooks)
{
	void *corrupt = NULL;

	list_lock(pool);
	void *block = list_pop(pool, hooks);
	*fresh = false;
	if (block == NULL)
		block = take_rest(pool, fresh, &corrupt);
	list_unlock(pool);
	/* The report is made without the lock held, because the handler
	 * may call the library. */
	if (corrupt != NULL)
		report_corrupted(pool, corrupt);
	return block;
}

size_t list_take_line(struct pool *pool, size_t index, char **out, size_t n)
{
	struct free_list *list = &pool->list;
	size_t got = 0;

	list_lock(pool);
	/* A trim under way hands out the blocks it sorted first. */
	while (got < n && !list->trimming) {
		size_t next = index + 1 + got;
		if (list->carve < list->carve_end) {
			if (list->carve != next)
				break;
			list->carve++;
		} else if (list->bump == next && next < pool->block_count) {
			list->bump++;
		} else {
			break;
		}
		/* A never-used block is not handed out. */
		bool was = bit_test_and_set(pool->allocated, next);
		POOL_ASSERT(!was);
		(void)was;
		out[got++] = region_block(pool, next);
	}
	list->allocs += got;
	list_unlock(pool);
	return got;
}

size_t list_trim(struct pool *pool)
{
	struct free_list *list = &pool->list;
	struct trim_step step = {0};

	if (pool->flags & POOL_LOCK_MEMORY)
		return 0;
	list_lock(pool);
	if (list->trimming) {
		/* Another thread is trimming the pool, and gives back what
		 * this call would. */
		list_unlock(pool);
		return 0;
	}
	list->trimming = true;
	list->sorting = list->head;
	list->sorting_last = list->last;
	list->sorting_left = list->bump;
	list->head = NULL;
	list->held_lo = SIZE_MAX;
	list->held_hi = 0;
	TRIM_HOLD_START();
	while (trim_step(pool, &step)) {
		TRIM_HOLD_END();
		/* A trim is long and rare, so between its steps the lock
		 * goes to the threads that wait for it (backing off between
		 * their looks at it). */
		if (pool->mode == POOL_LOCKED) {
			list_unlock(pool);
			if (lock_wanted(&pool->lock))
				lock_give_way();
			TRIM_BETWEEN(pool);
			list_lock(pool);
		} else {
			TRIM_BETWEEN(pool);
		}
		TRIM_HOLD_START();
	}
	TRIM_HOLD_END();
	list->trimming = false;
	list_check(pool);
	list_unlock(pool);
	/* A program may call pool_trim() in a loop, so the lock goes to the
	 * threads that wait for it between the calls. */
	if (pool->mode == POOL_LOCKED && lock_wanted(&pool->lock))
		lock_give_way();
	if (step.corrupt != NULL)
		report_corrupted(pool, step.corrupt);
	return step.bytes;
}

void list_fork_child(struct pool *pool)
{
	struct free_list *list = &pool->list;
	struct trim_step step = {0};
	char *block;
	size_t first, end;

	/* The thread that was trimming does not exist in the child, so what
	 * it had taken goes back on the list.  A corrupted link found now is
	 * dropped without a report, because no report may be made here. */
	if (!list->trimming)
		return;
	while ((block = sorting_take(pool, &step.corrupt)) != NULL)
		list_push(pool, block);
	for (size_t c = list->held_lo;
	     list->held_blocks > 0 && c <= list->held_hi; c++) {
		region_chunk_blocks(pool, c, &first, &end);
		unhold(pool, first, end, &step);
	}
	list->trimming = false;
}

size_t list_mark(struct pool *pool)
{
	list_lock(pool);
	size_t bump = pool->list.bump;
	list_unlock(pool);
	return bump;
}

size_t list_take_back(struct pool *pool, void **out, size_t n, size_t mark)
{
	struct free_list *list = &pool->list;
	unsigned hooks = pool->hooks;
	size_t left = 0;

	list_lock(pool);
	/* The blocks go back in the reverse of the order they were taken
	 * in.  That way each never-used block that the batch took is found
	 * just below bump when its turn comes (unless another thread took
	 * more blocks meanwhile), and the list gets its old order back. */
	for (size_t i = n; i-- > 0;) {
		char *block = out[i];
		size_t index = region_slot(pool, block);
		if (index >= pool->block_count ||
		    !bit_test_and_clear(pool->allocated, index)) {
			/* A fallback allocation.  It is stored at the end
			 * of out[], in the part that the loop has already
			 * been through. */
			out[n - 1 - left++] = block;
			continue;
		}
		list->allocs--;
		if (index + 1 == list->bump && index >= mark) {
			/* The block becomes a never-used block again.  It
			 * is zeroed, as if the caller never had it, and the
			 * peak stays what it was. */
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
	list_check(pool);
	list_unlock(pool);
	memmove(out, out + n - left, left * sizeof *out);
	return left;
}

bool list_block_is_live(struct pool *pool, size_t index)
{
	list_lock(pool);
	bool live = bit_test(pool->allocated, index);
	list_unlock(pool);
	return live;
}

void list_stats(struct pool *pool, pool_stats_t *out)
{
	list_lock(pool);
	list_check(pool);
	out->allocs = pool->list.allocs;
	out->in_use = handed_out(pool);
	out->frees = pool->list.allocs - out->in_use;
	/* Blocks are taken from the free list before the bump, so in_use
	 * reaches a new high only when it equals bump, and the peak is
	 * exactly bump. */
	out->peak_in_use = pool->list.bump;
	list_unlock(pool);
	out->fallback_allocs =
	    atomic_load_explicit(&pool->fallback_allocs, memory_order_relaxed);
	out->fallback_frees =
	    atomic_load_explicit(&pool->fallback_frees, memory_order_relaxed);
}

#ifdef SHIFTPOOL_ASSERTIONS
/* Returns the number of blocks in a list from block on, or SIZE_MAX when
 * the list holds a link that the fast path would refuse.  Such a link is
 * reported when the pool meets it, and list_check() checks only lists
 * that are whole. */
static size_t listed(struct pool *pool, char *block)
{
	struct free_list *list = &pool->list;
	size_t count = 0, index;

	for (; (index = region_slot(pool, block)) < list->bump;
	     block = (char *)(uintptr_t)link_load(pool, block, pool->hooks)) {
		if (bit_test(pool->allocated, index) ||
		    bit_test(list->held, index) || count >= list->bump)
			return SIZE_MAX;
		count++;
	}
	return block == NULL ? count : SIZE_MAX;
}

void list_check(struct pool *pool)
{
	struct free_list *list = &pool->list;
	size_t on_list = listed(pool, list->head);
	size_t sorting = listed(pool, list->sorting);
	size_t held = 0;

	if (on_list == SIZE_MAX || sorting == SIZE_MAX)
		return;
	for (size_t w = 0; w < (pool->block_count + 63) / 64; w++)
		held += (size_t)__builtin_popcountll(list->held[w]);
	assert(held == list->held_blocks);
	assert(list->trimming || (held == 0 && list->sorting == NULL));
	/* Every block below bump is, exactly once, either handed out, on
	 * the list, on the list that a trim sorts, held aside by the trim,
	 * in a chunk given back, or still to be carved.  The exception is
	 * the blocks lost with a list that was dropped as corrupted. */
	size_t known = on_list + sorting + held + handed_out(pool) +
	               list->released_blocks + (list->carve_end - list->carve);
	assert(list->damaged ? known <= list->bump : known == list->bump);
	assert(handed_out(pool) <= list->allocs);
}
#else
void list_check(struct pool *pool)
{
	(void)pool;
}
#endif
