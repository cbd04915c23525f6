/*
 * A pointer given to the wrong pool.  A block of pool B passed to
 * pool_free(A, p) lies outside A's region; handed to free(), it would
 * make glibc abort or, worse, take B's live block into its heap and give
 * it to the next malloc().  Every combination of modes: the report is
 * POOL_ERROR_WRONG_POOL naming the pointer, nothing else happens (the
 * block stays B's, whole, and goes back to B), and the C library's heap is
 * untouched.  pool_realloc() refuses such a pointer the same way, the
 * default handler aborts (in a child), a pointer of a pool in the registry's
 * second chunk is caught too, and a genuine fallback allocation is still
 * freed while many pools are alive.
 *
 * SPDX-License-Identifier: MIT
 */
#include "safety-util.h"

#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#define BLOCK 64
#define COUNT 16

/* B's block given to A: reported, nothing done. */
static void wrong_free(const struct safety_mode *ma,
                       const struct safety_mode *mb)
{
	pool_t *a = pool_init(BLOCK, COUNT, ma->flag);
	pool_t *b = pool_init(BLOCK, COUNT, mb->flag);
	REQUIRE(a && b, "pool_init");
	unsigned char *p = pool_malloc(b, BLOCK);
	REQUIRE(p != NULL && pool_owns(b, p), "%s: no block of B", mb->name);
	memset(p, 0x5a, BLOCK);
	pool_stats_t before_a = safety_stats(a), before_b = safety_stats(b);

	safety_reports_reset();
	pool_free(a, p);
	CHECK(safety_reported(POOL_ERROR_WRONG_POOL) == 1 &&
	          safety_reported_total() == 1,
	      "%s -> %s: %u reports, %u of them WRONG_POOL", mb->name, ma->name,
	      safety_reported_total(), safety_reported(POOL_ERROR_WRONG_POOL));
	CHECK(atomic_load(&safety_seen.last_ptr) == p &&
	          atomic_load(&safety_seen.last_pool) == a,
	      "%s -> %s: the report names %p of pool %p", mb->name, ma->name,
	      atomic_load(&safety_seen.last_ptr),
	      (const void *)atomic_load(&safety_seen.last_pool));

	/* Not freed anywhere: glibc did not take it, B still has it. */
	void *probe[8];
	for (int i = 0; i < 8; i++) {
		probe[i] = malloc(BLOCK);
		CHECK(probe[i] != p, "malloc() returned pool B's live block");
	}
	for (int i = 0; i < 8; i++)
		free(probe[i]);
	for (int i = 0; i < BLOCK; i++)
		CHECK(p[i] == 0x5a, "%s -> %s: byte %d of the block changed",
		      mb->name, ma->name, i);
	pool_stats_t after_a = safety_stats(a), after_b = safety_stats(b);
	CHECK(after_a.frees == before_a.frees &&
	          after_a.fallback_frees == before_a.fallback_frees &&
	          after_b.in_use == before_b.in_use,
	      "%s -> %s: the counters moved", mb->name, ma->name);

	/* realloc: the same refusal, the pointer untouched. */
	safety_reports_reset();
	errno = 0;
	CHECK(pool_realloc(a, p, 2 * BLOCK) == NULL &&
	          safety_reported(POOL_ERROR_WRONG_POOL) == 1,
	      "%s -> %s: realloc of B's block", mb->name, ma->name);
	CHECK(pool_realloc(a, p, 0) == NULL &&
	          safety_reported(POOL_ERROR_WRONG_POOL) == 2,
	      "%s -> %s: realloc(p, 0) of B's block", mb->name, ma->name);

	safety_reports_reset();
	pool_free(b, p);
	CHECK(safety_reported_total() == 0 && safety_stats(b).in_use == 0,
	      "%s: the block does not go back to its own pool", mb->name);
	pool_destroy(a);
	pool_destroy(b);
}

/* With many pools alive (the registry's later chunks), a pointer of the
 * last is caught, and A's own fallback allocations are still freed. */
static void many_pools(void)
{
	enum { POOLS = 200 };
	pool_t *pools[POOLS];
	for (int i = 0; i < POOLS; i++) {
		pools[i] = pool_init(BLOCK, 4, safety_modes[i % 3].flag);
		REQUIRE(pools[i] != NULL, "pool_init %d", i);
	}
	/* Make a hole in the middle: a slot to reuse. */
	pool_destroy(pools[7]);
	pools[7] = pool_init(BLOCK, 4, POOL_SINGLE);
	REQUIRE(pools[7] != NULL, "pool_init again");

	void *last = pool_malloc(pools[POOLS - 1], 8);
	void *reused = pool_malloc(pools[7], 8);
	safety_reports_reset();
	pool_free(pools[0], last);
	pool_free(pools[0], reused);
	CHECK(safety_reported(POOL_ERROR_WRONG_POOL) == 2,
	      "many pools: %u wrong-pool reports, not 2",
	      safety_reported(POOL_ERROR_WRONG_POOL));

	void *big = pool_malloc(pools[0], 10 * BLOCK); /* the fallback */
	REQUIRE(big != NULL && !pool_owns(pools[0], big), "fallback");
	safety_reports_reset();
	pool_free(pools[0], big);
	CHECK(safety_reported_total() == 0 &&
	          safety_stats(pools[0]).fallback_frees == 1,
	      "many pools: a fallback allocation was not freed");

	pool_free(pools[POOLS - 1], last);
	pool_free(pools[7], reused);
	for (int i = 0; i < POOLS; i++)
		pool_destroy(pools[i]);

	/* A destroyed pool's region is no pool's any more: nothing to
	 * report about an address there (it is given to free() as any
	 * pointer from outside; here a malloc()ed one). */
	pool_t *a = pool_init(BLOCK, 4, POOL_SINGLE);
	void *m = malloc(BLOCK);
	safety_reports_reset();
	pool_free(a, m);
	CHECK(safety_reported_total() == 0, "malloc()ed pointer reported");
	pool_destroy(a);
}

/* Pools enough to share granules of the registry's table (more than its
 * counts hold), each caught at its first and last block, from a pool of
 * every mode; and once they are gone, their addresses are nobody's. */
static void crowded_granules(void)
{
	enum { POOLS = 300, TINY = 2 };
	static pool_t *pools[POOLS];
	static void *first[POOLS], *last[POOLS];
	for (int i = 0; i < POOLS; i++) {
		pools[i] = pool_init(BLOCK, TINY, safety_modes[i % 3].flag);
		REQUIRE(pools[i] != NULL, "pool_init %d", i);
		first[i] = pool_malloc(pools[i], 8);
		last[i] = pool_malloc(pools[i], 8);
		REQUIRE(first[i] && last[i] && pool_owns(pools[i], last[i]),
		        "two blocks of pool %d", i);
	}
	for (size_t m = 0; m < SAFETY_MODE_COUNT; m++) {
		pool_t *a = pool_init(BLOCK, 4, safety_modes[m].flag);
		REQUIRE(a != NULL, "pool_init");
		safety_reports_reset();
		for (int i = 0; i < POOLS; i++) {
			pool_free(a, first[i]);
			pool_free(a, last[i]);
		}
		CHECK(safety_reported(POOL_ERROR_WRONG_POOL) == 2 * POOLS,
		      "%s: %u wrong-pool reports of %d pools' blocks, not %d",
		      safety_modes[m].name,
		      safety_reported(POOL_ERROR_WRONG_POOL), POOLS, 2 * POOLS);
		pool_destroy(a);
	}
	for (int i = 0; i < POOLS; i++) {
		pool_free(pools[i], first[i]);
		pool_free(pools[i], last[i]);
		CHECK(safety_stats(pools[i]).in_use == 0,
		      "pool %d: its own blocks did not go back", i);
		pool_destroy(pools[i]);
	}
	/* A pool whose region spans whole granules, alone in them: a block
	 * in its middle is caught too. */
	enum { BIG_BLOCK = 4096, BIG_COUNT = 2048 };
	pool_t *big = pool_init(BIG_BLOCK, BIG_COUNT, POOL_SINGLE);
	REQUIRE(big != NULL, "pool_init big");
	static void *taken[BIG_COUNT];
	for (int i = 0; i < BIG_COUNT; i++)
		REQUIRE((taken[i] = pool_malloc(big, 8)) != NULL &&
		            pool_owns(big, taken[i]),
		        "block %d of the big pool", i);
	for (size_t m = 0; m < SAFETY_MODE_COUNT; m++) {
		pool_t *a = pool_init(BLOCK, 4, safety_modes[m].flag);
		REQUIRE(a != NULL, "pool_init");
		safety_reports_reset();
		for (int i = 0; i < BIG_COUNT; i += 97)
			pool_free(a, taken[i]);
		CHECK(safety_reported(POOL_ERROR_WRONG_POOL) ==
		          (BIG_COUNT + 96) / 97,
		      "%s: %u wrong-pool reports across an 8 MiB pool, not %d",
		      safety_modes[m].name,
		      safety_reported(POOL_ERROR_WRONG_POOL),
		      (BIG_COUNT + 96) / 97);
		pool_destroy(a);
	}
	for (int i = 0; i < BIG_COUNT; i++)
		pool_free(big, taken[i]);
	CHECK(safety_stats(big).in_use == 0, "the big pool's blocks");
	pool_destroy(big);

	/* Fallback allocations of a pool made after them go to free(). */
	pool_t *b = pool_init(BLOCK, 1, POOL_SINGLE);
	REQUIRE(b != NULL, "pool_init");
	safety_reports_reset();
	for (int i = 0; i < 64; i++)
		pool_free(b, pool_malloc(b, 64 * BLOCK));
	CHECK(safety_reported_total() == 0 &&
	          safety_stats(b).fallback_frees == 64,
	      "fallback allocations after the pools went were not freed");
	pool_destroy(b);
}

/* The default handler aborts, as glibc does for an invalid free. */
static void default_aborts(void)
{
	pool_t *a = pool_init(BLOCK, COUNT, POOL_SINGLE);
	pool_t *b = pool_init(BLOCK, COUNT, POOL_PER_THREAD);
	void *p = pool_malloc(b, 8);
	REQUIRE(a && b && p, "setup");
	fflush(NULL);
	pid_t child = fork();
	REQUIRE(child >= 0, "fork");
	if (child == 0) {
		pool_set_error_handler(NULL, NULL);
		int devnull = open("/dev/null", O_WRONLY);
		if (devnull >= 0)
			dup2(devnull, STDERR_FILENO);
		pool_free(a, p);
		_exit(0); /* not reached */
	}
	int status;
	REQUIRE(waitpid(child, &status, 0) == child, "waitpid");
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
	      "the default handler did not abort (status 0x%x)",
	      (unsigned)status);
	pool_free(b, p);
	pool_destroy(a);
	pool_destroy(b);
}

int main(void)
{
	safety_record_reports();
	for (size_t i = 0; i < SAFETY_MODE_COUNT; i++)
		for (size_t j = 0; j < SAFETY_MODE_COUNT; j++)
			wrong_free(&safety_modes[i], &safety_modes[j]);
	many_pools();
	crowded_granules();
	default_aborts();
	pool_set_error_handler(NULL, NULL);
	return safety_result("safety-wrong-pool");
}
