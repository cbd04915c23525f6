/*
 * The destroy part: pool_destroy() while threads that used the
 * POOL_PER_THREAD pool are still alive (each holding an active span, live
 * blocks and a live fallback allocation).  Then, by repetition: the
 * threads just exit; or each makes, uses and destroys a pool of its own
 * before exiting; or all use a new shared pool (often at the destroyed
 * one's address), which must work and count only its own traffic.  Run it
 * under ASan/LSan and TSan.
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

#define DESTROY_THREADS 8
#define DESTROY_SHARED  16

/* What the threads do once the pool is gone. */
enum destroy_variant { JUST_EXIT, OWN_POOL, NEXT_POOL };

struct destroy_run {
	pool_t *pool;        /* the pool destroyed under the threads */
	struct tracked next; /* NEXT_POOL: the pool made afterwards */
	enum destroy_variant variant;
	pthread_barrier_t used, destroyed;
	_Atomic(void *) shared[DESTROY_SHARED];
	_Atomic uint64_t next_allocs;
};

struct destroy_thread {
	struct destroy_run *d;
	uint32_t serial;
	uint64_t rng;
};

/*
 * Uses the pool: keeps some blocks, frees some locally, some remotely.
 * 8 threads keeping about half of 64 blocks each exhaust the 256 blocks,
 * so some requests fall back; those are given back (a block kept is
 * simply lost with the pool, a malloc() would leak).  Returns a live
 * fallback allocation.
 */
static void *destroy_use(struct destroy_thread *t)
{
	struct destroy_run *d = t->d;
	for (int i = 0; i < 64; i++) {
		void *p = pool_malloc(d->pool, 64);
		CHECK(p != NULL, "destroy: pool_malloc failed");
		memset(p, (int)t->serial, 64);
		uint64_t r = rnd(&t->rng) % 4;
		if (r == 0) {
			pool_free(d->pool, p);
		} else if (r == 1) {
			p = atomic_exchange(
			    &d->shared[rnd(&t->rng) % DESTROY_SHARED], p);
			if (p)
				pool_free(d->pool, p);
		} else if (!pool_owns(d->pool, p)) {
			pool_free(d->pool, p);
		}
		/* else kept, and lost with the pool */
	}
	void *fallback = pool_malloc(d->pool, 1000);
	CHECK(fallback != NULL && !pool_owns(d->pool, fallback),
	      "destroy: fallback allocation");
	memset(fallback, 1, 1000);
	return fallback;
}

/* OWN_POOL: a pool of this thread's own, destroyed with blocks out. */
static void destroy_own_pool(void)
{
	pool_t *own = pool_init(64, 64, POOL_PER_THREAD);
	CHECK(own != NULL, "destroy: pool_init: %s", strerror(errno));
	void *keep[64];
	for (int i = 0; i < 64; i++) {
		keep[i] = pool_malloc(own, 64);
		CHECK(keep[i] != NULL && pool_owns(own, keep[i]),
		      "destroy: new pool, block %d of 64 not served", i);
	}
	for (int i = 0; i < 64; i += 2)
		pool_free(own, keep[i]);
	pool_stats_t st = stats_of(own);
	CHECK(st.allocs == 64 && st.frees == 32 && st.in_use == 32,
	      "destroy: new pool counts %" PRIu64 "/%" PRIu64 "/%zu", st.allocs,
	      st.frees, st.in_use);
	pool_destroy(own); /* with 32 blocks still out */
}

/* NEXT_POOL: blocks of the new shared pool, every other one kept for the
 * main thread to check and give back. */
static void destroy_use_next(struct destroy_thread *t)
{
	struct tracked *tr = &t->d->next;
	for (int i = 0; i < 32; i++) {
		void *p = pool_malloc(tr->pool, 64);
		CHECK(p != NULL, "destroy: next pool: %s", strerror(errno));
		uint64_t id = (uint64_t)t->serial << 32 | (uint64_t)(i + 1);
		bool owned = track_alloc(tr, p, id);
		if (owned)
			atomic_fetch_add(&t->d->next_allocs, 1);
		if (owned && (i & 1)) {
			track_free(tr, p, id);
			pool_free(tr->pool, p);
		}
	}
}

static void *destroy_thread_fn(void *arg)
{
	struct destroy_thread *t = arg;
	struct destroy_run *d = t->d;
	void *fallback = destroy_use(t);

	pthread_barrier_wait(&d->used);
	/* ... the main thread destroys the pool ... */
	pthread_barrier_wait(&d->destroyed);

	/* A fallback allocation outlives its pool and goes to free(). */
	free(fallback);
	if (d->variant == OWN_POOL)
		destroy_own_pool();
	else if (d->variant == NEXT_POOL)
		destroy_use_next(t);
	return NULL;
}

/* ------------------------------------------------------------ main side */

static struct destroy_run *destroy_run_new(enum destroy_variant variant)
{
	struct destroy_run *d = calloc(1, sizeof *d);
	CHECK(d != NULL, "out of memory");
	d->variant = variant;
	d->pool = pool_init(64, 256, POOL_PER_THREAD);
	CHECK(d->pool != NULL, "pool_init: %s", strerror(errno));
	pthread_barrier_init(&d->used, NULL, DESTROY_THREADS + 1);
	pthread_barrier_init(&d->destroyed, NULL, DESTROY_THREADS + 1);
	return d;
}

static void destroy_run_free(struct destroy_run *d)
{
	pthread_barrier_destroy(&d->used);
	pthread_barrier_destroy(&d->destroyed);
	free(d);
}

/* Empties the shared slots before the pool goes: a block there is lost
 * with the pool, a fallback allocation would leak. */
static void destroy_drain_shared(struct destroy_run *d)
{
	for (int i = 0; i < DESTROY_SHARED; i++) {
		void *p = atomic_exchange(&d->shared[i], NULL);
		if (p && !pool_owns(d->pool, p))
			pool_free(d->pool, p);
	}
}

/* NEXT_POOL, the threads gone: the new pool counted only their traffic;
 * the blocks they kept go back through the table. */
static void destroy_check_next(struct destroy_run *d)
{
	struct tracked *tr = &d->next;
	pool_stats_t st = stats_of(tr->pool);
	uint64_t allocs = atomic_load(&d->next_allocs);
	size_t live = owner_live(tr->owner, tr->block_count);
	CHECK(st.allocs == allocs && st.in_use == live,
	      "destroy: the next pool counts allocs %" PRIu64 " (test %" PRIu64
	      "), in_use %zu (test %zu)",
	      st.allocs, allocs, st.in_use, live);
	for (size_t i = 0; i < tr->block_count; i++) {
		uint64_t id = atomic_load(&tr->owner[i]);
		if (!id)
			continue;
		void *p = (char *)atomic_load(&tr->base) + (i << tr->shift);
		track_free(tr, p, id);
		pool_free(tr->pool, p);
	}
	check_whole_capacity(tr, "destroy, next pool");
}

static void destroy_once(enum destroy_variant variant, uint64_t seed)
{
	struct destroy_run *d = destroy_run_new(variant);
	/* The main thread is a user too. */
	void *mine = pool_malloc(d->pool, 64);
	CHECK(mine != NULL && pool_owns(d->pool, mine), "pool_malloc");
	struct destroy_thread ts[DESTROY_THREADS];
	pthread_t th[DESTROY_THREADS];
	for (int i = 0; i < DESTROY_THREADS; i++) {
		ts[i].d = d;
		ts[i].serial = next_serial();
		ts[i].rng = mix64(seed ^ ts[i].serial);
	}
	start_threads(th, DESTROY_THREADS, destroy_thread_fn, ts, sizeof *ts);
	pthread_barrier_wait(&d->used);
	destroy_drain_shared(d);
	pool_destroy(d->pool);
	d->pool = NULL;
	if (variant == NEXT_POOL)
		tracked_init(&d->next, 0, 64, 256, POOL_PER_THREAD);
	pthread_barrier_wait(&d->destroyed);
	join_threads(th, DESTROY_THREADS);
	if (variant == NEXT_POOL) {
		destroy_check_next(d);
		tracked_destroy(&d->next);
	}
	destroy_run_free(d);
}

void part_destroy(const struct stress_options *o, int mode)
{
	(void)mode;
	double t0 = now();
	for (unsigned rep = 0; rep < o->destroy_reps; rep++)
		destroy_once((enum destroy_variant)(rep % 3), o->seed);
	printf("destroy   %-21s repetitions=%u threads=%d %.2fs OK\n",
	       "per-thread", o->destroy_reps, DESTROY_THREADS, now() - t0);
	fflush(stdout);
}
