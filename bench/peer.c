/*
 * Set-up, counters and self-description of the allocator a worker is built
 * for (see peer.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include "peer.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#if defined(BENCH_PEER_GLIBC) || defined(BENCH_PEER_FLOOR)
#include <gnu/libc-version.h>
#endif
#if defined(BENCH_PEER_JEMALLOC)
int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp,
            size_t newlen);
#endif

/* Function pointers, as dladdr() wants them, of the entry points called. */
#define ENTRY(f) ((void (*)(void))(f))

int peer_serves(enum allocator allocator)
{
#if defined(BENCH_PEER_GLIBC)
	return allocator == ALLOCATOR_GLIBC ||
	       allocator == ALLOCATOR_GLIBC_NOTRIM;
#elif defined(BENCH_PEER_TCMALLOC)
	return allocator == ALLOCATOR_TCMALLOC;
#elif defined(BENCH_PEER_JEMALLOC)
	return allocator == ALLOCATOR_JEMALLOC;
#elif defined(BENCH_PEER_MIMALLOC)
	return allocator == ALLOCATOR_MIMALLOC;
#elif defined(BENCH_PEER_POOL)
	return allocator == ALLOCATOR_POOL_SINGLE ||
	       allocator == ALLOCATOR_POOL_LOCKED ||
	       allocator == ALLOCATOR_POOL_PER_THREAD;
#else
	return allocator == ALLOCATOR_FLOOR || allocator == ALLOCATOR_STACK;
#endif
}

int peer_open(struct peer *peer, const struct bench_case *c)
{
	memset(peer, 0, sizeof(*peer));
#if defined(BENCH_PEER_POOL)
	int mode = c->allocator == ALLOCATOR_POOL_SINGLE   ? POOL_SINGLE
	           : c->allocator == ALLOCATOR_POOL_LOCKED ? POOL_LOCKED
	                                                   : POOL_PER_THREAD;
	peer->pool = pool_init(c->block_size, c->blocks, mode);
	if (peer->pool == NULL) {
		fprintf(stderr, "pool_init(%zu, %zu, %s): %s\n", c->block_size,
		        c->blocks, allocator_names[c->allocator],
		        strerror(errno));
		return -1;
	}
#else
	(void)c;
#endif
	return 0;
}

void peer_close(struct peer *peer)
{
#if defined(BENCH_PEER_POOL)
	pool_destroy(peer->pool);
	peer->pool = NULL;
#else
	(void)peer;
#endif
}

void peer_count(const struct peer *peer, uint64_t *pool_allocs,
                uint64_t *fallback_allocs)
{
#if defined(BENCH_PEER_POOL)
	pool_stats_t stats;

	if (peer->pool != NULL && pool_stats(peer->pool, &stats) == 0) {
		*pool_allocs += stats.allocs;
		*fallback_allocs += stats.fallback_allocs;
	}
#else
	(void)peer;
	(void)pool_allocs;
	(void)fallback_allocs;
#endif
}

void peer_entries(const struct bench_case *c, struct peer_entry *e)
{
	/* parallel, sort and pair ask for uninitialised memory, the others
	 * for zeroed memory. */
	int zeroed = c->workload != WORKLOAD_PARALLEL &&
	             c->workload != WORKLOAD_SORT &&
	             c->workload != WORKLOAD_PAIR;

	memset(e, 0, sizeof(*e));
#if defined(BENCH_PEER_GLIBC) || defined(BENCH_PEER_JEMALLOC)
	e->symbol = zeroed ? "calloc" : "malloc";
	e->function = zeroed ? ENTRY(calloc) : ENTRY(malloc);
	e->free_symbol = "free";
	e->free_function = ENTRY(free);
#elif defined(BENCH_PEER_TCMALLOC)
	e->symbol = zeroed ? "tc_calloc" : "tc_malloc";
	e->function = zeroed ? ENTRY(tc_calloc) : ENTRY(tc_malloc);
	e->free_symbol = "tc_free";
	e->free_function = ENTRY(tc_free);
#elif defined(BENCH_PEER_MIMALLOC)
	e->symbol = zeroed ? "mi_calloc" : "mi_malloc";
	e->function = zeroed ? ENTRY(mi_calloc) : ENTRY(mi_malloc);
	e->free_symbol = "mi_free";
	e->free_function = ENTRY(mi_free);
#elif defined(BENCH_PEER_POOL)
	e->symbol = zeroed ? "pool_calloc" : "pool_malloc";
	e->function = zeroed ? ENTRY(pool_calloc) : ENTRY(pool_malloc);
	e->free_symbol = "pool_free";
	e->free_function = ENTRY(pool_free);
	e->fallback_symbol = zeroed ? "calloc" : "malloc";
	e->fallback_function = zeroed ? ENTRY(calloc) : ENTRY(malloc);
#else
	(void)zeroed;
#endif
}

void peer_version(char *buf, size_t size)
{
#if defined(BENCH_PEER_GLIBC) || defined(BENCH_PEER_FLOOR)
	snprintf(buf, size, "glibc %s", gnu_get_libc_version());
#elif defined(BENCH_PEER_TCMALLOC)
	int major, minor;
	const char *patch;
	snprintf(buf, size, "%s", tc_version(&major, &minor, &patch));
#elif defined(BENCH_PEER_JEMALLOC)
	const char *version = NULL;
	size_t length = sizeof(version);
	if (mallctl("version", &version, &length, NULL, 0) != 0 ||
	    version == NULL)
		version = "?";
	/* "5.3.0-0-g54eaed1d...": the release is enough. */
	snprintf(buf, size, "jemalloc %.*s", (int)strcspn(version, "-"),
	         version);
#elif defined(BENCH_PEER_MIMALLOC)
	int version = mi_version();
	snprintf(buf, size, "mimalloc %d.%d.%d", version / 100,
	         version / 10 % 10, version % 10);
#elif defined(BENCH_PEER_POOL)
	snprintf(buf, size, "shiftpool %s", shiftpool_version());
#endif
}
