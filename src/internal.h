/*
 * shiftpool internals: the build switches, the pool and its parts with
 * their invariants, the region's address arithmetic, and the prototypes
 * shared between the source files, grouped by the file that defines them.
 *
 * The files of src/ form layers; each calls only into the layers below it
 * (tests/layers.sh checks that no two files depend on each other):
 *
 *   pool.c     public entry points: argument checks, dispatch, fallback
 *   stats.c    pool_stats(), pool_stats_print()
 *   shared.c   POOL_SINGLE and POOL_LOCKED (fast paths inline: shared.h)
 *   thread.c   POOL_PER_THREAD (fast paths inline: thread.h)
 *   fallback.c the system allocator behind a pool
 *   fork.c     the live pools, and fork()
 *   debug.c    SHIFTPOOL_DEBUG, the fill pattern, Valgrind
 *   report.c   misuse reports and the error handler
 *   trace.c    SHIFTPOOL_TRACE (its format: trace-format.h)
 *   region.c   the mapping
 *
 * and the headers under them: hooks.h (what a block going out or coming
 * back costs when a tool is watching), link.h (the free-list links),
 * this one.
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
#include "trace-format.h"

/* ------------------------------------------------------------ switches */

/* SHIFTPOOL_ASSERTIONS (configure --enable-debug): internal assertions and
 * the invariant checks span_check() and shared_check(). */
#ifdef SHIFTPOOL_ASSERTIONS
#include <assert.h>
#define POOL_ASSERT(x) assert(x)
#else
#define POOL_ASSERT(x) ((void)0)
#endif

/* The attribute vocabulary of src/: exported, inlined always, never
 * inlined, and never inlined because rarely run. */
#define POOL_API      __attribute__((visibility("default")))
#define POOL_INLINE   static inline __attribute__((always_inline))
#define POOL_NOINLINE __attribute__((noinline))
#define POOL_COLD     __attribute__((cold, noinline))
#define likely(x)     __builtin_expect(!!(x), 1)
#define unlikely(x)   __builtin_expect(!!(x), 0)

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
 * Invariant, at quiescence (span_check()): bump == the span's blocks
 * handed out + |local_free| + |remote list| + parked blocks (each block
 * below bump is in exactly one of them).
 */
struct span {
	/* owner line */
	void *local_free;      /* free blocks, linked through word 0 */
	_Atomic uint32_t bump; /* blocks [bump, capacity) never handed out;
	                          written by the owner, read by pool_stats() */
	uint32_t capacity;     /* blocks in this span */
	char pad0[POOL_CACHE_LINE - sizeof(void *) - 2 * sizeof(uint32_t)];

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

_Static_assert(sizeof(struct span) == 2 * POOL_CACHE_LINE,
               "a span is an owner line and a shared line");
_Static_assert(offsetof(struct span, remote) == POOL_CACHE_LINE,
               "remote frees write only the span's second line");

#define SPAN_ABANDONED ((uint64_t)1 << 32)

/* What each thread counts of its own calls, as indexes of counters[]. */
enum thread_counter {
	COUNT_ALLOCS,
	COUNT_FREES,
	COUNT_FALLBACK_ALLOCS,
	COUNT_FALLBACK_FREES,
	COUNT_KINDS
};

/* Per-thread counters; written by their thread only, read by pool_stats(),
 * and folded into the pool's retired counters (under the registry lock)
 * when the thread exits. */
struct thread_counters {
	_Atomic uint64_t counters[COUNT_KINDS];
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
	struct thread_counters counts;
	struct thread_cache *thread_next;           /* this thread's caches */
	struct thread_cache *pool_next, *pool_prev; /* the pool's caches */
};

/*
 * The shared free list of POOL_SINGLE and POOL_LOCKED modes.
 * Invariant (shared_check()): allocs - frees == blocks handed out ==
 * bump - |free_list|, and a block is marked allocated exactly when it is
 * handed out.
 */
struct shared_list {
	void *free_list; /* free blocks, linked through word 0 */
	size_t bump;     /* blocks [bump, block_count) never used */
	uint64_t allocs, frees;
};

/*
 * A pool.  The first cache line holds what every call reads and nobody
 * writes after pool_init(): the region's bounds and shape, how to encode
 * links, which entry points serve.
 */
struct pool {
	/* read by every call, written by pool_init() only */
	char *base;           /* first block; aligned to min(block, page) */
	char *end;            /* one past the last block */
	size_t block_size;    /* 1 << block_shift */
	size_t block_count;   /* blocks in the region */
	uintptr_t secret;    /* encodes free-list links (link.h) */
	uint64_t id;         /* unique per pool_init() in this process */
	uint8_t block_shift; /* block_size == 1 << block_shift */
	uint8_t span_shift;  /* blocks per span == 1 << span_shift */
	uint8_t dispatch;    /* DISPATCH_*: which entry points serve */
	uint8_t mode;        /* POOL_SINGLE, POOL_LOCKED, POOL_PER_THREAD */
	unsigned hooks;      /* HOOK_* (hooks.h); 0 for most pools */
	int flags;           /* as given to pool_init() */

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
	/* per block: see STATE_* in thread.h; written by the span's owner
	 * only */
	_Atomic uint32_t *block_state;
	/* per block: 0, or the state a remote free claimed; set by CAS,
	 * cleared by the owner */
	_Atomic uint32_t *claims;
	/* stack of spans: top index + 1 | tag << 32 */
	_Atomic uint64_t available;
	/* spans [fresh_spans, span_count) untouched */
	_Atomic size_t fresh_spans;
	/* guarded by the registry lock (thread.c) */
	struct thread_cache *caches;
	/* from caches whose thread exited */
	struct thread_counters retired;

	/* Debug options (debug.c): the Nth fallback allocation fails (0:
	 * off). */
	uint64_t fail_fallback_at;
	_Atomic uint64_t fallback_attempts;

	/* Memory to release in pool_destroy(). */
	void *mapping;
	size_t mapping_size;

	/* All live pools, for fork handling (fork.c); guarded by its lock. */
	struct pool *all_next, *all_prev;
};

_Static_assert(offsetof(struct pool, flags) + sizeof(int) <= POOL_CACHE_LINE,
               "what every call reads fits the pool's first cache line");

/* pool->hooks: what the pool does besides handing out blocks (hooks.h). */
#define HOOK_VALGRIND 0x1u /* describe blocks to memcheck */
#define HOOK_FILL     0x2u /* fill free blocks, verify when handed out */
#define HOOK_TRACE    0x4u /* log every call to the trace file */

/* pool->dispatch: the public functions test it once and tail-call. */
enum {
	DISPATCH_SINGLE,     /* POOL_SINGLE, no hooks */
	DISPATCH_PER_THREAD, /* POOL_PER_THREAD, no hooks */
	DISPATCH_LOCKED,     /* POOL_LOCKED, no hooks */
	DISPATCH_HOOKED      /* any mode with hooks */
};

/* ------------------------------------------------------------ the region */

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

/* ------------------------------------------------------------ region.c */

/* Reserves the region and the side tables for pool's mode; 0 or errno. */
int region_reserve(struct pool *pool);
/* Releases what region_reserve() got. */
void region_release(struct pool *pool);

/* ------------------------------------------------------------ trace.c */

/* Opens the trace file named by SHIFTPOOL_TRACE once per process; returns
 * whether tracing is on. */
bool trace_open(void);
/* Writes one record: op, the common keys of pool (pool may be NULL for
 * records of no pool), then a printf-style rest.  errno is kept. */
void trace_record(const struct pool *pool, enum trace_op op,
                  const char *format, ...)
    __attribute__((format(printf, 3, 4)));
/* Writes out what is buffered (before a report that may abort, and at
 * exit). */
void trace_flush(void);
/* fork(): hold the trace still; then the parent and the child go on. */
void trace_fork_prepare(void);
void trace_fork_parent(void);
void trace_fork_child(void);

/* ------------------------------------------------------------ report.c */

/* Reports misuse through the installed handler (default: print, abort). */
POOL_COLD void report_misuse(const struct pool *pool, const char *function,
                             const void *ptr, enum pool_error error);
/* Reports misuse found apart from the outcome of the call that made it (a
 * racing double free found at a drain, a damaged free block): also a
 * trace record of its own. */
POOL_COLD void report_detected(const struct pool *pool, const char *function,
                               const void *ptr, enum pool_error error);
/* Reports a free-list link, or a listed block, that is not a free block. */
POOL_COLD void report_corrupted(struct pool *pool, const void *link);

/* ------------------------------------------------------------ debug.c */

/* Reads SHIFTPOOL_DEBUG, SHIFTPOOL_TRACE and Valgrind's presence into the
 * pool's hooks and debug options. */
void debug_configure(struct pool *pool);
/* A block still handed out dies with its pool (Valgrind must not call it
 * a leak). */
void debug_block_dies(struct pool *pool, void *block);
/* Whether the debug options make this fallback allocation fail. */
bool debug_fail_fallback(struct pool *pool);
/* The out-of-line halves of hooks_block_out() and hooks_block_in()
 * (hooks.h): a block goes out (fresh: never used before) or comes back. */
POOL_COLD void hooks_block_out_slow(struct pool *pool, void *block, bool fresh,
                                    unsigned hooks);
POOL_COLD void hooks_block_in_slow(struct pool *pool, void *block,
                                   unsigned hooks);

/* ------------------------------------------------------------ fork.c */

/* Registers a pool so fork() leaves it usable in the child. */
int fork_register(struct pool *pool);
void fork_unregister(struct pool *pool);

/* ------------------------------------------------------------ fallback.c */

/* Serves a request the pool cannot (too big, or the pool is exhausted)
 * from malloc/calloc; NULL with errno ENOMEM under POOL_NO_FALLBACK. */
POOL_COLD void *fallback_alloc(struct pool *pool, size_t size, bool zero);
/* Gives a pointer from outside the region back to free(). */
POOL_COLD void fallback_free(struct pool *pool, void *ptr);

/* The modes (shared.h, thread.h) and the hooks (hooks.h) declare their
 * own. */

#endif /* SHIFTPOOL_INTERNAL_H */
