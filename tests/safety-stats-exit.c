/*
 * pool_stats() stays exact while threads exit.  shiftpool.h promises that
 * the POOL_PER_THREAD counters are exact whenever no thread is inside a
 * pool call; a thread that is exiting is inside none, but its counters
 * move from its cache to the pool's retired totals at that moment, and a
 * snapshot taken meanwhile must count them once: not twice, not never,
 * not the allocations without the frees.
 *
 * Rounds of WORKERS threads: each makes a known number of allocations
 * (pool blocks and fallbacks), frees them all, adds what it did to the
 * expected totals, says it is done, and waits.  Once all are done no
 * thread is inside a pool call; the main thread lets them all exit at once
 * and meanwhile takes snapshot after snapshot, and every one must equal
 * the totals exactly (allocs == frees, in_use == 0, the fallbacks).  While the
 * workers still run, snapshots can only be bounded, and are: the counters
 * never decrease between snapshots and stay within what the threads that
 * finished and the threads that started can have done.
 *
 * Nothing here is timed: a round waits for its workers however long they
 * take, and alarm() only turns a hang into a failure.
 *
 * SPDX-License-Identifier: MIT
 */
#include "safety-util.h"

#include <inttypes.h>
#include <sched.h>
#include <unistd.h>

#define BLOCK           64
#define COUNT           4096
#define WORKERS         8
#define ROUNDS          200
#define POOL_ALLOCS     12 /* per worker: blocks of the pool */
#define FALLBACK_ALLOCS 2  /* per worker: too big for a block */
#define TEST_SECONDS    300
#define MAX_BAD         20 /* wrong snapshots shown before the test stops */

static pool_t *pool;

/* What the workers did, added by each before it says it is done. */
static _Atomic uint64_t did_allocs, did_frees, did_fallback_allocs,
    did_fallback_frees;
static _Atomic unsigned finished;

/* The workers exit together, once the main thread is watching: exits that
 * overlap snapshots are the point. */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static unsigned gate_round; /* the rounds whose workers may exit */

static void *worker(void *arg)
{
	unsigned round = (unsigned)(uintptr_t)arg;
	void *p[POOL_ALLOCS + FALLBACK_ALLOCS];
	uint64_t owned = 0;
	for (int i = 0; i < POOL_ALLOCS + FALLBACK_ALLOCS; i++) {
		p[i] = pool_malloc(pool, i < POOL_ALLOCS ? BLOCK : 4 * BLOCK);
		if (p[i] == NULL)
			safety_fail(__FILE__, __LINE__, "pool_malloc: %s",
			            strerror(errno));
		else
			owned += (uint64_t)pool_owns(pool, p[i]);
	}
	uint64_t fallback = POOL_ALLOCS + FALLBACK_ALLOCS - owned;
	for (int i = 0; i < POOL_ALLOCS + FALLBACK_ALLOCS; i++)
		pool_free(pool, p[i]);
	/* A pool block the pool could not give (none should miss here)
	 * counts as a fallback, so the totals stay exact either way. */
	atomic_fetch_add(&did_allocs, owned);
	atomic_fetch_add(&did_frees, owned);
	atomic_fetch_add(&did_fallback_allocs, fallback);
	atomic_fetch_add(&did_fallback_frees, fallback);
	atomic_fetch_add(&finished, 1);
	pthread_mutex_lock(&gate_lock);
	while (gate_round < round)
		pthread_cond_wait(&gate_cond, &gate_lock);
	pthread_mutex_unlock(&gate_lock);
	return NULL; /* the exit: the counters move to the pool */
}

/* ------------------------------------------------------------ snapshots */

static pool_stats_t previous;
static unsigned long snapshots, exact_snapshots;
static unsigned bad;

static void show_bad(const char *what, const pool_stats_t *st)
{
	if (++bad > MAX_BAD)
		return;
	safety_fail(
	    __FILE__, __LINE__,
	    "snapshot %lu: %s: allocs=%" PRIu64 " frees=%" PRIu64
	    " in_use=%zu fallback_allocs=%" PRIu64 " fallback_frees=%" PRIu64
	    " (workers' totals: allocs=%" PRIu64 " frees=%" PRIu64
	    " fallback_allocs=%" PRIu64 ")",
	    snapshots, what, st->allocs, st->frees, st->in_use,
	    st->fallback_allocs, st->fallback_frees, atomic_load(&did_allocs),
	    atomic_load(&did_frees), atomic_load(&did_fallback_allocs));
}

/* Checks what holds at any moment: the counters never go back. */
static pool_stats_t snapshot(void)
{
	pool_stats_t st = safety_stats(pool);
	snapshots++;
	if (st.allocs < previous.allocs || st.frees < previous.frees ||
	    st.fallback_allocs < previous.fallback_allocs ||
	    st.fallback_frees < previous.fallback_frees) {
		char what[160];
		snprintf(what, sizeof what,
		         "a counter went back from allocs=%" PRIu64
		         " frees=%" PRIu64 " fallback_allocs=%" PRIu64
		         " fallback_frees=%" PRIu64,
		         previous.allocs, previous.frees,
		         previous.fallback_allocs, previous.fallback_frees);
		show_bad(what, &st);
	}
	previous = st;
	return st;
}

/* While workers run: within what done and started threads can do. */
static void check_bounded(unsigned started)
{
	pool_stats_t st = snapshot();
	uint64_t most = (uint64_t)started * (POOL_ALLOCS + FALLBACK_ALLOCS);
	if (st.allocs + st.fallback_allocs > most ||
	    st.frees + st.fallback_frees > most)
		show_bad("more than the started threads can have done", &st);
}

/* No thread inside a pool call: the counters are the workers' totals. */
static void check_exact(void)
{
	pool_stats_t st = snapshot();
	exact_snapshots++;
	if (st.allocs != atomic_load(&did_allocs) ||
	    st.frees != atomic_load(&did_frees) ||
	    st.fallback_allocs != atomic_load(&did_fallback_allocs) ||
	    st.fallback_frees != atomic_load(&did_fallback_frees) ||
	    st.in_use != 0 || st.in_use > st.block_count)
		show_bad("not exact although no thread is in a pool call", &st);
}

/* ------------------------------------------------------------ main */

int main(void)
{
	alarm(TEST_SECONDS);
	unsetenv("SHIFTPOOL_DEBUG");
	unsetenv("SHIFTPOOL_TRACE");
	pool = pool_init(BLOCK, COUNT, POOL_PER_THREAD);
	REQUIRE(pool != NULL, "pool_init: %s", strerror(errno));

	unsigned started = 0;
	int round;
	for (round = 0; round < ROUNDS && bad == 0; round++) {
		pthread_t t[WORKERS];
		bool joined[WORKERS] = {false};
		atomic_store(&finished, 0);
		for (int i = 0; i < WORKERS; i++) {
			REQUIRE(
			    pthread_create(&t[i], NULL, worker,
			                   (void *)(uintptr_t)(round + 1)) == 0,
			    "pthread_create");
			started++;
		}
		while (atomic_load(&finished) < WORKERS) {
			check_bounded(started);
			sched_yield();
		}
		/* Every worker is past its last call: exact from here on,
		 * while they exit. */
		check_exact();
		pthread_mutex_lock(&gate_lock);
		gate_round = (unsigned)round + 1;
		pthread_cond_broadcast(&gate_cond);
		pthread_mutex_unlock(&gate_lock);
		for (unsigned left = WORKERS; left > 0;) {
			check_exact();
			for (int i = 0; i < WORKERS; i++)
				if (!joined[i] &&
				    pthread_tryjoin_np(t[i], NULL) == 0) {
					joined[i] = true;
					left--;
				}
		}
		check_exact();
	}
	if (bad > MAX_BAD)
		safety_fail(__FILE__, __LINE__, "%u wrong snapshots in all",
		            bad);
	printf("%d rounds of %d threads, %lu snapshots, %lu of them while "
	       "threads exited, %u wrong\n",
	       round, WORKERS, snapshots, exact_snapshots, bad);
	pool_destroy(pool);
	return safety_result("safety-stats-exit");
}
