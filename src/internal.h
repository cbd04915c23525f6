/*
 * shiftpool internals: the build switches, the pool and its parts with
 * their invariants, the region's address arithmetic, and the prototypes
 * shared between the source files, grouped by the file that defines them.
 *
 * The files of src/ form layers; each calls only into the layers below it
 * (tests/layers.sh checks that no two files depend on each other, and
 * prints the order):
 *
 *   set.c      pool sets: classes are pools placed in one reservation
 *              (their allocations are dispatched in pool.c)
 *   create.c   pool_init(), pool_destroy(): arguments, geometry, mapping
 *   pool.c     public entry points: dispatch, fallback, realloc, bulk
 *              calls
 *   stats.c    pool_stats(), pool_stats_print()
 *   registry.c the live pools: another pool's pointer, and fork()
 *   fallback.c the allocator behind a pool (the C library's by default)
 *   list.c     POOL_SINGLE and POOL_LOCKED: the free list in the blocks
 *              (fast paths inline: list.h)
 *   lock.c     POOL_LOCKED's lock, its waiting side
 *   span.c     POOL_PER_THREAD: the spans a thread owns (fast paths
 *              inline: span.h)
 *   region.c   the mapping
 *   meta.c     the library's own objects, from its own mappings
 *   debug.c    SHIFTPOOL_DEBUG, the fill pattern, Valgrind
 *   report.c   misuse reports and the error handler
 *   trace.c    SHIFTPOOL_TRACE (its format: trace-format.h)
 *
 * and the headers under them: hooks.h (what a block going out or coming
 * back costs when a tool is watching), link.h (the free-list links),
 * this one, and the public header, whose part for SHIFTPOOL_INLINE holds
 * the fast paths themselves.
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
#include <unistd.h>

/*
 * The fast paths' code is in the public header (shiftpool.h, the part for
 * SHIFTPOOL_INLINE), so that a program that inlines it and the library
 * run the same code.  In an AddressSanitizer build free blocks are
 * poisoned, and the pool's own reads and writes of their words must not
 * be instrumented: they go through functions that are not (and therefore
 * not inlined: GCC will not inline across that attribute).
 */
#define SHIFTPOOL_BUILDING_ 1
#ifdef SHIFTPOOL_ASAN
static __attribute__((noinline, no_sanitize_address, unused)) uintptr_t
block_word_load(const void *block, int word)
{
	return ((const uintptr_t *)block)[word];
}

static __attribute__((noinline, no_sanitize_address, unused)) void
block_word_store(void *block, int word, uintptr_t value)
{
	((uintptr_t *)block)[word] = value;
}
#define SHIFTPOOL_LINK_LOAD_(block, word) block_word_load((block), (word))
#define SHIFTPOOL_LINK_STORE_(block, word, value)                              \
	block_word_store((block), (word), (value))
#endif

#include "shiftpool.h"
#include "shiftpool/inline.h"
#include "trace-format.h"

/* ------------------------------------------------------------ switches */

/* SHIFTPOOL_ASSERTIONS (configure --enable-debug): internal assertions and
 * the invariant checks span_check() and list_check(). */
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

#define POOL_CACHE_LINE 64
#define POOL_CACHE_LINE_SHIFT 6
_Static_assert(POOL_CACHE_LINE == 1 << POOL_CACHE_LINE_SHIFT,
               "the line's size and its log 2");
#define POOL_OPTION_MASK                                                       \
	(POOL_NO_FALLBACK | POOL_DEBUG_FILL | POOL_PREFAULT | POOL_HUGEPAGES | \
	 POOL_LOCK_MEMORY)
/* No region is larger: the user address space of x86-64 and AArch64
 * (48-bit) Linux, or all of a 32-bit one. */
#define REGION_MAX_BYTES                                                       \
	(SIZE_MAX > UINT32_MAX ? (size_t)1 << 47 : (size_t)SIZE_MAX)
/* The size POOL_HUGEPAGES aligns the region to: a transparent huge page. */
#define REGION_HUGE_PAGE ((size_t)2 << 20)
/* The places in its first page a pool's structure may start at, each
 * SHIFTPOOL_MAP_OFFSET_ bytes after the last (region.c). */
#define REGION_COLORS 8

/* ------------------------------------------------------------ limits */

/*
 * POOL_PER_THREAD cuts the region into spans of 2^span_shift blocks, 1 to
 * SPAN_MAX_BLOCKS, aiming at SPAN_TARGET_COUNT spans per pool: large spans,
 * because a thread that frees in random order switches spans less often
 * the more blocks each holds, and enough of them that what a thread holds
 * beyond its live blocks (two spans at most, span.c) is a small part of
 * the pool.  A span's per-block state fits in its own descriptor (two
 * cache lines), whatever the pool's size.
 */
#define SPAN_SHIFT_MIN    0
#define SPAN_SHIFT_MAX    8
#define SPAN_MAX_BLOCKS   (1u << SPAN_SHIFT_MAX)
#define SPAN_TARGET_COUNT 16
#define SPAN_WORDS        (SPAN_MAX_BLOCKS / 64)
_Static_assert(SPAN_WORDS == 4,
               "shiftpool_span_idle_() reads a span's four out words");

/* ------------------------------------------------------------ lock */

/*
 * POOL_LOCKED's lock: a word, 0 free, 1 held.  Taking a free lock is one
 * compare-and-swap and releasing it one plain store (release order), where
 * a pthread mutex costs two calls and an atomic read-modify-write each
 * way.  A waiter backs off between looks at it, then yields its core
 * (lock_wait(), lock.c); the lock is not fair, so a long section that
 * runs again at once (pool_trim()) gives way after it (lock_give_way()).
 * Acquire and release orders make it a lock for the ThreadSanitizer too.
 */
struct spin_lock {
	_Atomic uint32_t state;
	/* threads in lock_wait(): a long section gives way only to them */
	_Atomic uint32_t waiting;
};

POOL_COLD void lock_wait(struct spin_lock *lock);
/* Waits long enough, after a long section, for a waiter backing off to
 * see the lock free. */
POOL_COLD void lock_give_way(void);
/* In a child of fork(): the threads that waited for the lock in the
 * parent are gone, and a count left over would have long sections give
 * way to nobody, for good. */
POOL_INLINE void lock_forget_waiters(struct spin_lock *lock)
{
	atomic_store_explicit(&lock->waiting, 0, memory_order_relaxed);
}
/* Whether a thread waits for the lock now. */
POOL_INLINE bool lock_wanted(struct spin_lock *lock)
{
	return atomic_load_explicit(&lock->waiting, memory_order_relaxed) != 0;
}

POOL_INLINE void lock_acquire(struct spin_lock *lock)
{
	uint32_t expected = 0;
	if (unlikely(!atomic_compare_exchange_strong_explicit(
	        &lock->state, &expected, 1, memory_order_acquire,
	        memory_order_relaxed)))
		lock_wait(lock);
}

/* lock_acquire() that tells whether the lock was taken when it came. */
POOL_INLINE bool lock_acquire_contended(struct spin_lock *lock)
{
	uint32_t expected = 0;
	if (likely(atomic_compare_exchange_strong_explicit(
	        &lock->state, &expected, 1, memory_order_acquire,
	        memory_order_relaxed)))
		return false;
	lock_wait(lock);
	return true;
}

POOL_INLINE void lock_release(struct spin_lock *lock)
{
	atomic_store_explicit(&lock->state, 0, memory_order_release);
}

/* The log of a power of two. */
POOL_INLINE unsigned log2_of(size_t power)
{
	return (unsigned)__builtin_ctzll((unsigned long long)power);
}

/* ------------------------------------------------------------ bitmaps */

/*
 * Bit i of a bitmap of 64-bit words.  The word operations are the public
 * header's (on x86-64 the register forms of bt, bts and btr, which take
 * the bit number modulo 64: their memory forms, which address the bit
 * from the bitmap's base in one instruction, are microcoded and several
 * times slower); here with bool.
 */
POOL_INLINE uint64_t bit_mask(size_t i)
{
	return (uint64_t)1 << (i & 63);
}

/* value with bit i (modulo 64) set, or cleared; *was: whether it was set. */
POOL_INLINE uint64_t word_set(uint64_t value, size_t i, bool *was)
{
	int set;
	value = shiftpool_word_set_(value, i, &set);
	*was = set;
	return value;
}

POOL_INLINE uint64_t word_clear(uint64_t value, size_t i, bool *was)
{
	int set;
	value = shiftpool_word_clear_(value, i, &set);
	*was = set;
	return value;
}

POOL_INLINE bool word_test(uint64_t value, size_t i)
{
	return shiftpool_word_test_(value, i);
}

/*
 * A bitmap's word held in a register across a run of bit operations (the
 * bulk calls): the blocks of a batch mostly share words, and each word is
 * then loaded and stored once, where a load, change and store per bit
 * would make each operation wait for the one before.  Loads and stores
 * are relaxed atomic ones (plain on x86-64), for the words other threads
 * read (a span's out[]); nobody else may write the words meanwhile.
 */
struct word_cache {
	uint64_t *words;
	size_t k; /* the word held, or SIZE_MAX */
	uint64_t value;
};

POOL_INLINE void word_cache_init(struct word_cache *c, void *words)
{
	c->words = words;
	c->k = SIZE_MAX;
	c->value = 0;
}

/* The word of bit i, held: change it through the pointer. */
POOL_INLINE uint64_t *word_cache_at(struct word_cache *c, size_t i)
{
	if ((i >> 6) != c->k) {
		if (c->k != SIZE_MAX)
			__atomic_store_n(&c->words[c->k], c->value,
			                 __ATOMIC_RELAXED);
		c->k = i >> 6;
		c->value = __atomic_load_n(&c->words[c->k], __ATOMIC_RELAXED);
	}
	return &c->value;
}

/* Stores the word held back. */
POOL_INLINE void word_cache_flush(struct word_cache *c)
{
	if (c->k != SIZE_MAX)
		__atomic_store_n(&c->words[c->k], c->value, __ATOMIC_RELAXED);
}

/* Sets bit i; returns whether it was set already. */
POOL_INLINE bool bit_test_and_set(void *words, size_t i)
{
	uint64_t *word = (uint64_t *)words + (i >> 6);
	bool was;
	/* Whole loads and stores: POOL_LOCKED's fast paths read allocated[]
	 * without the lock that guards its writers. */
	__atomic_store_n(word,
	                 word_set(__atomic_load_n(word, __ATOMIC_RELAXED), i,
	                          &was),
	                 __ATOMIC_RELAXED);
	return was;
}

/* Clears bit i; returns whether it was set. */
POOL_INLINE bool bit_test_and_clear(void *words, size_t i)
{
	uint64_t *word = (uint64_t *)words + (i >> 6);
	bool was;
	__atomic_store_n(word,
	                 word_clear(__atomic_load_n(word, __ATOMIC_RELAXED), i,
	                            &was),
	                 __ATOMIC_RELAXED);
	return was;
}

POOL_INLINE bool bit_test(const void *words, size_t i)
{
	return word_test(((const uint64_t *)words)[i >> 6], i);
}

/*
 * Words that one thread writes and others read (a span's out bits, its
 * allocation count): the writer needs no atomic read-modify-write, only
 * that each store is whole; readers load them atomically.  A relaxed load
 * and a relaxed store, each one plain instruction.
 */
POOL_INLINE bool owned_test_and_set(_Atomic uint64_t *words, size_t i)
{
	_Atomic uint64_t *word = words + (i >> 6);
	bool was;
	atomic_store_explicit(
	    word,
	    word_set(atomic_load_explicit(word, memory_order_relaxed), i, &was),
	    memory_order_relaxed);
	return was;
}

POOL_INLINE bool owned_test_and_clear(_Atomic uint64_t *words, size_t i)
{
	_Atomic uint64_t *word = words + (i >> 6);
	bool was;
	atomic_store_explicit(
	    word,
	    word_clear(atomic_load_explicit(word, memory_order_relaxed), i,
	               &was),
	    memory_order_relaxed);
	return was;
}

/* Bit i of words other threads may be writing; relaxed. */
POOL_INLINE bool shared_test(_Atomic uint64_t *words, size_t i)
{
	return word_test(
	    atomic_load_explicit(words + (i >> 6), memory_order_relaxed), i);
}

POOL_INLINE void owned_add(_Atomic uint64_t *counter, uint64_t n)
{
	atomic_store_explicit(
	    counter, atomic_load_explicit(counter, memory_order_relaxed) + n,
	    memory_order_relaxed);
}

POOL_INLINE void owned_increment(_Atomic uint64_t *counter)
{
	shiftpool_owned_add1_((uint64_t *)counter);
}

/* ------------------------------------------------------------ types */

/*
 * A span: a run of 2^span_shift consecutive blocks of the region (the last
 * span may be shorter), the unit a thread owns in POOL_PER_THREAD mode,
 * and the state of its blocks.  The local and parked lists link free
 * blocks through their word 0 by address, encoded (link.h); NULL ends
 * them.  A block freed by another thread is only claimed: its claim bit
 * is set, and the block itself is not written.
 *
 * owner names the thread cache that owns the span (0: none), with
 * OWNER_FULL set while the span sits on that cache's list of full spans.
 * A thread owns many spans: its active span, the spans on its list of
 * spans with free blocks and those on its list of full spans (span.c).
 * The owner line and used, prev and the list link in stack_next are
 * written only by the owner, or by whoever holds the span while nobody
 * owns it (it then sits on the available stack, or is abandoned, and
 * nobody writes these fields until a thread acquires it with an acquire
 * operation).  Other threads read out[] and owner (a free compares owner
 * with its own cache), and pool_stats() reads allocs and out[].  The
 * shared line is written by other threads (remote frees), by the
 * available stack, and by the owner's slow path.
 *
 * Invariants (span_check()), for blocks below bump: a block is either
 * handed out (its out bit set), or on the local list, or parked, or on
 * its owner's stack, exactly once; used is the number of out bits set plus
 * the number of the span's blocks on the stack (a block on the stack is
 * neither on a list of the span nor handed out, and moves on and off the
 * stack with no count changed: span_stacked() derives it); a block freed
 * by another thread and not yet drained is handed out by out[] and
 * claimed.  A claimed block is never handed out again until the drain
 * has seen its claim: the owner parks it instead.
 */
struct span {
	/* owner line */
	/* the local free list's first block, as decoded from the link that
	 * named it: checked against the span's range before it is followed */
	char *local;
	/* blocks ever handed out from this span, by all its owners */
	_Atomic uint64_t allocs;
	/* The block whose link gave local: the one to report when local is
	 * refused.  It is not placed right after local on purpose: next to
	 * each other, the compiler merges the two stores of a pop into one
	 * wide store, which is slower here than two plain ones. */
	char *last;
	/* one bit per block, set while the block is handed out */
	_Atomic uint64_t out[SPAN_WORDS];
	/* Blocks handed out by out[], and blocks on the owner's stack. */
	uint16_t used;
	uint16_t spare; /* unused: the header's spare_ */
	/* free blocks a remote free still claims: the first one's rel + 1 */
	uint32_t parked;

	/* shared line */
	/* SPAN_ABANDONED while nobody owns the span and it is on no stack,
	 * with no free block: the first remote free after the mark (or the
	 * owner that made it, seeing a claim) clears it and publishes the
	 * span; 0 otherwise. */
	_Atomic uint64_t abandoned;
	/* 1: freed by a thread that does not own the span (a remote free),
	 * and not yet drained by the owner */
	_Atomic uint64_t claim[SPAN_WORDS];
	/* the owning cache's address, | OWNER_FULL; 0: nobody */
	_Atomic uintptr_t owner;
	/* next span + 1 on the available stack, or on the owner's list */
	_Atomic uint32_t stack_next;
	uint32_t prev;         /* previous span + 1 on the owner's list */
	_Atomic uint32_t bump; /* blocks [bump, capacity) never handed out */
	uint32_t capacity;     /* blocks in this span */
};

_Static_assert(sizeof(struct span) == 2 * POOL_CACHE_LINE,
               "a span is an owner line and a shared line");
_Static_assert(offsetof(struct span, abandoned) == POOL_CACHE_LINE,
               "remote frees write only the span's second line");

/* owner's mark of a span on its owner's list of full spans. */
#define OWNER_FULL     ((uintptr_t)1)
#define SPAN_ABANDONED ((uint64_t)1)

/* What each thread counts of its own calls, as indexes of counters[]; the
 * pool's own blocks are counted by the spans. */
enum thread_counter {
	COUNT_FALLBACK_ALLOCS,
	COUNT_FALLBACK_FREES,
	/* blocks a failed pool_malloc_bulk() took and freed again */
	COUNT_TAKEN_BACK,
	/* POOL_LOCKED: blocks handed out from the thread's stack, and
	 * blocks freed onto it (or onto a magazine it fills) */
	COUNT_STACK_POPS,
	COUNT_STACK_PUSHES,
	COUNT_KINDS
};

/* Per-thread counters; written by their thread only, read by pool_stats(),
 * and folded into the pool's retired counters (under caches_lock, span.c)
 * when the thread exits. */
struct thread_counters {
	_Atomic uint64_t counters[COUNT_KINDS];
};

/* A list of spans a thread cache owns: span number + 1 of its ends, 0
 * for none. */
struct span_list {
	uint32_t head, tail;
};

/*
 * A thread's stack of free blocks for one POOL_PER_THREAD pool (point 14
 * of span.c's design): blocks the thread freed into spans its cache owns,
 * linked through word 0 as the spans' local lists are, newest first.
 * Their out bits are clear; their spans count them in used.
 * While the thread's hint holds the pool the hint's copy is the one that
 * counts, as for the active span.
 */
struct thread_stack {
	char *head;
	/* The block whose link gave head: the one to report when head is
	 * refused. */
	char *last;
	uint32_t count;
	/* Blocks the stack holds at most (the pool's stack_limit while the
	 * hint holds the pool, else 0, which makes the fast path refuse). */
	uint32_t limit;
};

/* Empties a stack, its blocks dropped or moved elsewhere, its bound
 * kept. */
POOL_INLINE void stack_clear(struct thread_stack *stack)
{
	*stack = (struct thread_stack){.limit = stack->limit};
}

/*
 * A thread's cache for one POOL_PER_THREAD pool.  Created on the thread's
 * first call on the pool; freed at thread exit or by pool_destroy() when
 * the destroying thread owns it.  Invariant: the spans whose owner is this
 * cache are active, the spans on the partial list, and (with OWNER_FULL)
 * the spans on the full list; each list is linked through the spans'
 * stack_next and prev (span number + 1, 0 ends it).  While the thread's
 * hint (span.h) holds this pool, the hint's copy of the active span is
 * the one that counts; it is written back here when the hint moves to
 * another pool.
 */
struct thread_cache {
	struct span *active; /* the span this thread allocates from */
	struct pool *pool;   /* NULL once the pool is destroyed */
	uint64_t pool_id;    /* pool->id, immutable: identifies the pool */
	/* owned spans with free blocks, not active, oldest first */
	struct span_list partial;
	struct span_list full; /* owned spans found with no free block */
	uint32_t empty;        /* spans of the partial list with none out */
	/* The most blocks the thread's stack holds: the pool's stack_limit,
	 * or 0 while the thread has not allocated from a POOL_LOCKED pool
	 * (a thread that only frees keeps nothing aside: locked.c). */
	uint32_t stack_limit;
	/* POOL_LOCKED: frees in a row by a thread that has not allocated,
	 * up to one past the count that makes it fill magazines (locked.c,
	 * point 6) */
	uint32_t frees_alone;
	/* POOL_LOCKED: the magazine a thread that only frees is filling,
	 * which a thread that finds the pool dry may take (locked.c, point
	 * 6), and the blocks in it as far as the filling thread knows */
	_Atomic uintptr_t filling;
	uint32_t filling_count;
	struct thread_stack stack;
	struct thread_counters counts;
	struct thread_cache *thread_next;           /* this thread's caches */
	struct thread_cache *pool_next, *pool_prev; /* the pool's caches */
};

/*
 * The free list of POOL_SINGLE and POOL_LOCKED modes, linked
 * through word 0 of the free blocks and ended by NULL.  A link is kept as
 * it decodes, unchecked: the next pop checks the head with region_slot(),
 * which tells in one compare a block to take, and the end of the list or a
 * link that must not be followed.
 * Invariant (list_check()): a block is marked allocated exactly when it
 * is handed out; blocks below bump are handed out, on the list, on a
 * running trim's list or held by it, in a chunk given back, or still to
 * carve, once.
 */
struct free_list {
	char *head;      /* the first free block */
	uint64_t allocs; /* frees are allocs - blocks handed out */
	size_t bump;     /* blocks [bump, block_count) never used */
	/* The block whose link gave head: the one to report when head is
	 * refused.  It is kept apart from head for the reason given at
	 * struct span's last: two plain stores, not one merged one. */
	char *last;
	/* pool_trim(): one bit per chunk of the region whose pages were
	 * given back; its blocks are free, zero, on no list.  The blocks
	 * [carve, carve_end) of a chunk taken back are handed out first. */
	uint64_t *released;
	size_t released_blocks; /* in chunks still marked released */
	size_t carve, carve_end;
	size_t released_cursor; /* no released chunk below it */
	/* A running pool_trim() (list.c), between the times it holds the
	 * pool: the list it took to sort (the first block to take, and the
	 * block whose link gave it), and one bit per block it holds aside,
	 * free, on no list, in chunks [held_lo, held_hi] only. */
	char *sorting, *sorting_last;
	size_t sorting_left; /* more than this many is a cycle */
	uint64_t *held;
	size_t held_blocks;
	size_t held_lo, held_hi;
	bool trimming;
	/* A list was dropped as corrupted: its blocks are lost (never
	 * handed out again), and the invariant counts them no more. */
	bool damaged;
};

/* What serves a pool beyond its fast paths (pool.c). */
struct pool_ops;

/*
 * A pool.  It lives in the first page of its own mapping, at one of
 * REGION_COLORS places, its side tables after it (region.c).  The first
 * cache line holds what every call reads and nobody writes after
 * pool_init(): the region's bounds and shape, how to encode links, which
 * fast path serves, pool_free()'s entry.
 */
/* POOL_LOCKED's depot (locked.c, point 6): the magazines of the threads
 * that only free, guarded by the pool's lock; count is read without it
 * too, to see whether there is one.  It lives on cache lines of its own
 * in the side tables. */
struct locked_depot {
	_Atomic size_t count;
	/* blocks the threads' stacks gave back to the list (stats) */
	_Atomic uint64_t returned;
	/* Of the list's allocs, the blocks it handed to threads' spares
	 * (locked.c, point 7), which are no allocation of the program's
	 * (stats) */
	_Atomic uint64_t spared;
	/* the heads of the magazines, one per pool->stack_limit blocks of
	 * the pool (a magazine holds exactly that many) */
	char *magazines[];
};
/* region.c's side tables leave it three cache lines besides the heads. */
_Static_assert(offsetof(struct locked_depot, magazines) <= POOL_CACHE_LINE,
               "the depot's counters fit in the room left for them");

/* The most blocks a thread keeps on its stack: about 64 KiB of them, 4 to
 * most, and no more than a sixteenth of the pool (one at least).  POOL_LOCKED
 * passes LOCKED_STACK_MOST, so that what a thread keeps aside stays small
 * beside what the other threads may need; POOL_PER_THREAD's stack holds
 * blocks of spans the thread owns, which the others cannot have anyway,
 * and span.c passes more. */
#define LOCKED_STACK_MOST 128
POOL_INLINE uint32_t stack_limit_of(unsigned block_shift, size_t block_count,
                                    size_t most)
{
	size_t limit = ((size_t)64 << 10) >> block_shift;
	limit = limit < 4 ? 4 : limit > most ? most : limit;
	if (limit > block_count / 16)
		limit = block_count / 16 ? block_count / 16 : 1;
	return (uint32_t)limit;
}

struct pool {
	/* Read by every fast path, written by pool_init() only.  The fast
	 * paths' dispatch and range checks in one compare each: single_limit
	 * is block_size + 1 and single_count block_count for a POOL_SINGLE
	 * pool without hooks, thread_limit block_size + 1 for a
	 * POOL_PER_THREAD pool without hooks, and each is 0 otherwise. */
	size_t single_limit;
	size_t thread_limit;
	/* pool_free() of the pool's mode and hooks: its operations' entry,
	 * here so that pool_free() is one indirect jump */
	void (*free_entry)(struct pool *pool, void *ptr);
	char *base; /* first block; aligned to min(block, page) */
	size_t single_count;
	uintptr_t secret; /* encodes free-list links (link.h) */
	uint64_t id;      /* unique per pool_init() in this process */
	/* POOL_PER_THREAD: where the calling thread's hint for this pool
	 * lies, from the thread pointer (span.h) */
	int32_t hint_offset;
	uint8_t block_shift; /* block_size == 1 << block_shift */
	uint8_t span_shift;  /* blocks per span == 1 << span_shift */
	uint8_t mode;        /* POOL_SINGLE, POOL_LOCKED, POOL_PER_THREAD */

	size_t block_count; /* blocks in the region */
	unsigned hooks;     /* HOOK_* (below); 0 for most pools */
	/* log 2 of the bytes of a chunk of the area (below, region.c) */
	uint8_t chunk_shift;
	/* POOL_PER_THREAD: set once a list of a span, or a thread's stack,
	 * was found corrupted: the blocks lost stay counted, and the span
	 * invariants are checked no more. */
	_Atomic bool spans_damaged;
	/* POOL_LOCKED: set (under the lock, for good) once threads were
	 * seen to contend for the lock: the threads' stacks serve from then
	 * on (locked.c).  contended counts the contended acquisitions, under
	 * the lock. */
	_Atomic bool stacks_on;
	uint8_t contended;

	/* POOL_SINGLE and POOL_LOCKED: the list lives in the free blocks,
	 * a bit per block in allocated[] below. */
	struct free_list list;
	/* POOL_LOCKED: guards list and allocated; not in the list's cache
	 * line, so that waiters looking at it leave the holder's list alone */
	struct spin_lock lock;
	/* What serves the pool beyond the fast paths, by its mode and hooks
	 * (pool.c) */
	const struct pool_ops *ops;

	size_t block_size; /* 1 << block_shift */
	char *end;         /* one past the last block */
	int flags;         /* as given to pool_init() */
	/* POOL_PER_THREAD: the most blocks a thread's stack holds (span.c,
	 * point 14). */
	uint32_t stack_limit;
	/* The region's accessible pages (the blocks and, before them, the
	 * unused start of the first page), cut into chunks of
	 * max(page, block) bytes for pool_trim(). */
	char *area;
	size_t area_size;
	size_t chunk_count;

	union {
		/* Fallback counters for POOL_SINGLE and POOL_LOCKED (per
		 * thread in POOL_PER_THREAD). */
		struct {
			_Atomic uint64_t fallback_allocs, fallback_frees;
		};
		/* POOL_PER_THREAD (span.c) */
		struct {
			/* the frees pool_stats() reported last: what it
			 * reports never goes back */
			_Atomic uint64_t frees_reported;
			/* blocks touched in spans that pool_trim() gave
			 * back: the peak's bound counts them still */
			_Atomic uint64_t trimmed_touched;
		};
	};

	/* POOL_PER_THREAD */
	struct span *spans; /* after allocated[], cache-line aligned */
	size_t span_count;
	union {
		/* stack of spans: top index + 1 | tag << 32 */
		_Atomic uint64_t available;
		/* POOL_LOCKED: the magazines of the threads that only free
		 * (locked.c); on a cache line of its own in the side
		 * tables */
		struct locked_depot *depot;
	};
	/* spans [fresh_spans, span_count) untouched */
	_Atomic size_t fresh_spans;
	/* guarded by caches_lock (cache.c) */
	struct thread_cache *caches;
	/* What the pool's mode does with a cache whose thread exits
	 * (cache_pool_init()). */
	void (*cache_retire)(struct pool *pool, struct thread_cache *tc);
	/* from caches whose thread exited */
	struct thread_counters retired;
	/* odd while a pool_trim() holds available spans off the stack;
	 * bumped at its start and at its end (span.c) */
	_Atomic uint32_t trim_seq;

	/* Debug options (debug.c): the Nth fallback allocation fails (0:
	 * off). */
	uint64_t fail_fallback_at;
	_Atomic uint64_t fallback_attempts;

	/* The addresses the pool answers for among the live pools
	 * (registry.c): its whole mapping with the guard pages, or a set's
	 * class's whole slice with its guard page (the largest class: the
	 * set's whole reservation), so that no pointer into the library's
	 * mappings ever reaches free(). */
	char *claim_lo, *claim_hi;

	/* The region with its guard pages (NULL for a class of a set, whose
	 * set holds the reservation), and the mapping that holds this
	 * structure and the side tables. */
	void *mapping;
	size_t mapping_size;
	void *side;
	size_t side_size;

	/* The set this pool is a class of, or NULL for a pool of its own:
	 * reports then name the set's calls (report.c). */
	const struct pool_set *set;
	/* Where what the pool does not serve goes (fallback.c); every member
	 * but usable_size is set, to the C library's by default. */
	pool_fallback_t fallback;

	/* POOL_SINGLE and POOL_LOCKED: one bit per block, 1 while handed
	 * out; at the fixed offset the public header's fast paths address it
	 * at (the alignment places it there: the pool starts at a multiple
	 * of SHIFTPOOL_MAP_OFFSET_ in its mapping). */
	_Alignas(SHIFTPOOL_MAP_OFFSET_) uint64_t allocated[];
};

_Static_assert(offsetof(struct pool, mode) < POOL_CACHE_LINE &&
                   offsetof(struct pool, block_count) == POOL_CACHE_LINE,
               "what every fast path reads is the pool's first cache line");

/* The layout the public header's fast paths read (struct shiftpool_pool_,
 * SHIFTPOOL_INLINE_ABI): a change here is a new ABI number. */
#define SAME_OFFSET(ours, field, theirs)                                       \
	_Static_assert(offsetof(struct pool, ours) ==                          \
	                   offsetof(struct shiftpool_pool_, theirs),           \
	               "struct pool: " #field " where the header says")
SAME_OFFSET(single_limit, single_limit, single_limit);
SAME_OFFSET(thread_limit, thread_limit, thread_limit);
SAME_OFFSET(free_entry, free_entry, free_entry_);
SAME_OFFSET(base, base, base);
SAME_OFFSET(single_count, single_count, single_count);
SAME_OFFSET(secret, secret, secret);
SAME_OFFSET(id, id, id);
SAME_OFFSET(hint_offset, hint_offset, hint_offset);
SAME_OFFSET(block_shift, block_shift, block_shift);
SAME_OFFSET(span_shift, span_shift, span_shift);
SAME_OFFSET(block_count, block_count, block_count);
SAME_OFFSET(list.head, head, head);
SAME_OFFSET(list.allocs, allocs, allocs);
SAME_OFFSET(list.last, last, last);
_Static_assert(offsetof(struct pool, lock) / POOL_CACHE_LINE !=
                   offsetof(struct pool, list.head) / POOL_CACHE_LINE,
               "the lock has a cache line apart from the list's");
#undef SAME_OFFSET
_Static_assert(offsetof(struct pool, allocated) == SHIFTPOOL_MAP_OFFSET_,
               "the fields of struct pool fit before allocated[]");
_Static_assert(sizeof(struct pool) == SHIFTPOOL_MAP_OFFSET_,
               "POOL_PER_THREAD's spans start where the header says");
_Static_assert(
    offsetof(struct span, local) == offsetof(struct shiftpool_span_, local) &&
        offsetof(struct span, allocs) ==
            offsetof(struct shiftpool_span_, allocs) &&
        offsetof(struct span, last) == offsetof(struct shiftpool_span_, last) &&
        offsetof(struct span, out) == offsetof(struct shiftpool_span_, out) &&
        offsetof(struct span, claim) ==
            offsetof(struct shiftpool_span_, claim) &&
        offsetof(struct span, used) == offsetof(struct shiftpool_span_, used) &&
        offsetof(struct span, capacity) ==
            offsetof(struct shiftpool_span_, capacity) &&
        offsetof(struct span, owner) ==
            offsetof(struct shiftpool_span_, owner) &&
        sizeof(struct span) == sizeof(struct shiftpool_span_) &&
        SPAN_WORDS == SHIFTPOOL_SPAN_WORDS_,
    "struct span is laid out as the header says");

/* The pool as the header's fast paths see it. */
POOL_INLINE struct shiftpool_pool_ *fast_of(struct pool *pool)
{
	return (struct shiftpool_pool_ *)(void *)pool;
}

/* pool->hooks: what the pool does besides handing out blocks (hooks.h). */
#define HOOK_VALGRIND 0x1u /* describe blocks to memcheck */
#define HOOK_FILL     0x2u /* fill free blocks, verify when handed out */
#define HOOK_TRACE    0x4u /* log every call to the trace file */

/* ------------------------------------------------------------ the region */

POOL_INLINE bool region_contains(const struct pool *pool, const void *ptr)
{
	/* One unsigned compare covers both ends. */
	return (uintptr_t)((const char *)ptr - pool->base) <
	       (uintptr_t)(pool->end - pool->base);
}

/*
 * The index of the block that starts at ptr, or a value >= block_count
 * when ptr is no block start of the region: the range check, the
 * alignment check and the shift in one subtraction and one rotation.  An
 * offset that is not a multiple of the block size rotates its low bits
 * into the high ones; one below the base wraps around to a huge value.
 */
POOL_INLINE size_t slot_from(const char *base, unsigned shift, const void *ptr)
{
	return shiftpool_slot_(base, shift, ptr);
}

POOL_INLINE size_t region_slot(const struct pool *pool, const void *ptr)
{
	return slot_from(pool->base, pool->block_shift, ptr);
}

POOL_INLINE void *region_block(const struct pool *pool, size_t index)
{
	return pool->base + (index << pool->block_shift);
}

/* ------------------------------------------------------------ meta.c */

/* The library's own objects, from its own mappings (never malloc()):
 * size bytes, zeroed and aligned to a cache line, or NULL; meta_free()
 * takes the size it was made with. */
void *meta_alloc(size_t size);
void meta_free(void *object, size_t size);
void meta_fork_prepare(void);
void meta_fork_release(void);

/* ------------------------------------------------------------ region.c */

/* Maps a pool's structure with its side tables, for block_count blocks of
 * 2^shift bytes and pool_init()'s flags: zero but for where the tables are
 * and the chunks' shape.  NULL when it cannot. */
struct pool *region_pool_map(int flags, size_t block_count, unsigned shift,
                             unsigned span_shift);
/* Reserves the region, between guard pages, populated or locked as the
 * flags ask; 0 or errno. */
int region_reserve(struct pool *pool);
/* The page size (4096 where the system does not say). */
POOL_INLINE size_t region_page_size(void)
{
	long page = sysconf(_SC_PAGESIZE);
	return page > 0 ? (size_t)page : 4096;
}
/* The region of a class of a pool set: the blocks end one page before the
 * end of [slice, slice + size), reserved by the set, whose last page stays
 * the guard; 0 or errno. */
int region_place(struct pool *pool, char *slice, size_t size);
/* The blocks [*first, *end) that lie in a chunk. */
void region_chunk_blocks(const struct pool *pool, size_t chunk, size_t *first,
                         size_t *end);
char *region_chunk_address(const struct pool *pool, size_t chunk);
/* Gives back to the system the whole pages within [lo, hi); returns the
 * bytes (0 under POOL_LOCK_MEMORY, whose pages stay). */
size_t region_give_back(struct pool *pool, char *lo, char *hi);
/* Gives back the pages [lo, hi) (page-aligned): false when the system
 * refused (locked pages), and then they are as they were. */
bool region_drop_pages(char *lo, char *hi);
/* Releases the region and the pool's own mapping: the pool is gone. */
void region_release(struct pool *pool);

/* ------------------------------------------------------------ trace.c */

/* Opens the trace file named by SHIFTPOOL_TRACE once per process; returns
 * whether tracing is on. */
bool trace_open(void);
/* Writes one record: op, the common keys of pool (pool may be NULL for
 * records of no pool), then a printf-style rest.  errno is kept. */
void trace_record(const struct pool *pool, enum trace_op op, const char *format,
                  ...) __attribute__((format(printf, 3, 4)));
/* The same for a record of pool (or set) number id. */
void trace_record_id(uint64_t id, enum trace_op op, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
/* A record's seq= (trace-format.h), for a call that must take it at a
 * point of its own: a free before the block goes back to the pool. */
uint64_t trace_seq(void);
/* trace_record() with that seq=; pool is not NULL. */
void trace_record_seq(const struct pool *pool, uint64_t seq, enum trace_op op,
                      const char *format, ...)
    __attribute__((format(printf, 4, 5)));
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
/* Names the public call a report deep inside it belongs to (for
 * report_corrupted()) until report_call_end() with what begin returned. */
const char *report_call_begin(const char *function);
void report_call_end(const char *outer);
/* fork(): hold the handler lock across it; then both sides release it. */
void report_fork_prepare(void);
void report_fork_release(void);

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
 * (hooks.h): a block goes out (fresh: never used before), or false when
 * the fill pattern shows it was written after it was freed: it is then
 * reported under function, the public call, and quarantined; or a block
 * comes back. */
POOL_COLD bool hooks_block_out_slow(struct pool *pool, void *block, bool fresh,
                                    unsigned hooks, const char *function);
POOL_COLD void hooks_block_in_slow(struct pool *pool, void *block,
                                   unsigned hooks);
#ifdef SHIFTPOOL_ASAN
/* Unpoisons a page-aligned mapping about to be unmapped (hooks.h), without
 * making its whole shadow resident. */
POOL_COLD void debug_asan_forget(void *mapping, size_t size);
#endif

/* ------------------------------------------------------------ registry.c */

/* Registers a live pool: its region is known to registry_find(), and
 * fork() leaves it usable in the child.  0 or errno. */
int registry_add(struct pool *pool);
void registry_remove(struct pool *pool);
/* A registered pool answers for [lo, hi) from now on (a set's largest
 * class, for the whole reservation); 0 or errno. */
int registry_widen(struct pool *pool, char *lo, char *hi);
/* Whether ptr lies in the region of a live pool.  No lock. */
bool registry_find(const void *ptr);

/* ------------------------------------------------------------ set.c */

/*
 * A pool set (set.c): its classes are pools whose regions are placed in
 * equal slices of one reservation.  Here because pool.c's dispatch serves
 * its allocations.
 */
#define SET_MAX_CLASSES 64

struct pool_set {
	char *base; /* the first slice */
	unsigned slice_shift;
	unsigned min_shift;
	unsigned count; /* classes */
	unsigned last;  /* count - 1 */
	size_t min_block;
	int flags;
	uint64_t id;
	void *mapping; /* the reservation */
	size_t mapping_size;
	struct pool *classes[SET_MAX_CLASSES];
	/* The class of a size, by the index of the highest bit of
	 * (size - 1) | 1: the log of the rounded size minus one */
	struct pool *by_bit[64];
};

/* The pool that serves size: the smallest class that fits it, or the
 * largest (whose fallback serves what fits no class).  Size 0 wraps to
 * bit 63, which fits nothing but the first class serves it: there a size
 * above 2^63 fails in the fallback as it would in the largest. */
POOL_INLINE struct pool *set_class_for_size(const struct pool_set *set,
                                            size_t size)
{
	return set
	    ->by_bit[63 - (size_t)__builtin_clzll((uint64_t)(size - 1) | 1)];
}

/* ------------------------------------------------------------ stats.c */

/* Writes a pool's counters: one JSON object (no newline), or "name: value"
 * fields separated by separator and ended by a newline.  fprintf()'s
 * result. */
int stats_write(FILE *stream, const pool_stats_t *st, int format,
                const char *separator);
/* Ends a print: 0, or -1 with errno EIO when failed or the stream failed
 * (written out now, so that a full device is the call's error). */
int stats_flush(FILE *stream, bool failed);

/* ------------------------------------------------------------ create.c */

/* A pool for a class of set (with the set's flags), its region placed
 * in slice (see region_place()); its init record names the set.  NULL
 * with errno. */
struct pool *class_create(const struct pool_set *set, size_t block_size,
                          const pool_fallback_t *fallback, char *slice,
                          size_t slice_size);
/* Whether pool_init_with()'s arguments are valid. */
bool arguments_valid(size_t block_size, size_t block_count, int flags,
                     const pool_fallback_t *fallback);
/* A new pool or set number, for the trace. */
uint64_t serial_next(void);

/* ------------------------------------------------------------ pool.c */

/* Chooses the operations that serve a new pool (struct pool_ops, pool.c),
 * by its mode and hooks. */
void dispatch_choose(struct pool *pool);

/* pool_realloc() of ptr of pool, into the pool to that serves size (pool
 * itself, or the class of pool's set that fits size). */
void *realloc_call(struct pool *pool, struct pool *to, void *ptr, size_t size);
/* strdup() of s (len bytes with its terminator) into pool. */
char *strdup_into(struct pool *pool, const char *s, size_t len);
/* pool_usable_size() of a pool or of a class of a set. */
size_t usable_size_in(struct pool *pool, const void *ptr);
/* Whether the block of that index is handed out now. */
bool block_is_live(struct pool *pool, size_t index);

/* ------------------------------------------------------------ fallback.c */

/* Installs the pool's fallback (NULL: the C library's); 0 or EINVAL. */
int fallback_set(struct pool *pool, const pool_fallback_t *fallback);
/* Serves a request the pool cannot (too big, or the pool is exhausted)
 * from the fallback; NULL with errno ENOMEM under POOL_NO_FALLBACK. */
POOL_COLD void *fallback_alloc(struct pool *pool, size_t size, bool zero);
/* The fallback's realloc() of one of its pointers; NULL with errno ENOMEM
 * (ptr untouched) when it fails or under POOL_NO_FALLBACK. */
POOL_COLD void *fallback_resize(struct pool *pool, void *ptr, size_t size);
/* The fallback's usable size of one of its pointers, 0 when unknown. */
size_t fallback_usable_size(const struct pool *pool, const void *ptr);
/* Gives a pointer from outside the region back to the fallback. */
POOL_COLD void fallback_free(struct pool *pool, void *ptr);

/* The modes (list.h, span.h) and the hooks (hooks.h) declare their
 * own. */

#endif /* SHIFTPOOL_INTERNAL_H */
