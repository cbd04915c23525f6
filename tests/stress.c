/*
 * Concurrency stress test (reliability goal 3), after the shape of
 * mimalloc's test/test-stress.c: many threads, objects crossing threads
 * through a shared array, thread churn, patterns checked at every free.
 *
 *	tests/stress [--long] [--mode=locked|per-thread] [--threads=1,2,4]
 *	             [--only=stress,churn,two-pools,destroy,misuse]
 *	             [--steps=N] [--rounds=N] [--cycles=N] [--preempt-us=N]
 *	             [--seed=N]
 *
 * Without arguments it is the short run of `make check` (a few seconds);
 * --long, or STRESS_LONG=1 in the environment, is the long sweep.  Every
 * check that fails prints what broke and aborts: no timing is asserted.
 *
 * Parts:
 *  stress     T threads, each taking random steps over its own slots and a
 *	       shared array of objects (25% of steps swap an object into the
 *	       shared array, so blocks are freed by other threads), rounds in
 *	       which every thread exits and new ones start.  Objects of random
 *	       size, some larger than a block (fallback), some from calloc
 *	       (checked zero), some moved by pool_realloc; each carries a
 *	       unique id, its size and a byte pattern made from the id, all
 *	       checked when it is freed.  A test-side table with one word per
 *	       block of the pool holds the id of the block's current owner:
 *	       an allocation must find it 0 (compare-exchange 0 -> id), a free
 *	       must find its own id there, so a block handed to two owners is
 *	       caught at the second hand-out.  At quiescence after every round
 *	       the table's live blocks equal pool_stats()'s in_use; at the end
 *	       in_use == 0, allocs == frees == what the test counted, fallback
 *	       allocs == fallback frees, and one thread can take every block
 *	       of the pool again.  Meanwhile a reader calls pool_stats()
 *	       without pause.  Each worker is interrupted by a timer every
 *	       millisecond and yields its core in the handler (--preempt-us),
 *	       so threads stop at random points even on two cores.
 *  churn      thousands of threads created and joined, each allocating a
 *	       few blocks, some freed by itself, some by later threads, some
 *	       by the main thread after it exited, from a pool that can never
 *	       run out unless thread exit strands capacity (POOL_NO_FALLBACK:
 *	       any ENOMEM fails).  Then nothing leaks and the whole capacity
 *	       is usable.
 *  two-pools  the stress with every thread using two pools at once
 *	       (per-thread + per-thread, locked + per-thread).
 *  destroy    pool_destroy() while threads that used the POOL_PER_THREAD
 *	       pool are alive; they then exit, or use a new pool (perhaps at
 *	       the same address) and exit.  Run it under ASan/LSan and TSan.
 *  misuse     POOL_PER_THREAD (and POOL_LOCKED) cross-thread double frees
 *	       with a counting error handler: (a) two threads freeing the
 *	       same blocks at the same moment, owner against remote and
 *	       remote against remote: every one reported, at once or at the
 *	       owner's next drain, no block lost or ever handed out twice
 *	       afterwards, allocs - frees off by at most the number reported;
 *	       (b) A allocates, B frees, C frees (and the variants with A or
 *	       B freeing twice): reported at once, by the second pool_free().
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
#include <unistd.h>

#include "shiftpool.h"
#include "concurrency.h"

/* ------------------------------------------------------------ objects */

/*
 * An object: word 0 its id, word 1 mix64(id) ^ (size | pool << 56), then
 * bytes 16..size-1 a pattern from the id.  Size is at least 16.
 */
#define OBJ_MIN   16
#define SIZE_BITS 56

static unsigned char pattern_byte(uint64_t h, size_t i)
{
	return (unsigned char)((h >> ((i & 7) * 8)) ^ (i >> 3) ^ 0x5a);
}

static void obj_fill(void *p, uint64_t id, size_t size, int pool_index,
                     size_t from)
{
	uint64_t *w = p;
	w[0] = id;
	w[1] = mix64(id) ^ (size | (uint64_t)pool_index << SIZE_BITS);
	uint64_t h = mix64(id ^ 0x2545f4914f6cdd1dull);
	unsigned char *b = p;
	if (from < OBJ_MIN)
		from = OBJ_MIN;
	for (size_t i = from; i < size; i++)
		b[i] = pattern_byte(h, i);
}

struct obj_info {
	uint64_t id;
	size_t size;
	int pool_index;
};

/* Checks an object's header and pattern; upto limits the pattern check. */
static struct obj_info obj_check(const void *p, int npools, size_t max_size,
                                 size_t upto)
{
	const uint64_t *w = p;
	struct obj_info info;
	info.id = w[0];
	uint64_t x = w[1] ^ mix64(info.id);
	info.size = (size_t)(x & (((uint64_t)1 << SIZE_BITS) - 1));
	info.pool_index = (int)(x >> SIZE_BITS);
	CHECK(info.id != 0 && info.pool_index < npools &&
	          info.size >= OBJ_MIN && info.size <= max_size,
	      "object %p: header overwritten (id %#" PRIx64 ", word 1 %#" PRIx64
	      ")",
	      p, w[0], w[1]);
	uint64_t h = mix64(info.id ^ 0x2545f4914f6cdd1dull);
	const unsigned char *b = p;
	size_t end = upto < info.size ? upto : info.size;
	for (size_t i = OBJ_MIN; i < end; i++)
		CHECK(b[i] == pattern_byte(h, i),
		      "object %p (id %#" PRIx64 ", size %zu): byte %zu is %#x, "
		      "expected %#x: written by another owner",
		      p, info.id, info.size, i, b[i], pattern_byte(h, i));
	return info;
}

/* ------------------------------------------------------------ the stress */

struct counts {
	uint64_t allocs[2], frees[2];       /* pool blocks, as the test saw */
	uint64_t fb_allocs[2], fb_frees[2]; /* fallback, new/free only */
	uint64_t objects, crossed, swaps, reallocs, callocs;
	uint64_t exhausted; /* requests that fit a block, served by fallback */
};

static void counts_add(struct counts *to, const struct counts *from)
{
	for (int i = 0; i < 2; i++) {
		to->allocs[i] += from->allocs[i];
		to->frees[i] += from->frees[i];
		to->fb_allocs[i] += from->fb_allocs[i];
		to->fb_frees[i] += from->fb_frees[i];
	}
	to->objects += from->objects;
	to->crossed += from->crossed;
	to->swaps += from->swaps;
	to->reallocs += from->reallocs;
	to->callocs += from->callocs;
	to->exhausted += from->exhausted;
}

#define LOCAL_SLOTS 32

struct stress {
	int npools;
	struct tracked pools[2];
	size_t max_size;           /* largest object: 4 blocks of the biggest */
	_Atomic(void *) *transfer; /* the shared array */
	size_t ntransfer;
	size_t steps; /* per thread per round */
	uint64_t seed;
	unsigned round;
	pthread_mutex_t counts_lock;
	struct counts total;
};

struct worker {
	struct stress *s;
	uint32_t serial;
	uint32_t next; /* ids made by this thread */
	uint64_t rng;
	struct counts c;
	void *local[LOCAL_SLOTS];
};

static void *obj_new(struct worker *w)
{
	struct stress *s = w->s;
	int pi = s->npools > 1 ? (int)(rnd(&w->rng) % (uint64_t)s->npools) : 0;
	struct tracked *tr = &s->pools[pi];
	size_t bs = tr->block_size;
	uint64_t r = rnd(&w->rng);
	size_t size;
	switch (r % 10) {
	case 0:
	case 1: /* larger than a block: the fallback */
		size = bs + 1 + (size_t)((r >> 8) % (3 * bs));
		break;
	default: /* fits a block */
		size = OBJ_MIN + (size_t)((r >> 8) % (bs - OBJ_MIN + 1));
		break;
	}
	bool zeroed = ((r >> 40) % 8) == 0;
	void *p = zeroed ? pool_calloc(tr->pool, 1, size)
	                 : pool_malloc(tr->pool, size);
	CHECK(p != NULL, "pool %d: allocation of %zu bytes failed: %s", pi,
	      size, strerror(errno));
	uint64_t id = (uint64_t)w->serial << 32 | ++w->next;
	bool owned = track_alloc(tr, p, id);
	if (zeroed) {
		const unsigned char *b = p;
		for (size_t i = 0; i < size; i++)
			CHECK(b[i] == 0,
			      "pool_calloc(%zu) gave %p with byte %zu = %#x",
			      size, p, i, b[i]);
		w->c.callocs++;
	}
	CHECK(!(owned && size > bs),
	      "pool %d: %zu bytes (block %zu) served by the pool at %p", pi,
	      size, bs, p);
	if (s->npools > 1)
		CHECK(!pool_owns(s->pools[1 - pi].pool, p),
		      "pool %d gave %p, a block of the other pool", pi, p);
	if (owned)
		w->c.allocs[pi]++;
	else
		w->c.fb_allocs[pi]++;
	if (!owned && size <= bs)
		w->c.exhausted++;
	w->c.objects++;
	obj_fill(p, id, size, pi, 0);
	return p;
}

static void obj_free(struct worker *w, void *p)
{
	struct stress *s = w->s;
	struct obj_info info = obj_check(p, s->npools, s->max_size, SIZE_MAX);
	struct tracked *tr = &s->pools[info.pool_index];
	if ((uint32_t)(info.id >> 32) != w->serial)
		w->c.crossed++;
	if (pool_owns(tr->pool, p)) {
		track_free(tr, p, info.id);
		w->c.frees[info.pool_index]++;
	} else {
		w->c.fb_frees[info.pool_index]++;
	}
	pool_free(tr->pool, p);
}

/* pool_realloc to a random size; contents up to the smaller size kept. */
static void *obj_realloc(struct worker *w, void *p)
{
	struct stress *s = w->s;
	struct obj_info info = obj_check(p, s->npools, s->max_size, SIZE_MAX);
	struct tracked *tr = &s->pools[info.pool_index];
	size_t bs = tr->block_size;
	size_t size = OBJ_MIN + (size_t)(rnd(&w->rng) % (4 * bs - OBJ_MIN + 1));
	bool was_owned = pool_owns(tr->pool, p);

	/* A block that must move is released from the table first: once
	 * pool_realloc() frees it another thread may get it at once. */
	if (was_owned && size > bs)
		track_free(tr, p, info.id);
	void *q = pool_realloc(tr->pool, p, size);
	CHECK(q != NULL, "pool_realloc(%p, %zu) failed: %s", p, size,
	      strerror(errno));
	if (was_owned && size <= bs)
		CHECK(q == p,
		      "pool_realloc moved block %p to %p though %zu "
		      "bytes fit the block",
		      p, q, size);
	bool owned = pool_owns(tr->pool, q);
	if (was_owned && !owned) {
		w->c.frees[info.pool_index]++;
		w->c.fb_allocs[info.pool_index]++;
	} else if (!was_owned && owned) {
		w->c.fb_frees[info.pool_index]++;
		w->c.allocs[info.pool_index]++;
	}
	if (owned && q != p)
		track_alloc(tr, q, info.id);
	else if (!owned)
		track_alloc(tr, q, info.id); /* checks it is outside */
	CHECK(!(owned && size > bs), "pool_realloc(%zu) gave block %p", size,
	      q);
	/* The kept prefix still has the pattern; then the new size. */
	{
		const uint64_t *word = q;
		CHECK(word[0] == info.id, "pool_realloc lost the id of %p", q);
		uint64_t h = mix64(info.id ^ 0x2545f4914f6cdd1dull);
		const unsigned char *b = q;
		size_t keep = size < info.size ? size : info.size;
		for (size_t i = OBJ_MIN; i < keep; i++)
			CHECK(b[i] == pattern_byte(h, i),
			      "pool_realloc %p -> %p (%zu -> %zu): byte %zu "
			      "changed",
			      p, q, info.size, size, i);
	}
	obj_fill(q, info.id, size, info.pool_index, info.size);
	w->c.reallocs++;
	return q;
}

/* A zero-size request: a unique pointer that pool_free() accepts. */
static void obj_zero(struct worker *w)
{
	struct stress *s = w->s;
	struct tracked *tr = &s->pools[0];
	void *p = pool_malloc(tr->pool, 0);
	CHECK(p != NULL, "pool_malloc(0) returned NULL: %s", strerror(errno));
	uint64_t id = (uint64_t)w->serial << 32 | ++w->next;
	if (track_alloc(tr, p, id)) {
		track_free(tr, p, id);
		w->c.allocs[0]++;
		w->c.frees[0]++;
	} else {
		w->c.fb_allocs[0]++;
		w->c.fb_frees[0]++;
	}
	pool_free(tr->pool, p);
}

static void *stress_thread(void *arg)
{
	struct worker *w = arg;
	struct stress *s = w->s;
	timer_t timer;
	bool armed = preempt_arm(&timer);

	for (size_t step = 0; step < s->steps; step++) {
		uint64_t r = rnd(&w->rng);
		size_t k = (size_t)(r >> 32) % LOCAL_SLOTS;
		unsigned op = (unsigned)(r % 100);
		if (op < 25) {
			/* Swap with the shared array: what we hold goes to
			 * whoever swaps that slot next. */
			size_t j = (size_t)(r >> 16) % s->ntransfer;
			void *got = atomic_exchange_explicit(
			    &s->transfer[j], w->local[k], memory_order_acq_rel);
			if (got != NULL)
				obj_check(got, s->npools, s->max_size,
				          SIZE_MAX);
			w->local[k] = got;
			w->c.swaps++;
		} else if (op < 30) {
			if (w->local[k] != NULL)
				w->local[k] = obj_realloc(w, w->local[k]);
		} else if (op < 31) {
			obj_zero(w);
		} else if (w->local[k] != NULL) {
			obj_free(w, w->local[k]);
			w->local[k] = NULL;
		} else {
			w->local[k] = obj_new(w);
		}
	}
	/* Before exiting: half of what we hold goes to the shared array (to
	 * be freed by threads of later rounds), the rest is freed. */
	for (size_t k = 0; k < LOCAL_SLOTS; k++) {
		void *p = w->local[k];
		if (p == NULL)
			continue;
		if (rnd(&w->rng) & 1) {
			size_t j = (size_t)rnd(&w->rng) % s->ntransfer;
			p = atomic_exchange_explicit(&s->transfer[j], p,
			                             memory_order_acq_rel);
		}
		if (p != NULL)
			obj_free(w, p);
		w->local[k] = NULL;
	}
	if (armed)
		timer_delete(timer);
	pthread_mutex_lock(&s->counts_lock);
	counts_add(&s->total, &w->c);
	pthread_mutex_unlock(&s->counts_lock);
	return NULL;
}

static void check_quiescent(struct stress *s, const char *when, bool final)
{
	for (int pi = 0; pi < s->npools; pi++) {
		struct tracked *tr = &s->pools[pi];
		pool_stats_t st = stats_of(tr->pool);
		size_t live = owner_live(tr->owner, tr->block_count);
		CHECK(st.in_use == live,
		      "%s: pool %d (%s): pool_stats in_use %zu, but the test "
		      "holds "
		      "%zu blocks",
		      when, pi, mode_name(tr->flags), st.in_use, live);
		CHECK(st.in_use <= tr->block_count &&
		          st.peak_in_use <= tr->block_count,
		      "%s: pool %d: in_use %zu / peak %zu beyond %zu blocks",
		      when, pi, st.in_use, st.peak_in_use, tr->block_count);
		CHECK(st.allocs - st.frees == st.in_use,
		      "%s: pool %d: allocs %" PRIu64 " - frees %" PRIu64
		      " != in_use %zu",
		      when, pi, st.allocs, st.frees, st.in_use);
		if (!final)
			continue;
		CHECK(st.in_use == 0, "%s: pool %d: in_use %zu at the end",
		      when, pi, st.in_use);
		CHECK(st.allocs == s->total.allocs[pi] &&
		          st.frees == s->total.frees[pi],
		      "%s: pool %d: pool counted %" PRIu64 " allocs / %" PRIu64
		      " frees, the test %" PRIu64 " / %" PRIu64,
		      when, pi, st.allocs, st.frees, s->total.allocs[pi],
		      s->total.frees[pi]);
		CHECK(st.fallback_allocs == st.fallback_frees &&
		          st.fallback_allocs >= s->total.fb_allocs[pi],
		      "%s: pool %d: fallback allocs %" PRIu64 ", frees %" PRIu64
		      ", the test made %" PRIu64,
		      when, pi, st.fallback_allocs, st.fallback_frees,
		      s->total.fb_allocs[pi]);
	}
}

/*
 * Reads pool_stats() over and over while the workers run and threads come
 * and go (their counters are folded in at exit): it must always succeed,
 * and in POOL_LOCKED mode, where it reads under the lock, in_use never
 * exceeds the pool.  (POOL_PER_THREAD counters are exact only at rest.)
 */
struct stats_reader {
	struct stress *s;
	_Atomic bool stop;
	uint64_t reads;
};

static void *stats_reader_fn(void *arg)
{
	struct stats_reader *r = arg;
	while (!atomic_load_explicit(&r->stop, memory_order_acquire)) {
		for (int pi = 0; pi < r->s->npools; pi++) {
			struct tracked *tr = &r->s->pools[pi];
			pool_stats_t st = stats_of(tr->pool);
			CHECK(st.block_count == tr->block_count &&
			          st.block_size == tr->block_size,
			      "pool_stats during the run: %zu blocks of %zu",
			      st.block_count, st.block_size);
			if ((tr->flags & POOL_MODE_MASK) == POOL_LOCKED)
				CHECK(st.in_use <= tr->block_count &&
				          st.peak_in_use <= tr->block_count,
				      "pool_stats during the run: in_use %zu, "
				      "peak %zu of %zu blocks",
				      st.in_use, st.peak_in_use,
				      tr->block_count);
			r->reads++;
		}
		sched_yield();
	}
	return NULL;
}

struct stress_config {
	int flags[2];
	int npools;
	unsigned threads;
	unsigned rounds;
	size_t steps; /* per thread per round */
	uint64_t seed;
	const char *name;
};

static void run_stress(const struct stress_config *cfg)
{
	struct stress *s = calloc(1, sizeof *s);
	CHECK(s != NULL, "out of memory");
	static const size_t block_sizes[2] = {64, 128};
	/* Enough blocks that few threads never exhaust the pool and 32 or 64
	 * do (then the fallback serves). */
	static const size_t block_counts[2] = {512, 256};
	s->npools = cfg->npools;
	for (int pi = 0; pi < cfg->npools; pi++)
		tracked_init(&s->pools[pi], pi, block_sizes[pi],
		             block_counts[pi], cfg->flags[pi]);
	s->max_size = 4 * block_sizes[cfg->npools - 1];
	s->ntransfer = 512;
	s->transfer = calloc(s->ntransfer, sizeof *s->transfer);
	CHECK(s->transfer != NULL, "out of memory");
	s->steps = cfg->steps;
	s->seed = cfg->seed;
	check_pthread(pthread_mutex_init(&s->counts_lock, NULL), "mutex");

	pthread_t *threads = calloc(cfg->threads, sizeof *threads);
	struct worker *workers = calloc(cfg->threads, sizeof *workers);
	CHECK(threads && workers, "out of memory");
	double t0 = now();
	uint64_t cycles = 0;
	struct stats_reader reader = {.s = s};
	pthread_t reader_thread;
	start_thread(&reader_thread, stats_reader_fn, &reader);
	for (unsigned round = 0; round < cfg->rounds; round++) {
		s->round = round;
		for (unsigned i = 0; i < cfg->threads; i++) {
			memset(&workers[i], 0, sizeof workers[i]);
			workers[i].s = s;
			workers[i].serial = next_serial();
			workers[i].rng =
			    mix64(cfg->seed ^ mix64(workers[i].serial));
			start_thread(&threads[i], stress_thread, &workers[i]);
		}
		for (unsigned i = 0; i < cfg->threads; i++)
			join_thread(threads[i]);
		cycles += cfg->threads;
		/* The reader may be inside pool_stats(): only a consistency
		 * check that tolerates it (no thread allocates or frees). */
		check_quiescent(s, "after a round", false);
	}
	atomic_store_explicit(&reader.stop, true, memory_order_release);
	join_thread(reader_thread);
	double t1 = now();

	/* Drain the shared array from the main thread. */
	struct worker main_w = {.s = s, .serial = next_serial()};
	for (size_t j = 0; j < s->ntransfer; j++) {
		void *p = atomic_exchange(&s->transfer[j], NULL);
		if (p != NULL)
			obj_free(&main_w, p);
	}
	counts_add(&s->total, &main_w.c);
	check_quiescent(s, "at the end", true);
	for (int pi = 0; pi < s->npools; pi++)
		check_whole_capacity(&s->pools[pi], "at the end");

	uint64_t pool_allocs = 0, fb = 0;
	for (int pi = 0; pi < s->npools; pi++) {
		pool_allocs += s->total.allocs[pi];
		fb += s->total.fb_allocs[pi];
	}
	printf("%-9s %-21s threads=%-2u rounds=%-3u cycles=%-5" PRIu64
	       " steps=%-8zu objects=%-8" PRIu64 " pool=%-8" PRIu64
	       " fallback=%-7" PRIu64 " (pool empty %-6" PRIu64
	       ") crossed=%-7" PRIu64 " %.2fs OK\n",
	       cfg->name,
	       cfg->npools == 1
	           ? mode_name(cfg->flags[0])
	           : (cfg->flags[0] == cfg->flags[1] ? "per-thread+per-thread"
	                                             : "locked+per-thread"),
	       cfg->threads, cfg->rounds, cycles,
	       cfg->steps * cfg->threads * cfg->rounds, s->total.objects,
	       pool_allocs, fb, s->total.exhausted, s->total.crossed, t1 - t0);
	fflush(stdout);

	for (int pi = 0; pi < s->npools; pi++)
		tracked_destroy(&s->pools[pi]);
	pthread_mutex_destroy(&s->counts_lock);
	free(s->transfer);
	free(threads);
	free(workers);
	free(s);
}

/* ------------------------------------------------------------ churn */

/*
 * Threads created and joined in batches of CHURN_BATCH, each allocating 1
 * to CHURN_MAX blocks: some it frees itself, some it leaves to the main
 * thread (freed after it exited), some it swaps into a pending array (to
 * be freed by a later thread, into a span whose owner is gone).
 *
 * The pool has CHURN_BLOCKS blocks and POOL_NO_FALLBACK.  At any moment at
 * most CHURN_BATCH * CHURN_MAX blocks are held by running threads, as many
 * wait for the main thread, CHURN_PENDING wait in the pending array, and
 * in POOL_PER_THREAD mode at most one span per live thread (and the main
 * thread) holds free blocks nobody else can take: far below CHURN_BLOCKS.
 * So any ENOMEM means thread exit stranded capacity.
 */
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

static void churn_free(struct churn *c, void *p)
{
	uint64_t id = *(uint64_t *)p;
	CHECK(id == mix64(*((uint64_t *)p + 1)),
	      "churn: block %p overwritten (%#" PRIx64 ")", p, id);
	track_free(&c->tr, p, id);
	pool_free(c->tr.pool, p);
	atomic_fetch_add_explicit(&c->frees, 1, memory_order_relaxed);
}

static void *churn_thread_fn(void *arg)
{
	struct churn_thread *t = arg;
	struct churn *c = t->c;
	void *mine[CHURN_MAX];
	size_t n = 1 + (size_t)(rnd(&t->rng) % CHURN_MAX);

	for (size_t i = 0; i < n; i++) {
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
		mine[i] = p;
		atomic_fetch_add_explicit(&c->allocs, 1, memory_order_relaxed);
	}
	t->nout = 0;
	for (size_t i = 0; i < n; i++) {
		switch (rnd(&t->rng) % 3) {
		case 0:
			churn_free(c, mine[i]);
			break;
		case 1:
			t->out[t->nout++] = mine[i];
			break;
		default: {
			size_t j = (size_t)(rnd(&t->rng) % CHURN_PENDING);
			void *old = atomic_exchange_explicit(
			    &c->pending[j], mine[i], memory_order_acq_rel);
			if (old)
				churn_free(c, old);
		}
		}
	}
	return NULL;
}

static void run_churn(int flags, unsigned cycles, uint64_t seed)
{
	struct churn *c = calloc(1, sizeof *c);
	CHECK(c != NULL, "out of memory");
	tracked_init(&c->tr, 0, 32, CHURN_BLOCKS, flags | POOL_NO_FALLBACK);
	struct churn_thread ts[CHURN_BATCH];
	pthread_t th[CHURN_BATCH];
	double t0 = now();
	unsigned done = 0;
	while (done < cycles) {
		unsigned batch =
		    cycles - done < CHURN_BATCH ? cycles - done : CHURN_BATCH;
		for (unsigned i = 0; i < batch; i++) {
			memset(&ts[i], 0, sizeof ts[i]);
			ts[i].c = c;
			ts[i].serial = next_serial();
			ts[i].rng = mix64(seed ^ ts[i].serial);
			start_thread(&th[i], churn_thread_fn, &ts[i]);
		}
		for (unsigned i = 0; i < batch; i++)
			join_thread(th[i]);
		/* The threads are gone: free what they left us. */
		for (unsigned i = 0; i < batch; i++)
			for (size_t k = 0; k < ts[i].nout; k++)
				churn_free(c, ts[i].out[k]);
		done += batch;
	}
	for (size_t j = 0; j < CHURN_PENDING; j++) {
		void *p = atomic_exchange(&c->pending[j], NULL);
		if (p)
			churn_free(c, p);
	}
	double t1 = now();
	pool_stats_t st = stats_of(c->tr.pool);
	uint64_t allocs = atomic_load(&c->allocs),
	         frees = atomic_load(&c->frees);
	CHECK(st.in_use == 0 && st.allocs == allocs && st.frees == frees &&
	          allocs == frees,
	      "churn (%s): in_use %zu, pool allocs %" PRIu64 " frees %" PRIu64
	      ", test allocs %" PRIu64 " frees %" PRIu64,
	      mode_name(flags), st.in_use, st.allocs, st.frees, allocs, frees);
	CHECK(st.fallback_allocs == 0 && st.fallback_frees == 0,
	      "churn: fallback used under POOL_NO_FALLBACK");
	CHECK(owner_live(c->tr.owner, c->tr.block_count) == 0,
	      "churn: blocks still held");
	check_whole_capacity(&c->tr, "churn, at the end");
	printf("churn     %-21s threads=%u created and joined (batches of %d), "
	       "blocks=%" PRIu64 " %.2fs OK\n",
	       mode_name(flags), cycles, CHURN_BATCH, allocs, t1 - t0);
	fflush(stdout);
	tracked_destroy(&c->tr);
	free(c);
}

/* ------------------------------------------------------------ destroy */

/*
 * pool_destroy() while threads that used the POOL_PER_THREAD pool are
 * still alive (each holding an active span, live blocks and a live
 * fallback allocation).  Then, by repetition: the threads just exit; or
 * each makes, uses and destroys a pool of its own before exiting; or all
 * use a new shared pool (often at the destroyed one's address), which
 * must work and count only its own traffic.
 */
#define DESTROY_THREADS 8

struct destroy_run {
	pool_t *pool;        /* the pool destroyed under the threads */
	struct tracked next; /* variant 2: the pool made afterwards */
	int variant;
	pthread_barrier_t used, destroyed;
	_Atomic(void *) shared[16];
	_Atomic uint64_t next_allocs;
};

struct destroy_thread {
	struct destroy_run *d;
	uint32_t serial;
	uint64_t rng;
};

static void *destroy_thread_fn(void *arg)
{
	struct destroy_thread *t = arg;
	struct destroy_run *d = t->d;
	void *fallback = NULL;

	/* Use the pool: keep some blocks, free some locally, some remotely.
	 * 8 threads keeping about half of 64 blocks each exhaust the 256
	 * blocks, so some requests fall back; those are given back (a
	 * block kept is simply lost with the pool, a malloc() would leak). */
	for (int i = 0; i < 64; i++) {
		void *p = pool_malloc(d->pool, 64);
		CHECK(p != NULL, "destroy: pool_malloc failed");
		memset(p, (int)t->serial, 64);
		uint64_t r = rnd(&t->rng) % 4;
		if (r == 0) {
			pool_free(d->pool, p);
		} else if (r == 1) {
			p = atomic_exchange(&d->shared[rnd(&t->rng) % 16], p);
			if (p)
				pool_free(d->pool, p);
		} else if (!pool_owns(d->pool, p)) {
			pool_free(d->pool, p);
		}
		/* else kept, and lost with the pool */
	}
	fallback = pool_malloc(d->pool, 1000);
	CHECK(fallback != NULL && !pool_owns(d->pool, fallback),
	      "destroy: fallback allocation");
	memset(fallback, 1, 1000);

	pthread_barrier_wait(&d->used);
	/* ... the main thread destroys the pool ... */
	pthread_barrier_wait(&d->destroyed);

	/* A fallback allocation outlives its pool and goes to free(). */
	free(fallback);
	if (d->variant == 1) {
		pool_t *own = pool_init(64, 64, POOL_PER_THREAD);
		CHECK(own != NULL, "destroy: pool_init: %s", strerror(errno));
		void *keep[64];
		for (int i = 0; i < 64; i++) {
			keep[i] = pool_malloc(own, 64);
			CHECK(keep[i] != NULL && pool_owns(own, keep[i]),
			      "destroy: new pool, block %d of 64 not served",
			      i);
		}
		for (int i = 0; i < 64; i += 2)
			pool_free(own, keep[i]);
		pool_stats_t st = stats_of(own);
		CHECK(st.allocs == 64 && st.frees == 32 && st.in_use == 32,
		      "destroy: new pool counts %" PRIu64 "/%" PRIu64 "/%zu",
		      st.allocs, st.frees, st.in_use);
		pool_destroy(own); /* with 32 blocks still out */
	} else if (d->variant == 2) {
		struct tracked *tr = &d->next;
		for (int i = 0; i < 32; i++) {
			void *p = pool_malloc(tr->pool, 64);
			CHECK(p != NULL, "destroy: next pool: %s",
			      strerror(errno));
			uint64_t id =
			    (uint64_t)t->serial << 32 | (uint64_t)(i + 1);
			bool owned = track_alloc(tr, p, id);
			if (owned)
				atomic_fetch_add(&d->next_allocs, 1);
			if (owned && (i & 1)) {
				track_free(tr, p, id);
				pool_free(tr->pool, p);
			}
			/* the rest are kept: the main thread checks in_use */
		}
	}
	return NULL;
}

static void run_destroy(unsigned reps, uint64_t seed)
{
	double t0 = now();
	for (unsigned rep = 0; rep < reps; rep++) {
		struct destroy_run *d = calloc(1, sizeof *d);
		CHECK(d != NULL, "out of memory");
		d->variant = (int)(rep % 3);
		d->pool = pool_init(64, 256, POOL_PER_THREAD);
		CHECK(d->pool != NULL, "pool_init: %s", strerror(errno));
		/* The main thread is a user too. */
		void *mine = pool_malloc(d->pool, 64);
		CHECK(mine != NULL && pool_owns(d->pool, mine), "pool_malloc");
		pthread_barrier_init(&d->used, NULL, DESTROY_THREADS + 1);
		pthread_barrier_init(&d->destroyed, NULL, DESTROY_THREADS + 1);
		struct destroy_thread ts[DESTROY_THREADS];
		pthread_t th[DESTROY_THREADS];
		for (int i = 0; i < DESTROY_THREADS; i++) {
			ts[i].d = d;
			ts[i].serial = next_serial();
			ts[i].rng = mix64(seed ^ ts[i].serial);
			start_thread(&th[i], destroy_thread_fn, &ts[i]);
		}
		pthread_barrier_wait(&d->used);
		for (int i = 0; i < 16; i++) {
			void *p = atomic_exchange(&d->shared[i], NULL);
			if (p && !pool_owns(d->pool, p))
				pool_free(d->pool, p);
		}
		pool_destroy(d->pool);
		d->pool = NULL;
		if (d->variant == 2)
			tracked_init(&d->next, 0, 64, 256, POOL_PER_THREAD);
		pthread_barrier_wait(&d->destroyed);
		for (int i = 0; i < DESTROY_THREADS; i++)
			join_thread(th[i]);
		if (d->variant == 2) {
			pool_stats_t st = stats_of(d->next.pool);
			uint64_t allocs = atomic_load(&d->next_allocs);
			CHECK(st.allocs == allocs &&
			          st.in_use == owner_live(d->next.owner,
			                                  d->next.block_count),
			      "destroy: the next pool counts allocs %" PRIu64
			      " (test %" PRIu64 "), in_use %zu (test %zu)",
			      st.allocs, allocs, st.in_use,
			      owner_live(d->next.owner, d->next.block_count));
			/* Give the kept blocks back through the table. */
			for (size_t i = 0; i < d->next.block_count; i++) {
				uint64_t id = atomic_load(&d->next.owner[i]);
				if (!id)
					continue;
				void *p = (char *)atomic_load(&d->next.base) +
				          (i << d->next.shift);
				track_free(&d->next, p, id);
				pool_free(d->next.pool, p);
			}
			check_whole_capacity(&d->next, "destroy, next pool");
			tracked_destroy(&d->next);
		}
		pthread_barrier_destroy(&d->used);
		pthread_barrier_destroy(&d->destroyed);
		free(d);
	}
	printf("destroy   %-21s repetitions=%u threads=%d %.2fs OK\n",
	       "per-thread", reps, DESTROY_THREADS, now() - t0);
	fflush(stdout);
}

/* ------------------------------------------------------------ misuse */

static unsigned race_delay = 48;
static _Atomic unsigned reports_double, reports_other;
static _Thread_local unsigned my_reports;

static void counting_handler(const pool_t *pool, const char *function,
                             const void *ptr, enum pool_error error, void *arg)
{
	(void)pool;
	(void)function;
	(void)ptr;
	(void)arg;
	my_reports++;
	if (error == POOL_ERROR_DOUBLE_FREE)
		atomic_fetch_add(&reports_double, 1);
	else
		atomic_fetch_add(&reports_other, 1);
}

/* A barrier that spins, so the threads leave it within nanoseconds of
 * each other and really do race. */
struct spin_barrier {
	_Atomic unsigned arrived;
	_Atomic unsigned generation;
};

static void spin_wait(struct spin_barrier *b, unsigned n)
{
	unsigned gen =
	    atomic_load_explicit(&b->generation, memory_order_acquire);
	if (atomic_fetch_add_explicit(&b->arrived, 1, memory_order_acq_rel) +
	        1 ==
	    n) {
		atomic_store_explicit(&b->arrived, 0, memory_order_relaxed);
		atomic_store_explicit(&b->generation, gen + 1,
		                      memory_order_release);
		return;
	}
	for (unsigned spins = 0;
	     atomic_load_explicit(&b->generation, memory_order_acquire) == gen;
	     spins++)
		if (spins > 64)
			sched_yield();
}

/*
 * (a) Two threads free the same blocks at the same moment.  O allocates
 * RACE_BLOCKS blocks (from its active span, mostly: spans are of 64
 * blocks); in three iterations
 * of four O (the owner) and R1 then free all of them at once, in the
 * fourth R1 and R2 (both remote).  Each frees the blocks in the same
 * order (or R1 in the reverse order, every other time), after a random
 * head start, so the two frees of some block meet within nanoseconds,
 * at every point of each other's path over many iterations.  Then O
 * takes every block of the pool, which drains its span's remote list,
 * where a racing free that slipped past the owner's is found.  After each
 * iteration exactly RACE_BLOCKS more double frees must have been
 * reported, O must have got every block of the pool exactly once, and no
 * report may be of corruption.
 */
#define RACE_BLOCKS 48
#define RACE_POOL   4096 /* 64 spans of 64 blocks in POOL_PER_THREAD mode */

struct race {
	struct tracked tr;
	unsigned iterations;
	pthread_barrier_t phase;
	struct spin_barrier go;
	void *blocks[RACE_BLOCKS];
	/* Where each report came from: a racing pool_free() of the owner
	 * or of a remote thread, or O's drain afterwards. */
	_Atomic unsigned at_owner, at_remote;
	unsigned late;
};

static void race_drain(struct race *r, unsigned it)
{
	struct tracked *tr = &r->tr;
	size_t n = tr->block_count;
	void **blocks = malloc(n * sizeof *blocks);
	CHECK(blocks != NULL, "out of memory");
	size_t got = 0;
	unsigned before = my_reports;
	uint64_t id_base = (uint64_t)next_serial() << 32;
	for (;;) {
		errno = 0;
		void *p = pool_malloc(tr->pool, tr->block_size);
		if (p == NULL) {
			CHECK(errno == ENOMEM, "race: pool_malloc: %s",
			      strerror(errno));
			break;
		}
		CHECK(got < n,
		      "race (%s), iteration %u: more than %zu blocks "
		      "handed out",
		      mode_name(tr->flags), it, n);
		track_alloc(tr, p, id_base | (got + 1));
		blocks[got++] = p;
	}
	r->late += my_reports - before;
	CHECK(got == n,
	      "race (%s), iteration %u: only %zu of %zu blocks "
	      "could be had: a block was lost",
	      mode_name(tr->flags), it, got, n);
	for (size_t i = 0; i < got; i++) {
		track_free(tr, blocks[i], id_base | (i + 1));
		pool_free(tr->pool, blocks[i]);
	}
	free(blocks);
	unsigned reported = atomic_load(&reports_double);
	unsigned expected = (it + 1) * RACE_BLOCKS;
	CHECK(reported == expected && atomic_load(&reports_other) == 0,
	      "race (%s), iteration %u: %u double frees reported, %u other "
	      "reports, after %u double frees",
	      mode_name(tr->flags), it, reported, atomic_load(&reports_other),
	      expected);
}

struct race_thread {
	struct race *r;
	int role; /* 0 = O, 1 = R1, 2 = R2 */
};

static void *race_thread_fn(void *arg)
{
	struct race_thread *t = arg;
	struct race *r = t->r;
	uint64_t rng = mix64((uint64_t)t->role + 77);
	for (unsigned it = 0; it < r->iterations; it++) {
		if (t->role == 0) {
			for (int k = 0; k < RACE_BLOCKS; k++) {
				r->blocks[k] =
				    pool_malloc(r->tr.pool, r->tr.block_size);
				CHECK(r->blocks[k] != NULL &&
				          pool_owns(r->tr.pool, r->blocks[k]),
				      "race: pool_malloc");
			}
		}
		pthread_barrier_wait(&r->phase);
		bool owner_races = (it & 3) != 3;
		bool mine = t->role == 1 || (t->role == 0) == owner_races;
		if (mine) {
			bool reverse = t->role == 1 && (it & 4);
			unsigned delay = (unsigned)(rnd(&rng) % race_delay);
			spin_wait(&r->go, 2);
			for (volatile unsigned d = 0; d < delay; d++)
				;
			unsigned before = my_reports;
			for (int k = 0; k < RACE_BLOCKS; k++)
				pool_free(
				    r->tr.pool,
				    r->blocks[reverse ? RACE_BLOCKS - 1 - k
				                      : k]);
			if (my_reports != before)
				atomic_fetch_add(t->role == 0 ? &r->at_owner
				                              : &r->at_remote,
				                 my_reports - before);
		}
		pthread_barrier_wait(&r->phase);
		if (t->role == 0)
			race_drain(r, it);
		pthread_barrier_wait(&r->phase);
	}
	return NULL;
}

static void run_race(int flags, unsigned iterations)
{
	struct race *r = calloc(1, sizeof *r);
	CHECK(r != NULL, "out of memory");
	tracked_init(&r->tr, 0, 16, RACE_POOL, flags | POOL_NO_FALLBACK);
	r->iterations = iterations;
	pthread_barrier_init(&r->phase, NULL, 3);
	atomic_store(&reports_double, 0);
	atomic_store(&reports_other, 0);
	pool_set_error_handler(counting_handler, NULL);

	double t0 = now();
	struct race_thread ts[3];
	pthread_t th[3];
	for (int i = 0; i < 3; i++) {
		ts[i].r = r;
		ts[i].role = i;
		start_thread(&th[i], race_thread_fn, &ts[i]);
	}
	for (int i = 0; i < 3; i++)
		join_thread(th[i]);
	double t1 = now();

	/* Every double free reported, the whole capacity there, no block
	 * handed out twice; the counters may be off by at most one per
	 * double free (a free counted before it was found to be one). */
	unsigned total = iterations * RACE_BLOCKS;
	CHECK(atomic_load(&reports_double) == total,
	      "race: %u of %u double frees reported",
	      atomic_load(&reports_double), total);
	{
		struct tracked *tr = &r->tr;
		size_t n = tr->block_count;
		void **blocks = malloc(n * sizeof *blocks);
		CHECK(blocks != NULL, "out of memory");
		for (size_t i = 0; i < n; i++) {
			blocks[i] = pool_malloc(tr->pool, tr->block_size);
			CHECK(blocks[i] != NULL &&
			          pool_owns(tr->pool, blocks[i]),
			      "race (%s): block %zu of %zu missing at the end",
			      mode_name(flags), i, n);
			track_alloc(tr, blocks[i], (uint64_t)1 << 63 | (i + 1));
		}
		errno = 0;
		CHECK(pool_malloc(tr->pool, tr->block_size) == NULL &&
		          errno == ENOMEM,
		      "race: a block beyond the capacity");
		for (size_t i = 0; i < n; i++) {
			track_free(tr, blocks[i], (uint64_t)1 << 63 | (i + 1));
			pool_free(tr->pool, blocks[i]);
		}
		free(blocks);
	}
	pool_stats_t st = stats_of(r->tr.pool);
	int64_t drift = (int64_t)(st.allocs - st.frees);
	CHECK(drift <= 0 && -drift <= (int64_t)total,
	      "race (%s): allocs %" PRIu64 " - frees %" PRIu64 " = %" PRId64
	      " after %u reported double frees",
	      mode_name(flags), st.allocs, st.frees, drift, total);
	CHECK(atomic_load(&reports_other) == 0, "race: %u other reports",
	      atomic_load(&reports_other));
	pool_set_error_handler(NULL, NULL);
	printf("misuse-a  %-21s double frees at the same moment=%u reported=%u "
	       "(at once: by the owner's free %u, by a remote free %u; at the "
	       "owner's drain %u) blocks lost=0 allocs-frees=%" PRId64
	       " (in_use %zu) %.2fs OK\n",
	       mode_name(flags), total, atomic_load(&reports_double),
	       atomic_load(&r->at_owner), atomic_load(&r->at_remote), r->late,
	       drift, st.in_use, t1 - t0);
	fflush(stdout);
	pthread_barrier_destroy(&r->phase);
	tracked_destroy(&r->tr);
	free(r);
}

/*
 * (b) Sequential cross-thread double frees, each of which the freeing
 * thread must have reported before its pool_free() returns:
 *   0: A allocates, B frees, C frees
 *   1: A allocates, B frees, A frees
 *   2: A allocates, A frees, B frees
 *   3: A allocates, B frees, B frees
 * A keeps its span all along.  Every 16 iterations A takes every block
 * (draining B's and C's frees) and gives them back.
 */
struct seq {
	struct tracked tr;
	unsigned iterations;
	pthread_barrier_t phase;
	void *block;
	unsigned missed; /* second frees not reported by their caller */
};

static const int seq_steps[4][3] = {
    {0, 1, 2},
    {0, 1, 0},
    {0, 0, 1},
    {0, 1, 1},
};

struct seq_thread {
	struct seq *q;
	int role;
};

static void *seq_thread_fn(void *arg)
{
	struct seq_thread *t = arg;
	struct seq *q = t->q;
	for (unsigned it = 0; it < q->iterations; it++) {
		const int *steps = seq_steps[it % 4];
		if (t->role == steps[0]) {
			q->block = pool_malloc(q->tr.pool, q->tr.block_size);
			CHECK(q->block && pool_owns(q->tr.pool, q->block),
			      "seq: pool_malloc");
		}
		pthread_barrier_wait(&q->phase);
		if (t->role == steps[1]) {
			unsigned before = my_reports;
			pool_free(q->tr.pool, q->block);
			CHECK(my_reports == before,
			      "seq (%s): the first free of %p was reported",
			      mode_name(q->tr.flags), q->block);
		}
		pthread_barrier_wait(&q->phase);
		if (t->role == steps[2]) {
			unsigned before = my_reports;
			pool_free(q->tr.pool, q->block);
			CHECK(
			    my_reports == before + 1,
			    "seq (%s), sequence %u: the second free of %p was "
			    "not reported at once (%u reports)",
			    mode_name(q->tr.flags), it % 4, q->block,
			    my_reports - before);
		}
		pthread_barrier_wait(&q->phase);
		if (t->role == 0 && it % 16 == 15) {
			check_whole_capacity(&q->tr, "seq");
		}
		pthread_barrier_wait(&q->phase);
	}
	return NULL;
}

static void run_seq(int flags, unsigned iterations)
{
	struct seq *q = calloc(1, sizeof *q);
	CHECK(q != NULL, "out of memory");
	tracked_init(&q->tr, 0, 64, 64, flags | POOL_NO_FALLBACK);
	q->iterations = iterations;
	pthread_barrier_init(&q->phase, NULL, 3);
	atomic_store(&reports_double, 0);
	atomic_store(&reports_other, 0);
	pool_set_error_handler(counting_handler, NULL);
	double t0 = now();
	struct seq_thread ts[3];
	pthread_t th[3];
	for (int i = 0; i < 3; i++) {
		ts[i].q = q;
		ts[i].role = i;
		start_thread(&th[i], seq_thread_fn, &ts[i]);
	}
	for (int i = 0; i < 3; i++)
		join_thread(th[i]);
	CHECK(atomic_load(&reports_double) == iterations &&
	          atomic_load(&reports_other) == 0,
	      "seq (%s): %u double-free reports, %u others, for %u double "
	      "frees",
	      mode_name(flags), atomic_load(&reports_double),
	      atomic_load(&reports_other), iterations);
	check_whole_capacity(&q->tr, "seq, at the end");
	pool_stats_t st = stats_of(q->tr.pool);
	CHECK(st.in_use == 0 && st.allocs == st.frees,
	      "seq (%s): allocs %" PRIu64 ", frees %" PRIu64 ", in_use %zu",
	      mode_name(flags), st.allocs, st.frees, st.in_use);
	pool_set_error_handler(NULL, NULL);
	printf("misuse-b  %-21s sequential cross-thread double frees=%u "
	       "reported at once=%u %.2fs OK\n",
	       mode_name(flags), iterations, atomic_load(&reports_double),
	       now() - t0);
	fflush(stdout);
	pthread_barrier_destroy(&q->phase);
	tracked_destroy(&q->tr);
	free(q);
}

/*
 * (b) again with every thread gone before the next acts: A allocates and
 * exits (its span is given back), B frees and exits, C frees: reported at
 * once, by C's pool_free().
 */
struct exited_step {
	pool_t *pool;
	void **block;
	int action; /* 0 allocate, 1 first free, 2 second free */
};

static void *exited_step_fn(void *arg)
{
	struct exited_step *e = arg;
	unsigned before = my_reports;
	switch (e->action) {
	case 0:
		*e->block = pool_malloc(e->pool, 64);
		CHECK(*e->block != NULL && pool_owns(e->pool, *e->block),
		      "seq-exited: pool_malloc");
		break;
	case 1:
		pool_free(e->pool, *e->block);
		CHECK(my_reports == before, "seq-exited: first free reported");
		break;
	default:
		pool_free(e->pool, *e->block);
		CHECK(my_reports == before + 1,
		      "seq-exited: the second free of %p, by a third thread "
		      "after the other two exited, was not reported at once",
		      *e->block);
	}
	return NULL;
}

static void run_seq_exited(int flags, unsigned iterations)
{
	struct tracked tr;
	tracked_init(&tr, 0, 64, 64, flags | POOL_NO_FALLBACK);
	atomic_store(&reports_double, 0);
	atomic_store(&reports_other, 0);
	pool_set_error_handler(counting_handler, NULL);
	double t0 = now();
	for (unsigned it = 0; it < iterations; it++) {
		void *block = NULL;
		for (int action = 0; action < 3; action++) {
			struct exited_step e = {tr.pool, &block, action};
			pthread_t th;
			start_thread(&th, exited_step_fn, &e);
			join_thread(th);
		}
	}
	CHECK(atomic_load(&reports_double) == iterations &&
	          atomic_load(&reports_other) == 0,
	      "seq-exited (%s): %u double-free reports, %u others, for %u",
	      mode_name(flags), atomic_load(&reports_double),
	      atomic_load(&reports_other), iterations);
	check_whole_capacity(&tr, "seq-exited, at the end");
	pool_stats_t st = stats_of(tr.pool);
	CHECK(st.in_use == 0 && st.allocs == st.frees,
	      "seq-exited (%s): allocs %" PRIu64 ", frees %" PRIu64,
	      mode_name(flags), st.allocs, st.frees);
	pool_set_error_handler(NULL, NULL);
	printf("misuse-b  %-21s A allocates and exits, B frees and exits, C "
	       "frees: %u, reported at once=%u %.2fs OK\n",
	       mode_name(flags), iterations, atomic_load(&reports_double),
	       now() - t0);
	fflush(stdout);
	tracked_destroy(&tr);
}

/* ------------------------------------------------------------ main */

static void usage(const char *argv0)
{
	fprintf(stderr,
	        "usage: %s [--long] [--mode=locked|per-thread] "
	        "[--threads=N[,N...]]\n"
	        "       [--only=stress,churn,two-pools,destroy,misuse] "
	        "[--steps=N] [--rounds=N]\n"
	        "       [--cycles=N] [--preempt-us=N (0: off)] [--seed=N]\n",
	        argv0);
	exit(2);
}

static bool selected(const char *only, const char *part)
{
	if (only == NULL)
		return true;
	size_t n = strlen(part);
	for (const char *p = only; (p = strstr(p, part)) != NULL; p += n)
		if ((p == only || p[-1] == ',') && (p[n] == ',' || p[n] == 0))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	bool long_run = long_run_from_env();
	int modes[2] = {POOL_LOCKED, POOL_PER_THREAD};
	int nmodes = 2;
	unsigned threads[16];
	int nthreads = 0;
	const char *only = NULL;
	size_t steps = 0;
	unsigned rounds = 0, cycles = 0;
	uint64_t seed = 0x5eed;

	concurrency_part = "setup";
	preempt_us = PREEMPT_DEFAULT_US(1000);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (common_option(a, &long_run, modes, &nmodes))
			continue;
		if (strncmp(a, "--threads=", 10) == 0) {
			char *end;
			const char *p = a + 10;
			while (*p && nthreads < 16) {
				unsigned long v = strtoul(p, &end, 10);
				if (end == p || v == 0 || v > 1024)
					usage(argv[0]);
				threads[nthreads++] = (unsigned)v;
				p = *end == ',' ? end + 1 : end;
				if (*end && *end != ',')
					usage(argv[0]);
			}
		} else if (strncmp(a, "--only=", 7) == 0)
			only = a + 7;
		else if (strncmp(a, "--steps=", 8) == 0)
			steps = strtoul(a + 8, NULL, 10);
		else if (strncmp(a, "--rounds=", 9) == 0)
			rounds = (unsigned)strtoul(a + 9, NULL, 10);
		else if (strncmp(a, "--cycles=", 9) == 0)
			cycles = (unsigned)strtoul(a + 9, NULL, 10);
		else if (strncmp(a, "--seed=", 7) == 0)
			seed = strtoull(a + 7, NULL, 0);
		else
			usage(argv[0]);
	}
	if (nthreads == 0) {
		static const unsigned sweep[] = {1, 2, 4, 8, 16, 32, 64};
		for (size_t i = 0; i < sizeof sweep / sizeof sweep[0]; i++)
			threads[nthreads++] = sweep[i];
	}
	/*
	 * Work per configuration, spread over its threads and rounds.  Short:
	 * a few seconds for everything on two cores (less work again under
	 * a sanitizer, at the same thread counts).  Long: minutes.
	 */
	size_t total_steps = long_run ? 20000000 : SANITIZED ? 100000 : 500000;
	if (rounds == 0)
		rounds = long_run ? 40 : 3;
	if (cycles == 0)
		cycles = long_run ? 10000 : SANITIZED ? 1000 : 10000;
	unsigned destroy_reps = long_run ? 300 : 30;
	unsigned race_its = long_run ? 40000 : SANITIZED ? 200 : 1000;
	unsigned seq_its = long_run ? 20000 : SANITIZED ? 500 : 2000;

	if (getenv("RACE_DELAY"))
		race_delay = (unsigned)atoi(getenv("RACE_DELAY"));
	concurrency_start("stress", long_run);
	printf("stress: %s run, seed %#" PRIx64 "%s\n",
	       long_run ? "long" : "short", seed,
	       SANITIZED ? " (sanitizer build: fewer steps)" : "");
	double t0 = now();

	for (int m = 0; m < nmodes; m++) {
		if (selected(only, "stress")) {
			concurrency_part = "stress";
			for (int t = 0; t < nthreads; t++) {
				struct stress_config cfg = {
				    .flags = {modes[m], 0},
				    .npools = 1,
				    .threads = threads[t],
				    .rounds = rounds,
				    .seed = seed,
				    .name = "stress"};
				cfg.steps =
				    steps
				        ? steps
				        : total_steps / (threads[t] * rounds) +
				              1;
				run_stress(&cfg);
			}
		}
		if (selected(only, "churn")) {
			concurrency_part = "churn";
			run_churn(modes[m], cycles, seed);
		}
		if (selected(only, "misuse")) {
			concurrency_part = "misuse";
			run_race(modes[m], race_its);
			run_seq(modes[m], seq_its);
			run_seq_exited(modes[m], seq_its / 4);
		}
	}
	if (selected(only, "two-pools")) {
		concurrency_part = "two-pools";
		static const int pairs[2][2] = {
		    {POOL_PER_THREAD, POOL_PER_THREAD},
		    {POOL_LOCKED, POOL_PER_THREAD}};
		for (int pr = 0; pr < 2; pr++) {
			unsigned nt = threads[nthreads - 1];
			struct stress_config cfg = {
			    .flags = {pairs[pr][0], pairs[pr][1]},
			    .npools = 2,
			    .threads = nt,
			    .rounds = rounds,
			    .seed = seed,
			    .name = "two-pools"};
			cfg.steps =
			    steps ? steps : total_steps / (nt * rounds) + 1;
			run_stress(&cfg);
		}
	}
	if (selected(only, "destroy")) {
		concurrency_part = "destroy";
		run_destroy(destroy_reps, seed);
	}
	concurrency_done(t0);
	return 0;
}
