/*
 * shiftpool internals: the pool structure, its invariants, and the
 * prototypes shared between the source files, grouped by file.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SHIFTPOOL_INTERNAL_H
#define SHIFTPOOL_INTERNAL_H

#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shiftpool.h"

/* ------------------------------------------------------------ switches */

/* SHIFTPOOL_DEBUG (configure --enable-debug): internal assertions. */
#ifdef SHIFTPOOL_DEBUG
#include <assert.h>
#define POOL_ASSERT(x) assert(x)
#else
#define POOL_ASSERT(x) ((void)0)
#endif

#define POOL_API    __attribute__((visibility("default")))
#define POOL_COLD   __attribute__((cold, noinline))
#define POOL_INLINE static inline __attribute__((always_inline))
#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#define POOL_CACHE_LINE  64
#define POOL_OPTION_MASK (POOL_NO_FALLBACK | POOL_DEBUG_FILL)

/* ------------------------------------------------------------ limits */

/*
 * Blocks are addressed by a 32-bit index inside a span and by a size_t
 * index in the region; spans hold at most 2^SPAN_SHIFT_MAX blocks.
 */
#define SPAN_SHIFT_MIN    0  /* 1 block: a tiny pool still has many spans */
#define SPAN_SHIFT_MAX    8  /* 256 blocks */
#define SPAN_TARGET_COUNT 64 /* aim for at least this many spans per pool */

/* ------------------------------------------------------------ types */

/*
 * A span: a run of 2^span_shift consecutive blocks of the region (the last
 * span may be shorter), the unit a thread owns in POOL_PER_THREAD mode.
 *
 * The first cache line is written only by the span's owner (the thread
 * whose cache holds it), or by whoever holds the span while it is not
 * owned (it then sits on the available stack, or is abandoned, and nobody
 * writes these fields until a thread acquires it with an acquire pop).
 * The second line is written by other threads (remote frees) and by the
 * available-span stack.
 *
 * Invariant, at quiescence: bump == the span's blocks handed out +
 * |local_free| + |remote list| (the blocks below bump are in exactly one).
 */
struct span {
	/* owner line */
	void *local_free;      /* free blocks, linked through word 0 */
	_Atomic uint32_t bump; /* blocks [bump, capacity) never handed out;
	                          written by the owner, read by pool_stats() */
	uint32_t capacity;     /* blocks in this span */
	void *corrupt;         /* a bad link met by the fast path, for the
	                          slow path to report */
	char pad0[POOL_CACHE_LINE - 2 * sizeof(void *) - 2 * sizeof(uint32_t)];

	/* shared line */
	/* Blocks freed by threads that do not own the span: the low 32 bits
	 * are the span-relative index + 1 of the first (0 = empty), and each
	 * block links to the next through its word 1 (word 0 stays the local
	 * list's, so the two lists never write the same word).  SPAN_ABANDONED
	 * is set while nobody owns the span and it is on no stack: the remote
	 * free that clears it must publish the span. */
	_Atomic uint64_t remote;
	_Atomic uint32_t stack_next; /* next span + 1 on the available stack */
	char pad1[POOL_CACHE_LINE - sizeof(uint64_t) - sizeof(uint32_t)];
};

#define SPAN_ABANDONED ((uint64_t)1 << 32)

/* Per-thread counters; written by their thread only, read by pool_stats(). */
struct thread_counters {
	_Atomic uint64_t allocs, frees, fallback_allocs, fallback_frees;
};

/*
 * A thread's cache for one POOL_PER_THREAD pool.  Created on the thread's
 * first call on the pool; freed at thread exit or by pool_destroy() when
 * the destroying thread owns it.  Invariant: active, when not NULL, is a
 * span whose owner is this cache, and it is the only span this cache owns.
 */
struct thread_cache {
	struct span *active; /* the one span this thread owns */
	struct pool *pool;   /* NULL once the pool is destroyed */
	uint64_t pool_id;    /* pool->id, immutable: identifies the pool */
	struct thread_counters counters;
	struct thread_cache *thread_next;           /* this thread's caches */
	struct thread_cache *pool_next, *pool_prev; /* the pool's caches */
};

/*
 * The shared free list of POOL_SINGLE and POOL_LOCKED modes.
 * Invariant: allocs - frees == blocks handed out == bump - |free_list|.
 */
struct shared_list {
	void *free_list; /* free blocks, linked through word 0 */
	size_t bump;     /* blocks [bump, block_count) never used */
	uint64_t allocs, frees;
};

/*
 * A pool.  The first line holds what every call reads and nobody writes
 * after pool_init(): the region's bounds and shape.
 */
struct pool {
	char *base;           /* first block; aligned to min(block, page) */
	char *end;            /* one past the last block */
	unsigned block_shift; /* block_size == 1 << block_shift */
	unsigned span_shift;  /* blocks per span == 1 << span_shift */
	int dispatch;         /* DISPATCH_*: which entry points serve */
	int mode;             /* POOL_SINGLE, POOL_LOCKED, POOL_PER_THREAD */
	size_t block_size;
	size_t block_count;
	uint64_t id;      /* unique per pool_init() in this process */
	uintptr_t secret; /* encodes free-list links (hooks.h) */
	unsigned hooks;   /* HOOK_* (hooks.h); 0 for most pools */
	int flags;

	/* POOL_SINGLE and POOL_LOCKED: one byte per block, 1 while the block
	 * is handed out; the list itself lives in the free blocks. */
	uint8_t *allocated;
	struct shared_list shared;
	pthread_mutex_t lock; /* POOL_LOCKED: guards shared and allocated */

	/* Fallback counters for POOL_SINGLE and POOL_LOCKED (per thread in
	 * POOL_PER_THREAD). */
	_Atomic uint64_t fallback_allocs, fallback_frees;

	/* POOL_PER_THREAD */
	struct span *spans;
	size_t span_count;
	_Atomic uint32_t *block_state; /* per block: see STATE_* in thread.h;
	                              written by the span's owner only */
	_Atomic uint32_t
	    *claims; /* per block: 0, or the state a remote free
	                claimed; set by CAS, cleared by the owner */
	_Atomic uint64_t
	    available; /* stack of spans: top index + 1 | tag << 32 */
	_Atomic size_t
	    fresh_spans; /* spans [fresh_spans, span_count) untouched */
	struct thread_cache *caches;    /* guarded by the registry lock */
	struct thread_counters retired; /* from caches whose thread exited */

	/* Debug options (debug.c). */
	uint64_t
	    fail_fallback_at; /* the Nth fallback allocation fails; 0 off */
	_Atomic uint64_t fallback_attempts;

	/* Memory to release in pool_destroy(). */
	void *mapping;
	size_t mapping_size;

	/* All live pools, for fork handling (fork.c); guarded by its lock. */
	struct pool *all_next, *all_prev;
};

/* pool->dispatch: the public functions test it once and tail-call. */
enum {
	DISPATCH_SINGLE,     /* POOL_SINGLE, no hooks */
	DISPATCH_PER_THREAD, /* POOL_PER_THREAD, no hooks */
	DISPATCH_LOCKED,     /* POOL_LOCKED, no hooks */
	DISPATCH_HOOKED      /* any mode with hooks */
};

/* ------------------------------------------------------------ region.c */

/* Reserves the region and the side tables for pool's mode; 0 or errno. */
int region_reserve(struct pool *pool);
/* Releases what region_reserve() got. */
void region_release(struct pool *pool);

POOL_INLINE bool region_contains(const struct pool *pool, const void *ptr)
{
	/* One unsigned compare covers both ends. */
	return (uintptr_t)((const char *)ptr - pool->base) <
	       (uintptr_t)(pool->end - pool->base);
}

POOL_INLINE size_t region_index_of(const struct pool *pool, const void *ptr)
{
	return (size_t)((const char *)ptr - pool->base) >> pool->block_shift;
}

POOL_INLINE bool region_is_block_start(const struct pool *pool, const void *ptr)
{
	return (((uintptr_t)ptr - (uintptr_t)pool->base) &
	        (pool->block_size - 1)) == 0;
}

/*
 * The index of the block that starts at ptr, or a value >= block_count
 * when ptr is no block start of the region: the range check, the
 * alignment check and the shift in one subtraction and one rotation.  An
 * offset that is not a multiple of the block size rotates its low bits
 * into the high ones; one below the base wraps around to a huge value.
 */
POOL_INLINE size_t region_slot(const struct pool *pool, const void *ptr)
{
	uintptr_t offset = (uintptr_t)ptr - (uintptr_t)pool->base;
	unsigned shift = pool->block_shift;
	return (size_t)((offset >> shift) |
	                (offset << (-shift & (8 * sizeof offset - 1))));
}

POOL_INLINE void *region_block(const struct pool *pool, size_t index)
{
	return pool->base + (index << pool->block_shift);
}

/* ------------------------------------------------------------ pool.c */

/* Serves a request the pool cannot (too big, or the pool is exhausted)
 * from malloc/calloc; NULL with errno ENOMEM under POOL_NO_FALLBACK. */
POOL_COLD void *fallback_alloc(struct pool *pool, size_t size, bool zero);
/* Whether a block of the region is handed out now. */
bool pool_block_is_live(struct pool *pool, size_t index);
/* Reports a free-list link, or a listed block, that is not a free block. */
POOL_COLD void pool_report_corrupted(struct pool *pool, const void *link);

/* ------------------------------------------------------------ debug.c */

/* Reads SHIFTPOOL_DEBUG, SHIFTPOOL_TRACE and Valgrind's presence into the
 * pool's hooks and debug options. */
void debug_configure(struct pool *pool);
/* Releases what debug_configure() set up for the pool. */
void debug_release(struct pool *pool);
/* Whether the debug options make this fallback allocation fail. */
bool debug_fail_fallback(struct pool *pool);
/* Flushes the trace before a misuse report, which may abort. */
void debug_before_report(void);
/* Writes one trace line: op, then a printf-style rest. */
void trace_write(const struct pool *pool, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* ------------------------------------------------------------ fork.c */

/* Registers a pool so fork() leaves it usable in the child. */
int fork_register(struct pool *pool);
void fork_unregister(struct pool *pool);

/* ------------------------------------------------------------ report.c */

/* Reports misuse through the installed handler (default: print, abort). */
POOL_COLD void pool_report(const struct pool *pool, const char *function,
                           const void *ptr, enum pool_error error);

/* The fast paths of each mode are inline in shared.h and thread.h. */

#endif /* SHIFTPOOL_INTERNAL_H */
