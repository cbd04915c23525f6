/*
 * The set part: a pool set under threads.  SET_THREADS threads, rounds in
 * which they all start and exit, each step allocating an object of a
 * random size (every class of the set alike, and above the largest, so
 * the fallback too), writing its id over it, and swapping it into a shared
 * array: what comes out, allocated by any thread in any class, is checked
 * and freed with pool_set_free().  Classes run out now and then (small
 * slices), so exhausted classes fall back while others serve.  At the
 * end every class is empty and the counters agree with what the test did.
 *
 * SPDX-License-Identifier: MIT
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shiftpool.h"
#include "concurrency.h"
#include "stress.h"

#define SET_THREADS 4
#define SET_SLOTS   4096
#define SET_MIN     16
#define SET_MAX     4096
#define SET_SLICE   ((size_t)256 << 10)

struct set_run {
	pool_set_t *set;
	int mode;
	size_t steps;
	_Atomic(void *) slots[SET_SLOTS];
	_Atomic uint64_t made, freed;
};

struct set_thread {
	struct set_run *r;
	uint32_t serial;
	uint64_t rng;
};

/* A size for every class alike (and above the largest): a power of two
 * from SET_MIN to 2 * SET_MAX, then a size within it. */
static size_t object_size(struct set_thread *t)
{
	uint64_t r = rnd(&t->rng);
	size_t top = (size_t)SET_MIN << (r % 10);
	return top / 2 + 1 + (size_t)((r >> 8) % (top / 2));
}

/* An object: its size in word 0, its id in every other word it has. */
static void *object_new(struct set_thread *t, uint64_t id)
{
	size_t size = object_size(t);
	uint64_t *p = pool_set_malloc(t->r->set, size);
	CHECK(p != NULL, "set (%s): no memory for %zu bytes",
	      mode_name(t->r->mode), size);
	p[0] = size;
	for (size_t w = 1; w < size / sizeof *p; w++)
		p[w] = id;
	atomic_fetch_add_explicit(&t->r->made, 1, memory_order_relaxed);
	return p;
}

static void object_free(struct set_run *r, uint64_t *p)
{
	size_t size = (size_t)p[0];
	CHECK(size > SET_MIN / 2 && size <= 2 * SET_MAX,
	      "set (%s): object %p has a size word %zu: overwritten",
	      mode_name(r->mode), (void *)p, size);
	for (size_t w = 2; w < size / sizeof *p; w++)
		CHECK(p[w] == p[1],
		      "set (%s): object %p of %zu bytes, word %zu is %#" PRIx64
		      " and word 1 %#" PRIx64 ": two owners",
		      mode_name(r->mode), (void *)p, size, w, p[w], p[1]);
	pool_set_free(r->set, p);
	atomic_fetch_add_explicit(&r->freed, 1, memory_order_relaxed);
}

static void *set_thread_fn(void *arg)
{
	struct set_thread *t = arg;
	struct set_run *r = t->r;
	for (size_t s = 0; s < r->steps; s++) {
		uint64_t id = (uint64_t)t->serial << 32 | s;
		void *p = object_new(t, id);
		size_t j = (size_t)(rnd(&t->rng) % SET_SLOTS);
		void *old = atomic_exchange_explicit(&r->slots[j], p,
		                                     memory_order_acq_rel);
		if (old != NULL)
			object_free(r, old);
	}
	return NULL;
}

void part_set(const struct stress_options *o, int mode)
{
	struct set_run *r = calloc(1, sizeof *r);
	CHECK(r != NULL, "out of memory");
	r->set = pool_set_init(SET_MIN, SET_MAX, SET_SLICE, mode);
	CHECK(r->set != NULL, "pool_set_init");
	r->mode = mode;
	r->steps = o->long_run ? 200000 : SANITIZED ? 5000 : 30000;
	double t0 = now();
	for (unsigned round = 0; round < o->rounds; round++) {
		struct set_thread ts[SET_THREADS];
		pthread_t th[SET_THREADS];
		for (unsigned i = 0; i < SET_THREADS; i++) {
			ts[i].r = r;
			ts[i].serial = next_serial();
			ts[i].rng = mix64(o->seed ^ ts[i].serial);
		}
		start_threads(th, SET_THREADS, set_thread_fn, ts, sizeof *ts);
		join_threads(th, SET_THREADS);
	}
	for (size_t j = 0; j < SET_SLOTS; j++) {
		void *p = atomic_exchange(&r->slots[j], NULL);
		if (p != NULL)
			object_free(r, p);
	}
	double t1 = now();
	pool_stats_t st;
	CHECK(pool_set_stats(r->set, 0, &st) == 0, "pool_set_stats");
	uint64_t made = atomic_load(&r->made), freed = atomic_load(&r->freed);
	CHECK(st.in_use == 0 && made == freed &&
	          st.allocs + st.fallback_allocs == made &&
	          st.frees + st.fallback_frees == freed,
	      "set (%s): in_use %zu, set allocs %" PRIu64 " + fallback %" PRIu64
	      ", frees %" PRIu64 " + fallback %" PRIu64
	      "; the test made %" PRIu64 " and freed %" PRIu64,
	      mode_name(mode), st.in_use, st.allocs, st.fallback_allocs,
	      st.frees, st.fallback_frees, made, freed);
	printf("set       %-21s threads=%d rounds=%u objects=%" PRIu64
	       " classes served %" PRIu64 ", fallback %" PRIu64 " %.2fs OK\n",
	       mode_name(mode), SET_THREADS, o->rounds, made, st.allocs,
	       st.fallback_allocs, t1 - t0);
	fflush(stdout);
	pool_set_destroy(r->set);
	free(r);
}
