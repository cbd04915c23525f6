/*
 * The misuse part: POOL_PER_THREAD (and POOL_LOCKED) cross-thread double
 * frees with a counting error handler: (a) two threads freeing the same
 * blocks at the same moment, owner against remote and remote against
 * remote: every one reported, at once or at the owner's next drain, no
 * block lost or ever handed out twice afterwards, allocs - frees off by
 * at most the number reported; (b) A allocates, B frees, C frees (and the
 * variants with A or B freeing twice): reported at once, by the second
 * pool_free().
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shiftpool.h"
#include "concurrency.h"
#include "stress.h"

/* ------------------------------------------------------------ reports */

static unsigned race_delay = 48; /* RACE_DELAY: longest head start */
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

/* Counts the reports from here on, from zero, until reports_stop(). */
static void reports_start(void)
{
	atomic_store(&reports_double, 0);
	atomic_store(&reports_other, 0);
	pool_set_error_handler(counting_handler, NULL);
}

static void reports_stop(void)
{
	pool_set_error_handler(NULL, NULL);
}

/* ------------------------------------------------------------ threads */

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

/* Three threads play roles 0, 1 and 2 on one shared run. */
struct role_thread {
	void *run;
	int role;
};

/* Runs fn on the three roles of run; returns when all have finished. */
static void run_roles(void *(*fn)(void *), void *run)
{
	struct role_thread ts[3];
	pthread_t th[3];
	for (int i = 0; i < 3; i++)
		ts[i] = (struct role_thread){.run = run, .role = i};
	start_threads(th, 3, fn, ts, sizeof *ts);
	join_threads(th, 3);
}

/* ------------------------------------------------------------ (a) race */

/*
 * (a) Two threads free the same blocks at the same moment.  O allocates
 * RACE_BLOCKS blocks (from its active span, mostly: spans are of 64
 * blocks); in three iterations
 * of four O (the owner) and R1 then free all of them at once, in the
 * fourth R1 and R2 (both remote).  Each frees the blocks in the same
 * order (or R1 in the reverse order, every other time), after a random
 * head start, so the two frees of some block meet within nanoseconds,
 * at every point of each other's path over many iterations.  Then O
 * takes every block of the pool, which drains its span's claims, where
 * a racing free that slipped past the owner's is found.  After each
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

/* O takes blocks until ENOMEM, each recorded under id_base | (i + 1);
 * more than the pool holds fails.  Returns how many it got. */
static size_t race_take_all(struct race *r, unsigned it, void **blocks,
                            uint64_t id_base)
{
	struct tracked *tr = &r->tr;
	size_t got = 0;
	for (;;) {
		errno = 0;
		void *p = pool_malloc(tr->pool, tr->block_size);
		if (p == NULL) {
			CHECK(errno == ENOMEM, "race: pool_malloc: %s",
			      strerror(errno));
			return got;
		}
		CHECK(got < tr->block_count,
		      "race (%s), iteration %u: more than %zu blocks "
		      "handed out",
		      mode_name(tr->flags), it, tr->block_count);
		track_alloc(tr, p, id_base | (got + 1));
		blocks[got++] = p;
	}
}

/* After iteration it: every block there, every double free reported. */
static void race_drain(struct race *r, unsigned it)
{
	struct tracked *tr = &r->tr;
	size_t n = tr->block_count;
	void **blocks = malloc(n * sizeof *blocks);
	CHECK(blocks != NULL, "out of memory");
	unsigned before = my_reports;
	uint64_t id_base = (uint64_t)next_serial() << 32;
	size_t got = race_take_all(r, it, blocks, id_base);
	r->late += my_reports - before;
	CHECK(got == n,
	      "race (%s), iteration %u: only %zu of %zu blocks "
	      "could be had: a block was lost",
	      mode_name(tr->flags), it, got, n);
	give_back_blocks(tr, blocks, got, id_base);
	unsigned reported = atomic_load(&reports_double);
	unsigned expected = (it + 1) * RACE_BLOCKS;
	CHECK(reported == expected && atomic_load(&reports_other) == 0,
	      "race (%s), iteration %u: %u double frees reported, %u other "
	      "reports, after %u double frees",
	      mode_name(tr->flags), it, reported, atomic_load(&reports_other),
	      expected);
}

static void race_allocate(struct race *r)
{
	for (int k = 0; k < RACE_BLOCKS; k++) {
		r->blocks[k] = pool_malloc(r->tr.pool, r->tr.block_size);
		CHECK(r->blocks[k] != NULL &&
		          pool_owns(r->tr.pool, r->blocks[k]),
		      "race: pool_malloc");
	}
}

/* Whether role frees the blocks in iteration it: R1 always, O in three
 * iterations of four, R2 in the fourth. */
static bool race_frees(int role, unsigned it)
{
	bool owner_races = (it & 3) != 3;
	return role == 1 || (role == 0) == owner_races;
}

/* One of the two frees of every block, after a random head start. */
static void race_free_all(struct race *r, int role, unsigned it, uint64_t *rng)
{
	bool reverse = role == 1 && (it & 4);
	unsigned delay = (unsigned)(rnd(rng) % race_delay);
	spin_wait(&r->go, 2);
	for (volatile unsigned d = 0; d < delay; d++)
		;
	unsigned before = my_reports;
	for (int k = 0; k < RACE_BLOCKS; k++)
		pool_free(r->tr.pool,
		          r->blocks[reverse ? RACE_BLOCKS - 1 - k : k]);
	if (my_reports != before)
		atomic_fetch_add(role == 0 ? &r->at_owner : &r->at_remote,
		                 my_reports - before);
}

static void *race_thread_fn(void *arg)
{
	struct role_thread *t = arg;
	struct race *r = t->run;
	uint64_t rng = mix64((uint64_t)t->role + 77);
	for (unsigned it = 0; it < r->iterations; it++) {
		if (t->role == 0)
			race_allocate(r);
		pthread_barrier_wait(&r->phase);
		if (race_frees(t->role, it))
			race_free_all(r, t->role, it, &rng);
		pthread_barrier_wait(&r->phase);
		if (t->role == 0)
			race_drain(r, it);
		pthread_barrier_wait(&r->phase);
	}
	return NULL;
}

/* At the end every block is there once, and not one more. */
static void race_check_capacity(struct race *r)
{
	struct tracked *tr = &r->tr;
	uint64_t id_base = (uint64_t)1 << 63;
	void **blocks = take_every_block(tr, id_base, "race, at the end");
	errno = 0;
	CHECK(pool_malloc(tr->pool, tr->block_size) == NULL && errno == ENOMEM,
	      "race: a block beyond the capacity");
	give_back_blocks(tr, blocks, tr->block_count, id_base);
}

/* The counters may be off by at most one per double free (a free
 * counted before it was found to be one).  Returns allocs - frees. */
static int64_t race_check_counters(const struct race *r, unsigned total,
                                   pool_stats_t *st)
{
	*st = stats_of(r->tr.pool);
	int64_t drift = (int64_t)(st->allocs - st->frees);
	CHECK(drift <= 0 && -drift <= (int64_t)total,
	      "race (%s): allocs %" PRIu64 " - frees %" PRIu64 " = %" PRId64
	      " after %u reported double frees",
	      mode_name(r->tr.flags), st->allocs, st->frees, drift, total);
	return drift;
}

static void race_report(const struct race *r, unsigned total, int64_t drift,
                        size_t in_use, double seconds)
{
	printf("misuse-a  %-21s double frees at the same moment=%u reported=%u "
	       "(at once: by the owner's free %u, by a remote free %u; at the "
	       "owner's drain %u) blocks lost=0 allocs-frees=%" PRId64
	       " (in_use %zu) %.2fs OK\n",
	       mode_name(r->tr.flags), total, atomic_load(&reports_double),
	       atomic_load(&r->at_owner), atomic_load(&r->at_remote), r->late,
	       drift, in_use, seconds);
	fflush(stdout);
}

static void run_race(int flags, unsigned iterations)
{
	struct race *r = calloc(1, sizeof *r);
	CHECK(r != NULL, "out of memory");
	tracked_init(&r->tr, 0, 16, RACE_POOL, flags | POOL_NO_FALLBACK);
	r->iterations = iterations;
	pthread_barrier_init(&r->phase, NULL, 3);
	reports_start();
	double t0 = now();
	run_roles(race_thread_fn, r);
	double t1 = now();

	unsigned total = iterations * RACE_BLOCKS;
	CHECK(atomic_load(&reports_double) == total,
	      "race: %u of %u double frees reported",
	      atomic_load(&reports_double), total);
	race_check_capacity(r);
	pool_stats_t st;
	int64_t drift = race_check_counters(r, total, &st);
	CHECK(atomic_load(&reports_other) == 0, "race: %u other reports",
	      atomic_load(&reports_other));
	reports_stop();
	race_report(r, total, drift, st.in_use, t1 - t0);
	pthread_barrier_destroy(&r->phase);
	tracked_destroy(&r->tr);
	free(r);
}

/* ------------------------------------------------------------ (b) seq */

/* After n sequential double frees: n reported, no other report, the
 * whole capacity there, the counters even. */
static void check_seq_end(struct tracked *tr, const char *name, unsigned n)
{
	CHECK(atomic_load(&reports_double) == n &&
	          atomic_load(&reports_other) == 0,
	      "%s (%s): %u double-free reports, %u others, for %u double "
	      "frees",
	      name, mode_name(tr->flags), atomic_load(&reports_double),
	      atomic_load(&reports_other), n);
	char when[64];
	snprintf(when, sizeof when, "%s, at the end", name);
	check_whole_capacity(tr, when);
	pool_stats_t st = stats_of(tr->pool);
	CHECK(st.in_use == 0 && st.allocs == st.frees,
	      "%s (%s): allocs %" PRIu64 ", frees %" PRIu64 ", in_use %zu",
	      name, mode_name(tr->flags), st.allocs, st.frees, st.in_use);
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
};

static const int seq_steps[4][3] = {
    {0, 1, 2},
    {0, 1, 0},
    {0, 0, 1},
    {0, 1, 1},
};

static void seq_first_free(struct seq *q)
{
	unsigned before = my_reports;
	pool_free(q->tr.pool, q->block);
	CHECK(my_reports == before,
	      "seq (%s): the first free of %p was reported",
	      mode_name(q->tr.flags), q->block);
}

static void seq_second_free(struct seq *q, unsigned it)
{
	unsigned before = my_reports;
	pool_free(q->tr.pool, q->block);
	CHECK(my_reports == before + 1,
	      "seq (%s), sequence %u: the second free of %p was "
	      "not reported at once (%u reports)",
	      mode_name(q->tr.flags), it % 4, q->block, my_reports - before);
}

static void *seq_thread_fn(void *arg)
{
	struct role_thread *t = arg;
	struct seq *q = t->run;
	for (unsigned it = 0; it < q->iterations; it++) {
		const int *steps = seq_steps[it % 4];
		if (t->role == steps[0]) {
			q->block = pool_malloc(q->tr.pool, q->tr.block_size);
			CHECK(q->block && pool_owns(q->tr.pool, q->block),
			      "seq: pool_malloc");
		}
		pthread_barrier_wait(&q->phase);
		if (t->role == steps[1])
			seq_first_free(q);
		pthread_barrier_wait(&q->phase);
		if (t->role == steps[2])
			seq_second_free(q, it);
		pthread_barrier_wait(&q->phase);
		if (t->role == 0 && it % 16 == 15)
			check_whole_capacity(&q->tr, "seq");
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
	reports_start();
	double t0 = now();
	run_roles(seq_thread_fn, q);
	check_seq_end(&q->tr, "seq", iterations);
	reports_stop();
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
	reports_start();
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
	check_seq_end(&tr, "seq-exited", iterations);
	reports_stop();
	printf("misuse-b  %-21s A allocates and exits, B frees and exits, C "
	       "frees: %u, reported at once=%u %.2fs OK\n",
	       mode_name(flags), iterations, atomic_load(&reports_double),
	       now() - t0);
	fflush(stdout);
	tracked_destroy(&tr);
}

/* ------------------------------------------------------------ the part */

void part_misuse(const struct stress_options *o, int mode)
{
	if (getenv("RACE_DELAY"))
		race_delay = (unsigned)atoi(getenv("RACE_DELAY"));
	run_race(mode, o->race_its);
	run_seq(mode, o->seq_its);
	run_seq_exited(mode, o->seq_its / 4);
}
