/*
 * POOL_PER_THREAD: what a pool does across all its spans, beside the
 * threads that own them: pool_trim() of the spans nobody holds,
 * pool_stats() from every span's counts and bits, and whether a block is
 * handed out.  The design is in span.c.
 *
 * SPDX-License-Identifier: MIT
 */
#include "span.h"

/* ------------------------------------------------------------ trim */

/* Whether a span the caller holds has no block handed out, none claimed
 * and none parked, and blocks touched: its pages may be given back. */
static bool span_is_idle(struct span *span)
{
	if (span->parked != 0 ||
	    atomic_load_explicit(&span->bump, memory_order_relaxed) == 0)
		return false;
	for (unsigned w = 0; w < SPAN_WORDS; w++)
		if (atomic_load_explicit(&span->out[w], memory_order_relaxed) |
		    atomic_load_explicit(&span->claim[w], memory_order_relaxed))
			return false;
	return true;
}

/* Zeroes [lo, hi), free blocks of a span the caller holds, whatever tool
 * watches them (their words, as the links are written). */
static void span_zero(struct pool *pool, char *lo, char *hi)
{
	for (char *at = lo; at < hi; at += pool->block_size)
		for (size_t w = 0; w < pool->block_size / sizeof(uintptr_t);
		     w++)
			link_word_store(at, (int)w, 0, pool->hooks);
}

/* Gives back an idle span's whole pages, and makes it a span never used:
 * its blocks are zero again, those in the pages kept at its ends zeroed
 * here (they may share a page with another span, or with the area's
 * start).  The caller holds it. */
static size_t span_give_back(struct pool *pool, struct span *span)
{
	char *first = span_block(pool, span, 0);
	char *end = first + ((size_t)span->capacity << pool->block_shift);
	size_t bytes = region_give_back(pool, first, end);
	if (bytes == 0)
		return 0;
	size_t page = region_page_size();
	char *lo =
	    (char *)(((uintptr_t)first + page - 1) & ~(uintptr_t)(page - 1));
	char *hi = (char *)((uintptr_t)end & ~(uintptr_t)(page - 1));
	span_zero(pool, first, lo);
	span_zero(pool, hi, end);
	atomic_fetch_add_explicit(
	    &pool->trimmed_touched,
	    atomic_load_explicit(&span->bump, memory_order_relaxed),
	    memory_order_relaxed);
	span->local = NULL;
	span->last = NULL;
	atomic_store_explicit(&span->bump, 0, memory_order_relaxed);
	return bytes;
}

size_t thread_trim(struct pool *pool)
{
	struct span *taken = NULL;
	size_t bytes = 0;

	thread_give_up_own(pool);
	/* Then the spans nobody holds: taken off the stack (each is ours until
	 * it goes back), their remote frees drained, the idle ones given back.
	 * Spans other threads hold are left alone.  The lock keeps fork() out
	 * (and other trims); trim_seq tells the allocating threads (point 12
	 * of the design). */
	lock_acquire(&pool->lock);
	atomic_fetch_add_explicit(&pool->trim_seq, 1, memory_order_seq_cst);
	for (struct span *span; (span = available_pop(pool)) != NULL;) {
		span_drain(pool, span);
		if (span_is_idle(span))
			bytes += span_give_back(pool, span);
		/* Chained through stack_next: free while we hold it. */
		atomic_store_explicit(
		    &span->stack_next,
		    taken ? (uint32_t)(taken - pool->spans) + 1 : 0,
		    memory_order_relaxed);
		taken = span;
	}
	while (taken != NULL) {
		uint32_t next = atomic_load_explicit(&taken->stack_next,
		                                     memory_order_relaxed);
		available_push(pool, taken);
		taken = next ? &pool->spans[next - 1] : NULL;
	}
	atomic_fetch_add_explicit(&pool->trim_seq, 1, memory_order_seq_cst);
	lock_release(&pool->lock);
	/* A thread without a span, or a fork(), waits for the lock: it goes
	 * first, before a trim that runs again at once takes it back. */
	if (lock_wanted(&pool->lock))
		lock_give_way();
	return bytes;
}
bool thread_block_is_live(struct pool *pool, size_t index)
{
	struct span *span = &pool->spans[index >> pool->span_shift];
	uint32_t rel = (uint32_t)(index - span_first_block(pool, span));
	return span_out(span, rel) && !span_claimed(span, rel);
}

/* ------------------------------------------------------------ stats */

void thread_stats(struct pool *pool, pool_stats_t *out)
{
	uint64_t sums[COUNT_KINDS];

	cache_sum_counters(pool, sums);

	/* The blocks handed out are the out bits no claim cancels; the peak
	 * is bounded by the blocks ever touched, as a true peak would need a
	 * shared counter on every call. */
	uint64_t allocs = 0;
	size_t in_use = 0, touched = 0;
	size_t spans =
	    atomic_load_explicit(&pool->fresh_spans, memory_order_acquire);
	for (size_t i = 0; i < spans && i < pool->span_count; i++) {
		struct span *span = &pool->spans[i];
		allocs +=
		    atomic_load_explicit(&span->allocs, memory_order_relaxed);
		touched +=
		    atomic_load_explicit(&span->bump, memory_order_relaxed);
		for (unsigned w = 0; w < SPAN_WORDS; w++)
			in_use += (size_t)__builtin_popcountll(
			    atomic_load_explicit(&span->out[w],
			                         memory_order_relaxed) &
			    ~atomic_load_explicit(&span->claim[w],
			                          memory_order_relaxed));
	}
	/* The counts and the bits are read at different moments while other
	 * threads work: allocs first, so the frees derived are never more
	 * than were made by the end of the reading, and never less than a
	 * snapshot reported before (frees only grow).  With no thread inside
	 * a call, both are exact. */
	uint64_t frees = allocs >= in_use ? allocs - in_use : 0;
	uint64_t before =
	    atomic_load_explicit(&pool->frees_reported, memory_order_relaxed);
	while (before < frees &&
	       !atomic_compare_exchange_weak_explicit(
	           &pool->frees_reported, &before, frees, memory_order_relaxed,
	           memory_order_relaxed))
		;
	if (before > frees)
		frees = before < allocs ? before : allocs;
	/* Blocks a failed pool_malloc_bulk() took back were never handed out
	 * to the caller: neither allocated nor freed. */
	uint64_t taken_back = sums[COUNT_TAKEN_BACK];
	allocs -= taken_back < allocs ? taken_back : allocs;
	frees -= taken_back < frees ? taken_back : frees;
	out->allocs = allocs;
	out->frees = frees;
	out->in_use = (size_t)(allocs - frees);
	out->fallback_allocs = sums[COUNT_FALLBACK_ALLOCS];
	out->fallback_frees = sums[COUNT_FALLBACK_FREES];
	/* Spans pool_trim() gave back were touched, and count still. */
	touched += (size_t)atomic_load_explicit(&pool->trimmed_touched,
	                                        memory_order_relaxed);
	out->peak_in_use =
	    touched < pool->block_count ? touched : pool->block_count;
}
