/*
 * The allocator a worker program is built for, chosen by exactly one of
 * BENCH_PEER_GLIBC, _TCMALLOC, _JEMALLOC, _MIMALLOC, _POOL, _FLOOR.  Each
 * worker links that allocator only, so that no allocator can stand in for
 * another (linking tcmalloc replaces malloc in the whole process).
 *
 * The workloads call peer_calloc(), peer_malloc() and peer_free(), which
 * are direct calls to the allocator's own entry points.  The floor peer
 * allocates nothing: it zeroes or hands back the slot of preallocated
 * memory that the workload passes along with every request, so the floor
 * runs the same loop over the same bytes.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef BENCH_PEER_H
#define BENCH_PEER_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#if defined(BENCH_PEER_GLIBC) + defined(BENCH_PEER_TCMALLOC) +            \
        defined(BENCH_PEER_JEMALLOC) + defined(BENCH_PEER_MIMALLOC) +    \
        defined(BENCH_PEER_POOL) + defined(BENCH_PEER_FLOOR) !=          \
    1
#error "define exactly one BENCH_PEER_* for a worker"
#endif

#if defined(BENCH_PEER_TCMALLOC)
#include <gperftools/tcmalloc.h>
#elif defined(BENCH_PEER_MIMALLOC)
#include <mimalloc.h>
#elif defined(BENCH_PEER_POOL)
#include "shiftpool.h"
#endif

/* 1 in the floor worker: the workloads then lay out the preallocated slots
 * they pass to the peer; elsewhere the slot expressions compile away. */
#if defined(BENCH_PEER_FLOOR)
#define PEER_IS_FLOOR 1
#else
#define PEER_IS_FLOOR 0
#endif

/*
 * What a thread allocates from.  Only the pool has state: the pool the
 * thread uses (shared by every thread, or one private pool per thread for
 * POOL_SINGLE when a workload runs several threads).
 */
struct peer {
#if defined(BENCH_PEER_POOL)
	pool_t *pool;
#else
	char unused;
#endif
};

/* ------------------------------------------------------------ entry points */

static inline void *peer_calloc(struct peer *peer, void *slot, size_t size)
{
	(void)peer;
	(void)slot;
#if defined(BENCH_PEER_GLIBC) || defined(BENCH_PEER_JEMALLOC)
	/* jemalloc: Debian's library exports unprefixed entry points, which
	 * win symbol lookup over the C library's in that worker. */
	return calloc(1, size);
#elif defined(BENCH_PEER_TCMALLOC)
	return tc_calloc(1, size);
#elif defined(BENCH_PEER_MIMALLOC)
	return mi_calloc(1, size);
#elif defined(BENCH_PEER_POOL)
	return pool_calloc(peer->pool, 1, size);
#else
	return memset(slot, 0, size);
#endif
}

static inline void *peer_malloc(struct peer *peer, void *slot, size_t size)
{
	(void)peer;
	(void)slot;
#if defined(BENCH_PEER_GLIBC) || defined(BENCH_PEER_JEMALLOC)
	return malloc(size);
#elif defined(BENCH_PEER_TCMALLOC)
	return tc_malloc(size);
#elif defined(BENCH_PEER_MIMALLOC)
	return mi_malloc(size);
#elif defined(BENCH_PEER_POOL)
	return pool_malloc(peer->pool, size);
#else
	(void)size;
	return slot;
#endif
}

static inline void peer_free(struct peer *peer, void *ptr)
{
	(void)peer;
#if defined(BENCH_PEER_GLIBC) || defined(BENCH_PEER_JEMALLOC)
	free(ptr);
#elif defined(BENCH_PEER_TCMALLOC)
	tc_free(ptr);
#elif defined(BENCH_PEER_MIMALLOC)
	mi_free(ptr);
#elif defined(BENCH_PEER_POOL)
	pool_free(peer->pool, ptr);
#else
	(void)ptr;
#endif
}

/* ------------------------------------------------------------ set-up (peer.c) */

/* Whether this worker serves the allocator. */
int peer_serves(enum allocator allocator);

/*
 * Prepares a peer for a case; for the pool, pool_init() with the case's
 * block size, count and the allocator's mode.  Called outside the timed
 * region.  Returns 0, or -1 after printing the reason.
 */
int peer_open(struct peer *peer, const struct bench_case *c);
void peer_close(struct peer *peer);

/* Adds the peer's counters: allocations served by the pool and by its
 * fallback (0 for other peers). */
void peer_count(const struct peer *peer, uint64_t *pool_allocs,
                uint64_t *fallback_allocs);

/*
 * Names the entry points this worker calls for the case: the allocation
 * function (symbol, address) and its free, and for the pool the C
 * library function its fallback calls.  A NULL symbol means no allocator.
 */
struct peer_entry {
	const char *symbol;
	void (*function)(void);
	const char *free_symbol;
	void (*free_function)(void);
	const char *fallback_symbol;
	void (*fallback_function)(void);
};
void peer_entries(const struct bench_case *c, struct peer_entry *out);

/* The allocator's version, or "-". */
void peer_version(char *buf, size_t size);

#endif /* BENCH_PEER_H */
