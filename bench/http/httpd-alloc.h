/*
 * The allocators bench/httpd can take its buffers from, and the one
 * call site every buffer goes through.
 *
 * Linking tcmalloc, jemalloc or mimalloc replaces malloc in the whole
 * process, so one program cannot honestly offer them next to glibc: each
 * is built into a program of its own (bench/httpd-tcmalloc, ...), from
 * the same sources, with exactly one HTTPD_PEER_* defined.  bench/httpd
 * (HTTPD_PEER_DEFAULT) serves shiftpool in its three modes, a pool set
 * and glibc, and
 * hands any other --allocator to the sibling program built for it.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef BENCH_HTTPD_ALLOC_H
#define BENCH_HTTPD_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#if defined(HTTPD_PEER_DEFAULT) + defined(HTTPD_PEER_TCMALLOC) +               \
        defined(HTTPD_PEER_JEMALLOC) + defined(HTTPD_PEER_MIMALLOC) !=         \
    1
#error "define exactly one HTTPD_PEER_* for an httpd program"
#endif

#if defined(HTTPD_PEER_DEFAULT)
#include "shiftpool.h"
#elif defined(HTTPD_PEER_TCMALLOC)
#include <gperftools/tcmalloc.h>
#elif defined(HTTPD_PEER_MIMALLOC)
#include <mimalloc.h>
#endif

enum allocator {
	ALLOCATOR_POOL_SINGLE,
	ALLOCATOR_POOL_LOCKED,
	ALLOCATOR_POOL_PER_THREAD,
	ALLOCATOR_POOL_SET, /* a POOL_PER_THREAD pool set, every size */
	ALLOCATOR_GLIBC,
	ALLOCATOR_TCMALLOC,
	ALLOCATOR_JEMALLOC,
	ALLOCATOR_MIMALLOC,
	ALLOCATOR_COUNT
};

/* The --allocator names, indexed by enum allocator. */
extern const char *const httpd_allocator_names[ALLOCATOR_COUNT];

/* Returns the allocator called name, or ALLOCATOR_COUNT. */
enum allocator allocator_by_name(const char *name);

/* Returns true when this program serves the allocator itself. */
bool allocator_served_here(enum allocator allocator);

/* Returns the file name of the program that serves the allocator, e.g.
 * "httpd-tcmalloc", to be looked up next to this one. */
const char *allocator_program(enum allocator allocator);

/* Returns the shared object that holds the allocator's entry point
 * (dladdr), so that the report says who served the buffers. */
const char *allocator_library(enum allocator allocator);

/*
 * What one thread allocates from, with that thread's own counters: no
 * counter is shared between threads, so counting costs every allocator
 * the same and scales like the allocator itself.  pool is NULL for every
 * allocator but shiftpool's pools, set for every one but its pool set.
 */
struct heap {
#if defined(HTTPD_PEER_DEFAULT)
	pool_t *pool;
	pool_set_t *set;
#endif
	uint64_t allocs;
	uint64_t frees;
};

/* Returns size bytes, uninitialised, or NULL. */
static inline void *heap_alloc(struct heap *heap, size_t size)
{
	void *p;
#if defined(HTTPD_PEER_DEFAULT)
	p = heap->pool != NULL  ? pool_malloc(heap->pool, size)
	    : heap->set != NULL ? pool_set_malloc(heap->set, size)
	                        : malloc(size);
#elif defined(HTTPD_PEER_TCMALLOC)
	p = tc_malloc(size);
#elif defined(HTTPD_PEER_MIMALLOC)
	p = mi_malloc(size);
#else
	/* Debian's jemalloc exports malloc itself, which then wins symbol
	 * lookup over the C library's in this program. */
	p = malloc(size);
#endif
	if (p != NULL)
		heap->allocs++;
	return p;
}

/* Returns p, from heap_alloc() of any thread's heap over the same
 * allocator (the same pool), to the allocator. */
static inline void heap_free(struct heap *heap, void *p)
{
	if (p == NULL)
		return;
	heap->frees++;
#if defined(HTTPD_PEER_DEFAULT)
	if (heap->pool != NULL)
		pool_free(heap->pool, p);
	else if (heap->set != NULL)
		pool_set_free(heap->set, p);
	else
		free(p);
#elif defined(HTTPD_PEER_TCMALLOC)
	tc_free(p);
#elif defined(HTTPD_PEER_MIMALLOC)
	mi_free(p);
#else
	free(p);
#endif
}

#endif /* BENCH_HTTPD_ALLOC_H */
