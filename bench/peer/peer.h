/*
 * The allocator a worker program is built for, chosen by exactly one of
 * BENCH_PEER_GLIBC, _TCMALLOC, _JEMALLOC, _MIMALLOC, _GSLICE, _DPDK,
 * _BOOST, _POOL, _FLOOR.  Each
 * worker links that allocator only, so that no allocator can stand in for
 * another (linking tcmalloc replaces malloc in the whole process).
 *
 * The workloads call peer_calloc(), peer_malloc() and peer_free(), which
 * are direct calls to the allocator's own entry points.  The floor peer
 * allocates nothing: it zeroes or hands back the slot of preallocated
 * memory that the workload passes along with every request, so the floor
 * runs the same loop over the same bytes.
 *
 * The fixed-size pools (GSlice, DPDK's rte_mempool, boost::pool<>) serve
 * every request with one block of the case's block size, as a user of
 * theirs would: a pool per object size.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef BENCH_PEER_H
#define BENCH_PEER_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../bench.h"

#if defined(BENCH_PEER_GLIBC) + defined(BENCH_PEER_TCMALLOC) +                 \
        defined(BENCH_PEER_JEMALLOC) + defined(BENCH_PEER_MIMALLOC) +          \
        defined(BENCH_PEER_GSLICE) + defined(BENCH_PEER_DPDK) +                \
        defined(BENCH_PEER_BOOST) + defined(BENCH_PEER_POOL) +                 \
        defined(BENCH_PEER_FLOOR) !=                                           \
    1
#error "define exactly one BENCH_PEER_* for a worker"
#endif

#if defined(BENCH_PEER_TCMALLOC)
#include <gperftools/tcmalloc.h>
#elif defined(BENCH_PEER_MIMALLOC)
#include <mimalloc.h>
#elif defined(BENCH_PEER_GSLICE)
#include <glib.h>
#elif defined(BENCH_PEER_DPDK)
#include <rte_mempool.h>
#elif defined(BENCH_PEER_BOOST)
#include "peer-boost.h"
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
	pool_set_t *set; /* the pool-set rows, instead of pool */
#elif defined(BENCH_PEER_GSLICE)
	size_t block_size; /* g_slice_free1() takes it back */
#elif defined(BENCH_PEER_DPDK)
	struct rte_mempool *mempool;
#elif defined(BENCH_PEER_BOOST)
	struct boost_pool *pool;
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
#elif defined(BENCH_PEER_GSLICE)
	(void)size;
	return g_slice_alloc0(peer->block_size);
#elif defined(BENCH_PEER_DPDK)
	void *p;
	if (rte_mempool_get(peer->mempool, &p) != 0)
		return NULL;
	return memset(p, 0, size);
#elif defined(BENCH_PEER_BOOST)
	void *p = boost_pool_malloc(peer->pool);
	return p != NULL ? memset(p, 0, size) : NULL;
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
#elif defined(BENCH_PEER_GSLICE)
	(void)size;
	return g_slice_alloc(peer->block_size);
#elif defined(BENCH_PEER_DPDK)
	void *p;
	(void)size;
	return rte_mempool_get(peer->mempool, &p) == 0 ? p : NULL;
#elif defined(BENCH_PEER_BOOST)
	(void)size;
	return boost_pool_malloc(peer->pool);
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
#elif defined(BENCH_PEER_GSLICE)
	g_slice_free1(peer->block_size, ptr);
#elif defined(BENCH_PEER_DPDK)
	rte_mempool_put(peer->mempool, ptr);
#elif defined(BENCH_PEER_BOOST)
	boost_pool_free(peer->pool, ptr);
#elif defined(BENCH_PEER_POOL)
	pool_free(peer->pool, ptr);
#else
	(void)ptr;
#endif
}

/*
 * mixed: any size, through the same entry points as peer_malloc() and
 * peer_free() but for the pool worker, whose rows there are pool sets.
 */
static inline void *peer_sized_malloc(struct peer *peer, void *slot,
                                      size_t size)
{
#if defined(BENCH_PEER_POOL)
	(void)slot;
	return pool_set_malloc(peer->set, size);
#else
	return peer_malloc(peer, slot, size);
#endif
}

static inline void peer_sized_free(struct peer *peer, void *ptr)
{
#if defined(BENCH_PEER_POOL)
	pool_set_free(peer->set, ptr);
#else
	peer_free(peer, ptr);
#endif
}

/*
 * bulk: count blocks of size bytes into out, all or none (1 or 0); the
 * floor's are count slots of size bytes from slots.  Allocators without a
 * bulk call make count single calls (case_has_bulk() says which).
 */
static inline int peer_malloc_bulk(struct peer *peer, char *slots, size_t size,
                                   size_t count, void **out)
{
#if defined(BENCH_PEER_DPDK)
	(void)slots;
	(void)size;
	return rte_mempool_get_bulk(peer->mempool, out, (unsigned)count) == 0;
#elif defined(BENCH_PEER_POOL)
	(void)slots;
	return pool_malloc_bulk(peer->pool, size, count, out) == count;
#else
	size_t i;

	for (i = 0; i < count; i++) {
		out[i] = peer_malloc(
		    peer, PEER_IS_FLOOR ? slots + i * size : NULL, size);
		if (out[i] == NULL) {
			while (i-- > 0)
				peer_free(peer, out[i]);
			return 0;
		}
	}
	return 1;
#endif
}

static inline void peer_free_bulk(struct peer *peer, size_t count,
                                  void *const *blocks)
{
#if defined(BENCH_PEER_DPDK)
	rte_mempool_put_bulk(peer->mempool, blocks, (unsigned)count);
#elif defined(BENCH_PEER_POOL)
	pool_free_bulk(peer->pool, count, blocks);
#else
	size_t i;

	for (i = 0; i < count; i++)
		peer_free(peer, blocks[i]);
#endif
}

/* ------------------------------------------------------------ set-up (peer.c)
 */

/* Whether this worker serves the allocator. */
int peer_serves(enum allocator allocator);

/*
 * Process-wide set-up before any case's, outside every measurement (DPDK:
 * its EAL, with no huge pages and no devices), and its end.  Returns 0,
 * or -1 after printing the reason.
 */
int peer_start(const char *program);
void peer_stop(void);

/* A thread other than the main one begins, or ends, using the peer (DPDK:
 * registered as an lcore, so that it has a mempool cache of its own). */
void peer_thread_enter(void);
void peer_thread_leave(void);

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
