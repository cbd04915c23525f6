/*
 * Shared pieces of the concurrency stress programs; see concurrency.h.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* gettid(), SIGEV_THREAD_ID */
#endif
#include "concurrency.h"

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------ failure */

const char *concurrency_name = "test";
const char *concurrency_part;

void failf(const char *file, int line, const char *cond, const char *fmt, ...)
{
	va_list ap;
	flockfile(stderr);
	fprintf(stderr, "%s: FAIL ", concurrency_name);
	if (concurrency_part)
		fprintf(stderr, "[%s] ", concurrency_part);
	fprintf(stderr, "%s:%d: %s: ", file, line, cond);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	funlockfile(stderr);
	abort();
}

/* ------------------------------------------------------------ helpers */

uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

/* splitmix64 */
uint64_t rnd(uint64_t *state)
{
	*state += 0x9e3779b97f4a7c15ull;
	return mix64(*state);
}

double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

pool_stats_t stats_of(const pool_t *pool)
{
	pool_stats_t st;
	CHECK(pool_stats(pool, &st) == 0, "pool_stats failed: %s",
	      strerror(errno));
	return st;
}

/* ------------------------------------------------------------ threads */

void check_pthread(int rc, const char *what)
{
	if (rc != 0) {
		fprintf(stderr, "%s: %s: %s\n", concurrency_name, what,
		        strerror(rc));
		abort();
	}
}

void start_thread(pthread_t *thread, void *(*fn)(void *), void *arg)
{
	check_pthread(pthread_create(thread, NULL, fn, arg), "pthread_create");
}

void join_thread(pthread_t thread)
{
	check_pthread(pthread_join(thread, NULL), "pthread_join");
}

void start_threads(pthread_t *threads, size_t n, void *(*fn)(void *),
                   void *args, size_t size)
{
	for (size_t i = 0; i < n; i++)
		start_thread(&threads[i], fn, (char *)args + i * size);
}

void join_threads(const pthread_t *threads, size_t n)
{
	for (size_t i = 0; i < n; i++)
		join_thread(threads[i]);
}

static _Atomic uint32_t serials = 1;

uint32_t next_serial(void)
{
	return atomic_fetch_add(&serials, 1);
}

/* ------------------------------------------------------------ preemption */

unsigned preempt_us;
static _Atomic uint64_t preemptions;

static void preempt_handler(int sig)
{
	(void)sig;
	int saved = errno;
	atomic_fetch_add_explicit(&preemptions, 1, memory_order_relaxed);
	sched_yield();
	errno = saved;
}

bool preempt_arm(timer_t *timer)
{
#ifndef SIGEV_THREAD_ID
	(void)timer;
	return false;
#else
	if (preempt_us == 0)
		return false;
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGUSR1;
#ifdef sigev_notify_thread_id
	sev.sigev_notify_thread_id = gettid();
#else
	sev._sigev_un._tid = gettid();
#endif
	if (timer_create(CLOCK_MONOTONIC, &sev, timer) != 0)
		return false;
	struct itimerspec its = {{0, (long)preempt_us * 1000},
	                         {0, (long)preempt_us * 1000}};
	timer_settime(*timer, 0, &its, NULL);
	return true;
#endif
}

uint64_t preempt_count(void)
{
	return atomic_load(&preemptions);
}

/* ------------------------------------------------------------ run */

bool long_run_from_env(void)
{
	const char *env = getenv("STRESS_LONG");
	return env && *env && strcmp(env, "0") != 0;
}

bool common_option(const char *arg, bool *long_run, int *modes, int *nmodes)
{
	if (strcmp(arg, "--long") == 0)
		*long_run = true;
	else if (strcmp(arg, "--mode=locked") == 0)
		modes[0] = POOL_LOCKED, *nmodes = 1;
	else if (strcmp(arg, "--mode=per-thread") == 0)
		modes[0] = POOL_PER_THREAD, *nmodes = 1;
	else if (strncmp(arg, "--preempt-us=", 13) == 0)
		preempt_us = (unsigned)strtoul(arg + 13, NULL, 10);
	else
		return false;
	return true;
}

void concurrency_start(const char *name, bool long_run)
{
	concurrency_name = name;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = preempt_handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	/* A hang bound, not a speed bound (aba's own watchdog fails a round
	 * that makes no progress for a minute).  A short run took 4 s
	 * for one of aba's POOL_LOCKED cases (16 threads, 2 blocks) on an
	 * idle 2-core machine and 290 s in a loaded one's distcheck, where
	 * 600 s for the whole run ran out. */
	alarm(long_run ? 4 * 3600 : 1800);
	setvbuf(stdout, NULL, _IOLBF, 0);
}

void concurrency_done(double t0)
{
	printf("%s: all OK in %.2fs (%" PRIu64 " preemptions by timer)\n",
	       concurrency_name, now() - t0, preempt_count());
}

/* ------------------------------------------------------------ owner table */

bool owner_take(_Atomic uint64_t *word, uint64_t stamp, uint64_t *held)
{
	*held = 0;
	return atomic_compare_exchange_strong_explicit(
	    word, held, stamp, memory_order_acq_rel, memory_order_acquire);
}

bool owner_release(_Atomic uint64_t *word, uint64_t stamp, uint64_t *held)
{
	*held = stamp;
	return atomic_compare_exchange_strong_explicit(
	    word, held, 0, memory_order_acq_rel, memory_order_acquire);
}

size_t owner_live(_Atomic uint64_t *owner, size_t count)
{
	size_t live = 0;
	for (size_t i = 0; i < count; i++)
		live += atomic_load(&owner[i]) != 0;
	return live;
}

/* ------------------------------------------------------------ tracked pool */

void tracked_init(struct tracked *tr, int index, size_t block_size,
                  size_t block_count, int flags)
{
	memset(tr, 0, sizeof *tr);
	tr->pool = pool_init(block_size, block_count, flags);
	CHECK(tr->pool != NULL, "pool_init(%zu, %zu, %s): %s", block_size,
	      block_count, mode_name(flags), strerror(errno));
	tr->flags = flags;
	tr->index = index;
	tr->block_size = pool_block_size(tr->pool);
	tr->block_count = block_count;
	while (((size_t)1 << tr->shift) < tr->block_size)
		tr->shift++;
	CHECK(((size_t)1 << tr->shift) == tr->block_size,
	      "block size %zu is not a power of two", tr->block_size);
	tr->owner = calloc(block_count, sizeof *tr->owner);
	CHECK(tr->owner != NULL, "out of memory");
}

void tracked_destroy(struct tracked *tr)
{
	pool_destroy(tr->pool);
	free(tr->owner);
	tr->pool = NULL;
	tr->owner = NULL;
}

/* Whether the address k blocks below p is a block of the pool. */
static bool owns_below(const struct tracked *tr, uintptr_t p, size_t k)
{
	return k * tr->block_size <= p &&
	       pool_owns(tr->pool, (const void *)(p - k * tr->block_size));
}

/* The largest k with p - k * block_size still a block of the pool. */
static size_t blocks_below(const struct tracked *tr, uintptr_t p)
{
	size_t lo = 0, hi = 1;
	while (hi <= tr->block_count && owns_below(tr, p, hi)) {
		lo = hi;
		hi *= 2;
	}
	/* owns(lo) == 1, owns(hi) == 0 (or hi beyond any block) */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (owns_below(tr, p, mid))
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static uintptr_t tracked_base(struct tracked *tr, const void *block)
{
	uintptr_t base = atomic_load_explicit(&tr->base, memory_order_relaxed);
	if (base != 0)
		return base;
	uintptr_t bs = tr->block_size;
	base = (uintptr_t)block - blocks_below(tr, (uintptr_t)block) * bs;
	/* The region ends exactly block_count blocks later. */
	CHECK(pool_owns(tr->pool,
	                (const void *)(base + (tr->block_count - 1) * bs)) &&
	          !pool_owns(tr->pool,
	                     (const void *)(base + tr->block_count * bs)),
	      "pool region is not %zu blocks from %#" PRIxPTR, tr->block_count,
	      base);
	atomic_store_explicit(&tr->base, base, memory_order_relaxed);
	return base;
}

size_t tracked_index(struct tracked *tr, const void *block)
{
	uintptr_t base = tracked_base(tr, block);
	size_t index = ((uintptr_t)block - base) >> tr->shift;
	CHECK(index < tr->block_count && (uintptr_t)block >= base,
	      "block %p outside the region", block);
	return index;
}

bool track_alloc(struct tracked *tr, void *p, uint64_t id)
{
	if (!pool_owns(tr->pool, p)) {
		uintptr_t base =
		    atomic_load_explicit(&tr->base, memory_order_relaxed);
		CHECK(base == 0 || (uintptr_t)p < base ||
		          (uintptr_t)p >=
		              base + tr->block_count * tr->block_size,
		      "pool %d: allocation %p inside the region but not a "
		      "block start",
		      tr->index, p);
		return false;
	}
	size_t index = tracked_index(tr, p);
	uint64_t expected;
	if (!owner_take(&tr->owner[index], id, &expected))
		failf(__FILE__, __LINE__, "block handed out twice",
		      "pool %d (%s): block %zu (%p) handed to object %#" PRIx64
		      " while object %#" PRIx64 " still holds it",
		      tr->index, mode_name(tr->flags), index, p, id, expected);
	return true;
}

void track_free(struct tracked *tr, void *p, uint64_t id)
{
	size_t index = tracked_index(tr, p);
	uint64_t expected;
	if (!owner_release(&tr->owner[index], id, &expected))
		failf(__FILE__, __LINE__, "owner stamp changed",
		      "pool %d (%s): block %zu (%p) freed by object %#" PRIx64
		      " but the table says %#" PRIx64,
		      tr->index, mode_name(tr->flags), index, p, id, expected);
}

void **take_every_block(struct tracked *tr, uint64_t id_base, const char *when)
{
	size_t n = tr->block_count;
	void **blocks = malloc(n * sizeof *blocks);
	CHECK(blocks != NULL, "out of memory");
	for (size_t i = 0; i < n; i++) {
		blocks[i] = pool_malloc(tr->pool, tr->block_size);
		CHECK(
		    blocks[i] != NULL && pool_owns(tr->pool, blocks[i]),
		    "%s: pool %d (%s): block %zu of %zu not served by the pool "
		    "(%p): capacity lost",
		    when, tr->index, mode_name(tr->flags), i, n, blocks[i]);
		track_alloc(tr, blocks[i], id_base | (i + 1));
		memset(blocks[i], 0xa5, tr->block_size);
	}
	return blocks;
}

void give_back_blocks(struct tracked *tr, void **blocks, size_t n,
                      uint64_t id_base)
{
	for (size_t i = 0; i < n; i++) {
		track_free(tr, blocks[i], id_base | (i + 1));
		pool_free(tr->pool, blocks[i]);
	}
	free(blocks);
}

/* With every block out, the next request is not a block. */
static void check_no_block_beyond(struct tracked *tr, const char *when)
{
	errno = 0;
	void *extra = pool_malloc(tr->pool, tr->block_size);
	CHECK(extra == NULL ? errno == ENOMEM : !pool_owns(tr->pool, extra),
	      "%s: pool %d handed out a block beyond its %zu", when, tr->index,
	      tr->block_count);
	if (extra)
		pool_free(tr->pool, extra);
}

void check_whole_capacity(struct tracked *tr, const char *when)
{
	size_t n = tr->block_count;
	uint64_t id_base = (uint64_t)next_serial() << 32;
	void **blocks = take_every_block(tr, id_base, when);
	check_no_block_beyond(tr, when);
	pool_stats_t st = stats_of(tr->pool);
	CHECK(st.in_use == n, "%s: pool %d: in_use %zu with all %zu blocks out",
	      when, tr->index, st.in_use, n);
	give_back_blocks(tr, blocks, n, id_base);
	st = stats_of(tr->pool);
	CHECK(st.in_use == 0 && st.allocs == st.frees,
	      "%s: pool %d: in_use %zu, allocs %" PRIu64 ", frees %" PRIu64
	      " after giving every block back",
	      when, tr->index, st.in_use, st.allocs, st.frees);
}

bool only_selected(const char *only, const char *part)
{
	if (only == NULL)
		return true;
	size_t n = strlen(part);
	for (const char *p = only; (p = strstr(p, part)) != NULL; p += n)
		if ((p == only || p[-1] == ',') && (p[n] == ',' || p[n] == 0))
			return true;
	return false;
}
