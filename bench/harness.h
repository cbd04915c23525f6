/*
 * What the workload files share: the clock and page-fault counts of a timed
 * region, the checks every allocation gets, the harness's own memory, the
 * random numbers, threads and barriers, and the workloads' entry points,
 * which workload_run() (worker.c) calls.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef BENCH_HARNESS_H
#define BENCH_HARNESS_H

#include "peer/peer.h"
#include "workload.h"

#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define CACHE_LINE 64

/* The share of --duration spent warming up timed workloads. */
#define WARMUP_SHARE 0.2

enum phase { PHASE_WARMUP, PHASE_TIMED, PHASE_STOP };

/* Prints a message to stderr and ends the worker with status 1. */
static inline __attribute__((noreturn, format(printf, 1, 2))) void
worker_fail(const char *format, ...)
{
	va_list args;

	va_start(args, format);
	vfprintf(stderr, format, args);
	va_end(args);
	fputc('\n', stderr);
	fflush(stderr);
	_exit(1);
}

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The minor page faults of the whole process so far. */
static inline uint64_t minor_faults(void)
{
	struct rusage usage;

	getrusage(RUSAGE_SELF, &usage);
	return (uint64_t)usage.ru_minflt;
}

/* The timed region's start: its clock, and the page faults so far. */
struct timed {
	uint64_t start_ns, start_faults;
};

static inline void timed_start(struct timed *t)
{
	t->start_faults = minor_faults();
	t->start_ns = now_ns();
}

/* Ends the timed region: its nanoseconds and page faults into out. */
static inline void timed_stop(const struct timed *t,
                              struct workload_result *out)
{
	out->ns = now_ns() - t->start_ns;
	out->minor_faults = minor_faults() - t->start_faults;
}

static inline void sleep_seconds(double seconds)
{
	struct timespec ts;

	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* The compiler must assume the memory at p is read and written here, so
 * it can neither drop an allocation and its free nor the bytes written. */
static inline void escape(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

static inline uint64_t random_next(uint64_t *state)
{
	/* splitmix64 */
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The harness's own memory, outside the timed region, touched so that no
 * page fault of it lands in a measurement. */
static inline void *harness_alloc(size_t size)
{
	void *p = NULL;

	if (size == 0)
		size = 1;
	if (posix_memalign(&p, CACHE_LINE, size) != 0)
		worker_fail("out of memory for the harness (%zu bytes)", size);
	memset(p, 0, size);
	return p;
}

static inline void *check_allocated(void *p, size_t size)
{
	if (p == NULL)
		worker_fail("allocation of %zu bytes failed", size);
	return p;
}

static inline void check_zeroed(const void *p, size_t size)
{
	const unsigned char *bytes = p;

	if (*(const uint64_t *)p != 0 || bytes[size - 1] != 0)
		worker_fail("calloc(1, %zu) returned memory that is not zero "
		            "at %p",
		            size, p);
}

/* peer_calloc() and peer_free(), each call timed into a histogram when
 * --latency gives one (else NULL: a branch that always goes one way). */
static inline void *timed_calloc(struct peer *peer, void *slot, size_t size,
                                 struct latency_histogram *latency)
{
	uint64_t start;
	void *p;

	if (latency == NULL)
		return peer_calloc(peer, slot, size);
	start = latency_tick();
	p = peer_calloc(peer, slot, size);
	latency_add(latency, latency_tick() - start);
	return p;
}

static inline void timed_free(struct peer *peer, void *p,
                              struct latency_histogram *latency)
{
	uint64_t start;

	if (latency == NULL) {
		peer_free(peer, p);
		return;
	}
	start = latency_tick();
	peer_free(peer, p);
	latency_add(latency, latency_tick() - start);
}

/* The histograms of an untimed pass: none. */
static struct latency_histogram *const untimed[LATENCY_SIDES];

/* A slot of the floor's preallocated memory; NULL, and no code, in the
 * workers of real allocators. */
#define SLOT(address) (PEER_IS_FLOOR ? (void *)(address) : NULL)

static inline void barrier_init(pthread_barrier_t *barrier, size_t count)
{
	if (pthread_barrier_init(barrier, NULL, (unsigned)count) != 0)
		worker_fail("pthread_barrier_init failed");
}

static inline void thread_start(pthread_t *thread, void *(*run)(void *),
                                void *arg)
{
	int error = pthread_create(thread, NULL, run, arg);
	if (error != 0)
		worker_fail("pthread_create: %s", strerror(error));
}

/* ------------------------------------------------------------ workloads */

/* Each runs one case on a peer that workload_run() has opened and puts
 * what it measured into out.  workloads.c: the published measurements'
 * workloads and pair, bulk and footprint; workloads-mt.c: the threaded
 * ones of many sizes (mixed, larson, xmalloc, glibc-thread, alloc-test)
 * and replace. */
void run_held(const struct bench_case *c, struct peer *peer,
              struct workload_result *out);
void run_lighttpd(const struct bench_case *c, struct peer *peer,
                  struct workload_result *out);
void run_parallel(const struct bench_case *c, struct peer *peer,
                  struct workload_result *out);
void run_sort(const struct bench_case *c, struct peer *peer,
              struct workload_result *out);
void run_xthread(const struct bench_case *c, struct peer *peer,
                 struct workload_result *out);
void run_footprint(const struct bench_case *c, struct peer *peer,
                   struct workload_result *out);
void run_mixed(const struct bench_case *c, struct peer *peer,
               struct workload_result *out);
void run_larson(const struct bench_case *c, struct peer *peer,
                struct workload_result *out);
void run_xmalloc(const struct bench_case *c, struct peer *peer,
                 struct workload_result *out);
void run_window(const struct bench_case *c, struct peer *peer,
                struct workload_result *out);
void run_alloc_test(const struct bench_case *c, struct peer *peer,
                    struct workload_result *out);

#endif /* BENCH_HARNESS_H */
