/*
 * bench/replace: random replacement with many live blocks.  Each thread
 * holds H live blocks of 64 bytes (one per connection of a server) and,
 * per operation, frees a random one and allocates its replacement, so
 * that frees come in an order unrelated to the allocations.
 *
 *   replace ALLOCATOR THREADS HELD OPS
 *
 * ALLOCATOR is per-thread, locked or single (a shiftpool pool of that
 * mode, with room for every thread's blocks and the spans the threads
 * hold), or malloc (whatever malloc() the program is linked with: glibc,
 * or tcmalloc, jemalloc or mimalloc when linked with -ltcmalloc_minimal,
 * -ljemalloc or -lmimalloc; one process per allocator).  OPS is the
 * operations per thread.  It prints one line: the allocator, threads,
 * held blocks, nanoseconds of core time per pair (the wall time times the
 * threads that can run at once, over all pairs), the share the pool
 * served, and the peak resident set in KiB.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <shiftpool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define BLOCK 64

static pool_t *pool;
static int use_pool;
static size_t held, ops;
static pthread_barrier_t start, stop;
/* Each thread's first and last moment of its timed loop: the run is the
 * span from the earliest start to the latest end (the main thread may be
 * scheduled late, and must not time the workers' setup). */
static double *began, *ended;

static void *get(void)
{
	return use_pool ? pool_malloc(pool, BLOCK) : malloc(BLOCK);
}

static void put(void *p)
{
	if (use_pool)
		pool_free(pool, p);
	else
		free(p);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *worker(void *arg)
{
	uint64_t x = (uint64_t)(uintptr_t)arg * 0x9e3779b97f4a7c15ull + 1;
	void **live = malloc(held * sizeof *live);
	if (live == NULL)
		abort();
	for (size_t i = 0; i < held; i++) {
		live[i] = get();
		memset(live[i], 1, 8);
	}
	pthread_barrier_wait(&start);
	size_t self = (size_t)(uintptr_t)arg - 1;
	began[self] = now();
	for (size_t n = 0; n < ops; n++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		size_t i = (size_t)((x >> 11) % held);
		put(live[i]);
		live[i] = get();
		*(volatile char *)live[i] = (char)n;
	}
	ended[self] = now();
	pthread_barrier_wait(&stop);
	for (size_t i = 0; i < held; i++)
		put(live[i]);
	free(live);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr,
		        "usage: %s per-thread|locked|single|malloc "
		        "THREADS HELD OPS\n",
		        argv[0]);
		return 2;
	}
	const char *kind = argv[1];
	size_t threads = strtoul(argv[2], NULL, 10);
	held = strtoul(argv[3], NULL, 10);
	ops = strtoul(argv[4], NULL, 10);
	if (threads == 0 || held == 0)
		return 2;
	int mode = -1;
	if (strcmp(kind, "per-thread") == 0)
		mode = POOL_PER_THREAD;
	else if (strcmp(kind, "locked") == 0)
		mode = POOL_LOCKED;
	else if (strcmp(kind, "single") == 0 && threads == 1)
		mode = POOL_SINGLE;
	else if (strcmp(kind, "malloc") != 0)
		return 2;
	if (mode >= 0) {
		/* Room for every live block, and for the spans each thread
		 * holds besides them. */
		pool =
		    pool_init(BLOCK, 2 * threads * held + threads * 1024, mode);
		if (pool == NULL) {
			perror("pool_init");
			return 1;
		}
		use_pool = 1;
	}

	pthread_t *tids = calloc(threads, sizeof *tids);
	began = calloc(threads, sizeof *began);
	ended = calloc(threads, sizeof *ended);
	if (tids == NULL || began == NULL || ended == NULL)
		return 1;
	pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
	pthread_barrier_init(&stop, NULL, (unsigned)threads + 1);
	for (size_t t = 0; t < threads; t++)
		if (pthread_create(&tids[t], NULL, worker,
		                   (void *)(uintptr_t)(t + 1)) != 0)
			return 1;
	pthread_barrier_wait(&start);
	pthread_barrier_wait(&stop);
	for (size_t t = 0; t < threads; t++)
		pthread_join(tids[t], NULL);
	double t0 = began[0], t1 = ended[0];
	for (size_t t = 1; t < threads; t++) {
		t0 = began[t] < t0 ? began[t] : t0;
		t1 = ended[t] > t1 ? ended[t] : t1;
	}

	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t running = threads < (size_t)cpus ? threads : (size_t)cpus;
	double ns =
	    (t1 - t0) * 1e9 * (double)running / ((double)threads * (double)ops);
	double served = 1.0;
	if (use_pool) {
		pool_stats_t st;
		pool_stats(pool, &st);
		double all = (double)(st.allocs + st.fallback_allocs);
		served = all > 0 ? (double)st.allocs / all : 1.0;
		pool_destroy(pool);
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("%s %zu %zu %.2f %.4f %ld\n", kind, threads, held, ns, served,
	       ru.ru_maxrss);
	free(tids);
	free(began);
	free(ended);
	return 0;
}
