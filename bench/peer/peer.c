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
#if defined(BENCH_PEER_DPDK)
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_version.h>
#include <unistd.h>
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
#elif defined(BENCH_PEER_GSLICE)
	return allocator == ALLOCATOR_GSLICE;
#elif defined(BENCH_PEER_DPDK)
	return allocator == ALLOCATOR_DPDK;
#elif defined(BENCH_PEER_BOOST)
	return allocator == ALLOCATOR_BOOST;
#elif defined(BENCH_PEER_POOL) && defined(SHIFTPOOL_INLINE)
	/* bench-pool-inline: the same workloads built with the header's
	 * inline fast paths (built only where a program gets them). */
	return allocator_is_inline(allocator);
#elif defined(BENCH_PEER_POOL)
	return (allocator_is_pool_mode(allocator) &&
	        !allocator_is_inline(allocator)) ||
	       allocator_is_pool_set(allocator);
#else
	return allocator == ALLOCATOR_FLOOR || allocator == ALLOCATOR_STACK;
#endif
}

int peer_start(const char *program)
{
#if defined(BENCH_PEER_DPDK)
	/* No huge pages, no devices, one lcore, no files shared with other
	 * DPDK processes (--no-shconf; --in-memory does not go with
	 * --no-huge): what runs in a container as the worker's user.  The
	 * 512 MiB are the EAL's heap, from which the mempools come. */
	char *args[] = {
	    (char *)program,
	    "--no-huge",
	    "--no-pci",
	    "-l",
	    "0",
	    "-m",
	    "512",
	    "--no-shconf",
	    "--no-telemetry",
	    "--log-level=4",
	    NULL,
	};
	int count = (int)(sizeof(args) / sizeof(args[0])) - 1;

	if (rte_eal_init(count, args) < 0) {
		fprintf(stderr, "rte_eal_init: %s\n", rte_strerror(rte_errno));
		return -1;
	}
#else
	(void)program;
#endif
	return 0;
}

void peer_stop(void)
{
#if defined(BENCH_PEER_DPDK)
	rte_eal_cleanup();
#endif
}

void peer_thread_enter(void)
{
#if defined(BENCH_PEER_DPDK)
	/* An unregistered thread has no lcore id, hence no mempool cache:
	 * every get and put would go to the shared ring.  DPDK's own
	 * applications run their threads as lcores. */
	if (rte_thread_register() != 0) {
		/* Without it the case cannot run: the worker ends here, as
		 * the workloads' worker_fail() ends it. */
		fprintf(stderr, "rte_thread_register: %s\n",
		        rte_strerror(rte_errno));
		_exit(1);
	}
#endif
}

void peer_thread_leave(void)
{
#if defined(BENCH_PEER_DPDK)
	rte_thread_unregister();
#endif
}

int peer_open(struct peer *peer, const struct bench_case *c)
{
	memset(peer, 0, sizeof(*peer));
#if defined(BENCH_PEER_POOL)
	int mode = allocator_pool_flags(c->allocator) |
	           (c->prefault ? POOL_PREFAULT : 0);
	if (allocator_is_pool_set(c->allocator)) {
		peer->set = pool_set_init(MIXED_MIN_BLOCK, c->block_size,
		                          c->blocks * c->block_size, mode);
		if (peer->set == NULL) {
			fprintf(stderr, "pool_set_init(%d, %zu, %zu, %s): %s\n",
			        MIXED_MIN_BLOCK, c->block_size,
			        c->blocks * c->block_size,
			        allocator_names[c->allocator], strerror(errno));
			return -1;
		}
		return 0;
	}
	peer->pool = pool_init(c->block_size, c->blocks, mode);
	if (peer->pool == NULL) {
		fprintf(stderr, "pool_init(%zu, %zu, %s): %s\n", c->block_size,
		        c->blocks, allocator_names[c->allocator],
		        strerror(errno));
		return -1;
	}
#elif defined(BENCH_PEER_GSLICE)
	peer->block_size = c->block_size;
#elif defined(BENCH_PEER_DPDK)
	static unsigned opened;
	char name[RTE_MEMPOOL_NAMESIZE];

	/* A name per pool: pair's and bulk's threads share one, but a
	 * worker may open several. */
	snprintf(name, sizeof(name), "bench%u", opened++);
	peer->mempool = rte_mempool_create(
	    name, (unsigned)c->blocks, (unsigned)c->block_size,
	    (unsigned)case_dpdk_cache(c), 0, NULL, NULL, NULL, NULL,
	    SOCKET_ID_ANY, 0);
	if (peer->mempool == NULL) {
		fprintf(stderr, "rte_mempool_create(%zu x %zu B): %s\n",
		        c->blocks, c->block_size, rte_strerror(rte_errno));
		return -1;
	}
#elif defined(BENCH_PEER_BOOST)
	/* The first chunk holds the case's blocks, as the pools' regions
	 * do; more come by chunks when they run out. */
	peer->pool = boost_pool_new(c->block_size, c->blocks);
	if (peer->pool == NULL) {
		fprintf(stderr, "boost::pool<>(%zu): out of memory\n",
		        c->block_size);
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
	pool_set_destroy(peer->set);
	peer->set = NULL;
#elif defined(BENCH_PEER_DPDK)
	rte_mempool_free(peer->mempool);
	peer->mempool = NULL;
#elif defined(BENCH_PEER_BOOST)
	boost_pool_delete(peer->pool);
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

	if ((peer->pool != NULL && pool_stats(peer->pool, &stats) == 0) ||
	    (peer->set != NULL && pool_set_stats(peer->set, 0, &stats) == 0)) {
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
	/* held, oversize, lighttpd and xthread ask for zeroed memory, the
	 * others for uninitialised memory. */
	int zeroed =
	    c->workload == WORKLOAD_HELD || c->workload == WORKLOAD_OVERSIZE ||
	    c->workload == WORKLOAD_LIGHTTPD || c->workload == WORKLOAD_XTHREAD;

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
#elif defined(BENCH_PEER_GSLICE)
	e->symbol = zeroed ? "g_slice_alloc0" : "g_slice_alloc";
	e->function = zeroed ? ENTRY(g_slice_alloc0) : ENTRY(g_slice_alloc);
	e->free_symbol = "g_slice_free1";
	e->free_function = ENTRY(g_slice_free1);
	/* Above its slabs GSlice calls g_malloc, which calls malloc. */
	if (c->block_size > GSLICE_SLAB_MAX) {
		e->fallback_symbol = "malloc";
		e->fallback_function = ENTRY(malloc);
	}
#elif defined(BENCH_PEER_DPDK)
	/* rte_mempool_get() and _put() are inline: the worker's own code,
	 * down to the mempool driver's dequeue and enqueue. */
	int bulk = c->workload == WORKLOAD_BULK;

	(void)zeroed;
	e->symbol = bulk ? "rte_mempool_get_bulk" : "rte_mempool_get";
	e->function = ENTRY(peer_open);
	e->free_symbol = bulk ? "rte_mempool_put_bulk" : "rte_mempool_put";
	e->free_function = ENTRY(peer_close);
#elif defined(BENCH_PEER_BOOST)
	(void)zeroed;
	e->symbol = "boost_pool_malloc";
	e->function = ENTRY(boost_pool_malloc);
	e->free_symbol = "boost_pool_free";
	e->free_function = ENTRY(boost_pool_free);
#elif defined(BENCH_PEER_POOL)
	if (allocator_is_pool_set(c->allocator)) {
		e->symbol = "pool_set_malloc";
		e->function = ENTRY(pool_set_malloc);
		e->free_symbol = "pool_set_free";
		e->free_function = ENTRY(pool_set_free);
		e->fallback_symbol = "malloc";
		e->fallback_function = ENTRY(malloc);
		return;
	}
#ifdef SHIFTPOOL_INLINE
	/* The inline paths' functions, in this program; the library behind
	 * them is named as the fallback's is. */
	e->symbol = zeroed ? "pool_calloc (inline)" : "pool_malloc (inline)";
	e->function = zeroed ? ENTRY(shiftpool_inline_calloc_)
	                     : ENTRY(shiftpool_inline_malloc_);
	e->free_symbol = "pool_free (inline)";
	e->free_function = ENTRY(shiftpool_inline_free_);
#else
	e->symbol = zeroed ? "pool_calloc" : "pool_malloc";
	e->function = zeroed ? ENTRY(pool_calloc) : ENTRY(pool_malloc);
	e->free_symbol = "pool_free";
	e->free_function = ENTRY(pool_free);
#endif
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
#elif defined(BENCH_PEER_GSLICE)
	snprintf(buf, size, "GLib %u.%u.%u", glib_major_version,
	         glib_minor_version, glib_micro_version);
#elif defined(BENCH_PEER_DPDK)
	snprintf(buf, size, "%s", rte_version());
#elif defined(BENCH_PEER_BOOST)
	snprintf(buf, size, "%s", boost_pool_version());
#elif defined(BENCH_PEER_POOL)
	snprintf(buf, size, "shiftpool %s", shiftpool_version());
#endif
}
