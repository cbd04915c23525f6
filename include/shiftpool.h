/*
 * shiftpool: a fixed-size power-of-two memory pool.
 *
 * A pool is one contiguous region of block_count blocks of 2^k bytes.  Free
 * blocks hold the free list; pool_free() knows a block by an address-range
 * check and finds its index by one shift.  Requests that do not fit a block,
 * or that arrive while the pool is exhausted, are served by the system
 * allocator, and pool_free() returns such pointers to it transparently.
 *
 * Errors are reported the way the C library does: NULL or -1 with errno set.
 * Misuse (freeing a pointer that is not a block start, freeing a block twice)
 * is a caller's bug; it is reported through the error handler below, which by
 * default prints one line to stderr and aborts.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SHIFTPOOL_H
#define SHIFTPOOL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SHIFTPOOL_VERSION_MAJOR  0
#define SHIFTPOOL_VERSION_MINOR  1
#define SHIFTPOOL_VERSION_PATCH  0
#define SHIFTPOOL_VERSION_STRING "0.1.0"

#if defined(__GNUC__) && !defined(SHIFTPOOL_NO_ATTRIBUTES)
#define POOL_ATTR_MALLOC       __attribute__((malloc, warn_unused_result))
#define POOL_ATTR_NONNULL(...) __attribute__((nonnull(__VA_ARGS__)))
#else
#define POOL_ATTR_MALLOC
#define POOL_ATTR_NONNULL(...)
#endif

/* Modes: pass exactly one in pool_init()'s flags. */
#define POOL_SINGLE     0x0 /* one thread at a time, no synchronisation */
#define POOL_LOCKED     0x1 /* any thread, one mutex around the free list */
#define POOL_PER_THREAD 0x2 /* any thread, lock-free per-thread spans */
#define POOL_MODE_MASK  0xf /* the bits that hold the mode */

/* Options, OR-ed with the mode. */
#define POOL_NO_FALLBACK 0x100 /* exhaustion and oversize give NULL, ENOMEM */
#define POOL_DEBUG_FILL                                                        \
	0x200 /* fill free blocks with a pattern and verify                    \
	         it when they go out: catches writes after                     \
	         free (also SHIFTPOOL_DEBUG=fill) */

/* The largest block size pool_init() accepts (after rounding): 1 GiB. */
#define POOL_MAX_BLOCK_SIZE ((size_t)1 << 30)
/* The smallest block size; smaller requests are rounded up to it. */
#define POOL_MIN_BLOCK_SIZE ((size_t)16)

/* An opaque pool. */
typedef struct pool pool_t;

/* A snapshot of a pool's counters, filled by pool_stats(). */
typedef struct pool_stats {
	size_t block_size;  /* rounded block size in bytes */
	size_t block_count; /* blocks in the region */
	size_t in_use;      /* pool blocks handed out and not yet freed */
	size_t peak_in_use; /* the largest in_use seen; in POOL_PER_THREAD
	                       an upper bound: blocks ever handed out */
	uint64_t allocs;    /* allocations served by the pool */
	uint64_t frees;     /* pool blocks returned */
	uint64_t
	    fallback_allocs; /* allocations served by the system allocator */
	uint64_t
	    fallback_frees; /* system allocations returned via pool_free() */
	int flags;          /* the flags the pool was created with */
} pool_stats_t;

/* What a misuse report is about. */
enum pool_error {
	POOL_ERROR_INVALID_POINTER =
	    1,                      /* inside the region, not a block start */
	POOL_ERROR_DOUBLE_FREE = 2, /* the block is already free */
	POOL_ERROR_CORRUPTED = 3,   /* the pool's own bookkeeping is damaged */
	POOL_ERROR_WRITE_AFTER_FREE =
	    4 /* a free block was written (debug fill) */
};

/*
 * A misuse handler: called with the pool, the name of the public function
 * that found the misuse, the offending pointer, what is wrong, and the
 * argument given to pool_set_error_handler().  If it returns, the call that
 * found the misuse returns without acting on the pointer.
 */
typedef void pool_error_handler_fn(const pool_t *pool, const char *function,
                                   const void *ptr, enum pool_error error,
                                   void *arg);

/*
 * Installs the process-wide misuse handler and returns the previous one.
 * NULL restores the default: one line on stderr naming the function and the
 * pointer, then abort().
 */
pool_error_handler_fn *pool_set_error_handler(pool_error_handler_fn *handler,
                                              void *arg);

/* Returns a short English description of an error code (never NULL). */
const char *pool_error_string(enum pool_error error);

/*
 * Creates a pool of block_count blocks of block_size bytes (rounded up to a
 * power of two, at least POOL_MIN_BLOCK_SIZE).  flags is one mode OR-ed with
 * options.  Returns NULL with errno EINVAL (zero size or count, unknown flags,
 * block size above POOL_MAX_BLOCK_SIZE) or ENOMEM (size overflow, no memory).
 */
POOL_ATTR_MALLOC pool_t *pool_init(size_t block_size, size_t block_count,
                                   int flags);

/* Releases the pool and its region; NULL does nothing.  Fallback allocations
 * still live stay valid and must be freed with free(). */
void pool_destroy(pool_t *pool);

/* Returns size bytes, uninitialised, or NULL with errno ENOMEM. */
POOL_ATTR_MALLOC void *pool_malloc(pool_t *pool, size_t size)
    POOL_ATTR_NONNULL(1);

/* Returns nmemb * size zeroed bytes, or NULL with errno ENOMEM (also when the
 * product overflows). */
POOL_ATTR_MALLOC void *pool_calloc(pool_t *pool, size_t nmemb, size_t size)
    POOL_ATTR_NONNULL(1);

/* Returns a block or a fallback allocation to where it came from; NULL does
 * nothing.  Misuse is reported through the error handler. */
void pool_free(pool_t *pool, void *ptr) POOL_ATTR_NONNULL(1);

/* realloc() over the pool: keeps a block's address while size fits it, else
 * moves the contents.  Size 0 frees ptr and returns NULL.  On failure returns
 * NULL with errno ENOMEM and leaves ptr untouched. */
void *pool_realloc(pool_t *pool, void *ptr, size_t size) POOL_ATTR_NONNULL(1);

/* strdup() into the pool (or the fallback when s does not fit a block).
 * Returns NULL with errno ENOMEM, or EINVAL for a NULL s. */
POOL_ATTR_MALLOC char *pool_strdup(pool_t *pool, const char *s)
    POOL_ATTR_NONNULL(1);

/* Fills *out with the pool's counters.  Returns 0, or -1 with errno EINVAL
 * when pool or out is NULL.  In POOL_PER_THREAD mode the counters are exact
 * when no thread is inside a pool call. */
int pool_stats(const pool_t *pool, pool_stats_t *out);

/* Formats for pool_stats_print(). */
#define POOL_STATS_TEXT 0 /* one "name: value" line per counter */
#define POOL_STATS_JSON 1 /* one JSON object on one line */

/* Writes the pool's counters to stream.  Returns 0, or -1 with errno
 * EINVAL (NULL argument, unknown format) or EIO (the stream failed). */
int pool_stats_print(const pool_t *pool, FILE *stream, int format);

/* Returns the pool's rounded block size, or 0 for a NULL pool. */
size_t pool_block_size(const pool_t *pool);

/* Returns 1 when ptr is the start of a block of this pool's region, else 0. */
int pool_owns(const pool_t *pool, const void *ptr);

/* Returns the library's version string, e.g. "0.1.0". */
const char *shiftpool_version(void);

#ifdef __cplusplus
}
#endif

#endif /* SHIFTPOOL_H */
