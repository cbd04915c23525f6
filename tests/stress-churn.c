/*
 * The churn part: thousands of threads created and joined, in batches of
 * CHURN_BATCH, each allocating 1 to CHURN_MAX blocks: some it frees
 * itself, some it leaves to the main thread (freed after it exited), some
 * it swaps into a pending array (to be freed by a later thread, into a
 * span whose owner is gone).  Then nothing leaks and the whole capacity
 * is usable.
 *
 * The pool has CHURN_BLOCKS blocks and POOL_NO_FALLBACK.  At any moment at
 * most CHURN_BATCH * CHURN_MAX blocks are held by running threads, as many
 * wait for the main thread, CHURN_PENDING wait in the pending array, and
 * in POOL_PER_THREAD mode at most one span per live thread (and the main
 * thread) holds free blocks nobody else can take: far below CHURN_BLOCKS.
 * So any ENOMEM means thread exit stranded capacity.
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

#define CHURN_BATCH   8
#define CHURN_MAX     8
#define CHURN_PENDING 64
#define CHURN_BLOCKS  1024

struct churn {
	struct tracked tr;
	_Atomic(void *) pending[CHURN_PENDING];
	_Atomic uint64_t allocs, frees;
};

struct churn_thread {
	struct churn *c;
	uint32_t serial;
	uint64_t rng;
	void *out[CHURN_MAX]; /* for the main thread to free */
	size_t nout;
};

/* A block carries its id and the seed the id was made from. */
static void churn_free(struct churn *c, void *p)
{
	uint64_t id = *(uint64_t *)p;
	CHECK(id == mix64(*((uint64_t *)p + 1)),
	      "churn: block %p overwritten (%#" PRIx64 ")", p, id);
	track_free(&c->tr, p, id);
	pool_free(c->tr.pool, p);
	atomic_fetch_add_explicit(&c->frees, 1, memory_order_relaxed);
}

/* Block i of the thread; the pool can never run out. */
static void *churn_alloc(struct churn_thread *t, size_t i)
{
	struct churn *c = t->c;
	errno = 0;
	void *p = pool_malloc(c->tr.pool, c->tr.block_size);
	CHECK(p != NULL,
	      "churn (%s): thread %" PRIu32 " got ENOMEM (%s) with "
	      "%zu blocks: capacity stranded by exited threads",
	      mode_name(c->tr.flags), t->serial, strerror(errno),
	      c->tr.block_count);
	uint64_t seed = (uint64_t)t->serial << 32 | (i + 1);
	uint64_t id = mix64(seed);
	CHECK(track_alloc(&c->tr, p, id), "churn: %p not a block", p);
	((uint64_t *)p)[0] = id;
	((uint64_t *)p)[1] = seed;
	atomic_fetch_add_explicit(&c->allocs, 1, memory_order_relaxed);
	return p;
}

/* Frees p now, leaves it to the main thread, or to a later thread. */
static void churn_pass_on(struct churn_thread *t, void *p)
{
	struct churn *c = t->c;
	switch (rnd(&t->rng) % 3) {
	case 0:
		churn_free(c, p);
		break;
	case 1:
		t->out[t->nout++] = p;
		break;
	default: {
		size_t j = (size_t)(rnd(&t->rng) % CHURN_PENDING);
		void *old = atomic_exchange_explicit(&c->pending[j], p,
		                                     memory_order_acq_rel);
		if (old)
			churn_free(c, old);
	}
	}
}

static void *churn_thread_fn(void *arg)
{
	struct churn_thread *t = arg;
	void *mine[CHURN_MAX];
	size_t n = 1 + (size_t)(rnd(&t->rng) % CHURN_MAX);

	for (size_t i = 0; i < n; i++)
		mine[i] = churn_alloc(t, i);
	t->nout = 0;
	for (size_t i = 0; i < n; i++)
		churn_pass_on(t, mine[i]);
	return NULL;
}

/* batch threads come and go; then the main thread frees what they left
 * it. */
static void churn_batch(struct churn *c, unsigned batch, uint64_t seed)
{
	struct churn_thread ts[CHURN_BATCH];
	pthread_t th[CHURN_BATCH];
	for (unsigned i = 0; i < batch; i++) {
		memset(&ts[i], 0, sizeof ts[i]);
		ts[i].c = c;
		ts[i].serial = next_serial();
		ts[i].rng = mix64(seed ^ ts[i].serial);
	}
	start_threads(th, batch, churn_thread_fn, ts, sizeof *ts);
	join_threads(th, batch);
	for (unsigned i = 0; i < batch; i++)
		for (size_t k = 0; k < ts[i].nout; k++)
			churn_free(c, ts[i].out[k]);
}

static void churn_drain_pending(struct churn *c)
{
	for (size_t j = 0; j < CHURN_PENDING; j++) {
		void *p = atomic_exchange(&c->pending[j], NULL);
		if (p)
			churn_free(c, p);
	}
}

/* Nothing in use, nothing from the fallback, every count even. */
static void churn_check_end(struct churn *c)
{
	pool_stats_t st = stats_of(c->tr.pool);
	uint64_t allocs = atomic_load(&c->allocs),
	         frees = atomic_load(&c->frees);
	CHECK(st.in_use == 0 && st.allocs == allocs && st.frees == frees &&
	          allocs == frees,
	      "churn (%s): in_use %zu, pool allocs %" PRIu64 " frees %" PRIu64
	      ", test allocs %" PRIu64 " frees %" PRIu64,
	      mode_name(c->tr.flags), st.in_use, st.allocs, st.frees, allocs,
	      frees);
	CHECK(st.fallback_allocs == 0 && st.fallback_frees == 0,
	      "churn: fallback used under POOL_NO_FALLBACK");
	CHECK(owner_live(c->tr.owner, c->tr.block_count) == 0,
	      "churn: blocks still held");
	check_whole_capacity(&c->tr, "churn, at the end");
}

void part_churn(const struct stress_options *o, int mode)
{
	struct churn *c = calloc(1, sizeof *c);
	CHECK(c != NULL, "out of memory");
	tracked_init(&c->tr, 0, 32, CHURN_BLOCKS, mode | POOL_NO_FALLBACK);
	double t0 = now();
	for (unsigned done = 0; done < o->cycles; done += CHURN_BATCH)
		churn_batch(c,
		            o->cycles - done < CHURN_BATCH ? o->cycles - done
		                                           : CHURN_BATCH,
		            o->seed);
	churn_drain_pending(c);
	double t1 = now();
	churn_check_end(c);
	printf("churn     %-21s threads=%u created and joined (batches of %d), "
	       "blocks=%" PRIu64 " %.2fs OK\n",
	       mode_name(mode), o->cycles, CHURN_BATCH, atomic_load(&c->allocs),
	       t1 - t0);
	fflush(stdout);
	tracked_destroy(&c->tr);
	free(c);
}
