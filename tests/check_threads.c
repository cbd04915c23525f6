/*
 * Threads: eight threads hammer a POOL_LOCKED and a POOL_PER_THREAD pool
 * with objects whose contents are checked at free and that often end up
 * freed by another thread; threads come and go; a pool is destroyed while
 * threads that used it live on.  At quiescence every counter balances and
 * one thread gets every block back, once each.  Correctness only: no
 * timing is measured or asserted.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* ------------------------------------------------------------ failures */

/*
 * Worker threads must not call ck_assert (Check is not thread-safe); they
 * record the first failure here and the main thread asserts after join.
 */
static struct {
	pthread_mutex_t lock;
	bool failed;
	char message[256];
} worker_failure = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void worker_fail(const char *format, ...)
{
	pthread_mutex_lock(&worker_failure.lock);
	if (!worker_failure.failed) {
		va_list ap;
		va_start(ap, format);
		vsnprintf(worker_failure.message,
		          sizeof(worker_failure.message), format, ap);
		va_end(ap);
		worker_failure.failed = true;
	}
	pthread_mutex_unlock(&worker_failure.lock);
}

static void worker_failure_reset(void)
{
	pthread_mutex_lock(&worker_failure.lock);
	worker_failure.failed = false;
	worker_failure.message[0] = '\0';
	pthread_mutex_unlock(&worker_failure.lock);
}

static void assert_workers_passed(void)
{
	pthread_mutex_lock(&worker_failure.lock);
	bool failed = worker_failure.failed;
	char message[sizeof(worker_failure.message)];
	memcpy(message, worker_failure.message, sizeof(message));
	pthread_mutex_unlock(&worker_failure.lock);
	ck_assert_msg(!failed, "%s", message);
}

/* Asserts quiescence: counters balance, and the pool gives every block
 * to this one thread exactly once. */
static void assert_quiescent(pool_t *pool)
{
	pool_stats_t st = stats_of(pool);

	ck_assert_uint_eq(st.in_use, 0);
	ck_assert_uint_eq(st.allocs, st.frees);
	ck_assert_uint_eq(st.fallback_allocs, st.fallback_frees);
	void **blocks = take_every_block(pool, st.block_size);
	assert_region_blocks(blocks, st.block_count, st.block_size);
	/* assert_region_blocks sorted the array; freeing in address order is
	 * as good as any. */
	assert_exhausted(pool);
	give_back(pool, blocks, st.block_count);
	ck_assert_uint_eq(stats_of(pool).in_use, 0);
}

/* ------------------------------------------------------------ objects */

/*
 * An object is tagged with (thread + 1) << 32 | sequence.  Its size and
 * contents follow from the tag: the tag in its first 8 bytes, then bytes
 * derived from the tag.  A block handed to two owners at once, or written
 * through a stale free-list link, shows as a wrong tag or a wrong byte.
 */
#define HAMMER_BLOCK 64
#define OBJECT_MIN   16

struct object {
	unsigned char *ptr;
	uint64_t tag;
};

static uint64_t tag_hash(uint64_t tag)
{
	uint64_t state = tag;

	return test_random(&state);
}

static size_t object_size(uint64_t tag)
{
	uint64_t h = tag_hash(tag);

	/* One in 64 is too big for a block, so the fallback is in the mix. */
	if (h % 64 == 0)
		return HAMMER_BLOCK * 3;
	return OBJECT_MIN + (size_t)(h >> 8) % (HAMMER_BLOCK - OBJECT_MIN + 1);
}

static unsigned char object_byte(uint64_t tag, size_t i)
{
	return (unsigned char)((tag_hash(tag) >> (i % 7 * 8)) + i);
}

static void object_fill(struct object *o)
{
	size_t size = object_size(o->tag);

	memcpy(o->ptr, &o->tag, sizeof(o->tag));
	for (size_t i = sizeof(o->tag); i < size; i++)
		o->ptr[i] = object_byte(o->tag, i);
}

/* Returns false, after recording why, when the contents are wrong. */
static bool object_check(const struct object *o, const char *where)
{
	uint64_t found;
	size_t size = object_size(o->tag);

	memcpy(&found, o->ptr, sizeof(found));
	if (found != o->tag) {
		worker_fail("%s: object %p tagged %#llx now holds tag %#llx: "
		            "handed to two owners?",
		            where, (void *)o->ptr, (unsigned long long)o->tag,
		            (unsigned long long)found);
		return false;
	}
	for (size_t i = sizeof(o->tag); i < size; i++) {
		if (o->ptr[i] != object_byte(o->tag, i)) {
			worker_fail(
			    "%s: object %p tagged %#llx: byte %zu of %zu "
			    "overwritten",
			    where, (void *)o->ptr, (unsigned long long)o->tag,
			    i, size);
			return false;
		}
	}
	return true;
}

/* ------------------------------------------------------------ hammer */

#define HAMMER_THREADS 8
#define HAMMER_STEPS   40000
#define HAMMER_HELD    32 /* objects a thread holds at once */
#define HAMMER_SHARED  64 /* exchange slots between threads */
/* Fewer blocks than objects that can be alive, so the pool runs dry now
 * and then and the fallback serves. */
#define HAMMER_BLOCKS 256

struct hammer {
	pool_t *pool;
	pthread_mutex_t shared_lock; /* guards shared[] only, not the pool */
	struct object shared[HAMMER_SHARED];
	pthread_barrier_t start;
	/* Totals the workers add up, to compare with pool_stats(). */
	_Atomic uint64_t pool_allocs, fallback_allocs, foreign_frees;
};

struct hammer_worker {
	struct hammer *h;
	unsigned id;
	pthread_t thread;
};

/* Frees an object after checking it; counts frees of other threads'
 * objects, which is what makes this test cross-thread. */
static void hammer_free(struct hammer *h, unsigned id, struct object *o)
{
	object_check(o, "free");
	if ((o->tag >> 32) != id + 1)
		atomic_fetch_add(&h->foreign_frees, 1);
	pool_free(h->pool, o->ptr);
	o->ptr = NULL;
}

static void *hammer_run(void *arg)
{
	struct hammer_worker *w = arg;
	struct hammer *h = w->h;
	struct object held[HAMMER_HELD] = {{0}};
	uint64_t rng = 0x5eed0000 + w->id;
	uint64_t pool_allocs = 0, fallback_allocs = 0;

	pthread_barrier_wait(&h->start);
	for (uint32_t step = 0; step < HAMMER_STEPS; step++) {
		uint64_t r = test_random(&rng);
		struct object *o = &held[r % HAMMER_HELD];

		if (o->ptr == NULL) {
			/* Allocate, half with calloc, whose zeroes are
			 * checked before the pattern goes in. */
			o->tag = (uint64_t)(w->id + 1) << 32 | step;
			size_t size = object_size(o->tag);
			bool zeroed = (r >> 8) & 1;
			o->ptr = zeroed ? pool_calloc(h->pool, 1, size)
			                : pool_malloc(h->pool, size);
			if (o->ptr == NULL) {
				worker_fail("thread %u: %zu bytes: %s", w->id,
				            size, strerror(errno));
				break;
			}
			if (pool_owns(h->pool, o->ptr))
				pool_allocs++;
			else
				fallback_allocs++;
			for (size_t i = 0; zeroed && i < size; i++) {
				if (o->ptr[i] != 0) {
					worker_fail(
					    "thread %u: calloc %p: byte "
					    "%zu is %#x",
					    w->id, (void *)o->ptr, i,
					    o->ptr[i]);
					break;
				}
			}
			object_fill(o);
		} else if ((r >> 16) % 4 == 0) {
			/* Swap with a shared slot: the object may be freed by
			 * whichever thread swaps it out next. */
			struct object *slot =
			    &h->shared[(r >> 24) % HAMMER_SHARED];
			pthread_mutex_lock(&h->shared_lock);
			struct object t = *slot;
			*slot = *o;
			*o = t;
			pthread_mutex_unlock(&h->shared_lock);
		} else {
			hammer_free(h, w->id, o);
		}
		/* Give up the CPU now and then, so that on a machine with
		 * few cores the threads still interleave, not run in turn. */
		if ((r >> 40) % 512 == 0)
			sched_yield();
	}
	for (size_t i = 0; i < HAMMER_HELD; i++)
		if (held[i].ptr != NULL)
			hammer_free(h, w->id, &held[i]);
	atomic_fetch_add(&h->pool_allocs, pool_allocs);
	atomic_fetch_add(&h->fallback_allocs, fallback_allocs);
	return NULL;
}

START_TEST(test_hammer)
{
	int mode = test_modes[TEST_FIRST_CONCURRENT_MODE + _i];
	struct hammer h = {0};
	struct hammer_worker workers[HAMMER_THREADS];

	worker_failure_reset();
	misuse_record(); /* a report in here is a bug: count them */
	h.pool = test_pool(HAMMER_BLOCK, HAMMER_BLOCKS, mode);
	ck_assert_int_eq(pthread_mutex_init(&h.shared_lock, NULL), 0);
	ck_assert_int_eq(pthread_barrier_init(&h.start, NULL, HAMMER_THREADS),
	                 0);
	for (unsigned t = 0; t < HAMMER_THREADS; t++) {
		workers[t] = (struct hammer_worker){.h = &h, .id = t};
		ck_assert_int_eq(pthread_create(&workers[t].thread, NULL,
		                                hammer_run, &workers[t]),
		                 0);
	}
	for (unsigned t = 0; t < HAMMER_THREADS; t++)
		ck_assert_int_eq(pthread_join(workers[t].thread, NULL), 0);
	for (size_t i = 0; i < HAMMER_SHARED; i++)
		if (h.shared[i].ptr != NULL)
			hammer_free(&h, HAMMER_THREADS, &h.shared[i]);
	pthread_barrier_destroy(&h.start);
	pthread_mutex_destroy(&h.shared_lock);

	assert_workers_passed();
	ck_assert_uint_eq(misuse_count(), 0);
	/* The test did what it claims: blocks crossed threads, and both the
	 * pool and the fallback served. */
	ck_assert_uint_gt(atomic_load(&h.foreign_frees), 1000);
	ck_assert_uint_gt(atomic_load(&h.fallback_allocs), 0);

	pool_stats_t st = stats_of(h.pool);
	ck_assert_uint_eq(st.allocs, atomic_load(&h.pool_allocs));
	ck_assert_uint_eq(st.fallback_allocs, atomic_load(&h.fallback_allocs));
	ck_assert_uint_le(st.peak_in_use, HAMMER_BLOCKS);
	ck_assert_uint_gt(st.peak_in_use, 0);
	assert_quiescent(h.pool);
}
END_TEST

/* ------------------------------------------------------------ churn */

#define CHURN_ROUNDS  100
#define CHURN_THREADS 4
#define CHURN_OBJECTS 24 /* per thread; half outlive it */

struct churn {
	pool_t *pool;
	/* Objects the threads of one round leave behind, freed by the
	 * threads of the next round (their allocators have exited). */
	struct object left[CHURN_THREADS][CHURN_OBJECTS / 2];
};

struct churn_worker {
	struct churn *c;
	unsigned id, round;
};

static void *churn_run(void *arg)
{
	struct churn_worker *w = arg;
	struct churn *c = w->c;
	struct object mine[CHURN_OBJECTS];

	/* Free what a thread of the previous round left, then allocate. */
	for (size_t i = 0; i < CHURN_OBJECTS / 2; i++) {
		struct object *o = &c->left[w->id][i];
		if (o->ptr != NULL) {
			object_check(o, "churn");
			pool_free(c->pool, o->ptr);
			o->ptr = NULL;
		}
	}
	for (size_t i = 0; i < CHURN_OBJECTS; i++) {
		mine[i].tag =
		    (uint64_t)(w->round * CHURN_THREADS + w->id + 1) << 32 | i;
		mine[i].ptr = pool_malloc(c->pool, object_size(mine[i].tag));
		if (mine[i].ptr == NULL) {
			worker_fail("churn: allocation failed: %s",
			            strerror(errno));
			return NULL;
		}
		object_fill(&mine[i]);
	}
	/* Free half, leave half to the next round. */
	for (size_t i = 0; i < CHURN_OBJECTS; i++) {
		if (i % 2 == 0) {
			object_check(&mine[i], "churn");
			pool_free(c->pool, mine[i].ptr);
		} else {
			c->left[w->id][i / 2] = mine[i];
		}
	}
	return NULL;
}

START_TEST(test_churn)
{
	int mode = test_modes[TEST_FIRST_CONCURRENT_MODE + _i];
	struct churn c = {0};

	worker_failure_reset();
	misuse_record();
	/* Enough blocks that the pool serves everything: a block cached by
	 * an exited thread and never returned shows as exhaustion below. */
	c.pool =
	    test_pool(HAMMER_BLOCK, 2 * CHURN_THREADS * CHURN_OBJECTS, mode);
	for (unsigned round = 0; round < CHURN_ROUNDS; round++) {
		pthread_t threads[CHURN_THREADS];
		struct churn_worker workers[CHURN_THREADS];
		for (unsigned t = 0; t < CHURN_THREADS; t++) {
			workers[t] = (struct churn_worker){
			    .c = &c, .id = t, .round = round};
			ck_assert_int_eq(pthread_create(&threads[t], NULL,
			                                churn_run, &workers[t]),
			                 0);
		}
		for (unsigned t = 0; t < CHURN_THREADS; t++)
			ck_assert_int_eq(pthread_join(threads[t], NULL), 0);
		assert_workers_passed();
	}
	for (unsigned t = 0; t < CHURN_THREADS; t++) {
		for (size_t i = 0; i < CHURN_OBJECTS / 2; i++) {
			ck_assert(object_check(&c.left[t][i], "churn end"));
			pool_free(c.pool, c.left[t][i].ptr);
		}
	}
	assert_workers_passed();
	ck_assert_uint_eq(misuse_count(), 0);
	assert_quiescent(c.pool);
}
END_TEST

/* ------------------------------------------------------------ capacity */

#define CAPACITY_THREADS 4
#define CAPACITY_ROUNDS  100

struct capacity {
	pool_t *pool;
	pthread_barrier_t turn;
};

struct capacity_worker {
	struct capacity *c;
	unsigned id;
	unsigned served_elsewhere; /* allocations the pool did not serve */
};

static void *capacity_run(void *arg)
{
	struct capacity_worker *w = arg;

	for (unsigned round = 0; round < CAPACITY_ROUNDS; round++) {
		pthread_barrier_wait(&w->c->turn);
		if (round % CAPACITY_THREADS != w->id)
			continue;
		void *block = pool_malloc(w->c->pool, HAMMER_BLOCK);
		if (pool_owns(w->c->pool, block) != 1)
			w->served_elsewhere++;
		pool_free(w->c->pool, block);
	}
	return NULL;
}

START_TEST(test_capacity_shared)
{
	int mode = test_modes[TEST_FIRST_CONCURRENT_MODE + _i];
	struct capacity c;
	struct capacity_worker workers[CAPACITY_THREADS];
	pthread_t threads[CAPACITY_THREADS];

	/* Four live threads take turns to allocate and free one block of a
	 * 16-block pool: at most one block is ever in use, the pool is never
	 * exhausted, so it must serve every request (api.md: only a request
	 * too big, or made while the pool is exhausted, goes to the system
	 * allocator), whatever blocks idle threads keep cached. */
	c.pool = test_pool(HAMMER_BLOCK, 16, mode);
	ck_assert_int_eq(pthread_barrier_init(&c.turn, NULL, CAPACITY_THREADS),
	                 0);
	for (unsigned t = 0; t < CAPACITY_THREADS; t++) {
		workers[t] = (struct capacity_worker){.c = &c, .id = t};
		ck_assert_int_eq(pthread_create(&threads[t], NULL, capacity_run,
		                                &workers[t]),
		                 0);
	}
	for (unsigned t = 0; t < CAPACITY_THREADS; t++)
		ck_assert_int_eq(pthread_join(threads[t], NULL), 0);
	pthread_barrier_destroy(&c.turn);
	for (unsigned t = 0; t < CAPACITY_THREADS; t++)
		ck_assert_msg(workers[t].served_elsewhere == 0,
		              "%s pool: thread %u got %u of its %d one-block "
		              "requests from the fallback, with at most one "
		              "block of 16 in use",
		              mode_name(mode), t, workers[t].served_elsewhere,
		              CAPACITY_ROUNDS / CAPACITY_THREADS);
	assert_quiescent(c.pool);
}
END_TEST

/*
 * A thread that only frees (a server's writer thread, freeing responses
 * its workers allocated) must not keep any of the pool: after it has
 * freed every block, the allocating thread gets all of them back from the
 * pool, while the freeing thread is still alive.
 */
#define FREER_BLOCKS 512
#define FREER_ROUNDS 4

struct freer {
	pool_t *pool;
	void **blocks;
	pthread_barrier_t step;
};

static void *freer_run(void *arg)
{
	struct freer *f = arg;

	for (uint64_t round = 0; round < FREER_ROUNDS; round++) {
		pthread_barrier_wait(&f->step); /* the blocks are ready */
		shuffle_pointers(f->blocks, FREER_BLOCKS, round + 1);
		for (size_t i = 0; i < FREER_BLOCKS; i++)
			pool_free(f->pool, f->blocks[i]);
		pthread_barrier_wait(&f->step); /* all freed */
	}
	return NULL;
}

START_TEST(test_capacity_free_only_thread)
{
	int mode = test_modes[TEST_FIRST_CONCURRENT_MODE + _i];
	struct freer f = {.pool = test_pool(HAMMER_BLOCK, FREER_BLOCKS, mode)};
	pthread_t thread;

	misuse_record();
	ck_assert_int_eq(pthread_barrier_init(&f.step, NULL, 2), 0);
	ck_assert_int_eq(pthread_create(&thread, NULL, freer_run, &f), 0);
	for (int round = 0; round < FREER_ROUNDS; round++) {
		/* Every block from the pool (take_every_block() asserts it),
		 * the freer alive and done with the previous round's. */
		f.blocks = take_every_block(f.pool, HAMMER_BLOCK);
		assert_region_blocks(f.blocks, FREER_BLOCKS, HAMMER_BLOCK);
		pthread_barrier_wait(&f.step);
		pthread_barrier_wait(&f.step);
		free(f.blocks);
	}
	ck_assert_int_eq(pthread_join(thread, NULL), 0);
	pthread_barrier_destroy(&f.step);
	ck_assert_uint_eq(misuse_count(), 0);
	assert_quiescent(f.pool);
}
END_TEST

/* ------------------------------------------------------------ destroy */

struct survivor {
	pool_t *pool; /* the pool of the current phase */
	pthread_barrier_t step;
};

static void *survivor_run(void *arg)
{
	struct survivor *s = arg;
	void *blocks[16];

	/* Phase 1: use the first pool, leave the thread's cache warm. */
	for (size_t i = 0; i < 16; i++)
		blocks[i] = pool_malloc(s->pool, 32);
	for (size_t i = 0; i < 16; i += 2)
		pool_free(s->pool, blocks[i]);
	for (size_t i = 1; i < 16; i += 2)
		pool_free(s->pool, blocks[i]);
	pthread_barrier_wait(&s->step);
	/* Main destroys it and makes a second pool, perhaps at the same
	 * address: nothing this thread cached may leak into it. */
	pthread_barrier_wait(&s->step);
	pool_stats_t st = {0};
	if (s->pool != NULL && pool_stats(s->pool, &st) != 0)
		worker_fail("pool_stats() on the second pool failed");
	for (size_t i = 0; i < st.block_count && i < 16; i++) {
		blocks[i] = pool_malloc(s->pool, 32);
		if (blocks[i] == NULL) {
			worker_fail("second pool, allocation %zu failed", i);
			st.block_count = i;
			break;
		}
		if (pool_owns(s->pool, blocks[i]) != 1) {
			/* Perhaps a block of the destroyed pool: neither
			 * written nor freed, just reported. */
			worker_fail("second pool, allocation %zu: %p is not "
			            "one of its blocks",
			            i, blocks[i]);
			blocks[i] = NULL;
			continue;
		}
		memset(blocks[i], 0x99, 32);
	}
	for (size_t i = 0; i < st.block_count && i < 16; i++)
		pool_free(s->pool, blocks[i]);
	pthread_barrier_wait(&s->step);
	/* Main destroys the second pool too; this thread exits after, and
	 * its exit must not touch either pool. */
	pthread_barrier_wait(&s->step);
	return NULL;
}

START_TEST(test_destroy_before_thread_exit)
{
	int mode = test_modes[_i];
	struct survivor s;
	pthread_t thread;

	worker_failure_reset();
	ck_assert_int_eq(pthread_barrier_init(&s.step, NULL, 2), 0);
	s.pool = pool_init(32, 16, mode);
	ck_assert_ptr_nonnull(s.pool);
	ck_assert_int_eq(pthread_create(&thread, NULL, survivor_run, &s), 0);

	/* The thread waits at every step, so nothing is asserted until it
	 * has exited: a failure must not leave it blocked. */
	pthread_barrier_wait(&s.step);
	pool_destroy(s.pool);
	s.pool = pool_init(32, 16, mode);
	if (s.pool == NULL)
		worker_fail("the second pool_init() failed: %s",
		            strerror(errno));
	pthread_barrier_wait(&s.step);
	pthread_barrier_wait(&s.step);
	/* The thread is alive and may keep blocks cached, so only the
	 * counters are checked here; assert_quiescent() needs it gone. */
	pool_stats_t st = {0};
	if (s.pool != NULL && pool_stats(s.pool, &st) == 0 &&
	    (st.in_use != 0 || st.allocs != st.frees || st.allocs != 16))
		worker_fail("second pool: allocs %llu frees %llu in_use %zu, "
		            "expected 16 16 0",
		            (unsigned long long)st.allocs,
		            (unsigned long long)st.frees, st.in_use);
	pool_destroy(s.pool);
	s.pool = NULL;
	pthread_barrier_wait(&s.step);
	ck_assert_int_eq(pthread_join(thread, NULL), 0);
	pthread_barrier_destroy(&s.step);
	assert_workers_passed();

	/* The process is still sound: a new pool works from this thread. */
	pool_t *pool = test_pool(32, 16, mode);
	assert_quiescent(pool);
}
END_TEST

/* ------------------------------------------------------------ suite */

Suite *threads_suite(void)
{
	Suite *s = suite_create("threads");
	TCase *tc;

	/* Loop index + TEST_FIRST_CONCURRENT_MODE is the mode. */
	tc = test_tcase(s, "hammer");
	test_add_concurrent_modes(tc, test_hammer);

	tc = test_tcase(s, "churn");
	test_add_concurrent_modes(tc, test_churn);

	tc = test_tcase(s, "capacity");
	test_add_concurrent_modes(tc, test_capacity_shared);
	test_add_concurrent_modes(tc, test_capacity_free_only_thread);

	/* Threads one after another: every mode. */
	tc = test_tcase(s, "lifetime");
	test_add_every_mode(tc, test_destroy_before_thread_exit);

	return s;
}
