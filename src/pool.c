/*
 * The public entry points: argument checks, errno, mode dispatch, the
 * fallback, and the trace of every call.
 *
 * Two inline templates, alloc_in() and free_in(), hold every mode's path:
 * instantiated with the mode and the hooks (hooks.h) constant, each
 * instance holds only its own code.  A pool is served in one of two
 * ways.  The fast paths of an unhooked POOL_SINGLE or POOL_PER_THREAD
 * pool are inlined into the public functions, each behind one compare
 * (single_limit, thread_limit and single_count: struct pool).  Everything
 * else goes through the pool's table of operations (struct pool_ops),
 * one for each mode with hooks and one without, chosen when the pool is
 * made.  Every path takes the name of the public call it serves, which
 * its reports give.
 *
 * SPDX-License-Identifier: MIT
 */
#include "list.h"
#include "locked.h"
#include "span.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ data */

/* Not an operation: the call is part of another that traces itself. */
#define UNTRACED TRACE_OP_COUNT

/*
 * What serves a kind of pool (its mode, and whether it has hooks) beyond
 * the inlined fast paths.  function is the public call's name for
 * reports (a class of a set gives the pool call's: report.c names the
 * set's), op the trace record to write or UNTRACED.
 */
struct pool_ops {
	/* pool_free(); pool->free_entry holds a copy, so that pool_free()
	 * and pool_set_free() reach it with one indirect jump */
	void (*free_entry)(struct pool *pool, void *ptr);
	/* A malloc and a calloc of any size: what alloc_dispatch()'s
	 * compares leave.  Two entries rather than one taking a flag, so
	 * that neither tests the flag at run time. */
	void *(*alloc)(struct pool *pool, size_t size, const char *function,
	               enum trace_op op);
	void *(*alloc_zero)(struct pool *pool, size_t size,
	                    const char *function, enum trace_op op);
	/* A free of any pointer, what free_dispatch()'s compare leaves;
	 * returns what it did (enum trace_src). */
	int (*free)(struct pool *pool, const char *function, void *ptr,
	            enum trace_op op);
	/* pool_malloc_bulk()'s runs of blocks from the free list (none for
	 * a hooked pool), and pool_free_bulk(). */
	size_t (*pop_many)(struct pool *pool, size_t size, size_t n,
	                   void **out);
	void (*free_many)(struct pool *pool, size_t n, void *const *ptrs);
	/* Whether the block of that index is handed out now. */
	bool (*is_live)(struct pool *pool, size_t index);
	/* pool_trim()'s work. */
	size_t (*trim)(struct pool *pool);
};

/* ------------------------------------------------------------ helpers */

/* Whether the block of that index is handed out now. */
bool block_is_live(struct pool *pool, size_t index)
{
	return pool->ops->is_live(pool, index);
}

/* Who served an allocation: the trace's src=. */
static enum trace_src source_of(const struct pool *pool, const void *ptr)
{
	if (ptr == NULL)
		return TRACE_SRC_NONE;
	return region_contains(pool, ptr) ? TRACE_SRC_POOL : TRACE_SRC_FALLBACK;
}

/* The trace's word for a misuse the free path found. */
static enum trace_src source_of_error(int error)
{
	return error == POOL_ERROR_DOUBLE_FREE  ? TRACE_SRC_DOUBLE
	       : error == POOL_ERROR_WRONG_POOL ? TRACE_SRC_WRONG_POOL
	                                        : TRACE_SRC_INVALID;
}

/* ------------------------------------------------------------ templates */

/*
 * What alloc_in()'s fast path leaves, in every mode: the never-used
 * blocks, another span, a corrupted list, a block the hooks quarantine,
 * the fallback.  size may not fit a block.  A report from in here (a
 * corrupted list) names function.
 */
static POOL_NOINLINE void *alloc_rest(struct pool *pool, size_t size, bool zero,
                                      const char *function)
{
	unsigned hooks = pool->hooks;
	void *block;
	if (pool->mode == POOL_PER_THREAD && !hooks) {
		block = thread_pop_fresh(pool);
		if (block != NULL)
			return block_out(pool, block, size, zero, true, 0,
			                 function);
	}
	const char *outer = report_call_begin(function);
	block = NULL;
	/* A block the hooks quarantine (hooked pools only) is replaced by
	 * the next; the pool runs out of them eventually. */
	while (size <= pool->block_size) {
		bool fresh;
		block = pool->mode == POOL_PER_THREAD
		            ? thread_alloc_slow(pool, &fresh, hooks)
		        : pool->mode == POOL_LOCKED && !hooks
		            ? locked_alloc_slow(pool, &fresh)
		            : list_alloc_slow(pool, &fresh, hooks);
		if (block == NULL)
			break;
		block =
		    block_out(pool, block, size, zero, fresh, hooks, function);
		if (block != NULL)
			break;
	}
	report_call_end(outer);
	if (block != NULL)
		return block;
	return fallback_alloc(pool, size, zero);
}

/*
 * The malloc (zero false) or calloc (zero true) of the public call named
 * function, of size bytes, which fit a block.  The fast path is the head
 * of a free list; everything else is a tail call.
 */
POOL_INLINE void *alloc_in(struct pool *pool, size_t size, bool zero,
                           const char *function, int mode, unsigned hooks)
{
	void *block;

	if (mode == POOL_PER_THREAD) {
		block = thread_pop(pool, hooks);
	} else if (mode == POOL_LOCKED && !hooks) {
		if (likely(locked_stacks_on(pool))) {
			block = locked_pop(pool);
		} else if (locked_lock_plain(pool)) {
			block = list_pop(pool, 0);
			lock_release(&pool->lock);
		} else {
			block = NULL;
		}
	} else {
		if (mode == POOL_LOCKED)
			lock_acquire(&pool->lock);
		block = list_pop(pool, hooks);
		if (mode == POOL_LOCKED)
			lock_release(&pool->lock);
	}
	if (likely(block != NULL)) {
		block =
		    block_out(pool, block, size, zero, false, hooks, function);
		if (!hooks || block != NULL)
			return block;
	}
	return alloc_rest(pool, size, zero, function);
}

/* Reports what the free path found; returns the trace's word for it. */
POOL_COLD static int free_refused(struct pool *pool, const char *function,
                                  void *ptr, int error)
{
	report_misuse(pool, function, ptr, error);
	return source_of_error(error);
}

/* The misuse of a pointer that is no block start of the pool's region:
 * inside it, or inside another live pool's, or any pointer at all when
 * the pool has no fallback that could have made it; 0 for none of these
 * (a fallback pointer). */
static int outside_misuse(const struct pool *pool, const void *ptr)
{
	if ((uintptr_t)((const char *)ptr - pool->claim_lo) <
	    (uintptr_t)(pool->claim_hi - pool->claim_lo))
		return POOL_ERROR_INVALID_POINTER;
	if (registry_find(ptr))
		return POOL_ERROR_WRONG_POOL;
	if (pool->flags & POOL_NO_FALLBACK)
		return POOL_ERROR_INVALID_POINTER;
	return 0;
}

/* A pointer that is no block start of the region: NULL, a fallback
 * allocation, or misuse. */
POOL_COLD static int free_outside(struct pool *pool, const char *function,
                                  void *ptr)
{
	if (ptr == NULL)
		return TRACE_SRC_NONE;
	int error = outside_misuse(pool, ptr);
	if (error)
		return free_refused(pool, function, ptr, error);
	fallback_free(pool, ptr);
	return TRACE_SRC_FALLBACK;
}

/* The remote free of an unhooked POOL_PER_THREAD pool, whole: the
 * common way out of per_thread_free_rest(), a tail call, so that neither
 * keeps a frame. */
POOL_NOINLINE static int per_thread_free_remote(struct pool *pool,
                                                const char *function, void *ptr,
                                                struct span *span, uint32_t rel)
{
	int error = span_free_remote(pool, span, rel, ptr, 0);
	if (unlikely(error))
		return free_refused(pool, function, ptr, error);
	return TRACE_SRC_POOL;
}

/* per_thread_free_rest() for a block the thread's cache owns or may take
 * over, or any block of a hooked pool. */
POOL_NOINLINE static int per_thread_free_other(struct pool *pool,
                                               const char *function, void *ptr,
                                               struct span *span, uint32_t rel,
                                               unsigned hooks)
{
	int error = thread_free_other(pool, span, rel, ptr, hooks, function);
	if (error)
		return free_refused(pool, function, ptr, error);
	return TRACE_SRC_POOL;
}

/* POOL_PER_THREAD when thread_push() missed: another span's block, a
 * pointer from outside the region, or misuse; index is region_slot()'s
 * for ptr.  Every way out is a tail call, so that the remote free, the
 * common way, keeps no frame. */
POOL_NOINLINE static int per_thread_free_rest(struct pool *pool,
                                              const char *function, void *ptr,
                                              size_t index, unsigned hooks)
{
	if (index >= pool->block_count)
		return free_outside(pool, function, ptr);
	size_t n = index >> pool->span_shift;
	struct span *span = &pool->spans[n];
	uint32_t rel = (uint32_t)(index - (n << pool->span_shift));
	if (!hooks && thread_free_is_remote(pool, span))
		return per_thread_free_remote(pool, function, ptr, span, rel);
	return per_thread_free_other(pool, function, ptr, span, rel, hooks);
}

/*
 * pool_free of ptr, for the public function named; returns what it did
 * (enum trace_src).  Misuse is reported before it returns.  index is
 * region_slot()'s for ptr, which the caller has checked in POOL_SINGLE
 * mode, and which POOL_PER_THREAD mode uses only when its fast path
 * misses (the fast path computes it too: the compiler keeps one).
 */
POOL_INLINE int free_in(struct pool *pool, const char *function, void *ptr,
                        size_t index, int mode, unsigned hooks)
{
	int error;

	if (mode == POOL_PER_THREAD) {
		error = thread_push(pool, ptr, hooks);
		if (unlikely(error < 0))
			return per_thread_free_rest(pool, function, ptr, index,
			                            hooks);
	} else if (mode == POOL_LOCKED && !hooks) {
		if (unlikely(index >= pool->block_count))
			return free_outside(pool, function, ptr);
		if (likely(locked_stacks_on(pool))) {
			error = locked_push(pool, ptr, index);
			if (unlikely(error < 0))
				error = locked_free_slow(pool, ptr, index);
		} else if (locked_lock_plain(pool)) {
			error = list_free(pool, ptr, index, 0);
			lock_release(&pool->lock);
		} else {
			error = locked_free_slow(pool, ptr, index);
		}
	} else {
		if (mode != POOL_SINGLE && unlikely(index >= pool->block_count))
			return free_outside(pool, function, ptr);
		if (mode == POOL_LOCKED)
			lock_acquire(&pool->lock);
		error = list_free(pool, ptr, index, hooks);
		if (mode == POOL_LOCKED)
			lock_release(&pool->lock);
	}
	if (unlikely(error))
		return free_refused(pool, function, ptr, error);
	return TRACE_SRC_POOL;
}

/* ------------------------------------------------------------ dispatch */

/*
 * The one dispatch of every allocation.  One compare each tells an
 * unhooked POOL_SINGLE or POOL_PER_THREAD pool and a size that fits its
 * blocks (see struct pool); the pool's operations serve the rest.
 */
POOL_INLINE void *alloc_dispatch(struct pool *pool, size_t size, bool zero,
                                 const char *function, enum trace_op op)
{
	if (likely(size < pool->single_limit))
		return alloc_in(pool, size, zero, function, POOL_SINGLE, 0);
	if (likely(size < pool->thread_limit))
		return alloc_in(pool, size, zero, function, POOL_PER_THREAD, 0);
	if (zero)
		return pool->ops->alloc_zero(pool, size, function, op);
	return pool->ops->alloc(pool, size, function, op);
}

/* The one dispatch of every free but pool_free()'s; returns what it did
 * (enum trace_src).  For an unhooked POOL_SINGLE pool, one compare tells
 * both the mode and a block start of the region. */
POOL_INLINE int free_dispatch(struct pool *pool, const char *function,
                              void *ptr, enum trace_op op)
{
	size_t index = region_slot(pool, ptr);

	if (likely(index < pool->single_count))
		return free_in(pool, function, ptr, index, POOL_SINGLE, 0);
	return pool->ops->free(pool, function, ptr, op);
}

/* ------------------------------------------------------------ bulk */

/*
 * The blocks at the head of the free list, as many as there are up to n,
 * into out[]: one lock for all of them in POOL_LOCKED mode, no call per
 * block in any mode.  Unhooked pools only; returns how many.
 */
POOL_INLINE size_t bulk_pop(struct pool *pool, size_t size, size_t n,
                            void **out, int mode)
{
	size_t got;

	if (mode == POOL_PER_THREAD) {
		got = thread_pop_many(pool, n, out);
	} else {
		if (mode == POOL_LOCKED)
			lock_acquire(&pool->lock);
		got = list_pop_many(pool, n, out);
		if (mode == POOL_LOCKED)
			lock_release(&pool->lock);
		if (mode == POOL_LOCKED && locked_stacks_on(pool))
			for (size_t i = 0; i < got; i++)
				locked_untag(pool, out[i]);
	}
	/* Nothing to do but in an ASan build, which unpoisons them. */
	for (size_t i = 0; i < got; i++)
		block_out(pool, out[i], size, false, false, 0,
		          "pool_malloc_bulk");
	return got;
}

/*
 * pool_free_bulk()'s loop for an unhooked pool: runs of blocks freed
 * together (in one lock in POOL_LOCKED mode), and between them the
 * pointer a run stopped at freed as pool_free() would (the fallback, a
 * block of another span, NULL, misuse reported outside any lock).
 */
POOL_INLINE void bulk_free(struct pool *pool, size_t n, void *const *ptrs,
                           int mode)
{
	for (size_t i = 0; i < n; i++) {
		if (mode == POOL_PER_THREAD) {
			i += thread_push_many(pool, n - i, ptrs + i);
		} else if (mode == POOL_LOCKED) {
			/* Onto the thread's stack, one by one: the list's
			 * loop would not see the blocks on stacks. */
		} else {
			if (mode == POOL_LOCKED)
				lock_acquire(&pool->lock);
			i += list_free_many(pool, n - i, ptrs + i);
			if (mode == POOL_LOCKED)
				lock_release(&pool->lock);
		}
		if (i < n)
			free_dispatch(pool, "pool_free_bulk", ptrs[i],
			              UNTRACED);
	}
}

/* A hooked pool's batch, one pointer at a time, each traced as part of the
 * batch. */
static void bulk_free_hooked(struct pool *pool, size_t n, void *const *ptrs)
{
	for (size_t i = 0; i < n; i++) {
		bool traced = pool->hooks & HOOK_TRACE;
		/* As for pool_free(): see kind_free(). */
		uint64_t seq = traced ? trace_seq() : 0;
		int done =
		    free_dispatch(pool, "pool_free_bulk", ptrs[i], UNTRACED);
		if (traced)
			trace_record_seq(pool, seq, TRACE_OP_FREE_BULK,
			                 "n=%zu ptr=0x%" PRIxPTR " src=%s", n,
			                 (uintptr_t)ptrs[i],
			                 trace_src_name((unsigned)done));
	}
}

/* A hooked pool hands out no run of blocks: every one goes out through
 * the hooks, by the ordinary path. */
static size_t bulk_pop_none(struct pool *pool, size_t size, size_t n,
                            void **out)
{
	(void)pool, (void)size, (void)n, (void)out;
	return 0;
}

static void trace_malloc_bulk(struct pool *pool, size_t size, size_t n,
                              void *const *out, size_t got)
{
	if (got == 0) {
		trace_record(pool, TRACE_OP_MALLOC_BULK,
		             "size=%zu n=%zu ptr=0x0 src=%s", size, n,
		             trace_src_name(TRACE_SRC_NONE));
		return;
	}
	for (size_t i = 0; i < got; i++)
		trace_record(pool, TRACE_OP_MALLOC_BULK,
		             "size=%zu n=%zu ptr=0x%" PRIxPTR " src=%s", size,
		             n, (uintptr_t)out[i],
		             trace_src_name(source_of(pool, out[i])));
}

/* ------------------------------------------------------------ kinds */

/* An allocation of any size by a pool of that mode, hooked or not. */
POOL_INLINE void *kind_alloc(struct pool *pool, size_t size, bool zero,
                             const char *function, enum trace_op op, int mode,
                             bool hooked)
{
	unsigned hooks = hooked ? pool->hooks : 0;
	void *ptr = size <= pool->block_size
	                ? alloc_in(pool, size, zero, function, mode, hooks)
	                : fallback_alloc(pool, size, zero);
	if (hooked && op != UNTRACED && (hooks & HOOK_TRACE))
		trace_record(pool, op, "size=%zu ptr=0x%" PRIxPTR " src=%s",
		             size, (uintptr_t)ptr,
		             trace_src_name(source_of(pool, ptr)));
	return ptr;
}

/* A free of any pointer by a pool of that mode, hooked or not. */
POOL_INLINE int kind_free(struct pool *pool, const char *function, void *ptr,
                          enum trace_op op, int mode, bool hooked)
{
	unsigned hooks = hooked ? pool->hooks : 0;
	size_t index = region_slot(pool, ptr);
	/* The free's seq= is taken before the block can be handed out again,
	 * so it orders before the allocation that reuses it. */
	bool traced = hooked && op != UNTRACED && (hooks & HOOK_TRACE);
	uint64_t seq = traced ? trace_seq() : 0;
	int done = mode == POOL_SINGLE && unlikely(index >= pool->block_count)
	               ? free_outside(pool, function, ptr)
	               : free_in(pool, function, ptr, index, mode, hooks);
	if (traced)
		trace_record_seq(pool, seq, op, "ptr=0x%" PRIxPTR " src=%s",
		                 (uintptr_t)ptr,
		                 trace_src_name((unsigned)done));
	return done;
}

/*
 * The operations of a kind of pool (struct pool_ops): kind##_ops, with
 * the entries that are the templates above instantiated for its mode and
 * hook state, and the bulk, liveness and trim functions given.
 */
#define POOL_KIND(kind, mode, hooked, pop_many_fn, free_many_fn, is_live_fn,   \
                  trim_fn)                                                     \
	static POOL_NOINLINE void *kind##_alloc(                               \
	    struct pool *pool, size_t size, const char *function,              \
	    enum trace_op op)                                                  \
	{                                                                      \
		return kind_alloc(pool, size, false, function, op, mode,       \
		                  hooked);                                     \
	}                                                                      \
	static POOL_NOINLINE void *kind##_alloc_zero(                          \
	    struct pool *pool, size_t size, const char *function,              \
	    enum trace_op op)                                                  \
	{                                                                      \
		return kind_alloc(pool, size, true, function, op, mode,        \
		                  hooked);                                     \
	}                                                                      \
	static POOL_NOINLINE int kind##_free(struct pool *pool,                \
	                                     const char *function, void *ptr,  \
	                                     enum trace_op op)                 \
	{                                                                      \
		return kind_free(pool, function, ptr, op, mode, hooked);       \
	}                                                                      \
	static void kind##_free_entry(struct pool *pool, void *ptr)            \
	{                                                                      \
		kind_free(pool, "pool_free", ptr, TRACE_OP_FREE, mode,         \
		          hooked);                                             \
	}                                                                      \
	static const struct pool_ops kind##_ops = {                            \
	    .free_entry = kind##_free_entry,                                   \
	    .alloc = kind##_alloc,                                             \
	    .alloc_zero = kind##_alloc_zero,                                   \
	    .free = kind##_free,                                               \
	    .pop_many = pop_many_fn,                                           \
	    .free_many = free_many_fn,                                         \
	    .is_live = is_live_fn,                                             \
	    .trim = trim_fn,                                                   \
	}

/* The bulk loops of an unhooked pool of that mode, compiled for it
 * alone. */
#define BULK_LOOPS(kind, mode)                                                 \
	static POOL_NOINLINE size_t kind##_pop_many(                           \
	    struct pool *pool, size_t size, size_t n, void **out)              \
	{                                                                      \
		return bulk_pop(pool, size, n, out, mode);                     \
	}                                                                      \
	static POOL_NOINLINE void kind##_free_many(                            \
	    struct pool *pool, size_t n, void *const *ptrs)                    \
	{                                                                      \
		bulk_free(pool, n, ptrs, mode);                                \
	}

BULK_LOOPS(single, POOL_SINGLE)
BULK_LOOPS(locked, POOL_LOCKED)
BULK_LOOPS(per_thread, POOL_PER_THREAD)

POOL_KIND(single, POOL_SINGLE, false, single_pop_many, single_free_many,
          list_block_is_live, list_trim);
POOL_KIND(locked, POOL_LOCKED, false, locked_pop_many, locked_free_many,
          locked_block_is_live, locked_trim);
POOL_KIND(per_thread, POOL_PER_THREAD, false, per_thread_pop_many,
          per_thread_free_many, thread_block_is_live, thread_trim);
POOL_KIND(hooked_single, POOL_SINGLE, true, bulk_pop_none, bulk_free_hooked,
          list_block_is_live, list_trim);
POOL_KIND(hooked_locked, POOL_LOCKED, true, bulk_pop_none, bulk_free_hooked,
          list_block_is_live, list_trim);
POOL_KIND(hooked_per_thread, POOL_PER_THREAD, true, bulk_pop_none,
          bulk_free_hooked, thread_block_is_live, thread_trim);

#undef BULK_LOOPS
#undef POOL_KIND

/* ------------------------------------------------------------ realloc */

/* A traced realloc that moves takes its seq= between getting the new
 * memory and giving the old back, so that it orders after whatever freed
 * the one and before whatever reuses the other. */
static void realloc_seq(const struct pool *pool, uint64_t *seq)
{
	if (pool->hooks & HOOK_TRACE)
		*seq = trace_seq();
}

/*
 * A live block of pool changes size.  to is the pool that serves the new
 * size: pool itself, or for a class of a set the class that fits it.  A
 * block that still fits stays where it is, unless to is a smaller class
 * and the block would be less than half used: then it moves there if that
 * class has a block at once (a shrink never fails).  A larger size moves
 * it to to (pool's fallback for a pool of its own); NULL with errno ENOMEM
 * when that fails, the block untouched.  *seq as realloc_seq().
 */
static void *realloc_block(struct pool *pool, struct pool *to, void *ptr,
                           size_t size, uint64_t *seq)
{
	if (size <= pool->block_size &&
	    (to == pool || size >= pool->block_size / 2)) {
		hooks_block_resize(pool, ptr, size);
		return ptr;
	}
	int saved = errno;
	void *moved = alloc_dispatch(to, size, false, "pool_realloc", UNTRACED);
	if (size <= pool->block_size &&
	    (moved == NULL || !region_contains(to, moved))) {
		/* The smaller class has no block now: the shrink stays. */
		if (moved != NULL)
			fallback_free(to, moved);
		errno = saved;
		hooks_block_resize(pool, ptr, size);
		return ptr;
	}
	if (moved != NULL) {
		/* The caller's size is not kept: as much of the block as
		 * fits. */
		hooks_block_expose(pool, ptr);
		memcpy(moved, ptr, size < pool->block_size ? size : pool->block_size);
		realloc_seq(pool, seq);
		free_dispatch(pool, "pool_realloc", ptr, UNTRACED);
	}
	return moved;
}

/* A fallback allocation of pool changes size: into to (see above) when it
 * now fits a block there and the fallback tells how much to copy, else
 * the fallback's realloc().  *seq as realloc_seq(). */
static void *realloc_outside(struct pool *pool, struct pool *to, void *ptr,
                             size_t size, uint64_t *seq)
{
	size_t old = size <= to->block_size ? fallback_usable_size(pool, ptr) : 0;
	if (old == 0)
		return fallback_resize(pool, ptr, size);
	void *moved = alloc_dispatch(to, size, false, "pool_realloc", UNTRACED);
	if (moved != NULL) {
		memcpy(moved, ptr, old < size ? old : size);
		realloc_seq(pool, seq);
		fallback_free(pool, ptr);
	}
	return moved;
}

/*
 * realloc() of a non-NULL ptr of pool to a non-zero size, to the pool to
 * that serves that size.  *refused is set to the trace's word for a misuse
 * of ptr, which is then reported and left alone.
 */
static void *realloc_in(struct pool *pool, struct pool *to, void *ptr,
                        size_t size, enum trace_src *refused, uint64_t *seq)
{
	size_t index = region_slot(pool, ptr);
	int error = 0;
	if (index >= pool->block_count)
		error = outside_misuse(pool, ptr);
	else if (!block_is_live(pool, index))
		error = POOL_ERROR_DOUBLE_FREE;
	if (error == 0 && index >= pool->block_count)
		return realloc_outside(pool, to, ptr, size, seq);
	if (error == 0)
		return realloc_block(pool, to, ptr, size, seq);
	*refused = free_refused(pool, "pool_realloc", ptr, error);
	return NULL;
}

/* ------------------------------------------------------------ public API */

/* The operations that serve the pool, by its mode and hooks, and the
 * limits that let the fast paths tell it with one compare. */
void dispatch_choose(struct pool *pool)
{
	bool hooked = pool->hooks != 0;
	const struct pool_ops *ops;

	if (pool->mode == POOL_SINGLE)
		ops = hooked ? &hooked_single_ops : &single_ops;
	else if (pool->mode == POOL_LOCKED)
		ops = hooked ? &hooked_locked_ops : &locked_ops;
	else
		ops = hooked ? &hooked_per_thread_ops : &per_thread_ops;
	pool->ops = ops;
	pool->free_entry = ops->free_entry;
	if (ops == &single_ops) {
		pool->single_limit = pool->block_size + 1;
		pool->single_count = pool->block_count;
	} else if (ops == &per_thread_ops) {
		pool->thread_limit = pool->block_size + 1;
	}
}

/* A pool set's allocations, here so that the dispatch is inlined: the set
 * adds a table lookup to a pool's path.  The class is told the pool
 * call's name: its reports name the set's (report.c). */
POOL_API void *pool_set_malloc(pool_set_t *set, size_t size)
{
	return alloc_dispatch(set_class_for_size(set, size), size, false,
	                      "pool_malloc", TRACE_OP_MALLOC);
}

POOL_API void *pool_set_calloc(pool_set_t *set, size_t nmemb, size_t size)
{
	size_t total;

	if (unlikely(__builtin_mul_overflow(nmemb, size, &total))) {
		errno = ENOMEM;
		return NULL;
	}
	return alloc_dispatch(set_class_for_size(set, total), total, true,
	                      "pool_calloc", TRACE_OP_CALLOC);
}

POOL_API void *pool_malloc(pool_t *pool, size_t size)
{
	return alloc_dispatch(pool, size, false, "pool_malloc",
	                      TRACE_OP_MALLOC);
}

POOL_API void *pool_calloc(pool_t *pool, size_t nmemb, size_t size)
{
	size_t total;

	if (unlikely(__builtin_mul_overflow(nmemb, size, &total))) {
		errno = ENOMEM;
		return NULL;
	}
	return alloc_dispatch(pool, total, true, "pool_calloc",
	                      TRACE_OP_CALLOC);
}

POOL_API void pool_free(pool_t *pool, void *ptr)
{
	pool->free_entry(pool, ptr);
}

POOL_API size_t pool_malloc_bulk(pool_t *pool, size_t size, size_t n,
                                 void **out)
{
	if (n == 0)
		return 0;
	if (pool == NULL || out == NULL) {
		errno = EINVAL;
		return 0;
	}
	/* Runs of blocks from the free list, and between them one object by
	 * the ordinary path: never-used blocks, another span, the fallback,
	 * a hooked pool (whose runs are empty). */
	size_t got = 0, mark = SIZE_MAX;
	while (got < n) {
		if (size <= pool->block_size)
			got +=
			    pool->ops->pop_many(pool, size, n - got, out + got);
		if (got == n)
			break;
		/* Where the never-used blocks start before the batch takes
		 * any: what a failed batch gives back (list_take_back()). */
		if (mark == SIZE_MAX && pool->mode != POOL_PER_THREAD)
			mark = list_mark(pool);
		out[got] = alloc_dispatch(pool, size, false, "pool_malloc_bulk",
		                          UNTRACED);
		if (out[got] == NULL)
			break;
		got++;
	}
	if (got < n) {
		/* All or nothing: what was taken goes back, and what failed
		 * is not counted (the fallback's are freed). */
		size_t blocks = 0;
		if (pool->mode != POOL_PER_THREAD)
			got = list_take_back(pool, out, got, mark);
		for (size_t i = 0; i < got; i++) {
			blocks += region_contains(pool, out[i]);
			free_dispatch(pool, "pool_malloc_bulk", out[i],
			              UNTRACED);
		}
		if (pool->mode == POOL_PER_THREAD)
			thread_uncount(pool, blocks);
		got = 0;
	}
	if (pool->hooks & HOOK_TRACE)
		trace_malloc_bulk(pool, size, n, out, got);
	if (got == 0)
		errno = ENOMEM;
	return got;
}

POOL_API void pool_free_bulk(pool_t *pool, size_t n, void *const *ptrs)
{
	if (n == 0)
		return;
	if (pool == NULL || ptrs == NULL) {
		errno = EINVAL;
		return;
	}
	pool->ops->free_many(pool, n, ptrs);
}

/*
 * The entry points behind <shiftpool/inline.h>'s fast paths, named by the
 * layout they read (SHIFTPOOL_INLINE_ABI, configure.ac): the same
 * functions under another name, in a version node of their own.  Only
 * where that layout holds: links hardened, hints found from the thread
 * pointer.
 */
#if defined(HINT_BY_OFFSET) && !defined(SHIFTPOOL_NO_HARDENING)
POOL_API POOL_ATTR_MALLOC POOL_ATTR_ALLOC_SIZE(2) POOL_ATTR_NONNULL(1) void *
SHIFTPOOL_INLINE_ENTRY_(malloc)(pool_t *pool, size_t size)
    __attribute__((alias("pool_malloc")));
POOL_API POOL_ATTR_MALLOC POOL_ATTR_ALLOC_SIZE(2, 3) POOL_ATTR_NONNULL(1) void *
SHIFTPOOL_INLINE_ENTRY_(calloc)(pool_t *pool, size_t nmemb, size_t size)
    __attribute__((alias("pool_calloc")));
POOL_API POOL_ATTR_NONNULL(1) void
SHIFTPOOL_INLINE_ENTRY_(free)(pool_t *pool, void *ptr)
    __attribute__((alias("pool_free")));
#endif

/* pool_realloc() of ptr of pool, to the pool to that serves size (pool
 * itself, or a class of pool's set). */
void *realloc_call(struct pool *pool, struct pool *to, void *ptr, size_t size)
{
	enum trace_src refused = TRACE_SRC_NONE;
	uintptr_t old = (uintptr_t)ptr; /* for the trace, once ptr is gone */
	void *moved = NULL;
	uint64_t seq = 0; /* 0: taken when the record is written */

	if (ptr == NULL) {
		moved =
		    alloc_dispatch(to, size, false, "pool_realloc", UNTRACED);
	} else if (size == 0) {
		realloc_seq(pool, &seq); /* a free */
		int done = free_dispatch(pool, "pool_realloc", ptr, UNTRACED);
		if (done != TRACE_SRC_POOL && done != TRACE_SRC_FALLBACK)
			refused = (enum trace_src)done;
	} else {
		moved = realloc_in(pool, to, ptr, size, &refused, &seq);
	}
	if (to != pool && moved != NULL && region_contains(to, moved)) {
		/* Moved into another class of a set: traced as what it is to
		 * each class, an allocation of one and a free of the other. */
		if (to->hooks & HOOK_TRACE)
			trace_record(to, TRACE_OP_MALLOC,
			             "size=%zu ptr=0x%" PRIxPTR " src=%s", size,
			             (uintptr_t)moved,
			             trace_src_name(TRACE_SRC_POOL));
		if (ptr != NULL && (pool->hooks & HOOK_TRACE))
			trace_record_seq(pool, seq != 0 ? seq : trace_seq(),
			                 TRACE_OP_FREE,
			                 "ptr=0x%" PRIxPTR " src=%s", old,
			                 trace_src_name(source_of(pool, ptr)));
		return moved;
	}
	if (pool->hooks & HOOK_TRACE)
		trace_record_seq(
		    pool, seq != 0 ? seq : trace_seq(), TRACE_OP_REALLOC,
		    "old=0x%" PRIxPTR " size=%zu ptr=0x%" PRIxPTR " src=%s",
		    old, size, (uintptr_t)moved,
		    trace_src_name(refused != TRACE_SRC_NONE
		                       ? refused
		                       : source_of(pool, moved)));
	return moved;
}

POOL_API void *pool_realloc(pool_t *pool, void *ptr, size_t size)
{
	return realloc_call(pool, pool, ptr, size);
}

/* strdup() of s, len bytes with its terminator, into pool (a pool, or the
 * class of a set that fits len). */
char *strdup_into(struct pool *pool, const char *s, size_t len)
{
	char *copy = alloc_dispatch(pool, len, false, "pool_strdup", UNTRACED);
	if (copy != NULL)
		memcpy(copy, s, len);
	if (pool->hooks & HOOK_TRACE)
		trace_record(pool, TRACE_OP_STRDUP,
		             "size=%zu ptr=0x%" PRIxPTR " src=%s", len,
		             (uintptr_t)copy,
		             trace_src_name(source_of(pool, copy)));
	return copy;
}

POOL_API char *pool_strdup(pool_t *pool, const char *s)
{
	if (s == NULL) {
		errno = EINVAL;
		return NULL;
	}
	return strdup_into(pool, s, strlen(s) + 1);
}

POOL_API size_t pool_trim(pool_t *pool)
{
	if (pool == NULL)
		return 0;
	const char *outer = report_call_begin("pool_trim");
	size_t bytes = pool->ops->trim(pool);
	report_call_end(outer);
	if (pool->hooks & HOOK_TRACE)
		trace_record(pool, TRACE_OP_TRIM, "bytes=%zu", bytes);
	return bytes;
}

POOL_API size_t pool_block_size(const pool_t *pool)
{
	return pool ? pool->block_size : 0;
}

POOL_API int pool_owns(const pool_t *pool, const void *ptr)
{
	/* The same test as pool_free()'s fast path, so the edge cases that
	 * tests ask pool_owns() about are the ones pool_free() meets. */
	return pool != NULL && region_slot(pool, ptr) < pool->block_count;
}

/* The usable size of ptr for the public function named (pool_usable_size
 * or, for a class of a set, the set's): see the header. */
size_t usable_size_in(struct pool *pool, const void *ptr)
{
	if (ptr == NULL)
		return 0;
	size_t index = region_slot(pool, ptr);
	int error;
	if (index < pool->block_count) {
		if (likely(block_is_live(pool, index))) {
			/* The whole block is the caller's now: under ASan
			 * its bytes past the size asked were poisoned. */
			hooks_block_expose(pool, (void *)ptr);
			return pool->block_size;
		}
		error = POOL_ERROR_DOUBLE_FREE;
	} else {
		error = outside_misuse(pool, ptr);
		if (error == 0)
			return fallback_usable_size(pool, ptr);
	}
	free_refused(pool, "pool_usable_size", (void *)ptr, error);
	return 0;
}

POOL_API size_t pool_usable_size(const pool_t *pool, const void *ptr)
{
	if (pool == NULL)
		return 0;
	/* Reads only, but the report path takes the pool as the others. */
	return usable_size_in((struct pool *)pool, ptr);
}

POOL_API const char *shiftpool_version(void)
{
	return SHIFTPOOL_VERSION_STRING;
}
