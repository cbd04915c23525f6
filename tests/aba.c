/*
 * ABA torture (reliability goal 3): pools of a handful of blocks, many
 * threads, every block allocated and freed over and over, held for a
 * while, passed to other threads, freed by them.
 *
 *	tests/aba [--long] [--mode=locked|per-thread] [--threads=N]
 *	          [--blocks=N[,N...]] [--cycles=N] [--rounds=N] [--stash=N]
 *	          [--preempt-us=N] [--seed=N]
 *
 * The pools have POOL_NO_FALLBACK, so a thread that finds the pool empty
 * gets NULL with ENOMEM; it then gives back a block it holds or one another
 * thread passed on, and tries again.  Pools of 2, 3, 8 and 16 blocks (one
 * or two spans of 8 in POOL_PER_THREAD mode), threads holding up to 4
 * blocks; then 64 and 256 blocks (8 and 32 spans), threads holding up to
 * 16, so that spans are exhausted, abandoned, published and adopted all
 * the time: the traffic of the available-span stack, the interleavings an
 * untagged stack or an unclaimed remote free gets wrong.  Every worker is
 * interrupted by a timer of its own every 200 us (--preempt-us) and yields
 * its core in the handler, so that even on two cores threads stop at
 * random points inside the pool's lock-free windows.  (With the tag of
 * the available-span stack removed, the long run finds a block handed out
 * twice.)
 *
 * Checks: each allocation compare-exchanges the block's word in a test-side
 * table from 0 to a unique stamp (a block handed out twice fails there),
 * and fills the block with its stamp, re-read before the block is passed
 * on and before it is freed (a second owner's writes fail there); calloc'd
 * blocks are zero; an empty pool sets errno to ENOMEM.  After each round
 * of threads: pool_stats() in_use equals the blocks the table holds.  At
 * the end: in_use 0, allocs == frees == the test's count, no fallback,
 * every block can be had again.  A round in which no block is allocated or
 * freed for a minute fails (capacity stranded); so does the alarm.  No
 * timing is asserted.  Without arguments: the short run of make check;
 * --long or STRESS_LONG=1: millions of cycles per pool.
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shiftpool.h"
#include "concurrency.h"

#define SLOTS      4 /* blocks in transit between threads */
#define BLOCK_SIZE 64

struct aba {
	pool_t *pool;
	int flags;
	size_t count;
	size_t words; /* 64-bit words per block */
	uintptr_t base;
	_Atomic uint64_t *owner; /* per block: 0 or the holder's stamp */
	_Atomic(void *) slots[SLOTS];
	uint64_t target; /* successful allocations this round */
	_Atomic uint64_t done;
	_Atomic uint64_t allocs, frees, enomem, passed, crossed;
	_Atomic unsigned finished; /* threads of this round that are done */
	size_t stash;              /* blocks a thread may hold, <= MAX_STASH */
	uint64_t seed;
};

#define MAX_STASH 32 /* blocks a thread holds for a while */

struct aba_thread {
	struct aba *a;
	uint32_t serial;
	uint64_t rng;
	uint64_t next;
	void *stash[MAX_STASH];
};

/* The block's index; the region's base was found at pool creation. */
static size_t index_of(struct aba *a, const void *p)
{
	CHECK(pool_owns(a->pool, p), "%p is not a block of the pool", p);
	size_t index = (size_t)((uintptr_t)p - a->base) / BLOCK_SIZE;
	CHECK((uintptr_t)p >= a->base && index < a->count,
	      "%p outside the region", p);
	return index;
}

/* Checks that p still carries stamp in every word and in the table. */
static void verify(struct aba *a, const void *p, uint64_t stamp)
{
	const uint64_t *w = p;
	size_t index = index_of(a, p);
	for (size_t i = 0; i < a->words; i++)
		CHECK(w[i] == stamp,
		      "%s, %zu blocks: block %zu (%p) word %zu is %#" PRIx64
		      ", its owner wrote %#" PRIx64 ": a second owner",
		      mode_name(a->flags), a->count, index, p, i, w[i], stamp);
	uint64_t held =
	    atomic_load_explicit(&a->owner[index], memory_order_acquire);
	CHECK(held == stamp,
	      "%s, %zu blocks: block %zu (%p) held by %#" PRIx64
	      " in the table, its owner is %#" PRIx64,
	      mode_name(a->flags), a->count, index, p, held, stamp);
}

static void give_back(struct aba *a, struct aba_thread *t, void *p)
{
	uint64_t stamp = *(uint64_t *)p;
	verify(a, p, stamp);
	if ((uint32_t)(stamp >> 32) != t->serial)
		atomic_fetch_add_explicit(&a->crossed, 1, memory_order_relaxed);
	size_t index = index_of(a, p);
	uint64_t expected;
	/* Released in the table before the pool may hand it out again. */
	CHECK(owner_release(&a->owner[index], stamp, &expected),
	      "block %zu: table changed under its owner (%#" PRIx64 ")", index,
	      expected);
	pool_free(a->pool, p);
	atomic_fetch_add_explicit(&a->frees, 1, memory_order_relaxed);
}

/* Frees one block some thread passed on; false if there was none. */
static bool take_one(struct aba *a, struct aba_thread *t)
{
	size_t start = (size_t)(rnd(&t->rng) % SLOTS);
	for (size_t k = 0; k < SLOTS; k++) {
		void *p = atomic_exchange_explicit(
		    &a->slots[(start + k) % SLOTS], NULL, memory_order_acq_rel);
		if (p) {
			give_back(a, t, p);
			return true;
		}
	}
	return false;
}

static void *aba_thread_fn(void *arg)
{
	struct aba_thread *t = arg;
	struct aba *a = t->a;
	timer_t timer;
	bool armed = preempt_arm(&timer);
	uint64_t local_done = 0, enomem = 0, passed = 0, allocs = 0;
	unsigned idle = 0;

	while (atomic_load_explicit(&a->done, memory_order_relaxed) <
	       a->target) {
		uint64_t r = rnd(&t->rng);
		bool zeroed = (r & 7) == 0;
		errno = 0;
		void *p = zeroed ? pool_calloc(a->pool, 1, BLOCK_SIZE)
		                 : pool_malloc(a->pool, BLOCK_SIZE);
		if (p == NULL) {
			CHECK(errno == ENOMEM,
			      "empty pool: errno %d, not ENOMEM", errno);
			enomem++;
			/* Give back what we hold, else what another thread
			 * passed on; with nothing to do, let others run. */
			size_t k = (size_t)(r >> 8) % a->stash;
			if (t->stash[k]) {
				give_back(a, t, t->stash[k]);
				t->stash[k] = NULL;
			} else if (!take_one(a, t) && ++idle > 8) {
				/* Let the threads holding blocks run. */
				sched_yield();
				idle = 0;
			}
			continue;
		}
		idle = 0;
		/* Now and then give the core away while holding a block,
		 * so that threads interleave even on two cores. */
		if ((r >> 32 & 127) == 0)
			sched_yield();
		size_t index = index_of(a, p);
		uint64_t stamp = (uint64_t)t->serial << 32 | ++t->next;
		uint64_t expected;
		if (!owner_take(&a->owner[index], stamp, &expected))
			failf(
			    __FILE__, __LINE__, "block handed out twice",
			    "%s, %zu blocks: block %zu (%p) handed to %#" PRIx64
			    " while %#" PRIx64 " holds it",
			    mode_name(a->flags), a->count, index, p, stamp,
			    expected);
		allocs++;
		uint64_t *w = p;
		if (zeroed)
			for (size_t i = 0; i < a->words; i++)
				CHECK(w[i] == 0,
				      "pool_calloc: block %zu word %zu is "
				      "%#" PRIx64,
				      index, i, w[i]);
		for (size_t i = 0; i < a->words; i++)
			w[i] = stamp;
		/* Hold it a little, sometimes, and look again. */
		if ((r >> 8 & 15) == 0) {
			for (volatile int spin = 0; spin < 50; spin++)
				;
		}
		verify(a, p, stamp);

		switch (r >> 16 & 3) {
		case 0:
			give_back(a, t, p);
			break;
		case 1:
		case 2: {
			/* Held for a while, checked when it goes back. */
			size_t k = (size_t)(r >> 20) % a->stash;
			void *old = t->stash[k];
			t->stash[k] = p;
			if (old)
				give_back(a, t, old);
			break;
		}
		default: {
			void *old = atomic_exchange_explicit(
			    &a->slots[(r >> 24) % SLOTS], p,
			    memory_order_acq_rel);
			passed++;
			if (old)
				give_back(a, t, old);
		}
		}
		if (++local_done == 64) {
			atomic_fetch_add_explicit(&a->done, local_done,
			                          memory_order_relaxed);
			local_done = 0;
		}
	}
	for (size_t k = 0; k < MAX_STASH; k++)
		if (t->stash[k])
			give_back(a, t, t->stash[k]);
	atomic_fetch_add_explicit(&a->done, local_done, memory_order_relaxed);
	atomic_fetch_add_explicit(&a->allocs, allocs, memory_order_relaxed);
	atomic_fetch_add_explicit(&a->enomem, enomem, memory_order_relaxed);
	atomic_fetch_add_explicit(&a->passed, passed, memory_order_relaxed);
	if (armed)
		timer_delete(timer);
	atomic_fetch_add_explicit(&a->finished, 1, memory_order_release);
	return NULL;
}

/* Takes every block from this thread: all distinct, then ENOMEM. */
static void check_capacity(struct aba *a)
{
	void **blocks = calloc(a->count, sizeof *blocks);
	CHECK(blocks != NULL, "out of memory");
	uint32_t serial = next_serial();
	for (size_t i = 0; i < a->count; i++) {
		blocks[i] = pool_malloc(a->pool, BLOCK_SIZE);
		CHECK(blocks[i] != NULL,
		      "%s, %zu blocks: only %zu could be had at the end: %s",
		      mode_name(a->flags), a->count, i, strerror(errno));
		size_t index = index_of(a, blocks[i]);
		uint64_t expected, stamp = (uint64_t)serial << 32 | (i + 1);
		CHECK(owner_take(&a->owner[index], stamp, &expected),
		      "block %zu handed out twice at the end", index);
	}
	errno = 0;
	CHECK(pool_malloc(a->pool, BLOCK_SIZE) == NULL && errno == ENOMEM,
	      "a block beyond the %zu", a->count);
	for (size_t i = 0; i < a->count; i++) {
		atomic_store(&a->owner[index_of(a, blocks[i])], 0);
		pool_free(a->pool, blocks[i]);
	}
	free(blocks);
}

/*
 * Waits for the round's threads to finish.  No allocation succeeding for
 * STALL_SECONDS while blocks keep being asked for is a failure: the blocks
 * are somewhere no thread can get them (stranded in a span, lost from a
 * list), not a slow machine, since the threads hold at most
 * stash + 1 blocks each and give them back on ENOMEM.
 */
static unsigned stall_seconds = 60;

static void wait_for_round(struct aba *a, unsigned nthreads, unsigned round)
{
	uint64_t last = atomic_load(&a->done) + atomic_load(&a->frees);
	double since = now();
	while (atomic_load_explicit(&a->finished, memory_order_acquire) <
	       nthreads) {
		struct timespec ts = {0, 20 * 1000 * 1000};
		nanosleep(&ts, NULL);
		uint64_t progress =
		    atomic_load(&a->done) + atomic_load(&a->frees);
		if (progress != last) {
			last = progress;
			since = now();
		} else if (now() - since > stall_seconds) {
			pool_stats_t st;
			pool_stats(a->pool, &st);
			failf(__FILE__, __LINE__, "no progress",
			      "%s, %zu blocks, round %u: no block allocated or "
			      "freed for %u s (in_use %zu, test holds %zu of "
			      "them): capacity is stranded",
			      mode_name(a->flags), a->count, round,
			      stall_seconds, st.in_use,
			      owner_live(a->owner, a->count));
		}
	}
	atomic_store(&a->finished, 0);
}

static void *find_base(void *arg)
{
	struct aba *a = arg;
	void *p = pool_malloc(a->pool, BLOCK_SIZE);
	CHECK(p != NULL, "pool_malloc: %s", strerror(errno));
	uintptr_t base = (uintptr_t)p;
	while (base >= BLOCK_SIZE &&
	       pool_owns(a->pool, (void *)(base - BLOCK_SIZE)))
		base -= BLOCK_SIZE;
	a->base = base;
	CHECK(
	    pool_owns(a->pool, (void *)(base + (a->count - 1) * BLOCK_SIZE)) &&
	        !pool_owns(a->pool, (void *)(base + a->count * BLOCK_SIZE)),
	    "the region is not %zu blocks", a->count);
	pool_free(a->pool, p);
	return NULL;
}

static size_t opt_stash; /* 0: by pool size */

static void run(int flags, size_t count, unsigned nthreads, unsigned rounds,
                uint64_t cycles, uint64_t seed)
{
	struct aba *a = calloc(1, sizeof *a);
	CHECK(a != NULL, "out of memory");
	a->flags = flags | POOL_NO_FALLBACK;
	a->count = count;
	a->words = BLOCK_SIZE / sizeof(uint64_t);
	a->seed = seed;
	a->stash = opt_stash ? opt_stash : count >= 64 ? 16 : 4;
	a->pool = pool_init(BLOCK_SIZE, count, a->flags);
	CHECK(a->pool != NULL, "pool_init: %s", strerror(errno));
	CHECK(pool_block_size(a->pool) == BLOCK_SIZE, "block size %zu",
	      pool_block_size(a->pool));
	a->owner = calloc(count, sizeof *a->owner);
	CHECK(a->owner != NULL, "out of memory");

	/* The region's base: the lowest block, found with pool_owns() alone
	 * (a pure range check) from any block.  On a thread of its own, so
	 * that in POOL_PER_THREAD mode the main thread holds no span while
	 * the workers run (with one span it would starve them all). */
	{
		pthread_t probe;
		int rc = pthread_create(&probe, NULL, find_base, a);
		CHECK(rc == 0, "pthread_create: %s", strerror(rc));
		pthread_join(probe, NULL);
	}

	pthread_t *th = calloc(nthreads, sizeof *th);
	struct aba_thread *ts = calloc(nthreads, sizeof *ts);
	CHECK(th && ts, "out of memory");
	double t0 = now();
	for (unsigned round = 0; round < rounds; round++) {
		a->target = cycles * (round + 1) / rounds;
		for (unsigned i = 0; i < nthreads; i++) {
			ts[i].a = a;
			ts[i].serial = next_serial();
			ts[i].rng = mix64(seed ^ mix64(ts[i].serial));
			ts[i].next = 0;
			memset(ts[i].stash, 0, sizeof ts[i].stash);
			int rc =
			    pthread_create(&th[i], NULL, aba_thread_fn, &ts[i]);
			CHECK(rc == 0, "pthread_create: %s", strerror(rc));
		}
		wait_for_round(a, nthreads, round);
		for (unsigned i = 0; i < nthreads; i++)
			pthread_join(th[i], NULL);
		pool_stats_t st;
		CHECK(pool_stats(a->pool, &st) == 0, "pool_stats");
		CHECK(st.in_use == owner_live(a->owner, a->count),
		      "%s, %zu blocks, after round %u: in_use %zu, the test "
		      "holds "
		      "%zu",
		      mode_name(flags), count, round, st.in_use,
		      owner_live(a->owner, a->count));
	}
	double t1 = now();

	/* Free what is still in transit. */
	struct aba_thread main_t = {.a = a, .serial = 0};
	for (size_t k = 0; k < SLOTS; k++) {
		void *p = atomic_exchange(&a->slots[k], NULL);
		if (p)
			give_back(a, &main_t, p);
	}
	pool_stats_t st;
	CHECK(pool_stats(a->pool, &st) == 0, "pool_stats");
	uint64_t allocs = atomic_load(&a->allocs) + 1; /* + the base probe */
	uint64_t frees = atomic_load(&a->frees) + 1;
	CHECK(st.in_use == 0 && st.allocs == allocs && st.frees == frees &&
	          st.fallback_allocs == 0 && st.fallback_frees == 0,
	      "%s, %zu blocks: in_use %zu, allocs %" PRIu64 " (test %" PRIu64
	      "), frees %" PRIu64 " (test %" PRIu64 "), fallback %" PRIu64
	      "/%" PRIu64,
	      mode_name(flags), count, st.in_use, st.allocs, allocs, st.frees,
	      frees, st.fallback_allocs, st.fallback_frees);
	check_capacity(a);

	printf("aba %-10s blocks=%-3zu threads=%-2u hold=%-2zu rounds=%u "
	       "cycles=%-8" PRIu64 " passed=%-8" PRIu64 " crossed=%-8" PRIu64
	       " enomem=%-9" PRIu64 " double hand-outs=0 %.2fs OK\n",
	       mode_name(flags), count, nthreads, a->stash, rounds,
	       atomic_load(&a->allocs), atomic_load(&a->passed),
	       atomic_load(&a->crossed), atomic_load(&a->enomem), t1 - t0);
	fflush(stdout);

	pool_destroy(a->pool);
	free(a->owner);
	free(th);
	free(ts);
	free(a);
}

static void usage(const char *argv0)
{
	fprintf(stderr,
	        "usage: %s [--long] [--mode=locked|per-thread] [--threads=N]\n"
	        "       [--blocks=N[,N...]] [--cycles=N] [--rounds=N] "
	        "[--stash=N] [--preempt-us=N (0: off)] [--seed=N]\n",
	        argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	bool long_run = long_run_from_env();
	int modes[2] = {POOL_LOCKED, POOL_PER_THREAD}, nmodes = 2;
	size_t counts[16];
	int ncounts = 0;
	unsigned nthreads = 16, rounds = 0;
	uint64_t cycles = 0, seed = 0xaba;

	preempt_us = PREEMPT_DEFAULT_US(200);
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		if (common_option(s, &long_run, modes, &nmodes))
			continue;
		if (strncmp(s, "--threads=", 10) == 0)
			nthreads = (unsigned)strtoul(s + 10, NULL, 10);
		else if (strncmp(s, "--blocks=", 9) == 0) {
			const char *p = s + 9;
			char *end;
			while (*p && ncounts < 16) {
				unsigned long v = strtoul(p, &end, 10);
				if (end == p || v == 0 || v > 65536)
					usage(argv[0]);
				counts[ncounts++] = v;
				p = *end == ',' ? end + 1 : end;
			}
		} else if (strncmp(s, "--cycles=", 9) == 0)
			cycles = strtoull(s + 9, NULL, 10);
		else if (strncmp(s, "--rounds=", 9) == 0)
			rounds = (unsigned)strtoul(s + 9, NULL, 10);
		else if (strncmp(s, "--stash=", 8) == 0) {
			opt_stash = strtoul(s + 8, NULL, 10);
			if (opt_stash == 0 || opt_stash > MAX_STASH)
				usage(argv[0]);
		} else if (strncmp(s, "--seed=", 7) == 0)
			seed = strtoull(s + 7, NULL, 0);
		else
			usage(argv[0]);
	}
	if (nthreads == 0 || nthreads > 1024)
		usage(argv[0]);
	if (ncounts == 0) {
		/* 2 to 16 blocks: one span or two in POOL_PER_THREAD mode,
		 * threads holding up to 4 blocks each.  Then 64 and 256
		 * blocks (8 and 32 spans) with threads holding up to 16:
		 * spans are exhausted, abandoned, published and adopted
		 * all the time, the traffic of the available-span stack. */
		static const size_t sweep[] = {2, 3, 8, 16, 64, 256};
		for (size_t i = 0; i < sizeof sweep / sizeof sweep[0]; i++)
			counts[ncounts++] = sweep[i];
	}
	if (cycles == 0)
		cycles = long_run ? 10000000 : SANITIZED ? 20000 : 80000;
	if (rounds == 0)
		rounds = long_run ? 8 : 2;

	concurrency_start("aba", long_run);
	printf("aba: %s run, seed %#" PRIx64 "\n", long_run ? "long" : "short",
	       seed);
	double t0 = now();
	for (int m = 0; m < nmodes; m++)
		for (int c = 0; c < ncounts; c++)
			run(modes[m], counts[c], nthreads, rounds, cycles,
			    seed);
	concurrency_done(t0);
	return 0;
}
