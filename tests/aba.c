/*
 * ABA torture (reliability goal 3): pools of a handful of blocks, many
 * threads, every block allocated and freed over and over, held for a
 * while, passed to other threads, freed by them.
 *
 *	tests/aba [--long] [--mode=locked|per-thread] [--only=pools,set]
 *	          [--threads=N] [--blocks=N[,N...]] [--cycles=N] [--rounds=N]
 *	          [--stash=N] [--preempt-us=N] [--seed=N]
 *
 * Two parts, each in both modes.  pools: single pools of 64 B blocks with
 * POOL_NO_FALLBACK, so a thread that finds the pool empty gets NULL with
 * ENOMEM; it then gives back a block it holds or one another thread passed
 * on, and tries again.  Pools of 2, 3, 8 and 16 blocks (one or two spans
 * of 8 in POOL_PER_THREAD mode), threads holding up to 4 blocks; then 64
 * and 256 blocks (8 and 32 spans), threads holding up to 16, so that spans
 * are exhausted, abandoned, published and adopted all the time: the
 * traffic of the available-span stack, the interleavings an untagged stack
 * or an unclaimed remote free gets wrong.  set: the same over a pool set
 * of every class from 16 B to 4 KiB, each in the smallest slice a class
 * can have (with 4 KiB pages: 256 blocks of 16 B, 128 of 32 B, ... down to
 * 1 of 4 KiB), also with POOL_NO_FALLBACK; each request picks a class at
 * random and a size within it (above half the block), threads holding up
 * to 8 blocks of any classes, so that a thread frees blocks of classes it
 * does not ask for and many classes run out at once.  Every worker is
 * interrupted by a timer of its own every 200 us (--preempt-us) and
 * yields its core in the handler, so that even on two cores threads stop
 * at random points inside the pool's lock-free windows.  (With the tag of
 * the available-span stack removed, the long run of the pools finds a
 * block handed out twice; the short run of the set finds blocks lost or
 * handed out twice, its classes' spans passing between threads that go
 * from class to class.)
 *
 * Before the threads, a thread of its own takes every block of each pool
 * or class: all distinct, one contiguous run with the block size as
 * stride, as many as pool_stats() says, then ENOMEM; that run is where a
 * pointer's class and index are read from its address alone.  Checks:
 * each allocation lies in the class its size asks for, on a block start,
 * and compare-exchanges the block's word in a test-side table from 0 to a
 * unique stamp (a block handed out twice fails there); it fills the
 * request with its stamp, re-read before the block is passed on and
 * before it is freed (a second owner's writes fail there); calloc'd
 * requests are zero; an empty pool or class sets errno to ENOMEM.  After
 * each round of threads: every class's in_use equals the blocks the table
 * holds.  At the end: in_use 0, allocs == frees == the test's count, per
 * class, no fallback, every block can be had again.  A round in which no
 * block is allocated or freed for a minute fails (capacity stranded); so
 * does the alarm.  No timing is asserted.  Without arguments: the short
 * run of make check; --long or STRESS_LONG=1: millions of cycles per pool
 * and per set.
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

#define SLOTS      4  /* blocks in transit between threads */
#define BLOCK_SIZE 64 /* of the single pools */
#define MAX_STASH  32 /* blocks a thread holds for a while */

/* The set: classes SET_MIN to SET_MAX, bytes_per_class below the least a
 * slice holds (a block of SET_MAX and a guard page), so every class gets
 * the smallest slice there is. */
#define SET_MIN   16
#define SET_MAX   4096
#define SET_BYTES ((size_t)SET_MAX)
#define SET_STASH 8
/* Allocations of the set per --cycles, spread over its classes. */
#define SET_WORK    4
#define MAX_CLASSES 16

/*
 * A pool under test, or one class of the set.  Its blocks are base + i *
 * block_size for i < count (found before the threads start); owner[i] is
 * 0 while block i is free, else the stamp of its holder.  Requests of it
 * are min_size to block_size bytes, so each holds at least words 64-bit
 * words, the ones checked.
 */
struct aba_class {
	size_t block_size;
	size_t min_size;
	size_t words;
	size_t count;
	uintptr_t base;
	_Atomic uint64_t *owner;
	_Atomic uint64_t allocs, frees; /* by the workers */
	uint64_t probes; /* blocks taken and given back before the workers */
};

struct aba {
	pool_t *pool;    /* the pool under test, or */
	pool_set_t *set; /* the set under test, its classes in cls[] */
	int flags;
	char what[48]; /* "8 blocks", "set 16..4096": for messages */
	struct aba_class cls[MAX_CLASSES];
	unsigned nclasses;
	_Atomic(void *) slots[SLOTS];
	uint64_t target; /* successful allocations this round */
	_Atomic uint64_t done;
	_Atomic uint64_t allocs, frees, enomem, passed, crossed;
	_Atomic unsigned finished; /* threads of this round that are done */
	size_t stash;              /* blocks a thread may hold, <= MAX_STASH */
};

struct aba_thread {
	struct aba *a;
	uint32_t serial;
	uint64_t rng;
	uint64_t next;
	void *stash[MAX_STASH];
};

/* ------------------------------------------------------------ calls */

static void *aba_alloc(struct aba *a, size_t size, bool zeroed)
{
	if (a->set)
		return zeroed ? pool_set_calloc(a->set, 1, size)
		              : pool_set_malloc(a->set, size);
	return zeroed ? pool_calloc(a->pool, 1, size)
	              : pool_malloc(a->pool, size);
}

static void aba_free(struct aba *a, void *p)
{
	if (a->set)
		pool_set_free(a->set, p);
	else
		pool_free(a->pool, p);
}

static pool_stats_t class_stats(struct aba *a, const struct aba_class *c)
{
	pool_stats_t st;
	int rc = a->set ? pool_set_stats(a->set, c->block_size, &st)
	                : pool_stats(a->pool, &st);
	CHECK(rc == 0, "%s, %s: stats of the %zu B class: %s",
	      mode_name(a->flags), a->what, c->block_size, strerror(errno));
	return st;
}

/* ------------------------------------------------------------ blocks */

/* The class p is a block of, and its index there in *index, from the
 * address alone: a pointer in no region, or not at a block's start,
 * fails. */
static struct aba_class *class_of(struct aba *a, const void *p, size_t *index)
{
	uintptr_t u = (uintptr_t)p;
	if (a->pool)
		CHECK(pool_owns(a->pool, p), "%p is not a block of the pool",
		      p);
	for (unsigned k = 0; k < a->nclasses; k++) {
		struct aba_class *c = &a->cls[k];
		if (u < c->base || u - c->base >= c->count * c->block_size)
			continue;
		CHECK((u - c->base) % c->block_size == 0,
		      "%s, %s: %p is inside a block of the %zu B class, not "
		      "at its start",
		      mode_name(a->flags), a->what, p, c->block_size);
		*index = (u - c->base) / c->block_size;
		return c;
	}
	failf(__FILE__, __LINE__, "block outside the regions",
	      "%s, %s: %p is in no region", mode_name(a->flags), a->what, p);
}

/* Checks that p, block index of c, still carries stamp in its words and in
 * the table. */
static void verify(struct aba *a, struct aba_class *c, size_t index,
                   const void *p, uint64_t stamp)
{
	const uint64_t *w = p;
	for (size_t i = 0; i < c->words; i++)
		CHECK(w[i] == stamp,
		      "%s, %s: %zu B block %zu (%p) word %zu is %#" PRIx64
		      ", its owner wrote %#" PRIx64 ": a second owner",
		      mode_name(a->flags), a->what, c->block_size, index, p, i,
		      w[i], stamp);
	uint64_t held =
	    atomic_load_explicit(&c->owner[index], memory_order_acquire);
	CHECK(held == stamp,
	      "%s, %s: %zu B block %zu (%p) held by %#" PRIx64
	      " in the table, its owner is %#" PRIx64,
	      mode_name(a->flags), a->what, c->block_size, index, p, held,
	      stamp);
}

static void give_back(struct aba *a, struct aba_thread *t, void *p)
{
	size_t index;
	struct aba_class *c = class_of(a, p, &index);
	uint64_t stamp = *(uint64_t *)p;
	verify(a, c, index, p, stamp);
	if ((uint32_t)(stamp >> 32) != t->serial)
		atomic_fetch_add_explicit(&a->crossed, 1, memory_order_relaxed);
	uint64_t expected;
	/* Released in the table before the pool may hand it out again. */
	CHECK(owner_release(&c->owner[index], stamp, &expected),
	      "%zu B block %zu: table changed under its owner (%#" PRIx64 ")",
	      c->block_size, index, expected);
	aba_free(a, p);
	atomic_fetch_add_explicit(&c->frees, 1, memory_order_relaxed);
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

/* ------------------------------------------------------------ workers */

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
		/* A class, and a size within it (a pool has one class and
		 * one size: no draw). */
		uint64_t pick = a->nclasses > 1 ? rnd(&t->rng) : 0;
		struct aba_class *want = &a->cls[pick % a->nclasses];
		size_t size = want->min_size +
		              (size_t)(pick >> 32) %
		                  (want->block_size - want->min_size + 1);
		errno = 0;
		void *p = aba_alloc(a, size, zeroed);
		if (p == NULL) {
			CHECK(errno == ENOMEM,
			      "empty %zu B class: errno %d, not ENOMEM",
			      want->block_size, errno);
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
		size_t index;
		struct aba_class *c = class_of(a, p, &index);
		CHECK(c == want,
		      "%s, %s: %zu bytes served by the %zu B class, not the "
		      "%zu B one",
		      mode_name(a->flags), a->what, size, c->block_size,
		      want->block_size);
		uint64_t stamp = (uint64_t)t->serial << 32 | ++t->next;
		uint64_t expected;
		if (!owner_take(&c->owner[index], stamp, &expected))
			failf(__FILE__, __LINE__, "block handed out twice",
			      "%s, %s: %zu B block %zu (%p) handed to "
			      "%#" PRIx64 " while %#" PRIx64 " holds it",
			      mode_name(a->flags), a->what, c->block_size,
			      index, p, stamp, expected);
		atomic_fetch_add_explicit(&c->allocs, 1, memory_order_relaxed);
		allocs++;
		uint64_t *w = p;
		size_t words = size / sizeof *w;
		if (zeroed)
			for (size_t i = 0; i < words; i++)
				CHECK(w[i] == 0,
				      "calloc: %zu B block %zu word %zu is "
				      "%#" PRIx64,
				      c->block_size, index, i, w[i]);
		for (size_t i = 0; i < words; i++)
			w[i] = stamp;
		/* Hold it a little, sometimes, and look again. */
		if ((r >> 8 & 15) == 0) {
			for (volatile int spin = 0; spin < 50; spin++)
				;
		}
		verify(a, c, index, p, stamp);

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

/* ------------------------------------------------------------ capacity */

/* Takes count blocks of c from this thread, asking for its smallest and
 * its largest size in turn (a size sent to another class finds no block
 * there), each one served, then one more request must fail with ENOMEM.
 * Returns them in a malloc()ed array. */
static void **take_class(struct aba *a, struct aba_class *c, size_t count,
                         const char *when)
{
	void **blocks = calloc(count, sizeof *blocks);
	CHECK(blocks != NULL, "out of memory");
	for (size_t i = 0; i < count; i++) {
		size_t size = i % 2 ? c->min_size : c->block_size;
		blocks[i] = aba_alloc(a, size, false);
		CHECK(blocks[i] != NULL,
		      "%s, %s, %s: only %zu of %zu blocks of %zu B could be "
		      "had (asking for %zu bytes): %s",
		      mode_name(a->flags), a->what, when, i, count,
		      c->block_size, size, strerror(errno));
	}
	errno = 0;
	void *beyond = aba_alloc(a, c->block_size, false);
	CHECK(beyond == NULL && errno == ENOMEM,
	      "%s, %s, %s: a %zu B block beyond the %zu (errno %d)",
	      mode_name(a->flags), a->what, when, c->block_size, count, errno);
	return blocks;
}

static int compare_pointers(const void *x, const void *y)
{
	uintptr_t a = (uintptr_t) * (void *const *)x;
	uintptr_t b = (uintptr_t) * (void *const *)y;
	return (a > b) - (a < b);
}

/* The regions: every block of every class, taken on a thread of its own
 * so that in POOL_PER_THREAD mode the main thread holds no span while the
 * workers run (with one span it would starve them all). */
static void *find_regions(void *arg)
{
	struct aba *a = arg;
	for (unsigned k = 0; k < a->nclasses; k++) {
		struct aba_class *c = &a->cls[k];
		size_t count = class_stats(a, c).block_count;
		CHECK(count > 0 && (a->set || count == c->count),
		      "%s, %s: pool_stats() says %zu blocks of %zu B",
		      mode_name(a->flags), a->what, count, c->block_size);
		void **blocks = take_class(a, c, count, "at the start");
		qsort(blocks, count, sizeof *blocks, compare_pointers);
		uintptr_t base = (uintptr_t)blocks[0];
		for (size_t i = 0; i < count; i++)
			CHECK((uintptr_t)blocks[i] == base + i * c->block_size,
			      "%s, %s: the %zu blocks of %zu B are no "
			      "contiguous run (block %zu at %p, the first at "
			      "%#" PRIxPTR ")",
			      mode_name(a->flags), a->what, count,
			      c->block_size, i, blocks[i], base);
		for (size_t i = 0; i < count; i++)
			aba_free(a, blocks[i]);
		free(blocks);
		c->base = base;
		c->count = count;
		c->probes = count;
		c->owner = calloc(count, sizeof *c->owner);
		CHECK(c->owner != NULL, "out of memory");
	}
	return NULL;
}

/* Takes every block from this thread: each of its class, distinct, then
 * ENOMEM. */
static void check_capacity(struct aba *a)
{
	uint32_t serial = next_serial();
	for (unsigned k = 0; k < a->nclasses; k++) {
		struct aba_class *c = &a->cls[k];
		void **blocks = take_class(a, c, c->count, "at the end");
		for (size_t i = 0; i < c->count; i++) {
			size_t index;
			CHECK(class_of(a, blocks[i], &index) == c,
			      "a %zu B request served by another class",
			      c->block_size);
			uint64_t expected,
			    stamp = (uint64_t)serial << 32 | (i + 1);
			CHECK(owner_take(&c->owner[index], stamp, &expected),
			      "%zu B block %zu handed out twice at the end",
			      c->block_size, index);
		}
		for (size_t i = 0; i < c->count; i++) {
			size_t index;
			class_of(a, blocks[i], &index);
			atomic_store(&c->owner[index], 0);
			aba_free(a, blocks[i]);
		}
		free(blocks);
	}
}

/* ------------------------------------------------------------ rounds */

/* Blocks held by the test's table, over every class.  Exact at
 * quiescence. */
static size_t table_live(struct aba *a)
{
	size_t live = 0;
	for (unsigned k = 0; k < a->nclasses; k++)
		live += owner_live(a->cls[k].owner, a->cls[k].count);
	return live;
}

/* in_use over every class. */
static size_t pool_in_use(struct aba *a)
{
	size_t in_use = 0;
	for (unsigned k = 0; k < a->nclasses; k++)
		in_use += class_stats(a, &a->cls[k]).in_use;
	return in_use;
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
			failf(__FILE__, __LINE__, "no progress",
			      "%s, %s, round %u: no block allocated or "
			      "freed for %u s (in_use %zu, test holds %zu of "
			      "them): capacity is stranded",
			      mode_name(a->flags), a->what, round,
			      stall_seconds, pool_in_use(a), table_live(a));
		}
	}
	atomic_store(&a->finished, 0);
}

/* Runs the rounds of threads over a, whose pool or set and classes are
 * made, and checks the counters after each and at the end. */
static void run(struct aba *a, unsigned nthreads, unsigned rounds,
                uint64_t cycles, uint64_t seed)
{
	{
		pthread_t probe;
		int rc = pthread_create(&probe, NULL, find_regions, a);
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
		for (unsigned k = 0; k < a->nclasses; k++) {
			struct aba_class *c = &a->cls[k];
			size_t in_use = class_stats(a, c).in_use;
			size_t held = owner_live(c->owner, c->count);
			CHECK(in_use == held,
			      "%s, %s, after round %u: %zu B class in_use "
			      "%zu, the test holds %zu",
			      mode_name(a->flags), a->what, round,
			      c->block_size, in_use, held);
		}
	}
	double t1 = now();

	/* Free what is still in transit. */
	struct aba_thread main_t = {.a = a, .serial = 0};
	for (size_t k = 0; k < SLOTS; k++) {
		void *p = atomic_exchange(&a->slots[k], NULL);
		if (p)
			give_back(a, &main_t, p);
	}
	uint64_t total = 0;
	for (unsigned k = 0; k < a->nclasses; k++) {
		struct aba_class *c = &a->cls[k];
		pool_stats_t st = class_stats(a, c);
		uint64_t allocs = atomic_load(&c->allocs) + c->probes;
		uint64_t frees = atomic_load(&c->frees) + c->probes;
		CHECK(st.in_use == 0 && st.allocs == allocs &&
		          st.frees == frees && st.fallback_allocs == 0 &&
		          st.fallback_frees == 0,
		      "%s, %s, %zu B class: in_use %zu, allocs %" PRIu64
		      " (test %" PRIu64 "), frees %" PRIu64 " (test %" PRIu64
		      "), fallback %" PRIu64 "/%" PRIu64,
		      mode_name(a->flags), a->what, c->block_size, st.in_use,
		      st.allocs, allocs, st.frees, frees, st.fallback_allocs,
		      st.fallback_frees);
		total += atomic_load(&c->allocs);
	}
	CHECK(total == atomic_load(&a->allocs),
	      "%s, %s: the classes counted %" PRIu64 " allocations, the "
	      "threads %" PRIu64,
	      mode_name(a->flags), a->what, total, atomic_load(&a->allocs));
	check_capacity(a);

	printf("aba %-10s %-18s threads=%-2u hold=%-2zu rounds=%u "
	       "cycles=%-8" PRIu64 " passed=%-8" PRIu64 " crossed=%-8" PRIu64
	       " enomem=%-9" PRIu64 " double hand-outs=0 %.2fs OK\n",
	       mode_name(a->flags), a->what, nthreads, a->stash, rounds,
	       atomic_load(&a->allocs), atomic_load(&a->passed),
	       atomic_load(&a->crossed), atomic_load(&a->enomem), t1 - t0);
	fflush(stdout);
	free(th);
	free(ts);
}

static size_t opt_stash; /* 0: by pool size */

static void aba_free_all(struct aba *a)
{
	for (unsigned k = 0; k < a->nclasses; k++)
		free(a->cls[k].owner);
	free(a);
}

/* The pools part: one pool of count blocks. */
static void run_pool(int flags, size_t count, unsigned nthreads,
                     unsigned rounds, uint64_t cycles, uint64_t seed)
{
	struct aba *a = calloc(1, sizeof *a);
	CHECK(a != NULL, "out of memory");
	a->flags = flags | POOL_NO_FALLBACK;
	snprintf(a->what, sizeof a->what, "blocks=%zu", count);
	a->stash = opt_stash ? opt_stash : count >= 64 ? 16 : 4;
	a->pool = pool_init(BLOCK_SIZE, count, a->flags);
	CHECK(a->pool != NULL, "pool_init: %s", strerror(errno));
	CHECK(pool_block_size(a->pool) == BLOCK_SIZE, "block size %zu",
	      pool_block_size(a->pool));
	a->nclasses = 1;
	a->cls[0] = (struct aba_class){.block_size = BLOCK_SIZE,
	                               .min_size = BLOCK_SIZE,
	                               .words = BLOCK_SIZE / sizeof(uint64_t),
	                               .count = count};
	run(a, nthreads, rounds, cycles, seed);
	pool_destroy(a->pool);
	aba_free_all(a);
}

/* The set part: every class SET_MIN..SET_MAX, few blocks each. */
static void run_set(int flags, unsigned nthreads, unsigned rounds,
                    uint64_t cycles, uint64_t seed)
{
	struct aba *a = calloc(1, sizeof *a);
	CHECK(a != NULL, "out of memory");
	a->flags = flags | POOL_NO_FALLBACK;
	snprintf(a->what, sizeof a->what, "set=%zu..%zu", (size_t)SET_MIN,
	         (size_t)SET_MAX);
	a->stash = opt_stash ? opt_stash : SET_STASH;
	a->set = pool_set_init(SET_MIN, SET_MAX, SET_BYTES, a->flags);
	CHECK(a->set != NULL, "pool_set_init: %s", strerror(errno));
	for (size_t size = SET_MIN; size <= SET_MAX; size *= 2) {
		CHECK(a->nclasses < MAX_CLASSES, "too many classes");
		/* Sizes above half the block (the smallest class: above
		 * 8, so that a request holds a word). */
		size_t min_size = size / 2 + 1;
		if (min_size < sizeof(uint64_t))
			min_size = sizeof(uint64_t);
		a->cls[a->nclasses++] =
		    (struct aba_class){.block_size = size,
		                       .min_size = min_size,
		                       .words = min_size / sizeof(uint64_t)};
	}
	run(a, nthreads, rounds, cycles, seed);
	pool_set_destroy(a->set);
	aba_free_all(a);
}

/* ------------------------------------------------------------ main */

static void usage(const char *argv0)
{
	fprintf(stderr,
	        "usage: %s [--long] [--mode=locked|per-thread] "
	        "[--only=pools,set] [--threads=N]\n"
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
	const char *only = NULL;

	preempt_us = PREEMPT_DEFAULT_US(200);
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		if (common_option(s, &long_run, modes, &nmodes))
			continue;
		if (strncmp(s, "--threads=", 10) == 0)
			nthreads = (unsigned)strtoul(s + 10, NULL, 10);
		else if (strncmp(s, "--only=", 7) == 0) {
			only = s + 7;
			if (!only_selected(only, "pools") &&
			    !only_selected(only, "set"))
				usage(argv[0]);
		} else if (strncmp(s, "--blocks=", 9) == 0) {
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
	for (int m = 0; m < nmodes; m++) {
		if (only_selected(only, "pools")) {
			concurrency_part = "pools";
			for (int c = 0; c < ncounts; c++)
				run_pool(modes[m], counts[c], nthreads, rounds,
				         cycles, seed);
		}
		if (only_selected(only, "set")) {
			concurrency_part = "set";
			run_set(modes[m], nthreads, rounds, SET_WORK * cycles,
			        seed);
		}
	}
	concurrency_done(t0);
	return 0;
}
