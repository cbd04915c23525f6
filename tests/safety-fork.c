/*
 * fork() while other threads hammer a pool (reliability goal 6, after
 * glibc's tst-malloc-fork-deadlock): four threads allocate and free without
 * pause on a POOL_LOCKED pool, and separately on a POOL_PER_THREAD pool
 * (there with thread churn and pool_stats() calls, which take the
 * per-thread registry lock), while the main thread forks 200 times.  Every
 * child allocates and frees (pool blocks, calloc'ed blocks checked zero,
 * patterns checked, more blocks than a span, the fallback, pool_stats, a
 * trim that must not give way to the parent's waiting threads, which the
 * child does not have) and must exit 0.  A child that hangs (a lock held
 * at the fork and never released) is killed after CHILD_SECONDS by its own
 * alarm(), and the parent gives up on it after WAIT_SECONDS; either way
 * the test fails.
 * Another thread installs error handlers without pause meanwhile, and
 * every child installs one too (the handler's lock is held across the
 * fork as well).
 * The whole test is bounded by an alarm in the parent too.
 *
 * SPDX-License-Identifier: MIT
 */
#include "safety-util.h"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BLOCK         64
#define COUNT         4096
#define HAMMERS       4
#define FORKS         200
#define CHILD_SECONDS 10
#define WAIT_SECONDS  15
#define TEST_SECONDS  240
#define CHILD_BLOCKS  100 /* more than a span (at most 256 blocks, here 64) */
#define PARKED        24  /* idle threads whose caches stay registered */

static pool_t *pool;
static atomic_bool stop;
static _Atomic unsigned long hammer_ops;
static _Atomic unsigned long hammer_threads_started;

/* ------------------------------------------------------------ hammers */

static void hammer_round(unsigned *seed, int ops)
{
	void *slot[32] = {0};
	for (int op = 0; op < ops; op++) {
		*seed = *seed * 1103515245u + 12345u;
		unsigned r = *seed >> 8;
		unsigned i = r % 32;
		if (slot[i]) {
			unsigned char *p = slot[i];
			if (p[0] != (unsigned char)i ||
			    p[BLOCK - 1] != (unsigned char)i)
				safety_fail(__FILE__, __LINE__,
				            "hammer: a live block changed");
			pool_free(pool, slot[i]);
			slot[i] = NULL;
		} else {
			size_t n = (r >> 8) % 16 == 0 ? 2 * BLOCK : BLOCK;
			slot[i] = (r >> 12) % 2 ? pool_calloc(pool, 1, n)
			                        : pool_malloc(pool, n);
			if (slot[i] == NULL) {
				safety_fail(__FILE__, __LINE__,
				            "hammer: no memory");
				continue;
			}
			memset(slot[i], (int)i, BLOCK);
		}
	}
	for (int i = 0; i < 32; i++)
		pool_free(pool, slot[i]);
	atomic_fetch_add_explicit(&hammer_ops, (unsigned long)ops,
	                          memory_order_relaxed);
}

/* Short-lived thread: a new per-thread cache, then its exit. */
static void *churn_thread(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	hammer_round(&seed, 64);
	return NULL;
}

/*
 * Hammer 1 mostly reads the counters: pool_stats() holds the pool's lock
 * (POOL_LOCKED) or the per-thread registry lock (POOL_PER_THREAD), so a
 * fork often finds that lock taken.  Odd hammers churn threads: each new
 * thread registers a cache and retires it at exit, under the registry lock.
 */
static void *hammer(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	bool churn = (uintptr_t)arg % 2 == 1;
	bool stats = (uintptr_t)arg == 1;
	atomic_fetch_add(&hammer_threads_started, 1);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		hammer_round(&seed, stats ? 16 : 256);
		pool_stats_t st;
		for (int i = 0; i < (stats ? 64 : 1); i++)
			pool_stats(pool, &st);
		if (churn) {
			pthread_t t;
			if (pthread_create(&t, NULL, churn_thread,
			                   (void *)(uintptr_t)seed) == 0)
				pthread_join(t, NULL);
		}
	}
	return NULL;
}

/* Uses the pool once, then waits: its cache stays on the pool's list, so
 * every pool_stats() walks it under the registry lock. */
static pthread_mutex_t park_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t park_cond = PTHREAD_COND_INITIALIZER;
static bool parked_release;

static void *parked(void *arg)
{
	(void)arg;
	pool_free(pool, pool_malloc(pool, 8));
	pthread_mutex_lock(&park_lock);
	while (!parked_release)
		pthread_cond_wait(&park_cond, &park_lock);
	pthread_mutex_unlock(&park_lock);
	return NULL;
}

/* A handler that reports nothing. */
static void ignore_report(const pool_t *reporter, const char *function,
                          const void *ptr, enum pool_error error, void *arg)
{
	(void)reporter;
	(void)function;
	(void)ptr;
	(void)error;
	(void)arg;
}

/* Installs one handler, then another, until stopped. */
static void *switcher(void *arg)
{
	static int args[2];
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		for (int i = 0; i < 2; i++)
			pool_set_error_handler(ignore_report, &args[i]);
	pool_set_error_handler(NULL, NULL);
	return NULL;
}

/* ------------------------------------------------------------ yields */

/*
 * The library's sched_yield() calls, counted in a child: a long section
 * (pool_trim()) gives way to the threads that wait for the pool's lock,
 * and a child, which has none of the parent's other threads, must not
 * count them.  The program's definition takes the library's calls.
 */
static volatile sig_atomic_t counting_yields;
static volatile sig_atomic_t yields;

int sched_yield(void)
{
	if (counting_yields)
		yields++;
	return (int)syscall(SYS_sched_yield);
}

/* ------------------------------------------------------------ child */

/* Exits 0 if the pool works in the child; a hang is ended by alarm(). */
static void child(int mode)
{
	alarm(CHILD_SECONDS);
	/* A child forked while the switcher installs a handler can install
	 * one. */
	pool_set_error_handler(NULL, NULL);
	unsigned char *p[CHILD_BLOCKS];
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < CHILD_BLOCKS; i++) {
			p[i] = i % 2 ? pool_calloc(pool, 1, BLOCK)
			             : pool_malloc(pool, BLOCK);
			if (p[i] == NULL)
				_exit(10);
			if (i % 2)
				for (int j = 0; j < BLOCK; j++)
					if (p[i][j] != 0)
						_exit(11);
			memset(p[i], i, BLOCK);
		}
		for (int i = 0; i < CHILD_BLOCKS; i++)
			for (int j = 0; j < BLOCK; j++)
				if (p[i][j] != (unsigned char)i)
					_exit(12);
		for (int i = 0; i < CHILD_BLOCKS; i++)
			pool_free(pool, p[i]);
	}
	void *big = pool_malloc(pool, 4 * BLOCK);
	if (big == NULL || pool_owns(pool, big))
		_exit(13);
	pool_free(pool, big);
	pool_stats_t st;
	if (pool_stats(pool, &st) != 0 || st.frees < 2 * CHILD_BLOCKS)
		_exit(14);
	/* The child's only thread trims: nobody waits for the lock. */
	yields = 0;
	counting_yields = 1;
	pool_trim(pool);
	counting_yields = 0;
	if (yields != 0)
		_exit(17);
	/* A pool made in the child works too (takes the fork lock). */
	pool_t *fresh = pool_init(BLOCK, 16, mode);
	if (fresh == NULL)
		_exit(15);
	void *q = pool_malloc(fresh, 8);
	if (q == NULL || !pool_owns(fresh, q))
		_exit(16);
	pool_free(fresh, q);
	pool_destroy(fresh);
	_exit(0);
}

/* ------------------------------------------------------------ parent */

static void run(const struct safety_mode *mode)
{
	double start = safety_now();
	pool = pool_init(BLOCK, COUNT, mode->flag);
	REQUIRE(pool != NULL, "pool_init: %s", strerror(errno));
	atomic_store(&stop, false);
	atomic_store(&hammer_threads_started, 0);

	/* The main thread uses the pool too, so the children inherit its
	 * per-thread cache with a span half used. */
	void *mine[8];
	for (int i = 0; i < 8; i++)
		mine[i] = pool_malloc(pool, BLOCK);

	pthread_t park[PARKED];
	parked_release = false;
	for (int i = 0; i < PARKED; i++)
		REQUIRE(pthread_create(&park[i], NULL, parked, NULL) == 0,
		        "pthread_create");

	pthread_t t[HAMMERS];
	for (uintptr_t i = 0; i < HAMMERS; i++)
		REQUIRE(pthread_create(&t[i], NULL, hammer, (void *)(i + 1)) ==
		            0,
		        "pthread_create");
	while (atomic_load(&hammer_threads_started) < HAMMERS)
		sched_yield();
	pthread_t switching;
	REQUIRE(pthread_create(&switching, NULL, switcher, NULL) == 0,
	        "pthread_create");

	int ok = 0, failed = 0, hung = 0, forks = 0;
	unsigned long ops_before = atomic_load(&hammer_ops);
	for (int f = 0; f < FORKS; f++) {
		fflush(NULL);
		pid_t pid = fork();
		REQUIRE(pid >= 0, "fork: %s", strerror(errno));
		if (pid == 0)
			child(mode->flag);
		forks++;
		int status = 0;
		if (!safety_wait_bounded(pid, &status, WAIT_SECONDS)) {
			hung++;
			fprintf(stderr, "%s: fork %d: the child hung\n",
			        mode->name, f);
		} else if (status != 0) {
			failed++;
			if (WIFSIGNALED(status))
				fprintf(stderr,
				        "%s: fork %d: the child died of signal "
				        "%d%s\n",
				        mode->name, f, WTERMSIG(status),
				        WTERMSIG(status) == SIGALRM
				            ? " (its alarm: it hung)"
				            : "");
			else
				fprintf(stderr,
				        "%s: fork %d: the child exited with "
				        "status 0x%x\n",
				        mode->name, f, (unsigned)status);
		} else {
			ok++;
		}
		if (hung + failed >= 3)
			break; /* enough evidence, and bounded time */
	}
	unsigned long ops_during = atomic_load(&hammer_ops) - ops_before;
	atomic_store(&stop, true);
	for (int i = 0; i < HAMMERS; i++)
		pthread_join(t[i], NULL);
	pthread_join(switching, NULL);
	pthread_mutex_lock(&park_lock);
	parked_release = true;
	pthread_cond_broadcast(&park_cond);
	pthread_mutex_unlock(&park_lock);
	for (int i = 0; i < PARKED; i++)
		pthread_join(park[i], NULL);
	for (int i = 0; i < 8; i++)
		pool_free(pool, mine[i]);

	CHECK(ok == FORKS,
	      "%s: %d children failed, %d hung, %d passed (stopped after %d "
	      "of %d forks)",
	      mode->name, failed, hung, ok, forks, FORKS);
	CHECK(ops_during > 0, "%s: the hammers did nothing during the forks",
	      mode->name);
	pool_stats_t st = safety_stats(pool);
	CHECK(st.in_use == 0 && st.allocs == st.frees &&
	          st.fallback_allocs == st.fallback_frees,
	      "%s: the parent's counters do not balance: in_use %zu",
	      mode->name, st.in_use);
	pool_destroy(pool);
	printf("%-10s %d forks, %d children passed, %lu hammer ops during "
	       "them, %.2f s\n",
	       mode->name, forks, ok, ops_during, safety_now() - start);
}

int main(void)
{
	/* The parent too is bounded: SIGALRM ends it, and make sees a
	 * failure. */
	alarm(TEST_SECONDS);
	unsetenv("SHIFTPOOL_DEBUG");
	unsetenv("SHIFTPOOL_TRACE");
	for (size_t m = 0; m < SAFETY_MODE_COUNT; m++)
		if (safety_modes[m].flag != POOL_SINGLE)
			run(&safety_modes[m]);
	return safety_result("safety-fork");
}
