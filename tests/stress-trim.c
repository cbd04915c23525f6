/*
 * The trim part: pool_trim() racing with threads that allocate and free.
 * Rounds of TRIM_THREADS threads, each taking bursts of 1 to TRIM_BURST
 * blocks (whole pages of them at a time, so pages fall free all the
 * while), writing its id into every word of each, checking them all and
 * freeing them, a quarter through another thread (a cross-thread free);
 * the threads exit at the end of each round, so in POOL_PER_THREAD mode
 * their spans come back to the pool.  Meanwhile a trimmer calls
 * pool_trim() without pause, and each thread calls it now and then
 * between its bursts (giving up its own spans in POOL_PER_THREAD mode).
 * A trim that gave back a page holding a live block would zero it under
 * its owner: the check after the burst finds it.  At the end nothing is
 * in use, the counts agree, the pool gave something back (a trim after
 * the run at the latest), and one thread can take every block again, each
 * handed out once.
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shiftpool.h"
#include "concurrency.h"
#include "stress.h"

#define TRIM_THREADS 3
#define TRIM_BURST   256
#define TRIM_BLOCKS  4096
#define TRIM_BLOCK   1024
#define TRIM_PASSED  64 /* slots through which threads free each other's */

struct trim_run {
	struct tracked tr;
	size_t bursts; /* per thread per round */
	_Atomic(void *) passed[TRIM_PASSED];
	_Atomic uint64_t allocs, frees, trimmed;
	_Atomic bool stop;
};

struct trim_thread {
	struct trim_run *r;
	uint32_t serial;
	uint64_t rng;
};

static void fill(void *p, uint64_t id)
{
	for (size_t w = 0; w < TRIM_BLOCK / sizeof(uint64_t); w++)
		((uint64_t *)p)[w] = id;
}

/* Checks the block still holds its id everywhere, and frees it. */
static void trim_free(struct trim_run *r, void *p)
{
	uint64_t id = *(uint64_t *)p;
	for (size_t w = 1; w < TRIM_BLOCK / sizeof(uint64_t); w++)
		CHECK(((uint64_t *)p)[w] == id,
		      "trim (%s): block %p word %zu is %#" PRIx64
		      ", expected %#" PRIx64 ": its page was given back while "
		      "in use",
		      mode_name(r->tr.flags), p, w, ((uint64_t *)p)[w], id);
	CHECK(id != 0, "trim (%s): block %p zeroed while in use",
	      mode_name(r->tr.flags), p);
	track_free(&r->tr, p, id);
	pool_free(r->tr.pool, p);
	atomic_fetch_add_explicit(&r->frees, 1, memory_order_relaxed);
}

static void burst(struct trim_thread *t, uint32_t number)
{
	struct trim_run *r = t->r;
	void *mine[TRIM_BURST];
	size_t n = 1 + (size_t)(rnd(&t->rng) % TRIM_BURST);

	for (size_t i = 0; i < n; i++) {
		errno = 0;
		mine[i] = pool_malloc(r->tr.pool, TRIM_BLOCK);
		CHECK(mine[i] != NULL, "trim (%s): ENOMEM (%s) with %d blocks",
		      mode_name(r->tr.flags), strerror(errno), TRIM_BLOCKS);
		uint64_t id = (uint64_t)t->serial << 32 | number << 9 | i;
		CHECK(track_alloc(&r->tr, mine[i], id),
		      "trim: %p is not a block", mine[i]);
		fill(mine[i], id);
		atomic_fetch_add_explicit(&r->allocs, 1, memory_order_relaxed);
	}
	for (size_t i = 0; i < n; i++) {
		if (rnd(&t->rng) % 4 != 0) {
			trim_free(r, mine[i]);
			continue;
		}
		size_t j = (size_t)(rnd(&t->rng) % TRIM_PASSED);
		void *old = atomic_exchange_explicit(&r->passed[j], mine[i],
		                                     memory_order_acq_rel);
		if (old != NULL)
			trim_free(r, old);
	}
}

/* Every TRIM_OWN_EVERY bursts a thread trims too: in POOL_PER_THREAD
 * mode it then gives up its own spans while the others free into them. */
#define TRIM_OWN_EVERY 8

static void *trim_thread_fn(void *arg)
{
	struct trim_thread *t = arg;
	for (size_t b = 0; b < t->r->bursts; b++) {
		burst(t, (uint32_t)b);
		if (b % TRIM_OWN_EVERY == TRIM_OWN_EVERY - 1)
			atomic_fetch_add_explicit(&t->r->trimmed,
			                          pool_trim(t->r->tr.pool),
			                          memory_order_relaxed);
	}
	return NULL;
}

static void *trimmer_fn(void *arg)
{
	struct trim_run *r = arg;
	while (!atomic_load_explicit(&r->stop, memory_order_acquire))
		atomic_fetch_add_explicit(&r->trimmed, pool_trim(r->tr.pool),
		                          memory_order_relaxed);
	return NULL;
}

static void trim_round(struct trim_run *r, uint64_t seed)
{
	struct trim_thread ts[TRIM_THREADS];
	pthread_t th[TRIM_THREADS];
	for (unsigned i = 0; i < TRIM_THREADS; i++) {
		ts[i].r = r;
		ts[i].serial = next_serial();
		ts[i].rng = mix64(seed ^ ts[i].serial);
	}
	start_threads(th, TRIM_THREADS, trim_thread_fn, ts, sizeof *ts);
	join_threads(th, TRIM_THREADS);
}

static void trim_check_end(struct trim_run *r)
{
	pool_stats_t st = stats_of(r->tr.pool);
	uint64_t allocs = atomic_load(&r->allocs),
	         frees = atomic_load(&r->frees);
	CHECK(st.in_use == 0 && st.allocs == allocs && st.frees == frees &&
	          allocs == frees,
	      "trim (%s): in_use %zu, pool allocs %" PRIu64 " frees %" PRIu64
	      ", test allocs %" PRIu64 " frees %" PRIu64,
	      mode_name(r->tr.flags), st.in_use, st.allocs, st.frees, allocs,
	      frees);
	CHECK(st.fallback_allocs == 0, "trim: fallback under POOL_NO_FALLBACK");
	CHECK(atomic_load(&r->trimmed) > 0,
	      "trim (%s): no trim gave anything back, not even one after the "
	      "run, with every block free",
	      mode_name(r->tr.flags));
	check_whole_capacity(&r->tr, "trim, at the end");
}

void part_trim(const struct stress_options *o, int mode)
{
	struct trim_run *r = calloc(1, sizeof *r);
	CHECK(r != NULL, "out of memory");
	tracked_init(&r->tr, 0, TRIM_BLOCK, TRIM_BLOCKS,
	             mode | POOL_NO_FALLBACK);
	r->bursts = o->long_run ? 2000 : SANITIZED ? 50 : 200;
	pthread_t trimmer;
	double t0 = now();
	start_thread(&trimmer, trimmer_fn, r);
	for (unsigned round = 0; round < o->rounds; round++)
		trim_round(r, o->seed + round);
	atomic_store_explicit(&r->stop, true, memory_order_release);
	join_thread(trimmer);
	for (size_t j = 0; j < TRIM_PASSED; j++) {
		void *p = atomic_exchange(&r->passed[j], NULL);
		if (p != NULL)
			trim_free(r, p);
	}
	uint64_t during = atomic_load(&r->trimmed);
	atomic_fetch_add(&r->trimmed, pool_trim(r->tr.pool));
	double t1 = now();
	trim_check_end(r);
	printf("trim      %-21s threads=%d rounds=%u blocks=%" PRIu64
	       " trimmed=%" PRIu64 "KiB while running, %" PRIu64
	       "KiB after %.2fs OK\n",
	       mode_name(mode), TRIM_THREADS, o->rounds,
	       atomic_load(&r->allocs), during >> 10,
	       (atomic_load(&r->trimmed) - during) >> 10, t1 - t0);
	fflush(stdout);
	tracked_destroy(&r->tr);
	free(r);
}
